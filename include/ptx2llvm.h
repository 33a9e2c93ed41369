/* ptx2llvm.h: the C API of ptx2llvm's cpu target.
 *
 * Compile PTX source for the host CPU, allocate device buffers (host memory) and launch
 * kernels with CUDA semantics: a grid of CTAs, each CUDA thread a coroutine, barriers, warp
 * operations with member masks, shared memory per CTA (see runtime/README.md).
 *
 *     char *err = NULL;
 *     ptx2llvm_module *m = ptx2llvm_module_from_ptx(src, strlen(src), &err);
 *     if (!m) { fprintf(stderr, "%s\n", err); ptx2llvm_string_free(err); return 1; }
 *     ptx2llvm_buffer *x = ptx2llvm_buffer_alloc(n * sizeof(float));
 *     memcpy(ptx2llvm_buffer_ptr(x), host_x, n * sizeof(float));
 *     ptx2llvm_arg args[] = { ptx2llvm_arg_buffer(x), ptx2llvm_arg_f32(2.0f), ptx2llvm_arg_u32(n) };
 *     ptx2llvm_dim3 grid = {(n + 255) / 256, 1, 1}, block = {256, 1, 1};
 *     if (ptx2llvm_launch(m, "kernel", grid, block, 0, args, 3, &err) != 0) { ... }
 *
 * Link with -lptx2llvm (target/<profile>/libptx2llvm.so or libptx2llvm.a; the static library
 * also needs -lLLVM -lpthread -ldl -lm).
 *
 * Conventions:
 * - Functions that can fail return NULL or a non-zero int and, when `err` is not NULL, store a
 *   message in *err that the caller frees with ptx2llvm_string_free (NULL on success).
 *   Messages say what was expected ("kernel `k` takes 3 parameter(s) (.u64, .f32, .u32), but 2
 *   argument(s) were given", "kernel k failed in block (2, 0, 0), thread (5, 0, 0): trap
 *   instruction executed", "not supported on the cpu target: `wmma.load...`").
 * - No function unwinds into C: an internal panic becomes an error ("internal error: ...").
 * - Handles are opaque. A module may be shared between host threads, but launches of one
 *   module are serialized by the library. Buffers are plain memory: the caller must not free a
 *   buffer while a launch that uses it runs.
 */
#ifndef PTX2LLVM_H
#define PTX2LLVM_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define PTX2LLVM_API_VERSION 1

/* The library version, e.g. "0.1.0" (static storage; do not free). */
const char *ptx2llvm_version(void);

/* Frees a string the library returned (error messages). NULL is allowed. */
void ptx2llvm_string_free(char *s);

#ifndef PTX2LLVM_DIM3_DEFINED
#define PTX2LLVM_DIM3_DEFINED
/* A grid or block size; every component at least 1. */
typedef struct ptx2llvm_dim3 {
    uint32_t x, y, z;
} ptx2llvm_dim3;
#endif

/* ---- Modules ------------------------------------------------------------------------------ */

typedef struct ptx2llvm_module ptx2llvm_module;

/* Compile options. Initialize with ptx2llvm_options_init, then change fields. */
typedef struct ptx2llvm_options {
    uint32_t struct_size; /* sizeof(ptx2llvm_options); set by ptx2llvm_options_init */
    uint32_t opt_level;   /* LLVM optimization level 0..3; default 2 */
    uint32_t workers;     /* worker threads per launch (CTAs run in parallel); 0 = one per core */
    uint32_t debug_info;  /* 1: full DWARF (as -g: a variable per PTX register, and without .loc
                           * in the source, its own lines); 0 (default): line tables when the
                           * PTX has .loc */
    size_t stack_size;    /* bytes of coroutine stack per CUDA thread; 0 = default (256 KiB) */
    ptx2llvm_dim3 block;  /* compile the kernels for this block shape (%ntid a constant: often
                           * much faster); launches with another block then fail. {0,0,0}: any */
    uint32_t reserved2;   /* zero */
} ptx2llvm_options;

