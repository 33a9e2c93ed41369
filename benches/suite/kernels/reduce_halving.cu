// Block tree reduction in its textbook form: the halving loop's trip count comes from
// blockDim.x (not a constant), a barrier after every step, and one atomicAdd per block into a
// single global sum. Launches accumulate: the caller zeroes `sum`.
extern "C" __global__ void reduce_halving(const float *__restrict__ in, float *sum, int n) {
    extern __shared__ float s[];
    unsigned t = threadIdx.x;
    unsigned i = blockIdx.x * blockDim.x + t;
    s[t] = i < n ? in[i] : 0.0f;
    __syncthreads();
    for (unsigned k = blockDim.x / 2; k > 0; k >>= 1) {
        if (t < k) s[t] += s[t + k];
        __syncthreads();
    }
    if (t == 0) atomicAdd(sum, s[0]);
}
