//! Lane-wise instructions of the warp function: arithmetic, comparisons, casts and selects on
//! vectors, addresses as vectors of pointers, memory as masked vector loads and stores from
//! lane 0's pointer where the lane strides prove the lanes consecutive (`stride.rs`), else
//! masked gathers and scatters behind a run-time test of the addresses (`.shared` 32-bit
//! loads: also a test for a window of 64 elements, served by two vector loads and a lane
//! permutation; stores: a test for a compare-exchange stage's pair pattern, a row of constant
//! tables, then for increasing offsets in one 256-byte block, rewritten whole),
//! LLVM intrinsics by their vector forms, and everything else (calls, atomics)
//! once per active lane in lane order.

use std::collections::HashSet;

use llvm_sys::core as c;
use llvm_sys::prelude::*;
use llvm_sys::LLVMOpcode as O;
use llvm_sys::{LLVMAtomicOrdering, LLVMIntPredicate, LLVMTypeKind};

use super::emit::{Warp, LANES};

/// How deep `stride::rows_alike` looks into a pointer's computation.
const ROWS_ALIKE_DEPTH: u32 = 12;
/// How deep `stride::memory_indexed` looks for an index loaded from memory.
const MEMORY_INDEXED_DEPTH: u32 = 8;
/// How deep `Warp::lane_of` rebuilds a lane's pointer from its operands' lanes.
const LANE_OF_DEPTH: u32 = 16;
/// Lanes of a half-warp: the two-run loads' unit (`stride::HALF`).
const HALF: u32 = stride::HALF as u32;
use super::ir;
use super::lanetab;
use super::stride::{self, Access, EntryCheck};
use super::uniform::{call_kind, CallKind};

mod atomics;
mod calls;
mod structs;

/// The shared-memory address space of the lowering (`llvm::cpu`).
pub(super) const SHARED_AS: u32 = 3;

/// Largest lane step of a dividend that `Warp::stepping_division` takes (`31 s` must stay
/// far below a divisor to be worth testing for).
const STEP_DIV_MAX: i64 = 64;

/// Whether scalar divisor `d` of division or remainder `op` is a constant that cannot trap in
/// any lane: not zero, nor all ones when signed (`MIN / -1` overflows).
unsafe fn safe_divisor(d: LLVMValueRef, op: O) -> bool {
    if c::LLVMIsAConstantInt(d).is_null() {
        return false;
    }
    let signed = matches!(op, O::LLVMSDiv | O::LLVMSRem);
    c::LLVMConstIntGetZExtValue(d) != 0 && !(signed && c::LLVMConstIntGetSExtValue(d) == -1)
}

