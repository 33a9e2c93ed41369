/* saxpy, out of place: out = a * x + y.
 * Technique: one `omp parallel for simd` loop (vector FMAs) in large chunks: memory-bound. */
#include "bench.h"

static void saxpy(float a, const float *restrict x, const float *restrict y, float *restrict out,
                  long n) {
#pragma omp parallel for simd schedule(dynamic, 1 << 16)
    for (long i = 0; i < n; i++) out[i] = a * x[i] + y[i];
}

int main(int argc, char **argv) {
    ARGC_CHECK(7, "REPS N A X Y OUT");
    int reps = atoi(argv[1]);
    long n = atol(argv[2]);
    float a = (float)atof(argv[3]);
    float *x = bench_read(argv[4], n * 4), *y = bench_read(argv[5], n * 4), *o = bench_alloc(n * 4);
    BENCH(reps, saxpy(a, x, y, o, n));
    bench_write(argv[6], o, n * 4);
    return 0;
}
