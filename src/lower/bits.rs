//! Bit manipulation in target-independent IR, exactly per the Semantics sections of PTX ISA 9.2:
//! `popc`, `clz`, `brev`, `bfind` (`.shiftamt`), `bfe` (position/length taken modulo 256,
//! sign fill), `bfi`, `bmsk` and `szext` (`.clamp`/`.wrap`), `prmt` (generic and the
//! `f4e/b4e/rc8/ecl/ecr/rc16` modes), `lop3` (any truth table, with the `.BoolOp` predicate
//! form), `shf` (`.l/.r`, `.wrap/.clamp`), `fns`, and `dp4a`/`dp2a`.

use super::*;

fn c<'c>(t: IntType<'c>, v: u64) -> IntValue<'c> {
    t.const_int(v, false)
}

fn icmp<'c>(
    l: &Lowerer<'c, '_>,
    p: IntPredicate,
    a: IntValue<'c>,
    b: IntValue<'c>,
) -> IntValue<'c> {
    l.b.build_int_compare(p, a, b, "").unwrap()
}

fn sel<'c>(
    l: &Lowerer<'c, '_>,
    cnd: IntValue<'c>,
    a: IntValue<'c>,
    b: IntValue<'c>,
) -> IntValue<'c> {
    l.b.build_select(cnd, a, b, "").unwrap().into_int_value()
}

/// Zero-extends or truncates an integer to `t`.
fn zt<'c>(l: &Lowerer<'c, '_>, v: IntValue<'c>, t: IntType<'c>) -> IntValue<'c> {
    let (f, w) = (v.get_type().get_bit_width(), t.get_bit_width());
    if f == w {
        v
    } else if f < w {
        l.b.build_int_z_extend(v, t, "").unwrap()
    } else {
        l.b.build_int_truncate(v, t, "").unwrap()
    }
}

/// `v << amt`, 0 when `amt` ≥ width (`amt` of any integer width, unsigned).
pub fn shl_z<'c>(l: &Lowerer<'c, '_>, v: IntValue<'c>, amt: IntValue<'c>) -> IntValue<'c> {
    let t = v.get_type();
    let w = t.get_bit_width() as u64;
    let big = icmp(l, IntPredicate::UGE, amt, c(amt.get_type(), w));
    let a = zt(l, sel(l, big, amt.get_type().const_zero(), amt), t);
    let r = l.b.build_left_shift(v, a, "").unwrap();
    sel(l, big, t.const_zero(), r)
}

/// `v >> amt` (logical), 0 when `amt` ≥ width.
pub fn lshr_z<'c>(l: &Lowerer<'c, '_>, v: IntValue<'c>, amt: IntValue<'c>) -> IntValue<'c> {
    let t = v.get_type();
    let w = t.get_bit_width() as u64;
    let big = icmp(l, IntPredicate::UGE, amt, c(amt.get_type(), w));
    let a = zt(l, sel(l, big, amt.get_type().const_zero(), amt), t);
    let r = l.b.build_right_shift(v, a, false, "").unwrap();
    sel(l, big, t.const_zero(), r)
}

/// A mask of the low `n` bits (`n` ≤ width; all ones when `n` = width).
fn low_mask<'c>(l: &Lowerer<'c, '_>, t: IntType<'c>, n: IntValue<'c>) -> IntValue<'c> {
    let ones = t.const_all_ones();
    let sh = shl_z(l, ones, n);
    l.b.build_not(sh, "").unwrap()
}

fn umin<'c>(l: &Lowerer<'c, '_>, a: IntValue<'c>, b: IntValue<'c>) -> IntValue<'c> {
    sel(l, icmp(l, IntPredicate::ULT, a, b), a, b)
}

/// `bfe`/`bfi`'s position and length. The ISA takes their low 8 bits, and the 32-bit forms
/// do; the 64-bit forms read all 32 bits on the hardware (an erratum vosen/ptx_tests checks:
/// `bfe.u64 d, a, 0x12f, 0x123` extracts nothing, not a[47..81]). They come back widened to
/// 64 bits for the 64-bit forms, so `pos + len` cannot wrap.
fn field_operands<'c>(
    l: &Lowerer<'c, '_>,
    w: u64,
    pos: IntValue<'c>,
    len: IntValue<'c>,
) -> (IntValue<'c>, IntValue<'c>) {
    if w == 64 {
        (zt(l, pos, l.i64()), zt(l, len, l.i64()))
    } else {
        let i32t = l.i32();
        (
            l.b.build_and(pos, c(i32t, 0xff), "").unwrap(),
            l.b.build_and(len, c(i32t, 0xff), "").unwrap(),
        )
    }
}