impl Warp<'_> {
    /// Division or remainder `op` of lanes of at most 32 bits by divisors `y` that are not zero
    /// in any lane (nor -1 where the dividend may be the signed minimum: the lowering of PTX's
    /// `div`/`rem` selects 1 there, and this warp's off lanes divide by 1), in double precision.
    /// x86 has no vector integer division: LLVM divides such a vector lane by lane, 32 `div`s
    /// (a grid-stride loop's trip count `(n - i + stride - 1) / stride` took 60% of a float4
    /// vector add's time when each thread ran one iteration). The quotient is exact: both
    /// operands are exact doubles, and a quotient that is not an integer lies at least `1/|y|`
    /// from the next integer, a relative distance of at least `1/|x| >= 2^-32`, far more than
    /// the division's rounding error (`2^-53` relative), so truncating the correctly rounded
    /// quotient gives the integer quotient. None for wider lanes or a non-vector type.
    unsafe fn div_by_double(
        &self,
        op: O,
        x: LLVMValueRef,
        y: LLVMValueRef,
        vt: LLVMTypeRef,
    ) -> Option<LLVMValueRef> {
        if c::LLVMGetTypeKind(vt) != LLVMTypeKind::LLVMVectorTypeKind {
            return None;
        }
        let et = c::LLVMGetElementType(vt);
        if c::LLVMGetTypeKind(et) != LLVMTypeKind::LLVMIntegerTypeKind
            || c::LLVMGetIntTypeWidth(et) > 32
        {
            return None;
        }
        let b = self.b;
        let n = c"".as_ptr();
        let signed = matches!(op, O::LLVMSDiv | O::LLVMSRem);
        let dt = c::LLVMVectorType(
            c::LLVMDoubleTypeInContext(c::LLVMGetTypeContext(vt)),
            c::LLVMGetVectorSize(vt),
        );
        let (fx, fy) = if signed {
            (
                c::LLVMBuildSIToFP(b, x, dt, n),
                c::LLVMBuildSIToFP(b, y, dt, n),
            )
        } else {
            (
                c::LLVMBuildUIToFP(b, x, dt, n),
                c::LLVMBuildUIToFP(b, y, dt, n),
            )
        };
        let fq = c::LLVMBuildFDiv(b, fx, fy, n);
        // fptosi/fptoui truncate toward zero, as PTX's integer division does.
        let q = if signed {
            c::LLVMBuildFPToSI(b, fq, vt, n)
        } else {
            c::LLVMBuildFPToUI(b, fq, vt, n)
        };
        Some(match op {
            O::LLVMUDiv | O::LLVMSDiv => q,
            _ => c::LLVMBuildSub(b, x, c::LLVMBuildMul(b, q, y, n), n),
        })
    }

    /// Division or remainder `op` (instruction `i`) of a dividend whose lanes step by a small
    /// positive constant `s` (`x + l s`: a flat index, `(x + 1) % w`) by a uniform divisor
    /// `y` that is not a constant: `row = i / w`, `col = i % w` of a 2-D kernel launched
    /// flat, or a torus's wrapped neighbour. When `y > 31 s` and no lane's dividend wraps,
    /// the lanes' quotients are lane 0's or one more: one scalar division of lane 0, its
    /// remainder plus `l s`, and one compare with `y` per lane, where the double-precision
    /// division took four `vdivpd` of 8 lanes per operation (a game of life's four wrapped
    /// neighbours: most of its time). Other launches take that division, behind a scalar test.
    /// None when the dividend's stride is not known this way.
    unsafe fn stepping_division(
        &mut self,
        i: LLVMValueRef,
        op: O,
        vt: LLVMTypeRef,
    ) -> Option<LLVMValueRef> {
        let (xv, yv) = (c::LLVMGetOperand(i, 0), c::LLVMGetOperand(i, 1));
        let et = c::LLVMGetElementType(vt);
        if self.facts.is_varying(yv)
            || c::LLVMGetTypeKind(vt) != LLVMTypeKind::LLVMVectorTypeKind
            || c::LLVMGetTypeKind(et) != LLVMTypeKind::LLVMIntegerTypeKind
            || c::LLVMGetIntTypeWidth(et) != 32
            || self.run() != LANES
        {
            return None;
        }
        let st = self.facts.strides.of(xv, &self.facts.varying)?;
        if st.casts != 0 || !(1..=STEP_DIV_MAX).contains(&st.step) {
            return None;
        }
        let b = self.b;
        let n = c"".as_ptr();
        let signed = matches!(op, O::LLVMSDiv | O::LLVMSRem);
        let span = 31 * st.step as u64;
        let k = |v: u64| c::LLVMConstInt(et, v, 0);
        let x = self.get(xv, true);
        let y = self.get(yv, false);
        let x0 = self.lane_of(x, 0, 8);
        // Lane 31's dividend does not wrap (signed: every lane's is non-negative), and
        // `r0 + 31 s < 2 y` fits: then a lane's remainder is `r0 + l s` less `y` at most once.
        let top = if signed {
            i32::MAX as u64
        } else {
            u32::MAX as u64
        };
        let x_ok = c::LLVMBuildICmp(b, LLVMIntPredicate::LLVMIntULE, x0, k(top - span), n);
        let y_big = c::LLVMBuildICmp(b, LLVMIntPredicate::LLVMIntUGT, y, k(span), n);
        let y_fits = c::LLVMBuildICmp(b, LLVMIntPredicate::LLVMIntULE, y, k(top - span), n);
        let ok = c::LLVMBuildAnd(b, x_ok, c::LLVMBuildAnd(b, y_big, y_fits, n), n);
        let mut ramp: Vec<LLVMValueRef> =
            (0..LANES as u64).map(|l| k(l * st.step as u64)).collect();
        let ramp = c::LLVMConstVector(ramp.as_mut_ptr(), LANES);
        let quotient = matches!(op, O::LLVMUDiv | O::LLVMSDiv);
        Some(self.branch_join(
            ok,
            ["div.step", "div.lanes", "div.join"],
            |w| {
                // Both operands are non-negative here: unsigned division is the signed one.
                let q0 = c::LLVMBuildUDiv(b, x0, y, n);
                let r0 = c::LLVMBuildSub(b, x0, c::LLVMBuildMul(b, q0, y, n), n);
                let r = c::LLVMBuildAdd(b, w.splat(r0), ramp, n);
                let ys = w.splat(y);
                let over = c::LLVMBuildICmp(b, LLVMIntPredicate::LLVMIntUGE, r, ys, n);
                if quotient {
                    c::LLVMBuildAdd(b, w.splat(q0), c::LLVMBuildZExt(b, over, vt, n), n)
                } else {
                    let less = c::LLVMBuildSub(b, r, ys, n);
                    c::LLVMBuildSelect(b, over, less, r, n)
                }
            },
            |w| {
                let ys = w.splat(y);
                w.divide_running(op, x, ys, vt)
            },
        ))
    }

    /// `then` where `cond` holds, else `other`, in blocks named `names` (then, else, join),
    /// joined by a phi of their values (none where `then` gives a null value: stores).
    unsafe fn branch_join(
        &mut self,
        cond: LLVMValueRef,
        names: [&str; 3],
        then: impl FnOnce(&mut Self) -> LLVMValueRef,
        other: impl FnOnce(&mut Self) -> LLVMValueRef,
    ) -> LLVMValueRef {
        let b = self.b;
        let then_bb = self.append(names[0]);
        let else_bb = self.append(names[1]);
        let join = self.append(names[2]);
        c::LLVMBuildCondBr(b, cond, then_bb, else_bb);
        c::LLVMPositionBuilderAtEnd(b, then_bb);
        let tv = then(self);
        let then_bb = c::LLVMGetInsertBlock(b);
        c::LLVMBuildBr(b, join);
        c::LLVMPositionBuilderAtEnd(b, else_bb);
        let ev = other(self);
        let else_bb = c::LLVMGetInsertBlock(b);
        c::LLVMBuildBr(b, join);
        c::LLVMPositionBuilderAtEnd(b, join);
        if tv.is_null() {
            return tv;
        }
        ir::phi(
            b,
            c::LLVMTypeOf(tv),
            c"".as_ptr(),
            &[(tv, then_bb), (ev, else_bb)],
        )
    }

    /// Division or remainder `op` of lanes `x` by lanes `y` that are not zero where lanes
    /// run: the lanes not running, which may hold anything, divide by one.
    unsafe fn divide_running(
        &self,
        op: O,
        x: LLVMValueRef,
        y: LLVMValueRef,
        vt: LLVMTypeRef,
    ) -> LLVMValueRef {
        let (b, n) = (self.b, c"".as_ptr());
        let one = self.splat(c::LLVMConstInt(c::LLVMGetElementType(vt), 1, 0));
        let m = self.widen(self.mask, self.per_new(y));
        let y = c::LLVMBuildSelect(b, m, y, one, n);
        self.div_by_double(op, x, y, vt)
            .unwrap_or_else(|| c::LLVMBuildBinOp(b, op, x, y, n))
    }

    /// The vector form of varying instruction `i`.
    pub(super) unsafe fn vector_inst(
        &mut self,
        i: LLVMValueRef,
        op: O,
    ) -> Result<LLVMValueRef, String> {
        let b = self.b;
        let n = c"".as_ptr();
        let vt = self.vty(c::LLVMTypeOf(i));
        let operand = |w: &mut Self, k: u32| w.get(c::LLVMGetOperand(i, k), true);
        if op == O::LLVMTrunc {
            if let Some(v) = self.mul_high(i) {
                return Ok(v);
            }
        }
        let v = match op {
            O::LLVMAdd
            | O::LLVMFAdd
            | O::LLVMSub
            | O::LLVMFSub
            | O::LLVMMul
            | O::LLVMFMul
            | O::LLVMFDiv
            | O::LLVMFRem
            | O::LLVMShl
            | O::LLVMLShr
            | O::LLVMAShr
            | O::LLVMAnd
            | O::LLVMOr
            | O::LLVMXor => {
                let (x, y) = (operand(self, 0), operand(self, 1));
                // `or disjoint` adds wherever it is not poison (in the running lanes): an `add`
                // also adds in the other lanes, whose bits may overlap, so that its lanes
                // step like the sum's (`Strides::rule`) and lane 0 is a base even when it
                // does not run (PTX wrote an `add` there; InstCombine made it an `or` from a
                // dominating `t < k`).
                let op = if op == O::LLVMOr && c::LLVMGetIsDisjoint(i) != 0 {
                    O::LLVMAdd
                } else {
                    op
                };
                let v = c::LLVMBuildBinOp(b, op, x, y, n);
                if c::LLVMCanValueUseFastMathFlags(i) != 0 {
                    c::LLVMSetFastMathFlags(v, c::LLVMGetFastMathFlags(i));
                }
                v
            }
            O::LLVMUDiv | O::LLVMSDiv | O::LLVMURem | O::LLVMSRem
                if !safe_divisor(c::LLVMGetOperand(i, 1), op) =>
            {
                match self.stepping_division(i, op, vt) {
                    Some(v) => v,
                    None => {
                        let (x, y) = (operand(self, 0), operand(self, 1));
                        self.divide_running(op, x, y, vt)
                    }
                }
            }
            O::LLVMUDiv | O::LLVMSDiv | O::LLVMURem | O::LLVMSRem => {
                // A constant that cannot trap divides every lane: `k / 18`'s lanes then hold
                // the quotient also where they do not run (`stride::Strides::rows` relies on
                // it), and code generation multiplies instead of dividing lane by lane.
                let (x, y) = (operand(self, 0), operand(self, 1));
                c::LLVMBuildBinOp(b, op, x, y, n)
            }
            O::LLVMFNeg => {
                let x = operand(self, 0);
                c::LLVMBuildFNeg(b, x, n)
            }
            O::LLVMFreeze => {
                let x = operand(self, 0);
                c::LLVMBuildFreeze(b, x, n)
            }
            O::LLVMICmp => {
                let (x, y) = (operand(self, 0), operand(self, 1));
                c::LLVMBuildICmp(b, c::LLVMGetICmpPredicate(i), x, y, n)
            }
            O::LLVMFCmp => {
                let (x, y) = (operand(self, 0), operand(self, 1));
                let v = c::LLVMBuildFCmp(b, c::LLVMGetFCmpPredicate(i), x, y, n);
                if c::LLVMCanValueUseFastMathFlags(i) != 0 {
                    c::LLVMSetFastMathFlags(v, c::LLVMGetFastMathFlags(i));
                }
                v
            }
            O::LLVMSelect => {
                let co = c::LLVMGetOperand(i, 0);
                let (x, y) = (operand(self, 1), operand(self, 2));
                let cond = if self.per(c::LLVMTypeOf(co)) > 1 {
                    self.get(co, true)
                } else {
                    let cv = self.get(co, false);
                    if self.is_vec(cv) {
                        self.widen(cv, self.per_new(x))
                    } else {
                        cv
                    }
                };
                c::LLVMBuildSelect(b, cond, x, y, n)
            }
            O::LLVMAddrSpaceCast => {
                let x = operand(self, 0);
                self.space_cast(x, vt)
            }
            op if ir::lanewise_cast(op) => {
                let x = operand(self, 0);
                c::LLVMBuildCast(b, op, x, vt, n)
            }
            O::LLVMGetElementPtr => {
                let g = ir::rebuild_gep(b, i, |j| self.get(c::LLVMGetOperand(i, j), false), n);
                let g = if self.is_vec(g) { g } else { self.splat(g) };
                return Ok(g);
            }
            O::LLVMExtractValue => {
                let agg = operand(self, 0);
                let k = *c::LLVMGetIndices(i);
                c::LLVMBuildExtractValue(b, agg, k, n)
            }
            O::LLVMExtractElement => {
                let v = operand(self, 0);
                let k = self.per(c::LLVMTypeOf(c::LLVMGetOperand(i, 0)));
                let Some(j) = ir::const_u64(c::LLVMGetOperand(i, 1)) else {
                    return Err("a PTX vector element chosen per lane".into());
                };
                let idx: Vec<u32> = (0..LANES).map(|l| l * k + j as u32).collect();
                self.shuffle(v, None, &idx)
            }
            O::LLVMInsertElement => {
                let v = operand(self, 0);
                let x = operand(self, 1);
                let k = self.per(c::LLVMTypeOf(i));
                let Some(j) = ir::const_u64(c::LLVMGetOperand(i, 2)) else {
                    return Err("a PTX vector element chosen per lane".into());
                };
                let j = j as u32;
                // `x`'s lane `l` at position `l k + j`, then those positions into `v`.
                let xi: Vec<u32> = (0..LANES * k).map(|p| p / k).collect();
                let xw = self.shuffle(x, None, &xi);
                let idx: Vec<u32> = (0..LANES * k)
                    .map(|p| if p % k == j { LANES * k + p } else { p })
                    .collect();
                self.shuffle(v, Some(xw), &idx)
            }
            O::LLVMShuffleVector => {
                let a = operand(self, 0);
                let bb = operand(self, 1);
                let k = self.per(c::LLVMTypeOf(c::LLVMGetOperand(i, 0)));
                let r = c::LLVMGetNumMaskElements(i);
                let mut idx = Vec::with_capacity((LANES * r) as usize);
                for l in 0..LANES {
                    for e in 0..r {
                        let mv = c::LLVMGetMaskValue(i, e);
                        let mv = if mv < 0 { 0 } else { mv as u32 };
                        idx.push(if mv < k {
                            l * k + mv
                        } else {
                            LANES * k + l * k + (mv - k)
                        });
                    }
                }
                self.shuffle(a, Some(bb), &idx)
            }
            O::LLVMLoad => return Ok(self.load(i)),
            O::LLVMStore => {
                self.store(i);
                return Ok(c::LLVMGetPoison(c::LLVMVoidTypeInContext(self.cx)));
            }
            O::LLVMAtomicRMW | O::LLVMAtomicCmpXchg => {
                if let Some(v) = self.uniform_rmw(i) {
                    return Ok(v);
                }
                return Ok(self.per_lane(i, false).unwrap_or(std::ptr::null_mut()));
            }
            _ => return Err(format!("cannot vectorize `{}`", ir::print(i))),
        };
        Ok(v)
    }

    /// The high halves of 32-bit products, `trunc(lshr(mul(ext a, ext b), 32))` (PTX
    /// `mul.hi.s32`/`.u32`, nvcc's division by a constant), as two products of 16 lanes each
    /// in 64-bit elements: the even lanes' (the low halves of `a`'s and `b`'s 64-bit pairs,
    /// sign- or zero-extended in place) and the odd lanes' (the high halves shifted down),
    /// their high halves interleaved again. The backend makes each a `vpmuldq`/`vpmuludq`.
    /// The lane-wise form extends all 32 lanes to 64 bits (4 extensions, 4 products and 4
    /// truncations for 32 lanes), and InstCombine then folds a later shift of the high half
    /// into the 64-bit shift, so that the product is never recognized as a high multiply
    /// (33 instructions for conv3x3's `k / 18` against 16). `None` for other truncations.
    unsafe fn mul_high(&mut self, i: LLVMValueRef) -> Option<LLVMValueRef> {
        let b = self.b;
        let n = c"".as_ptr();
        let i32t = self.i32;
        let i64t = self.i64;
        if c::LLVMTypeOf(i) != i32t || c::LLVMTypeOf(c::LLVMGetOperand(i, 0)) != i64t {
            return None;
        }
        let sh = c::LLVMGetOperand(i, 0);
        if !ir::is_instruction(sh)
            || !matches!(ir::opcode(sh), O::LLVMLShr | O::LLVMAShr)
            || ir::const_u64(c::LLVMGetOperand(sh, 1)) != Some(32)
        {
            return None;
        }
        let p = c::LLVMGetOperand(sh, 0);
        if !ir::is_instruction(p) || ir::opcode(p) != O::LLVMMul {
            return None;
        }
        // Each factor as a 32-bit value, and whether both are sign-extended.
        let factor = |v: LLVMValueRef| -> Option<(LLVMValueRef, Option<bool>)> {
            if !c::LLVMIsAConstantInt(v).is_null() {
                let x = c::LLVMConstIntGetSExtValue(v);
                let signed = i32::try_from(x).is_ok();
                let unsigned = u32::try_from(x).is_ok();
                let kind = match (signed, unsigned) {
                    (true, true) => None,
                    (true, false) => Some(true),
                    (false, true) => Some(false),
                    (false, false) => return None,
                };
                return Some((c::LLVMConstInt(i32t, x as u64, 0), kind));
            }
            // In the truncation's block, the extension's operand is one this block uses, so
            // the warp function has it here; an extension elsewhere (a value extended once
            // for uses in several blocks) may be all this block keeps of it.
            if !ir::is_instruction(v)
                || c::LLVMGetInstructionParent(v) != c::LLVMGetInstructionParent(i)
            {
                return None;
            }
            let x = c::LLVMGetOperand(v, 0);
            if c::LLVMTypeOf(x) != i32t {
                return None;
            }
            match ir::opcode(v) {
                O::LLVMSExt => Some((x, Some(true))),
                O::LLVMZExt => Some((x, Some(false))),
                _ => None,
            }
        };
        let (x, kx) = factor(c::LLVMGetOperand(p, 0))?;
        let (y, ky) = factor(c::LLVMGetOperand(p, 1))?;
        let signed = match (kx, ky) {
            (Some(s), None) | (None, Some(s)) => s,
            (Some(s), Some(t)) if s == t => s,
            _ => return None,
        };
        let v16 = c::LLVMVectorType(i64t, LANES / 2);
        let v32 = c::LLVMVectorType(i32t, LANES);
        let splat16 = |x: u64| {
            let mut e = vec![c::LLVMConstInt(i64t, x, 0); LANES as usize / 2];
            c::LLVMConstVector(e.as_mut_ptr(), LANES / 2)
        };
        let k32 = splat16(32);
        let halves = |w: &mut Self, v: LLVMValueRef| {
            let v = w.get(v, true);
            let q = c::LLVMBuildBitCast(b, v, v16, n);
            if signed {
                let up = c::LLVMBuildShl(b, q, k32, n);
                (
                    c::LLVMBuildAShr(b, up, k32, n),
                    c::LLVMBuildAShr(b, q, k32, n),
                )
            } else {
                let low = splat16(u64::from(u32::MAX));
                (
                    c::LLVMBuildAnd(b, q, low, n),
                    c::LLVMBuildLShr(b, q, k32, n),
                )
            }
        };
        let (xe, xo) = halves(self, x);
        let (ye, yo) = halves(self, y);
        let even = c::LLVMBuildBitCast(b, c::LLVMBuildMul(b, xe, ye, n), v32, n);
        let odd = c::LLVMBuildBitCast(b, c::LLVMBuildMul(b, xo, yo, n), v32, n);
        let idx: Vec<u32> = (0..LANES)
            .map(|l| if l % 2 == 0 { l + 1 } else { LANES + l })
            .collect();
        Some(self.shuffle(even, Some(odd), &idx))
    }

    /// `addrspacecast` of a vector of pointers to or from the shared space: shared pointers
    /// are offsets into the CTA's block.
    unsafe fn space_cast(&mut self, x: LLVMValueRef, vt: LLVMTypeRef) -> LLVMValueRef {
        let b = self.b;
        let n = c"".as_ptr();
        let from = c::LLVMGetPointerAddressSpace(c::LLVMGetElementType(c::LLVMTypeOf(x)));
        let to = c::LLVMGetPointerAddressSpace(c::LLVMGetElementType(vt));
        let base = self.shared_base();
        let v64 = c::LLVMVectorType(self.i64, LANES);
        if from == SHARED_AS && to != SHARED_AS {
            let off = c::LLVMBuildPtrToInt(b, x, v64, n);
            let mut idx = [off];
            let g = c::LLVMBuildGEP2(
                b,
                c::LLVMInt8TypeInContext(self.cx),
                base,
                idx.as_mut_ptr(),
                1,
                n,
            );
            c::LLVMBuildAddrSpaceCast(b, g, vt, n)
        } else if to == SHARED_AS && from != SHARED_AS {
            let a = c::LLVMBuildPtrToInt(b, x, v64, n);
            let bi = c::LLVMBuildPtrToInt(b, base, self.i64, n);
            let d = c::LLVMBuildSub(b, a, self.splat(bi), n);
            c::LLVMBuildIntToPtr(b, d, vt, n)
        } else {
            c::LLVMBuildAddrSpaceCast(b, x, vt, n)
        }
    }

    /// The CTA's shared block (`ptx2llvm_thread::shared`).
    pub(super) unsafe fn shared_base(&self) -> LLVMValueRef {
        let mut idx = [c::LLVMConstInt(
            self.i64,
            crate::runtime::abi::offset::SHARED as u64,
            0,
        )];
        let p = c::LLVMBuildGEP2(
            self.b,
            c::LLVMInt8TypeInContext(self.cx),
            self.ctx,
            idx.as_mut_ptr(),
            1,
            c"".as_ptr(),
        );
        c::LLVMBuildLoad2(self.b, self.ptr, p, c"".as_ptr())
    }

    /// A vector of pointers as host pointers (shared offsets added to the block).
    unsafe fn host_ptrs(&mut self, p: LLVMValueRef) -> LLVMValueRef {
        let t = c::LLVMTypeOf(p);
        if c::LLVMGetPointerAddressSpace(c::LLVMGetElementType(t)) == 0 {
            return p;
        }
        let vt = c::LLVMVectorType(self.ptr, LANES);
        self.space_cast(p, vt)
    }

    pub(super) unsafe fn intrinsic(
        &self,
        name: &str,
        tys: &mut [LLVMTypeRef],
    ) -> (LLVMValueRef, LLVMTypeRef) {
        ir::intrinsic(self.m, name, tys)
    }

    pub(super) unsafe fn call_intrinsic(
        &self,
        name: &str,
        tys: &mut [LLVMTypeRef],
        args: &mut [LLVMValueRef],
    ) -> LLVMValueRef {
        let (f, ft) = self.intrinsic(name, tys);
        c::LLVMBuildCall2(
            self.b,
            ft,
            f,
            args.as_mut_ptr(),
            args.len() as u32,
            c"".as_ptr(),
        )
    }

    unsafe fn is_atomic(&self, i: LLVMValueRef) -> bool {
        c::LLVMGetOrdering(i) != LLVMAtomicOrdering::LLVMAtomicOrderingNotAtomic
    }

    unsafe fn load(&mut self, i: LLVMValueRef) -> LLVMValueRef {
        if self.is_atomic(i) {
            return self.per_lane(i, false).unwrap_or(std::ptr::null_mut());
        }
        let ptr = c::LLVMGetOperand(i, 0);
        let et = c::LLVMTypeOf(i);
        let access = self
            .facts
            .strides
            .access(ptr, et, &self.facts.varying, self.td);
        if access == Access::PerRow {
            let (base, off) = base_offset(ptr, i);
            let p = self.get(base, true);
            let p = self.host_ptrs(p);
            return self.load_per_row(p, off, et);
        }
        let p = self.get(ptr, true);
        if access == Access::Window {
            if versioned_generic(i) {
                return self.load_offsets(p, et);
            }
            return self.load_window(ptr, p, et);
        }
        let sp = p;
        let p = self.host_ptrs(p);
        if matches!(access, Access::Strided | Access::StridedChecked) {
            return self.load_strided(i, ptr, p, et, access);
        }
        let vt = self.vty(et);
        let b = self.b;
        if access == Access::Consecutive {
            if self.private_shared(ptr, et) {
                return self.load_shared_runs(sp, p, et);
            }
            let alike = self.run() < LANES
                && stride::rows_alike(ptr, &self.facts.varying, self.td, ROWS_ALIKE_DEPTH);
            return self.load_runs(p, et, alike);
        }
        if let Some(ok) = self.entry_flag(i, p, et) {
            let vec_bb = self.append("ld.entry_tested");
            let other_bb = self.append("ld.entry_other");
            let join = self.append("ld.entry_join");
            super::chain::mark(c::LLVMBuildCondBr(b, ok, vec_bb, other_bb));
            c::LLVMPositionBuilderAtEnd(b, vec_bb);
            let lv = self.load_runs(p, et, false);
            let vec_bb = c::LLVMGetInsertBlock(b);
            c::LLVMBuildBr(b, join);
            c::LLVMPositionBuilderAtEnd(b, other_bb);
            let scattered = self.untested_scattered();
            let ov = self.load_tested(i, ptr, p, et, access, scattered);
            let other_bb = c::LLVMGetInsertBlock(b);
            c::LLVMBuildBr(b, join);
            c::LLVMPositionBuilderAtEnd(b, join);
            return ir::phi(b, vt, c"".as_ptr(), &[(lv, vec_bb), (ov, other_bb)]);
        }
        self.load_tested(i, ptr, p, et, access, false)
    }

    /// A load of type `et` at host lane pointers `p` (source pointer `ptr`) that are neither
    /// consecutive nor of one address per row: a checked or run-time test of the lanes'
    /// addresses, else a gather (`load`). `i` is the source load (its block bounds the
    /// values a two-run proof may read, `Strides::rows`). `scattered`: the lanes are known
    /// not to be consecutive (`untested_scattered`), and the run-time test of the whole
    /// warp's addresses is left out (the other paths stay).
    unsafe fn load_tested(
        &mut self,
        i: LLVMValueRef,
        ptr: LLVMValueRef,
        p: LLVMValueRef,
        et: LLVMTypeRef,
        access: Access,
        scattered: bool,
    ) -> LLVMValueRef {
        let vt = self.vty(et);
        let b = self.b;
        let checked = (access == Access::Checked).then(|| self.checked_test(ptr, p, et));
        let lanes = p;
        let (p, m) = self.element_ptrs(p, et);
        if checked.is_none()
            && stride::memory_indexed(ptr, &self.facts.varying, MEMORY_INDEXED_DEPTH)
        {
            return self.gather(vt, p, m);
        }
        let global = c::LLVMGetPointerAddressSpace(c::LLVMTypeOf(ptr)) != SHARED_AS;
        if checked.is_none() && global && self.per(et) == 1 && !self.narrow(vt) {
            if let Some(rows) = self.facts.strides.rows(
                ptr,
                et,
                &self.facts.varying,
                self.td,
                c::LLVMGetInstructionParent(i),
            ) {
                return self.load_rows(vt, lanes, et, &rows);
            }
            if !scattered && stride::divided(ptr, &self.facts.varying, MEMORY_INDEXED_DEPTH) {
                return self.two_addresses_first(vt, lanes, et);
            }
            return self.runs_or_gather(vt, lanes, et, scattered);
        }
        let term = checked
            .is_none()
            .then(|| self.shared_term(ptr, et))
            .flatten();
        let checked = checked.or_else(|| term.map(|s| self.term_test(s)));
        if checked.is_none() && scattered {
            return self.gather(vt, p, m);
        }
        let contig = checked.unwrap_or_else(|| self.consecutive(p, vt));
        let vec_bb = self.append("ld.vector");
        let gat_bb = self.append("ld.gather");
        let join = self.append("ld");
        c::LLVMBuildCondBr(b, contig, vec_bb, gat_bb);
        c::LLVMPositionBuilderAtEnd(b, vec_bb);
        let lv = self.load_runs(lanes, et, false);
        let vec_bb = c::LLVMGetInsertBlock(b);
        c::LLVMBuildBr(b, join);
        c::LLVMPositionBuilderAtEnd(b, gat_bb);
        let gv = self.gather(vt, p, m);
        let gat_bb = c::LLVMGetInsertBlock(b);
        c::LLVMBuildBr(b, join);
        c::LLVMPositionBuilderAtEnd(b, join);
        ir::phi(b, vt, c"".as_ptr(), &[(lv, vec_bb), (gv, gat_bb)])
    }

    /// A load of a scalar of type `t` per lane at global lane pointers `p` whose stride the
    /// analysis does not know (`Access::Unknown`, not loaded from memory), by 16-lane halves
    /// tested at run time: each running lane's pointer is its half's first lane's plus the
    /// lanes between (one run per half: two vector loads, plain when every lane runs); else
    /// each is that or its half's last lane's minus the lanes between (two runs per half: a
    /// row of a 2-D tile that wraps inside the half, as a halo tile `in[(y0 + k / 18) * w +
    /// x0 + k % 18]` loaded from a global image: four masked loads, each from a run's pointer
    /// moved back to the first lane of its half so that lane `j` reads exactly lane `j`'s
    /// pointer; masked-off lanes are not accessed, so the same bytes as the gather and the
    /// same faults); else the gather. The first test takes the place of `consecutive`'s, at
    /// the same cost; a scattered load pays the second (about 20 instructions) before its
    /// gather. `.shared` accesses keep their own paths (windows, blocks). Why: four 8-lane
    /// `vgatherqps` were ~37% of conv3x3's samples on the Zen 5 machine; conv3x3 ×0.93–0.95
    /// at full size.
    ///
    /// `scattered` (an entry-tested access's fallback, `untested_scattered`): the gather at
    /// once, no run-time test of the lanes' addresses (like `load_tested`'s other accesses
    /// there). That fallback runs only when a loop's entry test failed, a warp whose lanes
    /// are not consecutive, and its two-run test and four masked loads per load were most
    /// of the warp function: layernorm_warp has 40 such loads (20 in the masked loop, 20 in
    /// its full-warp copy); compile CPU 193 -> 130 ms. What it costs: such a warp (e.g. a
    /// grid-stride loop's lanes one step apart after a remainder step) gathers where two
    /// runs per half would have been four masked loads.
    unsafe fn runs_or_gather(
        &mut self,
        vt: LLVMTypeRef,
        p: LLVMValueRef,
        t: LLVMTypeRef,
        scattered: bool,
    ) -> LLVMValueRef {
        let b = self.b;
        let n = c"".as_ptr();
        if scattered {
            return self.gather(vt, p, self.mask);
        }
        let v64 = c::LLVMVectorType(self.i64, LANES);
        let pi = c::LLVMBuildPtrToInt(b, p, v64, n);
        let ht = c::LLVMVectorType(t, HALF);
        let align = self.elem_align(t);
        let in_first = self.half_run(pi, t, 0);
        let one_bb = self.append("ld.halves");
        let test_bb = self.append("ld.two_runs_test");
        let join = self.append("ld.pieces");
        c::LLVMBuildCondBr(b, self.covers(in_first), one_bb, test_bb);
        let mut incoming = Vec::new();
        // One run per half: plain loads when every lane runs (see `all_running`), else masked.
        c::LLVMPositionBuilderAtEnd(b, one_bb);
        let full_bb = self.append("ld.halves.full");
        let part_bb = self.append("ld.halves.masked");
        c::LLVMBuildCondBr(b, self.all_running(), full_bb, part_bb);
        for full in [true, false] {
            c::LLVMPositionBuilderAtEnd(b, if full { full_bb } else { part_bb });
            let halves = (0..LANES / HALF)
                .map(|h| {
                    let base = self.run_base(p, h * HALF);
                    if full {
                        let v = c::LLVMBuildLoad2(b, ht, base, n);
                        c::LLVMSetAlignment(v, align);
                        v
                    } else {
                        self.masked_half(t, base, self.mask, h, c::LLVMGetPoison(ht))
                    }
                })
                .collect();
            let v = self.concat(halves);
            incoming.push((v, c::LLVMGetInsertBlock(b)));
            c::LLVMBuildBr(b, join);
        }
        c::LLVMPositionBuilderAtEnd(b, test_bb);
        let v = self.two_runs_or_gather(vt, p, pi, t, in_first);
        incoming.push((v, c::LLVMGetInsertBlock(b)));
        c::LLVMBuildBr(b, join);
        c::LLVMPositionBuilderAtEnd(b, join);
        ir::phi(b, vt, n, &incoming)
    }

    /// Whether the lanes `runs` (a lane mask) hold every running lane.
    unsafe fn covers(&self, runs: LLVMValueRef) -> LLVMValueRef {
        let (b, n) = (self.b, c"".as_ptr());
        let left = c::LLVMBuildAnd(b, self.mask, c::LLVMBuildNot(b, runs, n), n);
        c::LLVMBuildICmp(
            b,
            LLVMIntPredicate::LLVMIntEQ,
            self.bits(left),
            self.c32(0),
            n,
        )
    }

    /// `runs_or_gather`'s second test and its paths: two runs per half of lane pointers `p`
    /// (`pi` as integers; `in_first`: the lanes in the run from their half's first lane),
    /// else the gather.
    unsafe fn two_runs_or_gather(
        &mut self,
        vt: LLVMTypeRef,
        p: LLVMValueRef,
        pi: LLVMValueRef,
        t: LLVMTypeRef,
        in_first: LLVMValueRef,
    ) -> LLVMValueRef {
        let b = self.b;
        let n = c"".as_ptr();
        let in_last = self.half_run(pi, t, HALF - 1);
        let runs = self.covers(c::LLVMBuildOr(b, in_first, in_last, n));
        self.branch_join(
            runs,
            ["ld.two_runs", "ld.other", "ld.pieces"],
            |w| w.two_runs(pi, t, in_first, None),
            |w| w.two_addresses_or(pi, t, |w| w.gather(vt, p, w.mask)),
        )
    }

    /// A load at lane pointers `p` computed from a quotient by a uniform divisor
    /// (`stride::divided`): `two_addresses_or`'s test first, else `runs_or_gather`'s (whose
    /// gather then comes after a second two-address test, which fails again: the price of a
    /// warp whose lanes read three addresses or more). Why: the one-run and two-run tests
    /// before the two addresses were a third of a held-out row scaling's time.
    unsafe fn two_addresses_first(
        &mut self,
        vt: LLVMTypeRef,
        p: LLVMValueRef,
        t: LLVMTypeRef,
    ) -> LLVMValueRef {
        let v64 = c::LLVMVectorType(self.i64, LANES);
        let pi = c::LLVMBuildPtrToInt(self.b, p, v64, c"".as_ptr());
        self.two_addresses_or(pi, t, |w| w.runs_or_gather(vt, p, t, false))
    }

    /// A load of a `t` per lane at integer lane pointers `pi`: when every lane runs and reads
    /// lane 0's address or lane 31's (a row's factor `s[i / cols]` of a flat launch, one row
    /// or two per warp, which the strides do not prove), two scalar loads and a select per
    /// lane; else `other` (the gather, after `two_runs_or_gather`'s tests). The lanes read
    /// those addresses themselves, so the loads fault where the gather would. Why: the gather
    /// of one or two addresses was half of a held-out row scaling's time (4096^2: 6.4 ms
    /// against 2.9 ms for the bias add `b[i % cols]` beside it).
    unsafe fn two_addresses_or(
        &mut self,
        pi: LLVMValueRef,
        t: LLVMTypeRef,
        other: impl FnOnce(&mut Self) -> LLVMValueRef,
    ) -> LLVMValueRef {
        let b = self.b;
        let n = c"".as_ptr();
        let first = c::LLVMBuildExtractElement(b, pi, self.c32(0), n);
        let last = c::LLVMBuildExtractElement(b, pi, self.c32(u64::from(LANES - 1)), n);
        let eq = LLVMIntPredicate::LLVMIntEQ;
        let at_first = c::LLVMBuildICmp(b, eq, pi, self.splat(first), n);
        let at_last = c::LLVMBuildICmp(b, eq, pi, self.splat(last), n);
        let either = c::LLVMBuildOr(b, at_first, at_last, n);
        let it = c::LLVMIntTypeInContext(self.cx, LANES);
        let every = c::LLVMBuildICmp(
            b,
            eq,
            c::LLVMBuildBitCast(b, either, it, n),
            c::LLVMConstAllOnes(it),
            n,
        );
        // A select, not an AND: lanes not running may hold poison, which `every` would carry.
        let no = c::LLVMConstInt(self.i1, 0, 0);
        let ok = c::LLVMBuildSelect(b, self.all_running(), every, no, n);
        let align = self.elem_align(t);
        self.branch_join(
            ok,
            ["ld.two_addresses", "ld.gather", "ld.two_addresses.join"],
            |w| {
                let scalar = |a: LLVMValueRef| {
                    let ptr = c::LLVMBuildIntToPtr(b, a, w.ptr, n);
                    let v = c::LLVMBuildLoad2(b, t, ptr, n);
                    c::LLVMSetAlignment(v, align);
                    w.splat(v)
                };
                let (v0, v31) = (scalar(first), scalar(last));
                c::LLVMBuildSelect(b, at_first, v0, v31, n)
            },
            other,
        )
    }

    /// A load of a scalar of type `t` per lane at global lane pointers `p` that the strides
    /// prove to be at most two runs in each 16-lane half (`stride::Strides::rows`: a halo
    /// tile's rows `k / r`, `r >= 16`): `two_runs`' four masked loads with no test of the
    /// lanes' addresses and no gather, unless a cast on the way may wrap in some lane (the
    /// proof's `WrapTest`s, one vector compare each, false unless an index comes within a
    /// step of its type's limit), which gathers instead. Why: the run-time tests
    /// (`runs_or_gather`: one run per half?, two?) were most of conv3x3's halo loop.
    unsafe fn load_rows(
        &mut self,
        vt: LLVMTypeRef,
        p: LLVMValueRef,
        t: LLVMTypeRef,
        rows: &stride::Rows,
    ) -> LLVMValueRef {
        let b = self.b;
        let n = c"".as_ptr();
        let v64 = c::LLVMVectorType(self.i64, LANES);
        let pi = c::LLVMBuildPtrToInt(b, p, v64, n);
        // A block run without its guard may read slots no lane wrote: the masks and the
        // test below must be values even then (an empty mask loads nothing).
        let pi = if self.unguarded {
            c::LLVMBuildFreeze(b, pi, n)
        } else {
            pi
        };
        let mut wraps: Option<LLVMValueRef> = None;
        for w in &rows.tests {
            let x = self.get(w.x, true);
            let x = if self.unguarded {
                c::LLVMBuildFreeze(b, x, n)
            } else {
                x
            };
            // Lane `j + 1` of a piece is `x_j + step`: no wrap unless some `x_j` lies within
            // `step` of the limit in the step's direction.
            let bits = w.width;
            let (pred, limit): (LLVMIntPredicate, i128) = match (w.signed, w.step > 0) {
                (true, true) => (
                    LLVMIntPredicate::LLVMIntSGT,
                    (1i128 << (bits - 1)) - 1 - i128::from(w.step),
                ),
                (true, false) => (
                    LLVMIntPredicate::LLVMIntSLT,
                    -(1i128 << (bits - 1)) - i128::from(w.step),
                ),
                (false, true) => (
                    LLVMIntPredicate::LLVMIntUGT,
                    (1i128 << bits) - 1 - i128::from(w.step),
                ),
                (false, false) => (LLVMIntPredicate::LLVMIntULT, -i128::from(w.step)),
            };
            let et = c::LLVMGetElementType(c::LLVMTypeOf(x));
            let lim = self.splat(c::LLVMConstInt(et, limit as u64, 1));
            let near = c::LLVMBuildICmp(b, pred, x, lim, n);
            wraps = Some(match wraps {
                Some(o) => c::LLVMBuildOr(b, o, near, n),
                None => near,
            });
        }
        // The lanes of each half's first piece: from a value that tells the pieces apart, the
        // narrowest this block has (defined or used here: a value of another block that this
        // one does not use has no slot), an integer compare where the pointers took 64-bit
        // subtractions and compares; else from the pointers.
        let known = rows.witnesses.iter().min_by_key(|&&(v, _)| {
            llvm_sys::target::LLVMSizeOfTypeInBits(self.td, c::LLVMTypeOf(v))
        });
        let int = |v: LLVMValueRef| {
            c::LLVMGetTypeKind(c::LLVMTypeOf(v)) == LLVMTypeKind::LLVMIntegerTypeKind
        };
        let in_first = match known {
            Some(&(wv, step)) if int(wv) => {
                let wv = self.get(wv, true);
                let wv = if self.unguarded {
                    c::LLVMBuildFreeze(b, wv, n)
                } else {
                    wv
                };
                let idx: Vec<u32> = (0..LANES).map(|q| q / HALF * HALF).collect();
                let first = self.shuffle(wv, None, &idx);
                let et = c::LLVMGetElementType(c::LLVMTypeOf(wv));
                let mut want: Vec<LLVMValueRef> = (0..LANES)
                    .map(|q| c::LLVMConstInt(et, (i64::from(q % HALF) * step) as u64, 1))
                    .collect();
                let want = c::LLVMConstVector(want.as_mut_ptr(), LANES);
                let d = c::LLVMBuildSub(b, wv, first, n);
                c::LLVMBuildICmp(b, LLVMIntPredicate::LLVMIntEQ, d, want, n)
            }
            _ => self.half_run(pi, t, 0),
        };
        let Some(wraps) = wraps else {
            return self.two_runs(pi, t, in_first, Some(p));
        };
        let any = c::LLVMBuildICmp(
            b,
            LLVMIntPredicate::LLVMIntNE,
            self.bits(wraps),
            self.c32(0),
            n,
        );
        let rows_bb = self.append("ld.rows");
        let wrap_bb = self.append("ld.rows.wrap");
        let join = self.append("ld.rows.join");
        c::LLVMBuildCondBr(b, any, wrap_bb, rows_bb);
        c::LLVMPositionBuilderAtEnd(b, rows_bb);
        let rv = self.two_runs(pi, t, in_first, Some(p));
        let rows_bb = c::LLVMGetInsertBlock(b);
        c::LLVMBuildBr(b, join);
        c::LLVMPositionBuilderAtEnd(b, wrap_bb);
        let gv = self.gather(vt, p, self.mask);
        let wrap_bb = c::LLVMGetInsertBlock(b);
        c::LLVMBuildBr(b, join);
        c::LLVMPositionBuilderAtEnd(b, join);
        ir::phi(b, vt, n, &[(rv, rows_bb), (gv, wrap_bb)])
    }

    /// Lanes whose pointer (`pi`, as integers) is the one at lane `from` of their 16-lane half
    /// plus `lane - from` elements of type `t`.
    unsafe fn half_run(&self, pi: LLVMValueRef, t: LLVMTypeRef, from: u32) -> LLVMValueRef {
        let b = self.b;
        let n = c"".as_ptr();
        let s = llvm_sys::target::LLVMABISizeOfType(self.td, t) as i64;
        let idx: Vec<u32> = (0..LANES).map(|q| q / HALF * HALF + from).collect();
        let base = self.shuffle(pi, None, &idx);
        let d = c::LLVMBuildSub(b, pi, base, n);
        let mut want: Vec<LLVMValueRef> = (0..LANES)
            .map(|q| {
                c::LLVMConstInt(
                    self.i64,
                    ((i64::from(q % HALF) - i64::from(from)) * s) as u64,
                    1,
                )
            })
            .collect();
        let want = c::LLVMConstVector(want.as_mut_ptr(), LANES);
        c::LLVMBuildICmp(b, LLVMIntPredicate::LLVMIntEQ, d, want, n)
    }

    /// A masked load of 16 `t` at `base` under half `h` of mask `m`, `pass` in the others.
    unsafe fn masked_half(
        &self,
        t: LLVMTypeRef,
        base: LLVMValueRef,
        m: LLVMValueRef,
        h: u32,
        pass: LLVMValueRef,
    ) -> LLVMValueRef {
        let ht = c::LLVMVectorType(t, HALF);
        let mut tys = [ht, self.ptr];
        let mut args = [base, self.slice(m, h * HALF, HALF), pass];
        self.call_intrinsic("llvm.masked.load", &mut tys, &mut args)
    }

    /// Two runs per 16-lane half of lane pointers `pi` (as integers) to `t`: the running
    /// lanes of `in_first` (`half_run` from lane 0) from their half's first lane's pointer,
    /// the others from its last lane's minus the lanes between. Four masked loads, each
    /// from a run's pointer moved back to the first lane of its half so that lane `j` reads
    /// exactly lane `j`'s pointer; masked-off lanes are not accessed, so the same bytes as
    /// the gather and the same faults. With `lanes_of` (the lane pointers `pi` came from),
    /// the run pointers are `run_base` copies of its arithmetic, not lanes of `pi`.
    unsafe fn two_runs(
        &self,
        pi: LLVMValueRef,
        t: LLVMTypeRef,
        in_first: LLVMValueRef,
        lanes_of: Option<LLVMValueRef>,
    ) -> LLVMValueRef {
        let b = self.b;
        let n = c"".as_ptr();
        let s = llvm_sys::target::LLVMABISizeOfType(self.td, t) as i64;
        let ht = c::LLVMVectorType(t, HALF);
        let i8t = c::LLVMInt8TypeInContext(self.cx);
        let first_m = c::LLVMBuildAnd(b, self.mask, in_first, n);
        let last_m = c::LLVMBuildAnd(b, self.mask, c::LLVMBuildNot(b, in_first, n), n);
        let halves = (0..LANES / HALF)
            .map(|h| {
                // The runs' first and last pointers: lanes of `pi` where the tests built it
                // anyway (`runs_or_gather`), scalar copies of the address arithmetic for a
                // load proven two runs (`lanes_of`, `load_rows`). Its vector of 64-bit
                // addresses then feeds only the cold gather, as its prefetch takes such
                // copies too (`gathered_base`): conv3x3 CPU time x0.93, the sign extensions,
                // multiplies and shifts of 32 lanes (four zmm registers a step) off the hot
                // path. Copies for the loads alone, with the prefetch extracting lanes of the
                // vector, had cost x1.025.
                let at = |q: u32| match lanes_of {
                    Some(p) => self.run_base(p, q),
                    None => {
                        let x = c::LLVMBuildExtractElement(b, pi, self.c32(u64::from(q)), n);
                        let p0 = c::LLVMBuildIntToPtr(b, x, self.ptr, n);
                        if self.unguarded {
                            c::LLVMBuildFreeze(b, p0, n)
                        } else {
                            p0
                        }
                    }
                };
                let p_first = at(h * HALF);
                let p_last = at(h * HALF + HALF - 1);
                let mut back = [c::LLVMConstInt(
                    self.i64,
                    (-(i64::from(HALF - 1) * s)) as u64,
                    1,
                )];
                let p_last = c::LLVMBuildGEP2(b, i8t, p_last, back.as_mut_ptr(), 1, n);
                let v = self.masked_half(t, p_first, first_m, h, c::LLVMGetPoison(ht));
                self.masked_half(t, p_last, last_m, h, v)
            })
            .collect();
        self.concat(halves)
    }

    /// A masked gather of `vt` at pointers `p` (a loop of scalar loads for narrow elements).
    unsafe fn gather(&mut self, vt: LLVMTypeRef, p: LLVMValueRef, m: LLVMValueRef) -> LLVMValueRef {
        if self.narrow(vt) {
            self.gather_loop(vt, p, m)
        } else {
            let p = self.uniform_base(p);
            let mut tys = [vt, c::LLVMTypeOf(p)];
            let mut args = [p, m, c::LLVMGetPoison(vt)];
            self.call_intrinsic("llvm.masked.gather", &mut tys, &mut args)
        }
    }

    /// Pointers `inttoptr (add w, splat u)` (a uniform address plus per-lane offsets, as
    /// `x[col[k]]` lowers) as `getelementptr i8, ptr u, w`, built next to the gather.
    /// Code generation matches a gather's base and index only inside the gather's block: the
    /// splat, hoisted out of the loop by LICM, is then an opaque vector, and `w`'s
    /// `sext i32 << 2` stays four `vpmovsxdq`/`vpsllq`/`vpaddq` steps feeding 8-lane
    /// `vgatherqps` on 64-bit pointers. With a scalar base the selector folds the shift into
    /// the scale and the extension into 32-bit indices: two 16-lane `vgatherdps`, cheaper on
    /// Zen 5 also with empty lanes (3.9 against 5.4 ns per 16 slots).
    unsafe fn uniform_base(&self, p: LLVMValueRef) -> LLVMValueRef {
        let b = self.b;
        let n = c"".as_ptr();
        if c::LLVMIsAIntToPtrInst(p).is_null() {
            return p;
        }
        let a = c::LLVMGetOperand(p, 0);
        if ir::opcode(a) != O::LLVMAdd {
            return p;
        }
        let (x, y) = (c::LLVMGetOperand(a, 0), c::LLVMGetOperand(a, 1));
        let (u, w) = match (splat_scalar(x), splat_scalar(y)) {
            (_, Some(u)) => (u, x),
            (Some(u), None) => (u, y),
            (None, None) => return p,
        };
        let base = c::LLVMBuildIntToPtr(b, u, self.ptr, n);
        let mut idx = [w];
        c::LLVMBuildGEP2(
            b,
            c::LLVMInt8TypeInContext(self.cx),
            base,
            idx.as_mut_ptr(),
            1,
            n,
        )
    }

    /// Lanes per run of consecutive accesses: 32, or a row segment's width
    /// (`uniform::Segment`).
    fn run(&self) -> u32 {
        self.facts.segment.map_or(LANES, |s| s.width)
    }

    /// Lane `lane` of vector `v` as a scalar built from its operands' lanes, through the
    /// lane-wise arithmetic, casts, comparisons, selects, GEPs and shuffles that make `v` (at
    /// most `depth` deep; below that, or at any other instruction, an `extractelement`). The
    /// first and last lanes' pointers of an access (its vector access's base, the checked
    /// access's wrap test, a prefetch) are then a few scalar instructions: extracted from the
    /// vector of 64-bit pointers they kept its whole computation alive on the vector path, 4
    /// `vpmovsxdq`/`vpaddq`/`vpsllq` per step for 32 lanes, since InstCombine scalarizes an
    /// extract only when the vector has no other use (the gather's). Wrap flags are dropped:
    /// the scalar is lane `lane`'s value whether or not another lane overflowed.
    pub(super) unsafe fn lane_of(&self, v: LLVMValueRef, lane: u32, depth: u32) -> LLVMValueRef {
        let b = self.b;
        let n = c"".as_ptr();
        let t = c::LLVMTypeOf(v);
        if c::LLVMGetTypeKind(t) != LLVMTypeKind::LLVMVectorTypeKind {
            return v;
        }
        let extract = || c::LLVMBuildExtractElement(b, v, self.c32(u64::from(lane)), n);
        if !c::LLVMIsAConstant(v).is_null() {
            let e = c::LLVMGetAggregateElement(v, lane);
            return if e.is_null() { extract() } else { e };
        }
        if depth == 0 || c::LLVMIsAInstruction(v).is_null() {
            return extract();
        }
        let et = c::LLVMGetElementType(t);
        let opnd = |k: u32| self.lane_of(c::LLVMGetOperand(v, k), lane, depth - 1);
        match c::LLVMGetInstructionOpcode(v) {
            op if ir::int_binop(op) => c::LLVMBuildBinOp(b, op, opnd(0), opnd(1), n),
            // By a constant that cannot trap (not 0, nor -1 when signed): a row-segmented
            // block's `%tid.y` is `(lane / S) % R`, and its last lane's copy then folds to its
            // first lane's, so a row's two addresses share their `%tid.y * n`.
            op if ir::int_div_rem(op) => {
                let d = opnd(1);
                let signed = matches!(op, O::LLVMSDiv | O::LLVMSRem);
                let safe = !c::LLVMIsAConstantInt(d).is_null()
                    && c::LLVMConstIntGetZExtValue(d) != 0
                    && !(signed && c::LLVMConstIntGetSExtValue(d) == -1);
                if safe {
                    c::LLVMBuildBinOp(b, op, opnd(0), d, n)
                } else {
                    extract()
                }
            }
            op @ (O::LLVMTrunc
            | O::LLVMZExt
            | O::LLVMSExt
            | O::LLVMPtrToInt
            | O::LLVMIntToPtr
            | O::LLVMAddrSpaceCast) => c::LLVMBuildCast(b, op, opnd(0), et, n),
            O::LLVMICmp => c::LLVMBuildICmp(b, c::LLVMGetICmpPredicate(v), opnd(0), opnd(1), n),
            O::LLVMSelect => c::LLVMBuildSelect(b, opnd(0), opnd(1), opnd(2), n),
            O::LLVMInsertElement => {
                let idx = c::LLVMGetOperand(v, 2);
                if c::LLVMIsAConstantInt(idx).is_null() {
                    extract()
                } else if c::LLVMConstIntGetZExtValue(idx) == u64::from(lane) {
                    c::LLVMGetOperand(v, 1)
                } else {
                    opnd(0)
                }
            }
            O::LLVMShuffleVector => {
                let m = c::LLVMGetMaskValue(v, lane);
                let a = c::LLVMGetOperand(v, 0);
                let w = c::LLVMGetVectorSize(c::LLVMTypeOf(a)) as i32;
                if m == c::LLVMGetUndefMaskElem() || m < 0 {
                    extract()
                } else if m < w {
                    self.lane_of(a, m as u32, depth - 1)
                } else {
                    self.lane_of(c::LLVMGetOperand(v, 1), (m - w) as u32, depth - 1)
                }
            }
            O::LLVMGetElementPtr => ir::rebuild_gep(b, v, opnd, n),
            _ => extract(),
        }
    }

    /// Whether a `Checked` access at source pointer `ptr` (lane pointers `p` to values of
    /// type `t`) is consecutive in every run: where `stride::Strides::wrap_cast` finds its
    /// one widening cast, whether the cast's narrow operand stays on one side of its type's
    /// limit from each run's first lane to its last (`x_first <= MAX - (run - 1) * step` for a
    /// sign extension by a positive step; lane `l` of the run is `x_first + l * step` modulo
    /// the width, by the strides): one compare of a value the address uses anyway; else
    /// `lane31_test`.
    unsafe fn checked_test(
        &mut self,
        ptr: LLVMValueRef,
        p: LLVMValueRef,
        t: LLVMTypeRef,
    ) -> LLVMValueRef {
        let cast = self.facts.strides.wrap_cast(ptr, &self.facts.varying);
        let clamps = self
            .facts
            .strides
            .clamps(ptr, &self.facts.varying)
            .unwrap_or_default();
        let span = self
            .strided_n(ptr, t)
            .map(|n| u64::from(n) * llvm_sys::target::LLVMABISizeOfType(self.td, t));
        let mut ok = self.cast_test(cast, p, t, span);
        for k in clamps {
            ok = c::LLVMBuildAnd(self.b, ok, self.clamp_test(k), c"".as_ptr());
        }
        ok
    }

    /// Whether clamp `k` (`stride::Clamp`) leaves every lane of its value as it is: lanes 0
    /// and 31 within its bound, and lane 31 beyond lane 0 in the step's direction (a stepping
    /// value between them then lies between them: no lane is clamped).
    unsafe fn clamp_test(&mut self, k: stride::Clamp) -> LLVMValueRef {
        use LLVMIntPredicate::*;
        let xv = self.get(k.x, true);
        let bound = self.get(k.bound, false);
        let bound = if self.is_vec(bound) {
            self.lane_of(bound, 0, LANE_OF_DEPTH)
        } else {
            bound
        };
        let first = self.lane_of(xv, 0, LANE_OF_DEPTH);
        let last = self.lane_of(xv, LANES - 1, LANE_OF_DEPTH);
        let (ge, le) = if k.signed {
            (LLVMIntSGE, LLVMIntSLE)
        } else {
            (LLVMIntUGE, LLVMIntULE)
        };
        let b = self.b;
        let n = c"".as_ptr();
        let inside = if k.max { ge } else { le };
        let a = c::LLVMBuildICmp(b, inside, first, bound, n);
        let z = c::LLVMBuildICmp(b, inside, last, bound, n);
        let order = c::LLVMBuildICmp(b, if k.rising { ge } else { le }, last, first, n);
        let ok = c::LLVMBuildAnd(b, a, z, n);
        c::LLVMBuildAnd(b, ok, order, n)
    }

    /// `checked_test` for the widening cast `cast` (`stride::WrapCast`), if one was found.
    unsafe fn cast_test(
        &mut self,
        cast: Option<stride::WrapCast>,
        p: LLVMValueRef,
        t: LLVMTypeRef,
        span: Option<u64>,
    ) -> LLVMValueRef {
        let run = self.run();
        let Some((x, signed, step, w)) = cast.filter(|&(_, _, step, w)| {
            step != 0
                && (2..=32).contains(&w)
                && i128::from(run - 1) * i128::from(step).abs() < 1i128 << (w - 1)
        }) else {
            return self.lane31_test(p, t, span);
        };
        let span = i128::from(run - 1) * i128::from(step).abs();
        let (pred, bound) = match (signed, step > 0) {
            (true, true) => (LLVMIntPredicate::LLVMIntSLE, (1i128 << (w - 1)) - 1 - span),
            (true, false) => (LLVMIntPredicate::LLVMIntSGE, -(1i128 << (w - 1)) + span),
            (false, true) => (LLVMIntPredicate::LLVMIntULE, (1i128 << w) - 1 - span),
            (false, false) => (LLVMIntPredicate::LLVMIntUGE, span),
        };
        let xv = self.get(x, true);
        let b = self.b;
        let n = c"".as_ptr();
        let xt = c::LLVMTypeOf(x);
        let k = c::LLVMConstInt(xt, bound as u64, 0);
        let mut ok = c::LLVMConstInt(self.i1, 1, 0);
        for r in 0..LANES / run {
            let first = self.lane_of(xv, r * run, LANE_OF_DEPTH);
            let fits = c::LLVMBuildICmp(b, pred, first, k, n);
            ok = c::LLVMBuildAnd(b, ok, fits, n);
        }
        ok
    }

    /// For lane pointers `p` to values of type `t` that step by the value's size (or `span`
    /// bytes: `Access::StridedChecked`) unless one widening cast wrapped (`Access::Checked`):
    /// whether the last lane's pointer of each run (lane 31; the last of each row under row
    /// segments) is its first lane's plus that many steps (then no cast wrapped, see
    /// `stride.rs`).
    unsafe fn lane31_test(
        &self,
        p: LLVMValueRef,
        t: LLVMTypeRef,
        span: Option<u64>,
    ) -> LLVMValueRef {
        let b = self.b;
        let n = c"".as_ptr();
        let e = if self.per(t) > 1 {
            c::LLVMGetElementType(t)
        } else {
            t
        };
        let size = span.unwrap_or_else(|| {
            llvm_sys::target::LLVMABISizeOfType(self.td, e) * self.per(t) as u64
        });
        let run = self.run();
        let want = c::LLVMConstInt(self.i64, (run as u64 - 1) * size, 0);
        let mut ok = c::LLVMConstInt(self.i1, 1, 0);
        for r in 0..LANES / run {
            let first = self.lane_of(p, r * run, LANE_OF_DEPTH);
            let last = self.lane_of(p, r * run + run - 1, LANE_OF_DEPTH);
            let a0 = c::LLVMBuildPtrToInt(b, first, self.i64, n);
            let a1 = c::LLVMBuildPtrToInt(b, last, self.i64, n);
            let d = c::LLVMBuildSub(b, a1, a0, n);
            let eq = c::LLVMBuildICmp(b, llvm_sys::LLVMIntPredicate::LLVMIntEQ, d, want, n);
            ok = c::LLVMBuildAnd(b, ok, eq, n);
        }
        ok
    }

    /// Parts of equal length, one after the other as one vector.
    pub(super) unsafe fn concat(&self, mut parts: Vec<LLVMValueRef>) -> LLVMValueRef {
        while parts.len() > 1 {
            let w = c::LLVMGetVectorSize(c::LLVMTypeOf(parts[0]));
            let idx: Vec<u32> = (0..2 * w).collect();
            parts = parts
                .chunks(2)
                .map(|ab| self.shuffle(ab[0], Some(ab[1]), &idx))
                .collect();
        }
        parts[0]
    }

    /// Elements `from..from + len` of vector `v`.
    unsafe fn slice(&self, v: LLVMValueRef, from: u32, len: u32) -> LLVMValueRef {
        if from == 0 && len == c::LLVMGetVectorSize(c::LLVMTypeOf(v)) {
            return v;
        }
        let idx: Vec<u32> = (from..from + len).collect();
        self.shuffle(v, None, &idx)
    }

    /// Whether every lane runs (the execution mask all ones): a run of consecutive accesses is
    /// then a plain vector access, which touches exactly the bytes the masked one would.
    ///
    /// Why not always the masked form: on the AMD Zen 4 development machine a masked vector
    /// load that misses the cache costs far more than a plain one (CPU ms per launch in the
    /// kernel, full-size bench inputs: scan 165 -> 94, layernorm 155 -> 97, softmax_warp
    /// 85 -> 74 with plain accesses for full warps).
    unsafe fn all_running(&self) -> LLVMValueRef {
        c::LLVMBuildICmp(
            self.b,
            llvm_sys::LLVMIntPredicate::LLVMIntEQ,
            self.bits(self.mask),
            c::LLVMConstAllOnes(self.i32),
            c"".as_ptr(),
        )
    }

    /// The alignment of a run's vector access: its element's (that of the lanes' accesses).
    unsafe fn elem_align(&self, t: LLVMTypeRef) -> u32 {
        let e = if self.per(t) > 1 {
            c::LLVMGetElementType(t)
        } else {
            t
        };
        llvm_sys::target::LLVMABIAlignmentOfType(self.td, e).max(1)
    }

    /// A load of a value of type `t` per lane whose lanes' pointers `p` are consecutive in each
    /// run (`run`): one vector load per run, from its first lane's pointer; plain when every
    /// lane runs (`all_running`), else masked. When the rows of a warp read at the same
    /// pointers lane for lane (`alike`: `stride::rows_alike` of the source pointer, as
    /// `Bs[k][tx]` in every row of a 16x16 tile), one load from the first run's pointer (with
    /// the runs' masks merged when masked) serves them all: each enabled lane reads an element
    /// a running lane reads.
    unsafe fn load_runs(&self, p: LLVMValueRef, t: LLVMTypeRef, alike: bool) -> LLVMValueRef {
        let b = self.b;
        let n = c"".as_ptr();
        let full_bb = self.append("ld.full");
        let masked_bb = self.append("ld.masked");
        let join = self.append("ld.runs");
        c::LLVMBuildCondBr(b, self.all_running(), full_bb, masked_bb);
        c::LLVMPositionBuilderAtEnd(b, full_bb);
        let fv = self.load_runs_as(p, t, alike, true);
        let full_bb = c::LLVMGetInsertBlock(b);
        c::LLVMBuildBr(b, join);
        c::LLVMPositionBuilderAtEnd(b, masked_bb);
        let mv = self.load_runs_as(p, t, alike, false);
        let masked_bb = c::LLVMGetInsertBlock(b);
        c::LLVMBuildBr(b, join);
        c::LLVMPositionBuilderAtEnd(b, join);
        ir::phi(b, c::LLVMTypeOf(fv), n, &[(fv, full_bb), (mv, masked_bb)])
    }

    /// Lane `lane`'s pointer of lane pointers `p`, the base of a run's vector access. In a
    /// block without its guard (`Warp::unguarded`) it may come from slots that no lane has
    /// written (undefined): frozen, as the masked access's pointer must be a value even when
    /// its mask is empty.
    unsafe fn run_base(&self, p: LLVMValueRef, lane: u32) -> LLVMValueRef {
        let p0 = self.lane_of(p, lane, LANE_OF_DEPTH);
        if self.unguarded {
            c::LLVMBuildFreeze(self.b, p0, c"".as_ptr())
        } else {
            p0
        }
    }

    /// `load_runs`'s loads: plain (`full`: every lane runs) or masked.
    unsafe fn load_runs_as(
        &self,
        p: LLVMValueRef,
        t: LLVMTypeRef,
        alike: bool,
        full: bool,
    ) -> LLVMValueRef {
        let b = self.b;
        let n = c"".as_ptr();
        let k = self.per(t);
        let e = if k > 1 { c::LLVMGetElementType(t) } else { t };
        let run = self.run();
        let rt = c::LLVMVectorType(e, run * k);
        let m = self.widen(self.mask, k);
        let runs = LANES / run;
        let load = |r: u32, m: LLVMValueRef| {
            let p0 = self.run_base(p, r * run);
            if full {
                let v = c::LLVMBuildLoad2(b, rt, p0, n);
                c::LLVMSetAlignment(v, self.elem_align(t));
                return v;
            }
            let mut tys = [rt, self.ptr];
            let mut args = [p0, m, c::LLVMGetPoison(rt)];
            self.call_intrinsic("llvm.masked.load", &mut tys, &mut args)
        };
        if alike && runs > 1 {
            let merged = if full {
                m
            } else {
                (1..runs).fold(self.slice(m, 0, run * k), |acc, r| {
                    c::LLVMBuildOr(b, acc, self.slice(m, r * run * k, run * k), n)
                })
            };
            let one = load(0, merged);
            return self.concat(vec![one; runs as usize]);
        }
        let parts = (0..runs)
            .map(|r| load(r, self.slice(m, r * run * k, run * k)))
            .collect();
        self.concat(parts)
    }

    /// A store of `v` (type `t` per lane) whose lanes' pointers `p` are consecutive in each
    /// run: one vector store per run, plain when every lane runs (`all_running`), else masked.
    unsafe fn store_runs(&self, v: LLVMValueRef, p: LLVMValueRef, t: LLVMTypeRef) {
        let b = self.b;
        let full_bb = self.append("st.full");
        let masked_bb = self.append("st.masked");
        let join = self.append("st.runs");
        c::LLVMBuildCondBr(b, self.all_running(), full_bb, masked_bb);
        for (bb, full) in [(full_bb, true), (masked_bb, false)] {
            c::LLVMPositionBuilderAtEnd(b, bb);
            self.store_runs_as(v, p, t, full);
            c::LLVMBuildBr(b, join);
        }
        c::LLVMPositionBuilderAtEnd(b, join);
    }

    /// `store_runs`'s stores: plain (`full`: every lane runs) or masked.
    unsafe fn store_runs_as(&self, v: LLVMValueRef, p: LLVMValueRef, t: LLVMTypeRef, full: bool) {
        let k = self.per(t);
        let run = self.run();
        let m = self.widen(self.mask, k);
        for r in 0..LANES / run {
            let p0 = self.run_base(p, r * run);
            let part = self.slice(v, r * run * k, run * k);
            if full {
                let st = c::LLVMBuildStore(self.b, part, p0);
                c::LLVMSetAlignment(st, self.elem_align(t));
                continue;
            }
            let mut tys = [c::LLVMTypeOf(part), self.ptr];
            let mut args = [part, p0, self.slice(m, r * run * k, run * k)];
            self.call_intrinsic("llvm.masked.store", &mut tys, &mut args);
        }
    }

    /// Whether a consecutive access of a 32-bit `t` per lane at `.shared` pointer `ptr` (of the
    /// scalar kernel) takes `load_shared_runs`/`store_shared_runs` when some lanes do not run:
    /// 32 lanes in one run, on a host with `vpermi2d`, in a block whose mask can hold some of
    /// the launched lanes and not others (`Facts::split`). Elsewhere the mask is the launched
    /// lanes, whole in a full warp, and `load_runs`/`store_runs` have the two paths it needs: each
    /// partial access's three paths made the CTA functions of the halving trees twice as
    /// large (compile time).
    unsafe fn private_shared(&self, ptr: LLVMValueRef, t: LLVMTypeRef) -> bool {
        let kind = c::LLVMGetTypeKind(t);
        let word = kind == LLVMTypeKind::LLVMFloatTypeKind
            || kind == LLVMTypeKind::LLVMIntegerTypeKind && c::LLVMGetIntTypeWidth(t) == 32;
        word && self.run() == LANES
            && self.facts.split[self.cur]
            && self.facts.strides.permutes()
            && c::LLVMGetPointerAddressSpace(c::LLVMTypeOf(ptr)) == SHARED_AS
    }

    /// Whether the kernel has skip guards (`barrier::Skips`): rounds that warps none of
    /// whose lanes run them skip, such as a halving tree's one-warp steps.
    fn few_warp_rounds(&self) -> bool {
        self.regions
            .as_ref()
            .and_then(|r| r.skips.as_ref())
            .is_some_and(|s| !s.guards.is_empty())
    }

    /// Whether the 128 bytes from shared offset `off` (lane 0's of a consecutive access, `i32`)
    /// lie in the CTA's shared block, whole 256-byte blocks private to the worker thread that
    /// runs the CTA and all its warps (`runtime::shared`; a cluster is one CTA here): plain
    /// vector accesses there touch no other thread's memory and cannot fault.
    ///
    /// `floor`: let LLVM see that the block holds the static variables (below), so that the
    /// test of an access ending inside them folds. Loads, and the stores of a kernel with
    /// skip guards (`Warp::few_warp_rounds`): the halving tree's one-warp steps (warp 0
    /// peeled, constant offsets) are then straight-line code, and the GVN after `default<On>`
    /// (`target::cpu::build`) hands each step's stored vector to the next step's loads
    /// (reduce_block ×0.79). Not other stores: with a store's test folded, LLVM makes the
    /// store's plain path load and blend as its partial path does (one path), and a block
    /// whose warps mostly run whole (transpose's tile rows) then pays that at every store
    /// (transpose 3–5% slower, sessions 26 and 28).
    unsafe fn in_shared_block(&self, off: LLVMValueRef, floor: bool) -> LLVMValueRef {
        let b = self.b;
        let n = c"".as_ptr();
        let mut idx = [c::LLVMConstInt(
            self.i64,
            u64::from(crate::runtime::abi::offset::TOTAL_SMEM_SIZE),
            0,
        )];
        let at = c::LLVMBuildGEP2(
            b,
            c::LLVMInt8TypeInContext(self.cx),
            self.ctx,
            idx.as_mut_ptr(),
            1,
            n,
        );
        let total = c::LLVMBuildZExt(b, c::LLVMBuildLoad2(b, self.i32, at, n), self.i64, n);
        let blocks = c::LLVMBuildAnd(
            b,
            c::LLVMBuildAdd(b, total, c::LLVMConstInt(self.i64, 255, 0), n),
            c::LLVMConstInt(self.i64, !255u64, 0),
            n,
        );
        // The block always holds the static variables (`runtime::launch`: their bytes, then
        // the dynamic ones), so `blocks` is at least their whole 256-byte blocks: saying so
        // lets LLVM fold the test of an access that ends inside them (the unrolled tree's
        // `s[t + k]` of warp 0 at a constant offset), leaving the plain path alone.
        let floor = if floor {
            static_shared_bytes(self.m).div_ceil(256) * 256
        } else {
            0
        };
        let blocks = if floor > 0 {
            self.call_intrinsic(
                "llvm.umax",
                &mut [self.i64],
                &mut [blocks, c::LLVMConstInt(self.i64, floor, 0)],
            )
        } else {
            blocks
        };
        let end = c::LLVMBuildAdd(
            b,
            c::LLVMBuildZExt(b, off, self.i64, n),
            c::LLVMConstInt(self.i64, 128, 0),
            n,
        );
        c::LLVMBuildICmp(b, llvm_sys::LLVMIntPredicate::LLVMIntULE, end, blocks, n)
    }

    /// Lane 0's shared offset of shared lane pointers `sp` (`i32`).
    unsafe fn first_offset(&self, sp: LLVMValueRef) -> LLVMValueRef {
        c::LLVMBuildPtrToInt(self.b, self.run_base(sp, 0), self.i32, c"".as_ptr())
    }

    /// A consecutive `.shared` load of a 32-bit `t` per lane (`private_shared`; `sp` the lanes'
    /// shared pointers, `p` their host pointers): plain when every lane runs; else, inside the
    /// block (`in_shared_block`), the 64-byte-aligned pieces that hold lane 0's 32 elements,
    /// plain (two when lane 0 is at a piece's start, else three and two `vpermi2d`; lanes
    /// that do not run read what is there); else masked.
    /// A masked load (and any load after a masked store) is not forwarded from the store
    /// buffer: it waits until the stores it overlaps reach the cache, about 60 cycles on Zen 4,
    /// while the plain pieces read exactly what `store_shared_runs`'s plain stores wrote. The
    /// halving tree's steps with k < 32 (one warp, partial masks) each waited so on the step
    /// before: 25% of reduce_block.
    unsafe fn load_shared_runs(
        &self,
        sp: LLVMValueRef,
        p: LLVMValueRef,
        t: LLVMTypeRef,
    ) -> LLVMValueRef {
        let b = self.b;
        let n = c"".as_ptr();
        let full_bb = self.append("ld.full");
        let part_bb = self.append("ld.part");
        let priv_bb = self.append("ld.pieces");
        let masked_bb = self.append("ld.masked");
        let join = self.append("ld.runs");
        c::LLVMBuildCondBr(b, self.all_running(), full_bb, part_bb);
        c::LLVMPositionBuilderAtEnd(b, full_bb);
        let fv = self.load_runs_as(p, t, false, true);
        let full_bb = c::LLVMGetInsertBlock(b);
        c::LLVMBuildBr(b, join);

        c::LLVMPositionBuilderAtEnd(b, part_bb);
        let off = self.first_offset(sp);
        c::LLVMBuildCondBr(b, self.in_shared_block(off, true), priv_bb, masked_bb);

        c::LLVMPositionBuilderAtEnd(b, priv_bb);
        let i8t = c::LLVMInt8TypeInContext(self.cx);
        let v16 = c::LLVMVectorType(self.i32, 16);
        let start = c::LLVMBuildAnd(b, off, self.c32(!63u32 as u64), n);
        let skip = c::LLVMBuildLShr(b, c::LLVMBuildAnd(b, off, self.c32(63), n), self.c32(2), n);
        let mut at = [c::LLVMBuildZExt(b, start, self.i64, n)];
        let q0 = c::LLVMBuildGEP2(b, i8t, self.shared_base(), at.as_mut_ptr(), 1, n);
        let piece = |d: u64| {
            let mut k = [c::LLVMConstInt(self.i64, d, 0)];
            let q = c::LLVMBuildGEP2(b, i8t, q0, k.as_mut_ptr(), 1, n);
            let l = c::LLVMBuildLoad2(b, v16, q, n);
            c::LLVMSetAlignment(l, 4);
            l
        };
        // Lane 0 at a piece's start: the two pieces are the lanes (a third could lie past the
        // block's end).
        let whole_bb = self.append("ld.pieces.whole");
        let shift_bb = self.append("ld.pieces.shift");
        let pieces_end = self.append("ld.pieces.end");
        let at_start = c::LLVMBuildICmp(
            b,
            llvm_sys::LLVMIntPredicate::LLVMIntEQ,
            skip,
            self.c32(0),
            n,
        );
        c::LLVMBuildCondBr(b, at_start, whole_bb, shift_bb);
        c::LLVMPositionBuilderAtEnd(b, whole_bb);
        let wv = self.concat(vec![piece(0), piece(64)]);
        c::LLVMBuildBr(b, pieces_end);
        c::LLVMPositionBuilderAtEnd(b, shift_bb);
        let (v0, v1, v2) = (piece(0), piece(64), piece(128));
        let iota = c::LLVMConstVector(
            (0..16u64)
                .map(|l| self.c32(l))
                .collect::<Vec<_>>()
                .as_mut_ptr(),
            16,
        );
        let sv = c::LLVMBuildInsertElement(b, c::LLVMGetPoison(v16), skip, self.c32(0), n);
        let sv = c::LLVMBuildShuffleVector(b, sv, c::LLVMGetPoison(v16), c::LLVMConstNull(v16), n);
        let idx = c::LLVMBuildAdd(b, iota, sv, n);
        let (f, ft) = self.vpermi2d();
        let pick = |x: LLVMValueRef, y: LLVMValueRef| {
            let mut args = [x, idx, y];
            c::LLVMBuildCall2(b, ft, f, args.as_mut_ptr(), 3, n)
        };
        let sv = self.concat(vec![pick(v0, v1), pick(v1, v2)]);
        c::LLVMBuildBr(b, pieces_end);
        c::LLVMPositionBuilderAtEnd(b, pieces_end);
        let pv = ir::phi(b, c::LLVMTypeOf(wv), n, &[(wv, whole_bb), (sv, shift_bb)]);
        let pv = c::LLVMBuildBitCast(b, pv, self.vty(t), n);
        let priv_bb = c::LLVMGetInsertBlock(b);
        c::LLVMBuildBr(b, join);

        c::LLVMPositionBuilderAtEnd(b, masked_bb);
        let mv = self.load_runs_as(p, t, false, false);
        let masked_bb = c::LLVMGetInsertBlock(b);
        c::LLVMBuildBr(b, join);

        c::LLVMPositionBuilderAtEnd(b, join);
        ir::phi(
            b,
            c::LLVMTypeOf(fv),
            n,
            &[(fv, full_bb), (pv, priv_bb), (mv, masked_bb)],
        )
    }

    /// A consecutive `.shared` store of `v`, a 32-bit `t` per lane (`private_shared`; `sp`,
    /// `p` as for `load_shared_runs`): plain when every lane runs; else, inside the block
    /// (`in_shared_block`), a plain load of the 128 bytes, the running lanes' values blended
    /// in, and a plain store of all 128 (the other lanes' bytes written as they were: no
    /// other thread touches the CTA's shared memory while this warp runs, so nothing can
    /// change them in between); else masked. Plain stores are forwarded to the plain loads
    /// that follow (`load_shared_runs`), masked ones to none.
    unsafe fn store_shared_runs(
        &self,
        v: LLVMValueRef,
        sp: LLVMValueRef,
        p: LLVMValueRef,
        t: LLVMTypeRef,
    ) {
        let b = self.b;
        let n = c"".as_ptr();
        let full_bb = self.append("st.full");
        let part_bb = self.append("st.part");
        let priv_bb = self.append("st.blend");
        let masked_bb = self.append("st.masked");
        let join = self.append("st.runs");
        c::LLVMBuildCondBr(b, self.all_running(), full_bb, part_bb);
        c::LLVMPositionBuilderAtEnd(b, full_bb);
        self.store_runs_as(v, p, t, true);
        c::LLVMBuildBr(b, join);

        c::LLVMPositionBuilderAtEnd(b, part_bb);
        let off = self.first_offset(sp);
        c::LLVMBuildCondBr(
            b,
            self.in_shared_block(off, self.few_warp_rounds()),
            priv_bb,
            masked_bb,
        );

        c::LLVMPositionBuilderAtEnd(b, priv_bb);
        let p0 = self.run_base(p, 0);
        let vt = c::LLVMTypeOf(v);
        let old = c::LLVMBuildLoad2(b, vt, p0, n);
        c::LLVMSetAlignment(old, self.elem_align(t));
        // Frozen: the DAG combiner folds a store of `select(m, v, load p)` to `p` back into a
        // masked store.
        let old = c::LLVMBuildFreeze(b, old, n);
        let new = c::LLVMBuildSelect(b, self.mask, v, old, n);
        let st = c::LLVMBuildStore(b, new, p0);
        c::LLVMSetAlignment(st, self.elem_align(t));
        c::LLVMBuildBr(b, join);

        c::LLVMPositionBuilderAtEnd(b, masked_bb);
        self.store_runs_as(v, p, t, false);
        c::LLVMBuildBr(b, join);
        c::LLVMPositionBuilderAtEnd(b, join);
    }

    /// A load of one scalar of type `t` per row (`Access::PerRow`), spread over each row's
    /// lanes: each row's first pointer (of lane pointers `p`) plus `off` bytes when a lane of
    /// the row runs, else the first running row's, so that the loads need no branch: a
    /// block's mask is never empty (its guard), and a row that runs makes that access. The
    /// choice of row depends on the mask alone, so the loads at constant offsets from one
    /// tile row share it (two selects for the 16 `As[ty][k]`, whose offsets fold into the
    /// loads). The rows' running bits are tests on the mask as one integer: a vector of
    /// per-row integers went through the stack (a store of the mask register and a wider
    /// reload, which cannot be forwarded), and a spare `alloca` for idle rows made SROA turn
    /// each load back into a branch on its row (and the tile loop's values into spills).
    unsafe fn load_per_row(&self, p: LLVMValueRef, off: u64, t: LLVMTypeRef) -> LLVMValueRef {
        let b = self.b;
        let n = c"".as_ptr();
        let run = self.run();
        let rows = LANES / run;
        let it = c::LLVMIntTypeInContext(self.cx, LANES);
        let bits = c::LLVMBuildBitCast(b, self.mask, it, n);
        // Each row's pointer as a scalar from its operands' lanes (`lane_of`): extracted
        // from the vector of pointers, the row offset `%tid.y * 64` of `As[ty][k]` was built
        // with vector instructions and moved to a general register (a chain of about 15
        // cycles before each warp's first FMA in matmul).
        let bases: Vec<LLVMValueRef> = (0..rows)
            .map(|r| self.lane_of(p, r * run, LANE_OF_DEPTH))
            .collect();
        let on: Vec<LLVMValueRef> = (0..rows)
            .map(|r| {
                let row_bits = ((1u64 << run) - 1) << (r * run);
                let mine = c::LLVMBuildAnd(b, bits, c::LLVMConstInt(it, row_bits, 0), n);
                let zero = c::LLVMConstNull(it);
                c::LLVMBuildICmp(b, llvm_sys::LLVMIntPredicate::LLVMIntNE, mine, zero, n)
            })
            .collect();
        // The first running row's pointer.
        let mut first = bases[rows as usize - 1];
        for r in (0..rows as usize - 1).rev() {
            first = c::LLVMBuildSelect(b, on[r], bases[r], first, n);
        }
        let vt = c::LLVMVectorType(t, rows);
        let mut g = c::LLVMGetPoison(vt);
        for r in 0..rows as usize {
            let mut q = if r == 0 {
                first
            } else {
                c::LLVMBuildSelect(b, on[r], bases[r], first, n)
            };
            if off != 0 {
                let mut idx = [c::LLVMConstInt(self.i64, off, 0)];
                let i8t = c::LLVMInt8TypeInContext(self.cx);
                q = c::LLVMBuildGEP2(b, i8t, q, idx.as_mut_ptr(), 1, n);
            }
            let v = c::LLVMBuildLoad2(b, t, q, n);
            g = c::LLVMBuildInsertElement(b, g, v, self.c32(r as u64), n);
        }
        let spread: Vec<u32> = (0..LANES).map(|l| l / run).collect();
        self.shuffle(g, None, &spread)
    }

    /// Whether the (element) pointers `p` of a value of type `vt` are consecutive, element
    /// after element, from the first one of each run (checked at run time: the common
    /// `base + lane * size` then costs one vector load or store per run instead of a gather
    /// or scatter).
    unsafe fn consecutive(&self, p: LLVMValueRef, vt: LLVMTypeRef) -> LLVMValueRef {
        let b = self.b;
        let n = c"".as_ptr();
        let count = c::LLVMGetVectorSize(vt);
        let per_run = count / LANES * self.run();
        let size = llvm_sys::target::LLVMABISizeOfType(self.td, c::LLVMGetElementType(vt));
        let v64 = c::LLVMVectorType(self.i64, count);
        let pi = c::LLVMBuildPtrToInt(b, p, v64, n);
        self.consecutive_ints(pi, count, per_run, size)
    }

    /// Whether 64-bit addresses `pi` (`count` of them) step by `size` from the first one of
    /// each run of `per_run` (`consecutive`).
    unsafe fn consecutive_ints(
        &self,
        pi: LLVMValueRef,
        count: u32,
        per_run: u32,
        size: u64,
    ) -> LLVMValueRef {
        let b = self.b;
        let n = c"".as_ptr();
        let firsts: Vec<u32> = (0..count).map(|q| q / per_run * per_run).collect();
        let sp = self.shuffle(pi, None, &firsts);
        let d = c::LLVMBuildSub(b, pi, sp, n);
        let mut want: Vec<LLVMValueRef> = (0..count)
            .map(|q| c::LLVMConstInt(self.i64, u64::from(q % per_run) * size, 0))
            .collect();
        let want = c::LLVMConstVector(want.as_mut_ptr(), count);
        let eq = c::LLVMBuildICmp(b, llvm_sys::LLVMIntPredicate::LLVMIntEQ, d, want, n);
        let it = c::LLVMIntTypeInContext(self.cx, count);
        let bits = c::LLVMBuildBitCast(b, eq, it, n);
        c::LLVMBuildICmp(
            b,
            llvm_sys::LLVMIntPredicate::LLVMIntEQ,
            bits,
            c::LLVMConstAllOnes(it),
            n,
        )
    }

    /// A slot per shared varying term of the function's loads and stores (`varying_term`: the
    /// term of at least two accesses of one size per lane).
    pub(super) unsafe fn term_test_slots(&mut self) {
        // In the order the terms are met: one module, one text.
        let mut terms: Vec<(LLVMValueRef, u32)> = Vec::new();
        for &bb in &self.cfg.blocks {
            for i in ir::instructions(bb) {
                let Some((ptr, et)) = self.tested_access(i) else {
                    continue;
                };
                let Some(size) = self.term_size(et) else {
                    continue;
                };
                if let Some(w) = varying_term(ptr, &self.facts.varying) {
                    match terms.iter_mut().find(|(x, _)| *x == w) {
                        Some((_, k)) => *k += 1,
                        None => terms.push((w, 1)),
                    }
                    // Accesses of two sizes through one term: no shared answer.
                    let seen = *self.term_sizes.entry(w).or_insert(size);
                    if seen != size {
                        self.term_sizes.insert(w, 0);
                    }
                }
            }
        }
        let i8t = c::LLVMInt8TypeInContext(self.cx);
        let shared: Vec<LLVMValueRef> = terms
            .into_iter()
            .filter(|&(w, k)| k >= 2 && self.term_sizes.get(&w).is_some_and(|&z| z > 0))
            .map(|(w, _)| w)
            .collect();
        for w in shared {
            let s = self.alloca(i8t);
            self.term_tests.insert(w, s);
            // On entry after a barrier, a term kept in the frame is there (a store after the
            // barrier that uses it finds it so); otherwise `w` is defined in this call
            // before any use, and its definition tests it (`Warp::set`). Until then
            // "scattered", right for any pointers.
            if self.in_frame(w) {
                let slot = self.slot(w);
                let cur = c::LLVMGetInsertBlock(self.b);
                c::LLVMPositionBuilderAtEnd(self.b, c::LLVMGetInsertBlock(self.allocas));
                let mut wv = c::LLVMBuildLoad2(self.b, self.slot_type(slot), slot, c"".as_ptr());
                if self.narrow_slot(w) {
                    // 32-bit `.shared` offsets, zero-extended as the pointers are made.
                    let v64 = c::LLVMVectorType(self.i64, LANES);
                    wv = c::LLVMBuildZExt(self.b, wv, v64, c"".as_ptr());
                }
                self.test_term(wv, w, s);
                c::LLVMPositionBuilderAtEnd(self.b, cur);
            } else {
                let no = TestState::Scattered as u64;
                c::LLVMBuildStore(self.allocas, c::LLVMConstInt(i8t, no, 0), s);
            }
        }
    }

    /// An `i1` slot per loop-header phi tested where its loop is entered
    /// (`stride::Strides::entry_tested`), "not consecutive" until the first test: the entry
    /// of every call sets it (after a barrier, the region scheme's phis come back from the
    /// frame untested, and their accesses take their run-time tests).
    pub(super) unsafe fn entry_flag_slots(&mut self) {
        // In the order the phis are met: one module, one text.
        for &bb in &self.cfg.blocks {
            for i in ir::instructions(bb) {
                if c::LLVMIsAPHINode(i).is_null() {
                    break;
                }
                if self.facts.strides.entry_step(i).is_some() {
                    let s = self.alloca(self.i1);
                    c::LLVMBuildStore(self.allocas, c::LLVMConstInt(self.i1, 0, 0), s);
                    self.entry_flags.insert(i, s);
                }
            }
        }
    }

    /// Whether the lanes of `v` (a loop-header phi's value on entry, every lane: integers or
    /// host pointers) step by `step` from lane 0's, modulo the width: the phi then does in
    /// every iteration (`Strides::whole`, `Strides::entry_tested`).
    pub(super) unsafe fn entry_test(&mut self, v: LLVMValueRef, step: i64) -> LLVMValueRef {
        let b = self.b;
        let n = c"".as_ptr();
        let v = if self.is_vec(v) { v } else { self.splat(v) };
        let e = c::LLVMGetElementType(c::LLVMTypeOf(v));
        let v = if c::LLVMGetTypeKind(e) == LLVMTypeKind::LLVMPointerTypeKind {
            c::LLVMBuildPtrToInt(b, v, c::LLVMVectorType(self.i64, LANES), n)
        } else {
            v
        };
        let it = c::LLVMGetElementType(c::LLVMTypeOf(v));
        let w = c::LLVMGetIntTypeWidth(it);
        let low = |x: i64| {
            if w >= 64 {
                x as u64
            } else {
                (x as u64) & ((1u64 << w) - 1)
            }
        };
        let first = self.shuffle(v, None, &[0; LANES as usize]);
        let d = c::LLVMBuildSub(b, v, first, n);
        let mut want: Vec<LLVMValueRef> = (0..LANES)
            .map(|q| c::LLVMConstInt(it, low(step.wrapping_mul(i64::from(q))), 0))
            .collect();
        let want = c::LLVMConstVector(want.as_mut_ptr(), LANES);
        let eq = c::LLVMBuildICmp(b, LLVMIntPredicate::LLVMIntEQ, d, want, n);
        c::LLVMBuildICmp(
            b,
            LLVMIntPredicate::LLVMIntEQ,
            self.bits(eq),
            c::LLVMConstAllOnes(self.i32),
            n,
        )
    }

    /// Whether an entry-tested access (`entry_flag`) whose flag is off has lanes that are not
    /// consecutive, so that its other side needs no run-time test of the whole warp's
    /// addresses. So in a kernel without CTA barriers: the access is dominated by its phis'
    /// loop headers, which the warp function's one entry reaches only through their loops'
    /// entries, where the tests run; a failed test means the phis' lanes did not step by
    /// their stride then, and the phis keep their lanes' differences in every iteration
    /// (`Strides::whole`, the latch adds one step to every lane), as the pointer, built from
    /// them by the steps the stride analysis follows, keeps its own: never the consecutive
    /// ones (but where a widening wraps, when the gather is still right). A failed lane-31
    /// test of a checked access (`lane31_test`) rules them out too. (With barriers a region
    /// or a coroutine resumes inside the loop with its flags off, and the test finds the
    /// consecutive warps there.) The other tests stay: two runs per half (`runs_or_gather`,
    /// lanes that took a remainder step and lanes that did not), checked and shared-term
    /// ones. Why: the test and its second vector path were a third of vecadd_f4's code (8
    /// float4 loads and 4 stores in an unrolled grid-stride loop), for a test that failed
    /// whenever it ran: compile CPU ×0.77 (208 -> 160 ms).
    pub(super) fn untested_scattered(&self) -> bool {
        self.regions.is_none() && self.coro.is_none()
    }

    /// For an entry-tested access `i` (`stride::Strides::entry_tested`) of type `t` at host
    /// lane pointers `p`: whether all of its phis' entry tests passed and, for a checked one,
    /// its cast's test (`cast_test`, the same value for every access through that cast) or
    /// else its lane-31 test (`lane31_test`).
    unsafe fn entry_flag(
        &mut self,
        i: LLVMValueRef,
        p: LLVMValueRef,
        t: LLVMTypeRef,
    ) -> Option<LLVMValueRef> {
        let (phis, check) = self.facts.strides.entry_tested(i)?;
        let phis = phis.to_vec();
        let mut ok = match check {
            EntryCheck::Nothing => None,
            EntryCheck::Cast(cast) => Some(self.cast_test(Some(cast), p, t, None)),
            EntryCheck::Lanes => Some(self.lane31_test(p, t, None)),
        };
        for phi in &phis {
            let s = *self.entry_flags.get(phi)?;
            let f = c::LLVMBuildLoad2(self.b, self.i1, s, c"".as_ptr());
            ok = Some(match ok {
                Some(a) => c::LLVMBuildAnd(self.b, a, f, c"".as_ptr()),
                None => f,
            });
        }
        ok
    }

    /// The pointer and type of load or store `i` when it takes the consecutive test of its
    /// lanes' pointers (`load`, `store`: no other path, such as a window, a known stride, a
    /// gather of indices from memory or a global scalar load's halves, comes first).
    unsafe fn tested_access(&self, i: LLVMValueRef) -> Option<(LLVMValueRef, LLVMTypeRef)> {
        let store = !c::LLVMIsAStoreInst(i).is_null();
        if !store && c::LLVMIsALoadInst(i).is_null() || self.is_atomic(i) {
            return None;
        }
        let (ptr, et) = if store {
            (
                c::LLVMGetOperand(i, 1),
                c::LLVMTypeOf(c::LLVMGetOperand(i, 0)),
            )
        } else {
            (c::LLVMGetOperand(i, 0), c::LLVMTypeOf(i))
        };
        let varying = &self.facts.varying;
        if store && self.facts.strides.same_address(i, varying) {
            return None;
        }
        let access = self.facts.strides.access(ptr, et, varying, self.td);
        if matches!(
            access,
            Access::PerRow
                | Access::Window
                | Access::Consecutive
                | Access::Checked
                | Access::Strided
                | Access::StridedChecked
        ) || self.facts.strides.entry_tested(i).is_some()
        {
            return None;
        }
        if !store {
            let global = c::LLVMGetPointerAddressSpace(c::LLVMTypeOf(ptr)) != SHARED_AS;
            if stride::memory_indexed(ptr, varying, MEMORY_INDEXED_DEPTH)
                || global && self.per(et) == 1 && !self.narrow(self.vty(et))
            {
                return None;
            }
        }
        Some((ptr, et))
    }

    /// The bytes per lane of an access of type `t` (a scalar, or a PTX vector whose elements
    /// lie back to back), for `term_test`.
    unsafe fn term_size(&self, t: LLVMTypeRef) -> Option<u64> {
        let size = llvm_sys::target::LLVMABISizeOfType(self.td, t);
        let k = self.per(t);
        let e = if k > 1 { c::LLVMGetElementType(t) } else { t };
        let esize = llvm_sys::target::LLVMABISizeOfType(self.td, e);
        (size > 0 && size == u64::from(k) * esize).then_some(size)
    }

    /// The slot of the shared varying term of an access at `ptr` of type `t`, when its
    /// accesses have `t`'s size (`term_test`).
    unsafe fn shared_term(&self, ptr: LLVMValueRef, t: LLVMTypeRef) -> Option<LLVMValueRef> {
        let size = self.term_size(t)?;
        let w = varying_term(ptr, &self.facts.varying)?;
        (self.term_sizes.get(&w) == Some(&size))
            .then(|| self.term_tests.get(&w).copied())
            .flatten()
    }

    /// Tests the lanes of `wv`, the new value of shared varying term `w`, into its slot `s`:
    /// whether they step by the size of the stored values (`term_sizes`), at the builder's
    /// place.
    pub(super) unsafe fn test_term(&mut self, wv: LLVMValueRef, w: LLVMValueRef, s: LLVMValueRef) {
        let b = self.b;
        let n = c"".as_ptr();
        let i8t = c::LLVMInt8TypeInContext(self.cx);
        let wv = if self.is_vec(wv) { wv } else { self.splat(wv) };
        let v64 = c::LLVMVectorType(self.i64, LANES);
        let wi = if c::LLVMGetTypeKind(c::LLVMGetElementType(c::LLVMTypeOf(wv)))
            == LLVMTypeKind::LLVMPointerTypeKind
        {
            c::LLVMBuildPtrToInt(b, wv, v64, n)
        } else {
            wv
        };
        let size = self.term_sizes.get(&w).copied().unwrap_or(0);
        let ok = self.consecutive_ints(wi, LANES, self.run(), size);
        let yes = c::LLVMConstInt(i8t, TestState::Consecutive as u64, 0);
        let mut no = c::LLVMConstInt(i8t, TestState::Scattered as u64, 0);
        if (1..=2).contains(&size) && self.run() == LANES {
            // Once here rather than at each store that falls back (the fp16 matmul's 28
            // swizzled tile stores share 8 terms).
            let piece = (16 / size) as u32;
            let pieces = self.consecutive_ints(wi, LANES, piece, size);
            let yes = c::LLVMConstInt(i8t, TestState::Pieces as u64, 0);
            no = c::LLVMBuildSelect(b, pieces, yes, no, n);
        }
        c::LLVMBuildStore(b, c::LLVMBuildSelect(b, ok, yes, no, n), s);
    }

    /// Whether shared varying term `w`'s slot `s` says its lanes are 16-byte pieces
    /// (`TestState::Pieces`, `test_term`).
    unsafe fn piece_test(&mut self, s: LLVMValueRef) -> LLVMValueRef {
        self.test_state_is(s, TestState::Pieces)
    }

    /// Whether the lanes of shared varying term `w` (slot `s`) step by the stored values'
    /// size: then so do the pointers `u + w` of every store sharing it, `u` the same in every
    /// lane. Tested where `w` is defined or the function entered (`term_test_slots`): the 128
    /// stores of Triton's matmul epilogue each sit behind their own predicate's guard, where
    /// no test dominates the next, so LLVM kept 128 copies of the 32-lane test (1,688
    /// `vpsubq`); now each reads the one answer.
    unsafe fn term_test(&mut self, s: LLVMValueRef) -> LLVMValueRef {
        self.test_state_is(s, TestState::Consecutive)
    }

    /// Whether a term's test slot `s` holds `state`.
    unsafe fn test_state_is(&mut self, s: LLVMValueRef, state: TestState) -> LLVMValueRef {
        let b = self.b;
        let n = c"".as_ptr();
        let i8t = c::LLVMInt8TypeInContext(self.cx);
        let got = c::LLVMBuildLoad2(b, i8t, s, n);
        let want = c::LLVMConstInt(i8t, state as u64, 0);
        c::LLVMBuildICmp(b, LLVMIntPredicate::LLVMIntEQ, got, want, n)
    }

    /// For a PTX vector `<k x E>` at each lane's pointer: a pointer per element (lane-major)
    /// and the mask for them; the lanes' pointers and mask otherwise.
    unsafe fn element_ptrs(&self, p: LLVMValueRef, t: LLVMTypeRef) -> (LLVMValueRef, LLVMValueRef) {
        let k = self.per(t);
        if k == 1 {
            return (p, self.mask);
        }
        let size = llvm_sys::target::LLVMABISizeOfType(self.td, c::LLVMGetElementType(t));
        let pw = self.widen(p, k);
        let mut offs: Vec<LLVMValueRef> = (0..LANES * k)
            .map(|q| c::LLVMConstInt(self.i64, (q % k) as u64 * size, 0))
            .collect();
        let mut idx = [c::LLVMConstVector(offs.as_mut_ptr(), LANES * k)];
        let g = c::LLVMBuildGEP2(
            self.b,
            c::LLVMInt8TypeInContext(self.cx),
            pw,
            idx.as_mut_ptr(),
            1,
            c"".as_ptr(),
        );
        (g, self.widen(self.mask, k))
    }

    unsafe fn store(&mut self, i: LLVMValueRef) {
        if self.is_atomic(i) {
            self.per_lane(i, false);
            return;
        }
        let ptr = c::LLVMGetOperand(i, 1);
        let et = c::LLVMTypeOf(c::LLVMGetOperand(i, 0));
        if self.facts.strides.same_address(i, &self.facts.varying) {
            let v = self.get(c::LLVMGetOperand(i, 0), true);
            let p = self.get(ptr, true);
            let p = self.host_ptrs(p);
            self.store_last_lane(v, p, c::LLVMGetAlignment(i));
            return;
        }
        let access = self
            .facts
            .strides
            .access(ptr, et, &self.facts.varying, self.td);
        let v = self.get(c::LLVMGetOperand(i, 0), true);
        let p = self.get(ptr, true);
        if access == Access::Window {
            if versioned_generic(i) {
                self.store_offsets(v, p, et);
            } else {
                self.store_shared(ptr, v, p, et, c::LLVMGetVolatile(i) != 0);
            }
            return;
        }
        let sp = p;
        let p = self.host_ptrs(p);
        if matches!(access, Access::Strided | Access::StridedChecked) {
            self.store_strided(i, ptr, v, p, et, access);
            return;
        }
        let b = self.b;
        if access == Access::Consecutive {
            if c::LLVMGetVolatile(i) == 0 && self.private_shared(ptr, et) {
                self.store_shared_runs(v, sp, p, et);
            } else {
                self.store_runs(v, p, et);
            }
            return;
        }
        let entry_join = self.entry_flag(i, p, et).map(|ok| {
            let vec_bb = self.append("st.entry_tested");
            let other_bb = self.append("st.entry_other");
            let join = self.append("st.entry_join");
            super::chain::mark(c::LLVMBuildCondBr(b, ok, vec_bb, other_bb));
            c::LLVMPositionBuilderAtEnd(b, vec_bb);
            self.store_runs(v, p, et);
            c::LLVMBuildBr(b, join);
            c::LLVMPositionBuilderAtEnd(b, other_bb);
            join
        });
        let scattered = entry_join.is_some() && self.untested_scattered();
        self.store_tested(ptr, v, p, et, access, scattered);
        if let Some(join) = entry_join {
            c::LLVMBuildBr(b, join);
            c::LLVMPositionBuilderAtEnd(b, join);
        }
    }

    /// A store of `v` (type `et` per lane) at host lane pointers `p` (source pointer `ptr`)
    /// that are not known to be consecutive: a checked or run-time test of the lanes'
    /// addresses, else a scatter (`store`); without the run-time test when `scattered`
    /// (`load_tested`).
    unsafe fn store_tested(
        &mut self,
        ptr: LLVMValueRef,
        v: LLVMValueRef,
        p: LLVMValueRef,
        et: LLVMTypeRef,
        access: Access,
        scattered: bool,
    ) {
        let b = self.b;
        let checked = (access == Access::Checked).then(|| self.checked_test(ptr, p, et));
        let term = checked
            .is_none()
            .then(|| self.shared_term(ptr, et))
            .flatten();
        let checked = checked.or_else(|| term.map(|s| self.term_test(s)));
        let lanes = p;
        let (p, m) = self.element_ptrs(p, et);
        if checked.is_none() && scattered {
            self.scatter(v, p, m);
            return;
        }
        let contig = checked.unwrap_or_else(|| self.consecutive(p, c::LLVMTypeOf(v)));
        let vec_bb = self.append("st.vector");
        let sc_bb = self.append("st.scatter");
        let join = self.append("st");
        c::LLVMBuildCondBr(b, contig, vec_bb, sc_bb);
        c::LLVMPositionBuilderAtEnd(b, vec_bb);
        self.store_runs(v, lanes, et);
        c::LLVMBuildBr(b, join);
        c::LLVMPositionBuilderAtEnd(b, sc_bb);
        if self.piece_stores(ptr, v) {
            let known = term.map(|s| self.piece_test(s));
            self.pieces_or_scatter(v, p, m, known);
        } else {
            self.scatter(v, p, m);
        }
        c::LLVMBuildBr(b, join);
        c::LLVMPositionBuilderAtEnd(b, join);
    }

    /// Whether a `.shared` store of `v` (one 8- or 16-bit element per lane, 32 lanes in a
    /// run) whose lanes are not consecutive tests for 16-byte pieces before its lane loop
    /// (`pieces_or_scatter`). Shared tiles are swizzled in 16-byte units (Triton's and
    /// CUTLASS's XOR layouts: `(2 * tid) ^ 16`, `^ 144`): each piece of 16 bytes is a run of
    /// lanes, the pieces permuted. Global stores keep the plain fallback: their scattered
    /// lanes are rarely pieces, and each test is code on every such store (compile time).
    unsafe fn piece_stores(&self, ptr: LLVMValueRef, v: LLVMValueRef) -> bool {
        let vt = c::LLVMTypeOf(v);
        c::LLVMGetPointerAddressSpace(c::LLVMTypeOf(ptr)) == SHARED_AS
            && self.run() == LANES
            && c::LLVMGetVectorSize(vt) == LANES
            && self.narrow(vt)
    }

    /// A store of `v` (a narrow element per lane) at host lane pointers `p` under mask `m`:
    /// where every 16-byte piece of lanes (8 lanes of 16 bits, 16 of 8 bits) is consecutive
    /// from its first lane's pointer, one masked store per piece, in lane order; else the
    /// lane loop. The same bytes as the loop: masked-off lanes are not written, and where
    /// pieces overlap the later piece's lanes are stored last, as the loop's later lanes.
    /// `known`: the answer of the store's shared term (`piece_test`), else tested here.
    /// Why: Triton's fp16 matmul stores its A and B tiles to swizzled shared memory, 56 of 64
    /// `st.shared.b16` per warp per K step went lane by lane (the lane loop was ~15% of the
    /// kernel's samples).
    unsafe fn pieces_or_scatter(
        &mut self,
        v: LLVMValueRef,
        p: LLVMValueRef,
        m: LLVMValueRef,
        known: Option<LLVMValueRef>,
    ) {
        let b = self.b;
        let n = c"".as_ptr();
        let vt = c::LLVMTypeOf(v);
        let et = c::LLVMGetElementType(vt);
        let size = llvm_sys::target::LLVMABISizeOfType(self.td, et);
        let piece = (16 / size) as u32;
        let ok = known.unwrap_or_else(|| {
            let v64 = c::LLVMVectorType(self.i64, LANES);
            let pi = c::LLVMBuildPtrToInt(b, p, v64, n);
            self.consecutive_ints(pi, LANES, piece, size)
        });
        let pieces_bb = self.append("st.pieces");
        let lanes_bb = self.append("st.lanes");
        let join = self.append("st.pieces.join");
        c::LLVMBuildCondBr(b, ok, pieces_bb, lanes_bb);
        c::LLVMPositionBuilderAtEnd(b, pieces_bb);
        for r in 0..LANES / piece {
            let p0 = self.run_base(p, r * piece);
            let part = self.slice(v, r * piece, piece);
            let mut tys = [c::LLVMTypeOf(part), self.ptr];
            let mut args = [part, p0, self.slice(m, r * piece, piece)];
            self.call_intrinsic("llvm.masked.store", &mut tys, &mut args);
        }
        c::LLVMBuildBr(b, join);
        c::LLVMPositionBuilderAtEnd(b, lanes_bb);
        self.scatter(v, p, m);
        c::LLVMBuildBr(b, join);
        c::LLVMPositionBuilderAtEnd(b, join);
    }

    /// A scatter of `v` to element pointers `p` under mask `m` (`element_ptrs`).
    unsafe fn scatter(&mut self, v: LLVMValueRef, p: LLVMValueRef, m: LLVMValueRef) {
        if self.narrow(c::LLVMTypeOf(v)) {
            self.scatter_loop(v, p, m);
        } else {
            let mut tys = [c::LLVMTypeOf(v), c::LLVMTypeOf(p)];
            let mut args = [v, p, m];
            self.call_intrinsic("llvm.masked.scatter", &mut tys, &mut args);
        }
    }

    /// A store of `v` (a scalar per lane) whose lanes' pointers `p` are all one
    /// address (`Strides::same_address`): the highest running lane's value, what a scatter
    /// leaves there, by one masked vector store of that lane (4-byte values) or one scalar
    /// store (a scatter of 32 lanes to one place was four
    /// 8-lane scatters and a run-time test of the addresses: 9% of a block scan's time, where
    /// `if (lane == 31) warp_sum[warp] = v` stores each warp's total).
    unsafe fn store_last_lane(&mut self, v: LLVMValueRef, p: LLVMValueRef, align: u32) {
        let b = self.b;
        let n = c"".as_ptr();
        let bits = self.bits(self.mask);
        let st_bb = self.append("st.last");
        let join = self.append("st");
        c::LLVMBuildCondBr(b, self.any(self.mask), st_bb, join);
        c::LLVMPositionBuilderAtEnd(b, st_bb);
        // `bits | 1` has the same leading zeros (`bits` is not 0 here) and lets known bits
        // fold the lane: where the mask can only be lane 0 (`if (lane == 0) p[w] = v`), the
        // store becomes lane 0's, and LLVM drops the lanes of `v` no one reads (half a
        // warp's shuffle tree in a reduction).
        let mut tys = [self.i32];
        let bits1 = c::LLVMBuildOr(b, bits, self.c32(1), n);
        let mut args = [bits1, c::LLVMConstInt(self.i1, 0, 0)];
        let lz = self.call_intrinsic("llvm.ctlz", &mut tys, &mut args);
        let lane = c::LLVMBuildSub(b, self.c32(31), lz, n);
        // Every lane's pointer is the one address: lane 0's, rebuilt as a scalar (an extract
        // at a run-time lane spilled the 32 pointers to the stack and read one back).
        let q = self.lane_of(p, 0, LANE_OF_DEPTH);
        let et = c::LLVMGetElementType(c::LLVMTypeOf(v));
        let size = llvm_sys::target::LLVMABISizeOfType(self.td, et);
        if size == 4 && c::LLVMGetVectorSize(c::LLVMTypeOf(v)) == LANES {
            // A masked vector store of that one lane, placed so that the lane lands on `q`:
            // no lane moves through registers before the store (the OR-reduction of
            // `lane_value` was a 12-instruction chain after the warp's shuffle tree).
            let off = c::LLVMBuildMul(b, lane, self.c32(size), n);
            let off = c::LLVMBuildNeg(b, c::LLVMBuildZExt(b, off, self.i64, n), n);
            let mut idx = [off];
            let i8t = c::LLVMInt8TypeInContext(self.cx);
            let base = c::LLVMBuildGEP2(b, i8t, q, idx.as_mut_ptr(), 1, n);
            let one = c::LLVMBuildShl(b, self.c32(1), lane, n);
            let onehot = c::LLVMBuildBitCast(b, one, self.mask_ty(), n);
            let mut tys = [c::LLVMTypeOf(v), self.ptr];
            let mut args = [v, base, onehot];
            self.call_intrinsic("llvm.masked.store", &mut tys, &mut args);
        } else {
            let x = self.lane_value(v, lane);
            let s = c::LLVMBuildStore(b, x, q);
            if align > 0 {
                c::LLVMSetAlignment(s, align);
            }
        }
        c::LLVMBuildBr(b, join);
        c::LLVMPositionBuilderAtEnd(b, join);
    }

    /// Lane `lane` (run-time) of `v`, a scalar per lane: for integer and floating-point
    /// lanes the OR of the lanes' bits with all but that lane's cleared, in registers. An
    /// `extractelement` at a run-time index stored the vector to the stack and loaded the
    /// lane back, and the load waited on the wide stores: 27% of the warp-shuffle
    /// reduction's samples were the one store of each warp's sum.
    unsafe fn lane_value(&self, v: LLVMValueRef, lane: LLVMValueRef) -> LLVMValueRef {
        let b = self.b;
        let n = c"".as_ptr();
        let vt = c::LLVMTypeOf(v);
        let et = c::LLVMGetElementType(vt);
        let bits = match c::LLVMGetTypeKind(et) {
            LLVMTypeKind::LLVMIntegerTypeKind => c::LLVMGetIntTypeWidth(et),
            LLVMTypeKind::LLVMFloatTypeKind => 32,
            LLVMTypeKind::LLVMDoubleTypeKind => 64,
            _ => 0,
        };
        if c::LLVMGetVectorSize(vt) != LANES || !matches!(bits, 8 | 16 | 32 | 64) {
            return c::LLVMBuildExtractElement(b, v, lane, n);
        }
        let it = c::LLVMIntTypeInContext(self.cx, bits);
        let ivt = c::LLVMVectorType(it, LANES);
        let iv = c::LLVMBuildBitCast(b, v, ivt, n);
        let eq = llvm_sys::LLVMIntPredicate::LLVMIntEQ;
        let one = c::LLVMBuildICmp(b, eq, self.iota, self.splat(lane), n);
        let kept = c::LLVMBuildSelect(b, one, iv, c::LLVMConstNull(ivt), n);
        let mut tys = [ivt];
        let mut args = [kept];
        let x = self.call_intrinsic("llvm.vector.reduce.or", &mut tys, &mut args);
        c::LLVMBuildBitCast(b, x, et, n)
    }

    /// The lanes' offsets into the CTA's shared block from their `.shared` pointers `p`.
    unsafe fn offsets(&self, p: LLVMValueRef) -> LLVMValueRef {
        let v32 = c::LLVMVectorType(self.i32, LANES);
        c::LLVMBuildPtrToInt(self.b, p, v32, c"".as_ptr())
    }

    /// Host pointers of shared offsets `off` (`<32 x i32>`): 32-bit indices from the block,
    /// which a gather or scatter takes as they are (16 lanes an instruction on AVX-512, where
    /// 64-bit pointers take 8).
    unsafe fn shared_ptrs(&self, off: LLVMValueRef) -> LLVMValueRef {
        let mut idx = [off];
        c::LLVMBuildGEP2(
            self.b,
            c::LLVMInt8TypeInContext(self.cx),
            self.shared_base(),
            idx.as_mut_ptr(),
            1,
            c"".as_ptr(),
        )
    }

    /// A constant `<32 x i32>` of `f(lane)`.
    unsafe fn lanes_const(&self, f: impl Fn(u32) -> u64) -> LLVMValueRef {
        let mut e: Vec<LLVMValueRef> = (0..LANES).map(|l| self.c32(f(l))).collect();
        c::LLVMConstVector(e.as_mut_ptr(), LANES)
    }

    /// Whether shared offsets `off` of values of `size` bytes step by `size` from the first
    /// lane of each run, in all 32 lanes (as `consecutive`, on 32-bit offsets).
    unsafe fn consecutive_offsets(&self, off: LLVMValueRef, size: u64) -> LLVMValueRef {
        let b = self.b;
        let n = c"".as_ptr();
        let run = self.run();
        let firsts: Vec<u32> = (0..LANES).map(|l| l / run * run).collect();
        let d = c::LLVMBuildSub(b, off, self.shuffle(off, None, &firsts), n);
        let want = self.lanes_const(|l| u64::from(l % run) * size);
        let eq = c::LLVMBuildICmp(b, llvm_sys::LLVMIntPredicate::LLVMIntEQ, d, want, n);
        let it = c::LLVMIntTypeInContext(self.cx, LANES);
        let bits = c::LLVMBuildBitCast(b, eq, it, n);
        let all = c::LLVMConstAllOnes(it);
        c::LLVMBuildICmp(b, llvm_sys::LLVMIntPredicate::LLVMIntEQ, bits, all, n)
    }

    /// A vector reduction `llvm.vector.reduce.<op>` of the running lanes of `v` (`<32 x i32>`),
    /// the others taken as `idle`.
    unsafe fn reduce_running(&self, op: &str, v: LLVMValueRef, idle: LLVMValueRef) -> LLVMValueRef {
        let b = self.b;
        let on = c::LLVMBuildSelect(b, self.mask, v, idle, c"".as_ptr());
        let mut tys = [c::LLVMTypeOf(v)];
        let mut args = [on];
        self.call_intrinsic(&format!("llvm.vector.reduce.{op}"), &mut tys, &mut args)
    }

    /// A `.shared` load of a 32-bit value per lane whose addresses are unknown
    /// (`Access::Window`): by the lanes' offsets, one vector load per run when they are
    /// consecutive; else, when the running lanes' offsets are multiples of 4 from the lowest
    /// one and at most 63 elements above it (a bitonic sort's partners `t ^ j` for `j < 32`,
    /// a stride of 2; when every lane runs and the offsets increase in lane order,
    /// `increasing_window`, lane 0's and lane 31's offsets are those bounds without the two
    /// reductions: a bitonic sort's pairs `2t - (t & (j - 1))`), the window's two vectors
    /// (masked to the bytes up to the highest offset, so nothing outside the lanes' range is
    /// read) and `vpermi2d` picking each lane's element; else a gather with 32-bit offsets.
    /// `ptr` is the source pointer: its block test is kept for the stores at it that follow
    /// (`Warp::window_tests`).
    unsafe fn load_window(
        &mut self,
        ptr: LLVMValueRef,
        p: LLVMValueRef,
        t: LLVMTypeRef,
    ) -> LLVMValueRef {
        let b = self.b;
        let n = c"".as_ptr();
        let v32 = c::LLVMVectorType(self.i32, LANES);
        let vt = self.vty(t);
        let off = self.offsets(p);
        if let Some(pos) = lanetab::Table::of(off, &self.aligned_bases).and_then(|x| x.block(4)) {
            return self.load_table(off, &pos, vt);
        }
        let contig = self.consecutive_offsets(off, 4);
        let vec_bb = self.append("ld.vector");
        let test_bb = self.append("ld.window.test");
        let win_bb = self.append("ld.window");
        let gat_bb = self.append("ld.gather");
        let join = self.append("ld");
        let fast_bb = self.append("ld.window.fast");
        // The test and the bounds see one frozen vector (two freezes may differ).
        let frozen = c::LLVMBuildFreeze(b, off, n);
        let lo_fast = c::LLVMBuildExtractElement(b, frozen, self.c32(0), n);
        // With block stores in the function (`store_block`), every lane's offset in the
        // 256-byte-aligned block of lane 0's is read from that block (below), whose bytes the
        // stores wrote: a test of the vector, no order needed. Built before the branch, so
        // that it dominates the stores that follow at the same offsets (`store_shared`).
        let blocks = self.facts.strides.counts[stride::WINDOW_STORES] > 0;
        let in_block = blocks.then(|| self.in_block(frozen, lo_fast));
        if let Some(in_block) = in_block {
            self.window_tests.insert(ptr, (frozen, in_block));
        }
        c::LLVMBuildCondBr(b, contig, vec_bb, fast_bb);

        c::LLVMPositionBuilderAtEnd(b, vec_bb);
        let lv = self.load_runs(self.shared_ptrs(off), t, false);
        let vec_bb = c::LLVMGetInsertBlock(b);
        c::LLVMBuildBr(b, join);

        // Every lane runs and the offsets increase in lane order: lane 0's is the lowest and
        // lane 31's the highest, the facts the reductions below find (scalar extractions
        // instead of two reductions of 32 lanes, on the path to the window's loads).
        c::LLVMPositionBuilderAtEnd(b, fast_bb);
        let blk_bb = if let Some(in_block) = in_block {
            let blk_bb = self.append("ld.window.block");
            let inc_bb = self.append("ld.window.increasing");
            let inside = c::LLVMBuildAnd(b, self.all_running(), in_block, n);
            c::LLVMBuildCondBr(b, inside, blk_bb, inc_bb);
            c::LLVMPositionBuilderAtEnd(b, inc_bb);
            Some(blk_bb)
        } else {
            None
        };
        let ok = c::LLVMBuildAnd(b, self.all_running(), self.increasing_window(frozen), n);
        let last = c::LLVMBuildExtractElement(b, frozen, self.c32(u64::from(LANES - 1)), n);
        let span_fast = c::LLVMBuildSub(b, last, lo_fast, n);
        let sel_bb = c::LLVMGetInsertBlock(b);
        c::LLVMBuildCondBr(b, ok, win_bb, test_bb);

        c::LLVMPositionBuilderAtEnd(b, test_bb);
        let zero = c::LLVMConstNull(v32);
        let lo = self.reduce_running("umin", off, c::LLVMConstAllOnes(v32));
        let hi = self.reduce_running("umax", off, zero);
        let span = c::LLVMBuildSub(b, hi, lo, n);
        let rel = c::LLVMBuildSub(b, off, self.splat(lo), n);
        // A running lane off the window's elements (a test of the vector, not a reduction).
        let odd = c::LLVMBuildAnd(b, rel, self.splat(self.c32(3)), n);
        let off_grid = c::LLVMBuildICmp(b, llvm_sys::LLVMIntPredicate::LLVMIntNE, odd, zero, n);
        let off_grid = c::LLVMBuildAnd(b, off_grid, self.mask, n);
        let it = c::LLVMIntTypeInContext(self.cx, LANES);
        let off_grid = c::LLVMBuildBitCast(b, off_grid, it, n);
        let whole = c::LLVMBuildICmp(
            b,
            llvm_sys::LLVMIntPredicate::LLVMIntEQ,
            off_grid,
            c::LLVMConstNull(it),
            n,
        );
        let near = c::LLVMBuildICmp(
            b,
            llvm_sys::LLVMIntPredicate::LLVMIntULT,
            span,
            self.c32(256),
            n,
        );
        let ok = c::LLVMBuildAnd(b, near, whole, n);
        c::LLVMBuildCondBr(b, ok, win_bb, gat_bb);

        let test_end = c::LLVMGetInsertBlock(b);
        c::LLVMPositionBuilderAtEnd(b, win_bb);
        let (lo_test, span_test) = (lo, span);
        let mut from = [sel_bb, test_end];
        let lo = c::LLVMBuildPhi(b, self.i32, n);
        c::LLVMAddIncoming(lo, [lo_fast, lo_test].as_mut_ptr(), from.as_mut_ptr(), 2);
        let span = c::LLVMBuildPhi(b, self.i32, n);
        c::LLVMAddIncoming(
            span,
            [span_fast, span_test].as_mut_ptr(),
            from.as_mut_ptr(),
            2,
        );
        let rel = c::LLVMBuildSub(b, off, self.splat(lo), n);
        let i8t = c::LLVMInt8TypeInContext(self.cx);
        let mut at = [c::LLVMBuildZExt(b, lo, self.i64, n)];
        let w0p = c::LLVMBuildGEP2(b, i8t, self.shared_base(), at.as_mut_ptr(), 1, n);
        let mut half = [c::LLVMConstInt(self.i64, 128, 0)];
        let w1p = c::LLVMBuildGEP2(b, i8t, w0p, half.as_mut_ptr(), 1, n);
        let spans = self.splat(span);
        let window = |from: u64, wp: LLVMValueRef| {
            let at = self.lanes_const(|l| from + 4 * u64::from(l));
            let m = c::LLVMBuildICmp(b, llvm_sys::LLVMIntPredicate::LLVMIntULE, at, spans, n);
            let mut tys = [v32, self.ptr];
            let mut args = [wp, m, zero];
            self.call_intrinsic("llvm.masked.load", &mut tys, &mut args)
        };
        let w0 = window(0, w0p);
        let w1 = window(128, w1p);
        let idx = c::LLVMBuildLShr(b, rel, self.splat(self.c32(2)), n);
        let wv = c::LLVMBuildBitCast(b, self.pick_window(w0, w1, idx), vt, n);
        c::LLVMBuildBr(b, join);

        // The 64 elements of the 256-byte-aligned block that holds every lane's offset, by
        // two plain vector loads: the block's stores (`store_block`) write it whole at the
        // same addresses, and a load of exactly the bytes a store wrote is forwarded from it
        // (the masked loads from lane 0's offset above waited for the stores to reach the
        // cache). The block holds lane 0's offset, which is inside the shared block, and the
        // shared block is whole 256-byte blocks (`runtime::shared`): it is all mapped.
        let bv = if let Some(blk_bb) = blk_bb {
            c::LLVMPositionBuilderAtEnd(b, blk_bb);
            let (at, rel) = self.block_of(lo_fast, frozen);
            let whole = |from: u64| {
                let mut k = [c::LLVMConstInt(self.i64, from, 0)];
                let q = c::LLVMBuildGEP2(b, i8t, at, k.as_mut_ptr(), 1, n);
                let l = c::LLVMBuildLoad2(b, v32, q, n);
                c::LLVMSetAlignment(l, 64);
                l
            };
            let (b0, b1) = (whole(0), whole(128));
            let idx = c::LLVMBuildLShr(b, rel, self.splat(self.c32(2)), n);
            let bv = c::LLVMBuildBitCast(b, self.pick_window(b0, b1, idx), vt, n);
            c::LLVMBuildBr(b, join);
            Some((bv, blk_bb))
        } else {
            None
        };

        c::LLVMPositionBuilderAtEnd(b, gat_bb);
        let mut tys = [vt, c::LLVMVectorType(self.ptr, LANES)];
        let mut args = [self.shared_ptrs(off), self.mask, c::LLVMGetPoison(vt)];
        let gv = self.call_intrinsic("llvm.masked.gather", &mut tys, &mut args);
        c::LLVMBuildBr(b, join);

        c::LLVMPositionBuilderAtEnd(b, join);
        let phi = c::LLVMBuildPhi(b, vt, n);
        let mut vals = vec![lv, wv, gv];
        let mut bbs = vec![vec_bb, win_bb, gat_bb];
        if let Some((bv, blk_bb)) = bv {
            vals.push(bv);
            bbs.push(blk_bb);
        }
        c::LLVMAddIncoming(phi, vals.as_mut_ptr(), bbs.as_mut_ptr(), vals.len() as u32);
        phi
    }

    /// A window load in the original body of a loop versioned on its distance
    /// (`version::GENERIC`): the 32-bit offsets' consecutive test, a vector load, else a
    /// gather; none of the window's code for in-warp permutations, which run in the copies.
    unsafe fn load_offsets(&mut self, p: LLVMValueRef, t: LLVMTypeRef) -> LLVMValueRef {
        let b = self.b;
        let n = c"".as_ptr();
        let vt = self.vty(t);
        let off = self.offsets(p);
        let contig = self.consecutive_offsets(off, 4);
        let vec_bb = self.append("ld.vector");
        let gat_bb = self.append("ld.gather");
        let join = self.append("ld");
        c::LLVMBuildCondBr(b, contig, vec_bb, gat_bb);
        c::LLVMPositionBuilderAtEnd(b, vec_bb);
        let lv = self.load_runs(self.shared_ptrs(off), t, false);
        let vec_bb = c::LLVMGetInsertBlock(b);
        c::LLVMBuildBr(b, join);
        c::LLVMPositionBuilderAtEnd(b, gat_bb);
        let mut tys = [vt, c::LLVMVectorType(self.ptr, LANES)];
        let mut args = [self.shared_ptrs(off), self.mask, c::LLVMGetPoison(vt)];
        let gv = self.call_intrinsic("llvm.masked.gather", &mut tys, &mut args);
        let gat_bb = c::LLVMGetInsertBlock(b);
        c::LLVMBuildBr(b, join);
        c::LLVMPositionBuilderAtEnd(b, join);
        ir::phi(b, vt, n, &[(lv, vec_bb), (gv, gat_bb)])
    }

    /// A window store in the original body of a versioned loop (`load_offsets`): the
    /// consecutive test, a vector store, else a scatter.
    unsafe fn store_offsets(&mut self, v: LLVMValueRef, p: LLVMValueRef, t: LLVMTypeRef) {
        let b = self.b;
        let off = self.offsets(p);
        let contig = self.consecutive_offsets(off, 4);
        let vec_bb = self.append("st.vector");
        let sc_bb = self.append("st.scatter");
        let join = self.append("st");
        c::LLVMBuildCondBr(b, contig, vec_bb, sc_bb);
        c::LLVMPositionBuilderAtEnd(b, vec_bb);
        self.store_runs(v, self.shared_ptrs(off), t);
        c::LLVMBuildBr(b, join);
        c::LLVMPositionBuilderAtEnd(b, sc_bb);
        let mut tys = [c::LLVMTypeOf(v), c::LLVMVectorType(self.ptr, LANES)];
        let mut args = [v, self.shared_ptrs(off), self.mask];
        self.call_intrinsic("llvm.masked.scatter", &mut tys, &mut args);
        c::LLVMBuildBr(b, join);
        c::LLVMPositionBuilderAtEnd(b, join);
    }

    /// The host pointer of the 256-byte-aligned `.shared` block that holds lane 0's offset of
    /// `off`, whose lanes are a table in that block (`lanetab::Table::block`). With a lane
    /// running, its offset, which the kernel accesses, is in the block, so the whole block is
    /// mapped (the CTA's block starts at a multiple of 256 and ends at a page boundary,
    /// `runtime::shared`). A warp with no lane running may hold any offsets: block 0 then,
    /// which its masked stores do not touch.
    unsafe fn table_block(&self, off: LLVMValueRef) -> LLVMValueRef {
        let b = self.b;
        let n = c"".as_ptr();
        let first = c::LLVMBuildExtractElement(b, c::LLVMBuildFreeze(b, off, n), self.c32(0), n);
        let start = c::LLVMBuildAnd(b, first, self.c32(!255u32 as u64), n);
        let start = c::LLVMBuildSelect(b, self.any(self.mask), start, self.c32(0), n);
        let mut k = [c::LLVMBuildZExt(b, start, self.i64, n)];
        let i8t = c::LLVMInt8TypeInContext(self.cx);
        c::LLVMBuildGEP2(b, i8t, self.shared_base(), k.as_mut_ptr(), 1, n)
    }

    /// A `.shared` load of 32-bit values at offsets `off` that are a table of constant
    /// positions `pos` in one 256-byte block (`lanetab`: a partner at a constant distance,
    /// `t ^ 4`, `2t - (t & 15)`): the block's halves that hold a lane's element by plain
    /// vector loads (forwarded from the stores that wrote them whole), and one constant
    /// permutation; no run-time test of the offsets.
    unsafe fn load_table(
        &self,
        off: LLVMValueRef,
        pos: &[u32; LANES as usize],
        vt: LLVMTypeRef,
    ) -> LLVMValueRef {
        let b = self.b;
        let n = c"".as_ptr();
        let v32 = c::LLVMVectorType(self.i32, LANES);
        // No lane running: no load (the block of a kernel with no shared bytes is not mapped).
        let here = c::LLVMGetInsertBlock(b);
        let go = self.append("ld.table");
        let join = self.append("ld.table.join");
        c::LLVMBuildCondBr(b, self.any(self.mask), go, join);
        c::LLVMPositionBuilderAtEnd(b, go);
        let at = self.table_block(off);
        let i8t = c::LLVMInt8TypeInContext(self.cx);
        let half = |h: u32| {
            if !pos.iter().any(|&p| p / LANES == h) {
                return c::LLVMGetPoison(v32);
            }
            let mut k = [c::LLVMConstInt(self.i64, 128 * u64::from(h), 0)];
            let q = c::LLVMBuildGEP2(b, i8t, at, k.as_mut_ptr(), 1, n);
            let l = c::LLVMBuildLoad2(b, v32, q, n);
            c::LLVMSetAlignment(l, 64);
            l
        };
        let (w0, w1) = (half(0), half(1));
        let v = c::LLVMBuildBitCast(b, self.shuffle(w0, Some(w1), pos), vt, n);
        let go = c::LLVMGetInsertBlock(b);
        c::LLVMBuildBr(b, join);
        c::LLVMPositionBuilderAtEnd(b, join);
        ir::phi(b, vt, n, &[(v, go), (c::LLVMGetPoison(vt), here)])
    }

    /// A `.shared` store of 32-bit values `v` at offsets `off` that are a table in one
    /// 256-byte block whose 64 elements lanes `inv` own (each element at most one lane's):
    /// per half of the block a lane holds an element of, the lanes' values and execution
    /// mask moved to their elements by constant permutations and one masked store; no
    /// run-time test of the offsets.
    unsafe fn store_table(
        &self,
        v: LLVMValueRef,
        off: LLVMValueRef,
        inv: &[Option<u32>; 2 * LANES as usize],
    ) {
        let b = self.b;
        let n = c"".as_ptr();
        let at = self.table_block(off);
        let i8t = c::LLVMInt8TypeInContext(self.cx);
        let none = c::LLVMConstNull(c::LLVMTypeOf(self.mask));
        for h in 0..2usize {
            let part = &inv[h * LANES as usize..(h + 1) * LANES as usize];
            if part.iter().all(Option::is_none) {
                continue;
            }
            let vals: Vec<u32> = part.iter().map(|o| o.unwrap_or(0)).collect();
            let bits: Vec<u32> = part.iter().map(|o| o.unwrap_or(LANES)).collect();
            let e = self.shuffle(v, None, &vals);
            let m = self.shuffle(self.mask, Some(none), &bits);
            let mut k = [c::LLVMConstInt(self.i64, 128 * h as u64, 0)];
            let q = c::LLVMBuildGEP2(b, i8t, at, k.as_mut_ptr(), 1, n);
            let mut tys = [c::LLVMTypeOf(e), self.ptr];
            let mut args = [e, q, m];
            let st = self.call_intrinsic("llvm.masked.store", &mut tys, &mut args);
            super::blend::mark(st, h as u32);
        }
    }

    /// Lane `l`'s element of the 64 in `w0` (the first 32) and `w1` (`<32 x i32>` each),
    /// `idx` (`0..64`) its position: two `vpermi2d` per 16 lanes and a select.
    unsafe fn pick_window(
        &self,
        w0: LLVMValueRef,
        w1: LLVMValueRef,
        idx: LLVMValueRef,
    ) -> LLVMValueRef {
        let b = self.b;
        let n = c"".as_ptr();
        let (f, ft) = self.vpermi2d();
        let v16 = c::LLVMVectorType(self.i32, 16);
        let upper = c::LLVMConstVector([self.c32(32); 16].as_mut_ptr(), 16);
        let parts: Vec<LLVMValueRef> = (0..2)
            .map(|h| {
                let ih = self.slice(idx, 16 * h, 16);
                let pick = |w: LLVMValueRef| {
                    let mut args = [self.slice(w, 0, 16), ih, self.slice(w, 16, 16)];
                    c::LLVMBuildCall2(b, ft, f, args.as_mut_ptr(), 3, n)
                };
                let (a, z) = (pick(w0), pick(w1));
                let hi = c::LLVMBuildAnd(b, ih, upper, n);
                let sel = c::LLVMBuildICmp(
                    b,
                    llvm_sys::LLVMIntPredicate::LLVMIntNE,
                    hi,
                    c::LLVMConstNull(v16),
                    n,
                );
                c::LLVMBuildSelect(b, sel, z, a, n)
            })
            .collect();
        self.concat(parts)
    }

    /// `vpermi2d` (16 lanes of 32 bits, indices into two vectors): the function and its type.
    unsafe fn vpermi2d(&self) -> (LLVMValueRef, LLVMTypeRef) {
        let name = "llvm.x86.avx512.vpermi2var.d.512";
        let id = c::LLVMLookupIntrinsicID(name.as_ptr() as *const _, name.len());
        let f = c::LLVMGetIntrinsicDeclaration(self.m, id, std::ptr::null_mut(), 0);
        (f, c::LLVMGlobalGetValueType(f))
    }

    /// Whether all 32 lanes' shared offsets `off` are multiples of 4 in the 256-byte-aligned
    /// block of `first` (lane 0's).
    unsafe fn in_block(&self, off: LLVMValueRef, first: LLVMValueRef) -> LLVMValueRef {
        let b = self.b;
        let n = c"".as_ptr();
        use llvm_sys::LLVMIntPredicate::LLVMIntEQ;
        let start = c::LLVMBuildAnd(b, first, self.c32(!255u32 as u64), n);
        let x = c::LLVMBuildXor(b, off, self.splat(start), n);
        let x = c::LLVMBuildAnd(b, x, self.splat(self.c32(!0xfcu32 as u64)), n);
        let eq = c::LLVMBuildICmp(b, LLVMIntEQ, x, c::LLVMConstNull(c::LLVMTypeOf(x)), n);
        let it = c::LLVMIntTypeInContext(self.cx, LANES);
        let eq = c::LLVMBuildBitCast(b, eq, it, n);
        c::LLVMBuildICmp(b, LLVMIntEQ, eq, c::LLVMConstAllOnes(it), n)
    }

    /// Whether the 32 lanes' offsets `off` (running or not) increase strictly in lane order.
    unsafe fn increasing(&self, off: LLVMValueRef) -> LLVMValueRef {
        let b = self.b;
        let n = c"".as_ptr();
        use llvm_sys::LLVMIntPredicate::{LLVMIntEQ, LLVMIntUGE};
        // Lane 31's successor is the largest offset, which no offset of a block is.
        let idx: Vec<u32> = (1..=LANES).collect();
        let top = self.splat(self.c32(u64::from(u32::MAX)));
        let next = self.shuffle(off, Some(top), &idx);
        let down = self.bits(c::LLVMBuildICmp(b, LLVMIntUGE, off, next, n));
        c::LLVMBuildICmp(b, LLVMIntEQ, down, self.c32(0), n)
    }

    /// The 256-byte-aligned block holding shared offset `lo`: its host pointer, and the
    /// lanes' offsets `off` from it.
    unsafe fn block_of(&self, lo: LLVMValueRef, off: LLVMValueRef) -> (LLVMValueRef, LLVMValueRef) {
        let b = self.b;
        let n = c"".as_ptr();
        let start = c::LLVMBuildAnd(b, lo, self.c32(!255u32 as u64), n);
        let mut k = [c::LLVMBuildZExt(b, start, self.i64, n)];
        let i8t = c::LLVMInt8TypeInContext(self.cx);
        let at = c::LLVMBuildGEP2(b, i8t, self.shared_base(), k.as_mut_ptr(), 1, n);
        (at, c::LLVMBuildSub(b, off, self.splat(start), n))
    }

    /// Whether the 32 lanes' shared offsets `off` (running or not) increase strictly in lane
    /// order, each by 4 to 252 bytes, and lane 31's is at most 252 bytes above lane 0's: the
    /// lanes then hold 32 distinct elements of the 64 from lane 0's, in lane order (a test of
    /// neighbouring lanes, about ten vector instructions, where the window test's minimum and
    /// maximum are two reductions of 32 lanes).
    unsafe fn increasing_window(&self, off: LLVMValueRef) -> LLVMValueRef {
        let b = self.b;
        let n = c"".as_ptr();
        use llvm_sys::LLVMIntPredicate::{LLVMIntEQ, LLVMIntULE, LLVMIntULT};
        // A lane of another instruction's mask may hold an undefined offset: the test must
        // be false then, not poison.
        let off = c::LLVMBuildFreeze(b, off, n);
        let four = self.splat(self.c32(4));
        // Lane l's successor's offset; lane 31's own plus 4 (a step that passes).
        let idx: Vec<u32> = (1..LANES).chain([2 * LANES - 1]).collect();
        let next = self.shuffle(off, Some(c::LLVMBuildAdd(b, off, four, n)), &idx);
        let d = c::LLVMBuildSub(b, next, off, n);
        let small = c::LLVMBuildICmp(
            b,
            LLVMIntULE,
            c::LLVMBuildSub(b, d, four, n),
            self.splat(self.c32(248)),
            n,
        );
        let odd = c::LLVMBuildAnd(b, d, self.splat(self.c32(3)), n);
        let grid = c::LLVMBuildICmp(b, LLVMIntEQ, odd, c::LLVMConstNull(c::LLVMTypeOf(d)), n);
        let steps = c::LLVMBuildAnd(b, small, grid, n);
        let it = c::LLVMIntTypeInContext(self.cx, LANES);
        let steps = c::LLVMBuildBitCast(b, steps, it, n);
        let steps = c::LLVMBuildICmp(b, LLVMIntEQ, steps, c::LLVMConstAllOnes(it), n);
        // Steps of at most 252 over 31 lanes cannot wrap 32 bits: this is the true span.
        let first = c::LLVMBuildExtractElement(b, off, self.c32(0), n);
        let last = c::LLVMBuildExtractElement(b, off, self.c32(u64::from(LANES - 1)), n);
        let span = c::LLVMBuildSub(b, last, first, n);
        let near = c::LLVMBuildICmp(b, LLVMIntULT, span, self.c32(256), n);
        c::LLVMBuildAnd(b, steps, near, n)
    }

    /// A `.shared` store of a 32-bit value per lane whose addresses are unknown
    /// (`Access::Window`'s stores): one vector store per run when the lanes' offsets are
    /// consecutive; else, for a non-volatile store with a lane running on a host with BMI2
    /// (`Strides::window_stores`), when all 32 lanes' offsets increase strictly in lane order and lie in one 256-byte-aligned block (a
    /// bitonic sort's pairs `2t - (t & (j - 1))` and that plus `j`, `j < 32`), the block
    /// rewritten whole (`store_block`); else a scatter with 32-bit offsets. Before all that, a
    /// store at an earlier pair store's offsets plus `4 j` in the same block stores the upper
    /// side of that store's pairs (`pair_step`), with one scalar test.
    ///
    /// Why: two scatters per store were a third of a bitonic sort's time on Zen 4, and the
    /// next stage's window loads waited for them to reach the cache (a load is forwarded
    /// only from a store of the same bytes). Masked stores of the lanes' elements alone
    /// were slower than the scatters (tried twice): they are not forwarded either.
    unsafe fn store_shared(
        &mut self,
        ptr: LLVMValueRef,
        v: LLVMValueRef,
        p: LLVMValueRef,
        t: LLVMTypeRef,
        volatile: bool,
    ) {
        let b = self.b;
        let n = c"".as_ptr();
        if !volatile {
            let off = self.offsets(p);
            let table = lanetab::Table::of(off, &self.aligned_bases).and_then(|x| x.block(4));
            if let Some(inv) = table.as_ref().and_then(distinct_owners) {
                self.store_table(v, off, &inv);
                return;
            }
        }
        let block = !volatile && self.facts.strides.window_stores();
        let join = self.append("st");
        // (matched, row, lane 0's offset) of each edge into `join` (`PairStore`).
        let mut edges: Vec<[LLVMValueRef; 3]> = Vec::new();
        let mut into: Vec<LLVMBasicBlockRef> = Vec::new();
        let i1t = c::LLVMInt1TypeInContext(self.cx);
        let yes = c::LLVMConstInt(i1t, 1, 0);
        // The edge of a path that did not store by the pair table.
        let no_pairs = [c::LLVMConstInt(i1t, 0, 0), self.c32(0), self.c32(0)];
        // The other side of the pairs an earlier store in this block wrote: one scalar test.
        if let Some(prev) = block.then(|| self.pair_step(ptr)).flatten() {
            let ok = self.pair_step_test(&prev);
            let step_bb = self.append("st.pairs.step");
            let rest_bb = self.append("st.test");
            c::LLVMBuildCondBr(b, ok, step_bb, rest_bb);
            c::LLVMPositionBuilderAtEnd(b, step_bb);
            let row = c::LLVMBuildAdd(b, prev.row, self.c32(1), n);
            self.store_pairs(v, prev.first, row);
            c::LLVMBuildBr(b, join);
            into.push(c::LLVMGetInsertBlock(b));
            edges.push([yes, row, prev.first]);
            c::LLVMPositionBuilderAtEnd(b, rest_bb);
        }
        let off = self.offsets(p);
        let contig = self.consecutive_offsets(off, 4);
        let vec_bb = self.append("st.vector");
        let test_bb = self.append("st.block.test");
        let sc_bb = self.append("st.scatter");
        c::LLVMBuildCondBr(b, contig, vec_bb, if block { test_bb } else { sc_bb });
        c::LLVMPositionBuilderAtEnd(b, vec_bb);
        self.store_runs(v, self.shared_ptrs(off), t);
        c::LLVMBuildBr(b, join);
        into.push(c::LLVMGetInsertBlock(b));
        edges.push(no_pairs);
        c::LLVMPositionBuilderAtEnd(b, test_bb);
        // The test and the store see one frozen vector: two freezes of a lane's undefined
        // offset may differ. Both tests are of the vector as a whole, no reduction; a warp
        // with no lane running passes too (its masked stores write nothing). A window load
        // at the same source pointer whose code dominates this (`Warp::window_tests`: a
        // bitonic stage loads `a[lo]` and stores `a[lo]`) has frozen the offsets and tested
        // the block: the running lanes' offsets are that load's (the pointer is not defined
        // again in between, and this mask is within the load's), and the test and the store
        // see that one frozen vector.
        let (frozen, in_block) = match self.window_tests.get(&ptr) {
            Some(&(frozen, in_block)) if block => (frozen, Some(in_block)),
            _ => (c::LLVMBuildFreeze(b, off, n), None),
        };
        let first = c::LLVMBuildExtractElement(b, frozen, self.c32(0), n);
        // A compare-exchange stage's pairs first (`pair_pattern`): no set to build.
        let pairs_bb = self.append("st.pairs");
        let gen_bb = self.append("st.block.any");
        let (pairs, row) = self.pair_pattern(frozen, first);
        c::LLVMBuildCondBr(b, pairs, pairs_bb, gen_bb);
        c::LLVMPositionBuilderAtEnd(b, pairs_bb);
        self.store_pairs(v, first, row);
        c::LLVMBuildBr(b, join);
        if block {
            into.push(c::LLVMGetInsertBlock(b));
            edges.push([yes, row, first]);
        }
        c::LLVMPositionBuilderAtEnd(b, gen_bb);
        let in_block = in_block.unwrap_or_else(|| self.in_block(frozen, first));
        let ok = c::LLVMBuildAnd(b, in_block, self.increasing(frozen), n);
        let blk_bb = self.append("st.block");
        c::LLVMBuildCondBr(b, ok, blk_bb, sc_bb);
        c::LLVMPositionBuilderAtEnd(b, blk_bb);
        self.store_block(v, frozen, first);
        c::LLVMBuildBr(b, join);
        if block {
            into.push(c::LLVMGetInsertBlock(b));
            edges.push(no_pairs);
        } else {
            // Nothing branches to the test.
            c::LLVMDeleteBasicBlock(test_bb);
            c::LLVMDeleteBasicBlock(pairs_bb);
            c::LLVMDeleteBasicBlock(gen_bb);
            c::LLVMDeleteBasicBlock(blk_bb);
        }
        c::LLVMPositionBuilderAtEnd(b, sc_bb);
        let mut tys = [c::LLVMTypeOf(v), c::LLVMVectorType(self.ptr, LANES)];
        let mut args = [v, self.shared_ptrs(off), self.mask];
        self.call_intrinsic("llvm.masked.scatter", &mut tys, &mut args);
        c::LLVMBuildBr(b, join);
        into.push(c::LLVMGetInsertBlock(b));
        edges.push(no_pairs);
        c::LLVMPositionBuilderAtEnd(b, join);
        if block {
            let tys = [c::LLVMInt1TypeInContext(self.cx), self.i32, self.i32];
            let [matched, row, first] = [0, 1, 2].map(|k| {
                let phi = c::LLVMBuildPhi(b, tys[k], n);
                let mut vals: Vec<LLVMValueRef> = edges.iter().map(|e| e[k]).collect();
                let mut bbs = into.clone();
                c::LLVMAddIncoming(phi, vals.as_mut_ptr(), bbs.as_mut_ptr(), vals.len() as u32);
                phi
            });
            let key = offset_key(ptr);
            let ps = PairStore {
                join,
                matched,
                row,
                first,
            };
            self.pair_stores.insert(key, ps);
        }
    }

    /// The pair answer of an earlier `.shared` store in the block being built whose offsets
    /// this store's `ptr` adds uniform terms to (`linear`: the same root), and their sum (32 bits).
    unsafe fn pair_step(&mut self, ptr: LLVMValueRef) -> Option<PairStep> {
        let x2 = offset_key(ptr);
        let (root, shift, terms) = linear(x2, &self.facts.varying)?;
        let here = c::LLVMGetInsertBlock(self.b);
        // The earlier store whose offsets have the same varying root and a subset of the
        // uniform terms: the rest is the step.
        let (prev, rest) = self.pair_stores.iter().find_map(|(&k, &ps)| {
            if ps.join != here || k == x2 {
                return None;
            }
            let (r1, s1, t1) = linear(k, &self.facts.varying)?;
            if r1 != root || s1 != shift {
                return None;
            }
            let mut rest = terms.clone();
            for t in t1 {
                let at = rest.iter().position(|&u| u == t)?;
                rest.swap_remove(at);
            }
            (!rest.is_empty()).then_some((ps, rest))
        })?;
        let n = c"".as_ptr();
        let mut step = self.c32(0);
        for (t, sh) in rest {
            let u = self.get(t, false);
            if c::LLVMTypeOf(u) != self.i32 {
                return None;
            }
            let u = c::LLVMBuildShl(self.b, u, self.c32(u64::from(sh)), n);
            step = c::LLVMBuildAdd(self.b, step, u, n);
        }
        Some(PairStep {
            matched: prev.matched,
            row: prev.row,
            first: prev.first,
            step,
        })
    }

    /// Whether the earlier store wrote the lower side of its compare-exchange pairs (an even
    /// row `2 log2 j`) and the step is `4 j`: then every lane's offset here is its offset
    /// there plus `4 j`, the upper side of the same pairs in the same 256-byte block (row + 1),
    /// as the earlier store's test of its offsets as a whole proved (a running lane's offset
    /// is defined there, since this one is computed from it).
    unsafe fn pair_step_test(&self, s: &PairStep) -> LLVMValueRef {
        let b = self.b;
        let n = c"".as_ptr();
        use llvm_sys::LLVMIntPredicate::LLVMIntEQ;
        let side = c::LLVMBuildAnd(b, s.row, self.c32(1), n);
        let lower = c::LLVMBuildICmp(b, LLVMIntEQ, side, self.c32(0), n);
        let log = c::LLVMBuildLShr(b, s.row, self.c32(1), n);
        let j4 = c::LLVMBuildShl(b, self.c32(4), log, n);
        let step = c::LLVMBuildICmp(b, LLVMIntEQ, s.step, j4, n);
        let ok = c::LLVMBuildAnd(b, lower, step, n);
        c::LLVMBuildAnd(b, s.matched, ok, n)
    }

    /// The tables of the compare-exchange pair patterns (`pair_pattern`), one row per pattern
    /// (`2 log2 j + s` for distance `j` and side `s`): the 32 lanes' byte offsets in the
    /// 256-byte block, the lane that owns each of the 64 elements (0 for the other elements),
    /// and the 64-bit set of the lanes' elements. Private constants of the module, made once.
    unsafe fn pair_tables(&self) -> [LLVMValueRef; 3] {
        let names = [
            c"ptx2llvm.pairs.offsets",
            c"ptx2llvm.pairs.lanes",
            c"ptx2llvm.pairs.sets",
        ];
        if !c::LLVMGetNamedGlobal(self.m, names[0].as_ptr()).is_null() {
            return names.map(|nm| c::LLVMGetNamedGlobal(self.m, nm.as_ptr()));
        }
        let (mut offs, mut owners, mut sets) = (Vec::new(), Vec::new(), Vec::new());
        for row in 0..PAIR_ROWS {
            let elems = pair_elements(row);
            let mut owner = [0u64; 64];
            let mut set = 0u64;
            for (l, &e) in elems.iter().enumerate() {
                offs.push(self.c32(4 * u64::from(e)));
                owner[e as usize] = l as u64;
                set |= 1 << e;
            }
            owners.extend(owner.iter().map(|&l| self.c32(l)));
            sets.push(c::LLVMConstInt(self.i64, set, 0));
        }
        [
            (offs, self.i32, names[0]),
            (owners, self.i32, names[1]),
            (sets, self.i64, names[2]),
        ]
        .map(|(mut vals, et, nm)| {
            let init = c::LLVMConstArray2(et, vals.as_mut_ptr(), vals.len() as u64);
            let g = c::LLVMAddGlobal(self.m, c::LLVMTypeOf(init), nm.as_ptr());
            c::LLVMSetInitializer(g, init);
            c::LLVMSetGlobalConstant(g, 1);
            c::LLVMSetLinkage(g, llvm_sys::LLVMLinkage::LLVMPrivateLinkage);
            c::LLVMSetUnnamedAddress(g, llvm_sys::LLVMUnnamedAddr::LLVMGlobalUnnamedAddr);
            c::LLVMSetAlignment(g, 64);
            g
        })
    }

    /// Whether the 32 lanes' shared offsets `off` (lane 0's: `first`) are the elements of one
    /// side of a compare-exchange stage of distance `j` in {1, 2, 4, 8, 16} over the 64
    /// elements of a 256-byte-aligned block: the lower elements of the pairs `(e, e + j)`
    /// (`2l - (l & (j - 1))`, a sorting network's lanes `l`) or the upper ones (`+ j`), in
    /// lane order; and the pattern's row in `pair_tables` (0 when not). A test of the vector
    /// against the row the two end lanes name (lane 0's element is `s j`, lane 31's
    /// `63 - j + s j`): no reduction.
    unsafe fn pair_pattern(
        &self,
        off: LLVMValueRef,
        first: LLVMValueRef,
    ) -> (LLVMValueRef, LLVMValueRef) {
        let b = self.b;
        let n = c"".as_ptr();
        use llvm_sys::LLVMIntPredicate::{LLVMIntEQ, LLVMIntNE, LLVMIntULT};
        let start = c::LLVMBuildAnd(b, first, self.c32(!255u32 as u64), n);
        let rel = c::LLVMBuildSub(b, off, self.splat(start), n);
        let i0 = c::LLVMBuildAnd(b, first, self.c32(255), n);
        let last = c::LLVMBuildExtractElement(b, off, self.c32(u64::from(LANES - 1)), n);
        let i31 = c::LLVMBuildSub(b, last, start, n);
        // `4 j` (wrapping: anything when the lanes are no such pattern).
        let j4 = c::LLVMBuildSub(b, c::LLVMBuildAdd(b, i0, self.c32(252), n), i31, n);
        let below = c::LLVMBuildAnd(b, j4, c::LLVMBuildSub(b, j4, self.c32(1), n), n);
        let pow2 = c::LLVMBuildICmp(b, LLVMIntEQ, below, self.c32(0), n);
        let near = c::LLVMBuildICmp(
            b,
            LLVMIntULT,
            c::LLVMBuildSub(b, j4, self.c32(4), n),
            self.c32(61),
            n,
        );
        let valid = c::LLVMBuildAnd(b, pow2, near, n);
        let mut tys = [self.i32];
        let mut args = [j4, c::LLVMConstInt(c::LLVMInt1TypeInContext(self.cx), 0, 0)];
        let tz = self.call_intrinsic("llvm.cttz", &mut tys, &mut args);
        let side = c::LLVMBuildZExt(
            b,
            c::LLVMBuildICmp(b, LLVMIntNE, i0, self.c32(0), n),
            self.i32,
            n,
        );
        let row = c::LLVMBuildAdd(
            b,
            c::LLVMBuildShl(b, c::LLVMBuildSub(b, tz, self.c32(2), n), self.c32(1), n),
            side,
            n,
        );
        let row = c::LLVMBuildSelect(b, valid, row, self.c32(0), n);
        let [offs, _, _] = self.pair_tables();
        let mut at = [c::LLVMBuildMul(b, row, self.c32(u64::from(LANES)), n)];
        let p = c::LLVMBuildGEP2(b, self.i32, offs, at.as_mut_ptr(), 1, n);
        let want = c::LLVMBuildLoad2(b, c::LLVMVectorType(self.i32, LANES), p, n);
        c::LLVMSetAlignment(want, 64);
        let eq = self.bits(c::LLVMBuildICmp(b, LLVMIntEQ, rel, want, n));
        let eq = c::LLVMBuildICmp(b, LLVMIntEQ, eq, c::LLVMConstAllOnes(self.i32), n);
        (c::LLVMBuildAnd(b, valid, eq, n), row)
    }

    /// The store of `v` (32-bit values) at the elements of pattern `row` (`pair_pattern`) of
    /// the 256-byte-aligned block of lane 0's offset `first`: per 16 elements, the owning
    /// lanes' values (`vpermi2d` by the row's constant owners) and a masked store of the
    /// running lanes' elements (`pdep` of the execution mask into the row's set). The same
    /// bytes as `store_block` writes, without building the set from the offsets (a reduction,
    /// `vpexpandd`s: about half of a bitonic stage's instructions).
    unsafe fn store_pairs(&mut self, v: LLVMValueRef, first: LLVMValueRef, row: LLVMValueRef) {
        let b = self.b;
        let n = c"".as_ptr();
        let v32 = c::LLVMVectorType(self.i32, LANES);
        let v16 = c::LLVMVectorType(self.i32, 16);
        let i8t = c::LLVMInt8TypeInContext(self.cx);
        let vi = c::LLVMBuildBitCast(b, v, v32, n);
        let start = c::LLVMBuildAnd(b, first, self.c32(!255u32 as u64), n);
        let mut k = [c::LLVMBuildZExt(b, start, self.i64, n)];
        let at = c::LLVMBuildGEP2(b, i8t, self.shared_base(), k.as_mut_ptr(), 1, n);
        let [_, owners, sets] = self.pair_tables();
        let mut r = [row];
        let sp = c::LLVMBuildGEP2(b, self.i64, sets, r.as_mut_ptr(), 1, n);
        let set = c::LLVMBuildLoad2(b, self.i64, sp, n);
        let running = c::LLVMBuildZExt(b, self.bits(self.mask), self.i64, n);
        let mut args = [running, set];
        let written = self.call_intrinsic("llvm.x86.bmi.pdep.64", &mut [], &mut args);
        let written_m = c::LLVMBuildBitCast(b, written, c::LLVMVectorType(self.i1, 64), n);
        let (perm, pt) = self.vpermi2d();
        let (lo, hi) = (self.slice(vi, 0, 16), self.slice(vi, 16, 16));
        let base = c::LLVMBuildMul(b, row, self.c32(64), n);
        for part in 0..4u32 {
            let mut at_k = [c::LLVMBuildAdd(b, base, self.c32(16 * u64::from(part)), n)];
            let q = c::LLVMBuildGEP2(b, self.i32, owners, at_k.as_mut_ptr(), 1, n);
            let idx = c::LLVMBuildLoad2(b, v16, q, n);
            c::LLVMSetAlignment(idx, 64);
            let mut args = [lo, idx, hi];
            let e = c::LLVMBuildCall2(b, pt, perm, args.as_mut_ptr(), 3, n);
            let pick: Vec<u32> = (16 * part..16 * part + 16).collect();
            let m = self.shuffle(written_m, None, &pick);
            let mut k64 = [c::LLVMConstInt(self.i64, 64 * u64::from(part), 0)];
            let q = c::LLVMBuildGEP2(b, i8t, at, k64.as_mut_ptr(), 1, n);
            let mut tys = [v16, self.ptr];
            let mut args = [e, q, m];
            self.call_intrinsic("llvm.masked.store", &mut tys, &mut args);
        }
    }

    /// The store of `v` (32-bit values) at shared offsets `off` whose 32 lanes increase
    /// strictly in lane order within the 256-byte-aligned block of lane 0's offset `first`,
    /// each a multiple of 4 from the block (`in_block`): the running lanes' values put in at
    /// their elements of the block by four 64-byte masked stores, which write exactly the
    /// elements the scatter would, so a later plain load of the block is served from them
    /// (`load_window`). A warp's store is not interleaved with another's (the cpu target's
    /// invariant, docs/ARCHITECTURE.md).
    ///
    /// The lanes' elements as a 64-bit set (one bit per element, from the two 32-bit halves of
    /// each 64-bit pair of lanes: no widening); per 16 elements, the lanes' values in element
    /// order (`vpexpandd` from the first lane that falls in them) and the running lanes'
    /// elements (`pdep` of the execution mask into the set).
    unsafe fn store_block(&mut self, v: LLVMValueRef, off: LLVMValueRef, first: LLVMValueRef) {
        let b = self.b;
        let n = c"".as_ptr();
        let v32 = c::LLVMVectorType(self.i32, LANES);
        let v16 = c::LLVMVectorType(self.i32, 16);
        let i8t = c::LLVMInt8TypeInContext(self.cx);
        let vi = c::LLVMBuildBitCast(b, v, v32, n);
        let (at, rel) = self.block_of(first, off);
        let idx = c::LLVMBuildLShr(b, rel, self.splat(self.c32(2)), n);
        // Elements 0..64: shifts of 64-bit ones by them are defined.
        let half = LANES / 2;
        let v64 = c::LLVMVectorType(self.i64, half);
        let pairs = c::LLVMBuildBitCast(b, idx, v64, n);
        let splat64 = |x: u64| {
            let mut e: Vec<LLVMValueRef> =
                (0..half).map(|_| c::LLVMConstInt(self.i64, x, 0)).collect();
            c::LLVMConstVector(e.as_mut_ptr(), half)
        };
        let even = c::LLVMBuildAnd(b, pairs, splat64(u64::from(u32::MAX)), n);
        let odd = c::LLVMBuildLShr(b, pairs, splat64(32), n);
        let bit = c::LLVMBuildOr(
            b,
            c::LLVMBuildShl(b, splat64(1), even, n),
            c::LLVMBuildShl(b, splat64(1), odd, n),
            n,
        );
        let mut tys = [v64];
        let mut args = [bit];
        let set = self.call_intrinsic("llvm.vector.reduce.or", &mut tys, &mut args);
        let running = c::LLVMBuildZExt(b, self.bits(self.mask), self.i64, n);
        let mut args = [running, set];
        let written = self.call_intrinsic("llvm.x86.bmi.pdep.64", &mut [], &mut args);
        let (perm, pt) = self.vpermi2d();
        let (lo, hi) = (self.slice(vi, 0, 16), self.slice(vi, 16, 16));
        let mut iota: Vec<LLVMValueRef> = (0..16).map(|k| self.c32(k)).collect();
        let iota = c::LLVMConstVector(iota.as_mut_ptr(), 16);
        // The 16 elements' masks as pieces of a 64-bit mask (`kshiftrq`, not a shift and a
        // `kmovd` each).
        let m64 = c::LLVMVectorType(self.i1, 64);
        let (set_m, written_m) = (
            c::LLVMBuildBitCast(b, set, m64, n),
            c::LLVMBuildBitCast(b, written, m64, n),
        );
        let part = |x: LLVMValueRef, k: u32| {
            let idx: Vec<u32> = (16 * k..16 * k + 16).collect();
            self.shuffle(x, None, &idx)
        };
        // The lanes before each 16 elements (the first lane in them is the next): the
        // popcounts of the set's low 16, 32 and 48 bits at once.
        let v4 = c::LLVMVectorType(self.i64, 4);
        let mut below: Vec<LLVMValueRef> = (0..4u64)
            .map(|k| c::LLVMConstInt(self.i64, (1u64 << (16 * k)) - 1, 0))
            .collect();
        let below = c::LLVMConstVector(below.as_mut_ptr(), 4);
        let sets = c::LLVMBuildInsertElement(b, c::LLVMGetPoison(v4), set, self.c32(0), n);
        let sets = self.shuffle(sets, None, &[0; 4]);
        let mut tys = [v4];
        let mut args = [c::LLVMBuildAnd(b, sets, below, n)];
        let cnts = self.call_intrinsic("llvm.ctpop", &mut tys, &mut args);
        let cnts = c::LLVMBuildTrunc(b, cnts, c::LLVMVectorType(self.i32, 4), n);
        for k in 0..4u32 {
            let src = if k == 0 {
                lo
            } else {
                let cnt = self.shuffle(cnts, None, &[k; 16]);
                let mut args = [lo, c::LLVMBuildAdd(b, iota, cnt, n), hi];
                c::LLVMBuildCall2(b, pt, perm, args.as_mut_ptr(), 3, n)
            };
            let mut tys = [v16];
            let mut args = [src, c::LLVMConstNull(v16), part(set_m, k)];
            let e = self.call_intrinsic("llvm.x86.avx512.mask.expand", &mut tys, &mut args);
            let mut k64 = [c::LLVMConstInt(self.i64, 64 * u64::from(k), 0)];
            let q = c::LLVMBuildGEP2(b, i8t, at, k64.as_mut_ptr(), 1, n);
            let mut tys = [v16, self.ptr];
            let mut args = [e, q, part(written_m, k)];
            self.call_intrinsic("llvm.masked.store", &mut tys, &mut args);
        }
    }
}

