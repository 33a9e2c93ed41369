//! The GPU's canonical NaN only where its bits can be seen (`Target::gpu_nans`).
//!
//! The lowering makes every f32/f16/bf16 arithmetic result the canonical NaN when it is a NaN
//! (`lower::fp::gpu_nan`: `select (fcmp uno x, x), NaN, x`), because an H200 gives that NaN
//! whatever its operands' payloads. Between two such operations the select is wasted: an
//! `fadd`/`fsub`/`fmul`/`fdiv`/`fma` gives a NaN for any NaN operand, whatever its payload, and
//! its own result is canonicalized again. In a dot product each `fma` of the chain waits for
//! a compare and a blend (matmul's 16 per tile), so this pass removes the selects whose
//! result's payload no use can observe.
//!
//! A use observes a value's bits unless it is a float compare (NaN-ness only), the value
//! operand of a canonicalizing select (which replaces every NaN), or an operand of the
//! arithmetic above, a `phi` or a `select`'s value operand whose own result is not observed
//! (through loops: the least fixed point); `neg`/`abs` (`fneg`, `llvm.fabs`), min and max
//! (`llvm.minimumnum` and the like) and `llvm.ldexp` pass a NaN's payload on to their result
//! as arithmetic does. A bit cast passes its operand's bits on, and so does `shfl`'s `a`
//! operand (`ptx2llvm_rt_shfl`: its result is some lane's `a`), so a float moved to an integer
//! register, shuffled and moved back for a warp reduction (`mov.b32`, `shfl`, `mov.b32`,
//! `add`: layernorm, softmax, the reductions) is seen only where the integer or the float at
//! the end is. Stores, integer operations and compares, conversions, other calls and vector
//! insertions observe. A select that is kept still gives its raw value to the arithmetic
//! among its uses (`raw_operands`: the compare and blend leave a scan's chain of adds). Run
//! on the kernel in SSA form, before
//! InstCombine folds the selects into other shapes; thread loops run it on their `K.step`
//! (`drop_unseen_nans`), the coroutines keep every select and are the tests' oracle
//! (`lit/cpu/run-simd-nan-chain.ptx`, `run-loops-nan-chain.ptx`).

use std::collections::{HashMap, HashSet};

use llvm_sys::core as c;
use llvm_sys::prelude::*;
use llvm_sys::{LLVMOpcode as O, LLVMRealPredicate, LLVMTypeKind};

use super::bounds::Bounds;
use super::ir;
use super::lanes::SHARED_AS;

/// Canonicalizing selects found and removed in a function.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct NanReport {
    pub found: usize,
    pub dropped: usize,
    /// Operands that take the value before a kept select (`raw_operands`).
    pub raw: usize,
    /// Of `dropped`, the selects that some use would see but whose value is never a NaN
    /// (`bounds::Bounds::never_nan`).
    pub never: usize,
}

unsafe fn narrow_float(v: LLVMValueRef) -> bool {
    matches!(
        c::LLVMGetTypeKind(c::LLVMTypeOf(v)),
        LLVMTypeKind::LLVMFloatTypeKind
            | LLVMTypeKind::LLVMHalfTypeKind
            | LLVMTypeKind::LLVMBFloatTypeKind
    )
}

unsafe fn is_nan_const(v: LLVMValueRef) -> bool {
    if c::LLVMIsAConstantFP(v).is_null() {
        return false;
    }
    let mut loses = 0;
    c::LLVMConstRealGetDouble(v, &mut loses).is_nan()
}

/// `x` when `i` is `select (fcmp uno x, x|C), NaN, x` on a 32-bit or narrower float.
unsafe fn canonicalized(i: LLVMValueRef) -> Option<LLVMValueRef> {
    if ir::opcode(i) != O::LLVMSelect || !narrow_float(i) {
        return None;
    }
    let (cond, nan, x) = (
        c::LLVMGetOperand(i, 0),
        c::LLVMGetOperand(i, 1),
        c::LLVMGetOperand(i, 2),
    );
    if !is_nan_const(nan)
        || c::LLVMIsAFCmpInst(cond).is_null()
        || c::LLVMGetFCmpPredicate(cond) != LLVMRealPredicate::LLVMRealUNO
    {
        return None;
    }
    let (a, b) = (c::LLVMGetOperand(cond, 0), c::LLVMGetOperand(cond, 1));
    let other_ok = b == x || (!c::LLVMIsAConstantFP(b).is_null() && !is_nan_const(b));
    (a == x && other_ok).then_some(x)
}

