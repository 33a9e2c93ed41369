//! Thread-loop ("fission") execution of a CTA. The compiler turns a kernel into
//! `void K.fis(const void *params, ptx2llvm_thread *ctx, ptx2llvm_fis *f)`, which runs one
//! *round*: every selected thread of the CTA, one after another in a loop that LLVM
//! vectorizes, executes from a resume point until it reaches a *stop* (a barrier, a warp-level
//! operation, `activemask`, `nanosleep`), returns, exits or traps. At a stop a thread saves the
//! registers live across it to per-thread arrays, its operands to the operand arrays, and
//! `STOP | j` to its state; after the round the driver here decides what runs next:
//!
//! - every live thread at the same `bar.sync` (constant id, no thread count): the barrier is
//!   complete; the next round resumes all of them after it;
//! - every live thread at the same `shfl.sync` with a full member mask, whole warps: the next
//!   round resumes after it and computes the shuffle inline from the operand arrays;
//! - anything else (divergent barriers, partial masks, votes, `bar.red`, `activemask`, …): the
//!   *generic* path registers each stopped thread with the coroutine scheduler's CTA state
//!   machine (`cta::Cta`, the same code that decides barriers and warp operations for the
//!   coroutine path), hands the released threads their results and resumes exactly them, each
//!   from its own point, until the CTA is done. Deadlocks and misuse are reported as there.
//!
//! `ALL` rounds run every thread; `MASKED` rounds run the threads whose state is `want`
//! (after some threads exited); `GENERIC` rounds run every thread whose state is a resume
//! point, through an out-of-line copy of the kernel that dispatches on it.

use std::ffi::c_char;
use std::sync::Arc;

use super::abi::{Thread, NUM_BARRIERS, WARP_SIZE};
use super::cta::Cta;
pub use super::cta::{BarKind, WarpOp};
use super::shared::SharedBlock;
use super::LaunchError;

/// The round descriptor shared with generated code (`ptx2llvm_fis`). Field offsets are in
/// `off`; generated code reads and writes them directly.
#[repr(C)]
#[derive(Debug)]
pub struct FisCtx {
    /// Resume point of an `ALL`/`MASKED` round.
    pub k: u32,
    /// `MODE_*`.
    pub mode: u32,
    /// `MASKED`: the state of the threads to run.
    pub want: u32,
    /// Threads in the CTA.
    pub n: u32,
    /// Out: bit 0 some thread finished, bit `min(j, 62)` some thread stopped at stop `j`,
    /// bit 63 some thread trapped.
    pub seen: u64,
    /// Out: non-zero when a thread trapped (the error is recorded in the launch).
    pub status: u32,
    /// The half of `opa` this round's stops write (0/1); the other half holds the previous
    /// round's operands.
    pub bank: u32,
    /// Per thread: a resume point (< `ST_STOP`), `ST_STOP | j`, `ST_EXIT` or `ST_TRAP`.
    pub state: *mut u16,
    /// Per-thread arrays of the registers live across stops.
    pub frame: *mut u8,
    /// Operand arrays of the stops. `opa` has two banks of `n + 64` elements (32 elements of
    /// padding on both sides of each).
    pub opa: *mut u32,
    pub opa_hi: *mut u32,
    pub opb: *mut u32,
    pub opc: *mut u32,
    pub mask: *mut u32,
    /// Results handed to threads resumed after a warp operation or `bar.red`.
    pub res: *mut u32,
    pub resp: *mut u8,
    /// Per-thread `.local` memory.
    pub local: *mut u8,
    /// Kernels without stops: the CTAs `cta_first..cta_first + cta_count` (linear ids) run
    /// in one call.
    pub cta_first: u64,
    pub cta_count: u32,
    pub _pad: u32,
    /// Per-thread bytes for probe branch conditions.
    pub pbuf: *mut u8,
    /// `ALL` rounds of one-dimensional CTAs run the threads `xlo..xhi` (all threads there are
    /// at `want`); other CTAs run all threads.
    pub xlo: u32,
    pub xhi: u32,
}

/// Byte offsets of `FisCtx` fields.
pub mod off {
    pub const K: u32 = 0;
    pub const MODE: u32 = 4;
    pub const WANT: u32 = 8;
    pub const N: u32 = 12;
    pub const SEEN: u32 = 16;
    pub const STATUS: u32 = 24;
    pub const BANK: u32 = 28;
    pub const STATE: u32 = 32;
    pub const FRAME: u32 = 40;
    pub const OPA: u32 = 48;
    pub const OPA_HI: u32 = 56;
    pub const OPB: u32 = 64;
    pub const OPC: u32 = 72;
    pub const MASK: u32 = 80;
    pub const RES: u32 = 88;
    pub const RESP: u32 = 96;
    pub const LOCAL: u32 = 104;
    pub const CTA_FIRST: u32 = 112;
    pub const CTA_COUNT: u32 = 120;
    pub const PBUF: u32 = 128;
    pub const XLO: u32 = 136;
    pub const XHI: u32 = 140;
}

pub const MODE_ALL: u32 = 0;
/// `FisInfo::must_stop` of a resume point without one.
pub const NO_STOP: u32 = u32::MAX;
pub const MODE_MASKED: u32 = 1;
pub const MODE_GENERIC: u32 = 2;

pub const ST_STOP: u16 = 0x8000;
pub const ST_EXIT: u16 = 0xFFFF;
pub const ST_TRAP: u16 = 0xFFFE;
/// Elements per register array in `frame`: register arrays start `FRAME_STRIDE * offset` bytes
/// apart, a constant (every CTA has at most 1024 threads), so LLVM sees that the arrays of two
/// registers never overlap; the 16 spare elements keep arrays of the same thread from falling
/// on one cache set (4 KiB apart).
pub const FRAME_STRIDE: u32 = 1040;
/// Seen bit for stops numbered 62 and above (the driver then looks at the states).
pub const SEEN_MANY: u32 = 62;

