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

#[path = "common/ptx_ref.rs"]
mod ptx_ref;
use ptx_ref::*;

struct Stub;

impl Target for Stub {
    fn name(&self) -> &'static str {
        "host-test"
    }
    fn addr_space(&self, _s: Space) -> u16 {
        0
    }
    fn sreg<'c>(
        &self,
        _l: &Lowerer<'c, '_>,
        _name: &str,
        _comp: Option<char>,
    ) -> Option<BasicValueEnum<'c>> {
        None
    }
    fn kernel<'c>(&self, _l: &Lowerer<'c, '_>, _f: FunctionValue<'c>, _d: &[FnDirective]) {}
    fn sync_op<'c, 'a>(
        &self,
        _l: &Lowerer<'c, 'a>,
        _fs: &mut FnState<'c, 'a>,
        _i: &Instruction<'a>,
    ) -> Result<bool, Error> {
        Ok(false)
    }
    fn inline_asm_ok(&self, i: &Instruction) -> Result<(), Error> {
        Err(Error::Unsupported {
            msg: format!(
                "inline PTX for `{}` on the host test target",
                i.opcode.spelling()
            ),
            span: i.span,
        })
    }
}

static STUB: Stub = Stub;

type F1u32 = extern "C" fn(u32) -> u32;
type F2u32 = extern "C" fn(u32, u32) -> u32;
type F3u32 = extern "C" fn(u32, u32, u32) -> u32;
type F1u64 = extern "C" fn(u64) -> u64;
type F2u64 = extern "C" fn(u64, u64) -> u64;
type F3u64 = extern "C" fn(u64, u64, u64) -> u64;

/// A JIT-compiled PTX module.
struct Jit<'c> {
    jit: HostJit<'c>,
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

// Compiler-runtime conversions LLVM's x86 back end calls for half and bfloat values (normally
// from compiler-rt or libgcc; provided here so the test does not depend on either). Half and
// bfloat travel in the low 16 bits of an XMM register, like a float's bits.
extern "C" fn extendhfsf2(h: f32) -> f32 {
    half_to_f64(h.to_bits() as u16, false) as f32
}
extern "C" fn truncsfhf2(x: f32) -> f32 {
    f32::from_bits(ref_to_half(x as f64, false, "rn") as u32)
}
extern "C" fn truncdfhf2(x: f64) -> f32 {
    f32::from_bits(ref_to_half(x, false, "rn") as u32)
}
extern "C" fn truncsfbf2(x: f32) -> f32 {
    f32::from_bits(ref_to_half(x as f64, true, "rn") as u32)
}
extern "C" fn truncdfbf2(x: f64) -> f32 {
    f32::from_bits(ref_to_half(x, true, "rn") as u32)
}

fn add_runtime_symbols() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        for (n, a) in [
            ("__extendhfsf2", extendhfsf2 as *const () as usize),
            ("__gnu_h2f_ieee", extendhfsf2 as *const () as usize),
            ("__truncsfhf2", truncsfhf2 as *const () as usize),
            ("__gnu_f2h_ieee", truncsfhf2 as *const () as usize),
            ("__truncdfhf2", truncdfhf2 as *const () as usize),
            ("__truncsfbf2", truncsfbf2 as *const () as usize),
            ("__truncdfbf2", truncdfbf2 as *const () as usize),
        ] {
            ptx2llvm::llvm::add_host_symbol(n, a);
        }
    });
}

/// Lowers, verifies and JIT-compiles `body` (functions; a `.version/.target` header is added)
/// and runs `f` on the compiled module; everything the JIT borrows lives in this call.
fn with_jit<R>(body: &str, opt: u8, f: impl FnOnce(&Jit) -> R) -> R {
    add_runtime_symbols();
    let src = format!(".version 8.8\n.target sm_90a\n.address_size 64\n{body}");
    let (module, diags) = ptx2llvm::syntax::parse(&src);
    assert!(
        diags.is_empty(),
        "parse: {:?}\n{src}",
        diags.iter().map(|d| d.message.clone()).collect::<Vec<_>>()
    );
    let ctx = Context::create();
    // The lowering reads instructions as the check decoded them.
    let (info, _) = ptx2llvm::check::check_module(&module);
    let mut l = Lowerer::new(&ctx, &STUB, "consteval", true, 90, &info);
    if let Err(errs) = lower::module::lower_module(&mut l, &module) {
        panic!(
            "lowering: {}",
            errs.iter()
                .map(|e| e.to_string())
                .collect::<Vec<_>>()
                .join("\n")
        );
    }
    if let Err(e) = ptx2llvm::llvm::verify(&l.module) {
        panic!("verify: {e}\n{}", l.module.print_to_string().to_string());
    }
    let jit = HostJit::new(&l.module, opt).expect("host JIT");
    let helpers = runtime_helpers();
    for func in l.module.get_functions() {
        let name = func.get_name().to_str().unwrap();
        if func.count_basic_blocks() == 0 {
            if let Some(addr) = helpers.get(name) {
                jit.map_function(func, *addr);
            }
        }
    }
    // Named, so the JIT is dropped before the context and the module info it borrows.
    let jit = Jit { jit };
    #[allow(clippy::let_and_return)]
    let r = f(&jit);
    r
}

impl Jit<'_> {
    fn addr(&self, name: &str) -> usize {
        self.jit
            .function_address(name)
            .unwrap_or_else(|| panic!("no function {name}"))
    }
    fn f1_32(&self, name: &str) -> extern "C" fn(u32) -> u32 {
        // SAFETY: `name`'s function in this test's IR has this signature (each caller names one it declares so).
        unsafe { std::mem::transmute(self.addr(name)) }
    }
    fn f2_32(&self, name: &str) -> extern "C" fn(u32, u32) -> u32 {
        // SAFETY: `name`'s function in this test's IR has this signature (each caller names one it declares so).
        unsafe { std::mem::transmute(self.addr(name)) }
    }
    fn f3_32(&self, name: &str) -> extern "C" fn(u32, u32, u32) -> u32 {
        // SAFETY: `name`'s function in this test's IR has this signature (each caller names one it declares so).
        unsafe { std::mem::transmute(self.addr(name)) }
    }
    fn f4_32(&self, name: &str) -> extern "C" fn(u32, u32, u32, u32) -> u32 {
        // SAFETY: `name`'s function in this test's IR has this signature (each caller names one it declares so).
        unsafe { std::mem::transmute(self.addr(name)) }
    }
    fn f1_64(&self, name: &str) -> extern "C" fn(u64) -> u64 {
        // SAFETY: `name`'s function in this test's IR has this signature (each caller names one it declares so).
        unsafe { std::mem::transmute(self.addr(name)) }
    }
    fn f_64_32_32(&self, name: &str) -> extern "C" fn(u64, u32, u32) -> u64 {
        // SAFETY: `name`'s function in this test's IR has this signature (each caller names one it declares so).
        unsafe { std::mem::transmute(self.addr(name)) }
    }
    fn f4_64_32(&self, name: &str) -> extern "C" fn(u64, u64, u32, u32) -> u64 {
        // SAFETY: `name`'s function in this test's IR has this signature (each caller names one it declares so).
        unsafe { std::mem::transmute(self.addr(name)) }
    }
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
    src += ".visible .func (.reg .b32 f) bfi_b32(.reg .b32 a, .reg .b32 b, .reg .b32 c, .reg .b32 d)\n{\n\tbfi.b32 f, a, b, c, d;\n\tret;\n}\n";
    src += ".visible .func (.reg .b64 f) bfi_b64(.reg .b64 a, .reg .b64 b, .reg .b32 c, .reg .b32 d)\n{\n\tbfi.b64 f, a, b, c, d;\n\tret;\n}\n";
    with_jit(&src, 0, |j| {
        let (bu, bs) = (j.f3_32("bfe_u32"), j.f3_32("bfe_s32"));
        let (bu64, bs64) = (j.f_64_32_32("bfe_u64"), j.f_64_32_32("bfe_s64"));
        let (fi32, fi64) = (j.f4_32("bfi_b32"), j.f4_64_32("bfi_b64"));
        let mut n = 0;
        let a32 = [0x8765_4321u32, 0x7fff_fffe, 0xffff_ffff, 0x0000_0001];
        let a64 = [
            0x8765_4321_0fed_cba9u64,
            0x7fff_ffff_ffff_fffe,
            0xffff_ffff_ffff_ffff,
            1,
        ];
        for pos in 0..=300u32 {
            for len in 0..=300u32 {
                // Bits above the low byte are ignored.
                let (b, c) = if pos > 255 || len > 255 {
                    (pos | 0x1200, len | 0x3400)
                } else {
                    (pos, len)
                };
                for k in 0..4 {
                    let a = a32[k];
                    assert_eq!(
                        bu(a, b, c) as u64,
                        ref_bfe(a as u64, b, c, 32, false),
                        "bfe.u32 {a:#x} {b} {c}"
                    );
                    assert_eq!(
                        bs(a, b, c) as u64,
                        ref_bfe(a as u64, b, c, 32, true),
                        "bfe.s32 {a:#x} {b} {c}"
                    );
                    let a6 = a64[k];
                    assert_eq!(
                        bu64(a6, b, c),
                        ref_bfe(a6, b, c, 64, false),
                        "bfe.u64 {a6:#x} {b} {c}"
                    );
                    assert_eq!(
                        bs64(a6, b, c),
                        ref_bfe(a6, b, c, 64, true),
                        "bfe.s64 {a6:#x} {b} {c}"
                    );
                    let bb = a32[(k + 1) % 4];
                    assert_eq!(
                        fi32(a, bb, b, c) as u64,
                        ref_bfi(a as u64, bb as u64, b, c, 32),
                        "bfi.b32 {a:#x} {bb:#x} {b} {c}"
                    );
                    let bb6 = a64[(k + 1) % 4];
                    assert_eq!(
                        fi64(a6, bb6, b, c),
                        ref_bfi(a6, bb6, b, c, 64),
                        "bfi.b64 {a6:#x} {bb6:#x} {b} {c}"
                    );
                    n += 6;
                }
            }
        }
        println!("bfe/bfi: {n} cases");
    });
}

#[test]
fn prmt_all_modes() {
    let mut src = String::new();
    for m in ["", "f4e", "b4e", "rc8", "ecl", "ecr", "rc16"] {
        let dot = if m.is_empty() {
            String::new()
        } else {
            format!(".{m}")
        };
        src += &func3(
            &format!("prmt_{}", if m.is_empty() { "gen" } else { m }),
            "b32",
            &format!("prmt.b32{dot} d, a, b, c;"),
        );
    }
    with_jit(&src, 0, |j| {
        let (a, b) = (0x8877_6655u32, 0x4433_2211u32);
        let (a2, b2) = (0x01f2_e380u32, 0x7f00_ff81u32);
        let g = j.f3_32("prmt_gen");
        // Every 16-bit selector, two operand pairs, upper selector bits set or not.
        for c in 0..=0xffffu32 {
            assert_eq!(g(a, b, c), ref_prmt(a, b, c, ""), "prmt {c:#x}");
            assert_eq!(
                g(a2, b2, c | 0xabcd_0000),
                ref_prmt(a2, b2, c, ""),
                "prmt {c:#x}"
            );
        }
        for m in ["f4e", "b4e", "rc8", "ecl", "ecr", "rc16"] {
            let f = j.f3_32(&format!("prmt_{m}"));
            for c in ints32(200, 7) {
                assert_eq!(f(a, b, c), ref_prmt(a, b, c, m), "prmt.{m} {c:#x}");
                assert_eq!(f(a2, b2, c), ref_prmt(a2, b2, c, m), "prmt.{m} {c:#x}");
            }
        }
    });
}

