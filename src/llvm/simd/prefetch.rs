//! Prefetches of a later iteration's line for global loads that stride through memory.
//!
//! A shared-tile kernel loads its tiles from global memory with a pointer that a loop
//! advances by a run-time stride: matmul's `B[(k0 + ty) * n + col]` moves `16 n` floats per
//! tile, so every row of a tile is a new page, which the CPU's prefetchers do not follow, and
//! each such load waited for memory (57% of matmul's time at 1536³ in perf). A GPU hides that
//! latency with other warps; here the load's own next address is known one iteration early:
//! `p + step`, where `p` is built from a loop header's phi that the loop adds a loop-invariant
//! `step` to. This pass puts `llvm.prefetch(p + step)` before such loads in the kernel's SSA
//! form (so the warp function's analyses see it as any instruction), and `lanes.rs` issues it
//! for the first and last lane of each run. A hint: it reads nothing and cannot fault.
//!
//! A step that is not a constant, or a constant of at least `MIN_STEP` bytes, gets the next
//! iteration's address. A shorter forward constant step is a stream, which the prefetchers
//! follow, but not far enough ahead when the loop is short and each iteration waits on
//! memory the prefetchers cannot predict: a warp per CSR row (spmv_warp) walks its row's
//! `col` and `val` 128 bytes per iteration for one or two iterations around a gather of
//! `x[col[k]]`, and the next warp's row goes on where it stops. The first load of each row
//! waited for memory (about 30% of the kernel's samples). In a loop that holds a load
//! addressed by a value loaded in the loop (`gathers`), such loads get a prefetch `AHEAD`
//! bytes on (whole steps), which is the rows of the warps that come next when the loop has
//! ended by then. A step under a line (each line prefetched again for several iterations)
//! or backward gets none.
//!
//! *Integer induction variables* (`index_prefetch`): a grid-stride loop
//! `for (i = …; i < n; i += %nctaid.x * %ntid.x) acc += in[i]` advances an integer `i` by a
//! run-time step, and the address is `in + 4 * sext(i)`: a new page each iteration (1 MiB
//! apart in the suite's reduction, 90% of whose time waited for memory). When the address
//! is built by arithmetic alone from one such header phi and values defined outside the
//! loop, the prefetch is that expression with `i + D * step`, `D` iterations ahead (more for
//! a small loop body, whose one iteration ahead would hide nothing: `distance`).
//!
//! *The next warp's lines* (`warp_offset`): a warp of such a loop reads 32 consecutive
//! elements of a row (128 bytes of the reduction's 1 MiB rows) and the warps of a CTA run one
//! after the other, so the next 128 bytes of the same row are read by the next warp, all its
//! iterations later; the rows' lines came from memory in 128-byte pieces, each a fresh
//! request (a C model of the reduction: x0.7 with each warp also prefetching its successor's
//! lines, x0.5 with the warps' iterations interleaved, which the warp engine does not do).
//! When the index starts at `c * %tid.x` plus values the same in every warp of the CTA and
//! steps by such a value, the next warp's index is this one's plus `32 c` in every
//! iteration: the prefetch is of the address with `i + 32 c`, in place of the one `D`
//! iterations ahead. The next warp runs after this one's whole loop, so its line in this
//! iteration is a loop's length ahead already and in the input, whereas `i + D * step` lies
//! past the end of a loop shorter than `D` (a CUB-style reduction of 16 iterations, `D` = 23:
//! every prefetch missed the buffer) and in a long loop only added prefetches (CPU per launch,
//! 3 alternated pairs each: reduce_cub x0.67, layernorm x0.84, reduce_gridstride x0.94).
//!
//! *The next CTA's lines* (`insert_next_cta`): in a kernel with CTA barriers, a CTA's global
//! loads come in one burst (its first round) and the rest of its rounds work on shared
//! memory; the worker runs the next CTA of its batch after it, whose loads then waited for
//! memory (the 256-float block reduction: 45% of its cycles on its one `in[i]` load, which a
//! GPU hides with other CTAs). So does a kernel without barriers whose warp loads a page or
//! more this way (`PAGE`: a warp per 4 KiB row), in a burst the hardware prefetcher cannot
//! run ahead of. A load whose address is built from `%ctaid.x` by arithmetic
//! alone (no phi, no memory but the thread context) gets a prefetch of the same expression
//! with `%ctaid.x + d`: the line that CTA loads, fetched while this one runs its rounds, `d`
//! CTAs ahead so that some 4 KiB of them are on the way (`ctas_ahead`: 4 for a CTA that loads
//! 1 KiB, one for 4 KiB or an unknown block; the stores below likewise). A
//! hint: when the worker's next CTA is another one (the end of its batch, the next row of a
//! 2-D grid), a line is fetched for nothing.
//!
//! *Tile loops* (also `insert_next_cta`): a CTA that loads its tile with a loop before its
//! barrier (`for (k = %tid; k < 18 * 18; k += 256) tile[k] = in[(y0 + k / 18) * w + x0 +
//! k % 18]`, a 3x3 convolution's halo tile) has its loads in a loop without barriers, their
//! addresses built from `%ctaid.x` and the loop's header phis, each phi fed by values that do
//! not depend on `%ctaid.x` (`loop_leaves`), or a phi that starts from `%ctaid.x` and steps by a
//! constant (clang's `x0 + k` beside `k`), which the next CTA's is plus its start's move. The
//! same expression with the phis as they are (the latter moved) and
//! `%ctaid.x + TILE_AHEAD` is the address that CTA loads in the same iteration, prefetched
//! into the nearest cache (`Use::ReadSoon`). Loops with barriers in them are left to
//! `insert` (a tiled matmul's loads are spread over its rounds), and an address with no phi
//! in it would be one line fetched in every iteration.
//!
//! *The next CTA's stores* (also `insert_next_cta`): a global store outside loops whose
//! address is built from `%ctaid.x` the same way (a tile kernel's `out[y * w + x]` after its
//! barrier) writes a line the core must first own: a miss that a store waits for once the
//! store queue fills (16 rows of 64 bytes per 16x16 CTA of a 3x3 convolution: 23% of its
//! samples were its two vector stores). A prefetch for writing of the next CTA's address
//! fetches that line for ownership while this CTA runs. One CTA ahead, as its lines are not
//! this CTA's (unlike a halo tile's). A store in a loop without barriers whose address is
//! built from `%ctaid.x` and the loop's header phis (layernorm's `y[c]` for `c = %tid + i *
//! %ntid`, 4 KiB a row) gets the next CTA's address of the same iteration, as a tile loop's
//! load does: its misses were about a third of layernorm's time at full size. A kernel
//! without barriers gets them where its stores outside loops write each warp a page or more
//! (softmax_warp's row), as its loads.
//!
//! *Rows of a 2-D CTA* (also `insert_next_cta`): a kernel without barriers whose load address
//! outside loops holds `%tid.y` or `%tid.z` as well as `%ctaid.x` has its CTA's warps in
//! different rows (a 5-point stencil's `in[(y ± 1) * w + x]` for `y = %ctaid.y * 8 + %tid.y`:
//! 10 rows, 128 bytes of each per CTA). Each load instruction then jumps from row to row,
//! which the CPU's per-instruction stride prefetcher cannot follow, and each row's stream
//! moves only 128 bytes per CTA. Its loads and stores outside loops get the address
//! `ROWS_AHEAD` CTAs on, though a warp reads far less than a page (stencil at full size, CPU
//! time per launch, 4 alternated runs of 15 launches: x0.94 two ahead, x0.96 one, x0.96 four),
//! the loads' into the nearest cache (`Use::ReadSoon`: a further x0.94).

use llvm_sys::core as c;
use llvm_sys::prelude::*;
use llvm_sys::LLVMOpcode as O;

