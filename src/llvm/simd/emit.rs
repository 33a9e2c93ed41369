//! Building the warp function `K.simd.w(ctx, warp, nthreads, params…)` from a cleaned kernel
//! function: every varying value a vector of 32 lanes, uniform values scalars, and control
//! flow linearized under an execution mask.
//!
//! Linearization. The blocks run in a topological order of each region (the function body,
//! each loop body; `Cfg::order`), every block guarded by "some lane is here". Each block has a
//! *pending mask* slot that its predecessors OR their edge masks into; visiting the block takes
//! and clears it. A phi has a slot too, which each incoming edge blends its value into for the
//! lanes taking it (a select on the edge mask; uniform phis on "any lane takes it"). A loop
//! runs its body again while its header's pending mask has lanes; lanes leaving it accumulate
//! in the pending masks of the exit blocks, and values leaving it (exit phis) are blended at
//! the moment they leave. Values used in another block than their own go through a slot as
//! well; SROA turns all of it back into SSA form. The pending mask of the return block is the
//! set of lanes that have exited, which the warp operations' member-mask checks need.

use std::collections::HashMap;

use llvm_sys::core as c;
use llvm_sys::debuginfo::LLVMInstructionGetDebugLoc;
use llvm_sys::prelude::*;
use llvm_sys::LLVMOpcode as O;
use llvm_sys::{LLVMIntPredicate, LLVMTypeKind};

use super::cfg::{Cfg, Node};
use super::ir::{self, CtxField};
use super::uniform::Facts;

pub const LANES: u32 = 32;

/// The most instructions of a block run without its guard (`Warp::unguarded`): a block that
/// no lane takes costs its instructions instead of a branch.
const UNGUARDED_MAX: usize = 8;

pub struct Warp<'a> {
    pub cx: LLVMContextRef,
    pub m: LLVMModuleRef,
    pub b: LLVMBuilderRef,
    pub td: llvm_sys::target::LLVMTargetDataRef,
    pub cfg: &'a Cfg,
    pub facts: &'a Facts,
    pub dst: LLVMValueRef,
    /// Values of the current block's instructions and the arguments.
    pub map: HashMap<LLVMValueRef, LLVMValueRef>,
    slots: HashMap<LLVMValueRef, LLVMValueRef>,
    /// The pending masks by block: allocas, except the return block's in the region scheme
    /// (its frame keeps the lanes that have exited across barriers).
    pub(super) pending: Vec<LLVMValueRef>,
    pub pred_slots: HashMap<LLVMValueRef, LLVMValueRef>,
    pub(super) cur: usize,
    pub mask: LLVMValueRef,
    /// By block: the mask at its conditional branch when that branch is uniform (a scalar
    /// condition), for the blocks it leads to (`Warp::inherited_mask`).
    uniform_masks: Vec<Option<LLVMValueRef>>,
    /// Blocks that run with all lanes or none, past a branch on `interior::EVERY`
    /// (`Warp::whole_region`): they run with the constant mask of all lanes, so that LLVM
    /// folds the masks of the copy `interior.rs` makes.
    whole_blocks: std::collections::HashSet<usize>,
    /// Whether the current block runs without its guard (`Warp::unguarded`): its mask may
    /// be empty.
    pub(super) unguarded: bool,
    /// The open end of the previous block's path with no lane (`Warp::threads_past`), for
    /// the next block to send past its own guard.
    threaded: Option<LLVMBasicBlockRef>,
    /// The previous block's uniform branch when that block threads (`threaded`): its block,
    /// its scalar condition, and its successors on true and false (`Warp::side_hint`).
    threaded_branch: Option<ThreadedBranch>,
    /// By block: a flag that its one predecessor's deferred edge (`Warp::defer_edge`) was
    /// written since the block's last visit, which its guard tests with its pending mask.
    taken: HashMap<usize, LLVMValueRef>,
    /// The window loads' block tests by source pointer (`lanes::load_window`): the frozen
    /// offsets and whether all lie in lane 0's 256-byte block, built where they dominate the
    /// rest of the block's visit and, past a threaded guard (`Warp::threads_past`), the next
    /// block's; dropped where the new values of instructions are.
    pub(super) window_tests: HashMap<LLVMValueRef, (LLVMValueRef, LLVMValueRef)>,
    /// The `.shared` stores' pair-pattern answers (`lanes::PairStore`) by the stored offsets'
    /// key (`lanes::offset_key`), valid in the store's join block alone: a store at those
    /// offsets plus a uniform step that follows in that block reads them instead of testing
    /// its own offsets. Dropped with `window_tests`.
    pub(super) pair_stores: HashMap<LLVMValueRef, super::lanes::PairStore>,
    /// The operands inline `mma`s built (`matrix::Operand`), by the block they were built in.
    pub(super) mma_operands: HashMap<(LLVMBasicBlockRef, super::matrix::Operand), LLVMValueRef>,
    /// The block whose `mma_operands` an `mma`'s k loop exit block (`matrix::Roll`) shares:
    /// the block the loop was entered from (or the one that block shares), which dominates it.
    pub(super) mma_roots: HashMap<LLVMBasicBlockRef, LLVMBasicBlockRef>,
    /// `mma` calls already computed with an earlier one of their block, whose A fragment
    /// they share (`matrix::Warp::mma_partner`): their own visit only passes.
    pub(super) mma_fused: std::collections::HashSet<LLVMValueRef>,
    /// The shared varying terms `w` of stores at `u + w` (`lanes::varying_term`) and an `i8`
    /// slot each for their lanes' consecutive test (`lanes::TestState`), tested where the
    /// function is entered and where `w` is defined: the stores read one answer.
    pub(super) term_tests: HashMap<LLVMValueRef, LLVMValueRef>,
    /// The stored values' size by varying term (0: stores of two sizes share it).
    pub(super) term_sizes: HashMap<LLVMValueRef, u64>,
    /// An `i1` slot per entry-tested loop-header phi (`stride::Strides::entry_tested`):
    /// whether its lanes stepped by its stride where its loop was last entered (`edge`).
    pub(super) entry_flags: HashMap<LLVMValueRef, LLVMValueRef>,
    pub(super) allocas: LLVMBuilderRef,
    pub ctx: LLVMValueRef,
    pub launched: LLVMValueRef,
    pub iota: LLVMValueRef,
    pub tid: [LLVMValueRef; 3],
    pub flat: LLVMValueRef,
    /// Scalars the preamble builds that are multiples of 32 (aligned warps' first `%tid.x`,
    /// a `urem` by a `%ntid.x` that is one): lane tables read their low bits (`lanetab`).
    pub(super) aligned_bases: Vec<LLVMValueRef>,
    pub ret_block: Option<usize>,
    /// The coroutine of a kernel with CTA barriers (`barrier.rs`).
    pub coro: Option<super::barrier::Coro>,
    /// The static-region scheme of a kernel with CTA barriers (`barrier.rs`): the warp
    /// function runs from one barrier to the next per call.
    pub regions: Option<super::barrier::Regions>,
    pub i1: LLVMTypeRef,
    pub i32: LLVMTypeRef,
    pub i64: LLVMTypeRef,
    pub ptr: LLVMTypeRef,
}

/// A uniform branch of a block that threads past the next block's guard (`Warp::threads_past`),
/// for that guard (`Warp::side_hint`).
#[derive(Clone, Copy)]
struct ThreadedBranch {
    /// The branch's block.
    x: usize,
    /// Its scalar condition.
    c: LLVMValueRef,
    /// The mask it branched with.
    m: LLVMValueRef,
    /// Its successors on true and false.
    t: usize,
    f: usize,
    /// The edge to the other successor than the next block, not yet written: that block and
    /// the edge's mask (`Warp::defer_edge`).
    deferred: Option<(usize, LLVMValueRef)>,
}

/// How a block's mask follows from a uniform branch before it (`Warp::inherited_mask`).
#[derive(Clone, Copy)]
enum Inherited {
    /// One side of the branch: the branch's mask when the block runs.
    Side(LLVMValueRef),
    /// The join: the branch's mask, always.
    Join(LLVMValueRef),
}

unsafe fn cs(s: &str) -> std::ffi::CString {
    std::ffi::CString::new(s).unwrap_or_default()
}

/// The most instructions of a loop body that gets a full-warp copy (`full_copy`): the copy
/// builds the body a second time.
const FULL_COPY_MAX: usize = 64;

/// Whether divergent loop `l` gets a full-warp copy (`Warp::full_warp_loop`): a loop of one
/// block (no inner branch or loop) that ends in a varying conditional branch to itself or
/// out, of at most `FULL_COPY_MAX` instructions. A grid-stride or block loop
/// `for (i = tid; i < n; i += stride)` carried the mask through every iteration (pending
/// masks, blended phis and exit values, a test per access for a plain load), about 55
/// instructions per iteration of the grid-stride reduction for one 128-byte load.
pub unsafe fn full_copy(cfg: &Cfg, facts: &Facts, l: usize) -> bool {
    if !facts.divergent_loops[l] || cfg.loops[l].blocks.iter().filter(|&&b| b).count() != 1 {
        return false;
    }
    let bb = cfg.blocks[cfg.loops[l].header];
    let t = c::LLVMGetBasicBlockTerminator(bb);
    if t.is_null() || ir::opcode(t) != O::LLVMBr || c::LLVMIsConditional(t) == 0 {
        return false;
    }
    let back = [0, 1].map(|k| c::LLVMGetSuccessor(t, k) == bb);
    back[0] != back[1]
        && facts.is_varying(c::LLVMGetCondition(t))
        && ir::instructions(bb).len() <= FULL_COPY_MAX
}

/// Whether vector type `t` is a varying value's (32 lanes of one or more elements), not a
/// uniform PTX vector (at most 8 elements).
unsafe fn wide(t: LLVMTypeRef) -> bool {
    c::LLVMGetTypeKind(t) == LLVMTypeKind::LLVMVectorTypeKind && c::LLVMGetVectorSize(t) >= LANES
}

/// What `Warp::build` finds out about the warp function it built, for its CTA function: the
/// region scheme's slot bytes and alignment, whether it exchanges `bar.red` contributions, its
/// barriers, its skip guards' key, whether its warps meet the barriers in order
/// (`barrier::in_order`), the ordered rounds that branch on the warp
/// (`barrier::warp_dependent_rounds`), and whether every warp meets the same barriers
/// (`barrier::alike`).
pub type Built = (
    u32,
    u32,
    bool,
    u32,
    Option<super::barrier::SkipKey>,
    bool,
    u64,
    bool,
);

