/* driver_api.c: a C program of the CUDA driver API, built with NVIDIA's cuda.h against
 * ptx2llvm's libcuda.so.1 (cuda/tests/driver_api.rs compiles and runs it). It checks every
 * group of entry points, their results and their error returns, and prints "PASS" with the
 * number of checks, or each failed check and exits 1. */
#define _GNU_SOURCE
#include <cuda.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* cudaProfiler.h is not in the pip package of the headers. */
CUresult CUDAAPI cuProfilerStart(void);
CUresult CUDAAPI cuProfilerStop(void);

static int checks, failures;

#define CHECK(cond)                                                                  \
    do {                                                                             \
        checks++;                                                                    \
        if (!(cond)) {                                                               \
            failures++;                                                              \
            fprintf(stderr, "driver_api.c:%d: check failed: %s\n", __LINE__, #cond); \
        }                                                                            \
    } while (0)

/* A call and the result it must give. */
#define EXPECT(call, want)                                                               \
    do {                                                                                 \
        CUresult r_ = (call);                                                            \
        checks++;                                                                        \
        if (r_ != (want)) {                                                              \
            const char *n_ = "?";                                                        \
            cuGetErrorName(r_, &n_);                                                     \
            failures++;                                                                  \
            fprintf(stderr, "driver_api.c:%d: %s gave %s (%d), expected %s\n", __LINE__, \
                    #call, n_, (int)r_, #want);                                          \
        }                                                                                \
    } while (0)
#define OK(call) EXPECT(call, CUDA_SUCCESS)

static const char *PTX =
    ".version 7.0\n"
    ".target sm_80\n"
    ".address_size 64\n"
    ".global .u32 counter;\n"
    ".const .f32 scale = 2.0;\n"
    "// c[i] = scale * (a[i] + b[i]) + counter, for i < n\n"
    ".visible .entry vecadd(.param .u64 a, .param .u64 b, .param .u64 c, .param .u32 n) {\n"
    "  .reg .u32 %r<6>; .reg .u64 %rd<8>; .reg .f32 %f<5>; .reg .pred %p;\n"
    "  mov.u32 %r1, %ctaid.x; mov.u32 %r2, %ntid.x; mov.u32 %r3, %tid.x;\n"
    "  mad.lo.u32 %r4, %r1, %r2, %r3;\n"
    "  ld.param.u32 %r5, [n]; setp.ge.u32 %p, %r4, %r5; @%p bra done;\n"
    "  ld.param.u64 %rd1, [a]; ld.param.u64 %rd2, [b]; ld.param.u64 %rd3, [c];\n"
    "  mul.wide.u32 %rd4, %r4, 4;\n"
    "  add.u64 %rd5, %rd1, %rd4; add.u64 %rd6, %rd2, %rd4; add.u64 %rd7, %rd3, %rd4;\n"
    "  ld.global.f32 %f1, [%rd5]; ld.global.f32 %f2, [%rd6]; add.f32 %f3, %f1, %f2;\n"
    "  ld.const.f32 %f4, [scale]; mul.f32 %f3, %f3, %f4;\n"
    "  ld.global.u32 %r5, [counter]; cvt.rn.f32.u32 %f4, %r5; add.f32 %f3, %f3, %f4;\n"
    "  st.global.f32 [%rd7], %f3;\n"
    "done:\n"
    "  ret;\n"
    "}\n"
    "// out[blockIdx] = sum of the block's thread ids, through dynamic shared memory\n"
    ".visible .entry blocksum(.param .u64 out) {\n"
    "  .extern .shared .align 4 .b8 buf[];\n"
    "  .reg .u32 %r<8>; .reg .u64 %rd<4>; .reg .pred %p;\n"
    "  mov.u32 %r1, %tid.x; mov.u32 %r2, %ntid.x; shl.b32 %r3, %r1, 2;\n"
    "  mov.u32 %r4, buf; add.u32 %r4, %r4, %r3; st.shared.u32 [%r4], %r1;\n"
    "  bar.sync 0;\n"
    "  setp.ne.u32 %p, %r1, 0; @%p bra done;\n"
    "  mov.u32 %r5, 0; mov.u32 %r6, 0; mov.u32 %r4, buf;\n"
    "loop:\n"
    "  ld.shared.u32 %r7, [%r4]; add.u32 %r5, %r5, %r7; add.u32 %r4, %r4, 4;\n"
    "  add.u32 %r6, %r6, 1; setp.lt.u32 %p, %r6, %r2; @%p bra loop;\n"
    "  ld.param.u64 %rd1, [out]; mov.u32 %r1, %ctaid.x; mul.wide.u32 %rd2, %r1, 4;\n"
    "  add.u64 %rd3, %rd1, %rd2; st.global.u32 [%rd3], %r5;\n"
    "done:\n"
    "  ret;\n"
    "}\n"
    ".visible .entry maxntid64(.param .u64 out) .maxntid 64, 1, 1 {\n"
    "  ret;\n"
    "}\n"
    ".visible .entry req32(.param .u64 out) .reqntid 32, 1, 1 {\n"
    "  .local .align 8 .b8 scratch[40];\n"
    "  .reg .u64 %rd1; mov.u64 %rd1, scratch; st.local.u64 [%rd1], %rd1;\n"
    "  ret;\n"
    "}\n"
    ".visible .entry fault(.param .u64 p) {\n"
    "  .reg .u64 %rd1; .reg .u32 %r1;\n"
    "  ld.param.u64 %rd1, [p]; mov.u32 %r1, 7; st.global.u32 [%rd1], %r1;\n"
    "  ret;\n"
    "}\n"
    ".visible .entry trapper() {\n"
    "  trap;\n"
    "}\n";

/* Phase 1 writes a[i], a grid sync through the device runtime's cudaCGSynchronize (linked
 * from "libcudadevrt.a"), phase 2 reads the element another CTA wrote. CTA `trap_cta` traps
 * before the sync, which the other CTAs must not wait for forever. */
static const char *GRID_PTX =
    ".version 7.0\n.target sm_80\n.address_size 64\n"
    ".extern .func (.param .b64 h) cudaCGGetIntrinsicHandle(.param .b32 s);\n"
    ".extern .func (.param .b32 r) cudaCGSynchronize(.param .b64 h, .param .b32 f);\n"
    ".visible .entry mirror(.param .u64 a, .param .u64 out, .param .u32 trap_cta) {\n"
    "  .reg .b32 %r<8>; .reg .b64 %rd<10>; .reg .pred %p;\n"
    "  ld.param.u64 %rd1, [a]; ld.param.u64 %rd2, [out]; ld.param.u32 %r7, [trap_cta];\n"
    "  mov.u32 %r1, %ctaid.x; mov.u32 %r2, %ntid.x; mov.u32 %r3, %tid.x;\n"
    "  mad.lo.u32 %r4, %r1, %r2, %r3;\n"
    "  mov.u32 %r5, %nctaid.x; mul.lo.u32 %r5, %r5, %r2;\n"
    "  setp.eq.u32 %p, %r1, %r7; @%p trap;\n"
    "  mul.wide.u32 %rd3, %r4, 4; add.u64 %rd4, %rd1, %rd3;\n"
    "  add.u32 %r6, %r4, 1000; st.global.u32 [%rd4], %r6;\n"
    "  { .param .b32 s; .param .b64 h; st.param.b32 [s], 1;\n"
    "    call.uni (h), cudaCGGetIntrinsicHandle, (s); ld.param.b64 %rd5, [h]; }\n"
    "  { .param .b64 h; .param .b32 f; .param .b32 r; st.param.b64 [h], %rd5; st.param.b32 [f], 0;\n"
    "    call.uni (r), cudaCGSynchronize, (h, f); }\n"
    "  sub.u32 %r6, %r5, %r4; sub.u32 %r6, %r6, 1;\n"
    "  mul.wide.u32 %rd6, %r6, 4; add.u64 %rd7, %rd1, %rd6; ld.global.u32 %r6, [%rd7];\n"
    "  add.u64 %rd8, %rd2, %rd3; st.global.u32 [%rd8], %r6;\n"
    "  ret;\n"
    "}\n";

/* Links GRID_PTX with the device runtime ("libcudadevrt.a", recognized by its name) and loads
 * it into the current context. */
static CUresult load_grid_module(CUmodule *m) {
    static const char archive[] = "!<arch>\n";
    CUlinkState ls;
    void *image = NULL;
    size_t image_size = 0;
    CUresult r = cuLinkCreate(0, NULL, NULL, &ls);
    if (r == CUDA_SUCCESS)
        r = cuLinkAddData(ls, CU_JIT_INPUT_PTX, (void *)GRID_PTX, strlen(GRID_PTX) + 1, "grid.ptx", 0, NULL, NULL);
    if (r == CUDA_SUCCESS)
        r = cuLinkAddData(ls, CU_JIT_INPUT_LIBRARY, (void *)archive, sizeof archive - 1, "/usr/lib/libcudadevrt.a", 0,
                          NULL, NULL);
    if (r == CUDA_SUCCESS)
        r = cuLinkComplete(ls, &image, &image_size);
    if (r == CUDA_SUCCESS)
        r = cuModuleLoadData(m, image);
    cuLinkDestroy(ls);
    return r;
}

static void CUDA_CB callback(CUstream s, CUresult status, void *data) {
    (void)s;
    *(int *)data = status == CUDA_SUCCESS ? 1 : 2;
}

static void CUDA_CB host_fn(void *data) { *(int *)data += 10; }

static int destroyed;
static void CUDA_CB user_destroy(void *data) { destroyed += *(int *)data; }

/* The other process of the IPC test (this program run again with --ipc-child and the handles
 * in hex): opens the memory and the event, checks the parent's 7s, writes 9s for the parent
 * to see, and exits with the number of failed checks. */
static int ipc_child(const char *mem_hex, const char *event_hex) {
    CUipcMemHandle mh;
    CUipcEventHandle eh;
    for (int i = 0; i < CU_IPC_HANDLE_SIZE; i++) {
        unsigned b;
        sscanf(mem_hex + 2 * i, "%2x", &b);
        mh.reserved[i] = (char)b;
        sscanf(event_hex + 2 * i, "%2x", &b);
        eh.reserved[i] = (char)b;
    }
    CUcontext c;
    CUdeviceptr p = 0, q = 0;
    OK(cuInit(0));
    OK(cuDevicePrimaryCtxRetain(&c, 0));
    OK(cuCtxSetCurrent(c));
    OK(cuIpcOpenMemHandle(&p, mh, CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS));
    /* opened again: the same mapping, counted */
    OK(cuIpcOpenMemHandle(&q, mh, CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS));
    CHECK(p != 0 && q == p);
    unsigned w[1250];
    OK(cuMemcpyDtoH(w, p, sizeof w));
    CHECK(w[0] == 7 && w[1249] == 7);
    OK(cuMemsetD32(p, 9, 1250));
    CUpointer_attribute a = CU_POINTER_ATTRIBUTE_MEMORY_TYPE;
    unsigned mt = 0;
    OK(cuPointerGetAttribute(&mt, a, p + 16));
    CHECK(mt == CU_MEMORYTYPE_DEVICE);
    OK(cuIpcCloseMemHandle(q));
    OK(cuIpcCloseMemHandle(p));
    EXPECT(cuIpcCloseMemHandle(p), CUDA_ERROR_INVALID_VALUE);
    CUevent e;
    OK(cuIpcOpenEventHandle(&e, eh));
    OK(cuEventSynchronize(e));
    OK(cuEventQuery(e));
    OK(cuEventDestroy(e));
    return failures;
}

int main(int argc, char **argv) {
    if (argc == 4 && strcmp(argv[1], "--ipc-child") == 0)
        return ipc_child(argv[2], argv[3]);
    /* ---- loader */
    int v = 0, n = 0;
    OK(cuDriverGetVersion(&v));
    CHECK(v == 13050);
    EXPECT(cuDeviceGetCount(&n), CUDA_ERROR_NOT_INITIALIZED);
    EXPECT(cuInit(1), CUDA_ERROR_INVALID_VALUE);
    OK(cuInit(0));
    const char *s = NULL;
    OK(cuGetErrorName(CUDA_ERROR_INVALID_VALUE, &s));
    CHECK(s && strcmp(s, "CUDA_ERROR_INVALID_VALUE") == 0);
    OK(cuGetErrorString(CUDA_ERROR_ILLEGAL_ADDRESS, &s));
    CHECK(s && strstr(s, "invalid memory address") != NULL);
    EXPECT(cuGetErrorName((CUresult)12345, &s), CUDA_ERROR_INVALID_VALUE);
    CHECK(s == NULL);
    void *pfn = NULL;
    CUdriverProcAddressQueryResult q;
    void *self = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
    CHECK(self != NULL);
    OK(cuGetProcAddress("cuMemAlloc", &pfn, 13000, CU_GET_PROC_ADDRESS_DEFAULT, &q));
    CHECK(pfn == (void *)cuMemAlloc && pfn == dlsym(self, "cuMemAlloc_v2") && q == CU_GET_PROC_ADDRESS_SUCCESS);
    OK(cuGetProcAddress("cuCtxSynchronize", &pfn, 12000, 0, &q));
    CHECK(pfn == dlsym(self, "cuCtxSynchronize"));
    OK(cuGetProcAddress("cuCtxSynchronize", &pfn, 13000, 0, &q));
    CHECK(pfn == dlsym(self, "cuCtxSynchronize_v2"));
    OK(cuGetProcAddress("cuCtxCreate", &pfn, 13000, 0, &q));
    CHECK(pfn == dlsym(self, "cuCtxCreate_v4"));
    OK(cuGetProcAddress("cuMemcpyHtoD", &pfn, 13000, CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM, &q));
    CHECK(pfn == dlsym(self, "cuMemcpyHtoD_v2_ptds") && pfn != NULL);
    OK(cuGetProcAddress("cuLaunchKernel", &pfn, 13000, CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM, &q));
    CHECK(pfn == dlsym(self, "cuLaunchKernel_ptsz") && pfn != NULL);
    /* Misses: CUDA_SUCCESS with a null function and the reason in the status, as NVIDIA's
     * driver 580 answers (this program run against it on an H200); CUDA_ERROR_NOT_FOUND when
     * there is no status to write. */
    OK(cuGetProcAddress("cuNoSuchFunction", &pfn, 13000, 0, &q));
    CHECK(pfn == NULL && q == CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND);
    OK(cuGetProcAddress("cuLaunchKernelEx", &pfn, 11000, 0, &q));
    CHECK(pfn == NULL && q == CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT);
    EXPECT(cuGetProcAddress("cuNoSuchFunction", &pfn, 13000, 0, NULL), CUDA_ERROR_NOT_FOUND);
    const void *table = (const void *)1;
    CUuuid id = {{0}};
    CHECK(cuGetExportTable(&table, &id) != CUDA_SUCCESS && table == NULL);

    /* ---- device */
    CUdevice dev = -1;
    OK(cuDeviceGetCount(&n));
    CHECK(n == 1);
    OK(cuDeviceGet(&dev, 0));
    CHECK(dev == 0);
    EXPECT(cuDeviceGet(&dev, 1), CUDA_ERROR_INVALID_DEVICE);
    char name[256];
    OK(cuDeviceGetName(name, sizeof name, 0));
    CHECK(strncmp(name, "ptx2llvm CPU", 12) == 0);
    int major = 0, minor = -1, a = 0;
    OK(cuDeviceComputeCapability(&major, &minor, 0));
    CHECK(major == 8 && minor == 9);
    OK(cuDeviceGetAttribute(&a, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, 0));
    CHECK(a == 8);
    OK(cuDeviceGetAttribute(&a, CU_DEVICE_ATTRIBUTE_WARP_SIZE, 0));
    CHECK(a == 32);
    OK(cuDeviceGetAttribute(&a, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, 0));
    CHECK(a >= 1);
    OK(cuDeviceGetAttribute(&a, CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING, 0));
    CHECK(a == 1);
    EXPECT(cuDeviceGetAttribute(&a, (CUdevice_attribute)-1, 0), CUDA_ERROR_INVALID_VALUE);
    EXPECT(cuDeviceGetAttribute(&a, CU_DEVICE_ATTRIBUTE_WARP_SIZE, 3), CUDA_ERROR_INVALID_DEVICE);
    size_t total = 0;
    OK(cuDeviceTotalMem(&total, 0));
    CHECK(total > (size_t)64 << 20);
    CUuuid u1, u2;
    OK(cuDeviceGetUuid(&u1, 0));
    OK(cuDeviceGetUuid(&u2, 0));
    CHECK(memcmp(&u1, &u2, sizeof u1) == 0);
    CUdevprop prop;
    OK(cuDeviceGetProperties(&prop, 0));
    CHECK(prop.maxThreadsPerBlock == 1024 && prop.SIMDWidth == 32);
    char bus[32];
    OK(cuDeviceGetPCIBusId(bus, sizeof bus, 0));
    OK(cuDeviceGetByPCIBusId(&dev, bus));

    /* ---- contexts */
    CUcontext cur = (CUcontext)1;
    OK(cuCtxGetCurrent(&cur));
    CHECK(cur == NULL);
    EXPECT(cuCtxSynchronize(), CUDA_ERROR_INVALID_CONTEXT);
    CUcontext primary, other;
    unsigned flags = 99;
    int active = 1;
    OK(cuDevicePrimaryCtxGetState(0, &flags, &active));
    CHECK(active == 0);
    OK(cuDevicePrimaryCtxRetain(&primary, 0));
    OK(cuDevicePrimaryCtxGetState(0, &flags, &active));
    CHECK(active == 1);
    OK(cuCtxSetCurrent(primary));
    OK(cuCtxGetCurrent(&cur));
    CHECK(cur == primary);
    OK(cuCtxCreate(&other, NULL, 0, 0));
    OK(cuCtxGetCurrent(&cur));
    CHECK(cur == other);
    OK(cuCtxPopCurrent(&cur));
    CHECK(cur == other);
    OK(cuCtxGetCurrent(&cur));
    CHECK(cur == primary);
    OK(cuCtxPushCurrent(other));
    OK(cuCtxDestroy(other));
    OK(cuCtxGetCurrent(&cur));
    CHECK(cur == primary);
    EXPECT(cuCtxPushCurrent(other), CUDA_ERROR_INVALID_CONTEXT);
    OK(cuCtxSynchronize());
    size_t lim = 0;
    OK(cuCtxGetLimit(&lim, CU_LIMIT_STACK_SIZE));
    CHECK(lim == 1024);
    OK(cuCtxSetLimit(CU_LIMIT_MALLOC_HEAP_SIZE, 1 << 24));
    OK(cuCtxGetLimit(&lim, CU_LIMIT_MALLOC_HEAP_SIZE));
    CHECK(lim == 1 << 24);
    int least = 1, greatest = 1;
    OK(cuCtxGetStreamPriorityRange(&least, &greatest));
    CHECK(least == 0 && greatest < 0);
    unsigned long long ctxid = 0;
    OK(cuCtxGetId(primary, &ctxid));
    CHECK(ctxid != 0);

    /* ---- memory */
    enum { N = 1000 };
    CUdeviceptr da, db, dc;
    OK(cuMemAlloc(&da, N * 4));
    OK(cuMemAlloc(&db, N * 4));
    OK(cuMemAlloc(&dc, N * 4));
    CHECK(da % 256 == 0);
    EXPECT(cuMemAlloc(&dc, 0), CUDA_ERROR_INVALID_VALUE);
    size_t fr = 0, tot = 0;
    OK(cuMemGetInfo(&fr, &tot));
    CHECK(tot == total && fr > 0 && fr <= tot);
    float ha[N], hb[N], hc[N];
    for (int i = 0; i < N; i++) {
        ha[i] = (float)i;
        hb[i] = (float)(2 * i);
    }
    OK(cuMemcpyHtoD(da, ha, sizeof ha));
    OK(cuMemcpyHtoD(db, hb, sizeof hb));
    OK(cuMemsetD32(dc, 0x3f800000u, N)); /* 1.0f */
    OK(cuMemcpyDtoH(hc, dc, sizeof hc));
    CHECK(hc[0] == 1.0f && hc[N - 1] == 1.0f);
    OK(cuMemcpyDtoD(dc, da, 16));
    OK(cuMemcpyDtoH(hc, dc, 16));
    CHECK(hc[3] == 3.0f);
    EXPECT(cuMemcpyHtoD(da + 4, ha, sizeof ha), CUDA_ERROR_INVALID_VALUE);
    EXPECT(cuMemcpyDtoH(hc, (CUdeviceptr)(uintptr_t)hc, 16), CUDA_ERROR_INVALID_VALUE);
    EXPECT(cuMemsetD32(da + 1, 0, 1), CUDA_ERROR_INVALID_VALUE);
    /* a count whose byte size overflows is refused, not wrapped to 4 bytes */
    EXPECT(cuMemsetD32(da, 0, ((size_t)1 << 62) + 1), CUDA_ERROR_INVALID_VALUE);
    EXPECT(cuMemsetD2D16(da, 0, 0, 8, 2), CUDA_ERROR_INVALID_VALUE);
    unsigned short h16[8];
    OK(cuMemsetD2D16(dc, 8, 0xabcd, 2, 3));
    OK(cuMemcpyDtoH(h16, dc, 16));
    CHECK(h16[0] == 0xabcd && h16[1] == 0xabcd && h16[4] == 0xabcd && h16[2] == 0);
    /* a 2D copy: a 3x4 window of a 8-wide host matrix into a pitched device matrix and back */
    float m8[4][8], back[4][3];
    for (int i = 0; i < 32; i++) m8[i / 8][i % 8] = (float)i;
    CUdeviceptr pitched;
    size_t pitch = 0;
    OK(cuMemAllocPitch(&pitched, &pitch, 3 * 4, 4, 4));
    CHECK(pitch >= 12 && pitch % 256 == 0);
    CUDA_MEMCPY2D c2 = {0};
    c2.srcMemoryType = CU_MEMORYTYPE_HOST;
    c2.srcHost = m8;
    c2.srcXInBytes = 2 * 4;
    c2.srcPitch = sizeof m8[0];
    c2.dstMemoryType = CU_MEMORYTYPE_DEVICE;
    c2.dstDevice = pitched;
    c2.dstPitch = pitch;
    c2.WidthInBytes = 3 * 4;
    c2.Height = 4;
    OK(cuMemcpy2D(&c2));
    CUDA_MEMCPY2D d2 = {0};
    d2.srcMemoryType = CU_MEMORYTYPE_DEVICE;
    d2.srcDevice = pitched;
    d2.srcPitch = pitch;
    d2.dstMemoryType = CU_MEMORYTYPE_HOST;
    d2.dstHost = back;
    d2.dstPitch = sizeof back[0];
    d2.WidthInBytes = 3 * 4;
    d2.Height = 4;
    OK(cuMemcpy2DAsync(&d2, NULL));
    CHECK(back[0][0] == 2.0f && back[3][2] == 28.0f && back[1][1] == 11.0f);
    d2.Height = 5; /* past the end of the pitched allocation */
    EXPECT(cuMemcpy2D(&d2), CUDA_ERROR_INVALID_VALUE);
    d2.srcMemoryType = CU_MEMORYTYPE_ARRAY;
    EXPECT(cuMemcpy2D(&d2), CUDA_ERROR_NOT_SUPPORTED);
    OK(cuMemFree(pitched));
    CUdeviceptr base = 0;
    size_t size = 0;
    OK(cuMemGetAddressRange(&base, &size, da + 100));
    CHECK(base == da && size == N * 4);
    unsigned mt = 0;
    OK(cuPointerGetAttribute(&mt, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, da + 8));
    CHECK(mt == CU_MEMORYTYPE_DEVICE);
    CUcontext pc = NULL;
    OK(cuPointerGetAttribute(&pc, CU_POINTER_ATTRIBUTE_CONTEXT, da));
    CHECK(pc == primary);
    CUdeviceptr start = 0;
    OK(cuPointerGetAttribute(&start, CU_POINTER_ATTRIBUTE_RANGE_START_ADDR, da + 5));
    CHECK(start == da);
    int local = 0;
    EXPECT(cuPointerGetAttribute(&mt, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, (CUdeviceptr)(uintptr_t)&local),
           CUDA_ERROR_INVALID_VALUE);
    void *hp = NULL;
    OK(cuMemHostAlloc(&hp, 4096, CU_MEMHOSTALLOC_DEVICEMAP));
    CUdeviceptr hdp = 0;
    OK(cuMemHostGetDevicePointer(&hdp, hp, 0));
    CHECK(hdp == (CUdeviceptr)(uintptr_t)hp);
    OK(cuPointerGetAttribute(&mt, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, hdp));
    CHECK(mt == CU_MEMORYTYPE_HOST);
    float *reg = malloc(4096);
    OK(cuMemHostRegister(reg, 4096, CU_MEMHOSTREGISTER_DEVICEMAP));
    EXPECT(cuMemHostRegister(reg + 4, 64, 0), CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED);
    OK(cuMemHostGetDevicePointer(&hdp, reg, 0));
    CHECK(hdp == (CUdeviceptr)(uintptr_t)reg);
    CUdeviceptr managed;
    OK(cuMemAllocManaged(&managed, 64, CU_MEM_ATTACH_GLOBAL));
    ((int *)(uintptr_t)managed)[3] = 42; /* host access to managed memory */
    unsigned char is_managed = 0;
    OK(cuPointerGetAttribute(&is_managed, CU_POINTER_ATTRIBUTE_IS_MANAGED, managed));
    CHECK(is_managed == 1);

    /* ---- modules and libraries */
    CUmodule mod;
    OK(cuModuleLoadData(&mod, PTX));
    CUfunction vecadd, blocksum, small, fault, trapper;
    OK(cuModuleGetFunction(&vecadd, mod, "vecadd"));
    OK(cuModuleGetFunction(&blocksum, mod, "blocksum"));
    OK(cuModuleGetFunction(&small, mod, "maxntid64"));
    OK(cuModuleGetFunction(&fault, mod, "fault"));
    OK(cuModuleGetFunction(&trapper, mod, "trapper"));
    EXPECT(cuModuleGetFunction(&vecadd, mod, "nosuch"), CUDA_ERROR_NOT_FOUND);
    OK(cuModuleGetFunction(&vecadd, mod, "vecadd"));
    CUdeviceptr gcounter;
    size_t gsize = 0;
    OK(cuModuleGetGlobal(&gcounter, &gsize, mod, "counter"));
    CHECK(gsize == 4);
    unsigned three = 3;
    OK(cuMemcpyHtoD(gcounter, &three, 4));
    EXPECT(cuModuleGetGlobal(&gcounter, &gsize, mod, "nosuch"), CUDA_ERROR_NOT_FOUND);
    const char *name_out = NULL;
    OK(cuFuncGetName(&name_out, vecadd));
    CHECK(name_out && strcmp(name_out, "vecadd") == 0);
    size_t off = 0, psize = 0;
    OK(cuFuncGetParamInfo(vecadd, 3, &off, &psize));
    CHECK(off == 24 && psize == 4);
    char log[1024] = "";
    CUjit_option opts[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
    void *vals[] = {log, (void *)(uintptr_t)sizeof log};
    CUmodule bad;
    EXPECT(cuModuleLoadDataEx(&bad, ".version 7.0\n.target sm_80\n.address_size 64\n.visible .entry k() { frobnicate; }\n",
                              2, opts, vals),
           CUDA_ERROR_INVALID_PTX);
    CHECK(strstr(log, "frobnicate") != NULL);
    static const unsigned char cubin[64] = {0x7f, 'E', 'L', 'F', 2, 1, 1};
    EXPECT(cuModuleLoadData(&bad, cubin), CUDA_ERROR_NO_BINARY_FOR_GPU);
    CUlibrary lib;
    CUkernel kern;
    CUfunction kf;
    OK(cuLibraryLoadData(&lib, PTX, NULL, NULL, 0, NULL, NULL, 0));
    OK(cuLibraryGetKernel(&kern, lib, "vecadd"));
    OK(cuKernelGetFunction(&kf, kern));
    CHECK((void *)kf == (void *)kern);
    int attr = 0;
    OK(cuFuncGetAttribute(&attr, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, (CUfunction)kern));
    CHECK(attr >= 64);
    OK(cuKernelGetAttribute(&attr, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, kern, 0));
    CHECK(attr > 0 && attr <= 48 * 1024);

    /* ---- launches */
    unsigned nn = N;
    void *args[] = {&da, &db, &dc, &nn};
    OK(cuLaunchKernel(vecadd, (N + 127) / 128, 1, 1, 128, 1, 1, 0, 0, args, NULL));
    OK(cuMemcpyDtoH(hc, dc, sizeof hc));
    CHECK(hc[0] == 3.0f && hc[10] == 63.0f && hc[N - 1] == 2.0f * 3 * (N - 1) + 3);
    struct {
        CUdeviceptr a, b, c;
        unsigned n;
    } packed = {db, db, dc, N};
    size_t packed_size = sizeof packed;
    void *extra[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, &packed, CU_LAUNCH_PARAM_BUFFER_SIZE, &packed_size,
                     CU_LAUNCH_PARAM_END};
    OK(cuLaunchKernel(vecadd, (N + 255) / 256, 1, 1, 256, 1, 1, 0, 0, NULL, extra));
    OK(cuMemcpyDtoH(hc, dc, sizeof hc));
    CHECK(hc[5] == 2.0f * 20 + 3);
    /* the library's kernel is the same code */
    OK(cuLaunchKernel((CUfunction)kern, 8, 1, 1, 128, 1, 1, 0, 0, args, NULL));
    EXPECT(cuLaunchKernel(vecadd, 1, 1, 1, 2048, 1, 1, 0, 0, args, NULL), CUDA_ERROR_INVALID_VALUE);
    EXPECT(cuLaunchKernel(vecadd, 0, 1, 1, 32, 1, 1, 0, 0, args, NULL), CUDA_ERROR_INVALID_VALUE);
    EXPECT(cuLaunchKernel(vecadd, 1, 1, 1, 32, 1, 1, 0, 0, args, extra), CUDA_ERROR_INVALID_VALUE);
    EXPECT(cuLaunchKernel(vecadd, 1, 1, 1, 32, 1, 1, 0, 0, NULL, NULL), CUDA_ERROR_INVALID_VALUE);
    EXPECT(cuLaunchKernel(small, 1, 1, 1, 128, 1, 1, 0, 0, args, NULL), CUDA_ERROR_INVALID_VALUE);
    OK(cuLaunchKernel(small, 1, 1, 1, 64, 1, 1, 0, 0, args, NULL));
    CUfunction req32;
    OK(cuModuleGetFunction(&req32, mod, "req32"));
    EXPECT(cuLaunchKernel(req32, 1, 1, 1, 64, 1, 1, 0, 0, args, NULL), CUDA_ERROR_INVALID_VALUE);
    EXPECT(cuLaunchKernel(req32, 1, 1, 1, 16, 2, 1, 0, 0, args, NULL), CUDA_ERROR_INVALID_VALUE);
    OK(cuLaunchKernel(req32, 2, 1, 1, 32, 1, 1, 0, 0, args, NULL));
    /* attributes computed from the PTX */
    OK(cuFuncGetAttribute(&attr, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, req32));
    CHECK(attr == 32);
    OK(cuFuncGetAttribute(&attr, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, small));
    CHECK(attr == 64);
    OK(cuFuncGetAttribute(&attr, CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES, req32));
    CHECK(attr == 40);
    OK(cuFuncGetAttribute(&attr, CU_FUNC_ATTRIBUTE_CONST_SIZE_BYTES, vecadd));
    CHECK(attr == 4);
    OK(cuFuncGetAttribute(&attr, CU_FUNC_ATTRIBUTE_NUM_REGS, vecadd));
    CHECK(attr > 2 && attr <= 255);
    {
        /* CU_JIT_MAX_REGISTERS caps the register count, given to the linker or the loader */
        int regs = attr;
        CUjit_option ro[] = {CU_JIT_MAX_REGISTERS};
        void *rv[] = {(void *)(uintptr_t)4};
        CUlinkState ls;
        void *image = NULL;
        size_t image_size = 0;
        CUmodule lm, dm;
        CUfunction lf, df;
        OK(cuLinkCreate(1, ro, rv, &ls));
        OK(cuLinkAddData(ls, CU_JIT_INPUT_PTX, (void *)PTX, strlen(PTX) + 1, "driver_api.ptx", 0, NULL, NULL));
        OK(cuLinkComplete(ls, &image, &image_size));
        CHECK(image != NULL && image_size > strlen(PTX));
        OK(cuModuleLoadData(&lm, image));
        OK(cuLinkDestroy(ls));
        OK(cuModuleGetFunction(&lf, lm, "vecadd"));
        OK(cuFuncGetAttribute(&attr, CU_FUNC_ATTRIBUTE_NUM_REGS, lf));
        CHECK(attr == 4 && regs > 4);
        OK(cuModuleLoadDataEx(&dm, PTX, 1, ro, rv));
        OK(cuModuleGetFunction(&df, dm, "vecadd"));
        OK(cuFuncGetAttribute(&attr, CU_FUNC_ATTRIBUTE_NUM_REGS, df));
        CHECK(attr == 4);
        OK(cuModuleUnload(lm));
        OK(cuModuleUnload(dm));
    }
    /* The virtual architecture (.target sm_80), not .version 7.0, as the real driver says. */
    OK(cuFuncGetAttribute(&attr, CU_FUNC_ATTRIBUTE_PTX_VERSION, vecadd));
    CHECK(attr == 80);
    EXPECT(cuFuncGetAttribute(&attr, (CUfunction_attribute)-5, vecadd), CUDA_ERROR_INVALID_VALUE);
    CUdeviceptr sums;
    OK(cuMemAlloc(&sums, 4 * 4));
    void *sargs[] = {&sums};
    OK(cuLaunchKernel(blocksum, 4, 1, 1, 100, 1, 1, 100 * 4, 0, sargs, NULL));
    unsigned hs[4];
    OK(cuMemcpyDtoH(hs, sums, sizeof hs));
    CHECK(hs[0] == 4950 && hs[3] == 4950);
    EXPECT(cuLaunchKernel(blocksum, 1, 1, 1, 32, 1, 1, 64 * 1024, 0, sargs, NULL), CUDA_ERROR_INVALID_VALUE);
    OK(cuFuncSetAttribute(blocksum, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, 96 * 1024));
    OK(cuLaunchKernel(blocksum, 1, 1, 1, 32, 1, 1, 64 * 1024, 0, sargs, NULL));
    EXPECT(cuFuncSetAttribute(blocksum, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, 1 << 20),
           CUDA_ERROR_INVALID_VALUE);
    CUlaunchAttribute la[1];
    memset(la, 0, sizeof la);
    la[0].id = CU_LAUNCH_ATTRIBUTE_COOPERATIVE;
    la[0].value.cooperative = 1;
    CUlaunchConfig cfg = {0};
    cfg.gridDimX = 2;
    cfg.gridDimY = cfg.gridDimZ = 1;
    cfg.blockDimX = 100;
    cfg.blockDimY = cfg.blockDimZ = 1;
    cfg.sharedMemBytes = 400;
    cfg.attrs = la;
    cfg.numAttrs = 1;
    OK(cuMemsetD32(sums, 0, 4));
    OK(cuLaunchKernelEx(&cfg, blocksum, sargs, NULL));
    OK(cuMemcpyDtoH(hs, sums, sizeof hs));
    CHECK(hs[1] == 4950 && hs[2] == 0);
    la[0].id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
    la[0].value.clusterDim.x = 2;
    la[0].value.clusterDim.y = la[0].value.clusterDim.z = 1;
    EXPECT(cuLaunchKernelEx(&cfg, blocksum, sargs, NULL), CUDA_ERROR_NOT_SUPPORTED);
    OK(cuLaunchCooperativeKernel(blocksum, 1, 1, 1, 64, 1, 1, 256, 0, sargs));
    EXPECT(cuLaunchCooperativeKernel(blocksum, 1u << 30, 1, 1, 64, 1, 1, 256, 0, sargs),
           CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE);

    /* ---- grid-wide sync: cooperative groups' device runtime, linked for libcudadevrt.a */
    {
        enum { GB = 8, GT = 64, GN = GB * GT };
        CUmodule gm;
        CUfunction mirror;
        CUmodule unlinked;
        /* without the device runtime, cudaCG* stay unresolved */
        CHECK(cuModuleLoadData(&unlinked, GRID_PTX) != CUDA_SUCCESS);
        OK(load_grid_module(&gm));
        OK(cuModuleGetFunction(&mirror, gm, "mirror"));
        CUdeviceptr ga, gout;
        OK(cuMemAlloc(&ga, GN * 4));
        OK(cuMemAlloc(&gout, GN * 4));
        unsigned none = ~0u;
        void *gargs[] = {&ga, &gout, &none};
        unsigned hg[GN];
        int most = 0;
        OK(cuOccupancyMaxActiveBlocksPerMultiprocessor(&most, mirror, GT, 0));
        CHECK(most >= 1);
        for (int round = 0; round < 2; round++) {
            OK(cuMemsetD32(gout, 0, GN));
            if (round == 0) {
                OK(cuLaunchCooperativeKernel(mirror, GB, 1, 1, GT, 1, 1, 0, 0, gargs));
            } else {
                CUlaunchAttribute ca;
                memset(&ca, 0, sizeof ca);
                ca.id = CU_LAUNCH_ATTRIBUTE_COOPERATIVE;
                ca.value.cooperative = 1;
                CUlaunchConfig gc = {0};
                gc.gridDimX = GB;
                gc.gridDimY = gc.gridDimZ = 1;
                gc.blockDimX = GT;
                gc.blockDimY = gc.blockDimZ = 1;
                gc.attrs = &ca;
                gc.numAttrs = 1;
                OK(cuLaunchKernelEx(&gc, mirror, gargs, NULL));
            }
            OK(cuMemcpyDtoH(hg, gout, sizeof hg));
            int bad = 0;
            for (int i = 0; i < GN; i++)
                bad += hg[i] != (unsigned)(GN - 1 - i + 1000);
            CHECK(bad == 0);
        }
        EXPECT(cuLaunchCooperativeKernel(mirror, 1u << 20, 1, 1, GT, 1, 1, 0, 0, gargs),
               CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE);
        /* A grid sync outside a cooperative launch is an assertion, not a wait for CTAs that
         * are not resident; a CTA that traps before the sync fails the launch, and the CTAs
         * waiting for it are let go. Both leave sticky errors: contexts of their own. */
        CUcontext gctx;
        CUmodule gm2;
        CUfunction mirror2;
        OK(cuCtxCreate(&gctx, NULL, 0, 0));
        OK(load_grid_module(&gm2));
        OK(cuModuleGetFunction(&mirror2, gm2, "mirror"));
        OK(cuLaunchKernel(mirror2, GB, 1, 1, GT, 1, 1, 0, 0, gargs, NULL));
        EXPECT(cuCtxSynchronize(), CUDA_ERROR_ASSERT);
        OK(cuCtxDestroy(gctx));
        OK(cuCtxCreate(&gctx, NULL, 0, 0));
        OK(load_grid_module(&gm2));
        OK(cuModuleGetFunction(&mirror2, gm2, "mirror"));
        unsigned third = 3;
        void *targs[] = {&ga, &gout, &third};
        OK(cuLaunchCooperativeKernel(mirror2, GB, 1, 1, GT, 1, 1, 0, 0, targs));
        EXPECT(cuCtxSynchronize(), CUDA_ERROR_LAUNCH_FAILED);
        OK(cuCtxDestroy(gctx));
        OK(cuCtxGetCurrent(&cur));
        CHECK(cur == primary);
        OK(cuMemFree(ga));
        OK(cuMemFree(gout));
    }

    /* ---- streams and events */
    CUstream st;
    OK(cuStreamCreateWithPriority(&st, CU_STREAM_NON_BLOCKING, -1));
    int prio = 0;
    OK(cuStreamGetPriority(st, &prio));
    CHECK(prio == -1);
    unsigned sflags = 0;
    OK(cuStreamGetFlags(st, &sflags));
    CHECK(sflags == CU_STREAM_NON_BLOCKING);
    CUevent e0, e1, e2;
    OK(cuEventCreate(&e0, CU_EVENT_DEFAULT));
    OK(cuEventCreate(&e1, CU_EVENT_DEFAULT));
    OK(cuEventCreate(&e2, CU_EVENT_DISABLE_TIMING));
    float ms = -1;
    EXPECT(cuEventElapsedTime(&ms, e0, e1), CUDA_ERROR_INVALID_HANDLE);
    OK(cuEventRecord(e0, st));
    OK(cuMemcpyHtoDAsync(da, ha, sizeof ha, st));
    OK(cuLaunchKernel(vecadd, 8, 1, 1, 128, 1, 1, 0, st, args, NULL));
    OK(cuMemcpyDtoHAsync(hc, dc, sizeof hc, st));
    OK(cuEventRecord(e1, st));
    OK(cuEventRecord(e2, st));
    OK(cuStreamWaitEvent(NULL, e1, 0));
    OK(cuEventSynchronize(e1));
    OK(cuEventQuery(e1));
    OK(cuEventElapsedTime(&ms, e0, e1));
    CHECK(ms >= 0.0f);
    EXPECT(cuEventElapsedTime(&ms, e0, e2), CUDA_ERROR_INVALID_HANDLE);
    OK(cuStreamQuery(st));
    OK(cuStreamSynchronize(st));
    CHECK(hc[1] == 9.0f);
    int called = 0;
    OK(cuStreamAddCallback(st, callback, &called, 0));
    OK(cuLaunchHostFunc(st, host_fn, &called));
    OK(cuStreamSynchronize(st));
    CHECK(called == 11);
    OK(cuMemsetD8Async(dc, 0, 16, st));
    OK(cuMemcpyAsync(dc, da, 16, CU_STREAM_PER_THREAD));
    OK(cuEventDestroy(e2));
    EXPECT(cuEventQuery(e2), CUDA_ERROR_INVALID_HANDLE);
    OK(cuStreamDestroy(st));
    EXPECT(cuStreamSynchronize(st), CUDA_ERROR_INVALID_HANDLE);

    /* ---- IPC: another process maps the allocation through its handle */
    {
        CUdeviceptr shared, opened;
        OK(cuMemAlloc(&shared, 5000));
        OK(cuMemsetD32(shared, 7, 1250));
        CUipcMemHandle mh;
        OK(cuIpcGetMemHandle(&mh, shared));
        /* the exporter's pointer keeps its contents and works on (the pages moved to a memfd) */
        unsigned w[4];
        OK(cuMemcpyDtoH(w, shared + 4984, 16));
        CHECK(w[0] == 7 && w[3] == 7);
        CUipcMemHandle again;
        OK(cuIpcGetMemHandle(&again, shared));
        CHECK(memcmp(&again, &mh, sizeof mh) == 0);
        EXPECT(cuIpcOpenMemHandle(&opened, mh, CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS), CUDA_ERROR_INVALID_CONTEXT);
        CUipcMemHandle junk;
        memset(&junk, 1, sizeof junk);
        EXPECT(cuIpcOpenMemHandle(&opened, junk, 0), CUDA_ERROR_INVALID_VALUE);
        EXPECT(cuIpcGetMemHandle(&again, (CUdeviceptr)(uintptr_t)&junk), CUDA_ERROR_INVALID_VALUE);
        CUevent ie, plain;
        CUipcEventHandle eh;
        OK(cuEventCreate(&ie, CU_EVENT_INTERPROCESS | CU_EVENT_DISABLE_TIMING));
        OK(cuEventCreate(&plain, CU_EVENT_DEFAULT));
        EXPECT(cuIpcGetEventHandle(&eh, plain), CUDA_ERROR_INVALID_HANDLE);
        OK(cuIpcGetEventHandle(&eh, ie));
        OK(cuEventRecord(ie, NULL));
        char mem_hex[2 * CU_IPC_HANDLE_SIZE + 1], event_hex[2 * CU_IPC_HANDLE_SIZE + 1];
        for (int i = 0; i < CU_IPC_HANDLE_SIZE; i++) {
            sprintf(mem_hex + 2 * i, "%02x", (unsigned char)mh.reserved[i]);
            sprintf(event_hex + 2 * i, "%02x", (unsigned char)eh.reserved[i]);
        }
        pid_t pid = fork();
        if (pid == 0) {
            /* a fresh process image: nothing inherited but the handles' text */
            execl("/proc/self/exe", argv[0], "--ipc-child", mem_hex, event_hex, (char *)NULL);
            _exit(127);
        }
        int status = -1;
        CHECK(pid > 0 && waitpid(pid, &status, 0) == pid);
        CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
        unsigned back[1250];
        OK(cuMemcpyDtoH(back, shared, sizeof back));
        CHECK(back[0] == 9 && back[1249] == 9);
        OK(cuEventDestroy(ie));
        OK(cuEventDestroy(plain));
        OK(cuMemFree(shared));
    }

    /* ---- fork: a child forked after cuInit is not initialized, as with NVIDIA's driver
     * (numba detects forks by it) */
    {
        pid_t pid = fork();
        if (pid == 0) {
            int cnt = 0;
            _exit(cuDeviceGetCount(&cnt) == CUDA_ERROR_NOT_INITIALIZED && cuInit(0) == CUDA_ERROR_NOT_INITIALIZED ? 0 : 1);
        }
        int status = -1;
        CHECK(pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0);
    }

    /* ---- graphs: stream capture records, instantiation replays */
    {
        CUstream cs;
        OK(cuStreamCreate(&cs, CU_STREAM_NON_BLOCKING));
        CUstreamCaptureStatus cst;
        OK(cuStreamIsCapturing(cs, &cst));
        CHECK(cst == CU_STREAM_CAPTURE_STATUS_NONE);
        EXPECT(cuStreamBeginCapture(NULL, CU_STREAM_CAPTURE_MODE_GLOBAL), CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED);
        CUgraph g = NULL;
        EXPECT(cuStreamEndCapture(cs, &g), CUDA_ERROR_ILLEGAL_STATE);
        float before[N], after[N];
        int hits = 0;
        OK(cuMemsetD32(dc, 0, N));
        OK(cuStreamBeginCapture(cs, CU_STREAM_CAPTURE_MODE_GLOBAL));
        EXPECT(cuStreamBeginCapture(cs, CU_STREAM_CAPTURE_MODE_GLOBAL), CUDA_ERROR_ILLEGAL_STATE);
        OK(cuStreamIsCapturing(cs, &cst));
        CHECK(cst == CU_STREAM_CAPTURE_STATUS_ACTIVE);
        unsigned gn = N;
        void *gargs[] = {&da, &db, &dc, &gn};
        OK(cuMemsetD32Async(dc, 0x3f800000, N, cs)); /* 1.0f, overwritten by the kernel */
        OK(cuLaunchKernel(vecadd, (N + 127) / 128, 1, 1, 128, 1, 1, 0, cs, gargs, NULL));
        OK(cuMemcpyDtoHAsync(after, dc, sizeof after, cs));
        OK(cuLaunchHostFunc(cs, host_fn, &hits));
        cuuint64_t cid = 0;
        const CUgraphNode *deps = NULL;
        size_t ndeps = 0;
        OK(cuStreamGetCaptureInfo(cs, &cst, &cid, &g, &deps, NULL, &ndeps));
        CHECK(cst == CU_STREAM_CAPTURE_STATUS_ACTIVE && cid != 0 && g != NULL && ndeps == 1 && deps && deps[0]);
        gn = 0; /* the launch's parameters were copied when it was captured */
        OK(cuStreamEndCapture(cs, &g));
        OK(cuStreamIsCapturing(cs, &cst));
        CHECK(cst == CU_STREAM_CAPTURE_STATUS_NONE);
        /* nothing ran during the capture */
        OK(cuMemcpyDtoH(before, dc, sizeof before));
        CHECK(before[0] == 0.0f && before[N - 1] == 0.0f && hits == 0);
        size_t nn_nodes = 0;
        OK(cuGraphGetNodes(g, NULL, &nn_nodes));
        CHECK(nn_nodes == 4);
        CUgraphNode nodes[4];
        CUgraphNodeType types[4];
        OK(cuGraphGetNodes(g, nodes, &nn_nodes));
        for (int i = 0; i < 4; i++)
            OK(cuGraphNodeGetType(nodes[i], &types[i]));
        CHECK(types[0] == CU_GRAPH_NODE_TYPE_MEMSET && types[1] == CU_GRAPH_NODE_TYPE_KERNEL &&
              types[2] == CU_GRAPH_NODE_TYPE_MEMCPY && types[3] == CU_GRAPH_NODE_TYPE_HOST);
        CUgraphExec ge;
        OK(cuGraphInstantiate(&ge, g, 0));
        memset(after, 0, sizeof after);
        OK(cuGraphLaunch(ge, cs));
        OK(cuStreamSynchronize(cs));
        CHECK(hits == 10 && after[0] == 3.0f && after[10] == 63.0f && after[N - 1] == 2.0f * 3 * (N - 1) + 3);
        OK(cuGraphLaunch(ge, cs));
        CHECK(hits == 20);
        /* synchronizing a capturing stream is refused and invalidates the capture */
        OK(cuStreamBeginCapture(cs, CU_STREAM_CAPTURE_MODE_RELAXED));
        EXPECT(cuStreamSynchronize(cs), CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED);
        OK(cuStreamIsCapturing(cs, &cst));
        CHECK(cst == CU_STREAM_CAPTURE_STATUS_INVALIDATED);
        CUgraph bad = (CUgraph)1;
        EXPECT(cuStreamEndCapture(cs, &bad), CUDA_ERROR_STREAM_CAPTURE_INVALIDATED);
        CHECK(bad == NULL);
        /* fork and join: a stream that waits for an event recorded in a capture joins it */
        CUstream side;
        CUevent fork_ev, join_ev;
        OK(cuStreamCreate(&side, CU_STREAM_NON_BLOCKING));
        OK(cuEventCreate(&fork_ev, CU_EVENT_DISABLE_TIMING));
        OK(cuEventCreate(&join_ev, CU_EVENT_DISABLE_TIMING));
        OK(cuStreamBeginCapture(cs, CU_STREAM_CAPTURE_MODE_GLOBAL));
        OK(cuEventRecord(fork_ev, cs));
        OK(cuStreamWaitEvent(side, fork_ev, 0));
        OK(cuStreamIsCapturing(side, &cst));
        CHECK(cst == CU_STREAM_CAPTURE_STATUS_ACTIVE);
        OK(cuLaunchHostFunc(side, host_fn, &hits));
        OK(cuEventRecord(join_ev, side));
        OK(cuStreamWaitEvent(cs, join_ev, 0));
        CUgraph g2;
        EXPECT(cuStreamEndCapture(side, &g2), CUDA_ERROR_STREAM_CAPTURE_UNMATCHED);
        OK(cuStreamEndCapture(cs, &g2));
        OK(cuStreamIsCapturing(side, &cst));
        CHECK(cst == CU_STREAM_CAPTURE_STATUS_NONE && hits == 20);
        /* after the capture, waiting for its event joins nothing: work runs at once */
        OK(cuStreamWaitEvent(side, fork_ev, 0));
        OK(cuLaunchHostFunc(side, host_fn, &hits));
        CHECK(hits == 30);
        hits = 20;
        CUgraphExec ge2;
        OK(cuGraphInstantiate(&ge2, g2, 0));
        OK(cuGraphLaunch(ge2, NULL));
        CHECK(hits == 30);
        OK(cuGraphExecDestroy(ge2));
        OK(cuGraphDestroy(g2));
        OK(cuStreamDestroy(side));
        OK(cuEventDestroy(fork_ev));
        OK(cuEventDestroy(join_ev));

        /* an explicit graph: memset -> kernel -> memcpy -> host, and an empty node */
        CUgraph eg;
        OK(cuGraphCreate(&eg, 0));
        CUgraphNode ms, kn, cp, hn, en;
        CUDA_MEMSET_NODE_PARAMS msp = {0};
        msp.dst = dc;
        msp.value = 0x40000000; /* 2.0f */
        msp.elementSize = 4;
        msp.width = N;
        msp.height = 1;
        OK(cuGraphAddMemsetNode(&ms, eg, NULL, 0, &msp, primary));
        msp.elementSize = 3;
        EXPECT(cuGraphAddMemsetNode(&en, eg, NULL, 0, &msp, primary), CUDA_ERROR_INVALID_VALUE);
        CUDA_KERNEL_NODE_PARAMS kp = {0};
        unsigned half = N / 2;
        void *kargs[] = {&da, &db, &dc, &half};
        kp.func = vecadd;
        kp.gridDimX = (N + 127) / 128;
        kp.gridDimY = kp.gridDimZ = 1;
        kp.blockDimX = 128;
        kp.blockDimY = kp.blockDimZ = 1;
        kp.kernelParams = kargs;
        OK(cuGraphAddKernelNode(&kn, eg, &ms, 1, &kp));
        CUgraphNode stranger = (CUgraphNode)&kp;
        EXPECT(cuGraphAddKernelNode(&en, eg, &stranger, 1, &kp), CUDA_ERROR_INVALID_VALUE);
        float eh_out[N];
        CUDA_MEMCPY3D c3 = {0};
        c3.srcMemoryType = CU_MEMORYTYPE_DEVICE;
        c3.srcDevice = dc;
        c3.dstMemoryType = CU_MEMORYTYPE_HOST;
        c3.dstHost = eh_out;
        c3.WidthInBytes = sizeof eh_out;
        c3.Height = c3.Depth = 1;
        OK(cuGraphAddMemcpyNode(&cp, eg, &kn, 1, &c3, primary));
        CUDA_HOST_NODE_PARAMS hp = {host_fn, &hits};
        OK(cuGraphAddHostNode(&hn, eg, &cp, 1, &hp));
        OK(cuGraphAddEmptyNode(&en, eg, &hn, 1));
        CUgraphNodeType et;
        OK(cuGraphNodeGetType(en, &et));
        CHECK(et == CU_GRAPH_NODE_TYPE_EMPTY);
        /* a user object lives as long as the graph and its instances hold references */
        CUuserObject uo;
        int weight = 5;
        destroyed = 0;
        OK(cuUserObjectCreate(&uo, &weight, user_destroy, 1, CU_USER_OBJECT_NO_DESTRUCTOR_SYNC));
        OK(cuGraphRetainUserObject(eg, uo, 1, CU_GRAPH_USER_OBJECT_MOVE));
        CUgraphExec ege;
        OK(cuGraphInstantiate(&ege, eg, 0));
        OK(cuGraphDestroy(eg));
        CHECK(destroyed == 0);
        memset(eh_out, 0, sizeof eh_out);
        OK(cuGraphLaunch(ege, cs));
        OK(cuStreamSynchronize(cs));
        CHECK(hits == 40 && eh_out[0] == 3.0f && eh_out[N / 2 - 1] == 2.0f * 3 * (N / 2 - 1) + 3 &&
              eh_out[N / 2] == 2.0f && eh_out[N - 1] == 2.0f);
        OK(cuGraphExecDestroy(ege));
        CHECK(destroyed == 5);
        EXPECT(cuGraphLaunch(ege, cs), CUDA_ERROR_INVALID_VALUE);
        OK(cuGraphExecDestroy(ge));
        OK(cuGraphDestroy(g));
        EXPECT(cuGraphDestroy(g), CUDA_ERROR_INVALID_VALUE);
        OK(cuStreamDestroy(cs));
    }

    /* ---- occupancy, profiler */
    int blocks = 0, minGrid = 0, bs = 0;
    OK(cuOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, vecadd, 256, 0));
    CHECK(blocks == 8);
    OK(cuOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, small, 128, 0));
    CHECK(blocks == 0);
    OK(cuOccupancyMaxPotentialBlockSize(&minGrid, &bs, vecadd, NULL, 0, 0));
    CHECK(bs >= 64 && bs <= 1024 && minGrid >= 1);
    OK(cuOccupancyMaxPotentialBlockSize(&minGrid, &bs, small, NULL, 0, 0));
    CHECK(bs == 64);
    OK(cuProfilerStart());
    OK(cuProfilerStop());

    /* ---- faults: sticky errors in a context of their own */
    CUcontext faulty;
    OK(cuCtxCreate(&faulty, NULL, 0, 0));
    CUmodule fm;
    CUfunction ff, ft;
    OK(cuModuleLoadData(&fm, PTX));
    OK(cuModuleGetFunction(&ff, fm, "fault"));
    OK(cuModuleGetFunction(&ft, fm, "trapper"));
    CUdeviceptr nullp = 0;
    void *fargs[] = {&nullp};
    OK(cuLaunchKernel(ff, 1, 1, 1, 1, 1, 1, 0, 0, fargs, NULL));
    EXPECT(cuCtxSynchronize(), CUDA_ERROR_ILLEGAL_ADDRESS);
    EXPECT(cuMemAlloc(&nullp, 16), CUDA_ERROR_ILLEGAL_ADDRESS);
    OK(cuCtxDestroy(faulty));
    OK(cuCtxCreate(&faulty, NULL, 0, 0));
    OK(cuModuleLoadData(&fm, PTX));
    OK(cuModuleGetFunction(&ft, fm, "trapper"));
    OK(cuLaunchKernel(ft, 2, 1, 1, 32, 1, 1, 0, 0, NULL, NULL));
    EXPECT(cuStreamSynchronize(NULL), CUDA_ERROR_LAUNCH_FAILED);
    OK(cuCtxDestroy(faulty));
    /* the primary context is unaffected */
    OK(cuCtxGetCurrent(&cur));
    CHECK(cur == primary);
    OK(cuCtxSynchronize());

    /* ---- cleanup and double frees */
    OK(cuModuleUnload(mod));
    EXPECT(cuModuleGetFunction(&vecadd, mod, "vecadd"), CUDA_ERROR_INVALID_HANDLE);
    OK(cuLibraryUnload(lib));
    OK(cuMemFree(da));
    EXPECT(cuMemFree(da), CUDA_ERROR_INVALID_VALUE);
    EXPECT(cuMemFree(db + 4), CUDA_ERROR_INVALID_VALUE);
    OK(cuMemFreeHost(hp));
    OK(cuMemHostUnregister(reg));
    EXPECT(cuMemHostUnregister(reg), CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED);
    free(reg);
    OK(cuDevicePrimaryCtxRelease(0));

    if (failures) {
        fprintf(stderr, "FAIL: %d of %d checks failed\n", failures, checks);
        return 1;
    }
    printf("PASS: %d checks\n", checks);
    return 0;
}
