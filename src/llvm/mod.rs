//! The LLVM facade: the only module that touches inkwell and llvm-sys. It re-exports the
//! handful of inkwell types the lowering names (values, types, builder), and adds what inkwell
//! lacks or makes verbose: intrinsic calls by name, inline assembly, atomics and fences with
//! sync scopes, target machines, pass pipelines, the verifier and emission to text/bitcode/asm.

// Raw LLVM handles (`LLVMValueRef`) given to the helpers below come from live inkwell values of
// the same context; this facade is the one place that passes them to llvm-sys.
#![allow(clippy::not_unsafe_ptr_arg_deref)]

use std::ffi::c_char;

pub mod cpu;
pub mod debug;
pub mod fission;
pub mod orc;
pub mod simd;
pub mod sink;

pub use inkwell::attributes::AttributeLoc;
pub use inkwell::basic_block::BasicBlock;
pub use inkwell::builder::Builder;
pub use inkwell::context::Context;
pub use inkwell::module::{Linkage, Module};
pub use inkwell::types::{
    AnyTypeEnum, BasicMetadataTypeEnum, BasicType, BasicTypeEnum, FloatType, FunctionType, IntType,
    PointerType, StructType,
};
pub use inkwell::values::{
    AnyValue, BasicMetadataValueEnum, BasicValue, BasicValueEnum, FloatValue, FunctionValue,
    GlobalValue, IntValue, PointerValue,
};
pub use inkwell::AddressSpace;
pub use inkwell::{FloatPredicate, IntPredicate};

use inkwell::targets::{
    CodeModel, FileType, InitializationConfig, RelocMode, Target as LTarget, TargetMachine,
    TargetTriple,
};
use inkwell::types::AnyType as _;
use inkwell::values::AsValueRef as _;
use inkwell::OptimizationLevel;
use llvm_sys::core as c;
use llvm_sys::prelude::LLVMValueRef;

/// `ptx_kernel` calling convention number (llvm/IR/CallingConv.h).
pub const CC_PTX_KERNEL: u32 = 71;

/// Memory orderings of atomics and fences.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ordering {
    Monotonic,
    Acquire,
    Release,
    AcqRel,
    SeqCst,
}

fn sys_order(o: Ordering) -> llvm_sys::LLVMAtomicOrdering {
    use llvm_sys::LLVMAtomicOrdering::*;
    match o {
        Ordering::Monotonic => LLVMAtomicOrderingMonotonic,
        Ordering::Acquire => LLVMAtomicOrderingAcquire,
        Ordering::Release => LLVMAtomicOrderingRelease,
        Ordering::AcqRel => LLVMAtomicOrderingAcquireRelease,
        Ordering::SeqCst => LLVMAtomicOrderingSequentiallyConsistent,
    }
}

/// atomicrmw operations.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RmwOp {
    Xchg,
    Add,
    Sub,
    And,
    Or,
    Xor,
    Max,
    Min,
    UMax,
    UMin,
    FAdd,
    FMin,
    FMax,
    UIncWrap,
    UDecWrap,
}

/// The sync-scope id for `name` ("" = system).
pub fn sync_scope(ctx: &Context, name: &str) -> u32 {
    // SAFETY: `name` is valid for `name.len()` bytes (the C API takes a length, no NUL); `ctx` is a live context.
    unsafe { c::LLVMGetSyncScopeID(ctx_ref(ctx), name.as_ptr() as *const c_char, name.len()) }
}

fn ctx_ref(ctx: &Context) -> llvm_sys::prelude::LLVMContextRef {
    ctx.raw()
}

fn b_ref(b: &Builder) -> llvm_sys::prelude::LLVMBuilderRef {
    b.as_mut_ptr()
}

/// `freeze v`: poison becomes some fixed value (inkwell 0.11 has no builder method for it).
pub fn freeze<'c>(
    b: &Builder<'c>,
    v: inkwell::values::IntValue<'c>,
) -> inkwell::values::IntValue<'c> {
    use inkwell::values::AsValueRef as _;
    // SAFETY: `v` is a value of the function the builder is positioned in; the result is an
    // instruction of the same integer type.
    unsafe {
        inkwell::values::IntValue::new(c::LLVMBuildFreeze(b_ref(b), v.as_value_ref(), c"".as_ptr()))
    }
}

