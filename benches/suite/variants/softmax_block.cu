// Row softmax, one block of 256 threads per row of n floats (the textbook CUDA form): each
// thread strides the row by the literal 256 (so NVRTC unrolls the loops four times after a
// remainder loop), the row's maximum and then its sum of exponentials are shared-memory tree
// reductions with a barrier per step, and every element is written as exp(x - max) / sum.
// Same result as the Triton softmax of the suite (its sibling, whose C baseline it shares).
extern "C" __global__ void softmax_block(const float *in, float *out, int n) {
    __shared__ float red[256];
    const float *x = in + (size_t)blockIdx.x * n;
    float *y = out + (size_t)blockIdx.x * n;
    int t = threadIdx.x;
    float m = -__int_as_float(0x7f800000);
    for (int i = t; i < n; i += 256) m = fmaxf(m, x[i]);
    red[t] = m;
    __syncthreads();
    for (int s = 128; s > 0; s >>= 1) {
        if (t < s) red[t] = fmaxf(red[t], red[t + s]);
        __syncthreads();
    }
    m = red[0];
    __syncthreads();
    float sum = 0.f;
    for (int i = t; i < n; i += 256) sum += __expf(x[i] - m);
    red[t] = sum;
    __syncthreads();
    for (int s = 128; s > 0; s >>= 1) {
        if (t < s) red[t] += red[t + s];
        __syncthreads();
    }
    float inv = 1.f / red[0];
    for (int i = t; i < n; i += 256) y[i] = __expf(x[i] - m) * inv;
}
