//! Loop pointers rebased on a uniform offset, so that a CTA barrier in the loop keeps a
//! scalar in the warp's frame instead of a 32-lane vector.
//!
//! A tile kernel's loop advances per-thread pointers by a step the same in every thread
//! (`A + 4 * (row * n + tx)`, `+= 64` per tile). With static regions (`barrier.rs`) such a
//! header phi lives across the loop's barriers, so every warp stored and reloaded it, 32
//! lanes of 64 bits (four vectors), and added the step to all of them, in every iteration;
//! the loads themselves only needed a row's first and last lanes (`Warp::lane_of`). Here the
//! phi `p = phi [start, pre], [p + s, latch]` becomes `start' + o`: `o = phi [0, pre],
//! [o + s, latch]` is uniform (a scalar in the frame) and `start'`, a copy of the start's
//! expression at the top of the header, is built again in every iteration from what each
//! region has at its entry (parameters, context fields), as `barrier::live_across`'s
//! rebuilt values are.
//!
//! The values are the same: `start + k * s` in two's complement either way (the new adds
//! carry no wrap flags). The rule fires on a shape only: a loop with a CTA barrier, a
//! varying header phi that lives across a barrier, a start of pure arithmetic on
//! constants, parameters and context fields (at most [`START_MAX`] instructions, one of
//! them reading a per-lane field), a step of such arithmetic on uniform values alone
//! defined outside the loop, and the latch's `p + s` used by the phi alone.

use std::collections::HashMap;

use llvm_sys::core as c;
use llvm_sys::prelude::*;
use llvm_sys::LLVMOpcode as O;

use super::barrier;
use super::cfg::Cfg;
use super::ir::{self, CtxField};
use super::uniform::{call_kind, CallKind};

/// The most instructions a rebased phi's start may take to build again in each iteration:
/// a few scalar and lane-wise operations, against four 64-byte stores, four loads and
/// four adds for a 32-lane pointer in the frame (matmul's `A + 4 * (row * n + tx)` is 11).
pub const START_MAX: u32 = 16;

/// A tree of pure arithmetic: its instructions (a shared operand counted at each use, as
/// it is built at each) and whether a per-lane context field feeds it.
#[derive(Clone, Copy)]
struct Pure {
    cost: u32,
    varying: bool,
}

/// What building `v` again takes, if it is pure arithmetic on constants, parameters and
/// context fields.
unsafe fn pure(
    td: llvm_sys::target::LLVMTargetDataRef,
    v: LLVMValueRef,
    memo: &mut HashMap<LLVMValueRef, Option<Pure>>,
) -> Option<Pure> {
    if !ir::is_instruction(v) {
        return (!c::LLVMIsAConstant(v).is_null() || !c::LLVMIsAArgument(v).is_null()).then_some(
            Pure {
                cost: 0,
                varying: false,
            },
        );
    }
    if let Some(&k) = memo.get(&v) {
        return k;
    }
    memo.insert(v, None);
    let op = ir::opcode(v);
    let k = match op {
        O::LLVMLoad => ir::ctx_offset(td, c::LLVMGetOperand(v, 0)).map(|off| Pure {
            // The context pointer and its offset are copied with the load.
            cost: 1,
            varying: CtxField::at(off).varying(),
        }),
        op if ir::int_arith_or_cast(op)
            || matches!(
                op,
                O::LLVMGetElementPtr | O::LLVMPtrToInt | O::LLVMIntToPtr | O::LLVMBitCast
            ) =>
        {
            let mut k = Pure {
                cost: 1,
                varying: false,
            };
            for o in ir::operands(v) {
                let p = pure(td, o, memo)?;
                k.cost = k.cost.checked_add(p.cost)?;
                k.varying |= p.varying;
            }
            Some(k)
        }
        _ => None,
    };
    memo.insert(v, k);
    k
}

/// A copy of `v`'s tree at the builder's position (a context load with its pointer and
/// `ptx2llvm_rt_self` call), each instruction copied once.
unsafe fn copy_tree(
    b: LLVMBuilderRef,
    v: LLVMValueRef,
    copies: &mut HashMap<LLVMValueRef, LLVMValueRef>,
) -> LLVMValueRef {
    if !ir::is_instruction(v) {
        return v;
    }
    if let Some(&x) = copies.get(&v) {
        return x;
    }
    let ops: Vec<LLVMValueRef> = ir::operands(v)
        .into_iter()
        .map(|o| {
            // A call's callee is its last operand: a function, kept.
            copy_tree(b, o, copies)
        })
        .collect();
    let x = c::LLVMInstructionClone(v);
    for (k, o) in ops.into_iter().enumerate() {
        c::LLVMSetOperand(x, k as u32, o);
    }
    c::LLVMInsertIntoBuilder(b, x);
    copies.insert(v, x);
    x
}

