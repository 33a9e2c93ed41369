//! Executes the shared lowering on the host: small PTX `.func`s are lowered with a test
//! `Target` whose target-specific hooks (special registers, barriers, warp operations, inline
//! assembly) are unreachable — so any instruction tested here is lowered to target-independent
//! IR — JIT-compiled with LLVM's MCJIT for the host, and compared with reference
//! implementations written in this file from the Semantics sections of the PTX ISA 9.2 manual
//! (`/work/shared/spec/instructions/*.txt`, cvt in `ptx-isa-9.2-data-movement.md`).
//!
//! Directed-rounding references use the host FPU's rounding mode (`fesetround`), which is
//! independent of the error-free transformations the lowering uses.

use std::collections::HashMap;

use ptx2llvm::llvm::{BasicValueEnum, Context, FunctionValue, HostJit};
use ptx2llvm::lower::{self, Error, FnState, Lowerer, Space, Target};
use ptx2llvm::syntax::ast::{FnDirective, Instruction};

struct Stub;

impl Target for Stub {
    fn name(&self) -> &'static str {
        "host-test"
    }
    fn addr_space(&self, _s: Space) -> u16 {
        0
    }
    fn sreg<'c>(&self, _l: &Lowerer<'c, '_>, _name: &str, _comp: Option<char>) -> Option<BasicValueEnum<'c>> {
        None
    }
    fn kernel<'c>(&self, _l: &Lowerer<'c, '_>, _f: FunctionValue<'c>, _d: &[FnDirective]) {}
    fn sync_op<'c, 'a>(&self, _l: &Lowerer<'c, 'a>, _fs: &mut FnState<'c, 'a>, _i: &Instruction<'a>) -> Result<bool, Error> {
        Ok(false)
    }
    fn inline_asm_ok(&self, i: &Instruction) -> Result<(), Error> {
        Err(Error::Unsupported { msg: format!("inline PTX for `{}` on the host test target", i.opcode.spelling()), span: i.span })
    }
}

static STUB: Stub = Stub;

/// A JIT-compiled PTX module.
struct Jit {
    jit: HostJit<'static>,
}

// Runtime helpers the default `rounded_op` calls for .f64 mul/div/sqrt/rcp/fma with
// directed rounding, implemented with the host FPU's rounding mode.
macro_rules! rt2 {
    ($name:ident, $mode:expr, $e:expr) => {
        extern "C" fn $name(a: f64, b: f64) -> f64 {
            with_mode($mode, || $e(bb(a), bb(b)))
        }
    };
}
macro_rules! rt1 {
    ($name:ident, $mode:expr, $e:expr) => {
        extern "C" fn $name(a: f64) -> f64 {
            with_mode($mode, || $e(bb(a)))
        }
    };
}
macro_rules! rt3 {
    ($name:ident, $mode:expr) => {
        extern "C" fn $name(a: f64, b: f64, c: f64) -> f64 {
            with_mode($mode, || bb(a).mul_add(bb(b), bb(c)))
        }
    };
}
rt2!(rt_mul_rz, RZ, |a: f64, b: f64| a * b);
rt2!(rt_mul_rm, RM, |a: f64, b: f64| a * b);
rt2!(rt_mul_rp, RP, |a: f64, b: f64| a * b);
rt2!(rt_div_rz, RZ, |a: f64, b: f64| a / b);
rt2!(rt_div_rm, RM, |a: f64, b: f64| a / b);
rt2!(rt_div_rp, RP, |a: f64, b: f64| a / b);
rt1!(rt_sqrt_rz, RZ, |a: f64| a.sqrt());
rt1!(rt_sqrt_rm, RM, |a: f64| a.sqrt());
rt1!(rt_sqrt_rp, RP, |a: f64| a.sqrt());
rt1!(rt_rcp_rz, RZ, |a: f64| 1.0 / a);
rt1!(rt_rcp_rm, RM, |a: f64| 1.0 / a);
rt1!(rt_rcp_rp, RP, |a: f64| 1.0 / a);
rt3!(rt_fma_rz, RZ);
rt3!(rt_fma_rm, RM);
rt3!(rt_fma_rp, RP);

