//! `wmma` fragment layouts on the cpu target are the GPU's (issue #15). PTX leaves them to
//! the implementation, but programs index fragment registers or mix `wmma` fragments with
//! `mma.sync`/`ldmatrix` ones, so the GPU decides. `tests/data/wmma_layouts.txt` holds what
//! an NVIDIA H200 put in every lane's registers for 58 `wmma.load` probes (a, b, c; row and
//! col; every shape and type of sm_80 but sub-byte, `.b1` and f64). Here each probe runs
//! again on both execution schemes and its registers must be the GPU's; `wmma.store.d` of
//! the GPU's fragments must write the matrix back; and `wmma.mma` of fragments laid out as
//! the GPU lays them must give the product's elements where the GPU's `c` layout puts them.

mod cpu_util;

use cpu_util::*;
use ptx2llvm::target::cpu::fission::CpuMode;

const MODES: [CpuMode; 2] = [CpuMode::Fission, CpuMode::Coroutine];

/// One probe of the table.
struct Probe {
    frag: String,
    lay: String,
    shape: String,
    ty: String,
    nreg: usize,
    /// Per lane, the element index of each register element (low half or byte first).
    lanes: Vec<Vec<usize>>,
}

impl Probe {
    fn bits(&self) -> usize {
        match self.ty.as_str() {
            "f16" | "bf16" => 16,
            "s8" | "u8" => 8,
            _ => 32,
        }
    }

    /// Rows and columns of the probe's matrix.
    fn dims(&self) -> (usize, usize) {
        let (m, n, k) = mnk(&self.shape);
        match self.frag.as_str() {
            "a" => (m, k),
            "b" => (k, n),
            _ => (m, n),
        }
    }

    /// The leading dimension of the packed matrix.
    fn ldm(&self) -> usize {
        let (r, c) = self.dims();
        if self.lay == "row" {
            c
        } else {
            r
        }
    }

    /// Row and column of element index `e` of the packed matrix.
    fn rc(&self, e: usize) -> (usize, usize) {
        let ldm = self.ldm();
        if self.lay == "row" {
            (e / ldm, e % ldm)
        } else {
            (e % ldm, e / ldm)
        }
    }

    fn name(&self) -> String {
        format!("{} {} {} {}", self.frag, self.lay, self.shape, self.ty)
    }

    /// Lane `l`'s registers with element `e` holding `val(e)`.
    fn words(&self, l: usize, val: impl Fn(usize) -> u32) -> Vec<u32> {
        let (b, per) = (self.bits(), 32 / self.bits());
        let mask = if b == 32 { u32::MAX } else { (1 << b) - 1 };
        (0..self.nreg)
            .map(|j| {
                (0..per).fold(0, |w, h| {
                    w | (val(self.lanes[l][j * per + h]) & mask) << (b * h)
                })
            })
            .collect()
    }
}

fn mnk(shape: &str) -> (usize, usize, usize) {
    match shape {
        "m16n16k16" => (16, 16, 16),
        "m32n8k16" => (32, 8, 16),
        "m8n32k16" => (8, 32, 16),
        "m16n16k8" => (16, 16, 8),
        _ => panic!("shape {shape}"),
    }
}

fn table() -> Vec<Probe> {
    let text = std::fs::read_to_string(root().join("tests/data/wmma_layouts.txt")).unwrap();
    let probes: Vec<Probe> = text
        .lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
        .map(|line| {
            let f: Vec<&str> = line.split(' ').collect();
            let lanes: Vec<Vec<usize>> = f[5..]
                .iter()
                .map(|s| {
                    (0..s.len() / 3)
                        .map(|i| usize::from_str_radix(&s[3 * i..3 * i + 3], 16).unwrap())
                        .collect()
                })
                .collect();
            let p = Probe {
                frag: f[0].into(),
                lay: f[1].into(),
                shape: f[2].into(),
                ty: f[3].into(),
                nreg: f[4].parse().unwrap(),
                lanes,
            };
            assert_eq!(p.lanes.len(), 32, "{line}");
            assert!(p.lanes.iter().all(|l| l.len() == p.nreg * 32 / p.bits()));
            p
        })
        .collect();
    assert_eq!(probes.len(), 58);
    probes
}

