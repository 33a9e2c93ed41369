//! Streams, events and host callbacks. Work runs when it is submitted, on the submitting
//! thread, so everything on a stream happens in order, the legacy default stream is ordered
//! against every blocking stream, an event is complete once recorded (its timestamp is taken
//! then, after the work before it), `cuStreamWaitEvent` has nothing left to wait for, and host
//! callbacks run at once with the context's status. Handles are registry-checked addresses;
//! the null stream, `CU_STREAM_LEGACY` and `CU_STREAM_PER_THREAD` name the current context's
//! default stream.

use std::ffi::{c_int, c_uint, c_void};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use crate::context::{self, Ctx, PRIORITY_RANGE};
use crate::graph::{NodeType, Session, Work};
use crate::types::*;
use crate::{out, CuResult};

/// A stream.
pub struct Stream {
    ctx: Arc<Ctx>,
    flags: c_uint,
    priority: c_int,
    id: u64,
    /// The capture it records into (`cuStreamBeginCapture`, or joined through an event).
    capture: Mutex<Option<Arc<Session>>>,
}

/// An event.
pub struct Event {
    flags: c_uint,
    /// When it was last recorded.
    time: Mutex<Option<Instant>>,
    /// The capture it was last recorded in: a stream that waits for it joins that capture.
    session: Mutex<Option<Arc<Session>>>,
}

static STREAMS: Mutex<Vec<Arc<Stream>>> = Mutex::new(Vec::new());
static EVENTS: Mutex<Vec<Arc<Event>>> = Mutex::new(Vec::new());
static NEXT_ID: AtomicU64 = AtomicU64::new(3);

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

fn is_default(s: CUstream) -> bool {
    matches!(s as usize, 0 | CU_STREAM_LEGACY | CU_STREAM_PER_THREAD)
}

fn lookup(s: CUstream) -> CuResult<Arc<Stream>> {
    lock(&STREAMS)
        .iter()
        .find(|x| std::ptr::eq(Arc::as_ptr(x).cast(), s))
        .cloned()
        .ok_or(CUresult::ErrorInvalidHandle)
}

fn event(e: CUevent) -> CuResult<Arc<Event>> {
    lock(&EVENTS)
        .iter()
        .find(|x| std::ptr::eq(Arc::as_ptr(x).cast(), e))
        .cloned()
        .ok_or(CUresult::ErrorInvalidHandle)
}

/// The context of stream `s` without the sticky-error check.
fn stream_ctx(s: CUstream) -> CuResult<Arc<Ctx>> {
    if is_default(s) {
        context::current()
    } else {
        Ok(lookup(s)?.ctx.clone())
    }
}

/// The context work on stream `s` runs in, after checking the handle and the sticky error.
pub fn resolve(s: CUstream) -> CuResult<Arc<Ctx>> {
    let c = stream_ctx(s)?;
    c.check()?;
    Ok(c)
}

/// `cuStreamCreate`, `cuStreamCreateWithPriority` (priorities clamped to the range).
///
/// # Safety
/// `s` null or writable.
pub unsafe fn create(s: *mut CUstream, flags: c_uint, priority: c_int) -> CuResult {
    crate::non_null(s)?;
    if flags & !CU_STREAM_NON_BLOCKING != 0 {
        return Err(CUresult::ErrorInvalidValue);
    }
    let ctx = context::active()?;
    let st = Arc::new(Stream {
        ctx,
        flags,
        priority: priority.clamp(PRIORITY_RANGE.1, PRIORITY_RANGE.0),
        id: NEXT_ID.fetch_add(1, Ordering::Relaxed),
        capture: Mutex::new(None),
    });
    let h = Arc::as_ptr(&st) as CUstream;
    lock(&STREAMS).push(st);
    // SAFETY: checked non-null.
    unsafe { out(s, h) }
}

/// `cuStreamDestroy_v2`.
pub fn destroy(s: CUstream) -> CuResult {
    if is_default(s) {
        return Err(CUresult::ErrorInvalidHandle);
    }
    let st = lookup(s)?;
    lock(&STREAMS).retain(|x| !Arc::ptr_eq(x, &st));
    Ok(())
}

/// The capture stream `s` records into, if any (default streams never capture).
pub fn capture(s: CUstream) -> CuResult<Option<Arc<Session>>> {
    if is_default(s) {
        return Ok(None);
    }
    Ok(lock(&lookup(s)?.capture).clone())
}

/// Refuses an operation a capture cannot hold: invalidates the capture.
fn refuse_in_capture(s: CUstream, what: &str) -> CuResult {
    if let Some(c) = capture(s)? {
        crate::loader::log(&format!(
            "{what} on a capturing stream invalidates the capture"
        ));
        c.invalidate();
        return Err(CUresult::ErrorStreamCaptureUnsupported);
    }
    Ok(())
}

/// Records `work` when stream `s` captures (answers whether it did).
pub fn record(s: CUstream, kind: NodeType, work: impl FnOnce() -> Work) -> CuResult<bool> {
    match capture(s)? {
        Some(c) => c.record(kind, work()).map(|()| true),
        None => Ok(false),
    }
}

