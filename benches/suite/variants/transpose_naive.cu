// Held-out variant of transpose (same input, C baseline c_transpose and check): the plain
// transpose, no shared tile. Block (32,8), one element per thread: the reads of a warp are one
// row segment, its writes a column (32 elements a row of the output apart).
extern "C" __global__ void transpose_naive(const float *in, float *out, int rows, int cols) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < cols && y < rows) out[(size_t)x * rows + y] = in[(size_t)y * cols + x];
}
