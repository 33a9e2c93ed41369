//! CTA barriers on the warp engine, two schemes ([`Scheme`]). First choice, *static regions*:
//! the warp function runs from its state (the start, or after barrier k) to the next barrier
//! and returns that barrier's number, keeping what lives across it in a frame at offsets fixed
//! here (`live_across`), and the CTA function calls it, inlined, for every unfinished warp in
//! each round: no resume through a handle, no frame switch (a coroutine's resume cost as much
//! as a barrier interval's work in the halving-loop reduction). The general fallback, for
//! kernels with memory of their own or frames beyond [`REGION_SLOT_MAX`]: a warp function that
//! is an LLVM coroutine (switch ABI), and each barrier is a suspension point of it. The CTA function starts every warp, then resumes the waiting warps round by
//! round until all have finished: a round ends when every warp that has not finished waits at
//! a barrier, which is the moment a GPU releases it. LLVM's CoroSplit (in the default
//! pipeline) keeps what lives across a barrier in the warp's frame, so the code between
//! barriers is the same straight SIMD code as a barrier-free kernel's.
//!
//! A warp and its CTA function talk through the warp's *mailbox*, the head of a slot of the
//! CTA function's arena ([`SLOT`] bytes per warp): the warp says there whether it waits or
//! has finished and what it brings to a `bar.red`, and finds the CTA-wide reductions there
//! when it is resumed. The rest of the slot holds the warp's frame when it fits (the capacity
//! the CTA function writes in the mailbox before starting the warp), else the frame comes from
//! `malloc` (a fault replay, which runs one lane per coroutine, always takes that way).
//!
//! Scope (`check` refuses the rest, and the kernel keeps the thread-loop or coroutine
//! schemes): one barrier id for the whole kernel, a constant, without a thread count, no
//! `bar.arrive`, and no barrier in a block some live lanes of the warp may skip (a barrier
//! under divergent control flow). Then every warp that waits, waits at the same barrier, and
//! no schedule is needed beyond the rounds.

use std::collections::{HashMap, HashSet};

use llvm_sys::core as c;
use llvm_sys::prelude::*;
use llvm_sys::LLVMIntPredicate as P;

use super::cfg::Cfg;
use super::emit::Warp;
use super::ir;
use super::uniform::{call_kind, CallKind};
use crate::runtime::abi::bar_red;

/// Bytes of the CTA function's arena per warp: the mailbox, then room for the frame.
pub const SLOT: u32 = 4096;
/// The mailbox's size, which keeps the frame after it aligned like a 32-lane vector.
pub const HEAD: u32 = 128;
/// The frame's alignment (a `<32 x i32>` spill).
const ALIGN: u32 = 128;

/// Mailbox fields (`i32` each, by index).
pub mod field {
    /// [`super::WAITING`] or [`super::FINISHED`], written by the warp before it gives control
    /// back.
    pub const STATE: u32 = 0;
    /// `bar.red` contributions, then the CTA-wide results: the population count, "all", "any".
    pub const POPC: u32 = 1;
    pub const ALL: u32 = 2;
    pub const ANY: u32 = 3;
    /// Bytes after the mailbox the frame may use (written by the CTA function).
    pub const CAP: u32 = 4;
}
pub const WAITING: u64 = 1;
pub const FINISHED: u64 = 2;

/// What a region-scheme warp function returns when the warp has finished (otherwise the
/// state to enter it at next: the number of the barrier it waits at, from 1).
pub const DONE: u32 = u32::MAX;
/// The largest slot (mailbox and frame) of a warp in the region scheme; a kernel whose values
/// live across barriers need more keeps coroutines (frames beyond the slot from `malloc`).
pub const REGION_SLOT_MAX: u32 = 16384;

/// How a warp function of a kernel meets CTA barriers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scheme {
    /// No CTA barrier: one call runs the warp to its end.
    None,
    /// An LLVM coroutine per warp, resumed round by round (the general fallback).
    Coroutines,
    /// Static regions between barriers: each call runs the warp from its state (the start or
    /// a barrier) to the next barrier or its end and returns where it stopped; the values
    /// that live across a barrier are in the warp's frame, at offsets fixed when the warp
    /// function is built. The CTA function calls it for each waiting warp in a round, with
    /// the call inlined (no resume through a handle, no frame switch).
    Regions,
}

/// A CTA barrier call of the cpu lowering (`target/cpu/sync.rs`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BarrierCall {
    /// `ptx2llvm_rt_barrier_sync(ctx, id, count)`.
    Sync,
    /// `ptx2llvm_rt_barrier_red(ctx, id, count, op, pred)`.
    Red,
    /// `ptx2llvm_rt_barrier_arrive(ctx, id, count)`.
    Arrive,
}

impl BarrierCall {
    pub fn of(name: &str) -> Option<BarrierCall> {
        Some(match name {
            "ptx2llvm_rt_barrier_sync" => BarrierCall::Sync,
            "ptx2llvm_rt_barrier_red" => BarrierCall::Red,
            "ptx2llvm_rt_barrier_arrive" => BarrierCall::Arrive,
            _ => return None,
        })
    }
}

/// What the warp function keeps of its coroutine while it is built.
pub struct Coro {
    id: LLVMValueRef,
    hdl: LLVMValueRef,
    mailbox: LLVMValueRef,
    in_slot: LLVMValueRef,
    /// `coro.end` and the return of the handle: where a suspension gives control back.
    ret: LLVMBasicBlockRef,
    /// Frees the frame, then `ret`.
    cleanup: LLVMBasicBlockRef,
}

/// Why barrier call `i` is outside the scope (see the module doc), given the id the kernel's
/// other barriers use; else its constant id.
///
/// # Safety
/// `i` must be a call of `kind`.
pub unsafe fn refusal(
    i: LLVMValueRef,
    kind: BarrierCall,
    partial: bool,
    id_so_far: Option<u64>,
) -> Result<u64, String> {
    let args = ir::args(i);
    let what = match kind {
        BarrierCall::Sync => "bar.sync",
        BarrierCall::Red => "bar.red",
        BarrierCall::Arrive => return Err("`bar.arrive` (a barrier without waiting)".into()),
    };
    let Some(id) = ir::const_u64(args[1]) else {
        return Err(format!("`{what}` with a barrier id computed at run time"));
    };
    if ir::const_u64(args[2]) != Some(0) {
        return Err(format!("`{what}` with a thread count"));
    }
    if id >= 16 {
        return Err(format!("`{what}` {id}: barrier ids are 0..15"));
    }
    if let Some(other) = id_so_far.filter(|&o| o != id) {
        return Err(format!(
            "barriers {other} and {id} (more than one barrier id)"
        ));
    }
    if kind == BarrierCall::Red && ir::const_u64(args[3]).is_none_or(|op| op > 2) {
        return Err("`bar.red` with an unknown operator".into());
    }
    if partial {
        return Err(format!(
            "`{what}` under divergent control flow (lanes of a warp may reach it at different \
             times)"
        ));
    }
    Ok(id)
}

/// Why module `m` cannot give coroutine frames `malloc`/`free`: it has a function of its own
/// by one of those names (a kernel named `free`), which calls would reach instead.
///
/// # Safety
/// `m` must be a valid module.
pub unsafe fn libc_clash(m: LLVMModuleRef) -> Option<String> {
    for name in [c"malloc", c"free"] {
        let f = c::LLVMGetNamedFunction(m, name.as_ptr());
        if !f.is_null() && c::LLVMIsDeclaration(f) == 0 {
            return Some(format!(
                "CTA barriers in a module with a function named `{}` (the warp frames' \
                 allocator)",
                name.to_string_lossy()
            ));
        }
    }
    None
}

