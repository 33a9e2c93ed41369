/* inclusive prefix sum of every segment of SEG consecutive floats, and each segment's total
 * (what the block scan kernel computes, one segment per CUDA block).
 * Technique: segments spread over threads; within a segment OpenMP 5's vector scan
 * (`omp simd reduction(inscan, +)` with `omp scan`): a running sum the compiler computes with
 * in-register prefix steps, so the loop runs at memory speed, not at one add latency per value. */
#include "bench.h"

static void scan(const float *restrict in, float *restrict out, float *restrict totals, long n,
                 long seg) {
    long segs = (n + seg - 1) / seg;
#pragma omp parallel for schedule(dynamic, 256)
    for (long b = 0; b < segs; b++) {
        long lo = b * seg, hi = lo + seg < n ? lo + seg : n;
        float s = 0.0f;
#pragma omp simd reduction(inscan, + : s)
        for (long i = lo; i < hi; i++) {
            s += in[i];
#pragma omp scan inclusive(s)
            out[i] = s;
        }
        totals[b] = s;
    }
}

int main(int argc, char **argv) {
    ARGC_CHECK(7, "REPS N SEG IN OUT TOTALS");
    int reps = atoi(argv[1]);
    long n = atol(argv[2]), seg = atol(argv[3]), segs = (n + seg - 1) / seg;
    float *in = bench_read(argv[4], n * 4), *out = bench_alloc(n * 4), *t = bench_alloc(segs * 4);
    BENCH(reps, scan(in, out, t, n, seg));
    bench_write(argv[5], out, n * 4);
    bench_write(argv[6], t, segs * 4);
    return 0;
}
