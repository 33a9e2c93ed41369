//! Floating-point building blocks shared by the float, convert and atomic lowerings, all in
//! target-independent LLVM IR: flush-to-zero, `.sat`, `.relu`, canonical NaNs, PTX `min`/`max`,
//! and the default realizations of the [`Target`] hooks for directed rounding and `.approx`.
//!
//! Directed rounding (`.rz/.rm/.rp`) works by computing the round-to-nearest result `t` together
//! with the sign of the rounding error `exact - t` (exactly, by error-free transformations), and
//! then stepping `t` by one ulp toward the requested direction when the error points that way:
//! for any inexact result, the directed result is `t` or its neighbour on the error's side.

use super::target::{ApproxOp, RoundedOp, Rounding};
use super::*;

/// The LLVM float type of a scalar float PTX type.
pub fn fty<'c>(l: &Lowerer<'c, '_>, t: Ty) -> FloatType<'c> {
    t.llvm(l.ctx).into_float_type()
}

/// Width in bits of a float type.
pub fn fbits<'c>(l: &Lowerer<'c, '_>, ft: FloatType<'c>) -> u32 {
    l.bits_of(ft.into())
}

fn is_bf16<'c>(l: &Lowerer<'c, '_>, ft: FloatType<'c>) -> bool {
    ft == l.ctx.bf16_type()
}

/// The overload suffix of an LLVM float type (`f16`, `bf16`, `f32`, `f64`).
pub fn ftname<'c>(l: &Lowerer<'c, '_>, ft: FloatType<'c>) -> &'static str {
    match fbits(l, ft) {
        16 if is_bf16(l, ft) => "bf16",
        16 => "f16",
        32 => "f32",
        _ => "f64",
    }
}

pub fn to_bits<'c>(l: &Lowerer<'c, '_>, x: FloatValue<'c>) -> IntValue<'c> {
    let w = fbits(l, x.get_type());
    l.b.build_bit_cast(x, l.int(w), "")
        .unwrap()
        .into_int_value()
}

pub fn from_bits<'c>(l: &Lowerer<'c, '_>, i: IntValue<'c>, ft: FloatType<'c>) -> FloatValue<'c> {
    l.b.build_bit_cast(i, ft, "").unwrap().into_float_value()
}

pub fn fconst<'c>(ft: FloatType<'c>, v: f64) -> FloatValue<'c> {
    ft.const_float(v)
}

pub fn fcmp<'c>(
    l: &Lowerer<'c, '_>,
    p: FloatPredicate,
    a: FloatValue<'c>,
    b: FloatValue<'c>,
) -> IntValue<'c> {
    l.b.build_float_compare(p, a, b, "").unwrap()
}

pub fn sel<'c, V: BasicValue<'c>>(
    l: &Lowerer<'c, '_>,
    c: IntValue<'c>,
    a: V,
    b: V,
) -> BasicValueEnum<'c> {
    l.b.build_select(c, a, b, "").unwrap()
}

pub fn fsel<'c>(
    l: &Lowerer<'c, '_>,
    c: IntValue<'c>,
    a: FloatValue<'c>,
    b: FloatValue<'c>,
) -> FloatValue<'c> {
    sel(l, c, a, b).into_float_value()
}

pub fn isel<'c>(
    l: &Lowerer<'c, '_>,
    c: IntValue<'c>,
    a: IntValue<'c>,
    b: IntValue<'c>,
) -> IntValue<'c> {
    sel(l, c, a, b).into_int_value()
}

pub fn and<'c>(l: &Lowerer<'c, '_>, a: IntValue<'c>, b: IntValue<'c>) -> IntValue<'c> {
    l.b.build_and(a, b, "").unwrap()
}
pub fn or<'c>(l: &Lowerer<'c, '_>, a: IntValue<'c>, b: IntValue<'c>) -> IntValue<'c> {
    l.b.build_or(a, b, "").unwrap()
}
pub fn not<'c>(l: &Lowerer<'c, '_>, a: IntValue<'c>) -> IntValue<'c> {
    l.b.build_not(a, "").unwrap()
}

/// `x` is a NaN.
pub fn is_nan<'c>(l: &Lowerer<'c, '_>, x: FloatValue<'c>) -> IntValue<'c> {
    fcmp(l, FloatPredicate::UNO, x, x)
}

/// The sign bit of `x` is set.
pub fn sign_bit<'c>(l: &Lowerer<'c, '_>, x: FloatValue<'c>) -> IntValue<'c> {
    let b = to_bits(l, x);
    l.b.build_int_compare(IntPredicate::SLT, b, b.get_type().const_zero(), "")
        .unwrap()
}

/// `|x|` is infinite.
pub fn is_inf<'c>(l: &Lowerer<'c, '_>, x: FloatValue<'c>) -> IntValue<'c> {
    let inf = fconst(x.get_type(), f64::INFINITY);
    fcmp(l, FloatPredicate::OEQ, fabs(l, x), inf)
}

/// `x` is finite (not infinite, not NaN).
pub fn is_finite<'c>(l: &Lowerer<'c, '_>, x: FloatValue<'c>) -> IntValue<'c> {
    let inf = fconst(x.get_type(), f64::INFINITY);
    fcmp(l, FloatPredicate::OLT, fabs(l, x), inf)
}

pub fn fabs<'c>(l: &Lowerer<'c, '_>, x: FloatValue<'c>) -> FloatValue<'c> {
    let ft = x.get_type();
    l.call_v(
        &format!("llvm.fabs.{}", ftname(l, ft)),
        ft.into(),
        &[x.into()],
    )
    .into_float_value()
}

/// The magnitude of `mag` with the sign of `sgn`.
pub fn copysign<'c>(
    l: &Lowerer<'c, '_>,
    mag: FloatValue<'c>,
    sgn: FloatValue<'c>,
) -> FloatValue<'c> {
    let ft = mag.get_type();
    l.call_v(
        &format!("llvm.copysign.{}", ftname(l, ft)),
        ft.into(),
        &[mag.into(), sgn.into()],
    )
    .into_float_value()
}

pub fn fneg<'c>(l: &Lowerer<'c, '_>, x: FloatValue<'c>) -> FloatValue<'c> {
    l.b.build_float_neg(x, "").unwrap()
}
pub fn fadd<'c>(l: &Lowerer<'c, '_>, a: FloatValue<'c>, b: FloatValue<'c>) -> FloatValue<'c> {
    l.b.build_float_add(a, b, "").unwrap()
}
pub fn fsub<'c>(l: &Lowerer<'c, '_>, a: FloatValue<'c>, b: FloatValue<'c>) -> FloatValue<'c> {
    l.b.build_float_sub(a, b, "").unwrap()
}
pub fn fmul<'c>(l: &Lowerer<'c, '_>, a: FloatValue<'c>, b: FloatValue<'c>) -> FloatValue<'c> {
    l.b.build_float_mul(a, b, "").unwrap()
}
pub fn fdiv<'c>(l: &Lowerer<'c, '_>, a: FloatValue<'c>, b: FloatValue<'c>) -> FloatValue<'c> {
    l.b.build_float_div(a, b, "").unwrap()
}
pub fn ffma<'c>(
    l: &Lowerer<'c, '_>,
    a: FloatValue<'c>,
    b: FloatValue<'c>,
    c: FloatValue<'c>,
) -> FloatValue<'c> {
    let ft = a.get_type();
    l.call_v(
        &format!("llvm.fma.{}", ftname(l, ft)),
        ft.into(),
        &[a.into(), b.into(), c.into()],
    )
    .into_float_value()
}
/// A one-operand overloaded float intrinsic (`sqrt`, `sin`, `exp2`, `roundeven`, …).
pub fn unary<'c>(l: &Lowerer<'c, '_>, name: &str, x: FloatValue<'c>) -> FloatValue<'c> {
    let ft = x.get_type();
    l.call_v(
        &format!("llvm.{name}.{}", ftname(l, ft)),
        ft.into(),
        &[x.into()],
    )
    .into_float_value()
}
pub fn fext<'c>(l: &Lowerer<'c, '_>, x: FloatValue<'c>, to: FloatType<'c>) -> FloatValue<'c> {
    if x.get_type() == to {
        x
    } else {
        l.b.build_float_ext(x, to, "").unwrap()
    }
}
pub fn ftrunc<'c>(l: &Lowerer<'c, '_>, x: FloatValue<'c>, to: FloatType<'c>) -> FloatValue<'c> {
    if x.get_type() == to {
        x
    } else {
        l.b.build_float_trunc(x, to, "").unwrap()
    }
}

