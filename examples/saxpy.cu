// saxpy.cu: the CUDA source that examples/saxpy.ptx corresponds to (y = a*x + y).
// examples/saxpy.ptx was written by hand in the shape NVRTC gives this kernel
// (`nvrtc -arch=compute_80`), with named parameters and comments added.
extern "C" __global__ void saxpy(const float* x, float* y, float a, unsigned n) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = fmaf(a, x[i], y[i]);
}
