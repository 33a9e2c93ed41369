//! `mbarrier` objects, the cluster barrier and the asynchronous bulk operations that signal
//! them, on the cpu target (PTX ISA §9.7.12.15).
//!
//! A cluster here is one CTA, so every `.shared::cluster` address the kernel can form is one of
//! its own CTA, and an mbarrier is only ever touched by the threads of one CTA, which run on
//! one worker: the 8-byte object is read and written without atomics. Asynchronous copies
//! (`cp.async`, `cp.async.bulk`, `st.async`, `red.async`) are done when issued, so their
//! complete-tx is part of the issuing instruction.
//!
//! The object's 64 bits (opaque to PTX, so ours to choose):
//!
//! ```text
//!  bit 63   phase parity        bit 62   initialized
//!  bits 40..61  tx-count (21-bit two's complement: -(2^20-1) ..= 2^20-1)
//!  bits 20..40  expected arrival count      bits 0..20  pending arrival count
//! ```
//!
//! The `state` an arrive returns is the parity and pending count before the arrive (bits 63
//! and 0..20, bit 62 set), which is what `test_wait`/`try_wait` and `pending_count` read.
//!
//! Waiting. Kernels with these instructions run as coroutines (the lowering keeps them from
//! thread loops and the warp engine), and a wait that finds its phase incomplete lets the
//! other threads of the CTA run before it answers (as `nanosleep` does), so the spin loops
//! around `test_wait`/`try_wait` make progress. A CTA whose every live thread is either
//! blocked (at a barrier or warp operation) or suspended in a wait that failed since the last
//! change to any of its mbarriers can never complete that wait; when that has lasted
//! `STUCK_ROUNDS` failed waits, the launch fails naming the wait, where a GPU would hang.

use std::ffi::{c_char, CStr};

use super::abi::Thread;
use super::cta::{cta_of, yielder, Event};
use super::entry::fail;

/// How an arrive-on operation is done (`ptx2llvm_rt_mbar_arrive`'s `flags`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u32)]
pub enum ArriveFlag {
    /// `arrive_drop`: the expected count of this and later phases drops by `count` first.
    Drop = 1,
    /// `.noComplete`: the arrive must not complete the phase.
    NoComplete = 2,
    /// `.expect_tx`: an expect-tx of `tx` comes first.
    ExpectTx = 4,
}

/// What a wait compares with (`ptx2llvm_rt_mbar_wait`'s `flags`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u32)]
pub enum WaitFlag {
    /// `.parity`: the operand is a phase parity, not an arrive's state.
    Parity = 1,
    /// `try_wait`: may wait (let others run) until the phase completes.
    Try = 2,
}

/// The bulk reductions of `cp.reduce.async.bulk` (`ptx2llvm_rt_bulk_reduce`'s `op`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u32)]
pub enum RedOp {
    And,
    Or,
    Xor,
    Add,
    Inc,
    Dec,
    Min,
    Max,
}

/// Element types of `cp.reduce.async.bulk` (`ptx2llvm_rt_bulk_reduce`'s `ty`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u32)]
pub enum RedType {
    U32,
    S32,
    U64,
    S64,
    F16,
    Bf16,
    F32,
    F64,
}

const COUNT_MASK: u64 = (1 << 20) - 1;
const EXPECTED_SHIFT: u32 = 20;
const TX_SHIFT: u32 = 40;
const TX_BITS: u32 = 21;
const INIT_BIT: u64 = 1 << 62;
const PARITY_BIT: u64 = 1 << 63;
/// The largest count and tx-count (2^20 - 1).
const MAX_COUNT: i64 = COUNT_MASK as i64;
/// Failed waits in a CTA that cannot progress before the launch fails.
const STUCK_ROUNDS: u32 = 4096;

/// An mbarrier's fields.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Mbar {
    parity: bool,
    pending: i64,
    expected: i64,
    tx: i64,
}

impl Mbar {
    fn decode(w: u64) -> Option<Mbar> {
        if w & INIT_BIT == 0 {
            return None;
        }
        let tx = ((w >> TX_SHIFT) & ((1 << TX_BITS) - 1)) as i64;
        let tx = if tx >= 1 << (TX_BITS - 1) {
            tx - (1 << TX_BITS)
        } else {
            tx
        };
        Some(Mbar {
            parity: w & PARITY_BIT != 0,
            pending: (w & COUNT_MASK) as i64,
            expected: ((w >> EXPECTED_SHIFT) & COUNT_MASK) as i64,
            tx,
        })
    }