/// `atomicrmw op ptr, val ordering` in sync scope `scope` ("" = system).
pub fn atomic_rmw<'c>(
    ctx: &'c Context,
    b: &Builder<'c>,
    op: RmwOp,
    ptr: PointerValue<'c>,
    val: BasicValueEnum<'c>,
    ord: Ordering,
    scope: &str,
) -> BasicValueEnum<'c> {
    use llvm_sys::LLVMAtomicRMWBinOp::*;
    let sop = match op {
        RmwOp::Xchg => LLVMAtomicRMWBinOpXchg,
        RmwOp::Add => LLVMAtomicRMWBinOpAdd,
        RmwOp::Sub => LLVMAtomicRMWBinOpSub,
        RmwOp::And => LLVMAtomicRMWBinOpAnd,
        RmwOp::Or => LLVMAtomicRMWBinOpOr,
        RmwOp::Xor => LLVMAtomicRMWBinOpXor,
        RmwOp::Max => LLVMAtomicRMWBinOpMax,
        RmwOp::Min => LLVMAtomicRMWBinOpMin,
        RmwOp::UMax => LLVMAtomicRMWBinOpUMax,
        RmwOp::UMin => LLVMAtomicRMWBinOpUMin,
        RmwOp::FAdd => LLVMAtomicRMWBinOpFAdd,
        RmwOp::FMin => LLVMAtomicRMWBinOpFMin,
        RmwOp::FMax => LLVMAtomicRMWBinOpFMax,
        RmwOp::UIncWrap => LLVMAtomicRMWBinOpUIncWrap,
        RmwOp::UDecWrap => LLVMAtomicRMWBinOpUDecWrap,
    };
    let ss = sync_scope(ctx, scope);
    // SAFETY: the builder is positioned in a function of `ctx`, and `ptr`/`val` are values of it of matching types (the callers' contract).
    unsafe {
        let v = c::LLVMBuildAtomicRMWSyncScope(
            b_ref(b),
            sop,
            ptr.as_value_ref(),
            val.as_value_ref(),
            sys_order(ord),
            ss,
        );
        BasicValueEnum::new(v)
    }
}

/// `cmpxchg ptr, cmp, new ord ord` in `scope`; returns the loaded value.
pub fn atomic_cmpxchg<'c>(
    ctx: &'c Context,
    b: &Builder<'c>,
    ptr: PointerValue<'c>,
    cmp: BasicValueEnum<'c>,
    new: BasicValueEnum<'c>,
    ord: Ordering,
    scope: &str,
) -> BasicValueEnum<'c> {
    let ss = sync_scope(ctx, scope);
    let fail = match ord {
        Ordering::Release => Ordering::Monotonic,
        Ordering::AcqRel => Ordering::Acquire,
        o => o,
    };
    // SAFETY: the builder is positioned in a function of `ctx`, and `ptr`/`cmp`/`new` are values of it of matching types; the name is a C string.
    unsafe {
        let v = c::LLVMBuildAtomicCmpXchgSyncScope(
            b_ref(b),
            ptr.as_value_ref(),
            cmp.as_value_ref(),
            new.as_value_ref(),
            sys_order(ord),
            sys_order(fail),
            ss,
        );
        let name = b"\0";
        BasicValueEnum::new(c::LLVMBuildExtractValue(
            b_ref(b),
            v,
            0,
            name.as_ptr() as *const c_char,
        ))
    }
}

/// `fence [syncscope(scope)] ord`.
pub fn fence(ctx: &Context, b: &Builder, ord: Ordering, scope: &str) {
    let ss = sync_scope(ctx, scope);
    // SAFETY: the builder is positioned in a function of `ctx`; the name is a C string.
    unsafe {
        c::LLVMBuildFenceSyncScope(b_ref(b), sys_order(ord), ss, c"".as_ptr());
    }
}

/// Makes a load or store instruction atomic (or volatile).
pub fn set_atomic(ctx: &Context, inst: LLVMValueRef, ord: Ordering, scope: &str) {
    let ss = sync_scope(ctx, scope);
    // SAFETY: `inst` is a load or store (the callers' contract), which takes an ordering and sync scope.
    unsafe {
        c::LLVMSetOrdering(inst, sys_order(ord));
        c::LLVMSetAtomicSyncScopeID(inst, ss);
    }
}