/// Converts between float types of any widths (`fpext`/`fptrunc`; `f16` ↔ `bf16` through
/// `f32`, which is exact on the way up).
pub fn fconv<'c>(l: &Lowerer<'c, '_>, x: FloatValue<'c>, to: FloatType<'c>) -> FloatValue<'c> {
    let (fb, tb) = (fbits(l, x.get_type()), fbits(l, to));
    if x.get_type() == to {
        x
    } else if fb == tb {
        ftrunc(l, fext(l, x, l.ctx.f32_type()), to)
    } else if fb < tb {
        fext(l, x, to)
    } else {
        ftrunc(l, x, to)
    }
}

/// The canonical NaN of a float type (all ones but the sign bit: `0x7fffffff`, `0x7fff`, …),
/// the NaN NVIDIA hardware produces.
pub fn canonical_nan<'c>(l: &Lowerer<'c, '_>, ft: FloatType<'c>) -> FloatValue<'c> {
    let w = fbits(l, ft);
    let it = l.int(w);
    let v = it.const_all_ones();
    let v =
        l.b.build_right_shift(v, it.const_int(1, false), false, "")
            .unwrap();
    from_bits(l, v, ft)
}

/// `x`, or the canonical NaN where `x` is a NaN and the target computes NaNs in IR
/// ([`Target::gpu_nans`](super::target::Target::gpu_nans)). f16/bf16/f32 only: measured on an
/// H200 (sm_90, driver 580), every f32/f16/bf16 arithmetic result, `.approx` result and
/// conversion from a narrow float that is a NaN is `0x7fffffff` / `0x7fff`, whatever the
/// operands' NaNs; f64 arithmetic propagates an operand's NaN instead.
pub fn gpu_nan<'c>(l: &Lowerer<'c, '_>, x: FloatValue<'c>) -> FloatValue<'c> {
    let ft = x.get_type();
    if !l.target.gpu_nans() || fbits(l, ft) > 32 {
        return x;
    }
    // (LLVM's x86 back end drops this select over a `sqrt` whose result is already a NaN
    // there: `sqrt.rn.f32`/`sqrt.approx.f32` of a negative number keep the host's NaN.)
    canonicalize_nan(l, x)
}

/// `a` where `c`, else `b`, selected on the bits. LLVM treats every NaN as the same value: a
/// float `select` between a NaN and an operation that already gives a NaN there may be folded
/// away (the x86 back end dropped the canonicalizing select over `sqrt` of a negative number);
/// an integer select keeps the bits.
pub fn bits_sel<'c>(
    l: &Lowerer<'c, '_>,
    c: IntValue<'c>,
    a: FloatValue<'c>,
    b: FloatValue<'c>,
) -> FloatValue<'c> {
    from_bits(l, isel(l, c, to_bits(l, a), to_bits(l, b)), b.get_type())
}

/// `sqrt`'s result `r` of (flushed) input `x` with the GPU's NaN: the canonical NaN for a
/// negative or NaN `x` (f32 only; f64 results propagate like the host's).
pub fn gpu_sqrt_nan<'c>(
    l: &Lowerer<'c, '_>,
    x: FloatValue<'c>,
    r: FloatValue<'c>,
) -> FloatValue<'c> {
    let ft = x.get_type();
    if !l.target.gpu_nans() || fbits(l, ft) > 32 {
        return r;
    }
    let bad = fcmp(l, FloatPredicate::ULT, x, ft.const_zero());
    bits_sel(l, bad, canonical_nan(l, ft), r)
}

/// `x` with its quiet bit set (a signalling NaN made quiet, as an operation returns it).
pub fn quiet<'c>(l: &Lowerer<'c, '_>, x: FloatValue<'c>) -> FloatValue<'c> {
    let ft = x.get_type();
    let w = fbits(l, ft);
    let q = match w {
        16 if is_bf16(l, ft) => 1u64 << 6,
        16 => 1 << 9,
        32 => 1 << 22,
        _ => 1 << 51,
    };
    let b = to_bits(l, x);
    let b = l.b.build_or(b, l.int(w).const_int(q, false), "").unwrap();
    from_bits(l, b, ft)
}

/// The NaN that f64 NaN `x` narrows to in float type `ft`: its sign, the quiet bit and the
/// top bits of its payload (how an H200 converts an f64 NaN to bf16: `0x7ff1248a53a43642` →
/// `0x7fc9`; LLVM's fptrunc to bfloat gives 0x7fc0 on x86).
pub fn narrow_nan<'c>(l: &Lowerer<'c, '_>, x: FloatValue<'c>, ft: FloatType<'c>) -> FloatValue<'c> {
    let w = fbits(l, ft);
    let mant = match w {
        16 if is_bf16(l, ft) => 7,
        16 => 10,
        _ => 23,
    };
    let i64t = l.i64();
    let b = to_bits(l, x);
    let sign =
        l.b.build_right_shift(b, i64t.const_int(63, false), false, "")
            .unwrap();
    let sign =
        l.b.build_left_shift(sign, i64t.const_int(w as u64 - 1, false), "")
            .unwrap();
    let pay =
        l.b.build_right_shift(b, i64t.const_int(52 - mant, false), false, "")
            .unwrap();
    let pay =
        l.b.build_and(pay, i64t.const_int((1 << mant) - 1, false), "")
            .unwrap();
    // All-ones exponent and the quiet bit (the top payload bit).
    let top = ((1u64 << (w - 1)) - 1) & !((1u64 << (mant - 1)) - 1);
    let v = l.b.build_or(sign, pay, "").unwrap();
    let v = l.b.build_or(v, i64t.const_int(top, false), "").unwrap();
    let v = l.b.build_int_truncate(v, l.int(w), "").unwrap();
    from_bits(l, v, ft)
}

/// The result `r` of an f64 operation with the GPU's NaN: where an operand is a NaN, the first
/// NaN of `order` (quieted), whatever the host computed. Measured on an H200 (sm_90, driver
/// 580) with two NaN operands: `add/sub/mul` give b's NaN (`sub` does not negate it), `div`
/// a's, `fma` b's, then c's, then a's. (The host takes the first operand, and LLVM may swap
/// the operands of a commutative operation.)
pub fn gpu_nan_f64<'c>(
    l: &Lowerer<'c, '_>,
    order: &[FloatValue<'c>],
    r: FloatValue<'c>,
) -> FloatValue<'c> {
    if !l.target.gpu_nans() || fbits(l, r.get_type()) != 64 {
        return r;
    }
    order
        .iter()
        .rev()
        .fold(r, |acc, x| bits_sel(l, is_nan(l, *x), quiet(l, *x), acc))
}

/// The smallest normal number of a float type.
fn min_normal<'c>(l: &Lowerer<'c, '_>, ft: FloatType<'c>) -> f64 {
    match fbits(l, ft) {
        16 if is_bf16(l, ft) => 2f64.powi(-126),
        16 => 2f64.powi(-14),
        32 => 2f64.powi(-126),
        _ => 2f64.powi(-1022),
    }
}

/// Flushes a subnormal `x` to sign-preserving zero (`.ftz`): `|x| < min_normal → copysign(0, x)`.
pub fn flush<'c>(l: &Lowerer<'c, '_>, x: FloatValue<'c>) -> FloatValue<'c> {
    let ft = x.get_type();
    let small = fcmp(
        l,
        FloatPredicate::OLT,
        fabs(l, x),
        fconst(ft, min_normal(l, ft)),
    );
    let z = copysign(l, ft.const_zero(), x);
    fsel(l, small, z, x)
}

/// Flushes when `ftz`.
pub fn flush_if<'c>(l: &Lowerer<'c, '_>, ftz: bool, x: FloatValue<'c>) -> FloatValue<'c> {
    if ftz {
        flush(l, x)
    } else {
        x
    }
}

