//! A block's table stores as one blend per half (issue 17), in the optimized module as code
//! generation gets it.
//!
//! A `.shared` store whose lanes' offsets are a lane table in one 256-byte block
//! (`lanetab`, `lanes.rs` `store_table`) is a masked store per 128-byte half of the block,
//! its values and mask moved to their elements by constant shuffles. A bitonic sort's
//! compare-exchange of partners at a distance below 32 stores `a[lo]` and `a[hi]`, both in
//! the same block: four masked stores, each with its own interleave of the execution mask.
//! Zen's masked stores are slow, and the next stage's plain loads of the block are not
//! forwarded from them.
//!
//! Here a run of such stores in one basic block, with nothing that reads or writes memory
//! between them, becomes at run time, when their blocks are one and some lane stores: a load
//! of each half they write, one select of the stored elements over it and one plain store.
//! When their masks are shuffles of one mask whose lanes each go to at most one element of
//! a half (a permutation's owners), the half's select has one mask, a shuffle of that mask,
//! and one value, a two-source shuffle of the stored ones. Else the masked stores run as
//! before.
//!
//! Why it is exact: the stores' elements are those of the masked stores; every other element
//! of the block is written back with the value just loaded. `.shared` is private to the CTA,
//! and a CTA's warps run a region one after another on one worker thread, so nothing writes
//! the block between the load and the store (the lowering's whole-block window stores rest
//! on the same fact, `lanes.rs` `store_block`). A lane that stores has its element in the
//! block, and the CTA's `.shared` starts at a multiple of 256 and ends at a page boundary,
//! so the whole block is mapped (`lanes.rs` `table_block`).
//!
//! Bitonic's five copies for distances 1 to 16 (`version.rs`), edited by hand into this form
//! on the optimized IR: kernel CPU time 61.5 -> 53.0 ms (four alternated runs, output
//! bit-identical); each store converted alone (a select over a load and a full store per
//! masked store, its own mask interleave) gained nothing: the merge into one select per half
//! is the gain.

use llvm_sys::core as c;
use llvm_sys::prelude::*;
use llvm_sys::LLVMIntPredicate as P;

use super::ir;

/// The metadata on a table store's masked store (`mark`): which half of its block (0 or 1).
const TABLE_STORE: &std::ffi::CStr = c"ptx2llvm.table_store";

/// The lanes and bytes of a half: 32 elements of 4 bytes.
const LANES: u32 = 32;
const HALF: u64 = 128;

/// Marks `st`, a masked store of 32 4-byte values to half `half` of a 256-byte-aligned
/// `.shared` block of the CTA, as one this fold may merge.
///
/// # Safety
/// `st` is a live `llvm.masked.store` call.
pub unsafe fn mark(st: LLVMValueRef, half: u32) {
    let cx = c::LLVMGetTypeContext(c::LLVMTypeOf(st));
    let k = c::LLVMConstInt(c::LLVMInt32TypeInContext(cx), u64::from(half), 0);
    let mut ops = [c::LLVMValueAsMetadata(k)];
    let node = c::LLVMMDNodeInContext2(cx, ops.as_mut_ptr(), 1);
    c::LLVMSetMetadata(st, kind(st), c::LLVMMetadataAsValue(cx, node));
}

unsafe fn kind(i: LLVMValueRef) -> u32 {
    let cx = c::LLVMGetTypeContext(c::LLVMTypeOf(i));
    c::LLVMGetMDKindIDInContext(cx, TABLE_STORE.as_ptr(), TABLE_STORE.count_bytes() as u32)
}

/// A marked store: the call, its half, value, mask and block pointer (its pointer less the
/// half's 128 bytes).
struct Store {
    call: LLVMValueRef,
    half: u32,
    value: LLVMValueRef,
    mask: LLVMValueRef,
    block: LLVMValueRef,
}