/// What a stop is, for the driver. Operands travel in the operand arrays: barriers put the
/// id in `opb`, the thread count in `opc` (0: none) and the `bar.red` predicate in `opa`;
/// warp operations put `a` in `opa`/`opa_hi`, `b` in `opb`, `c` in `opc` and the member mask
/// in `mask`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StopKind {
    /// `bar.sync`/`barrier.sync`/`bar.red`/`bar.arrive`; `id`: the id when it is a constant;
    /// `counted`: a thread count operand is present.
    Bar {
        kind: BarKind,
        id: Option<u32>,
        counted: bool,
    },
    /// A warp-level operation; `mask`: the member mask when it is a constant; `inline`: the
    /// kernel has a resume point that computes it from the operand arrays (`shfl` with whole
    /// warps taking part), numbered `stops + j`.
    Warp {
        op: WarpOp,
        mask: Option<u32>,
        inline: bool,
    },
    ActiveMask,
    /// `nanosleep`: lets the other threads run first.
    Sleep,
    /// A yield the compiler put at the header of a stride loop (`stride.rs`): the threads there
    /// go on at once; `K.fis` runs the loop's iterations as rounds over the threads.
    Yield,
}

impl StopKind {
    /// `bar.sync` with a constant id and no thread count: when every live thread stopped there
    /// the barrier is complete, and the next round resumes them all after it (the driver, and
    /// the chained rounds of `K.fis`).
    pub fn is_fast_barrier(&self) -> bool {
        matches!(
            self,
            StopKind::Bar {
                kind: BarKind::Sync,
                id: Some(_),
                counted: false,
            }
        )
    }
}

/// What the driver knows about a compiled kernel.
#[derive(Clone, Debug, Default)]
pub struct FisInfo {
    /// Stop `j` (1-based) is `stops[j - 1]`.
    pub stops: Vec<StopKind>,
    /// Per stop: its `b`, `c` and member-mask operands when they are constants; the generated
    /// code stores only the others in `opb`/`opc`/`mask`.
    pub stop_consts: Vec<[Option<u32>; 3]>,
    /// Bytes of per-thread register arrays, per thread.
    pub frame_bytes: u32,
    /// Bytes of `.local` memory per thread.
    pub local_bytes: u32,
    /// Indexed by resume point: the one stop every thread of an `ALL` round from there
    /// reaches (`NO_STOP`: none); such rounds do not write the threads' states. A vector, not a
    /// map: the driver looks it up every round.
    pub must_stop: Vec<u32>,
    /// The CTA shape the code was specialized for (`.reqntid`, or the block `ptx2llvm run`
    /// launches): `%ntid` and the thread count are constants in it, and a launch with another
    /// block cannot use it. `None`: any block.
    pub block: Option<[u32; 3]>,
}

impl FisInfo {
    /// The words an object file carries for a kernel (see [`FisInfo::decode`]): frame and
    /// local bytes, the stop count, per stop its kind (four words) and constant operands (three
    /// pairs of present/value), then the `must_stop` table with its length.
    pub fn encode(&self) -> Vec<u32> {
        let mut w = vec![
            FIS_INFO_VERSION,
            self.frame_bytes,
            self.local_bytes,
            self.stops.len() as u32,
        ];
        let opt = |o: Option<u32>| [o.is_some() as u32, o.unwrap_or(0)];
        for (k, s) in self.stops.iter().enumerate() {
            let (tag, a, b, c) = match *s {
                StopKind::Bar { kind, id, counted } => {
                    let (kt, op) = match kind {
                        BarKind::Sync => (0, 0),
                        BarKind::Arrive => (1, 0),
                        BarKind::Red(op) => (2, op),
                    };
                    let [has, v] = opt(id);
                    (0, kt | op << 8 | (counted as u32) << 16 | has << 17, v, 0)
                }
                StopKind::Warp { op, mask, inline } => {
                    let (ot, m) = match op {
                        WarpOp::Shfl(m) => (0, m),
                        WarpOp::Vote(m) => (1, m),
                        WarpOp::MatchAny => (2, 0),
                        WarpOp::MatchAll => (3, 0),
                        WarpOp::Redux(m) => (4, m),
                        WarpOp::Elect => (5, 0),
                        WarpOp::WarpSync => (6, 0),
                        WarpOp::Matrix(m) => (7, m),
                    };
                    let [has, v] = opt(mask);
                    (1, ot | (inline as u32) << 8 | has << 9, m, v)
                }
                StopKind::ActiveMask => (2, 0, 0, 0),
                StopKind::Sleep => (3, 0, 0, 0),
                StopKind::Yield => (4, 0, 0, 0),
            };
            w.extend([tag, a, b, c]);
            let consts = self.stop_consts.get(k).copied().unwrap_or_default();
            for cst in consts {
                w.extend(opt(cst));
            }
        }
        w.push(self.must_stop.len() as u32);
        w.extend(&self.must_stop);
        w.extend(self.block.unwrap_or([0; 3]));
        w
    }

