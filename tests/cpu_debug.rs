//! Debugging and profiling kernels on the cpu target, end to end, on the shipped example
//! `examples/debug/kernel.ptx` (nvcc's PTX of `kernel.cu` with `.loc` line info):
//!
//! - `gdb` in batch mode stops at a CUDA source line of a JIT-compiled kernel (MCJIT registers
//!   its code with gdb's JIT interface), prints PTX registers by name, steps, and
//!   `scripts/ptx2llvm-gdb.py` names the CUDA block and thread being run; the same session is
//!   README.md's worked example, which this file holds to the commands and outputs it shows;
//! - `PTX2LLVM_PERF_JITDUMP=1` writes a perf jitdump whose debug records map the kernel's code
//!   to `kernel.cu` lines, and `perf record` + `perf inject --jit` + `perf report --sort srcline`
//!   attribute the kernel's time to the loop's lines;
//! - `run --serial` runs CTAs in order on one worker.
//!
//! `scripts/setup.sh` installs gdb and linux-perf; where one is genuinely missing (or perf may
//! not sample in this container) the tests that need it say so and return.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_ptx2llvm")
}

/// The README's debugging session: `ptx2llvm` followed by these arguments, run from the
/// repository root.
const RUN: &[&str] = &[
    "run",
    "examples/debug/kernel.ptx",
    "--kernel",
    "scale",
    "--grid",
    "2",
    "--block",
    "4",
    "--arg",
    "zeros:32",
    "--arg",
    "f32:2.5",
    "--arg",
    "s32:8",
    "--serial",
    "-g",
    "-O0",
];

/// The gdb commands of the README's session, in order.
const GDB: &[&str] = &[
    "set breakpoint pending on",
    "break kernel.cu:12 if $cuda_ctaid(0) == 1 && $cuda_tid(0) == 2",
    "run",
    "cuda-thread",
    "print r3",
    "print f2",
    "next",
    "print f3",
];

/// What that session prints, in order (the README shows these lines).
const GDB_SAYS: &[&str] = &[
    "kernel.cu:12",
    "block (1, 0, 0) thread (2, 0, 0) of grid (2, 1, 1) x block (4, 1, 1)",
    "$1 = 6",
    "$2 = 6",
    "13\t    printf(",
    "$3 = 16",
];

/// The README's profiling session: `ptx2llvm` followed by these arguments, under
/// `PTX2LLVM_PERF_JITDUMP=1 perf record -k 1`.
const PROFILE: &[&str] = &[
    "run",
    "examples/debug/kernel.ptx",
    "--kernel",
    "series",
    "--grid",
    "64",
    "--block",
    "256",
    "--arg",
    "zeros:65536",
    "--arg",
    "s32:16384",
    "--arg",
    "s32:10000",
];

