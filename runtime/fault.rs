//! Invalid memory accesses of kernels become launch errors instead of crashes.
//!
//! `install()` (called before every launch by `ptx2llvm run`, the embedding API and the C API)
//! installs a `SIGSEGV`/`SIGBUS` handler once per process. When a fault happens in kernel code
//! — the faulting instruction lies in a range the JIT registered for a loaded module
//! (`register_code`, done by `target::cpu::Program::load` once MCJIT has finalized its code), or
//! a runtime function is accessing memory at an address the kernel gave (`kernel_access`) —
//! while a CUDA thread runs (`ptx2llvm_rt_self()` is set), the handler makes the faulting
//! thread resume in `fault_trap`, which fails the launch like `trap` does:
//!
//! ```text
//! kernel k failed in block (1, 0, 0), thread (3, 0, 0): invalid memory access: write to
//! address 0x0 (a null pointer)
//! ```
//!
//! The CUDA thread's stack is abandoned as for `trap`; the process and later launches go on.
//! (x86-64 Linux. Elsewhere, and for a fault that leaves no room on the thread's stack — a
//! stack overflow from deep recursion or huge local arrays — the handler prints the same
//! message to stderr and exits with status 1.)
//!
//! Every other fault — host code, the runtime's own code, another JIT's code, on any thread,
//! also while a kernel runs — goes to the handler that was installed before ours: called with
//! `(sig, info, context)` when it was installed with `SA_SIGINFO`, with `(sig)` otherwise; for
//! `SIG_DFL` (and `SIG_IGN`, which the kernel does not honour for a fault) the default action is
//! restored and the signal raised again, so the process ends as it would have without us.
//! (The previous handler's `sa_mask` and `SA_RESETHAND`/`SA_NODEFER` flags are not emulated.)
//!
//! Off switches: `PTX2LLVM_FAULT_HANDLER=0` (or the older `PTX2LLVM_NO_SIGNAL_HANDLER=1`) in the
//! environment, or `set_enabled(false)` from the embedding program, which also puts the previous
//! handlers back when ours is still the one installed (otherwise ours stays, passing every
//! fault on). Kernel faults then crash the process as any invalid access does.
//!
//! Code ranges: MCJIT reports no function sizes, so a module's range runs from the lowest
//! address of its functions to the end of the memory mapping holding them
//! (`/proc/self/maps`), per mapping. Up to `MAX_RANGES` ranges are registered at once; code
//! beyond that (and `--emit obj` objects, which live in loaded shared objects) is not
//! recognized, so its faults go to the previous handler. Ranges are unregistered when the
//! `Program` is dropped, before its code is freed.
//!
//! Only accesses to unmapped or protected memory fault: an access past the end of a buffer
//! into other valid memory is not detected (there is no bounds checking). Buffers and each
//! worker's shared-memory block (`shared.rs`) are surrounded by inaccessible pages, so
//! accesses beyond them fault; a fault in a worker's shared guards is reported as an
//! out-of-range shared address with its offset from the block, one in the guards of its stacks
//! or thread-loop `.local` area (`local.rs`) as an out-of-range local address.

use std::sync::atomic::{AtomicBool, AtomicU8, AtomicUsize, Ordering};

use super::abi::Thread;
use super::local::AreaWindow;

/// The previous handlers (`struct sigaction`), for chaining; written under `STATE` before our
/// handler is installed, read by the handler.
static mut OLD_SEGV: Option<libc::sigaction> = None;
static mut OLD_BUS: Option<libc::sigaction> = None;

/// Whether the handler is installed, and whether it may be (`set_enabled`).
struct State {
    installed: bool,
    /// `None`: not decided yet (the environment decides at the first `install`).
    enabled: Option<bool>,
}

static STATE: std::sync::Mutex<State> = std::sync::Mutex::new(State {
    installed: false,
    enabled: None,
});

/// Read by the handler: when false, every fault goes to the previous handler.
static ACTIVE: AtomicBool = AtomicBool::new(false);

/// Name of the kernel being launched (best effort: the last `set_kernel`).
static KERNEL: [AtomicU8; 128] = [const { AtomicU8::new(0) }; 128];
static KERNEL_LEN: AtomicUsize = AtomicUsize::new(0);

