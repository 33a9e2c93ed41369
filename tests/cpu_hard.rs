//! The hard cases of running SIMT kernels on a CPU (GUIDE §4), each with a reference written
//! here: `__syncthreads` in loops, threads exiting before barriers, shuffles with partial
//! member masks in divergent branches, legacy warp-synchronous code (what the scheduler
//! guarantees), `__threadfence` with a last-block-done counter, contended atomics of every
//! kind, 3-D grids and blocks, dynamic shared memory, printf order, trap and assert, barrier
//! deadlocks, named-barrier producer/consumer, inter-block flags, invalid memory accesses.
//!
//! The kernels are `tests/kernels/hard_cases.cu`, compiled by NVRTC into the checked-in
//! `hard_cases.ptx` (no NVRTC at test time).

mod cpu_util;

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use cpu_util::*;
use ptx2llvm::runtime::LaunchConfig;

fn hard() -> Module {
    load(&root().join("tests/kernels/hard_cases.ptx"))
}

fn hard_path() -> String {
    root()
        .join("tests/kernels/hard_cases.ptx")
        .to_string_lossy()
        .into_owned()
}

#[test]
fn syncthreads_in_loops() {
    let m = hard();
    let mut r = Rng::new(40);
    for (nb, blocks, rounds) in [(256u32, 3u32, 2i32), (64, 5, 0), (1024, 1, 3), (96, 2, 1)] {
        let n = (nb * blocks) as usize - 17;
        let input: Vec<i32> = (0..n).map(|_| r.int(-50, 50) as i32).collect();
        let (bi, bo) = (buf_i32(&input), buf_i32(&vec![0; n]));
        launch(
            &m,
            "scan_loop",
            d3(blocks, 1, 1),
            d3(nb, 1, 1),
            2 * 4 * nb,
            vec![ptr(&bi), ptr(&bo), i32a(n as i32), i32a(rounds)],
        );
        let mut want = Vec::new();
        for b in 0..blocks as usize {
            let nb = nb as usize;
            let vals: Vec<i32> = (0..nb)
                .map(|t| input.get(b * nb + t).copied().unwrap_or(0))
                .collect();
            let mut acc: Vec<i32> = vals
                .iter()
                .scan(0, |s, &v| {
                    *s += v;
                    Some(*s)
                })
                .collect();
            for _ in 0..rounds + b as i32 {
                acc = (0..nb).map(|t| acc[t] + (acc[(t + 1) % nb] & 1)).collect();
            }
            want.extend(acc);
        }
        want.truncate(n);
        assert_eq!(get_i32(&bo), want, "block {nb} × {blocks}, rounds {rounds}");
    }
}

#[test]
fn threads_exit_before_barriers() {
    let m = hard();
    for (block, live) in [(64u32, 40i32), (256, 200), (128, 1), (100, 33), (32, 32)] {
        let out = buf_i32(&vec![-1; block as usize]);
        launch(
            &m,
            "exit_before_barrier",
            d3(1, 1, 1),
            d3(block, 1, 1),
            0,
            vec![ptr(&out), i32a(live)],
        );
        let l = live as usize;
        let v = |t: usize| 2 * (l as i32 - 1 - t as i32);
        let s3 = |u: usize| {
            if u.is_multiple_of(3) {
                2 * u as i32
            } else {
                v(u) + 1
            }
        };
        let want: Vec<i32> = (0..block as usize)
            .map(|t| {
                if t >= l {
                    -1
                } else if t % 3 == 0 {
                    v(t)
                } else {
                    s3(t) + s3((t + 1) % l)
                }
            })
            .collect();
        assert_eq!(get_i32(&out), want, "block {block}, live {live}");
    }
}