impl Warp<'_> {
    unsafe fn mail(&self, k: u32) -> LLVMValueRef {
        let mut idx = [self.c32(k as u64)];
        let mailbox = match (&self.coro, &self.regions) {
            (Some(co), _) => co.mailbox,
            (None, Some(r)) => r.slot,
            (None, None) => unreachable!("a barrier outside a coroutine or region warp function"),
        };
        c::LLVMBuildGEP2(self.b, self.i32, mailbox, idx.as_mut_ptr(), 1, c"".as_ptr())
    }

    /// Makes the warp function a coroutine: its id, its frame (in the slot when it fits),
    /// its handle; at the builder's position, before anything else of the body.
    pub unsafe fn coro_begin(&mut self) {
        let b = self.b;
        let n = c"".as_ptr();
        let i64t = self.i64;
        let i8t = c::LLVMInt8TypeInContext(self.cx);
        let a = c::LLVMCreateEnumAttribute(self.cx, ir::attr_kind(c"presplitcoroutine"), 0);
        c::LLVMAddAttributeAtIndex(self.dst, llvm_sys::LLVMAttributeFunctionIndex, a);
        let mailbox = c::LLVMGetParam(self.dst, c::LLVMCountParams(self.dst) - 1);
        let null = c::LLVMConstNull(self.ptr);
        let id = self.call_intrinsic(
            "llvm.coro.id",
            &mut [],
            &mut [self.c32(ALIGN as u64), null, null, null],
        );
        let size = self.call_intrinsic("llvm.coro.size", &mut [i64t], &mut []);
        let mut idx = [self.c32(field::CAP as u64)];
        let capp = c::LLVMBuildGEP2(b, self.i32, mailbox, idx.as_mut_ptr(), 1, n);
        let cap = c::LLVMBuildZExt(b, c::LLVMBuildLoad2(b, self.i32, capp, n), i64t, n);
        let fits = c::LLVMBuildICmp(b, P::LLVMIntULE, size, cap, n);
        let mut idx = [c::LLVMConstInt(i64t, HEAD as u64, 0)];
        let in_slot = c::LLVMBuildGEP2(b, i8t, mailbox, idx.as_mut_ptr(), 1, n);
        let here = c::LLVMGetInsertBlock(b);
        let heap = self.append("co.heap");
        let join = self.append("co.begin");
        c::LLVMBuildCondBr(b, fits, join, heap);
        // A frame too big for the slot: `malloc` with room to align it, the allocation's
        // address kept just below the frame for `free`.
        c::LLVMPositionBuilderAtEnd(b, heap);
        let more = c::LLVMBuildAdd(b, size, c::LLVMConstInt(i64t, ALIGN as u64, 0), n);
        let p = self.call_system("malloc", self.ptr, &mut [i64t], &mut [more]);
        let pi = c::LLVMBuildPtrToInt(b, p, i64t, n);
        let up = c::LLVMBuildAdd(b, pi, c::LLVMConstInt(i64t, ALIGN as u64, 0), n);
        let ai = c::LLVMBuildAnd(b, up, c::LLVMConstInt(i64t, !(ALIGN as u64 - 1), 0), n);
        let aligned = c::LLVMBuildIntToPtr(b, ai, self.ptr, n);
        let back = c::LLVMBuildIntToPtr(
            b,
            c::LLVMBuildSub(b, ai, c::LLVMConstInt(i64t, 8, 0), n),
            self.ptr,
            n,
        );
        c::LLVMBuildStore(b, p, back);
        c::LLVMBuildBr(b, join);
        c::LLVMPositionBuilderAtEnd(b, join);
        let mem = ir::phi(b, self.ptr, n, &[(in_slot, here), (aligned, heap)]);
        let hdl = self.call_intrinsic("llvm.coro.begin", &mut [], &mut [id, mem]);
        let ret = self.append("co.ret");
        let cleanup = self.append("co.cleanup");
        self.coro = Some(Coro {
            id,
            hdl,
            mailbox,
            in_slot,
            ret,
            cleanup,
        });
    }

    /// A call of a C library function `name` (declared on first use).
    unsafe fn call_system(
        &self,
        name: &str,
        ret: LLVMTypeRef,
        params: &mut [LLVMTypeRef],
        args: &mut [LLVMValueRef],
    ) -> LLVMValueRef {
        let cname = std::ffi::CString::new(name).unwrap_or_default();
        let ft = c::LLVMFunctionType(ret, params.as_mut_ptr(), params.len() as u32, 0);
        let mut f = c::LLVMGetNamedFunction(self.m, cname.as_ptr());
        if f.is_null() {
            f = c::LLVMAddFunction(self.m, cname.as_ptr(), ft);
        }
        c::LLVMBuildCall2(
            self.b,
            ft,
            f,
            args.as_mut_ptr(),
            args.len() as u32,
            c"".as_ptr(),
        )
    }

    /// Barrier call `i`: the warp's contribution in its mailbox, a suspension, and after the
    /// resumption the CTA-wide result of a `bar.red`.
    pub(super) unsafe fn barrier(&mut self, i: LLVMValueRef, kind: BarrierCall) {
        let b = self.b;
        let n = c"".as_ptr();
        let args = ir::args(i);
        let (popc, all, any) = if kind == BarrierCall::Red {
            let p = self.get(args[4], true);
            let zero = c::LLVMConstNull(c::LLVMTypeOf(p));
            let pm = c::LLVMBuildICmp(b, P::LLVMIntNE, p, zero, n);
            let on = self.bits(c::LLVMBuildAnd(b, self.mask, pm, n));
            let off = self.bits(c::LLVMBuildAnd(b, self.mask, c::LLVMBuildNot(b, pm, n), n));
            let popc = self.call_intrinsic("llvm.ctpop", &mut [self.i32], &mut [on]);
            let z = |v: LLVMValueRef, pred: P| {
                let t = c::LLVMBuildICmp(b, pred, v, self.c32(0), n);
                c::LLVMBuildZExt(b, t, self.i32, n)
            };
            (popc, z(off, P::LLVMIntEQ), z(on, P::LLVMIntNE))
        } else {
            (self.c32(0), self.c32(1), self.c32(0))
        };
        // The region scheme returns its state; its contributions matter only with a
        // `bar.red` in the kernel.
        let contributes = self.regions.as_ref().is_none_or(|r| r.red);
        for (k, v) in [
            (field::POPC, popc),
            (field::ALL, all),
            (field::ANY, any),
            (field::STATE, self.c32(WAITING)),
        ] {
            if contributes && (k != field::STATE || self.regions.is_none()) {
                c::LLVMBuildStore(b, v, self.mail(k));
            }
        }
        if self.regions.is_some() {
            self.region_end();
            if let Some(r) = self.regions.as_mut() {
                r.numbers.insert(i, r.resumes);
            }
        } else {
            self.suspend();
        }
        if kind == BarrierCall::Red {
            let k = match ir::const_u64(args[3]).map(|v| v as u32) {
                Some(bar_red::POPC) => field::POPC,
                Some(bar_red::AND) => field::ALL,
                _ => field::ANY,
            };
            // The region scheme's CTA function leaves the results in one place for all warps.
            let at = match &self.regions {
                Some(r) => {
                    let mut idx = [self.c32(k as u64)];
                    c::LLVMBuildGEP2(b, self.i32, r.results, idx.as_mut_ptr(), 1, n)
                }
                None => self.mail(k),
            };
            let r = c::LLVMBuildLoad2(b, self.i32, at, n);
            self.set(i, r);
        }
    }

    /// `coro.suspend` and its three ways on: given back, resumed (where the builder goes on),
    /// destroyed.
    unsafe fn suspend(&mut self) {
        let co = self.coro.as_ref().expect("a coroutine warp function");
        let (ret, cleanup) = (co.ret, co.cleanup);
        let tok = c::LLVMConstNull(c::LLVMTokenTypeInContext(self.cx));
        let s = self.call_intrinsic(
            "llvm.coro.suspend",
            &mut [],
            &mut [tok, c::LLVMConstInt(self.i1, 0, 0)],
        );
        let resume = self.append("co.resume");
        let sw = c::LLVMBuildSwitch(self.b, s, ret, 2);
        let i8t = c::LLVMInt8TypeInContext(self.cx);
        c::LLVMAddCase(sw, c::LLVMConstInt(i8t, 0, 0), resume);
        c::LLVMAddCase(sw, c::LLVMConstInt(i8t, 1, 0), cleanup);
        c::LLVMPositionBuilderAtEnd(self.b, resume);
    }

    /// The end of the warp function: `ret void`, or for a coroutine "finished" in the mailbox,
    /// the frame freed, and the handle returned.
    pub(super) unsafe fn finish(&mut self) {
        if let Some(r) = self.regions.as_mut() {
            r.in_order = in_order(self.cfg, &r.numbers, r.resumes);
            if r.in_order {
                r.peel = warp_dependent_rounds(self.cfg, self.facts, self.td, &r.numbers);
            }
            r.alike = alike(self.cfg, self.facts, self.td);
        }
        if self.regions.is_some() {
            c::LLVMBuildRet(self.b, self.c32(DONE as u64));
            // The guards' idle warps go to the state of their join's barrier.
            let Some(r) = self.regions.as_ref() else {
                return;
            };
            for &(st, code, bar) in &r.patches {
                match r.numbers.get(&bar) {
                    Some(&k) => c::LLVMSetOperand(st, 0, self.c32(k as u64)),
                    None => c::LLVMSetOperand(code, 0, self.c32(0)),
                }
            }
            return;
        }
        let Some(co) = self.coro.as_ref() else {
            c::LLVMBuildRetVoid(self.b);
            return;
        };
        let (id, hdl, in_slot, ret, cleanup) = (co.id, co.hdl, co.in_slot, co.ret, co.cleanup);
        let b = self.b;
        let n = c"".as_ptr();
        c::LLVMBuildStore(b, self.c32(FINISHED), self.mail(field::STATE));
        c::LLVMBuildBr(b, cleanup);
        c::LLVMPositionBuilderAtEnd(b, cleanup);
        let mem = self.call_intrinsic("llvm.coro.free", &mut [], &mut [id, hdl]);
        let null = c::LLVMConstNull(self.ptr);
        let none = c::LLVMBuildOr(
            b,
            c::LLVMBuildICmp(b, P::LLVMIntEQ, mem, in_slot, n),
            c::LLVMBuildICmp(b, P::LLVMIntEQ, mem, null, n),
            n,
        );
        let heap = self.append("co.free");
        c::LLVMBuildCondBr(b, none, ret, heap);
        c::LLVMPositionBuilderAtEnd(b, heap);
        let mut idx = [c::LLVMConstInt(self.i64, (-8i64) as u64, 1)];
        let back = c::LLVMBuildGEP2(
            b,
            c::LLVMInt8TypeInContext(self.cx),
            mem,
            idx.as_mut_ptr(),
            1,
            n,
        );
        let p = c::LLVMBuildLoad2(b, self.ptr, back, n);
        self.call_system(
            "free",
            c::LLVMVoidTypeInContext(self.cx),
            &mut [self.ptr],
            &mut [p],
        );
        c::LLVMBuildBr(b, ret);
        c::LLVMPositionBuilderAtEnd(b, ret);
        let tok = c::LLVMConstNull(c::LLVMTokenTypeInContext(self.cx));
        self.call_intrinsic(
            "llvm.coro.end",
            &mut [],
            &mut [hdl, c::LLVMConstInt(self.i1, 0, 0), tok],
        );
        c::LLVMBuildRet(b, hdl);
    }
}

