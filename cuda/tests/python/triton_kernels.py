# triton_kernels.py: Triton tutorial kernels compiled by Triton and launched by Triton's own
# launcher against ptx2llvm's libcuda.so.1 (scripts/test.sh's Python stage runs it with
# LD_LIBRARY_PATH=target/release/cuda, TRITON_LIBCUDA_PATH=target/release/cuda and
# TRITON_PTXAS_PATH=scripts/ptxas-standin, which hands Triton the PTX as its "cubin").
#
# Without torch: Triton's CUDA driver takes the current device, stream and compute capability
# from torch, so `DriverWithoutTorch` answers them from the driver API (cuda.bindings), and the
# kernels' arguments are `DeviceArray`s (device memory from cuMemAlloc with `data_ptr()` and a
# numpy `dtype`, which is all Triton asks of a tensor). Results are checked against NumPy.
# Prints one line per test and "triton kernels: P passed, F failed"; exits 1 when any failed.
import sys
import time
import traceback

import numpy as np
from cuda.bindings import driver as cu


def check(r):
    err = r[0] if isinstance(r, tuple) else r
    assert err == cu.CUresult.CUDA_SUCCESS, err
    if isinstance(r, tuple) and len(r) == 2:
        return r[1]
    return r[1:] if isinstance(r, tuple) else None


check(cu.cuInit(0))
DEVICE = check(cu.cuDeviceGet(0))
check(cu.cuCtxSetCurrent(check(cu.cuDevicePrimaryCtxRetain(DEVICE))))

import triton  # noqa: E402  (after the context exists)
import triton.language as tl  # noqa: E402
from triton.backends.nvidia.driver import CudaDriver, CudaLauncher, CudaUtils  # noqa: E402


class DriverWithoutTorch(CudaDriver):
    def __init__(self):
        self.utils = CudaUtils()
        self.launcher_cls = CudaLauncher

    def get_current_device(self):
        return 0

    def set_current_device(self, device):
        assert device == 0

    def get_current_stream(self, device=None):
        return 0

    def get_device_capability(self, device=0):
        attr = cu.CUdevice_attribute
        major = check(cu.cuDeviceGetAttribute(attr.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, DEVICE))
        minor = check(cu.cuDeviceGetAttribute(attr.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, DEVICE))
        return major, minor

    @staticmethod
    def is_active():
        return True


triton.runtime.driver.set_active(DriverWithoutTorch())


class DeviceArray:
    """Device memory holding a copy of a NumPy array."""

    def __init__(self, host):
        self.host = np.ascontiguousarray(host)
        self.dtype = self.host.dtype
        self.ptr = int(check(cu.cuMemAlloc(max(self.host.nbytes, 1))))
        check(cu.cuMemcpyHtoD(self.ptr, self.host.ctypes.data, self.host.nbytes))

    def data_ptr(self):
        return self.ptr

    def numpy(self):
        out = np.empty_like(self.host)
        check(cu.cuCtxSynchronize())
        check(cu.cuMemcpyDtoH(out.ctypes.data, self.ptr, out.nbytes))
        return out

    def __del__(self):
        cu.cuMemFree(self.ptr)