use super::cfg::Cfg;
use super::ir;

/// Smallest constant step (bytes) worth a prefetch of the next iteration: beyond a few lines,
/// a new page soon.
const MIN_STEP: u64 = 1024;

/// How far ahead (bytes) a load advancing by a short constant step is prefetched: the next
/// iteration's line is usually in flight already, this far is a few rows of a CSR matrix
/// (spmv_warp: 0.66x the time without it; 2048 and 4096 measured the same within the
/// noise).
const AHEAD: u64 = 1024;

/// A cache line (bytes): the smallest constant step prefetched `AHEAD`.
const LINE: u64 = 64;

/// How many iterations ahead a strided load in a loop that holds a CTA barrier is prefetched.
/// One iteration of such a loop is one round of the CTA's tile loads (a tiled matmul's `B`
/// rows, 16 lines from 16 pages per tile), too short to hide a miss to memory behind: matmul
/// at 1536³ spent 15% of its samples on those loads with the next iteration's prefetch. CPU
/// time per launch, 3 alternated runs of 11 launches each against one ahead: x0.97 two
/// ahead, x0.94 three, x0.95 four. Measured again against three (matmul 1536³, CPU per
/// launch, 3-4 alternated pairs of 5 launches): one, two, six and twelve ahead and locality
/// 0, 1 or 3 instead of 2 all within the noise (+-3%); none at all (the load's own line)
/// x1.1-1.3. Tried and slower: a second prefetch of the next tile into L1, issued after the
/// first barrier (in the round before the loads': x1.14; its address kept in the frame), and
/// the `A` rows' short stream prefetched one or two tiles ahead (x1.05-1.13).
/// Not the pages' cost either: with all buffers in 2 MiB pages (`PTX2LLVM_HUGEPAGES=1`,
/// checked in smaps) matmul's time is level (3 alternated rounds, 68.8/68.8, 69.0/72.1,
/// 74.6/69.6 ms), as it is on one worker (`--serial`: no contention between the workers).
/// Also slower: a locality-3 prefetch one iteration ahead beside this one, both in the
/// loads' round (7 alternated rounds: 68.2/68.1/71.1/68.8/70.4/69.3/70.6 ms against
/// 70.9/65.9/66.8/67.2/66.8/67.0/69.3).
pub const BARRIER_AHEAD: u64 = 3;

/// A page (bytes): a kernel without CTA barriers whose warp loads this much by `%ctaid.x`
/// addresses gets the next CTA's lines prefetched (`insert_next_cta`). The hardware's stream
/// prefetcher stops at a page's end, and a warp that reads a page in one burst (softmax_warp:
/// a 4 KiB row per warp, 32 loads) leaves it nothing to run ahead of: every row started with
/// the whole page's misses (kernel time with the prefetch, full size, 5 alternated pairs:
/// x0.72 on two workers, x0.83 on one). A few vector loads per warp (vecadd: 256 bytes) are
/// streams the hardware follows.
const PAGE: u64 = 4096;

/// How many bytes of the CTAs that come next a CTA's loads outside loops prefetch
/// (`ctas_ahead`), when the block is known. One CTA ahead is 1 KiB for the 256-float
/// reductions and the scan: the next CTA's lines arrived while this one ran its short rounds,
/// and the worker then waited for the lines after them (about 30 ns of rounds per CTA, less
/// than a miss). Measured, CPU per launch, 3 alternated rounds of 1/4/8 CTAs ahead:
/// reduce_halving 17.4/16.4/16.2, 16.7/14.4/14.6, 18.1/14.1/14.3 ms; reduce_warp 6.0/5.3/5.3;
/// reduce_block 7.0/6.7/6.6; scan 27.5/26.1/26.0; transpose (4 KiB a CTA) 29.6/32.1/32.3:
/// a CTA of 4 KiB or more keeps one.
const AHEAD_BYTES: u64 = 4096;

/// The most CTAs ahead `ctas_ahead` goes.
const MAX_CTAS_AHEAD: u64 = 8;

/// How many CTAs ahead the next CTAs' loads are prefetched: enough of them for
/// `AHEAD_BYTES` of their loads (`warp_bytes` per warp) when `block` is known, else one.
fn ctas_ahead(warp_bytes: u64, block: Option<[u32; 3]>) -> u64 {
    let Some([x, y, z]) = block else { return 1 };
    let warps = (u64::from(x) * u64::from(y) * u64::from(z)).div_ceil(32);
    let cta_bytes = warp_bytes * warps;
    if cta_bytes == 0 {
        return 1;
    }
    (AHEAD_BYTES / cta_bytes).clamp(1, MAX_CTAS_AHEAD)
}

/// How many CTAs ahead the loads and stores of a kernel without barriers whose CTA's warps
/// are in different rows are prefetched (`insert_next_cta`, module comment): a CTA of such a
/// kernel is short (a stencil's 8 warps of 32 points), one ahead is too close.
const ROWS_AHEAD: u64 = 2;

/// How many CTAs ahead a tile loop's loads are prefetched (`insert_next_cta`). A tile with a
/// halo overlaps its neighbour's: the 18-float rows of a 3x3 convolution's 16x16 CTA share
/// all but one line with the next CTA's, which this CTA has just loaded, so one CTA ahead
/// fetches lines already in the cache and two ahead the new ones. Measured on conv3x3 at full
/// size on the (heavily loaded) development machine: CPU time of 21 launches 2600-2750 ms two
/// ahead, 3050-4500 without, 3270-4000 one ahead, three and four ahead as two; median launch
/// of 25, four alternated pairs against the build without: ratio 0.45-0.95, median 0.75.
/// Into the nearest cache (`Use::ReadSoon`): two CTAs are about half a microsecond.
const TILE_AHEAD: u64 = 2;

/// `v` less constant offsets: through `inttoptr`, `add` of a constant and `getelementptr`
/// with constant indices.
unsafe fn strip(mut v: LLVMValueRef) -> LLVMValueRef {
    loop {
        if !ir::is_instruction(v) {
            return v;
        }
        let ops = ir::operands(v);
        v = match ir::opcode(v) {
            O::LLVMIntToPtr | O::LLVMPtrToInt => ops[0],
            O::LLVMAdd if ir::const_u64(ops[1]).is_some() => ops[0],
            O::LLVMAdd if ir::const_u64(ops[0]).is_some() => ops[1],
            O::LLVMGetElementPtr if ops[1..].iter().all(|&o| ir::const_u64(o).is_some()) => ops[0],
            _ => return v,
        };
    }
}

/// Whether `v` has one value in every iteration of loop `l` (defined outside it).
unsafe fn invariant(cfg: &Cfg, l: usize, v: LLVMValueRef) -> bool {
    if !c::LLVMIsAConstant(v).is_null() || !c::LLVMIsAArgument(v).is_null() {
        return true;
    }
    if !ir::is_instruction(v) {
        return false;
    }
    let b = c::LLVMGetInstructionParent(v);
    cfg.index.get(&b).is_some_and(|&x| !cfg.loops[l].blocks[x])
}

