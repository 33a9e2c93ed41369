//! Floating-point arithmetic for every PTX float type (`.f16`, `.bf16`, `.f32`, `.f64` and the
//! packed `.f16x2`, `.bf16x2`, `.f32x2`), in target-independent IR with the exact PTX meaning:
//! round-to-nearest as plain LLVM operations; `.rz/.rm/.rp` and `.f32` `.ftz` through
//! [`Target::rounded_op`] (whose default is target-independent); `.ftz` on 16-bit types,
//! `.sat`, `.relu`, `min`/`max` with `.NaN`/`.xorsign.abs` and three inputs, `testp`,
//! `copysign` with explicit IR (`fp.rs`); `.approx` operations through [`Target::approx_op`];
//! the mixed-precision forms (`add.f32.f16`, `fma.f32.bf16`) by exact widening. Packed types
//! are computed lane by lane (element 0 is the low half), except for plain round-to-nearest
//! `add/sub/mul/neg/abs` and `.f32x2` `fma`, which stay LLVM vector operations.

use super::fp::{self, fsel};
use super::target::{ApproxOp, RoundedOp, Rounding};
use super::*;

/// The element type and lane count of a float type.
pub fn lanes(t: Ty) -> (Ty, u32) {
    match t.k {
        K::F16x2 => (Ty::f(16), 2),
        K::BF16x2 => (Ty { k: K::BF, bits: 16 }, 2),
        K::F32x2 => (Ty::f(32), 2),
        _ => (t, 1),
    }
}

/// Splits a (possibly vector) float value into its lanes.
pub fn split<'c>(l: &Lowerer<'c, '_>, v: BasicValueEnum<'c>) -> Vec<FloatValue<'c>> {
    match v {
        BasicValueEnum::VectorValue(vv) => (0..vv.get_type().get_size())
            .map(|i| {
                l.b.build_extract_element(vv, l.i32().const_int(i as u64, false), "")
                    .unwrap()
                    .into_float_value()
            })
            .collect(),
        _ => vec![v.into_float_value()],
    }
}

/// Joins lanes into a value of float type `t`.
pub fn join<'c>(l: &Lowerer<'c, '_>, t: Ty, xs: &[FloatValue<'c>]) -> BasicValueEnum<'c> {
    if xs.len() == 1 {
        return xs[0].into();
    }
    let vt = t.llvm(l.ctx).into_vector_type();
    let mut v = vt.get_undef();
    for (i, x) in xs.iter().enumerate() {
        v =
            l.b.build_insert_element(v, *x, l.i32().const_int(i as u64, false), "")
                .unwrap();
    }
    v.into()
}

fn rounding(ins: &Ins) -> Rounding {
    ins.rounding().unwrap_or(Rounding::Rn)
}

/// The result modifiers of an arithmetic instruction, applied lane by lane.
#[derive(Clone, Copy)]
struct Post {
    sat: bool,
    relu: bool,
}

fn post<'c>(l: &Lowerer<'c, '_>, p: Post, x: FloatValue<'c>) -> FloatValue<'c> {
    let x = if p.sat { fp::sat(l, x) } else { x };
    if p.relu {
        fp::relu(l, x)
    } else {
        x
    }
}

/// One lane of `add/sub/mul/fma/div` on element type `et`.
fn arith_lane<'c>(
    l: &Lowerer<'c, '_>,
    op: RoundedOp,
    rnd: Rounding,
    ftz: bool,
    et: Ty,
    x: &[FloatValue<'c>],
) -> Result<FloatValue<'c>, Error> {
    let args: Vec<BasicValueEnum<'c>> = x.iter().map(|v| (*v).into()).collect();
    if et.k == K::F && et.bits >= 32 {
        if rnd != Rounding::Rn || ftz {
            return Ok(l
                .target
                .rounded_op(l, op, rnd, ftz, et, &args)?
                .into_float_value());
        }
        return Ok(
            fp::default_rounded_op(l, op, Rounding::Rn, false, et, &args)?.into_float_value(),
        );
    }
    // 16-bit types: round-to-nearest only; `.ftz` flushes 16-bit subnormals.
    let x: Vec<FloatValue<'c>> = x.iter().map(|v| fp::flush_if(l, ftz, *v)).collect();
    if op == RoundedOp::Fma && l.target.emulate_fma16() {
        // One rounding of the exact a*b+c: the product of 16-bit values and its sum with c are
        // exact in f64 (two_sum), rounded to odd at f32 and then to nearest. (LLVM's fma of
        // half/bfloat computes in f32 and rounds twice: fma.rn.bf16(0x3f81, 0xfcc0, 0x3f34)
        // would give 0xfcc2 instead of 0xfcc1.)
        let d = l.ctx.f64_type();
        let w: Vec<FloatValue<'c>> = x.iter().map(|v| fp::fext(l, *v, d)).collect();
        let (s, e) = fp::two_sum(l, fp::fmul(l, w[0], w[1]), w[2]);
        let r = fp::ftrunc(l, fp::round_odd_f32(l, s, e), x[0].get_type());
        return Ok(fp::flush_if(l, ftz, r));
    }
    let r = fp::default_rounded_op(
        l,
        op,
        Rounding::Rn,
        false,
        et,
        &x.iter().map(|v| (*v).into()).collect::<Vec<_>>(),
    )?
    .into_float_value();
    Ok(fp::flush_if(l, ftz, r))
}