#[test]
fn lop3_every_table() {
    let mut src = String::new();
    for lut in 0..256 {
        src += &func3(
            &format!("lop3_{lut}"),
            "b32",
            &format!("lop3.b32 d, a, b, c, {lut};"),
        );
    }
    // A table in a register (not a constant).
    src += ".visible .func (.reg .b32 d) lop3_reg(.reg .b32 a, .reg .b32 b, .reg .b32 c, .reg .b32 l)\n{\n\tlop3.b32 d, a, b, c, l;\n\tret;\n}\n";
    // The predicate form: p = (d != 0) .or/.and q.
    src += ".visible .func (.reg .b32 r) lop3_or(.reg .b32 a, .reg .b32 b, .reg .b32 c, .reg .b32 q)\n{\n\t.reg .pred p, pq;\n\t.reg .b32 d;\n\tsetp.ne.u32 pq, q, 0;\n\tlop3.or.b32 d|p, a, b, c, 0x80, pq;\n\tselp.u32 r, 1, 0, p;\n\tret;\n}\n";
    src += ".visible .func (.reg .b32 r) lop3_and(.reg .b32 a, .reg .b32 b, .reg .b32 c, .reg .b32 q)\n{\n\t.reg .pred p, pq;\n\t.reg .b32 d;\n\tsetp.ne.u32 pq, q, 0;\n\tlop3.and.b32 d|p, a, b, c, 0x80, pq;\n\tselp.u32 r, 1, 0, p;\n\tret;\n}\n";
    with_jit(&src, 2, |j| {
        let vals = ints32(24, 3);
        let reg = j.f4_32("lop3_reg");
        for lut in 0..256u32 {
            let f = j.f3_32(&format!("lop3_{lut}"));
            for k in 0..vals.len() {
                let (a, b, c) = (
                    vals[k],
                    vals[(k * 7 + 1) % vals.len()],
                    vals[(k * 13 + 5) % vals.len()],
                );
                assert_eq!(f(a, b, c), ref_lop3(a, b, c, lut), "lop3 {lut:#x}");
                assert_eq!(
                    reg(a, b, c, lut),
                    ref_lop3(a, b, c, lut),
                    "lop3 reg {lut:#x}"
                );
            }
        }
        let (or, and) = (j.f4_32("lop3_or"), j.f4_32("lop3_and"));
        for (a, q) in [(0u32, 0u32), (0, 1), (0xffff_ffff, 0), (0xffff_ffff, 1)] {
            let nz = (a & a & a) != 0;
            assert_eq!(or(a, a, a, q), (nz || q != 0) as u32);
            assert_eq!(and(a, a, a, q), (nz && q != 0) as u32);
        }
    });
}

#[test]
fn shf_fns_bfind_bmsk_szext() {
    let mut src = String::new();
    for d in ["l", "r"] {
        for m in ["wrap", "clamp"] {
            src += &func3(
                &format!("shf_{d}_{m}"),
                "b32",
                &format!("shf.{d}.{m}.b32 d, a, b, c;"),
            );
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
    with_jit(&src, 0, |j| {
        let vals = ints32(40, 11);
        for d in ["l", "r"] {
            for m in ["wrap", "clamp"] {
                let f = j.f3_32(&format!("shf_{d}_{m}"));
                for &a in &vals[..12] {
                    for c in (0..70).chain([0x7fff_ffff, 0x8000_0000, 0xffff_ffff, 0x1_0020]) {
                        let b = a.rotate_left(7) ^ 0x5a5a_1234;
                        assert_eq!(
                            f(a, b, c),
                            ref_shf(a, b, c, d == "l", m == "clamp"),
                            "shf.{d}.{m} {a:#x} {b:#x} {c}"
                        );
                    }
                }
            }
        }
        let f = j.f3_32("fns");
        for &mask in &vals {
            for base in 0..32u32 {
                for off in -34i32..=34 {
                    assert_eq!(
                        f(mask, base, off as u32),
                        ref_fns(mask, base, off),
                        "fns {mask:#x} {base} {off}"
                    );
                }
                for off in [i32::MIN, i32::MAX, -1000, 1000] {
                    assert_eq!(
                        f(mask, base, off as u32),
                        ref_fns(mask, base, off),
                        "fns {mask:#x} {base} {off}"
                    );
                }
            }
        }
        for t in ["u32", "s32"] {
            for s in ["", "_shiftamt"] {
                let f = j.f1_32(&format!("bfind_{t}{s}"));
                for &a in &vals {
                    for a in [a, a >> (a & 31), !(a >> (a & 31))] {
                        assert_eq!(
                            f(a),
                            ref_bfind(a as u64, 32, t == "s32", !s.is_empty()),
                            "bfind{s}.{t} {a:#x}"
                        );
                    }
                }
            }
        }
        for t in ["u64", "s64"] {
            for s in ["", "_shiftamt"] {
                let f = j.f1_64(&format!("bfind_{t}{s}"));
                for a in ints64(60, 5) {
                    for a in [a, a >> (a & 63), !(a >> (a & 63))] {
                        assert_eq!(
                            f(a) as u32,
                            ref_bfind(a, 64, t == "s64", !s.is_empty()),
                            "bfind{s}.{t} {a:#x}"
                        );
                    }
                }
            }
        }
        for m in ["wrap", "clamp"] {
            let f = j.f2_32(&format!("bmsk_{m}"));
            let sz = [
                j.f2_32(&format!("szext_{m}_u32")),
                j.f2_32(&format!("szext_{m}_s32")),
            ];
            for a in (0..70).chain(vals.iter().copied()) {
                for b in (0..70).chain([0x100, 0x120, 0xffff_ffff, 0x8000_0000]) {
                    assert_eq!(f(a, b), ref_bmsk(a, b, m == "clamp"), "bmsk.{m} {a} {b}");
                }
            }
            for &a in &vals {
                for b in (0..70).chain([0x100, 0x120, 0xffff_ffff, 0x8000_0000]) {
                    assert_eq!(
                        sz[0](a, b),
                        ref_szext(a, b, m == "clamp", false),
                        "szext.{m}.u32 {a:#x} {b}"
                    );
                    assert_eq!(
                        sz[1](a, b),
                        ref_szext(a, b, m == "clamp", true),
                        "szext.{m}.s32 {a:#x} {b}"
                    );
                }
            }
        }
    });
}

#[test]
fn dp4a_dp2a() {
    let mut src = String::new();
    for at in ["u32", "s32"] {
        for bt in ["u32", "s32"] {
            src += &func3(
                &format!("dp4a_{at}_{bt}"),
                "b32",
                &format!("dp4a.{at}.{bt} d, a, b, c;"),
            );
            for m in ["lo", "hi"] {
                src += &func3(
                    &format!("dp2a_{m}_{at}_{bt}"),
                    "b32",
                    &format!("dp2a.{m}.{at}.{bt} d, a, b, c;"),
                );
            }
        }
    }
    with_jit(&src, 0, |j| {
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
                    assert_eq!(
                        f(a, b, c),
                        ref_dp(false, false, a, b, c, sa, sb),
                        "dp4a.{at}.{bt}"
                    );
                    assert_eq!(
                        lo(a, b, c),
                        ref_dp(true, false, a, b, c, sa, sb),
                        "dp2a.lo.{at}.{bt}"
                    );
                    assert_eq!(
                        hi(a, b, c),
                        ref_dp(true, true, a, b, c, sa, sb),
                        "dp2a.hi.{at}.{bt}"
                    );
                }
            }
        }
    });
}

// ---- floating point --------------------------------------------------------------------------

fn float_fn(name: &str, ty: &str, n: usize, body: &str) -> String {
    let (bt, ft) = if ty == "f64" {
        ("b64", "f64")
    } else {
        ("b32", "f32")
    };
    let params: Vec<String> = (0..n).map(|k| format!(".reg .{bt} p{k}")).collect();
    let mut s = format!(
        ".visible .func (.reg .{bt} r) {name}({})\n{{\n\t.reg .{ft} x<4>, z;\n",
        params.join(", ")
    );
    for k in 0..n {
        s += &format!("\tmov.{bt} x{k}, p{k};\n");
    }
    s += &format!("\t{body}\n\tmov.{bt} r, z;\n\tret;\n}}\n");
    s
}

#[test]
fn f32_rounding_modes_and_ftz() {
    let ops: &[(&str, usize)] = &[
        ("add", 2),
        ("sub", 2),
        ("mul", 2),
        ("div", 2),
        ("fma", 3),
        ("sqrt", 1),
        ("rcp", 1),
    ];
    let mut src = String::new();
    for (op, n) in ops {
        for r in ["rn", "rz", "rm", "rp"] {
            for ftz in ["", ".ftz"] {
                let args = ["x0", "x1", "x2"][..*n].join(", ");
                src += &float_fn(
                    &format!("{op}_{r}{}", ftz.replace('.', "_")),
                    "f32",
                    *n,
                    &format!("{op}.{r}{ftz}.f32 z, {args};"),
                );
            }
        }
    }
    // .sat and the legacy mad.
    src += &float_fn("add_sat", "f32", 2, "add.sat.f32 z, x0, x1;");
    src += &float_fn("mul_rz_ftz_sat", "f32", 2, "mul.rz.ftz.sat.f32 z, x0, x1;");
    src += &float_fn("mad_rm", "f32", 3, "mad.rm.f32 z, x0, x1, x2;");
    with_jit(&src, 0, |j| {
        let vals = floats32(90, 17);
        let mut count = 0u64;
        for (op, n) in ops {
            for r in ["rn", "rz", "rm", "rp"] {
                for ftz in [false, true] {
                    let name = format!("{op}_{r}{}", if ftz { "_ftz" } else { "" });
                    let addr = j.addr(&name);
                    let reference = |x: &[f32]| -> f32 {
                        let x: Vec<f32> =
                            x.iter().map(|v| if ftz { ftz32(*v) } else { *v }).collect();
                        let v = with_mode(mode_of(r), || match *op {
                            "add" => bb(x[0]) + bb(x[1]),
                            "sub" => bb(x[0]) - bb(x[1]),
                            "mul" => bb(x[0]) * bb(x[1]),
                            "div" => bb(x[0]) / bb(x[1]),
                            "fma" => bb(x[0]).mul_add(bb(x[1]), bb(x[2])),
                            "sqrt" => bb(x[0]).sqrt(),
                            _ => 1.0 / bb(x[0]),
                        });
                        // `.ftz` flushes a product or quotient by its exact value (measured on an
                        // H200, `tests/cpu_gpu_measured.rs`), even where it rounds up to 2^-126.
                        let exact = match *op {
                            "mul" => x[0] as f64 * x[1] as f64,
                            "div" => x[0] as f64 / x[1] as f64,
                            "rcp" => 1.0 / x[0] as f64,
                            "fma" => {
                                // TwoSum of the exact product and c; nudged inwards at 2^-126
                                // when the exact value lies below it.
                                let (p, c) = (x[0] as f64 * x[1] as f64, x[2] as f64);
                                let s = p + c;
                                let bp = s - c;
                                let e = (p - bp) + (c - (s - bp));
                                if s.abs() == f32::MIN_POSITIVE as f64 && s * e < 0.0 {
                                    s * (1.0 - f64::EPSILON)
                                } else {
                                    s
                                }
                            }
                            _ => 1.0,
                        };
                        // Tininess after rounding to 24 bits, unbounded exponent (GPU_DIFF.md).
                        let min = f32::MIN_POSITIVE as f64;
                        let below = min * (1.0 - 2f64.powi(-24));
                        let up = match r {
                            "rz" => false,
                            "rp" => exact > 0.0 && exact.abs() > below,
                            "rm" => exact < 0.0 && exact.abs() > below,
                            _ => exact.abs() >= min * (1.0 - 2f64.powi(-25)),
                        };
                        if ftz && exact.abs() < min && !up {
                            0.0f32.copysign(v)
                        } else if ftz {
                            ftz32(v)
                        } else {
                            v
                        }
                    };
                    for (k, &a) in vals.iter().enumerate() {
                        for (m, &b) in
                            vals.iter()
                                .enumerate()
                                .step_by(if *n == 1 { vals.len() } else { 1 })
                        {
                            let c = vals[(k * 31 + m * 7) % vals.len()];
                            let got = match n {
                                // SAFETY: the function at this JIT address was compiled from this test's IR with this signature.
                                1 => (unsafe { std::mem::transmute::<usize, F1u32>(addr) })(a),
                                // SAFETY: the function at this JIT address was compiled from this test's IR with this signature.
                                2 => (unsafe { std::mem::transmute::<usize, F2u32>(addr) })(a, b),
                                _ => {
                                    // SAFETY: the function at this JIT address was compiled from this test's IR with this signature.
                                    (unsafe { std::mem::transmute::<usize, F3u32>(addr) })(a, b, c)
                                }
                            };
                            let want = reference(&[
                                f32::from_bits(a),
                                f32::from_bits(b),
                                f32::from_bits(c),
                            ])
                            .to_bits();
                            assert!(same32(got, want), "{name}({a:#010x}, {b:#010x}, {c:#010x}) = {got:#010x}, want {want:#010x}");
                            count += 1;
                        }
                    }
                }
            }
        }
        let (sat, mrs, mad) = (
            j.f2_32("add_sat"),
            j.f2_32("mul_rz_ftz_sat"),
            j.f3_32("mad_rm"),
        );
        let satf = |v: f32| {
            if v.is_nan() || v <= 0.0 {
                0.0
            } else {
                v.min(1.0)
            }
        };
        for &a in &vals {
            for &b in &vals {
                let (x, y) = (f32::from_bits(a), f32::from_bits(b));
                assert!(
                    same32(sat(a, b), satf(x + y).to_bits()),
                    "add.sat {a:#x} {b:#x}"
                );
                let want = satf(ftz32(with_mode(RZ, || bb(ftz32(x)) * bb(ftz32(y)))));
                assert!(
                    same32(mrs(a, b), want.to_bits()),
                    "mul.rz.ftz.sat {a:#x} {b:#x}"
                );
                let want = with_mode(RM, || bb(x).mul_add(bb(y), bb(x)));
                assert!(same32(mad(a, b, a), want.to_bits()), "mad.rm {a:#x} {b:#x}");
            }
        }
        println!("f32 rounding: {count} cases");
    });
}

