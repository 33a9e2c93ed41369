//! The warp matrix instructions `mma.sync`, `ldmatrix`, `stmatrix` and `movmatrix` in the warp
//! function. The scalar lowering (`target/cpu/matrix.rs`) passes a lane's fragment registers
//! in stack arrays (`frag` allocas: constant-offset stores before the call, loads of the
//! result after it); here the stores give each fragment word as a `<32 x i32>` of all lanes
//! and the loads after the instruction are served from its result words.
//!
//! The floating-point `mma.sync` forms are built as vector code (`mma_inline`): for each `k`,
//! the A and B operands of every D element are constant shuffles of the converted fragment
//! elements, and `llvm.fma` chains them from C in `k` order, the arithmetic of
//! `runtime/matrix.rs`'s `product` (whose layouts, `Mma::frag_pos`, it reads), so both engines
//! give the same bits. A runtime call there would spill every live vector around it: Triton's
//! matmul keeps 128 accumulator vectors live across 64 of them, which took LLVM's register
//! allocation about 45 s. Every shape's steps have one form, so the chains are a loop over
//! `k` (`Roll`, `Warp::mma_rolled`) that reads the operands from per-fragment tables, shared
//! by the next independent `mma` of the block with the same A fragment (`Warp::mma_partner`).
//! `ldmatrix` of a whole warp whose rows all lie in shared memory is
//! vector loads of the rows and a permutation (`ldmatrix_rows`). The other forms (integers),
//! `ldmatrix` otherwise, `stmatrix` and `movmatrix` are one whole-warp runtime call each, on component-major stack arrays (`<32 x i32>` per
//! word) with the lanes' row addresses beside them (`ptx2llvm_rt_warp_mma`, `_ldmatrix`, …):
//! no per-lane calls and no exchange area.

use llvm_sys::core as c;
use llvm_sys::prelude::*;
use llvm_sys::LLVMOpcode as O;

use super::emit::{Warp, LANES};
use super::ir::{self, WarpCall};
use super::uniform::{call_kind, CallKind};
use crate::runtime::abi::mma as code;
use crate::runtime::matrix::{Frag, Mma};

/// Where one operand of one step of an inline `mma` comes from: element `elem` of the
/// fragment, taken from lane `lanes[l]` for lane `l`.
#[derive(Clone, PartialEq, Eq, Hash)]
struct Source {
    elem: usize,
    lanes: Vec<u32>,
}

/// An operand an inline `mma` builds from a fragment: a register's word, element `i` of type
/// `ty` of a word as a vector of type `vt`, or a vector's lanes taken from `lanes`. The `mma`s of a block share
/// their A and B fragments (Triton's matmul: each A fragment feeds 8 of its 64 `mma`s, each
/// B fragment 4), so a block builds each once (`Warp::mma_operands`) instead of leaving ~5,800
/// copies to EarlyCSE and GVN (compile time of the optimizer).
#[derive(Clone, PartialEq, Eq, Hash)]
pub(super) enum Operand {
    /// A fragment register's value as one `<32 x i32>` word under `mask`.
    Word {
        v: LLVMValueRef,
        mask: LLVMValueRef,
    },
    Element {
        word: LLVMValueRef,
        ty: u32,
        i: usize,
        vt: LLVMTypeRef,
    },
    Shuffle {
        of: LLVMValueRef,
        lanes: Vec<u32>,
    },
    /// The operand table (`Roll`) of side `which` (0: A, 1: B) of `mma` kind `kind` over the
    /// fragment elements `of`.
    Table {
        kind: u32,
        which: usize,
        of: Vec<LLVMValueRef>,
    },
}

/// An `mma.sync` built as vector code: `steps[k][e]` are the A and B operands that element
/// `e` of every lane's D takes at step `k` of its chain.
struct Inline {
    kind: u32,
    m: Mma,
    steps: Vec<Vec<[Source; 2]>>,
    roll: Option<Roll>,
}

/// The `k` steps of an inline `mma` as a loop (`Warp::mma_rolled`), for the shapes whose
/// steps all have one form: step `k` of D element `e` reads the A operand in slot
/// `slot[e][0]` and the B operand in slot `slot[e][1]` of the step's distinct operands, the
/// same slots at every step. The loop reads the operands from a table per fragment
/// (`tables[w][k * width[w] + j]`: slot `j` of step `k`), built once per block like the
/// shuffles of the unrolled form. Unrolled, Triton's matmul had 4,096 `<32 x float>` FMAs
/// and their operands in one block of its loop (64 `mma.sync` of 16 steps x 4 elements),
/// where instruction selection and register allocation (128 accumulators live, 4x the
/// vector registers) took most of its 3.5 s of compile CPU time.
struct Roll {
    slot: Vec<[usize; 2]>,
    width: [usize; 2],
    tables: [Vec<Source>; 2],
}

impl Roll {
    fn of(steps: &[Vec<[Source; 2]>]) -> Option<Roll> {
        let n = steps.first()?.len();
        let mut slot = vec![[0; 2]; n];
        let mut width = [0; 2];
        let mut tables = [Vec::new(), Vec::new()];
        for (k, step) in steps.iter().enumerate() {
            for w in 0..2 {
                let mut seen: Vec<&Source> = Vec::new();
                for (e, pair) in step.iter().enumerate() {
                    let j = match seen.iter().position(|s| **s == pair[w]) {
                        Some(j) => j,
                        None => {
                            seen.push(&pair[w]);
                            seen.len() - 1
                        }
                    };
                    if k == 0 {
                        slot[e][w] = j;
                    } else if slot[e][w] != j {
                        return None;
                    }
                }
                if k == 0 {
                    width[w] = seen.len();
                } else if width[w] != seen.len() {
                    return None;
                }
                tables[w].extend(seen.into_iter().cloned());
            }
        }
        Some(Roll {
            slot,
            width,
            tables,
        })
    }
}

