//! Instruction-level tests of the cpu target, `cvt`: PTX kernels (one thread per case, built by
//! `tests/common/instr.rs`) run through the embedding API and are compared with a reference
//! written from the `cvt` section of the PTX ISA 9.2 manual
//! (`/work/shared/spec/ptx-isa-9.2-data-movement.md` §9.7.9.21).
//!
//! Every pair of the twelve scalar types (`.u8 … .s64`, `.f16`, `.bf16`, `.f32`, `.f64`) with
//! every rounding the pair allows (`.rni/.rzi/.rmi/.rpi` to integers and between same-size
//! floats, `.rn/.rz/.rm/.rp` to floats), `.sat`, and `.ftz` where `.f32` is involved; sources
//! of 8 and 16 bits (integers, f16, bf16) run over all their bit patterns, wider sources over
//! boundary values (±0, ±1, ±0.5-multiples, 2^k ± 1 around every integer type's range,
//! subnormals, MAX, ±inf, NaNs) and seeded random ones. Also `.relu` and `.satfinite` to
//! f16/bf16, and the `.f16x2`/`.bf16x2` packs of two f32.
//!
//! Rules checked (quoted from the manual): integer saturation "limits the result to
//! MININT..MAXINT for the size of the operation"; float-to-integer conversions clamp to the
//! destination range; a NaN source gives 0 unless the source is `.f64` or the destination is 64
//! bits wide, which gives `1 << (BitWidth(dst) − 1)`; a destination register wider than the
//! type (an 8-bit result in a 16-bit register here) is sign-extended for signed integers and
//! zero-extended otherwise; 8-bit sources read the low 8 bits of a 16-bit register (the high byte
//! holds garbage here); `.sat` to a float limits to [0.0, 1.0] with NaN → +0; `.relu` clamps
//! negative results to 0 and NaN to the canonical NaN; `.satfinite` keeps NaN and limits
//! finite and infinite values to ±MAX_NORM.

#[path = "common/instr.rs"]
mod instr;
#[path = "common/ptx_ref.rs"]
mod ptx_ref;

use instr::*;
use ptx_ref::{bb, half_to_f64, mode_of, ref_to_half, with_mode, Rng};

const INTS: [&str; 8] = ["u8", "u16", "u32", "u64", "s8", "s16", "s32", "s64"];
const FLOATS: [&str; 4] = ["f16", "bf16", "f32", "f64"];

fn bits_of(t: &str) -> u32 {
    match t {
        "f16" | "bf16" => 16,
        _ => t[1..].parse().unwrap(),
    }
}
fn is_int(t: &str) -> bool {
    t.starts_with('u') || t.starts_with('s')
}
fn signed(t: &str) -> bool {
    t.starts_with('s')
}
fn range(t: &str) -> (i128, i128) {
    let b = bits_of(t);
    if signed(t) {
        (-(1i128 << (b - 1)), (1i128 << (b - 1)) - 1)
    } else {
        (0, (1i128 << b) - 1)
    }
}

/// The integer value of `v` read as type `t` (low bits only).
fn ival(v: u64, t: &str) -> i128 {
    let b = bits_of(t);
    if signed(t) {
        sext(mask(v, b), b) as i64 as i128
    } else {
        mask(v, b) as i128
    }
}

/// The register bits of integer result `x` (already in `t`'s range or wrapped): 8-bit results
/// live in 16-bit registers, sign-extended for signed types.
fn ireg(x: i128, t: &str) -> u64 {
    let b = bits_of(t);
    let v = mask(x as u64, b);
    let v = if signed(t) { sext(v, b) } else { v };
    mask(v, b.max(16))
}

/// The value of a float bit pattern of type `t` (exact in f64).
fn fval(v: u64, t: &str) -> f64 {
    match t {
        "f16" => half_to_f64(v as u16, false),
        "bf16" => half_to_f64(v as u16, true),
        "f32" => f32::from_bits(v as u32) as f64,
        _ => f64::from_bits(v),
    }
}

