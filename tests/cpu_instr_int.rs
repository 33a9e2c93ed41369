//! Instruction-level tests of the cpu target, integer arithmetic: PTX kernels (one thread per
//! case, built by `tests/common/instr.rs`) run through the embedding API and are compared with
//! references written from the Semantics sections of the PTX ISA 9.2 manual
//! (`/work/shared/spec/instructions/{add,sub,mul,mad,mul24,mad24,sad,div,rem,abs,neg,min,max,
//! and,or,xor,not,cnot,shl,shr,addc,subc,madc,setp,selp,slct}.txt`).
//!
//! PTX has no 8-bit arithmetic; the 16-bit instructions run exhaustively over three sets of
//! 65,536 operand pairs: every u8×u8 pair (zero-extended), every s8×s8 pair (sign-extended), and
//! every pair of 256 16-bit edge values (0..63, MAX−63..MIN+63, −64..−1). 32/64-bit forms run
//! over every pair of boundary values (0, ±1, MIN, MAX, MIN+1, MAX−1, ±2^k, ±2^k±1) plus seeded
//! random pairs.
//!
//! Division by zero (the manual: "an unspecified, machine-specific value") is defined by the
//! lowering as the quotient with all bits set and the remainder equal to the dividend — what
//! NVIDIA GPUs give for unsigned division — and checked as such; MIN / −1 wraps to MIN with
//! remainder 0.

#[path = "common/instr.rs"]
mod instr;
#[path = "common/ptx_ref.rs"]
mod ptx_ref;

use instr::*;
use ptx_ref::Rng;

/// The value of bit pattern `v` as a `bits`-wide integer of either sign.
fn val(v: u64, bits: u32, signed: bool) -> i128 {
    let m = mask(v, bits);
    if signed {
        sext(m, bits) as i64 as i128
    } else {
        m as i128
    }
}

fn wrap(v: i128, bits: u32) -> u64 {
    mask(v as u64, bits)
}

fn clamp_to(v: i128, bits: u32, signed: bool) -> u64 {
    let (lo, hi) = if signed {
        (-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1)
    } else {
        (0, (1i128 << bits) - 1)
    };
    wrap(v.clamp(lo, hi), bits)
}

/// The full product of two `bits`-wide values (up to 128 bits, as two's complement bits).
fn product(a: u64, b: u64, bits: u32, signed: bool) -> u128 {
    if signed {
        (val(a, bits, true) * val(b, bits, true)) as u128
    } else {
        (mask(a, bits) as u128) * (mask(b, bits) as u128)
    }
}

/// Reference of the integer instruction `op` (`add`, `mul.hi`, `mad.wide`, `div`, …) on `bits`-wide
/// operands; `c` is the addend (2·bits wide for `.wide`). Returns the result bits.
fn ref_int(op: &str, bits: u32, signed: bool, a: u64, b: u64, c: u64) -> u64 {
    let (x, y) = (val(a, bits, signed), val(b, bits, signed));
    let n = bits;
    match op {
        "add" => wrap(x + y, n),
        "sub" => wrap(x - y, n),
        "add.sat" => clamp_to(x + y, n, true),
        "sub.sat" => clamp_to(x - y, n, true),
        "mul.lo" => wrap(product(a, b, n, signed) as i128, n),
        "mul.hi" => mask((product(a, b, n, signed) >> n) as u64, n),
        "mul.wide" => mask(product(a, b, n, signed) as u64, 2 * n),
        "mad.lo" => wrap(
            (product(a, b, n, signed) as i128).wrapping_add(c as i128),
            n,
        ),
        "mad.hi" => mask(((product(a, b, n, signed) >> n) as u64).wrapping_add(c), n),
        "mad.wide" => mask((product(a, b, n, signed) as u64).wrapping_add(c), 2 * n),
        "mad.hi.sat" => {
            let hi = val((product(a, b, n, true) >> n) as u64, n, true);
            clamp_to(hi + val(c, n, true), n, true)
        }
        "div" => {
            if y == 0 {
                mask(u64::MAX, n)
            } else {
                wrap(x / y, n)
            }
        }
        "rem" => {
            if y == 0 {
                mask(a, n)
            } else {
                wrap(x % y, n)
            }
        }
        "min" => wrap(x.min(y), n),
        "max" => wrap(x.max(y), n),
        "min.relu" => wrap(x.min(y).max(0), n),
        "max.relu" => wrap(x.max(y).max(0), n),
        "abs" => wrap(x.abs(), n),
        "neg" => wrap(-x, n),
        "sad" => wrap(val(c, n, signed) + (x - y).abs(), n),
        "and" => mask(a & b, n),
        "or" => mask(a | b, n),
        "xor" => mask(a ^ b, n),
        "not" => mask(!a, n),
        "cnot" => (mask(a, n) == 0) as u64,
        _ => panic!("ref_int: {op}"),
    }
}

/// Boundary values of a `bits`-wide integer: 0, ±1, ±2, MIN, MAX, MIN+1, MAX−1, ±2^k, ±2^k±1.
fn edges(bits: u32) -> Vec<u64> {
    let m = mask(u64::MAX, bits);
    let min = 1u64 << (bits - 1);
    let mut v = vec![0, 1, 2, 3, m, m - 1, min, min + 1, min - 1, min - 2];
    for k in 0..bits {
        let p = 1u64 << k;
        for x in [
            p,
            p + 1,
            p - 1,
            p.wrapping_neg(),
            p.wrapping_neg().wrapping_add(1),
            p.wrapping_neg().wrapping_sub(1),
        ] {
            v.push(x & m);
        }
    }
    let mut seen = std::collections::HashSet::new();
    v.retain(|x| seen.insert(*x));
    v
}