impl Inline {
    /// The plan of kind `kind`, for the floating-point forms whose operand at each step comes
    /// from one fragment element in all lanes (every shape of `mma.sync` has this property;
    /// the check keeps a layout that lacks it on the runtime call).
    fn of(kind: u32) -> Option<Inline> {
        let m = Mma::decode(kind)?;
        let float = matches!(m.a, code::F16 | code::BF16 | code::TF32 | code::F64)
            && matches!(m.d, code::F16 | code::F32 | code::F64);
        if !float || m.shape >= code::WMMA_M16N16K16 {
            return None;
        }
        let (rows, cols, depth) = m.mnk();
        let lanes = LANES as usize;
        // Who holds each element of A (row-major, rows x depth) and B (depth x cols).
        let mut at = vec![None; rows * depth];
        let mut bt = vec![None; depth * cols];
        for l in 0..lanes {
            for i in 0..m.count(Frag::A) {
                let (r, k) = m.frag_pos(Frag::A, l, i);
                at[r * depth + k] = Some((l as u32, i));
            }
            for i in 0..m.count(Frag::B) {
                let (k, n) = m.frag_pos(Frag::B, l, i);
                bt[k * cols + n] = Some((l as u32, i));
            }
        }
        // One element for all lanes, or none.
        let source = |held: &mut dyn Iterator<Item = Option<(u32, usize)>>| -> Option<Source> {
            let mut elem = None;
            let mut from = Vec::with_capacity(lanes);
            for h in held {
                let (l, i) = h?;
                if *elem.get_or_insert(i) != i {
                    return None;
                }
                from.push(l);
            }
            Some(Source {
                elem: elem?,
                lanes: from,
            })
        };
        let mut steps = Vec::with_capacity(depth);
        for k in 0..depth {
            let mut row = Vec::with_capacity(m.count(Frag::C));
            for e in 0..m.count(Frag::C) {
                let pos = |l: usize| m.frag_pos(Frag::C, l, e);
                let a = source(&mut (0..lanes).map(|l| at[pos(l).0 * depth + k]))?;
                let b = source(&mut (0..lanes).map(|l| bt[k * cols + pos(l).1]))?;
                row.push([a, b]);
            }
            steps.push(row);
        }
        // Two steps per trip: the loop's own instructions are less per FMA, and `depth` is
        // even for every shape.
        let roll = (depth % ROLL_STEPS == 0)
            .then(|| Roll::of(&steps))
            .flatten();
        Some(Inline {
            kind,
            m,
            steps,
            roll,
        })
    }
}

/// The `k` steps of one trip of a rolled `mma`'s loop (`Roll`).
const ROLL_STEPS: usize = 2;

/// The byte offset of `p` into alloca `a`: `a` itself, or a GEP of it by a constant.
pub unsafe fn frag_offset(
    td: llvm_sys::target::LLVMTargetDataRef,
    a: LLVMValueRef,
    p: LLVMValueRef,
) -> Option<u64> {
    if p == a {
        return Some(0);
    }
    if c::LLVMIsAGetElementPtrInst(p).is_null()
        || c::LLVMGetNumOperands(p) != 2
        || c::LLVMGetOperand(p, 0) != a
    {
        return None;
    }
    let k = ir::const_u64(c::LLVMGetOperand(p, 1))?;
    let size = llvm_sys::target::LLVMABISizeOfType(td, c::LLVMGetGEPSourceElementType(p));
    k.checked_mul(size)
}

/// Whether `p` points into a fragment array (an alloca, or a GEP of one): its loads are the
/// results of a matrix operation, which differ between lanes.
pub unsafe fn is_frag_ptr(p: LLVMValueRef) -> bool {
    let base = if !c::LLVMIsAGetElementPtrInst(p).is_null() {
        c::LLVMGetOperand(p, 0)
    } else {
        p
    };
    !c::LLVMIsAAllocaInst(base).is_null()
}

/// The position of the first fragment-array argument of matrix call `i` (the arguments from
/// there on are arrays), if it is one that takes them.
unsafe fn frag_args(i: LLVMValueRef) -> Option<usize> {
    match call_kind(i) {
        CallKind::Warp(WarpCall::Mma) => Some(3),
        CallKind::Warp(WarpCall::LdMatrix | WarpCall::StMatrix) => Some(5),
        _ => None,
    }
}

/// Whether alloca `a` is a fragment array of matrix calls: only stored to and loaded from at
/// constant 4-byte-aligned offsets by 32- and 64-bit values, and passed to `mma`, `ldmatrix`
/// or `stmatrix` calls as fragments.
pub unsafe fn frag_slot(td: llvm_sys::target::LLVMTargetDataRef, a: LLVMValueRef) -> bool {
    let access_ok = |user: LLVMValueRef, p: LLVMValueRef| -> bool {
        let t = match ir::opcode(user) {
            O::LLVMLoad => c::LLVMTypeOf(user),
            O::LLVMStore if c::LLVMGetOperand(user, 1) == p => {
                c::LLVMTypeOf(c::LLVMGetOperand(user, 0))
            }
            _ => return false,
        };
        // Packed 16-bit pairs arrive as `<2 x half>`/`<2 x bfloat>`: whole words too.
        let bits = llvm_sys::target::LLVMSizeOfTypeInBits(td, t);
        (bits == 32 || bits == 64) && frag_offset(td, a, p).is_some_and(|o| o % 4 == 0)
    };
    let mut used = false;
    let mut u = c::LLVMGetFirstUse(a);
    while !u.is_null() {
        let user = c::LLVMGetUser(u);
        let ok = if !c::LLVMIsACallInst(user).is_null() {
            if let Some(first) = frag_args(user) {
                let args = ir::args(user);
                used = true;
                args[first..].contains(&a) && !args[..first].contains(&a)
            } else {
                ir::callee(user).starts_with("llvm.lifetime")
            }
        } else if !c::LLVMIsAGetElementPtrInst(user).is_null() {
            frag_offset(td, a, user).is_some() && {
                let mut ok = true;
                let mut v = c::LLVMGetFirstUse(user);
                while !v.is_null() {
                    ok &= access_ok(c::LLVMGetUser(v), user);
                    v = c::LLVMGetNextUse(v);
                }
                ok
            }
        } else {
            access_ok(user, a)
        };
        if !ok {
            return false;
        }
        u = c::LLVMGetNextUse(u);
    }
    used
}

