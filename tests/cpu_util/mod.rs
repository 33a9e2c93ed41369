//! Helpers shared by the cpu-target execution tests (`tests/cpu_*.rs`): loading PTX through
//! the embedding API, typed buffers, numba's array argument ABI, a seeded generator, float
//! comparisons with stated tolerances, IEEE half conversions, and `ptx2llvm run` through the
//! binary. References live in the tests; nothing here looks at our own output.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;

pub use ptx2llvm::api::{Arg, Buffer, Dim3, Module};

pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

pub fn corpus(p: &str) -> PathBuf {
    root().join("tests/corpus").join(p)
}

/// Compiles a PTX file at `opt`, panicking with the compiler's message.
pub fn load_opt(path: &Path, opt: u8) -> Module {
    let src = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    Module::from_ptx(&src, opt).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

pub fn load(path: &Path) -> Module {
    load_opt(path, 2)
}

pub fn load_src(src: &str) -> Module {
    Module::from_ptx(src, 2).unwrap_or_else(|e| panic!("{e}"))
}

/// The one kernel whose (mangled) name contains `part`.
pub fn kernel(m: &Module, part: &str) -> String {
    let names: Vec<String> = m
        .kernel_names()
        .into_iter()
        .filter(|n| n.contains(part))
        .collect();
    assert_eq!(names.len(), 1, "kernels matching `{part}`: {names:?}");
    names[0].clone()
}

pub fn d3(x: u32, y: u32, z: u32) -> Dim3 {
    Dim3([x, y, z])
}

/// Launches and panics with the launch error.
pub fn launch(m: &Module, k: &str, grid: Dim3, block: Dim3, shared: u32, mut args: Vec<Arg>) {
    m.launch(k, grid, block, shared, &mut args)
        .unwrap_or_else(|e| panic!("launch of {k} failed: {e}"));
}

/// Launches and returns the error message (panics if the launch succeeds).
pub fn launch_err(
    m: &Module,
    k: &str,
    grid: Dim3,
    block: Dim3,
    shared: u32,
    mut args: Vec<Arg>,
) -> String {
    match m.launch(k, grid, block, shared, &mut args) {
        Ok(()) => panic!("launch of {k} succeeded; an error was expected"),
        Err(e) => e.to_string(),
    }
}

pub fn ptr(b: &Buffer) -> Arg {
    Arg::Pointer(b.address())
}

pub fn u32a(v: u32) -> Arg {
    Arg::scalar_u32(v)
}

pub fn i32a(v: i32) -> Arg {
    Arg::Scalar(v.to_le_bytes().to_vec())
}

pub fn i64a(v: i64) -> Arg {
    Arg::Scalar(v.to_le_bytes().to_vec())
}

pub fn f32a(v: f32) -> Arg {
    Arg::scalar_f32(v)
}

pub fn f64a(v: f64) -> Arg {
    Arg::scalar_f64(v)
}

macro_rules! typed {
    ($($t:ty, $to:ident, $from:ident;)*) => {$(
        /// A buffer holding these values (little-endian).
        pub fn $to(v: &[$t]) -> Buffer {
            let bytes: Vec<u8> = v.iter().flat_map(|x| x.to_le_bytes()).collect();
            Buffer::from_bytes(&bytes)
        }
        /// The buffer's contents as these values.
        pub fn $from(b: &Buffer) -> Vec<$t> {
            b.as_slice()
                .chunks_exact(std::mem::size_of::<$t>())
                .map(|c| <$t>::from_le_bytes(c.try_into().unwrap()))
                .collect()
        }
    )*};
}

typed! {
    f32, buf_f32, get_f32;
    f64, buf_f64, get_f64;
    i32, buf_i32, get_i32;
    u32, buf_u32, get_u32;
    i64, buf_i64, get_i64;
    u64, buf_u64, get_u64;
    u16, buf_u16, get_u16;
}

/// The 7 parameters numba passes for a 1-D C-contiguous array: meminfo, parent, nitems,
/// itemsize, data, shape[0], strides[0].
pub fn numba_1d(b: &Buffer, n: usize, itemsize: usize) -> Vec<Arg> {
    vec![
        Arg::scalar_u64(0),
        Arg::scalar_u64(0),
        Arg::scalar_u64(n as u64),
        Arg::scalar_u64(itemsize as u64),
        ptr(b),
        Arg::scalar_u64(n as u64),
        Arg::scalar_u64(itemsize as u64),
    ]
}

/// The 9 parameters of a 2-D C-contiguous numba array of `rows` × `cols`.
pub fn numba_2d(b: &Buffer, rows: usize, cols: usize, itemsize: usize) -> Vec<Arg> {
    vec![
        Arg::scalar_u64(0),
        Arg::scalar_u64(0),
        Arg::scalar_u64((rows * cols) as u64),
        Arg::scalar_u64(itemsize as u64),
        ptr(b),
        Arg::scalar_u64(rows as u64),
        Arg::scalar_u64(cols as u64),
        Arg::scalar_u64((cols * itemsize) as u64),
        Arg::scalar_u64(itemsize as u64),
    ]
}

/// A small deterministic generator (xorshift64*).
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }
    pub fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    pub fn u32(&mut self) -> u32 {
        (self.next_u64() >> 32) as u32
    }
    /// Uniform in [lo, hi).
    pub fn f32(&mut self, lo: f32, hi: f32) -> f32 {
        lo + (hi - lo) * ((self.next_u64() >> 40) as f32 / (1u64 << 24) as f32)
    }
    pub fn f64(&mut self, lo: f64, hi: f64) -> f64 {
        lo + (hi - lo) * ((self.next_u64() >> 11) as f64 / (1u64 << 53) as f64)
    }
    /// Uniform in [lo, hi).
    pub fn int(&mut self, lo: i64, hi: i64) -> i64 {
        lo + (self.next_u64() % (hi - lo) as u64) as i64
    }
}

