//! Chains of float min/max as balanced trees (issue 17).
//!
//! A row maximum written as a running `m = fmaxf(m, v[k])` (softmax_warp: 32 steps per lane)
//! is one dependency chain: each `llvm.maximumnum` waits for the one before, about ten cycles
//! per step on x86 (sign blends for -0 < +0, the max, a NaN compare and blend), while the
//! loads it reads arrived long before. PTX's `min`/`max` are exactly associative and
//! commutative on narrow floats: the result is the least/greatest number among the operands
//! in the order where -0 < +0, or a NaN when every operand is one (with `.NaN`, a NaN when
//! any is) — and a NaN result is canonicalized by its observers (`nan.rs`), so which NaN a
//! tree passes on is never seen. So a chain whose links have no other use is rebuilt as a
//! balanced tree over the same operands: the same number of calls, depth log2 of the length.
//! Run after `nan::drop_unseen`, which removes the canonicalizing selects between the links.
//! f64 is left alone: its two-NaN result is the second operand (`fp::minmax`).

use std::collections::HashSet;

use llvm_sys::core as c;
use llvm_sys::prelude::*;
use llvm_sys::{LLVMOpcode as O, LLVMTypeKind};

use super::ir;

/// The shortest chain (in calls) rebuilt: three links have depth 3, a tree 2.
const MIN_CHAIN: usize = 3;

/// Whether `i` is a call of a min/max intrinsic on a float of at most 32 bits; its name.
unsafe fn minmax(i: LLVMValueRef) -> Option<String> {
    if !ir::is_instruction(i) || ir::opcode(i) != O::LLVMCall {
        return None;
    }
    let f = ir::callee(i);
    let ok = ["maximumnum", "minimumnum", "maximum", "minimum"]
        .iter()
        .any(|n| f.starts_with(&format!("llvm.{n}.")));
    let narrow = matches!(
        c::LLVMGetTypeKind(c::LLVMTypeOf(i)),
        LLVMTypeKind::LLVMFloatTypeKind
            | LLVMTypeKind::LLVMHalfTypeKind
            | LLVMTypeKind::LLVMBFloatTypeKind
    );
    (ok && narrow).then_some(f)
}

/// Whether `v` has exactly one use.
unsafe fn one_use(v: LLVMValueRef) -> bool {
    let u = c::LLVMGetFirstUse(v);
    !u.is_null() && c::LLVMGetNextUse(u).is_null()
}

/// Rebuilds the min/max chains of `f` as balanced trees; returns how many.
///
/// # Safety
/// `f` is a defined function in SSA form.
pub unsafe fn balance(f: LLVMValueRef) -> usize {
    let insts = ir::function_instructions(f);
    let mut done: HashSet<LLVMValueRef> = HashSet::new();
    let mut n = 0;
    // Roots last in their block order: a chain's root is a link no same-named link of the
    // same block uses as its only user.
    for &root in insts.iter().rev() {
        if done.contains(&root) {
            continue;
        }
        let Some(name) = minmax(root) else {
            continue;
        };
        let bb = c::LLVMGetInstructionParent(root);
        // A link belongs to the chain when it is the same intrinsic, in the same block, and
        // its only use is the next link.
        let link = |v: LLVMValueRef| {
            minmax(v).as_deref() == Some(name.as_str())
                && c::LLVMGetInstructionParent(v) == bb
                && one_use(v)
        };
        let mut leaves = Vec::new();
        let mut links = vec![root];
        let mut work = vec![root];
        while let Some(i) = work.pop() {
            for k in 0..2 {
                let o = c::LLVMGetOperand(i, k);
                if link(o) && !done.contains(&o) {
                    links.push(o);
                    work.push(o);
                } else {
                    leaves.push(o);
                }
            }
        }
        done.extend(links.iter().copied());
        if links.len() < MIN_CHAIN || depth(root, &links) <= tree_depth(leaves.len()) {
            continue;
        }
        let b = c::LLVMCreateBuilderInContext(c::LLVMGetTypeContext(c::LLVMTypeOf(root)));
        c::LLVMPositionBuilderBefore(b, root);
        let callee = c::LLVMGetCalledValue(root);
        let fty = c::LLVMGlobalGetValueType(callee);
        let mut level = leaves;
        while level.len() > 1 {
            let mut next = Vec::with_capacity(level.len().div_ceil(2));
            for pair in level.chunks(2) {
                if let [x, y] = *pair {
                    let mut args = [x, y];
                    next.push(c::LLVMBuildCall2(
                        b,
                        fty,
                        callee,
                        args.as_mut_ptr(),
                        2,
                        c"".as_ptr(),
                    ));
                } else {
                    next.push(pair[0]);
                }
            }
            level = next;
        }
        c::LLVMDisposeBuilder(b);
        c::LLVMReplaceAllUsesWith(root, level[0]);
        // Root first: each link's only use is the one erased before it.
        for &l in &links {
            c::LLVMInstructionEraseFromParent(l);
        }
        n += 1;
    }
    n
}

/// The depth of the chain of `links` under `root` (calls on the longest path).
unsafe fn depth(root: LLVMValueRef, links: &[LLVMValueRef]) -> usize {
    let inner: Vec<usize> = (0..2)
        .map(|k| {
            let o = c::LLVMGetOperand(root, k);
            if links.contains(&o) {
                depth(o, links)
            } else {
                0
            }
        })
        .collect();
    1 + inner.into_iter().max().unwrap_or(0)
}

/// The depth of a balanced tree over `n` leaves.
fn tree_depth(n: usize) -> usize {
    n.next_power_of_two().trailing_zeros() as usize
}
