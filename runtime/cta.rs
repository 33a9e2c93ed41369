//! One CTA's execution state and its scheduler. Every CUDA thread of the CTA is a stackful
//! coroutine; the worker that owns the CTA resumes ready coroutines in FIFO order, and a thread
//! that reaches a barrier or a warp-level operation whose condition does not hold yet blocks
//! (suspends) until the last participant arrives and releases it.
//!
//! Semantics kept here (PTX ISA 9.2, `bar`/`barrier`, `shfl.sync`, `vote.sync`, `match.sync`,
//! `redux.sync`, `bar.warp.sync`, `elect.sync`, `activemask`):
//! - barriers count arrivals per warp: a warp has arrived once all its non-exited lanes did;
//!   without a thread count a barrier waits for every warp that still has non-exited threads,
//!   with a count it waits for `count / 32` warps (never more than are still alive);
//! - a warp-level operation waits for the non-exited lanes of its member mask to reach a warp
//!   operation of the same kind with the same mask, at any instruction (sm_70 and later);
//!   the `.aligned` matrix instructions at the same instruction; exited lanes are not waited
//!   for;
//! - `activemask` is answered when no thread of the CTA can run any more: the lanes of a warp
//!   waiting in the same `activemask` instruction at that moment are the active (converged)
//!   ones (lanes waiting at another one are not converged with them);
//! - instructions are told apart by a *program point* the caller passes (the coroutine
//!   lowering: the instruction's position in the PTX source; thread loops: the stop number);
//! - when no thread can run and some are blocked, the launch fails with a deadlock report.
//!
//! All state is owned by the worker thread running the CTA; the runtime entry points reach it
//! through `Thread::cta` while the scheduler is suspended in `resume`, so nothing here locks.

use std::collections::VecDeque;
use std::ffi::c_void;
use std::fmt::Write as _;

use corosensei::{Coroutine, CoroutineResult, Yielder};

use super::abi::{bar_red, redux, shfl, vote, Thread, NUM_BARRIERS, WARP_SIZE};
use super::launch::LaunchShared;
use super::LaunchError;

/// What a coroutine tells its scheduler when it suspends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Event {
    /// Waiting for a barrier, a warp operation or `activemask`.
    Blocked,
    /// Still runnable (already re-queued): `nanosleep`.
    Yield,
    /// `exit`: the thread is finished.
    Exited,
    /// `trap` or a runtime error: the launch has failed.
    Trapped,
}

pub(crate) type Coro = Coroutine<(), Event, (), super::local::AreaStack>;
pub(crate) type ThreadYielder = Yielder<(), Event>;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum St {
    Ready,
    Running,
    Blocked,
    Done,
}

/// Kinds of barrier participation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BarKind {
    Sync,
    Arrive,
    /// `bar.red` with the operator in `bar_red`.
    Red(u32),
}

/// A warp-level collective operation, with its mode.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WarpOp {
    Shfl(u32),
    Vote(u32),
    MatchAny,
    MatchAll,
    Redux(u32),
    Elect,
    WarpSync,
    /// A warp-collective matrix instruction (`runtime/matrix.rs`): 0 `mma.sync`, 1
    /// `ldmatrix`, 2 `stmatrix`, 3 `movmatrix`, 4 `wmma.mma`. Each lane computes its own
    /// result.
    Matrix(u32),
}

