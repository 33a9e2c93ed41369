/* row softmax of a rows x cols matrix (cols <= BLOCK_SIZE of the Triton kernel): per row, the
 * max, then exp(x - max) and its sum, then the division; rows in parallel, vector loops.
 * glibc's expf only vectorizes under -ffast-math, so exp is written out (Cephes' expf: range
 * reduction by ln 2 and a degree-6 polynomial, about 1 ulp), as Triton (ex2.approx) and PoCL
 * (SLEEF) also use a vector exp. */
#include <math.h>
#include "bench.h"

static inline float vexpf(float x) {
    x = x < -87.0f ? -87.0f : x > 88.0f ? 88.0f : x;
    float n = floorf(x * 1.44269504088896341f + 0.5f);
    float r = x - n * 0.693359375f + n * 2.12194440e-4f;
    float p = 1.9875691500e-4f;
    p = p * r + 1.3981999507e-3f;
    p = p * r + 8.3334519073e-3f;
    p = p * r + 4.1665795894e-2f;
    p = p * r + 1.6666665459e-1f;
    p = p * r + 5.0000001201e-1f;
    p = p * r * r + r + 1.0f;
    union { float f; int i; } s = {.i = ((int)n + 127) << 23};
    return p * s.f;
}

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
