/* 3x3 convolution of a w x h image with zero padding: out(x, y) = sum of wt[dy][dx] *
 * in(x + dx - 1, y + dy - 1).
 * Technique: rows spread over threads; an output row is one vector loop over x reading three
 * input rows (a missing row above or below is a shared row of zeros, so the loop has no
 * branch), the 9 weights in registers, the two edge pixels computed apart. */
#include "bench.h"

static void conv3x3(const float *restrict in, const float *restrict wt, float *restrict out,
                    long w, long h, const float *restrict zero) {
    float k0 = wt[0], k1 = wt[1], k2 = wt[2], k3 = wt[3], k4 = wt[4], k5 = wt[5], k6 = wt[6],
          k7 = wt[7], k8 = wt[8];
#pragma omp parallel for schedule(dynamic, 16)
    for (long y = 0; y < h; y++) {
        const float *a = y > 0 ? in + (y - 1) * w : zero, *b = in + y * w,
                    *c = y + 1 < h ? in + (y + 1) * w : zero;
        float *o = out + y * w;
#pragma omp simd
        for (long x = 1; x < w - 1; x++)
            o[x] = k0 * a[x - 1] + k1 * a[x] + k2 * a[x + 1] + k3 * b[x - 1] + k4 * b[x] +
                   k5 * b[x + 1] + k6 * c[x - 1] + k7 * c[x] + k8 * c[x + 1];
        o[0] = k1 * a[0] + k2 * a[1] + k4 * b[0] + k5 * b[1] + k7 * c[0] + k8 * c[1];
        o[w - 1] = k0 * a[w - 2] + k1 * a[w - 1] + k3 * b[w - 2] + k4 * b[w - 1] +
                   k6 * c[w - 2] + k7 * c[w - 1];
    }
}

int main(int argc, char **argv) {
    ARGC_CHECK(7, "REPS W H IN WEIGHTS OUT");
    int reps = atoi(argv[1]);
    long w = atol(argv[2]), h = atol(argv[3]);
    float *in = bench_read(argv[4], w * h * 4), *wt = bench_read(argv[5], 9 * 4),
          *out = bench_alloc(w * h * 4), *zero = bench_alloc(w * 4);
    BENCH(reps, conv3x3(in, wt, out, w, h, zero));
    bench_write(argv[6], out, w * h * 4);
    return 0;
}