pub fn bfe<'c>(
    l: &Lowerer<'c, '_>,
    a: IntValue<'c>,
    b: IntValue<'c>,
    cc: IntValue<'c>,
    signed: bool,
) -> IntValue<'c> {
    let t = a.get_type();
    let w = t.get_bit_width() as u64;
    let (pos, len) = field_operands(l, w, b, cc);
    let pt = pos.get_type();
    // Valid field bits: i < len and pos + i ≤ msb.
    let room =
        l.b.build_int_sub(c(pt, w), umin(l, pos, c(pt, w)), "")
            .unwrap();
    let count = umin(l, len, room);
    let mask = low_mask(l, t, count);
    let field = l.b.build_and(lshr_z(l, a, pos), mask, "").unwrap();
    if !signed {
        return field;
    }
    // sbit = a[min(pos+len-1, msb)], 0 when len = 0.
    let top =
        l.b.build_int_sub(l.b.build_int_add(pos, len, "").unwrap(), c(pt, 1), "")
            .unwrap();
    let top = umin(l, top, c(pt, w - 1));
    let sbit = l.b.build_and(lshr_z(l, a, top), c(t, 1), "").unwrap();
    let sbit = icmp(l, IntPredicate::NE, sbit, t.const_zero());
    let sbit =
        l.b.build_and(sbit, icmp(l, IntPredicate::NE, len, pt.const_zero()), "")
            .unwrap();
    let fill = l.b.build_not(mask, "").unwrap();
    sel(l, sbit, l.b.build_or(field, fill, "").unwrap(), field)
}

pub fn bfi<'c>(
    l: &Lowerer<'c, '_>,
    a: IntValue<'c>,
    b: IntValue<'c>,
    cc: IntValue<'c>,
    d: IntValue<'c>,
) -> IntValue<'c> {
    let t = a.get_type();
    let w = t.get_bit_width() as u64;
    let (pos, len) = field_operands(l, w, cc, d);
    let pt = pos.get_type();
    let room =
        l.b.build_int_sub(c(pt, w), umin(l, pos, c(pt, w)), "")
            .unwrap();
    let count = umin(l, len, room);
    let mask = shl_z(l, low_mask(l, t, count), pos);
    let ins = l.b.build_and(shl_z(l, a, pos), mask, "").unwrap();
    let keep =
        l.b.build_and(b, l.b.build_not(mask, "").unwrap(), "")
            .unwrap();
    l.b.build_or(keep, ins, "").unwrap()
}

pub fn bmsk<'c>(
    l: &Lowerer<'c, '_>,
    a: IntValue<'c>,
    b: IntValue<'c>,
    clamp: bool,
) -> IntValue<'c> {
    let t = l.i32();
    let ones = t.const_all_ones();
    let a1 = l.b.build_and(a, c(t, 0x1f), "").unwrap();
    let b1 = l.b.build_and(b, c(t, 0x1f), "").unwrap();
    let mut mask0 = l.b.build_left_shift(ones, a1, "").unwrap();
    let sum = l.b.build_int_add(a1, b1, "").unwrap();
    let mut zero1 = icmp(l, IntPredicate::UGE, sum, c(t, 32));
    if clamp {
        let apos = icmp(l, IntPredicate::UGE, a, c(t, 32));
        let bwid = icmp(l, IntPredicate::UGE, b, c(t, 32));
        mask0 = sel(l, apos, t.const_zero(), mask0);
        zero1 =
            l.b.build_or(zero1, l.b.build_or(apos, bwid, "").unwrap(), "")
                .unwrap();
    }
    let mask1 = shl_z(l, ones, sum);
    let b0 = icmp(l, IntPredicate::EQ, b1, t.const_zero());
    let mask1 = sel(l, b0, ones, mask1);
    let mask1 = sel(l, zero1, t.const_zero(), mask1);
    l.b.build_and(mask0, l.b.build_not(mask1, "").unwrap(), "")
        .unwrap()
}

