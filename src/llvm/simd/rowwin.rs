//! Row windows (issue 17): gathers of lanes that each walk their own row, served from the next
//! 64 bytes of every lane's row, loaded once and transposed in registers, in the optimized
//! module before code generation.
//!
//! A thread-per-row loop (`y[i] = sum_j A[i * cols + j] * x[j]`, a row sum, any thread that
//! walks its own contiguous chunk) gives the warp 32 lane pointers a whole row apart that all
//! step by the same few bytes per iteration. The lanes are not consecutive, so every
//! iteration's load is a run-time test of the lanes' addresses and then a gather: about one
//! cycle per lane even from L1 (4096x8192 `gemv_row`: 11x the C dot product per row). Here
//! such a load (the join phi of `lanes.rs`'s `runs_or_gather` paths, a block `ld.pieces*`
//! with the gather among its incoming values) becomes a call of `ptx2llvm.rowwin`, inlined
//! at once, that keeps per group of loads (one lane-pointer vector `X`, loads at `X + c`) a
//! window: for every lane the 64 bytes from its pointer at the last refill (`W`), stored
//! transposed as 16 vectors of 32 lanes (element `e` of every lane's row in vector `e`). A
//! load whose every running lane's pointer lies the same number of bytes `d` past its `W`,
//! within the window, is one vector load of vector `d / 4`; otherwise the window is refilled
//! from this load's pointers: 32 masked 16-element row loads, a 16x16 transpose per half
//! warp (4 stages of 2-input shuffles), 32 stores, and a prefetch of each row 256 bytes on.
//! The refill is one function out of line; the windows' memory is on the warp function's
//! stack, shared between loops. After four refills in a row whose lanes had jumped (by more
//! than the window, or back) the loads gather until the loop is entered again. 4096x4096
//! thread-per-row gemv: 16.4 -> 3.9 ms (C 1.1 ms); held-out row max 12.9 -> 2.7 ms.
//!
//! Why it is exact:
//! - The loop that holds the load writes no memory (no store, atomic, fence, or call other
//!   than a read-only intrinsic), and the window is emptied on every edge into the loop: what
//!   the window holds is what memory holds while the loop runs. Other threads' writes to those
//!   bytes without synchronization are a data race, whose value a weak load may take from
//!   either side of the write.
//! - A refill reads, for each running lane, from its pointer to the end of the smaller of 64
//!   bytes and its 4 KiB page: in the page that lane's load reads now, so it faults only
//!   where the gather would (the runtime names the thread by replaying the CTA lane by lane).
//!   The window's length is the least over the running lanes; a load the window cannot hold
//!   even after a refill (a lane's element across a page end) is the gather.
//! - The lanes that did not run at the refill get no bytes: a later load in which such a
//!   lane runs refills first (`ref`).
//! - The test compares whole 64-bit lane offsets, so lanes that moved apart (a pointer
//!   stepped in some lanes only) refill instead of reading another lane's bytes.

use std::collections::HashMap;

use llvm_sys::core as c;
use llvm_sys::prelude::*;
use llvm_sys::LLVMIntPredicate as P;
use llvm_sys::LLVMOpcode as O;
use llvm_sys::LLVMTypeKind as K;

use super::cfg::Cfg;
use super::ir;

/// The helper each load becomes (always inlined, then deleted).
pub const HELPER: &str = "ptx2llvm.rowwin";
/// The refill, out of line.
const REFILL: &str = "ptx2llvm.rowwin.refill";
const LANES: u32 = 32;
/// 4-byte elements of each lane's row in the window (64 bytes).
const ROW: u32 = 16;
const PAGE: u64 = 4096;
/// The window state's bytes: `W` (32 x i64) at 0, the window's length at `NV`, the running
/// lanes of its refill at `REF`, a lane that ran then at `FIRST`.
const STATE: u64 = 272;
const NV: u64 = 256;
const REF: u64 = 260;
const FIRST: u64 = 264;
/// Refills in a row that found the lanes far from the last window (`refill`'s strikes).
const STRIKES: u64 = 268;
/// Strikes after which a function's loads of that window gather.
const OUT: u64 = 4;
/// How far ahead of each lane's window a refill prefetches its row (bytes; a prefetch does
/// not fault, so past a row's end it costs nothing but the line). The 32 rows (128 with warp
/// groups) are more streams than the hardware prefetchers follow: 4096x8192 `gemv_row` 5.0 ->
/// 3.8 ms (128 to 1024 bytes alike, within 0.3 ms).
const AHEAD: u64 = 256;
/// The transposed window: 16 vectors of 32 lanes of 4 bytes.
const BUF: u64 = 2048;

/// One load to serve from a window.
struct Site {
    phi: LLVMValueRef,
    x: LLVMValueRef,
    off: i64,
    mask: LLVMValueRef,
    lp: usize,
}

