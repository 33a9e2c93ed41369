/* the reference of Triton's fp16 matmul: C = A * B for n x n half-precision A and B, computed
 * as a float32 matmul (what numpy does for float32 arrays of the same shape). The conversion of
 * the inputs to float32 happens once, before the timing; the output stays float32 (the check
 * compares the kernel's fp16 output with it within fp16 rounding).
 * Technique: the register-tiled, packed, cache-blocked SGEMM of sgemm.h. */
#include "sgemm.h"

int main(int argc, char **argv) {
    ARGC_CHECK(6, "REPS N A16 B16 OUT");
    int reps = atoi(argv[1]);
    long n = atol(argv[2]);
    if (n % 32) {
        fprintf(stderr, "n must be a multiple of 32\n");
        return 2;
    }
    _Float16 *a16 = bench_read(argv[3], n * n * 2), *b16 = bench_read(argv[4], n * n * 2);
    float *a = bench_alloc(n * n * 4), *b = bench_alloc(n * n * 4);
    for (long i = 0; i < n * n; i++) {
        a[i] = (float)a16[i];
        b[i] = (float)b16[i];
    }
    float *c = bench_alloc(n * n * 4), *bpack = bench_alloc(KC * NC * 4);
    float *apack = bench_alloc((long)omp_get_max_threads() * MC * KC * 4);
    BENCH(reps, matmul(a, b, c, n, bpack, apack));
    bench_write(argv[5], c, n * n * 4);
    return 0;
}
