//! The thread context as memory of its own type in a warp function: kernel memory (global,
//! shared, local, a warp's frame) is never the runtime's context, but the warp engine's loads
//! and stores carried nothing LLVM could tell them apart by, so every store to shared memory
//! made LLVM load `%ctaid` and the CTA's shared block again from the context (matmul's load
//! region: two loads, two shifts and a spill per warp, and the shared block's address twice),
//! and the CTA function's stores of a warp's ids kept a warp's shared stores from reaching
//! its loads. Tagging the context's loads with one TBAA type and the other accesses with a
//! sibling lets GVN forward the CTA function's `%ctaid` stores and LICM hoist the shared
//! block's load. Calls other than memory intrinsics stay untagged (the runtime reads and
//! writes the context), and so do atomics, volatile accesses and the context's stores (a
//! replay's lane ids must stay before the kernel access that faults, which names them).

use llvm_sys::core as c;
use llvm_sys::prelude::*;
use llvm_sys::LLVMOpcode as O;

use super::ir;

/// Memory intrinsics whose pointer arguments are the only memory they touch.
const MEMORY_INTRINSICS: [&str; 7] = [
    "llvm.masked.load.",
    "llvm.masked.store.",
    "llvm.masked.gather.",
    "llvm.masked.scatter.",
    "llvm.memcpy.",
    "llvm.memmove.",
    "llvm.memset.",
];

/// The pointers of `f` into its context (parameter 0): the parameter, GEPs, casts, phis and
/// selects of them, and loads of local variables every store to which stores one of them.
/// `None` when a context pointer goes anywhere else (turned into an integer, stored to memory
/// that is not such a variable), where a kernel access might be one without a trace.
unsafe fn context_pointers(f: LLVMValueRef) -> Option<std::collections::HashSet<LLVMValueRef>> {
    let ctx = c::LLVMGetParam(f, 0);
    let mut set = std::collections::HashSet::new();
    let mut vars = Vec::new();
    let mut work = vec![ctx];
    while let Some(v) = work.pop() {
        if !set.insert(v) {
            continue;
        }
        for u in ir::users(v) {
            match ir::opcode(u) {
                O::LLVMGetElementPtr if c::LLVMGetOperand(u, 0) == v => work.push(u),
                O::LLVMBitCast | O::LLVMAddrSpaceCast | O::LLVMPHI | O::LLVMSelect => {
                    if O::LLVMSelect == ir::opcode(u) && c::LLVMGetOperand(u, 0) == v {
                        return None;
                    }
                    work.push(u)
                }
                O::LLVMLoad => {}
                O::LLVMStore if c::LLVMGetOperand(u, 0) != v => {}
                O::LLVMStore => {
                    let dst = c::LLVMGetOperand(u, 1);
                    if c::LLVMIsAAllocaInst(dst).is_null() {
                        return None;
                    }
                    vars.push(dst);
                    for l in ir::users(dst) {
                        match ir::opcode(l) {
                            O::LLVMLoad => work.push(l),
                            O::LLVMStore if c::LLVMGetOperand(l, 1) == dst => {}
                            _ => return None,
                        }
                    }
                }
                // A call may read and write the context (the runtime does), so calls stay
                // unmarked; one that returns a pointer might return one into it.
                O::LLVMCall if ptr_like(c::LLVMTypeOf(u)) => return None,
                O::LLVMCall => {}
                _ => return None,
            }
        }
    }
    // A variable's loads are context pointers only if all its stores store one.
    for var in vars {
        for s in ir::users(var) {
            if ir::opcode(s) == O::LLVMStore && !set.contains(&c::LLVMGetOperand(s, 0)) {
                return None;
            }
        }
    }
    Some(set)
}

/// Whether a value of type `t` may hold a pointer (a pointer, or a vector or aggregate).
unsafe fn ptr_like(t: LLVMTypeRef) -> bool {
    use llvm_sys::LLVMTypeKind as K;
    !matches!(
        c::LLVMGetTypeKind(t),
        K::LLVMVoidTypeKind
            | K::LLVMIntegerTypeKind
            | K::LLVMFloatTypeKind
            | K::LLVMDoubleTypeKind
            | K::LLVMHalfTypeKind
            | K::LLVMBFloatTypeKind
    )
}

/// The TBAA access tags of the context and of kernel memory: two scalar types under a root
/// of their own, so LLVM takes them as never overlapping. (Alias scopes would say the same,
/// but the inliner makes each inlined copy's scopes fresh, and the CTA function inlines a warp
/// function once per state and warp pair: the context's loads in one copy were not told
/// apart from the kernel's stores in another.)
unsafe fn tags(cx: LLVMContextRef) -> [LLVMMetadataRef; 2] {
    let s = |t: &str| c::LLVMMDStringInContext2(cx, t.as_ptr().cast(), t.len());
    let node = |v: &mut [LLVMMetadataRef]| c::LLVMMDNodeInContext2(cx, v.as_mut_ptr(), v.len());
    let zero = c::LLVMValueAsMetadata(c::LLVMConstInt(c::LLVMInt64TypeInContext(cx), 0, 0));
    let root = node(&mut [s("ptx2llvm warp memory")]);
    ["ptx2llvm context", "ptx2llvm kernel memory"].map(|name| {
        let ty = node(&mut [s(name), root, zero]);
        node(&mut [ty, ty, zero])
    })
}

