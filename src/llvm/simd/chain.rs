//! Diamonds that branch on one condition, one after another, as two straight paths (issue 17).
//!
//! The warp engine tests an access's lanes where it cannot prove them: a load in a grid-stride
//! loop whose index lanes are consecutive only if the loop's entry test passed and the 32-bit
//! index did not wrap (`Strides::entry_tested`) is a diamond, `br %ok, vector, gather`, and a
//! join whose phi takes the loaded vector. The accesses through one index share the condition,
//! so a float4 grid-stride add of four unrolled steps ran diamonds on one `i1` in a row: the
//! loaded vectors crossed every join in registers, which code generation spilled (a 512-byte
//! load stored to the stack and read back), and the branches and phis took a fifth of the
//! kernel's time (`vecadd_f4`: without the tests, x0.80 of its CPU time).
//!
//! The condition does not change between the diamonds, so every execution takes the `true`
//! sides of all of them or the `false` sides of all of them. This pass finds such chains of
//! marked branches (`mark`: each side a single-entry region, both sides meeting at one join,
//! the join ending in the next diamond on the same condition) and keeps the joins on the
//! `true` path, with a copy of each join but the last on the `false` path:
//! `head → T1 → J1 → T2 → … → Jn` and `head → F1 → J1' → F2 → … → Jn`. Phis of a join become
//! the value of their path; values of the joins used at or after the last join get a phi
//! there. The copies are bounded (`MAX_CLONED` instructions per function).

use std::collections::{HashMap, HashSet};

use llvm_sys::core as c;
use llvm_sys::prelude::*;
use llvm_sys::LLVMOpcode as O;

use super::ir;

/// The metadata that marks the branch of an entry-tested access (`lanes.rs`): the diamonds
/// this pass joins. Others on one condition (a whole-mask test before each access of a
/// loop, Triton's guarded tiles) were level in run time and cost compile time (Triton's
/// matmul: 1.5 s -> 2.4 s).
const ENTRY_TEST: &std::ffi::CStr = c"ptx2llvm.entry_test";

/// Marks `br` as an entry-tested access's branch, which this pass may join with others.
///
/// # Safety
/// `br` is a live branch instruction.
pub unsafe fn mark(br: LLVMValueRef) {
    let cx = c::LLVMGetTypeContext(c::LLVMTypeOf(br));
    let node = c::LLVMMDNodeInContext2(cx, std::ptr::null_mut(), 0);
    c::LLVMSetMetadata(br, entry_test_kind(br), c::LLVMMetadataAsValue(cx, node));
}

unsafe fn marked(br: LLVMValueRef) -> bool {
    !c::LLVMGetMetadata(br, entry_test_kind(br)).is_null()
}

/// The metadata kind of `ENTRY_TEST` in the context of instruction `i`.
unsafe fn entry_test_kind(i: LLVMValueRef) -> u32 {
    let cx = c::LLVMGetTypeContext(c::LLVMTypeOf(i));
    c::LLVMGetMDKindIDInContext(cx, ENTRY_TEST.as_ptr(), ENTRY_TEST.count_bytes() as u32)
}

/// The most instructions of joins a function's chains may copy.
const MAX_CLONED: usize = 1500;

/// The most blocks of one side of a diamond.
const MAX_SIDE: usize = 8;

/// The most chains rewritten in one function (each rewrite rescans it).
const MAX_CHAINS: usize = 64;

type Bb = LLVMBasicBlockRef;

/// One side of a diamond: its blocks and those that branch to the join.
struct Side {
    blocks: Vec<Bb>,
    exits: Vec<Bb>,
}

struct Diamond {
    t: Side,
    e: Side,
    join: Bb,
}

/// The condition and successors of `bb`'s branch when it is a marked conditional one.
unsafe fn cond_br(bb: Bb) -> Option<(LLVMValueRef, Bb, Bb)> {
    let t = c::LLVMGetBasicBlockTerminator(bb);
    if t.is_null() || ir::opcode(t) != O::LLVMBr || c::LLVMIsConditional(t) == 0 || !marked(t) {
        return None;
    }
    Some((
        c::LLVMGetCondition(t),
        c::LLVMGetSuccessor(t, 0),
        c::LLVMGetSuccessor(t, 1),
    ))
}

unsafe fn preds(f: LLVMValueRef) -> HashMap<Bb, Vec<Bb>> {
    let mut p: HashMap<Bb, Vec<Bb>> = HashMap::new();
    for bb in ir::blocks(f) {
        for s in ir::successors(bb) {
            let v = p.entry(s).or_default();
            if !v.contains(&bb) {
                v.push(bb);
            }
        }
    }
    p
}

/// The first instruction of `bb` that is not a phi (its terminator at the latest).
unsafe fn first_non_phi(bb: Bb) -> LLVMValueRef {
    ir::instructions(bb)
        .into_iter()
        .find(|&i| ir::opcode(i) != O::LLVMPHI)
        .expect("a block ends in a terminator")
}

