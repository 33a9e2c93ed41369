//! The C API (`include/ptx2llvm.h`) and the `--emit obj` entry points (`include/ptx2llvm_rt.h`)
//! from C: compiles C drivers with the system C compiler (`$CC`, `cc` or `clang-22`) against
//! `target/<profile>/libptx2llvm.so` (rpath), runs them and checks what they print.
//!
//! - `examples/c-api/main.c`: saxpy through `ptx2llvm_module_from_ptx`/`ptx2llvm_launch`;
//! - `examples/c-api/obj_main.c`: saxpy from an object made with `--emit obj`, launched with
//!   `ptx2llvm_rt_launch`;
//! - an object using shared memory, barriers, a warp shuffle and a runtime arithmetic helper
//!   (`div.rz.f32`, reached through `ptx2llvm_rt_lookup`), and a `trap` reported by the
//!   launcher;
//! - the C API's error strings (bad PTX, unsupported instruction, unknown kernel, argument
//!   mismatch, invalid configuration, deadlock, trap) and a static-library link.

use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// `target/<profile>`: the test binary lives in its `deps/`. `cargo test` builds the library
/// only as an rlib for the tests, so the C libraries (`cdylib`, `staticlib`) are brought up to
/// date once with a nested `cargo build --lib` of the same profile.
fn lib_dir() -> PathBuf {
    static BUILT: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    BUILT
        .get_or_init(|| {
            let exe = std::env::current_exe().unwrap();
            let dir = exe.parent().unwrap().parent().unwrap().to_path_buf();
            if let Ok(cargo) = std::env::var("CARGO") {
                let profile = match dir.file_name().and_then(|n| n.to_str()) {
                    Some("debug") | None => "dev".to_string(),
                    Some(p) => p.to_string(),
                };
                let st = Command::new(cargo)
                    .args(["build", "--lib", "--profile", &profile])
                    .current_dir(root())
                    .status()
                    .unwrap();
                assert!(st.success(), "cargo build --lib --profile {profile} failed");
            }
            assert!(
                dir.join("libptx2llvm.so").exists(),
                "{} has no libptx2llvm.so (Cargo.toml's [lib] crate-type must include cdylib)",
                dir.display()
            );
            dir
        })
        .clone()
}

fn cc() -> String {
    if let Ok(c) = std::env::var("CC") {
        return c;
    }
    for c in ["cc", "clang-22", "clang", "gcc"] {
        if Command::new(c).arg("--version").output().is_ok() {
            return c.to_string();
        }
    }
    panic!("no C compiler found (set CC)");
}

/// Compiles `sources` (and objects) into `out`, linked with the shared library.
fn build_c(sources: &[&Path], out: &Path) {
    let lib = lib_dir();
    let o = Command::new(cc())
        .args(["-O1", "-std=c11", "-Wall", "-Werror"])
        .arg("-I")
        .arg(root().join("include"))
        .args(sources)
        .arg("-o")
        .arg(out)
        .arg(format!("-L{}", lib.display()))
        .arg("-lptx2llvm")
        .arg(format!("-Wl,-rpath,{}", lib.display()))
        .arg("-lm")
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "C build failed:\n{}",
        String::from_utf8_lossy(&o.stderr)
    );
}

fn run(exe: &Path, args: &[&Path]) -> (i32, String, String) {
    let o = Command::new(exe).args(args).output().unwrap();
    (
        o.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&o.stdout).into(),
        String::from_utf8_lossy(&o.stderr).into(),
    )
}

fn emit_obj(ptx: &Path, out: &Path) {
    // Objects hold both execution schemes unless PTX2LLVM_CPU_MODE=coroutine asks for
    // coroutines only; the tests choose the scheme when they run the program.
    let o = Command::new(env!("CARGO_BIN_EXE_ptx2llvm"))
        .env_remove("PTX2LLVM_CPU_MODE")
        .arg(ptx)
        .args(["--target", "cpu", "--emit", "obj", "-o"])
        .arg(out)
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "--emit obj failed: {}",
        String::from_utf8_lossy(&o.stderr)
    );
}