/// The probe generator's matrix element `e` (`tests/data/wmma_layouts.txt`).
fn probe_value(p: &Probe, e: usize) -> u32 {
    match (p.bits(), p.ty.as_str()) {
        (16, _) => e as u32 + 1,
        (8, _) => (7 * e as u32 + 1) & 255,
        (_, "s32") => e as u32 + 1,
        _ => e as u32 + 1 + 0x3f80_0000,
    }
}

fn reg_list(n: usize, prefix: &str) -> String {
    (0..n)
        .map(|j| format!("%{prefix}{j}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Every `wmma.load` probe gives the GPU's registers in every lane, on both schemes.
#[test]
fn wmma_load_fragments_are_the_gpus() {
    let mut bad = Vec::new();
    for p in table() {
        let (r, c) = p.dims();
        let ptx = format!(
            ".version 7.8\n.target sm_80\n.address_size 64\n\
             .visible .entry k(.param .u64 mat, .param .u64 out)\n{{\n\
             .reg .b32 %r<{n}>;\n.reg .b32 %t;\n.reg .b64 %rd<5>;\n\
             ld.param.u64 %rd1, [mat];\nld.param.u64 %rd2, [out];\n\
             wmma.load.{f}.sync.aligned.{lay}.{shape}.global.{ty} {{{regs}}}, [%rd1], {ldm};\n\
             mov.u32 %t, %tid.x;\nmul.wide.u32 %rd4, %t, 64;\nadd.u64 %rd3, %rd2, %rd4;\n\
             {stores}\nret;\n}}\n",
            n = p.nreg,
            f = p.frag,
            lay = p.lay,
            shape = p.shape,
            ty = p.ty,
            regs = reg_list(p.nreg, "r"),
            ldm = p.ldm(),
            stores = (0..p.nreg)
                .map(|j| format!("st.global.u32 [%rd3+{}], %r{j};", 4 * j))
                .collect::<Vec<_>>()
                .join("\n"),
        );
        let bytes: Vec<u8> = (0..r * c)
            .flat_map(|e| {
                let v = probe_value(&p, e);
                v.to_le_bytes()[..p.bits() / 8].to_vec()
            })
            .collect();
        for mode in MODES {
            let m = Module::from_ptx_with(&ptx, 2, mode).unwrap_or_else(|e| panic!("{e}"));
            let mat = Buffer::from_bytes(&bytes);
            let out = buf_u32(&[0; 512]);
            launch(
                &m,
                "k",
                d3(1, 1, 1),
                d3(32, 1, 1),
                0,
                vec![ptr(&mat), ptr(&out)],
            );
            let got = get_u32(&out);
            for l in 0..32 {
                let want = p.words(l, |e| probe_value(&p, e));
                for (j, w) in want.iter().enumerate() {
                    if got[16 * l + j] != *w {
                        bad.push(format!(
                            "{} ({mode:?}): lane {l} register {j}: {:#010x}, GPU {w:#010x}",
                            p.name(),
                            got[16 * l + j]
                        ));
                    }
                }
            }
        }
    }
    assert!(
        bad.is_empty(),
        "{} registers differ; first: {:#?}",
        bad.len(),
        &bad[..bad.len().min(8)]
    );
}

/// `wmma.store.d` of the GPU's `c` fragments (loaded from memory) writes the probe's matrix:
/// the store is the inverse of the GPU's `c` layout.
#[test]
fn wmma_store_inverts_the_gpus_c_layout() {
    for p in table().into_iter().filter(|p| p.frag == "c") {
        let (r, c) = p.dims();
        let ptx = format!(
            ".version 7.8\n.target sm_80\n.address_size 64\n\
             .visible .entry k(.param .u64 frag, .param .u64 mat)\n{{\n\
             .reg .b32 %r<{n}>;\n.reg .b32 %t;\n.reg .b64 %rd<5>;\n\
             ld.param.u64 %rd1, [frag];\nld.param.u64 %rd2, [mat];\n\
             mov.u32 %t, %tid.x;\nmul.wide.u32 %rd4, %t, 64;\nadd.u64 %rd3, %rd1, %rd4;\n\
             {loads}\n\
             wmma.store.d.sync.aligned.{lay}.{shape}.global.{ty} [%rd2], {{{regs}}}, {ldm};\n\
             ret;\n}}\n",
            n = p.nreg,
            lay = p.lay,
            shape = p.shape,
            ty = p.ty,
            regs = reg_list(p.nreg, "r"),
            ldm = p.ldm(),
            loads = (0..p.nreg)
                .map(|j| format!("ld.global.u32 %r{j}, [%rd3+{}];", 4 * j))
                .collect::<Vec<_>>()
                .join("\n"),
        );
        let mut frags = vec![0u32; 512];
        for l in 0..32 {
            for (j, w) in p.words(l, |e| probe_value(&p, e)).into_iter().enumerate() {
                frags[16 * l + j] = w;
            }
        }
        let want: Vec<u8> = (0..r * c)
            .flat_map(|e| probe_value(&p, e).to_le_bytes()[..p.bits() / 8].to_vec())
            .collect();
        for mode in MODES {
            let m = Module::from_ptx_with(&ptx, 2, mode).unwrap_or_else(|e| panic!("{e}"));
            let fb = buf_u32(&frags);
            let mat = Buffer::from_bytes(&vec![0; want.len()]);
            launch(
                &m,
                "k",
                d3(1, 1, 1),
                d3(32, 1, 1),
                0,
                vec![ptr(&fb), ptr(&mat)],
            );
            assert!(
                mat.as_slice() == &want[..],
                "{} ({mode:?}): the stored matrix differs from the one the GPU's fragments hold",
                p.name()
            );
        }
    }
}

/// `wmma.mma` of A, B and C fragments laid out as the GPU's loads lay them gives
/// `D = A B + C` in the GPU's `c` layout, for every k16 shape and input type (s8 for
/// `m16n16k16` only).
#[test]
fn wmma_mma_reads_and_writes_the_gpus_layouts() {
    let probes = table();
    let find = |frag: &str, shape: &str, ty: &str| {
        probes
            .iter()
            .find(|p| p.frag == frag && p.lay == "row" && p.shape == shape && p.ty == ty)
            .unwrap()
    };
    let mut rng = Rng::new(15);
    for shape in ["m16n16k16", "m32n8k16", "m8n32k16"] {
        let (m, n, k) = mnk(shape);
        for (ab, cd) in [("f16", "f32"), ("bf16", "f32"), ("s8", "s32")] {
            // The b8 probes of 512 elements tell elements `e` and `e + 256` apart by their
            // place only: the table cannot say which the GPU put where.
            if ab == "s8" && shape != "m16n16k16" {
                continue;
            }
            let (pa, pb, pc) = (
                find("a", shape, ab),
                find("b", shape, ab),
                find("c", shape, cd),
            );
            let a: Vec<i64> = (0..m * k).map(|_| rng.int(-3, 3)).collect();
            let b: Vec<i64> = (0..k * n).map(|_| rng.int(-3, 3)).collect();
            let c: Vec<i64> = (0..m * n).map(|_| rng.int(-9, 9)).collect();
            let enc = |ty: &str, x: i64| -> u32 {
                match ty {
                    "f16" => f64_to_f16(x as f64) as u32,
                    "bf16" => f32_to_bf16(x as f32) as u32,
                    "f32" => (x as f32).to_bits(),
                    _ => x as i32 as u32,
                }
            };
            // Fragment words of lane l from probe p's layout over the row-major matrix v.
            let frags = |p: &Probe, ty: &str, v: &[i64]| {
                let cols = p.dims().1;
                let mut w = vec![0u32; 512];
                for l in 0..32 {
                    let words = p.words(l, |e| {
                        let (r, col) = p.rc(e);
                        enc(ty, v[r * cols + col])
                    });
                    w[16 * l..16 * l + words.len()].copy_from_slice(&words);
                }
                w
            };
            let types = if ab == "f16" {
                format!("{cd}.{cd}")
            } else {
                format!("{cd}.{ab}.{ab}.{cd}")
            };
            let load = |reg: &str, n: usize, base: &str| {
                (0..n)
                    .map(|j| format!("ld.global.u32 %{reg}{j}, [{base}+{}];", 4 * j))
                    .collect::<Vec<_>>()
                    .join("\n")
            };
            let ptx = format!(
                ".version 7.8\n.target sm_80\n.address_size 64\n\
                 .visible .entry k(.param .u64 pa, .param .u64 pb, .param .u64 pc, .param .u64 pd)\n{{\n\
                 .reg .b32 %a<{na}>;\n.reg .b32 %b<{nb}>;\n.reg .b32 %c<{nc}>;\n.reg .b32 %d<{nc}>;\n\
                 .reg .b32 %t;\n.reg .b64 %rd<12>;\n\
                 mov.u32 %t, %tid.x;\nmul.wide.u32 %rd9, %t, 64;\n\
                 ld.param.u64 %rd1, [pa];\nadd.u64 %rd1, %rd1, %rd9;\n\
                 ld.param.u64 %rd2, [pb];\nadd.u64 %rd2, %rd2, %rd9;\n\
                 ld.param.u64 %rd3, [pc];\nadd.u64 %rd3, %rd3, %rd9;\n\
                 ld.param.u64 %rd4, [pd];\nadd.u64 %rd4, %rd4, %rd9;\n\
                 {la}\n{lb}\n{lc}\n\
                 wmma.mma.sync.aligned.row.row.{shape}.{types} {{{rd}}}, {{{ra}}}, {{{rb}}}, {{{rc}}};\n\
                 {sd}\nret;\n}}\n",
                na = pa.nreg,
                nb = pb.nreg,
                nc = pc.nreg,
                la = load("a", pa.nreg, "%rd1"),
                lb = load("b", pb.nreg, "%rd2"),
                lc = load("c", pc.nreg, "%rd3"),
                ra = reg_list(pa.nreg, "a"),
                rb = reg_list(pb.nreg, "b"),
                rc = reg_list(pc.nreg, "c"),
                rd = reg_list(pc.nreg, "d"),
                sd = (0..pc.nreg)
                    .map(|j| format!("st.global.u32 [%rd4+{}], %d{j};", 4 * j))
                    .collect::<Vec<_>>()
                    .join("\n"),
            );
            let mut dm = c.clone();
            for i in 0..m {
                for j in 0..n {
                    dm[i * n + j] += (0..k).map(|x| a[i * k + x] * b[x * n + j]).sum::<i64>();
                }
            }
            let want = frags(pc, cd, &dm);
            for mode in MODES {
                let module = Module::from_ptx_with(&ptx, 2, mode).unwrap_or_else(|e| panic!("{e}"));
                let bufs =
                    [frags(pa, ab, &a), frags(pb, ab, &b), frags(pc, cd, &c)].map(|v| buf_u32(&v));
                let bd = buf_u32(&[0; 512]);
                let args = vec![ptr(&bufs[0]), ptr(&bufs[1]), ptr(&bufs[2]), ptr(&bd)];
                launch(&module, "k", d3(1, 1, 1), d3(32, 1, 1), 0, args);
                assert_eq!(get_u32(&bd), want, "{shape} {ab} -> {cd} ({mode:?})");
            }
        }
    }
}
