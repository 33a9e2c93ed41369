//! Robustness of the front end on broken input: every corpus file truncated at many points
//! and mutated at random (seeded, deterministic) must go through `parse`, `check::check` and
//! the printer without a panic or a hang; a truncated file that cannot be valid must get at
//! least one diagnostic; every diagnostic's span must lie inside the input, on character
//! boundaries, and render. A module that parses cleanly must print to text that parses
//! cleanly again. Also: `ptx2llvm check` on garbage files exits 1 (never a panic's 101) within
//! a few seconds. Inputs that once broke the parser are kept as regression cases.
//! `PTX2LLVM_MUTANTS=N` sets the number of mutants per file (default 30) for longer runs;
//! failing inputs are saved under `target/robustness-failures/`.

mod common;

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{mpsc, Arc, Mutex};
use std::time::{Duration, Instant};

use ptx2llvm::syntax::diag::Diagnostic;
use ptx2llvm::syntax::printer::print_module;

/// xorshift64*: a small deterministic PRNG, so every run tries the same inputs.
struct Rng(u64);

impl Rng {
    fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    /// Uniform in `0..n` (`n > 0`).
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

/// FNV-1a of a path, so each file has its own seed whatever the order of the corpus.
fn seed_of(name: &str) -> u64 {
    name.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
        (h ^ b as u64).wrapping_mul(0x100_0000_01b3)
    })
}

/// What a mutation may insert: PTX punctuation, digits, letters, whitespace, control bytes
/// and non-ASCII characters (the input is decoded UTF-8-lossy afterwards).
const INSERTS: &[&str] = &[
    "{",
    "}",
    "[",
    "]",
    ";",
    ".",
    "%",
    "@",
    "\"",
    "(",
    ")",
    ",",
    ":",
    "<",
    ">",
    "|",
    "!",
    "-",
    "+",
    "*",
    "/",
    "=",
    "?",
    "~",
    "_",
    "$",
    "0",
    "1",
    "9",
    "0x",
    "0f",
    "0d",
    "a",
    "z",
    " ",
    "\t",
    "\n",
    "\r",
    "\0",
    "\x7f",
    "é",
    "€",
    "😀",
    "\u{feff}",
    "/*",
    "*/",
    "//",
    ".reg",
    ".b32",
    "%r1",
    "@%p1",
    "{{",
    "}}",
    ".entry",
    ".version",
    "0f123",
    "99999999999999999999",
];

fn mutate(src: &[u8], rng: &mut Rng) -> Vec<u8> {
    let mut b = src.to_vec();
    let ops = 1 + rng.below(8);
    for _ in 0..ops {
        let at = rng.below(b.len() + 1);
        match rng.below(6) {
            // insert a token-ish string
            0 | 1 => {
                let s = INSERTS[rng.below(INSERTS.len())];
                b.splice(at..at, s.bytes());
            }
            // insert a random byte (may break UTF-8 on purpose)
            2 => b.insert(at, rng.next() as u8),
            // delete a short range
            3 => {
                let n = (1 + rng.below(16)).min(b.len() - at);
                b.drain(at..at + n);
            }
            // replace one byte
            4 if at < b.len() => b[at] = rng.next() as u8,
            // duplicate a chunk somewhere else
            _ => {
                let n = rng.below(64).min(b.len() - at);
                let chunk: Vec<u8> = b[at..at + n].to_vec();
                let to = rng.below(b.len() + 1);
                b.splice(to..to, chunk);
            }
        }
    }
    b
}

/// Whether a prefix of a valid module certainly is not valid itself: it ends inside a
/// `{ … }` block, a block comment or a string, or has no `.target` yet.
fn certainly_invalid(prefix: &str) -> bool {
    let b = prefix.as_bytes();
    let mut depth = 0i64;
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'/' if b.get(i + 1) == Some(&b'/') => {
                while i < b.len() && b[i] != b'\n' {
                    i += 1;
                }
            }
            b'/' if b.get(i + 1) == Some(&b'*') => match prefix[i + 2..].find("*/") {
                Some(j) => i += 2 + j + 1,
                None => return true,
            },
            b'"' => {
                i += 1;
                while i < b.len() && b[i] != b'"' {
                    if b[i] == b'\\' {
                        i += 1;
                    }
                    i += 1;
                }
                if i >= b.len() {
                    return true;
                }
            }
            b'{' => depth += 1,
            b'}' => depth -= 1,
            _ => {}
        }
        i += 1;
    }
    depth > 0 || !prefix.contains(".target")
}