/// An integer as f64 rounded to odd at 53 bits: one more rounding to ≤ 24 bits is correct.
fn int_odd(i: i128) -> f64 {
    let u = i.unsigned_abs();
    let v = if u < (1u128 << 53) {
        u as f64
    } else {
        let sh = 128 - u.leading_zeros() as i32 - 53;
        let m = (u >> sh) | ((u & ((1u128 << sh) - 1)) != 0) as u128;
        (m as f64) * 2f64.powi(sh)
    };
    if i < 0 {
        -v
    } else {
        v
    }
}

/// An integer (|i| < 2^64) to f64 / f32 in the current rounding mode with one rounding.
fn int_to_f64(i: i128) -> f64 {
    if i >= i64::MIN as i128 && i <= i64::MAX as i128 {
        bb(i as i64) as f64
    } else {
        let u = i as u64;
        (bb(((u >> 1) | (u & 1)) as i64) as f64) * 2.0
    }
}
fn int_to_f32(i: i128) -> f32 {
    if i >= i64::MIN as i128 && i <= i64::MAX as i128 {
        bb(i as i64) as f32
    } else {
        let u = i as u64;
        (bb(((u >> 1) | (u & 1)) as i64) as f32) * 2.0
    }
}

fn ftz32(x: f64) -> f64 {
    if x != 0.0 && x.abs() < f32::MIN_POSITIVE as f64 {
        0.0f64.copysign(x)
    } else {
        x
    }
}

/// Encodes a value (exact or already representable) of float type `t`; `rnd` rounds.
fn fenc(x: f64, t: &str, r: &str) -> u64 {
    match t {
        "f16" => ref_to_half(x, false, r) as u64,
        "bf16" => ref_to_half(x, true, r) as u64,
        "f32" => with_mode(mode_of(r), || bb(x) as f32).to_bits() as u64,
        _ => x.to_bits(),
    }
}

fn max_norm(t: &str) -> f64 {
    match t {
        "f16" => 65504.0,
        "bf16" => f32::from_bits(0x7f7f_0000) as f64,
        "f32" => f32::MAX as f64,
        _ => f64::MAX,
    }
}

/// The reference of `cvt{mods}.{dt}.{st}` on the source bits `v`; `mods` is a list of
/// modifiers (`rni`, `rn`, `ftz`, `sat`, `relu`, `satfinite`).
fn ref_cvt(dt: &str, st: &str, mods: &[&str], v: u64) -> u64 {
    let has = |m: &str| mods.contains(&m);
    let rnd = mods
        .iter()
        .copied()
        .find(|m| m.starts_with('r') && *m != "relu")
        .unwrap_or("rn");
    let ftz = has("ftz");
    if is_int(st) && is_int(dt) {
        let x = ival(v, st);
        let (lo, hi) = range(dt);
        return ireg(if has("sat") { x.clamp(lo, hi) } else { x }, dt);
    }
    if is_int(dt) {
        // float → integer
        let mut x = fval(v, st);
        if ftz && st == "f32" {
            x = ftz32(x);
        }
        let (lo, hi) = range(dt);
        if x.is_nan() {
            let b = bits_of(dt);
            return if st == "f64" || b == 64 {
                ireg(ival(1u64 << (b - 1), dt), dt)
            } else {
                0
            };
        }
        let y = match rnd {
            "rni" => x.round_ties_even(),
            "rzi" => x.trunc(),
            "rmi" => x.floor(),
            _ => x.ceil(),
        };
        let y = if y >= hi as f64 {
            hi
        } else if y <= lo as f64 {
            lo
        } else {
            y as i128
        };
        return ireg(y, dt);
    }
    // → float
    let x = if is_int(st) { None } else { Some(fval(v, st)) };
    let xi = if is_int(st) { Some(ival(v, st)) } else { None };
    let mut out = match (x, xi) {
        (_, Some(i)) => match dt {
            "f64" => with_mode(mode_of(rnd), || int_to_f64(i)).to_bits(),
            "f32" => with_mode(mode_of(rnd), || int_to_f32(i)).to_bits() as u64,
            _ => ref_to_half(int_odd(i), dt == "bf16", rnd) as u64,
        },
        (Some(mut x), _) => {
            // `.ftz` flushes an f32 source, except in a conversion to f16: measured on an H200
            // (sm_90, driver 580), `cvt.rp.ftz.f16.f32 0x1` = 0x0001 and
            // `cvt.rm.ftz.f16.f32 0x80000001` = 0x8001 (the source is not flushed).
            if ftz && st == "f32" && dt != "f16" {
                x = ftz32(x);
            }
            if ["rni", "rzi", "rmi", "rpi"].contains(&rnd) {
                // same-size integral rounding
                let y = match rnd {
                    "rni" => x.round_ties_even(),
                    "rzi" => x.trunc(),
                    "rmi" => x.floor(),
                    _ => x.ceil(),
                };
                fenc(y, dt, "rn")
            } else if x.is_nan() {
                fenc(f64::NAN, dt, "rn")
            } else {
                fenc(x, dt, rnd)
            }
        }
        _ => unreachable!(),
    };
    if ftz && dt == "f32" {
        out = (ftz32(f32::from_bits(out as u32) as f64) as f32).to_bits() as u64;
    }
    let val = fval(out, dt);
    if has("sat") {
        let s = if val.is_nan() || val <= 0.0 {
            0.0
        } else {
            val.min(1.0)
        };
        out = fenc(s, dt, "rn");
    }
    if has("relu") {
        if val.is_nan() {
            return 0x7fff;
        }
        if val.is_sign_negative() {
            out = 0;
        }
    }
    let val = fval(out, dt);
    if has("satfinite") && !val.is_nan() && val.abs() > max_norm(dt) {
        out = fenc(max_norm(dt).copysign(val), dt, "rn");
    }
    out
}

