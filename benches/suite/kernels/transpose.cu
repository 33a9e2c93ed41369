// Transpose of a rows x cols row-major matrix through a 32x33 shared tile (the extra column
// keeps a column of the tile in distinct banks): block (32,8), each thread moves 4 elements in
// and 4 out; grid (cols/32, rows/32). out is cols x rows.
#define TD 32
#define TR 8
extern "C" __global__ void transpose(const float *__restrict__ in, float *__restrict__ out,
                                     int rows, int cols) {
    __shared__ float tile[TD][TD + 1];
    int x = blockIdx.x * TD + threadIdx.x;
    int y0 = blockIdx.y * TD + threadIdx.y;
    for (int r = 0; r < TD; r += TR)
        if (x < cols && y0 + r < rows) tile[threadIdx.y + r][threadIdx.x] = in[(size_t)(y0 + r) * cols + x];
    __syncthreads();
    int ox = blockIdx.y * TD + threadIdx.x;  // a column of `in` = a row of `out`
    int oy0 = blockIdx.x * TD + threadIdx.y;
    for (int r = 0; r < TD; r += TR)
        if (ox < rows && oy0 + r < cols) out[(size_t)(oy0 + r) * rows + ox] = tile[threadIdx.x][threadIdx.y + r];
}