#[test]
fn c_api_example_runs_saxpy() {
    let d = tempfile::tempdir().unwrap();
    let exe = d.path().join("c-api-example");
    build_c(&[&root().join("examples/c-api/main.c")], &exe);
    let (code, out, err) = run(&exe, &[&root().join("examples/saxpy.ptx")]);
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(out.contains("kernel 0: saxpy"), "{out}");
    assert!(
        out.contains("expected error: kernel `saxpy` takes 4 parameter(s)"),
        "{out}"
    );
    assert!(out.trim_end().ends_with("PASS"), "{out}");
}

#[test]
fn emit_obj_saxpy_links_with_the_runtime() {
    let d = tempfile::tempdir().unwrap();
    let obj = d.path().join("saxpy.o");
    emit_obj(&root().join("examples/saxpy.ptx"), &obj);
    let exe = d.path().join("obj-example");
    build_c(&[&root().join("examples/c-api/obj_main.c"), &obj], &exe);
    let (code, out, err) = run(&exe, &[]);
    assert_eq!(code, 0, "{out}\n{err}");
    assert_eq!(out.trim(), "PASS");
}

/// A block reduction over shared memory with barriers, a warp shuffle, a runtime helper
/// (`div.rz.f32`) and a `trap` when the input asks for one.
const REDUCE_PTX: &str = r#"
.version 8.0
.target sm_80
.address_size 64

.visible .entry reduce(.param .u64 in, .param .u64 out, .param .f32 scale)
{
    .reg .pred %p<4>;
    .reg .b32 %r<12>;
    .reg .f32 %f<8>;
    .reg .b64 %rd<8>;
    .shared .align 4 .f32 partial[8];

    mov.u32 %r1, %tid.x;
    mov.u32 %r2, %ctaid.x;
    mov.u32 %r3, %ntid.x;
    mad.lo.u32 %r4, %r2, %r3, %r1;
    ld.param.u64 %rd1, [in];
    mul.wide.u32 %rd2, %r4, 4;
    add.u64 %rd3, %rd1, %rd2;
    ld.global.f32 %f1, [%rd3];
    setp.lt.f32 %p3, %f1, 0f00000000;
    @%p3 trap;
    // warp sum
    shfl.sync.bfly.b32 %f2, %f1, 16, 31, -1;
    add.f32 %f1, %f1, %f2;
    shfl.sync.bfly.b32 %f2, %f1, 8, 31, -1;
    add.f32 %f1, %f1, %f2;
    shfl.sync.bfly.b32 %f2, %f1, 4, 31, -1;
    add.f32 %f1, %f1, %f2;
    shfl.sync.bfly.b32 %f2, %f1, 2, 31, -1;
    add.f32 %f1, %f1, %f2;
    shfl.sync.bfly.b32 %f2, %f1, 1, 31, -1;
    add.f32 %f1, %f1, %f2;
    and.b32 %r5, %r1, 31;
    shr.u32 %r6, %r1, 5;
    setp.ne.u32 %p1, %r5, 0;
    mov.u32 %r7, partial;
    shl.b32 %r8, %r6, 2;
    add.u32 %r9, %r7, %r8;
    @!%p1 st.shared.f32 [%r9], %f1;
    bar.sync 0;
    setp.ne.u32 %p2, %r1, 0;
    @%p2 bra DONE;
    mov.f32 %f3, 0f00000000;
    shr.u32 %r10, %r3, 5;
    mov.u32 %r11, 0;
LOOP:
    shl.b32 %r8, %r11, 2;
    add.u32 %r9, %r7, %r8;
    ld.shared.f32 %f4, [%r9];
    add.f32 %f3, %f3, %f4;
    add.u32 %r11, %r11, 1;
    setp.lt.u32 %p1, %r11, %r10;
    @%p1 bra LOOP;
    ld.param.f32 %f5, [scale];
    div.rz.f32 %f6, %f3, %f5;
    ld.param.u64 %rd4, [out];
    mul.wide.u32 %rd5, %r2, 4;
    add.u64 %rd6, %rd4, %rd5;
    st.global.f32 [%rd6], %f6;
DONE:
    ret;
}
"#;