/// Records the name of the kernel about to run (for messages written from the handler).
pub fn set_kernel(name: &str) {
    let b = name.as_bytes();
    let n = b.len().min(KERNEL.len());
    for (slot, &c) in KERNEL.iter().zip(&b[..n]) {
        slot.store(c, Ordering::Relaxed);
    }
    KERNEL_LEN.store(n, Ordering::Release);
}

/// Whether the environment turns the handler off (`PTX2LLVM_FAULT_HANDLER=0`, or the older
/// `PTX2LLVM_NO_SIGNAL_HANDLER` set to anything but 0).
fn env_disabled() -> bool {
    std::env::var_os("PTX2LLVM_FAULT_HANDLER").is_some_and(|v| v == "0")
        || std::env::var_os("PTX2LLVM_NO_SIGNAL_HANDLER").is_some_and(|v| v != "0")
}

fn state() -> std::sync::MutexGuard<'static, State> {
    STATE.lock().unwrap_or_else(|e| e.into_inner())
}

/// Installs the handler once per process, unless it is turned off (`set_enabled(false)`, or
/// the environment: see the module doc). Cheap when already installed.
pub fn install() {
    let mut st = state();
    let enabled = *st.enabled.get_or_insert_with(|| !env_disabled());
    if st.installed || !enabled {
        return;
    }
    // SAFETY: sigaction with a fully initialized struct; the old actions are stored (under
    // the lock) before our handler can run, and `ACTIVE` is set after.
    unsafe {
        for (sig, old) in [
            (libc::SIGSEGV, &raw mut OLD_SEGV),
            (libc::SIGBUS, &raw mut OLD_BUS),
        ] {
            let mut prev: libc::sigaction = std::mem::zeroed();
            if libc::sigaction(sig, std::ptr::null(), &mut prev) != 0 {
                continue;
            }
            *old = Some(prev);
            let mut sa: libc::sigaction = std::mem::zeroed();
            sa.sa_sigaction = handler as *const () as usize;
            sa.sa_flags = libc::SA_SIGINFO | libc::SA_ONSTACK;
            libc::sigemptyset(&mut sa.sa_mask);
            libc::sigaction(sig, &sa, std::ptr::null_mut());
        }
    }
    st.installed = true;
    ACTIVE.store(true, Ordering::Release);
}

/// Turns the fault handler on or off for this process (the API form of
/// `PTX2LLVM_FAULT_HANDLER`; it overrides the environment). Off: faults in kernels crash the
/// process like any invalid access; if our handler is installed and still the process's, the
/// previous handlers are put back, else ours stays and passes every fault on. On: the next
/// `install` (every launch calls it) installs the handler again.
pub fn set_enabled(on: bool) {
    let mut st = state();
    st.enabled = Some(on);
    if on || !st.installed {
        return;
    }
    ACTIVE.store(false, Ordering::Release);
    // SAFETY: reads and restores sigactions saved by `install` under the same lock.
    unsafe {
        let mut all_ours = true;
        for sig in [libc::SIGSEGV, libc::SIGBUS] {
            let mut cur: libc::sigaction = std::mem::zeroed();
            libc::sigaction(sig, std::ptr::null(), &mut cur);
            all_ours &= cur.sa_sigaction == handler as *const () as usize;
        }
        if all_ours {
            for (sig, old) in [(libc::SIGSEGV, OLD_SEGV), (libc::SIGBUS, OLD_BUS)] {
                if let Some(o) = old {
                    libc::sigaction(sig, &o, std::ptr::null_mut());
                }
            }
            st.installed = false;
        }
    }
}

/// Whether the handler is turned on (by default, unless the environment turns it off).
pub fn enabled() -> bool {
    *state().enabled.get_or_insert_with(|| !env_disabled())
}

/// How many code ranges can be registered at once.
pub const MAX_RANGES: usize = 4096;

/// Registered code ranges `[lo, hi)`; `lo == 0` marks a free slot. Written under `RANGES_LOCK`,
/// read lock-free by the signal handler.
static RANGES: [(AtomicUsize, AtomicUsize); MAX_RANGES] =
    [const { (AtomicUsize::new(0), AtomicUsize::new(0)) }; MAX_RANGES];
static RANGES_LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// Kernel code ranges registered with the fault handler; dropping it unregisters them.
#[derive(Debug)]
pub struct CodeRanges {
    slots: Vec<usize>,
}

