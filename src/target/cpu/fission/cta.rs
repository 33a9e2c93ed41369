//! The CTA function of a thread-loop kernel: `K.fis(params, ctx, fis)` loads the kernel's
//! parameters and the CTA's uniform values once and calls `K.fis.loops`, whose pointer
//! parameters are `noalias` (the runtime's per-thread arrays never alias kernel memory). It
//! runs one round:
//!
//! - `ALL` rounds: per resume point a z/y/x loop nest over the threads `xlo..xhi` (x) with
//!   `K.step` inlined and specialized for that point, which LLVM vectorizes across threads.
//!   A region that starts with a probe branch (`Plan::probes`) first evaluates the branch for
//!   every thread (a cheap probing pass), then runs a copy specialized for "not taken" over
//!   the threads that do not take it and one for "taken" over the others — when those are
//!   all of them, or (one-dimensional CTAs) form one contiguous range and its complement,
//!   in thread order; otherwise the out-of-line nest runs the region.
//! - Chains of shuffle rounds (`warp_chains`): in `ALL` rounds over whole warps of a
//!   one-dimensional CTA, every stage of the chain for one warp after another
//!   (`K.warp<r>`), the lanes unrolled, so shuffles exchange values in registers.
//! - `MASKED` and `GENERIC` rounds, and probe fallbacks: one nest calling the out-of-line
//!   `K.step` for the selected threads (state `want`, or any resume point, or all).
//! - Kernels without stops: a loop over the CTAs `cta_first..cta_first + cta_count` around
//!   the start region (one call runs a chunk of CTAs).

use std::collections::HashMap;

use super::tidrange::{TidLanes, TidRange, BIG};
use super::{extra, StepOut};
use crate::llvm::fission as lf;
use crate::llvm::*;
use crate::lower::{Lowerer, Space};
use crate::runtime::abi::offset;
use crate::runtime::fission::{
    off, StopKind, WarpOp, MODE_ALL, MODE_MASKED, SEEN_MANY, ST_EXIT, ST_STOP, ST_TRAP,
};
use crate::target::cpu::ParamLayout;

mod interchange;
mod warp;

/// Extra parameters of `K.fis.loops` after the step's (whose `T` is the mode, `TX` `want`).
const L_CFIRST: u32 = extra::COUNT;
const L_CCOUNT: u32 = extra::COUNT + 1;
const L_XLO: u32 = extra::COUNT + 2;
const L_XHI: u32 = extra::COUNT + 3;

/// What a loop nest runs.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// Every thread of the range from resume point `r`, `K.step` inlined.
    All,
    /// The probing pass: the probe branch's condition for every thread of the range.
    Probe,
    /// The threads `fmode` selects, out-of-line `K.step` (0: all, resume `k`; 1: state
    /// `want`, resume `k`; 2: any resume point, resume there).
    Outline,
    /// Threads whose region goes straight to `ret`/`exit`: marked finished, no `K.step`.
    Exit,
}

/// Shared state of the generation of `K.fis.loops`.
struct Gen<'c, 'l, 'a> {
    l: &'l Lowerer<'c, 'a>,
    f: FunctionValue<'c>,
    step: FunctionValue<'c>,
    nptx: u32,
    has_stops: bool,
    seen: PointerValue<'c>,
    xs: PointerValue<'c>,
    ys: PointerValue<'c>,
    zs: PointerValue<'c>,
    fmode: PointerValue<'c>,
    /// Probing results: taken count, lowest and highest+1 not-taken x.
    pcnt: PointerValue<'c>,
    plo: PointerValue<'c>,
    phi: PointerValue<'c>,
    /// `K.step`'s `IV` in the nests this generator emits (interchanged iterations).
    iv: Option<IntValue<'c>>,
    /// Bytes of a thread's saved registers (`StepOut::frame_bytes`).
    frame_bytes: u32,
    /// The kernel is specialized for a one-dimensional CTA shape (`%ntid.y = %ntid.z = 1`).
    one_d: bool,
}