#[test]
fn shuffles_with_partial_masks_in_divergent_branches() {
    let m = hard();
    let warps = 4usize;
    let mut r = Rng::new(41);
    let input: Vec<i32> = (0..32 * warps).map(|_| r.int(-100, 100) as i32).collect();
    let (bi, bo, bb) = (
        buf_i32(&input),
        buf_i32(&vec![0; 32 * warps]),
        buf_u32(&vec![0; 2 * warps]),
    );
    launch(
        &m,
        "partial_shuffle",
        d3(2, 1, 1),
        d3(64, 1, 1),
        0,
        vec![ptr(&bi), ptr(&bo), ptr(&bb)],
    );
    let mut want = Vec::new();
    let mut ballots = Vec::new();
    for w in 0..warps {
        let v = &input[32 * w..32 * w + 32];
        let low: i32 = v[..16].iter().sum();
        for l in 0..32 {
            want.push(if l < 16 {
                low
            } else if l < 24 {
                v[20]
            } else if l + 2 < 32 {
                v[l + 2]
            } else {
                v[l]
            });
        }
        ballots.push(if low > 0 { 0xffff } else { 0 });
        ballots.push((24..32).filter(|&l| v[l] & 1 != 0).map(|l| 1u32 << l).sum());
    }
    assert_eq!(get_i32(&bo), want);
    assert_eq!(get_u32(&bb), ballots);
}

#[test]
fn warp_synchronous_code_needs_syncwarp() {
    let m = hard();
    let input: Vec<i32> = (0..64).map(|i| i * i - 7 * i).collect();
    let bi = buf_i32(&input);
    let total: i32 = input.iter().sum();
    let out = buf_i32(&[0]);
    launch(
        &m,
        "warp_reduce_syncwarp",
        d3(1, 1, 1),
        d3(32, 1, 1),
        0,
        vec![ptr(&bi), ptr(&out)],
    );
    assert_eq!(get_i32(&out), [total], "with __syncwarp between steps");

    // What the schedulers give legacy code (CUDA requires __syncwarp here since CUDA 9, and
    // Volta and later GPUs do not guarantee lock step). The warp engine (a kernel without CTA
    // barriers) runs a warp's lanes in lock step, as pre-Volta GPUs did: the full sum. Thread
    // loops and coroutines do NOT: each CUDA thread runs until it reaches a barrier, a warp
    // operation (`__syncwarp`, shuffles, votes) or its end; between those points the lanes
    // run one after another, in lane order. So lane 0 finishes its six `s[t] += s[t + k]`
    // before lane 1 stores anything: it adds in[32] and the zeros of the untouched shared
    // memory.
    let lockstep = matches!(
        m.program().kernel("warp_reduce_legacy").unwrap().path,
        ptx2llvm::target::cpu::fission::KernelPath::Warp(_)
    );
    let out = buf_i32(&[0]);
    launch(
        &m,
        "warp_reduce_legacy",
        d3(1, 1, 1),
        d3(32, 1, 1),
        0,
        vec![ptr(&bi), ptr(&out)],
    );
    if lockstep {
        assert_eq!(get_i32(&out), [total], "lock step");
    } else {
        assert_eq!(get_i32(&out), [input[0] + input[32]]);
    }
}

#[test]
fn threadfence_last_block_done() {
    let m = hard();
    let n = 5000usize;
    let mut r = Rng::new(42);
    let input: Vec<i32> = (0..n).map(|_| r.int(-1000, 1000) as i32).collect();
    let bi = buf_i32(&input);
    let blocks = n.div_ceil(256);
    for round in 0..3 {
        let (bp, bt) = (buf_i32(&vec![0; blocks]), buf_i32(&[0]));
        launch(
            &m,
            "last_block_sum",
            d3(blocks as u32, 1, 1),
            d3(256, 1, 1),
            0,
            vec![ptr(&bi), ptr(&bp), ptr(&bt), i32a(n as i32)],
        );
        let partial: Vec<i32> = (0..blocks)
            .map(|b| input[b * 256..(b * 256 + 256).min(n)].iter().sum())
            .collect();
        assert_eq!(get_i32(&bp), partial, "round {round}");
        assert_eq!(get_i32(&bt), [input.iter().sum::<i32>()], "round {round}");
        // The last block resets the counter for the next launch.
        assert_eq!(
            m.read_global("blocks_done").unwrap(),
            0u32.to_le_bytes(),
            "round {round}"
        );
    }
}

