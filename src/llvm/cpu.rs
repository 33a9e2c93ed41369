//! LLVM work of the cpu target (kept here so that only `src/llvm` touches LLVM): the host
//! target machine, the module rewrite that turns the shared lowering's output into host code
//! with the runtime ABI, and the MCJIT engine that `ptx2llvm run` launches kernels from.
//!
//! The rewrite (`prepare_module`):
//! - `.shared` variables (globals in address space 3) get offsets in the CTA's shared block
//!   (static ones in declaration order at their alignment, `.extern .shared` arrays after them
//!   at 16 or their larger alignment; the block itself is aligned at run time to the largest
//!   alignment, `SharedLayout::align`); an address-space-3 pointer is such an offset, and every memory access through one
//!   becomes an access to `t->shared + offset`; `cvta.shared`/`cvta.to.shared` add/subtract
//!   the base;
//! - `llvm.nvvm.*` declarations become calls of the runtime's `ptx2llvm_nvvm_*` helpers,
//!   `llvm.trap` and device-function `exit` become runtime calls, `vprintf` and
//!   `__assertfail` the runtime's device versions;
//! - each kernel `K` is renamed `K.ptx` (internal) and a C entry point
//!   `void K(const void *params, ptx2llvm_thread *t)` loads the parameters from the CUDA-layout
//!   buffer and calls it.

use std::ffi::{c_char, CString};

use inkwell::execution_engine::ExecutionEngine;
use inkwell::targets::{
    CodeModel, InitializationConfig, RelocMode, Target as LTarget, TargetMachine,
};
use inkwell::OptimizationLevel;
use llvm_sys::core as c;
use llvm_sys::prelude::*;
use llvm_sys::LLVMOpcode;

use super::{Context, Module};

/// One kernel parameter's place in the CUDA parameter buffer.
#[derive(Clone, Copy, Debug)]
pub struct ParamPlace {
    pub offset: u32,
    /// An aggregate (`.b8` array, vector) passed by reference to its bytes.
    pub aggregate: bool,
}

/// What the wrapper generation needs to know about a kernel.
#[derive(Clone, Debug)]
pub struct KernelLayout {
    pub name: String,
    pub params: Vec<ParamPlace>,
}

/// The host target machine.
pub struct HostMachine {
    tm: TargetMachine,
}

fn level(opt: u8) -> OptimizationLevel {
    match opt {
        0 => OptimizationLevel::None,
        1 => OptimizationLevel::Less,
        2 => OptimizationLevel::Default,
        _ => OptimizationLevel::Aggressive,
    }
}

/// The host's feature string less the features whose instructions round differently from
/// PTX: AVX512-BF16's and AVX-NE-CONVERT's f32 -> bf16 conversions (which LLVM selects for
/// `fptrunc float to bfloat`) treat denormal inputs as zero and always round to nearest, so
/// `cvt.rn.bf16.f32` of 0x007fffff gave 0 instead of 0x0080.
pub(crate) fn exact_features(host: &str) -> String {
    host.split(',')
        .map(|f| match f {
            "+avx512bf16" => "-avx512bf16",
            "+avxneconvert" => "-avxneconvert",
            other => other,
        })
        .collect::<Vec<_>>()
        .join(",")
}

/// The feature string `HostMachine` generates code for (`exact_features` of the host's),
/// read once per process: LLVM's `getHostCPUFeatures` runs dozens of `cpuid`s, each a trap to
/// the hypervisor in a VM, and the lowering asks `host_has` per `ex2` and per rounded float
/// operation (3% of softmax_warp's compile CPU time went there).
pub(crate) fn host_features() -> &'static str {
    static FEATURES: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    FEATURES.get_or_init(|| exact_features(&TargetMachine::get_host_cpu_features().to_string()))
}

/// Whether code generated for this host may use feature `f` (`+avx512f`): the feature
/// string `HostMachine` generates code for.
pub(crate) fn host_has(f: &str) -> bool {
    host_features().split(',').any(|x| x == f)
}

/// What code compiled for this process depends on besides the module: LLVM's version, the
/// host triple, CPU name and the features code is generated for (an object for AVX-512 must
/// not load on a machine without it). Part of the kernel cache's key.
pub fn host_description() -> String {
    let (mut major, mut minor, mut patch) = (0, 0, 0);
    // SAFETY: writes three integers.
    unsafe { c::LLVMGetVersion(&mut major, &mut minor, &mut patch) };
    format!(
        "llvm {major}.{minor}.{patch}; {}; {}; {}",
        TargetMachine::get_default_triple(),
        TargetMachine::get_host_cpu_name(),
        host_features()
    )
}

impl HostMachine {
    /// The machine this process runs on.
    pub fn new(opt: u8) -> Result<HostMachine, String> {
        LTarget::initialize_native(&InitializationConfig::default())?;
        let triple = TargetMachine::get_default_triple();
        let t = LTarget::from_triple(&triple).map_err(|e| e.to_string())?;
        let cpu = TargetMachine::get_host_cpu_name().to_string();
        let features = host_features();
        let tm = t
            .create_target_machine(
                &triple,
                &cpu,
                features,
                level(opt),
                RelocMode::PIC,
                CodeModel::Default,
            )
            .ok_or_else(|| "cannot create a target machine for the host".to_string())?;
        Ok(HostMachine { tm })
    }

    pub fn configure(&self, m: &Module) {
        m.set_triple(&self.tm.get_triple());
        m.set_data_layout(&self.tm.get_target_data().get_data_layout());
    }

    /// Gives every function defined in `m` the host's `target-cpu` and `target-features`
    /// attributes (and `null_pointer_is_valid`): the JIT generates code for the subtarget a function names (without them
    /// it targets baseline x86-64, which turns vector operations the optimizer chose for the
    /// host — `fma`, 256-bit vectors — into libm calls and narrower code).
    pub fn mark_functions(&self, m: &Module) {
        let cpu = self.tm.get_cpu().to_string();
        let features = self.tm.get_feature_string().to_string_lossy().into_owned();
        let ctx = m.get_context();
        let mut f = m.get_first_function();
        while let Some(func) = f {
            if func.count_basic_blocks() > 0 {
                use inkwell::attributes::{Attribute, AttributeLoc};
                func.add_attribute(
                    AttributeLoc::Function,
                    ctx.create_string_attribute("target-cpu", &cpu),
                );
                func.add_attribute(
                    AttributeLoc::Function,
                    ctx.create_string_attribute("target-features", &features),
                );
                // Also on the functions built after the lowering (warp functions, drivers):
                // a null access stays a fault (`lower::Target::null_is_valid`).
                func.add_attribute(
                    AttributeLoc::Function,
                    ctx.create_enum_attribute(
                        Attribute::get_named_enum_kind_id("null_pointer_is_valid"),
                        0,
                    ),
                );
            }
            f = func.get_next_function();
        }
    }

