/* gen: writes the benchmark inputs, deterministic (splitmix64 from a seed).
 *   gen f32 N SEED OUT    N floats, uniform in [-1, 1)
 *   gen f32 N SEED OUT [LO HI]   N floats, uniform in [-1, 1) or in [LO, HI)
 *   gen f16 N SEED OUT    N half-precision floats, uniform in [-1, 1) (rounded to nearest)
 *   gen u8  N SEED OUT    N bytes, skewed (sum of two uniform bytes / 2) so bins differ
 *   gen csr ROWS SEED PREFIX   a ROWS x ROWS sparse matrix in CSR: PREFIX.rowptr (ROWS + 1
 *                         int32), PREFIX.col (int32), PREFIX.val (f32 in
 *                         [-1, 1)); row lengths uniform in [4, 60] (32 on average) */
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

static FILE *open_out(const char *prefix, const char *ext) {
    char path[4096];
    snprintf(path, sizeof path, "%s.%s", prefix, ext);
    FILE *f = fopen(path, "wb");
    if (!f) {
        perror(path);
        exit(1);
    }
    return f;
}

static int csr(size_t rows, const char *prefix) {
    FILE *fr = open_out(prefix, "rowptr"), *fc = open_out(prefix, "col"),
         *fv = open_out(prefix, "val");
    int32_t nnz = 0;
    fwrite(&nnz, 4, 1, fr);
    for (size_t r = 0; r < rows; r++) {
        int len = 4 + (int)(next() % 57);
        /* columns spread over the whole row (random strides averaging rows / 2len) */
        size_t c = next() % (rows / 64 + 1), step = rows / (size_t)len;
        for (int k = 0; k < len; k++) {
            int32_t col = (int32_t)(c % rows);
            float v = (float)((next() >> 40) * 0x1p-23 - 1.0);
            fwrite(&col, 4, 1, fc);
            fwrite(&v, 4, 1, fv);
            c += 1 + next() % (step ? step : 1);
        }
        nnz += len;
        fwrite(&nnz, 4, 1, fr);
    }
    return fclose(fr) | fclose(fc) | fclose(fv) ? 1 : 0;
}

int main(int argc, char **argv) {
    if (argc != 5 && !(argc == 7 && !strcmp(argv[1], "f32"))) {
        fprintf(stderr, "usage: gen {f32|f16|u8|csr} N SEED OUT [LO HI]\n");
        return 2;
    }
    size_t n = strtoull(argv[2], 0, 0);
    state = strtoull(argv[3], 0, 0);
    if (!strcmp(argv[1], "csr")) return csr(n, argv[4]);
    FILE *f = fopen(argv[4], "wb");
    if (!f) {
        perror(argv[4]);
        return 1;
    }
    if (!strcmp(argv[1], "f32")) {
        float *v = malloc(n * sizeof *v);
        double lo = argc == 7 ? atof(argv[5]) : -1.0, hi = argc == 7 ? atof(argv[6]) : 1.0;
        for (size_t i = 0; i < n; i++) v[i] = (float)(lo + (next() >> 40) * 0x1p-24 * (hi - lo));
        fwrite(v, sizeof *v, n, f);
        free(v);
    } else if (!strcmp(argv[1], "f16")) {
        _Float16 *v = malloc(n * sizeof *v);
        for (size_t i = 0; i < n; i++) v[i] = (_Float16)((next() >> 40) * 0x1p-23 - 1.0);
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