impl<'a> Warp<'a> {
    /// Builds the warp function for `src` into `dst` (declared with the parameters
    /// `ctx, warp, nthreads` and then `src`'s).
    ///
    /// Returns the slot size and alignment of a region-scheme warp function, whether it
    /// exchanges `bar.red` contributions, its number of barriers (else zeros) and its skip
    /// guards' key (`Regions::skip_key`).
    ///
    /// # Safety
    /// `src` must be the function `cfg` and `facts` describe, accepted by `check`.
    pub unsafe fn build(
        src: LLVMValueRef,
        dst: LLVMValueRef,
        cfg: &'a Cfg,
        facts: &'a Facts,
    ) -> Result<Built, String> {
        let m = c::LLVMGetGlobalParent(src);
        let cx = c::LLVMGetModuleContext(m);
        let td = llvm_sys::target::LLVMGetModuleDataLayout(m);
        let b = c::LLVMCreateBuilderInContext(cx);
        let allocas = c::LLVMCreateBuilderInContext(cx);
        let i32 = c::LLVMInt32TypeInContext(cx);
        let top = c::LLVMAppendBasicBlockInContext(cx, dst, c"allocas".as_ptr());
        let start = c::LLVMAppendBasicBlockInContext(cx, dst, c"start".as_ptr());
        c::LLVMPositionBuilderAtEnd(allocas, top);
        c::LLVMPositionBuilderAtEnd(b, start);
        let mut w = Warp {
            cx,
            m,
            b,
            td,
            cfg,
            facts,
            dst,
            map: HashMap::new(),
            slots: HashMap::new(),
            pending: Vec::new(),
            pred_slots: HashMap::new(),
            cur: 0,
            mask: std::ptr::null_mut(),
            uniform_masks: vec![None; cfg.blocks.len()],
            whole_blocks: std::collections::HashSet::new(),
            unguarded: false,
            threaded: None,
            threaded_branch: None,
            taken: HashMap::new(),
            window_tests: HashMap::new(),
            pair_stores: HashMap::new(),
            mma_operands: HashMap::new(),
            mma_roots: HashMap::new(),
            mma_fused: std::collections::HashSet::new(),
            term_tests: HashMap::new(),
            term_sizes: HashMap::new(),
            entry_flags: HashMap::new(),
            allocas,
            ctx: c::LLVMGetParam(dst, 0),
            launched: std::ptr::null_mut(),
            iota: std::ptr::null_mut(),
            tid: [std::ptr::null_mut(); 3],
            flat: std::ptr::null_mut(),
            aligned_bases: Vec::new(),
            ret_block: (0..cfg.blocks.len()).find(|&x| cfg.succ[x].is_empty()),
            coro: None,
            regions: None,
            i1: c::LLVMInt1TypeInContext(cx),
            i32,
            i64: c::LLVMInt64TypeInContext(cx),
            ptr: c::LLVMPointerTypeInContext(cx, 0),
        };
        for k in 0..c::LLVMCountParams(src) {
            w.map
                .insert(c::LLVMGetParam(src, k), c::LLVMGetParam(dst, k + 4));
        }
        match c::LLVMGetTypeKind(c::LLVMGetReturnType(c::LLVMGlobalGetValueType(dst))) {
            LLVMTypeKind::LLVMPointerTypeKind => w.coro_begin(),
            LLVMTypeKind::LLVMIntegerTypeKind => w.regions_begin(src),
            _ => {}
        }
        w.term_test_slots();
        w.entry_flag_slots();
        w.preamble();
        // The region scheme enters at its state: the start, or after a barrier.
        w.dispatch();
        let mt = w.mask_ty();
        for x in 0..cfg.blocks.len() {
            let s = if w.regions.is_some() && Some(x) == w.ret_block {
                w.frame_slot(mt)
            } else {
                w.alloca(mt)
            };
            c::LLVMBuildStore(w.b, c::LLVMConstNull(mt), s);
            w.pending.push(s);
        }
        let r = w.region(None);
        if r.is_ok() {
            w.finish();
            c::LLVMBuildBr(allocas, start);
        }
        c::LLVMDisposeBuilder(b);
        c::LLVMDisposeBuilder(allocas);
        r.map(|()| {
            w.regions
                .as_ref()
                .map_or((0, 0, false, 0, None, false, 0, false), |r| {
                    (
                        r.size,
                        r.align,
                        r.red,
                        r.resumes,
                        r.skip_key(),
                        r.in_order,
                        r.peel,
                        r.alike,
                    )
                })
        })
    }

    pub unsafe fn mask_ty(&self) -> LLVMTypeRef {
        c::LLVMVectorType(self.i1, LANES)
    }

    /// The vector form of scalar type `t` (structs: a struct of vectors).
    pub unsafe fn vty(&self, t: LLVMTypeRef) -> LLVMTypeRef {
        if c::LLVMGetTypeKind(t) == LLVMTypeKind::LLVMStructTypeKind {
            let n = c::LLVMCountStructElementTypes(t);
            let mut f: Vec<LLVMTypeRef> = (0..n)
                .map(|k| self.vty(c::LLVMStructGetTypeAtIndex(t, k)))
                .collect();
            return c::LLVMStructTypeInContext(self.cx, f.as_mut_ptr(), n, 0);
        }
        if c::LLVMGetTypeKind(t) == LLVMTypeKind::LLVMVectorTypeKind {
            return c::LLVMVectorType(c::LLVMGetElementType(t), LANES * c::LLVMGetVectorSize(t));
        }
        c::LLVMVectorType(t, LANES)
    }

    pub unsafe fn alloca(&self, t: LLVMTypeRef) -> LLVMValueRef {
        c::LLVMBuildAlloca(self.allocas, t, c"".as_ptr())
    }

    pub unsafe fn c32(&self, v: u64) -> LLVMValueRef {
        c::LLVMConstInt(self.i32, v, 0)
    }

    /// `v` in every lane.
    pub unsafe fn splat(&self, v: LLVMValueRef) -> LLVMValueRef {
        let t = c::LLVMTypeOf(v);
        if c::LLVMGetTypeKind(t) == LLVMTypeKind::LLVMStructTypeKind {
            let vt = self.vty(t);
            let mut agg = c::LLVMGetPoison(vt);
            for k in 0..c::LLVMCountStructElementTypes(t) {
                let e = c::LLVMBuildExtractValue(self.b, v, k, c"".as_ptr());
                agg = c::LLVMBuildInsertValue(self.b, agg, self.splat(e), k, c"".as_ptr());
            }
            return agg;
        }
        if c::LLVMGetTypeKind(t) == LLVMTypeKind::LLVMVectorTypeKind {
            let k = c::LLVMGetVectorSize(t);
            let idx: Vec<u32> = (0..LANES).flat_map(|_| 0..k).collect();
            return self.shuffle(v, None, &idx);
        }
        if !c::LLVMIsAConstant(v).is_null() {
            let mut e = vec![v; LANES as usize];
            return c::LLVMConstVector(e.as_mut_ptr(), LANES);
        }
        let vt = c::LLVMVectorType(t, LANES);
        let one =
            c::LLVMBuildInsertElement(self.b, c::LLVMGetPoison(vt), v, self.c32(0), c"".as_ptr());
        let zero = c::LLVMConstNull(c::LLVMVectorType(self.i32, LANES));
        c::LLVMBuildShuffleVector(self.b, one, c::LLVMGetPoison(vt), zero, c"".as_ptr())
    }

    /// Whether a new value is a vector (of a varying value).
    pub unsafe fn is_vec(&self, v: LLVMValueRef) -> bool {
        let t = c::LLVMTypeOf(v);
        match c::LLVMGetTypeKind(t) {
            LLVMTypeKind::LLVMVectorTypeKind => wide(t),
            LLVMTypeKind::LLVMStructTypeKind => {
                c::LLVMCountStructElementTypes(t) > 0 && wide(c::LLVMStructGetTypeAtIndex(t, 0))
            }
            _ => false,
        }
    }

    /// Elements per lane of original type `t` (`k` for a PTX vector `<k x E>`, else 1).
    pub unsafe fn per(&self, t: LLVMTypeRef) -> u32 {
        if c::LLVMGetTypeKind(t) == LLVMTypeKind::LLVMVectorTypeKind {
            c::LLVMGetVectorSize(t)
        } else {
            1
        }
    }

    /// Elements per lane of new varying value `v`.
    pub unsafe fn per_new(&self, v: LLVMValueRef) -> u32 {
        let t = c::LLVMTypeOf(v);
        if c::LLVMGetTypeKind(t) == LLVMTypeKind::LLVMVectorTypeKind {
            (c::LLVMGetVectorSize(t) / LANES).max(1)
        } else {
            1
        }
    }

    /// A constant shuffle of `a` (and `b`) by `idx`.
    pub unsafe fn shuffle(
        &self,
        a: LLVMValueRef,
        b: Option<LLVMValueRef>,
        idx: &[u32],
    ) -> LLVMValueRef {
        let mut ks: Vec<LLVMValueRef> = idx.iter().map(|&i| self.c32(i as u64)).collect();
        let m = c::LLVMConstVector(ks.as_mut_ptr(), ks.len() as u32);
        let b = b.unwrap_or_else(|| c::LLVMGetPoison(c::LLVMTypeOf(a)));
        c::LLVMBuildShuffleVector(self.b, a, b, m, c"".as_ptr())
    }

    /// A per-lane value (`<32 x T>`) repeated for the `k` elements of each lane.
    pub unsafe fn widen(&self, m: LLVMValueRef, k: u32) -> LLVMValueRef {
        if k <= 1 {
            return m;
        }
        let idx: Vec<u32> = (0..LANES)
            .flat_map(|l| std::iter::repeat_n(l, k as usize))
            .collect();
        self.shuffle(m, None, &idx)
    }

