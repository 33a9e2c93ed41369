/* orc_load.c: the kernel cache's feasibility probe (docs/KERNEL_CACHE.md). Loads an object that
 * `ptx2llvm --target cpu --emit obj` compiled earlier into LLVM ORC's LLJIT through the C API
 * (LLVMOrcLLJITAddObjectFile: relocation and linking only, no compilation), resolves its
 * runtime symbols from the process (libptx2llvm.so), and launches the run-vecadd kernel with
 * ptx2llvm_rt_launch. Build and run: scripts/cache-probe/run.sh */
#include <dlfcn.h>
#include <llvm-c/Core.h>
#include <llvm-c/Error.h>
#include <llvm-c/LLJIT.h>
#include <llvm-c/Orc.h>
#include <llvm-c/Target.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "ptx2llvm_rt.h"

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

static void check(LLVMErrorRef e, const char *what) {
    if (e) {
        char *m = LLVMGetErrorMessage(e);
        fprintf(stderr, "%s: %s\n", what, m);
        exit(1);
    }
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: %s vecadd.o\n", argv[0]);
        return 2;
    }
    double t0 = now();
    LLVMInitializeNativeTarget();
    LLVMInitializeNativeAsmPrinter();
    LLVMOrcLLJITRef J;
    check(LLVMOrcCreateLLJIT(&J, 0), "create LLJIT");
    LLVMOrcJITDylibRef JD = LLVMOrcLLJITGetMainJITDylib(J);
    LLVMOrcDefinitionGeneratorRef gen;
    check(LLVMOrcCreateDynamicLibrarySearchGeneratorForProcess(
              &gen, LLVMOrcLLJITGetGlobalPrefix(J), 0, 0),
          "process symbols");
    LLVMOrcJITDylibAddGenerator(JD, gen);
    double t1 = now();
    LLVMMemoryBufferRef buf;
    char *msg;
    if (LLVMCreateMemoryBufferWithContentsOfFile(argv[1], &buf, &msg)) {
        fprintf(stderr, "%s\n", msg);
        return 1;
    }
    check(LLVMOrcLLJITAddObjectFile(J, JD, buf), "add object");
    LLVMOrcExecutorAddress k, shb;
    check(LLVMOrcLLJITLookup(J, &k, "vecadd"), "vecadd");
    check(LLVMOrcLLJITLookup(J, &shb, "ptx2llvm_static_shared_bytes"), "shared bytes");
    double t2 = now();
    printf("LLJIT setup %.3f ms; object read, linked, symbols looked up: %.3f ms\n",
           (t1 - t0) * 1e3, (t2 - t1) * 1e3);
    uint32_t a[10], b[10], c[10] = {0};
    for (int i = 0; i < 10; i++) {
        a[i] = i + 1;
        b[i] = 100 * (i + 1);
    }
    struct { uint32_t *a, *b, *c; uint32_t n; } p = {a, b, c, 10};
    char *err = 0;
    ptx2llvm_dim3 grid = {3, 1, 1}, block = {4, 1, 1};
    int rc = ptx2llvm_rt_launch((ptx2llvm_kernel)(size_t)k, "vecadd", grid, block,
                                *(uint32_t *)(size_t)shb, 0, &p, sizeof p, &err);
    printf("launch: %d%s%s; c =", rc, err ? " " : "", err ? err : "");
    for (int i = 0; i < 10; i++) printf(" %u", c[i]);
    printf("\n");
    for (int i = 0; i < 10; i++)
        if (c[i] != a[i] + b[i]) return 1;
    return rc;
}
