//! The warp vectorizer of the cpu target (`target::cpu::simd` decides which kernels take it):
//! a kernel's lowered per-thread function becomes a warp function that runs 32 lanes as one
//! SIMD program, and a CTA function `K.simd` with the thread-loop entry ABI
//! (`runtime::fission::FisEntry`) that runs its batch of CTAs as loops over their warps.
//!
//! Steps: clean the kernel function in place (SSA, one return block, loops in simplified and
//! LCSSA form: `CLEANUP`), refuse what the warp model does not cover (`check`), find its
//! control flow (`cfg.rs`) and uniform values (`uniform.rs`), build the warp function
//! (`emit.rs`, `lanes.rs`, `warp.rs`) and the CTA function (`driver.rs`).

mod barrier;
mod cfg;
mod driver;
mod emit;
mod ir;
mod lanes;
mod matrix;
mod stride;
mod uniform;
mod warp;

use llvm_sys::core as c;
use llvm_sys::prelude::*;
use llvm_sys::{LLVMOpcode as O, LLVMTypeKind};

use inkwell::values::AsValueRef as _;

use super::cpu::{HostMachine, ParamPlace};
use super::Module;
use ir::{CtxField, WarpCall};
use uniform::{call_kind, CallKind};

/// The cleanup before vectorizing: SSA form, folded code, branches only (no switches), one
/// return block, loops with a preheader, one latch and dedicated exits, values leaving loops
/// through exit phis.
const CLEANUP: &str = "sroa,early-cse,instcombine<no-verify-fixpoint>,simplifycfg,lower-switch,\
                       mergereturn,loop-simplify,lcssa";

/// What the vectorizer found in a kernel, for the plan (`--dump-plan`).
#[derive(Clone, Debug, Default)]
pub struct Report {
    pub uniform: usize,
    pub varying: usize,
    /// Named values that differ between lanes (PTX registers keep their names through SSA
    /// construction where LLVM can).
    pub varying_names: Vec<String>,
    /// Blocks ending in a branch whose direction differs between lanes.
    pub divergent_branches: Vec<String>,
    /// Loops, with whether lanes may leave them in different iterations.
    pub loops: Vec<(String, bool)>,
    /// Warp operations, by spelling, in order.
    pub warp_ops: Vec<String>,
    /// Uniform and varying values of the aligned-warp function, when there is one (blocks
    /// whose warps are 32 consecutive `%tid.x`: one-dimensional, or `%ntid.x` a multiple
    /// of 32).
    pub rows: Option<(usize, usize)>,
    /// CTA barriers, each a suspension point of the warp function (`barrier.rs`): its
    /// spelling, id and block.
    pub barriers: Vec<String>,
    /// How warps meet at the barriers (`barrier::Scheme`), for the plan.
    pub barrier_scheme: Option<String>,
    /// Varying loads and stores of the warp function, then of the aligned-warp function:
    /// consecutive (one vector access), checked (one scalar test), other (all addresses
    /// tested at run time, else a gather or scatter); `stride.rs`.
    pub memory: [usize; 3],
    pub rows_memory: Option<[usize; 3]>,
    /// Row segments (`uniform::Segment`), for the plan: the block, the rows per warp and the
    /// loads of one value per row.
    pub segments: Option<String>,
}

