//! `ex2.approx.f32`'s scaling by `2^n` as one `vscalefps` of the float `n` (issue 17).
//!
//! On an AVX-512 host `fp::exp2_f32` scales its polynomial `p` with `llvm.ldexp(p,
//! freeze(fptosi(n)))`, `n = roundeven(c)` of the input clamped to [-160, 130]. The x86 back
//! end lowers `ldexp` as `vscalefps` of the exponent converted back to a float, so each 16
//! lanes pay a `vcvttps2dq` and a `vcvtdq2ps` to get `n` again (softmax_warp: 64 of each per
//! row). `vscalefps(p, n)` multiplies by `2^floor(n)` with the same single rounding, and `n`
//! is an integer in [-160, 130] there, or a NaN: then `f = c - n` and the polynomial `p` built
//! from it by fused multiply-adds are NaNs too, so both forms give a NaN (the caller's
//! canonicalization decides which bits a use sees). The fold checks that shape in the
//! optimized module, where the warp engine made `n` a vector of 16 lanes or a multiple.

use llvm_sys::core as c;
use llvm_sys::prelude::*;
use llvm_sys::{LLVMOpcode as O, LLVMRealPredicate as P, LLVMTypeKind};

use super::ir;

/// How far `propagates` looks for `n` among the operands of `p`'s arithmetic.
const DEPTH: u32 = 16;

/// The float value of a splat constant vector (or scalar constant).
unsafe fn splat(v: LLVMValueRef) -> Option<f64> {
    let one = |e: LLVMValueRef| {
        if e.is_null() || c::LLVMIsAConstantFP(e).is_null() {
            return None;
        }
        let mut loses = 0;
        Some(c::LLVMConstRealGetDouble(e, &mut loses))
    };
    if c::LLVMGetTypeKind(c::LLVMTypeOf(v)) != LLVMTypeKind::LLVMVectorTypeKind {
        return one(v);
    }
    if c::LLVMIsAConstant(v).is_null() {
        return None;
    }
    let n = c::LLVMGetVectorSize(c::LLVMTypeOf(v));
    let x = one(c::LLVMGetAggregateElement(v, 0))?;
    for k in 1..n {
        let y = one(c::LLVMGetAggregateElement(v, k))?;
        if y.to_bits() != x.to_bits() {
            return None;
        }
    }
    Some(x)
}

/// Whether `v` is `x` clamped by a select to a finite bound on the side `pred` tests
/// (`x pred K ? K : x`, `pred` ordered): then `v` is within that bound or a NaN. Returns `x`.
unsafe fn clamped(v: LLVMValueRef, pred: P) -> Option<(LLVMValueRef, f64)> {
    if !ir::is_instruction(v) || ir::opcode(v) != O::LLVMSelect {
        return None;
    }
    let (cond, k, x) = (
        c::LLVMGetOperand(v, 0),
        c::LLVMGetOperand(v, 1),
        c::LLVMGetOperand(v, 2),
    );
    if c::LLVMIsAFCmpInst(cond).is_null() || c::LLVMGetFCmpPredicate(cond) != pred {
        return None;
    }
    let bound = splat(k).filter(|b| b.is_finite())?;
    (c::LLVMGetOperand(cond, 0) == x && splat(c::LLVMGetOperand(cond, 1)) == Some(bound))
        .then_some((x, bound))
}

/// Whether `n` is an integer in i32's range or a NaN: `roundeven` of a value clamped from
/// both sides (`exp2_f32`'s clamp to [-160, 130]).
unsafe fn small_integer(n: LLVMValueRef) -> bool {
    if !ir::is_instruction(n) || ir::opcode(n) != O::LLVMCall {
        return false;
    }
    if !ir::callee(n).starts_with("llvm.roundeven.") {
        return false;
    }
    let c0 = c::LLVMGetOperand(n, 0);
    let limit = 2f64.powi(31) - 1.0;
    let within = |b: f64| b.abs() < limit;
    match clamped(c0, P::LLVMRealOGT) {
        Some((x, hi)) => clamped(x, P::LLVMRealOLT).is_some_and(|(_, lo)| within(lo) && within(hi)),
        None => clamped(c0, P::LLVMRealOLT).is_some_and(|(x, lo)| {
            clamped(x, P::LLVMRealOGT).is_some_and(|(_, hi)| within(lo) && within(hi))
        }),
    }
}