/// The 16-bit operand pairs: every u8×u8, every s8×s8 (sign-extended), every pair of 256 edges.
fn pairs16() -> Vec<(u64, u64)> {
    let mut e: Vec<u64> = (0..64).collect();
    e.extend(0x7fc0..0x8040);
    e.extend(0xffc0..0x10000);
    assert_eq!(e.len(), 256);
    let mut v = Vec::with_capacity(3 * 65536);
    for a in 0..256u64 {
        for b in 0..256u64 {
            v.push((a, b));
            v.push((sext(a, 8) & 0xffff, sext(b, 8) & 0xffff));
            v.push((e[a as usize], e[b as usize]));
        }
    }
    v
}

/// Every pair of boundary values plus `extra` seeded random pairs.
fn pairs_wide(bits: u32, extra: usize, seed: u64) -> Vec<(u64, u64)> {
    let e = edges(bits);
    let mut v = Vec::new();
    for &a in &e {
        for &b in &e {
            v.push((a, b));
        }
    }
    let mut r = Rng::new(seed);
    for i in 0..extra {
        let (a, b) = (r.u64(), r.u64());
        // Mix in narrow magnitudes so that products, quotients and carries vary.
        let sh = (i % 4) as u32 * bits / 4;
        v.push((
            mask(a >> sh, bits),
            mask(b >> ((i as u32 * 7) % bits), bits),
        ));
    }
    v
}

/// The `.bN` type name of `bits` bits, as the `'static` name `Op` keeps.
fn bits_type(bits: u32) -> &'static str {
    match bits {
        8 => "b8",
        16 => "b16",
        32 => "b32",
        64 => "b64",
        128 => "b128",
        _ => panic!("no .b{bits} type"),
    }
}

fn tname(signed: bool, bits: u32) -> String {
    format!("{}{bits}", if signed { "s" } else { "u" })
}

/// Runs the arithmetic family on `bits`-wide operands over `pairs`; `c` operands are derived
/// from the pair (a rotation of the list).
fn arith(chk: &mut Checker, bits: u32, pairs: &[(u64, u64)]) {
    let bt = bits_type(bits);
    let mut ops: Vec<(Op, &str, bool)> = Vec::new();
    for signed in [false, true] {
        let t = tname(signed, bits);
        let mut names: Vec<&str> = vec![
            "add", "sub", "mul.lo", "mul.hi", "mad.lo", "mad.hi", "div", "rem", "min", "max", "sad",
        ];
        if bits < 64 {
            names.extend(["mul.wide", "mad.wide"]);
        }
        if signed {
            names.extend(["abs", "neg"]);
            if bits == 32 {
                names.extend(["add.sat", "sub.sat", "mad.hi.sat", "min.relu", "max.relu"]);
            }
        }
        for n in names {
            let out = if n.ends_with("wide") {
                bits_type(2 * bits)
            } else {
                bt
            };
            let args = match n {
                "abs" | "neg" => "$d, $a",
                "sad" | "mad.lo" | "mad.hi" | "mad.hi.sat" => "$d, $a, $b, $c",
                "mad.wide" => "$d, $a, $b, $e",
                _ => "$d, $a, $b",
            };
            let ptx_op = match n {
                "add.sat" => "add.sat".to_string(),
                "sub.sat" => "sub.sat".to_string(),
                _ => n.to_string(),
            };
            ops.push((Op::ins(out, format!("{ptx_op}.{t} {args};")), n, signed));
        }
    }
    for n in ["and", "or", "xor", "not", "cnot"] {
        let args = if n == "not" || n == "cnot" {
            "$d, $a"
        } else {
            "$d, $a, $b"
        };
        ops.push((Op::ins(bt, format!("{n}.b{bits} {args};")), n, false));
    }
    let mut inputs: Vec<&str> = vec![bt, bt, bt];
    if bits < 64 {
        inputs.push(bits_type(2 * bits));
    }
    let mut r = Rng::new(bits as u64);
    let cases: Vec<Vec<u64>> = pairs
        .iter()
        .enumerate()
        .map(|(i, &(a, b))| {
            let (c0, c1) = pairs[(i * 7 + 3) % pairs.len()];
            let c = if i % 3 == 0 {
                mask(r.u64(), bits)
            } else {
                c0 ^ c1
            };
            let mut v = vec![a, b, c];
            if bits < 64 {
                v.push(mask(c | (r.u64() << bits), 2 * bits));
            }
            v
        })
        .collect();
    let plain: Vec<Op> = ops.iter().map(|o| o.0.clone()).collect();
    let got = run(&inputs, &plain, &cases);
    for (k, (op, n, signed)) in ops.iter().enumerate() {
        let wide = n.ends_with("wide");
        chk.table(
            op,
            &cases,
            &got[k],
            |c| {
                vec![ref_int(
                    n,
                    bits,
                    *signed,
                    c[0],
                    c[1],
                    if wide { c[3] } else { c[2] },
                )]
            },
            exact,
        );
    }
}

#[test]
fn int16_exhaustive_pairs() {
    let mut chk = Checker::new("16-bit integer arithmetic (exhaustive pair sets)");
    arith(&mut chk, 16, &pairs16());
    chk.finish();
}

#[test]
fn int32_boundaries_and_random() {
    let mut chk = Checker::new("32-bit integer arithmetic");
    arith(&mut chk, 32, &pairs_wide(32, 40_000, 1));
    chk.finish();
}

#[test]
fn int64_boundaries_and_random() {
    let mut chk = Checker::new("64-bit integer arithmetic");
    arith(&mut chk, 64, &pairs_wide(64, 40_000, 2));
    chk.finish();
}