    /// The new value of original value `v`: a scalar for uniform values, a vector for varying
    /// ones; `vector` splats a uniform one.
    pub unsafe fn get(&mut self, v: LLVMValueRef, vector: bool) -> LLVMValueRef {
        let nv = if ir::is_instruction(v) {
            let bb = c::LLVMGetInstructionParent(v);
            let own = self.cfg.index.get(&bb) == Some(&self.cur) && self.map.contains_key(&v);
            // Built again at this use (region scheme; LLVM merges the copies), not kept.
            let again = if !own && self.remat(v) && self.inst(v).is_ok() {
                self.map.remove(&v)
            } else {
                None
            };
            if own {
                self.map[&v]
            } else if let Some(x) = again {
                x
            } else {
                let s = self.slot(v);
                let x = c::LLVMBuildLoad2(self.b, self.slot_type(s), s, c"".as_ptr());
                if self.narrow_slot(v) {
                    let v64 = c::LLVMVectorType(self.i64, LANES);
                    let x = c::LLVMBuildZExt(self.b, x, v64, c"".as_ptr());
                    c::LLVMBuildIntToPtr(self.b, x, self.vty(c::LLVMTypeOf(v)), c"".as_ptr())
                } else {
                    x
                }
            }
        } else if let Some(&x) = self.map.get(&v) {
            x
        } else if crate::llvm::cpu::has_shared_cast(v) {
            // A constant generic address of a `.shared` variable (`cvta.shared.u64 %rd, s`,
            // folded by the lowering's builder): the block's base plus the offset, built here,
            // since `prepare_module` sees it only as an element of a splatted constant vector.
            let b = self.b;
            crate::llvm::cpu::expand_shared_const(b, v, &mut |_| self.shared_base())
        } else {
            v
        };
        if vector && !self.is_vec(nv) {
            self.splat(nv)
        } else {
            nv
        }
    }

    /// The new value of `v` as a scalar operand of a uniform instruction: lane 0 of a varying
    /// one (a uniform instruction reads a varying value only where the lane drops out,
    /// `%tid.x >> 5` of aligned warps).
    pub unsafe fn scalar(&mut self, v: LLVMValueRef) -> LLVMValueRef {
        let nv = self.get(v, false);
        if self.is_vec(nv) && c::LLVMIsABasicBlock(v).is_null() {
            c::LLVMBuildExtractElement(self.b, nv, self.c32(0), c"".as_ptr())
        } else {
            nv
        }
    }

    /// The slot of original instruction `v` (its type vectorized when varying): in the
    /// region scheme's frame when `v` lives across a barrier.
    pub(super) unsafe fn slot(&mut self, v: LLVMValueRef) -> LLVMValueRef {
        if let Some(&s) = self.slots.get(&v) {
            return s;
        }
        let t = c::LLVMTypeOf(v);
        let t = if self.narrow_slot(v) {
            c::LLVMVectorType(self.i32, LANES)
        } else if self.facts.is_varying(v) {
            self.vty(t)
        } else {
            t
        };
        let s = if let Some(p) = self.coalesced_with(v) {
            self.slot(p)
        } else if self.in_frame(v) {
            self.frame_slot(t)
        } else {
            self.alloca(t)
        };
        self.slots.insert(v, s);
        s
    }

    /// Whether varying instruction `v` is a `.shared` pointer made from a 32-bit offset
    /// (`inttoptr (zext i32)`, the lowering's `.shared` addresses), whose slot then holds the
    /// 32-bit offsets: the accesses take 32-bit offsets (`lanes::offsets`), and a slot of
    /// 64-bit pointers cost a widening where it is stored and a narrowing at each access
    /// (16 instructions a bitonic stage) and twice the registers in loops.
    pub(super) unsafe fn narrow_slot(&self, v: LLVMValueRef) -> bool {
        if !ir::is_instruction(v)
            || c::LLVMGetInstructionOpcode(v) != O::LLVMIntToPtr
            || !self.facts.is_varying(v)
        {
            return false;
        }
        let t = c::LLVMTypeOf(v);
        if c::LLVMGetTypeKind(t) != LLVMTypeKind::LLVMPointerTypeKind
            || c::LLVMGetPointerAddressSpace(t) != super::lanes::SHARED_AS
        {
            return false;
        }
        let x = c::LLVMGetOperand(v, 0);
        let narrow = |t: LLVMTypeRef| {
            c::LLVMGetTypeKind(t) == LLVMTypeKind::LLVMIntegerTypeKind
                && c::LLVMGetIntTypeWidth(t) <= 32
        };
        narrow(c::LLVMTypeOf(x))
            || (ir::is_instruction(x)
                && c::LLVMGetInstructionOpcode(x) == O::LLVMZExt
                && narrow(c::LLVMTypeOf(c::LLVMGetOperand(x, 0))))
    }

    /// Records the new value of instruction `i`, storing it in its slot when another block
    /// (or a phi) uses it.
    pub unsafe fn set(&mut self, i: LLVMValueRef, nv: LLVMValueRef) {
        self.map.insert(i, nv);
        if let Some(&s) = self.term_tests.get(&i) {
            self.test_term(nv, i, s);
        }
        let bb = c::LLVMGetInstructionParent(i);
        let mut u = c::LLVMGetFirstUse(i);
        let mut outside = false;
        while !u.is_null() {
            let user = c::LLVMGetUser(u);
            if !c::LLVMIsAPHINode(user).is_null() || c::LLVMGetInstructionParent(user) != bb {
                outside = true;
            }
            u = c::LLVMGetNextUse(u);
        }
        if outside || self.in_frame(i) {
            let s = self.slot(i);
            let nv = if self.facts.is_varying(i) && !self.is_vec(nv) {
                self.splat(nv)
            } else {
                nv
            };
            let nv = if self.narrow_slot(i) {
                let v32 = c::LLVMVectorType(self.i32, LANES);
                c::LLVMBuildPtrToInt(self.b, nv, v32, c"".as_ptr())
            } else {
                nv
            };
            c::LLVMBuildStore(self.b, nv, s);
        }
    }

    /// `m` as 32 bits.
    pub unsafe fn bits(&self, m: LLVMValueRef) -> LLVMValueRef {
        c::LLVMBuildBitCast(self.b, m, self.i32, c"".as_ptr())
    }

    pub unsafe fn any(&self, m: LLVMValueRef) -> LLVMValueRef {
        c::LLVMBuildICmp(
            self.b,
            LLVMIntPredicate::LLVMIntNE,
            self.bits(m),
            self.c32(0),
            c"".as_ptr(),
        )
    }

    /// The lanes that have not exited: launched and not yet at the return block.
    pub unsafe fn live(&self) -> LLVMValueRef {
        let mt = self.mask_ty();
        let gone = match self.ret_block {
            Some(r) => c::LLVMBuildLoad2(self.b, mt, self.pending[r], c"".as_ptr()),
            None => c::LLVMConstNull(mt),
        };
        let not = c::LLVMBuildNot(self.b, gone, c"".as_ptr());
        c::LLVMBuildAnd(self.b, self.launched, not, c"".as_ptr())
    }

    pub unsafe fn append(&self, name: &str) -> LLVMBasicBlockRef {
        let n = cs(name);
        c::LLVMAppendBasicBlockInContext(self.cx, self.dst, n.as_ptr())
    }