/// Whether `p` is a NaN wherever `n` is: `n` reaches `p` through operands of arithmetic that
/// gives a NaN for any NaN operand.
unsafe fn propagates(p: LLVMValueRef, n: LLVMValueRef, depth: u32) -> bool {
    if p == n {
        return true;
    }
    if depth == 0 || !ir::is_instruction(p) {
        return false;
    }
    let ops: u32 = match ir::opcode(p) {
        O::LLVMFAdd | O::LLVMFSub | O::LLVMFMul => 2,
        O::LLVMFNeg => 1,
        O::LLVMCall
            if ir::callee(p).starts_with("llvm.fma.")
                || ir::callee(p).starts_with("llvm.fmuladd.") =>
        {
            3
        }
        _ => return false,
    };
    (0..ops).any(|k| propagates(c::LLVMGetOperand(p, k), n, depth - 1))
}

/// Rewrites `ldexp(p, freeze(fptosi(n)))` of f32 vectors of 16k lanes as `vscalefps(p, n)`
/// per 16 lanes where `n` is a small integer or a NaN and a NaN `n` makes `p` one; returns
/// how many.
///
/// # Safety
/// `m` is a live module for an AVX-512 host.
pub unsafe fn fold(m: LLVMModuleRef) -> usize {
    let cx = c::LLVMGetModuleContext(m);
    let f32t = c::LLVMFloatTypeInContext(cx);
    let v16 = c::LLVMVectorType(f32t, 16);
    let i16t = c::LLVMInt16TypeInContext(cx);
    let i32t = c::LLVMInt32TypeInContext(cx);
    let name = c"llvm.x86.avx512.mask.scalef.ps.512";
    let mut params = [v16, v16, v16, i16t, i32t];
    let fty = c::LLVMFunctionType(v16, params.as_mut_ptr(), 5, 0);
    let mut n = 0;
    for f in ir::functions(m) {
        let mut found = Vec::new();
        for i in ir::function_instructions(f) {
            if ir::opcode(i) != O::LLVMCall || !ir::callee(i).starts_with("llvm.ldexp.v") {
                continue;
            }
            let t = c::LLVMTypeOf(i);
            if c::LLVMGetTypeKind(t) != LLVMTypeKind::LLVMVectorTypeKind
                || c::LLVMGetElementType(t) != f32t
                || !c::LLVMGetVectorSize(t).is_multiple_of(16)
                || !(c::LLVMGetVectorSize(t) / 16).is_power_of_two()
            {
                continue;
            }
            let (p, e) = (c::LLVMGetOperand(i, 0), c::LLVMGetOperand(i, 1));
            let e = if ir::is_instruction(e) && ir::opcode(e) == O::LLVMFreeze {
                c::LLVMGetOperand(e, 0)
            } else {
                e
            };
            if !ir::is_instruction(e) || ir::opcode(e) != O::LLVMFPToSI {
                continue;
            }
            let x = c::LLVMGetOperand(e, 0);
            if small_integer(x) && propagates(p, x, DEPTH) {
                found.push((i, p, x, c::LLVMGetOperand(i, 1), e));
            }
        }
        if !found.is_empty() {
            let scalef = match c::LLVMGetNamedFunction(m, name.as_ptr()) {
                g if !g.is_null() => g,
                _ => c::LLVMAddFunction(m, name.as_ptr(), fty),
            };
            let b = c::LLVMCreateBuilderInContext(cx);
            for &(i, p, x, frozen, conv) in &found {
                c::LLVMPositionBuilderBefore(b, i);
                let lanes = c::LLVMGetVectorSize(c::LLVMTypeOf(i));
                let mut parts = Vec::new();
                for k in 0..lanes / 16 {
                    let mut args = [
                        ir::lanes16(b, p, k),
                        ir::lanes16(b, x, k),
                        c::LLVMGetPoison(v16),
                        c::LLVMConstInt(i16t, 0xffff, 0),
                        // _MM_FROUND_CUR_DIRECTION: the environment's rounding, to nearest.
                        c::LLVMConstInt(i32t, 4, 0),
                    ];
                    parts.push(c::LLVMBuildCall2(
                        b,
                        fty,
                        scalef,
                        args.as_mut_ptr(),
                        5,
                        c"".as_ptr(),
                    ));
                }
                c::LLVMReplaceAllUsesWith(i, ir::concat(b, parts));
                c::LLVMInstructionEraseFromParent(i);
                // The exponent's conversion (and its freeze) when nothing else reads it.
                let dead: &[LLVMValueRef] = if frozen == conv {
                    &[conv]
                } else {
                    &[frozen, conv]
                };
                for &v in dead {
                    if c::LLVMGetFirstUse(v).is_null() {
                        c::LLVMInstructionEraseFromParent(v);
                    }
                }
                n += 1;
            }
            c::LLVMDisposeBuilder(b);
        }
    }
    n
}
