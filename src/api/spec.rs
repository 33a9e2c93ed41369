//! The argument SPEC syntax of `ptx2llvm run --arg` (also usable from the API):
//! `u8:V … s64:V f16:V f32:V f64:V` (decimal, or `0x` hex bits), `@PATH` (a buffer holding the
//! file's bytes), `zeros:BYTES` (a zero-filled buffer), `bytes:HEX` (raw by-value bytes).

use super::ApiError;

/// A scalar type of a SPEC.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scalar {
    U8,
    U16,
    U32,
    U64,
    S8,
    S16,
    S32,
    S64,
    F16,
    F32,
    F64,
}

/// A parsed `--arg`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ArgSpec {
    /// Little-endian bytes of a scalar of the given type.
    Scalar(Scalar, Vec<u8>),
    File(String),
    Zeros(usize),
    Bytes(Vec<u8>),
}

fn bad(spec: &str, why: &str) -> ApiError {
    ApiError::Args(format!(
        "invalid --arg `{spec}`: {why}; expected TYPE:VALUE (TYPE one of u8 u16 u32 u64 s8 s16 s32 \
         s64 f16 f32 f64), @PATH, zeros:BYTES or bytes:HEX"
    ))
}

fn parse_uint(v: &str) -> Option<u64> {
    if let Some(h) = v.strip_prefix("0x").or_else(|| v.strip_prefix("0X")) {
        u64::from_str_radix(&h.replace('_', ""), 16).ok()
    } else {
        v.replace('_', "").parse().ok()
    }
}

fn parse_int(v: &str) -> Option<i128> {
    if let Some(rest) = v.strip_prefix('-') {
        parse_uint(rest).map(|x| -(x as i128))
    } else {
        parse_uint(v.strip_prefix('+').unwrap_or(v)).map(|x| x as i128)
    }
}

/// `f32` → IEEE half bits (round to nearest even).
pub fn f32_to_f16(x: f32) -> u16 {
    let b = x.to_bits();
    let sign = ((b >> 16) & 0x8000) as u16;
    let exp = ((b >> 23) & 0xff) as i32;
    let man = b & 0x7f_ffff;
    if exp == 0xff {
        return sign | 0x7c00 | if man != 0 { 0x200 } else { 0 };
    }
    let e = exp - 127 + 15;
    if e >= 0x1f {
        return sign | 0x7c00;
    }
    if e <= 0 {
        if e < -10 {
            return sign;
        }
        let m = man | 0x80_0000;
        let shift = (14 - e) as u32;
        let half = 1u32 << (shift - 1);
        let rest = m & ((1 << shift) - 1);
        let mut r = m >> shift;
        if rest > half || (rest == half && r & 1 == 1) {
            r += 1;
        }
        return sign | r as u16;
    }
    let mut r = ((e as u32) << 10) | (man >> 13);
    let rest = man & 0x1fff;
    if rest > 0x1000 || (rest == 0x1000 && r & 1 == 1) {
        r += 1;
    }
    sign | r as u16
}

