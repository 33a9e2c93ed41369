//! Video instructions in target-independent IR, per PTX ISA 9.2 §9.7.18: the scalar `vadd`,
//! `vsub`, `vabsdiff`, `vmin`, `vmax`, `vshl`, `vshr`, `vmad`, `vset` (byte/half-word operand
//! selection with sign or zero extension, a 64-bit intermediate, `.sat`, the secondary
//! `.add/.min/.max` operation or the `d.dsel` merge), and the SIMD `vadd2/4`, `vsub2/4`,
//! `vavrg2/4`, `vabsdiff2/4`, `vmin2/4`, `vmax2/4`, `vset2/4` (lane selection from `{b, a}`,
//! `.sat` per lane, masked merge with `c` or accumulation into `c`).
//!
//! Operand selectors (`a.b1`, `d.h0`, `a.h10`) are modifiers written after operands. The AST
//! keeps them in the instruction's modifier list without saying which operand they followed
//! (`d.b0, a, b` and `d, a.b0, b` give the same list), so [`selectors`] reads them back from
//! the source text right after each operand.

use super::*;

fn c64<'c>(l: &Lowerer<'c, '_>, v: i64) -> IntValue<'c> {
    l.i64().const_int(v as u64, true)
}

fn icmp<'c>(
    l: &Lowerer<'c, '_>,
    p: IntPredicate,
    a: IntValue<'c>,
    b: IntValue<'c>,
) -> IntValue<'c> {
    l.b.build_int_compare(p, a, b, "").unwrap()
}

fn sel<'c>(l: &Lowerer<'c, '_>, c: IntValue<'c>, a: IntValue<'c>, b: IntValue<'c>) -> IntValue<'c> {
    l.b.build_select(c, a, b, "").unwrap().into_int_value()
}

/// Bits `[lo, lo+bits)` of a 32- or 64-bit value, sign- or zero-extended to i64.
fn field<'c>(
    l: &Lowerer<'c, '_>,
    v: IntValue<'c>,
    lo: u32,
    bits: u32,
    signed: bool,
) -> IntValue<'c> {
    let s =
        l.b.build_right_shift(v, v.get_type().const_int(lo as u64, false), false, "")
            .unwrap();
    let t =
        l.b.build_int_truncate_or_bit_cast(s, l.int(bits), "")
            .unwrap();
    if bits == 64 {
        return t;
    }
    if signed {
        l.b.build_int_s_extend(t, l.i64(), "").unwrap()
    } else {
        l.b.build_int_z_extend(t, l.i64(), "").unwrap()
    }
}

/// `partSelectSignExtend(x, type, sel)` of the scalar video instructions.
fn part<'c>(l: &Lowerer<'c, '_>, x: IntValue<'c>, sel: Option<Mod>, signed: bool) -> IntValue<'c> {
    match sel {
        Some(s @ (Mod::B0 | Mod::B1 | Mod::B2 | Mod::B3)) => {
            field(l, x, 8 * selector_digits(s)[0], 8, signed)
        }
        Some(s @ (Mod::H0 | Mod::H1)) => field(l, x, 16 * selector_digits(s)[0], 16, signed),
        _ => field(l, x, 0, 32, signed),
    }
}

/// The lane numbers a selector modifier names, last digit first (`.b0` → [0], `.h10` →
/// [0, 1], `.b7654` → [4, 5, 6, 7]): the number written in the modifier is its meaning.
fn selector_digits(m: Mod) -> Vec<u32> {
    m.spelling()
        .bytes()
        .skip(2)
        .rev()
        .map(|d| (d - b'0') as u32)
        .collect()
}

fn smin<'c>(l: &Lowerer<'c, '_>, a: IntValue<'c>, b: IntValue<'c>) -> IntValue<'c> {
    sel(l, icmp(l, IntPredicate::SLT, a, b), a, b)
}
fn smax<'c>(l: &Lowerer<'c, '_>, a: IntValue<'c>, b: IntValue<'c>) -> IntValue<'c> {
    sel(l, icmp(l, IntPredicate::SGT, a, b), a, b)
}
fn clamp<'c>(l: &Lowerer<'c, '_>, v: IntValue<'c>, lo: i64, hi: i64) -> IntValue<'c> {
    smin(l, smax(l, v, c64(l, lo)), c64(l, hi))
}
fn clamp_bits<'c>(l: &Lowerer<'c, '_>, v: IntValue<'c>, bits: u32, signed: bool) -> IntValue<'c> {
    if signed {
        clamp(l, v, -(1i64 << (bits - 1)), (1i64 << (bits - 1)) - 1)
    } else {
        clamp(l, v, 0, ((1u64 << bits) - 1) as i64)
    }
}