    /// Lane ids: the lanes that exist, `%tid` (one-dimensional blocks without divisions).
    unsafe fn preamble(&mut self) {
        let b = self.b;
        let warp = c::LLVMGetParam(self.dst, 1);
        let n = c::LLVMGetParam(self.dst, 2);
        let mut lanes: Vec<LLVMValueRef> = (0..LANES as u64).map(|k| self.c32(k)).collect();
        self.iota = c::LLVMConstVector(lanes.as_mut_ptr(), LANES);
        let base = c::LLVMBuildMul(b, warp, self.c32(LANES as u64), c"".as_ptr());
        let flat = c::LLVMBuildAdd(b, self.splat(base), self.iota, c"flat".as_ptr());
        self.flat = flat;
        let exists = c::LLVMBuildICmp(
            b,
            LLVMIntPredicate::LLVMIntULT,
            flat,
            self.splat(n),
            c"".as_ptr(),
        );
        // The CTA function calls warps below `ceil(n / 32)` only (`driver.rs`), so with a
        // whole number of warps every lane exists: said as a select on `n`, which folds for a
        // known block, the launched lanes of a full warp are a constant (a region's mask after
        // a barrier is them: `region_end`).
        let whole = c::LLVMBuildICmp(
            b,
            LLVMIntPredicate::LLVMIntEQ,
            c::LLVMBuildAnd(b, n, self.c32(LANES as u64 - 1), c"".as_ptr()),
            self.c32(0),
            c"".as_ptr(),
        );
        let exists = c::LLVMBuildSelect(
            b,
            whole,
            c::LLVMConstAllOnes(c::LLVMTypeOf(exists)),
            exists,
            c"".as_ptr(),
        );
        let lanes = c::LLVMGetParam(self.dst, 3);
        let chosen = c::LLVMBuildBitCast(b, lanes, self.mask_ty(), c"".as_ptr());
        self.launched = c::LLVMBuildAnd(b, exists, chosen, c"launched".as_ptr());
        let field = |w: &Self, off: u64| {
            let mut idx = [c::LLVMConstInt(w.i64, off, 0)];
            let p = c::LLVMBuildGEP2(
                b,
                c::LLVMInt8TypeInContext(w.cx),
                w.ctx,
                idx.as_mut_ptr(),
                1,
                c"".as_ptr(),
            );
            (p, c::LLVMBuildLoad2(b, w.i32, p, c"".as_ptr()))
        };
        let (_, nx) = field(self, crate::runtime::abi::offset::NTID as u64);
        let (_, ny) = field(self, crate::runtime::abi::offset::NTID as u64 + 4);
        // The first lane run names the warp in fault reports. A region-scheme warp is only
        // called by the CTA function, which stores the same thread first (`driver.rs`
        // `set_ids`); its store alone lets paired warps share loads (`driver::ids_unread`).
        let (fp, unread) = field(self, crate::runtime::abi::offset::FLAT_TID as u64);
        c::LLVMInstructionEraseFromParent(unread);
        let mut tys = [self.i32];
        let mut xs = [lanes, c::LLVMConstInt(self.i1, 0, 0)];
        let id = c::LLVMGetIntrinsicDeclaration(
            self.m,
            c::LLVMLookupIntrinsicID(c"llvm.cttz".as_ptr(), 9),
            tys.as_mut_ptr(),
            1,
        );
        let first = c::LLVMBuildCall2(
            b,
            c::LLVMGlobalGetValueType(id),
            id,
            xs.as_mut_ptr(),
            2,
            c"".as_ptr(),
        );
        let first = c::LLVMBuildAdd(b, base, first, c"".as_ptr());
        if self.regions.is_none() {
            c::LLVMBuildStore(b, first, fp);
        }
        if let Some(seg) = self.facts.segment {
            // Row segments of a known block: lane `l` is `%tid.x = l % S` of row
            // `flat / S`, and the rows' `%tid.y`/`%tid.z` come from constant divisions (the
            // warp function runs this at every barrier of every warp).
            let konst = |v: u32| self.splat(self.c32(u64::from(v)));
            let tx = c::LLVMBuildAnd(b, self.iota, konst(seg.width - 1), c"".as_ptr());
            let row = c::LLVMBuildLShr(b, flat, konst(seg.width.trailing_zeros()), c"".as_ptr());
            let [_, y, _] = seg.block;
            let ty = c::LLVMBuildURem(b, row, konst(y), c"".as_ptr());
            let tz = c::LLVMBuildUDiv(b, row, konst(y), c"".as_ptr());
            self.tid = [tx, ty, tz];
            return;
        }
        if self.facts.aligned {
            // Aligned warps start at a multiple of 32 in a row of a multiple of 32 threads:
            // `%tid.x` is the first lane's plus the lane number, with no wrap, and
            // `%tid.y`/`%tid.z` are uniform (the CTA function stores them in the context).
            // A one-dimensional block's first `%tid.x` is the warp's base, without the
            // division (the region scheme runs this at every barrier of every warp).
            let one_d = c::LLVMBuildICmp(b, LLVMIntPredicate::LLVMIntEQ, n, nx, c"".as_ptr());
            let here = c::LLVMGetInsertBlock(b);
            let rem = self.append("x0.rem");
            let join = self.append("x0");
            c::LLVMBuildCondBr(b, one_d, join, rem);
            c::LLVMPositionBuilderAtEnd(b, rem);
            let x0r = c::LLVMBuildURem(b, base, nx, c"".as_ptr());
            c::LLVMBuildBr(b, join);
            c::LLVMPositionBuilderAtEnd(b, join);
            let x0 = ir::phi(b, self.i32, c"".as_ptr(), &[(base, here), (x0r, rem)]);
            self.aligned_bases.push(x0);
            let tx = c::LLVMBuildAdd(b, self.splat(x0), self.iota, c"".as_ptr());
            let (_, ty) = field(self, crate::runtime::abi::offset::TID as u64 + 4);
            let (_, tz) = field(self, crate::runtime::abi::offset::TID as u64 + 8);
            self.tid = [tx, self.splat(ty), self.splat(tz)];
            return;
        }
        let one_d = c::LLVMBuildICmp(b, LLVMIntPredicate::LLVMIntEQ, n, nx, c"".as_ptr());
        let here = c::LLVMGetInsertBlock(b);
        let gen = self.append("tid.general");
        let wide = self.append("tid.wide");
        let narrow = self.append("tid.narrow");
        let join = self.append("tid");
        c::LLVMBuildCondBr(b, one_d, join, gen);
        // Blocks of two or three dimensions. Dividing the 32 lanes' flat indices by `%ntid.x`
        // lane by lane costs 64 scalar divisions per warp call (x86 has no vector division),
        // which made a 2-D stencil 6x slower than its thread loops. When `%ntid.x >= 32` the
        // lanes' `%tid.x` wrap around at most once, so the first lane's coordinates (two
        // scalar divisions each way) plus the lane number, corrected by one wrap, give them.
        c::LLVMPositionBuilderAtEnd(b, gen);
        let ge32 = c::LLVMBuildICmp(
            b,
            LLVMIntPredicate::LLVMIntUGE,
            nx,
            self.c32(LANES as u64),
            c"".as_ptr(),
        );
        let vx = self.splat(nx);
        let vy = self.splat(ny);
        c::LLVMBuildCondBr(b, ge32, wide, narrow);
        c::LLVMPositionBuilderAtEnd(b, wide);
        let x0 = c::LLVMBuildURem(b, base, nx, c"".as_ptr());
        let q0 = c::LLVMBuildUDiv(b, base, nx, c"".as_ptr());
        let y0 = c::LLVMBuildURem(b, q0, ny, c"".as_ptr());
        let z0 = c::LLVMBuildUDiv(b, q0, ny, c"".as_ptr());
        let zero_v = c::LLVMConstNull(c::LLVMVectorType(self.i32, LANES));
        let x = c::LLVMBuildAdd(b, self.splat(x0), self.iota, c"".as_ptr());
        let wrap_x = c::LLVMBuildICmp(b, LLVMIntPredicate::LLVMIntUGE, x, vx, c"".as_ptr());
        let wx = c::LLVMBuildSelect(b, wrap_x, vx, zero_v, c"".as_ptr());
        let wtx = c::LLVMBuildSub(b, x, wx, c"".as_ptr());
        let ext = |v| c::LLVMBuildZExt(b, v, c::LLVMVectorType(self.i32, LANES), c"".as_ptr());
        let y = c::LLVMBuildAdd(b, self.splat(y0), ext(wrap_x), c"".as_ptr());
        let wrap_y = c::LLVMBuildICmp(b, LLVMIntPredicate::LLVMIntUGE, y, vy, c"".as_ptr());
        let wty = c::LLVMBuildSelect(b, wrap_y, zero_v, y, c"".as_ptr());
        let wtz = c::LLVMBuildAdd(b, self.splat(z0), ext(wrap_y), c"".as_ptr());
        c::LLVMBuildBr(b, join);
        // `%ntid.x < 32`: several wraps per warp; lane-wise division (rare shapes).
        c::LLVMPositionBuilderAtEnd(b, narrow);
        let tx = c::LLVMBuildURem(b, flat, vx, c"".as_ptr());
        let q = c::LLVMBuildUDiv(b, flat, vx, c"".as_ptr());
        let ty = c::LLVMBuildURem(b, q, vy, c"".as_ptr());
        let tz = c::LLVMBuildUDiv(b, q, vy, c"".as_ptr());
        c::LLVMBuildBr(b, join);
        c::LLVMPositionBuilderAtEnd(b, join);
        let vt = c::LLVMVectorType(self.i32, LANES);
        let zero = c::LLVMConstNull(vt);
        let mut out = [std::ptr::null_mut(); 3];
        for (k, vals) in [[flat, wtx, tx], [zero, wty, ty], [zero, wtz, tz]]
            .into_iter()
            .enumerate()
        {
            let p = c::LLVMBuildPhi(b, vt, c"".as_ptr());
            let mut vals = vals;
            let mut bbs = [here, wide, narrow];
            c::LLVMAddIncoming(p, vals.as_mut_ptr(), bbs.as_mut_ptr(), 3);
            out[k] = p;
        }
        self.tid = out;
    }

    /// Emits the nodes of region `r` in order.
    unsafe fn region(&mut self, r: Option<usize>) -> Result<(), String> {
        let order = self.cfg.order(r);
        // Closed regions a warp skips with one test (`skip_regions`), by the first node of
        // each, when their nodes come in one run of the order: the last node and the block
        // after the run.
        let mut skips: HashMap<usize, usize> = HashMap::new();
        if r.is_none() && self.regions.is_none() && self.coro.is_none() {
            let blocks_of = |node: &Node| match *node {
                Node::Block(y) => vec![y],
                Node::Loop(l) => (0..self.cfg.blocks.len())
                    .filter(|&y| self.cfg.loops[l].blocks[y])
                    .collect(),
            };
            for (head, set) in self.skip_regions() {
                let Some(k) = order.iter().position(|&n| n == Node::Block(head)) else {
                    continue;
                };
                let mut covered = 0;
                let mut last = k;
                for (j, node) in order.iter().enumerate().skip(k) {
                    let bs = blocks_of(node);
                    if !bs.iter().all(|y| set.contains(y)) {
                        break;
                    }
                    covered += bs.len();
                    last = j;
                }
                if covered == set.len() {
                    skips.insert(k, last);
                }
            }
        }
        let ends: std::collections::HashSet<usize> = skips.values().copied().collect();
        let mut skip_to: Vec<(usize, LLVMBasicBlockRef)> = Vec::new();
        for (k, &node) in order.iter().enumerate() {
            if let (Some(&last), Node::Block(head)) = (skips.get(&k), node) {
                let mt = self.mask_ty();
                let m = c::LLVMBuildLoad2(self.b, mt, self.pending[head], c"".as_ptr());
                let run = self.append(&format!("b{head}.region"));
                let past = self.append(&format!("b{head}.region.past"));
                c::LLVMBuildCondBr(self.b, self.any(m), run, past);
                c::LLVMPositionBuilderAtEnd(self.b, run);
                skip_to.push((last, past));
            }
            match node {
                Node::Block(x) => {
                    let thread = match order.get(k + 1) {
                        Some(&Node::Block(y))
                            if self.threads_past(x, y)
                                && !skips.contains_key(&(k + 1))
                                && !ends.contains(&k) =>
                        {
                            Some(y)
                        }
                        _ => None,
                    };
                    self.block(x, thread)?
                }
                Node::Loop(l) => {
                    let top = self.append("loop");
                    let after = self.append("loop.end");
                    let h = self.cfg.loops[l].header;
                    // An unguarded header (`unguarded`) runs its masked accesses even when no
                    // lane is in the loop, at pointers no lane computed: the header phis of a
                    // loop no lane entered hold whatever their slots held (undefined), and a
                    // masked load with an empty mask at an unmapped address is a fault
                    // suppressed by a microcode assist on AMD Zen. NVRTC's remainder loops,
                    // which a warp with a row length that is a multiple of 128 never enters,
                    // took a quarter of layernorm_warp's samples there. Such a loop is
                    // entered only with some lane, from outside and from its full-warp copy.
                    // A divergent loop's guarded header gets the same test: a warp that no
                    // lane brings to the loop goes straight to its exit, not through the
                    // header's visit (its guard, the phis' moves, the latch's test), and LLVM
                    // then sinks the entry's address arithmetic into the entered path (NVRTC's
                    // remainder loop before an unrolled block-stride loop, which a row of a
                    // multiple of four strides never enters: softmax_block has three per
                    // warp). Not a uniform loop's (bitonic's stage loops, whose headers
                    // always have lanes, ran about x1.05 slower in two suite runs).
                    let entry = if self.unguarded(h) || self.facts.divergent_loops[l] {
                        self.append("loop.any")
                    } else {
                        top
                    };
                    if full_copy(self.cfg, self.facts, l) && !self.skip_guard_in(l) {
                        self.full_warp_loop(l, entry, top, after)?;
                    } else {
                        c::LLVMBuildBr(self.b, entry);
                    }
                    let mt = self.mask_ty();
                    if entry != top {
                        c::LLVMPositionBuilderAtEnd(self.b, entry);
                        let m = c::LLVMBuildLoad2(self.b, mt, self.pending[h], c"".as_ptr());
                        c::LLVMBuildCondBr(self.b, self.any(m), top, after);
                    }
                    c::LLVMPositionBuilderAtEnd(self.b, top);
                    self.region(Some(l))?;
                    let again = c::LLVMBuildLoad2(self.b, mt, self.pending[h], c"".as_ptr());
                    let any = self.any(again);
                    c::LLVMBuildCondBr(self.b, any, top, after);
                    c::LLVMPositionBuilderAtEnd(self.b, after);
                }
            }
            while let Some(&(last, past)) = skip_to.last() {
                if last != k {
                    break;
                }
                skip_to.pop();
                c::LLVMBuildBr(self.b, past);
                c::LLVMPositionBuilderAtEnd(self.b, past);
            }
        }
        Ok(())
    }