#[test]
fn f64_rounding_modes() {
    let ops: &[(&str, usize)] = &[
        ("add", 2),
        ("sub", 2),
        ("mul", 2),
        ("div", 2),
        ("fma", 3),
        ("sqrt", 1),
        ("rcp", 1),
    ];
    let mut src = String::new();
    for (op, n) in ops {
        for r in ["rn", "rz", "rm", "rp"] {
            let args = ["x0", "x1", "x2"][..*n].join(", ");
            src += &float_fn(
                &format!("{op}_{r}"),
                "f64",
                *n,
                &format!("{op}.{r}.f64 z, {args};"),
            );
        }
    }
    with_jit(&src, 0, |j| {
        let vals = floats64(60, 23);
        for (op, n) in ops {
            for r in ["rn", "rz", "rm", "rp"] {
                let name = format!("{op}_{r}");
                let addr = j.addr(&name);
                for (k, &a) in vals.iter().enumerate() {
                    for (m, &b) in
                        vals.iter()
                            .enumerate()
                            .step_by(if *n == 1 { vals.len() } else { 1 })
                    {
                        let c = vals[(k * 31 + m * 7) % vals.len()];
                        let got = match n {
                            // SAFETY: the function at this JIT address was compiled from this test's IR with this signature.
                            1 => (unsafe { std::mem::transmute::<usize, F1u64>(addr) })(a),
                            // SAFETY: the function at this JIT address was compiled from this test's IR with this signature.
                            2 => (unsafe { std::mem::transmute::<usize, F2u64>(addr) })(a, b),
                            // SAFETY: the function at this JIT address was compiled from this test's IR with this signature.
                            _ => (unsafe { std::mem::transmute::<usize, F3u64>(addr) })(a, b, c),
                        };
                        let (x, y, z) = (f64::from_bits(a), f64::from_bits(b), f64::from_bits(c));
                        let want = f64_op(op, r, x, y, z).to_bits();
                        assert!(
                        same64(got, want),
                        "{name}({a:#018x}, {b:#018x}, {c:#018x}) = {got:#018x}, want {want:#018x}"
                    );
                    }
                }
            }
        }
    });
}

#[test]
fn host_rounding_mode_is_effective() {
    let third = |m| with_mode(m, || bb(1.0f32) / bb(3.0f32)).to_bits();
    assert_eq!(third(RN), 0x3eaa_aaab);
    assert_eq!(third(RZ), 0x3eaa_aaaa);
    assert_eq!(third(RM), 0x3eaa_aaaa);
    assert_eq!(third(RP), 0x3eaa_aaab);
}

fn cvt_fn(name: &str, dt: &str, st: &str, mods: &str) -> String {
    let bits = |t: &str| -> u32 {
        t.trim_start_matches(|c: char| c.is_ascii_alphabetic())
            .parse()
            .unwrap()
    };
    let reg = |t: &str| if bits(t) == 64 { "b64" } else { "b32" };
    let (dr, sr) = (reg(dt), reg(st));
    // Registers of the instruction types; 8/16-bit values travel in 32-bit parameters.
    let decl = |t: &str, n: &str| -> String {
        let rt = match t {
            "f16" | "bf16" => "b16".to_string(),
            _ if bits(t) == 8 => format!("{}16", &t[..1]),
            _ => t.to_string(),
        };
        format!(".reg .{rt} {n};")
    };
    let mv_in = match st {
        "f16" | "bf16" => "cvt.u16.u32 x, p;".to_string(),
        _ if bits(st) == 8 => format!("cvt.{}16.u32 x, p;", &st[..1]),
        _ if bits(st) == 16 => format!("cvt.{}16.{}32 x, p;", &st[..1], &st[..1]),
        _ => format!("mov.{sr} x, p;"),
    };
    let mv_out = match dt {
        "f16" | "bf16" => "cvt.u32.u16 r, z;".to_string(),
        _ if bits(dt) == 8 || bits(dt) == 16 => format!(
            "cvt.u32.{}16 r, z;",
            if dt.starts_with('s') { "s" } else { "u" }
        ),
        _ => format!("mov.{dr} r, z;"),
    };
    format!(
        ".visible .func (.reg .{dr} r) {name}(.reg .{sr} p)\n{{\n\t{}\n\t{}\n\t{mv_in}\n\tcvt{mods}.{dt}.{st} z, x;\n\t{mv_out}\n\tret;\n}}\n",
        decl(st, "x"),
        decl(dt, "z")
    )
}

#[test]
fn cvt_int_int() {
    let mut src = String::new();
    for d in INT_TYPES {
        for s in INT_TYPES {
            src += &cvt_fn(&format!("c_{d}_{s}"), d, s, "");
            src += &cvt_fn(&format!("cs_{d}_{s}"), d, s, ".sat");
        }
    }
    with_jit(&src, 0, |j| {
        for d in INT_TYPES {
            for s in INT_TYPES {
                let db: u32 = d[1..].parse().unwrap();
                let (lo, hi) = if d.starts_with('s') {
                    (-(1i128 << (db - 1)), (1i128 << (db - 1)) - 1)
                } else {
                    (0, (1i128 << db) - 1)
                };
                let f = j.addr(&format!("c_{d}_{s}"));
                let fsat = j.addr(&format!("cs_{d}_{s}"));
                for v in ints64(80, 31) {
                    let x = int_val(v, s);
                    // The function returns the destination register (sign- or zero-extended).
                    let call = |a: usize| -> i128 {
                        let r: u64 = match (s.ends_with("64"), d.ends_with("64")) {
                            // SAFETY: the function at this JIT address was compiled from this test's IR with this signature.
                            (true, true) => (unsafe { std::mem::transmute::<usize, F1u64>(a) })(v),
                            // SAFETY: the function at this JIT address was compiled from this test's IR with this signature.
                            (true, false) => (unsafe {
                                std::mem::transmute::<usize, extern "C" fn(u64) -> u32>(a)
                            })(v) as u64,
                            // SAFETY: the function at this JIT address was compiled from this test's IR with this signature.
                            (false, true) => (unsafe {
                                std::mem::transmute::<usize, extern "C" fn(u32) -> u64>(a)
                            })(v as u32),
                            _ => {
                                // SAFETY: the function at this JIT address was compiled from this test's IR with this signature.
                                (unsafe { std::mem::transmute::<usize, F1u32>(a) })(v as u32) as u64
                            }
                        };
                        int_val(r, d)
                    };
                    let wrap = int_val(x as u64, d);
                    assert_eq!(call(f), wrap, "cvt.{d}.{s} {v:#x}");
                    assert_eq!(call(fsat), x.clamp(lo, hi), "cvt.sat.{d}.{s} {v:#x}");
                }
            }
        }
    });
}

#[test]
fn cvt_float_int() {
    let mut src = String::new();
    for d in INT_TYPES {
        for s in ["f16", "bf16", "f32", "f64"] {
            for r in ["rni", "rzi", "rmi", "rpi"] {
                src += &cvt_fn(&format!("c_{d}_{s}_{r}"), d, s, &format!(".{r}"));
            }
            if s == "f32" {
                src += &cvt_fn(&format!("c_{d}_{s}_ftz"), d, s, ".rpi.ftz");
            }
        }
    }
    with_jit(&src, 0, |j| {
        for d in INT_TYPES {
            let db: u32 = d[1..].parse().unwrap();
            let (lo, hi) = if d.starts_with('s') {
                (-(1i128 << (db - 1)), (1i128 << (db - 1)) - 1)
            } else {
                (0, (1i128 << db) - 1)
            };
            for s in ["f16", "bf16", "f32", "f64"] {
                let vals: Vec<f64> = if s == "f64" {
                    floats64(120, 3).into_iter().map(f64::from_bits).collect()
                } else {
                    floats32(150, 3)
                        .into_iter()
                        .map(|b| f32::from_bits(b) as f64)
                        .collect()
                };
                let extra = [
                    0.5,
                    1.5,
                    2.5,
                    -0.5,
                    -1.5,
                    -2.5,
                    127.5,
                    128.0,
                    -128.5,
                    255.5,
                    256.0,
                    65535.4,
                    65536.0,
                    2147483647.5,
                    -2147483648.7,
                    4294967295.2,
                    9.3e18,
                    -9.3e18,
                    1.9e19,
                ];
                for x in vals.into_iter().chain(extra) {
                    // The source value as the instruction sees it.
                    let (bits, xv) = match s {
                        "f16" => {
                            let h = ref_to_half(x, false, "rn");
                            (h as u64, half_to_f64(h, false))
                        }
                        "bf16" => {
                            let h = ref_to_half(x, true, "rn");
                            (h as u64, half_to_f64(h, true))
                        }
                        "f32" => ((x as f32).to_bits() as u64, x as f32 as f64),
                        _ => (x.to_bits(), x),
                    };
                    for r in ["rni", "rzi", "rmi", "rpi", "ftz"] {
                        if r == "ftz" && s != "f32" {
                            continue;
                        }
                        let a = j.addr(&format!("c_{d}_{s}_{r}"));
                        let got: u64 = match (s == "f64", db == 64) {
                            (true, true) => {
                                // SAFETY: the function at this JIT address was compiled from this test's IR with this signature.
                                (unsafe { std::mem::transmute::<usize, F1u64>(a) })(bits)
                            }
                            // SAFETY: the function at this JIT address was compiled from this test's IR with this signature.
                            (true, false) => (unsafe {
                                std::mem::transmute::<usize, extern "C" fn(u64) -> u32>(a)
                            })(bits) as u64,
                            // SAFETY: the function at this JIT address was compiled from this test's IR with this signature.
                            (false, true) => (unsafe {
                                std::mem::transmute::<usize, extern "C" fn(u32) -> u64>(a)
                            })(bits as u32),
                            // SAFETY: the function at this JIT address was compiled from this test's IR with this signature.
                            _ => (unsafe { std::mem::transmute::<usize, F1u32>(a) })(bits as u32)
                                as u64,
                        };
                        let xin = if r == "ftz" && (xv as f32).is_subnormal() {
                            0.0
                        } else {
                            xv
                        };
                        let want: i128 = if xin.is_nan() {
                            if s == "f64" || db == 64 {
                                int_val(1u64 << (db - 1), d)
                            } else {
                                0
                            }
                        } else {
                            let y = match r {
                                "rni" => xin.round_ties_even(),
                                "rzi" => xin.trunc(),
                                "rmi" => xin.floor(),
                                _ => xin.ceil(),
                            };
                            if y >= hi as f64 {
                                hi
                            } else if y <= lo as f64 {
                                lo
                            } else {
                                y as i128
                            }
                        };
                        assert_eq!(
                            int_val(got, d),
                            want,
                            "cvt.{r}.{d}.{s} {x:e} (bits {bits:#x})"
                        );
                    }
                }
            }
        }
    });
}

