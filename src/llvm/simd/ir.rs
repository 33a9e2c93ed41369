//! Small readers of LLVM IR for the warp vectorizer: opcodes, callees, operands, and what a
//! kernel's thread-context reads mean (`runtime::abi::offset`).

use std::ffi::CStr;

use llvm_sys::core as c;
use llvm_sys::prelude::*;
use llvm_sys::LLVMOpcode;

use crate::runtime::abi::offset;

/// The kind of the enum attribute `name` (`noinline`, …).
pub fn attr_kind(name: &CStr) -> u32 {
    // SAFETY: `name` is a NUL-terminated string that outlives the call.
    unsafe { c::LLVMGetEnumAttributeKindForName(name.as_ptr(), name.to_bytes().len()) }
}

pub unsafe fn opcode(i: LLVMValueRef) -> LLVMOpcode {
    c::LLVMGetInstructionOpcode(i)
}

/// A copy of the GEP `gep` at the builder's position, its base and indices replaced by
/// `opnd(k)` for operand `k` (a lane's scalars, or operands rebuilt elsewhere).
///
/// # Safety
/// `gep` must be a GEP instruction and `b` positioned in a live function; `opnd` must return
/// values whose types fit the GEP's operands.
pub unsafe fn rebuild_gep(
    b: LLVMBuilderRef,
    gep: LLVMValueRef,
    mut opnd: impl FnMut(u32) -> LLVMValueRef,
    name: *const std::ffi::c_char,
) -> LLVMValueRef {
    let base = opnd(0);
    let mut idx: Vec<LLVMValueRef> = (1..c::LLVMGetNumOperands(gep) as u32)
        .map(&mut opnd)
        .collect();
    let ty = c::LLVMGetGEPSourceElementType(gep);
    c::LLVMBuildGEP2(b, ty, base, idx.as_mut_ptr(), idx.len() as u32, name)
}

/// Integer arithmetic and bitwise binary opcodes that cannot trap (no division): the ones a
/// lane of a vector instruction can be rebuilt with on scalars (`Warp::lane_of`).
pub fn int_binop(op: LLVMOpcode) -> bool {
    use LLVMOpcode as O;
    matches!(
        op,
        O::LLVMAdd
            | O::LLVMSub
            | O::LLVMMul
            | O::LLVMShl
            | O::LLVMLShr
            | O::LLVMAShr
            | O::LLVMAnd
            | O::LLVMOr
            | O::LLVMXor
    )
}

/// Integer division and remainder: pure apart from trapping on a zero divisor, so analyses
/// that only read lane values walk through them, while the prefetches, which copy address
/// trees, leave them out (`prefetch::pure_op`).
pub fn int_div_rem(op: LLVMOpcode) -> bool {
    use LLVMOpcode as O;
    matches!(op, O::LLVMUDiv | O::LLVMSDiv | O::LLVMURem | O::LLVMSRem)
}

/// Casts that convert each lane on its own (no address-space cast: that one needs the
/// space's base): a vector instruction of one lowers to the same cast of the lanes' vector.
pub fn lanewise_cast(op: LLVMOpcode) -> bool {
    use LLVMOpcode as O;
    matches!(
        op,
        O::LLVMTrunc
            | O::LLVMZExt
            | O::LLVMSExt
            | O::LLVMFPToUI
            | O::LLVMFPToSI
            | O::LLVMUIToFP
            | O::LLVMSIToFP
            | O::LLVMFPTrunc
            | O::LLVMFPExt
            | O::LLVMPtrToInt
            | O::LLVMIntToPtr
            | O::LLVMBitCast
    )
}

/// [`int_binop`]s and integer width casts: the pure opcodes every analysis of lane values
/// over an address tree walks through (each adds its own: division, pointer casts, selects,
/// compares).
pub fn int_arith_or_cast(op: LLVMOpcode) -> bool {
    use LLVMOpcode as O;
    int_binop(op) || matches!(op, O::LLVMZExt | O::LLVMSExt | O::LLVMTrunc)
}

