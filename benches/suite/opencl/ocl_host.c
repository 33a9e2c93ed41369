/* ocl_host: runs one OpenCL kernel the way `ptx2llvm run` runs a PTX kernel, for the benchmark's
 * PoCL column.
 *
 *   ocl_host FILE.cl KERNEL --global X[,Y] [--local X[,Y]] [--arg SPEC]... [--dump I=PATH]...
 *            [--repeat N]
 *
 * SPEC: @PATH (a buffer holding the file), zeros:BYTES (a zeroed buffer), local:BYTES (__local
 * memory), s32:V, u32:V, f32:V (scalars). --global is the total number of work-items per
 * dimension (CUDA's grid times block). The kernel runs once to warm up (PoCL compiles it for
 * the work-group size at the first launch), then N times (default 1), each launch timed from
 * clEnqueueNDRangeKernel to the end of clFinish; buffers are not reset between launches.
 * Prints to stderr, as ptx2llvm run does:
 *   build time: X ms
 *   kernel time: median X ms (min Y, max Z) over N launches
 * Exit 0 on success, 3 when no OpenCL platform/device is available, 1 on any other error. */
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_ARGS 16

static double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec * 1e-6;
}

static void die(const char *what, cl_int err) {
    fprintf(stderr, "ocl_host: %s failed (OpenCL error %d)\n", what, (int)err);
    exit(1);
}
#define CK(call)                                                                              \
    do {                                                                                      \
        cl_int e_ = (call);                                                                   \
        if (e_ != CL_SUCCESS) die(#call, e_);                                                 \
    } while (0)

static char *slurp(const char *path, size_t *n) {
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "ocl_host: cannot read %s\n", path);
        exit(1);
    }
    fseek(f, 0, SEEK_END);
    *n = (size_t)ftell(f);
    fseek(f, 0, SEEK_SET);
    char *b = malloc(*n + 1);
    if (fread(b, 1, *n, f) != *n) {
        fprintf(stderr, "ocl_host: short read %s\n", path);
        exit(1);
    }
    b[*n] = 0;
    fclose(f);
    return b;
}

static int dims(const char *s, size_t d[3]) {
    d[0] = d[1] = d[2] = 1;
    int k = 0;
    for (const char *p = s; *p && k < 3; k++) {
        char *end;
        d[k] = strtoull(p, &end, 0);
        if (end == p || d[k] == 0) return -1;
        p = *end == ',' ? end + 1 : end;
    }
    return k;
}

