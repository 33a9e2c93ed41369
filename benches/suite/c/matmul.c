/* matrix multiply C = A * B, n x n floats, row major (n a multiple of 32).
 * Technique: the register-tiled, packed, cache-blocked SGEMM of sgemm.h. */
#include "sgemm.h"

int main(int argc, char **argv) {
    ARGC_CHECK(6, "REPS N A B OUT");
    int reps = atoi(argv[1]);
    long n = atol(argv[2]);
    if (n % 32) {
        fprintf(stderr, "n must be a multiple of 32\n");
        return 2;
    }
    float *a = bench_read(argv[3], n * n * 4), *b = bench_read(argv[4], n * n * 4);
    float *c = bench_alloc(n * n * 4), *bpack = bench_alloc(KC * NC * 4);
    float *apack = bench_alloc((long)omp_get_max_threads() * MC * KC * 4);
    BENCH(reps, matmul(a, b, c, n, bpack, apack));
    bench_write(argv[5], c, n * n * 4);
    return 0;
}