/// shl/shr with every amount 0..=40 and larger ones (the manual: amounts greater than the
/// register width N are clamped to N; `b` is an unsigned 32-bit value).
#[test]
fn shifts_every_amount() {
    let mut chk = Checker::new("shl/shr");
    let mut amounts: Vec<u64> = (0..=40).collect();
    amounts.extend([
        47,
        48,
        63,
        64,
        65,
        100,
        127,
        128,
        255,
        256,
        0x7fff_ffff,
        0x8000_0000,
        0xffff_ffff,
    ]);
    for bits in [16u32, 32, 64] {
        let bt = bits_type(bits);
        let mut vals = edges(bits);
        let mut r = Rng::new(5 + bits as u64);
        for _ in 0..64 {
            vals.push(mask(r.u64(), bits));
        }
        let ops = vec![
            Op::ins(bt, format!("shl.b{bits} $d, $a, $b;")),
            Op::ins(bt, format!("shr.b{bits} $d, $a, $b;")),
            Op::ins(bt, format!("shr.u{bits} $d, $a, $b;")),
            Op::ins(bt, format!("shr.s{bits} $d, $a, $b;")),
        ];
        let cases: Vec<Vec<u64>> = vals
            .iter()
            .flat_map(|&a| amounts.iter().map(move |&s| vec![a, s]))
            .collect();
        let got = run(&[bt, "u32"], &ops, &cases);
        for (k, op) in ops.iter().enumerate() {
            chk.table(
                op,
                &cases,
                &got[k],
                |c| {
                    let (a, s) = (c[0], c[1].min(bits as u64) as u32);
                    vec![match k {
                        0 => {
                            if s >= bits {
                                0
                            } else {
                                mask(a << s, bits)
                            }
                        }
                        1 | 2 => {
                            if s >= bits {
                                0
                            } else {
                                mask(a, bits) >> s
                            }
                        }
                        _ => mask((sext(a, bits) as i64 >> s.min(63)) as u64, bits),
                    }]
                },
                exact,
            );
        }
    }
    chk.finish();
}

/// add.u16x2/.s16x2, min/max on packed halves (with .relu for .s16x2), min/max.relu.s32.
#[test]
fn packed_16x2() {
    let mut chk = Checker::new("packed 16x2 arithmetic");
    let ops = vec![
        Op::ins("b32", "add.u16x2 $d, $a, $b;"),
        Op::ins("b32", "add.s16x2 $d, $a, $b;"),
        Op::ins("b32", "min.u16x2 $d, $a, $b;"),
        Op::ins("b32", "max.u16x2 $d, $a, $b;"),
        Op::ins("b32", "min.s16x2 $d, $a, $b;"),
        Op::ins("b32", "max.s16x2 $d, $a, $b;"),
        Op::ins("b32", "min.relu.s16x2 $d, $a, $b;"),
        Op::ins("b32", "max.relu.s16x2 $d, $a, $b;"),
    ];
    // Lane 0 from the 16-bit edge pairs, lane 1 from the same list shifted.
    let p = pairs16();
    let cases: Vec<Vec<u64>> = (0..p.len())
        .step_by(3)
        .map(|i| {
            let (a0, b0) = p[i];
            let (a1, b1) = p[(i * 13 + 5) % p.len()];
            vec![a0 | (a1 << 16), b0 | (b1 << 16)]
        })
        .collect();
    let got = run(&["b32", "b32"], &ops, &cases);
    let names = [
        "add", "add", "min", "max", "min", "max", "min.relu", "max.relu",
    ];
    for (k, op) in ops.iter().enumerate() {
        let signed = k == 1 || k >= 4;
        chk.table(
            op,
            &cases,
            &got[k],
            |c| {
                let lane =
                    |i: u32| ref_int(names[k], 16, signed, c[0] >> (16 * i), c[1] >> (16 * i), 0);
                vec![lane(0) | (lane(1) << 16)]
            },
            exact,
        );
    }
    chk.finish();
}

/// mul24/mad24 (.lo/.hi, .u32/.s32, mad24.hi.sat.s32): the low 24 bits of each operand
/// (sign-extended for .s32) form a 48-bit product; .hi is bits 47..16, .lo bits 31..0.
#[test]
fn mul24_mad24() {
    let mut chk = Checker::new("mul24/mad24");
    let mut ops = Vec::new();
    for t in ["u32", "s32"] {
        for m in ["lo", "hi"] {
            ops.push(Op::ins("b32", format!("mul24.{m}.{t} $d, $a, $b;")));
            ops.push(Op::ins("b32", format!("mad24.{m}.{t} $d, $a, $b, $c;")));
        }
    }
    ops.push(Op::ins("b32", "mad24.hi.sat.s32 $d, $a, $b, $c;"));
    let mut e = edges(24);
    e.extend(edges(32));
    let mut r = Rng::new(24);
    let mut cases = Vec::new();
    for &a in &e {
        for &b in &e {
            cases.push(vec![a, b, mask(r.u64(), 32)]);
        }
    }
    for _ in 0..20_000 {
        cases.push(vec![
            mask(r.u64(), 32),
            mask(r.u64(), 32),
            if r.u32() & 1 == 0 {
                0x7fff_fff0 + (r.u32() as u64 & 31)
            } else {
                mask(r.u64(), 32)
            },
        ]);
    }
    let got = run(&["b32", "b32", "b32"], &ops, &cases);
    for (k, op) in ops.iter().enumerate() {
        let signed = op.name.contains(".s32");
        let hi = op.name.contains(".hi");
        let mad = op.name.starts_with("mad24");
        let sat = op.name.contains(".sat");
        chk.table(
            op,
            &cases,
            &got[k],
            |c| {
                let x24 = |v: u64| {
                    if signed {
                        sext(v & 0xff_ffff, 24) as i64 as i128
                    } else {
                        (v & 0xff_ffff) as i128
                    }
                };
                let t = x24(c[0]) * x24(c[1]);
                let part = if hi { (t >> 16) as u64 } else { t as u64 } & 0xffff_ffff;
                vec![if !mad {
                    part
                } else if sat {
                    clamp_to(val(part, 32, true) + val(c[2], 32, true), 32, true)
                } else {
                    mask(part.wrapping_add(c[2]), 32)
                }]
            },
            exact,
        );
    }
    chk.finish();
}