pub fn lower<'c, 'a>(
    l: &Lowerer<'c, 'a>,
    fs: &mut FnState<'c, 'a>,
    ins: &Ins<'_, 'a>,
) -> Result<bool, Error> {
    let ops = ins.ops();
    let t = ins.ty();
    if !t.is_float() {
        return Ok(false);
    }
    let (et, n) = lanes(t);
    let ftz = ins.has(Mod::Ftz);
    let src = |fs: &mut FnState<'c, 'a>, k: usize, ty: Ty| -> Result<BasicValueEnum<'c>, Error> {
        l.operand(
            fs,
            ops.get(k)
                .ok_or_else(|| invalid(ins.span(), "missing operand"))?,
            ty,
        )
    };
    let r: BasicValueEnum<'c> = match ins.op {
        "add" | "sub" | "mul" | "fma" | "mad" | "div" => {
            if ins.has(Mod::Oob) {
                // The OOB-NaN of tensor fills has no meaning outside NVIDIA hardware.
                return Ok(false);
            }
            let op = match ins.op {
                "add" => RoundedOp::Add,
                "sub" => RoundedOp::Sub,
                "mul" => RoundedOp::Mul,
                "div" => RoundedOp::Div,
                _ => RoundedOp::Fma,
            };
            let rnd = rounding(ins);
            let p = Post {
                sat: ins.has(Mod::Sat),
                relu: ins.has(Mod::Relu),
            };
            // Mixed precision: `add.f32.f16 d, a, c`, `fma.f32.bf16 d, a, b, c` — the 16-bit
            // sources widen exactly to f32.
            if ins.types.len() == 2 && ins.types[0] != ins.types[1] {
                let (dt, at) = (ins.types[0], ins.types[1]);
                let ft = fp::fty(l, dt);
                let nargs = if op == RoundedOp::Fma { 3 } else { 2 };
                let mut x = Vec::new();
                for k in 0..nargs {
                    let narrow = k + 1 < nargs;
                    let v = src(fs, k + 1, if narrow { at } else { dt })?.into_float_value();
                    x.push(fp::fext(l, v, ft));
                }
                let r = arith_lane(l, op, rnd, ftz, dt, &x)?;
                let r = post(l, p, r);
                let r = gpu_nans(l, dt, r.into());
                l.set(fs, &ops[0], r, false)?;
                return Ok(true);
            }
            if op == RoundedOp::Div {
                let a = src(fs, 1, t)?.into_float_value();
                let b = src(fs, 2, t)?.into_float_value();
                let r = if ins.has(Mod::Approx) || ins.has(Mod::Full) {
                    let ap = if ins.has(Mod::Full) {
                        ApproxOp::DivFull
                    } else {
                        ApproxOp::Div
                    };
                    l.target
                        .approx_op(l, ap, ftz, t, &[a.into(), b.into()])?
                        .into_float_value()
                } else {
                    arith_lane(l, op, rnd, ftz, t, &[a, b])?
                };
                let r = fp::gpu_nan_f64(l, &[a, b], r);
                let r = gpu_nans(l, t, r.into());
                l.set(fs, &ops[0], r, false)?;
                return Ok(true);
            }
            let nargs = if op == RoundedOp::Fma { 3 } else { 2 };
            let mut args = Vec::new();
            for k in 0..nargs {
                args.push(src(fs, k + 1, t)?);
            }
            // (A 16-bit fma goes lane by lane: LLVM's vector fma of half/bfloat rounds twice.)
            let half_fma = op == RoundedOp::Fma && et.bits == 16 && l.target.emulate_fma16();
            let r = if n > 1 && rnd == Rounding::Rn && !ftz && !p.sat && !p.relu && !half_fma {
                // Plain packed arithmetic stays a vector operation.
                let (a, b) = (args[0].into_vector_value(), args[1].into_vector_value());
                match op {
                    RoundedOp::Add => l.b.build_float_add(a, b, "").unwrap().into(),
                    RoundedOp::Sub => l.b.build_float_sub(a, b, "").unwrap().into(),
                    RoundedOp::Mul => l.b.build_float_mul(a, b, "").unwrap().into(),
                    _ => l.call_v(&format!("llvm.fma.{}", tyname(t)), t.llvm(l.ctx), &args),
                }
            } else {
                let lanes_in: Vec<Vec<FloatValue<'c>>> =
                    args.iter().map(|v| split(l, *v)).collect();
                let mut out = Vec::new();
                for i in 0..n as usize {
                    let x: Vec<FloatValue<'c>> = lanes_in.iter().map(|v| v[i]).collect();
                    let r = arith_lane(l, op, rnd, ftz, et, &x)?;
                    out.push(post(l, p, r));
                }
                join(l, t, &out)
            };
            let r = if et.bits == 64 {
                let x: Vec<FloatValue<'c>> = args.iter().map(|v| v.into_float_value()).collect();
                let order = match op {
                    RoundedOp::Fma => vec![x[1], x[2], x[0]],
                    _ => vec![x[1], x[0]],
                };
                fp::gpu_nan_f64(l, &order, r.into_float_value()).into()
            } else {
                r
            };
            gpu_nans(l, t, r)
        }
        "min" | "max" => {
            let is_max = ins.op == "max";
            let nan = ins.has(Mod::NaN);
            let xa = ins.has(Mod::Xorsign);
            let abs = ins.has(Mod::Abs);
            let mut args = Vec::new();
            for k in 1..ops.len() {
                args.push(split(l, src(fs, k, t)?));
            }
            let mut out = Vec::new();
            for i in 0..n as usize {
                let mut x: Vec<FloatValue<'c>> =
                    args.iter().map(|v| fp::flush_if(l, ftz, v[i])).collect();
                let r = if x.len() == 2 {
                    fp::minmax(l, is_max, nan, xa && abs, x[0], x[1])
                } else {
                    // Three inputs: `.abs` compares magnitudes.
                    if abs {
                        x = x.iter().map(|v| fp::fabs(l, *v)).collect();
                    }
                    let m = fp::minmax(l, is_max, nan, false, x[0], x[1]);
                    fp::minmax(l, is_max, nan, false, m, x[2])
                };
                out.push(fp::flush_if(l, ftz, r));
            }
            join(l, t, &out)
        }
        "abs" | "neg" => {
            let a = src(fs, 1, t)?;
            let r = if !ftz {
                // Sign-bit operations, NaNs included.
                if ins.op == "abs" {
                    l.call_v(&format!("llvm.fabs.{}", tyname(t)), t.llvm(l.ctx), &[a])
                } else {
                    match a {
                        BasicValueEnum::VectorValue(v) => {
                            l.b.build_float_neg(v, "").unwrap().into()
                        }
                        _ => {
                            l.b.build_float_neg(a.into_float_value(), "")
                                .unwrap()
                                .into()
                        }
                    }
                }
            } else {
                let out: Vec<FloatValue<'c>> = split(l, a)
                    .into_iter()
                    .map(|x| {
                        let x = fp::flush(l, x);
                        if ins.op == "abs" {
                            fp::fabs(l, x)
                        } else {
                            fp::fneg(l, x)
                        }
                    })
                    .collect();
                join(l, t, &out)
            };
            // Measured on an H200 (sm_90, driver 580): neg/abs of a f16/bf16 NaN give 0x7fff,
            // `neg.f64`/`abs.f64` of a NaN give it quieted, sign unchanged (a f32 NaN only has
            // its sign bit changed).
            if et.bits == 16 {
                gpu_nans(l, t, r)
            } else if et.bits == 64 && l.target.gpu_nans() {
                let a = a.into_float_value();
                let q = fp::quiet(l, a);
                fp::bits_sel(l, fp::is_nan(l, a), q, r.into_float_value()).into()
            } else {
                r
            }
        }
        "rcp" | "sqrt" | "rsqrt" | "ex2" | "lg2" | "sin" | "cos" | "tanh" => {
            let a = src(fs, 1, t)?;
            let approx = ins.has(Mod::Approx);
            let mut out = Vec::new();
            for x in split(l, a) {
                let r = if !approx {
                    // rcp.rnd / sqrt.rnd: IEEE.
                    let op = if ins.op == "rcp" {
                        RoundedOp::Rcp
                    } else {
                        RoundedOp::Sqrt
                    };
                    if !matches!(ins.op, "rcp" | "sqrt") {
                        return Ok(false);
                    }
                    arith_lane(l, op, rounding(ins), ftz, et, &[x])?
                } else {
                    let op = match ins.op {
                        "rcp" => ApproxOp::Rcp,
                        "sqrt" => ApproxOp::Sqrt,
                        "rsqrt" => ApproxOp::Rsqrt,
                        "ex2" => ApproxOp::Ex2,
                        "lg2" => ApproxOp::Lg2,
                        "sin" => ApproxOp::Sin,
                        "cos" => ApproxOp::Cos,
                        _ => ApproxOp::Tanh,
                    };
                    l.target
                        .approx_op(l, op, ftz, et, &[x.into()])?
                        .into_float_value()
                };
                let r = if ins.op == "sqrt" {
                    fp::gpu_sqrt_nan(l, fp::flush_if(l, ftz, x), r)
                } else {
                    r
                };
                out.push(r);
            }
            gpu_nans(l, t, join(l, t, &out))
        }
        "copysign" => {
            // copysign d, a, b: the magnitude of b with the sign of a.
            let a = src(fs, 1, t)?.into_float_value();
            let b = src(fs, 2, t)?.into_float_value();
            fp::copysign(l, b, a).into()
        }
        "testp" => {
            let a = src(fs, 1, t)?;
            // llvm.is.fpclass bits: 0 sNaN, 1 qNaN, 2 -inf, 3 -normal, 4 -subnormal, 5 -0,
            // 6 +0, 7 +subnormal, 8 +normal, 9 +inf.
            let mask: u64 = match ins.any(&[
                Mod::Finite,
                Mod::Infinite,
                Mod::Number,
                Mod::Notanumber,
                Mod::Normal,
                Mod::Subnormal,
            ]) {
                Some(Mod::Finite) => 0x1f8,
                Some(Mod::Infinite) => 0x204,
                Some(Mod::Number) => 0x3fc,
                Some(Mod::Notanumber) => 0x3,
                // ±0 count as normal: the ISA says so ("positive and negative zero are
                // considered normal numbers"); measured on an H200 (sm_90, driver 580) for
                // f64, and vosen/ptx_tests' testp_normal_f32 (checked on NVIDIA GPUs) for f32.
                Some(Mod::Normal) => 0x168,
                Some(Mod::Subnormal) => 0x90,
                _ => return Ok(false),
            };
            let r = l.call_v(
                &format!("llvm.is.fpclass.{}", tyname(t)),
                l.i1().into(),
                &[a, l.i32().const_int(mask, false).into()],
            );
            l.set(fs, &ops[0], r, false)?;
            return Ok(true);
        }
        _ => return Ok(false),
    };
    l.set(fs, &ops[0], r, false)?;
    Ok(true)
}

