//! Warp coarsening (issue 17): a warp runs the work of `GROUP` consecutive warps of its CTA, the
//! copies' loops jammed, when the kernel's only divergence is one bounds check at its entry.
//!
//! The plain CUDA forms that most people write first run each warp on its own, where the CPU
//! wants a CTA's warps together: a matrix multiply with a dot product per thread
//! (`sum += A[row * n + k] * B[k * n + col]`) is one FMA chain per 16-lane half, which waits on
//! itself (0.5 FMA a cycle where the core does 2), and the B row that the CTA's 8 warps share is
//! loaded 8 times; written by hand with four rows a thread the same kernel ran 3.4x faster.
//!
//! So a kernel without CTA barriers, warp operations, shared or local memory, atomics or calls
//! (but pure intrinsics), compiled for a block shape whose warps come in groups of `GROUP`,
//! with a loop that loads memory the copies share, whose every branch on a thread index is its
//! entry's own (`if (row < n && col < n)`), gets two
//! more bodies behind a call of `COARSE` (true in a warp function launched with all its lanes:
//! not in a fault replay, which runs a warp lane by lane, nor in thread loops or coroutines,
//! where the function is defined false):
//!
//! - the group's other warps return at once;
//! - the first one computes the entry of every copy (copy `j` reads `%tid` of the warp `j`
//!   after it: `%tid.x + 32 j` in 1-D blocks, `%tid.y + (32 / %ntid.x) j` where `%ntid.x`
//!   divides 32), and where all copies' entry branches agree lane by lane it runs the
//!   *jammed* body: the original blocks once, each instruction that depends on the copied
//!   index cloned per copy and every other one (the B row's load, the loop's counter, every
//!   branch past the entry) once;
//! - elsewhere it runs the copies one after another (a loop of `GROUP` turns around one
//!   clone of the body), each as its warp would have run it.
//!
//! A lane of the jammed body does exactly what its G threads do (each copy's instructions are
//! that thread's, and the branches after the entry do not depend on the thread); only the order
//! of different threads' accesses changes, which nothing orders without a barrier on a GPU
//! either. The agreement branch is divergent, so the jammed body runs under its mask, as the
//! original ran under its entry branch's.

use std::collections::{HashMap, HashSet};

use llvm_sys::core as c;
use llvm_sys::prelude::*;
use llvm_sys::LLVMOpcode as O;

use super::cfg::Cfg;
use super::ir::{self, CtxField};
use super::uniform::{call_kind, CallKind};

/// `i1 ()`: whether this call of the warp function runs the group (module doc).
pub const COARSE: &str = "ptx2llvm.simd.coarse";

/// Warps a group: four accumulator chains a lane (eight was slower by hand: 45 against 34 ms).
pub const GROUP: u32 = 4;

/// Instructions the kernel may have: the two new bodies are `GROUP + 1` times its size.
const MAX_SIZE: usize = 300;

/// Which thread index the copies step, by how much per copy.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Step {
    /// 1-D blocks: `%tid.x + 32 j`.
    X,
    /// `%ntid.x` divides 32, `%ntid.z` is 1: `%tid.y + (32 / %ntid.x) j`.
    Y(u32),
}

impl Step {
    /// How much copy `j`'s index adds per `j`.
    fn per(self) -> u32 {
        match self {
            Step::X => 32,
            Step::Y(k) => k,
        }
    }
}

/// What `coarsen` did: the group size.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Coarsened {
    pub group: u32,
}