    fn encode(self) -> u64 {
        let tx = (self.tx as u64) & ((1 << TX_BITS) - 1);
        (self.pending as u64 & COUNT_MASK)
            | ((self.expected as u64 & COUNT_MASK) << EXPECTED_SHIFT)
            | (tx << TX_SHIFT)
            | INIT_BIT
            | if self.parity { PARITY_BIT } else { 0 }
    }

    /// Moves to the next phase if the current one is complete; returns whether it did.
    fn settle(&mut self) -> bool {
        if self.pending == 0 && self.tx == 0 {
            self.parity = !self.parity;
            self.pending = self.expected;
            true
        } else {
            false
        }
    }
}

/// The CTA's state of these instructions beyond its mbarrier objects (`cta::Cta::mbar`).
#[derive(Debug, Default)]
pub(crate) struct CtaState {
    /// Changes to any mbarrier or to the cluster barrier so far.
    epoch: u64,
    /// Per thread: the epoch of its last failed wait, plus one (0: none).
    failed_at: Vec<u64>,
    /// Per thread: suspended inside a wait (letting the others run after a failed check).
    waiting: Vec<bool>,
    /// Failed waits while every live thread was blocked or failing since the last change.
    stuck: u32,
    /// Failed waits since the last change (the stuck check runs every few).
    fails: u32,
    /// The cluster barrier: its phase, who arrived in it.
    cluster_phase: u64,
    cluster_arrived: Vec<bool>,
    /// Per thread: the cluster phase it arrived in, plus one (0: none outstanding).
    cluster_token: Vec<u64>,
    /// Threads of the CTA, and whether the fields above are set up for it (done at the first
    /// use: most CTAs never use them, and a reset per CTA should cost nothing).
    n: usize,
    fresh: bool,
}

impl CtaState {
    /// A new CTA of `n` threads.
    pub(crate) fn reset(&mut self, n: usize) {
        self.n = n;
        self.fresh = false;
    }

    /// Sets the state up for the CTA at its first use.
    fn ready(&mut self) {
        if self.fresh {
            return;
        }
        self.fresh = true;
        let n = self.n;
        self.epoch = 0;
        self.stuck = 0;
        self.fails = 0;
        self.failed_at.clear();
        self.failed_at.resize(n, 0);
        self.waiting.clear();
        self.waiting.resize(n, false);
        self.cluster_phase = 0;
        self.cluster_arrived.clear();
        self.cluster_arrived.resize(n, false);
        self.cluster_token.clear();
        self.cluster_token.resize(n, 0);
    }

    fn progress(&mut self) {
        self.epoch += 1;
        self.stuck = 0;
        self.fails = 0;
    }
}

unsafe fn name(what: *const c_char) -> String {
    if what.is_null() {
        "mbarrier".to_string()
    } else {
        CStr::from_ptr(what).to_string_lossy().into_owned()
    }
}

/// The shared-memory offset of the 8-byte object at generic address `addr`, or the launch
/// fails.
unsafe fn offset_of(t: *mut Thread, what: *const c_char, addr: u64, size: u64) -> u64 {
    let base = (*t).shared as u64;
    let total = (*t).total_smem_size as u64;
    let off = addr.wrapping_sub(base);
    if off >= total || total - off < size {
        fail(
            t,
            format!(
                "`{}`: address {addr:#x} is not in the CTA's shared memory ({total} bytes at \
                 {base:#x})",
                name(what)
            ),
        );
    }
    if !addr.is_multiple_of(8) {
        fail(
            t,
            format!(
                "`{}`: mbarrier address {addr:#x} (shared offset {off:#x}) is not 8-byte aligned",
                name(what)
            ),
        );
    }
    off
}

/// The mbarrier at `addr`, checked: in shared memory and initialized.
unsafe fn load(t: *mut Thread, what: *const c_char, addr: u64) -> (*mut u64, Mbar) {
    let off = offset_of(t, what, addr, 8);
    let p = addr as *mut u64;
    match Mbar::decode(*p) {
        Some(m) => (p, m),
        None => fail(
            t,
            format!(
                "`{}`: the mbarrier at shared offset {off:#x} is not initialized \
                 (mbarrier.init)",
                name(what)
            ),
        ),
    }
}

