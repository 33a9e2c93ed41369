//! The runtime entry points that generated cpu-target code calls (`ptx2llvm_rt_*`, C ABI,
//! declared in `include/ptx2llvm_rt.h`). Each takes the calling thread's context first; the
//! blocking ones register with the CTA and suspend the thread's coroutine until released.
//!
//! Rule for every function here: no value with a destructor may be alive across a
//! suspension (a trapped or exited thread's stack is abandoned, not unwound).
//!
//! Warp operations and `activemask` take the *program point* `pc` of their instruction (any
//! number that differs between two instructions of the module: the lowering passes the
//! instruction's byte offset in the PTX source): lanes are converged only at the same one.

use std::ffi::{c_char, c_void, CStr};

use super::abi::{Thread, NUM_BARRIERS, WARP_SIZE};
use super::cta::{cta_of, yielder, BarKind, Event, WarpOp};

/// Suspends the calling thread until the CTA releases it, then returns its result.
unsafe fn wait(t: *mut Thread) -> (u32, bool) {
    let cta = cta_of(t);
    let i = (*t).flat_tid;
    if (*cta).is_blocked(i) {
        yielder(t).suspend(Event::Blocked);
    }
    (*cta).result(i)
}

/// Fails the launch with `message` for thread `t` and abandons the thread.
pub(crate) unsafe fn fail(t: *mut Thread, message: String) -> ! {
    let cta = cta_of(t);
    // Thread-loop and warp-engine workers run batches of CTAs without telling the CTA state;
    // the context has the ids (coroutines: the same ones).
    (*cta).fis_set_ids((*t).ctaid, (*t).ntid);
    let err = (*cta).thread_error((*t).flat_tid, message);
    (*(*cta).launch).fail(err);
    yielder(t).suspend(Event::Trapped);
    // The scheduler never resumes a trapped thread.
    std::process::abort()
}

unsafe fn check_barrier(t: *mut Thread, what: &str, id: u32, count: u32) {
    if id >= NUM_BARRIERS {
        fail(t, format!("{what}: barrier {id} is out of range (0..15)"));
    }
    if !count.is_multiple_of(32) {
        fail(
            t,
            format!("{what}: thread count {count} is not a multiple of the warp size 32"),
        );
    }
}

/// `bar.sync`/`barrier.sync id{, count}`; `count` 0 means all threads of the CTA.
///
/// # Safety
/// `t` must be the context the runtime passed to the running kernel.
#[no_mangle]
pub unsafe extern "C" fn ptx2llvm_rt_barrier_sync(t: *mut Thread, id: u32, count: u32) {
    check_barrier(t, "bar.sync", id, count);
    (*cta_of(t)).bar_arrive((*t).flat_tid, id, count, BarKind::Sync, false);
    wait(t);
}

/// `bar.arrive`/`barrier.arrive id, count`: arrives without waiting.
///
/// # Safety
/// `t` must be the context the runtime passed to the running kernel.
#[no_mangle]
pub unsafe extern "C" fn ptx2llvm_rt_barrier_arrive(t: *mut Thread, id: u32, count: u32) {
    check_barrier(t, "bar.arrive", id, count);
    (*cta_of(t)).bar_arrive((*t).flat_tid, id, count, BarKind::Arrive, false);
}

/// `bar.red.{popc,and,or} d, id{, count}, pred`: `op` is `bar_red::{POPC, AND, OR}`; returns the
/// population count or the 0/1 predicate.
///
/// # Safety
/// `t` must be the context the runtime passed to the running kernel.
#[no_mangle]
pub unsafe extern "C" fn ptx2llvm_rt_barrier_red(
    t: *mut Thread,
    id: u32,
    count: u32,
    op: u32,
    pred: u32,
) -> u32 {
    check_barrier(t, "bar.red", id, count);
    (*cta_of(t)).bar_arrive((*t).flat_tid, id, count, BarKind::Red(op), pred != 0);
    wait(t).0
}

