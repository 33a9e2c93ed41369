/* gen: writes the benchmark inputs, deterministic (splitmix64 from a seed).
 *   gen f32 N SEED OUT    N floats, uniform in [-1, 1)
 *   gen u8  N SEED OUT    N bytes, skewed (sum of two uniform bytes / 2) so bins differ */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t state;
static uint64_t next(void) {
    uint64_t z = (state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

int main(int argc, char **argv) {
    if (argc != 5) {
        fprintf(stderr, "usage: gen {f32|u8} N SEED OUT\n");
        return 2;
    }
    size_t n = strtoull(argv[2], 0, 0);
    state = strtoull(argv[3], 0, 0);
    FILE *f = fopen(argv[4], "wb");
    if (!f) {
        perror(argv[4]);
        return 1;
    }
    if (!strcmp(argv[1], "f32")) {
        float *v = malloc(n * sizeof *v);
        for (size_t i = 0; i < n; i++) v[i] = (float)((next() >> 40) * 0x1p-23 - 1.0);
        fwrite(v, sizeof *v, n, f);
        free(v);
    } else if (!strcmp(argv[1], "u8")) {
        unsigned char *v = malloc(n);
        for (size_t i = 0; i < n; i++) {
            uint64_t r = next();
            v[i] = (unsigned char)(((r & 255) + ((r >> 8) & 255)) / 2);
        }
        fwrite(v, 1, n, f);
        free(v);
    } else {
        fprintf(stderr, "gen: unknown type %s\n", argv[1]);
        return 2;
    }
    return fclose(f) ? 1 : 0;
}
