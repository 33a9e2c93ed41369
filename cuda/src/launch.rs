//! Launches: `cuLaunchKernel` (parameters as `kernelParams` pointers or one `extra` buffer),
//! `cuLaunchKernelEx` (its attributes: cooperative launches; clusters are refused) and
//! `cuLaunchCooperativeKernel`. The configuration is checked against the device's and the
//! kernel's limits (`CUDA_ERROR_INVALID_VALUE`); the kernel then runs on the host's cores
//! before the call returns. A kernel that faults, traps or fails an assertion leaves its
//! context with the sticky error `CUDA_ERROR_ILLEGAL_ADDRESS` / `CUDA_ERROR_LAUNCH_FAILED` /
//! `CUDA_ERROR_ASSERT` (the driver's asynchronous behaviour: the launch itself succeeds, later
//! calls report the failure) and the message — kernel, block, thread, what happened — goes
//! to the log (`loader::log`). The process is never taken down.

use std::ffi::{c_uint, c_void};
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};

use ptx2llvm::api::ApiError;
use ptx2llvm::runtime::{LaunchConfig, LaunchError, DEFAULT_STACK_SIZE};

use crate::graph::{NodeType, Work};
use crate::module::{self, Module};
use crate::types::*;
use crate::{device, loader, occupancy, stream, CuResult};

/// How a grid is launched.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Normal,
    /// All blocks must be resident at once (`cuLaunchCooperativeKernel`).
    Cooperative,
}

/// Kernels run one at a time: each already uses every core, and the JIT engines of the
/// modules are not shared between threads otherwise.
static LAUNCH: Mutex<()> = Mutex::new(());

/// The error a failed kernel leaves, from the runtime's message.
fn kernel_error(e: &LaunchError) -> CUresult {
    match e {
        LaunchError::Trap { message, .. } => {
            if message.starts_with("invalid memory access") || message.contains("stack overflow") {
                CUresult::ErrorIllegalAddress
            } else if message.starts_with("assertion") {
                CUresult::ErrorAssert
            } else if message.contains("misaligned") {
                CUresult::ErrorMisalignedAddress
            } else {
                CUresult::ErrorLaunchFailed
            }
        }
        LaunchError::Deadlock { .. } => CUresult::ErrorLaunchFailed,
        LaunchError::Resource(_) => CUresult::ErrorLaunchOutOfResources,
        LaunchError::Config(_) => CUresult::ErrorInvalidValue,
    }
}

/// Checks the grid, block and shared memory against the limits of the device and kernel.
fn check_config(
    m: &Module,
    k: usize,
    grid: [c_uint; 3],
    block: [c_uint; 3],
    shared: c_uint,
) -> CuResult {
    let bad = |why: String| {
        loader::log(&format!(
            "invalid launch of {}: {why}",
            m.functions[k].name.to_string_lossy()
        ));
        Err(CUresult::ErrorInvalidValue)
    };
    if grid.contains(&0) || block.contains(&0) {
        return bad(format!(
            "grid {grid:?} and block {block:?} need every dimension at least 1"
        ));
    }
    if block[0] > 1024 || block[1] > 1024 || block[2] > 64 {
        return bad(format!("block {block:?} exceeds (1024, 1024, 64)"));
    }
    if grid[0] > i32::MAX as u32 || grid[1] > 65535 || grid[2] > 65535 {
        return bad(format!("grid {grid:?} exceeds (2147483647, 65535, 65535)"));
    }
    if let Some(r) = m.functions[k].attrs.reqntid.filter(|&r| r != block) {
        return bad(format!(
            "block {block:?}: the kernel requires {r:?} (.reqntid)"
        ));
    }
    let threads = block.iter().map(|&d| d as u64).product::<u64>();
    let most = module::attribute_value(m, k, FuncAttr::MaxThreadsPerBlock) as u64;
    if threads > most {
        return bad(format!(
            "block {block:?} has {threads} threads; the kernel allows at most {most}"
        ));
    }
    let dynamic_most = m.functions[k]
        .max_dynamic_shared
        .load(Ordering::Relaxed)
        .max(0) as u32;
    if shared > dynamic_most {
        return bad(format!(
            "{shared} bytes of dynamic shared memory; the kernel allows {dynamic_most} (raise \
             it with CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, up to {} less the static \
             part)",
            device::SHARED_PER_BLOCK_OPTIN
        ));
    }
    Ok(())
}