/// Every lane of `v` through [`fp::gpu_nan`]: the GPU's NaN for f32/f16/bf16 results.
fn gpu_nans<'c>(l: &Lowerer<'c, '_>, t: Ty, v: BasicValueEnum<'c>) -> BasicValueEnum<'c> {
    if !l.target.gpu_nans() || lanes(t).0.bits > 32 {
        return v;
    }
    let out: Vec<FloatValue<'c>> = split(l, v).into_iter().map(|x| fp::gpu_nan(l, x)).collect();
    join(l, t, &out)
}

/// Selects with a float result (re-exported for other families).
pub fn select_f<'c>(
    l: &Lowerer<'c, '_>,
    c: IntValue<'c>,
    a: FloatValue<'c>,
    b: FloatValue<'c>,
) -> FloatValue<'c> {
    fsel(l, c, a, b)
}

/// The overload suffix of a float type (`f32`, `v2f16`, …).
pub fn tyname(t: Ty) -> &'static str {
    match (t.k, t.bits) {
        (K::F, 16) => "f16",
        (K::F, 32) => "f32",
        (K::F, 64) => "f64",
        (K::BF, _) => "bf16",
        (K::F16x2, _) => "v2f16",
        (K::BF16x2, _) => "v2bf16",
        (K::F32x2, _) => "v2f32",
        _ => "f32",
    }
}