/// `.sat`: clamps to [+0.0, 1.0]; NaN (and -0.0) become +0.0.
pub fn sat<'c>(l: &Lowerer<'c, '_>, x: FloatValue<'c>) -> FloatValue<'c> {
    let ft = x.get_type();
    let one = fconst(ft, 1.0);
    let pos = fcmp(l, FloatPredicate::OGT, x, ft.const_zero());
    let big = fcmp(l, FloatPredicate::OGT, x, one);
    let r = fsel(l, big, one, x);
    fsel(l, pos, r, ft.const_zero())
}

/// `.relu`: negative results (sign bit set, -0.0 included) become +0.0; NaN becomes the
/// canonical NaN.
pub fn relu<'c>(l: &Lowerer<'c, '_>, x: FloatValue<'c>) -> FloatValue<'c> {
    let ft = x.get_type();
    let neg = sign_bit(l, x);
    let r = fsel(l, neg, ft.const_zero(), x);
    fsel(l, is_nan(l, x), canonical_nan(l, ft), r)
}

/// NaN → canonical NaN.
pub fn canonicalize_nan<'c>(l: &Lowerer<'c, '_>, x: FloatValue<'c>) -> FloatValue<'c> {
    fsel(l, is_nan(l, x), canonical_nan(l, x.get_type()), x)
}

/// PTX `min`/`max` of two values (PTX ISA 9.2 §9.7.3.10/11): a NaN operand yields the other
/// operand; two NaNs (or, with `.NaN`, any NaN) give the canonical NaN; -0.0 < +0.0; with
/// `.xorsign.abs` the magnitudes are compared and the result takes the XOR of the input signs
/// (unless it is NaN).
pub fn minmax<'c>(
    l: &Lowerer<'c, '_>,
    is_max: bool,
    nan: bool,
    xorsign_abs: bool,
    a: FloatValue<'c>,
    b: FloatValue<'c>,
) -> FloatValue<'c> {
    let ft = a.get_type();
    if xorsign_abs && is_bf16(l, ft) {
        // In f32 (exact both ways), behind `llvm.arithmetic.fence` so that InstCombine does not
        // move the sign tests back to the bfloat bit casts: LLVM 22's x86 back end miscompiles
        // the sign bit of a bitcast bfloat when only that bit is used (SimplifyDemandedBits
        // BITCAST → FGETSIGN, fixed in LLVM 23, llvm-project#189363); `min.xorsign.abs.bf16(x2)`
        // lost its sign (tests/cpu_instr_float.rs).
        let f = l.ctx.f32_type();
        let fence = |v: FloatValue<'c>| {
            l.call_v(
                "llvm.arithmetic.fence.f32",
                f.into(),
                &[fext(l, v, f).into()],
            )
            .into_float_value()
        };
        let r = minmax(l, is_max, nan, true, fence(a), fence(b));
        return fsel(l, is_nan(l, r), canonical_nan(l, ft), ftrunc(l, r, ft));
    }
    let (mut a, mut b) = (a, b);
    let xs = if xorsign_abs {
        let s = l.b.build_xor(sign_bit(l, a), sign_bit(l, b), "").unwrap();
        a = fabs(l, a);
        b = fabs(l, b);
        Some(s)
    } else {
        None
    };
    let name = match (is_max, nan) {
        (false, false) => "minimumnum",
        (true, false) => "maximumnum",
        (false, true) => "minimum",
        (true, true) => "maximum",
    };
    let r = l
        .call_v(
            &format!("llvm.{name}.{}", ftname(l, ft)),
            ft.into(),
            &[a.into(), b.into()],
        )
        .into_float_value();
    let r = canonicalize_nan(l, r);
    let r = if fbits(l, ft) == 64 && l.target.gpu_nans() {
        // Measured on an H200 (sm_90, driver 580): `min/max.f64` of two NaNs give the second
        // one, quieted (the one defined later, in the measured kernels), not a canonical NaN.
        let both = and(l, is_nan(l, a), is_nan(l, b));
        bits_sel(l, both, quiet(l, b), r)
    } else {
        r
    };
    match xs {
        Some(s) => {
            let bits = to_bits(l, r);
            let it = bits.get_type();
            let w = it.get_bit_width();
            let mag =
                l.b.build_and(bits, it.const_int(u64::MAX >> (65 - w), false), "")
                    .unwrap();
            let sb = l.b.build_int_z_extend(s, it, "").unwrap();
            let sb =
                l.b.build_left_shift(sb, it.const_int(w as u64 - 1, false), "")
                    .unwrap();
            let v = from_bits(l, l.b.build_or(mag, sb, "").unwrap(), ft);
            fsel(l, is_nan(l, r), r, v)
        }
        None => r,
    }
}

// ---- directed rounding ----------------------------------------------------------------------

/// One ulp step of a float's bit pattern: `+1` or `-1`.
fn step<'c>(l: &Lowerer<'c, '_>, t: FloatValue<'c>, up: bool) -> FloatValue<'c> {
    let b = to_bits(l, t);
    let one = b.get_type().const_int(1, false);
    let r = if up {
        l.b.build_int_add(b, one, "").unwrap()
    } else {
        l.b.build_int_sub(b, one, "").unwrap()
    };
    from_bits(l, r, t.get_type())
}

/// Rounds in direction `rnd`, given the round-to-nearest result `t` (finite or overflowed to
/// infinity; any bracketing neighbour of the exact value will do) and whether the exact value
/// is above (`pos`) or below (`neg`) it.
pub fn adjust<'c>(
    l: &Lowerer<'c, '_>,
    t: FloatValue<'c>,
    pos: IntValue<'c>,
    neg: IntValue<'c>,
    rnd: Rounding,
) -> FloatValue<'c> {
    let ft = t.get_type();
    let w = fbits(l, ft);
    let it = l.int(w);
    let zero = fcmp(l, FloatPredicate::OEQ, t, ft.const_zero());
    let s = sign_bit(l, t);
    match rnd {
        Rounding::Rn => t,
        Rounding::Rz => {
            // Toward zero: shrink the magnitude when the exact value is nearer zero.
            let c = or(l, and(l, not(l, s), neg), and(l, s, pos));
            let c = and(l, c, not(l, zero));
            fsel(l, c, step(l, t, false), t)
        }
        Rounding::Rp => {
            // nextUp: ±0 → smallest subnormal; positive → magnitude up; negative → down.
            let up = fsel(l, s, step(l, t, false), step(l, t, true));
            let tiny = from_bits(l, it.const_int(1, false), ft);
            let up = fsel(l, zero, tiny, up);
            fsel(l, pos, up, t)
        }
        Rounding::Rm => {
            let down = fsel(l, s, step(l, t, true), step(l, t, false));
            let tiny = from_bits(l, it.const_int((1u64 << (w - 1)) | 1, false), ft);
            let down = fsel(l, zero, tiny, down);
            fsel(l, neg, down, t)
        }
    }
}

/// Rounds a wide value `w` (plus an error whose sign is given by `wpos`/`wneg`, far below the
/// narrow type's ulp) to `nt` in direction `rnd`.
pub fn narrow<'c>(
    l: &Lowerer<'c, '_>,
    w: FloatValue<'c>,
    wpos: IntValue<'c>,
    wneg: IntValue<'c>,
    rnd: Rounding,
    nt: FloatType<'c>,
) -> FloatValue<'c> {
    let wt = w.get_type();
    if wt == nt {
        return adjust(l, w, wpos, wneg, rnd);
    }
    // Round to nearest (through f32 for 16-bit types: a double rounding still lands on a
    // neighbour of the exact value, which is all `adjust` needs).
    let t = if fbits(l, nt) == 16 && fbits(l, wt) == 64 {
        ftrunc(l, ftrunc(l, w, l.ctx.f32_type()), nt)
    } else {
        ftrunc(l, w, nt)
    };
    let back = fconv(l, t, wt);
    let diff = fsub(l, w, back);
    let z = wt.const_zero();
    let deq = fcmp(l, FloatPredicate::OEQ, diff, z);
    let pos = or(l, fcmp(l, FloatPredicate::OGT, diff, z), and(l, deq, wpos));
    let neg = or(l, fcmp(l, FloatPredicate::OLT, diff, z), and(l, deq, wneg));
    adjust(l, t, pos, neg, rnd)
}

