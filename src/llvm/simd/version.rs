//! Versions on a halving distance (issue 17): a loop whose header phi `j` halves each trip
//! (`j >>= 1`, a bitonic sort's or a tree's distance) and whose body, up to the loop's CTA
//! barrier, mixes `j` into a lane index by a mask or a flip (`t & (j - 1)`, `t ^ j`) gets
//! copies of that body for `j` = 1, 2, 4, 8 and 16, chosen by uniform branches on `j`, with
//! the original body for every other value. In a copy the partner index is a constant
//! permutation of the warp's lanes, which `lanetab` reads off the vector code: its `.shared`
//! loads are two plain vector loads and a constant shuffle, its stores constant shuffles and
//! masked stores, where the original body tests the lanes' offsets at run time for each
//! access (a 64-element window, a compare-exchange pair table).
//!
//! Distances that are multiples of 32 (`j & 31 == 0`: 32, 64, ... and 0) get one more copy
//! (`widen`, after InstCombine has folded the constant copies), behind a uniform branch in
//! front of the others, in which `j` is `j & -32`: the same value there, but one whose five
//! low zero bits `stride.rs` sees, so `t & (j - 1)` of an aligned warp's lanes is lane 0's
//! plus the lane number (`Strides` on `and` with a uniform mask whose low bits are ones) and
//! the partners' `.shared` accesses plain vector loads and stores with no run-time test of the
//! lanes' offsets. The copy is made after InstCombine, which would drop the `and` under the
//! dominating test. Its test comes first: a stage that fails a test pays for it (a mask
//! select per test in the warp function), and the wide stages are the most (bitonic sort of
//! 1024: 15 of 55). The original body is left for distances of no power of two. In the warp
//! function each copy's guard is its test's condition and the next test's edge is written
//! only where that guard fails (`emit.rs`: `Warp::side_hint`, `Warp::defer_edge`), so the
//! tests after the wide one become one switch on `cttz(j)` (lit run-simd-version-switch).
//!
//! Only a body that is a closed piece between the header and the barrier's block is copied:
//! no phi but the header's, every edge out of it into the barrier's block (which has no
//! phi), and no value of it used outside it; the copies then join where the original did.
//! Bitonic sort (`benches/suite`): CPU per launch x0.80 (3 pairs, 0.76-0.80), compile CPU
//! level (the original body loses its window code, `GENERIC`).

use std::collections::{HashMap, HashSet};

use llvm_sys::core as c;
use llvm_sys::prelude::*;
use llvm_sys::LLVMOpcode as O;

use super::cfg::Cfg;
use super::ir;
use super::uniform::{call_kind, CallKind};

/// The distances that get a copy: those below a warp, whose partners are other lanes of it.
const DISTANCES: [u64; 5] = [1, 2, 4, 8, 16];

/// Metadata on the original body's `.shared` accesses: a halving power of two runs a copy,
/// so the original sees values that are no power of two (the wide copy, made after the mark,
/// takes the multiples of 32: `widen`); its window accesses skip the tests and code for in-warp
/// permutations (`lanes.rs`: a consecutive test, else a gather or scatter), which were a
/// third of its compile time for nothing.
pub const GENERIC: &std::ffi::CStr = c"ptx2llvm.version.generic";

/// Instructions a body may have to be copied (compile time: five copies).
const MAX_BODY: usize = 80;

/// A loop that `version` copied, for `widen`.
pub struct Versioned {
    j: LLVMValueRef,
    /// The original body's first block (the header's non-phi instructions).
    any: LLVMBasicBlockRef,
    /// The loop's header, whose phis are followed by the dispatch to the copies.
    header: LLVMBasicBlockRef,
    /// The loop's barrier block, where every path out of the body goes.
    barrier: LLVMBasicBlockRef,
}

/// Versions the first loop of `f` that has the shape (module doc); what `widen` needs when
/// one was.
///
/// # Safety
/// `f` is a defined function in the cleaned form `cfg` describes.
pub unsafe fn version(f: LLVMValueRef, cfg: &Cfg) -> Option<Versioned> {
    for l in &cfg.loops {
        if let Some(plan) = candidate(cfg, l) {
            return Some(apply(f, &plan));
        }
    }
    None
}