/// Checks the invariants that every diagnostic must satisfy; returns the first violation.
fn check_diags(src: &str, diags: &[Diagnostic], stage: &str) -> Result<(), String> {
    for d in diags {
        let (s, e) = (d.span.start as usize, d.span.end as usize);
        if s > e || e > src.len() {
            return Err(format!(
                "{stage} diagnostic `{}` has span {s}..{e} outside the input (length {})",
                d.message,
                src.len()
            ));
        }
        if !src.is_char_boundary(s) || !src.is_char_boundary(e) {
            return Err(format!(
                "{stage} diagnostic `{}` has span {s}..{e} off a character boundary",
                d.message
            ));
        }
        if d.message.is_empty() {
            return Err(format!(
                "{stage} diagnostic at {s}..{e} has an empty message"
            ));
        }
        let text = catch_unwind(|| d.render("input.ptx", src)).map_err(|_| {
            format!(
                "{stage} diagnostic `{}` ({s}..{e}): render panicked",
                d.message
            )
        })?;
        if !text.starts_with("input.ptx:") || !text.contains(": error: ") {
            return Err(format!(
                "{stage} diagnostic `{}` rendered oddly: {text:?}",
                d.message
            ));
        }
    }
    Ok(())
}

/// Runs the whole front end on one input. `Err` describes a broken invariant (a panic
/// included); `Ok(n)` is the number of parse diagnostics.
fn exercise(src: &str) -> Result<usize, String> {
    let r = catch_unwind(AssertUnwindSafe(|| -> Result<usize, String> {
        let (m, diags) = ptx2llvm::syntax::parse(src);
        check_diags(src, &diags, "parse")?;
        if !diags.is_empty() {
            return Ok(diags.len());
        }
        let cdiags = ptx2llvm::check::check(&m);
        check_diags(src, &cdiags, "check")?;
        let text = print_module(&m);
        let (m2, d2) = ptx2llvm::syntax::parse(&text);
        if !d2.is_empty() {
            return Err(format!(
                "the input parses cleanly, but its printed form does not:\n{}",
                ptx2llvm::syntax::diag::render_all(&d2[..d2.len().min(3)], "printed.ptx", &text)
            ));
        }
        if print_module(&m2) != text {
            return Err("printing the input is not a fixpoint".to_string());
        }
        Ok(0)
    }));
    match r {
        Ok(r) => r,
        Err(p) => {
            let msg = p
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_default();
            Err(format!("PANIC: {msg}"))
        }
    }
}

/// A failure, with the input saved under `target/robustness-failures/` for reproduction.
fn report(label: &str, input: &str, problem: &str) -> String {
    let dir = common::repo_root()
        .join("target")
        .join("robustness-failures");
    let _ = std::fs::create_dir_all(&dir);
    let file = dir.join(format!("{}.ptx", label.replace(['/', ' ', ':', '@'], "_")));
    let _ = std::fs::write(&file, input);
    format!(
        "{label}: {problem}\n    (input saved as {})",
        common::rel(&file)
    )
}

/// Cuts a string at (the char boundary at or before) byte `at`.
fn cut(src: &str, mut at: usize) -> &str {
    at = at.min(src.len());
    while !src.is_char_boundary(at) {
        at -= 1;
    }
    &src[..at]
}