/// The modifier lists `cvt.dt.st` takes (each a separate instruction).
fn mod_sets(dt: &str, st: &str) -> Vec<Vec<&'static str>> {
    let mut v: Vec<Vec<&'static str>> = Vec::new();
    let irnds = ["rni", "rzi", "rmi", "rpi"];
    let frnds = ["rn", "rz", "rm", "rp"];
    match (is_int(st), is_int(dt)) {
        (true, true) => {
            v.push(vec![]);
            let (slo, shi) = range(st);
            let (dlo, dhi) = range(dt);
            if slo < dlo || shi > dhi {
                v.push(vec!["sat"]);
            }
        }
        (false, true) => {
            for r in irnds {
                v.push(vec![r]);
                if st == "f32" {
                    v.push(vec![r, "ftz"]);
                }
            }
            v.push(vec!["rzi", "sat"]);
        }
        (true, false) => {
            for r in frnds {
                v.push(vec![r]);
            }
            if dt != "bf16" {
                v.push(vec!["rn", "sat"]);
            }
        }
        (false, false) => {
            let (sb, db) = (bits_of(st), bits_of(dt));
            let exact = db > sb || (st == "bf16" && db >= 32) || (st == "f16" && db >= 32);
            if st == dt {
                for r in irnds {
                    v.push(vec![r]);
                }
                if dt == "f32" {
                    v.push(vec!["ftz"]);
                    v.push(vec!["rni", "ftz"]);
                }
                if dt != "bf16" {
                    v.push(vec!["sat"]);
                }
            } else if exact {
                v.push(vec![]);
                if st == "f32" || dt == "f32" {
                    v.push(vec!["ftz"]);
                }
                if dt != "bf16" {
                    v.push(vec!["sat"]);
                }
            } else {
                for r in frnds {
                    v.push(vec![r]);
                    if st == "f32" || dt == "f32" {
                        v.push(vec![r, "ftz"]);
                    }
                }
                if dt != "bf16" {
                    v.push(vec!["rn", "sat"]);
                }
                if st == "f32" && (dt == "f16" || dt == "bf16") {
                    for r in ["rn", "rz"] {
                        v.push(vec![r, "relu"]);
                        v.push(vec![r, "satfinite"]);
                        v.push(vec![r, "relu", "satfinite"]);
                    }
                }
            }
        }
    }
    v
}

