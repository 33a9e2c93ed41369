/* 256-bin histogram of bytes: each thread counts its share into a private histogram (4 of
 * them, interleaved, to break the store-to-load dependency on repeated bytes), then the private
 * histograms are added together.
 * Technique: per-thread private histograms merged at the end (no atomics in the hot loop). */
#include "bench.h"
#define BINS 256

static void histogram(const unsigned char *restrict data, unsigned *restrict hist, long n) {
    memset(hist, 0, BINS * sizeof *hist);
#pragma omp parallel
    {
        unsigned h[4][BINS] = {{0}};
        long i;
#pragma omp for schedule(dynamic, 1 << 14) nowait
        for (i = 0; i < n / 4; i++) {
            h[0][data[4 * i]]++;
            h[1][data[4 * i + 1]]++;
            h[2][data[4 * i + 2]]++;
            h[3][data[4 * i + 3]]++;
        }
#pragma omp single nowait
        for (i = n / 4 * 4; i < n; i++) h[0][data[i]]++;
#pragma omp critical
        for (int b = 0; b < BINS; b++) hist[b] += h[0][b] + h[1][b] + h[2][b] + h[3][b];
    }
}

int main(int argc, char **argv) {
    ARGC_CHECK(5, "REPS N IN OUT");
    int reps = atoi(argv[1]);
    long n = atol(argv[2]);
    unsigned char *in = bench_read(argv[3], n);
    unsigned *hist = bench_alloc(BINS * 4);
    BENCH(reps, histogram(in, hist, n));
    bench_write(argv[4], hist, BINS * 4);
    return 0;
}
