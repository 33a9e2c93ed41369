//! The warp matrix instructions `mma.sync`, `ldmatrix`, `stmatrix` and `movmatrix` in the warp
//! function, each as one whole-warp runtime call. The scalar lowering
//! (`target/cpu/matrix.rs`) passes a lane's fragment registers in stack arrays (`frag`
//! allocas: constant-offset stores before the call, loads of the result after it); here
//! those arrays hold all 32 lanes, component-major (`<32 x i32>` per word), with the lanes'
//! row addresses beside them, and `ptx2llvm_rt_warp_mma` (`_ldmatrix`, …) computes the warp's
//! result from them directly — no per-lane calls and no exchange area (`runtime/matrix.rs`,
//! which keeps the one copy of the layouts for both engines).

use llvm_sys::core as c;
use llvm_sys::prelude::*;
use llvm_sys::LLVMOpcode as O;

use super::emit::{Warp, LANES};
use super::ir::{self, WarpCall};
use super::uniform::{call_kind, CallKind};

/// The byte offset of `p` into alloca `a`: `a` itself, or a GEP of it by a constant.
pub unsafe fn frag_offset(
    td: llvm_sys::target::LLVMTargetDataRef,
    a: LLVMValueRef,
    p: LLVMValueRef,
) -> Option<u64> {
    if p == a {
        return Some(0);
    }
    if c::LLVMIsAGetElementPtrInst(p).is_null()
        || c::LLVMGetNumOperands(p) != 2
        || c::LLVMGetOperand(p, 0) != a
    {
        return None;
    }
    let k = ir::const_u64(c::LLVMGetOperand(p, 1))?;
    let size = llvm_sys::target::LLVMABISizeOfType(td, c::LLVMGetGEPSourceElementType(p));
    k.checked_mul(size)
}

/// Whether `p` points into a fragment array (an alloca, or a GEP of one): its loads are the
/// results of a matrix operation, which differ between lanes.
pub unsafe fn is_frag_ptr(p: LLVMValueRef) -> bool {
    let base = if !c::LLVMIsAGetElementPtrInst(p).is_null() {
        c::LLVMGetOperand(p, 0)
    } else {
        p
    };
    !c::LLVMIsAAllocaInst(base).is_null()
}

/// The position of the first fragment-array argument of matrix call `i` (the arguments from
/// there on are arrays), if it is one that takes them.
unsafe fn frag_args(i: LLVMValueRef) -> Option<usize> {
    match call_kind(i) {
        CallKind::Warp(WarpCall::Mma) => Some(3),
        CallKind::Warp(WarpCall::LdMatrix | WarpCall::StMatrix) => Some(5),
        _ => None,
    }
}

/// Whether alloca `a` is a fragment array of matrix calls: only stored to and loaded from at
/// constant 4-byte-aligned offsets by 32- and 64-bit values, and passed to `mma`, `ldmatrix`
/// or `stmatrix` calls as fragments.
pub unsafe fn frag_slot(td: llvm_sys::target::LLVMTargetDataRef, a: LLVMValueRef) -> bool {
    let access_ok = |user: LLVMValueRef, p: LLVMValueRef| -> bool {
        let t = match ir::opcode(user) {
            O::LLVMLoad => c::LLVMTypeOf(user),
            O::LLVMStore if c::LLVMGetOperand(user, 1) == p => {
                c::LLVMTypeOf(c::LLVMGetOperand(user, 0))
            }
            _ => return false,
        };
        // Packed 16-bit pairs arrive as `<2 x half>`/`<2 x bfloat>`: whole words too.
        let bits = llvm_sys::target::LLVMSizeOfTypeInBits(td, t);
        (bits == 32 || bits == 64) && frag_offset(td, a, p).is_some_and(|o| o % 4 == 0)
    };
    let mut used = false;
    let mut u = c::LLVMGetFirstUse(a);
    while !u.is_null() {
        let user = c::LLVMGetUser(u);
        let ok = if !c::LLVMIsACallInst(user).is_null() {
            if let Some(first) = frag_args(user) {
                let args = ir::args(user);
                used = true;
                args[first..].contains(&a) && !args[..first].contains(&a)
            } else {
                ir::callee(user).starts_with("llvm.lifetime")
            }
        } else if !c::LLVMIsAGetElementPtrInst(user).is_null() {
            frag_offset(td, a, user).is_some() && {
                let mut ok = true;
                let mut v = c::LLVMGetFirstUse(user);
                while !v.is_null() {
                    ok &= access_ok(c::LLVMGetUser(v), user);
                    v = c::LLVMGetNextUse(v);
                }
                ok
            }
        } else {
            access_ok(user, a)
        };
        if !ok {
            return false;
        }
        u = c::LLVMGetNextUse(u);
    }
    used
}