/// The region scheme's state of a warp function being built (`Scheme::Regions`).
pub struct Regions {
    /// The warp's slot: the mailbox, then the frame.
    pub slot: LLVMValueRef,
    state: LLVMValueRef,
    /// The CTA-wide `bar.red` results of the last round (`i32`s indexed like the mailbox).
    pub results: LLVMValueRef,
    /// The switch on `state` after the preamble.
    dispatch: LLVMValueRef,
    /// Source values live across a barrier (`live_across`), and those computed again where
    /// they are used after one (`Remat`).
    across: HashSet<LLVMValueRef>,
    remat: HashSet<LLVMValueRef>,
    /// Latch values kept in their loop-carried phi's frame slot (`coalesced`): value -> phi.
    coalesce: HashMap<LLVMValueRef, LLVMValueRef>,
    /// Whether the kernel has a `bar.red` (else no contributions are exchanged).
    pub red: bool,
    /// Frame slots' types by address.
    types: HashMap<LLVMValueRef, LLVMTypeRef>,
    /// The execution mask at a barrier.
    mask: LLVMValueRef,
    /// Bytes of the slot used so far (the mailbox first), and the largest alignment.
    pub size: u32,
    pub align: u32,
    /// Barriers so far: the states after the start.
    pub resumes: u32,
    /// The skip guards (none with a `bar.red`, whose contributions every warp makes), the
    /// state after each barrier emitted so far, and the guards' stores of the state an idle
    /// warp goes to, with their code's store, to be given that barrier's state at the end.
    pub skips: Option<Skips>,
    numbers: HashMap<LLVMValueRef, u32>,
    patches: Vec<(LLVMValueRef, LLVMValueRef, LLVMValueRef)>,
    /// Bytes of the frame after the mailbox that hold values the same in every warp.
    pub ufront: u32,
    /// Every warp meets the barriers in their numbering's order (`in_order`), set at the end.
    pub in_order: bool,
    /// With `in_order`, the ordered rounds whose region branches on the warp
    /// (`warp_dependent_rounds`), set at the end.
    pub peel: u64,
    /// Every warp of a CTA meets the same barriers in the same order (`alike`), set at the
    /// end.
    pub alike: bool,
}

impl Regions {
    /// With skip guards: the bytes of the frame a skipped warp copies from the warp that ran,
    /// and a key of the values they hold (the CTA function skips warps only when all the
    /// kernel's warp functions agree on it).
    pub fn skip_key(&self) -> Option<SkipKey> {
        use std::hash::{Hash, Hasher};
        let s = self.skips.as_ref()?;
        let mut h = std::collections::hash_map::DefaultHasher::new();
        for &v in &s.uniform_frame {
            (v as usize).hash(&mut h);
        }
        Some((self.ufront, h.finish()))
    }
}

impl Warp<'_> {
    /// Makes the warp function a region-scheme one (its last four parameters: the slot, the
    /// state, the `bar.red` results, the shared-memory base), before anything else of the
    /// body.
    pub unsafe fn regions_begin(&mut self, src: LLVMValueRef) {
        let _ = src;
        let np = c::LLVMCountParams(self.dst);
        let (across, remat) = live_across(self.cfg, Some(&self.facts.varying));
        let red = self.cfg.blocks.iter().any(|&bb| {
            ir::instructions(bb).iter().any(|&i| {
                !c::LLVMIsACallInst(i).is_null()
                    && call_kind(i) == CallKind::Barrier(BarrierCall::Red)
            })
        });
        self.regions = Some(Regions {
            slot: c::LLVMGetParam(self.dst, np - 4),
            state: c::LLVMGetParam(self.dst, np - 3),
            results: c::LLVMGetParam(self.dst, np - 2),
            dispatch: std::ptr::null_mut(),
            across,
            remat,
            coalesce: HashMap::new(),
            red,
            types: HashMap::new(),
            mask: std::ptr::null_mut(),
            size: HEAD,
            align: ALIGN,
            resumes: 0,
            skips: None,
            numbers: HashMap::new(),
            patches: Vec::new(),
            ufront: 0,
            in_order: false,
            peel: 0,
            alike: false,
        });
        // The values a skipped warp copies come first in the frame, in one order in every
        // warp function of the kernel.
        let sk = if red {
            None
        } else {
            let across = self
                .regions
                .as_ref()
                .map(|r| r.across.clone())
                .unwrap_or_default();
            skips(self.cfg, self.facts, self.td, &across)
        };
        for &v in sk.iter().flat_map(|s| s.uniform_frame.iter()) {
            self.slot(v);
        }
        let exclude: HashSet<LLVMValueRef> = sk
            .iter()
            .flat_map(|s| s.uniform_frame.iter().copied())
            .collect();
        let coalesce = self
            .regions
            .as_ref()
            .map(|r| coalesced(self.cfg, self.facts, &r.across, &exclude))
            .unwrap_or_default();
        let mt = self.mask_ty();
        if let Some(r) = self.regions.as_mut() {
            r.ufront = r.size - HEAD;
            r.skips = sk;
            r.coalesce = coalesce;
        }
        // The mask needs no slot when every barrier has all launched lanes (`region_end`).
        if !whole_at_barriers(self.cfg, self.facts) {
            let m = self.frame_slot(mt);
            if let Some(r) = self.regions.as_mut() {
                r.mask = m;
            }
        }
    }

    /// The switch to the state the warp function is entered at (region scheme), at the
    /// builder's position; the builder goes on at the start of the kernel.
    pub unsafe fn dispatch(&mut self) {
        let Some(r) = self.regions.as_ref() else {
            return;
        };
        let state = r.state;
        let start = self.append("r.start");
        let sw = c::LLVMBuildSwitch(self.b, state, start, 4);
        if let Some(r) = self.regions.as_mut() {
            r.dispatch = sw;
        }
        c::LLVMPositionBuilderAtEnd(self.b, start);
    }

    /// Whether source value `v` lives in the frame (region scheme).
    pub fn in_frame(&self, v: LLVMValueRef) -> bool {
        self.regions.as_ref().is_some_and(|r| r.across.contains(&v))
    }

    /// The loop-carried phi whose frame slot source value `v` shares (`coalesced`).
    pub fn coalesced_with(&self, v: LLVMValueRef) -> Option<LLVMValueRef> {
        self.regions
            .as_ref()
            .and_then(|r| r.coalesce.get(&v).copied())
    }

    /// Whether source value `v` is built again where it is used after a barrier (region
    /// scheme): cheaper than a frame slot's store and loads.
    pub fn remat(&self, v: LLVMValueRef) -> bool {
        self.regions.as_ref().is_some_and(|r| r.remat.contains(&v))
    }

    /// A new slot of type `t` in the warp's frame, addressed in the entry block.
    pub unsafe fn frame_slot(&mut self, t: LLVMTypeRef) -> LLVMValueRef {
        let size = llvm_sys::target::LLVMABISizeOfType(self.td, t) as u32;
        let align = llvm_sys::target::LLVMABIAlignmentOfType(self.td, t).max(1);
        let r = self
            .regions
            .as_mut()
            .expect("a region-scheme warp function");
        let off = r.size.div_ceil(align) * align;
        r.size = off + size;
        r.align = r.align.max(align);
        let slot = r.slot;
        let mut idx = [c::LLVMConstInt(self.i64, off as u64, 0)];
        let p = c::LLVMBuildGEP2(
            self.allocas,
            c::LLVMInt8TypeInContext(self.cx),
            slot,
            idx.as_mut_ptr(),
            1,
            c"".as_ptr(),
        );
        if let Some(r) = self.regions.as_mut() {
            r.types.insert(p, t);
        }
        p
    }

    /// A phi of the visited block is its slot's value (the edges stored it), loaded here.
    pub unsafe fn phi_from_slot(&mut self, i: LLVMValueRef) {
        let s = self.slot(i);
        let v = c::LLVMBuildLoad2(self.b, self.slot_type(s), s, c"".as_ptr());
        self.map.insert(i, v);
    }

    /// The type a slot (an alloca or a frame slot) holds.
    pub unsafe fn slot_type(&self, s: LLVMValueRef) -> LLVMTypeRef {
        if let Some(&t) = self.regions.as_ref().and_then(|r| r.types.get(&s)) {
            return t;
        }
        c::LLVMGetAllocatedType(s)
    }

    /// The end of a region at a barrier: the mask kept, the barrier's number returned; then
    /// the entry after the barrier, where the builder goes on: masks of the blocks no lane is
    /// pending at (every live lane is at the barrier) zeroed, the mask reloaded, and the
    /// values of the current block read from their frame slots from now on.
    unsafe fn region_end(&mut self) {
        let b = self.b;
        let n = c"".as_ptr();
        let (mask, dispatch, k) = {
            let r = self
                .regions
                .as_mut()
                .expect("a region-scheme warp function");
            r.resumes += 1;
            (r.mask, r.dispatch, r.resumes)
        };
        // When every barrier has all launched lanes (`whole_at_barriers`) the mask at one is
        // `launched`, which the preamble builds again at every entry from the call's
        // arguments: the frame does not keep it, and after inlining into the CTA function's
        // rounds an aligned warp's mask is a constant (no masked loads, no choice of a row's
        // pointer by lane, no partial copy of a shuffle tree).
        let uniform = whole_at_barriers(self.cfg, self.facts);
        if !uniform {
            c::LLVMBuildStore(b, self.mask, mask);
        }
        c::LLVMBuildRet(b, self.c32(k as u64));
        let after = self.append(&format!("r.after{k}"));
        c::LLVMAddCase(dispatch, self.c32(k as u64), after);
        c::LLVMPositionBuilderAtEnd(b, after);
        let mt = self.mask_ty();
        for (x, &p) in self.pending.iter().enumerate() {
            if Some(x) != self.ret_block {
                c::LLVMBuildStore(b, c::LLVMConstNull(mt), p);
            }
        }
        self.mask = if uniform {
            self.launched
        } else {
            c::LLVMBuildLoad2(b, mt, mask, n)
        };
        self.map.retain(|v, _| !ir::is_instruction(*v));
        self.window_tests.clear();
        self.pair_stores.clear();
    }
}

