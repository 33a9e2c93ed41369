//! Half and bfloat16 conversion builtins that LLVM's host back ends call for `half`/`bfloat`
//! arithmetic the CPU has no instructions for (`__truncsfhf2`, `__truncdfhf2`,
//! `__extendhfsf2`, `__truncsfbf2`, `__truncdfbf2`). They normally come from compiler-rt or
//! libgcc, whose shared versions lack some of them (libgcc_s has no bfloat16 builtins), so the
//! JIT resolves them here. They are not exported under these names (the C libraries would clash
//! with libgcc); linked `--emit obj` objects get them from the C toolchain's runtime.
//!
//! ABI: a `half`/`bfloat` travels in the low 16 bits of the first floating-point register
//! (x86-64 `xmm0`, AArch64 `v0`), which is where an `f32` argument or result sits; the other
//! bits are ignored by the callee/caller.

use std::ffi::c_void;

/// IEEE binary16 bits of `x`, rounded to nearest even (once, from the exact value).
pub fn f64_to_f16_bits(x: f64) -> u16 {
    let b = x.to_bits();
    let sign = ((b >> 48) & 0x8000) as u16;
    let exp = ((b >> 52) & 0x7ff) as i32;
    let man = b & ((1u64 << 52) - 1);
    if exp == 0x7ff {
        return sign
            | 0x7c00
            | if man != 0 {
                0x200 | (man >> 42) as u16
            } else {
                0
            };
    }
    let e = exp - 1023 + 15;
    if e >= 0x1f {
        return sign | 0x7c00;
    }
    // 53-bit significand with the implicit bit (zero for f64 subnormals, which round to 0).
    let m = if exp == 0 { man } else { man | (1u64 << 52) };
    // Bits to drop: 42 for a normal half, more for a subnormal one.
    let shift = if e <= 0 { 42 + (1 - e) as u32 } else { 42 };
    if shift >= 64 {
        return sign;
    }
    let half = 1u64 << (shift - 1);
    let rest = m & ((1u64 << shift) - 1);
    let mut r = m >> shift;
    if rest > half || (rest == half && r & 1 == 1) {
        r += 1;
    }
    // r includes the implicit bit for normals; adding the exponent field carries correctly
    // into the next binade (and into infinity).
    let biased = if e <= 0 { 0 } else { (e as u64 - 1) << 10 };
    sign | (biased + r) as u16
}

/// f32 → binary16 bits (exact through f64: f32 → f64 is exact).
pub fn f32_to_f16_bits(x: f32) -> u16 {
    f64_to_f16_bits(x as f64)
}

/// binary16 bits → f32 (exact).
pub fn f16_bits_to_f32(h: u16) -> f32 {
    let sign = ((h & 0x8000) as u32) << 16;
    let exp = ((h >> 10) & 0x1f) as u32;
    let man = (h & 0x3ff) as u32;
    let bits = match (exp, man) {
        (0, 0) => sign,
        (0, _) => {
            // subnormal: value = man · 2^-24
            let v = man as f32 * f32::from_bits(0x3380_0000); // 2^-24
            return if sign != 0 { -v } else { v };
        }
        (0x1f, 0) => sign | 0x7f80_0000,
        (0x1f, _) => sign | 0x7fc0_0000 | (man << 13),
        _ => sign | ((exp + 127 - 15) << 23) | (man << 13),
    };
    f32::from_bits(bits)
}

/// bfloat16 bits of `x`, rounded to nearest even.
pub fn f32_to_bf16_bits(x: f32) -> u16 {
    let b = x.to_bits();
    if x.is_nan() {
        return ((b >> 16) | 0x40) as u16;
    }
    let rest = b & 0xffff;
    let mut r = b >> 16;
    if rest > 0x8000 || (rest == 0x8000 && r & 1 == 1) {
        r += 1;
    }
    r as u16
}

/// bfloat16 bits of an f64, rounded once.
pub fn f64_to_bf16_bits(x: f64) -> u16 {
    if x.is_nan() {
        return 0x7fc0 | ((x.to_bits() >> 48) as u16 & 0x8000);
    }
    // Round to 8 significant bits directly from the f64 (no double rounding through f32):
    // f32 rounding toward zero keeps a sticky bit in the last place.
    let f = x as f32;
    let exact = f as f64 == x;
    let tz = if exact || f.is_infinite() {
        f
    } else {
        // Truncate toward zero, then set the lowest bit as sticky.
        let t = if (f as f64).abs() > x.abs() {
            f32::from_bits(f.to_bits() - 1)
        } else {
            f
        };
        f32::from_bits(t.to_bits() | 1)
    };
    f32_to_bf16_bits(tz)
}

