//! The kernel cache (src/target/cpu/cache.rs): a hit runs exactly like a fresh compilation
//! (results, kernel paths, layouts, module variables, faults), every input of the key misses
//! when changed, corrupt or truncated entries are recompiled and rewritten, concurrent
//! processes writing one key leave one whole entry, the disk cache stays within its bound
//! (least recently used out first), and `PTX2LLVM_CACHE=0` turns it off.
//!
//! Each test keeps its disk cache in a temporary directory and makes its PTX unique (a comment)
//! so that tests running in parallel never share entries of the in-memory cache.

use std::path::{Path, PathBuf};
use std::process::Command;

use ptx2llvm::api::{param_buffer, Arg, Buffer};
use ptx2llvm::lower::debug::DebugOptions;
use ptx2llvm::runtime::LaunchConfig;
use ptx2llvm::target::cpu::cache::{self, Outcome, Request, Settings};
use ptx2llvm::target::cpu::fission::{CpuMode, KernelPath};
use ptx2llvm::target::cpu::Program;

/// out[i] = factor * ((i + 1) % ntid): a module variable, shared memory and a barrier
/// (thread loops).
const PTX: &str = r#"
.version 8.0
.target sm_80
.address_size 64

.global .align 4 .u32 factor = 3;

.visible .entry rotate(.param .u64 out)
{
    .shared .align 4 .b32 sh[256];
    .reg .b32 %r<8>;
    .reg .b64 %rd<10>;
    mov.u32 %r1, %tid.x;
    ld.global.u32 %r2, [factor];
    mul.lo.u32 %r3, %r1, %r2;
    mov.u64 %rd5, sh;
    mul.wide.u32 %rd3, %r1, 4;
    add.u64 %rd6, %rd5, %rd3;
    st.shared.u32 [%rd6], %r3;
    bar.sync 0;
    mov.u32 %r6, %ntid.x;
    add.u32 %r4, %r1, 1;
    rem.u32 %r4, %r4, %r6;
    mul.wide.u32 %rd7, %r4, 4;
    add.u64 %rd8, %rd5, %rd7;
    ld.shared.u32 %r3, [%rd8];
    ld.param.u64 %rd1, [out];
    cvta.to.global.u64 %rd2, %rd1;
    add.u64 %rd9, %rd2, %rd3;
    st.global.u32 [%rd9], %r3;
    ret;
}

.visible .entry bad(.param .u64 p)
{
    .reg .b64 %rd1;
    ld.param.u64 %rd1, [p];
    st.global.u32 [%rd1], 1;
    ret;
}
"#;

const BLOCK: u32 = 64;

/// `PTX` made unique to `tag`.
fn ptx(tag: &str) -> String {
    format!("// {tag}\n{PTX}")
}

fn disk_only(dir: &Path) -> Settings {
    Settings {
        enabled: true,
        memory: false,
        dir: Some(dir.to_path_buf()),
        max_bytes: 1 << 30,
    }
}

fn load_with(
    src: &str,
    opt: u8,
    mode: CpuMode,
    block: Option<[u32; 3]>,
    settings: Settings,
) -> (Program, Outcome) {
    let debug = DebugOptions::default();
    let req = Request {
        src,
        opt,
        name: "test",
        mode,
        block,
        kernel: None,
        debug: &debug,
        settings,
    };
    let (ast, diags) = ptx2llvm::syntax::parse(src);
    assert!(diags.is_empty(), "{diags:?}");
    // The lowering takes `&'a ast::Module<'a>`, which a local cannot lend (as in
    // `api::Module::from_ptx_debug`): the AST goes on the heap until the program is built.
    let ast = Box::into_raw(Box::new(ast));
    // SAFETY: `ast` is valid until freed below.
    let (info, diags) = ptx2llvm::check::check_module(unsafe { &*ast });
    assert!(diags.is_empty(), "{diags:?}");
    // SAFETY: as above; `Program` borrows nothing from it.
    let r = cache::load(&req, unsafe { &*ast }, &info);
    // SAFETY: allocated above and no longer borrowed.
    drop(unsafe { Box::from_raw(ast) });
    r.expect("loads")
}