    /// Reads what [`FisInfo::encode`] wrote; `None` when the words are not such a record.
    pub fn decode(w: &[u32]) -> Option<FisInfo> {
        let mut it = w.iter().copied();
        let mut next = || it.next();
        if next()? != FIS_INFO_VERSION {
            return None;
        }
        let frame_bytes = next()?;
        let local_bytes = next()?;
        let n = next()? as usize;
        let mut stops = Vec::with_capacity(n.min(1 << 16));
        let mut stop_consts = Vec::with_capacity(n.min(1 << 16));
        for _ in 0..n {
            let (tag, a, b, c) = (next()?, next()?, next()?, next()?);
            let kind = match tag {
                0 => StopKind::Bar {
                    kind: match a & 0xff {
                        0 => BarKind::Sync,
                        1 => BarKind::Arrive,
                        2 => BarKind::Red(a >> 8 & 0xff),
                        _ => return None,
                    },
                    id: (a >> 17 & 1 == 1).then_some(b),
                    counted: a >> 16 & 1 == 1,
                },
                1 => StopKind::Warp {
                    op: match a & 0xff {
                        0 => WarpOp::Shfl(b),
                        1 => WarpOp::Vote(b),
                        2 => WarpOp::MatchAny,
                        3 => WarpOp::MatchAll,
                        4 => WarpOp::Redux(b),
                        5 => WarpOp::Elect,
                        6 => WarpOp::WarpSync,
                        7 => WarpOp::Matrix(b),
                        _ => return None,
                    },
                    mask: (a >> 9 & 1 == 1).then_some(c),
                    inline: a >> 8 & 1 == 1,
                },
                2 => StopKind::ActiveMask,
                3 => StopKind::Sleep,
                4 => StopKind::Yield,
                _ => return None,
            };
            stops.push(kind);
            let mut consts = [None; 3];
            for cst in consts.iter_mut() {
                let (has, v) = (next()?, next()?);
                *cst = (has == 1).then_some(v);
            }
            stop_consts.push(consts);
        }
        let m = next()? as usize;
        let mut must_stop = Vec::with_capacity(m.min(1 << 17));
        for _ in 0..m {
            must_stop.push(next()?);
        }
        let block = [next()?, next()?, next()?];
        let block = (block != [0; 3]).then_some(block);
        if next().is_some() {
            return None;
        }
        Some(FisInfo {
            stops,
            stop_consts,
            frame_bytes,
            local_bytes,
            must_stop,
            block,
        })
    }
}

/// Version word at the start of an encoded [`FisInfo`].
const FIS_INFO_VERSION: u32 = 0x5054_4602;

/// Thread-loop versions of kernels linked in from objects (`--emit obj`), by the address of
/// their coroutine entry point: `ptx2llvm_rt_launch` runs those with thread loops.
static REGISTRY: std::sync::Mutex<Vec<(usize, FisKernel)>> = std::sync::Mutex::new(Vec::new());

/// The thread-loop version registered for a coroutine entry point, if any.
pub(crate) fn registered(entry: usize) -> Option<FisKernel> {
    let r = REGISTRY.lock().ok()?;
    r.iter().find(|(e, _)| *e == entry).map(|(_, k)| k.clone())
}

/// Registers the thread-loop version `fis` (with its encoded [`FisInfo`], `len` words at
/// `info`) of the kernel whose coroutine entry point is `entry`. Objects made by
/// `--emit obj` call it from a constructor for each kernel compiled to thread loops; a record
/// that does not decode is ignored (the coroutine entry point still runs the kernel).
///
/// # Safety
/// `fis` must be a `K.fis` function of the same object as `entry`, `info` point to `len`
/// words.
#[no_mangle]
pub unsafe extern "C" fn ptx2llvm_rt_register_fis(
    entry: Option<super::abi::KernelEntry>,
    fis: Option<FisEntry>,
    info: *const u32,
    len: u32,
) {
    let (Some(entry), Some(fis)) = (entry, fis) else {
        return;
    };
    if info.is_null() {
        return;
    }
    let words = std::slice::from_raw_parts(info, len as usize);
    let Some(info) = FisInfo::decode(words) else {
        return;
    };
    if let Ok(mut r) = REGISTRY.lock() {
        r.retain(|(e, _)| *e != entry as usize);
        r.push((
            entry as usize,
            FisKernel {
                entry: fis,
                info: Arc::new(info),
                replay: None,
                aligned: None,
            },
        ));
    }
}

/// `void K.fis(const void *params, ptx2llvm_thread *ctx, ptx2llvm_fis *f)`.
pub type FisEntry = unsafe extern "C" fn(params: *const u8, ctx: *mut Thread, f: *mut FisCtx);

/// A kernel compiled for thread-loop execution.
#[derive(Clone)]
pub struct FisKernel {
    pub entry: FisEntry,
    pub info: Arc<FisInfo>,
    /// Where a fault's replay (`replay_cta`) gets its code when `entry` was compiled without
    /// one (the JIT's warp-engine kernels); `None`: `entry` replays itself.
    pub replay: Option<Arc<dyn LazyReplay>>,
    /// The warp engine's alignment tests, taken out of `entry` and made once per launch on
    /// its parameters (`llvm::simd::misaligned`); `None`: nothing to test.
    pub aligned: Option<Arc<AlignGuard>>,
}

/// A warp-engine kernel's alignment tests at launch: its code tests no address (a test per
/// access split its straight-line code, `llvm::simd::misaligned`), but every address the
/// kernel tests is a sum of parameters and multiples of the access's size, so each test
/// passes in every thread when the parameters in `tests` have their low bits clear. A launch
/// where one does not runs on `fallback`, the engine the kernel gets without the warp engine
/// (thread loops or coroutines), which tests each access and names the faulting thread — or
/// runs to the end, when no thread reaches the misaligned access.
pub struct AlignGuard {
    pub tests: Vec<ParamAlign>,
    /// The code's flat x indices assume this of the launch (`llvm::simd::flatx`).
    pub flat_x: Option<FlatX>,
    pub fallback: Arc<dyn LazyCode>,
}