    /// Runs `default<On>` on `m`. Lighter settings were measured for compile time (issue #17,
    /// benchmark suite, process CPU time at grid 1, 3 alternated pairs) and not taken, because
    /// each one slowed a kernel or saved nothing measurable:
    /// - `default<O1>` for warp-engine modules: -15% process CPU over the suite, but
    ///   reduce_halving 1.24-1.27x and reduce_block up to 1.35x slower (warp functions keep
    ///   scalar per-lane loops that O2's loop vectorizer widens, width 32 x 4);
    /// - `-post-RA-scheduler=false` (`post-RA-sched`, the one post-RA scheduler x86 runs):
    ///   -2% CPU, reduce_halving 1.16-1.26x slower in 5 of 5 pairs;
    /// - `-enable-misched=false`: -3 to -4% CPU (-13% Triton softmax), not worth a scheduler
    ///   change; codegen at `OptimizationLevel::Less` or no loop/SLP vectorizers: no
    ///   difference beyond noise.
    ///
    /// Code generation (ISel, greedy RA) is ~60% of a warp kernel's compile, `default<O2>`
    /// ~35%, spread over many passes. IPSCCP's function specialization is off for the cpu
    /// target (`-funcspec-max-iters=0`, `target::cpu::build`): it cloned nothing in the suite
    /// and cost 0.4-0.5 s on Triton's matmul.
    pub fn optimize(&self, m: &Module, opt: u8) -> Result<(), String> {
        let pipeline = if opt == 0 {
            "verify".to_string()
        } else {
            format!("default<O{opt}>")
        };
        let opts = inkwell::passes::PassBuilderOptions::create();
        m.run_passes(&pipeline, &self.tm, opts)
            .map_err(|e| e.to_string())
    }

    /// Runs a new-pass-manager pipeline (`function(sroa,instcombine)`, …) on `m`.
    pub fn run_pipeline(&self, m: &Module, pipeline: &str) -> Result<(), String> {
        let opts = inkwell::passes::PassBuilderOptions::create();
        m.run_passes(pipeline, &self.tm, opts)
            .map_err(|e| e.to_string())
    }

    /// Runs the new-pass-manager function pipeline `pipeline` on `f` alone.
    pub fn run_function_pipeline(
        &self,
        f: super::FunctionValue,
        pipeline: &str,
    ) -> Result<(), String> {
        use inkwell::values::AsValueRef as _;
        // SAFETY: `f` is a live function.
        unsafe { self.run_passes_on(f.as_value_ref(), pipeline) }
    }

    /// `run_function_pipeline` on a raw function (one of a module copy: `LLVMCloneModule`).
    ///
    /// # Safety
    /// `f` must be a live, defined function.
    pub unsafe fn run_passes_on(
        &self,
        f: llvm_sys::prelude::LLVMValueRef,
        pipeline: &str,
    ) -> Result<(), String> {
        let p = CString::new(pipeline).map_err(|e| e.to_string())?;
        // SAFETY: `f` is a live function (the caller's promise), the target machine and options
        // live across the call; an error is consumed here.
        unsafe {
            let opts = llvm_sys::transforms::pass_builder::LLVMCreatePassBuilderOptions();
            let err = llvm_sys::transforms::pass_builder::LLVMRunPassesOnFunction(
                f,
                p.as_ptr(),
                self.tm.as_mut_ptr(),
                opts,
            );
            llvm_sys::transforms::pass_builder::LLVMDisposePassBuilderOptions(opts);
            if err.is_null() {
                Ok(())
            } else {
                let m = llvm_sys::error::LLVMGetErrorMessage(err);
                let s = std::ffi::CStr::from_ptr(m).to_string_lossy().into_owned();
                llvm_sys::error::LLVMDisposeErrorMessage(m);
                Err(s)
            }
        }
    }

    pub fn emit(&self, m: &Module, kind: super::EmitKind) -> Result<Vec<u8>, String> {
        use inkwell::targets::FileType;
        match kind {
            super::EmitKind::Llvm => Ok(m.print_to_string().to_bytes().to_vec()),
            super::EmitKind::Bitcode => Ok(m.write_bitcode_to_memory().as_slice().to_vec()),
            super::EmitKind::Asm | super::EmitKind::Object => {
                let ft = if kind == super::EmitKind::Asm {
                    FileType::Assembly
                } else {
                    FileType::Object
                };
                let buf = self
                    .tm
                    .write_to_memory_buffer(m, ft)
                    .map_err(|e| e.to_string())?;
                Ok(buf.as_slice().to_vec())
            }
        }
    }
}

fn name_of(v: LLVMValueRef) -> String {
    // SAFETY: `v` is a live value (the callers pass values of a module being compiled); LLVM returns a pointer to `len` bytes it owns, copied before anything changes the name.
    unsafe {
        let mut len = 0usize;
        let p = c::LLVMGetValueName2(v, &mut len);
        if p.is_null() {
            return String::new();
        }
        String::from_utf8_lossy(std::slice::from_raw_parts(p as *const u8, len)).into_owned()
    }
}

fn set_name(v: LLVMValueRef, n: &str) {
    // SAFETY: `v` is a live value; `n` is passed with its length (no NUL needed).
    unsafe { c::LLVMSetValueName2(v, n.as_ptr() as *const c_char, n.len()) }
}

fn functions(m: LLVMModuleRef) -> Vec<LLVMValueRef> {
    let mut out = Vec::new();
    // SAFETY: `m` is a live module; the walk only reads its function list.
    unsafe {
        let mut f = c::LLVMGetFirstFunction(m);
        while !f.is_null() {
            out.push(f);
            f = c::LLVMGetNextFunction(f);
        }
    }
    out
}

fn instructions(f: LLVMValueRef) -> Vec<LLVMValueRef> {
    let mut out = Vec::new();
    // SAFETY: `f` is a function of a live module; the walk only reads its blocks and instructions.
    unsafe {
        let mut bb = c::LLVMGetFirstBasicBlock(f);
        while !bb.is_null() {
            let mut i = c::LLVMGetFirstInstruction(bb);
            while !i.is_null() {
                out.push(i);
                i = c::LLVMGetNextInstruction(i);
            }
            bb = c::LLVMGetNextBasicBlock(bb);
        }
    }
    out
}

unsafe fn addr_space_of(v: LLVMValueRef) -> Option<u32> {
    let t = c::LLVMTypeOf(v);
    if c::LLVMGetTypeKind(t) == llvm_sys::LLVMTypeKind::LLVMPointerTypeKind {
        Some(c::LLVMGetPointerAddressSpace(t))
    } else {
        None
    }
}

/// The byte offset that the shared-space pointer `p` stands for, as an i64 built at `b`.
/// Constant-offset GEPs and `inttoptr` are taken apart into integer additions (a `ptrtoint`
/// of them would hide from loop analyses that `[%r+64]` is `%r` plus 64, and turn loads that
/// are consecutive across threads into gathers); anything else is a `ptrtoint`.
unsafe fn shared_int(b: LLVMBuilderRef, p: LLVMValueRef, i64t: LLVMTypeRef) -> LLVMValueRef {
    let ctx = c::LLVMGetTypeContext(i64t);
    let i8t = c::LLVMInt8TypeInContext(ctx);
    if !c::LLVMIsAGetElementPtrInst(p).is_null()
        && c::LLVMGetNumOperands(p) == 2
        && c::LLVMGetGEPSourceElementType(p) == i8t
    {
        let base = shared_int(b, c::LLVMGetOperand(p, 0), i64t);
        let idx = c::LLVMGetOperand(p, 1);
        let idx = if c::LLVMGetIntTypeWidth(c::LLVMTypeOf(idx)) < 64 {
            c::LLVMBuildSExt(b, idx, i64t, c"".as_ptr())
        } else {
            idx
        };
        return c::LLVMBuildAdd(b, base, idx, c"".as_ptr());
    }
    if !c::LLVMIsAIntToPtrInst(p).is_null() {
        let x = c::LLVMGetOperand(p, 0);
        let w = c::LLVMGetIntTypeWidth(c::LLVMTypeOf(x));
        return match w.cmp(&64) {
            std::cmp::Ordering::Less => c::LLVMBuildZExt(b, x, i64t, c"".as_ptr()),
            std::cmp::Ordering::Equal => x,
            std::cmp::Ordering::Greater => c::LLVMBuildTrunc(b, x, i64t, c"".as_ptr()),
        };
    }
    c::LLVMBuildPtrToInt(b, p, i64t, c"".as_ptr())
}

