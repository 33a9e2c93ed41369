// Black-Scholes European call and put prices, one option per thread (grid-stride), with the
// cumulative normal distribution from the Abramowitz-Stegun polynomial (26.2.17).
__device__ __forceinline__ float cnd(float d) {
    const float a1 = 0.31938153f, a2 = -0.356563782f, a3 = 1.781477937f, a4 = -1.821255978f,
                a5 = 1.330274429f, rsqrt2pi = 0.39894228040143267794f;
    float k = 1.0f / (1.0f + 0.2316419f * fabsf(d));
    float c = rsqrt2pi * expf(-0.5f * d * d) * (k * (a1 + k * (a2 + k * (a3 + k * (a4 + k * a5)))));
    return d > 0.0f ? 1.0f - c : c;
}
extern "C" __global__ void blackscholes(const float *__restrict__ S, const float *__restrict__ K,
                                        const float *__restrict__ T, float *__restrict__ call,
                                        float *__restrict__ put, float r, float v, int n) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        float s = S[i], k = K[i], t = T[i];
        float sq = sqrtf(t);
        float d1 = (logf(s / k) + (r + 0.5f * v * v) * t) / (v * sq);
        float d2 = d1 - v * sq;
        float disc = k * expf(-r * t);
        float c1 = cnd(d1), c2 = cnd(d2);
        call[i] = s * c1 - disc * c2;
        put[i] = disc * (1.0f - c2) - s * (1.0f - c1);
    }
}