/// The warp code's assumption that every thread's flat x index `%ctaid.x * S + %tid.x` (`S`
/// being `%ntid.x` or a constant at most `scale`) is below 2^31, where the kernel computes it
/// as an `int` (`llvm::simd::flatx`): the launch's grid is tested, as the parameters'
/// alignment is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FlatX {
    pub scale: u32,
}

impl FlatX {
    /// Whether every thread's index of a launch of `grid` CTAs of `block` threads, and the
    /// warp code's lanes past the block's end (`%tid.x` below 1024), is below 2^31.
    pub fn holds(&self, grid: [u32; 3], block: [u32; 3]) -> bool {
        let s = u64::from(self.scale.max(block[0]));
        let last = u64::from(grid[0].max(1)) - 1;
        last * s + u64::from(super::abi::MAX_THREADS_PER_CTA) <= 1 << 31
    }
}

/// Parameter bytes `offset..offset + bytes` (little-endian) must have the bits of `mask` clear.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ParamAlign {
    pub offset: u32,
    pub bytes: u32,
    pub mask: u64,
}

impl ParamAlign {
    /// Whether the parameter in `params` passes (bytes past the buffer's end read as zero).
    pub fn holds(&self, params: &[u8]) -> bool {
        let mut v = 0u64;
        for k in 0..self.bytes.min(8) {
            let b = params
                .get(self.offset as usize + k as usize)
                .copied()
                .unwrap_or(0);
            v |= u64::from(b) << (8 * k);
        }
        v & self.mask == 0
    }
}

impl AlignGuard {
    /// Whether every test passes for the parameter buffer `params` and a launch of `grid`
    /// CTAs of `block` threads.
    pub fn holds(&self, params: &[u8], grid: [u32; 3], block: [u32; 3]) -> bool {
        self.tests.iter().all(|t| t.holds(params))
            && self.flat_x.is_none_or(|f| f.holds(grid, block))
    }
}

/// Code of a kernel compiled when a launch first needs it (`AlignGuard::fallback`:
/// `target::cpu` builds the module again without the warp engine).
pub trait LazyCode: Send + Sync {
    /// The kernel's code in that build, or why there is none.
    fn code(&self) -> Result<super::KernelCode, String>;
}

/// The code of a kernel's fault replay, compiled when a fault first needs it: `K.simd` of a
/// second build of the kernel's module that keeps its replay (`target::cpu::ReplayBuild`).
pub trait LazyReplay: Send + Sync {
    /// That entry point, with the same ABI and info as the kernel's own, or why there is none.
    fn entry(&self) -> Result<FisEntry, String>;
}

/// A worker's memory for running CTAs of one launch.
pub(crate) struct FisMem {
    n: usize,
    state: Vec<u16>,
    frame: Vec<u64>,
    opa: Vec<u32>,
    opa_hi: Vec<u32>,
    opb: Vec<u32>,
    opc: Vec<u32>,
    mask: Vec<u32>,
    res: Vec<u32>,
    resp: Vec<u8>,
    /// The `.local` area (guarded, as a shared block is: `shared.rs`); none without locals.
    local: Option<SharedBlock>,
    pbuf: Vec<u8>,
    pub(crate) f: FisCtx,
}

/// Alignment of the start of the thread-loop `.local` area: the largest `.align` of a `.local`
/// variable in a kernel that runs as thread loops.
pub const LOCAL_ALIGN: usize = 4096;

impl FisMem {
    pub(crate) fn new(info: &FisInfo, n: usize) -> Result<FisMem, LaunchError> {
        let frame_words = (info.frame_bytes as usize * FRAME_STRIDE as usize).div_ceil(8) + 8;
        // Variables are at multiples of their alignment from the start (`fission::local_var`;
        // kernels with larger alignments keep coroutines). The area lies between guard pages:
        // a `.local` address far outside it faults (an out-of-range local address).
        let local = match info.local_bytes as usize * n {
            0 => None,
            bytes => Some(SharedBlock::take(bytes, LOCAL_ALIGN)?),
        };
        let mut m = FisMem {
            n,
            state: vec![ST_EXIT; n],
            frame: vec![0; frame_words],
            opa: vec![0; 2 * (n + 2 * WARP_SIZE as usize)],
            opa_hi: vec![0; n],
            opb: vec![0; n],
            opc: vec![0; n],
            mask: vec![0; n],
            res: vec![0; n],
            resp: vec![0; n],
            local,
            // Probe mode 4 stores 4 bytes at a thread's byte.
            pbuf: vec![0; n + 8],
            f: FisCtx {
                k: 0,
                mode: MODE_ALL,
                want: 0,
                n: n as u32,
                seen: 0,
                status: 0,
                bank: 0,
                state: std::ptr::null_mut(),
                frame: std::ptr::null_mut(),
                opa: std::ptr::null_mut(),
                opa_hi: std::ptr::null_mut(),
                opb: std::ptr::null_mut(),
                opc: std::ptr::null_mut(),
                mask: std::ptr::null_mut(),
                res: std::ptr::null_mut(),
                resp: std::ptr::null_mut(),
                local: std::ptr::null_mut(),
                cta_first: 0,
                cta_count: 1,
                _pad: 0,
                pbuf: std::ptr::null_mut(),
                xlo: 0,
                xhi: 0,
            },
        };
        m.f.state = m.state.as_mut_ptr();
        // 64-byte alignment for the register arrays.
        let fp = m.frame.as_mut_ptr() as *mut u8;
        // SAFETY: `frame` has 8 spare words (see `frame_words`) and is 8-byte aligned, so the offset (at most 56) stays inside it.
        m.f.frame = unsafe { fp.add(fp.align_offset(64).min(63)) };
        // SAFETY: `opa` holds more than `WARP_SIZE` entries; the pointer stays inside it.
        m.f.opa = unsafe { m.opa.as_mut_ptr().add(WARP_SIZE as usize) };
        m.f.opa_hi = m.opa_hi.as_mut_ptr();
        m.f.opb = m.opb.as_mut_ptr();
        m.f.opc = m.opc.as_mut_ptr();
        m.f.mask = m.mask.as_mut_ptr();
        m.f.res = m.res.as_mut_ptr();
        m.f.resp = m.resp.as_mut_ptr();
        if let Some(b) = &m.local {
            m.f.local = b.base();
        }
        m.f.pbuf = m.pbuf.as_mut_ptr();
        Ok(m)
    }

