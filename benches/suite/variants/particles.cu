// Particle step on arrays of structs (AoS): float3 positions and velocities, one thread per
// particle; the new positions go to a third array. NVRTC loads and stores each field as its own
// 4-byte access, 12 bytes apart from lane to lane.
struct P3 { float x, y, z; };
extern "C" __global__ void particles(const P3 *p, const P3 *v, P3 *out, int n, float dt) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        P3 a = p[i], b = v[i];
        out[i] = P3{a.x + b.x * dt, a.y + b.y * dt, a.z + b.z * dt};
    }
}
