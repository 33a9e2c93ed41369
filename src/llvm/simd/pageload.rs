//! Masked vector loads as plain loads where the vector lies in one 4 KiB piece of a page
//! (issue 17), in the optimized module as code generation gets it.
//!
//! The warp engine loads a consecutive run of lanes with a plain vector load when every lane
//! runs and with `llvm.masked.load` when some do not (`lanes.rs`, `load_runs`): the last,
//! partial iteration of a warp-strided loop (`for (k = start + lane; k < end; k += 32)`), a
//! grid's tail. Here such a masked load, when its mask is not a constant and it has no
//! pass-through value (poison: `passthru.rs` has given the loads with a default theirs), is
//! split at run time: when some lane runs and the vector's bytes lie in one 4 KiB piece
//! (lane 0's pointer at most `4096 - size` past a multiple of 4096), a plain load of the whole
//! vector; else the masked load, as before. Only loads of a whole warp's 32 lanes of 4 bytes
//! (`WARP`).
//!
//! Why it is exact: a running lane reads an address in that piece, hence in that page, which
//! is mapped and readable (page protection is per page) unless that lane's read faults, and
//! then the masked load faults there too (the plain load's fault is in the same page; the
//! runtime attributes faults by replaying the CTA thread by thread, where each lane's load
//! is again in that piece or a masked load). The lanes that do not run get the bytes there
//! where the masked load gave poison; no lane's value is stored back. A racing write to
//! another lane's bytes makes only those bytes undefined (LLVM's memory model is per byte).
//! A 128-byte vector at a 128-byte boundary never crosses a 4 KiB one; at another offset it
//! crosses about once in 32, and keeps the masked load there.
//!
//! spmv_warp (a warp per CSR row, the row's last iteration partial) loads `col[k]`, whose
//! lanes index the `x[col[k]]` gather, and `val[k]` masked in every row; plain there, the
//! kernel's CPU time per launch fell to x0.983 (6 alternated pairs; x0.985 for a first
//! version that split the loads as the warp function was emitted, which changed the IR that
//! the passes over CTA memory and load defaults match, hence this pass after them). Output
//! bit-identical; bitonic (its compare-exchange steps load masked) level (3 pairs).

use llvm_sys::core as c;
use llvm_sys::prelude::*;
use llvm_sys::LLVMIntPredicate as P;

use super::ir;

/// The size of the pieces of a page that the test checks (the smallest page size).
const PIECE: u64 = 4096;

/// The loads split: lanes and bytes of a whole warp's run of 4-byte elements, the shape of
/// a warp-strided loop's loads. Why not the 16-lane runs of 2D blocks (conv3x3's halo rows,
/// matmul's tiles, loaded masked in their hot loops): split as well, conv3x3 ran x1.0 to
/// x1.13 slower in CPU time per launch (3 pairs on a loaded machine).
const WARP: (u32, u64) = (32, 128);

/// Splits every such masked load of `m`; returns how many.
///
/// # Safety
/// `m` is a live module.
pub unsafe fn fold(m: LLVMModuleRef) -> usize {
    let td = llvm_sys::target::LLVMGetModuleDataLayout(m);
    let mut done = 0;
    for f in ir::functions(m) {
        let loads: Vec<(LLVMValueRef, u64)> = ir::function_instructions(f)
            .into_iter()
            .filter_map(|i| candidate(td, i).map(|bytes| (i, bytes)))
            .collect();
        for (ld, bytes) in loads {
            split(ld, bytes);
            done += 1;
        }
    }
    done
}

/// The vector's size in bytes when `i` is a masked load to split: a mask that is not a
/// constant, a poison or undefined pass-through, one warp's 32 lanes of 4 bytes (`WARP`).
unsafe fn candidate(td: llvm_sys::target::LLVMTargetDataRef, i: LLVMValueRef) -> Option<u64> {
    if c::LLVMIsACallInst(i).is_null() || !ir::callee(i).starts_with("llvm.masked.load.") {
        return None;
    }
    let (mask, pass) = (c::LLVMGetOperand(i, 1), c::LLVMGetOperand(i, 2));
    if !c::LLVMIsAConstant(mask).is_null() || c::LLVMIsUndef(pass) == 0 {
        return None;
    }
    let t = c::LLVMTypeOf(i);
    let bytes = llvm_sys::target::LLVMStoreSizeOfType(td, t);
    (c::LLVMGetVectorSize(t) == WARP.0 && bytes == WARP.1).then_some(bytes)
}

/// Moves the instructions after `at` into a new block `name` placed after `at`'s, which the
/// phis of its successors then name; returns it.
pub(super) unsafe fn split_after(at: LLVMValueRef, name: &std::ffi::CStr) -> LLVMBasicBlockRef {
    let bb = c::LLVMGetInstructionParent(at);
    let cx = c::LLVMGetTypeContext(c::LLVMTypeOf(at));
    let f = c::LLVMGetBasicBlockParent(bb);
    let tail = c::LLVMAppendBasicBlockInContext(cx, f, name.as_ptr());
    c::LLVMMoveBasicBlockAfter(tail, bb);
    let b = c::LLVMCreateBuilderInContext(cx);
    c::LLVMPositionBuilderAtEnd(b, tail);
    let mut i = c::LLVMGetNextInstruction(at);
    while !i.is_null() {
        let next = c::LLVMGetNextInstruction(i);
        c::LLVMInstructionRemoveFromParent(i);
        c::LLVMInsertIntoBuilder(b, i);
        i = next;
    }
    c::LLVMDisposeBuilder(b);
    let term = c::LLVMGetBasicBlockTerminator(tail);
    for k in 0..c::LLVMGetNumSuccessors(term) {
        for p in ir::instructions(c::LLVMGetSuccessor(term, k)) {
            if c::LLVMIsAPHINode(p).is_null() {
                break;
            }
            if (0..c::LLVMCountIncoming(p)).any(|e| c::LLVMGetIncomingBlock(p, e) == bb) {
                rename_incoming(p, bb, tail);
            }
        }
    }
    tail
}

