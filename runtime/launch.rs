//! The grid launcher: validates a launch configuration, hands CTAs to a pool of worker threads
//! (one per core) from an atomic counter, and runs each CTA's threads as coroutines on stacks
//! of the worker's guarded stack area (`local.rs`), kept across CTAs and launches. The first failure (trap, deadlock) stops the
//! launch: workers take no new CTA and the failing CTA is abandoned.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;

use corosensei::CoroutineResult;

use super::abi::{KernelEntry, Thread, MAX_SHARED_PER_CTA, MAX_THREADS_PER_CTA, WARP_SIZE};
use super::cta::{set_yielder, Coro, Cta, ThreadYielder};
use super::fission::{FisFault, FisKernel, FisMem};
use super::local::StackArea;
use super::shared::SharedBlock;
use super::LaunchError;

/// Compiled code of a kernel: a coroutine per CUDA thread, or thread loops (`fission`).
#[derive(Clone)]
pub enum KernelCode {
    /// `void K(const void *params, ptx2llvm_thread *t)`, run once per CUDA thread.
    Coroutine(KernelEntry),
    /// The CTA function of a kernel compiled for thread-loop execution.
    Fission(FisKernel),
}

/// Default size of a CUDA thread's coroutine stack (`.local` arrays and call frames live there).
pub const DEFAULT_STACK_SIZE: usize = 256 * 1024;

/// Everything that describes one kernel launch.
#[derive(Clone, Debug)]
pub struct LaunchConfig {
    /// CTAs in the grid (`%nctaid`).
    pub grid: [u32; 3],
    /// Threads per CTA (`%ntid`).
    pub block: [u32; 3],
    /// Bytes of the module's static `.shared` variables (laid out by the compiler).
    pub static_shared: u32,
    /// Bytes of dynamic shared memory (`.extern .shared` arrays), after the static block.
    pub dynamic_shared: u32,
    /// The largest alignment the module's `.shared` variables ask for (`Program::shared_align`):
    /// the CTA's block starts at a multiple of it (and of 256).
    pub shared_align: u32,
    /// Coroutine stack size per CUDA thread.
    pub stack_size: usize,
    /// Worker threads; `None`: one per core.
    pub workers: Option<usize>,
    /// A cooperative launch (`cuLaunchCooperativeKernel`): every CTA is resident at once, on
    /// a worker of its own, and `%envreg1:%envreg2` hold the address of the launch's grid
    /// workspace (`GridWorkspace`), where grid-wide barriers meet.
    pub cooperative: bool,
}

/// The most CTAs a cooperative launch may have: each runs on a thread of its own.
pub const MAX_COOPERATIVE_CTAS: u64 = 4096;

/// The grid workspace of a cooperative launch, laid out as CUDA's cooperative groups read it
/// (`cooperative_groups/details/driver_abi.h`: `{ wsSize, barrier }`). `barrier` is the
/// arrival counter whose top bit flips when the whole grid has arrived (`details/sync.h`);
/// `aborted` (ptx2llvm's own) tells the grid-sync functions of `cuda/src/devrt.ptx` that the
/// launch failed so that they stop waiting.
#[repr(C)]
pub struct GridWorkspace {
    pub ws_size: std::sync::atomic::AtomicU32,
    pub barrier: std::sync::atomic::AtomicU32,
    pub aborted: std::sync::atomic::AtomicU32,
}

impl Default for LaunchConfig {
    fn default() -> Self {
        LaunchConfig {
            grid: [1; 3],
            block: [1; 3],
            static_shared: 0,
            dynamic_shared: 0,
            shared_align: 16,
            stack_size: DEFAULT_STACK_SIZE,
            workers: None,
            cooperative: false,
        }
    }
}

impl LaunchConfig {
    /// Offset of the dynamic shared memory in the CTA block: after the static variables,
    /// aligned to 16.
    pub fn dynamic_offset(&self) -> u32 {
        self.static_shared.div_ceil(16).saturating_mul(16)
    }