fn ret16(h: u16) -> f32 {
    f32::from_bits(h as u32)
}

fn arg16(x: f32) -> u16 {
    x.to_bits() as u16
}

extern "C" fn truncsfhf2(x: f32) -> f32 {
    ret16(f32_to_f16_bits(x))
}

extern "C" fn truncdfhf2(x: f64) -> f32 {
    ret16(f64_to_f16_bits(x))
}

extern "C" fn extendhfsf2(h: f32) -> f32 {
    f16_bits_to_f32(arg16(h))
}

extern "C" fn truncsfbf2(x: f32) -> f32 {
    ret16(f32_to_bf16_bits(x))
}

extern "C" fn truncdfbf2(x: f64) -> f32 {
    ret16(f64_to_bf16_bits(x))
}

/// The builtins by their compiler-rt names (for the JIT).
pub fn symbols() -> Vec<(&'static str, *const c_void)> {
    vec![
        ("__truncsfhf2", truncsfhf2 as *const c_void),
        ("__gnu_f2h_ieee", truncsfhf2 as *const c_void),
        ("__truncdfhf2", truncdfhf2 as *const c_void),
        ("__extendhfsf2", extendhfsf2 as *const c_void),
        ("__gnu_h2f_ieee", extendhfsf2 as *const c_void),
        ("__truncsfbf2", truncsfbf2 as *const c_void),
        ("__truncdfbf2", truncdfbf2 as *const c_void),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn half_conversions() {
        assert_eq!(f32_to_f16_bits(1.0), 0x3c00);
        assert_eq!(f32_to_f16_bits(-2.0), 0xc000);
        assert_eq!(f32_to_f16_bits(65504.0), 0x7bff);
        assert_eq!(f32_to_f16_bits(65520.0), 0x7c00);
        assert_eq!(f32_to_f16_bits(65519.0), 0x7bff);
        assert_eq!(f32_to_f16_bits(2f32.powi(-24)), 0x0001);
        assert_eq!(f32_to_f16_bits(2f32.powi(-25)), 0x0000); // tie to even (0)
        assert_eq!(f32_to_f16_bits(3.0 * 2f32.powi(-25)), 0x0002); // 1.5 ulp: tie to even (2)
        assert_eq!(f32_to_f16_bits(1023.0 * 2f32.powi(-24)), 0x03ff); // largest subnormal
        assert_eq!(f32_to_f16_bits(2f32.powi(-14)), 0x0400); // smallest normal
        assert_eq!(f32_to_f16_bits(f32::INFINITY), 0x7c00);
        assert!(f32_to_f16_bits(f32::NAN) & 0x7c00 == 0x7c00);
        // 1 + 2^-11 is a tie: even (1.0); 1 + 3·2^-11 rounds up.
        assert_eq!(f64_to_f16_bits(1.0 + 2f64.powi(-11)), 0x3c00);
        assert_eq!(f64_to_f16_bits(1.0 + 3.0 * 2f64.powi(-11)), 0x3c02);
        // Just above a tie rounds up even if the f32 of it would be a tie.
        assert_eq!(
            f64_to_f16_bits(1.0 + 2f64.powi(-11) + 2f64.powi(-40)),
            0x3c01
        );
        for h in 0..=0xffffu16 {
            let f = f16_bits_to_f32(h);
            if f.is_nan() {
                continue;
            }
            assert_eq!(f32_to_f16_bits(f), h, "{h:#x}");
        }
    }

    #[test]
    fn bfloat_conversions() {
        assert_eq!(f32_to_bf16_bits(1.0), 0x3f80);
        assert_eq!(f32_to_bf16_bits(f32::from_bits(0x3f80_8000)), 0x3f80); // tie: even
        assert_eq!(f32_to_bf16_bits(f32::from_bits(0x3f81_8000)), 0x3f82);
        assert_eq!(f64_to_bf16_bits(1.0 + 2f64.powi(-8)), 0x3f80);
        assert_eq!(
            f64_to_bf16_bits(1.0 + 2f64.powi(-8) + 2f64.powi(-40)),
            0x3f81
        );
        assert_eq!(f64_to_bf16_bits(-3.0), 0xc040);
    }
}
