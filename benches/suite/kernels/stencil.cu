// 2-D 5-point stencil (one Jacobi step) on an h x w grid, row major: interior points get
// 0.5*c + 0.125*(n + s + e + w); the border is copied. Block (32,8), grid (w/32, h/8).
extern "C" __global__ void stencil(const float *__restrict__ in, float *__restrict__ out, int w,
                                   int h) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= w || y >= h) return;
    int i = y * w + x;
    if (x == 0 || y == 0 || x == w - 1 || y == h - 1) {
        out[i] = in[i];
    } else {
        out[i] = 0.5f * in[i] + 0.125f * (in[i - w] + in[i + w] + in[i - 1] + in[i + 1]);
    }
}