fn vop<'c>(l: &Lowerer<'c, '_>, op: &str, a: IntValue<'c>, b: IntValue<'c>) -> IntValue<'c> {
    let bd = &l.b;
    match op {
        "add" => bd.build_int_add(a, b, "").unwrap(),
        "sub" => bd.build_int_sub(a, b, "").unwrap(),
        "absdiff" => {
            let d = bd.build_int_sub(a, b, "").unwrap();
            let n = bd.build_int_neg(d, "").unwrap();
            sel(l, icmp(l, IntPredicate::SLT, d, l.i64().const_zero()), n, d)
        }
        "min" => smin(l, a, b),
        "max" => smax(l, a, b),
        _ => {
            // avrg: (a + b + 1) >> 1 when a + b ≥ 0, else (a + b) >> 1.
            let s = bd.build_int_add(a, b, "").unwrap();
            let s1 = bd.build_int_add(s, c64(l, 1), "").unwrap();
            let nn = icmp(l, IntPredicate::SGE, s, l.i64().const_zero());
            let v = sel(l, nn, s1, s);
            bd.build_right_shift(v, c64(l, 1), true, "").unwrap()
        }
    }
}

fn cmp<'c>(l: &Lowerer<'c, '_>, c: Mod, a: IntValue<'c>, b: IntValue<'c>) -> IntValue<'c> {
    let p = match c {
        Mod::Eq => IntPredicate::EQ,
        Mod::Ne => IntPredicate::NE,
        Mod::Lt => IntPredicate::SLT,
        Mod::Le => IntPredicate::SLE,
        Mod::Gt => IntPredicate::SGT,
        _ => IntPredicate::SGE,
    };
    l.b.build_int_z_extend(icmp(l, p, a, b), l.i64(), "")
        .unwrap()
}

/// The selector modifier written right after each operand (`a.b1` → `.b1`), by operand index.
pub fn selectors(i: &Instruction) -> Option<Vec<Option<Mod>>> {
    let mut sels = vec![None; i.operands.len()];
    for (k, m) in i.post_mods() {
        if let Some(s) = sels.get_mut(k) {
            *s = Some(m);
        }
    }
    Some(sels)
}