    /// The `.local` area's reservation, for fault messages.
    pub(crate) fn local_window(&self) -> Option<super::local::AreaWindow> {
        self.local.as_ref().map(|b| {
            let (lo, hi) = b.reserved();
            super::local::AreaWindow {
                lo,
                hi,
                ..Default::default()
            }
        })
    }
}

impl Drop for FisMem {
    fn drop(&mut self) {
        if let Some(b) = self.local.take() {
            b.give(LOCAL_ALIGN);
        }
    }
}

/// Runs the CTAs `first..first + count` of a kernel without stops in one call. Returns
/// false when the launch failed.
///
/// # Safety
/// As `run_cta`.
pub(crate) unsafe fn run_ctas(
    k: &FisKernel,
    params: *const u8,
    ctx: *mut Thread,
    mem: &mut FisMem,
    first: u64,
    count: u32,
) -> bool {
    let f: *mut FisCtx = &mut mem.f;
    (*f).k = 0;
    (*f).mode = MODE_ALL;
    (*f).status = 0;
    (*f).cta_first = first;
    (*f).cta_count = count;
    (*f).xlo = 0;
    (*f).xhi = (*ctx).ntid[0];
    round(k, params, ctx, f);
    (*f).status == 0
}

/// Runs one round; its stops write the other half of `opa`.
unsafe fn round(k: &FisKernel, params: *const u8, ctx: *mut Thread, f: *mut FisCtx) {
    (*f).bank ^= 1;
    (k.entry)(params, ctx, f);
}

/// Runs one CTA, or more: the CTA's `ctx` (ids, shared memory, `cta` pointing at `cta`) is
/// set up by the caller, who leaves in `cta_first`/`cta_count` the linear id of this CTA and
/// how many of its batch are left including it; `K.fis` runs the next ones itself when one
/// finishes in it, and `cta_first` holds the last one run. Returns false when the launch
/// failed (the error is recorded in the launch).
///
/// # Safety
/// `k` must be a kernel compiled for this ABI, `params` its parameter buffer, `ctx` and `cta`
/// this worker's, `mem` made for the CTA size.
pub(crate) unsafe fn run_cta(
    k: &FisKernel,
    params: *const u8,
    ctx: *mut Thread,
    mem: &mut FisMem,
    cta: &mut Cta,
) -> bool {
    let info = &*k.info;
    let nstops = info.stops.len() as u32;
    let f: *mut FisCtx = &mut mem.f;
    let ntx = (*ctx).ntid[0];
    let one_d = (*ctx).ntid[1] == 1 && (*ctx).ntid[2] == 1;
    let mut cur = (*f).cta_first;
    (*f).k = 0;
    (*f).mode = MODE_ALL;
    (*f).want = 0;
    (*f).status = 0;
    (*f).xlo = 0;
    (*f).xhi = ntx;
    if nstops > 0 {
        // Rounds of kernels with stops run the threads whose state is `want`.
        mem.state.iter_mut().for_each(|s| *s = 0);
    }
    round(k, params, ctx, f);
    if nstops == 0 {
        return (*f).status == 0;
    }
    let mut exited = false;
    // After a round whose region has one outcome the threads' states are not written: every
    // thread that has not finished is at `uniform`.
    let mut uniform: Option<u16>;
    // One-dimensional CTAs after some threads finished: the range `lo..hi` that holds every
    // unfinished thread, all at the one stop the last round reached, once a scan found it;
    // rounds in which no thread finishes keep it, so chains of shuffle rounds after
    // `if (warp != 0) return;` do not scan the states again each round.
    let mut live: Option<(u32, u32)> = None;
    loop {
        if (*f).status != 0 {
            return false;
        }
        if (*f).cta_first != cur {
            // `K.fis` finished the CTA and went on with the next ones of the batch: this is
            // the one it left off in (it stored the ids in the context).
            cur = (*f).cta_first;
            exited = false;
            live = None;
            cta.fis_set_ids((*ctx).ctaid, (*ctx).ntid);
        }
        let seen = match info.must_stop.get((*f).k as usize) {
            Some(&j) if j != NO_STOP && (*f).mode == MODE_ALL => {
                uniform = Some(ST_STOP | j as u16);
                // Bit 0: threads finished in an earlier round `K.fis` chained this one to.
                1u64 << j.min(SEEN_MANY) | ((*f).seen & 1)
            }
            _ => {
                uniform = None;
                (*f).seen
            }
        };
        if seen & 1 != 0 {
            exited = true;
            live = None;
        }
        let stops = seen & !1;
        if stops == 0 {
            return true;
        }
        // Some threads at a stride loop's yield, others elsewhere: the ones at the yield run
        // on past it (a masked round; its out-of-line `K.step` passes yields by) and the
        // round's outcome joins the others' stops.
        if !stops.is_power_of_two() {
            let yield_at = (1..SEEN_MANY.min(nstops + 1)).find(|&j| {
                stops & (1u64 << j) != 0 && info.stops[j as usize - 1] == StopKind::Yield
            });
            if let Some(j) = yield_at {
                materialize(mem, &mut uniform);
                let others = seen & !(1u64 << j);
                (*f).k = j;
                (*f).want = (ST_STOP | j as u16) as u32;
                (*f).mode = MODE_MASKED;
                (*f).xlo = 0;
                (*f).xhi = ntx;
                // The same operand bank as the round that stopped the others: their stops'
                // operands are there, and the next round's inline shuffles read one bank.
                (*f).bank ^= 1;
                round(k, params, ctx, f);
                (*f).seen |= others;
                continue;
            }
        }
        let mut next = None;
        if stops.is_power_of_two() && stops.trailing_zeros() < SEEN_MANY {
            let j = stops.trailing_zeros();
            match info.stops[j as usize - 1] {
                // Threads at a yield go on at once, like after a barrier all reached.
                s if s.is_fast_barrier() || s == StopKind::Yield => next = Some(j),
                StopKind::Warp {
                    op: WarpOp::Shfl(_),
                    mask,
                    inline: true,
                } => {
                    if exited && live.is_none() && one_d && mask == Some(u32::MAX) {
                        // One scan finds the range, which answers the whole-warps question
                        // and the next round's range.
                        materialize(mem, &mut uniform);
                        live = contiguous(&mem.state, ST_STOP | j as u16);
                    }
                    let known = match live {
                        Some((lo, hi)) if mask == Some(u32::MAX) => {
                            Some(lo.is_multiple_of(WARP_SIZE) && hi.is_multiple_of(WARP_SIZE))
                        }
                        _ => None,
                    };
                    let whole = known.unwrap_or_else(|| {
                        if exited || mask.is_none() {
                            materialize(mem, &mut uniform);
                        }
                        whole_warps(mem, j, mask, exited)
                    });
                    if whole {
                        next = Some(nstops + j);
                    }
                }
                _ => {}
            }
            if let Some(r) = next {
                let want = ST_STOP | j as u16;
                (*f).k = r;
                (*f).want = want as u32;
                (*f).mode = MODE_ALL;
                (*f).xlo = 0;
                (*f).xhi = ntx;
                if exited {
                    // The threads at `want` (the others finished): one contiguous range of a
                    // one-dimensional CTA runs like all threads, else the masked round.
                    if live.is_none() && one_d {
                        materialize(mem, &mut uniform);
                        live = contiguous(&mem.state, want);
                    }
                    match live {
                        Some((lo, hi)) if one_d => {
                            (*f).xlo = lo;
                            (*f).xhi = hi;
                        }
                        _ => {
                            materialize(mem, &mut uniform);
                            (*f).mode = MODE_MASKED;
                        }
                    }
                }
                round(k, params, ctx, f);
                continue;
            }
        }
        materialize(mem, &mut uniform);
        // The generic path finishes this CTA alone.
        (*f).cta_count = 1;
        return generic(k, params, ctx, mem, cta, false);
    }
}

