//! Lanes no one reads, across blocks (issue 17): a `shfl.down` tree whose result only lane 0
//! stores (spmv_warp's `if (lane == 0) y[r] = s`).
//!
//! The warp engine builds a full-warp shuffle as a `shufflevector` of all 32 lanes (lanes
//! past the end keep their own value) and merges the whole-warp and partial-warp paths with
//! phis; the final add and the one-lane store are in a later block. InstCombine's demanded
//! lanes stop at a value with two uses (each tree step's sum feeds the next add and the next
//! shuffle), and code generation sees one block at a time, so each `phi` operand is a live
//! 32-lane value: the five steps of both paths ran on two zmm each, with `vpermi2pd`
//! and constant-pool loads, where lane 0's result needs 16, 8, 4, 2 and 1 lanes (the same
//! additions in the same order).
//!
//! `fold` computes, for each vector instruction of up to 64 lanes, the lanes some use reads
//! (the least fixpoint over its uses: an `extractelement` of a constant lane, a shuffle's
//! mask, lane-wise arithmetic, compares, casts, selects and intrinsics, phis, a
//! `masked.store` of a constant mask; any other use reads every lane). It then gives a
//! shuffle's unread lanes a poison mask element, and a phi that reads only some lanes gets
//! each incoming value through a shuffle that keeps those lanes (at the end of the incoming
//! block): inside that block code generation then sees which lanes count and narrows the
//! tree (`vextractf64x4`, `vextractf128`, `vshufpd`, `vmovshdup`). Only unread lanes become
//! poison, so no result a program can see changes.

use std::collections::HashMap;

use llvm_sys::core as c;
use llvm_sys::prelude::*;
use llvm_sys::{LLVMOpcode as O, LLVMTypeKind};

use super::ir;

/// The widest vector (lanes) the lane sets track.
const MAX_LANES: u32 = 64;

/// Lanes of vector type `t`, when it is a vector the lane sets track.
unsafe fn lanes(t: LLVMTypeRef) -> Option<u32> {
    (c::LLVMGetTypeKind(t) == LLVMTypeKind::LLVMVectorTypeKind)
        .then(|| c::LLVMGetVectorSize(t))
        .filter(|&k| k <= MAX_LANES)
}

fn all(k: u32) -> u64 {
    if k >= 64 {
        u64::MAX
    } else {
        (1u64 << k) - 1
    }
}

/// The lanes of `v` (`k` lanes) that user `u` reads through its operand `op`, given the
/// lanes of `u` read so far (`read`).
unsafe fn read_through(u: LLVMValueRef, op: u32, k: u32, read: &HashMap<LLVMValueRef, u64>) -> u64 {
    let whole = all(k);
    let same = |w: LLVMValueRef| -> u64 {
        if lanes(c::LLVMTypeOf(w)) == Some(k) {
            read.get(&w).copied().unwrap_or(0)
        } else {
            whole
        }
    };
    if c::LLVMIsAInstruction(u).is_null() {
        return whole;
    }
    match ir::opcode(u) {
        O::LLVMExtractElement => match ir::const_u64(c::LLVMGetOperand(u, 1)) {
            Some(e) if op == 0 && e < u64::from(k) => 1 << e,
            _ => whole,
        },
        O::LLVMShuffleVector => {
            let Some(&r) = read.get(&u) else {
                return whole;
            };
            let mut bits = 0u64;
            for j in 0..c::LLVMGetNumMaskElements(u) {
                if r >> j & 1 == 0 {
                    continue;
                }
                let e = c::LLVMGetMaskValue(u, j);
                if e < 0 {
                    continue;
                }
                let e = e as u32;
                if op == 0 && e < k {
                    bits |= 1 << e;
                } else if op == 1 && e >= k && e < 2 * k {
                    bits |= 1 << (e - k);
                }
            }
            bits
        }
        O::LLVMFNeg
        | O::LLVMAdd
        | O::LLVMFAdd
        | O::LLVMSub
        | O::LLVMFSub
        | O::LLVMMul
        | O::LLVMFMul
        | O::LLVMUDiv
        | O::LLVMSDiv
        | O::LLVMFDiv
        | O::LLVMURem
        | O::LLVMSRem
        | O::LLVMFRem
        | O::LLVMShl
        | O::LLVMLShr
        | O::LLVMAShr
        | O::LLVMAnd
        | O::LLVMOr
        | O::LLVMXor
        | O::LLVMICmp
        | O::LLVMFCmp
        | O::LLVMSelect
        | O::LLVMPHI
        | O::LLVMFreeze => same(u),
        op_ if ir::lanewise_cast(op_) || op_ == O::LLVMBitCast => same(u),
        O::LLVMCall => {
            let callee = ir::callee(u);
            if callee.starts_with("llvm.masked.store.") && op == 0 {
                let m = c::LLVMGetOperand(u, 2);
                if c::LLVMIsAConstant(m).is_null() {
                    return whole;
                }
                let mut bits = 0u64;
                for j in 0..k {
                    let e = c::LLVMGetAggregateElement(m, j);
                    if e.is_null() || ir::const_u64(e) != Some(0) {
                        bits |= 1 << j;
                    }
                }
                bits
            } else if ir::lanewise_intrinsic(&callee) && op < c::LLVMGetNumArgOperands(u) {
                same(u)
            } else {
                whole
            }
        }
        _ => whole,
    }
}