impl Warp<'_> {
    /// Whether original instruction `i` only addresses or fills a fragment array (the `mma`
    /// call reads what the stores store; the loads are served from `pred_slots`).
    pub(super) unsafe fn frag_access(&self, i: LLVMValueRef) -> bool {
        match ir::opcode(i) {
            O::LLVMGetElementPtr => is_frag_ptr(i),
            O::LLVMStore => is_frag_ptr(c::LLVMGetOperand(i, 1)),
            _ => false,
        }
    }

    /// `ptx2llvm_rt_mma(t, pc, kind, a, b, c, d)` for the whole warp.
    pub(super) unsafe fn mma(&mut self, i: LLVMValueRef) -> Result<(), String> {
        let args = ir::args(i);
        let kind = args[2];
        if ir::const_u64(kind).is_none() {
            return Err("`mma.sync` of a kind computed at run time".into());
        }
        let words = |s: &Self, a: LLVMValueRef| -> u64 {
            let mut top = 1u64;
            let mut u = c::LLVMGetFirstUse(a);
            while !u.is_null() {
                let user = c::LLVMGetUser(u);
                let mut visit = |p: LLVMValueRef, x: LLVMValueRef| {
                    let t = if ir::opcode(x) == O::LLVMLoad {
                        c::LLVMTypeOf(x)
                    } else if ir::opcode(x) == O::LLVMStore {
                        c::LLVMTypeOf(c::LLVMGetOperand(x, 0))
                    } else {
                        return;
                    };
                    let w = llvm_sys::target::LLVMSizeOfTypeInBits(s.td, t) / 32;
                    if let Some(o) = frag_offset(s.td, a, p) {
                        top = top.max(o / 4 + w);
                    }
                };
                if !c::LLVMIsAGetElementPtrInst(user).is_null() {
                    let mut v = c::LLVMGetFirstUse(user);
                    while !v.is_null() {
                        visit(user, c::LLVMGetUser(v));
                        v = c::LLVMGetNextUse(v);
                    }
                } else {
                    visit(a, user);
                }
                u = c::LLVMGetNextUse(u);
            }
            top
        };
        let mut arrays = Vec::new();
        for (k, &a) in args[3..7].iter().enumerate() {
            let arr = self.words_array(words(self, a));
            if k < 3 {
                self.gather_stores(a, arr);
            }
            arrays.push(arr);
        }
        let mut pt = [self.ptr, self.i32, self.ptr, self.ptr, self.ptr, self.ptr];
        let mut xs = [self.ctx, kind, arrays[0], arrays[1], arrays[2], arrays[3]];
        self.call_rt(c"ptx2llvm_rt_warp_mma", &mut pt, &mut xs);
        self.serve_loads(args[6], arrays[3]);
        Ok(())
    }

    /// Serves the loads of fragment array `d` (after the call) from the component-major
    /// words of `arr` that the whole-warp call filled.
    unsafe fn serve_loads(&mut self, d: LLVMValueRef, arr: LLVMValueRef) {
        let b = self.b;
        let n = c"".as_ptr();
        for (p, ld) in frag_users(d, O::LLVMLoad) {
            let Some(off) = frag_offset(self.td, d, p) else {
                continue;
            };
            let t = c::LLVMTypeOf(ld);
            let bits = llvm_sys::target::LLVMSizeOfTypeInBits(self.td, t);
            let lo = self.word(arr, off / 4);
            let v = if bits == 64 {
                let hi = self.word(arr, off / 4 + 1);
                let vt64 = c::LLVMVectorType(self.i64, LANES);
                let lo = c::LLVMBuildZExt(b, lo, vt64, n);
                let hi = c::LLVMBuildZExt(b, hi, vt64, n);
                let sh = c::LLVMBuildShl(b, hi, self.splat(c::LLVMConstInt(self.i64, 32, 0)), n);
                c::LLVMBuildOr(b, lo, sh, n)
            } else {
                lo
            };
            let v = c::LLVMBuildBitCast(b, v, self.vty(t), n);
            self.pred_slots.insert(p, v);
        }
    }

    /// Fills the component-major array `arr` from the stores into fragment array `a` (before
    /// the call): all lanes' values, zeros in the lanes not running.
    unsafe fn gather_stores(&mut self, a: LLVMValueRef, arr: LLVMValueRef) {
        for (p, st) in frag_users(a, O::LLVMStore) {
            let Some(off) = frag_offset(self.td, a, p) else {
                continue;
            };
            let v = self.get(c::LLVMGetOperand(st, 0), true);
            self.put_words(arr, off / 4, v);
        }
    }

    /// A stack array of `words` component-major words (`<32 x i32>` each, at their alignment).
    unsafe fn words_array(&self, words: u64) -> LLVMValueRef {
        let arr = self.alloca(c::LLVMArrayType2(self.i32, words * LANES as u64));
        c::LLVMSetAlignment(arr, 128);
        arr
    }

    /// Declares (once) and calls the runtime's void function `name` with `xs` of types `pt`.
    unsafe fn call_rt(
        &self,
        name: &std::ffi::CStr,
        pt: &mut [LLVMTypeRef],
        xs: &mut [LLVMValueRef],
    ) {
        let ft = c::LLVMFunctionType(
            c::LLVMVoidTypeInContext(self.cx),
            pt.as_mut_ptr(),
            pt.len() as u32,
            0,
        );
        let mut f = c::LLVMGetNamedFunction(self.m, name.as_ptr());
        if f.is_null() {
            f = c::LLVMAddFunction(self.m, name.as_ptr(), ft);
        }
        c::LLVMBuildCall2(
            self.b,
            ft,
            f,
            xs.as_mut_ptr(),
            xs.len() as u32,
            c"".as_ptr(),
        );
    }

    /// `ldmatrix`/`stmatrix` (`ptx2llvm_rt_ldmatrix(t, pc, num, trans, addr, regs)`) for the
    /// whole warp: the lanes' row addresses (zeros for lanes not running, which read or write
    /// nothing) and registers go to `ptx2llvm_rt_warp_ldmatrix`/`_stmatrix`.
    pub(super) unsafe fn ldst_matrix(
        &mut self,
        i: LLVMValueRef,
        w: WarpCall,
    ) -> Result<(), String> {
        let b = self.b;
        let n = c"".as_ptr();
        let args = ir::args(i);
        let (Some(num), Some(trans)) = (ir::const_u64(args[2]), ir::const_u64(args[3])) else {
            return Err(format!(
                "`{}` of a shape computed at run time",
                w.spelling()
            ));
        };
        let vt64 = c::LLVMVectorType(self.i64, LANES);
        let addr = self.get(args[4], true);
        let addr = c::LLVMBuildSelect(b, self.mask, addr, c::LLVMConstNull(vt64), n);
        let addrs = self.alloca(vt64);
        c::LLVMSetAlignment(addrs, 128);
        c::LLVMBuildStore(b, addr, addrs);
        let regs = self.words_array(num);
        if w == WarpCall::StMatrix {
            self.gather_stores(args[5], regs);
        }
        let mut pt = [self.i32, self.i32, self.i32, self.ptr, self.ptr];
        let mut xs = [
            self.c32(num),
            self.c32(trans),
            self.bits(self.mask),
            addrs,
            regs,
        ];
        let name = if w == WarpCall::LdMatrix {
            c"ptx2llvm_rt_warp_ldmatrix"
        } else {
            c"ptx2llvm_rt_warp_stmatrix"
        };
        self.call_rt(name, &mut pt, &mut xs);
        if w == WarpCall::LdMatrix {
            self.serve_loads(args[5], regs);
        }
        Ok(())
    }

    /// `movmatrix` (`ptx2llvm_rt_movmatrix(t, pc, a)`) for the whole warp, through
    /// `ptx2llvm_rt_warp_movmatrix` (lanes not running give zeros, as missing lanes do on
    /// the coroutine scheme).
    pub(super) unsafe fn movmatrix(&mut self, i: LLVMValueRef) -> Result<(), String> {
        let a = ir::args(i)[2];
        let src = self.words_array(1);
        let v = self.get(a, true);
        self.put_words(src, 0, v);
        let dst = self.words_array(1);
        let mut pt = [self.ptr, self.ptr];
        let mut xs = [src, dst];
        self.call_rt(c"ptx2llvm_rt_warp_movmatrix", &mut pt, &mut xs);
        let r = self.word(dst, 0);
        self.set(i, r);
        Ok(())
    }

    /// Word `k` of all lanes of a component-major array.
    unsafe fn word(&self, arr: LLVMValueRef, k: u64) -> LLVMValueRef {
        let vt = c::LLVMVectorType(self.i32, LANES);
        let p = self.word_ptr(arr, k);
        c::LLVMBuildLoad2(self.b, vt, p, c"".as_ptr())
    }

    unsafe fn word_ptr(&self, arr: LLVMValueRef, k: u64) -> LLVMValueRef {
        let mut idx = [c::LLVMConstInt(self.i64, k * LANES as u64, 0)];
        c::LLVMBuildGEP2(self.b, self.i32, arr, idx.as_mut_ptr(), 1, c"".as_ptr())
    }

    /// Stores the lanes of `v` (32- or 64-bit elements) as words `k` (and `k + 1`); lanes
    /// not running give zeros, as the coroutine scheme's missing lanes do.
    unsafe fn put_words(&self, arr: LLVMValueRef, k: u64, v: LLVMValueRef) {
        let b = self.b;
        let n = c"".as_ptr();
        // Bits per lane (a lane of `<64 x bfloat>` is a pair).
        let bits = llvm_sys::target::LLVMSizeOfTypeInBits(self.td, c::LLVMTypeOf(v)) / LANES as u64;
        let vt = c::LLVMVectorType(self.i32, LANES);
        if bits == 64 {
            let vt64 = c::LLVMVectorType(self.i64, LANES);
            let x = c::LLVMBuildBitCast(b, v, vt64, n);
            let x = c::LLVMBuildSelect(b, self.mask, x, c::LLVMConstNull(vt64), n);
            let lo = c::LLVMBuildTrunc(b, x, vt, n);
            let hi = c::LLVMBuildLShr(b, x, self.splat(c::LLVMConstInt(self.i64, 32, 0)), n);
            let hi = c::LLVMBuildTrunc(b, hi, vt, n);
            c::LLVMBuildStore(b, lo, self.word_ptr(arr, k));
            c::LLVMBuildStore(b, hi, self.word_ptr(arr, k + 1));
        } else {
            let x = c::LLVMBuildBitCast(b, v, vt, n);
            let x = c::LLVMBuildSelect(b, self.mask, x, c::LLVMConstNull(vt), n);
            c::LLVMBuildStore(b, x, self.word_ptr(arr, k));
        }
    }
}

/// The loads or stores (`op`) of fragment array `a`, with the pointer each uses.
unsafe fn frag_users(a: LLVMValueRef, op: O) -> Vec<(LLVMValueRef, LLVMValueRef)> {
    let mut out = Vec::new();
    let mut take = |p: LLVMValueRef, x: LLVMValueRef| {
        if ir::opcode(x) == op && (op == O::LLVMLoad || c::LLVMGetOperand(x, 1) == p) {
            out.push((p, x));
        }
    };
    let mut u = c::LLVMGetFirstUse(a);
    while !u.is_null() {
        let user = c::LLVMGetUser(u);
        if !c::LLVMIsAGetElementPtrInst(user).is_null() {
            let mut v = c::LLVMGetFirstUse(user);
            while !v.is_null() {
                take(user, c::LLVMGetUser(v));
                v = c::LLVMGetNextUse(v);
            }
        } else if c::LLVMIsACallInst(user).is_null() {
            take(a, user);
        }
        u = c::LLVMGetNextUse(u);
    }
    out
}
