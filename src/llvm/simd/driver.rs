//! The functions around the warp function: its declaration, and the CTA function
//! `K.simd(params, ctx, fis)` with the thread-loop entry ABI (`runtime::fission::FisEntry`),
//! so that the thread-loop workers run it unchanged (chunks of CTAs, shared memory, faults):
//! for each CTA of the batch `fis->cta_first .. + fis->cta_count` it sets `%ctaid` in the
//! worker's context and calls the warp function for each warp. A replay after a fault
//! (another mode) runs the one CTA the context names and marks every thread finished.

use llvm_sys::core as c;
use llvm_sys::prelude::*;
use llvm_sys::LLVMIntPredicate as P;

use super::barrier::{self, guard, Scheme, HEAD, SLOT};
use super::ir;
use crate::llvm::cpu::ParamPlace;
use crate::runtime::abi::offset;
use crate::runtime::fission::{off, MODE_ALL, ST_EXIT};

fn cs(s: &str) -> std::ffi::CString {
    std::ffi::CString::new(s).unwrap_or_default()
}

/// Marks generated vector code to use the full vector width of the host.
unsafe fn wide(cx: LLVMContextRef, f: LLVMValueRef) {
    for (k, v) in [
        ("min-legal-vector-width", "512"),
        ("prefer-vector-width", "512"),
    ] {
        let a = c::LLVMCreateStringAttribute(
            cx,
            k.as_ptr() as *const _,
            k.len() as u32,
            v.as_ptr() as *const _,
            v.len() as u32,
        );
        c::LLVMAddAttributeAtIndex(f, llvm_sys::LLVMAttributeFunctionIndex, a);
    }
}

/// `void NAME(ptr ctx, i32 warp, i32 nthreads, i32 lanes, <K's parameters>)`, internal:
/// `lanes` selects the lanes to run (all but for a fault replay, which runs one at a time).
/// A coroutine (a kernel with CTA barriers: `barrier.rs`) returns its handle and takes
/// its slot last: `ptr NAME(…, ptr slot)`; a region-scheme warp function returns where it
/// stopped and takes its slot, the state to enter at and the CTA's `bar.red` results:
/// `i32 NAME(…, ptr slot, i32 state, ptr results, ptr shared)`, always inlined into the CTA
/// function.
pub unsafe fn declare_warp_fn(
    m: LLVMModuleRef,
    k: LLVMValueRef,
    fname: &str,
    scheme: Scheme,
) -> LLVMValueRef {
    let cx = c::LLVMGetModuleContext(m);
    let i32t = c::LLVMInt32TypeInContext(cx);
    let mut pt = vec![c::LLVMPointerTypeInContext(cx, 0), i32t, i32t, i32t];
    let kt = c::LLVMGlobalGetValueType(k);
    let n = c::LLVMCountParamTypes(kt) as usize;
    let mut kp = vec![std::ptr::null_mut(); n];
    c::LLVMGetParamTypes(kt, kp.as_mut_ptr());
    pt.extend(kp);
    let ptr = c::LLVMPointerTypeInContext(cx, 0);
    let ret = match scheme {
        Scheme::None => c::LLVMVoidTypeInContext(cx),
        Scheme::Coroutines => {
            pt.push(ptr);
            ptr
        }
        Scheme::Regions => {
            pt.extend([ptr, i32t, ptr, ptr]);
            i32t
        }
    };
    let ft = c::LLVMFunctionType(ret, pt.as_mut_ptr(), pt.len() as u32, 0);
    let fname = cs(fname);
    let f = c::LLVMAddFunction(m, fname.as_ptr(), ft);
    c::LLVMSetLinkage(f, llvm_sys::LLVMLinkage::LLVMInternalLinkage);
    wide(cx, f);
    if scheme == Scheme::Regions {
        // The shared-memory base comes as the last parameter (the CTA function reads it once
        // per CTA), not from `ptx2llvm_rt_self()` at every entry of the region function.
        let key = crate::llvm::fission::SHARED_ARG_ATTR;
        let val = (pt.len() - 1).to_string();
        let a = c::LLVMCreateStringAttribute(
            cx,
            key.as_ptr() as *const _,
            key.len() as u32,
            val.as_ptr() as *const _,
            val.len() as u32,
        );
        c::LLVMAddAttributeAtIndex(f, llvm_sys::LLVMAttributeFunctionIndex, a);
        let kind = c"alwaysinline";
        let a = c::LLVMCreateEnumAttribute(
            cx,
            c::LLVMGetEnumAttributeKindForName(kind.as_ptr(), kind.to_bytes().len()),
            0,
        );
        c::LLVMAddAttributeAtIndex(f, llvm_sys::LLVMAttributeFunctionIndex, a);
    }
    f
}

/// The barrier scheme of a kernel's warp functions, and the slot of a region-scheme warp:
/// `size` bytes of mailbox and frame, aligned to `align`.
#[derive(Clone, Copy, Debug)]
pub struct RegionSlot {
    /// How the warps meet at barriers; the rest is for `Scheme::Regions`.
    pub scheme: Scheme,
    pub size: u32,
    pub align: u32,
    /// The kernel has a `bar.red`: the warps' contributions are combined each round.
    pub red: bool,
    /// Its barriers: the states after the start.
    pub states: u32,
    /// Skip guards (`barrier::Guard`): the bytes at the frame's start a skipped warp copies
    /// from the warp that ran, and the key the warp functions agree on.
    pub skip: Option<barrier::SkipKey>,
    /// Every warp meets the barriers in order, 1 to `states` (`barrier::in_order`): the
    /// CTA function runs *ordered rounds*, region k of every warp after region k - 1 of
    /// every warp, with no state per warp.
    pub in_order: bool,
    /// The ordered rounds (bit k: round k) whose region has a branch the same in all lanes of
    /// a warp but not in every warp (`barrier::warp_dependent_rounds`: `if (warp == 0)`): they
    /// run warp 0 before the loop over the others, so that LLVM decides such a branch in each
    /// copy. Only those rounds are inlined once more: peeling every round of a kernel grew its
    /// whole code with its barriers (layernorm, 6 barriers: compile CPU 113 -> 137 ms).
    pub peel: u64,
    /// Every warp of a CTA meets the same barriers in the same order (`barrier::alike`): the
    /// lockstep rounds' warps always wait at one barrier, and the round for warps at
    /// different barriers is left out.
    pub alike: bool,
}

/// The most barriers for which each state gets its own inlined copy of the warp function in
/// the CTA function's round (so that LLVM folds the warp function's dispatch and drops the
/// code no region of that state reaches); more share one copy and dispatch at run time.
const SPECIALIZE_MAX: u32 = 8;

/// The most barriers for which rounds whose warps all wait at one barrier run a loop of that
/// state's region (`region_warps`: lockstep rounds), one copy of the warp function per state.
/// The suite's 9-barrier block reduction (with its next CTA's loads prefetched, so that the
/// rounds' cost shows) spends 22% less CPU time with its lockstep rounds and their skip
/// guards; past `SPECIALIZE_MAX` the other rounds call the warp function, which keeps its
/// compile time where it was without lockstep rounds (2.0 s instead of 0.73 s otherwise).
pub const LOCKSTEP_MAX: u32 = 16;

/// The state a lockstep round passes for its warps when several states share that round's
/// loop: each warp's call gets the state its mailbox holds (see the lockstep switch).
const SHARED_STATE: u32 = u32::MAX;

/// Makes the block `[x, y, z]` a constant in warp function `f`, which runs only in CTAs of
/// that shape (the runtime refuses other launches of such a kernel): its reads of `%ntid`
/// from the context become the numbers, so that what is built from them folds (the lanes
/// that exist, a 1-D block's `%tid.x`, the skip guards' bounds) instead of being tested at
/// every warp's entry to every region.
pub unsafe fn pin_block(f: LLVMValueRef, block: [u32; 3]) {
    let ctx = c::LLVMGetParam(f, 0);
    pin_ntid(f, |p| p == ctx, block);
}

/// Replaces the `i32` loads of `%ntid` in `f` by `[x, y, z]`: loads from the context field
/// `offset::NTID` (+ 4, + 8) of a context pointer `ctx` recognizes (a warp function's
/// parameter; the kernel function's `ptx2llvm_rt_self()`).
pub unsafe fn pin_ntid(f: LLVMValueRef, ctx: impl Fn(LLVMValueRef) -> bool, [x, y, z]: [u32; 3]) {
    let cx = c::LLVMGetModuleContext(c::LLVMGetGlobalParent(f));
    let td = llvm_sys::target::LLVMGetModuleDataLayout(c::LLVMGetGlobalParent(f));
    let i32t = c::LLVMInt32TypeInContext(cx);
    let mut bb = c::LLVMGetFirstBasicBlock(f);
    while !bb.is_null() {
        for i in super::ir::instructions(bb) {
            if c::LLVMIsALoadInst(i).is_null() || c::LLVMTypeOf(i) != i32t {
                continue;
            }
            let p = c::LLVMGetOperand(i, 0);
            let off = if ctx(p) {
                Some(0)
            } else if !c::LLVMIsAGetElementPtrInst(p).is_null()
                && c::LLVMGetNumOperands(p) == 2
                && ctx(c::LLVMGetOperand(p, 0))
            {
                super::ir::const_u64(c::LLVMGetOperand(p, 1)).and_then(|k| {
                    let size =
                        llvm_sys::target::LLVMABISizeOfType(td, c::LLVMGetGEPSourceElementType(p));
                    k.checked_mul(size)
                })
            } else {
                None
            };
            let v = match off.map(|o| o.wrapping_sub(u64::from(offset::NTID))) {
                Some(0) => x,
                Some(4) => y,
                Some(8) => z,
                _ => continue,
            };
            c::LLVMReplaceAllUsesWith(i, c::LLVMConstInt(i32t, u64::from(v), 0));
            c::LLVMInstructionEraseFromParent(i);
        }
        bb = c::LLVMGetNextBasicBlock(bb);
    }
}

/// The states whose lockstep rounds run the warps in pairs (`region_warps`): in a kernel
/// without `bar.red` whose warp function `f` never reads the ids the CTA function stores
/// (`ids_unread`), those whose region loads memory the warps share (not its frame or the
/// context) and stores to none of it, the only regions in which two warps' loads can be one
/// (a store between them may write what the second warp reads); other regions run one warp at
/// a time, each a single inlined copy, as the pairs cost two more. Measured on matmul at
/// 1536³ (CPU per launch, 4 alternated pairs): its storing tile round in pairs too, x1.05
/// slower and compile 76 -> 144 ms; groups of four or eight warps instead of pairs in its
/// k-loop round, x1.05 and x1.02 slower.
pub unsafe fn paired_states(f: LLVMValueRef, slot: RegionSlot) -> Vec<u32> {
    if slot.red || !(1..=LOCKSTEP_MAX).contains(&slot.states) || !ids_unread(f) {
        return Vec::new();
    }
    (0..=slot.states)
        .filter(|&k| slot.skip.is_none() && shares_loads(f, k))
        .collect()
}