#[test]
fn contended_atomics_of_every_kind() {
    let m = hard();
    let (blocks, threads, iters) = (7u32, 99u32, 3u32);
    let nthreads = (blocks * threads) as u64;
    let total = nthreads * iters as u64;
    let mut u = vec![0u32; 13];
    u[2] = u32::MAX;
    u[4] = u32::MAX;
    let bu = buf_u32(&u);
    let bs = buf_i32(&[i32::MAX, i32::MIN]);
    let bu64 = buf_u64(&[0; 5]);
    let bs64 = buf_i64(&[i64::MAX, i64::MIN]);
    let (bf, bd) = (buf_f32(&[0.0]), buf_f64(&[0.0]));
    let bc = buf_u32(&vec![0; 2 * blocks as usize]);
    launch(
        &m,
        "contended",
        d3(blocks, 1, 1),
        d3(threads, 1, 1),
        0,
        vec![
            ptr(&bu),
            ptr(&bs),
            ptr(&bu64),
            ptr(&bs64),
            ptr(&bf),
            ptr(&bd),
            ptr(&bc),
            i32a(iters as i32),
        ],
    );
    let n = nthreads;
    let xor_all = (0..n).fold(0u64, |a, i| a ^ i);
    let sum_i: u64 = (0..n).sum();
    let mut dec = 0u32;
    for _ in 0..total {
        dec = if dec == 0 || dec > 77 { 77 } else { dec - 1 };
    }
    let u = get_u32(&bu);
    assert_eq!(u[0], total as u32, "atomicAdd");
    assert_eq!(u[1], 0u32.wrapping_sub(2 * total as u32), "atomicSub");
    assert_eq!(u[2], 7, "atomicMin (unsigned)");
    assert_eq!(u[3], 3 * (n as u32 - 1), "atomicMax (unsigned)");
    assert_eq!(u[4], 0xe000_0000, "atomicAnd");
    assert_eq!(u[5], 0x007f_ffff, "atomicOr");
    assert_eq!(u[6], xor_all as u32, "atomicXor (3 times each: odd)");
    assert_eq!(u[7], (total % 100) as u32, "atomicInc wraps at 99");
    assert_eq!(u[8], dec, "atomicDec wraps at 77");
    assert_eq!(u[9], 3 * total as u32, "atomicCAS loop");
    assert!(
        (1..=n as u32).contains(&u[10]),
        "atomicExch leaves some i + 1: {}",
        u[10]
    );
    assert_eq!(
        u[11].wrapping_add(u[10]),
        (iters as u64 * (sum_i + n)) as u32,
        "every value exchanged in is exchanged out once, or is the last"
    );
    assert_eq!(u[12], total as u32, "atomicAdd_system");
    assert_eq!(get_i32(&bs), [-500, n as i32 - 1], "atomicMin/Max (signed)");
    assert_eq!(get_f32(&bf), [0.5 * total as f32], "atomicAdd float");
    assert_eq!(get_f64(&bd), [0.25 * total as f64], "atomicAdd double");
    let u64s = get_u64(&bu64);
    assert_eq!(u64s[0], total << 33, "64-bit add");
    assert_eq!(u64s[1], (n - 1) << 40, "64-bit max");
    assert_eq!(u64s[2], u64::MAX, "64-bit or");
    assert_eq!(u64s[3], xor_all << 20, "64-bit xor");
    assert_eq!(u64s[4], iters as u64 * sum_i, "64-bit CAS loop");
    assert_eq!(
        get_i64(&bs64),
        [-((n as i64 - 1) << 32), (n as i64 - 1) << 32],
        "64-bit signed min/max"
    );
    let bc = get_u32(&bc);
    for b in 0..blocks as usize {
        assert_eq!(bc[2 * b], threads * iters, "shared atomicAdd, block {b}");
        assert_eq!(bc[2 * b + 1], 0, "shared atomicMin_block, block {b}");
    }
}

