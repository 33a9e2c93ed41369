/* block reduction: partial[b] = sum of in[256 b .. 256 b + 255] (the block tree reduction and the
 * warp-shuffle reduction compute the same thing).
 * Technique: chunks spread over threads, each chunk one `omp simd reduction(+)` vector loop;
 * memory-bound. */
#include "bench.h"
#define BLOCK 256

static void reduce(const float *restrict in, float *restrict partial, long n) {
    long blocks = (n + BLOCK - 1) / BLOCK;
#pragma omp parallel for schedule(dynamic, 256)
    for (long b = 0; b < blocks; b++) {
        long lo = b * BLOCK, hi = lo + BLOCK < n ? lo + BLOCK : n;
        float s = 0.0f;
#pragma omp simd reduction(+ : s)
        for (long i = lo; i < hi; i++) s += in[i];
        partial[b] = s;
    }
}

int main(int argc, char **argv) {
    ARGC_CHECK(5, "REPS N IN OUT");
    int reps = atoi(argv[1]);
    long n = atol(argv[2]), blocks = (n + BLOCK - 1) / BLOCK;
    float *in = bench_read(argv[3], n * 4), *p = bench_alloc(blocks * 4);
    BENCH(reps, reduce(in, p, n));
    bench_write(argv[4], p, blocks * 4);
    return 0;
}
