// Mandelbrot escape counts on a w x h grid over [x0, x0 + w dx) x [y0, y0 + h dx): one pixel
// per thread, at most max_iter iterations of z = z^2 + c while |z|^2 <= 4.
extern "C" __global__ void mandelbrot(unsigned *__restrict__ out, int w, int h, float x0,
                                      float y0, float dx, int max_iter) {
    int px = blockIdx.x * blockDim.x + threadIdx.x, py = blockIdx.y * blockDim.y + threadIdx.y;
    if (px >= w || py >= h) return;
    float cx = x0 + px * dx, cy = y0 + py * dx;
    float x = 0.0f, y = 0.0f, x2 = 0.0f, y2 = 0.0f;
    int it = 0;
    while (it < max_iter && x2 + y2 <= 4.0f) {
        y = 2.0f * x * y + cy;
        x = x2 - y2 + cx;
        x2 = x * x;
        y2 = y * y;
        it++;
    }
    out[(size_t)py * w + px] = it;
}