pub fn set_volatile(inst: LLVMValueRef) {
    // SAFETY: `inst` is a load or store (the callers' contract).
    unsafe { c::LLVMSetVolatile(inst, 1) }
}

pub fn set_alignment(inst: LLVMValueRef, align: u32) {
    // SAFETY: `inst` is a load, store or alloca (the callers' contract).
    unsafe { c::LLVMSetAlignment(inst, align) }
}

/// The raw handle of a value (for `set_atomic` etc.).
pub fn raw<'c>(v: impl AnyValue<'c>) -> LLVMValueRef {
    v.as_value_ref()
}

/// Makes the declared function `decl` an alias of `target` (PTX `.alias`): its uses call
/// `target` directly, and a global alias with `decl`'s name and linkage keeps the symbol.
/// inkwell has no alias API.
pub fn alias_function<'c>(m: &Module<'c>, decl: FunctionValue<'c>, target: FunctionValue<'c>) {
    let name = std::ffi::CString::new(decl.get_name().to_bytes()).unwrap_or_default();
    // SAFETY: `decl` and `target` are functions of module `m`; the name is a NUL-terminated copy.
    unsafe {
        let d = raw(decl);
        let t = raw(target);
        let linkage = c::LLVMGetLinkage(d);
        c::LLVMReplaceAllUsesWith(d, t);
        c::LLVMDeleteFunction(d);
        let ty = c::LLVMGlobalGetValueType(t);
        let a = c::LLVMAddAlias2(m.as_mut_ptr(), ty, 0, t, name.as_ptr());
        c::LLVMSetLinkage(a, linkage);
    }
}

/// A fresh loop ID `!0 = !{!0, !{!"llvm.loop.unroll.disable"}}` (self-referential, so
/// distinct), built through llvm-sys: inkwell cannot make a node refer to itself.
pub fn loop_unroll_disable(ctx: &Context) -> llvm_sys::prelude::LLVMMetadataRef {
    loop_id(ctx, &[("llvm.loop.unroll.disable", None)])
}

/// A fresh loop ID with the given hints: `!0 = !{!0, !{!"key"}, !{!"key", i32 v}, ...}`.
pub fn loop_id(ctx: &Context, hints: &[(&str, Option<u32>)]) -> llvm_sys::prelude::LLVMMetadataRef {
    // SAFETY: `ctx` is a live context.
    unsafe { loop_id_raw(ctx_ref(ctx), hints) }
}

/// [`loop_id`] in a raw context (the warp engine builds with llvm-sys).
///
/// # Safety
/// `cx` must be a live context.
pub unsafe fn loop_id_raw(
    cx: llvm_sys::prelude::LLVMContextRef,
    hints: &[(&str, Option<u32>)],
) -> llvm_sys::prelude::LLVMMetadataRef {
    // SAFETY: only creates metadata in the live context `cx` (the caller's promise); the
    // strings are passed with their lengths.
    unsafe {
        let tmp = llvm_sys::debuginfo::LLVMTemporaryMDNode(cx, std::ptr::null_mut(), 0);
        let mut items = vec![tmp];
        for &(key, value) in hints {
            let mut node = vec![c::LLVMMDStringInContext2(
                cx,
                key.as_ptr().cast(),
                key.len(),
            )];
            if let Some(v) = value {
                let i32t = c::LLVMInt32TypeInContext(cx);
                node.push(c::LLVMValueAsMetadata(c::LLVMConstInt(i32t, v.into(), 0)));
            }
            items.push(c::LLVMMDNodeInContext2(cx, node.as_mut_ptr(), node.len()));
        }
        let id = c::LLVMMDNodeInContext2(cx, items.as_mut_ptr(), items.len());
        llvm_sys::debuginfo::LLVMMetadataReplaceAllUsesWith(tmp, id);
        id
    }
}

/// Alias scopes of the PTX state spaces whose memory is disjoint on the cpu target
/// (`.global`, `.shared`, `.const`), and of global memory read with `ld.global.nc`, which
/// no thread writes while the kernel runs: an access of one is in its scope and `noalias`
/// with the others, so LLVM may reorder and vectorize shared-memory stores around loads
/// through global pointers, and stores around non-coherent loads, without the run-time
/// checks it cannot otherwise avoid. One set per module.
pub struct SpaceScopes {
    /// Per space: the scope list with its own scope, and the list of the others.
    lists: [(
        llvm_sys::prelude::LLVMMetadataRef,
        llvm_sys::prelude::LLVMMetadataRef,
    ); 4],
}

