//! The harness of the instruction-level tests on the cpu target (`tests/cpu_instr_*.rs`): builds
//! one PTX kernel from a template around a list of instruction snippets, launches it through the
//! embedding API over a whole input array in one grid (one thread per case, each loading its
//! operands, applying every snippet and storing every result), and compares the results with a
//! reference, reporting each mismatch with the instruction, the inputs (hex), the expected and
//! the actual value.
//!
//! Layout: every operand and every result occupies an 8-byte little-endian slot. Case `i` reads
//! operand `k` from `in + (i·nin + k)·8` and writes result `j` to `out + (i·nout + j)·8`.
//!
//! Snippets name operands `$a $b $c $e $f $g $h $i` (the loaded inputs, in order), results `$d` (the
//! first) and `$d1`, `$d2`, … (further ones), scratch predicates `$p` and `$q`, and `$k` (the
//! snippet's index, to make names of scratch registers the snippet declares itself unique).
//!
//! Types of operands and results: PTX scalar types; `u8`/`s8` live in `.u16`/`.s16` registers
//! (loaded with `ld.global.u8`/`.s8`, stored as 16 bits, so the width extension of the register
//! is checked too); `f16`/`bf16` in `.b16`, `f16x2`/`bf16x2` in `.b32`; `pred` operands are
//! loaded as `.u32` and set when non-zero, `pred` results are stored as 0/1 `.u32`.
#![allow(dead_code)]

use ptx2llvm::api::{Arg, Buffer, Dim3, Module};
pub use ptx2llvm::target::cpu::fission::CpuMode;

/// One instruction under test: a name for reports, its result types and its PTX text.
#[derive(Clone, Debug)]
pub struct Op {
    pub name: String,
    pub outs: Vec<&'static str>,
    pub text: String,
}

impl Op {
    /// An instruction with one result of type `out`; `text` uses `$d`, `$a`, `$b`, ….
    pub fn new(name: impl Into<String>, out: &'static str, text: impl Into<String>) -> Op {
        Op {
            name: name.into(),
            outs: vec![out],
            text: text.into(),
        }
    }
    /// `text` is `name` itself (`add.s32 $d, $a, $b;`).
    pub fn ins(out: &'static str, text: impl Into<String>) -> Op {
        let t: String = text.into();
        Op {
            name: t.trim().to_string(),
            outs: vec![out],
            text: t,
        }
    }
    pub fn multi(name: impl Into<String>, outs: &[&'static str], text: impl Into<String>) -> Op {
        Op {
            name: name.into(),
            outs: outs.to_vec(),
            text: text.into(),
        }
    }
}

const OPERANDS: [&str; 8] = ["a", "b", "c", "e", "f", "g", "h", "i"];

/// Register type, load/store type of a value type.
fn reg_ty(t: &str) -> &'static str {
    match t {
        "u8" => "u16",
        "s8" => "s16",
        "b8" => "b16",
        "f16" | "bf16" => "b16",
        "f16x2" | "bf16x2" => "b32",
        "pred" => "pred",
        "u16" => "u16",
        "s16" => "s16",
        "b16" => "b16",
        "u32" => "u32",
        "s32" => "s32",
        "b32" => "b32",
        "u64" => "u64",
        "s64" => "s64",
        "b64" => "b64",
        "f32" => "f32",
        "f64" => "f64",
        other => panic!("harness: unknown value type {other}"),
    }
}

fn mem_ty(t: &str) -> &'static str {
    match t {
        "u8" => "u8",
        "s8" => "s8",
        "b8" => "u8",
        "pred" => "u32",
        t => reg_ty(t),
    }
}

