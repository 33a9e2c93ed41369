//! Sinking of closed expressions before the NVPTX back end, so that they keep their source
//! lines. LLVM's MachineSink moves an instruction whose uses are all in a later block there too,
//! but gives it the merge of its location and that of the instruction it lands before, which is
//! line 0 when the lines differ: the source line of an instruction that only feeds a later block
//! (`%ctaid.y` read at the top of a Triton kernel, used after its prologue) disappears from the
//! PTX. Moving the instruction in the IR keeps its own location.
//!
//! LLVM's IR `sink` pass does that for everything and raises ptxas's register counts (up to +20
//! on NVRTC's math64), since sinking `a + b` makes `a` and `b` live to the new place. This one
//! moves only expressions that cannot lengthen another value's life: every operand is a
//! constant, a kernel argument (a `.param` the back end loads where it is used), or an
//! instruction of the same block used only by this expression and moved with it. It moves
//! them only out of and into blocks outside loops, to the nearest block dominating all uses, so
//! they run at most as often as before.

use llvm_sys::core as c;
use llvm_sys::prelude::{LLVMBasicBlockRef, LLVMValueRef};
use llvm_sys::LLVMOpcode;
use std::collections::HashMap;

use super::Module;
use inkwell::values::AsValueRef as _;

/// How deep an operand tree moved with its user may be.
const MAX_DEPTH: u32 = 8;

/// Sinks closed expressions in every function of `m` (see the module comment).
pub fn sink_closed_expressions(m: &Module) {
    for f in m.get_functions() {
        // SAFETY: `f` is a function of the live module `m`; the pass only reads its blocks and
        // instructions and moves instructions between its blocks (no value is freed).
        unsafe { sink_function(f.as_value_ref()) };
    }
}

/// The control-flow facts the pass needs for one function: blocks in reverse post-order,
/// immediate dominators (as indices) and which blocks are in a cycle.
struct Cfg {
    index: HashMap<LLVMBasicBlockRef, usize>,
    blocks: Vec<LLVMBasicBlockRef>,
    idom: Vec<usize>,
    in_cycle: Vec<bool>,
}

unsafe fn successors(b: LLVMBasicBlockRef) -> Vec<LLVMBasicBlockRef> {
    let t = c::LLVMGetBasicBlockTerminator(b);
    if t.is_null() {
        return Vec::new();
    }
    (0..c::LLVMGetNumSuccessors(t))
        .map(|i| c::LLVMGetSuccessor(t, i))
        .collect()
}

impl Cfg {
    unsafe fn new(f: LLVMValueRef) -> Option<Cfg> {
        let entry = c::LLVMGetEntryBasicBlock(f);
        // Reverse post-order by an explicit stack (kernels have thousands of blocks).
        let mut post = Vec::new();
        let mut seen = std::collections::HashSet::new();
        let mut stack = vec![(entry, successors(entry), 0usize)];
        seen.insert(entry);
        while let Some((b, succ, i)) = stack.last_mut() {
            if *i < succ.len() {
                let s = succ[*i];
                *i += 1;
                if seen.insert(s) {
                    stack.push((s, successors(s), 0));
                }
            } else {
                post.push(*b);
                stack.pop();
            }
        }
        post.reverse();
        let blocks = post;
        let index: HashMap<_, _> = blocks.iter().enumerate().map(|(i, &b)| (b, i)).collect();
        let n = blocks.len();
        let succ: Vec<Vec<usize>> = blocks
            .iter()
            .map(|&b| successors(b).iter().map(|s| index[s]).collect())
            .collect();
        let mut preds = vec![Vec::new(); n];
        for (i, ss) in succ.iter().enumerate() {
            for &s in ss {
                preds[s].push(i);
            }
        }
        // Immediate dominators (Cooper, Harvey and Kennedy's iteration over the RPO).
        const NONE: usize = usize::MAX;
        let mut idom = vec![NONE; n];
        idom[0] = 0;
        let mut changed = true;
        while changed {
            changed = false;
            for b in 1..n {
                let mut new = NONE;
                for &p in &preds[b] {
                    if idom[p] == NONE {
                        continue;
                    }
                    new = if new == NONE {
                        p
                    } else {
                        intersect(&idom, p, new)
                    };
                }
                if new != idom[b] {
                    idom[b] = new;
                    changed = true;
                }
            }
        }
        // A block is in a cycle when it reaches one of its predecessors (or itself); a
        // retreating edge of the RPO marks every block between its ends that reaches its source.
        let mut in_cycle = vec![false; n];
        for (s, ss) in succ.iter().enumerate() {
            for &t in ss {
                if t <= s {
                    // Blocks on a path t →* s: reachable from t and reaching s.
                    let from_t = reach(&succ, t);
                    let to_s = reach(&preds, s);
                    for b in 0..n {
                        if from_t[b] && to_s[b] {
                            in_cycle[b] = true;
                        }
                    }
                }
            }
        }
        Some(Cfg {
            index,
            blocks,
            idom,
            in_cycle,
        })
    }