/// Makes the group bodies (module doc) when kernel `f`, compiled for `block`, has the shape.
///
/// # Safety
/// `f` is a defined function in the cleaned form `cfg` describes; `td` its data layout.
pub unsafe fn coarsen(
    f: LLVMValueRef,
    cfg: &Cfg,
    block: Option<[u32; 3]>,
    td: llvm_sys::target::LLVMTargetDataRef,
) -> Option<Coarsened> {
    let [bx, by, bz] = block?;
    let threads = bx.checked_mul(by)?.checked_mul(bz)?;
    if threads % (32 * GROUP) != 0 {
        return None;
    }
    let step = if by == 1 && bz == 1 {
        Step::X
    } else if bz == 1 && bx <= 32 && 32 % bx == 0 {
        Step::Y(32 / bx)
    } else {
        return None;
    };
    // Without a loop the copies have nothing to share but the block's few loads.
    if cfg.size() > MAX_SIZE || cfg.loops.is_empty() {
        return None;
    }
    let ret = cfg.lone_return()?;
    let ret_bb = cfg.blocks[ret];
    // What the copies may not hold: effects a thread orders, other threads' memory, calls.
    let stepped = match step {
        Step::X => 0,
        Step::Y(_) => 1,
    };
    let mut roots = Vec::new();
    for &bb in &cfg.blocks {
        for i in ir::instructions(bb) {
            match ir::opcode(i) {
                O::LLVMAlloca | O::LLVMAtomicRMW | O::LLVMAtomicCmpXchg | O::LLVMFence => {
                    return None
                }
                O::LLVMSwitch | O::LLVMIndirectBr => return None,
                O::LLVMCall => match call_kind(i) {
                    CallKind::SelfCtx | CallKind::Lanewise => {}
                    _ => return None,
                },
                O::LLVMLoad | O::LLVMStore => {
                    let (p, _) = ir::access(i)?;
                    if c::LLVMGetPointerAddressSpace(c::LLVMTypeOf(p)) == super::lanes::SHARED_AS
                        || c::LLVMGetVolatile(i) != 0
                        || c::LLVMGetOrdering(i)
                            != llvm_sys::LLVMAtomicOrdering::LLVMAtomicOrderingNotAtomic
                    {
                        return None;
                    }
                    if let Some(off) = ir::ctx_offset(td, p) {
                        if ir::opcode(i) == O::LLVMStore {
                            return None;
                        }
                        match CtxField::at(off) {
                            CtxField::Tid(k) if k == stepped => roots.push(i),
                            CtxField::Tid(k) if k > stepped => return None,
                            CtxField::FlatTid => return None,
                            CtxField::Uniform(o) if o == crate::runtime::abi::offset::WARPID => {
                                return None
                            }
                            _ => {}
                        }
                    }
                }
                _ => {}
            }
        }
    }
    if roots.is_empty() {
        return None;
    }
    let differs = differing(cfg, &roots);
    // Worth it where the copies share memory in the loop (the B row of a naive matmul, `x[k]`
    // of a matrix-vector product): one load for the group, and the copies' chains interleave.
    // A loop of arithmetic alone (a series of `sqrtf`) ran x1.09 slower in groups: its
    // throughput was the limit, not its chains.
    let shares = cfg.blocks.iter().enumerate().any(|(x, &bb)| {
        cfg.loop_of[x].is_some()
            && ir::instructions(bb).into_iter().any(|i| {
                ir::opcode(i) == O::LLVMLoad
                    && !differs.contains(&i)
                    && ir::ctx_offset(td, c::LLVMGetOperand(i, 0)).is_none()
            })
    });
    if !shares {
        return None;
    }
    // The only branch on the copied index: the entry's, whose condition and everything
    // before it have no effect.
    for (x, &bb) in cfg.blocks.iter().enumerate() {
        let t = c::LLVMGetBasicBlockTerminator(bb);
        if ir::opcode(t) == O::LLVMBr
            && c::LLVMIsConditional(t) != 0
            && differs.contains(&c::LLVMGetCondition(t))
            && x != 0
        {
            return None;
        }
    }
    let entry = cfg.blocks[0];
    if ir::instructions(entry).into_iter().any(|i| {
        ir::opcode(i) == O::LLVMStore
            || (ir::opcode(i) == O::LLVMCall && call_kind(i) != CallKind::SelfCtx)
    }) {
        return None;
    }
    build(f, cfg, ret_bb, step, &roots, &differs);
    Some(Coarsened { group: GROUP })
}

/// A clone of instruction `i` inserted at builder `b`'s position, with `i`'s source location
/// (perf and gdb attribute the copies' code to the kernel's lines; inserting through a builder
/// that has a location of its own gave it that one).
unsafe fn insert_clone(b: LLVMBuilderRef, i: LLVMValueRef) -> LLVMValueRef {
    let x = c::LLVMInstructionClone(i);
    c::LLVMInsertIntoBuilder(b, x);
    let loc = llvm_sys::debuginfo::LLVMInstructionGetDebugLoc(i);
    if !loc.is_null() {
        llvm_sys::debuginfo::LLVMInstructionSetDebugLoc(x, loc);
    }
    x
}

/// Gives the instructions the builder `b` makes from now on the source location of `from`.
unsafe fn locate(b: LLVMBuilderRef, from: LLVMValueRef) {
    let loc = llvm_sys::debuginfo::LLVMInstructionGetDebugLoc(from);
    if !loc.is_null() {
        c::LLVMSetCurrentDebugLocation2(b, loc);
    }
}

