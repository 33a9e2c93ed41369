// Warp-shuffle reduction: each warp sums its 32 values with __shfl_down_sync, lane 0 of every
// warp puts the warp's sum in shared memory, then the first warp sums those the same way.
// One partial sum per block of 256 threads (256 consecutive floats).
#define BLOCK 256
__device__ __forceinline__ float warp_sum(float v) {
    for (int off = 16; off > 0; off >>= 1) v += __shfl_down_sync(0xffffffffu, v, off);
    return v;
}
extern "C" __global__ void reduce_warp(const float *__restrict__ in, float *__restrict__ partial,
                                       int n) {
    __shared__ float warps[BLOCK / 32];
    unsigned t = threadIdx.x, lane = t % 32, w = t / 32;
    unsigned i = blockIdx.x * BLOCK + t;
    float v = warp_sum(i < n ? in[i] : 0.0f);
    if (lane == 0) warps[w] = v;
    __syncthreads();
    if (w == 0) {
        v = warp_sum(lane < BLOCK / 32 ? warps[lane] : 0.0f);
        if (lane == 0) partial[blockIdx.x] = v;
    }
}