/// The kernel `k` for `inputs` and `ops` (public so a failing test can print it).
pub fn kernel_src(inputs: &[&str], ops: &[Op]) -> String {
    let nin = inputs.len();
    let nout: usize = ops.iter().map(|o| o.outs.len()).sum();
    // sm_100a: the kernels use its instructions (3-input min/max, `.f32x2`, `add.f32.f16`, `cvt.rs`), and
    // `check` holds them to their targets as ptxas does.
    let mut s = String::from(".version 8.8\n.target sm_100a\n.address_size 64\n\n");
    s += ".visible .entry k(.param .u64 pin, .param .u64 pout, .param .u32 pn)\n{\n";
    s += "\t.reg .pred %tdone;\n\t.reg .b32 %tix, %tnt, %tct, %tn;\n\t.reg .b64 %tia, %toa, %toff;\n";
    s += "\tld.param.u64 %tia, [pin];\n\tld.param.u64 %toa, [pout];\n\tld.param.u32 %tn, [pn];\n";
    s += "\tmov.u32 %tix, %tid.x;\n\tmov.u32 %tnt, %ntid.x;\n\tmov.u32 %tct, %ctaid.x;\n";
    s += "\tmad.lo.u32 %tix, %tct, %tnt, %tix;\n\tsetp.ge.u32 %tdone, %tix, %tn;\n\t@%tdone bra $L_end;\n";
    s += &format!(
        "\tmul.wide.u32 %toff, %tix, {};\n\tadd.u64 %tia, %tia, %toff;\n",
        nin * 8
    );
    s += &format!(
        "\tmul.wide.u32 %toff, %tix, {};\n\tadd.u64 %toa, %toa, %toff;\n",
        nout.max(1) * 8
    );
    for (k, t) in inputs.iter().enumerate() {
        let r = OPERANDS[k];
        if *t == "pred" {
            s += &format!("\t.reg .pred %{r};\n\t.reg .u32 %{r}_w;\n\tld.global.u32 %{r}_w, [%tia+{}];\n\tsetp.ne.u32 %{r}, %{r}_w, 0;\n", k * 8);
        } else {
            s += &format!(
                "\t.reg .{} %{r};\n\tld.global.{} %{r}, [%tia+{}];\n",
                reg_ty(t),
                mem_ty(t),
                k * 8
            );
        }
    }
    let mut slot = 0usize;
    for (k, op) in ops.iter().enumerate() {
        s += &format!("\t// {}\n", op.name);
        s += &format!("\t.reg .pred %p{k}, %q{k};\n");
        let mut text = op.text.clone();
        for (j, t) in op.outs.iter().enumerate().rev() {
            s += &format!("\t.reg .{} %d{k}_{j};\n", reg_ty(t));
            let from = if j == 0 {
                "$d".to_string()
            } else {
                format!("$d{j}")
            };
            text = text.replace(&from, &format!("%d{k}_{j}"));
        }
        text = text
            .replace("$p", &format!("%p{k}"))
            .replace("$q", &format!("%q{k}"))
            .replace("$k", &k.to_string());
        for (j, r) in OPERANDS.iter().enumerate() {
            if j < nin {
                text = text.replace(&format!("${r}"), &format!("%{r}"));
            }
        }
        assert!(
            !text.contains('$'),
            "harness: unresolved placeholder in `{}`",
            op.text
        );
        s += &format!("\t{text}\n");
        for (j, t) in op.outs.iter().enumerate() {
            let off = slot * 8;
            if *t == "pred" {
                s += &format!("\t{{\n\t.reg .u32 %w{k}_{j};\n\tselp.u32 %w{k}_{j}, 1, 0, %d{k}_{j};\n\tst.global.u32 [%toa+{off}], %w{k}_{j};\n\t}}\n");
            } else {
                s += &format!("\tst.global.{} [%toa+{off}], %d{k}_{j};\n", reg_ty(t));
            }
            slot += 1;
        }
    }
    s += "$L_end:\n\tret;\n}\n";
    s
}

/// Compiles the kernel for `inputs`/`ops` at -O2 and runs it over `cases` (each case: one u64
/// bit pattern per input). Returns, per op, per case, the result bit patterns (zero-extended
/// from the stored width).
/// The optimization level is 2, or `INSTR_OPT` (0–3) from the environment.
pub fn run(inputs: &[&str], ops: &[Op], cases: &[Vec<u64>]) -> Vec<Vec<Vec<u64>>> {
    let opt = std::env::var("INSTR_OPT")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(2);
    run_opt(inputs, ops, cases, opt)
}

pub fn run_opt(inputs: &[&str], ops: &[Op], cases: &[Vec<u64>], opt: u8) -> Vec<Vec<Vec<u64>>> {
    run_mode(inputs, ops, cases, opt, CpuMode::from_env())
}