impl CodeRanges {
    /// How many of the ranges given to `register_code` found a slot.
    pub fn len(&self) -> usize {
        self.slots.len()
    }

    pub fn is_empty(&self) -> bool {
        self.slots.is_empty()
    }
}

/// Registers JIT-compiled kernel code `[lo, hi)` ranges: faults there, on a CUDA thread, are
/// the kernel's. Ranges beyond `MAX_RANGES` in all are not registered.
pub fn register_code(ranges: &[(usize, usize)]) -> CodeRanges {
    let _g = RANGES_LOCK.lock().unwrap_or_else(|e| e.into_inner());
    let mut slots = Vec::new();
    let mut free = RANGES
        .iter()
        .enumerate()
        .filter(|(_, r)| r.0.load(Ordering::Relaxed) == 0);
    for &(lo, hi) in ranges.iter().filter(|(lo, hi)| *lo != 0 && lo < hi) {
        let Some((i, slot)) = free.next() else { break };
        slot.1.store(hi, Ordering::Relaxed);
        slot.0.store(lo, Ordering::Release);
        slots.push(i);
    }
    CodeRanges { slots }
}

impl Drop for CodeRanges {
    fn drop(&mut self) {
        let _g = RANGES_LOCK.lock().unwrap_or_else(|e| e.into_inner());
        for &i in &self.slots {
            RANGES[i].0.store(0, Ordering::Release);
            RANGES[i].1.store(0, Ordering::Relaxed);
        }
    }
}

/// Whether `pc` lies in registered kernel code (async-signal-safe: atomics only).
pub fn in_kernel_code(pc: usize) -> bool {
    RANGES.iter().any(|(lo, hi)| {
        let lo = lo.load(Ordering::Acquire);
        lo != 0 && lo <= pc && pc < hi.load(Ordering::Relaxed)
    })
}

/// Whether a fault at `pc` is the kernel's: on a CUDA thread (`on_cuda_thread`), in registered
/// kernel code or in a runtime access on the kernel's behalf. Everything else is chained.
fn is_kernel_fault(pc: usize, on_cuda_thread: bool, kernel_access: bool) -> bool {
    on_cuda_thread && pc != 0 && (in_kernel_code(pc) || kernel_access)
}

/// A fixed buffer to format messages in without allocating (signal-handler safe).
struct Msg {
    buf: [u8; 512],
    len: usize,
}

impl Msg {
    fn new() -> Msg {
        Msg {
            buf: [0; 512],
            len: 0,
        }
    }
    fn s(&mut self, s: &[u8]) -> &mut Msg {
        for &c in s {
            if self.len < self.buf.len() - 1 {
                self.buf[self.len] = c;
                self.len += 1;
            }
        }
        self
    }
    fn dec(&mut self, mut v: u64) -> &mut Msg {
        let mut d = [0u8; 20];
        let mut k = d.len();
        loop {
            k -= 1;
            d[k] = b'0' + (v % 10) as u8;
            v /= 10;
            if v == 0 {
                break;
            }
        }
        self.s(&d[k..])
    }
    fn hex(&mut self, v: u64) -> &mut Msg {
        self.s(b"0x");
        let mut started = false;
        for k in (0..16).rev() {
            let n = ((v >> (4 * k)) & 15) as u8;
            if n != 0 || started || k == 0 {
                started = true;
                self.s(&[if n < 10 { b'0' + n } else { b'a' + n - 10 }]);
            }
        }
        self
    }
    fn dim(&mut self, d: [u32; 3]) -> &mut Msg {
        self.s(b"(")
            .dec(d[0] as u64)
            .s(b", ")
            .dec(d[1] as u64)
            .s(b", ")
            .dec(d[2] as u64)
            .s(b")")
    }
    fn bytes(&self) -> &[u8] {
        &self.buf[..self.len]
    }
}

/// What kind of fault the hardware reported.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Access {
    /// A page fault: a read or a write of an unmapped or protected address.
    Page {
        write: bool,
    },
    /// A general protection fault (a non-canonical address); the address is unknown.
    General,
    Unknown,
}

