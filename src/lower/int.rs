//! Integer arithmetic, logic, shifts, comparisons and moves with PTX's exact semantics:
//! `.lo/.hi/.wide`, `.sat`, carry chains (`.cc`, `addc`, `subc`, `madc`; CC.CF is an i1
//! alloca), division by zero without undefined behaviour, and clamped shift amounts.

use super::*;

fn bin<'c>(
    l: &Lowerer<'c, '_>,
    op: &str,
    a: IntValue<'c>,
    b: IntValue<'c>,
    signed: bool,
) -> IntValue<'c> {
    let bd = &l.b;
    match op {
        "add" => bd.build_int_add(a, b, "").unwrap(),
        "sub" => bd.build_int_sub(a, b, "").unwrap(),
        "and" => bd.build_and(a, b, "").unwrap(),
        "or" => bd.build_or(a, b, "").unwrap(),
        "xor" => bd.build_xor(a, b, "").unwrap(),
        "min" | "max" => {
            let p = match (op, signed) {
                ("min", true) => IntPredicate::SLT,
                ("min", false) => IntPredicate::ULT,
                (_, true) => IntPredicate::SGT,
                _ => IntPredicate::UGT,
            };
            let c = bd.build_int_compare(p, a, b, "").unwrap();
            bd.build_select(c, a, b, "").unwrap().into_int_value()
        }
        _ => unreachable!(),
    }
}

/// Multiplication with `.lo`, `.hi` or `.wide`; returns the result of the destination width.
fn mul<'c>(
    l: &Lowerer<'c, '_>,
    ins: &Ins,
    a: IntValue<'c>,
    b: IntValue<'c>,
    t: Ty,
) -> IntValue<'c> {
    let bd = &l.b;
    let s = t.is_signed();
    if ins.has(Mod::Hi) || ins.has(Mod::Wide) {
        let w = l.int(t.bits * 2);
        let ext = |v: IntValue<'c>| {
            if s {
                bd.build_int_s_extend(v, w, "").unwrap()
            } else {
                bd.build_int_z_extend(v, w, "").unwrap()
            }
        };
        let p = bd.build_int_mul(ext(a), ext(b), "").unwrap();
        if ins.has(Mod::Wide) {
            return p;
        }
        let sh = bd
            .build_right_shift(p, w.const_int(t.bits as u64, false), false, "")
            .unwrap();
        return bd.build_int_truncate(sh, l.int(t.bits), "").unwrap();
    }
    bd.build_int_mul(a, b, "").unwrap()
}

fn cmp_pred(op: Mod, signed: bool) -> Option<IntPredicate> {
    Some(match op {
        Mod::Eq => IntPredicate::EQ,
        Mod::Ne => IntPredicate::NE,
        Mod::Lt if signed => IntPredicate::SLT,
        Mod::Le if signed => IntPredicate::SLE,
        Mod::Gt if signed => IntPredicate::SGT,
        Mod::Ge if signed => IntPredicate::SGE,
        Mod::Lt | Mod::Lo => IntPredicate::ULT,
        Mod::Le | Mod::Ls => IntPredicate::ULE,
        Mod::Gt | Mod::Hi => IntPredicate::UGT,
        Mod::Ge | Mod::Hs => IntPredicate::UGE,
        _ => return None,
    })
}

/// Compares `a` and `b` of type `t` with the comparison of `ins`.
pub fn compare<'c>(
    l: &Lowerer<'c, '_>,
    ins: &Ins,
    t: Ty,
    a: BasicValueEnum<'c>,
    b: BasicValueEnum<'c>,
) -> Option<IntValue<'c>> {
    let op = ins.cmp_op()?;
    if t.is_float() {
        if !matches!(t.k, K::F | K::BF) {
            return None;
        }
        let p = match op {
            Mod::Eq => FloatPredicate::OEQ,
            Mod::Ne => FloatPredicate::ONE,
            Mod::Lt => FloatPredicate::OLT,
            Mod::Le => FloatPredicate::OLE,
            Mod::Gt => FloatPredicate::OGT,
            Mod::Ge => FloatPredicate::OGE,
            Mod::Equ => FloatPredicate::UEQ,
            Mod::Neu => FloatPredicate::UNE,
            Mod::Ltu => FloatPredicate::ULT,
            Mod::Leu => FloatPredicate::ULE,
            Mod::Gtu => FloatPredicate::UGT,
            Mod::Geu => FloatPredicate::UGE,
            Mod::Num => FloatPredicate::ORD,
            Mod::Nan => FloatPredicate::UNO,
            _ => return None,
        };
        return Some(
            l.b.build_float_compare(p, a.into_float_value(), b.into_float_value(), "")
                .unwrap(),
        );
    }
    let p = cmp_pred(op, t.is_signed())?;
    Some(
        l.b.build_int_compare(p, a.into_int_value(), b.into_int_value(), "")
            .unwrap(),
    )
}

