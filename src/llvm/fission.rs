//! LLVM helpers of the cpu target's thread-loop code generation (`target::cpu::fission`): what
//! inkwell lacks or makes verbose for it.

use inkwell::values::AsValueRef as _;
use llvm_sys::core as c;

pub use inkwell::values::{CallSiteValue, InstructionOpcode, InstructionValue};

use super::{enum_attr, AttributeLoc, BasicBlock, Context, FunctionValue};

/// Name of the string function attribute that tells the module rewrite which parameter of a
/// function is the base of the CTA's shared memory.
pub const SHARED_ARG_ATTR: &str = "ptx2llvm-shared-arg";

/// Marks parameter `index` of `f` as the shared-memory base.
pub fn set_shared_arg(ctx: &Context, f: FunctionValue, index: u32) {
    let a = ctx.create_string_attribute(SHARED_ARG_ATTR, &index.to_string());
    f.add_attribute(AttributeLoc::Function, a);
}

/// The shared-memory base parameter of `f`, if marked.
pub fn shared_arg(f: FunctionValue) -> Option<u32> {
    let a = f.get_string_attribute(AttributeLoc::Function, SHARED_ARG_ATTR)?;
    a.get_string_value().to_str().ok()?.parse().ok()
}

/// Adds the enum attribute `name` to a call site (`alwaysinline`, `noinline`).
pub fn call_site_attr(ctx: &Context, cs: CallSiteValue, name: &str) {
    cs.add_attribute(AttributeLoc::Function, enum_attr(ctx, name, 0));
}

/// Adds the enum attribute `name` to parameter `index` of `f` (`noalias`, `nocapture`).
pub fn param_attr(ctx: &Context, f: FunctionValue, index: u32, name: &str) {
    f.add_attribute(AttributeLoc::Param(index), enum_attr(ctx, name, 0));
}

/// Removes the terminator of `bb` when it is `unreachable`; returns whether it did.
pub fn drop_unreachable(bb: BasicBlock) -> bool {
    match bb.get_terminator() {
        Some(t) if t.get_opcode() == InstructionOpcode::Unreachable => {
            t.erase_from_basic_block();
            true
        }
        _ => false,
    }
}

/// Removes the terminator of `bb`.
pub fn drop_terminator(bb: BasicBlock) {
    if let Some(t) = bb.get_terminator() {
        t.erase_from_basic_block();
    }
}

/// The function of a module rewrite's raw function value.
pub fn raw_shared_arg(f: llvm_sys::prelude::LLVMValueRef) -> Option<u32> {
    unsafe {
        let key = SHARED_ARG_ATTR;
        let a = c::LLVMGetStringAttributeAtIndex(
            f,
            u32::MAX,
            key.as_ptr() as *const std::ffi::c_char,
            key.len() as u32,
        );
        if a.is_null() {
            return None;
        }
        let mut len = 0u32;
        let p = c::LLVMGetStringAttributeValue(a, &mut len);
        let s =
            std::str::from_utf8(std::slice::from_raw_parts(p as *const u8, len as usize)).ok()?;
        s.parse().ok()
    }
}

/// Raw value of a function (for the module rewrite).
pub fn raw_fn(f: FunctionValue) -> llvm_sys::prelude::LLVMValueRef {
    f.as_value_ref()
}

/// The target of the unconditional branch ending `bb`.
pub fn branch_target<'c>(bb: BasicBlock<'c>) -> Option<BasicBlock<'c>> {
    let t = bb.get_terminator()?;
    if t.get_opcode() != InstructionOpcode::Br || t.get_num_operands() != 1 {
        return None;
    }
    match t.get_operand(0)? {
        inkwell::values::Operand::Block(b) => Some(b),
        _ => None,
    }
}