impl Warp<'_> {
    /// At skip guard `br` (if it is one), the interval of `%tid.x` that makes a warp idle and
    /// the state it goes to, in the CTA's results (`guard`), for the CTA function to skip the
    /// other idle warps of the round.
    pub(super) unsafe fn publish_guard(&mut self, br: LLVMValueRef) {
        let Some((g, state, results)) = self.regions.as_ref().and_then(|r| {
            let g = r.skips.as_ref()?.guards.get(&br).copied()?;
            Some((g, r.state, r.results))
        }) else {
            return;
        };
        let b = self.b;
        let n = c"".as_ptr();
        let u = self.get(g.bound, false);
        let (zero, one, max) = (self.c32(0), self.c32(1), self.c32(u32::MAX as u64));
        let cmp = |p: P, x: LLVMValueRef, y: LLVMValueRef| c::LLVMBuildICmp(b, p, x, y, n);
        let sel =
            |k: LLVMValueRef, x: LLVMValueRef, y: LLVMValueRef| c::LLVMBuildSelect(b, k, x, y, n);
        let no = c::LLVMConstInt(self.i1, 0, 0);
        let dec = c::LLVMBuildSub(b, u, one, n);
        let inc = c::LLVMBuildAdd(b, u, one, n);
        // The `%tid.x` for which the condition holds: [ta, tb], none when `e`.
        let (e, ta, tb) = match g.pred {
            P::LLVMIntULT => (cmp(P::LLVMIntEQ, u, zero), zero, dec),
            P::LLVMIntULE => (no, zero, u),
            P::LLVMIntUGT => (cmp(P::LLVMIntEQ, u, max), inc, max),
            P::LLVMIntUGE => (no, u, max),
            P::LLVMIntSLT => (cmp(P::LLVMIntSLE, u, zero), zero, dec),
            P::LLVMIntSLE => (cmp(P::LLVMIntSLT, u, zero), zero, u),
            P::LLVMIntSGT => (no, sel(cmp(P::LLVMIntSLT, u, zero), zero, inc), max),
            P::LLVMIntSGE => (no, sel(cmp(P::LLVMIntSLE, u, zero), zero, u), max),
            _ => (no, u, u),
        };
        let st2 = c::LLVMBuildShl(b, state, one, n);
        let inside = c::LLVMBuildAdd(b, st2, one, n);
        let outside = c::LLVMBuildAdd(b, st2, self.c32(2), n);
        let (lo, hi, code) = match (g.pred == P::LLVMIntNE, g.idle_when) {
            // Idle when `%tid.x != u` everywhere: u outside the warp's lanes.
            (true, true) => (u, u, outside),
            (true, false) => (u, u, zero),
            (false, true) => (ta, tb, sel(e, zero, inside)),
            (false, false) => (sel(e, zero, ta), sel(e, max, tb), sel(e, inside, outside)),
        };
        let at = |k: u32| {
            let mut idx = [self.c32(k as u64)];
            c::LLVMBuildGEP2(b, self.i32, results, idx.as_mut_ptr(), 1, n)
        };
        c::LLVMBuildStore(b, lo, at(guard::LO));
        c::LLVMBuildStore(b, hi, at(guard::HI));
        let code_st = c::LLVMBuildStore(b, code, at(guard::CODE));
        let next_st = c::LLVMBuildStore(b, self.c32(DONE as u64), at(guard::NEXT));
        if let (Next::Barrier(bar), Some(r)) = (g.next, self.regions.as_mut()) {
            r.patches.push((next_st, code_st, bar));
        }
    }
}

/// Whether a warp's execution mask at every barrier is all of its launched lanes. Without a
/// divergent branch every block's mask is all of them or none (a uniform branch sends the
/// whole mask one way). With divergent branches, the lanes at a barrier are the warp's live
/// lanes (a barrier on a way only some lanes take is refused, `check`), and a launched lane
/// is not live only once it has reached the end: so when the barrier's block is in no loop
/// and every way from the start to an end (a block without successors) passes it, no lane
/// has left before it (block reductions' `if (lane == 0) warps[w] = v; __syncthreads();`).
///
/// # Safety
/// `cfg` and `facts` must describe a valid function.
pub unsafe fn whole_at_barriers(cfg: &Cfg, facts: &super::uniform::Facts) -> bool {
    if facts.divergent.is_empty() {
        return true;
    }
    let has_barrier = |x: usize| {
        ir::instructions(cfg.blocks[x]).into_iter().any(|i| {
            !c::LLVMIsACallInst(i).is_null() && matches!(call_kind(i), CallKind::Barrier(_))
        })
    };
    let n = cfg.blocks.len();
    (0..n).filter(|&x| has_barrier(x)).all(|bb| {
        if cfg.loop_of[bb].is_some() {
            return false;
        }
        // No end reached from the start without passing block `bb`.
        let mut seen = vec![false; n];
        let mut work = vec![0];
        seen[0] = true;
        while let Some(x) = work.pop() {
            if x == bb {
                continue;
            }
            if cfg.succ[x].is_empty() {
                return false;
            }
            for &y in &cfg.succ[x] {
                if !seen[y] {
                    seen[y] = true;
                    work.push(y);
                }
            }
        }
        true
    })
}