/// Whether the constant `v` casts a shared-space pointer to another space somewhere inside:
/// the lowering's builder folds `ld [s+8]` (generic) of a `.shared` variable `s` into the
/// constant `gep (addrspacecast @s to ptr), 8`, whose base the rewrite must add at run time.
pub(crate) unsafe fn has_shared_cast(v: LLVMValueRef) -> bool {
    if c::LLVMIsAConstantExpr(v).is_null() {
        return false;
    }
    if c::LLVMGetConstOpcode(v) == LLVMOpcode::LLVMAddrSpaceCast
        && addr_space_of(c::LLVMGetOperand(v, 0)) == Some(SHARED_AS)
        && addr_space_of(v) != Some(SHARED_AS)
    {
        return true;
    }
    (0..c::LLVMGetNumOperands(v).max(0) as u32).any(|k| has_shared_cast(c::LLVMGetOperand(v, k)))
}

/// The constant `v` rebuilt as instructions at `b` where it contains a cast out of the shared
/// space (`has_shared_cast`); other constants are returned as they are. The cast itself becomes
/// `base + offset`, `base` (from `base_at`) the CTA's shared block, as the rewrite does for cast
/// instructions (the builder would fold a rebuilt cast of a constant back into a constant).
pub(crate) unsafe fn expand_shared_const(
    b: LLVMBuilderRef,
    v: LLVMValueRef,
    base_at: &mut dyn FnMut(LLVMBuilderRef) -> LLVMValueRef,
) -> LLVMValueRef {
    if !has_shared_cast(v) {
        return v;
    }
    let n = c::LLVMGetNumOperands(v).max(0) as u32;
    let op = c::LLVMGetConstOpcode(v);
    let name = c"".as_ptr();
    let ctx = c::LLVMGetTypeContext(c::LLVMTypeOf(v));
    if op == LLVMOpcode::LLVMAddrSpaceCast {
        let p = c::LLVMGetOperand(v, 0);
        if addr_space_of(p) == Some(SHARED_AS) {
            let i64t = c::LLVMInt64TypeInContext(ctx);
            let mut idx = [c::LLVMConstPtrToInt(p, i64t)];
            let base = base_at(b);
            let q = c::LLVMBuildGEP2(
                b,
                c::LLVMInt8TypeInContext(ctx),
                base,
                idx.as_mut_ptr(),
                1,
                name,
            );
            return if addr_space_of(v) == Some(0) {
                q
            } else {
                c::LLVMBuildAddrSpaceCast(b, q, c::LLVMTypeOf(v), name)
            };
        }
    }
    let mut ops: Vec<LLVMValueRef> = (0..n)
        .map(|k| expand_shared_const(b, c::LLVMGetOperand(v, k), base_at))
        .collect();
    match op {
        LLVMOpcode::LLVMGetElementPtr => {
            let ty = c::LLVMGetGEPSourceElementType(v);
            let g = c::LLVMBuildGEP2(b, ty, ops[0], ops[1..].as_mut_ptr(), n - 1, name);
            c::LLVMSetIsInBounds(g, c::LLVMIsInBounds(v));
            g
        }
        LLVMOpcode::LLVMAddrSpaceCast
        | LLVMOpcode::LLVMPtrToInt
        | LLVMOpcode::LLVMIntToPtr
        | LLVMOpcode::LLVMBitCast
        | LLVMOpcode::LLVMTrunc => c::LLVMBuildCast(b, op, ops[0], c::LLVMTypeOf(v), name),
        LLVMOpcode::LLVMAdd | LLVMOpcode::LLVMSub | LLVMOpcode::LLVMXor => {
            c::LLVMBuildBinOp(b, op, ops[0], ops[1], name)
        }
        _ => v,
    }
}

/// Rebuilds as instructions the constant operands of `f`'s instructions that cast shared
/// pointers out of the shared space (`expand_shared_const`): for a phi at the end of the
/// incoming block, else before the instruction.
unsafe fn expand_shared_consts(
    b: LLVMBuilderRef,
    f: LLVMValueRef,
    base_at: &mut dyn FnMut(LLVMBuilderRef) -> LLVMValueRef,
) {
    for i in instructions(f) {
        let is_phi = c::LLVMGetInstructionOpcode(i) == LLVMOpcode::LLVMPHI;
        for k in 0..c::LLVMGetNumOperands(i).max(0) as u32 {
            let v = c::LLVMGetOperand(i, k);
            if !has_shared_cast(v) {
                continue;
            }
            if is_phi {
                let bb = c::LLVMGetIncomingBlock(i, k);
                c::LLVMPositionBuilderBefore(b, c::LLVMGetBasicBlockTerminator(bb));
            } else {
                c::LLVMPositionBuilderBefore(b, i);
            }
            c::LLVMSetOperand(i, k, expand_shared_const(b, v, base_at));
        }
    }
}