unsafe fn store(t: *mut Thread, p: *mut u64, m: Mbar) {
    *p = m.encode();
    (*cta_of(t)).mbar.ready();
    (*cta_of(t)).mbar.progress();
}

unsafe fn check_count(t: *mut Thread, what: *const c_char, n: i64, of: &str) {
    if !(0..=MAX_COUNT).contains(&n) {
        fail(
            t,
            format!(
                "`{}`: {of} {n} is out of range (0..={MAX_COUNT})",
                name(what)
            ),
        );
    }
}

/// Adds `delta` to the tx-count of `m`; beyond ±`MAX_COUNT` the launch fails.
unsafe fn add_tx(t: *mut Thread, what: *const c_char, m: &mut Mbar, delta: i64) {
    m.tx += delta;
    if m.tx.abs() > MAX_COUNT {
        fail(
            t,
            format!(
                "`{}`: the tx-count would become {}, beyond ±{MAX_COUNT}",
                name(what),
                m.tx
            ),
        );
    }
}

/// `mbarrier.init [addr], count`.
///
/// # Safety
/// `t` must be the context the runtime passed to the running kernel; `what` null or a C string.
#[no_mangle]
pub unsafe extern "C" fn ptx2llvm_rt_mbar_init(
    t: *mut Thread,
    what: *const c_char,
    addr: u64,
    count: u32,
) {
    let off = offset_of(t, what, addr, 8);
    if count == 0 || count as i64 > MAX_COUNT {
        fail(
            t,
            format!(
                "`{}`: count {count} of the mbarrier at shared offset {off:#x} is out of range \
                 (1..={MAX_COUNT})",
                name(what)
            ),
        );
    }
    let m = Mbar {
        parity: false,
        pending: count as i64,
        expected: count as i64,
        tx: 0,
    };
    store(t, addr as *mut u64, m);
}

/// `mbarrier.inval [addr]`: the object is uninitialized again.
///
/// # Safety
/// As `ptx2llvm_rt_mbar_init`.
#[no_mangle]
pub unsafe extern "C" fn ptx2llvm_rt_mbar_inval(t: *mut Thread, what: *const c_char, addr: u64) {
    let (p, _) = load(t, what, addr);
    *p = 0;
    (*cta_of(t)).mbar.ready();
    (*cta_of(t)).mbar.progress();
}

/// `mbarrier.expect_tx` (`delta` > 0) and `mbarrier.complete_tx` (`delta` < 0) of `delta`
/// bytes; the latter may complete the phase.
///
/// # Safety
/// As `ptx2llvm_rt_mbar_init`.
#[no_mangle]
pub unsafe extern "C" fn ptx2llvm_rt_mbar_tx(
    t: *mut Thread,
    what: *const c_char,
    addr: u64,
    delta: i64,
) {
    let (p, mut m) = load(t, what, addr);
    add_tx(t, what, &mut m, delta);
    m.settle();
    store(t, p, m);
}

/// `mbarrier.arrive{.expect_tx}` / `arrive_drop`, and the arrive of
/// `cp.async.mbarrier.arrive.noinc`: `flags` is a set of `ArriveFlag`s, `count` the arrive-on
/// count, `tx` the expect-tx count with `ArriveFlag::ExpectTx`. Returns the state.
///
/// # Safety
/// As `ptx2llvm_rt_mbar_init`.
#[no_mangle]
pub unsafe extern "C" fn ptx2llvm_rt_mbar_arrive(
    t: *mut Thread,
    what: *const c_char,
    addr: u64,
    count: u32,
    tx: u32,
    flags: u32,
) -> u64 {
    let has = |f: ArriveFlag| flags & f as u32 != 0;
    let (p, mut m) = load(t, what, addr);
    let state = (m.pending as u64) | INIT_BIT | if m.parity { PARITY_BIT } else { 0 };
    let count = count as i64;
    check_count(t, what, count, "arrive count");
    if has(ArriveFlag::ExpectTx) {
        add_tx(t, what, &mut m, tx as i64);
    }
    if has(ArriveFlag::Drop) {
        if count > m.expected {
            fail(
                t,
                format!(
                    "`{}`: drops {count} from an expected arrival count of {}",
                    name(what),
                    m.expected
                ),
            );
        }
        m.expected -= count;
    }
    if count > m.pending {
        fail(
            t,
            format!(
                "`{}`: arrives {count} times on an mbarrier with {} pending arrivals in its \
                 current phase",
                name(what),
                m.pending
            ),
        );
    }
    m.pending -= count;
    if m.settle() && has(ArriveFlag::NoComplete) {
        fail(
            t,
            format!(
                "`{}`: a `.noComplete` arrive completed the mbarrier's phase",
                name(what)
            ),
        );
    }
    store(t, p, m);
    state
}