pub unsafe fn name(v: LLVMValueRef) -> String {
    let mut len = 0usize;
    let p = c::LLVMGetValueName2(v, &mut len);
    if p.is_null() {
        return String::new();
    }
    String::from_utf8_lossy(std::slice::from_raw_parts(p as *const u8, len)).into_owned()
}

/// The name of the function a call instruction calls directly ("" for indirect calls).
pub unsafe fn callee(i: LLVMValueRef) -> String {
    let f = c::LLVMGetCalledValue(i);
    if c::LLVMIsAFunction(f).is_null() {
        return String::new();
    }
    name(f)
}

pub unsafe fn operands(i: LLVMValueRef) -> Vec<LLVMValueRef> {
    let n = c::LLVMGetNumOperands(i);
    (0..n as u32).map(|k| c::LLVMGetOperand(i, k)).collect()
}

/// The pointer and the accessed value's type of a load or store; `None` for anything else.
pub unsafe fn access(i: LLVMValueRef) -> Option<(LLVMValueRef, LLVMTypeRef)> {
    match opcode(i) {
        LLVMOpcode::LLVMLoad => Some((c::LLVMGetOperand(i, 0), c::LLVMTypeOf(i))),
        LLVMOpcode::LLVMStore => Some((
            c::LLVMGetOperand(i, 1),
            c::LLVMTypeOf(c::LLVMGetOperand(i, 0)),
        )),
        _ => None,
    }
}

/// The users of `v`, one per use, in use-list order.
pub unsafe fn users(v: LLVMValueRef) -> Vec<LLVMValueRef> {
    let mut out = Vec::new();
    let mut u = c::LLVMGetFirstUse(v);
    while !u.is_null() {
        out.push(c::LLVMGetUser(u));
        u = c::LLVMGetNextUse(u);
    }
    out
}

/// Call arguments (operands less the callee).
pub unsafe fn args(i: LLVMValueRef) -> Vec<LLVMValueRef> {
    let n = c::LLVMGetNumArgOperands(i);
    (0..n).map(|k| c::LLVMGetOperand(i, k)).collect()
}

/// The basic blocks of `f` in layout order, collected first, so the caller may add blocks.
pub unsafe fn blocks(f: LLVMValueRef) -> Vec<LLVMBasicBlockRef> {
    let mut out = Vec::new();
    let mut bb = c::LLVMGetFirstBasicBlock(f);
    while !bb.is_null() {
        out.push(bb);
        bb = c::LLVMGetNextBasicBlock(bb);
    }
    out
}

/// The successors of `bb`'s terminator (none while it has none).
pub unsafe fn successors(bb: LLVMBasicBlockRef) -> Vec<LLVMBasicBlockRef> {
    let t = c::LLVMGetBasicBlockTerminator(bb);
    if t.is_null() {
        return Vec::new();
    }
    (0..c::LLVMGetNumSuccessors(t))
        .map(|k| c::LLVMGetSuccessor(t, k))
        .collect()
}

/// Every function of `m` (declarations too), in module order; a list, so a caller may change
/// the module's instructions while it walks them.
pub unsafe fn functions(m: LLVMModuleRef) -> Vec<LLVMValueRef> {
    let mut out = Vec::new();
    let mut f = c::LLVMGetFirstFunction(m);
    while !f.is_null() {
        out.push(f);
        f = c::LLVMGetNextFunction(f);
    }
    out
}

/// Every instruction of `f`, block by block in layout order.
pub unsafe fn function_instructions(f: LLVMValueRef) -> Vec<LLVMValueRef> {
    blocks(f)
        .into_iter()
        .flat_map(|bb| instructions(bb))
        .collect()
}

pub unsafe fn instructions(bb: LLVMBasicBlockRef) -> Vec<LLVMValueRef> {
    let mut out = Vec::new();
    let mut i = c::LLVMGetFirstInstruction(bb);
    while !i.is_null() {
        out.push(i);
        i = c::LLVMGetNextInstruction(i);
    }
    out
}

pub unsafe fn is_instruction(v: LLVMValueRef) -> bool {
    !c::LLVMIsAInstruction(v).is_null()
}

