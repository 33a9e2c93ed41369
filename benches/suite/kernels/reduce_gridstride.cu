// Grid-stride reduction: a fixed grid of blocks walks the whole array (each thread accumulates
// a private sum), each warp folds its lanes with __shfl_down_sync, the block's warp sums meet
// in shared memory, and one atomicAdd per block adds the block's sum to the global one.
// Launches accumulate: the caller zeroes `sum`.
__device__ __forceinline__ float fold_warp(float v) {
    for (int d = 16; d > 0; d /= 2) v += __shfl_down_sync(0xffffffffu, v, d);
    return v;
}
extern "C" __global__ void reduce_gridstride(const float *__restrict__ in, float *sum, int n) {
    __shared__ float per_warp[32];
    float acc = 0.0f;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        acc += in[i];
    acc = fold_warp(acc);
    int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    if (lane == 0) per_warp[warp] = acc;
    __syncthreads();
    if (warp == 0) {
        acc = lane < (blockDim.x + 31) / 32 ? per_warp[lane] : 0.0f;
        acc = fold_warp(acc);
        if (lane == 0) atomicAdd(sum, acc);
    }
}