/// Serves every such load of `m` from its group's window; returns the names of the functions
/// rewritten (the always-inliner is to run, then a cleanup of those functions alone: run on
/// every function, it changed code that had no window, naive matmul x1.035 slower).
///
/// # Safety
/// `m` is a live module.
pub unsafe fn fold(m: LLVMModuleRef) -> Vec<String> {
    let mut done = Vec::new();
    let mut helper = None;
    for f in ir::functions(m) {
        if c::LLVMCountBasicBlocks(f) == 0 || optnone(f) {
            continue;
        }
        let Ok(cfg) = Cfg::new(f) else { continue };
        let sites = find(&cfg);
        if sites.is_empty() {
            continue;
        }
        let h = *helper.get_or_insert_with(|| build_helper(m, f));
        rewrite(f, &cfg, h, sites);
        done.push(ir::name(f));
    }
    done
}

unsafe fn optnone(f: LLVMValueRef) -> bool {
    let kind = ir::attr_kind(c"optnone");
    !c::LLVMGetEnumAttributeAtIndex(f, llvm_sys::LLVMAttributeFunctionIndex, kind).is_null()
}

/// The loads of the function of `cfg` to serve from windows.
unsafe fn find(cfg: &Cfg) -> Vec<Site> {
    let mut writeless: HashMap<usize, bool> = HashMap::new();
    let mut out = Vec::new();
    for (bi, &bb) in cfg.blocks.iter().enumerate() {
        if !block_name(bb).starts_with("ld.pieces") {
            continue;
        }
        let Some(lp) = cfg.loop_of[bi] else { continue };
        for phi in ir::instructions(bb) {
            if c::LLVMIsAPHINode(phi).is_null() {
                break;
            }
            let t = c::LLVMTypeOf(phi);
            if !lane_words(t) {
                continue;
            }
            let Some(g) = (0..c::LLVMCountIncoming(phi))
                .map(|k| c::LLVMGetIncomingValue(phi, k))
                .find(|&v| is_gather(v, t))
            else {
                continue;
            };
            let (x, off) = split_offset(c::LLVMGetOperand(g, 0));
            let mask = c::LLVMGetOperand(g, 1);
            if !buildable(cfg, x, bi, BUILD_DEPTH)
                || !available(cfg, mask, bi)
                || !walks(cfg, x, lp)
            {
                continue;
            }
            if !*writeless
                .entry(lp)
                .or_insert_with(|| loop_writeless(cfg, lp))
            {
                continue;
            }
            out.push(Site {
                phi,
                x,
                off,
                mask,
                lp,
            });
        }
    }
    out
}

unsafe fn block_name(bb: LLVMBasicBlockRef) -> String {
    let s = c::LLVMGetBasicBlockName(bb);
    if s.is_null() {
        return String::new();
    }
    std::ffi::CStr::from_ptr(s).to_string_lossy().into_owned()
}

/// Whether `t` is 32 lanes of `float` or `i32`.
unsafe fn lane_words(t: LLVMTypeRef) -> bool {
    if c::LLVMGetTypeKind(t) != K::LLVMVectorTypeKind || c::LLVMGetVectorSize(t) != LANES {
        return false;
    }
    let e = c::LLVMGetElementType(t);
    match c::LLVMGetTypeKind(e) {
        K::LLVMFloatTypeKind => true,
        K::LLVMIntegerTypeKind => c::LLVMGetIntTypeWidth(e) == 32,
        _ => false,
    }
}

/// Whether `v` is a gather of type `t` from 32 generic pointers with no pass-through value.
unsafe fn is_gather(v: LLVMValueRef, t: LLVMTypeRef) -> bool {
    if c::LLVMIsACallInst(v).is_null()
        || c::LLVMTypeOf(v) != t
        || !ir::callee(v).starts_with("llvm.masked.gather.")
    {
        return false;
    }
    let pt = c::LLVMTypeOf(c::LLVMGetOperand(v, 0));
    c::LLVMGetTypeKind(pt) == K::LLVMVectorTypeKind
        && c::LLVMGetPointerAddressSpace(c::LLVMGetElementType(pt)) == 0
        && c::LLVMIsUndef(c::LLVMGetOperand(v, 2)) != 0
}

/// `p` as a lane-pointer vector and a constant byte offset (`getelementptr i8, X, c`).
unsafe fn split_offset(p: LLVMValueRef) -> (LLVMValueRef, i64) {
    if c::LLVMIsAGetElementPtrInst(p).is_null() || c::LLVMGetNumOperands(p) != 2 {
        return (p, 0);
    }
    let base = c::LLVMGetOperand(p, 0);
    let idx = c::LLVMGetOperand(p, 1);
    let i8t = c::LLVMInt8TypeInContext(c::LLVMGetTypeContext(c::LLVMTypeOf(p)));
    if c::LLVMGetGEPSourceElementType(p) != i8t
        || c::LLVMGetTypeKind(c::LLVMTypeOf(base)) != K::LLVMVectorTypeKind
        || c::LLVMIsAConstantInt(idx).is_null()
    {
        return (p, 0);
    }
    (base, c::LLVMConstIntGetSExtValue(idx))
}