/// How far ahead (an i64 value, bytes) to prefetch for `phi`, a phi of `l`'s header that
/// loop `l` advances by a loop-invariant step: the step (the next iteration) when it is not
/// a constant or a constant of at least `MIN_STEP` bytes, `AHEAD` bytes rounded up to whole
/// steps for a shorter forward constant step of at least a `LINE` (then with `true`: a
/// stream); none for other steps.
unsafe fn ahead_of(cfg: &Cfg, l: usize, phi: LLVMValueRef) -> Option<(LLVMValueRef, bool)> {
    let i64t = c::LLVMInt64TypeInContext(c::LLVMGetTypeContext(c::LLVMTypeOf(phi)));
    let mut found = None;
    for k in 0..c::LLVMCountIncoming(phi) {
        let from = cfg.index.get(&c::LLVMGetIncomingBlock(phi, k))?;
        if !cfg.loops[l].blocks[*from] {
            continue;
        }
        let next = c::LLVMGetIncomingValue(phi, k);
        if !ir::is_instruction(next) {
            return None;
        }
        let ops = ir::operands(next);
        let s = match ir::opcode(next) {
            O::LLVMAdd if ops[0] == phi => ops[1],
            O::LLVMAdd if ops[1] == phi => ops[0],
            O::LLVMGetElementPtr
                if ops.len() == 2
                    && ops[0] == phi
                    && c::LLVMGetTypeKind(c::LLVMGetGEPSourceElementType(next))
                        == llvm_sys::LLVMTypeKind::LLVMIntegerTypeKind
                    && c::LLVMGetIntTypeWidth(c::LLVMGetGEPSourceElementType(next)) == 8 =>
            {
                ops[1]
            }
            _ => return None,
        };
        if c::LLVMTypeOf(s) != i64t || !invariant(cfg, l, s) || found.is_some_and(|f| f != s) {
            return None;
        }
        found = Some(s);
    }
    let s = found?;
    match ir::const_u64(s).map(|k| k as i64) {
        Some(k) if k.unsigned_abs() >= MIN_STEP => Some((s, false)),
        // A short forward step of a line or more: a stream, fetched `AHEAD` bytes on (whole
        // iterations). Shorter steps stay in a line for several iterations, each of which
        // would prefetch it again.
        Some(k) if k >= LINE as i64 => {
            let ahead = AHEAD.div_ceil(k as u64) * k as u64;
            Some((c::LLVMConstInt(i64t, ahead, 0), true))
        }
        Some(_) => None,
        None => Some((s, false)),
    }
}

/// Puts a prefetch of a later iteration's address before every global load of `f` whose
/// pointer strides with a loop (see the module comment); returns the instructions it added
/// (an address and a call per load), for `remove`, how many of those loads stream by a short
/// constant step (prefetched `AHEAD`), how many grid-stride loads get a next warp's prefetch
/// (`index_prefetch`), and how many stride in a loop that holds a CTA barrier (prefetched
/// `BARRIER_AHEAD` iterations on).
///
/// # Safety
/// `f` is the defined function `cfg` describes, in SSA form with simplified loops.
pub unsafe fn insert(f: LLVMValueRef, cfg: &Cfg) -> (Vec<LLVMValueRef>, usize, usize, usize) {
    let m = c::LLVMGetGlobalParent(f);
    let cx = c::LLVMGetModuleContext(m);
    let i8t = c::LLVMInt8TypeInContext(cx);
    let pf = Prefetch::declare(m);
    let b = c::LLVMCreateBuilderInContext(cx);
    let mut added = Vec::new();
    let mut streams = 0;
    let mut warps = 0;
    let mut tiles = 0;
    for (bi, i, p) in global_loads(cfg, true) {
        let phi = strip(p);
        if !ir::is_instruction(phi) || ir::opcode(phi) != O::LLVMPHI {
            if let Some(l) = cfg.loop_of[bi] {
                warps += usize::from(index_prefetch(cfg, l, b, i, p, pf, &mut added));
            }
            continue;
        }
        let Some(&h) = cfg.index.get(&c::LLVMGetInstructionParent(phi)) else {
            continue;
        };
        // The loop headed by the phi's block, holding the load.
        let Some(l) = cfg.loops.iter().position(|lp| lp.header == h) else {
            continue;
        };
        if !cfg.loops[l].blocks[bi] {
            continue;
        }
        let Some((s, stream)) = ahead_of(cfg, l, phi) else {
            continue;
        };
        if stream && !gathers(cfg, l) {
            continue;
        }
        streams += usize::from(stream);
        c::LLVMPositionBuilderBefore(b, i);
        let s = if !stream && holds_barrier(cfg, l) {
            tiles += 1;
            let far = c::LLVMConstInt(c::LLVMTypeOf(s), BARRIER_AHEAD, 0);
            keep(&mut added, c::LLVMBuildMul(b, s, far, c"".as_ptr()))
        } else {
            s
        };
        let mut idx = [s];
        let q = c::LLVMBuildGEP2(b, i8t, p, idx.as_mut_ptr(), 1, c"".as_ptr());
        added.push(q);
        added.push(pf.call(b, q));
    }
    c::LLVMDisposeBuilder(b);
    (added, streams, warps, tiles)
}

/// Whether loop `l` holds a global load whose address is computed from a value loaded in the
/// loop (`x[col[k]]`): its iterations wait on memory the prefetchers cannot predict, and a
/// stream beside it gets ahead of them only by software prefetch (`AHEAD`; a loop of plain
/// streams, a shared-tile matmul's `A` rows, ran 2% slower with it).
unsafe fn gathers(cfg: &Cfg, l: usize) -> bool {
    global_loads(cfg, true)
        .into_iter()
        .any(|(bi, _, p)| cfg.loops[l].blocks[bi] && loaded_in(cfg, l, p, 0))
}

/// Whether `v`'s tree of arithmetic (`pure_op`) holds a load in loop `l`.
unsafe fn loaded_in(cfg: &Cfg, l: usize, v: LLVMValueRef, depth: u32) -> bool {
    if depth > 24 || !ir::is_instruction(v) || invariant(cfg, l, v) {
        return false;
    }
    match ir::opcode(v) {
        O::LLVMLoad => true,
        op if pure_op(op) => ir::operands(v)
            .into_iter()
            .any(|o| loaded_in(cfg, l, o, depth + 1)),
        _ => false,
    }
}

/// How far ahead (iterations) an index prefetch reaches in loop `l`: about 256 instructions
/// of its body, 1 to 32 iterations. Each iteration of a grid-stride loop reads a new page, so
/// only the prefetches in flight overlap its misses: a loop in C of the grid-stride
/// reduction's access pattern ran x0.85 with 32 ahead instead of 16 (the reduction, 23
/// ahead: x0.93-0.97 per launch). A large body (Black-Scholes' 4 iterations per thread)
/// keeps 1: a prefetch past a short loop's end fetches nothing it uses.
unsafe fn distance(cfg: &Cfg, l: usize) -> u64 {
    let size: usize = cfg
        .blocks
        .iter()
        .enumerate()
        .filter(|&(k, _)| cfg.loops[l].blocks[k])
        .map(|(_, &bb)| ir::instructions(bb).len())
        .sum();
    (256 / size.max(1)).clamp(1, 32) as u64
}

/// The header phi of loop `l` that `v`'s tree of arithmetic (`pure_op`) depends on, beside
/// values defined outside the loop: `Some(None)` for none, `None` when the tree holds
/// anything else (another phi, a load in the loop, two phis).
unsafe fn index_tree(
    cfg: &Cfg,
    l: usize,
    v: LLVMValueRef,
    depth: u32,
) -> Option<Option<LLVMValueRef>> {
    if invariant(cfg, l, v) {
        return Some(None);
    }
    if depth > 24 || !ir::is_instruction(v) {
        return None;
    }
    let op = ir::opcode(v);
    if op == O::LLVMPHI {
        let b = cfg.index.get(&c::LLVMGetInstructionParent(v))?;
        return (*b == cfg.loops[l].header).then_some(Some(v));
    }
    if !pure_op(op) {
        return None;
    }
    let mut found = None;
    for o in ir::operands(v) {
        match (found, index_tree(cfg, l, o, depth + 1)?) {
            (_, None) => {}
            (None, Some(x)) => found = Some(x),
            (Some(a), Some(x)) if a == x => {}
            _ => return None,
        }
    }
    Some(found)
}