impl WarpOp {
    fn describe(self) -> String {
        match self {
            WarpOp::Shfl(m) => {
                let m = ["up", "down", "bfly", "idx"]
                    .get(m as usize)
                    .copied()
                    .unwrap_or("?");
                format!("shfl.sync.{m}")
            }
            WarpOp::Vote(m) => {
                let m = ["all", "any", "uni", "ballot"]
                    .get(m as usize)
                    .copied()
                    .unwrap_or("?");
                format!("vote.sync.{m}")
            }
            WarpOp::MatchAny => "match.any.sync".into(),
            WarpOp::MatchAll => "match.all.sync".into(),
            WarpOp::Redux(op) => {
                let name = match op & 0xf {
                    redux::ADD => "add",
                    redux::MIN_U32 => "min.u32",
                    redux::MAX_U32 => "max.u32",
                    redux::MIN_S32 => "min.s32",
                    redux::MAX_S32 => "max.s32",
                    redux::AND => "and",
                    redux::OR => "or",
                    redux::XOR => "xor",
                    redux::MIN_F32 => "min.f32",
                    redux::MAX_F32 => "max.f32",
                    _ => "?",
                };
                format!("redux.sync.{name}")
            }
            WarpOp::Elect => "elect.sync".into(),
            WarpOp::WarpSync => "bar.warp.sync".into(),
            WarpOp::Matrix(m) => ["mma.sync", "ldmatrix", "stmatrix", "movmatrix", "wmma.mma"]
                .get(m as usize)
                .copied()
                .unwrap_or("?")
                .into(),
        }
    }
}

/// What a blocked thread waits for (for the deadlock report).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Wait {
    None,
    Barrier { id: u32, count: u32 },
    Warp { op: WarpOp, mask: u32 },
    ActiveMask { pc: u32 },
}

#[derive(Clone, Debug, Default)]
struct Barrier {
    /// Lanes arrived in the current phase, per warp.
    arrived: Vec<u32>,
    /// Threads blocked until the barrier completes.
    waiters: Vec<u32>,
    /// Thread count of the phase (0: all threads of the CTA).
    count: u32,
    active: bool,
    popc: u32,
    all: bool,
    any: bool,
}

#[derive(Clone, Copy, Debug)]
struct Pending {
    mask: u32,
    op: WarpOp,
    /// The program point of the lanes' instruction.
    pc: u32,
    arrived: u32,
}

/// Lanes of warp `warp` waiting in the `activemask` at program point `pc`.
#[derive(Clone, Copy, Debug)]
struct AmWait {
    warp: u32,
    pc: u32,
    lanes: u32,
}

/// One CTA: thread states, barriers and pending warp operations.
pub(crate) struct Cta {
    pub(crate) launch: *const LaunchShared,
    pub(crate) ctaid: [u32; 3],
    pub(crate) ntid: [u32; 3],
    nthreads: u32,
    nwarps: u32,
    st: Vec<St>,
    wait: Vec<Wait>,
    /// Results handed to released threads.
    res: Vec<u32>,
    res_pred: Vec<bool>,
    /// The exchange area of warp matrix instructions (`runtime/matrix.rs`): two halves of
    /// one slot per thread; per thread the number of matrix instructions it has run (the
    /// parity picks the half); per warp and half the results of an `mma` for all its lanes
    /// and which instruction they are for. Empty until a kernel uses them.
    pub(crate) xchg: Vec<u32>,
    pub(crate) xseq: Vec<u32>,
    pub(crate) xres: Vec<u32>,
    pub(crate) xdone: Vec<u32>,
    /// Operands of the warp operation a thread waits in.
    arg_a: Vec<u64>,
    arg_b: Vec<u32>,
    arg_c: Vec<u32>,
    ready: VecDeque<u32>,
    /// Non-exited lanes per warp.
    live: Vec<u32>,
    nlive: u32,
    bars: Vec<Barrier>,
    pending: Vec<Vec<Pending>>,
    /// Lanes waiting in `activemask`, per warp and instruction.
    am_wait: Vec<AmWait>,
    /// The thread the scheduler is running.
    current: u32,
    /// The mbarrier waits and the cluster barrier (`runtime/mbarrier.rs`).
    pub(crate) mbar: super::mbarrier::CtaState,
}

