/* vmath.h: expf and logf the compiler can vectorize. glibc's expf/logf only vectorize under
 * -ffast-math (libmvec), so an OpenMP simd loop calling them stays scalar; an expert inlines a
 * polynomial instead, as Triton (ex2.approx), the CUDA libdevice and PoCL (SLEEF) do. Both are
 * the Cephes single-precision algorithms (range reduction by ln 2, then a polynomial), about
 * 1 ulp for the arguments the benchmarks pass (finite, and for logf positive normal). */
#ifndef VMATH_H
#define VMATH_H
#include <stdint.h>

/* union punning (defined in GNU C) vectorizes; a memcpy through memory does not */
static inline float bits_to_float(int32_t i) {
    union { int32_t i; float f; } u = {.i = i};
    return u.f;
}
static inline int32_t float_to_bits(float f) {
    union { float f; int32_t i; } u = {.f = f};
    return u.i;
}


static inline float vexpf(float x) {
    x = x < -87.0f ? -87.0f : x > 88.0f ? 88.0f : x;
    float n = __builtin_rintf(x * 1.44269504088896341f); /* floorf(.. + 0.5) does not vectorize */
    float r = x - n * 0.693359375f + n * 2.12194440e-4f;
    float p = 1.9875691500e-4f;
    p = p * r + 1.3981999507e-3f;
    p = p * r + 8.3334519073e-3f;
    p = p * r + 4.1665795894e-2f;
    p = p * r + 1.6666665459e-1f;
    p = p * r + 5.0000001201e-1f;
    p = p * r * r + r + 1.0f;
    return p * bits_to_float(((int32_t)n + 127) << 23);
}


static inline float vlogf(float x) {
    int32_t i = float_to_bits(x);
    float e = (float)(((i >> 23) & 0xff) - 126);
    float m = bits_to_float((i & 0x007fffff) | 0x3f000000); /* x = m 2^e, m in [0.5, 1) */
    int small = m < 0.70710678118654752f;
    e = small ? e - 1.0f : e;
    m = (small ? m + m : m) - 1.0f;
    float z = m * m;
    float p = 7.0376836292e-2f;
    p = p * m - 1.1514610310e-1f;
    p = p * m + 1.1676998740e-1f;
    p = p * m - 1.2420140846e-1f;
    p = p * m + 1.4249322787e-1f;
    p = p * m - 1.6668057665e-1f;
    p = p * m + 2.0000714765e-1f;
    p = p * m - 2.4999993993e-1f;
    p = p * m + 3.3333331174e-1f;
    float y = m * z * p - 2.12194440e-4f * e - 0.5f * z;
    return m + y + 0.693359375f * e;
}
#endif
