//! The canonical printer (`ptx2llvm fmt`) over the whole corpus: for every file, the printed
//! text parses without a diagnostic, printing is a fixpoint (`print(parse(print(m))) ==
//! print(m)`), re-parsing the printed text gives the same AST as the original up to spans, and
//! NVIDIA's `ptxas` accepts the printed text (when it is installed; a loud note otherwise).

mod common;

use std::path::Path;
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use ptx2llvm::syntax::ast::Module;
use ptx2llvm::syntax::diag::render_all;
use ptx2llvm::syntax::printer::print_module;

/// The AST's `Debug` text with every `Span { start: N, end: M }` replaced by `Span`: two
/// modules are equal modulo spans exactly when these strings are equal (every other field,
/// names, opcodes, modifiers, values, nesting, takes part in the comparison).
fn structure(m: &Module) -> String {
    strip_spans(&format!("{m:?}"))
}

fn strip_spans(debug: &str) -> String {
    const OPEN: &str = "Span { start: ";
    let mut out = String::with_capacity(debug.len());
    let mut rest = debug;
    while let Some(i) = rest.find(OPEN) {
        out.push_str(&rest[..i]);
        let after = &rest[i + OPEN.len()..];
        let close = after.find(" }").unwrap_or_else(|| {
            panic!(
                "malformed Span in Debug output near `{}`",
                &rest[i..(i + 60).min(rest.len())]
            )
        });
        let inner = &after[..close];
        assert!(
            inner.split(", end: ").count() == 2
                && inner
                    .split(", end: ")
                    .all(|n| n.bytes().all(|b| b.is_ascii_digit())),
            "unexpected Span Debug form `{OPEN}{inner} }}`"
        );
        out.push_str("Span");
        rest = &after[close + 2..];
    }
    out.push_str(rest);
    out
}

/// Where two strings first differ, with some context from each, for failure messages.
fn first_difference(a: &str, b: &str) -> String {
    let i = a.bytes().zip(b.bytes()).take_while(|(x, y)| x == y).count();
    let window = |s: &str| {
        let mut lo = i.saturating_sub(120);
        while !s.is_char_boundary(lo) {
            lo -= 1;
        }
        let mut hi = (i + 120).min(s.len());
        while !s.is_char_boundary(hi) {
            hi += 1;
        }
        s[lo..hi].to_string()
    };
    format!(
        "first difference at byte {i}:\n  left:  …{}…\n  right: …{}…",
        window(a),
        window(b)
    )
}

#[test]
fn span_stripping_really_compares_structure() {
    let a = "Label(\"x\", Span { start: 1, end: 2 }) Int { value: 3, span: Span { start: 10, end: 12 } }";
    let b =
        "Label(\"x\", Span { start: 7, end: 9 }) Int { value: 3, span: Span { start: 0, end: 0 } }";
    assert_eq!(strip_spans(a), strip_spans(b));
    let c = "Label(\"y\", Span { start: 1, end: 2 }) Int { value: 3, span: Span { start: 10, end: 12 } }";
    assert_ne!(strip_spans(a), strip_spans(c));
    // And on real modules: a changed operand is a different structure, a moved one is not.
    let src1 = ".version 8.0\n.target sm_80\n.address_size 64\n.entry k()\n{\n\tret;\n}\n";
    let src2 = ".version 8.0\n.target sm_80\n\n\n.address_size 64\n.entry   k( )\n{ ret; }\n";
    let src3 = ".version 8.0\n.target sm_80\n.address_size 64\n.entry j()\n{\n\tret;\n}\n";
    let (m1, d1) = ptx2llvm::syntax::parse(src1);
    let (m2, d2) = ptx2llvm::syntax::parse(src2);
    let (m3, d3) = ptx2llvm::syntax::parse(src3);
    assert!(d1.is_empty() && d2.is_empty() && d3.is_empty());
    assert_ne!(format!("{m1:?}"), format!("{m2:?}"), "the spans differ");
    assert_eq!(structure(&m1), structure(&m2));
    assert_ne!(structure(&m1), structure(&m3));
}