impl Cta {
    pub(crate) fn new(launch: *const LaunchShared) -> Cta {
        Cta {
            launch,
            ctaid: [0; 3],
            ntid: [1; 3],
            nthreads: 0,
            nwarps: 0,
            st: Vec::new(),
            wait: Vec::new(),
            res: Vec::new(),
            res_pred: Vec::new(),
            xchg: Vec::new(),
            xseq: Vec::new(),
            xres: Vec::new(),
            xdone: Vec::new(),
            arg_a: Vec::new(),
            arg_b: Vec::new(),
            arg_c: Vec::new(),
            ready: VecDeque::new(),
            live: Vec::new(),
            nlive: 0,
            bars: vec![Barrier::default(); NUM_BARRIERS as usize],
            pending: Vec::new(),
            am_wait: Vec::new(),
            current: 0,
            mbar: Default::default(),
        }
    }

    /// Resets the state for a CTA of `ntid` threads.
    pub(crate) fn reset(&mut self, ctaid: [u32; 3], ntid: [u32; 3]) {
        let n = ntid[0] * ntid[1] * ntid[2];
        let nw = n.div_ceil(WARP_SIZE);
        self.ctaid = ctaid;
        self.ntid = ntid;
        self.nthreads = n;
        self.nwarps = nw;
        let n = n as usize;
        let nwu = nw as usize;
        self.st.clear();
        self.st.resize(n, St::Ready);
        self.wait.clear();
        self.wait.resize(n, Wait::None);
        self.res.clear();
        self.res.resize(n, 0);
        self.res_pred.clear();
        self.res_pred.resize(n, false);
        // Every lane starts at the same half, with no results computed.
        self.xseq.iter_mut().for_each(|p| *p = 0);
        self.xdone.iter_mut().for_each(|p| *p = u32::MAX);
        self.arg_a.clear();
        self.arg_a.resize(n, 0);
        self.arg_b.clear();
        self.arg_b.resize(n, 0);
        self.arg_c.clear();
        self.arg_c.resize(n, 0);
        self.ready.clear();
        self.ready.extend(0..n as u32);
        self.live.clear();
        for w in 0..nw {
            let lanes = (self.nthreads - w * WARP_SIZE).min(WARP_SIZE);
            self.live.push(if lanes == 32 {
                u32::MAX
            } else {
                (1u32 << lanes) - 1
            });
        }
        self.nlive = self.nthreads;
        for b in &mut self.bars {
            b.arrived.clear();
            b.arrived.resize(nwu, 0);
            b.waiters.clear();
            b.active = false;
        }
        self.pending.iter_mut().for_each(Vec::clear);
        self.pending.resize(nwu, Vec::new());
        self.am_wait.clear();
        self.current = 0;
        self.mbar.reset(n);
    }

    // ---- thread-loop (fission) driving ------------------------------------------------

    /// Sets the ids of the CTA a thread-loop worker runs (for error reports).
    pub(crate) fn fis_set_ids(&mut self, ctaid: [u32; 3], ntid: [u32; 3]) {
        self.ctaid = ctaid;
        self.ntid = ntid;
    }

    /// Starts deciding a thread-loop CTA's synchronization here: every thread is running
    /// (stopped threads are registered by the driver, exited ones reported with `fis_exit`).
    pub(crate) fn fis_begin(&mut self) {
        let (c, t) = (self.ctaid, self.ntid);
        self.reset(c, t);
        self.ready.clear();
        self.st.iter_mut().for_each(|s| *s = St::Running);
        self.current = u32::MAX;
    }

    /// Thread `i` has finished.
    pub(crate) fn fis_exit(&mut self, i: u32) {
        self.on_exit(i);
    }

    /// The next released thread (now running).
    pub(crate) fn fis_pop_ready(&mut self) -> Option<u32> {
        let i = self.ready.pop_front()?;
        self.st[i as usize] = St::Running;
        Some(i)
    }

    /// Threads that have not finished.
    pub(crate) fn fis_nlive(&self) -> u32 {
        self.nlive
    }

    /// Thread coordinates of linear index `i`.
    pub(crate) fn tid_of(&self, i: u32) -> [u32; 3] {
        let [x, y, _] = self.ntid;
        [i % x, (i / x) % y, i / (x * y)]
    }