/// Rounds the exact value `s + e` (`f64`, `|e|` below half an ulp of `s`, as `two_sum` gives;
/// only the sign of `e` is used) to `f32` with round-to-odd: when inexact, the neighbour whose
/// last bit is 1. One more
/// round-to-nearest to a 16-bit type is then correctly rounded (24 ≥ 11 + 2 bits), where
/// rounding twice to nearest is not (fma of 16-bit values).
pub fn round_odd_f32<'c>(
    l: &Lowerer<'c, '_>,
    s: FloatValue<'c>,
    e: FloatValue<'c>,
) -> FloatValue<'c> {
    let f = l.ctx.f32_type();
    let wt = s.get_type();
    let t = ftrunc(l, s, f);
    let diff = fsub(l, s, fext(l, t, wt));
    let z = wt.const_zero();
    let deq = fcmp(l, FloatPredicate::OEQ, diff, z);
    let pos = or(
        l,
        fcmp(l, FloatPredicate::OGT, diff, z),
        and(l, deq, fcmp(l, FloatPredicate::OGT, e, z)),
    );
    let neg = or(
        l,
        fcmp(l, FloatPredicate::OLT, diff, z),
        and(l, deq, fcmp(l, FloatPredicate::OLT, e, z)),
    );
    let bits = to_bits(l, t);
    let lsb =
        l.b.build_and(bits, bits.get_type().const_int(1, false), "")
            .unwrap();
    let even = and(
        l,
        l.b.build_int_compare(IntPredicate::EQ, lsb, bits.get_type().const_zero(), "")
            .unwrap(),
        is_finite(l, t),
    );
    let f0 = l.i1().const_zero();
    let up = adjust(l, t, l.i1().const_all_ones(), f0, Rounding::Rp);
    let down = adjust(l, t, f0, l.i1().const_all_ones(), Rounding::Rm);
    fsel(
        l,
        and(l, even, pos),
        up,
        fsel(l, and(l, even, neg), down, t),
    )
}

/// Knuth's TwoSum: `s = fl(a+b)` and the exact error `e = a + b - s` (without overflow).
pub fn two_sum<'c>(
    l: &Lowerer<'c, '_>,
    a: FloatValue<'c>,
    b: FloatValue<'c>,
) -> (FloatValue<'c>, FloatValue<'c>) {
    let s = fadd(l, a, b);
    let bb = fsub(l, s, a);
    let ab = fsub(l, s, bb);
    let e = fadd(l, fsub(l, a, ab), fsub(l, b, bb));
    (s, e)
}

fn signs<'c>(l: &Lowerer<'c, '_>, e: FloatValue<'c>) -> (IntValue<'c>, IntValue<'c>) {
    let z = e.get_type().const_zero();
    (
        fcmp(l, FloatPredicate::OGT, e, z),
        fcmp(l, FloatPredicate::OLT, e, z),
    )
}

/// `llvm.frexp`: mantissa in [0.5, 1) (sign kept) and exponent.
pub fn frexp<'c>(l: &Lowerer<'c, '_>, x: FloatValue<'c>) -> (FloatValue<'c>, IntValue<'c>) {
    let st = l
        .ctx
        .struct_type(&[x.get_type().into(), l.i32().into()], false);
    let r = l
        .call_v(
            &format!("llvm.frexp.{}.i32", ftname(l, x.get_type())),
            st.into(),
            &[x.into()],
        )
        .into_struct_value();
    (
        l.b.build_extract_value(r, 0, "")
            .unwrap()
            .into_float_value(),
        l.b.build_extract_value(r, 1, "").unwrap().into_int_value(),
    )
}

/// `llvm.ldexp`: `x * 2^e`.
pub fn ldexp<'c>(l: &Lowerer<'c, '_>, x: FloatValue<'c>, e: IntValue<'c>) -> FloatValue<'c> {
    l.call_v(
        &format!("llvm.ldexp.{}.i32", ftname(l, x.get_type())),
        x.get_type().into(),
        &[x.into(), e.into()],
    )
    .into_float_value()
}

/// `.f64` `mul`/`div`/`rcp`/`sqrt`: the round-to-nearest result and the sign of its error,
/// from an exact residual (`fma`) computed on operands scaled to [0.5, 2) with `frexp`, so that
/// neither overflow nor underflow of the result disturbs it. Zero, infinite and NaN operands
/// give exact results; an overflow of finite operands errs toward zero.
fn f64_residual<'c>(
    l: &Lowerer<'c, '_>,
    op: RoundedOp,
    a: &[FloatValue<'c>],
) -> (FloatValue<'c>, IntValue<'c>, IntValue<'c>) {
    let d = l.ctx.f64_type();
    let i32t = l.i32();
    let one = fconst(d, 1.0);
    let (x, y) = match op {
        RoundedOp::Rcp => (one, a[0]),
        RoundedOp::Sqrt => (a[0], one),
        _ => (a[0], a[1]),
    };
    let z = d.const_zero();
    let regular = |v: FloatValue<'c>| and(l, is_finite(l, v), fcmp(l, FloatPredicate::ONE, v, z));
    let (r, res, pos_sign) = match op {
        RoundedOp::Mul => {
            let p = fmul(l, x, y);
            let (mx, ex) = frexp(l, x);
            let (my, ey) = frexp(l, y);
            let ps = ldexp(
                l,
                p,
                l.b.build_int_neg(l.b.build_int_add(ex, ey, "").unwrap(), "")
                    .unwrap(),
            );
            // x*y - p, scaled: exact value above p when positive.
            (p, ffma(l, mx, my, fneg(l, ps)), None)
        }
        RoundedOp::Sqrt => {
            let s = unary(l, "sqrt", x);
            let (m, e) = frexp(l, x);
            // Even exponent: m in [0.5, 2).
            let odd = l.b.build_and(e, i32t.const_int(1, false), "").unwrap();
            let oddb =
                l.b.build_int_compare(IntPredicate::NE, odd, i32t.const_zero(), "")
                    .unwrap();
            let m = fsel(l, oddb, fmul(l, m, fconst(d, 2.0)), m);
            let e = l.b.build_int_sub(e, odd, "").unwrap();
            let half =
                l.b.build_right_shift(e, i32t.const_int(1, false), true, "")
                    .unwrap();
            let ss = ldexp(l, s, l.b.build_int_neg(half, "").unwrap());
            (s, ffma(l, fneg(l, ss), ss, m), None)
        }
        _ => {
            let q = fdiv(l, x, y);
            let (mx, ex) = frexp(l, x);
            let (my, ey) = frexp(l, y);
            let qs = ldexp(l, q, l.b.build_int_sub(ey, ex, "").unwrap());
            // x/y - q has the sign of (mx - qs*my) / my.
            (
                q,
                ffma(l, fneg(l, qs), my, mx),
                Some(fcmp(l, FloatPredicate::OGT, my, z)),
            )
        }
    };
    let (rp, rn) = signs(l, res);
    let (pos, neg) = match pos_sign {
        Some(dpos) => (
            or(l, and(l, rp, dpos), and(l, rn, not(l, dpos))),
            or(l, and(l, rn, dpos), and(l, rp, not(l, dpos))),
        ),
        None => (rp, rn),
    };
    // Only regular (finite, nonzero) operands round; sqrt of a negative is NaN (exact).
    let ok = match op {
        RoundedOp::Sqrt => and(l, regular(x), fcmp(l, FloatPredicate::OGT, x, z)),
        _ => and(l, regular(x), regular(y)),
    };
    let ovf = and(l, ok, is_inf(l, r));
    let sneg = sign_bit(l, r);
    let fin = and(l, ok, not(l, is_inf(l, r)));
    let pos = or(l, and(l, fin, pos), and(l, ovf, sneg));
    let neg = or(l, and(l, fin, neg), and(l, ovf, not(l, sneg)));
    (r, pos, neg)
}

