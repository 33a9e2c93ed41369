//! PTX `max.f32`/`min.f32` (`llvm.maximumnum`/`llvm.minimumnum`) as one `vrangeps` per 16
//! lanes on an AVX-512DQ host (issue 17).
//!
//! The x86 back end lowers a vector `maximumnum` as six instructions in one dependency
//! chain: a sign test and two blends that order -0.0 below +0.0, `vmaxps`, and a NaN test and
//! blend that take the other operand where the result is a NaN. Triton's softmax spends a
//! quarter of its time in those chains (its row maximum). `vrangeps` with imm8 5 (max) or 4
//! (min), sign from the compared operand, does it in one instruction: it orders -0.0 below
//! +0.0, and a quiet NaN operand yields the other operand (SDM, VRANGEPS special cases;
//! measured on Zen 4, which `lit/cpu/run-range-minmax.ptx` checks on every engine). Two
//! differences remain, both about NaNs:
//! - a signalling NaN operand yields that NaN, quieted, where `maximumnum` gives the other
//!   operand: so an operand that may be a signalling NaN is first quieted by `vrangeps(x,
//!   x)` (the same value, a signalling NaN quieted), unless it comes from arithmetic, which
//!   never yields one (the tree's inner results, shuffles of them);
//! - two NaN operands give the first, quieted, where `maximumnum` gives some quiet NaN: the
//!   lowering's canonicalization of the result, or its proof that only arithmetic sees it
//!   (`nan.rs`), already makes every NaN alike.
//!
//! The fold runs on the optimized module, on vectors of 16k lanes (the warp functions').

use std::collections::HashMap;

use llvm_sys::core as c;
use llvm_sys::prelude::*;
use llvm_sys::{LLVMOpcode as O, LLVMTypeKind};

use super::ir;

/// How far `quiet` looks through the operands of shuffles, selects and phis.
const DEPTH: u32 = 8;

/// `vrangeps`' imm8: bits 1:0 select max (01) or min (00), bits 3:2 (01) take the sign of
/// the selected operand.
const IMM_MAX: u64 = 5;
const IMM_MIN: u64 = 4;

/// Whether `v` (a float vector) is never a signalling NaN: results of arithmetic, and
/// shuffles, selects and phis of such values, and constants without NaN lanes.
unsafe fn quiet(v: LLVMValueRef, depth: u32) -> bool {
    if !c::LLVMIsAConstant(v).is_null() {
        if !c::LLVMIsAUndefValue(v).is_null() {
            return true;
        }
        let n = match c::LLVMGetTypeKind(c::LLVMTypeOf(v)) {
            LLVMTypeKind::LLVMVectorTypeKind => c::LLVMGetVectorSize(c::LLVMTypeOf(v)),
            _ => return false,
        };
        return (0..n).all(|k| {
            let e = c::LLVMGetAggregateElement(v, k);
            if e.is_null() {
                return false;
            }
            if !c::LLVMIsAUndefValue(e).is_null() {
                return true;
            }
            if c::LLVMIsAConstantFP(e).is_null() {
                return false;
            }
            let mut loses = 0;
            !c::LLVMConstRealGetDouble(e, &mut loses).is_nan()
        });
    }
    if !ir::is_instruction(v) || depth == 0 {
        return false;
    }
    let all = |ops: &[LLVMValueRef]| ops.iter().all(|&o| quiet(o, depth - 1));
    match ir::opcode(v) {
        O::LLVMFAdd
        | O::LLVMFSub
        | O::LLVMFMul
        | O::LLVMFDiv
        | O::LLVMFRem
        | O::LLVMSIToFP
        | O::LLVMUIToFP
        | O::LLVMFPTrunc
        | O::LLVMFPExt => true,
        O::LLVMCall => {
            let n = ir::callee(v);
            [
                "llvm.fma.",
                "llvm.fmuladd.",
                "llvm.sqrt.",
                "llvm.maximumnum.",
                "llvm.minimumnum.",
                "llvm.x86.avx512.mask.range.ps.",
                "llvm.x86.avx512.mask.scalef.ps.",
            ]
            .iter()
            .any(|p| n.starts_with(p))
        }
        O::LLVMShuffleVector => all(&[c::LLVMGetOperand(v, 0), c::LLVMGetOperand(v, 1)]),
        O::LLVMSelect => all(&[c::LLVMGetOperand(v, 1), c::LLVMGetOperand(v, 2)]),
        O::LLVMPHI => {
            let ops: Vec<LLVMValueRef> = (0..c::LLVMCountIncoming(v))
                .map(|k| c::LLVMGetIncomingValue(v, k))
                .filter(|&o| o != v)
                .collect();
            all(&ops)
        }
        _ => false,
    }
}

struct Fold {
    b: LLVMBuilderRef,
    range: LLVMValueRef,
    fty: LLVMTypeRef,
    i16t: LLVMTypeRef,
    i32t: LLVMTypeRef,
    v16: LLVMTypeRef,
    /// Quieted copies of operands, built once after their definition.
    quieted: HashMap<LLVMValueRef, LLVMValueRef>,
}