    fn launch(&self) -> &LaunchShared {
        // SAFETY: the launch outlives every CTA it runs.
        unsafe { &*self.launch }
    }

    /// Builds the error for a failure of thread `i` with `message`.
    pub(crate) fn thread_error(&self, i: u32, message: String) -> LaunchError {
        LaunchError::Trap {
            kernel: self.launch().kernel.clone(),
            block: self.ctaid,
            thread: self.tid_of(i),
            message,
        }
    }

    /// Marks waiter `w` runnable with its result already stored.
    fn release(&mut self, w: u32) {
        let wi = w as usize;
        if self.st[wi] != St::Blocked {
            return;
        }
        self.wait[wi] = Wait::None;
        if w == self.current {
            self.st[wi] = St::Running;
        } else {
            self.st[wi] = St::Ready;
            self.ready.push_back(w);
        }
    }

    /// Whether thread `i` must suspend (it is still blocked after registering).
    pub(crate) fn is_blocked(&self, i: u32) -> bool {
        self.st[i as usize] == St::Blocked
    }

    /// Whether thread `i` has finished.
    pub(crate) fn is_done(&self, i: u32) -> bool {
        self.st[i as usize] == St::Done
    }

    pub(crate) fn result(&self, i: u32) -> (u32, bool) {
        (self.res[i as usize], self.res_pred[i as usize])
    }

    // ---- barriers ---------------------------------------------------------------------

    /// Thread `i` arrives at barrier `id` (checked: `id < 16`).
    pub(crate) fn bar_arrive(&mut self, i: u32, id: u32, count: u32, kind: BarKind, pred: bool) {
        let w = (i / WARP_SIZE) as usize;
        let bit = 1u32 << (i % WARP_SIZE);
        let b = &mut self.bars[id as usize];
        if !b.active {
            b.active = true;
            b.count = count;
            b.popc = 0;
            b.all = true;
            b.any = false;
        } else if b.count == 0 {
            b.count = count;
        }
        b.arrived[w] |= bit;
        if let BarKind::Red(op) = kind {
            b.popc += pred as u32;
            b.all &= pred;
            b.any |= pred;
            self.arg_b[i as usize] = op;
        } else {
            self.arg_b[i as usize] = u32::MAX;
        }
        if kind != BarKind::Arrive {
            b.waiters.push(i);
            self.st[i as usize] = St::Blocked;
            self.wait[i as usize] = Wait::Barrier { id, count };
        }
        if self.bar_complete(id) {
            self.bar_finish(id);
        }
    }

    /// Warps that have arrived at barrier `id`, and whether every warp with a non-exited
    /// thread has.
    fn bar_progress(&self, id: u32) -> (u32, u32, bool) {
        let b = &self.bars[id as usize];
        let mut arrived = 0;
        let mut alive = 0;
        let mut all = true;
        for (w, &live) in self.live.iter().enumerate() {
            let a = b.arrived[w];
            if live != 0 {
                alive += 1;
            }
            if a != 0 && a & live == live {
                arrived += 1;
            } else if live != 0 {
                all = false;
            }
        }
        (arrived, alive, all)
    }

    fn bar_complete(&self, id: u32) -> bool {
        let b = &self.bars[id as usize];
        if !b.active {
            return false;
        }
        let (arrived, alive, all) = self.bar_progress(id);
        if b.count == 0 {
            all
        } else {
            let needed = b.count.div_ceil(WARP_SIZE).min(alive.max(1));
            arrived >= needed
        }
    }

    fn bar_finish(&mut self, id: u32) {
        let b = &mut self.bars[id as usize];
        let waiters = std::mem::take(&mut b.waiters);
        let (popc, all, any) = (b.popc, b.all, b.any);
        b.arrived.iter_mut().for_each(|a| *a = 0);
        b.active = false;
        for &w in &waiters {
            self.res[w as usize] = match self.arg_b[w as usize] {
                bar_red::POPC => popc,
                bar_red::AND => all as u32,
                bar_red::OR => any as u32,
                _ => 0,
            };
            self.release(w);
        }
        let b = &mut self.bars[id as usize];
        if b.waiters.is_empty() {
            b.waiters = waiters;
            b.waiters.clear();
        }
    }