/// 128-bit addition and subtraction of four 32-bit words with add.cc/addc.cc/addc and
/// sub.cc/subc.cc/subc (the carry/borrow out of the top word collected with addc/subc on zeros),
/// the same with two 64-bit words, and a 64×64→128-bit product of 32-bit limbs with
/// mul/mad.lo.cc/madc.hi(.cc)/addc, against u128 arithmetic.
#[test]
fn carry_chains_128_bit() {
    let mut chk = Checker::new("addc/subc/madc chains");
    let w = ["b32", "b32", "b32", "b32"];
    let add32 = Op::multi("add.cc/addc.cc/addc.u32 (128-bit add)", &["b32", "b32", "b32", "b32", "b32"],
        "add.cc.u32 $d, $a, $e;\n\taddc.cc.u32 $d1, $b, $f;\n\taddc.cc.u32 $d2, $c, $g;\n\taddc.cc.u32 $d3, $h, $i;\n\taddc.u32 $d4, 0, 0;");
    let sub32 = Op::multi("sub.cc/subc.cc/subc.u32 (128-bit sub)", &["b32", "b32", "b32", "b32", "b32"],
        "sub.cc.u32 $d, $a, $e;\n\tsubc.cc.s32 $d1, $b, $f;\n\tsubc.cc.u32 $d2, $c, $g;\n\tsubc.cc.s32 $d3, $h, $i;\n\tsubc.u32 $d4, 0, 0;");
    let mul = Op::multi("mul.lo/mul.hi/mad.lo.cc/madc.hi(.cc)/addc.u32 (64x64->128 multiply)", &["b32", "b32", "b32", "b32"],
        "mul.lo.u32 $d, $a, $e;\n\tmul.hi.u32 $d1, $a, $e;\n\tmad.lo.cc.u32 $d1, $a, $f, $d1;\n\tmadc.hi.u32 $d2, $a, $f, 0;\n\
         \tmad.lo.cc.u32 $d1, $b, $e, $d1;\n\tmadc.hi.cc.u32 $d2, $b, $e, $d2;\n\taddc.u32 $d3, 0, 0;\n\
         \tmad.lo.cc.u32 $d2, $b, $f, $d2;\n\tmadc.hi.u32 $d3, $b, $f, $d3;");
    let _ = w;
    let ops = vec![add32, sub32, mul];
    let mut r = Rng::new(128);
    let e = edges(32);
    let mut nums: Vec<u128> = vec![
        0,
        1,
        u128::MAX,
        u128::MAX - 1,
        1 << 127,
        (1 << 127) - 1,
        u64::MAX as u128,
        (u64::MAX as u128) + 1,
        0xffff_ffff,
        0x1_0000_0000,
        0xffff_ffff_ffff_ffff_ffff_ffff,
    ];
    for _ in 0..300 {
        // Words drawn from the 32-bit boundary values make carries ripple.
        let wv: Vec<u128> = (0..4)
            .map(|_| e[(r.u32() as usize) % e.len()] as u128)
            .collect();
        nums.push(wv[0] | wv[1] << 32 | wv[2] << 64 | wv[3] << 96);
        nums.push((r.u64() as u128) << 64 | r.u64() as u128);
    }
    let mut pairs = Vec::new();
    for (i, &a) in nums.iter().enumerate() {
        for (j, &b) in nums.iter().enumerate() {
            if (i * 31 + j * 17) % 5 == 0 || i < 11 || j < 11 {
                pairs.push((a, b));
            }
        }
    }
    let words = |x: u128| (0..4).map(move |k| (x >> (32 * k)) as u32 as u64);
    let cases: Vec<Vec<u64>> = pairs
        .iter()
        .map(|&(a, b)| {
            let wa: Vec<u64> = words(a).collect();
            let wb: Vec<u64> = words(b).collect();
            // Operand order: a0 a1 a2 | b0 b1 b2 | a3 b3 (the harness's six, then $h, $i).
            vec![wa[0], wa[1], wa[2], wb[0], wb[1], wb[2], wa[3], wb[3]]
        })
        .collect();
    let got = run(&["b32"; 8], &ops, &cases);
    for (k, op) in ops.iter().enumerate() {
        for (c, g) in cases.iter().zip(&got[k]) {
            let a =
                c[0] as u128 | (c[1] as u128) << 32 | (c[2] as u128) << 64 | (c[6] as u128) << 96;
            let b =
                c[3] as u128 | (c[4] as u128) << 32 | (c[5] as u128) << 64 | (c[7] as u128) << 96;
            let (want, extra): (u128, Option<u64>) = match k {
                0 => {
                    let (s, o) = a.overflowing_add(b);
                    (s, Some(o as u64))
                }
                1 => {
                    let (s, o) = a.overflowing_sub(b);
                    (s, Some(if o { 0xffff_ffff } else { 0 }))
                }
                _ => ((a as u64 as u128) * (b as u64 as u128), None),
            };
            let gotv =
                g[0] as u128 | (g[1] as u128) << 32 | (g[2] as u128) << 64 | (g[3] as u128) << 96;
            let ins = [a as u64, (a >> 64) as u64, b as u64, (b >> 64) as u64];
            chk.check_text(
                &op.name,
                &ins,
                &format!("{want:#x}"),
                &format!("{gotv:#x}"),
                gotv == want,
            );
            if let Some(x) = extra {
                chk.check(
                    &format!("{} carry/borrow out", op.name),
                    &ins,
                    x,
                    g[4],
                    g[4] == x,
                );
            }
        }
    }
    // 64-bit words: add.cc.u64/addc.u64 and sub.cc.s64/subc.u64 on two words.
    let ops64 = vec![
        Op::multi(
            "add.cc/addc.cc/addc.u64 (128-bit add)",
            &["b64", "b64", "b64"],
            "add.cc.u64 $d, $a, $c;\n\taddc.cc.s64 $d1, $b, $e;\n\taddc.u64 $d2, 0, 0;",
        ),
        Op::multi(
            "sub.cc/subc.cc/subc.u64 (128-bit sub)",
            &["b64", "b64", "b64"],
            "sub.cc.s64 $d, $a, $c;\n\tsubc.cc.u64 $d1, $b, $e;\n\tsubc.u64 $d2, 0, 0;",
        ),
    ];
    let cases: Vec<Vec<u64>> = pairs
        .iter()
        .map(|&(a, b)| vec![a as u64, (a >> 64) as u64, b as u64, (b >> 64) as u64])
        .collect();
    let got = run(&["b64", "b64", "b64", "b64"], &ops64, &cases);
    for (k, op) in ops64.iter().enumerate() {
        for (c, g) in cases.iter().zip(&got[k]) {
            let a = c[0] as u128 | (c[1] as u128) << 64;
            let b = c[2] as u128 | (c[3] as u128) << 64;
            let (want, o) = if k == 0 {
                a.overflowing_add(b)
            } else {
                a.overflowing_sub(b)
            };
            let gotv = g[0] as u128 | (g[1] as u128) << 64;
            chk.check_text(
                &op.name,
                c,
                &format!("{want:#x}"),
                &format!("{gotv:#x}"),
                gotv == want,
            );
            let x = if !o {
                0
            } else if k == 0 {
                1
            } else {
                u64::MAX
            };
            chk.check(
                &format!("{} carry/borrow out", op.name),
                c,
                x,
                g[2],
                g[2] == x,
            );
        }
    }
    chk.finish();
}

