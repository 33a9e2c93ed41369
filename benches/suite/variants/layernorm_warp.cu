// Layer normalization, one warp per row (8 rows per 256-thread block): each lane strides the row,
// the mean and variance are butterfly shuffle sums so every lane holds the totals; no shared memory.
// Same result as the suite's layernorm (one block per row); the grid is rows / 8.
__device__ float warp_sum(float v) {
    for (int d = 16; d > 0; d >>= 1) v += __shfl_xor_sync(0xffffffffu, v, d);
    return v;
}
extern "C" __global__ void layernorm_warp(const float *__restrict__ in,
                                          const float *__restrict__ gamma,
                                          const float *__restrict__ beta, float *__restrict__ out,
                                          int cols, float eps) {
    int row = blockIdx.x * (blockDim.x >> 5) + (threadIdx.x >> 5), lane = threadIdx.x & 31;
    const float *x = in + (size_t)row * cols;
    float *y = out + (size_t)row * cols;
    float s = 0.0f;
    for (int c = lane; c < cols; c += 32) s += x[c];
    float mean = warp_sum(s) / cols;
    float q = 0.0f;
    for (int c = lane; c < cols; c += 32) {
        float d = x[c] - mean;
        q += d * d;
    }
    float rstd = rsqrtf(warp_sum(q) / cols + eps);
    for (int c = lane; c < cols; c += 32) y[c] = (x[c] - mean) * rstd * gamma[c] + beta[c];
}