    /// Bytes of the CTA's shared memory: static variables, then the dynamic arrays (no
    /// overflow: `validate` bounds it).
    pub fn shared_bytes(&self) -> u64 {
        (self.static_shared as u64).div_ceil(16) * 16 + self.dynamic_shared as u64
    }

    /// Checks the limits of a CUDA launch; the error says what was expected.
    pub fn validate(&self) -> Result<(), LaunchError> {
        let bad = |m: String| Err(LaunchError::Config(m));
        let [bx, by, bz] = self.block;
        let [gx, gy, gz] = self.grid;
        if self.block.contains(&0) || self.grid.contains(&0) {
            return bad(format!(
                "grid ({gx}, {gy}, {gz}) and block ({bx}, {by}, {bz}) must have every dimension \
                 at least 1"
            ));
        }
        let threads = bx as u64 * by as u64 * bz as u64;
        if threads > MAX_THREADS_PER_CTA as u64 {
            return bad(format!(
                "block ({bx}, {by}, {bz}) has {threads} threads; at most {MAX_THREADS_PER_CTA} \
                 are allowed"
            ));
        }
        if bz > 64 {
            return bad(format!("block z dimension {bz} exceeds 64"));
        }
        if gx > i32::MAX as u32 || gy > 65535 || gz > 65535 {
            return bad(format!(
                "grid ({gx}, {gy}, {gz}) exceeds the limits (2147483647, 65535, 65535)"
            ));
        }
        let total = self.shared_bytes();
        if total > MAX_SHARED_PER_CTA as u64 {
            return bad(format!(
                "shared memory per block is {total} bytes ({} static + {} dynamic); at most \
                 {MAX_SHARED_PER_CTA} bytes are allowed",
                self.static_shared, self.dynamic_shared
            ));
        }
        if self.cooperative && self.ctas() > MAX_COOPERATIVE_CTAS {
            return bad(format!(
                "a cooperative launch of {} CTAs: at most {MAX_COOPERATIVE_CTAS} can be resident \
                 at once",
                self.ctas()
            ));
        }
        if self.stack_size < 16 * 1024 {
            return bad(format!("stack size {} is below 16 KiB", self.stack_size));
        }
        Ok(())
    }

    fn ctas(&self) -> u64 {
        self.grid.iter().map(|&d| d as u64).product()
    }
}

/// Launch-wide state every worker and CTA shares.
pub(crate) struct LaunchShared {
    pub(crate) kernel: String,
    code: KernelCode,
    params: *const u8,
    cfg: LaunchConfig,
    next_cta: AtomicU64,
    aborted: AtomicBool,
    error: Mutex<Option<LaunchError>>,
    gridid: u64,
    nworkers: u32,
    /// `%envreg0`..`%envreg31` (the grid workspace's address in 1 and 2; zero otherwise).
    pub(crate) envreg: [u32; 32],
}

// SAFETY: `params` points to a buffer the launcher keeps alive and unchanged for the launch;
// everything else is Sync.
unsafe impl Sync for LaunchShared {}

impl LaunchShared {
    pub(crate) fn aborted(&self) -> bool {
        self.aborted.load(Ordering::Relaxed)
    }

    /// Records the first failure and stops the launch.
    pub(crate) fn fail(&self, e: LaunchError) {
        if let Ok(mut slot) = self.error.lock() {
            if slot.is_none() {
                *slot = Some(e);
            }
        }
        self.aborted.store(true, Ordering::Relaxed);
    }
}

/// `%gridid`: counts launches.
static GRIDID: AtomicU64 = AtomicU64::new(1);