/// Whether state `k`'s region of region-scheme warp function `f` (the blocks its dispatch
/// reaches from that state) loads memory other than its frame and the context, and writes
/// none: no store outside them, no masked store, scatter or memory intrinsic, no atomic or
/// fence.
unsafe fn shares_loads(f: LLVMValueRef, k: u32) -> bool {
    use llvm_sys::LLVMOpcode as O;
    let np = c::LLVMCountParams(f);
    let (ctx, slot, state) = (
        c::LLVMGetParam(f, 0),
        c::LLVMGetParam(f, np - 4),
        c::LLVMGetParam(f, np - 3),
    );
    let mut sw = None;
    let mut bb = c::LLVMGetFirstBasicBlock(f);
    while !bb.is_null() && sw.is_none() {
        let t = c::LLVMGetBasicBlockTerminator(bb);
        if !t.is_null() && super::ir::opcode(t) == O::LLVMSwitch && c::LLVMGetOperand(t, 0) == state
        {
            sw = Some(t);
        }
        bb = c::LLVMGetNextBasicBlock(bb);
    }
    let Some(sw) = sw else {
        return false;
    };
    // Successor 0 is the default (the start); successor i > 0 is case i's
    // (`LLVMGetSwitchCaseValue`).
    let entry = (0..c::LLVMGetNumSuccessors(sw)).find_map(|j| {
        let v = if j == 0 {
            Some(0)
        } else {
            super::ir::const_u64(c::LLVMGetSwitchCaseValue(sw, j))
        };
        (v == Some(u64::from(k))).then(|| c::LLVMGetSuccessor(sw, j))
    });
    let Some(entry) = entry else {
        return false;
    };
    // The warp's own memory: its frame and its local variables (the context, which LLVM
    // cannot tell from shared memory, is no store's).
    let base = |p: LLVMValueRef| {
        let mut p = p;
        while super::ir::is_instruction(p)
            && matches!(super::ir::opcode(p), O::LLVMGetElementPtr | O::LLVMBitCast)
        {
            p = c::LLVMGetOperand(p, 0);
        }
        p
    };
    let own = |p: LLVMValueRef| {
        let p = base(p);
        p == slot || !c::LLVMIsAAllocaInst(p).is_null()
    };
    let mut loads = false;
    let mut seen = std::collections::HashSet::new();
    let mut work = vec![entry];
    while let Some(bb) = work.pop() {
        if !seen.insert(bb) {
            continue;
        }
        for i in super::ir::instructions(bb) {
            match super::ir::opcode(i) {
                O::LLVMLoad => {
                    let p = c::LLVMGetOperand(i, 0);
                    loads |= !own(p) && base(p) != ctx;
                }
                O::LLVMStore if !own(c::LLVMGetOperand(i, 1)) => return false,
                O::LLVMAtomicRMW | O::LLVMAtomicCmpXchg | O::LLVMFence => return false,
                O::LLVMCall => {
                    let name = super::ir::callee(i);
                    if name.starts_with("llvm.masked.load")
                        || name.starts_with("llvm.masked.gather")
                    {
                        loads = true;
                    } else if !name.starts_with("llvm.")
                        || ["store", "scatter", "mem", "atomic", "fence"]
                            .iter()
                            .any(|w| name.contains(w))
                    {
                        return false;
                    }
                }
                _ => {}
            }
        }
        let t = c::LLVMGetBasicBlockTerminator(bb);
        if !t.is_null() {
            for s in 0..c::LLVMGetNumSuccessors(t) {
                work.push(c::LLVMGetSuccessor(t, s));
            }
        }
    }
    loads
}

/// Whether warp function `f` never reads the warp and thread ids the CTA function stores in
/// the context before each call (`%warpid`, the thread a runtime call or fault report
/// names): no call but to LLVM intrinsics, and no load through the context at those fields.
/// Then a lockstep round may run two warps' regions back to back without the second warp's
/// stores to the context between them (`region_warps`' pairs): LLVM cannot tell those stores
/// from the shared-memory loads, so with them gone it loads what both warps read once (the
/// tile row of a shared-memory matrix product, which every warp of the CTA reads).
unsafe fn ids_unread(f: LLVMValueRef) -> bool {
    use llvm_sys::LLVMOpcode as O;
    for i in super::ir::function_instructions(f) {
        if !c::LLVMIsACallInst(i).is_null() && !super::ir::callee(i).starts_with("llvm.") {
            return false;
        }
    }
    let ctx = c::LLVMGetParam(f, 0);
    let i8t = c::LLVMInt8TypeInContext(c::LLVMGetTypeContext(c::LLVMTypeOf(ctx)));
    // Bytes a load of `t` may cover (a vector or aggregate: as if wide).
    let bytes = |t: LLVMTypeRef| match c::LLVMGetTypeKind(t) {
        llvm_sys::LLVMTypeKind::LLVMIntegerTypeKind => {
            u64::from(c::LLVMGetIntTypeWidth(t)).div_ceil(8)
        }
        llvm_sys::LLVMTypeKind::LLVMPointerTypeKind
        | llvm_sys::LLVMTypeKind::LLVMDoubleTypeKind => 8,
        llvm_sys::LLVMTypeKind::LLVMFloatTypeKind => 4,
        _ => 1 << 16,
    };
    let ids = [u64::from(offset::WARPID), u64::from(offset::FLAT_TID)];
    // Pointers into the context with their byte offsets: the context, constant `i8` GEPs of
    // them, and loads of local variables that hold them (the source's own copies, before
    // SROA).
    let mut work = vec![(ctx, 0u64)];
    let mut seen = std::collections::HashSet::new();
    while let Some((v, off)) = work.pop() {
        if !seen.insert((v, off)) {
            continue;
        }
        for u in super::ir::users(v) {
            match super::ir::opcode(u) {
                O::LLVMGetElementPtr => {
                    let k = (c::LLVMGetNumOperands(u) == 2
                        && c::LLVMGetOperand(u, 0) == v
                        && c::LLVMGetGEPSourceElementType(u) == i8t)
                        .then(|| super::ir::const_u64(c::LLVMGetOperand(u, 1)))
                        .flatten();
                    match k {
                        Some(k) => work.push((u, off.wrapping_add(k))),
                        None => return false,
                    }
                }
                O::LLVMLoad => {
                    let end = off.saturating_add(bytes(c::LLVMTypeOf(u)));
                    if ids.iter().any(|&x| off < x + 4 && x < end) {
                        return false;
                    }
                }
                O::LLVMStore if c::LLVMGetOperand(u, 0) != v => {}
                O::LLVMStore => {
                    // The pointer kept in a local variable: follow its loads.
                    let dst = c::LLVMGetOperand(u, 1);
                    if c::LLVMIsAAllocaInst(dst).is_null() {
                        return false;
                    }
                    for l in super::ir::users(dst) {
                        match super::ir::opcode(l) {
                            O::LLVMLoad => work.push((l, off)),
                            O::LLVMStore if c::LLVMGetOperand(l, 1) == dst => {}
                            _ => return false,
                        }
                    }
                }
                _ => return false,
            }
        }
    }
    true
}

/// Builds `K.simd` (see the module doc). `known`: the only block the code runs with (the
/// runtime refuses other launches), whose sizes are then constants of `K.simd` and of the
/// warp functions (`pin_block`).
///
/// With static regions the fault replay (`mode` other than `MODE_ALL`: the runtime replays a
/// CTA lane by lane after a fault, to name the faulting thread, and the launch then fails) is
/// a function of its own, `K.simd.replay`, which `K.simd` calls: both are built from the same
/// code, one without the batch and one without the replay. The replay was a second copy of
/// every region in `K.simd` (its calls inlined like the rounds', a copy per state), about
/// half of the module's code in the barrier kernels of the benchmark suite. Out of `K.simd`
/// it is compiled without optimization (`cold_replay`), and `K.simd`'s batch code does not
/// see it.
#[allow(clippy::too_many_arguments)]
pub unsafe fn cta_fn(
    m: LLVMModuleRef,
    k: LLVMValueRef,
    w: LLVMValueRef,
    rows: Option<LLVMValueRef>,
    name: &str,
    params: &[ParamPlace],
    region_slot: RegionSlot,
    known: Option<[u32; 3]>,
) -> LLVMValueRef {
    // Before the CTA function inlines them: the context's accesses in a scope of their own.
    for f in [Some(w), rows.filter(|&r| r != w)].into_iter().flatten() {
        super::ctxscope::mark(f);
    }
    if let Some(block) = known {
        pin_block(w, block);
        if let Some(r) = rows.filter(|&r| r != w) {
            pin_block(r, block);
        }
    }
    let inputs = CtaInputs {
        m,
        k,
        w,
        rows,
        name,
        params,
        region_slot,
        known,
    };
    let build = |part: Part| cta_part(&inputs, part);
    if region_slot.scheme != Scheme::Regions {
        return build(Part::Whole).0;
    }
    let (replay, calls) = build(Part::Replay);
    let (f, _) = build(Part::Batch(replay));
    cold_replay(&calls);
    f
}

/// What `cta_part` builds of the CTA function.
#[derive(Clone, Copy)]
enum Part {
    /// `K.simd`, the replay inside.
    Whole,
    /// `K.simd`, whose replay calls this function (`K.simd.replay`).
    Batch(LLVMValueRef),
    /// `K.simd.replay`: the replay alone.
    Replay,
}

/// `cta_fn`'s arguments, which every part of the CTA function is built from.
#[derive(Clone, Copy)]
struct CtaInputs<'a> {
    m: LLVMModuleRef,
    k: LLVMValueRef,
    w: LLVMValueRef,
    rows: Option<LLVMValueRef>,
    name: &'a str,
    params: &'a [ParamPlace],
    region_slot: RegionSlot,
    known: Option<[u32; 3]>,
}

