// SAXPY, out of place so that repeated launches give the same result: out[i] = a * x[i] + y[i].
extern "C" __global__ void saxpy(float a, const float *__restrict__ x, const float *__restrict__ y,
                                 float *__restrict__ out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = a * x[i] + y[i];
}