/// The marked masked store `i` as a `Store`, when it is one of 32 4-byte lanes.
unsafe fn store(i: LLVMValueRef) -> Option<Store> {
    if c::LLVMIsACallInst(i).is_null() || !ir::callee(i).starts_with("llvm.masked.store.") {
        return None;
    }
    let md = c::LLVMGetMetadata(i, kind(i));
    if md.is_null() || c::LLVMGetMDNodeNumOperands(md) != 1 {
        return None;
    }
    let mut op = [std::ptr::null_mut()];
    c::LLVMGetMDNodeOperands(md, op.as_mut_ptr());
    let half = u32::try_from(ir::const_u64(op[0])?)
        .ok()
        .filter(|&h| h < 2)?;
    let (value, ptr, mask) = (
        c::LLVMGetOperand(i, 0),
        c::LLVMGetOperand(i, 1),
        c::LLVMGetOperand(i, 2),
    );
    let t = c::LLVMTypeOf(value);
    let et = c::LLVMGetElementType(t);
    let four = match c::LLVMGetTypeKind(et) {
        llvm_sys::LLVMTypeKind::LLVMFloatTypeKind => true,
        llvm_sys::LLVMTypeKind::LLVMIntegerTypeKind => c::LLVMGetIntTypeWidth(et) == 32,
        _ => false,
    };
    if !four || c::LLVMGetVectorSize(t) != LANES {
        return None;
    }
    let block = if half == 0 {
        ptr
    } else {
        // The lowering's `gep i8 block, 128`; another form keeps the store as it is.
        if c::LLVMIsAGetElementPtrInst(ptr).is_null()
            || c::LLVMGetNumOperands(ptr) != 2
            || ir::const_u64(c::LLVMGetOperand(ptr, 1)) != Some(HALF)
            || c::LLVMGetTypeKind(c::LLVMGetGEPSourceElementType(ptr))
                != llvm_sys::LLVMTypeKind::LLVMIntegerTypeKind
            || c::LLVMGetIntTypeWidth(c::LLVMGetGEPSourceElementType(ptr)) != 8
        {
            return None;
        }
        c::LLVMGetOperand(ptr, 0)
    };
    Some(Store {
        call: i,
        half,
        value,
        mask,
        block,
    })
}

/// Whether `i` may read or write memory (or has effects): anything but plain arithmetic,
/// casts, shuffles, compares and address computations.
unsafe fn touches_memory(i: LLVMValueRef) -> bool {
    !c::LLVMIsALoadInst(i).is_null()
        || !c::LLVMIsAStoreInst(i).is_null()
        || !c::LLVMIsACallInst(i).is_null()
        || !c::LLVMIsAInvokeInst(i).is_null()
        || !c::LLVMIsACallBrInst(i).is_null()
        || !c::LLVMIsAAtomicRMWInst(i).is_null()
        || !c::LLVMIsAAtomicCmpXchgInst(i).is_null()
        || !c::LLVMIsAFenceInst(i).is_null()
        || !c::LLVMIsAVAArgInst(i).is_null()
}

/// Merges every run of two or more marked stores in `m`'s functions; returns how many runs.
///
/// # Safety
/// `m` is a live module.
pub unsafe fn fold(m: LLVMModuleRef) -> usize {
    let mut done = 0;
    for f in ir::functions(m) {
        for bb in ir::blocks(f) {
            for run in runs(bb) {
                merge(run);
                done += 1;
            }
        }
    }
    done
}

/// The runs of `bb`: marked stores with only instructions that touch no memory between them.
unsafe fn runs(bb: LLVMBasicBlockRef) -> Vec<Vec<Store>> {
    let mut out = Vec::new();
    let mut cur: Vec<Store> = Vec::new();
    for i in ir::instructions(bb) {
        if let Some(s) = store(i) {
            cur.push(s);
        } else if touches_memory(i) {
            if cur.len() >= 2 {
                out.push(std::mem::take(&mut cur));
            }
            cur.clear();
        }
    }
    if cur.len() >= 2 {
        out.push(cur);
    }
    out
}