/// `cta_fn`'s `part`, and the warp-function calls of its replay (for `cold_replay`).
unsafe fn cta_part(inputs: &CtaInputs, part: Part) -> (LLVMValueRef, Vec<LLVMValueRef>) {
    let CtaInputs {
        m,
        k,
        w,
        rows,
        name,
        params,
        region_slot,
        known,
    } = *inputs;
    let scheme = region_slot.scheme;
    let co = scheme == Scheme::Coroutines;
    let regions = scheme == Scheme::Regions;
    let cx = c::LLVMGetModuleContext(m);
    let i8t = c::LLVMInt8TypeInContext(cx);
    let i16t = c::LLVMInt16TypeInContext(cx);
    let i32t = c::LLVMInt32TypeInContext(cx);
    let i64t = c::LLVMInt64TypeInContext(cx);
    let ptr = c::LLVMPointerTypeInContext(cx, 0);
    let mut pt = [ptr, ptr, ptr];
    let ft = c::LLVMFunctionType(c::LLVMVoidTypeInContext(cx), pt.as_mut_ptr(), 3, 0);
    let replay_part = matches!(part, Part::Replay);
    let fname = cs(&format!(
        "{name}.simd{}",
        if replay_part { ".replay" } else { "" }
    ));
    let f = c::LLVMAddFunction(m, fname.as_ptr(), ft);
    wide(cx, f);
    // The runtime's context is a whole `Thread`: LICM may then load what the warps read of it
    // (`%ctaid`, the shared block) before a loop over them, where the loads sit in a branch
    // (their TBAA type, `ctxscope`, tells them from the kernel's stores in the loop). Not the
    // replay, which is not optimized.
    if !replay_part {
        for (name, v) in [
            (c"dereferenceable", u64::from(offset::SIZE)),
            (c"align", std::mem::align_of::<usize>() as u64),
        ] {
            let kind = c::LLVMGetEnumAttributeKindForName(name.as_ptr(), name.to_bytes().len());
            c::LLVMAddAttributeAtIndex(f, 2, c::LLVMCreateEnumAttribute(cx, kind, v));
        }
    }
    if replay_part {
        c::LLVMSetLinkage(f, llvm_sys::LLVMLinkage::LLVMInternalLinkage);
        for a in [c"noinline", c"optnone"] {
            let kind = c::LLVMGetEnumAttributeKindForName(a.as_ptr(), a.to_bytes().len());
            let attr = c::LLVMCreateEnumAttribute(cx, kind, 0);
            c::LLVMAddAttributeAtIndex(f, llvm_sys::LLVMAttributeFunctionIndex, attr);
        }
    }
    let b = c::LLVMCreateBuilderInContext(cx);
    let n = c"".as_ptr();
    let bb = |s: &str| {
        let s = cs(s);
        c::LLVMAppendBasicBlockInContext(cx, f, s.as_ptr())
    };
    let entry = bb("entry");
    c::LLVMPositionBuilderAtEnd(b, entry);
    let (pbuf, ctx, fis) = (
        c::LLVMGetParam(f, 0),
        c::LLVMGetParam(f, 1),
        c::LLVMGetParam(f, 2),
    );
    let at = |base: LLVMValueRef, o: u32| {
        let mut idx = [c::LLVMConstInt(i64t, o as u64, 0)];
        c::LLVMBuildGEP2(b, i8t, base, idx.as_mut_ptr(), 1, n)
    };
    let ld = |t: LLVMTypeRef, base: LLVMValueRef, o: u32| c::LLVMBuildLoad2(b, t, at(base, o), n);
    let c32 = |v: u64| c::LLVMConstInt(i32t, v, 0);
    // The kernel's parameters, from the CUDA-layout buffer (as the coroutine entry does).
    let kt = c::LLVMGlobalGetValueType(k);
    let np = c::LLVMCountParamTypes(kt) as usize;
    let mut kp = vec![std::ptr::null_mut(); np];
    c::LLVMGetParamTypes(kt, kp.as_mut_ptr());
    let mut args: Vec<LLVMValueRef> = Vec::new();
    for (idx, &t) in kp.iter().enumerate() {
        let place = params.get(idx).copied().unwrap_or(ParamPlace {
            offset: 0,
            aggregate: false,
        });
        let a = at(pbuf, place.offset);
        args.push(if place.aggregate {
            a
        } else {
            let l = c::LLVMBuildLoad2(b, t, a, n);
            c::LLVMSetAlignment(l, 1);
            l
        });
    }
    let [nx, ny, nz] = match known {
        Some(block) => block.map(|v| c32(u64::from(v))),
        None => [0, 4, 8].map(|o| ld(i32t, ctx, offset::NTID + o)),
    };
    let nthreads = c::LLVMBuildMul(b, c::LLVMBuildMul(b, nx, ny, n), nz, n);
    let nwarps = c::LLVMBuildLShr(b, c::LLVMBuildAdd(b, nthreads, c32(31), n), c32(5), n);
    let gx = ld(i32t, ctx, offset::NCTAID);
    let gy = ld(i32t, ctx, offset::NCTAID + 4);
    // Aligned warps (`Facts::new`'s `rows`): one-dimensional blocks or `%ntid.x` a multiple
    // of 32; their warps have one `%tid.y`/`%tid.z`, which the context then holds.
    let one_d = c::LLVMBuildICmp(b, P::LLVMIntEQ, nthreads, nx, n);
    let xrem = c::LLVMBuildAnd(b, nx, c32(31), n);
    let x32 = c::LLVMBuildICmp(b, P::LLVMIntEQ, xrem, c32(0), n);
    let aligned = c::LLVMBuildOr(b, one_d, x32, n);
    // An aligned warp's `%tid.y/z` in the context, from its first thread's linear index. A
    // one-dimensional block has them 0, stored once here: the divisions and stores otherwise
    // cost as much as the rest of a barrier round's work per warp (they run at every
    // resumption), and a warp function's per-lane calls store a lane's `%tid.y/z`, which are
    // 0 too in such a block.
    for o in [4, 8] {
        c::LLVMBuildStore(b, c32(0), at(ctx, offset::TID + o));
    }
    let store_tid_yz = |first: LLVMValueRef| {
        let div = bb("tid.yz");
        let join = bb("tid.yz.join");
        c::LLVMBuildCondBr(b, one_d, join, div);
        c::LLVMPositionBuilderAtEnd(b, div);
        let row = c::LLVMBuildUDiv(b, first, nx, n);
        let ty = c::LLVMBuildURem(b, row, ny, n);
        let tz = c::LLVMBuildUDiv(b, row, ny, n);
        for (v, o) in [(ty, 4), (tz, 8)] {
            c::LLVMBuildStore(b, v, at(ctx, offset::TID + o));
        }
        c::LLVMBuildBr(b, join);
        c::LLVMPositionBuilderAtEnd(b, join);
    };
    // The warp and lane of slot `i` (a warp, or one lane's thread when a replay runs lanes
    // one by one) into the context, as the warp function expects them when it runs: `%warpid`
    // and the thread a fault names. Returns the warp, the lane and the warp's first thread.
    let set_ids = |i: LLVMValueRef, one_by_one: bool| {
        let (wi, lane) = if one_by_one {
            (
                c::LLVMBuildLShr(b, i, c32(5), n),
                c::LLVMBuildAnd(b, i, c32(31), n),
            )
        } else {
            (i, c32(0))
        };
        let s1 = c::LLVMBuildStore(b, wi, at(ctx, offset::WARPID));
        let first = c::LLVMBuildMul(b, wi, c32(32), n);
        let flat = c::LLVMBuildAdd(b, first, lane, n);
        let s2 = c::LLVMBuildStore(b, flat, at(ctx, offset::FLAT_TID));
        if !one_by_one {
            super::ctxscope::tag_context(s1);
            super::ctxscope::tag_context(s2);
        }
        (wi, lane, first)
    };
    // Kernels with CTA barriers: the warps' slots (mailbox and frame) and coroutine handles;
    // a replay runs a coroutine per lane, with mailboxes only (`barrier.rs`).
    let null = std::ptr::null_mut();
    let (arena, handles) = if co {
        let bytes = c::LLVMBuildMul(b, nwarps, c32(SLOT as u64), n);
        let a = c::LLVMBuildArrayAlloca(b, i8t, bytes, n);
        c::LLVMSetAlignment(a, HEAD);
        let h = c::LLVMBuildAlloca(b, c::LLVMArrayType2(ptr, 1024), n);
        (a, h)
    } else {
        (null, null)
    };
    // The region scheme: the warps' slots (mailbox and frame; a replay's per-lane slots come
    // from `malloc`, as there are 32 times as many) and the CTA's `bar.red` results.
    let stride_r = region_slot.size.div_ceil(region_slot.align.max(1)) * region_slot.align.max(1);
    let (r_arena, results) = if regions {
        let bytes = c::LLVMBuildMul(b, nwarps, c32(stride_r as u64), n);
        let a = c::LLVMBuildArrayAlloca(b, i8t, bytes, n);
        c::LLVMSetAlignment(a, region_slot.align);
        (
            a,
            c::LLVMBuildAlloca(b, c::LLVMArrayType2(i32t, guard::LEN as u64), n),
        )
    } else {
        (null, null)
    };
    // Whether some coroutine waits, and the round's `bar.red` reductions.
    let [waiting, popc, all, any] = if co || regions {
        [0; 4].map(|_| c::LLVMBuildAlloca(b, i32t, n))
    } else {
        [null; 4]
    };
    // The lockstep rounds' smallest and largest state (`region_warps`).
    let [states_lo, states_hi, lead] = if regions {
        [0; 3].map(|_| c::LLVMBuildAlloca(b, i32t, n))
    } else {
        [null; 3]
    };
    let mode = ld(i32t, fis, off::MODE);
    let batch = bb("batch");
    let replay = bb("replay");
    let is_all = c::LLVMBuildICmp(b, P::LLVMIntEQ, mode, c32(MODE_ALL as u64), n);
    c::LLVMBuildCondBr(b, is_all, batch, replay);

    // One CTA's warps, at the current insertion point; returns the block it ends in. With
    // `one_by_one` each warp runs lane by lane (a fault replay names the faulting thread).
    let warps = |from: LLVMBasicBlockRef, tag: &str, one_by_one: bool| -> LLVMBasicBlockRef {
        let lp = bb(&format!("{tag}.warp"));
        let done = bb(&format!("{tag}.warps.done"));
        c::LLVMBuildBr(b, lp);
        c::LLVMPositionBuilderAtEnd(b, lp);
        let wi = c::LLVMBuildPhi(b, i32t, n);
        c::LLVMBuildStore(b, wi, at(ctx, offset::WARPID));
        let (lanes, lane_loop) = if one_by_one {
            let ll = bb(&format!("{tag}.lane"));
            c::LLVMBuildBr(b, ll);
            c::LLVMPositionBuilderAtEnd(b, ll);
            let li = c::LLVMBuildPhi(b, i32t, n);
            (c::LLVMBuildShl(b, c32(1), li, n), Some((ll, li)))
        } else {
            (c::LLVMConstAllOnes(i32t), None)
        };
        let mut cargs = vec![ctx, wi, nthreads, lanes];
        cargs.extend(args.iter().copied());
        let wt = c::LLVMGlobalGetValueType(w);
        let (cont, call_bb) = if let Some(r) = rows {
            let rb = bb(&format!("{tag}.rows"));
            let gb = bb(&format!("{tag}.general"));
            let cont = bb(&format!("{tag}.called"));
            c::LLVMBuildCondBr(b, aligned, rb, gb);
            c::LLVMPositionBuilderAtEnd(b, rb);
            store_tid_yz(c::LLVMBuildMul(b, wi, c32(32), n));
            c::LLVMBuildCall2(b, wt, r, cargs.as_mut_ptr(), cargs.len() as u32, n);
            c::LLVMBuildBr(b, cont);
            c::LLVMPositionBuilderAtEnd(b, gb);
            (Some(cont), gb)
        } else {
            (None, lp)
        };
        let _ = call_bb;
        c::LLVMBuildCall2(b, wt, w, cargs.as_mut_ptr(), cargs.len() as u32, n);
        if let Some(cont) = cont {
            c::LLVMBuildBr(b, cont);
            c::LLVMPositionBuilderAtEnd(b, cont);
        }
        if let Some((ll, li)) = lane_loop {
            let ln = c::LLVMBuildAdd(b, li, c32(1), n);
            let more = c::LLVMBuildICmp(b, P::LLVMIntULT, ln, c32(32), n);
            let after = bb(&format!("{tag}.lanes.done"));
            let here = c::LLVMGetInsertBlock(b);
            c::LLVMBuildCondBr(b, more, ll, after);
            let mut v = [c32(0), ln];
            let mut bbs = [lp, here];
            c::LLVMAddIncoming(li, v.as_mut_ptr(), bbs.as_mut_ptr(), 2);
            c::LLVMPositionBuilderAtEnd(b, after);
        }
        let latch = c::LLVMGetInsertBlock(b);
        let next = c::LLVMBuildAdd(b, wi, c32(1), n);
        let more = c::LLVMBuildICmp(b, P::LLVMIntULT, next, nwarps, n);
        c::LLVMBuildCondBr(b, more, lp, done);
        let mut v = [c32(0), next];
        let mut bbs = [from, latch];
        c::LLVMAddIncoming(wi, v.as_mut_ptr(), bbs.as_mut_ptr(), 2);
        c::LLVMPositionBuilderAtEnd(b, done);
        done
    };

    // The same for a kernel with CTA barriers: each warp (each lane of each warp, with
    // `one_by_one`) a coroutine, started in order and then resumed round by round while some
    // wait at the barrier; between rounds the `bar.red` contributions are combined.
    let co_warps = |from: LLVMBasicBlockRef, tag: &str, one_by_one: bool| -> LLVMBasicBlockRef {
        let (count, stride, cap) = if one_by_one {
            (c::LLVMBuildMul(b, nwarps, c32(32), n), HEAD, 0)
        } else {
            (nwarps, SLOT, SLOT - HEAD)
        };
        let _ = from;
        // A loop over the coroutines, `body(i)` each; returns at its end.
        let each = |name: &str, body: &dyn Fn(LLVMValueRef)| {
            let pre = c::LLVMGetInsertBlock(b);
            let lp = bb(&format!("{tag}.{name}"));
            c::LLVMBuildBr(b, lp);
            c::LLVMPositionBuilderAtEnd(b, lp);
            let i = c::LLVMBuildPhi(b, i32t, n);
            body(i);
            let latch = c::LLVMGetInsertBlock(b);
            let next = c::LLVMBuildAdd(b, i, c32(1), n);
            let more = c::LLVMBuildICmp(b, P::LLVMIntULT, next, count, n);
            let after = bb(&format!("{tag}.{name}.done"));
            c::LLVMBuildCondBr(b, more, lp, after);
            let mut v = [c32(0), next];
            let mut bbs = [pre, latch];
            c::LLVMAddIncoming(i, v.as_mut_ptr(), bbs.as_mut_ptr(), 2);
            c::LLVMPositionBuilderAtEnd(b, after);
        };
        let slot = |i: LLVMValueRef| {
            let mut idx = [c::LLVMBuildMul(b, i, c32(stride as u64), n)];
            c::LLVMBuildGEP2(b, i8t, arena, idx.as_mut_ptr(), 1, n)
        };
        let mail = |i: LLVMValueRef, k: u32| at(slot(i), 4 * k);
        let handle = |i: LLVMValueRef| {
            let mut idx = [c32(0), i];
            c::LLVMBuildGEP2(
                b,
                c::LLVMArrayType2(ptr, 1024),
                handles,
                idx.as_mut_ptr(),
                2,
                n,
            )
        };
        // The warp and lane of coroutine `i`, in the context as the warp function expects
        // them when it runs: `%warpid`, the thread a fault names, an aligned warp's
        // `%tid.y/z`.
        let ids = |i: LLVMValueRef| {
            let (wi, lane, first) = set_ids(i, one_by_one);
            store_tid_yz(first);
            (wi, lane)
        };
        let wt = c::LLVMGlobalGetValueType(w);
        each("start", &|i| {
            c::LLVMBuildStore(b, c32(cap as u64), mail(i, barrier::field::CAP));
            let (wi, lane) = ids(i);
            let lanes = if one_by_one {
                c::LLVMBuildShl(b, c32(1), lane, n)
            } else {
                c::LLVMConstAllOnes(i32t)
            };
            let mut cargs = vec![ctx, wi, nthreads, lanes];
            cargs.extend(args.iter().copied());
            cargs.push(slot(i));
            let f = match rows {
                Some(r) => c::LLVMBuildSelect(b, aligned, r, w, n),
                None => w,
            };
            let h = c::LLVMBuildCall2(b, wt, f, cargs.as_mut_ptr(), cargs.len() as u32, n);
            c::LLVMBuildStore(b, h, handle(i));
        });
        // A round: the contributions of the waiting coroutines, then each resumed.
        let round = bb(&format!("{tag}.round"));
        let done = bb(&format!("{tag}.warps.done"));
        c::LLVMBuildBr(b, round);
        c::LLVMPositionBuilderAtEnd(b, round);
        for (acc, v) in [(waiting, 0), (popc, 0), (all, 1), (any, 0)] {
            c::LLVMBuildStore(b, c32(v), acc);
        }
        let waits = |i: LLVMValueRef| {
            let st = c::LLVMBuildLoad2(b, i32t, mail(i, barrier::field::STATE), n);
            c::LLVMBuildICmp(b, P::LLVMIntEQ, st, c32(barrier::WAITING), n)
        };
        let when = |cond: LLVMValueRef, name: &str, body: &dyn Fn()| {
            let yes = bb(&format!("{tag}.{name}"));
            let join = bb(&format!("{tag}.{name}.join"));
            c::LLVMBuildCondBr(b, cond, yes, join);
            c::LLVMPositionBuilderAtEnd(b, yes);
            body();
            c::LLVMBuildBr(b, join);
            c::LLVMPositionBuilderAtEnd(b, join);
        };
        each("gather", &|i| {
            when(waits(i), "waits", &|| {
                let acc =
                    |p: LLVMValueRef,
                     k: u32,
                     op: &dyn Fn(LLVMValueRef, LLVMValueRef) -> LLVMValueRef| {
                        let old = c::LLVMBuildLoad2(b, i32t, p, n);
                        let v = c::LLVMBuildLoad2(b, i32t, mail(i, k), n);
                        c::LLVMBuildStore(b, op(old, v), p);
                    };
                c::LLVMBuildStore(b, c32(1), waiting);
                acc(popc, barrier::field::POPC, &|x, y| {
                    c::LLVMBuildAdd(b, x, y, n)
                });
                acc(all, barrier::field::ALL, &|x, y| {
                    c::LLVMBuildAnd(b, x, y, n)
                });
                acc(any, barrier::field::ANY, &|x, y| c::LLVMBuildOr(b, x, y, n));
            });
        });
        let some = c::LLVMBuildLoad2(b, i32t, waiting, n);
        let some = c::LLVMBuildICmp(b, P::LLVMIntNE, some, c32(0), n);
        let go = bb(&format!("{tag}.release"));
        c::LLVMBuildCondBr(b, some, go, done);
        c::LLVMPositionBuilderAtEnd(b, go);
        let resume = c::LLVMGetIntrinsicDeclaration(
            m,
            c::LLVMLookupIntrinsicID(c"llvm.coro.resume".as_ptr(), 16),
            std::ptr::null_mut(),
            0,
        );
        each("resume", &|i| {
            when(waits(i), "resumes", &|| {
                for (p, k) in [
                    (popc, barrier::field::POPC),
                    (all, barrier::field::ALL),
                    (any, barrier::field::ANY),
                ] {
                    let v = c::LLVMBuildLoad2(b, i32t, p, n);
                    c::LLVMBuildStore(b, v, mail(i, k));
                }
                ids(i);
                let mut h = [c::LLVMBuildLoad2(b, ptr, handle(i), n)];
                c::LLVMBuildCall2(
                    b,
                    c::LLVMGlobalGetValueType(resume),
                    resume,
                    h.as_mut_ptr(),
                    1,
                    n,
                );
            });
        });
        c::LLVMBuildBr(b, round);
        c::LLVMPositionBuilderAtEnd(b, done);
        done
    };

    // The region scheme: each warp (each lane, with `one_by_one`) has a state in its
    // mailbox, 0 at the start; a round calls the warp function of every unfinished warp at
    // its state (the call is inlined), which runs it to its next barrier or end; between
    // rounds the `bar.red` contributions are combined. A round ends when every unfinished
    // warp waits again, as with coroutines. The replay's calls of the warp functions are
    // recorded for `cold_replay`.
    let replay_calls = std::cell::RefCell::new(Vec::new());
    let region_warps = |tag: &str, one_by_one: bool| {
        let count = if one_by_one {
            c::LLVMBuildMul(b, nwarps, c32(32), n)
        } else {
            nwarps
        };
        let heap = if one_by_one {
            let bytes = c::LLVMBuildMul(b, count, c32(stride_r as u64), n);
            let bytes = c::LLVMBuildAdd(b, bytes, c32(region_slot.align as u64), n);
            let bytes = c::LLVMBuildZExt(b, bytes, i64t, n);
            let mut pt = [i64t];
            let ft = c::LLVMFunctionType(ptr, pt.as_mut_ptr(), 1, 0);
            let mut mf = c::LLVMGetNamedFunction(m, c"malloc".as_ptr());
            if mf.is_null() {
                mf = c::LLVMAddFunction(m, c"malloc".as_ptr(), ft);
            }
            let mut a = [bytes];
            Some(c::LLVMBuildCall2(b, ft, mf, a.as_mut_ptr(), 1, n))
        } else {
            None
        };
        let base = match heap {
            Some(p) => {
                let pi = c::LLVMBuildPtrToInt(b, p, i64t, n);
                let al = region_slot.align as u64;
                let up = c::LLVMBuildAdd(b, pi, c::LLVMConstInt(i64t, al - 1, 0), n);
                let ai = c::LLVMBuildAnd(b, up, c::LLVMConstInt(i64t, !(al - 1), 0), n);
                c::LLVMBuildIntToPtr(b, ai, ptr, n)
            }
            None => r_arena,
        };
        // A loop over the warps from `start`, `body(i)` each.
        let each_from = |name: &str, start: LLVMValueRef, body: &dyn Fn(LLVMValueRef)| {
            let pre = c::LLVMGetInsertBlock(b);
            let lp = bb(&format!("{tag}.{name}"));
            let after = bb(&format!("{tag}.{name}.done"));
            let nonempty = c::LLVMBuildICmp(b, P::LLVMIntULT, start, count, n);
            c::LLVMBuildCondBr(b, nonempty, lp, after);
            c::LLVMPositionBuilderAtEnd(b, lp);
            let i = c::LLVMBuildPhi(b, i32t, n);
            body(i);
            let latch = c::LLVMGetInsertBlock(b);
            let next = c::LLVMBuildAdd(b, i, c32(1), n);
            let more = c::LLVMBuildICmp(b, P::LLVMIntULT, next, count, n);
            c::LLVMBuildCondBr(b, more, lp, after);
            let mut v = [start, next];
            let mut bbs = [pre, latch];
            c::LLVMAddIncoming(i, v.as_mut_ptr(), bbs.as_mut_ptr(), 2);
            c::LLVMPositionBuilderAtEnd(b, after);
        };
        let each = |name: &str, body: &dyn Fn(LLVMValueRef)| each_from(name, c32(0), body);
        let slot = |i: LLVMValueRef| {
            let mut idx = [c::LLVMBuildMul(b, i, c32(stride_r as u64), n)];
            c::LLVMBuildGEP2(b, i8t, base, idx.as_mut_ptr(), 1, n)
        };
        let mail = |i: LLVMValueRef, k: u32| at(slot(i), 4 * k);
        let shared = ld(ptr, ctx, offset::SHARED);
        let lockstep_kernel = (1..=LOCKSTEP_MAX).contains(&region_slot.states);
        let lockstep = !one_by_one && lockstep_kernel;
        let (lo, hi) = (states_lo, states_hi);
        let wt = c::LLVMGlobalGetValueType(w);
        // One warp's region: `how` says which warp function at which state (`None`: the
        // warp's own state, and the function its alignment picks).
        let res = |k: u32| {
            let mut idx = [c32(0), c32(k as u64)];
            let t = c::LLVMArrayType2(i32t, guard::LEN as u64);
            c::LLVMBuildGEP2(b, t, results, idx.as_mut_ptr(), 2, n)
        };
        // With `skip` (lockstep rounds of that state in a kernel with skip guards), a warp
        // whose `%tid.x` the guard a warp of this round published makes idle is not run: it
        // takes the values the same in every warp from the last warp that ran, and the state
        // the guard names.
        // With `ordered` (ordered rounds, `how` given), the warp is at that state and runs
        // on: no state is read or kept, and none is tested for the end or for a barrier.
        // Lockstep rounds in a kernel that never takes the general round (every warp meets
        // the same barriers, `barrier::alike`, all of one warp function), with no round that
        // reads a warp's state as its region's (`SHARED_STATE`: rounds of states 1 and up
        // without pairs or skip guards share one copy): every live warp is at the round's
        // state, which the CTA function knows from the states the warps returned, so a warp's
        // slot is only ever tested for `DONE` and is stored only when the warp finishes. Its
        // other value is the last state stored (0 at the start), which is live. Each store
        // was one more per warp and round (matmul's tile and k-loop rounds); see `store_state`.
        let done_only = lockstep
            && region_slot.alike
            && rows.is_none_or(|r| r == w)
            && region_slot.skip.is_none()
            && (region_slot.states == 0
                || !paired_states(w, region_slot).is_empty()
                || rows.is_some_and(|r| !paired_states(r, region_slot).is_empty()));
        // The warp's state after its region (`ns`) into its slot: with `done_only` only when
        // it finished (a branch that LLVM folds away where `ns` is a constant: on the paths
        // through an inlined region).
        let store_state = |x: LLVMValueRef, ns: LLVMValueRef| {
            if !done_only {
                c::LLVMBuildStore(b, ns, mail(x, barrier::field::STATE));
                return;
            }
            let fin = c::LLVMBuildICmp(b, P::LLVMIntEQ, ns, c32(barrier::DONE as u64), n);
            let yes = bb(&format!("{tag}.finished"));
            let on = bb(&format!("{tag}.finished.join"));
            c::LLVMBuildCondBr(b, fin, yes, on);
            c::LLVMPositionBuilderAtEnd(b, yes);
            c::LLVMBuildStore(b, ns, mail(x, barrier::field::STATE));
            c::LLVMBuildBr(b, on);
            c::LLVMPositionBuilderAtEnd(b, on);
        };
        let run_one = |i: LLVMValueRef,
                       how: Option<(LLVMValueRef, u32)>,
                       skip: Option<u32>,
                       ordered: bool| {
            let go = bb(&format!("{tag}.go"));
            let join = bb(&format!("{tag}.go.join"));
            let st = match how.filter(|_| ordered) {
                Some((_, k)) => {
                    c::LLVMBuildBr(b, go);
                    c32(k as u64)
                }
                None => {
                    let st = c::LLVMBuildLoad2(b, i32t, mail(i, barrier::field::STATE), n);
                    let live = c::LLVMBuildICmp(b, P::LLVMIntNE, st, c32(barrier::DONE as u64), n);
                    c::LLVMBuildCondBr(b, live, go, join);
                    st
                }
            };
            c::LLVMPositionBuilderAtEnd(b, go);
            let skipped = skip.zip(region_slot.skip).map(|(k, (ufront, _))| {
                let code = c::LLVMBuildLoad2(b, i32t, res(guard::CODE), n);
                // The warp's first `%tid.x`: a division only for blocks of several rows.
                let first = c::LLVMBuildMul(b, i, c32(32), n);
                let here = c::LLVMGetInsertBlock(b);
                let rowsb = bb(&format!("{tag}.skip.rows"));
                let known = bb(&format!("{tag}.skip.test"));
                c::LLVMBuildCondBr(b, one_d, known, rowsb);
                c::LLVMPositionBuilderAtEnd(b, rowsb);
                let wrapped = c::LLVMBuildURem(b, first, nx, n);
                c::LLVMBuildBr(b, known);
                c::LLVMPositionBuilderAtEnd(b, known);
                let lo = super::ir::phi(b, i32t, n, &[(first, here), (wrapped, rowsb)]);
                let hi = c::LLVMBuildAdd(b, lo, c32(31), n);
                let a = c::LLVMBuildLoad2(b, i32t, res(guard::LO), n);
                let z = c::LLVMBuildLoad2(b, i32t, res(guard::HI), n);
                let cmp = |p: P, x: LLVMValueRef, y: LLVMValueRef| c::LLVMBuildICmp(b, p, x, y, n);
                let inside =
                    c::LLVMBuildAnd(b, cmp(P::LLVMIntUGE, lo, a), cmp(P::LLVMIntULE, hi, z), n);
                let outside =
                    c::LLVMBuildOr(b, cmp(P::LLVMIntULT, hi, a), cmp(P::LLVMIntUGT, lo, z), n);
                let want_in = cmp(P::LLVMIntEQ, code, c32(2 * k as u64 + 1));
                let want_out = cmp(P::LLVMIntEQ, code, c32(2 * k as u64 + 2));
                let idle = c::LLVMBuildOr(
                    b,
                    c::LLVMBuildAnd(b, want_in, inside, n),
                    c::LLVMBuildAnd(b, want_out, outside, n),
                    n,
                );
                let idle = c::LLVMBuildAnd(b, idle, aligned, n);
                let sb = bb(&format!("{tag}.skip"));
                let rb = bb(&format!("{tag}.run"));
                let cont = bb(&format!("{tag}.ran"));
                c::LLVMBuildCondBr(b, idle, sb, rb);
                c::LLVMPositionBuilderAtEnd(b, sb);
                if ufront > 0 {
                    let l = c::LLVMBuildLoad2(b, i32t, lead, n);
                    let from = at(slot(l), HEAD);
                    c::LLVMBuildMemCpy(b, at(slot(i), HEAD), HEAD, from, HEAD, c32(ufront as u64));
                }
                let next = c::LLVMBuildLoad2(b, i32t, res(guard::NEXT), n);
                c::LLVMBuildBr(b, cont);
                c::LLVMPositionBuilderAtEnd(b, rb);
                c::LLVMBuildStore(b, i, lead);
                (sb, next, cont)
            });
            let (wi, lane, first) = set_ids(i, one_by_one);
            let lanes = if one_by_one {
                c::LLVMBuildShl(b, c32(1), lane, n)
            } else {
                c::LLVMConstAllOnes(i32t)
            };
            let mut cargs = vec![ctx, wi, nthreads, lanes];
            cargs.extend(args.iter().copied());
            cargs.extend([slot(i), st, results, shared]);
            // Direct calls (an aligned block's warps take `rows`), so that both inline.
            // With lockstep rounds for more than `SPECIALIZE_MAX` barriers, the other rounds
            // (warps at different barriers, and fault replays), rare, call the warp function
            // instead of inlining it: with a copy per state for the lockstep rounds, the
            // inlined fallbacks (both warp functions, twice) had made the 9-barrier block
            // reduction compile 1.7x slower. (Kernels with fewer barriers keep them inline:
            // the halving reduction ran 12% slower with the calls, though it never takes
            // them.)
            let fallback = lockstep_kernel && region_slot.states > SPECIALIZE_MAX && how.is_none();
            let call_at = |f: LLVMValueRef, state: LLVMValueRef| {
                let mut a = cargs.clone();
                let k = a.len() - 3;
                a[k] = state;
                let call = c::LLVMBuildCall2(b, wt, f, a.as_mut_ptr(), a.len() as u32, n);
                if fallback {
                    let kind = c::LLVMGetEnumAttributeKindForName(c"noinline".as_ptr(), 8);
                    let attr = c::LLVMCreateEnumAttribute(cx, kind, 0);
                    c::LLVMAddCallSiteAttribute(call, llvm_sys::LLVMAttributeFunctionIndex, attr);
                }
                if one_by_one {
                    replay_calls.borrow_mut().push(call);
                }
                call
            };
            // A copy per state (`SPECIALIZE_MAX`) when there are no lockstep rounds, chosen by
            // a switch the warps of a round mostly agree on.
            let call = |f: LLVMValueRef| {
                let states = region_slot.states;
                if lockstep || fallback || states == 0 || states > SPECIALIZE_MAX {
                    return call_at(f, st);
                }
                let first = bb(&format!("{tag}.state0"));
                let join = bb(&format!("{tag}.state.join"));
                let sw = c::LLVMBuildSwitch(b, st, first, states);
                let mut vals = Vec::new();
                let mut ends = Vec::new();
                for k in 0..=states {
                    let blk = if k == 0 {
                        first
                    } else {
                        let blk = bb(&format!("{tag}.state{k}"));
                        c::LLVMAddCase(sw, c32(k as u64), blk);
                        blk
                    };
                    c::LLVMPositionBuilderAtEnd(b, blk);
                    vals.push(call_at(f, c32(k as u64)));
                    ends.push(c::LLVMGetInsertBlock(b));
                    c::LLVMBuildBr(b, join);
                }
                c::LLVMPositionBuilderAtEnd(b, join);
                let p = c::LLVMBuildPhi(b, i32t, n);
                c::LLVMAddIncoming(p, vals.as_mut_ptr(), ends.as_mut_ptr(), vals.len() as u32);
                p
            };
            let ns = match (how, rows) {
                (Some((f, k)), _) => {
                    if rows == Some(f) {
                        store_tid_yz(first);
                    }
                    call_at(f, if k == SHARED_STATE { st } else { c32(k as u64) })
                }
                (None, Some(r)) if r != w => {
                    let rb = bb(&format!("{tag}.rows"));
                    let gb = bb(&format!("{tag}.general"));
                    let cont = bb(&format!("{tag}.called"));
                    c::LLVMBuildCondBr(b, aligned, rb, gb);
                    c::LLVMPositionBuilderAtEnd(b, rb);
                    store_tid_yz(first);
                    let x = call(r);
                    let rb_end = c::LLVMGetInsertBlock(b);
                    c::LLVMBuildBr(b, cont);
                    c::LLVMPositionBuilderAtEnd(b, gb);
                    let y = call(w);
                    let gb_end = c::LLVMGetInsertBlock(b);
                    c::LLVMBuildBr(b, cont);
                    c::LLVMPositionBuilderAtEnd(b, cont);
                    super::ir::phi(b, i32t, n, &[(x, rb_end), (y, gb_end)])
                }
                (None, Some(r)) => {
                    store_tid_yz(first);
                    call(r)
                }
                (None, None) => call(w),
            };
            let ns = match skipped {
                Some((sb, next, cont)) => {
                    let rb_end = c::LLVMGetInsertBlock(b);
                    c::LLVMBuildBr(b, cont);
                    c::LLVMPositionBuilderAtEnd(b, cont);
                    super::ir::phi(b, i32t, n, &[(next, sb), (ns, rb_end)])
                }
                None => ns,
            };
            if ordered {
                c::LLVMBuildBr(b, join);
                c::LLVMPositionBuilderAtEnd(b, join);
                return;
            }
            // Lockstep rounds only (`how`): the general round and replays read each warp's
            // state as its region's.
            if how.is_some() {
                store_state(i, ns);
            } else {
                c::LLVMBuildStore(b, ns, mail(i, barrier::field::STATE));
            }
            let waits = c::LLVMBuildICmp(b, P::LLVMIntNE, ns, c32(barrier::DONE as u64), n);
            let wb = bb(&format!("{tag}.waits"));
            c::LLVMBuildCondBr(b, waits, wb, join);
            c::LLVMPositionBuilderAtEnd(b, wb);
            c::LLVMBuildStore(b, c32(1), waiting);
            if lockstep {
                for (p, pred) in [(lo, P::LLVMIntULT), (hi, P::LLVMIntUGT)] {
                    let old = c::LLVMBuildLoad2(b, i32t, p, n);
                    let keep = c::LLVMBuildICmp(b, pred, old, ns, n);
                    c::LLVMBuildStore(b, c::LLVMBuildSelect(b, keep, old, ns, n), p);
                }
            }
            if region_slot.red {
                let acc =
                    |p: LLVMValueRef,
                     k: u32,
                     op: &dyn Fn(LLVMValueRef, LLVMValueRef) -> LLVMValueRef| {
                        let old = c::LLVMBuildLoad2(b, i32t, p, n);
                        let v = c::LLVMBuildLoad2(b, i32t, mail(i, k), n);
                        c::LLVMBuildStore(b, op(old, v), p);
                    };
                acc(popc, barrier::field::POPC, &|x, y| {
                    c::LLVMBuildAdd(b, x, y, n)
                });
                acc(all, barrier::field::ALL, &|x, y| {
                    c::LLVMBuildAnd(b, x, y, n)
                });
                acc(any, barrier::field::ANY, &|x, y| c::LLVMBuildOr(b, x, y, n));
            }
            c::LLVMBuildBr(b, join);
            c::LLVMPositionBuilderAtEnd(b, join);
        };
        // Lockstep rounds in pairs: for a state `paired_states` names (warp function `f`
        // never reads the ids the CTA function stores before each call, and the region loads
        // shared memory and stores none), a loop over pairs of warps runs both regions back to
        // back, with both states tested once before them and no store to the context between
        // them, so that what the two regions load alike is loaded once. Each warp's code runs
        // in its own order, the first warp's region before the second's, as in the loop over
        // single warps; that loop takes the warps left: the last of an odd count, and from a
        // pair with a finished warp on. Returns nothing; the builder ends after both loops.
        let pairs_w = paired_states(w, region_slot);
        let pairs_r = rows
            .map(|r| paired_states(r, region_slot))
            .unwrap_or_default();
        let paired = |f: LLVMValueRef, k: u32| {
            if Some(f) == rows {
                pairs_r.contains(&k)
            } else {
                pairs_w.contains(&k)
            }
        };
        let lockstep_loop = |name: &str, f: LLVMValueRef, k: u32, skip: Option<u32>| {
            if skip.is_some() || !paired(f, k) {
                each(name, &|i| run_one(i, Some((f, k)), skip, false));
                return;
            }
            let pre = c::LLVMGetInsertBlock(b);
            let lp = bb(&format!("{tag}.{name}.pair"));
            let fast = bb(&format!("{tag}.{name}.both"));
            let after = bb(&format!("{tag}.{name}.pairs.done"));
            let two = c::LLVMBuildICmp(b, P::LLVMIntUGE, count, c32(2), n);
            c::LLVMBuildCondBr(b, two, lp, after);
            c::LLVMPositionBuilderAtEnd(b, lp);
            let i = c::LLVMBuildPhi(b, i32t, n);
            let j = c::LLVMBuildAdd(b, i, c32(1), n);
            let live = |x: LLVMValueRef| {
                let st = c::LLVMBuildLoad2(b, i32t, mail(x, barrier::field::STATE), n);
                c::LLVMBuildICmp(b, P::LLVMIntNE, st, c32(barrier::DONE as u64), n)
            };
            let both = c::LLVMBuildAnd(b, live(i), live(j), n);
            c::LLVMBuildCondBr(b, both, fast, after);
            c::LLVMPositionBuilderAtEnd(b, fast);
            for x in [i, j] {
                if rows == Some(f) {
                    store_tid_yz(c::LLVMBuildMul(b, x, c32(32), n));
                }
                let mut a = vec![ctx, x, nthreads, c::LLVMConstAllOnes(i32t)];
                a.extend(args.iter().copied());
                a.extend([slot(x), c32(k as u64), results, shared]);
                let ns = c::LLVMBuildCall2(b, wt, f, a.as_mut_ptr(), a.len() as u32, n);
                store_state(x, ns);
                // As `run_one`, without a branch: a warp that stopped at a barrier is waiting
                // and moves the round's smallest and largest state.
                let waits = c::LLVMBuildICmp(b, P::LLVMIntNE, ns, c32(barrier::DONE as u64), n);
                let old = c::LLVMBuildLoad2(b, i32t, waiting, n);
                let some = c::LLVMBuildOr(b, old, c::LLVMBuildZExt(b, waits, i32t, n), n);
                c::LLVMBuildStore(b, some, waiting);
                for (p, pred) in [(lo, P::LLVMIntULT), (hi, P::LLVMIntUGT)] {
                    let old = c::LLVMBuildLoad2(b, i32t, p, n);
                    let keep = c::LLVMBuildICmp(b, pred, old, ns, n);
                    let keep = c::LLVMBuildOr(b, keep, c::LLVMBuildNot(b, waits, n), n);
                    c::LLVMBuildStore(b, c::LLVMBuildSelect(b, keep, old, ns, n), p);
                }
            }
            let next = c::LLVMBuildAdd(b, i, c32(2), n);
            let more = c::LLVMBuildICmp(
                b,
                P::LLVMIntULE,
                c::LLVMBuildAdd(b, next, c32(2), n),
                count,
                n,
            );
            let fast_end = c::LLVMGetInsertBlock(b);
            c::LLVMBuildCondBr(b, more, lp, after);
            let mut v = [c32(0), next];
            let mut bbs = [pre, fast_end];
            c::LLVMAddIncoming(i, v.as_mut_ptr(), bbs.as_mut_ptr(), 2);
            c::LLVMPositionBuilderAtEnd(b, after);
            let start = super::ir::phi(b, i32t, n, &[(c32(0), pre), (i, lp), (next, fast_end)]);
            each_from(name, start, &|i| run_one(i, Some((f, k)), skip, false));
        };
        // An ordered round of the aligned warp function `r` at state `k`: when `peel` names
        // it, warp 0 on its own (a CTA has one at least), then the others, so that a branch on
        // the warp (`if (warp == 0)` before a block's last reduction step) is decided in
        // both copies: the other warps' region was a loop of the whole region's tests
        // (reduce_warp: 40% of its kernel samples in the round after its barrier).
        // The last round under a skip guard too (a block reduction's `if (t == 0)
        // atomicAdd(sum, s[0])`): the warps that skip it leave an empty loop, and warp 0's copy
        // follows the round before in straight-line code, whose store of `s[0]` GVN then hands
        // to its load (a loop over warps, whose body calls the runtime, kept it a reload).
        let rows_round = |name: &str, r: LLVMValueRef, k: u32, skip: Option<u32>| {
            let last_skipped = skip.is_some() && k == region_slot.states;
            if k < 64 && region_slot.peel >> k & 1 != 0 || last_skipped {
                run_one(c32(0), Some((r, k)), skip, true);
                each_from(name, c32(1), &|i| run_one(i, Some((r, k)), skip, true));
            } else {
                each(name, &|i| run_one(i, Some((r, k)), skip, true));
            }
        };
        // Ordered rounds: every warp meets the barriers in order (`barrier::in_order`), so
        // round k runs region k of every warp, the state a constant, and nothing is kept or
        // tested per warp between rounds (a lockstep round loaded, tested and stored each
        // warp's state and gathered the smallest and largest).
        if !one_by_one && region_slot.in_order && !region_slot.red {
            for k in 0..=region_slot.states {
                let skip = region_slot.skip.map(|_| k);
                if skip.is_some() {
                    c::LLVMBuildStore(b, c32(0), res(guard::CODE));
                }
                let name = format!("ordered{k}.run");
                match rows {
                    Some(r) if r != w => {
                        let rb = bb(&format!("{tag}.ordered{k}.rows"));
                        let gb = bb(&format!("{tag}.ordered{k}.general"));
                        let cont = bb(&format!("{tag}.ordered{k}.done"));
                        c::LLVMBuildCondBr(b, aligned, rb, gb);
                        c::LLVMPositionBuilderAtEnd(b, rb);
                        rows_round(&name, r, k, skip);
                        c::LLVMBuildBr(b, cont);
                        c::LLVMPositionBuilderAtEnd(b, gb);
                        each(&name, &|i| run_one(i, Some((w, k)), None, true));
                        c::LLVMBuildBr(b, cont);
                        c::LLVMPositionBuilderAtEnd(b, cont);
                    }
                    Some(r) => rows_round(&name, r, k, skip),
                    None => rows_round(&name, w, k, skip),
                }
            }
            return c::LLVMGetInsertBlock(b);
        }
        each("start", &|i| {
            c::LLVMBuildStore(b, c32(0), mail(i, barrier::field::STATE));
        });
        let round = bb(&format!("{tag}.round"));
        let done = bb(&format!("{tag}.warps.done"));
        // Lockstep rounds: the states the waiting warps stopped at, smallest and largest, of
        // the last round (every warp starts at 0). When they agree, the next round runs a
        // loop over the warps with the state a constant: the dispatch on it is out of the
        // loop, and each warp's call is that one region inlined.
        if lockstep {
            c::LLVMBuildStore(b, c32(0), lo);
            c::LLVMBuildStore(b, c32(0), hi);
        }
        c::LLVMBuildBr(b, round);
        c::LLVMPositionBuilderAtEnd(b, round);
        for (acc, v) in [(waiting, 0), (popc, 0), (all, 1), (any, 0)] {
            c::LLVMBuildStore(b, c32(v), acc);
        }
        if lockstep {
            let states = region_slot.states;
            let l = c::LLVMBuildLoad2(b, i32t, lo, n);
            let h = c::LLVMBuildLoad2(b, i32t, hi, n);
            c::LLVMBuildStore(b, c32(barrier::DONE as u64), lo);
            c::LLVMBuildStore(b, c32(0), hi);
            let same = c::LLVMBuildICmp(b, P::LLVMIntEQ, l, h, n);
            // A state no warp function has stands for "mixed" (the general round).
            let key = c::LLVMBuildSelect(b, same, l, c32(states as u64 + 1), n);
            let general = bb(&format!("{tag}.mixed"));
            let ran = bb(&format!("{tag}.ran"));
            let sw = c::LLVMBuildSwitch(b, key, general, states + 1);
            // Lockstep rounds after a barrier (states 1 and up) that neither run in pairs nor
            // take skip guards share one loop whose warp function is inlined with the state
            // read at run time, not one copy per state: a barrier in a loop makes the round
            // after the loop's entry barrier and the round after its own barrier run the same
            // loop body, which the copies emitted twice (bitonic: its compare-exchange and
            // `.shared` pair stores twice, compile CPU 106 -> 78 ms, run unchanged). The
            // state's switch at the inlined function's entry is taken the same way by every
            // warp of the round. Kernels with paired rounds keep a copy per state (matmul ran
            // 1.13x slower without its pairs, 1.07x with only its unpaired states shared), as
            // do kernels with skip guards, whose guard code is per state.
            let share = |k: u32| {
                k >= 1 && region_slot.skip.is_none() && pairs_w.is_empty() && pairs_r.is_empty()
            };
            let mut shared_blk: Option<LLVMBasicBlockRef> = None;
            for k in 0..=states {
                if share(k) {
                    if let Some(sb) = shared_blk {
                        c::LLVMAddCase(sw, c32(k as u64), sb);
                        continue;
                    }
                }
                let blk = bb(&format!("{tag}.lockstep{k}"));
                c::LLVMAddCase(sw, c32(k as u64), blk);
                let k = if share(k) {
                    shared_blk = Some(blk);
                    // `run_one`'s mark for a round whose state is each warp's own.
                    SHARED_STATE
                } else {
                    k
                };
                c::LLVMPositionBuilderAtEnd(b, blk);
                // No guard published yet this round.
                let skip = region_slot.skip.map(|_| k);
                if skip.is_some() {
                    c::LLVMBuildStore(b, c32(0), res(guard::CODE));
                }
                // The alignment is the CTA's: a kernel with a warp function for aligned warps
                // has lockstep rounds for those (one copy per state, not two); other blocks
                // take the general round.
                let stem = if k == SHARED_STATE {
                    "lockstep.shared".to_string()
                } else {
                    format!("lockstep{k}")
                };
                let name = format!("{stem}.run");
                match rows {
                    Some(r) if r != w => {
                        let rb = bb(&format!("{tag}.{stem}.rows"));
                        c::LLVMBuildCondBr(b, aligned, rb, general);
                        c::LLVMPositionBuilderAtEnd(b, rb);
                        lockstep_loop(&name, r, k, skip);
                        c::LLVMBuildBr(b, ran);
                    }
                    Some(r) => {
                        lockstep_loop(&name, r, k, skip);
                        c::LLVMBuildBr(b, ran);
                    }
                    None => {
                        lockstep_loop(&name, w, k, skip);
                        c::LLVMBuildBr(b, ran);
                    }
                }
            }
            c::LLVMPositionBuilderAtEnd(b, general);
            // Warps at different barriers: never, when every warp meets the same ones
            // (`barrier::alike`) and the CTA's warps are all of the one warp function
            // (blocks that are not aligned take this round otherwise).
            if region_slot.alike && rows.is_none_or(|r| r == w) {
                c::LLVMBuildUnreachable(b);
            } else {
                each("run", &|i| run_one(i, None, None, false));
                c::LLVMBuildBr(b, ran);
            }
            c::LLVMPositionBuilderAtEnd(b, ran);
        } else {
            each("run", &|i| run_one(i, None, None, false));
        }
        let some = c::LLVMBuildLoad2(b, i32t, waiting, n);
        let some = c::LLVMBuildICmp(b, P::LLVMIntNE, some, c32(0), n);
        let go = bb(&format!("{tag}.release"));
        c::LLVMBuildCondBr(b, some, go, done);
        c::LLVMPositionBuilderAtEnd(b, go);
        for (p, k) in [
            (popc, barrier::field::POPC),
            (all, barrier::field::ALL),
            (any, barrier::field::ANY),
        ] {
            let v = c::LLVMBuildLoad2(b, i32t, p, n);
            let mut idx = [c32(0), c32(k as u64)];
            let q = c::LLVMBuildGEP2(
                b,
                c::LLVMArrayType2(i32t, guard::LEN as u64),
                results,
                idx.as_mut_ptr(),
                2,
                n,
            );
            c::LLVMBuildStore(b, v, q);
        }
        c::LLVMBuildBr(b, round);
        c::LLVMPositionBuilderAtEnd(b, done);
        if let Some(p) = heap {
            let mut pt = [ptr];
            let ft = c::LLVMFunctionType(c::LLVMVoidTypeInContext(cx), pt.as_mut_ptr(), 1, 0);
            let mut ff = c::LLVMGetNamedFunction(m, c"free".as_ptr());
            if ff.is_null() {
                ff = c::LLVMAddFunction(m, c"free".as_ptr(), ft);
            }
            let mut a = [p];
            c::LLVMBuildCall2(b, ft, ff, a.as_mut_ptr(), 1, n);
        }
        c::LLVMGetInsertBlock(b)
    };

    // A replay (at the builder's block): the CTA in the context, then every thread finished,
    // then `exit`.
    let finish_replay = |exit: LLVMBasicBlockRef| {
        let replay = c::LLVMGetInsertBlock(b);
        if regions {
            region_warps("replay", true);
        } else if co {
            co_warps(replay, "replay", true);
        } else {
            warps(replay, "replay", true);
        }
        let states = ld(ptr, fis, off::STATE);
        let fill = bb("finished");
        let after = c::LLVMGetInsertBlock(b);
        c::LLVMBuildBr(b, fill);
        c::LLVMPositionBuilderAtEnd(b, fill);
        let t = c::LLVMBuildPhi(b, i32t, n);
        let mut idx = [t];
        let p = c::LLVMBuildGEP2(b, i16t, states, idx.as_mut_ptr(), 1, n);
        c::LLVMBuildStore(b, c::LLVMConstInt(i16t, ST_EXIT as u64, 0), p);
        let tn = c::LLVMBuildAdd(b, t, c32(1), n);
        let more = c::LLVMBuildICmp(b, P::LLVMIntULT, tn, nthreads, n);
        c::LLVMBuildCondBr(b, more, fill, exit);
        let mut v = [c32(0), tn];
        let mut bbs = [after, fill];
        c::LLVMAddIncoming(t, v.as_mut_ptr(), bbs.as_mut_ptr(), 2);
    };

    // The batch: linear CTA ids first .. first + count.
    c::LLVMPositionBuilderAtEnd(b, batch);
    if replay_part {
        let exit = bb("exit");
        c::LLVMBuildBr(b, exit);
        c::LLVMPositionBuilderAtEnd(b, replay);
        finish_replay(exit);
        c::LLVMPositionBuilderAtEnd(b, exit);
        c::LLVMBuildRetVoid(b);
        c::LLVMDisposeBuilder(b);
        return (f, replay_calls.into_inner());
    }
    let first = ld(i64t, fis, off::CTA_FIRST);
    let count = ld(i32t, fis, off::CTA_COUNT);
    let end = c::LLVMBuildAdd(b, first, c::LLVMBuildZExt(b, count, i64t, n), n);
    let cta = bb("cta");
    let exit = bb("exit");
    let nonempty = c::LLVMBuildICmp(b, P::LLVMIntULT, first, end, n);
    let pre = bb("cta.pre");
    c::LLVMBuildCondBr(b, nonempty, pre, exit);
    // The batch's first CTA's coordinates by division, the next ones' by a carry: the
    // divisions by the run-time grid were two `div`s a CTA on the path to everything the CTA
    // computes from `%ctaid`.
    c::LLVMPositionBuilderAtEnd(b, pre);
    let gx64 = c::LLVMBuildZExt(b, gx, i64t, n);
    let gy64 = c::LLVMBuildZExt(b, gy, i64t, n);
    let x0 = c::LLVMBuildURem(b, first, gx64, n);
    let q0 = c::LLVMBuildUDiv(b, first, gx64, n);
    let y0 = c::LLVMBuildURem(b, q0, gy64, n);
    let z0 = c::LLVMBuildUDiv(b, q0, gy64, n);
    c::LLVMBuildBr(b, cta);
    c::LLVMPositionBuilderAtEnd(b, cta);
    let ci = c::LLVMBuildPhi(b, i64t, n);
    let cx_ = c::LLVMBuildPhi(b, i64t, n);
    let cy = c::LLVMBuildPhi(b, i64t, n);
    let cz = c::LLVMBuildPhi(b, i64t, n);
    for (k, v) in [cx_, cy, cz].into_iter().enumerate() {
        let v = c::LLVMBuildTrunc(b, v, i32t, n);
        c::LLVMBuildStore(b, v, at(ctx, offset::CTAID + 4 * k as u32));
    }
    let done = if regions {
        region_warps("cta", false)
    } else if co {
        co_warps(cta, "cta", false)
    } else {
        warps(cta, "cta", false)
    };
    let one = c::LLVMConstInt(i64t, 1, 0);
    let zero = c::LLVMConstInt(i64t, 0, 0);
    let cnext = c::LLVMBuildAdd(b, ci, one, n);
    // `cnext`'s coordinates: x + 1, carried into y at `%nctaid.x`, and y's into z.
    let xn = c::LLVMBuildAdd(b, cx_, one, n);
    let wrap_x = c::LLVMBuildICmp(b, P::LLVMIntEQ, xn, gx64, n);
    let xnext = c::LLVMBuildSelect(b, wrap_x, zero, xn, n);
    let yn = c::LLVMBuildAdd(b, cy, c::LLVMBuildZExt(b, wrap_x, i64t, n), n);
    let wrap_y = c::LLVMBuildICmp(b, P::LLVMIntEQ, yn, gy64, n);
    let ynext = c::LLVMBuildSelect(b, wrap_y, zero, yn, n);
    let znext = c::LLVMBuildAdd(b, cz, c::LLVMBuildZExt(b, wrap_y, i64t, n), n);
    let more = c::LLVMBuildICmp(b, P::LLVMIntULT, cnext, end, n);
    c::LLVMBuildCondBr(b, more, cta, exit);
    for (phi, init, next) in [
        (ci, first, cnext),
        (cx_, x0, xnext),
        (cy, y0, ynext),
        (cz, z0, znext),
    ] {
        let mut v = [init, next];
        let mut bbs = [pre, done];
        c::LLVMAddIncoming(phi, v.as_mut_ptr(), bbs.as_mut_ptr(), 2);
    }

    c::LLVMPositionBuilderAtEnd(b, replay);
    if let Part::Batch(r) = part {
        let mut a = [pbuf, ctx, fis];
        c::LLVMBuildCall2(b, ft, r, a.as_mut_ptr(), 3, n);
        c::LLVMBuildBr(b, exit);
    } else {
        finish_replay(exit);
    }

    c::LLVMPositionBuilderAtEnd(b, exit);
    c::LLVMBuildRetVoid(b);
    c::LLVMDisposeBuilder(b);
    (f, replay_calls.into_inner())
}