/// Launches `entry` over the grid and waits for it. `params` is the kernel's parameter buffer
/// (CUDA layout); it must stay valid and unchanged during the launch.
///
/// # Safety
/// `entry` must be a kernel compiled for the cpu target, and `params` must hold what it
/// expects (device pointers in it must be valid host memory of the right size).
pub unsafe fn launch(
    kernel: &str,
    entry: KernelEntry,
    params: &[u8],
    cfg: &LaunchConfig,
) -> Result<(), LaunchError> {
    // Objects register the thread-loop versions of their kernels; PTX2LLVM_CPU_MODE=coroutine
    // keeps the coroutine entry point.
    // Thread loops specialized for another CTA shape (`.reqntid`) fall back to coroutines.
    let code = match super::fission::registered(entry as usize) {
        Some(k)
            if crate::target::cpu::fission::CpuMode::from_env()
                != crate::target::cpu::fission::CpuMode::Coroutine
                && k.info.block.is_none_or(|b| b == cfg.block) =>
        {
            KernelCode::Fission(k)
        }
        _ => KernelCode::Coroutine(entry),
    };
    launch_code(kernel, &code, params, cfg)
}

/// Launches compiled kernel code of either kind over the grid and waits for it (see
/// `launch`).
///
/// # Safety
/// As `launch`: `code` must be compiled for the cpu target and `params` hold what it expects.
pub unsafe fn launch_code(
    kernel: &str,
    code: &KernelCode,
    params: &[u8],
    cfg: &LaunchConfig,
) -> Result<(), LaunchError> {
    cfg.validate()?;
    if let KernelCode::Fission(k) = code {
        // A warp-engine kernel whose alignment tests would fail for these parameters, or
        // whose flat x indices assume fewer threads in x, runs on the engine that tests each
        // access and assumes nothing of the grid (`AlignGuard`).
        if let Some(g) = k
            .aligned
            .as_ref()
            .filter(|g| !g.holds(params, cfg.grid, cfg.block))
        {
            let other = g.fallback.code().map_err(|e| {
                LaunchError::Resource(format!(
                    "kernel {kernel}: a parameter is not aligned for its accesses or the grid \
                     has 2^31 threads in x, and the code without the warp engine, which \
                     allows both, could not be built: {e}"
                ))
            })?;
            return launch_code(kernel, &other, params, cfg);
        }
        if let Some(b) = k.info.block.filter(|&b| b != cfg.block) {
            return Err(LaunchError::Config(format!(
                "kernel {kernel} was compiled for blocks of ({}, {}, {}) threads (its \
                 `.reqntid`, or the block it was specialized for), not ({}, {}, {})",
                b[0], b[1], b[2], cfg.block[0], cfg.block[1], cfg.block[2]
            )));
        }
    }
    let ctas = cfg.ctas();
    let cores = super::pool::cores();
    // A cooperative launch keeps every CTA resident: one worker each, so a CTA waiting at a
    // grid barrier never keeps another from running, whatever scheme runs its threads.
    let nworkers = if cfg.cooperative {
        ctas as usize
    } else {
        cfg.workers.unwrap_or(cores).max(1).min(ctas as usize)
    };
    let workspace = GridWorkspace {
        ws_size: std::sync::atomic::AtomicU32::new(size_of::<GridWorkspace>() as u32),
        barrier: std::sync::atomic::AtomicU32::new(0),
        aborted: std::sync::atomic::AtomicU32::new(0),
    };
    let mut envreg = [0u32; 32];
    if cfg.cooperative {
        let a = &workspace as *const GridWorkspace as u64;
        envreg[1] = (a >> 32) as u32;
        envreg[2] = a as u32;
    }
    // Keep the parameters 16-byte aligned whatever the caller's buffer is.
    let mut aligned = vec![0u128; params.len().div_ceil(16).max(1)];
    // SAFETY: `aligned` has at least `params.len()` bytes.
    std::ptr::copy_nonoverlapping(
        params.as_ptr(),
        aligned.as_mut_ptr() as *mut u8,
        params.len(),
    );
    let shared = LaunchShared {
        kernel: kernel.to_string(),
        code: code.clone(),
        params: aligned.as_ptr() as *const u8,
        cfg: cfg.clone(),
        next_cta: AtomicU64::new(0),
        aborted: AtomicBool::new(false),
        error: Mutex::new(None),
        gridid: GRIDID.fetch_add(1, Ordering::Relaxed),
        nworkers: nworkers as u32,
        envreg,
    };
    let sh = &shared;
    let run = move |w| {
        // Nothing left from an earlier launch (a panic may have skipped its flush).
        super::red::flush(true);
        match &sh.code {
            KernelCode::Coroutine(_) => worker(sh, w),
            KernelCode::Fission(k) => fis_worker(sh, k, w),
        }
        // Before the launch returns: the additions this worker kept (`red.rs`).
        super::red::flush(sh.aborted());
    };
    if cfg.cooperative {
        cooperative_run(sh, &workspace, nworkers, &run);
    } else {
        super::pool::run(nworkers, &run);
    }
    super::printf::flush();
    let err = shared.error.lock().ok().and_then(|mut e| e.take());
    match err {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

/// Runs the workers of a cooperative launch, with a watcher that frees the CTAs waiting at a
/// grid barrier once the launch has failed: a failed CTA never arrives, so the others would
/// wait forever. The watcher sets `aborted` (read by `devrt.ptx`'s grid sync) and flips the
/// barrier's top bit every 100 µs (CUDA's inline `sync_grids` spins until it sees a flip); the
/// released CTAs run on to their end (their further failures are not reported).
fn cooperative_run(
    sh: &LaunchShared,
    ws: &GridWorkspace,
    nworkers: usize,
    run: &(dyn Fn(u32) + Sync),
) {
    let done = AtomicBool::new(false);
    std::thread::scope(|s| {
        let watcher = std::thread::Builder::new()
            .name("ptx2llvm-grid-watch".into())
            .spawn_scoped(s, || {
                while !done.load(Ordering::Acquire) {
                    if sh.aborted() {
                        ws.aborted.store(1, Ordering::Release);
                        ws.barrier.fetch_xor(0x8000_0000, Ordering::AcqRel);
                    }
                    std::thread::sleep(std::time::Duration::from_micros(100));
                }
            });
        super::pool::run(nworkers, run);
        done.store(true, Ordering::Release);
        drop(watcher);
    });
}

/// One worker: takes CTAs from the shared counter until none is left or the launch failed.
fn worker(sh: &LaunchShared, index: u32) {
    let cfg = &sh.cfg;
    let [bx, by, bz] = cfg.block;
    let n = (bx * by * bz) as usize;
    let area = match StackArea::take(cfg.stack_size, n) {
        Ok(a) => a,
        Err(e) => return sh.fail(e),
    };
    let _stacks_window = super::fault::LocalWindow::set(0, area.window());
    let total_shared = cfg.shared_bytes() as usize;
    let mut shared_mem = match SharedBlock::take(total_shared, cfg.shared_align as usize) {
        Ok(b) => b,
        Err(e) => return sh.fail(e),
    };
    let _window = super::fault::SharedWindow::set(&shared_mem);
    let mut cta = Box::new(Cta::new(sh));
    let cta_ptr: *mut Cta = &mut *cta;
    let mut threads: Vec<Thread> = (0..n).map(|_| blank_thread()).collect();
    let mut coros: Vec<Coro> = Vec::with_capacity(n);
    let red_table = super::red::table() as *mut std::ffi::c_void;
    let [gx, gy, _] = cfg.grid;
    let total = cfg.ctas();
    loop {
        if sh.aborted() {
            break;
        }
        let k = sh.next_cta.fetch_add(1, Ordering::Relaxed);
        if k >= total {
            break;
        }
        let ctaid = [
            (k % gx as u64) as u32,
            ((k / gx as u64) % gy as u64) as u32,
            (k / (gx as u64 * gy as u64)) as u32,
        ];
        shared_mem.zero();
        // SAFETY: only this worker touches `cta` and `threads` outside the coroutines.
        unsafe { (*cta_ptr).reset(ctaid, cfg.block) };
        let base = shared_mem.base();
        let mut stack_list = area.stacks(n);
        for (i, t) in threads.iter_mut().enumerate() {
            let i = i as u32;
            let tid = [i % bx, (i / bx) % by, i / (bx * by)];
            *t = Thread {
                tid,
                ntid: cfg.block,
                ctaid,
                nctaid: cfg.grid,
                laneid: i % WARP_SIZE,
                warpid: i / WARP_SIZE,
                nwarpid: (n as u32).div_ceil(WARP_SIZE),
                smid: index,
                nsmid: sh.nworkers,
                dynamic_smem_size: cfg.dynamic_shared,
                total_smem_size: total_shared as u32,
                flat_tid: i,
                gridid: sh.gridid,
                shared: base,
                local: std::ptr::null_mut(),
                cta: cta_ptr as *mut _,
                yielder: std::ptr::null(),
                reserved: [std::ptr::null_mut(), red_table],
            };
        }
        let KernelCode::Coroutine(entry) = sh.code else {
            return;
        };
        for t in threads.iter_mut() {
            let tp: *mut Thread = t;
            let params = sh.params;
            let Some(stack) = stack_list.pop() else {
                return sh.fail(LaunchError::Resource("thread stack pool exhausted".into()));
            };
            coros.push(Coro::with_stack(stack, move |y: &ThreadYielder, ()| {
                set_yielder(tp, y);
                // SAFETY: the launcher's contract: `entry` is a cpu-target kernel and the
                // parameter buffer matches it.
                unsafe { entry(params, tp) };
            }));
        }
        // SAFETY: `cta_ptr` is live and owned by this worker; the coroutines reach it only
        // through their contexts while `run` resumes them.
        let r = unsafe { Cta::run(cta_ptr, &mut coros, threads.as_mut_ptr()) };
        // Finished or reset: the stacks go back to the area with them.
        coros.clear();
        if let Err(e) = r {
            sh.fail(e);
            break;
        }
    }
    drop(coros);
    drop(_stacks_window);
    area.give();
    drop(_window);
    shared_mem.give(cfg.shared_align as usize);
}

/// CTAs a thread-loop worker takes at a time: about 16 chunks per worker for balance, but at
/// most about 128 Ki threads, and at least one CTA. Large contiguous chunks matter for
/// streaming kernels: with chunks of 16 Ki threads the workers' interleaved streams ran a
/// vector add 1.4x slower than with 128 Ki (measured on the 2-core bench machine).
fn chunk(total: u64, nworkers: u32, threads_per_cta: u64) -> u64 {
    let most = ((128 << 10) / threads_per_cta.max(1)).max(1);
    (total / (nworkers as u64 * 16)).clamp(1, most)
}

/// Stack of a thread-loop worker's coroutine: device-function frames and the `.local`
/// variables of kernels without stops live on it.
const FIS_STACK: usize = 8 << 20;

/// One thread-loop worker: takes chunks of CTAs from the shared counter and runs each as
/// rounds of thread loops (`fission::run_cta`), inside one coroutine so that a trap or a
/// fault in kernel code can abandon it. A fault is attributed to its thread by replaying the
/// CTA thread by thread (`fission::replay_cta`).
fn fis_worker(sh: &LaunchShared, k: &FisKernel, index: u32) {
    let cfg = &sh.cfg;
    let [bx, by, bz] = cfg.block;
    let n = (bx * by * bz) as usize;
    let mut mem = match FisMem::new(&k.info, n) {
        Ok(m) => m,
        Err(e) => return sh.fail(e),
    };
    let _local_window = mem
        .local_window()
        .map(|w| super::fault::LocalWindow::set(1, w));
    let total_shared = cfg.shared_bytes() as usize;
    let mut shared_mem = match SharedBlock::take(total_shared, cfg.shared_align as usize) {
        Ok(b) => b,
        Err(e) => return sh.fail(e),
    };
    let _window = super::fault::SharedWindow::set(&shared_mem);
    let mut cta = Box::new(Cta::new(sh));
    let cta_ptr: *mut Cta = &mut *cta;
    let mut fault = Box::new(FisFault::default());
    let fault_ptr: *mut FisFault = &mut *fault;
    let mut ctx = Box::new(blank_thread());
    ctx.ntid = cfg.block;
    ctx.nctaid = cfg.grid;
    ctx.nwarpid = (n as u32).div_ceil(WARP_SIZE);
    ctx.smid = index;
    ctx.nsmid = sh.nworkers;
    ctx.dynamic_smem_size = cfg.dynamic_shared;
    ctx.total_smem_size = total_shared as u32;
    ctx.gridid = sh.gridid;
    ctx.shared = shared_mem.base();
    ctx.cta = cta_ptr as *mut _;
    ctx.reserved[0] = fault_ptr as *mut _;
    ctx.reserved[1] = super::red::table() as *mut _;
    let ctx_ptr: *mut Thread = &mut *ctx;
    let w = FisWork {
        sh,
        k,
        ctx: ctx_ptr,
        mem: &mut mem,
        cta: cta_ptr,
        shared: &mut shared_mem as *mut SharedBlock,
        fault: fault_ptr,
    };
    let wp: *const FisWork = &w;
    let area = match StackArea::take(FIS_STACK, 1) {
        Ok(a) => a,
        Err(e) => return sh.fail(e),
    };
    let _stack_window = super::fault::LocalWindow::set(0, area.window());
    let stack = area.stacks(1).pop().unwrap_or_else(|| unreachable!());
    super::nvvm::CURRENT.with(|c| c.set(ctx_ptr));
    let mut coro = Coro::with_stack(stack, move |y: &ThreadYielder, ()| {
        set_yielder(ctx_ptr, y);
        // SAFETY: `w` outlives the coroutine, which only this worker resumes.
        unsafe { (*wp).ctas() };
    });
    if let CoroutineResult::Yield(_) = coro.resume(()) {
        // SAFETY: nothing with a destructor lives on the abandoned coroutine's stack.
        unsafe { coro.force_reset() };
        // SAFETY: the coroutine is abandoned; only this worker touches `fault`.
        if let Some((addr, sig)) = unsafe { (*fault_ptr).pending.take() } {
            let mut replay = Coro::with_stack(coro.into_stack(), move |y: &ThreadYielder, ()| {
                set_yielder(ctx_ptr, y);
                // SAFETY: as above.
                unsafe { (*wp).replay(addr, sig) };
            });
            if let CoroutineResult::Yield(_) = replay.resume(()) {
                // SAFETY: as above.
                unsafe { replay.force_reset() };
            }
            drop(replay);
        }
    } else {
        drop(coro);
    }
    super::nvvm::CURRENT.with(|c| c.set(std::ptr::null_mut()));
    drop(_stack_window);
    drop(_local_window);
    area.give();
    drop(cta);
    drop(ctx);
    drop(_window);
    shared_mem.give(cfg.shared_align as usize);
}

/// What a thread-loop worker's coroutine works with.
struct FisWork {
    sh: *const LaunchShared,
    k: *const FisKernel,
    ctx: *mut Thread,
    mem: *mut FisMem,
    cta: *mut Cta,
    shared: *mut SharedBlock,
    fault: *mut FisFault,
}

impl FisWork {
    /// Starts CTA `ctaid`: ids, zeroed shared memory.
    unsafe fn begin(&self, ctaid: [u32; 3]) {
        let cfg = &(*self.sh).cfg;
        (*self.shared).zero();
        (*self.ctx).ctaid = ctaid;
        (*self.ctx).tid = [0; 3];
        (*self.cta).fis_set_ids(ctaid, cfg.block);
    }

    /// Runs CTAs from the shared counter until none is left or the launch failed.
    unsafe fn ctas(&self) {
        let sh = &*self.sh;
        let cfg = &sh.cfg;
        let [gx, gy, _] = cfg.grid;
        let total = cfg.ctas();
        let step = chunk(
            total,
            sh.nworkers,
            cfg.block.iter().map(|&d| d as u64).product(),
        );
        loop {
            if sh.aborted() {
                return;
            }
            let first = sh.next_cta.fetch_add(step, Ordering::Relaxed);
            if first >= total {
                return;
            }
            let end = (first + step).min(total);
            let k = &*self.k;
            // Kernels without stops and shared memory: the whole chunk in one call.
            let shared = cfg.shared_bytes() > 0;
            if k.info.stops.is_empty() && !shared {
                (*self.fault).batch = (first, (end - first) as u32);
                if !super::fission::run_ctas(
                    k,
                    sh.params,
                    self.ctx,
                    &mut *self.mem,
                    first,
                    (end - first) as u32,
                ) || sh.aborted()
                {
                    return;
                }
                continue;
            }
            let mut c = first;
            while c < end {
                let ctaid = [
                    (c % gx as u64) as u32,
                    ((c / gx as u64) % gy as u64) as u32,
                    (c / (gx as u64 * gy as u64)) as u32,
                ];
                self.begin(ctaid);
                (*self.fault).batch = (c, 1);
                // A failure is recorded in the launch.
                let ok = if k.info.stops.is_empty() {
                    super::fission::run_ctas(k, sh.params, self.ctx, &mut *self.mem, c, 1)
                } else {
                    // `K.fis` may run the following CTAs of the chunk too.
                    let m = &mut *self.mem;
                    m.f.cta_first = c;
                    m.f.cta_count = (end - c) as u32;
                    let ok = super::fission::run_cta(k, sh.params, self.ctx, m, &mut *self.cta);
                    c = m.f.cta_first;
                    ok
                };
                if !ok || sh.aborted() {
                    return;
                }
                c += 1;
            }
        }
    }

    /// Replays the CTA where a fault happened, thread by thread, so that the fault (if it
    /// happens again) names its thread; otherwise reports it for the last thread run.
    unsafe fn replay(&self, addr: usize, sig: usize) {
        (*self.fault).diagnostic = true;
        let [gx, gy, _] = (*self.sh).cfg.grid;
        let k = &*self.k;
        // A kernel compiled without its replay has it built now; should that fail, the fault
        // is reported for the last thread run, as when the replay does not fault again.
        let lazy;
        let k = match &k.replay {
            None => k,
            Some(r) => match r.entry() {
                Ok(entry) => {
                    lazy = FisKernel {
                        entry,
                        info: k.info.clone(),
                        replay: None,
                        aligned: None,
                    };
                    &lazy
                }
                Err(_) => {
                    let e = (*self.cta)
                        .thread_error((*self.ctx).flat_tid, super::fault::message(addr, sig));
                    return (*self.sh).fail(e);
                }
            },
        };
        let (first, count) = if k.info.stops.is_empty() {
            (*self.fault).batch
        } else {
            // The CTA `K.fis` was running (it may have gone past the batch's first).
            ((*self.mem).f.cta_first, 1)
        };
        for c in first..first + count as u64 {
            let ctaid = [
                (c % gx as u64) as u32,
                ((c / gx as u64) % gy as u64) as u32,
                (c / (gx as u64 * gy as u64)) as u32,
            ];
            self.begin(ctaid);
            if !super::fission::replay_cta(
                k,
                (*self.sh).params,
                self.ctx,
                &mut *self.mem,
                &mut *self.cta,
            ) {
                return;
            }
        }
        let e = (*self.cta).thread_error((*self.ctx).flat_tid, super::fault::message(addr, sig));
        (*self.sh).fail(e);
    }
}

fn blank_thread() -> Thread {
    Thread {
        tid: [0; 3],
        ntid: [1; 3],
        ctaid: [0; 3],
        nctaid: [1; 3],
        laneid: 0,
        warpid: 0,
        nwarpid: 1,
        smid: 0,
        nsmid: 1,
        dynamic_smem_size: 0,
        total_smem_size: 0,
        flat_tid: 0,
        gridid: 0,
        shared: std::ptr::null_mut(),
        local: std::ptr::null_mut(),
        cta: std::ptr::null_mut(),
        yielder: std::ptr::null(),
        reserved: [std::ptr::null_mut(); 2],
    }
}