pub(crate) unsafe fn warp_op(
    t: *mut Thread,
    pc: u32,
    op: WarpOp,
    mask: u32,
    a: u64,
    b: u32,
    c: u32,
) -> (u32, bool) {
    if let Err(m) = (*cta_of(t)).warp_arrive((*t).flat_tid, op, mask, pc, a, b, c) {
        fail(t, m);
    }
    wait(t)
}

/// `shfl.sync.mode.b32 d|p, a, b, c, membermask`: returns `d`, stores `p` (0/1) to `pred_out`
/// unless it is null.
///
/// # Safety
/// `t` must be the context the runtime passed to the running kernel; `pred_out` null or
/// writable.
#[no_mangle]
pub unsafe extern "C" fn ptx2llvm_rt_shfl(
    t: *mut Thread,
    pc: u32,
    mode: u32,
    value: u32,
    b: u32,
    c: u32,
    membermask: u32,
    pred_out: *mut u32,
) -> u32 {
    let (d, p) = warp_op(
        t,
        pc,
        WarpOp::Shfl(mode & 3),
        membermask,
        value as u64,
        b,
        c,
    );
    if !pred_out.is_null() {
        *pred_out = p as u32;
    }
    d
}

/// `vote.sync.{all,any,uni}.pred` (0/1) and `vote.sync.ballot.b32` (the mask).
///
/// # Safety
/// `t` must be the context the runtime passed to the running kernel.
#[no_mangle]
pub unsafe extern "C" fn ptx2llvm_rt_vote(
    t: *mut Thread,
    pc: u32,
    mode: u32,
    membermask: u32,
    pred: u32,
) -> u32 {
    warp_op(
        t,
        pc,
        WarpOp::Vote(mode & 3),
        membermask,
        (pred != 0) as u64,
        0,
        0,
    )
    .0
}

/// `match.any.sync.b32`.
///
/// # Safety
/// `t` must be the context the runtime passed to the running kernel.
#[no_mangle]
pub unsafe extern "C" fn ptx2llvm_rt_match_any_u32(
    t: *mut Thread,
    pc: u32,
    membermask: u32,
    value: u32,
) -> u32 {
    warp_op(t, pc, WarpOp::MatchAny, membermask, value as u64, 0, 0).0
}

/// `match.any.sync.b64`.
///
/// # Safety
/// `t` must be the context the runtime passed to the running kernel.
#[no_mangle]
pub unsafe extern "C" fn ptx2llvm_rt_match_any_u64(
    t: *mut Thread,
    pc: u32,
    membermask: u32,
    value: u64,
) -> u32 {
    warp_op(t, pc, WarpOp::MatchAny, membermask, value, 0, 0).0
}

/// `match.all.sync.b32 d|p`: stores `p` to `pred_out` unless null.
///
/// # Safety
/// `t` must be the context the runtime passed to the running kernel; `pred_out` null or
/// writable.
#[no_mangle]
pub unsafe extern "C" fn ptx2llvm_rt_match_all_u32(
    t: *mut Thread,
    pc: u32,
    membermask: u32,
    value: u32,
    pred_out: *mut u32,
) -> u32 {
    ptx2llvm_rt_match_all_u64(t, pc, membermask, value as u64, pred_out)
}

/// `match.all.sync.b64 d|p`: stores `p` to `pred_out` unless null.
///
/// # Safety
/// `t` must be the context the runtime passed to the running kernel; `pred_out` null or
/// writable.
#[no_mangle]
pub unsafe extern "C" fn ptx2llvm_rt_match_all_u64(
    t: *mut Thread,
    pc: u32,
    membermask: u32,
    value: u64,
    pred_out: *mut u32,
) -> u32 {
    let (d, p) = warp_op(t, pc, WarpOp::MatchAll, membermask, value, 0, 0);
    if !pred_out.is_null() {
        *pred_out = p as u32;
    }
    d
}