    // ---- warp operations -------------------------------------------------------------

    /// Sizes the exchange area of warp matrix instructions for this CTA's threads (`words`
    /// per slot, `results` per lane and half).
    pub(crate) fn matrix_area(&mut self, words: usize, results: usize) {
        let n = self.nthreads as usize;
        if self.xseq.len() != n {
            let nw = self.nwarps as usize;
            self.xseq = vec![0; n];
            self.xchg = vec![0; 2 * n * words];
            self.xres = vec![0; 2 * nw * WARP_SIZE as usize * results];
            self.xdone = vec![u32::MAX; 2 * nw];
        }
    }

    /// Thread `i` arrives at warp operation `op` at program point `pc` with member mask
    /// `mask` and operands `a`, `b`, `c`. Errors name what is wrong; the caller turns them
    /// into a launch failure.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn warp_arrive(
        &mut self,
        i: u32,
        op: WarpOp,
        mask: u32,
        pc: u32,
        a: u64,
        b: u32,
        c: u32,
    ) -> Result<(), String> {
        let w = (i / WARP_SIZE) as usize;
        let lane = i % WARP_SIZE;
        let bit = 1u32 << lane;
        if mask & bit == 0 {
            return Err(format!(
                "{}: the executing lane {lane} is not in the member mask {mask:#010x}",
                op.describe()
            ));
        }
        let iu = i as usize;
        self.arg_a[iu] = a;
        self.arg_b[iu] = b;
        self.arg_c[iu] = c;
        match self.pending[w].iter_mut().find(|p| p.mask == mask) {
            Some(p) if p.op != op => {
                return Err(format!(
                    "lanes of warp {w} with member mask {mask:#010x} reached different warp \
                     operations: {} and {} (lane {lane})",
                    p.op.describe(),
                    op.describe()
                ));
            }
            // `.sync` operations pair lanes at different instructions with the same qualifiers
            // and mask (PTX ISA, sm_70 and later: the CUDA guide's `__shfl_xor_sync` in both
            // sides of an `if`); the `.aligned` matrix instructions need the same instruction
            // in every lane.
            Some(p) if p.pc != pc && matches!(op, WarpOp::Matrix(_)) => {
                return Err(format!(
                    "lanes of warp {w} with member mask {mask:#010x} reached different {} \
                     instructions (lane {lane})",
                    op.describe()
                ));
            }
            Some(p) => p.arrived |= bit,
            None => self.pending[w].push(Pending {
                mask,
                op,
                pc,
                arrived: bit,
            }),
        }
        self.st[iu] = St::Blocked;
        self.wait[iu] = Wait::Warp { op, mask };
        self.warp_check(w);
        Ok(())
    }

    /// Completes every pending operation of warp `w` whose non-exited members all arrived.
    fn warp_check(&mut self, w: usize) {
        let mut k = 0;
        while k < self.pending[w].len() {
            let p = self.pending[w][k];
            if p.mask & self.live[w] & !p.arrived == 0 {
                self.pending[w].swap_remove(k);
                self.warp_complete(w, p);
            } else {
                k += 1;
            }
        }
    }

    fn warp_complete(&mut self, w: usize, p: Pending) {
        let base = w * WARP_SIZE as usize;
        let arrived = p.arrived;
        let lanes = || (0..WARP_SIZE).filter(move |l| arrived & (1 << l) != 0);
        let a = |s: &Cta, l: u32| s.arg_a[base + l as usize];
        match p.op {
            WarpOp::Shfl(mode) => {
                for l in lanes() {
                    let li = base + l as usize;
                    let (j, pval) = shfl_source(mode, l, self.arg_b[li], self.arg_c[li]);
                    let src = if pval && arrived & (1 << j) != 0 {
                        j
                    } else {
                        l
                    };
                    self.res[li] = a(self, src) as u32;
                    self.res_pred[li] = pval;
                }
            }
            WarpOp::Vote(mode) => {
                let ballot = lanes()
                    .filter(|&l| a(self, l) != 0)
                    .fold(0u32, |m, l| m | 1 << l);
                let r = match mode {
                    vote::ALL => (ballot == arrived) as u32,
                    vote::ANY => (ballot != 0) as u32,
                    vote::UNI => (ballot == arrived || ballot == 0) as u32,
                    _ => ballot,
                };
                for l in lanes() {
                    self.res[base + l as usize] = r;
                }
            }
            WarpOp::MatchAny => {
                for l in lanes() {
                    let v = a(self, l);
                    let m = lanes()
                        .filter(|&k| a(self, k) == v)
                        .fold(0u32, |m, k| m | 1 << k);
                    self.res[base + l as usize] = m;
                }
            }
            WarpOp::MatchAll => {
                let first = a(self, arrived.trailing_zeros());
                let same = lanes().all(|l| a(self, l) == first);
                for l in lanes() {
                    self.res[base + l as usize] = if same { arrived } else { 0 };
                    self.res_pred[base + l as usize] = same;
                }
            }
            WarpOp::Redux(op) => {
                let vals: Vec<u32> = lanes().map(|l| a(self, l) as u32).collect();
                let r = redux_fold(op, &vals);
                for l in lanes() {
                    self.res[base + l as usize] = r;
                }
            }
            WarpOp::Elect => {
                let leader = arrived.trailing_zeros();
                for l in lanes() {
                    self.res[base + l as usize] = leader;
                    self.res_pred[base + l as usize] = l == leader;
                }
            }
            WarpOp::WarpSync | WarpOp::Matrix(_) => {}
        }
        for l in lanes() {
            self.release((base + l as usize) as u32);
        }
    }

    /// Thread `i` waits in the `activemask` at program point `pc`.
    pub(crate) fn activemask_arrive(&mut self, i: u32, pc: u32) {
        let warp = i / WARP_SIZE;
        let bit = 1 << (i % WARP_SIZE);
        match self
            .am_wait
            .iter_mut()
            .find(|a| a.warp == warp && a.pc == pc)
        {
            Some(a) => a.lanes |= bit,
            None => self.am_wait.push(AmWait {
                warp,
                pc,
                lanes: bit,
            }),
        }
        self.st[i as usize] = St::Blocked;
        self.wait[i as usize] = Wait::ActiveMask { pc };
    }

    /// Answers every `activemask` waiting; called when no thread can run. The lanes of a warp
    /// at one `activemask` instruction are converged; lanes at another are not (a GPU runs
    /// the two as different instructions). Returns whether any thread was released.
    pub(crate) fn activemask_resolve(&mut self) -> bool {
        let waits = std::mem::take(&mut self.am_wait);
        for a in &waits {
            let base = a.warp * WARP_SIZE;
            for l in 0..WARP_SIZE {
                if a.lanes & (1 << l) != 0 {
                    self.res[(base + l) as usize] = a.lanes;
                    self.release(base + l);
                }
            }
        }
        let any = !waits.is_empty();
        // Keep the allocation for the next round.
        self.am_wait = waits;
        self.am_wait.clear();
        any
    }

    /// Thread `i` stays runnable but lets the others run first (`nanosleep`). Returns whether
    /// another thread is ready.
    pub(crate) fn requeue(&mut self, i: u32) -> bool {
        let others = !self.ready.is_empty();
        self.st[i as usize] = St::Ready;
        self.ready.push_back(i);
        others
    }

    /// Thread `i` has finished (returned or executed `exit`).
    fn on_exit(&mut self, i: u32) {
        let iu = i as usize;
        if self.st[iu] == St::Done {
            return;
        }
        self.st[iu] = St::Done;
        self.nlive -= 1;
        let w = iu / WARP_SIZE as usize;
        self.live[w] &= !(1 << (i % WARP_SIZE));
        for id in 0..NUM_BARRIERS {
            if self.bar_complete(id) {
                self.bar_finish(id);
            }
        }
        self.warp_check(w);
    }

    /// The deadlock report: which threads wait for what.
    pub(crate) fn deadlock_report(&self) -> String {
        let mut seen: Vec<Wait> = Vec::new();
        let mut out = String::new();
        let mut blocked = 0;
        for i in 0..self.nthreads {
            if self.st[i as usize] != St::Blocked {
                continue;
            }
            blocked += 1;
            let wt = self.wait[i as usize];
            if seen.contains(&wt) || seen.len() >= 4 {
                continue;
            }
            seen.push(wt);
            let [x, y, z] = self.tid_of(i);
            let w = i / WARP_SIZE;
            let what = match wt {
                Wait::Barrier { id, count } => {
                    let (arrived, alive, _) = self.bar_progress(id);
                    let expect = if count == 0 {
                        format!("all {alive} warps with non-exited threads")
                    } else {
                        format!("{count} threads ({} warps)", count.div_ceil(WARP_SIZE))
                    };
                    format!("barrier {id}, which expects {expect}; {arrived} warps have arrived")
                }
                Wait::Warp { op, mask } => {
                    let missing = self.pending[w as usize]
                        .iter()
                        .find(|p| p.mask == mask)
                        .map(|p| mask & self.live[w as usize] & !p.arrived)
                        .unwrap_or(0);
                    format!(
                        "{} with member mask {mask:#010x}; lanes not arrived: {missing:#010x}",
                        op.describe()
                    )
                }
                Wait::ActiveMask { .. } => "activemask".to_string(),
                Wait::None => "nothing".to_string(),
            };
            if !out.is_empty() {
                out.push_str("; ");
            }
            let _ = write!(
                out,
                "thread ({x}, {y}, {z}) (warp {w}, lane {}) waits at {what}",
                i % 32
            );
        }
        format!(
            "{blocked} of {} non-exited threads are blocked and none can run: {out}",
            self.nlive
        )
    }

    /// Runs the CTA to completion on this worker. `coros[i]` is thread `i`'s coroutine.
    /// Returns the failure, if any; every coroutine is finished (or reset) on return.
    ///
    /// # Safety
    /// `this` must point to a live `Cta` that only this call (and the coroutines it resumes)
    /// touches until it returns; `threads` to the CTA's thread contexts.
    pub(crate) unsafe fn run(
        this: *mut Cta,
        coros: &mut [Coro],
        threads: *mut Thread,
    ) -> Result<(), LaunchError> {
        let result = loop {
            let launch = &*(*this).launch;
            if launch.aborted() {
                break Ok(());
            }
            let next = (*this).ready.pop_front();
            let Some(i) = next else {
                if (*this).nlive == 0 {
                    break Ok(());
                }
                if (*this).activemask_resolve() {
                    continue;
                }
                let c = &*this;
                break Err(LaunchError::Deadlock {
                    kernel: launch.kernel.clone(),
                    block: c.ctaid,
                    detail: c.deadlock_report(),
                });
            };
            {
                let c = &mut *this;
                c.st[i as usize] = St::Running;
                c.current = i;
            }
            super::nvvm::CURRENT.with(|c| c.set(threads.add(i as usize)));
            let r = coros[i as usize].resume(());
            (*this).current = u32::MAX; // nobody runs: releases must queue every waiter
            match r {
                CoroutineResult::Return(()) => (*this).on_exit(i),
                CoroutineResult::Yield(Event::Blocked | Event::Yield) => {}
                CoroutineResult::Yield(Event::Exited) => {
                    coros[i as usize].force_reset();
                    (*this).on_exit(i);
                }
                CoroutineResult::Yield(Event::Trapped) => {
                    coros[i as usize].force_reset();
                    break Ok(()); // the error is recorded in the launch
                }
            }
        };
        for c in coros.iter_mut() {
            if !c.done() {
                // No Rust object with a destructor lives on a suspended thread's stack: the
                // runtime entry points hold only plain data across a suspension.
                c.force_reset();
            }
        }
        result
    }
}