fn runtime_helpers() -> HashMap<&'static str, usize> {
    let mut m = HashMap::new();
    m.insert("ptx2llvm_rt_mul_rz_f64", rt_mul_rz as *const () as usize);
    m.insert("ptx2llvm_rt_mul_rm_f64", rt_mul_rm as *const () as usize);
    m.insert("ptx2llvm_rt_mul_rp_f64", rt_mul_rp as *const () as usize);
    m.insert("ptx2llvm_rt_div_rz_f64", rt_div_rz as *const () as usize);
    m.insert("ptx2llvm_rt_div_rm_f64", rt_div_rm as *const () as usize);
    m.insert("ptx2llvm_rt_div_rp_f64", rt_div_rp as *const () as usize);
    m.insert("ptx2llvm_rt_sqrt_rz_f64", rt_sqrt_rz as *const () as usize);
    m.insert("ptx2llvm_rt_sqrt_rm_f64", rt_sqrt_rm as *const () as usize);
    m.insert("ptx2llvm_rt_sqrt_rp_f64", rt_sqrt_rp as *const () as usize);
    m.insert("ptx2llvm_rt_rcp_rz_f64", rt_rcp_rz as *const () as usize);
    m.insert("ptx2llvm_rt_rcp_rm_f64", rt_rcp_rm as *const () as usize);
    m.insert("ptx2llvm_rt_rcp_rp_f64", rt_rcp_rp as *const () as usize);
    m.insert("ptx2llvm_rt_fma_rz_f64", rt_fma_rz as *const () as usize);
    m.insert("ptx2llvm_rt_fma_rm_f64", rt_fma_rm as *const () as usize);
    m.insert("ptx2llvm_rt_fma_rp_f64", rt_fma_rp as *const () as usize);
    m
}

/// Lowers, verifies and JIT-compiles `body` (functions; a `.version/.target` header is added).
fn jit(body: &str, opt: u8) -> Jit {
    let src = format!(".version 8.8\n.target sm_90a\n.address_size 64\n{body}");
    let src: &'static str = Box::leak(src.into_boxed_str());
    let (module, diags) = ptx2llvm::syntax::parse(src);
    assert!(diags.is_empty(), "parse: {:?}\n{src}", diags.iter().map(|d| d.message.clone()).collect::<Vec<_>>());
    let module: &'static _ = Box::leak(Box::new(module));
    let ctx: &'static Context = Box::leak(Box::new(Context::create()));
    let mut l = Lowerer::new(ctx, &STUB, "consteval", true, 90);
    if let Err(errs) = lower::module::lower_module(&mut l, module) {
        panic!("lowering: {}", errs.iter().map(|e| e.to_string()).collect::<Vec<_>>().join("\n"));
    }
    if let Err(e) = ptx2llvm::llvm::verify(&l.module) {
        panic!("verify: {e}\n{}", l.module.print_to_string().to_string());
    }
    let module = Box::leak(Box::new(l.module));
    let jit = HostJit::new(module, opt).expect("host JIT");
    let helpers = runtime_helpers();
    for f in module.get_functions() {
        let name = f.get_name().to_str().unwrap();
        if f.count_basic_blocks() == 0 {
            if let Some(addr) = helpers.get(name) {
                jit.map_function(f, *addr);
            }
        }
    }
    Jit { jit }
}

impl Jit {
    fn addr(&self, name: &str) -> usize {
        self.jit.function_address(name).unwrap_or_else(|| panic!("no function {name}"))
    }
    fn f1_32(&self, name: &str) -> extern "C" fn(u32) -> u32 {
        unsafe { std::mem::transmute(self.addr(name)) }
    }
    fn f2_32(&self, name: &str) -> extern "C" fn(u32, u32) -> u32 {
        unsafe { std::mem::transmute(self.addr(name)) }
    }
    fn f3_32(&self, name: &str) -> extern "C" fn(u32, u32, u32) -> u32 {
        unsafe { std::mem::transmute(self.addr(name)) }
    }
    fn f4_32(&self, name: &str) -> extern "C" fn(u32, u32, u32, u32) -> u32 {
        unsafe { std::mem::transmute(self.addr(name)) }
    }
    fn f1_64(&self, name: &str) -> extern "C" fn(u64) -> u64 {
        unsafe { std::mem::transmute(self.addr(name)) }
    }
    fn f2_64(&self, name: &str) -> extern "C" fn(u64, u64) -> u64 {
        unsafe { std::mem::transmute(self.addr(name)) }
    }
    fn f3_64(&self, name: &str) -> extern "C" fn(u64, u64, u64) -> u64 {
        unsafe { std::mem::transmute(self.addr(name)) }
    }
    fn f_64_32_32(&self, name: &str) -> extern "C" fn(u64, u32, u32) -> u64 {
        unsafe { std::mem::transmute(self.addr(name)) }
    }
    fn f4_64_32(&self, name: &str) -> extern "C" fn(u64, u64, u32, u32) -> u64 {
        unsafe { std::mem::transmute(self.addr(name)) }
    }
}

