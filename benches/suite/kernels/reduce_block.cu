// Block tree reduction: each block of 256 threads sums 256 consecutive floats in shared memory
// (one barrier after the load, then one per halving step: 9 barriers) and writes one partial sum.
#define BLOCK 256
extern "C" __global__ void reduce_block(const float *__restrict__ in, float *__restrict__ partial,
                                        int n) {
    __shared__ float s[BLOCK];
    unsigned t = threadIdx.x;
    unsigned i = blockIdx.x * BLOCK + t;
    s[t] = i < n ? in[i] : 0.0f;
    __syncthreads();
    for (unsigned stride = BLOCK / 2; stride > 0; stride >>= 1) {
        if (t < stride) s[t] += s[t + stride];
        __syncthreads();
    }
    if (t == 0) partial[blockIdx.x] = s[0];
}