/// Source values of type `st` (bit patterns).
fn sources(st: &str) -> Vec<u64> {
    let mut r = Rng::new(bits_of(st) as u64 * 7 + st.len() as u64);
    match st {
        // 8-bit sources: every byte, with garbage in the register's high byte.
        "u8" | "s8" => (0..1024u64)
            .map(|i| {
                (i & 0xff)
                    | (if i < 256 {
                        0
                    } else {
                        (r.u32() as u64 & 0xff) << 8
                    })
            })
            .collect(),
        "u16" | "s16" | "f16" | "bf16" => (0..0x1_0000).collect(),
        "f32" => {
            let mut v: Vec<u64> = ptx_ref::floats32(1500, 5)
                .into_iter()
                .map(|x| x as u64)
                .collect();
            v.extend(
                float_edges()
                    .into_iter()
                    .map(|x| (x as f32).to_bits() as u64),
            );
            v.extend(
                float_edges()
                    .into_iter()
                    .map(|x| (x as f32).to_bits() as u64 + 1),
            );
            v.extend(
                float_edges()
                    .into_iter()
                    .map(|x| (x as f32).to_bits() as u64 - 1),
            );
            v.retain(|x| *x <= 0xffff_ffff);
            v
        }
        "f64" => {
            let mut v: Vec<u64> = ptx_ref::floats64(1500, 6);
            v.extend(float_edges().into_iter().map(|x| x.to_bits()));
            v.extend(float_edges().into_iter().map(|x| x.to_bits() + 1));
            v.extend(float_edges().into_iter().map(|x| x.to_bits() - 1));
            // Values that round to ties and just off them at f32, f16 and bf16 precision.
            for _ in 0..600 {
                let base = (r.u64() & 0x800f_ffff_ffff_ffff) | ((0x3e0 + (r.u64() >> 58)) << 52);
                let keep = [29u32, 42, 45][(r.u32() % 3) as usize];
                let t = (base >> keep << keep) | (1 << (keep - 1));
                v.extend([t, t + 1, t - 1]);
            }
            v
        }
        _ => {
            let b = bits_of(st);
            let mut v: Vec<u64> = Vec::new();
            for k in 0..b {
                let p = 1u64 << k;
                for x in [
                    p,
                    p + 1,
                    p - 1,
                    p.wrapping_neg(),
                    p.wrapping_neg() + 1,
                    p.wrapping_neg().wrapping_sub(1),
                ] {
                    v.push(mask(x, b));
                }
            }
            // Integers whose float images round to ties at f32/f16/bf16 precision.
            for _ in 0..800 {
                let x = mask(r.u64() >> (r.u32() % b), b);
                let keep = [4u32, 8, 11, 24, 53][(r.u32() % 5) as usize];
                let top = 64 - x.leading_zeros();
                v.push(x);
                if top > keep + 1 {
                    let sh = top - keep - 1;
                    let t = (x >> (sh + 1) << (sh + 1)) | (1 << sh);
                    v.extend([t, t + 1, t - 1, mask(t.wrapping_neg(), b)]);
                }
            }
            v.push(0);
            v
        }
    }
}

/// Boundaries of the integer ranges and rounding cases in f64.
fn float_edges() -> Vec<f64> {
    let mut v = vec![
        0.5,
        1.5,
        2.5,
        -0.5,
        -1.5,
        -2.5,
        0.49999999999999994,
        1.0,
        -1.0,
        3.5,
        -3.5,
    ];
    for k in [7, 8, 15, 16, 31, 32, 63, 64] {
        let p = 2f64.powi(k);
        v.extend([
            p,
            -p,
            p - 1.0,
            -p - 1.0,
            p + 1.0,
            p - 0.5,
            -p + 0.5,
            -p - 0.5,
            p * 1.5,
        ]);
    }
    v.retain(|x| *x != 0.0);
    v
}

fn same_cvt(dt: &'static str) -> impl Fn(&str, u64, u64) -> bool {
    move |_t, w, g| w == g || (!is_int(dt) && is_nan(dt, w) && is_nan(dt, g))
}