fn have(tool: &str) -> bool {
    Command::new(tool)
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// Runs gdb in batch mode on `ptx2llvm ARGS` with the gdb script loaded and `cmds` given as
/// `-ex` commands, from the repository root; returns everything it printed.
fn gdb(cmds: &[&str], args: &[&str], env: &[(&str, &str)]) -> String {
    let mut c = Command::new("gdb");
    c.current_dir(root())
        .args(["-nx", "-q", "-batch", "-x", "scripts/ptx2llvm-gdb.py"]);
    for cmd in cmds {
        c.args(["-ex", cmd]);
    }
    // Whatever happens, end the process instead of leaving gdb at a prompt.
    c.args(["-ex", "kill"]).arg("--args").arg(bin()).args(args);
    for (k, v) in env {
        c.env(k, v);
    }
    let o = c.output().expect("run gdb");
    text(&o)
}

/// Each of `wanted` occurs in `out`, in order.
fn in_order(out: &str, wanted: &[&str]) {
    let mut at = 0;
    for w in wanted {
        match out[at..].find(w) {
            Some(i) => at += i + w.len(),
            None => panic!("expected `{w}` (after byte {at}) in:\n{out}"),
        }
    }
}

#[test]
fn gdb_stops_at_a_cuda_line_and_prints_ptx_registers() {
    if !have("gdb") {
        eprintln!("SKIPPED: gdb is not installed (scripts/setup.sh installs Debian's gdb)");
        return;
    }
    let out = gdb(GDB, RUN, &[]);
    // The stop: the source line, then the thread of the condition, then the registers: at
    // line 12 `i` (%r3) is 6 and `(float)i` (%f2) 6.0; after `next`, %f3 = 2.5 * 6 + 1.
    in_order(&out, GDB_SAYS);
    assert!(
        out.contains("Breakpoint 1, scale"),
        "the breakpoint is reported in kernel `scale`:\n{out}"
    );
}

#[test]
fn readme_shows_the_tested_session() {
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    let section = readme
        .split("## Debugging and profiling kernels on the CPU")
        .nth(1)
        .expect("README has a section `Debugging and profiling kernels on the CPU`");
    let run = format!("ptx2llvm {}", RUN.join(" "));
    assert!(section.contains(&run), "README shows `{run}`");
    for cmd in GDB {
        let line = format!("(gdb) {cmd}\n");
        assert!(
            section.contains(&line),
            "README shows `{}`",
            line.trim_end()
        );
    }
    for said in GDB_SAYS {
        assert!(section.contains(said), "README shows gdb's `{said}`");
    }
    let profile = format!("ptx2llvm {}", PROFILE.join(" "));
    assert!(section.contains(&profile), "README shows `{profile}`");
}

#[test]
fn gdb_breaks_in_a_kernel_by_name_in_the_cuda_thread_asked_for() {
    if !have("gdb") {
        eprintln!("SKIPPED: gdb is not installed (scripts/setup.sh installs Debian's gdb)");
        return;
    }
    // Without -g: the kernel's entry point by name (the line tables of the `.loc`s are there
    // all the same), the CUDA thread picked by the script's convenience functions.
    let args: Vec<&str> = RUN.iter().copied().filter(|a| *a != "-g").collect();
    let out = gdb(
        &[
            "set breakpoint pending on",
            "break scale if $cuda_ctaid(0) == 1 && $cuda_tid(0) == 3",
            "run",
            "cuda-thread",
            "print $cuda_tid(0) + 10 * $cuda_ctaid(0)",
        ],
        &args,
        &[("PTX2LLVM_CPU_MODE", "coroutine")],
    );
    in_order(
        &out,
        &[
            "block 1 thread 2: y[6] = 16",
            "Breakpoint 1",
            "scale () at ",
            "kernel.cu:8",
            "block (1, 0, 0) thread (3, 0, 0) of grid (2, 1, 1) x block (4, 1, 1)",
            "$1 = 13",
        ],
    );
    assert!(
        !out.contains("block 1 thread 3: y[7]"),
        "stopped before thread (3, 0, 0) of block 1 printed:\n{out}"
    );
}

#[test]
fn gdb_stops_at_a_cuda_line_of_a_thread_loop_kernel_without_g() {
    if !have("gdb") {
        eprintln!("SKIPPED: gdb is not installed (scripts/setup.sh installs Debian's gdb)");
        return;
    }
    // The default execution: no -g, -O2, `scale` as thread loops (`scale.fis` around
    // `scale.step`, inlined there). The `.loc` line tables alone let gdb stop at line 12, once
    // per CUDA thread (each stop comes before that thread's printf), in the inlined body, with
    // the block known and the thread not (thread loops share one context per CTA).
    let args: Vec<&str> = RUN
        .iter()
        .copied()
        .filter(|a| !matches!(*a, "-g" | "-O0"))
        .collect();
    let out = gdb(
        &[
            "set breakpoint pending on",
            "break kernel.cu:12",
            "run",
            "backtrace 3",
            "cuda-thread",
            "continue",
            "continue",
        ],
        &args,
        &[],
    );
    in_order(
        &out,
        &[
            "Breakpoint 1",
            "scale.step () at ",
            "kernel.cu:12",
            "12\t    y[i] = v + 1.0f;",
            "#0  scale.step () at ",
            "scale.fis",
            "block (0, 0, 0) thread unknown (the kernel runs as thread loops",
            "block 0 thread 0: y[0] = 1",
            "kernel.cu:12",
            "block 0 thread 1: y[1] = 3.5",
            "kernel.cu:12",
        ],
    );
    assert!(
        !out.contains("block 0 thread 2: y[2]"),
        "stopped at each thread's line 12:\n{out}"
    );
}

#[test]
fn gdb_stops_at_a_cuda_line_of_a_warp_engine_kernel() {
    // `series` has `.loc` lines and takes the warp engine when asked (without -g): its warp
    // function `series.simd.w` carries them, so a line breakpoint in the loop stops there,
    // once per warp and iteration.
    let args = [
        "run",
        "examples/debug/kernel.ptx",
        "--kernel",
        "series",
        "--grid",
        "2",
        "--block",
        "64",
        "--arg",
        "zeros:512",
        "--arg",
        "s32:128",
        "--arg",
        "s32:10",
        "--serial",
    ];
    let o = Command::new(bin())
        .current_dir(root())
        .args(args)
        .arg("--dump-plan")
        .env("PTX2LLVM_CPU_MODE", "warp")
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o));
    assert!(
        text(&o).contains("plan series: warp"),
        "series takes the warp engine:\n{}",
        text(&o)
    );
    if !have("gdb") {
        eprintln!("SKIPPED: gdb is not installed (scripts/setup.sh installs Debian's gdb)");
        return;
    }
    let out = gdb(
        &[
            "set breakpoint pending on",
            "break kernel.cu:24",
            "run",
            "backtrace 2",
            "continue",
        ],
        &args,
        &[("PTX2LLVM_CPU_MODE", "warp")],
    );
    in_order(
        &out,
        &[
            "Breakpoint 1",
            "kernel.cu:24",
            "24\t    acc = acc * 0.999f + sqrtf(v);",
            "#0  series.simd",
            "#1  ",
            "series",
            "Breakpoint 1",
            "kernel.cu:24",
        ],
    );
}