/// Index of a space in [`SpaceScopes`].
pub const SCOPE_GLOBAL: usize = 0;
pub const SCOPE_SHARED: usize = 1;
pub const SCOPE_CONST: usize = 2;
/// `ld.global.nc`: global memory no thread writes during the kernel.
pub const SCOPE_NC: usize = 3;

impl SpaceScopes {
    pub fn new(ctx: &Context) -> SpaceScopes {
        // SAFETY: only creates metadata in the live context `ctx`; the strings are passed with their lengths.
        unsafe {
            let cx = ctx_ref(ctx);
            // Distinct (self-referential) nodes: `!d = !{!d, !"name"}`, `!s = !{!s, !d, !"name"}`.
            let named = |rest: &mut Vec<llvm_sys::prelude::LLVMMetadataRef>, name: &str| {
                let tmp = llvm_sys::debuginfo::LLVMTemporaryMDNode(cx, std::ptr::null_mut(), 0);
                let mut items = vec![tmp];
                items.append(rest);
                items.push(c::LLVMMDStringInContext2(
                    cx,
                    name.as_ptr().cast(),
                    name.len(),
                ));
                let id = c::LLVMMDNodeInContext2(cx, items.as_mut_ptr(), items.len());
                llvm_sys::debuginfo::LLVMMetadataReplaceAllUsesWith(tmp, id);
                id
            };
            let domain = named(&mut Vec::new(), "ptx2llvm.spaces");
            let scope: Vec<_> = ["global", "shared", "const", "readonly"]
                .iter()
                .map(|n| named(&mut vec![domain], n))
                .collect();
            let list = |v: &mut Vec<llvm_sys::prelude::LLVMMetadataRef>| {
                c::LLVMMDNodeInContext2(cx, v.as_mut_ptr(), v.len())
            };
            let lists = std::array::from_fn(|k| {
                let mut own = vec![scope[k]];
                let mut others: Vec<_> = (0..4).filter(|&o| o != k).map(|o| scope[o]).collect();
                (list(&mut own), list(&mut others))
            });
            SpaceScopes { lists }
        }
    }

    /// Marks a load or store as an access of space `which` (`SCOPE_*`).
    pub fn mark(&self, ctx: &Context, inst: inkwell::values::InstructionValue<'_>, which: usize) {
        // SAFETY: `inst` is an instruction of a module of `ctx`; the metadata nodes were made in `ctx` by `new`.
        unsafe {
            let cx = ctx_ref(ctx);
            let (own, others) = self.lists[which];
            for (kind, md) in [("alias.scope", own), ("noalias", others)] {
                let k = c::LLVMGetMDKindIDInContext(cx, kind.as_ptr().cast(), kind.len() as u32);
                c::LLVMSetMetadata(inst.as_value_ref(), k, c::LLVMMetadataAsValue(cx, md));
            }
        }
    }
}

/// Attaches a loop ID (see [`loop_unroll_disable`]) to a branch as `!llvm.loop`.
pub fn set_loop_metadata(
    ctx: &Context,
    branch: inkwell::values::InstructionValue<'_>,
    id: llvm_sys::prelude::LLVMMetadataRef,
) {
    // SAFETY: `branch` is an instruction of a module of `ctx` and `id` a loop ID made in `ctx`.
    unsafe {
        let cx = ctx_ref(ctx);
        let kind = "llvm.loop";
        let k = c::LLVMGetMDKindIDInContext(cx, kind.as_ptr().cast(), kind.len() as u32);
        c::LLVMSetMetadata(branch.as_value_ref(), k, c::LLVMMetadataAsValue(cx, id));
    }
}