const REDUCE_MAIN: &str = r#"
#include <stdio.h>
#include <string.h>
#include "ptx2llvm_rt.h"

extern void reduce(const void *params, ptx2llvm_thread *t);
struct params { const float *in; float *out; float scale; };

int main(void) {
    enum { BLOCKS = 3, THREADS = 256 };
    static float in[BLOCKS * THREADS], out[BLOCKS];
    for (int i = 0; i < BLOCKS * THREADS; i++) in[i] = (float)(i % 10);
    struct params p = {in, out, 3.0f};
    ptx2llvm_dim3 grid = {BLOCKS, 1, 1}, block = {THREADS, 1, 1};
    char *err = NULL;
    printf("static shared %u\n", ptx2llvm_static_shared_bytes);
    if (ptx2llvm_rt_launch(reduce, "reduce", grid, block, ptx2llvm_static_shared_bytes, 0, &p,
                           sizeof p, &err) != 0) {
        printf("launch error: %s\n", err);
        return 1;
    }
    for (int b = 0; b < BLOCKS; b++) {
        unsigned bits;
        memcpy(&bits, &out[b], 4);
        printf("out[%d] = 0x%08x\n", b, bits);
    }
    in[2 * THREADS + 37] = -1.0f; /* block 2, thread 37 traps */
    if (ptx2llvm_rt_launch(reduce, "reduce", grid, block, ptx2llvm_static_shared_bytes, 0, &p,
                           sizeof p, &err) == 0) {
        printf("the trap was not reported\n");
        return 1;
    }
    printf("trap: %s\n", err);
    ptx2llvm_string_free(err);
    grid.x = 0;
    if (ptx2llvm_rt_launch(reduce, "reduce", grid, block, 0, 0, &p, sizeof p, &err) == 0) return 1;
    printf("config: %s\n", err);
    ptx2llvm_string_free(err);
    return 0;
}
"#;

#[test]
fn emit_obj_with_shared_memory_barriers_helpers_and_trap() {
    let d = tempfile::tempdir().unwrap();
    let ptx = d.path().join("reduce.ptx");
    std::fs::write(&ptx, REDUCE_PTX).unwrap();
    let obj = d.path().join("reduce.o");
    emit_obj(&ptx, &obj);
    let main = d.path().join("main.c");
    std::fs::write(&main, REDUCE_MAIN).unwrap();
    let exe = d.path().join("reduce");
    build_c(&[&main, &obj], &exe);
    let (code, out, err) = run(&exe, &[]);
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(out.contains("static shared 32\n"), "{out}");
    for b in 0..3usize {
        let sum: f32 = (b * 256..b * 256 + 256).map(|i| (i % 10) as f32).sum();
        // div.rz: the exact quotient rounded toward zero.
        let q = sum as f64 / 3.0;
        let mut want = q as f32;
        if (want as f64) > q {
            want = f32::from_bits(want.to_bits() - 1);
        }
        assert!(
            out.contains(&format!("out[{b}] = {:#010x}\n", want.to_bits())),
            "block {b}: want {want}\n{out}"
        );
    }
    assert!(
        out.contains(
            "trap: kernel reduce failed in block (2, 0, 0), thread (37, 0, 0): trap instruction executed"
        ),
        "{out}"
    );
    assert!(
        out.contains("config: invalid launch configuration: grid (0, 1, 1)"),
        "{out}"
    );
    // The object registers a thread-loop version of `reduce` that the launcher runs; with
    // PTX2LLVM_CPU_MODE=coroutine it runs the coroutine entry point: the same answers.
    let o = Command::new(&exe)
        .env("PTX2LLVM_CPU_MODE", "coroutine")
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0));
    assert_eq!(String::from_utf8_lossy(&o.stdout), out);
    let nm = Command::new("nm").arg(&obj).output();
    if let Ok(nm) = nm {
        let syms = String::from_utf8_lossy(&nm.stdout);
        assert!(
            (syms.contains(" T reduce.fis") || syms.contains(" T reduce.simd"))
                && syms.contains("ptx2llvm_rt_register_fis"),
            "{syms}"
        );
    }
}

