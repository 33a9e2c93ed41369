//! Warp operations in the warp function, in registers: `activemask` is the execution mask,
//! `vote` a reduction of the mask, `shfl` a lane permutation with PTX's clamp and segment
//! rules, `redux` a vector reduction, `match` comparisons across lanes, `elect` the lowest
//! member lane. The `.sync` forms check their member mask against the active lanes as the
//! GPU requires: an active lane outside it, or a live member lane not active here, fails the
//! launch (`ptx2llvm_rt_simd_warp_error`).

use llvm_sys::core as c;
use llvm_sys::prelude::*;
use llvm_sys::LLVMIntPredicate as P;

use super::emit::{Warp, LANES};
use super::ir::{self, WarpCall};
use crate::runtime::abi::{redux, shfl, vote};

impl Warp<'_> {
    pub(super) unsafe fn warp_op(&mut self, i: LLVMValueRef, w: WarpCall) -> Result<(), String> {
        let b = self.b;
        let n = c"".as_ptr();
        let args = ir::args(i);
        let arg = |k: usize| args[k];
        let konst = |k: usize| ir::const_u64(args[k]).unwrap_or(0) as u32;
        let mbits = self.bits(self.mask);
        if w == WarpCall::ActiveMask {
            self.set(i, mbits);
            return Ok(());
        }
        match w {
            WarpCall::Mma => return self.mma(i),
            WarpCall::LdMatrix | WarpCall::StMatrix => return self.ldst_matrix(i, w),
            WarpCall::MovMatrix => return self.movmatrix(i),
            _ => {}
        }
        // The member mask's position among the arguments.
        let mpos = match w {
            WarpCall::Shfl => 6,
            WarpCall::Vote => 3,
            WarpCall::Redux => 4,
            WarpCall::MatchAny | WarpCall::MatchAll | WarpCall::Elect | WarpCall::WarpSync => 2,
            WarpCall::ActiveMask
            | WarpCall::Mma
            | WarpCall::LdMatrix
            | WarpCall::StMatrix
            | WarpCall::MovMatrix => unreachable!(),
        };
        let member = self.get(arg(mpos), false);
        if self.is_vec(member) {
            return Err(format!(
                "{}: a member mask that differs between lanes",
                w.spelling()
            ));
        }
        self.check_members(w, member, mbits);
        let vt = c::LLVMVectorType(self.i32, LANES);
        match w {
            WarpCall::WarpSync => {}
            WarpCall::Vote => {
                let mode = konst(2);
                let p = self.get(arg(4), true);
                let t = c::LLVMBuildICmp(b, P::LLVMIntNE, p, c::LLVMConstNull(vt), n);
                let t = c::LLVMBuildAnd(b, t, self.mask, n);
                let ballot = self.bits(t);
                let eq = |x, y| c::LLVMBuildICmp(b, P::LLVMIntEQ, x, y, n);
                let r = match mode {
                    vote::ALL => eq(ballot, mbits),
                    vote::ANY => c::LLVMBuildICmp(b, P::LLVMIntNE, ballot, self.c32(0), n),
                    vote::UNI => {
                        let all = eq(ballot, mbits);
                        let none = eq(ballot, self.c32(0));
                        c::LLVMBuildOr(b, all, none, n)
                    }
                    _ => ballot,
                };
                let r = if mode == vote::BALLOT {
                    r
                } else {
                    c::LLVMBuildZExt(b, r, self.i32, n)
                };
                self.set(i, r);
            }
            WarpCall::Redux => {
                let op = konst(2);
                let a = self.get(arg(3), true);
                let (name, id) = match op & 0xf {
                    redux::ADD => ("llvm.vector.reduce.add", 0u64),
                    redux::MIN_U32 => ("llvm.vector.reduce.umin", u32::MAX as u64),
                    redux::MAX_U32 => ("llvm.vector.reduce.umax", 0),
                    redux::MIN_S32 => ("llvm.vector.reduce.smin", i32::MAX as u64),
                    redux::MAX_S32 => ("llvm.vector.reduce.smax", i32::MIN as u32 as u64),
                    redux::AND => ("llvm.vector.reduce.and", u32::MAX as u64),
                    redux::OR => ("llvm.vector.reduce.or", 0),
                    redux::XOR => ("llvm.vector.reduce.xor", 0),
                    _ => return Err("redux.sync on floats".into()),
                };
                let idv = self.splat(self.c32(id));
                let a = c::LLVMBuildSelect(b, self.mask, a, idv, n);
                let mut tys = [vt];
                let mut xs = [a];
                let r = self.call_intrinsic(name, &mut tys, &mut xs);
                self.set(i, r);
            }
            WarpCall::Shfl => {
                let (res, pred) = self.shfl(konst(2), arg(3), arg(4), arg(5));
                self.set(i, res);
                self.pred_slots.insert(arg(7), pred);
            }
            WarpCall::MatchAny => {
                let a = self.get(arg(3), true);
                let mut r = c::LLVMConstNull(vt);
                for k in 0..LANES as u64 {
                    let kk = self.c32(k);
                    let ak = c::LLVMBuildExtractElement(b, a, kk, n);
                    let eq = c::LLVMBuildICmp(b, P::LLVMIntEQ, a, self.splat(ak), n);
                    let on = c::LLVMBuildExtractElement(b, self.mask, kk, n);
                    let eq = c::LLVMBuildAnd(b, eq, self.splat(on), n);
                    let bit = self.splat(self.c32(1 << k));
                    let s = c::LLVMBuildSelect(b, eq, bit, c::LLVMConstNull(vt), n);
                    r = c::LLVMBuildOr(b, r, s, n);
                }
                self.set(i, r);
            }
            WarpCall::MatchAll => {
                let a = self.get(arg(3), true);
                let mut tys = [self.i32];
                let mut xs = [mbits, c::LLVMConstInt(self.i1, 1, 0)];
                let first = self.call_intrinsic("llvm.cttz", &mut tys, &mut xs);
                let a0 = c::LLVMBuildExtractElement(b, a, first, n);
                let eq = c::LLVMBuildICmp(b, P::LLVMIntEQ, a, self.splat(a0), n);
                let off = c::LLVMBuildNot(b, self.mask, n);
                let eq = c::LLVMBuildOr(b, eq, off, n);
                let same =
                    c::LLVMBuildICmp(b, P::LLVMIntEQ, self.bits(eq), self.c32(u32::MAX as u64), n);
                let r = c::LLVMBuildSelect(b, same, mbits, self.c32(0), n);
                self.set(i, self.splat(r));
                let p = c::LLVMBuildZExt(b, same, self.i32, n);
                self.pred_slots.insert(arg(4), self.splat(p));
            }
            WarpCall::Elect => {
                let and = c::LLVMBuildAnd(b, member, mbits, n);
                let mut tys = [self.i32];
                let mut xs = [and, c::LLVMConstInt(self.i1, 0, 0)];
                let leader = self.call_intrinsic("llvm.cttz", &mut tys, &mut xs);
                self.set(i, self.splat(leader));
                let is = c::LLVMBuildICmp(b, P::LLVMIntEQ, self.iota, self.splat(leader), n);
                let p = c::LLVMBuildZExt(b, is, vt, n);
                self.pred_slots.insert(arg(3), p);
            }
            _ => {}
        }
        Ok(())
    }

    /// Fails the launch when an active lane is outside `member`, or a live lane of `member`
    /// is not active here (it waits at another instruction, which lockstep cannot pair).
    unsafe fn check_members(&mut self, w: WarpCall, member: LLVMValueRef, mbits: LLVMValueRef) {
        let b = self.b;
        let n = c"".as_ptr();
        let live = self.live();
        let live = self.bits(live);
        let not_member = c::LLVMBuildNot(b, member, n);
        let outside = c::LLVMBuildAnd(b, mbits, not_member, n);
        let not_here = c::LLVMBuildNot(b, mbits, n);
        let missing = c::LLVMBuildAnd(b, member, live, n);
        let missing = c::LLVMBuildAnd(b, missing, not_here, n);
        let bad = c::LLVMBuildOr(b, outside, missing, n);
        let bad = c::LLVMBuildICmp(b, P::LLVMIntNE, bad, self.c32(0), n);
        let fail = self.append("warp.error");
        let ok = self.append("warp.ok");
        c::LLVMBuildCondBr(b, bad, fail, ok);
        c::LLVMPositionBuilderAtEnd(b, fail);
        let code = self.c32(match w {
            WarpCall::Shfl => 0,
            WarpCall::Vote => 1,
            WarpCall::Redux => 2,
            WarpCall::MatchAny => 3,
            WarpCall::MatchAll => 4,
            WarpCall::Elect => 5,
            WarpCall::WarpSync => 6,
            WarpCall::ActiveMask => 7,
            WarpCall::Mma | WarpCall::LdMatrix | WarpCall::StMatrix | WarpCall::MovMatrix => 8,
        });
        let mut pt = [self.ptr, self.i32, self.i32, self.i32, self.i32];
        let ft = c::LLVMFunctionType(c::LLVMVoidTypeInContext(self.cx), pt.as_mut_ptr(), 5, 0);
        let name = c"ptx2llvm_rt_simd_warp_error";
        let mut f = c::LLVMGetNamedFunction(self.m, name.as_ptr());
        if f.is_null() {
            f = c::LLVMAddFunction(self.m, name.as_ptr(), ft);
        }
        let mut xs = [self.ctx, code, member, mbits, live];
        c::LLVMBuildCall2(b, ft, f, xs.as_mut_ptr(), 5, n);
        c::LLVMBuildUnreachable(b);
        c::LLVMPositionBuilderAtEnd(b, ok);
    }

    /// `shfl.sync` of `a` with mode `mode` and operands `b`, `c`: the value and the
    /// in-range predicate (as `i32` lanes) of every lane (PTX ISA, `shfl.sync`; the runtime's
    /// `shfl_source`). A source lane that is not active gives the lane its own value.
    /// The execution mask moved by the constant lane permutation `src` (`perm` as a
    /// constant vector): lane `l` gets lane `src[l]`'s bit. When the lanes' moves take at
    /// most `MASK_MOVES` distinct distances `src[l] - l` (a shuffle tree's `down`/`up` by `d`:
    /// two, `bfly`: two), that is shifts and ANDs of the mask as one 32-bit integer (lanes
    /// `l` moving by `s` take `(bits >> s) & lanes`); else a shuffle of the mask vector, which
    /// x86 does through `vpmovm2w`/`vpermw`/`vpmovw2m` and which was a third of each step of
    /// the warp-shuffle reduction's tree.
    unsafe fn moved_mask(
        &self,
        mask: LLVMValueRef,
        src: &[u32],
        perm: LLVMValueRef,
    ) -> LLVMValueRef {
        const MASK_MOVES: usize = 4;
        let b = self.b;
        let n = c"".as_ptr();
        let mut moves: Vec<(i64, u32)> = Vec::new();
        for (l, &s) in src.iter().enumerate() {
            let d = i64::from(s) - l as i64;
            match moves.iter_mut().find(|(x, _)| *x == d) {
                Some((_, lanes)) => *lanes |= 1 << l,
                None => moves.push((d, 1 << l)),
            }
        }
        if moves.len() > MASK_MOVES {
            let mt = self.mask_ty();
            return c::LLVMBuildShuffleVector(b, mask, c::LLVMGetPoison(mt), perm, n);
        }
        let bits = self.bits(mask);
        let mut on = self.c32(0);
        for (d, lanes) in moves {
            let k = self.c32(d.unsigned_abs());
            let moved = if d >= 0 {
                c::LLVMBuildLShr(b, bits, k, n)
            } else {
                c::LLVMBuildShl(b, bits, k, n)
            };
            let part = c::LLVMBuildAnd(b, moved, self.c32(u64::from(lanes)), n);
            on = c::LLVMBuildOr(b, on, part, n);
        }
        c::LLVMBuildBitCast(b, on, self.mask_ty(), n)
    }

    /// A shuffle with constant source lanes `src` (`perm`) under a runtime mask, versioned on
    /// the warp being whole: then every source lane runs and the step is the shuffle and a
    /// constant blend (`p`, in range), without the moved mask and its select, which were about
    /// 40% of the warp-shuffle reduction. Consecutive shuffles test the same mask, so LLVM's
    /// jump threading joins their whole copies into one straight run.
    unsafe fn shfl_versioned(
        &mut self,
        av: LLVMValueRef,
        perm: LLVMValueRef,
        p: LLVMValueRef,
        src: &[u32],
    ) -> LLVMValueRef {
        let b = self.b;
        let n = c"".as_ptr();
        let vt = c::LLVMTypeOf(av);
        let bits = self.bits(self.mask);
        let whole = c::LLVMBuildICmp(b, P::LLVMIntEQ, bits, self.c32(u64::from(u32::MAX)), n);
        let fast = self.append("shfl.whole");
        let slow = self.append("shfl.part");
        let join = self.append("shfl");
        c::LLVMBuildCondBr(b, whole, fast, slow);
        c::LLVMPositionBuilderAtEnd(b, fast);
        let moved = c::LLVMBuildShuffleVector(b, av, c::LLVMGetPoison(vt), perm, n);
        let r_fast = c::LLVMBuildSelect(b, p, moved, av, n);
        c::LLVMBuildBr(b, join);
        c::LLVMPositionBuilderAtEnd(b, slow);
        let moved = c::LLVMBuildShuffleVector(b, av, c::LLVMGetPoison(vt), perm, n);
        let on = self.moved_mask(self.mask, src, perm);
        // The source must be in range and active (the runtime: `pval && arrived(j)`).
        let take = c::LLVMBuildAnd(b, on, p, n);
        let r_slow = c::LLVMBuildSelect(b, take, moved, av, n);
        c::LLVMBuildBr(b, join);
        c::LLVMPositionBuilderAtEnd(b, join);
        ir::phi(b, vt, n, &[(r_fast, fast), (r_slow, slow)])
    }

    unsafe fn shfl(
        &mut self,
        mode: u32,
        a: LLVMValueRef,
        bv: LLVMValueRef,
        cv: LLVMValueRef,
    ) -> (LLVMValueRef, LLVMValueRef) {
        let b = self.b;
        let n = c"".as_ptr();
        let vt = c::LLVMVectorType(self.i32, LANES);
        let consts = (ir::const_u64(bv), ir::const_u64(cv));
        let av = self.get(a, true);
        let lane = self.iota;
        let bb = self.get(bv, true);
        let cc = self.get(cv, true);
        let k = |v: u64| self.splat(self.c32(v));
        let bval = c::LLVMBuildAnd(b, bb, k(31), n);
        let cval = c::LLVMBuildAnd(b, cc, k(31), n);
        let seg = c::LLVMBuildLShr(b, cc, k(8), n);
        let seg = c::LLVMBuildAnd(b, seg, k(31), n);
        let nseg = c::LLVMBuildXor(b, seg, k(u32::MAX as u64), n);
        let lo = c::LLVMBuildAnd(b, lane, seg, n);
        let hi = c::LLVMBuildAnd(b, cval, nseg, n);
        let max = c::LLVMBuildOr(b, lo, hi, n);
        let (j, p) = match mode {
            shfl::UP => {
                let j = c::LLVMBuildSub(b, lane, bval, n);
                (j, c::LLVMBuildICmp(b, P::LLVMIntSGE, j, max, n))
            }
            shfl::DOWN => {
                let j = c::LLVMBuildAdd(b, lane, bval, n);
                (j, c::LLVMBuildICmp(b, P::LLVMIntSLE, j, max, n))
            }
            shfl::BFLY => {
                let j = c::LLVMBuildXor(b, lane, bval, n);
                (j, c::LLVMBuildICmp(b, P::LLVMIntSLE, j, max, n))
            }
            _ => {
                let x = c::LLVMBuildAnd(b, bval, nseg, n);
                let j = c::LLVMBuildOr(b, lo, x, n);
                (j, c::LLVMBuildICmp(b, P::LLVMIntSLE, j, max, n))
            }
        };
        let j = c::LLVMBuildSelect(b, p, j, lane, n);
        let pred = c::LLVMBuildZExt(b, p, vt, n);
        if !self.facts.is_varying(a) {
            return (av, pred);
        }
        // With constant operands the source lanes are constants: shuffles.
        let (moved, on) = if let (Some(bc), Some(ccst)) = consts {
            let src: Vec<u32> = (0..LANES)
                .map(|l| crate::runtime::cta::shfl_source(mode, l, bc as u32, ccst as u32).0)
                .collect();
            let mut ks: Vec<LLVMValueRef> = src.iter().map(|&s| self.c32(s as u64)).collect();
            let perm = c::LLVMConstVector(ks.as_mut_ptr(), LANES);
            if c::LLVMIsConstant(self.mask) == 0 {
                return (self.shfl_versioned(av, perm, p, &src), pred);
            }
            // A constant mask: the moved mask folds to a constant.
            let moved = c::LLVMBuildShuffleVector(b, av, c::LLVMGetPoison(vt), perm, n);
            (moved, self.moved_mask(self.mask, &src, perm))
        } else {
            // Any permutation: through a stack copy of the lanes.
            let arr = self.alloca(vt);
            c::LLVMBuildStore(b, av, arr);
            let mut idx = [j];
            let ptrs = c::LLVMBuildGEP2(b, self.i32, arr, idx.as_mut_ptr(), 1, n);
            let all = self.splat(c::LLVMConstInt(self.i1, 1, 0));
            let mut tys = [vt, c::LLVMTypeOf(ptrs)];
            let mut xs = [ptrs, all, c::LLVMGetPoison(vt)];
            let moved = self.call_intrinsic("llvm.masked.gather", &mut tys, &mut xs);
            let mw = c::LLVMBuildZExt(b, self.mask, vt, n);
            let marr = self.alloca(vt);
            c::LLVMBuildStore(b, mw, marr);
            let mut idx = [j];
            let mptrs = c::LLVMBuildGEP2(b, self.i32, marr, idx.as_mut_ptr(), 1, n);
            let mut xs = [mptrs, all, c::LLVMGetPoison(vt)];
            let on = self.call_intrinsic("llvm.masked.gather", &mut tys, &mut xs);
            let on = c::LLVMBuildICmp(b, P::LLVMIntNE, on, c::LLVMConstNull(vt), n);
            (moved, on)
        };
        // The source must be in range and active (the runtime: `pval && arrived(j)`).
        let take = c::LLVMBuildAnd(b, on, p, n);
        (c::LLVMBuildSelect(b, take, moved, av, n), pred)
    }
}