/// Whether the lane pointers `x` move with a phi of loop `lp`'s header: the phi itself, or
/// integer and address arithmetic on it whose other operands the loop does not change (a
/// pointer the loop steps, or `A + 4 (i cols + j)` from a counter `j`), not pointers
/// computed from loaded indices (`x[col[k]]`, whose lanes jump: a refill per load).
unsafe fn walks(cfg: &Cfg, x: LLVMValueRef, lp: usize) -> bool {
    let inside = |v: LLVMValueRef| {
        ir::is_instruction(v)
            && cfg
                .index
                .get(&c::LLVMGetInstructionParent(v))
                .is_some_and(|&b| cfg.loops[lp].blocks[b])
    };
    let mut v = x;
    for _ in 0..WALK_DEPTH {
        if !inside(v) {
            return false;
        }
        if !c::LLVMIsAPHINode(v).is_null() {
            return cfg.index.get(&c::LLVMGetInstructionParent(v)) == Some(&cfg.loops[lp].header);
        }
        if !matches!(
            ir::opcode(v),
            O::LLVMAdd
                | O::LLVMSub
                | O::LLVMShl
                | O::LLVMMul
                | O::LLVMSExt
                | O::LLVMZExt
                | O::LLVMIntToPtr
                | O::LLVMPtrToInt
                | O::LLVMGetElementPtr
                | O::LLVMBitCast
        ) {
            return false;
        }
        let moving: Vec<LLVMValueRef> =
            ir::operands(v).into_iter().filter(|&o| inside(o)).collect();
        let [o] = moving[..] else { return false };
        v = o;
    }
    false
}

/// How far `walks` follows the arithmetic from the lane pointers to the phi.
const WALK_DEPTH: usize = 8;

/// Whether `v` is available at the first non-phi instruction of block `bi`, or the
/// arithmetic that made it can be built again there from values that are (the lane pointers
/// of a gather `lanes.rs` built in the gather's own block: `getelementptr i8, ptr u, w`).
unsafe fn buildable(cfg: &Cfg, v: LLVMValueRef, bi: usize, depth: usize) -> bool {
    available(cfg, v, bi)
        || depth > 0
            && rebuilt(v)
            && ir::operands(v)
                .into_iter()
                .all(|o| buildable(cfg, o, bi, depth - 1))
}

/// The instructions `buildable` copies.
unsafe fn rebuilt(v: LLVMValueRef) -> bool {
    ir::is_instruction(v)
        && matches!(
            ir::opcode(v),
            O::LLVMGetElementPtr
                | O::LLVMIntToPtr
                | O::LLVMPtrToInt
                | O::LLVMAdd
                | O::LLVMShl
                | O::LLVMSExt
                | O::LLVMZExt
                | O::LLVMShuffleVector
                | O::LLVMInsertElement
        )
}

/// `v` at the builder's position (a `buildable` value): itself, or a copy of its arithmetic.
unsafe fn build_at(cfg: &Cfg, b: LLVMBuilderRef, v: LLVMValueRef, bi: usize) -> LLVMValueRef {
    if available(cfg, v, bi) {
        return v;
    }
    let ops: Vec<LLVMValueRef> = ir::operands(v)
        .into_iter()
        .map(|o| build_at(cfg, b, o, bi))
        .collect();
    let copy = c::LLVMInstructionClone(v);
    for (k, o) in ops.into_iter().enumerate() {
        c::LLVMSetOperand(copy, k as u32, o);
    }
    c::LLVMInsertIntoBuilder(b, copy);
    copy
}

/// How deep `buildable` copies arithmetic.
const BUILD_DEPTH: usize = 4;

/// Whether `v` is available at the first non-phi instruction of block `bi`.
unsafe fn available(cfg: &Cfg, v: LLVMValueRef, bi: usize) -> bool {
    if !ir::is_instruction(v) {
        return true;
    }
    let Some(&bv) = cfg.index.get(&c::LLVMGetInstructionParent(v)) else {
        return false;
    };
    if bv == bi {
        return !c::LLVMIsAPHINode(v).is_null();
    }
    cfg.dominates(bv, bi)
}

/// Whether no instruction of loop `lp` writes memory or has another effect a window could
/// miss (stores, atomics, fences, calls but read-only intrinsics).
unsafe fn loop_writeless(cfg: &Cfg, lp: usize) -> bool {
    for (b, &inside) in cfg.loops[lp].blocks.iter().enumerate() {
        if !inside {
            continue;
        }
        for i in ir::instructions(cfg.blocks[b]) {
            match ir::opcode(i) {
                O::LLVMStore | O::LLVMAtomicRMW | O::LLVMAtomicCmpXchg | O::LLVMFence => {
                    return false
                }
                O::LLVMCall if !read_only_intrinsic(&ir::callee(i)) => return false,
                O::LLVMInvoke | O::LLVMCallBr => return false,
                _ => {}
            }
        }
    }
    true
}