unsafe fn has_phi(bb: Bb) -> bool {
    let i = c::LLVMGetFirstInstruction(bb);
    !i.is_null() && ir::opcode(i) == O::LLVMPHI
}

/// The side of a diamond entered at `entry` from `head`: the blocks reachable from it whose
/// predecessors are all on the side, and the one block outside that they branch to.
unsafe fn side(entry: Bb, head: Bb, preds: &HashMap<Bb, Vec<Bb>>) -> Option<(Side, Bb)> {
    if preds.get(&entry)? != &vec![head] || has_phi(entry) {
        return None;
    }
    let mut blocks = vec![entry];
    let mut inside: HashSet<Bb> = HashSet::from([entry]);
    let mut k = 0;
    while k < blocks.len() {
        for s in ir::successors(blocks[k]) {
            if inside.contains(&s) || s == head {
                continue;
            }
            if preds
                .get(&s)
                .is_some_and(|ps| ps.iter().all(|p| inside.contains(p)))
            {
                if blocks.len() == MAX_SIDE || has_phi(s) {
                    return None;
                }
                inside.insert(s);
                blocks.push(s);
            }
        }
        k += 1;
    }
    let mut out: Vec<Bb> = Vec::new();
    for &bb in &blocks {
        for s in ir::successors(bb) {
            if !inside.contains(&s) && !out.contains(&s) {
                out.push(s);
            }
        }
    }
    let [join] = out[..] else {
        return None;
    };
    let exits = blocks
        .iter()
        .copied()
        .filter(|&bb| ir::successors(bb).contains(&join))
        .collect();
    Some((Side { blocks, exits }, join))
}

/// The chain of diamonds on `cond` that starts with `head`'s branch.
unsafe fn chain(head: Bb, preds: &HashMap<Bb, Vec<Bb>>) -> Vec<Diamond> {
    let mut out = Vec::new();
    let Some((cond, _, _)) = cond_br(head) else {
        return out;
    };
    let mut cur = head;
    let mut seen = HashSet::from([head]);
    while let Some((c2, t, e)) = cond_br(cur) {
        if c2 != cond || t == e {
            break;
        }
        let (Some((ts, tj)), Some((es, ej))) = (side(t, cur, preds), side(e, cur, preds)) else {
            break;
        };
        // The join has no predecessor but the two sides' exits.
        let jp = preds.get(&tj).map_or(0, Vec::len);
        if tj != ej || seen.contains(&tj) || jp != ts.exits.len() + es.exits.len() {
            break;
        }
        seen.insert(tj);
        out.push(Diamond {
            t: ts,
            e: es,
            join: tj,
        });
        cur = tj;
    }
    out
}

/// Replaces the operands of `i` found in `map`.
unsafe fn remap(i: LLVMValueRef, map: &HashMap<LLVMValueRef, LLVMValueRef>) {
    for k in 0..c::LLVMGetNumOperands(i) as u32 {
        let v = c::LLVMGetOperand(i, k);
        if let Some(&w) = map.get(&v) {
            c::LLVMSetOperand(i, k, w);
        }
    }
}

/// The value of phi `p` on the edges from `from` (its incoming values there, through `map`): the
/// one value, or a new phi at `b` when the edges bring several.
unsafe fn phi_on(
    b: LLVMBuilderRef,
    p: LLVMValueRef,
    from: &[Bb],
    map: &HashMap<LLVMValueRef, LLVMValueRef>,
) -> LLVMValueRef {
    let mut vals = Vec::new();
    for k in 0..c::LLVMCountIncoming(p) {
        if from.contains(&c::LLVMGetIncomingBlock(p, k)) {
            let v = c::LLVMGetIncomingValue(p, k);
            vals.push((*map.get(&v).unwrap_or(&v), c::LLVMGetIncomingBlock(p, k)));
        }
    }
    if vals.iter().all(|&(v, _)| v == vals[0].0) {
        return vals[0].0;
    }
    let q = c::LLVMBuildPhi(b, c::LLVMTypeOf(p), c"".as_ptr());
    for (mut v, mut bb) in vals {
        c::LLVMAddIncoming(q, &mut v, &mut bb, 1);
    }
    q
}

