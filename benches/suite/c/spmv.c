/* y = A x with A in CSR (row_ptr, col, val): the reference of both SpMV kernels.
 * Technique: rows spread over threads in chunks (dynamic: row lengths differ); each row is an
 * `omp simd reduction(+)` loop, the x[col] loads AVX-512 gathers. */
#include "bench.h"

static void spmv(const int *restrict rp, const int *restrict col, const float *restrict val,
                 const float *restrict x, float *restrict y, long rows) {
#pragma omp parallel for schedule(dynamic, 512)
    for (long r = 0; r < rows; r++) {
        float s = 0.0f;
#pragma omp simd reduction(+ : s)
        for (int k = rp[r]; k < rp[r + 1]; k++) s += val[k] * x[col[k]];
        y[r] = s;
    }
}

int main(int argc, char **argv) {
    ARGC_CHECK(9, "REPS ROWS COLS ROW_PTR COL VAL X OUT");
    int reps = atoi(argv[1]);
    long rows = atol(argv[2]), cols = atol(argv[3]);
    int *rp = bench_read(argv[4], (rows + 1) * 4);
    long nnz = rp[rows];
    int *col = bench_read(argv[5], nnz * 4);
    float *val = bench_read(argv[6], nnz * 4), *x = bench_read(argv[7], cols * 4);
    float *y = bench_alloc(rows * 4);
    BENCH(reps, spmv(rp, col, val, x, y, rows));
    bench_write(argv[8], y, rows * 4);
    return 0;
}
