//! Chains of shuffle rounds run warp by warp (`warp_chains`, `Gen::warp_chain`): `K.warp<r>`
//! runs every stage of a chain for one warp, each lane an inlined copy of `K.lane<r>` with a
//! constant lane number; stages but the last pass their shuffle operands and live registers
//! through arrays local to `K.warp<r>` (probe modes 9-11), which LLVM keeps in registers.

use super::*;

/// Instructions of the region after a chain's last shuffle that `warp_chains` copies for
/// every lane (`K.warp<r>` holds 32 copies of each stage).
const TAIL_MAX: usize = 24;

/// Chains of rounds to run warp by warp (`Gen::warp_chain`), by the resume point that
/// starts them: resume points whose region (not probed) every thread leaves at one
/// `shfl.sync` with a constant full mask computed inline, each resuming after the previous
/// one's shuffle; at least two.
pub(super) fn warp_chains(so: &StepOut) -> HashMap<u32, Vec<u32>> {
    let ns = so.stops.len() as u32;
    let next = |r: u32| -> Option<u32> {
        // Only regions between two shuffles: the region before the first one is usually the
        // thread's real work, which 32 copies per warp would make slow to compile.
        if so.probes.contains(&r) || r <= ns {
            return None;
        }
        let j = *so.must_stop.get(&r)?;
        match so.stops.get(j as usize - 1)? {
            StopKind::Warp {
                op: WarpOp::Shfl(_),
                mask: Some(u32::MAX),
                inline: true,
            } if so.resumes.contains(&(ns + j)) => Some(ns + j),
            _ => None,
        }
    };
    let mut out = HashMap::new();
    // Chains start where no stage leads (the middle of a chain is never a round's start).
    let inner: Vec<u32> = so.resumes.iter().filter_map(|&r| next(r)).collect();
    for &r in so.resumes.iter().filter(|r| !inner.contains(r)) {
        let mut stages = Vec::new();
        let mut cur = r;
        while let Some(n) = next(cur) {
            if stages.contains(&cur) {
                break;
            }
            stages.push(cur);
            cur = n;
        }
        // The region after the last shuffle joins as the last stage when it is short, has a
        // conditional branch and every thread leaves it at one barrier (a warp's `if (lane ==
        // 0) s[w] = v;` before `__syncthreads()`) or finishes in it: with constant lane
        // numbers its branch folds, and the shuffle arithmetic only lanes that never use its
        // result would need is left out. (Straight-line tails, such as a softmax's
        // normalization of every lane's elements, run faster as a loop over the threads.)
        if let Some(&last) = stages.last() {
            let t = so.must_stop.get(&last).map(|&j| ns + j);
            if let Some(t) = t.filter(|&t| {
                so.resumes.contains(&t)
                    && !stages.contains(&t)
                    && so
                        .sizes
                        .get(&t)
                        .is_some_and(|s| s.branches && s.len <= TAIL_MAX)
                    && (so.finish.contains(&t)
                        || so.must_stop.get(&t).is_some_and(|&j| {
                            so.stops
                                .get(j as usize - 1)
                                .is_some_and(StopKind::is_fast_barrier)
                        }))
            }) {
                stages.push(t);
            }
        }
        if stages.len() >= 2 {
            out.insert(r, stages);
        }
    }
    out
}

