//! Semantic validation of a parsed module (placeholder while the form checker is written).

use crate::syntax::ast::Module;
use crate::syntax::diag::Diagnostic;

pub fn check(_module: &Module) -> Vec<Diagnostic> {
    Vec::new()
}