fn read_only_intrinsic(name: &str) -> bool {
    name.starts_with("llvm.")
        && ![
            "store", "scatter", "memset", "memcpy", "memmove", "stack", "trap",
        ]
        .iter()
        .any(|w| name.contains(w))
}

/// Rewrites the loads `sites` of `f` (whose control flow is `cfg`) to calls of `helper`, one
/// window per loop and lane-pointer vector.
unsafe fn rewrite(f: LLVMValueRef, cfg: &Cfg, helper: LLVMValueRef, sites: Vec<Site>) {
    let cx = c::LLVMGetTypeContext(c::LLVMTypeOf(f));
    let b = c::LLVMCreateBuilderInContext(cx);
    let n = c"".as_ptr();
    let i8t = c::LLVMInt8TypeInContext(cx);
    let i32t = c::LLVMInt32TypeInContext(cx);
    let i64t = c::LLVMInt64TypeInContext(cx);
    let entry = c::LLVMGetEntryBasicBlock(f);
    // Memory for windows, shared by the loops: the `k`th window of one loop and of another
    // never hold bytes at once (the loops are innermost, so one runs between an entry, which
    // empties the window, and the loads that read it). One per window took the naive matmul's
    // frame from 2 to 23 KiB, and its loop without windows ran 3% slower.
    let mut slots: Vec<(LLVMValueRef, LLVMValueRef)> = Vec::new();
    let mut windows: HashMap<(LLVMValueRef, usize), usize> = HashMap::new();
    let mut per_loop: HashMap<usize, usize> = HashMap::new();
    // The windows in the order met (one module, one text).
    let mut order: Vec<(usize, usize)> = Vec::new();
    for s in &sites {
        if windows.contains_key(&(s.x, s.lp)) {
            continue;
        }
        let k = per_loop.entry(s.lp).or_insert(0);
        windows.insert((s.x, s.lp), *k);
        order.push((s.lp, *k));
        *k += 1;
        if *k > slots.len() {
            // The window's memory at the function's entry with an empty window's state.
            c::LLVMPositionBuilderBefore(b, c::LLVMGetFirstInstruction(entry));
            let alloca = |bytes: u64| {
                let a = c::LLVMBuildAlloca(b, c::LLVMArrayType2(i8t, bytes), n);
                c::LLVMSetAlignment(a, 64);
                a
            };
            let (st, buf) = (alloca(STATE), alloca(BUF));
            // Only the length and the strikes: the rest is read under a test of the length
            // (`select`s, so that the undefined bytes before the first refill decide nothing).
            for at in [NV, STRIKES] {
                c::LLVMBuildStore(b, c::LLVMConstInt(i32t, 0, 0), field(b, i8t, st, at));
            }
            slots.push((st, buf));
        }
    }
    // Each window emptied on every edge into its loop.
    for &(lp, k) in &order {
        let header = cfg.loops[lp].header;
        for (p, succ) in cfg.succ.iter().enumerate() {
            if succ.contains(&header) && !cfg.loops[lp].blocks[p] {
                let t = c::LLVMGetBasicBlockTerminator(cfg.blocks[p]);
                c::LLVMPositionBuilderBefore(b, t);
                let nv = field(b, i8t, slots[k].0, NV);
                c::LLVMBuildStore(b, c::LLVMConstInt(i32t, 0, 0), nv);
            }
        }
    }
    for s in sites {
        let (st, buf) = slots[windows[&(s.x, s.lp)]];
        let bb = c::LLVMGetInstructionParent(s.phi);
        let mut at = c::LLVMGetFirstInstruction(bb);
        while !c::LLVMIsAPHINode(at).is_null() {
            at = c::LLVMGetNextInstruction(at);
        }
        c::LLVMPositionBuilderBefore(b, at);
        let bi = cfg.index[&bb];
        let x = build_at(cfg, b, s.x, bi);
        let p = if s.off == 0 {
            x
        } else {
            let mut idx = [c::LLVMConstInt(i64t, s.off as u64, 1)];
            c::LLVMBuildGEP2(b, i8t, x, idx.as_mut_ptr(), 1, n)
        };
        let ft = c::LLVMGlobalGetValueType(helper);
        let mut args = [st, buf, p, s.mask];
        let r = c::LLVMBuildCall2(b, ft, helper, args.as_mut_ptr(), 4, n);
        let t = c::LLVMTypeOf(s.phi);
        let v = if c::LLVMTypeOf(r) == t {
            r
        } else {
            c::LLVMBuildBitCast(b, r, t, n)
        };
        c::LLVMReplaceAllUsesWith(s.phi, v);
    }
    c::LLVMDisposeBuilder(b);
}

/// `base + at` as a pointer to `i8`.
unsafe fn field(b: LLVMBuilderRef, i8t: LLVMTypeRef, base: LLVMValueRef, at: u64) -> LLVMValueRef {
    let cx = c::LLVMGetTypeContext(i8t);
    let mut idx = [c::LLVMConstInt(c::LLVMInt64TypeInContext(cx), at, 0)];
    c::LLVMBuildGEP2(b, i8t, base, idx.as_mut_ptr(), 1, c"".as_ptr())
}