/// Whether `v` can carry a NaN's bits: a narrow float, or an integer of at most 32 bits that
/// a bit cast or a shuffle may have taken them into.
unsafe fn carries_bits(v: LLVMValueRef) -> bool {
    let t = c::LLVMTypeOf(v);
    narrow_float(v)
        || (c::LLVMGetTypeKind(t) == LLVMTypeKind::LLVMIntegerTypeKind
            && c::LLVMGetIntTypeWidth(t) <= 32)
}

/// Whether instruction `i` sees whether its float operands are NaNs but not which NaN: a
/// compare, and a conversion to an integer (`fptosi`/`fptoui` of any NaN is poison, which the
/// lowering's own NaN select replaces: ex2.approx's `fptosi` of its clamped input).
unsafe fn sees_nan_only(i: LLVMValueRef) -> bool {
    !c::LLVMIsAFCmpInst(i).is_null() || matches!(ir::opcode(i), O::LLVMFPToSI | O::LLVMFPToUI)
}

/// Whether instruction `i` passes operand `k`'s bits on to its result and nowhere else.
unsafe fn passes_operand(i: LLVMValueRef, k: u32) -> bool {
    match ir::opcode(i) {
        // A bit cast's result is its operand's bits: a float moved to an integer register
        // and back (`mov.b32`) is seen exactly where one of the two is. Not into a vector
        // (`mov.b32 {%h1, %h2}`): the pass follows no vector, whose elements are seen where
        // they are extracted.
        O::LLVMBitCast => carries_bits(i),
        // `shfl`'s result is the `a` operand of some lane of the warp (its own when the source
        // is out of range or inactive: `warp::shfl`, `runtime::cta`), never other bits; every
        // lane runs this same instruction, so a lane's result being unseen means no lane's
        // `a` is seen through it.
        O::LLVMCall if ir::WarpCall::of(&ir::callee(i)) == Some(ir::WarpCall::Shfl) => k == 3,
        _ => passes_payload(i),
    }
}

/// Whether instruction `i` passes a NaN operand's payload on to its result and nowhere else.
unsafe fn passes_payload(i: LLVMValueRef) -> bool {
    match ir::opcode(i) {
        // `fneg`/`fabs` change a NaN's sign bit only: its payload reaches the result, which
        // decides whether anything sees it.
        O::LLVMFAdd | O::LLVMFSub | O::LLVMFMul | O::LLVMFDiv | O::LLVMFNeg | O::LLVMPHI => true,
        O::LLVMCall => {
            let f = ir::callee(i);
            // (`llvm.x86.avx512.vfmadd.f32`: the cpu target's directed-rounding arithmetic.)
            f.starts_with("llvm.fma.")
                || f.starts_with("llvm.fmuladd.")
                || f.starts_with("llvm.fabs.")
                // ldexp of a NaN is that NaN, quieted (`vscalefps` returns its first operand).
                || f.starts_with("llvm.ldexp.")
                // min and max give a NaN only from a NaN operand (`maximumnum`: both), and the
                // lowering canonicalizes their result as it does arithmetic's: a row maximum's
                // chain (softmax) needs one compare and blend at its end, not one per step.
                || f.starts_with("llvm.maximumnum.")
                || f.starts_with("llvm.minimumnum.")
                || f.starts_with("llvm.maximum.")
                || f.starts_with("llvm.minimum.")
                // Rounding to an integer keeps a NaN a NaN (ex2.approx's `roundeven` of its
                // clamped input, whose result only its `fsub` and `fptosi` see).
                || f.starts_with("llvm.roundeven.")
                || f.starts_with("llvm.trunc.")
                || f.starts_with("llvm.floor.")
                || f.starts_with("llvm.ceil.")
                || f.starts_with("llvm.rint.")
                || f.starts_with("llvm.nearbyint.")
                || f.starts_with("llvm.round.")
                || ir::statically_rounded_fma(&f).is_some()
        }
        _ => false,
    }
}

