//! Fuzz target: the front end on arbitrary bytes (decoded UTF-8-lossy). Parsing, checking,
//! rendering diagnostics and the printer must never panic, every diagnostic span must lie
//! inside the input on character boundaries, and a module that parses cleanly must print to
//! text that parses cleanly and prints the same again.
#![no_main]

use libfuzzer_sys::fuzz_target;
use ptx2llvm::syntax::diag::Diagnostic;
use ptx2llvm::syntax::printer::print_module;

fn check_spans(src: &str, diags: &[Diagnostic]) {
    for d in diags {
        let (s, e) = (d.span.start as usize, d.span.end as usize);
        assert!(
            s <= e && e <= src.len(),
            "span {s}..{e} outside the input ({} bytes): {}",
            src.len(),
            d.message
        );
        assert!(
            src.is_char_boundary(s) && src.is_char_boundary(e),
            "span {s}..{e} off a char boundary: {}",
            d.message
        );
        let _ = d.render("fuzz.ptx", src);
    }
}

fuzz_target!(|data: &[u8]| {
    let src = String::from_utf8_lossy(data);
    let (module, diags) = ptx2llvm::syntax::parse(&src);
    check_spans(&src, &diags);
    if !diags.is_empty() {
        return;
    }
    check_spans(&src, &ptx2llvm::check::check(&module));
    let text = print_module(&module);
    let (again, diags) = ptx2llvm::syntax::parse(&text);
    assert!(
        diags.is_empty(),
        "printed text does not parse:\n{}\n{text}",
        ptx2llvm::syntax::diag::render_all(&diags, "printed.ptx", &text)
    );
    assert_eq!(print_module(&again), text, "printing is not a fixpoint");
});