/// The default [`Target::rounded_op`]: see its documentation.
pub fn default_rounded_op<'c>(
    l: &Lowerer<'c, '_>,
    op: RoundedOp,
    rnd: Rounding,
    ftz: bool,
    ty: Ty,
    args: &[BasicValueEnum<'c>],
) -> Result<BasicValueEnum<'c>, Error> {
    let ft = fty(l, ty);
    let ftz = ftz && ty.bits == 32;
    let a: Vec<FloatValue<'c>> = args
        .iter()
        .map(|v| flush_if(l, ftz, v.into_float_value()))
        .collect();
    let r = if rnd == Rounding::Rn {
        match op {
            RoundedOp::Add => fadd(l, a[0], a[1]),
            RoundedOp::Sub => fsub(l, a[0], a[1]),
            RoundedOp::Mul => fmul(l, a[0], a[1]),
            RoundedOp::Fma => ffma(l, a[0], a[1], a[2]),
            RoundedOp::Div => fdiv(l, a[0], a[1]),
            RoundedOp::Sqrt => unary(l, "sqrt", a[0]),
            RoundedOp::Rcp => fdiv(l, fconst(ft, 1.0), a[0]),
        }
    } else if ty.bits == 32 {
        let d = l.ctx.f64_type();
        let x: Vec<FloatValue<'c>> = a.iter().map(|v| fext(l, *v, d)).collect();
        let f = l.i1().const_zero();
        let dz = d.const_zero();
        // (wide value, error above, error below, summands for the exact-zero rule)
        let (w, pos, neg, sum) = match op {
            RoundedOp::Add | RoundedOp::Sub => {
                let y = if op == RoundedOp::Sub {
                    fneg(l, x[1])
                } else {
                    x[1]
                };
                let (s, e) = two_sum(l, x[0], y);
                let (p, n) = signs(l, e);
                (s, p, n, Some((x[0], y)))
            }
            RoundedOp::Mul => (fmul(l, x[0], x[1]), f, f, None),
            RoundedOp::Fma => {
                let p = fmul(l, x[0], x[1]);
                let (s, e) = two_sum(l, p, x[2]);
                let (pp, n) = signs(l, e);
                (s, pp, n, Some((p, x[2])))
            }
            RoundedOp::Div | RoundedOp::Rcp => {
                let (num, den) = if op == RoundedOp::Rcp {
                    (fconst(d, 1.0), x[0])
                } else {
                    (x[0], x[1])
                };
                let q = fdiv(l, num, den);
                // num/den - q = r/den with r = num - q*den exact.
                let r = ffma(l, fneg(l, q), den, num);
                let (rp, rn) = signs(l, r);
                let dpos = fcmp(l, FloatPredicate::OGT, den, dz);
                let dneg = fcmp(l, FloatPredicate::OLT, den, dz);
                let pos = or(l, and(l, rp, dpos), and(l, rn, dneg));
                let neg = or(l, and(l, rn, dpos), and(l, rp, dneg));
                (q, pos, neg, None)
            }
            RoundedOp::Sqrt => {
                let s = unary(l, "sqrt", x[0]);
                let r = ffma(l, fneg(l, s), s, x[0]);
                let (p, n) = signs(l, r);
                (s, p, n, None)
            }
        };
        let mut res = narrow(l, w, pos, neg, rnd, ft);
        if let (Rounding::Rm, Some((p, q))) = (rnd, sum) {
            // An exact zero sum of operands of opposite signs is -0 when rounding down.
            let zero = fcmp(l, FloatPredicate::OEQ, w, dz);
            let z = fneg(l, fadd(l, fneg(l, p), fneg(l, q)));
            res = fsel(l, zero, ftrunc(l, z, ft), res);
        }
        res
    } else {
        match op {
            RoundedOp::Add | RoundedOp::Sub => {
                let y = if op == RoundedOp::Sub {
                    fneg(l, a[1])
                } else {
                    a[1]
                };
                let (s, e) = two_sum(l, a[0], y);
                let (p, n) = signs(l, e);
                // Overflow of finite operands: the exact value is below +inf / above -inf.
                let ovf = and(l, is_inf(l, s), and(l, is_finite(l, a[0]), is_finite(l, y)));
                let sneg = sign_bit(l, s);
                let p = or(l, p, and(l, ovf, sneg));
                let n = or(l, n, and(l, ovf, not(l, sneg)));
                let mut res = adjust(l, s, p, n, rnd);
                if rnd == Rounding::Rm {
                    let zero = fcmp(l, FloatPredicate::OEQ, s, ft.const_zero());
                    let z = fneg(l, fadd(l, fneg(l, a[0]), fneg(l, y)));
                    res = fsel(l, zero, z, res);
                }
                res
            }
            RoundedOp::Mul | RoundedOp::Div | RoundedOp::Rcp | RoundedOp::Sqrt => {
                let (r, pos, neg) = f64_residual(l, op, &a);
                adjust(l, r, pos, neg, rnd)
            }
            _ => {
                let name = format!("ptx2llvm_rt_{}_{}_f64", op.name(), rnd.name());
                let vals: Vec<BasicValueEnum<'c>> = a.iter().map(|v| (*v).into()).collect();
                l.call_v(&name, ft.into(), &vals).into_float_value()
            }
        }
    };
    let r = flush_if(l, ftz, r);
    if ftz {
        return Ok(flush_by_exact(l, op, rnd, &a, r).into());
    }
    Ok(r.into())
}

/// `.ftz` on an f32 `mul`/`fma`/`div`/`rcp` result `r` of the (flushed) operands `a`: ±0 where
/// the exact result is tiny by the H200's rule (sm_90, driver 580; docs/GPU_DIFF.md): below
/// 2^-126 after rounding to 24 bits with an unbounded exponent in mode `rnd`. So `mul.rp.ftz.f32
/// 0x00800000, 0x3f7fffff` (exactly 2^-126 − 2^-150, 24 bits) is +0, while a product
/// (1 − 2^-46)·2^-126 rounds up to 2^-126 and stays. A product of two f32 is exact in f64, the
/// sum with an f32 is TwoSum's high part; a quotient's f64 value decides (the `.approx`/`.full`
/// divisions and `rcp.approx` use `.rn`, not measured).
pub fn flush_by_exact<'c>(
    l: &Lowerer<'c, '_>,
    op: RoundedOp,
    rnd: Rounding,
    a: &[FloatValue<'c>],
    r: FloatValue<'c>,
) -> FloatValue<'c> {
    let ft = r.get_type();
    if fbits(l, ft) != 32 {
        return r;
    }
    let d = l.ctx.f64_type();
    let x: Vec<FloatValue<'c>> = a.iter().map(|v| fext(l, *v, d)).collect();
    let m = fconst(d, min_normal(l, ft));
    let w = match op {
        RoundedOp::Mul => fmul(l, x[0], x[1]),
        RoundedOp::Div => fdiv(l, x[0], x[1]),
        RoundedOp::Rcp => fdiv(l, fconst(d, 1.0), x[0]),
        RoundedOp::Fma => two_sum(l, fmul(l, x[0], x[1]), x[2]).0,
        _ => return r,
    };
    // Tininess after rounding to 24 bits with an unbounded exponent (the s17 H200 probes,
    // GPU_DIFF.md): a result below 2^-126 is kept when that rounding carries it up to 2^-126.
    // The largest 24-bit value below 2^-126 is L = 2^-126 - 2^-150; `.rn` reaches 2^-126 from
    // the midpoint 2^-126 - 2^-151 up (ties to even), `.rp`/`.rm` from above L on their side.
    let aw = fabs(l, w);
    let below = fcmp(l, FloatPredicate::OLT, aw, m);
    let lo = fconst(d, min_normal(l, ft) * (1.0 - 2f64.powi(-24)));
    let up = match rnd {
        Rounding::Rn => fcmp(
            l,
            FloatPredicate::OGE,
            aw,
            fconst(d, min_normal(l, ft) * (1.0 - 2f64.powi(-25))),
        ),
        Rounding::Rz => l.i1().const_zero(),
        Rounding::Rp => and(
            l,
            fcmp(l, FloatPredicate::OGT, w, d.const_zero()),
            fcmp(l, FloatPredicate::OGT, aw, lo),
        ),
        Rounding::Rm => and(
            l,
            fcmp(l, FloatPredicate::OLT, w, d.const_zero()),
            fcmp(l, FloatPredicate::OGT, aw, lo),
        ),
    };
    let tiny = and(l, below, not(l, up));
    fsel(l, tiny, copysign(l, ft.const_zero(), r), r)
}

