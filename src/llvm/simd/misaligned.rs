//! The lowering's alignment tests (`lower::memory::check_aligned`: calls of
//! `ptx2llvm.misaligned_if`) in the kernels the warp engine vectorizes: made once per launch
//! on the parameters instead of per access.
//!
//! `classify` reads each test's address before `strip` deletes the tests (the cleanup then
//! drops their arithmetic, so the warp code is what it was without them). An address that
//! is a sum of kernel parameters, `.shared`/`.global` variables aligned enough and values
//! that are multiples of the access's size (`4 * i`, a phi that steps by such values) is
//! aligned in every thread whenever the parameters' low bits are clear: the launch tests
//! those (`runtime::fission::AlignGuard`) and runs on the engine the kernel gets without the
//! warp engine when one is not clear, which tests each access and names the faulting thread.
//! An address that depends on loaded data or on values of another shape leaves the kernel
//! `Alignment::Unchecked`: a documented gap (`COVERAGE.md`), the accesses run untested.
//!
//! Tried first: the tests as branches to a failing block (its `unreachable` made a second end
//! of the kernel: a divergent branch before one had no post-dominator short of the exit, and
//! every barrier after it was refused as under divergent control flow), then one test per
//! warp on the running lanes' bits on a cold branch inside the warp function (correct, but
//! the branches split its straight-line code: 13 lit IR and plan snapshots changed, not
//! measured in time). That version is in `/work/notes/s28/fid18-warp-checks.patch`.

use std::collections::HashMap;

use llvm_sys::core as c;
use llvm_sys::prelude::*;
use llvm_sys::{LLVMIntPredicate, LLVMOpcode as O, LLVMTypeKind};

use super::ir;
use crate::llvm::cpu::ParamPlace;
use crate::runtime::fission::ParamAlign;

/// The function the lowering's tests call (`lower::memory::MISALIGNED_IF`).
pub const CHECK: &str = crate::lower::memory::MISALIGNED_IF;

/// Steps of the address walk per kernel: a bound on a walk that tries both factors of each
/// product (whichever needs fewer parameters wins).
const BUDGET: usize = 20_000;

/// How a warp-engine kernel's accesses are tested for alignment.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum Alignment {
    /// The kernel has no test (byte accesses only, or none).
    #[default]
    NoTests,
    /// Every test passes when these parameters pass theirs: tested at launch.
    Launch(Vec<ParamAlign>),
    /// Some address is not such a sum (why): its accesses are not tested.
    Unchecked(String),
}

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

/// A copy of kernel `f`'s body with its tests, taken before `strip`, for a kernel the warp
/// engine may still refuse (its refusals come after the cleanup): `restore` gives the copy
/// back to `f`, so the thread loops or coroutines that run a refused kernel test each access
/// as they do without the warp engine; `discard` drops it when the warp code is built, which
/// leaves the warp engine's code as it was without the copy. The copy is a function of its
/// own (internal, next to `f`) whose blocks move back into `f`: `f` keeps its identity,
/// attributes and name for the engines that look it up.
///
/// # Safety
/// `f` must be a defined function (no `blockaddress`, no debug records: `-g` kernels never
/// reach the warp engine).
pub unsafe fn keep(f: LLVMValueRef) -> LLVMValueRef {
    let m = c::LLVMGetGlobalParent(f);
    let ctx = c::LLVMGetModuleContext(m);
    let g = c::LLVMAddFunction(
        m,
        c"ptx2llvm.unstripped".as_ptr(),
        c::LLVMGlobalGetValueType(f),
    );
    c::LLVMSetLinkage(g, llvm_sys::LLVMLinkage::LLVMInternalLinkage);
    let mut map: HashMap<LLVMValueRef, LLVMValueRef> = HashMap::new();
    for k in 0..c::LLVMCountParams(f) {
        map.insert(c::LLVMGetParam(f, k), c::LLVMGetParam(g, k));
    }
    let b = c::LLVMCreateBuilderInContext(ctx);
    let mut copies = Vec::new();
    let mut phis = Vec::new();
    for bb in ir::blocks(f) {
        let nb = c::LLVMAppendBasicBlockInContext(ctx, g, c::LLVMGetBasicBlockName(bb));
        map.insert(c::LLVMBasicBlockAsValue(bb), c::LLVMBasicBlockAsValue(nb));
        c::LLVMPositionBuilderAtEnd(b, nb);
        for i in ir::instructions(bb) {
            // A phi's incoming blocks are not operands: a new phi takes them (below).
            let n = if ir::opcode(i) == O::LLVMPHI {
                let n = c::LLVMBuildPhi(b, c::LLVMTypeOf(i), c"".as_ptr());
                llvm_sys::debuginfo::LLVMInstructionSetDebugLoc(
                    n,
                    llvm_sys::debuginfo::LLVMInstructionGetDebugLoc(i),
                );
                phis.push((i, n));
                n
            } else {
                let n = c::LLVMInstructionClone(i);
                c::LLVMInsertIntoBuilder(b, n);
                copies.push(n);
                n
            };
            let mut len = 0;
            let name = c::LLVMGetValueName2(i, &mut len);
            c::LLVMSetValueName2(n, name, len);
            map.insert(i, n);
        }
    }
    c::LLVMDisposeBuilder(b);
    for n in copies {
        for k in 0..c::LLVMGetNumOperands(n) as u32 {
            if let Some(&v) = map.get(&c::LLVMGetOperand(n, k)) {
                c::LLVMSetOperand(n, k, v);
            }
        }
    }
    for (i, n) in phis {
        for k in 0..c::LLVMCountIncoming(i) {
            let v = c::LLVMGetIncomingValue(i, k);
            let mut v = map.get(&v).copied().unwrap_or(v);
            let bb = c::LLVMBasicBlockAsValue(c::LLVMGetIncomingBlock(i, k));
            let mut nb = c::LLVMValueAsBasicBlock(map[&bb]);
            c::LLVMAddIncoming(n, &mut v, &mut nb, 1);
        }
    }
    g
}

