//! Which float values of a kernel can never be a NaN, from the bounds of their operands
//! (issue 17: `nan::drop_unseen` keeps a canonicalizing select whose bits a use sees, but
//! over a value that is never a NaN the select is the value itself).
//!
//! `expf` as nvcc writes it clamps with `cvt.sat` (`fp::sat`: `x > 0 ? (x > 1 ? 1 : x) : 0`,
//! never a NaN, in [0, 1]), then `fma.rm` of that with two constants: a bounded product and sum
//! of finite numbers is finite, so its canonicalizing select before the bit move (`mov.b32`,
//! `shl`: the scale's exponent bits) tests a NaN that cannot be there (softmax_warp: one compare
//! and blend per 16 lanes of every `expf`). The bounds follow the operands backwards in one
//! SSA expression, through the arms of a select whose condition compares a value with a
//! constant (in the arm it picks, that value is known to satisfy the comparison, or to be
//! no NaN: the same instance of it, since the arm's definition is dominated by the value's and
//! dominates the select). Phis, loads, calls other than fma and everything else are
//! unbounded and may be a NaN.

use std::collections::HashMap;

use llvm_sys::core as c;
use llvm_sys::prelude::*;
use llvm_sys::{LLVMOpcode as O, LLVMRealPredicate as P, LLVMTypeKind};

use super::ir;

/// The values a float may take: within `[lo, hi]` (infinite bounds allowed, `lo > hi` for
/// no number at all) or a NaN where `nan`.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Range {
    lo: f64,
    hi: f64,
    nan: bool,
}

impl Range {
    const ANY: Range = Range {
        lo: f64::NEG_INFINITY,
        hi: f64::INFINITY,
        nan: true,
    };

    fn empty(&self) -> bool {
        self.lo > self.hi && !self.nan
    }

    fn finite(&self) -> bool {
        self.lo.is_finite() && self.hi.is_finite() && !self.nan
    }

    fn join(self, o: Range) -> Range {
        Range {
            lo: self.lo.min(o.lo),
            hi: self.hi.max(o.hi),
            nan: self.nan || o.nan,
        }
    }

    fn meet(self, o: Range) -> Range {
        Range {
            lo: self.lo.max(o.lo),
            hi: self.hi.min(o.hi),
            nan: self.nan && o.nan,
        }
    }
}

/// How deep `range` follows operands (select arms fork the walk; a deeper expression is
/// unbounded, which only keeps a select).
const DEPTH: u32 = 12;

/// Bounds of the float values of one function; results without assumptions are kept.
pub struct Bounds {
    memo: HashMap<LLVMValueRef, Range>,
}

impl Bounds {
    pub fn new() -> Bounds {
        Bounds {
            memo: HashMap::new(),
        }
    }

    /// Whether `v` (a float of at most 32 bits) is never a NaN.
    ///
    /// # Safety
    /// `v` is a value of a function in SSA form.
    pub unsafe fn never_nan(&mut self, v: LLVMValueRef) -> bool {
        !self.range(v, &[], DEPTH).nan
    }

    unsafe fn range(
        &mut self,
        v: LLVMValueRef,
        assume: &[(LLVMValueRef, Range)],
        depth: u32,
    ) -> Range {
        let known = assume
            .iter()
            .filter(|(x, _)| *x == v)
            .fold(Range::ANY, |r, (_, a)| r.meet(*a));
        if assume.is_empty() {
            if let Some(&r) = self.memo.get(&v) {
                return r;
            }
        }
        let r = self.compute(v, assume, depth).meet(known);
        if assume.is_empty() && depth == DEPTH {
            self.memo.insert(v, r);
        }
        r
    }

