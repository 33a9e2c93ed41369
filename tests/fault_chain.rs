//! The fault handler in someone else's process: faults of kernels become launch errors, every
//! other fault reaches the handler the host installed before (SA_SIGINFO or plain), `SIG_DFL`
//! ends the process with the signal, and the handler can be turned off (environment or API).
//! Tests that need a fresh process re-run this binary as a child (`FAULT_CHILD`).

use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};

use ptx2llvm::api::{Arg, Buffer, Dim3, Module};
use ptx2llvm::runtime::fault;

static SEGVS: AtomicUsize = AtomicUsize::new(0);
static BUSES: AtomicUsize = AtomicUsize::new(0);
/// The PROT_NONE page whose faults the host's handler repairs.
static PAGE: AtomicUsize = AtomicUsize::new(0);

/// The host's SIGSEGV handler: counts, and makes the page accessible so the access succeeds
/// when the instruction runs again.
extern "C" fn host_segv(_sig: i32, info: *mut libc::siginfo_t, _ctx: *mut libc::c_void) {
    SEGVS.fetch_add(1, Ordering::SeqCst);
    let page = PAGE.load(Ordering::SeqCst);
    // SAFETY: the kernel passes a valid siginfo; mprotect is async-signal-safe.
    unsafe {
        let addr = (*info).si_addr() as usize;
        if page != 0 && addr & !4095 == page {
            libc::mprotect(page as *mut _, 4096, libc::PROT_READ | libc::PROT_WRITE);
        }
    }
}

extern "C" fn host_bus(_sig: i32) {
    BUSES.fetch_add(1, Ordering::SeqCst);
}

fn current(sig: i32) -> usize {
    // SAFETY: queries the action only.
    unsafe {
        let mut sa: libc::sigaction = std::mem::zeroed();
        libc::sigaction(sig, std::ptr::null(), &mut sa);
        sa.sa_sigaction
    }
}

fn protected_page() -> *mut u8 {
    // SAFETY: a fresh private mapping that the test owns.
    let p = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            4096,
            libc::PROT_NONE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
            -1,
            0,
        )
    };
    assert_ne!(p, libc::MAP_FAILED);
    PAGE.store(p as usize, Ordering::SeqCst);
    p as *mut u8
}

const KERNELS: &str = "
.version 8.0
.target sm_80
.address_size 64
.extern .func (.param .b32 r) vprintf (.param .b64 fmt, .param .b64 args);
.visible .entry store(.param .u64 p)
{
	.reg .b32 %r<2>;
	.reg .b64 %rd<2>;
	ld.param.u64 %rd1, [p];
	st.global.u32 [%rd1], 1;
	ret;
}
.visible .entry print(.param .u64 fmt)
{
	.reg .b32 %r<2>;
	.reg .b64 %rd<2>;
	ld.param.u64 %rd1, [fmt];
	{
	.param .b64 pf;
	.param .b64 pa;
	.param .b32 pr;
	st.param.b64 [pf], %rd1;
	st.param.b64 [pa], 0;
	call.uni (pr), vprintf, (pf, pa);
	}
	ret;
}
";

