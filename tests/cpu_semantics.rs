//! Semantic differential test of the cpu target on every code path: every batch runs as a PTX
//! kernel with one CUDA thread per case, compiled three times — as thread loops (`CpuMode::Fission`,
//! where LLVM vectorizes the loop over threads) and as one coroutine per thread
//! (`CpuMode::Coroutine`, scalar code) and as the warp engine (`CpuMode::Warp`) — and each is compared with references written here from
//! the Semantics sections of the PTX ISA 9.2 manual, never calling the lowering.
//!
//! This file holds the forms whose meaning depends on rules the wider instruction tests
//! (`tests/cpu_instr_{int,float,cvt}.rs`, which `scripts/test.sh` also runs on the coroutine
//! path) do not single out:
//!
//! - the carry flag: every producer (`add.cc`, `sub.cc`, `addc.cc`, `subc.cc`, `mad{.lo,.hi}.cc`,
//!   `madc{.lo,.hi}.cc`) followed by every consumer (`addc`, `subc`, `madc.lo`, `madc.hi`) on
//!   `.u32/.s32/.u64/.s64`, and each producer under a guard that is false for half the cases.
//!   CC.CF is the carry-out of the adder, as the GPU keeps it: a
//!   subtraction adds `a + ~b + 1` (`subc`: `a + ~b + CF`), so after `sub.cc` CF is 1 when there
//!   is *no* borrow. The manual's text calls it a "borrow-out"; chains of subtractions alone
//!   cannot tell the two readings apart, mixed chains can (a GPU gives 0 for
//!   `sub.cc 0x627adf75 - 0x864ccef5; addc 0, 0`).
//! - float → integer `cvt` of NaNs (quiet, signalling, either sign, several payloads), ±inf,
//!   ±0, subnormals, halves and the limits of every integer type, from `.f32/.f64` and every
//!   `.f16/.bf16` bit pattern, with every integer rounding, `.sat` and `.ftz`. PTX ISA 9.2
//!   (§9.7.9.21, Integer Notes): a NaN gives 0 if the source is not `.f64` and the destination
//!   not 64-bit, else `1 << (BitWidth(dst) − 1)` (MININT for signed types, (MAXINT >> 1) + 1
//!   for unsigned ones). The shorter per-instruction page of older manuals
//!   (`/work/shared/spec/instructions/cvt.txt`) says "NaN inputs are converted to 0"; the 9.2
//!   text is the precise one and is what is checked.
//! - `cvt.rs` (stochastic rounding) to `.f16x2/.bf16x2` with `.relu`/`.satfinite`: truncation
//!   toward zero, one ulp away from zero when the discarded bits plus `rbits` carry out. Beyond
//!   f16's MAX_NORM + 1 ulp the discarded part is a whole ulp and always carries (infinity;
//!   before the fix an out-of-range float-to-integer conversion made it MAX_NORM or infinity
//!   at random).
//! - `cvt` to `.tf32`, and one-step rounding of narrowing conversions at the midpoints of the
//!   destination grid (f64 → f16 through f32 would round twice).
//! - the f16/bf16 unary forms over every bit pattern: `neg`, `abs` (`.ftz` for f16), the packed
//!   x2 forms, and the exact widening conversions to `.f32`/`.f64`.
//!
//! The test prints, per batch and in total, the instruction forms tried, the cases compared, the
//! differences and the differences explained by a rule that leaves the result open (listed in
//! `OPEN` with the reason), and fails on any other difference.

#[path = "common/instr.rs"]
mod instr;
#[path = "common/ptx_ref.rs"]
mod ptx_ref;

use instr::*;
use ptx_ref::{bb, f64_op, half_to_f64, mode_of, ref_round, ref_to_half, with_mode, Rng};

/// Results the manual leaves open, checked to be within what it allows (any NaN, …) and
/// counted as explained differences when they differ from the reference's choice.
const OPEN: &[(&str, &str)] = &[
    (
        NEG_ABS_NAN,
        "neg/abs (PTX ISA 9.2: \"NaN inputs yield an unspecified NaN\"): any NaN is accepted",
    ),
    (
        RS_SUBNORMAL,
        "cvt.rs to f16: the rbits figure shows 13 random bits against the 13 bits an f32 loses \
         for a normal f16; for a subnormal result more bits are lost: either neighbour toward \
         or away from zero is accepted",
    ),
    (
        SMALL_NAN,
        "cvt to .e4m3x2/.e5m2x2 (\"the result is NaN in the specified destination format\") \
         and from them to .f16x2 without .relu: any NaN of the format is accepted",
    ),
    (
        WIDEN_NAN,
        "cvt.f32/f64.f16 and cvt.f64.bf16 do not say which NaN: any NaN is accepted \
         (cvt.f32.bf16 says \"NaN input yields unspecified NaN\", but the H200 keeps the bits, \
         so that is checked exactly)",
    ),
];
const NEG_ABS_NAN: &str = "neg/abs of a NaN";
const WIDEN_NAN: &str = "widening cvt of a NaN";

/// Prints the open rules (so every run's log lists them next to the counts) and finishes.
fn finish(chk: Checker) {
    let forms: std::collections::BTreeSet<&str> = chk
        .instrs
        .iter()
        .map(|n| n.split(" [").next().unwrap_or(n))
        .collect();
    println!(
        "{}: {} instruction forms, each on every path ({})",
        chk.what,
        forms.len(),
        MODES.map(|m| m.1).join(", ")
    );
    for (what, why) in OPEN {
        println!("  open rule: {what}: {why}");
    }
    chk.finish();
}

/// The two code paths every batch runs on.
const MODES: [(CpuMode, &str); 3] = [
    (CpuMode::Fission, "thread loops (vectorized)"),
    (CpuMode::Coroutine, "coroutines (scalar)"),
    (CpuMode::Warp, "warp engine (32-lane vectors)"),
];