/// Phi `p` with its incoming block `old` named `new` (rebuilt: the C API cannot set it).
unsafe fn rename_incoming(p: LLVMValueRef, old: LLVMBasicBlockRef, new: LLVMBasicBlockRef) {
    let b = c::LLVMCreateBuilderInContext(c::LLVMGetTypeContext(c::LLVMTypeOf(p)));
    c::LLVMPositionBuilderBefore(b, p);
    let q = c::LLVMBuildPhi(b, c::LLVMTypeOf(p), c"".as_ptr());
    for e in 0..c::LLVMCountIncoming(p) {
        let mut v = c::LLVMGetIncomingValue(p, e);
        let mut from = c::LLVMGetIncomingBlock(p, e);
        if from == old {
            from = new;
        }
        c::LLVMAddIncoming(q, &mut v, &mut from, 1);
    }
    c::LLVMDisposeBuilder(b);
    c::LLVMReplaceAllUsesWith(p, q);
    c::LLVMInstructionEraseFromParent(p);
}

/// `bb: ...; %v = masked.load(p, m, poison); rest` becomes
/// `bb: ...; br (m != 0 && p % PIECE <= PIECE - bytes), plain, masked`,
/// `plain: load p`, `masked: masked.load(p, m, poison)`, `join: phi; rest`.
unsafe fn split(ld: LLVMValueRef, bytes: u64) {
    let cx = c::LLVMGetTypeContext(c::LLVMTypeOf(ld));
    let n = c"".as_ptr();
    let bb = c::LLVMGetInstructionParent(ld);
    let f = c::LLVMGetBasicBlockParent(bb);
    let (p, mask) = (c::LLVMGetOperand(ld, 0), c::LLVMGetOperand(ld, 1));
    let vt = c::LLVMTypeOf(ld);
    let join = split_after(ld, c"page.join");
    let plain_bb = c::LLVMAppendBasicBlockInContext(cx, f, c"page.plain".as_ptr());
    let masked_bb = c::LLVMAppendBasicBlockInContext(cx, f, c"page.masked".as_ptr());
    c::LLVMMoveBasicBlockAfter(plain_bb, bb);
    c::LLVMMoveBasicBlockAfter(masked_bb, plain_bb);
    let b = c::LLVMCreateBuilderInContext(cx);
    // The test, where the load was (`bb` ends with it now).
    c::LLVMPositionBuilderBefore(b, ld);
    let lanes = c::LLVMGetVectorSize(c::LLVMTypeOf(mask));
    let bits_t = c::LLVMIntTypeInContext(cx, lanes);
    let bits = c::LLVMBuildBitCast(b, mask, bits_t, n);
    let any = c::LLVMBuildICmp(b, P::LLVMIntNE, bits, c::LLVMConstNull(bits_t), n);
    let i64t = c::LLVMInt64TypeInContext(cx);
    let at = c::LLVMBuildPtrToInt(b, p, i64t, n);
    let off = c::LLVMBuildAnd(b, at, c::LLVMConstInt(i64t, PIECE - 1, 0), n);
    let fits = c::LLVMBuildICmp(
        b,
        P::LLVMIntULE,
        off,
        c::LLVMConstInt(i64t, PIECE - bytes, 0),
        n,
    );
    let ok = c::LLVMBuildAnd(b, any, fits, n);
    c::LLVMInstructionRemoveFromParent(ld);
    c::LLVMPositionBuilderAtEnd(b, bb);
    c::LLVMBuildCondBr(b, ok, plain_bb, masked_bb);
    c::LLVMPositionBuilderAtEnd(b, plain_bb);
    let pv = c::LLVMBuildLoad2(b, vt, p, n);
    c::LLVMSetAlignment(pv, 1);
    c::LLVMBuildBr(b, join);
    c::LLVMPositionBuilderAtEnd(b, masked_bb);
    c::LLVMInsertIntoBuilder(b, ld);
    c::LLVMBuildBr(b, join);
    // The join's phi before the moved instructions, which use it in `ld`'s place.
    c::LLVMPositionBuilderBefore(b, c::LLVMGetFirstInstruction(join));
    let phi = c::LLVMBuildPhi(b, vt, n);
    c::LLVMDisposeBuilder(b);
    c::LLVMReplaceAllUsesWith(ld, phi);
    let (mut vals, mut blocks) = ([pv, ld], [plain_bb, masked_bb]);
    c::LLVMAddIncoming(phi, vals.as_mut_ptr(), blocks.as_mut_ptr(), 2);
}
