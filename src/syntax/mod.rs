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