// ---- host FPU rounding mode ------------------------------------------------------------------

const RN: i32 = 0;
const RM: i32 = 0x400;
const RP: i32 = 0x800;
const RZ: i32 = 0xc00;

extern "C" {
    fn fesetround(mode: i32) -> i32;
}

fn bb<T>(x: T) -> T {
    std::hint::black_box(x)
}

/// Runs `f` with the host FPU rounding mode `mode` (x86 `FE_*` values).
fn with_mode<T>(mode: i32, f: impl FnOnce() -> T) -> T {
    unsafe { fesetround(mode) };
    let r = bb(f());
    unsafe { fesetround(RN) };
    r
}

fn mode_of(r: &str) -> i32 {
    match r {
        "rn" => RN,
        "rz" => RZ,
        "rm" => RM,
        _ => RP,
    }
}

// ---- inputs ----------------------------------------------------------------------------------

/// A small deterministic PRNG (xorshift64*).
struct Rng(u64);

impl Rng {
    fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9e3779b97f4a7c15) | 1)
    }
    fn u64(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545f4914f6cdd1d)
    }
    fn u32(&mut self) -> u32 {
        (self.u64() >> 32) as u32
    }
}

/// Boundary values and random 32-bit values.
fn ints32(n: usize, seed: u64) -> Vec<u32> {
    let mut v = vec![0, 1, 2, 3, 7, 8, 15, 16, 31, 32, 33, 63, 64, 127, 128, 255, 256, 0x7fff, 0x8000, 0xffff, 0x10000, 0x7fff_ffff, 0x8000_0000, 0x8000_0001, 0xffff_fffe, 0xffff_ffff, 0x1234_5678, 0x8765_4321, 0xdead_beef, 0x00ff_00ff, 0xff00_ff00];
    let mut r = Rng::new(seed);
    while v.len() < n {
        v.push(r.u32());
    }
    v
}

fn ints64(n: usize, seed: u64) -> Vec<u64> {
    let mut v: Vec<u64> = vec![0, 1, 2, 31, 32, 63, 64, 0xffff_ffff, 0x1_0000_0000, 0x7fff_ffff_ffff_ffff, 0x8000_0000_0000_0000, 0xffff_ffff_ffff_ffff, 0x0123_4567_89ab_cdef, 0xfedc_ba98_7654_3210];
    let mut r = Rng::new(seed);
    while v.len() < n {
        v.push(r.u64());
    }
    v
}

// ---- references (PTX ISA 9.2 Semantics sections) ----------------------------------------------

fn ref_bfe(a: u64, b: u32, c: u32, bits: u32, signed: bool) -> u64 {
    let msb = bits - 1;
    let pos = b & 0xff;
    let len = c & 0xff;
    let sbit = if !signed || len == 0 { 0 } else { (a >> (pos + len - 1).min(msb)) & 1 };
    let mut d = 0u64;
    for i in 0..=msb {
        let bit = if i < len && pos + i <= msb { (a >> (pos + i)) & 1 } else { sbit };
        d |= bit << i;
    }
    d
}

fn ref_bfi(a: u64, b: u64, c: u32, d: u32, bits: u32) -> u64 {
    let msb = bits - 1;
    let pos = c & 0xff;
    let len = d & 0xff;
    let mut f = b;
    let mut i = 0;
    while i < len && pos + i <= msb {
        f = (f & !(1 << (pos + i))) | (((a >> i) & 1) << (pos + i));
        i += 1;
    }
    f
}