/// When a `phi` whose every source (through other `phi`s) is a canonicalizing select or a
/// constant that is no NaN is seen by a use that observes bits (a store, a conversion), that
/// use gets its own canonicalizing select of the `phi`, and the sources' selects are then seen
/// only through it: `drop_unseen` removes them. The `phi` is a NaN exactly when a source is,
/// and then the canonical one, so the use sees the same bits. The same for a canonicalizing
/// select of another block seen by such a use: the use canonicalizes the select's operand. A dot product's accumulator
/// (matmul's `%f56`, carried around the tile loop and across its barriers) is canonicalized
/// once at its global store instead of once per tile, on the frame store that ends the
/// product's chain.
unsafe fn sink_to_observers(f: LLVMValueRef, insts: &[LLVMValueRef]) {
    // The canonical NaN of the phi's sources, when all of them are canonicalizing selects
    // or non-NaN constants (`None` otherwise, or without any select).
    let sources = |phi: LLVMValueRef| -> Option<LLVMValueRef> {
        let mut nan = None;
        let mut work = vec![phi];
        let mut seen = HashSet::new();
        while let Some(v) = work.pop() {
            if !seen.insert(v) {
                continue;
            }
            if !c::LLVMIsAConstantFP(v).is_null() {
                if is_nan_const(v) {
                    return None;
                }
            } else if ir::is_instruction(v) && ir::opcode(v) == O::LLVMPHI {
                for k in 0..c::LLVMCountIncoming(v) {
                    work.push(c::LLVMGetIncomingValue(v, k));
                }
            } else if ir::is_instruction(v) && canonicalized(v).is_some() {
                nan = Some(c::LLVMGetOperand(v, 1));
            } else {
                return None;
            }
        }
        nan
    };
    let b = c::LLVMCreateBuilderInContext(c::LLVMGetModuleContext(c::LLVMGetGlobalParent(f)));
    for &i in insts {
        let op = ir::opcode(i);
        // Only stores and float conversions (`sees_nan_only`: not to integers): the uses a warp function's values end in that
        // observe bits (the other observers keep their selects).
        let observer = matches!(op, O::LLVMStore | O::LLVMFPExt | O::LLVMFPTrunc);
        if !observer {
            continue;
        }
        let v = c::LLVMGetOperand(i, 0);
        if !narrow_float(v) || !ir::is_instruction(v) {
            continue;
        }
        // A select of another block (a loop's, its value stored after the loop): the use
        // canonicalizes the select's operand itself.
        let (v, nan) = match canonicalized(v) {
            Some(x) if c::LLVMGetInstructionParent(v) != c::LLVMGetInstructionParent(i) => {
                (x, c::LLVMGetOperand(v, 1))
            }
            Some(_) => continue,
            None if ir::opcode(v) == O::LLVMPHI => match sources(v) {
                Some(nan) => (v, nan),
                None => continue,
            },
            None => continue,
        };
        c::LLVMPositionBuilderBefore(b, i);
        let uno = c::LLVMBuildFCmp(b, LLVMRealPredicate::LLVMRealUNO, v, v, c"".as_ptr());
        let sel = c::LLVMBuildSelect(b, uno, nan, v, c"".as_ptr());
        c::LLVMSetOperand(i, 0, sel);
    }
    c::LLVMDisposeBuilder(b);
}

/// Whether pointer `p` is in the shared space (`ptr addrspace(3)`: an offset into the CTA's
/// block).
unsafe fn shared_pointer(p: LLVMValueRef) -> bool {
    let t = c::LLVMTypeOf(p);
    c::LLVMGetTypeKind(t) == LLVMTypeKind::LLVMPointerTypeKind
        && c::LLVMGetPointerAddressSpace(t) == SHARED_AS
}

/// Whether a vector or scalar type `t` holds shared-space pointers.
unsafe fn shared_type(t: LLVMTypeRef) -> bool {
    let t = if c::LLVMGetTypeKind(t) == LLVMTypeKind::LLVMVectorTypeKind {
        c::LLVMGetElementType(t)
    } else {
        t
    };
    c::LLVMGetTypeKind(t) == LLVMTypeKind::LLVMPointerTypeKind
        && c::LLVMGetPointerAddressSpace(t) == SHARED_AS
}

