// All-pairs gravitational acceleration: body i's acceleration is the sum over every body j of
// m_j r_ij / (|r_ij|^2 + eps^2)^1.5. Each block loads the bodies tile by tile (blockDim.x of
// them) into shared memory and every thread runs its body against the whole tile.
// pos: float4 (x, y, z, mass); acc: float4 (ax, ay, az, 0). n a multiple of blockDim.x.
extern "C" __global__ void nbody(const float4 *__restrict__ pos, float4 *__restrict__ acc, int n,
                                 float eps2) {
    extern __shared__ float4 tile[];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float4 p = pos[i];
    float ax = 0.0f, ay = 0.0f, az = 0.0f;
    for (int base = 0; base < n; base += blockDim.x) {
        tile[threadIdx.x] = pos[base + threadIdx.x];
        __syncthreads();
        for (int j = 0; j < blockDim.x; j++) {
            float4 q = tile[j];
            float dx = q.x - p.x, dy = q.y - p.y, dz = q.z - p.z;
            float r2 = dx * dx + dy * dy + dz * dz + eps2;
            float inv = rsqrtf(r2);
            float s = q.w * inv * inv * inv;
            ax += dx * s;
            ay += dy * s;
            az += dz * s;
        }
        __syncthreads();
    }
    acc[i] = make_float4(ax, ay, az, 0.0f);
}
