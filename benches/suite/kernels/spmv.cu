// Sparse matrix-vector product y = A x, A in CSR (row_ptr, col, val). Two mappings:
// spmv_thread gives each thread one row; spmv_warp gives each warp one row (lanes stride over
// the row's nonzeros, then a __shfl_down_sync fold), which keeps long rows' loads coalesced.
extern "C" __global__ void spmv_thread(const int *__restrict__ row_ptr, const int *__restrict__ col,
                                       const float *__restrict__ val, const float *__restrict__ x,
                                       float *__restrict__ y, int rows) {
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= rows) return;
    float s = 0.0f;
    for (int k = row_ptr[r]; k < row_ptr[r + 1]; k++) s += val[k] * x[col[k]];
    y[r] = s;
}
extern "C" __global__ void spmv_warp(const int *__restrict__ row_ptr, const int *__restrict__ col,
                                     const float *__restrict__ val, const float *__restrict__ x,
                                     float *__restrict__ y, int rows) {
    int r = blockIdx.x * (blockDim.x >> 5) + (threadIdx.x >> 5);
    int lane = threadIdx.x & 31;
    if (r >= rows) return;
    float s = 0.0f;
    for (int k = row_ptr[r] + lane; k < row_ptr[r + 1]; k += 32) s += val[k] * x[col[k]];
    for (int d = 16; d > 0; d >>= 1) s += __shfl_down_sync(0xffffffffu, s, d);
    if (lane == 0) y[r] = s;
}
