// Layer normalization, one block per row: y = (x - mean) / sqrt(var + eps) * gamma + beta.
// The mean and then the variance are block reductions (a shuffle fold inside each warp, the
// warp results through shared memory, the block total broadcast through shared memory).
__device__ float block_sum(float v, float *scratch) {
    int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = (blockDim.x + 31) >> 5;
    for (int d = 16; d > 0; d >>= 1) v += __shfl_down_sync(0xffffffffu, v, d);
    __syncthreads();  // the scratch of a previous call has been read
    if (lane == 0) scratch[warp] = v;
    __syncthreads();
    if (warp == 0) {
        v = lane < warps ? scratch[lane] : 0.0f;
        for (int d = 16; d > 0; d >>= 1) v += __shfl_down_sync(0xffffffffu, v, d);
        if (lane == 0) scratch[32] = v;
    }
    __syncthreads();
    return scratch[32];
}
extern "C" __global__ void layernorm(const float *__restrict__ in, const float *__restrict__ gamma,
                                     const float *__restrict__ beta, float *__restrict__ out,
                                     int cols, float eps) {
    __shared__ float scratch[33];
    const float *x = in + (size_t)blockIdx.x * cols;
    float *y = out + (size_t)blockIdx.x * cols;
    float s = 0.0f;
    for (int c = threadIdx.x; c < cols; c += blockDim.x) s += x[c];
    float mean = block_sum(s, scratch) / cols;
    float q = 0.0f;
    for (int c = threadIdx.x; c < cols; c += blockDim.x) {
        float d = x[c] - mean;
        q += d * d;
    }
    float rstd = rsqrtf(block_sum(q, scratch) / cols + eps);
    for (int c = threadIdx.x; c < cols; c += blockDim.x)
        y[c] = (x[c] - mean) * rstd * gamma[c] + beta[c];
}