/// Builds `K.simd.w` and `K.simd` for kernel `name` of `module` (lowered, before the module
/// rewrite), or says why the kernel cannot run on the warp engine (nothing is left behind
/// then but the cleaned kernel function).
///
/// `block`: the only CTA shape the code will run with, when the caller knows it. If that
/// shape has aligned warps and only the aligned-warp function is in scope (a warp operation
/// under `if (warp == 0)`, uniform only per aligned warp), the kernel gets that function
/// alone, and the second result says the code is for `block` only.
///
/// `prefer_loops` (the engine is the compiler's choice, `PTX2LLVM_CPU_MODE` unset): refuse
/// a kernel whose known block splits warps across rows when the warp function would gain
/// little over thread loops (`loops_win`).
pub fn vectorize(
    module: &Module,
    machine: &HostMachine,
    name: &str,
    params: &[ParamPlace],
    block: Option<[u32; 3]>,
    prefer_loops: bool,
) -> Result<(Report, bool), String> {
    let f = module
        .get_function(name)
        .ok_or_else(|| format!("kernel `{name}` was not lowered"))?;
    machine.run_function_pipeline(f, CLEANUP)?;
    let fr = f.as_value_ref();
    // SAFETY: `fr` is a defined function of `module`; everything below reads it or builds new
    // functions next to it with the module's context.
    unsafe {
        let m = c::LLVMGetGlobalParent(fr);
        let td = llvm_sys::target::LLVMGetModuleDataLayout(m);
        let cfg = cfg::Cfg::new(fr)?;
        // A known block whose rows split warps (16x16): strides row by row.
        let segment = block.and_then(uniform::Segment::of);
        let facts = match segment {
            Some(seg) => uniform::Facts::segmented(fr, &cfg, td, seg),
            None => uniform::Facts::new(fr, &cfg, td, false),
        };
        let mut report = match check(fr, &cfg, &facts, td) {
            Ok(r) => r,
            Err(why) => {
                let aligned = block.is_some_and(|[x, y, z]| y * z == 1 || x % 32 == 0);
                let rows_facts = uniform::Facts::new(fr, &cfg, td, true);
                let r = match check(fr, &cfg, &rows_facts, td) {
                    Ok(r) if aligned => r,
                    _ => return Err(why),
                };
                let co = !r.barriers.is_empty();
                if let Some(why) = co.then(|| barrier::libc_clash(m)).flatten() {
                    return Err(why);
                }
                let mut report = r;
                let scheme = first_scheme(fr, &report, &cfg, &rows_facts);
                let (dr, scheme, slot) =
                    build_warp(fr, &format!("{name}.simd.rows"), &cfg, &rows_facts, scheme)?;
                report.barrier_scheme = scheme_note(scheme, slot, fr, &cfg, &rows_facts);
                // The launch has aligned warps (its block is `block`): `K.simd` always
                // takes the aligned-warp function.
                driver::cta_fn(m, fr, dr, Some(dr), name, params, slot);
                report.rows = Some((report.uniform, report.varying));
                // The only warp function is the aligned one: its accesses are the kernel's.
                report.memory = rows_facts.strides.counts;
                return Ok((report, true));
            }
        };
        report.memory = facts.strides.counts;
        if prefer_loops {
            if let Some(why) = loops_win(&report, block, facts.strides.per_row) {
                return Err(why);
            }
        }
        let co = !report.barriers.is_empty();
        if let Some(why) = co.then(|| barrier::libc_clash(m)).flatten() {
            return Err(why);
        }
        let scheme = first_scheme(fr, &report, &cfg, &facts);
        let (dst, scheme, mut slot) =
            build_warp(fr, &format!("{name}.simd.w"), &cfg, &facts, scheme)?;
        if let Some(seg) = segment {
            // Built for this block alone: no aligned warps.
            let [x, y, z] = seg.block;
            report.segments = Some(format!(
                "blocks of ({x}, {y}, {z}) threads: {} rows of {x} lanes per warp, %tid.x = lane \
                 % {x}; {} loads of one value per row",
                seg.rows(),
                facts.strides.per_row
            ));
            report.barrier_scheme = scheme_note(scheme, slot, fr, &cfg, &facts);
            driver::cta_fn(m, fr, dst, None, name, params, slot);
            return Ok((report, true));
        }
        // A second warp function for aligned warps when that makes more values uniform, or
        // more accesses consecutive (their `%tid.x` is the first lane's plus the lane, which
        // `K.simd.w` cannot assume).
        let rows_facts = uniform::Facts::new(fr, &cfg, td, true);
        let mut rows = None;
        if rows_facts.varying.len() < facts.varying.len()
            || rows_facts.strides.counts[0] + rows_facts.strides.counts[1]
                > facts.strides.counts[0] + facts.strides.counts[1]
        {
            if let Ok(r) = check(fr, &cfg, &rows_facts, td) {
                let built = build_warp(fr, &format!("{name}.simd.rows"), &cfg, &rows_facts, scheme);
                match built {
                    Ok((dr, s, rslot)) if s == scheme => {
                        rows = Some(dr);
                        report.rows = Some((r.uniform, r.varying));
                        report.rows_memory = Some(rows_facts.strides.counts);
                        slot.size = slot.size.max(rslot.size);
                        slot.align = slot.align.max(rslot.align);
                        slot.red |= rslot.red;
                        slot.states = slot.states.max(rslot.states);
                        if slot.skip != rslot.skip {
                            slot.skip = None;
                        }
                    }
                    // Its frame is too big for the region scheme the general function has.
                    Ok((dr, _, _)) => c::LLVMDeleteFunction(dr),
                    Err(_) => {}
                }
            }
        }
        report.barrier_scheme = scheme_note(scheme, slot, fr, &cfg, &facts);
        driver::cta_fn(m, fr, dst, rows, name, params, slot);
        Ok((report, false))
    }
}