/// Mutants per corpus file: 30, or `PTX2LLVM_MUTANTS` for a longer local run.
fn mutants_per_file() -> usize {
    std::env::var("PTX2LLVM_MUTANTS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(30)
}

/// The inputs derived from one corpus file, with labels.
fn inputs_for(name: &str, src: &str, every_cut_below: usize) -> Vec<(String, String, bool)> {
    let mut v = Vec::new();
    // 40 evenly spaced cut points, plus every cut point of the first bytes of a few files.
    let mut cuts: Vec<usize> = (0..40).map(|k| src.len() * k / 40).collect();
    cuts.extend(0..every_cut_below.min(src.len()));
    cuts.sort_unstable();
    cuts.dedup();
    for at in cuts {
        let prefix = cut(src, at);
        v.push((
            format!("{name}@cut{at}"),
            prefix.to_string(),
            certainly_invalid(prefix),
        ));
    }
    let mut rng = Rng::new(seed_of(name));
    for k in 0..mutants_per_file() {
        let bytes = mutate(src.as_bytes(), &mut rng);
        v.push((
            format!("{name}@mutant{k}"),
            String::from_utf8_lossy(&bytes).into_owned(),
            false,
        ));
    }
    v
}

/// The producer folders; the first file of each gets every cut point in its first 300 bytes.
const PRODUCERS: &[&str] = &["nvrtc/variants/", "nvrtc/", "triton/", "numba/", "clang/"];

#[test]
fn truncated_and_mutated_corpus_never_panics() {
    let mut picked = std::collections::HashSet::new();
    let mut jobs = Vec::new();
    for path in common::corpus_files() {
        let name = common::rel(&path)
            .trim_start_matches("tests/corpus/")
            .to_string();
        let producer = PRODUCERS
            .iter()
            .find(|p| name.starts_with(**p))
            .copied()
            .unwrap_or("");
        let every_cut_below = if picked.insert(producer) { 300 } else { 0 };
        jobs.push((name, common::read(&path), every_cut_below));
    }
    assert!(
        picked.len() >= 4,
        "expected files from every producer: {picked:?}"
    );

    let start = Instant::now();
    let next = AtomicUsize::new(0);
    let failures = Mutex::new(Vec::<String>::new());
    let counts = Mutex::new((0usize, 0usize));
    // What each worker is running now, for the hang report.
    let current: Arc<Mutex<Vec<String>>> = Arc::new(Mutex::new(vec![String::new(); 2]));
    let (done_tx, done_rx) = mpsc::channel::<()>();
    std::thread::scope(|s| {
        for w in 0..2 {
            let done_tx = done_tx.clone();
            let (jobs, next, failures, counts, current) =
                (&jobs, &next, &failures, &counts, current.clone());
            s.spawn(move || {
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some((name, src, full)) = jobs.get(i) else {
                        break;
                    };
                    for (label, input, must_fail) in inputs_for(name, src, *full) {
                        current.lock().unwrap()[w] = label.clone();
                        let r = exercise(&input);
                        let mut c = counts.lock().unwrap();
                        c.0 += 1;
                        drop(c);
                        match r {
                            Err(problem) => failures
                                .lock()
                                .unwrap()
                                .push(report(&label, &input, &problem)),
                            Ok(0) if must_fail => failures.lock().unwrap().push(report(
                                &label,
                                &input,
                                "a prefix that cannot be valid got no diagnostic",
                            )),
                            Ok(n) => counts.lock().unwrap().1 += (n > 0) as usize,
                        }
                        let _ = done_tx.send(());
                    }
                }
                current.lock().unwrap()[w] = String::new();
            });
        }
        drop(done_tx);
        // Watchdog: any single input taking this long is a hang.
        loop {
            match done_rx.recv_timeout(Duration::from_secs(30)) {
                Ok(()) => {}
                Err(mpsc::RecvTimeoutError::Disconnected) => break,
                Err(mpsc::RecvTimeoutError::Timeout) => {
                    let now = current.lock().unwrap().clone();
                    eprintln!("HANG: no input finished in 30 s; running: {now:?}");
                    std::process::exit(3);
                }
            }
        }
    });
    let (total, with_diags) = *counts.lock().unwrap();
    eprintln!(
        "robustness: {total} inputs from {} files in {:.1?} ({with_diags} with diagnostics)",
        jobs.len(),
        start.elapsed()
    );
    let mut failures = failures.into_inner().unwrap();
    failures.sort();
    assert!(
        failures.is_empty(),
        "{} of {total} inputs broke an invariant:\n\n{}",
        failures.len(),
        failures
            .iter()
            .take(40)
            .cloned()
            .collect::<Vec<_>>()
            .join("\n\n")
    );
}

