//! Conversions: `cvt` between every pair of integer and floating-point types (PTX ISA 9.2
//! §9.7.9.21): integer rounding `.rni/.rzi/.rmi/.rpi`; float → integer saturating with the
//! PTX NaN results; `.sat` on integer and float destinations; `.ftz`; round-to-nearest as plain
//! LLVM conversions and `.rz/.rm/.rp` through [`Target::rounded_cvt`]; the packed `.f16x2` /
//! `.bf16x2` destinations from two `.f32` sources (with `.relu`, `.satfinite`, and `.rs`
//! stochastic rounding); `.tf32`; the small formats `.e4m3x2`, `.e5m2x2`, `.e2m1x2`,
//! `.e2m3x2`, `.e3m2x2`, `.ue8m0x2` in both directions; and `cvt.pack.sat`. Also `cvta` as
//! address-space casts (`.param` too); `isspacep` is the target's (`Target::sync_op`).

use super::*;

fn space_mod(ins: &Ins) -> Option<Space> {
    ins.space()
}

pub fn lower<'c, 'a>(
    l: &Lowerer<'c, 'a>,
    fs: &mut FnState<'c, 'a>,
    ins: &Ins<'_, 'a>,
) -> Result<bool, Error> {
    let ops = ins.ops();
    let bd = &l.b;
    match ins.op {
        "cvta" => {
            let Some(space) = space_mod(ins) else {
                return Ok(false);
            };
            let t = ins.ty();
            let to = ins.has(Mod::To);
            if space == Space::Param
                && (to
                    || !matches!(&ops[1], Operand::Name { name, .. } if l.reg(fs, name).is_none()))
                && l.target.inline_asm_ok(ins.i).is_ok()
            {
                // Only `cvta.param d, var` (a generic address of a parameter) has a meaning
                // independent of the hardware's parameter window. A target without PTX inline
                // assembly (the cpu target) keeps parameters in generic memory: there an
                // address in `.param` is already a generic one.
                return Ok(false);
            }
            // Symbol operand: its pointer; register: an address in the source space.
            let src_space = if to { Space::Generic } else { space };
            let p = match &ops[1] {
                Operand::Name { name, .. } if l.reg(fs, name).is_none() => {
                    match l.sym_ptr(fs, name) {
                        Some(p) => p,
                        None => return Ok(false),
                    }
                }
                Operand::Imm(e) if crate::syntax::consteval::eval(e).is_none() => {
                    let v = l.sym_expr(fs, e)?;
                    bd.build_int_to_ptr(v, l.ptr(src_space), "").unwrap()
                }
                o => {
                    let v = l.operand(fs, o, Ty::u(t.bits))?.into_int_value();
                    bd.build_int_to_ptr(v, l.ptr(src_space), "").unwrap()
                }
            };
            let dst = if to {
                l.ptr(space)
            } else {
                l.ptr(Space::Generic)
            };
            let q = if p.get_type() == dst {
                p
            } else {
                bd.build_address_space_cast(p, dst, "").unwrap()
            };
            let v = bd.build_ptr_to_int(q, l.int(t.bits), "").unwrap();
            l.set(fs, &ops[0], v.into(), false)?;
            Ok(true)
        }
        // Whether a generic address lies in a state space depends on how the target lays the
        // spaces out: the target answers (`sync_op`), else inline PTX.
        "isspacep" => l.target.sync_op(l, fs, ins.i),
        _ => cvt(l, fs, ins),
    }
}

use super::fp::{self, fsel};
use super::target::Rounding;

const FORMATS: &[Mod] = &[
    Mod::E4m3x2,
    Mod::E5m2x2,
    Mod::E2m1x2,
    Mod::E2m3x2,
    Mod::E3m2x2,
    Mod::Ue8m0x2,
    Mod::Tf32,
    Mod::E4m3x4,
    Mod::E5m2x4,
    Mod::E2m1x4,
    Mod::E2m3x4,
    Mod::E3m2x4,
];

fn cvt<'c, 'a>(
    l: &Lowerer<'c, 'a>,
    fs: &mut FnState<'c, 'a>,
    ins: &Ins<'_, 'a>,
) -> Result<bool, Error> {
    let ops = ins.ops();
    if ins.has(Mod::Pack) {
        return pack(l, fs, ins);
    }
    if let Some(f) = ins.any(FORMATS) {
        return small_format(l, fs, ins, f);
    }
    if ins.types.len() != 2 {
        return Ok(false);
    }
    let (dt, st) = (ins.types[0], ins.types[1]);
    let m = Mods::of(ins);
    if matches!(dt.k, K::F16x2 | K::BF16x2) {
        // cvt.frnd2{.relu}{.satfinite}.f16x2.f32 d, a, b: d[31:16] = cvt(a), d[15:0] = cvt(b);
        // `.rs` takes random bits in a fourth operand.
        let et = if dt.k == K::F16x2 {
            Ty::f(16)
        } else {
            Ty { k: K::BF, bits: 16 }
        };
        let a = l.operand(fs, &ops[1], st)?;
        let b = l.operand(fs, &ops[2], st)?;
        if m.frnd == Some(Rounding::Rn) && !m.satfinite && !ins.has(Mod::Rs) && st == Ty::f(32) {
            if let Some(v) = l.target.packed_cvt(l, dt, m.relu, a, b) {
                l.set(fs, &ops[0], v, false)?;
                return Ok(true);
            }
        }
        let (hi, lo) = if ins.has(Mod::Rs) {
            let rbits = l.operand(fs, &ops[3], Ty::b(32))?.into_int_value();
            let i32t = l.i32();
            let rhi =
                l.b.build_right_shift(rbits, i32t.const_int(16, false), false, "")
                    .unwrap();
            let rlo =
                l.b.build_and(rbits, i32t.const_int(0xffff, false), "")
                    .unwrap();
            let k = if dt.k == K::F16x2 { 13 } else { 16 };
            (
                stochastic(l, &m, a.into_float_value(), rhi, k, et)?,
                stochastic(l, &m, b.into_float_value(), rlo, k, et)?,
            )
        } else {
            (
                convert(l, &m, et, st, a)?.into_float_value(),
                convert(l, &m, et, st, b)?.into_float_value(),
            )
        };
        let v = super::float::join(l, dt, &[lo, hi]);
        l.set(fs, &ops[0], v, false)?;
        return Ok(true);
    }
    if ops.len() != 2 {
        return Ok(false);
    }
    let a = l.operand(fs, &ops[1], st)?;
    let r = convert(l, &m, dt, st, a)?;
    l.set(fs, &ops[0], r, dt.is_signed())?;
    Ok(true)
}