fn load(src: &str, settings: Settings) -> (Program, Outcome) {
    load_with(src, 2, CpuMode::Auto, Some([BLOCK, 1, 1]), settings)
}

/// Runs `rotate` over one block; its output.
fn rotate(p: &Program) -> Vec<u32> {
    let k = p.kernel("rotate").expect("kernel");
    let args = vec![Arg::Buffer(Buffer::zeroed(4 * BLOCK as usize))];
    let params = param_buffer("rotate", &k.params, &args).unwrap();
    let cfg = LaunchConfig {
        grid: [1, 1, 1],
        block: [BLOCK, 1, 1],
        static_shared: p.static_shared(),
        shared_align: p.shared_align(),
        ..LaunchConfig::default()
    };
    // SAFETY: the buffer holds the kernel's BLOCK words and lives through the launch.
    unsafe { p.launch("rotate", &params, &cfg) }.expect("launch");
    let Arg::Buffer(b) = &args[0] else {
        unreachable!()
    };
    b.as_slice()
        .chunks(4)
        .map(|c| u32::from_le_bytes(c.try_into().unwrap()))
        .collect()
}

fn expected(factor: u32) -> Vec<u32> {
    (0..BLOCK).map(|i| factor * ((i + 1) % BLOCK)).collect()
}

fn entries(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|rd| rd.flatten().map(|e| e.path()).collect())
        .unwrap_or_default();
    v.sort();
    v
}

fn set_global(p: &Program, name: &str, v: u32) {
    let (addr, size) = p.global(name).expect("module variable");
    assert_eq!(size, 4);
    // SAFETY: the variable has 4 bytes at `addr` while `p` lives; no launch runs.
    unsafe { (addr as *mut u32).write(v) };
}

#[test]
fn disk_hit_runs_like_a_fresh_compilation() {
    let dir = tempfile::tempdir().unwrap();
    let src = ptx("disk hit");
    let (fresh, o) = load(&src, disk_only(dir.path()));
    assert_eq!(o, Outcome::Compiled);
    assert_eq!(entries(dir.path()).len(), 1);
    let (hit, o) = load(&src, disk_only(dir.path()));
    assert_eq!(o, Outcome::Disk);
    assert!(o.hit());
    // MCJIT without the cache, as before the cache existed.
    let off = Settings {
        enabled: false,
        ..disk_only(dir.path())
    };
    let (mcjit, o) = load(&src, off);
    assert_eq!(o, Outcome::Uncached);
    for p in [&fresh, &hit, &mcjit] {
        assert_eq!(rotate(p), expected(3));
        assert!(matches!(
            p.kernel("rotate").unwrap().path,
            KernelPath::Fission(_) | KernelPath::Warp(_)
        ));
        assert_eq!(p.static_shared(), mcjit.static_shared());
        assert_eq!(p.shared_align(), mcjit.shared_align());
        let names = |q: &Program| -> Vec<(String, u32, u32)> {
            q.kernels()
                .iter()
                .flat_map(|k| {
                    k.params
                        .params
                        .iter()
                        .map(|x| (format!("{}.{}", k.name, x.name), x.offset, x.size))
                })
                .collect()
        };
        assert_eq!(names(p), names(&mcjit));
        assert_eq!(
            p.global_names().collect::<Vec<_>>(),
            mcjit.global_names().collect::<Vec<_>>()
        );
    }
    // Module variables are the program's own and reachable from the host.
    set_global(&hit, "factor", 5);
    assert_eq!(rotate(&hit), expected(5));
    assert_eq!(rotate(&fresh), expected(3));
}