/// setp with every integer comparison (and the BoolOp forms with a negated predicate and the
/// p|q pair), selp of every integer type, slct.s32 / slct.f32 on integer data.
#[test]
fn setp_selp_slct_int() {
    let mut chk = Checker::new("setp/selp/slct (integer)");
    for bits in [16u32, 32, 64] {
        let bt = bits_type(bits);
        let mut ops = Vec::new();
        let mut meta = Vec::new();
        for (t, cmps) in [
            ("s", &["eq", "ne", "lt", "le", "gt", "ge"][..]),
            (
                "u",
                &["eq", "ne", "lo", "ls", "hi", "hs", "lt", "le", "gt", "ge"][..],
            ),
            ("b", &["eq", "ne"][..]),
        ] {
            for c in cmps {
                ops.push(Op::ins("pred", format!("setp.{c}.{t}{bits} $d, $a, $b;")));
                meta.push((t, *c, ""));
            }
        }
        for bop in ["and", "or", "xor"] {
            ops.push(Op::ins(
                "pred",
                format!("setp.lt.{bop}.s{bits} $d, $a, $b, $c;"),
            ));
            meta.push(("s", "lt", bop));
            ops.push(Op::ins(
                "pred",
                format!("setp.hi.{bop}.u{bits} $d, $a, $b, !$c;"),
            ));
            meta.push(("u", "hi", bop));
        }
        let nsetp = ops.len();
        ops.push(Op::multi(
            format!("setp.ge.s{bits} p|q"),
            &["pred", "pred"],
            format!("setp.ge.s{bits} $d|$d1, $a, $b;"),
        ));
        ops.push(Op::multi(
            format!("setp.ls.or.u{bits} p|q, !c"),
            &["pred", "pred"],
            format!("setp.ls.or.u{bits} $d|$d1, $a, $b, !$c;"),
        ));
        for t in ["b", "u", "s"] {
            ops.push(Op::ins(bt, format!("selp.{t}{bits} $d, $a, $b, $c;")));
        }
        let pairs = if bits == 16 {
            pairs16().into_iter().step_by(7).collect()
        } else {
            pairs_wide(bits, 5000, 77 + bits as u64)
        };
        let cases: Vec<Vec<u64>> = pairs
            .iter()
            .enumerate()
            .map(|(i, &(a, b))| vec![a, b, ((i as u64 * 0x9e37_79b9) >> 7) & 1])
            .collect();
        let got = run(&[bt, bt, "pred"], &ops, &cases);
        let cmp = |t: &str, c: &str, a: u64, b: u64| -> bool {
            let (x, y) = (val(a, bits, t == "s"), val(b, bits, t == "s"));
            let (ux, uy) = (mask(a, bits), mask(b, bits));
            match c {
                "eq" => x == y,
                "ne" => x != y,
                "lt" => x < y,
                "le" => x <= y,
                "gt" => x > y,
                "ge" => x >= y,
                "lo" => ux < uy,
                "ls" => ux <= uy,
                "hi" => ux > uy,
                _ => ux >= uy,
            }
        };
        let bool_op = |bop: &str, p: bool, c: bool| match bop {
            "and" => p && c,
            "or" => p || c,
            "xor" => p ^ c,
            _ => p,
        };
        for (k, op) in ops.iter().enumerate() {
            chk.table(
                op,
                &cases,
                &got[k],
                |c| {
                    let pc = c[2] != 0;
                    if k < nsetp {
                        let (t, cm, bop) = meta[k];
                        let neg = op.name.contains('!');
                        vec![
                            bool_op(bop, cmp(t, cm, c[0], c[1]), if neg { !pc } else { pc }) as u64,
                        ]
                    } else if k == nsetp {
                        let p = cmp("s", "ge", c[0], c[1]);
                        vec![p as u64, !p as u64]
                    } else if k == nsetp + 1 {
                        let p = cmp("u", "ls", c[0], c[1]);
                        vec![(p || !pc) as u64, (!p || !pc) as u64]
                    } else {
                        vec![if pc { c[0] } else { c[1] }]
                    }
                },
                exact,
            );
        }
    }
    // slct: d = (c >= 0) ? a : b, c an .s32 or an .f32 (−0.0 ≥ 0; NaN c is not ≥ 0).
    let ops = vec![
        Op::ins("b32", "slct.b32.s32 $d, $a, $b, $c;"),
        Op::ins("b64", "slct.u64.s32 $d, $e, $f, $c;"),
        Op::ins("b32", "slct.s32.f32 $d, $a, $b, $c;"),
        Op::ins("b32", "slct.ftz.u32.f32 $d, $a, $b, $c;"),
    ];
    let mut cs: Vec<u64> = edges(32);
    cs.extend(ptx_ref::floats32(200, 9).into_iter().map(|x| x as u64));
    let cases: Vec<Vec<u64>> = cs
        .iter()
        .enumerate()
        .map(|(i, &c)| {
            vec![
                0x1111_0000 + i as u64,
                0x2222_0000 + i as u64,
                c,
                0x3333_0000_0000_0000 + i as u64,
                0x4444_0000_0000_0000 + i as u64,
            ]
        })
        .collect();
    let got = run(&["b32", "b32", "b32", "b64", "b64"], &ops, &cases);
    for (k, op) in ops.iter().enumerate() {
        chk.table(
            op,
            &cases,
            &got[k],
            |c| {
                let ge = match k {
                    0 | 1 => c[2] as u32 as i32 >= 0,
                    2 => f32::from_bits(c[2] as u32) >= 0.0,
                    _ => ptx_ref::ftz32(f32::from_bits(c[2] as u32)) >= 0.0,
                };
                vec![if k == 1 {
                    if ge {
                        c[3]
                    } else {
                        c[4]
                    }
                } else if ge {
                    c[0]
                } else {
                    c[1]
                }]
            },
            exact,
        );
    }
    chk.finish();
}