#[test]
fn corpus_fmt_round_trips() {
    let files = common::corpus_files();
    let mut failures = Vec::new();
    // (corpus path, printed text, arch) for the ptxas pass.
    let mut printed = Vec::new();
    for path in &files {
        let name = common::rel(path);
        let src = common::read(path);
        let (m, diags) = ptx2llvm::syntax::parse(&src);
        if !diags.is_empty() {
            failures.push(format!(
                "{name}: the original does not parse (see corpus_check)"
            ));
            continue;
        }
        let text1 = print_module(&m);
        let ok = round_trip(&name, &m, &text1, &mut failures);
        if ok {
            printed.push(Printed {
                name,
                text: text1,
                target: module_target(&m),
            });
        }
    }
    match common::find_ptxas() {
        Some(ptxas) => failures.extend(ptxas_accepts(&ptxas, &printed)),
        None => eprintln!(
            "\n\
             ********************************************************************************\n\
             NOTE: ptxas not found (set PTXAS, or run scripts/setup.sh to install it into\n\
             .venv/): the check that ptxas accepts `ptx2llvm fmt` output was SKIPPED.\n\
             ********************************************************************************\n"
        ),
    }
    assert!(
        failures.is_empty(),
        "{} problem(s) over {} corpus files:\n\n{}",
        failures.len(),
        files.len(),
        failures.join("\n\n")
    );
}

/// One corpus file's printed text, for the ptxas pass.
struct Printed {
    name: String,
    text: String,
    /// The module's own `sm_XX` target.
    target: String,
}

/// Checks that `text1 = print(m)` parses cleanly, is a printing fixpoint and has `m`'s
/// structure; records failures and returns whether the text parsed.
fn round_trip(name: &str, m: &Module, text1: &str, failures: &mut Vec<String>) -> bool {
    {
        let (m2, diags) = ptx2llvm::syntax::parse(text1);
        if !diags.is_empty() {
            let shown: String = render_all(&diags, &format!("fmt({name})"), text1)
                .lines()
                .take(24)
                .map(|l| format!("    {l}\n"))
                .collect();
            failures.push(format!(
                "{name}: the printed text has {} parse error(s):\n{shown}",
                diags.len()
            ));
            return false;
        }
        let text2 = print_module(&m2);
        if text1 != text2 {
            failures.push(format!(
                "{name}: printing is not a fixpoint (print(parse(print(m))) != print(m)); {}",
                first_difference(text1, &text2)
            ));
        }
        let (s1, s2) = (structure(m), structure(&m2));
        if s1 != s2 {
            failures.push(format!(
                "{name}: the AST of the printed text differs from the original's (modulo spans); {}",
                first_difference(&s1, &s2)
            ));
        }
    }
    true
}

/// The module's first `sm_XX` target (`sm_75` when it names none).
fn module_target(m: &Module) -> String {
    m.target
        .iter()
        .find(|t| t.starts_with("sm_"))
        .map_or_else(|| "sm_75".to_string(), |t| t.to_string())
}

/// The `-arch` for ptxas: the module's target, raised to sm_75 (the oldest that ptxas 13
/// supports).
fn ptxas_arch(target: &str) -> String {
    let digits: String = target[3..]
        .chars()
        .take_while(char::is_ascii_digit)
        .collect();
    match digits.parse::<u32>() {
        Ok(n) if n < 75 => "sm_75".to_string(),
        _ => target.to_string(),
    }
}

/// Runs `ptxas -c -arch=…` on every printed module, two at a time; returns the failures.
fn ptxas_accepts(ptxas: &Path, printed: &[Printed]) -> Vec<String> {
    let dir = tempfile::tempdir().expect("temporary directory");
    for p in printed {
        let arch = ptxas_arch(&p.target);
        if arch != p.target {
            eprintln!(
                "note: {}: `.target {}` is older than ptxas 13 supports; assembling for {arch}",
                p.name, p.target
            );
        }
    }
    let next = AtomicUsize::new(0);
    let failures = Mutex::new(Vec::new());
    std::thread::scope(|s| {
        for _ in 0..2 {
            s.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(p) = printed.get(i) else {
                    break;
                };
                let arch = ptxas_arch(&p.target);
                let file = dir
                    .path()
                    .join(format!("{i:03}-{}", p.name.replace('/', "_")));
                std::fs::write(&file, &p.text).expect("write the printed module");
                let out = Command::new(ptxas)
                    .arg("-c")
                    .arg(format!("-arch={arch}"))
                    .arg(&file)
                    .arg("-o")
                    .arg(file.with_extension("cubin"))
                    .output()
                    .unwrap_or_else(|e| panic!("cannot run {}: {e}", ptxas.display()));
                if !out.status.success() {
                    let log: String = String::from_utf8_lossy(&out.stderr)
                        .lines()
                        .take(20)
                        .map(|l| format!("    {l}\n"))
                        .collect();
                    failures.lock().unwrap().push(format!(
                        "{}: ptxas -c -arch={arch} rejects the fmt output ({}):\n{log}",
                        p.name, out.status
                    ));
                }
            });
        }
    });
    let mut f = failures.into_inner().unwrap();
    f.sort();
    f
}
