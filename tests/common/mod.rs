//! Helpers shared by the integration tests: the list of corpus files and their text.

#![allow(dead_code)]

use std::path::{Path, PathBuf};

/// The repository root (where `Cargo.toml` is).
pub fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Every `.ptx` file under `tests/corpus/`, sorted, as absolute paths.
pub fn corpus_files() -> Vec<PathBuf> {
    let mut files = Vec::new();
    collect(&repo_root().join("tests").join("corpus"), &mut files);
    files.sort();
    assert!(
        files.len() >= 100,
        "expected the 116-file corpus under tests/corpus, found {} .ptx files",
        files.len()
    );
    files
}

fn collect(dir: &Path, out: &mut Vec<PathBuf>) {
    let entries =
        std::fs::read_dir(dir).unwrap_or_else(|e| panic!("cannot read {}: {e}", dir.display()));
    for entry in entries {
        let path = entry.expect("directory entry").path();
        if path.is_dir() {
            collect(&path, out);
        } else if path.extension().is_some_and(|e| e == "ptx") {
            out.push(path);
        }
    }
}

/// The path relative to the repository root, for messages.
pub fn rel(path: &Path) -> String {
    path.strip_prefix(repo_root())
        .unwrap_or(path)
        .display()
        .to_string()
}

/// Reads a corpus file as UTF-8 text.
pub fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()))
}

/// NVIDIA's ptxas: `$PTXAS` when set and non-empty, else the one `scripts/setup.sh` puts in
/// the repository's venv.
pub fn find_ptxas() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("PTXAS").filter(|p| !p.is_empty()) {
        let p = PathBuf::from(p);
        assert!(p.is_file(), "PTXAS={} is not a file", p.display());
        return Some(p);
    }
    let lib = repo_root().join(".venv").join("lib");
    let mut found = Vec::new();
    for py in std::fs::read_dir(&lib).into_iter().flatten().flatten() {
        if !py.file_name().to_string_lossy().starts_with("python3") {
            continue;
        }
        let nvidia = py.path().join("site-packages").join("nvidia");
        for cu in std::fs::read_dir(&nvidia).into_iter().flatten().flatten() {
            let p = cu.path().join("bin").join("ptxas");
            if cu.file_name().to_string_lossy().starts_with("cu") && p.is_file() {
                found.push(p);
            }
        }
    }
    found.sort();
    found.pop()
}
