/* layer normalization of each row of a rows x cols matrix: (x - mean) / sqrt(var + eps) *
 * gamma + beta, the variance from a second pass (as the kernel computes it).
 * Technique: rows spread over threads; per row three vectorized passes over data that stays
 * in L1 (`omp simd reduction(+)` for the sum and the sum of squares, then the scaling). */
#include <math.h>
#include "bench.h"

static void layernorm(const float *restrict in, const float *restrict gamma,
                      const float *restrict beta, float *restrict out, long rows, long cols,
                      float eps) {
#pragma omp parallel for schedule(dynamic, 64)
    for (long r = 0; r < rows; r++) {
        const float *x = in + r * cols;
        float *y = out + r * cols;
        float s = 0.0f, q = 0.0f;
#pragma omp simd reduction(+ : s)
        for (long c = 0; c < cols; c++) s += x[c];
        float mean = s / cols;
#pragma omp simd reduction(+ : q)
        for (long c = 0; c < cols; c++) q += (x[c] - mean) * (x[c] - mean);
        float rstd = 1.0f / sqrtf(q / cols + eps);
#pragma omp simd
        for (long c = 0; c < cols; c++) y[c] = (x[c] - mean) * rstd * gamma[c] + beta[c];
    }
}

int main(int argc, char **argv) {
    ARGC_CHECK(9, "REPS ROWS COLS EPS IN GAMMA BETA OUT");
    int reps = atoi(argv[1]);
    long rows = atol(argv[2]), cols = atol(argv[3]);
    float eps = strtof(argv[4], NULL);
    float *in = bench_read(argv[5], rows * cols * 4), *g = bench_read(argv[6], cols * 4),
          *b = bench_read(argv[7], cols * 4), *out = bench_alloc(rows * cols * 4);
    BENCH(reps, layernorm(in, g, b, out, rows, cols, eps));
    bench_write(argv[8], out, rows * cols * 4);
    return 0;
}