/// The barrier scheme to try first: none without CTA barriers; static regions unless the
/// kernel keeps values in memory of its own (`.local` fragments or a warp operation's
/// predicate slot, which the region scheme's frame does not hold); else coroutines.
unsafe fn first_scheme(
    f: LLVMValueRef,
    r: &Report,
    cfg: &cfg::Cfg,
    facts: &uniform::Facts,
) -> barrier::Scheme {
    if r.barriers.is_empty() {
        barrier::Scheme::None
    } else if own_memory(f) || barrier_after_parting(cfg, facts) {
        barrier::Scheme::Coroutines
    } else {
        barrier::Scheme::Regions
    }
}

/// Whether a CTA barrier is in a block some lanes of the warp may be elsewhere from, even
/// lanes on their way out (an early return, which `check` allows): the region scheme assumes
/// every lane that has not returned is at the barrier, so that nothing else is pending across
/// it (`tests/cpu_hard.rs`, `exit_before_barrier`, lost the lanes of the returning side).
unsafe fn barrier_after_parting(cfg: &cfg::Cfg, facts: &uniform::Facts) -> bool {
    let n = cfg.blocks.len();
    let mut parted = vec![false; n];
    for &b in &facts.divergent {
        for x in cfg.region_after(b, cfg.ipdom[b]) {
            parted[x] = true;
        }
    }
    for (l, &d) in facts.divergent_loops.iter().enumerate() {
        if d {
            for (x, p) in parted.iter_mut().enumerate() {
                *p |= cfg.loops[l].blocks[x];
            }
        }
    }
    (0..n).any(|x| {
        parted[x]
            && ir::instructions(cfg.blocks[x]).iter().any(|&i| {
                !c::LLVMIsACallInst(i).is_null() && matches!(call_kind(i), CallKind::Barrier(_))
            })
    })
}

/// Whether kernel function `f` has an alloca (memory of its own the warp function keeps)
/// that may live across a CTA barrier. A warp operation's predicate slot written once and read
/// only later in the same block with no barrier between (or never read: `shfl.sync`'s `%r|%p`
/// with `%p` unused, as NVCC writes it) is an SSA value of one region in the warp function
/// (`pred_slots`), which the region scheme's frame need not hold.
unsafe fn own_memory(f: LLVMValueRef) -> bool {
    let mut bb = c::LLVMGetFirstBasicBlock(f);
    while !bb.is_null() {
        if ir::instructions(bb)
            .iter()
            .any(|&i| ir::opcode(i) == O::LLVMAlloca && !region_local_pred(i))
        {
            return true;
        }
        bb = c::LLVMGetNextBasicBlock(bb);
    }
    false
}

