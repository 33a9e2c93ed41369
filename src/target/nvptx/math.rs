//! NVPTX realizations of the shared lowering's floating-point hooks: the same meaning as the
//! target-independent defaults (`lower::fp`), through the `llvm.nvvm.*` intrinsics that select
//! single PTX instructions (`add.rz.ftz.f32`, `cvt.rm.f32.s64`, `sin.approx.f32`, …). Where
//! LLVM 22 has no intrinsic (`rcp.approx.f32` without `.ftz`, `tanh.approx`), the instruction
//! is written as PTX inline assembly; everything else falls back to the default IR.

use crate::llvm::*;
use crate::lower::{fp, ApproxOp, Error, Lowerer, RoundedOp, Rounding, Ty, K};

fn sfx(ty: Ty) -> Option<&'static str> {
    match (ty.k, ty.bits) {
        (K::F, 32) => Some("f"),
        (K::F, 64) => Some("d"),
        _ => None,
    }
}

pub fn rounded_op<'c>(
    l: &Lowerer<'c, '_>,
    op: RoundedOp,
    rnd: Rounding,
    ftz: bool,
    ty: Ty,
    args: &[BasicValueEnum<'c>],
) -> Result<BasicValueEnum<'c>, Error> {
    let Some(s) = sfx(ty) else {
        return fp::default_rounded_op(l, op, rnd, ftz, ty, args);
    };
    let ftz = ftz && s == "f";
    let mut args = args.to_vec();
    let base = match op {
        RoundedOp::Add => "add",
        RoundedOp::Sub => {
            args[1] = fp::fneg(l, args[1].into_float_value()).into();
            "add"
        }
        RoundedOp::Mul => "mul",
        RoundedOp::Fma => "fma",
        RoundedOp::Div => "div",
        RoundedOp::Sqrt => "sqrt",
        RoundedOp::Rcp => "rcp",
    };
    let name = format!(
        "llvm.nvvm.{base}.{}{}.{s}",
        rnd.name(),
        if ftz { ".ftz" } else { "" }
    );
    Ok(l.call_v(&name, ty.llvm(l.ctx), &args))
}

pub fn rounded_cvt<'c>(
    l: &Lowerer<'c, '_>,
    rnd: Rounding,
    dt: Ty,
    st: Ty,
    a: BasicValueEnum<'c>,
) -> Result<BasicValueEnum<'c>, Error> {
    let r = rnd.name();
    let dty = dt.llvm(l.ctx);
    match (st.k, st.bits, dt.k, dt.bits) {
        (K::S | K::U, sb, K::F, db @ (32 | 64)) => {
            let u = if st.is_signed() { "" } else { "u" };
            let (w, kind) = if sb == 64 { (64, "ll") } else { (32, "i") };
            let v = l.coerce(a, l.int(w).into(), st.is_signed());
            let name = format!(
                "llvm.nvvm.{u}{kind}2{}.{r}",
                if db == 32 { "f" } else { "d" }
            );
            Ok(l.call_v(&name, dty, &[v]))
        }
        (K::F, 64, K::F, 32) => Ok(l.call_v(&format!("llvm.nvvm.d2f.{r}"), dty, &[a])),
        (K::F, 32, K::F, 16) if rnd == Rounding::Rz => {
            Ok(l.call_v("llvm.nvvm.f2f16.rz", dty, &[a]))
        }
        (K::F, 32, K::BF, 16) if rnd == Rounding::Rz => {
            Ok(l.call_v("llvm.nvvm.f2bf16.rz", dty, &[a]))
        }
        _ => fp::default_rounded_cvt(l, rnd, dt, st, a),
    }
}