/// As `run_opt`, with the kernel compiled as `mode` says: `CpuMode::Fission` runs the thread
/// loops LLVM vectorizes across CUDA threads, `CpuMode::Coroutine` one coroutine per thread,
/// whose code stays scalar. A conversion can be right in one and wrong in the other.
pub fn run_mode(
    inputs: &[&str],
    ops: &[Op],
    cases: &[Vec<u64>],
    opt: u8,
    mode: CpuMode,
) -> Vec<Vec<Vec<u64>>> {
    let src = kernel_src(inputs, ops);
    if let Ok(dir) = std::env::var("INSTR_DUMP_DIR") {
        // Debugging aid: every kernel's PTX, named after its first instruction.
        let name: String = ops[0]
            .name
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '.' {
                    c
                } else {
                    '_'
                }
            })
            .collect();
        let _ = std::fs::write(std::path::Path::new(&dir).join(format!("{name}.ptx")), &src);
    }
    let m = Module::from_ptx_with(&src, opt, mode)
        .unwrap_or_else(|e| panic!("compiling the test kernel failed: {e}\n{src}"));
    if mode == CpuMode::Fission {
        // The vectorized path must really be thread loops (else a coroutine fallback would
        // check the scalar code twice).
        let path = &m.program().kernel("k").expect("kernel k").path;
        assert!(
            matches!(path, ptx2llvm::target::cpu::fission::KernelPath::Fission(_)),
            "the test kernel did not compile to thread loops: {path:?}"
        );
    }
    let nin = inputs.len();
    let nout: usize = ops.iter().map(|o| o.outs.len()).sum();
    let n = cases.len();
    let mut bytes = Vec::with_capacity(n * nin * 8);
    for c in cases {
        assert_eq!(
            c.len(),
            nin,
            "harness: case with {} operands, kernel takes {nin}",
            c.len()
        );
        for v in c {
            bytes.extend_from_slice(&v.to_le_bytes());
        }
    }
    let input = Buffer::from_bytes(&bytes);
    let output = Buffer::zeroed(n * nout.max(1) * 8);
    let mut args = vec![
        Arg::Pointer(input.address()),
        Arg::Pointer(output.address()),
        Arg::scalar_u32(n as u32),
    ];
    let block = 256u32;
    let grid = (n as u32).div_ceil(block).max(1);
    m.launch("k", Dim3::x(grid), Dim3::x(block), 0, &mut args)
        .unwrap_or_else(|e| panic!("launch failed: {e}\n{src}"));
    let words: Vec<u64> = output
        .as_slice()
        .chunks_exact(8)
        .map(|c| u64::from_le_bytes(c.try_into().unwrap()))
        .collect();
    let mut res = Vec::with_capacity(ops.len());
    let mut slot = 0;
    for op in ops {
        let w = op.outs.len();
        let widths: Vec<u64> = op.outs.iter().map(|t| width_mask(t)).collect();
        res.push(
            (0..n)
                .map(|i| {
                    (0..w)
                        .map(|j| words[i * nout + slot + j] & widths[j])
                        .collect()
                })
                .collect(),
        );
        slot += w;
    }
    res
}

/// The mask of the stored bits of a result of type `t`.
pub fn width_mask(t: &str) -> u64 {
    match mem_ty(t) {
        "u8" | "s8" => 0xffff, // stored from a 16-bit register
        "u16" | "s16" | "b16" => 0xffff,
        "u32" | "s32" | "b32" | "f32" => 0xffff_ffff,
        _ => u64::MAX,
    }
}

/// Collects mismatches per instruction and fails at the end with a report of all of them.
pub struct Checker {
    pub what: String,
    pub cases: u64,
    pub fails: Vec<(String, u64)>,
    pub lines: Vec<String>,
    pub instrs: std::collections::BTreeSet<String>,
    pub gaps: Vec<String>,
    /// Results that differ from the reference's choice where the manual leaves the result
    /// open, per reason (`check_open`).
    pub explained: std::collections::BTreeMap<String, u64>,
    cur_fail: std::collections::HashMap<String, u64>,
}

impl Checker {
    pub fn new(what: &str) -> Checker {
        Checker {
            what: what.to_string(),
            cases: 0,
            fails: Vec::new(),
            lines: Vec::new(),
            instrs: Default::default(),
            gaps: Vec::new(),
            explained: Default::default(),
            cur_fail: Default::default(),
        }
    }

    /// Records one comparison; `ok` says whether `got` is acceptable for `want`.
    pub fn check(&mut self, instr: &str, inputs: &[u64], want: u64, got: u64, ok: bool) {
        self.check_msg(instr, inputs, &format!("{want:#x}"), got, ok)
    }

    /// As `check`, with the expectation as text (a range, a tolerance, …).
    pub fn check_msg(&mut self, instr: &str, inputs: &[u64], want: &str, got: u64, ok: bool) {
        self.check_text(instr, inputs, want, &format!("{got:#x}"), ok)
    }

    /// As `check`, with expectation and result as text.
    pub fn check_text(&mut self, instr: &str, inputs: &[u64], want: &str, got: &str, ok: bool) {
        self.cases += 1;
        if !self.instrs.contains(instr) {
            self.instrs.insert(instr.to_string());
        }
        if ok {
            return;
        }
        let c = self.cur_fail.entry(instr.to_string()).or_insert(0);
        *c += 1;
        if *c <= 8 {
            let ins: Vec<String> = inputs.iter().map(|v| format!("{v:#x}")).collect();
            self.lines.push(format!(
                "  {instr}  inputs [{}]: expected {want}, got {got}",
                ins.join(", ")
            ));
        }
    }