impl<'c> Gen<'c, '_, '_> {
    /// The rounds of the resume points `stages` (`warp_chains`) warp by warp: for each warp
    /// of a one-dimensional range of whole warps, every stage's region for its 32 lanes, the
    /// lanes as 32 inlined copies with constant lane numbers. A shuffle then reads operands
    /// its warp stored just before at constant offsets, which LLVM forwards in registers,
    /// and the lanes' arithmetic is straight-line code the SLP vectorizer packs into vectors.
    /// Stage `i` writes operand bank `bank ^ (i & 1)`, as one round after another would; the
    /// last stage's resume point, `want` and bank are left in `ptx2llvm_fis` for the chain
    /// logic of `K.fis` and the driver. Other ranges run `normal` (the first stage's round).
    pub(super) fn warp_chain(
        &self,
        name: &str,
        stages: &[u32],
        ns: u32,
        (xlo, xhi): (IntValue<'c>, IntValue<'c>),
        (normal, done): (BasicBlock<'c>, BasicBlock<'c>),
        finishes: bool,
    ) -> BasicBlock<'c> {
        let l = self.l;
        let b = &l.b;
        let i32t = l.i32();
        let r0 = stages[0];
        let entry = self.block(&format!("wchain{r0}"));
        let body = self.block(&format!("wchain{r0}.w"));
        let exit = self.block(&format!("wchain{r0}.end"));
        b.position_at_end(entry);
        let or = |a: IntValue<'c>, c: IntValue<'c>| b.build_or(a, c, "").unwrap();
        let misaligned = b.build_and(or(xlo, xhi), self.c32(31), "").unwrap();
        let rows = or(
            b.build_int_sub(self.i(extra::NT + 1), self.c32(1), "")
                .unwrap(),
            b.build_int_sub(self.i(extra::NT + 2), self.c32(1), "")
                .unwrap(),
        );
        let ok = b
            .build_int_compare(IntPredicate::EQ, or(misaligned, rows), self.c32(0), "")
            .unwrap();
        let some = b
            .build_int_compare(IntPredicate::ULT, xlo, xhi, "")
            .unwrap();
        let go = b.build_and(ok, some, "").unwrap();
        // One function per stage: `K.step` specialized for it, inlined 32 times below.
        let lanes: Vec<FunctionValue<'c>> = stages.iter().map(|&r| self.lane_fn(name, r)).collect();
        b.position_at_end(entry);
        let wlo = b.build_right_shift(xlo, self.c32(5), false, "").unwrap();
        let whi = b.build_right_shift(xhi, self.c32(5), false, "").unwrap();
        b.build_conditional_branch(go, body, normal).unwrap();
        b.position_at_end(body);
        let w = b.build_phi(i32t, "w").unwrap();
        w.add_incoming(&[(&wlo, entry)]);
        let wv = w.as_basic_value().into_int_value();
        let warp = self.warp_fn(name, stages, &lanes);
        let mut args: Vec<BasicMetadataValueEnum> =
            self.f.get_param_iter().map(|p| p.into()).collect();
        args.push(wv.into());
        b.build_call(warp, &args, "").unwrap();
        let w1 = b.build_int_add(wv, self.c32(1), "").unwrap();
        w.add_incoming(&[(&w1, b.get_insert_block().unwrap())]);
        // A trap ends the launch: no further warps (as no further round would run).
        let at = |o: u32| self.fis_field(o);
        let status = b
            .build_load(i32t, at(off::STATUS), "")
            .unwrap()
            .into_int_value();
        let ok = b
            .build_int_compare(IntPredicate::EQ, status, self.c32(0), "")
            .unwrap();
        let more = b.build_int_compare(IntPredicate::ULT, w1, whi, "").unwrap();
        b.build_conditional_branch(b.build_and(more, ok, "").unwrap(), body, exit)
            .unwrap();
        b.position_at_end(exit);
        let last = *stages.last().unwrap();
        if finishes {
            // Every thread of the range finished in the last stage (no state is recorded:
            // the range held every unfinished thread).
            let old = b
                .build_load(l.i64(), self.seen, "")
                .unwrap()
                .into_int_value();
            let one = l.i64().const_int(1, false);
            b.build_store(self.seen, b.build_or(old, one, "").unwrap())
                .unwrap();
        }
        let m = stages.len() as u64 - 1;
        let bank0 = self.i(extra::BANK);
        b.build_store(at(off::K), self.c32(last as u64)).unwrap();
        b.build_store(
            at(off::BANK),
            b.build_xor(bank0, self.c32(m & 1), "").unwrap(),
        )
        .unwrap();
        b.build_store(
            at(off::WANT),
            self.c32((ST_STOP | (last - ns) as u16) as u64),
        )
        .unwrap();
        b.build_unconditional_branch(done).unwrap();
        entry
    }

    /// `K.warp<r>(<the parameters of K.fis.loops>, w)`: the stages of a warp chain for warp
    /// `w`, a function of its own (not inlined) so that the thread numbers `32 w + lane` stay
    /// visibly disjoint (loop induction rewriting would hide that) and each lane's stores
    /// forward to the next stage's loads.
    fn warp_fn(
        &self,
        name: &str,
        stages: &[u32],
        lanes: &[FunctionValue<'c>],
    ) -> FunctionValue<'c> {
        let l = self.l;
        let ctx = l.ctx;
        let b = &l.b;
        let here = b.get_insert_block().unwrap();
        let mut ptys: Vec<BasicMetadataTypeEnum> =
            self.f.get_type().get_param_types().into_iter().collect();
        ptys.push(l.i32().into());
        let n = ptys.len() as u32;
        let f = l.module.add_function(
            &format!("{name}.warp{}", stages[0]),
            ctx.void_type().fn_type(&ptys, false),
            Some(Linkage::Internal),
        );
        for x in 0..n - 1 {
            if lf::has_param_attr(self.f, x, "noalias") {
                lf::param_attr(ctx, f, x, "noalias");
            }
        }
        lf::fn_attr(ctx, f, "noinline");
        b.position_at_end(ctx.append_basic_block(f, "entry"));
        let wg = Gen { f, ..*self };
        let wn = f.get_nth_param(n - 1).unwrap().into_int_value();
        let base = b.build_left_shift(wn, self.c32(5), "").unwrap();
        let bank0 = wg.i(extra::BANK);
        let zero = self.c32(0);
        // Each stage but the last leaves its shuffle operands and live registers in arrays of
        // this function (probe modes 9, 10 and 11: `extra::OPLR`), from which the next stage
        // reads them: LLVM keeps them in registers, where loads from the operand banks would
        // wait on the stage's stores (a load of lanes shifted by 4, 2 or 1 straddles two
        // vector stores and is not forwarded), and stores nothing no one reads.
        let i32t = l.i32();
        let arr = i32t.array_type(96);
        let frl = b
            .build_alloca(
                l.ctx.i8_type().array_type(32 * self.frame_bytes.max(1)),
                "frl",
            )
            .unwrap();
        let locals: Vec<PointerValue<'c>> = stages
            .iter()
            .map(|_| {
                let a = b.build_alloca(arr, "opl").unwrap();
                // SAFETY: `build_gep` only builds IR (word 32 of the 64-word alloca `a`); nothing is dereferenced here.
                unsafe {
                    b.build_gep(i32t, a, &[l.i64().const_int(32, false)], "")
                        .unwrap()
                }
            })
            .collect();
        for (s, (&r, &lane)) in stages.iter().zip(lanes).enumerate() {
            let bank = b.build_xor(bank0, self.c32(s as u64 & 1), "").unwrap();
            for ln in 0..32u64 {
                let t = b.build_int_nuw_add(base, self.c32(ln), "").unwrap();
                let probe = match s {
                    0 => 9,
                    s if s + 1 == stages.len() => 11,
                    _ => 10,
                };
                let mut args =
                    wg.step_args([t, t, zero, zero], self.c32(r as u64), probe, true, None);
                args[(self.nptx + extra::BANK) as usize] = bank.into();
                args[(self.nptx + extra::OPLW) as usize] = locals[s].into();
                if s > 0 {
                    args[(self.nptx + extra::OPLR) as usize] = locals[s - 1].into();
                }
                args[(self.nptx + extra::FRL) as usize] = frl.into();
                let cs = b.build_call(lane, &args, "").unwrap();
                lf::call_site_attr(ctx, cs, "alwaysinline");
            }
        }
        b.build_return(None).unwrap();
        b.position_at_end(here);
        f
    }

    /// `K.lane<r>`: `K.step` from resume point `r` for one thread of a region every thread
    /// leaves at one stop (no state recorded), `K.step` inlined.
    fn lane_fn(&self, name: &str, r: u32) -> FunctionValue<'c> {
        let l = self.l;
        let ctx = l.ctx;
        let b = &l.b;
        let fname = format!("{name}.lane{r}");
        if let Some(f) = l.module.get_function(&fname) {
            return f;
        }
        let here = b.get_insert_block().unwrap();
        let f = l
            .module
            .add_function(&fname, self.step.get_type(), Some(Linkage::Internal));
        b.position_at_end(ctx.append_basic_block(f, "entry"));
        let mut args: Vec<BasicMetadataValueEnum> = f.get_param_iter().map(|p| p.into()).collect();
        args[(self.nptx + extra::K) as usize] = self.c32(r as u64).into();
        args[(self.nptx + extra::NOSTATE) as usize] = self.c32(1).into();
        let cs = b.build_call(self.step, &args, "").unwrap();
        lf::call_site_attr(ctx, cs, "alwaysinline");
        b.build_return(None).unwrap();
        b.position_at_end(here);
        f
    }
}
