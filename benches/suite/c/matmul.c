/* matrix multiply C = A * B, n x n row major: rows in parallel, i-k-j order so the inner loop is
 * a contiguous vector loop over a row of B and C, blocked over k to keep B's rows in cache */
#include "bench.h"
#define KB 256

static void matmul(const float *restrict A, const float *restrict B, float *restrict C, long n) {
#pragma omp parallel for schedule(dynamic, 8)
    for (long i = 0; i < n; i++) {
        float *restrict c = C + i * n;
        for (long j = 0; j < n; j++) c[j] = 0.0f;
        for (long k0 = 0; k0 < n; k0 += KB)
            for (long k = k0; k < k0 + KB && k < n; k++) {
                float a = A[i * n + k];
                const float *restrict b = B + k * n;
#pragma omp simd
                for (long j = 0; j < n; j++) c[j] += a * b[j];
            }
    }
}

int main(int argc, char **argv) {
    ARGC_CHECK(6, "REPS N A B OUT");
    int reps = atoi(argv[1]);
    long n = atol(argv[2]);
    float *a = bench_read(argv[3], n * n * 4), *b = bench_read(argv[4], n * n * 4);
    float *c = bench_alloc(n * n * 4);
    BENCH(reps, matmul(a, b, c, n));
    bench_write(argv[5], c, n * n * 4);
    return 0;
}