/// Whether the kernel's shared memory is read and written only by its own scalar loads and
/// stores through shared-space pointers (issue 17): then the bits stored there are seen
/// exactly where a load's result is, and a tree reduction's sums (stored, loaded and added
/// at each step) need their canonical NaN only where a final load is seen. The whole space
/// is one value: a shared address is an integer offset that may reach any variable (and the
/// dynamic `extern` arrays share one block). No other way in: a shared pointer cast to
/// another space (`cvta`, and the generic `ld [s+8]` the builder folds into a constant
/// cast), the block's base read from the thread context (`isspacep`), an atomic or a call
/// given a shared pointer, a call that might reach the block through the context (only the
/// barriers, the warp operations without memory and LLVM's intrinsics are let through), or
/// a load of a vector or a wide value (whose elements the pass does not follow). The block
/// belongs to one CTA (a cluster is one CTA on the cpu target), and every thread of it runs
/// this function, so an unseen load here is unseen in every thread.
unsafe fn shared_private(insts: &[LLVMValueRef]) -> bool {
    for &i in insts {
        let n = c::LLVMGetNumOperands(i).max(0) as u32;
        if (0..n).any(|k| crate::llvm::cpu::has_shared_cast(c::LLVMGetOperand(i, k))) {
            return false;
        }
        match ir::opcode(i) {
            O::LLVMLoad => {
                let p = c::LLVMGetOperand(i, 0);
                if shared_pointer(p) && !carries_bits(i) {
                    return false;
                }
                // The thread context's fields: a pointer among them may be the block's base.
                let base = if c::LLVMIsAGetElementPtrInst(p).is_null() {
                    p
                } else {
                    c::LLVMGetOperand(p, 0)
                };
                if ir::is_self_call(base)
                    && c::LLVMGetTypeKind(c::LLVMTypeOf(i)) == LLVMTypeKind::LLVMPointerTypeKind
                {
                    return false;
                }
            }
            O::LLVMAddrSpaceCast
                if shared_type(c::LLVMTypeOf(i))
                    || shared_type(c::LLVMTypeOf(c::LLVMGetOperand(i, 0))) =>
            {
                return false;
            }
            O::LLVMAtomicRMW | O::LLVMAtomicCmpXchg if shared_pointer(c::LLVMGetOperand(i, 0)) => {
                return false;
            }
            O::LLVMCall => {
                let args = c::LLVMGetNumArgOperands(i) as u32;
                if (0..args).any(|k| shared_type(c::LLVMTypeOf(c::LLVMGetOperand(i, k)))) {
                    return false;
                }
                let f = ir::callee(i);
                let known = f.starts_with("llvm.")
                    || f == "ptx2llvm_rt_self"
                    || f.starts_with("ptx2llvm_rt_barrier_")
                    // An alignment test (an address and a code; the thread loops' `K.step`).
                    || f == super::misaligned::CHECK
                    // A privatized float addition (`runtime/red.rs`): a global address and a
                    // value, no shared memory or context.
                    || crate::runtime::red::FLOAT_ADD.contains(&f.as_str())
                    || matches!(
                        ir::WarpCall::of(&f),
                        Some(
                            ir::WarpCall::ActiveMask
                                | ir::WarpCall::Shfl
                                | ir::WarpCall::Vote
                                | ir::WarpCall::Redux
                                | ir::WarpCall::MatchAny
                                | ir::WarpCall::MatchAll
                                | ir::WarpCall::Elect
                                | ir::WarpCall::WarpSync
                        )
                    );
                if !known {
                    return false;
                }
            }
            _ => {}
        }
    }
    true
}

