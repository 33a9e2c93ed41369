//! Semantic validation of a parsed module, needing no LLVM: every instruction against the forms
//! of `ptx.isa` (modifiers and operand shapes) and its operands' types against the
//! registers, special registers and constants given (`types.rs`), every name an instruction uses against the
//! declarations in scope (registers, parameters, variables, functions, labels, special
//! registers), labels and branch targets, the `.version`/`.target` header, and the target and
//! PTX ISA version each instruction needs (`target.rs`, from `src/isa/requirements.txt`).
//!
//! Diagnostics are collected, never fatal: each says what was expected, and is rendered at the
//! edge as `FILE:LINE:COL: error: MESSAGE` with a caret under its span.

mod header;
mod instr;
mod names;
mod rules;
mod target;
mod types;

pub use instr::check_instruction;
pub use names::is_special_register;

use crate::syntax::ast::Module;
use crate::syntax::diag::Diagnostic;

/// Stop after this many diagnostics: a wrong file could otherwise produce one per line.
const MAX_DIAGNOSTICS: usize = 200;

/// Validates a module; returns every problem found (empty when the module is valid).
pub fn check(module: &Module<'_>) -> Vec<Diagnostic> {
    let mut diags = Vec::new();
    header::check_header(module, &mut diags);
    names::check_names(module, &target::ModuleTarget::of(module), &mut diags);
    diags.sort_by_key(|d| (d.span.start, d.span.end));
    if diags.len() > MAX_DIAGNOSTICS {
        diags.truncate(MAX_DIAGNOSTICS);
        let span = diags.last().map(|d| d.span).unwrap_or_default();
        diags.push(Diagnostic::new(span, "too many errors; stopping here"));
    }
    diags
}
