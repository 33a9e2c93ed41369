// Held-out variant of histogram: no shared memory at all, every byte is one global atomicAdd
// (the naive style many first CUDA histograms use). Same bins, same accumulate-per-launch contract.
#define BINS 256
extern "C" __global__ void histogram_global(const unsigned char *__restrict__ data,
                                            unsigned *hist, int n) {
    int stride = gridDim.x * blockDim.x;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
        atomicAdd(&hist[data[i]], 1u);
}