    /// Whether the branch of loop `l`'s header is a skip guard of the region scheme (its
    /// visit publishes the idle lanes, which the full-warp copy does not do).
    unsafe fn skip_guard_in(&self, l: usize) -> bool {
        let h = self.cfg.loops[l].header;
        let t = c::LLVMGetBasicBlockTerminator(self.cfg.blocks[h]);
        self.regions
            .as_ref()
            .is_some_and(|r| r.skips.as_ref().is_some_and(|s| s.guards.contains_key(&t)))
    }

    /// The full-warp copy of one-block divergent loop `l` (`full_copy`), built before its
    /// general loop `top`: when all 32 lanes enter, the body runs with a constant mask of
    /// every lane (plain vector loads and stores, no guard, no pending masks, phis copied
    /// without blends) as long as every lane takes the back edge; the iteration some lane
    /// leaves in hands the lanes to the general loop through the ordinary edges, and that
    /// loop runs the rest. Each lane runs the same iterations in the same order, and every
    /// lane that runs an iteration of the copy runs it with the whole warp, as the general
    /// loop would (no lane has left yet), so warp operations see the same lanes. A warp that
    /// enters with fewer lanes goes to `entry` (`top`, or its test for a lane) at once. When
    /// the iteration that ends the copy leaves no lane in the loop (every lane left together:
    /// a block-stride loop over a row whose length is a multiple of the block's), the warp
    /// goes straight to `after`, the loop's exit, as the general loop would with its header's
    /// pending mask empty (its blocks' guards all skip, and `loop.any` tests the same mask):
    /// not through the general loop's header visit and its latch test (softmax_block: six
    /// such loops per warp, each run once).
    unsafe fn full_warp_loop(
        &mut self,
        l: usize,
        entry: LLVMBasicBlockRef,
        top: LLVMBasicBlockRef,
        after: LLVMBasicBlockRef,
    ) -> Result<(), String> {
        let h = self.cfg.loops[l].header;
        let bb = self.cfg.blocks[h];
        let mt = self.mask_ty();
        let all = c::LLVMConstAllOnes(self.i32);
        let m0 = c::LLVMBuildLoad2(self.b, mt, self.pending[h], c"".as_ptr());
        let full = c::LLVMBuildICmp(
            self.b,
            LLVMIntPredicate::LLVMIntEQ,
            self.bits(m0),
            all,
            c"".as_ptr(),
        );
        let enter = self.append("loop.full.enter");
        let body = self.append("loop.full");
        let back = self.append("loop.full.back");
        let leave = self.append("loop.full.leave");
        c::LLVMBuildCondBr(self.b, full, enter, entry);
        c::LLVMPositionBuilderAtEnd(self.b, enter);
        // The copy's visits take the header's pending lanes, as `block` does.
        c::LLVMBuildStore(self.b, c::LLVMConstNull(mt), self.pending[h]);
        c::LLVMBuildBr(self.b, body);
        c::LLVMPositionBuilderAtEnd(self.b, body);
        self.cur = h;
        self.map.retain(|k, _| !ir::is_instruction(*k));
        self.window_tests.clear();
        self.pair_stores.clear();
        self.unguarded = false;
        self.mask = c::LLVMConstAllOnes(mt);
        for i in ir::instructions(bb) {
            c::LLVMSetCurrentDebugLocation2(self.b, LLVMInstructionGetDebugLoc(i));
            match ir::opcode(i) {
                O::LLVMPHI => self.phi_from_slot(i),
                O::LLVMBr => {
                    let cv = self.get(c::LLVMGetCondition(i), true);
                    let t = c::LLVMGetSuccessor(i, 0);
                    let stay = if t == bb {
                        cv
                    } else {
                        c::LLVMBuildNot(self.b, cv, c"".as_ptr())
                    };
                    let go = c::LLVMBuildNot(self.b, stay, c"".as_ptr());
                    let exit = if t == bb {
                        c::LLVMGetSuccessor(i, 1)
                    } else {
                        t
                    };
                    let again = c::LLVMBuildICmp(
                        self.b,
                        LLVMIntPredicate::LLVMIntEQ,
                        self.bits(stay),
                        all,
                        c"".as_ptr(),
                    );
                    c::LLVMBuildCondBr(self.b, again, back, leave);
                    // Every lane stays: the header's phis take the latch values (read all
                    // before writing any, as `edge` does).
                    c::LLVMPositionBuilderAtEnd(self.b, back);
                    let mut incoming = Vec::new();
                    for p in ir::instructions(bb) {
                        if c::LLVMIsAPHINode(p).is_null() {
                            break;
                        }
                        let Some(k) = (0..c::LLVMCountIncoming(p))
                            .find(|&k| c::LLVMGetIncomingBlock(p, k) == bb)
                        else {
                            continue;
                        };
                        let vary = self.facts.is_varying(p);
                        incoming.push((p, self.get(c::LLVMGetIncomingValue(p, k), vary)));
                    }
                    for (p, v) in incoming {
                        let s = self.slot(p);
                        c::LLVMBuildStore(self.b, v, s);
                    }
                    c::LLVMBuildBr(self.b, body);
                    // Some lane leaves: this iteration's edges as the general loop takes
                    // them, then the general loop runs the lanes that stay.
                    c::LLVMPositionBuilderAtEnd(self.b, leave);
                    self.edge(h, h, stay, None);
                    self.edge(h, self.cfg.index[&exit], go, None);
                    let m = c::LLVMBuildLoad2(self.b, mt, self.pending[h], c"".as_ptr());
                    c::LLVMBuildCondBr(self.b, self.any(m), top, after);
                }
                _ => self.inst(i)?,
            }
        }
        Ok(())
    }

    /// Whether the path on which block `x` has no lane may go past the guard of block `y`,
    /// the next in the order: `y`'s only predecessor is `x` and both have guards. Then
    /// `y`'s pending mask is empty there: only `x`'s edge sets it, and `y`'s guard, which
    /// comes right after `x`'s visit (the visits are in line, and a barrier inside `x`
    /// resumes inside `x`), takes it before `x`'s guard is tested again; the function's
    /// entry and each resumption zero it. `x`'s visit then dominates `y`'s, so LLVM sees
    /// that `y` reads the values `x` wrote: the shared offsets a bitonic stage loads at and
    /// stores to reach the store as the load's own value, not as a phi with an older one,
    /// and the store reuses the load's tests.
    unsafe fn threads_past(&self, x: usize, y: usize) -> bool {
        let mut preds = (0..self.cfg.succ.len()).filter(|&p| self.cfg.succ[p].contains(&y));
        preds.next() == Some(x)
            && preds.next().is_none()
            && x != y
            && y != 0
            && Some(y) != self.ret_block
            && (x == 0 || !self.unguarded(x))
            && !self.unguarded(y)
            && !self.may_lend_mask(y)
    }

    /// Whether block `y` ends in a uniform conditional branch whose mask later blocks may
    /// inherit (`inherited_mask`, kernels without CTA barriers): that mask is `y`'s value, so
    /// no path may skip `y`'s visit (a threaded guard) and still reach its join.
    unsafe fn may_lend_mask(&self, y: usize) -> bool {
        if self.regions.is_some() || self.coro.is_some() {
            return false;
        }
        let t = c::LLVMGetBasicBlockTerminator(self.cfg.blocks[y]);
        !t.is_null()
            && ir::opcode(t) == O::LLVMBr
            && c::LLVMIsConditional(t) != 0
            && !self.facts.divergent.contains(&y)
    }