impl Access {
    fn code(self) -> usize {
        match self {
            Access::Page { write: false } => 0,
            Access::Page { write: true } => 1,
            Access::General => 2,
            Access::Unknown => 3,
        }
    }
    fn from_code(c: usize) -> Access {
        match c {
            0 => Access::Page { write: false },
            1 => Access::Page { write: true },
            2 => Access::General,
            _ => Access::Unknown,
        }
    }
}

/// What went wrong, as the message's tail: "invalid memory access: write to address 0x0 (a
/// null pointer)".
fn describe(m: &mut Msg, sig: i32, addr: usize, access: Access) {
    m.s(b"invalid memory access");
    if sig == libc::SIGBUS {
        m.s(b" (bus error)");
    }
    m.s(b": ");
    match access {
        Access::Page { write: true } => m.s(b"write to address "),
        Access::Page { write: false } => m.s(b"read from address "),
        Access::General => {
            m.s(b"a non-canonical address (general protection fault)");
            return;
        }
        Access::Unknown => m.s(b"address "),
    };
    m.hex(addr as u64);
    if addr < 4096 {
        m.s(b" (a null pointer)");
    }
}

/// The calling worker's shared-memory reservation (guards included), block start and size:
/// faults there are out-of-range shared addresses. Set while a worker runs a launch.
#[derive(Clone, Copy, Default)]
struct Window {
    lo: usize,
    hi: usize,
    base: usize,
    bytes: usize,
}

thread_local! {
    static WINDOW: std::cell::Cell<Window> = const {
        std::cell::Cell::new(Window { lo: 0, hi: 0, base: 0, bytes: 0 })
    };
}

/// Records a worker's shared block for fault messages while it lives.
pub(crate) struct SharedWindow;

impl SharedWindow {
    pub(crate) fn set(b: &super::shared::SharedBlock) -> SharedWindow {
        let (lo, hi) = b.reserved();
        let w = Window {
            lo,
            hi,
            base: b.base() as usize,
            bytes: b.bytes(),
        };
        WINDOW.with(|c| c.set(w));
        SharedWindow
    }
}

impl Drop for SharedWindow {
    fn drop(&mut self) {
        WINDOW.with(|c| c.set(Window::default()));
    }
}

/// Whether `addr` lies in the calling worker's shared-memory reservation (the CTA's block and
/// the guards around it, where an access faults with an out-of-range shared address); `None`
/// while no launch has set one.
pub(crate) fn in_shared_reservation(addr: usize) -> Option<bool> {
    let w = WINDOW.with(|c| c.get());
    (w.hi > w.lo).then_some(addr >= w.lo && addr < w.hi)
}

/// " (an out-of-range shared address: offset N, the block has M bytes of shared memory)" when
/// `addr` lies in the calling worker's shared reservation (not for the signal handler).
fn shared_note(m: &mut Msg, addr: usize) {
    let w = WINDOW.with(|c| c.get());
    if addr < w.lo || addr >= w.hi {
        return;
    }
    m.s(b" (an out-of-range shared address: offset ");
    if addr < w.base {
        m.s(b"-").dec((w.base - addr) as u64);
    } else {
        m.dec((addr - w.base) as u64);
    }
    m.s(b", the block has ")
        .dec(w.bytes as u64)
        .s(b" bytes of shared memory)");
}

thread_local! {
    /// The calling worker's `.local` reservations: its stack area (0) and the thread loops'
    /// `.local` area (1); faults there are out-of-range local addresses (or, in a stack's own
    /// guard, stack overflows). Set while a worker runs a launch.
    static LOCAL: std::cell::Cell<[AreaWindow; 2]> =
        const { std::cell::Cell::new([AreaWindow { lo: 0, hi: 0, first: 0, slot: 0, gap: 0 }; 2]) };
}

/// Records one of a worker's `.local` reservations for fault messages while it lives.
pub(crate) struct LocalWindow(usize);

impl LocalWindow {
    pub(crate) fn set(i: usize, w: AreaWindow) -> LocalWindow {
        LOCAL.with(|c| {
            let mut a = c.get();
            a[i] = w;
            c.set(a);
        });
        LocalWindow(i)
    }
}

impl Drop for LocalWindow {
    fn drop(&mut self) {
        LOCAL.with(|c| {
            let mut a = c.get();
            a[self.0] = AreaWindow::default();
            c.set(a);
        });
    }
}

