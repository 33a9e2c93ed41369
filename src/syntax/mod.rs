//! The syntax layer: lexer, parser, AST, spans and diagnostics. It depends on nothing but the
//! generated instruction-set enums (`crate::isa`) — never on LLVM — and is usable on its own.

pub mod ast;
pub mod consteval;
pub mod diag;
pub mod lexer;
pub mod parser;
pub mod printer;
pub mod span;

pub use parser::parse;

/// `f` of the first kernel of `src`, parsed without errors (tests of passes over kernels).
#[cfg(test)]
pub(crate) fn with_kernel<R>(src: &str, f: impl FnOnce(&ast::Function) -> R) -> R {
    let (m, d) = parse(src);
    assert!(d.is_empty(), "{d:?}");
    let k = m
        .items
        .iter()
        .find_map(|i| match i {
            ast::Item::Function(f) if f.kind == ast::FnKind::Entry => Some(&**f),
            _ => None,
        })
        .expect("a kernel");
    f(k)
}