/// The harness itself: a wrong reference is reported as a mismatch with the instruction, the
/// inputs, the expectation and the result.
#[test]
fn harness_reports_mismatches() {
    let op = Op::ins("b32", "add.u32 $d, $a, $b;");
    let cases = vec![vec![1, 2], vec![0xffff_ffff, 1]];
    let got = run(&["b32", "b32"], std::slice::from_ref(&op), &cases);
    let mut chk = Checker::new("self-test");
    chk.table(&op, &cases, &got[0], |c| vec![c[0] + c[1]], exact);
    let msg = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| chk.finish()))
        .expect_err("a mismatch must fail");
    let msg = msg.downcast_ref::<String>().unwrap();
    assert!(
        msg.contains(
            "add.u32 $d, $a, $b;  inputs [0xffffffff, 0x1]: expected 0x100000000, got 0x0"
        ),
        "{msg}"
    );
    assert!(msg.contains("1 mismatches"), "{msg}");
}

// ---- bit manipulation (bfe.txt, bfi.txt, prmt in the data-movement chapter, lop3.txt, shf.txt,
// ---- fns.txt, bfind/clz/popc/brev, bmsk, szext.txt, dp4a.txt, dp2a.txt) -------------------------

/// 32/64-bit test words: boundaries and random.
fn words(bits: u32, n: usize, seed: u64) -> Vec<u64> {
    let mut v = edges(bits);
    v.truncate(n / 2);
    let mut r = Rng::new(seed);
    while v.len() < n {
        v.push(mask(r.u64(), bits));
    }
    v
}

/// Shift/position/length amounts: 0..=limit and larger values (only some bits of which count).
fn amounts(limit: u64) -> Vec<u64> {
    let mut v: Vec<u64> = (0..=limit).collect();
    v.extend([
        127,
        128,
        255,
        256,
        257,
        288,
        0x1_0000,
        0x7fff_ffff,
        0x8000_0000,
        0xffff_ffff,
    ]);
    v
}

#[test]
fn bfe_bfi_every_position_and_length() {
    let mut chk = Checker::new("bfe/bfi");
    for bits in [32u32, 64] {
        let bt = bits_type(bits);
        let ops = vec![
            Op::ins(bt, format!("bfe.u{bits} $d, $a, $c, $e;")),
            Op::ins(bt, format!("bfe.s{bits} $d, $a, $c, $e;")),
            Op::ins(bt, format!("bfi.b{bits} $d, $a, $b, $c, $e;")),
        ];
        let vals = words(bits, 24, 40 + bits as u64);
        let am = amounts(bits as u64 + 6);
        let mut cases = Vec::new();
        for (i, &a) in vals.iter().enumerate() {
            let b = vals[(i * 7 + 3) % vals.len()] ^ 0x5555_5555_5555_5555 & mask(u64::MAX, bits);
            for &pos in &am {
                for &len in &am {
                    cases.push(vec![a, b, pos, len]);
                }
            }
        }
        let got = run(&[bt, bt, "b32", "b32"], &ops, &cases);
        for (k, op) in ops.iter().enumerate() {
            chk.table(
                op,
                &cases,
                &got[k],
                |c| {
                    vec![match k {
                        0 => ptx_ref::ref_bfe(c[0], c[2] as u32, c[3] as u32, bits, false),
                        1 => ptx_ref::ref_bfe(c[0], c[2] as u32, c[3] as u32, bits, true),
                        _ => ptx_ref::ref_bfi(c[0], c[1], c[2] as u32, c[3] as u32, bits),
                    }]
                },
                exact,
            );
        }
    }
    chk.finish();
}

