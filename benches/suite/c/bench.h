/* bench.h: what the OpenMP baselines share: reading inputs, writing the output, timing.
 * Every baseline is `PROG REPS SIZES... INPUTS... OUT`; it runs the computation once to warm up
 * (page faults, thread pool), then REPS timed times, writes OUT from the last run and prints
 *   time: median X ms (min Y, max Z) over REPS runs
 *   cpu: median X ms (min Y, max Z) per run
 * the second line the process's CPU time (all threads, user + system) per run: on a busy
 * machine the wall time counts waits for other processes, the CPU time does not (ptx2llvm
 * `run --repeat` prints its own as `kernel CPU time`; bench.sh puts the two side by side).
 * Parallel loops use schedule(dynamic, CHUNK) with chunks of many iterations: as fast as static
 * scheduling on an idle machine, and a thread that loses its core to another process (the
 * benchmark machine is shared) does not hold the others at the barrier. ptx2llvm's runtime and
 * PoCL hand out CTAs / work-groups the same way. */
#ifndef BENCH_H
#define BENCH_H
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

static inline void *bench_read(const char *path, size_t bytes) {
    void *p = aligned_alloc(64, (bytes + 63) / 64 * 64);
    FILE *f = fopen(path, "rb");
    if (!p || !f || fread(p, 1, bytes, f) != bytes) {
        fprintf(stderr, "cannot read %zu bytes from %s\n", bytes, path);
        exit(1);
    }
    fclose(f);
    return p;
}

static inline void *bench_alloc(size_t bytes) {
    void *p = aligned_alloc(64, (bytes + 63) / 64 * 64);
    if (!p) {
        fprintf(stderr, "out of memory\n");
        exit(1);
    }
    memset(p, 0, bytes); /* touch the pages before timing */
    return p;
}

static inline void bench_write(const char *path, const void *p, size_t bytes) {
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(p, 1, bytes, f) != bytes || fclose(f)) {
        fprintf(stderr, "cannot write %s\n", path);
        exit(1);
    }
}

static inline double bench_cpu_ms(void) {
    struct rusage u;
    getrusage(RUSAGE_SELF, &u);
    return (u.ru_utime.tv_sec + u.ru_stime.tv_sec) * 1e3 +
           (u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e3;
}

static inline int bench_cmp(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Runs BODY once untimed, then REPS times timed, and prints the median. */
#define BENCH(REPS, BODY)                                                                     \
    do {                                                                                      \
        int reps_ = (REPS) < 1 ? 1 : (REPS);                                                  \
        double *t_ = malloc(sizeof(double) * reps_);                                          \
        double *c_ = malloc(sizeof(double) * reps_);                                          \
        { BODY; }                                                                             \
        for (int r_ = 0; r_ < reps_; r_++) {                                                  \
            double c0_ = bench_cpu_ms();                                                      \
            double t0_ = omp_get_wtime();                                                     \
            { BODY; }                                                                         \
            t_[r_] = (omp_get_wtime() - t0_) * 1e3;                                           \
            c_[r_] = bench_cpu_ms() - c0_;                                                    \
        }                                                                                     \
        qsort(t_, reps_, sizeof(double), bench_cmp);                                          \
        qsort(c_, reps_, sizeof(double), bench_cmp);                                          \
        double med_ = reps_ % 2 ? t_[reps_ / 2] : (t_[reps_ / 2 - 1] + t_[reps_ / 2]) / 2;    \
        double cmed_ = reps_ % 2 ? c_[reps_ / 2] : (c_[reps_ / 2 - 1] + c_[reps_ / 2]) / 2;   \
        printf("time: median %.3f ms (min %.3f, max %.3f) over %d runs\n", med_, t_[0],        \
               t_[reps_ - 1], reps_);                                                         \
        printf("cpu: median %.3f ms (min %.3f, max %.3f) per run\n", cmed_, c_[0],             \
               c_[reps_ - 1]);                                                                \
        free(t_);                                                                             \
        free(c_);                                                                             \
    } while (0)

#define ARGC_CHECK(N, USAGE)                                                                  \
    if (argc != (N)) {                                                                        \
        fprintf(stderr, "usage: %s %s\n", argv[0], USAGE);                                    \
        return 2;                                                                             \
    }
#endif