/// The run-time step an integer header phi of loop `l` advances by (`add phi, s` from the
/// latch, `s` loop-invariant and not a constant: constant steps of an index are short
/// strides the hardware follows, or unknown element sizes away).
unsafe fn index_step(cfg: &Cfg, l: usize, phi: LLVMValueRef) -> Option<LLVMValueRef> {
    if c::LLVMGetTypeKind(c::LLVMTypeOf(phi)) != llvm_sys::LLVMTypeKind::LLVMIntegerTypeKind {
        return None;
    }
    let mut found = None;
    for k in 0..c::LLVMCountIncoming(phi) {
        let from = cfg.index.get(&c::LLVMGetIncomingBlock(phi, k))?;
        if !cfg.loops[l].blocks[*from] {
            continue;
        }
        let next = c::LLVMGetIncomingValue(phi, k);
        if !ir::is_instruction(next) || ir::opcode(next) != O::LLVMAdd {
            return None;
        }
        let ops = ir::operands(next);
        let s = if ops[0] == phi {
            ops[1]
        } else if ops[1] == phi {
            ops[0]
        } else {
            return None;
        };
        if !invariant_op(cfg, l, s) || ir::const_u64(s).is_some() || found.is_some_and(|f| f != s) {
            return None;
        }
        found = Some(s);
    }
    found
}

/// Whether `v` is loop `l`'s invariant or an operation of such values that the loop computes
/// (instcombine folds nvcc's unrolled `i + s + s + s + s` into `i + (s << 2)`, the shift in
/// the loop after the loads: `index_prefetch` copies it).
unsafe fn invariant_op(cfg: &Cfg, l: usize, v: LLVMValueRef) -> bool {
    invariant(cfg, l, v)
        || ir::is_instruction(v)
            && pure_op(ir::opcode(v))
            && ir::operands(v).into_iter().all(|o| invariant(cfg, l, o))
}

/// A copy of `v`'s tree before the builder's position with `phi` replaced by `to`, without
/// wrap flags (as `next_cta`); values outside the loop stay.
unsafe fn with_index(
    cfg: &Cfg,
    l: usize,
    b: LLVMBuilderRef,
    v: LLVMValueRef,
    phi: LLVMValueRef,
    to: LLVMValueRef,
    added: &mut Vec<LLVMValueRef>,
) -> LLVMValueRef {
    if v == phi {
        return to;
    }
    if invariant(cfg, l, v) {
        return v;
    }
    let ops: Vec<LLVMValueRef> = ir::operands(v)
        .into_iter()
        .map(|o| with_index(cfg, l, b, o, phi, to, added))
        .collect();
    clone_with(b, v, ops, added)
}

/// A copy of instruction `v` with operands `ops`, without wrap flags (the copy computes
/// another iteration's or CTA's address, which may wrap where `v` does not: a prefetch of it
/// is still only a hint), inserted at the builder's position and pushed on `added`.
unsafe fn clone_with(
    b: LLVMBuilderRef,
    v: LLVMValueRef,
    ops: Vec<LLVMValueRef>,
    added: &mut Vec<LLVMValueRef>,
) -> LLVMValueRef {
    let x = c::LLVMInstructionClone(v);
    for (k, o) in ops.into_iter().enumerate() {
        c::LLVMSetOperand(x, k as u32, o);
    }
    drop_wrap_flags(x, ir::opcode(v));
    c::LLVMInsertIntoBuilder(b, x);
    added.push(x);
    x
}

/// Clears the flags that make a copied instruction's result poison when it wraps.
unsafe fn drop_wrap_flags(x: LLVMValueRef, op: O) {
    match op {
        O::LLVMAdd | O::LLVMSub | O::LLVMMul | O::LLVMShl => {
            c::LLVMSetNUW(x, 0);
            c::LLVMSetNSW(x, 0);
        }
        O::LLVMLShr | O::LLVMAShr => c::LLVMSetExact(x, 0),
        O::LLVMGetElementPtr => c::LLVMGEPSetNoWrapFlags(x, 0),
        O::LLVMOr => c::LLVMSetIsDisjoint(x, 0),
        O::LLVMZExt => c::LLVMSetNNeg(x, 0),
        _ => {}
    }
}

/// A prefetch before load `i` (pointer `p`, in loop `l`) when `p` is arithmetic on one
/// integer header phi with a run-time step (see the module comment): of the next warp's
/// address in this iteration when there is one (`warp_offset`; returns true), else of the
/// address `distance` iterations ahead (returns false).
unsafe fn index_prefetch(
    cfg: &Cfg,
    l: usize,
    b: LLVMBuilderRef,
    i: LLVMValueRef,
    p: LLVMValueRef,
    pf: Prefetch,
    added: &mut Vec<LLVMValueRef>,
) -> bool {
    let Some(Some(phi)) = index_tree(cfg, l, p, 0) else {
        return false;
    };
    let Some(s) = index_step(cfg, l, phi) else {
        return false;
    };
    let t = c::LLVMTypeOf(phi);
    c::LLVMPositionBuilderBefore(b, i);
    // The next warp's line in this iteration in place of the index `distance` on (why: the
    // module comment, *The next warp's lines*).
    if let Some(k) = warp_offset(cfg, l, phi) {
        let next = c::LLVMBuildAdd(b, phi, c::LLVMConstInt(t, k as u64, 1), c"".as_ptr());
        added.push(next);
        let q = with_index(cfg, l, b, p, phi, next, added);
        added.push(pf.call(b, q));
        return true;
    }
    let s = if invariant(cfg, l, s) {
        s
    } else {
        // An operation of invariants in the loop, maybe after `i` (`invariant_op`).
        let copy = c::LLVMInstructionClone(s);
        c::LLVMInsertIntoBuilder(b, copy);
        added.push(copy);
        copy
    };
    let ahead = c::LLVMBuildMul(b, s, c::LLVMConstInt(t, distance(cfg, l), 0), c"".as_ptr());
    let to = c::LLVMBuildAdd(b, phi, ahead, c"".as_ptr());
    added.push(ahead);
    added.push(to);
    let q = with_index(cfg, l, b, p, phi, to, added);
    added.push(pf.call(b, q));
    false
}

/// How far (in the index's units) the next warp's index is from this warp's in every
/// iteration of loop `l` with header phi `phi`: `32 c` when the phi starts at `c * %tid.x`
/// plus values the same in every warp of the CTA (`c` not 0) and steps by such a value.
unsafe fn warp_offset(cfg: &Cfg, l: usize, phi: LLVMValueRef) -> Option<i64> {
    let td = llvm_sys::target::LLVMGetModuleDataLayout(c::LLVMGetGlobalParent(
        c::LLVMGetBasicBlockParent(c::LLVMGetInstructionParent(phi)),
    ));
    let mut start = None;
    for k in 0..c::LLVMCountIncoming(phi) {
        let from = cfg.index.get(&c::LLVMGetIncomingBlock(phi, k))?;
        let v = c::LLVMGetIncomingValue(phi, k);
        if cfg.loops[l].blocks[*from] {
            // The step (`index_step` found it): the same in every warp.
            let ops = ir::operands(v);
            let s = if ops[0] == phi { ops[1] } else { ops[0] };
            if tid_x_coefficient(td, s, 0)? != 0 {
                return None;
            }
        } else if start.is_some_and(|s| s != v) {
            return None;
        } else {
            start = Some(v);
        }
    }
    let k = tid_x_coefficient(td, start?, 0)?;
    (k != 0).then(|| k.wrapping_mul(32))
}