/// The default [`Target::rounded_cvt`]: see its documentation.
pub fn default_rounded_cvt<'c>(
    l: &Lowerer<'c, '_>,
    rnd: Rounding,
    dt: Ty,
    st: Ty,
    a: BasicValueEnum<'c>,
) -> Result<BasicValueEnum<'c>, Error> {
    let d = l.ctx.f64_type();
    let nt = fty(l, dt);
    let f = l.i1().const_zero();
    if st.is_float() {
        let x = a.into_float_value();
        if rnd == Rounding::Rn {
            return Ok(fconv(l, x, nt).into());
        }
        let w = fconv(l, x, d);
        return Ok(narrow(l, w, f, f, rnd, nt).into());
    }
    let x = a.into_int_value();
    let signed = st.is_signed();
    let itof = |v: IntValue<'c>, to: FloatType<'c>| -> FloatValue<'c> {
        if signed {
            l.b.build_signed_int_to_float(v, to, "").unwrap()
        } else {
            l.b.build_unsigned_int_to_float(v, to, "").unwrap()
        }
    };
    if st.bits <= 32 {
        // Exact in double.
        let w = itof(x, d);
        return Ok(if rnd == Rounding::Rn {
            fconv(l, w, nt)
        } else {
            narrow(l, w, f, f, rnd, nt)
        }
        .into());
    }
    // 64-bit integers: round to nearest in f64 (or f32 for narrower results), compare back
    // exactly in the integer domain.
    let mid = if dt.bits == 64 { d } else { l.ctx.f32_type() };
    let t = itof(x, mid);
    if rnd == Rounding::Rn {
        return Ok(fconv(l, t, nt).into());
    }
    let i64t = l.i64();
    let limit = if signed { 2f64.powi(63) } else { 2f64.powi(64) };
    let big = fcmp(l, FloatPredicate::OGE, t, fconst(mid, limit));
    let tt = fsel(l, big, mid.const_zero(), t);
    let back = if signed {
        l.b.build_float_to_signed_int(tt, i64t, "").unwrap()
    } else {
        l.b.build_float_to_unsigned_int(tt, i64t, "").unwrap()
    };
    let (gt, lt) = if signed {
        (IntPredicate::SGT, IntPredicate::SLT)
    } else {
        (IntPredicate::UGT, IntPredicate::ULT)
    };
    let pos = and(
        l,
        not(l, big),
        l.b.build_int_compare(gt, x, back, "").unwrap(),
    );
    let neg = or(l, big, l.b.build_int_compare(lt, x, back, "").unwrap());
    let r = if mid == nt {
        adjust(l, t, pos, neg, rnd)
    } else {
        narrow(l, fext(l, t, d), pos, neg, rnd, nt)
    };
    Ok(r.into())
}

/// `2^x` for an f32 `x` in straight-line f32 arithmetic that vectorizes (libm's `exp2f` is a
/// call per element, a quarter of a softmax's time; an f64 polynomial takes twice the
/// registers and instructions of f32 per warp): `x = n + f` with `n = roundeven(x)` and
/// `|f| <= 1/2` (exact), `2^f = 1 + f q(f)` with `q` a degree-6 fit of `(2^f - 1)/f` in f32
/// coefficients, by fused multiply-adds (sampled over [-1/2, 1/2]: relative error below
/// 2^-23.8, the last rounding included, inside ex2.approx's 2^-22.5; integer `x` exact), times
/// `2^n` as two exact powers `2^(n>>1)` and `2^(n - (n>>1))`: the first product is exact, the
/// second rounds once, subnormal results and overflow to +inf included. `x` is clamped to
/// [-160, 130] first (2^x is then 0 or +inf in f32 either way); NaN stays NaN. With
/// [`Exp2Scale::Ldexp`] the scaling is one `llvm.ldexp` instead, the same single rounding of
/// the exact product.
fn exp2_f32<'c>(l: &Lowerer<'c, '_>, x: FloatValue<'c>, scale: Exp2Scale) -> FloatValue<'c> {
    let b = &l.b;
    let f32t = l.ctx.f32_type();
    let i32t = l.i32();
    let lo = fconst(f32t, -160.0);
    let hi = fconst(f32t, 130.0);
    let c = fsel(l, fcmp(l, FloatPredicate::OLT, x, lo), lo, x);
    let c = fsel(l, fcmp(l, FloatPredicate::OGT, c, hi), hi, c);
    let n = unary(l, "roundeven", c);
    let f = fsub(l, c, n);
    // (2^f - 1)/f, lowest degree first: f32 bit patterns of a weighted least-squares fit.
    const Q: [u32; 7] = [
        0x3f31_7218,
        0x3e75_fdf0,
        0x3d63_5845,
        0x3c1d_94f9,
        0x3aae_c5bc,
        0x3922_2eb0,
        0x377e_747e,
    ];
    let k = |i: usize| fconst(f32t, f64::from(f32::from_bits(Q[i])));
    let q = Q[..Q.len() - 1]
        .iter()
        .enumerate()
        .rev()
        .fold(k(Q.len() - 1), |p, (i, _)| ffma(l, p, f, k(i)));
    let p = ffma(l, f, q, fconst(f32t, 1.0));
    let ni = b.build_float_to_signed_int(n, i32t, "").unwrap();
    if scale == Exp2Scale::Ldexp {
        // A NaN `x` makes `p` a NaN and `fptosi` poison; frozen, the exponent is some number
        // and `ldexp` of the NaN `p` is a NaN. Where the caller canonicalizes every NaN result
        // (`gpu_nans`) its payload is never seen, so no compare and blend on `x` is needed
        // (one of each per 16 lanes of softmax's `expf`).
        let ni = crate::llvm::freeze(b, ni);
        let r = l
            .call_v("llvm.ldexp.f32.i32", f32t.into(), &[p.into(), ni.into()])
            .into_float_value();
        return if l.target.gpu_nans() {
            r
        } else {
            fsel(l, is_nan(l, x), x, r)
        };
    }
    let h = b
        .build_right_shift(ni, i32t.const_int(1, false), true, "")
        .unwrap();
    let pow = |e: IntValue<'c>| {
        let biased = b.build_int_add(e, i32t.const_int(127, false), "").unwrap();
        from_bits(
            l,
            b.build_left_shift(biased, i32t.const_int(23, false), "")
                .unwrap(),
            f32t,
        )
    };
    let r = fmul(
        l,
        fmul(l, p, pow(h)),
        pow(b.build_int_sub(ni, h, "").unwrap()),
    );
    fsel(l, is_nan(l, x), x, r)
}

/// `tanh(x)` for an f32 `x`: `1 - 2 / (2^(2|x| log2 e) + 1)` in f64 with the sign of `x` (below
/// 1/16 in magnitude its Taylor polynomial), far inside tanh.approx's absolute 2^-10.987, and
/// vectorizable (libm's `tanhf` is a call per element).
fn tanh_f32<'c>(l: &Lowerer<'c, '_>, x: FloatValue<'c>) -> FloatValue<'c> {
    let b = &l.b;
    let f32t = l.ctx.f32_type();
    let f64t = l.ctx.f64_type();
    let ax = unary(l, "fabs", x);
    let y = b
        .build_float_mul(ax, fconst(f32t, 2.0 * std::f64::consts::LOG2_E), "")
        .unwrap();
    let e = exp2_f64_of_f32(l, y);
    let one = fconst(f64t, 1.0);
    let q = b
        .build_float_div(
            fconst(f64t, 2.0),
            b.build_float_add(e, one, "").unwrap(),
            "",
        )
        .unwrap();
    let t = ftrunc(l, b.build_float_sub(one, q, "").unwrap(), f32t);
    let t = l
        .call_v("llvm.copysign.f32", f32t.into(), &[t.into(), x.into()])
        .into_float_value();
    // |x| < 1/16: x (1 - x^2/3 + 2x^4/15), accurate relative to x (the form above cancels).
    let xd = fext(l, x, f64t);
    let x2 = b.build_float_mul(xd, xd, "").unwrap();
    let poly = horner(l, x2, &[1.0, -1.0 / 3.0, 2.0 / 15.0]);
    let small = ftrunc(l, b.build_float_mul(xd, poly, "").unwrap(), f32t);
    let tiny = fcmp(l, FloatPredicate::OLT, ax, fconst(f32t, 0.0625));
    let t = fsel(l, tiny, small, t);
    fsel(l, is_nan(l, x), x, t)
}