/// Marks the warp functions that `replays` (the calls of `K.simd.replay`) call to be compiled
/// cheaply (`seal_replay` finishes this): a replay runs only after a fault, yet its calls were
/// inlined like the rounds' (a copy of every region per state) or, past `SPECIALIZE_MAX`
/// barriers, kept an optimized warp function for the replay alone. When every other call of
/// a warp function is inlined (none is a `noinline` fallback), those calls carry
/// `alwaysinline` themselves and the function, then called by the replay alone, becomes
/// `optnone`: `default<O2>` skips it and code generation takes its fast path. It is the same
/// IR, so the same lane faults at the same access; the inlined copies are optimized as before.
unsafe fn cold_replay(replays: &[LLVMValueRef]) {
    let mut callees: Vec<LLVMValueRef> =
        replays.iter().map(|&c| c::LLVMGetCalledValue(c)).collect();
    callees.sort();
    callees.dedup();
    let fi = llvm_sys::LLVMAttributeFunctionIndex;
    for g in callees {
        if c::LLVMGetEnumAttributeAtIndex(g, fi, ir::attr_kind(c"alwaysinline")).is_null() {
            continue;
        }
        // Its other calls: all of them inlined (none a `noinline` fallback), and no other use.
        let mut hot = Vec::new();
        let mut u = c::LLVMGetFirstUse(g);
        let mut ok = true;
        while !u.is_null() {
            let user = c::LLVMGetUser(u);
            if c::LLVMIsACallInst(user).is_null() || c::LLVMGetCalledValue(user) != g {
                ok = false;
            } else if !replays.contains(&user) {
                ok &=
                    c::LLVMGetCallSiteEnumAttribute(user, fi, ir::attr_kind(c"noinline")).is_null();
                hot.push(user);
            }
            u = c::LLVMGetNextUse(u);
        }
        if !ok {
            continue;
        }
        let cx = c::LLVMGetModuleContext(c::LLVMGetGlobalParent(g));
        for call in hot {
            let a = c::LLVMCreateEnumAttribute(cx, ir::attr_kind(c"alwaysinline"), 0);
            c::LLVMAddCallSiteAttribute(call, fi, a);
        }
        c::LLVMRemoveEnumAttributeAtIndex(g, fi, ir::attr_kind(c"alwaysinline"));
        let a = c::LLVMCreateStringAttribute(
            cx,
            REPLAY_ONLY.as_ptr() as *const _,
            REPLAY_ONLY.len() as u32,
            std::ptr::null(),
            0,
        );
        c::LLVMAddAttributeAtIndex(g, fi, a);
    }
}