/// Rewrites `ch` (at least two diamonds) into its two paths; returns the instructions copied.
unsafe fn rewrite(f: LLVMValueRef, ch: &[Diamond]) -> usize {
    let cx = c::LLVMGetTypeContext(c::LLVMTypeOf(f));
    let b = c::LLVMCreateBuilderInContext(cx);
    let n = ch.len();
    let mut slow: HashMap<LLVMValueRef, LLVMValueRef> = HashMap::new();
    // (value of a join before the last, its value on the true path, on the false path)
    let mut values: Vec<(LLVMValueRef, LLVMValueRef, LLVMValueRef)> = Vec::new();
    let mut fast_blocks: HashSet<Bb> = HashSet::new();
    let mut copied = 0;
    for (k, d) in ch.iter().enumerate() {
        fast_blocks.extend(&d.t.blocks);
        for &bb in &d.e.blocks {
            for i in ir::instructions(bb) {
                remap(i, &slow);
            }
        }
        if k == n - 1 {
            break;
        }
        let j = d.join;
        fast_blocks.insert(j);
        let js = c::LLVMAppendBasicBlockInContext(cx, f, c"chain.false".as_ptr());
        c::LLVMPositionBuilderAtEnd(b, js);
        let term = c::LLVMGetBasicBlockTerminator(j);
        let first = first_non_phi(j);
        for i in ir::instructions(j) {
            if i == term {
                break;
            }
            if ir::opcode(i) == O::LLVMPHI {
                let s = phi_on(b, i, &d.e.exits, &slow);
                c::LLVMPositionBuilderBefore(b, first);
                let t = phi_on(b, i, &d.t.exits, &HashMap::new());
                c::LLVMPositionBuilderAtEnd(b, js);
                slow.insert(i, s);
                values.push((i, t, s));
            } else {
                let s = c::LLVMInstructionClone(i);
                c::LLVMInsertIntoBuilder(b, s);
                remap(s, &slow);
                slow.insert(i, s);
                values.push((i, i, s));
                copied += 1;
            }
        }
        let (_, tn, en) = cond_br(j).expect("a chain's join branches on its condition");
        c::LLVMBuildBr(b, en);
        c::LLVMPositionBuilderBefore(b, term);
        c::LLVMBuildBr(b, tn);
        c::LLVMInstructionEraseFromParent(term);
        for &x in &d.e.exits {
            let t = c::LLVMGetBasicBlockTerminator(x);
            for s in 0..c::LLVMGetNumSuccessors(t) {
                if c::LLVMGetSuccessor(t, s) == j {
                    c::LLVMSetSuccessor(t, s, js);
                }
            }
        }
    }
    let last = &ch[n - 1];
    let jn = last.join;
    // The last join's phis take the false path's copies on its edges.
    for p in ir::instructions(jn) {
        if ir::opcode(p) != O::LLVMPHI {
            break;
        }
        for k in 0..c::LLVMCountIncoming(p) {
            if last.e.exits.contains(&c::LLVMGetIncomingBlock(p, k)) {
                let v = c::LLVMGetIncomingValue(p, k);
                if let Some(&w) = slow.get(&v) {
                    c::LLVMSetOperand(p, k, w);
                }
            }
        }
    }
    let first_n = first_non_phi(jn);
    for (v, t, s) in values {
        let mut merged = None;
        for u in ir::users(v) {
            let ub = c::LLVMGetInstructionParent(u);
            if fast_blocks.contains(&ub) {
                if t != v {
                    for k in 0..c::LLVMGetNumOperands(u) as u32 {
                        if c::LLVMGetOperand(u, k) == v {
                            c::LLVMSetOperand(u, k, t);
                        }
                    }
                }
                continue;
            }
            let edge_phi = ub == jn && ir::opcode(u) == O::LLVMPHI;
            for k in 0..c::LLVMGetNumOperands(u) as u32 {
                if c::LLVMGetOperand(u, k) != v {
                    continue;
                }
                let w = if edge_phi {
                    if last.e.exits.contains(&c::LLVMGetIncomingBlock(u, k)) {
                        s
                    } else {
                        t
                    }
                } else {
                    *merged.get_or_insert_with(|| {
                        c::LLVMPositionBuilderBefore(b, first_n);
                        let q = c::LLVMBuildPhi(b, c::LLVMTypeOf(v), c"".as_ptr());
                        for &x in &last.t.exits {
                            let (mut tv, mut xb) = (t, x);
                            c::LLVMAddIncoming(q, &mut tv, &mut xb, 1);
                        }
                        for &x in &last.e.exits {
                            let (mut sv, mut xb) = (s, x);
                            c::LLVMAddIncoming(q, &mut sv, &mut xb, 1);
                        }
                        q
                    })
                };
                c::LLVMSetOperand(u, k, w);
            }
        }
        if ir::opcode(v) == O::LLVMPHI {
            c::LLVMInstructionEraseFromParent(v);
        }
    }
    c::LLVMDisposeBuilder(b);
    copied
}

/// Rewrites the chains of diamonds on one condition in every function of `m` into two paths;
/// returns how many chains (when any, SimplifyCFG is to merge the paths' blocks).
///
/// # Safety
/// `m` is a live module.
pub unsafe fn fold(m: LLVMModuleRef) -> usize {
    let mut total = 0;
    for f in ir::functions(m) {
        if c::LLVMCountBasicBlocks(f) == 0 {
            continue;
        }
        let mut budget = MAX_CLONED;
        let mut done = 0;
        'scan: while done < MAX_CHAINS {
            let p = preds(f);
            for bb in ir::blocks(f) {
                let ch = chain(bb, &p);
                if ch.len() < 2 {
                    continue;
                }
                let size: usize = ch[..ch.len() - 1]
                    .iter()
                    .map(|d| ir::instructions(d.join).len())
                    .sum();
                if size > budget {
                    continue;
                }
                budget -= rewrite(f, &ch);
                done += 1;
                continue 'scan;
            }
            break;
        }
        total += done;
    }
    total
}