/// Removes the canonicalizing selects of `f` whose results' NaN payloads no use observes.
///
/// # Safety
/// `f` is a defined function in SSA form.
pub unsafe fn drop_unseen(f: LLVMValueRef) -> NanReport {
    sink_to_observers(f, &ir::function_instructions(f));
    // Again: sinking added instructions.
    let insts = ir::function_instructions(f);
    // observed: values whose bits some use sees; flows: result -> operands whose payload it
    // carries (observed with it).
    let mut observed: HashSet<LLVMValueRef> = HashSet::new();
    let mut flows: HashMap<LLVMValueRef, Vec<LLVMValueRef>> = HashMap::new();
    // Shared memory as one value (`shared_private`): `f` itself stands for its contents, seen
    // where a load of it is; the values stored into it flow there.
    let shared = shared_private(&insts).then_some(f);
    let mut canon = Vec::new();
    for &i in &insts {
        if let Some(mem) = shared {
            match ir::opcode(i) {
                O::LLVMLoad if shared_pointer(c::LLVMGetOperand(i, 0)) => {
                    flows.entry(i).or_default().push(mem);
                }
                O::LLVMStore if shared_pointer(c::LLVMGetOperand(i, 1)) => {
                    let v = c::LLVMGetOperand(i, 0);
                    if carries_bits(v) && c::LLVMIsAConstant(v).is_null() {
                        flows.entry(mem).or_default().push(v);
                    }
                    continue;
                }
                _ => {}
            }
        }
        let x = canonicalized(i);
        if let Some(x) = x {
            canon.push((i, x));
        }
        let is_select = ir::opcode(i) == O::LLVMSelect;
        let is_call = ir::opcode(i) == O::LLVMCall;
        let blind = sees_nan_only(i);
        let n = if is_call {
            c::LLVMGetNumArgOperands(i) as u32
        } else {
            c::LLVMGetNumOperands(i) as u32
        };
        for k in 0..n {
            let v = c::LLVMGetOperand(i, k);
            if !carries_bits(v) || !c::LLVMIsAConstant(v).is_null() || blind {
                continue;
            }
            let passes = passes_operand(i, k) || is_select;
            // The canonicalizing select's value operand: every NaN becomes the same one.
            if x.is_some() && k == 2 {
                continue;
            }
            // A select's condition is no float; its value operands carry their payloads.
            if passes && (!is_select || k > 0) {
                flows.entry(i).or_default().push(v);
            } else {
                observed.insert(v);
            }
        }
    }
    let mut work: Vec<LLVMValueRef> = observed.iter().copied().collect();
    while let Some(v) = work.pop() {
        if let Some(ops) = flows.get(&v) {
            for &o in ops {
                if observed.insert(o) {
                    work.push(o);
                }
            }
        }
    }
    let mut r = NanReport {
        found: canon.len(),
        ..NanReport::default()
    };
    let mut kept = HashMap::new();
    let mut gone = HashSet::new();
    // Asked before any select goes: the bounds read the selects' compares.
    let mut bounds = Bounds::new();
    let canon: Vec<(LLVMValueRef, LLVMValueRef, bool)> = canon
        .into_iter()
        .map(|(s, x)| (s, x, observed.contains(&s) && !bounds.never_nan(x)))
        .collect();
    for (s, x, keep) in canon {
        if keep {
            kept.insert(s, x);
            continue;
        }
        if observed.contains(&s) {
            r.never += 1;
        }
        // Read again: a select this loop removed may have been this one's operand.
        let (cond, x) = (c::LLVMGetOperand(s, 0), c::LLVMGetOperand(s, 2));
        c::LLVMReplaceAllUsesWith(s, x);
        c::LLVMInstructionEraseFromParent(s);
        gone.insert(s);
        if c::LLVMGetFirstUse(cond).is_null() {
            c::LLVMInstructionEraseFromParent(cond);
            gone.insert(cond);
        }
        r.dropped += 1;
    }
    r.raw = raw_operands(&insts, &observed, &kept, &gone);
    r
}

