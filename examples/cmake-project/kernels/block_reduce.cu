// Block reductions in shared memory with barriers (examples/cmake-project).
//
// block_sum: every block of 256 threads sums 256 consecutive floats with a tree in static shared
// memory (__syncthreads between the levels) and writes one partial sum per block.
// block_max_dyn: the same shape with an `extern __shared__` buffer sized at launch (dynamic
// shared memory, blockDim.x ints) computing the maximum of ints.
#define BLOCK 256

extern "C" __global__ void block_sum(const float *__restrict__ in, float *__restrict__ partial,
                                     unsigned n) {
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

extern "C" __global__ void block_max_dyn(const int *__restrict__ in, int *__restrict__ partial,
                                         unsigned n) {
    extern __shared__ int buf[];
    unsigned t = threadIdx.x;
    unsigned i = blockIdx.x * blockDim.x + t;
    buf[t] = i < n ? in[i] : (-0x7fffffff - 1);
    __syncthreads();
    for (unsigned stride = blockDim.x / 2; stride > 0; stride >>= 1) {
        if (t < stride) buf[t] = max(buf[t], buf[t + stride]);
        __syncthreads();
    }
    if (t == 0) partial[blockIdx.x] = buf[0];
}