/// A histogram whose global additions the cpu target sums per worker (`runtime/red.rs`):
/// `ld.global.nc` reads, `red`/`atom .add` with unused results, a barrier.
const HIST_PTX: &str = r#"
.version 8.0
.target sm_80
.address_size 64

.visible .entry hist(.param .u64 data, .param .u64 bins, .param .u32 n)
{
    .reg .pred %p<3>;
    .reg .b32 %r<12>;
    .reg .b64 %rd<8>;
    ld.param.u64 %rd1, [data];
    ld.param.u64 %rd2, [bins];
    ld.param.u32 %r1, [n];
    mov.u32 %r2, %tid.x;
    mov.u32 %r3, %ntid.x;
    mov.u32 %r4, %ctaid.x;
    mov.u32 %r5, %nctaid.x;
    mad.lo.s32 %r6, %r4, %r3, %r2;
    mul.lo.s32 %r7, %r5, %r3;
    bar.sync 0;
    setp.ge.u32 %p1, %r6, %r1;
    @%p1 bra DONE;
LOOP:
    cvt.u64.u32 %rd3, %r6;
    add.s64 %rd4, %rd1, %rd3;
    ld.global.nc.u8 %r8, [%rd4];
    mul.wide.u32 %rd5, %r8, 4;
    add.s64 %rd6, %rd2, %rd5;
    atom.global.add.u32 %r9, [%rd6], 1;
    red.global.add.u32 [%rd2+1024], 1;
    add.s32 %r6, %r6, %r7;
    setp.lt.u32 %p2, %r6, %r1;
    @%p2 bra LOOP;
DONE:
    ret;
}
"#;

const HIST_MAIN: &str = r#"
#include <stdio.h>
#include <stdint.h>
#include "ptx2llvm_rt.h"

extern void hist(const void *params, ptx2llvm_thread *t);
struct params { const unsigned char *data; uint32_t *bins; uint32_t n; };

int main(void) {
    enum { N = 100000 };
    static unsigned char data[N];
    static uint32_t bins[258];
    for (int i = 0; i < N; i++) data[i] = (unsigned char)(i * 7 % 251);
    struct params p = {data, bins, N};
    ptx2llvm_dim3 grid = {37, 1, 1}, block = {128, 1, 1};
    char *err = NULL;
    for (int rep = 0; rep < 2; rep++)
        if (ptx2llvm_rt_launch(hist, "hist", grid, block, 0, 0, &p, sizeof p, &err) != 0) {
            printf("launch error: %s\n", err);
            return 1;
        }
    printf("total %u\n", bins[256]);
    for (int b = 0; b < 256; b++) printf("%u\n", bins[b]);
    return 0;
}
"#;

#[test]
fn emit_obj_with_privatized_global_additions() {
    let d = tempfile::tempdir().unwrap();
    let ptx = d.path().join("hist.ptx");
    std::fs::write(&ptx, HIST_PTX).unwrap();
    let obj = d.path().join("hist.o");
    emit_obj(&ptx, &obj);
    let main = d.path().join("main.c");
    std::fs::write(&main, HIST_MAIN).unwrap();
    let exe = d.path().join("hist");
    build_c(&[&main, &obj], &exe);
    // Two launches: every count twice.
    let mut want = vec![0u32; 256];
    for i in 0..100_000u32 {
        want[(i * 7 % 251) as usize] += 2;
    }
    let expect = format!(
        "total 200000\n{}",
        want.iter().map(|c| format!("{c}\n")).collect::<String>()
    );
    for mode in ["auto", "coroutine"] {
        let o = Command::new(&exe)
            .env("PTX2LLVM_CPU_MODE", mode)
            .output()
            .unwrap();
        let out = String::from_utf8_lossy(&o.stdout);
        assert_eq!(o.status.code(), Some(0), "{mode}: {out}");
        assert_eq!(out, expect, "{mode}");
    }
    // The additions call the runtime's per-worker sums.
    if let Ok(nm) = Command::new("nm").arg(&obj).output() {
        let syms = String::from_utf8_lossy(&nm.stdout);
        assert!(syms.contains("U ptx2llvm_rt_red_add_u32"), "{syms}");
    }
}