/// The copy for distances that are multiples of 32 (module doc), in front of the original
/// body; whether it was made (the original body must still be a closed, phi-less piece).
///
/// # Safety
/// `v` is what `version` returned for `f`, and only function passes that keep blocks (such
/// as InstCombine) ran since.
pub unsafe fn widen(f: LLVMValueRef, v: &Versioned) -> bool {
    // The original body after InstCombine: blocks reached from `any` before the barrier's.
    let mut body = vec![v.any];
    let mut seen: HashSet<LLVMBasicBlockRef> = body.iter().copied().collect();
    let mut k = 0;
    while k < body.len() {
        let bb = body[k];
        k += 1;
        let Some(t) = ir::instructions(bb).last().copied() else {
            return false;
        };
        for s in 0..c::LLVMGetNumSuccessors(t) {
            let s = c::LLVMGetSuccessor(t, s);
            if s != v.barrier && seen.insert(s) {
                body.push(s);
            }
        }
    }
    let inside: HashSet<LLVMBasicBlockRef> = body.iter().copied().collect();
    for &bb in &body {
        for i in ir::instructions(bb) {
            if !c::LLVMIsAPHINode(i).is_null()
                || ir::users(i)
                    .into_iter()
                    .any(|u| !inside.contains(&c::LLVMGetInstructionParent(u)))
            {
                return false;
            }
        }
    }
    // The header's dispatch (after its phis) moves to a block of its own, behind the test
    // for this copy: the first one, so that the widest stages skip the five constant tests.
    let dispatch: Vec<LLVMValueRef> = ir::instructions(v.header)
        .into_iter()
        .filter(|&i| c::LLVMIsAPHINode(i).is_null())
        .collect();
    let header_only = |i: LLVMValueRef| {
        ir::users(i)
            .into_iter()
            .all(|u| c::LLVMGetInstructionParent(u) == v.header)
    };
    if dispatch.is_empty() || !dispatch.iter().all(|&i| header_only(i)) {
        return false;
    }
    let cx = c::LLVMGetTypeContext(c::LLVMTypeOf(f));
    let b = c::LLVMCreateBuilderInContext(cx);
    let ty = c::LLVMTypeOf(v.j);
    let entry = c::LLVMAppendBasicBlockInContext(cx, f, c"version.j32n".as_ptr());
    c::LLVMPositionBuilderAtEnd(b, entry);
    // `j` itself there: the dispatch below takes only `j & 31 == 0`.
    let jw = c::LLVMBuildAnd(b, v.j, c::LLVMConstInt(ty, !31u64, 1), c"j32n".as_ptr());
    let copy = copy_body(f, b, &body, v.j, jw, "version.j32n", Some(entry));
    let small = c::LLVMAppendBasicBlockInContext(cx, f, c"version.small".as_ptr());
    c::LLVMPositionBuilderAtEnd(b, small);
    for i in dispatch {
        c::LLVMInstructionRemoveFromParent(i);
        c::LLVMInsertIntoBuilder(b, i);
    }
    c::LLVMPositionBuilderAtEnd(b, v.header);
    let low = c::LLVMBuildAnd(b, v.j, c::LLVMConstInt(ty, 31, 0), c"".as_ptr());
    let eq = c::LLVMBuildICmp(
        b,
        llvm_sys::LLVMIntPredicate::LLVMIntEQ,
        low,
        c::LLVMConstInt(ty, 0, 0),
        c"".as_ptr(),
    );
    c::LLVMBuildCondBr(b, eq, copy, small);
    c::LLVMDisposeBuilder(b);
    true
}

