//! The GPU-NaN selects of a wide vector's parts as one select of the vector (issue 17).
//!
//! A warp's `ld.v4.f32` is one `<128 x float>` load split into four `<32 x float>` members by
//! shuffles, and its `st.v4.f32` interleaves four members back. Between them, each member's
//! arithmetic ends in the GPU's NaN (`select (fcmp uno x, 0), NaN, x`, kept where a store sees
//! the bits). InstCombine moves the arithmetic above the shuffles (`fadd` of two
//! deinterleaved loads is a deinterleaved `fadd` of the loads), but not the selects, so the x86
//! back end deinterleaves, blends and interleaves again: a grid-stride float4 add spent 40
//! permutes and spills per 512 bytes of each array (`vecadd_f4`).
//!
//! A select of this shape commutes with a shuffle: for every lane `k`,
//! `isnan(v[M[k]]) ? NaN : v[M[k]]` is lane `M[k]` of `isnan(v) ? NaN : v` (a poison lane of
//! `M` is poison both ways). So `select (fcmp uno (shuffle v, w, M), 0), NaN, (shuffle v, w,
//! M)` becomes `shuffle (select v), M` (one source `v`, whose lanes such selects
//! of its shuffles cover: else the select of a narrow part would widen), and a select whose NaN constant InstCombine left poison in some lanes gets the
//! NaN in every lane. EarlyCSE then gives the four members one select of the `fadd`, and
//! InstCombine folds the interleave of its deinterleaved parts back into that one vector.

use llvm_sys::core as c;
use llvm_sys::prelude::*;
use llvm_sys::{LLVMOpcode as O, LLVMRealPredicate, LLVMTypeKind};

use super::ir;

/// The NaN element of a constant vector whose every element is that NaN or undefined (at
/// least one defined); `None` for anything else.
unsafe fn nan_lanes(k: LLVMValueRef) -> Option<LLVMValueRef> {
    let t = c::LLVMTypeOf(k);
    if c::LLVMIsAConstant(k).is_null() || c::LLVMGetTypeKind(t) != LLVMTypeKind::LLVMVectorTypeKind
    {
        return None;
    }
    let n = c::LLVMGetVectorSize(t);
    let mut nan: Option<LLVMValueRef> = None;
    for e in 0..n {
        let x = c::LLVMGetAggregateElement(k, e);
        if x.is_null() {
            return None;
        }
        if c::LLVMIsUndef(x) != 0 {
            continue;
        }
        if c::LLVMIsAConstantFP(x).is_null() {
            return None;
        }
        let mut loses = 0;
        if !c::LLVMConstRealGetDouble(x, &mut loses).is_nan() {
            return None;
        }
        match nan {
            None => nan = Some(x),
            // Distinct uniqued constants: another payload, which this fold leaves alone.
            Some(y) if y != x => return None,
            Some(_) => {}
        }
    }
    nan
}

/// How many elements of constant vector `k` are defined (not undef or poison).
unsafe fn defined_lanes(k: LLVMValueRef) -> u32 {
    (0..c::LLVMGetVectorSize(c::LLVMTypeOf(k)))
        .filter(|&e| c::LLVMIsUndef(c::LLVMGetAggregateElement(k, e)) == 0)
        .count() as u32
}

/// `(x, NaN element)` when `i` is `select (fcmp uno x, x|zero), NaN…, x` on a float vector.
unsafe fn nan_select(i: LLVMValueRef) -> Option<(LLVMValueRef, LLVMValueRef)> {
    if ir::opcode(i) != O::LLVMSelect {
        return None;
    }
    let (cond, k, x) = (
        c::LLVMGetOperand(i, 0),
        c::LLVMGetOperand(i, 1),
        c::LLVMGetOperand(i, 2),
    );
    if c::LLVMIsAFCmpInst(cond).is_null()
        || c::LLVMGetFCmpPredicate(cond) != LLVMRealPredicate::LLVMRealUNO
        || c::LLVMGetOperand(cond, 0) != x
    {
        return None;
    }
    let other = c::LLVMGetOperand(cond, 1);
    if other != x && c::LLVMIsNull(other) == 0 {
        return None;
    }
    nan_lanes(k).map(|nan| (x, nan))
}

/// Whether the GPU-NaN selects of shuffles of `v` (one source) take at least as many lanes
/// as `v` has: a vector load's members. Then one select of `v` is no more work than theirs;
/// of one narrow part (a tree's upper half) it would be.
unsafe fn covered(v: LLVMValueRef) -> bool {
    let lanes: u32 = ir::users(v)
        .into_iter()
        .filter(|&u| {
            ir::opcode(u) == O::LLVMShuffleVector
                && c::LLVMGetOperand(u, 0) == v
                && c::LLVMIsUndef(c::LLVMGetOperand(u, 1)) != 0
                && ir::users(u)
                    .into_iter()
                    .any(|s| nan_select(s).is_some_and(|(x, _)| x == u))
        })
        .map(|u| c::LLVMGetNumMaskElements(u))
        .sum();
    // InstCombine folds one member's select into a select of `v` itself, NaN in that
    // member's lanes and poison in the others'.
    let own: u32 = ir::users(v)
        .into_iter()
        .filter(|&s| nan_select(s).is_some_and(|(x, _)| x == v))
        .map(|s| defined_lanes(c::LLVMGetOperand(s, 1)))
        .sum();
    lanes + own >= c::LLVMGetVectorSize(c::LLVMTypeOf(v))
}