/// `redux.sync.op`: `op` is one of `abi::redux`; float operators take and return `f32` bits.
///
/// # Safety
/// `t` must be the context the runtime passed to the running kernel.
#[no_mangle]
pub unsafe extern "C" fn ptx2llvm_rt_redux(
    t: *mut Thread,
    pc: u32,
    op: u32,
    value: u32,
    membermask: u32,
) -> u32 {
    warp_op(t, pc, WarpOp::Redux(op), membermask, value as u64, 0, 0).0
}

/// `activemask.b32`: the lanes of the warp that are converged with the caller.
///
/// # Safety
/// `t` must be the context the runtime passed to the running kernel.
#[no_mangle]
pub unsafe extern "C" fn ptx2llvm_rt_activemask(t: *mut Thread, pc: u32) -> u32 {
    (*cta_of(t)).activemask_arrive((*t).flat_tid, pc);
    wait(t).0
}

/// `bar.warp.sync membermask`.
///
/// # Safety
/// `t` must be the context the runtime passed to the running kernel.
#[no_mangle]
pub unsafe extern "C" fn ptx2llvm_rt_bar_warp_sync(t: *mut Thread, pc: u32, membermask: u32) {
    warp_op(t, pc, WarpOp::WarpSync, membermask, 0, 0, 0);
}

/// `elect.sync d|p, membermask`: returns the leader's lane, stores `p` unless null.
///
/// # Safety
/// `t` must be the context the runtime passed to the running kernel; `pred_out` null or
/// writable.
#[no_mangle]
pub unsafe extern "C" fn ptx2llvm_rt_elect(
    t: *mut Thread,
    pc: u32,
    membermask: u32,
    pred_out: *mut u32,
) -> u32 {
    let (d, p) = warp_op(t, pc, WarpOp::Elect, membermask, 0, 0, 0);
    if !pred_out.is_null() {
        *pred_out = p as u32;
    }
    d
}

/// `exit`: ends the calling thread.
///
/// # Safety
/// `t` must be the context the runtime passed to the running kernel.
#[no_mangle]
pub unsafe extern "C" fn ptx2llvm_rt_exit(t: *mut Thread) -> ! {
    yielder(t).suspend(Event::Exited);
    std::process::abort()
}

unsafe fn c_str(p: *const c_char) -> String {
    if p.is_null() {
        String::new()
    } else {
        CStr::from_ptr(p).to_string_lossy().into_owned()
    }
}

/// `trap`: fails the launch, naming the kernel, block and thread; `msg` (may be null) says why.
///
/// # Safety
/// `t` must be the context the runtime passed to the running kernel; `msg` null or a C string.
#[no_mangle]
pub unsafe extern "C" fn ptx2llvm_rt_trap(t: *mut Thread, msg: *const c_char) -> ! {
    let m = c_str(msg);
    fail(
        t,
        if m.is_empty() {
            "trap instruction executed".to_string()
        } else {
            m
        },
    )
}

/// A warp operation of the warp engine (`llvm::simd`) whose member mask does not match the
/// lanes running it: `active` lanes of warp `(*t).warpid` run it, `live` have not exited.
/// Names the first offending lane as the thread, with the coroutine scheme's wording.
///
/// # Safety
/// `t` must be the context the runtime passed to the running kernel.
#[no_mangle]
pub unsafe extern "C" fn ptx2llvm_rt_simd_warp_error(
    t: *mut Thread,
    op: u32,
    member: u32,
    active: u32,
    live: u32,
) -> ! {
    let what = [
        "shfl.sync",
        "vote.sync",
        "redux.sync",
        "match.any.sync",
        "match.all.sync",
        "elect.sync",
        "bar.warp.sync",
    ]
    .get(op as usize)
    .copied()
    .unwrap_or("warp operation");
    let outside = active & !member;
    let missing = member & live & !active;
    let lane = if outside != 0 {
        outside.trailing_zeros()
    } else {
        active.trailing_zeros().min(31)
    };
    let flat = (*t).warpid * WARP_SIZE + lane;
    let [nx, ny, _] = (*t).ntid;
    (*t).flat_tid = flat;
    (*t).laneid = lane;
    (*t).tid = [flat % nx, (flat / nx) % ny, flat / (nx * ny)];
    let msg = if outside != 0 {
        format!("{what}: the executing lane {lane} is not in the member mask {member:#010x}")
    } else {
        format!(
            "{what} with member mask {member:#010x}: lanes {missing:#010x} have not exited and \
             are not converged with the executing lanes {active:#010x} (the warp engine runs a \
             warp's lanes in lockstep; PTX2LLVM_CPU_MODE=coroutine pairs lanes at different \
             instructions)"
        )
    };
    fail(t, msg)
}

