// Held-out variant of conv3x3 (same input, C baseline c_conv3x3 and check): no shared tile,
// each thread reads its 3x3 neighbourhood from global memory with a bounds check per tap
// (zero padding), the weights from global memory. Block (16,16).
extern "C" __global__ void conv3x3_naive(const float *in, const float *wt, float *out, int w, int h) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= w || y >= h) return;
    float acc = 0.0f;
    for (int dy = -1; dy <= 1; dy++)
        for (int dx = -1; dx <= 1; dx++) {
            int xx = x + dx, yy = y + dy;
            if (xx >= 0 && xx < w && yy >= 0 && yy < h)
                acc += wt[(dy + 1) * 3 + dx + 1] * in[(size_t)yy * w + xx];
        }
    out[(size_t)y * w + x] = acc;
}