impl<'c> Gen<'c, '_, '_> {
    fn p(&self, k: u32) -> BasicValueEnum<'c> {
        self.f.get_nth_param(self.nptx + k).unwrap()
    }
    fn i(&self, k: u32) -> IntValue<'c> {
        self.p(k).into_int_value()
    }
    fn block(&self, name: &str) -> BasicBlock<'c> {
        self.l.ctx.append_basic_block(self.f, name)
    }
    fn c32(&self, v: u64) -> IntValue<'c> {
        self.l.i32().const_int(v, false)
    }
    /// Field `o` (`runtime::fission::off`) of the CTA's `ptx2llvm_fis`.
    fn fis_field(&self, o: u32) -> PointerValue<'c> {
        let l = self.l;
        let fis = self.p(extra::FIS).into_pointer_value();
        let at = l.i64().const_int(o as u64, false);
        // SAFETY: `build_gep` only builds IR (a byte offset into the fission block); nothing is dereferenced here.
        unsafe { l.b.build_gep(l.ctx.i8_type(), fis, &[at], "").unwrap() }
    }
    fn load32(&self, p: PointerValue<'c>) -> IntValue<'c> {
        self.l
            .b
            .build_load(self.l.i32(), p, "")
            .unwrap()
            .into_int_value()
    }

    /// A loop nest running `kind` for resume point `k` with probe mode `probe` over x in
    /// `lo..hi` (all y, z); `cids`: CTA ids from a CTA loop. Returns its first block; it
    /// ends in `done`.
    #[allow(clippy::too_many_arguments)]
    fn nest(
        &self,
        tag: &str,
        kind: Kind,
        k: IntValue<'c>,
        probe: u32,
        (lo, hi): (IntValue<'c>, IntValue<'c>),
        cids: Option<[IntValue<'c>; 3]>,
        done: BasicBlock<'c>,
        nostate: bool,
        stride: u32,
    ) -> BasicBlock<'c> {
        let l = self.l;
        let ctx = l.ctx;
        let b = &l.b;
        let i8t = ctx.i8_type();
        let i16t = ctx.i16_type();
        let i32t = l.i32();
        let i64t = l.i64();
        let (ntx, nty, ntz) = (
            self.i(extra::NT),
            self.i(extra::NT + 1),
            self.i(extra::NT + 2),
        );
        let _ = ntx;
        let pre = self.block(&format!("{tag}.pre"));
        let zh = self.block(&format!("{tag}.z"));
        let yh = self.block(&format!("{tag}.y"));
        let xh = self.block(&format!("{tag}.x"));
        let run = self.block(&format!("{tag}.run"));
        let xl = self.block(&format!("{tag}.xl"));
        let yl = self.block(&format!("{tag}.yl"));
        let zl = self.block(&format!("{tag}.zl"));
        let zero = i32t.const_zero();
        b.position_at_end(pre);
        let empty = b.build_int_compare(IntPredicate::UGE, lo, hi, "").unwrap();
        b.build_store(self.zs, zero).unwrap();
        b.build_conditional_branch(empty, done, zh).unwrap();
        b.position_at_end(zh);
        b.build_store(self.ys, zero).unwrap();
        b.build_unconditional_branch(yh).unwrap();
        b.position_at_end(yh);
        b.build_store(self.xs, lo).unwrap();
        b.build_unconditional_branch(xh).unwrap();
        b.position_at_end(xh);
        let z = self.load32(self.zs);
        let y = self.load32(self.ys);
        let x = self.load32(self.xs);
        let row = b
            .build_int_mul(
                ntx,
                b.build_int_add(y, b.build_int_mul(nty, z, "").unwrap(), "")
                    .unwrap(),
                "row",
            )
            .unwrap();
        let t = b.build_int_add(row, x, "t").unwrap();
        let t64 = b.build_int_z_extend(t, i64t, "").unwrap();
        // SAFETY: `build_gep` only builds IR (thread `t`'s state entry); nothing is dereferenced here.
        let sp = unsafe {
            b.build_gep(i16t, self.p(extra::STATE).into_pointer_value(), &[t64], "")
                .unwrap()
        };
        let kval = if kind == Kind::Outline {
            let s0 = b.build_load(i16t, sp, "").unwrap().into_int_value();
            let fm = self.load32(self.fmode);
            let want = b.build_int_truncate(self.i(extra::TX), i16t, "").unwrap();
            let is_want = b.build_int_compare(IntPredicate::EQ, s0, want, "").unwrap();
            let is_resume = b
                .build_int_compare(
                    IntPredicate::ULT,
                    s0,
                    i16t.const_int(ST_STOP as u64, false),
                    "",
                )
                .unwrap();
            let f0 = b.build_int_compare(IntPredicate::EQ, fm, zero, "").unwrap();
            let f1 = b
                .build_int_compare(IntPredicate::EQ, fm, self.c32(1), "")
                .unwrap();
            let sel = b
                .build_select(f1, is_want, is_resume, "")
                .unwrap()
                .into_int_value();
            let go = b
                .build_select(f0, l.i1().const_int(1, false), sel, "")
                .unwrap()
                .into_int_value();
            b.build_conditional_branch(go, run, xl).unwrap();
            b.position_at_end(run);
            let s0 = b.build_load(i16t, sp, "").unwrap().into_int_value();
            let f2 = b
                .build_int_compare(IntPredicate::EQ, self.load32(self.fmode), self.c32(2), "")
                .unwrap();
            let own = b.build_int_z_extend(s0, i32t, "").unwrap();
            b.build_select(f2, own, k, "").unwrap().into_int_value()
        } else {
            b.build_unconditional_branch(run).unwrap();
            b.position_at_end(run);
            k
        };
        let tracks = (self.has_stops && !nostate) || kind == Kind::Outline;
        if tracks && kind != Kind::Probe {
            b.build_store(sp, i16t.const_int(ST_EXIT as u64, false))
                .unwrap();
        }
        if kind == Kind::Exit {
            let old = b.build_load(i64t, self.seen, "").unwrap().into_int_value();
            let one = i64t.const_int(1, false);
            b.build_store(self.seen, b.build_or(old, one, "").unwrap())
                .unwrap();
            b.build_unconditional_branch(xl).unwrap();
        } else {
            let args = self.step_args([t, x, y, z], kval, probe, nostate, cids);
            if kind == Kind::Outline {
                // The running thread's ids, for device functions, runtime calls and fault reports.
                let cx = self.p(extra::CTX).into_pointer_value();
                let put = |o: u32, v: IntValue<'c>| {
                    // SAFETY: `build_gep` only builds IR (a field of the context block); nothing is dereferenced here.
                    let q = unsafe {
                        b.build_gep(i8t, cx, &[i64t.const_int(o as u64, false)], "")
                            .unwrap()
                    };
                    b.build_store(q, v).unwrap();
                };
                put(offset::TID, x);
                put(offset::TID + 4, y);
                put(offset::TID + 8, z);
                put(offset::FLAT_TID, t);
                put(offset::LANEID, b.build_and(t, self.c32(31), "").unwrap());
                put(
                    offset::WARPID,
                    b.build_right_shift(t, self.c32(5), false, "").unwrap(),
                );
                if let Some(c) = cids {
                    for (n, v) in c.iter().enumerate() {
                        put(offset::CTAID + 4 * n as u32, *v);
                    }
                }
            }
            let cs = b.build_call(self.step, &args, "").unwrap();
            lf::call_site_attr(
                ctx,
                cs,
                if kind == Kind::Outline {
                    "noinline"
                } else {
                    "alwaysinline"
                },
            );
            if kind == Kind::Probe {
                let taken = self.probed(t64);
                let cnt = self.load32(self.pcnt);
                let inc = b.build_int_z_extend(taken, i32t, "").unwrap();
                b.build_store(self.pcnt, b.build_int_add(cnt, inc, "").unwrap())
                    .unwrap();
                // lo = min(lo, taken ? MAX : x), hi = max(hi, taken ? 0 : x + 1): plain min/max
                // reductions, which the loop vectorizer recognizes.
                let x1 = b.build_int_add(x, self.c32(1), "").unwrap();
                let cand_lo = b
                    .build_select(taken, self.c32(u32::MAX as u64), x, "")
                    .unwrap()
                    .into_int_value();
                let cand_hi = b
                    .build_select(taken, self.c32(0), x1, "")
                    .unwrap()
                    .into_int_value();
                let plo = self.load32(self.plo);
                let lt = b
                    .build_int_compare(IntPredicate::ULT, cand_lo, plo, "")
                    .unwrap();
                b.build_store(self.plo, b.build_select(lt, cand_lo, plo, "").unwrap())
                    .unwrap();
                let phi = self.load32(self.phi);
                let gt = b
                    .build_int_compare(IntPredicate::UGT, cand_hi, phi, "")
                    .unwrap();
                b.build_store(self.phi, b.build_select(gt, cand_hi, phi, "").unwrap())
                    .unwrap();
            } else if tracks {
                let s = b.build_load(i16t, sp, "").unwrap().into_int_value();
                let s64 = b.build_int_z_extend(s, i64t, "").unwrap();
                let j = b.build_and(s64, i64t.const_int(0x7fff, false), "").unwrap();
                let many = i64t.const_int(SEEN_MANY as u64, false);
                let lt = b.build_int_compare(IntPredicate::ULT, j, many, "").unwrap();
                let j = b.build_select(lt, j, many, "").unwrap().into_int_value();
                let bit = b.build_left_shift(i64t.const_int(1, false), j, "").unwrap();
                // Finished: bit 0; trapped: bit 63.
                let mut bit = bit;
                for (state, seen) in [(ST_EXIT, 1u64), (ST_TRAP, 1 << 63)] {
                    let is = b
                        .build_int_compare(
                            IntPredicate::EQ,
                            s,
                            i16t.const_int(state as u64, false),
                            "",
                        )
                        .unwrap();
                    bit = b
                        .build_select(is, i64t.const_int(seen, false), bit, "")
                        .unwrap()
                        .into_int_value();
                }
                let old = b.build_load(i64t, self.seen, "").unwrap().into_int_value();
                b.build_store(self.seen, b.build_or(old, bit, "").unwrap())
                    .unwrap();
            }
            b.build_unconditional_branch(xl).unwrap();
        }
        let latch = |bb: BasicBlock<'c>,
                     slot: PointerValue<'c>,
                     lim: IntValue<'c>,
                     head: BasicBlock<'c>,
                     out: BasicBlock<'c>,
                     step: u32| {
            b.position_at_end(bb);
            let v = self.load32(slot);
            // Thread coordinates stay below the CTA's size (at most 1024 threads), so the
            // step wraps neither way: with the flags, SCEV knows the x counter is `nsw`, and
            // IndVarSimplify widens `sext(IV + T)` (the interchanged stride loops' induction
            // value, `stop.rs`) into a 64-bit induction variable instead of a `movslq` per
            // thread.
            let v1 = b.build_int_nuw_add(v, self.c32(step as u64), "").unwrap();
            if let Some(i) = v1.as_instruction() {
                let _ = i.set_no_signed_wrap_flag(true);
            }
            b.build_store(slot, v1).unwrap();
            let c = b.build_int_compare(IntPredicate::ULT, v1, lim, "").unwrap();
            b.build_conditional_branch(c, head, out).unwrap()
        };
        let x_latch = latch(xl, self.xs, hi, xh, yl, stride);
        // The x loop (the one the loop vectorizer widens across threads) vectorized without
        // interleaving: a region's thread loop exists in several versions (all, probe, taken,
        // not taken, outline), each of which LoopVectorize otherwise copies into an
        // interleaved vector loop, a vector epilogue and a scalar remainder. Interleaving
        // buys nothing in the measured kernel (histogram: CPU per launch level) and costs a
        // fifth of its compile together with the process-wide `-enable-epilogue-vectorization
        // =false` (`target::cpu::build`).
        crate::llvm::set_loop_metadata(
            ctx,
            x_latch,
            crate::llvm::loop_id(ctx, &[("llvm.loop.interleave.count", Some(1))]),
        );
        latch(yl, self.ys, nty, yh, zl, 1);
        latch(zl, self.zs, ntz, zh, done, 1);
        pre
    }

    /// Thread `t`'s byte of the probe buffer (`extra::PBUF`).
    fn pbuf_at(&self, t64: IntValue<'c>) -> PointerValue<'c> {
        let i8t = self.l.ctx.i8_type();
        let pbuf = self.p(extra::PBUF).into_pointer_value();
        // SAFETY: `build_gep` only builds IR (an entry of the parameter buffer); nothing is dereferenced here.
        unsafe { self.l.b.build_gep(i8t, pbuf, &[t64], "").unwrap() }
    }

    /// Runs the region from resume point `kr` in probe mode `mode` for the thread at
    /// `(x, 0, 0)`, whose index is `x`; returns that index as i64 (its probe-buffer slot).
    fn probe_one(
        &self,
        kr: IntValue<'c>,
        x: IntValue<'c>,
        mode: u32,
        cids: Option<[IntValue<'c>; 3]>,
    ) -> IntValue<'c> {
        let b = &self.l.b;
        let zero = self.c32(0);
        let args = self.step_args([x, x, zero, zero], kr, mode, true, cids);
        let cs = b.build_call(self.step, &args, "").unwrap();
        lf::call_site_attr(self.l.ctx, cs, "alwaysinline");
        b.build_int_z_extend(x, self.l.i64(), "").unwrap()
    }

    /// Whether thread `t`'s probe (mode 1) found its branch taken.
    fn probed(&self, t64: IntValue<'c>) -> IntValue<'c> {
        let b = &self.l.b;
        let i8t = self.l.ctx.i8_type();
        let pv = b.build_load(i8t, self.pbuf_at(t64), "").unwrap();
        b.build_int_compare(IntPredicate::NE, pv.into_int_value(), i8t.const_zero(), "")
            .unwrap()
    }

    /// The arguments of `K.step` for thread `t` at `(x, y, z)` from resume point `kval`.
    fn step_args(
        &self,
        [t, x, y, z]: [IntValue<'c>; 4],
        kval: IntValue<'c>,
        probe: u32,
        nostate: bool,
        cids: Option<[IntValue<'c>; 3]>,
    ) -> Vec<BasicMetadataValueEnum<'c>> {
        let mut args: Vec<BasicMetadataValueEnum> = (0..self.nptx)
            .map(|k| self.f.get_nth_param(k).unwrap().into())
            .collect();
        for a in 0..extra::COUNT {
            let v: BasicMetadataValueEnum = match a {
                extra::T => t.into(),
                3 => x.into(),
                4 => y.into(),
                5 => z.into(),
                extra::K => kval.into(),
                extra::PROBE => self.c32(probe as u64).into(),
                extra::NOSTATE => self.c32(nostate as u64).into(),
                extra::IV => self.iv.unwrap_or_else(|| self.c32(0)).into(),
                10..=12 if cids.is_some() => cids.unwrap()[(a - extra::C) as usize].into(),
                _ => self.p(a).into(),
            };
            args.push(v);
        }
        args
    }

    /// What the probe pass would leave for a uniform probe branch, from the condition of the
    /// range's first thread (`x = xlo`, `y = z = 0`) alone; then branches to `decide`.
    /// Returns its first block.
    fn probe_first(
        &self,
        kr: IntValue<'c>,
        (xlo, xhi): (IntValue<'c>, IntValue<'c>),
        cids: Option<[IntValue<'c>; 3]>,
        decide: BasicBlock<'c>,
    ) -> BasicBlock<'c> {
        let l = self.l;
        let b = &l.b;
        let entry = self.block("uprobe");
        let run = self.block("uprobe.run");
        let none = self.block("uprobe.empty");
        b.position_at_end(entry);
        let empty = b
            .build_int_compare(IntPredicate::UGE, xlo, xhi, "")
            .unwrap();
        b.build_conditional_branch(empty, none, run).unwrap();
        b.position_at_end(none);
        b.build_store(self.pcnt, self.c32(0)).unwrap();
        b.build_store(self.plo, self.c32(u32::MAX as u64)).unwrap();
        b.build_store(self.phi, self.c32(0)).unwrap();
        b.build_unconditional_branch(decide).unwrap();
        b.position_at_end(run);
        let zero = self.c32(0);
        let taken = self.probed(self.probe_one(kr, xlo, 1, cids));
        let rows = b
            .build_int_mul(self.i(extra::NT + 1), self.i(extra::NT + 2), "")
            .unwrap();
        let total = b
            .build_int_mul(b.build_int_sub(xhi, xlo, "").unwrap(), rows, "")
            .unwrap();
        let sel = |c: IntValue<'c>, a: IntValue<'c>| {
            b.build_select(taken, c, a, "").unwrap().into_int_value()
        };
        b.build_store(self.pcnt, sel(total, zero)).unwrap();
        b.build_store(self.plo, sel(self.c32(u32::MAX as u64), xlo))
            .unwrap();
        b.build_store(self.phi, sel(zero, xhi)).unwrap();
        b.build_unconditional_branch(decide).unwrap();
        entry
    }

    /// What the probe pass would leave for a branch taken by the threads with `%tid.x` in
    /// `t` (see `TidRange`): `pcnt` the taken count over the round's rows, and `plo..phi` the
    /// not-taken x range (`MAX..0` when empty); then branches to `decide`. The interval's
    /// complement within `xlo..xhi` is one range because `t` is a prefix or a suffix of the
    /// integers. A bound held in a uniform register (`TidRange::reg`) is read by running the
    /// region's first thread `kr` in probe mode 4. Returns false (emitting nothing) when the
    /// bound's parameter is not an integer here; branches to the probe pass `pass` when the
    /// global index could wrap in this CTA (or the range is empty).
    fn tid_probe(
        &self,
        kr: IntValue<'c>,
        t: TidRange,
        (xlo, xhi): (IntValue<'c>, IntValue<'c>),
        decide: BasicBlock<'c>,
        pass: BasicBlock<'c>,
        cids: Option<[IntValue<'c>; 3]>,
    ) -> bool {
        let l = self.l;
        let b = &l.b;
        let i64t = l.i64();
        let c64 = |v: i64| i64t.const_int(v as u64, true);
        // The run-time part of the bounds: + parameter - %ctaid.x * %ntid.x.
        let param = match t.param {
            Some(k) => match self.f.get_nth_param(k) {
                Some(BasicValueEnum::IntValue(v)) => Some(v),
                _ => return false,
            },
            None => None,
        };
        let mut off = c64(0);
        // A uniform register: the first thread's value, which probe mode 4 stores.
        let captured = if t.reg || t.plus {
            let run = self.block("tid.bound");
            let empty = b
                .build_int_compare(IntPredicate::UGE, xlo, xhi, "")
                .unwrap();
            b.build_conditional_branch(empty, pass, run).unwrap();
            b.position_at_end(run);
            let pp = self.pbuf_at(self.probe_one(kr, xlo, 4, cids));
            let v = b.build_load(l.i32(), pp, "").unwrap();
            if let Some(i) = v.as_instruction_value() {
                let _ = i.set_alignment(1);
            }
            Some(v.into_int_value())
        } else {
            None
        };
        let param = if t.reg { captured } else { param };
        let ext = |v: IntValue<'c>| {
            let v = if v.get_type().get_bit_width() > 32 {
                b.build_int_truncate(v, l.i32(), "").unwrap()
            } else {
                v
            };
            if t.signed {
                b.build_int_s_extend(v, i64t, "").unwrap()
            } else {
                b.build_int_z_extend(v, i64t, "").unwrap()
            }
        };
        if let Some(v) = param {
            off = ext(v);
        }
        // The compared index is computed in 32 bits: where it could wrap in this CTA the
        // interval is not the truth; probe then.
        let limit = c64(if t.signed { 1i64 << 31 } else { 1i64 << 32 });
        let ntid = b.build_int_z_extend(self.i(extra::NT), i64t, "").unwrap();
        let mut lose = |base: IntValue<'c>| {
            off = b.build_int_sub(off, base, "").unwrap();
            let end = b.build_int_add(base, ntid, "").unwrap();
            let fits = b
                .build_int_compare(IntPredicate::SLE, end, limit, "")
                .unwrap();
            let go = self.block("tid.fits");
            b.build_conditional_branch(fits, go, pass).unwrap();
            b.position_at_end(go);
        };
        if t.base {
            let ctaid = cids.map_or_else(|| self.i(extra::C), |c| c[0]);
            let ctaid = b.build_int_z_extend(ctaid, i64t, "").unwrap();
            lose(b.build_int_mul(ctaid, ntid, "").unwrap());
        }
        // `%tid.x + U`: U is the first thread's index value less its `%tid.x`.
        if let (true, Some(v)) = (t.plus, captured) {
            let x0 = b.build_int_z_extend(xlo, i64t, "").unwrap();
            lose(b.build_int_sub(ext(v), x0, "").unwrap());
        }
        let bound = |v: i64| {
            if v <= -BIG || v >= BIG {
                c64(v)
            } else {
                b.build_int_add(c64(v), off, "").unwrap()
            }
        };
        let (tlo, thi) = (bound(t.lo), bound(t.hi));
        let lo = b.build_int_z_extend(xlo, i64t, "").unwrap();
        let hi = b.build_int_z_extend(xhi, i64t, "").unwrap();
        let max = |a: IntValue<'c>, c: IntValue<'c>| {
            let gt = b.build_int_compare(IntPredicate::SGT, a, c, "").unwrap();
            b.build_select(gt, a, c, "").unwrap().into_int_value()
        };
        let min = |a: IntValue<'c>, c: IntValue<'c>| {
            let lt = b.build_int_compare(IntPredicate::SLT, a, c, "").unwrap();
            b.build_select(lt, a, c, "").unwrap().into_int_value()
        };
        // The condition's threads within the range: [ilo, ihi) (empty when ihi <= ilo).
        let ilo = min(max(tlo, lo), hi);
        let ihi = max(min(thi, hi), ilo);
        let in_cond = b.build_int_sub(ihi, ilo, "").unwrap();
        let width = b.build_int_sub(hi, lo, "").unwrap();
        // Not taken: the complement of the condition, or the condition when negated.
        let (nlo, nhi) = if t.negated {
            (ilo, ihi)
        } else if t.lo <= -BIG {
            // A prefix: the rest is [ihi, hi).
            (ihi, hi)
        } else {
            // A suffix: the rest is [lo, ilo).
            (lo, ilo)
        };
        let taken_x = if t.negated {
            b.build_int_sub(width, in_cond, "").unwrap()
        } else {
            in_cond
        };
        let rows = b
            .build_int_mul(self.i(extra::NT + 1), self.i(extra::NT + 2), "")
            .unwrap();
        let rows = b.build_int_z_extend(rows, i64t, "").unwrap();
        let cnt = b.build_int_mul(taken_x, rows, "").unwrap();
        let i32t = l.i32();
        let tr = |v: IntValue<'c>| b.build_int_truncate(v, i32t, "").unwrap();
        let empty = b
            .build_int_compare(IntPredicate::SLE, nhi, nlo, "")
            .unwrap();
        let plo = b
            .build_select(empty, self.c32(u32::MAX as u64), tr(nlo), "")
            .unwrap();
        let phi = b.build_select(empty, self.c32(0), tr(nhi), "").unwrap();
        b.build_store(self.pcnt, tr(cnt)).unwrap();
        b.build_store(self.plo, plo).unwrap();
        b.build_store(self.phi, phi).unwrap();
        b.build_unconditional_branch(decide).unwrap();
        true
    }

    /// Region `r` over x in `range`: probed when `probed`, else one nest. Ends in `done`.
    /// `facts`: whether the region's rounds reach one stop (no per-thread state), which probe
    /// directions have nothing to do, and the probe branch's thread interval when known.
    fn region(
        &self,
        r: u32,
        probed: bool,
        range: (IntValue<'c>, IntValue<'c>),
        cids: Option<[IntValue<'c>; 3]>,
        done: BasicBlock<'c>,
        facts: RegionFacts,
    ) -> BasicBlock<'c> {
        let RegionFacts {
            must,
            empty,
            analytic,
            uniform,
            lanes,
            exits,
            exit_then,
        } = facts;
        let l = self.l;
        let b = &l.b;
        let kr = self.c32(r as u64);
        // The region as written, each thread branching on its own (probe mode 0).
        let unspecialized =
            |tag: &str| self.nest(tag, Kind::All, kr, 0, range, cids, done, must, 1);
        if !probed {
            return unspecialized(&format!("all{r}"));
        }
        let (xlo, xhi) = range;
        // `if (lane == 0)` before the region's barrier, the other lanes having nothing to do, or
        // before `ret` (the other lanes finish at once): one strided nest over the lanes that
        // work, without probing; finishing lanes are all marked first (the working lanes'
        // nest records their own outcome after).
        if let Some(ln) = lanes {
            let (dir, other_empty, other_exits) = if ln.taken {
                (3, empty.1, exits.1)
            } else {
                (2, empty.0, exits.0)
            };
            if (must && other_empty) || other_exits {
                let entry = self.block(&format!("r{r}.lanes"));
                b.position_at_end(entry);
                let m = self.c32(ln.modulus as u64);
                let rem = b.build_int_unsigned_rem(xlo, m, "").unwrap();
                let to = b
                    .build_int_add(
                        self.c32(ln.residue as u64),
                        b.build_int_sub(m, rem, "").unwrap(),
                        "",
                    )
                    .unwrap();
                let lo = b
                    .build_int_add(xlo, b.build_int_unsigned_rem(to, m, "").unwrap(), "")
                    .unwrap();
                let nest = self.nest(
                    &format!("lanes{r}"),
                    Kind::All,
                    kr,
                    dir,
                    (lo, xhi),
                    cids,
                    done,
                    must,
                    ln.modulus,
                );
                let first = if other_exits && !must {
                    self.nest(
                        &format!("lanes{r}.exit"),
                        Kind::Exit,
                        kr,
                        0,
                        range,
                        cids,
                        nest,
                        false,
                        1,
                    )
                } else {
                    nest
                };
                b.position_at_end(entry);
                b.build_unconditional_branch(first).unwrap();
                return entry;
            }
        }
        // Whether the threads' directions can interleave only in rare rounds: a uniform probe
        // branch never splits the threads (the decision finds none or all taken), and a
        // `%tid.x` interval in a CTA known to be one-dimensional leaves one range for each
        // direction (`tid_probe`), so only its fallback — the probe pass, where the global
        // index could wrap in the CTA — can find them mixed. There the region then runs
        // through the out-of-line `K.step` rather than an inlined copy of its own, which the
        // optimizer and code generation would otherwise widen and allocate for nothing (a
        // thread-loop kernel's compile is spent on its copies of each region).
        let cold_mixed = uniform || (analytic.is_some() && self.one_d);
        let entry = self.block(&format!("r{r}.probe"));
        let decide = self.block(&format!("r{r}.decide"));
        let probe_pass = || {
            self.nest(
                &format!("probe{r}"),
                Kind::Probe,
                kr,
                1,
                range,
                cids,
                decide,
                true,
                1,
            )
        };
        // The probe pass, unless the interval's fallback runs the region as a mixed round.
        let early = (!cold_mixed || analytic.is_none()).then(probe_pass);
        // A uniform branch: the first thread's condition, for every thread.
        let one = uniform.then(|| self.probe_first(kr, range, cids, decide));
        // Range slots of the two specialized nests and the phase of a split run.
        let slot = |n: &str| {
            let e = self.f.get_first_basic_block().unwrap();
            let tmp = l.ctx.create_builder();
            tmp.position_before(&e.get_first_instruction().unwrap());
            tmp.build_alloca(l.i32(), n).unwrap()
        };
        let (tlo, thi, nlo, nhi, phase) = (
            slot("tlo"),
            slot("thi"),
            slot("nlo"),
            slot("nhi"),
            slot("phase"),
        );
        let after_t = self.block(&format!("r{r}.after_t"));
        let after_n = self.block(&format!("r{r}.after_n"));
        let t_pre = self.block(&format!("r{r}.t"));
        let n_pre = self.block(&format!("r{r}.n"));
        // Taken / not-taken nests over the ranges in the slots (nothing when the threads of
        // that direction have nothing to do).
        let dirs = [
            ("taken", 3, t_pre, after_t, empty.0, exits.0, tlo, thi),
            ("nottaken", 2, n_pre, after_n, empty.1, exits.1, nlo, nhi),
        ];
        for (name, probe, pre, after, skip, exit, lo, hi) in dirs {
            b.position_at_end(pre);
            if must && skip {
                b.build_unconditional_branch(after).unwrap();
                continue;
            }
            let range = (self.load32(lo), self.load32(hi));
            // Threads that go straight to `ret`: their state is EXIT, nothing runs.
            let kind = if exit { Kind::Exit } else { Kind::All };
            let nest = self.nest(
                &format!("{name}{r}"),
                kind,
                kr,
                probe,
                range,
                cids,
                after,
                must,
                1,
            );
            b.position_at_end(pre);
            b.build_unconditional_branch(nest).unwrap();
        }
        // Probing: a pass over the threads, or the interval the analysis found (which falls
        // back to the pass when it cannot be computed here).
        let pass = self.block(&format!("r{r}.pass"));
        b.position_at_end(entry);
        let fallback = match analytic {
            Some(t) if self.tid_probe(kr, t, range, decide, pass, cids) => true,
            _ => {
                b.position_at_end(entry);
                b.build_unconditional_branch(one.unwrap_or(pass)).unwrap();
                false
            }
        };
        // Decision: phase 0 none taken, 1 all taken, 2/3/4 split (taken, not taken, taken).
        b.position_at_end(decide);
        let cnt = self.load32(self.pcnt);
        let (plo, phi) = (self.load32(self.plo), self.load32(self.phi));
        let (nty, ntz) = (self.i(extra::NT + 1), self.i(extra::NT + 2));
        let width = b.build_int_sub(xhi, xlo, "").unwrap();
        let total = b
            .build_int_mul(width, b.build_int_mul(nty, ntz, "").unwrap(), "")
            .unwrap();
        let none = b
            .build_int_compare(IntPredicate::EQ, cnt, self.c32(0), "")
            .unwrap();
        let all = b
            .build_int_compare(IntPredicate::EQ, cnt, total, "")
            .unwrap();
        let one_d = b
            .build_int_compare(
                IntPredicate::EQ,
                b.build_int_mul(nty, ntz, "").unwrap(),
                self.c32(1),
                "",
            )
            .unwrap();
        let span = b.build_int_sub(phi, plo, "").unwrap();
        let fits = b
            .build_int_compare(
                IntPredicate::EQ,
                b.build_int_add(span, cnt, "").unwrap(),
                total,
                "",
            )
            .unwrap();
        let split = b.build_and(one_d, fits, "").unwrap();
        let d_none = self.block(&format!("r{r}.none"));
        let d_rest = self.block(&format!("r{r}.rest"));
        let d_all = self.block(&format!("r{r}.every"));
        let d_rest2 = self.block(&format!("r{r}.rest2"));
        let d_split = self.block(&format!("r{r}.split"));
        let d_mixed = self.block(&format!("r{r}.mixed"));
        b.build_conditional_branch(none, d_none, d_rest).unwrap();
        // The threads that do not finish, for `K.fis` (`RegionFacts::exit_then`).
        let publish = |lo: IntValue<'c>, hi: IntValue<'c>| {
            if exit_then {
                b.build_store(self.fis_field(off::XLO), lo).unwrap();
                b.build_store(self.fis_field(off::XHI), hi).unwrap();
            }
        };
        let unknown = self.c32(NO_RANGE);
        let nothing = self.c32(0);
        b.position_at_end(d_none);
        if exits.0 {
            publish(xlo, xhi);
        } else {
            publish(nothing, nothing);
        }
        b.build_store(nlo, xlo).unwrap();
        b.build_store(nhi, xhi).unwrap();
        b.build_store(phase, self.c32(0)).unwrap();
        b.build_unconditional_branch(n_pre).unwrap();
        b.position_at_end(d_rest);
        b.build_conditional_branch(all, d_all, d_rest2).unwrap();
        b.position_at_end(d_all);
        if exits.0 {
            publish(nothing, nothing);
        } else {
            publish(xlo, xhi);
        }
        b.build_store(tlo, xlo).unwrap();
        b.build_store(thi, xhi).unwrap();
        b.build_store(phase, self.c32(1)).unwrap();
        b.build_unconditional_branch(t_pre).unwrap();
        b.position_at_end(d_rest2);
        b.build_conditional_branch(split, d_split, d_mixed).unwrap();
        b.position_at_end(d_split);
        if exits.0 {
            publish(plo, phi);
        } else {
            // Taken: xlo..plo and phi..xhi, one range when either is empty.
            let eq = |a: IntValue<'c>, c: IntValue<'c>| {
                b.build_int_compare(IntPredicate::EQ, a, c, "").unwrap()
            };
            let sel = |c: IntValue<'c>, a: IntValue<'c>, o: IntValue<'c>| {
                b.build_select(c, a, o, "").unwrap().into_int_value()
            };
            let (low, high) = (eq(plo, xlo), eq(phi, xhi));
            publish(
                sel(low, phi, sel(high, xlo, unknown)),
                sel(low, xhi, sel(high, plo, unknown)),
            );
        }
        b.build_store(tlo, xlo).unwrap();
        b.build_store(thi, plo).unwrap();
        b.build_store(nlo, plo).unwrap();
        b.build_store(nhi, phi).unwrap();
        b.build_store(phase, self.c32(2)).unwrap();
        b.build_unconditional_branch(t_pre).unwrap();
        // Mixed (the directions interleave, e.g. `lane == 0`): the region unspecialized, each
        // thread taking its own direction inside the loop, over the whole range (every thread
        // there is at `want`). The probe pass ran only side-effect-free code, so running the
        // region from its start again is exact.
        let mixed = if cold_mixed {
            // Rare here (see `cold_mixed`): the out-of-line `K.step` for every thread of the
            // range (`fmode` 0) instead of another inlined copy of the region.
            let nest = self.nest(
                &format!("mixed{r}"),
                Kind::Outline,
                kr,
                0,
                range,
                cids,
                done,
                false,
                1,
            );
            let pre = self.block(&format!("r{r}.outline"));
            b.position_at_end(pre);
            b.build_store(self.fmode, self.c32(0)).unwrap();
            b.build_unconditional_branch(nest).unwrap();
            pre
        } else {
            unspecialized(&format!("mixed{r}"))
        };
        b.position_at_end(d_mixed);
        b.build_unconditional_branch(mixed).unwrap();
        b.position_at_end(pass);
        if fallback && cold_mixed {
            // The interval's fallback runs the region as a mixed round: the threads take their
            // own directions there, and the probe pass, a thread loop of its own, is left out.
            b.build_unconditional_branch(d_mixed).unwrap();
        } else {
            b.build_store(self.pcnt, self.c32(0)).unwrap();
            b.build_store(self.plo, xhi).unwrap();
            b.build_store(self.phi, self.c32(0)).unwrap();
            let probe = early.unwrap_or_else(probe_pass);
            b.position_at_end(pass);
            b.build_unconditional_branch(probe).unwrap();
        }
        // After the taken nest: phase 2 goes on with the not-taken range, else done.
        b.position_at_end(after_t);
        let ph = self.load32(phase);
        let go_n = b
            .build_int_compare(IntPredicate::EQ, ph, self.c32(2), "")
            .unwrap();
        let to_n = self.block(&format!("r{r}.to_n"));
        b.build_conditional_branch(go_n, to_n, done).unwrap();
        b.position_at_end(to_n);
        b.build_store(phase, self.c32(3)).unwrap();
        b.build_unconditional_branch(n_pre).unwrap();
        // After the not-taken nest: phase 3 ends with the taken range above it.
        b.position_at_end(after_n);
        let ph = self.load32(phase);
        let go_t = b
            .build_int_compare(IntPredicate::EQ, ph, self.c32(3), "")
            .unwrap();
        let to_t = self.block(&format!("r{r}.to_t"));
        b.build_conditional_branch(go_t, to_t, done).unwrap();
        b.position_at_end(to_t);
        b.build_store(tlo, self.load32(nhi)).unwrap();
        b.build_store(thi, xhi).unwrap();
        b.build_store(phase, self.c32(4)).unwrap();
        b.build_unconditional_branch(t_pre).unwrap();
        entry
    }
}