/// Writes the state every unfinished thread has into the state array.
fn materialize(mem: &mut FisMem, uniform: &mut Option<u16>) {
    if let Some(u) = uniform.take() {
        for s in mem.state.iter_mut() {
            if *s != ST_EXIT {
                *s = u;
            }
        }
    }
}

/// The range `lo..hi` of the threads whose state is `want`, when they are contiguous.
fn contiguous(state: &[u16], want: u16) -> Option<(u32, u32)> {
    // Whole warps first: a search element by element does not vectorize, and after a
    // `if (warp != 0) return;` it walks past most of the CTA every round.
    const W: usize = WARP_SIZE as usize;
    let any = |c: &[u16]| c.iter().fold(false, |a, &s| a | (s == want));
    let first = state.chunks(W).position(any)?;
    let last = state.len().div_ceil(W) - 1 - state.chunks(W).rev().position(any)?;
    let lo = first * W + state[first * W..].iter().position(|&s| s == want)?;
    let end = ((last + 1) * W).min(state.len());
    let hi = end - state[..end].iter().rev().position(|&s| s == want)?;
    state[lo..hi]
        .iter()
        .fold(true, |a, &s| a & (s == want))
        .then_some((lo as u32, hi as u32))
}

/// Whether every warp has all or none of its lanes at stop `j` (the others finished), with a
/// full member mask.
unsafe fn whole_warps(mem: &FisMem, j: u32, mask: Option<u32>, exited: bool) -> bool {
    let n = mem.n;
    if !n.is_multiple_of(32) {
        return false;
    }
    if mask.is_some_and(|m| m != u32::MAX) {
        return false;
    }
    let at = ST_STOP | j as u16;
    if !exited && mask.is_some() {
        return true; // every thread is at j (seen has no other bit)
    }
    for w in 0..n / 32 {
        let lanes = &mem.state[w * 32..w * 32 + 32];
        let k = lanes.iter().fold(0u32, |a, &s| a + (s == at) as u32);
        if k != 0 && k != 32 {
            return false;
        }
        if k == 32 && mask.is_none() && mem.mask[w * 32..w * 32 + 32].iter().any(|&m| m != u32::MAX)
        {
            return false;
        }
    }
    true
}

