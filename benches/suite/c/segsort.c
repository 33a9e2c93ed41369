/* sorts every segment of SEG consecutive floats ascending (the reference of the block bitonic
 * sort, one segment per CUDA block).
 * Technique: segments spread over threads; each segment is LSD radix-sorted on its 32-bit
 * keys (the float bits flipped so that unsigned order is float order): the four 8-bit digit
 * histograms in one pass, then four counting-sort scatter passes between two L1-resident
 * buffers. O(n) per segment, against O(n log^2 n) compare-exchanges for a bitonic network. */
#include <stdint.h>
#include "bench.h"

static inline uint32_t key_of(uint32_t b) { return b ^ (b >> 31 ? 0xffffffffu : 0x80000000u); }
static inline uint32_t bits_of(uint32_t k) { return k ^ (k >> 31 ? 0x80000000u : 0xffffffffu); }

static void segsort(const float *restrict in, float *restrict out, long n, long seg) {
    long segs = n / seg;
#pragma omp parallel
    {
        uint32_t *a = malloc(seg * 4), *b = malloc(seg * 4);
#pragma omp for schedule(dynamic, 64)
        for (long s = 0; s < segs; s++) {
            uint32_t cnt[4][256] = {{0}};
            const uint32_t *src = (const uint32_t *)(in + s * seg);
            for (long i = 0; i < seg; i++) {
                uint32_t k = key_of(src[i]);
                a[i] = k;
                cnt[0][k & 255]++;
                cnt[1][(k >> 8) & 255]++;
                cnt[2][(k >> 16) & 255]++;
                cnt[3][k >> 24]++;
            }
            uint32_t *from = a, *to = b;
            for (int d = 0; d < 4; d++) {
                uint32_t off[256], sum = 0;
                for (int v = 0; v < 256; v++) {
                    off[v] = sum;
                    sum += cnt[d][v];
                }
                for (long i = 0; i < seg; i++) to[off[(from[i] >> (8 * d)) & 255]++] = from[i];
                uint32_t *t = from;
                from = to;
                to = t;
            }
            uint32_t *dst = (uint32_t *)(out + s * seg);
            for (long i = 0; i < seg; i++) dst[i] = bits_of(from[i]);
        }
        free(a);
        free(b);
    }
}

int main(int argc, char **argv) {
    ARGC_CHECK(6, "REPS N SEG IN OUT");
    int reps = atoi(argv[1]);
    long n = atol(argv[2]), seg = atol(argv[3]);
    if (n % seg) {
        fprintf(stderr, "n must be a multiple of SEG\n");
        return 2;
    }
    float *in = bench_read(argv[4], n * 4), *out = bench_alloc(n * 4);
    BENCH(reps, segsort(in, out, n, seg));
    bench_write(argv[5], out, n * 4);
    return 0;
}