#[test]
fn gdb_steps_hand_written_ptx_by_its_own_lines() {
    if !have("gdb") {
        eprintln!("SKIPPED: gdb is not installed (scripts/setup.sh installs Debian's gdb)");
        return;
    }
    // examples/saxpy.ptx has no `.loc`: with -g its own lines are the source. Line 54 is its
    // `fma.rn.f32 %f4, %f1, %f2, %f3`; thread 5 has x[5] = 5, so %f4 = 2 * 5 + 0 after it.
    let src = std::fs::read_to_string(root().join("examples/saxpy.ptx")).unwrap();
    assert!(src.lines().nth(53).unwrap().contains("fma.rn.f32"));
    let dir = tempfile::tempdir().unwrap();
    let x = dir.path().join("x.bin");
    let xs: Vec<u8> = (0..8).flat_map(|i| (i as f32).to_le_bytes()).collect();
    std::fs::write(&x, xs).unwrap();
    let xarg = format!("@{}", x.display());
    let out = gdb(
        &[
            "set breakpoint pending on",
            "break saxpy.ptx:54 if $cuda_tid(0) == 5",
            "run",
            "print r4",
            "print f2",
            "next",
            "print f4",
        ],
        &[
            "run",
            "examples/saxpy.ptx",
            "--kernel",
            "saxpy",
            "--block",
            "8",
            "--arg",
            &xarg,
            "--arg",
            "zeros:32",
            "--arg",
            "f32:2",
            "--arg",
            "u32:8",
            "--serial",
            "-g",
            "-O0",
        ],
        &[],
    );
    in_order(
        &out,
        &[
            "Breakpoint 1, saxpy () at ",
            "saxpy.ptx:54",
            "$1 = 5",
            "$2 = 5",
            "55\t\tst.global.f32",
            "$3 = 10",
        ],
    );
}

