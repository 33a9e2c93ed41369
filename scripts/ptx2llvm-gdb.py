# ptx2llvm-gdb.py: gdb commands that show which CUDA thread a host thread is running when a
# kernel launched by `ptx2llvm run` (or the library / C API) stops in gdb. Load it with
#
#   gdb -x scripts/ptx2llvm-gdb.py --args ptx2llvm run kernel.ptx ... --serial -g
#
# and then, stopped in a kernel:
#
#   (gdb) cuda-thread
#   block (1, 0, 0) thread (3, 0, 0) of grid (2, 1, 1) x block (4, 1, 1)
#   (gdb) break kernel.cu:12 if $cuda_ctaid(0) == 1 && $cuda_tid(0) == 3
#
# The runtime keeps, per host thread, a pointer to the context of the CUDA thread it runs
# (`ptx2llvm_thread`, include/ptx2llvm_rt.h); `ptx2llvm_rt_self()` returns it. The script calls
# that function in the stopped process (it only reads a thread-local) and reads the context's
# `%tid`, `%ntid`, `%ctaid` and `%nctaid` at their fixed offsets (runtime/abi.rs `offset`).
# Kernels running as thread loops (the default for kernels that allow it) share one context per
# worker whose `%tid` is not kept up to date, so the thread is reported unknown there; `-g` (or
# PTX2LLVM_CPU_MODE=coroutine) runs each CUDA thread as a coroutine with its own context.

import struct

import gdb

# Byte offsets in `ptx2llvm_thread` (runtime/abi.rs, `offset`).
_TID, _NTID, _CTAID, _NCTAID, _FIS_FAULT, _SIZE = 0, 12, 24, 36, 120, 136


def _context():
    """The selected host thread's CUDA-thread context as a dict, or None outside a kernel."""
    if gdb.selected_thread() is None:
        raise gdb.GdbError("cuda-thread: the program is not running")
    # Rust frames parse expressions with gdb's Rust grammar, which has no C function-pointer
    # casts: evaluate the call as C whatever the frame's language is.
    lang = gdb.parameter("language")
    gdb.execute("set language c", to_string=True)
    try:
        ptr = int(gdb.parse_and_eval("((unsigned long (*)(void)) ptx2llvm_rt_self)()"))
    except gdb.error as e:
        raise gdb.GdbError(
            "cuda-thread: cannot call ptx2llvm_rt_self() (is this a ptx2llvm process?): %s" % e
        )
    finally:
        gdb.execute("set language %s" % lang, to_string=True)
    if ptr == 0:
        return None
    raw = bytes(gdb.selected_inferior().read_memory(ptr, _SIZE))

    def dim3(off):
        return struct.unpack_from("<3I", raw, off)

    loops = struct.unpack_from("<Q", raw, _FIS_FAULT)[0] != 0
    return {
        "tid": None if loops else dim3(_TID),
        "ntid": dim3(_NTID),
        "ctaid": dim3(_CTAID),
        "nctaid": dim3(_NCTAID),
    }


def _fmt(d):
    return "(%d, %d, %d)" % d


class CudaThread(gdb.Command):
    """Print the CUDA block and thread that the selected host thread is running.

    Usage: cuda-thread
    Prints `block (X, Y, Z) thread (X, Y, Z) of grid (...) x block (...)`, or says that the
    thread runs no kernel. For kernels compiled as thread loops (run without -g) the block is
    known but not the thread."""

    def __init__(self):
        super().__init__("cuda-thread", gdb.COMMAND_STATUS)

    def invoke(self, arg, from_tty):
        c = _context()
        if c is None:
            print("this host thread is not running a CUDA thread")
            return
        tid = (
            _fmt(c["tid"])
            if c["tid"] is not None
            else "unknown (the kernel runs as thread loops: use -g or PTX2LLVM_CPU_MODE=coroutine)"
        )
        print(
            "block %s thread %s of grid %s x block %s"
            % (_fmt(c["ctaid"]), tid, _fmt(c["nctaid"]), _fmt(c["ntid"]))
        )


class _Dim(gdb.Function):
    """Base of $cuda_tid(D) and $cuda_ctaid(D): component D (0 = x, 1 = y, 2 = z); -1 when the
    selected host thread runs no CUDA thread (or, for $cuda_tid, runs thread loops)."""

    def __init__(self, name, key):
        super().__init__(name)
        self.key = key

    def invoke(self, dim=0):
        d = int(dim)
        if d not in (0, 1, 2):
            raise gdb.GdbError("$%s(D): D is 0 (x), 1 (y) or 2 (z), not %d" % (self.name, d))
        c = _context()
        v = None if c is None else c[self.key]
        return -1 if v is None else v[d]


class _CudaTid(_Dim):
    """$cuda_tid(D): %tid of the CUDA thread the selected host thread runs (D: 0 = x, 1 = y,
    2 = z); -1 outside a kernel or for thread-loop kernels."""

    def __init__(self):
        self.name = "cuda_tid"
        super().__init__(self.name, "tid")


class _CudaCtaid(_Dim):
    """$cuda_ctaid(D): %ctaid of the CUDA thread the selected host thread runs (D: 0 = x,
    1 = y, 2 = z); -1 outside a kernel."""

    def __init__(self):
        self.name = "cuda_ctaid"
        super().__init__(self.name, "ctaid")


CudaThread()
_CudaTid()
_CudaCtaid()
