/* examples/c-api/main.c: runs examples/saxpy.ptx on the CPU through the C API of ptx2llvm
 * (include/ptx2llvm.h) and checks the result: y[i] = a * x[i] + y[i].
 *
 *     make -C examples/c-api run        # builds against target/debug/libptx2llvm.so
 *
 * Usage: c-api-example [PATH/TO/saxpy.ptx]   (default: ../saxpy.ptx next to this file) */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ptx2llvm.h"

static char *read_file(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = malloc((size_t)n + 1);
    if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
        free(buf);
        buf = NULL;
    }
    fclose(f);
    if (buf) buf[n] = 0;
    *len = (size_t)n;
    return buf;
}

int main(int argc, char **argv) {
    const char *path = argc > 1 ? argv[1] : "../saxpy.ptx";
    size_t len = 0;
    char *src = read_file(path, &len);
    if (!src) {
        fprintf(stderr, "cannot read %s\n", path);
        return 1;
    }
    printf("ptx2llvm %s\n", ptx2llvm_version());

    char *err = NULL;
    ptx2llvm_options opts;
    ptx2llvm_options_init(&opts);
    opts.opt_level = 2;
    ptx2llvm_module *m = ptx2llvm_module_from_ptx_opts(src, len, &opts, &err);
    free(src);
    if (!m) {
        fprintf(stderr, "compile error: %s\n", err);
        ptx2llvm_string_free(err);
        return 1;
    }
    for (size_t k = 0; k < ptx2llvm_module_kernel_count(m); k++)
        printf("kernel %zu: %s\n", k, ptx2llvm_module_kernel_name(m, k));

    const uint32_t n = 1000;
    const float a = 3.0f;
    ptx2llvm_buffer *x = ptx2llvm_buffer_alloc(n * sizeof(float));
    ptx2llvm_buffer *y = ptx2llvm_buffer_alloc(n * sizeof(float));
    float *xs = ptx2llvm_buffer_ptr(x), *ys = ptx2llvm_buffer_ptr(y);
    for (uint32_t i = 0; i < n; i++) {
        xs[i] = (float)i;
        ys[i] = 0.5f * (float)i;
    }

    /* saxpy(const float *x, float *y, float a, unsigned n) */
    ptx2llvm_arg args[4] = {ptx2llvm_arg_buffer(x), ptx2llvm_arg_buffer(y), ptx2llvm_arg_f32(a),
                            ptx2llvm_arg_u32(n)};
    ptx2llvm_dim3 grid = {(n + 127) / 128, 1, 1}, block = {128, 1, 1};
    if (ptx2llvm_launch(m, "saxpy", grid, block, 0, args, 4, &err) != 0) {
        fprintf(stderr, "launch error: %s\n", err);
        ptx2llvm_string_free(err);
        return 1;
    }
    int bad = 0;
    for (uint32_t i = 0; i < n; i++) {
        float want = fmaf(a, (float)i, 0.5f * (float)i);
        if (ys[i] != want) {
            if (bad++ < 5) fprintf(stderr, "y[%u] = %g, expected %g\n", i, ys[i], want);
        }
    }

    /* Errors are values: a missing argument is reported, nothing is launched. */
    if (ptx2llvm_launch(m, "saxpy", grid, block, 0, args, 3, &err) == 0) {
        fprintf(stderr, "a launch with 3 arguments succeeded\n");
        bad++;
    } else {
        printf("expected error: %s\n", err);
        ptx2llvm_string_free(err);
    }

    ptx2llvm_buffer_free(x);
    ptx2llvm_buffer_free(y);
    ptx2llvm_module_free(m);
    if (bad) {
        printf("FAIL (%d mismatches)\n", bad);
        return 1;
    }
    printf("PASS\n");
    return 0;
}
