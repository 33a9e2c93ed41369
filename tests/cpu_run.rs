//! Runs corpus kernels on the cpu target through `ptx2llvm run` with concrete inputs and checks
//! the results against references computed here from each kernel's CUDA source (never against
//! our own output), plus the error contract of `run` (unknown kernel, argument mismatch, trap).

use std::path::{Path, PathBuf};
use std::process::Command;

fn bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_ptx2llvm"))
}

fn corpus(p: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/corpus")
        .join(p)
}

fn f32s(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

fn read_f32(p: &Path) -> Vec<f32> {
    std::fs::read(p)
        .unwrap()
        .chunks(4)
        .map(|c| f32::from_le_bytes(c.try_into().unwrap()))
        .collect()
}

/// Runs `ptx2llvm run` with `args`; returns (exit code, stdout, stderr).
fn run(args: &[String]) -> (i32, String, String) {
    let o = Command::new(bin()).arg("run").args(args).output().unwrap();
    (
        o.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&o.stdout).into(),
        String::from_utf8_lossy(&o.stderr).into(),
    )
}

fn s(x: impl AsRef<str>) -> String {
    x.as_ref().to_string()
}

#[test]
fn nvrtc_vecadd() {
    let d = tempfile::tempdir().unwrap();
    let n = 1000;
    let a: Vec<f32> = (0..n).map(|i| i as f32 * 0.25).collect();
    let b: Vec<f32> = (0..n).map(|i| (n - i) as f32).collect();
    std::fs::write(d.path().join("a"), f32s(&a)).unwrap();
    std::fs::write(d.path().join("b"), f32s(&b)).unwrap();
    let out = d.path().join("c");
    let (code, _, err) = run(&[
        s(corpus("nvrtc/vecadd.ptx").to_string_lossy()),
        s("--kernel"),
        s("vecadd"),
        s("--grid"),
        s("4"),
        s("--block"),
        s("256"),
        format!("--arg=@{}", d.path().join("a").display()),
        format!("--arg=@{}", d.path().join("b").display()),
        s("--arg=zeros:4000"),
        s("--arg=s32:1000"),
        format!("--dump=2={}", out.display()),
        s("--repeat"),
        s("3"),
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("kernel time: median"), "{err}");
    assert!(err.contains("kernel CPU time: median"), "{err}");
    let c = read_f32(&out);
    for i in 0..n {
        assert_eq!(c[i], a[i] + b[i], "element {i}");
    }
}

#[test]
fn nvrtc_block_reduce_shared_memory_and_barriers() {
    let d = tempfile::tempdir().unwrap();
    let n = 1000usize;
    let x: Vec<f32> = (0..1024).map(|i| (i % 7) as f32).collect();
    std::fs::write(d.path().join("x"), f32s(&x)).unwrap();
    let out = d.path().join("o");
    let (code, _, err) = run(&[
        s(corpus("nvrtc/shared_sync.ptx").to_string_lossy()),
        s("--kernel"),
        s("block_reduce"),
        s("--grid"),
        s("4"),
        s("--block"),
        s("256"),
        format!("--arg=@{}", d.path().join("x").display()),
        s("--arg=zeros:16"),
        s("--arg=s32:1000"),
        format!("--dump=1={}", out.display()),
    ]);
    assert_eq!(code, 0, "{err}");
    let o = read_f32(&out);
    for (blk, &got) in o.iter().enumerate().take(4) {
        let want: f32 = (blk * 256..(blk * 256 + 256).min(n)).map(|i| x[i]).sum();
        assert_eq!(got, want, "block {blk}");
    }
}

#[test]
fn nvrtc_atomics() {
    let d = tempfile::tempdir().unwrap();
    let x: Vec<f32> = (0..100).map(|i| i as f32 * 0.5).collect();
    std::fs::write(d.path().join("x"), f32s(&x)).unwrap();
    std::fs::write(d.path().join("umin"), u32::MAX.to_le_bytes()).unwrap();
    let p = |k: &str| d.path().join(k);
    let (code, _, err) = run(&[
        s(corpus("nvrtc/atomics.ptx").to_string_lossy()),
        s("--kernel"),
        s("atomics"),
        s("--grid"),
        s("2"),
        s("--block"),
        s("64"),
        format!("--arg=@{}", p("x").display()),
        s("--arg=zeros:4"),
        s("--arg=zeros:4"),
        s("--arg=zeros:16"),
        format!("--arg=@{}", p("umin").display()),
        s("--arg=zeros:8"),
        s("--arg=s32:100"),
        format!("--dump=1={}", p("fs").display()),
        format!("--dump=2={}", p("is").display()),
        format!("--dump=3={}", p("dm").display()),
        format!("--dump=4={}", p("um").display()),
        format!("--dump=5={}", p("fl").display()),
    ]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(read_f32(&p("fs")), [x.iter().sum::<f32>()]);
    assert_eq!(std::fs::read(p("is")).unwrap(), 100i32.to_le_bytes());
    let dm = std::fs::read(p("dm")).unwrap();
    assert_eq!(f64::from_le_bytes(dm[..8].try_into().unwrap()), 49.5);
    assert_eq!(f64::from_le_bytes(dm[8..].try_into().unwrap()), 100.0);
    assert_eq!(std::fs::read(p("um")).unwrap(), 0u32.to_le_bytes());
    let fl = std::fs::read(p("fl")).unwrap();
    let local = i32::from_le_bytes(fl[..4].try_into().unwrap());
    assert!(
        local == 64 || local == 36,
        "shared counter of the last block: {local}"
    );
    assert_eq!(i32::from_le_bytes(fl[4..].try_into().unwrap()), 1);
}

/// `--warmup N` launches N times before the `--repeat` ones, untimed: the atomics kernel's
/// integer counter (100 per launch) counts all five launches, the times only three.
#[test]
fn run_warmup_launches_untimed() {
    let d = tempfile::tempdir().unwrap();
    let x: Vec<f32> = (0..100).map(|i| i as f32 * 0.5).collect();
    std::fs::write(d.path().join("x"), f32s(&x)).unwrap();
    std::fs::write(d.path().join("umin"), u32::MAX.to_le_bytes()).unwrap();
    let p = |k: &str| d.path().join(k);
    let (code, _, err) = run(&[
        s(corpus("nvrtc/atomics.ptx").to_string_lossy()),
        s("--kernel"),
        s("atomics"),
        s("--grid"),
        s("2"),
        s("--block"),
        s("64"),
        format!("--arg=@{}", p("x").display()),
        s("--arg=zeros:4"),
        s("--arg=zeros:4"),
        s("--arg=zeros:16"),
        format!("--arg=@{}", p("umin").display()),
        s("--arg=zeros:8"),
        s("--arg=s32:100"),
        format!("--dump=2={}", p("is").display()),
        s("--warmup"),
        s("2"),
        s("--repeat"),
        s("3"),
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("over 3 launches"), "{err}");
    assert_eq!(std::fs::read(p("is")).unwrap(), 500i32.to_le_bytes());
}

#[test]
fn nvrtc_printf() {
    let (code, out, err) = run(&[
        s(corpus("nvrtc/printf.ptx").to_string_lossy()),
        s("--kernel"),
        s("hello"),
        s("--block"),
        s("2"),
        s("--arg=s32:5"),
        s("--arg=f32:1.5"),
        s("--arg=f64:2.25"),
        s("--arg=u64:0"),
    ]);
    assert_eq!(code, 0, "{err}");
    let mut lines: Vec<&str> = out.lines().collect();
    lines.sort();
    assert_eq!(
        lines,
        [
            "thread 0/0 n=5 f=1.500000 d=2.25 s=(null) ptr=(nil)",
            "thread 1/0 n=5 f=1.500000 d=2.25 s=(null) ptr=(nil)"
        ]
    );
}

#[test]
fn triton_vector_add() {
    let d = tempfile::tempdir().unwrap();
    let n = 3000;
    let a: Vec<f32> = (0..n).map(|i| (i as f32).sin()).collect();
    let b: Vec<f32> = (0..n).map(|i| i as f32).collect();
    std::fs::write(d.path().join("a"), f32s(&a)).unwrap();
    std::fs::write(d.path().join("b"), f32s(&b)).unwrap();
    let out = d.path().join("c");
    let (code, _, err) = run(&[
        s(corpus("triton/vector_add.sm80.ptx").to_string_lossy()),
        s("--kernel"),
        s("add_kernel"),
        s("--grid"),
        s("3"),
        s("--block"),
        s("128"),
        format!("--arg=@{}", d.path().join("a").display()),
        format!("--arg=@{}", d.path().join("b").display()),
        format!("--arg=zeros:{}", 4 * n),
        format!("--arg=s32:{n}"),
        s("--arg=zeros:16"),
        s("--arg=zeros:16"),
        format!("--dump=2={}", out.display()),
    ]);
    assert_eq!(code, 0, "{err}");
    let c = read_f32(&out);
    for i in 0..n {
        assert_eq!(c[i], a[i] + b[i], "element {i}");
    }
}

#[test]
fn errors_say_what_was_expected() {
    let f = s(corpus("nvrtc/vecadd.ptx").to_string_lossy());
    let (code, _, err) = run(&[f.clone(), s("--kernel"), s("nope")]);
    assert_eq!(code, 1);
    assert!(
        err.contains("no kernel named `nope`") && err.contains("vecadd"),
        "{err}"
    );
    let (code, _, err) = run(&[f.clone(), s("--kernel"), s("vecadd"), s("--arg=u32:1")]);
    assert_eq!(code, 1);
    assert!(
        err.contains("takes 4 parameter(s) (.u64, .u64, .u64, .u32), but 1 argument(s) were given"),
        "{err}"
    );
    let (code, _, err) = run(&[
        f.clone(),
        s("--kernel"),
        s("vecadd"),
        s("--arg=u32:1"),
        s("--arg=zeros:4"),
        s("--arg=zeros:4"),
        s("--arg=u32:1"),
    ]);
    assert_eq!(code, 1);
    assert!(
        err.contains("argument 0 of kernel `vecadd` is a 4-byte scalar"),
        "{err}"
    );
    let (code, _, err) = run(&[
        f.clone(),
        s("--kernel"),
        s("vecadd"),
        s("--shared-mem"),
        s("999999999"),
    ]);
    assert_eq!(code, 1, "{err}");
    let (code, _, err) = run(&[f, s("--kernel"), s("vecadd"), s("--arg=q8:1")]);
    assert_eq!(code, 2);
    assert!(err.contains("unknown type `q8`"), "{err}");
}

#[test]
fn trap_names_kernel_block_and_thread() {
    let d = tempfile::tempdir().unwrap();
    let ptx = d.path().join("t.ptx");
    std::fs::write(
        &ptx,
        ".version 8.0\n.target sm_80\n.address_size 64\n.visible .entry boom()\n{\n .reg .pred %p;\n .reg .b32 %r<3>;\n mov.u32 %r1, %tid.x;\n mov.u32 %r2, %ctaid.x;\n setp.eq.u32 %p, %r1, 5;\n @!%p bra DONE;\n setp.eq.u32 %p, %r2, 2;\n @!%p bra DONE;\n trap;\nDONE:\n ret;\n}\n",
    )
    .unwrap();
    let (code, _, err) = run(&[
        s(ptx.to_string_lossy()),
        s("--kernel"),
        s("boom"),
        s("--grid"),
        s("4"),
        s("--block"),
        s("32"),
    ]);
    assert_eq!(code, 1);
    assert!(
        err.contains("kernel boom failed in block (2, 0, 0), thread (5, 0, 0)"),
        "{err}"
    );
}
