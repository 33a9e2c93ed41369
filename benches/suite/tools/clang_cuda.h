// clang_cuda.h: what the suite's CUDA sources need from the CUDA headers, for compiling them
// to PTX with clang alone (`scripts/bench.sh --ptx clang`: clang -x cuda -nocudainc
// -nocudalib, libdevice linked as bitcode). Each name maps onto a clang NVPTX builtin or a
// libdevice function, which is what CUDA's own headers do; nothing here is a semantics of its
// own. Why: the checked-in PTX comes from NVRTC only, and a kernel the engine runs fast in
// NVCC's shape may not be in clang's (other loop forms, 16-bit quotients, `.b32` registers
// for floats) — the suite compiled by a second compiler is the check of that.
#include <__clang_cuda_builtin_vars.h>
#define __global__ __attribute__((global))
#define __device__ __attribute__((device))
#define __shared__ __attribute__((shared))
#define __forceinline__ __attribute__((always_inline)) inline
#define __restrict__ __restrict
typedef unsigned long size_t;
struct __attribute__((aligned(16))) float4 {
    float x, y, z, w;
};
static __device__ inline float4 make_float4(float x, float y, float z, float w) {
    float4 r = {x, y, z, w};
    return r;
}
extern "C" __device__ float __nv_expf(float);
extern "C" __device__ float __nv_fast_expf(float);
extern "C" __device__ float __nv_logf(float);
extern "C" __device__ float __nv_sqrtf(float);
extern "C" __device__ float __nv_rsqrtf(float);
extern "C" __device__ float __nv_fabsf(float);
extern "C" __device__ float __nv_fmaxf(float, float);
extern "C" __device__ float __nv_fminf(float, float);
extern "C" __device__ float __nv_int_as_float(int);
extern "C" __device__ int __nv_float_as_int(float);
#define expf __nv_expf
#define __expf __nv_fast_expf
#define logf __nv_logf
#define sqrtf __nv_sqrtf
#define rsqrtf __nv_rsqrtf
#define fabsf __nv_fabsf
#define fmaxf __nv_fmaxf
#define fminf __nv_fminf
#define __int_as_float __nv_int_as_float
#define __float_as_int __nv_float_as_int
// The shuffles of one type: `c` is the clamp operand of PTX's `shfl.sync` (0x1f, or 0 for up).
#define SHUFFLES(T, tag)                                                                      \
    static __device__ inline T __shfl_xor_sync(unsigned m, T v, int d) {                      \
        return __nvvm_shfl_sync_bfly_##tag(m, v, d, 0x1f);                                    \
    }                                                                                         \
    static __device__ inline T __shfl_down_sync(unsigned m, T v, int d) {                     \
        return __nvvm_shfl_sync_down_##tag(m, v, d, 0x1f);                                    \
    }                                                                                         \
    static __device__ inline T __shfl_up_sync(unsigned m, T v, int d) {                       \
        return __nvvm_shfl_sync_up_##tag(m, v, d, 0);                                         \
    }
SHUFFLES(float, f32)
SHUFFLES(int, i32)
static __device__ inline float atomicAdd(float *p, float v) { return __nvvm_atom_add_gen_f(p, v); }
static __device__ inline int atomicAdd(int *p, int v) { return __nvvm_atom_add_gen_i(p, v); }
static __device__ inline unsigned atomicAdd(unsigned *p, unsigned v) {
    return (unsigned)__nvvm_atom_add_gen_i((int *)p, (int)v);
}