/// The shuffle of a mask with constants: its source and its lanes' picks (`Some(l)`: the
/// source's lane `l`; `None`: a constant false or poison lane).
unsafe fn mask_picks(m: LLVMValueRef) -> Option<(LLVMValueRef, Vec<Option<u32>>)> {
    if c::LLVMIsAShuffleVectorInst(m).is_null() {
        return None;
    }
    let (src, k) = (c::LLVMGetOperand(m, 0), c::LLVMGetOperand(m, 1));
    let width = c::LLVMGetVectorSize(c::LLVMTypeOf(src));
    if width != LANES || c::LLVMIsAConstant(k).is_null() {
        return None;
    }
    let undef = c::LLVMGetUndefMaskElem();
    let mut picks = Vec::with_capacity(LANES as usize);
    for e in 0..c::LLVMGetNumMaskElements(m) {
        let x = c::LLVMGetMaskValue(m, e);
        if x == undef {
            picks.push(None);
        } else if (x as u32) < width {
            picks.push(Some(x as u32));
        } else {
            let lane = c::LLVMGetAggregateElement(k, x as u32 - width);
            let off = lane.is_null()
                || c::LLVMIsUndef(lane) != 0
                || c::LLVMIsPoison(lane) != 0
                || ir::const_u64(lane) == Some(0);
            if !off {
                return None;
            }
            picks.push(None);
        }
    }
    Some((src, picks))
}

/// `run` (two or more stores of one basic block) as
/// `br (blocks equal && some lane stores), blend, masked`; `blend`: per half written, a load,
/// the stores' elements selected over it and a plain store; `masked`: the stores as they were.
unsafe fn merge(run: Vec<Store>) {
    let last = run.last().expect("a run has stores").call;
    let cx = c::LLVMGetTypeContext(c::LLVMTypeOf(last));
    let n = c"".as_ptr();
    let bb = c::LLVMGetInstructionParent(last);
    let f = c::LLVMGetBasicBlockParent(bb);
    let i32t = c::LLVMInt32TypeInContext(cx);
    let v32 = c::LLVMVectorType(i32t, LANES);
    let join = super::pageload::split_after(last, c"table.join");
    let blend_bb = c::LLVMAppendBasicBlockInContext(cx, f, c"table.blend".as_ptr());
    let masked_bb = c::LLVMAppendBasicBlockInContext(cx, f, c"table.masked".as_ptr());
    c::LLVMMoveBasicBlockAfter(blend_bb, bb);
    c::LLVMMoveBasicBlockAfter(masked_bb, blend_bb);
    let b = c::LLVMCreateBuilderInContext(cx);
    // Before the stores leave their block: whether their values are the block as loaded.
    let loaded = loaded_block(&run);
    for s in &run {
        c::LLVMInstructionRemoveFromParent(s.call);
    }
    c::LLVMPositionBuilderAtEnd(b, bb);
    // The test: one block, and some lane's element stored in it; the lanes' bits of the
    // masks' common source where they have one, so that the stores' mask shuffles are
    // needed on the masked path only.
    let bits_t = c::LLVMIntTypeInContext(cx, LANES);
    let mut ok = None;
    let at = run[0].block;
    let loaded_ptrs = loaded.as_ref().map_or(&[][..], |l| &l.ptrs[..]);
    for p in run
        .iter()
        .map(|s| s.block)
        .chain(loaded_ptrs.iter().copied())
    {
        if p != at {
            let eq = c::LLVMBuildICmp(b, P::LLVMIntEQ, p, at, n);
            ok = Some(ok.map_or(eq, |o| c::LLVMBuildAnd(b, o, eq, n)));
        }
    }
    let any = match common_mask(&run) {
        Some((src, lanes)) => {
            let bits = c::LLVMBuildBitCast(b, src, bits_t, n);
            c::LLVMBuildAnd(b, bits, c::LLVMConstInt(bits_t, u64::from(lanes), 0), n)
        }
        None => run.iter().fold(c::LLVMConstNull(bits_t), |acc, s| {
            c::LLVMBuildOr(b, acc, c::LLVMBuildBitCast(b, s.mask, bits_t, n), n)
        }),
    };
    let some = c::LLVMBuildICmp(b, P::LLVMIntNE, any, c::LLVMConstNull(bits_t), n);
    let ok = ok.map_or(some, |o| c::LLVMBuildAnd(b, o, some, n));
    c::LLVMBuildCondBr(b, ok, blend_bb, masked_bb);
    c::LLVMPositionBuilderAtEnd(b, masked_bb);
    for s in &run {
        c::LLVMInsertIntoBuilder(b, s.call);
    }
    c::LLVMBuildBr(b, join);
    c::LLVMPositionBuilderAtEnd(b, blend_bb);
    let i8t = c::LLVMInt8TypeInContext(cx);
    for h in 0..2u32 {
        let part: Vec<&Store> = run.iter().filter(|s| s.half == h).collect();
        if part.is_empty() {
            continue;
        }
        let q = if h == 0 {
            at
        } else {
            let mut k = [c::LLVMConstInt(c::LLVMInt64TypeInContext(cx), HALF, 0)];
            c::LLVMBuildGEP2(b, i8t, at, k.as_mut_ptr(), 1, n)
        };
        let old = match loaded.as_ref().and_then(|l| l.halves[h as usize]) {
            Some(l) => l,
            None => {
                let old = c::LLVMBuildLoad2(b, v32, q, n);
                c::LLVMSetAlignment(old, 64);
                old
            }
        };
        // Code generation folds `store (select m, x, load p), p` into a masked store again,
        // which is what this fold removes; through a freeze it does not.
        let old = c::LLVMBuildFreeze(b, old, n);
        let new = match one_select(b, &part, old, loaded.as_ref()) {
            Some(v) => v,
            None => part.iter().fold(old, |acc, s| {
                let v = c::LLVMBuildBitCast(b, s.value, v32, n);
                c::LLVMBuildSelect(b, s.mask, v, acc, n)
            }),
        };
        let st = c::LLVMBuildStore(b, new, q);
        c::LLVMSetAlignment(st, 64);
    }
    c::LLVMBuildBr(b, join);
    c::LLVMDisposeBuilder(b);
    // The stores' own shuffles of their values and masks into the masked path, where alone
    // they are used now (code generation does not sink them: the blend path would compute
    // them for nothing).
    for s in &run {
        for v in [s.value, s.mask] {
            if !c::LLVMIsAShuffleVectorInst(v).is_null()
                && c::LLVMGetInstructionParent(v) == bb
                && ir::users(v)
                    .iter()
                    .all(|u| c::LLVMGetInstructionParent(*u) == masked_bb)
            {
                c::LLVMInstructionRemoveFromParent(v);
                let b = c::LLVMCreateBuilderInContext(cx);
                c::LLVMPositionBuilderBefore(b, s.call);
                c::LLVMInsertIntoBuilder(b, v);
                c::LLVMDisposeBuilder(b);
            }
        }
    }
}

