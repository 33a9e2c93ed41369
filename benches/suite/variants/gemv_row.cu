// Held-out idiom with its own C baseline (c/gemv.c): y = A x with one thread per row, the form
// most people write first. Each thread walks its own row of A, so the 32 lanes of a warp read
// 32 addresses a whole row apart in every iteration (a GPU serves them from 32 cache lines too,
// and is slow at it; the CPU's vector loop walks one row at a time).
extern "C" __global__ void gemv_row(const float *A, const float *x, float *y, int rows, int cols) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < rows) {
        float s = 0.0f;
        for (int j = 0; j < cols; j++) s += A[(size_t)i * cols + j] * x[j];
        y[i] = s;
    }
}
