//! sm_89's 8-bit float `mma.sync` (`.m16n8k32` and `.m16n8k16`, A and B each `.e4m3` or
//! `.e5m2`, C and D both `.f32` or both `.f16`) on the cpu target, on the warp engine and on
//! coroutines, against a reference written here from the PTX ISA: the formats ("Alternate
//! Floating-Point Data Formats": e4m3 bias 7, no infinity, S.1111.111 NaN; e5m2 bias 15,
//! S.11111.00 infinity, other all-ones exponents NaN; both with subnormals) and the fragment
//! layouts ("Matrix Fragments for mma.m16n8k32 / m16n8k16" with 8-bit elements). Each lane
//! loads its fragment registers from matrices in memory by those layouts and stores D the
//! same way. The inputs make every partial sum exact (in f16 for f16 accumulators), so the
//! reference needs no summation order: every finite code of either format is decoded through
//! a one-hot product (in A and in B), the NaN and infinity codes propagate as IEEE products
//! do, and random operands in an exponent window check the products and sums with C.

mod cpu_util;

use cpu_util::*;
use ptx2llvm::target::cpu::fission::CpuMode;

#[derive(Clone, Copy, Debug, PartialEq)]
enum F8 {
    E4m3,
    E5m2,
}

impl F8 {
    fn name(self) -> &'static str {
        match self {
            F8::E4m3 => "e4m3",
            F8::E5m2 => "e5m2",
        }
    }

    /// The value of code `c`, from the manual's description of the format.
    fn value(self, c: u8) -> f64 {
        let s = if c & 0x80 != 0 { -1.0 } else { 1.0 };
        let (e, m) = match self {
            F8::E4m3 => (((c >> 3) & 0xf) as i32, (c & 7) as f64),
            F8::E5m2 => (((c >> 2) & 0x1f) as i32, (c & 3) as f64),
        };
        match self {
            F8::E4m3 if e == 15 && m == 7.0 => f64::NAN,
            F8::E4m3 if e == 0 => s * m / 8.0 * 2f64.powi(-6),
            F8::E4m3 => s * (1.0 + m / 8.0) * 2f64.powi(e - 7),
            F8::E5m2 if e == 31 && m == 0.0 => s * f64::INFINITY,
            F8::E5m2 if e == 31 => f64::NAN,
            F8::E5m2 if e == 0 => s * m / 4.0 * 2f64.powi(-14),
            F8::E5m2 => s * (1.0 + m / 4.0) * 2f64.powi(e - 15),
        }
    }

    /// The code of 1.0.
    fn one(self) -> u8 {
        match self {
            F8::E4m3 => 0x38,
            F8::E5m2 => 0x3c,
        }
    }

    /// A random code whose value is 0 or has |x| in [1/4, 16) (`small`: one of 0, ±1/2, ±1,
    /// ±3/2, ±2, so that sums of 32 products stay exact in f16).
    fn windowed(self, r: &mut Rng, small: bool) -> u8 {
        let sign = (r.int(0, 2) as u8) << 7;
        if r.int(0, 7) == 0 {
            return sign;
        }
        let code = if small {
            let v = [0.5, 1.0, 1.5, 2.0][r.int(0, 4) as usize];
            (0u8..0x7f).find(|&c| self.value(c) == v).unwrap()
        } else {
            match self {
                F8::E4m3 => (r.int(5, 11) as u8) << 3 | r.int(0, 8) as u8,
                F8::E5m2 => (r.int(13, 19) as u8) << 2 | r.int(0, 4) as u8,
            }
        };
        sign | code
    }
}

struct Case {
    k: usize,
    a: F8,
    b: F8,
    f16: bool,
}

