/* Black-Scholes European call and put prices of n options (spot S, strike K, years T; rate r
 * and volatility v shared), with the Abramowitz-Stegun polynomial for the normal CDF.
 * Technique: one `omp parallel for simd` loop: the whole formula vectorizes, with vmath.h's
 * vector expf/logf (glibc's would keep the loop scalar without -ffast-math). */
#include <math.h>
#include "bench.h"
#include "vmath.h"


static inline float cnd(float d) {
    const float a1 = 0.31938153f, a2 = -0.356563782f, a3 = 1.781477937f, a4 = -1.821255978f,
                a5 = 1.330274429f, rsqrt2pi = 0.39894228040143267794f;
    float k = 1.0f / (1.0f + 0.2316419f * fabsf(d));
    float c = rsqrt2pi * vexpf(-0.5f * d * d) * (k * (a1 + k * (a2 + k * (a3 + k * (a4 + k * a5)))));
    return d > 0.0f ? 1.0f - c : c;
}

static void blackscholes(const float *restrict S, const float *restrict K, const float *restrict T,
                         float *restrict call, float *restrict put, float r, float v, long n) {
#pragma omp parallel for simd schedule(dynamic, 1 << 14)
    for (long i = 0; i < n; i++) {
        float s = S[i], k = K[i], t = T[i];
        float sq = sqrtf(t);
        float d1 = (vlogf(s / k) + (r + 0.5f * v * v) * t) / (v * sq);
        float d2 = d1 - v * sq;
        float disc = k * vexpf(-r * t);
        float c1 = cnd(d1), c2 = cnd(d2);
        call[i] = s * c1 - disc * c2;
        put[i] = disc * (1.0f - c2) - s * (1.0f - c1);
    }
}

int main(int argc, char **argv) {
    ARGC_CHECK(10, "REPS N R V S K T CALL PUT");
    int reps = atoi(argv[1]);
    long n = atol(argv[2]);
    float r = strtof(argv[3], NULL), v = strtof(argv[4], NULL);
    float *S = bench_read(argv[5], n * 4), *K = bench_read(argv[6], n * 4),
          *T = bench_read(argv[7], n * 4), *call = bench_alloc(n * 4), *put = bench_alloc(n * 4);
    BENCH(reps, blackscholes(S, K, T, call, put, r, v, n));
    bench_write(argv[8], call, n * 4);
    bench_write(argv[9], put, n * 4);
    return 0;
}
