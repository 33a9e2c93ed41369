//! Part of a vector taken as a wide integer, back to a shuffle (issue 17).
//!
//! GVN hands a stored `<32 x float>` to a later load of its first 16, 8 or 4 floats as a
//! `bitcast` of the vector to `<2 x i512>` (`<4 x i256>`, `<8 x i128>`), an
//! `extractelement` of one of those integers and a `bitcast` of it back to floats: a halving
//! tree's one-warp steps (`s[t] += s[t + k]` for k = 16, 8, 4, 2, whose loads read what the
//! step before stored). Code generation has no register for such an integer and takes it
//! apart 64 bits at a time: each step's half became about forty `vmovq`, `shr`, `vmovd` and
//! `vinsertps` instead of one `vextractf64x4` (reduce_halving: a fifth of the kernel's time
//! in the tree's tail). `fold` turns each such pair of bitcasts back into the
//! `shufflevector` that takes those lanes, which InstCombine would canonicalize again, so it
//! runs after the last InstCombine.

use llvm_sys::core as c;
use llvm_sys::prelude::*;
use llvm_sys::{LLVMOpcode as O, LLVMTypeKind};

use super::ir;

/// Integers at least this wide have no register (wider than a general one).
const WIDE: u32 = 128;

/// Bits of a scalar type (integers and the float types), `None` for others.
unsafe fn bits(t: LLVMTypeRef) -> Option<u32> {
    use LLVMTypeKind as K;
    match c::LLVMGetTypeKind(t) {
        K::LLVMIntegerTypeKind => Some(c::LLVMGetIntTypeWidth(t)),
        K::LLVMHalfTypeKind | K::LLVMBFloatTypeKind => Some(16),
        K::LLVMFloatTypeKind => Some(32),
        K::LLVMDoubleTypeKind => Some(64),
        _ => None,
    }
}

/// Rewrites `bitcast (extractelement (bitcast V to <K x iM>), i) to <L x T>` (V a vector of
/// `K * L` elements of type `T` or of another type as wide, M >= 128, `i` a constant) into
/// `shufflevector V, poison, <i*L, ..., i*L + L - 1>` (bitcast to `<L x T>` when the types
/// differ) in every function of `m`; returns how many.
pub unsafe fn fold(m: LLVMModuleRef) -> usize {
    let cx = c::LLVMGetModuleContext(m);
    let b = c::LLVMCreateBuilderInContext(cx);
    let i32t = c::LLVMInt32TypeInContext(cx);
    let mut n = 0;
    for f in ir::functions(m) {
        for i in ir::function_instructions(f) {
            if ir::opcode(i) != O::LLVMBitCast {
                continue;
            }
            let to = c::LLVMTypeOf(i);
            let e = c::LLVMGetOperand(i, 0);
            if c::LLVMGetTypeKind(to) != LLVMTypeKind::LLVMVectorTypeKind
                || c::LLVMIsAExtractElementInst(e).is_null()
            {
                continue;
            }
            let (wide, idx) = (c::LLVMGetOperand(e, 0), c::LLVMGetOperand(e, 1));
            let Some(idx) = ir::const_u64(idx) else {
                continue;
            };
            if c::LLVMIsABitCastInst(wide).is_null() {
                continue;
            }
            let v = c::LLVMGetOperand(wide, 0);
            let (vt, wt) = (c::LLVMTypeOf(v), c::LLVMTypeOf(wide));
            if c::LLVMGetTypeKind(vt) != LLVMTypeKind::LLVMVectorTypeKind {
                continue;
            }
            let (ve, te) = (c::LLVMGetElementType(vt), c::LLVMGetElementType(to));
            if ve != te && (bits(ve).is_none() || bits(ve) != bits(te)) {
                continue;
            }
            let we = c::LLVMGetElementType(wt);
            if c::LLVMGetTypeKind(we) != LLVMTypeKind::LLVMIntegerTypeKind
                || c::LLVMGetIntTypeWidth(we) < WIDE
            {
                continue;
            }
            let (nv, k, l) = (
                c::LLVMGetVectorSize(vt) as u64,
                c::LLVMGetVectorSize(wt) as u64,
                c::LLVMGetVectorSize(to) as u64,
            );
            if k * l != nv || idx >= k {
                continue;
            }
            let mut mask: Vec<LLVMValueRef> = (idx * l..(idx + 1) * l)
                .map(|x| c::LLVMConstInt(i32t, x, 0))
                .collect();
            c::LLVMPositionBuilderBefore(b, i);
            let s = c::LLVMBuildShuffleVector(
                b,
                v,
                c::LLVMGetPoison(vt),
                c::LLVMConstVector(mask.as_mut_ptr(), l as u32),
                c"".as_ptr(),
            );
            // Lanes of another type of the same width (the `<16 x i32>` of a shared load's
            // `b32` words from stored floats): the shuffle's lanes bitcast.
            let s = if ve == te {
                s
            } else {
                c::LLVMBuildBitCast(b, s, to, c"".as_ptr())
            };
            c::LLVMReplaceAllUsesWith(i, s);
            // The extract and the wide bitcast may be left without uses; code generation
            // drops them (erased here, one listed later in `function_instructions` would be
            // visited after it was freed).
            c::LLVMInstructionEraseFromParent(i);
            n += 1;
        }
    }
    c::LLVMDisposeBuilder(b);
    n
}