/// Tags a store of the CTA function to the context (a warp's ids before a batch runs it) as
/// a context access: the kernel's shared-memory stores and loads around it are then not
/// ordered with it, and LLVM forwards a warp's stores to its loads across the next warp's
/// ids. What reads the ids reads them through the context (the warp function's loads, tagged
/// alike) or in a call (untagged); a fault in a batch is named by the replay, which sets them
/// again lane by lane.
pub unsafe fn tag_context(store: LLVMValueRef) {
    let cx = c::LLVMGetTypeContext(c::LLVMTypeOf(store));
    let kind = c::LLVMGetMDKindIDInContext(cx, c"tbaa".as_ptr(), 4);
    c::LLVMSetMetadata(store, kind, c::LLVMMetadataAsValue(cx, tags(cx)[0]));
}

/// Tags the context's loads in warp function `f` as the context and the other
/// loads, stores and memory intrinsics as not aliasing it; returns how many of each, or
/// nothing when the context's pointers cannot all be followed (`context_pointers`).
pub unsafe fn mark(f: LLVMValueRef) -> Option<(usize, usize)> {
    let set = context_pointers(f)?;
    // A call that returns a pointer might return the context (`ptx2llvm_rt_self`, which the
    // warp engine replaces by the parameter where it can): what is loaded or stored through
    // it would be tagged as kernel memory.
    for i in ir::function_instructions(f) {
        if !c::LLVMIsACallInst(i).is_null()
            && !ir::callee(i).starts_with("llvm.")
            && ptr_like(c::LLVMTypeOf(i))
        {
            return None;
        }
    }
    let cx = c::LLVMGetTypeContext(c::LLVMTypeOf(f));
    let [context, kernel] = tags(cx);
    let kind = c::LLVMGetMDKindIDInContext(cx, c"tbaa".as_ptr(), 4);
    let tag = |i: LLVMValueRef, t: LLVMMetadataRef| {
        if c::LLVMGetMetadata(i, kind).is_null() {
            c::LLVMSetMetadata(i, kind, c::LLVMMetadataAsValue(cx, t));
        }
    };
    let (mut own, mut others) = (0, 0);
    for i in ir::function_instructions(f) {
        let ptrs: Vec<LLVMValueRef> = match ir::opcode(i) {
            O::LLVMLoad | O::LLVMStore => {
                if c::LLVMGetVolatile(i) != 0
                    || c::LLVMGetOrdering(i)
                        != llvm_sys::LLVMAtomicOrdering::LLVMAtomicOrderingNotAtomic
                {
                    continue;
                }
                vec![ir::access(i)
                    .map(|(p, _)| p)
                    .unwrap_or(std::ptr::null_mut())]
            }
            O::LLVMCall => {
                let name = ir::callee(i);
                if !MEMORY_INTRINSICS.iter().any(|p| name.starts_with(p)) {
                    continue;
                }
                ir::args(i)
            }
            _ => continue,
        };
        if ptrs.iter().any(|p| set.contains(p)) {
            // Loads only: the context's stores (a replay's lane ids, which a fault names)
            // stay untagged, so they keep their order with every kernel access.
            if ir::opcode(i) == O::LLVMLoad {
                tag(i, context);
                own += 1;
            }
        } else {
            tag(i, kernel);
            others += 1;
        }
    }
    Some((own, others))
}