impl Warp<'_> {
    /// Whether original instruction `i` only addresses or fills a fragment array (the `mma`
    /// call reads what the stores store; the loads are served from `pred_slots`).
    pub(super) unsafe fn frag_access(&self, i: LLVMValueRef) -> bool {
        match ir::opcode(i) {
            O::LLVMGetElementPtr => is_frag_ptr(i),
            O::LLVMStore => is_frag_ptr(c::LLVMGetOperand(i, 1)),
            _ => false,
        }
    }

    /// `ptx2llvm_rt_mma(t, pc, kind, a, b, c, d)` for the whole warp: vector code for the
    /// floating-point forms (`Inline`), else the whole-warp runtime call.
    pub(super) unsafe fn mma(&mut self, i: LLVMValueRef) -> Result<(), String> {
        let args = ir::args(i);
        let Some(kind) = ir::const_u64(args[2]) else {
            return Err("`mma.sync` of a kind computed at run time".into());
        };
        // The lowering has checked the kind and the fragments' sizes.
        let need = crate::runtime::matrix::fragment_words(kind as u32).unwrap_or([0; 4]);
        if self.mma_fused.remove(&i) {
            return Ok(());
        }
        if let Some(plan) = Inline::of(kind as u32) {
            schedule_without_pressure();
            let a = self.store_words(args[3], need[0]);
            let b = self.store_words(args[4], need[1]);
            let c = self.store_words(args[5], need[2]);
            if plan.roll.is_none() {
                let d = self.mma_inline(&plan, &a, &b, &c);
                self.serve_loads(args[6], &d);
                return Ok(());
            }
            let mut members = vec![(b, c, args[6])];
            if let Some(p) = self.mma_partner(i, kind) {
                let pa = ir::args(p);
                let b = self.store_words(pa[4], need[1]);
                let c = self.store_words(pa[5], need[2]);
                members.push((b, c, pa[6]));
                self.mma_fused.insert(p);
            }
            let bc: Vec<_> = members.iter().map(|(b, c, _)| (&b[..], &c[..])).collect();
            let ds = self.mma_rolled(&plan, &a, &bc);
            for ((_, _, out), d) in members.iter().zip(ds) {
                self.serve_loads(*out, &d);
            }
            return Ok(());
        }
        let mut arrays = Vec::new();
        for (k, &a) in args[3..7].iter().enumerate() {
            let words = self.store_words(a, need[k]);
            let arr = self.words_array(words.len() as u64);
            if k < 3 {
                for (w, v) in words.into_iter().enumerate() {
                    c::LLVMBuildStore(self.b, v, self.word_ptr(arr, w as u64));
                }
            }
            arrays.push(arr);
        }
        let mut pt = [self.ptr, self.i32, self.ptr, self.ptr, self.ptr, self.ptr];
        let mut xs = [
            self.ctx, args[2], arrays[0], arrays[1], arrays[2], arrays[3],
        ];
        self.call_rt(c"ptx2llvm_rt_warp_mma", &mut pt, &mut xs);
        let d = self.array_words(arrays[3], frag_words(self.td, args[6]).max(need[3] as u64));
        self.serve_loads(args[6], &d);
        Ok(())
    }

    /// The D words (`<32 x i32>` each) of `plan`'s product of the A, B and C words `a`, `b`,
    /// `c`: each D element the chain of fused multiply-adds from C in `k` order, in `f32`
    /// (`f64` for the `f64` form), as `runtime/matrix.rs`'s `product`.
    unsafe fn mma_inline(
        &mut self,
        plan: &Inline,
        a: &[LLVMValueRef],
        b: &[LLVMValueRef],
        c: &[LLVMValueRef],
    ) -> Vec<LLVMValueRef> {
        let m = &plan.m;
        let wide = m.d == code::F64;
        let ft = if wide {
            c::LLVMDoubleTypeInContext(self.cx)
        } else {
            c::LLVMFloatTypeInContext(self.cx)
        };
        let vt = c::LLVMVectorType(ft, LANES);
        let ae = self.shared_elements(a, m.a, m.count(Frag::A), vt);
        let be = self.shared_elements(b, m.b, m.count(Frag::B), vt);
        let mut acc = self.elements(c, m.c, m.count(Frag::C), vt);
        // Operands shared by several D elements (A's by a row's, B's by a column's) are built
        // once per step.
        let mut made: std::collections::HashMap<(usize, &Source), LLVMValueRef> =
            std::collections::HashMap::new();
        let identity: Vec<u32> = (0..LANES).collect();
        for step in &plan.steps {
            made.clear();
            for (e, pair) in step.iter().enumerate() {
                let mut xy = [std::ptr::null_mut(); 3];
                for (which, (s, from)) in pair.iter().zip([&ae, &be]).enumerate() {
                    xy[which] = match made.get(&(which, s)) {
                        Some(&v) => v,
                        None => {
                            let v = if s.lanes == identity {
                                from[s.elem]
                            } else {
                                self.shared_shuffle(from[s.elem], &s.lanes)
                            };
                            made.insert((which, s), v);
                            v
                        }
                    };
                }
                xy[2] = acc[e];
                let mut tys = [vt];
                acc[e] = self.call_intrinsic("llvm.fma", &mut tys, &mut xy);
            }
        }
        self.pack(&acc, m.d)
    }

    /// The block whose `mma_operands` the current one shares (`Warp::mma_roots`).
    unsafe fn operand_block(&self) -> LLVMBasicBlockRef {
        let bb = c::LLVMGetInsertBlock(self.b);
        self.mma_roots.get(&bb).copied().unwrap_or(bb)
    }

    /// `mma_inline` as a loop over `k` (`Roll`) for one `mma` or several that share the A
    /// fragment `a` (`members`: each one's B and C words): the same FMA chains in the same
    /// order, so the same bits, with each step's operands loaded from the fragments' tables.
    /// One A operand load serves every member's FMAs: with two members a step of
    /// m16n8k16 loads 12 vector registers for 16 FMAs (one member: 8 for 8, which made the
    /// loop load-bound and Triton's matmul 1.25x slower than the unrolled form), and the 16
    /// accumulators and 12 operands still fit the 32 vector registers.
    unsafe fn mma_rolled(
        &mut self,
        plan: &Inline,
        a: &[LLVMValueRef],
        members: &[(&[LLVMValueRef], &[LLVMValueRef])],
    ) -> Vec<Vec<LLVMValueRef>> {
        let m = &plan.m;
        let roll = plan.roll.as_ref().expect("a rolled plan");
        let ft = if m.d == code::F64 {
            c::LLVMDoubleTypeInContext(self.cx)
        } else {
            c::LLVMFloatTypeInContext(self.cx)
        };
        let vt = c::LLVMVectorType(ft, LANES);
        let ae = self.shared_elements(a, m.a, m.count(Frag::A), vt);
        let ta = self.operand_table(plan.kind, 0, &ae, &roll.tables[0], vt);
        let mut tbs = Vec::new();
        let mut acc0 = Vec::new();
        for &(b, c) in members {
            let be = self.shared_elements(b, m.b, m.count(Frag::B), vt);
            tbs.push(self.operand_table(plan.kind, 1, &be, &roll.tables[1], vt));
            acc0.push(self.elements(c, m.c, m.count(Frag::C), vt));
        }
        let n = c"".as_ptr();
        let root = self.operand_block();
        let pre = c::LLVMGetInsertBlock(self.b);
        let head = self.append("mma.k");
        let done = self.append("mma.done");
        c::LLVMBuildBr(self.b, head);
        c::LLVMPositionBuilderAtEnd(self.b, head);
        let k = c::LLVMBuildPhi(self.b, self.i32, n);
        let phis: Vec<Vec<LLVMValueRef>> = acc0
            .iter()
            .map(|a| a.iter().map(|_| c::LLVMBuildPhi(self.b, vt, n)).collect())
            .collect();
        let mut acc = phis.clone();
        let load = |w: &Self, (t, len): (LLVMValueRef, u64), width: usize, step: LLVMValueRef| {
            let at = c::LLVMArrayType2(vt, len);
            let base = c::LLVMBuildMul(w.b, step, w.c32(width as u64), n);
            (0..width)
                .map(|j| {
                    let i = c::LLVMBuildAdd(w.b, base, w.c32(j as u64), n);
                    let mut idx = [w.c32(0), i];
                    let p = c::LLVMBuildInBoundsGEP2(w.b, at, t, idx.as_mut_ptr(), 2, n);
                    let v = c::LLVMBuildLoad2(w.b, vt, p, n);
                    c::LLVMSetAlignment(v, c::LLVMGetAlignment(t));
                    v
                })
                .collect::<Vec<_>>()
        };
        for u in 0..ROLL_STEPS {
            let step = c::LLVMBuildAdd(self.b, k, self.c32(u as u64), n);
            let xa = load(self, ta, roll.width[0], step);
            for (tb, acc) in tbs.iter().zip(acc.iter_mut()) {
                let xb = load(self, *tb, roll.width[1], step);
                for (e, s) in roll.slot.iter().enumerate() {
                    let mut xy = [xa[s[0]], xb[s[1]], acc[e]];
                    let mut tys = [vt];
                    acc[e] = self.call_intrinsic("llvm.fma", &mut tys, &mut xy);
                }
            }
        }
        let next = c::LLVMBuildAdd(self.b, k, self.c32(ROLL_STEPS as u64), n);
        let more = c::LLVMBuildICmp(
            self.b,
            llvm_sys::LLVMIntPredicate::LLVMIntULT,
            next,
            self.c32(plan.steps.len() as u64),
            n,
        );
        let br = c::LLVMBuildCondBr(self.b, more, head, done);
        // Unrolled again, the loop would be the code it replaces.
        let id = crate::llvm::loop_id_raw(self.cx, &[("llvm.loop.unroll.disable", None)]);
        let kind = "llvm.loop";
        let kid = c::LLVMGetMDKindIDInContext(self.cx, kind.as_ptr().cast(), kind.len() as u32);
        c::LLVMSetMetadata(br, kid, c::LLVMMetadataAsValue(self.cx, id));
        let mut blocks = [pre, head];
        let mut from = [self.c32(0), next];
        c::LLVMAddIncoming(k, from.as_mut_ptr(), blocks.as_mut_ptr(), 2);
        for ((ps, x0s), xs) in phis.iter().zip(&acc0).zip(&acc) {
            for ((&p, &x0), &x) in ps.iter().zip(x0s).zip(xs) {
                let mut from = [x0, x];
                c::LLVMAddIncoming(p, from.as_mut_ptr(), blocks.as_mut_ptr(), 2);
            }
        }
        c::LLVMPositionBuilderAtEnd(self.b, done);
        self.mma_roots.insert(done, root);
        acc.iter().map(|d| self.pack(d, m.d)).collect()
    }

    /// The next `mma` of `i`'s block, of the same kind `kind` and A fragment, that `i`'s
    /// visit can compute as well (`mma_rolled`): between the two only the fragment arrays'
    /// addresses, stores and loads and instructions that touch no memory, and every value
    /// its B and C fragments store defined before `i` (so not `i`'s result).
    unsafe fn mma_partner(&self, i: LLVMValueRef, kind: u64) -> Option<LLVMValueRef> {
        let bb = c::LLVMGetInstructionParent(i);
        let mut before = std::collections::HashSet::new();
        let mut x = c::LLVMGetFirstInstruction(bb);
        while x != i {
            before.insert(x);
            x = c::LLVMGetNextInstruction(x);
        }
        let mut x = c::LLVMGetNextInstruction(i);
        let p = loop {
            if x.is_null() {
                return None;
            }
            match ir::opcode(x) {
                O::LLVMCall => {
                    if call_kind(x) == CallKind::Warp(WarpCall::Mma) {
                        break x;
                    }
                    let name = ir::callee(x);
                    // `ptx2llvm_rt_self`: the thread pointer an `mma` call passes.
                    if !name.starts_with("llvm.lifetime")
                        && !name.starts_with("llvm.dbg")
                        && name != "ptx2llvm_rt_self"
                    {
                        return None;
                    }
                }
                O::LLVMStore | O::LLVMGetElementPtr if !self.frag_access(x) => return None,
                O::LLVMLoad if !is_frag_ptr(c::LLVMGetOperand(x, 0)) => return None,
                O::LLVMAtomicRMW
                | O::LLVMAtomicCmpXchg
                | O::LLVMFence
                | O::LLVMVAArg
                | O::LLVMInvoke
                | O::LLVMBr
                | O::LLVMSwitch
                | O::LLVMRet
                | O::LLVMUnreachable
                | O::LLVMPHI => return None,
                _ => {}
            }
            x = c::LLVMGetNextInstruction(x);
        };
        let (ia, pa) = (ir::args(i), ir::args(p));
        if ir::const_u64(pa[2]) != Some(kind) {
            return None;
        }
        let stored = |arr: LLVMValueRef| -> Option<Vec<(u64, LLVMValueRef)>> {
            let mut v = Vec::new();
            for (ptr, st) in frag_users(arr, O::LLVMStore) {
                v.push((frag_offset(self.td, arr, ptr)?, c::LLVMGetOperand(st, 0)));
            }
            v.sort_by_key(|&(o, _)| o);
            Some(v)
        };
        let a = stored(ia[3])?;
        if a.is_empty() || stored(pa[3])? != a {
            return None;
        }
        let early = |v: LLVMValueRef| {
            c::LLVMIsAInstruction(v).is_null()
                || c::LLVMGetInstructionParent(v) != bb
                || before.contains(&v)
        };
        for arr in [pa[4], pa[5]] {
            if !stored(arr)?.into_iter().all(|(_, v)| early(v)) {
                return None;
            }
        }
        Some(p)
    }

    /// The operand table of side `which` of `mma` kind `kind` over fragment elements `from`
    /// (`Roll::tables`): a stack array of `<32 x T>` filled where first built in a block and
    /// shared by the block's `mma`s of the same fragment. Returns it and its length.
    unsafe fn operand_table(
        &mut self,
        kind: u32,
        which: usize,
        from: &[LLVMValueRef],
        sources: &[Source],
        vt: LLVMTypeRef,
    ) -> (LLVMValueRef, u64) {
        let len = sources.len() as u64;
        let key = (
            self.operand_block(),
            Operand::Table {
                kind,
                which,
                of: from.to_vec(),
            },
        );
        if let Some(&t) = self.mma_operands.get(&key) {
            return (t, len);
        }
        let at = c::LLVMArrayType2(vt, len);
        let t = self.alloca(at);
        let align = llvm_sys::target::LLVMABIAlignmentOfType(self.td, vt);
        c::LLVMSetAlignment(t, align);
        let identity: Vec<u32> = (0..LANES).collect();
        for (j, s) in sources.iter().enumerate() {
            let v = if s.lanes == identity {
                from[s.elem]
            } else {
                self.shared_shuffle(from[s.elem], &s.lanes)
            };
            let mut idx = [self.c32(0), self.c32(j as u64)];
            let p = c::LLVMBuildInBoundsGEP2(self.b, at, t, idx.as_mut_ptr(), 2, c"".as_ptr());
            let st = c::LLVMBuildStore(self.b, v, p);
            c::LLVMSetAlignment(st, align);
        }
        self.mma_operands.insert(key, t);
        (t, len)
    }

    /// `elements` of A or B fragment words, each built once in the current block.
    unsafe fn shared_elements(
        &mut self,
        w: &[LLVMValueRef],
        ty: u32,
        count: usize,
        vt: LLVMTypeRef,
    ) -> Vec<LLVMValueRef> {
        let bb = self.operand_block();
        (0..count)
            .map(|i| {
                // The words an element reads: `elements` takes element `i` from word
                // `i / 2` (16-bit), `2i` and `2i + 1` (f64) or `i`.
                let (word, half) = match ty {
                    code::F16 | code::BF16 => (w[i / 2], i % 2),
                    code::F64 => return self.frag_element(w, ty, i, vt),
                    _ => (w[i], 0),
                };
                let key = (
                    bb,
                    Operand::Element {
                        word,
                        ty,
                        i: half,
                        vt,
                    },
                );
                if let Some(&v) = self.mma_operands.get(&key) {
                    return v;
                }
                let v = self.frag_element(w, ty, i, vt);
                self.mma_operands.insert(key, v);
                v
            })
            .collect()
    }

    /// `shuffle(of, lanes)`, built once in the current block.
    unsafe fn shared_shuffle(&mut self, of: LLVMValueRef, lanes: &[u32]) -> LLVMValueRef {
        let key = (
            self.operand_block(),
            Operand::Shuffle {
                of,
                lanes: lanes.to_vec(),
            },
        );
        if let Some(&v) = self.mma_operands.get(&key) {
            return v;
        }
        let v = self.shuffle(of, None, lanes);
        self.mma_operands.insert(key, v);
        v
    }

    /// The `count` elements of type `ty` in fragment words `w` (16-bit ones two to a word,
    /// the low half first; `f64` in two words, the low one first), as vectors `vt` of all
    /// lanes. 16-bit and tf32 values are exact in `f32`.
    unsafe fn elements(
        &self,
        w: &[LLVMValueRef],
        ty: u32,
        count: usize,
        vt: LLVMTypeRef,
    ) -> Vec<LLVMValueRef> {
        (0..count)
            .map(|i| self.frag_element(w, ty, i, vt))
            .collect()
    }

    /// Element `i` of `elements`.
    unsafe fn frag_element(
        &self,
        w: &[LLVMValueRef],
        ty: u32,
        i: usize,
        vt: LLVMTypeRef,
    ) -> LLVMValueRef {
        let b = self.b;
        let n = c"".as_ptr();
        let v32 = c::LLVMVectorType(self.i32, LANES);
        let k32 = |x: u64| self.splat(c::LLVMConstInt(self.i32, x, 0));
        match ty {
            code::F16 => {
                let x = if i % 2 == 1 {
                    c::LLVMBuildLShr(b, w[i / 2], k32(16), n)
                } else {
                    w[i / 2]
                };
                let h = c::LLVMBuildTrunc(b, x, c::LLVMVectorType(self.i16(), LANES), n);
                let h = c::LLVMBuildBitCast(
                    b,
                    h,
                    c::LLVMVectorType(c::LLVMHalfTypeInContext(self.cx), LANES),
                    n,
                );
                c::LLVMBuildFPExt(b, h, vt, n)
            }
            code::BF16 => {
                let x = if i % 2 == 1 {
                    c::LLVMBuildAnd(b, w[i / 2], k32(0xffff_0000), n)
                } else {
                    c::LLVMBuildShl(b, w[i / 2], k32(16), n)
                };
                c::LLVMBuildBitCast(b, x, vt, n)
            }
            // tf32 keeps the sign, the exponent and 10 fraction bits.
            code::TF32 => {
                c::LLVMBuildBitCast(b, c::LLVMBuildAnd(b, w[i], k32(0xffff_e000), n), vt, n)
            }
            code::F64 => {
                let v64 = c::LLVMVectorType(self.i64, LANES);
                let lo = c::LLVMBuildZExt(b, w[2 * i], v64, n);
                let hi = c::LLVMBuildZExt(b, w[2 * i + 1], v64, n);
                let sh = self.splat(c::LLVMConstInt(self.i64, 32, 0));
                let hi = c::LLVMBuildShl(b, hi, sh, n);
                c::LLVMBuildBitCast(b, c::LLVMBuildOr(b, lo, hi, n), vt, n)
            }
            _ => {
                debug_assert_eq!(c::LLVMTypeOf(w[i]), v32);
                c::LLVMBuildBitCast(b, w[i], vt, n)
            }
        }
    }

    /// The D words of the elements `d` of type `ty` (`f16` rounded to nearest even, two to a
    /// word). A NaN element is the canonical NaN (0x7fffffff, 0x7fff), as the H200 gives for
    /// every f16/bf16/tf32 form whatever the operands' NaNs (session 21); `f64` NaNs are left
    /// as the FMA chain makes them (not matched to the GPU: docs/GPU_DIFF.md).
    unsafe fn pack(&self, d: &[LLVMValueRef], ty: u32) -> Vec<LLVMValueRef> {
        let b = self.b;
        let n = c"".as_ptr();
        let v32 = c::LLVMVectorType(self.i32, LANES);
        match ty {
            code::F16 => {
                let ht = c::LLVMVectorType(c::LLVMHalfTypeInContext(self.cx), LANES);
                let v16 = c::LLVMVectorType(self.i16(), LANES);
                let bits = |x: LLVMValueRef| {
                    let h = c::LLVMBuildFPTrunc(b, x, ht, n);
                    let h = c::LLVMBuildBitCast(b, h, v16, n);
                    let canon = self.splat(c::LLVMConstInt(self.i16(), 0x7fff, 0));
                    let h = c::LLVMBuildSelect(b, self.is_nan(x), canon, h, n);
                    c::LLVMBuildZExt(b, h, v32, n)
                };
                let sh = self.splat(self.c32(16));
                d.chunks(2)
                    .map(|p| {
                        let lo = bits(p[0]);
                        match p.get(1) {
                            Some(&x) => {
                                c::LLVMBuildOr(b, lo, c::LLVMBuildShl(b, bits(x), sh, n), n)
                            }
                            None => lo,
                        }
                    })
                    .collect()
            }
            code::F64 => {
                let v64 = c::LLVMVectorType(self.i64, LANES);
                let sh = self.splat(c::LLVMConstInt(self.i64, 32, 0));
                d.iter()
                    .flat_map(|&x| {
                        let x = c::LLVMBuildBitCast(b, x, v64, n);
                        let lo = c::LLVMBuildTrunc(b, x, v32, n);
                        let hi = c::LLVMBuildTrunc(b, c::LLVMBuildLShr(b, x, sh, n), v32, n);
                        [lo, hi]
                    })
                    .collect()
            }
            code::F32 => {
                let canon = self.splat(self.c32(0x7fff_ffff));
                d.iter()
                    .map(|&x| {
                        let w = c::LLVMBuildBitCast(b, x, v32, n);
                        c::LLVMBuildSelect(b, self.is_nan(x), canon, w, n)
                    })
                    .collect()
            }
            _ => d
                .iter()
                .map(|&x| c::LLVMBuildBitCast(b, x, v32, n))
                .collect(),
        }
    }

    /// Lanes of float vector `x` that are NaNs.
    unsafe fn is_nan(&self, x: LLVMValueRef) -> LLVMValueRef {
        c::LLVMBuildFCmp(
            self.b,
            llvm_sys::LLVMRealPredicate::LLVMRealUNO,
            x,
            x,
            c"".as_ptr(),
        )
    }

    unsafe fn i16(&self) -> LLVMTypeRef {
        c::LLVMInt16TypeInContext(self.cx)
    }

    /// Serves the loads of fragment array `d` (after the instruction) from its words `w`
    /// (`<32 x i32>` each, all lanes).
    unsafe fn serve_loads(&mut self, d: LLVMValueRef, w: &[LLVMValueRef]) {
        let b = self.b;
        let n = c"".as_ptr();
        let zero = c::LLVMConstNull(c::LLVMVectorType(self.i32, LANES));
        let word = |k: u64| w.get(k as usize).copied().unwrap_or(zero);
        for (p, ld) in frag_users(d, O::LLVMLoad) {
            let Some(off) = frag_offset(self.td, d, p) else {
                continue;
            };
            let t = c::LLVMTypeOf(ld);
            let bits = llvm_sys::target::LLVMSizeOfTypeInBits(self.td, t);
            let lo = word(off / 4);
            let v = if bits == 64 {
                let hi = word(off / 4 + 1);
                let vt64 = c::LLVMVectorType(self.i64, LANES);
                let lo = c::LLVMBuildZExt(b, lo, vt64, n);
                let hi = c::LLVMBuildZExt(b, hi, vt64, n);
                let sh = c::LLVMBuildShl(b, hi, self.splat(c::LLVMConstInt(self.i64, 32, 0)), n);
                c::LLVMBuildOr(b, lo, sh, n)
            } else {
                lo
            };
            let v = c::LLVMBuildBitCast(b, v, self.vty(t), n);
            self.pred_slots.insert(p, v);
        }
    }

    /// The words (`<32 x i32>` each, all lanes, at least `need`) that the stores into
    /// fragment array `a` (before the instruction) put there: zeros in the lanes not running,
    /// as the coroutine scheme's missing lanes give, and for words no store fills (a store of
    /// an undefined register is dropped by the cleanup).
    unsafe fn store_words(&mut self, a: LLVMValueRef, need: usize) -> Vec<LLVMValueRef> {
        let words = (frag_words(self.td, a) as usize).max(need);
        let mut w = vec![c::LLVMConstNull(c::LLVMVectorType(self.i32, LANES)); words];
        for (p, st) in frag_users(a, O::LLVMStore) {
            let Some(off) = frag_offset(self.td, a, p) else {
                continue;
            };
            let v = self.get(c::LLVMGetOperand(st, 0), true);
            for (k, x) in self.shared_lane_words(v).into_iter().enumerate() {
                w[(off / 4) as usize + k] = x;
            }
        }
        w
    }

    /// `lane_words(v)`, a one-word value's built once per block and mask (the `mma`s of a
    /// block pass the same fragment registers).
    unsafe fn shared_lane_words(&mut self, v: LLVMValueRef) -> Vec<LLVMValueRef> {
        let key = (self.operand_block(), Operand::Word { v, mask: self.mask });
        if let Some(&w) = self.mma_operands.get(&key) {
            return vec![w];
        }
        let w = self.lane_words(v);
        if let [x] = w[..] {
            self.mma_operands.insert(key, x);
        }
        w
    }

    /// The `words` words of component-major array `arr` (loaded now).
    unsafe fn array_words(&self, arr: LLVMValueRef, words: u64) -> Vec<LLVMValueRef> {
        (0..words).map(|k| self.word(arr, k)).collect()
    }

    /// A stack array of `words` component-major words (`<32 x i32>` each, at their alignment).
    unsafe fn words_array(&self, words: u64) -> LLVMValueRef {
        let arr = self.alloca(c::LLVMArrayType2(self.i32, words * LANES as u64));
        c::LLVMSetAlignment(arr, 128);
        arr
    }

    /// Declares (once) and calls the runtime's void function `name` with `xs` of types `pt`.
    unsafe fn call_rt(
        &self,
        name: &std::ffi::CStr,
        pt: &mut [LLVMTypeRef],
        xs: &mut [LLVMValueRef],
    ) {
        let ft = c::LLVMFunctionType(
            c::LLVMVoidTypeInContext(self.cx),
            pt.as_mut_ptr(),
            pt.len() as u32,
            0,
        );
        let mut f = c::LLVMGetNamedFunction(self.m, name.as_ptr());
        if f.is_null() {
            f = c::LLVMAddFunction(self.m, name.as_ptr(), ft);
        }
        c::LLVMBuildCall2(
            self.b,
            ft,
            f,
            xs.as_mut_ptr(),
            xs.len() as u32,
            c"".as_ptr(),
        );
    }

    /// `ldmatrix`/`stmatrix` (`ptx2llvm_rt_ldmatrix(t, pc, num, trans, addr, regs)`) for the
    /// whole warp: the lanes' row addresses (zeros for lanes not running, which read or write
    /// nothing) and registers go to `ptx2llvm_rt_warp_ldmatrix`/`_stmatrix`.
    pub(super) unsafe fn ldst_matrix(
        &mut self,
        i: LLVMValueRef,
        w: WarpCall,
    ) -> Result<(), String> {
        let b = self.b;
        let n = c"".as_ptr();
        let args = ir::args(i);
        let (Some(num), Some(trans)) = (ir::const_u64(args[2]), ir::const_u64(args[3])) else {
            return Err(format!(
                "`{}` of a shape computed at run time",
                w.spelling()
            ));
        };
        let vt64 = c::LLVMVectorType(self.i64, LANES);
        let addr = self.get(args[4], true);
        // `ldmatrix` whose rows all lie in the CTA's shared memory, run by the whole warp:
        // vector loads of the rows and a permutation (`ldmatrix_rows`); else (a row elsewhere,
        // which may fault and then names the lane that gave it, or lanes not running) the
        // runtime call below.
        let inline = (w == WarpCall::LdMatrix && num <= 4).then(|| {
            let ok = self.rows_in_shared(addr, 8 * num as u32);
            let fast = self.append("ldmatrix.rows");
            let slow = self.append("ldmatrix.call");
            c::LLVMBuildCondBr(b, ok, fast, slow);
            c::LLVMPositionBuilderAtEnd(b, fast);
            let words = self.ldmatrix_rows(addr, num as u32, trans != 0);
            let fast = c::LLVMGetInsertBlock(b);
            c::LLVMPositionBuilderAtEnd(b, slow);
            (fast, words)
        });
        let addr = c::LLVMBuildSelect(b, self.mask, addr, c::LLVMConstNull(vt64), n);
        let addrs = self.alloca(vt64);
        c::LLVMSetAlignment(addrs, 128);
        c::LLVMBuildStore(b, addr, addrs);
        let regs = self.words_array(num);
        if w == WarpCall::StMatrix {
            let words = self.store_words(args[5], num as usize);
            for (k, v) in words.into_iter().enumerate().take(num as usize) {
                c::LLVMBuildStore(b, v, self.word_ptr(regs, k as u64));
            }
        }
        let mut pt = [self.i32, self.i32, self.i32, self.ptr, self.ptr];
        let mut xs = [
            self.c32(num),
            self.c32(trans),
            self.bits(self.mask),
            addrs,
            regs,
        ];
        let name = if w == WarpCall::LdMatrix {
            c"ptx2llvm_rt_warp_ldmatrix"
        } else {
            c"ptx2llvm_rt_warp_stmatrix"
        };
        self.call_rt(name, &mut pt, &mut xs);
        if w == WarpCall::LdMatrix {
            let mut out = self.array_words(regs, num);
            if let Some((fast, words)) = inline {
                let slow = c::LLVMGetInsertBlock(b);
                let join = self.append("ldmatrix");
                c::LLVMBuildBr(b, join);
                c::LLVMPositionBuilderAtEnd(b, fast);
                c::LLVMBuildBr(b, join);
                c::LLVMPositionBuilderAtEnd(b, join);
                for (o, v) in out.iter_mut().zip(words) {
                    let phi = ir::phi(b, c::LLVMTypeOf(v), n, &[(v, fast), (*o, slow)]);
                    *o = phi;
                }
            }
            self.serve_loads(args[5], &out);
        }
        Ok(())
    }

    /// Whether every lane runs and the first `rows` lanes' row addresses `addr` (`<32 x i64>`)
    /// each have their 16 bytes inside the CTA's shared memory (`[shared, shared +
    /// %total_smem_size)`, always readable): then no row read can fault.
    unsafe fn rows_in_shared(&self, addr: LLVMValueRef, rows: u32) -> LLVMValueRef {
        use llvm_sys::LLVMIntPredicate::{LLVMIntEQ, LLVMIntULE, LLVMIntULT};
        let b = self.b;
        let n = c"".as_ptr();
        let base = c::LLVMBuildPtrToInt(b, self.shared_base(), self.i64, n);
        let mut at = [c::LLVMConstInt(
            self.i64,
            crate::runtime::abi::offset::TOTAL_SMEM_SIZE as u64,
            0,
        )];
        let i8t = c::LLVMInt8TypeInContext(self.cx);
        let p = c::LLVMBuildGEP2(b, i8t, self.ctx, at.as_mut_ptr(), 1, n);
        let size = c::LLVMBuildLoad2(b, self.i32, p, n);
        let size = self.splat(c::LLVMBuildZExt(b, size, self.i64, n));
        let rel = c::LLVMBuildSub(b, addr, self.splat(base), n);
        // `rel < size` first, so that `rel + 16` cannot wrap.
        let below = c::LLVMBuildICmp(b, LLVMIntULT, rel, size, n);
        let sixteen = self.splat(c::LLVMConstInt(self.i64, 16, 0));
        let end = c::LLVMBuildAdd(b, rel, sixteen, n);
        let fits = c::LLVMBuildICmp(b, LLVMIntULE, end, size, n);
        let inside = c::LLVMBuildAnd(b, below, fits, n);
        // A GPU stops on a row that is not 16-byte aligned (CUDA_ERROR_MISALIGNED_ADDRESS,
        // measured on an H200): the runtime call fails the launch for such a row.
        let fifteen = self.splat(c::LLVMConstInt(self.i64, 15, 0));
        let low = c::LLVMBuildAnd(b, addr, fifteen, n);
        let zero = self.splat(c::LLVMConstInt(self.i64, 0, 0));
        let aligned = c::LLVMBuildICmp(b, LLVMIntEQ, low, zero, n);
        let inside = c::LLVMBuildAnd(b, inside, aligned, n);
        let mut unused: Vec<LLVMValueRef> = (0..LANES)
            .map(|l| c::LLVMConstInt(self.i1, u64::from(l >= rows), 0))
            .collect();
        let unused = c::LLVMConstVector(unused.as_mut_ptr(), LANES);
        let ok = self.bits(c::LLVMBuildOr(b, inside, unused, n));
        let all = c::LLVMConstAllOnes(self.i32);
        let rows_ok = c::LLVMBuildICmp(b, LLVMIntEQ, ok, all, n);
        let full = c::LLVMBuildICmp(b, LLVMIntEQ, self.bits(self.mask), all, n);
        c::LLVMBuildAnd(b, rows_ok, full, n)
    }

    /// The `num` result words of `ldmatrix.m8n8.x{num}{.trans}.b16` for a whole warp whose
    /// row addresses are `addr` (`<32 x i64>`, readable): each row (8 halves) one vector
    /// load, and matrix `j`'s 64 halves one permutation into the lanes' pairs, the layout of
    /// `runtime/matrix.rs`'s `m8n8_pos` (lane `4 g + q` holds row `g`, halves `2 q` and
    /// `2 q + 1`; transposed, those two rows' half `g`).
    unsafe fn ldmatrix_rows(&self, addr: LLVMValueRef, num: u32, trans: bool) -> Vec<LLVMValueRef> {
        let b = self.b;
        let n = c"".as_ptr();
        let rt = c::LLVMVectorType(self.i16(), 8);
        let v32 = c::LLVMVectorType(self.i32, LANES);
        let pick: Vec<u32> = (0..2 * LANES)
            .map(|h| {
                let (lane, half) = (h / 2, h % 2);
                let (g, q) = (lane / 4, lane % 4);
                if trans {
                    8 * (2 * q + half) + g
                } else {
                    8 * g + 2 * q + half
                }
            })
            .collect();
        (0..num)
            .map(|j| {
                let rows: Vec<LLVMValueRef> = (8 * j..8 * j + 8)
                    .map(|r| {
                        let a = c::LLVMBuildExtractElement(b, addr, self.c32(r as u64), n);
                        let p = c::LLVMBuildIntToPtr(b, a, self.ptr, n);
                        let ld = c::LLVMBuildLoad2(b, rt, p, n);
                        // The runtime reads rows at any address; so does this.
                        c::LLVMSetAlignment(ld, 1);
                        ld
                    })
                    .collect();
                let m = self.concat(rows);
                c::LLVMBuildBitCast(b, self.shuffle(m, None, &pick), v32, n)
            })
            .collect()
    }

    /// `movmatrix` (`ptx2llvm_rt_movmatrix(t, pc, a)`) for the whole warp, through
    /// `ptx2llvm_rt_warp_movmatrix` (lanes not running give zeros, as missing lanes do on
    /// the coroutine scheme).
    pub(super) unsafe fn movmatrix(&mut self, i: LLVMValueRef) -> Result<(), String> {
        let a = ir::args(i)[2];
        let src = self.words_array(1);
        let v = self.get(a, true);
        let w = self.lane_words(v);
        c::LLVMBuildStore(self.b, w[0], self.word_ptr(src, 0));
        let dst = self.words_array(1);
        let mut pt = [self.ptr, self.ptr];
        let mut xs = [src, dst];
        self.call_rt(c"ptx2llvm_rt_warp_movmatrix", &mut pt, &mut xs);
        let r = self.word(dst, 0);
        self.set(i, r);
        Ok(())
    }

    /// Word `k` of all lanes of a component-major array.
    unsafe fn word(&self, arr: LLVMValueRef, k: u64) -> LLVMValueRef {
        let vt = c::LLVMVectorType(self.i32, LANES);
        let p = self.word_ptr(arr, k);
        c::LLVMBuildLoad2(self.b, vt, p, c"".as_ptr())
    }

    unsafe fn word_ptr(&self, arr: LLVMValueRef, k: u64) -> LLVMValueRef {
        let mut idx = [c::LLVMConstInt(self.i64, k * LANES as u64, 0)];
        c::LLVMBuildGEP2(self.b, self.i32, arr, idx.as_mut_ptr(), 1, c"".as_ptr())
    }

    /// The lanes of `v` (32- or 64-bit elements) as one or two words (`<32 x i32>`, the low
    /// one first); lanes not running give zeros, as the coroutine scheme's missing lanes do.
    unsafe fn lane_words(&self, v: LLVMValueRef) -> Vec<LLVMValueRef> {
        let b = self.b;
        let n = c"".as_ptr();
        // Bits per lane (a lane of `<64 x bfloat>` is a pair).
        let bits = llvm_sys::target::LLVMSizeOfTypeInBits(self.td, c::LLVMTypeOf(v)) / LANES as u64;
        let vt = c::LLVMVectorType(self.i32, LANES);
        if bits == 64 {
            let vt64 = c::LLVMVectorType(self.i64, LANES);
            let x = c::LLVMBuildBitCast(b, v, vt64, n);
            let x = c::LLVMBuildSelect(b, self.mask, x, c::LLVMConstNull(vt64), n);
            let lo = c::LLVMBuildTrunc(b, x, vt, n);
            let hi = c::LLVMBuildLShr(b, x, self.splat(c::LLVMConstInt(self.i64, 32, 0)), n);
            vec![lo, c::LLVMBuildTrunc(b, hi, vt, n)]
        } else {
            let x = c::LLVMBuildBitCast(b, v, vt, n);
            vec![c::LLVMBuildSelect(b, self.mask, x, c::LLVMConstNull(vt), n)]
        }
    }
}