/// The kernel: A (16 x k bytes, row-major), B (k x 8 bytes, column-major), C and D (16 x 8,
/// row-major f32 or f16). Lane (g, t) = (lane / 4, lane % 4) holds, per the manual, A's
/// register j as the 4 bytes of row g + 8 (j % 2) from column 4t + 16 (j / 2) (k = 32; k = 16:
/// row g + 8j, column 4t), B's register j as the 4 bytes of column g from row 4t + 16j, and
/// C's and D's element e at row g + 8 (e / 2), column 2t + e % 2.
fn kernel_src(c: &Case) -> String {
    let acc = if c.f16 { "f16" } else { "f32" };
    let (na, nb) = (c.k / 8, c.k / 16);
    let mut s = String::from(
        ".version 8.7\n.target sm_89\n.address_size 64\n\
         .visible .entry mma8(.param .u64 pa, .param .u64 pb, .param .u64 pc, .param .u64 pd)\n{\n\
         \t.reg .b32 %r<40>;\n\t.reg .f32 %f<16>;\n\t.reg .b64 %rd<40>;\n\
         \tld.param.u64 %rd1, [pa];\n\tld.param.u64 %rd2, [pb];\n\
         \tld.param.u64 %rd3, [pc];\n\tld.param.u64 %rd4, [pd];\n\
         \tmov.u32 %r1, %tid.x;\n\tshr.u32 %r2, %r1, 2;\n\tand.b32 %r3, %r1, 3;\n\
         \tshl.b32 %r4, %r3, 2;\n",
    );
    // A: row g + 8 (j % 2) (k = 32) or g + 8j (k = 16), column 4t + 16 (j / 2).
    for j in 0..na {
        let (row8, col16) = if c.k == 32 { (j % 2, j / 2) } else { (j, 0) };
        s += &format!(
            "\tadd.u32 %r10, %r2, {};\n\tmul.lo.u32 %r10, %r10, {};\n\tadd.u32 %r10, %r10, %r4;\n\
             \tadd.u32 %r10, %r10, {};\n\tcvt.u64.u32 %rd10, %r10;\n\tadd.u64 %rd10, %rd1, %rd10;\n\
             \tld.global.u32 %r{}, [%rd10];\n",
            8 * row8,
            c.k,
            16 * col16,
            20 + j
        );
    }
    // B (column-major): column g, rows 4t + 16j.
    for j in 0..nb {
        s += &format!(
            "\tmul.lo.u32 %r11, %r2, {};\n\tadd.u32 %r11, %r11, %r4;\n\tadd.u32 %r11, %r11, {};\n\
             \tcvt.u64.u32 %rd11, %r11;\n\tadd.u64 %rd11, %rd2, %rd11;\n\
             \tld.global.u32 %r{}, [%rd11];\n",
            c.k,
            16 * j,
            24 + j
        );
    }
    // C and D: element e at row g + 8 (e / 2), column 2t + e % 2; the pair e = 2h, 2h + 1 is
    // contiguous.
    let esize = if c.f16 { 2 } else { 4 };
    for h in 0..2 {
        s += &format!(
            "\tadd.u32 %r12, %r2, {};\n\tshl.b32 %r12, %r12, 3;\n\tshl.b32 %r13, %r3, 1;\n\
             \tadd.u32 %r12, %r12, %r13;\n\tmul.wide.u32 %rd{}, %r12, {esize};\n",
            8 * h,
            12 + h
        );
        s += &format!("\tadd.u64 %rd{}, %rd3, %rd{};\n", 14 + h, 12 + h);
        s += &format!("\tadd.u64 %rd{}, %rd4, %rd{};\n", 16 + h, 12 + h);
        if c.f16 {
            s += &format!("\tld.global.u32 %r{}, [%rd{}];\n", 26 + h, 14 + h);
        } else {
            s += &format!(
                "\tld.global.v2.f32 {{%f{}, %f{}}}, [%rd{}];\n",
                2 * h,
                2 * h + 1,
                14 + h
            );
        }
    }
    let regs = |first: usize, n: usize, p: &str| {
        (first..first + n)
            .map(|i| format!("{p}{i}"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let (dregs, cregs) = if c.f16 {
        (regs(30, 2, "%r"), regs(26, 2, "%r"))
    } else {
        (regs(8, 4, "%f"), regs(0, 4, "%f"))
    };
    s += &format!(
        "\tmma.sync.aligned.m16n8k{}.row.col.{acc}.{}.{}.{acc} {{{dregs}}}, {{{}}}, {{{}}}, {{{cregs}}};\n",
        c.k,
        c.a.name(),
        c.b.name(),
        regs(20, na, "%r"),
        regs(24, nb, "%r"),
    );
    for h in 0..2 {
        if c.f16 {
            s += &format!("\tst.global.u32 [%rd{}], %r{};\n", 16 + h, 30 + h);
        } else {
            s += &format!(
                "\tst.global.v2.f32 [%rd{}], {{%f{}, %f{}}};\n",
                16 + h,
                8 + 2 * h,
                9 + 2 * h
            );
        }
    }
    s + "\tret;\n}\n"
}

/// D = A B + C in k order in f64 (IEEE: NaN and infinity propagate; with these inputs every
/// finite partial sum is exact), as f32 or f16 bits; a NaN as the GPU's canonical NaN.
fn reference(c: &Case, a: &[u8], b: &[u8], cm: &[f64]) -> Vec<u32> {
    let mut d = Vec::new();
    for r in 0..16 {
        for n in 0..8 {
            let mut acc = cm[r * 8 + n];
            for k in 0..c.k {
                acc += c.a.value(a[r * c.k + k]) * c.b.value(b[n * c.k + k]);
            }
            // A NaN result is the canonical NaN (measured on an H200: 0x7fffffff, 0x7fff).
            d.push(match (c.f16, acc.is_nan()) {
                (true, true) => 0x7fff,
                (true, false) => f64_to_f16(acc) as u32,
                (false, true) => 0x7fff_ffff,
                (false, false) => (acc as f32).to_bits(),
            });
        }
    }
    d
}

fn run(c: &Case, mode: CpuMode, a: &[u8], b: &[u8], cm: &[f64], what: &str) {
    let src = kernel_src(c);
    let module = Module::from_ptx_with(&src, 2, mode).unwrap_or_else(|e| panic!("{e}\n{src}"));
    let bytes = |v: &[u8]| Buffer::from_bytes(v);
    let (ba, bb) = (bytes(a), bytes(b));
    let (bc, bd) = if c.f16 {
        let h: Vec<u16> = cm.iter().map(|&x| f64_to_f16(x)).collect();
        (buf_u16(&h), buf_u16(&[0; 128]))
    } else {
        let f: Vec<f32> = cm.iter().map(|&x| x as f32).collect();
        (buf_f32(&f), buf_f32(&[0.0; 128]))
    };
    launch(
        &module,
        "mma8",
        d3(1, 1, 1),
        d3(32, 1, 1),
        0,
        vec![ptr(&ba), ptr(&bb), ptr(&bc), ptr(&bd)],
    );
    let got: Vec<u32> = if c.f16 {
        get_u16(&bd).into_iter().map(u32::from).collect()
    } else {
        get_u32(&bd)
    };
    let want = reference(c, a, b, cm);
    for (i, (&g, &w)) in got.iter().zip(&want).enumerate() {
        let ok = g == w;
        assert!(
            ok,
            "m16n8k{} {}.{} {} ({mode:?}, {what}): D[{}][{}] = {g:#x}, want {w:#x}",
            c.k,
            c.a.name(),
            c.b.name(),
            if c.f16 { "f16" } else { "f32" },
            i / 8,
            i % 8
        );
    }
}

fn is_special(f: F8, code: u8) -> bool {
    !f.value(code).is_finite()
}

#[test]
fn fp8_mma_every_form_against_the_manual() {
    let mut rng = Rng::new(0x89);
    let mut forms = 0;
    for k in [32, 16] {
        for a in [F8::E4m3, F8::E5m2] {
            for b in [F8::E4m3, F8::E5m2] {
                for f16 in [false, true] {
                    let c = Case { k, a, b, f16 };
                    forms += 1;
                    for mode in [CpuMode::Warp, CpuMode::Coroutine] {
                        check_form(&c, mode, &mut rng);
                    }
                }
            }
        }
    }
    assert_eq!(forms, 16);
}

fn check_form(c: &Case, mode: CpuMode, rng: &mut Rng) {
    let k = c.k;
    let zero_c = vec![0.0; 128];
    // Decode A: A holds every finite code (code i % 256 at element i, the specials replaced
    // by 1.0); B selects column s(n) = n + 8 round of A into D's column n, so that
    // D[r][n] = A[r][s(n)] exactly; the rounds cover every column.
    let code_of = |f: F8, i: usize| {
        let code = (i % 256) as u8;
        if is_special(f, code) {
            f.one()
        } else {
            code
        }
    };
    let a: Vec<u8> = (0..16 * k).map(|i| code_of(c.a, i)).collect();
    for round in 0..k / 8 {
        let mut b = vec![0u8; k * 8];
        for n in 0..8 {
            b[n * k + n + 8 * round] = c.b.one();
        }
        run(
            c,
            mode,
            &a,
            &b,
            &zero_c,
            &format!("A's codes, columns from {}", 8 * round),
        );
    }
    // Decode B the same way: B (k x 8) holds codes from `first` on, A's row r selects B's
    // row r + 16 sel: D[r][n] = B[r + 16 sel][n].
    for first in (0..256).step_by(8 * k) {
        let b: Vec<u8> = (0..k * 8).map(|i| code_of(c.b, first + i)).collect();
        for sel in 0..k / 16 {
            let mut a = vec![0u8; 16 * k];
            for r in 0..16 {
                a[r * k + r + 16 * sel] = c.a.one();
            }
            run(
                c,
                mode,
                &a,
                &b,
                &zero_c,
                &format!("B's codes from {first}, rows from {}", 16 * sel),
            );
        }
    }
    // Specials: NaN and ±infinity codes in A (each row one, or none), B all ones; D is NaN
    // or ±infinity as the IEEE sum of the products says.
    let specials: Vec<u8> = (0..=255u8).filter(|&x| is_special(c.a, x)).collect();
    let mut a = vec![0u8; 16 * k];
    for r in 0..16 {
        if let Some(&sp) = specials.get(r) {
            a[r * k + r] = sp;
        }
        a[r * k + (r + 1) % k] = c.a.one();
    }
    let b = vec![c.b.one(); k * 8];
    run(c, mode, &a, &b, &zero_c, "NaN and infinity in A");
    // Random operands and C, exact by construction.
    for round in 0..4 {
        let a: Vec<u8> = (0..16 * k).map(|_| c.a.windowed(rng, c.f16)).collect();
        let b: Vec<u8> = (0..k * 8).map(|_| c.b.windowed(rng, c.f16)).collect();
        let cm: Vec<f64> = (0..128)
            .map(|_| {
                if c.f16 {
                    rng.int(-8, 8) as f64 / 4.0
                } else {
                    rng.int(-4096, 4096) as f64 / 64.0
                }
            })
            .collect();
        run(
            c,
            mode,
            &a,
            &b,
            &cm,
            &format!("random operands, round {round}"),
        );
    }
}