/// The modifiers of a `cvt` that shape its result.
struct Mods {
    frnd: Option<Rounding>,
    irnd: Option<Mod>,
    ftz: bool,
    sat: bool,
    relu: bool,
    satfinite: bool,
}

impl Mods {
    fn of(ins: &Ins) -> Mods {
        Mods {
            frnd: ins.rounding(),
            irnd: ins.int_rounding(),
            ftz: ins.has(Mod::Ftz),
            sat: ins.has(Mod::Sat),
            relu: ins.has(Mod::Relu),
            satfinite: ins.has(Mod::Satfinite),
        }
    }
}

fn int_bounds(t: Ty) -> (i128, i128) {
    if t.is_signed() {
        (-(1i128 << (t.bits - 1)), (1i128 << (t.bits - 1)) - 1)
    } else {
        (0, (1i128 << t.bits) - 1)
    }
}

/// Largest finite value of a 16-bit float type.
fn max_finite<'c>(l: &Lowerer<'c, '_>, ft: FloatType<'c>) -> FloatValue<'c> {
    let it = l.ctx.i16_type();
    let bits = if ft == l.ctx.bf16_type() {
        0x7f7f
    } else {
        0x7bff
    };
    fp::from_bits(l, it.const_int(bits, false), ft)
}

/// `.satfinite` on a 16-bit float result: ±inf → ±MAX_NORM (NaN stays NaN).
fn satfinite<'c>(l: &Lowerer<'c, '_>, x: FloatValue<'c>) -> FloatValue<'c> {
    let m = fp::copysign(l, max_finite(l, x.get_type()), x);
    fsel(l, fp::is_inf(l, x), m, x)
}