/// Whether a wait for `x` (a state, or a parity with `parity`) on `m` is over.
fn done(m: Mbar, x: u64, parity: bool) -> bool {
    let waited = if parity {
        x & 1 != 0
    } else {
        x & PARITY_BIT != 0
    };
    // The phase waited for has the parity given; it is complete once the current phase's
    // parity differs.
    waited != m.parity
}

/// Records a failed wait of the running thread and fails the launch when the CTA cannot
/// progress any more.
unsafe fn failed_wait(t: *mut Thread, what: &dyn Fn() -> String) {
    let cta = cta_of(t);
    (*cta).mbar.ready();
    let i = (*t).flat_tid as usize;
    let n = (*cta).mbar.failed_at.len();
    {
        let s = &mut (*cta).mbar;
        if i < n {
            s.failed_at[i] = s.epoch + 1;
        }
        s.fails += 1;
        if !s.fails.is_multiple_of(16) {
            return;
        }
    }
    // Stuck: every other live thread is blocked, or suspended in a wait whose last check
    // failed with the mbarriers as they are now. (A thread spinning around `nanosleep` is
    // neither: then the CTA hangs as a GPU would.)
    let c = &mut *cta;
    let epoch = c.mbar.epoch + 1;
    let stuck = (0..n as u32).all(|j| {
        let ju = j as usize;
        ju == i
            || c.is_done(j)
            || c.is_blocked(j)
            || c.mbar.waiting[ju] && c.mbar.failed_at[ju] == epoch
    });
    let s = &mut c.mbar;
    if !stuck {
        s.stuck = 0;
        return;
    }
    s.stuck += 1;
    if s.stuck >= STUCK_ROUNDS / 16 {
        fail(
            t,
            format!(
                "{}: the wait can never complete (every other thread of the CTA is blocked or \
                 waiting, and no mbarrier changes): deadlock",
                what()
            ),
        );
    }
}

/// Lets the other threads of the CTA run first (marked as waiting meanwhile); returns whether
/// one was ready.
unsafe fn let_others_run(t: *mut Thread) -> bool {
    let cta = cta_of(t);
    (*cta).mbar.ready();
    let i = (*t).flat_tid;
    let others = (*cta).requeue(i);
    let s = &mut (*cta).mbar;
    s.waiting[i as usize] = true;
    yielder(t).suspend(Event::Yield);
    let s = &mut (*cta).mbar;
    s.waiting[i as usize] = false;
    others
}

/// `mbarrier.test_wait` / `try_wait` (`flags`: `WaitFlag`s) for the phase of state or parity
/// `x`: 1 when complete. A failing wait first lets the other threads run, once (`test_wait`)
/// or until the phase completes or none is ready (`try_wait`).
///
/// # Safety
/// As `ptx2llvm_rt_mbar_init`.
#[no_mangle]
pub unsafe extern "C" fn ptx2llvm_rt_mbar_wait(
    t: *mut Thread,
    what: *const c_char,
    addr: u64,
    x: u64,
    flags: u32,
) -> u32 {
    let parity = flags & WaitFlag::Parity as u32 != 0;
    let tries = flags & WaitFlag::Try as u32 != 0;
    let (_, m) = load(t, what, addr);
    if done(m, x, parity) {
        return 1;
    }
    loop {
        failed_wait(t, &|| {
            format!(
                "`{}` at shared offset {:#x}",
                name(what),
                addr.wrapping_sub((*t).shared as u64)
            )
        });
        let others = let_others_run(t);
        let (_, m) = load(t, what, addr);
        if done(m, x, parity) {
            return 1;
        }
        if !tries || !others {
            return 0;
        }
    }
}

