//! The persistent worker pool: one helper thread per core but one, started on first use and
//! parked on a condition variable between launches; the launching thread is worker 0. A job
//! runs `f(index)` on `n` workers and returns when all have finished. While one launch uses
//! the pool, a concurrent launch (another host thread) runs on scoped threads of its own.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::{Condvar, Mutex, OnceLock};

/// Stack size of pool threads: thread-loop kernels run their device-function frames on it.
const STACK: usize = 16 << 20;

type Job = *const (dyn Fn(u32) + Sync);

struct State {
    generation: u64,
    job_ptr: Option<JobPtr>,
    workers: usize,
    remaining: usize,
    panicked: bool,
}

#[derive(Clone, Copy)]
struct JobPtr(Job);
// SAFETY: the job is Sync and outlives its use (the submitter waits for every worker).
unsafe impl Send for JobPtr {}

struct Pool {
    helpers: usize,
    state: Mutex<State>,
    wake: Condvar,
    done: Condvar,
    busy: Mutex<()>,
}

static POOL: OnceLock<Pool> = OnceLock::new();

/// Cores of this machine (asked once: the answer reads cgroup files on Linux).
pub fn cores() -> usize {
    static CORES: OnceLock<usize> = OnceLock::new();
    *CORES.get_or_init(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
}

fn pool() -> &'static Pool {
    POOL.get_or_init(|| {
        let helpers = cores().saturating_sub(1);
        Pool {
            helpers,
            state: Mutex::new(State {
                generation: 0,
                job_ptr: None,
                workers: 0,
                remaining: 0,
                panicked: false,
            }),
            wake: Condvar::new(),
            done: Condvar::new(),
            busy: Mutex::new(()),
        }
    })
}

fn start_helpers(p: &'static Pool) {
    static STARTED: OnceLock<()> = OnceLock::new();
    STARTED.get_or_init(|| {
        for i in 1..=p.helpers {
            let _ = std::thread::Builder::new()
                .name(format!("ptx2llvm-worker-{i}"))
                .stack_size(STACK)
                .spawn(move || helper(p, i));
        }
    });
}

fn helper(p: &'static Pool, index: usize) {
    let mut seen = 0u64;
    loop {
        let job = {
            let mut st = p.state.lock().unwrap_or_else(|e| e.into_inner());
            while st.generation == seen {
                st = p.wake.wait(st).unwrap_or_else(|e| e.into_inner());
            }
            seen = st.generation;
            if index >= st.workers {
                continue;
            }
            st.job_ptr
        };
        let Some(JobPtr(job)) = job else { continue };
        // SAFETY: the submitter keeps the job alive until `remaining` reaches zero.
        let ok = catch_unwind(AssertUnwindSafe(|| unsafe { (*job)(index as u32) })).is_ok();
        let mut st = p.state.lock().unwrap_or_else(|e| e.into_inner());
        st.panicked |= !ok;
        st.remaining -= 1;
        if st.remaining == 0 {
            p.done.notify_all();
        }
    }
}

/// Runs `f(0..n)` on `n` workers (the caller is worker 0) and waits for all of them.
pub fn run(n: usize, f: &(dyn Fn(u32) + Sync)) {
    let n = n.max(1);
    if n == 1 {
        f(0);
        return;
    }
    let p = pool();
    let guard = match p.busy.try_lock() {
        Ok(g) if p.helpers + 1 >= n => g,
        _ => return run_scoped(n, f),
    };
    start_helpers(p);
    {
        let mut st = p.state.lock().unwrap_or_else(|e| e.into_inner());
        // SAFETY: erase the lifetime; we wait below until no helper uses the job any more.
        let job: Job = unsafe { std::mem::transmute::<&(dyn Fn(u32) + Sync), Job>(f) };
        st.job_ptr = Some(JobPtr(job));
        st.workers = n;
        st.remaining = n - 1;
        st.panicked = false;
        st.generation += 1;
        p.wake.notify_all();
    }
    let mine = catch_unwind(AssertUnwindSafe(|| f(0)));
    let panicked = {
        let mut st = p.state.lock().unwrap_or_else(|e| e.into_inner());
        while st.remaining > 0 {
            st = p.done.wait(st).unwrap_or_else(|e| e.into_inner());
        }
        st.job_ptr = None;
        st.panicked
    };
    drop(guard);
    if let Err(e) = mine {
        std::panic::resume_unwind(e);
    }
    if panicked {
        panic!("a ptx2llvm worker thread panicked");
    }
}

fn run_scoped(n: usize, f: &(dyn Fn(u32) + Sync)) {
    std::thread::scope(|s| {
        for w in 1..n {
            let _ = std::thread::Builder::new()
                .name(format!("ptx2llvm-worker-{w}"))
                .stack_size(STACK)
                .spawn_scoped(s, move || f(w as u32));
        }
        f(0);
    });
}