static int cmp(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: ocl_host FILE.cl KERNEL --global X[,Y] [--local X[,Y]] "
                        "[--arg SPEC]... [--dump I=PATH]... [--repeat N]\n");
        return 2;
    }
    const char *file = argv[1], *kname = argv[2];
    const char *specs[MAX_ARGS], *dumps[MAX_ARGS];
    int nargs = 0, ndumps = 0, repeat = 1, wdim = 1;
    size_t global[3] = {1, 1, 1}, local[3] = {0, 0, 0};
    int have_local = 0;
    for (int i = 3; i < argc; i++) {
        const char *o = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!v) {
            fprintf(stderr, "ocl_host: %s needs a value\n", o);
            return 2;
        }
        i++;
        if (!strcmp(o, "--global")) {
            if ((wdim = dims(v, global)) < 1) return 2;
        } else if (!strcmp(o, "--local")) {
            if (dims(v, local) < 1) return 2;
            have_local = 1;
        } else if (!strcmp(o, "--arg") && nargs < MAX_ARGS) {
            specs[nargs++] = v;
        } else if (!strcmp(o, "--dump") && ndumps < MAX_ARGS) {
            dumps[ndumps++] = v;
        } else if (!strcmp(o, "--repeat")) {
            repeat = atoi(v);
            if (repeat < 1) return 2;
        } else {
            fprintf(stderr, "ocl_host: unknown option %s\n", o);
            return 2;
        }
    }

    cl_platform_id plat;
    cl_uint np = 0;
    if (clGetPlatformIDs(1, &plat, &np) != CL_SUCCESS || np == 0) {
        fprintf(stderr, "ocl_host: no OpenCL platform\n");
        return 3;
    }
    cl_device_id dev;
    if (clGetDeviceIDs(plat, CL_DEVICE_TYPE_ALL, 1, &dev, NULL) != CL_SUCCESS) {
        fprintf(stderr, "ocl_host: no OpenCL device\n");
        return 3;
    }
    cl_int err;
    cl_context ctx = clCreateContext(NULL, 1, &dev, NULL, NULL, &err);
    if (err) die("clCreateContext", err);
    cl_command_queue q = clCreateCommandQueue(ctx, dev, 0, &err);
    if (err) die("clCreateCommandQueue", err);

    size_t srclen;
    char *src = slurp(file, &srclen);
    double t0 = now_ms();
    cl_program prog = clCreateProgramWithSource(ctx, 1, (const char **)&src, &srclen, &err);
    if (err) die("clCreateProgramWithSource", err);
    err = clBuildProgram(prog, 1, &dev, "-cl-std=CL1.2", NULL, NULL);
    if (err) {
        size_t n = 0;
        clGetProgramBuildInfo(prog, dev, CL_PROGRAM_BUILD_LOG, 0, NULL, &n);
        char *log = malloc(n + 1);
        clGetProgramBuildInfo(prog, dev, CL_PROGRAM_BUILD_LOG, n, log, NULL);
        log[n] = 0;
        fprintf(stderr, "%s\n", log);
        die("clBuildProgram", err);
    }
    double build_ms = now_ms() - t0;
    cl_kernel k = clCreateKernel(prog, kname, &err);
    if (err) die("clCreateKernel", err);

    cl_mem bufs[MAX_ARGS] = {0};
    size_t sizes[MAX_ARGS] = {0};
    for (int a = 0; a < nargs; a++) {
        const char *s = specs[a];
        if (s[0] == '@') {
            char *data = slurp(s + 1, &sizes[a]);
            bufs[a] = clCreateBuffer(ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR,
                                     sizes[a] ? sizes[a] : 1, data, &err);
            if (err) die("clCreateBuffer", err);
            free(data);
            CK(clSetKernelArg(k, a, sizeof(cl_mem), &bufs[a]));
        } else if (!strncmp(s, "zeros:", 6)) {
            sizes[a] = strtoull(s + 6, NULL, 0);
            char *data = calloc(sizes[a] ? sizes[a] : 1, 1);
            bufs[a] = clCreateBuffer(ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR,
                                     sizes[a] ? sizes[a] : 1, data, &err);
            if (err) die("clCreateBuffer", err);
            free(data);
            CK(clSetKernelArg(k, a, sizeof(cl_mem), &bufs[a]));
        } else if (!strncmp(s, "local:", 6)) {
            CK(clSetKernelArg(k, a, strtoull(s + 6, NULL, 0), NULL));
        } else if (!strncmp(s, "s32:", 4)) {
            cl_int v = (cl_int)strtol(s + 4, NULL, 0);
            CK(clSetKernelArg(k, a, sizeof v, &v));
        } else if (!strncmp(s, "u32:", 4)) {
            cl_uint v = (cl_uint)strtoul(s + 4, NULL, 0);
            CK(clSetKernelArg(k, a, sizeof v, &v));
        } else if (!strncmp(s, "f32:", 4)) {
            cl_float v = strtof(s + 4, NULL);
            CK(clSetKernelArg(k, a, sizeof v, &v));
        } else {
            fprintf(stderr, "ocl_host: bad --arg %s\n", s);
            return 2;
        }
    }

    double *times = malloc(sizeof(double) * repeat);
    for (int r = -1; r < repeat; r++) {
        double s = now_ms();
        CK(clEnqueueNDRangeKernel(q, k, wdim, NULL, global, have_local ? local : NULL, 0, NULL,
                                  NULL));
        CK(clFinish(q));
        if (r >= 0) times[r] = now_ms() - s;
    }
    qsort(times, repeat, sizeof(double), cmp);
    double med = repeat % 2 ? times[repeat / 2] : (times[repeat / 2 - 1] + times[repeat / 2]) / 2;
    fprintf(stderr, "build time: %.3f ms\n", build_ms);
    fprintf(stderr, "kernel time: median %.3f ms (min %.3f, max %.3f) over %d launches\n", med,
            times[0], times[repeat - 1], repeat);

    for (int d = 0; d < ndumps; d++) {
        int a = atoi(dumps[d]);
        const char *path = strchr(dumps[d], '=');
        if (!path || a < 0 || a >= nargs || !bufs[a]) {
            fprintf(stderr, "ocl_host: bad --dump %s\n", dumps[d]);
            return 2;
        }
        char *data = malloc(sizes[a] ? sizes[a] : 1);
        CK(clEnqueueReadBuffer(q, bufs[a], CL_TRUE, 0, sizes[a], data, 0, NULL, NULL));
        FILE *f = fopen(path + 1, "wb");
        if (!f || fwrite(data, 1, sizes[a], f) != sizes[a] || fclose(f)) {
            fprintf(stderr, "ocl_host: cannot write %s\n", path + 1);
            return 1;
        }
        free(data);
    }
    return 0;
}