/// `ptr`, the pointer of `load`, as a base and a constant byte offset: through
/// `getelementptr i8` by a constant in the load's block with no CTA barrier between it and the
/// load (so that the base is at hand wherever the load is built). The loads of one value per
/// row at constant offsets from one tile row (`As[ty][k]` for each `k`) then take their rows'
/// pointers from the same vector: one extraction per row instead of a vector addition each.
unsafe fn base_offset(ptr: LLVMValueRef, load: LLVMValueRef) -> (LLVMValueRef, u64) {
    let bb = c::LLVMGetInstructionParent(load);
    let (mut base, mut off) = (ptr, 0u64);
    while ir::is_instruction(base)
        && ir::opcode(base) == llvm_sys::LLVMOpcode::LLVMGetElementPtr
        && c::LLVMGetInstructionParent(base) == bb
        && c::LLVMGetNumOperands(base) == 2
        && c::LLVMGetGEPSourceElementType(base)
            == c::LLVMInt8TypeInContext(c::LLVMGetTypeContext(c::LLVMTypeOf(base)))
    {
        let Some(k) = ir::const_u64(c::LLVMGetOperand(base, 1)) else {
            break;
        };
        // No barrier from the address to the load.
        let mut x = c::LLVMGetNextInstruction(base);
        while !x.is_null() && x != load {
            if ir::opcode(x) == llvm_sys::LLVMOpcode::LLVMCall
                && matches!(call_kind(x), CallKind::Barrier(_))
            {
                return (ptr, 0);
            }
            x = c::LLVMGetNextInstruction(x);
        }
        off = off.wrapping_add(k);
        base = c::LLVMGetOperand(base, 0);
    }
    (base, off)
}

