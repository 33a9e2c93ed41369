# numba_kernels.py: numba-cuda kernels, and a cuda.core program that compiles CUDA C++ with
# NVRTC to PTX, run unchanged against ptx2llvm's libcuda.so.1 (run by
# scripts/test.sh's Python stage: LD_LIBRARY_PATH=target/release/cuda python numba_kernels.py).
# Each test checks its results against NumPy; the script prints one line per test and
# "numba kernels: P passed, F failed", and exits 1 when any failed.
import math
import sys
import time
import traceback

import numpy as np
from numba import cuda


def test_device_arrays():
    @cuda.jit
    def axpy(a, x, y, out):
        i = cuda.grid(1)
        if i < out.size:
            out[i] = a * x[i] + y[i]

    x = np.random.default_rng(1).random(10_000).astype(np.float32)
    y = np.arange(10_000, dtype=np.float32)
    dx, dy = cuda.to_device(x), cuda.to_device(y)
    out = cuda.device_array_like(x)
    axpy[40, 256](np.float32(2.5), dx, dy, out)
    np.testing.assert_allclose(out.copy_to_host(), 2.5 * x + y, rtol=1e-6)
    # A 2D array, a slice, copy back into an existing host array.
    m = np.arange(64 * 32, dtype=np.int64).reshape(64, 32)
    dm = cuda.to_device(m)

    @cuda.jit
    def transpose(src, dst):
        i, j = cuda.grid(2)
        if i < src.shape[0] and j < src.shape[1]:
            dst[j, i] = src[i, j]

    dt = cuda.device_array((32, 64), dtype=np.int64)
    transpose[(8, 4), (8, 8)](dm, dt)
    host = np.empty((32, 64), dtype=np.int64)
    dt.copy_to_host(host)
    assert (host == m.T).all()


def test_streams_and_events():
    @cuda.jit
    def inc(a, n):
        i = cuda.grid(1)
        if i < a.size:
            for _ in range(n):
                a[i] += 1

    s1, s2 = cuda.stream(), cuda.stream()
    a = np.zeros(4096, dtype=np.int32)
    da = cuda.to_device(a, stream=s1)
    start, end = cuda.event(), cuda.event()
    start.record(s1)
    inc[16, 256, s1](da, 3)
    end.record(s1)
    end.wait(s2)
    inc[16, 256, s2](da, 2)
    out = da.copy_to_host(stream=s2)
    s2.synchronize()
    assert (out == 5).all()
    end.synchronize()
    assert cuda.event_elapsed_time(start, end) >= 0.0
    # Pinned and mapped host memory.
    p = cuda.pinned_array(1024, dtype=np.float64)
    p[:] = 1.5
    dp = cuda.to_device(p, stream=s1)
    s1.synchronize()
    assert (dp.copy_to_host() == 1.5).all()
    m = cuda.mapped_array(256, dtype=np.int32)
    m[:] = 0

    @cuda.jit
    def fill(a):
        i = cuda.grid(1)
        if i < a.size:
            a[i] = i * 3

    fill[1, 256](m)
    cuda.synchronize()
    assert (m == np.arange(256) * 3).all()


