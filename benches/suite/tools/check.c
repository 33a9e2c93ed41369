/* check: compares an output buffer with the reference (the C baseline's output).
 *   check f32 GOT REF RTOL ATOL [DIV]   |got/DIV - ref| <= ATOL + RTOL * |ref| for every
 *                                  element (DIV: launches that accumulated into GOT, default 1)
 *   check f16 GOT REF RTOL ATOL    as f32, GOT in half precision, REF in single precision
 *   check u32 GOT REF [DIV [FRAC]] exact, after dividing GOT by DIV (a histogram that DIV
 *                                  launches accumulated); DIV defaults to 1; with FRAC, up to
 *                                  that fraction of the elements may differ (escape counts of
 *                                  points on a fractal's boundary, where one rounding decides)
 * Prints "ok" or "MISMATCH ..." (first bad index, count, worst error) and exits 0 / 1. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void *slurp(const char *p, size_t *n) {
    FILE *f = fopen(p, "rb");
    if (!f) {
        printf("MISMATCH cannot read %s\n", p);
        exit(1);
    }
    fseek(f, 0, SEEK_END);
    *n = (size_t)ftell(f);
    fseek(f, 0, SEEK_SET);
    void *b = malloc(*n ? *n : 1);
    if (fread(b, 1, *n, f) != *n) {
        printf("MISMATCH short read %s\n", p);
        exit(1);
    }
    fclose(f);
    return b;
}

int main(int argc, char **argv) {
    if (argc < 4) {
        fprintf(stderr, "usage: check {f32 GOT REF RTOL ATOL | u32 GOT REF [DIV]}\n");
        return 2;
    }
    size_t ng, nr;
    void *g = slurp(argv[2], &ng), *r = slurp(argv[3], &nr);
    if (ng < nr && strcmp(argv[1], "f16")) {
        printf("MISMATCH size %zu < %zu bytes\n", ng, nr);
        return 1;
    }
    size_t bad = 0, first = (size_t)-1;
    if (!strcmp(argv[1], "f32") && (argc == 6 || argc == 7)) {
        double rtol = atof(argv[4]), atol = atof(argv[5]), worst = 0;
        double div = argc == 7 ? atof(argv[6]) : 1.0;
        const float *a = g, *b = r;
        size_t n = nr / 4;
        for (size_t i = 0; i < n; i++) {
            double e = fabs((double)a[i] / div - (double)b[i]);
            int ok = e <= atol + rtol * fabs((double)b[i]);
            if (!ok || isnan(a[i]) != isnan(b[i])) {
                if (!bad++) first = i;
                if (!(e <= worst)) worst = e;
            }
        }
        if (bad) {
            printf("MISMATCH %zu/%zu (first [%zu] %g vs %g, worst |err| %g)\n", bad, n, first,
                   a[first] / div, b[first], worst);
            return 1;
        }
    } else if (!strcmp(argv[1], "f16") && argc == 6) {
        double rtol = atof(argv[4]), atol = atof(argv[5]), worst = 0;
        const _Float16 *a = g;
        const float *b = r;
        size_t n = nr / 4;
        if (ng < n * 2) {
            printf("MISMATCH size %zu < %zu bytes\n", ng, n * 2);
            return 1;
        }
        for (size_t i = 0; i < n; i++) {
            double e = fabs((double)a[i] - (double)b[i]);
            if (!(e <= atol + rtol * fabs((double)b[i]))) {
                if (!bad++) first = i;
                if (!(e <= worst)) worst = e;
            }
        }
        if (bad) {
            printf("MISMATCH %zu/%zu (first [%zu] %g vs %g, worst |err| %g)\n", bad, n, first,
                   (double)a[first], b[first], worst);
            return 1;
        }
    } else if (!strcmp(argv[1], "u32")) {
        uint32_t div = argc > 4 ? (uint32_t)strtoul(argv[4], 0, 0) : 1;
        double frac = argc > 5 ? atof(argv[5]) : 0.0;
        const uint32_t *a = g, *b = r;
        size_t n = nr / 4;
        for (size_t i = 0; i < n; i++)
            if (a[i] % div || a[i] / div != b[i])
                if (!bad++) first = i;
        if (bad > frac * (double)n) {
            printf("MISMATCH %zu/%zu (first [%zu] %u/%u vs %u)\n", bad, n, first, a[first], div,
                   b[first]);
            return 1;
        }
        if (bad) {
            printf("ok (%zu/%zu differ, within %g)\n", bad, n, frac);
            return 0;
        }
    } else {
        fprintf(stderr, "check: bad arguments\n");
        return 2;
    }
    printf("ok\n");
    return 0;
}
