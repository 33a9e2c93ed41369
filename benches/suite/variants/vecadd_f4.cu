// Held-out variant of vecadd (same C baseline and check): float4 loads and stores and a
// grid-stride loop, the style of vectorized CUDA code; a scalar tail for n % 4.
extern "C" __global__ void vecadd_f4(const float *__restrict__ a, const float *__restrict__ b,
                                     float *__restrict__ c, int n) {
    int stride = gridDim.x * blockDim.x;
    int n4 = n / 4;
    const float4 *a4 = reinterpret_cast<const float4 *>(a);
    const float4 *b4 = reinterpret_cast<const float4 *>(b);
    float4 *c4 = reinterpret_cast<float4 *>(c);
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n4; i += stride) {
        float4 x = a4[i], y = b4[i];
        c4[i] = make_float4(x.x + y.x, x.y + y.y, x.z + y.z, x.w + y.w);
    }
    for (int i = n4 * 4 + blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) c[i] = a[i] + b[i];
}