/// One scalar conversion from PTX type `st` to `dt`.
fn convert<'c>(
    l: &Lowerer<'c, '_>,
    m: &Mods,
    dt: Ty,
    st: Ty,
    a: BasicValueEnum<'c>,
) -> Result<BasicValueEnum<'c>, Error> {
    let bd = &l.b;
    let dty = dt.llvm(l.ctx);
    let flt = |t: Ty| matches!(t.k, K::F | K::BF);
    let f32ftz = |t: Ty| m.ftz && t.k == K::F && t.bits == 32;
    if st.is_int() && dt.is_int() {
        // Integers: extend by the source's signedness or truncate; `.sat` clamps to the
        // destination's range.
        let v = a.into_int_value();
        let w = if st.bits.max(dt.bits) >= 64 { 128 } else { 64 };
        let wt = l.int(w);
        let x = if st.is_signed() {
            bd.build_int_s_extend(v, wt, "").unwrap()
        } else {
            bd.build_int_z_extend(v, wt, "").unwrap()
        };
        let x = if m.sat {
            let (lo, hi) = int_bounds(dt);
            let c = |v: i128| wt.const_int_arbitrary_precision(&[v as u64, (v >> 64) as u64]);
            let (lo, hi) = (c(lo), c(hi));
            let x = fsel_i(
                l,
                bd.build_int_compare(IntPredicate::SLT, x, lo, "").unwrap(),
                lo,
                x,
            );
            fsel_i(
                l,
                bd.build_int_compare(IntPredicate::SGT, x, hi, "").unwrap(),
                hi,
                x,
            )
        } else {
            x
        };
        return Ok(bd
            .build_int_truncate(x, dty.into_int_type(), "")
            .unwrap()
            .into());
    }
    if flt(st) && dt.is_int() {
        // Float → integer: integer rounding (default .rzi), saturating to the destination
        // range; NaN gives 0, or 1 << (bits-1) when the source is .f64 or the destination
        // 64-bit (PTX ISA 9.2, cvt "Integer Notes"; older manuals said only "NaN inputs are
        // converted to 0", which the 9.2 text refines), for every integer rounding.
        let mut v = fp::flush_if(l, f32ftz(st), a.into_float_value());
        if st.bits == 16 {
            // Exact, and it keeps `llvm.fptosi.sat.*.f16` away from LLVM 22's x86 back end,
            // which with AVX512-FP16 turns a NaN into 0x8000 instead of 0.
            v = bd.build_float_ext(v, l.ctx.f32_type(), "").unwrap();
        }
        let f = match m.irnd.unwrap_or(Mod::Rzi) {
            Mod::Rni => Some("roundeven"),
            Mod::Rzi => None,
            Mod::Rmi => Some("floor"),
            _ => Some("ceil"),
        };
        if let Some(f) = f {
            v = fp::unary(l, f, v);
        }
        let name = if dt.is_signed() {
            "llvm.fptosi.sat"
        } else {
            "llvm.fptoui.sat"
        };
        let r = l
            .call_v(
                &format!("{name}.i{}.{}", dt.bits, fp::ftname(l, v.get_type())),
                dty,
                &[v.into()],
            )
            .into_int_value();
        if st.bits == 64 || dt.bits == 64 {
            let it = dty.into_int_type();
            let nan = it.const_int(1u64 << (dt.bits - 1), false);
            return Ok(fsel_i(l, fp::is_nan(l, v), nan, r).into());
        }
        return Ok(r.into());
    }
    if st.is_int() && flt(dt) {
        let rnd = m.frnd.unwrap_or(Rounding::Rn);
        let v = a.into_int_value();
        let ft = dty.into_float_type();
        let r = if rnd == Rounding::Rn && dt.k == K::BF && st.bits >= 32 {
            int_to_bf16_rn(l, v, st.is_signed())
        } else if rnd == Rounding::Rn {
            if st.is_signed() {
                bd.build_signed_int_to_float(v, ft, "").unwrap()
            } else {
                bd.build_unsigned_int_to_float(v, ft, "").unwrap()
            }
        } else {
            l.target
                .rounded_cvt(l, rnd, dt, st, v.into())?
                .into_float_value()
        };
        let r = if m.sat { fp::sat(l, r) } else { r };
        return Ok(fp::flush_if(l, f32ftz(dt), r).into());
    }
    if flt(st) && flt(dt) {
        let ft = dty.into_float_type();
        // Measured on an H200 (sm_90, driver 580): `cvt.{rm,rp}.ftz.f16.f32` of an f32
        // subnormal gives ±0x0001 where its sign asks (`cvt.rp.ftz.f16.f32 0x1` = 0x0001,
        // `cvt.rm.ftz.f16.f32 0x80000001` = 0x8001): `.ftz` does not flush the source of a
        // conversion to f16 (it does for bf16, whose subnormals the f32 ones reach).
        let flush_src = f32ftz(st) && !(dt.k == K::F && dt.bits == 16);
        let x = fp::flush_if(l, flush_src, a.into_float_value());
        let r = if let Some(ir) = m.irnd {
            // Round to an integral value in the same type.
            let f = match ir {
                Mod::Rni => "roundeven",
                Mod::Rzi => "trunc",
                Mod::Rmi => "floor",
                _ => "ceil",
            };
            fp::fconv(l, fp::unary(l, f, x), ft)
        } else {
            let (sb, db) = (st.bits, dt.bits);
            let exact = db > sb
                || (sb == db && st.k == dt.k)
                || (st.k == K::BF && dt.k == K::F && db >= 32);
            let rnd = m.frnd.unwrap_or(Rounding::Rn);
            if exact || rnd == Rounding::Rn {
                fp::fconv(l, x, ft)
            } else {
                l.target
                    .rounded_cvt(l, rnd, dt, st, x.into())?
                    .into_float_value()
            }
        };
        let r = if m.sat { fp::sat(l, r) } else { r };
        let r = if m.satfinite && db16(dt) {
            satfinite(l, r)
        } else {
            r
        };
        let r = if m.relu { fp::relu(l, r) } else { r };
        let r = fp::flush_if(l, f32ftz(dt), r);
        // Measured on an H200 (sm_90, driver 580): a NaN converted from f32/f16/bf16 to
        // f32/f16/bf16 is the canonical NaN (0x7fffffff, 0x7fff), payload and sign dropped (but
        // see bf16 to f32 below), and
        // `cvt.ftz.f64.f32` widens that canonical f32 NaN (0x7fffffffe0000000); a NaN from f64
        // keeps its sign and the top of its payload, quieted (`cvt.rn.bf16.f64
        // 0x7ff1248a53a43642` = 0x7fc9, `cvt.rn.f16.f64 0xfff4000000000123` = 0xff00), as
        // `cvt.f64.f32` without `.ftz` keeps the f32 one.
        let r = if !l.target.gpu_nans() {
            r
        } else if st.bits > 32 {
            if dt.bits < 64 {
                // (Only where the result is still a NaN: `.sat` makes it 0.)
                let nan = fp::and(l, fp::is_nan(l, x), fp::is_nan(l, r));
                fp::bits_sel(l, nan, fp::narrow_nan(l, x, ft), r)
            } else {
                r
            }
        } else if st.k == K::BF && dt.k == K::F && dt.bits == 32 {
            // Except widening bf16 to f32, which the H200 does as a shift: every bf16 NaN
            // (signalling ones and the sign included) comes out as its bits in the top half
            // (`cvt.f32.bf16 0x7f81` = 0x7f810000; all 254 NaN patterns, session 21). `.sat`
            // still makes a NaN 0.
            let nan = fp::and(l, fp::is_nan(l, x), fp::is_nan(l, r));
            let i32t = l.ctx.i32_type();
            let wide = l.b.build_int_z_extend(fp::to_bits(l, x), i32t, "").unwrap();
            let top =
                l.b.build_left_shift(wide, i32t.const_int(16, false), "")
                    .unwrap();
            fp::bits_sel(l, nan, fp::from_bits(l, top, ft), r)
        } else if dt.bits <= 32 {
            fp::gpu_nan(l, r)
        } else if f32ftz(st) {
            let canon = fp::fext(l, fp::canonical_nan(l, l.ctx.f32_type()), ft);
            fsel(l, fp::is_nan(l, r), canon, r)
        } else {
            r
        };
        return Ok(r.into());
    }
    Err(invalid(
        Span::new(0, 0),
        format!("cvt from {st:?} to {dt:?}"),
    ))
}

