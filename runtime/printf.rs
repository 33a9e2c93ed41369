//! Device `printf` (`vprintf(format, args)`): walks the format string, takes each argument from
//! CUDA's packed argument buffer (every argument at its natural alignment: 4 bytes for `int`
//! and `char`, 8 for `long`, `long long`, `double` (floats are promoted) and pointers) and
//! formats each conversion with the C library's `snprintf`, so the output is exactly C's.
//! One call's output is written to stdout at once, so lines never tear.

use std::ffi::{c_char, c_int, CStr};
use std::io::Write;

/// Formats one device `printf` and writes it to stdout; returns the bytes written.
///
/// # Safety
/// `format` must be a NUL-terminated string and `args` the argument buffer it describes (or
/// null when it takes no argument).
pub(crate) unsafe fn vprintf(format: *const c_char, args: *const u8) -> i32 {
    if format.is_null() {
        return -1;
    }
    let out = format_args_buffer(CStr::from_ptr(format).to_bytes(), args);
    let mut so = std::io::stdout().lock();
    let _ = so.write_all(&out);
    out.len() as i32
}

/// Flushes stdout (after a launch, before an error message).
pub(crate) fn flush() {
    let _ = std::io::stdout().flush();
}

/// Reads the argument buffer sequentially.
struct Args {
    p: *const u8,
    off: usize,
}

impl Args {
    unsafe fn take<const N: usize>(&mut self) -> Option<[u8; N]> {
        if self.p.is_null() {
            return None;
        }
        self.off = self.off.div_ceil(N) * N;
        let mut b = [0u8; N];
        std::ptr::copy_nonoverlapping(self.p.add(self.off), b.as_mut_ptr(), N);
        self.off += N;
        Some(b)
    }
    unsafe fn i32(&mut self) -> i32 {
        self.take::<4>().map_or(0, i32::from_ne_bytes)
    }
    unsafe fn i64(&mut self) -> i64 {
        self.take::<8>().map_or(0, i64::from_ne_bytes)
    }
    unsafe fn f64(&mut self) -> f64 {
        self.take::<8>().map_or(0.0, f64::from_ne_bytes)
    }
}

/// Formats `fmt` with the arguments in `args`.
///
/// # Safety
/// `args` must hold the arguments `fmt` names (or be null); `%s` arguments must be C strings
/// or null.
pub(crate) unsafe fn format_args_buffer(fmt: &[u8], args: *const u8) -> Vec<u8> {
    let mut out = Vec::with_capacity(fmt.len() + 16);
    let mut a = Args { p: args, off: 0 };
    let mut i = 0;
    while i < fmt.len() {
        let c = fmt[i];
        if c != b'%' {
            out.push(c);
            i += 1;
            continue;
        }
        let start = i;
        i += 1;
        if i < fmt.len() && fmt[i] == b'%' {
            out.push(b'%');
            i += 1;
            continue;
        }
        // %[flags][width][.precision][length]conversion
        let mut spec = vec![b'%'];
        while i < fmt.len() && b"-+ #0'".contains(&fmt[i]) {
            spec.push(fmt[i]);
            i += 1;
        }
        if i < fmt.len() && fmt[i] == b'*' {
            spec.extend_from_slice(a.i32().to_string().as_bytes());
            i += 1;
        }
        while i < fmt.len() && fmt[i].is_ascii_digit() {
            spec.push(fmt[i]);
            i += 1;
        }
        if i < fmt.len() && fmt[i] == b'.' {
            spec.push(b'.');
            i += 1;
            if i < fmt.len() && fmt[i] == b'*' {
                spec.extend_from_slice(a.i32().max(0).to_string().as_bytes());
                i += 1;
            }
            while i < fmt.len() && fmt[i].is_ascii_digit() {
                spec.push(fmt[i]);
                i += 1;
            }
        }
        let mut longs = 0;
        let mut shorts = 0;
        while i < fmt.len() && b"hlLqjzt".contains(&fmt[i]) {
            match fmt[i] {
                b'h' => shorts += 1,
                _ => longs += 1,
            }
            i += 1;
        }
        let Some(&conv) = fmt.get(i) else {
            out.extend_from_slice(&fmt[start..]);
            break;
        };
        i += 1;
        let mut buf = [0u8; 512];
        let n = match conv {
            b'c' => {
                spec.push(b'c');
                snprintf_i32(&mut buf, &spec, a.i32())
            }
            b'd' | b'i' | b'u' | b'x' | b'X' | b'o' => {
                let signed = conv == b'd' || conv == b'i';
                let v = if longs > 0 {
                    a.i64()
                } else {
                    let x = a.i32();
                    match (shorts, signed) {
                        (0, true) => x as i64,
                        (0, false) => x as u32 as i64,
                        (1, true) => x as i16 as i64,
                        (1, false) => x as u16 as i64,
                        (_, true) => x as i8 as i64,
                        (_, false) => x as u8 as i64,
                    }
                };
                spec.extend_from_slice(b"ll");
                spec.push(conv);
                snprintf_i64(&mut buf, &spec, v)
            }
            b'f' | b'F' | b'e' | b'E' | b'g' | b'G' | b'a' | b'A' => {
                spec.push(conv);
                snprintf_f64(&mut buf, &spec, a.f64())
            }
            b'p' => {
                spec.push(b'p');
                snprintf_ptr(&mut buf, &spec, a.i64() as usize as *const c_char)
            }
            b's' => {
                let p = a.i64() as usize as *const c_char;
                spec.push(b's');
                snprintf_ptr(
                    &mut buf,
                    &spec,
                    if p.is_null() { c"(null)".as_ptr() } else { p },
                )
            }
            b'n' => {
                let _ = a.i64();
                0
            }
            _ => {
                out.extend_from_slice(&fmt[start..i]);
                continue;
            }
        };
        let n = n.min(buf.len() - 1);
        if n + 1 >= buf.len() && conv == b's' {
            // Long strings: format again with the exact size.
            out.extend_from_slice(&snprintf_long(&spec, a.p, a.off));
            continue;
        }
        out.extend_from_slice(&buf[..n]);
    }
    out
}