/// What the analysis knows about a region: every thread reaches one stop (`must`), which
/// probe directions have nothing to do (`empty`: taken, not taken), and the `%tid.x` interval
/// taking its probe branch.
#[derive(Clone, Copy)]
struct RegionFacts {
    must: bool,
    empty: (bool, bool),
    analytic: Option<TidRange>,
    /// The probe branch is uniform: the first thread's direction is every thread's.
    uniform: bool,
    /// The probe branch picks every `modulus`-th thread.
    lanes: Option<TidLanes>,
    /// Which probe directions (taken, not taken) finish at once.
    exits: (bool, bool),
    /// The other threads all reach one stop (`Plan::exit_then`): the round leaves their
    /// range in `ptx2llvm_fis`'s `xlo`/`xhi` (`NO_RANGE` when they are not one range), for
    /// `K.fis` to go on with them (`chain_rounds`).
    exit_then: bool,
}

/// `xlo`/`xhi` of a round with `RegionFacts::exit_then` whose other threads are not one
/// range (or whose decision took another way).
const NO_RANGE: u64 = u32::MAX as u64;

/// Emits `K.fis` for kernel `name` whose step function `so.step` was lowered, specialized for
/// CTAs of shape `block` when given. Returns it.
pub fn emit_kernel<'c>(
    l: &Lowerer<'c, '_>,
    name: &str,
    layout: &ParamLayout,
    so: &StepOut<'c>,
    block: Option<[u32; 3]>,
) -> FunctionValue<'c> {
    let ctx = l.ctx;
    let b = &l.b;
    let ptr = l.ptr(Space::Generic);
    let i8t = ctx.i8_type();
    let i32t = l.i32();
    let i64t = l.i64();
    let step = so.step;
    let step_params: Vec<BasicTypeEnum> = step
        .get_type()
        .get_param_types()
        .into_iter()
        .map(|t| BasicTypeEnum::try_from(t).expect("basic parameter type"))
        .collect();
    let nptx = step_params.len() as u32 - extra::COUNT;

    // K.fis.loops(<kernel params>, <the step's extras, T = mode, TX = want>, first CTA, CTA
    // count, xlo, xhi).
    let mut lty: Vec<BasicMetadataTypeEnum> = step_params.iter().map(|t| (*t).into()).collect();
    lty.extend::<[BasicMetadataTypeEnum; 4]>([i64t.into(), i32t.into(), i32t.into(), i32t.into()]);
    let loops_ty = ctx.void_type().fn_type(&lty, false);
    let loops = l.module.add_function(
        &format!("{name}.fis.loops"),
        loops_ty,
        Some(Linkage::Internal),
    );
    for k in [
        extra::FIS,
        extra::STATE,
        extra::FRAME,
        extra::OPA,
        extra::OPA_HI,
        extra::OPB,
        extra::OPC,
        extra::MASK,
        extra::RES,
        extra::RESP,
        extra::LOCAL,
        extra::PBUF,
    ] {
        lf::param_attr(ctx, loops, nptx + k, "noalias");
    }

    // K.fis: loads, then the call.
    let fis_ty = ctx
        .void_type()
        .fn_type(&[ptr.into(), ptr.into(), ptr.into()], false);
    let entry_fn = l
        .module
        .add_function(&format!("{name}.fis"), fis_ty, Some(Linkage::External));
    b.position_at_end(ctx.append_basic_block(entry_fn, "entry"));
    let pbuf = entry_fn.get_nth_param(0).unwrap().into_pointer_value();
    let cx = entry_fn.get_nth_param(1).unwrap().into_pointer_value();
    let fisp = entry_fn.get_nth_param(2).unwrap().into_pointer_value();
    let at = |base: PointerValue<'c>, o: u32| -> PointerValue<'c> {
        // SAFETY: `build_gep` only builds IR (a byte offset from `base`); nothing is dereferenced here.
        unsafe {
            b.build_gep(i8t, base, &[i64t.const_int(o as u64, false)], "")
                .unwrap()
        }
    };
    let mut args: Vec<BasicMetadataValueEnum> = Vec::new();
    for (k, t) in step_params.iter().take(nptx as usize).enumerate() {
        let place = layout.params.get(k);
        let p = at(pbuf, place.map_or(0, |p| p.offset));
        if place.is_some_and(|p| p.aggregate) {
            args.push(p.into());
        } else {
            let v = b.build_load(*t, p, "").unwrap();
            if let Some(i) = v.as_instruction_value() {
                let _ = i.set_alignment(1);
            }
            args.push(v.into());
        }
    }
    let ld32 = |base: PointerValue<'c>, o: u32| -> BasicMetadataValueEnum<'c> {
        b.build_load(i32t, at(base, o), "").unwrap().into()
    };
    let ldp = |base: PointerValue<'c>, o: u32| -> BasicMetadataValueEnum<'c> {
        b.build_load(ptr, at(base, o), "").unwrap().into()
    };
    for k in 0..extra::COUNT {
        let v: BasicMetadataValueEnum = match k {
            extra::CTX => cx.into(),
            extra::FIS => fisp.into(),
            extra::T => ld32(fisp, off::MODE),
            3 => ld32(fisp, off::WANT),
            4 | 5 => i32t.const_zero().into(),
            extra::K => ld32(fisp, off::K),
            // A specialized kernel: the CTA shape as constants (the launcher checks it).
            7..=9 => match block {
                Some(d) => i32t
                    .const_int(d[(k - extra::NT) as usize] as u64, false)
                    .into(),
                None => ld32(cx, offset::NTID + 4 * (k - extra::NT)),
            },
            10..=12 => ld32(cx, offset::CTAID + 4 * (k - extra::C)),
            13..=15 => ld32(cx, offset::NCTAID + 4 * (k - extra::NC)),
            extra::N => match block {
                Some([x, y, z]) => i32t.const_int(x as u64 * y as u64 * z as u64, false).into(),
                None => ld32(fisp, off::N),
            },
            extra::SHARED => ldp(cx, offset::SHARED),
            extra::STATE => ldp(fisp, off::STATE),
            extra::FRAME => ldp(fisp, off::FRAME),
            extra::OPA => ldp(fisp, off::OPA),
            extra::OPA_HI => ldp(fisp, off::OPA_HI),
            extra::OPB => ldp(fisp, off::OPB),
            extra::OPC => ldp(fisp, off::OPC),
            extra::MASK => ldp(fisp, off::MASK),
            extra::RES => ldp(fisp, off::RES),
            extra::RESP => ldp(fisp, off::RESP),
            extra::BANK => ld32(fisp, off::BANK),
            extra::PROBE | extra::NOSTATE | extra::IV => i32t.const_zero().into(),
            extra::PBUF => ldp(fisp, off::PBUF),
            extra::OPLR | extra::OPLW | extra::FRL => ptr.const_null().into(),
            extra::LOCAL => ldp(fisp, off::LOCAL),
            _ => unreachable!("K.step extra parameter {k}"),
        };
        args.push(v);
    }
    args.push(
        b.build_load(i64t, at(fisp, off::CTA_FIRST), "")
            .unwrap()
            .into(),
    );
    args.push(ld32(fisp, off::CTA_COUNT));
    args.push(ld32(fisp, off::XLO));
    args.push(ld32(fisp, off::XHI));
    chain_rounds(l, entry_fn, fisp, nptx, &mut args, loops, so);

    // K.fis.loops.
    let entry = ctx.append_basic_block(loops, "entry");
    b.position_at_end(entry);
    let seen = b.build_alloca(i64t, "seen").unwrap();
    let slot = |n: &str| b.build_alloca(i32t, n).unwrap();
    let g = Gen {
        l,
        f: loops,
        step,
        nptx,
        has_stops: !so.stops.is_empty(),
        seen,
        xs: slot("x"),
        ys: slot("y"),
        zs: slot("z"),
        fmode: slot("fmode"),
        pcnt: slot("pcnt"),
        plo: slot("plo"),
        phi: slot("phi"),
        iv: None,
        frame_bytes: so.frame_bytes,
        one_d: block.is_some_and(|[_, y, z]| y == 1 && z == 1),
    };
    b.build_store(seen, i64t.const_zero()).unwrap();
    let done = g.block("done");
    let all_sw = g.block("all");
    let masked = g.block("masked");
    let generic = g.block("generic");
    let outline_entry = g.block("outline");
    let k = g.i(extra::K);
    let range = (
        g.f.get_nth_param(nptx + L_XLO).unwrap().into_int_value(),
        g.f.get_nth_param(nptx + L_XHI).unwrap().into_int_value(),
    );
    // Masked and generic rounds set the range to all threads.
    // Probe mode 6: out-of-line rounds pass the yields of stride loops by.
    let outline = g.nest("outline", Kind::Outline, k, 6, range, None, done, false, 1);
    b.position_at_end(entry);
    b.build_switch(
        g.i(extra::T),
        generic,
        &[
            (i32t.const_int(MODE_ALL as u64, false), all_sw),
            (i32t.const_int(MODE_MASKED as u64, false), masked),
        ],
    )
    .unwrap();
    b.position_at_end(masked);
    b.build_store(g.fmode, g.c32(1)).unwrap();
    b.build_unconditional_branch(outline_entry).unwrap();
    b.position_at_end(generic);
    b.build_store(g.fmode, g.c32(2)).unwrap();
    b.build_unconditional_branch(outline_entry).unwrap();
    b.position_at_end(outline_entry);
    b.build_unconditional_branch(outline).unwrap();
    let mut cases = Vec::new();
    let chains = warp::warp_chains(so);
    let ns = so.stops.len() as u32;
    if g.has_stops {
        for &r in &so.resumes {
            let must = so.must_stop.contains_key(&r);
            let empty = so.empty_paths.get(&r).copied().unwrap_or((false, false));
            let facts = RegionFacts {
                must,
                empty,
                analytic: so.analytic.get(&r).copied(),
                uniform: so.uniform_probes.contains(&r),
                lanes: so.lanes.get(&r).copied(),
                exits: so.exit_paths.get(&r).copied().unwrap_or((false, false)),
                exit_then: so.exit_then.contains_key(&r),
            };
            let first = g.region(r, so.probes.contains(&r), range, None, done, facts);
            // No range unless the round's decision leaves one.
            let first = if facts.exit_then {
                let pre = g.block(&format!("r{r}.norange"));
                b.position_at_end(pre);
                for o in [off::XLO, off::XHI] {
                    b.build_store(g.fis_field(o), g.c32(NO_RANGE)).unwrap();
                }
                b.build_unconditional_branch(first).unwrap();
                pre
            } else {
                first
            };
            let first = match chains.get(&r) {
                Some(stages) => {
                    let fin = stages.last().is_some_and(|s| so.finish.contains(s));
                    g.warp_chain(name, stages, ns, range, (first, done), fin)
                }
                None => first,
            };
            cases.push((g.c32(r as u64), first));
        }
    } else {
        cases.push((
            g.c32(0),
            cta_loop(
                &g,
                so.probes.contains(&0),
                so.analytic.get(&0).copied(),
                done,
            ),
        ));
    }
    b.position_at_end(all_sw);
    b.build_switch(k, done, &cases).unwrap();
    b.position_at_end(done);
    let fin = g.block("fin");
    g.yield_dispatch(so, range, fin);
    b.position_at_end(fin);
    let s = b.build_load(i64t, seen, "").unwrap().into_int_value();
    let s = if g.has_stops {
        s
    } else {
        b.build_or(s, i64t.const_int(1, false), "").unwrap()
    };
    let fis = g.p(extra::FIS).into_pointer_value();
    b.build_store(at(fis, off::SEEN), s).unwrap();
    b.build_return(None).unwrap();
    entry_fn
}