/// Intrinsics without meaning for the warp function (hints the cleanup left).
pub fn ignored_intrinsic(name: &str) -> bool {
    [
        "llvm.assume",
        "llvm.lifetime.",
        "llvm.experimental.noalias.scope.decl",
        "llvm.donothing",
        "llvm.sideeffect",
        "llvm.dbg.",
    ]
    .iter()
    .any(|p| name.starts_with(p))
}

/// The mangling suffix of a scalar type.
unsafe fn type_name(t: LLVMTypeRef) -> String {
    match c::LLVMGetTypeKind(t) {
        LLVMTypeKind::LLVMIntegerTypeKind => format!("i{}", c::LLVMGetIntTypeWidth(t)),
        LLVMTypeKind::LLVMHalfTypeKind => "f16".into(),
        LLVMTypeKind::LLVMBFloatTypeKind => "bf16".into(),
        LLVMTypeKind::LLVMFloatTypeKind => "f32".into(),
        LLVMTypeKind::LLVMDoubleTypeKind => "f64".into(),
        LLVMTypeKind::LLVMFP128TypeKind => "f128".into(),
        LLVMTypeKind::LLVMPointerTypeKind => format!("p{}", c::LLVMGetPointerAddressSpace(t)),
        _ => String::new(),
    }
}