impl Fold {
    /// `vrangeps(a, b, imm)` per 16 lanes, concatenated back to the lanes of `a`.
    unsafe fn ranges(&self, a: LLVMValueRef, bv: LLVMValueRef, imm: u64) -> LLVMValueRef {
        let lanes = c::LLVMGetVectorSize(c::LLVMTypeOf(a));
        let mut parts = Vec::new();
        for k in 0..lanes / 16 {
            let mut args = [
                ir::lanes16(self.b, a, k),
                ir::lanes16(self.b, bv, k),
                c::LLVMConstInt(self.i32t, imm, 0),
                c::LLVMGetPoison(self.v16),
                c::LLVMConstInt(self.i16t, 0xffff, 0),
                // _MM_FROUND_CUR_DIRECTION: exceptions as the environment says.
                c::LLVMConstInt(self.i32t, 4, 0),
            ];
            parts.push(c::LLVMBuildCall2(
                self.b,
                self.fty,
                self.range,
                args.as_mut_ptr(),
                6,
                c"".as_ptr(),
            ));
        }
        ir::concat(self.b, parts)
    }

    /// `v`, or a copy that is never a signalling NaN (`vrangeps(v, v)`), built right after
    /// `v`'s definition so every use may take it; `at` is the use, where a constant's copy
    /// goes.
    unsafe fn quieted(&mut self, v: LLVMValueRef, at: LLVMValueRef) -> LLVMValueRef {
        if quiet(v, DEPTH) {
            return v;
        }
        if let Some(&q) = self.quieted.get(&v) {
            return q;
        }
        if !ir::is_instruction(v) {
            c::LLVMPositionBuilderBefore(self.b, at);
            return self.ranges(v, v, IMM_MAX);
        }
        let mut next = c::LLVMGetNextInstruction(v);
        while !next.is_null() && ir::opcode(next) == O::LLVMPHI {
            next = c::LLVMGetNextInstruction(next);
        }
        c::LLVMPositionBuilderBefore(self.b, next);
        let q = self.ranges(v, v, IMM_MAX);
        self.quieted.insert(v, q);
        q
    }
}

/// Rewrites `llvm.maximumnum`/`llvm.minimumnum` of f32 vectors of 16k lanes as `vrangeps`
/// per 16 lanes, operands that may be signalling NaNs quieted first; returns how many.
///
/// # Safety
/// `m` is a live module for a host with AVX-512F and AVX-512DQ.
pub unsafe fn fold(m: LLVMModuleRef) -> usize {
    let cx = c::LLVMGetModuleContext(m);
    let f32t = c::LLVMFloatTypeInContext(cx);
    let v16 = c::LLVMVectorType(f32t, 16);
    let i16t = c::LLVMInt16TypeInContext(cx);
    let i32t = c::LLVMInt32TypeInContext(cx);
    let name = c"llvm.x86.avx512.mask.range.ps.512";
    let mut params = [v16, v16, i32t, v16, i16t, i32t];
    let fty = c::LLVMFunctionType(v16, params.as_mut_ptr(), 6, 0);
    let mut n = 0;
    for f in ir::functions(m) {
        let found: Vec<(LLVMValueRef, u64)> = ir::function_instructions(f)
            .into_iter()
            .filter_map(|i| {
                if ir::opcode(i) != O::LLVMCall {
                    return None;
                }
                let callee = ir::callee(i);
                let imm = if callee.starts_with("llvm.maximumnum.v") {
                    IMM_MAX
                } else if callee.starts_with("llvm.minimumnum.v") {
                    IMM_MIN
                } else {
                    return None;
                };
                let t = c::LLVMTypeOf(i);
                (c::LLVMGetElementType(t) == f32t
                    && c::LLVMGetVectorSize(t).is_multiple_of(16)
                    && (c::LLVMGetVectorSize(t) / 16).is_power_of_two())
                .then_some((i, imm))
            })
            .collect();
        if !found.is_empty() {
            let range = match c::LLVMGetNamedFunction(m, name.as_ptr()) {
                g if !g.is_null() => g,
                _ => c::LLVMAddFunction(m, name.as_ptr(), fty),
            };
            let mut fold = Fold {
                b: c::LLVMCreateBuilderInContext(cx),
                range,
                fty,
                i16t,
                i32t,
                v16,
                quieted: HashMap::new(),
            };
            for &(i, imm) in &found {
                let a = fold.quieted(c::LLVMGetOperand(i, 0), i);
                let bv = fold.quieted(c::LLVMGetOperand(i, 1), i);
                c::LLVMPositionBuilderBefore(fold.b, i);
                let r = fold.ranges(a, bv, imm);
                c::LLVMReplaceAllUsesWith(i, r);
                c::LLVMInstructionEraseFromParent(i);
                n += 1;
            }
            c::LLVMDisposeBuilder(fold.b);
        }
    }
    n
}