/// The coefficient of `%tid.x` in integer `v` when `v` is built by additions, subtractions,
/// multiplications and left shifts by constants and integer casts from `%tid.x` and values
/// the same in every warp of the CTA (constants, parameters, the context's CTA-wide fields;
/// products of those); `None` otherwise. Wrapping is ignored: the result places a prefetch.
unsafe fn tid_x_coefficient(
    td: llvm_sys::target::LLVMTargetDataRef,
    v: LLVMValueRef,
    depth: u32,
) -> Option<i64> {
    if !c::LLVMIsAConstantInt(v).is_null() || !c::LLVMIsAArgument(v).is_null() {
        return Some(0);
    }
    if depth > 16 || !ir::is_instruction(v) {
        return None;
    }
    let ops = ir::operands(v);
    let co = |k: usize| tid_x_coefficient(td, ops[k], depth + 1);
    match ir::opcode(v) {
        O::LLVMLoad => match ir::CtxField::at(ir::ctx_offset(td, ops[0])?) {
            ir::CtxField::Tid(0) => Some(1),
            ir::CtxField::Uniform(o) if o != crate::runtime::abi::offset::WARPID => Some(0),
            _ => None,
        },
        O::LLVMAdd => Some(co(0)?.wrapping_add(co(1)?)),
        O::LLVMSub => Some(co(0)?.wrapping_sub(co(1)?)),
        O::LLVMMul => {
            let (a, b) = (co(0)?, co(1)?);
            match (ir::const_u64(ops[0]), ir::const_u64(ops[1])) {
                _ if a == 0 && b == 0 => Some(0),
                (Some(x), _) => Some(b.wrapping_mul(x as i64)),
                (_, Some(x)) => Some(a.wrapping_mul(x as i64)),
                _ => None,
            }
        }
        O::LLVMShl => {
            let x = ir::const_u64(ops[1]).filter(|&x| x < 32)?;
            Some(co(0)?.wrapping_shl(x as u32))
        }
        O::LLVMSExt | O::LLVMZExt | O::LLVMTrunc => co(0),
        _ => None,
    }
}

/// What a prefetched line is for: `llvm.prefetch`'s `rw` argument. For writing, the line is
/// fetched for ownership (`prefetchw`), so that the store that follows need not wait for
/// another core's copy to be invalidated or for memory.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Use {
    Read,
    /// For reading into the nearest cache (locality 3, `prefetcht0`): the line is used a few
    /// hundred nanoseconds later, by the CTA `ROWS_AHEAD` on (stencil: x0.93-0.96 CPU time
    /// per launch against locality 2, 4 alternated pairs), or by the CTA `TILE_AHEAD` on
    /// (conv3x3's halo rows: x0.90-0.92 at 8192x6144, whose 32 KiB row pitch puts the 18 rows
    /// in one L1 set, and x0.95-0.97 at 8256x6096; 3 alternated pairs each). The halo loads
    /// waited on the L2 (27% of the kernel's samples right after its four masked loads).
    ReadSoon,
    Write,
}

/// `llvm.prefetch` declared in a module (pointer in address space 0), with its type.
#[derive(Clone, Copy)]
struct Prefetch {
    f: LLVMValueRef,
    ty: LLVMTypeRef,
    i32t: LLVMTypeRef,
}

impl Prefetch {
    unsafe fn declare(m: LLVMModuleRef) -> Prefetch {
        let cx = c::LLVMGetModuleContext(m);
        let ptr = c::LLVMPointerTypeInContext(cx, 0);
        let (f, ty) = ir::intrinsic(m, "llvm.prefetch", &mut [ptr]);
        Prefetch {
            f,
            ty,
            i32t: c::LLVMInt32TypeInContext(cx),
        }
    }

    /// A prefetch of `q` at `b`: read, locality 2 (the outer caches: the line is used an
    /// iteration or a CTA later), data.
    unsafe fn call(self, b: LLVMBuilderRef, q: LLVMValueRef) -> LLVMValueRef {
        self.call_for(b, q, Use::Read)
    }

    /// A prefetch of `q` at `b` for reading or writing (`use_`), locality 2 (3 for
    /// `ReadSoon`), data.
    unsafe fn call_for(self, b: LLVMBuilderRef, q: LLVMValueRef, use_: Use) -> LLVMValueRef {
        let locality = if use_ == Use::ReadSoon { 3 } else { 2 };
        let mut args = [
            q,
            c::LLVMConstInt(self.i32t, (use_ == Use::Write) as u64, 0),
            c::LLVMConstInt(self.i32t, locality, 0),
            c::LLVMConstInt(self.i32t, 1, 0),
        ];
        c::LLVMBuildCall2(b, self.ty, self.f, args.as_mut_ptr(), 4, c"".as_ptr())
    }
}

/// The plain loads of global memory (`.shared` is the CTA's block, in cache) in the blocks
/// of `cfg` inside loops (`in_loops`) or outside them: (block index, load, pointer), collected
/// before the caller adds prefetches.
unsafe fn global_loads(cfg: &Cfg, in_loops: bool) -> Vec<(usize, LLVMValueRef, LLVMValueRef)> {
    let mut out = Vec::new();
    for (bi, &bb) in cfg.blocks.iter().enumerate() {
        if cfg.loop_of[bi].is_some() != in_loops {
            continue;
        }
        for i in ir::instructions(bb) {
            if !plain_load(i) {
                continue;
            }
            let p = c::LLVMGetOperand(i, 0);
            if c::LLVMGetPointerAddressSpace(c::LLVMTypeOf(p)) == 0 {
                out.push((bi, i, p));
            }
        }
    }
    out
}

/// Whether `i` is a load that is neither volatile nor atomic: the loads a prefetch may serve.
unsafe fn plain_load(i: LLVMValueRef) -> bool {
    ir::opcode(i) == O::LLVMLoad
        && c::LLVMGetVolatile(i) == 0
        && c::LLVMGetOrdering(i) == llvm_sys::LLVMAtomicOrdering::LLVMAtomicOrderingNotAtomic
}

/// Opcodes `next_cta` copies: arithmetic, casts and address computations without memory.
fn pure_op(op: O) -> bool {
    matches!(op, O::LLVMIntToPtr | O::LLVMPtrToInt | O::LLVMGetElementPtr)
        || ir::int_arith_or_cast(op)
}

/// How `v`, a pointer operand's tree, depends on `%ctaid.x`: `None` when it holds something
/// `next_cta` cannot copy (a phi, a load of memory, a call other than the context's).
unsafe fn ctaid_tree(
    td: llvm_sys::target::LLVMTargetDataRef,
    v: LLVMValueRef,
    depth: u32,
) -> Option<bool> {
    ctaid_tree_with(td, v, depth, &Leaves::default())
}

/// `ctaid_tree` with the fixed phis of `leaves` taken as values that do not depend on
/// `%ctaid.x` and its shifted phis as their starts (`loop_leaves`).
unsafe fn ctaid_tree_with(
    td: llvm_sys::target::LLVMTargetDataRef,
    v: LLVMValueRef,
    depth: u32,
    leaves: &Leaves,
) -> Option<bool> {
    if !ir::is_instruction(v) || leaves.fixed.contains(&v) {
        return Some(false);
    }
    if let Some(init) = leaves.shift_of(v) {
        return ctaid_tree_with(td, init, depth + 1, leaves);
    }
    if depth > 24 {
        return None;
    }
    let op = ir::opcode(v);
    if op == O::LLVMLoad {
        let off = ir::ctx_offset(td, c::LLVMGetOperand(v, 0))?;
        return Some(off == crate::runtime::abi::offset::CTAID);
    }
    if !pure_op(op) {
        return None;
    }
    let mut any = false;
    for o in ir::operands(v) {
        any |= ctaid_tree_with(td, o, depth + 1, leaves)?;
    }
    Some(any)
}