#[test]
fn memory_hits_have_their_own_module_variables() {
    let settings = Settings {
        enabled: true,
        memory: true,
        dir: None,
        max_bytes: 1 << 30,
    };
    let src = ptx("memory hit");
    let (a, o) = load(&src, settings.clone());
    assert_eq!(o, Outcome::Compiled);
    let (b, o) = load(&src, settings.clone());
    assert_eq!(o, Outcome::Memory);
    // Two loads of one PTX are two modules (as two cuModuleLoadData calls are).
    assert_ne!(a.global("factor").unwrap().0, b.global("factor").unwrap().0);
    set_global(&a, "factor", 7);
    assert_eq!(rotate(&a), expected(7));
    assert_eq!(rotate(&b), expected(3));
    drop(a);
    assert_eq!(rotate(&b), expected(3));
}

#[test]
fn every_input_of_the_key_misses_when_changed() {
    let dir = tempfile::tempdir().unwrap();
    let s = || disk_only(dir.path());
    let src = ptx("key");
    let b = Some([BLOCK, 1, 1]);
    assert_eq!(
        load_with(&src, 2, CpuMode::Auto, b, s()).1,
        Outcome::Compiled
    );
    // Optimization level, kernel scheme, block specialization, PTX text.
    assert_eq!(
        load_with(&src, 1, CpuMode::Auto, b, s()).1,
        Outcome::Compiled
    );
    let (c, o) = load_with(&src, 2, CpuMode::Coroutine, b, s());
    assert_eq!(o, Outcome::Compiled);
    assert!(matches!(
        c.kernel("rotate").unwrap().path,
        KernelPath::Coroutine { .. }
    ));
    assert_eq!(rotate(&c), expected(3));
    assert_eq!(
        load_with(&src, 2, CpuMode::Auto, None, s()).1,
        Outcome::Compiled
    );
    let other = format!("{src}\n");
    assert_eq!(
        load_with(&other, 2, CpuMode::Auto, b, s()).1,
        Outcome::Compiled
    );
    assert_eq!(entries(dir.path()).len(), 5);
    // The same inputs again: hits, each with its own code.
    assert_eq!(load_with(&src, 2, CpuMode::Auto, b, s()).1, Outcome::Disk);
    let (c, o) = load_with(&src, 2, CpuMode::Coroutine, b, s());
    assert_eq!(o, Outcome::Disk);
    assert!(matches!(
        c.kernel("rotate").unwrap().path,
        KernelPath::Coroutine { .. }
    ));
    assert_eq!(rotate(&c), expected(3));
    let (u, o) = load_with(&src, 2, CpuMode::Auto, None, s());
    assert_eq!(o, Outcome::Disk);
    assert_eq!(rotate(&u), expected(3));
}

#[test]
fn corrupt_or_truncated_entries_are_recompiled_and_rewritten() {
    let dir = tempfile::tempdir().unwrap();
    let src = ptx("corrupt");
    assert_eq!(load(&src, disk_only(dir.path())).1, Outcome::Compiled);
    let path = entries(dir.path()).pop().unwrap();
    let good = std::fs::read(&path).unwrap();
    let half = good.len() / 2;
    let mut flipped = good.clone();
    flipped[half] ^= 0x40;
    let damaged: Vec<(&str, Vec<u8>)> = vec![
        ("empty", Vec::new()),
        ("truncated", good[..half].to_vec()),
        ("one byte short", good[..good.len() - 1].to_vec()),
        ("a flipped bit", flipped),
        ("garbage", vec![0xa5; good.len()]),
    ];
    for (what, bytes) in damaged {
        std::fs::write(&path, &bytes).unwrap();
        let (p, o) = load(&src, disk_only(dir.path()));
        assert_eq!(o, Outcome::Compiled, "{what}");
        assert_eq!(rotate(&p), expected(3), "{what}");
        assert_eq!(std::fs::read(&path).unwrap(), good, "{what}: rewritten");
        assert_eq!(load(&src, disk_only(dir.path())).1, Outcome::Disk, "{what}");
    }
}