/// Inputs that once panicked, hung or broke an invariant (kept as regression cases), and
/// pathological shapes that a recursive-descent parser must survive.
fn pathological_inputs() -> Vec<(&'static str, String)> {
    let head = ".version 8.0\n.target sm_80\n.address_size 64\n";
    let body = |s: &str| format!("{head}.entry k()\n{{\n{s}\n}}\n");
    vec![
        ("empty", String::new()),
        ("only whitespace", " \n\t\r\n".to_string()),
        // These overflowed the stack before the parser limited nesting (blocks, operands,
        // initializers: 64 levels; expressions, operator chains included: 256).
        ("nested blocks in a body", body(&"{".repeat(100_000))),
        (
            "nested closed blocks in a body",
            body(&format!("{}{}", "{".repeat(50_000), "}".repeat(50_000))),
        ),
        (
            "braces at module level",
            format!("{head}{}", "{".repeat(100_000)),
        ),
        (
            "nested initializer",
            format!("{head}.global .u32 a[1] = {};", "{".repeat(100_000)),
        ),
        (
            "nested vector operand",
            body(&format!("mov.b32 %r1, {};", "{".repeat(100_000))),
        ),
        (
            "operand pair chain",
            body(&format!("setp.eq.s32 {}%p;", "%p|".repeat(100_000))),
        ),
        (
            "long binary chain",
            body(&format!("mov.b32 %r1, 1{};", "+1".repeat(100_000))),
        ),
        // Bounded before, kept as guards.
        (
            "nested parentheses",
            body(&format!("mov.b32 %r1, {};", "(".repeat(100_000))),
        ),
        (
            "nested call lists",
            body(&format!("call f, {};", "(".repeat(100_000))),
        ),
        (
            "nested address",
            body(&format!("ld.u32 %r1, {};", "[".repeat(100_000))),
        ),
        (
            "unary chain",
            body(&format!("mov.b32 %r1, {}1;", "-~!".repeat(100_000))),
        ),
        (
            "cast chain",
            body(&format!("mov.b32 %r1, {}1;", "(.s64)".repeat(100_000))),
        ),
        ("long line", format!("{head}{}\n", "a".repeat(100_000))),
        (
            "long operand list",
            body(&format!("add.s32 %r1{};", ", %r1".repeat(100_000))),
        ),
        ("many statements", body(&"ret;\n".repeat(200_000))),
        ("many errors", body(&"frobnicate;\n".repeat(100_000))),
        (
            "many labels",
            body(&(0..100_000).map(|i| format!("L{i}:\n")).collect::<String>()),
        ),
        (
            "unterminated comment",
            format!("{head}/* {}", "x".repeat(10_000)),
        ),
        ("unterminated string", format!("{head}.pragma \"abc")),
        // Read past the end of the input before the lexer clamped escapes.
        (
            "string ending in backslash",
            format!("{head}.pragma \"abc\\"),
        ),
        ("lone dot", ".".to_string()),
        ("lone percent", "%".to_string()),
        ("non-ASCII", "é€😀\u{feff}".to_string()),
        ("NUL bytes", "\0\0\0.version\0".to_string()),
        (
            "huge integers",
            body(&"mov.b32 %r1, 999999999999999999999999999999;".repeat(10)),
        ),
        (
            "huge version",
            ".version 99999999999999999999.99999999999999999999\n.target sm_80\n".to_string(),
        ),
        (
            "huge register count",
            format!("{head}.entry k() {{ .reg .b32 %r<99999999999999>; }}"),
        ),
        (
            "huge array",
            format!("{head}.global .u8 a[18446744073709551615];"),
        ),
        (
            "array size overflow",
            format!("{head}.global .u8 a[0x8000000000000000*2][4];"),
        ),
        ("division by zero", format!("{head}.global .u8 a[1/0];")),
        ("shift by 64", format!("{head}.global .u8 a[1<<64];")),
        (
            "signed overflow",
            format!("{head}.global .u8 a[-9223372036854775808/-1];"),
        ),
        (
            "address overflow",
            body("ld.u32 %r1, [%rd1+-9223372036854775808];"),
        ),
        (
            "dwarf section",
            format!(
                "{head}.section .debug_info {{ {} }}",
                ".b8 1,".repeat(10_000)
            ),
        ),
        (
            "sections nested",
            format!("{head}.section .debug_info {}", "{".repeat(10_000)),
        ),
    ]
}