/// The rest of `K.fis` after its loads: calls `K.fis.loops` for the round the driver asked
/// for and, while the round was an `ALL` round (over every thread, or over the range that
/// holds every unfinished thread), no thread trapped and its
/// region ends at one stop that the driver would resume at once (`bar.sync` with a constant id
/// and no count; a `shfl.sync` with a constant full mask computed inline, in CTAs of whole
/// warps), runs the next round itself, as the driver would (`k`, `want`, the operand bank
/// flipped): the chains of barrier and shuffle rounds of reductions then cost no trip through
/// the driver. The last round's `k`, `want` and `bank` are left in `ptx2llvm_fis`, so the
/// driver goes on from there as if it had run every round.
fn chain_rounds<'c>(
    l: &Lowerer<'c, '_>,
    f: FunctionValue<'c>,
    fisp: PointerValue<'c>,
    nptx: u32,
    args: &mut [BasicMetadataValueEnum<'c>],
    loops: FunctionValue<'c>,
    so: &StepOut<'c>,
) {
    let ctx = l.ctx;
    let b = &l.b;
    let i8t = ctx.i8_type();
    let i32t = l.i32();
    let i64t = l.i64();
    // SAFETY: `build_gep` only builds IR (a byte offset into the fission block); nothing is dereferenced here.
    let at = |o: u32| unsafe {
        b.build_gep(i8t, fisp, &[i64t.const_int(o as u64, false)], "")
            .unwrap()
    };
    let c32 = |v: u64| i32t.const_int(v, false);
    let ns = so.stops.len() as u32;
    // Resume point → (next resume point, the stop, whether it needs whole warps): rounds
    // every thread leaves at one fast barrier or inline full-mask shuffle, and rounds some
    // threads finish in while the others all reach one (the round leaves their range in
    // `xlo`/`xhi`: `RegionFacts::exit_then`), after which the next round runs.
    let successors = |stops_of: &HashMap<u32, u32>| {
        let mut rs: Vec<(&u32, &u32)> = stops_of.iter().collect();
        rs.sort();
        rs.into_iter()
            .filter_map(|(&r, &j)| {
                let (t, warps) = match so.stops.get(j as usize - 1)? {
                    s if s.is_fast_barrier() => (j, false),
                    StopKind::Warp {
                        op: WarpOp::Shfl(_),
                        mask: Some(u32::MAX),
                        inline: true,
                    } => (ns + j, true),
                    _ => return None,
                };
                so.resumes.contains(&t).then_some((r, t, j, warps))
            })
            .collect::<Vec<(u32, u32, u32, bool)>>()
    };
    let chains = successors(&so.must_stop);
    let exit_chains = successors(&so.exit_then);
    let call = |args: &[BasicMetadataValueEnum<'c>]| {
        b.build_call(loops, args, "").unwrap();
    };
    if so.stops.is_empty() {
        call(args);
        b.build_return(None).unwrap();
        return;
    }
    let pre = b.get_insert_block().unwrap();
    let head = ctx.append_basic_block(f, "round");
    let decide = ctx.append_basic_block(f, "chain");
    let exit = ctx.append_basic_block(f, "exit");
    let (ik, iwant, ibank, ixlo, ixhi) = (
        (nptx + extra::K) as usize,
        (nptx + extra::TX) as usize,
        (nptx + extra::BANK) as usize,
        (nptx + L_XLO) as usize,
        (nptx + L_XHI) as usize,
    );
    let val = |v: BasicMetadataValueEnum<'c>| v.into_int_value();
    let (k0, want0, bank0) = (val(args[ik]), val(args[iwant]), val(args[ibank]));
    let (xlo0, xhi0) = (val(args[ixlo]), val(args[ixhi]));
    let mode = val(args[(nptx + extra::T) as usize]);
    let nthreads = val(args[(nptx + extra::N) as usize]);
    let all = b
        .build_int_compare(IntPredicate::EQ, mode, c32(MODE_ALL as u64), "")
        .unwrap();
    // A range `xlo..xhi` short of the CTA (one-dimensional CTAs after some threads finished)
    // holds every unfinished thread: the next round runs the same range.
    let full = all;
    b.build_unconditional_branch(head).unwrap();
    b.position_at_end(head);
    let k = b.build_phi(i32t, "k").unwrap();
    let want = b.build_phi(i32t, "want").unwrap();
    let bank = b.build_phi(i32t, "bank").unwrap();
    let xlo = b.build_phi(i32t, "xlo").unwrap();
    let xhi = b.build_phi(i32t, "xhi").unwrap();
    // Whether threads finished in an earlier round of this call (the driver learns it from
    // bit 0 of `seen`).
    let exited = b.build_phi(i64t, "exited").unwrap();
    k.add_incoming(&[(&k0, pre)]);
    want.add_incoming(&[(&want0, pre)]);
    bank.add_incoming(&[(&bank0, pre)]);
    xlo.add_incoming(&[(&xlo0, pre)]);
    xhi.add_incoming(&[(&xhi0, pre)]);
    exited.add_incoming(&[(&i64t.const_zero(), pre)]);
    // The CTA's ids: `K.fis` goes on with the next CTA of the driver's batch itself.
    let ic = (nptx + extra::C) as usize;
    let cids: Vec<_> = (0..3)
        .map(|d| {
            let p = b.build_phi(i32t, &format!("ctaid{d}")).unwrap();
            p.add_incoming(&[(&val(args[ic + d]), pre)]);
            p
        })
        .collect();
    for (d, p) in cids.iter().enumerate() {
        args[ic + d] = p.as_basic_value().into();
    }
    args[ik] = k.as_basic_value().into();
    args[iwant] = want.as_basic_value().into();
    args[ibank] = bank.as_basic_value().into();
    args[ixlo] = xlo.as_basic_value().into();
    args[ixhi] = xhi.as_basic_value().into();
    call(args);
    let status = b
        .build_load(i32t, at(off::STATUS), "")
        .unwrap()
        .into_int_value();
    let ok = b
        .build_int_compare(IntPredicate::EQ, status, c32(0), "")
        .unwrap();
    let go = b.build_and(full, ok, "").unwrap();
    b.build_conditional_branch(go, decide, exit).unwrap();
    b.position_at_end(decide);
    // The round may have run further (a warp chain): where it ended is in `ptx2llvm_fis`.
    let k_done = b.build_load(i32t, at(off::K), "").unwrap().into_int_value();
    let bank_done = b
        .build_load(i32t, at(off::BANK), "")
        .unwrap()
        .into_int_value();
    let ld = |o: u32| b.build_load(i32t, at(o), "").unwrap().into_int_value();
    let mut cases = Vec::new();
    let tagged = chains
        .iter()
        .map(|c| (c, false))
        .chain(exit_chains.iter().map(|c| (c, true)));
    for (&(r, t, j, needs_warps), finishing) in tagged {
        let bb = ctx.append_basic_block(f, &format!("chain{r}"));
        cases.push((c32(r as u64), bb));
        b.position_at_end(bb);
        let next = ctx.append_basic_block(f, &format!("chain{r}.go"));
        // The range of the next round: the same, or the threads that did not finish.
        let (clo, chi) = (
            xlo.as_basic_value().into_int_value(),
            xhi.as_basic_value().into_int_value(),
        );
        let (nlo, nhi) = if finishing {
            (ld(off::XLO), ld(off::XHI))
        } else {
            (clo, chi)
        };
        let mut go = if finishing {
            let known = b
                .build_int_compare(IntPredicate::NE, nlo, c32(NO_RANGE), "")
                .unwrap();
            let some = b
                .build_int_compare(IntPredicate::ULT, nlo, nhi, "")
                .unwrap();
            b.build_and(known, some, "").unwrap()
        } else {
            l.i1().const_int(1, false)
        };
        if needs_warps {
            // Whole warps: the CTA and the range (read here, off the hot path).
            let whole = b
                .build_or(
                    nthreads,
                    b.build_or(ld(off::XLO), ld(off::XHI), "").unwrap(),
                    "",
                )
                .unwrap();
            let warps = b
                .build_int_compare(
                    IntPredicate::EQ,
                    b.build_and(whole, c32(31), "").unwrap(),
                    c32(0),
                    "",
                )
                .unwrap();
            go = b.build_and(go, warps, "").unwrap();
        }
        b.build_conditional_branch(go, next, exit).unwrap();
        b.position_at_end(next);
        let kt = c32(t as u64);
        let wt = c32((ST_STOP | j as u16) as u64);
        let bt = b.build_xor(bank_done, c32(1), "").unwrap();
        b.build_store(at(off::K), kt).unwrap();
        b.build_store(at(off::WANT), wt).unwrap();
        b.build_store(at(off::BANK), bt).unwrap();
        // Threads finished when the range shrank (it stays when the exit path was not taken).
        let prev = exited.as_basic_value().into_int_value();
        let ex = if finishing {
            let eq = |a, c| b.build_int_compare(IntPredicate::EQ, a, c, "").unwrap();
            let same = b.build_and(eq(nlo, clo), eq(nhi, chi), "").unwrap();
            b.build_select(same, prev, i64t.const_int(1, false), "")
                .unwrap()
                .into_int_value()
        } else {
            prev
        };
        k.add_incoming(&[(&kt, next)]);
        want.add_incoming(&[(&wt, next)]);
        bank.add_incoming(&[(&bt, next)]);
        xlo.add_incoming(&[(&nlo, next)]);
        xhi.add_incoming(&[(&nhi, next)]);
        exited.add_incoming(&[(&ex, next)]);
        for p in &cids {
            p.add_incoming(&[(&p.as_basic_value(), next)]);
        }
        b.build_unconditional_branch(head).unwrap();
    }
    // Rounds after which threads are all at one stop go back to the driver; after others,
    // when no thread stopped (all finished), the next CTA of the batch starts here.
    let fin = ctx.append_basic_block(f, "cta.fin");
    let mut stopping: Vec<u32> = so.must_stop.keys().copied().collect();
    stopping.sort();
    for r in stopping {
        if !cases
            .iter()
            .any(|(c, _)| c.get_zero_extended_constant() == Some(r as u64))
        {
            cases.push((c32(r as u64), exit));
        }
    }
    b.position_at_end(decide);
    b.build_switch(k_done, fin, &cases).unwrap();
    b.position_at_end(fin);
    let seen = b
        .build_load(i64t, at(off::SEEN), "")
        .unwrap()
        .into_int_value();
    let none = b
        .build_int_compare(
            IntPredicate::EQ,
            b.build_and(seen, i64t.const_int(!1u64, false), "").unwrap(),
            i64t.const_zero(),
            "",
        )
        .unwrap();
    let left = b
        .build_load(i32t, at(off::CTA_COUNT), "")
        .unwrap()
        .into_int_value();
    let more = b
        .build_int_compare(IntPredicate::UGT, left, c32(1), "")
        .unwrap();
    let next_cta = ctx.append_basic_block(f, "cta.next");
    b.build_conditional_branch(b.build_and(none, more, "").unwrap(), next_cta, exit)
        .unwrap();
    b.position_at_end(next_cta);
    let cur = [0, 1, 2].map(|d| cids[d].as_basic_value().into_int_value());
    let [nx, ny, nz] = start_next_cta(l, fisp, args, nptx, cur, left, nthreads);
    // `start_next_cta` ends in a block of its own.
    let next_cta = b.get_insert_block().unwrap();
    let bn = b.build_xor(bank_done, c32(1), "").unwrap();
    b.build_store(at(off::K), c32(0)).unwrap();
    b.build_store(at(off::WANT), c32(0)).unwrap();
    b.build_store(at(off::BANK), bn).unwrap();
    let ntx = val(args[(nptx + extra::NT) as usize]);
    k.add_incoming(&[(&c32(0), next_cta)]);
    want.add_incoming(&[(&c32(0), next_cta)]);
    bank.add_incoming(&[(&bn, next_cta)]);
    xlo.add_incoming(&[(&c32(0), next_cta)]);
    xhi.add_incoming(&[(&ntx, next_cta)]);
    exited.add_incoming(&[(&i64t.const_zero(), next_cta)]);
    for (p, v) in cids.iter().zip([nx, ny, nz]) {
        p.add_incoming(&[(&v, next_cta)]);
    }
    b.build_unconditional_branch(head).unwrap();
    b.position_at_end(exit);
    let seen = b
        .build_load(i64t, at(off::SEEN), "")
        .unwrap()
        .into_int_value();
    let seen = b
        .build_or(seen, exited.as_basic_value().into_int_value(), "")
        .unwrap();
    b.build_store(at(off::SEEN), seen).unwrap();
    b.build_return(None).unwrap();
}