fn ref_prmt(a: u32, b: u32, c: u32, mode: &str) -> u32 {
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
            "f4e" => byte([[0, 1, 2, 3], [1, 2, 3, 4], [2, 3, 4, 5], [3, 4, 5, 6]][ctl as usize][i as usize]),
            "b4e" => byte([[0, 7, 6, 5], [1, 0, 7, 6], [2, 1, 0, 7], [3, 2, 1, 0]][ctl as usize][i as usize]),
            "rc8" => byte([[0, 0, 0, 0], [1, 1, 1, 1], [2, 2, 2, 2], [3, 3, 3, 3]][ctl as usize][i as usize]),
            "ecl" => byte([[0, 1, 2, 3], [1, 1, 2, 3], [2, 2, 2, 3], [3, 3, 3, 3]][ctl as usize][i as usize]),
            "ecr" => byte([[0, 0, 0, 0], [0, 1, 1, 1], [0, 1, 2, 2], [0, 1, 2, 3]][ctl as usize][i as usize]),
            _ => byte([[0, 1, 0, 1], [2, 3, 2, 3], [0, 1, 0, 1], [2, 3, 2, 3]][ctl as usize][i as usize]),
        };
        d |= v << (8 * i);
    }
    d
}

fn ref_lop3(a: u32, b: u32, c: u32, lut: u32) -> u32 {
    let mut d = 0;
    for i in 0..32 {
        let k = (((a >> i) & 1) << 2) | (((b >> i) & 1) << 1) | ((c >> i) & 1);
        d |= ((lut >> k) & 1) << i;
    }
    d
}

fn ref_shf(a: u32, b: u32, c: u32, left: bool, clamp: bool) -> u32 {
    let n = if clamp { c.min(32) } else { c & 0x1f };
    let v = ((b as u64) << 32) | a as u64;
    if left {
        ((v << n) >> 32) as u32
    } else {
        (v >> n) as u32
    }
}

