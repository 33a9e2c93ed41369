//! Reference implementations of PTX instruction semantics, written from the Semantics sections
//! of the PTX ISA 9.2 manual (`/work/shared/spec/instructions/*.txt`, cvt in
//! `ptx-isa-9.2-data-movement.md`), plus the host-FPU rounding-mode helpers and input generators
//! the instruction tests share (`tests/lower_consteval.rs`: the shared lowering through a host
//! JIT; `tests/cpu_instr_*.rs`: kernels on the cpu target). Include with
//! `#[path = "common/ptx_ref.rs"] mod ptx_ref;`.
#![allow(dead_code)]

// ---- host FPU rounding mode ------------------------------------------------------------------

pub const RN: i32 = 0;
pub const RM: i32 = 0x400;
pub const RP: i32 = 0x800;
pub const RZ: i32 = 0xc00;

extern "C" {
    pub fn fesetround(mode: i32) -> i32;
}

pub fn bb<T>(x: T) -> T {
    std::hint::black_box(x)
}

/// Runs `f` with the host FPU rounding mode `mode` (x86 `FE_*` values).
pub fn with_mode<T>(mode: i32, f: impl FnOnce() -> T) -> T {
    // SAFETY: `fesetround` only changes this thread's FPU rounding mode; restored below.
    unsafe { fesetround(mode) };
    let r = bb(f());
    // SAFETY: restores round-to-nearest, the Rust default.
    unsafe { fesetround(RN) };
    r
}

pub fn mode_of(r: &str) -> i32 {
    match r {
        "rn" => RN,
        "rz" => RZ,
        "rm" => RM,
        _ => RP,
    }
}

// ---- inputs ----------------------------------------------------------------------------------

/// A small deterministic PRNG (xorshift64*).
pub struct Rng(pub u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9e3779b97f4a7c15) | 1)
    }
    pub fn u64(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545f4914f6cdd1d)
    }
    pub fn u32(&mut self) -> u32 {
        (self.u64() >> 32) as u32
    }
}

/// Boundary values and random 32-bit values.
pub fn ints32(n: usize, seed: u64) -> Vec<u32> {
    let mut v = vec![
        0,
        1,
        2,
        3,
        7,
        8,
        15,
        16,
        31,
        32,
        33,
        63,
        64,
        127,
        128,
        255,
        256,
        0x7fff,
        0x8000,
        0xffff,
        0x10000,
        0x7fff_ffff,
        0x8000_0000,
        0x8000_0001,
        0xffff_fffe,
        0xffff_ffff,
        0x1234_5678,
        0x8765_4321,
        0xdead_beef,
        0x00ff_00ff,
        0xff00_ff00,
    ];
    let mut r = Rng::new(seed);
    while v.len() < n {
        v.push(r.u32());
    }
    v
}

pub fn ints64(n: usize, seed: u64) -> Vec<u64> {
    let mut v: Vec<u64> = vec![
        0,
        1,
        2,
        31,
        32,
        63,
        64,
        0xffff_ffff,
        0x1_0000_0000,
        0x7fff_ffff_ffff_ffff,
        0x8000_0000_0000_0000,
        0xffff_ffff_ffff_ffff,
        0x0123_4567_89ab_cdef,
        0xfedc_ba98_7654_3210,
    ];
    let mut r = Rng::new(seed);
    while v.len() < n {
        v.push(r.u64());
    }
    v
}

// ---- references (PTX ISA 9.2 Semantics sections) ----------------------------------------------

/// `bfe`/`bfi`'s position and length: the low 8 bits for 32-bit forms, all 32 bits for 64-bit
/// ones (the hardware's erratum, which vosen/ptx_tests checks; the ISA text says 8 bits).
fn field(bits: u32, v: u32) -> u64 {
    if bits == 64 {
        v as u64
    } else {
        (v & 0xff) as u64
    }
}

