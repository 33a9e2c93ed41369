// Row softmax, one warp per row (blockDim.x/32 rows per block): each lane keeps cols/32 values
// in registers (COLS_PER_LANE at most), the row's max and sum are butterfly reductions with
// __shfl_xor_sync, so every lane ends with the total and no shared memory is needed.
#define COLS_PER_LANE 32
extern "C" __global__ void softmax_warp(const float *__restrict__ in, float *__restrict__ out,
                                        int rows, int cols) {
    int lane = threadIdx.x & 31;
    int row = blockIdx.x * (blockDim.x >> 5) + (threadIdx.x >> 5);
    if (row >= rows) return;
    const float *x = in + (size_t)row * cols;
    float *y = out + (size_t)row * cols;
    float v[COLS_PER_LANE];
    float m = -__int_as_float(0x7f800000);  // -inf
#pragma unroll
    for (int k = 0; k < COLS_PER_LANE; k++) {
        int c = lane + 32 * k;
        v[k] = c < cols ? x[c] : -__int_as_float(0x7f800000);
        m = fmaxf(m, v[k]);
    }
    for (int d = 16; d > 0; d >>= 1) m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, d));
    float s = 0.0f;
#pragma unroll
    for (int k = 0; k < COLS_PER_LANE; k++) {
        v[k] = expf(v[k] - m);
        s += v[k];
    }
    for (int d = 16; d > 0; d >>= 1) s += __shfl_xor_sync(0xffffffffu, s, d);
    float inv = 1.0f / s;
#pragma unroll
    for (int k = 0; k < COLS_PER_LANE; k++) {
        int c = lane + 32 * k;
        if (c < cols) y[c] = v[k] * inv;
    }
}
