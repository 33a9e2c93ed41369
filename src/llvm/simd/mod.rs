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
mod blend;
mod bounds;
mod cfg;
mod chain;
mod coarsen;
mod coldsink;
mod ctxscope;
mod demand;
mod driver;
pub use driver::{drop_replays, seal_replay};
pub use flatx::FlatMarks;
mod emit;
mod flatx;
mod interior;
mod ir;
mod laneoff;
mod lanes;
mod lanetab;
mod linear;
mod maskbits;
mod matrix;
mod misaligned;
pub use misaligned::Alignment;
mod nan;
mod nan64;
mod nanshuf;
mod narrow;
mod pageload;
mod passthru;
mod prefetch;
pub use prefetch::BARRIER_AHEAD;
mod range;
mod rebase;
mod rowwin;
mod scalef;
mod stride;
mod subvec;
mod tree;
mod uniform;
mod version;
mod warp;

use llvm_sys::core as c;
use llvm_sys::prelude::*;
use llvm_sys::{LLVMOpcode as O, LLVMTypeKind};

use inkwell::values::AsValueRef as _;

use super::cpu::{HostMachine, ParamPlace};
use super::Module;
use ir::{CtxField, WarpCall};
use uniform::{call_kind, CallKind};

/// The cleanup before vectorizing: SSA form (`sroa`, then `nan::drop_unseen` while the
/// lowering's NaN selects are as it wrote them, then `tree::balance`), folded code, branches only (no switches), one
/// return block, loops with a preheader, one latch and dedicated exits, values leaving loops
/// through exit phis.
const CLEANUP: &str = "early-cse,instcombine<no-verify-fixpoint>,simplifycfg,lower-switch,\
                       mergereturn,loop-simplify,lcssa";

/// For one known block whose kernel has a CTA barrier in a loop: with `%ntid` a constant
/// (`driver::pin_ntid`), a loop whose trip count follows from it (the halving tree
/// `for (k = ntid / 2; k > 0; k >>= 1) { ...; __syncthreads(); }`) is unrolled in full
/// before the barrier analysis, so that its barriers are a straight line (ordered rounds,
/// no per-warp state) and `k` is a constant in each copy (`s[t + k]` consecutive). The
/// constants are folded first (the trip count is found by evaluating the loop from a
/// constant start), then `CLEANUP` again for the analyses' form.
const UNROLL: &str = "instcombine<no-verify-fixpoint>,loop(loop-unroll-full),early-cse,\
                      instcombine<no-verify-fixpoint>,simplifycfg,lower-switch,mergereturn,\
                      loop-simplify,lcssa";

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
    /// The divergent loops (headers) with a full-warp copy (`emit::full_copy`): while every
    /// lane of a full warp stays, the body runs without masks.
    pub full_copies: Vec<String>,
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
    /// Some barrier region is skipped by warps none of whose lanes run it (`barrier::skips`):
    /// consecutive rounds of few warps, whose shared stores the post-pipeline GVN forwards
    /// (`target::cpu::build`).
    pub skip_guards: bool,
    /// Varying loads and stores of the warp function, then of the aligned-warp function:
    /// consecutive (one vector access), checked (one scalar test), other (all addresses
    /// tested at run time, else a gather or scatter), and of the other ones the `.shared`
    /// loads tested for a window (`stride::Access::Window`), stores of one address, and of
    /// the other ones the `.shared` stores tested for a window, the global loads of at most
    /// two runs per half-warp (`stride::ROWS`) and the accesses consecutive when their
    /// loops' entry tests pass (`stride::ENTRY_TESTED`); `stride.rs`.
    pub memory: [usize; 9],
    pub rows_memory: Option<[usize; 9]>,
    /// Row segments (`uniform::Segment`), for the plan: the block, the rows per warp and the
    /// loads of one value per row.
    pub segments: Option<String>,
    /// Why the kernel has only the aligned-warp function when the general one is in scope
    /// too (a large kernel: `ONE_FUNCTION_MIN`).
    pub aligned_only: Option<String>,
    /// The lowering's NaN-canonicalizing selects, how many of them `nan::drop_unseen`
    /// removed (results only ever seen by arithmetic that canonicalizes again), and how many
    /// operands of arithmetic take the value before a kept one (`nan::raw_operands`).
    pub nan_selects: (usize, usize, usize, usize),
    /// Global loads that stride with a loop and get a prefetch of the next iteration's line
    /// (`prefetch.rs`).
    pub prefetches: usize,
    /// Of `prefetches`, those in a loop that holds a CTA barrier, prefetched
    /// `prefetch::BARRIER_AHEAD` iterations on instead of one.
    pub tile_prefetches: usize,
    /// Global loads that stream by a short constant step and get a prefetch 1 KiB ahead
    /// (`prefetch.rs`, `AHEAD`).
    pub stream_prefetches: usize,
    /// Grid-stride loads whose index prefetch gets a second one, of the line the next warp
    /// of the CTA loads in that iteration (`prefetch::warp_offset`).
    pub warp_prefetches: usize,
    /// Global loads addressed from `%ctaid.x` in a kernel with CTA barriers that get a
    /// prefetch of the next CTA's line (`prefetch::insert_next_cta`).
    pub cta_prefetches: usize,
    /// Global stores outside loops addressed from `%ctaid.x` in a kernel with CTA barriers
    /// that get a prefetch for writing of the next CTA's line (`prefetch::insert_next_cta`).
    pub cta_store_prefetches: usize,
    /// How the kernel's accesses are tested for alignment (`misaligned::classify`).
    pub misaligned: Alignment,
    /// A loop body copied for the halving distances below a warp (`version.rs`).
    pub versioned: bool,
    /// And one more copy for the multiples of 32 (`version::widen`).
    pub versioned_wide: bool,
    /// Bounds checks made unconditional in the copy for warps off the border
    /// (`interior.rs`); 0 without the copy.
    pub interior: usize,
    /// Warps a group when the warp function runs its CTA's warps in groups, their loops
    /// jammed (`coarsen.rs`); 0 without.
    pub coarsened: u32,
    /// Flat thread indices marked non-negative (`flatx.rs`); those in x need a launch test.
    pub flat: FlatMarks,
}