pub fn ref_bfe(a: u64, b: u32, c: u32, bits: u32, signed: bool) -> u64 {
    let msb = bits as u64 - 1;
    let pos = field(bits, b);
    let len = field(bits, c);
    let sbit = if !signed || len == 0 {
        0
    } else {
        (a >> (pos + len - 1).min(msb)) & 1
    };
    let mut d = 0u64;
    for i in 0..=msb {
        let bit = if i < len && pos + i <= msb {
            (a >> (pos + i)) & 1
        } else {
            sbit
        };
        d |= bit << i;
    }
    d
}

pub fn ref_bfi(a: u64, b: u64, c: u32, d: u32, bits: u32) -> u64 {
    let msb = bits as u64 - 1;
    let pos = field(bits, c);
    let len = field(bits, d);
    let mut f = b;
    let mut i = 0;
    while i < len && pos + i <= msb {
        f = (f & !(1 << (pos + i))) | (((a >> i) & 1) << (pos + i));
        i += 1;
    }
    f
}

pub fn ref_prmt(a: u32, b: u32, c: u32, mode: &str) -> u32 {
    let tmp = ((b as u64) << 32) | a as u64;
    let byte = |k: u32| ((tmp >> (8 * (k & 7))) & 0xff) as u32;
    let mut d = 0u32;
    for i in 0..4u32 {
        let ctl = c & 3;
        let v = match mode {
            "" => {
                let s = (c >> (4 * i)) & 0xf;
                let v = byte(s & 7);
                if s & 8 != 0 {
                    if v & 0x80 != 0 {
                        0xff
                    } else {
                        0
                    }
                } else {
                    v
                }
            }
            // Tables of the prmt description (d.b0..d.b3 for c[1:0] = 0..3).
            "f4e" => byte(
                [[0, 1, 2, 3], [1, 2, 3, 4], [2, 3, 4, 5], [3, 4, 5, 6]][ctl as usize][i as usize],
            ),
            "b4e" => byte(
                [[0, 7, 6, 5], [1, 0, 7, 6], [2, 1, 0, 7], [3, 2, 1, 0]][ctl as usize][i as usize],
            ),
            "rc8" => byte(
                [[0, 0, 0, 0], [1, 1, 1, 1], [2, 2, 2, 2], [3, 3, 3, 3]][ctl as usize][i as usize],
            ),
            "ecl" => byte(
                [[0, 1, 2, 3], [1, 1, 2, 3], [2, 2, 2, 3], [3, 3, 3, 3]][ctl as usize][i as usize],
            ),
            "ecr" => byte(
                [[0, 0, 0, 0], [0, 1, 1, 1], [0, 1, 2, 2], [0, 1, 2, 3]][ctl as usize][i as usize],
            ),
            _ => byte(
                [[0, 1, 0, 1], [2, 3, 2, 3], [0, 1, 0, 1], [2, 3, 2, 3]][ctl as usize][i as usize],
            ),
        };
        d |= v << (8 * i);
    }
    d
}

pub fn ref_lop3(a: u32, b: u32, c: u32, lut: u32) -> u32 {
    let mut d = 0;
    for i in 0..32 {
        let k = (((a >> i) & 1) << 2) | (((b >> i) & 1) << 1) | ((c >> i) & 1);
        d |= ((lut >> k) & 1) << i;
    }
    d
}

pub fn ref_shf(a: u32, b: u32, c: u32, left: bool, clamp: bool) -> u32 {
    let n = if clamp { c.min(32) } else { c & 0x1f };
    let v = ((b as u64) << 32) | a as u64;
    if left {
        ((v << n) >> 32) as u32
    } else {
        (v >> n) as u32
    }
}

pub fn ref_fns(mask: u32, base: u32, offset: i32) -> u32 {
    let mut d = 0xffff_ffff;
    if offset == 0 {
        if (mask >> base) & 1 == 1 {
            d = base;
        }
    } else {
        let mut pos = base as i64;
        let mut count = offset.unsigned_abs() as i64 - 1;
        let inc = if offset > 0 { 1 } else { -1 };
        while (0..32).contains(&pos) {
            if (mask >> pos) & 1 == 1 {
                if count == 0 {
                    d = pos as u32;
                    break;
                }
                count -= 1;
            }
            pos += inc;
        }
    }
    d
}