/// `select (fcmp uno v, 0), NaN, v` over every lane of the float vector `v`, built at `b`.
unsafe fn select_all(b: LLVMBuilderRef, v: LLVMValueRef, nan: LLVMValueRef) -> LLVMValueRef {
    let n = c::LLVMGetVectorSize(c::LLVMTypeOf(v));
    let mut lanes = vec![nan; n as usize];
    let splat = c::LLVMConstVector(lanes.as_mut_ptr(), n);
    let zero = c::LLVMConstNull(c::LLVMTypeOf(v));
    let cond = c::LLVMBuildFCmp(b, LLVMRealPredicate::LLVMRealUNO, v, zero, c"".as_ptr());
    c::LLVMBuildSelect(b, cond, splat, v, c"".as_ptr())
}

/// How far `lane_source` follows shuffles of shuffles.
const DEPTH: u32 = 8;

/// The value and lane that lane `lane` of `v` is, through shuffles; `None` for a poison lane.
unsafe fn lane_source(v: LLVMValueRef, lane: u32, depth: u32) -> Option<(LLVMValueRef, u32)> {
    if depth == 0 || !ir::is_instruction(v) || ir::opcode(v) != O::LLVMShuffleVector {
        return Some((v, lane));
    }
    let m = c::LLVMGetMaskValue(v, lane);
    if m == c::LLVMGetUndefMaskElem() {
        return None;
    }
    let a = c::LLVMGetOperand(v, 0);
    let n = c::LLVMGetVectorSize(c::LLVMTypeOf(a));
    let (src, k) = if (m as u32) < n {
        (a, m as u32)
    } else {
        (c::LLVMGetOperand(v, 1), m as u32 - n)
    };
    if c::LLVMIsUndef(src) != 0 {
        return None;
    }
    lane_source(src, k, depth - 1)
}

/// The vector that the shuffle `s` gives back lane for lane (an interleave of its own
/// deinterleaved parts), if any.
unsafe fn identity_of(s: LLVMValueRef) -> Option<LLVMValueRef> {
    let n = c::LLVMGetNumMaskElements(s);
    let mut whole = None;
    for lane in 0..n {
        let Some((v, k)) = lane_source(s, lane, DEPTH) else {
            continue;
        };
        if k != lane || whole.is_some_and(|w| w != v) {
            return None;
        }
        whole = Some(v);
    }
    whole.filter(|&w| w != s && c::LLVMTypeOf(w) == c::LLVMTypeOf(s))
}

/// Moves the GPU-NaN selects of shuffled float vectors above their shuffles, fills the
/// poison lanes of the others' NaN constants, then replaces each shuffle that gives back a
/// vector lane for lane by that vector, in every function of `m`; returns how many selects
/// and shuffles changed (when any, EarlyCSE and InstCombine are to run again).
///
/// # Safety
/// `m` is a live module.
pub unsafe fn fold(m: LLVMModuleRef) -> usize {
    let cx = c::LLVMGetModuleContext(m);
    let b = c::LLVMCreateBuilderInContext(cx);
    let mut total = 0;
    for f in ir::functions(m) {
        let mut n = 0;
        // Decided before any rewrite, which takes selects from `covered`'s count.
        let found: Vec<_> = ir::function_instructions(f)
            .into_iter()
            .filter_map(|i| {
                let (x, nan) = nan_select(i)?;
                let shuffled = ir::is_instruction(x)
                    && ir::opcode(x) == O::LLVMShuffleVector
                    && c::LLVMIsUndef(c::LLVMGetOperand(x, 1)) != 0
                    && covered(c::LLVMGetOperand(x, 0));
                Some((i, x, nan, shuffled))
            })
            .collect();
        for (i, x, nan, shuffled) in found {
            let poison_lanes =
                defined_lanes(c::LLVMGetOperand(i, 1)) < c::LLVMGetVectorSize(c::LLVMTypeOf(i));
            if !shuffled && !poison_lanes {
                continue;
            }
            c::LLVMPositionBuilderBefore(b, i);
            let new = if shuffled {
                // The shuffle again, of the selected source: a clone keeps its mask.
                let s = c::LLVMInstructionClone(x);
                c::LLVMSetOperand(s, 0, select_all(b, c::LLVMGetOperand(x, 0), nan));
                c::LLVMInsertIntoBuilder(b, s);
                s
            } else {
                select_all(b, x, nan)
            };
            c::LLVMReplaceAllUsesWith(i, new);
            c::LLVMInstructionEraseFromParent(i);
            n += 1;
        }
        if n == 0 {
            continue;
        }
        // Each member now reads one vector's lanes, so its interleave is that vector. The
        // dead shuffles are left to InstCombine.
        for s in ir::function_instructions(f) {
            if ir::opcode(s) == O::LLVMShuffleVector {
                if let Some(w) = identity_of(s) {
                    c::LLVMReplaceAllUsesWith(s, w);
                    n += 1;
                }
            }
        }
        total += n;
    }
    c::LLVMDisposeBuilder(b);
    total
}