/// Takes the fault replays out of `m` before optimization, for a JIT build that compiles them
/// only when a fault needs one (`target::cpu::ReplayBuild`): the call of `K.simd.replay` in
/// `K.simd`'s replay block goes (the block then returns: the runtime never runs a warp
/// kernel's `K.simd` in another mode than `MODE_ALL` when it has the lazy replay), the
/// function goes, and the warp functions `cold_replay` left to it become `alwaysinline`
/// again (all their calls are inlined). The replay was 20-35% of a barrier kernel's compile
/// (optnone vector code still goes through instruction selection) and runs only after a
/// fault. Returns how many replays it took out.
pub fn drop_replays(m: &crate::llvm::Module) -> usize {
    use inkwell::values::AsValueRef as _;
    let fi = llvm_sys::LLVMAttributeFunctionIndex;
    let mut dropped = 0;
    let funcs: Vec<LLVMValueRef> = m.get_functions().map(|f| f.as_value_ref()).collect();
    for g in funcs {
        // SAFETY: `g` is a live function of `m`; its uses are calls, erased before it is.
        unsafe {
            if super::ir::name(g).ends_with(".simd.replay") && c::LLVMIsDeclaration(g) == 0 {
                while let Some(u) = std::ptr::NonNull::new(c::LLVMGetFirstUse(g)) {
                    let user = c::LLVMGetUser(u.as_ptr());
                    if c::LLVMIsACallInst(user).is_null() {
                        return dropped;
                    }
                    c::LLVMInstructionEraseFromParent(user);
                }
                c::LLVMDeleteFunction(g);
                dropped += 1;
            }
        }
    }
    if dropped == 0 {
        return 0;
    }
    for f in m.get_functions() {
        let g = f.as_value_ref();
        // SAFETY: attributes are read and set on a live function of `m`.
        unsafe {
            if !replay_only(g) {
                continue;
            }
            clear_replay_only(g);
            let cx = c::LLVMGetModuleContext(c::LLVMGetGlobalParent(g));
            let a = c::LLVMCreateEnumAttribute(cx, ir::attr_kind(c"alwaysinline"), 0);
            c::LLVMAddAttributeAtIndex(g, fi, a);
        }
    }
    dropped
}