/// The one mask the run's masks are shuffles of (`mask_picks`), and the bits of its lanes
/// that some store takes.
unsafe fn common_mask(run: &[Store]) -> Option<(LLVMValueRef, u32)> {
    let mut src = None;
    let mut lanes = 0u32;
    for s in run {
        let (m, picks) = mask_picks(s.mask)?;
        if *src.get_or_insert(m) != m {
            return None;
        }
        lanes |= picks.iter().flatten().fold(0, |a, l| a | (1u32 << l));
    }
    Some((src?, lanes))
}

/// The half's stores `part` over `old` as one select, when their masks are shuffles of one
/// mask and no element is any two stores' (`mask_picks`): the mask's shuffle to the
/// elements, and the stored values' two-source shuffles.
unsafe fn one_select(
    b: LLVMBuilderRef,
    part: &[&Store],
    old: LLVMValueRef,
    loaded: Option<&Loaded>,
) -> Option<LLVMValueRef> {
    let n = c"".as_ptr();
    let picks: Vec<(LLVMValueRef, Vec<Option<u32>>)> = part
        .iter()
        .map(|s| mask_picks(s.mask))
        .collect::<Option<_>>()?;
    let src = picks[0].0;
    if picks.iter().any(|(m, _)| *m != src) {
        return None;
    }
    // Each element's store and the mask lane it takes.
    let mut owner: Vec<Option<(usize, u32)>> = vec![None; LANES as usize];
    for (k, (_, p)) in picks.iter().enumerate() {
        for (e, x) in p.iter().enumerate() {
            if let Some(l) = x {
                if owner[e].is_some() {
                    return None;
                }
                owner[e] = Some((k, *l));
            }
        }
    }
    let cx = c::LLVMGetTypeContext(c::LLVMTypeOf(old));
    let i32t = c::LLVMInt32TypeInContext(cx);
    let v32 = c::LLVMVectorType(i32t, LANES);
    let idx = |f: &dyn Fn(usize) -> Option<u32>| {
        let mut k: Vec<LLVMValueRef> = (0..LANES as usize)
            .map(|e| match f(e) {
                Some(x) => c::LLVMConstInt(i32t, u64::from(x), 0),
                None => c::LLVMGetPoison(i32t),
            })
            .collect();
        c::LLVMConstVector(k.as_mut_ptr(), LANES)
    };
    // The stores' values: one shuffle of the loaded halves or of their sources, else joined
    // two at a time (element `e` from its owner's value).
    let value = match loaded
        .and_then(|l| from_loads(b, part, &owner, l))
        .or_else(|| composed(b, part, &owner))
    {
        Some(v) => v,
        None => {
            let mut value = c::LLVMBuildBitCast(b, part[0].value, v32, n);
            for (k, s) in part.iter().enumerate().skip(1) {
                let v = c::LLVMBuildBitCast(b, s.value, v32, n);
                let sel = idx(&|e| {
                    Some(match owner[e] {
                        Some((o, _)) if o == k => LANES + e as u32,
                        _ => e as u32,
                    })
                });
                value = c::LLVMBuildShuffleVector(b, value, v, sel, n);
            }
            value
        }
    };
    let m_t = c::LLVMTypeOf(src);
    let mask = c::LLVMBuildShuffleVector(
        b,
        src,
        c::LLVMConstNull(m_t),
        idx(&|e| Some(owner[e].map_or(LANES, |(_, l)| l))),
        n,
    );
    Some(c::LLVMBuildSelect(b, mask, value, old, n))
}