/// Replaces the atomic read-modify-write `i` on shared memory, whose operands are final, by a
/// plain load, operation and store where that is exact: a CTA's CUDA threads all run on one
/// worker thread and interleave only at barriers and warp operations (thread loops) or
/// coroutine switches, never inside an instruction, and no other CTA sees its shared memory;
/// so a locked instruction (or a compare-exchange loop) buys nothing, and costs tens of cycles
/// per shared `atomicAdd` (histograms). Integer operations and compare-exchange are expanded;
/// float operations keep their atomic form (its rounding and NaN rules stay LLVM's).
unsafe fn plain_shared_atomic(b: LLVMBuilderRef, i: LLVMValueRef) {
    use llvm_sys::LLVMAtomicRMWBinOp::*;
    use llvm_sys::LLVMIntPredicate::*;
    c::LLVMPositionBuilderBefore(b, i);
    let n = c"".as_ptr();
    if c::LLVMGetInstructionOpcode(i) == LLVMOpcode::LLVMAtomicCmpXchg {
        let (p, cmp, new) = (
            c::LLVMGetOperand(i, 0),
            c::LLVMGetOperand(i, 1),
            c::LLVMGetOperand(i, 2),
        );
        let ty = c::LLVMTypeOf(cmp);
        if c::LLVMGetTypeKind(ty) != llvm_sys::LLVMTypeKind::LLVMIntegerTypeKind {
            return;
        }
        let old = c::LLVMBuildLoad2(b, ty, p, n);
        let eq = c::LLVMBuildICmp(b, LLVMIntEQ, old, cmp, n);
        let v = c::LLVMBuildSelect(b, eq, new, old, n);
        c::LLVMBuildStore(b, v, p);
        let pair = c::LLVMGetUndef(c::LLVMTypeOf(i));
        let pair = c::LLVMBuildInsertValue(b, pair, old, 0, n);
        let pair = c::LLVMBuildInsertValue(b, pair, eq, 1, n);
        c::LLVMReplaceAllUsesWith(i, pair);
        c::LLVMInstructionEraseFromParent(i);
        return;
    }
    let (p, val) = (c::LLVMGetOperand(i, 0), c::LLVMGetOperand(i, 1));
    let ty = c::LLVMTypeOf(val);
    if c::LLVMGetTypeKind(ty) != llvm_sys::LLVMTypeKind::LLVMIntegerTypeKind {
        return;
    }
    let rmw = c::LLVMGetAtomicRMWBinOp(i);
    let old_of = |b: LLVMBuilderRef| c::LLVMBuildLoad2(b, ty, p, n);
    let pick = |b: LLVMBuilderRef, pred, old: LLVMValueRef| {
        let keep = c::LLVMBuildICmp(b, pred, old, val, n);
        c::LLVMBuildSelect(b, keep, old, val, n)
    };
    let old = match rmw {
        LLVMAtomicRMWBinOpXchg
        | LLVMAtomicRMWBinOpAdd
        | LLVMAtomicRMWBinOpSub
        | LLVMAtomicRMWBinOpAnd
        | LLVMAtomicRMWBinOpOr
        | LLVMAtomicRMWBinOpXor
        | LLVMAtomicRMWBinOpMax
        | LLVMAtomicRMWBinOpMin
        | LLVMAtomicRMWBinOpUMax
        | LLVMAtomicRMWBinOpUMin
        | LLVMAtomicRMWBinOpUIncWrap
        | LLVMAtomicRMWBinOpUDecWrap => old_of(b),
        _ => return,
    };
    let new = match rmw {
        LLVMAtomicRMWBinOpXchg => val,
        LLVMAtomicRMWBinOpAdd => c::LLVMBuildAdd(b, old, val, n),
        LLVMAtomicRMWBinOpSub => c::LLVMBuildSub(b, old, val, n),
        LLVMAtomicRMWBinOpAnd => c::LLVMBuildAnd(b, old, val, n),
        LLVMAtomicRMWBinOpOr => c::LLVMBuildOr(b, old, val, n),
        LLVMAtomicRMWBinOpXor => c::LLVMBuildXor(b, old, val, n),
        LLVMAtomicRMWBinOpMax => pick(b, LLVMIntSGT, old),
        LLVMAtomicRMWBinOpMin => pick(b, LLVMIntSLT, old),
        LLVMAtomicRMWBinOpUMax => pick(b, LLVMIntUGT, old),
        LLVMAtomicRMWBinOpUMin => pick(b, LLVMIntULT, old),
        // LLVM's definitions: inc: old >= val ? 0 : old + 1; dec: (old == 0 || old > val) ?
        // val : old - 1 (PTX's atom.inc/atom.dec).
        LLVMAtomicRMWBinOpUIncWrap => {
            let one = c::LLVMConstInt(ty, 1, 0);
            let wrap = c::LLVMBuildICmp(b, LLVMIntUGE, old, val, n);
            let inc = c::LLVMBuildAdd(b, old, one, n);
            c::LLVMBuildSelect(b, wrap, c::LLVMConstNull(ty), inc, n)
        }
        _ => {
            let one = c::LLVMConstInt(ty, 1, 0);
            let zero = c::LLVMBuildICmp(b, LLVMIntEQ, old, c::LLVMConstNull(ty), n);
            let above = c::LLVMBuildICmp(b, LLVMIntUGT, old, val, n);
            let wrap = c::LLVMBuildOr(b, zero, above, n);
            let dec = c::LLVMBuildSub(b, old, one, n);
            c::LLVMBuildSelect(b, wrap, val, dec, n)
        }
    };
    c::LLVMBuildStore(b, new, p);
    c::LLVMReplaceAllUsesWith(i, old);
    c::LLVMInstructionEraseFromParent(i);
}

/// The shared-memory address space of the lowering.
const SHARED_AS: u32 = 3;
/// Offset of `ptx2llvm_thread::shared`.
const SHARED_FIELD: u64 = crate::runtime::abi::offset::SHARED as u64;

/// The static shared memory of a module as `prepare_module` laid it out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SharedLayout {
    /// Bytes of the static `.shared` variables (up to the dynamic arrays' start, when the
    /// module declares any).
    pub bytes: u32,
    /// The largest alignment a `.shared` variable asks for (at least 16): the CTA's block
    /// must start at a multiple of it.
    pub align: u32,
}

/// Where `prepare_module` puts each `.shared` variable of module `m`: (variable, offset) in
/// the CTA's block, the static bytes, and the largest alignment asked for. The warp engine
/// reads a variable's offset before that (`simd::lanetab`: a lane table's block).
///
/// # Safety
/// `m` is a live module and `td` its data layout.
pub unsafe fn shared_placement(
    m: LLVMModuleRef,
    td: llvm_sys::target::LLVMTargetDataRef,
) -> (Vec<(LLVMValueRef, u64)>, u64, u64) {
    let mut statics = Vec::new();
    let mut dynamics = Vec::new();
    let mut g = c::LLVMGetFirstGlobal(m);
    while !g.is_null() {
        if addr_space_of(g) == Some(SHARED_AS) {
            if c::LLVMIsDeclaration(g) != 0 {
                dynamics.push(g);
            } else {
                statics.push(g);
            }
        }
        g = c::LLVMGetNextGlobal(g);
    }
    let mut off: u64 = 0;
    let mut replace = Vec::new();
    let mut max_align: u64 = 16;
    for &g in &statics {
        let ty = c::LLVMGlobalGetValueType(g);
        let size = llvm_sys::target::LLVMABISizeOfType(td, ty);
        let align = (c::LLVMGetAlignment(g) as u64).max(1);
        max_align = max_align.max(align);
        off = off.div_ceil(align) * align;
        replace.push((g, off));
        off += size;
    }
    // The dynamic arrays start at a multiple of the largest alignment one asks for (and
    // of 16, where the runtime puts them: `LaunchConfig::dynamic_offset`); the static size
    // reported then includes the padding before them.
    let dyn_align = dynamics
        .iter()
        .map(|&g| (c::LLVMGetAlignment(g) as u64).max(16))
        .max()
        .unwrap_or(16);
    max_align = max_align.max(dyn_align);
    let dyn_off = off.div_ceil(dyn_align) * dyn_align;
    let static_bytes = if dynamics.is_empty() { off } else { dyn_off };
    for &g in &dynamics {
        replace.push((g, dyn_off));
    }
    (replace, static_bytes, max_align)
}

/// The offset `prepare_module` gives `.shared` variable `g` (`shared_placement`).
///
/// # Safety
/// `g` is a global of a live module.
pub unsafe fn shared_offset_of(g: LLVMValueRef) -> Option<u64> {
    let m = c::LLVMGetGlobalParent(g);
    let td = llvm_sys::target::LLVMGetModuleDataLayout(m);
    shared_placement(m, td)
        .0
        .into_iter()
        .find(|&(x, _)| x == g)
        .map(|(_, o)| o)
}