#[test]
fn cvt_to_float() {
    let fts = ["f16", "bf16", "f32", "f64"];
    let mut src = String::new();
    for d in fts {
        for s in INT_TYPES.iter().copied().chain(fts) {
            for r in ["rn", "rz", "rm", "rp"] {
                let exact = s.starts_with('f')
                    && d.starts_with('f')
                    && d[1..].parse::<u32>().unwrap() >= s[1..].parse::<u32>().unwrap_or(16)
                    && !(d == "f16" && s == "bf16");
                let exact = exact
                    || (s == "bf16" && (d == "f32" || d == "f64"))
                    || (s == "f16" && d != "bf16" && d != "f16");
                let mods = if exact || s == d {
                    String::new()
                } else {
                    format!(".{r}")
                };
                src += &cvt_fn(&format!("c_{d}_{s}_{r}"), d, s, &mods);
            }
        }
    }
    src += &cvt_fn("sat_f32_f32", "f32", "f32", ".sat");
    src += &cvt_fn("ftz_f32_f32", "f32", "f32", ".ftz");
    src += &cvt_fn("rni_f32_f32", "f32", "f32", ".rni");
    src += &cvt_fn("sat_f16_f32", "f16", "f32", ".rn.sat");
    src += &cvt_fn("relu_f16_f32", "f16", "f32", ".rn.relu");
    src += &cvt_fn("satfinite_bf16_f32", "bf16", "f32", ".rz.satfinite");
    src += &cvt_fn("ftz_f32_f64", "f32", "f64", ".rm.ftz");
    with_jit(&src, 0, |j| {
        let ivals = ints64(70, 41);
        let fvals64: Vec<u64> = floats64(60, 5);
        let fvals32: Vec<u32> = floats32(120, 5);
        for d in fts {
            for s in INT_TYPES.iter().copied().chain(fts) {
                for r in ["rn", "rz", "rm", "rp"] {
                    let name = format!("c_{d}_{s}_{r}");
                    let a = j.addr(&name);
                    let inputs: Vec<(u64, f64, Option<i128>)> = if s.starts_with('f') || s == "bf16"
                    {
                        match s {
                            "f64" => fvals64
                                .iter()
                                .map(|b| (*b, f64::from_bits(*b), None))
                                .collect(),
                            "f32" => fvals32
                                .iter()
                                .map(|b| (*b as u64, f32::from_bits(*b) as f64, None))
                                .collect(),
                            _ => fvals32
                                .iter()
                                .map(|b| {
                                    let h =
                                        ref_to_half(f32::from_bits(*b) as f64, s == "bf16", "rn");
                                    (h as u64, half_to_f64(h, s == "bf16"), None)
                                })
                                .collect(),
                        }
                    } else {
                        ivals
                            .iter()
                            .map(|v| (*v, 0.0, Some(int_val(*v, s))))
                            .collect()
                    };
                    let wide_in = s.ends_with("64");
                    let wide_out = d == "f64";
                    for (bits, xf, xi) in inputs {
                        let got: u64 = match (wide_in, wide_out) {
                            (true, true) => {
                                // SAFETY: the function at this JIT address was compiled from this test's IR with this signature.
                                (unsafe { std::mem::transmute::<usize, F1u64>(a) })(bits)
                            }
                            // SAFETY: the function at this JIT address was compiled from this test's IR with this signature.
                            (true, false) => (unsafe {
                                std::mem::transmute::<usize, extern "C" fn(u64) -> u32>(a)
                            })(bits) as u64,
                            // SAFETY: the function at this JIT address was compiled from this test's IR with this signature.
                            (false, true) => (unsafe {
                                std::mem::transmute::<usize, extern "C" fn(u32) -> u64>(a)
                            })(bits as u32),
                            // SAFETY: the function at this JIT address was compiled from this test's IR with this signature.
                            _ => (unsafe { std::mem::transmute::<usize, F1u32>(a) })(bits as u32)
                                as u64,
                        };
                        // Reference: the exact value, rounded once.
                        let want: u64 = match d {
                            "f16" | "bf16" => {
                                let x = match xi {
                                    Some(i) => i as f64, // exact for |i| < 2^53; larger ones overflow f16 or…
                                    None => xf,
                                };
                                let x = match (xi, d) {
                                    // …round to bf16 through the exact integer (8 significant bits).
                                    (Some(i), "bf16") if i.unsigned_abs() >= 1 << 53 => {
                                        // Round to odd at 53 bits, then once to bf16.
                                        let u = i.unsigned_abs();
                                        let sh = 128 - u.leading_zeros() as i32 - 53;
                                        let m = (u >> sh) | (u & ((1u128 << sh) - 1) != 0) as u128;
                                        let v = (m as f64) * 2f64.powi(sh);
                                        if i < 0 {
                                            -v
                                        } else {
                                            v
                                        }
                                    }
                                    _ => x,
                                };
                                ref_to_half(x, d == "bf16", r) as u64
                            }
                            "f32" => match xi {
                                Some(i) => with_mode(mode_of(r), || u_to_f32(i)).to_bits() as u64,
                                None => with_mode(mode_of(r), || bb(xf) as f32).to_bits() as u64,
                            },
                            _ => match xi {
                                Some(i) => with_mode(mode_of(r), || u_to_f64(i)).to_bits(),
                                None => xf.to_bits(),
                            },
                        };
                        let ok = match d {
                            "f16" => {
                                got == want
                                    || (half_to_f64(got as u16, false).is_nan()
                                        && half_to_f64(want as u16, false).is_nan())
                            }
                            "bf16" => {
                                got == want
                                    || (half_to_f64(got as u16, true).is_nan()
                                        && half_to_f64(want as u16, true).is_nan())
                            }
                            "f32" => same32(got as u32, want as u32),
                            _ => same64(got, want),
                        };
                        assert!(
                            ok,
                            "{name}: cvt.{r}.{d}.{s} {bits:#x} = {got:#x}, want {want:#x}"
                        );
                    }
                }
            }
        }
        let satf = |v: f32| {
            if v.is_nan() || v <= 0.0 {
                0.0
            } else {
                v.min(1.0)
            }
        };
        let (sat, ftz, rni) = (
            j.f1_32("sat_f32_f32"),
            j.f1_32("ftz_f32_f32"),
            j.f1_32("rni_f32_f32"),
        );
        let (h_sat, h_relu, b_sf) = (
            j.f1_32("sat_f16_f32"),
            j.f1_32("relu_f16_f32"),
            j.f1_32("satfinite_bf16_f32"),
        );
        let f_ftz: extern "C" fn(u64) -> u32 =
            // SAFETY: the function at this JIT address was compiled from this test's IR with this signature.
            unsafe { std::mem::transmute(j.addr("ftz_f32_f64")) };
        for &b in &fvals32 {
            let x = f32::from_bits(b);
            assert!(same32(sat(b), satf(x).to_bits()), "cvt.sat.f32.f32 {b:#x}");
            assert!(same32(ftz(b), ftz32(x).to_bits()), "cvt.ftz.f32.f32 {b:#x}");
            assert!(
                same32(rni(b), x.round_ties_even().to_bits()),
                "cvt.rni.f32.f32 {b:#x}"
            );
            let h = ref_to_half(x as f64, false, "rn");
            let hs = if x.is_nan() || x <= 0.0 {
                0
            } else if half_to_f64(h, false) >= 1.0 {
                0x3c00
            } else {
                h
            };
            assert_eq!(h_sat(b) as u16, hs, "cvt.rn.sat.f16.f32 {b:#x}");
            let hr = if x.is_nan() {
                0x7fff
            } else if x.is_sign_negative() {
                0
            } else {
                h
            };
            assert_eq!(h_relu(b) as u16, hr, "cvt.rn.relu.f16.f32 {b:#x}");
            let bz = ref_to_half(x as f64, true, "rz");
            let bz = if x.is_infinite() {
                if x > 0.0 {
                    0x7f7f
                } else {
                    0xff7f
                }
            } else {
                bz
            };
            let got = b_sf(b) as u16;
            assert!(
                got == bz || (x.is_nan() && half_to_f64(got, true).is_nan()),
                "cvt.rz.satfinite.bf16.f32 {b:#x}: {got:#x} want {bz:#x}"
            );
        }
        for &b in &fvals64 {
            let want = ftz32(with_mode(RM, || bb(f64::from_bits(b)) as f32));
            assert!(
                same32(f_ftz(b), want.to_bits()),
                "cvt.rm.ftz.f32.f64 {b:#x}"
            );
        }
    });
}

// ---- min/max, testp, copysign, 16-bit arithmetic ----------------------------------------------