/// Whether `v`, a pointer operand's tree that `ctaid_tree` accepts, reads `%tid.y` or
/// `%tid.z` from the thread context: the warps of a 2-D CTA address different rows.
unsafe fn rows_tree(td: llvm_sys::target::LLVMTargetDataRef, v: LLVMValueRef, depth: u32) -> bool {
    use crate::runtime::abi::offset::TID;
    if !ir::is_instruction(v) || depth > 24 {
        return false;
    }
    if ir::opcode(v) == O::LLVMLoad {
        let off = ir::ctx_offset(td, c::LLVMGetOperand(v, 0));
        return off == Some(TID + 4) || off == Some(TID + 8);
    }
    pure_op(ir::opcode(v))
        && ir::operands(v)
            .into_iter()
            .any(|o| rows_tree(td, o, depth + 1))
}

/// A copy of `v`'s tree (`ctaid_tree_with` said yes, `leaves` kept as they are) before the
/// builder's position, with each `%ctaid.x` load replaced by it plus `ahead` and no wrap flags (the next CTA's address may
/// wrap where this one's does not: a prefetch of it is still only a hint). `added` collects
/// the new instructions.
unsafe fn next_cta(
    td: llvm_sys::target::LLVMTargetDataRef,
    b: LLVMBuilderRef,
    v: LLVMValueRef,
    (leaves, ahead): (&Leaves, u64),
    done: &mut std::collections::HashMap<LLVMValueRef, LLVMValueRef>,
    added: &mut Vec<LLVMValueRef>,
) -> LLVMValueRef {
    if let Some(&x) = done.get(&v) {
        return x;
    }
    let out = if ctaid_tree_with(td, v, 0, leaves) != Some(true) {
        v
    } else if let Some(init) = leaves.shift_of(v) {
        // The phi plus its start's move (the loop adds the same to it in every CTA), or
        // the phi itself when that move is not linear (a hint: a line fetched for nothing).
        match moved(td, b, init, (leaves, ahead), &mut Moves::new(), added) {
            Some(d) => shifted_by(b, v, d, added),
            None => v,
        }
    } else if ir::opcode(v) == O::LLVMLoad {
        let one = c::LLVMConstInt(c::LLVMTypeOf(v), ahead, 0);
        let x = c::LLVMBuildAdd(b, v, one, c"".as_ptr());
        added.push(x);
        x
    } else {
        let ops: Vec<LLVMValueRef> = ir::operands(v)
            .into_iter()
            .map(|o| next_cta(td, b, o, (leaves, ahead), done, added))
            .collect();
        clone_with(b, v, ops, added)
    };
    done.insert(v, out);
    out
}

/// How far (bytes for a pointer, units of its type for an integer) `v`, a pointer operand's
/// tree that `ctaid_tree_with` accepts (`leaves` kept as they are), moves when `%ctaid.x` moves
/// by `ahead`: built before the builder's position from the tree's values that do not depend
/// on `%ctaid.x`, or `None` when the tree is not linear in it (an `and`, a division, a product
/// of two moving values). The next CTA's address is then this one's plus the move: a 3x3
/// convolution's halo load moves 128 bytes two CTAs on, so the prefetch is the load's own
/// lane addresses plus a constant, where `next_cta`'s copy of the tree was 4 scalar address
/// computations (sign extensions, products, sums: ~30 instructions a warp iteration of its
/// halo loop, 4 lanes) that share nothing with the load's. A hint, like `next_cta`'s copy:
/// the moves are taken without wrapping (`sext(a + k) - sext(a)` as `k`), so where this
/// CTA's or the next one's sum wraps the line fetched is not the one loaded.
unsafe fn moved(
    td: llvm_sys::target::LLVMTargetDataRef,
    b: LLVMBuilderRef,
    v: LLVMValueRef,
    (leaves, ahead): (&Leaves, u64),
    done: &mut Moves,
    added: &mut Vec<LLVMValueRef>,
) -> Option<LLVMValueRef> {
    if let Some(&d) = done.get(&v) {
        return d;
    }
    let d = move_of(td, b, v, (leaves, ahead), done, added);
    done.insert(v, d);
    d
}

/// `moved`'s results by value: a value the tree reaches twice moves once.
type Moves = std::collections::HashMap<LLVMValueRef, Option<LLVMValueRef>>;

/// `moved` for a value not yet seen.
unsafe fn move_of(
    td: llvm_sys::target::LLVMTargetDataRef,
    b: LLVMBuilderRef,
    v: LLVMValueRef,
    (leaves, ahead): (&Leaves, u64),
    done: &mut Moves,
    added: &mut Vec<LLVMValueRef>,
) -> Option<LLVMValueRef> {
    let t = c::LLVMTypeOf(v);
    let cx = c::LLVMGetTypeContext(t);
    let i64t = c::LLVMInt64TypeInContext(cx);
    let pointer = c::LLVMGetTypeKind(t) == llvm_sys::LLVMTypeKind::LLVMPointerTypeKind;
    let dt = if pointer { i64t } else { t };
    if c::LLVMGetTypeKind(dt) != llvm_sys::LLVMTypeKind::LLVMIntegerTypeKind {
        return None;
    }
    let fixed = |x: LLVMValueRef| ctaid_tree_with(td, x, 0, leaves) == Some(false);
    if fixed(v) {
        return Some(c::LLVMConstNull(dt));
    }
    if let Some(init) = leaves.shift_of(v) {
        return moved(td, b, init, (leaves, ahead), done, added);
    }
    let n = c"".as_ptr();
    let ops = ir::operands(v);
    let lv = (leaves, ahead);
    let d = match ir::opcode(v) {
        // `ctaid_tree_with` accepts a load only of `%ctaid.x` from the thread context.
        O::LLVMLoad => c::LLVMConstInt(dt, ahead, 0),
        op @ (O::LLVMAdd | O::LLVMSub | O::LLVMOr) => {
            // `or disjoint` is a sum (its operands share no bit here; a hint if they do on).
            if op == O::LLVMOr && c::LLVMGetIsDisjoint(v) == 0 {
                return None;
            }
            let x = moved(td, b, ops[0], lv, done, added)?;
            let y = moved(td, b, ops[1], lv, done, added)?;
            let r = if op == O::LLVMSub {
                c::LLVMBuildSub(b, x, y, n)
            } else {
                c::LLVMBuildAdd(b, x, y, n)
            };
            keep(added, r)
        }
        O::LLVMMul if fixed(ops[1]) => {
            let x = moved(td, b, ops[0], lv, done, added)?;
            keep(added, c::LLVMBuildMul(b, x, ops[1], n))
        }
        O::LLVMMul if fixed(ops[0]) => {
            let y = moved(td, b, ops[1], lv, done, added)?;
            keep(added, c::LLVMBuildMul(b, ops[0], y, n))
        }
        O::LLVMShl if fixed(ops[1]) => {
            let x = moved(td, b, ops[0], lv, done, added)?;
            keep(added, c::LLVMBuildShl(b, x, ops[1], n))
        }
        // A move is signed (a zero extension's operand may move down).
        O::LLVMSExt | O::LLVMZExt | O::LLVMTrunc | O::LLVMIntToPtr | O::LLVMPtrToInt => {
            let x = moved(td, b, ops[0], lv, done, added)?;
            keep(added, c::LLVMBuildIntCast2(b, x, dt, 1, n))
        }
        // Bytes: the base's move and the first index's times its element's size; the other
        // indices (into the element) must not move.
        O::LLVMGetElementPtr if ops.iter().skip(2).all(|&o| fixed(o)) => {
            let mut d = moved(td, b, ops[0], lv, done, added)?;
            if let Some(&i) = ops.get(1) {
                let x = moved(td, b, i, lv, done, added)?;
                let x = keep(added, c::LLVMBuildIntCast2(b, x, i64t, 1, n));
                let size =
                    llvm_sys::target::LLVMABISizeOfType(td, c::LLVMGetGEPSourceElementType(v));
                let x = keep(
                    added,
                    c::LLVMBuildMul(b, x, c::LLVMConstInt(i64t, size, 0), n),
                );
                d = keep(added, c::LLVMBuildAdd(b, d, x, n));
            }
            d
        }
        _ => return None,
    };
    Some(d)
}