#[test]
fn host_faults_go_to_the_previous_handlers_and_kernel_faults_do_not() {
    if std::env::var_os("FAULT_CHILD").is_some() {
        return;
    }
    // SAFETY: installs handlers defined above, with initialized structs.
    unsafe {
        let mut sa: libc::sigaction = std::mem::zeroed();
        sa.sa_sigaction = host_segv as *const () as usize;
        sa.sa_flags = libc::SA_SIGINFO;
        libc::sigemptyset(&mut sa.sa_mask);
        assert_eq!(libc::sigaction(libc::SIGSEGV, &sa, std::ptr::null_mut()), 0);
        sa.sa_sigaction = host_bus as *const () as usize;
        sa.sa_flags = 0;
        assert_eq!(libc::sigaction(libc::SIGBUS, &sa, std::ptr::null_mut()), 0);
    }
    let m = Module::from_ptx(KERNELS, 2).unwrap();
    // A kernel's fault is the launch's error; the host's handler never sees it.
    let mut args = vec![Arg::scalar_u64(0)];
    let e = m
        .launch("store", Dim3::x(1), Dim3::x(1), 0, &mut args)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("invalid memory access: write to address 0x0"),
        "{e}"
    );
    assert_eq!(SEGVS.load(Ordering::SeqCst), 0);
    assert_ne!(current(libc::SIGSEGV), host_segv as *const () as usize);

    // A fault in host code goes to the host's SA_SIGINFO handler, which repairs it.
    let page = protected_page();
    // SAFETY: the page faults once; the host handler makes it writable.
    unsafe {
        std::ptr::write_volatile(page, 7);
        assert_eq!(std::ptr::read_volatile(page), 7);
    }
    assert_eq!(SEGVS.load(Ordering::SeqCst), 1);

    // A fault in the runtime's code (printf reading the format) while a kernel runs is not
    // the kernel's: the host's handler gets it too, and the launch goes on.
    // SAFETY: the page is the test's own.
    unsafe { libc::mprotect(page as *mut _, 4096, libc::PROT_NONE) };
    let mut args = vec![Arg::scalar_u64(page as u64)];
    m.launch("print", Dim3::x(1), Dim3::x(1), 0, &mut args)
        .unwrap();
    assert_eq!(SEGVS.load(Ordering::SeqCst), 2);

    // A plain (not SA_SIGINFO) handler is called with the signal number alone.
    // SAFETY: the host's handler counts it.
    unsafe { libc::raise(libc::SIGBUS) };
    assert_eq!(BUSES.load(Ordering::SeqCst), 1);

    // Turned off, the host's handlers are back; turned on, the next launch installs ours.
    fault::set_enabled(false);
    assert!(!fault::enabled());
    assert_eq!(current(libc::SIGSEGV), host_segv as *const () as usize);
    assert_eq!(current(libc::SIGBUS), host_bus as *const () as usize);
    fault::set_enabled(true);
    let mut args = vec![Arg::Buffer(Buffer::zeroed(4))];
    m.launch("store", Dim3::x(1), Dim3::x(1), 0, &mut args)
        .unwrap();
    assert_ne!(current(libc::SIGSEGV), host_segv as *const () as usize);
}

/// Runs this binary's test `name` in a child process with `FAULT_CHILD=1` and `env`.
fn child(name: &str, env: &[(&str, &str)]) -> std::process::ExitStatus {
    let mut c = Command::new(std::env::current_exe().unwrap());
    c.args(["--exact", name, "--nocapture", "--test-threads=1"])
        .env("FAULT_CHILD", "1");
    for (k, v) in env {
        c.env(k, v);
    }
    c.status().unwrap()
}

#[test]
fn default_action_ends_the_process_with_the_signal() {
    if std::env::var_os("FAULT_CHILD").is_some() {
        // Rust's runtime has its own SIGSEGV handler (stack overflow detection): back to the
        // default first, as in a C program.
        // SAFETY: sets the default action.
        unsafe { libc::signal(libc::SIGSEGV, libc::SIG_DFL) };
        fault::install();
        assert_ne!(current(libc::SIGSEGV), libc::SIG_DFL);
        // A SIGSEGV sent to the process (not a fault that would repeat): with SIG_DFL before
        // us, the process must end with it, not go on.
        // SAFETY: raising a signal.
        unsafe { libc::raise(libc::SIGSEGV) };
        std::process::exit(0);
    }
    use std::os::unix::process::ExitStatusExt;
    let s = child("default_action_ends_the_process_with_the_signal", &[]);
    assert_eq!(s.signal(), Some(libc::SIGSEGV), "{s:?}");
}

#[test]
fn the_environment_turns_the_handler_off() {
    if std::env::var_os("FAULT_CHILD").is_some() {
        let before = current(libc::SIGSEGV);
        fault::install();
        let off = current(libc::SIGSEGV) == before && !fault::enabled();
        std::process::exit(if off { 0 } else { 3 });
    }
    let s = child(
        "the_environment_turns_the_handler_off",
        &[("PTX2LLVM_FAULT_HANDLER", "0")],
    );
    assert_eq!(s.code(), Some(0), "{s:?}");
}