/// Whether alloca `a` is a warp operation's predicate slot with one write and its reads after
/// it in the same block, no CTA barrier between them (see `own_memory`).
unsafe fn region_local_pred(a: LLVMValueRef) -> bool {
    if !pred_slot(a) {
        return false;
    }
    let (mut writes, mut reads) = (Vec::new(), Vec::new());
    let mut u = c::LLVMGetFirstUse(a);
    while !u.is_null() {
        let user = c::LLVMGetUser(u);
        if ir::opcode(user) == O::LLVMLoad {
            reads.push(user);
        } else if !ir::callee(user).starts_with("llvm.lifetime") {
            writes.push(user);
        }
        u = c::LLVMGetNextUse(u);
    }
    if reads.is_empty() {
        return true;
    }
    let [w] = writes[..] else {
        return false;
    };
    let bb = c::LLVMGetInstructionParent(w);
    let is = ir::instructions(bb);
    let Some(wpos) = is.iter().position(|&i| i == w) else {
        return false;
    };
    reads.iter().all(|&r| {
        c::LLVMGetInstructionParent(r) == bb
            && is.iter().position(|&i| i == r).is_some_and(|rpos| {
                rpos > wpos
                    && !is[wpos..rpos].iter().any(|&i| {
                        !c::LLVMIsACallInst(i).is_null()
                            && matches!(call_kind(i), CallKind::Barrier(_))
                    })
            })
    })
}

/// Builds warp function `fname` under `scheme`; a region-scheme function whose slot would
/// outgrow `REGION_SLOT_MAX` is built again as a coroutine. Returns it, the scheme it has and
/// its region slot.
unsafe fn build_warp(
    fr: LLVMValueRef,
    fname: &str,
    cfg: &cfg::Cfg,
    facts: &uniform::Facts,
    scheme: barrier::Scheme,
) -> Result<(LLVMValueRef, barrier::Scheme, driver::RegionSlot), String> {
    let m = c::LLVMGetGlobalParent(fr);
    let d = driver::declare_warp_fn(m, fr, fname, scheme);
    match emit::Warp::build(fr, d, cfg, facts) {
        Err(e) => {
            c::LLVMDeleteFunction(d);
            Err(e)
        }
        Ok((size, _, _, _, _))
            if scheme == barrier::Scheme::Regions && size > barrier::REGION_SLOT_MAX =>
        {
            c::LLVMDeleteFunction(d);
            build_warp(fr, fname, cfg, facts, barrier::Scheme::Coroutines)
        }
        Ok((size, align, red, states, skip)) => Ok((
            d,
            scheme,
            driver::RegionSlot {
                scheme,
                size,
                align,
                red,
                states,
                skip,
            },
        )),
    }
}

