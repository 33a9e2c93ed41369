/* block tree reduction fissioned by hand: the CUDA kernel's algorithm (256 values of a block in
 * "shared memory", halving strides with a barrier after each) with every barrier region turned
 * into a loop over the block's threads, as a C programmer would port it. Issue #6 measures the
 * compiled block reduction against this (the plain vector-loop sum is c/reduce.c). */
#include "bench.h"
#define BLOCK 256

static void reduce_tree(const float *restrict in, float *restrict partial, long n) {
    long blocks = (n + BLOCK - 1) / BLOCK;
#pragma omp parallel for schedule(dynamic, 256)
    for (long b = 0; b < blocks; b++) {
        float sm[BLOCK];
        long base = b * BLOCK;
#pragma omp simd
        for (int t = 0; t < BLOCK; t++) sm[t] = base + t < n ? in[base + t] : 0.0f;
        for (int s = BLOCK / 2; s > 0; s >>= 1) {
#pragma omp simd
            for (int t = 0; t < s; t++) sm[t] += sm[t + s];
        }
        partial[b] = sm[0];
    }
}

int main(int argc, char **argv) {
    ARGC_CHECK(5, "REPS N IN OUT");
    int reps = atoi(argv[1]);
    long n = atol(argv[2]), blocks = (n + BLOCK - 1) / BLOCK;
    float *in = bench_read(argv[3], n * 4), *p = bench_alloc(blocks * 4);
    BENCH(reps, reduce_tree(in, p, n));
    bench_write(argv[4], p, blocks * 4);
    return 0;
}
