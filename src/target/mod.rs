//! Targets: each implements `lower::Target` and a driver entry `compile`.
//! `nvptx` produces IR for LLVM's NVPTX back end; the `cpu` target is to come.

pub mod nvptx;