/// Rewrites a lowered module for the host (see the module doc). Returns the layout of static
/// shared memory. Errors name what cannot run on the cpu target.
pub fn prepare_module(
    module: &Module,
    kernels: &[KernelLayout],
) -> Result<SharedLayout, Vec<String>> {
    use inkwell::module::Module as _M;
    let _ = std::marker::PhantomData::<_M>;
    let m = module.as_mut_ptr();
    let mut errors = Vec::new();
    // SAFETY: `module` is live for the call and every handle below is taken from it or its context; the names are C strings.
    unsafe {
        let ctx = c::LLVMGetModuleContext(m);
        let td = llvm_sys::target::LLVMGetModuleDataLayout(m);
        let i8t = c::LLVMInt8TypeInContext(ctx);
        let i32t = c::LLVMInt32TypeInContext(ctx);
        let i64t = c::LLVMInt64TypeInContext(ctx);
        let ptr0 = c::LLVMPointerTypeInContext(ctx, 0);
        let ptr3 = c::LLVMPointerTypeInContext(ctx, SHARED_AS);
        let voidt = c::LLVMVoidTypeInContext(ctx);
        let b = c::LLVMCreateBuilderInContext(ctx);
        let declare = |name: &str, ty: LLVMTypeRef| -> LLVMValueRef {
            let cn = CString::new(name).unwrap_or_default();
            let f = c::LLVMGetNamedFunction(m, cn.as_ptr());
            if !f.is_null() {
                return f;
            }
            c::LLVMAddFunction(m, cn.as_ptr(), ty)
        };
        let self_ty = c::LLVMFunctionType(ptr0, std::ptr::null_mut(), 0, 0);
        let self_fn = declare("ptx2llvm_rt_self", self_ty);

        // 1. Shared variables → offsets.
        let (replace, static_bytes, max_align) = shared_placement(m, td);
        for (g, o) in replace {
            let k = c::LLVMConstIntToPtr(c::LLVMConstInt(i64t, o, 0), ptr3);
            c::LLVMReplaceAllUsesWith(g, k);
            c::LLVMDeleteGlobal(g);
        }

        // 2. Runtime replacements of declarations.
        for f in functions(m) {
            if c::LLVMIsDeclaration(f) == 0 {
                continue;
            }
            let name = name_of(f);
            let new_name = if let Some(rest) = name.strip_prefix("llvm.nvvm.") {
                Some(format!("ptx2llvm_nvvm_{}", rest.replace('.', "_")))
            } else {
                match name.as_str() {
                    "llvm.trap" => Some("ptx2llvm_nvvm_trap".to_string()),
                    "vprintf" => Some("ptx2llvm_rt_vprintf_dev".to_string()),
                    "__assertfail" => Some("ptx2llvm_rt_assertfail_dev".to_string()),
                    _ => None,
                }
            };
            let Some(new_name) = new_name else { continue };
            if name.starts_with("llvm.nvvm.") && !crate::runtime::nvvm::has(&new_name) {
                errors.push(format!("not supported on the cpu target: `{name}`"));
                continue;
            }
            let ty = c::LLVMGlobalGetValueType(f);
            let nf = declare(&new_name, ty);
            c::LLVMReplaceAllUsesWith(f, nf);
            c::LLVMDeleteFunction(f);
        }
        let exit_fn = declare(
            "ptx2llvm_nvvm_exit",
            c::LLVMFunctionType(voidt, std::ptr::null_mut(), 0, 0),
        );

        // 3. Per function: shared accesses, inline `exit;`, calling conventions.
        for f in functions(m) {
            c::LLVMSetFunctionCallConv(f, 0);
            if c::LLVMIsDeclaration(f) != 0 {
                continue;
            }
            // Thread-loop code receives the shared-memory base as a parameter.
            let mut base: LLVMValueRef = match super::fission::raw_shared_arg(f) {
                Some(i) => c::LLVMGetParam(f, i),
                None => std::ptr::null_mut(),
            };
            let entry = c::LLVMGetEntryBasicBlock(f);
            let mut shared_base = |b: LLVMBuilderRef| -> LLVMValueRef {
                if base.is_null() {
                    let cur = c::LLVMGetInsertBlock(b);
                    let pos = c::LLVMGetFirstInstruction(entry);
                    let tmp = c::LLVMCreateBuilderInContext(ctx);
                    c::LLVMPositionBuilderBefore(tmp, pos);
                    let t = c::LLVMBuildCall2(
                        tmp,
                        self_ty,
                        self_fn,
                        std::ptr::null_mut(),
                        0,
                        c"t".as_ptr(),
                    );
                    let mut idx = [c::LLVMConstInt(i64t, SHARED_FIELD, 0)];
                    let fp = c::LLVMBuildGEP2(tmp, i8t, t, idx.as_mut_ptr(), 1, c"".as_ptr());
                    base = c::LLVMBuildLoad2(tmp, ptr0, fp, c"shared.base".as_ptr());
                    c::LLVMDisposeBuilder(tmp);
                    let _ = cur;
                }
                base
            };
            expand_shared_consts(b, f, &mut shared_base);
            for i in instructions(f) {
                let op = c::LLVMGetInstructionOpcode(i);
                let ptr_index = match op {
                    LLVMOpcode::LLVMLoad
                    | LLVMOpcode::LLVMAtomicRMW
                    | LLVMOpcode::LLVMAtomicCmpXchg => Some(0),
                    LLVMOpcode::LLVMStore => Some(1),
                    _ => None,
                };
                if let Some(k) = ptr_index {
                    let p = c::LLVMGetOperand(i, k);
                    if addr_space_of(p) == Some(SHARED_AS) {
                        c::LLVMPositionBuilderBefore(b, i);
                        let sb = shared_base(b);
                        let o = shared_int(b, p, i64t);
                        let mut idx = [o];
                        let q = c::LLVMBuildGEP2(b, i8t, sb, idx.as_mut_ptr(), 1, c"".as_ptr());
                        c::LLVMSetOperand(i, k, q);
                        if op != LLVMOpcode::LLVMLoad && op != LLVMOpcode::LLVMStore {
                            plain_shared_atomic(b, i);
                        }
                    }
                    continue;
                }
                if op == LLVMOpcode::LLVMAddrSpaceCast {
                    let p = c::LLVMGetOperand(i, 0);
                    let from = addr_space_of(p);
                    let to = addr_space_of(i);
                    if from == Some(SHARED_AS) && to != Some(SHARED_AS) {
                        c::LLVMPositionBuilderBefore(b, i);
                        let sb = shared_base(b);
                        let o = c::LLVMBuildPtrToInt(b, p, i64t, c"".as_ptr());
                        let mut idx = [o];
                        let q = c::LLVMBuildGEP2(b, i8t, sb, idx.as_mut_ptr(), 1, c"".as_ptr());
                        let q = if to == Some(0) {
                            q
                        } else {
                            c::LLVMBuildAddrSpaceCast(b, q, c::LLVMTypeOf(i), c"".as_ptr())
                        };
                        c::LLVMReplaceAllUsesWith(i, q);
                        c::LLVMInstructionEraseFromParent(i);
                    } else if to == Some(SHARED_AS) && from != Some(SHARED_AS) {
                        c::LLVMPositionBuilderBefore(b, i);
                        let sb = shared_base(b);
                        let x = c::LLVMBuildPtrToInt(b, p, i64t, c"".as_ptr());
                        let y = c::LLVMBuildPtrToInt(b, sb, i64t, c"".as_ptr());
                        let d = c::LLVMBuildSub(b, x, y, c"".as_ptr());
                        let q = c::LLVMBuildIntToPtr(b, d, ptr3, c"".as_ptr());
                        c::LLVMReplaceAllUsesWith(i, q);
                        c::LLVMInstructionEraseFromParent(i);
                    }
                    continue;
                }
                if op == LLVMOpcode::LLVMCall {
                    let callee = c::LLVMGetCalledValue(i);
                    if !c::LLVMIsAInlineAsm(callee).is_null() {
                        let mut len = 0usize;
                        let s = c::LLVMGetInlineAsmAsmString(callee, &mut len);
                        let text = String::from_utf8_lossy(std::slice::from_raw_parts(
                            s as *const u8,
                            len,
                        ))
                        .into_owned();
                        if text.trim() == "exit;" {
                            c::LLVMPositionBuilderBefore(b, i);
                            c::LLVMBuildCall2(
                                b,
                                c::LLVMGlobalGetValueType(exit_fn),
                                exit_fn,
                                std::ptr::null_mut(),
                                0,
                                c"".as_ptr(),
                            );
                            c::LLVMInstructionEraseFromParent(i);
                        } else {
                            errors.push(format!(
                                "not supported on the cpu target: inline PTX `{}`",
                                text.trim()
                            ));
                        }
                        continue;
                    }
                    // Calls passing shared pointers to memory intrinsics are not expected.
                    let n = c::LLVMGetNumArgOperands(i);
                    for k in 0..n {
                        let a = c::LLVMGetOperand(i, k);
                        if addr_space_of(a) == Some(SHARED_AS) && !name_of(callee).is_empty() {
                            errors.push(format!(
                                "not supported on the cpu target: a shared-memory pointer passed to `{}`",
                                name_of(callee)
                            ));
                        }
                    }
                }
            }
        }

        // 4. Kernel entry points.
        for k in kernels {
            let cn = CString::new(k.name.as_str()).unwrap_or_default();
            let f = c::LLVMGetNamedFunction(m, cn.as_ptr());
            if f.is_null() {
                errors.push(format!("kernel `{}` was not lowered", k.name));
                continue;
            }
            set_name(f, &format!("{}.ptx", k.name));
            c::LLVMSetLinkage(f, llvm_sys::LLVMLinkage::LLVMInternalLinkage);
            let mut pt = [ptr0, ptr0];
            let wty = c::LLVMFunctionType(voidt, pt.as_mut_ptr(), 2, 0);
            let w = c::LLVMAddFunction(m, cn.as_ptr(), wty);
            let bb = c::LLVMAppendBasicBlockInContext(ctx, w, c"entry".as_ptr());
            c::LLVMPositionBuilderAtEnd(b, bb);
            let params = c::LLVMGetParam(w, 0);
            let fty = c::LLVMGlobalGetValueType(f);
            let n = c::LLVMCountParams(f);
            let mut args = Vec::new();
            for (idx, place) in (0..n).zip(k.params.iter().copied().chain(std::iter::repeat(
                ParamPlace {
                    offset: 0,
                    aggregate: false,
                },
            ))) {
                let pty = c::LLVMTypeOf(c::LLVMGetParam(f, idx));
                let mut gi = [c::LLVMConstInt(i64t, place.offset as u64, 0)];
                let addr = c::LLVMBuildGEP2(b, i8t, params, gi.as_mut_ptr(), 1, c"".as_ptr());
                let v = if place.aggregate {
                    addr
                } else {
                    let ld = c::LLVMBuildLoad2(b, pty, addr, c"".as_ptr());
                    c::LLVMSetAlignment(ld, 1);
                    ld
                };
                args.push(v);
            }
            c::LLVMBuildCall2(
                b,
                fty,
                f,
                args.as_mut_ptr(),
                args.len() as u32,
                c"".as_ptr(),
            );
            c::LLVMBuildRetVoid(b);
        }
        let _ = (i32t, i8t);
        c::LLVMDisposeBuilder(b);
        if errors.is_empty() {
            Ok(SharedLayout {
                bytes: static_bytes.min(u32::MAX as u64) as u32,
                align: max_align.min(1 << 31) as u32,
            })
        } else {
            errors.sort();
            errors.dedup();
            Err(errors)
        }
    }
}

