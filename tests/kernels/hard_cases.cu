// hard_cases.cu: kernels for the cpu target's hard cases (GUIDE §4), checked by
// tests/cpu_hard.rs against references written there. Compiled to hard_cases.ptx with NVRTC:
//   .venv/bin/python /work/shared/corpus/tools/gen_ptx.py tests/kernels/hard_cases.cu 80 \
//       -o tests/kernels/hard_cases.ptx
// (tests/kernels/README.md); the tests read the checked-in PTX and need no NVRTC.

// 1. __syncthreads in a loop: Hillis-Steele inclusive scan over a double buffer in dynamic
// shared memory (2 * blockDim ints); `rounds` extra barrier-only iterations whose count
// depends on the block.
extern "C" __global__ void scan_loop(const int* in, int* out, int n, int rounds) {
  extern __shared__ int buf[];
  int t = threadIdx.x, nb = blockDim.x;
  int i = blockIdx.x * nb + t;
  int pout = 0;
  buf[t] = i < n ? in[i] : 0;
  __syncthreads();
  for (int off = 1; off < nb; off <<= 1) {
    pout = 1 - pout;
    int pin = 1 - pout;
    int v = buf[pin * nb + t];
    if (t >= off) v += buf[pin * nb + t - off];
    buf[pout * nb + t] = v;
    __syncthreads();
  }
  int acc = buf[pout * nb + t];
  for (int r = 0; r < rounds + (int)blockIdx.x; r++) {
    // every thread reads its right neighbour's value of the previous round
    buf[t] = acc;
    __syncthreads();
    int right = buf[(t + 1) % nb];
    __syncthreads();
    acc += right & 1;
  }
  if (i < n) out[i] = acc;
}

// 2. Threads that exit before a barrier: the barriers wait only for the threads still alive.
extern "C" __global__ void exit_before_barrier(int* out, int live) {
  __shared__ int s[1024];
  int t = threadIdx.x;
  if (t >= live) return;
  s[t] = t * 2;
  __syncthreads();
  int v = s[live - 1 - t];
  __syncthreads();
  if (t % 3 == 0) {
    out[t] = v;
    return;
  }
  s[t] = v + 1;
  __syncthreads();
  out[t] = s[t] + s[(t + 1) % live];
}

// 3. Shuffles with partial member masks inside divergent branches of one warp.
extern "C" __global__ void partial_shuffle(const int* in, int* out, unsigned* ballots) {
  int g = blockIdx.x * blockDim.x + threadIdx.x;
  int lane = threadIdx.x & 31;
  int v = in[g];
  int r;
  if (lane < 16) {
    for (int o = 8; o > 0; o >>= 1) v += __shfl_xor_sync(0x0000ffffu, v, o);
    r = v;
    unsigned b = __ballot_sync(0x0000ffffu, v > 0);
    if (lane == 0) ballots[g / 32 * 2] = b;
  } else if (lane < 24) {
    r = __shfl_sync(0x00ff0000u, v, 20);
  } else {
    r = __shfl_down_sync(0xff000000u, v, 2);
    unsigned b = __ballot_sync(0xff000000u, (v & 1) != 0);
    if (lane == 24) ballots[g / 32 * 2 + 1] = b;
  }
  out[g] = r;
}

// 4. Legacy warp-synchronous reduction (no __syncwarp; pre-Volta style) and the same with
// __syncwarp between the reads and the writes of every step (what CUDA requires since Volta).
extern "C" __global__ void warp_reduce_legacy(const int* in, int* out) {
  __shared__ volatile int s[64];
  int t = threadIdx.x;  // one warp
  s[t] = in[t];
  s[t + 32] = in[t + 32];
  s[t] += s[t + 32];
  s[t] += s[t + 16];
  s[t] += s[t + 8];
  s[t] += s[t + 4];
  s[t] += s[t + 2];
  s[t] += s[t + 1];
  if (t == 0) out[0] = s[0];
}

