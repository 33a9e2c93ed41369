//! ptx2llvm: a PTX → LLVM IR compiler library.
//!
//! Pipeline: `syntax` (lex, parse) → `check` → `lower` → `target::{nvptx, cpu}` → emit/run.
pub mod api;
pub mod attrs;
pub mod capi;
pub mod check;
pub mod isa;
pub mod link;
pub mod llvm;
pub mod lower;
/// The cpu target's runtime library; its sources live in the repository's `runtime/` folder.
#[path = "../runtime/mod.rs"]
pub mod runtime;
pub mod syntax;
pub mod target;