/// Folds the warp functions' guarded loads with a constant default (`v = c < n ? x[c] : K`)
/// into the masked load's pass-through (`passthru.rs`), in the optimized module `m` before
/// code generation; returns how many it folded.
pub fn fold_load_defaults(m: &Module) -> usize {
    // SAFETY: `m` is a live module; the fold rewrites instructions of its functions only.
    unsafe { passthru::fold(m.as_mut_ptr()) }
}

/// Moves lane pointer vectors used only by cold gathers and scatters into their blocks
/// (`coldsink.rs`), in the optimized module `m` before code generation; returns how many
/// instructions moved.
pub fn sink_cold_lanes(m: &Module) -> usize {
    // SAFETY: `m` is a live module; the pass moves instructions within its functions only.
    unsafe { coldsink::sink(m.as_mut_ptr()) }
}

/// Loads the CTA's shared-memory size once in each CTA function of the optimized module `m`
/// (`ctxscope::hoist_smem_size`); returns how many loads went (when any, jump threading and
/// GVN are to run).
pub fn hoist_smem_size(m: &Module) -> usize {
    // SAFETY: `m` is a live module; the rewrite replaces loads of its functions only.
    unsafe { ctxscope::hoist_smem_size(m.as_mut_ptr()) }
}

/// Types the untyped loads of the optimized module `m` that read through the pointer of a
/// typed access no narrower (`ctxscope::retype_loads`); returns how many (when any, GVN is to
/// run again).
pub fn retype_loads(m: &Module) -> usize {
    // SAFETY: `m` is a live module; the pass sets metadata on its loads only.
    unsafe { ctxscope::retype_loads(m.as_mut_ptr()) }
}

/// Keeps the vector phis that a loop steps by one scalar in every lane as lane 0's scalar
/// plus loop-invariant lane offsets (`laneoff.rs`), in the optimized module `m`; returns how
/// many (when any, InstCombine, EarlyCSE and LICM are to run again).
pub fn fold_lane_offsets(m: &Module) -> usize {
    // SAFETY: `m` is a live module; the fold rewrites instructions of its functions only.
    unsafe { laneoff::fold(m.as_mut_ptr()) }
}

/// Turns the wide-integer pieces of vectors that GVN's forwarding makes back into shuffles
/// (`subvec.rs`), in the optimized module `m` after its last InstCombine; returns how many.
pub fn fold_wide_pieces(m: &Module) -> usize {
    // SAFETY: `m` is a live module; the fold rewrites instructions of its functions only.
    unsafe { subvec::fold(m.as_mut_ptr()) }
}

/// Masked loads without a pass-through value as plain loads when some lane runs and the
/// vector lies in one 4 KiB piece of a page (`pageload.rs`), in the optimized module `m` as
/// code generation gets it; returns how many.
pub fn fold_page_loads(m: &Module) -> usize {
    // SAFETY: `m` is a live module; the fold rewrites instructions of its functions only.
    unsafe { pageload::fold(m.as_mut_ptr()) }
}

/// The GPU's f64 NaN choice (`lower::fp::gpu_nan_f64`'s select chains) on a cold path taken
/// where some lane of the host's result is a NaN (`nan64.rs`), in the optimized module `m`
/// as code generation gets it; returns how many chains.
pub fn fold_f64_nans(m: &Module) -> usize {
    // SAFETY: `m` is a live module; the fold rewrites blocks of its functions only.
    unsafe { nan64::fold(m.as_mut_ptr()) }
}

/// Runs of table stores into one `.shared` block (`lanes.rs` `store_table`) as one select
/// and plain store per half when their blocks are one at run time (`blend.rs`), in the
/// optimized module `m` as code generation gets it; returns how many runs.
pub fn fold_table_blends(m: &Module) -> usize {
    // SAFETY: `m` is a live module; the fold rewrites blocks of its functions only.
    unsafe { blend::fold(m.as_mut_ptr()) }
}

/// Serves the gathers of lanes that each walk their own row in a loop that writes no memory
/// from a transposed window of the next 64 bytes of every lane's row (`rowwin.rs`), in the
/// optimized module `m`; returns the functions rewritten (when any, the always-inliner is to
/// run, a cleanup of those functions, then `drop_row_window_helper`).
pub fn fold_row_windows(m: &Module) -> Vec<String> {
    // SAFETY: `m` is a live module; the fold adds functions and rewrites its functions.
    unsafe { rowwin::fold(m.as_mut_ptr()) }
}

/// Deletes `fold_row_windows`' helper once every call of it is inlined.
pub fn drop_row_window_helper(m: &Module) {
    if let Some(f) = m.get_function(rowwin::HELPER) {
        use inkwell::values::BasicValue as _;
        if f.as_global_value()
            .as_pointer_value()
            .get_first_use()
            .is_none()
        {
            // SAFETY: nothing refers to the function any more.
            unsafe { f.delete() };
        }
    }
}

/// Gives the lanes of shuffles and phis that no use reads poison (`demand.rs`), in the
/// optimized module `m` as code generation gets it; returns how many changed.
pub fn fold_unread_lanes(m: &Module) -> usize {
    // SAFETY: `m` is a live module; the fold rewrites instructions of its functions only.
    unsafe { demand::fold(m.as_mut_ptr()) }
}

/// Folds the bits of a mask after a uniform branch (`bitcast` of a `select` on a scalar
/// condition between constant lane masks) into a scalar select (`maskbits.rs`), in the
/// optimized module `m`; returns how many (when any, InstCombine, EarlyCSE and SimplifyCFG are to
/// run again).
pub fn fold_mask_bits(m: &Module) -> usize {
    // SAFETY: `m` is a live module; the fold rewrites instructions of its functions only.
    unsafe { maskbits::fold(m.as_mut_ptr()) }
}

