//! Stride loops run interchanged (`stride.rs`): after an `ALL` round that left every thread
//! of its range at the yield of a stride loop, `K.fis.loops` runs iteration `k` of every
//! thread before iteration `k + 1` of any, over the thread interval that iteration has,
//! instead of returning to the driver once per iteration.
//!
//! At the yield each thread holds its induction value `i`, the step `s` and the bound `n` of
//! the loop's latch (`add i, i, s; setp.{lt,le} p, i, n; @p bra head`). A capture pass (probe
//! mode 5) reads them (only the first thread's for loops known to start at `%tid.x + U` with
//! `U`, step and bound uniform: `StrideLoop::linear`); when the values are `i0 + (t - xlo)` in
//! thread order, with one step
//! `s >= 1` and one bound, and no value the loop computes can wrap around in 32 bits, thread
//! `t` runs iteration `k >= 1` exactly when `i0 + (t - xlo) + k s < n` (`<=` for `le`): an
//! interval `xlo..hi_k` that shrinks as `k` grows. Iteration `k` is two nests: the threads
//! `xlo..hi_{k+1}`, which go on, in probe mode 8 (the induction value is `IV + T` with `IV`
//! computed here, the latch is taken without evaluating it and the yield returns at once
//! saving only what the loop carries: a loop over threads as tight as the loop body), then
//! `hi_{k+1}..hi_k` in mode 7 (the same, but the latch falls through, again without a look:
//! the interval says these threads leave, and they run on to the loop's exit stop). Those
//! rounds record nothing per thread (`NOSTATE`); the loop's exit outcome (`StrideLoop::exit`:
//! the stop every leaving thread reaches, or the end) is written for all of them at the end.
//! At the yield a thread saves only the live registers the loop writes (a per-thread sum: a
//! load and a store per thread and iteration, which vectorize across threads); `i` comes
//! from `IV` and registers from before the loop keep the values saved when the thread first
//! reached the yield. Otherwise the threads run their
//! loops to the end in one round, passing the yield by (probe mode 6).

use super::*;
use crate::target::cpu::fission::YieldLoop;

impl<'c> Gen<'c, '_, '_> {
    /// At `done` (the end of every round of `K.fis.loops`, the builder there): the rounds of
    /// stride loops whose yield every thread of an `ALL` round reached, then `fin`.
    pub(super) fn yield_dispatch(
        &self,
        so: &StepOut<'c>,
        range: (IntValue<'c>, IntValue<'c>),
        fin: BasicBlock<'c>,
    ) {
        let l = self.l;
        let b = &l.b;
        let i64t = l.i64();
        let mut ys: Vec<(u32, YieldLoop)> = so
            .yields
            .iter()
            .filter(|(j, _)| **j < SEEN_MANY && so.resumes.contains(j))
            .map(|(j, y)| (*j, *y))
            .collect();
        ys.sort_by_key(|y| y.0);
        if ys.is_empty() {
            b.build_unconditional_branch(fin).unwrap();
            return;
        }
        let all = b
            .build_int_compare(
                IntPredicate::EQ,
                self.i(extra::T),
                self.c32(MODE_ALL as u64),
                "",
            )
            .unwrap();
        let seen = b.build_load(i64t, self.seen, "").unwrap().into_int_value();
        let k = self.i(extra::K);
        for (j, y) in ys {
            // Every thread at the yield: the round's seen bits say so, or its region has no
            // other outcome (then they are not recorded).
            let mut at = b
                .build_int_compare(IntPredicate::EQ, seen, i64t.const_int(1 << j, false), "")
                .unwrap();
            // In resume-point order: a map's order would make the IR differ from one run
            // of the compiler to the next.
            let mut regions: Vec<(u32, u32)> = so.must_stop.iter().map(|(&r, &m)| (r, m)).collect();
            regions.sort_unstable();
            for (r, m) in regions {
                if m == j {
                    let is = b
                        .build_int_compare(IntPredicate::EQ, k, self.c32(r as u64), "")
                        .unwrap();
                    at = b.build_or(at, is, "").unwrap();
                }
            }
            let go = b.build_and(all, at, "").unwrap();
            let here = b.get_insert_block().unwrap();
            let run = self.interchanged(j, y, range, fin);
            let other = self.block(&format!("yield{j}.not"));
            b.position_at_end(here);
            b.build_conditional_branch(go, run, other).unwrap();
            b.position_at_end(other);
        }
        b.build_unconditional_branch(fin).unwrap();
    }