/// `K.fis` going on with the next CTA of its batch (block `cta.next` of `chain_rounds`), as
/// the driver does between CTAs (`FisWork::begin`, `run_cta`): the next linear id and count
/// in `ptx2llvm_fis`, the ids `cur` advanced in x, then y, then z and stored in the context
/// (runtime calls and error reports read them), every thread's state and the shared memory
/// zeroed. `left` is the batch's count before. Returns the new ids.
fn start_next_cta<'c>(
    l: &Lowerer<'c, '_>,
    fisp: PointerValue<'c>,
    args: &[BasicMetadataValueEnum<'c>],
    nptx: u32,
    cur: [IntValue<'c>; 3],
    left: IntValue<'c>,
    nthreads: IntValue<'c>,
) -> [IntValue<'c>; 3] {
    let b = &l.b;
    let i8t = l.ctx.i8_type();
    let (i32t, i64t) = (l.i32(), l.i64());
    let c32 = |v: u64| i32t.const_int(v, false);
    // SAFETY: `build_gep` only builds IR (a byte offset from `base`); nothing is dereferenced here.
    let field = |base: PointerValue<'c>, o: u32| unsafe {
        b.build_gep(i8t, base, &[i64t.const_int(o as u64, false)], "")
            .unwrap()
    };
    let arg = |k: u32| args[(nptx + k) as usize];
    let first = b
        .build_load(i64t, field(fisp, off::CTA_FIRST), "")
        .unwrap()
        .into_int_value();
    let first1 = b
        .build_int_add(first, i64t.const_int(1, false), "")
        .unwrap();
    b.build_store(field(fisp, off::CTA_FIRST), first1).unwrap();
    let left1 = b.build_int_sub(left, c32(1), "").unwrap();
    b.build_store(field(fisp, off::CTA_COUNT), left1).unwrap();
    let nc = |d: u32| arg(extra::NC + d).into_int_value();
    let eq = |a, c| b.build_int_compare(IntPredicate::EQ, a, c, "").unwrap();
    let sel = |c: IntValue<'c>, a: IntValue<'c>, e: IntValue<'c>| {
        b.build_select(c, a, e, "").unwrap().into_int_value()
    };
    let inc = |v: IntValue<'c>| b.build_int_add(v, c32(1), "").unwrap();
    let (x1, y1, z1) = (inc(cur[0]), inc(cur[1]), inc(cur[2]));
    let (wrap_x, wrap_y) = (eq(x1, nc(0)), eq(y1, nc(1)));
    let nx = sel(wrap_x, c32(0), x1);
    let ny = sel(wrap_x, sel(wrap_y, c32(0), y1), cur[1]);
    let nz = sel(b.build_and(wrap_x, wrap_y, "").unwrap(), z1, cur[2]);
    let cx = arg(extra::CTX).into_pointer_value();
    for (d, v) in [nx, ny, nz].into_iter().enumerate() {
        b.build_store(field(cx, offset::CTAID + 4 * d as u32), v)
            .unwrap();
    }
    let nthr = b.build_int_z_extend(nthreads, i64t, "").unwrap();
    let state_bytes = b.build_int_mul(nthr, i64t.const_int(2, false), "").unwrap();
    b.build_memset(
        arg(extra::STATE).into_pointer_value(),
        2,
        i8t.const_zero(),
        state_bytes,
    )
    .unwrap();
    let smem = b
        .build_load(i32t, field(cx, offset::TOTAL_SMEM_SIZE), "")
        .unwrap()
        .into_int_value();
    let smem = b.build_int_z_extend(smem, i64t, "").unwrap();
    // Only with shared memory: a `memset` of no bytes is still a call (with the state's, ~120
    // ns a CTA: histogram_global with one grid-stride iteration a thread ran x1.7 slower
    // once its stride loop's yield made it take these rounds).
    let zero = l.ctx.append_basic_block(super::cur_fn(l), "cta.smem.zero");
    let next = l.ctx.append_basic_block(super::cur_fn(l), "cta.smem.done");
    let some = b
        .build_int_compare(IntPredicate::NE, smem, i64t.const_zero(), "")
        .unwrap();
    b.build_conditional_branch(some, zero, next).unwrap();
    b.position_at_end(zero);
    b.build_memset(
        arg(extra::SHARED).into_pointer_value(),
        16,
        i8t.const_zero(),
        smem,
    )
    .unwrap();
    b.build_unconditional_branch(next).unwrap();
    b.position_at_end(next);
    [nx, ny, nz]
}