/// The latch's `p + s` (an `add` either way round, or a one-index byte `getelementptr`):
/// the step `s`.
unsafe fn step_of(next: LLVMValueRef, p: LLVMValueRef) -> Option<LLVMValueRef> {
    if !ir::is_instruction(next) {
        return None;
    }
    match ir::opcode(next) {
        O::LLVMAdd => {
            let (x, y) = (c::LLVMGetOperand(next, 0), c::LLVMGetOperand(next, 1));
            if x == p {
                Some(y)
            } else if y == p {
                Some(x)
            } else {
                None
            }
        }
        O::LLVMGetElementPtr
            if c::LLVMGetNumOperands(next) == 2
                && c::LLVMGetOperand(next, 0) == p
                && c::LLVMGetGEPSourceElementType(next)
                    == c::LLVMInt8TypeInContext(c::LLVMGetTypeContext(c::LLVMTypeOf(p))) =>
        {
            Some(c::LLVMGetOperand(next, 1))
        }
        _ => None,
    }
}

/// Rebases the varying loop-header phis of `f` that live across a CTA barrier in their loop
/// (the module's doc); returns how many. `cfg` stays true: no block is added.
///
/// # Safety
/// `f` must be a defined function in the cleanup's form (loops with a preheader and one
/// latch) and `cfg` its control flow.
pub unsafe fn rebase(f: LLVMValueRef, cfg: &Cfg) -> usize {
    let td = llvm_sys::target::LLVMGetModuleDataLayout(c::LLVMGetGlobalParent(f));
    let (across, _) = barrier::live_across(cfg, None);
    let mut memo = HashMap::new();
    let mut done = 0;
    for lp in &cfg.loops {
        let barrier = lp.blocks.iter().enumerate().any(|(x, &inside)| {
            inside
                && ir::instructions(cfg.blocks[x]).into_iter().any(|i| {
                    !c::LLVMIsACallInst(i).is_null() && matches!(call_kind(i), CallKind::Barrier(_))
                })
        });
        if !barrier {
            continue;
        }
        let h = cfg.blocks[lp.header];
        let inside = |bb: LLVMBasicBlockRef| cfg.index.get(&bb).is_some_and(|&x| lp.blocks[x]);
        let outside =
            |v: LLVMValueRef| !ir::is_instruction(v) || !inside(c::LLVMGetInstructionParent(v));
        let phis: Vec<LLVMValueRef> = ir::instructions(h)
            .into_iter()
            .take_while(|&i| !c::LLVMIsAPHINode(i).is_null())
            .collect();
        for p in phis {
            if c::LLVMCountIncoming(p) != 2 || !across.contains(&p) {
                continue;
            }
            let (mut pre, mut latch) = (0, 1);
            if inside(c::LLVMGetIncomingBlock(p, 0)) {
                (pre, latch) = (1, 0);
            }
            if !inside(c::LLVMGetIncomingBlock(p, latch)) || inside(c::LLVMGetIncomingBlock(p, pre))
            {
                continue;
            }
            let start = c::LLVMGetIncomingValue(p, pre);
            let next = c::LLVMGetIncomingValue(p, latch);
            let Some(s) = step_of(next, p) else {
                continue;
            };
            let ok = ir::users(next) == [p]
                && outside(start)
                && outside(s)
                && pure(td, start, &mut memo).is_some_and(|k| k.varying && k.cost <= START_MAX)
                && pure(td, s, &mut memo).is_some_and(|k| !k.varying);
            if !ok {
                continue;
            }
            let b = c::LLVMCreateBuilderInContext(c::LLVMGetTypeContext(c::LLVMTypeOf(p)));
            let n = c"".as_ptr();
            // The offset phi first among the header's phis.
            c::LLVMPositionBuilderBefore(b, c::LLVMGetFirstInstruction(h));
            let st = c::LLVMTypeOf(s);
            let name = format!("{}.off\0", ir::name(p));
            let o = c::LLVMBuildPhi(b, st, name.as_ptr().cast());
            // The start built again, and the pointer, after the phis.
            let first = ir::instructions(h)
                .into_iter()
                .find(|&i| c::LLVMIsAPHINode(i).is_null())
                .expect("a block ends with a terminator");
            c::LLVMPositionBuilderBefore(b, first);
            let mut copies = HashMap::new();
            let again = copy_tree(b, start, &mut copies);
            let q = if ir::opcode(next) == O::LLVMAdd {
                c::LLVMBuildAdd(b, again, o, n)
            } else {
                let mut idx = [o];
                c::LLVMBuildGEP2(
                    b,
                    c::LLVMInt8TypeInContext(c::LLVMGetTypeContext(st)),
                    again,
                    idx.as_mut_ptr(),
                    1,
                    n,
                )
            };
            c::LLVMPositionBuilderBefore(b, next);
            let onext = c::LLVMBuildAdd(b, o, s, n);
            let mut vals = [c::LLVMConstInt(st, 0, 0), onext];
            let mut bbs = [
                c::LLVMGetIncomingBlock(p, pre),
                c::LLVMGetIncomingBlock(p, latch),
            ];
            c::LLVMAddIncoming(o, vals.as_mut_ptr(), bbs.as_mut_ptr(), 2);
            c::LLVMDisposeBuilder(b);
            // `next` is then `q + s`, used by `p` alone, which nothing else uses.
            c::LLVMReplaceAllUsesWith(p, q);
            c::LLVMInstructionEraseFromParent(p);
            c::LLVMInstructionEraseFromParent(next);
            done += 1;
        }
    }
    done
}