    /// One block under its guard; `thread`: the next block, when this block's path with no
    /// lane goes past its guard (`threads_past`).
    unsafe fn block(&mut self, x: usize, thread: Option<usize>) -> Result<(), String> {
        self.cur = x;
        self.map.retain(|k, _| !ir::is_instruction(*k));
        if self.threaded.is_none() {
            self.window_tests.clear();
            self.pair_stores.clear();
        }
        let mt = self.mask_ty();
        let m = if x == 0 {
            self.launched
        } else {
            let m = c::LLVMBuildLoad2(self.b, mt, self.pending[x], c"".as_ptr());
            c::LLVMBuildStore(self.b, c::LLVMConstNull(mt), self.pending[x]);
            m
        };
        let taken = self.taken.get(&x).map(|&s| {
            let v = c::LLVMBuildLoad2(self.b, self.i1, s, c"".as_ptr());
            c::LLVMBuildStore(self.b, c::LLVMConstInt(self.i1, 0, 0), s);
            v
        });
        let inherited = self.inherited_mask(x);
        let name = ir::name(c::LLVMBasicBlockAsValue(self.cfg.blocks[x]));
        // What the warp function builds for a source instruction has its location (moved into
        // the warp function's subprogram later: `DebugBuilder::rehome`); the block's guard
        // that of its first instruction.
        let first = c::LLVMGetFirstInstruction(self.cfg.blocks[x]);
        c::LLVMSetCurrentDebugLocation2(self.b, LLVMInstructionGetDebugLoc(first));
        let body = self.append(&format!("b{x}.{name}"));
        let next = self.append(&format!("b{x}.done"));
        let before = self.threaded.take();
        let branch = self.threaded_branch.take();
        self.unguarded = x != 0 && self.unguarded(x);
        // A join's pending mask is the branch's mask itself: its guard tests that.
        let m = match inherited {
            Some(Inherited::Join(mb)) => mb,
            _ => m,
        };
        let empty = if thread.is_some() && !self.unguarded {
            let none = self.append(&format!("b{x}.none"));
            self.threaded = Some(none);
            none
        } else {
            next
        };
        if let Some(none) = before {
            // The previous block's path with no lane: this block has none either, nor the
            // next one when this one threads too (past its guard, so that this block's
            // visit dominates the next one's).
            let here = c::LLVMGetInsertBlock(self.b);
            c::LLVMPositionBuilderAtEnd(self.b, none);
            c::LLVMBuildBr(self.b, empty);
            c::LLVMPositionBuilderAtEnd(self.b, here);
        }
        // The previous block's uniform branch's mask, when this block runs with all of it
        // (`side_hint`).
        let mut side_mask = None;
        if self.unguarded {
            c::LLVMBuildBr(self.b, body);
        } else {
            let mut any = self.any(m);
            if let Some(t) = taken {
                // The same test (the flag is set wherever the mask gets lanes, and both are
                // cleared together): a scalar phi, constant on the paths where the edge was
                // not taken, which LLVM jump-threads past this guard (it does not see
                // through a mask's bitcast).
                any = t;
            }
            let mut deferred = None;
            if let (Some(_), Some(h)) = (before, branch) {
                deferred = h.deferred.map(|(o, em)| (h.x, o, em));
                if inherited.is_none() {
                    if let Some(side) = self.side_hint(x, &h) {
                        any = side;
                        side_mask = Some(h.m);
                    }
                }
            }
            // The `then` block of an `if` without `else` that no lane runs: its join gets
            // its mask all the same, empty here, so that the join's mask has one form on
            // both ways, `(m & !c) | (m & c)`, which LLVM folds to `m` (a whole warp stays
            // whole past a guarded load, and the code after it loses its test of the warp
            // being whole). Only there: the same for every block's successors made LLVM
            // duplicate code (conv3x3 1.35x larger, 1.15x slower).
            let fail = match self.triangle_join(x) {
                Some(j) => {
                    let here = c::LLVMGetInsertBlock(self.b);
                    let skip = self.append(&format!("b{x}.skip"));
                    c::LLVMPositionBuilderAtEnd(self.b, skip);
                    let old = c::LLVMBuildLoad2(self.b, mt, self.pending[j], c"".as_ptr());
                    let new = c::LLVMBuildOr(self.b, old, m, c"".as_ptr());
                    c::LLVMBuildStore(self.b, new, self.pending[j]);
                    c::LLVMBuildBr(self.b, empty);
                    c::LLVMPositionBuilderAtEnd(self.b, here);
                    skip
                }
                None => empty,
            };
            // The previous block's deferred edge (`defer_edge`) is written where this
            // block's guard fails: there the previous block's branch went the other way.
            let fail = match deferred {
                Some((from, o, em)) => {
                    let here = c::LLVMGetInsertBlock(self.b);
                    let other = self.append(&format!("b{x}.other"));
                    c::LLVMPositionBuilderAtEnd(self.b, other);
                    // The flag first: the edge sets it from its mask (no lane where the
                    // branch's mask was empty).
                    self.taken_flag(from, o);
                    self.edge(from, o, em, None);
                    c::LLVMBuildBr(self.b, fail);
                    c::LLVMPositionBuilderAtEnd(self.b, here);
                    other
                }
                None => fail,
            };
            c::LLVMBuildCondBr(self.b, any, body, fail);
        }
        c::LLVMPositionBuilderAtEnd(self.b, body);
        self.mask = match inherited {
            // A side that runs (its guard passed: an unguarded one may run with no lane)
            // runs with all of the branch's lanes.
            Some(Inherited::Side(mb)) if !self.unguarded => mb,
            // The same lanes as the pending mask (`side_hint`), in a form whose lanes LLVM
            // knows are there (the branch's block's guard tested it).
            _ => side_mask.unwrap_or(m),
        };
        // A whole block's joins test the lanes it was entered with (`inherited_mask`): the
        // pending mask, empty where it did not run, not the constant.
        let entered = self.mask;
        if self.whole_blocks.contains(&x) && !self.unguarded {
            self.mask = c::LLVMConstAllOnes(mt);
        }
        for i in ir::instructions(self.cfg.blocks[x]) {
            c::LLVMSetCurrentDebugLocation2(self.b, LLVMInstructionGetDebugLoc(i));
            match ir::opcode(i) {
                O::LLVMPHI => self.phi_from_slot(i),
                O::LLVMBr => {
                    // The mask as of the branch: a barrier before it reloads it.
                    let m = self.mask;
                    if c::LLVMIsConditional(i) != 0 {
                        self.publish_guard(i);
                        let cond = c::LLVMGetCondition(i);
                        let (t, f) = (c::LLVMGetSuccessor(i, 0), c::LLVMGetSuccessor(i, 1));
                        let cv = self.get(cond, false);
                        let zero = c::LLVMConstNull(mt);
                        let uniform = (!self.is_vec(cv)).then_some(m);
                        self.uniform_masks[x] = uniform.map(|m| {
                            if self.whole_blocks.contains(&x) {
                                entered
                            } else {
                                m
                            }
                        });
                        // The branch pays where the blends fold (no divergent branch: the
                        // mask is a constant) or the edge is taken once (a loop's exit).
                        let pays = |to: LLVMBasicBlockRef| {
                            self.facts.divergent.is_empty()
                                || self.cfg.loop_of[x]
                                    .is_some_and(|l| !self.cfg.loops[l].blocks[self.cfg.index[&to]])
                        };
                        let (ut, uf) = (uniform.filter(|_| pays(t)), uniform.filter(|_| pays(f)));
                        let (mt_, mf) = if self.is_vec(cv) {
                            let nc = c::LLVMBuildNot(self.b, cv, c"".as_ptr());
                            (
                                c::LLVMBuildAnd(self.b, m, cv, c"".as_ptr()),
                                c::LLVMBuildAnd(self.b, m, nc, c"".as_ptr()),
                            )
                        } else {
                            (
                                c::LLVMBuildSelect(self.b, cv, m, zero, c"".as_ptr()),
                                c::LLVMBuildSelect(self.b, cv, zero, m, c"".as_ptr()),
                            )
                        };
                        // A divergent loop's back edge last where its header has `whole`
                        // phis: the edge writes them in every lane (`edge`), the lanes leaving
                        // by the other edge too, whose exit phis read them again from their
                        // slots (`get` in another block than the phi's): taken first, a loop
                        // `do { r = i; i += 32; } while (i < n)` with `r` read after it gave
                        // the lanes that left the next iteration's `i` (lit
                        // `run-simd-whole-exit`). A uniform branch sends every lane one way.
                        // Elsewhere the order stays: LLVM folds the uniform edges' code
                        // better in it (matmul's tile round).
                        let (ti, fi) = (self.cfg.index[&t], self.cfg.index[&f]);
                        if !c::LLVMIsACallInst(cond).is_null()
                            && super::uniform::call_kind(cond) == super::uniform::CallKind::Every
                        {
                            self.whole_blocks.extend(self.whole_region(x, ti));
                        }
                        let whole_header = |y: usize| {
                            self.cfg.loops.iter().any(|l| l.header == y)
                                && ir::instructions(self.cfg.blocks[y])
                                    .into_iter()
                                    .take_while(|&p| !c::LLVMIsAPHINode(p).is_null())
                                    .any(|p| {
                                        self.facts.is_varying(p) && self.facts.strides.whole(p)
                                    })
                        };
                        if uniform.is_none() && whole_header(ti) {
                            self.edge(x, fi, mf, uf);
                            self.edge(x, ti, mt_, ut);
                        } else {
                            let threads =
                                uniform.is_some() && self.threaded.is_some() && !self.unguarded;
                            let deferred = thread
                                .filter(|_| threads)
                                .and_then(|y| self.defer_edge(i, y, ti, fi))
                                .map(|o| (o, if o == ti { mt_ } else { mf }));
                            if deferred.is_none_or(|(o, _)| o != ti) {
                                self.edge(x, ti, mt_, ut);
                            }
                            if deferred.is_none_or(|(o, _)| o != fi) {
                                self.edge(x, fi, mf, uf);
                            }
                            if threads {
                                self.threaded_branch = Some(ThreadedBranch {
                                    x,
                                    c: cv,
                                    m,
                                    t: ti,
                                    f: fi,
                                    deferred,
                                });
                            }
                        }
                    } else {
                        let t = c::LLVMGetSuccessor(i, 0);
                        self.edge(x, self.cfg.index[&t], m, None);
                    }
                }
                O::LLVMRet | O::LLVMUnreachable => {}
                _ => self.inst(i)?,
            }
        }
        c::LLVMBuildBr(self.b, next);
        c::LLVMPositionBuilderAtEnd(self.b, next);
        Ok(())
    }

    /// The blocks that run with all lanes or none when block `t`, entered from `x` alone,
    /// runs with all of them: those of `closed_region(x, t)`, when every branch among them
    /// is uniform (`interior.rs`'s copy). Empty when that does not hold.
    unsafe fn whole_region(&self, x: usize, t: usize) -> Vec<usize> {
        let region = self.closed_region(x, t);
        let uniform = region.iter().all(|&y| {
            let term = c::LLVMGetBasicBlockTerminator(self.cfg.blocks[y]);
            // `LLVMIsConditional` reads a branch: other terminators (`unreachable`) first.
            ir::opcode(term) != O::LLVMBr
                || c::LLVMIsConditional(term) == 0
                || !self.facts.is_varying(c::LLVMGetCondition(term))
        });
        if uniform {
            region
        } else {
            Vec::new()
        }
    }

    /// The blocks block `t` reaches before the return block, when none of them has a way in
    /// but from each other and `x`'s edge to `t` (the two sides of `interior.rs`'s branch);
    /// else none.
    fn closed_region(&self, x: usize, t: usize) -> Vec<usize> {
        let cfg = self.cfg;
        let n = cfg.blocks.len();
        let mut inside = vec![false; n];
        let mut work = vec![t];
        inside[t] = true;
        while let Some(y) = work.pop() {
            for &s in &cfg.succ[y] {
                if Some(s) != self.ret_block && !inside[s] {
                    inside[s] = true;
                    work.push(s);
                }
            }
        }
        let closed = t != x
            && !inside[x]
            && (0..n).all(|p| {
                inside[p]
                    || cfg.succ[p]
                        .iter()
                        .all(|&s| !inside[s] || (p == x && s == t))
            });
        if closed {
            (0..n).filter(|&y| inside[y]).collect()
        } else {
            Vec::new()
        }
    }

