//! Every corpus kernel round-trips through LLVM: translate at -O0 and -O2 (the IR verifies),
//! emit PTX through LLVM's NVPTX back end, check that PTX with `ptx2llvm::check` (it must
//! accept what LLVM writes), and, when `ptxas` is available (env `PTXAS`, `ptxas`
//! on PATH, or the repo's `.venv/.../nvidia/cu13/bin/ptxas`), assemble it with `ptxas -c`.
//! Runs two files at a time; prints a summary.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Arc, Mutex};

use ptx2llvm::llvm::EmitKind;
use ptx2llvm::target::nvptx;

fn corpus_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            corpus_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "ptx") {
            out.push(p);
        }
    }
}

fn find_ptxas() -> Option<PathBuf> {
    if let Ok(p) = std::env::var("PTXAS") {
        if !p.is_empty() {
            return Some(p.into());
        }
    }
    if let Ok(path) = std::env::var("PATH") {
        for d in std::env::split_paths(&path) {
            let c = d.join("ptxas");
            if c.is_file() {
                return Some(c);
            }
        }
    }
    let venv = Path::new(env!("CARGO_MANIFEST_DIR")).join(".venv/lib");
    if let Ok(rd) = std::fs::read_dir(&venv) {
        for e in rd.flatten() {
            let c = e.path().join("site-packages/nvidia/cu13/bin/ptxas");
            if c.is_file() {
                return Some(c);
            }
        }
    }
    None
}

/// One file: Ok(note) or Err(message).
fn check(path: &Path, ptxas: Option<&Path>) -> Result<String, String> {
    let src = std::fs::read_to_string(path).map_err(|e| e.to_string())?;
    let (module, diags) = ptx2llvm::syntax::parse(&src);
    if !diags.is_empty() {
        return Err(format!("parse: {}", diags[0].message));
    }
    let module = &module;
    let (info, check_diags) = ptx2llvm::check::check_module(module);
    if let Some(d) = check_diags.first() {
        return Err(format!("check: {}", d.message));
    }
    let arch = nvptx::module_arch(module);
    let n: u32 = arch
        .trim_start_matches("sm_")
        .trim_end_matches(|c: char| c.is_ascii_alphabetic())
        .parse()
        .unwrap_or(52);
    let (ptxas_arch, note) = if n < 75 {
        (
            "sm_75".to_string(),
            format!(" ({arch} below sm_75: ptxas -arch=sm_75)"),
        )
    } else {
        (arch.clone(), String::new())
    };
    for opt in [0u8, 2] {
        let opts = nvptx::Options {
            emit: EmitKind::Asm,
            opt,
            arch: None,
            name: path.display().to_string(),
            debug: Default::default(),
        };
        let out = nvptx::compile(module, &info, &opts).map_err(|e| format!("-O{opt}: {e}"))?;
        // LLVM's PTX is valid PTX (ptxas takes it below): our own checker must agree, which
        // holds the operand type rules to a second compiler's output.
        let text = String::from_utf8_lossy(&out.bytes).into_owned();
        let (emitted, diags) = ptx2llvm::syntax::parse(&text);
        let diags = if diags.is_empty() {
            ptx2llvm::check::check(&emitted)
        } else {
            diags
        };
        if !diags.is_empty() {
            return Err(format!(
                "-O{opt}: `check` rejects LLVM's PTX: {}",
                ptx2llvm::syntax::diag::render_all(&diags[..1], "emitted", &text)
                    .lines()
                    .take(3)
                    .collect::<Vec<_>>()
                    .join(" | ")
            ));
        }
        if let Some(px) = ptxas {
            let tmp = tempfile::NamedTempFile::new().unwrap();
            std::fs::write(tmp.path(), &out.bytes).unwrap();
            let r = Command::new(px)
                .args(["-c", &format!("-arch={ptxas_arch}"), "-o", "/dev/null"])
                .arg(tmp.path())
                .output()
                .map_err(|e| e.to_string())?;
            if !r.status.success() {
                return Err(format!(
                    "-O{opt}: ptxas: {}",
                    String::from_utf8_lossy(&r.stderr)
                        .lines()
                        .take(3)
                        .collect::<Vec<_>>()
                        .join(" | ")
                ));
            }
        }
    }
    Ok(note)
}

#[test]
fn nvptx_corpus_round_trip() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus");
    let mut files = Vec::new();
    corpus_files(&root, &mut files);
    files.sort();
    let ptxas = find_ptxas();
    match &ptxas {
        Some(p) => println!("ptxas: {}", p.display()),
        None => println!("ptxas not found: checking translation and LLVM's PTX emission only"),
    }
    let queue = Arc::new(Mutex::new(files.clone()));
    let results = Arc::new(Mutex::new(Vec::new()));
    let workers: Vec<_> = (0..2)
        .map(|_| {
            let (q, r, px) = (queue.clone(), results.clone(), ptxas.clone());
            std::thread::spawn(move || loop {
                let Some(f) = q.lock().unwrap().pop() else {
                    break;
                };
                let res = check(&f, px.as_deref());
                r.lock().unwrap().push((f, res));
            })
        })
        .collect();
    for w in workers {
        w.join().unwrap();
    }
    let mut results = results.lock().unwrap().clone();
    results.sort_by(|a, b| a.0.cmp(&b.0));
    let mut failed = 0;
    for (f, r) in &results {
        let rel = f.strip_prefix(&root).unwrap_or(f).display();
        match r {
            Ok(note) => println!("ok   {rel}{note}"),
            Err(e) => {
                failed += 1;
                println!("FAIL {rel}: {e}");
            }
        }
    }
    println!(
        "nvptx corpus: {} of {} files round-trip at -O0 and -O2{}",
        results.len() - failed,
        results.len(),
        if ptxas.is_some() {
            " through ptxas"
        } else {
            ""
        }
    );
    assert_eq!(failed, 0, "{failed} corpus files failed");
}