unsafe fn snprintf_long(spec: &[u8], args: *const u8, off: usize) -> Vec<u8> {
    // The `%s` argument sits just before `off`.
    let p = (args.add(off - 8) as *const u64).read_unaligned() as usize as *const c_char;
    let p = if p.is_null() { c"(null)".as_ptr() } else { p };
    let mut spec = spec.to_vec();
    spec.push(0);
    let len = libc::snprintf(std::ptr::null_mut(), 0, spec.as_ptr() as *const c_char, p);
    let mut v = vec![0u8; len.max(0) as usize + 1];
    libc::snprintf(
        v.as_mut_ptr() as *mut c_char,
        v.len(),
        spec.as_ptr() as *const c_char,
        p,
    );
    v.truncate(len.max(0) as usize);
    v
}

fn nul(spec: &[u8]) -> Vec<u8> {
    let mut s = spec.to_vec();
    s.push(0);
    s
}

fn written(n: c_int) -> usize {
    n.max(0) as usize
}

fn snprintf_i64(buf: &mut [u8], spec: &[u8], v: i64) -> usize {
    let s = nul(spec);
    // SAFETY: `s` is a C string with exactly one integer conversion of `long long`.
    written(unsafe {
        libc::snprintf(
            buf.as_mut_ptr() as *mut c_char,
            buf.len(),
            s.as_ptr() as *const c_char,
            v,
        )
    })
}

fn snprintf_i32(buf: &mut [u8], spec: &[u8], v: i32) -> usize {
    let s = nul(spec);
    // SAFETY: `s` is a C string with exactly one conversion of an `int`.
    written(unsafe {
        libc::snprintf(
            buf.as_mut_ptr() as *mut c_char,
            buf.len(),
            s.as_ptr() as *const c_char,
            v as c_int,
        )
    })
}

fn snprintf_f64(buf: &mut [u8], spec: &[u8], v: f64) -> usize {
    let s = nul(spec);
    // SAFETY: `s` is a C string with exactly one floating-point conversion.
    written(unsafe {
        libc::snprintf(
            buf.as_mut_ptr() as *mut c_char,
            buf.len(),
            s.as_ptr() as *const c_char,
            v,
        )
    })
}

unsafe fn snprintf_ptr(buf: &mut [u8], spec: &[u8], v: *const c_char) -> usize {
    let s = nul(spec);
    written(libc::snprintf(
        buf.as_mut_ptr() as *mut c_char,
        buf.len(),
        s.as_ptr() as *const c_char,
        v,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fmt(f: &str, args: &[u8]) -> String {
        let p = if args.is_empty() {
            std::ptr::null()
        } else {
            args.as_ptr()
        };
        // SAFETY: `p` is null (no arguments) or points at `args`, packed as `format_args_buffer` reads them.
        String::from_utf8(unsafe { format_args_buffer(f.as_bytes(), p) }).unwrap()
    }

    #[test]
    fn formats_like_c() {
        let mut buf = Vec::new();
        buf.extend_from_slice(&7i32.to_ne_bytes());
        buf.extend_from_slice(&[0; 4]); // padding before the double
        buf.extend_from_slice(&2.5f64.to_ne_bytes());
        buf.extend_from_slice(&(-3i64).to_ne_bytes());
        buf.extend_from_slice(&255u32.to_ne_bytes());
        buf.extend_from_slice(&(b'z' as i32).to_ne_bytes());
        assert_eq!(
            fmt("a=%d b=%.2f c=%lld d=%#x e=%c 100%%\n", &buf),
            "a=7 b=2.50 c=-3 d=0xff e=z 100%\n"
        );
    }

    #[test]
    fn strings_and_widths() {
        let s = c"hi";
        let mut buf = Vec::new();
        buf.extend_from_slice(&(s.as_ptr() as u64).to_ne_bytes());
        buf.extend_from_slice(&5i32.to_ne_bytes());
        buf.extend_from_slice(&42i32.to_ne_bytes());
        assert_eq!(
            fmt("[%4s] [%*d] [%-3d]", &{
                let mut b = buf.clone();
                b.extend_from_slice(&1i32.to_ne_bytes());
                b
            }),
            "[  hi] [   42] [1  ]"
        );
    }

    #[test]
    fn no_args_and_stray_percent() {
        assert_eq!(fmt("plain\n", &[]), "plain\n");
        assert_eq!(fmt("end %", &[]), "end %");
    }
}
