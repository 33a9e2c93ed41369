//! Instruction-level tests of the cpu target, floating point: PTX kernels (one thread per case,
//! built by `tests/common/instr.rs`) run through the embedding API on NaNs, ±inf, subnormals,
//! ±0, MAX, MIN_NORMAL, values around 1 and seeded random bit patterns, compared with references
//! written from the PTX ISA 9.2 manual (`/work/shared/spec/instructions/{add,sub,mul,fma,mad,div,
//! sqrt,rcp,abs,neg,min,max,copysign,testp,setp,selp,sin,cos,lg2,ex2,rsqrt,tanh}.txt`).
//!
//! Directed roundings (`.rz/.rm/.rp`) are computed on the host FPU in that rounding mode
//! (`fesetround`, `ptx_ref::with_mode`); `.ftz` flushes subnormal inputs and results to
//! sign-preserving zero; `.sat` clamps to [0, 1] with NaN → +0. Any NaN matches any NaN where
//! the manual leaves the NaN unspecified (arithmetic, abs, neg). 16-bit results are rounded once
//! from a value computed exactly enough (round-to-odd at 53 bits, `ptx_ref::odd`).
//!
//! `.approx` instructions are checked against the manual's stated maximum errors (sin/cos:
//! absolute 2^-20.9 on [−π, π]; lg2: absolute 2^-22.6 plus the result's rounding; ex2: relative
//! 2^-22.5; rsqrt: 2^-22.4 relative; rcp: 2^-23 absolute on [1, 2], i.e. relative 2^-22 by
//! scaling; div.approx/div.full: 2 ulp; tanh f16 2^-10.987 and bf16 2^-8 absolute; ex2 f16
//! 2^-9.9 and bf16 2^-7 relative) and their corner-case tables. Where a table lists a flushed
//! result for a subnormal input (rcp/rsqrt/lg2/sin/cos/sqrt of ±subnormal) but the manual also
//! says subnormals are supported by default, either result is accepted.

#[path = "common/instr.rs"]
mod instr;
#[path = "common/ptx_ref.rs"]
mod ptx_ref;

use instr::*;
use ptx_ref::{bb, ftz32, half_to_f64, mode_of, odd, ref_minmax, ref_to_half, with_mode, Rng};

fn f(b: u64) -> f32 {
    f32::from_bits(b as u32)
}
fn d(b: u64) -> f64 {
    f64::from_bits(b)
}
fn satf(v: f32) -> f32 {
    if v.is_nan() || v <= 0.0 {
        0.0
    } else {
        v.min(1.0)
    }
}

/// f32 test values: the ptx_ref set (zeros, subnormals, MIN_NORMAL, MAX, infinities, NaNs with
/// payloads, values around 1 and powers of two) plus random ones.
fn vals32(n: usize, seed: u64) -> Vec<u64> {
    let mut v: Vec<u64> = ptx_ref::floats32(n, seed)
        .into_iter()
        .map(|x| x as u64)
        .collect();
    v.extend([
        0x7f7f_ffffu64,
        0x0080_0000,
        0x8000_0001,
        0x3f7f_ffff,
        0xc000_0000,
        0x7fa0_0000,
    ]);
    v
}

/// Reference of an f32 arithmetic instruction on bit patterns.
fn ref_f32(op: &str, r: &str, ftz: bool, sat: bool, a: u64, b: u64, c: u64) -> u64 {
    let fl = |x: f32| if ftz { ftz32(x) } else { x };
    let (x, y, z) = (fl(f(a)), fl(f(b)), fl(f(c)));
    let v = with_mode(mode_of(r), || match op {
        "add" => bb(x) + bb(y),
        "sub" => bb(x) - bb(y),
        "mul" => bb(x) * bb(y),
        "div" => bb(x) / bb(y),
        "fma" | "mad" => bb(x).mul_add(bb(y), bb(z)),
        "sqrt" => bb(x).sqrt(),
        "rcp" => 1.0 / bb(x),
        _ => panic!("ref_f32 {op}"),
    });
    let v = fl(v);
    // `.ftz` decides by the exact result (measured on an H200, `tests/cpu_gpu_measured.rs`):
    // a product or quotient below the smallest normal is zero even where it rounds up to it.
    let exact = match op {
        "mul" => Some(x as f64 * y as f64),
        "div" => Some(x as f64 / y as f64),
        "rcp" => Some(1.0 / x as f64),
        "fma" | "mad" => Some(exact_fma_ish(x, y, z)),
        _ => None,
    };
    // Tininess after rounding to 24 bits with an unbounded exponent (the s17 H200 probes,
    // docs/GPU_DIFF.md): below 2^-126 unless that rounding carries the value up to 2^-126.
    let min = f32::MIN_POSITIVE as f64;
    let largest_below = min * (1.0 - 2f64.powi(-24));
    let rounds_up = |e: f64| match r {
        "rz" => false,
        "rp" => e > 0.0 && e.abs() > largest_below,
        "rm" => e < 0.0 && e.abs() > largest_below,
        _ => e.abs() >= min * (1.0 - 2f64.powi(-25)),
    };
    let v = match exact {
        Some(e) if ftz && e.abs() < min && !rounds_up(e) => 0.0f32.copysign(v),
        _ => v,
    };
    (if sat { satf(v) } else { v }).to_bits() as u64
}

/// `x*y + z` in f64, moved off 2^-126 towards zero where the exact value lies below it (so
/// that comparing it with 2^-126 tells whether the exact value is smaller).
fn exact_fma_ish(x: f32, y: f32, z: f32) -> f64 {
    let (p, z) = (x as f64 * y as f64, z as f64);
    let s = p + z;
    let bp = s - z;
    let e = (p - bp) + (z - (s - bp));
    if s.abs() == f32::MIN_POSITIVE as f64 && s * e < 0.0 {
        s * (1.0 - f64::EPSILON)
    } else {
        s
    }
}

fn ref_f64(op: &str, r: &str, a: u64, b: u64, c: u64) -> u64 {
    let (x, y, z) = (d(a), d(b), d(c));
    with_mode(mode_of(r), || match op {
        "add" => bb(x) + bb(y),
        "sub" => bb(x) - bb(y),
        "mul" => bb(x) * bb(y),
        "div" => bb(x) / bb(y),
        "fma" | "mad" => bb(x).mul_add(bb(y), bb(z)),
        "sqrt" => bb(x).sqrt(),
        "rcp" => 1.0 / bb(x),
        _ => panic!("ref_f64 {op}"),
    })
    .to_bits()
}

/// The PTX float comparison `cmp` (ordered ones false on NaN, the `u` ones true, num/nan).
fn fcmp(cmp: &str, x: f64, y: f64) -> bool {
    let un = x.is_nan() || y.is_nan();
    match cmp {
        "eq" => x == y,
        "ne" => !un && x != y,
        "lt" => x < y,
        "le" => x <= y,
        "gt" => x > y,
        "ge" => x >= y,
        "equ" => un || x == y,
        "neu" => un || x != y,
        "ltu" => un || x < y,
        "leu" => un || x <= y,
        "gtu" => un || x > y,
        "geu" => un || x >= y,
        "num" => !un,
        "nan" => un,
        _ => panic!("fcmp {cmp}"),
    }
}