/// Rewrites chains of entry-tested accesses' diamonds that branch on one condition (an
/// iteration's accesses through one index, marked by `lanes.rs`) into a path of their `true`
/// sides and one of their `false` sides (`chain.rs`), in the optimized module `m`; returns how
/// many chains (when any, SimplifyCFG and EarlyCSE are to run again).
pub fn fold_diamond_chains(m: &Module) -> usize {
    // SAFETY: `m` is a live module; the fold rewrites blocks of its functions only.
    unsafe { chain::fold(m.as_mut_ptr()) }
}

/// Moves the GPU-NaN selects of shuffled float vectors (a vector load's members) above
/// their shuffles (`nanshuf.rs`), in the optimized module `m`; returns how many (when any,
/// EarlyCSE and InstCombine are to run again).
pub fn fold_nan_shuffles(m: &Module) -> usize {
    // SAFETY: `m` is a live module; the fold rewrites instructions of its functions only.
    unsafe { nanshuf::fold(m.as_mut_ptr()) }
}

/// Folds the warp functions' f32 `min`/`max` (`llvm.minimumnum`/`llvm.maximumnum` of 16k
/// lanes) into `vrangeps` (`range.rs`), in the optimized module `m` of an AVX-512DQ host;
/// returns how many.
pub fn fold_range(m: &Module) -> usize {
    // SAFETY: `m` is a live module; the fold rewrites instructions of its functions only.
    unsafe { range::fold(m.as_mut_ptr()) }
}

/// Folds `ex2.approx.f32`'s `ldexp` of a converted exponent into `vscalefps` of the float one
/// (`scalef.rs`), in the optimized module `m` of an AVX-512 host; returns how many.
pub fn fold_scalef(m: &Module) -> usize {
    // SAFETY: `m` is a live module; the fold rewrites instructions of its functions only.
    unsafe { scalef::fold(m.as_mut_ptr()) }
}

/// The estimated size (`code_size`) from which a kernel launched with aligned warps gets the
/// aligned-warp function alone at once, before the general function's facts are checked and
/// without the thread-loop heuristics (`loops_win`, `gathering_loops`): the general one, which
/// such a launch never calls, would double the compile time. Smaller kernels launched with
/// aligned warps get it alone too, after those heuristics (`KNOWN_ALIGNED`). Triton's softmax
/// is about 540, softmax_warp 3,900, Triton's matmul 19,200.
const ONE_FUNCTION_MIN: usize = 500;

/// Why a kernel whose launch block is known to have aligned warps has no general warp
/// function (the plan's note): `K.simd` would only ever call the aligned one, and building,
/// optimizing and generating code for both took 1.5-2.6x the compile time (reduce_block 225
/// ms of CPU with both, 85 with one). The general function still runs where the block is not
/// known at compile time (a module loaded through the driver API).
const KNOWN_ALIGNED: &str = "the launch's block has aligned warps: the general warp function, \
                             which it never calls, is left out";

/// The estimated size (`code_size`) from which a region-scheme warp function is called from
/// `K.simd` rather than inlined per state (`out_of_line`): about 20 `mma.sync`.
const OUT_OF_LINE_MIN: usize = 4000;

/// The most instructions of warp code (`code_size`, times the warp functions built) for
/// which the compiler chooses the warp engine (`PTX2LLVM_CPU_MODE=warp` takes any size).
/// Code generation grows with it: Triton's 128x128x32 fp16 matmul (64 `mma.sync`, 19,200)
/// compiles in about 10 s of CPU as one warp function and runs 512^3 about 20x faster than
/// on coroutines; a kernel twice that size (or that kernel without a known block, which
/// builds both warp functions) keeps coroutines.
const WARP_SIZE_MAX: usize = 24_000;

/// Instructions each inline floating-point `mma.sync` adds to the warp function (64 `fma`s,
/// their operand shuffles and conversions), beside its call.
const MMA_SIZE: usize = 200;

/// An estimate of the warp function's size, in instructions of the cleaned kernel (each
/// `mma.sync` as the vector code it becomes): what code generation, most of the compile time
/// of a large kernel, grows with.
///
/// # Safety
/// `cfg` must describe a valid function.
pub unsafe fn code_size(cfg: &cfg::Cfg) -> usize {
    cfg.blocks
        .iter()
        .flat_map(|&bb| ir::instructions(bb))
        .map(|i| {
            if !c::LLVMIsACallInst(i).is_null() && call_kind(i) == CallKind::Warp(WarpCall::Mma) {
                1 + MMA_SIZE
            } else {
                1
            }
        })
        .sum()
}