/// The string attribute of a warp function left to the fault replay (`cold_replay`) until
/// `seal_replay` makes it `optnone`.
const REPLAY_ONLY: &str = "ptx2llvm-replay-only";

/// Whether the function `g` carries `REPLAY_ONLY`.
///
/// # Safety
/// `g` must be a live function.
unsafe fn replay_only(g: LLVMValueRef) -> bool {
    !c::LLVMGetStringAttributeAtIndex(
        g,
        llvm_sys::LLVMAttributeFunctionIndex,
        REPLAY_ONLY.as_ptr() as *const _,
        REPLAY_ONLY.len() as u32,
    )
    .is_null()
}

/// Removes `REPLAY_ONLY` from the function `g`.
///
/// # Safety
/// `g` must be a live function.
unsafe fn clear_replay_only(g: LLVMValueRef) {
    c::LLVMRemoveStringAttributeAtIndex(
        g,
        llvm_sys::LLVMAttributeFunctionIndex,
        REPLAY_ONLY.as_ptr() as *const _,
        REPLAY_ONLY.len() as u32,
    );
}

/// The function passes that `default<O2>` runs on every function before its always-inliner
/// (LLVM 22: `opt -passes='default<O2>' -print-pipeline-passes`; IPSCCP and GlobalOpt between
/// them are module passes).
const PRE_INLINE: &str = "lower-expect,simplifycfg<bonus-inst-threshold=1;no-forward-switch-cond;\
    no-switch-range-to-icmp;no-switch-to-arithmetic;no-switch-to-lookup;keep-loops;\
    no-hoist-common-insts;no-hoist-loads-stores-with-cond-faulting;no-sink-common-insts;\
    speculate-blocks;simplify-cond-branch;no-speculate-unpredictables>,sroa<modify-cfg>,\
    early-cse<>,mem2reg,instcombine<max-iterations=1;no-verify-fixpoint>,\
    simplifycfg<bonus-inst-threshold=1;no-forward-switch-cond;switch-range-to-icmp;\
    no-switch-to-arithmetic;no-switch-to-lookup;keep-loops;no-hoist-common-insts;\
    no-hoist-loads-stores-with-cond-faulting;no-sink-common-insts;speculate-blocks;\
    simplify-cond-branch;no-speculate-unpredictables>";