@triton.jit
def add_kernel(x_ptr, y_ptr, output_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(axis=0)
    block_start = pid * BLOCK_SIZE
    offsets = block_start + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    tl.store(output_ptr + offsets, x + y, mask=mask)


def test_vector_add():
    rng = np.random.default_rng(0)
    n = 98432
    x, y = rng.random(n, dtype=np.float32), rng.random(n, dtype=np.float32)
    dx, dy, out = DeviceArray(x), DeviceArray(y), DeviceArray(np.zeros(n, np.float32))
    add_kernel[(triton.cdiv(n, 1024),)](dx, dy, out, n, BLOCK_SIZE=1024)
    np.testing.assert_array_equal(out.numpy(), x + y)


@triton.jit
def softmax_kernel(output_ptr, input_ptr, input_row_stride, output_row_stride, n_rows, n_cols,
                   BLOCK_SIZE: tl.constexpr):
    row_start = tl.program_id(0)
    row_step = tl.num_programs(0)
    for row_idx in tl.range(row_start, n_rows, row_step):
        row_start_ptr = input_ptr + row_idx * input_row_stride
        col_offsets = tl.arange(0, BLOCK_SIZE)
        input_ptrs = row_start_ptr + col_offsets
        mask = col_offsets < n_cols
        row = tl.load(input_ptrs, mask=mask, other=-float("inf"))
        row_minus_max = row - tl.max(row, axis=0)
        numerator = tl.exp(row_minus_max)
        denominator = tl.sum(numerator, axis=0)
        softmax_output = numerator / denominator
        output_row_start_ptr = output_ptr + row_idx * output_row_stride
        tl.store(output_row_start_ptr + col_offsets, softmax_output, mask=mask)


def test_softmax():
    rng = np.random.default_rng(1)
    rows, cols = 123, 781
    x = rng.standard_normal((rows, cols), dtype=np.float32)
    dx, out = DeviceArray(x), DeviceArray(np.zeros_like(x))
    block = triton.next_power_of_2(cols)
    softmax_kernel[(32,)](out, dx, cols, cols, rows, cols, BLOCK_SIZE=block, num_warps=8)
    e = np.exp(x - x.max(axis=1, keepdims=True))
    np.testing.assert_allclose(out.numpy(), e / e.sum(axis=1, keepdims=True), rtol=1e-5, atol=1e-7)


@triton.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn,
                  stride_cm, stride_cn, BLOCK_SIZE_M: tl.constexpr, BLOCK_SIZE_N: tl.constexpr,
                  BLOCK_SIZE_K: tl.constexpr):
    pid = tl.program_id(axis=0)
    num_pid_n = tl.cdiv(N, BLOCK_SIZE_N)
    pid_m = pid // num_pid_n
    pid_n = pid % num_pid_n
    offs_am = (pid_m * BLOCK_SIZE_M + tl.arange(0, BLOCK_SIZE_M)) % M
    offs_bn = (pid_n * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)) % N
    offs_k = tl.arange(0, BLOCK_SIZE_K)
    a_ptrs = a_ptr + (offs_am[:, None] * stride_am + offs_k[None, :] * stride_ak)
    b_ptrs = b_ptr + (offs_k[:, None] * stride_bk + offs_bn[None, :] * stride_bn)
    accumulator = tl.zeros((BLOCK_SIZE_M, BLOCK_SIZE_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_SIZE_K)):
        a = tl.load(a_ptrs, mask=offs_k[None, :] < K - k * BLOCK_SIZE_K, other=0.0)
        b = tl.load(b_ptrs, mask=offs_k[:, None] < K - k * BLOCK_SIZE_K, other=0.0)
        accumulator = tl.dot(a, b, accumulator)
        a_ptrs += BLOCK_SIZE_K * stride_ak
        b_ptrs += BLOCK_SIZE_K * stride_bk
    c = accumulator.to(tl.float16)
    offs_cm = pid_m * BLOCK_SIZE_M + tl.arange(0, BLOCK_SIZE_M)
    offs_cn = pid_n * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)
    c_ptrs = c_ptr + stride_cm * offs_cm[:, None] + stride_cn * offs_cn[None, :]
    c_mask = (offs_cm[:, None] < M) & (offs_cn[None, :] < N)
    tl.store(c_ptrs, c, mask=c_mask)


def test_matmul_fp16():
    rng = np.random.default_rng(2)
    M, N, K = 128, 96, 80
    a = rng.standard_normal((M, K)).astype(np.float16)
    b = rng.standard_normal((K, N)).astype(np.float16)
    da, db, dc = DeviceArray(a), DeviceArray(b), DeviceArray(np.zeros((M, N), np.float16))
    bm, bn, bk = 64, 32, 32
    grid = (triton.cdiv(M, bm) * triton.cdiv(N, bn),)
    matmul_kernel[grid](da, db, dc, M, N, K, K, 1, N, 1, N, 1, BLOCK_SIZE_M=bm, BLOCK_SIZE_N=bn,
                        BLOCK_SIZE_K=bk, num_warps=4)
    want = a.astype(np.float32) @ b.astype(np.float32)
    np.testing.assert_allclose(dc.numpy().astype(np.float32), want, rtol=1e-2, atol=2e-2)


TESTS = [v for k, v in list(globals().items()) if k.startswith("test_")]

if __name__ == "__main__":
    passed = failed = 0
    only = sys.argv[1:]
    for t in TESTS:
        if only and t.__name__ not in only:
            continue
        t0 = time.time()
        try:
            t()
            passed += 1
            print(f"PASS {t.__name__} ({time.time() - t0:.1f}s)", flush=True)
        except Exception:
            failed += 1
            print(f"FAIL {t.__name__}", flush=True)
            traceback.print_exc()
    print(f"triton kernels: {passed} passed, {failed} failed")
    sys.exit(1 if failed else 0)
