/* The benchmark kernels in OpenCL C 1.2, the same algorithms as the CUDA sources in ../kernels
 * (one work-item per CUDA thread, local memory for shared memory, barrier() for
 * __syncthreads()). */

__kernel void vecadd(__global const float *restrict a, __global const float *restrict b,
                     __global float *restrict c, int n) {
    int i = get_global_id(0);
    if (i < n) c[i] = a[i] + b[i];
}

__kernel void saxpy(float a, __global const float *restrict x, __global const float *restrict y,
                    __global float *restrict out, int n) {
    int i = get_global_id(0);
    if (i < n) out[i] = a * x[i] + y[i];
}

#define BLOCK 256
__kernel __attribute__((reqd_work_group_size(BLOCK, 1, 1))) void
reduce_block(__global const float *restrict in, __global float *restrict partial, int n) {
    __local float s[BLOCK];
    uint t = get_local_id(0);
    uint i = get_group_id(0) * BLOCK + t;
    s[t] = i < n ? in[i] : 0.0f;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint stride = BLOCK / 2; stride > 0; stride >>= 1) {
        if (t < stride) s[t] += s[t + stride];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (t == 0) partial[get_group_id(0)] = s[0];
}

/* OpenCL C 1.2 on PoCL has no sub-group shuffles: __shfl_down_sync becomes a write of every
 * lane's value to local memory, a barrier, and a read of lane + offset (same tree, same order). */