/// Applies `.and/.or/.xor` with predicate `c` (setp/set's boolean part).
fn bool_op<'c, 'a>(
    l: &Lowerer<'c, 'a>,
    fs: &mut FnState<'c, 'a>,
    ins: &Ins<'_, 'a>,
    r: IntValue<'c>,
    c_op: Option<&Operand<'a>>,
) -> Result<(IntValue<'c>, IntValue<'c>), Error> {
    let nr = l.b.build_not(r, "").unwrap();
    let Some(bo) = ins.bool_op() else {
        return Ok((r, nr));
    };
    let c = l
        .operand(
            fs,
            c_op.ok_or_else(|| invalid(ins.span(), "missing predicate operand"))?,
            Ty::PRED,
        )?
        .into_int_value();
    let f = |x: IntValue<'c>| match bo {
        Mod::And => l.b.build_and(x, c, "").unwrap(),
        Mod::Or => l.b.build_or(x, c, "").unwrap(),
        _ => l.b.build_xor(x, c, "").unwrap(),
    };
    Ok((f(r), f(nr)))
}

pub fn lower<'c, 'a>(
    l: &Lowerer<'c, 'a>,
    fs: &mut FnState<'c, 'a>,
    ins: &Ins<'_, 'a>,
) -> Result<bool, Error> {
    let ops = ins.ops();
    let t = ins.ty();
    let bd = &l.b;
    let s = t.is_signed();
    if t.k == K::F32x2 && !matches!(ins.op, "mov") {
        return Ok(false);
    }
    let src = |fs: &mut FnState<'c, 'a>, k: usize, ty: Ty| -> Result<BasicValueEnum<'c>, Error> {
        l.operand(
            fs,
            ops.get(k)
                .ok_or_else(|| invalid(ins.span(), "missing operand"))?,
            ty,
        )
    };
    if t.k == K::I16x2 {
        // add/min/max .u16x2/.s16x2 (min/max also .relu.s16x2): lane-wise on <2 x i16>.
        let s = ins.has(Mod::S16x2);
        let a = src(fs, 1, t)?.into_vector_value();
        let b = src(fs, 2, t)?.into_vector_value();
        let vt = a.get_type();
        let r: BasicValueEnum = match ins.op {
            "add" => bd.build_int_add(a, b, "").unwrap().into(),
            "sub" => bd.build_int_sub(a, b, "").unwrap().into(),
            "min" | "max" => {
                let f = format!("llvm.{}{}.v2i16", if s { "s" } else { "u" }, ins.op);
                let r = l.call_v(&f, vt.into(), &[a.into(), b.into()]);
                if ins.has(Mod::Relu) {
                    l.call_v("llvm.smax.v2i16", vt.into(), &[r, vt.const_zero().into()])
                } else {
                    r
                }
            }
            _ => return Ok(false),
        };
        l.set(fs, &ops[0], r, false)?;
        return Ok(true);
    }
    match ins.op {
        "mov" => return mov(l, fs, ins),
        "add" | "sub" if ins.has(Mod::Cc) => {
            let a = src(fs, 1, t)?.into_int_value();
            let b = src(fs, 2, t)?.into_int_value();
            // CC.CF: the carry-out of the adder. The manual calls sub.cc's flag a "borrow-out",
            // but the hardware subtracts as a + ~b + 1 and keeps that addition's carry-out: 1
            // when there is *no* borrow (a >= b unsigned). subc consumes it the same way, so
            // sub.cc/subc chains agree with either reading, and mixed add/sub chains (sub.cc
            // followed by addc) give what a GPU gives.
            let (r, c) = if ins.op == "add" {
                overflow(l, "llvm.uadd.with.overflow", a, b)
            } else {
                let (r, borrow) = overflow(l, "llvm.usub.with.overflow", a, b);
                (r, bd.build_not(borrow, "").unwrap())
            };
            let slot = l.cc_slot(fs);
            bd.build_store(slot, c).unwrap();
            l.set(fs, &ops[0], r.into(), s)?;
        }
        "add" | "sub" | "and" | "or" | "xor" | "min" | "max" => {
            let a = src(fs, 1, t)?.into_int_value();
            let b = src(fs, 2, t)?.into_int_value();
            let mut r = if ins.has(Mod::Sat) && matches!(ins.op, "add" | "sub") {
                // add.sat.s32/sub.sat.s32 clamp to MININT..MAXINT (unsigned forms saturate to
                // the unsigned range).
                let n = format!(
                    "llvm.{}{}.sat.i{}",
                    if s { "s" } else { "u" },
                    ins.op,
                    t.bits
                );
                l.call_v(&n, a.get_type().into(), &[a.into(), b.into()])
                    .into_int_value()
            } else {
                bin(l, ins.op, a, b, s)
            };
            if ins.has(Mod::Relu) {
                // min/max.relu.s32: clamp negative results to 0.
                let neg = bd
                    .build_int_compare(IntPredicate::SLT, r, r.get_type().const_zero(), "")
                    .unwrap();
                r = bd
                    .build_select(neg, r.get_type().const_zero(), r, "")
                    .unwrap()
                    .into_int_value();
            }
            l.set(fs, &ops[0], r.into(), s)?;
        }
        "addc" | "subc" => {
            let a = src(fs, 1, t)?.into_int_value();
            let b = src(fs, 2, t)?.into_int_value();
            let slot = l.cc_slot(fs);
            let cf = bd.build_load(l.i1(), slot, "").unwrap().into_int_value();
            let cfw = bd.build_int_z_extend(cf, a.get_type(), "").unwrap();
            // addc: a + b + CF; subc: a + ~b + CF (= a - b - !CF, CF being the adder's carry
            // as sub.cc leaves it); the carry-out of either addition is the new CF.
            let b = if ins.op == "addc" {
                b
            } else {
                bd.build_not(b, "").unwrap()
            };
            let (r1, c1) = overflow(l, "llvm.uadd.with.overflow", a, b);
            let (r2, c2) = overflow(l, "llvm.uadd.with.overflow", r1, cfw);
            if ins.has(Mod::Cc) {
                let c = bd.build_or(c1, c2, "").unwrap();
                bd.build_store(slot, c).unwrap();
            }
            l.set(fs, &ops[0], r2.into(), s)?;
        }
        "mul" => {
            let a = src(fs, 1, t)?.into_int_value();
            let b = src(fs, 2, t)?.into_int_value();
            let r = mul(l, ins, a, b, t);
            l.set(fs, &ops[0], r.into(), s)?;
        }
        "mad" | "madc" => {
            let a = src(fs, 1, t)?.into_int_value();
            let b = src(fs, 2, t)?.into_int_value();
            let p = mul(l, ins, a, b, t);
            let ct = if ins.has(Mod::Wide) {
                Ty {
                    k: t.k,
                    bits: t.bits * 2,
                }
            } else {
                t
            };
            let c = src(fs, 3, ct)?.into_int_value();
            let r = if ins.has(Mod::Cc) || ins.op == "madc" {
                let slot = l.cc_slot(fs);
                let (r1, c1) = overflow(l, "llvm.uadd.with.overflow", p, c);
                let (r, cout) = if ins.op == "madc" {
                    let cf = bd.build_load(l.i1(), slot, "").unwrap().into_int_value();
                    let cfw = bd.build_int_z_extend(cf, r1.get_type(), "").unwrap();
                    let (r2, c2) = overflow(l, "llvm.uadd.with.overflow", r1, cfw);
                    (r2, bd.build_or(c1, c2, "").unwrap())
                } else {
                    (r1, c1)
                };
                if ins.has(Mod::Cc) {
                    bd.build_store(slot, cout).unwrap();
                }
                r
            } else if ins.has(Mod::Sat) {
                // mad.hi.sat.s32: the addition saturates to MININT..MAXINT.
                l.call_v(
                    &format!("llvm.sadd.sat.i{}", t.bits),
                    p.get_type().into(),
                    &[p.into(), c.into()],
                )
                .into_int_value()
            } else {
                bd.build_int_add(p, c, "").unwrap()
            };
            l.set(fs, &ops[0], r.into(), s)?;
        }
        "mul24" | "mad24" => {
            // t = a[23:0] * b[23:0] (48 bits, sign-extended for .s32); .lo: t[31:0], .hi:
            // t[47:16]; mad24 adds c (saturating for .hi.sat.s32).
            let a = src(fs, 1, t)?.into_int_value();
            let b = src(fs, 2, t)?.into_int_value();
            let sh = l.i32().const_int(8, false);
            let x24 = |v: IntValue<'c>| {
                let v = bd.build_left_shift(v, sh, "").unwrap();
                bd.build_right_shift(v, sh, s, "").unwrap()
            };
            let mut r = if ins.has(Mod::Hi) {
                let ext = |v: IntValue<'c>| {
                    if s {
                        bd.build_int_s_extend(v, l.i64(), "").unwrap()
                    } else {
                        bd.build_int_z_extend(v, l.i64(), "").unwrap()
                    }
                };
                let p = bd.build_int_mul(ext(x24(a)), ext(x24(b)), "").unwrap();
                let p = bd
                    .build_right_shift(p, l.i64().const_int(16, false), false, "")
                    .unwrap();
                bd.build_int_truncate(p, l.i32(), "").unwrap()
            } else {
                bd.build_int_mul(x24(a), x24(b), "").unwrap()
            };
            if ins.op == "mad24" {
                let c = src(fs, 3, t)?.into_int_value();
                r = if ins.has(Mod::Sat) {
                    l.call_v("llvm.sadd.sat.i32", l.i32().into(), &[r.into(), c.into()])
                        .into_int_value()
                } else {
                    bd.build_int_add(r, c, "").unwrap()
                };
            }
            l.set(fs, &ops[0], r.into(), s)?;
        }
        "div" | "rem" => {
            let a = src(fs, 1, t)?.into_int_value();
            let b = src(fs, 2, t)?.into_int_value();
            let ty = a.get_type();
            let zero = ty.const_zero();
            let ones = ty.const_all_ones();
            let bz = bd.build_int_compare(IntPredicate::EQ, b, zero, "").unwrap();
            let bm1 = bd.build_int_compare(IntPredicate::EQ, b, ones, "").unwrap();
            // Divisor 0 → hardware's all-ones quotient / dividend remainder; INT_MIN / -1 wraps.
            let unsafe_b = if s {
                bd.build_or(bz, bm1, "").unwrap()
            } else {
                bz
            };
            let one = ty.const_int(1, false);
            let sb = bd
                .build_select(unsafe_b, one, b, "")
                .unwrap()
                .into_int_value();
            let r = match (ins.op, s) {
                ("div", true) => bd.build_int_signed_div(a, sb, "").unwrap(),
                ("div", false) => bd.build_int_unsigned_div(a, sb, "").unwrap(),
                (_, true) => bd.build_int_signed_rem(a, sb, "").unwrap(),
                _ => bd.build_int_unsigned_rem(a, sb, "").unwrap(),
            };
            let r = if ins.op == "div" {
                let neg = bd.build_int_neg(a, "").unwrap();
                let r = if s {
                    bd.build_select(bm1, neg, r, "").unwrap().into_int_value()
                } else {
                    r
                };
                bd.build_select(bz, ones, r, "").unwrap().into_int_value()
            } else {
                let r = if s {
                    bd.build_select(bm1, zero, r, "").unwrap().into_int_value()
                } else {
                    r
                };
                bd.build_select(bz, a, r, "").unwrap().into_int_value()
            };
            l.set(fs, &ops[0], r.into(), s)?;
        }
        "abs" | "neg" | "not" | "cnot" => {
            let a = src(fs, 1, t)?.into_int_value();
            let r = match ins.op {
                "abs" => l
                    .call_v(
                        &format!("llvm.abs.i{}", t.bits),
                        a.get_type().into(),
                        &[a.into(), l.i1().const_zero().into()],
                    )
                    .into_int_value(),
                "neg" => bd.build_int_neg(a, "").unwrap(),
                "not" => bd.build_not(a, "").unwrap(),
                _ => {
                    let z = bd
                        .build_int_compare(IntPredicate::EQ, a, a.get_type().const_zero(), "")
                        .unwrap();
                    bd.build_int_z_extend(z, a.get_type(), "").unwrap()
                }
            };
            l.set(fs, &ops[0], r.into(), s)?;
        }
        "shl" | "shr" => {
            let a = src(fs, 1, t)?.into_int_value();
            let b = src(fs, 2, Ty::u(32))?.into_int_value();
            let ty = a.get_type();
            let bits = l.i32().const_int(t.bits as u64, false);
            let big = bd
                .build_int_compare(IntPredicate::UGE, b, bits, "")
                .unwrap();
            let r = if ins.op == "shr" && s {
                let lim = l.i32().const_int(t.bits as u64 - 1, false);
                let amt = bd.build_select(big, lim, b, "").unwrap().into_int_value();
                let amt = l.coerce(amt.into(), ty.into(), false).into_int_value();
                bd.build_right_shift(a, amt, true, "").unwrap()
            } else {
                let lim = l.i32().const_zero();
                let amt = bd.build_select(big, lim, b, "").unwrap().into_int_value();
                let amt = l.coerce(amt.into(), ty.into(), false).into_int_value();
                let r = if ins.op == "shl" {
                    bd.build_left_shift(a, amt, "").unwrap()
                } else {
                    bd.build_right_shift(a, amt, false, "").unwrap()
                };
                bd.build_select(big, ty.const_zero(), r, "")
                    .unwrap()
                    .into_int_value()
            };
            l.set(fs, &ops[0], r.into(), s)?;
        }
        "sad" => {
            let a = src(fs, 1, t)?.into_int_value();
            let b = src(fs, 2, t)?.into_int_value();
            let c = src(fs, 3, t)?.into_int_value();
            let gt = bd
                .build_int_compare(
                    if s {
                        IntPredicate::SGT
                    } else {
                        IntPredicate::UGT
                    },
                    a,
                    b,
                    "",
                )
                .unwrap();
            let d1 = bd.build_int_sub(a, b, "").unwrap();
            let d2 = bd.build_int_sub(b, a, "").unwrap();
            let d = bd.build_select(gt, d1, d2, "").unwrap().into_int_value();
            let r = bd.build_int_add(c, d, "").unwrap();
            l.set(fs, &ops[0], r.into(), s)?;
        }
        "setp" => {
            if matches!(t.k, K::F16x2 | K::BF16x2) {
                // setp.f16x2 p|q: p from the low half, q from the high half.
                let a = float::split(l, src(fs, 1, t)?);
                let b = float::split(l, src(fs, 2, t)?);
                let et = float::lanes(t).0;
                let mut res = Vec::new();
                for i in 0..2 {
                    let (x, y) = (
                        fp::flush_if(l, ins.has(Mod::Ftz), a[i]),
                        fp::flush_if(l, ins.has(Mod::Ftz), b[i]),
                    );
                    let Some(r) = compare(l, ins, et, x.into(), y.into()) else {
                        return Ok(false);
                    };
                    res.push(bool_op(l, fs, ins, r, ops.get(3))?.0);
                }
                match &ops[0] {
                    Operand::Pair(p, q, _) => {
                        l.set(fs, p, res[0].into(), false)?;
                        l.set(fs, q, res[1].into(), false)?;
                    }
                    d => l.set(fs, d, res[0].into(), false)?,
                }
                return Ok(true);
            }
            let mut a = src(fs, 1, t)?;
            let mut b = src(fs, 2, t)?;
            if t.is_float() && ins.has(Mod::Ftz) {
                a = fp::flush(l, a.into_float_value()).into();
                b = fp::flush(l, b.into_float_value()).into();
            }
            let Some(r) = compare(l, ins, t, a, b) else {
                return Ok(false);
            };
            let (r, nr) = bool_op(l, fs, ins, r, ops.get(3))?;
            match &ops[0] {
                Operand::Pair(p, q, _) => {
                    l.set(fs, p, r.into(), false)?;
                    l.set(fs, q, nr.into(), false)?;
                }
                d => l.set(fs, d, r.into(), false)?,
            }
        }
        "set" => {
            // set.CmpOp{.BoolOp}.dtype.stype: 1.0 / all ones when true, 0 when false; packed
            // sources and destinations lane by lane.
            let (dt, st) = (ins.types[0], *ins.types.get(1).unwrap_or(&ins.types[0]));
            let ftz = ins.has(Mod::Ftz);
            let srcs =
                |fs: &mut FnState<'c, 'a>, k: usize| -> Result<Vec<BasicValueEnum<'c>>, Error> {
                    let v = src(fs, k, st)?;
                    Ok(if matches!(st.k, K::F16x2 | K::BF16x2) {
                        float::split(l, v)
                            .into_iter()
                            .map(|x| fp::flush_if(l, ftz, x).into())
                            .collect()
                    } else if st.is_float() {
                        vec![fp::flush_if(l, ftz, v.into_float_value()).into()]
                    } else {
                        vec![v]
                    })
                };
            let a = srcs(fs, 1)?;
            let b = srcs(fs, 2)?;
            let et = float::lanes(st).0;
            let mut lanes = Vec::new();
            for i in 0..a.len() {
                let Some(r) = compare(l, ins, et, a[i], b[i]) else {
                    return Ok(false);
                };
                lanes.push(bool_op(l, fs, ins, r, ops.get(3))?.0);
            }
            let v: BasicValueEnum = if a.len() == 2 {
                // Two 16-bit results: f16x2/bf16x2 1.0 or 0.0, or 0xffff/0 halves of .u32/.s32.
                let (one, w): (u64, u32) = match dt.k {
                    K::F16x2 => (0x3c00, 16),
                    K::BF16x2 => (0x3f80, 16),
                    _ => (0xffff, 16),
                };
                let i32t = l.i32();
                let mut acc = i32t.const_zero();
                for (i, r) in lanes.iter().enumerate() {
                    let h = bd
                        .build_select(*r, i32t.const_int(one, false), i32t.const_zero(), "")
                        .unwrap()
                        .into_int_value();
                    let h = bd
                        .build_left_shift(h, i32t.const_int((i as u32 * w) as u64, false), "")
                        .unwrap();
                    acc = bd.build_or(acc, h, "").unwrap();
                }
                acc.into()
            } else {
                let r = lanes[0];
                let dty = dt.llvm(l.ctx);
                if dt.is_float() {
                    let ft = dty.into_float_type();
                    bd.build_select(r, ft.const_float(1.0), ft.const_zero(), "")
                        .unwrap()
                } else {
                    let it = dty.into_int_type();
                    bd.build_select(r, it.const_all_ones(), it.const_zero(), "")
                        .unwrap()
                }
            };
            l.set(fs, &ops[0], v, false)?;
        }
        "selp" => {
            let a = src(fs, 1, t)?;
            let b = src(fs, 2, t)?;
            let c = src(fs, 3, Ty::PRED)?.into_int_value();
            let r = bd.build_select(c, a, b, "").unwrap();
            l.set(fs, &ops[0], r, s)?;
        }
        "slct" => {
            // slct d, a, b, c: d = c >= 0 ? a : b (c: .s32, or .f32 with .ftz flushing it).
            let (dt, ct) = (ins.types[0], ins.types[1]);
            let a = src(fs, 1, dt)?;
            let b = src(fs, 2, dt)?;
            let c = src(fs, 3, ct)?;
            let ge = if ct.is_float() {
                let c = fp::flush_if(l, ins.has(Mod::Ftz), c.into_float_value());
                bd.build_float_compare(FloatPredicate::OGE, c, c.get_type().const_zero(), "")
                    .unwrap()
            } else {
                bd.build_int_compare(
                    IntPredicate::SGE,
                    c.into_int_value(),
                    l.i32().const_zero(),
                    "",
                )
                .unwrap()
            };
            let r = bd.build_select(ge, a, b, "").unwrap();
            l.set(fs, &ops[0], r, dt.is_signed())?;
        }
        _ => return Ok(false),
    }
    Ok(true)
}