#[test]
fn minmax_testp_copysign() {
    let mut src = String::new();
    for op in ["min", "max"] {
        for m in ["", ".NaN", ".xorsign.abs", ".NaN.xorsign.abs", ".ftz"] {
            let n = format!("{op}{}", m.replace('.', "_"));
            src += &float_fn(
                &format!("{n}_f32"),
                "f32",
                2,
                &format!("{op}{m}.f32 z, x0, x1;"),
            );
            if m != ".ftz" {
                src += &format!(".visible .func (.reg .b32 r) {n}_f16(.reg .b32 a, .reg .b32 b)\n{{\n\t.reg .b16 x, y, z;\n\tcvt.u16.u32 x, a;\n\tcvt.u16.u32 y, b;\n\t{op}{m}.f16 z, x, y;\n\tcvt.u32.u16 r, z;\n\tret;\n}}\n");
                src += &format!(".visible .func (.reg .b32 r) {n}_bf16x2(.reg .b32 a, .reg .b32 b)\n{{\n\t{op}{m}.bf16x2 r, a, b;\n\tret;\n}}\n");
            }
        }
        src += &float_fn(
            &format!("{op}3_abs_f32"),
            "f32",
            3,
            &format!("{op}.abs.f32 z, x0, x1, x2;"),
        );
    }
    for c in [
        "finite",
        "infinite",
        "number",
        "notanumber",
        "normal",
        "subnormal",
    ] {
        src += &format!(".visible .func (.reg .b32 r) testp_{c}(.reg .b32 a)\n{{\n\t.reg .pred p;\n\t.reg .f32 x;\n\tmov.b32 x, a;\n\ttestp.{c}.f32 p, x;\n\tselp.u32 r, 1, 0, p;\n\tret;\n}}\n");
        src += &format!(".visible .func (.reg .b32 r) testpd_{c}(.reg .b64 a)\n{{\n\t.reg .pred p;\n\t.reg .f64 x;\n\tmov.b64 x, a;\n\ttestp.{c}.f64 p, x;\n\tselp.u32 r, 1, 0, p;\n\tret;\n}}\n");
    }
    src += &float_fn("copysign", "f32", 2, "copysign.f32 z, x0, x1;");
    with_jit(&src, 0, |j| {
        let vals = floats32(70, 29);
        let halves: Vec<u32> = vals
            .iter()
            .map(|b| ref_to_half(f32::from_bits(*b) as f64, false, "rn") as u32)
            .chain([0x7e00, 0xfe01, 0x8000, 0, 0x0001, 0x8001])
            .collect();
        for op in ["min", "max"] {
            for m in ["", ".NaN", ".xorsign.abs", ".NaN.xorsign.abs", ".ftz"] {
                let n = format!("{op}{}", m.replace('.', "_"));
                let (nan, xa, ftz) = (m.contains("NaN"), m.contains("xorsign"), m == ".ftz");
                let f = j.f2_32(&format!("{n}_f32"));
                for &a in &vals {
                    for &b in &vals {
                        let (x, y) = (f32::from_bits(a), f32::from_bits(b));
                        let (x, y) = if ftz { (ftz32(x), ftz32(y)) } else { (x, y) };
                        let want = ref_minmax(op == "max", nan, xa, x as f64, y as f64) as f32;
                        let want = if want.is_nan() {
                            0x7fff_ffff
                        } else {
                            want.to_bits()
                        };
                        let got = f(a, b);
                        assert_eq!(got, want, "{op}{m}.f32 {a:#x} {b:#x}");
                    }
                }
                if ftz {
                    continue;
                }
                let h = j.f2_32(&format!("{n}_f16"));
                let bx2 = j.f2_32(&format!("{n}_bf16x2"));
                for &a in &halves {
                    for &b in &halves {
                        let want = ref_minmax(
                            op == "max",
                            nan,
                            xa,
                            half_to_f64(a as u16, false),
                            half_to_f64(b as u16, false),
                        );
                        let want = if want.is_nan() {
                            0x7fff
                        } else {
                            ref_to_half(want, false, "rn") as u32
                        };
                        assert_eq!(h(a, b) & 0xffff, want, "{op}{m}.f16 {a:#x} {b:#x}");
                        // bf16x2: lanes (a, b) against (b, a).
                        let (pa, pb) = (a | (b << 16), b | (a << 16));
                        let lane = |p: u32, q: u32| {
                            let w = ref_minmax(
                                op == "max",
                                nan,
                                xa,
                                half_to_f64(p as u16, true),
                                half_to_f64(q as u16, true),
                            );
                            if w.is_nan() {
                                0x7fff
                            } else {
                                ref_to_half(w, true, "rn") as u32
                            }
                        };
                        let (ba, bb_) = (
                            ref_to_half(half_to_f64(a as u16, false), true, "rn") as u32,
                            ref_to_half(half_to_f64(b as u16, false), true, "rn") as u32,
                        );
                        let _ = (pa, pb);
                        let (pa, pb) = (ba | (bb_ << 16), bb_ | (ba << 16));
                        let want2 = lane(ba, bb_) | (lane(bb_, ba) << 16);
                        assert_eq!(bx2(pa, pb), want2, "{op}{m}.bf16x2 {pa:#x} {pb:#x}");
                    }
                }
            }
            let f = j.f3_32(&format!("{op}3_abs_f32"));
            for (k, &a) in vals.iter().enumerate() {
                let (b, c) = (
                    vals[(k * 5 + 1) % vals.len()],
                    vals[(k * 11 + 2) % vals.len()],
                );
                let (x, y, z) = (
                    f32::from_bits(a).abs() as f64,
                    f32::from_bits(b).abs() as f64,
                    f32::from_bits(c).abs() as f64,
                );
                let w = ref_minmax(
                    op == "max",
                    false,
                    false,
                    ref_minmax(op == "max", false, false, x, y),
                    z,
                ) as f32;
                let w = if w.is_nan() { 0x7fff_ffff } else { w.to_bits() };
                assert_eq!(f(a, b, c), w, "{op}.abs.f32 3-input");
            }
        }
        for c in [
            "finite",
            "infinite",
            "number",
            "notanumber",
            "normal",
            "subnormal",
        ] {
            let f = j.f1_32(&format!("testp_{c}"));
            let fd: extern "C" fn(u64) -> u32 =
                // SAFETY: the function at this JIT address was compiled from this test's IR with this signature.
                unsafe { std::mem::transmute(j.addr(&format!("testpd_{c}"))) };
            let class = |fin: bool, inf: bool, nan: bool, norm: bool, sub: bool| match c {
                "finite" => fin,
                "infinite" => inf,
                "number" => !nan,
                "notanumber" => nan,
                "normal" => norm,
                _ => sub,
            };
            for &a in &vals {
                let x = f32::from_bits(a);
                assert_eq!(
                    f(a) == 1,
                    class(
                        x.is_finite(),
                        x.is_infinite(),
                        x.is_nan(),
                        // ±0 are normal for testp (the ISA text; ptx_tests' testp_normal_f32).
                        x.is_normal() || x == 0.0,
                        x.is_subnormal()
                    ),
                    "testp.{c}.f32 {a:#x}"
                );
            }
            for a in floats64(50, 3) {
                let x = f64::from_bits(a);
                assert_eq!(
                    fd(a) == 1,
                    class(
                        x.is_finite(),
                        x.is_infinite(),
                        x.is_nan(),
                        // Measured on an H200 (sm_90, driver 580): `testp.normal.f64` is true
                        // for ±0 (tests/cpu_gpu_measured.rs).
                        x.is_normal() || x == 0.0,
                        x.is_subnormal()
                    ),
                    "testp.{c}.f64 {a:#x}"
                );
            }
        }
        let f = j.f2_32("copysign");
        for &a in &vals {
            for &b in &vals[..20] {
                assert_eq!(
                    f(a, b),
                    (b & 0x7fff_ffff) | (a & 0x8000_0000),
                    "copysign {a:#x} {b:#x}"
                );
            }
        }
    });
}

#[test]
fn half_arith() {
    let mut src = String::new();
    for (ty, tys) in [
        ("f16", &["", ".ftz", ".sat", ".ftz.sat"][..]),
        ("bf16", &[""][..]),
    ] {
        for op in ["add", "sub", "mul"] {
            for m in tys {
                src += &format!(".visible .func (.reg .b32 r) {op}{}_{ty}x2(.reg .b32 a, .reg .b32 b)\n{{\n\t{op}.rn{m}.{ty}x2 r, a, b;\n\tret;\n}}\n", m.replace('.', "_"));
            }
        }
        for m in tys
            .iter()
            .map(|m| m.to_string())
            .chain([".relu".to_string()])
        {
            src += &format!(".visible .func (.reg .b32 r) fma{}_{ty}x2(.reg .b32 a, .reg .b32 b, .reg .b32 c)\n{{\n\tfma.rn{m}.{ty}x2 r, a, b, c;\n\tret;\n}}\n", m.replace('.', "_"));
        }
    }
    with_jit(&src, 0, |j| {
        let vals: Vec<u32> = floats32(60, 37)
            .iter()
            .map(|b| ref_to_half(f32::from_bits(*b) as f64 * 0.001, false, "rn") as u32)
            .chain([
                0, 0x8000, 1, 0x8001, 0x03ff, 0x0400, 0x3c00, 0x7bff, 0xfbff, 0x7c00, 0xfc00,
                0x7e00, 0x3555, 0x5bff,
            ])
            .collect();
        for (ty, tys) in [
            ("f16", &["", ".ftz", ".sat", ".ftz.sat"][..]),
            ("bf16", &[""][..]),
        ] {
            let bf = ty == "bf16";
            let conv = |h: u32| {
                if bf {
                    ref_to_half(half_to_f64(h as u16, false), true, "rn") as u32
                } else {
                    h
                }
            };
            let val = |h: u32| half_to_f64(h as u16, bf);
            let flush = |x: f64, ftz: bool| {
                if ftz && x != 0.0 && x.abs() < 2f64.powi(-14) {
                    0.0f64.copysign(x)
                } else {
                    x
                }
            };
            let finish = |x: f64, ftz: bool, sat: bool, relu: bool| -> u32 {
                let h = ref_to_half(x, bf, "rn");
                let v = flush(half_to_f64(h, bf), ftz);
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
                    return 0x7fff;
                }
                let v = if relu && v.is_sign_negative() { 0.0 } else { v };
                ref_to_half(v, bf, "rn") as u32
            };
            let same16 = |a: u32, b: u32| a == b || (val(a).is_nan() && val(b).is_nan());
            let mods: Vec<String> = tys.iter().map(|m| m.to_string()).collect();
            for op in ["add", "sub", "mul", "fma"] {
                let mut ms = mods.clone();
                if op == "fma" {
                    ms.push(".relu".into());
                }
                for m in ms {
                    let (ftz, sat, relu) =
                        (m.contains("ftz"), m.contains("sat"), m.contains("relu"));
                    let name = format!("{op}{}_{ty}x2", m.replace('.', "_"));
                    let a3 = j.addr(&name);
                    for (k, &a) in vals.iter().enumerate() {
                        for (q, &b) in vals.iter().enumerate() {
                            let c = vals[(k * 7 + q * 3) % vals.len()];
                            let (a, b, c) = (conv(a), conv(b), conv(c));
                            let (x, y, z) =
                                (flush(val(a), ftz), flush(val(b), ftz), flush(val(c), ftz));
                            let exact = match op {
                                "add" => odd(|| bb(x) + bb(y)),
                                "sub" => odd(|| bb(x) - bb(y)),
                                "mul" => odd(|| bb(x) * bb(y)),
                                _ => odd(|| bb(x).mul_add(bb(y), bb(z))),
                            };
                            let want = finish(exact, ftz, sat, relu);
                            // Lane 1 repeats the operation with the operands swapped (b, a).
                            let exact1 = match op {
                                "add" => odd(|| bb(y) + bb(x)),
                                "sub" => odd(|| bb(y) - bb(x)),
                                "mul" => odd(|| bb(y) * bb(x)),
                                _ => odd(|| bb(y).mul_add(bb(x), bb(z))),
                            };
                            let want1 = finish(exact1, ftz, sat, relu);
                            let (pa, pb, pc) = (a | (b << 16), b | (a << 16), c | (c << 16));
                            let got = if op == "fma" {
                                // SAFETY: the function at this JIT address was compiled from this test's IR with this signature.
                                (unsafe { std::mem::transmute::<usize, F3u32>(a3) })(pa, pb, pc)
                            } else {
                                // SAFETY: the function at this JIT address was compiled from this test's IR with this signature.
                                (unsafe { std::mem::transmute::<usize, F2u32>(a3) })(pa, pb)
                            };
                            assert!(
                                same16(got & 0xffff, want),
                                "{name} lane 0: {a:#x} {b:#x} {c:#x} = {:#x}, want {want:#x}",
                                got & 0xffff
                            );
                            assert!(
                                same16(got >> 16, want1),
                                "{name} lane 1: {b:#x} {a:#x} {c:#x} = {:#x}, want {want1:#x}",
                                got >> 16
                            );
                        }
                    }
                }
            }
        }
    });
}

// ---- integer arithmetic: saturation, packed, 24-bit, carries -----------------------------------