    /// The nearest common dominator of two blocks (indices).
    fn common(&self, a: usize, b: usize) -> usize {
        intersect(&self.idom, a, b)
    }

    fn dominates(&self, a: usize, mut b: usize) -> bool {
        while b != a {
            if b == 0 {
                return false;
            }
            b = self.idom[b];
        }
        true
    }
}

fn intersect(idom: &[usize], mut a: usize, mut b: usize) -> usize {
    while a != b {
        while a > b {
            a = idom[a];
        }
        while b > a {
            b = idom[b];
        }
    }
    a
}

fn reach(edges: &[Vec<usize>], from: usize) -> Vec<bool> {
    let mut seen = vec![false; edges.len()];
    let mut stack = vec![from];
    seen[from] = true;
    while let Some(b) = stack.pop() {
        for &s in &edges[b] {
            if !seen[s] {
                seen[s] = true;
                stack.push(s);
            }
        }
    }
    seen
}

/// Instructions without side effects or memory access whose moving changes nothing but where
/// they run: arithmetic, comparisons, casts, selects, address arithmetic and reads of special
/// registers (`llvm.nvvm.read.ptx.sreg.*`, which have no operands) other than clocks and
/// timers.
unsafe fn pure(i: LLVMValueRef) -> bool {
    use LLVMOpcode::*;
    match c::LLVMGetInstructionOpcode(i) {
        LLVMAdd | LLVMFAdd | LLVMSub | LLVMFSub | LLVMMul | LLVMFMul | LLVMShl | LLVMLShr
        | LLVMAShr | LLVMAnd | LLVMOr | LLVMXor | LLVMFNeg | LLVMTrunc | LLVMZExt | LLVMSExt
        | LLVMFPTrunc | LLVMFPExt | LLVMFPToUI | LLVMFPToSI | LLVMUIToFP | LLVMSIToFP
        | LLVMPtrToInt | LLVMIntToPtr | LLVMBitCast | LLVMAddrSpaceCast | LLVMGetElementPtr
        | LLVMICmp | LLVMFCmp | LLVMSelect => true,
        LLVMCall => {
            let callee = c::LLVMGetCalledValue(i);
            if c::LLVMIsAFunction(callee).is_null() {
                return false;
            }
            let mut len = 0;
            let p = c::LLVMGetValueName2(callee, &mut len);
            let name = std::slice::from_raw_parts(p as *const u8, len);
            // Clocks and timers read the time they run at: moving one past a `nanosleep`
            // or another clock changes what a kernel measures.
            let timed = [&b"clock"[..], b"globaltimer"]
                .iter()
                .any(|t| name[name.len().min(24)..].starts_with(t));
            name.starts_with(b"llvm.nvvm.read.ptx.sreg.") && !timed
        }
        _ => false,
    }
}

/// The users of `v` (with repetitions), each with the block where the use happens: a PHI's
/// incoming block, else the user's block.
unsafe fn uses(v: LLVMValueRef) -> Vec<(LLVMValueRef, LLVMBasicBlockRef)> {
    let mut out = Vec::new();
    let mut u = c::LLVMGetFirstUse(v);
    while !u.is_null() {
        let user = c::LLVMGetUser(u);
        if c::LLVMIsAInstruction(user).is_null() {
            return Vec::new();
        }
        if !c::LLVMIsAPHINode(user).is_null() {
            for k in 0..c::LLVMCountIncoming(user) {
                if c::LLVMGetIncomingValue(user, k) == v {
                    out.push((user, c::LLVMGetIncomingBlock(user, k)));
                }
            }
        } else {
            out.push((user, c::LLVMGetInstructionParent(user)));
        }
        u = c::LLVMGetNextUse(u);
    }
    out
}

/// Whether sinking `user` out of block `s` to block `d` leaves its operand `v` live no longer:
/// `v` is a constant or a kernel argument, or is live through `d` anyway (used again in a block
/// `d` dominates), or moves along with `user` (of block `s`, pure, used only by `user`, and its
/// own operands the same).
unsafe fn stays_short(
    v: LLVMValueRef,
    s: LLVMBasicBlockRef,
    user: LLVMValueRef,
    cfg: &Cfg,
    d: usize,
    depth: u32,
) -> bool {
    if !c::LLVMIsAConstant(v).is_null() || !c::LLVMIsAArgument(v).is_null() {
        return true;
    }
    if depth == 0 || c::LLVMIsAInstruction(v).is_null() {
        return false;
    }
    let us = uses(v);
    let others = us.iter().filter(|&&(u, _)| u != user);
    let live_through = others
        .clone()
        .any(|&(_, b)| cfg.index.get(&b).is_some_and(|&bi| cfg.dominates(d, bi)));
    if live_through {
        return true;
    }
    others.count() == 0
        && c::LLVMIsAPHINode(v).is_null()
        && c::LLVMGetInstructionParent(v) == s
        && pure(v)
        && operands_stay_short(v, s, cfg, d, depth - 1)
}