/// Names of the functions `module` calls but does not define (LLVM intrinsics excepted).
pub fn undefined_functions(module: &Module) -> Vec<String> {
    let m = module.as_mut_ptr();
    let mut out = Vec::new();
    // SAFETY: `m` is the live module behind `module`; the walk only reads it.
    unsafe {
        for f in functions(m) {
            if c::LLVMIsDeclaration(f) != 0 && !c::LLVMGetFirstUse(f).is_null() {
                let n = name_of(f);
                if !n.starts_with("llvm.") {
                    out.push(n);
                }
            }
        }
    }
    out
}

/// Makes every defined module-scope variable (`.global`, `.const`) of a module about to be
/// JIT-compiled reachable from the host, as `cuModuleGetGlobal` makes it on a GPU: external
/// linkage, not constant (the host may write `.const` data before a launch, so its loads must
/// not be folded). Returns each variable's name and size in bytes.
pub fn expose_globals(module: &Module) -> Vec<(String, u64)> {
    let m = module.as_mut_ptr();
    let mut out = Vec::new();
    // SAFETY: `m` is the live module behind `module`; only its globals' linkage and constness change.
    unsafe {
        let td = llvm_sys::target::LLVMGetModuleDataLayout(m);
        let mut g = c::LLVMGetFirstGlobal(m);
        while !g.is_null() {
            let name = name_of(g);
            if c::LLVMIsDeclaration(g) == 0
                && addr_space_of(g) == Some(0)
                && !name.is_empty()
                && !name.starts_with("llvm.")
            {
                c::LLVMSetLinkage(g, llvm_sys::LLVMLinkage::LLVMExternalLinkage);
                c::LLVMSetUnnamedAddress(g, llvm_sys::LLVMUnnamedAddr::LLVMNoUnnamedAddr);
                c::LLVMSetGlobalConstant(g, 0);
                let size = llvm_sys::target::LLVMABISizeOfType(td, c::LLVMGlobalGetValueType(g));
                out.push((name, size));
            }
            g = c::LLVMGetNextGlobal(g);
        }
    }
    out
}