#[test]
fn int_sat_packed_24bit() {
    let mut src = String::new();
    for (n, body) in [
        ("add_sat", "add.sat.s32 d, a, b;"),
        ("sub_sat", "sub.sat.s32 d, a, b;"),
        ("min_relu", "min.relu.s32 d, a, b;"),
        ("max_relu", "max.relu.s32 d, a, b;"),
        ("add_s16x2", "add.s16x2 d, a, b;"),
        ("add_u16x2", "add.u16x2 d, a, b;"),
        ("min_s16x2", "min.s16x2 d, a, b;"),
        ("max_u16x2", "max.u16x2 d, a, b;"),
        ("max_relu_s16x2", "max.relu.s16x2 d, a, b;"),
        ("mul24_lo_s", "mul24.lo.s32 d, a, b;"),
        ("mul24_hi_s", "mul24.hi.s32 d, a, b;"),
        ("mul24_hi_u", "mul24.hi.u32 d, a, b;"),
        ("mad24_hi_sat", "mad24.hi.sat.s32 d, a, b, c;"),
        ("mad24_lo_u", "mad24.lo.u32 d, a, b, c;"),
        ("mad_hi_sat", "mad.hi.sat.s32 d, a, b, c;"),
        ("sad_s", "sad.s32 d, a, b, c;"),
        ("sad_u", "sad.u32 d, a, b, c;"),
        ("pack_u16", "cvt.pack.sat.u16.s32 d, a, b;"),
        ("pack_s4", "cvt.pack.sat.s4.s32.b32 d, a, b, c;"),
        ("pack_u2", "cvt.pack.sat.u2.s32.b32 d, a, b, c;"),
    ] {
        src += &func3(n, "b32", body);
    }
    with_jit(&src, 0, |j| {
        let vals = ints32(48, 61);
        let s16 = |v: u32, k: u32| (v >> (16 * k)) as u16 as i16 as i64;
        let u16_ = |v: u32, k: u32| (v >> (16 * k)) as u16 as i64;
        let pk = |lo: i64, hi: i64| (lo as u32 & 0xffff) | ((hi as u32 & 0xffff) << 16);
        let clamp32 = |v: i64| v.clamp(i32::MIN as i64, i32::MAX as i64) as i32 as u32;
        let x24s = |v: u32| ((v << 8) as i32 >> 8) as i64;
        let x24u = |v: u32| (v & 0xff_ffff) as i64;
        let pack = |a: u32, b: u32, c: u32, size: u32, signed: bool| -> u32 {
            let (lo, hi) = if signed {
                (-(1i64 << (size - 1)), (1i64 << (size - 1)) - 1)
            } else {
                (0, (1i64 << size) - 1)
            };
            let m = (1u64 << size) - 1;
            let ta = (a as i32 as i64).clamp(lo, hi) as u64 & m;
            let tb = (b as i32 as i64).clamp(lo, hi) as u64 & m;
            let td = (ta << size) | tb;
            if size == 16 {
                td as u32
            } else {
                (td | ((c as u64) << (2 * size))) as u32
            }
        };
        for (k, &a) in vals.iter().enumerate() {
            for (q, &b) in vals.iter().enumerate() {
                let c = vals[(k * 3 + q * 5) % vals.len()];
                let (sa, sb, sc) = (a as i32 as i64, b as i32 as i64, c as i32 as i64);
                let checks: [(&str, u32); 20] = [
                    ("add_sat", clamp32(sa + sb)),
                    ("sub_sat", clamp32(sa - sb)),
                    ("min_relu", sa.min(sb).max(0) as u32),
                    ("max_relu", sa.max(sb).max(0) as u32),
                    (
                        "add_s16x2",
                        pk(s16(a, 0) + s16(b, 0), s16(a, 1) + s16(b, 1)),
                    ),
                    (
                        "add_u16x2",
                        pk(u16_(a, 0) + u16_(b, 0), u16_(a, 1) + u16_(b, 1)),
                    ),
                    (
                        "min_s16x2",
                        pk(s16(a, 0).min(s16(b, 0)), s16(a, 1).min(s16(b, 1))),
                    ),
                    (
                        "max_u16x2",
                        pk(u16_(a, 0).max(u16_(b, 0)), u16_(a, 1).max(u16_(b, 1))),
                    ),
                    (
                        "max_relu_s16x2",
                        pk(
                            s16(a, 0).max(s16(b, 0)).max(0),
                            s16(a, 1).max(s16(b, 1)).max(0),
                        ),
                    ),
                    ("mul24_lo_s", (x24s(a) * x24s(b)) as u32),
                    ("mul24_hi_s", ((x24s(a) * x24s(b)) >> 16) as u32),
                    ("mul24_hi_u", ((x24u(a) * x24u(b)) >> 16) as u32),
                    (
                        "mad24_hi_sat",
                        clamp32(((x24s(a) * x24s(b)) >> 16) as i32 as i64 + sc),
                    ),
                    ("mad24_lo_u", ((x24u(a) * x24u(b)) as u32).wrapping_add(c)),
                    ("mad_hi_sat", clamp32(((sa * sb) >> 32) + sc)),
                    ("sad_s", c.wrapping_add((sa - sb).unsigned_abs() as u32)),
                    (
                        "sad_u",
                        c.wrapping_add((a as i64 - b as i64).unsigned_abs() as u32),
                    ),
                    ("pack_u16", pack(a, b, c, 16, false)),
                    ("pack_s4", pack(a, b, c, 4, true)),
                    ("pack_u2", pack(a, b, c, 2, false)),
                ];
                for (n, want) in checks {
                    assert_eq!(j.f3_32(n)(a, b, c), want, "{n}({a:#x}, {b:#x}, {c:#x})");
                }
            }
        }
    });
}

#[test]
fn carry_chains() {
    // 128-bit add and subtract with add.cc/addc.cc/addc and sub.cc/subc.cc/subc, and a 64x64
    // multiply-accumulate with mad.lo.cc/madc.hi; compared with u128 arithmetic.
    let src = r#"
.visible .func (.reg .b64 lo, .reg .b64 hi) add128(.reg .b64 a0, .reg .b64 a1, .reg .b64 b0, .reg .b64 b1)
{
	.reg .b32 x<4>, y<4>, z<4>;
	mov.b64 {x0, x1}, a0;
	mov.b64 {x2, x3}, a1;
	mov.b64 {y0, y1}, b0;
	mov.b64 {y2, y3}, b1;
	add.cc.u32 z0, x0, y0;
	addc.cc.u32 z1, x1, y1;
	addc.cc.u32 z2, x2, y2;
	addc.u32 z3, x3, y3;
	mov.b64 lo, {z0, z1};
	mov.b64 hi, {z2, z3};
	ret;
}
.visible .func (.reg .b64 lo, .reg .b64 hi) sub128(.reg .b64 a0, .reg .b64 a1, .reg .b64 b0, .reg .b64 b1)
{
	.reg .b32 x<4>, y<4>, z<4>;
	mov.b64 {x0, x1}, a0;
	mov.b64 {x2, x3}, a1;
	mov.b64 {y0, y1}, b0;
	mov.b64 {y2, y3}, b1;
	sub.cc.u32 z0, x0, y0;
	subc.cc.u32 z1, x1, y1;
	subc.cc.u32 z2, x2, y2;
	subc.u32 z3, x3, y3;
	mov.b64 lo, {z0, z1};
	mov.b64 hi, {z2, z3};
	ret;
}
.visible .func (.reg .b64 lo, .reg .b64 hi) mac64(.reg .b64 a, .reg .b64 b, .reg .b64 c0, .reg .b64 c1)
{
	mad.lo.cc.u64 lo, a, b, c0;
	madc.hi.u64 hi, a, b, c1;
	ret;
}
"#;
    with_jit(src, 0, |j| {
        #[repr(C)]
        struct Pair(u64, u64);
        type F = extern "C" fn(u64, u64, u64, u64) -> Pair;
        // SAFETY: the function at this JIT address was compiled from this test's IR with this signature.
        let (add, sub, mac): (F, F, F) = unsafe {
            (
                std::mem::transmute::<usize, F>(j.addr("add128")),
                std::mem::transmute::<usize, F>(j.addr("sub128")),
                std::mem::transmute::<usize, F>(j.addr("mac64")),
            )
        };
        let vals = ints64(30, 71);
        for &a0 in &vals {
            for &b0 in &vals {
                let (a1, b1) = (a0.rotate_left(17) ^ b0, b0.rotate_right(5));
                let a = ((a1 as u128) << 64) | a0 as u128;
                let b = ((b1 as u128) << 64) | b0 as u128;
                let r = add(a0, a1, b0, b1);
                assert_eq!(
                    ((r.1 as u128) << 64) | r.0 as u128,
                    a.wrapping_add(b),
                    "add128 {a:#x} {b:#x}"
                );
                let r = sub(a0, a1, b0, b1);
                assert_eq!(
                    ((r.1 as u128) << 64) | r.0 as u128,
                    a.wrapping_sub(b),
                    "sub128 {a:#x} {b:#x}"
                );
                let r = mac(a0, b0, a1, b1);
                let want =
                    (a0 as u128 * b0 as u128).wrapping_add(((b1 as u128) << 64) | a1 as u128);
                assert_eq!(
                    ((r.1 as u128) << 64) | r.0 as u128,
                    want,
                    "mac64 {a0:#x} {b0:#x}"
                );
            }
        }
    });
}

// ---- video instructions ------------------------------------------------------------------------

/// `partSelectSignExtend`.
fn vpart(x: u32, sel: &str, signed: bool) -> i128 {
    let (lo, bits) = match sel {
        ".b0" | ".b1" | ".b2" | ".b3" => (8 * (sel.as_bytes()[2] - b'0') as u32, 8),
        ".h0" | ".h1" => (16 * (sel.as_bytes()[2] - b'0') as u32, 16),
        _ => (0, 32),
    };
    let v = ((x as u64 >> lo) & ((1u64 << bits) - 1)) as i128;
    if signed && (v >> (bits - 1)) & 1 == 1 {
        v - (1i128 << bits)
    } else {
        v
    }
}

fn vclamp(v: i128, bits: u32, signed: bool) -> i128 {
    if signed {
        v.clamp(-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1)
    } else {
        v.clamp(0, (1i128 << bits) - 1)
    }
}

/// Scalar video instructions (vadd.txt … vshr.txt Semantics, with optSaturate, optSecondaryOp
/// and optMerge as defined for the scalar video instructions).
#[allow(clippy::too_many_arguments)]
fn ref_video(
    op: &str,
    dt: bool,
    at: bool,
    bt: bool,
    sat: bool,
    mode: &str,
    op2: &str,
    dsel: &str,
    asel: &str,
    bsel: &str,
    a: u32,
    b: u32,
    c: u32,
) -> u32 {
    let ta = vpart(a, asel, at);
    let mut tmp = match op {
        "vshl" | "vshr" => {
            let tb = vpart(b, bsel, false);
            let tb = if mode == "clamp" {
                tb.min(32)
            } else {
                tb & 0x1f
            };
            if op == "vshl" {
                ta << tb
            } else {
                ta >> tb
            }
        }
        "vset" => {
            let tb = vpart(b, bsel, bt);
            let r = match mode {
                "eq" => ta == tb,
                "ne" => ta != tb,
                "lt" => ta < tb,
                "le" => ta <= tb,
                "gt" => ta > tb,
                _ => ta >= tb,
            };
            r as i128
        }
        _ => {
            let tb = vpart(b, bsel, bt);
            match op {
                "vadd" => ta + tb,
                "vsub" => ta - tb,
                "vabsdiff" => (ta - tb).abs(),
                "vmin" => ta.min(tb),
                _ => ta.max(tb),
            }
        }
    };
    if sat && op != "vset" {
        let bits = match dsel {
            ".b0" | ".b1" | ".b2" | ".b3" => 8,
            ".h0" | ".h1" => 16,
            _ => 32,
        };
        tmp = vclamp(tmp, bits, dt);
    }
    let cx = if dt { c as i32 as i128 } else { c as i128 };
    let d = match op2 {
        ".add" => tmp + cx,
        ".min" => tmp.min(cx),
        ".max" => tmp.max(cx),
        _ => tmp,
    };
    let t = tmp as u32;
    match dsel {
        ".h0" => (t & 0xffff) | (0xffff_0000 & c),
        ".h1" => ((t & 0xffff) << 16) | (0x0000_ffff & c),
        ".b0" => (t & 0xff) | (0xffff_ff00 & c),
        ".b1" => ((t & 0xff) << 8) | (0xffff_00ff & c),
        ".b2" => ((t & 0xff) << 16) | (0xff00_ffff & c),
        ".b3" => ((t & 0xff) << 24) | (0x00ff_ffff & c),
        _ => d as u32,
    }
}