pub fn ref_bfind(a: u64, bits: u32, signed: bool, shiftamt: bool) -> u32 {
    let msb = bits - 1;
    let mut a = a;
    if signed && (a >> msb) & 1 == 1 {
        a = !a;
    }
    let mut d = 0xffff_ffffu32;
    for i in (0..=msb).rev() {
        if (a >> i) & 1 == 1 {
            d = i;
            break;
        }
    }
    if shiftamt && d != 0xffff_ffff {
        d = msb - d;
    }
    d
}

pub fn ref_bmsk(a: u32, b: u32, clamp: bool) -> u32 {
    let a1 = a & 0x1f;
    let mut mask0 = !0u32 << a1;
    let b1 = b & 0x1f;
    let sum = a1 + b1;
    let mut mask1 = if sum >= 32 { 0 } else { !0u32 << sum };
    let sum_overflow = sum >= 32;
    let mut pos_overflow = false;
    let mut width_overflow = false;
    if clamp {
        if a >= 32 {
            pos_overflow = true;
            mask0 = 0;
        }
        if b >= 32 {
            width_overflow = true;
        }
    }
    if sum_overflow || pos_overflow || width_overflow {
        mask1 = 0;
    } else if b1 == 0 {
        mask1 = !0;
    }
    mask0 & !mask1
}

pub fn ref_szext(a: u32, b: u32, clamp: bool, signed: bool) -> u32 {
    let b1 = b & 0x1f;
    let too_large = b >= 32 && clamp;
    let mask = if too_large { 0 } else { !0u32 << b1 };
    let sign_pos = b1.wrapping_sub(1) & 0x1f;
    let sign_bit = if b1 == 0 || too_large || !signed {
        false
    } else {
        (a >> sign_pos) & 1 == 1
    };
    (a & !mask) | if sign_bit { mask } else { 0 }
}

pub fn ref_dp(two: bool, hi: bool, a: u32, b: u32, c: u32, sa: bool, sb: bool) -> u32 {
    let ext = |v: u32, bits: u32, s: bool| -> i64 {
        let m = v as u64 & ((1u64 << bits) - 1);
        if s && (m >> (bits - 1)) & 1 == 1 {
            m as i64 - (1i64 << bits)
        } else {
            m as i64
        }
    };
    let mut d = c as i64;
    if two {
        let sel = if hi { 2 } else { 0 };
        for i in 0..2 {
            d += ext(a >> (16 * i), 16, sa) * ext(b >> (8 * (sel + i)), 8, sb);
        }
    } else {
        for i in 0..4 {
            d += ext(a >> (8 * i), 8, sa) * ext(b >> (8 * i), 8, sb);
        }
    }
    d as u32
}

/// f32 test values: zeros, subnormals, normals near the boundaries, infinities, NaNs, and
/// random bit patterns.
pub fn floats32(n: usize, seed: u64) -> Vec<u32> {
    let mut v: Vec<u32> = vec![
        0,
        0x8000_0000,
        1,
        0x8000_0001,
        0x007f_ffff,
        0x807f_ffff,
        0x0080_0000,
        0x8080_0000,
        0x0080_0001,
        0x3f80_0000,
        0xbf80_0000,
        0x3f80_0001,
        0x3fff_ffff,
        0x4000_0000,
        0x3eaa_aaab,
        0x7f7f_ffff,
        0xff7f_ffff,
        0x7f00_0000,
        0x7f80_0000,
        0xff80_0000,
        0x7fc0_0000,
        0x7fff_ffff,
        0xffc0_0001,
        0x4b80_0000,
        0x4b7f_ffff,
        0x3400_0000,
        0x0040_0000,
        0x3f00_0000,
        0xbf00_0000,
        0x3fc0_0000,
        0x4020_0000,
        0x4f00_0000,
        0x5f00_0000,
        0xdf00_0000,
        0x477f_e000,
        0x477f_f000,
        0x3380_0000,
        0x3880_0000,
        0x3870_0000,
    ];
    let mut r = Rng::new(seed);
    while v.len() < n {
        let x = r.u32();
        // Mix in values with small exponent differences and near-subnormal magnitudes.
        let x = match v.len() % 4 {
            0 => x,
            1 => (x & 0x807f_ffff) | ((0x3f + (x >> 28)) << 23),
            2 => (x & 0x807f_ffff) | ((x >> 29) << 23),
            _ => (x & 0x81ff_ffff) | 0x3e00_0000,
        };
        v.push(x);
    }
    v
}

