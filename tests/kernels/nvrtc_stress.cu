// Kernels written to exercise the cpu target's thread-loop compiler with shapes the benchmarks
// lack (tests/cpu_stress.rs): bitonic sort, scans, a padded-tile transpose, a warp-per-row
// layernorm whose stride loops only some lanes enter, masked counting with ballots, segment
// shuffles, barrier reductions, `__noinline__` helpers with barriers and shuffles called in a loop,
// 3-D blocks, persistent block-uniform loops with barriers, `__any_sync` convergence loops,
// 64-bit shuffles and atomics, a shared-flag search that breaks, a jump table before a barrier.
// bitonic sort of 1024 ints per block (blockDim = 512, two elements per thread)
extern "C" __global__ void bitonic(int *data) {
    __shared__ int s[1024];
    int t = threadIdx.x, base = blockIdx.x * 1024;
    s[t] = data[base + t];
    s[t + 512] = data[base + t + 512];
    __syncthreads();
    for (int k = 2; k <= 1024; k <<= 1) {
        for (int j = k >> 1; j > 0; j >>= 1) {
            for (int i = t; i < 1024; i += 512) {
                int ixj = i ^ j;
                if (ixj > i) {
                    bool up = (i & k) == 0;
                    int a = s[i], b = s[ixj];
                    if ((a > b) == up) { s[i] = b; s[ixj] = a; }
                }
            }
            __syncthreads();
        }
    }
    data[base + t] = s[t];
    data[base + t + 512] = s[t + 512];
}
// Blelloch exclusive scan of 512 ints per block (256 threads), then warp-shuffle inclusive scan
extern "C" __global__ void blelloch(const int *in, int *out) {
    __shared__ int s[512];
    int t = threadIdx.x, base = blockIdx.x * 512;
    s[2 * t] = in[base + 2 * t];
    s[2 * t + 1] = in[base + 2 * t + 1];
    int off = 1;
    for (int d = 256; d > 0; d >>= 1) {
        __syncthreads();
        if (t < d) {
            int ai = off * (2 * t + 1) - 1, bi = off * (2 * t + 2) - 1;
            s[bi] += s[ai];
        }
        off *= 2;
    }
    if (t == 0) s[511] = 0;
    for (int d = 1; d < 512; d *= 2) {
        off >>= 1;
        __syncthreads();
        if (t < d) {
            int ai = off * (2 * t + 1) - 1, bi = off * (2 * t + 2) - 1;
            int x = s[ai];
            s[ai] = s[bi];
            s[bi] += x;
        }
    }
    __syncthreads();
    out[base + 2 * t] = s[2 * t];
    out[base + 2 * t + 1] = s[2 * t + 1];
}
extern "C" __global__ void warpscan(const int *in, int *out, int n) {
    __shared__ int warps[32];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int lane = threadIdx.x & 31, w = threadIdx.x >> 5;
    int v = i < n ? in[i] : 0;
    for (int o = 1; o < 32; o <<= 1) {
        int y = __shfl_up_sync(0xffffffffu, v, o);
        if (lane >= o) v += y;
    }
    if (lane == 31) warps[w] = v;
    __syncthreads();
    if (w == 0) {
        int x = lane < (blockDim.x >> 5) ? warps[lane] : 0;
        for (int o = 1; o < 32; o <<= 1) {
            int y = __shfl_up_sync(0xffffffffu, x, o);
            if (lane >= o) x += y;
        }
        warps[lane] = x;
    }
    __syncthreads();
    if (w > 0) v += warps[w - 1];
    if (i < n) out[i] = v;
}
// tiled transpose with a padded shared tile, 32x8 blocks
#define TILE 32
extern "C" __global__ void transpose(float *out, const float *in, int w, int h) {
    __shared__ float tile[TILE][TILE + 1];
    int x = blockIdx.x * TILE + threadIdx.x, y = blockIdx.y * TILE + threadIdx.y;
    for (int j = 0; j < TILE; j += 8)
        if (x < w && y + j < h) tile[threadIdx.y + j][threadIdx.x] = in[(y + j) * w + x];
    __syncthreads();
    x = blockIdx.y * TILE + threadIdx.x;
    y = blockIdx.x * TILE + threadIdx.y;
    for (int j = 0; j < TILE; j += 8)
        if (x < h && y + j < w) out[(y + j) * h + x] = tile[threadIdx.x][threadIdx.y + j];
}
// one warp per row: mean/var by xor shuffles, early exit for rows past n, a loop with break
extern "C" __global__ void layernorm(const float *x, float *y, int rows, int cols, float eps) {
    int row = blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32;
    int lane = threadIdx.x & 31;
    if (row >= rows) return;
    const float *r = x + (size_t)row * cols;
    float s = 0.f, ss = 0.f;
    for (int c = lane; c < cols; c += 32) { float v = r[c]; s += v; ss += v * v; }
    for (int o = 16; o > 0; o >>= 1) {
        s += __shfl_xor_sync(0xffffffffu, s, o);
        ss += __shfl_xor_sync(0xffffffffu, ss, o);
    }
    float mean = s / cols, var = ss / cols - mean * mean;
    float inv = rsqrtf(var + eps);
    for (int c = lane; c < cols; c += 32) {
        if (c >= cols) break;
        y[(size_t)row * cols + c] = (r[c] - mean) * inv;
    }
}
extern "C" __global__ void countif(const int *in, int *count, int *firstneg, int n) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        int v = in[i];
        if (v < 0) { atomicMin(firstneg, i); continue; }
        if (v % 7 == 0) atomicAdd(count, 1);
        unsigned b = __ballot_sync(__activemask(), v % 3 == 0);
        if ((threadIdx.x & 31) == __ffs(__activemask()) - 1) atomicAdd(count + 1, __popc(b));
    }
}
// __syncthreads_count / _or / _and
extern "C" __global__ void barred(const int *in, int *out) {
    int t = threadIdx.x, v = in[blockIdx.x * blockDim.x + t];
    int c = __syncthreads_count(v > 50);
    int o = __syncthreads_or(v == 77);
    int a = __syncthreads_and(v >= 0);
    if (t == 0) { out[blockIdx.x * 3] = c; out[blockIdx.x * 3 + 1] = o; out[blockIdx.x * 3 + 2] = a; }
}
// 16-wide segments: shfl_down with width 16, shfl with width 8
extern "C" __global__ void tiles(const int *in, int *out) {
    int v = in[blockIdx.x * blockDim.x + threadIdx.x];
    for (int o = 8; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o, 16);
    int w8 = __shfl_sync(0xffffffffu, v, 3, 8);
    if ((threadIdx.x & 15) == 0) out[(blockIdx.x * blockDim.x + threadIdx.x) / 16] = v;
    out[1024 + blockIdx.x * blockDim.x + threadIdx.x] = w8;
}
// device functions with barriers and shuffles (noinline), called from loops
__device__ __noinline__ int block_sum(int v, int *s) {
    s[threadIdx.x] = v;
    __syncthreads();
    for (int k = blockDim.x / 2; k > 0; k >>= 1) {
        if (threadIdx.x < k) s[threadIdx.x] += s[threadIdx.x + k];
        __syncthreads();
    }
    int r = s[0];
    __syncthreads();
    return r;
}
__device__ __noinline__ int warp_max(int v) {
    for (int o = 16; o > 0; o >>= 1) v = max(v, __shfl_xor_sync(0xffffffffu, v, o));
    return v;
}
extern "C" __global__ void calls(const int *in, int *out, int reps) {
    __shared__ int s[128];
    int v = in[blockIdx.x * 128 + threadIdx.x];
    int acc = 0;
    for (int r = 0; r < reps; r++) {
        acc += block_sum(v + r, s);
        acc += warp_max(v * (r + 1));
    }
    out[blockIdx.x * 128 + threadIdx.x] = acc;
}

