// Block-wide inclusive scan of each block's blockDim.x consecutive floats: a Kogge-Stone scan
// inside every warp with __shfl_up_sync, the warp totals scanned by the first warp through
// shared memory, then added back. Also writes each block's total (the input of a second level).
__device__ __forceinline__ float warp_scan(float v, int lane) {
    for (int d = 1; d < 32; d *= 2) {
        float u = __shfl_up_sync(0xffffffffu, v, d);
        if (lane >= d) v += u;
    }
    return v;
}
extern "C" __global__ void scan(const float *__restrict__ in, float *__restrict__ out,
                                float *__restrict__ totals, int n) {
    __shared__ float warp_sum[32];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
    float v = warp_scan(i < n ? in[i] : 0.0f, lane);
    if (lane == 31) warp_sum[warp] = v;
    __syncthreads();
    if (warp == 0) {
        float w = lane < warps ? warp_sum[lane] : 0.0f;
        w = warp_scan(w, lane);
        if (lane < warps) warp_sum[lane] = w;
    }
    __syncthreads();
    if (warp > 0) v += warp_sum[warp - 1];
    if (i < n) out[i] = v;
    if (threadIdx.x == blockDim.x - 1) totals[blockIdx.x] = v;
}
