//! Source lines survive the nvptx target: for every corpus file with `.loc` (Triton, nvcc
//! `-lineinfo`/`-G`, Numba, clang), per kernel, the set of (file name, line) in force at the
//! input's instructions is compared with the set in LLVM's PTX (`--emit asm`). At -O0 every
//! line must survive; at -O2 the fraction kept is printed and held to the bound measured (the
//! issue's goal is 95%; what LLVM's back end loses is in `O2_KEPT_AT_LEAST`). With `-g` (full
//! DWARF) the same holds at -O0, and ptxas accepts the output at both levels.

use std::collections::{BTreeSet, HashMap};
use std::path::Path;
use std::process::Command;

mod common;

use ptx2llvm::llvm::EmitKind;
use ptx2llvm::lower::debug::DebugOptions;
use ptx2llvm::syntax::ast::{Block, Item, Module, Statement};
use ptx2llvm::target::nvptx;

/// The fraction of (kernel, file, line) kept at -O2 over the corpus must stay at least this
/// (measured: 211 of 221, 95.5%, in 20 files; before `llvm::sink` and the packed `cvt` intrinsic
/// 207, 93.7%: `scripts/line_survival.py` compares, ptxas registers and SASS sizes no worse in
/// any corpus file). The LLVM IR after -O2 still has every line; LLVM 22's back end loses 10:
/// - 5 to MachineSink, which gives an instruction it sinks into another block the merge of its
///   location with that of the instruction it lands before (line 0 when they differ): Triton
///   matmul (sm100) lines 45, 47, 50, 56, 57, a grid of address sums whose operands each have
///   other users, which `llvm::sink` leaves (moving them would lengthen those lives);
/// - 5 lines that hold only `ld.param` of kernel parameters (Numba's axpy line 10 twice, NVRTC
///   vecadd line 1 twice, shared_sync line 2): in LLVM IR a kernel parameter is an argument,
///   the `ld.param` the back end makes for it has no location, and MachineSink moves it to its
///   use (line 0); without MachineSink it stays under the function's first line.
///
/// Not used to win them back, since each changes code or tells a wrong line: LLVM's IR `sink`
/// pass (96.8%, but ptxas registers up to +20 on NVRTC's math64), `-disable-machine-sink`
/// (98.6%, registers 183 → 254 on Triton matmul sm100), and `-pick-merged-source-locations`
/// (+2 lines; a chain of sunk instructions all take its smallest line).
const O2_KEPT_AT_LEAST: f64 = 0.95;

type Lines = HashMap<String, BTreeSet<(String, u32)>>;

/// Per function, the (file name, line) of the `.loc` in force at each instruction (a `.loc`
/// directly followed by another describes no instruction).
fn lines(m: &Module) -> Lines {
    let files: HashMap<u32, String> = m
        .items
        .iter()
        .filter_map(|it| match it {
            Item::File { index, name, .. } => Some((*index, name.trim_matches('"').to_string())),
            _ => None,
        })
        .collect();
    fn walk(
        b: &Block,
        files: &HashMap<u32, String>,
        cur: &mut Option<(u32, u32)>,
        out: &mut BTreeSet<(String, u32)>,
    ) {
        for s in &b.stmts {
            match s {
                Statement::Loc(l) => *cur = Some((l.file, l.line)),
                Statement::Instr(_) => {
                    if let Some((f, l)) = *cur {
                        let name = files.get(&f).cloned().unwrap_or_else(|| f.to_string());
                        out.insert((name, l));
                    }
                }
                Statement::Block(b) => walk(b, files, cur, out),
                _ => {}
            }
        }
    }
    let mut out = Lines::new();
    for it in &m.items {
        if let Item::Function(f) = it {
            if let Some(b) = &f.body {
                let set = out.entry(f.name.to_string()).or_default();
                walk(b, &files, &mut None, set);
            }
        }
    }
    out
}