/// Bytes of module `m`'s static `.shared` variables (defined `addrspace(3)` globals), before
/// `cpu::prepare_module` lays them out: at most the static size every launch of the module's
/// kernels gets (`SharedLayout::bytes` adds alignment padding only), so a floor of each CTA's
/// `%total_smem_size`. 0 once the module has been rewritten (no such globals left).
unsafe fn static_shared_bytes(m: LLVMModuleRef) -> u64 {
    let td = llvm_sys::target::LLVMGetModuleDataLayout(m);
    let mut sum = 0u64;
    let mut g = c::LLVMGetFirstGlobal(m);
    while !g.is_null() {
        if c::LLVMGetPointerAddressSpace(c::LLVMTypeOf(g)) == SHARED_AS
            && c::LLVMIsDeclaration(g) == 0
        {
            sum = sum.saturating_add(llvm_sys::target::LLVMABISizeOfType(
                td,
                c::LLVMGlobalGetValueType(g),
            ));
        }
        g = c::LLVMGetNextGlobal(g);
    }
    sum
}

/// What a shared varying term's slot says of its lanes (`Warp::term_test`).
#[derive(Clone, Copy)]
enum TestState {
    Scattered = 0,
    Consecutive = 1,
    /// Not consecutive, but each 16-byte piece of lanes is (`pieces_or_scatter`): tested
    /// for the terms of 8- and 16-bit accesses only.
    Pieces = 2,
}

