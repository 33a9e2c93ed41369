//! The flat thread index of a dimension, `%ctaid * %ntid + %tid` (CUDA's `blockIdx.x *
//! blockDim.x + threadIdx.x`), marked as the non-negative `int` it is in every launch the
//! code runs (issue 17).
//!
//! Kernels written with `int` indices divide them as signed numbers: NVRTC's `t / 64` is
//! `(t + ((t >> 31) >>> 26)) >> 6`, its `t % 64` subtracts `(t + …) & -64`. Nothing in the
//! code says `t` is non-negative, so the correction stays, the quotient is not proven the
//! same in a warp's lanes (`stride.rs`), and an embedding gather `table[idx[t / 64] * 64 +
//! t % 64]` tests all 32 addresses of each access at run time (46 ms where the `unsigned`
//! form takes 5).
//!
//! In y and z the index is below 2^31 in every launch (`%ctaid.y < 65535`, `%ntid.y <= 1024`).
//! In x a grid may have 2^31 threads and more: the marks there hold only for launches whose
//! `(grid.x - 1) * max(block.x, S) + 1024` is at most 2^31 (`runtime::fission::FlatX`, `S`
//! the largest constant factor marked); the program tests that at launch and runs any other
//! launch on thread loops (`AlignGuard`), so the code may assume it. The marks are `nsw nuw`
//! on the product and the sum and `!range` on the three context loads (the launch limits):
//! with them InstCombine knows `t` non-negative and drops the correction (`t >> 31` is 0),
//! turns `ashr` into `lshr`, `sext` into `zext nneg`; the warp function's lanes past the
//! block's end have `%tid.x` below 1024 as well, so the flags hold in every lane.

use llvm_sys::core as c;
use llvm_sys::prelude::*;
use llvm_sys::LLVMOpcode as O;

use super::ir;
use crate::runtime::abi::{offset, MAX_THREADS_PER_CTA};

/// What `mark` marked: flat indices in x (under the launch test, `scale` the largest
/// constant factor of `%ctaid.x` among them, 0 for `%ntid.x` alone) and in y or z.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FlatMarks {
    pub x: usize,
    pub scale: u32,
    pub yz: usize,
}

impl FlatMarks {
    /// The launch test the x marks need, if any.
    pub fn guard(&self) -> Option<crate::runtime::fission::FlatX> {
        (self.x > 0).then_some(crate::runtime::fission::FlatX { scale: self.scale })
    }
}

/// The largest `%ctaid.y`/`.z` plus one (the grid limit, `LaunchConfig::validate`).
const GRID_YZ: u64 = 65535;

/// One flat index: the sum, its product, the loads and the dimension.
pub struct Site {
    sum: LLVMValueRef,
    product: LLVMValueRef,
    tid: LLVMValueRef,
    ctaid: LLVMValueRef,
    factor: Factor,
    pub dim: u32,
}

/// The flat indices of `f` (after `sroa`, before its cleanup) that `mark` may mark: those in
/// x only when `x` (the program tests its launches: `FlatMarks::guard`).
///
/// # Safety
/// `f` must be a defined function.
pub unsafe fn find(f: LLVMValueRef, x: bool) -> Vec<Site> {
    let td = llvm_sys::target::LLVMGetModuleDataLayout(c::LLVMGetGlobalParent(f));
    let i32t = c::LLVMInt32TypeInContext(c::LLVMGetModuleContext(c::LLVMGetGlobalParent(f)));
    let mut sites = Vec::new();
    for i in ir::function_instructions(f) {
        if ir::opcode(i) != O::LLVMAdd || c::LLVMTypeOf(i) != i32t {
            continue;
        }
        let (a, b) = (c::LLVMGetOperand(i, 0), c::LLVMGetOperand(i, 1));
        let Some((tid, base, dim)) = [(a, b), (b, a)]
            .into_iter()
            .find_map(|(t, p)| Some((t, p, field(td, t, offset::TID)?)))
        else {
            continue;
        };
        // The lowering's shifts choose 0 for an amount past the width, a constant select
        // until the cleanup folds it.
        let base = chosen(base);
        let Some((ctaid, factor)) = product(td, base, dim) else {
            continue;
        };
        if dim == 0 && !x {
            continue;
        }
        // A constant factor in y/z must keep the sum below 2^31 by itself.
        if let Factor::Const(s) = factor {
            if dim > 0 && (GRID_YZ - 1) * s + MAX_THREADS_PER_CTA as u64 > i32::MAX as u64 {
                continue;
            }
        }
        sites.push(Site {
            sum: i,
            product: base,
            tid,
            ctaid,
            factor,
            dim,
        });
    }
    sites
}

