//! `docs/COVERAGE.md` is generated from the instruction table (`src/isa/ptx.isa`) by
//! `ptx2llvm::isa::coverage::coverage_markdown()`; this test fails when the file is stale.
//! Regenerate it with `UPDATE_COVERAGE=1 cargo test --test coverage_doc`.

use std::path::Path;

use ptx2llvm::isa::coverage::coverage_markdown;

#[test]
fn coverage_doc_is_up_to_date() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("docs")
        .join("COVERAGE.md");
    let expected = coverage_markdown();
    if std::env::var_os("UPDATE_COVERAGE").is_some() {
        std::fs::write(&path, &expected).expect("write docs/COVERAGE.md");
        return;
    }
    let actual = std::fs::read_to_string(&path).unwrap_or_default();
    if actual != expected {
        let first_diff = actual
            .lines()
            .zip(expected.lines())
            .position(|(a, e)| a != e)
            .unwrap_or_else(|| actual.lines().count().min(expected.lines().count()));
        panic!(
            "docs/COVERAGE.md is out of date (first difference at line {}):\n  file:      {:?}\n  generated: {:?}\n\
             Regenerate it with `UPDATE_COVERAGE=1 cargo test --test coverage_doc`.",
            first_diff + 1,
            actual.lines().nth(first_diff).unwrap_or(""),
            expected.lines().nth(first_diff).unwrap_or("")
        );
    }
}