const FCMPS: [&str; 14] = [
    "eq", "ne", "lt", "le", "gt", "ge", "equ", "neu", "ltu", "leu", "gtu", "geu", "num", "nan",
];

fn pairs_of(v: &[u64], third: impl Fn(usize, usize) -> u64) -> Vec<Vec<u64>> {
    let mut cases = Vec::with_capacity(v.len() * v.len());
    for (i, &a) in v.iter().enumerate() {
        for (j, &b) in v.iter().enumerate() {
            cases.push(vec![a, b, third(i, j)]);
        }
    }
    cases
}

/// add/sub/mul with every rounding (and none), .ftz and .sat; div/sqrt/rcp with every rounding
/// and .ftz; fma/mad with every rounding, .ftz and .sat — on every pair of the f32 value set.
#[test]
fn f32_arithmetic_every_rounding() {
    let mut chk = Checker::new("f32 arithmetic");
    let v = vals32(110, 17);
    let cases = pairs_of(&v, |i, j| v[(i * 31 + j * 7) % v.len()]);
    let mut ops = Vec::new();
    let mut meta = Vec::new();
    for op in ["add", "sub", "mul", "div", "fma", "mad", "sqrt", "rcp"] {
        let rnds: &[&str] = if ["add", "sub", "mul"].contains(&op) {
            &["", "rn", "rz", "rm", "rp"]
        } else {
            &["rn", "rz", "rm", "rp"]
        };
        for r in rnds {
            for ftz in [false, true] {
                let sats: &[bool] = if ["div", "sqrt", "rcp"].contains(&op) {
                    &[false]
                } else {
                    &[false, true]
                };
                for &sat in sats {
                    let m = format!(
                        "{}{}{}",
                        if r.is_empty() {
                            String::new()
                        } else {
                            format!(".{r}")
                        },
                        if ftz { ".ftz" } else { "" },
                        if sat { ".sat" } else { "" }
                    );
                    let args = match op {
                        "sqrt" | "rcp" => "$d, $a",
                        "fma" | "mad" => "$d, $a, $b, $c",
                        _ => "$d, $a, $b",
                    };
                    ops.push(Op::ins("f32", format!("{op}{m}.f32 {args};")));
                    meta.push((op, if r.is_empty() { "rn" } else { r }, ftz, sat));
                }
            }
        }
    }
    for chunk in ops.chunks(48).zip(meta.chunks(48)) {
        let got = run(&["f32", "f32", "f32"], chunk.0, &cases);
        for (k, op) in chunk.0.iter().enumerate() {
            let (o, r, ftz, sat) = chunk.1[k];
            chk.table(
                op,
                &cases,
                &got[k],
                |c| vec![ref_f32(o, r, ftz, sat, c[0], c[1], c[2])],
                same_float,
            );
        }
    }
    chk.finish();
}

#[test]
fn f64_arithmetic_every_rounding() {
    let mut chk = Checker::new("f64 arithmetic");
    let v: Vec<u64> = ptx_ref::floats64(90, 23);
    let cases = pairs_of(&v, |i, j| v[(i * 31 + j * 7) % v.len()]);
    let mut ops = Vec::new();
    let mut meta = Vec::new();
    for op in ["add", "sub", "mul", "div", "fma", "mad", "sqrt", "rcp"] {
        let rnds: &[&str] = if ["add", "sub", "mul"].contains(&op) {
            &["", "rn", "rz", "rm", "rp"]
        } else {
            &["rn", "rz", "rm", "rp"]
        };
        for r in rnds {
            let m = if r.is_empty() {
                String::new()
            } else {
                format!(".{r}")
            };
            let args = match op {
                "sqrt" | "rcp" => "$d, $a",
                "fma" | "mad" => "$d, $a, $b, $c",
                _ => "$d, $a, $b",
            };
            ops.push(Op::ins("f64", format!("{op}{m}.f64 {args};")));
            meta.push((op, if r.is_empty() { "rn" } else { r }));
        }
    }
    let got = run(&["f64", "f64", "f64"], &ops, &cases);
    for (k, op) in ops.iter().enumerate() {
        let (o, r) = meta[k];
        chk.table(
            op,
            &cases,
            &got[k],
            |c| vec![ref_f64(o, r, c[0], c[1], c[2])],
            same_float,
        );
    }
    chk.finish();
}

