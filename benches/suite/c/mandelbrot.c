/* Mandelbrot escape counts on a w x h grid over [x0, x0 + w dx) x [y0, y0 + h dx), at most
 * max_iter iterations of z = z^2 + c while |z|^2 <= 4 (the kernel's loop, operation for
 * operation).
 * Technique: rows spread over threads (dynamic: the cost per row varies); VL pixels at a time
 * iterate in lockstep as one vector (a lane that escaped stops counting under a mask), and the
 * group stops as soon as every lane has escaped, checked every 8 iterations. */
#include "bench.h"
#define VL 16

static void mandelbrot(unsigned *restrict out, long w, long h, float x0, float y0, float dx,
                       int max_iter) {
#pragma omp parallel for schedule(dynamic, 4)
    for (long py = 0; py < h; py++) {
        float cy = y0 + py * dx;
        for (long px0 = 0; px0 < w; px0 += VL) {
            float cx[VL], x[VL], y[VL], x2[VL], y2[VL];
            int it[VL];
            for (int l = 0; l < VL; l++) {
                cx[l] = x0 + (px0 + l) * dx;
                x[l] = y[l] = x2[l] = y2[l] = 0.0f;
                it[l] = 0;
            }
            for (int k = 0; k < max_iter; k += 8) {
                int live = 0;
                for (int s = 0; s < 8 && k + s < max_iter; s++) {
#pragma omp simd reduction(| : live)
                    for (int l = 0; l < VL; l++) {
                        int on = x2[l] + y2[l] <= 4.0f;
                        float ny = 2.0f * x[l] * y[l] + cy, nx = x2[l] - y2[l] + cx[l];
                        y[l] = on ? ny : y[l];
                        x[l] = on ? nx : x[l];
                        x2[l] = x[l] * x[l];
                        y2[l] = y[l] * y[l];
                        it[l] += on;
                        live |= on;
                    }
                }
                if (!live) break;
            }
            long m = w - px0 < VL ? w - px0 : VL;
            for (int l = 0; l < m; l++) out[py * w + px0 + l] = (unsigned)it[l];
        }
    }
}

int main(int argc, char **argv) {
    ARGC_CHECK(9, "REPS W H X0 Y0 DX MAX_ITER OUT");
    int reps = atoi(argv[1]);
    long w = atol(argv[2]), h = atol(argv[3]);
    float x0 = strtof(argv[4], NULL), y0 = strtof(argv[5], NULL), dx = strtof(argv[6], NULL);
    int max_iter = atoi(argv[7]);
    unsigned *out = bench_alloc(w * h * 4);
    BENCH(reps, mandelbrot(out, w, h, x0, y0, dx, max_iter));
    bench_write(argv[8], out, w * h * 4);
    return 0;
}