/// vmad (vmad.txt Semantics). One argument per operand and modifier of the instruction, so the
/// reference reads like the spec's pseudocode.
#[allow(clippy::too_many_arguments)]
fn ref_vmad(
    at: bool,
    bt: bool,
    na: bool,
    nb: bool,
    nc: bool,
    po: bool,
    sat: bool,
    scale: u32,
    asel: &str,
    bsel: &str,
    a: u32,
    b: u32,
    c: u32,
) -> u32 {
    let ta = vpart(a, asel, at);
    let tb = vpart(b, bsel, bt);
    let signed_final = at || bt || (na ^ nb) || nc;
    let mut tmp = ta * tb;
    let mut c = c;
    let mut lsb = 0;
    if po {
        lsb = 1;
    } else if na ^ nb {
        tmp = !tmp;
        lsb = 1;
    } else if nc {
        c = !c;
        lsb = 1;
    }
    let c128 = if signed_final {
        c as i32 as i128
    } else {
        c as i128
    };
    let tmp = tmp + c128 + lsb;
    let result = ((tmp >> scale) as u128 & 0xffff_ffff_ffff_ffff) as u64;
    let result = if sat {
        if signed_final {
            (result as i64).clamp(i32::MIN as i64, i32::MAX as i64) as u64
        } else {
            result.clamp(0, u32::MAX as u64)
        }
    } else {
        result
    };
    result as u32
}

/// SIMD video instructions (vadd2.txt … vset4.txt Semantics).
#[allow(clippy::too_many_arguments)]
fn ref_vsimd(
    op: &str,
    lanes: u32,
    dt: bool,
    at: bool,
    bt: bool,
    sat: bool,
    add: bool,
    cmp: &str,
    mask: &str,
    asel: &str,
    bsel: &str,
    a: u32,
    b: u32,
    c: u32,
) -> u32 {
    let w = 32 / lanes;
    let ab = ((b as u64) << 32) | a as u64;
    let ext = |v: u64, s: bool| -> i64 {
        let v = v & ((1u64 << w) - 1);
        if s && (v >> (w - 1)) & 1 == 1 {
            v as i64 - (1i64 << w)
        } else {
            v as i64
        }
    };
    let digits =
        |s: &str| -> Vec<u32> { s[2..].bytes().rev().map(|d| (d - b'0') as u32).collect() };
    let (sa, sb, sm) = (digits(asel), digits(bsel), digits(mask));
    let mut d: i64 = if add { c as i64 } else { 0 };
    for i in 0..lanes {
        let va = ext(ab >> (sa[i as usize] * w), at);
        let vb = ext(ab >> (sb[i as usize] * w), bt);
        let mut t = match op {
            "vadd" => va + vb,
            "vsub" => va - vb,
            "vavrg" => {
                if va + vb >= 0 {
                    (va + vb + 1) >> 1
                } else {
                    (va + vb) >> 1
                }
            }
            "vabsdiff" => (va - vb).abs(),
            "vmin" => va.min(vb),
            "vmax" => va.max(vb),
            _ => {
                (match cmp {
                    "eq" => va == vb,
                    "ne" => va != vb,
                    "lt" => va < vb,
                    "le" => va <= vb,
                    "gt" => va > vb,
                    _ => va >= vb,
                }) as i64
            }
        };
        if sat {
            t = vclamp(t as i128, w, dt) as i64;
        }
        let on = sm.contains(&i);
        if add {
            if on {
                d += t;
            }
        } else {
            let v = if on { t as u64 } else { (c as u64) >> (i * w) } & ((1u64 << w) - 1);
            d |= (v << (i * w)) as i64;
        }
    }
    d as u32
}