/// abs/neg (NaN: any NaN), min/max with .NaN, .xorsign.abs, .ftz and the three-input forms,
/// copysign, testp, setp with every comparison (ordered and unordered, .ftz, BoolOp, p|q), selp,
/// on f32 and f64.
#[test]
fn f32_f64_compare_select_minmax() {
    let mut chk = Checker::new("f32/f64 abs/neg/min/max/copysign/testp/setp/selp");
    for ty in ["f32", "f64"] {
        let is32 = ty == "f32";
        let v: Vec<u64> = if is32 {
            vals32(90, 29)
        } else {
            ptx_ref::floats64(90, 31)
        };
        let cases: Vec<Vec<u64>> = pairs_of(&v, |i, j| ((i * 7 + j) % 2) as u64)
            .into_iter()
            .map(|mut c| {
                let p = c[2];
                c[2] = v[(c[0] as usize ^ c[1] as usize) % v.len()];
                c.push(p);
                c
            })
            .collect();
        let val = |b: u64, ftz: bool| -> f64 {
            if is32 {
                let x = f(b);
                (if ftz { ftz32(x) } else { x }) as f64
            } else {
                d(b)
            }
        };
        let bits = |x: f64| -> u64 {
            if is32 {
                (x as f32).to_bits() as u64
            } else {
                x.to_bits()
            }
        };
        let canon = if is32 {
            0x7fff_ffffu64
        } else {
            0x7fff_ffff_ffff_ffff
        };
        let ftzs: &[bool] = if is32 { &[false, true] } else { &[false] };
        let mut ops: Vec<Op> = Vec::new();
        // (kind, modifiers) for the reference
        let mut meta: Vec<(&str, String)> = Vec::new();
        for &ftz in ftzs {
            let fz = if ftz { ".ftz" } else { "" };
            ops.push(Op::ins(ty, format!("abs{fz}.{ty} $d, $a;")));
            meta.push(("abs", fz.into()));
            ops.push(Op::ins(ty, format!("neg{fz}.{ty} $d, $a;")));
            meta.push(("neg", fz.into()));
            let mm: &[&str] = if is32 {
                &["", ".NaN", ".xorsign.abs", ".NaN.xorsign.abs"]
            } else {
                &[""]
            };
            for op in ["min", "max"] {
                for m in mm {
                    ops.push(Op::ins(ty, format!("{op}{fz}{m}.{ty} $d, $a, $b;")));
                    meta.push((op, format!("{fz}{m}")));
                }
                if is32 {
                    for m in ["", ".abs", ".NaN", ".NaN.abs"] {
                        ops.push(Op::ins(ty, format!("{op}{fz}{m}.{ty} $d, $a, $b, $c;")));
                        meta.push((
                            if op == "min" { "min3" } else { "max3" },
                            format!("{fz}{m}"),
                        ));
                    }
                }
            }
            for c in FCMPS {
                ops.push(Op::ins("pred", format!("setp.{c}{fz}.{ty} $d, $a, $b;")));
                meta.push(("setp", format!("{c}{fz}")));
            }
            for (c, bop) in [("lt", "and"), ("geu", "or"), ("ne", "xor"), ("nan", "and")] {
                ops.push(Op::ins(
                    "pred",
                    format!("setp.{c}.{bop}{fz}.{ty} $d, $a, $b, !$e;"),
                ));
                meta.push(("setpb", format!("{c} {bop}{fz}")));
            }
            ops.push(Op::multi(
                format!("setp.ltu{fz}.{ty} p|q"),
                &["pred", "pred"],
                format!("setp.ltu{fz}.{ty} $d|$d1, $a, $b;"),
            ));
            meta.push(("setpq", fz.into()));
        }
        ops.push(Op::ins(ty, format!("copysign.{ty} $d, $a, $b;")));
        meta.push(("copysign", String::new()));
        for c in [
            "finite",
            "infinite",
            "number",
            "notanumber",
            "normal",
            "subnormal",
        ] {
            ops.push(Op::ins("pred", format!("testp.{c}.{ty} $d, $a;")));
            meta.push(("testp", c.into()));
        }
        ops.push(Op::ins(ty, format!("selp.{ty} $d, $a, $b, $e;")));
        meta.push(("selp", String::new()));
        let got = run(&[ty, ty, ty, "pred"], &ops, &cases);
        for (k, op) in ops.iter().enumerate() {
            let (kind, m) = (meta[k].0, meta[k].1.clone());
            let ftz = m.contains("ftz");
            chk.table(
                op,
                &cases,
                &got[k],
                |c| {
                    let (x, y, z) = (val(c[0], ftz), val(c[1], ftz), val(c[2], ftz));
                    let p = c[3] != 0;
                    match kind {
                        "abs" => vec![bits(x.abs())],
                        "neg" => vec![bits(-x)],
                        "min" | "max" => {
                            let w = ref_minmax(
                                kind == "max",
                                m.contains("NaN"),
                                m.contains("xorsign"),
                                x,
                                y,
                            );
                            // f64 min/max of two NaNs give the second, quieted (measured on
                            // an H200: tests/cpu_gpu_measured.rs); f32 the canonical NaN.
                            if !is32 && x.is_nan() && y.is_nan() && !m.contains("NaN") {
                                vec![y.to_bits() | 0x0008_0000_0000_0000]
                            } else {
                                vec![if w.is_nan() { canon } else { bits(w) }]
                            }
                        }
                        "min3" | "max3" => {
                            let ab = m.contains("abs");
                            let (x, y, z) = if ab {
                                (x.abs(), y.abs(), z.abs())
                            } else {
                                (x, y, z)
                            };
                            let nan = m.contains("NaN");
                            let w = ref_minmax(
                                kind == "max3",
                                nan,
                                false,
                                ref_minmax(kind == "max3", nan, false, x, y),
                                z,
                            );
                            vec![if w.is_nan() { canon } else { bits(w) }]
                        }
                        "setp" => vec![fcmp(m.trim_end_matches(".ftz"), x, y) as u64],
                        "setpb" => {
                            let mut it = m.split(' ');
                            let (cm, bop) = (
                                it.next().unwrap(),
                                it.next().unwrap().trim_end_matches(".ftz"),
                            );
                            let r = fcmp(cm, x, y);
                            vec![match bop {
                                "and" => r && !p,
                                "or" => r || !p,
                                _ => r ^ !p,
                            } as u64]
                        }
                        "setpq" => {
                            let r = fcmp("ltu", x, y);
                            vec![r as u64, !r as u64]
                        }
                        "copysign" => {
                            let sign = if is32 { 0x8000_0000u64 } else { 1 << 63 };
                            vec![(c[1] & !sign) | (c[0] & sign)]
                        }
                        "testp" => {
                            let (fin, inf, nan) = (x.is_finite(), x.is_infinite(), x.is_nan());
                            // `testp.normal` of ±0 is true: the ISA text, measured on an H200
                            // (sm_90, driver 580) for f64, vosen/ptx_tests for f32.
                            let (norm, sub) = if is32 {
                                (
                                    f(c[0]).is_normal() || f(c[0]) == 0.0,
                                    f(c[0]).is_subnormal(),
                                )
                            } else {
                                (x.is_normal() || x == 0.0, x.is_subnormal())
                            };
                            vec![match m.as_str() {
                                "finite" => fin,
                                "infinite" => inf,
                                "number" => !nan,
                                "notanumber" => nan,
                                "normal" => norm,
                                _ => sub,
                            } as u64]
                        }
                        _ => vec![if p { c[0] } else { c[1] }],
                    }
                },
                |t, w, g| {
                    if kind == "abs" || kind == "neg" {
                        same_float(t, w, g)
                    } else {
                        w == g
                    }
                },
            );
        }
    }
    chk.finish();
}

// ---- 16-bit floats --------------------------------------------------------------------------

/// f16 bit patterns: every special value (±0, smallest/largest subnormal, smallest normal, ±1
/// and neighbours, MAX, ±inf, quiet and signalling NaNs with payloads, values whose sums and
/// products round to ties) and random patterns; 256 values.
fn halves(bf: bool, seed: u64) -> Vec<u64> {
    let mut v: Vec<u64> = if bf {
        vec![
            0, 0x8000, 1, 0x8001, 0x007f, 0x807f, 0x0080, 0x8080, 0x0081, 0x3f80, 0xbf80, 0x3f81,
            0x3f7f, 0x4000, 0x3f00, 0x7f7f, 0xff7f, 0x7f00, 0x7f80, 0xff80, 0x7fc0, 0xffc0, 0x7f81,
            0x7fff, 0x4b00, 0x4b80, 0x3c00, 0x0001, 0x3fc0, 0x4040, 0xc040, 0x3400,
        ]
    } else {
        vec![
            0, 0x8000, 1, 0x8001, 0x03ff, 0x83ff, 0x0400, 0x8400, 0x0401, 0x3c00, 0xbc00, 0x3c01,
            0x3bff, 0x4000, 0x3800, 0x7bff, 0xfbff, 0x7800, 0x7c00, 0xfc00, 0x7e00, 0xfe00, 0x7c01,
            0x7fff, 0x6800, 0x6400, 0x1400, 0x0200, 0x3e00, 0x4200, 0xc200, 0x3555, 0x5bff, 0x0002,
        ]
    };
    let mut r = Rng::new(seed);
    while v.len() < 256 {
        let x = r.u32() as u64 & 0xffff;
        // Half random patterns, half values near 1 (exponent differences that round).
        let x = if v.len().is_multiple_of(2) {
            x
        } else if bf {
            (x & 0x807f) | 0x3f00 | ((x >> 7) & 0x80)
        } else {
            (x & 0x83ff) | 0x3800 | ((x >> 3) & 0x400)
        };
        v.push(x);
    }
    v
}

fn hval(h: u64, bf: bool) -> f64 {
    half_to_f64(h as u16, bf)
}