    unsafe fn compute(
        &mut self,
        v: LLVMValueRef,
        assume: &[(LLVMValueRef, Range)],
        depth: u32,
    ) -> Range {
        if !c::LLVMIsAConstantFP(v).is_null() {
            let mut loses = 0;
            let x = c::LLVMConstRealGetDouble(v, &mut loses);
            return if x.is_nan() {
                Range {
                    lo: f64::INFINITY,
                    hi: f64::NEG_INFINITY,
                    nan: true,
                }
            } else {
                Range {
                    lo: x,
                    hi: x,
                    nan: false,
                }
            };
        }
        if depth == 0 || !ir::is_instruction(v) {
            return Range::ANY;
        }
        let max = max_finite(v);
        let op = |k: u32| c::LLVMGetOperand(v, k);
        match ir::opcode(v) {
            // An integer converts to a number (rounding may reach the type's largest finite
            // value or infinity only beyond it: f16 from i32).
            O::LLVMSIToFP | O::LLVMUIToFP => {
                let bits = c::LLVMGetIntTypeWidth(c::LLVMTypeOf(op(0)));
                let m = 2f64.powi(bits as i32);
                let lo = if ir::opcode(v) == O::LLVMSIToFP {
                    -m
                } else {
                    0.0
                };
                rounded(lo, m, max)
            }
            O::LLVMFNeg => {
                let a = self.range(op(0), assume, depth - 1);
                Range {
                    lo: -a.hi,
                    hi: -a.lo,
                    nan: a.nan,
                }
            }
            O::LLVMFAdd | O::LLVMFSub | O::LLVMFMul => {
                let a = self.range(op(0), assume, depth - 1);
                let b = self.range(op(1), assume, depth - 1);
                if !a.finite() || !b.finite() {
                    return Range::ANY;
                }
                let (lo, hi) = match ir::opcode(v) {
                    O::LLVMFAdd => (a.lo + b.lo, a.hi + b.hi),
                    O::LLVMFSub => (a.lo - b.hi, a.hi - b.lo),
                    _ => product(a, b),
                };
                rounded(lo, hi, max)
            }
            O::LLVMCall => {
                let f = ir::callee(v);
                let fma = f.starts_with("llvm.fma.")
                    || f.starts_with("llvm.fmuladd.")
                    || ir::statically_rounded_fma(&f).is_some();
                if !fma {
                    return Range::ANY;
                }
                let a = self.range(op(0), assume, depth - 1);
                let b = self.range(op(1), assume, depth - 1);
                let d = self.range(op(2), assume, depth - 1);
                if !a.finite() || !b.finite() || !d.finite() {
                    return Range::ANY;
                }
                let (lo, hi) = product(a, b);
                rounded(lo + d.lo, hi + d.hi, max)
            }
            O::LLVMSelect => {
                let (cond, t, e) = (op(0), op(1), op(2));
                let (rt, re) = match compared(cond) {
                    Some((x, yes, no)) => {
                        let with = |r: Range| {
                            let mut a = assume.to_vec();
                            a.push((x, r));
                            a
                        };
                        let at = with(yes);
                        let ae = with(no);
                        // An arm whose condition contradicts what is known of `x` is never
                        // taken.
                        let xt = self.range(x, &at, depth - 1);
                        let xe = self.range(x, &ae, depth - 1);
                        let rt = if xt.empty() {
                            None
                        } else {
                            Some(self.range(t, &at, depth - 1))
                        };
                        let re = if xe.empty() {
                            None
                        } else {
                            Some(self.range(e, &ae, depth - 1))
                        };
                        (rt, re)
                    }
                    None => (
                        Some(self.range(t, assume, depth - 1)),
                        Some(self.range(e, assume, depth - 1)),
                    ),
                };
                match (rt, re) {
                    (Some(a), Some(b)) => a.join(b),
                    (Some(a), None) | (None, Some(a)) => a,
                    (None, None) => Range {
                        lo: f64::INFINITY,
                        hi: f64::NEG_INFINITY,
                        nan: false,
                    },
                }
            }
            _ => Range::ANY,
        }
    }
}

/// The largest finite value of `v`'s float type.
unsafe fn max_finite(v: LLVMValueRef) -> f64 {
    match c::LLVMGetTypeKind(c::LLVMTypeOf(v)) {
        LLVMTypeKind::LLVMHalfTypeKind => 65504.0,
        LLVMTypeKind::LLVMBFloatTypeKind => f64::from(f32::from_bits(0x7f7f_0000)),
        LLVMTypeKind::LLVMFloatTypeKind => f64::from(f32::MAX),
        _ => 0.0,
    }
}

/// The bounds of a product of two finite ranges.
fn product(a: Range, b: Range) -> (f64, f64) {
    let p = [a.lo * b.lo, a.lo * b.hi, a.hi * b.lo, a.hi * b.hi];
    (
        p.iter().copied().fold(f64::INFINITY, f64::min),
        p.iter().copied().fold(f64::NEG_INFINITY, f64::max),
    )
}

/// The range of a rounded result whose exact value lies in `[lo, hi]` (computed in f64 from
/// narrower operands): widened by a relative 2^-6 and an absolute 2^-126, beyond any rounding
/// of an f32, f16 or bf16 result and of the f64 arithmetic; a bound past the type's largest
/// finite value may round to infinity. Never a NaN: only finite operands come here.
fn rounded(lo: f64, hi: f64, max: f64) -> Range {
    let widen = |x: f64, up: bool| {
        let d = x.abs() / 64.0 + 2f64.powi(-126);
        let y = if up { x + d } else { x - d };
        if y.abs() > max {
            if up {
                f64::INFINITY
            } else {
                f64::NEG_INFINITY
            }
        } else {
            y
        }
    };
    Range {
        lo: widen(lo, false),
        hi: widen(hi, true),
        nan: false,
    }
}