pub fn szext<'c>(
    l: &Lowerer<'c, '_>,
    a: IntValue<'c>,
    b: IntValue<'c>,
    clamp: bool,
    signed: bool,
) -> IntValue<'c> {
    let t = l.i32();
    let b1 = l.b.build_and(b, c(t, 0x1f), "").unwrap();
    let too_large = if clamp {
        icmp(l, IntPredicate::UGE, b, c(t, 32))
    } else {
        l.i1().const_zero()
    };
    let mask = sel(
        l,
        too_large,
        t.const_zero(),
        l.b.build_left_shift(t.const_all_ones(), b1, "").unwrap(),
    );
    let low =
        l.b.build_and(a, l.b.build_not(mask, "").unwrap(), "")
            .unwrap();
    if !signed {
        return low;
    }
    let sign_pos =
        l.b.build_and(l.b.build_int_sub(b1, c(t, 1), "").unwrap(), c(t, 0x1f), "")
            .unwrap();
    let sb =
        l.b.build_and(
            l.b.build_right_shift(a, sign_pos, false, "").unwrap(),
            c(t, 1),
            "",
        )
        .unwrap();
    let sb = icmp(l, IntPredicate::NE, sb, t.const_zero());
    let nz = icmp(l, IntPredicate::NE, b1, t.const_zero());
    let sb =
        l.b.build_and(
            sb,
            l.b.build_and(nz, l.b.build_not(too_large, "").unwrap(), "")
                .unwrap(),
            "",
        )
        .unwrap();
    sel(l, sb, l.b.build_or(low, mask, "").unwrap(), low)
}

/// `prmt` with `mode` (`None` = generic, else `.f4e`, `.b4e`, `.rc8`, `.ecl`, `.ecr`, `.rc16`).
pub fn prmt<'c>(
    l: &Lowerer<'c, '_>,
    a: IntValue<'c>,
    b: IntValue<'c>,
    cc: IntValue<'c>,
    mode: Option<Mod>,
) -> IntValue<'c> {
    let t = l.i32();
    let t64 = l.i64();
    let hi = l.b.build_left_shift(zt(l, b, t64), c(t64, 32), "").unwrap();
    let tmp = l.b.build_or(hi, zt(l, a, t64), "").unwrap();
    let ctl = l.b.build_and(cc, c(t, 3), "").unwrap();
    let mut acc = t.const_zero();
    for i in 0..4u64 {
        let (idx, sign) = match mode {
            None => {
                let s =
                    l.b.build_and(
                        l.b.build_right_shift(cc, c(t, 4 * i), false, "").unwrap(),
                        c(t, 0xf),
                        "",
                    )
                    .unwrap();
                (
                    l.b.build_and(s, c(t, 7), "").unwrap(),
                    Some(icmp(l, IntPredicate::UGE, s, c(t, 8))),
                )
            }
            Some(m) => {
                let ci = c(t, i);
                let idx = match m {
                    Mod::F4e => l.b.build_int_add(ctl, ci, "").unwrap(),
                    Mod::B4e => {
                        l.b.build_and(l.b.build_int_sub(ctl, ci, "").unwrap(), c(t, 7), "")
                            .unwrap()
                    }
                    Mod::Rc8 => ctl,
                    Mod::Ecl => sel(l, icmp(l, IntPredicate::UGT, ci, ctl), ci, ctl),
                    Mod::Ecr => sel(l, icmp(l, IntPredicate::ULT, ci, ctl), ci, ctl),
                    // rc16: half-word c[0] replicated.
                    _ => {
                        l.b.build_or(
                            l.b.build_left_shift(
                                l.b.build_and(ctl, c(t, 1), "").unwrap(),
                                c(t, 1),
                                "",
                            )
                            .unwrap(),
                            c(t, i & 1),
                            "",
                        )
                        .unwrap()
                    }
                };
                (idx, None)
            }
        };
        let sh = zt(l, l.b.build_int_mul(idx, c(t, 8), "").unwrap(), t64);
        let byte = zt(
            l,
            l.b.build_right_shift(tmp, sh, false, "").unwrap(),
            l.ctx.i8_type(),
        );
        let byte = match sign {
            Some(s) => {
                let neg = icmp(l, IntPredicate::SLT, byte, l.ctx.i8_type().const_zero());
                let rep = sel(
                    l,
                    neg,
                    l.ctx.i8_type().const_all_ones(),
                    l.ctx.i8_type().const_zero(),
                );
                sel(l, s, rep, byte)
            }
            None => byte,
        };
        let v =
            l.b.build_left_shift(zt(l, byte, t), c(t, 8 * i), "")
                .unwrap();
        acc = l.b.build_or(acc, v, "").unwrap();
    }
    acc
}