/// The lanes each vector instruction of `f` has read (the least fixpoint).
unsafe fn read_lanes(f: LLVMValueRef) -> HashMap<LLVMValueRef, u64> {
    let vs: Vec<(LLVMValueRef, u32)> = ir::function_instructions(f)
        .into_iter()
        .filter_map(|i| lanes(c::LLVMTypeOf(i)).map(|k| (i, k)))
        .collect();
    let mut read: HashMap<LLVMValueRef, u64> = vs.iter().map(|&(v, _)| (v, 0)).collect();
    loop {
        let mut changed = false;
        // Uses come after definitions mostly, so a backward sweep settles in few rounds.
        for &(v, k) in vs.iter().rev() {
            let mut bits = read[&v];
            let mut u = c::LLVMGetFirstUse(v);
            while !u.is_null() && bits != all(k) {
                let user = c::LLVMGetUser(u);
                let nops = c::LLVMGetNumOperands(user).max(0) as u32;
                for op in (0..nops).filter(|&o| c::LLVMGetOperand(user, o) == v) {
                    bits |= read_through(user, op, k, &read);
                }
                u = c::LLVMGetNextUse(u);
            }
            if bits != read[&v] {
                read.insert(v, bits);
                changed = true;
            }
        }
        if !changed {
            return read;
        }
    }
}

/// Whether vector type `t` has lanes of at most 32 bits. A phi of 64-bit lanes is in the
/// warp functions a vector of addresses whose lane 0 some access extracts; keeping lane 0
/// alone there bought nothing and moved softmax_warp's registers (CPU x1.01).
unsafe fn narrow_lanes(t: LLVMTypeRef) -> bool {
    let e = c::LLVMGetElementType(t);
    match c::LLVMGetTypeKind(e) {
        LLVMTypeKind::LLVMIntegerTypeKind => c::LLVMGetIntTypeWidth(e) <= 32,
        LLVMTypeKind::LLVMFloatTypeKind | LLVMTypeKind::LLVMHalfTypeKind => true,
        _ => false,
    }
}

/// Whether `v` is a shuffle that puts one source lane in every lane.
unsafe fn splat(v: LLVMValueRef) -> bool {
    if c::LLVMIsAShuffleVectorInst(v).is_null() {
        return false;
    }
    let e0 = c::LLVMGetMaskValue(v, 0);
    (0..c::LLVMGetNumMaskElements(v)).all(|j| c::LLVMGetMaskValue(v, j) == e0)
}