/// `cuStreamBeginCapture(_v2)`: the legacy and per-thread default streams cannot capture.
pub fn begin_capture(s: CUstream, mode: c_int) -> CuResult {
    if !(0..=2).contains(&mode) {
        return Err(CUresult::ErrorInvalidValue);
    }
    if is_default(s) {
        resolve(s)?;
        crate::loader::log("the default stream cannot be captured");
        return Err(CUresult::ErrorStreamCaptureUnsupported);
    }
    let st = lookup(s)?;
    st.ctx.check()?;
    let mut c = lock(&st.capture);
    if c.is_some() {
        return Err(CUresult::ErrorIllegalState);
    }
    *c = Some(crate::graph::begin_session(s));
    Ok(())
}

/// Ends the capture stream `s` began, for every stream that joined it.
pub fn end_capture(s: CUstream) -> CuResult<Arc<Session>> {
    if is_default(s) {
        return Err(CUresult::ErrorIllegalState);
    }
    let st = lookup(s)?;
    let session = lock(&st.capture)
        .clone()
        .ok_or(CUresult::ErrorIllegalState)?;
    if session.origin != s as usize {
        return Err(CUresult::ErrorStreamCaptureUnmatched);
    }
    session.ended.store(true, Ordering::Release);
    for x in lock(&STREAMS).iter() {
        let mut c = lock(&x.capture);
        if c.as_ref().is_some_and(|c| Arc::ptr_eq(c, &session)) {
            *c = None;
        }
    }
    Ok(session)
}

/// `cuStreamIsCapturing`: none (0), active (1) or invalidated (2).
///
/// # Safety
/// `st` null or writable.
pub unsafe fn is_capturing(s: CUstream, st: *mut c_int) -> CuResult {
    crate::non_null(st)?;
    resolve(s)?;
    let v = match capture(s)? {
        None => 0,
        Some(c) if *c.invalid.lock().unwrap_or_else(|e| e.into_inner()) => 2,
        Some(_) => 1,
    };
    // SAFETY: checked non-null.
    unsafe { out(st, v) }
}

/// `cuStreamSynchronize`, `cuStreamQuery`: the stream's work is done; reports the sticky
/// error. A capturing stream cannot be synchronized (the capture is invalidated).
pub fn synchronize(s: CUstream) -> CuResult {
    resolve(s)?;
    refuse_in_capture(s, "synchronizing")
}

/// `cuStreamWaitEvent`: the event's work is complete; an event recorded in a capture makes
/// the stream join that capture.
pub fn wait_event(s: CUstream, e: CUevent) -> CuResult {
    resolve(s)?;
    let ev = event(e)?;
    let joined = lock(&ev.session).clone();
    if let Some(session) = joined.filter(|c| !c.ended.load(Ordering::Acquire)) {
        if !is_default(s) {
            let st = lookup(s)?;
            let mut c = lock(&st.capture);
            if c.is_none() {
                *c = Some(session);
            }
        }
    }
    Ok(())
}

/// `cuStreamAddCallback`: runs `cb` now with the context's status (`flags` must be 0).
///
/// # Safety
/// `cb` callable with `data`.
pub unsafe fn add_callback(
    s: CUstream,
    cb: StreamCallback,
    data: *mut c_void,
    flags: c_uint,
) -> CuResult {
    let cb = cb.ok_or(CUresult::ErrorInvalidValue)?;
    if flags != 0 {
        return Err(CUresult::ErrorInvalidValue);
    }
    refuse_in_capture(s, "cuStreamAddCallback")?;
    let status = match stream_ctx(s)?.check() {
        Ok(()) => CUresult::Success,
        Err(e) => e,
    };
    // SAFETY: the caller's callback with the caller's data.
    unsafe { cb(s, status, data) };
    Ok(())
}

/// `cuLaunchHostFunc(_v2)`: runs `f` now (not after a failure, as on NVIDIA's driver).
///
/// # Safety
/// `f` callable with `data`.
pub unsafe fn host_func(s: CUstream, f: HostFn, data: *mut c_void) -> CuResult {
    let f = f.ok_or(CUresult::ErrorInvalidValue)?;
    let (fa, da) = (f as usize, data as usize);
    if record(s, NodeType::Host, || {
        Arc::new(move |s| {
            // SAFETY: the address of the caller's `CUhostFn`, taken above.
            let f: unsafe extern "C" fn(*mut c_void) = unsafe { std::mem::transmute(fa) };
            // SAFETY: the caller's function with the caller's data, valid while the graph
            // is used (the driver's contract for host nodes).
            unsafe { host_func(s, Some(f), da as *mut c_void) }
        })
    })? {
        return Ok(());
    }
    resolve(s)?;
    // SAFETY: the caller's function with the caller's data.
    unsafe { f(data) };
    Ok(())
}

/// `cuStreamGetPriority`.
///
/// # Safety
/// `p` null or writable.
pub unsafe fn priority(s: CUstream, p: *mut c_int) -> CuResult {
    crate::non_null(p)?;
    let v = if is_default(s) {
        context::current()?;
        PRIORITY_RANGE.0
    } else {
        lookup(s)?.priority
    };
    // SAFETY: checked non-null.
    unsafe { out(p, v) }
}