#[test]
fn video() {
    let mut r = Rng::new(99);
    let pick = |r: &mut Rng, xs: &[&'static str]| xs[(r.u32() as usize) % xs.len()];
    let ty = |s: bool| if s { "s32" } else { "u32" };
    let sels = ["", ".b0", ".b1", ".b2", ".b3", ".h0", ".h1"];
    let mut src = String::new();
    // (name, closure computing the reference)
    type Reference = Box<dyn Fn(u32, u32, u32) -> u32>;
    let mut cases: Vec<(String, Reference)> = Vec::new();
    for k in 0..160 {
        let op = pick(
            &mut r,
            &[
                "vadd", "vsub", "vabsdiff", "vmin", "vmax", "vshl", "vshr", "vset",
            ],
        );
        let (dt, at, bt) = (r.u32() & 1 == 1, r.u32() & 1 == 1, r.u32() & 1 == 1);
        let bt = if matches!(op, "vshl" | "vshr") {
            false
        } else {
            bt
        };
        let sat = op != "vset" && r.u32() & 1 == 1;
        let mode = match op {
            "vshl" | "vshr" => pick(&mut r, &["clamp", "wrap"]),
            "vset" => pick(&mut r, &["eq", "ne", "lt", "le", "gt", "ge"]),
            _ => "",
        };
        let form = r.u32() % 3;
        let op2 = if form == 1 {
            pick(&mut r, &[".add", ".min", ".max"])
        } else {
            ""
        };
        let dsel = if form == 2 {
            pick(&mut r, &sels[1..])
        } else {
            ""
        };
        let (asel, bsel) = (pick(&mut r, &sels), pick(&mut r, &sels));
        let name = format!("v{k}");
        let types = if op == "vset" {
            format!(".{}.{}.{mode}", ty(at), ty(bt))
        } else if mode.is_empty() {
            format!(".{}.{}.{}", ty(dt), ty(at), ty(bt))
        } else {
            format!(".{}.{}.u32", ty(dt), ty(at))
        };
        let modes = if op == "vset" {
            op2.to_string()
        } else {
            format!(
                "{}{}{op2}",
                if sat { ".sat" } else { "" },
                if mode.is_empty() {
                    String::new()
                } else {
                    format!(".{mode}")
                }
            )
        };
        let c = if form == 0 { "" } else { ", c" };
        src += &func3(
            &name,
            "b32",
            &format!("{op}{types}{modes} d{dsel}, a{asel}, b{bsel}{c};"),
        );
        let dt = if op == "vset" { false } else { dt };
        cases.push((
            name,
            Box::new(move |a, b, c| {
                ref_video(op, dt, at, bt, sat, mode, op2, dsel, asel, bsel, a, b, c)
            }),
        ));
    }
    for k in 0..40 {
        let (at, bt) = (r.u32() & 1 == 1, r.u32() & 1 == 1);
        let po = k % 4 == 0;
        let (na, nb, nc) = if po {
            (false, false, false)
        } else {
            (
                r.u32().is_multiple_of(3),
                r.u32().is_multiple_of(3),
                r.u32().is_multiple_of(3),
            )
        };
        let (na, nb, nc) = if na ^ nb {
            (na, nb, false)
        } else {
            (na, nb, nc)
        };
        let sat = r.u32() & 1 == 1;
        let scale = pick(&mut r, &["", ".shr7", ".shr15"]);
        let (asel, bsel) = (pick(&mut r, &sels), pick(&mut r, &sels));
        let signed_final = at || bt || (na ^ nb) || nc;
        let name = format!("m{k}");
        let neg = |n: bool| if n { "-" } else { "" };
        src += &func3(
            &name,
            "b32",
            &format!(
                "vmad.{}.{}.{}{}{}{} d, {}a{asel}, {}b{bsel}, {}c;",
                ty(signed_final),
                ty(at),
                ty(bt),
                if po { ".po" } else { "" },
                if sat { ".sat" } else { "" },
                scale,
                neg(na),
                neg(nb),
                neg(nc)
            ),
        );
        let sc = match scale {
            ".shr7" => 7,
            ".shr15" => 15,
            _ => 0,
        };
        cases.push((
            name,
            Box::new(move |a, b, c| ref_vmad(at, bt, na, nb, nc, po, sat, sc, asel, bsel, a, b, c)),
        ));
    }
    for k in 0..120 {
        let lanes = if k % 2 == 0 { 2 } else { 4 };
        let op = pick(
            &mut r,
            &["vadd", "vsub", "vavrg", "vabsdiff", "vmin", "vmax", "vset"],
        );
        let (dt, at, bt) = (r.u32() & 1 == 1, r.u32() & 1 == 1, r.u32() & 1 == 1);
        let add = r.u32() & 1 == 1;
        let sat = !add && op != "vset" && r.u32() & 1 == 1;
        let cmp = if op == "vset" {
            pick(&mut r, &["eq", "ne", "lt", "le", "gt", "ge"])
        } else {
            ""
        };
        let sel = |r: &mut Rng, n: u32| -> String {
            let digits: String = (0..lanes)
                .map(|_| char::from(b'0' + (r.u32() % n) as u8))
                .collect();
            format!(".{}{digits}", if lanes == 2 { 'h' } else { 'b' })
        };
        let masks2 = [".h0", ".h1", ".h10"];
        let masks4 = [
            ".b0", ".b1", ".b10", ".b2", ".b20", ".b21", ".b210", ".b3", ".b30", ".b31", ".b310",
            ".b32", ".b320", ".b321", ".b3210",
        ];
        let (mask, explicit_mask) = match r.u32() % 3 {
            0 => (if lanes == 2 { ".h10" } else { ".b3210" }, false),
            _ => (
                if lanes == 2 {
                    pick(&mut r, &masks2)
                } else {
                    pick(&mut r, &masks4)
                },
                true,
            ),
        };
        let (asel, explicit_a) = if r.u32() & 1 == 1 {
            (sel(&mut r, lanes * 2), true)
        } else {
            (
                (if lanes == 2 { ".h10" } else { ".b3210" }).to_string(),
                false,
            )
        };
        let (bsel, explicit_b) = if r.u32() & 1 == 1 {
            (sel(&mut r, lanes * 2), true)
        } else {
            (
                (if lanes == 2 { ".h32" } else { ".b7654" }).to_string(),
                false,
            )
        };
        let name = format!("s{k}");
        let types = if op == "vset" {
            format!(".{}.{}.{cmp}", ty(at), ty(bt))
        } else {
            format!(".{}.{}.{}", ty(dt), ty(at), ty(bt))
        };
        let modes = format!(
            "{}{}",
            if sat { ".sat" } else { "" },
            if add { ".add" } else { "" }
        );
        src += &func3(
            &name,
            "b32",
            &format!(
                "{op}{lanes}{types}{modes} d{}, a{}, b{}, c;",
                if explicit_mask { mask } else { "" },
                if explicit_a { asel.as_str() } else { "" },
                if explicit_b { bsel.as_str() } else { "" }
            ),
        );
        let dt = if op == "vset" { false } else { dt };
        cases.push((
            name,
            Box::new(move |a, b, c| {
                ref_vsimd(
                    op, lanes, dt, at, bt, sat, add, cmp, mask, &asel, &bsel, a, b, c,
                )
            }),
        ));
    }
    with_jit(&src, 0, |j| {
        let vals = ints32(24, 5);
        for (name, want) in &cases {
            let f = j.f3_32(name);
            for (k, &a) in vals.iter().enumerate() {
                for (q, &b) in vals.iter().enumerate() {
                    let c = vals[(k * 7 + q) % vals.len()];
                    assert_eq!(
                        f(a, b, c),
                        want(a, b, c),
                        "{name}({a:#x}, {b:#x}, {c:#x})\n{}",
                        src.lines()
                            .skip_while(|l| !l.contains(&format!(" {name}(")))
                            .nth(2)
                            .unwrap_or("")
                    );
                }
            }
        }
    });
}

// ---- small float formats -----------------------------------------------------------------------

#[test]
fn small_formats() {
    let mut src = String::new();
    for f in ["e4m3", "e5m2", "e3m2", "e2m3"] {
        for relu in ["", ".relu"] {
            src += &format!(".visible .func (.reg .b32 r) enc_{f}{}(.reg .b32 a, .reg .b32 b)\n{{\n\t.reg .f32 x, y;\n\t.reg .b16 z;\n\tmov.b32 x, a;\n\tmov.b32 y, b;\n\tcvt.rn.satfinite{relu}.{f}x2.f32 z, x, y;\n\tcvt.u32.u16 r, z;\n\tret;\n}}\n", relu.replace('.', "_"));
        }
        src += &format!(".visible .func (.reg .b32 r) dec_{f}(.reg .b32 a)\n{{\n\t.reg .b16 x;\n\tcvt.u16.u32 x, a;\n\tcvt.rn.f16x2.{f}x2 r, x;\n\tret;\n}}\n");
    }
    for f in ["e4m3", "e5m2"] {
        src += &format!(".visible .func (.reg .b32 r) enc16_{f}(.reg .b32 a)\n{{\n\t.reg .b16 z;\n\tcvt.rn.satfinite.{f}x2.f16x2 z, a;\n\tcvt.u32.u16 r, z;\n\tret;\n}}\n");
    }
    src += ".visible .func (.reg .b32 r) enc_e2m1(.reg .b32 a, .reg .b32 b)\n{\n\t.reg .f32 x, y;\n\t.reg .b8 z;\n\tmov.b32 x, a;\n\tmov.b32 y, b;\n\tcvt.rn.satfinite.e2m1x2.f32 z, x, y;\n\tcvt.u32.u8 r, z;\n\tret;\n}\n";
    src += ".visible .func (.reg .b32 r) dec_e2m1(.reg .b32 a)\n{\n\t.reg .b8 x;\n\tcvt.u8.u32 x, a;\n\tcvt.rn.f16x2.e2m1x2 r, x;\n\tret;\n}\n";
    for r in ["rz", "rp"] {
        src += &format!(".visible .func (.reg .b32 r) ue8m0_{r}(.reg .b32 a, .reg .b32 b)\n{{\n\t.reg .f32 x, y;\n\t.reg .b16 z;\n\tmov.b32 x, a;\n\tmov.b32 y, b;\n\tcvt.{r}.satfinite.ue8m0x2.f32 z, x, y;\n\tcvt.u32.u16 r, z;\n\tret;\n}}\n");
    }
    src += ".visible .func (.reg .b32 r) ue8m0_dec(.reg .b32 a)\n{\n\t.reg .b16 x;\n\tcvt.u16.u32 x, a;\n\tcvt.rn.bf16x2.ue8m0x2 r, x;\n\tret;\n}\n";
    for (n, m) in [
        ("tf32_rna", ".rna.satfinite"),
        ("tf32_rn", ".rn"),
        ("tf32_rz_relu", ".rz.relu"),
    ] {
        src += &format!(".visible .func (.reg .b32 r) {n}(.reg .b32 a)\n{{\n\t.reg .f32 x;\n\tmov.b32 x, a;\n\tcvt{m}.tf32.f32 r, x;\n\tret;\n}}\n");
    }
    src += ".visible .func (.reg .b32 r) rs_bf16x2(.reg .b32 a, .reg .b32 b, .reg .b32 c)\n{\n\t.reg .f32 x, y;\n\tmov.b32 x, a;\n\tmov.b32 y, b;\n\tcvt.rs.bf16x2.f32 r, x, y, c;\n\tret;\n}\n";
    src += ".visible .func (.reg .b32 r) rs_f16x2(.reg .b32 a, .reg .b32 b, .reg .b32 c)\n{\n\t.reg .f32 x, y;\n\tmov.b32 x, a;\n\tmov.b32 y, b;\n\tcvt.rs.f16x2.f32 r, x, y, c;\n\tret;\n}\n";
    with_jit(&src, 0, |j| {
        let mut vals: Vec<u32> = floats32(200, 43);
        // Values in the small formats' ranges, ties included.
        for k in -40i32..40 {
            for m in [
                1.0f32, 1.0625, 1.125, 1.1875, 1.25, 1.5, 1.75, 1.875, 1.9375,
            ] {
                vals.push((m * 2f32.powi(k / 2)).to_bits());
                vals.push((-m * 2f32.powi(k / 3)).to_bits());
            }
        }
        for f in ["e4m3", "e5m2", "e3m2", "e2m3", "e2m1"] {
            let lane = if f == "e2m1" { 4 } else { 8 };
            for relu in [false, true] {
                if relu && f == "e2m1" {
                    continue;
                }
                let e = j.f2_32(&format!("enc_{f}{}", if relu { "_relu" } else { "" }));
                for (k, &a) in vals.iter().enumerate() {
                    let b = vals[(k * 13 + 7) % vals.len()];
                    let want = (ref_encode(f32::from_bits(a) as f64, f, relu) << lane)
                        | ref_encode(f32::from_bits(b) as f64, f, relu);
                    assert_eq!(
                        e(a, b),
                        want,
                        "cvt.rn.satfinite{}.{f}x2.f32 {a:#x} {b:#x}",
                        if relu { ".relu" } else { "" }
                    );
                }
            }
            let d = j.f1_32(&format!("dec_{f}"));
            for c in 0..(1u32 << (2 * lane)) {
                let r = d(c);
                for (i, code) in [(0, c & ((1 << lane) - 1)), (1, c >> lane)] {
                    let want = ref_decode(code, f);
                    let got = half_to_f64((r >> (16 * i)) as u16, false);
                    assert!(
                        got == want && got.is_sign_negative() == want.is_sign_negative()
                            || got.is_nan() && want.is_nan(),
                        "cvt.rn.f16x2.{f}x2 {c:#x} lane {i}: {got} want {want}"
                    );
                }
            }
        }
        for f in ["e4m3", "e5m2"] {
            let e = j.f1_32(&format!("enc16_{f}"));
            for &a in &vals {
                let h = ref_to_half(f32::from_bits(a) as f64, false, "rn") as u32;
                let h2 = ref_to_half(f32::from_bits(a) as f64 * -0.37, false, "rn") as u32;
                let want = (ref_encode(half_to_f64(h2 as u16, false), f, false) << 8)
                    | ref_encode(half_to_f64(h as u16, false), f, false);
                assert_eq!(
                    e(h | (h2 << 16)),
                    want,
                    "cvt.rn.satfinite.{f}x2.f16x2 {h:#x} {h2:#x}"
                );
            }
        }
        // ue8m0: 2^(code-127); rz floors, rp ceils log2; satfinite caps at 0xfe.
        let ref_ue = |x: f32, rp: bool| -> u32 {
            if x.is_nan() {
                return 0xff;
            }
            // NaN returned above, so "not positive" is an ordered comparison here.
            if x <= 0.0 {
                return 0;
            }
            if x.is_infinite() {
                return 0xfe;
            }
            let x = x as f64;
            let e = ((x.to_bits() >> 52) as i32 - 1023).max(-1075);
            let e = if x < f64::MIN_POSITIVE {
                (x.log2().floor()) as i32
            } else {
                e
            };
            let e = if rp && 2f64.powi(e) != x { e + 1 } else { e };
            (e + 127).clamp(0, 254) as u32
        };
        for (r, rp) in [("rz", false), ("rp", true)] {
            let e = j.f2_32(&format!("ue8m0_{r}"));
            for (k, &a) in vals.iter().enumerate() {
                let b = vals[(k * 3 + 1) % vals.len()];
                let want = (ref_ue(f32::from_bits(a), rp) << 8) | ref_ue(f32::from_bits(b), rp);
                assert_eq!(e(a, b), want, "cvt.{r}.satfinite.ue8m0x2.f32 {a:#x} {b:#x}");
            }
        }
        let d = j.f1_32("ue8m0_dec");
        for c in 0..0x10000u32 {
            let r = d(c);
            for (i, code) in [(0, c & 0xff), (1, c >> 8)] {
                let got = half_to_f64((r >> (16 * i)) as u16, true);
                if code == 0xff {
                    assert!(got.is_nan());
                } else {
                    assert_eq!(
                        got,
                        2f64.powi(code as i32 - 127),
                        "cvt.rn.bf16x2.ue8m0x2 {c:#x}"
                    );
                }
            }
        }
        // tf32: 10 mantissa bits in an f32 container.
        let tf = |a: u32, mode: &str| -> u32 {
            let x = f32::from_bits(a);
            if x.is_nan() {
                return 0x7fff_ffff;
            }
            let x = if mode == "rz_relu" && x.is_sign_negative() {
                0.0
            } else {
                x
            };
            let r = if x.is_infinite() {
                x as f64
            } else {
                ref_round(
                    x as f64,
                    10,
                    -126,
                    if mode == "rna" {
                        "rna"
                    } else if mode == "rn" {
                        "rn"
                    } else {
                        "rz"
                    },
                )
            };
            let r = r as f32;
            let r = if mode == "rna" && r.is_infinite() {
                f32::from_bits(0x7f7f_e000).copysign(r)
            } else {
                r
            };
            r.to_bits()
        };
        for (n, mode) in [
            ("tf32_rna", "rna"),
            ("tf32_rn", "rn"),
            ("tf32_rz_relu", "rz_relu"),
        ] {
            let f = j.f1_32(n);
            for &a in &vals {
                assert_eq!(f(a), tf(a, mode), "cvt.{mode}.tf32.f32 {a:#x}");
            }
        }
        // .rs: round toward zero, plus one ulp when the random bits and the discarded bits carry.
        let rs = j.f3_32("rs_bf16x2");
        let rsh = j.f3_32("rs_f16x2");
        let mut rng = Rng::new(5);
        for (k, &a) in vals.iter().enumerate() {
            let b = vals[(k * 5 + 3) % vals.len()];
            let rb = rng.u32();
            let lane = |x: u32, r: u32| -> u32 {
                let f = f32::from_bits(x);
                if f.is_nan() {
                    return 0x7fff;
                }
                if f.is_infinite() {
                    return x >> 16;
                }
                let carry = (x & 0xffff) + (r & 0xffff) >= 0x10000;
                (x >> 16) + carry as u32
            };
            assert_eq!(
                rs(a, b, rb),
                (lane(a, rb >> 16) << 16) | lane(b, rb & 0xffff),
                "cvt.rs.bf16x2.f32 {a:#x} {b:#x} {rb:#x}"
            );
            // f16: inputs in the normal f16 range; 13 random bits per lane.
            let fa = f32::from_bits(a);
            if fa.is_finite() && fa.abs() >= 2f32.powi(-14) && fa.abs() < 65504.0 {
                let h = |x: u32, r: u32| -> u32 {
                    let t = ref_to_half(f32::from_bits(x) as f64, false, "rz") as u32;
                    let carry = (x & 0x1fff) + (r & 0x1fff) >= 0x2000;
                    t + carry as u32
                };
                let got = rsh(a, a, rb);
                assert_eq!(
                    got,
                    (h(a, rb >> 16) << 16) | h(a, rb & 0xffff),
                    "cvt.rs.f16x2.f32 {a:#x} {rb:#x}"
                );
            }
        }
    });
}
