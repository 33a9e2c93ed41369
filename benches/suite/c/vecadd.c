/* vector add: c = a + b.
 * Technique: one `omp parallel for simd` loop in large chunks: memory-bound, it runs at the
 * machine's streaming bandwidth. */
#include "bench.h"

static void vecadd(const float *restrict a, const float *restrict b, float *restrict c, long n) {
#pragma omp parallel for simd schedule(dynamic, 1 << 16)
    for (long i = 0; i < n; i++) c[i] = a[i] + b[i];
}

int main(int argc, char **argv) {
    ARGC_CHECK(6, "REPS N A B OUT");
    int reps = atoi(argv[1]);
    long n = atol(argv[2]);
    float *a = bench_read(argv[3], n * 4), *b = bench_read(argv[4], n * 4), *c = bench_alloc(n * 4);
    BENCH(reps, vecadd(a, b, c, n));
    bench_write(argv[5], c, n * 4);
    return 0;
}