/// Whether every warp meets the kernel's barriers one after the other in the order of their
/// `numbers` (1 to `n`): from the start every way through the kernel's control flow reaches
/// barrier 1 before any other barrier or the end, from barrier k barrier k + 1, and from
/// barrier `n` the end. A barrier in a loop, one on a branch, or a way out before a barrier
/// breaks it. Then each region of a warp, entered at state k, stops at barrier k + 1 (its
/// lanes all take ways that do: no barrier is on a way only some lanes take, `check`), so
/// the CTA function runs the regions in that order for every warp without keeping states
/// (`driver.rs`: ordered rounds).
///
/// # Safety
/// `cfg` must describe the function whose barrier calls `numbers` numbers.
pub unsafe fn in_order(cfg: &Cfg, numbers: &HashMap<LLVMValueRef, u32>, n: u32) -> bool {
    let insts: Vec<Vec<LLVMValueRef>> = cfg.blocks.iter().map(|&b| ir::instructions(b)).collect();
    let is_barrier = |i: LLVMValueRef| {
        !c::LLVMIsACallInst(i).is_null() && matches!(call_kind(i), CallKind::Barrier(_))
    };
    // The barrier numbers must be 1..=n, each once.
    let mut seen = vec![false; n as usize + 1];
    let mut count = 0;
    for is in &insts {
        for &i in is.iter().filter(|&&i| is_barrier(i)) {
            match numbers.get(&i) {
                Some(&k) if (1..=n).contains(&k) && !seen[k as usize] => {
                    seen[k as usize] = true;
                    count += 1;
                }
                _ => return false,
            }
        }
    }
    if count != n || cfg.blocks.is_empty() {
        return false;
    }
    // From block `x` at instruction `from`, every way must meet `want` first (`DONE`: the
    // end of the function).
    let meets_first = |x: usize, from: usize, want: u32| -> bool {
        let mut visited = vec![false; cfg.blocks.len()];
        let mut work = vec![(x, from)];
        while let Some((x, from)) = work.pop() {
            match insts[x].iter().skip(from).find(|&&i| is_barrier(i)) {
                Some(i) => {
                    if numbers.get(i) != Some(&want) {
                        return false;
                    }
                }
                None if cfg.succ[x].is_empty() => {
                    if want != DONE {
                        return false;
                    }
                }
                None => {
                    for &s in &cfg.succ[x] {
                        if !visited[s] {
                            visited[s] = true;
                            work.push((s, 0));
                        }
                    }
                }
            }
        }
        true
    };
    let next = |k: u32| if k == n { DONE } else { k + 1 };
    if !meets_first(0, 0, next(0)) {
        return false;
    }
    for (x, is) in insts.iter().enumerate() {
        for (at, &i) in is.iter().enumerate() {
            if let Some(&k) = numbers.get(&i) {
                if !meets_first(x, at + 1, next(k)) {
                    return false;
                }
            }
        }
    }
    true
}

/// Whether every warp of a CTA meets the same barriers in the same order, so that the warps
/// that wait always wait at one barrier: the CTA function's lockstep rounds then always agree,
/// and its round for warps at different barriers never runs (`driver.rs` leaves it out; it
/// was a third inlined copy of the warp function, a bitonic sort's compile CPU x0.7). Proven
/// by: no branch is the same in a warp's lanes but may differ between warps (its condition
/// is built from context fields the same in the whole CTA, parameters and constants only,
/// `cta_values`, so every warp decides it alike, and a barrier is never under a branch that
/// splits a warp's lanes, `check`), and from each branch that splits a warp's lanes every way
/// meets one barrier first, or every way reaches the end without one: a warp's next barrier
/// is then the same whichever lanes went which way, and whether any lane went at all (`if
/// (tid < n) return;` before a barrier breaks it: a warp whose lanes all return finishes
/// while the others wait).
///
/// # Safety
/// `cfg` and `facts` must describe a valid function; `td` its module's data layout.
pub unsafe fn alike(
    cfg: &Cfg,
    facts: &super::uniform::Facts,
    td: llvm_sys::target::LLVMTargetDataRef,
) -> bool {
    use llvm_sys::LLVMOpcode as O;
    if cfg.blocks.is_empty() {
        return false;
    }
    let cta = cta_values(cfg, facts, td);
    let insts: Vec<Vec<LLVMValueRef>> = cfg.blocks.iter().map(|&b| ir::instructions(b)).collect();
    let is_barrier = |i: LLVMValueRef| {
        !c::LLVMIsACallInst(i).is_null() && matches!(call_kind(i), CallKind::Barrier(_))
    };
    for (x, &bb) in cfg.blocks.iter().enumerate() {
        let t = c::LLVMGetBasicBlockTerminator(bb);
        if t.is_null() || cfg.succ[x].len() < 2 {
            continue;
        }
        let cnd = match ir::opcode(t) {
            O::LLVMBr => c::LLVMGetCondition(t),
            O::LLVMSwitch => c::LLVMGetOperand(t, 0),
            // Other ways to more than one block: not looked into.
            _ => return false,
        };
        if !facts.is_varying(cnd) {
            if cta.contains(&cnd) {
                return false;
            }
            continue;
        }
        // The first barrier (`Some`) or the end (`None`) of every way from the branch.
        let mut first: Option<Option<LLVMValueRef>> = None;
        let mut visited = vec![false; cfg.blocks.len()];
        let mut work: Vec<usize> = cfg.succ[x].clone();
        while let Some(y) = work.pop() {
            if std::mem::replace(&mut visited[y], true) {
                continue;
            }
            let event = match insts[y].iter().copied().find(|&i| is_barrier(i)) {
                Some(i) => Some(i),
                None if cfg.succ[y].is_empty() => None,
                None => {
                    work.extend(cfg.succ[y].iter().copied());
                    continue;
                }
            };
            if *first.get_or_insert(event) != event {
                return false;
            }
        }
    }
    true
}

/// The source values that may live across a CTA barrier: defined before it on some path and
/// used after it on a path that does not define them again. The rest live within one region,
/// in the warp function's own slots.
///
/// Of those, the values built again at their uses after a barrier are returned apart
/// (`remat`): arithmetic of at most [`REMAT_MAX`] instructions on constants, parameters and
/// context fields (`%tid`, `%ntid`, `%ctaid`…, which the warp function has at every entry), such
/// as `%tid.x` or a shared address `s + 4 * %tid.x`. Given the function's varying values,
/// also the varying sums whose terms the frame keeps instead (`split_sums`).
///
/// # Safety
/// `cfg` must describe a valid function.
pub unsafe fn live_across(
    cfg: &Cfg,
    varying: Option<&HashSet<LLVMValueRef>>,
) -> (HashSet<LLVMValueRef>, HashSet<LLVMValueRef>) {
    let nb = cfg.blocks.len();
    let insts: Vec<Vec<LLVMValueRef>> = cfg.blocks.iter().map(|&b| ir::instructions(b)).collect();
    let mut pos = HashMap::new();
    for (x, is) in insts.iter().enumerate() {
        for (k, &i) in is.iter().enumerate() {
            pos.insert(i, (x, k));
        }
    }
    // Blocks reachable from the successors of `from` without entering `avoid`.
    let reach = |from: usize, avoid: Option<usize>| {
        let mut seen = vec![false; nb];
        let mut stack: Vec<usize> = cfg.succ[from].clone();
        while let Some(x) = stack.pop() {
            if seen[x] || Some(x) == avoid {
                continue;
            }
            seen[x] = true;
            stack.extend(cfg.succ[x].iter().copied());
        }
        seen
    };
    let all: Vec<Vec<bool>> = (0..nb).map(|x| reach(x, None)).collect();
    let mut bars = Vec::new();
    for (x, is) in insts.iter().enumerate() {
        for (k, &i) in is.iter().enumerate() {
            if !c::LLVMIsACallInst(i).is_null() && matches!(call_kind(i), CallKind::Barrier(_)) {
                bars.push((x, k));
            }
        }
    }
    let mut out = HashSet::new();
    for &(bb, pb) in &bars {
        for d in 0..nb {
            let defs: Vec<LLVMValueRef> = insts[d]
                .iter()
                .enumerate()
                // A value defined after the barrier in its own block is built again after
                // every pass through the barrier before any use of it: never across it (the
                // tree loop's `k >>= 1` and its test, after the barrier in the latch).
                .filter(|&(pd, _)| if d == bb { pd < pb } else { all[d][bb] })
                .map(|(_, &v)| v)
                // An alloca's address is no value of the warp function (its fragment arrays
                // and predicate slots are served as registers, `own_memory` in `mod.rs`).
                .filter(|&v| ir::opcode(v) != llvm_sys::LLVMOpcode::LLVMAlloca)
                .filter(|v| !out.contains(v))
                .collect();
            if defs.is_empty() {
                continue;
            }
            let after = reach(bb, Some(d));
            for v in defs {
                let mut u = c::LLVMGetFirstUse(v);
                while !u.is_null() {
                    let user = c::LLVMGetUser(u);
                    let live = if !c::LLVMIsAPHINode(user).is_null() {
                        (0..c::LLVMCountIncoming(user)).any(|k| {
                            c::LLVMGetIncomingValue(user, k) == v
                                && cfg
                                    .index
                                    .get(&c::LLVMGetIncomingBlock(user, k))
                                    .is_some_and(|&ib| ib == bb || after[ib])
                        })
                    } else {
                        pos.get(&user)
                            .is_some_and(|&(ub, pu)| ub == bb && pu > pb || ub != d && after[ub])
                    };
                    if live {
                        out.insert(v);
                        break;
                    }
                    u = c::LLVMGetNextUse(u);
                }
            }
        }
    }
    let mut cost = HashMap::new();
    let mut remat: HashSet<LLVMValueRef> = HashSet::new();
    // A value built again needs its operands built again too (they may not live across).
    let mut todo: Vec<LLVMValueRef> = out
        .iter()
        .copied()
        .filter(|&v| remat_cost(v, &mut cost).is_some_and(|k| k <= REMAT_MAX))
        .collect();
    while let Some(v) = todo.pop() {
        if ir::is_instruction(v) && remat.insert(v) {
            todo.extend(ir::operands(v));
        }
    }
    out.retain(|v| !remat.contains(v));
    if let Some(varying) = varying {
        split_sums(&mut out, &mut remat, varying);
    }
    (out, remat)
}