/// The generic path: every decision by the coroutine scheduler's CTA state machine. With
/// `from_start` every thread first runs from its state (all 0: the start).
unsafe fn generic(
    k: &FisKernel,
    params: *const u8,
    ctx: *mut Thread,
    mem: &mut FisMem,
    cta: &mut Cta,
    from_start: bool,
) -> bool {
    let info = &*k.info;
    let n = mem.n;
    let f: *mut FisCtx = &mut mem.f;
    (*f).xlo = 0;
    (*f).xhi = (*ctx).ntid[0];
    cta.fis_begin();
    if from_start {
        (*f).mode = MODE_GENERIC;
        round(k, params, ctx, f);
        if (*f).status != 0 {
            return false;
        }
    }
    for t in 0..n {
        if mem.state[t] == ST_EXIT {
            cta.fis_exit(t as u32);
        }
    }
    let mut ran: Vec<u32> = (0..n as u32)
        .filter(|&t| mem.state[t as usize] != ST_EXIT)
        .collect();
    let mut ready: Vec<u32> = Vec::with_capacity(n);
    loop {
        ready.clear();
        for &t in &ran {
            let tu = t as usize;
            let s = mem.state[tu];
            if s == ST_EXIT {
                cta.fis_exit(t);
                continue;
            }
            if s == ST_TRAP || s & ST_STOP == 0 {
                continue;
            }
            let j = (s & !ST_STOP) as usize;
            let Some(kind) = info.stops.get(j.wrapping_sub(1)) else {
                continue;
            };
            let a = mem.opa[mem.f.bank as usize * (n + 64) + 32 + tu];
            let consts = info.stop_consts.get(j - 1).copied().unwrap_or_default();
            let b = consts[0].unwrap_or(mem.opb[tu]);
            let c = consts[1].unwrap_or(mem.opc[tu]);
            let mask = consts[2].unwrap_or(mem.mask[tu]);
            match *kind {
                StopKind::Bar { kind, .. } => {
                    let what = match kind {
                        BarKind::Sync => "bar.sync",
                        BarKind::Arrive => "bar.arrive",
                        BarKind::Red(_) => "bar.red",
                    };
                    if b >= NUM_BARRIERS {
                        return fail(
                            cta,
                            t,
                            format!("{what}: barrier {b} is out of range (0..15)"),
                        );
                    }
                    if !c.is_multiple_of(32) {
                        return fail(
                            cta,
                            t,
                            format!(
                                "{what}: thread count {c} is not a multiple of the warp size 32"
                            ),
                        );
                    }
                    cta.bar_arrive(t, b, c, kind, a != 0);
                    if kind == BarKind::Arrive {
                        ready.push(t);
                    }
                }
                StopKind::Warp { op, .. } => {
                    let wide = (mem.opa_hi[tu] as u64) << 32 | a as u64;
                    let av = if matches!(op, WarpOp::MatchAny | WarpOp::MatchAll) {
                        wide
                    } else {
                        a as u64
                    };
                    if let Err(m) = cta.warp_arrive(t, op, mask, j as u32, av, b, c) {
                        return fail(cta, t, m);
                    }
                }
                StopKind::ActiveMask => cta.activemask_arrive(t, j as u32),
                StopKind::Sleep | StopKind::Yield => ready.push(t),
            }
        }
        loop {
            while let Some(t) = cta.fis_pop_ready() {
                ready.push(t);
            }
            if !ready.is_empty() || cta.fis_nlive() == 0 {
                break;
            }
            if !cta.activemask_resolve() {
                let e = LaunchError::Deadlock {
                    kernel: (*cta.launch).kernel.clone(),
                    block: cta.ctaid,
                    detail: cta.deadlock_report(),
                };
                (*cta.launch).fail(e);
                return false;
            }
        }
        if ready.is_empty() {
            return true;
        }
        for &t in &ready {
            let tu = t as usize;
            let j = mem.state[tu] & !ST_STOP;
            let (r, p) = cta.result(t);
            mem.res[tu] = r;
            mem.resp[tu] = p as u8;
            mem.state[tu] = j;
        }
        std::mem::swap(&mut ran, &mut ready);
        (*f).mode = MODE_GENERIC;
        round(k, params, ctx, f);
        if (*f).status != 0 {
            return false;
        }
    }
}

unsafe fn fail(cta: &mut Cta, t: u32, m: String) -> bool {
    let e = cta.thread_error(t, m);
    (*cta.launch).fail(e);
    false
}

/// `trap` in thread-loop code: records the failure of thread `t` (linear index); the caller
/// marks the thread trapped and the round failed.
///
/// # Safety
/// `ctx` must be the context the runtime passed to the running CTA function; `msg` null or a
/// C string.
#[no_mangle]
pub unsafe extern "C" fn ptx2llvm_rt_fis_trap(ctx: *mut Thread, t: u32, msg: *const c_char) {
    let cta = (*ctx).cta as *mut Cta;
    if cta.is_null() {
        return;
    }
    // The generated code stored the CTA's ids (a call may run several CTAs).
    (*cta).fis_set_ids((*ctx).ctaid, (*ctx).ntid);
    let m = if msg.is_null() {
        "trap instruction executed".to_string()
    } else {
        std::ffi::CStr::from_ptr(msg).to_string_lossy().into_owned()
    };
    let e = (*cta).thread_error(t, m);
    (*(*cta).launch).fail(e);
}

/// Fault state of a thread-loop worker (`Thread::reserved[0]` of its CTA context).
#[derive(Default)]
pub(crate) struct FisFault {
    /// A diagnostic replay runs: faults are reported as they happen (the context holds the
    /// running thread's ids).
    pub(crate) diagnostic: bool,
    /// A fault outside a replay: address and `sig_and_access` (see `fault`).
    pub(crate) pending: Option<(usize, usize)>,
    /// The CTAs being run (linear ids: first, count).
    pub(crate) batch: (u64, u32),
}