/// Marks `sites` (`find`'s): `nsw nuw` on the product and the sum, `!range` on the loads.
///
/// # Safety
/// The sites' instructions are live.
pub unsafe fn mark(sites: &[Site]) -> FlatMarks {
    let mut marks = FlatMarks::default();
    for s in sites {
        let limit = if s.dim == 0 { i32::MAX as u64 } else { GRID_YZ };
        range(s.ctaid, 0, limit);
        range(s.tid, 0, MAX_THREADS_PER_CTA as u64);
        if let Factor::Ntid(n) = s.factor {
            range(n, 1, MAX_THREADS_PER_CTA as u64 + 1);
        }
        for v in [s.product, s.sum] {
            c::LLVMSetNSW(v, 1);
            c::LLVMSetNUW(v, 1);
        }
        if s.dim == 0 {
            marks.x += 1;
            if let Factor::Const(k) = s.factor {
                marks.scale = marks.scale.max(k as u32);
            }
        } else {
            marks.yz += 1;
        }
    }
    marks
}

/// What `%ctaid` is multiplied by.
#[derive(Clone, Copy)]
enum Factor {
    /// The `%ntid` load of the same dimension.
    Ntid(LLVMValueRef),
    /// A constant (`blockIdx.x * 256`, or a shift), at most `MAX_THREADS_PER_CTA`.
    Const(u64),
}

/// `p` as `%ctaid.k * %ntid.k` (either order) or `%ctaid.k` times or shifted left by a
/// constant: the `%ctaid` load and the factor.
unsafe fn product(
    td: llvm_sys::target::LLVMTargetDataRef,
    p: LLVMValueRef,
    k: u32,
) -> Option<(LLVMValueRef, Factor)> {
    if !ir::is_instruction(p) {
        return None;
    }
    let (a, b) = (c::LLVMGetOperand(p, 0), c::LLVMGetOperand(p, 1));
    let is = |v: LLVMValueRef, base: u32| field(td, v, base) == Some(k);
    match ir::opcode(p) {
        O::LLVMMul => {
            let (ctaid, other) = if is(a, offset::CTAID) {
                (a, b)
            } else if is(b, offset::CTAID) {
                (b, a)
            } else {
                return None;
            };
            if is(other, offset::NTID) {
                return Some((ctaid, Factor::Ntid(other)));
            }
            let s = ir::const_u64(other)?;
            (1..=MAX_THREADS_PER_CTA as u64)
                .contains(&s)
                .then_some((ctaid, Factor::Const(s)))
        }
        O::LLVMShl if is(a, offset::CTAID) => {
            let s = ir::const_u64(b)?;
            (s <= 10).then_some((a, Factor::Const(1 << s)))
        }
        _ => None,
    }
}

/// The arm a `select` with a constant condition takes (`v` itself otherwise).
unsafe fn chosen(v: LLVMValueRef) -> LLVMValueRef {
    if c::LLVMIsASelectInst(v).is_null() {
        return v;
    }
    match ir::const_u64(c::LLVMGetOperand(v, 0)) {
        Some(1) => c::LLVMGetOperand(v, 1),
        Some(_) => c::LLVMGetOperand(v, 2),
        None => v,
    }
}

/// The dimension (0..2) of `v` when it is an `i32` load of the context's field at `base`
/// (`offset::TID`, `NTID`, `CTAID`) plus 4 × that.
unsafe fn field(
    td: llvm_sys::target::LLVMTargetDataRef,
    v: LLVMValueRef,
    base: u32,
) -> Option<u32> {
    let t = c::LLVMTypeOf(v);
    if c::LLVMIsALoadInst(v).is_null()
        || c::LLVMGetTypeKind(t) != llvm_sys::LLVMTypeKind::LLVMIntegerTypeKind
        || c::LLVMGetIntTypeWidth(t) != 32
    {
        return None;
    }
    let off = ir::ctx_offset(td, c::LLVMGetOperand(v, 0))?;
    let d = off.checked_sub(base)?;
    (d % 4 == 0 && d < 12).then_some(d / 4)
}

/// Puts `!range [lo, hi)` on load `v`.
unsafe fn range(v: LLVMValueRef, lo: u64, hi: u64) {
    let cx = c::LLVMGetTypeContext(c::LLVMTypeOf(v));
    let t = c::LLVMTypeOf(v);
    let mut ops = [
        c::LLVMValueAsMetadata(c::LLVMConstInt(t, lo, 0)),
        c::LLVMValueAsMetadata(c::LLVMConstInt(t, hi, 0)),
    ];
    let node = c::LLVMMDNodeInContext2(cx, ops.as_mut_ptr(), 2);
    let kind = c::LLVMGetMDKindIDInContext(cx, c"range".as_ptr(), 5);
    c::LLVMSetMetadata(v, kind, c::LLVMMetadataAsValue(cx, node));
}