/// Turns off the register-pressure heuristics of LLVM's pre-RA machine scheduler
/// (`-misched-regpressure=false`), once per process, before the first module with an inline
/// `mma` is compiled. With Triton's matmul (64 `mma` per loop iteration, 128 accumulator
/// vectors live, far beyond the 32 vector registers) those heuristics reorder the FMA chains
/// and their operand shuffles into about twice the spill code: 18,898 `vmovaps` in the
/// loop's function against 8,438 without them (source order, `-enable-misched=false`:
/// 8,102), and the kernel ran 1.9x longer (matmul_fp16 512^3, 3 alternated pairs). The
/// scheduler still orders for latency and resources. A process-wide LLVM option, as
/// `constant_splats`: modules compiled later in the same process get it too (only their
/// instruction order can change, not what they compute).
fn schedule_without_pressure() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| crate::llvm::fission::parse_llvm_options(&["-misched-regpressure=false"]));
}

/// The loads or stores (`op`) of fragment array `a`, with the pointer each uses.
unsafe fn frag_users(a: LLVMValueRef, op: O) -> Vec<(LLVMValueRef, LLVMValueRef)> {
    let mut out = Vec::new();
    let mut take = |p: LLVMValueRef, x: LLVMValueRef| {
        if ir::opcode(x) == op && (op == O::LLVMLoad || c::LLVMGetOperand(x, 1) == p) {
            out.push((p, x));
        }
    };
    for user in ir::users(a) {
        if !c::LLVMIsAGetElementPtrInst(user).is_null() {
            for x in ir::users(user) {
                take(user, x);
            }
        } else if c::LLVMIsACallInst(user).is_null() {
            take(a, user);
        }
    }
    out
}

/// Words of fragment array `a`: past the last one its loads and stores reach (at least one).
unsafe fn frag_words(td: llvm_sys::target::LLVMTargetDataRef, a: LLVMValueRef) -> u64 {
    let mut top = 1u64;
    for op in [O::LLVMLoad, O::LLVMStore] {
        for (p, x) in frag_users(a, op) {
            let t = if op == O::LLVMLoad {
                c::LLVMTypeOf(x)
            } else {
                c::LLVMTypeOf(c::LLVMGetOperand(x, 0))
            };
            let w = llvm_sys::target::LLVMSizeOfTypeInBits(td, t) / 32;
            if let Some(o) = frag_offset(td, a, p) {
                top = top.max(o / 4 + w);
            }
        }
    }
    top
}