fn hflush(x: f64, ftz: bool) -> f64 {
    if ftz && x != 0.0 && x.abs() < 2f64.powi(-14) {
        0.0f64.copysign(x)
    } else {
        x
    }
}

/// Rounds an exact-enough value to f16/bf16 and applies .ftz, .sat, .relu.
fn hfinish(x: f64, bf: bool, ftz: bool, sat: bool, relu: bool) -> u64 {
    let h = ref_to_half(x, bf, "rn");
    let v = hflush(half_to_f64(h, bf), ftz);
    let v = if sat {
        if v.is_nan() || v <= 0.0 {
            0.0
        } else {
            v.min(1.0)
        }
    } else {
        v
    };
    if relu && v.is_nan() {
        // f16 and bf16 both canonicalize NaN to 0x7fff.
        return 0x7fff;
    }
    let v = if relu && v.is_sign_negative() { 0.0 } else { v };
    ref_to_half(v, bf, "rn") as u64
}

/// One argument per modifier and operand, as the instruction's syntax has them.
#[allow(clippy::too_many_arguments)]
fn ref_half(op: &str, bf: bool, ftz: bool, sat: bool, relu: bool, a: u64, b: u64, c: u64) -> u64 {
    let (x, y, z) = (
        hflush(hval(a, bf), ftz),
        hflush(hval(b, bf), ftz),
        hflush(hval(c, bf), ftz),
    );
    let exact = match op {
        "add" => odd(|| bb(x) + bb(y)),
        "sub" => odd(|| bb(x) - bb(y)),
        "mul" => odd(|| bb(x) * bb(y)),
        _ => odd(|| bb(x).mul_add(bb(y), bb(z))),
    };
    hfinish(exact, bf, ftz, sat, relu)
}

fn same_half(bf: bool) -> impl Fn(&str, u64, u64) -> bool {
    move |_t, w, g| w == g || hval(w, bf).is_nan() && hval(g, bf).is_nan()
}

/// add/sub/mul/fma on f16 and bf16, scalar and x2, with .ftz, .sat, .relu: every pair of 256
/// values (65,536 pairs; the x2 forms run the pair swapped in the upper lane).
#[test]
fn half_arithmetic_pairs() {
    let mut chk = Checker::new("f16/bf16 add/sub/mul/fma");
    for bf in [false, true] {
        let ty = if bf { "bf16" } else { "f16" };
        let v = halves(bf, 37 + bf as u64);
        let cases: Vec<Vec<u64>> = pairs_of(&v, |i, j| v[(i * 7 + j * 3) % v.len()])
            .into_iter()
            .map(|c| {
                vec![
                    c[0],
                    c[1],
                    c[2],
                    c[0] | c[1] << 16,
                    c[1] | c[0] << 16,
                    c[2] | c[2] << 16,
                ]
            })
            .collect();
        let mods: &[&str] = if bf {
            &[""]
        } else {
            &["", ".ftz", ".sat", ".ftz.sat"]
        };
        let mut ops = Vec::new();
        let mut meta = Vec::new();
        for op in ["add", "sub", "mul", "fma"] {
            let mut ms: Vec<String> = mods.iter().map(|m| m.to_string()).collect();
            if op == "fma" {
                ms.push(".relu".into());
                if !bf {
                    ms.push(".ftz.relu".into());
                }
            }
            for m in ms {
                let rn = if op == "fma" || m.is_empty() {
                    ".rn"
                } else {
                    ""
                };
                let (args, args2) = if op == "fma" {
                    ("$d, $a, $b, $c", "$d, $e, $f, $g")
                } else {
                    ("$d, $a, $b", "$d, $e, $f")
                };
                ops.push(Op::ins(ty, format!("{op}{rn}{m}.{ty} {args};")));
                meta.push((op, m.clone(), false));
                let x2: &'static str = if bf { "bf16x2" } else { "f16x2" };
                ops.push(Op::ins(x2, format!("{op}.rn{m}.{x2} {args2};")));
                meta.push((op, m.clone(), true));
            }
        }
        let got = run(&[ty, ty, ty, "b32", "b32", "b32"], &ops, &cases);
        for (k, op) in ops.iter().enumerate() {
            let (o, m, x2) = (meta[k].0, meta[k].1.clone(), meta[k].2);
            let (ftz, sat, relu) = (m.contains("ftz"), m.contains("sat"), m.contains("relu"));
            let same = same_half(bf);
            chk.table(
                op,
                &cases,
                &got[k],
                |c| {
                    let lo = ref_half(o, bf, ftz, sat, relu, c[0], c[1], c[2]);
                    if x2 {
                        vec![lo | ref_half(o, bf, ftz, sat, relu, c[1], c[0], c[2]) << 16]
                    } else {
                        vec![lo]
                    }
                },
                |t, w, g| {
                    if x2 {
                        same(t, w & 0xffff, g & 0xffff) && same(t, w >> 16, g >> 16)
                    } else {
                        same(t, w, g)
                    }
                },
            );
        }
    }
    chk.finish();
}