/// `<32 x i32> ptx2llvm.rowwin(ptr state, ptr window, <32 x ptr> p, <32 x i1> m)`, inlined
/// at every load: the load at lane pointers `p` of the lanes `m` from the window when it holds
/// them, else `ptx2llvm.rowwin.refill`'s (out of line: one copy of the refill for the module,
/// where one per load took a thread-per-row kernel's compile from 0.18 to 0.78 s).
unsafe fn build_helper(m: LLVMModuleRef, like: LLVMValueRef) -> LLVMValueRef {
    let t = Types::new(m);
    let refill = build_refill(m, &t, like);
    let names = [
        c"rowwin.test",
        c"rowwin.read",
        c"rowwin.other",
        c"rowwin.join",
    ];
    let (f, b, [st, buf, p, mask], [_, read, other, exit]) =
        t.begin(m, HELPER, c"alwaysinline", like, names);
    let n = c"".as_ptr();

    // Every running lane `d` bytes past its `W`, `d` the same, the element inside the
    // window, and no lane running that did not at the refill.
    let (pi, bits) = t.lanes(b, p, mask);
    let w = t.load(b, st, t.v64, 0);
    let nv = c::LLVMBuildZExt(b, t.load(b, st, t.i32, NV), t.i64, n);
    let refm = t.load(b, st, t.i32, REF);
    let first = t.load(b, st, t.i32, FIRST);
    let d = c::LLVMBuildSub(b, pi, w, n);
    let d0 = c::LLVMBuildExtractElement(b, d, first, n);
    let same = c::LLVMBuildICmp(b, P::LLVMIntEQ, d, t.splat(b, d0, LANES), n);
    let same = c::LLVMBuildBitCast(b, same, t.i32, n);
    let others = c::LLVMBuildNot(b, bits, n);
    let lanes_ok = c::LLVMBuildICmp(
        b,
        P::LLVMIntEQ,
        c::LLVMBuildOr(b, same, others, n),
        c::LLVMConstAllOnes(t.i32),
        n,
    );
    let new_lanes = c::LLVMBuildAnd(b, bits, c::LLVMBuildNot(b, refm, n), n);
    let ran = c::LLVMBuildICmp(b, P::LLVMIntEQ, new_lanes, t.k32(0), n);
    let inside = c::LLVMBuildICmp(b, P::LLVMIntULT, d0, t.k64(u64::from(ROW) * 4), n);
    let end = c::LLVMBuildAdd(b, d0, t.k64(4), n);
    let fits = c::LLVMBuildICmp(b, P::LLVMIntULE, end, nv, n);
    let whole = c::LLVMBuildICmp(
        b,
        P::LLVMIntEQ,
        c::LLVMBuildAnd(b, d0, t.k64(3), n),
        t.k64(0),
        n,
    );
    let mut ok = lanes_ok;
    for x in [ran, inside, fits, whole] {
        ok = c::LLVMBuildAnd(b, ok, x, n);
    }
    // An empty window (length 0) decides alone: its other fields are undefined then.
    let live = c::LLVMBuildICmp(b, P::LLVMIntNE, nv, t.k64(0), n);
    let ok = c::LLVMBuildSelect(b, live, ok, c::LLVMConstInt(t.i1, 0, 0), n);
    c::LLVMBuildCondBr(b, ok, read, other);

    // Vector `d / 4` of the window.
    c::LLVMPositionBuilderAtEnd(b, read);
    let val = t.read(b, buf, d0);
    c::LLVMBuildBr(b, exit);

    c::LLVMPositionBuilderAtEnd(b, other);
    let mut args = [st, buf, p, mask];
    let ft = c::LLVMGlobalGetValueType(refill);
    let r = c::LLVMBuildCall2(b, ft, refill, args.as_mut_ptr(), 4, n);
    c::LLVMBuildBr(b, exit);

    c::LLVMPositionBuilderAtEnd(b, exit);
    let v = ir::phi(b, t.v32, n, &[(val, read), (r, other)]);
    c::LLVMBuildRet(b, v);
    c::LLVMDisposeBuilder(b);
    f
}

