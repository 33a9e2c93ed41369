/* examples/c-api/obj_main.c: runs saxpy from an object file made ahead of time with
 *
 *     ptx2llvm examples/saxpy.ptx --target cpu --emit obj -o saxpy.o
 *
 * linked with libptx2llvm, through the runtime's launcher (include/ptx2llvm_rt.h). No PTX
 * is compiled at run time. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "ptx2llvm_rt.h"

/* The kernel's entry point in the object: void saxpy(const void *params, ptx2llvm_thread *t). */
extern void saxpy(const void *params, ptx2llvm_thread *t);

/* saxpy's parameters in CUDA layout: (.u64 x, .u64 y, .f32 a, .u32 n). */
struct saxpy_params {
    const float *x;
    float *y;
    float a;
    uint32_t n;
};

int main(void) {
    enum { N = 777 };
    float *x = malloc(N * sizeof(float)), *y = malloc(N * sizeof(float));
    for (int i = 0; i < N; i++) {
        x[i] = (float)i;
        y[i] = 1.0f;
    }
    struct saxpy_params p = {x, y, 2.0f, N};
    ptx2llvm_dim3 grid = {(N + 63) / 64, 1, 1}, block = {64, 1, 1};
    char *err = NULL;
    if (ptx2llvm_rt_launch(saxpy, "saxpy", grid, block, ptx2llvm_static_shared_bytes, 0, &p,
                           sizeof p, &err) != 0) {
        fprintf(stderr, "launch error: %s\n", err);
        ptx2llvm_string_free(err);
        return 1;
    }
    int bad = 0;
    for (int i = 0; i < N; i++)
        if (y[i] != fmaf(2.0f, (float)i, 1.0f)) bad++;
    free(x);
    free(y);
    printf(bad ? "FAIL\n" : "PASS\n");
    return bad != 0;
}