/// Called where a faulting kernel resumes: in thread-loop code outside a diagnostic replay,
/// records the fault and abandons the worker's coroutine (the driver then replays the CTA).
/// Returns in every other case.
///
/// # Safety
/// `t` must be the running context.
pub(crate) unsafe fn fault_before_replay(t: *mut Thread, addr: usize, sig_and_access: usize) {
    let p = (*t).reserved[0] as *mut FisFault;
    if p.is_null() || (*p).diagnostic || (*t).yielder.is_null() {
        return;
    }
    (*p).pending = Some((addr, sig_and_access));
    super::cta::yielder(t).suspend(super::cta::Event::Trapped);
    std::process::abort()
}

/// Replays a CTA from its start for a diagnosis: every round `GENERIC`, the running thread's
/// ids stored in the context before it runs, so that a fault names its thread.
///
/// # Safety
/// As `run_cta`.
pub(crate) unsafe fn replay_cta(
    k: &FisKernel,
    params: *const u8,
    ctx: *mut Thread,
    mem: &mut FisMem,
    cta: &mut Cta,
) -> bool {
    let n = mem.n;
    mem.state[..n].iter_mut().for_each(|s| *s = 0);
    mem.f.status = 0;
    generic(k, params, ctx, mem, cta, true)
}

#[cfg(test)]
mod tests {
    use super::{contiguous, FlatX};

    /// The flat x test against every thread's index computed in 64 bits, the warp code's
    /// lanes up to 1024 included, at the edge of 2^31 for `%ntid.x` and constant factors.
    #[test]
    fn flat_x_holds_exactly_below_2_31() {
        let biggest = |grid: u64, s: u64| (grid - 1) * s + 1023;
        for (scale, block) in [(0, 256), (0, 1000), (1024, 32), (64, 256), (0, 1)] {
            let f = FlatX { scale };
            let s = u64::from(scale.max(block));
            let edge = ((1u64 << 31) - 1024) / s + 1;
            for grid in [1, 2, edge - 1, edge, edge + 1, i32::MAX as u64] {
                let grid = grid.max(1);
                assert_eq!(
                    f.holds([grid as u32, 1, 1], [block, 1, 1]),
                    biggest(grid, s) < 1 << 31,
                    "scale {scale}, block {block}, grid {grid}"
                );
            }
        }
    }

    /// The range search against a plain scan, on CTAs of 1..=100 threads with the wanted
    /// threads in every single range and with holes.
    #[test]
    fn contiguous_matches_a_plain_scan() {
        const W: u16 = 0x8003;
        let plain = |s: &[u16]| -> Option<(u32, u32)> {
            let lo = s.iter().position(|&x| x == W)?;
            let hi = s.len() - s.iter().rev().position(|&x| x == W)?;
            s[lo..hi]
                .iter()
                .all(|&x| x == W)
                .then_some((lo as u32, hi as u32))
        };
        for n in 1..=100usize {
            for lo in 0..=n {
                for hi in lo..=n {
                    let mut s = vec![super::ST_EXIT; n];
                    s[lo..hi].iter_mut().for_each(|x| *x = W);
                    assert_eq!(contiguous(&s, W), plain(&s), "n {n} range {lo}..{hi}");
                    if hi - lo > 2 {
                        s[(lo + hi) / 2] = 0x8001;
                        assert_eq!(contiguous(&s, W), None, "n {n} hole in {lo}..{hi}");
                    }
                }
            }
        }
    }

    /// What an object file carries decodes to the same description, and anything else
    /// (truncated, extended, another version) to nothing.
    #[test]
    fn fis_info_encodes_and_decodes() {
        use super::{BarKind, FisInfo, StopKind, WarpOp, NO_STOP};
        let info = FisInfo {
            stops: vec![
                StopKind::Bar {
                    kind: BarKind::Sync,
                    id: Some(0),
                    counted: false,
                },
                StopKind::Bar {
                    kind: BarKind::Red(2),
                    id: None,
                    counted: true,
                },
                StopKind::Warp {
                    op: WarpOp::Shfl(1),
                    mask: Some(u32::MAX),
                    inline: true,
                },
                StopKind::Warp {
                    op: WarpOp::Redux(7),
                    mask: None,
                    inline: false,
                },
                StopKind::Warp {
                    op: WarpOp::MatchAll,
                    mask: Some(0xffff),
                    inline: false,
                },
                StopKind::ActiveMask,
                StopKind::Sleep,
                StopKind::Yield,
            ],
            stop_consts: vec![
                [Some(0), Some(0), None],
                [None, None, None],
                [Some(16), Some(31), Some(u32::MAX)],
                [None, None, Some(5)],
                [None, None, Some(0xffff)],
                [None, None, None],
                [None, None, None],
                [None, None, None],
            ],
            frame_bytes: 48,
            local_bytes: 16,
            must_stop: vec![1, NO_STOP, 3, NO_STOP, 2],
            block: Some([32, 8, 1]),
        };
        let w = info.encode();
        let back = FisInfo::decode(&w).expect("decodes");
        assert_eq!(back.block, info.block);
        assert_eq!(back.stops, info.stops);
        assert_eq!(back.stop_consts, info.stop_consts);
        assert_eq!(back.must_stop, info.must_stop);
        assert_eq!((back.frame_bytes, back.local_bytes), (48, 16));
        assert!(FisInfo::decode(&w[..w.len() - 1]).is_none());
        let mut longer = w.clone();
        longer.push(0);
        assert!(FisInfo::decode(&longer).is_none());
        let mut other = w;
        other[0] ^= 1;
        assert!(FisInfo::decode(&other).is_none());
    }
}