/// `__assertfail(message, file, line, function, charSize)`: prints CUDA's assertion line to
/// stderr and fails the launch.
///
/// # Safety
/// `t` must be the context the runtime passed to the running kernel; the strings null or C
/// strings.
#[no_mangle]
pub unsafe extern "C" fn ptx2llvm_rt_assertfail(
    t: *mut Thread,
    message: *const c_char,
    file: *const c_char,
    line: u32,
    function: *const c_char,
    _char_size: u64,
) -> ! {
    let msg = {
        let (m, f, func) = (c_str(message), c_str(file), c_str(function));
        let [bx, by, bz] = (*t).ctaid;
        let [tx, ty, tz] = (*t).tid;
        super::printf::flush();
        eprintln!(
            "{f}:{line}: {func}: block: [{bx},{by},{bz}], thread: [{tx},{ty},{tz}] Assertion \
             `{m}` failed."
        );
        format!("assertion `{m}` failed at {f}:{line} in {func}")
    };
    fail(t, msg)
}

/// `vprintf(format, args)`: CUDA's device printf; prints to stdout and returns the number of
/// bytes written.
///
/// # Safety
/// `format` must be a C string and `args` the argument buffer it describes.
#[no_mangle]
pub unsafe extern "C" fn ptx2llvm_rt_vprintf(
    _t: *mut Thread,
    format: *const c_char,
    args: *const u8,
) -> i32 {
    super::printf::vprintf(format, args)
}

/// `%clock64`: nanoseconds of the host's monotonic clock since the process started.
#[no_mangle]
pub extern "C" fn ptx2llvm_rt_clock64() -> u64 {
    super::time::clock64()
}

/// `%globaltimer`: nanoseconds since the Unix epoch.
#[no_mangle]
pub extern "C" fn ptx2llvm_rt_globaltimer() -> u64 {
    super::time::globaltimer()
}

/// `nanosleep.u32 ns`: lets the other threads of the CTA run first; sleeps (at most 1 ms) when
/// none can.
///
/// # Safety
/// `t` must be the context the runtime passed to the running kernel.
#[no_mangle]
pub unsafe extern "C" fn ptx2llvm_rt_nanosleep(t: *mut Thread, ns: u32) {
    let others = (*cta_of(t)).requeue((*t).flat_tid);
    if !others {
        std::thread::sleep(std::time::Duration::from_nanos(ns.min(1_000_000) as u64));
    }
    yielder(t).suspend(Event::Yield);
}

/// `%envreg<n>`: what the launch set (a cooperative launch's grid workspace address in
/// `%envreg1:%envreg2`, see `launch::GridWorkspace`), zero otherwise.
///
/// # Safety
/// `t` must be the context the runtime passed to the running kernel.
#[no_mangle]
pub unsafe extern "C" fn ptx2llvm_rt_envreg(t: *mut Thread, n: u32) -> u32 {
    let launch = (*cta_of(t)).launch;
    if launch.is_null() {
        return 0;
    }
    (*launch).envreg.get(n as usize).copied().unwrap_or(0)
}