/// Replaces the loads of the CTA's shared-memory size (`%total_smem_size`, the context field
/// `in_shared_block`'s tests read) in each CTA function `K.simd` of the optimized module `m`
/// by one load in its entry block; returns how many loads went (when any, jump threading and
/// GVN are to run: every test is then one value).
///
/// The size is the launch's, and nothing in `K.simd` writes it (its context stores are the
/// warps' ids), so one load at the start reads what every test read. `default<On>` could not
/// see that: LICM takes a test's load out of a loop over warps (the region runs under a skip
/// guard) and drops its TBAA type and `!invariant.load` there, as it does for any load it
/// speculates, so each one-warp step of a halving tree loaded the size again after the step
/// before's masked store and branched on it anew; no step's plain store reached the next
/// step's loads (reduce_halving, whose `s[]` is dynamic: no static floor folds the tests).
pub unsafe fn hoist_smem_size(m: LLVMModuleRef) -> usize {
    use crate::runtime::abi::offset::TOTAL_SMEM_SIZE;
    let cx = c::LLVMGetModuleContext(m);
    let b = c::LLVMCreateBuilderInContext(cx);
    let i32t = c::LLVMInt32TypeInContext(cx);
    let i8t = c::LLVMInt8TypeInContext(cx);
    let mut gone = 0;
    for f in ir::functions(m) {
        let name = ir::name(f);
        if c::LLVMIsDeclaration(f) != 0 || !name.ends_with(".simd") || c::LLVMCountParams(f) != 3 {
            continue;
        }
        let ctx = c::LLVMGetParam(f, 1);
        let size_field = |p: LLVMValueRef| {
            let gep = !c::LLVMIsAGetElementPtrInst(p).is_null()
                || (!c::LLVMIsAConstantExpr(p).is_null()
                    && c::LLVMGetConstOpcode(p) == O::LLVMGetElementPtr);
            gep && c::LLVMGetNumOperands(p) == 2
                && c::LLVMGetOperand(p, 0) == ctx
                && c::LLVMGetGEPSourceElementType(p) == i8t
                && ir::const_u64(c::LLVMGetOperand(p, 1)) == Some(u64::from(TOTAL_SMEM_SIZE))
        };
        let loads: Vec<LLVMValueRef> = ir::function_instructions(f)
            .into_iter()
            .filter(|&i| {
                ir::opcode(i) == O::LLVMLoad
                    && c::LLVMTypeOf(i) == i32t
                    && c::LLVMGetVolatile(i) == 0
                    && c::LLVMGetOrdering(i)
                        == llvm_sys::LLVMAtomicOrdering::LLVMAtomicOrderingNotAtomic
                    && size_field(c::LLVMGetOperand(i, 0))
            })
            .collect();
        if loads.len() > 1 {
            let entry = c::LLVMGetEntryBasicBlock(f);
            c::LLVMPositionBuilderBefore(b, c::LLVMGetFirstInstruction(entry));
            let mut idx = [c::LLVMConstInt(
                c::LLVMInt64TypeInContext(cx),
                u64::from(TOTAL_SMEM_SIZE),
                0,
            )];
            let at = c::LLVMBuildGEP2(b, i8t, ctx, idx.as_mut_ptr(), 1, c"".as_ptr());
            let one = c::LLVMBuildLoad2(b, i32t, at, c"".as_ptr());
            c::LLVMSetAlignment(one, 4);
            for l in loads {
                c::LLVMReplaceAllUsesWith(l, one);
                c::LLVMInstructionEraseFromParent(l);
                gone += 1;
            }
        }
    }
    c::LLVMDisposeBuilder(b);
    gone
}

/// Gives each untyped plain load of the optimized module `m` the TBAA type of a typed load or
/// store of the same function through the same pointer value that reads or writes at least as
/// many bytes; returns how many loads it typed (when any, GVN is to run again).
///
/// `default<On>` makes such loads and drops the type on the way: a halving tree's last
/// one-warp step (`s[t] += s[t + 1]`) loads its two floats as one `<16 x float>` without it.
/// An untyped load may alias the context's (typed) stores between it and the step before's
/// store, so GVN forwarded nothing to it, and nothing to the step's typed load of the whole
/// vector either (GVN stops at the narrower load of the same address before it): the step
/// reloaded what the step before had just stored, a store-forwarding stall per CTA
/// (reduce_halving). The types name disjoint memory (the context, kernel memory), and `mark`
/// gave them by pointer value: a pointer value points into one kind in every execution, so a
/// load through it that reads no more bytes than a typed access reads memory of that type.
pub unsafe fn retype_loads(m: LLVMModuleRef) -> usize {
    let cx = c::LLVMGetModuleContext(m);
    let kind = c::LLVMGetMDKindIDInContext(cx, c"tbaa".as_ptr(), 4);
    let td = llvm_sys::target::LLVMGetModuleDataLayout(m);
    let bytes = |t: LLVMTypeRef| llvm_sys::target::LLVMStoreSizeOfType(td, t);
    let plain = |i: LLVMValueRef| {
        c::LLVMGetVolatile(i) == 0
            && c::LLVMGetOrdering(i) == llvm_sys::LLVMAtomicOrdering::LLVMAtomicOrderingNotAtomic
    };
    let mut typed = 0;
    for f in ir::functions(m) {
        // Per pointer value: the typed accesses' types and widths.
        let mut by_ptr: std::collections::HashMap<LLVMValueRef, Vec<(LLVMValueRef, u64)>> =
            std::collections::HashMap::new();
        let mut untyped = Vec::new();
        for i in ir::function_instructions(f) {
            let Some((p, t)) = ir::access(i) else {
                continue;
            };
            if !plain(i) {
                continue;
            }
            let tag = c::LLVMGetMetadata(i, kind);
            if !tag.is_null() {
                by_ptr.entry(p).or_default().push((tag, bytes(t)));
            } else if ir::opcode(i) == O::LLVMLoad {
                untyped.push((i, p, bytes(t)));
            }
        }
        for (i, p, n) in untyped {
            let Some(seen) = by_ptr.get(&p) else {
                continue;
            };
            // One type only: a pointer typed two ways (never made so) is left alone.
            let tag = seen[0].0;
            if seen.iter().all(|&(t, _)| t == tag) && seen.iter().any(|&(_, w)| w >= n) {
                c::LLVMSetMetadata(i, kind, tag);
                typed += 1;
            }
        }
    }
    typed
}