/// `cvt.rn.bf16.{u,s}{32,64}` with one rounding: LLVM converts integers to bfloat through f32
/// and rounds twice (`cvt.rn.bf16.u32 0x37200001` gave 0x4e5c, not 0x4e5d). The integer to f64
/// (exact for 32 bits; for 64 bits with the sign of its error from comparing back), rounded to
/// odd at f32, then to nearest bfloat.
fn int_to_bf16_rn<'c>(l: &Lowerer<'c, '_>, x: IntValue<'c>, signed: bool) -> FloatValue<'c> {
    let bd = &l.b;
    let d = l.ctx.f64_type();
    let t = if signed {
        bd.build_signed_int_to_float(x, d, "").unwrap()
    } else {
        bd.build_unsigned_int_to_float(x, d, "").unwrap()
    };
    let e = if x.get_type().get_bit_width() <= 32 {
        d.const_zero()
    } else {
        // t may be 2^63 (signed) or 2^64 (unsigned), above every input.
        let limit = if signed { 2f64.powi(63) } else { 2f64.powi(64) };
        let big = fp::fcmp(l, FloatPredicate::OGE, t, fp::fconst(d, limit));
        let tt = fsel(l, big, d.const_zero(), t);
        let back = if signed {
            bd.build_float_to_signed_int(tt, l.i64(), "").unwrap()
        } else {
            bd.build_float_to_unsigned_int(tt, l.i64(), "").unwrap()
        };
        let (gt, lt) = if signed {
            (IntPredicate::SGT, IntPredicate::SLT)
        } else {
            (IntPredicate::UGT, IntPredicate::ULT)
        };
        let pos = fp::and(
            l,
            fp::not(l, big),
            bd.build_int_compare(gt, x, back, "").unwrap(),
        );
        let neg = fp::or(l, big, bd.build_int_compare(lt, x, back, "").unwrap());
        fsel(
            l,
            pos,
            fp::fconst(d, 1.0),
            fsel(l, neg, fp::fconst(d, -1.0), d.const_zero()),
        )
    };
    fp::ftrunc(l, fp::round_odd_f32(l, t, e), l.ctx.bf16_type())
}

fn db16(t: Ty) -> bool {
    t.bits == 16 && matches!(t.k, K::F | K::BF)
}

fn fsel_i<'c>(
    l: &Lowerer<'c, '_>,
    c: IntValue<'c>,
    a: IntValue<'c>,
    b: IntValue<'c>,
) -> IntValue<'c> {
    l.b.build_select(c, a, b, "").unwrap().into_int_value()
}

/// `.rs` stochastic rounding of f32 `x` to the 16-bit float type `et`: the result rounded
/// toward zero, moved one ulp away from zero when adding the random bits `r` (the low `k` bits
/// used) to the `k` discarded bits below the result's lsb carries out.
fn stochastic<'c>(
    l: &Lowerer<'c, '_>,
    m: &Mods,
    x: FloatValue<'c>,
    r: IntValue<'c>,
    k: u32,
    et: Ty,
) -> Result<FloatValue<'c>, Error> {
    let f32t = l.ctx.f32_type();
    let nt = fp::fty(l, et);
    let t = l
        .target
        .rounded_cvt(l, Rounding::Rz, et, Ty::f(32), x.into())?
        .into_float_value();
    // One ulp away from zero (bit pattern + 1 on the magnitude).
    let tb = fp::to_bits(l, t);
    let away = fp::from_bits(
        l,
        l.b.build_int_add(tb, tb.get_type().const_int(1, false), "")
            .unwrap(),
        nt,
    );
    // The ulp of t: toward the next value away from zero, or (at MAX_NORM, where that is
    // infinity) toward the previous one.
    let prev = fp::from_bits(
        l,
        l.b.build_int_sub(tb, tb.get_type().const_int(1, false), "")
            .unwrap(),
        nt,
    );
    let (t32, a32, p32) = (
        fp::fext(l, t, f32t),
        fp::fext(l, away, f32t),
        fp::fext(l, prev, f32t),
    );
    let ulp = fsel(
        l,
        fp::is_inf(l, a32),
        fp::fsub(l, t32, p32),
        fp::fsub(l, a32, t32),
    );
    let ulp = fp::fabs(l, ulp);
    let frac = fp::fdiv(l, fp::fsub(l, fp::fabs(l, x), fp::fabs(l, t32)), ulp);
    let scaled = fp::unary(
        l,
        "floor",
        fp::fmul(l, frac, fp::fconst(f32t, (1u64 << k) as f64)),
    );
    // Beyond MAX_NORM + 1 ulp (|x| >= 65536 to f16) the discarded part is a whole ulp or more:
    // it always carries (infinity, or MAX_NORM with .satfinite). Clamped, so that the
    // conversion to an integer below stays in range (an out-of-range fptoui is poison, which
    // gave MAX_NORM or infinity at random).
    let whole = fp::fconst(f32t, (1u64 << k) as f64);
    let scaled = fsel(
        l,
        fp::fcmp(l, FloatPredicate::OGE, scaled, whole),
        whole,
        scaled,
    );
    let i32t = l.i32();
    let disc =
        l.b.build_float_to_unsigned_int(
            fsel(l, fp::is_finite(l, scaled), scaled, f32t.const_zero()),
            i32t,
            "",
        )
        .unwrap();
    let rk =
        l.b.build_and(r, i32t.const_int((1u64 << k) - 1, false), "")
            .unwrap();
    let carry =
        l.b.build_int_compare(
            IntPredicate::UGE,
            l.b.build_int_add(disc, rk, "").unwrap(),
            i32t.const_int(1u64 << k, false),
            "",
        )
        .unwrap();
    let special =
        l.b.build_or(fp::is_nan(l, x), fp::is_inf(l, x), "")
            .unwrap();
    let carry =
        l.b.build_and(carry, l.b.build_not(special, "").unwrap(), "")
            .unwrap();
    let v = fsel(l, carry, away, t);
    let v = fsel(l, fp::is_nan(l, x), fp::canonical_nan(l, nt), v);
    let v = if m.satfinite { satfinite(l, v) } else { v };
    Ok(if m.relu { fp::relu(l, v) } else { v })
}

