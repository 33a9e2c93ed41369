//! Cancellation in integer sums of the kernel's SSA form before its analyses: a sum whose
//! terms, expanded through additions, subtractions and multiplications or shifts by
//! constants, cancel a value out is built again from what is left. A tile loaded as
//! `tile[k / 18][k % 18]` addresses `tile + 72 q + 4 (k - 18 q)` with `q = k / 18`: that is
//! `tile + 4 k`, whose lanes step by 4 bytes where `k` steps by 1 (`stride.rs`), while `q`'s
//! `mul.hi` hides that from the lane-stride rules. The warp function then stores the tile's
//! rows from `k` alone (a 3x3 convolution's halo tile: two `vpmulld`, two shifts, two adds and
//! the lanes' offset test of every warp iteration, plus the scalar rebuild of each run's
//! base from `q` and `k % 18`).
//!
//! Exact: addition, subtraction, multiplication by a constant and a left shift by less than
//! the width are ring operations modulo `2^width`, so the linear form `Σ c_i x_i + k` of the
//! sum (coefficients modulo `2^width`) has the sum's value in every case, wraps included.
//! The new instructions carry no wrap flags (the old ones' may no longer hold term by term);
//! where an old flag made the value poison, a value is a refinement.

use llvm_sys::core as c;
use llvm_sys::prelude::*;
use llvm_sys::LLVMOpcode as O;
use llvm_sys::LLVMTypeKind;

use super::ir;

/// How deep a sum's tree is expanded (its instructions, not counting leaves).
const DEPTH: u32 = 8;

/// A sum `Σ coef × leaf + konst` modulo `2^width`.
#[derive(Default)]
struct Form {
    /// Leaves in order of first appearance, with their coefficients (never 0 once built).
    terms: Vec<(LLVMValueRef, u64)>,
    konst: u64,
    /// A leaf's coefficients added up to 0 on the way: the form has fewer terms than the tree.
    cancelled: bool,
}

impl Form {
    fn add(&mut self, other: Form, mask: u64) {
        self.konst = self.konst.wrapping_add(other.konst) & mask;
        self.cancelled |= other.cancelled;
        for (leaf, k) in other.terms {
            match self.terms.iter().position(|&(l, _)| l == leaf) {
                Some(x) => {
                    let sum = self.terms[x].1.wrapping_add(k) & mask;
                    if sum == 0 {
                        self.terms.remove(x);
                        self.cancelled = true;
                    } else {
                        self.terms[x].1 = sum;
                    }
                }
                None => self.terms.push((leaf, k)),
            }
        }
    }

    fn scale(&mut self, f: u64, mask: u64) {
        self.konst = self.konst.wrapping_mul(f) & mask;
        for t in &mut self.terms {
            t.1 = t.1.wrapping_mul(f) & mask;
        }
        if self.terms.iter().any(|t| t.1 == 0) {
            self.terms.retain(|t| t.1 != 0);
            self.cancelled = true;
        }
    }
}

/// Whether `v` is an integer addition, subtraction, multiplication by a constant or shift
/// left by a constant of type `t` (the operations a form goes through).
unsafe fn linear_op(v: LLVMValueRef, t: LLVMTypeRef) -> bool {
    if c::LLVMIsAInstruction(v).is_null() || c::LLVMTypeOf(v) != t {
        return false;
    }
    let konst = |k: u32| !c::LLVMIsAConstantInt(c::LLVMGetOperand(v, k)).is_null();
    match ir::opcode(v) {
        O::LLVMAdd | O::LLVMSub => true,
        O::LLVMMul => konst(0) || konst(1),
        O::LLVMShl => konst(1),
        _ => false,
    }
}

/// The linear form of `v` (of integer type `t`, `width` bits).
unsafe fn form(v: LLVMValueRef, t: LLVMTypeRef, width: u32, depth: u32) -> Form {
    let mask = if width >= 64 {
        u64::MAX
    } else {
        (1u64 << width) - 1
    };
    if !c::LLVMIsAConstantInt(v).is_null() {
        return Form {
            konst: c::LLVMConstIntGetZExtValue(v) & mask,
            ..Form::default()
        };
    }
    if depth == 0 || !linear_op(v, t) {
        return Form {
            terms: vec![(v, 1)],
            ..Form::default()
        };
    }
    let opnd = |k: u32| c::LLVMGetOperand(v, k);
    let sub = |k: u32| form(opnd(k), t, width, depth - 1);
    match ir::opcode(v) {
        O::LLVMAdd | O::LLVMSub => {
            let mut a = sub(0);
            let mut b = sub(1);
            if ir::opcode(v) == O::LLVMSub {
                b.scale(mask, mask); // × -1
            }
            a.add(b, mask);
            a
        }
        O::LLVMMul => {
            let (x, k) = if c::LLVMIsAConstantInt(opnd(1)).is_null() {
                (0, 1)
            } else {
                (1, 0)
            };
            let f = c::LLVMConstIntGetZExtValue(opnd(x));
            let mut a = sub(k);
            a.scale(f, mask);
            a
        }
        _ => {
            // Shl by a constant: `x × 2^s`, a shift of the width or more is poison (any
            // value will do; keep the instruction).
            let s = c::LLVMConstIntGetZExtValue(opnd(1));
            if s >= u64::from(width) {
                return Form {
                    terms: vec![(v, 1)],
                    ..Form::default()
                };
            }
            let mut a = sub(0);
            a.scale(1u64 << s, mask);
            a
        }
    }
}

