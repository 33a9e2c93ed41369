//! Gathers and scatters of 8- and 16-bit elements in the warp function, as a loop over the
//! active lanes instead of `llvm.masked.gather`/`llvm.masked.scatter`. x86 has no gather or
//! scatter of elements narrower than 32 bits, so LLVM expands those intrinsics lane by lane: 32
//! conditional blocks each, which made instruction selection and register allocation of
//! Triton's fp16 matmul (192 such accesses per warp function) take most of its ~50 s compile.
//! The loop is a few instructions whatever the lane count, costs about as much per active lane
//! at run time (a load of the lane's pointer and value from a stack copy, one access), and
//! keeps the intrinsics' meaning: lanes in increasing order (a later lane's store wins), the
//! masked-off lanes untouched.

use llvm_sys::core as c;
use llvm_sys::prelude::*;
use llvm_sys::LLVMIntPredicate as P;

use super::emit::Warp;

impl Warp<'_> {
    /// Whether a gather or scatter of vector type `vt` takes the lane loop (elements narrower
    /// than 32 bits).
    pub(super) unsafe fn narrow(&self, vt: LLVMTypeRef) -> bool {
        let e = c::LLVMGetElementType(vt);
        llvm_sys::target::LLVMSizeOfTypeInBits(self.td, e) < 32
    }

    /// The elements at pointers `p` (`<n x ptr>`) of the lanes set in mask `m` (`<n x i1>`),
    /// as a `vt` (`<n x E>`; the others poison), by a loop over the set lanes.
    pub(super) unsafe fn gather_loop(
        &mut self,
        vt: LLVMTypeRef,
        p: LLVMValueRef,
        m: LLVMValueRef,
    ) -> LLVMValueRef {
        let e = c::LLVMGetElementType(vt);
        let count = c::LLVMGetVectorSize(vt);
        let ptrs = self.spill(p);
        let out = self.alloca(vt);
        self.lane_loop(m, count, |w, idx| {
            let b = w.b;
            let n = c"".as_ptr();
            let pl = w.element(ptrs, c::LLVMTypeOf(p), idx);
            let v = c::LLVMBuildLoad2(b, e, pl, n);
            let mut gi = [idx];
            let q = c::LLVMBuildGEP2(b, e, out, gi.as_mut_ptr(), 1, n);
            c::LLVMBuildStore(b, v, q);
        });
        c::LLVMBuildLoad2(self.b, vt, out, c"".as_ptr())
    }

    /// Stores element `l` of `v` at pointer `l` of `p` for the lanes `l` set in mask `m`, in
    /// increasing order, by a loop over the set lanes.
    pub(super) unsafe fn scatter_loop(
        &mut self,
        v: LLVMValueRef,
        p: LLVMValueRef,
        m: LLVMValueRef,
    ) {
        let vt = c::LLVMTypeOf(v);
        let e = c::LLVMGetElementType(vt);
        let count = c::LLVMGetVectorSize(vt);
        let ptrs = self.spill(p);
        let vals = self.spill(v);
        self.lane_loop(m, count, |w, idx| {
            let b = w.b;
            let n = c"".as_ptr();
            let pl = w.element(ptrs, c::LLVMTypeOf(p), idx);
            let mut gi = [idx];
            let q = c::LLVMBuildGEP2(b, e, vals, gi.as_mut_ptr(), 1, n);
            let x = c::LLVMBuildLoad2(b, e, q, n);
            c::LLVMBuildStore(b, x, pl);
        });
    }

    /// Vector `v` stored in a stack slot of its own, whose elements the loop reads one by one
    /// (a variable-index `extractelement` would store the whole vector in every iteration).
    unsafe fn spill(&mut self, v: LLVMValueRef) -> LLVMValueRef {
        let s = self.alloca(c::LLVMTypeOf(v));
        c::LLVMBuildStore(self.b, v, s);
        s
    }

    /// Element `idx` (an `i64`) of the vector of type `vt` stored at `s`.
    unsafe fn element(&self, s: LLVMValueRef, vt: LLVMTypeRef, idx: LLVMValueRef) -> LLVMValueRef {
        let e = c::LLVMGetElementType(vt);
        let mut gi = [idx];
        let q = c::LLVMBuildGEP2(self.b, e, s, gi.as_mut_ptr(), 1, c"".as_ptr());
        c::LLVMBuildLoad2(self.b, e, q, c"".as_ptr())
    }

    /// Runs `body(idx)` for each lane set in mask `m` (`<count x i1>`), lowest first, the
    /// builder left after the loop.
    unsafe fn lane_loop(
        &mut self,
        m: LLVMValueRef,
        count: u32,
        mut body: impl FnMut(&mut Self, LLVMValueRef),
    ) {
        let b = self.b;
        let n = c"".as_ptr();
        let it = c::LLVMIntTypeInContext(self.cx, count);
        let bits = c::LLVMBuildBitCast(b, m, it, n);
        let from = c::LLVMGetInsertBlock(b);
        let head = self.append("lanes.loop");
        let step = self.append("lanes.step");
        let done = self.append("lanes.done");
        c::LLVMBuildBr(b, head);
        c::LLVMPositionBuilderAtEnd(b, head);
        let left = c::LLVMBuildPhi(b, it, n);
        let none = c::LLVMBuildICmp(b, P::LLVMIntEQ, left, c::LLVMConstNull(it), n);
        c::LLVMBuildCondBr(b, none, done, step);
        c::LLVMPositionBuilderAtEnd(b, step);
        let mut tys = [it];
        let mut args = [left, c::LLVMConstInt(self.i1, 1, 0)];
        let lane = self.call_intrinsic("llvm.cttz", &mut tys, &mut args);
        let idx = if count == 64 {
            lane
        } else if count > 64 {
            c::LLVMBuildTrunc(b, lane, self.i64, n)
        } else {
            c::LLVMBuildZExt(b, lane, self.i64, n)
        };
        body(self, idx);
        let minus = c::LLVMBuildSub(b, left, c::LLVMConstInt(it, 1, 0), n);
        let rest = c::LLVMBuildAnd(b, left, minus, n);
        let end = c::LLVMGetInsertBlock(b);
        c::LLVMBuildBr(b, head);
        let mut vals = [bits, rest];
        let mut bbs = [from, end];
        c::LLVMAddIncoming(left, vals.as_mut_ptr(), bbs.as_mut_ptr(), 2);
        c::LLVMPositionBuilderAtEnd(b, done);
    }
}