#[test]
fn three_dimensional_grids_and_blocks() {
    let m = hard();
    for (grid, block) in [
        ([3u32, 2, 4], [5u32, 3, 2]),
        ([1, 1, 3], [2, 2, 16]),
        ([2, 3, 1], [33, 1, 1]),
    ] {
        let per_block = block.iter().product::<u32>() as usize;
        let nblocks = grid.iter().product::<u32>() as usize;
        let out = buf_u32(&vec![u32::MAX; 13 * per_block * nblocks]);
        launch(&m, "dims3", Dim3(grid), Dim3(block), 0, vec![ptr(&out)]);
        let got = get_u32(&out);
        let mut want = Vec::new();
        for bz in 0..grid[2] {
            for by in 0..grid[1] {
                for bx in 0..grid[0] {
                    for tz in 0..block[2] {
                        for ty in 0..block[1] {
                            for tx in 0..block[0] {
                                let flat = tx + block[0] * (ty + block[1] * tz);
                                want.extend([
                                    tx,
                                    ty,
                                    tz,
                                    bx,
                                    by,
                                    bz,
                                    block[0],
                                    block[1],
                                    block[2],
                                    grid[0],
                                    grid[1],
                                    grid[2],
                                    flat % 32,
                                ]);
                            }
                        }
                    }
                }
            }
        }
        assert_eq!(got, want, "grid {grid:?} block {block:?}");
    }
}

#[test]
fn dynamic_shared_memory_through_the_cli() {
    let d = tempfile::tempdir().unwrap();
    let n = 200usize;
    let out = d.path().join("out");
    let dynamic = 4 * n;
    let (code, _, err) = run_cli(&[
        &hard_path(),
        "--kernel",
        "dyn_and_static",
        "--block",
        "64",
        &format!("--arg=zeros:{}", 4 * (n + 3)),
        &format!("--arg=s32:{n}"),
        "--shared-mem",
        &dynamic.to_string(),
        &format!("--dump=0={}", out.display()),
    ]);
    assert_eq!(code, 0, "{err}");
    let got: Vec<i32> = std::fs::read(&out)
        .unwrap()
        .chunks(4)
        .map(|c| i32::from_le_bytes(c.try_into().unwrap()))
        .collect();
    let want: Vec<i32> = (0..n)
        .map(|k| 3 * (n - 1 - k) as i32 + 100 + (k % 10) as i32)
        .collect();
    assert_eq!(&got[..n], &want[..]);
    assert!(
        got[n] >= 40,
        "the dynamic array overlaps the static one: {}",
        got[n]
    );
    assert_eq!(got[n + 1], dynamic as i32, "%dynamic_smem_size");
    // Static shared memory is laid out for the whole module; dynamic memory follows at 16;
    // the total is reported in 128-byte allocation units, as a GPU does for sm_80 code.
    let stat = hard().program().static_shared() as i32;
    assert_eq!(
        got[n + 2],
        ((stat + 15) / 16 * 16 + dynamic as i32 + 127) / 128 * 128,
        "%total_smem_size"
    );

    // Too much dynamic shared memory is refused before anything runs.
    let (code, _, err) = run_cli(&[
        &hard_path(),
        "--kernel",
        "dyn_and_static",
        "--arg=zeros:16",
        "--arg=s32:1",
        "--shared-mem",
        "300000",
    ]);
    assert_eq!(code, 1);
    assert!(
        err.contains("--shared-mem 300000: shared memory per block would be")
            && err.contains("at most 232448 bytes"),
        "{err}"
    );
}