/// neg/abs, min/max (.NaN, .xorsign.abs, .ftz), setp with every comparison, on f16/bf16 scalar
/// and x2; mixed-precision add/sub.f32.f16/.bf16 with every rounding and .sat.
#[test]
fn half_compare_minmax_mixed() {
    let mut chk = Checker::new("f16/bf16 neg/abs/min/max/setp, mixed precision");
    for bf in [false, true] {
        let ty = if bf { "bf16" } else { "f16" };
        let x2: &'static str = if bf { "bf16x2" } else { "f16x2" };
        let v = halves(bf, 41 + bf as u64);
        let cases: Vec<Vec<u64>> = pairs_of(&v, |i, j| v[(i * 5 + j * 11) % v.len()])
            .into_iter()
            .map(|c| vec![c[0], c[1], c[0] | c[1] << 16, c[1] | c[0] << 16, c[2]])
            .collect();
        let canon = 0x7fffu64;
        let mut ops = Vec::new();
        let mut meta: Vec<(&str, String, bool)> = Vec::new();
        let fzs: &[&str] = if bf { &[""] } else { &["", ".ftz"] };
        for fz in fzs {
            for op in ["neg", "abs"] {
                ops.push(Op::ins(ty, format!("{op}{fz}.{ty} $d, $a;")));
                meta.push((op, fz.to_string(), false));
                ops.push(Op::ins(x2, format!("{op}{fz}.{x2} $d, $c;")));
                meta.push((op, fz.to_string(), true));
            }
            for op in ["min", "max"] {
                for m in ["", ".NaN", ".xorsign.abs", ".NaN.xorsign.abs"] {
                    ops.push(Op::ins(ty, format!("{op}{fz}{m}.{ty} $d, $a, $b;")));
                    meta.push((op, format!("{fz}{m}"), false));
                    ops.push(Op::ins(x2, format!("{op}{fz}{m}.{x2} $d, $c, $e;")));
                    meta.push((op, format!("{fz}{m}"), true));
                }
            }
            for cmp in FCMPS {
                ops.push(Op::ins("pred", format!("setp.{cmp}{fz}.{ty} $d, $a, $b;")));
                meta.push(("setp", format!("{cmp}{fz}"), false));
            }
            ops.push(Op::multi(
                format!("setp.gtu{fz}.{x2} p|q"),
                &["pred", "pred"],
                format!("setp.gtu{fz}.{x2} $d|$d1, $c, $e;"),
            ));
            meta.push(("setp2", format!("gtu{fz}"), true));
        }
        for r in ["rn", "rz", "rm", "rp"] {
            for sat in ["", ".sat"] {
                for op in ["add", "sub"] {
                    ops.push(Op::ins(
                        "f32",
                        format!("{op}.{r}{sat}.f32.{ty} $d, $a, $f;"),
                    ));
                    meta.push(("mixed", format!("{op} {r}{sat}"), false));
                }
            }
        }
        let got = run(&[ty, ty, "b32", "b32", "f32"], &ops, &cases);
        let same = same_half(bf);
        for (k, op) in ops.iter().enumerate() {
            let (kind, m, is2) = (meta[k].0, meta[k].1.clone(), meta[k].2);
            let ftz = m.contains("ftz");
            let lane = |a: u64, b: u64| -> u64 {
                let (x, y) = (hflush(hval(a, bf), ftz), hflush(hval(b, bf), ftz));
                let enc = |w: f64| {
                    if w.is_nan() {
                        canon
                    } else {
                        ref_to_half(w, bf, "rn") as u64
                    }
                };
                match kind {
                    "neg" => enc(-x),
                    "abs" => enc(x.abs()),
                    "min" | "max" => enc(ref_minmax(
                        kind == "max",
                        m.contains("NaN"),
                        m.contains("xorsign"),
                        x,
                        y,
                    )),
                    _ => fcmp(m.trim_end_matches(".ftz"), x, y) as u64,
                }
            };
            chk.table(
                op,
                &cases,
                &got[k],
                |c| match kind {
                    "mixed" => {
                        let x = hval(c[0], bf);
                        let y = f(c[4]);
                        let (o, rm) = m.split_once(' ').unwrap();
                        let r = &rm[..2];
                        let v = with_mode(mode_of(r), || {
                            if o == "add" {
                                bb(x as f32) + bb(y)
                            } else {
                                bb(x as f32) - bb(y)
                            }
                        });
                        vec![(if rm.contains("sat") { satf(v) } else { v }).to_bits() as u64]
                    }
                    "setp2" => {
                        let r0 = fcmp(
                            "gtu",
                            hflush(hval(c[2] & 0xffff, bf), ftz),
                            hflush(hval(c[3] & 0xffff, bf), ftz),
                        );
                        let r1 = fcmp(
                            "gtu",
                            hflush(hval(c[2] >> 16, bf), ftz),
                            hflush(hval(c[3] >> 16, bf), ftz),
                        );
                        vec![r0 as u64, r1 as u64]
                    }
                    _ if is2 => {
                        let b2 = if kind == "neg" || kind == "abs" {
                            0
                        } else {
                            c[3]
                        };
                        vec![lane(c[2] & 0xffff, b2 & 0xffff) | lane(c[2] >> 16, b2 >> 16) << 16]
                    }
                    _ => vec![lane(c[0], c[1])],
                },
                |t, w, g| match kind {
                    // NaN inputs of neg/abs yield an unspecified NaN.
                    "neg" | "abs" if is2 => {
                        same(t, w & 0xffff, g & 0xffff) && same(t, w >> 16, g >> 16)
                    }
                    "neg" | "abs" => same(t, w, g),
                    "mixed" => same_float("f32", w, g),
                    _ => w == g,
                },
            );
        }
    }
    chk.finish();
}

// ---- .approx --------------------------------------------------------------------------------

fn ulp32(x: f64) -> f64 {
    let a = (x.abs() as f32).max(f32::MIN_POSITIVE);
    let e = (a.to_bits() >> 23) as i32 - 127;
    2f64.powi(e - 23)
}