/// Whether `addr` lies in one of the calling worker's `.local` reservations.
fn in_local(addr: usize) -> bool {
    LOCAL.with(|c| c.get()).iter().any(|w| w.contains(addr))
}

/// " (an out-of-range local address: …)" when `addr` lies in the calling worker's `.local`
/// reservations.
fn local_note(m: &mut Msg, addr: usize) {
    if in_local(addr) {
        m.s(b" (an out-of-range local address: outside the thread's .local memory and stack)");
    }
}

fn kernel_name(m: &mut Msg) {
    let n = KERNEL_LEN.load(Ordering::Acquire);
    for slot in KERNEL.iter().take(n) {
        m.s(&[slot.load(Ordering::Relaxed)]);
    }
}

/// The signal number `fault_trap` takes for a misaligned access found by kernel code
/// (`ptx2llvm_rt_misaligned`), which no signal reports: no signal has this number.
const MISALIGNED: usize = 0xff;

/// What kind of access a misaligned address was given to, as generated code tells
/// `ptx2llvm_rt_misaligned` (`misaligned_code`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MisalignedAccess {
    Read,
    Write,
    /// `atom`/`red`.
    Atomic,
}

/// The `code` argument of `ptx2llvm_rt_misaligned` for an access of `bytes` bytes of `kind`;
/// `shared`: the address is an offset in the CTA's shared memory (a `.shared` access).
pub fn misaligned_code(kind: MisalignedAccess, bytes: u32, shared: bool) -> u64 {
    let k = match kind {
        MisalignedAccess::Read => 0,
        MisalignedAccess::Write => 1,
        MisalignedAccess::Atomic => 2,
    };
    k | (shared as u64) << 2 | u64::from(bytes) << 3
}

/// "misaligned address: read of 4 bytes at 0x1002", for `misaligned_code(..)` `code`.
fn describe_misaligned(m: &mut Msg, addr: usize, code: usize) {
    m.s(b"misaligned address: ");
    m.s(match code & 3 {
        0 => b"read of ".as_slice(),
        1 => b"write of ",
        _ => b"atomic access of ",
    });
    m.dec((code >> 3) as u64).s(b" bytes at ");
    if code & 4 != 0 {
        m.s(b"shared address ");
    }
    m.hex(addr as u64);
}

/// A load, store or atomic of kernel code whose address `addr` is not a multiple of its size:
/// fails the launch as a fault there would (`fault_trap`: a thread-loop CTA is replayed to
/// name the thread), with "misaligned address: …" (`code`: `misaligned_code`). Generated code
/// calls it on a cold branch after testing the address's low bits.
///
/// # Safety
/// Called by kernel code only, on a CUDA thread.
#[no_mangle]
pub unsafe extern "C" fn ptx2llvm_rt_misaligned(addr: u64, code: u64) -> ! {
    let t = super::nvvm::ptx2llvm_rt_self();
    fault_trap(t, addr as usize, MISALIGNED | (code as usize) << 8)
}

/// The message of a fault `fault_trap` was given (after "kernel K failed in …: ").
fn fault_text(m: &mut Msg, addr: usize, sig_and_access: usize) {
    if sig_and_access & 0xff == MISALIGNED {
        return describe_misaligned(m, addr, sig_and_access >> 8);
    }
    let access = Access::from_code(sig_and_access >> 8);
    describe(m, (sig_and_access & 0xff) as i32, addr, access);
    shared_note(m, addr);
    local_note(m, addr);
}