#[test]
fn printf_keeps_each_threads_order() {
    let steps = 4;
    let (code, out, err) = run_cli(&[
        &hard_path(),
        "--kernel",
        "print_steps",
        "--grid",
        "2",
        "--block",
        "40",
        &format!("--arg=s32:{steps}"),
    ]);
    assert_eq!(code, 0, "{err}");
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 2 * 40 * steps, "{out}");
    let mut next = std::collections::HashMap::new();
    for l in &lines {
        let w: Vec<&str> = l.split_whitespace().collect();
        assert_eq!(w.len(), 8, "a whole line per printf: `{l}`");
        let key = (w[1].to_string(), w[3].to_string());
        let step: usize = w[5].parse().unwrap();
        let e = next.entry(key).or_insert(0usize);
        assert_eq!(step, *e, "steps of one thread in order: `{l}`");
        *e += 1;
        assert_eq!(w[7], steps.to_string());
    }
    assert_eq!(next.len(), 80);
    // Barriers separate the steps: every thread of a block prints step k before any prints
    // step k + 1.
    for b in ["0", "1"] {
        let steps_in_order: Vec<usize> = lines
            .iter()
            .filter(|l| l.split_whitespace().nth(1) == Some(b))
            .map(|l| l.split_whitespace().nth(5).unwrap().parse().unwrap())
            .collect();
        assert!(
            steps_in_order.windows(2).all(|p| p[0] <= p[1]),
            "block {b}: {steps_in_order:?}"
        );
    }
}

#[test]
fn trap_and_assert_name_kernel_block_and_thread() {
    let m = hard();
    let mut input: Vec<i32> = (0..200).map(|i| i % 7).collect();
    input[77] = 13; // block 1, thread 13 with 64-thread blocks
    let (bi, bo) = (buf_i32(&input), buf_i32(&vec![0; 200]));
    let e = launch_err(
        &m,
        "check_values",
        d3(4, 1, 1),
        d3(64, 1, 1),
        0,
        vec![ptr(&bi), ptr(&bo), i32a(200)],
    );
    assert!(
        e.starts_with("kernel check_values failed in block (1, 0, 0), thread (13, 0, 0): assertion `v != 13` failed at"),
        "{e}"
    );
    assert!(e.contains("hard_cases.cu"), "{e}");
    input[77] = 1;
    input[150] = 99; // block 2, thread 22
    let bi = buf_i32(&input);
    let e = launch_err(
        &m,
        "check_values",
        d3(4, 1, 1),
        d3(64, 1, 1),
        0,
        vec![ptr(&bi), ptr(&bo), i32a(200)],
    );
    assert_eq!(
        e,
        "kernel check_values failed in block (2, 0, 0), thread (22, 0, 0): trap instruction executed"
    );
    // The module still works after a failed launch.
    input[150] = 2;
    let bi = buf_i32(&input);
    launch(
        &m,
        "check_values",
        d3(4, 1, 1),
        d3(64, 1, 1),
        0,
        vec![ptr(&bi), ptr(&bo), i32a(200)],
    );
    assert_eq!(
        get_i32(&bo),
        input.iter().map(|v| v * 2).collect::<Vec<_>>()
    );

    // Through the binary: CUDA's assertion line on stderr, exit status 1.
    let d = tempfile::tempdir().unwrap();
    let mut input: Vec<i32> = vec![0; 64];
    input[5] = 13;
    let p = d.path().join("in");
    std::fs::write(
        &p,
        input
            .iter()
            .flat_map(|v| v.to_le_bytes())
            .collect::<Vec<u8>>(),
    )
    .unwrap();
    let (code, _, err) = run_cli(&[
        &hard_path(),
        "--kernel",
        "check_values",
        "--block",
        "64",
        &format!("--arg=@{}", p.display()),
        "--arg=zeros:256",
        "--arg=s32:64",
    ]);
    assert_eq!(code, 1);
    assert!(
        err.contains("block: [0,0,0], thread: [5,0,0] Assertion `v != 13` failed."),
        "{err}"
    );
}