/// Runs one batch on both paths and checks each result with `check(chk, op index, case,
/// got)`.
fn both_paths(
    chk: &mut Checker,
    inputs: &[&str],
    ops: &[Op],
    cases: &[Vec<u64>],
    mut check: impl FnMut(&mut Checker, usize, &[u64], &[u64], &str),
) {
    for (mode, path) in MODES {
        let opt = std::env::var("INSTR_OPT")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(2);
        let got = run_mode(inputs, ops, cases, opt, mode);
        for (k, per_case) in got.iter().enumerate() {
            for (c, g) in cases.iter().zip(per_case) {
                check(chk, k, c, g, path);
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Carry flag

#[derive(Clone, Copy, Debug)]
enum CcOp {
    Add,
    Sub,
    Mad { hi: bool },
}

/// The reference adder: `x + y + cin` on `n` bits; returns (result, carry-out).
fn adder(x: u64, y: u64, cin: bool, n: u32) -> (u64, bool) {
    let s = mask(x, n) as u128 + mask(y, n) as u128 + cin as u128;
    (mask(s as u64, n), (s >> n) & 1 == 1)
}

/// One carry-flag instruction of the hardware model: (result, CF out). `cin` is the CF the
/// instruction sees; `uses_cf` whether it is a `c` form (addc/subc/madc), which adds it.
fn ref_cc(op: CcOp, uses_cf: bool, signed: bool, n: u32, ops: [u64; 3], cin: bool) -> (u64, bool) {
    let [a, b, c] = ops;
    match op {
        // add.cc: a + b; addc: a + b + CF.
        CcOp::Add => adder(a, b, uses_cf && cin, n),
        // sub.cc: a + ~b + 1; subc: a + ~b + CF.
        CcOp::Sub => adder(a, !b, if uses_cf { cin } else { true }, n),
        CcOp::Mad { hi } => {
            let p: u128 = if signed {
                (sext(a, n) as i64 as i128 * sext(b, n) as i64 as i128) as u128
            } else {
                mask(a, n) as u128 * mask(b, n) as u128
            };
            let p = if hi { (p >> n) as u64 } else { p as u64 };
            adder(p, c, uses_cf && cin, n)
        }
    }
}

/// The PTX spelling of a carry-flag instruction.
fn cc_text(op: CcOp, uses_cf: bool, cc: bool, ty: &str) -> String {
    let base = match (op, uses_cf) {
        (CcOp::Add, false) => "add".to_string(),
        (CcOp::Add, true) => "addc".to_string(),
        (CcOp::Sub, false) => "sub".to_string(),
        (CcOp::Sub, true) => "subc".to_string(),
        (CcOp::Mad { hi }, c) => format!(
            "mad{}.{}",
            if c { "c" } else { "" },
            if hi { "hi" } else { "lo" }
        ),
    };
    format!("{base}{}.{ty}", if cc { ".cc" } else { "" })
}

/// Operands of the carry test: edges and random words, and pairs that set CF both ways.
fn cc_cases(n: u32, count: usize, seed: u64) -> Vec<Vec<u64>> {
    let m = mask(u64::MAX, n);
    let min = 1u64 << (n - 1);
    let edges = [
        0,
        1,
        2,
        m,
        m - 1,
        min,
        min - 1,
        min + 1,
        0x627a_df75_627a_df75 & m,
        0x864c_cef5_864c_cef5 & m,
    ];
    let mut rng = Rng::new(seed);
    let word = |rng: &mut Rng| {
        let r = rng.u64();
        if r.is_multiple_of(3) {
            edges[(r >> 8) as usize % edges.len()]
        } else {
            rng.u64() & m
        }
    };
    (0..count)
        .map(|i| {
            let mut c: Vec<u64> = (0..6).map(|_| word(&mut rng)).collect();
            // h + i: a carry for odd cases, none for even ones.
            if i % 2 == 1 {
                c.extend([m, 1 + (i as u64 / 2) % 5]);
            } else {
                c.extend([i as u64 % 7, 0]);
            }
            c
        })
        .collect()
}

#[test]
fn carry_flag_every_producer_and_consumer() {
    let mut chk = Checker::new("carry flag (producer → consumer)");
    let producers: [(CcOp, bool); 8] = [
        (CcOp::Add, false),
        (CcOp::Sub, false),
        (CcOp::Add, true),
        (CcOp::Sub, true),
        (CcOp::Mad { hi: false }, false),
        (CcOp::Mad { hi: true }, false),
        (CcOp::Mad { hi: false }, true),
        (CcOp::Mad { hi: true }, true),
    ];
    let consumers: [CcOp; 4] = [
        CcOp::Add,
        CcOp::Sub,
        CcOp::Mad { hi: false },
        CcOp::Mad { hi: true },
    ];
    for n in [32u32, 64] {
        let bt: &'static str = if n == 32 { "b32" } else { "b64" };
        let mut ops = Vec::new();
        let mut meta = Vec::new();
        for ty in ["u", "s"] {
            let ty = format!("{ty}{n}");
            for &(p, pc) in &producers {
                for &c in &consumers {
                    let pt = cc_text(p, pc, true, &ty);
                    let ct = cc_text(c, true, false, &ty);
                    let pa = match p {
                        CcOp::Mad { .. } => "$a, $b, $c",
                        _ => "$a, $b",
                    };
                    let ca = match c {
                        CcOp::Mad { .. } => "$e, $f, $g",
                        _ => "$e, $f",
                    };
                    // CF comes from data first (h + i), so the c-form producers see both values.
                    let text = format!(
                        "{{\n\t.reg .{bt} %cf$k;\n\tadd.cc.u{n} %cf$k, $h, $i;\n\t{pt} $d, {pa};\n\t{ct} $d1, {ca};\n\t}}"
                    );
                    ops.push(Op::multi(format!("{pt}; {ct}"), &[bt, bt], text));
                    meta.push((p, pc, c, ty.starts_with('s'), false));
                }
                // The producer under a guard that is false for about half the cases: CF and
                // the destination keep their values then (a select in the thread loop).
                let pt = cc_text(p, pc, true, &ty);
                let ct = cc_text(CcOp::Add, true, false, &ty);
                let text = format!(
                    "{{\n\t.reg .{bt} %cf$k;\n\tadd.cc.u{n} %cf$k, $h, $i;\n\tmov.b{n} $d, 0;\n\tsetp.lt.u{n} $p, $a, $b;\n\t@$p {pt} $d, {};\n\t{ct} $d1, $e, $f;\n\t}}",
                    match p {
                        CcOp::Mad { .. } => "$a, $b, $c",
                        _ => "$a, $b",
                    }
                );
                ops.push(Op::multi(format!("@p {pt}; {ct}"), &[bt, bt], text));
                meta.push((p, pc, CcOp::Add, ty.starts_with('s'), true));
            }
        }
        let cases = cc_cases(n, 3000, 0xcc00 + n as u64);
        let inputs = [bt; 8];
        both_paths(&mut chk, &inputs, &ops, &cases, |chk, k, c, g, path| {
            let (p, pc, cons, signed, guarded) = meta[k];
            let (_, cf0) = adder(c[6], c[7], false, n);
            let (r1, cf1) = if guarded && mask(c[0], n) >= mask(c[1], n) {
                (0, cf0)
            } else {
                ref_cc(p, pc, signed, n, [c[0], c[1], c[2]], cf0)
            };
            let (r2, _) = ref_cc(cons, true, signed, n, [c[3], c[4], c[5]], cf1);
            let name = format!("{} [{path}]", ops[k].name);
            chk.check(&name, c, r1, g[0], g[0] == r1);
            chk.check(&format!("{name} (consumer)"), c, r2, g[1], g[1] == r2);
        });
    }
    finish(chk);
}

// ---------------------------------------------------------------------------------------------
// Float → integer conversions

const INTS: [&str; 8] = ["u8", "u16", "u32", "u64", "s8", "s16", "s32", "s64"];

fn int_bits(t: &str) -> u32 {
    t[1..].parse().unwrap()
}

/// The register bits of the integer result `x` of type `t`: 8-bit results live in 16-bit
/// registers, sign-extended for signed types.
fn int_reg(x: i128, t: &str) -> u64 {
    let b = int_bits(t);
    let v = mask(x as u64, b);
    let v = if t.starts_with('s') { sext(v, b) } else { v };
    mask(v, b.max(16))
}

/// `cvt{.irnd}{.ftz}{.sat}.dt.st` of the value `x` (exact in f64; NaN as is), from the 9.2
/// manual's Integer Notes.
fn ref_f2i(dt: &str, st: &str, rnd: &str, ftz: bool, x: f64) -> u64 {
    let b = int_bits(dt);
    let signed = dt.starts_with('s');
    if x.is_nan() {
        return if st != "f64" && b != 64 {
            0
        } else if signed {
            int_reg(-(1i128 << (b - 1)), dt)
        } else {
            int_reg(1i128 << (b - 1), dt)
        };
    }
    let x = if ftz && st == "f32" && x != 0.0 && x.abs() < f32::MIN_POSITIVE as f64 {
        0.0
    } else {
        x
    };
    let y = match rnd {
        "rni" => x.round_ties_even(),
        "rzi" => x.trunc(),
        "rmi" => x.floor(),
        _ => x.ceil(),
    };
    let (lo, hi) = if signed {
        (-(1i128 << (b - 1)), (1i128 << (b - 1)) - 1)
    } else {
        (0, (1i128 << b) - 1)
    };
    // Clamped to the destination range (with or without .sat).
    let v = if y <= lo as f64 {
        lo
    } else if y >= hi as f64 {
        hi
    } else {
        y as i128
    };
    int_reg(v, dt)
}

/// f64 values around every integer type's limits and at halves, and the special values.
fn f64_specials() -> Vec<f64> {
    let mut v = vec![
        0.0,
        -0.0,
        f64::INFINITY,
        f64::NEG_INFINITY,
        f64::MIN_POSITIVE,
        -f64::MIN_POSITIVE,
        f64::from_bits(1),
        f64::from_bits(0x8000_0000_0000_0001),
        f64::MAX,
        f64::MIN,
        f32::MIN_POSITIVE as f64 / 2.0,
        -(f32::from_bits(1) as f64),
    ];
    for k in 0..=64 {
        let p = 2f64.powi(k);
        for x in [p, p.next_up(), p.next_down(), p + 0.5, p - 0.5] {
            v.push(x);
            v.push(-x);
        }
    }
    for i in -8..=8 {
        v.push(i as f64 + 0.5);
        v.push(i as f64 + 0.5f64.next_up());
        v.push(i as f64 + 0.5f64.next_down());
    }
    v
}

/// NaN bit patterns: quiet and signalling, both signs, smallest and largest payloads.
fn nan64() -> Vec<u64> {
    let mut v = Vec::new();
    for s in [0u64, 1 << 63] {
        for p in [
            0x8_0000_0000_0000u64,
            0xf_ffff_ffff_ffff,
            1,
            0x4_0000_0000_0000,
            0x8_0000_0000_0001,
            0x1234_5678,
        ] {
            v.push(s | 0x7ff0_0000_0000_0000 | p);
        }
    }
    v
}

fn nan32() -> Vec<u64> {
    let mut v = Vec::new();
    for s in [0u64, 0x8000_0000] {
        for p in [0x40_0000u64, 0x7f_ffff, 1, 0x20_0000, 0x40_0001, 0x1234] {
            v.push(s | 0x7f80_0000 | p);
        }
    }
    v
}

/// The ops `cvt{.irnd}{.ftz}{.sat}.{dt}.{st} $d, $a` for every destination, rounding and
/// modifier (`.ftz` only where the source is `.f32`).
fn f2i_ops(st: &str) -> (Vec<Op>, Vec<(&'static str, &'static str, bool)>) {
    let mut ops = Vec::new();
    let mut meta = Vec::new();
    for dt in INTS {
        for rnd in ["rni", "rzi", "rmi", "rpi"] {
            let ftzs: &[bool] = if st == "f32" {
                &[false, true]
            } else {
                &[false]
            };
            for &ftz in ftzs {
                for sat in [false, true] {
                    let text = format!(
                        "cvt.{rnd}{}{}.{dt}.{st} $d, $a;",
                        if ftz { ".ftz" } else { "" },
                        if sat { ".sat" } else { "" }
                    );
                    ops.push(Op::ins(dt, text));
                    meta.push((dt, rnd, ftz));
                }
            }
        }
    }
    (ops, meta)
}

#[test]
fn cvt_float_to_int_nan_limits_halves() {
    let mut chk = Checker::new("cvt float → integer (NaN, limits, halves)");
    let mut rng = Rng::new(0xf2e1);
    // f64 and f32 sources: specials, NaN payloads, random values across the integer ranges.
    let mut v64: Vec<u64> = f64_specials().iter().map(|x| x.to_bits()).collect();
    v64.extend(nan64());
    for _ in 0..2000 {
        let e = (rng.u64() % 70) as i32 - 4;
        let x = (rng.u64() >> 11) as f64 / (1u64 << 53) as f64 * 2f64.powi(e);
        v64.push(if rng.u64() & 1 == 1 { -x } else { x }.to_bits());
    }
    let mut v32: Vec<u64> = f64_specials()
        .iter()
        .map(|&x| (x as f32).to_bits() as u64)
        .collect();
    v32.extend(nan32());
    v32.extend((1..16u64).map(|m| (m * 0x11_1111) & 0x7f_ffff)); // subnormals
    v32.extend((1..16u64).map(|m| 0x8000_0000 | ((m * 0x11_1111) & 0x7f_ffff)));
    for _ in 0..2000 {
        v32.push(rng.u32() as u64);
    }
    for st in ["f64", "f32", "f16", "bf16"] {
        let vals: Vec<u64> = match st {
            "f64" => v64.clone(),
            "f32" => v32.clone(),
            _ => (0..=0xffffu64).collect(),
        };
        let (ops, meta) = f2i_ops(st);
        let cases: Vec<Vec<u64>> = vals.iter().map(|&x| vec![x]).collect();
        both_paths(&mut chk, &[st], &ops, &cases, |chk, k, c, g, path| {
            let (dt, rnd, ftz) = meta[k];
            let x = match st {
                "f64" => f64::from_bits(c[0]),
                "f32" => f32::from_bits(c[0] as u32) as f64,
                "f16" => half_to_f64(c[0] as u16, false),
                _ => half_to_f64(c[0] as u16, true),
            };
            let w = ref_f2i(dt, st, rnd, ftz, x);
            chk.check(&format!("{} [{path}]", ops[k].name), c, w, g[0], g[0] == w);
        });
    }
    finish(chk);
}

// ---------------------------------------------------------------------------------------------
// f16/bf16 unary forms, every bit pattern

fn is_nan16(v: u64, bf: bool) -> bool {
    if bf {
        v & 0x7f80 == 0x7f80 && v & 0x7f != 0
    } else {
        v & 0x7c00 == 0x7c00 && v & 0x3ff != 0
    }
}

fn is_sub16(v: u64, bf: bool) -> bool {
    let e = if bf { v & 0x7f80 } else { v & 0x7c00 };
    e == 0 && v & 0x7fff != 0
}

#[test]
fn half_unary_every_pattern() {
    let mut chk = Checker::new("f16/bf16 unary (every bit pattern)");
    for bf in [false, true] {
        let (t, x2): (&'static str, &'static str) = if bf {
            ("bf16", "bf16x2")
        } else {
            ("f16", "f16x2")
        };
        // Per op: (neg/abs/cvt32/cvt64, .ftz, packed x2).
        let mut ops = Vec::new();
        let mut kinds = Vec::new();
        let ftzs: &[&str] = if bf { &[""] } else { &["", ".ftz"] };
        for op in ["neg", "abs"] {
            for fz in ftzs {
                ops.push(Op::ins(t, format!("{op}{fz}.{t} $d, $a;")));
                kinds.push((op, !fz.is_empty(), false));
                ops.push(Op::ins(x2, format!("{op}{fz}.{x2} $d, $b;")));
                kinds.push((op, !fz.is_empty(), true));
            }
        }
        for wide in ["f32", "f64"] {
            ops.push(Op::ins(wide, format!("cvt.{wide}.{t} $d, $a;")));
            kinds.push((if wide == "f32" { "cvt32" } else { "cvt64" }, false, false));
        }
        // Case: a = the pattern, b = (pattern, its complement) packed.
        let cases: Vec<Vec<u64>> = (0..=0xffffu64)
            .map(|v| vec![v, v | ((!v & 0xffff) << 16)])
            .collect();
        let lane = |op: &str, ftz: bool, v: u64| -> u64 {
            let v = if ftz && is_sub16(v, bf) {
                v & 0x8000
            } else {
                v
            };
            match op {
                "neg" => v ^ 0x8000,
                _ => v & 0x7fff,
            }
        };
        both_paths(&mut chk, &[t, x2], &ops, &cases, |chk, k, c, g, path| {
            let (op, ftz, packed) = kinds[k];
            let name = format!("{} [{path}]", ops[k].name);
            match op {
                "neg" | "abs" => {
                    let lanes: Vec<u64> = if packed {
                        vec![c[1] & 0xffff, c[1] >> 16]
                    } else {
                        vec![c[0]]
                    };
                    let mut want = 0;
                    let mut nan_lanes_ok = true;
                    let mut any_nan = false;
                    for (i, &v) in lanes.iter().enumerate() {
                        let w = lane(op, ftz, v);
                        want |= w << (16 * i);
                        let gl = (g[0] >> (16 * i)) & 0xffff;
                        if is_nan16(v, bf) {
                            any_nan = true;
                            nan_lanes_ok &= is_nan16(gl, bf);
                        } else {
                            nan_lanes_ok &= gl == w;
                        }
                    }
                    let open = any_nan.then_some((NEG_ABS_NAN, nan_lanes_ok));
                    chk.check_open(&name, c, want, g[0], open);
                }
                _ => {
                    let x = half_to_f64(c[0] as u16, bf);
                    let (want, got_nan) = if op == "cvt32" {
                        let w = if bf {
                            // bf16 is the upper half of an f32.
                            c[0] << 16
                        } else if x.is_nan() {
                            // The payload kept and quieted, the sign kept.
                            let s = (c[0] & 0x8000) << 16;
                            s | 0x7fc0_0000 | (c[0] & 0x3ff) << 13
                        } else {
                            (x as f32).to_bits() as u64
                        };
                        (w, f32::from_bits(g[0] as u32).is_nan())
                    } else {
                        let w = if x.is_nan() {
                            let sh = if bf { 45 } else { 42 };
                            let s = (c[0] & 0x8000) << 48;
                            let p = (c[0] & if bf { 0x7f } else { 0x3ff }) << sh;
                            s | 0x7ff8_0000_0000_0000 | p
                        } else {
                            x.to_bits()
                        };
                        (w, f64::from_bits(g[0]).is_nan())
                    };
                    // cvt.f32.bf16 keeps a NaN's bits on the GPU (measured on an H200 for all
                    // 254 NaN patterns): exact, not open.
                    let exact = bf && op == "cvt32";
                    let open = (x.is_nan() && !exact).then_some((WIDEN_NAN, got_nan));
                    chk.check_open(&name, c, want, g[0], open);
                }
            }
        });
    }
    finish(chk);
}

// ---------------------------------------------------------------------------------------------
// Rounding at midpoints: conversions that narrow in one step

/// `|i|` rounded to `p` significant bits in mode `r` (sign applied), exact in f64 for p ≤ 53.
fn round_int(i: i128, p: u32, r: &str) -> f64 {
    let neg = i < 0;
    let u = i.unsigned_abs();
    let bits = 128 - u.leading_zeros();
    let m = if bits <= p {
        u as f64
    } else {
        let sh = bits - p;
        let q = u >> sh;
        let rem = u & ((1u128 << sh) - 1);
        let half = 1u128 << (sh - 1);
        let up = match r {
            "rn" => rem > half || (rem == half && q & 1 == 1),
            "rz" => false,
            "rp" => rem != 0 && !neg,
            _ => rem != 0 && neg,
        };
        ((q + up as u128) as f64) * 2f64.powi(sh as i32)
    };
    if neg {
        -m
    } else {
        m
    }
}

/// Destination grids: (type, significant bits, minimum normal exponent, maximum exponent).
const GRIDS: [(&str, i32, i32, i32); 3] = [
    ("f16", 11, -14, 15),
    ("bf16", 8, -126, 127),
    ("f32", 24, -126, 127),
];

/// Midpoints of the destination grid `(p, emin, emax)` (normal and subnormal) with random and
/// extreme mantissas, both signs.
fn midpoints(p: i32, emin: i32, emax: i32, rng: &mut Rng) -> Vec<f64> {
    let mut v = Vec::new();
    for e in (emin - p + 1)..=emax {
        let ulp = 2f64.powi(e.max(emin) - p + 1);
        for j in 0..4 {
            let top = 1u64 << (p - 1);
            let frac = match j {
                0 => 0,
                1 => 1,
                2 => top - 1,
                _ => rng.u64() % top,
            };
            // A value of the grid with exponent e (or a subnormal below emin).
            let y = if e >= emin {
                (top + frac) as f64 * ulp
            } else {
                2f64.powi(e) + (frac >> (emin - e)) as f64 * ulp
            };
            let mid = y + ulp / 2.0;
            v.push(mid);
            v.push(-mid);
        }
    }
    v
}

#[test]
fn cvt_narrowing_rounds_once_at_midpoints() {
    let mut chk = Checker::new("cvt narrowing at midpoints (f64/f32/64-bit int sources)");
    let mut rng = Rng::new(0x3d);
    let rnds = ["rn", "rz", "rm", "rp"];
    // Float sources: each midpoint and its neighbours one source ulp away, where the source
    // holds them (f64 → f32 → f16 rounding twice goes wrong exactly there).
    for st in ["f64", "f32"] {
        let mut vals: Vec<u64> = Vec::new();
        for &(dt, p, emin, emax) in &GRIDS {
            if st == "f32" && dt == "f32" {
                continue;
            }
            for m in midpoints(p, emin, emax, &mut rng) {
                if st == "f64" {
                    for x in [m, m.next_up(), m.next_down()] {
                        vals.push(x.to_bits());
                    }
                } else if (m as f32) as f64 == m {
                    let x = m as f32;
                    for x in [x, x.next_up(), x.next_down()] {
                        vals.push(x.to_bits() as u64);
                    }
                }
            }
        }
        let mut ops = Vec::new();
        let mut meta = Vec::new();
        for &(dt, ..) in &GRIDS {
            if st == "f32" && dt == "f32" {
                continue;
            }
            for r in rnds {
                ops.push(Op::ins(dt, format!("cvt.{r}.{dt}.{st} $d, $a;")));
                meta.push((dt, r));
            }
        }
        let cases: Vec<Vec<u64>> = vals.iter().map(|&x| vec![x]).collect();
        both_paths(&mut chk, &[st], &ops, &cases, |chk, k, c, g, path| {
            let (dt, r) = meta[k];
            let x = if st == "f64" {
                f64::from_bits(c[0])
            } else {
                f32::from_bits(c[0] as u32) as f64
            };
            let w = match dt {
                "f32" => with_mode(mode_of(r), || bb(x) as f32).to_bits() as u64,
                _ => ref_to_half(x, dt == "bf16", r) as u64,
            };
            chk.check(&format!("{} [{path}]", ops[k].name), c, w, g[0], g[0] == w);
        });
    }
    // Integer sources: midpoints of the destination grid ± 1 across each type's range.
    for st in ["s32", "u32", "s64", "u64"] {
        let bits: u32 = st[1..].parse().unwrap();
        let signed = st.starts_with('s');
        let mut vals: Vec<u64> = Vec::new();
        for p in [8u32, 11, 24, 53] {
            for k in p..bits {
                for _ in 0..3 {
                    let top = 1u128 << (p - 1);
                    let frac = rng.u64() as u128 % top;
                    let mid = ((top + frac) << (k + 1 - p)) + (1u128 << (k - p));
                    for d in [-1i128, 0, 1] {
                        let i = mid as i128 + d;
                        let lim = if signed {
                            1i128 << (bits - 1)
                        } else {
                            1i128 << bits
                        };
                        if i >= 0 && i < lim {
                            vals.push(i as u64);
                            if signed {
                                vals.push((-i) as u64 & mask(u64::MAX, bits));
                            }
                        }
                    }
                }
            }
        }
        vals.extend([0, 1, mask(u64::MAX, bits), 1u64 << (bits - 1)]);
        let mut ops = Vec::new();
        let mut meta = Vec::new();
        for dt in ["f16", "bf16", "f32", "f64"] {
            for r in rnds {
                ops.push(Op::ins(dt, format!("cvt.{r}.{dt}.{st} $d, $a;")));
                meta.push((dt, r));
            }
        }
        let cases: Vec<Vec<u64>> = vals.iter().map(|&x| vec![x]).collect();
        both_paths(&mut chk, &[st], &ops, &cases, |chk, k, c, g, path| {
            let (dt, r) = meta[k];
            let i = if signed {
                sext(c[0], bits) as i64 as i128
            } else {
                mask(c[0], bits) as i128
            };
            let w = match dt {
                "f64" => round_int(i, 53, r).to_bits(),
                "f32" => (round_int(i, 24, r) as f32).to_bits() as u64,
                "bf16" => ref_to_half(round_int(i, 8, r), true, r) as u64,
                _ => ref_to_half(round_int(i, 11, r), false, r) as u64,
            };
            chk.check(&format!("{} [{path}]", ops[k].name), c, w, g[0], g[0] == w);
        });
    }
    finish(chk);
}

// ---------------------------------------------------------------------------------------------
// tf32

/// `cvt.{r}{.satfinite}{.relu}.tf32.f32` of the f32 bits `a`: the value rounded to 10 stored
/// mantissa bits in f32's exponent range, in a .b32 (low 13 bits zero). Overflow gives ±inf,
/// with .satfinite ±MAX_NORM (0x7f7fe000, also for ±inf inputs); .relu clamps negative results
/// to +0 (-0 too). NaN: checked to be a NaN (canonical with .relu).
fn ref_tf32(r: &str, satfinite: bool, relu: bool, a: u64) -> u64 {
    let x = f32::from_bits(a as u32) as f64;
    // -0 counts as negative, as for the other .relu forms (tests/cpu_instr_float.rs).
    let x = if relu && x.is_sign_negative() { 0.0 } else { x };
    let max = f32::from_bits(0x7f7f_e000) as f64;
    let v = if x.is_infinite() {
        x
    } else {
        ref_round(x, 10, -126, r)
    };
    let v = if v.abs() > f32::MAX as f64 || v.is_infinite() {
        if satfinite {
            max.copysign(v)
        } else {
            f64::INFINITY.copysign(v)
        }
    } else {
        v
    };
    (v as f32).to_bits() as u64
}

#[test]
fn cvt_tf32_every_rounding() {
    let mut chk = Checker::new("cvt tf32.f32");
    let mut rng = Rng::new(0x7f32);
    let mut vals: Vec<u64> = ptx_ref::floats32(4000, 0x7f33)
        .into_iter()
        .map(|x| x as u64)
        .collect();
    // Ties and neighbours of ties of the tf32 grid, around MAX and in the subnormals.
    for _ in 0..2000 {
        let b = rng.u32() & !0x1fff;
        for lo in [0x1000u32, 0xfff, 0x1001, 0x1fff, 1] {
            vals.push((b | lo) as u64);
        }
    }
    vals.extend([
        0x7f7f_efffu64,
        0x7f7f_f000,
        0x7f7f_ffff,
        0xff7f_f000,
        0x0000_1000,
        0x8000_3000,
    ]);
    let mut ops = Vec::new();
    let mut meta = Vec::new();
    for (r, forms) in [
        ("rna", &["", ".satfinite"][..]),
        ("rn", &["", ".relu", ".satfinite", ".satfinite.relu"][..]),
        ("rz", &["", ".relu", ".satfinite", ".satfinite.relu"][..]),
    ] {
        for m in forms {
            ops.push(Op::ins("b32", format!("cvt.{r}{m}.tf32.f32 $d, $a;")));
            meta.push((r, m.contains("satfinite"), m.contains("relu")));
        }
    }
    let cases: Vec<Vec<u64>> = vals.iter().map(|&x| vec![x]).collect();
    both_paths(&mut chk, &["f32"], &ops, &cases, |chk, k, c, g, path| {
        let (r, sf, relu) = meta[k];
        let name = format!("{} [{path}]", ops[k].name);
        if f32::from_bits(c[0] as u32).is_nan() {
            let ok = f32::from_bits(g[0] as u32).is_nan() && (!relu || g[0] == 0x7fff_ffff);
            chk.check_msg(&name, c, "a NaN (canonical with .relu)", g[0], ok);
            return;
        }
        let w = ref_tf32(r, sf, relu, c[0]);
        chk.check(&name, c, w, g[0], g[0] == w);
    });
    finish(chk);
}

// ---------------------------------------------------------------------------------------------
// Stochastic rounding

const RS_SUBNORMAL: &str = "cvt.rs to an f16 subnormal";

/// `cvt.rs` of the f32 bits `a` to f16/bf16 with the random bits `r` (13 bits for f16, 16 for
/// bf16): the value truncated toward zero, one ulp away from zero when the discarded bits plus
/// `r` carry out of their width (PTX ISA 9.2, cvt, `rbits`). Returns the 16-bit result and,
/// where the manual's figures leave the result open, the rule and the results it allows.
fn ref_rs(
    bf: bool,
    relu: bool,
    satfinite: bool,
    a: u32,
    r: u32,
) -> (u16, Option<(&'static str, [u16; 2])>) {
    let x = f32::from_bits(a);
    let neg = a >> 31 == 1;
    let sign = if neg { 0x8000u16 } else { 0 };
    let max = if bf { 0x7f7fu16 } else { 0x7bff };
    let inf = if bf { 0x7f80u16 } else { 0x7c00 };
    let fin = |v: u16| -> u16 {
        let v = if satfinite && v & 0x7fff == inf {
            sign | max
        } else {
            v
        };
        if relu && v & 0x8000 != 0 {
            0
        } else {
            v
        }
    };
    if x.is_nan() {
        return (0x7fff, None);
    }
    if x.is_infinite() {
        return (fin(sign | inf), None);
    }
    let k = if bf { 16 } else { 13 };
    let rk = r & ((1 << k) - 1);
    if bf {
        let t = (a >> 16) as u16;
        let carry = (a & 0xffff) + rk >= 0x1_0000;
        return (fin(t + carry as u16), None);
    }
    // f16: truncation toward zero, in range, of a normal result.
    let ax = x.abs() as f64;
    let t = ref_to_half(x as f64, false, "rz");
    if ax < 2f64.powi(-14) {
        let up = t + 1;
        return (fin(t), Some((RS_SUBNORMAL, [fin(t), fin(up)])));
    }
    if ax >= 65536.0 {
        // MAX_NORM + one ulp or more: the discarded part alone is a whole ulp, so the carry
        // always happens: infinity (MAX_NORM with .satfinite).
        return (fin(sign | inf), None);
    }
    let carry = (a & 0x1fff) + rk >= 0x2000;
    (fin(t + carry as u16), None)
}

#[test]
fn cvt_rs_stochastic_rounding() {
    let mut chk = Checker::new("cvt.rs f16x2/bf16x2");
    let mut rng = Rng::new(0x5709);
    let fl: Vec<u32> = ptx_ref::floats32(3000, 0x570a);
    let mut cases = Vec::new();
    for (i, &a) in fl.iter().enumerate() {
        let b = fl[(i * 7 + 3) % fl.len()];
        // Random bits, and the two extremes.
        let r = match i % 4 {
            0 => 0,
            1 => 0x1fff_1fff,
            _ => rng.u32(),
        };
        cases.push(vec![a as u64, b as u64, r as u64]);
    }
    let mut ops = Vec::new();
    let mut meta = Vec::new();
    for bf in [false, true] {
        let t = if bf { "bf16x2" } else { "f16x2" };
        for m in ["", ".relu", ".satfinite", ".relu.satfinite"] {
            ops.push(Op::ins("b32", format!("cvt.rs{m}.{t}.f32 $d, $a, $b, $c;")));
            meta.push((bf, m.contains("relu"), m.contains("satfinite")));
        }
    }
    both_paths(
        &mut chk,
        &["f32", "f32", "b32"],
        &ops,
        &cases,
        |chk, k, c, g, path| {
            let (bf, relu, sf) = meta[k];
            // f16: 13 random bits per half, the 3 bits above them zero (the manual's layout).
            let r = if bf { c[2] } else { c[2] & 0x1fff_1fff };
            let (hi, ohi) = ref_rs(bf, relu, sf, c[0] as u32, (r >> 16) as u32);
            let (lo, olo) = ref_rs(bf, relu, sf, c[1] as u32, r as u32 & 0xffff);
            let want = (hi as u64) << 16 | lo as u64;
            let name = format!("{} [{path}]", ops[k].name);
            let nan = |v: u64| is_nan(if bf { "bf16" } else { "f16" }, v);
            // Each half: exact, a NaN for a NaN input, or one of the results an open rule allows.
            let mut open: Option<&str> = None;
            let mut ok = true;
            for (sh, w, o, src) in [(16, hi, ohi, c[0]), (0, lo, olo, c[1])] {
                let gh = (g[0] >> sh) & 0xffff;
                if f32::from_bits(src as u32).is_nan() {
                    ok &= nan(gh);
                    continue;
                }
                if gh == w as u64 {
                    continue;
                }
                match o {
                    Some((why, allowed)) if allowed.contains(&(gh as u16)) => open = Some(why),
                    _ => ok = false,
                }
            }
            let nan_in =
                f32::from_bits(c[0] as u32).is_nan() || f32::from_bits(c[1] as u32).is_nan();
            match open {
                Some(why) if ok => chk.check_open(&name, c, want, g[0], Some((why, true))),
                _ if nan_in => chk.check_msg(
                    &name,
                    c,
                    &format!("{want:#x} (NaN halves: any NaN)"),
                    g[0],
                    ok,
                ),
                _ => chk.check(&name, c, want, g[0], ok && g[0] == want),
            }
        },
    );
    finish(chk);
}

// ---------------------------------------------------------------------------------------------
// Small float formats (e4m3, e5m2, e2m3, e3m2, e2m1): encode from f32 pairs and f16x2, decode
// to f16x2, on the vectorized path too (`tests/lower_consteval.rs` runs them as scalar
// functions; the references are shared, `ptx_ref::{ref_encode, ref_decode}`).

const SMALL_NAN: &str = "NaN from a small-format conversion";

#[test]
fn small_formats_both_paths() {
    let mut chk = Checker::new("cvt small float formats");
    let fmts = ["e4m3", "e5m2", "e2m3", "e3m2", "e2m1"];
    // Encode from two f32: every midpoint of each format's grid and its f32 neighbours, the
    // specials and random values.
    let mut rng = Rng::new(0xe4e3);
    let mut vals: Vec<u32> = ptx_ref::floats32(1500, 0xe4e4);
    for f in fmts {
        let (e, m, bias, max, _) = ptx_ref::small_fmt(f);
        let emin = 1 - bias;
        for ex in (emin - m)..=((1 << e) - 1 - bias) {
            for j in 0..(1u32 << m) {
                let ulp = 2f64.powi(ex.max(emin) - m);
                let y = if ex >= emin {
                    ((1u32 << m) + j) as f64 * ulp
                } else {
                    j as f64 * ulp
                };
                for x in [y, y + ulp / 2.0, max, max + ulp / 2.0, max * 1.5] {
                    let x = x as f32;
                    for v in [x, x.next_up(), x.next_down(), -x] {
                        vals.push(v.to_bits());
                    }
                }
            }
        }
    }
    for _ in 0..500 {
        vals.push(rng.u32());
    }
    let cases: Vec<Vec<u64>> = vals
        .iter()
        .enumerate()
        .map(|(k, &a)| vec![a as u64, vals[(k * 13 + 7) % vals.len()] as u64])
        .collect();
    let mut ops = Vec::new();
    let mut meta = Vec::new();
    for f in fmts {
        for relu in ["", ".relu"] {
            let text = format!("cvt.rn.satfinite{relu}.{f}x2.f32");
            ops.push(if f == "e2m1" {
                // A .b8 destination (the harness keeps 8-bit values in 16-bit registers).
                Op::new(
                    format!("{text} $d, $a, $b;"),
                    "b16",
                    format!("{{\n\t.reg .b8 %z$k;\n\t{text} %z$k, $a, $b;\n\tcvt.u16.u8 $d, %z$k;\n\t}}"),
                )
            } else {
                Op::ins("b16", format!("{text} $d, $a, $b;"))
            });
            meta.push((f, !relu.is_empty()));
        }
    }
    let bits_of = |f: &str| ptx_ref::small_fmt(f).0 + ptx_ref::small_fmt(f).1 + 1;
    both_paths(
        &mut chk,
        &["f32", "f32"],
        &ops,
        &cases,
        |chk, k, c, g, path| {
            let (f, relu) = meta[k];
            let lane = if f == "e2m1" { 4 } else { 8 };
            let enc = |x: u64| ptx_ref::ref_encode(f32::from_bits(x as u32) as f64, f, relu) as u64;
            let want = (enc(c[0]) << lane) | enc(c[1]);
            let name = format!("{} [{path}]", ops[k].name);
            // A NaN input: any NaN of the format (e4m3: S.1111.111; e5m2: S.11111.xx, xx ≠ 0).
            let (_, _, _, _, has_nan) = ptx_ref::small_fmt(f);
            let nan_code = |v: u64| match f {
                "e4m3" => v & 0x7f == 0x7f,
                "e5m2" => v & 0x7c == 0x7c && v & 3 != 0,
                _ => false,
            };
            let mut open_ok = true;
            let mut any_open = false;
            for (sh, x) in [(lane, c[0]), (0, c[1])] {
                let gl = (g[0] >> sh) & ((1 << lane) - 1);
                let wl = enc(x);
                if has_nan && f32::from_bits(x as u32).is_nan() {
                    any_open = true;
                    open_ok &= nan_code(gl);
                } else {
                    open_ok &= gl == wl;
                }
            }
            let open = any_open.then_some((SMALL_NAN, open_ok));
            chk.check_open(&name, c, want, g[0], open);
        },
    );
    // Decode: every pair of codes (e2m1: all 256 bytes; 6-bit formats: codes with the two
    // bits above each lane zero) to f16x2, with and without .relu.
    for f in fmts {
        let lane = if f == "e2m1" { 4 } else { 8 };
        let width = bits_of(f) as u32;
        let codes: Vec<u64> = (0..(1u64 << (2 * lane)))
            .filter(|c| (c & 0xff) >> width == 0 && (c >> lane) >> width == 0)
            .collect();
        let mut ops = Vec::new();
        for relu in ["", ".relu"] {
            let text = format!("cvt.rn{relu}.f16x2.{f}x2");
            ops.push(if f == "e2m1" {
                Op::new(
                    format!("{text} $d, $a;"),
                    "b32",
                    format!(
                        "{{\n\t.reg .b8 %x$k;\n\tcvt.u8.u16 %x$k, $a;\n\t{text} $d, %x$k;\n\t}}"
                    ),
                )
            } else {
                Op::ins("b32", format!("{text} $d, $a;"))
            });
        }
        let cases: Vec<Vec<u64>> = codes.iter().map(|&c| vec![c]).collect();
        both_paths(&mut chk, &["b16"], &ops, &cases, |chk, k, c, g, path| {
            let relu = k == 1;
            let name = format!("{} [{path}]", ops[k].name);
            let mut want = 0u64;
            let mut nan_ok = true;
            let mut any_nan = false;
            for i in 0..2 {
                let code = (c[0] >> (lane * i)) & ((1 << lane) - 1);
                let v = ptx_ref::ref_decode(code as u32, f);
                let gl = (g[0] >> (16 * i)) & 0xffff;
                if v.is_nan() {
                    // .relu: the canonical NaN; otherwise any NaN.
                    any_nan = !relu;
                    want |= 0x7fff << (16 * i);
                    nan_ok &= if relu {
                        gl == 0x7fff
                    } else {
                        is_nan("f16", gl)
                    };
                    continue;
                }
                let v = if relu && v.is_sign_negative() { 0.0 } else { v };
                let w = ref_to_half(v, false, "rn") as u64;
                want |= w << (16 * i);
                nan_ok &= gl == w;
            }
            let open = any_nan.then_some((SMALL_NAN, nan_ok));
            chk.check_open(&name, c, want, g[0], open);
        });
    }
    finish(chk);
}

// ---------------------------------------------------------------------------------------------
// ue8m0 and cvt.pack

/// `cvt.{rz,rp}{.satfinite}.ue8m0x2` of one value: the code of 2^(code − 127) at or below (rz)
/// or at or above (rp) `x`. There is no zero and no sign: non-positive inputs give the smallest
/// code 0 (the lowering's reading: the manual gives no rule); too large values and +inf give
/// 0xfe with .satfinite ("positive MAX_NORM"), else 0xff, the NaN; NaN gives 0xff.
fn ref_ue8m0(x: f64, rp: bool, satfinite: bool) -> u64 {
    if x.is_nan() {
        return 0xff;
    }
    if x <= 0.0 {
        return 0;
    }
    if x.is_infinite() {
        return if satfinite { 0xfe } else { 0xff };
    }
    // floor(log2 x) exactly, subnormals included.
    let mut e = x.log2().floor() as i32;
    while 2f64.powi(e) > x {
        e -= 1;
    }
    while 2f64.powi(e + 1) <= x {
        e += 1;
    }
    let e = if rp && 2f64.powi(e) != x { e + 1 } else { e };
    let code = (e + 127).max(0);
    if code > 254 {
        if satfinite {
            0xfe
        } else {
            0xff
        }
    } else {
        code as u64
    }
}

#[test]
fn cvt_ue8m0_and_pack() {
    let mut chk = Checker::new("cvt ue8m0x2 and cvt.pack.sat");
    // ue8m0 from two f32, and from bf16x2.
    let mut vals: Vec<u32> = ptx_ref::floats32(3000, 0x0e8);
    for k in -150..=128 {
        let p = 2f32.powi(k);
        vals.extend([p.to_bits(), p.next_up().to_bits(), p.next_down().to_bits()]);
    }
    vals.extend([1, 0x8000_0001, 0x7f7f_ffff, 0x7f00_0000, 0x7f00_0001]);
    let cases: Vec<Vec<u64>> = vals
        .iter()
        .enumerate()
        .map(|(k, &a)| {
            let b = vals[(k * 5 + 2) % vals.len()];
            // The bf16x2 operand: the upper halves of a and b.
            vec![a as u64, b as u64, ((a >> 16) << 16 | (b >> 16)) as u64]
        })
        .collect();
    let mut ops = Vec::new();
    let mut meta = Vec::new();
    for r in ["rz", "rp"] {
        for sf in ["", ".satfinite"] {
            ops.push(Op::ins(
                "b16",
                format!("cvt.{r}{sf}.ue8m0x2.f32 $d, $a, $b;"),
            ));
            meta.push((r == "rp", !sf.is_empty(), false));
            ops.push(Op::ins(
                "b16",
                format!("cvt.{r}{sf}.ue8m0x2.bf16x2 $d, $c;"),
            ));
            meta.push((r == "rp", !sf.is_empty(), true));
        }
    }
    both_paths(
        &mut chk,
        &["f32", "f32", "b32"],
        &ops,
        &cases,
        |chk, k, c, g, path| {
            let (rp, sf, bf) = meta[k];
            let (hi, lo) = if bf {
                (
                    half_to_f64((c[2] >> 16) as u16, true),
                    half_to_f64(c[2] as u16, true),
                )
            } else {
                (
                    f32::from_bits(c[0] as u32) as f64,
                    f32::from_bits(c[1] as u32) as f64,
                )
            };
            let w = (ref_ue8m0(hi, rp, sf) << 8) | ref_ue8m0(lo, rp, sf);
            chk.check(&format!("{} [{path}]", ops[k].name), c, w, g[0], g[0] == w);
        },
    );
    // Decode: every pair of codes.
    let ops = vec![Op::ins("b32", "cvt.rn.bf16x2.ue8m0x2 $d, $a;")];
    let cases: Vec<Vec<u64>> = (0..0x10000u64).map(|c| vec![c]).collect();
    both_paths(&mut chk, &["b16"], &ops, &cases, |chk, k, c, g, path| {
        let mut want = 0u64;
        let mut ok = true;
        for i in 0..2 {
            let code = (c[0] >> (8 * i)) & 0xff;
            let gl = (g[0] >> (16 * i)) & 0xffff;
            if code == 0xff {
                want |= 0x7fff << (16 * i);
                ok &= is_nan("bf16", gl);
            } else {
                // 2^(code-127) as bf16 bits (code 0 is the subnormal 2^-127).
                let w = ptx_ref::ref_to_half(2f64.powi(code as i32 - 127), true, "rn") as u64;
                want |= w << (16 * i);
                ok &= gl == w;
            }
        }
        chk.check_msg(
            &format!("{} [{path}]", ops[k].name),
            c,
            &format!("{want:#x} (0xff lanes: any NaN)"),
            g[0],
            ok,
        );
    });
    // cvt.pack.sat: every small range's edges and random values.
    let mut ints: Vec<u64> = vec![
        0, 1, 2, 3, 4, 7, 8, 15, 16, 127, 128, 255, 256, 32767, 32768, 65535, 65536,
    ];
    for v in ints.clone() {
        ints.push((v as i64).wrapping_neg() as u64 & 0xffff_ffff);
        ints.push((v as i64 - 1) as u64 & 0xffff_ffff);
    }
    ints.extend([0x7fff_ffff, 0x8000_0000, 0xffff_ffff]);
    let mut rng = Rng::new(0xbac);
    let mut cases = Vec::new();
    for (i, &a) in ints.iter().enumerate() {
        for &b in &ints {
            cases.push(vec![a, b, (rng.u32() as u64) ^ i as u64]);
        }
    }
    let mut ops = Vec::new();
    let mut meta = Vec::new();
    for (t, size, signed) in [
        ("u16", 16u32, false),
        ("s16", 16, true),
        ("u8", 8, false),
        ("s8", 8, true),
        ("u4", 4, false),
        ("s4", 4, true),
        ("u2", 2, false),
        ("s2", 2, true),
    ] {
        let text = if size == 16 {
            format!("cvt.pack.sat.{t}.s32 $d, $a, $b;")
        } else {
            format!("cvt.pack.sat.{t}.s32.b32 $d, $a, $b, $c;")
        };
        ops.push(Op::ins("b32", text));
        meta.push((size, signed));
    }
    both_paths(
        &mut chk,
        &["s32", "s32", "b32"],
        &ops,
        &cases,
        |chk, k, c, g, path| {
            let (size, signed) = meta[k];
            let (lo, hi) = if signed {
                (-(1i64 << (size - 1)), (1i64 << (size - 1)) - 1)
            } else {
                (0, (1i64 << size) - 1)
            };
            let sat = |v: u64| (sext(v, 32) as i64).clamp(lo, hi) as u64 & mask(u64::MAX, size);
            let td = (sat(c[0]) << size) | sat(c[1]);
            let w = if size == 16 {
                td
            } else {
                (td | (c[2] << (2 * size))) & 0xffff_ffff
            };
            chk.check(&format!("{} [{path}]", ops[k].name), c, w, g[0], g[0] == w);
        },
    );
    finish(chk);
}

// ---------------------------------------------------------------------------------------------
// Directed rounding at the edges: results near the subnormal range, MIN_NORMAL, overflow and
// after cancellation, where the rounding hooks (`Target::rounded_op`: the round-to-nearest
// result stepped by one ulp) have the most cases.

/// Uniform in lo..=hi.
fn rint(rng: &mut Rng, lo: i32, hi: i32) -> i32 {
    lo + (rng.u64() % (hi - lo + 1) as u64) as i32
}

/// A float of `mbits` stored mantissa bits with a random mantissa and the exponent `e`.
fn rand_float(rng: &mut Rng, e: i32, f64_: bool) -> f64 {
    let neg = rng.u64() & 1 == 1;
    let v = if f64_ {
        let m = (rng.u64() >> 11) | (1 << 52);
        m as f64 * 2f64.powi(e - 52)
    } else {
        let m = (rng.u32() >> 8) | (1 << 23);
        m as f64 * 2f64.powi(e - 23)
    };
    // Sometimes a short mantissa, so that products and sums land on ties exactly.
    let v = if rng.u64().is_multiple_of(4) {
        let t = 2f64.powi(e - 3);
        (v / t).round() * t
    } else {
        v
    };
    if neg {
        -v
    } else {
        v
    }
}

/// Operand triples whose results fall near the edges of the format.
fn edge_triples(rng: &mut Rng, f64_: bool, n: usize) -> Vec<[f64; 3]> {
    let (emin, emax, p) = if f64_ {
        (-1022, 1023, 53)
    } else {
        (-126, 127, 24)
    };
    let mut v = Vec::with_capacity(n);
    for i in 0..n {
        let t = match i % 6 {
            // Products in the subnormal range and around MIN_NORMAL.
            0 => {
                let ea = rint(rng, emin / 2 - 10, emin / 2 + 10);
                let eb = emin - ea + rint(rng, -p - 2, 3);
                [rand_float(rng, ea, f64_), rand_float(rng, eb, f64_), 0.0]
            }
            // Products around MAX and beyond.
            1 => {
                let ea = rint(rng, emax / 2 - 5, emax / 2 + 5);
                let eb = emax - ea + rint(rng, -2, 2);
                [rand_float(rng, ea, f64_), rand_float(rng, eb, f64_), 0.0]
            }
            // Cancellation: a − b with a ≈ b, and fma with a·b ≈ −c.
            2 => {
                let e = rint(rng, emin, emax);
                let a = rand_float(rng, e, f64_);
                let d = {
                    let ex = e - rint(rng, 1, p + 3);
                    rand_float(rng, ex, f64_)
                };
                [a, a + d, -(a * a)]
            }
            // Tiny plus large (sticky bits), and sums near MIN_NORMAL.
            3 => {
                let e = rint(rng, emin, emin + 4);
                [
                    rand_float(rng, e, f64_),
                    {
                        let ex = e - rint(rng, 0, 3);
                        rand_float(rng, ex, f64_)
                    },
                    rand_float(rng, emin + 1, f64_),
                ]
            }
            // Quotients around MIN_NORMAL and MAX.
            4 => {
                let ea = rint(rng, emin, emin + p);
                let eb = rint(rng, 0, p + 2);
                if rng.u64() & 1 == 0 {
                    [rand_float(rng, ea, f64_), rand_float(rng, eb, f64_), 0.0]
                } else {
                    [
                        {
                            let ex = emax - rint(rng, 0, 2);
                            rand_float(rng, ex, f64_)
                        },
                        {
                            let ex = -rint(rng, 0, 3);
                            rand_float(rng, ex, f64_)
                        },
                        0.0,
                    ]
                }
            }
            // Subnormal operands (sqrt, rcp, ftz).
            _ => {
                let e = rint(rng, emin - p + 1, emin);
                [
                    rand_float(rng, e, f64_).abs(),
                    {
                        let ex = rint(rng, emin, emax);
                        rand_float(rng, ex, f64_)
                    },
                    rand_float(rng, e, f64_),
                ]
            }
        };
        let t = if f64_ { t } else { t.map(|x| x as f32 as f64) };
        v.push(t);
    }
    v
}

fn ref_arith(op: &str, r: &str, f64_: bool, ftz: bool, sat: bool, x: [f64; 3]) -> u64 {
    if f64_ {
        let [a, b, c] = x;
        return f64_op(op, r, a, b, c).to_bits();
    }
    let fl = |v: f32| {
        if ftz && v != 0.0 && v.abs() < f32::MIN_POSITIVE {
            0.0f32.copysign(v)
        } else {
            v
        }
    };
    let [a, b, c] = x.map(|v| fl(v as f32));
    let v = with_mode(mode_of(r), || match op {
        "add" => bb(a) + bb(b),
        "sub" => bb(a) - bb(b),
        "mul" => bb(a) * bb(b),
        "div" => bb(a) / bb(b),
        "fma" => bb(a).mul_add(bb(b), bb(c)),
        "sqrt" => bb(a).sqrt(),
        _ => 1.0 / bb(a),
    });
    let v = fl(v);
    let v = if sat {
        if v.is_nan() || v <= 0.0 {
            0.0
        } else {
            v.min(1.0)
        }
    } else {
        v
    };
    v.to_bits() as u64
}

#[test]
fn float_rounding_at_the_edges() {
    let mut chk = Checker::new("f32/f64 arithmetic at the format's edges, every rounding");
    let mut rng = Rng::new(0xed9e);
    for f64_ in [false, true] {
        let t = if f64_ { "f64" } else { "f32" };
        let triples = edge_triples(&mut rng, f64_, 12_000);
        let cases: Vec<Vec<u64>> = triples
            .iter()
            .map(|x| {
                x.iter()
                    .map(|&v| {
                        if f64_ {
                            v.to_bits()
                        } else {
                            (v as f32).to_bits() as u64
                        }
                    })
                    .collect()
            })
            .collect();
        // The generator must reach the edges: subnormal and overflowing results.
        let (mut sub, mut big) = (0, 0);
        for x in &triples {
            for op in ["mul", "sub", "div"] {
                let v = ref_arith(op, "rn", f64_, false, false, *x);
                let v = if f64_ {
                    f64::from_bits(v)
                } else {
                    f32::from_bits(v as u32) as f64
                };
                let (min, max) = if f64_ {
                    (f64::MIN_POSITIVE, f64::MAX)
                } else {
                    (f32::MIN_POSITIVE as f64, f32::MAX as f64)
                };
                sub += (v != 0.0 && v.abs() < min) as usize;
                big += (v.abs() > max / 2.0) as usize;
            }
        }
        assert!(
            sub > triples.len() / 10 && big > triples.len() / 20,
            "{t}: {sub} subnormal and {big} near-overflow results of {}",
            3 * triples.len()
        );
        println!("{t}: {sub} subnormal and {big} near-overflow results among mul/sub/div (rn)");
        let mut ops = Vec::new();
        let mut meta = Vec::new();
        for op in ["add", "sub", "mul", "fma", "div", "sqrt", "rcp"] {
            for r in ["rn", "rz", "rm", "rp"] {
                let mods: &[(bool, bool)] = if f64_ {
                    &[(false, false)]
                } else if matches!(op, "add" | "sub" | "mul" | "fma") {
                    &[(false, false), (true, false), (true, true)]
                } else {
                    &[(false, false), (true, false)]
                };
                for &(ftz, sat) in mods {
                    let m = format!(
                        ".{r}{}{}",
                        if ftz { ".ftz" } else { "" },
                        if sat { ".sat" } else { "" }
                    );
                    let args = match op {
                        "fma" => "$d, $a, $b, $c",
                        "sqrt" | "rcp" => "$d, $a",
                        _ => "$d, $a, $b",
                    };
                    ops.push(Op::ins(t, format!("{op}{m}.{t} {args};")));
                    meta.push((op, r, ftz, sat));
                }
            }
        }
        both_paths(&mut chk, &[t, t, t], &ops, &cases, |chk, k, c, g, path| {
            let (op, r, ftz, sat) = meta[k];
            let x = if f64_ {
                [c[0], c[1], c[2]].map(f64::from_bits)
            } else {
                [c[0], c[1], c[2]].map(|v| f32::from_bits(v as u32) as f64)
            };
            let w = ref_arith(op, r, f64_, ftz, sat, x);
            let ok = w == g[0] || is_nan(t, w) && is_nan(t, g[0]);
            chk.check(&format!("{} [{path}]", ops[k].name), c, w, g[0], ok);
        });
    }
    finish(chk);
}