/// Varying sums `u + w` kept in the frame as their terms: `u` the same in every lane, `w`
/// varying and a term of another such sum. Triton's matmul epilogue computes its 128 store
/// pointers `c + 2 * row_i * stride_cm + 2 * col * stride_cn` before the barriers of its
/// layout change: 128 vectors of 32 pointers in the frame (32 KiB per warp, four 64-byte
/// stores and four loads each), where one vector of column offsets and 128 scalars say the
/// same. Each sum is then added again at its uses after a barrier (`remat`: its terms come from
/// their slots), one vector add against four loads; and the 128 accesses see one shared
/// varying term, whose run-time lane tests LLVM computes once.
unsafe fn split_sums(
    out: &mut HashSet<LLVMValueRef>,
    remat: &mut HashSet<LLVMValueRef>,
    varying: &HashSet<LLVMValueRef>,
) {
    use llvm_sys::LLVMOpcode as O;
    // `(sum, uniform term, varying term)` of the varying values the frame keeps.
    let terms = |v: LLVMValueRef| -> Option<(LLVMValueRef, LLVMValueRef)> {
        if !varying.contains(&v) || c::LLVMGetNumOperands(v) != 2 {
            return None;
        }
        let (a, b) = (c::LLVMGetOperand(v, 0), c::LLVMGetOperand(v, 1));
        let ok = match ir::opcode(v) {
            O::LLVMAdd => true,
            // A byte offset from a pointer: the pointer plus the offset, whichever varies.
            O::LLVMGetElementPtr => {
                c::LLVMGetGEPSourceElementType(v)
                    == c::LLVMInt8TypeInContext(c::LLVMGetTypeContext(c::LLVMTypeOf(v)))
            }
            _ => false,
        };
        let term = |x: LLVMValueRef| ir::is_instruction(x) || !c::LLVMIsAArgument(x).is_null();
        if !ok || !term(a) || !term(b) {
            return None;
        }
        match (varying.contains(&a), varying.contains(&b)) {
            (false, true) => Some((a, b)),
            (true, false) => Some((b, a)),
            _ => None,
        }
    };
    let mut sums: Vec<(LLVMValueRef, LLVMValueRef, LLVMValueRef)> = out
        .iter()
        .filter_map(|&v| terms(v).map(|(u, w)| (v, u, w)))
        .collect();
    let mut shared: HashMap<LLVMValueRef, u32> = HashMap::new();
    for &(_, _, w) in &sums {
        *shared.entry(w).or_default() += 1;
    }
    sums.retain(|&(_, _, w)| shared[&w] >= 2);
    for (v, u, w) in sums {
        out.remove(&v);
        remat.insert(v);
        for t in [u, w] {
            if ir::is_instruction(t) && !remat.contains(&t) {
                out.insert(t);
            }
        }
    }
}

/// Loop-carried phis that share their latch value's frame slot, as a register allocator
/// coalesces a copy: latch value -> phi. Without it the latch value's region stores it to the
/// frame, the latch edge's region copies it into the phi's slot and the next region reads it
/// back (matmul's accumulator: two loads and two stores of 128 bytes per warp and tile).
///
/// A phi `p` of block `h` and its incoming value `v` from block `l` (both in `across`, neither
/// in `exclude`: the frame's front that skipped warps copy) share a slot when
/// - no branch is divergent: the whole warp takes one path, so `v`'s full-vector store
///   clobbers no lane that still needs `p` (a lane that left the loop early would);
/// - `v` is an instruction other than a narrowed `.shared` pointer, with the same
///   uniformity as `p` (one slot type);
/// - every path from `h` to `l` and to each use of `v` (a phi's counts at the end of its
///   incoming block) defines `v` again (its block is `h`, or the use is not reachable from
///   `h` around it): the other edges into `h`, which write `p`'s slot, never meet a live `v`,
///   and the edge from `l` writes the value the slot already holds;
/// - `p` is dead where `v` is defined: no use of `p` after `v` in its block, nor in a block
///   reachable from there without entering `h` (where `p` is defined anew); a phi's use of
///   `p` counts at the end of its incoming block. A phi `v` (a join's value: n-body's
///   accumulators after the unrolled loop's remainder) is defined by the edges into its
///   block, which must not be `h`: then every non-phi use of `p` in its block is after it,
///   and an edge's own read of `p` (`v` taking `p` on the way around the inner loop) comes
///   before its writes (`Warp::edge` reads all incoming values first).
///
/// Returns `v -> p`; each phi and each value in one pair at most.
///
/// # Safety
/// `cfg` and `facts` must describe a valid function.
pub unsafe fn coalesced(
    cfg: &Cfg,
    facts: &super::uniform::Facts,
    across: &HashSet<LLVMValueRef>,
    exclude: &HashSet<LLVMValueRef>,
) -> HashMap<LLVMValueRef, LLVMValueRef> {
    let mut out = HashMap::new();
    if !facts.divergent.is_empty() {
        return out;
    }
    let nb = cfg.blocks.len();
    // Blocks reachable from the successors of `from` without entering `avoid`.
    let reach = |from: usize, avoid: usize| {
        let mut seen = vec![false; nb];
        let mut stack: Vec<usize> = cfg.succ[from].clone();
        while let Some(x) = stack.pop() {
            if seen[x] || x == avoid {
                continue;
            }
            seen[x] = true;
            stack.extend(cfg.succ[x].iter().copied());
        }
        seen
    };
    let position = |i: LLVMValueRef| {
        ir::instructions(c::LLVMGetInstructionParent(i))
            .iter()
            .position(|&x| x == i)
    };
    let mut taken = HashSet::new();
    for (h, &hb) in cfg.blocks.iter().enumerate() {
        for p in ir::instructions(hb) {
            if c::LLVMIsAPHINode(p).is_null() {
                break;
            }
            if !across.contains(&p) || exclude.contains(&p) || taken.contains(&p) {
                continue;
            }
            for k in 0..c::LLVMCountIncoming(p) {
                let v = c::LLVMGetIncomingValue(p, k);
                let Some(&l) = cfg.index.get(&c::LLVMGetIncomingBlock(p, k)) else {
                    continue;
                };
                if v == p
                    || !ir::is_instruction(v)
                    || ir::opcode(v) == llvm_sys::LLVMOpcode::LLVMIntToPtr
                    || !across.contains(&v)
                    || exclude.contains(&v)
                    || taken.contains(&v)
                    || facts.is_varying(v) != facts.is_varying(p)
                {
                    continue;
                }
                let Some(&d) = cfg.index.get(&c::LLVMGetInstructionParent(v)) else {
                    continue;
                };
                // A phi of `h` itself would share the slot the same edges write for `p`.
                let phi = !c::LLVMIsAPHINode(v).is_null();
                if phi && d == h {
                    continue;
                }
                // Every path from `h` to a use of `v` (a phi's at the end of its incoming
                // block, `l` among them) defines `v` again.
                let around = (d != h).then(|| reach(h, d));
                let redefined = |ub: Option<&usize>| {
                    ub.is_some_and(|&ub| ub == d || around.as_ref().is_none_or(|a| !a[ub]))
                };
                let mut ok = redefined(Some(&l));
                let mut u = c::LLVMGetFirstUse(v);
                while !u.is_null() && ok {
                    let user = c::LLVMGetUser(u);
                    ok = if c::LLVMIsAPHINode(user).is_null() {
                        redefined(cfg.index.get(&c::LLVMGetInstructionParent(user)))
                    } else {
                        (0..c::LLVMCountIncoming(user)).all(|j| {
                            c::LLVMGetIncomingValue(user, j) != v
                                || redefined(cfg.index.get(&c::LLVMGetIncomingBlock(user, j)))
                        })
                    };
                    u = c::LLVMGetNextUse(u);
                }
                if !ok {
                    continue;
                }
                // `p` dead at `v`'s definition.
                let after = reach(d, h);
                let Some(vpos) = position(v) else {
                    continue;
                };
                let mut dead = true;
                let mut u = c::LLVMGetFirstUse(p);
                while !u.is_null() && dead {
                    let user = c::LLVMGetUser(u);
                    if !c::LLVMIsAPHINode(user).is_null() {
                        dead = (0..c::LLVMCountIncoming(user)).all(|j| {
                            c::LLVMGetIncomingValue(user, j) != p
                                || cfg
                                    .index
                                    .get(&c::LLVMGetIncomingBlock(user, j))
                                    .is_some_and(|&ub| ub != d && !after[ub])
                        });
                    } else {
                        let ub = cfg.index.get(&c::LLVMGetInstructionParent(user)).copied();
                        dead = match ub {
                            Some(ub) if ub == d => {
                                !after[d] && position(user).is_some_and(|pu| pu < vpos)
                            }
                            Some(ub) => !after[ub],
                            None => false,
                        };
                    }
                    u = c::LLVMGetNextUse(u);
                }
                if dead {
                    out.insert(v, p);
                    taken.insert(v);
                    taken.insert(p);
                    break;
                }
            }
        }
    }
    out
}