/// `<32 x i32> ptx2llvm.rowwin.refill(ptr state, ptr window, <32 x ptr> p, <32 x i1> m)`:
/// the window from `p`, as long as every running lane's page allows, and the load from it;
/// the gather when the window cannot hold even the first element.
unsafe fn build_refill(m: LLVMModuleRef, t: &Types, like: LLVMValueRef) -> LLVMValueRef {
    let names = [
        c"rowwin.strikes",
        c"rowwin.refill",
        c"rowwin.rows",
        c"rowwin.gather",
    ];
    let (f, b, [st, buf, p, mask], [_, entry, rows, slow]) =
        t.begin(m, REFILL, c"noinline", like, names);
    let n = c"".as_ptr();

    // Strikes: a refill whose lanes moved by nothing or by more than the window since the
    // last one (lane `FIRST`) served that window once; after `OUT` in a row the loads gather
    // (a loop that jumps through its rows: a refill per load would cost 32 row loads and a
    // transpose each). A first window of the loop (length 0) is no strike.
    let (pi, bits) = t.lanes(b, p, mask);
    let strikes = t.load(b, st, t.i32, STRIKES);
    let old_nv = t.load(b, st, t.i32, NV);
    let old_first = t.load(b, st, t.i32, FIRST);
    let old_w = t.load(b, st, t.v64, 0);
    let adv = c::LLVMBuildSub(
        b,
        c::LLVMBuildExtractElement(b, pi, old_first, n),
        c::LLVMBuildExtractElement(b, old_w, old_first, n),
        n,
    );
    let fresh = c::LLVMBuildICmp(b, P::LLVMIntEQ, old_nv, t.k32(0), n);
    let forward = c::LLVMBuildAnd(
        b,
        c::LLVMBuildICmp(b, P::LLVMIntSGT, adv, t.k64(0), n),
        c::LLVMBuildICmp(b, P::LLVMIntSLE, adv, t.k64(u64::from(ROW) * 4), n),
        n,
    );
    let good = c::LLVMBuildSelect(b, fresh, c::LLVMConstInt(t.i1, 1, 0), forward, n);
    let next = c::LLVMBuildSelect(
        b,
        good,
        t.k32(0),
        c::LLVMBuildAdd(b, strikes, t.k32(1), n),
        n,
    );
    c::LLVMBuildStore(b, next, field(b, t.i8, st, STRIKES));
    let out = c::LLVMBuildICmp(b, P::LLVMIntUGE, next, t.k32(OUT), n);
    c::LLVMBuildCondBr(b, out, slow, entry);

    c::LLVMPositionBuilderAtEnd(b, entry);
    let splat64 = |v: u64| t.splat(b, t.k64(v), LANES);
    let in_page = c::LLVMBuildAnd(b, pi, splat64(PAGE - 1), n);
    let left = c::LLVMBuildSub(b, splat64(PAGE), in_page, n);
    let umin = ir::intrinsic(m, "llvm.umin", &mut [t.v64]);
    let left = ir::call(b, umin, &mut [left, splat64(u64::from(ROW) * 4)]);
    let left = c::LLVMBuildTrunc(b, left, t.v32, n);
    let left = c::LLVMBuildSelect(
        b,
        mask,
        left,
        t.splat(b, t.k32(u64::from(ROW) * 4), LANES),
        n,
    );
    let reduce = ir::intrinsic(m, "llvm.vector.reduce.umin", &mut [t.v32]);
    let nv2 = ir::call(b, reduce, &mut [left]);
    let cttz = ir::intrinsic(m, "llvm.cttz", &mut [t.i32]);
    let lead = ir::call(b, cttz, &mut [bits, c::LLVMConstInt(t.i1, 0, 0)]);
    let lead = c::LLVMBuildAnd(b, lead, t.k32(u64::from(LANES) - 1), n);
    let s = c::LLVMBuildStore(b, pi, field(b, t.i8, st, 0));
    c::LLVMSetAlignment(s, 64);
    c::LLVMBuildStore(b, nv2, field(b, t.i8, st, NV));
    c::LLVMBuildStore(b, bits, field(b, t.i8, st, REF));
    c::LLVMBuildStore(b, lead, field(b, t.i8, st, FIRST));
    let can = c::LLVMBuildICmp(b, P::LLVMIntUGE, nv2, t.k32(4), n);
    c::LLVMBuildCondBr(b, can, rows, slow);

    // Element `e` of each running lane's row where the window holds it, transposed.
    c::LLVMPositionBuilderAtEnd(b, rows);
    let mut ends: Vec<LLVMValueRef> = (1..=u64::from(ROW)).map(|e| t.k32(4 * e)).collect();
    let ends = c::LLVMConstVector(ends.as_mut_ptr(), ROW);
    let held = c::LLVMBuildICmp(b, P::LLVMIntULE, ends, t.splat(b, nv2, ROW), n);
    let none = c::LLVMConstNull(c::LLVMVectorType(t.i1, ROW));
    let mload = ir::intrinsic(m, "llvm.masked.load", &mut [t.row, t.ptr]);
    let prefetch = ir::intrinsic(m, "llvm.prefetch", &mut [t.ptr]);
    let mut lines: Vec<LLVMValueRef> = (0..u64::from(LANES))
        .map(|l| {
            let pl = c::LLVMBuildExtractElement(b, p, t.k32(l), n);
            let on = c::LLVMBuildExtractElement(b, mask, t.k32(l), n);
            let ml = c::LLVMBuildSelect(b, on, held, none, n);
            let mut idx = [t.k64(AHEAD)];
            let q = c::LLVMBuildGEP2(b, t.i8, pl, idx.as_mut_ptr(), 1, n);
            ir::call(b, prefetch, &mut [q, t.k32(0), t.k32(2), t.k32(1)]);
            ir::call(b, mload, &mut [pl, ml, c::LLVMGetPoison(t.row)])
        })
        .collect();
    for half in lines.chunks_mut(ROW as usize) {
        transpose(b, half);
    }
    for e in 0..ROW as usize {
        for (h, half) in lines.chunks(ROW as usize).enumerate() {
            let at = (e as u64) * u64::from(LANES) * 4 + (h as u64) * u64::from(ROW) * 4;
            let s = c::LLVMBuildStore(b, half[e], field(b, t.i8, buf, at));
            c::LLVMSetAlignment(s, 64);
        }
    }
    let val = t.read(b, buf, t.k64(0));
    c::LLVMBuildRet(b, val);

    c::LLVMPositionBuilderAtEnd(b, slow);
    let gather = ir::intrinsic(m, "llvm.masked.gather", &mut [t.v32, t.vp]);
    let g = ir::call(b, gather, &mut [p, mask, c::LLVMGetPoison(t.v32)]);
    c::LLVMBuildRet(b, g);
    c::LLVMDisposeBuilder(b);
    f
}