fn ref_fns(mask: u32, base: u32, offset: i32) -> u32 {
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

fn ref_bfind(a: u64, bits: u32, signed: bool, shiftamt: bool) -> u32 {
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

fn ref_bmsk(a: u32, b: u32, clamp: bool) -> u32 {
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

fn ref_szext(a: u32, b: u32, clamp: bool, signed: bool) -> u32 {
    let b1 = b & 0x1f;
    let too_large = b >= 32 && clamp;
    let mask = if too_large { 0 } else { !0u32 << b1 };
    let sign_pos = b1.wrapping_sub(1) & 0x1f;
    let sign_bit = if b1 == 0 || too_large || !signed { false } else { (a >> sign_pos) & 1 == 1 };
    (a & !mask) | if sign_bit { mask } else { 0 }
}

fn ref_dp(two: bool, hi: bool, a: u32, b: u32, c: u32, sa: bool, sb: bool) -> u32 {
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

// ---- integer tests ---------------------------------------------------------------------------

fn func3(name: &str, ty: &str, body: &str) -> String {
    format!(".visible .func (.reg .{ty} d) {name}(.reg .{ty} a, .reg .{ty} b, .reg .{ty} c)\n{{\n\t{body}\n\tret;\n}}\n")
}

#[test]
fn bfe_bfi() {
    let mut src = String::new();
    for t in ["u32", "s32"] {
        src += &func3(&format!("bfe_{t}"), "b32", &format!("bfe.{t} d, a, b, c;"));
    }
    for t in ["u64", "s64"] {
        src += &format!(".visible .func (.reg .b64 d) bfe_{t}(.reg .b64 a, .reg .b32 b, .reg .b32 c)\n{{\n\tbfe.{t} d, a, b, c;\n\tret;\n}}\n");
    }
    src += &format!(".visible .func (.reg .b32 f) bfi_b32(.reg .b32 a, .reg .b32 b, .reg .b32 c, .reg .b32 d)\n{{\n\tbfi.b32 f, a, b, c, d;\n\tret;\n}}\n");
    src += &format!(".visible .func (.reg .b64 f) bfi_b64(.reg .b64 a, .reg .b64 b, .reg .b32 c, .reg .b32 d)\n{{\n\tbfi.b64 f, a, b, c, d;\n\tret;\n}}\n");
    let j = jit(&src, 0);
    let (bu, bs) = (j.f3_32("bfe_u32"), j.f3_32("bfe_s32"));
    let (bu64, bs64) = (j.f_64_32_32("bfe_u64"), j.f_64_32_32("bfe_s64"));
    let (fi32, fi64) = (j.f4_32("bfi_b32"), j.f4_64_32("bfi_b64"));
    let mut n = 0;
    let a32 = [0x8765_4321u32, 0x7fff_fffe, 0xffff_ffff, 0x0000_0001];
    let a64 = [0x8765_4321_0fed_cba9u64, 0x7fff_ffff_ffff_fffe, 0xffff_ffff_ffff_ffff, 1];
    for pos in 0..=300u32 {
        for len in 0..=300u32 {
            // Bits above the low byte are ignored.
            let (b, c) = if pos > 255 || len > 255 { (pos | 0x1200, len | 0x3400) } else { (pos, len) };
            for k in 0..4 {
                let a = a32[k];
                assert_eq!(bu(a, b, c) as u64, ref_bfe(a as u64, b, c, 32, false), "bfe.u32 {a:#x} {b} {c}");
                assert_eq!(bs(a, b, c) as u64, ref_bfe(a as u64, b, c, 32, true), "bfe.s32 {a:#x} {b} {c}");
                let a6 = a64[k];
                assert_eq!(bu64(a6, b, c), ref_bfe(a6, b, c, 64, false), "bfe.u64 {a6:#x} {b} {c}");
                assert_eq!(bs64(a6, b, c), ref_bfe(a6, b, c, 64, true), "bfe.s64 {a6:#x} {b} {c}");
                let bb = a32[(k + 1) % 4];
                assert_eq!(fi32(a, bb, b, c) as u64, ref_bfi(a as u64, bb as u64, b, c, 32), "bfi.b32 {a:#x} {bb:#x} {b} {c}");
                let bb6 = a64[(k + 1) % 4];
                assert_eq!(fi64(a6, bb6, b, c), ref_bfi(a6, bb6, b, c, 64), "bfi.b64 {a6:#x} {bb6:#x} {b} {c}");
                n += 6;
            }
        }
    }
    println!("bfe/bfi: {n} cases");
}

#[test]
fn prmt_all_modes() {
    let mut src = String::new();
    for m in ["", "f4e", "b4e", "rc8", "ecl", "ecr", "rc16"] {
        let dot = if m.is_empty() { String::new() } else { format!(".{m}") };
        src += &func3(&format!("prmt_{}", if m.is_empty() { "gen" } else { m }), "b32", &format!("prmt.b32{dot} d, a, b, c;"));
    }
    let j = jit(&src, 0);
    let (a, b) = (0x8877_6655u32, 0x4433_2211u32);
    let (a2, b2) = (0x01f2_e380u32, 0x7f00_ff81u32);
    let g = j.f3_32("prmt_gen");
    // Every 16-bit selector, two operand pairs, upper selector bits set or not.
    for c in 0..=0xffffu32 {
        assert_eq!(g(a, b, c), ref_prmt(a, b, c, ""), "prmt {c:#x}");
        assert_eq!(g(a2, b2, c | 0xabcd_0000), ref_prmt(a2, b2, c, ""), "prmt {c:#x}");
    }
    for m in ["f4e", "b4e", "rc8", "ecl", "ecr", "rc16"] {
        let f = j.f3_32(&format!("prmt_{m}"));
        for c in ints32(200, 7) {
            assert_eq!(f(a, b, c), ref_prmt(a, b, c, m), "prmt.{m} {c:#x}");
            assert_eq!(f(a2, b2, c), ref_prmt(a2, b2, c, m), "prmt.{m} {c:#x}");
        }
    }
}

#[test]
fn lop3_every_table() {
    let mut src = String::new();
    for lut in 0..256 {
        src += &func3(&format!("lop3_{lut}"), "b32", &format!("lop3.b32 d, a, b, c, {lut};"));
    }
    // A table in a register (not a constant).
    src += ".visible .func (.reg .b32 d) lop3_reg(.reg .b32 a, .reg .b32 b, .reg .b32 c, .reg .b32 l)\n{\n\tlop3.b32 d, a, b, c, l;\n\tret;\n}\n";
    // The predicate form: p = (d != 0) .or/.and q.
    src += ".visible .func (.reg .b32 r) lop3_or(.reg .b32 a, .reg .b32 b, .reg .b32 c, .reg .b32 q)\n{\n\t.reg .pred p, pq;\n\t.reg .b32 d;\n\tsetp.ne.u32 pq, q, 0;\n\tlop3.or.b32 d|p, a, b, c, 0x80, pq;\n\tselp.u32 r, 1, 0, p;\n\tret;\n}\n";
    src += ".visible .func (.reg .b32 r) lop3_and(.reg .b32 a, .reg .b32 b, .reg .b32 c, .reg .b32 q)\n{\n\t.reg .pred p, pq;\n\t.reg .b32 d;\n\tsetp.ne.u32 pq, q, 0;\n\tlop3.and.b32 d|p, a, b, c, 0x80, pq;\n\tselp.u32 r, 1, 0, p;\n\tret;\n}\n";
    let j = jit(&src, 2);
    let vals = ints32(24, 3);
    let reg = j.f4_32("lop3_reg");
    for lut in 0..256u32 {
        let f = j.f3_32(&format!("lop3_{lut}"));
        for k in 0..vals.len() {
            let (a, b, c) = (vals[k], vals[(k * 7 + 1) % vals.len()], vals[(k * 13 + 5) % vals.len()]);
            assert_eq!(f(a, b, c), ref_lop3(a, b, c, lut), "lop3 {lut:#x}");
            assert_eq!(reg(a, b, c, lut), ref_lop3(a, b, c, lut), "lop3 reg {lut:#x}");
        }
    }
    let (or, and) = (j.f4_32("lop3_or"), j.f4_32("lop3_and"));
    for (a, q) in [(0u32, 0u32), (0, 1), (0xffff_ffff, 0), (0xffff_ffff, 1)] {
        let nz = (a & a & a) != 0;
        assert_eq!(or(a, a, a, q), (nz || q != 0) as u32);
        assert_eq!(and(a, a, a, q), (nz && q != 0) as u32);
    }
}

#[test]
fn shf_fns_bfind_bmsk_szext() {
    let mut src = String::new();
    for d in ["l", "r"] {
        for m in ["wrap", "clamp"] {
            src += &func3(&format!("shf_{d}_{m}"), "b32", &format!("shf.{d}.{m}.b32 d, a, b, c;"));
        }
    }
    src += &func3("fns", "b32", "fns.b32 d, a, b, c;");
    for t in ["u32", "s32"] {
        for s in ["", ".shiftamt"] {
            src += &format!(".visible .func (.reg .b32 d) bfind_{t}{}(.reg .b32 a)\n{{\n\tbfind{s}.{t} d, a;\n\tret;\n}}\n", s.replace('.', "_"));
        }
    }
    for t in ["u64", "s64"] {
        for s in ["", ".shiftamt"] {
            src += &format!(".visible .func (.reg .b64 d) bfind_{t}{}(.reg .b64 a)\n{{\n\t.reg .b32 r;\n\tbfind{s}.{t} r, a;\n\tcvt.u64.u32 d, r;\n\tret;\n}}\n", s.replace('.', "_"));
        }
    }
    for m in ["wrap", "clamp"] {
        src += &format!(".visible .func (.reg .b32 d) bmsk_{m}(.reg .b32 a, .reg .b32 b)\n{{\n\tbmsk.{m}.b32 d, a, b;\n\tret;\n}}\n");
        for t in ["u32", "s32"] {
            src += &format!(".visible .func (.reg .b32 d) szext_{m}_{t}(.reg .b32 a, .reg .b32 b)\n{{\n\tszext.{m}.{t} d, a, b;\n\tret;\n}}\n");
        }
    }
    let j = jit(&src, 0);
    let vals = ints32(40, 11);
    for d in ["l", "r"] {
        for m in ["wrap", "clamp"] {
            let f = j.f3_32(&format!("shf_{d}_{m}"));
            for &a in &vals[..12] {
                for c in (0..70).chain([0x7fff_ffff, 0x8000_0000, 0xffff_ffff, 0x1_0020]) {
                    let b = a.rotate_left(7) ^ 0x5a5a_1234;
                    assert_eq!(f(a, b, c), ref_shf(a, b, c, d == "l", m == "clamp"), "shf.{d}.{m} {a:#x} {b:#x} {c}");
                }
            }
        }
    }
    let f = j.f3_32("fns");
    for &mask in &vals {
        for base in 0..32u32 {
            for off in -34i32..=34 {
                assert_eq!(f(mask, base, off as u32), ref_fns(mask, base, off), "fns {mask:#x} {base} {off}");
            }
            for off in [i32::MIN, i32::MAX, -1000, 1000] {
                assert_eq!(f(mask, base, off as u32), ref_fns(mask, base, off), "fns {mask:#x} {base} {off}");
            }
        }
    }
    for t in ["u32", "s32"] {
        for s in ["", "_shiftamt"] {
            let f = j.f1_32(&format!("bfind_{t}{s}"));
            for &a in &vals {
                for a in [a, a >> (a & 31), !(a >> (a & 31))] {
                    assert_eq!(f(a), ref_bfind(a as u64, 32, t == "s32", !s.is_empty()), "bfind{s}.{t} {a:#x}");
                }
            }
        }
    }
    for t in ["u64", "s64"] {
        for s in ["", "_shiftamt"] {
            let f = j.f1_64(&format!("bfind_{t}{s}"));
            for a in ints64(60, 5) {
                for a in [a, a >> (a & 63), !(a >> (a & 63))] {
                    assert_eq!(f(a) as u32, ref_bfind(a, 64, t == "s64", !s.is_empty()), "bfind{s}.{t} {a:#x}");
                }
            }
        }
    }
    for m in ["wrap", "clamp"] {
        let f = j.f2_32(&format!("bmsk_{m}"));
        let sz = [j.f2_32(&format!("szext_{m}_u32")), j.f2_32(&format!("szext_{m}_s32"))];
        for a in (0..70).chain(vals.iter().copied()) {
            for b in (0..70).chain([0x100, 0x120, 0xffff_ffff, 0x8000_0000]) {
                assert_eq!(f(a, b), ref_bmsk(a, b, m == "clamp"), "bmsk.{m} {a} {b}");
            }
        }
        for &a in &vals {
            for b in (0..70).chain([0x100, 0x120, 0xffff_ffff, 0x8000_0000]) {
                assert_eq!(sz[0](a, b), ref_szext(a, b, m == "clamp", false), "szext.{m}.u32 {a:#x} {b}");
                assert_eq!(sz[1](a, b), ref_szext(a, b, m == "clamp", true), "szext.{m}.s32 {a:#x} {b}");
            }
        }
    }
}

#[test]
fn dp4a_dp2a() {
    let mut src = String::new();
    for at in ["u32", "s32"] {
        for bt in ["u32", "s32"] {
            src += &func3(&format!("dp4a_{at}_{bt}"), "b32", &format!("dp4a.{at}.{bt} d, a, b, c;"));
            for m in ["lo", "hi"] {
                src += &func3(&format!("dp2a_{m}_{at}_{bt}"), "b32", &format!("dp2a.{m}.{at}.{bt} d, a, b, c;"));
            }
        }
    }
    let j = jit(&src, 0);
    let vals = ints32(60, 9);
    for at in ["u32", "s32"] {
        for bt in ["u32", "s32"] {
            let (sa, sb) = (at == "s32", bt == "s32");
            let f = j.f3_32(&format!("dp4a_{at}_{bt}"));
            let lo = j.f3_32(&format!("dp2a_lo_{at}_{bt}"));
            let hi = j.f3_32(&format!("dp2a_hi_{at}_{bt}"));
            for (k, &a) in vals.iter().enumerate() {
                let b = vals[(k * 7 + 3) % vals.len()];
                let c = vals[(k * 11 + 1) % vals.len()];
                assert_eq!(f(a, b, c), ref_dp(false, false, a, b, c, sa, sb), "dp4a.{at}.{bt}");
                assert_eq!(lo(a, b, c), ref_dp(true, false, a, b, c, sa, sb), "dp2a.lo.{at}.{bt}");
                assert_eq!(hi(a, b, c), ref_dp(true, true, a, b, c, sa, sb), "dp2a.hi.{at}.{bt}");
            }
        }
    }
}