/// Calls (declaring on first use) the function `name` of type `ret(args)`; used for
/// `llvm.nvvm.*` and other intrinsics, whose names LLVM recognises.
pub fn call_named<'c>(
    module: &Module<'c>,
    b: &Builder<'c>,
    name: &str,
    ret: Option<BasicTypeEnum<'c>>,
    args: &[BasicValueEnum<'c>],
) -> Option<BasicValueEnum<'c>> {
    let f = match module.get_function(name) {
        Some(f) => f,
        None => {
            let params: Vec<BasicMetadataTypeEnum> =
                args.iter().map(|a| a.get_type().into()).collect();
            let ty = match ret {
                Some(r) => r.fn_type(&params, false),
                None => module.get_context().void_type().fn_type(&params, false),
            };
            module.add_function(name, ty, None)
        }
    };
    let margs: Vec<BasicMetadataValueEnum> = args.iter().map(|a| (*a).into()).collect();
    let cs = b.build_call(f, &margs, "").expect("builder positioned");
    cs.try_as_basic_value().basic()
}

/// Builds a call to inline assembly `asm` with `constraints`; returns the result value
/// (a struct when several outputs).
pub fn inline_asm<'c>(
    ctx: &'c Context,
    b: &Builder<'c>,
    ret: Option<BasicTypeEnum<'c>>,
    args: &[BasicValueEnum<'c>],
    asm: &str,
    constraints: &str,
    side_effects: bool,
) -> Option<BasicValueEnum<'c>> {
    let params: Vec<BasicMetadataTypeEnum> = args.iter().map(|a| a.get_type().into()).collect();
    let fty = match ret {
        Some(r) => r.fn_type(&params, false),
        None => ctx.void_type().fn_type(&params, false),
    };
    let f = ctx.create_inline_asm(
        fty,
        asm.to_string(),
        constraints.to_string(),
        side_effects,
        false,
        None,
        false,
    );
    let margs: Vec<BasicMetadataValueEnum> = args.iter().map(|a| (*a).into()).collect();
    let cs = b
        .build_indirect_call(fty, f, &margs, "")
        .expect("builder positioned");
    cs.try_as_basic_value().basic()
}

/// What to write.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EmitKind {
    Llvm,
    Bitcode,
    Asm,
    Object,
}

/// A target machine for a triple/CPU/features.
pub struct Machine {
    tm: TargetMachine,
}

impl Machine {
    /// The NVPTX back end for `sm_XX` with PTX ISA feature `+ptxNN`.
    pub fn nvptx(cpu: &str, features: &str, opt: u8, bits64: bool) -> Result<Machine, String> {
        LTarget::initialize_nvptx(&InitializationConfig::default());
        let triple = TargetTriple::create(if bits64 {
            "nvptx64-nvidia-cuda"
        } else {
            "nvptx-nvidia-cuda"
        });
        let t = LTarget::from_triple(&triple).map_err(|e| e.to_string())?;
        let level = match opt {
            0 => OptimizationLevel::None,
            1 => OptimizationLevel::Less,
            2 => OptimizationLevel::Default,
            _ => OptimizationLevel::Aggressive,
        };
        let tm = t
            .create_target_machine(
                &triple,
                cpu,
                features,
                level,
                RelocMode::Default,
                CodeModel::Default,
            )
            .ok_or_else(|| format!("cannot create an NVPTX target machine for {cpu} {features}"))?;
        Ok(Machine { tm })
    }

    /// Sets the module's triple and data layout to this machine's.
    pub fn configure(&self, m: &Module) {
        m.set_triple(&self.tm.get_triple());
        m.set_data_layout(&self.tm.get_target_data().get_data_layout());
    }

    /// Runs the new-pass-manager pipeline `default<On>` (nothing at -O0 but the verifier).
    pub fn optimize(&self, m: &Module, opt: u8) -> Result<(), String> {
        let pipeline = if opt == 0 {
            "verify".to_string()
        } else {
            format!("default<O{opt}>")
        };
        let opts = inkwell::passes::PassBuilderOptions::create();
        opts.set_verify_each(false);
        m.run_passes(&pipeline, &self.tm, opts)
            .map_err(|e| e.to_string())
    }