/// `cvt.rn{.relu}.{f16x2,bf16x2}.f32 d, hi, lo` as `llvm.nvvm.ff2{f16,bf16}x2.rn{.relu}`
/// (sm_80 and later, where PTX has the instruction).
pub fn packed_cvt<'c>(
    l: &Lowerer<'c, '_>,
    dt: Ty,
    relu: bool,
    hi: BasicValueEnum<'c>,
    lo: BasicValueEnum<'c>,
) -> Option<BasicValueEnum<'c>> {
    let e = match dt.k {
        K::F16x2 => "f16",
        K::BF16x2 => "bf16",
        _ => return None,
    };
    if l.sm < 80 {
        return None;
    }
    let relu = if relu { ".relu" } else { "" };
    let name = format!("llvm.nvvm.ff2{e}x2.rn{relu}");
    Some(l.call_v(&name, dt.llvm(l.ctx), &[hi, lo]))
}

/// PTX inline assembly `OP d, a;` on a 16- or 32-bit float.
fn asm1<'c>(l: &Lowerer<'c, '_>, text: &str, x: FloatValue<'c>) -> BasicValueEnum<'c> {
    let ft = x.get_type();
    if fp::fbits(l, ft) == 16 {
        let i = fp::to_bits(l, x);
        let r = l
            .inline_asm(
                Some(l.ctx.i16_type().into()),
                &[i.into()],
                text,
                "=h,h",
                false,
            )
            .unwrap();
        fp::from_bits(l, r.into_int_value(), ft).into()
    } else {
        l.inline_asm(Some(ft.into()), &[x.into()], text, "=f,f", false)
            .unwrap()
    }
}

pub fn approx_op<'c>(
    l: &Lowerer<'c, '_>,
    op: ApproxOp,
    ftz: bool,
    ty: Ty,
    args: &[BasicValueEnum<'c>],
) -> Result<BasicValueEnum<'c>, Error> {
    let f = if ftz { ".ftz" } else { "" };
    let rt = ty.llvm(l.ctx);
    let x = args[0].into_float_value();
    let name = match (op, ty.k, ty.bits) {
        (ApproxOp::Rcp, K::F, 32) if ftz => "llvm.nvvm.rcp.approx.ftz.f".to_string(),
        (ApproxOp::Rcp, K::F, 32) => return Ok(asm1(l, "rcp.approx.f32 $0, $1;", x)),
        (ApproxOp::Rcp, K::F, 64) if ftz => "llvm.nvvm.rcp.approx.ftz.d".to_string(),
        (ApproxOp::Sqrt, K::F, 32) => format!("llvm.nvvm.sqrt.approx{f}.f"),
        (ApproxOp::Rsqrt, K::F, 32) => format!("llvm.nvvm.rsqrt.approx{f}.f"),
        (ApproxOp::Rsqrt, K::F, 64) => format!("llvm.nvvm.rsqrt.approx{f}.d"),
        (ApproxOp::Sin, K::F, 32) => format!("llvm.nvvm.sin.approx{f}.f"),
        (ApproxOp::Cos, K::F, 32) => format!("llvm.nvvm.cos.approx{f}.f"),
        (ApproxOp::Lg2, K::F, 32) => format!("llvm.nvvm.lg2.approx{f}.f"),
        (ApproxOp::Ex2, K::F, 32) => format!("llvm.nvvm.ex2.approx{f}.f32"),
        (ApproxOp::Ex2, K::F, 16) => "llvm.nvvm.ex2.approx.f16".to_string(),
        (ApproxOp::Ex2, K::BF, 16) => "llvm.nvvm.ex2.approx.ftz.bf16".to_string(),
        (ApproxOp::Tanh, K::F, 32) => return Ok(asm1(l, "tanh.approx.f32 $0, $1;", x)),
        (ApproxOp::Tanh, K::F, 16) => return Ok(asm1(l, "tanh.approx.f16 $0, $1;", x)),
        (ApproxOp::Tanh, K::BF, 16) => return Ok(asm1(l, "tanh.approx.bf16 $0, $1;", x)),
        (ApproxOp::Div, K::F, 32) => format!("llvm.nvvm.div.approx{f}.f"),
        (ApproxOp::DivFull, K::F, 32) => format!("llvm.nvvm.div.full{f}"),
        _ => return fp::default_approx_op(l, op, ftz, ty, args),
    };
    Ok(l.call_v(&name, rt, args))
}