#[test]
fn prmt_every_selector() {
    let mut chk = Checker::new("prmt");
    let modes = ["", ".f4e", ".b4e", ".rc8", ".ecl", ".ecr", ".rc16"];
    let ops: Vec<Op> = modes
        .iter()
        .map(|m| Op::ins("b32", format!("prmt.b32{m} $d, $a, $b, $c;")))
        .collect();
    let ab = [
        (0x8765_4321u64, 0xfedc_ba98u64),
        (0x0011_2233, 0x4455_6677),
        (0x80ff_7f01, 0x7f80_01fe),
    ];
    let mut r = Rng::new(99);
    let mut cases = Vec::new();
    // Every 16-bit selector value (the default mode reads four nibbles; the others c[1:0]).
    for c in 0..0x1_0000u64 {
        let (a, b) = ab[(c % 3) as usize];
        cases.push(vec![a, b, c | ((r.u32() as u64) << 16 & 0xffff_0000)]);
    }
    let got = run(&["b32", "b32", "b32"], &ops, &cases);
    for (k, op) in ops.iter().enumerate() {
        let m = modes[k].trim_start_matches('.');
        chk.table(
            op,
            &cases,
            &got[k],
            |c| vec![ptx_ref::ref_prmt(c[0] as u32, c[1] as u32, c[2] as u32, m) as u64],
            exact,
        );
    }
    chk.finish();
}

#[test]
fn lop3_every_table() {
    let mut chk = Checker::new("lop3");
    let mut r = Rng::new(3);
    let mut cases: Vec<Vec<u64>> = vec![
        vec![0xf0f0_f0f0, 0xcccc_cccc, 0xaaaa_aaaa],
        vec![0, 0, 0],
        vec![0xffff_ffff; 3],
    ];
    for _ in 0..509 {
        cases.push(vec![r.u32() as u64, r.u32() as u64, r.u32() as u64]);
    }
    for chunk in 0..4u32 {
        let ops: Vec<Op> = (chunk * 64..chunk * 64 + 64)
            .map(|lut| Op::ins("b32", format!("lop3.b32 $d, $a, $b, $c, {lut:#x};")))
            .collect();
        let got = run(&["b32", "b32", "b32"], &ops, &cases);
        for (k, op) in ops.iter().enumerate() {
            let lut = chunk * 64 + k as u32;
            chk.table(
                op,
                &cases,
                &got[k],
                |c| vec![ptx_ref::ref_lop3(c[0] as u32, c[1] as u32, c[2] as u32, lut) as u64],
                exact,
            );
        }
    }
    // lop3.BoolOp: p = (d != 0) BoolOp q.
    let mut ops = Vec::new();
    for bop in ["or", "and"] {
        for lut in [0x00u32, 0x80, 0x96, 0xfe, 0x1a] {
            ops.push(Op::multi(
                format!("lop3.{bop}.b32 d|p, a, b, c, {lut:#x}, q"),
                &["b32", "pred"],
                format!("lop3.{bop}.b32 $d|$d1, $a, $b, $c, {lut:#x}, $e;"),
            ));
        }
    }
    let cases: Vec<Vec<u64>> = cases
        .iter()
        .enumerate()
        .map(|(i, c)| vec![c[0], c[1], c[2], (i & 1) as u64])
        .collect();
    let got = run(&["b32", "b32", "b32", "pred"], &ops, &cases);
    for (k, op) in ops.iter().enumerate() {
        let lut = [0x00u32, 0x80, 0x96, 0xfe, 0x1a][k % 5];
        let or = k < 5;
        chk.table(
            op,
            &cases,
            &got[k],
            |c| {
                let d = ptx_ref::ref_lop3(c[0] as u32, c[1] as u32, c[2] as u32, lut);
                let q = c[3] != 0;
                vec![d as u64, if or { d != 0 || q } else { d != 0 && q } as u64]
            },
            exact,
        );
    }
    chk.finish();
}

#[test]
fn shf_every_amount() {
    let mut chk = Checker::new("shf");
    let ops = vec![
        Op::ins("b32", "shf.l.wrap.b32 $d, $a, $b, $c;"),
        Op::ins("b32", "shf.l.clamp.b32 $d, $a, $b, $c;"),
        Op::ins("b32", "shf.r.wrap.b32 $d, $a, $b, $c;"),
        Op::ins("b32", "shf.r.clamp.b32 $d, $a, $b, $c;"),
    ];
    let vals = words(32, 40, 8);
    let mut cases = Vec::new();
    for (i, &a) in vals.iter().enumerate() {
        for (j, &b) in vals.iter().enumerate() {
            if (i + j) % 3 == 0 {
                for s in amounts(72) {
                    cases.push(vec![a, b, s]);
                }
            }
        }
    }
    let got = run(&["b32", "b32", "b32"], &ops, &cases);
    for (k, op) in ops.iter().enumerate() {
        chk.table(
            op,
            &cases,
            &got[k],
            |c| {
                vec![
                    ptx_ref::ref_shf(c[0] as u32, c[1] as u32, c[2] as u32, k < 2, k % 2 == 1)
                        as u64,
                ]
            },
            exact,
        );
    }
    chk.finish();
}

