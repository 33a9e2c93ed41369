/* sum of n floats into one value (the reference of the halving-loop and grid-stride
 * reductions, which atomicAdd block sums into one float).
 * Technique: `omp parallel for simd reduction(+)`: each thread sums its share in vector
 * registers (several accumulators, memory-bound), the threads' sums are combined once. */
#include "bench.h"

static float sum(const float *restrict in, long n) {
    float s = 0.0f;
#pragma omp parallel for simd reduction(+ : s) schedule(static)
    for (long i = 0; i < n; i++) s += in[i];
    return s;
}

int main(int argc, char **argv) {
    ARGC_CHECK(5, "REPS N IN OUT");
    int reps = atoi(argv[1]);
    long n = atol(argv[2]);
    float *in = bench_read(argv[3], n * 4), s = 0.0f;
    BENCH(reps, s = sum(in, n));
    bench_write(argv[4], &s, 4);
    return 0;
}