/// The plan's line on how the warps meet at barriers.
unsafe fn scheme_note(
    scheme: barrier::Scheme,
    slot: driver::RegionSlot,
    f: LLVMValueRef,
    cfg: &cfg::Cfg,
    facts: &uniform::Facts,
) -> Option<String> {
    match scheme {
        barrier::Scheme::None => None,
        barrier::Scheme::Regions => {
            // What the frame keeps across barriers (PTX register names where SSA kept them),
            // and how many values are built again after one instead.
            let (across, remat) = barrier::live_across(cfg);
            let mut names: Vec<String> = across
                .iter()
                .map(|&v| ir::name(v))
                .filter(|n| !n.is_empty())
                .collect();
            names.sort();
            let unnamed = across.len() - names.len();
            if unnamed > 0 {
                names.push(format!("{unnamed} unnamed"));
            }
            // Skip guards, by the blocks of their branches.
            let td = llvm_sys::target::LLVMGetModuleDataLayout(c::LLVMGetGlobalParent(f));
            let mut guards: Vec<String> = match (slot.skip, slot.red) {
                (Some(_), false) => barrier::skips(cfg, facts, td, &across)
                    .map(|s| {
                        s.guards
                            .keys()
                            .map(|&br| {
                                ir::name(c::LLVMBasicBlockAsValue(c::LLVMGetInstructionParent(br)))
                            })
                            .collect()
                    })
                    .unwrap_or_default(),
                _ => Vec::new(),
            };
            guards.sort();
            let skip = if guards.is_empty() {
                String::new()
            } else {
                format!(
                    "; skip guards in {} (a warp whose %tid.x all take the idle side is not \
                     run; it copies {} bytes the same in every warp)",
                    guards.join(", "),
                    slot.skip.map_or(0, |(b, _)| b)
                )
            };
            let lockstep = if (1..=driver::LOCKSTEP_MAX).contains(&slot.states) {
                "; lockstep rounds: a loop over the warps per state while all wait at one barrier"
            } else {
                ""
            };
            Some(format!(
                "static regions between barriers (each round runs every waiting warp's region \
                 inline; {} bytes of mailbox and frame per warp; kept across barriers: {}; \
                 built again after one: {}{lockstep}{skip})",
                slot.size,
                if names.is_empty() {
                    "nothing".to_string()
                } else {
                    names.join(", ")
                },
                remat.len()
            ))
        }
        barrier::Scheme::Coroutines => Some(format!(
            "coroutines ({})",
            if own_memory(f) {
                "the kernel keeps values in memory of its own"
            } else if barrier_after_parting(cfg, facts) {
                "a barrier where some lanes may be elsewhere, on their way out"
            } else {
                "the values live across barriers need more than the region slot"
            }
        )),
    }
}

/// Why thread loops beat the general warp function on a launch of `block`, if they do: the
/// block is known and its warps are not aligned (`%ntid.x` below 32 and not a multiple of
/// it, e.g. 16x16: a warp holds two rows, so `%tid.x` is not lane-strided), the kernel has
/// CTA barriers, and most of its varying loads and stores are neither consecutive nor
/// checked (each a per-lane address test and a gather or scatter). Measured on the suite's
/// 16x16 shared-tile matmul at 512^3: 1172 ms on the warp engine (0 consecutive, 37 other),
/// 227 ms as thread loops; the 3x3 convolution with halo tiles 254 ms vs 189 ms. Kernels
/// without barriers (Mandelbrot's 16x16 blocks) keep the warp engine, whose arithmetic is
/// what they spend their time on.
fn loops_win(r: &Report, block: Option<[u32; 3]>, per_row: usize) -> Option<String> {
    let [x, y, z] = block?;
    if y * z == 1 || x % 32 == 0 || r.barriers.is_empty() {
        return None;
    }
    let [cons, checked, other] = r.memory;
    (other > cons + checked + per_row).then(|| {
        format!(
            "blocks of ({x}, {y}, {z}) threads split warps across rows, so %tid.x is not \
             lane-strided: {cons} consecutive, {checked} checked, {other} other loads and \
             stores between CTA barriers run faster as thread loops"
        )
    })
}