/// Removes the NaN-canonicalizing selects of a thread-loop step function whose payloads no
/// use observes (`nan::drop_unseen`), for `target::cpu::fission::pre_optimize`: a thread's
/// `s += a * b` chain (spmv_thread's row) otherwise waits for a compare and a blend per
/// term. The step function runs one thread's code, as the warp function runs each lane's, so
/// the pass's reasoning holds there unchanged; the coroutine engine keeps every select and
/// stays the oracle. Returns how many selects went.
///
/// # Safety
/// `f` is a defined function in SSA form (after `sroa`), its selects as the lowering wrote
/// them (before InstCombine).
pub unsafe fn drop_unseen_nans(f: llvm_sys::prelude::LLVMValueRef) -> usize {
    nan::drop_unseen(f).dropped
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
///
/// `flat_x`: the program tests each launch's grid against the flat x indices' marks
/// (`Report::flat`, `runtime::fission::FlatX`), so the kernel may assume them.
pub fn vectorize(
    module: &Module,
    machine: &HostMachine,
    name: &str,
    params: &[ParamPlace],
    block: Option<[u32; 3]>,
    prefer_loops: bool,
    flat_x: bool,
) -> Result<(Report, bool), String> {
    let f = module
        .get_function(name)
        .ok_or_else(|| format!("kernel `{name}` was not lowered"))?;
    constant_splats();
    machine.run_function_pipeline(f, "sroa")?;
    let fr = f.as_value_ref();
    // SAFETY: `fr` is a defined function in SSA form (after `sroa`), its tests as the
    // lowering wrote them; then it is a defined function.
    // A refused kernel gets its body back without the marks of its flat x indices, which
    // only the warp code's launch test makes true.
    let (aligned, flat, unstripped) = unsafe {
        let a = misaligned::classify(fr, params);
        let sites = flatx::find(fr, flat_x);
        let copy = (a != Alignment::NoTests || sites.iter().any(|s| s.dim == 0))
            .then(|| misaligned::keep(fr));
        misaligned::strip(fr);
        (a, flatx::mark(&sites), copy)
    };
    let res = prepare_and_build(machine, f, name, params, block, prefer_loops, aligned).map(
        |(mut r, only)| {
            r.flat = flat;
            (r, only)
        },
    );
    if let Some(copy) = unstripped {
        // SAFETY: `copy` is `keep(fr)`'s; a refused kernel's body is used by nothing else
        // (`build` leaves nothing behind).
        unsafe {
            match res {
                Ok(_) => misaligned::discard(copy),
                Err(_) => misaligned::restore(fr, copy),
            }
        }
    }
    res
}

/// `vectorize` after the alignment tests are out of kernel `f`: its cleanup, the analyses'
/// preparation and the warp functions.
fn prepare_and_build(
    machine: &HostMachine,
    f: inkwell::values::FunctionValue<'_>,
    name: &str,
    params: &[ParamPlace],
    block: Option<[u32; 3]>,
    prefer_loops: bool,
    aligned: Alignment,
) -> Result<(Report, bool), String> {
    let fr = f.as_value_ref();
    // SAFETY: `fr` is a defined function, in SSA form after `sroa`.
    let nans = unsafe { nan::drop_unseen(fr) };
    // SAFETY: as above; the selects between a min/max chain's links are gone now.
    unsafe { tree::balance(fr) };
    machine.run_function_pipeline(f, CLEANUP)?;
    // SAFETY: `fr` is a defined function of `module`; everything below reads it or builds new
    // functions next to it with the module's context.
    unsafe {
        let mut cfg = cfg::Cfg::new(fr)?;
        let unrolled = match block {
            Some(b)
                if barrier_in_loop(&cfg)
                    && uniform::Segment::of(b).is_none()
                    && unrolls_barrier_loops(machine, fr, b)? =>
            {
                driver::pin_ntid(fr, |p| ir::is_self_call(p), b);
                machine.run_function_pipeline(f, UNROLL)?;
                cfg = cfg::Cfg::new(fr)?;
                true
            }
            _ => false,
        };
        // Copies of a halving distance's body, before the analyses see it (`version.rs`);
        // InstCombine folds the constant distances into the copies' masks.
        let copied = version::version(fr, &cfg);
        let versioned = copied.is_some();
        let mut versioned_wide = false;
        if let Some(v) = copied {
            machine.run_function_pipeline(f, "instcombine<no-verify-fixpoint>")?;
            // After InstCombine, which would fold the wide copy's `j & -32` back to `j`.
            versioned_wide = version::widen(fr, &v);
            cfg = cfg::Cfg::new(fr)?;
        }
        // A copy for warps whose lanes all take the expected side of every bounds check
        // (its checks' branches unconditional): before the prefetches, which the copy then
        // has too.
        // Groups of warps run together (`coarsen.rs`), else the interior copy: the groups'
        // copies of the index would be branches of another kind for `interior.rs`.
        let td = llvm_sys::target::LLVMGetModuleDataLayout(c::LLVMGetGlobalParent(fr));
        let coarsened = if versioned {
            None
        } else {
            coarsen::coarsen(fr, &cfg, block, td)
        };
        if coarsened.is_some() {
            cfg = cfg::Cfg::new(fr)?;
        }
        let interior = if coarsened.is_some() {
            None
        } else {
            let general = uniform::Facts::new(fr, &cfg, td, false);
            let facts = uniform::Facts::new(fr, &cfg, td, true);
            interior::version(fr, &cfg, &general, &facts)
        };
        if interior.is_some() {
            cfg = cfg::Cfg::new(fr)?;
        }
        let interior = interior.map_or(0, |c| c.branches);
        // Before the analyses, which read lane strides off the sums' trees.
        linear::cancel(fr);
        let (mut hints, stream_prefetches, warp_prefetches, tile_prefetches) =
            prefetch::insert(fr, &cfg);
        let prefetches = hints
            .iter()
            .filter(|&&i| !c::LLVMIsACallInst(i).is_null())
            .count()
            - stream_prefetches
            - warp_prefetches;
        let barriers = cfg.blocks.iter().any(|&bb| {
            ir::instructions(bb).into_iter().any(|i| {
                !c::LLVMIsACallInst(i).is_null()
                    && matches!(uniform::call_kind(i), uniform::CallKind::Barrier(_))
            })
        });
        let (next, cta_prefetches, cta_store_prefetches) =
            prefetch::insert_next_cta(fr, &cfg, barriers, block);
        hints.extend(next);
        // After the prefetches, which find a pointer's step on its phi.
        if barriers {
            rebase::rebase(fr, &cfg);
        }
        let prep = Prepared {
            nan_selects: (nans.found, nans.dropped, nans.raw, nans.never),
            prefetches,
            tile_prefetches,
            stream_prefetches,
            warp_prefetches,
            cta_prefetches,
            cta_store_prefetches,
        };
        match build(fr, &cfg, name, params, block, prefer_loops) {
            Ok((mut report, only)) => {
                // `%ntid` is the block's in every function built from the kernel.
                let only = only || unrolled;
                report.nan_selects = prep.nan_selects;
                report.prefetches = prep.prefetches;
                report.tile_prefetches = prep.tile_prefetches;
                report.stream_prefetches = prep.stream_prefetches;
                report.warp_prefetches = prep.warp_prefetches;
                report.cta_prefetches = prep.cta_prefetches;
                report.cta_store_prefetches = prep.cta_store_prefetches;
                report.misaligned = aligned;
                report.versioned = versioned;
                report.versioned_wide = versioned_wide;
                report.interior = interior;
                report.coarsened = coarsened.map_or(0, |g| g.group);
                Ok((report, only))
            }
            Err(why) => {
                // The kernel goes to another engine as the cleanup left it, or, if it has
                // alignment tests, as it was before, tests included (`vectorize`).
                prefetch::remove(&hints);
                Err(why)
            }
        }
    }
}

/// Whether a CTA barrier is inside a loop of `cfg`.
unsafe fn barrier_in_loop(cfg: &cfg::Cfg) -> bool {
    cfg.blocks.iter().enumerate().any(|(x, &bb)| {
        cfg.loops.iter().any(|l| l.blocks[x])
            && ir::instructions(bb).into_iter().any(|i| {
                !c::LLVMIsACallInst(i).is_null() && matches!(call_kind(i), CallKind::Barrier(_))
            })
    })
}

/// Whether `UNROLL` with `%ntid` pinned to `block` leaves no CTA barrier in a loop of kernel
/// `fr`, tried on a copy of its module: a kernel whose barrier loops stay (bitonic's stages,
/// nbody's tiles) keeps its code as it was (with `%ntid` a constant only in the warp
/// functions, `driver::pin_block`).
unsafe fn unrolls_barrier_loops(
    machine: &HostMachine,
    fr: LLVMValueRef,
    block: [u32; 3],
) -> Result<bool, String> {
    let copy = c::LLVMCloneModule(c::LLVMGetGlobalParent(fr));
    let mut len = 0;
    let name = c::LLVMGetValueName2(fr, &mut len);
    let g = c::LLVMGetNamedFunction(copy, name);
    let res = if g.is_null() {
        Ok(false)
    } else {
        driver::pin_ntid(g, |p| ir::is_self_call(p), block);
        machine
            .run_passes_on(g, UNROLL)
            .and_then(|()| Ok(!barrier_in_loop(&cfg::Cfg::new(g)?)))
    };
    c::LLVMDisposeModule(copy);
    res
}

/// What was done to the kernel before its warp function is built, for the plan.
#[derive(Clone, Copy)]
struct Prepared {
    /// NaN-canonicalizing selects found and dropped, and raw operands (`nan.rs`).
    nan_selects: (usize, usize, usize, usize),
    /// Prefetches put before strided global loads (`prefetch.rs`): of the next iteration's
    /// line (`BARRIER_AHEAD` lines on for `tile_prefetches` of them), and 1 KiB ahead of a
    /// short constant step.
    prefetches: usize,
    tile_prefetches: usize,
    stream_prefetches: usize,
    /// Of the next warp's lines beside an index prefetch (`prefetch::warp_offset`).
    warp_prefetches: usize,
    /// Prefetches of the next CTA's lines (`prefetch::insert_next_cta`): for loads, and for
    /// writing for stores.
    cta_prefetches: usize,
    cta_store_prefetches: usize,
}

/// `vectorize` on the cleaned kernel `fr` whose control flow is `cfg`.
unsafe fn build(
    fr: LLVMValueRef,
    cfg: &cfg::Cfg,
    name: &str,
    params: &[ParamPlace],
    block: Option<[u32; 3]>,
    prefer_loops: bool,
) -> Result<(Report, bool), String> {
    let m = c::LLVMGetGlobalParent(fr);
    let td = llvm_sys::target::LLVMGetModuleDataLayout(m);
    // A known block whose rows split warps (16x16): strides row by row.
    let segment = block.and_then(uniform::Segment::of);
    let facts = match segment {
        Some(seg) => uniform::Facts::segmented(fr, cfg, td, seg),
        None => uniform::Facts::new(fr, cfg, td, false),
    };
    let aligned = block.is_some_and(|[x, y, z]| y * z == 1 || x % 32 == 0);
    // The aligned-warp function alone, for a launch whose block is `block` (aligned):
    // `K.simd` always takes it. `Ok(None)`: it is out of scope too.
    let aligned_only = |why: Option<String>| -> Result<Option<(Report, bool)>, String> {
        // The code is for `block` alone: its sizes are known.
        let rows_facts = match block {
            Some(b) => uniform::Facts::for_block(fr, cfg, td, b),
            None => uniform::Facts::new(fr, cfg, td, true),
        };
        let Ok(mut report) = check(fr, cfg, &rows_facts, td) else {
            return Ok(None);
        };
        let co = !report.barriers.is_empty();
        if let Some(why) = co.then(|| barrier::libc_clash(m)).flatten() {
            return Err(why);
        }
        let scheme = first_scheme(fr, &report, cfg, &rows_facts);
        let (dr, scheme, slot) = build_warp(
            fr,
            &format!("{name}.simd.rows"),
            cfg,
            &rows_facts,
            scheme,
            block,
        )?;
        let pairs = driver::paired_states(dr, slot);
        report.barrier_scheme = scheme_note(scheme, slot, fr, cfg, &rows_facts, &pairs);
        report.skip_guards = slot.skip.is_some() && !slot.red;
        driver::cta_fn(m, fr, dr, Some(dr), name, params, slot, block);
        report.rows = Some((report.uniform, report.varying));
        // The only warp function is the aligned one: its accesses are the kernel's.
        report.memory = rows_facts.strides.counts;
        report.aligned_only = why;
        Ok(Some((report, true)))
    };
    // A large kernel launched with aligned warps gets only the function it runs: code
    // generation is most of its compile time (Triton's matmul: two warp functions of 64
    // inline `mma.sync` each; `ONE_FUNCTION_MIN`).
    let size = code_size(cfg);
    let one = aligned && segment.is_none() && size >= ONE_FUNCTION_MIN;
    // Both warp functions may be built without a known aligned block.
    let compiled = if one { size } else { 2 * size };
    if prefer_loops && compiled > WARP_SIZE_MAX {
        return Err(format!(
            "a large kernel: about {} instructions of warp code to compile (more than \
                 {WARP_SIZE_MAX}; each `mma.sync` counts {MMA_SIZE}; PTX2LLVM_CPU_MODE=warp \
                 takes it anyway)",
            compiled / 100 * 100
        ));
    }
    if one {
        let why = format!(
            "a large kernel (about {} instructions; the general warp function is left out)",
            size / 100 * 100
        );
        if let Some(done) = aligned_only(Some(why))? {
            return Ok(done);
        }
    }
    let mut report = match check(fr, cfg, &facts, td) {
        Ok(r) => r,
        Err(why) => {
            if !aligned {
                return Err(why);
            }
            return aligned_only(None)?.ok_or(why);
        }
    };
    report.memory = facts.strides.counts;
    if prefer_loops {
        if let Some(why) = loops_win(&report, block, facts.strides.per_row) {
            return Err(why);
        }
        if report.barriers.is_empty() && report.warp_ops.is_empty() {
            let mut n = gathering_loops(cfg, &facts, td);
            if n > 0 && segment.is_none() {
                n = n.min(gathering_loops(
                    cfg,
                    &uniform::Facts::new(fr, cfg, td, true),
                    td,
                ));
            }
            if n > 0 {
                return Err(format!(
                    "{n} loads and stores at unknown lane addresses (gathers and scatters) \
                         in loops lanes leave at different iterations, without CTA barriers or \
                         warp operations: thread loops run each thread's iterations in turn, \
                         faster"
                ));
            }
        }
    }
    if aligned && segment.is_none() {
        if let Some(done) = aligned_only(Some(KNOWN_ALIGNED.to_string()))? {
            return Ok(done);
        }
    }
    let co = !report.barriers.is_empty();
    if let Some(why) = co.then(|| barrier::libc_clash(m)).flatten() {
        return Err(why);
    }
    let scheme = first_scheme(fr, &report, cfg, &facts);
    let (dst, scheme, mut slot) =
        build_warp(fr, &format!("{name}.simd.w"), cfg, &facts, scheme, block)?;
    if let Some(seg) = segment {
        // Built for this block alone: no aligned warps.
        let [x, y, z] = seg.block;
        report.segments = Some(format!(
            "blocks of ({x}, {y}, {z}) threads: {} rows of {x} lanes per warp, %tid.x = lane \
                 % {x}; {} loads of one value per row",
            seg.rows(),
            facts.strides.per_row
        ));
        let pairs = driver::paired_states(dst, slot);
        report.barrier_scheme = scheme_note(scheme, slot, fr, cfg, &facts, &pairs);
        report.skip_guards = slot.skip.is_some() && !slot.red;
        driver::cta_fn(m, fr, dst, None, name, params, slot, Some(seg.block));
        return Ok((report, true));
    }
    // A second warp function for aligned warps when that makes more values uniform, or
    // more accesses consecutive (their `%tid.x` is the first lane's plus the lane, which
    // `K.simd.w` cannot assume).
    let rows_facts = uniform::Facts::new(fr, cfg, td, true);
    let mut rows = None;
    if rows_facts.varying.len() < facts.varying.len()
        || rows_facts.strides.counts[0] + rows_facts.strides.counts[1]
            > facts.strides.counts[0] + facts.strides.counts[1]
    {
        if let Ok(r) = check(fr, cfg, &rows_facts, td) {
            let built = build_warp(
                fr,
                &format!("{name}.simd.rows"),
                cfg,
                &rows_facts,
                scheme,
                block,
            );
            match built {
                Ok((dr, s, rslot)) if s == scheme => {
                    rows = Some(dr);
                    report.rows = Some((r.uniform, r.varying));
                    report.rows_memory = Some(rows_facts.strides.counts);
                    slot.size = slot.size.max(rslot.size);
                    slot.align = slot.align.max(rslot.align);
                    slot.red |= rslot.red;
                    slot.in_order &= rslot.in_order && slot.states == rslot.states;
                    slot.peel |= rslot.peel;
                    slot.alike &= rslot.alike;
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
    let pairs = driver::paired_states(rows.unwrap_or(dst), slot);
    report.barrier_scheme = scheme_note(scheme, slot, fr, cfg, &facts, &pairs);
    report.skip_guards = slot.skip.is_some() && !slot.red;
    driver::cta_fn(m, fr, dst, rows, name, params, slot, None);
    Ok((report, false))
}

/// Makes LLVM represent a floating-point vector whose elements are all one constant (the
/// warp function's splats of every constant operand) as one `ConstantFP` of vector type, not
/// as 32 elements: InstCombine's `computeKnownFPClass` walked every element of every such
/// constant again at each query, 28% of softmax_warp's compile (perf); `opt -O2` of its
/// warp function takes 0.22 s instead of 0.52 s. A process-wide LLVM option
/// (`-use-constant-fp-for-fixed-length-splat`), set once before the first warp function is
/// built; the constants mean the same.
fn constant_splats() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        crate::llvm::fission::parse_llvm_options(&["-use-constant-fp-for-fixed-length-splat"])
    });
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
        if ir::instructions(bb).iter().any(|&i| {
            ir::opcode(i) == O::LLVMAlloca && !region_local_pred(i) && !region_local_frag(i)
        }) {
            return true;
        }
        bb = c::LLVMGetNextBasicBlock(bb);
    }
    false
}

/// Whether alloca `a` is a matrix instruction's fragment array (`matrix::frag_slot`) whose
/// stores, calls and loads are all in one block with no CTA barrier among them: the warp
/// function keeps its words in registers (`matrix.rs`), values of one region, so the region
/// scheme's frame need not hold it (Triton's matmul: 272 of them, which kept it on
/// coroutines, whose split copies the 64 products into a ramp and a resume function).
unsafe fn region_local_frag(a: LLVMValueRef) -> bool {
    let td = llvm_sys::target::LLVMGetModuleDataLayout(c::LLVMGetGlobalParent(
        c::LLVMGetBasicBlockParent(c::LLVMGetInstructionParent(a)),
    ));
    if !matrix::frag_slot(td, a) {
        return false;
    }
    // Every instruction that reaches the array: its GEPs and their users, the calls.
    let mut users = Vec::new();
    for user in ir::users(a) {
        if !c::LLVMIsAGetElementPtrInst(user).is_null() {
            users.extend(ir::users(user));
        }
        if c::LLVMIsACallInst(user).is_null() || !ir::callee(user).starts_with("llvm.lifetime") {
            users.push(user);
        }
    }
    let Some(&first) = users.first() else {
        return true;
    };
    let bb = c::LLVMGetInstructionParent(first);
    if users.iter().any(|&x| c::LLVMGetInstructionParent(x) != bb) {
        return false;
    }
    let is = ir::instructions(bb);
    let at: Vec<usize> = (0..is.len()).filter(|&k| users.contains(&is[k])).collect();
    let (Some(&lo), Some(&hi)) = (at.first(), at.last()) else {
        return false;
    };
    !is[lo..=hi]
        .iter()
        .any(|&i| !c::LLVMIsACallInst(i).is_null() && matches!(call_kind(i), CallKind::Barrier(_)))
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

/// The most bytes of a warp's slot in the region scheme, for launches of `block` (any block
/// when `None`): `barrier::REGION_SLOT_MAX`, or more when the block is known and has few
/// warps. `K.simd` allocates its warps' slots on the worker's stack (16 MiB), at most
/// `REGION_CTA_MAX` in all; Triton's 128x128x32 matmul (4 warps) keeps 567 values across
/// its barriers, 128 accumulators and 64 lane addresses among them: 73 KB per warp.
fn slot_max(block: Option<[u32; 3]>) -> u32 {
    let warps = block.map_or(32, |[x, y, z]| (x * y * z).div_ceil(32).max(1));
    barrier::REGION_SLOT_MAX.max(REGION_CTA_MAX / warps)
}

/// The most bytes of region slots of one CTA's warps (`slot_max`).
const REGION_CTA_MAX: u32 = 1 << 20;

/// Builds warp function `fname` under `scheme`; a region-scheme function whose slot would
/// outgrow `slot_max` is built again as a coroutine. Returns it, the scheme it has and
/// its region slot.
unsafe fn build_warp(
    fr: LLVMValueRef,
    fname: &str,
    cfg: &cfg::Cfg,
    facts: &uniform::Facts,
    scheme: barrier::Scheme,
    block: Option<[u32; 3]>,
) -> Result<(LLVMValueRef, barrier::Scheme, driver::RegionSlot), String> {
    let m = c::LLVMGetGlobalParent(fr);
    let d = driver::declare_warp_fn(m, fr, fname, scheme);
    match emit::Warp::build(fr, d, cfg, facts) {
        Err(e) => {
            c::LLVMDeleteFunction(d);
            Err(e)
        }
        Ok((size, ..)) if scheme == barrier::Scheme::Regions && size > slot_max(block) => {
            c::LLVMDeleteFunction(d);
            build_warp(fr, fname, cfg, facts, barrier::Scheme::Coroutines, block)
        }
        Ok((size, align, red, states, skip, in_order, peel, alike)) => {
            if scheme == barrier::Scheme::Regions && code_size(cfg) >= OUT_OF_LINE_MIN {
                out_of_line(d);
            }
            Ok((
                d,
                scheme,
                driver::RegionSlot {
                    scheme,
                    size,
                    align,
                    red,
                    states,
                    skip,
                    in_order,
                    peel,
                    alike,
                },
            ))
        }
    }
}

/// Keeps region-scheme warp function `f` a call in `K.simd` (`noinline` instead of
/// `alwaysinline`): `K.simd` calls it at a site per state and again for fault replays, and
/// each inlined copy keeps the regions its state reaches, so a large kernel's code was
/// compiled several times over (Triton's matmul: its 64 products twice, 67,000 lines of IR).
/// One call per warp and round costs nothing beside such a region.
unsafe fn out_of_line(f: LLVMValueRef) {
    let cx = c::LLVMGetModuleContext(c::LLVMGetGlobalParent(f));
    c::LLVMRemoveEnumAttributeAtIndex(
        f,
        llvm_sys::LLVMAttributeFunctionIndex,
        ir::attr_kind(c"alwaysinline"),
    );
    let a = c::LLVMCreateEnumAttribute(cx, ir::attr_kind(c"noinline"), 0);
    c::LLVMAddAttributeAtIndex(f, llvm_sys::LLVMAttributeFunctionIndex, a);
}

/// The plan's line on how the warps meet at barriers.
unsafe fn scheme_note(
    scheme: barrier::Scheme,
    slot: driver::RegionSlot,
    f: LLVMValueRef,
    cfg: &cfg::Cfg,
    facts: &uniform::Facts,
    pairs: &[u32],
) -> Option<String> {
    match scheme {
        barrier::Scheme::None => None,
        barrier::Scheme::Regions => {
            // What the frame keeps across barriers (PTX register names where SSA kept them),
            // and how many values are built again after one instead.
            let (across, remat) = barrier::live_across(cfg, Some(&facts.varying));
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
            // Latch values kept in their phi's slot, by the phis' names (`barrier::coalesced`,
            // with the same exclusion as `Warp::regions_begin`: the skipped warps' front).
            let exclude: std::collections::HashSet<LLVMValueRef> = if slot.red {
                std::collections::HashSet::new()
            } else {
                barrier::skips(cfg, facts, td, &across)
                    .map(|s| s.uniform_frame.into_iter().collect())
                    .unwrap_or_default()
            };
            let mut shared: Vec<String> = barrier::coalesced(cfg, facts, &across, &exclude)
                .values()
                .map(|&p| ir::name(p))
                .collect();
            shared.sort();
            let shared = if shared.is_empty() {
                String::new()
            } else {
                format!(
                    "; latch values in their loop phi's slot (no copy): {}",
                    shared.join(", ")
                )
            };
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
            let lockstep = if slot.in_order && !slot.red {
                let peeled: Vec<String> = (0..=slot.states.min(63))
                    .filter(|&k| slot.peel >> k & 1 != 0)
                    .map(|k| k.to_string())
                    .collect();
                let peel = if peeled.is_empty() {
                    String::new()
                } else {
                    format!(
                        ", warp 0 on its own in round {} (its region branches on the warp)",
                        peeled.join(", ")
                    )
                };
                format!(
                    "; ordered rounds: every warp meets the barriers in order, round k runs \
                     region k of every warp{peel}"
                )
            } else if (1..=driver::LOCKSTEP_MAX).contains(&slot.states) {
                let paired = if pairs.is_empty() {
                    String::new()
                } else {
                    format!(
                        ", two warps at a time after barrier {} (the region loads shared or \
                         global memory and stores none: what both warps load is loaded once)",
                        pairs
                            .iter()
                            .map(|k| k.to_string())
                            .collect::<Vec<_>>()
                            .join(", ")
                    )
                };
                let alike = if slot.alike {
                    ", every warp meeting the same barriers in the same order (warps at \
                     different barriers: never)"
                } else {
                    ""
                };
                format!(
                    "; lockstep rounds: a loop over the warps per state while all wait at one \
                     barrier{paired}{alike}"
                )
            } else {
                String::new()
            };
            // When every barrier has all launched lanes the execution mask at one is the
            // launched lanes (`Warp::region_end`): not kept.
            let mask = if facts.divergent.is_empty() {
                "; the execution mask: the launched lanes (no divergent branch)"
            } else if barrier::whole_at_barriers(cfg, facts) {
                "; the execution mask: the launched lanes (no lane leaves before a barrier)"
            } else {
                "; the execution mask kept"
            };
            Some(format!(
                "static regions between barriers (each round runs every waiting warp's region \
                 {}; {} bytes of mailbox and frame per warp; kept across barriers: {}; \
                 built again after one: {}{shared}{mask}{lockstep}{skip})",
                if code_size(cfg) >= OUT_OF_LINE_MIN {
                    "as a call (a large kernel)"
                } else {
                    "inline"
                },
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
    let [cons, checked, other, ..] = r.memory;
    (other > cons + checked + per_row).then(|| {
        format!(
            "blocks of ({x}, {y}, {z}) threads split warps across rows, so %tid.x is not \
             lane-strided: {cons} consecutive, {checked} checked, {other} other loads and \
             stores between CTA barriers run faster as thread loops"
        )
    })
}

/// Non-atomic loads and stores inside divergent loops (`Facts::divergent_loops`) whose lanes'
/// addresses the strides do not know (`stride::Access::Unknown`: a gather or scatter each
/// iteration). A kernel of such loops without barriers or warp operations runs faster as
/// thread loops: each thread's iterations one after the other, its loads independent of the
/// other threads', where the warp function waits on a chain of gathers per iteration while
/// any lane is active. CSR SpMV with a row per thread (`benches/suite`, 524288 rows, loaded
/// machine): 400-455 ms on the warp engine, 148 ms on thread loops. Accesses strided but for
/// a join phi (`Strides::likely_strided`) are not counted: their run-time test passes in
/// every warp whose lanes came the same way (vecadd_f4, float4 over a grid-stride loop at
/// 2^25 floats: 70 ms of CPU per launch as thread loops, 57 on the warp engine with its loads'
/// prefetches, `prefetch::invariant_op`; 72 without them).
unsafe fn gathering_loops(
    cfg: &cfg::Cfg,
    facts: &uniform::Facts,
    td: llvm_sys::target::LLVMTargetDataRef,
) -> usize {
    let mut n = 0;
    for (l, _) in cfg
        .loops
        .iter()
        .zip(&facts.divergent_loops)
        .filter(|(_, &d)| d)
    {
        for (x, _) in l.blocks.iter().enumerate().filter(|(_, &inside)| inside) {
            for i in ir::instructions(cfg.blocks[x]) {
                let Some((p, t)) = ir::access(i) else {
                    continue;
                };
                let plain = c::LLVMGetOrdering(i)
                    == llvm_sys::LLVMAtomicOrdering::LLVMAtomicOrderingNotAtomic;
                if plain
                    && facts.varying.contains(&p)
                    && facts.strides.access(p, t, &facts.varying, td) == stride::Access::Unknown
                    && !facts.strides.likely_strided(i)
                    && !(op_is_store(i) && facts.strides.same_address(i, &facts.varying))
                {
                    n += 1;
                }
            }
        }
    }
    n
}

unsafe fn op_is_store(i: LLVMValueRef) -> bool {
    ir::opcode(i) == O::LLVMStore
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
                    if c::LLVMIsDeclaration(callee) == 0
                        && !matches!(call_kind(i), CallKind::Every | CallKind::Coarse)
                    {
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
    r.full_copies = (0..cfg.loops.len())
        .filter(|&l| emit::full_copy(cfg, facts, l))
        .map(|l| bname(cfg.loops[l].header))
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
