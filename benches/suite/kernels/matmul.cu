// Tiled matrix multiply C = A * B (n x n, row major, n a multiple of 16) with 16x16 tiles of A
// and B staged in shared memory; block (16,16), grid (n/16, n/16).
#define TILE 16
extern "C" __global__ void matmul(const float *__restrict__ A, const float *__restrict__ B,
                                  float *__restrict__ C, int n) {
    __shared__ float As[TILE][TILE];
    __shared__ float Bs[TILE][TILE];
    int tx = threadIdx.x, ty = threadIdx.y;
    int row = blockIdx.y * TILE + ty, col = blockIdx.x * TILE + tx;
    float acc = 0.0f;
    for (int k0 = 0; k0 < n; k0 += TILE) {
        As[ty][tx] = A[row * n + k0 + tx];
        Bs[ty][tx] = B[(k0 + ty) * n + col];
        __syncthreads();
#pragma unroll
        for (int k = 0; k < TILE; ++k) acc += As[ty][k] * Bs[k][tx];
        __syncthreads();
    }
    C[row * n + col] = acc;
}