const ERRORS_MAIN: &str = r#"
#include <stdio.h>
#include <string.h>
#include "ptx2llvm.h"

static const char *HDR = ".version 8.0\n.target sm_80\n.address_size 64\n";

static ptx2llvm_module *compile(const char *body, char **err) {
    static char buf[4096];
    snprintf(buf, sizeof buf, "%s%s", HDR, body);
    return ptx2llvm_module_from_ptx(buf, strlen(buf), err);
}

int main(void) {
    char *err = NULL;
    /* 1. a syntax error */
    if (compile(".visible .entry k() { bogus.op; }", &err)) return 1;
    printf("syntax: %s\n", err);
    ptx2llvm_string_free(err);
    /* 2. an instruction the cpu target cannot run */
    if (compile(".visible .entry k(.param .u64 p) { .reg .b64 %rd<2>; .reg .f32 %f<5>;\n"
                "ld.param.u64 %rd1, [p];\n"
                "tex.1d.v4.f32.s32 {%f1, %f2, %f3, %f4}, [%rd1, {0}];\n ret; }", &err))
        return 1;
    printf("unsupported: %s\n", err);
    ptx2llvm_string_free(err);
    /* 3. launches of a valid module */
    ptx2llvm_module *m = compile(
        ".visible .entry k(.param .u64 p, .param .u32 n) {\n"
        " .reg .b32 %r<3>; .reg .pred %q;\n"
        " mov.u32 %r1, %tid.x;\n"
        " setp.eq.u32 %q, %r1, 0;\n"
        " @%q bra END;\n"
        " bar.sync 0;\n"
        "END:\n"
        " bar.sync 1, 64;\n"
        " ret; }", &err);
    if (!m) { printf("compile: %s\n", err); return 1; }
    ptx2llvm_buffer *b = ptx2llvm_buffer_alloc(16);
    ptx2llvm_arg args[2] = {ptx2llvm_arg_buffer(b), ptx2llvm_arg_u32(1)};
    ptx2llvm_dim3 one = {1, 1, 1}, warp = {32, 1, 1};
    if (ptx2llvm_launch(m, "nope", one, one, 0, args, 2, &err) == 0) return 1;
    printf("unknown: %s\n", err);
    ptx2llvm_string_free(err);
    ptx2llvm_arg wrong[2] = {ptx2llvm_arg_buffer(b), ptx2llvm_arg_u64(1)};
    if (ptx2llvm_launch(m, "k", one, one, 0, wrong, 2, &err) == 0) return 1;
    printf("size: %s\n", err);
    ptx2llvm_string_free(err);
    if (ptx2llvm_launch(m, "k", one, one, 1u << 30, args, 2, &err) == 0) return 1;
    printf("shared: %s\n", err);
    ptx2llvm_string_free(err);
    if (ptx2llvm_launch(m, "k", one, warp, 0, args, 2, &err) == 0) return 1;
    printf("deadlock: %s\n", err);
    ptx2llvm_string_free(err);
    size_t count = 0, bytes = 0;
    if (ptx2llvm_module_kernel_params(m, "k", &count, &bytes, &err) != 0) return 1;
    printf("params: %zu %zu\n", count, bytes);
    printf("buffer: %zu aligned=%d\n", ptx2llvm_buffer_size(b),
           (int)(((uintptr_t)ptx2llvm_buffer_ptr(b)) % 256 == 0));
    ptx2llvm_module_free(m);
    /* 4. a module compiled for one block shape: it runs with it and refuses others */
    ptx2llvm_options o;
    ptx2llvm_options_init(&o);
    o.block = warp;
    char src[512];
    snprintf(src, sizeof src, "%s%s", HDR,
             ".visible .entry k(.param .u64 p, .param .u32 n) {\n"
             " .reg .b32 %r<3>; .reg .b64 %rd<3>;\n"
             " ld.param.u64 %rd1, [p];\n"
             " mov.u32 %r1, %ntid.x;\n"
             " bar.sync 0;\n"
             " st.global.u32 [%rd1], %r1;\n"
             " ret; }");
    m = ptx2llvm_module_from_ptx_opts(src, strlen(src), &o, &err);
    if (!m) { printf("compile: %s\n", err); return 1; }
    if (ptx2llvm_launch(m, "k", one, warp, 0, args, 2, &err) != 0) { printf("%s\n", err); return 1; }
    printf("ntid: %u\n", *(unsigned *)ptx2llvm_buffer_ptr(b));
    if (ptx2llvm_launch(m, "k", one, one, 0, args, 2, &err) == 0) return 1;
    printf("shape: %s\n", err);
    ptx2llvm_string_free(err);
    o.block.y = 0;
    if (ptx2llvm_module_from_ptx_opts(src, strlen(src), &o, &err)) return 1;
    printf("badblock: %s\n", err);
    ptx2llvm_string_free(err);
    ptx2llvm_buffer_free(b);
    ptx2llvm_module_free(m);
    ptx2llvm_module_free(NULL);
    ptx2llvm_string_free(NULL);
    printf("done\n");
    return 0;
}
"#;

