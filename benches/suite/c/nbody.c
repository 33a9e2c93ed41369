/* all-pairs gravitational acceleration: acc_i = sum over j of m_j r_ij / (|r_ij|^2 + eps2)^1.5
 * for n bodies given as (x, y, z, mass), output (ax, ay, az, 0).
 * Technique: the positions are copied to separate x/y/z/m arrays, then blocks of IB bodies i
 * (spread over threads) run against every body j: the IB accumulators stay in vector
 * registers, body j is a broadcast, and the inner loop over i is one vector loop (sqrt and
 * divide in vector form). Each i sums its j in order 0..n-1, as a CUDA thread does. */
#include <math.h>
#include "bench.h"
#define IB 64

static void nbody(const float *restrict pos, float *restrict acc, long n, float eps2,
                  float *restrict px, float *restrict py, float *restrict pz, float *restrict pm) {
#pragma omp parallel for schedule(static)
    for (long i = 0; i < n; i++) {
        px[i] = pos[4 * i];
        py[i] = pos[4 * i + 1];
        pz[i] = pos[4 * i + 2];
        pm[i] = pos[4 * i + 3];
    }
#pragma omp parallel for schedule(dynamic, 1)
    for (long i0 = 0; i0 < n; i0 += IB) {
        float ax[IB] = {0}, ay[IB] = {0}, az[IB] = {0}, xi[IB], yi[IB], zi[IB];
        for (int k = 0; k < IB; k++) {
            xi[k] = px[i0 + k];
            yi[k] = py[i0 + k];
            zi[k] = pz[i0 + k];
        }
        for (long j = 0; j < n; j++) {
            float qx = px[j], qy = py[j], qz = pz[j], qm = pm[j];
#pragma omp simd
            for (int k = 0; k < IB; k++) {
                float dx = qx - xi[k], dy = qy - yi[k], dz = qz - zi[k];
                float r2 = dx * dx + dy * dy + dz * dz + eps2;
                float inv = 1.0f / sqrtf(r2);
                float s = qm * inv * inv * inv;
                ax[k] += dx * s;
                ay[k] += dy * s;
                az[k] += dz * s;
            }
        }
        for (int k = 0; k < IB; k++) {
            acc[4 * (i0 + k)] = ax[k];
            acc[4 * (i0 + k) + 1] = ay[k];
            acc[4 * (i0 + k) + 2] = az[k];
            acc[4 * (i0 + k) + 3] = 0.0f;
        }
    }
}

int main(int argc, char **argv) {
    ARGC_CHECK(6, "REPS N EPS2 POS OUT");
    int reps = atoi(argv[1]);
    long n = atol(argv[2]);
    if (n % IB) {
        fprintf(stderr, "n must be a multiple of %d\n", IB);
        return 2;
    }
    float eps2 = strtof(argv[3], NULL);
    float *pos = bench_read(argv[4], n * 16), *acc = bench_alloc(n * 16);
    float *px = bench_alloc(n * 4), *py = bench_alloc(n * 4), *pz = bench_alloc(n * 4),
          *pm = bench_alloc(n * 4);
    BENCH(reps, nbody(pos, acc, n, eps2, px, py, pz, pm));
    bench_write(argv[5], acc, n * 16);
    return 0;
}