/// fns (every base 0..31 and offsets −34..34), bfind(.shiftamt), clz, popc, brev, bmsk, szext.
#[test]
fn fns_bfind_clz_popc_brev_bmsk_szext() {
    let mut chk = Checker::new("fns/bfind/clz/popc/brev/bmsk/szext");
    // fns
    let op = Op::ins("b32", "fns.b32 $d, $a, $b, $c;");
    let mut cases = Vec::new();
    for m in words(32, 48, 11) {
        for base in 0..32u64 {
            for off in -34i64..=34 {
                cases.push(vec![m, base, off as u64 & 0xffff_ffff]);
            }
        }
    }
    let got = run(&["b32", "b32", "b32"], std::slice::from_ref(&op), &cases);
    chk.table(
        &op,
        &cases,
        &got[0],
        |c| vec![ptx_ref::ref_fns(c[0] as u32, c[1] as u32, c[2] as u32 as i32) as u64],
        exact,
    );
    // one-operand bit counts on 32 and 64 bits
    for bits in [32u32, 64] {
        let bt = bits_type(bits);
        let ops = vec![
            Op::ins("b32", format!("bfind.u{bits} $d, $a;")),
            Op::ins("b32", format!("bfind.s{bits} $d, $a;")),
            Op::ins("b32", format!("bfind.shiftamt.u{bits} $d, $a;")),
            Op::ins("b32", format!("bfind.shiftamt.s{bits} $d, $a;")),
            Op::ins("b32", format!("clz.b{bits} $d, $a;")),
            Op::ins("b32", format!("popc.b{bits} $d, $a;")),
            Op::ins(bt, format!("brev.b{bits} $d, $a;")),
        ];
        let cases: Vec<Vec<u64>> = words(bits, 3000, 12 + bits as u64)
            .into_iter()
            .map(|a| vec![a])
            .collect();
        let got = run(&[bt], &ops, &cases);
        for (k, op) in ops.iter().enumerate() {
            chk.table(
                op,
                &cases,
                &got[k],
                |c| {
                    let a = c[0];
                    vec![match k {
                        0..=3 => ptx_ref::ref_bfind(a, bits, k % 2 == 1, k >= 2) as u64,
                        4 => {
                            if bits == 32 {
                                (a as u32).leading_zeros() as u64
                            } else {
                                a.leading_zeros() as u64
                            }
                        }
                        5 => a.count_ones() as u64,
                        _ => {
                            if bits == 32 {
                                (a as u32).reverse_bits() as u64
                            } else {
                                a.reverse_bits()
                            }
                        }
                    }]
                },
                exact,
            );
        }
    }
    // bmsk / szext with every a, b in 0..=40 and large values
    let ops = vec![
        Op::ins("b32", "bmsk.clamp.b32 $d, $a, $b;"),
        Op::ins("b32", "bmsk.wrap.b32 $d, $a, $b;"),
        Op::ins("b32", "szext.clamp.u32 $d, $c, $b;"),
        Op::ins("b32", "szext.wrap.u32 $d, $c, $b;"),
        Op::ins("b32", "szext.clamp.s32 $d, $c, $b;"),
        Op::ins("b32", "szext.wrap.s32 $d, $c, $b;"),
    ];
    let am = amounts(40);
    let vals = words(32, 16, 13);
    let mut cases = Vec::new();
    for &a in &am {
        for &b in &am {
            for &v in &vals {
                cases.push(vec![a, b, v]);
            }
        }
    }
    let got = run(&["b32", "b32", "b32"], &ops, &cases);
    for (k, op) in ops.iter().enumerate() {
        chk.table(
            op,
            &cases,
            &got[k],
            |c| {
                let (a, b, v) = (c[0] as u32, c[1] as u32, c[2] as u32);
                vec![match k {
                    0 => ptx_ref::ref_bmsk(a, b, true),
                    1 => ptx_ref::ref_bmsk(a, b, false),
                    2 => ptx_ref::ref_szext(v, b, true, false),
                    3 => ptx_ref::ref_szext(v, b, false, false),
                    4 => ptx_ref::ref_szext(v, b, true, true),
                    _ => ptx_ref::ref_szext(v, b, false, true),
                } as u64]
            },
            exact,
        );
    }
    chk.finish();
}

#[test]
fn dp4a_dp2a_every_signedness() {
    let mut chk = Checker::new("dp4a/dp2a");
    let mut ops = Vec::new();
    let mut meta = Vec::new();
    for at in ["u32", "s32"] {
        for btp in ["u32", "s32"] {
            ops.push(Op::ins("b32", format!("dp4a.{at}.{btp} $d, $a, $b, $c;")));
            meta.push((false, false, at, btp));
            for m in ["lo", "hi"] {
                ops.push(Op::ins(
                    "b32",
                    format!("dp2a.{m}.{at}.{btp} $d, $a, $b, $c;"),
                ));
                meta.push((true, m == "hi", at, btp));
            }
        }
    }
    // Bytes and halves at their extremes, plus random words.
    let mut vals: Vec<u64> = vec![
        0,
        0xffff_ffff,
        0x8080_8080,
        0x7f7f_7f7f,
        0x8000_8000,
        0x7fff_7fff,
        0x0180_ff7f,
        0x80ff_7f01,
        0x0101_0101,
    ];
    vals.extend(words(32, 60, 14));
    let mut cases = Vec::new();
    for (i, &a) in vals.iter().enumerate() {
        for (j, &b) in vals.iter().enumerate() {
            cases.push(vec![a, b, vals[(i * 5 + j * 11) % vals.len()]]);
        }
    }
    let got = run(&["b32", "b32", "b32"], &ops, &cases);
    for (k, op) in ops.iter().enumerate() {
        let (two, hi, at, btp) = meta[k];
        chk.table(
            op,
            &cases,
            &got[k],
            |c| {
                vec![ptx_ref::ref_dp(
                    two,
                    hi,
                    c[0] as u32,
                    c[1] as u32,
                    c[2] as u32,
                    at == "s32",
                    btp == "s32",
                ) as u64]
            },
            exact,
        );
    }
    chk.finish();
}
