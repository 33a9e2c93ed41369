//! Floating-point arithmetic: `.rn` (the default) as plain LLVM operations; other rounding
//! modes and `.ftz` through `llvm.nvvm.*` intrinsics where they exist; `min`/`max` NaN rules
//! (minnum vs. minimum); approximate transcendentals; anything else (`.sat`, `.relu`, …) falls
//! back to inline PTX.

use super::*;

fn suffix(t: Ty) -> Option<&'static str> {
    match (t.k, t.bits) {
        (K::F, 32) => Some("f"),
        (K::F, 64) => Some("d"),
        _ => None,
    }
}

pub fn lower<'c, 'a>(l: &Lowerer<'c, 'a>, fs: &mut FnState<'c, 'a>, ins: &Ins<'_, 'a>) -> Result<bool, Error> {
    let ops = ins.ops();
    let t = ins.ty();
    if !t.is_float() || ins.mods.iter().any(|m| matches!(*m, ".sat" | ".relu" | ".oob" | ".xorsign" | ".abs" | ".satfinite")) {
        return Ok(false);
    }
    let bd = &l.b;
    let ft = t.llvm(l.ctx);
    let rnd = ins.any(&[".rn", ".rz", ".rm", ".rp"]);
    let ftz = ins.has(".ftz");
    let exotic = rnd.is_some_and(|r| r != ".rn") || ftz;
    let src = |fs: &mut FnState<'c, 'a>, k: usize| -> Result<BasicValueEnum<'c>, Error> {
        l.operand(fs, ops.get(k).ok_or_else(|| invalid(ins.span(), "missing operand"))?, t)
    };
    let scalar = matches!(t.k, K::F) && t.bits >= 32;
    let r: BasicValueEnum = match ins.op {
        "add" | "sub" | "mul" | "div" | "fma" | "mad" => {
            let a = src(fs, 1)?;
            let mut b = src(fs, 2)?;
            if ins.op == "div" && !scalar {
                return Ok(false);
            }
            let approx = ins.has(".approx") || ins.has(".full");
            if exotic || approx || (ins.op == "div" && t.bits == 32 && !ins.has(".rn")) {
                let Some(sfx) = suffix(t) else { return Ok(false) };
                if ins.op == "sub" {
                    b = bd.build_float_neg(b.into_float_value(), "").unwrap().into();
                }
                let base = match ins.op {
                    "add" | "sub" => "add",
                    "mad" => "fma",
                    o => o,
                };
                let name = if ins.has(".approx") {
                    if sfx != "f" {
                        return Ok(false);
                    }
                    format!("llvm.nvvm.div.approx{}.f", if ftz { ".ftz" } else { "" })
                } else if ins.has(".full") {
                    format!("llvm.nvvm.div.full{}", if ftz { ".ftz" } else { "" })
                } else {
                    let r = rnd.unwrap_or(".rn");
                    if ftz && sfx == "d" {
                        return Ok(false);
                    }
                    format!("llvm.nvvm.{base}{r}{}.{sfx}", if ftz { ".ftz" } else { "" })
                };
                let mut args = vec![a, b];
                if matches!(ins.op, "fma" | "mad") {
                    args.push(src(fs, 3)?);
                }
                l.call_v(&name, ft, &args)
            } else {
                let (a, bb) = (a, b);
                match ins.op {
                    "add" => arith(l, a, bb, |x, y| bd.build_float_add(x, y, "").unwrap().into(), |x, y| bd.build_float_add(x, y, "").unwrap().into()),
                    "sub" => arith(l, a, bb, |x, y| bd.build_float_sub(x, y, "").unwrap().into(), |x, y| bd.build_float_sub(x, y, "").unwrap().into()),
                    "mul" => arith(l, a, bb, |x, y| bd.build_float_mul(x, y, "").unwrap().into(), |x, y| bd.build_float_mul(x, y, "").unwrap().into()),
                    "div" => bd.build_float_div(a.into_float_value(), bb.into_float_value(), "").unwrap().into(),
                    _ => {
                        let c = src(fs, 3)?;
                        l.call_v(&format!("llvm.fma.{}", tyname(t)), ft, &[a, bb, c])
                    }
                }
            }
        }
        "min" | "max" => {
            if ops.len() > 3 || !matches!(t.k, K::F) || t.bits < 32 {
                return Ok(false);
            }
            let a = src(fs, 1)?;
            let b = src(fs, 2)?;
            let nan = ins.has(".NaN");
            if ftz {
                let name = format!("llvm.nvvm.f{}.ftz{}.f", ins.op, if nan { ".nan" } else { "" });
                if t.bits != 32 {
                    return Ok(false);
                }
                l.call_v(&name, ft, &[a, b])
            } else {
                let base = match (ins.op, nan) {
                    ("min", false) => "minnum",
                    ("max", false) => "maxnum",
                    ("min", true) => "minimum",
                    _ => "maximum",
                };
                l.call_v(&format!("llvm.{base}.{}", tyname(t)), ft, &[a, b])
            }
        }
        "abs" | "neg" => {
            let a = src(fs, 1)?;
            if ftz {
                if ins.op == "abs" && t.bits == 32 && t.k == K::F {
                    l.call_v("llvm.nvvm.fabs.ftz.f32", ft, &[a])
                } else {
                    return Ok(false);
                }
            } else if ins.op == "abs" {
                l.call_v(&format!("llvm.fabs.{}", tyname(t)), ft, &[a])
            } else {
                match a {
                    BasicValueEnum::FloatValue(f) => bd.build_float_neg(f, "").unwrap().into(),
                    BasicValueEnum::VectorValue(v) => bd.build_float_neg(v, "").unwrap().into(),
                    _ => return Ok(false),
                }
            }
        }
        "rcp" | "sqrt" | "rsqrt" | "ex2" | "lg2" | "sin" | "cos" | "tanh" => {
            if !scalar {
                return Ok(false);
            }
            let a = src(fs, 1)?;
            let f = if ftz { ".ftz" } else { "" };
            let name = match (ins.op, t.bits, ins.has(".approx")) {
                ("rcp", 32, false) | ("sqrt", 32, false) | ("rcp", 64, false) | ("sqrt", 64, false) if !exotic => {
                    if ins.op == "rcp" {
                        let one = ft.into_float_type().const_float(1.0);
                        let r: BasicValueEnum = bd.build_float_div(one, a.into_float_value(), "").unwrap().into();
                        l.set(fs, &ops[0], r, false)?;
                        return Ok(true);
                    }
                    format!("llvm.sqrt.{}", tyname(t))
                }
                ("rcp", 32, false) | ("sqrt", 32, false) => format!("llvm.nvvm.{}{}{f}.f", ins.op, rnd.unwrap_or(".rn")),
                ("rcp", 64, false) | ("sqrt", 64, false) if !ftz => format!("llvm.nvvm.{}{}.d", ins.op, rnd.unwrap_or(".rn")),
                ("rcp", 64, true) if ftz => "llvm.nvvm.rcp.approx.ftz.d".into(),
                ("sqrt", 32, true) => format!("llvm.nvvm.sqrt.approx{f}.f"),
                ("rsqrt", 32, true) => format!("llvm.nvvm.rsqrt.approx{f}.f"),
                ("rsqrt", 64, true) if !ftz => "llvm.nvvm.rsqrt.approx.d".into(),
                ("ex2", 32, true) => format!("llvm.nvvm.ex2.approx{f}.f32"),
                ("lg2", 32, true) => format!("llvm.nvvm.lg2.approx{f}.f"),
                ("sin", 32, true) => format!("llvm.nvvm.sin.approx{f}.f"),
                ("cos", 32, true) => format!("llvm.nvvm.cos.approx{f}.f"),
                _ => return Ok(false),
            };
            l.call_v(&name, ft, &[a])
        }
        "copysign" => {
            if !scalar {
                return Ok(false);
            }
            // copysign.f32 d, a, b: magnitude of b, sign of a.
            let a = src(fs, 1)?;
            let b = src(fs, 2)?;
            l.call_v(&format!("llvm.copysign.{}", tyname(t)), ft, &[b, a])
        }
        "testp" => {
            if !scalar {
                return Ok(false);
            }
            let a = src(fs, 1)?;
            let mask: u64 = match ins.any(&[".finite", ".infinite", ".number", ".notanumber", ".normal", ".subnormal"]) {
                Some(".finite") => 0x1f8,
                Some(".infinite") => 0x204,
                Some(".number") => 0x3fc,
                Some(".notanumber") => 0x3,
                Some(".normal") => 0x108,
                Some(".subnormal") => 0x90,
                _ => return Ok(false),
            };
            let r = l.call_v(&format!("llvm.is.fpclass.{}", tyname(t)), l.i1().into(), &[a, l.i32().const_int(mask, false).into()]);
            l.set(fs, &ops[0], r, false)?;
            return Ok(true);
        }
        _ => return Ok(false),
    };
    l.set(fs, &ops[0], r, false)?;
    Ok(true)
}

fn arith<'c>(
    _l: &Lowerer<'c, '_>,
    a: BasicValueEnum<'c>,
    b: BasicValueEnum<'c>,
    fs: impl Fn(FloatValue<'c>, FloatValue<'c>) -> BasicValueEnum<'c>,
    fv: impl Fn(inkwell_vec::VectorValue<'c>, inkwell_vec::VectorValue<'c>) -> BasicValueEnum<'c>,
) -> BasicValueEnum<'c> {
    match (a, b) {
        (BasicValueEnum::FloatValue(x), BasicValueEnum::FloatValue(y)) => fs(x, y),
        (BasicValueEnum::VectorValue(x), BasicValueEnum::VectorValue(y)) => fv(x, y),
        _ => unreachable!("float operands"),
    }
}

use crate::llvm as inkwell_vec;

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