#[test]
fn c_api_errors_are_strings() {
    let d = tempfile::tempdir().unwrap();
    let main = d.path().join("errors.c");
    std::fs::write(&main, ERRORS_MAIN).unwrap();
    let exe = d.path().join("errors");
    build_c(&[&main], &exe);
    let (code, out, err) = run(&exe, &[]);
    assert_eq!(code, 0, "{out}\n{err}");
    let line = |k: &str| -> String {
        out.lines()
            .find(|l| l.starts_with(k))
            .unwrap_or_else(|| panic!("no `{k}` line in\n{out}"))
            .to_string()
    };
    assert!(line("syntax:").contains("<ptx>:4:"), "{out}");
    assert!(line("syntax:").contains("error"), "{out}");
    assert!(
        line("unsupported:").contains("not supported on the cpu target: `tex.1d.v4.f32.s32`"),
        "{out}"
    );
    assert!(
        line("unknown:").contains("no kernel named `nope`; the module's kernels are: k"),
        "{out}"
    );
    assert!(
        line("size:").contains(
            "argument 1 of kernel `k` is an 8-byte scalar, but parameter 1 `n` (.u32) expects a 4-byte scalar"
        ),
        "{out}"
    );
    assert!(
        line("shared:").contains("invalid launch configuration: shared memory per block"),
        "{out}"
    );
    assert!(
        line("deadlock:").contains("kernel k deadlocked in block (0, 0, 0)"),
        "{out}"
    );
    // The buffer is padded to the largest parameter alignment, as a C struct is.
    assert_eq!(line("params:"), "params: 2 16");
    assert_eq!(line("buffer:"), "buffer: 16 aligned=1");
    assert_eq!(line("ntid:"), "ntid: 32");
    assert!(
        line("shape:").contains("kernel k was compiled for blocks of (32, 1, 1) threads"),
        "{out}"
    );
    assert!(
        line("badblock:").contains("ptx2llvm_options.block is (32, 0, 1)"),
        "{out}"
    );
    assert!(out.trim_end().ends_with("done"), "{out}");
}

#[test]
fn static_library_links() {
    let lib = lib_dir().join("libptx2llvm.a");
    assert!(
        lib.exists(),
        "{} is missing (crate-type staticlib)",
        lib.display()
    );
    let d = tempfile::tempdir().unwrap();
    let exe = d.path().join("static-example");
    let llvm_libdir = Command::new("llvm-config-22")
        .arg("--libdir")
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_else(|| "/usr/lib/llvm-22/lib".to_string());
    let o = Command::new(cc())
        .args(["-O1", "-std=c11"])
        .arg("-I")
        .arg(root().join("include"))
        .arg(root().join("examples/c-api/main.c"))
        .arg("-o")
        .arg(&exe)
        .arg(&lib)
        .arg(format!("-L{llvm_libdir}"))
        .args(["-lLLVM", "-lpthread", "-ldl", "-lm"])
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "static link failed:\n{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let (code, out, err) = run(&exe, &[&root().join("examples/saxpy.ptx")]);
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(out.trim_end().ends_with("PASS"), "{out}");
}