def test_atomics():
    @cuda.jit
    def hist(data, bins):
        i = cuda.grid(1)
        if i < data.size:
            cuda.atomic.add(bins, data[i] % bins.size, 1)

    @cuda.jit
    def extremes(data, out):
        i = cuda.grid(1)
        if i < data.size:
            cuda.atomic.max(out, 0, data[i])
            cuda.atomic.min(out, 1, data[i])

    data = np.random.default_rng(2).integers(0, 1_000_000, 50_000).astype(np.int32)
    bins = cuda.to_device(np.zeros(16, dtype=np.int32))
    hist[(data.size + 255) // 256, 256](cuda.to_device(data), bins)
    assert (bins.copy_to_host() == np.bincount(data % 16, minlength=16)).all()
    out = cuda.to_device(np.array([-1, 2**31 - 1], dtype=np.int32))
    extremes[(data.size + 255) // 256, 256](cuda.to_device(data), out)
    assert list(out.copy_to_host()) == [data.max(), data.min()]

    @cuda.jit
    def fsum(x, acc):
        i = cuda.grid(1)
        if i < x.size:
            cuda.atomic.add(acc, 0, x[i])

    x = np.ones(10_000, dtype=np.float64)
    acc = cuda.to_device(np.zeros(1, dtype=np.float64))
    fsum[40, 256](cuda.to_device(x), acc)
    assert acc.copy_to_host()[0] == 10_000.0


def test_shared_memory():
    TPB = 128

    @cuda.jit
    def block_sum(x, out):
        tile = cuda.shared.array(TPB, dtype=np.float32)
        t = cuda.threadIdx.x
        i = cuda.grid(1)
        tile[t] = x[i] if i < x.size else 0.0
        cuda.syncthreads()
        s = TPB // 2
        while s > 0:
            if t < s:
                tile[t] += tile[t + s]
            cuda.syncthreads()
            s //= 2
        if t == 0:
            out[cuda.blockIdx.x] = tile[0]

    x = np.arange(TPB * 20, dtype=np.float32)
    out = cuda.device_array(20, dtype=np.float32)
    block_sum[20, TPB](cuda.to_device(x), out)
    np.testing.assert_allclose(out.copy_to_host(), x.reshape(20, TPB).sum(axis=1))

    @cuda.jit
    def reverse(a):
        buf = cuda.shared.array(0, dtype=np.int32)
        t = cuda.threadIdx.x
        buf[t] = a[t]
        cuda.syncthreads()
        a[t] = buf[cuda.blockDim.x - 1 - t]

    a = np.arange(200, dtype=np.int32)
    da = cuda.to_device(a)
    reverse[1, 200, 0, 200 * 4](da)
    assert (da.copy_to_host() == a[::-1]).all()


def test_fp16():
    @cuda.jit
    def hfma(a, b, c, out):
        i = cuda.grid(1)
        if i < out.size:
            out[i] = cuda.fp16.hfma(a[i], b[i], c[i])

    @cuda.jit
    def hcmp(a, b, out):
        i = cuda.grid(1)
        if i < out.size:
            out[i] = a[i] * b[i] if a[i] > b[i] else a[i] + b[i]

    rng = np.random.default_rng(3)
    a, b, c = (rng.random(512).astype(np.float16) for _ in range(3))
    out = cuda.device_array(512, dtype=np.float16)
    hfma[2, 256](cuda.to_device(a), cuda.to_device(b), cuda.to_device(c), out)
    want = (a.astype(np.float32) * b.astype(np.float32) + c.astype(np.float32)).astype(np.float16)
    np.testing.assert_allclose(out.copy_to_host().astype(np.float32), want.astype(np.float32), rtol=2e-3)
    hcmp[2, 256](cuda.to_device(a), cuda.to_device(b), out)
    want = np.where(a > b, a * b, a + b).astype(np.float16)
    np.testing.assert_allclose(out.copy_to_host().astype(np.float32), want.astype(np.float32), rtol=2e-3)


def test_math_and_device_functions():
    @cuda.jit(device=True)
    def poly(x):
        return 3.0 * x * x - 2.0 * x + 1.0

    @cuda.jit
    def apply(x, out):
        i = cuda.grid(1)
        if i < x.size:
            out[i] = math.sin(x[i]) * math.exp(-x[i]) + poly(x[i]) + math.sqrt(abs(x[i]))

    x = np.linspace(-3, 3, 1000)
    out = cuda.device_array_like(x)
    apply[4, 256](cuda.to_device(x), out)
    np.testing.assert_allclose(
        out.copy_to_host(), np.sin(x) * np.exp(-x) + 3 * x * x - 2 * x + 1 + np.sqrt(abs(x)), rtol=1e-12
    )


def test_warp_and_local():
    @cuda.jit
    def warp_reduce(x, out):
        i = cuda.grid(1)
        v = x[i]
        off = 16
        while off > 0:
            v += cuda.shfl_down_sync(0xFFFFFFFF, v, off)
            off //= 2
        if cuda.laneid == 0:
            out[i // 32] = v

    x = np.arange(256, dtype=np.int32)
    out = cuda.device_array(8, dtype=np.int32)
    warp_reduce[2, 128](cuda.to_device(x), out)
    assert (out.copy_to_host() == x.reshape(8, 32).sum(axis=1)).all()

    @cuda.jit
    def local_sort(rows, out):
        i = cuda.grid(1)
        if i < rows.shape[0]:
            tmp = cuda.local.array(8, dtype=np.int32)
            for k in range(8):
                tmp[k] = rows[i, k]
            for a in range(8):
                for b in range(7 - a):
                    if tmp[b] > tmp[b + 1]:
                        tmp[b], tmp[b + 1] = tmp[b + 1], tmp[b]
            for k in range(8):
                out[i, k] = tmp[k]

    rows = np.random.default_rng(4).integers(-100, 100, (64, 8)).astype(np.int32)
    out = cuda.device_array_like(rows)
    local_sort[1, 64](cuda.to_device(rows), out)
    assert (out.copy_to_host() == np.sort(rows, axis=1)).all()


def test_device_info():
    dev = cuda.get_current_device()
    assert dev.compute_capability == (8, 9)
    assert dev.WARP_SIZE == 32
    free, total = cuda.current_context().get_memory_info()
    assert 0 < free <= total


def test_link_cuda_cpp():
    import os
    import tempfile

    src = r"""
    // numba's ABI for foreign device functions: the result through the first pointer.
    extern "C" __device__ int mul_add(float *ret, float a, float b, float c) {
        *ret = fmaf(a, b, c);
        return 0;
    }
    """
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "mul_add.cu")
        with open(path, "w") as f:
            f.write(src)
        mul_add = cuda.declare_device("mul_add", "float32(float32, float32, float32)", link=path)

        @cuda.jit(link=[path])
        def k(x, out):
            i = cuda.grid(1)
            if i < out.size:
                out[i] = mul_add(x[i], 3.0, 1.0)

        x = np.arange(256, dtype=np.float32)
        out = cuda.device_array_like(x)
        k[2, 128](cuda.to_device(x), out)
        np.testing.assert_allclose(out.copy_to_host(), 3 * x + 1)



def test_link_c_abi_void():
    # abi="c" declares a void function with a 64-bit return the C definition lacks; the
    # driver's linker must still link it (as nvJitLink does).
    src = cuda.CUSource("""
    extern "C" __device__ void consume(int a) { asm volatile("" : : "r"(a) : "memory"); }
    """)
    consume = cuda.declare_device("consume", "void(int32)", link=src, abi="c")

    @cuda.jit
    def k(r, x):
        i = cuda.grid(1)
        if i < r.size:
            consume(x[i])
            r[i] = x[i] * 2

    x = np.arange(64, dtype=np.int32)
    r = np.zeros_like(x)
    k[1, 64](r, x)
    np.testing.assert_equal(r, x * 2)

def test_cuda_core_nvrtc_program():
    from cuda.bindings import driver
    from cuda.core import Device, LaunchConfig, Program, ProgramOptions, launch

    code = r"""
    template <typename T>
    __global__ void saxpy(T a, const T *x, T *y, size_t n) {
        size_t i = blockIdx.x * blockDim.x + threadIdx.x;
        if (i < n) y[i] = a * x[i] + y[i];
    }
    """
    dev = Device()
    dev.set_current()
    s = dev.create_stream()
    prog = Program(code, code_type="c++", options=ProgramOptions(arch="sm_80"))
    mod = prog.compile("ptx", name_expressions=("saxpy<float>",))
    k = mod.get_kernel("saxpy<float>")
    n = 1000
    x = np.arange(n, dtype=np.float32)
    y = np.ones(n, dtype=np.float32)
    bx, by = dev.allocate(x.nbytes, stream=s), dev.allocate(y.nbytes, stream=s)
    for buf, host in ((bx, x), (by, y)):
        (err,) = driver.cuMemcpyHtoD(int(buf.handle), host.ctypes.data, host.nbytes)
        assert err == driver.CUresult.CUDA_SUCCESS, err
    launch(s, LaunchConfig(grid=(n + 127) // 128, block=128), k, np.float32(2.0), bx, by, np.uint64(n))
    s.sync()
    out = np.empty_like(y)
    (err,) = driver.cuMemcpyDtoH(out.ctypes.data, int(by.handle), out.nbytes)
    assert err == driver.CUresult.CUDA_SUCCESS, err
    np.testing.assert_allclose(out, 2 * x + 1)


def test_grid_sync():
    # numba-cuda links libcudadevrt.a (ptx2llvm's devrt.ptx) and launches cooperatively:
    # every CTA writes phase 1, the grid synchronizes, then each reads another CTA's values.
    from numba.cuda import cg

    @cuda.jit
    def two_phases(a, out, rounds):
        g = cg.this_grid()
        i = cuda.grid(1)
        n = a.size
        for r in range(rounds):
            a[i] = i * 3 + r
            g.sync()
            # The mirror element belongs to another CTA.
            out[r, i] = a[n - 1 - i]
            g.sync()

    blocks, threads, rounds = 6, 64, 3
    n = blocks * threads
    a = cuda.device_array(n, dtype=np.int64)
    out = cuda.device_array((rounds, n), dtype=np.int64)
    two_phases[blocks, threads](a, out, rounds)
    want = np.array([[(n - 1 - i) * 3 + r for i in range(n)] for r in range(rounds)])
    assert (out.copy_to_host() == want).all()
    k = two_phases.overloads[two_phases.signatures[0]]
    assert k.cooperative
    assert k.max_cooperative_grid_blocks(threads) >= blocks


def test_cuda_cpp_grid_sync():
    # CUDA C++ cooperative groups read the grid workspace from %envreg1:%envreg2 and run
    # CUDA's own inline barrier: a cooperative launch through cuda.core.
    from cuda.bindings import driver
    from cuda.core import Device, LaunchConfig, Program, ProgramOptions, launch

    code = r"""
    #include <cooperative_groups.h>
    namespace cg = cooperative_groups;
    extern "C" __global__ void prefix(const int *x, int *partial, int *out) {
        cg::grid_group g = cg::this_grid();
        __shared__ int s;
        if (threadIdx.x == 0) s = 0;
        __syncthreads();
        atomicAdd(&s, x[g.thread_rank()]);
        __syncthreads();
        if (threadIdx.x == 0) partial[blockIdx.x] = s;
        g.sync();
        // Every thread sums the partials of the CTAs before its own.
        int acc = 0;
        for (unsigned b = 0; b < blockIdx.x; ++b) acc += partial[b];
        out[g.thread_rank()] = acc;
    }
    """
    dev = Device()
    dev.set_current()
    s = dev.create_stream()
    import importlib.util
    import os

    # The CUDA headers the nvidia-cuda-runtime and -cccl wheels install.
    nvidia = importlib.util.find_spec("nvidia").submodule_search_locations[0]
    include = os.path.join(nvidia, "cu13", "include")
    opts = ProgramOptions(arch="sm_80", include_path=[include, os.path.join(include, "cccl")])
    k = Program(code, code_type="c++", options=opts).compile("ptx").get_kernel("prefix")
    blocks, threads = 5, 96
    n = blocks * threads
    x = np.arange(n, dtype=np.int32) % 7
    bx, bp, bo = (dev.allocate(n * 4, stream=s) for _ in range(3))
    (err,) = driver.cuMemcpyHtoD(int(bx.handle), x.ctypes.data, x.nbytes)
    assert err == driver.CUresult.CUDA_SUCCESS, err
    launch(s, LaunchConfig(grid=blocks, block=threads, is_cooperative=True), k, bx, bp, bo)
    s.sync()
    out = np.empty(n, dtype=np.int32)
    (err,) = driver.cuMemcpyDtoH(out.ctypes.data, int(bo.handle), out.nbytes)
    assert err == driver.CUresult.CUDA_SUCCESS, err
    sums = x.reshape(blocks, threads).sum(axis=1)
    want = np.repeat(np.concatenate(([0], np.cumsum(sums)[:-1])), threads)
    assert (out == want).all(), (out[::threads], want[::threads])


def test_graph_capture():
    # A numba kernel launched into cuda.core's graph builder (stream capture) runs only when
    # the graph is launched, and again at each launch, with the arguments of the capture.
    from cuda.core import Device

    @cuda.jit
    def bump(a, k):
        i = cuda.grid(1)
        if i < a.size:
            a[i] += k + i

    dev = Device()
    dev.set_current()
    s = dev.create_stream()
    a = cuda.to_device(np.zeros(300, dtype=np.int64), stream=s)
    s.sync()
    gb = dev.create_graph_builder()
    gb.begin_building()
    bump[3, 128, gb](a, 5)
    graph = gb.end_building().complete()
    assert (a.copy_to_host() == 0).all()
    graph.launch(s)
    graph.launch(s)
    s.sync()
    assert (a.copy_to_host() == 2 * (5 + np.arange(300))).all()


TESTS = [v for k, v in list(globals().items()) if k.startswith("test_")]

if __name__ == "__main__":
    passed = failed = 0
    for t in TESTS:
        t0 = time.time()
        try:
            t()
            passed += 1
            print(f"PASS {t.__name__} ({time.time() - t0:.1f}s)")
        except Exception:
            failed += 1
            print(f"FAIL {t.__name__}")
            traceback.print_exc()
    print(f"numba kernels: {passed} passed, {failed} failed")
    sys.exit(1 if failed else 0)