/// The most instructions a value built again after a barrier may take.
pub const REMAT_MAX: u32 = 6;

/// The instructions it takes to build `v` again from constants, parameters and context
/// fields, if it can be: pure integer and address arithmetic only.
unsafe fn remat_cost(
    v: LLVMValueRef,
    memo: &mut HashMap<LLVMValueRef, Option<u32>>,
) -> Option<u32> {
    use llvm_sys::LLVMOpcode as O;
    if !ir::is_instruction(v) {
        // Constants and the kernel's parameters (the function's arguments).
        return (c::LLVMIsABasicBlock(v).is_null()).then_some(0);
    }
    if let Some(&k) = memo.get(&v) {
        return k;
    }
    memo.insert(v, None);
    let op = ir::opcode(v);
    let k = match op {
        O::LLVMLoad => {
            let td = llvm_sys::target::LLVMGetModuleDataLayout(c::LLVMGetGlobalParent(
                c::LLVMGetBasicBlockParent(c::LLVMGetInstructionParent(v)),
            ));
            ir::ctx_offset(td, c::LLVMGetOperand(v, 0)).map(|_| 1)
        }
        op if ir::int_arith_or_cast(op)
            || matches!(
                op,
                O::LLVMICmp
                    | O::LLVMGetElementPtr
                    | O::LLVMPtrToInt
                    | O::LLVMIntToPtr
                    | O::LLVMBitCast
            ) =>
        {
            let mut k = 1u32;
            for o in ir::operands(v) {
                k = k.checked_add(remat_cost(o, memo)?)?;
            }
            Some(k)
        }
        _ => None,
    };
    memo.insert(v, k);
    k
}

/// Where the lanes of a warp that all take a guard's idle side stop next: the barrier that
/// starts its join block, or the kernel's end.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Next {
    Barrier(LLVMValueRef),
    End,
}

/// A *skip guard*: a branch on `%tid.x PRED bound` (`bound` the same in every warp of the
/// CTA) one of whose sides is its join block, which starts with a barrier (or is the
/// kernel's end), every path to it from a region's entry running only code without effects
/// whose results are the same in every warp. A warp whose lanes all take the idle side
/// would do nothing but that code: the CTA function skips it (`driver.rs`, lockstep rounds),
/// given the interval of `%tid.x` the guard publishes when a warp of the round runs it.
#[derive(Clone, Copy, Debug)]
pub struct Guard {
    /// The comparison with `%tid.x` on the left.
    pub pred: P,
    pub bound: LLVMValueRef,
    /// The condition's value that takes the idle side.
    pub idle_when: bool,
    pub next: Next,
}

/// The skip guards of a kernel and what a skipped warp takes from the warp that ran: the
/// values that live across barriers and are the same in every warp of the CTA, in the
/// order their frame slots come first in the frame.
pub struct Skips {
    pub guards: HashMap<LLVMValueRef, Guard>,
    pub uniform_frame: Vec<LLVMValueRef>,
}

/// A kernel's skip guards as the CTA function needs them (`Regions::skip_key`): the bytes a
/// skipped warp copies, and a key of the values they hold.
pub type SkipKey = (u32, u64);

/// Indices in the CTA's results (`i32`s after the `bar.red` results) where a skip guard
/// publishes: the interval of `%tid.x` (inclusive), its code (0: nothing to skip; `2s + 1`: a
/// warp of state `s` whose `%tid.x` all lie inside the interval is idle; `2s + 2`: ... all lie
/// outside it) and the state an idle warp goes to.
pub mod guard {
    pub const LO: u32 = 4;
    pub const HI: u32 = 5;
    pub const CODE: u32 = 6;
    pub const NEXT: u32 = 7;
    /// The results' length.
    pub const LEN: u32 = 8;
}

/// Context fields that are the same in every warp of a CTA (byte offsets).
fn cta_field(off: u32) -> bool {
    use crate::runtime::abi::offset as o;
    (o::NTID..o::NCTAID + 12).contains(&off)
        || [
            o::NWARPID,
            o::NSMID,
            o::DYNAMIC_SMEM_SIZE,
            o::TOTAL_SMEM_SIZE,
            o::GRIDID,
            o::SHARED,
        ]
        .contains(&off)
}

/// The values that may differ between the warps of a CTA; `None` when a branch is the same
/// in every lane of a warp but may differ between warps (then phis would need that branch's
/// joins too, and the kernel gets no skip guards).
unsafe fn cta_varying(
    cfg: &Cfg,
    facts: &super::uniform::Facts,
    td: llvm_sys::target::LLVMTargetDataRef,
) -> Option<HashSet<LLVMValueRef>> {
    let out = cta_values(cfg, facts, td);
    (!cfg.blocks.iter().any(|&bb| warp_branch(bb, facts, &out))).then_some(out)
}

/// Whether block `bb` ends in a branch the same in every lane of a warp (`facts`) whose
/// condition is in `cta` (the values that may differ between the warps of a CTA).
unsafe fn warp_branch(
    bb: LLVMBasicBlockRef,
    facts: &super::uniform::Facts,
    cta: &HashSet<LLVMValueRef>,
) -> bool {
    let t = c::LLVMGetBasicBlockTerminator(bb);
    if t.is_null() || c::LLVMIsConditional(t) == 0 {
        return false;
    }
    let cnd = c::LLVMGetCondition(t);
    cta.contains(&cnd) && !facts.is_varying(cnd)
}

/// The values that may differ between the warps of a CTA (`cta_varying` without its test
/// of the branches).
unsafe fn cta_values(
    cfg: &Cfg,
    facts: &super::uniform::Facts,
    td: llvm_sys::target::LLVMTargetDataRef,
) -> HashSet<LLVMValueRef> {
    use llvm_sys::LLVMOpcode as O;
    let insts: Vec<LLVMValueRef> = cfg
        .blocks
        .iter()
        .flat_map(|&b| ir::instructions(b))
        .collect();
    let mut out: HashSet<LLVMValueRef> = HashSet::new();
    loop {
        let mut changed = false;
        for &i in &insts {
            if out.contains(&i) {
                continue;
            }
            let ops = ir::operands(i);
            let v = facts.is_varying(i)
                || match ir::opcode(i) {
                    O::LLVMLoad => match ir::ctx_offset(td, c::LLVMGetOperand(i, 0)) {
                        Some(off) => !cta_field(off),
                        None => true,
                    },
                    O::LLVMAtomicRMW | O::LLVMAtomicCmpXchg | O::LLVMAlloca => true,
                    O::LLVMCall => match call_kind(i) {
                        CallKind::SelfCtx | CallKind::Barrier(_) => false,
                        CallKind::Lanewise => ir::args(i).iter().any(|a| out.contains(a)),
                        _ => true,
                    },
                    _ => ops.iter().any(|o| out.contains(o)),
                };
            if v {
                out.insert(i);
                changed = true;
            }
        }
        if !changed {
            break;
        }
    }
    out
}