/// For `fcmp pred x, K` (or `K, x`) with a constant `K` that is no NaN: `x`, the range `x` is
/// in where the compare is true, and where it is false.
unsafe fn compared(cond: LLVMValueRef) -> Option<(LLVMValueRef, Range, Range)> {
    if c::LLVMIsAFCmpInst(cond).is_null() {
        return None;
    }
    let (a, b) = (c::LLVMGetOperand(cond, 0), c::LLVMGetOperand(cond, 1));
    let konst = |v: LLVMValueRef| {
        if c::LLVMIsAConstantFP(v).is_null() {
            return None;
        }
        let mut loses = 0;
        let k = c::LLVMConstRealGetDouble(v, &mut loses);
        (!k.is_nan()).then_some(k)
    };
    let pred = c::LLVMGetFCmpPredicate(cond);
    // `fcmp uno x, x` (`fp::is_nan`) and `ord`: only whether `x` is a NaN.
    if a == b && matches!(pred, P::LLVMRealUNO | P::LLVMRealORD) {
        return Some((a, when(pred, 0.0)?, when(inverse(pred)?, 0.0)?));
    }
    let (x, k, pred) = match (konst(a), konst(b)) {
        (None, Some(k)) => (a, k, pred),
        (Some(k), None) => (b, k, swapped(pred)?),
        _ => return None,
    };
    Some((x, when(pred, k)?, when(inverse(pred)?, k)?))
}

/// Where `x pred k` holds for a number `k`.
fn when(pred: P, k: f64) -> Option<Range> {
    let (inf, ninf) = (f64::INFINITY, f64::NEG_INFINITY);
    // (bounds are closed: a strict comparison gives the same bound, which is enough here)
    let (lo, hi, nan) = match pred {
        P::LLVMRealOGT | P::LLVMRealOGE => (k, inf, false),
        P::LLVMRealOLT | P::LLVMRealOLE => (ninf, k, false),
        P::LLVMRealOEQ => (k, k, false),
        P::LLVMRealONE | P::LLVMRealORD => (ninf, inf, false),
        P::LLVMRealUGT | P::LLVMRealUGE => (k, inf, true),
        P::LLVMRealULT | P::LLVMRealULE => (ninf, k, true),
        P::LLVMRealUEQ => (k, k, true),
        P::LLVMRealUNE => (ninf, inf, true),
        P::LLVMRealUNO => (inf, ninf, true),
        _ => return None,
    };
    Some(Range { lo, hi, nan })
}

/// The predicate that is true exactly where `p` is false.
fn inverse(p: P) -> Option<P> {
    Some(match p {
        P::LLVMRealOGT => P::LLVMRealULE,
        P::LLVMRealOGE => P::LLVMRealULT,
        P::LLVMRealOLT => P::LLVMRealUGE,
        P::LLVMRealOLE => P::LLVMRealUGT,
        P::LLVMRealOEQ => P::LLVMRealUNE,
        P::LLVMRealONE => P::LLVMRealUEQ,
        P::LLVMRealORD => P::LLVMRealUNO,
        P::LLVMRealUGT => P::LLVMRealOLE,
        P::LLVMRealUGE => P::LLVMRealOLT,
        P::LLVMRealULT => P::LLVMRealOGE,
        P::LLVMRealULE => P::LLVMRealOGT,
        P::LLVMRealUEQ => P::LLVMRealONE,
        P::LLVMRealUNE => P::LLVMRealOEQ,
        P::LLVMRealUNO => P::LLVMRealORD,
        _ => return None,
    })
}

/// `p` with its operands exchanged (`k p x` is `x swapped(p) k`).
fn swapped(p: P) -> Option<P> {
    Some(match p {
        P::LLVMRealOGT => P::LLVMRealOLT,
        P::LLVMRealOGE => P::LLVMRealOLE,
        P::LLVMRealOLT => P::LLVMRealOGT,
        P::LLVMRealOLE => P::LLVMRealOGE,
        P::LLVMRealUGT => P::LLVMRealULT,
        P::LLVMRealUGE => P::LLVMRealULE,
        P::LLVMRealULT => P::LLVMRealUGT,
        P::LLVMRealULE => P::LLVMRealUGE,
        P::LLVMRealOEQ
        | P::LLVMRealONE
        | P::LLVMRealORD
        | P::LLVMRealUEQ
        | P::LLVMRealUNE
        | P::LLVMRealUNO => p,
        _ => return None,
    })
}
