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

/// The first kernel of `src`, parsed without errors, with the source and module leaked so
/// the kernel lives for `'static` (tests of passes that tie kernels to their source).
#[cfg(test)]
pub(crate) fn leaked_kernel(src: String) -> &'static ast::Function<'static> {
    let src: &'static str = Box::leak(src.into_boxed_str());
    let (m, d) = parse(src);
    assert!(d.is_empty(), "{d:?}");
    let m: &'static ast::Module<'static> = Box::leak(Box::new(m));
    m.items
        .iter()
        .find_map(|i| match i {
            ast::Item::Function(f) if f.kind == ast::FnKind::Entry => Some(&**f),
            _ => None,
        })
        .expect("a kernel")
}
