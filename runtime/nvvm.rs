//! Host implementations of the `llvm.nvvm.*` operations the shared lowering emits (rounding-mode
//! arithmetic, approximate math, `prmt`, `bfind`, `isspacep`) plus the cpu target's `trap`,
//! `exit`, `vprintf` and `__assertfail` without an explicit thread argument. The cpu rewrite
//! renames `llvm.nvvm.X.Y` to `ptx2llvm_nvvm_X_Y`; `has` tells it which exist.
//!
//! Directed rounding (`.rz`, `.rm`, `.rp`) of `f32` and `f64` operations runs the operation on
//! the host FPU in that rounding mode (`fesetround`). `.ftz` flushes subnormal inputs and
//! results to zero of the same sign.

use std::cell::Cell;
use std::ffi::{c_char, c_void};

use super::abi::Thread;
use super::entry;

thread_local! {
    /// The context of the CUDA thread this worker is running.
    pub(crate) static CURRENT: Cell<*mut Thread> = const { Cell::new(std::ptr::null_mut()) };
}

/// The running thread's `ptx2llvm_thread *` (what generated code passes to the runtime).
#[no_mangle]
pub extern "C" fn ptx2llvm_rt_self() -> *mut Thread {
    CURRENT.with(|c| c.get())
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Rnd {
    N,
    Z,
    M,
    P,
}

fn ftz32(x: f32) -> f32 {
    if x.is_subnormal() {
        0.0f32.copysign(x)
    } else {
        x
    }
}

fn ftz64(x: f64) -> f64 {
    if x.is_subnormal() {
        0.0f64.copysign(x)
    } else {
        x
    }
}

extern "C" {
    fn fegetround() -> i32;
    fn fesetround(mode: i32) -> i32;
}

/// `<fenv.h>` `FE_TOWARDZERO`, `FE_DOWNWARD`, `FE_UPWARD` of the host.
#[cfg(target_arch = "aarch64")]
const FE_MODES: [i32; 3] = [0xc0_0000, 0x80_0000, 0x40_0000];
#[cfg(not(target_arch = "aarch64"))]
const FE_MODES: [i32; 3] = [0xc00, 0x400, 0x800];

/// `f(a, b, c)` of one correctly rounded IEEE operation (`*`, `/`, `sqrt`, `mul_add`) in
/// direction `d`: the host FPU in that rounding mode. (Stepping the nearest result by the sign of
/// an fma error term fails when that term underflows — `mul.rp(2^-600, 2^-600)`,
/// `fma.rz(tiny, tiny, c)` — and cannot give the sign of an exact zero sum.) `black_box` keeps
/// the operation between the mode switches.
fn directed64(d: Rnd, a: f64, b: f64, c: f64, f: fn(f64, f64, f64) -> f64) -> f64 {
    use std::hint::black_box;
    let mode = match d {
        Rnd::N => return f(a, b, c),
        Rnd::Z => FE_MODES[0],
        Rnd::M => FE_MODES[1],
        Rnd::P => FE_MODES[2],
    };
    // SAFETY: fegetround/fesetround only read and write this thread's floating-point mode,
    // which is restored before returning.
    unsafe {
        let old = fegetround();
        fesetround(mode);
        let r = black_box(f(black_box(a), black_box(b), black_box(c)));
        fesetround(old);
        r
    }
}

/// As `directed64`, for `f32` operations. (Rounding an `f64` result once more is not enough: an
/// `f32` sum or fused product-sum need not be exact in `f64`, e.g. `add.rp(1, 2^-149)`.)
fn directed32(d: Rnd, a: f32, b: f32, c: f32, f: fn(f32, f32, f32) -> f32) -> f32 {
    use std::hint::black_box;
    let mode = match d {
        Rnd::N => return f(a, b, c),
        Rnd::Z => FE_MODES[0],
        Rnd::M => FE_MODES[1],
        Rnd::P => FE_MODES[2],
    };
    // SAFETY: as in `directed64`.
    unsafe {
        let old = fegetround();
        fesetround(mode);
        let r = black_box(f(black_box(a), black_box(b), black_box(c)));
        fesetround(old);
        r
    }
}

fn add64(a: f64, b: f64, d: Rnd) -> f64 {
    directed64(d, a, b, 0.0, |a, b, _| a + b)
}

fn mul64(a: f64, b: f64, d: Rnd) -> f64 {
    directed64(d, a, b, 0.0, |a, b, _| a * b)
}

fn fma64(a: f64, b: f64, c: f64, d: Rnd) -> f64 {
    directed64(d, a, b, c, |a, b, c| a.mul_add(b, c))
}

/// Whether the exact `a*b + c` is below 2^-126 in magnitude: the product is exact in f64, the
/// sum exact as TwoSum's pair (s, e).
fn fma_below_normal(a: f32, b: f32, c: f32, rnd: Rnd) -> bool {
    let (p, c) = (a as f64 * b as f64, c as f64);
    tiny_after_rounding(p + c, rnd)
}

/// Whether `e` is tiny by the H200's rule (the s17 probes, docs/GPU_DIFF.md): below 2^-126
/// after rounding to 24 bits with an unbounded exponent in mode `rnd`.
fn tiny_after_rounding(e: f64, rnd: Rnd) -> bool {
    let min = f32::MIN_POSITIVE as f64;
    let largest_below = min * (1.0 - 2f64.powi(-24));
    let up = match rnd {
        Rnd::Z => false,
        Rnd::P => e > 0.0 && e.abs() > largest_below,
        Rnd::M => e < 0.0 && e.abs() > largest_below,
        Rnd::N => e.abs() >= min * (1.0 - 2f64.powi(-25)),
    };
    e.abs() < min && !up
}

/// `.ftz` by the exact result `e` (as an H200 flushes): zero where `e` is tiny after rounding
/// (`tiny_after_rounding`, `.rn`).
fn ftz_exact(e: f64, r: f32) -> f32 {
    if tiny_after_rounding(e, Rnd::N) {
        0.0f32.copysign(r)
    } else {
        r
    }
}

macro_rules! f32_ops {
    ($($name:ident $rnd:ident $ftz:literal;)*) => {$(
        paste_f32!($name, $rnd, $ftz);
    )*};
}

macro_rules! paste_f32 {
    ($name:ident, $rnd:ident, $ftz:literal) => {
        pub mod $name {
            use super::*;
            #[inline]
            fn f(x: f32) -> f32 {
                if $ftz {
                    ftz32(x)
                } else {
                    x
                }
            }
            pub extern "C" fn add(a: f32, b: f32) -> f32 {
                f(directed32(Rnd::$rnd, f(a), f(b), 0.0, |a, b, _| a + b))
            }
            /// `.ftz` flushes when the exact result `e` is tiny after rounding to 24 bits with
            /// an unbounded exponent (as an H200 does), not by `r`, the rounded one.
            #[inline]
            fn tiny(e: f64, r: f32) -> f32 {
                if $ftz && tiny_after_rounding(e, Rnd::$rnd) {
                    0.0f32.copysign(r)
                } else {
                    r
                }
            }
            pub extern "C" fn mul(a: f32, b: f32) -> f32 {
                let (a, b) = (f(a), f(b));
                tiny(
                    a as f64 * b as f64,
                    f(directed32(Rnd::$rnd, a, b, 0.0, |a, b, _| a * b)),
                )
            }
            pub extern "C" fn fma(a: f32, b: f32, c: f32) -> f32 {
                let (a, b, c) = (f(a), f(b), f(c));
                let r = f(directed32(Rnd::$rnd, a, b, c, |a, b, c| a.mul_add(b, c)));
                if $ftz && fma_below_normal(a, b, c, Rnd::$rnd) {
                    0.0f32.copysign(r)
                } else {
                    r
                }
            }
            pub extern "C" fn div(a: f32, b: f32) -> f32 {
                let (a, b) = (f(a), f(b));
                tiny(
                    a as f64 / b as f64,
                    f(directed32(Rnd::$rnd, a, b, 0.0, |a, b, _| a / b)),
                )
            }
            pub extern "C" fn rcp(a: f32) -> f32 {
                div(1.0, a)
            }
            pub extern "C" fn sqrt(a: f32) -> f32 {
                f(directed32(Rnd::$rnd, f(a), 0.0, 0.0, |a, _, _| a.sqrt()))
            }
        }
    };
}

f32_ops! {
    rn_f N false; rz_f Z false; rm_f M false; rp_f P false;
    rn_ftz_f N true; rz_ftz_f Z true; rm_ftz_f M true; rp_ftz_f P true;
}

macro_rules! f64_ops {
    ($($name:ident $rnd:ident;)*) => {$(
        pub mod $name {
            use super::*;
            pub extern "C" fn add(a: f64, b: f64) -> f64 { add64(a, b, Rnd::$rnd) }
            pub extern "C" fn mul(a: f64, b: f64) -> f64 { mul64(a, b, Rnd::$rnd) }
            pub extern "C" fn fma(a: f64, b: f64, c: f64) -> f64 { fma64(a, b, c, Rnd::$rnd) }
            pub extern "C" fn div(a: f64, b: f64) -> f64 { directed64(Rnd::$rnd, a, b, 0.0, |a, b, _| a / b) }
            pub extern "C" fn rcp(a: f64) -> f64 { div(1.0, a) }
            pub extern "C" fn sqrt(a: f64) -> f64 { directed64(Rnd::$rnd, a, 0.0, 0.0, |a, _, _| a.sqrt()) }
        }
    )*};
}

f64_ops! { rn_d N; rz_d Z; rm_d M; rp_d P; }

extern "C" fn approx_div(a: f32, b: f32) -> f32 {
    a / b
}
extern "C" fn approx_div_ftz(a: f32, b: f32) -> f32 {
    let (a, b) = (ftz32(a), ftz32(b));
    ftz_exact(a as f64 / b as f64, ftz32(a / b))
}
extern "C" fn ex2(a: f32) -> f32 {
    a.exp2()
}
extern "C" fn ex2_ftz(a: f32) -> f32 {
    ftz32(ftz32(a).exp2())
}
extern "C" fn lg2(a: f32) -> f32 {
    a.log2()
}
extern "C" fn lg2_ftz(a: f32) -> f32 {
    ftz32(ftz32(a).log2())
}
extern "C" fn sin(a: f32) -> f32 {
    a.sin()
}
extern "C" fn cos(a: f32) -> f32 {
    a.cos()
}
extern "C" fn sqrt_approx(a: f32) -> f32 {
    a.sqrt()
}
extern "C" fn sqrt_approx_ftz(a: f32) -> f32 {
    ftz32(ftz32(a).sqrt())
}
extern "C" fn rsqrt(a: f32) -> f32 {
    1.0 / a.sqrt()
}
extern "C" fn rsqrt_ftz(a: f32) -> f32 {
    ftz32(1.0 / ftz32(a).sqrt())
}
extern "C" fn rsqrt_d(a: f64) -> f64 {
    1.0 / a.sqrt()
}
extern "C" fn rcp_approx_ftz_d(a: f64) -> f64 {
    ftz64(1.0 / ftz64(a))
}
extern "C" fn rcp_approx_ftz_f(a: f32) -> f32 {
    let a = ftz32(a);
    ftz_exact(1.0 / a as f64, ftz32(1.0 / a))
}
extern "C" fn fabs_ftz(a: f32) -> f32 {
    ftz32(a).abs()
}
extern "C" fn fmin_ftz(a: f32, b: f32) -> f32 {
    ftz32(ftz32(a).min(ftz32(b)))
}
extern "C" fn fmax_ftz(a: f32, b: f32) -> f32 {
    ftz32(ftz32(a).max(ftz32(b)))
}
extern "C" fn fmin_ftz_nan(a: f32, b: f32) -> f32 {
    if a.is_nan() || b.is_nan() {
        f32::NAN
    } else {
        fmin_ftz(a, b)
    }
}
extern "C" fn fmax_ftz_nan(a: f32, b: f32) -> f32 {
    if a.is_nan() || b.is_nan() {
        f32::NAN
    } else {
        fmax_ftz(a, b)
    }
}

/// `prmt.b32` default mode: byte selection with sign replication.
extern "C" fn prmt(a: u32, b: u32, c: u32) -> u32 {
    let bytes = (b as u64) << 32 | a as u64;
    let mut r = 0u32;
    for k in 0..4 {
        let sel = (c >> (4 * k)) & 0xf;
        let byte = ((bytes >> (8 * (sel & 7))) & 0xff) as u32;
        let v = if sel & 8 != 0 {
            if byte & 0x80 != 0 {
                0xff
            } else {
                0
            }
        } else {
            byte
        };
        r |= v << (8 * k);
    }
    r
}

/// `bfind` (`llvm.nvvm.flo.{u,s}.i32/i64`): position of the most significant non-sign bit,
/// 0xffffffff if none.
extern "C" fn flo_u32(a: u32, _shift: bool) -> u32 {
    if a == 0 {
        u32::MAX
    } else {
        31 - a.leading_zeros()
    }
}
extern "C" fn flo_s32(a: i32, s: bool) -> u32 {
    flo_u32(if a < 0 { !a as u32 } else { a as u32 }, s)
}
extern "C" fn flo_u64(a: u64, _shift: bool) -> u32 {
    if a == 0 {
        u32::MAX
    } else {
        63 - a.leading_zeros()
    }
}
extern "C" fn flo_s64(a: i64, s: bool) -> u32 {
    flo_u64(if a < 0 { !a as u64 } else { a as u64 }, s)
}

extern "C" fn isspacep_global(_p: *const u8) -> bool {
    true
}
extern "C" fn isspacep_const(_p: *const u8) -> bool {
    false
}
extern "C" fn isspacep_local(_p: *const u8) -> bool {
    false
}
extern "C" fn isspacep_shared(p: *const u8) -> bool {
    let t = ptx2llvm_rt_self();
    if t.is_null() {
        return false;
    }
    // SAFETY: the running thread's context.
    let (base, size) = unsafe { ((*t).shared as usize, (*t).total_smem_size as usize) };
    (p as usize).wrapping_sub(base) < size
}

/// `trap` without a thread argument.
extern "C" fn trap0() -> ! {
    // SAFETY: called from a kernel on a runtime thread.
    unsafe { entry::ptx2llvm_rt_trap(ptx2llvm_rt_self(), std::ptr::null()) }
}

/// `exit` from a device function.
extern "C" fn exit0() -> ! {
    // SAFETY: called from a kernel on a runtime thread.
    unsafe { entry::ptx2llvm_rt_exit(ptx2llvm_rt_self()) }
}

/// `vprintf(format, args)` as PTX declares it.
///
/// # Safety
/// As `ptx2llvm_rt_vprintf`.
#[no_mangle]
pub unsafe extern "C" fn ptx2llvm_rt_vprintf_dev(format: *const c_char, args: *const u8) -> i32 {
    entry::ptx2llvm_rt_vprintf(ptx2llvm_rt_self(), format, args)
}

/// `__assertfail(message, file, line, function, charSize)` as PTX declares it.
///
/// # Safety
/// As `ptx2llvm_rt_assertfail`.
#[no_mangle]
pub unsafe extern "C" fn ptx2llvm_rt_assertfail_dev(
    message: *const c_char,
    file: *const c_char,
    line: u32,
    function: *const c_char,
    char_size: u64,
) {
    entry::ptx2llvm_rt_assertfail(ptx2llvm_rt_self(), message, file, line, function, char_size)
}

/// Every helper, by its `ptx2llvm_nvvm_*` name.
pub fn table() -> Vec<(String, *const c_void)> {
    let mut v: Vec<(String, *const c_void)> = Vec::new();
    let mut w: Vec<(String, *const c_void)> = Vec::new();
    let mut add = |n: &str, p: *const c_void| w.push((format!("ptx2llvm_nvvm_{n}"), p));
    macro_rules! rnd32 {
        ($($m:ident $r:literal $f:literal;)*) => {$(
            add(&format!("add_{}{}_f", $r, $f), $m::add as *const c_void);
            add(&format!("mul_{}{}_f", $r, $f), $m::mul as *const c_void);
            add(&format!("fma_{}{}_f", $r, $f), $m::fma as *const c_void);
            add(&format!("div_{}{}_f", $r, $f), $m::div as *const c_void);
            add(&format!("rcp_{}{}_f", $r, $f), $m::rcp as *const c_void);
            add(&format!("sqrt_{}{}_f", $r, $f), $m::sqrt as *const c_void);
        )*};
    }
    rnd32! {
        rn_f "rn" ""; rz_f "rz" ""; rm_f "rm" ""; rp_f "rp" "";
        rn_ftz_f "rn" "_ftz"; rz_ftz_f "rz" "_ftz"; rm_ftz_f "rm" "_ftz"; rp_ftz_f "rp" "_ftz";
    }
    macro_rules! rnd64 {
        ($($m:ident $r:literal;)*) => {$(
            add(&format!("add_{}_d", $r), $m::add as *const c_void);
            add(&format!("mul_{}_d", $r), $m::mul as *const c_void);
            add(&format!("fma_{}_d", $r), $m::fma as *const c_void);
            add(&format!("div_{}_d", $r), $m::div as *const c_void);
            add(&format!("rcp_{}_d", $r), $m::rcp as *const c_void);
            add(&format!("sqrt_{}_d", $r), $m::sqrt as *const c_void);
        )*};
    }
    rnd64! { rn_d "rn"; rz_d "rz"; rm_d "rm"; rp_d "rp"; }
    // The helpers the shared lowering's default `Target::rounded_op` calls for `.f64`.
    for (r, mul, div, fma, sqrt, rcp) in [
        (
            "rz",
            rz_d::mul as *const c_void,
            rz_d::div as *const c_void,
            rz_d::fma as *const c_void,
            rz_d::sqrt as *const c_void,
            rz_d::rcp as *const c_void,
        ),
        (
            "rm",
            rm_d::mul as *const c_void,
            rm_d::div as *const c_void,
            rm_d::fma as *const c_void,
            rm_d::sqrt as *const c_void,
            rm_d::rcp as *const c_void,
        ),
        (
            "rp",
            rp_d::mul as *const c_void,
            rp_d::div as *const c_void,
            rp_d::fma as *const c_void,
            rp_d::sqrt as *const c_void,
            rp_d::rcp as *const c_void,
        ),
    ] {
        v.push((format!("ptx2llvm_rt_mul_{r}_f64"), mul));
        v.push((format!("ptx2llvm_rt_div_{r}_f64"), div));
        v.push((format!("ptx2llvm_rt_fma_{r}_f64"), fma));
        v.push((format!("ptx2llvm_rt_sqrt_{r}_f64"), sqrt));
        v.push((format!("ptx2llvm_rt_rcp_{r}_f64"), rcp));
    }
    add("div_approx_f", approx_div as *const c_void);
    add("div_approx_ftz_f", approx_div_ftz as *const c_void);
    add("div_full", approx_div as *const c_void);
    add("div_full_ftz", approx_div_ftz as *const c_void);
    add("ex2_approx_f32", ex2 as *const c_void);
    add("ex2_approx_f", ex2 as *const c_void);
    add("ex2_approx_ftz_f32", ex2_ftz as *const c_void);
    add("ex2_approx_ftz_f", ex2_ftz as *const c_void);
    add("lg2_approx_f", lg2 as *const c_void);
    add("lg2_approx_ftz_f", lg2_ftz as *const c_void);
    add("sin_approx_f", sin as *const c_void);
    add("sin_approx_ftz_f", sin as *const c_void);
    add("cos_approx_f", cos as *const c_void);
    add("cos_approx_ftz_f", cos as *const c_void);
    add("sqrt_approx_f", sqrt_approx as *const c_void);
    add("sqrt_approx_ftz_f", sqrt_approx_ftz as *const c_void);
    add("rsqrt_approx_f", rsqrt as *const c_void);
    add("rsqrt_approx_ftz_f", rsqrt_ftz as *const c_void);
    add("rsqrt_approx_d", rsqrt_d as *const c_void);
    add("rcp_approx_ftz_d", rcp_approx_ftz_d as *const c_void);
    add("rcp_approx_ftz_f", rcp_approx_ftz_f as *const c_void);
    add("fabs_ftz_f32", fabs_ftz as *const c_void);
    add("fmin_ftz_f", fmin_ftz as *const c_void);
    add("fmax_ftz_f", fmax_ftz as *const c_void);
    add("fmin_ftz_nan_f", fmin_ftz_nan as *const c_void);
    add("fmax_ftz_nan_f", fmax_ftz_nan as *const c_void);
    add("prmt", prmt as *const c_void);
    add("flo_u_i32", flo_u32 as *const c_void);
    add("flo_s_i32", flo_s32 as *const c_void);
    add("flo_u_i64", flo_u64 as *const c_void);
    add("flo_s_i64", flo_s64 as *const c_void);
    add("isspacep_global", isspacep_global as *const c_void);
    add("isspacep_const", isspacep_const as *const c_void);
    add("isspacep_local", isspacep_local as *const c_void);
    add("isspacep_shared", isspacep_shared as *const c_void);
    add("trap", trap0 as *const c_void);
    add("exit", exit0 as *const c_void);
    v.extend(w);
    v
}

/// Whether a helper named `name` (`ptx2llvm_nvvm_*`) exists.
pub fn has(name: &str) -> bool {
    table().iter().any(|(n, _)| n == name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn directed_rounding() {
        // Compared with the exact quotient (in f64): RP(1/3) is also RN(1/3) in f32.
        let third = 1.0f64 / 3.0;
        assert!((rz_f::div(1.0, 3.0) as f64) < third && (rp_f::div(1.0, 3.0) as f64) > third);
        assert_eq!(
            rz_f::div(1.0, 3.0),
            f32::from_bits((1.0f32 / 3.0).to_bits() - 1)
        );
        assert_eq!(rz_f::add(1.0, 1e-10), 1.0);
        assert_eq!(rp_f::add(1.0, 1e-10), f32::from_bits(0x3f80_0001));
        assert_eq!(
            rm_d::add(1.0, -1e-30),
            f64::from_bits(0x3fef_ffff_ffff_ffff)
        );
        assert_eq!(rn_d::mul(3.0, 7.0), 21.0);
        assert_eq!(prmt(0x33221100, 0x77665544, 0x3210), 0x33221100);
        assert_eq!(prmt(0x33221100, 0x77665544, 0x7654), 0x77665544);
        assert_eq!(flo_u32(0x80, false), 7);
        assert_eq!(flo_s32(-1, false), u32::MAX);
    }
}