void ptx2llvm_options_init(ptx2llvm_options *opts);

/* Parses, checks and compiles `len` bytes of PTX text (UTF-8; need not be NUL-terminated) at
 * -O2. Returns NULL on error: syntax and check errors are rendered as "<ptx>:LINE:COL: error:
 * ..." with the source line; instructions the cpu target cannot run are named. */
ptx2llvm_module *ptx2llvm_module_from_ptx(const char *src, size_t len, char **err);

/* The same with options (NULL: defaults). */
ptx2llvm_module *ptx2llvm_module_from_ptx_opts(const char *src, size_t len,
                                               const ptx2llvm_options *opts, char **err);

/* Frees a module. NULL is allowed. */
void ptx2llvm_module_free(ptx2llvm_module *m);

/* Kernels (.entry functions) of the module, in declaration order. The name is owned by the
 * module; NULL when index is out of range. */
size_t ptx2llvm_module_kernel_count(const ptx2llvm_module *m);
const char *ptx2llvm_module_kernel_name(const ptx2llvm_module *m, size_t index);

/* Number of parameters of `kernel` and the size in bytes of its CUDA parameter buffer;
 * returns -1 (and sets *err) when there is no such kernel. Either out pointer may be NULL. */
int ptx2llvm_module_kernel_params(const ptx2llvm_module *m, const char *kernel, size_t *count,
                                  size_t *buffer_bytes, char **err);

/* Address and size of the module-scope variable `name` (a .global or .const variable, e.g. a
 * __constant__ or __device__ array), as cuModuleGetGlobal gives them: write it before a launch
 * (cudaMemcpyToSymbol), read it after. Returns -1 (and sets *err) when there is none. */
int ptx2llvm_module_global(const ptx2llvm_module *m, const char *name, void **ptr, size_t *size,
                           char **err);

/* Bytes of static .shared memory per CTA the module's kernels use. */
uint32_t ptx2llvm_module_static_shared_bytes(const ptx2llvm_module *m);

/* ---- Buffers ------------------------------------------------------------------------------ */

typedef struct ptx2llvm_buffer ptx2llvm_buffer;

/* `bytes` zero-filled bytes aligned to 256 (as cudaMalloc gives), ending (up to 255 bytes of
 * alignment slack) at an inaccessible guard page, so that a kernel running past the end fails
 * its launch with an invalid-access error. NULL if out of memory. */
ptx2llvm_buffer *ptx2llvm_buffer_alloc(size_t bytes);
/* Frees a buffer. NULL is allowed. */
void ptx2llvm_buffer_free(ptx2llvm_buffer *b);
/* The buffer's memory: what kernels see as its device address. */
void *ptx2llvm_buffer_ptr(ptx2llvm_buffer *b);
size_t ptx2llvm_buffer_size(const ptx2llvm_buffer *b);

/* ---- Launches ----------------------------------------------------------------------------- */

typedef enum ptx2llvm_arg_kind {
    PTX2LLVM_ARG_U8 = 1,
    PTX2LLVM_ARG_U16 = 2,
    PTX2LLVM_ARG_U32 = 3,
    PTX2LLVM_ARG_U64 = 4,
    PTX2LLVM_ARG_S8 = 5,
    PTX2LLVM_ARG_S16 = 6,
    PTX2LLVM_ARG_S32 = 7,
    PTX2LLVM_ARG_S64 = 8,
    PTX2LLVM_ARG_F16 = 9, /* value.f16_bits: IEEE half bits */
    PTX2LLVM_ARG_F32 = 10,
    PTX2LLVM_ARG_F64 = 11,
    PTX2LLVM_ARG_BUFFER = 12,  /* value.buffer: the kernel gets its address (a .u64 pointer) */
    PTX2LLVM_ARG_POINTER = 13, /* value.pointer: any address the caller keeps valid */
    PTX2LLVM_ARG_BYTES = 14    /* value.bytes: a by-value aggregate (.b8 array, struct) */
} ptx2llvm_arg_kind;