/// Name and address of every entry point, for JIT symbol resolution.
pub fn symbols() -> Vec<(&'static str, *const c_void)> {
    vec![
        (
            "ptx2llvm_rt_barrier_sync",
            ptx2llvm_rt_barrier_sync as *const c_void,
        ),
        (
            "ptx2llvm_rt_barrier_arrive",
            ptx2llvm_rt_barrier_arrive as *const c_void,
        ),
        (
            "ptx2llvm_rt_barrier_red",
            ptx2llvm_rt_barrier_red as *const c_void,
        ),
        ("ptx2llvm_rt_shfl", ptx2llvm_rt_shfl as *const c_void),
        (
            "ptx2llvm_rt_simd_warp_error",
            ptx2llvm_rt_simd_warp_error as *const c_void,
        ),
        ("ptx2llvm_rt_vote", ptx2llvm_rt_vote as *const c_void),
        (
            "ptx2llvm_rt_match_any_u32",
            ptx2llvm_rt_match_any_u32 as *const c_void,
        ),
        (
            "ptx2llvm_rt_match_any_u64",
            ptx2llvm_rt_match_any_u64 as *const c_void,
        ),
        (
            "ptx2llvm_rt_match_all_u32",
            ptx2llvm_rt_match_all_u32 as *const c_void,
        ),
        (
            "ptx2llvm_rt_match_all_u64",
            ptx2llvm_rt_match_all_u64 as *const c_void,
        ),
        ("ptx2llvm_rt_redux", ptx2llvm_rt_redux as *const c_void),
        (
            "ptx2llvm_rt_activemask",
            ptx2llvm_rt_activemask as *const c_void,
        ),
        (
            "ptx2llvm_rt_bar_warp_sync",
            ptx2llvm_rt_bar_warp_sync as *const c_void,
        ),
        ("ptx2llvm_rt_elect", ptx2llvm_rt_elect as *const c_void),
        ("ptx2llvm_rt_exit", ptx2llvm_rt_exit as *const c_void),
        ("ptx2llvm_rt_trap", ptx2llvm_rt_trap as *const c_void),
        (
            "ptx2llvm_rt_misaligned",
            super::fault::ptx2llvm_rt_misaligned as *const c_void,
        ),
        (
            "ptx2llvm_rt_assertfail",
            ptx2llvm_rt_assertfail as *const c_void,
        ),
        ("ptx2llvm_rt_vprintf", ptx2llvm_rt_vprintf as *const c_void),
        ("ptx2llvm_rt_clock64", ptx2llvm_rt_clock64 as *const c_void),
        (
            "ptx2llvm_rt_globaltimer",
            ptx2llvm_rt_globaltimer as *const c_void,
        ),
        (
            "ptx2llvm_rt_nanosleep",
            ptx2llvm_rt_nanosleep as *const c_void,
        ),
        ("ptx2llvm_rt_envreg", ptx2llvm_rt_envreg as *const c_void),
        (
            "ptx2llvm_rt_mma",
            super::matrix::ptx2llvm_rt_mma as *const c_void,
        ),
        (
            "ptx2llvm_rt_warp_mma",
            super::matrix::ptx2llvm_rt_warp_mma as *const c_void,
        ),
        (
            "ptx2llvm_rt_ldmatrix",
            super::matrix::ptx2llvm_rt_ldmatrix as *const c_void,
        ),
        (
            "ptx2llvm_rt_stmatrix",
            super::matrix::ptx2llvm_rt_stmatrix as *const c_void,
        ),
        (
            "ptx2llvm_rt_movmatrix",
            super::matrix::ptx2llvm_rt_movmatrix as *const c_void,
        ),
        (
            "ptx2llvm_rt_warp_ldmatrix",
            super::matrix::ptx2llvm_rt_warp_ldmatrix as *const c_void,
        ),
        (
            "ptx2llvm_rt_warp_stmatrix",
            super::matrix::ptx2llvm_rt_warp_stmatrix as *const c_void,
        ),
        (
            "ptx2llvm_rt_warp_movmatrix",
            super::matrix::ptx2llvm_rt_warp_movmatrix as *const c_void,
        ),
        (
            "ptx2llvm_rt_wmma_load",
            super::matrix::ptx2llvm_rt_wmma_load as *const c_void,
        ),
        (
            "ptx2llvm_rt_wmma_store",
            super::matrix::ptx2llvm_rt_wmma_store as *const c_void,
        ),
    ]
}