#[test]
fn cuda_thread_outside_a_kernel_says_so() {
    if !have("gdb") {
        eprintln!("SKIPPED: gdb is not installed (scripts/setup.sh installs Debian's gdb)");
        return;
    }
    let out = gdb(
        &[
            "set breakpoint pending on",
            "break ptx2llvm::runtime::launch::launch_code",
            "run",
            "cuda-thread",
            "print $cuda_tid(0)",
        ],
        RUN,
        &[],
    );
    in_order(
        &out,
        &[
            "Breakpoint 1, ptx2llvm::runtime::launch::launch_code",
            "this host thread is not running a CUDA thread",
            "$1 = -1",
        ],
    );
}

/// One record of a perf jitdump (tools/perf/Documentation/jitdump-specification.txt).
#[derive(Debug)]
enum JitRecord {
    /// `JIT_CODE_LOAD`: a function's name and address.
    Load {
        name: String,
        addr: u64,
    },
    /// `JIT_CODE_DEBUG_INFO`: (file, line) of each address range of a function.
    Debug {
        lines: Vec<(String, u32)>,
    },
    Other,
}

fn parse_jitdump(b: &[u8]) -> Vec<JitRecord> {
    let u32_at = |o: usize| u32::from_le_bytes(b[o..o + 4].try_into().unwrap());
    let u64_at = |o: usize| u64::from_le_bytes(b[o..o + 8].try_into().unwrap());
    let cstr = |o: usize| {
        let end = o + b[o..].iter().position(|&c| c == 0).unwrap();
        (String::from_utf8_lossy(&b[o..end]).into_owned(), end + 1)
    };
    assert_eq!(u32_at(0), 0x4A69_5444, "jitdump magic `JiTD`");
    let mut at = u32_at(8) as usize;
    let mut out = Vec::new();
    while at + 16 <= b.len() {
        let (id, size) = (u32_at(at), u32_at(at + 4) as usize);
        assert!(
            size >= 16 && at + size <= b.len(),
            "record at {at} of size {size}"
        );
        let body = at + 16;
        out.push(match id {
            0 => JitRecord::Load {
                addr: u64_at(body + 16),
                name: cstr(body + 40).0,
            },
            2 => {
                let n = u64_at(body + 8) as usize;
                let mut p = body + 16;
                let mut lines = Vec::new();
                for _ in 0..n {
                    let line = u32_at(p + 8);
                    let (file, next) = cstr(p + 16);
                    lines.push((file, line));
                    p = next;
                }
                JitRecord::Debug { lines }
            }
            _ => JitRecord::Other,
        });
        at += size;
    }
    out
}

/// Runs the profiling example (fewer steps) with a jitdump into a fresh directory and returns
/// the dump's records.
fn jitdump_of_series(dir: &Path) -> Vec<JitRecord> {
    let mut args: Vec<&str> = PROFILE.to_vec();
    *args.last_mut().unwrap() = "s32:10";
    let o = Command::new(bin())
        .current_dir(root())
        .args(&args)
        .env("PTX2LLVM_PERF_JITDUMP", "1")
        .env("JITDUMPDIR", dir)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o));
    let dumps: Vec<PathBuf> = walk(dir)
        .into_iter()
        .filter(|p| p.extension().is_some_and(|e| e == "dump"))
        .collect();
    assert_eq!(dumps.len(), 1, "one jit-PID.dump under {}", dir.display());
    parse_jitdump(&std::fs::read(&dumps[0]).unwrap())
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else {
            out.push(p);
        }
    }
    out
}

#[test]
fn perf_jitdump_maps_kernel_code_to_cuda_lines() {
    let dir = tempfile::tempdir().unwrap();
    let recs = jitdump_of_series(dir.path());
    let loads: Vec<&str> = recs
        .iter()
        .filter_map(|r| match r {
            JitRecord::Load { name, addr } if *addr != 0 => Some(name.as_str()),
            _ => None,
        })
        .collect();
    assert!(
        loads.iter().any(|n| n.starts_with("series")),
        "a code-load record for kernel `series`: {loads:?}"
    );
    let lines: Vec<&(String, u32)> = recs
        .iter()
        .flat_map(|r| match r {
            JitRecord::Debug { lines } => lines.iter().collect(),
            _ => Vec::new(),
        })
        .collect();
    // The loop body (lines 24 and 25) and the store after it (27) have machine code.
    for want in [24, 25, 27] {
        assert!(
            lines
                .iter()
                .any(|(f, l)| f.ends_with("kernel.cu") && *l == want),
            "a debug-info entry for kernel.cu:{want}: {lines:?}"
        );
    }
}