/// `lop3`: the function whose truth table is `lut` (bit `4a+2b+c` is `F(a, b, c)`), as the
/// OR of its minterms; a non-constant table selects minterms at run time.
pub fn lop3<'c>(
    l: &Lowerer<'c, '_>,
    a: IntValue<'c>,
    b: IntValue<'c>,
    cc: IntValue<'c>,
    lut: IntValue<'c>,
) -> IntValue<'c> {
    let t = a.get_type();
    let na = l.b.build_not(a, "").unwrap();
    let nb = l.b.build_not(b, "").unwrap();
    let nc = l.b.build_not(cc, "").unwrap();
    let konst = lut.get_zero_extended_constant();
    let mut acc = t.const_zero();
    for k in 0..8u64 {
        if konst.is_some_and(|v| v >> k & 1 == 0) {
            continue;
        }
        let x = if k & 4 != 0 { a } else { na };
        let y = if k & 2 != 0 { b } else { nb };
        let z = if k & 1 != 0 { cc } else { nc };
        let mut m =
            l.b.build_and(l.b.build_and(x, y, "").unwrap(), z, "")
                .unwrap();
        if konst.is_none() {
            let bit =
                l.b.build_and(
                    l.b.build_right_shift(lut, c(lut.get_type(), k), false, "")
                        .unwrap(),
                    c(lut.get_type(), 1),
                    "",
                )
                .unwrap();
            let bit = icmp(l, IntPredicate::NE, bit, lut.get_type().const_zero());
            m = sel(l, bit, m, t.const_zero());
        }
        acc = l.b.build_or(acc, m, "").unwrap();
    }
    acc
}

/// `shf.{l,r}.{wrap,clamp}.b32`: funnel shift of `{b, a}`.
pub fn shf<'c>(
    l: &Lowerer<'c, '_>,
    a: IntValue<'c>,
    b: IntValue<'c>,
    cc: IntValue<'c>,
    left: bool,
    clamp: bool,
) -> IntValue<'c> {
    let t = l.i32();
    let n = if clamp {
        umin(l, cc, c(t, 32))
    } else {
        l.b.build_and(cc, c(t, 31), "").unwrap()
    };
    let inv = l.b.build_int_sub(c(t, 32), n, "").unwrap();
    if left {
        // (b << n) | (a >> (32-n))
        l.b.build_or(shl_z(l, b, n), lshr_z(l, a, inv), "").unwrap()
    } else {
        // (b << (32-n)) | (a >> n)
        l.b.build_or(shl_z(l, b, inv), lshr_z(l, a, n), "").unwrap()
    }
}

/// The position of the `k`-th (1-based) set bit of `m` counting from bit 0, or -1.
fn kth_set_bit<'c>(l: &Lowerer<'c, '_>, m: IntValue<'c>, k: IntValue<'c>) -> IntValue<'c> {
    let t = l.i32();
    let total = l
        .call_v("llvm.ctpop.i32", t.into(), &[m.into()])
        .into_int_value();
    let found =
        l.b.build_and(
            icmp(l, IntPredicate::ULE, k, total),
            icmp(l, IntPredicate::NE, k, t.const_zero()),
            "",
        )
        .unwrap();
    let mut pos = t.const_zero();
    let mut k = k;
    for s in [16u64, 8, 4, 2, 1] {
        let part =
            l.b.build_and(
                l.b.build_right_shift(m, pos, false, "").unwrap(),
                c(t, (1 << s) - 1),
                "",
            )
            .unwrap();
        let cnt = l
            .call_v("llvm.ctpop.i32", t.into(), &[part.into()])
            .into_int_value();
        let more = icmp(l, IntPredicate::UGT, k, cnt);
        k = sel(l, more, l.b.build_int_sub(k, cnt, "").unwrap(), k);
        pos = sel(l, more, l.b.build_int_add(pos, c(t, s), "").unwrap(), pos);
    }
    sel(l, found, pos, t.const_all_ones())
}