    /// The rounds of the stride loop of yield `j` for the threads `xlo..xhi`, all at the
    /// yield (see the module); returns the first block. Ends in `fin`.
    fn interchanged(
        &self,
        j: u32,
        y: YieldLoop,
        (xlo, xhi): (IntValue<'c>, IntValue<'c>),
        fin: BasicBlock<'c>,
    ) -> BasicBlock<'c> {
        let l = self.l;
        let b = &l.b;
        let ctx = l.ctx;
        let i16t = ctx.i16_type();
        let i32t = l.i32();
        let i64t = l.i64();
        let c64 = |v: i64| i64t.const_int(v as u64, true);
        let kj = self.c32(j as u64);
        let entry = self.block(&format!("il{j}"));
        let capture = self.block(&format!("il{j}.capture"));
        let check = self.block(&format!("il{j}.check"));
        let fallback = self.block(&format!("il{j}.fallback"));
        // One-dimensional CTAs: the thread numbers of the range are its x.
        b.position_at_end(entry);
        let one = |k: u32| {
            b.build_int_compare(IntPredicate::EQ, self.i(k), self.c32(1), "")
                .unwrap()
        };
        let some = b
            .build_int_compare(IntPredicate::ULT, xlo, xhi, "")
            .unwrap();
        let ok = b
            .build_and(
                b.build_and(one(extra::NT + 1), one(extra::NT + 2), "")
                    .unwrap(),
                some,
                "",
            )
            .unwrap();
        b.build_conditional_branch(ok, capture, fallback).unwrap();
        // Linear loops (`StrideLoop::linear`): the first thread's values stand for all.
        b.position_at_end(capture);
        let cap_hi = if y.linear {
            b.build_int_add(xlo, self.c32(1), "").unwrap()
        } else {
            xhi
        };
        let cap = self.nest(
            &format!("il{j}.cap"),
            Kind::All,
            kj,
            5,
            (xlo, cap_hi),
            None,
            check,
            true,
            1,
        );
        b.position_at_end(capture);
        b.build_unconditional_branch(cap).unwrap();