/// The half's value as one shuffle of at most two vectors, when each store's value is a
/// shuffle of one vector of 32 4-byte elements (its first operand; `owner`: each element's
/// store and mask lane): the stores' shuffles composed, as `<32 x i32>`.
unsafe fn composed(
    b: LLVMBuilderRef,
    part: &[&Store],
    owner: &[Option<(usize, u32)>],
) -> Option<LLVMValueRef> {
    let n = c"".as_ptr();
    let mut srcs: Vec<LLVMValueRef> = Vec::new();
    let mut pick: Vec<Option<u32>> = vec![None; LANES as usize];
    for (e, o) in owner.iter().enumerate() {
        let Some((k, _)) = o else { continue };
        let v = part[*k].value;
        if c::LLVMIsAShuffleVectorInst(v).is_null() {
            return None;
        }
        let x = c::LLVMGetMaskValue(v, e as u32);
        if x == c::LLVMGetUndefMaskElem() {
            continue;
        }
        let src = c::LLVMGetOperand(v, 0);
        if x as u32 >= c::LLVMGetVectorSize(c::LLVMTypeOf(src)) {
            return None;
        }
        let which = match srcs.iter().position(|s| *s == src) {
            Some(w) => w,
            None if srcs.len() < 2 => {
                srcs.push(src);
                srcs.len() - 1
            }
            None => return None,
        };
        pick[e] = Some(which as u32 * LANES + x as u32);
    }
    let t = c::LLVMTypeOf(*srcs.first()?);
    if srcs.iter().any(|s| c::LLVMTypeOf(*s) != t) || c::LLVMGetVectorSize(t) != LANES {
        return None;
    }
    let cx = c::LLVMGetTypeContext(t);
    let i32t = c::LLVMInt32TypeInContext(cx);
    let mut k: Vec<LLVMValueRef> = pick
        .iter()
        .map(|p| match p {
            Some(x) => c::LLVMConstInt(i32t, u64::from(*x), 0),
            None => c::LLVMGetPoison(i32t),
        })
        .collect();
    let second = srcs.get(1).copied().unwrap_or(c::LLVMGetPoison(t));
    let v = c::LLVMBuildShuffleVector(
        b,
        srcs[0],
        second,
        c::LLVMConstVector(k.as_mut_ptr(), LANES),
        n,
    );
    Some(c::LLVMBuildBitCast(b, v, c::LLVMVectorType(i32t, LANES), n))
}