/// Runs the binary with a watchdog: a hang fails the test instead of stalling it.
fn run_cli_within(args: &[&str], limit: Duration) -> (i32, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_ptx2llvm"))
        .arg("run")
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let t0 = Instant::now();
    loop {
        if let Some(st) = child.try_wait().unwrap() {
            let mut err = String::new();
            use std::io::Read;
            child
                .stderr
                .take()
                .unwrap()
                .read_to_string(&mut err)
                .unwrap();
            return (st.code().unwrap_or(-1), err);
        }
        if t0.elapsed() > limit {
            let _ = child.kill();
            panic!("`ptx2llvm run {}` hung for {limit:?}", args.join(" "));
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn barrier_deadlock_is_an_error_not_a_hang() {
    let (code, err) = run_cli_within(
        &[
            &hard_path(),
            "--kernel",
            "deadlock",
            "--grid",
            "3",
            "--block",
            "64",
            "--arg=zeros:256",
        ],
        Duration::from_secs(60),
    );
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains("error: kernel deadlock deadlocked in block ("),
        "{err}"
    );
    let m = hard();
    let b = Buffer::zeroed(256);
    let e = launch_err(&m, "deadlock", d3(1, 1, 1), d3(64, 1, 1), 0, vec![ptr(&b)]);
    assert!(
        e.starts_with("kernel deadlock deadlocked in block (0, 0, 0): "),
        "{e}"
    );
    assert!(e.contains("barrier 0") && e.contains("barrier 1"), "{e}");
}

#[test]
fn named_barriers_producer_consumer() {
    let m = hard();
    let rounds = 5usize;
    let input: Vec<i32> = (0..32 * rounds as i32).map(|i| i * 3 + 1).collect();
    let (bi, bo) = (buf_i32(&input), buf_i32(&vec![0; 32 * rounds]));
    launch(
        &m,
        "producer_consumer",
        d3(2, 1, 1),
        d3(64, 1, 1),
        0,
        vec![ptr(&bi), ptr(&bo), i32a(rounds as i32)],
    );
    let want: Vec<i32> = (0..rounds)
        .flat_map(|r| {
            let input = &input;
            (0..32).map(move |c| input[r * 32 + (c + 1) % 32] * 10 + r as i32)
        })
        .collect();
    assert_eq!(get_i32(&bo), want);
}

#[test]
fn inter_block_flag_with_concurrent_workers() {
    // Block 1 spins until block 0 sets a flag: it needs both blocks to run at once, which the
    // runtime gives with as many workers as blocks (one OS thread each).
    let m = hard();
    let (flag, out) = (buf_i32(&[0]), buf_i32(&[0, 0]));
    let cfg = LaunchConfig {
        grid: [2, 1, 1],
        block: [32, 1, 1],
        workers: Some(2),
        ..LaunchConfig::default()
    };
    let mut args = vec![ptr(&flag), ptr(&out)];
    m.launch_with("spin_flag", &cfg, &mut args).unwrap();
    assert_eq!(get_i32(&out), [42, 43]);
}

// The handler redirects the faulting thread on x86-64 Linux; elsewhere it prints the message
// and exits.
#[cfg(all(target_arch = "x86_64", target_os = "linux"))]
#[test]
fn invalid_memory_access_is_reported() {
    // In process: the launch fails with the faulting block and thread; the process goes on.
    let m = hard();
    let e = launch_err(
        &m,
        "store_through",
        d3(3, 1, 1),
        d3(32, 1, 1),
        0,
        vec![Arg::Pointer(0), i32a(5)],
    );
    assert_eq!(
        e,
        "kernel store_through failed in block (1, 0, 0), thread (3, 0, 0): invalid memory \
         access: write to address 0x0 (a null pointer)"
    );
    let e = launch_err(
        &m,
        "store_through",
        d3(3, 1, 1),
        d3(32, 1, 1),
        0,
        vec![Arg::Pointer(0xdead_0000_0000_0000), i32a(5)],
    );
    assert!(
        e.ends_with("invalid memory access: a non-canonical address (general protection fault)"),
        "{e}"
    );
    let e = launch_err(
        &m,
        "store_through",
        d3(3, 1, 1),
        d3(32, 1, 1),
        0,
        vec![Arg::Pointer(0x18), i32a(5)],
    );
    assert!(
        e.ends_with("invalid memory access: write to address 0x18 (a null pointer)"),
        "{e}"
    );
    // A valid launch afterwards.
    let b = buf_i32(&[0]);
    launch(
        &m,
        "store_through",
        d3(3, 1, 1),
        d3(32, 1, 1),
        0,
        vec![ptr(&b), i32a(5)],
    );
    assert_eq!(get_i32(&b), [5]);
    // Through the binary.
    let (code, _, err) = run_cli(&[
        &hard_path(),
        "--kernel",
        "store_through",
        "--grid",
        "2",
        "--block",
        "8",
        "--arg=u64:0",
        "--arg=s32:1",
    ]);
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains(
            "kernel store_through failed in block (1, 0, 0), thread (3, 0, 0): invalid memory access: write to address 0x0 (a null pointer)"
        ),
        "{err}"
    );
}

/// Branches on `%tid.x` against a constant after barriers: the thread-loop code computes the
/// taken threads as an interval instead of probing each thread (`analysis::TidRange`); every
/// comparison form (lt/le/gt/ge, signed and unsigned, constant first, negated guard, never
/// and always taken, `== 0`/`!= 0`, `%tid.x >> k`), 1-D and 2-D blocks, and threads that
/// exited before.
#[test]
fn thread_index_branches_after_barriers() {
    let body = |early_exit: bool| {
        format!(
            r#"
.visible .entry k(.param .u64 out)
{{
    .reg .pred %p<10>;
    .reg .b32 %r<10>;
    .reg .b64 %rd<4>;
    ld.param.u64 %rd1, [out];
    mov.u32 %r1, %tid.x;
    mov.u32 %r2, %tid.y;
    mov.u32 %r3, %ntid.x;
    mad.lo.u32 %r4, %r2, %r3, %r1;
    mul.wide.u32 %rd2, %r4, 4;
    add.u64 %rd3, %rd1, %rd2;
    mov.u32 %r5, 0;
    shr.u32 %r6, %r1, 3;
    {exit}
    bar.sync 0;
    setp.gt.u32 %p1, %r1, 37;
    @%p1 bra L1;
    or.b32 %r5, %r5, 1;
L1:
    bar.sync 0;
    setp.lt.s32 %p2, %r1, -3;
    @%p2 bra L2;
    or.b32 %r5, %r5, 2;
L2:
    bar.sync 0;
    setp.le.u32 %p3, 10, %r1;
    @!%p3 bra L3;
    or.b32 %r5, %r5, 4;
L3:
    bar.sync 0;
    setp.ge.u32 %p4, %r1, 1000;
    @%p4 bra L4;
    or.b32 %r5, %r5, 8;
L4:
    bar.sync 0;
    setp.lt.u32 %p5, %r1, 1;
    @%p5 bra L5;
    or.b32 %r5, %r5, 16;
L5:
    bar.sync 0;
    setp.ne.u32 %p6, %r6, 0;
    @%p6 bra L6;
    or.b32 %r5, %r5, 32;
L6:
    bar.sync 0;
    setp.eq.s32 %p7, %r1, 0;
    @%p7 bra L7;
    or.b32 %r5, %r5, 64;
L7:
    bar.sync 0;
    setp.gt.u32 %p8, %r6, 2;
    @!%p8 bra L8;
    or.b32 %r5, %r5, 128;
L8:
    bar.sync 0;
    st.global.u32 [%rd3], %r5;
    ret;
}}"#,
            exit = if early_exit {
                "setp.ge.u32 %p9, %r1, 45;\n    @%p9 bra END;"
            } else {
                ""
            }
        )
    };
    let header = ".version 8.0\n.target sm_80\n.address_size 64\n";
    for early_exit in [false, true] {
        let mut src = format!("{header}{}", body(early_exit));
        if early_exit {
            // The early exit jumps to a `ret` at the end.
            src = src.replace("    ret;\n}", "END:\n    ret;\n}");
        }
        let m = load_src(&src);
        for (bx, by) in [(50u32, 1u32), (64, 2), (16, 4), (100, 1)] {
            let n = (bx * by) as usize;
            let out = buf_u32(&vec![0xdead; n]);
            launch(&m, "k", d3(3, 1, 1), d3(bx, by, 1), 0, vec![ptr(&out)]);
            let want: Vec<u32> = (0..n)
                .map(|i| {
                    let x = (i as u32) % bx;
                    if early_exit && x >= 45 {
                        return 0xdead;
                    }
                    let mut v = 2 | 8;
                    if x <= 37 {
                        v |= 1;
                    }
                    if x >= 10 {
                        v |= 4;
                    }
                    if x >= 1 {
                        v |= 16;
                    }
                    if x < 8 {
                        v |= 32;
                    }
                    if x != 0 {
                        v |= 64;
                    }
                    if x >= 24 {
                        v |= 128;
                    }
                    v
                })
                .collect();
            assert_eq!(
                get_u32(&out),
                want,
                "block ({bx}, {by}), early exit {early_exit}"
            );
        }
    }
}

/// Bounds checks on the global index `%ctaid.x * %ntid.x + %tid.x` against a parameter (the
/// `if (i < n)` of every elementwise kernel): the thread-loop code computes the threads inside
/// from `n` instead of probing each; signed and unsigned, either operand order, `mad` or
/// `mul` + `add`, with and without a barrier before, `n` inside a block, at a block edge,
/// zero and past the grid.
#[test]
fn global_index_bounds_checks() {
    let kernel = |name: &str, index: &str, check: &str, barrier: bool| {
        format!(
            r#"
.visible .entry {name}(.param .u64 out, .param .u32 n)
{{
    .reg .pred %p<3>;
    .reg .b32 %r<10>;
    .reg .b64 %rd<4>;
    ld.param.u64 %rd1, [out];
    ld.param.u32 %r2, [n];
    mov.u32 %r3, %ctaid.x;
    mov.u32 %r4, %ntid.x;
    mov.u32 %r5, %tid.x;
    {index}
    {bar}
    {check}
    @%p1 bra END;
    mul.wide.u32 %rd2, %r1, 4;
    add.u64 %rd3, %rd1, %rd2;
    mad.lo.u32 %r7, %r1, 3, 1;
    st.global.u32 [%rd3], %r7;
END:
    ret;
}}"#,
            bar = if barrier { "bar.sync 0;" } else { "" }
        )
    };
    let mad = "mad.lo.s32 %r1, %r3, %r4, %r5;";
    let muladd = "mul.lo.u32 %r6, %r4, %r3;\n    add.u32 %r1, %r5, %r6;";
    // (name, index, check, barrier, how many elements are written for n)
    type Case = (
        &'static str,
        &'static str,
        &'static str,
        bool,
        fn(u32) -> u32,
    );
    let cases: [Case; 5] = [
        ("ge_s", mad, "setp.ge.s32 %p1, %r1, %r2;", false, |n| n),
        (
            "lt_u_swapped",
            muladd,
            "setp.lt.u32 %p1, %r2, %r1;",
            false,
            |n| n + 1,
        ),
        (
            "le_u_swapped",
            mad,
            "setp.le.u32 %p1, %r2, %r1;",
            true,
            |n| n,
        ),
        ("gt_s", muladd, "setp.gt.s32 %p1, %r1, %r2;", true, |n| {
            n + 1
        }),
        (
            "lt_s_negated",
            mad,
            "setp.lt.s32 %p2, %r1, %r2;\n    not.pred %p1, %p2;",
            false,
            |n| n,
        ),
    ];
    let mut src = String::from(".version 8.0\n.target sm_80\n.address_size 64\n");
    for (name, index, check, barrier, _) in &cases {
        src.push_str(&kernel(name, index, check, *barrier));
    }
    let m = load_src(&src);
    let (grid, block) = (5u32, 64u32);
    let total = (grid * block) as usize;
    for (name, _, _, _, written) in &cases {
        for n in [0u32, 1, 63, 64, 150, 319, 320, 1000] {
            let out = buf_u32(&vec![u32::MAX; total]);
            launch(
                &m,
                name,
                d3(grid, 1, 1),
                d3(block, 1, 1),
                0,
                vec![ptr(&out), u32a(n)],
            );
            let k = written(n) as usize;
            let want: Vec<u32> = (0..total)
                .map(|i| if i < k { 3 * i as u32 + 1 } else { u32::MAX })
                .collect();
            assert_eq!(get_u32(&out), want, "{name} with n = {n}");
        }
    }
}