/// Gives every declared function that `needs_lookup` selects an internal definition that
/// finds the runtime's implementation with `ptx2llvm_rt_lookup(name)` on first use (cached in
/// an internal global) and calls it. Objects made with `--emit obj` link against the runtime
/// library, which exports the `ptx2llvm_rt_*` entry points but not the arithmetic helpers.
pub fn add_lookup_stubs(module: &Module, needs_lookup: &dyn Fn(&str) -> bool) {
    let m = module.as_mut_ptr();
    // SAFETY: `m` is the live module behind `module`; every type, value and block below is made in its context; the names are C strings.
    unsafe {
        let ctx = c::LLVMGetModuleContext(m);
        let ptr0 = c::LLVMPointerTypeInContext(ctx, 0);
        let mut pt = [ptr0];
        let lty = c::LLVMFunctionType(ptr0, pt.as_mut_ptr(), 1, 0);
        let lookup = {
            let f = c::LLVMGetNamedFunction(m, c"ptx2llvm_rt_lookup".as_ptr());
            if f.is_null() {
                c::LLVMAddFunction(m, c"ptx2llvm_rt_lookup".as_ptr(), lty)
            } else {
                f
            }
        };
        let b = c::LLVMCreateBuilderInContext(ctx);
        for f in functions(m) {
            if c::LLVMIsDeclaration(f) == 0 {
                continue;
            }
            let name = name_of(f);
            if !needs_lookup(&name) || c::LLVMGetFirstUse(f).is_null() {
                continue;
            }
            let fty = c::LLVMGlobalGetValueType(f);
            let cname = CString::new(format!("{name}.addr")).unwrap_or_default();
            let slot = c::LLVMAddGlobal(m, ptr0, cname.as_ptr());
            c::LLVMSetInitializer(slot, c::LLVMConstNull(ptr0));
            c::LLVMSetLinkage(slot, llvm_sys::LLVMLinkage::LLVMInternalLinkage);
            c::LLVMSetAlignment(slot, 8);
            let entry = c::LLVMAppendBasicBlockInContext(ctx, f, c"entry".as_ptr());
            let find = c::LLVMAppendBasicBlockInContext(ctx, f, c"find".as_ptr());
            let call = c::LLVMAppendBasicBlockInContext(ctx, f, c"call".as_ptr());
            c::LLVMPositionBuilderAtEnd(b, entry);
            let p = c::LLVMBuildLoad2(b, ptr0, slot, c"".as_ptr());
            c::LLVMSetOrdering(p, llvm_sys::LLVMAtomicOrdering::LLVMAtomicOrderingMonotonic);
            c::LLVMSetAlignment(p, 8);
            let null = c::LLVMBuildIsNull(b, p, c"".as_ptr());
            c::LLVMBuildCondBr(b, null, find, call);
            c::LLVMPositionBuilderAtEnd(b, find);
            let cn = CString::new(name.as_str()).unwrap_or_default();
            let s = c::LLVMBuildGlobalString(b, cn.as_ptr(), c"name".as_ptr());
            let mut a = [s];
            let q = c::LLVMBuildCall2(b, lty, lookup, a.as_mut_ptr(), 1, c"".as_ptr());
            let st = c::LLVMBuildStore(b, q, slot);
            c::LLVMSetOrdering(
                st,
                llvm_sys::LLVMAtomicOrdering::LLVMAtomicOrderingMonotonic,
            );
            c::LLVMSetAlignment(st, 8);
            c::LLVMBuildBr(b, call);
            c::LLVMPositionBuilderAtEnd(b, call);
            let target = c::LLVMBuildLoad2(b, ptr0, slot, c"".as_ptr());
            c::LLVMSetOrdering(
                target,
                llvm_sys::LLVMAtomicOrdering::LLVMAtomicOrderingMonotonic,
            );
            c::LLVMSetAlignment(target, 8);
            let n = c::LLVMCountParams(f);
            let mut args: Vec<LLVMValueRef> = (0..n).map(|k| c::LLVMGetParam(f, k)).collect();
            let r = c::LLVMBuildCall2(b, fty, target, args.as_mut_ptr(), n, c"".as_ptr());
            let rty = c::LLVMGetReturnType(fty);
            if c::LLVMGetTypeKind(rty) == llvm_sys::LLVMTypeKind::LLVMVoidTypeKind {
                c::LLVMBuildRetVoid(b);
            } else {
                c::LLVMBuildRet(b, r);
            }
            c::LLVMSetLinkage(f, llvm_sys::LLVMLinkage::LLVMInternalLinkage);
        }
        c::LLVMDisposeBuilder(b);
    }
}

/// A JIT-compiled module. The engine owns the module; keep it alive while kernels run.
pub struct Jit<'c> {
    ee: ExecutionEngine<'c>,
}

impl<'c> Jit<'c> {
    /// Compiles `module` for this process, resolving the runtime's symbols, and the module
    /// variables `module` declares to the addresses `bound` gives them (a lazily compiled
    /// fault replay shares its program's variables: `target::cpu::ReplayBuild`).
    pub fn new(
        module: &Module<'c>,
        opt: u8,
        symbols: &[(&str, usize)],
        bound: &[(String, usize)],
    ) -> Result<Jit<'c>, String> {
        LTarget::initialize_native(&InitializationConfig::default())?;
        for (name, addr) in symbols {
            let cn = CString::new(*name).map_err(|e| e.to_string())?;
            // SAFETY: `cn` is a NUL-terminated name LLVM copies; `addr` is only recorded (JIT code calls it).
            unsafe {
                llvm_sys::support::LLVMAddSymbol(cn.as_ptr(), *addr as *mut std::ffi::c_void)
            };
        }
        let ee = module
            .create_jit_execution_engine(level(opt))
            .map_err(|e| e.to_string())?;
        // Before any address lookup, which links the code.
        for (name, addr) in bound {
            if let Some(g) = module.get_global(name) {
                ee.add_global_mapping(&g, *addr);
            }
        }
        // Before the first address lookup: MCJIT generates code (and tells its listeners)
        // lazily, at the first `get_function_address`.
        if perf_jitdump_requested() {
            register_perf_jitdump(&ee);
        }
        let jit = Jit { ee };
        let map = std::env::var_os("PTX2LLVM_PERF_MAP").is_some();
        let dump = std::env::var_os("PTX2LLVM_CODE_DUMP");
        if map || dump.is_some() {
            jit.describe_code(module, map, dump.as_deref().map(std::path::Path::new));
        }
        Ok(jit)
    }

    /// For profiling the JIT code: with `map`, appends the module's functions to
    /// `/tmp/perf-<pid>.map`, the symbol file `perf report` reads for JIT code
    /// (`PTX2LLVM_PERF_MAP=1`); with `dump`, writes each function's bytes to
    /// `dump/<name>@<address>.bin` (`PTX2LLVM_CODE_DUMP=DIR`). MCJIT does not report sizes:
    /// each function is taken to reach the next one's start (all are in one code section), the
    /// last one the end of its mapping (`/proc/self/maps`; else of its page).
    fn describe_code(&self, module: &Module<'c>, map: bool, dump: Option<&std::path::Path>) {
        use std::io::Write;
        let mut fns: Vec<(usize, String)> = module
            .get_functions()
            .filter(|f| f.count_basic_blocks() > 0)
            .filter_map(|f| {
                let name = f.get_name().to_string_lossy().into_owned();
                Some((self.address(&name)?, name))
            })
            .collect();
        fns.sort();
        let mut file = map
            .then(|| {
                std::fs::OpenOptions::new()
                    .create(true)
                    .append(true)
                    .open(format!("/tmp/perf-{}.map", std::process::id()))
                    .ok()
            })
            .flatten();
        for (i, (addr, name)) in fns.iter().enumerate() {
            let end = fns
                .get(i + 1)
                .map_or_else(|| mapping_end(*addr).unwrap_or((addr | 4095) + 1), |n| n.0);
            let size = end - addr;
            if let Some(f) = file.as_mut() {
                let _ = writeln!(f, "{addr:x} {size:x} {name}");
            }
            if let Some(dir) = dump {
                // SAFETY: the bytes from one function to the next (or to the end of the last
                // one's page) are mapped code of this engine, which is alive.
                let bytes = unsafe { std::slice::from_raw_parts(*addr as *const u8, size) };
                let _ = std::fs::write(dir.join(format!("{name}@{addr:x}.bin")), bytes);
            }
        }
    }

    /// Where the module's machine code lies, as `[lo, hi)` ranges, for the fault handler
    /// (`runtime::fault::register_code`). MCJIT reports no sizes: per memory mapping holding
    /// some of the functions, the range runs from the lowest function address in it to the
    /// mapping's end (`/proc/self/maps`; else to the end of that function's page). Asking for
    /// the addresses finalizes the code.
    pub fn code_ranges(&self, module: &Module<'c>) -> Vec<(usize, usize)> {
        let mut addrs: Vec<usize> = module
            .get_functions()
            .filter(|f| f.count_basic_blocks() > 0)
            .filter_map(|f| self.address(f.get_name().to_str().ok()?))
            .collect();
        addrs.sort_unstable();
        let maps = std::fs::read_to_string("/proc/self/maps").unwrap_or_default();
        let vmas: Vec<(usize, usize)> = maps
            .lines()
            .filter_map(|line| {
                let (lo, hi) = line.split_whitespace().next()?.split_once('-')?;
                Some((
                    usize::from_str_radix(lo, 16).ok()?,
                    usize::from_str_radix(hi, 16).ok()?,
                ))
            })
            .collect();
        let mut out: Vec<(usize, usize)> = Vec::new();
        for a in addrs {
            if out.last().is_some_and(|&(lo, hi)| lo <= a && a < hi) {
                continue;
            }
            let hi = vmas
                .iter()
                .find(|&&(lo, hi)| lo <= a && a < hi)
                .map_or((a | 4095) + 1, |v| v.1);
            out.push((a, hi));
        }
        out
    }

    /// The address of function `name`.
    pub fn address(&self, name: &str) -> Option<usize> {
        self.ee.get_function_address(name).ok()
    }

    /// The address of global variable `name`.
    pub fn global_address(&self, name: &str) -> Option<usize> {
        let cn = CString::new(name).ok()?;
        // SAFETY: `self.ee` is this JIT's live execution engine; `cn` is NUL-terminated.
        let a = unsafe {
            llvm_sys::execution_engine::LLVMGetGlobalValueAddress(self.ee.as_mut_ptr(), cn.as_ptr())
        };
        (a != 0).then_some(a as usize)
    }
}