/// `x`, recorded in `added` when the builder made a new instruction of it (not a folded
/// constant, nor an operand a cast to its own type returned).
unsafe fn keep(added: &mut Vec<LLVMValueRef>, x: LLVMValueRef) -> LLVMValueRef {
    if ir::is_instruction(x) && !added.contains(&x) {
        added.push(x);
    }
    x
}

/// The address of the CTA `ahead` on for load or store pointer `p` (`ctaid_tree_with` said
/// yes): `p` plus its move (`moved`) when the tree is linear in `%ctaid.x`, else the tree
/// copied with `%ctaid.x + ahead` (`next_cta`).
unsafe fn ahead_address(
    td: llvm_sys::target::LLVMTargetDataRef,
    b: LLVMBuilderRef,
    p: LLVMValueRef,
    (leaves, ahead): (&Leaves, u64),
    added: &mut Vec<LLVMValueRef>,
) -> LLVMValueRef {
    let mark = added.len();
    if let Some(d) = moved(td, b, p, (leaves, ahead), &mut Moves::new(), added) {
        let i8t = c::LLVMInt8TypeInContext(c::LLVMGetTypeContext(c::LLVMTypeOf(p)));
        let mut idx = [d];
        let q = c::LLVMBuildGEP2(b, i8t, p, idx.as_mut_ptr(), 1, c"".as_ptr());
        return keep(added, q);
    }
    // Not linear: the partial move's instructions go (each made after its operands: users
    // first).
    for &x in added[mark..].iter().rev() {
        c::LLVMInstructionEraseFromParent(x);
    }
    added.truncate(mark);
    let mut done = std::collections::HashMap::new();
    next_cta(td, b, p, (leaves, ahead), &mut done, added)
}

/// Whether a loop around block `bi` holds a CTA barrier: its loads are spread over the
/// CTA's rounds (a tiled matmul's), which `insert`'s iteration prefetch serves.
unsafe fn barrier_loop(cfg: &Cfg, bi: usize) -> bool {
    let mut l = cfg.loop_of[bi];
    while let Some(x) = l {
        if holds_barrier(cfg, x) {
            return true;
        }
        l = cfg.loops[x].parent;
    }
    false
}

/// Whether loop `l`'s blocks hold a CTA barrier (each iteration a round of the CTA).
unsafe fn holds_barrier(cfg: &Cfg, l: usize) -> bool {
    let lp = &cfg.loops[l];
    cfg.blocks.iter().enumerate().any(|(k, &bb)| {
        lp.blocks[k]
            && ir::instructions(bb).into_iter().any(|i| {
                !c::LLVMIsACallInst(i).is_null()
                    && matches!(
                        super::uniform::call_kind(i),
                        super::uniform::CallKind::Barrier(_)
                    )
            })
    })
}

/// The leaves of a load's address tree in a loop (`loop_leaves`): values that hold the same
/// in the next CTA's same iteration (`fixed`), and header phis that hold their start's move
/// more (`shifted`, with that start).
#[derive(Default)]
struct Leaves {
    fixed: Vec<LLVMValueRef>,
    shifted: Vec<(LLVMValueRef, LLVMValueRef)>,
}

impl Leaves {
    /// The start of `v` when it is a shifted phi.
    fn shift_of(&self, v: LLVMValueRef) -> Option<LLVMValueRef> {
        self.shifted.iter().find(|s| s.0 == v).map(|s| s.1)
    }

    fn all(&self) -> Vec<LLVMValueRef> {
        self.fixed
            .iter()
            .copied()
            .chain(self.shifted.iter().map(|s| s.0))
            .collect()
    }
}

/// `v` (an integer or a pointer) plus `d` (of `v`'s integer type, bytes for a pointer).
unsafe fn shifted_by(
    b: LLVMBuilderRef,
    v: LLVMValueRef,
    d: LLVMValueRef,
    added: &mut Vec<LLVMValueRef>,
) -> LLVMValueRef {
    let t = c::LLVMTypeOf(v);
    if c::LLVMGetTypeKind(t) == llvm_sys::LLVMTypeKind::LLVMPointerTypeKind {
        let i8t = c::LLVMInt8TypeInContext(c::LLVMGetTypeContext(t));
        let mut idx = [d];
        keep(
            added,
            c::LLVMBuildGEP2(b, i8t, v, idx.as_mut_ptr(), 1, c"".as_ptr()),
        )
    } else {
        keep(added, c::LLVMBuildAdd(b, v, d, c"".as_ptr()))
    }
}

/// The header phis of the loops around block `bi` whose incoming values do not depend on
/// `%ctaid.x` (through pure arithmetic and these same phis): leaves of a load's address tree
/// that hold the same value in the next CTA's same iteration (`Leaves::fixed`); and those
/// whose one value from outside the loop does, while each value from inside is the phi plus
/// a constant (`Leaves::shifted`): in the next CTA's same iteration the phi is this one's
/// plus its start's move. A constant step: a tile loop walks the CTA's own tile; a
/// grid-stride index (stepping by the grid's threads) has the next warp's prefetch
/// (`warp_offset`), and the next CTA's same iteration would be a line its warps read anyway. Clang's halo-tile loop carries `x0 + k` as such a phi
/// (`k` from `%tid`, `x0` from `%ctaid.x`), where NVCC's rebuilds it from `k` each iteration:
/// without the shift its tile loads had no prefetch (conv3x3 from clang: 3.9x C).
unsafe fn loop_leaves(cfg: &Cfg, bi: usize) -> Leaves {
    let mut phis = Vec::new();
    let mut l = cfg.loop_of[bi];
    while let Some(x) = l {
        let hb = cfg.blocks[cfg.loops[x].header];
        for i in ir::instructions(hb) {
            if ir::opcode(i) == O::LLVMPHI {
                phis.push((i, x));
            }
        }
        l = cfg.loops[x].parent;
    }
    let td = llvm_sys::target::LLVMGetModuleDataLayout(c::LLVMGetGlobalParent(
        c::LLVMGetBasicBlockParent(cfg.blocks[bi]),
    ));
    // Drop phis fed by `%ctaid.x` (or by something `ctaid_tree` cannot follow) until none is.
    let mut fixed: Vec<LLVMValueRef> = phis.iter().map(|p| p.0).collect();
    loop {
        let leaves = Leaves {
            fixed: fixed.clone(),
            shifted: Vec::new(),
        };
        let keep: Vec<LLVMValueRef> = fixed
            .iter()
            .copied()
            .filter(|&ph| {
                (0..c::LLVMCountIncoming(ph)).all(|k| {
                    ctaid_tree_with(td, c::LLVMGetIncomingValue(ph, k), 0, &leaves) == Some(false)
                })
            })
            .collect();
        if keep.len() == fixed.len() {
            break;
        }
        fixed = keep;
    }
    let mut leaves = Leaves {
        fixed,
        shifted: Vec::new(),
    };
    for &(ph, x) in &phis {
        if leaves.fixed.contains(&ph) {
            continue;
        }
        let mut start = None;
        let mut steps = true;
        for k in 0..c::LLVMCountIncoming(ph) {
            let v = c::LLVMGetIncomingValue(ph, k);
            let from = c::LLVMGetIncomingBlock(ph, k);
            let inside = cfg
                .index
                .get(&from)
                .is_some_and(|&j| cfg.loops[x].blocks[j]);
            if !inside {
                steps &= start.replace(v).is_none_or(|s| s == v);
                continue;
            }
            let step = ir::is_instruction(v)
                && matches!(ir::opcode(v), O::LLVMAdd | O::LLVMGetElementPtr)
                && c::LLVMGetNumOperands(v) == 2
                && c::LLVMGetOperand(v, 0) == ph
                && !c::LLVMIsAConstantInt(c::LLVMGetOperand(v, 1)).is_null();
            steps &= step;
        }
        if let Some(s) = start.filter(|&s| steps && ctaid_tree(td, s, 0) == Some(true)) {
            leaves.shifted.push((ph, s));
        }
    }
    leaves
}