/// The instructions that depend on `roots` (the copied index's reads), through operands and
/// phis.
unsafe fn differing(cfg: &Cfg, roots: &[LLVMValueRef]) -> HashSet<LLVMValueRef> {
    let mut set: HashSet<LLVMValueRef> = roots.iter().copied().collect();
    loop {
        let mut grew = false;
        for &bb in &cfg.blocks {
            for i in ir::instructions(bb) {
                if !set.contains(&i) && ir::operands(i).iter().any(|o| set.contains(o)) {
                    set.insert(i);
                    grew = true;
                }
            }
        }
        if !grew {
            return set;
        }
    }
}

/// The `i1 ()` function `COARSE` of the module, defined false if it is not yet.
unsafe fn coarse_fn(m: LLVMModuleRef) -> (LLVMTypeRef, LLVMValueRef) {
    ir::false_fn(m, COARSE)
}

/// Copy `j`'s value of root read `r` (a clone of it, `x`): `x + j × step`, after `x`.
unsafe fn offset(b: LLVMBuilderRef, x: LLVMValueRef, step: Step, j: u32) -> LLVMValueRef {
    if j == 0 {
        return x;
    }
    let per = step.per();
    let t = c::LLVMTypeOf(x);
    locate(b, x);
    let next = c::LLVMGetNextInstruction(x);
    if next.is_null() {
        c::LLVMPositionBuilderAtEnd(b, c::LLVMGetInstructionParent(x));
    } else {
        c::LLVMPositionBuilderBefore(b, next);
    }
    c::LLVMBuildAdd(
        b,
        x,
        c::LLVMConstInt(t, u64::from(per * j), 0),
        c"".as_ptr(),
    )
}

/// The copies one after another: a loop of `GROUP` turns around one clone of the original
/// body (every block but the return block), whose reads of the copied index add turn `j`'s
/// offset, and whose way to the return block is the loop's latch. Returns the loop's head.
/// (One clone, not one per copy: the clones made the naive matmul's compile 4x longer.)
unsafe fn sequential(
    b: LLVMBuilderRef,
    f: LLVMValueRef,
    cfg: &Cfg,
    ret_bb: LLVMBasicBlockRef,
    step: Step,
    roots: &HashSet<LLVMValueRef>,
) -> LLVMBasicBlockRef {
    let cx = c::LLVMGetModuleContext(c::LLVMGetGlobalParent(f));
    let n = c"".as_ptr();
    let i32t = c::LLVMInt32TypeInContext(cx);
    let head = c::LLVMAppendBasicBlockInContext(cx, f, c"coarse.seq".as_ptr());
    let latch = c::LLVMAppendBasicBlockInContext(cx, f, c"coarse.seq.next".as_ptr());
    let mut blocks = HashMap::new();
    for &bb in &cfg.blocks {
        if bb != ret_bb {
            blocks.insert(
                bb,
                c::LLVMAppendBasicBlockInContext(cx, f, c"coarse.seq.body".as_ptr()),
            );
        }
    }
    let first = blocks[&cfg.blocks[0]];
    blocks.insert(ret_bb, latch);
    c::LLVMPositionBuilderAtEnd(b, head);
    let turn = c::LLVMBuildPhi(b, i32t, n);
    c::LLVMBuildBr(b, first);
    let mut map: HashMap<LLVMValueRef, LLVMValueRef> = HashMap::new();
    let mut made = Vec::new();
    let mut phis = Vec::new();
    let per = step.per();
    for &bb in &cfg.blocks {
        if bb == ret_bb {
            continue;
        }
        c::LLVMPositionBuilderAtEnd(b, blocks[&bb]);
        for i in ir::instructions(bb) {
            if ir::opcode(i) == O::LLVMPHI {
                let x = c::LLVMBuildPhi(b, c::LLVMTypeOf(i), n);
                phis.push((i, x));
                map.insert(i, x);
                continue;
            }
            let x = insert_clone(b, i);
            made.push(x);
            let v = if roots.contains(&i) {
                let t = c::LLVMTypeOf(x);
                locate(b, i);
                let k = c::LLVMBuildMul(b, turn, c::LLVMConstInt(i32t, u64::from(per), 0), n);
                let k = c::LLVMBuildZExtOrBitCast(b, k, t, n);
                c::LLVMBuildAdd(b, x, k, n)
            } else {
                x
            };
            map.insert(i, v);
        }
    }
    ir::remap_clones(&made, &map, &blocks);
    for &(i, x) in &phis {
        ir::copy_incoming(i, x, &map, &blocks);
    }
    c::LLVMPositionBuilderAtEnd(b, latch);
    let next = c::LLVMBuildAdd(b, turn, c::LLVMConstInt(i32t, 1, 0), n);
    let more = c::LLVMBuildICmp(
        b,
        llvm_sys::LLVMIntPredicate::LLVMIntULT,
        next,
        c::LLVMConstInt(i32t, u64::from(GROUP), 0),
        n,
    );
    c::LLVMBuildCondBr(b, more, head, ret_bb);
    // The entry edge (turn 0) is the caller's (`enter_sequential`).
    c::LLVMAddIncoming(turn, [next].as_mut_ptr(), [latch].as_mut_ptr(), 1);
    head
}

