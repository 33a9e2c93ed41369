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

use crate::isa::decoded::Decoded;
use crate::syntax::ast::{InstrId, Instruction, Module};
use crate::syntax::diag::Diagnostic;

/// Stop after this many diagnostics: a wrong file could otherwise produce one per line.
const MAX_DIAGNOSTICS: usize = 200;

/// What the check learnt about a module, for the stages after it: every instruction decoded
/// against its form of `ptx.isa` (`isa::decoded::Decoded`: the matched form and its modifiers,
/// typed), indexed by the instruction's `InstrId`. The lowering reads instructions only through
/// this, so that what `check` accepts and what translation understands are the same decoding.
#[derive(Debug, Default, Clone)]
pub struct ModuleInfo {
    decoded: Vec<Option<Decoded>>,
}

impl ModuleInfo {
    /// The decoding of `i` by the check; `None` for an instruction the check rejected or never
    /// saw (one a later stage built: `InstrId::SYNTHETIC`).
    pub fn decoded(&self, i: &Instruction<'_>) -> Option<&Decoded> {
        let d = self.decoded.get(i.id.0 as usize)?.as_ref()?;
        // A copy of a parsed instruction keeps its number; one with other modifiers must not.
        debug_assert!(d.opcode() == i.opcode && d.mods.len() == i.mods.len());
        Some(d)
    }

    fn record(&mut self, id: InstrId, d: Decoded) {
        if id == InstrId::SYNTHETIC {
            return;
        }
        let at = id.0 as usize;
        if self.decoded.len() <= at {
            self.decoded.resize(at + 1, None);
        }
        self.decoded[at] = Some(d);
    }

    /// How many instructions have a decoding.
    pub fn decoded_count(&self) -> usize {
        self.decoded.iter().filter(|d| d.is_some()).count()
    }
}

/// Validates a module; returns every problem found (empty when the module is valid).
pub fn check(module: &Module<'_>) -> Vec<Diagnostic> {
    check_module(module).1
}

/// Validates a module: what the later stages need to know about it (meaningful when the
/// module is valid), and every problem found (empty when the module is valid).
pub fn check_module(module: &Module<'_>) -> (ModuleInfo, Vec<Diagnostic>) {
    let mut diags = Vec::new();
    let mut info = ModuleInfo::default();
    header::check_header(module, &mut diags);
    names::check_names(
        module,
        &target::ModuleTarget::of(module),
        &mut diags,
        &mut info,
    );
    diags.sort_by_key(|d| (d.span.start, d.span.end));
    if diags.len() > MAX_DIAGNOSTICS {
        diags.truncate(MAX_DIAGNOSTICS);
        let span = diags.last().map(|d| d.span).unwrap_or_default();
        diags.push(Diagnostic::new(span, "too many errors; stopping here"));
    }
    (info, diags)
}