/// `cvt.pack.sat.{u16,s16}.s32 d, a, b` and `cvt.pack.sat.{u2,s2,u4,s4,u8,s8}.s32.b32 d, a, b, c`.
fn pack<'c, 'a>(
    l: &Lowerer<'c, 'a>,
    fs: &mut FnState<'c, 'a>,
    ins: &Ins<'_, 'a>,
) -> Result<bool, Error> {
    let ops = ins.ops();
    let Some(ct) = ins.any(&[
        Mod::U16,
        Mod::S16,
        Mod::U8,
        Mod::S8,
        Mod::U4,
        Mod::S4,
        Mod::U2,
        Mod::S2,
    ]) else {
        return Ok(false);
    };
    let size = ct.instr_type_bits().unwrap_or(32);
    let signed = ct.is_signed();
    let (lo, hi) = if signed {
        (-(1i64 << (size - 1)), (1i64 << (size - 1)) - 1)
    } else {
        (0, (1i64 << size) - 1)
    };
    let i32t = l.i32();
    let clamp = |v: IntValue<'c>| {
        let (lo, hi) = (
            i32t.const_int(lo as u64, true),
            i32t.const_int(hi as u64, true),
        );
        let v = fsel_i(
            l,
            l.b.build_int_compare(IntPredicate::SLT, v, lo, "").unwrap(),
            lo,
            v,
        );
        let v = fsel_i(
            l,
            l.b.build_int_compare(IntPredicate::SGT, v, hi, "").unwrap(),
            hi,
            v,
        );
        l.b.build_and(v, i32t.const_int((1u64 << size) - 1, false), "")
            .unwrap()
    };
    let a = clamp(l.operand(fs, &ops[1], Ty::s(32))?.into_int_value());
    let b = clamp(l.operand(fs, &ops[2], Ty::s(32))?.into_int_value());
    let mut d =
        l.b.build_or(
            l.b.build_left_shift(a, i32t.const_int(size as u64, false), "")
                .unwrap(),
            b,
            "",
        )
        .unwrap();
    if size < 16 {
        let c = l.operand(fs, &ops[3], Ty::b(32))?.into_int_value();
        let c =
            l.b.build_left_shift(c, i32t.const_int(2 * size as u64, false), "")
                .unwrap();
        d = l.b.build_or(d, c, "").unwrap();
    }
    l.set(fs, &ops[0], d.into(), false)?;
    Ok(true)
}

/// A small float format: exponent and mantissa widths, bias, and its special encodings.
#[derive(Clone, Copy)]
struct Fmt {
    ebits: u32,
    mbits: u32,
    bias: i32,
    /// Has a sign bit.
    signed: bool,
    /// Largest finite value.
    max: f64,
    /// Encoding of NaN (without sign), if any.
    nan: Option<u32>,
    /// Encoding of infinity (without sign), if any.
    inf: Option<u32>,
}

fn fmt_of(f: Mod) -> Fmt {
    match f {
        Mod::E4m3x2 | Mod::E4m3x4 => Fmt {
            ebits: 4,
            mbits: 3,
            bias: 7,
            signed: true,
            max: 448.0,
            nan: Some(0x7f),
            inf: None,
        },
        Mod::E5m2x2 | Mod::E5m2x4 => Fmt {
            ebits: 5,
            mbits: 2,
            bias: 15,
            signed: true,
            max: 57344.0,
            nan: Some(0x7f),
            inf: Some(0x7c),
        },
        Mod::E2m1x2 | Mod::E2m1x4 => Fmt {
            ebits: 2,
            mbits: 1,
            bias: 1,
            signed: true,
            max: 6.0,
            nan: None,
            inf: None,
        },
        Mod::E2m3x2 | Mod::E2m3x4 => Fmt {
            ebits: 2,
            mbits: 3,
            bias: 1,
            signed: true,
            max: 7.5,
            nan: None,
            inf: None,
        },
        Mod::E3m2x2 | Mod::E3m2x4 => Fmt {
            ebits: 3,
            mbits: 2,
            bias: 3,
            signed: true,
            max: 28.0,
            nan: None,
            inf: None,
        },
        // ue8m0 (see `encode_ue8m0`).
        _ => Fmt {
            ebits: 8,
            mbits: 0,
            bias: 127,
            signed: false,
            max: 2f64.powi(127),
            nan: Some(0xff),
            inf: None,
        },
    }
}

/// `floor(log2 |x|)` of a nonzero finite f64 (through `llvm.frexp`).
fn ilogb<'c>(l: &Lowerer<'c, '_>, x: FloatValue<'c>) -> IntValue<'c> {
    let st = l
        .ctx
        .struct_type(&[x.get_type().into(), l.i32().into()], false);
    let r = l
        .call_v("llvm.frexp.f64.i32", st.into(), &[x.into()])
        .into_struct_value();
    let e = l.b.build_extract_value(r, 1, "").unwrap().into_int_value();
    l.b.build_int_sub(e, l.i32().const_int(1, false), "")
        .unwrap()
}