/// `PTX2LLVM_PERF_JITDUMP=1` (any value but `0`): write a perf jitdump of the JIT code.
fn perf_jitdump_requested() -> bool {
    std::env::var_os("PTX2LLVM_PERF_JITDUMP").is_some_and(|v| v != "0")
}

// `MCJIT::RegisterJITEventListener` is exported by libLLVM but the C API offers no way to
// reach it for an MCJIT engine (only ORC's `LLVMOrcRTDyldObjectLinkingLayerRegister…`); it is
// a non-virtual member function, called with the Itanium ABI: `this` first, then the listener.
extern "C" {
    #[link_name = "_ZN4llvm5MCJIT24RegisterJITEventListenerEPNS_16JITEventListenerE"]
    fn mcjit_register_jit_event_listener(
        mcjit: llvm_sys::execution_engine::LLVMExecutionEngineRef,
        listener: *mut llvm_sys::LLVMOpaqueJITEventListener,
    );
}

/// Attaches LLVM's perf listener to `ee`: every object the engine loads is then described in
/// `$JITDUMPDIR/.debug/jit/llvm-IR-jit-DATE-XXXXXX/jit-PID.dump` (`$HOME` when `JITDUMPDIR`
/// is unset): a load record per function with its code, and a debug-info record with its
/// line table when the module carries debug locations. `perf inject --jit` turns the dump
/// into ELF files that `perf report`/`perf annotate` read, by symbol and by source line.
/// (MCJIT registers LLVM's GDB listener itself, so gdb sees the same code without this.)
fn register_perf_jitdump(ee: &ExecutionEngine<'_>) {
    // SAFETY: the listener is LLVM's process-wide perf listener (never freed); it is null when
    // LLVM was built without perf support. `LLVMCreateJITCompilerForModule` makes an `MCJIT`,
    // whose `ExecutionEngine` base is its only one, so the engine handle is the `MCJIT *`
    // the member function expects.
    unsafe {
        let listener = llvm_sys::execution_engine::LLVMCreatePerfJITEventListener();
        if listener.is_null() {
            eprintln!(
                "ptx2llvm: warning: PTX2LLVM_PERF_JITDUMP: this LLVM was built without perf \
                 support (LLVM_USE_PERF); no jitdump is written"
            );
            return;
        }
        mcjit_register_jit_event_listener(ee.as_mut_ptr(), listener);
    }
}

/// The end of the mapping of this process that holds `addr` (`/proc/self/maps`).
fn mapping_end(addr: usize) -> Option<usize> {
    let maps = std::fs::read_to_string("/proc/self/maps").ok()?;
    maps.lines().find_map(|line| {
        let (lo, hi) = line.split_whitespace().next()?.split_once('-')?;
        let (lo, hi) = (
            usize::from_str_radix(lo, 16).ok()?,
            usize::from_str_radix(hi, 16).ok()?,
        );
        (lo <= addr && addr < hi).then_some(hi)
    })
}

/// Parses a module's context accessor (keeps the facade's types in one place).
pub fn context_of<'c>(m: &Module<'c>) -> inkwell::context::ContextRef<'c> {
    m.get_context()
}

#[allow(dead_code)]
fn _unused(_c: &Context) {}

/// For objects: a constructor (`llvm.global_ctors`) that registers each kernel's thread-loop
/// version with the runtime: `ptx2llvm_rt_register_fis(K, K.fis, words, len)` for every
/// `(K, K.fis, words)` of `regs`, the words in a private constant array.
pub fn add_fis_registrations(m: &Module, regs: &[(String, String, Vec<u32>)]) {
    use inkwell::module::Linkage;
    if regs.is_empty() {
        return;
    }
    let ctx = m.get_context();
    let i32t = ctx.i32_type();
    let ptr = ctx.ptr_type(inkwell::AddressSpace::default());
    let void = ctx.void_type();
    let reg_ty = void.fn_type(&[ptr.into(), ptr.into(), ptr.into(), i32t.into()], false);
    let reg = m
        .get_function("ptx2llvm_rt_register_fis")
        .unwrap_or_else(|| m.add_function("ptx2llvm_rt_register_fis", reg_ty, None));
    let ctor = m.add_function(
        "ptx2llvm.register_fis",
        void.fn_type(&[], false),
        Some(Linkage::Internal),
    );
    let b = ctx.create_builder();
    b.position_at_end(ctx.append_basic_block(ctor, "entry"));
    for (kernel, fis, words) in regs {
        let (Some(k), Some(f)) = (m.get_function(kernel), m.get_function(fis)) else {
            continue;
        };
        let vals: Vec<_> = words
            .iter()
            .map(|&w| i32t.const_int(w as u64, false))
            .collect();
        let arr = i32t.const_array(&vals);
        let g = m.add_global(arr.get_type(), None, &format!("{kernel}.fisinfo"));
        g.set_initializer(&arr);
        g.set_constant(true);
        g.set_linkage(Linkage::Private);
        let args = [
            k.as_global_value().as_pointer_value().into(),
            f.as_global_value().as_pointer_value().into(),
            g.as_pointer_value().into(),
            i32t.const_int(words.len() as u64, false).into(),
        ];
        b.build_call(reg, &args, "").expect("builder positioned");
    }
    b.build_return(None).expect("builder positioned");
    // @llvm.global_ctors = appending global [1 x { i32, ptr, ptr }]
    let entry_ty = ctx.struct_type(&[i32t.into(), ptr.into(), ptr.into()], false);
    let entry = entry_ty.const_named_struct(&[
        i32t.const_int(65535, false).into(),
        ctor.as_global_value().as_pointer_value().into(),
        ptr.const_null().into(),
    ]);
    let arr = entry_ty.const_array(&[entry]);
    let g = m.add_global(arr.get_type(), None, "llvm.global_ctors");
    g.set_initializer(&arr);
    g.set_linkage(Linkage::Appending);
}