pub unsafe fn const_u64(v: LLVMValueRef) -> Option<u64> {
    if c::LLVMIsAConstantInt(v).is_null() {
        return None;
    }
    Some(c::LLVMConstIntGetZExtValue(v))
}

/// A phi of type `ty` named `name` at the builder's position, with its incoming values and
/// blocks given at once (the two- and three-way joins the emitters build).
pub unsafe fn phi(
    b: LLVMBuilderRef,
    ty: LLVMTypeRef,
    name: *const std::ffi::c_char,
    incoming: &[(LLVMValueRef, LLVMBasicBlockRef)],
) -> LLVMValueRef {
    let p = c::LLVMBuildPhi(b, ty, name);
    let (mut vals, mut bbs): (Vec<_>, Vec<_>) = incoming.iter().copied().unzip();
    c::LLVMAddIncoming(
        p,
        vals.as_mut_ptr(),
        bbs.as_mut_ptr(),
        incoming.len() as u32,
    );
    p
}

/// Lanes `16k..16k+16` of the vector `v` (`v` itself when it has 16 lanes): the piece an
/// AVX-512 intrinsic of 16 f32 lanes takes (`range.rs`, `scalef.rs`).
pub unsafe fn lanes16(b: LLVMBuilderRef, v: LLVMValueRef, k: u32) -> LLVMValueRef {
    if c::LLVMGetVectorSize(c::LLVMTypeOf(v)) == 16 {
        return v;
    }
    let i32t = c::LLVMInt32TypeInContext(c::LLVMGetTypeContext(c::LLVMTypeOf(v)));
    let mut idx: Vec<LLVMValueRef> = (0..16)
        .map(|j| c::LLVMConstInt(i32t, u64::from(16 * k + j), 0))
        .collect();
    let mask = c::LLVMConstVector(idx.as_mut_ptr(), 16);
    let p = c::LLVMGetPoison(c::LLVMTypeOf(v));
    c::LLVMBuildShuffleVector(b, v, p, mask, c"".as_ptr())
}

/// Vectors of one type, a power-of-two count of them, concatenated pairwise in order: the
/// inverse of taking `lanes16` pieces.
pub unsafe fn concat(b: LLVMBuilderRef, mut parts: Vec<LLVMValueRef>) -> LLVMValueRef {
    while parts.len() > 1 {
        let t = c::LLVMTypeOf(parts[0]);
        let w = c::LLVMGetVectorSize(t);
        let i32t = c::LLVMInt32TypeInContext(c::LLVMGetTypeContext(t));
        let mut idx: Vec<LLVMValueRef> = (0..2 * w)
            .map(|j| c::LLVMConstInt(i32t, u64::from(j), 0))
            .collect();
        let mask = c::LLVMConstVector(idx.as_mut_ptr(), 2 * w);
        parts = parts
            .chunks(2)
            .map(|ab| c::LLVMBuildShuffleVector(b, ab[0], ab[1], mask, c"".as_ptr()))
            .collect();
    }
    parts[0]
}

pub unsafe fn print(v: LLVMValueRef) -> String {
    let p = c::LLVMPrintValueToString(v);
    let s = CStr::from_ptr(p).to_string_lossy().trim().to_string();
    c::LLVMDisposeMessage(p);
    s
}

/// A field of the thread context that a kernel reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CtxField {
    /// `%tid.x/y/z` (0..2), `%laneid`, the linear thread index: one value per lane.
    Tid(u32),
    LaneId,
    FlatTid,
    /// Anything else at this byte offset: the same in every lane of a warp (`%ctaid`, `%ntid`,
    /// `%warpid`, the shared block, …), read from the warp's context.
    Uniform(u32),
}

impl CtxField {
    pub fn at(off: u32) -> CtxField {
        match off {
            o if o == offset::TID => CtxField::Tid(0),
            o if o == offset::TID + 4 => CtxField::Tid(1),
            o if o == offset::TID + 8 => CtxField::Tid(2),
            o if o == offset::LANEID => CtxField::LaneId,
            o if o == offset::FLAT_TID => CtxField::FlatTid,
            o => CtxField::Uniform(o),
        }
    }