/// Makes the warp functions `cold_replay` marked in `m` `optnone`, right before
/// `default<O2>`. `optnone` functions are skipped by every pass, also by the function passes
/// `default<O2>` runs before inlining, which had put each warp function in SSA form on its own
/// (`sroa`): inlined unsimplified, its variables became phis of the CTA function's loops
/// (undefined on entry, live around the CTA loop), and transpose ran 1-27% slower. So those
/// passes run on it here first, as `default<O2>` ran them before.
pub fn seal_replay(
    m: &crate::llvm::Module,
    machine: &crate::llvm::cpu::HostMachine,
) -> Result<(), String> {
    let fi = llvm_sys::LLVMAttributeFunctionIndex;
    let mut f = m.get_first_function();
    while let Some(func) = f {
        f = func.get_next_function();
        use inkwell::values::AsValueRef as _;
        let g = func.as_value_ref();
        // SAFETY: `g` is a live function of `m`; attributes are read and set on it.
        unsafe {
            if !replay_only(g) {
                continue;
            }
            machine.run_passes_on(g, PRE_INLINE)?;
            clear_replay_only(g);
            let cx = c::LLVMGetModuleContext(c::LLVMGetGlobalParent(g));
            for name in [c"noinline", c"optnone"] {
                let a = c::LLVMCreateEnumAttribute(cx, ir::attr_kind(name), 0);
                c::LLVMAddAttributeAtIndex(g, fi, a);
            }
        }
    }
    Ok(())
}