/// The block as the run's values were loaded (`lanes.rs` `load_table`: plain loads of a
/// block's halves, shuffled to the lanes, InstCombine composing those shuffles with the
/// stores'): every stored element traced through shuffles and bitcasts to an element of
/// such a load, with nothing that writes memory from the loads to the run.
struct Loaded {
    /// A load of each half (`<32 x i32>`), where one was found; loads of the same half at
    /// different pointers hold the same values when those pointers (`ptrs`) are the run's
    /// block at run time, which the run's test checks.
    halves: [Option<LLVMValueRef>; 2],
    ptrs: Vec<LLVMValueRef>,
    /// Each store (its call) and its elements' positions among the block's 64 (`None`:
    /// undefined).
    pos: Vec<(LLVMValueRef, Vec<Option<u32>>)>,
}

/// Where element `e` of `v` comes from: `Some(None)` undefined, `Some(Some((load, position)))`
/// a load of a block's half and the element's position in the block.
type Source = Option<(LLVMValueRef, u32)>;

/// `Loaded` for `run`, whose stores are still in their block.
unsafe fn loaded_block(run: &[Store]) -> Option<Loaded> {
    let first = run[0].call;
    let mut out = Loaded {
        halves: [None, None],
        ptrs: Vec::new(),
        pos: Vec::new(),
    };
    let mut loads: Vec<LLVMValueRef> = Vec::new();
    for s in run {
        let mut pos = Vec::with_capacity(LANES as usize);
        for e in 0..LANES {
            let src = element_source(s.value, e, 4)?;
            pos.push(src.map(|(l, p)| {
                if !loads.contains(&l) {
                    loads.push(l);
                }
                p
            }));
        }
        out.pos.push((s.call, pos));
    }
    for l in loads {
        let (block, h) = half_of(l)?;
        if !unwritten(l, first) {
            return None;
        }
        out.halves[h as usize].get_or_insert(l);
        if !out.ptrs.contains(&block) {
            out.ptrs.push(block);
        }
    }
    Some(out)
}

/// Element `e` of `v` (32 lanes of 4 bytes) through shuffles and bitcasts of such vectors,
/// down to a load of a half (`half_of`); `None` where it is anything else.
unsafe fn element_source(v: LLVMValueRef, e: u32, depth: u32) -> Option<Source> {
    let t = c::LLVMTypeOf(v);
    if c::LLVMGetTypeKind(t) != llvm_sys::LLVMTypeKind::LLVMVectorTypeKind
        || c::LLVMGetVectorSize(t) != LANES
    {
        return None;
    }
    if !c::LLVMIsALoadInst(v).is_null() {
        let (_, h) = half_of(v)?;
        return Some(Some((v, h * LANES + e)));
    }
    let depth = depth.checked_sub(1)?;
    if !c::LLVMIsABitCastInst(v).is_null() {
        return element_source(c::LLVMGetOperand(v, 0), e, depth);
    }
    if c::LLVMIsAShuffleVectorInst(v).is_null() {
        return None;
    }
    let x = c::LLVMGetMaskValue(v, e);
    if x == c::LLVMGetUndefMaskElem() {
        return Some(None);
    }
    let x = x as u32;
    let (op, k) = if x < LANES { (0, x) } else { (1, x - LANES) };
    element_source(c::LLVMGetOperand(v, op), k, depth)
}

