//! Holds the nvptx column of `docs/COVERAGE.md` (`ptx2llvm::isa::coverage::support`) to what
//! the lowering really does. Every PTX input of the repository (corpus, lit tests) is
//! translated for nvptx; the lowering's log (`Output::realized`) counts, per opcode, how often it emitted native
//! LLVM IR (instructions, intrinsics) and how often PTX inline assembly. Then:
//! - an opcode the table lists without any "inline PTX" part never went through inline asm;
//! - an opcode the table lists as "inline PTX" only was never lowered natively;
//! - every opcode the table claims native support for was lowered natively at least once (the
//!   lit suite has a test for every instruction family), so no claim goes unexercised.

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use ptx2llvm::isa::coverage::support;
use ptx2llvm::isa::Opcode;
use ptx2llvm::llvm::EmitKind;
use ptx2llvm::lower::realized::Realized;
use ptx2llvm::target::nvptx;

fn ptx_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    for e in rd.flatten() {
        let p = e.path();
        if p.is_dir() {
            ptx_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "ptx") {
            out.push(p);
        }
    }
}

#[test]
fn nvptx_coverage_column_matches_the_lowering() {
    let root = common::repo_root();
    let mut files = common::corpus_files();
    ptx_files(&root.join("lit"), &mut files);
    let mut total: BTreeMap<Opcode, Realized> = BTreeMap::new();
    let mut translated = 0;
    for f in &files {
        let src = std::fs::read_to_string(f).unwrap_or_default();
        let (module, diags) = ptx2llvm::syntax::parse(&src);
        let (info, check_diags) = ptx2llvm::check::check_module(&module);
        if !diags.is_empty() || !check_diags.is_empty() {
            continue; // negative tests
        }
        let opts = nvptx::Options {
            emit: EmitKind::Llvm,
            opt: 0,
            arch: None,
            name: common::rel(f),
            debug: Default::default(),
        };
        let Ok(out) = nvptx::compile(&module, &info, &opts) else {
            continue; // known gaps are lit XFAILs; the corpus test asserts the corpus translates
        };
        translated += 1;
        for (op, r) in out.realized {
            let t = total.entry(op).or_default();
            t.native += r.native;
            t.inline_asm += r.inline_asm;
        }
    }
    assert!(translated > 150, "only {translated} inputs translated");

    let mut problems = Vec::new();
    for &op in Opcode::ALL {
        let claim = support(op, "nvptx");
        let r = total.get(&op).copied().unwrap_or_default();
        let mentions_asm = claim.contains("inline PTX");
        let only_asm = claim.starts_with("inline PTX");
        if !mentions_asm && r.inline_asm > 0 {
            problems.push(format!(
                "`{}`: table says `{claim}` but {} uses went through inline PTX",
                op.spelling(),
                r.inline_asm
            ));
        }
        if only_asm && r.native > 0 {
            problems.push(format!(
                "`{}`: table says `{claim}` but {} uses were lowered natively",
                op.spelling(),
                r.native
            ));
        }
        if !only_asm && r.native == 0 {
            problems.push(format!(
                "`{}`: table claims `{claim}` but no input exercised a native lowering (add a lit test)",
                op.spelling()
            ));
        }
    }
    println!(
        "{translated} inputs translated; {} opcodes exercised",
        total.len()
    );
    assert!(
        problems.is_empty(),
        "docs/COVERAGE.md's nvptx column disagrees with the lowering:\n{}",
        problems.join("\n")
    );
}