/// Runs every `cvt.*.{st}` form on every source value of `st`.
fn cvt_from(chk: &mut Checker, st: &'static str) {
    let srcs = sources(st);
    let cases: Vec<Vec<u64>> = srcs.iter().map(|&v| vec![v]).collect();
    let in_ty: &'static str = match st {
        "u8" => "u16",
        "s8" => "s16",
        t => t,
    };
    let mut ops = Vec::new();
    let mut meta: Vec<(&'static str, Vec<&'static str>)> = Vec::new();
    for dt in INTS.iter().chain(FLOATS.iter()).copied() {
        for m in mod_sets(dt, st) {
            let ms: String = m.iter().map(|x| format!(".{x}")).collect();
            ops.push(Op::ins(dt, format!("cvt{ms}.{dt}.{st} $d, $a;")));
            meta.push((dt, m));
        }
    }
    for (chunk_ops, chunk_meta) in ops.chunks(40).zip(meta.chunks(40)) {
        let got = run(&[in_ty], chunk_ops, &cases);
        for (k, op) in chunk_ops.iter().enumerate() {
            let (dt, m) = (chunk_meta[k].0, chunk_meta[k].1.clone());
            let relu = m.contains(&"relu");
            let same = same_cvt(dt);
            chk.table(
                op,
                &cases,
                &got[k],
                |c| vec![ref_cvt(dt, st, &m, c[0])],
                |t, w, g| {
                    if relu {
                        w == g || (w != 0x7fff && same(t, w, g))
                    } else {
                        same(t, w, g)
                    }
                },
            );
        }
    }
}

#[test]
fn cvt_from_8_and_16_bit_integers_exhaustive() {
    let mut chk = Checker::new("cvt from u8/s8/u16/s16 (every bit pattern)");
    for st in ["u8", "s8", "u16", "s16"] {
        cvt_from(&mut chk, st);
    }
    chk.finish();
}

#[test]
fn cvt_from_32_and_64_bit_integers() {
    let mut chk = Checker::new("cvt from u32/s32/u64/s64");
    for st in ["u32", "s32", "u64", "s64"] {
        cvt_from(&mut chk, st);
    }
    chk.finish();
}

#[test]
fn cvt_from_f16_bf16_exhaustive() {
    let mut chk = Checker::new("cvt from f16/bf16 (every bit pattern)");
    for st in ["f16", "bf16"] {
        cvt_from(&mut chk, st);
    }
    chk.finish();
}

#[test]
fn cvt_from_f32_f64() {
    let mut chk = Checker::new("cvt from f32/f64");
    for st in ["f32", "f64"] {
        cvt_from(&mut chk, st);
    }
    chk.finish();
}

/// cvt.{rn,rz}{.relu}{.satfinite}.{f16x2,bf16x2}.f32 d, a, b: a converted into the upper half,
/// b into the lower half.
#[test]
fn cvt_packs_f16x2_bf16x2() {
    let mut chk = Checker::new("cvt f16x2/bf16x2 packs");
    let v: Vec<u64> = ptx_ref::floats32(400, 77)
        .into_iter()
        .map(|x| x as u64)
        .chain([
            0x477f_e000u64,
            0x477f_f000,
            0x477f_f001,
            0xc77f_f000,
            0x7f7f_8000,
            0x7f7f_7fff,
            0x3380_0000,
            0x3380_0001,
            0xb380_0000,
        ])
        .collect();
    let mut cases = Vec::new();
    for (i, &a) in v.iter().enumerate() {
        for j in 0..24 {
            cases.push(vec![a, v[(i * 17 + j * 31 + 1) % v.len()]]);
        }
    }
    let mut ops = Vec::new();
    let mut meta = Vec::new();
    for t in ["f16x2", "bf16x2"] {
        for r in ["rn", "rz"] {
            for m in [
                vec![],
                vec!["relu"],
                vec!["satfinite"],
                vec!["relu", "satfinite"],
            ] {
                let ms: String = m.iter().map(|x| format!(".{x}")).collect();
                ops.push(Op::ins("b32", format!("cvt.{r}{ms}.{t}.f32 $d, $a, $b;")));
                let mut mm = vec![r];
                mm.extend(m);
                meta.push((if t == "f16x2" { "f16" } else { "bf16" }, mm));
            }
        }
    }
    let got = run(&["f32", "f32"], &ops, &cases);
    for (k, op) in ops.iter().enumerate() {
        let (dt, m) = (meta[k].0, meta[k].1.clone());
        let relu = m.contains(&"relu");
        chk.table(
            op,
            &cases,
            &got[k],
            |c| vec![ref_cvt(dt, "f32", &m, c[0]) << 16 | ref_cvt(dt, "f32", &m, c[1])],
            |_t, w, g| {
                let same = same_cvt(dt);
                let lane = |x: u64, y: u64| if relu { x == y } else { same(dt, x, y) };
                lane(w >> 16, g >> 16) && lane(w & 0xffff, g & 0xffff)
            },
        );
    }
    chk.finish();
}