__kernel __attribute__((reqd_work_group_size(BLOCK, 1, 1))) void
reduce_warp(__global const float *restrict in, __global float *restrict partial, int n) {
    __local float lanes[BLOCK];
    __local float warps[BLOCK / 32];
    uint t = get_local_id(0), lane = t % 32, w = t / 32;
    uint i = get_group_id(0) * BLOCK + t;
    float v = i < n ? in[i] : 0.0f;
    for (uint off = 16; off > 0; off >>= 1) {
        lanes[t] = v;
        barrier(CLK_LOCAL_MEM_FENCE);
        if (lane + off < 32) v += lanes[t + off];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (lane == 0) warps[w] = v;
    barrier(CLK_LOCAL_MEM_FENCE);
    v = lane < BLOCK / 32 ? warps[lane] : 0.0f;
    for (uint off = 16; off > 0; off >>= 1) {
        lanes[t] = v;
        barrier(CLK_LOCAL_MEM_FENCE);
        if (lane + off < 32) v += lanes[t + off];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (t == 0) partial[get_group_id(0)] = v;
}

#define TILE 16
__kernel __attribute__((reqd_work_group_size(TILE, TILE, 1))) void
matmul(__global const float *restrict A, __global const float *restrict B,
       __global float *restrict C, int n) {
    __local float As[TILE][TILE];
    __local float Bs[TILE][TILE];
    int tx = get_local_id(0), ty = get_local_id(1);
    int row = get_group_id(1) * TILE + ty, col = get_group_id(0) * TILE + tx;
    float acc = 0.0f;
    for (int k0 = 0; k0 < n; k0 += TILE) {
        As[ty][tx] = A[row * n + k0 + tx];
        Bs[ty][tx] = B[(k0 + ty) * n + col];
        barrier(CLK_LOCAL_MEM_FENCE);
#pragma unroll
        for (int k = 0; k < TILE; ++k) acc += As[ty][k] * Bs[k][tx];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    C[row * n + col] = acc;
}

__kernel void stencil(__global const float *restrict in, __global float *restrict out, int w,
                      int h) {
    int x = get_global_id(0), y = get_global_id(1);
    if (x >= w || y >= h) return;
    int i = y * w + x;
    if (x == 0 || y == 0 || x == w - 1 || y == h - 1)
        out[i] = in[i];
    else
        out[i] = 0.5f * in[i] + 0.125f * (in[i - w] + in[i + w] + in[i - 1] + in[i + 1]);
}

#define BINS 256
__kernel void histogram(__global const uchar *restrict data, __global uint *hist, int n) {
    __local uint local_h[BINS];
    for (int b = get_local_id(0); b < BINS; b += get_local_size(0)) local_h[b] = 0;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int i = get_global_id(0); i < n; i += get_global_size(0))
        atomic_inc(&local_h[data[i]]);
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int b = get_local_id(0); b < BINS; b += get_local_size(0))
        if (local_h[b]) atomic_add(&hist[b], local_h[b]);
}

/* Row softmax as Triton's kernel does it (BLOCK_SIZE 1024, 4 warps = 128 work-items, 8 columns
 * per work-item; max and sum reduced across the group through local memory). */
#define SM_COLS 1024
#define SM_WG 128
__kernel __attribute__((reqd_work_group_size(SM_WG, 1, 1))) void
softmax(__global float *restrict out, __global const float *restrict in, int in_stride,
        int out_stride, int n_cols) {
    __local float red[SM_WG];
    int t = get_local_id(0), row = get_group_id(0);
    float x[SM_COLS / SM_WG];
    float m = -INFINITY;
    for (int k = 0; k < SM_COLS / SM_WG; k++) {
        int c = t + k * SM_WG;
        x[k] = c < n_cols ? in[row * in_stride + c] : -INFINITY;
        m = fmax(m, x[k]);
    }
    red[t] = m;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int s = SM_WG / 2; s > 0; s >>= 1) {
        if (t < s) red[t] = fmax(red[t], red[t + s]);
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    m = red[0];
    barrier(CLK_LOCAL_MEM_FENCE);
    float sum = 0.0f;
    for (int k = 0; k < SM_COLS / SM_WG; k++) {
        x[k] = exp(x[k] - m);
        sum += x[k];
    }
    red[t] = sum;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int s = SM_WG / 2; s > 0; s >>= 1) {
        if (t < s) red[t] += red[t + s];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    sum = red[0];
    for (int k = 0; k < SM_COLS / SM_WG; k++) {
        int c = t + k * SM_WG;
        if (c < n_cols) out[row * out_stride + c] = x[k] / sum;
    }
}


/* ---- the CUDA idioms of issue #17 (the .cu files in ../kernels), one work-item per CUDA thread ---- */

/* float atomic add through compare-and-swap on the bits (OpenCL 1.2 has no float atomics) */
static void atomic_add_f32(volatile __global float *p, float v) {
    union { float f; uint u; } old, upd;
    do {
        old.f = *p;
        upd.f = old.f + v;
    } while (atomic_cmpxchg((volatile __global uint *)p, old.u, upd.u) != old.u);
}

__kernel void reduce_halving(__global const float *restrict in, __global float *sum,
                             __local float *s, int n) {
    uint t = get_local_id(0), i = get_global_id(0);
    s[t] = i < n ? in[i] : 0.0f;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint k = get_local_size(0) / 2; k > 0; k >>= 1) {
        if (t < k) s[t] += s[t + k];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (t == 0) atomic_add_f32(sum, s[0]);
}

/* a warp's __shfl_down_sync fold, through local memory (every work-item of the group calls it) */
static float fold32(float v, __local float *lanes) {
    uint t = get_local_id(0), lane = t % 32;
    for (uint off = 16; off > 0; off >>= 1) {
        lanes[t] = v;
        barrier(CLK_LOCAL_MEM_FENCE);
        if (lane + off < 32) v += lanes[t + off];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    return v;
}

__kernel __attribute__((reqd_work_group_size(BLOCK, 1, 1))) void
reduce_gridstride(__global const float *restrict in, __global float *sum, int n) {
    __local float lanes[BLOCK], per_warp[BLOCK / 32];
    uint t = get_local_id(0), lane = t % 32, w = t / 32;
    float acc = 0.0f;
    for (int i = get_global_id(0); i < n; i += get_global_size(0)) acc += in[i];
    acc = fold32(acc, lanes);
    if (lane == 0) per_warp[w] = acc;
    barrier(CLK_LOCAL_MEM_FENCE);
    acc = fold32(lane < BLOCK / 32 ? per_warp[lane] : 0.0f, lanes);
    if (t == 0) atomic_add_f32(sum, acc);
}

#define TD 32
#define TR 8
__kernel __attribute__((reqd_work_group_size(TD, TR, 1))) void
transpose(__global const float *restrict in, __global float *restrict out, int rows, int cols) {
    __local float tile[TD][TD + 1];
    int tx = get_local_id(0), ty = get_local_id(1), bx = get_group_id(0), by = get_group_id(1);
    int x = bx * TD + tx, y0 = by * TD + ty;
    for (int r = 0; r < TD; r += TR)
        if (x < cols && y0 + r < rows) tile[ty + r][tx] = in[(size_t)(y0 + r) * cols + x];
    barrier(CLK_LOCAL_MEM_FENCE);
    int ox = by * TD + tx, oy0 = bx * TD + ty;
    for (int r = 0; r < TD; r += TR)
        if (ox < rows && oy0 + r < cols) out[(size_t)(oy0 + r) * rows + ox] = tile[tx][ty + r];
}

/* the block scan: Kogge-Stone over the whole group in local memory (double-buffered) */
__kernel __attribute__((reqd_work_group_size(BLOCK, 1, 1))) void
scan(__global const float *restrict in, __global float *restrict out,
     __global float *restrict totals, int n) {
    __local float buf[2][BLOCK];
    int t = get_local_id(0), i = get_global_id(0), cur = 0;
    buf[0][t] = i < n ? in[i] : 0.0f;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int d = 1; d < BLOCK; d *= 2) {
        float v = buf[cur][t];
        if (t >= d) v += buf[cur][t - d];
        buf[1 - cur][t] = v;
        cur = 1 - cur;
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (i < n) out[i] = buf[cur][t];
    if (t == BLOCK - 1) totals[get_group_id(0)] = buf[cur][t];
}

/* warp-per-row softmax: 4 rows per group of 128; the __shfl_xor_sync butterflies become
 * local-memory exchanges within each 32-item row team */
#define SW_COLS 32
static float xor_fold(float v, __local float *lanes, int is_max) {
    uint t = get_local_id(0);
    for (uint d = 16; d > 0; d >>= 1) {
        lanes[t] = v;
        barrier(CLK_LOCAL_MEM_FENCE);
        float u = lanes[t ^ d];
        v = is_max ? fmax(v, u) : v + u;
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    return v;
}
__kernel __attribute__((reqd_work_group_size(128, 1, 1))) void
softmax_warp(__global const float *restrict in, __global float *restrict out, int rows, int cols) {
    __local float lanes[128];
    int lane = get_local_id(0) % 32, row = get_group_id(0) * 4 + get_local_id(0) / 32;
    int live = row < rows;
    __global const float *x = in + (size_t)row * cols;
    float v[SW_COLS], m = -INFINITY;
    for (int k = 0; k < SW_COLS; k++) {
        int c = lane + 32 * k;
        v[k] = live && c < cols ? x[c] : -INFINITY;
        m = fmax(m, v[k]);
    }
    m = xor_fold(m, lanes, 1);
    float s = 0.0f;
    for (int k = 0; k < SW_COLS; k++) {
        v[k] = exp(v[k] - m);
        s += v[k];
    }
    s = xor_fold(s, lanes, 0);
    float inv = 1.0f / s;
    for (int k = 0; k < SW_COLS; k++) {
        int c = lane + 32 * k;
        if (live && c < cols) out[(size_t)row * cols + c] = v[k] * inv;
    }
}

static float group_sum(float v, __local float *scratch) {
    uint t = get_local_id(0);
    barrier(CLK_LOCAL_MEM_FENCE);
    scratch[t] = v;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint k = BLOCK / 2; k > 0; k >>= 1) {
        if (t < k) scratch[t] += scratch[t + k];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    return scratch[0];
}
__kernel __attribute__((reqd_work_group_size(BLOCK, 1, 1))) void
layernorm(__global const float *restrict in, __global const float *restrict gamma,
          __global const float *restrict beta, __global float *restrict out, int cols, float eps) {
    __local float scratch[BLOCK];
    __global const float *x = in + (size_t)get_group_id(0) * cols;
    __global float *y = out + (size_t)get_group_id(0) * cols;
    int t = get_local_id(0);
    float s = 0.0f;
    for (int c = t; c < cols; c += BLOCK) s += x[c];
    float mean = group_sum(s, scratch) / cols;
    float q = 0.0f;
    for (int c = t; c < cols; c += BLOCK) q += (x[c] - mean) * (x[c] - mean);
    float rstd = rsqrt(group_sum(q, scratch) / cols + eps);
    for (int c = t; c < cols; c += BLOCK) y[c] = (x[c] - mean) * rstd * gamma[c] + beta[c];
}

#define CT 16
#define CH (CT + 2)
__kernel __attribute__((reqd_work_group_size(CT, CT, 1))) void
conv3x3(__global const float *restrict in, __global const float *restrict wt,
        __global float *restrict out, int w, int h) {
    __local float tile[CH][CH];
    int tx = get_local_id(0), ty = get_local_id(1);
    int x0 = get_group_id(0) * CT - 1, y0 = get_group_id(1) * CT - 1;
    for (int k = ty * CT + tx; k < CH * CH; k += CT * CT) {
        int r = k / CH, c = k % CH, gx = x0 + c, gy = y0 + r;
        tile[r][c] = gx >= 0 && gx < w && gy >= 0 && gy < h ? in[(size_t)gy * w + gx] : 0.0f;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    int x = get_global_id(0), y = get_global_id(1);
    if (x >= w || y >= h) return;
    float acc = 0.0f;
    for (int dy = 0; dy < 3; dy++)
        for (int dx = 0; dx < 3; dx++) acc += wt[dy * 3 + dx] * tile[ty + dy][tx + dx];
    out[(size_t)y * w + x] = acc;
}

__kernel void nbody(__global const float4 *restrict pos, __global float4 *restrict acc, int n,
                    float eps2, __local float4 *tile) {
    int i = get_global_id(0), t = get_local_id(0), bs = get_local_size(0);
    float4 p = pos[i];
    float ax = 0.0f, ay = 0.0f, az = 0.0f;
    for (int base = 0; base < n; base += bs) {
        tile[t] = pos[base + t];
        barrier(CLK_LOCAL_MEM_FENCE);
        for (int j = 0; j < bs; j++) {
            float4 q = tile[j];
            float dx = q.x - p.x, dy = q.y - p.y, dz = q.z - p.z;
            float inv = rsqrt(dx * dx + dy * dy + dz * dz + eps2);
            float s = q.w * inv * inv * inv;
            ax += dx * s;
            ay += dy * s;
            az += dz * s;
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    acc[i] = (float4)(ax, ay, az, 0.0f);
}

__kernel void spmv_thread(__global const int *restrict row_ptr, __global const int *restrict col,
                          __global const float *restrict val, __global const float *restrict x,
                          __global float *restrict y, int rows) {
    int r = get_global_id(0);
    if (r >= rows) return;
    float s = 0.0f;
    for (int k = row_ptr[r]; k < row_ptr[r + 1]; k++) s += val[k] * x[col[k]];
    y[r] = s;
}

__kernel __attribute__((reqd_work_group_size(BLOCK, 1, 1))) void
spmv_warp(__global const int *restrict row_ptr, __global const int *restrict col,
          __global const float *restrict val, __global const float *restrict x,
          __global float *restrict y, int rows) {
    __local float lanes[BLOCK];
    int r = get_group_id(0) * (BLOCK / 32) + get_local_id(0) / 32, lane = get_local_id(0) % 32;
    float s = 0.0f;
    if (r < rows)
        for (int k = row_ptr[r] + lane; k < row_ptr[r + 1]; k += 32) s += val[k] * x[col[k]];
    s = fold32(s, lanes);
    if (r < rows && lane == 0) y[r] = s;
}

static float cnd(float d) {
    const float a1 = 0.31938153f, a2 = -0.356563782f, a3 = 1.781477937f, a4 = -1.821255978f,
                a5 = 1.330274429f, rsqrt2pi = 0.39894228040143267794f;
    float k = 1.0f / (1.0f + 0.2316419f * fabs(d));
    float c = rsqrt2pi * exp(-0.5f * d * d) * (k * (a1 + k * (a2 + k * (a3 + k * (a4 + k * a5)))));
    return d > 0.0f ? 1.0f - c : c;
}
__kernel void blackscholes(__global const float *restrict S, __global const float *restrict K,
                           __global const float *restrict T, __global float *restrict call,
                           __global float *restrict put, float r, float v, int n) {
    for (int i = get_global_id(0); i < n; i += get_global_size(0)) {
        float s = S[i], k = K[i], t = T[i];
        float sq = sqrt(t);
        float d1 = (log(s / k) + (r + 0.5f * v * v) * t) / (v * sq);
        float d2 = d1 - v * sq;
        float disc = k * exp(-r * t);
        float c1 = cnd(d1), c2 = cnd(d2);
        call[i] = s * c1 - disc * c2;
        put[i] = disc * (1.0f - c2) - s * (1.0f - c1);
    }
}

__kernel void mandelbrot(__global uint *restrict out, int w, int h, float x0, float y0, float dx,
                         int max_iter) {
    int px = get_global_id(0), py = get_global_id(1);
    if (px >= w || py >= h) return;
    float cx = x0 + px * dx, cy = y0 + py * dx;
    float x = 0.0f, y = 0.0f, x2 = 0.0f, y2 = 0.0f;
    int it = 0;
    while (it < max_iter && x2 + y2 <= 4.0f) {
        y = 2.0f * x * y + cy;
        x = x2 - y2 + cx;
        x2 = x * x;
        y2 = y * y;
        it++;
    }
    out[(size_t)py * w + px] = it;
}

__kernel void bitonic(__global const float *restrict in, __global float *restrict out,
                      __local float *a) {
    uint t = get_local_id(0), hb = get_local_size(0), n = 2 * hb;
    __global const float *src = in + (size_t)get_group_id(0) * n;
    a[t] = src[t];
    a[t + hb] = src[t + hb];
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint k = 2; k <= n; k <<= 1)
        for (uint j = k >> 1; j > 0; j >>= 1) {
            uint lo = 2 * t - (t & (j - 1)), hi = lo + j;
            bool up = (lo & k) == 0;
            float p = a[lo], q = a[hi];
            if ((p > q) == up) {
                a[lo] = q;
                a[hi] = p;
            }
            barrier(CLK_LOCAL_MEM_FENCE);
        }
    __global float *dst = out + (size_t)get_group_id(0) * n;
    dst[t] = a[t];
    dst[t + hb] = a[t + hb];
}

__kernel void empty(void) {}
