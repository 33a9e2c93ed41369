// Empty kernel: measures launch overhead (1 block of 1 thread).
extern "C" __global__ void empty() {}
