//! The lowering's alignment tests (`lower::memory::check_aligned`: calls of
//! `ptx2llvm.misaligned_if`) taken out of the kernels the warp engine vectorizes.
//!
//! The warp engine does not test alignment yet (a documented gap, `COVERAGE.md`): `strip`
//! deletes the calls before its cleanup, which then drops the tests' arithmetic, so its
//! kernels are what they were. Tried first: the tests as branches to a failing block (its
//! `unreachable` made a second end of the kernel: a divergent branch before one had no
//! post-dominator short of the exit, and every barrier after it was refused as under
//! divergent control flow), then one test per warp on the running lanes' bits on a cold
//! branch inside the warp function (correct, but the branches split its straight-line code:
//! 13 lit IR and plan snapshots changed, not measured in time). That version is in
//! `/work/notes/s28/fid18-warp-checks.patch`.

use llvm_sys::core as c;
use llvm_sys::prelude::*;

use super::ir;

/// The function the lowering's tests call (`lower::memory::MISALIGNED_IF`).
pub const CHECK: &str = crate::lower::memory::MISALIGNED_IF;

/// Deletes every call of `CHECK` in `f`; returns how many.
///
/// # Safety
/// `f` must be a defined function.
pub unsafe fn strip(f: LLVMValueRef) -> usize {
    let mut n = 0;
    for i in ir::function_instructions(f) {
        if !c::LLVMIsACallInst(i).is_null() && ir::callee(i) == CHECK {
            c::LLVMInstructionEraseFromParent(i);
            n += 1;
        }
    }
    n
}
