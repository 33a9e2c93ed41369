/* row softmax of a rows x cols matrix (cols <= BLOCK_SIZE of the Triton kernel): per row, the
 * max, then exp(x - max) and its sum, then the division; rows in parallel, vector loops.
 * Technique: three vectorized passes over a row held in L1 (max reduction, exp and sum with
 * `omp simd reduction`, scaling), rows spread over threads; exp is vmath.h's vector expf. */
#include <math.h>
#include "bench.h"
#include "vmath.h"

static void softmax(const float *restrict in, float *restrict out, long rows, long cols) {
#pragma omp parallel for schedule(dynamic, 64)
    for (long r = 0; r < rows; r++) {
        const float *x = in + r * cols;
        float *y = out + r * cols;
        float m = -INFINITY, s = 0.0f;
#pragma omp simd reduction(max : m)
        for (long c = 0; c < cols; c++) m = x[c] > m ? x[c] : m;
#pragma omp simd reduction(+ : s)
        for (long c = 0; c < cols; c++) {
            y[c] = vexpf(x[c] - m);
            s += y[c];
        }
        float inv = 1.0f / s;
#pragma omp simd
        for (long c = 0; c < cols; c++) y[c] *= inv;
    }
}

int main(int argc, char **argv) {
    ARGC_CHECK(6, "REPS ROWS COLS IN OUT");
    int reps = atoi(argv[1]);
    long rows = atol(argv[2]), cols = atol(argv[3]);
    float *in = bench_read(argv[4], rows * cols * 4), *out = bench_alloc(rows * cols * 4);
    BENCH(reps, softmax(in, out, rows, cols));
    bench_write(argv[5], out, rows * cols * 4);
    return 0;
}