/// Gives `f` back the body `keep` copied (`copy`), in place of what the warp engine's
/// preparation made of it.
///
/// # Safety
/// `copy` is `keep(f)`'s result; nothing outside `f` uses `f`'s instructions.
pub unsafe fn restore(f: LLVMValueRef, copy: LLVMValueRef) {
    let old = ir::blocks(f);
    for &bb in &old {
        for i in ir::instructions(bb) {
            if c::LLVMGetTypeKind(c::LLVMTypeOf(i)) != LLVMTypeKind::LLVMVoidTypeKind {
                c::LLVMReplaceAllUsesWith(i, c::LLVMGetPoison(c::LLVMTypeOf(i)));
            }
        }
    }
    for &bb in &old {
        for i in ir::instructions(bb) {
            c::LLVMInstructionEraseFromParent(i);
        }
    }
    for bb in old {
        c::LLVMDeleteBasicBlock(bb);
    }
    for k in 0..c::LLVMCountParams(f) {
        c::LLVMReplaceAllUsesWith(c::LLVMGetParam(copy, k), c::LLVMGetParam(f, k));
    }
    for bb in ir::blocks(copy) {
        c::LLVMRemoveBasicBlockFromParent(bb);
        c::LLVMAppendExistingBasicBlock(f, bb);
    }
    c::LLVMDeleteFunction(copy);
}

/// Drops `keep`'s copy: the warp code is built.
///
/// # Safety
/// `copy` is `keep`'s result, not used since.
pub unsafe fn discard(copy: LLVMValueRef) {
    c::LLVMDeleteFunction(copy);
}

/// The launch test that makes every alignment test of kernel function `f` (parameters
/// `params`, in its arguments' order) pass, if its addresses allow one.
///
/// # Safety
/// `f` must be a defined function in SSA form, its tests as the lowering wrote them.
pub unsafe fn classify(f: LLVMValueRef, params: &[ParamPlace]) -> Alignment {
    let mut budget = BUDGET;
    let mut masks: Vec<(u32, u64)> = Vec::new();
    let mut any = false;
    for i in ir::function_instructions(f) {
        if c::LLVMIsACallInst(i).is_null() || ir::callee(i) != CHECK {
            continue;
        }
        any = true;
        let bad = c::LLVMGetOperand(i, 0);
        if ir::const_u64(bad) == Some(0) {
            continue;
        }
        let Some((addr, mask)) = low_bits_test(bad) else {
            return Alignment::Unchecked("a test of another shape".into());
        };
        let mut w = Walk {
            f,
            budget: &mut budget,
            stack: Vec::new(),
        };
        let Some(leaves) = w.aligned(addr, mask, 0) else {
            return Alignment::Unchecked(if budget == 0 {
                "addresses too large to follow".into()
            } else {
                "an address from loaded data or not a sum of parameters and multiples of \
                 the access's size"
                    .into()
            });
        };
        for (p, lm) in leaves {
            match masks.iter_mut().find(|m| m.0 == p) {
                Some(m) => m.1 |= lm,
                None => masks.push((p, lm)),
            }
        }
    }
    if !any {
        return Alignment::NoTests;
    }
    masks.sort_unstable();
    let mut tests = Vec::new();
    for (p, mask) in masks {
        let arg = c::LLVMGetParam(f, p);
        let ty = c::LLVMTypeOf(arg);
        let bytes = match c::LLVMGetTypeKind(ty) {
            LLVMTypeKind::LLVMIntegerTypeKind => c::LLVMGetIntTypeWidth(ty).div_ceil(8),
            LLVMTypeKind::LLVMPointerTypeKind => 8,
            _ => return Alignment::Unchecked("a parameter of another type".into()),
        };
        let Some(place) = params.get(p as usize).filter(|pl| !pl.aggregate) else {
            return Alignment::Unchecked("an aggregate parameter".into());
        };
        tests.push(ParamAlign {
            offset: place.offset,
            bytes,
            mask,
        });
    }
    Alignment::Launch(tests)
}