/// The code generator's string attributes `copy_target` copies (not the engine's own marks,
/// such as the shared-memory argument's).
const TARGET_ATTRS: [&str; 5] = [
    "target-cpu",
    "target-features",
    "tune-cpu",
    "min-legal-vector-width",
    "prefer-vector-width",
];

/// Gives `to` the target attributes of `from` (CPU and features, vector widths) and
/// its `null_pointer_is_valid`: the code generator passes vector arguments by the widths
/// those attributes allow, so caller and callee must agree (without them the refill read its
/// `<32 x ptr>` argument as garbage).
unsafe fn copy_target(from: LLVMValueRef, to: LLVMValueRef) {
    let fi = llvm_sys::LLVMAttributeFunctionIndex;
    let count = c::LLVMGetAttributeCountAtIndex(from, fi);
    let mut attrs: Vec<LLVMAttributeRef> = vec![std::ptr::null_mut(); count as usize];
    c::LLVMGetAttributesAtIndex(from, fi, attrs.as_mut_ptr());
    let null_ok = ir::attr_kind(c"null_pointer_is_valid");
    for a in attrs {
        let keep = if c::LLVMIsStringAttribute(a) != 0 {
            let mut len = 0;
            let k = c::LLVMGetStringAttributeKind(a, &mut len);
            let key = std::slice::from_raw_parts(k as *const u8, len as usize);
            TARGET_ATTRS.iter().any(|t| t.as_bytes() == key)
        } else {
            c::LLVMIsEnumAttribute(a) != 0 && c::LLVMGetEnumAttributeKind(a) == null_ok
        };
        if keep {
            c::LLVMAddAttributeAtIndex(to, fi, a);
        }
    }
}

/// The types and constants the helpers are built from.
struct Types {
    cx: LLVMContextRef,
    i1: LLVMTypeRef,
    i8: LLVMTypeRef,
    i32: LLVMTypeRef,
    i64: LLVMTypeRef,
    ptr: LLVMTypeRef,
    v32: LLVMTypeRef,
    v64: LLVMTypeRef,
    vp: LLVMTypeRef,
    row: LLVMTypeRef,
}

impl Types {
    unsafe fn new(m: LLVMModuleRef) -> Types {
        let cx = c::LLVMGetModuleContext(m);
        let i32 = c::LLVMInt32TypeInContext(cx);
        let i64 = c::LLVMInt64TypeInContext(cx);
        let ptr = c::LLVMPointerTypeInContext(cx, 0);
        Types {
            cx,
            i1: c::LLVMInt1TypeInContext(cx),
            i8: c::LLVMInt8TypeInContext(cx),
            i32,
            i64,
            ptr,
            v32: c::LLVMVectorType(i32, LANES),
            v64: c::LLVMVectorType(i64, LANES),
            vp: c::LLVMVectorType(ptr, LANES),
            row: c::LLVMVectorType(i32, ROW),
        }
    }

    unsafe fn k32(&self, v: u64) -> LLVMValueRef {
        c::LLVMConstInt(self.i32, v, 0)
    }

    unsafe fn k64(&self, v: u64) -> LLVMValueRef {
        c::LLVMConstInt(self.i64, v, 0)
    }

    /// `v` in each of `lanes` lanes.
    unsafe fn splat(&self, b: LLVMBuilderRef, v: LLVMValueRef, lanes: u32) -> LLVMValueRef {
        let vt = c::LLVMVectorType(c::LLVMTypeOf(v), lanes);
        let one = c::LLVMBuildInsertElement(b, c::LLVMGetPoison(vt), v, self.k32(0), c"".as_ptr());
        let mut z = vec![self.k32(0); lanes as usize];
        let z = c::LLVMConstVector(z.as_mut_ptr(), lanes);
        c::LLVMBuildShuffleVector(b, one, c::LLVMGetPoison(vt), z, c"".as_ptr())
    }