/// sin/cos/lg2/ex2/rsqrt/rcp/sqrt/tanh .approx.f32 (and .ftz), div.approx/.full: random inputs
/// in each function's documented range plus every special value, within the manual's bounds;
/// corner-case tables exactly.
#[test]
fn approx_f32_within_documented_bounds() {
    let mut chk = Checker::new("f32 .approx");
    let mut r = Rng::new(71);
    let mut unif =
        |lo: f64, hi: f64| lo + (hi - lo) * ((r.u64() >> 11) as f64 / (1u64 << 53) as f64);
    let specials: Vec<u64> = vec![
        0,
        0x8000_0000,
        1,
        0x8000_0001,
        0x007f_ffff,
        0x807f_ffff,
        0x0080_0000,
        0x8080_0000,
        0x7f80_0000,
        0xff80_0000,
        0x7fc0_0000,
        0xffc0_0001,
        0x3f80_0000,
        0xbf80_0000,
        0x7f7f_ffff,
        0xff7f_ffff,
    ];
    // Per function: (op text, input generator range, check)
    let mut cases: Vec<Vec<u64>> = Vec::new();
    for s in &specials {
        for t in &specials {
            cases.push(vec![*s, *t]);
        }
    }
    let nspecial = cases.len();
    for i in 0..30_000 {
        // a spans the trig range, lg2's positive range, ex2's range; b is a divisor.
        let a = match i % 4 {
            0 => unif(-std::f64::consts::PI, std::f64::consts::PI),
            1 => unif(-130.0, 130.0),
            2 => 2f64.powf(unif(-149.0, 128.0)),
            _ => unif(1.0, 4.0),
        } as f32;
        let b = match i % 3 {
            0 => unif(1.0, 2.0),
            1 => 2f64.powf(unif(-126.0, 126.0)) * if i % 2 == 0 { 1.0 } else { -1.0 },
            _ => 2f64.powf(unif(126.0, 128.0)),
        } as f32;
        cases.push(vec![a.to_bits() as u64, b.to_bits() as u64]);
    }
    let mut ops = Vec::new();
    for fz in ["", ".ftz"] {
        for fun in ["sin", "cos", "lg2", "ex2", "rsqrt", "rcp", "sqrt"] {
            ops.push(Op::ins("f32", format!("{fun}.approx{fz}.f32 $d, $a;")));
        }
        ops.push(Op::ins("f32", format!("div.approx{fz}.f32 $d, $a, $b;")));
        ops.push(Op::ins("f32", format!("div.full{fz}.f32 $d, $a, $b;")));
    }
    ops.push(Op::ins("f32", "tanh.approx.f32 $d, $a;"));
    let got = run(&["f32", "f32"], &ops, &cases);
    let pi = std::f64::consts::PI;
    for (k, op) in ops.iter().enumerate() {
        let ftz = op.name.contains(".ftz");
        let fun = op.name.split('.').next().unwrap().to_string();
        let full = op.name.contains(".full");
        for (i, (c, g)) in cases.iter().zip(&got[k]).enumerate() {
            let xa = if ftz { ftz32(f(c[0])) } else { f(c[0]) };
            let xb = if ftz { ftz32(f(c[1])) } else { f(c[1]) };
            let x = xa as f64;
            let gv = f(g[0]);
            let gd = gv as f64;
            let sub_in = f(c[0]).is_subnormal();
            // Corner cases (the manual's tables; for a subnormal input without .ftz either the
            // table's flushed result or the exact function's value).
            let exact: f64 = match fun.as_str() {
                "sin" => x.sin(),
                "cos" => x.cos(),
                "lg2" => x.log2(),
                "ex2" => x.exp2(),
                "rsqrt" => 1.0 / x.sqrt(),
                "rcp" => 1.0 / x,
                "sqrt" => x.sqrt(),
                "tanh" => x.tanh(),
                // "For 2^126 < |b| < 2^128 ... returns NaN [a infinite], otherwise 0" (the ISA's
                // div.approx.f32; vosen/ptx_tests checks it).
                _ if !full && (xb as f64).abs() > 2f64.powi(126) => {
                    xa as f64 * 0f64.copysign(xb as f64)
                }
                _ => xa as f64 / xb as f64,
            };
            let flushed: f64 = {
                let z = 0.0f64.copysign(x);
                match fun.as_str() {
                    "sin" | "sqrt" => z,
                    "cos" | "ex2" => 1.0,
                    "lg2" => f64::NEG_INFINITY,
                    "rsqrt" | "rcp" => 1.0 / z,
                    "tanh" => x,
                    _ => exact,
                }
            };
            let (ok, want) = if i < nspecial || !exact.is_finite() || exact == 0.0 {
                // Exact expectations for special inputs: the exact function's value rounded to f32
                // with the documented error allowed where the result is finite and non-zero.
                let w = exact as f32;
                let ok = if w.is_nan() {
                    gv.is_nan()
                } else if matches!(fun.as_str(), "sin" | "cos") && x.abs() > pi {
                    // The manual bounds the error in [-pi, pi] only (as for random inputs).
                    gd.abs() <= 1.0
                } else if w.is_infinite() || w == 0.0 || (fun != "div" && x.is_infinite()) {
                    gv.to_bits() == w.to_bits() || (w == 0.0 && gv == 0.0 && fun == "tanh")
                } else {
                    let tol = match fun.as_str() {
                        "sin" | "cos" => 2f64.powf(-20.9),
                        "lg2" => 2f64.powf(-22.6) + ulp32(exact),
                        "tanh" => 2f64.powf(-10.987),
                        "ex2" => 2f64.powf(-22.5) * exact.abs() + ulp32(exact),
                        _ => 4.0 * ulp32(exact),
                    };
                    (gd - exact).abs() <= tol
                };
                let ok = ok
                    || (sub_in && !ftz && gv.to_bits() == (flushed as f32).to_bits())
                    || (ftz && f(c[0]).is_subnormal() && gd == flushed);
                (ok, format!("{exact:e} (special input)"))
            } else {
                let (tol, what) = match fun.as_str() {
                    "sin" | "cos" if x.abs() <= pi => (2f64.powf(-20.9), "abs 2^-20.9"),
                    "sin" | "cos" => (2.0, "|result| <= 1"),
                    "lg2" => (2f64.powf(-22.6) + ulp32(exact), "abs 2^-22.6 + 1 ulp"),
                    "ex2" => (
                        2f64.powf(-22.5) * exact.abs() + 2f64.powi(-149),
                        "rel 2^-22.5",
                    ),
                    "rsqrt" => (2f64.powf(-22.4) * exact.abs() + ulp32(exact), "rel 2^-22.4"),
                    "rcp" => (
                        2f64.powi(-22) * exact.abs() + ulp32(exact),
                        "rel 2^-22 (abs 2^-23 on [1,2])",
                    ),
                    "sqrt" => (2f64.powi(-22) * exact.abs(), "rel 2^-22 (no bound stated)"),
                    "tanh" => (2f64.powf(-10.987), "abs 2^-10.987"),
                    _ => {
                        // div.approx: 2 ulp for |b| in [2^-126, 2^126]; beyond, 0 (or NaN for inf / b).
                        let bb_ = xb.abs() as f64;
                        if !full && bb_ > 2f64.powi(126) {
                            (f64::INFINITY, "any (|b| > 2^126)")
                        } else {
                            (2.0 * ulp32(exact), "2 ulp")
                        }
                    }
                };
                let in_range = match fun.as_str() {
                    "sin" | "cos" if x.abs() > pi => gd.abs() <= 1.0,
                    _ => (gd - exact).abs() <= tol || tol.is_infinite(),
                };
                let ftz_ok = ftz && (exact as f32).is_subnormal() && gv == 0.0;
                (in_range || ftz_ok, format!("{exact:e} ± {what}"))
            };
            // Results beyond the f32 range: overflow to ±inf, and (.ftz) subnormal results to ±0.
            let w32 = exact as f32;
            let ok = ok
                || (w32.is_infinite() && gv == w32)
                || (ftz
                    && w32.is_subnormal()
                    && gv == 0.0
                    && gv.is_sign_negative() == w32.is_sign_negative());
            chk.check_text(&op.name, c, &want, &format!("{:#x} ({:e})", g[0], gd), ok);
        }
    }
    chk.finish();
}