/// The kernel's parameter buffer from `kernelParams` or `extra`.
///
/// # Safety
/// `params` null or one pointer per parameter, each to a value of the parameter's size;
/// `extra` null or a `CU_LAUNCH_PARAM_END`-terminated key/value list.
unsafe fn param_buffer(
    m: &Module,
    k: usize,
    params: *mut *mut c_void,
    extra: *mut *mut c_void,
) -> CuResult<Vec<u8>> {
    let layout = &m.functions[k].params;
    let mut buf = vec![0u8; layout.size as usize];
    match (params.is_null(), extra.is_null()) {
        (false, false) => Err(CUresult::ErrorInvalidValue),
        (false, true) => {
            for (i, p) in layout.params.iter().enumerate() {
                // SAFETY: one pointer per parameter by contract.
                let src = unsafe { *params.add(i) } as *const u8;
                crate::non_null(src)?;
                // SAFETY: `src` holds the parameter's `size` bytes; the layout keeps
                // `offset + size` within the buffer.
                unsafe {
                    std::ptr::copy_nonoverlapping(
                        src,
                        buf.as_mut_ptr().add(p.offset as usize),
                        p.size as usize,
                    )
                };
            }
            Ok(buf)
        }
        (true, false) => {
            let (mut ptr, mut size): (*const u8, Option<usize>) = (std::ptr::null(), None);
            let mut i = 0;
            loop {
                // SAFETY: a terminated key/value list by contract.
                let key = unsafe { *extra.add(i) } as usize;
                if key == CU_LAUNCH_PARAM_END {
                    break;
                }
                // SAFETY: every key but the end has a value.
                let value = unsafe { *extra.add(i + 1) };
                match key {
                    CU_LAUNCH_PARAM_BUFFER_POINTER => ptr = value as *const u8,
                    // SAFETY: the value of BUFFER_SIZE points to a size_t.
                    CU_LAUNCH_PARAM_BUFFER_SIZE => size = Some(unsafe { *(value as *const usize) }),
                    _ => return Err(CUresult::ErrorInvalidValue),
                }
                i += 2;
            }
            let size = size.ok_or(CUresult::ErrorInvalidValue)?;
            if size < buf.len() || (ptr.is_null() && !buf.is_empty()) {
                return Err(CUresult::ErrorInvalidValue);
            }
            if !buf.is_empty() {
                // SAFETY: the caller's buffer holds `size` >= `buf.len()` bytes.
                unsafe { std::ptr::copy_nonoverlapping(ptr, buf.as_mut_ptr(), buf.len()) };
            }
            Ok(buf)
        }
        (true, true) if layout.params.is_empty() => Ok(buf),
        (true, true) => Err(CUresult::ErrorInvalidValue),
    }
}

/// `cuLaunchKernel`, `cuLaunchCooperativeKernel`; in a stream capture, a kernel node.
///
/// # Safety
/// As `param_buffer`; the pointers among the parameters name memory the kernel may use.
#[allow(clippy::too_many_arguments)]
pub unsafe fn launch(
    f: CUfunction,
    grid: [c_uint; 3],
    block: [c_uint; 3],
    shared: c_uint,
    s: CUstream,
    params: *mut *mut c_void,
    extra: *mut *mut c_void,
    kind: Kind,
) -> CuResult {
    module::function(f)?;
    stream::resolve(s)?;
    // SAFETY: by contract.
    let work = unsafe { prepare(f, grid, block, shared, params, extra, kind) }?;
    match stream::capture(s)? {
        Some(c) => c.record(NodeType::Kernel, work),
        None => work(s),
    }
}