    /// An internal function `name` of the helpers' type with attribute `attr` and the target
    /// attributes of `like` (`copy_target`), its parameters, blocks `names` and a builder at
    /// the end of the first.
    unsafe fn begin<const N: usize>(
        &self,
        m: LLVMModuleRef,
        name: &str,
        attr: &std::ffi::CStr,
        like: LLVMValueRef,
        names: [&std::ffi::CStr; N],
    ) -> (
        LLVMValueRef,
        LLVMBuilderRef,
        [LLVMValueRef; 4],
        [LLVMBasicBlockRef; N],
    ) {
        let mut params = [
            self.ptr,
            self.ptr,
            self.vp,
            c::LLVMVectorType(self.i1, LANES),
        ];
        let ft = c::LLVMFunctionType(self.v32, params.as_mut_ptr(), 4, 0);
        let name = std::ffi::CString::new(name).unwrap_or_default();
        let f = c::LLVMAddFunction(m, name.as_ptr(), ft);
        c::LLVMSetLinkage(f, llvm_sys::LLVMLinkage::LLVMInternalLinkage);
        let fi = llvm_sys::LLVMAttributeFunctionIndex;
        for a in [attr, c"nounwind"] {
            let k = c::LLVMCreateEnumAttribute(self.cx, ir::attr_kind(a), 0);
            c::LLVMAddAttributeAtIndex(f, fi, k);
        }
        copy_target(like, f);
        let blocks = names.map(|s| c::LLVMAppendBasicBlockInContext(self.cx, f, s.as_ptr()));
        let b = c::LLVMCreateBuilderInContext(self.cx);
        if let Some(&first) = blocks.first() {
            c::LLVMPositionBuilderAtEnd(b, first);
        }
        let p = [0, 1, 2, 3].map(|k| c::LLVMGetParam(f, k));
        (f, b, p, blocks)
    }

    /// The lane pointers `p` as integers and the lane mask `mask` as bits.
    unsafe fn lanes(
        &self,
        b: LLVMBuilderRef,
        p: LLVMValueRef,
        mask: LLVMValueRef,
    ) -> (LLVMValueRef, LLVMValueRef) {
        let n = c"".as_ptr();
        (
            c::LLVMBuildPtrToInt(b, p, self.v64, n),
            c::LLVMBuildBitCast(b, mask, self.i32, n),
        )
    }

    /// The state's field of type `ty` at byte `at`.
    unsafe fn load(
        &self,
        b: LLVMBuilderRef,
        st: LLVMValueRef,
        ty: LLVMTypeRef,
        at: u64,
    ) -> LLVMValueRef {
        let v = c::LLVMBuildLoad2(b, ty, field(b, self.i8, st, at), c"".as_ptr());
        c::LLVMSetAlignment(v, if at == 0 { 64 } else { 4 });
        v
    }

    /// Vector `d / 4` of window `buf` (`d`: a byte offset, i64).
    unsafe fn read(&self, b: LLVMBuilderRef, buf: LLVMValueRef, d: LLVMValueRef) -> LLVMValueRef {
        let n = c"".as_ptr();
        let at = c::LLVMBuildMul(
            b,
            c::LLVMBuildLShr(b, d, self.k64(2), n),
            self.k64(u64::from(LANES) * 4),
            n,
        );
        let mut idx = [at];
        let p = c::LLVMBuildGEP2(b, self.i8, buf, idx.as_mut_ptr(), 1, n);
        let v = c::LLVMBuildLoad2(b, self.v32, p, n);
        c::LLVMSetAlignment(v, 64);
        v
    }
}

/// Transposes the 16 rows of 16 lanes `r` in place: stage `h` exchanges bit `h` of the row
/// and the column index (rows `i` and `i + h` swap their off-diagonal `h`-blocks), and the
/// four stages together exchange all four bits.
unsafe fn transpose(b: LLVMBuilderRef, r: &mut [LLVMValueRef]) {
    let cx = c::LLVMGetTypeContext(c::LLVMTypeOf(r[0]));
    let i32t = c::LLVMInt32TypeInContext(cx);
    let w = ROW as usize;
    for h in [1usize, 2, 4, 8] {
        let lo: Vec<u64> = (0..w)
            .map(|c| if c & h == 0 { c } else { w + c - h } as u64)
            .collect();
        let hi: Vec<u64> = (0..w)
            .map(|c| if c & h == 0 { c + h } else { w + c } as u64)
            .collect();
        let mask = |v: &[u64]| {
            let mut k: Vec<LLVMValueRef> = v.iter().map(|&x| c::LLVMConstInt(i32t, x, 0)).collect();
            c::LLVMConstVector(k.as_mut_ptr(), ROW)
        };
        let (ml, mh) = (mask(&lo), mask(&hi));
        for i in 0..w {
            if i & h != 0 {
                continue;
            }
            let (a, bb) = (r[i], r[i + h]);
            r[i] = c::LLVMBuildShuffleVector(b, a, bb, ml, c"".as_ptr());
            r[i + h] = c::LLVMBuildShuffleVector(b, a, bb, mh, c"".as_ptr());
        }
    }
}