extern "C" __global__ void warp_reduce_syncwarp(const int* in, int* out) {
  __shared__ volatile int s[64];
  int t = threadIdx.x;  // one warp
  s[t] = in[t];
  s[t + 32] = in[t + 32];
  __syncwarp();
  for (int off = 32; off > 0; off >>= 1) {
    int v = s[t] + s[t + off];
    __syncwarp();
    s[t] = v;
    __syncwarp();
  }
  if (t == 0) out[0] = s[0];
}

// 5. __threadfence and a last-block-done counter (CUDA programming guide, "Memory Fence
// Functions"): every block stores its partial sum; the last block to finish adds them up.
__device__ unsigned int blocks_done = 0;
extern "C" __global__ void last_block_sum(const int* in, volatile int* partial, int* total, int n) {
  __shared__ bool am_last;
  __shared__ int s[256];
  int t = threadIdx.x;
  int i = blockIdx.x * blockDim.x + t;
  s[t] = i < n ? in[i] : 0;
  __syncthreads();
  for (int st = blockDim.x / 2; st > 0; st >>= 1) {
    if (t < st) s[t] += s[t + st];
    __syncthreads();
  }
  if (t == 0) {
    partial[blockIdx.x] = s[0];
    __threadfence();
    unsigned v = atomicInc(&blocks_done, gridDim.x);
    am_last = (v == gridDim.x - 1);
  }
  __syncthreads();
  if (am_last && t == 0) {
    int sum = 0;
    for (unsigned b = 0; b < gridDim.x; b++) sum += partial[b];
    *total = sum;
    blocks_done = 0;
  }
}

// 6. Contended atomics: every thread applies every operation to the same few addresses.
extern "C" __global__ void contended(unsigned* u, int* s, unsigned long long* u64, long long* s64,
                                     float* f, double* d, unsigned* block_counts, int iters) {
  __shared__ unsigned sh[2];
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (threadIdx.x == 0) { sh[0] = 0; sh[1] = 0xffffffffu; }
  __syncthreads();
  for (int k = 0; k < iters; k++) {
    atomicAdd(&u[0], 1u);
    atomicSub(&u[1], 2u);
    atomicMin(&s[0], i - 500);
    atomicMax(&s[1], i);
    atomicMin(&u[2], (unsigned)i + 7u);
    atomicMax(&u[3], (unsigned)i * 3u);
    atomicAnd(&u[4], ~(1u << (i % 29)));
    atomicOr(&u[5], 1u << (i % 23));
    atomicXor(&u[6], (unsigned)i);
    atomicInc(&u[7], 99u);
    atomicDec(&u[8], 77u);
    unsigned old = u[9], assumed;
    do {
      assumed = old;
      old = atomicCAS(&u[9], assumed, assumed + 3u);
    } while (old != assumed);
    unsigned prev = atomicExch(&u[10], (unsigned)i + 1u);
    atomicAdd(&u[11], prev);
    atomicAdd(&f[0], 0.5f);
    atomicAdd(&d[0], 0.25);
    atomicAdd(&u64[0], 1ull << 33);
    atomicMax(&u64[1], (unsigned long long)i << 40);
    atomicOr(&u64[2], 1ull << (i % 64));
    atomicXor(&u64[3], (unsigned long long)i << 20);
    unsigned long long o2 = u64[4], a2;
    do {
      a2 = o2;
      o2 = atomicCAS(&u64[4], a2, a2 + (unsigned long long)i);
    } while (o2 != a2);
    atomicMin(&s64[0], -(long long)i * 4294967296LL);
    atomicMax(&s64[1], (long long)i * 4294967296LL);
    atomicAdd(&sh[0], 1u);
    atomicMin_block(&sh[1], (unsigned)threadIdx.x);
    atomicAdd_system(&u[12], 1u);
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    block_counts[blockIdx.x * 2] = sh[0];
    block_counts[blockIdx.x * 2 + 1] = sh[1];
  }
}