pub fn floats64(n: usize, seed: u64) -> Vec<u64> {
    let mut v: Vec<u64> = vec![
        0,
        0x8000_0000_0000_0000,
        1,
        0x8000_0000_0000_0001,
        0x000f_ffff_ffff_ffff,
        0x0010_0000_0000_0000,
        0x3ff0_0000_0000_0000,
        0xbff0_0000_0000_0000,
        0x3ff0_0000_0000_0001,
        0x7fef_ffff_ffff_ffff,
        0xffef_ffff_ffff_ffff,
        0x7ff0_0000_0000_0000,
        0xfff0_0000_0000_0000,
        0x7ff8_0000_0000_0000,
        0x4330_0000_0000_0000,
        0x3ca0_0000_0000_0000,
        0x7fe0_0000_0000_0000,
        0x4340_0000_0000_0000,
        0x43e0_0000_0000_0000,
        0xc3e0_0000_0000_0000,
        0x47ef_ffff_e000_0000,
        0x47ef_ffff_f000_0000,
        0x36a0_0000_0000_0000,
        0x3810_0000_0000_0000,
        // Products and quotients that underflow or overflow.
        0x1e00_0000_0000_0001,
        0x2000_0000_0000_0003,
        0x1fff_ffff_ffff_ffff,
        0xa000_0000_0000_0007,
        0x0000_0000_0000_0003,
        0x0008_0000_0000_0001,
        0x5fe0_0000_0000_0001,
        0x7fd0_0000_0000_0005,
        0x6000_0000_0000_0009,
        0xe000_0000_0000_000b,
    ];
    let mut r = Rng::new(seed);
    while v.len() < n {
        let x = r.u64();
        let x = match v.len() % 3 {
            0 => x,
            1 => (x & 0x800f_ffff_ffff_ffff) | ((0x3f0 + (x >> 60)) << 52),
            _ => (x & 0x803f_ffff_ffff_ffff) | 0x3fc0_0000_0000_0000,
        };
        v.push(x);
    }
    v
}

pub fn same32(a: u32, b: u32) -> bool {
    a == b || (f32::from_bits(a).is_nan() && f32::from_bits(b).is_nan())
}
pub fn same64(a: u64, b: u64) -> bool {
    a == b || (f64::from_bits(a).is_nan() && f64::from_bits(b).is_nan())
}

/// PTX `.ftz` on an f32: subnormals become sign-preserving zero.
pub fn ftz32(x: f32) -> f32 {
    if x.is_subnormal() {
        0.0f32.copysign(x)
    } else {
        x
    }
}

/// Rounds finite `x` to a binary format with `mbits` stored mantissa bits and minimum normal
/// exponent `emin` (unbounded above), in mode `r`; exact arithmetic on f64.
pub fn ref_round(x: f64, mbits: i32, emin: i32, r: &str) -> f64 {
    if x == 0.0 || !x.is_finite() {
        return x;
    }
    let ax = x.abs();
    let e = (ax.to_bits() >> 52) as i32 - 1023;
    let e = if ax < f64::MIN_POSITIVE { -1023 } else { e };
    let q = 2f64.powi(e.max(emin) - mbits);
    let s = ax / q;
    let fl = s.floor();
    let frac = s - fl;
    let neg = x < 0.0;
    let up = match r {
        "rn" => frac > 0.5 || (frac == 0.5 && fl % 2.0 == 1.0),
        "rna" => frac >= 0.5,
        "rz" => false,
        "rp" => frac > 0.0 && !neg,
        _ => frac > 0.0 && neg,
    };
    let m = (if up { fl + 1.0 } else { fl }) * q;
    if neg {
        -m
    } else {
        m
    }
}

