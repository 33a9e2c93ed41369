/* 2-D 5-point stencil on h x w: interior 0.5 c + 0.125 (n + s + e + w), border copied.
 * Technique: rows spread over threads, each interior row one branch-free vector loop reading
 * three input rows (the borders handled outside it); memory-bound. */
#include "bench.h"

static void stencil(const float *restrict in, float *restrict out, long w, long h) {
#pragma omp parallel for schedule(dynamic, 16)
    for (long y = 0; y < h; y++) {
        const float *r = in + y * w;
        float *o = out + y * w;
        if (y == 0 || y == h - 1) {
            memcpy(o, r, w * sizeof *o);
            continue;
        }
        o[0] = r[0];
#pragma omp simd
        for (long x = 1; x < w - 1; x++)
            o[x] = 0.5f * r[x] + 0.125f * (r[x - w] + r[x + w] + r[x - 1] + r[x + 1]);
        o[w - 1] = r[w - 1];
    }
}

int main(int argc, char **argv) {
    ARGC_CHECK(6, "REPS W H IN OUT");
    int reps = atoi(argv[1]);
    long w = atol(argv[2]), h = atol(argv[3]);
    float *in = bench_read(argv[4], w * h * 4), *out = bench_alloc(w * h * 4);
    BENCH(reps, stencil(in, out, w, h));
    bench_write(argv[5], out, w * h * 4);
    return 0;
}