/// `barrier.cluster.arrive` (a cluster of one CTA): the thread arrives in the current phase.
///
/// # Safety
/// `t` must be the context the runtime passed to the running kernel.
#[no_mangle]
pub unsafe extern "C" fn ptx2llvm_rt_cluster_arrive(t: *mut Thread) {
    let cta = cta_of(t);
    (*cta).mbar.ready();
    let i = (*t).flat_tid as usize;
    let s = &mut (*cta).mbar;
    if s.cluster_token[i] != 0 {
        fail(
            t,
            "`barrier.cluster.arrive`: the thread arrives again before its \
             `barrier.cluster.wait`"
                .to_string(),
        );
    }
    s.cluster_token[i] = s.cluster_phase + 1;
    s.cluster_arrived[i] = true;
    cluster_settle(t);
    (*cta).mbar.progress();
}

/// Ends the cluster barrier's phase when every live thread has arrived.
unsafe fn cluster_settle(t: *mut Thread) {
    let c = &mut *cta_of(t);
    c.mbar.ready();
    let n = c.mbar.cluster_arrived.len() as u32;
    let all = (0..n).all(|j| c.is_done(j) || c.mbar.cluster_arrived[j as usize]);
    if all {
        let s = &mut c.mbar;
        s.cluster_phase += 1;
        s.cluster_arrived.iter_mut().for_each(|a| *a = false);
    }
}

/// `barrier.cluster.wait`: waits until the phase the thread arrived in has ended (every live
/// thread of the CTA arrived). Without an arrive first the launch fails.
///
/// # Safety
/// `t` must be the context the runtime passed to the running kernel.
#[no_mangle]
pub unsafe extern "C" fn ptx2llvm_rt_cluster_wait(t: *mut Thread) {
    let cta = cta_of(t);
    (*cta).mbar.ready();
    let i = (*t).flat_tid as usize;
    let s = &(*cta).mbar;
    let token = s.cluster_token[i];
    if token == 0 {
        fail(
            t,
            "`barrier.cluster.wait` without a `barrier.cluster.arrive` before it".to_string(),
        );
    }
    loop {
        // Threads that exited since count as arrived.
        cluster_settle(t);
        if (*cta).mbar.cluster_phase >= token {
            let s = &mut (*cta).mbar;
            s.cluster_token[i] = 0;
            return;
        }
        failed_wait(t, &|| "`barrier.cluster.wait`".to_string());
        let_others_run(t);
    }
}

/// `mapa` to CTA `rank` of the cluster (of one CTA): rank 0 is this CTA, so the address is
/// the same; any other rank fails the launch.
///
/// # Safety
/// `t` must be the context the runtime passed to the running kernel.
#[no_mangle]
pub unsafe extern "C" fn ptx2llvm_rt_mapa_rank(t: *mut Thread, rank: u32) {
    if rank != 0 {
        fail(
            t,
            format!(
                "`mapa`: CTA rank {rank} is not in the cluster (the cpu target runs clusters of \
                 one CTA, rank 0)"
            ),
        );
    }
}

/// `cp.async.bulk` (non-tensor): copies `size` bytes from `src` to `dst` (generic addresses)
/// and, when `mbar` is not 0, performs complete-tx of `size` bytes on the mbarrier there.
/// `size` must be a multiple of 16 and the addresses 16-byte aligned. Byte `k` of each 16 is
/// copied only when bit `k` of `mask` is set (`.cp_mask`'s byteMask; 0xffff: all).
///
/// # Safety
/// As `ptx2llvm_rt_mbar_init`; `dst` and `src` addresses the kernel gave.
#[no_mangle]
pub unsafe extern "C" fn ptx2llvm_rt_bulk_copy(
    t: *mut Thread,
    what: *const c_char,
    dst: u64,
    src: u64,
    size: u32,
    mbar: u64,
    mask: u32,
) {
    check_bulk(t, what, dst, src, size);
    if mask & 0xffff == 0xffff {
        super::fault::kernel_access(|| {
            std::ptr::copy(src as *const u8, dst as *mut u8, size as usize)
        });
    } else {
        super::fault::kernel_access(|| {
            for k in 0..size as usize {
                if mask >> (k % 16) & 1 != 0 {
                    *(dst as *mut u8).add(k) = *(src as *const u8).add(k);
                }
            }
        });
    }
    if mbar != 0 {
        ptx2llvm_rt_mbar_tx(t, what, mbar, -(size as i64));
    }
}

