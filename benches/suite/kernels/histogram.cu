// 256-bin histogram of bytes: each block counts its grid-stride share into a shared-memory
// histogram with shared atomics, then adds it to the global one with global atomics.
// Launches accumulate: the caller zeroes `hist` (n launches leave n times the histogram).
#define BINS 256
extern "C" __global__ void histogram(const unsigned char *__restrict__ data, unsigned *hist,
                                     int n) {
    __shared__ unsigned local[BINS];
    for (int b = threadIdx.x; b < BINS; b += blockDim.x) local[b] = 0;
    __syncthreads();
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        atomicAdd(&local[data[i]], 1u);
    __syncthreads();
    for (int b = threadIdx.x; b < BINS; b += blockDim.x)
        if (local[b]) atomicAdd(&hist[b], local[b]);
}