    pub fn varying(self) -> bool {
        !matches!(self, CtxField::Uniform(_))
    }
}

/// Whether call `i` is of an intrinsic that neither reads nor writes memory: the lane-wise
/// arithmetic ones (`lanewise_intrinsic`); any other call may touch memory.
pub unsafe fn pure_call(i: LLVMValueRef) -> bool {
    lanewise_intrinsic(&callee(i))
}

pub unsafe fn is_self_call(v: LLVMValueRef) -> bool {
    !c::LLVMIsACallInst(v).is_null() && callee(v) == "ptx2llvm_rt_self"
}

/// The byte offset into the thread context that pointer `p` stands for, when it is the
/// context itself or a constant offset from it.
pub unsafe fn ctx_offset(td: llvm_sys::target::LLVMTargetDataRef, p: LLVMValueRef) -> Option<u32> {
    if is_self_call(p) {
        return Some(0);
    }
    if c::LLVMIsAGetElementPtrInst(p).is_null() || c::LLVMGetNumOperands(p) != 2 {
        return None;
    }
    let base = c::LLVMGetOperand(p, 0);
    if !is_self_call(base) {
        return None;
    }
    let k = const_u64(c::LLVMGetOperand(p, 1))?;
    let size = llvm_sys::target::LLVMABISizeOfType(td, c::LLVMGetGEPSourceElementType(p));
    u32::try_from(k.checked_mul(size)?).ok()
}

/// The warp operations of the runtime ABI (`target/cpu/sync.rs` emits their calls).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WarpCall {
    ActiveMask,
    Shfl,
    Vote,
    Redux,
    MatchAny,
    MatchAll,
    Elect,
    WarpSync,
    /// `mma.sync` (`ptx2llvm_rt_mma`): fragments in stack arrays (`simd/matrix.rs`).
    Mma,
    /// `ldmatrix`/`stmatrix` (`ptx2llvm_rt_ldmatrix`/`_stmatrix`): registers in a stack array,
    /// rows at each lane's address; `movmatrix` (`ptx2llvm_rt_movmatrix`): a register.
    LdMatrix,
    StMatrix,
    MovMatrix,
}

impl WarpCall {
    pub fn of(name: &str) -> Option<WarpCall> {
        Some(match name {
            "ptx2llvm_rt_activemask" => WarpCall::ActiveMask,
            "ptx2llvm_rt_shfl" => WarpCall::Shfl,
            "ptx2llvm_rt_vote" => WarpCall::Vote,
            "ptx2llvm_rt_redux" => WarpCall::Redux,
            "ptx2llvm_rt_match_any_u32" | "ptx2llvm_rt_match_any_u64" => WarpCall::MatchAny,
            "ptx2llvm_rt_match_all_u32" | "ptx2llvm_rt_match_all_u64" => WarpCall::MatchAll,
            "ptx2llvm_rt_elect" => WarpCall::Elect,
            "ptx2llvm_rt_bar_warp_sync" => WarpCall::WarpSync,
            "ptx2llvm_rt_mma" => WarpCall::Mma,
            "ptx2llvm_rt_ldmatrix" => WarpCall::LdMatrix,
            "ptx2llvm_rt_stmatrix" => WarpCall::StMatrix,
            "ptx2llvm_rt_movmatrix" => WarpCall::MovMatrix,
            _ => return None,
        })
    }

    /// Whether every active lane gets the same result (a scalar in the warp function).
    pub fn uniform_result(self) -> bool {
        matches!(
            self,
            WarpCall::ActiveMask | WarpCall::Vote | WarpCall::Redux | WarpCall::WarpSync
        )
    }

    /// Whether the operation names its member lanes (`.sync`): they must be the active ones.
    /// `activemask` has none; the non-`.sync` forms pass `activemask` as their mask.
    pub fn has_member_mask(self) -> bool {
        !matches!(self, WarpCall::ActiveMask) && !self.matrix()
    }