/// Copies `body` (closed, phi-less, `body[0]` its entry) into new blocks named `name`, with
/// `j` replaced by `to`; the copy of `body[0]` is appended to `first` when given. Returns the
/// copy's entry.
unsafe fn copy_body(
    f: LLVMValueRef,
    b: LLVMBuilderRef,
    body: &[LLVMBasicBlockRef],
    j: LLVMValueRef,
    to: LLVMValueRef,
    name: &str,
    first: Option<LLVMBasicBlockRef>,
) -> LLVMBasicBlockRef {
    let cx = c::LLVMGetTypeContext(c::LLVMTypeOf(f));
    let kind = c::LLVMGetMDKindIDInContext(cx, GENERIC.as_ptr(), GENERIC.count_bytes() as u32);
    let mut map: HashMap<LLVMValueRef, LLVMValueRef> = HashMap::new();
    map.insert(j, to);
    let mut blocks: HashMap<LLVMBasicBlockRef, LLVMBasicBlockRef> = HashMap::new();
    let mut made = Vec::new();
    let cn = std::ffi::CString::new(name).unwrap_or_default();
    for (n, &bb) in body.iter().enumerate() {
        let nb = match first {
            Some(e) if n == 0 => e,
            _ => c::LLVMAppendBasicBlockInContext(cx, f, cn.as_ptr()),
        };
        blocks.insert(bb, nb);
        c::LLVMPositionBuilderAtEnd(b, nb);
        for i in ir::instructions(bb) {
            let x = c::LLVMInstructionClone(i);
            c::LLVMSetMetadata(x, kind, std::ptr::null_mut());
            c::LLVMInsertIntoBuilder(b, x);
            map.insert(i, x);
            made.push(x);
        }
    }
    ir::remap_clones(&made, &map, &blocks);
    blocks[&body[0]]
}

struct Plan {
    header: LLVMBasicBlockRef,
    j: LLVMValueRef,
    /// The loop's barrier block.
    barrier: LLVMBasicBlockRef,
    /// The body's blocks, the header first.
    body: Vec<LLVMBasicBlockRef>,
}

unsafe fn is_barrier(i: LLVMValueRef) -> bool {
    !c::LLVMIsACallInst(i).is_null() && matches!(call_kind(i), CallKind::Barrier(_))
}

unsafe fn candidate(cfg: &Cfg, l: &super::cfg::Loop) -> Option<Plan> {
    let header = cfg.blocks[l.header];
    // The halving phi.
    // SAFETY: `p` is an instruction of the live function `cfg` describes.
    let j = ir::instructions(header).into_iter().find(|&p| unsafe {
        !c::LLVMIsAPHINode(p).is_null()
            && c::LLVMGetTypeKind(c::LLVMTypeOf(p)) == llvm_sys::LLVMTypeKind::LLVMIntegerTypeKind
            && (0..c::LLVMCountIncoming(p)).any(|k| {
                let x = c::LLVMGetIncomingValue(p, k);
                ir::is_instruction(x)
                    && ir::opcode(x) == O::LLVMLShr
                    && c::LLVMGetOperand(x, 0) == p
                    && ir::const_u64(c::LLVMGetOperand(x, 1)) == Some(1)
            })
            && mixes_into_index(p)
    })?;
    // The one barrier block of the loop.
    let bars: Vec<usize> = (0..cfg.blocks.len())
        .filter(|&x| {
            l.blocks[x]
                && ir::instructions(cfg.blocks[x])
                    .into_iter()
                    .any(|i| is_barrier(i))
        })
        .collect();
    let [bar] = bars[..] else {
        return None;
    };
    if bar == l.header {
        return None;
    }
    let barrier_bb = cfg.blocks[bar];
    if ir::instructions(barrier_bb)
        .into_iter()
        .any(|i| !c::LLVMIsAPHINode(i).is_null())
    {
        return None;
    }
    // The body: blocks reached from the header before the barrier's block.
    let mut seen = vec![false; cfg.blocks.len()];
    let mut order = vec![l.header];
    seen[l.header] = true;
    let mut k = 0;
    while k < order.len() {
        let x = order[k];
        k += 1;
        for &s in &cfg.succ[x] {
            if s == bar {
                continue;
            }
            if !l.blocks[s] || s == l.header {
                return None;
            }
            if !seen[s] {
                seen[s] = true;
                order.push(s);
            }
        }
    }
    let body: Vec<LLVMBasicBlockRef> = order.iter().map(|&x| cfg.blocks[x]).collect();
    let inside: HashSet<LLVMBasicBlockRef> = body.iter().copied().collect();
    let mut count = 0;
    for (n, &bb) in body.iter().enumerate() {
        for i in ir::instructions(bb) {
            count += 1;
            let phi = !c::LLVMIsAPHINode(i).is_null();
            if phi && n > 0 {
                return None;
            }
            if is_barrier(i) {
                return None;
            }
            if !phi
                && ir::users(i)
                    .into_iter()
                    .any(|u| !inside.contains(&c::LLVMGetInstructionParent(u)))
            {
                return None;
            }
        }
    }
    (count <= MAX_BODY).then_some(Plan {
        header,
        j,
        barrier: barrier_bb,
        body,
    })
}