fn ldexp<'c>(l: &Lowerer<'c, '_>, x: FloatValue<'c>, e: IntValue<'c>) -> FloatValue<'c> {
    l.call_v(
        "llvm.ldexp.f64.i32",
        x.get_type().into(),
        &[x.into(), e.into()],
    )
    .into_float_value()
}

/// Encodes f64 `x` (an f32 or f16 value) into format `f`, rounding the magnitude with `rnd`
/// (`.rn`, `.rz` or `.rp`), with `.satfinite` (mandatory for these formats) and `.relu`.
fn encode<'c>(
    l: &Lowerer<'c, '_>,
    f: Fmt,
    x: FloatValue<'c>,
    rnd: Rounding,
    satfinite: bool,
    relu: bool,
) -> IntValue<'c> {
    if f.mbits == 0 {
        return encode_ue8m0(l, x, rnd, satfinite);
    }
    let d = l.ctx.f64_type();
    let i32t = l.i32();
    let bd = &l.b;
    let nan = fp::is_nan(l, x);
    let neg = fp::sign_bit(l, x);
    let x = if relu {
        fsel(l, neg, d.const_zero(), x)
    } else {
        x
    };
    let neg = if relu || !f.signed {
        l.i1().const_zero()
    } else {
        neg
    };
    let ax = fp::fabs(l, x);
    let emin = 1 - f.bias;
    // Quantum: 2^(max(floor(log2 |x|), emin) - mbits).
    let zero = fp::fcmp(l, FloatPredicate::OEQ, ax, d.const_zero());
    let finite = fp::is_finite(l, ax);
    let safe = fsel(
        l,
        l.b.build_and(finite, l.b.build_not(zero, "").unwrap(), "")
            .unwrap(),
        ax,
        fp::fconst(d, 1.0),
    );
    let e = ilogb(l, safe);
    let emin_v = i32t.const_int(emin as u64, true);
    let e = fsel_i(
        l,
        bd.build_int_compare(IntPredicate::SLT, e, emin_v, "")
            .unwrap(),
        emin_v,
        e,
    );
    let qe = bd
        .build_int_sub(e, i32t.const_int(f.mbits as u64, false), "")
        .unwrap();
    let scaled = ldexp(l, ax, bd.build_int_neg(qe, "").unwrap());
    let rf = match rnd {
        Rounding::Rz => "trunc",
        Rounding::Rp => "ceil",
        Rounding::Rm => "floor",
        Rounding::Rn => "roundeven",
    };
    let r = ldexp(l, fp::unary(l, rf, scaled), qe);
    // Saturate (MAX_NORM for out-of-range and infinite inputs) or overflow to inf/NaN.
    let maxv = fp::fconst(d, f.max);
    let over = fp::fcmp(l, FloatPredicate::OGT, r, maxv);
    let r = fsel(l, over, maxv, r);
    // Fields.
    let normal = fp::fcmp(l, FloatPredicate::OGE, r, fp::fconst(d, 2f64.powi(emin)));
    let rsafe = fsel(
        l,
        fp::fcmp(l, FloatPredicate::OEQ, r, d.const_zero()),
        fp::fconst(d, 1.0),
        r,
    );
    let er = ilogb(l, rsafe);
    let er = fsel_i(l, normal, er, emin_v);
    let expf = fsel_i(
        l,
        normal,
        bd.build_int_add(er, i32t.const_int(f.bias as u64, true), "")
            .unwrap(),
        i32t.const_zero(),
    );
    let mant_scaled = ldexp(
        l,
        r,
        bd.build_int_sub(i32t.const_int(f.mbits as u64, false), er, "")
            .unwrap(),
    );
    let mant = bd
        .build_float_to_unsigned_int(mant_scaled, i32t, "")
        .unwrap();
    let mant = bd
        .build_and(mant, i32t.const_int((1u64 << f.mbits) - 1, false), "")
        .unwrap();
    let mut v = bd
        .build_or(
            bd.build_left_shift(expf, i32t.const_int(f.mbits as u64, false), "")
                .unwrap(),
            mant,
            "",
        )
        .unwrap();
    if !satfinite {
        // Without .satfinite an overflow gives infinity where the format has one, else NaN.
        if let Some(sp) = f.inf.or(f.nan) {
            let of =
                l.b.build_or(over, l.b.build_not(finite, "").unwrap(), "")
                    .unwrap();
            v = fsel_i(l, of, i32t.const_int(sp as u64, false), v);
        }
    }
    if f.signed {
        let sb = bd
            .build_left_shift(
                bd.build_int_z_extend(neg, i32t, "").unwrap(),
                i32t.const_int((f.ebits + f.mbits) as u64, false),
                "",
            )
            .unwrap();
        v = bd.build_or(v, sb, "").unwrap();
    }
    // NaN: the format's NaN, or +MAX_NORM for formats without one.
    let nanv = match f.nan {
        Some(n) => i32t.const_int(n as u64, false),
        None => i32t.const_int((1u64 << (f.ebits + f.mbits)) - 1, false),
    };
    fsel_i(l, nan, nanv, v)
}