#[test]
fn perf_jitdump_is_off_by_default() {
    let dir = tempfile::tempdir().unwrap();
    let o = Command::new(bin())
        .current_dir(root())
        .args(RUN.iter().filter(|a| **a != "-g"))
        .env_remove("PTX2LLVM_PERF_JITDUMP")
        .env("JITDUMPDIR", dir.path())
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o));
    assert!(
        walk(dir.path()).is_empty(),
        "nothing written without the variable"
    );
}

#[test]
fn perf_reports_kernel_time_by_cuda_line() {
    if !have("perf") {
        eprintln!("SKIPPED: perf is not installed (scripts/setup.sh installs linux-perf)");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let data = d.join("perf.data");
    let o = Command::new("perf")
        .current_dir(root())
        .args(["record", "-q", "-k", "1", "-o"])
        .arg(&data)
        .arg(bin())
        .args(PROFILE)
        .env("PTX2LLVM_PERF_JITDUMP", "1")
        .env("JITDUMPDIR", d)
        .output()
        .unwrap();
    if !o.status.success() && !data.exists() {
        // Containers often forbid perf_event_open (seccomp, perf_event_paranoid).
        eprintln!("SKIPPED: `perf record` cannot sample here:\n{}", text(&o));
        return;
    }
    assert!(o.status.success(), "{}", text(&o));
    let jit = d.join("perf.jit.data");
    let o = Command::new("perf")
        .args(["inject", "--jit", "-i"])
        .arg(&data)
        .arg("-o")
        .arg(&jit)
        .env("JITDUMPDIR", d)
        .output()
        .unwrap();
    assert!(o.status.success(), "perf inject: {}", text(&o));
    let o = Command::new("perf")
        .args(["report", "--stdio", "--sort", "srcline", "-i"])
        .arg(&jit)
        .output()
        .unwrap();
    assert!(o.status.success(), "perf report: {}", text(&o));
    let report = String::from_utf8_lossy(&o.stdout).into_owned();
    // The loop's two lines hold most of the kernel's samples: over 60% of those attributed to
    // kernel.cu at all (line 0 is where LLVM lost a location), and the kernel a visible part
    // of the process (the rest is compilation and start-up: on the warp engine the kernel
    // takes ~15% of this short run, on thread loops over half).
    let share = |line: &str| -> f64 {
        report
            .lines()
            .filter(|l| l.trim_end().ends_with(line))
            .filter_map(|l| {
                l.split_whitespace()
                    .next()?
                    .trim_end_matches('%')
                    .parse::<f64>()
                    .ok()
            })
            .sum()
    };
    let (l24, l25) = (share("kernel.cu:24"), share("kernel.cu:25"));
    let kernel: f64 = (0..=40).map(|n| share(&format!("kernel.cu:{n}"))).sum();
    assert!(
        l24 > 0.0 && l25 > 0.0 && l24 + l25 > 0.6 * kernel && kernel > 5.0,
        "kernel.cu:24 {l24}% and kernel.cu:25 {l25}% of {kernel}% in kernel.cu in:\n{report}"
    );
}

#[test]
fn serial_runs_ctas_in_order_on_one_worker() {
    // Without --serial, blocks run on as many workers as there are cores and their printf
    // lines interleave as they finish; with it, block 0's threads come first, in order.
    let o = Command::new(bin())
        .current_dir(root())
        .args(RUN.iter().filter(|a| **a != "-g"))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o));
    let lines: Vec<String> = (0..8)
        .map(|i| {
            format!(
                "block {} thread {}: y[{i}] = {}",
                i / 4,
                i % 4,
                2.5 * i as f64 + 1.0
            )
        })
        .collect();
    assert_eq!(String::from_utf8_lossy(&o.stdout), lines.join("\n") + "\n");
}
