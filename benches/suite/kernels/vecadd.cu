// Vector add: c[i] = a[i] + b[i]. Memory bound: 3 streams of n floats.
extern "C" __global__ void vecadd(const float *__restrict__ a, const float *__restrict__ b,
                                  float *__restrict__ c, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) c[i] = a[i] + b[i];
}