#[test]
fn a_fault_in_cached_code_is_a_launch_error() {
    ptx2llvm::runtime::fault::install();
    let dir = tempfile::tempdir().unwrap();
    let src = ptx("fault");
    for want in [Outcome::Compiled, Outcome::Disk] {
        let (p, o) = load(&src, disk_only(dir.path()));
        assert_eq!(o, want);
        let params = 8u64.to_le_bytes();
        let cfg = LaunchConfig {
            grid: [1, 1, 1],
            block: [BLOCK, 1, 1],
            ..LaunchConfig::default()
        };
        // SAFETY: the kernel writes to address 8, which faults; the fault handler turns that
        // into the launch's error.
        let e = unsafe { p.launch("bad", &params, &cfg) }.expect_err("faults");
        assert!(e.to_string().contains("invalid memory access"), "{e}");
    }
}

#[test]
fn eviction_keeps_the_bound_least_recently_used_first() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b, c) = (ptx("lru a"), ptx("lru b"), ptx("lru c"));
    assert_eq!(load(&a, disk_only(dir.path())).1, Outcome::Compiled);
    let one = std::fs::metadata(entries(dir.path())[0].clone())
        .unwrap()
        .len();
    let bounded = || Settings {
        max_bytes: one * 5 / 2,
        ..disk_only(dir.path())
    };
    std::thread::sleep(std::time::Duration::from_millis(20));
    assert_eq!(load(&b, bounded()).1, Outcome::Compiled);
    std::thread::sleep(std::time::Duration::from_millis(20));
    // A is used again: B is now the least recently used.
    assert_eq!(load(&a, bounded()).1, Outcome::Disk);
    std::thread::sleep(std::time::Duration::from_millis(20));
    assert_eq!(load(&c, bounded()).1, Outcome::Compiled);
    let total: u64 = entries(dir.path())
        .iter()
        .map(|p| std::fs::metadata(p).unwrap().len())
        .sum();
    assert!(total <= one * 5 / 2, "{total} bytes kept");
    assert_eq!(entries(dir.path()).len(), 2);
    assert_eq!(load(&a, bounded()).1, Outcome::Disk);
    assert_eq!(load(&c, bounded()).1, Outcome::Disk);
    assert_eq!(load(&b, bounded()).1, Outcome::Compiled);
}

// ---- through `ptx2llvm run`, in processes of their own ----

fn bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_ptx2llvm"))
}

/// `ptx2llvm run` of `rotate` with the cache under `xdg`; (exit code, stderr, output words).
fn run(ptx: &Path, xdg: &Path, out: &Path, env: &[(&str, &str)]) -> (i32, String, Vec<u32>) {
    let o = Command::new(bin())
        .arg("run")
        .arg(ptx)
        .args(["--kernel", "rotate", "--block", "64", "--repeat", "1"])
        .args(["--arg", "zeros:256", "--dump"])
        .arg(format!("0={}", out.display()))
        .env("XDG_CACHE_HOME", xdg)
        .env_remove("PTX2LLVM_CACHE")
        .env_remove("PTX2LLVM_CACHE_MAX")
        .envs(env.iter().copied())
        .output()
        .unwrap();
    let words = std::fs::read(out)
        .unwrap_or_default()
        .chunks(4)
        .map(|c| u32::from_le_bytes(c.try_into().unwrap()))
        .collect();
    (
        o.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&o.stderr).into_owned(),
        words,
    )
}