/// Source lane and in-range predicate of `shfl.sync` (PTX ISA 9.7.9.6 semantics).
pub(crate) fn shfl_source(mode: u32, lane: u32, b: u32, c: u32) -> (u32, bool) {
    let bval = b & 0x1f;
    let cval = c & 0x1f;
    let segmask = (c >> 8) & 0x1f;
    let max_lane = (lane & segmask) | (cval & !segmask);
    let min_lane = lane & segmask;
    let (j, pval) = match mode {
        shfl::UP => {
            let j = lane as i32 - bval as i32;
            (j, j >= max_lane as i32)
        }
        shfl::DOWN => {
            let j = (lane + bval) as i32;
            (j, j <= max_lane as i32)
        }
        shfl::BFLY => {
            let j = (lane ^ bval) as i32;
            (j, j <= max_lane as i32)
        }
        _ => {
            let j = (min_lane | (bval & !segmask)) as i32;
            (j, j <= max_lane as i32)
        }
    };
    if pval {
        (j as u32, true)
    } else {
        (lane, false)
    }
}

/// Folds `redux.sync` operator `op` over the participating values.
pub(crate) fn redux_fold(op: u32, vals: &[u32]) -> u32 {
    let it = vals.iter().copied();
    match op & 0xf {
        redux::ADD => it.fold(0u32, u32::wrapping_add),
        redux::MIN_U32 => it.min().unwrap_or(0),
        redux::MAX_U32 => it.max().unwrap_or(0),
        redux::MIN_S32 => it.map(|v| v as i32).min().unwrap_or(0) as u32,
        redux::MAX_S32 => it.map(|v| v as i32).max().unwrap_or(0) as u32,
        redux::AND => it.fold(u32::MAX, |a, b| a & b),
        redux::OR => it.fold(0, |a, b| a | b),
        redux::XOR => it.fold(0, |a, b| a ^ b),
        f @ (redux::MIN_F32 | redux::MAX_F32) => {
            let abs = op & redux::FLAG_ABS != 0;
            let nan = op & redux::FLAG_NAN != 0;
            let mut acc: Option<f32> = None;
            for v in it {
                let mut x = f32::from_bits(v);
                if abs {
                    x = x.abs();
                }
                if x.is_nan() {
                    if nan {
                        return 0x7fff_ffff; // canonical NaN
                    }
                    continue;
                }
                acc = Some(match acc {
                    None => x,
                    // min/max of -0.0 and +0.0: -0.0 is the smaller.
                    Some(a) if f == redux::MIN_F32 => {
                        if x < a || (x == a && x.is_sign_negative()) {
                            x
                        } else {
                            a
                        }
                    }
                    Some(a) => {
                        if x > a || (x == a && x.is_sign_positive()) {
                            x
                        } else {
                            a
                        }
                    }
                });
            }
            acc.map_or(0x7fff_ffff, f32::to_bits)
        }
        _ => 0,
    }
}

/// The yielder of the coroutine running thread `t`.
///
/// # Safety
/// `t` must be the context of the running coroutine.
pub(crate) unsafe fn yielder<'a>(t: *mut Thread) -> &'a ThreadYielder {
    &*((*t).yielder as *const ThreadYielder)
}

/// The CTA of thread `t`.
///
/// # Safety
/// `t` must be the context of a running coroutine.
pub(crate) unsafe fn cta_of(t: *mut Thread) -> *mut Cta {
    (*t).cta as *mut Cta
}

/// Stores the yielder pointer in the context (first thing a coroutine does).
pub(crate) fn set_yielder(t: *mut Thread, y: &ThreadYielder) {
    // SAFETY: `t` is this coroutine's own context.
    unsafe { (*t).yielder = y as *const ThreadYielder as *const c_void }
}