/// Refuses what the warp function cannot express, and reports what it found.
unsafe fn check(
    f: LLVMValueRef,
    cfg: &cfg::Cfg,
    facts: &uniform::Facts,
    td: llvm_sys::target::LLVMTargetDataRef,
) -> Result<Report, String> {
    let _ = f;
    let mut r = Report::default();
    let mut bar_id = None;
    let is_vector = |t: LLVMTypeRef| c::LLVMGetTypeKind(t) == LLVMTypeKind::LLVMVectorTypeKind;
    for (bi, &bb) in cfg.blocks.iter().enumerate() {
        for i in ir::instructions(bb) {
            let op = ir::opcode(i);
            let vary = facts.is_varying(i);
            if vary {
                r.varying += 1;
                let n = ir::name(i);
                if !n.is_empty() && r.varying_names.len() < 64 {
                    r.varying_names.push(n);
                }
            } else if c::LLVMGetTypeKind(c::LLVMTypeOf(i)) != LLVMTypeKind::LLVMVoidTypeKind {
                r.uniform += 1;
            }
            let vector_ops = is_vector(c::LLVMTypeOf(i))
                || ir::operands(i).iter().any(|&o| is_vector(c::LLVMTypeOf(o)));
            let per_lane = matches!(op, O::LLVMAtomicRMW | O::LLVMAtomicCmpXchg)
                || op == O::LLVMCall
                    && matches!(call_kind(i), CallKind::PerLane | CallKind::Lanewise)
                || op == O::LLVMGetElementPtr
                || matches!(op, O::LLVMLoad | O::LLVMStore)
                    && c::LLVMGetOrdering(i)
                        != llvm_sys::LLVMAtomicOrdering::LLVMAtomicOrderingNotAtomic;
            if vary && vector_ops && per_lane {
                return Err(format!(
                    "PTX vector values that differ between lanes in `{}`",
                    ir::print(i)
                ));
            }
            match op {
                // A compare-and-swap or exchange in a loop lanes leave at different iterations
                // is how a spin lock is taken: the lane that wins waits at the loop's exit for
                // the others, which spin until it releases the lock, so lock step never ends
                // (lit/isa/atomics.ptx hung). A GPU schedules the lanes independently; the
                // coroutine scheme does too.
                O::LLVMAtomicCmpXchg | O::LLVMAtomicRMW
                    if (op == O::LLVMAtomicCmpXchg
                        || c::LLVMGetAtomicRMWBinOp(i)
                            == llvm_sys::LLVMAtomicRMWBinOp::LLVMAtomicRMWBinOpXchg)
                        && cfg
                            .loops
                            .iter()
                            .zip(&facts.divergent_loops)
                            .any(|(l, &d)| d && l.blocks[bi]) =>
                {
                    return Err(
                        "an atomic compare-and-swap or exchange in a divergent loop (a spin lock: \
                         lanes of one warp may wait for each other)"
                            .into(),
                    );
                }
                O::LLVMSwitch | O::LLVMIndirectBr | O::LLVMInvoke | O::LLVMCallBr => {
                    return Err(format!("`{}`", ir::print(i)));
                }
                O::LLVMInsertValue if vary => {
                    return Err(format!("cannot vectorize `{}`", ir::print(i)));
                }
                O::LLVMExtractElement | O::LLVMInsertElement
                    if vary
                        && ir::const_u64(c::LLVMGetOperand(
                            i,
                            ir::operands(i).len() as u32 - 1,
                        ))
                        .is_none() =>
                {
                    return Err(format!("cannot vectorize `{}`", ir::print(i)));
                }
                O::LLVMAlloca if !pred_slot(i) && !matrix::frag_slot(td, i) => {
                    return Err("a `.local` array or a variable whose address is taken".into());
                }
                O::LLVMStore if ir::ctx_offset(td, c::LLVMGetOperand(i, 1)).is_some() => {
                    return Err("a store to the thread context".into());
                }
                O::LLVMLoad => {
                    if let Some(off) = ir::ctx_offset(td, c::LLVMGetOperand(i, 0)) {
                        if off >= crate::runtime::abi::offset::SHARED + 8
                            && CtxField::at(off) == CtxField::Uniform(off)
                        {
                            return Err(
                                "privatized global additions (per-worker sums of `red`)".into()
                            );
                        }
                    }
                }
                O::LLVMCall => {
                    let callee = c::LLVMGetCalledValue(i);
                    if c::LLVMIsAFunction(callee).is_null() {
                        return Err("an indirect call or inline assembly".into());
                    }
                    let name = ir::name(callee);
                    if c::LLVMIsDeclaration(callee) == 0 {
                        return Err(format!("calls the device function `{name}`"));
                    }
                    if name == "ptx2llvm_rt_exit" || name == "ptx2llvm_nvvm_exit" {
                        return Err("`exit` in a device function".into());
                    }
                    if let CallKind::Barrier(k) = call_kind(i) {
                        let id = barrier::refusal(i, k, facts.partial[bi], bar_id)?;
                        bar_id = Some(id);
                        let what = if k == barrier::BarrierCall::Sync {
                            "bar.sync"
                        } else {
                            // `refusal` has checked the operator: a constant 0..2.
                            match ir::const_u64(ir::args(i)[3]).map(|v| v as u32) {
                                Some(crate::runtime::abi::bar_red::POPC) => "bar.red.popc",
                                Some(crate::runtime::abi::bar_red::AND) => "bar.red.and",
                                _ => "bar.red.or",
                            }
                        };
                        let block = ir::name(c::LLVMBasicBlockAsValue(bb));
                        r.barriers.push(format!("{what} {id} in {block}"));
                    }
                    if let CallKind::Warp(w) = call_kind(i) {
                        r.warp_ops.push(w.spelling().to_string());
                        let args = ir::args(i);
                        if w == WarpCall::Redux
                            && ir::const_u64(args[2]).is_none_or(|op| op & 0xf >= 8)
                        {
                            return Err("`redux.sync` on floats".into());
                        }
                        if w.matrix() && cfg_partial(cfg, facts, bi) {
                            return Err(format!(
                                "`{}` under divergent control flow (it needs every lane)",
                                w.spelling()
                            ));
                        }
                        if w.has_member_mask()
                            && cfg_partial(cfg, facts, bi)
                            && !member_is_active(i, w)
                        {
                            return Err(format!(
                                "`{}` under divergent control flow (lanes may meet at different \
                                 instructions)",
                                w.spelling()
                            ));
                        }
                    }
                }
                _ => {}
            }
        }
    }
    let bname = |b: usize| ir::name(c::LLVMBasicBlockAsValue(cfg.blocks[b]));
    r.divergent_branches = facts.divergent.iter().map(|&b| bname(b)).collect();
    r.loops = cfg
        .loops
        .iter()
        .enumerate()
        .map(|(k, l)| (bname(l.header), facts.divergent_loops[k]))
        .collect();
    Ok(r)
}