#[test]
fn pathological_inputs_do_not_panic_or_hang() {
    let mut failures = Vec::new();
    for (label, input) in pathological_inputs() {
        // On a thread with a 2 MiB stack (Rust's default for spawned threads, less than the
        // CLI's 8 MiB main thread), so unbounded recursion shows up here.
        let (tx, rx) = mpsc::channel();
        let input2 = input.clone();
        let t0 = Instant::now();
        std::thread::Builder::new()
            .name(label.to_string())
            .stack_size(2 << 20)
            .spawn(move || {
                let _ = tx.send(exercise(&input2));
            })
            .expect("spawn");
        match rx.recv_timeout(Duration::from_secs(20)) {
            Ok(Ok(_)) => {}
            Ok(Err(problem)) => {
                failures.push(report(&format!("pathological {label}"), &input, &problem))
            }
            Err(_) => failures.push(report(
                &format!("pathological {label}"),
                &input,
                "no result in 20 s (hang, or the thread died)",
            )),
        }
        let took = t0.elapsed();
        if took > Duration::from_secs(5) {
            failures.push(format!("pathological {label}: took {took:.1?}"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// Runs `ptx2llvm check FILE` with a time limit; returns (exit code, stderr, elapsed).
fn run_check(path: &Path, limit: Duration) -> (Option<i32>, String, Duration) {
    let t0 = Instant::now();
    let mut child = Command::new(env!("CARGO_BIN_EXE_ptx2llvm"))
        .arg("check")
        .arg(path)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .env_remove("RUST_BACKTRACE")
        .spawn()
        .expect("run ptx2llvm");
    // Read stderr on a thread so a large output cannot block the child.
    let mut err = child.stderr.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut s = Vec::new();
        let _ = std::io::Read::read_to_end(&mut err, &mut s);
        s
    });
    loop {
        if let Some(status) = child.try_wait().expect("wait") {
            let stderr = String::from_utf8_lossy(&reader.join().unwrap()).into_owned();
            return (status.code(), stderr, t0.elapsed());
        }
        if t0.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            return (None, "(killed: time limit)".to_string(), t0.elapsed());
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

#[test]
fn cli_check_rejects_garbage_cleanly() {
    let dir = tempfile::tempdir().expect("temporary directory");
    let mut rng = Rng::new(42);
    let binary: Vec<u8> = (0..4096).map(|_| rng.next() as u8).collect();
    let mut non_utf8 = b".version 8.0\n.target sm_80\n// caf\xe9\n".to_vec();
    non_utf8.extend_from_slice(b"\xff\xfe\x80");
    let head = ".version 8.0\n.target sm_80\n.address_size 64\n";
    let cases: Vec<(&str, Vec<u8>)> = vec![
        ("binary.ptx", binary),
        ("empty.ptx", Vec::new()),
        ("non-utf8.ptx", non_utf8),
        (
            "nesting.ptx",
            format!("{head}.entry k()\n{}", "{".repeat(100_000)).into_bytes(),
        ),
        ("nesting-module.ptx", "{".repeat(100_000).into_bytes()),
        (
            "long-line.ptx",
            format!("{head}{}\n", "x".repeat(100_000)).into_bytes(),
        ),
        (
            "long-operand-line.ptx",
            format!(
                "{head}.entry k()\n{{\n\tadd.s32 %r1{};\n}}\n",
                ", %r1".repeat(20_000)
            )
            .into_bytes(),
        ),
    ];
    let mut failures = Vec::new();
    for (name, bytes) in cases {
        let path = dir.path().join(name);
        std::fs::write(&path, &bytes).unwrap();
        let (code, stderr, took) = run_check(&path, Duration::from_secs(10));
        let mut problems = Vec::new();
        if code != Some(1) {
            problems.push(format!("exit code {code:?}, expected 1"));
        }
        if stderr.contains("panicked") || stderr.contains("RUST_BACKTRACE") {
            problems.push("a panic message on stderr".to_string());
        }
        if !stderr.contains("error") {
            problems.push("no error message".to_string());
        }
        if took > Duration::from_secs(5) {
            problems.push(format!("took {took:.1?}"));
        }
        if !problems.is_empty() {
            let tail: String = stderr.chars().take(600).collect();
            failures.push(format!(
                "{name}: {}\n    stderr: {tail}",
                problems.join("; ")
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}