    /// The two sides of `interior.rs`'s branch on `EVERY`, by their first block, as closed
    /// regions (`closed_region`): a warp runs one of them, and skips the other with one test
    /// instead of a guard per block (`region`).
    unsafe fn skip_regions(&self) -> HashMap<usize, Vec<usize>> {
        let mut out = HashMap::new();
        for (x, &bb) in self.cfg.blocks.iter().enumerate() {
            let term = c::LLVMGetBasicBlockTerminator(bb);
            if term.is_null() || ir::opcode(term) != O::LLVMBr || c::LLVMIsConditional(term) == 0 {
                continue;
            }
            let cond = c::LLVMGetCondition(term);
            if c::LLVMIsACallInst(cond).is_null()
                || super::uniform::call_kind(cond) != super::uniform::CallKind::Every
            {
                continue;
            }
            for &s in &self.cfg.succ[x] {
                let r = self.closed_region(x, s);
                if !r.is_empty() {
                    out.insert(s, r);
                }
            }
        }
        out
    }

    /// The uniform condition under which block `y` has lanes when the block before it, `x`
    /// (`h`: its uniform branch, its condition, its successors), threads past `y`'s guard
    /// (`threads_past`): `y`'s pending mask there is exactly the mask of `x`'s edge to it,
    /// `select(c, m, 0)` (or on the false side `select(c, 0, m)`), with `m` the mask `x` ran
    /// with, not empty (its guard passed; a barrier in `x` reloads the same lanes). So
    /// `any(pending) == c` (`!c`), and the guard tests `c`: LLVM then knows `c` in `y`'s
    /// visit and after it (the other side's mask, `select(c, 0, m)`, folds to no lane), and
    /// the guard costs no mask test (the chain of uniform tests the halving-distance
    /// versions dispatch by, `version.rs`, tested each mask twice).
    unsafe fn side_hint(&self, y: usize, h: &ThreadedBranch) -> Option<LLVMValueRef> {
        let (x, c, t, f) = (h.x, h.c, h.t, h.f);
        // `x`'s edge to `y` is its only one when the two successors differ.
        if t == f || x == y {
            return None;
        }
        if y == t {
            Some(c)
        } else if y == f {
            Some(c::LLVMBuildNot(self.b, c, c"".as_ptr()))
        } else {
            None
        }
    }

    /// The successor of uniform branch `br` (to `t` and `f`, of a block that threads past
    /// the guard of `y`, the next block) whose edge may wait until `y`'s guard fails
    /// (`Warp::block`): the other one than `y`, when that edge writes nothing but its
    /// pending mask (it has no phi) and nothing reads that mask before `y`'s guard (it comes
    /// later in the order: `y` is next). `y`'s guard fails exactly when the branch goes the
    /// other way (`side_hint`), so where `y` runs, the edge, which had no lane, is not
    /// written at all: LLVM sees the other side's pending mask unchanged there (no lane,
    /// from its last visit), and the guards after `y` down that side, the chain of uniform
    /// tests the halving-distance versions dispatch by (`version.rs`), fold or jump-thread.
    unsafe fn defer_edge(&self, br: LLVMValueRef, y: usize, t: usize, f: usize) -> Option<usize> {
        if t == f || (y != t && y != f) {
            return None;
        }
        let o = if y == t { f } else { t };
        let skip_guard = self
            .regions
            .as_ref()
            .is_some_and(|r| r.skips.as_ref().is_some_and(|s| s.guards.contains_key(&br)));
        let phis = ir::instructions(self.cfg.blocks[o])
            .into_iter()
            .any(|p| !c::LLVMIsAPHINode(p).is_null());
        // `o`'s mask is read at its visit, or for the header of `y`'s loop at the loop's end,
        // or for an exit of that loop after it: after `y`'s guard unless `o` (or the loop
        // holding it) comes before `y` in the loop's order.
        let cfg = self.cfg;
        let r = cfg.loop_of[y];
        let later = if r.is_some_and(|l| !cfg.loops[l].blocks[o] || cfg.loops[l].header == o) {
            true
        } else {
            let order = cfg.order(r);
            let holds = |n: &Node| match *n {
                Node::Block(b) => b == o,
                Node::Loop(l) => cfg.loops[l].blocks[o],
            };
            match (
                order.iter().position(holds),
                order.iter().position(|n| *n == Node::Block(y)),
            ) {
                (Some(po), Some(py)) => po > py,
                _ => false,
            }
        };
        (!skip_guard && !phis && later && Some(o) != self.ret_block).then_some(o)
    }

    /// The flag of block `o` (`taken`) when its one predecessor is `x`, whose edge to it is
    /// deferred (`defer_edge`): that edge then writes its pending mask alone.
    unsafe fn taken_flag(&mut self, x: usize, o: usize) -> Option<LLVMValueRef> {
        let cfg = self.cfg;
        let mut preds = (0..cfg.succ.len()).filter(|&p| cfg.succ[p].contains(&o));
        // Not in a coroutine, whose entry block runs before its frame exists.
        if preds.next() != Some(x) || preds.next().is_some() || x == o || self.coro.is_some() {
            return None;
        }
        if let Some(&s) = self.taken.get(&o) {
            return Some(s);
        }
        // Cleared wherever the function is entered (start and resumptions: its pending
        // mask is empty there, and the flag must not be undefined).
        let s = self.alloca(self.i1);
        c::LLVMBuildStore(self.allocas, c::LLVMConstInt(self.i1, 0, 0), s);
        self.taken.insert(o, s);
        Some(s)
    }

    /// The mask block `x` runs with because a uniform branch leads to it: all lanes running
    /// a block agree on a uniform condition (it comes from parameters, constants and other
    /// uniform values, the same in every lane), so a uniform branch splits no lanes: its
    /// block's mask `m` all goes one way. Its sides (blocks whose one predecessor it is, in
    /// the same loop: no lanes from other iterations) run with `m` or not at all, and its
    /// join (post-dominator) gets `m` back when the region between them is closed: entered
    /// only through the branch, left only to the join, inside one iteration of the branch's
    /// loop. LLVM does not see through the linearized masks (the sides' masks are selects on
    /// the condition, the join's an OR of the edges' masks through phis), so without this
    /// each block under the branch carries mask arithmetic the branch never needed.
    ///
    /// Only without CTA barriers (region and coroutine schemes): a barrier between the
    /// branch and the block resumes in code the branch's mask does not dominate.
    fn inherited_mask(&self, x: usize) -> Option<Inherited> {
        if self.regions.is_some() || self.coro.is_some() || x == 0 {
            return None;
        }
        let cfg = self.cfg;
        let n = cfg.blocks.len();
        let preds = |y: usize| (0..n).filter(move |&p| cfg.succ[p].contains(&y));
        let header = cfg.loops.iter().any(|l| l.header == x);
        if let [p] = preds(x).collect::<Vec<_>>()[..] {
            if let Some(m) = self.uniform_masks[p] {
                if p != x && !header && cfg.loop_of[p] == cfg.loop_of[x] {
                    return Some(Inherited::Side(m));
                }
            }
        }
        if Some(x) == self.ret_block {
            return None;
        }
        (0..n).find_map(|p| {
            let m = self.uniform_masks[p]?;
            if cfg.ipdom[p] != x || cfg.loop_of[p] != cfg.loop_of[x] {
                return None;
            }
            let region = cfg.region_after(p, x);
            let mut inside = vec![false; n];
            for &y in &region {
                inside[y] = true;
            }
            let in_loop = |y: usize| cfg.loop_of[p].is_none_or(|l| cfg.loops[l].blocks[y]);
            let closed = cfg.succ[p].iter().all(|&s| s == x || inside[s])
                && region
                    .iter()
                    .all(|&y| in_loop(y) && cfg.succ[y].iter().all(|&s| s == x || inside[s]))
                && region
                    .iter()
                    .chain([&x])
                    .all(|&y| preds(y).all(|q| q == p || inside[q]));
            closed.then_some(Inherited::Join(m))
        })
    }

    /// When block `x` is the `then` side of an `if` without `else` (its one predecessor
    /// branches to it and to its one successor), that successor, the join.
    fn triangle_join(&self, x: usize) -> Option<usize> {
        let [j] = self.cfg.succ[x][..] else {
            return None;
        };
        let mut preds = (0..self.cfg.succ.len()).filter(|&p| self.cfg.succ[p].contains(&x));
        let p = preds.next()?;
        (preds.next().is_none() && p != x && self.cfg.succ[p].contains(&j)).then_some(j)
    }

    /// Whether block `x` is the one way into a loop (its one successor is the header of a loop
    /// that `x` is not in, and no other block outside that loop branches to the header) and
    /// computes something: a warp whose mask is empty in `x` then skips the loop too. Such a
    /// block keeps its guard, so that what the way in builds (its values, the header phis'
    /// vectors, the entry tests) and what LICM hoists to it runs only when some lane enters:
    /// spmv_warp's unrolled loop, which NVRTC emits for rows of 128 or more entries and which
    /// no lane enters at 4 to 60 per row, had its pointer vectors and entry tests (~100
    /// instructions with their spills) built for every row. An empty one (mandelbrot's loop
    /// preheader) stays unguarded: its guard would only add a branch.
    unsafe fn enters_loop(&self, x: usize) -> bool {
        let [h] = self.cfg.succ[x][..] else {
            return false;
        };
        let computes = ir::instructions(self.cfg.blocks[x])
            .into_iter()
            .any(|i| c::LLVMIsAPHINode(i).is_null() && c::LLVMIsATerminatorInst(i).is_null());
        if !computes {
            return false;
        }
        let Some(l) = self.cfg.loops.iter().find(|l| l.header == h) else {
            return false;
        };
        !l.blocks[x]
            && (0..self.cfg.succ.len())
                .filter(|&p| self.cfg.succ[p].contains(&h))
                .all(|p| p == x || l.blocks[p])
    }