// 3-D blocks (8,8,4): per-z-slice tile sums
extern "C" __global__ void cube(const float *in, float *out) {
    __shared__ float s[4][8][8];
    int x = threadIdx.x, y = threadIdx.y, z = threadIdx.z;
    int b = blockIdx.x;
    s[z][y][x] = in[((b * 4 + z) * 8 + y) * 8 + x];
    __syncthreads();
    if (x == 0) { float a = 0; for (int k = 0; k < 8; k++) a += s[z][y][k]; s[z][y][0] = a; }
    __syncthreads();
    if (x == 0 && y == 0) { float a = 0; for (int k = 0; k < 8; k++) a += s[z][k][0]; out[b * 4 + z] = a; }
}
// persistent block-uniform loop with barriers inside
extern "C" __global__ void persist(const int *in, int *out, int n) {
    __shared__ int s[256];
    for (int base = blockIdx.x * blockDim.x; base < n; base += gridDim.x * blockDim.x) {
        int i = base + threadIdx.x;
        s[threadIdx.x] = i < n ? in[i] : 0;
        __syncthreads();
        int v = s[(threadIdx.x + 1) % blockDim.x] - s[threadIdx.x];
        __syncthreads();
        if (i < n) out[i] = v;
    }
}
// converge with __any_sync: halve values until every lane is below 10
extern "C" __global__ void converge(const int *in, int *out, int *iters) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int v = in[i], k = 0;
    while (__any_sync(0xffffffffu, v >= 10)) {
        int o = __shfl_down_sync(0xffffffffu, v, 1);
        v = v >= 10 ? v / 2 : v + (o & 1);
        k++;
    }
    out[i] = v;
    if ((threadIdx.x & 31) == 0) iters[i / 32] = k;
}
// 64-bit shuffles and atomics
extern "C" __global__ void wide(const double *in, double *out, unsigned long long *sum) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    double v = in[i];
    for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);
    long long iv = (long long)in[i] * 1000000007LL;
    for (int o = 1; o < 32; o <<= 1) iv ^= __shfl_xor_sync(0xffffffffu, iv, o);
    if ((threadIdx.x & 31) == 0) { out[i / 32] = v; atomicAdd(sum, (unsigned long long)iv); }
}

// search with a shared flag and a block-uniform loop that breaks
extern "C" __global__ void search(const int *in, int *out, int n, int key) {
    __shared__ int found, where;
    int t = threadIdx.x;
    if (t == 0) { found = 0; where = 0x7fffffff; }
    __syncthreads();
    int rounds = 0;
    for (int base = blockIdx.x * n; base < (blockIdx.x + 1) * n; base += blockDim.x) {
        int i = base + t;
        if (i < (blockIdx.x + 1) * n && in[i] == key) { found = 1; atomicMin(&where, i); }
        __syncthreads();
        rounds++;
        if (found) break;
        __syncthreads();
    }
    if (t == 0) { out[blockIdx.x * 2] = where; out[blockIdx.x * 2 + 1] = rounds; }
}
// a switch (jump table) before a barrier
extern "C" __global__ void sw(const int *in, int *out) {
    __shared__ int s[128];
    int t = threadIdx.x, v = in[blockIdx.x * 128 + t], r;
    switch (v & 7) {
        case 0: r = v * 3; break;
        case 1: r = v - 100; break;
        case 2: r = v ^ 0x55; break;
        case 3: r = -v; break;
        case 4: r = v << 2; break;
        case 5: r = v / 3; break;
        case 6: r = v % 11; break;
        default: r = 7;
    }
    s[t] = r;
    __syncthreads();
    out[blockIdx.x * 128 + t] = s[127 - t] + r;
}
