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

/// Adds the enum attribute `name` to function `f` (`noinline`).
pub fn fn_attr(ctx: &Context, f: FunctionValue, name: &str) {
    f.add_attribute(AttributeLoc::Function, enum_attr(ctx, name, 0));
}

/// Whether parameter `index` of `f` has the enum attribute `name`.
pub fn has_param_attr(f: FunctionValue, index: u32, name: &str) -> bool {
    f.get_enum_attribute(
        AttributeLoc::Param(index),
        inkwell::attributes::Attribute::get_named_enum_kind_id(name),
    )
    .is_some()
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
    // SAFETY: `f` is a live function; the attribute key is passed with its length.
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

/// Leaves of the `add` tree of `v` (values that are not `add` instructions).
unsafe fn add_terms(
    v: llvm_sys::prelude::LLVMValueRef,
    out: &mut Vec<llvm_sys::prelude::LLVMValueRef>,
    depth: u32,
) {
    if depth < 16
        && !c::LLVMIsAInstruction(v).is_null()
        && c::LLVMGetInstructionOpcode(v) == llvm_sys::LLVMOpcode::LLVMAdd
    {
        add_terms(c::LLVMGetOperand(v, 0), out, depth + 1);
        add_terms(c::LLVMGetOperand(v, 1), out, depth + 1);
    } else {
        out.push(v);
    }
}

/// How likely a leaf of an address sum is its base pointer: kernel parameters and values
/// loaded from memory or converted from pointers are; arithmetic is not.
unsafe fn base_rank(v: llvm_sys::prelude::LLVMValueRef) -> u32 {
    if !c::LLVMIsAArgument(v).is_null() {
        return 3;
    }
    if c::LLVMIsAInstruction(v).is_null() {
        return 0;
    }
    match c::LLVMGetInstructionOpcode(v) {
        llvm_sys::LLVMOpcode::LLVMPtrToInt => 3,
        llvm_sys::LLVMOpcode::LLVMLoad => 2,
        llvm_sys::LLVMOpcode::LLVMPHI | llvm_sys::LLVMOpcode::LLVMCall => 1,
        _ => 0,
    }
}

/// Rewrites every `inttoptr(a + b + …)` in `f` whose sum has a base-like term into
/// `getelementptr i8, inttoptr(base), (the other terms)`: PTX computes addresses with integer
/// arithmetic, and loop analyses (vectorization across threads) understand a loop-invariant
/// base pointer plus an offset, not an integer converted to a pointer.
pub fn gep_addresses(ctx: &Context, f: FunctionValue) {
    // SAFETY: `f` is a live function of a module of `ctx`; the rewrite replaces instructions inside it with equivalent GEPs made in the same context.
    unsafe {
        let cx = ctx.raw();
        let i8t = c::LLVMInt8TypeInContext(cx);
        let b = c::LLVMCreateBuilderInContext(cx);
        let fv = f.as_value_ref();
        let mut work = Vec::new();
        let mut bb = c::LLVMGetFirstBasicBlock(fv);
        while !bb.is_null() {
            let mut i = c::LLVMGetFirstInstruction(bb);
            while !i.is_null() {
                if c::LLVMGetInstructionOpcode(i) == llvm_sys::LLVMOpcode::LLVMIntToPtr {
                    work.push(i);
                }
                i = c::LLVMGetNextInstruction(i);
            }
            bb = c::LLVMGetNextBasicBlock(bb);
        }
        for i in work {
            let v = c::LLVMGetOperand(i, 0);
            let mut terms = Vec::new();
            add_terms(v, &mut terms, 0);
            if terms.len() < 2 {
                continue;
            }
            let (k, rank) = terms
                .iter()
                .enumerate()
                .map(|(k, &t)| (k, base_rank(t)))
                .max_by_key(|&(k, r)| (r, std::cmp::Reverse(k)))
                .unwrap_or((0, 0));
            if rank == 0 {
                continue;
            }
            let base = terms.remove(k);
            c::LLVMPositionBuilderBefore(b, i);
            let pty = c::LLVMTypeOf(i);
            let bp = c::LLVMBuildIntToPtr(b, base, pty, c"".as_ptr());
            let mut off = terms[0];
            for &t in &terms[1..] {
                off = c::LLVMBuildAdd(b, off, t, c"".as_ptr());
            }
            let mut idx = [off];
            let g = c::LLVMBuildGEP2(b, i8t, bp, idx.as_mut_ptr(), 1, c"".as_ptr());
            c::LLVMReplaceAllUsesWith(i, g);
            c::LLVMInstructionEraseFromParent(i);
        }
        c::LLVMDisposeBuilder(b);
    }
}

/// Sets LLVM command-line options once per process (`-name=value` strings).
pub fn set_llvm_options(opts: &[&str]) {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| parse_llvm_options(opts));
}

