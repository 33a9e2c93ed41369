//! Occupancy queries, computed from the limits `device.rs` reports (compute capability 8.0's
//! threads, blocks and shared memory per multiprocessor), and the profiler's start/stop,
//! which have nothing to control here.

use std::ffi::c_int;

use crate::module::{self, Module};
use crate::types::*;
use crate::{device, out, CuResult};

/// Blocks of `threads` threads with `dynamic` bytes of dynamic shared memory that fit one
/// multiprocessor at once.
pub fn blocks_per_sm(m: &Module, k: usize, threads: u32, dynamic: usize) -> u32 {
    let most = module::attribute_value(m, k, FuncAttr::MaxThreadsPerBlock) as u32;
    if threads == 0 || threads > most {
        return 0;
    }
    let warps = threads.div_ceil(32) * 32;
    let by_threads = device::MAX_THREADS_PER_SM / warps;
    let shared = m.module.program().static_shared() as usize + dynamic;
    let by_shared = (device::SHARED_PER_SM as usize)
        .checked_div(shared)
        .map_or(u32::MAX, |b| b as u32);
    by_threads.min(by_shared).min(device::MAX_BLOCKS_PER_SM)
}

/// `cuOccupancyMaxActiveBlocksPerMultiprocessor(WithFlags)`.
///
/// # Safety
/// `n` null or writable.
pub unsafe fn active_blocks(n: *mut c_int, f: CUfunction, block: c_int, shared: usize) -> CuResult {
    crate::non_null(n)?;
    let (m, k) = module::function(f)?;
    if block <= 0 {
        return Err(CUresult::ErrorInvalidValue);
    }
    // SAFETY: checked non-null.
    unsafe { out(n, blocks_per_sm(&m, k, block as u32, shared) as c_int) }
}

/// `cuOccupancyMaxPotentialBlockSize(WithFlags)`: the block size (a multiple of 32 up to the
/// limit) with the most resident threads, the largest on ties, and the grid that fills the
/// device with it.
///
/// # Safety
/// Pointers null or writable; `smem` callable.
pub unsafe fn potential_block_size(
    grid: *mut c_int,
    block: *mut c_int,
    f: CUfunction,
    smem: B2DSize,
    shared: usize,
    limit: c_int,
) -> CuResult {
    crate::non_null(grid)?;
    crate::non_null(block)?;
    let (m, k) = module::function(f)?;
    let most = module::attribute_value(&m, k, FuncAttr::MaxThreadsPerBlock) as u32;
    let top = if limit > 0 {
        most.min(limit as u32)
    } else {
        most
    };
    let mut best = (0u32, 0u32, 0u32);
    let mut bs = top;
    while bs > 0 {
        // SAFETY: the caller's function.
        let dynamic = smem.map_or(shared, |g| unsafe { g(bs as c_int) });
        let blocks = blocks_per_sm(&m, k, bs, dynamic);
        if blocks * bs > best.0 {
            best = (blocks * bs, bs, blocks);
        }
        bs = if bs % 32 == 0 { bs - 32 } else { bs / 32 * 32 };
    }
    // SAFETY: checked non-null.
    unsafe {
        out(block, best.1 as c_int)?;
        out(grid, (best.2 as c_int).saturating_mul(device::sm_count()))
    }
}

/// `cuOccupancyAvailableDynamicSMemPerBlock`.
///
/// # Safety
/// `n` null or writable.
pub unsafe fn available_shared(
    n: *mut usize,
    f: CUfunction,
    blocks: c_int,
    block: c_int,
) -> CuResult {
    crate::non_null(n)?;
    let (m, k) = module::function(f)?;
    if blocks <= 0 || block <= 0 {
        return Err(CUresult::ErrorInvalidValue);
    }
    if blocks_per_sm(&m, k, block as u32, 0) < blocks as u32 {
        // SAFETY: checked non-null.
        return unsafe { out(n, 0) };
    }
    let stat = m.module.program().static_shared() as usize;
    let per = (device::SHARED_PER_SM as usize / blocks as usize)
        .min(device::SHARED_PER_BLOCK_OPTIN as usize)
        .saturating_sub(stat);
    // SAFETY: checked non-null.
    unsafe { out(n, per) }
}