unsafe fn check_bulk(t: *mut Thread, what: *const c_char, dst: u64, src: u64, size: u32) {
    if !size.is_multiple_of(16) || !dst.is_multiple_of(16) || !src.is_multiple_of(16) {
        fail(
            t,
            format!(
                "`{}`: size {size} and the addresses {dst:#x}, {src:#x} must be multiples of 16",
                name(what)
            ),
        );
    }
}

/// `cp.reduce.async.bulk` (non-tensor): `dst[k] = op(dst[k], src[k])` for the `size` bytes of
/// elements of type `ty`, then complete-tx of `size` bytes on `mbar` when it is not 0.
///
/// # Safety
/// As `ptx2llvm_rt_bulk_copy`.
#[no_mangle]
pub unsafe extern "C" fn ptx2llvm_rt_bulk_reduce(
    t: *mut Thread,
    what: *const c_char,
    dst: u64,
    src: u64,
    size: u32,
    mbar: u64,
    op: u32,
    ty: u32,
) {
    check_bulk(t, what, dst, src, size);
    let ops = [
        RedOp::And,
        RedOp::Or,
        RedOp::Xor,
        RedOp::Add,
        RedOp::Inc,
        RedOp::Dec,
        RedOp::Min,
        RedOp::Max,
    ];
    let tys = [
        RedType::U32,
        RedType::S32,
        RedType::U64,
        RedType::S64,
        RedType::F16,
        RedType::Bf16,
        RedType::F32,
        RedType::F64,
    ];
    let (Some(&op), Some(&ty)) = (ops.get(op as usize), tys.get(ty as usize)) else {
        fail(t, format!("`{}`: unknown reduction", name(what)));
    };
    super::fault::kernel_access(|| reduce(dst, src, size as usize, op, ty));
    if mbar != 0 {
        ptx2llvm_rt_mbar_tx(t, what, mbar, -(size as i64));
    }
}

/// One element reduction of `op` on 64-bit integers (`signed`: compare as signed; `bits`: the
/// width, for `inc`/`dec`'s wrap-around).
fn reduce_int(op: RedOp, a: u64, b: u64, signed: bool, bits: u32) -> u64 {
    let mask = if bits == 64 {
        u64::MAX
    } else {
        (1 << bits) - 1
    };
    let sx = |v: u64| -> i64 {
        if bits == 64 {
            v as i64
        } else {
            ((v << (64 - bits)) as i64) >> (64 - bits)
        }
    };
    let r = match op {
        RedOp::And => a & b,
        RedOp::Or => a | b,
        RedOp::Xor => a ^ b,
        RedOp::Add => a.wrapping_add(b),
        // PTX: inc: (a >= b) ? 0 : a + 1; dec: (a == 0 || a > b) ? b : a - 1 (unsigned).
        RedOp::Inc => {
            if a & mask >= b & mask {
                0
            } else {
                a + 1
            }
        }
        RedOp::Dec => {
            if a & mask == 0 || a & mask > b & mask {
                b
            } else {
                a - 1
            }
        }
        RedOp::Min if signed => sx(a).min(sx(b)) as u64,
        RedOp::Max if signed => sx(a).max(sx(b)) as u64,
        RedOp::Min => (a & mask).min(b & mask),
        RedOp::Max => (a & mask).max(b & mask),
    };
    r & mask
}

/// A float element reduction (`add`, `min`, `max`) in f64, which holds every f16, bf16 and f32
/// value and rounds their sums once when narrowed.
fn reduce_float(op: RedOp, a: f64, b: f64) -> f64 {
    match op {
        RedOp::Min => a.min(b),
        RedOp::Max => a.max(b),
        _ => a + b,
    }
}