/// Hands `opts` (`-name=value` strings) to LLVM's command-line parser. Process-wide; an option
/// may be given once per process, so each caller guards its own set with a `Once`.
pub fn parse_llvm_options(opts: &[&str]) {
    let mut args: Vec<std::ffi::CString> = vec![c"ptx2llvm".to_owned()];
    args.extend(opts.iter().filter_map(|o| std::ffi::CString::new(*o).ok()));
    let ptrs: Vec<*const std::ffi::c_char> = args.iter().map(|a| a.as_ptr()).collect();
    // SAFETY: `ptrs` points to NUL-terminated strings that outlive the call; LLVM copies what
    // it keeps.
    unsafe {
        llvm_sys::support::LLVMParseCommandLineOptions(
            ptrs.len() as i32,
            ptrs.as_ptr(),
            std::ptr::null(),
        )
    };
}

/// Marks the 32-bit arithmetic of `v` (adds, subtracts, shifts and multiplications, through
/// `depth` levels) as not overflowing signed (`nsw`).
unsafe fn mark_nsw(v: llvm_sys::prelude::LLVMValueRef, depth: u32) {
    if depth == 0 || c::LLVMIsAInstruction(v).is_null() {
        return;
    }
    use llvm_sys::LLVMOpcode::*;
    match c::LLVMGetInstructionOpcode(v) {
        LLVMAdd | LLVMSub | LLVMMul | LLVMShl => {
            c::LLVMSetNSW(v, 1);
            mark_nsw(c::LLVMGetOperand(v, 0), depth - 1);
            mark_nsw(c::LLVMGetOperand(v, 1), depth - 1);
        }
        _ => {}
    }
}

/// `idx` (an i64 offset) rebuilt at `b` with its `zext`s of 32-bit offsets as `sext`s of
/// `nsw` arithmetic, through `add`s of constants (`[%r+64]`), or None when it has no such
/// form.
unsafe fn signed_offset(
    b: llvm_sys::prelude::LLVMBuilderRef,
    idx: llvm_sys::prelude::LLVMValueRef,
    depth: u32,
) -> Option<llvm_sys::prelude::LLVMValueRef> {
    if depth == 0 || c::LLVMIsAInstruction(idx).is_null() {
        return None;
    }
    if !c::LLVMIsAZExtInst(idx).is_null() {
        let x = c::LLVMGetOperand(idx, 0);
        if c::LLVMGetIntTypeWidth(c::LLVMTypeOf(x)) != 32 {
            return None;
        }
        mark_nsw(x, 8);
        return Some(c::LLVMBuildSExt(b, x, c::LLVMTypeOf(idx), c"".as_ptr()));
    }
    if c::LLVMGetInstructionOpcode(idx) == llvm_sys::LLVMOpcode::LLVMAdd {
        let (x, k) = (c::LLVMGetOperand(idx, 0), c::LLVMGetOperand(idx, 1));
        let (x, k) = if c::LLVMIsAConstantInt(k).is_null() {
            (k, x)
        } else {
            (x, k)
        };
        if c::LLVMIsAConstantInt(k).is_null() {
            return None;
        }
        let s = signed_offset(b, x, depth - 1)?;
        return Some(c::LLVMBuildNSWAdd(b, s, k, c"".as_ptr()));
    }
    None
}

/// Shared-memory addresses are 32-bit offsets from the CTA's shared block, computed with
/// wrapping 32-bit arithmetic; as `base + zext(offset)` loop analyses cannot see them as
/// affine in the thread index. Valid offsets are below 2^31 (at most 227 KiB), so in the
/// step function `f` whose parameter `shared` is the base, every `gep base, zext(x)` (plus
/// constants) becomes `gep base, sext(x)` with the arithmetic of `x` marked `nsw`.
pub fn shared_offsets(f: FunctionValue, shared: u32) {
    // SAFETY: `f` is a live function and `shared` one of its parameters (the callers' contract); only its instructions' operands and flags change.
    unsafe {
        let fv = f.as_value_ref();
        let base = c::LLVMGetParam(fv, shared);
        let mut u = c::LLVMGetFirstUse(base);
        let mut geps = Vec::new();
        while !u.is_null() {
            let user = c::LLVMGetUser(u);
            if !c::LLVMIsAGetElementPtrInst(user).is_null() && c::LLVMGetNumOperands(user) == 2 {
                geps.push(user);
            }
            u = c::LLVMGetNextUse(u);
        }
        let b = c::LLVMCreateBuilderInContext(c::LLVMGetTypeContext(c::LLVMTypeOf(fv)));
        for g in geps {
            let idx = c::LLVMGetOperand(g, 1);
            c::LLVMPositionBuilderBefore(b, g);
            if let Some(s) = signed_offset(b, idx, 4) {
                c::LLVMSetOperand(g, 1, s);
            }
        }
        c::LLVMDisposeBuilder(b);
    }
}