/// `(a, m)` of the lowering's `icmp ne (and a, m), 0`.
unsafe fn low_bits_test(bad: LLVMValueRef) -> Option<(LLVMValueRef, u64)> {
    if c::LLVMIsAICmpInst(bad).is_null()
        || c::LLVMGetICmpPredicate(bad) != LLVMIntPredicate::LLVMIntNE
        || ir::const_u64(c::LLVMGetOperand(bad, 1)) != Some(0)
    {
        return None;
    }
    let and = c::LLVMGetOperand(bad, 0);
    if !ir::is_instruction(and) || ir::opcode(and) != O::LLVMAnd {
        return None;
    }
    let mask = ir::const_u64(c::LLVMGetOperand(and, 1))?;
    (mask != 0 && (mask + 1).is_power_of_two()).then_some((c::LLVMGetOperand(and, 0), mask))
}

/// A walk over an address's operands.
struct Walk<'b> {
    f: LLVMValueRef,
    budget: &'b mut usize,
    /// The phis being proved: a phi's value from its loop's latch may use the phi itself,
    /// which is taken as aligned there (an induction over the iterations: every value the
    /// phi takes is built from aligned ones by operations that keep the low bits clear).
    stack: Vec<(LLVMValueRef, u64)>,
}

/// The low bits of `x * 2^s` that depend on those of `x` in `m`: `m >> s`.
fn shifted(m: u64, s: u64) -> u64 {
    m.checked_shr(u32::try_from(s).unwrap_or(u32::MAX))
        .unwrap_or(0)
}