/// Whether `v`'s tree (pure operations) uses one of `leaves`.
unsafe fn uses_any(v: LLVMValueRef, leaves: &[LLVMValueRef], depth: u32) -> bool {
    if leaves.contains(&v) {
        return true;
    }
    if !ir::is_instruction(v) || depth > 24 || !pure_op(ir::opcode(v)) {
        return false;
    }
    ir::operands(v)
        .into_iter()
        .any(|o| uses_any(o, leaves, depth + 1))
}

/// In a kernel with CTA barriers (`barriers`), or one whose warp loads at least a page
/// (`PAGE`) by them or whose CTA's warps load different rows (`rows_tree`), puts a prefetch of the next CTA's address before every global load
/// outside loops whose address is built from `%ctaid.x` and (with barriers) tile loops' loads
/// (see the module comment), and, with barriers, one for writing before such global stores
/// outside loops; returns the instructions it added, for `remove`, how many loads got one and
/// how many stores.
///
/// # Safety
/// `f` is the defined function `cfg` describes, in SSA form.
pub unsafe fn insert_next_cta(
    f: LLVMValueRef,
    cfg: &Cfg,
    barriers: bool,
    block: Option<[u32; 3]>,
) -> (Vec<LLVMValueRef>, usize, usize) {
    let mut added = Vec::new();
    let m = c::LLVMGetGlobalParent(f);
    let td = llvm_sys::target::LLVMGetModuleDataLayout(m);
    // Outside loops: in a loop the address would be the same each iteration (no phi in it),
    // one prefetch per iteration for one line.
    let outside: Vec<_> = global_loads(cfg, false)
        .into_iter()
        .filter(|&(_, _, p)| ctaid_tree(td, p, 0) == Some(true))
        .collect();
    let warp_bytes: u64 = outside
        .iter()
        .map(|&(_, i, _)| 32 * llvm_sys::target::LLVMABISizeOfType(td, c::LLVMTypeOf(i)))
        .sum();
    // Without barriers, a warp's page or more, or a CTA's warps in different rows.
    let rows = !barriers && outside.iter().any(|&(_, _, p)| rows_tree(td, p, 0));
    if !barriers && warp_bytes < PAGE && !rows {
        return (added, 0, 0);
    }
    let ahead = if rows && warp_bytes < PAGE {
        ROWS_AHEAD
    } else {
        ctas_ahead(warp_bytes, block)
    };
    let cx = c::LLVMGetModuleContext(m);
    let pf = Prefetch::declare(m);
    let b = c::LLVMCreateBuilderInContext(cx);
    let mut loads = 0;
    for (_, i, p) in outside {
        c::LLVMPositionBuilderBefore(b, i);
        let q = ahead_address(td, b, p, (&Leaves::default(), ahead), &mut added);
        let use_ = if ahead == ROWS_AHEAD {
            Use::ReadSoon
        } else {
            Use::Read
        };
        added.push(pf.call_for(b, q, use_));
        loads += 1;
    }
    // In loops without barriers (a CTA's tile loaded by a loop over `k = %tid + i * %ntid`
    // before its barrier): with the loops' header phis as leaves, the address moves each
    // iteration, and so does the CTA's `TILE_AHEAD`-th successor's.
    for (bi, i, p) in global_loads(cfg, true) {
        if !barriers || barrier_loop(cfg, bi) {
            continue;
        }
        let leaves = loop_leaves(cfg, bi);
        if ctaid_tree_with(td, p, 0, &leaves) != Some(true) || !uses_any(p, &leaves.all(), 0) {
            continue;
        }
        c::LLVMPositionBuilderBefore(b, i);
        let q = ahead_address(td, b, p, (&leaves, TILE_AHEAD), &mut added);
        added.push(pf.call_for(b, q, Use::ReadSoon));
        loads += 1;
    }
    let mut stores = 0;
    // Without barriers, stores outside loops where they write each warp a page or more, as
    // the loads (a warp per 4 KiB row: softmax_warp's `y[c]`).
    let write_page = barriers || {
        let bytes: u64 = global_stores(cfg)
            .into_iter()
            .filter(|&(bi, _, p)| cfg.loop_of[bi].is_none() && ctaid_tree(td, p, 0) == Some(true))
            .map(|(_, i, _)| {
                let t = c::LLVMTypeOf(c::LLVMGetOperand(i, 0));
                32 * llvm_sys::target::LLVMABISizeOfType(td, t)
            })
            .sum();
        bytes >= PAGE || rows
    };
    for (bi, i, p) in global_stores(cfg) {
        if !write_page || !barriers && cfg.loop_of[bi].is_some() {
            continue;
        }
        // In a loop without barriers (layernorm's `y[c] = …` for `c = %tid + i * %ntid`),
        // the loop's header phis as they are: the next CTA's store of the same iteration.
        let leaves = match cfg.loop_of[bi] {
            None => Leaves::default(),
            Some(_) if barrier_loop(cfg, bi) => continue,
            Some(_) => loop_leaves(cfg, bi),
        };
        if ctaid_tree_with(td, p, 0, &leaves) != Some(true)
            || !leaves.all().is_empty() && !uses_any(p, &leaves.all(), 0)
        {
            continue;
        }
        c::LLVMPositionBuilderBefore(b, i);
        let q = ahead_address(td, b, p, (&leaves, ahead), &mut added);
        added.push(pf.call_for(b, q, Use::Write));
        stores += 1;
    }
    c::LLVMDisposeBuilder(b);
    (added, loads, stores)
}

/// Takes out what `insert` added (the kernel goes to another engine).
///
/// # Safety
/// `added` is `insert`'s result for a function that still holds those instructions.
pub unsafe fn remove(added: &[LLVMValueRef]) {
    for &i in added.iter().rev() {
        c::LLVMInstructionEraseFromParent(i);
    }
}

/// The plain stores to global memory: (block, store, pointer), collected before the caller
/// adds prefetches.
unsafe fn global_stores(cfg: &Cfg) -> Vec<(usize, LLVMValueRef, LLVMValueRef)> {
    let mut out = Vec::new();
    for (bi, &bb) in cfg.blocks.iter().enumerate() {
        for i in ir::instructions(bb) {
            let plain = ir::opcode(i) == O::LLVMStore
                && c::LLVMGetVolatile(i) == 0
                && c::LLVMGetOrdering(i)
                    == llvm_sys::LLVMAtomicOrdering::LLVMAtomicOrderingNotAtomic;
            if !plain {
                continue;
            }
            let p = c::LLVMGetOperand(i, 1);
            if c::LLVMGetPointerAddressSpace(c::LLVMTypeOf(p)) == 0 {
                out.push((bi, i, p));
            }
        }
    }
    out
}

/// Whether call `i` is a prefetch (a hint the warp function issues per run, `lanes.rs`).
///
/// # Safety
/// `i` is a call instruction.
pub unsafe fn is_prefetch(i: LLVMValueRef) -> bool {
    ir::callee(i).starts_with("llvm.prefetch.")
}