/// f64 → IEEE binary16 / bfloat16 bits with rounding `r` (overflow per the mode).
pub fn ref_to_half(x: f64, bf: bool, r: &str) -> u16 {
    let (mbits, emin, emax, ebits) = if bf {
        (7, -126, 127, 8)
    } else {
        (10, -14, 15, 5)
    };
    let sign = if x.is_sign_negative() { 1u16 << 15 } else { 0 };
    if x.is_nan() {
        return if bf { 0x7fc0 } else { 0x7e00 };
    }
    let v = ref_round(x, mbits, emin, r);
    let maxv = (2.0 - 2f64.powi(-mbits)) * 2f64.powi(emax);
    let inf = (((1u16 << ebits) - 1) << mbits) | sign;
    let max_bits = ((inf & 0x7fff) - 1) | sign;
    if v.is_infinite() || v.abs() > maxv {
        let to_inf = match r {
            "rn" | "rna" => true,
            "rz" => false,
            "rp" => sign == 0,
            _ => sign != 0,
        };
        return if to_inf || v.is_infinite() && x.is_infinite() {
            inf
        } else {
            max_bits
        };
    }
    let a = v.abs();
    if a == 0.0 {
        return sign;
    }
    let e = ((a.to_bits() >> 52) as i32 - 1023).max(emin);
    let bits = if a < 2f64.powi(emin) {
        (a / 2f64.powi(emin - mbits)) as u16
    } else {
        (((e - emin + 1) as u16) << mbits)
            | ((a / 2f64.powi(e - mbits)) as u64 as u16 & ((1 << mbits) - 1))
    };
    bits | sign
}

pub fn half_to_f64(h: u16, bf: bool) -> f64 {
    if bf {
        return f32::from_bits((h as u32) << 16) as f64;
    }
    let s = if h & 0x8000 != 0 { -1.0 } else { 1.0 };
    let e = ((h >> 10) & 0x1f) as i32;
    let m = (h & 0x3ff) as f64;
    s * match e {
        0 => m * 2f64.powi(-24),
        31 if m == 0.0 => f64::INFINITY,
        31 => return f64::NAN.copysign(s),
        _ => (1024.0 + m) * 2f64.powi(e - 25),
    }
}

pub const INT_TYPES: [&str; 8] = ["u8", "u16", "u32", "u64", "s8", "s16", "s32", "s64"];

pub fn int_val(v: u64, t: &str) -> i128 {
    let bits: u32 = t[1..].parse().unwrap();
    let m = if bits == 64 {
        v
    } else {
        v & ((1u64 << bits) - 1)
    };
    if t.starts_with('s') && (m >> (bits - 1)) & 1 == 1 {
        m as i128 - (1i128 << bits)
    } else {
        m as i128
    }
}

/// An integer (of at most 64 bits, either sign) to f64 / f32 in the current rounding mode with
/// one rounding: values above i64 are halved with round-to-odd first (exact enough: 63 bits).
pub fn u_to_f64(i: i128) -> f64 {
    if i <= i64::MAX as i128 {
        bb(i as i64) as f64
    } else {
        let u = i as u64;
        (bb(((u >> 1) | (u & 1)) as i64) as f64) * 2.0
    }
}
pub fn u_to_f32(i: i128) -> f32 {
    if i <= i64::MAX as i128 {
        bb(i as i64) as f32
    } else {
        let u = i as u64;
        (bb(((u >> 1) | (u & 1)) as i64) as f32) * 2.0
    }
}

/// PTX min/max (PTX ISA 9.2 min.txt/max.txt Semantics): NaN operands yield the other operand,
/// two NaNs (or any NaN with .NaN) the canonical NaN; +0.0 > -0.0; .xorsign.abs. On f64 values
/// holding the exact inputs; returns the result value (NaN for the canonical NaN).
pub fn ref_minmax(is_max: bool, nan: bool, xa: bool, a: f64, b: f64) -> f64 {
    let xs = a.is_sign_negative() ^ b.is_sign_negative();
    let (a, b) = if xa { (a.abs(), b.abs()) } else { (a, b) };
    let lt = |x: f64, y: f64| {
        x < y || (x == 0.0 && y == 0.0 && x.is_sign_negative() && !y.is_sign_negative())
    };
    let d = if a.is_nan() && b.is_nan() || nan && (a.is_nan() || b.is_nan()) {
        f64::NAN
    } else if a.is_nan() {
        b
    } else if b.is_nan() {
        a
    } else if is_max {
        if lt(b, a) {
            a
        } else {
            b
        }
    } else if lt(a, b) {
        a
    } else {
        b
    };
    if xa && !d.is_nan() {
        if xs {
            -d.abs()
        } else {
            d.abs()
        }
    } else {
        d
    }
}