#[test]
fn concurrent_processes_writing_one_key_leave_one_whole_entry() {
    let d = tempfile::tempdir().unwrap();
    let ptx_path = d.path().join("rotate.ptx");
    std::fs::write(&ptx_path, ptx("concurrent")).unwrap();
    let xdg = d.path().join("xdg");
    let procs: Vec<_> = (0..6)
        .map(|i| {
            let (p, x, o) = (
                ptx_path.clone(),
                xdg.clone(),
                d.path().join(format!("out{i}")),
            );
            std::thread::spawn(move || run(&p, &x, &o, &[]))
        })
        .collect();
    for t in procs {
        let (code, err, words) = t.join().unwrap();
        assert_eq!(code, 0, "{err}");
        assert_eq!(words, expected(3));
    }
    let files = entries(&xdg.join("ptx2llvm"));
    assert_eq!(files.len(), 1, "{files:?}");
    assert!(files[0].extension().is_some_and(|e| e == "kc"));
    let (code, err, words) = run(&ptx_path, &xdg, &d.path().join("again"), &[]);
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("compile: cached"), "{err}");
    assert_eq!(words, expected(3));
}

#[test]
fn ptx2llvm_cache_0_turns_the_cache_off() {
    let d = tempfile::tempdir().unwrap();
    let ptx_path = d.path().join("rotate.ptx");
    std::fs::write(&ptx_path, ptx("off")).unwrap();
    let xdg = d.path().join("xdg");
    for _ in 0..2 {
        let (code, err, words) = run(
            &ptx_path,
            &xdg,
            &d.path().join("o"),
            &[("PTX2LLVM_CACHE", "0")],
        );
        assert_eq!(code, 0, "{err}");
        assert!(
            !err.contains("kernel cache") && !err.contains("cached"),
            "{err}"
        );
        assert_eq!(words, expected(3));
    }
    assert!(!xdg.exists(), "nothing written");
    // On again, it stores and then hits.
    let (_, err, _) = run(&ptx_path, &xdg, &d.path().join("o"), &[]);
    assert!(err.contains("stored in the kernel cache"), "{err}");
    let (_, err, words) = run(&ptx_path, &xdg, &d.path().join("o"), &[]);
    assert!(err.contains("compile: cached"), "{err}");
    assert_eq!(words, expected(3));
}

/// Code generation calls helpers the IR never names (`__truncsfbf2` for `cvt.rn.bf16.f32`):
/// the object's own undefined symbols are bound to the runtime's, as MCJIT binds them. The
/// cache once bound only the IR's and the object did not link (lit/isa/half.ptx failed).
#[test]
fn helpers_called_by_generated_code_link() {
    let dir = tempfile::tempdir().unwrap();
    let src = r#"
.version 8.0
.target sm_80
.address_size 64
.visible .entry tobf(.param .u64 out, .param .f32 x)
{
    .reg .f32 %f1;
    .reg .b16 %h1;
    .reg .b64 %rd<3>;
    ld.param.f32 %f1, [x];
    cvt.rn.bf16.f32 %h1, %f1;
    ld.param.u64 %rd1, [out];
    cvta.to.global.u64 %rd2, %rd1;
    st.global.b16 [%rd2], %h1;
    ret;
}
"#;
    for want in [Outcome::Compiled, Outcome::Disk] {
        let (p, o) = load(src, disk_only(dir.path()));
        assert_eq!(o, want);
        let k = p.kernel("tobf").unwrap();
        let args = vec![
            Arg::Buffer(Buffer::zeroed(2)),
            Arg::Scalar(1.5f32.to_le_bytes().to_vec()),
        ];
        let params = param_buffer("tobf", &k.params, &args).unwrap();
        let cfg = LaunchConfig {
            grid: [1, 1, 1],
            block: [BLOCK, 1, 1],
            ..LaunchConfig::default()
        };
        // SAFETY: the buffer holds the 2 bytes the kernel writes.
        unsafe { p.launch("tobf", &params, &cfg) }.expect("launch");
        let Arg::Buffer(b) = &args[0] else {
            unreachable!()
        };
        assert_eq!(b.as_slice(), &0x3fc0u16.to_le_bytes());
    }
}