/// Kernels without stops: a loop over the CTAs `first..first + count` around the start
/// region; returns its first block.
fn cta_loop<'c>(
    g: &Gen<'c, '_, '_>,
    probed: bool,
    analytic: Option<TidRange>,
    done: BasicBlock<'c>,
) -> BasicBlock<'c> {
    let l = g.l;
    let ctx = l.ctx;
    let b = &l.b;
    let i32t = l.i32();
    let i64t = l.i64();
    let first =
        g.f.get_nth_param(g.nptx + L_CFIRST)
            .unwrap()
            .into_int_value();
    let pre = g.block("cta.pre");
    let head = g.block("cta.head");
    let latch = g.block("cta.latch");
    let cs = {
        let entry = g.f.get_first_basic_block().unwrap();
        let tmp = ctx.create_builder();
        tmp.position_before(&entry.get_first_instruction().unwrap());
        tmp.build_alloca(i64t, "cta").unwrap()
    };
    b.position_at_end(pre);
    let count = b
        .build_int_z_extend(
            g.f.get_nth_param(g.nptx + L_CCOUNT)
                .unwrap()
                .into_int_value(),
            i64t,
            "",
        )
        .unwrap();
    b.build_store(cs, first).unwrap();
    b.build_unconditional_branch(head).unwrap();
    b.position_at_end(head);
    let c = b.build_load(i64t, cs, "c").unwrap().into_int_value();
    let ncx = b.build_int_z_extend(g.i(extra::NC), i64t, "").unwrap();
    let ncy = b.build_int_z_extend(g.i(extra::NC + 1), i64t, "").unwrap();
    let cx = b.build_int_unsigned_rem(c, ncx, "").unwrap();
    let rest = b.build_int_unsigned_div(c, ncx, "").unwrap();
    let cy = b.build_int_unsigned_rem(rest, ncy, "").unwrap();
    let cz = b.build_int_unsigned_div(rest, ncy, "").unwrap();
    let t = |v: IntValue<'c>| b.build_int_truncate(v, i32t, "").unwrap();
    let cids = [t(cx), t(cy), t(cz)];
    let full = (g.c32(0), g.i(extra::NT));
    let facts = RegionFacts {
        must: false,
        empty: (false, false),
        analytic,
        uniform: false,
        lanes: None,
        exits: (false, false),
        exit_then: false,
    };
    let body = g.region(0, probed, full, Some(cids), latch, facts);
    b.position_at_end(head);
    b.build_unconditional_branch(body).unwrap();
    b.position_at_end(latch);
    let c1 = b.build_int_add(c, i64t.const_int(1, false), "").unwrap();
    b.build_store(cs, c1).unwrap();
    let end = b.build_int_add(first, count, "").unwrap();
    let more = b.build_int_compare(IntPredicate::ULT, c1, end, "").unwrap();
    b.build_conditional_branch(more, head, done).unwrap();
    pre
}