    /// As `check`, where `open` names the rule of the manual that leaves this case's result
    /// open (an unspecified NaN, …) and says whether `got` is within what that rule allows: a
    /// result other than `want` is then an explained difference, counted under the reason.
    pub fn check_open(
        &mut self,
        instr: &str,
        inputs: &[u64],
        want: u64,
        got: u64,
        open: Option<(&str, bool)>,
    ) {
        match open {
            Some((why, true)) if got != want => {
                self.cases += 1;
                self.instrs.insert(instr.to_string());
                *self.explained.entry(why.to_string()).or_insert(0) += 1;
            }
            _ => self.check(instr, inputs, want, got, got == want),
        }
    }

    /// The number of unexplained differences so far.
    pub fn differences(&self) -> u64 {
        self.cur_fail.values().sum()
    }

    /// Checks a whole op result table: `want(case) -> (expected, ok(got))`.
    pub fn table(
        &mut self,
        op: &Op,
        cases: &[Vec<u64>],
        got: &[Vec<u64>],
        mut want: impl FnMut(&[u64]) -> Vec<u64>,
        same: impl Fn(&str, u64, u64) -> bool,
    ) {
        for (c, g) in cases.iter().zip(got) {
            let w = want(c);
            for (j, (wv, gv)) in w.iter().zip(g).enumerate() {
                let name = if op.outs.len() > 1 {
                    format!("{} (result {j})", op.name)
                } else {
                    op.name.clone()
                };
                let ok = same(op.outs[j], *wv, *gv);
                self.check(&name, c, *wv, *gv, ok);
            }
        }
    }

    /// Records a documented known gap (printed with the summary).
    pub fn gap(&mut self, text: &str) {
        if !self.gaps.iter().any(|g| g == text) {
            self.gaps.push(text.to_string());
        }
    }

    /// Prints the summary and panics if anything mismatched.
    pub fn finish(self) {
        let explained: u64 = self.explained.values().sum();
        println!(
            "{}: {} instruction forms, {} cases, {} differences, {} explained differences",
            self.what,
            self.instrs.len(),
            self.cases,
            self.differences() + explained,
            explained
        );
        for (why, n) in &self.explained {
            println!("  explained ({n}): {why}");
        }
        for g in &self.gaps {
            println!("  known gap (skipped): {g}");
        }
        if !self.cur_fail.is_empty() {
            let mut counts: Vec<_> = self.cur_fail.iter().collect();
            counts.sort();
            let summary: Vec<String> = counts
                .iter()
                .map(|(k, v)| format!("  {k}: {v} mismatches"))
                .collect();
            panic!(
                "{}: mismatches\n{}\nfirst mismatches:\n{}",
                self.what,
                summary.join("\n"),
                self.lines.join("\n")
            );
        }
    }
}

/// Marks a case as a documented known gap: records the text in the checker (printed by
/// `finish`) and evaluates to `true`, so `if known_gap!(chk, cond, "…") { continue; }` skips it.
#[macro_export]
macro_rules! known_gap {
    ($chk:expr, $cond:expr, $text:expr) => {{
        let c: bool = $cond;
        if c {
            $chk.gap($text);
        }
        c
    }};
}

/// Exact equality of the stored bits.
pub fn exact(_t: &str, a: u64, b: u64) -> bool {
    a == b
}

/// Equality where any two NaNs of the result type match.
pub fn same_float(t: &str, a: u64, b: u64) -> bool {
    a == b || is_nan(t, a) && is_nan(t, b)
}

pub fn is_nan(t: &str, v: u64) -> bool {
    match t {
        "f32" => f32::from_bits(v as u32).is_nan(),
        "f64" => f64::from_bits(v).is_nan(),
        "f16" => (v & 0x7c00) == 0x7c00 && (v & 0x3ff) != 0,
        "bf16" => (v & 0x7f80) == 0x7f80 && (v & 0x7f) != 0,
        _ => false,
    }
}

/// Sign-extends the low `bits` of `v` to 64 bits.
pub fn sext(v: u64, bits: u32) -> u64 {
    if bits >= 64 {
        v
    } else {
        (((v << (64 - bits)) as i64) >> (64 - bits)) as u64
    }
}

/// The low `bits` of `v`.
pub fn mask(v: u64, bits: u32) -> u64 {
    if bits >= 64 {
        v
    } else {
        v & ((1u64 << bits) - 1)
    }
}