    /// Whether this is a warp matrix instruction (`.aligned`: every lane of the warp runs it,
    /// at the same instruction; `simd/matrix.rs`).
    pub fn matrix(self) -> bool {
        matches!(
            self,
            WarpCall::Mma | WarpCall::LdMatrix | WarpCall::StMatrix | WarpCall::MovMatrix
        )
    }

    pub fn spelling(self) -> &'static str {
        match self {
            WarpCall::ActiveMask => "activemask",
            WarpCall::Shfl => "shfl.sync",
            WarpCall::Vote => "vote.sync",
            WarpCall::Redux => "redux.sync",
            WarpCall::MatchAny => "match.any.sync",
            WarpCall::MatchAll => "match.all.sync",
            WarpCall::Elect => "elect.sync",
            WarpCall::WarpSync => "bar.warp.sync",
            WarpCall::Mma => "mma.sync",
            WarpCall::LdMatrix => "ldmatrix",
            WarpCall::StMatrix => "stmatrix",
            WarpCall::MovMatrix => "movmatrix",
        }
    }
}

/// LLVM intrinsics whose vector form does lane by lane what the scalar one does: the name's
/// trailing type suffixes are the overloaded types, and arguments of those types widen.
pub fn lanewise_intrinsic(name: &str) -> bool {
    let Some(rest) = name.strip_prefix("llvm.") else {
        return false;
    };
    if statically_rounded_fma(name).is_some() {
        return true;
    }
    const OK: &[&str] = &[
        "fma",
        "fmuladd",
        "fabs",
        "sqrt",
        "copysign",
        "minnum",
        "maxnum",
        "minimum",
        "maximum",
        "minimumnum",
        "maximumnum",
        "floor",
        "ceil",
        "trunc",
        "rint",
        "nearbyint",
        "round",
        "roundeven",
        "ctpop",
        "ctlz",
        "cttz",
        "bitreverse",
        "bswap",
        "fshl",
        "fshr",
        "smax",
        "smin",
        "umax",
        "umin",
        "abs",
        "uadd",
        "usub",
        "sadd",
        "ssub",
        "umul",
        "smul",
        "exp2",
        "ldexp",
        "log2",
        "exp",
        "log",
        "sin",
        "cos",
        "pow",
        "is",
        "canonicalize",
        "fptosi",
        "fptoui",
    ];
    let head = rest.split('.').next().unwrap_or("");
    OK.contains(&head)
}

/// For AVX-512's scalar fma with static rounding (the cpu target's directed `add`/`sub`/`mul`/
/// `fma`), the vector form that takes its lanes and how many: `vfmadd.ps.512` 16 f32 lanes,
/// `vfmadd.pd.512` 8 f64 lanes, the rounding operand the same.
pub fn statically_rounded_fma(name: &str) -> Option<(&'static str, u32)> {
    match name {
        "llvm.x86.avx512.vfmadd.f32" => Some(("llvm.x86.avx512.vfmadd.ps.512", 16)),
        "llvm.x86.avx512.vfmadd.f64" => Some(("llvm.x86.avx512.vfmadd.pd.512", 8)),
        _ => None,
    }
}

/// Whether a type suffix of an intrinsic name names a scalar type (`i32`, `f64`, `p0`, …).
pub fn type_suffix(s: &str) -> bool {
    let num = |t: &str| !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit());
    matches!(s, "f16" | "f32" | "f64" | "bf16" | "f128")
        || s.strip_prefix('i').is_some_and(num)
        || s.strip_prefix('p').is_some_and(num)
}

/// Points the cloned instructions `made` at the clones of their operands (`values`) and of
/// their successor blocks (`blocks`), where those have clones: the last step of copying a
/// piece of a function (`version.rs`, `interior.rs`).
pub unsafe fn remap_clones(
    made: &[LLVMValueRef],
    values: &std::collections::HashMap<LLVMValueRef, LLVMValueRef>,
    blocks: &std::collections::HashMap<LLVMBasicBlockRef, LLVMBasicBlockRef>,
) {
    for &x in made {
        for k in 0..c::LLVMGetNumOperands(x) as u32 {
            let o = c::LLVMGetOperand(x, k);
            if let Some(&y) = values.get(&o) {
                c::LLVMSetOperand(x, k, y);
            }
        }
        if c::LLVMIsATerminatorInst(x).is_null() {
            continue;
        }
        for k in 0..c::LLVMGetNumSuccessors(x) {
            if let Some(&nb) = blocks.get(&c::LLVMGetSuccessor(x, k)) {
                c::LLVMSetSuccessor(x, k, nb);
            }
        }
    }
}