/// The block pointer and half of `l` when it is a plain load of `<32 x i32>` at a pointer
/// (half 0) or 128 bytes past one (half 1, `gep i8 p, 128`).
unsafe fn half_of(l: LLVMValueRef) -> Option<(LLVMValueRef, u32)> {
    let cx = c::LLVMGetTypeContext(c::LLVMTypeOf(l));
    let v32 = c::LLVMVectorType(c::LLVMInt32TypeInContext(cx), LANES);
    if c::LLVMIsALoadInst(l).is_null() || c::LLVMGetVolatile(l) != 0 || c::LLVMTypeOf(l) != v32 {
        return None;
    }
    let p = c::LLVMGetOperand(l, 0);
    let up = !c::LLVMIsAGetElementPtrInst(p).is_null()
        && c::LLVMGetNumOperands(p) == 2
        && ir::const_u64(c::LLVMGetOperand(p, 1)) == Some(HALF)
        && c::LLVMGetGEPSourceElementType(p) == c::LLVMInt8TypeInContext(cx);
    Some(if up {
        (c::LLVMGetOperand(p, 0), 1)
    } else {
        (p, 0)
    })
}

/// Whether nothing writes memory between load `l` and instruction `at`: `at`'s block, then
/// up to three blocks each the single predecessor of the one after, the last `l`'s.
unsafe fn unwritten(l: LLVMValueRef, at: LLVMValueRef) -> bool {
    let writes = |i: LLVMValueRef| touches_memory(i) && c::LLVMIsALoadInst(i).is_null();
    let home = c::LLVMGetInstructionParent(l);
    let mut bb = c::LLVMGetInstructionParent(at);
    let mut i = c::LLVMGetPreviousInstruction(at);
    for _ in 0..4 {
        while !i.is_null() {
            if i == l {
                return true;
            }
            if writes(i) {
                return false;
            }
            i = c::LLVMGetPreviousInstruction(i);
        }
        if bb == home {
            return false;
        }
        let Some(p) = single_predecessor(bb) else {
            return false;
        };
        bb = p;
        i = c::LLVMGetLastInstruction(bb);
    }
    false
}

/// The one block whose terminator branches to `bb`, when there is one.
unsafe fn single_predecessor(bb: LLVMBasicBlockRef) -> Option<LLVMBasicBlockRef> {
    let mut pred = None;
    let mut u = c::LLVMGetFirstUse(c::LLVMBasicBlockAsValue(bb));
    while !u.is_null() {
        let user = c::LLVMGetUser(u);
        if c::LLVMIsATerminatorInst(user).is_null() {
            return None;
        }
        let p = c::LLVMGetInstructionParent(user);
        if *pred.get_or_insert(p) != p {
            return None;
        }
        u = c::LLVMGetNextUse(u);
    }
    pred
}

/// The half's value as one shuffle of the loaded block's halves (`Loaded`): each element's
/// owner's position.
unsafe fn from_loads(
    b: LLVMBuilderRef,
    part: &[&Store],
    owner: &[Option<(usize, u32)>],
    l: &Loaded,
) -> Option<LLVMValueRef> {
    let n = c"".as_ptr();
    let mut k: Vec<LLVMValueRef> = Vec::with_capacity(LANES as usize);
    let mut i32t = None;
    for (e, o) in owner.iter().enumerate() {
        let mut pick = None;
        if let Some((s, _)) = o {
            let (_, pos) = l.pos.iter().find(|(c, _)| *c == part[*s].call)?;
            pick = pos[e];
        }
        let t = *i32t.get_or_insert_with(|| {
            c::LLVMInt32TypeInContext(c::LLVMGetTypeContext(c::LLVMTypeOf(part[0].value)))
        });
        k.push(match pick {
            Some(x) => {
                // A position whose half no load of the run's values read cannot be.
                l.halves[(x / LANES) as usize]?;
                c::LLVMConstInt(t, u64::from(x), 0)
            }
            None => c::LLVMGetPoison(t),
        });
    }
    let t = c::LLVMVectorType(i32t?, LANES);
    let [h0, h1] = l.halves.map(|h| h.unwrap_or(c::LLVMGetPoison(t)));
    Some(c::LLVMBuildShuffleVector(
        b,
        h0,
        h1,
        c::LLVMConstVector(k.as_mut_ptr(), LANES),
        n,
    ))
}
