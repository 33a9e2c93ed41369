// Held-out variant of reduce_halving (same C baseline c_reduce_sum and check): a CUB-style block
// reduction, 1024 threads, grid-stride accumulation, __shfl_down_sync within each warp, the 32
// warp sums through shared memory, the first warp reduces them, one atomicAdd per block.
extern "C" __global__ void reduce_cub(const float *__restrict__ in, float *__restrict__ out, int n) {
    __shared__ float warp_sums[32];
    float v = 0.0f;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) v += in[i];
    for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);
    int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    if (lane == 0) warp_sums[warp] = v;
    __syncthreads();
    if (warp == 0) {
        v = lane < (blockDim.x >> 5) ? warp_sums[lane] : 0.0f;
        for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);
        if (lane == 0) atomicAdd(out, v);
    }
}