/// rcp.approx.ftz.f64 and rsqrt.approx(.ftz).f64, ex2/tanh .approx on f16/bf16 (scalar and
/// x2), within the documented bounds; every f16 and bf16 bit pattern for the 16-bit forms.
#[test]
fn approx_f64_and_half() {
    let mut chk = Checker::new("f64 and f16/bf16 .approx");
    let v: Vec<u64> = ptx_ref::floats64(3000, 5);
    let cases: Vec<Vec<u64>> = v.iter().map(|&x| vec![x]).collect();
    let ops = vec![
        Op::ins("f64", "rcp.approx.ftz.f64 $d, $a;"),
        Op::ins("f64", "rsqrt.approx.f64 $d, $a;"),
        Op::ins("f64", "rsqrt.approx.ftz.f64 $d, $a;"),
    ];
    let got = run(&["f64"], &ops, &cases);
    for (k, op) in ops.iter().enumerate() {
        for (c, g) in cases.iter().zip(&got[k]) {
            let x = d(c[0]);
            let ftz = op.name.contains("ftz");
            let xf = if ftz && x.is_subnormal() {
                0.0f64.copysign(x)
            } else {
                x
            };
            let exact = if k == 0 { 1.0 / xf } else { 1.0 / xf.sqrt() };
            let gv = d(g[0]);
            // The .ftz.f64 forms work on the upper word (1.11.20 format); rsqrt's low word is 0.
            let tol = if ftz { 2f64.powi(-19) } else { 2f64.powi(-50) };
            let ok = if exact.is_nan() {
                gv.is_nan()
            } else if exact.is_infinite() || exact == 0.0 {
                gv == exact && gv.is_sign_negative() == exact.is_sign_negative()
            } else if ftz && exact.abs() < f64::MIN_POSITIVE {
                gv == 0.0 || (gv - exact).abs() <= tol * exact.abs()
            } else if ftz && exact.abs() > f64::MAX / 2.0 {
                gv.is_infinite() || (gv - exact).abs() <= tol * exact.abs()
            } else {
                (gv - exact).abs() <= tol * exact.abs()
            };
            let ok = ok && !(k == 2 && !gv.is_nan() && g[0] & 0xffff_ffff != 0);
            chk.check_text(
                &op.name,
                c,
                &format!("{exact:e} (rel {tol:e})"),
                &format!("{:#x} ({gv:e})", g[0]),
                ok,
            );
        }
    }
    for bf in [false, true] {
        let ty = if bf { "bf16" } else { "f16" };
        let x2 = if bf { "bf16x2" } else { "f16x2" };
        let fz = if bf { ".ftz" } else { "" };
        let ops = vec![
            Op::ins(ty, format!("ex2.approx{fz}.{ty} $d, $a;")),
            Op::ins(x2, format!("ex2.approx{fz}.{x2} $d, $b;")),
            Op::ins(ty, format!("tanh.approx.{ty} $d, $a;")),
            Op::ins(x2, format!("tanh.approx.{x2} $d, $b;")),
        ];
        let cases: Vec<Vec<u64>> = (0..0x1_0000u64)
            .map(|h| vec![h, h | ((h * 40503) & 0xffff) << 16])
            .collect();
        let got = run(&[ty, "b32"], &ops, &cases);
        for (k, op) in ops.iter().enumerate() {
            let ex2 = k < 2;
            let check = |h: u64, g: u64| -> (bool, String) {
                let x = hval(h, bf);
                let x = if ex2 && bf { hflush(x, true) } else { x };
                let exact = if ex2 { x.exp2() } else { x.tanh() };
                let gv = hval(g, bf);
                let w = ref_to_half(exact, bf, "rn");
                let wv = half_to_f64(w, bf);
                let ok = if exact.is_nan() {
                    gv.is_nan()
                } else if wv.is_infinite() || x.is_infinite() || x == 0.0 {
                    // Corner cases: ±inf, ±0 (tanh keeps the sign; ex2(±0) = 1).
                    gv == wv && gv.is_sign_negative() == wv.is_sign_negative()
                } else if ex2 {
                    let rel = if bf { 2f64.powi(-7) } else { 2f64.powf(-9.9) };
                    let tiny = if bf { 0.0 } else { 2f64.powi(-24) };
                    (gv - exact).abs() <= rel * exact.abs() + tiny
                        || (bf && wv.abs() < 2f64.powi(-126) && gv == 0.0)
                } else {
                    let abs = if bf {
                        2f64.powi(-8)
                    } else {
                        2f64.powf(-10.987)
                    };
                    (gv - exact).abs() <= abs
                };
                (ok, format!("{exact:e}"))
            };
            for (c, g) in cases.iter().zip(&got[k]) {
                if k % 2 == 0 {
                    let (ok, w) = check(c[0], g[0]);
                    chk.check_text(&op.name, c, &w, &format!("{:#x}", g[0]), ok);
                } else {
                    let (ok0, w0) = check(c[1] & 0xffff, g[0] & 0xffff);
                    let (ok1, w1) = check(c[1] >> 16, g[0] >> 16);
                    chk.check_text(
                        &op.name,
                        c,
                        &format!("{{{w0}, {w1}}}"),
                        &format!("{:#x}", g[0]),
                        ok0 && ok1,
                    );
                }
            }
        }
    }
    chk.finish();
}

