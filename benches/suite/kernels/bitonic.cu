// Bitonic sort of each block's 2*blockDim.x floats in shared memory (ascending): every stage
// (k = 2, 4, ..., 2*blockDim.x; j = k/2, ..., 1) has each thread compare-exchange one pair,
// with a barrier between stages. The block's segment is written back sorted.
extern "C" __global__ void bitonic(const float *__restrict__ in, float *__restrict__ out) {
    extern __shared__ float a[];
    unsigned t = threadIdx.x, n = 2 * blockDim.x;
    const float *src = in + (size_t)blockIdx.x * n;
    a[t] = src[t];
    a[t + blockDim.x] = src[t + blockDim.x];
    __syncthreads();
    for (unsigned k = 2; k <= n; k <<= 1) {
        for (unsigned j = k >> 1; j > 0; j >>= 1) {
            unsigned lo = 2 * t - (t & (j - 1)), hi = lo + j;  // the pair (lo, lo + j)
            bool up = (lo & k) == 0;
            float p = a[lo], q = a[hi];
            if ((p > q) == up) {
                a[lo] = q;
                a[hi] = p;
            }
            __syncthreads();
        }
    }
    float *dst = out + (size_t)blockIdx.x * n;
    dst[t] = a[t];
    dst[t + blockDim.x] = a[t + blockDim.x];
}