unsafe fn operands_stay_short(
    i: LLVMValueRef,
    s: LLVMBasicBlockRef,
    cfg: &Cfg,
    d: usize,
    depth: u32,
) -> bool {
    (0..c::LLVMGetNumOperands(i) as u32)
        .all(|k| stays_short(c::LLVMGetOperand(i, k), s, i, cfg, d, depth))
}

/// The width of a scalar integer, float or pointer value (None for vectors and the rest).
unsafe fn bits(v: LLVMValueRef) -> Option<u32> {
    use llvm_sys::LLVMTypeKind::*;
    let t = c::LLVMTypeOf(v);
    match c::LLVMGetTypeKind(t) {
        LLVMIntegerTypeKind => Some(c::LLVMGetIntTypeWidth(t)),
        LLVMHalfTypeKind | LLVMBFloatTypeKind => Some(16),
        LLVMFloatTypeKind => Some(32),
        LLVMDoubleTypeKind | LLVMPointerTypeKind => Some(64),
        _ => None,
    }
}

unsafe fn sink_function(f: LLVMValueRef) {
    if c::LLVMCountBasicBlocks(f) < 2 {
        return;
    }
    let Some(cfg) = Cfg::new(f) else { return };
    let builder = c::LLVMCreateBuilderInContext(c::LLVMGetModuleContext(c::LLVMGetGlobalParent(f)));
    for (si, &s) in cfg.blocks.iter().enumerate() {
        if cfg.in_cycle[si] {
            continue;
        }
        // Bottom-up, so that an operand tree follows its user (its uses are then in the new
        // block).
        let mut insts = Vec::new();
        let mut i = c::LLVMGetFirstInstruction(s);
        while !i.is_null() {
            insts.push(i);
            i = c::LLVMGetNextInstruction(i);
        }
        for &i in insts.iter().rev() {
            if !c::LLVMIsAPHINode(i).is_null() || !pure(i) {
                continue;
            }
            let us = uses(i);
            let Some(&(_, b0)) = us.first() else { continue };
            let Some(mut d) = cfg.index.get(&b0).copied() else {
                continue;
            };
            let mut ok = true;
            for &(_, b) in &us {
                match cfg.index.get(&b) {
                    Some(&bi) => d = cfg.common(d, bi),
                    None => ok = false,
                }
            }
            if !ok || d == si || cfg.in_cycle[d] || !cfg.dominates(si, d) {
                continue;
            }
            // One operand may live longer in exchange for `i`, if it is no wider.
            let mut longer = Vec::new();
            for k in 0..c::LLVMGetNumOperands(i) as u32 {
                let v = c::LLVMGetOperand(i, k);
                if !stays_short(v, s, i, &cfg, d, MAX_DEPTH) && !longer.contains(&v) {
                    longer.push(v);
                }
            }
            if longer.len() > 1
                || longer
                    .first()
                    .is_some_and(|&v| bits(v).is_none_or(|b| Some(b) > bits(i)))
            {
                continue;
            }
            // Before the first use in the block, else before its terminator (the uses are
            // in blocks it dominates, or PHIs of its successors).
            let db = cfg.blocks[d];
            let mut at = c::LLVMGetFirstInstruction(db);
            while !at.is_null() {
                let is_use = us
                    .iter()
                    .any(|&(u, _)| u == at && c::LLVMIsAPHINode(u).is_null());
                if is_use || at == c::LLVMGetBasicBlockTerminator(db) {
                    break;
                }
                at = c::LLVMGetNextInstruction(at);
            }
            if at.is_null() {
                continue;
            }
            // The builder gives what it inserts the location of the instruction it was
            // positioned before: `i` gets its own back.
            let loc = llvm_sys::debuginfo::LLVMInstructionGetDebugLoc(i);
            c::LLVMInstructionRemoveFromParent(i);
            c::LLVMPositionBuilderBefore(builder, at);
            c::LLVMInsertIntoBuilder(builder, i);
            llvm_sys::debuginfo::LLVMInstructionSetDebugLoc(i, loc);
        }
    }
    c::LLVMDisposeBuilder(builder);
}