        // Check: i(t) = i0 + (t - xlo), one step, one bound.
        b.position_at_end(check);
        let ext = |v: IntValue<'c>| {
            if y.signed {
                b.build_int_s_extend(v, i64t, "").unwrap()
            } else {
                b.build_int_z_extend(v, i64t, "").unwrap()
            }
        };
        let at = |which: u32, t: IntValue<'c>| -> IntValue<'c> {
            // SAFETY: `build_gep` only builds IR (thread `t`'s entry of an operand array); nothing is dereferenced here.
            let p = unsafe {
                b.build_gep(i32t, self.p(which).into_pointer_value(), &[t], "")
                    .unwrap()
            };
            self.load32(p)
        };
        let x0 = b.build_int_z_extend(xlo, i64t, "").unwrap();
        let x1 = b.build_int_z_extend(xhi, i64t, "").unwrap();
        let (i0r, sr, nr) = (at(extra::RES, x0), at(extra::OPB, x0), at(extra::OPC, x0));
        let (i0, s, n) = (ext(i0r), ext(sr), ext(nr));
        let base = b.build_int_sub(i0, x0, "").unwrap();
        let judged = self.block(&format!("il{j}.judged"));
        let g1 = if y.linear {
            // Linear loops (`StrideLoop::linear`): consecutive by construction.
            b.build_unconditional_branch(judged).unwrap();
            l.i1().const_int(1, false)
        } else {
            let head = self.block(&format!("il{j}.lin"));
            b.build_unconditional_branch(head).unwrap();
            b.position_at_end(head);
            let t = b.build_phi(i64t, "t").unwrap();
            let good = b.build_phi(l.i1(), "good").unwrap();
            t.add_incoming(&[(&x0, check)]);
            good.add_incoming(&[(&l.i1().const_int(1, false), check)]);
            let tv = t.as_basic_value().into_int_value();
            let gv = good.as_basic_value().into_int_value();
            let eq = |a: IntValue<'c>, c: IntValue<'c>| {
                b.build_int_compare(IntPredicate::EQ, a, c, "").unwrap()
            };
            let lin = eq(
                b.build_int_sub(ext(at(extra::RES, tv)), tv, "").unwrap(),
                base,
            );
            let same = b
                .build_and(eq(at(extra::OPB, tv), sr), eq(at(extra::OPC, tv), nr), "")
                .unwrap();
            let g1 = b
                .build_and(gv, b.build_and(lin, same, "").unwrap(), "")
                .unwrap();
            let t1 = b.build_int_add(tv, c64(1), "").unwrap();
            t.add_incoming(&[(&t1, head)]);
            good.add_incoming(&[(&g1, head)]);
            let more = b.build_int_compare(IntPredicate::ULT, t1, x1, "").unwrap();
            b.build_conditional_branch(more, head, judged).unwrap();
            g1
        };
        // No value the loop computes wraps: the first step from any thread's start (for
        // linear loops also: no thread's start wrapped), and the step past the bound.
        b.position_at_end(judged);
        let max = if y.signed {
            (1i64 << 31) - 1
        } else {
            (1i64 << 32) - 1
        };
        let sle = |a: IntValue<'c>, c: IntValue<'c>| {
            b.build_int_compare(IntPredicate::SLE, a, c, "").unwrap()
        };
        let last_start = b
            .build_int_add(i0, b.build_int_sub(x1, c64(1), "").unwrap(), "")
            .unwrap();
        let last_start = b.build_int_sub(last_start, x0, "").unwrap();
        // `IV` (`i0 - xlo + k s`, which only grows) is in range itself, so that `IV + T`
        // never wraps in 32 bits (`K.step` adds them with `nsw`/`nuw`).
        let min = if y.signed { -(1i64 << 31) } else { 0 };
        let fits = [
            sle(c64(min), base),
            sle(c64(1), s),
            sle(b.build_int_add(last_start, s, "").unwrap(), c64(max)),
            sle(
                b.build_int_add(n, s, "").unwrap(),
                c64(max + if y.le { 0 } else { 1 }),
            ),
        ]
        .into_iter()
        .fold(g1, |a, c| b.build_and(a, c, "").unwrap());
        let kpre = self.block(&format!("il{j}.k"));
        b.build_conditional_branch(fits, kpre, fallback).unwrap();

        // Iteration k: the threads xlo..hi_k.
        let khead = self.block(&format!("il{j}.kh"));
        let krun = self.block(&format!("il{j}.kr"));
        let klatch = self.block(&format!("il{j}.kl"));
        let kend = self.block(&format!("il{j}.ke"));
        b.position_at_end(kpre);
        b.build_unconditional_branch(khead).unwrap();
        b.position_at_end(khead);
        let kk = b.build_phi(i64t, "k").unwrap();
        kk.add_incoming(&[(&c64(0), kpre)]);
        let kv = kk.as_basic_value().into_int_value();
        // x0 + n - i0 (+ 1) - k s: the first thread whose value is past the bound.
        let lim = b
            .build_int_sub(
                b.build_int_add(x0, b.build_int_sub(n, i0, "").unwrap(), "")
                    .unwrap(),
                b.build_int_mul(kv, s, "").unwrap(),
                "",
            )
            .unwrap();
        let lim = b.build_int_add(lim, c64(y.le as i64), "").unwrap();
        let clamp = |v: IntValue<'c>, lo: IntValue<'c>, hi: IntValue<'c>| {
            let v = b
                .build_select(
                    b.build_int_compare(IntPredicate::SLT, v, lo, "").unwrap(),
                    lo,
                    v,
                    "",
                )
                .unwrap()
                .into_int_value();
            b.build_select(
                b.build_int_compare(IntPredicate::SGT, v, hi, "").unwrap(),
                hi,
                v,
                "",
            )
            .unwrap()
            .into_int_value()
        };
        let first = b
            .build_int_compare(IntPredicate::EQ, kv, c64(0), "")
            .unwrap();
        let hi = b
            .build_select(first, x1, clamp(lim, x0, x1), "")
            .unwrap()
            .into_int_value();
        let has = b.build_int_compare(IntPredicate::UGT, hi, x0, "").unwrap();
        b.build_conditional_branch(has, krun, kend).unwrap();
        // Threads xlo..hn go on to iteration k + 1 (mode 8: the latch is taken without a
        // look), hn..hi leave the loop in this one (mode 7).
        let (hn32, hi32, ivk) = {
            b.position_at_end(krun);
            let hn = clamp(b.build_int_sub(lim, s, "").unwrap(), x0, hi);
            // Thread t's induction value: i0 + (t - xlo) + k s.
            let v = b
                .build_int_add(
                    b.build_int_sub(i0, x0, "").unwrap(),
                    b.build_int_mul(kv, s, "").unwrap(),
                    "",
                )
                .unwrap();
            (
                b.build_int_truncate(hn, i32t, "").unwrap(),
                b.build_int_truncate(hi, i32t, "").unwrap(),
                b.build_int_truncate(v, i32t, "").unwrap(),
            )
        };
        let gk = Gen {
            iv: Some(ivk),
            ..*self
        };
        let last = gk.nest(
            &format!("il{j}.last"),
            Kind::All,
            kj,
            7,
            (hn32, hi32),
            None,
            klatch,
            true,
            1,
        );
        let on = gk.nest(
            &format!("il{j}.on"),
            Kind::All,
            kj,
            8,
            (xlo, hn32),
            None,
            last,
            true,
            1,
        );
        b.position_at_end(krun);
        b.build_unconditional_branch(on).unwrap();
        // A trap ends the launch: no further iterations.
        b.position_at_end(klatch);
        let fis = self.p(extra::FIS).into_pointer_value();
        // SAFETY: `build_gep` only builds IR (a byte offset into the fission block); nothing is dereferenced here.
        let st = unsafe {
            b.build_gep(
                ctx.i8_type(),
                fis,
                &[i64t.const_int(off::STATUS as u64, false)],
                "",
            )
            .unwrap()
        };
        let status = self.load32(st);
        let k1 = b.build_int_add(kv, c64(1), "").unwrap();
        kk.add_incoming(&[(&k1, klatch)]);
        let fine = b
            .build_int_compare(IntPredicate::EQ, status, self.c32(0), "")
            .unwrap();
        b.build_conditional_branch(fine, khead, fin).unwrap();

        // Every thread left the loop where `exit` says.
        b.position_at_end(kend);
        let (state, bit) = match y.exit {
            Some(e) => (ST_STOP | e as u16, 1u64 << e.min(SEEN_MANY)),
            None => (ST_EXIT, 1),
        };
        let fill = self.block(&format!("il{j}.fill"));
        let filled = self.block(&format!("il{j}.filled"));
        b.build_unconditional_branch(fill).unwrap();
        b.position_at_end(fill);
        let ft = b.build_phi(i64t, "t").unwrap();
        ft.add_incoming(&[(&x0, kend)]);
        let fv = ft.as_basic_value().into_int_value();
        // SAFETY: `build_gep` only builds IR (thread `fv`'s state entry); nothing is dereferenced here.
        let sp = unsafe {
            b.build_gep(i16t, self.p(extra::STATE).into_pointer_value(), &[fv], "")
                .unwrap()
        };
        b.build_store(sp, i16t.const_int(state as u64, false))
            .unwrap();
        let f1 = b.build_int_add(fv, c64(1), "").unwrap();
        ft.add_incoming(&[(&f1, fill)]);
        let more = b.build_int_compare(IntPredicate::ULT, f1, x1, "").unwrap();
        b.build_conditional_branch(more, fill, filled).unwrap();
        b.position_at_end(filled);
        b.build_store(self.seen, i64t.const_int(bit, false))
            .unwrap();
        b.build_unconditional_branch(fin).unwrap();

        // Otherwise each thread runs its loop to the end, passing the yield by.
        b.position_at_end(fallback);
        b.build_store(self.seen, i64t.const_zero()).unwrap();
        let pass = self.nest(
            &format!("il{j}.pass"),
            Kind::All,
            kj,
            6,
            (xlo, xhi),
            None,
            fin,
            false,
            1,
        );
        b.position_at_end(fallback);
        b.build_unconditional_branch(pass).unwrap();
        entry
    }
}