/// `p(t) = c[0] + c[1] t + c[2] t^2 + …` by Horner's rule with fused multiply-adds in f64.
fn horner<'c>(l: &Lowerer<'c, '_>, t: FloatValue<'c>, c: &[f64]) -> FloatValue<'c> {
    let f64t = l.ctx.f64_type();
    c[..c.len() - 1]
        .iter()
        .rev()
        .fold(fconst(f64t, c[c.len() - 1]), |p, &k| {
            ffma(l, p, t, fconst(f64t, k))
        })
}

/// `log2(x)` for an f32 `x`, vectorizable (libm's `log2f` is a call per element): `x = m 2^e`
/// with `m` in [sqrt(1/2), sqrt(2)) (subnormals scaled by 2^64 first), `ln m = 2 atanh(s)` with
/// `s = (m - 1) / (m + 1)` by its series to `s^17` in f64 (|s| <= 0.172: error below 2^-45),
/// rounded once to f32. Negative inputs and NaN give NaN, ±0 -inf, +inf +inf.
fn log2_f32<'c>(l: &Lowerer<'c, '_>, x: FloatValue<'c>) -> FloatValue<'c> {
    let b = &l.b;
    let f32t = l.ctx.f32_type();
    let f64t = l.ctx.f64_type();
    let i32t = l.i32();
    let c32 = |v: u64| i32t.const_int(v, false);
    let sub = fcmp(
        l,
        FloatPredicate::OLT,
        unary(l, "fabs", x),
        fconst(f32t, f32::MIN_POSITIVE as f64),
    );
    let xs = fsel(
        l,
        sub,
        b.build_float_mul(x, fconst(f32t, 2f64.powi(64)), "")
            .unwrap(),
        x,
    );
    let bits = to_bits(l, xs);
    let ebits = b
        .build_and(
            b.build_right_shift(bits, c32(23), false, "").unwrap(),
            c32(0xff),
            "",
        )
        .unwrap();
    let e = b.build_int_sub(ebits, c32(127), "").unwrap();
    let e = isel(l, sub, b.build_int_sub(e, c32(64), "").unwrap(), e);
    let mbits = b
        .build_or(
            b.build_and(bits, c32(0x7f_ffff), "").unwrap(),
            c32(0x3f80_0000),
            "",
        )
        .unwrap();
    let m = fext(l, from_bits(l, mbits, f32t), f64t);
    // m in [1, 2): above sqrt(2) take m / 2 and e + 1.
    let big = fcmp(
        l,
        FloatPredicate::OGT,
        m,
        fconst(f64t, std::f64::consts::SQRT_2),
    );
    let m = fsel(
        l,
        big,
        b.build_float_mul(m, fconst(f64t, 0.5), "").unwrap(),
        m,
    );
    let e = isel(l, big, b.build_int_add(e, c32(1), "").unwrap(), e);
    let one = fconst(f64t, 1.0);
    let s = b
        .build_float_div(
            b.build_float_sub(m, one, "").unwrap(),
            b.build_float_add(m, one, "").unwrap(),
            "",
        )
        .unwrap();
    let s2 = b.build_float_mul(s, s, "").unwrap();
    let series: Vec<f64> = (0..9).map(|k| 1.0 / (2 * k + 1) as f64).collect();
    let ln_m = b
        .build_float_mul(
            b.build_float_mul(s, fconst(f64t, 2.0), "").unwrap(),
            horner(l, s2, &series),
            "",
        )
        .unwrap();
    let ef = b.build_signed_int_to_float(e, f64t, "").unwrap();
    let r = ffma(l, ln_m, fconst(f64t, std::f64::consts::LOG2_E), ef);
    let r = ftrunc(l, r, f32t);
    // Special inputs: 0 -> -inf, +inf -> +inf, negative or NaN -> NaN.
    let zero = fconst(f32t, 0.0);
    let r = fsel(
        l,
        fcmp(l, FloatPredicate::OEQ, x, zero),
        fconst(f32t, f64::NEG_INFINITY),
        r,
    );
    let r = fsel(
        l,
        fcmp(l, FloatPredicate::OEQ, x, fconst(f32t, f64::INFINITY)),
        x,
        r,
    );
    let bad = fcmp(l, FloatPredicate::ULT, x, zero);
    fsel(l, bad, fconst(f32t, f64::NAN), r)
}

/// `sin(x)` (or `cos(x)` when `cos`) for an f32 `x`, vectorizable (libm's `sinf`/`cosf` are
/// calls): `x = k pi/2 + r` in f64 (`|r| <= pi/4`, accurate for |x| up to about 2^20, bounded
/// beyond), then the Taylor polynomial of sin or cos of `r` by the quadrant `k mod 4`, rounded
/// once to f32. ±inf and NaN give NaN; sin keeps the sign of zero.
fn sincos_f32<'c>(l: &Lowerer<'c, '_>, x: FloatValue<'c>, cos: bool) -> FloatValue<'c> {
    let b = &l.b;
    let f32t = l.ctx.f32_type();
    let f64t = l.ctx.f64_type();
    let i64t = l.i64();
    let xd = fext(l, x, f64t);
    let k = unary(
        l,
        "roundeven",
        b.build_float_mul(xd, fconst(f64t, std::f64::consts::FRAC_2_PI), "")
            .unwrap(),
    );
    // Two-term pi/2 keeps r accurate while k * pi/2 is far from x's magnitude.
    let pio2_hi = std::f64::consts::FRAC_PI_2;
    let pio2_lo = 6.123_233_995_736_766e-17;
    let r = ffma(l, k, fconst(f64t, -pio2_hi), xd);
    let r = ffma(l, k, fconst(f64t, -pio2_lo), r);
    // k = 0: x itself (the sums above would turn -0 into +0).
    let r = fsel(l, fcmp(l, FloatPredicate::OEQ, k, fconst(f64t, 0.0)), xd, r);
    // Beyond the reduction's accuracy keep r in range (the result stays within [-1, 1]).
    let lim = fconst(f64t, std::f64::consts::FRAC_PI_4);
    let r = fsel(l, fcmp(l, FloatPredicate::OGT, r, lim), lim, r);
    let nlim = fconst(f64t, -std::f64::consts::FRAC_PI_4);
    let r = fsel(l, fcmp(l, FloatPredicate::OLT, r, nlim), nlim, r);
    let r2 = b.build_float_mul(r, r, "").unwrap();
    let fact = |n: i32| (1..=n).map(|v| v as f64).product::<f64>();
    let sin_c: Vec<f64> = (0..7)
        .map(|j| if j % 2 == 0 { 1.0 } else { -1.0 } / fact(2 * j + 1))
        .collect();
    let cos_c: Vec<f64> = (0..8)
        .map(|j| if j % 2 == 0 { 1.0 } else { -1.0 } / fact(2 * j))
        .collect();
    let s = b.build_float_mul(r, horner(l, r2, &sin_c), "").unwrap();
    let c = horner(l, r2, &cos_c);
    // Quadrant (of cos: one further).
    let q = b
        .build_float_to_signed_int(
            fsel(
                l,
                fcmp(
                    l,
                    FloatPredicate::OLT,
                    unary(l, "fabs", k),
                    fconst(f64t, 2f64.powi(52)),
                ),
                k,
                fconst(f64t, 0.0),
            ),
            i64t,
            "",
        )
        .unwrap();
    let q = if cos {
        b.build_int_add(q, i64t.const_int(1, false), "").unwrap()
    } else {
        q
    };
    let q = b.build_and(q, i64t.const_int(3, false), "").unwrap();
    let odd = b
        .build_int_compare(
            IntPredicate::NE,
            b.build_and(q, i64t.const_int(1, false), "").unwrap(),
            i64t.const_zero(),
            "",
        )
        .unwrap();
    let neg = b
        .build_int_compare(
            IntPredicate::NE,
            b.build_and(q, i64t.const_int(2, false), "").unwrap(),
            i64t.const_zero(),
            "",
        )
        .unwrap();
    let v = fsel(l, odd, c, s);
    let v = fsel(l, neg, b.build_float_neg(v, "").unwrap(), v);
    let v = ftrunc(l, v, f32t);
    let inf = fcmp(
        l,
        FloatPredicate::UEQ,
        unary(l, "fabs", x),
        fconst(f32t, f64::INFINITY),
    );
    let bad = or(l, inf, is_nan(l, x));
    fsel(l, bad, fconst(f32t, f64::NAN), v)
}

