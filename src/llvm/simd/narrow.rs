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
use super::ir;

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
        let ptrs = self.spill(p);
        let out = self.alloca(vt);
        self.call_lanes(LaneCopy::Gather, vt, ptrs, out, m);
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
        let ptrs = self.spill(p);
        let vals = self.spill(v);
        self.call_lanes(LaneCopy::Scatter, c::LLVMTypeOf(v), ptrs, vals, m);
    }

    /// Calls the module's lane loop of `kind` for vectors of type `vt` (`lanes_fn`) on the
    /// pointer slot `ptrs`, the value slot `vals` and mask `m`.
    unsafe fn call_lanes(
        &mut self,
        kind: LaneCopy,
        vt: LLVMTypeRef,
        ptrs: LLVMValueRef,
        vals: LLVMValueRef,
        m: LLVMValueRef,
    ) {
        let count = c::LLVMGetVectorSize(vt);
        let bits = llvm_sys::target::LLVMSizeOfTypeInBits(self.td, c::LLVMGetElementType(vt));
        let it = c::LLVMIntTypeInContext(self.cx, count);
        let (f, ft) = self.lanes_fn(kind, bits as u32, count);
        let mut args = [ptrs, vals, c::LLVMBuildBitCast(self.b, m, it, c"".as_ptr())];
        c::LLVMBuildCall2(self.b, ft, f, args.as_mut_ptr(), 3, c"".as_ptr());
    }

    /// The module's function (made once) `void(ptr ptrs, ptr vals, iC mask)` that copies, for
    /// each lane `l` set in `mask`, lowest first, `bits`-bit element `l` between the pointer
    /// `ptrs[l]` and `vals[l]`: loads (`Gather`) or stores (`Scatter`). One out-of-line loop
    /// per module instead of one inline loop per access: an fp16 kernel has hundreds of these
    /// fallbacks (Triton's matmul: 252), and each inline loop was blocks and a loop for the
    /// optimizer and instruction selection to work through, on a path that consecutive lanes
    /// never take.
    unsafe fn lanes_fn(
        &self,
        kind: LaneCopy,
        bits: u32,
        count: u32,
    ) -> (LLVMValueRef, LLVMTypeRef) {
        let cx = self.cx;
        let it = c::LLVMIntTypeInContext(cx, count);
        let mut pt = [self.ptr, self.ptr, it];
        let ft = c::LLVMFunctionType(c::LLVMVoidTypeInContext(cx), pt.as_mut_ptr(), 3, 0);
        let what = match kind {
            LaneCopy::Gather => "gather",
            LaneCopy::Scatter => "scatter",
        };
        let name = std::ffi::CString::new(format!("ptx2llvm.lanes.{what}.i{bits}x{count}"))
            .expect("no NUL in the name");
        let f = c::LLVMGetNamedFunction(self.m, name.as_ptr());
        if !f.is_null() {
            return (f, ft);
        }
        let f = c::LLVMAddFunction(self.m, name.as_ptr(), ft);
        c::LLVMSetLinkage(f, llvm_sys::LLVMLinkage::LLVMInternalLinkage);
        for a in [
            c"noinline",
            c"nounwind",
            c"nosync",
            c"willreturn",
            c"nofree",
        ] {
            let attr = c::LLVMCreateEnumAttribute(cx, ir::attr_kind(a), 0);
            c::LLVMAddAttributeAtIndex(f, llvm_sys::LLVMAttributeFunctionIndex, attr);
        }
        let e = c::LLVMIntTypeInContext(cx, bits);
        let b = c::LLVMCreateBuilderInContext(cx);
        let n = c"".as_ptr();
        let entry = c::LLVMAppendBasicBlockInContext(cx, f, c"entry".as_ptr());
        let head = c::LLVMAppendBasicBlockInContext(cx, f, c"lanes.loop".as_ptr());
        let step = c::LLVMAppendBasicBlockInContext(cx, f, c"lanes.step".as_ptr());
        let done = c::LLVMAppendBasicBlockInContext(cx, f, c"lanes.done".as_ptr());
        let (ptrs, vals, mask) = (
            c::LLVMGetParam(f, 0),
            c::LLVMGetParam(f, 1),
            c::LLVMGetParam(f, 2),
        );
        c::LLVMPositionBuilderAtEnd(b, entry);
        c::LLVMBuildBr(b, head);
        c::LLVMPositionBuilderAtEnd(b, head);
        let left = c::LLVMBuildPhi(b, it, n);
        let none = c::LLVMBuildICmp(b, P::LLVMIntEQ, left, c::LLVMConstNull(it), n);
        c::LLVMBuildCondBr(b, none, done, step);
        c::LLVMPositionBuilderAtEnd(b, step);
        let (cf, cft) = self.intrinsic("llvm.cttz", &mut [it]);
        let mut args = [left, c::LLVMConstInt(self.i1, 1, 0)];
        let lane = c::LLVMBuildCall2(b, cft, cf, args.as_mut_ptr(), 2, n);
        let idx = match count.cmp(&64) {
            std::cmp::Ordering::Equal => lane,
            std::cmp::Ordering::Greater => c::LLVMBuildTrunc(b, lane, self.i64, n),
            std::cmp::Ordering::Less => c::LLVMBuildZExt(b, lane, self.i64, n),
        };
        let mut gi = [idx];
        let pp = c::LLVMBuildGEP2(b, self.ptr, ptrs, gi.as_mut_ptr(), 1, n);
        let pl = c::LLVMBuildLoad2(b, self.ptr, pp, n);
        let q = c::LLVMBuildGEP2(b, e, vals, gi.as_mut_ptr(), 1, n);
        match kind {
            LaneCopy::Gather => {
                let v = c::LLVMBuildLoad2(b, e, pl, n);
                c::LLVMBuildStore(b, v, q);
            }
            LaneCopy::Scatter => {
                let v = c::LLVMBuildLoad2(b, e, q, n);
                c::LLVMBuildStore(b, v, pl);
            }
        }
        let minus = c::LLVMBuildSub(b, left, c::LLVMConstInt(it, 1, 0), n);
        let rest = c::LLVMBuildAnd(b, left, minus, n);
        c::LLVMBuildBr(b, head);
        let mut vs = [mask, rest];
        let mut bbs = [entry, step];
        c::LLVMAddIncoming(left, vs.as_mut_ptr(), bbs.as_mut_ptr(), 2);
        c::LLVMPositionBuilderAtEnd(b, done);
        c::LLVMBuildRetVoid(b);
        c::LLVMDisposeBuilder(b);
        (f, ft)
    }

    /// Vector `v` stored in a stack slot of its own, whose elements the loop reads one by one
    /// (a variable-index `extractelement` would store the whole vector in every iteration).
    unsafe fn spill(&mut self, v: LLVMValueRef) -> LLVMValueRef {
        let s = self.alloca(c::LLVMTypeOf(v));
        c::LLVMBuildStore(self.b, v, s);
        s
    }
}

/// Which way `Warp::lanes_fn`'s loop copies.
#[derive(Clone, Copy)]
enum LaneCopy {
    Gather,
    Scatter,
}