/// The varying term `w` of a pointer `u + w` whose other term `u` is the same in every
/// lane (`inttoptr (add i64 u, w)` or a byte `getelementptr` of one on the other), a host
/// pointer or a `.shared` one (64 bits, the block's base added to it as it is: `space_cast`):
/// the lanes' host addresses then differ as `w`'s do, whatever `u`, so one test of `w` serves
/// every access sharing it. `w` is a 64-bit integer or a pointer of `p`'s type, an instruction other than
/// a phi (defined where `Warp::set` sees it).
unsafe fn varying_term(p: LLVMValueRef, varying: &HashSet<LLVMValueRef>) -> Option<LLVMValueRef> {
    let t = c::LLVMTypeOf(p);
    if c::LLVMGetTypeKind(t) != LLVMTypeKind::LLVMPointerTypeKind
        || !matches!(c::LLVMGetPointerAddressSpace(t), 0 | SHARED_AS)
        || !ir::is_instruction(p)
    {
        return None;
    }
    let sum = match ir::opcode(p) {
        O::LLVMIntToPtr => {
            let x = c::LLVMGetOperand(p, 0);
            let i64t = c::LLVMInt64TypeInContext(c::LLVMGetTypeContext(t));
            (ir::is_instruction(x) && ir::opcode(x) == O::LLVMAdd && c::LLVMTypeOf(x) == i64t)
                .then_some(x)?
        }
        O::LLVMGetElementPtr
            if c::LLVMGetNumOperands(p) == 2
                && c::LLVMGetGEPSourceElementType(p)
                    == c::LLVMInt8TypeInContext(c::LLVMGetTypeContext(t)) =>
        {
            p
        }
        _ => return None,
    };
    let (a, b) = (c::LLVMGetOperand(sum, 0), c::LLVMGetOperand(sum, 1));
    let w = match (varying.contains(&a), varying.contains(&b)) {
        (false, true) => b,
        (true, false) => a,
        _ => return None,
    };
    // A 64-bit term, as the address adds it (a narrower `getelementptr` index would be
    // sign-extended first).
    let wt = c::LLVMTypeOf(w);
    let full = wt == c::LLVMInt64TypeInContext(c::LLVMGetTypeContext(t)) || wt == t;
    (full && ir::is_instruction(w) && c::LLVMIsAPHINode(w).is_null()).then_some(w)
}

