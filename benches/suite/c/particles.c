/* particles: out[i] = p[i] + v[i] * dt on arrays of float3 structs (AoS).
 * Technique: the arrays seen as flat floats, one `omp parallel for simd` loop over all 3n
 * elements (the same FMA for every field, so the struct layout needs no shuffles: unit-stride
 * vector loads and stores), in large chunks: memory-bound. */
#include "bench.h"

static void particles(const float *restrict p, const float *restrict v, float *restrict out,
                      long n, float dt) {
#pragma omp parallel for simd schedule(dynamic, 1 << 16)
    for (long k = 0; k < 3 * n; k++) out[k] = p[k] + v[k] * dt;
}

int main(int argc, char **argv) {
    ARGC_CHECK(7, "REPS N DT P V OUT");
    int reps = atoi(argv[1]);
    long n = atol(argv[2]);
    float dt = (float)atof(argv[3]);
    float *p = bench_read(argv[4], n * 12), *v = bench_read(argv[5], n * 12);
    float *o = bench_alloc(n * 12);
    BENCH(reps, particles(p, v, o, n, dt));
    bench_write(argv[6], o, n * 12);
    return 0;
}
