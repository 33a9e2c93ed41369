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

__kernel void empty(void) {}