/// A `.shared` store's pair-pattern answer (`Warp::store_shared`), as phis in its join
/// block: whether it took the pairs path, the pattern's row (`pair_pattern`) and lane 0's
/// offset (which names the 256-byte block).
#[derive(Clone, Copy)]
pub(super) struct PairStore {
    join: LLVMBasicBlockRef,
    matched: LLVMValueRef,
    row: LLVMValueRef,
    first: LLVMValueRef,
}

/// A later store's view of a `PairStore`, with its own uniform step (`i32`).
struct PairStep {
    matched: LLVMValueRef,
    row: LLVMValueRef,
    first: LLVMValueRef,
    step: LLVMValueRef,
}

/// What names a `.shared` pointer's lane offsets for `Warp::pair_step`: `x` of
/// `inttoptr (zext i32 x)` (the 32-bit shared address the lowering makes), else the pointer.
unsafe fn offset_key(p: LLVMValueRef) -> LLVMValueRef {
    if ir::is_instruction(p) && ir::opcode(p) == O::LLVMIntToPtr {
        let z = c::LLVMGetOperand(p, 0);
        if ir::is_instruction(z) && ir::opcode(z) == O::LLVMZExt {
            return c::LLVMGetOperand(z, 0);
        }
    }
    p
}

/// A uniform term of `linear`'s sum and its shift.
type Term = (LLVMValueRef, u32);