/// Whether `j` (or `j - 1`) is an operand of an `and` or `xor`: a lane index's bits picked or
/// flipped by the distance.
unsafe fn mixes_into_index(j: LLVMValueRef) -> bool {
    let direct = |v: LLVMValueRef| {
        ir::users(v)
            .into_iter()
            .any(|u| matches!(ir::opcode(u), O::LLVMAnd | O::LLVMXor))
    };
    direct(j)
        || ir::users(j).into_iter().any(|u| {
            ir::opcode(u) == O::LLVMAdd
                && c::LLVMGetOperand(u, 0) == j
                && !c::LLVMIsAConstantInt(c::LLVMGetOperand(u, 1)).is_null()
                && direct(u)
        })
}

unsafe fn apply(f: LLVMValueRef, plan: &Plan) -> Versioned {
    let cx = c::LLVMGetTypeContext(c::LLVMTypeOf(f));
    let b = c::LLVMCreateBuilderInContext(cx);
    let n = c"".as_ptr();
    // The header's body moves to a block of its own, after the phis.
    let any = c::LLVMAppendBasicBlockInContext(cx, f, c"version.any".as_ptr());
    c::LLVMPositionBuilderAtEnd(b, any);
    for i in ir::instructions(plan.header) {
        if c::LLVMIsAPHINode(i).is_null() {
            c::LLVMInstructionRemoveFromParent(i);
            c::LLVMInsertIntoBuilder(b, i);
        }
    }
    let body: Vec<LLVMBasicBlockRef> = std::iter::once(any)
        .chain(plan.body.iter().skip(1).copied())
        .collect();
    // The original body's accesses are marked before the copies are made (which keep no
    // mark): the distances below a warp never reach it (`GENERIC`).
    let kind = c::LLVMGetMDKindIDInContext(cx, GENERIC.as_ptr(), GENERIC.count_bytes() as u32);
    let empty = c::LLVMMDNodeInContext2(cx, std::ptr::null_mut(), 0);
    for &bb in &body {
        for i in ir::instructions(bb) {
            if !c::LLVMIsALoadInst(i).is_null() || !c::LLVMIsAStoreInst(i).is_null() {
                c::LLVMSetMetadata(i, kind, c::LLVMMetadataAsValue(cx, empty));
            }
        }
    }
    let ty = c::LLVMTypeOf(plan.j);
    let mut entries = Vec::new();
    for &d in &DISTANCES {
        let to = c::LLVMConstInt(ty, d, 0);
        let entry = copy_body(f, b, &body, plan.j, to, &format!("version.j{d}"), None);
        entries.push((d, entry));
    }
    // The dispatch: uniform branches on `j`, the original body last.
    c::LLVMPositionBuilderAtEnd(b, plan.header);
    for (d, entry) in entries {
        let next = c::LLVMAppendBasicBlockInContext(cx, f, c"version.next".as_ptr());
        let eq = c::LLVMBuildICmp(
            b,
            llvm_sys::LLVMIntPredicate::LLVMIntEQ,
            plan.j,
            c::LLVMConstInt(ty, d, 0),
            n,
        );
        c::LLVMBuildCondBr(b, eq, entry, next);
        c::LLVMPositionBuilderAtEnd(b, next);
    }
    c::LLVMBuildBr(b, any);
    c::LLVMDisposeBuilder(b);
    Versioned {
        j: plan.j,
        any,
        header: plan.header,
        barrier: plan.barrier,
    }
}