unsafe fn reduce(dst: u64, src: u64, size: usize, op: RedOp, ty: RedType) {
    use super::softfp::{f16_bits_to_f32, f64_to_bf16_bits, f64_to_f16_bits};
    let bf = |h: u16| f32::from_bits((h as u32) << 16) as f64;
    macro_rules! each {
        ($t:ty, $f:expr) => {{
            let n = size / std::mem::size_of::<$t>();
            let d = dst as *mut $t;
            let s = src as *const $t;
            for k in 0..n {
                let a = d.add(k).read_unaligned();
                let b = s.add(k).read_unaligned();
                d.add(k).write_unaligned($f(a, b));
            }
        }};
    }
    match ty {
        RedType::U32 => each!(
            u32,
            |a: u32, b: u32| reduce_int(op, a as u64, b as u64, false, 32) as u32
        ),
        RedType::S32 => each!(
            u32,
            |a: u32, b: u32| reduce_int(op, a as u64, b as u64, true, 32) as u32
        ),
        RedType::U64 => each!(u64, |a, b| reduce_int(op, a, b, false, 64)),
        RedType::S64 => each!(u64, |a, b| reduce_int(op, a, b, true, 64)),
        RedType::F32 => each!(f32, |a: f32, b: f32| reduce_float(op, a as f64, b as f64)
            as f32),
        RedType::F64 => each!(f64, |a: f64, b: f64| match op {
            RedOp::Min => a.min(b),
            RedOp::Max => a.max(b),
            _ => a + b,
        }),
        RedType::F16 => each!(u16, |a: u16, b: u16| f64_to_f16_bits(reduce_float(
            op,
            f16_bits_to_f32(a) as f64,
            f16_bits_to_f32(b) as f64
        ))),
        RedType::Bf16 => each!(u16, |a: u16, b: u16| f64_to_bf16_bits(reduce_float(
            op,
            bf(a),
            bf(b)
        ))),
    }
}

/// Name and address of every entry point here, for JIT symbol resolution.
pub fn symbols() -> Vec<(&'static str, *const std::ffi::c_void)> {
    use std::ffi::c_void;
    vec![
        (
            "ptx2llvm_rt_mbar_init",
            ptx2llvm_rt_mbar_init as *const c_void,
        ),
        (
            "ptx2llvm_rt_mbar_inval",
            ptx2llvm_rt_mbar_inval as *const c_void,
        ),
        ("ptx2llvm_rt_mbar_tx", ptx2llvm_rt_mbar_tx as *const c_void),
        (
            "ptx2llvm_rt_mbar_arrive",
            ptx2llvm_rt_mbar_arrive as *const c_void,
        ),
        (
            "ptx2llvm_rt_mbar_wait",
            ptx2llvm_rt_mbar_wait as *const c_void,
        ),
        (
            "ptx2llvm_rt_cluster_arrive",
            ptx2llvm_rt_cluster_arrive as *const c_void,
        ),
        (
            "ptx2llvm_rt_cluster_wait",
            ptx2llvm_rt_cluster_wait as *const c_void,
        ),
        (
            "ptx2llvm_rt_mapa_rank",
            ptx2llvm_rt_mapa_rank as *const c_void,
        ),
        (
            "ptx2llvm_rt_bulk_copy",
            ptx2llvm_rt_bulk_copy as *const c_void,
        ),
        (
            "ptx2llvm_rt_bulk_reduce",
            ptx2llvm_rt_bulk_reduce as *const c_void,
        ),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encoding_round_trips_negative_tx() {
        let m = Mbar {
            parity: true,
            pending: 5,
            expected: 7,
            tx: -(MAX_COUNT),
        };
        assert_eq!(Mbar::decode(m.encode()), Some(m));
        assert_eq!(Mbar::decode(0), None);
    }

    #[test]
    fn phase_completes_only_without_pending_tx() {
        let mut m = Mbar {
            parity: false,
            pending: 0,
            expected: 3,
            tx: 16,
        };
        assert!(!m.settle());
        m.tx = 0;
        assert!(m.settle());
        assert_eq!((m.parity, m.pending), (true, 3));
        // Waiting for parity 0 (the completed phase) is over; for parity 1 it is not.
        assert!(done(m, 0, true));
        assert!(!done(m, 1, true));
    }

    #[test]
    fn reductions_follow_ptx_inc_dec() {
        assert_eq!(reduce_int(RedOp::Inc, 5, 5, false, 32), 0);
        assert_eq!(reduce_int(RedOp::Inc, 4, 5, false, 32), 5);
        assert_eq!(reduce_int(RedOp::Dec, 0, 9, false, 32), 9);
        assert_eq!(reduce_int(RedOp::Dec, 3, 9, false, 32), 2);
        assert_eq!(
            reduce_int(RedOp::Min, 0xffff_ffff, 1, true, 32),
            0xffff_ffff
        );
        assert_eq!(reduce_int(RedOp::Min, 0xffff_ffff, 1, false, 32), 1);
    }
}