/// `cuStreamGetFlags`.
///
/// # Safety
/// `f` null or writable.
pub unsafe fn flags(s: CUstream, f: *mut c_uint) -> CuResult {
    crate::non_null(f)?;
    let v = if is_default(s) {
        context::current()?;
        0
    } else {
        lookup(s)?.flags
    };
    // SAFETY: checked non-null.
    unsafe { out(f, v) }
}

/// `cuStreamGetCtx(_v2)` (no green contexts: `*g` is null).
///
/// # Safety
/// Pointers null or writable.
pub unsafe fn context(s: CUstream, c: *mut CUcontext, g: *mut *mut c_void) -> CuResult {
    crate::non_null(c)?;
    let ctx = stream_ctx(s)?;
    // SAFETY: checked non-null; `g` null or writable by contract.
    unsafe {
        if !g.is_null() {
            *g = std::ptr::null_mut();
        }
        out(c, ctx.handle())
    }
}

/// `cuStreamGetId`: 1 and 2 for the default streams, then increasing.
///
/// # Safety
/// `id` null or writable.
pub unsafe fn id(s: CUstream, id: *mut u64) -> CuResult {
    crate::non_null(id)?;
    let v = match s as usize {
        0 | CU_STREAM_LEGACY => 1,
        CU_STREAM_PER_THREAD => 2,
        _ => lookup(s)?.id,
    };
    stream_ctx(s)?;
    // SAFETY: checked non-null.
    unsafe { out(id, v) }
}

/// `cuStreamGetDevice`.
///
/// # Safety
/// `d` null or writable.
pub unsafe fn device(s: CUstream, d: *mut CUdevice) -> CuResult {
    stream_ctx(s)?;
    // SAFETY: `out` checks null.
    unsafe { out(d, 0) }
}

/// `cuEventCreate`.
///
/// # Safety
/// `e` null or writable.
pub unsafe fn event_create(e: *mut CUevent, flags: c_uint) -> CuResult {
    crate::non_null(e)?;
    // CU_EVENT_BLOCKING_SYNC | DISABLE_TIMING | INTERPROCESS.
    if flags & !0x7 != 0 {
        return Err(CUresult::ErrorInvalidValue);
    }
    context::active()?;
    let ev = Arc::new(Event {
        flags,
        time: Mutex::new(None),
        session: Mutex::new(None),
    });
    let h = Arc::as_ptr(&ev) as CUevent;
    lock(&EVENTS).push(ev);
    // SAFETY: checked non-null.
    unsafe { out(e, h) }
}

/// The flags event `e` was created with.
pub fn event_flags(e: CUevent) -> CuResult<c_uint> {
    Ok(event(e)?.flags)
}

/// `cuEventRecord(WithFlags)`: timestamps the event now (the stream's work is done); in a
/// capture, a node that does so, and the event joins waiting streams to the capture.
pub fn event_record(e: CUevent, s: CUstream) -> CuResult {
    let ev = event(e)?;
    resolve(s)?;
    let session = capture(s)?;
    *lock(&ev.session) = session.clone();
    if let Some(c) = session {
        let ev = ev.clone();
        return c.record(
            NodeType::EventRecord,
            Arc::new(move |s| {
                resolve(s)?;
                *lock(&ev.time) = Some(Instant::now());
                Ok(())
            }),
        );
    }
    *lock(&ev.time) = Some(Instant::now());
    Ok(())
}

/// `cuEventQuery`: complete once recorded (and before: it captures no work).
pub fn event_check(e: CUevent) -> CuResult {
    event(e).map(|_| ())
}

/// `cuEventSynchronize`: reports the sticky error of the current context, if any.
pub fn event_synchronize(e: CUevent) -> CuResult {
    event(e)?;
    match context::current() {
        Ok(c) => c.check(),
        Err(_) => Ok(()),
    }
}

/// `cuEventDestroy_v2`.
pub fn event_destroy(e: CUevent) -> CuResult {
    let ev = event(e)?;
    lock(&EVENTS).retain(|x| !Arc::ptr_eq(x, &ev));
    Ok(())
}

/// `cuEventElapsedTime(_v2)`: milliseconds from `a` to `b`; both must be recorded and timed.
///
/// # Safety
/// `ms` null or writable.
pub unsafe fn elapsed(ms: *mut f32, a: CUevent, b: CUevent) -> CuResult {
    crate::non_null(ms)?;
    let (a, b) = (event(a)?, event(b)?);
    if (a.flags | b.flags) & CU_EVENT_DISABLE_TIMING != 0 {
        return Err(CUresult::ErrorInvalidHandle);
    }
    let (ta, tb) = (*lock(&a.time), *lock(&b.time));
    let (Some(ta), Some(tb)) = (ta, tb) else {
        return Err(CUresult::ErrorInvalidHandle);
    };
    let d = if tb >= ta {
        (tb - ta).as_secs_f64()
    } else {
        -(ta - tb).as_secs_f64()
    };
    // SAFETY: checked non-null.
    unsafe { out(ms, (d * 1e3) as f32) }
}