/// Computes `f` exactly enough for one later rounding to ≤ 24 significant bits: the value
/// rounded to odd at 53 bits (round toward zero, lsb set when inexact).
pub fn odd(f: impl Fn() -> f64) -> f64 {
    let z = with_mode(RZ, &f);
    let p = with_mode(RP, &f);
    let n = with_mode(RM, &f);
    if z == p && z == n || !z.is_finite() {
        z
    } else {
        f64::from_bits(z.to_bits() | 1)
    }
}

/// The small float formats of `cvt` (`.e4m3x2`, …): (exponent bits, mantissa bits, bias,
/// MAX_NORM, has NaN).
pub fn small_fmt(f: &str) -> (i32, i32, i32, f64, bool) {
    match f {
        "e4m3" => (4, 3, 7, 448.0, true),
        "e5m2" => (5, 2, 15, 57344.0, true),
        "e2m1" => (2, 1, 1, 6.0, false),
        "e2m3" => (2, 3, 1, 7.5, false),
        _ => (3, 2, 3, 28.0, false),
    }
}

/// Encodes `x` (cvt.rn.satfinite{.relu} to `f`): NaN → the format's NaN, or +MAX_NORM for
/// formats without NaN; |x| > MAX_NORM → ±MAX_NORM.
pub fn ref_encode(x: f64, f: &str, relu: bool) -> u32 {
    let (e, m, bias, max, has_nan) = small_fmt(f);
    if x.is_nan() {
        return if has_nan { 0x7f } else { (1 << (e + m)) - 1 };
    }
    let x = if relu && x.is_sign_negative() { 0.0 } else { x };
    let s = (x.is_sign_negative() as u32) << (e + m);
    let emin = 1 - bias;
    let v = if x.is_infinite() {
        max
    } else {
        ref_round(x.abs(), m, emin, "rn").min(max)
    };
    let code = if v < 2f64.powi(emin) {
        (v / 2f64.powi(emin - m)) as u32
    } else {
        let ex = ((v.to_bits() >> 52) as i32) - 1023;
        (((ex + bias) as u32) << m) | ((v / 2f64.powi(ex - m)) as u32 - (1 << m))
    };
    code | s
}

pub fn ref_decode(c: u32, f: &str) -> f64 {
    let (e, m, bias, _, has_nan) = small_fmt(f);
    let mag = c & ((1 << (e + m)) - 1);
    let s = if (c >> (e + m)) & 1 == 1 { -1.0 } else { 1.0 };
    let (ef, mf) = ((mag >> m) as i32, (mag & ((1 << m) - 1)) as f64);
    if f == "e5m2" && ef == 31 {
        return if mf == 0.0 {
            s * f64::INFINITY
        } else {
            f64::NAN
        };
    }
    if f == "e4m3" && mag == 0x7f && has_nan {
        return f64::NAN;
    }
    s * if ef == 0 {
        mf * 2f64.powi(1 - bias - m)
    } else {
        (2f64.powi(m) + mf) * 2f64.powi(ef - bias - m)
    }
}

/// f64 `add/sub/mul/div/fma/sqrt/rcp` in rounding `r` (`.rn`…), from the manual: one IEEE
/// operation rounded once (`rcp` for any other `op`).
pub fn f64_op(op: &str, r: &str, a: f64, b: f64, c: f64) -> f64 {
    with_mode(mode_of(r), || match op {
        "add" => bb(a) + bb(b),
        "sub" => bb(a) - bb(b),
        "mul" => bb(a) * bb(b),
        "div" => bb(a) / bb(b),
        "fma" => bb(a).mul_add(bb(b), bb(c)),
        "sqrt" => bb(a).sqrt(),
        _ => 1.0 / bb(a),
    })
}