fn overflow<'c>(
    l: &Lowerer<'c, '_>,
    name: &str,
    a: IntValue<'c>,
    b: IntValue<'c>,
) -> (IntValue<'c>, IntValue<'c>) {
    let ty = a.get_type();
    let st = l.ctx.struct_type(&[ty.into(), l.i1().into()], false);
    let r = l
        .call_v(
            &format!("{name}.i{}", ty.get_bit_width()),
            st.into(),
            &[a.into(), b.into()],
        )
        .into_struct_value();
    let v = l.b.build_extract_value(r, 0, "").unwrap().into_int_value();
    let c = l.b.build_extract_value(r, 1, "").unwrap().into_int_value();
    (v, c)
}

/// `mov`: registers, immediates, special registers, symbol addresses, and vector pack/unpack.
fn mov<'c, 'a>(
    l: &Lowerer<'c, 'a>,
    fs: &mut FnState<'c, 'a>,
    ins: &Ins<'_, 'a>,
) -> Result<bool, Error> {
    let ops = ins.ops();
    let t = ins.ty();
    if ops.len() != 2 {
        return Ok(false);
    }
    if ins.any(&[Mod::V2, Mod::V4]).is_some() {
        // `mov.v2.u32 {a, b}, {c, d}`: element by element; every source is read before any
        // destination is written, so `{%r1, %r2}, {%r2, %r1}` swaps.
        let (Some(ds), Some(srcs)) = (l.vector_items(fs, &ops[0]), l.vector_items(fs, &ops[1]))
        else {
            return Err(super::invalid(
                ins.span(),
                "`mov.vN` needs vector operands (`{a, b}` or a `.vN` register)",
            ));
        };
        let vals = srcs
            .iter()
            .map(|a| l.operand(fs, a, t))
            .collect::<Result<Vec<_>, _>>()?;
        for (d, v) in ds.iter().zip(vals) {
            if !matches!(d, Operand::Sink(_)) {
                l.set(fs, d, v, t.is_signed())?;
            }
        }
        return Ok(true);
    }
    match (&ops[0], &ops[1]) {
        (d, Operand::Vec(items, _)) => {
            // Pack: element 0 in the low bits.
            let eb = t.bits / items.len() as u32;
            let w = l.int(t.bits);
            let mut acc = w.const_zero();
            for (k, it) in items.iter().enumerate() {
                let v = match it {
                    Operand::Sink(_) => continue,
                    _ => l.operand(fs, it, Ty::b(eb))?.into_int_value(),
                };
                let v = l.b.build_int_z_extend_or_bit_cast(v, w, "").unwrap();
                let v =
                    l.b.build_left_shift(v, w.const_int((k as u32 * eb) as u64, false), "")
                        .unwrap();
                acc = l.b.build_or(acc, v, "").unwrap();
            }
            l.set(fs, d, acc.into(), false)?;
        }
        (Operand::Vec(items, _), a) => {
            let eb = t.bits / items.len() as u32;
            let v = l.operand(fs, a, Ty::b(t.bits))?.into_int_value();
            for (k, it) in items.iter().enumerate() {
                if matches!(it, Operand::Sink(_)) {
                    continue;
                }
                let s =
                    l.b.build_right_shift(
                        v,
                        v.get_type().const_int((k as u32 * eb) as u64, false),
                        false,
                        "",
                    )
                    .unwrap();
                let e =
                    l.b.build_int_truncate_or_bit_cast(s, l.int(eb), "")
                        .unwrap();
                l.set(fs, it, e.into(), false)?;
            }
        }
        (d, a) => {
            let v = l.operand(fs, a, t)?;
            l.set(fs, d, v, t.is_signed())?;
        }
    }
    Ok(true)
}