/// Where a redirected thread resumes: fails the launch with the message, like `trap`.
extern "C" fn fault_trap(t: *mut Thread, addr: usize, sig_and_access: usize) -> ! {
    // A whole-warp matrix call of the warp engine knows whose row faulted: name that lane's
    // thread. (A replay would run the instruction one thread at a time, where the other
    // lanes' row addresses are not known.)
    let row = ROW.with(|r| r.get());
    set_warp_rows(false);
    match row.lane {
        // SAFETY: `t` is the running context (checked by the handler).
        Some(lane) if row.warp => unsafe { name_warp_lane(t, lane) },
        // Thread-loop code outside its diagnostic replay: which thread faulted is not known
        // yet; the driver replays the CTA thread by thread to find it (does not return then).
        // SAFETY: `t` is the running context (checked by the handler).
        _ => unsafe { super::fission::fault_before_replay(t, addr, sig_and_access) },
    }
    let mut m = Msg::new();
    fault_text(&mut m, addr, sig_and_access);
    // A warp matrix instruction reads other lanes' rows: say whose address it was, since the
    // thread named is the one that happened to read it.
    if let Some(lane) = ROW.with(|r| {
        r.replace(RowAccess {
            lane: None,
            warp: false,
        })
        .lane
    }) {
        m.s(b", through the row address that lane ")
            .dec(lane as u64)
            .s(b" gave");
    }
    m.s(b"\0");
    // SAFETY: `t` is the running CUDA thread's context (checked by the handler); the message
    // is a NUL-terminated buffer that `ptx2llvm_rt_trap` copies before suspending.
    unsafe { super::entry::ptx2llvm_rt_trap(t, m.bytes().as_ptr() as *const libc::c_char) }
}

/// The text of a fault's message (`sig_and_access` as `fault_trap` takes it).
pub(crate) fn message(addr: usize, sig_and_access: usize) -> String {
    let mut m = Msg::new();
    fault_text(&mut m, addr, sig_and_access);
    String::from_utf8_lossy(m.bytes()).into_owned()
}

thread_local! {
    /// Set while a runtime function accesses kernel memory on a CUDA thread's behalf (the
    /// rows of `ldmatrix`, the elements of `wmma.load`): a fault there is the kernel's.
    static KERNEL_ACCESS: std::sync::atomic::AtomicBool = const {
        std::sync::atomic::AtomicBool::new(false)
    };
}

/// The row access a warp matrix instruction is making, for a fault's message.
#[derive(Clone, Copy)]
struct RowAccess {
    /// The lane whose row address is being read or written (`row_lane`).
    lane: Option<u32>,
    /// The running context is a whole warp's (`warp_rows_access`, the warp engine): a fault
    /// names `lane`'s thread.
    warp: bool,
}

thread_local! {
    /// Read by `fault_trap`, which the SIGSEGV handler enters and cannot pass arguments to:
    /// runtime state of the running worker, not compiler state.
    static ROW: std::cell::Cell<RowAccess> =
        const { std::cell::Cell::new(RowAccess { lane: None, warp: false }) };
}

/// Sets whether the running context is a whole warp's, keeping the row's lane.
fn set_warp_rows(warp: bool) {
    ROW.with(|r| r.set(RowAccess { warp, ..r.get() }));
}

/// `kernel_access` for a warp-engine function accessing a whole warp's rows: a fault names
/// the thread of the lane whose row it was (`row_lane`), with no replay of the CTA.
pub(crate) fn warp_rows_access<R>(f: impl FnOnce() -> R) -> R {
    set_warp_rows(true);
    let r = kernel_access(f);
    set_warp_rows(false);
    r
}

/// Makes the warp's running context `t` name `lane`'s thread (the warp engine runs a warp on
/// one context whose ids are its first lane's).
///
/// # Safety
/// `t` must be the running context of a warp-engine warp.
pub(crate) unsafe fn name_warp_lane(t: *mut Thread, lane: u32) {
    let flat = (*t).warpid * super::abi::WARP_SIZE + lane;
    let [nx, ny, _] = (*t).ntid;
    (*t).flat_tid = flat;
    (*t).laneid = lane;
    (*t).tid = [flat % nx, (flat / nx) % ny, flat / (nx * ny)];
}

/// Marks the accesses of `kernel_access` from now on as through the row address of `lane`
/// (`None`: the running thread's own addresses), for the message of a fault.
pub(crate) fn row_lane(lane: Option<u32>) {
    ROW.with(|r| r.set(RowAccess { lane, ..r.get() }));
    // Not after the access it is for.
    std::sync::atomic::compiler_fence(std::sync::atomic::Ordering::SeqCst);
}

/// Runs `f`, which accesses memory at addresses the kernel gave, so that an invalid one fails
/// the launch naming the CUDA thread (as a fault in kernel code does) instead of crashing.
pub(crate) fn kernel_access<R>(f: impl FnOnce() -> R) -> R {
    use std::sync::atomic::{compiler_fence, Ordering::Relaxed, Ordering::SeqCst};
    // The fences keep the compiler from moving `f`'s accesses out of the flagged stretch or
    // dropping the first store (only the signal handler reads it).
    KERNEL_ACCESS.with(|k| k.store(true, Relaxed));
    compiler_fence(SeqCst);
    let r = f();
    compiler_fence(SeqCst);
    KERNEL_ACCESS.with(|k| k.store(false, Relaxed));
    row_lane(None);
    r
}