/// `fns.b32 d, mask, base, offset`.
pub fn fns<'c>(
    l: &Lowerer<'c, '_>,
    mask: IntValue<'c>,
    base: IntValue<'c>,
    offset: IntValue<'c>,
) -> IntValue<'c> {
    let t = l.i32();
    let base = l.b.build_and(base, c(t, 31), "").unwrap();
    let bit =
        l.b.build_and(
            l.b.build_right_shift(mask, base, false, "").unwrap(),
            c(t, 1),
            "",
        )
        .unwrap();
    let zero_case = sel(
        l,
        icmp(l, IntPredicate::NE, bit, t.const_zero()),
        base,
        t.const_all_ones(),
    );
    // Upward: set bits at positions ≥ base, the offset-th lowest.
    let up_m =
        l.b.build_and(
            mask,
            l.b.build_left_shift(t.const_all_ones(), base, "").unwrap(),
            "",
        )
        .unwrap();
    let up = kth_set_bit(l, up_m, offset);
    // Downward: set bits at positions ≤ base, the |offset|-th highest.
    let below =
        l.b.build_not(
            shl_z(
                l,
                t.const_all_ones(),
                l.b.build_int_add(base, c(t, 1), "").unwrap(),
            ),
            "",
        )
        .unwrap();
    let dn_m = l.b.build_and(mask, below, "").unwrap();
    let mag = l.b.build_int_neg(offset, "").unwrap();
    let cnt = l
        .call_v("llvm.ctpop.i32", t.into(), &[dn_m.into()])
        .into_int_value();
    let enough = icmp(l, IntPredicate::ULE, mag, cnt);
    let kk =
        l.b.build_int_add(l.b.build_int_sub(cnt, mag, "").unwrap(), c(t, 1), "")
            .unwrap();
    let kk = sel(l, enough, kk, t.const_zero());
    let dn = kth_set_bit(l, dn_m, kk);
    let r = sel(
        l,
        icmp(l, IntPredicate::SGT, offset, t.const_zero()),
        up,
        dn,
    );
    sel(
        l,
        icmp(l, IntPredicate::EQ, offset, t.const_zero()),
        zero_case,
        r,
    )
}

/// `bfind`: the bit position of the most significant non-sign bit, `0xffffffff` if none;
/// with `.shiftamt` the left shift that would move it to the msb.
pub fn bfind<'c>(
    l: &Lowerer<'c, '_>,
    a: IntValue<'c>,
    signed: bool,
    shiftamt: bool,
) -> IntValue<'c> {
    let t = a.get_type();
    let w = t.get_bit_width() as u64;
    let a = if signed {
        let neg = icmp(l, IntPredicate::SLT, a, t.const_zero());
        sel(l, neg, l.b.build_not(a, "").unwrap(), a)
    } else {
        a
    };
    let lz = l
        .call_v(
            &format!("llvm.ctlz.i{w}"),
            t.into(),
            &[a.into(), l.i1().const_zero().into()],
        )
        .into_int_value();
    let lz = zt(l, lz, l.i32());
    let d = if shiftamt {
        lz
    } else {
        l.b.build_int_sub(c(l.i32(), w - 1), lz, "").unwrap()
    };
    sel(
        l,
        icmp(l, IntPredicate::EQ, a, t.const_zero()),
        l.i32().const_all_ones(),
        d,
    )
}

/// `dp4a`/`dp2a` (`hi` selects bytes 2..3 of `b` for `dp2a`).
#[allow(clippy::too_many_arguments)]
pub fn dp<'c>(
    l: &Lowerer<'c, '_>,
    two: bool,
    hi: bool,
    a: IntValue<'c>,
    b: IntValue<'c>,
    cc: IntValue<'c>,
    sa: bool,
    sb: bool,
) -> IntValue<'c> {
    let t = l.i32();
    let part = |v: IntValue<'c>, k: u64, bits: u32, s: bool| -> IntValue<'c> {
        let x =
            l.b.build_right_shift(v, c(t, k * bits as u64), false, "")
                .unwrap();
        let x = l.b.build_int_truncate(x, l.int(bits), "").unwrap();
        if s {
            l.b.build_int_s_extend(x, t, "").unwrap()
        } else {
            l.b.build_int_z_extend(x, t, "").unwrap()
        }
    };
    let mut acc = cc;
    let n = if two { 2 } else { 4 };
    for i in 0..n {
        let x = part(a, i, if two { 16 } else { 8 }, sa);
        let y = part(b, if two && hi { i + 2 } else { i }, 8, sb);
        acc =
            l.b.build_int_add(acc, l.b.build_int_mul(x, y, "").unwrap(), "")
                .unwrap();
    }
    acc
}