pub fn lower<'c, 'a>(
    l: &Lowerer<'c, 'a>,
    fs: &mut FnState<'c, 'a>,
    ins: &Ins<'_, 'a>,
) -> Result<bool, Error> {
    let Some(sels) = selectors(ins.i) else {
        return Ok(false);
    };
    let ops = ins.ops();
    let slot = |n: &str| -> Option<Mod> {
        let k = match n {
            "dsel" | "mask" => 0,
            "asel" => 1,
            _ => 2,
        };
        sels.get(k).copied().flatten()
    };
    let b32 = Ty::b(32);
    let src = |fs: &mut FnState<'c, 'a>, k: usize| -> Result<IntValue<'c>, Error> {
        Ok(l.operand(
            fs,
            ops.get(k)
                .ok_or_else(|| invalid(ins.span(), "missing operand"))?,
            b32,
        )?
        .into_int_value())
    };
    let op = ins.op;
    let simd = op.ends_with('2') || op.ends_with('4');
    let sat = ins.has(Mod::Sat);
    let types = &ins.types;
    if simd {
        let lanes: u32 = if op.ends_with('2') { 2 } else { 4 };
        let w = 32 / lanes;
        let is_set = op.starts_with("vset");
        let (dsigned, asigned, bsigned) = if is_set {
            (false, types[0].is_signed(), types[1].is_signed())
        } else {
            (
                types[0].is_signed(),
                types[1].is_signed(),
                types[2].is_signed(),
            )
        };
        let a = src(fs, 1)?;
        let b = src(fs, 2)?;
        let c = src(fs, 3)?;
        // {b, a} as 64 bits: lanes 0..lanes-1 from a, the rest from b.
        let t64 = l.i64();
        let ab =
            l.b.build_or(
                l.b.build_left_shift(l.b.build_int_z_extend(b, t64, "").unwrap(), c64(l, 32), "")
                    .unwrap(),
                l.b.build_int_z_extend(a, t64, "").unwrap(),
                "",
            )
            .unwrap();
        // Selector digits: the last digit selects lane 0.
        let digits =
            |s: Option<Mod>, default: Mod| -> Vec<u32> { selector_digits(s.unwrap_or(default)) };
        let (da, db, dm) = if lanes == 2 {
            (Mod::H10, Mod::H32, Mod::H10)
        } else {
            (Mod::B3210, Mod::B7654, Mod::B3210)
        };
        let asel = digits(slot("asel"), da);
        let bsel = digits(slot("bsel"), db);
        let mask: Vec<u32> = digits(slot("mask"), dm);
        let base = op
            .trim_start_matches('v')
            .trim_end_matches(|c: char| c.is_ascii_digit());
        let cmpop = ins.cmp_op();
        let acc = ins.has(Mod::Add);
        let mut d = if acc {
            l.b.build_int_z_extend(c, t64, "").unwrap()
        } else {
            t64.const_zero()
        };
        for i in 0..lanes {
            let va = field(l, ab, asel[i as usize] * w, w, asigned);
            let vb = field(l, ab, bsel[i as usize] * w, w, bsigned);
            let mut t = if is_set {
                cmp(l, cmpop.unwrap_or(Mod::Eq), va, vb)
            } else {
                vop(l, base, va, vb)
            };
            if sat && !is_set {
                t = clamp_bits(l, t, w, dsigned);
            }
            let on = mask.contains(&i);
            if acc {
                if on {
                    d = l.b.build_int_add(d, t, "").unwrap();
                }
            } else {
                let v = if on { t } else { field(l, c, i * w, w, false) };
                let v =
                    l.b.build_and(v, c64(l, ((1u64 << w) - 1) as i64), "")
                        .unwrap();
                let v = l.b.build_left_shift(v, c64(l, (i * w) as i64), "").unwrap();
                d = l.b.build_or(d, v, "").unwrap();
            }
        }
        let r = l.b.build_int_truncate(d, l.i32(), "").unwrap();
        l.set(fs, &ops[0], r.into(), false)?;
        return Ok(true);
    }
    let dsel = slot("dsel");
    let asel = slot("asel");
    let bsel = slot("bsel");
    let r: IntValue<'c> = if op == "vmad" {
        let (dt, at, bt) = (types[0], types[1], types[2]);
        let neg = |k: usize| -> (bool, Operand<'a>) {
            match &ops[k] {
                Operand::Imm(ast::Expr::Unary(ast::UnOp::Neg, e, _)) => match e.as_ref() {
                    ast::Expr::Sym(n, sp) => (
                        true,
                        Operand::Name {
                            name: n,
                            comp: None,
                            negated: false,
                            span: *sp,
                        },
                    ),
                    _ => (false, ops[k].clone()),
                },
                o => (false, o.clone()),
            }
        };
        let (na, oa) = neg(1);
        let (nb, ob) = neg(2);
        let (nc, oc) = neg(3);
        let a = l.operand(fs, &oa, b32)?.into_int_value();
        let b = l.operand(fs, &ob, b32)?.into_int_value();
        let c = l.operand(fs, &oc, b32)?.into_int_value();
        let signed_final = at.is_signed() || bt.is_signed() || (na ^ nb) || nc;
        let _ = dt;
        let i128t = l.int(128);
        let ta =
            l.b.build_int_s_extend(part(l, a, asel, at.is_signed()), i128t, "")
                .unwrap();
        let tb =
            l.b.build_int_s_extend(part(l, b, bsel, bt.is_signed()), i128t, "")
                .unwrap();
        let mut tmp = l.b.build_int_mul(ta, tb, "").unwrap();
        let mut c = c;
        let mut lsb = 0u64;
        if ins.has(Mod::Po) {
            lsb = 1;
        } else if na ^ nb {
            tmp = l.b.build_not(tmp, "").unwrap();
            lsb = 1;
        } else if nc {
            c = l.b.build_not(c, "").unwrap();
            lsb = 1;
        }
        let c128 = if signed_final {
            l.b.build_int_s_extend(c, i128t, "").unwrap()
        } else {
            l.b.build_int_z_extend(c, i128t, "").unwrap()
        };
        tmp = l.b.build_int_add(tmp, c128, "").unwrap();
        tmp =
            l.b.build_int_add(tmp, i128t.const_int(lsb, false), "")
                .unwrap();
        let shift = match ins.any(&[Mod::Shr7, Mod::Shr15]) {
            Some(Mod::Shr7) => 7,
            Some(_) => 15,
            None => 0,
        };
        // result = (tmp >> scale) & 0xffffffffffffffff
        let res =
            l.b.build_int_truncate(
                l.b.build_right_shift(tmp, i128t.const_int(shift, false), true, "")
                    .unwrap(),
                l.i64(),
                "",
            )
            .unwrap();
        let res = if sat {
            // The 64-bit result is clamped as a signed or unsigned 64-bit value.
            if signed_final {
                clamp(l, res, i32::MIN as i64, i32::MAX as i64)
            } else {
                let big = icmp(l, IntPredicate::UGT, res, c64(l, u32::MAX as i64));
                sel(l, big, c64(l, u32::MAX as i64), res)
            }
        } else {
            res
        };
        l.b.build_int_truncate(res, l.i32(), "").unwrap()
    } else {
        let is_set = op == "vset";
        let (dsigned, at, bt) = if is_set {
            (false, types[0], types[1])
        } else {
            (types[0].is_signed(), types[1], types[2])
        };
        let a = src(fs, 1)?;
        let b = src(fs, 2)?;
        let ta = part(l, a, asel, at.is_signed());
        let mut tmp = if matches!(op, "vshl" | "vshr") {
            let tb = part(l, b, bsel, false);
            let tb = if ins.has(Mod::Clamp) {
                sel(
                    l,
                    icmp(l, IntPredicate::UGT, tb, c64(l, 32)),
                    c64(l, 32),
                    tb,
                )
            } else {
                l.b.build_and(tb, c64(l, 0x1f), "").unwrap()
            };
            if op == "vshl" {
                // Up to 33 + 32 bits: shift in i128 so that `.sat` sees the true value.
                let w = l.int(128);
                let wide =
                    l.b.build_left_shift(
                        l.b.build_int_s_extend(ta, w, "").unwrap(),
                        l.b.build_int_z_extend(tb, w, "").unwrap(),
                        "",
                    )
                    .unwrap();
                if sat {
                    let bits = match dsel {
                        Some(Mod::B0 | Mod::B1 | Mod::B2 | Mod::B3) => 8,
                        Some(Mod::H0 | Mod::H1) => 16,
                        _ => 32,
                    };
                    let (lo, hi) = if dsigned {
                        (-(1i64 << (bits - 1)), (1i64 << (bits - 1)) - 1)
                    } else {
                        (0, ((1u64 << bits) - 1) as i64)
                    };
                    let (lo, hi) = (w.const_int(lo as u64, true), w.const_int(hi as u64, true));
                    let v = sel(l, icmp(l, IntPredicate::SLT, wide, lo), lo, wide);
                    let v = sel(l, icmp(l, IntPredicate::SGT, v, hi), hi, v);
                    l.b.build_int_truncate(v, l.i64(), "").unwrap()
                } else {
                    l.b.build_int_truncate(wide, l.i64(), "").unwrap()
                }
            } else {
                l.b.build_right_shift(ta, tb, at.is_signed(), "").unwrap()
            }
        } else {
            let tb = part(l, b, bsel, bt.is_signed());
            if is_set {
                cmp(l, ins.cmp_op().unwrap_or(Mod::Eq), ta, tb)
            } else {
                vop(l, &op[1..], ta, tb)
            }
        };
        if sat && !is_set {
            let bits = match dsel {
                Some(Mod::B0 | Mod::B1 | Mod::B2 | Mod::B3) => 8,
                Some(Mod::H0 | Mod::H1) => 16,
                _ => 32,
            };
            tmp = clamp_bits(l, tmp, bits, dsigned);
        }
        let has_c = ops.len() > 3;
        let c = if has_c { Some(src(fs, 3)?) } else { None };
        let c64v = c.map(|c| {
            if dsigned {
                l.b.build_int_s_extend(c, l.i64(), "").unwrap()
            } else {
                l.b.build_int_z_extend(c, l.i64(), "").unwrap()
            }
        });
        let d = match (ins.any(&[Mod::Add, Mod::Min, Mod::Max]), dsel, c64v) {
            (Some(Mod::Add), None, Some(c)) => l.b.build_int_add(tmp, c, "").unwrap(),
            (Some(Mod::Min), None, Some(c)) => smin(l, tmp, c),
            (Some(Mod::Max), None, Some(c)) => smax(l, tmp, c),
            _ => tmp,
        };
        let d = l.b.build_int_truncate(d, l.i32(), "").unwrap();
        match (dsel, c) {
            (Some(s), Some(c)) => {
                let (lo, bits) = match s {
                    Mod::H0 => (0, 16),
                    Mod::H1 => (16, 16),
                    _ => (8 * selector_digits(s)[0] as u64, 8),
                };
                let m = (((1u64 << bits) - 1) << lo) as u32 as u64;
                let i32t = l.i32();
                let v =
                    l.b.build_left_shift(d, i32t.const_int(lo, false), "")
                        .unwrap();
                let v = l.b.build_and(v, i32t.const_int(m, false), "").unwrap();
                let keep =
                    l.b.build_and(c, i32t.const_int(!m & 0xffff_ffff, false), "")
                        .unwrap();
                l.b.build_or(v, keep, "").unwrap()
            }
            _ => d,
        }
    };
    l.set(fs, &ops[0], r.into(), false)?;
    Ok(true)
}
