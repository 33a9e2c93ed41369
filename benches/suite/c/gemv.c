/* y = A x for a rows x cols matrix A (row-major).
 * Technique: rows spread over threads in equal static chunks; each row is one `omp simd
 * reduction(+)` dot product with x (unit-stride vector loads of the row, x reused from L1/L2):
 * memory-bound on A. */
#include "bench.h"

static void gemv(const float *restrict a, const float *restrict x, float *restrict y, long rows,
                 long cols) {
#pragma omp parallel for schedule(static)
    for (long i = 0; i < rows; i++) {
        const float *r = a + i * cols;
        float s = 0.0f;
#pragma omp simd reduction(+ : s)
        for (long j = 0; j < cols; j++) s += r[j] * x[j];
        y[i] = s;
    }
}

int main(int argc, char **argv) {
    ARGC_CHECK(7, "REPS ROWS COLS A X OUT");
    int reps = atoi(argv[1]);
    long rows = atol(argv[2]), cols = atol(argv[3]);
    float *a = bench_read(argv[4], rows * cols * 4), *x = bench_read(argv[5], cols * 4);
    float *y = bench_alloc(rows * 4);
    BENCH(reps, gemv(a, x, y, rows, cols));
    bench_write(argv[6], y, rows * 4);
    return 0;
}
