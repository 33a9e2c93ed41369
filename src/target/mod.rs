//! Targets: each implements `lower::Target` and a driver entry `compile`.
//! `nvptx` produces IR for LLVM's NVPTX back end; `cpu` host code run by `crate::runtime`.

pub mod cpu;
pub mod nvptx;