/// Asserts |got − want| ≤ abs + rel·|want| element-wise (NaN matches NaN).
pub fn assert_close_f32(got: &[f32], want: &[f32], rel: f32, abs: f32, what: &str) {
    assert_eq!(got.len(), want.len(), "{what}: lengths");
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        if g.is_nan() && w.is_nan() {
            continue;
        }
        assert!(
            (g - w).abs() <= abs + rel * w.abs() || g == w,
            "{what}[{i}]: got {g:e}, expected {w:e} (rel {rel:e}, abs {abs:e})"
        );
    }
}

pub fn assert_close_f64(got: &[f64], want: &[f64], rel: f64, abs: f64, what: &str) {
    assert_eq!(got.len(), want.len(), "{what}: lengths");
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        if g.is_nan() && w.is_nan() {
            continue;
        }
        assert!(
            (g - w).abs() <= abs + rel * w.abs() || g == w,
            "{what}[{i}]: got {g:e}, expected {w:e} (rel {rel:e}, abs {abs:e})"
        );
    }
}

/// IEEE half bits → f32 (exact).
pub fn f16_to_f32(h: u16) -> f32 {
    let sign = if h & 0x8000 != 0 { -1.0f32 } else { 1.0 };
    let e = ((h >> 10) & 0x1f) as i32;
    let m = (h & 0x3ff) as f32;
    match e {
        0 => sign * m * 2f32.powi(-24),
        31 => {
            if m == 0.0 {
                sign * f32::INFINITY
            } else {
                f32::NAN
            }
        }
        _ => sign * (1.0 + m / 1024.0) * 2f32.powi(e - 15),
    }
}

/// f64 → IEEE half bits, rounding to nearest even once (for exact f64 intermediates).
pub fn f64_to_f16(x: f64) -> u16 {
    if x.is_nan() {
        return 0x7e00;
    }
    let sign = if x.is_sign_negative() { 0x8000u16 } else { 0 };
    let a = x.abs();
    if a >= 65520.0 {
        return sign | 0x7c00;
    }
    // Quantum of the result: 2^(e-10) for normals (e ≥ -14), 2^-24 for subnormals.
    let e = if a == 0.0 {
        -14
    } else {
        a.log2().floor() as i32
    };
    let e = e.max(-14);
    let q = 2f64.powi(e - 10);
    let n = a / q; // exact: q is a power of two
    let r = n.round_ties_even();
    let v = r * q;
    // Re-encode v (exactly representable now).
    if v == 0.0 {
        return sign;
    }
    let ve = v.log2().floor() as i32;
    if ve < -14 {
        return sign | (v / 2f64.powi(-24)) as u16;
    }
    let mant = ((v / 2f64.powi(ve) - 1.0) * 1024.0) as u16;
    sign | (((ve + 15) as u16) << 10) | mant
}

/// bf16 bits → f32.
pub fn bf16_to_f32(b: u16) -> f32 {
    f32::from_bits((b as u32) << 16)
}

/// f32 → bf16 bits, round to nearest even.
pub fn f32_to_bf16(x: f32) -> u16 {
    let b = x.to_bits();
    if x.is_nan() {
        return 0x7fc0;
    }
    let rest = b & 0xffff;
    let mut r = b >> 16;
    if rest > 0x8000 || (rest == 0x8000 && r & 1 == 1) {
        r += 1;
    }
    r as u16
}

/// Runs `ptx2llvm run ARGS…`; returns (exit code, stdout, stderr).
pub fn run_cli(args: &[&str]) -> (i32, String, String) {
    let o = Command::new(env!("CARGO_BIN_EXE_ptx2llvm"))
        .arg("run")
        .args(args)
        .output()
        .unwrap();
    (
        o.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&o.stdout).into(),
        String::from_utf8_lossy(&o.stderr).into(),
    )
}

/// Compile errors of a PTX file for the cpu target (`ptx2llvm FILE --target cpu`).
pub fn cpu_compile_error(path: &Path) -> String {
    let o = Command::new(env!("CARGO_BIN_EXE_ptx2llvm"))
        .arg(path)
        .args(["--target", "cpu", "--emit", "llvm", "-o", "/dev/null"])
        .output()
        .unwrap();
    assert!(
        !o.status.success(),
        "{} compiled for the cpu target",
        path.display()
    );
    String::from_utf8_lossy(&o.stderr).into()
}
