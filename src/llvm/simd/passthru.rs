//! Guarded loads with a default for the idle lanes: `v = c < n ? x[c] : K`.
//!
//! The warp engine loads a run of consecutive lanes plainly when every lane runs and masked
//! otherwise (`lanes.rs`, `load_runs`), and blends the phi `v` per edge, which `default<O2>`
//! turns into
//!
//! ```text
//! H:        br (bitcast M == -1), ld.full, ld.masked
//! ld.full:  F = load p
//! ld.masked: L = llvm.masked.load(p, M, poison)
//! ld.runs:  P = phi [F, ld.full], [L, ld.masked]
//!           S = select M, P, K
//! ```
//!
//! `M` then lives until the select, which the back end sinks to the uses of `v`: in
//! softmax_warp (32 such loads per lane, all of them live until the row's maximum is known)
//! each load's mask and raw value went to the stack and came back for a blend. InstCombine
//! folds `select M, masked.load(p, M, poison), K` into the load's pass-through operand, but
//! not through the phi. Here the same fold is made through it: on the edge from `ld.full`
//! every lane of `M` is set, so `S` is `F` there; on the edge from `ld.masked` it is
//! `masked.load(p, M, K)`. So `L` takes `K` as its pass-through and `S` becomes `P`, and no
//! mask outlives its load. The lanes `L` had left poison are `K` now, a refinement for any
//! other use of `L` or `P`.
//!
//! Run on the optimized module, before code generation (`target::cpu::build`): the shape
//! exists only after SROA and InstCombine have run on the warp function. `K` must be a
//! constant, which is available at the load.

use llvm_sys::core as c;
use llvm_sys::prelude::*;
use llvm_sys::{LLVMIntPredicate, LLVMOpcode as O};

use super::ir;

/// Folds every select of the shape above in `m`'s functions into its load's pass-through;
/// returns how many it folded.
///
/// # Safety
/// `m` must be a live module.
pub unsafe fn fold(m: LLVMModuleRef) -> usize {
    let mut folded = 0;
    for f in ir::functions(m) {
        for i in ir::function_instructions(f) {
            if ir::opcode(i) == O::LLVMSelect && fold_select(i) {
                folded += 1;
            }
        }
    }
    folded
}

/// `S = select M, P, K` as in the module comment: `L` gets `K` as its pass-through and `S`'s
/// uses take `P`.
unsafe fn fold_select(s: LLVMValueRef) -> bool {
    let mask = c::LLVMGetOperand(s, 0);
    let p = c::LLVMGetOperand(s, 1);
    let k = c::LLVMGetOperand(s, 2);
    if c::LLVMIsAConstant(k).is_null()
        || c::LLVMIsAPHINode(p).is_null()
        || c::LLVMCountIncoming(p) != 2
        || c::LLVMGetTypeKind(c::LLVMTypeOf(mask)) != llvm_sys::LLVMTypeKind::LLVMVectorTypeKind
    {
        return false;
    }
    let (mut full, mut masked) = (None, None);
    for e in 0..2 {
        let v = c::LLVMGetIncomingValue(p, e);
        let from = c::LLVMGetIncomingBlock(p, e);
        if masked.is_none() && is_masked_load_of(v, mask) {
            masked = Some(v);
        } else {
            full = Some(from);
        }
    }
    let (Some(full), Some(load)) = (full, masked) else {
        return false;
    };
    if !only_when_all_set(full, mask) {
        return false;
    }
    // Every other use of `P` with the same mask and default folds too; one with another
    // default keeps its select (the pass-through can be one of them only).
    let pass = c::LLVMGetOperand(load, 2);
    if c::LLVMIsUndef(pass) == 0 && pass != k {
        return false;
    }
    c::LLVMSetOperand(load, 2, k);
    c::LLVMReplaceAllUsesWith(s, p);
    c::LLVMInstructionEraseFromParent(s);
    true
}

/// `v` is `llvm.masked.load(ptr, mask, passthru)` with exactly `mask`.
unsafe fn is_masked_load_of(v: LLVMValueRef, mask: LLVMValueRef) -> bool {
    !c::LLVMIsACallInst(v).is_null()
        && ir::callee(v).starts_with("llvm.masked.load.")
        && c::LLVMGetNumArgOperands(v) == 3
        && c::LLVMGetOperand(v, 1) == mask
}

/// Control reaches `bb` only when every lane of `mask` is set: its one predecessor branches
/// to it on `bitcast mask == -1` (or away from it on `!= -1`).
unsafe fn only_when_all_set(bb: LLVMBasicBlockRef, mask: LLVMValueRef) -> bool {
    // The uses of a block are the terminators that jump to it (phis keep their blocks apart).
    let uses = ir::users(c::LLVMBasicBlockAsValue(bb));
    let [br] = uses[..] else {
        return false;
    };
    if ir::opcode(br) != O::LLVMBr || c::LLVMIsConditional(br) == 0 {
        return false;
    }
    let cond = c::LLVMGetCondition(br);
    if ir::opcode(cond) != O::LLVMICmp {
        return false;
    }
    let (a, b) = (c::LLVMGetOperand(cond, 0), c::LLVMGetOperand(cond, 1));
    let ones = !c::LLVMIsAConstantInt(b).is_null()
        && c::LLVMGetIntTypeWidth(c::LLVMTypeOf(b)) <= 64
        && c::LLVMConstIntGetSExtValue(b) == -1;
    if !ones
        || c::LLVMIsABitCastInst(a).is_null()
        || c::LLVMGetOperand(a, 0) != mask
        || c::LLVMGetSuccessor(br, 0) == c::LLVMGetSuccessor(br, 1)
    {
        return false;
    }
    let taken = match c::LLVMGetICmpPredicate(cond) {
        LLVMIntPredicate::LLVMIntEQ => 0,
        LLVMIntPredicate::LLVMIntNE => 1,
        _ => return false,
    };
    c::LLVMGetSuccessor(br, taken) == bb
}