/// Whether a kernel-memory access of the runtime is under way on this thread.
fn in_kernel_access() -> bool {
    KERNEL_ACCESS.with(|k| k.load(std::sync::atomic::Ordering::Relaxed))
}

/// Passes a fault on to the handler installed before ours (see the module doc).
unsafe fn chain(sig: i32, info: *mut libc::siginfo_t, ctx: *mut libc::c_void) {
    let old = if sig == libc::SIGBUS {
        OLD_BUS
    } else {
        OLD_SEGV
    };
    match old {
        Some(o) if o.sa_sigaction != libc::SIG_DFL && o.sa_sigaction != libc::SIG_IGN => {
            if o.sa_flags & libc::SA_SIGINFO != 0 {
                let f: extern "C" fn(i32, *mut libc::siginfo_t, *mut libc::c_void) =
                    std::mem::transmute(o.sa_sigaction);
                f(sig, info, ctx);
            } else {
                let f: extern "C" fn(i32) = std::mem::transmute(o.sa_sigaction);
                f(sig);
            }
        }
        _ => {
            // The default action, as without us: the signal is blocked while this handler
            // runs, so the raised one is delivered (and ends the process) when it returns —
            // also for a signal sent by `kill`, which returning alone would drop.
            let mut sa: libc::sigaction = std::mem::zeroed();
            sa.sa_sigaction = libc::SIG_DFL;
            libc::sigemptyset(&mut sa.sa_mask);
            libc::sigaction(sig, &sa, std::ptr::null_mut());
            libc::raise(sig);
        }
    }
}

extern "C" fn handler(sig: i32, info: *mut libc::siginfo_t, ctx: *mut libc::c_void) {
    // SAFETY: the kernel passes a valid siginfo and ucontext; everything below is
    // async-signal-safe (no allocation, no locks; atomics, `write`, `_exit`, `raise`).
    unsafe {
        if !ACTIVE.load(Ordering::Acquire) {
            return chain(sig, info, ctx);
        }
        let t = super::nvvm::ptx2llvm_rt_self();
        let addr = (*info).si_addr() as usize;
        let (pc, sp, access) = machine_state(ctx);
        if !is_kernel_fault(pc, !t.is_null(), in_kernel_access()) {
            return chain(sig, info, ctx);
        }
        // The redirected thread does not come back to clear it.
        KERNEL_ACCESS.with(|k| k.store(false, Ordering::Relaxed));
        // Room to run `fault_trap` below the faulting frame? (Not after a stack overflow.) In
        // a worker's stack area only the guard of the running stack's own slot overflows; an
        // access elsewhere in the area, near the stack pointer or not, is an out-of-range
        // local address.
        let areas = LOCAL.with(|c| c.get());
        let overflow = sp != 0
            && access != Access::General
            && match areas.iter().find(|w| w.contains(addr)) {
                Some(w) => w.overflow(addr, sp),
                None => addr.abs_diff(sp) < 64 * 1024,
            };
        if !overflow && redirect(ctx, t, addr, sig, access) {
            return;
        }
        let mut m = Msg::new();
        m.s(b"error: kernel ");
        kernel_name(&mut m);
        m.s(b" failed in block ")
            .dim((*t).ctaid)
            .s(b", thread ")
            .dim((*t).tid)
            .s(b": ");
        if overflow {
            m.s(
                b"stack overflow of the CUDA thread (deep recursion or large local arrays; \
                  the stack is LaunchConfig::stack_size, 256 KiB by default) at address ",
            )
            .hex(addr as u64);
        } else {
            describe(&mut m, sig, addr, access);
        }
        m.s(b"\n");
        libc::write(2, m.bytes().as_ptr() as *const libc::c_void, m.len);
        libc::_exit(1);
    }
}