/// Adds the edge from `from` into the sequential loop `head` (turn 0).
unsafe fn enter_sequential(head: LLVMBasicBlockRef, from: LLVMBasicBlockRef) {
    let turn = c::LLVMGetFirstInstruction(head);
    let cx = c::LLVMGetTypeContext(c::LLVMTypeOf(turn));
    let mut v = [c::LLVMConstInt(c::LLVMInt32TypeInContext(cx), 0, 0)];
    let mut bbs = [from];
    c::LLVMAddIncoming(turn, v.as_mut_ptr(), bbs.as_mut_ptr(), 1);
}

/// The group bodies and the way into them (module doc).
unsafe fn build(
    f: LLVMValueRef,
    cfg: &Cfg,
    ret_bb: LLVMBasicBlockRef,
    step: Step,
    roots: &[LLVMValueRef],
    differs: &HashSet<LLVMValueRef>,
) {
    let m = c::LLVMGetGlobalParent(f);
    let cx = c::LLVMGetModuleContext(m);
    let b = c::LLVMCreateBuilderInContext(cx);
    let n = c"".as_ptr();
    let entry = cfg.blocks[0];
    let root_set: HashSet<LLVMValueRef> = roots.iter().copied().collect();
    // The way in: a new entry block before the original one.
    let head = c::LLVMInsertBasicBlockInContext(cx, entry, c"coarse.head".as_ptr());
    let go = c::LLVMAppendBasicBlockInContext(cx, f, c"coarse.go".as_ptr());
    c::LLVMPositionBuilderAtEnd(b, head);
    locate(b, c::LLVMGetBasicBlockTerminator(entry));
    let (cft, cf) = coarse_fn(m);
    let co = c::LLVMBuildCall2(b, cft, cf, std::ptr::null_mut(), 0, n);
    // The warp's index in its group from the copied index: the root read again, with its
    // context pointer (the context call, or a constant offset from it: `ir::ctx_offset`)
    // made here, before the original entry that holds the original's.
    let mut p = c::LLVMGetOperand(roots[0], 0);
    if !c::LLVMIsAGetElementPtrInst(p).is_null() {
        let ctx = insert_clone(b, c::LLVMGetOperand(p, 0));
        p = insert_clone(b, p);
        c::LLVMSetOperand(p, 0, ctx);
    } else {
        p = insert_clone(b, p);
    }
    let r = insert_clone(b, roots[0]);
    c::LLVMSetOperand(r, 0, p);
    let per = step.per();
    let t = c::LLVMTypeOf(r);
    // `per` is a power of two (32, or 32 / %ntid.x): a shift, which the uniformity analysis
    // knows keeps an aligned warp's one value (`%tid.x >> 5`).
    let warp = c::LLVMBuildLShr(
        b,
        r,
        c::LLVMConstInt(t, u64::from(per.trailing_zeros()), 0),
        n,
    );
    let lead = c::LLVMBuildICmp(
        b,
        llvm_sys::LLVMIntPredicate::LLVMIntEQ,
        c::LLVMBuildAnd(b, warp, c::LLVMConstInt(t, u64::from(GROUP - 1), 0), n),
        c::LLVMConstInt(t, 0, 0),
        n,
    );
    let idle = c::LLVMBuildAnd(b, co, c::LLVMBuildNot(b, lead, n), n);
    c::LLVMBuildCondBr(b, idle, ret_bb, go);
    c::LLVMPositionBuilderAtEnd(b, go);
    let jam_entry = c::LLVMAppendBasicBlockInContext(cx, f, c"coarse.jam".as_ptr());
    c::LLVMBuildCondBr(b, co, jam_entry, entry);

    // The copies one after another, for lanes whose copies disagree at the entry.
    let seq = sequential(b, f, cfg, ret_bb, step, &root_set);

    // The jammed body.
    let mut blocks: HashMap<LLVMBasicBlockRef, LLVMBasicBlockRef> = HashMap::new();
    blocks.insert(entry, jam_entry);
    blocks.insert(ret_bb, ret_bb);
    for &bb in &cfg.blocks[1..] {
        if bb != ret_bb {
            blocks.insert(
                bb,
                c::LLVMAppendBasicBlockInContext(cx, f, c"coarse.jam".as_ptr()),
            );
        }
    }
    // The entry's successors see its last block: past the agreement test.
    let agreed = c::LLVMAppendBasicBlockInContext(cx, f, c"coarse.agreed".as_ptr());
    let g = GROUP as usize;
    let mut maps: Vec<HashMap<LLVMValueRef, LLVMValueRef>> = vec![HashMap::new(); g];
    let mut made: Vec<Vec<LLVMValueRef>> = vec![Vec::new(); g];
    let mut phis: Vec<(LLVMValueRef, LLVMValueRef, usize)> = Vec::new();
    let mut entry_term = None;
    for &bb in &cfg.blocks {
        if bb == ret_bb {
            continue;
        }
        c::LLVMPositionBuilderAtEnd(b, blocks[&bb]);
        for i in ir::instructions(bb) {
            let copies = if differs.contains(&i) { g } else { 1 };
            if ir::opcode(i) == O::LLVMPHI {
                for (j, map) in maps.iter_mut().enumerate() {
                    if j < copies {
                        let x = c::LLVMBuildPhi(b, c::LLVMTypeOf(i), n);
                        phis.push((i, x, j));
                        map.insert(i, x);
                    }
                }
                if copies == 1 {
                    let x = maps[0][&i];
                    for map in maps.iter_mut().skip(1) {
                        map.insert(i, x);
                    }
                }
                continue;
            }
            if !c::LLVMIsATerminatorInst(i).is_null() {
                if bb == entry {
                    entry_term = Some(i);
                    continue;
                }
                let x = insert_clone(b, i);
                made[0].push(x);
                continue;
            }
            for j in 0..copies {
                let x = insert_clone(b, i);
                made[j].push(x);
                let v = if root_set.contains(&i) {
                    let v = offset(b, x, step, j as u32);
                    c::LLVMPositionBuilderAtEnd(b, blocks[&bb]);
                    v
                } else {
                    x
                };
                maps[j].insert(i, v);
            }
            if copies == 1 {
                let x = maps[0][&i];
                for map in maps.iter_mut().skip(1) {
                    map.insert(i, x);
                }
            }
        }
    }
    for (j, mk) in made.iter().enumerate() {
        ir::remap_clones(mk, &maps[j], &blocks);
    }
    // The entry's branch: taken where every copy's condition is copy 0's (lane by lane),
    // else the copies one after another.
    if let Some(term) = entry_term {
        c::LLVMPositionBuilderAtEnd(b, jam_entry);
        locate(b, term);
        let mut agree = c::LLVMConstInt(c::LLVMInt1TypeInContext(cx), 1, 0);
        if ir::opcode(term) == O::LLVMBr && c::LLVMIsConditional(term) != 0 {
            let cond = c::LLVMGetCondition(term);
            if differs.contains(&cond) {
                let c0 = maps[0][&cond];
                for map in maps.iter().skip(1) {
                    let same = c::LLVMBuildICmp(
                        b,
                        llvm_sys::LLVMIntPredicate::LLVMIntEQ,
                        map[&cond],
                        c0,
                        n,
                    );
                    agree = c::LLVMBuildAnd(b, agree, same, n);
                }
            }
        }
        c::LLVMBuildCondBr(b, agree, agreed, seq);
        enter_sequential(seq, jam_entry);
        c::LLVMPositionBuilderAtEnd(b, agreed);
        let x = insert_clone(b, term);
        ir::remap_clones(&[x], &maps[0], &blocks);
    }
    let mut from_blocks = blocks.clone();
    from_blocks.insert(entry, agreed);
    for &(i, x, j) in &phis {
        ir::copy_incoming(i, x, &maps[j], &from_blocks);
    }
    c::LLVMDisposeBuilder(b);
}
