// kernel.cu: the CUDA source of kernel.ptx, the example of README.md's "Debugging and
// profiling kernels on the CPU" (tests/cpu_debug.rs runs it under gdb and perf; its line
// numbers are in the test and the README, so keep them when editing).
// kernel.ptx is nvcc's output with line info, no GPU needed:
//   .venv/lib/python3.11/site-packages/nvidia/cu13/bin/nvcc -ptx -lineinfo -arch=compute_80 kernel.cu
#include <cstdio>

extern "C" __global__ void scale(float* y, float a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    float v = a * i;
    y[i] = v + 1.0f;
    printf("block %d thread %d: y[%d] = %g\n", blockIdx.x, threadIdx.x, i, y[i]);
  }
}

// A loop worth profiling: most of the time goes to lines 24 and 25.
extern "C" __global__ void series(float* y, int n, int steps) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float v = i * 0.001f;
  float acc = 0.0f;
  for (int k = 0; k < steps; ++k) {
    acc = acc * 0.999f + sqrtf(v);
    v = v * 1.0001f + 0.5f;
  }
  y[i] = acc;
}