    /// Whether block `x` can run with no lane at all, so that it needs no guard: a small
    /// block of varying instructions only, whose memory accesses are consecutive loads and
    /// stores (a masked vector access touches no memory for lanes that are off, so an empty
    /// mask touches none; a full warp's plain access needs every lane on) and whose other
    /// instructions have no effect but their value (a division divides the lanes that are off
    /// by one). The guarded load of `if (c < n) v = p[c]` then has no guard branch, and its
    /// join with the other side is selects on masks that LLVM if-converts: softmax_warp's
    /// 32 loads and 32 stores per row (CPU per launch x0.90).
    ///
    /// Left guarded:
    /// - uniform instructions: their slots hold one value for every lane, which a run
    ///   without lanes must not overwrite, and a scalar load or division is not safe to run
    ///   when no lane asks for it;
    /// - blocks of kernels with CTA barriers (region or coroutine schemes): there the
    ///   unguarded blocks made scan x1.36 slower (per launch CPU 27 -> 37 ms, not narrowed
    ///   down; the skip guards and rounds look at which blocks a warp's region runs).
    unsafe fn unguarded(&self, x: usize) -> bool {
        if self.regions.is_some() || self.coro.is_some() || self.enters_loop(x) {
            return false;
        }
        let mut count = 0;
        for i in ir::instructions(self.cfg.blocks[x]) {
            let op = ir::opcode(i);
            match op {
                O::LLVMPHI | O::LLVMRet | O::LLVMUnreachable => continue,
                O::LLVMBr => {
                    let skip_guard = self.regions.as_ref().is_some_and(|r| {
                        r.skips.as_ref().is_some_and(|s| s.guards.contains_key(&i))
                    });
                    if skip_guard {
                        return false;
                    }
                    continue;
                }
                // The context: an argument of the warp function, no code.
                O::LLVMCall if ir::is_self_call(i) => continue,
                _ => {}
            }
            if !self.facts.is_varying(i) || self.frag_access(i) {
                return false;
            }
            count += 1;
            let ok = match op {
                O::LLVMLoad | O::LLVMStore => {
                    let Some((p, t)) = ir::access(i) else {
                        return false;
                    };
                    // A lane id of the context (`inst`): a value, no access.
                    let id = op == O::LLVMLoad
                        && ir::ctx_offset(self.td, p)
                            .is_some_and(|off| CtxField::at(off).varying());
                    id || c::LLVMGetOrdering(i)
                        == llvm_sys::LLVMAtomicOrdering::LLVMAtomicOrderingNotAtomic
                        && c::LLVMGetVolatile(i) == 0
                        && !self.pred_slots.contains_key(&p)
                        && ir::ctx_offset(self.td, p).is_none()
                        && (op == O::LLVMLoad
                            || !self.facts.strides.same_address(i, &self.facts.varying))
                        && self
                            .facts
                            .strides
                            .access(p, t, &self.facts.varying, self.td)
                            == super::stride::Access::Consecutive
                }
                op if ir::int_binop(op) || ir::lanewise_cast(op) => true,
                O::LLVMFAdd
                | O::LLVMFSub
                | O::LLVMFMul
                | O::LLVMFDiv
                | O::LLVMFNeg
                | O::LLVMICmp
                | O::LLVMFCmp
                | O::LLVMSelect
                | O::LLVMGetElementPtr
                | O::LLVMFreeze => true,
                O::LLVMCall => super::uniform::call_kind(i) == super::uniform::CallKind::Lanewise,
                _ => false,
            };
            if !ok || count > UNGUARDED_MAX {
                return false;
            }
        }
        true
    }

    /// The lanes `em` go from block `from` to block `to`. After a uniform branch (`uniform`:
    /// the block's mask `m`, and `em` is `m` or no lane; given where it pays: no divergent
    /// branch or a loop's exit) the phi slots are written under a branch on the edge being
    /// taken, where `em` is `m`: a uniform loop's exit values were blended into their slots
    /// in every iteration, and with static regions each blend loaded the value from the frame
    /// and stored it masked (matmul's accumulator, two 64-byte loads and masked stores per
    /// warp and tile), for the one iteration that leaves; and where `m` is a constant (no
    /// divergent branch) the blends of the edge taken fold away.
    unsafe fn edge(
        &mut self,
        from: usize,
        to: usize,
        em: LLVMValueRef,
        uniform: Option<LLVMValueRef>,
    ) {
        let mt = self.mask_ty();
        let old = c::LLVMBuildLoad2(self.b, mt, self.pending[to], c"".as_ptr());
        let new = c::LLVMBuildOr(self.b, old, em, c"".as_ptr());
        c::LLVMBuildStore(self.b, new, self.pending[to]);
        if let Some(&s) = self.taken.get(&to) {
            let old = c::LLVMBuildLoad2(self.b, self.i1, s, c"".as_ptr());
            let new = c::LLVMBuildOr(self.b, old, self.any(em), c"".as_ptr());
            c::LLVMBuildStore(self.b, new, s);
        }
        let fb = self.cfg.blocks[from];
        // The phis of `to` take their incoming values at once (a parallel copy): read every
        // incoming value before any phi slot is written, since one phi's incoming value may be
        // another phi of the same block (a loop header's `a, b = b, a + b`), whose slot holds
        // the value of the previous iteration only until it is written here.
        let mut incoming = Vec::new();
        // Entering a loop: the entry tests of its header's phis (`entry_test`).
        let entering = self
            .cfg
            .loops
            .iter()
            .find(|l| l.header == to)
            .is_some_and(|l| !l.blocks[from]);
        let mut tests = Vec::new();
        for p in ir::instructions(self.cfg.blocks[to]) {
            if c::LLVMIsAPHINode(p).is_null() {
                break;
            }
            let Some(k) =
                (0..c::LLVMCountIncoming(p)).find(|&k| c::LLVMGetIncomingBlock(p, k) == fb)
            else {
                continue;
            };
            let inc = c::LLVMGetIncomingValue(p, k);
            let vary = self.facts.is_varying(p);
            let v = self.get(inc, vary);
            incoming.push((p, vary, v));
            if entering {
                if let (Some(&s), Some(step)) = (
                    self.entry_flags.get(&p),
                    self.facts.strides.entry_header_step(p),
                ) {
                    tests.push((s, self.entry_test(v, step)));
                }
            }
        }
        // And the join phis that the loop's accesses use without the loop defining them.
        if entering {
            // A copy: `get` below borrows the warp mutably.
            for j in self.facts.strides.entry_joins(self.cfg.blocks[to]).to_vec() {
                if let (Some(&s), Some(step)) =
                    (self.entry_flags.get(&j), self.facts.strides.entry_step(j))
                {
                    let v = self.get(j, true);
                    tests.push((s, self.entry_test(v, step)));
                }
            }
        }
        // The incoming values are built above, before the branch, so that what `get` builds
        // and remembers dominates the rest of the visit.
        let join = uniform.filter(|_| !incoming.is_empty()).map(|_| {
            let (then, join) = (self.append("edge.phis"), self.append("edge.join"));
            c::LLVMBuildCondBr(self.b, self.any(em), then, join);
            c::LLVMPositionBuilderAtEnd(self.b, then);
            join
        });
        let em = uniform.unwrap_or(em);
        for (p, vary, v) in incoming {
            let s = self.slot(p);
            let old = c::LLVMBuildLoad2(self.b, self.slot_type(s), s, c"".as_ptr());
            let cond = if vary && !self.facts.strides.whole(p) {
                self.widen(em, self.per_new(v))
            } else {
                self.any(em)
            };
            let v = c::LLVMBuildSelect(self.b, cond, v, old, c"".as_ptr());
            c::LLVMBuildStore(self.b, v, s);
        }
        // The phis took every lane (`Strides::whole`) where any lane entered: so do their
        // tests.
        for (s, ok) in tests {
            let old = c::LLVMBuildLoad2(self.b, self.i1, s, c"".as_ptr());
            let v = c::LLVMBuildSelect(self.b, self.any(em), ok, old, c"".as_ptr());
            c::LLVMBuildStore(self.b, v, s);
        }
        if let Some(join) = join {
            c::LLVMBuildBr(self.b, join);
            c::LLVMPositionBuilderAtEnd(self.b, join);
        }
    }

    /// One instruction that is neither a phi nor a terminator.
    unsafe fn inst(&mut self, i: LLVMValueRef) -> Result<(), String> {
        let op = ir::opcode(i);
        if op == O::LLVMAlloca || self.frag_access(i) {
            return Ok(());
        }
        if op == O::LLVMCall {
            return self.call(i);
        }
        if op == O::LLVMLoad {
            let p = c::LLVMGetOperand(i, 0);
            if let Some(off) = ir::ctx_offset(self.td, p) {
                let v = match CtxField::at(off) {
                    CtxField::Tid(k) => Some(self.tid[k as usize]),
                    CtxField::LaneId => Some(self.iota),
                    CtxField::FlatTid => Some(self.flat),
                    CtxField::Uniform(_) => None,
                };
                if let Some(v) = v {
                    let mut v = self.fit_int(v, c::LLVMTypeOf(i));
                    // Uniform in aligned warps (`%tid.y/z`): lane 0's, as its slot is a scalar.
                    if !self.facts.is_varying(i) {
                        v = c::LLVMBuildExtractElement(self.b, v, self.c32(0), c"".as_ptr());
                    }
                    self.set(i, v);
                    return Ok(());
                }
            }
            if let Some(&v) = self.pred_slots.get(&p) {
                self.set(i, v);
                return Ok(());
            }
        }
        if !self.facts.is_varying(i) {
            let nv = c::LLVMInstructionClone(i);
            for k in 0..c::LLVMGetNumOperands(i) as u32 {
                let o = c::LLVMGetOperand(i, k);
                let v = self.scalar(o);
                c::LLVMSetOperand(nv, k, v);
            }
            c::LLVMInsertIntoBuilder(self.b, nv);
            self.set(i, nv);
            return Ok(());
        }
        let v = self.vector_inst(i, op)?;
        self.set(i, v);
        Ok(())
    }

    /// A lane-index vector (`<32 x i32>`) as type `t`'s lanes.
    unsafe fn fit_int(&self, v: LLVMValueRef, t: LLVMTypeRef) -> LLVMValueRef {
        if t == self.i32 {
            v
        } else {
            c::LLVMBuildZExt(self.b, v, c::LLVMVectorType(t, LANES), c"".as_ptr())
        }
    }
}