/// `.ue8m0`: an unsigned power of two 2^(code-127) (code 0 is 2^-127: no zero), code 0xff is
/// NaN. `.rz` takes floor(log2 x), `.rp` ceil(log2 x); non-positive inputs give the smallest
/// code; too large values (and +inf) give 0xfe with `.satfinite`, else NaN.
fn encode_ue8m0<'c>(
    l: &Lowerer<'c, '_>,
    x: FloatValue<'c>,
    rnd: Rounding,
    satfinite: bool,
) -> IntValue<'c> {
    let d = l.ctx.f64_type();
    let i32t = l.i32();
    let bd = &l.b;
    let pos = fp::fcmp(l, FloatPredicate::OGT, x, d.const_zero());
    let finite = fp::is_finite(l, x);
    let safe = fsel(
        l,
        bd.build_and(pos, finite, "").unwrap(),
        x,
        fp::fconst(d, 1.0),
    );
    let e = ilogb(l, safe);
    let pow2 = fp::fcmp(
        l,
        FloatPredicate::OEQ,
        ldexp(l, fp::fconst(d, 1.0), e),
        safe,
    );
    let e = if rnd == Rounding::Rp {
        bd.build_int_add(
            e,
            bd.build_int_z_extend(bd.build_not(pow2, "").unwrap(), i32t, "")
                .unwrap(),
            "",
        )
        .unwrap()
    } else {
        e
    };
    let code = bd.build_int_add(e, i32t.const_int(127, false), "").unwrap();
    let code = fsel_i(
        l,
        bd.build_int_compare(IntPredicate::SLT, code, i32t.const_zero(), "")
            .unwrap(),
        i32t.const_zero(),
        code,
    );
    let over = bd
        .build_or(
            bd.build_int_compare(IntPredicate::SGT, code, i32t.const_int(254, false), "")
                .unwrap(),
            bd.build_not(finite, "").unwrap(),
            "",
        )
        .unwrap();
    let code = fsel_i(
        l,
        over,
        i32t.const_int(if satfinite { 254 } else { 255 }, false),
        code,
    );
    let code = fsel_i(l, pos, code, i32t.const_zero());
    fsel_i(l, fp::is_nan(l, x), i32t.const_int(255, false), code)
}

/// Decodes an encoding of format `f` (in the low bits of `v`) to f64.
fn decode<'c>(l: &Lowerer<'c, '_>, f: Fmt, v: IntValue<'c>) -> FloatValue<'c> {
    let d = l.ctx.f64_type();
    if f.mbits == 0 {
        // ue8m0: 2^(code-127), 0xff NaN.
        let i32t = l.i32();
        let code = l.b.build_and(v, i32t.const_int(0xff, false), "").unwrap();
        let val = ldexp(
            l,
            fp::fconst(d, 1.0),
            l.b.build_int_sub(code, i32t.const_int(127, false), "")
                .unwrap(),
        );
        let nan =
            l.b.build_int_compare(IntPredicate::EQ, code, i32t.const_int(0xff, false), "")
                .unwrap();
        return fsel(l, nan, fp::canonical_nan(l, d), val);
    }
    let i32t = l.i32();
    let bd = &l.b;
    let width = f.ebits + f.mbits + f.signed as u32;
    let v = bd
        .build_and(v, i32t.const_int((1u64 << width) - 1, false), "")
        .unwrap();
    let mag = bd
        .build_and(
            v,
            i32t.const_int((1u64 << (f.ebits + f.mbits)) - 1, false),
            "",
        )
        .unwrap();
    let expf = bd
        .build_right_shift(mag, i32t.const_int(f.mbits as u64, false), false, "")
        .unwrap();
    let mant = bd
        .build_and(mag, i32t.const_int((1u64 << f.mbits) - 1, false), "")
        .unwrap();
    let normal = bd
        .build_int_compare(IntPredicate::NE, expf, i32t.const_zero(), "")
        .unwrap();
    let sig = fsel_i(
        l,
        normal,
        bd.build_or(mant, i32t.const_int(1u64 << f.mbits, false), "")
            .unwrap(),
        mant,
    );
    let e = fsel_i(l, normal, expf, i32t.const_int(1, false));
    let e = bd
        .build_int_sub(
            e,
            i32t.const_int((f.bias + f.mbits as i32) as u64, true),
            "",
        )
        .unwrap();
    let val = ldexp(l, bd.build_unsigned_int_to_float(sig, d, "").unwrap(), e);
    let mut val = val;
    if f.signed {
        let s = bd
            .build_int_compare(
                IntPredicate::NE,
                bd.build_right_shift(
                    v,
                    i32t.const_int((f.ebits + f.mbits) as u64, false),
                    false,
                    "",
                )
                .unwrap(),
                i32t.const_zero(),
                "",
            )
            .unwrap();
        val = fsel(l, s, fp::fneg(l, val), val);
    }
    if let Some(inf) = f.inf {
        let is = bd
            .build_int_compare(IntPredicate::EQ, mag, i32t.const_int(inf as u64, false), "")
            .unwrap();
        val = fsel(
            l,
            is,
            fp::copysign(l, fp::fconst(d, f64::INFINITY), val),
            val,
        );
        // e5m2: every other all-ones exponent is NaN.
        let allones = bd
            .build_int_compare(
                IntPredicate::EQ,
                expf,
                i32t.const_int((1u64 << f.ebits) - 1, false),
                "",
            )
            .unwrap();
        let isnan = bd
            .build_and(allones, bd.build_not(is, "").unwrap(), "")
            .unwrap();
        val = fsel(l, isnan, fp::canonical_nan(l, d), val);
    } else if let Some(n) = f.nan {
        let isnan = bd
            .build_int_compare(IntPredicate::EQ, mag, i32t.const_int(n as u64, false), "")
            .unwrap();
        val = fsel(l, isnan, fp::canonical_nan(l, d), val);
    }
    val
}

