//! Contexts: the primary context of the device (retained and released by count), explicit
//! contexts (`cuCtxCreate`), each thread's stack of current contexts, limits, and the sticky
//! error a failed kernel leaves: as on NVIDIA's driver, after a kernel fault every call that
//! uses the context answers that error until the context is destroyed or (primary) reset.
//!
//! Handles are the addresses of `Ctx` values kept alive by the registry (`CTXS`); a handle that
//! is not there is `CUDA_ERROR_INVALID_CONTEXT`.

use std::cell::RefCell;
use std::ffi::{c_int, c_uint};
use std::sync::atomic::{AtomicI32, AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use crate::types::{CUcontext, CUdevice, CUresult, Limit, CU_CTX_FLAGS_MASK};
use crate::{device, out, CuResult};

/// A context.
pub struct Ctx {
    pub id: u64,
    pub primary: bool,
    pub flags: AtomicU32,
    pub cache_config: AtomicI32,
    limits: Mutex<Vec<(Limit, usize)>>,
    /// The error of a failed kernel, answered by later calls.
    sticky: Mutex<Option<CUresult>>,
}

impl Ctx {
    fn new(primary: bool, flags: c_uint) -> Arc<Ctx> {
        static NEXT: AtomicU64 = AtomicU64::new(1);
        Arc::new(Ctx {
            id: NEXT.fetch_add(1, Ordering::Relaxed),
            primary,
            flags: AtomicU32::new(flags),
            cache_config: AtomicI32::new(0),
            limits: Mutex::new(default_limits()),
            sticky: Mutex::new(None),
        })
    }

    /// The handle C callers hold.
    pub fn handle(self: &Arc<Ctx>) -> CUcontext {
        Arc::as_ptr(self) as CUcontext
    }

    /// `Err(sticky error)` after a kernel failed in this context.
    pub fn check(&self) -> CuResult {
        match *self.sticky.lock().unwrap_or_else(|e| e.into_inner()) {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }

    /// Records the error of a failed kernel (the first one stays).
    pub fn set_sticky(&self, e: CUresult) {
        let mut s = self.sticky.lock().unwrap_or_else(|e| e.into_inner());
        s.get_or_insert(e);
    }

    fn clear_sticky(&self) {
        *self.sticky.lock().unwrap_or_else(|e| e.into_inner()) = None;
    }

    /// The value of `limit`.
    pub fn limit(&self, limit: Limit) -> Option<usize> {
        let l = self.limits.lock().unwrap_or_else(|e| e.into_inner());
        l.iter().find(|(k, _)| *k == limit).map(|&(_, v)| v)
    }
}

/// The limits the device has and their defaults (those of an 8.0 GPU).
fn default_limits() -> Vec<(Limit, usize)> {
    vec![
        (Limit::StackSize, 1024),
        (Limit::PrintfFifoSize, 1 << 20),
        (Limit::MallocHeapSize, 8 << 20),
        (Limit::DevRuntimeSyncDepth, 2),
        (Limit::DevRuntimePendingLaunchCount, 2048),
        (Limit::MaxL2FetchGranularity, 32),
        (Limit::PersistingL2CacheSize, 0),
    ]
}

/// Every live context.
static CTXS: Mutex<Vec<Arc<Ctx>>> = Mutex::new(Vec::new());

/// The primary context, its retain count and the flags set for it.
struct Primary {
    ctx: Option<Arc<Ctx>>,
    refs: u32,
    flags: c_uint,
}

static PRIMARY: Mutex<Primary> = Mutex::new(Primary {
    ctx: None,
    refs: 0,
    flags: 0,
});

thread_local! {
    /// This thread's context stack (handles), top last.
    static STACK: RefCell<Vec<usize>> = const { RefCell::new(Vec::new()) };
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// The live context with handle `h`.
pub fn lookup(h: CUcontext) -> CuResult<Arc<Ctx>> {
    lock(&CTXS)
        .iter()
        .find(|c| std::ptr::eq(Arc::as_ptr(c).cast(), h))
        .cloned()
        .ok_or(CUresult::ErrorInvalidContext)
}

/// The calling thread's current context (`CUDA_ERROR_INVALID_CONTEXT` when none).
pub fn current() -> CuResult<Arc<Ctx>> {
    let top = STACK.with(|s| s.borrow().last().copied());
    lookup(top.ok_or(CUresult::ErrorInvalidContext)? as CUcontext)
}

/// The current context, after checking it holds no sticky error: for calls that use it.
pub fn active() -> CuResult<Arc<Ctx>> {
    let c = current()?;
    c.check()?;
    Ok(c)
}

/// The handle of the current context (null when none).
pub fn current_handle() -> CUcontext {
    current().map_or(std::ptr::null_mut(), |c| c.handle())
}

/// `ctx`, or the current context when `ctx` is null.
pub fn or_current(ctx: CUcontext) -> CuResult<Arc<Ctx>> {
    if ctx.is_null() {
        current()
    } else {
        lookup(ctx)
    }
}

/// `cuDevicePrimaryCtxRetain`.
///
/// # Safety
/// `c` null or writable.
pub unsafe fn primary_retain(c: *mut CUcontext, d: CUdevice) -> CuResult {
    crate::non_null(c)?;
    device::check(d)?;
    let mut p = lock(&PRIMARY);
    let ctx = match &p.ctx {
        Some(ctx) => ctx.clone(),
        None => {
            let ctx = Ctx::new(true, p.flags);
            lock(&CTXS).push(ctx.clone());
            p.ctx = Some(ctx.clone());
            ctx
        }
    };
    p.refs += 1;
    // SAFETY: checked non-null.
    unsafe { out(c, ctx.handle()) }
}

/// `cuDevicePrimaryCtxRelease_v2`: at zero references the context becomes inactive and
/// forgets its sticky error (its handle stays valid for a later retain).
pub fn primary_release(d: CUdevice) -> CuResult {
    device::check(d)?;
    let mut p = lock(&PRIMARY);
    if p.refs == 0 {
        return Err(CUresult::ErrorInvalidContext);
    }
    p.refs -= 1;
    if p.refs == 0 {
        if let Some(c) = &p.ctx {
            c.clear_sticky();
        }
    }
    Ok(())
}

/// `cuDevicePrimaryCtxGetState`.
///
/// # Safety
/// Pointers null or writable.
pub unsafe fn primary_state(d: CUdevice, flags: *mut c_uint, active: *mut c_int) -> CuResult {
    crate::non_null(flags)?;
    crate::non_null(active)?;
    device::check(d)?;
    let p = lock(&PRIMARY);
    // SAFETY: checked non-null.
    unsafe {
        out(flags, p.flags)?;
        out(active, (p.refs > 0) as c_int)
    }
}

/// `cuDevicePrimaryCtxSetFlags_v2`.
pub fn primary_set_flags(d: CUdevice, flags: c_uint) -> CuResult {
    device::check(d)?;
    if flags & !CU_CTX_FLAGS_MASK != 0 {
        return Err(CUresult::ErrorInvalidValue);
    }
    let mut p = lock(&PRIMARY);
    p.flags = flags;
    if let Some(c) = &p.ctx {
        c.flags.store(flags, Ordering::Relaxed);
    }
    Ok(())
}

/// `cuDevicePrimaryCtxReset_v2`: frees the context's memory and forgets its sticky error.
pub fn primary_reset(d: CUdevice) -> CuResult {
    device::check(d)?;
    let mut p = lock(&PRIMARY);
    p.refs = 0;
    if let Some(c) = &p.ctx {
        c.clear_sticky();
        crate::memory::free_context(c.id);
    }
    Ok(())
}

/// `cuCtxCreate` (every version): a new context, made current.
///
/// # Safety
/// `c` null or writable.
pub unsafe fn create(c: *mut CUcontext, flags: c_uint, d: CUdevice) -> CuResult {
    crate::non_null(c)?;
    device::check(d)?;
    if flags & !CU_CTX_FLAGS_MASK != 0 {
        return Err(CUresult::ErrorInvalidValue);
    }
    let ctx = Ctx::new(false, flags);
    lock(&CTXS).push(ctx.clone());
    let h = ctx.handle();
    STACK.with(|s| s.borrow_mut().push(h as usize));
    // SAFETY: checked non-null.
    unsafe { out(c, h) }
}

/// `cuCtxDestroy_v2`: frees the context's memory; the handle becomes invalid everywhere.
pub fn destroy(c: CUcontext) -> CuResult {
    let ctx = lookup(c)?;
    if ctx.primary {
        return Err(CUresult::ErrorInvalidContext);
    }
    lock(&CTXS).retain(|x| !Arc::ptr_eq(x, &ctx));
    STACK.with(|s| s.borrow_mut().retain(|&h| h != c as usize));
    crate::memory::free_context(ctx.id);
    Ok(())
}

/// `cuCtxPushCurrent_v2`.
pub fn push(c: CUcontext) -> CuResult {
    let ctx = lookup(c)?;
    STACK.with(|s| s.borrow_mut().push(ctx.handle() as usize));
    Ok(())
}

/// `cuCtxPopCurrent_v2`.
///
/// # Safety
/// `c` null or writable.
pub unsafe fn pop(c: *mut CUcontext) -> CuResult {
    let top = STACK
        .with(|s| s.borrow_mut().pop())
        .ok_or(CUresult::ErrorInvalidContext)?;
    if !c.is_null() {
        // SAFETY: non-null and writable by contract.
        unsafe { *c = top as CUcontext };
    }
    Ok(())
}

/// `cuCtxSetCurrent`: replaces the top of the stack (null: pops it).
pub fn set_current(c: CUcontext) -> CuResult {
    if c.is_null() {
        STACK.with(|s| s.borrow_mut().pop());
        return Ok(());
    }
    let ctx = lookup(c)?;
    STACK.with(|s| {
        let mut s = s.borrow_mut();
        s.pop();
        s.push(ctx.handle() as usize);
    });
    Ok(())
}

/// `cuCtxGetDevice(_v2)`.
///
/// # Safety
/// `d` null or writable.
pub unsafe fn get_device(d: *mut CUdevice, c: CUcontext) -> CuResult {
    crate::non_null(d)?;
    or_current(c)?;
    // SAFETY: checked non-null.
    unsafe { out(d, 0) }
}

/// `cuCtxGetFlags`.
///
/// # Safety
/// `f` null or writable.
pub unsafe fn get_flags(f: *mut c_uint) -> CuResult {
    crate::non_null(f)?;
    let c = current()?;
    // SAFETY: checked non-null.
    unsafe { out(f, c.flags.load(Ordering::Relaxed)) }
}

/// `cuCtxSetFlags`.
pub fn set_flags(f: c_uint) -> CuResult {
    if f & !CU_CTX_FLAGS_MASK != 0 {
        return Err(CUresult::ErrorInvalidValue);
    }
    current()?.flags.store(f, Ordering::Relaxed);
    Ok(())
}

/// `cuCtxGetId`.
///
/// # Safety
/// `id` null or writable.
pub unsafe fn get_id(c: CUcontext, id: *mut u64) -> CuResult {
    crate::non_null(id)?;
    let ctx = or_current(c)?;
    // SAFETY: checked non-null.
    unsafe { out(id, ctx.id) }
}

/// `cuCtxSynchronize(_v2)`: work runs when submitted, so only the sticky error is left to
/// report.
pub fn synchronize(c: CUcontext) -> CuResult {
    or_current(c)?.check()
}

/// `cuCtxSetLimit`.
pub fn set_limit(l: c_int, v: usize) -> CuResult {
    let l = Limit::from_raw(l).ok_or(CUresult::ErrorInvalidValue)?;
    let c = active()?;
    let mut limits = lock(&c.limits);
    let slot = limits
        .iter_mut()
        .find(|(k, _)| *k == l)
        .ok_or(CUresult::ErrorUnsupportedLimit)?;
    slot.1 = v;
    Ok(())
}

/// `cuCtxGetLimit`.
///
/// # Safety
/// `v` null or writable.
pub unsafe fn get_limit(v: *mut usize, l: c_int) -> CuResult {
    crate::non_null(v)?;
    let l = Limit::from_raw(l).ok_or(CUresult::ErrorInvalidValue)?;
    let x = current()?.limit(l).ok_or(CUresult::ErrorUnsupportedLimit)?;
    // SAFETY: checked non-null.
    unsafe { out(v, x) }
}

/// `cuCtxGetCacheConfig`.
///
/// # Safety
/// `c` null or writable.
pub unsafe fn get_cache_config(c: *mut c_int) -> CuResult {
    crate::non_null(c)?;
    let ctx = current()?;
    // SAFETY: checked non-null.
    unsafe { out(c, ctx.cache_config.load(Ordering::Relaxed)) }
}

/// `cuCtxSetCacheConfig`: a preference with no effect on the host (`CUfunc_cache` 0–3).
pub fn set_cache_config(c: c_int) -> CuResult {
    if !(0..=3).contains(&c) {
        return Err(CUresult::ErrorInvalidValue);
    }
    current()?.cache_config.store(c, Ordering::Relaxed);
    Ok(())
}

/// `cuCtxGetApiVersion`.
///
/// # Safety
/// `v` null or writable.
pub unsafe fn api_version(c: CUcontext, v: *mut c_uint) -> CuResult {
    crate::non_null(v)?;
    or_current(c)?;
    // SAFETY: checked non-null.
    unsafe { out(v, 3020) }
}

/// Stream priorities: 0 (least) to -5 (greatest), as on 8.0 GPUs.
pub const PRIORITY_RANGE: (c_int, c_int) = (0, -5);

/// `cuCtxGetStreamPriorityRange`.
///
/// # Safety
/// Pointers null or writable.
pub unsafe fn stream_priority_range(least: *mut c_int, greatest: *mut c_int) -> CuResult {
    current()?;
    // SAFETY: null or writable by contract.
    unsafe {
        if !least.is_null() {
            *least = PRIORITY_RANGE.0;
        }
        if !greatest.is_null() {
            *greatest = PRIORITY_RANGE.1;
        }
    }
    Ok(())
}