fn cfg_partial(_cfg: &cfg::Cfg, facts: &uniform::Facts, b: usize) -> bool {
    facts.partial[b]
}

/// Whether warp operation `i` may run in a block some live lanes skip: its member mask is
/// the `activemask` (the non-`.sync` forms) or a constant of some lanes.
unsafe fn member_is_active(i: LLVMValueRef, w: WarpCall) -> bool {
    let pos = match w {
        WarpCall::Shfl => 6,
        WarpCall::Vote => 3,
        WarpCall::Redux => 4,
        _ => 2,
    };
    let m = ir::args(i)[pos];
    // A constant mask of some lanes names the lanes the writer expects here (the warp
    // function checks it when it runs); the full mask or a computed one may pair lanes at
    // different instructions, which lockstep cannot.
    ir::const_u64(m).is_some_and(|v| v as u32 != u32::MAX)
        || !c::LLVMIsACallInst(m).is_null()
            && WarpCall::of(&ir::callee(m)) == Some(WarpCall::ActiveMask)
}

/// Whether alloca `a` is only the predicate output of warp operations, and loaded.
unsafe fn pred_slot(a: LLVMValueRef) -> bool {
    let mut u = c::LLVMGetFirstUse(a);
    while !u.is_null() {
        let user = c::LLVMGetUser(u);
        let ok = if !c::LLVMIsACallInst(user).is_null() {
            matches!(
                call_kind(user),
                CallKind::Warp(WarpCall::Shfl | WarpCall::MatchAll | WarpCall::Elect)
            ) && ir::args(user).last() == Some(&a)
                || ir::callee(user).starts_with("llvm.lifetime")
        } else {
            ir::opcode(user) == O::LLVMLoad
        };
        if !ok {
            return false;
        }
        u = c::LLVMGetNextUse(u);
    }
    true
}