pub fn lower<'c, 'a>(
    l: &Lowerer<'c, 'a>,
    fs: &mut FnState<'c, 'a>,
    ins: &Ins<'_, 'a>,
) -> Result<bool, Error> {
    let ops = ins.ops();
    let t = ins.ty();
    let u32t = Ty::u(32);
    let src = |fs: &mut FnState<'c, 'a>, k: usize, ty: Ty| -> Result<IntValue<'c>, Error> {
        Ok(l.operand(
            fs,
            ops.get(k)
                .ok_or_else(|| invalid(ins.span(), "missing operand"))?,
            ty,
        )?
        .into_int_value())
    };
    let tb = Ty::b(t.bits);
    let r: IntValue<'c> = match ins.op {
        "popc" | "clz" | "brev" => {
            let a = src(fs, 1, tb)?;
            let ty = a.get_type();
            let r = match ins.op {
                "popc" => l.call_v(&format!("llvm.ctpop.i{}", t.bits), ty.into(), &[a.into()]),
                "clz" => l.call_v(
                    &format!("llvm.ctlz.i{}", t.bits),
                    ty.into(),
                    &[a.into(), l.i1().const_zero().into()],
                ),
                _ => l.call_v(
                    &format!("llvm.bitreverse.i{}", t.bits),
                    ty.into(),
                    &[a.into()],
                ),
            };
            // popc/clz produce a .u32 result.
            let r = if ins.op != "brev" {
                l.coerce(r, l.i32().into(), false)
            } else {
                r
            };
            r.into_int_value()
        }
        "bfind" => bfind(l, src(fs, 1, t)?, t.is_signed(), ins.has(Mod::Shiftamt)),
        "bfe" => {
            let a = src(fs, 1, t)?;
            bfe(l, a, src(fs, 2, u32t)?, src(fs, 3, u32t)?, t.is_signed())
        }
        "bfi" => {
            let a = src(fs, 1, tb)?;
            let b = src(fs, 2, tb)?;
            bfi(l, a, b, src(fs, 3, u32t)?, src(fs, 4, u32t)?)
        }
        "bmsk" => bmsk(l, src(fs, 1, u32t)?, src(fs, 2, u32t)?, ins.has(Mod::Clamp)),
        "szext" => szext(
            l,
            src(fs, 1, Ty::b(32))?,
            src(fs, 2, u32t)?,
            ins.has(Mod::Clamp),
            t.is_signed(),
        ),
        "prmt" => {
            let mode = ins.any(&[Mod::F4e, Mod::B4e, Mod::Rc8, Mod::Ecl, Mod::Ecr, Mod::Rc16]);
            prmt(
                l,
                src(fs, 1, Ty::b(32))?,
                src(fs, 2, Ty::b(32))?,
                src(fs, 3, Ty::b(32))?,
                mode,
            )
        }
        "lop3" => {
            let r = lop3(
                l,
                src(fs, 1, Ty::b(32))?,
                src(fs, 2, Ty::b(32))?,
                src(fs, 3, Ty::b(32))?,
                src(fs, 4, Ty::b(32))?,
            );
            if let (Some(bo), Operand::Pair(d, p, _)) = (ins.bool_op(), &ops[0]) {
                // lop3.BoolOp d|p, a, b, c, immLut, q: p = (d != 0) BoolOp q.
                let q = l.operand(fs, &ops[5], Ty::PRED)?.into_int_value();
                let nz = icmp(l, IntPredicate::NE, r, l.i32().const_zero());
                let pv = if bo == Mod::And {
                    l.b.build_and(nz, q, "").unwrap()
                } else {
                    l.b.build_or(nz, q, "").unwrap()
                };
                l.set(fs, d, r.into(), false)?;
                l.set(fs, p, pv.into(), false)?;
                return Ok(true);
            }
            r
        }
        "shf" => {
            let a = src(fs, 1, Ty::b(32))?;
            let b = src(fs, 2, Ty::b(32))?;
            shf(
                l,
                a,
                b,
                src(fs, 3, u32t)?,
                ins.has(Mod::L),
                ins.has(Mod::Clamp),
            )
        }
        "fns" => fns(
            l,
            src(fs, 1, Ty::b(32))?,
            src(fs, 2, u32t)?,
            src(fs, 3, Ty::s(32))?,
        ),
        "dp4a" | "dp2a" => {
            let (at, bt) = (ins.types[0], ins.types[1]);
            let a = src(fs, 1, Ty::b(32))?;
            let b = src(fs, 2, Ty::b(32))?;
            let cc = src(fs, 3, Ty::b(32))?;
            dp(
                l,
                ins.op == "dp2a",
                ins.has(Mod::Hi),
                a,
                b,
                cc,
                at.is_signed(),
                bt.is_signed(),
            )
        }
        _ => return Ok(false),
    };
    l.set(
        fs,
        &ops[0],
        r.into(),
        t.is_signed() && matches!(ins.op, "bfe"),
    )?;
    Ok(true)
}