/// Parses one SPEC.
pub fn parse_spec(spec: &str) -> Result<ArgSpec, ApiError> {
    if let Some(p) = spec.strip_prefix('@') {
        if p.is_empty() {
            return Err(bad(spec, "`@` needs a file path"));
        }
        return Ok(ArgSpec::File(p.to_string()));
    }
    let Some((ty, v)) = spec.split_once(':') else {
        return Err(bad(spec, "no `:`"));
    };
    match ty {
        "zeros" => {
            let n = parse_uint(v).ok_or_else(|| bad(spec, "the size must be a byte count"))?;
            return Ok(ArgSpec::Zeros(n as usize));
        }
        "bytes" => {
            let h: String = v
                .chars()
                .filter(|c| !c.is_whitespace() && *c != '_')
                .collect();
            let h = h.strip_prefix("0x").unwrap_or(&h);
            if h.is_empty() || !h.len().is_multiple_of(2) {
                return Err(bad(spec, "bytes:HEX needs an even number of hex digits"));
            }
            let bytes: Option<Vec<u8>> = (0..h.len())
                .step_by(2)
                .map(|i| u8::from_str_radix(&h[i..i + 2], 16).ok())
                .collect();
            return bytes
                .map(ArgSpec::Bytes)
                .ok_or_else(|| bad(spec, "not hex"));
        }
        _ => {}
    }
    let (s, bits, signed) = match ty {
        "u8" => (Scalar::U8, 8, false),
        "u16" => (Scalar::U16, 16, false),
        "u32" => (Scalar::U32, 32, false),
        "u64" => (Scalar::U64, 64, false),
        "s8" => (Scalar::S8, 8, true),
        "s16" => (Scalar::S16, 16, true),
        "s32" => (Scalar::S32, 32, true),
        "s64" => (Scalar::S64, 64, true),
        "f16" | "f32" | "f64" => {
            let hex = v.starts_with("0x") || v.starts_with("0X");
            let bytes = match (ty, hex) {
                (_, true) => {
                    let n = parse_uint(v).ok_or_else(|| bad(spec, "not a hex number"))?;
                    let w = if ty == "f16" {
                        2
                    } else if ty == "f32" {
                        4
                    } else {
                        8
                    };
                    if w < 8 && n >> (8 * w) != 0 {
                        return Err(bad(spec, "the hex bits do not fit the type"));
                    }
                    n.to_le_bytes()[..w].to_vec()
                }
                ("f64", false) => v
                    .parse::<f64>()
                    .map_err(|_| bad(spec, "not a number"))?
                    .to_le_bytes()
                    .to_vec(),
                ("f32", false) => v
                    .parse::<f32>()
                    .map_err(|_| bad(spec, "not a number"))?
                    .to_le_bytes()
                    .to_vec(),
                _ => f32_to_f16(v.parse::<f32>().map_err(|_| bad(spec, "not a number"))?)
                    .to_le_bytes()
                    .to_vec(),
            };
            let s = match ty {
                "f16" => Scalar::F16,
                "f32" => Scalar::F32,
                _ => Scalar::F64,
            };
            return Ok(ArgSpec::Scalar(s, bytes));
        }
        _ => return Err(bad(spec, &format!("unknown type `{ty}`"))),
    };
    let n = parse_int(v).ok_or_else(|| bad(spec, "not an integer"))?;
    let (lo, hi): (i128, i128) = if signed {
        (-(1i128 << (bits - 1)), (1i128 << bits) - 1)
    } else {
        (0, (1i128 << bits) - 1)
    };
    if n < lo || n > hi {
        return Err(bad(spec, &format!("{v} does not fit {ty}")));
    }
    Ok(ArgSpec::Scalar(
        s,
        (n as u64).to_le_bytes()[..bits / 8].to_vec(),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn specs() {
        assert_eq!(
            parse_spec("u32:7").unwrap(),
            ArgSpec::Scalar(Scalar::U32, vec![7, 0, 0, 0])
        );
        assert_eq!(
            parse_spec("s16:-2").unwrap(),
            ArgSpec::Scalar(Scalar::S16, vec![0xfe, 0xff])
        );
        assert_eq!(
            parse_spec("u64:0x10").unwrap(),
            ArgSpec::Scalar(Scalar::U64, vec![16, 0, 0, 0, 0, 0, 0, 0])
        );
        assert_eq!(
            parse_spec("f32:1.5").unwrap(),
            ArgSpec::Scalar(Scalar::F32, 1.5f32.to_le_bytes().to_vec())
        );
        assert_eq!(
            parse_spec("f16:1").unwrap(),
            ArgSpec::Scalar(Scalar::F16, vec![0x00, 0x3c])
        );
        assert_eq!(
            parse_spec("f32:0x3f800000").unwrap(),
            ArgSpec::Scalar(Scalar::F32, 1.0f32.to_le_bytes().to_vec())
        );
        assert_eq!(
            parse_spec("@in.bin").unwrap(),
            ArgSpec::File("in.bin".into())
        );
        assert_eq!(parse_spec("zeros:64").unwrap(), ArgSpec::Zeros(64));
        assert_eq!(
            parse_spec("bytes:0102ff").unwrap(),
            ArgSpec::Bytes(vec![1, 2, 255])
        );
        assert!(parse_spec("u8:256")
            .unwrap_err()
            .to_string()
            .contains("does not fit u8"));
        assert!(parse_spec("x32:1")
            .unwrap_err()
            .to_string()
            .contains("unknown type `x32`"));
        assert!(parse_spec("bytes:123").is_err());
        assert_eq!(f32_to_f16(65504.0), 0x7bff);
        assert_eq!(f32_to_f16(-2.0), 0xc000);
    }
}