impl Walk<'_> {
    /// The parameters (argument numbers) and the low bits of each (`mask`s) that must be
    /// clear for the bits `m` (a run of low bits) of `v` to be, or `None` when they do not
    /// suffice. No result is kept between calls: one proved under a phi's assumption holds
    /// only while that phi's own proof stands.
    unsafe fn aligned(&mut self, v: LLVMValueRef, m: u64, depth: u32) -> Option<Vec<(u32, u64)>> {
        if m == 0 {
            return Some(Vec::new());
        }
        *self.budget = self.budget.checked_sub(1)?;
        if depth > 64 {
            return None;
        }
        if let Some(k) = ir::const_u64(v) {
            return (k & m == 0).then(Vec::new);
        }
        if !c::LLVMIsAConstantPointerNull(v).is_null() {
            return Some(Vec::new());
        }
        if !c::LLVMIsAArgument(v).is_null() {
            let n = c::LLVMCountParams(self.f);
            return (0..n)
                .find(|&k| c::LLVMGetParam(self.f, k) == v)
                .map(|k| vec![(k, m)]);
        }
        if !c::LLVMIsAGlobalVariable(v).is_null() {
            // A variable starts at a multiple of its alignment (`.shared` ones in the CTA's
            // block, which starts at a multiple of 256: `LaunchConfig::shared_align`).
            return (u64::from(c::LLVMGetAlignment(v)) > m).then(Vec::new);
        }
        let op = if ir::is_instruction(v) {
            ir::opcode(v)
        } else if !c::LLVMIsAConstantExpr(v).is_null() {
            c::LLVMGetConstOpcode(v)
        } else {
            return None;
        };
        let opnd = |k: u32| c::LLVMGetOperand(v, k);
        let d = depth + 1;
        match op {
            // Sums, differences and bitwise combinations of values with clear low bits.
            O::LLVMAdd | O::LLVMSub | O::LLVMOr | O::LLVMXor => {
                let mut a = self.aligned(opnd(0), m, d)?;
                a.extend(self.aligned(opnd(1), m, d)?);
                Some(a)
            }
            // A product by `c 2^s` needs `m >> s` of the other factor; of two unknown
            // factors, either one aligned.
            O::LLVMMul => match (ir::const_u64(opnd(0)), ir::const_u64(opnd(1))) {
                (_, Some(k)) => self.aligned(opnd(0), shifted(m, u64::from(k.trailing_zeros())), d),
                (Some(k), _) => self.aligned(opnd(1), shifted(m, u64::from(k.trailing_zeros())), d),
                _ => self.either(opnd(0), opnd(1), m, depth),
            },
            // A mask by a constant needs only the bits it keeps.
            O::LLVMAnd => match (ir::const_u64(opnd(0)), ir::const_u64(opnd(1))) {
                (_, Some(k)) => self.aligned(opnd(0), m & k, d),
                (Some(k), _) => self.aligned(opnd(1), m & k, d),
                _ => self.either(opnd(0), opnd(1), m, depth),
            },
            O::LLVMShl => match ir::const_u64(opnd(1)) {
                Some(s) => self.aligned(opnd(0), shifted(m, s), d),
                None => self.aligned(opnd(0), m, d),
            },
            O::LLVMZExt
            | O::LLVMSExt
            | O::LLVMPtrToInt
            | O::LLVMIntToPtr
            | O::LLVMBitCast
            | O::LLVMFreeze => self.aligned(opnd(0), m, d),
            O::LLVMTrunc => {
                let w = c::LLVMGetIntTypeWidth(c::LLVMTypeOf(v));
                if w < 64 && (1u64 << w) <= m {
                    return None;
                }
                self.aligned(opnd(0), m, d)
            }
            // Between a `.shared` offset and its generic address: the CTA's block starts at
            // a multiple of 256.
            O::LLVMAddrSpaceCast if m < 256 => self.aligned(opnd(0), m, d),
            O::LLVMSelect => {
                let mut a = self.aligned(opnd(1), m, d)?;
                a.extend(self.aligned(opnd(2), m, d)?);
                Some(a)
            }
            O::LLVMPHI => {
                // Assumed for the bits `m` or more: a proof for fewer bits does not give more.
                if self.stack.iter().any(|&(p, pm)| p == v && pm & m == m) {
                    return Some(Vec::new());
                }
                self.stack.push((v, m));
                let mut a = Vec::new();
                let mut ok = true;
                for k in 0..c::LLVMCountIncoming(v) {
                    match self.aligned(c::LLVMGetIncomingValue(v, k), m, d) {
                        Some(l) => a.extend(l),
                        None => {
                            ok = false;
                            break;
                        }
                    }
                }
                self.stack.pop();
                ok.then_some(a)
            }
            O::LLVMGetElementPtr => self.gep(v, m, depth),
            _ => None,
        }
    }

    /// Whichever of `a` and `b` is aligned with fewer parameters.
    unsafe fn either(
        &mut self,
        a: LLVMValueRef,
        b: LLVMValueRef,
        m: u64,
        depth: u32,
    ) -> Option<Vec<(u32, u64)>> {
        let x = self.aligned(a, m, depth + 1);
        if x.as_ref().is_some_and(Vec::is_empty) {
            return x;
        }
        let y = self.aligned(b, m, depth + 1);
        match (x, y) {
            (Some(x), Some(y)) => Some(if y.len() < x.len() { y } else { x }),
            (x, y) => x.or(y),
        }
    }

    /// A GEP: its base and each index times its element's size (a struct field's offset).
    unsafe fn gep(&mut self, v: LLVMValueRef, m: u64, depth: u32) -> Option<Vec<(u32, u64)>> {
        let td = llvm_sys::target::LLVMGetModuleDataLayout(c::LLVMGetGlobalParent(self.f));
        let mut a = self.aligned(c::LLVMGetOperand(v, 0), m, depth + 1)?;
        let mut ty = c::LLVMGetGEPSourceElementType(v);
        let n = c::LLVMGetNumOperands(v) as u32;
        for k in 1..n {
            let idx = c::LLVMGetOperand(v, k);
            if k > 1 {
                match c::LLVMGetTypeKind(ty) {
                    LLVMTypeKind::LLVMStructTypeKind => {
                        let field = u32::try_from(ir::const_u64(idx)?).ok()?;
                        let off = llvm_sys::target::LLVMOffsetOfElement(td, ty, field);
                        if off & m != 0 {
                            return None;
                        }
                        ty = c::LLVMStructGetTypeAtIndex(ty, field);
                        continue;
                    }
                    LLVMTypeKind::LLVMArrayTypeKind => ty = c::LLVMGetElementType(ty),
                    _ => return None,
                }
            }
            let size = llvm_sys::target::LLVMABISizeOfType(td, ty);
            if size != 0 {
                let mi = shifted(m, u64::from(size.trailing_zeros()));
                a.extend(self.aligned(idx, mi, depth + 1)?);
            }
        }
        Some(a)
    }
}
