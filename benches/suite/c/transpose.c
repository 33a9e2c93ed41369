/* out = transpose(in), in rows x cols row major.
 * Technique: cache blocking: 64x64 tiles (16 KiB in, 16 KiB out: both stay in L1 while a tile
 * is moved, so every cache line is read and written whole), the tiles spread over threads;
 * inside a tile the loop runs along out's rows so the stores are contiguous vectors. */
#include "bench.h"
#define TB 64

static void transpose(const float *restrict in, float *restrict out, long rows, long cols) {
#pragma omp parallel for collapse(2) schedule(dynamic, 4)
    for (long i0 = 0; i0 < rows; i0 += TB)
        for (long j0 = 0; j0 < cols; j0 += TB) {
            long i1 = i0 + TB < rows ? i0 + TB : rows, j1 = j0 + TB < cols ? j0 + TB : cols;
            for (long j = j0; j < j1; j++)
#pragma omp simd
                for (long i = i0; i < i1; i++) out[j * rows + i] = in[i * cols + j];
        }
}

int main(int argc, char **argv) {
    ARGC_CHECK(6, "REPS ROWS COLS IN OUT");
    int reps = atoi(argv[1]);
    long rows = atol(argv[2]), cols = atol(argv[3]);
    float *in = bench_read(argv[4], rows * cols * 4), *out = bench_alloc(rows * cols * 4);
    BENCH(reps, transpose(in, out, rows, cols));
    bench_write(argv[5], out, rows * cols * 4);
    return 0;
}