    pub fn emit(&self, m: &Module, kind: EmitKind) -> Result<Vec<u8>, String> {
        match kind {
            EmitKind::Llvm => Ok(m.print_to_string().to_bytes().to_vec()),
            EmitKind::Bitcode => Ok(m.write_bitcode_to_memory().as_slice().to_vec()),
            EmitKind::Asm | EmitKind::Object => {
                let ft = if kind == EmitKind::Asm {
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

/// Runs the IR verifier; the error text names the first problem.
pub fn verify(m: &Module) -> Result<(), String> {
    m.verify().map_err(|e| e.to_string())
}

pub use inkwell::attributes::Attribute;

/// An enum attribute (`noreturn`, `align(N)`, …) by name.
pub fn enum_attr(ctx: &Context, name: &str, val: u64) -> Attribute {
    ctx.create_enum_attribute(Attribute::get_named_enum_kind_id(name), val)
}

/// A type attribute (`byval(T)`, …) by name.
pub fn type_attr<'c>(ctx: &'c Context, name: &str, ty: BasicTypeEnum<'c>) -> Attribute {
    ctx.create_type_attribute(
        Attribute::get_named_enum_kind_id(name),
        ty.as_any_type_enum(),
    )
}

/// Whether `f` carries the enum function attribute `name`.
pub fn has_fn_attr(f: FunctionValue, name: &str) -> bool {
    f.get_enum_attribute(
        AttributeLoc::Function,
        Attribute::get_named_enum_kind_id(name),
    )
    .is_some()
}
pub use inkwell::values::VectorValue;

/// The integer type of `bits` bits (1 ≤ bits).
pub fn int_type(ctx: &Context, bits: u32) -> IntType<'_> {
    ctx.custom_width_int_type(std::num::NonZeroU32::new(bits.max(1)).unwrap())
        .expect("valid integer width")
}

/// A host JIT compilation of a module (MCJIT), for executing lowered code on the machine
/// running ptx2llvm: tests of the lowering's semantics, and the cpu target.
pub struct HostJit<'c> {
    ee: inkwell::execution_engine::ExecutionEngine<'c>,
}

impl<'c> HostJit<'c> {
    /// Sets the module's triple and data layout to the host's and JIT-compiles it at `opt`.
    pub fn new(m: &Module<'c>, opt: u8) -> Result<HostJit<'c>, String> {
        LTarget::initialize_native(&InitializationConfig::default())?;
        let triple = TargetMachine::get_default_triple();
        m.set_triple(&triple);
        let level = match opt {
            0 => OptimizationLevel::None,
            1 => OptimizationLevel::Less,
            2 => OptimizationLevel::Default,
            _ => OptimizationLevel::Aggressive,
        };
        let t = LTarget::from_triple(&triple).map_err(|e| e.to_string())?;
        let cpu = TargetMachine::get_host_cpu_name().to_string();
        let features = cpu::host_features();
        let tm = t
            .create_target_machine(
                &triple,
                &cpu,
                features,
                level,
                RelocMode::Default,
                CodeModel::JITDefault,
            )
            .ok_or("cannot create a host target machine")?;
        m.set_data_layout(&tm.get_target_data().get_data_layout());
        let ee = m
            .create_jit_execution_engine(level)
            .map_err(|e| e.to_string())?;
        Ok(HostJit { ee })
    }

    /// Resolves calls to the declared function `f` to the host address `addr`.
    pub fn map_function(&self, f: FunctionValue<'c>, addr: usize) {
        self.ee.add_global_mapping(&f, addr);
    }

    /// The address of the compiled function `name`.
    pub fn function_address(&self, name: &str) -> Option<usize> {
        self.ee.get_function_address(name).ok()
    }
}

/// Makes the host symbol `name` resolve to `addr` for JIT-compiled code (LLVM's process-wide
/// symbol table; consulted before the process's own dynamic symbols), e.g. for compiler
/// runtime functions such as `__truncsfhf2`.
pub fn add_host_symbol(name: &str, addr: usize) {
    let c = std::ffi::CString::new(name).expect("symbol name without NUL");
    // SAFETY: `c` is a NUL-terminated name; LLVM copies it, and `addr` is only recorded (JIT code calls it).
    unsafe { llvm_sys::support::LLVMAddSymbol(c.as_ptr(), addr as *mut std::ffi::c_void) }
}

/// The address of host symbol `name` as JIT-compiled code would resolve it (null if none).
pub fn host_symbol(name: &str) -> usize {
    let c = std::ffi::CString::new(name).expect("symbol name without NUL");
    // SAFETY: `c` is a NUL-terminated name; the lookup only reads it.
    unsafe { llvm_sys::support::LLVMSearchForAddressOfSymbol(c.as_ptr()) as usize }
}