/// A shuffle mask constant: lane `j` takes `e(j)`, or poison where `None`.
unsafe fn mask(cx: LLVMContextRef, k: u32, e: impl Fn(u32) -> Option<u32>) -> LLVMValueRef {
    let i32t = c::LLVMInt32TypeInContext(cx);
    let mut m: Vec<LLVMValueRef> = (0..k)
        .map(|j| match e(j) {
            Some(x) => c::LLVMConstInt(i32t, u64::from(x), 0),
            None => c::LLVMGetPoison(i32t),
        })
        .collect();
    c::LLVMConstVector(m.as_mut_ptr(), k)
}

/// Gives unread lanes poison in the warp functions of `m` (see the module comment); returns
/// how many shuffles and phis changed.
///
/// # Safety
/// `m` must be a valid module.
pub unsafe fn fold(m: LLVMModuleRef) -> usize {
    let cx = c::LLVMGetModuleContext(m);
    let b = c::LLVMCreateBuilderInContext(cx);
    let n = c"".as_ptr();
    let mut changed = 0;
    for f in ir::functions(m) {
        if !ir::name(f).contains(".simd") || c::LLVMCountBasicBlocks(f) == 0 {
            continue;
        }
        let read = read_lanes(f);
        for i in ir::function_instructions(f) {
            let Some(k) = lanes(c::LLVMTypeOf(i)) else {
                continue;
            };
            let r = read[&i];
            if r == all(k) || r == 0 {
                continue;
            }
            // A splat's lanes are one broadcast however many are read; dropping lanes of it
            // only moved softmax_warp's registers (and its frame by 64 bytes).
            if splat(i) {
                continue;
            }
            if ir::opcode(i) == O::LLVMShuffleVector {
                let keep = |j: u32| {
                    let e = c::LLVMGetMaskValue(i, j);
                    (r >> j & 1 == 1 && e >= 0).then_some(e as u32)
                };
                if (0..k).all(|j| keep(j).is_some() || c::LLVMGetMaskValue(i, j) < 0) {
                    continue;
                }
                c::LLVMPositionBuilderBefore(b, i);
                let s = c::LLVMBuildShuffleVector(
                    b,
                    c::LLVMGetOperand(i, 0),
                    c::LLVMGetOperand(i, 1),
                    mask(cx, k, keep),
                    n,
                );
                c::LLVMReplaceAllUsesWith(i, s);
                c::LLVMInstructionEraseFromParent(i);
                changed += 1;
            } else if ir::opcode(i) == O::LLVMPHI
                && narrow_lanes(c::LLVMTypeOf(i))
                && (0..c::LLVMCountIncoming(i)).any(|e| {
                    let x = c::LLVMGetIncomingValue(i, e);
                    c::LLVMIsAConstant(x).is_null() && !splat(x)
                })
            {
                let keep = mask(cx, k, |j| (r >> j & 1 == 1).then_some(j));
                // One shuffle per incoming block: a block that branches here twice (a
                // switch) must give the phi one value.
                let mut made: HashMap<LLVMBasicBlockRef, LLVMValueRef> = HashMap::new();
                for e in 0..c::LLVMCountIncoming(i) {
                    let x = c::LLVMGetIncomingValue(i, e);
                    if c::LLVMIsAInstruction(x).is_null() {
                        continue;
                    }
                    let from = c::LLVMGetIncomingBlock(i, e);
                    let s = *made.entry(from).or_insert_with(|| {
                        c::LLVMPositionBuilderBefore(b, c::LLVMGetBasicBlockTerminator(from));
                        let poison = c::LLVMGetPoison(c::LLVMTypeOf(x));
                        c::LLVMBuildShuffleVector(b, x, poison, keep, n)
                    });
                    c::LLVMSetOperand(i, e, s);
                }
                changed += 1;
            }
        }
    }
    c::LLVMDisposeBuilder(b);
    changed
}
