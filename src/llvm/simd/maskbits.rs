//! A warp's mask after a uniform branch, tested as bits, folded to the branch's condition
//! (issue 17).
//!
//! A uniform branch leaves the lanes it takes as `select i1 %c, <32 x i1> %m, zeroinitializer`
//! (`emit.rs`, the edge's mask), and the warp engine tests masks as bits: `bitcast` to `i32`,
//! compared with 0 (any lane) or -1 (all lanes: plain rather than masked accesses). Once the
//! CTA function's constant launch mask is inlined, `%m` is all ones, but LLVM keeps the
//! `bitcast` of a vector select (InstCombine does not turn a vector select into a scalar one,
//! `foldBitCastSelect`), so each test stays a `setcc`/`neg`/`kmovd` and a compare, the
//! block's "every lane runs" flag is kept (spilled) across the code it guards, and the masked
//! paths that a taken uniform branch never runs stay in the code: matmul's tile loads, per
//! warp and tile.
//!
//! `bitcast (select i1 %c, A, B)` is `select i1 %c, bitcast A, bitcast B` exactly; with
//! constant A and B the arms fold, and InstCombine, EarlyCSE (the branch's condition known in the
//! blocks it dominates) and SimplifyCFG, run again on the functions changed, make the tests
//! `%c` and drop the paths that cannot run.

use llvm_sys::core as c;
use llvm_sys::prelude::*;
use llvm_sys::{LLVMOpcode as O, LLVMTypeKind};

use super::ir;

/// Rewrites every `bitcast` to an integer of a `select` on a scalar condition between two
/// constant `i1` vectors in the functions of `m`; returns how many.
pub unsafe fn fold(m: LLVMModuleRef) -> usize {
    let cx = c::LLVMGetModuleContext(m);
    let b = c::LLVMCreateBuilderInContext(cx);
    let mut n = 0;
    for f in ir::functions(m) {
        for i in ir::function_instructions(f) {
            if ir::opcode(i) != O::LLVMBitCast {
                continue;
            }
            let to = c::LLVMTypeOf(i);
            if c::LLVMGetTypeKind(to) != LLVMTypeKind::LLVMIntegerTypeKind {
                continue;
            }
            let s = c::LLVMGetOperand(i, 0);
            if c::LLVMIsASelectInst(s).is_null() {
                continue;
            }
            let (cond, t, e) = (
                c::LLVMGetOperand(s, 0),
                c::LLVMGetOperand(s, 1),
                c::LLVMGetOperand(s, 2),
            );
            let scalar =
                c::LLVMGetTypeKind(c::LLVMTypeOf(cond)) == LLVMTypeKind::LLVMIntegerTypeKind;
            let constant = |v: LLVMValueRef| !c::LLVMIsAConstant(v).is_null();
            if !scalar || !constant(t) || !constant(e) {
                continue;
            }
            c::LLVMPositionBuilderBefore(b, i);
            let bt = c::LLVMBuildBitCast(b, t, to, c"".as_ptr());
            let be = c::LLVMBuildBitCast(b, e, to, c"".as_ptr());
            let v = c::LLVMBuildSelect(b, cond, bt, be, c"".as_ptr());
            c::LLVMReplaceAllUsesWith(i, v);
            c::LLVMInstructionEraseFromParent(i);
            n += 1;
        }
    }
    c::LLVMDisposeBuilder(b);
    n
}