fn ptxas_ok(ptxas: &Path, text: &[u8], arch: &str) -> Result<(), String> {
    let tmp = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(tmp.path(), text).unwrap();
    let r = Command::new(ptxas)
        .args(["-c", &format!("-arch={arch}"), "-o", "/dev/null"])
        .arg(tmp.path())
        .output()
        .map_err(|e| e.to_string())?;
    if r.status.success() {
        Ok(())
    } else {
        Err(String::from_utf8_lossy(&r.stderr).lines().take(3).collect())
    }
}

#[test]
fn corpus_lines_survive_nvptx() {
    let root = common::repo_root().join("tests/corpus");
    let files = common::corpus_files();
    let ptxas = common::find_ptxas();
    let (mut total, mut kept_o2, mut nfiles) = (0usize, 0usize, 0usize);
    let mut failures = Vec::new();
    let mut by_corpus: std::collections::BTreeMap<String, (usize, usize)> = Default::default();
    for path in &files {
        let src = std::fs::read_to_string(path).unwrap();
        let (module, diags) = ptx2llvm::syntax::parse(&src);
        if !diags.is_empty() {
            continue;
        }
        let module = &module;
        let (info, _) = ptx2llvm::check::check_module(module);
        let want = lines(module);
        let n: usize = want.values().map(|s| s.len()).sum();
        if n == 0 {
            continue;
        }
        nfiles += 1;
        let rel = path.strip_prefix(&root).unwrap().display().to_string();
        let arch = nvptx::module_arch(module);
        let sm: u32 = arch
            .trim_start_matches("sm_")
            .trim_end_matches(|c: char| c.is_ascii_alphabetic())
            .parse()
            .unwrap_or(52);
        let ptxas_arch = if sm < 75 { "sm_75".to_string() } else { arch };
        for (opt, full) in [(0u8, false), (2, false), (0, true), (2, true)] {
            let opts = nvptx::Options {
                emit: EmitKind::Asm,
                opt,
                arch: None,
                name: rel.clone(),
                debug: DebugOptions::new(full, &rel, &src),
            };
            let g = if full { " -g" } else { "" };
            let out = match nvptx::compile(module, &info, &opts) {
                Ok(o) => o,
                Err(e) => {
                    failures.push(format!("{rel} -O{opt}{g}: {e}"));
                    continue;
                }
            };
            let text = String::from_utf8_lossy(&out.bytes);
            let (emitted, diags) = ptx2llvm::syntax::parse(&text);
            assert!(
                diags.is_empty(),
                "{rel} -O{opt}{g}: LLVM's PTX does not parse"
            );
            let got = lines(&emitted);
            let mut k = 0;
            for (kernel, set) in &want {
                let have = got.get(kernel).cloned().unwrap_or_default();
                let lost: Vec<_> = set.difference(&have).collect();
                k += set.len() - lost.len();
                if opt == 0 && !lost.is_empty() {
                    failures.push(format!("{rel} -O0{g}: `{kernel}` loses {lost:?}"));
                }
            }
            if opt == 2 && !full {
                total += n;
                kept_o2 += k;
                let corpus = rel.split('/').next().unwrap_or("").to_string();
                let e = by_corpus.entry(corpus).or_insert((0, 0));
                e.0 += k;
                e.1 += n;
                println!("{rel}: -O2 keeps {k} of {n} lines");
            }
            if let Some(px) = &ptxas {
                if let Err(e) = ptxas_ok(px, &out.bytes, &ptxas_arch) {
                    failures.push(format!("{rel} -O{opt}{g}: ptxas: {e}"));
                }
            }
        }
    }
    for (corpus, (k, n)) in &by_corpus {
        println!(
            "{corpus}: -O2 keeps {k} of {n} lines ({:.1}%)",
            100.0 * *k as f64 / *n as f64
        );
    }
    let frac = kept_o2 as f64 / total.max(1) as f64;
    println!(
        "{nfiles} files with .loc: -O0 keeps every line; -O2 keeps {kept_o2} of {total} ({:.1}%)",
        100.0 * frac
    );
    assert!(nfiles >= 20, "only {nfiles} corpus files with .loc");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(
        frac >= O2_KEPT_AT_LEAST,
        "-O2 keeps {:.1}% of the lines (at least {:.0}% expected)",
        100.0 * frac,
        100.0 * O2_KEPT_AT_LEAST
    );
}