/// The faulting pc, stack pointer and whether the access was a write (x86-64 Linux).
#[cfg(all(target_arch = "x86_64", target_os = "linux"))]
unsafe fn machine_state(ctx: *mut libc::c_void) -> (usize, usize, Access) {
    let uc = ctx as *mut libc::ucontext_t;
    let g = &(*uc).uc_mcontext.gregs;
    let err = g[libc::REG_ERR as usize] as u64;
    // Trap 14 is a page fault (bit 1 of the error code: a write); 13 a general protection
    // fault, e.g. a non-canonical address, for which the address is not reported.
    let kind = match g[libc::REG_TRAPNO as usize] {
        14 => Access::Page {
            write: err & 2 != 0,
        },
        13 => Access::General,
        _ => Access::Unknown,
    };
    (
        g[libc::REG_RIP as usize] as usize,
        g[libc::REG_RSP as usize] as usize,
        kind,
    )
}

#[cfg(not(all(target_arch = "x86_64", target_os = "linux")))]
unsafe fn machine_state(_ctx: *mut libc::c_void) -> (usize, usize, Access) {
    (1, 0, Access::Unknown)
}

/// Makes the thread resume in `fault_trap(t, addr, sig | access << 8)` on its own stack.
#[cfg(all(target_arch = "x86_64", target_os = "linux"))]
unsafe fn redirect(
    ctx: *mut libc::c_void,
    t: *mut Thread,
    addr: usize,
    sig: i32,
    access: Access,
) -> bool {
    let uc = ctx as *mut libc::ucontext_t;
    let g = &mut (*uc).uc_mcontext.gregs;
    let sp = g[libc::REG_RSP as usize] as usize;
    // Skip the red zone and leave room; a call leaves rsp ≡ 8 (mod 16) at function entry.
    let new_sp = ((sp - 1024) & !15) - 8;
    g[libc::REG_RSP as usize] = new_sp as i64;
    g[libc::REG_RIP as usize] = fault_trap as *const () as usize as i64;
    g[libc::REG_RDI as usize] = t as i64;
    g[libc::REG_RSI as usize] = addr as i64;
    g[libc::REG_RDX as usize] = ((sig as usize & 0xff) | (access.code() << 8)) as i64;
    true
}

#[cfg(not(all(target_arch = "x86_64", target_os = "linux")))]
unsafe fn redirect(
    _ctx: *mut libc::c_void,
    _t: *mut Thread,
    _addr: usize,
    _sig: i32,
    _access: Access,
) -> bool {
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_registered_code_on_a_cuda_thread_is_the_kernels() {
        // Foreign JIT code: an executable anonymous page no loaded object contains (which the
        // old "dladdr finds nothing" test took for kernel code).
        // SAFETY: a fresh private mapping, unmapped below.
        let page = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                4096,
                libc::PROT_READ | libc::PROT_EXEC,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        assert_ne!(page, libc::MAP_FAILED);
        let pc = page as usize + 16;
        assert!(!is_kernel_fault(pc, true, false));
        let r = register_code(&[(page as usize, page as usize + 4096)]);
        assert_eq!(r.len(), 1);
        assert!(is_kernel_fault(pc, true, false));
        // Not on a CUDA thread: the host's, whatever the code.
        assert!(!is_kernel_fault(pc, false, false));
        assert!(!is_kernel_fault(pc + 4096, true, false));
        drop(r);
        assert!(!is_kernel_fault(pc, true, false));
        // A runtime function touching kernel memory on a CUDA thread.
        let host_pc = is_kernel_fault as *const () as usize;
        assert!(is_kernel_fault(host_pc, true, true));
        assert!(!is_kernel_fault(host_pc, true, false));
        // SAFETY: mapped above.
        unsafe { libc::munmap(page, 4096) };
    }

    #[test]
    fn messages() {
        let mut m = Msg::new();
        describe(&mut m, libc::SIGSEGV, 0, Access::Page { write: true });
        assert_eq!(
            std::str::from_utf8(m.bytes()).unwrap(),
            "invalid memory access: write to address 0x0 (a null pointer)"
        );
        let mut m = Msg::new();
        m.dim([1, 20, 300]).s(b" ").hex(0xdead_beef).s(b" ").dec(0);
        assert_eq!(
            std::str::from_utf8(m.bytes()).unwrap(),
            "(1, 20, 300) 0xdeadbeef 0"
        );
    }
}
