//! What differs per target. The shared lowering decides what an instruction means and asks the
//! target how to express the target-specific parts: state-space address spaces, special
//! registers, barriers and fences, warp-level operations, trap/exit, kernel conventions and
//! the inline-assembly fallback for instructions with no LLVM equivalent.

use super::{Error, FnState, Lowerer};
use crate::llvm::{BasicValueEnum, FunctionValue};
use crate::syntax::ast::{FnDirective, Instruction};

/// A PTX state space as an address.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Space {
    Generic,
    Global,
    Shared,
    SharedCluster,
    Const,
    Local,
    Param,
}

pub trait Target {
    /// Short name for diagnostics (`nvptx`, `cpu`).
    fn name(&self) -> &'static str;
    /// LLVM address space of a state space.
    fn addr_space(&self, s: Space) -> u16;
    /// Reads a special register (`%tid.x` → name `tid`, component `Some('x')`).
    fn sreg<'c>(&self, l: &Lowerer<'c, '_>, name: &str, comp: Option<char>) -> Option<BasicValueEnum<'c>>;
    /// Marks `f` as a kernel and applies performance directives.
    fn kernel<'c>(&self, l: &Lowerer<'c, '_>, f: FunctionValue<'c>, directives: &[FnDirective]);
    /// Lowers a barrier, fence, warp-level or trap/exit instruction natively; `Ok(false)`
    /// means "not handled here" (the lowering then uses the inline-assembly fallback).
    fn sync_op<'c, 'a>(&self, l: &Lowerer<'c, 'a>, fs: &mut FnState<'c, 'a>, i: &Instruction<'a>) -> Result<bool, Error>;
    /// Whether PTX inline assembly can carry an instruction LLVM has no equivalent for; the
    /// cpu target answers with an error naming the instruction.
    fn inline_asm_ok(&self, i: &Instruction) -> Result<(), Error>;
}