/// `2^x` in f64 for an f32 `x` (see `exp2_f32`); NaN gives a number (callers select).
fn exp2_f64_of_f32<'c>(l: &Lowerer<'c, '_>, x: FloatValue<'c>) -> FloatValue<'c> {
    let b = &l.b;
    let f32t = l.ctx.f32_type();
    let f64t = l.ctx.f64_type();
    let lo = fconst(f32t, -160.0);
    let hi = fconst(f32t, 130.0);
    let c = fsel(l, fcmp(l, FloatPredicate::OLT, x, lo), lo, x);
    let c = fsel(l, fcmp(l, FloatPredicate::OGT, c, hi), hi, c);
    let n = unary(l, "roundeven", c);
    let frac = b.build_float_sub(c, n, "").unwrap();
    let frac = fext(l, frac, f64t);
    const TAYLOR: [f64; 9] = [
        1.0,
        std::f64::consts::LN_2,
        0.240_226_506_959_100_7,
        0.055_504_108_664_821_576,
        0.009_618_129_107_628_477,
        0.001_333_355_814_642_844_1,
        0.000_154_035_303_933_816_06,
        1.525_273_380_405_983_8e-5,
        1.321_548_679_014_430_5e-6,
    ];
    let p = horner(l, frac, &TAYLOR);
    let i64t = l.i64();
    let ni = b.build_float_to_signed_int(n, i64t, "").unwrap();
    let e = b
        .build_left_shift(
            b.build_int_add(ni, i64t.const_int(1023, false), "")
                .unwrap(),
            i64t.const_int(52, false),
            "",
        )
        .unwrap();
    let scale = from_bits(l, e, f64t);
    b.build_float_mul(p, scale, "").unwrap()
}

/// How `ex2.approx.f32` multiplies its polynomial by `2^n`.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Exp2Scale {
    /// Two exact powers of two built from integer bits: portable, about nine vector
    /// instructions per 16 lanes on x86.
    TwoPowers,
    /// `llvm.ldexp`: for a target whose back end selects one instruction for it (AVX-512's
    /// `vscalefps`); elsewhere it can be a library call per element.
    Ldexp,
}

/// The default [`Target::approx_op`]: see its documentation.
pub fn default_approx_op<'c>(
    l: &Lowerer<'c, '_>,
    op: ApproxOp,
    ftz: bool,
    ty: Ty,
    args: &[BasicValueEnum<'c>],
) -> Result<BasicValueEnum<'c>, Error> {
    approx_op_with(l, op, ftz, ty, args, Exp2Scale::TwoPowers)
}

/// [`default_approx_op`] with `ex2.approx.f32`'s scaling chosen by the target.
pub fn approx_op_with<'c>(
    l: &Lowerer<'c, '_>,
    op: ApproxOp,
    ftz: bool,
    ty: Ty,
    args: &[BasicValueEnum<'c>],
    scale: Exp2Scale,
) -> Result<BasicValueEnum<'c>, Error> {
    let ft = fty(l, ty);
    // `ex2.approx.ftz.f32`: a subnormal input gives 1.0 as ±0 does (`exp2_f32`: n = 0 and
    // 1 + f q(f) rounds to 1), and the result is never negative, so neither the input's flush
    // nor the result's sign needs instructions.
    let ex2_f32 = op == ApproxOp::Ex2 && fbits(l, ft) == 32;
    let a: Vec<FloatValue<'c>> = args
        .iter()
        .map(|v| flush_if(l, ftz && !ex2_f32, v.into_float_value()))
        .collect();
    // 16-bit types are computed in f32.
    let ct = if fbits(l, ft) == 16 {
        l.ctx.f32_type()
    } else {
        ft
    };
    let mut x: Vec<FloatValue<'c>> = a.iter().map(|v| fconv(l, *v, ct)).collect();
    // rsqrt.approx.ftz.f64 reads the upper word of `a` only and writes d[31:0] = 0 (PTX ISA
    // rsqrt: "tmp = a[63:32]; d[63:32] = 1.0 / sqrt(tmp); d[31:0] = 0x00000000").
    let hi_word = |l: &Lowerer<'c, '_>, v: FloatValue<'c>| {
        from_bits(
            l,
            l.b.build_and(
                to_bits(l, v),
                l.i64().const_int(0xffff_ffff_0000_0000, false),
                "",
            )
            .unwrap(),
            ct,
        )
    };
    let f64_ftz = ftz && fbits(l, ct) == 64;
    if f64_ftz && op == ApproxOp::Rsqrt {
        x[0] = hi_word(l, x[0]);
    }
    let one = fconst(ct, 1.0);
    let r = match op {
        ApproxOp::Rcp => fdiv(l, one, x[0]),
        ApproxOp::Sqrt => unary(l, "sqrt", x[0]),
        ApproxOp::Rsqrt => fdiv(l, one, unary(l, "sqrt", x[0])),
        ApproxOp::Sin if fbits(l, ct) == 32 => sincos_f32(l, x[0], false),
        ApproxOp::Cos if fbits(l, ct) == 32 => sincos_f32(l, x[0], true),
        ApproxOp::Lg2 if fbits(l, ct) == 32 => log2_f32(l, x[0]),
        ApproxOp::Sin => unary(l, "sin", x[0]),
        ApproxOp::Cos => unary(l, "cos", x[0]),
        ApproxOp::Lg2 => unary(l, "log2", x[0]),
        ApproxOp::Ex2 if fbits(l, ct) == 32 => exp2_f32(l, x[0], scale),
        ApproxOp::Ex2 => unary(l, "exp2", x[0]),
        ApproxOp::Tanh if fbits(l, ct) == 32 => tanh_f32(l, x[0]),
        ApproxOp::Tanh => unary(l, "tanh", x[0]),
        ApproxOp::Div | ApproxOp::DivFull => fdiv(l, x[0], x[1]),
    };
    let r = fconv(l, r, ft);
    let r = if ftz && ex2_f32 {
        let tiny = fcmp(l, FloatPredicate::OLT, r, fconst(ft, min_normal(l, ft)));
        fsel(l, tiny, ft.const_zero(), r)
    } else {
        flush_if(l, ftz, r)
    };
    let r = match op {
        ApproxOp::Div | ApproxOp::DivFull if ftz => {
            flush_by_exact(l, RoundedOp::Div, Rounding::Rn, &a, r)
        }
        ApproxOp::Rcp if ftz => flush_by_exact(l, RoundedOp::Rcp, Rounding::Rn, &a, r),
        _ => r,
    };
    let r = match op {
        // Measured on an H200 (sm_90, driver 580): every NaN result of rsqrt.approx.ftz.f64
        // (NaN or negative input) is 0x7fffffff00000000, as rcp.approx.ftz.f64 documents.
        ApproxOp::Rsqrt if f64_ftz => fsel(
            l,
            is_nan(l, r),
            from_bits(l, l.i64().const_int(0x7fff_ffff_0000_0000, false), ct),
            hi_word(l, r),
        ),
        // rcp.approx.ftz.f64: "Input NaNs map to a canonical NaN with encoding 0x7fffffff00000000".
        ApproxOp::Rcp if f64_ftz => fsel(
            l,
            is_nan(l, x[0]),
            from_bits(l, l.i64().const_int(0x7fff_ffff_0000_0000, false), ct),
            r,
        ),
        // div.approx.f32: "For 2^126 < |b| < 2^128, if a is infinity, div.approx.f32 returns
        // NaN, otherwise it returns 0" (the hardware's a * rcp(b), rcp flushed to a signed
        // zero; vosen/ptx_tests checks it). a * ±0 gives both, with the product's sign.
        ApproxOp::Div => fsel(
            l,
            fcmp(
                l,
                FloatPredicate::OGT,
                fabs(l, x[1]),
                fconst(ct, 2f64.powi(126)),
            ),
            fmul(l, x[0], copysign(l, fconst(ct, 0.0), x[1])),
            r,
        ),
        _ => r,
    };
    Ok(r.into())
}