/// The ordered rounds (bit k: the region entered at state k, the start or after barrier k)
/// that reach a branch the same in all lanes of a warp but not in every warp (`if (warp ==
/// 0)`), for a function whose warps meet its barriers in order (`in_order`, with `numbers`
/// its barriers' states): the CTA function runs warp 0 of those rounds on its own, and each
/// copy of a round's region costs compile time (layernorm: 6 barriers, one such branch per
/// block reduction). Rounds from 64 on are never peeled.
///
/// # Safety
/// `cfg` and `facts` must describe a valid function; `td` its module's data layout.
pub unsafe fn warp_dependent_rounds(
    cfg: &Cfg,
    facts: &super::uniform::Facts,
    td: llvm_sys::target::LLVMTargetDataRef,
    numbers: &HashMap<LLVMValueRef, u32>,
) -> u64 {
    if cfg.blocks.is_empty() {
        return 0;
    }
    let cta = cta_values(cfg, facts, td);
    let branches: Vec<bool> = cfg
        .blocks
        .iter()
        .map(|&bb| warp_branch(bb, facts, &cta))
        .collect();
    if !branches.contains(&true) {
        return 0;
    }
    let insts: Vec<Vec<LLVMValueRef>> = cfg.blocks.iter().map(|&b| ir::instructions(b)).collect();
    // Each round's entry: the function's start, or the instruction after its barrier.
    let mut entries = vec![(0u32, 0usize, 0usize)];
    for (x, is) in insts.iter().enumerate() {
        for (at, i) in is.iter().enumerate() {
            if let Some(&k) = numbers.get(i) {
                entries.push((k, x, at + 1));
            }
        }
    }
    let mut peel = 0u64;
    for (k, x, from) in entries {
        if k >= 64 {
            continue;
        }
        // The blocks the round runs until its next barrier: a block's branch is the round's
        // when no barrier follows the point the round enters it at.
        let mut visited = vec![false; cfg.blocks.len()];
        let mut work = vec![(x, from)];
        while let Some((x, from)) = work.pop() {
            if insts[x]
                .iter()
                .skip(from)
                .any(|&i| numbers.contains_key(&i))
            {
                continue;
            }
            if branches[x] {
                peel |= 1 << k;
                break;
            }
            for &s in &cfg.succ[x] {
                if !visited[s] {
                    visited[s] = true;
                    work.push((s, 0));
                }
            }
        }
    }
    peel
}

/// The kernel's skip guards (see [`Guard`]), given the values its frame keeps; `None` when it
/// has none.
///
/// # Safety
/// `cfg` and `facts` must describe a valid function; `td` its module's data layout.
pub unsafe fn skips(
    cfg: &Cfg,
    facts: &super::uniform::Facts,
    td: llvm_sys::target::LLVMTargetDataRef,
    across: &HashSet<LLVMValueRef>,
) -> Option<Skips> {
    use llvm_sys::LLVMOpcode as O;
    let cta = cta_varying(cfg, facts, td)?;
    let nb = cfg.blocks.len();
    let insts: Vec<Vec<LLVMValueRef>> = cfg.blocks.iter().map(|&b| ir::instructions(b)).collect();
    let mut pred = vec![Vec::new(); nb];
    for (x, s) in cfg.succ.iter().enumerate() {
        for &y in s {
            pred[y].push(x);
        }
    }
    let is_barrier = |i: LLVMValueRef| {
        !c::LLVMIsACallInst(i).is_null() && matches!(call_kind(i), CallKind::Barrier(_))
    };
    // Code a skipped warp may leave out: no effects, and what the frame keeps of it the
    // same in every warp (copied from the warp that ran).
    let quiet = |i: LLVMValueRef| {
        let ok = match ir::opcode(i) {
            O::LLVMStore
            | O::LLVMAtomicRMW
            | O::LLVMAtomicCmpXchg
            | O::LLVMFence
            | O::LLVMAlloca
            | O::LLVMRet
            | O::LLVMUnreachable => false,
            O::LLVMCall => matches!(call_kind(i), CallKind::SelfCtx | CallKind::Lanewise),
            _ => true,
        };
        ok && (!across.contains(&i) || !cta.contains(&i))
    };
    let mut guards = HashMap::new();
    for g in 0..nb {
        let br = c::LLVMGetBasicBlockTerminator(cfg.blocks[g]);
        if br.is_null() || c::LLVMIsConditional(br) == 0 {
            continue;
        }
        let cnd = c::LLVMGetCondition(br);
        if !facts.is_varying(cnd) || c::LLVMIsAICmpInst(cnd).is_null() {
            continue;
        }
        // `%tid.x PRED bound`, the bound an `i32` the same in every warp.
        let ops = ir::operands(cnd);
        let is_tid = |v: LLVMValueRef| {
            ir::is_instruction(v)
                && ir::opcode(v) == O::LLVMLoad
                && ir::ctx_offset(td, c::LLVMGetOperand(v, 0))
                    .is_some_and(|o| o == crate::runtime::abi::offset::TID)
        };
        let p = c::LLVMGetICmpPredicate(cnd);
        let (pred_l, bound) = if is_tid(ops[0]) && !cta.contains(&ops[1]) {
            (p, ops[1])
        } else if is_tid(ops[1]) && !cta.contains(&ops[0]) {
            (swapped(p), ops[0])
        } else {
            continue;
        };
        if c::LLVMTypeOf(bound)
            != c::LLVMInt32TypeInContext(c::LLVMGetTypeContext(c::LLVMTypeOf(bound)))
        {
            continue;
        }
        // One side is the join.
        let j = cfg.ipdom[g];
        if j == cfg.exit() {
            continue;
        }
        let (s0, s1) = (
            cfg.succ[g][0],
            cfg.succ[g].get(1).copied().unwrap_or(usize::MAX),
        );
        let idle_when = if s0 == j && s1 != j {
            true
        } else if s1 == j && s0 != j {
            false
        } else {
            continue;
        };
        // The join: no phis, quiet code up to a barrier or the end.
        let mut next = None;
        for &i in &insts[j] {
            if !c::LLVMIsAPHINode(i).is_null() {
                break;
            }
            if is_barrier(i) {
                next = Some(Next::Barrier(i));
                break;
            }
            if ir::opcode(i) == O::LLVMRet {
                next = Some(Next::End);
                break;
            }
            if !quiet(i) {
                break;
            }
        }
        let Some(next) = next else { continue };
        // Every way to the guard from a region's entry: quiet code, branches the same in
        // every warp, no pass through the guard itself.
        let mut seen = vec![false; nb];
        let mut todo = vec![g];
        let mut ok = true;
        while let Some(x) = todo.pop() {
            if seen[x] {
                continue;
            }
            seen[x] = true;
            let last_bar = insts[x].iter().rposition(|&i| is_barrier(i));
            let from = last_bar.map_or(0, |k| k + 1);
            let body = &insts[x][from..insts[x].len() - 1];
            if !body.iter().all(|&i| quiet(i)) {
                ok = false;
                break;
            }
            if last_bar.is_some() || x == 0 {
                continue;
            }
            for &p in &pred[x] {
                let t = c::LLVMGetBasicBlockTerminator(cfg.blocks[p]);
                if p == g || c::LLVMIsConditional(t) != 0 && cta.contains(&c::LLVMGetCondition(t)) {
                    ok = false;
                }
                todo.push(p);
            }
            if !ok {
                break;
            }
        }
        if ok {
            guards.insert(
                br,
                Guard {
                    pred: pred_l,
                    bound,
                    idle_when,
                    next,
                },
            );
        }
    }
    if guards.is_empty() {
        return None;
    }
    let pos: HashMap<LLVMValueRef, usize> = insts
        .iter()
        .flatten()
        .enumerate()
        .map(|(k, &i)| (i, k))
        .collect();
    let mut uniform_frame: Vec<LLVMValueRef> = across
        .iter()
        .copied()
        .filter(|v| !cta.contains(v))
        .collect();
    uniform_frame.sort_by_key(|v| pos.get(v).copied().unwrap_or(usize::MAX));
    Some(Skips {
        guards,
        uniform_frame,
    })
}

/// `p` with its operands swapped.
fn swapped(p: P) -> P {
    match p {
        P::LLVMIntULT => P::LLVMIntUGT,
        P::LLVMIntUGT => P::LLVMIntULT,
        P::LLVMIntULE => P::LLVMIntUGE,
        P::LLVMIntUGE => P::LLVMIntULE,
        P::LLVMIntSLT => P::LLVMIntSGT,
        P::LLVMIntSGT => P::LLVMIntSLT,
        P::LLVMIntSLE => P::LLVMIntSGE,
        P::LLVMIntSGE => P::LLVMIntSLE,
        e => e,
    }
}
