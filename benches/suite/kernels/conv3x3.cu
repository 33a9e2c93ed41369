// 3x3 convolution (zero padding) of a w x h image: each 16x16 block stages an 18x18 tile with
// its one-pixel halo in shared memory (the 324 loads spread over the 256 threads), then every
// thread computes one output pixel from the tile. The 9 weights come from global memory.
#define T 16
#define H (T + 2)
extern "C" __global__ void conv3x3(const float *__restrict__ in, const float *__restrict__ wt,
                                   float *__restrict__ out, int w, int h) {
    __shared__ float tile[H][H];
    int x0 = blockIdx.x * T - 1, y0 = blockIdx.y * T - 1;
    for (int k = threadIdx.y * T + threadIdx.x; k < H * H; k += T * T) {
        int ty = k / H, tx = k % H, gx = x0 + tx, gy = y0 + ty;
        tile[ty][tx] = gx >= 0 && gx < w && gy >= 0 && gy < h ? in[(size_t)gy * w + gx] : 0.0f;
    }
    __syncthreads();
    int x = blockIdx.x * T + threadIdx.x, y = blockIdx.y * T + threadIdx.y;
    if (x >= w || y >= h) return;
    float acc = 0.0f;
#pragma unroll
    for (int dy = 0; dy < 3; dy++)
#pragma unroll
        for (int dx = 0; dx < 3; dx++)
            acc += wt[dy * 3 + dx] * tile[threadIdx.y + dy][threadIdx.x + dx];
    out[(size_t)y * w + x] = acc;
}