/// A 32-bit offset `x` as `(root << shift) + Σ (term << its shift)` over `add`s with one
/// uniform operand (a term) and `shl`s by constants (modulo 2^32, as the offsets are): the
/// root is the first value that is neither; terms are uniform (constants included).
unsafe fn linear(
    x: LLVMValueRef,
    varying: &HashSet<LLVMValueRef>,
) -> Option<(LLVMValueRef, u32, Vec<Term>)> {
    let i32t = c::LLVMInt32TypeInContext(c::LLVMGetTypeContext(c::LLVMTypeOf(x)));
    if c::LLVMTypeOf(x) != i32t {
        return None;
    }
    let (mut x, mut shift, mut terms) = (x, 0u32, Vec::new());
    while ir::is_instruction(x) && terms.len() < 8 {
        let op = ir::opcode(x);
        if !matches!(op, O::LLVMAdd | O::LLVMShl) {
            break;
        }
        let (a, b) = (c::LLVMGetOperand(x, 0), c::LLVMGetOperand(x, 1));
        match op {
            O::LLVMAdd => match (varying.contains(&a), varying.contains(&b)) {
                (true, false) => {
                    terms.push((b, shift));
                    x = a;
                }
                (false, true) => {
                    terms.push((a, shift));
                    x = b;
                }
                _ => break,
            },
            O::LLVMShl if c::LLVMIsAConstantInt(b).is_null() => break,
            O::LLVMShl => {
                let k = c::LLVMConstIntGetZExtValue(b);
                if k >= 32 || shift + k as u32 >= 32 {
                    break;
                }
                shift += k as u32;
                x = a;
            }
            _ => break,
        }
    }
    Some((x, shift, terms))
}

/// The scalar `u` of a splat `shufflevector (insertelement _, u, 0), _, zeroinitializer`
/// (`Warp::splat`'s form).
/// The lane that owns each of a block's 64 elements, lane `l` at `pos[l]`, when no two lanes
/// share one (a store's lanes then write distinct elements, and no order between them is
/// needed).
fn distinct_owners(pos: &[u32; LANES as usize]) -> Option<[Option<u32>; 2 * LANES as usize]> {
    let mut inv = [None; 2 * LANES as usize];
    for (l, &p) in pos.iter().enumerate() {
        let slot = inv.get_mut(p as usize)?;
        if slot.is_some() {
            return None;
        }
        *slot = Some(l as u32);
    }
    Some(inv)
}

/// Whether access `i` is in the original body of a loop versioned on its distance
/// (`version::GENERIC`): no window or pair code there.
unsafe fn versioned_generic(i: LLVMValueRef) -> bool {
    let cx = c::LLVMGetTypeContext(c::LLVMTypeOf(i));
    let g = super::version::GENERIC;
    let kind = c::LLVMGetMDKindIDInContext(cx, g.as_ptr(), g.count_bytes() as u32);
    !c::LLVMGetMetadata(i, kind).is_null()
}

/// The scalar a splat vector `v` repeats (`lanetab`).
pub(super) unsafe fn splat_of(v: LLVMValueRef) -> Option<LLVMValueRef> {
    splat_scalar(v)
}

unsafe fn splat_scalar(v: LLVMValueRef) -> Option<LLVMValueRef> {
    if c::LLVMIsAShuffleVectorInst(v).is_null() {
        return None;
    }
    let k = c::LLVMGetNumMaskElements(v);
    if (0..k).any(|e| c::LLVMGetMaskValue(v, e) != 0) {
        return None;
    }
    let ins = c::LLVMGetOperand(v, 0);
    if c::LLVMIsAInsertElementInst(ins).is_null()
        || ir::const_u64(c::LLVMGetOperand(ins, 2)) != Some(0)
    {
        return None;
    }
    Some(c::LLVMGetOperand(ins, 1))
}

/// The rows of `pair_tables`: distances 1, 2, 4, 8, 16, each with its two sides.
const PAIR_ROWS: u32 = 10;

/// Row `row`'s 32 elements of the 64 (lane order): for distance `j = 2^(row / 2)`, lane `l`'s
/// pair is `(2l - (l & (j - 1)), + j)`, and side `row % 2` picks the lower or the upper one.
fn pair_elements(row: u32) -> [u32; LANES as usize] {
    let j = 1u32 << (row / 2);
    std::array::from_fn(|l| {
        let l = l as u32;
        2 * l - (l & (j - 1)) + (row % 2) * j
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each row's elements increase strictly in lane order within the 64 (so `pdep` of the
    /// mask into the set puts lane l's bit at its element), and its two end lanes name it as
    /// `pair_pattern` computes (lane 0's element `s j`, lane 31's `63 - j + s j`).
    #[test]
    fn pair_rows_increase_and_are_named_by_their_ends() {
        for row in 0..PAIR_ROWS {
            let e = pair_elements(row);
            assert!(e.windows(2).all(|w| w[0] < w[1]), "row {row}");
            assert!(e[31] < 64, "row {row}");
            let (i0, i31) = (4 * e[0], 4 * e[31]);
            let j4 = i0 + 252 - i31;
            assert!(j4.is_power_of_two() && (4..=64).contains(&j4), "row {row}");
            let named = 2 * (j4.trailing_zeros() - 2) + u32::from(i0 != 0);
            assert_eq!(named, row);
        }
        // The two sides of a distance cover the 64 elements once.
        for d in 0..PAIR_ROWS / 2 {
            let mut seen = [0u8; 64];
            for row in [2 * d, 2 * d + 1] {
                pair_elements(row)
                    .iter()
                    .for_each(|&e| seen[e as usize] += 1);
            }
            assert!(seen.iter().all(|&n| n == 1), "distance {}", 1 << d);
        }
    }
}