/// Gives the selects' raw values to the uses that see no payload (issue 17).
///
/// A kept select is observed somewhere, but its other uses may only do arithmetic or compare:
/// an `fadd` of the raw sum has the same NaN-ness and non-NaN value as one of the canonical
/// sum, and its own result is canonicalized again. Those uses take the value before the select
/// (so do a bit cast and a shuffle whose results no use observes, on the way to such
/// arithmetic), and an observed select merging two computed values or an observed bit cast on
/// the way gets a copy over the raw values for them (a select is one blend). The compare and
/// blend then leave the chain: in a warp scan's steps (`v = lane >= d ? v + shfl_up(v, d) : v`,
/// each `v` stored at the end) the next shuffle and add waited for both at each of the five
/// steps. Returns how many operands now take raw values.
unsafe fn raw_operands(
    insts: &[LLVMValueRef],
    observed: &HashSet<LLVMValueRef>,
    kept: &HashMap<LLVMValueRef, LLVMValueRef>,
    gone: &HashSet<LLVMValueRef>,
) -> usize {
    if kept.is_empty() {
        return 0;
    }
    let mut memo: HashMap<LLVMValueRef, LLVMValueRef> = HashMap::new();
    let mut n = 0;
    for &i in insts {
        if gone.contains(&i) || kept.contains_key(&i) {
            continue;
        }
        if observed.contains(&i) {
            continue;
        }
        // Arithmetic that canonicalizes again, and the moves to a shuffle (a bit cast, the
        // shuffle's `a`). Compares, selects, phis, neg/abs and min/max keep the select: the
        // value beside it there only made two values live at once (`expf`'s clamps of an
        // unrolled softmax, which wait on no chain).
        let ops: Vec<u32> = match ir::opcode(i) {
            O::LLVMFAdd | O::LLVMFSub | O::LLVMFMul | O::LLVMFDiv => vec![0, 1],
            O::LLVMBitCast if carries_bits(i) => vec![0],
            O::LLVMCall => {
                let f = ir::callee(i);
                if ir::WarpCall::of(&f) == Some(ir::WarpCall::Shfl) {
                    vec![3]
                } else if f.starts_with("llvm.fma.")
                    || f.starts_with("llvm.fmuladd.")
                    || ir::statically_rounded_fma(&f).is_some()
                {
                    vec![0, 1, 2]
                } else {
                    continue;
                }
            }
            _ => continue,
        };
        for k in ops {
            let o = c::LLVMGetOperand(i, k);
            if !carries_bits(o) {
                continue;
            }
            let r = raw_of(o, c::LLVMGetInstructionParent(i), observed, kept, &mut memo);
            if r != o {
                c::LLVMSetOperand(i, k, r);
                n += 1;
            }
        }
    }
    n
}

/// The raw form of `v` for a use in block `bb`: a kept select's operand, or a copy of an
/// observed select (value operands) or bit cast over raw operands, placed right after it. Only
/// within `bb`: a raw value used in another block would be a second value live across the
/// blocks (kept across a barrier: another frame slot).
unsafe fn raw_of(
    v: LLVMValueRef,
    bb: LLVMBasicBlockRef,
    observed: &HashSet<LLVMValueRef>,
    kept: &HashMap<LLVMValueRef, LLVMValueRef>,
    memo: &mut HashMap<LLVMValueRef, LLVMValueRef>,
) -> LLVMValueRef {
    if !ir::is_instruction(v) || c::LLVMGetInstructionParent(v) != bb {
        return v;
    }
    if let Some(&x) = kept.get(&v) {
        return x;
    }
    if let Some(&r) = memo.get(&v) {
        return r;
    }
    if !observed.contains(&v) {
        return v;
    }
    let ops: &[u32] = match ir::opcode(v) {
        // A merge of two computed values (a scan step's `lane >= d ? v + u : v`); a clamp to a
        // constant (`expf`'s range reduction) is left alone: its copy costs a blend in code
        // that waits on no chain (an unrolled softmax was 3% slower).
        O::LLVMSelect
            if c::LLVMIsAConstant(c::LLVMGetOperand(v, 1)).is_null()
                && c::LLVMIsAConstant(c::LLVMGetOperand(v, 2)).is_null() =>
        {
            &[1, 2]
        }
        O::LLVMBitCast if carries_bits(v) => &[0],
        _ => return v,
    };
    let raws: Vec<(u32, LLVMValueRef)> = ops
        .iter()
        .map(|&k| (k, raw_of(c::LLVMGetOperand(v, k), bb, observed, kept, memo)))
        .collect();
    if raws.iter().all(|&(k, r)| r == c::LLVMGetOperand(v, k)) {
        memo.insert(v, v);
        return v;
    }
    let copy = c::LLVMInstructionClone(v);
    let b = c::LLVMCreateBuilderInContext(c::LLVMGetTypeContext(c::LLVMTypeOf(v)));
    let next = c::LLVMGetNextInstruction(v);
    c::LLVMPositionBuilderBefore(b, next);
    c::LLVMInsertIntoBuilder(b, copy);
    c::LLVMDisposeBuilder(b);
    for (k, r) in raws {
        c::LLVMSetOperand(copy, k, r);
    }
    memo.insert(v, copy);
    copy
}