// 7. 3-D grids and blocks: every component of %tid, %ctaid, %ntid, %nctaid, plus %laneid.
extern "C" __global__ void dims3(unsigned* out) {
  unsigned bid = blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z);
  unsigned tid = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
  unsigned g = bid * (blockDim.x * blockDim.y * blockDim.z) + tid;
  unsigned* o = out + g * 13;
  unsigned lane;
  asm("mov.u32 %0, %%laneid;" : "=r"(lane));
  o[0] = threadIdx.x; o[1] = threadIdx.y; o[2] = threadIdx.z;
  o[3] = blockIdx.x;  o[4] = blockIdx.y;  o[5] = blockIdx.z;
  o[6] = blockDim.x;  o[7] = blockDim.y;  o[8] = blockDim.z;
  o[9] = gridDim.x;   o[10] = gridDim.y;  o[11] = gridDim.z;
  o[12] = lane;
}

// 8. Dynamic shared memory after static shared memory; the sizes the hardware reports.
extern "C" __global__ void dyn_and_static(int* out, int n) {
  __shared__ int stat[10];
  extern __shared__ int dyn[];
  int t = threadIdx.x;
  if (t < 10) stat[t] = 100 + t;
  for (int k = t; k < n; k += blockDim.x) dyn[k] = k * 3;
  __syncthreads();
  for (int k = t; k < n; k += blockDim.x) out[k] = dyn[n - 1 - k] + stat[k % 10];
  if (t == 0) {
    unsigned dsz, tsz;
    asm("mov.u32 %0, %%dynamic_smem_size;" : "=r"(dsz));
    asm("mov.u32 %0, %%total_smem_size;" : "=r"(tsz));
    out[n] = (int)((char*)dyn - (char*)stat);
    out[n + 1] = (int)dsz;
    out[n + 2] = (int)tsz;
  }
}

// 9. printf: each thread prints several lines, with barriers between them.
extern "C" __global__ void print_steps(int steps) {
  for (int k = 0; k < steps; k++) {
    printf("block %d thread %d step %d of %d\n", blockIdx.x, threadIdx.x, k, steps);
    __syncthreads();
  }
}

// 10. trap and assert.
extern "C" __global__ void check_values(const int* in, int* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  int v = in[i];
  assert(v != 13);
  if (v == 99) __trap();
  out[i] = v * 2;
}

// 11. A barrier deadlock (warp 0 waits at barrier 0, warp 1 at barrier 1), and the named
// barrier producer/consumer pattern that is not one (bar.arrive + bar.sync with a count).
extern "C" __global__ void deadlock(int* out) {
  if (threadIdx.x < 32) {
    __syncthreads();
  } else {
    asm volatile("bar.sync 1;");
  }
  out[threadIdx.x] = 1;
}

extern "C" __global__ void producer_consumer(const int* in, int* out, int rounds) {
  __shared__ int box[32];
  int t = threadIdx.x;  // 64 threads: warp 0 produces, warp 1 consumes
  for (int r = 0; r < rounds; r++) {
    if (t < 32) {
      if (r > 0) asm volatile("bar.sync 2, 64;");   // wait until the consumer took the box
      box[t] = in[r * 32 + t] * 10 + r;
      asm volatile("bar.arrive 1, 64;");            // box full
    } else {
      asm volatile("bar.sync 1, 64;");              // wait for a full box
      out[r * 32 + t - 32] = box[(t - 32 + 1) % 32];
      asm volatile("bar.arrive 2, 64;");            // box empty
    }
  }
}

// 12. Inter-block communication: block 1 spins on a flag that block 0 sets. Works when the
// blocks run concurrently (as many workers as blocks).
extern "C" __global__ void spin_flag(volatile int* flag, int* out) {
  if (threadIdx.x != 0) return;
  if (blockIdx.x == 0) {
    out[0] = 42;
    __threadfence();
    *flag = 1;
  } else {
    while (*flag == 0) { __nanosleep(1000); }
    __threadfence();
    out[1] = out[0] + 1;
  }
}

// 13. Invalid memory accesses.
extern "C" __global__ void store_through(int* p, int v) {
  if (threadIdx.x == 3 && blockIdx.x == 1) *p = v;
}
