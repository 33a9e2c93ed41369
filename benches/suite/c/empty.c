/* launch overhead of the OpenMP baseline: an empty parallel region (fork + join of the team).
 * Technique: none needed; OMP_WAIT_POLICY=passive as for every baseline. */
#include "bench.h"

static void empty(void) {
    volatile int sink = 0;
#pragma omp parallel
    { (void)sink; }
}

int main(int argc, char **argv) {
    ARGC_CHECK(2, "REPS");
    BENCH(atoi(argv[1]), empty());
    return 0;
}
