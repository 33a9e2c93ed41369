// Warp-level reductions with shuffles (examples/cmake-project).
//
// warp_sum: each warp of 32 threads sums its 32 floats with __shfl_down_sync; lane 0 writes the
// warp's sum (one output per warp).
// warp_allmax: every lane gets the maximum of its warp's values through a butterfly
// (__shfl_xor_sync), then writes it back: out[i] = max over i's warp.
__device__ __forceinline__ float warp_reduce_sum(float v) {
    for (int off = 16; off > 0; off >>= 1) v += __shfl_down_sync(0xffffffffu, v, off);
    return v;
}

extern "C" __global__ void warp_sum(const float *__restrict__ in, float *__restrict__ out,
                                    unsigned n) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    float v = warp_reduce_sum(i < n ? in[i] : 0.0f);
    if ((threadIdx.x & 31) == 0 && i < n) out[i / 32] = v;
}

extern "C" __global__ void warp_allmax(const unsigned *__restrict__ in, unsigned *__restrict__ out,
                                       unsigned n) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned v = i < n ? in[i] : 0u;
    for (int mask = 16; mask > 0; mask >>= 1) v = max(v, __shfl_xor_sync(0xffffffffu, v, mask));
    if (i < n) out[i] = v;
}