/// `cvt` to or from `.tf32` and the packed small formats.
fn small_format<'c, 'a>(
    l: &Lowerer<'c, 'a>,
    fs: &mut FnState<'c, 'a>,
    ins: &Ins<'_, 'a>,
    f: Mod,
) -> Result<bool, Error> {
    let ops = ins.ops();
    let m = Mods::of(ins);
    let d = l.ctx.f64_type();
    let i32t = l.i32();
    if f == Mod::Tf32 {
        // cvt.{rna,rn,rz}{.satfinite}{.relu}.tf32.f32: the f32 rounded to 10 mantissa bits
        // (low 13 bits zero); NaN gives the canonical NaN.
        let x = l.operand(fs, &ops[1], Ty::f(32))?.into_float_value();
        let x = if m.relu { fp::relu(l, x) } else { x };
        let bits = fp::to_bits(l, x);
        let add = match ins.any(&[Mod::Rna, Mod::Rn, Mod::Rz]) {
            Some(Mod::Rna) => i32t.const_int(0x1000, false),
            Some(Mod::Rn) => {
                let odd =
                    l.b.build_and(
                        l.b.build_right_shift(bits, i32t.const_int(13, false), false, "")
                            .unwrap(),
                        i32t.const_int(1, false),
                        "",
                    )
                    .unwrap();
                l.b.build_int_add(i32t.const_int(0xfff, false), odd, "")
                    .unwrap()
            }
            _ => i32t.const_zero(),
        };
        let r =
            l.b.build_and(
                l.b.build_int_add(bits, add, "").unwrap(),
                i32t.const_int(0xffff_e000, false),
                "",
            )
            .unwrap();
        let rf = fp::from_bits(l, r, l.ctx.f32_type());
        let rf = if m.satfinite {
            let maxv = fp::from_bits(l, i32t.const_int(0x7f7f_e000, false), l.ctx.f32_type());
            fsel(l, fp::is_inf(l, rf), fp::copysign(l, maxv, rf), rf)
        } else {
            rf
        };
        let r = fp::to_bits(l, rf);
        let r = fsel_i(l, fp::is_nan(l, x), i32t.const_int(0x7fff_ffff, false), r);
        l.set(fs, &ops[0], r.into(), false)?;
        return Ok(true);
    }
    if matches!(
        f,
        Mod::E4m3x4 | Mod::E5m2x4 | Mod::E2m1x4 | Mod::E2m3x4 | Mod::E3m2x4
    ) || ins.has(Mod::Rs)
    {
        // Stochastic conversions to four-element formats: not yet native.
        return Ok(false);
    }
    let fmt = fmt_of(f);
    let lane = if fmt.ebits + fmt.mbits + fmt.signed as u32 == 4 {
        4
    } else {
        8
    };
    // The destination type comes first: `cvt.rn.satfinite.e4m3x2.f32` encodes,
    // `cvt.rn.f16x2.e4m3x2` decodes.
    let fpos = ins.d.mods.iter().position(|x| *x == f);
    let tpos = ins.d.mods.iter().position(|x| Ty::of(*x).is_some());
    let to_small = match (fpos, tpos) {
        (Some(a), Some(b)) => a < b,
        _ => true,
    };
    if to_small {
        // d = {cvt(a), cvt(b)} (a in the upper lane), or from the two halves of an f16x2 /
        // bf16x2 source (the upper half in the upper lane).
        let rnd = m.frnd.unwrap_or(Rounding::Rn);
        let (hi, lo) = if ops.len() >= 3 {
            let a = l.operand(fs, &ops[1], Ty::f(32))?.into_float_value();
            let b = l.operand(fs, &ops[2], Ty::f(32))?.into_float_value();
            (fp::fext(l, a, d), fp::fext(l, b, d))
        } else {
            let st = *ins.types.last().unwrap_or(&Ty {
                k: K::F16x2,
                bits: 32,
            });
            let v = l.operand(fs, &ops[1], st)?;
            let xs = super::float::split(l, v);
            (fp::fext(l, xs[1], d), fp::fext(l, xs[0], d))
        };
        let eh = encode(l, fmt, hi, rnd, m.satfinite, m.relu);
        let el = encode(l, fmt, lo, rnd, m.satfinite, m.relu);
        let r =
            l.b.build_or(
                l.b.build_left_shift(eh, i32t.const_int(lane, false), "")
                    .unwrap(),
                el,
                "",
            )
            .unwrap();
        l.set(fs, &ops[0], r.into(), false)?;
    } else {
        // cvt.rn{.relu}.f16x2.<fmt> d, a / cvt.rn.bf16x2.ue8m0x2 d, a: decode both lanes.
        let dt = ins.types[0];
        let et = super::float::lanes(dt).0;
        let ft = fp::fty(l, et);
        let a = l.operand(fs, &ops[1], Ty::b(32))?.into_int_value();
        let hi =
            l.b.build_right_shift(a, i32t.const_int(lane, false), false, "")
                .unwrap();
        let lanes: Vec<FloatValue<'c>> = [a, hi]
            .iter()
            .map(|v| {
                let x = fp::ftrunc(l, decode(l, fmt, *v), ft);
                if m.relu {
                    fp::relu(l, x)
                } else {
                    x
                }
            })
            .collect();
        let v = super::float::join(l, dt, &lanes);
        l.set(fs, &ops[0], v, false)?;
    }
    Ok(true)
}