/// Gives phi `x`, a copy of phi `i`, `i`'s incoming edges with their values and blocks
/// mapped through `values` and `blocks` (those not in a map stay as they are).
pub unsafe fn copy_incoming(
    i: LLVMValueRef,
    x: LLVMValueRef,
    values: &std::collections::HashMap<LLVMValueRef, LLVMValueRef>,
    blocks: &std::collections::HashMap<LLVMBasicBlockRef, LLVMBasicBlockRef>,
) {
    for k in 0..c::LLVMCountIncoming(i) {
        let o = c::LLVMGetIncomingValue(i, k);
        let mut v = values.get(&o).copied().unwrap_or(o);
        let from = c::LLVMGetIncomingBlock(i, k);
        let mut nb = blocks.get(&from).copied().unwrap_or(from);
        c::LLVMAddIncoming(x, &mut v, &mut nb, 1);
    }
}

/// The `i1 ()` function `name` of module `m`, defined if it is not yet: internal, always
/// inlined, returning false. The warp function lowers its calls to a test of its own
/// (`interior::EVERY`, `coarsen::COARSE`); thread loops and coroutines inline the false.
pub unsafe fn false_fn(m: LLVMModuleRef, name: &str) -> (LLVMTypeRef, LLVMValueRef) {
    let cx = c::LLVMGetModuleContext(m);
    let i1 = c::LLVMInt1TypeInContext(cx);
    let ft = c::LLVMFunctionType(i1, std::ptr::null_mut(), 0, 0);
    let cn = std::ffi::CString::new(name).unwrap_or_default();
    let mut f = c::LLVMGetNamedFunction(m, cn.as_ptr());
    if f.is_null() {
        f = c::LLVMAddFunction(m, cn.as_ptr(), ft);
        c::LLVMSetLinkage(f, llvm_sys::LLVMLinkage::LLVMInternalLinkage);
        let inline = c::LLVMCreateEnumAttribute(cx, attr_kind(c"alwaysinline"), 0);
        c::LLVMAddAttributeAtIndex(f, llvm_sys::LLVMAttributeFunctionIndex, inline);
        let bb = c::LLVMAppendBasicBlockInContext(cx, f, c"".as_ptr());
        let b = c::LLVMCreateBuilderInContext(cx);
        c::LLVMPositionBuilderAtEnd(b, bb);
        c::LLVMBuildRet(b, c::LLVMConstInt(i1, 0, 0));
        c::LLVMDisposeBuilder(b);
    }
    (ft, f)
}

/// Intrinsic `name` overloaded on `tys`, declared in module `m`, with its function type.
///
/// # Safety
/// `m` is a live module; `tys` are its context's types, as many as the intrinsic overloads.
pub unsafe fn intrinsic(
    m: LLVMModuleRef,
    name: &str,
    tys: &mut [LLVMTypeRef],
) -> (LLVMValueRef, LLVMTypeRef) {
    let id = c::LLVMLookupIntrinsicID(name.as_ptr() as *const _, name.len());
    let f = c::LLVMGetIntrinsicDeclaration(m, id, tys.as_mut_ptr(), tys.len());
    (f, c::LLVMGlobalGetValueType(f))
}

/// A call at `b` of `(f, ft)` (an `intrinsic`'s) with `args`.
///
/// # Safety
/// `b` is positioned in a live block; `args` match `ft`.
pub unsafe fn call(
    b: LLVMBuilderRef,
    (f, ft): (LLVMValueRef, LLVMTypeRef),
    args: &mut [LLVMValueRef],
) -> LLVMValueRef {
    c::LLVMBuildCall2(b, ft, f, args.as_mut_ptr(), args.len() as u32, c"".as_ptr())
}
