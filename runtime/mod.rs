//! The cpu target's runtime library: runs a grid of CTAs on a pool of worker threads, each
//! CUDA thread as a stackful coroutine, and provides what generated code cannot do alone —
//! barriers, warp-level operations, `exit`/`trap`/`__assertfail`, device `printf` and clocks —
//! through the C-ABI entry points `ptx2llvm_rt_*` (see `runtime/README.md` and
//! `include/ptx2llvm_rt.h`).
//!
//! - `abi`: the per-thread context `ptx2llvm_thread` and the operation codes;
//! - `cta`: one CTA's scheduler, barriers and warp collectives;
//! - `launch`: grid launch over the worker pool, launch limits;
//! - `local`: the workers' guarded stack areas (`.local` memory and call frames);
//! - `entry`: the `ptx2llvm_rt_*` functions;
//! - `nvvm`: host versions of the `llvm.nvvm.*` operations and the current-thread lookup;
//! - `printf`, `time`: device printf and clocks;
//! - `softfp`: the half/bfloat16 conversion builtins LLVM's host back ends call;
//! - `fault`: invalid memory accesses of kernels as launch errors (a `SIGSEGV` handler);
//! - `mbarrier`: mbarrier objects, the cluster barrier and bulk asynchronous copies;
//! - `red`: privatized global integer additions (per-worker sums, flushed at the end).

pub mod abi;
pub(crate) mod cta;
pub mod entry;
pub mod fault;
pub mod fission;
pub mod launch;
mod local;
pub mod matrix;
pub mod mbarrier;
pub mod nvvm;
mod pool;
mod printf;
pub mod red;
pub mod shared;
pub mod softfp;
mod time;

#[cfg(test)]
mod tests;

pub use abi::{KernelEntry, Thread};
pub use launch::{
    launch, launch_code, GridWorkspace, KernelCode, LaunchConfig, DEFAULT_STACK_SIZE,
    MAX_COOPERATIVE_CTAS,
};

/// Every symbol generated cpu-target code may reference, with its address (for the JIT).
pub fn symbols() -> Vec<(String, usize)> {
    let mut v: Vec<(String, usize)> = entry::symbols()
        .into_iter()
        .map(|(n, p)| (n.to_string(), p as usize))
        .collect();
    v.extend(
        mbarrier::symbols()
            .into_iter()
            .map(|(n, p)| (n.to_string(), p as usize)),
    );
    v.extend(nvvm::table().into_iter().map(|(n, p)| (n, p as usize)));
    v.extend(
        softfp::symbols()
            .into_iter()
            .map(|(n, p)| (n.to_string(), p as usize)),
    );
    let more: [(&str, *const ()); 9] = [
        ("ptx2llvm_rt_self", nvvm::ptx2llvm_rt_self as *const ()),
        (
            "ptx2llvm_rt_vprintf_dev",
            nvvm::ptx2llvm_rt_vprintf_dev as *const (),
        ),
        (
            "ptx2llvm_rt_assertfail_dev",
            nvvm::ptx2llvm_rt_assertfail_dev as *const (),
        ),
        (
            "ptx2llvm_rt_red_add_u32",
            red::ptx2llvm_rt_red_add_u32 as *const (),
        ),
        (
            "ptx2llvm_rt_red_add_u64",
            red::ptx2llvm_rt_red_add_u64 as *const (),
        ),
        (
            "ptx2llvm_rt_red_add_f32",
            red::ptx2llvm_rt_red_add_f32 as *const (),
        ),
        (
            "ptx2llvm_rt_red_window",
            red::ptx2llvm_rt_red_window as *const (),
        ),
        (
            "ptx2llvm_rt_red_add_f64",
            red::ptx2llvm_rt_red_add_f64 as *const (),
        ),
        (
            "ptx2llvm_rt_fis_trap",
            fission::ptx2llvm_rt_fis_trap as *const (),
        ),
    ];
    v.extend(more.iter().map(|&(n, p)| (n.to_string(), p as usize)));
    v
}

/// `ptx2llvm_rt_lookup(name)`: the address of the runtime function `name` (any symbol of
/// `symbols()`), or null. Objects made with `--emit obj` reach the helpers that have no
/// exported symbol of their own (`ptx2llvm_nvvm_*`) through it, once per helper.
///
/// # Safety
/// `name` must be null or a C string.
#[no_mangle]
pub unsafe extern "C" fn ptx2llvm_rt_lookup(
    name: *const std::ffi::c_char,
) -> *const std::ffi::c_void {
    if name.is_null() {
        return std::ptr::null();
    }
    let Ok(name) = std::ffi::CStr::from_ptr(name).to_str() else {
        return std::ptr::null();
    };
    std::panic::catch_unwind(|| {
        symbols()
            .into_iter()
            .find(|(n, _)| n == name)
            .map_or(std::ptr::null(), |(_, a)| a as *const std::ffi::c_void)
    })
    .unwrap_or(std::ptr::null())
}

/// Whether generated code must reach `name` through `ptx2llvm_rt_lookup` when it is linked
/// as an object: the runtime helpers that are not exported under their own name.
pub fn needs_lookup(name: &str) -> bool {
    nvvm::table().iter().any(|(n, _)| n == name)
}

/// Why a launch failed.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum LaunchError {
    /// The grid, block or shared-memory size is outside the limits.
    #[error("invalid launch configuration: {0}")]
    Config(String),
    /// A thread executed `trap`, failed an assertion or misused a warp operation.
    #[error(
        "kernel {kernel} failed in block ({}, {}, {}), thread ({}, {}, {}): {message}",
        block[0], block[1], block[2], thread[0], thread[1], thread[2]
    )]
    Trap {
        kernel: String,
        block: [u32; 3],
        thread: [u32; 3],
        message: String,
    },
    /// No thread of a CTA can make progress.
    #[error("kernel {kernel} deadlocked in block ({}, {}, {}): {detail}", block[0], block[1], block[2])]
    Deadlock {
        kernel: String,
        block: [u32; 3],
        detail: String,
    },
    /// Stacks or worker threads could not be had.
    #[error("launch resources: {0}")]
    Resource(String),
}