/// A launch of `f` checked and its parameters copied, to run on a stream now or when a graph
/// replays it.
///
/// # Safety
/// As `param_buffer`; the pointers among the parameters name memory the kernel may use when
/// the work runs.
pub unsafe fn prepare(
    f: CUfunction,
    grid: [c_uint; 3],
    block: [c_uint; 3],
    shared: c_uint,
    params: *mut *mut c_void,
    extra: *mut *mut c_void,
    kind: Kind,
) -> CuResult<Work> {
    let (m, k) = module::function(f)?;
    check_config(&m, k, grid, block, shared)?;
    if kind == Kind::Cooperative {
        let per_sm = occupancy::blocks_per_sm(&m, k, block.iter().product(), shared as usize);
        let most = (per_sm as u64 * device::sm_count() as u64)
            .min(ptx2llvm::runtime::MAX_COOPERATIVE_CTAS);
        if grid.iter().map(|&d| d as u64).product::<u64>() > most {
            return Err(CUresult::ErrorCooperativeLaunchTooLarge);
        }
    }
    // SAFETY: by contract.
    let buf = unsafe { param_buffer(&m, k, params, extra) }?;
    let f = f as usize;
    // SAFETY: `buf` is in the kernel's layout; its pointers are the caller's device memory
    // (faults become launch errors).
    Ok(Arc::new(move |s| unsafe {
        run(f as CUfunction, grid, block, shared, s, &buf, kind)
    }))
}

/// Runs a checked launch with its parameter buffer on stream `s`.
///
/// # Safety
/// `buf` in the kernel's layout, its pointers memory the kernel may use.
unsafe fn run(
    f: CUfunction,
    grid: [c_uint; 3],
    block: [c_uint; 3],
    shared: c_uint,
    s: CUstream,
    buf: &[u8],
    kind: Kind,
) -> CuResult {
    let (m, k) = module::function(f)?;
    let ctx = stream::resolve(s)?;
    let stack = ctx
        .limit(Limit::StackSize)
        .unwrap_or(0)
        .max(DEFAULT_STACK_SIZE);
    let cfg = LaunchConfig {
        grid,
        block,
        dynamic_shared: shared,
        stack_size: stack,
        cooperative: kind == Kind::Cooperative,
        ..LaunchConfig::default()
    };
    let name = m.functions[k].name.to_string_lossy().into_owned();
    let r = {
        let _one = LAUNCH.lock().unwrap_or_else(|e| e.into_inner());
        // SAFETY: by contract.
        unsafe { m.module.launch_raw(&name, &cfg, buf) }
    };
    match r {
        Ok(()) => Ok(()),
        Err(ApiError::Launch(e)) => {
            let code = kernel_error(&e);
            loader::log(&format!("{e}"));
            if matches!(e, LaunchError::Trap { .. } | LaunchError::Deadlock { .. }) {
                ctx.set_sticky(code);
                Ok(())
            } else {
                Err(code)
            }
        }
        Err(e) => {
            loader::log(&format!("cannot launch {name}: {e}"));
            Err(CUresult::ErrorInvalidValue)
        }
    }
}

/// `cuLaunchKernelEx`.
///
/// # Safety
/// `cfg` a launch configuration with `num_attrs` attributes; the rest as `launch`.
pub unsafe fn launch_ex(
    cfg: *const CUlaunchConfig,
    f: CUfunction,
    params: *mut *mut c_void,
    extra: *mut *mut c_void,
) -> CuResult {
    crate::non_null(cfg)?;
    // SAFETY: checked non-null; valid by contract.
    let c = unsafe { &*cfg };
    let mut kind = Kind::Normal;
    if c.num_attrs > 0 {
        crate::non_null(c.attrs)?;
    }
    for i in 0..c.num_attrs as usize {
        // SAFETY: `num_attrs` entries by contract.
        let a = unsafe { *c.attrs.add(i) };
        match LaunchAttrId::from_raw(a.id) {
            Some(LaunchAttrId::Cooperative) => {
                if a.value[0] as u32 != 0 {
                    kind = Kind::Cooperative;
                }
            }
            Some(LaunchAttrId::ClusterDimension) => {
                let (x, y, z) = (
                    a.value[0] as u32,
                    (a.value[0] >> 32) as u32,
                    a.value[1] as u32,
                );
                if x * y * z > 1 {
                    loader::log(&format!(
                        "cluster dimensions ({x}, {y}, {z}): thread block clusters do not run on the cpu target"
                    ));
                    return Err(CUresult::ErrorNotSupported);
                }
            }
            Some(_) => {}
            None => return Err(CUresult::ErrorInvalidValue),
        }
    }
    // SAFETY: by contract.
    unsafe {
        launch(
            f,
            c.grid,
            c.block,
            c.shared_mem_bytes,
            c.stream,
            params,
            extra,
            kind,
        )
    }
}