/// The runtime's directed-rounding helpers (`ptx2llvm_nvvm_{add,mul,fma,div,rcp,sqrt}_{rz,rm,rp}
/// {,_ftz}_{f,d}` for `llvm.nvvm.*` calls, and `ptx2llvm_rt_*_f64` for the default lowering),
/// called directly on every pair of the value sets.
#[test]
fn runtime_rounding_helpers() {
    use ptx2llvm::runtime::nvvm as n;
    let mut chk = Checker::new("runtime directed-rounding helpers");
    type F2 = extern "C" fn(f32, f32) -> f32;
    type F3 = extern "C" fn(f32, f32, f32) -> f32;
    type D2 = extern "C" fn(f64, f64) -> f64;
    type D3 = extern "C" fn(f64, f64, f64) -> f64;
    type F1 = extern "C" fn(f32) -> f32;
    // (rounding, ftz, add, mul, fma, div, rcp, sqrt)
    type F32Row = (&'static str, bool, F2, F2, F3, F2, F1, F1);
    let f32s: [F32Row; 6] = [
        (
            "rz",
            false,
            n::rz_f::add,
            n::rz_f::mul,
            n::rz_f::fma,
            n::rz_f::div,
            n::rz_f::rcp,
            n::rz_f::sqrt,
        ),
        (
            "rm",
            false,
            n::rm_f::add,
            n::rm_f::mul,
            n::rm_f::fma,
            n::rm_f::div,
            n::rm_f::rcp,
            n::rm_f::sqrt,
        ),
        (
            "rp",
            false,
            n::rp_f::add,
            n::rp_f::mul,
            n::rp_f::fma,
            n::rp_f::div,
            n::rp_f::rcp,
            n::rp_f::sqrt,
        ),
        (
            "rz",
            true,
            n::rz_ftz_f::add,
            n::rz_ftz_f::mul,
            n::rz_ftz_f::fma,
            n::rz_ftz_f::div,
            n::rz_ftz_f::rcp,
            n::rz_ftz_f::sqrt,
        ),
        (
            "rm",
            true,
            n::rm_ftz_f::add,
            n::rm_ftz_f::mul,
            n::rm_ftz_f::fma,
            n::rm_ftz_f::div,
            n::rm_ftz_f::rcp,
            n::rm_ftz_f::sqrt,
        ),
        (
            "rp",
            true,
            n::rp_ftz_f::add,
            n::rp_ftz_f::mul,
            n::rp_ftz_f::fma,
            n::rp_ftz_f::div,
            n::rp_ftz_f::rcp,
            n::rp_ftz_f::sqrt,
        ),
    ];
    let v = vals32(80, 3);
    for (r, ftz, add, mul, fma, div, rcp, sqrt) in f32s {
        let fz = if ftz { "_ftz" } else { "" };
        for (i, &a) in v.iter().enumerate() {
            for (j, &b) in v.iter().enumerate() {
                let c = v[(i * 31 + j * 7) % v.len()];
                let (x, y, z) = (f(a), f(b), f(c));
                for (name, got, op) in [
                    ("add", add(x, y), "add"),
                    ("mul", mul(x, y), "mul"),
                    ("fma", fma(x, y, z), "fma"),
                    ("div", div(x, y), "div"),
                    ("rcp", rcp(x), "rcp"),
                    ("sqrt", sqrt(x), "sqrt"),
                ] {
                    let want = ref_f32(op, r, ftz, false, a, b, c);
                    chk.check(
                        &format!("ptx2llvm_nvvm_{name}_{r}{fz}_f"),
                        &[a, b, c],
                        want,
                        got.to_bits() as u64,
                        same_float("f32", want, got.to_bits() as u64),
                    );
                }
            }
        }
    }
    type D1 = extern "C" fn(f64) -> f64;
    // (rounding, add, mul, fma, div, rcp, sqrt)
    type F64Row = (&'static str, D2, D2, D3, D2, D1, D1);
    let f64s: [F64Row; 3] = [
        (
            "rz",
            n::rz_d::add,
            n::rz_d::mul,
            n::rz_d::fma,
            n::rz_d::div,
            n::rz_d::rcp,
            n::rz_d::sqrt,
        ),
        (
            "rm",
            n::rm_d::add,
            n::rm_d::mul,
            n::rm_d::fma,
            n::rm_d::div,
            n::rm_d::rcp,
            n::rm_d::sqrt,
        ),
        (
            "rp",
            n::rp_d::add,
            n::rp_d::mul,
            n::rp_d::fma,
            n::rp_d::div,
            n::rp_d::rcp,
            n::rp_d::sqrt,
        ),
    ];
    let v: Vec<u64> = ptx_ref::floats64(80, 9);
    for (r, add, mul, fma, div, rcp, sqrt) in f64s {
        for (i, &a) in v.iter().enumerate() {
            for (j, &b) in v.iter().enumerate() {
                let c = v[(i * 31 + j * 7) % v.len()];
                let (x, y, z) = (d(a), d(b), d(c));
                for (name, got) in [
                    ("add", add(x, y)),
                    ("mul", mul(x, y)),
                    ("fma", fma(x, y, z)),
                    ("div", div(x, y)),
                    ("rcp", rcp(x)),
                    ("sqrt", sqrt(x)),
                ] {
                    let want = ref_f64(name, r, a, b, c);
                    chk.check(
                        &format!("ptx2llvm_nvvm_{name}_{r}_d"),
                        &[a, b, c],
                        want,
                        got.to_bits(),
                        same_float("f64", want, got.to_bits()),
                    );
                }
            }
        }
    }
    chk.finish();
}

/// Packed .f32x2 add/sub/mul/fma (element 0 in the low word) with every rounding and .ftz.
#[test]
fn f32x2_arithmetic() {
    let mut chk = Checker::new("f32x2 arithmetic");
    let v = vals32(70, 19);
    let cases: Vec<Vec<u64>> = pairs_of(&v, |i, j| v[(i * 13 + j * 5) % v.len()])
        .into_iter()
        .map(|c| vec![c[0] | c[1] << 32, c[1] | c[0] << 32, c[2] | c[2] << 32])
        .collect();
    let mut ops = Vec::new();
    let mut meta = Vec::new();
    for op in ["add", "sub", "mul", "fma"] {
        for r in ["rn", "rz", "rm", "rp"] {
            for ftz in ["", ".ftz"] {
                let args = if op == "fma" {
                    "$d, $a, $b, $c"
                } else {
                    "$d, $a, $b"
                };
                ops.push(Op::ins("b64", format!("{op}.{r}{ftz}.f32x2 {args};")));
                meta.push((op, r, !ftz.is_empty()));
            }
        }
    }
    let got = run(&["b64", "b64", "b64"], &ops, &cases);
    for (k, op) in ops.iter().enumerate() {
        let (o, r, ftz) = meta[k];
        chk.table(
            op,
            &cases,
            &got[k],
            |c| {
                let lane = |i: u32| {
                    ref_f32(
                        o,
                        r,
                        ftz,
                        false,
                        c[0] >> (32 * i) & 0xffff_ffff,
                        c[1] >> (32 * i) & 0xffff_ffff,
                        c[2] >> (32 * i) & 0xffff_ffff,
                    )
                };
                vec![lane(0) | lane(1) << 32]
            },
            |_t, w, g| {
                same_float("f32", w & 0xffff_ffff, g & 0xffff_ffff)
                    && same_float("f32", w >> 32, g >> 32)
            },
        );
    }
    chk.finish();
}

/// set.CmpOp{.BoolOp}{.ftz}.dtype.stype: 1.0f (float destination) or 0xffffffff (integer
/// destination) when the comparison (combined with c) holds, else 0; f32, f64 and s32/u32
/// sources.
#[test]
fn set_every_comparison() {
    let mut chk = Checker::new("set");
    for st in ["f32", "f64", "s32", "u32"] {
        let v: Vec<u64> = match st {
            "f32" => vals32(60, 41),
            "f64" => ptx_ref::floats64(60, 43),
            _ => vec![
                0,
                1,
                2,
                0x7fff_ffff,
                0x8000_0000,
                0x8000_0001,
                0xffff_ffff,
                0xffff_fffe,
                5,
                0x1234_5678,
                0xdead_beef,
            ],
        };
        let cases: Vec<Vec<u64>> = pairs_of(&v, |i, j| ((i + 2 * j) % 3 == 0) as u64);
        let cmps: Vec<&str> = match st {
            "s32" => vec!["eq", "ne", "lt", "le", "gt", "ge"],
            "u32" => vec!["eq", "ne", "lo", "ls", "hi", "hs"],
            _ => FCMPS.to_vec(),
        };
        let mut ops = Vec::new();
        let mut meta = Vec::new();
        for dt in ["u32", "s32", "f32"] {
            for cm in &cmps {
                let fzs: &[&str] = if st == "f32" { &["", ".ftz"] } else { &[""] };
                for fz in fzs {
                    ops.push(Op::ins(
                        if dt == "f32" { "f32" } else { "b32" },
                        format!("set.{cm}{fz}.{dt}.{st} $d, $a, $b;"),
                    ));
                    meta.push((dt, *cm, "", !fz.is_empty()));
                }
            }
            for bop in ["and", "or", "xor"] {
                ops.push(Op::ins(
                    if dt == "f32" { "f32" } else { "b32" },
                    format!("set.{}.{bop}.{dt}.{st} $d, $a, $b, !$c;", cmps[2]),
                ));
                meta.push((dt, cmps[2], bop, false));
            }
        }
        let got = run(&[st, st, "pred"], &ops, &cases);
        for (k, op) in ops.iter().enumerate() {
            let (dt, cm, bop, ftz) = meta[k];
            chk.table(
                op,
                &cases,
                &got[k],
                |c| {
                    let t = match st {
                        "f32" | "f64" => {
                            let val = |b: u64| {
                                if st == "f64" {
                                    d(b)
                                } else if ftz {
                                    ftz32(f(b)) as f64
                                } else {
                                    f(b) as f64
                                }
                            };
                            fcmp(cm, val(c[0]), val(c[1]))
                        }
                        _ => {
                            let (x, y) = if st == "s32" {
                                (c[0] as u32 as i32 as i64, c[1] as u32 as i32 as i64)
                            } else {
                                (c[0] as i64, c[1] as i64)
                            };
                            match cm {
                                "eq" => x == y,
                                "ne" => x != y,
                                "lt" | "lo" => x < y,
                                "le" | "ls" => x <= y,
                                "gt" | "hi" => x > y,
                                _ => x >= y,
                            }
                        }
                    };
                    let p = c[2] == 0; // !c
                    let r = match bop {
                        "and" => t && p,
                        "or" => t || p,
                        "xor" => t ^ p,
                        _ => t,
                    };
                    vec![if !r {
                        0
                    } else if dt == "f32" {
                        0x3f80_0000
                    } else {
                        0xffff_ffff
                    }]
                },
                exact,
            );
        }
    }
    chk.finish();
}