/* One kernel argument. The size of a scalar must equal the parameter's size (a .u32 parameter
 * takes U32 or S32 or F32); BUFFER and POINTER fill 8-byte (.u64/.b64/.s64) parameters; BYTES
 * must have exactly the parameter's size. */
typedef struct ptx2llvm_arg {
    uint32_t kind; /* ptx2llvm_arg_kind */
    union {
        uint8_t u8;
        uint16_t u16;
        uint32_t u32;
        uint64_t u64;
        int8_t s8;
        int16_t s16;
        int32_t s32;
        int64_t s64;
        uint16_t f16_bits;
        float f32;
        double f64;
        ptx2llvm_buffer *buffer;
        const void *pointer;
        struct {
            const void *data;
            size_t size;
        } bytes;
    } value;
} ptx2llvm_arg;

/* Launches `kernel` over grid x block with `shared_bytes` of dynamic shared memory (the
 * `.extern .shared` arrays) and waits for it. Returns 0, or -1 with *err set: unknown kernel,
 * wrong argument count or sizes, invalid configuration (at most 1024 threads per block, shared
 * memory at most 227 KiB), or a failure while running (trap, failed assertion, barrier
 * deadlock, misused warp operation; the message names the kernel, block and thread). */
int ptx2llvm_launch(const ptx2llvm_module *m, const char *kernel, ptx2llvm_dim3 grid,
                    ptx2llvm_dim3 block, uint32_t shared_bytes, const ptx2llvm_arg *args,
                    size_t nargs, char **err);

/* Argument constructors. */
static inline ptx2llvm_arg ptx2llvm_arg_u32(uint32_t v) {
    ptx2llvm_arg a; a.kind = PTX2LLVM_ARG_U32; a.value.u64 = 0; a.value.u32 = v; return a;
}
static inline ptx2llvm_arg ptx2llvm_arg_s32(int32_t v) {
    ptx2llvm_arg a; a.kind = PTX2LLVM_ARG_S32; a.value.u64 = 0; a.value.s32 = v; return a;
}
static inline ptx2llvm_arg ptx2llvm_arg_u64(uint64_t v) {
    ptx2llvm_arg a; a.kind = PTX2LLVM_ARG_U64; a.value.u64 = v; return a;
}
static inline ptx2llvm_arg ptx2llvm_arg_s64(int64_t v) {
    ptx2llvm_arg a; a.kind = PTX2LLVM_ARG_S64; a.value.s64 = v; return a;
}
static inline ptx2llvm_arg ptx2llvm_arg_f32(float v) {
    ptx2llvm_arg a; a.kind = PTX2LLVM_ARG_F32; a.value.u64 = 0; a.value.f32 = v; return a;
}
static inline ptx2llvm_arg ptx2llvm_arg_f64(double v) {
    ptx2llvm_arg a; a.kind = PTX2LLVM_ARG_F64; a.value.f64 = v; return a;
}
static inline ptx2llvm_arg ptx2llvm_arg_buffer(ptx2llvm_buffer *b) {
    ptx2llvm_arg a; a.kind = PTX2LLVM_ARG_BUFFER; a.value.buffer = b; return a;
}
static inline ptx2llvm_arg ptx2llvm_arg_pointer(const void *p) {
    ptx2llvm_arg a; a.kind = PTX2LLVM_ARG_POINTER; a.value.pointer = p; return a;
}
static inline ptx2llvm_arg ptx2llvm_arg_bytes(const void *data, size_t size) {
    ptx2llvm_arg a; a.kind = PTX2LLVM_ARG_BYTES; a.value.bytes.data = data; a.value.bytes.size = size;
    return a;
}

#ifdef __cplusplus
}
#endif
#endif
