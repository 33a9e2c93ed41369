//! Every PTX file of the corpus (`tests/corpus/`, written by real compilers and accepted by
//! `ptxas`) must parse without a diagnostic and pass the semantic checks (`check::check`)
//! without a diagnostic. All files are tried and every failure is reported at once.

mod common;

use ptx2llvm::syntax::diag::render_all;

#[test]
fn corpus_parses_and_checks_cleanly() {
    let files = common::corpus_files();
    let mut failures = Vec::new();
    for path in &files {
        let src = common::read(path);
        let name = common::rel(path);
        let (module, diags) = ptx2llvm::syntax::parse(&src);
        if !diags.is_empty() {
            failures.push(format!(
                "{name}: {} parse diagnostic(s):\n{}",
                diags.len(),
                first_lines(&render_all(&diags, &name, &src), 30)
            ));
            continue;
        }
        let diags = ptx2llvm::check::check(&module);
        if !diags.is_empty() {
            failures.push(format!(
                "{name}: {} check diagnostic(s):\n{}",
                diags.len(),
                first_lines(&render_all(&diags, &name, &src), 30)
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} corpus files failed:\n\n{}",
        failures.len(),
        files.len(),
        failures.join("\n")
    );
}

/// The first `n` lines of a rendering (a broken file could otherwise print thousands).
fn first_lines(text: &str, n: usize) -> String {
    let mut out: String = text.lines().take(n).map(|l| format!("    {l}\n")).collect();
    let total = text.lines().count();
    if total > n {
        out.push_str(&format!("    … {} more lines\n", total - n));
    }
    out
}
