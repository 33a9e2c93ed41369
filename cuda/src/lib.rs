//! `libcuda.so.1` for CPUs: the CUDA driver API over ptx2llvm's cpu target. Programs written
//! for NVIDIA's driver (C programs, numba-cuda, cuda-python) load this library instead and
//! their PTX kernels run on the host's cores.
//!
//! The device is the host: one device of compute capability 8.9 whose memory is the process's
//! memory, so a device pointer is a host pointer and mapped host memory needs no copies. Work
//! on a stream runs when it is submitted, in submission order (stream order, event order and
//! the legacy default stream's ordering against other streams hold trivially); events are
//! timestamped at record time.
//!
//! Where each group of entry points lives:
//!
//! | group | file |
//! |---|---|
//! | the entry-point table: exports, versioned names, `_ptds`/`_ptsz` twins, `cuGetProcAddress` | `exports.rs` |
//! | loader: `cuInit`, `cuDriverGetVersion`, `cuGetErrorName/String`, `cuGetExportTable`, the log | `loader.rs` |
//! | device: count, name, UUID, memory, attributes, properties, primary context | `device.rs` |
//! | contexts: create/destroy, push/pop/current, synchronize, limits, sticky errors | `context.rs` |
//! | memory: allocation table, device/host/managed/registered memory, memset, copies, pointer attributes | `memory.rs` |
//! | modules and libraries: PTX/fatbin images, functions, kernels, globals, attributes | `module.rs` |
//! | the JIT linker `cuLink*`; `libcudadevrt.a`'s cooperative-groups functions | `link.rs`, `devrt.ptx` |
//! | launches: `cuLaunchKernel(Ex)`, cooperative launches, parameters, bounds, faults | `launch.rs` |
//! | streams, events, host callbacks | `stream.rs` |
//! | IPC handles: memfd-backed exports, imports, events | `ipc.rs` |
//! | occupancy and profiler | `occupancy.rs` |
//! | C types and `cuda.h` enums (`types/gen.rs` written by `gen/types.py`) | `types/` |
//!
//! Every entry point runs under `guard`: a panic becomes `CUDA_ERROR_UNKNOWN` instead of
//! unwinding into C, calls before `cuInit` answer `CUDA_ERROR_NOT_INITIALIZED`, and
//! `PTX2LLVM_CUDA_TRACE=1` logs each call with its result and each module load with its
//! time (`PTX2LLVM_CUDA_TRACE=load`: the loads only).

pub mod context;
pub mod device;
pub mod exports;
pub mod graph;
pub mod ipc;
pub mod launch;
pub mod link;
pub mod loader;
pub mod memory;
pub mod module;
pub mod occupancy;
pub mod stream;
pub mod types;

use std::panic::{catch_unwind, AssertUnwindSafe};

pub use types::CUresult;

/// What an entry point's implementation returns: `Err` carries the error code.
pub type CuResult<T = ()> = Result<T, CUresult>;

/// Entry points that answer before `cuInit`.
const NO_INIT: [&str; 7] = [
    "cuInit",
    "cuDriverGetVersion",
    "cuGetErrorName",
    "cuGetErrorString",
    "cuGetProcAddress",
    "cuGetProcAddress_v2",
    "cuGetExportTable",
];

/// Runs an entry point's body: checks initialization, turns a panic into
/// `CUDA_ERROR_UNKNOWN` (with a log line) and the result into a `CUresult`.
pub fn guard(name: &str, f: impl FnOnce() -> CuResult) -> CUresult {
    if !loader::initialized() && !NO_INIT.contains(&name) {
        return CUresult::ErrorNotInitialized;
    }
    let r = match catch_unwind(AssertUnwindSafe(f)) {
        Ok(Ok(())) => CUresult::Success,
        Ok(Err(e)) => e,
        Err(p) => {
            let what = p
                .downcast_ref::<String>()
                .map(String::as_str)
                .or_else(|| p.downcast_ref::<&str>().copied())
                .unwrap_or("a panic");
            loader::log(&format!("internal error in {name}: {what}"));
            CUresult::ErrorUnknown
        }
    };
    if trace() {
        loader::log(&format!("{name}: {r:?}"));
    }
    r
}

/// What `PTX2LLVM_CUDA_TRACE` asks the log for.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Trace {
    Off,
    /// `load`: a line per PTX module compiled or taken from the kernel cache, with its time
    /// (what the cache saves a program, without the volume of a line per call).
    Loads,
    /// `1`: also a line per call (entry point and result: how to find which call a client's
    /// error came from).
    Calls,
}

pub(crate) fn trace_level() -> Trace {
    static LEVEL: std::sync::OnceLock<Trace> = std::sync::OnceLock::new();
    *LEVEL.get_or_init(|| match std::env::var("PTX2LLVM_CUDA_TRACE").as_deref() {
        Ok("1") => Trace::Calls,
        Ok("load") => Trace::Loads,
        _ => Trace::Off,
    })
}

fn trace() -> bool {
    trace_level() == Trace::Calls
}

/// `Err(CUDA_ERROR_INVALID_VALUE)` when `p` is null.
pub(crate) fn non_null<T>(p: *const T) -> CuResult {
    if p.is_null() {
        Err(CUresult::ErrorInvalidValue)
    } else {
        Ok(())
    }
}

/// Writes `v` through the out-pointer `p` (null: `CUDA_ERROR_INVALID_VALUE`).
///
/// # Safety
/// `p` must be null or valid for a write of `T`.
pub(crate) unsafe fn out<T>(p: *mut T, v: T) -> CuResult {
    non_null(p)?;
    // SAFETY: non-null, and valid for a write by the caller's contract.
    unsafe { p.write_unaligned(v) };
    Ok(())
}