/// Builds `f` before the builder's position.
unsafe fn build(b: LLVMBuilderRef, f: &Form, t: LLVMTypeRef, width: u32) -> LLVMValueRef {
    let n = c"".as_ptr();
    let neg = |k: u64| {
        let m = if width >= 64 {
            u64::MAX
        } else {
            (1u64 << width) - 1
        };
        k.wrapping_neg() & m
    };
    let half = if width >= 64 {
        1u64 << 63
    } else {
        1u64 << (width - 1)
    };
    let times = |x: LLVMValueRef, k: u64| {
        if k == 1 {
            x
        } else if k.is_power_of_two() {
            c::LLVMBuildShl(
                b,
                x,
                c::LLVMConstInt(t, u64::from(k.trailing_zeros()), 0),
                n,
            )
        } else {
            c::LLVMBuildMul(b, x, c::LLVMConstInt(t, k, 0), n)
        }
    };
    let mut acc: Option<LLVMValueRef> = None;
    let mut minus = Vec::new();
    for &(x, k) in &f.terms {
        // Coefficients of the upper half are negative: subtracted.
        if k >= half {
            minus.push(times(x, neg(k)));
        } else {
            let term = times(x, k);
            acc = Some(match acc {
                Some(a) => c::LLVMBuildAdd(b, a, term, n),
                None => term,
            });
        }
    }
    let mut acc = acc.unwrap_or_else(|| c::LLVMConstInt(t, 0, 0));
    for m in minus {
        acc = c::LLVMBuildSub(b, acc, m, n);
    }
    if f.konst != 0 {
        acc = c::LLVMBuildAdd(b, acc, c::LLVMConstInt(t, f.konst, 0), n);
    }
    acc
}

/// Rewrites the integer sums of function `f` in which a value cancels out (see the module
/// comment); returns how many.
///
/// # Safety
/// `f` is a defined function in SSA form.
pub unsafe fn cancel(f: LLVMValueRef) -> usize {
    let m = c::LLVMGetGlobalParent(f);
    let b = c::LLVMCreateBuilderInContext(c::LLVMGetModuleContext(m));
    let mut count = 0;
    let mut old = Vec::new();
    for i in ir::function_instructions(f) {
        let t = c::LLVMTypeOf(i);
        if c::LLVMGetTypeKind(t) != LLVMTypeKind::LLVMIntegerTypeKind
            || !matches!(ir::opcode(i), O::LLVMAdd | O::LLVMSub)
        {
            continue;
        }
        // Roots only: a sum inside a larger sum is expanded with it (one without users is
        // dead code).
        let users = ir::users(i);
        if users.iter().all(|&u| linear_op(u, t)) {
            continue;
        }
        let width = c::LLVMGetIntTypeWidth(t);
        if width > 64 {
            continue;
        }
        let fm = form(i, t, width, DEPTH);
        if !fm.cancelled {
            continue;
        }
        c::LLVMPositionBuilderBefore(b, i);
        let v = build(b, &fm, t, width);
        c::LLVMReplaceAllUsesWith(i, v);
        old.push(i);
        count += 1;
    }
    c::LLVMDisposeBuilder(b);
    // After the walk: a tree's instructions may come later in the block list than its root.
    erase_dead(old);
    count
}

/// Erases the replaced roots `work`, then their operands that became unused the same way (the
/// old sums' trees; their pure integer instructions only).
unsafe fn erase_dead(mut work: Vec<LLVMValueRef>) {
    // A value shared by two trees is queued twice: the second time it is gone.
    let mut gone = std::collections::HashSet::new();
    while let Some(x) = work.pop() {
        if gone.contains(&x)
            || c::LLVMIsAInstruction(x).is_null()
            || !c::LLVMGetFirstUse(x).is_null()
            || !matches!(
                ir::opcode(x),
                O::LLVMAdd | O::LLVMSub | O::LLVMMul | O::LLVMShl
            )
        {
            continue;
        }
        let ops = ir::operands(x);
        c::LLVMInstructionEraseFromParent(x);
        gone.insert(x);
        work.extend(ops);
    }
}
