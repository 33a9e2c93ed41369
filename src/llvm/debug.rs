//! Debug metadata (DWARF through LLVM's `DIBuilder`), for the lowering's source positions.
//!
//! A thin layer over llvm-sys rather than inkwell's `DebugInfoBuilder`: inkwell creates the
//! compile unit itself and its emission kinds lack `DebugDirectivesOnly`, which the NVPTX back
//! end needs to print `.file`/`.loc` without the `, debug` target flag (that flag makes ptxas
//! compile without optimization, as `nvcc -lineinfo` output does not). Metadata handles are
//! `Copy` wrappers of `LLVMMetadataRef` that live as long as the context (`'c`).

use std::marker::PhantomData;

use inkwell::values::AsValueRef as _;
use llvm_sys::core as c;
use llvm_sys::debuginfo as d;
use llvm_sys::prelude::{LLVMDIBuilderRef, LLVMMetadataRef};

use super::{Builder, Context, FunctionValue, Module, PointerValue};

/// How much the back end emits from the debug metadata.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DebugKind {
    /// Everything: types, variables, scopes (`-g`).
    Full,
    /// Line tables (`.debug_line`) and the subprograms they need.
    LineTablesOnly,
    /// Only the assembler's `.file`/`.loc` directives, no DWARF sections (NVPTX).
    DirectivesOnly,
}

impl DebugKind {
    /// `DICompileUnit::DebugEmissionKind` (llvm/IR/DebugInfoMetadata.h); the C API's enum
    /// stops before `DebugDirectivesOnly`.
    fn raw(self) -> u32 {
        match self {
            DebugKind::Full => 1,
            DebugKind::LineTablesOnly => 2,
            DebugKind::DirectivesOnly => 3,
        }
    }
}

/// How a register's bits read as a value (`DW_ATE_*`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DebugEncoding {
    Boolean,
    Signed,
    Unsigned,
    Float,
}

impl DebugEncoding {
    fn dw_ate(self) -> u32 {
        match self {
            DebugEncoding::Boolean => 0x02,
            DebugEncoding::Float => 0x04,
            DebugEncoding::Signed => 0x05,
            DebugEncoding::Unsigned => 0x07,
        }
    }
}

/// A metadata node (file, scope, location, type, variable) of the context `'c`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Md<'c> {
    raw: LLVMMetadataRef,
    _ctx: PhantomData<&'c Context>,
}

impl<'c> Md<'c> {
    fn new(raw: LLVMMetadataRef) -> Md<'c> {
        assert!(!raw.is_null(), "DIBuilder returned no metadata");
        Md {
            raw,
            _ctx: PhantomData,
        }
    }
}

// `LLVMDIBuilderCreateCompileUnit` with the emission kind as the integer it is in C, so that
// `DebugDirectivesOnly` (3), which llvm-sys's Rust enum cannot hold, can be passed.
extern "C" {
    #[link_name = "LLVMDIBuilderCreateCompileUnit"]
    fn create_compile_unit(
        builder: LLVMDIBuilderRef,
        lang: u32,
        file: LLVMMetadataRef,
        producer: *const std::ffi::c_char,
        producer_len: usize,
        is_optimized: i32,
        flags: *const std::ffi::c_char,
        flags_len: usize,
        runtime_ver: u32,
        split_name: *const std::ffi::c_char,
        split_name_len: usize,
        kind: u32,
        dwo_id: u32,
        split_debug_inlining: i32,
        debug_info_for_profiling: i32,
        sysroot: *const std::ffi::c_char,
        sysroot_len: usize,
        sdk: *const std::ffi::c_char,
        sdk_len: usize,
    ) -> LLVMMetadataRef;
}

/// C++: what debuggers should assume of the source files `.file` names (CUDA); PTX itself
/// has no DWARF language.
const LANG_C_PLUS_PLUS: u32 =
    llvm_sys::debuginfo::LLVMDWARFSourceLanguage::LLVMDWARFSourceLanguageC_plus_plus as u32;

/// A `DIBuilder` with its compile unit, for one module. `finalize` before verifying.
pub struct DebugBuilder<'c> {
    raw: LLVMDIBuilderRef,
    ctx: &'c Context,
    cu: Md<'c>,
    optimized: bool,
    /// The (empty) subroutine type every subprogram shares.
    fn_type: Md<'c>,
}

impl<'c> DebugBuilder<'c> {
    /// Starts the debug metadata of `module`: its compile unit (named `file` in `dir`) and the
    /// module flags "Debug Info Version" and "Dwarf Version".
    pub fn new(
        ctx: &'c Context,
        module: &Module<'c>,
        kind: DebugKind,
        dwarf_version: u32,
        (file, dir): (&str, &str),
        optimized: bool,
    ) -> DebugBuilder<'c> {
        let m = module.as_mut_ptr();
        // SAFETY: `m` is a live module of `ctx`; every string is passed with its length; the
        // builder is disposed of in `Drop`.
        unsafe {
            let raw = d::LLVMCreateDIBuilder(m);
            let f = d::LLVMDIBuilderCreateFile(
                raw,
                file.as_ptr().cast(),
                file.len(),
                dir.as_ptr().cast(),
                dir.len(),
            );
            let producer = concat!("ptx2llvm ", env!("CARGO_PKG_VERSION"));
            let cu = create_compile_unit(
                raw,
                LANG_C_PLUS_PLUS,
                f,
                producer.as_ptr().cast(),
                producer.len(),
                optimized as i32,
                "".as_ptr().cast(),
                0,
                0,
                "".as_ptr().cast(),
                0,
                kind.raw(),
                0,
                0,
                0,
                "".as_ptr().cast(),
                0,
                "".as_ptr().cast(),
                0,
            );
            let fn_type = d::LLVMDIBuilderCreateSubroutineType(raw, f, std::ptr::null_mut(), 0, 0);
            let flag = |key: &str, v: u32| {
                let i32t = c::LLVMInt32TypeInContext(ctx.raw());
                let val = c::LLVMValueAsMetadata(c::LLVMConstInt(i32t, v as u64, 0));
                // Behavior "Warning" (as clang): modules that disagree still link.
                c::LLVMAddModuleFlag(
                    m,
                    llvm_sys::LLVMModuleFlagBehavior::LLVMModuleFlagBehaviorWarning,
                    key.as_ptr().cast(),
                    key.len(),
                    val,
                );
            };
            flag("Debug Info Version", d::LLVMDebugMetadataVersion());
            flag("Dwarf Version", dwarf_version);
            DebugBuilder {
                raw,
                ctx,
                cu: Md::new(cu),
                optimized,
                fn_type: Md::new(fn_type),
            }
        }
    }

    /// A `DIFile` for `path` (split into directory and name at the last `/`).
    pub fn file(&self, path: &str) -> Md<'c> {
        let (dir, name) = match path.rfind('/') {
            Some(k) => (&path[..k.max(1)], &path[k + 1..]),
            None => ("", path),
        };
        // SAFETY: strings with their lengths, a live builder.
        Md::new(unsafe {
            d::LLVMDIBuilderCreateFile(
                self.raw,
                name.as_ptr().cast(),
                name.len(),
                dir.as_ptr().cast(),
                dir.len(),
            )
        })
    }

    /// A subprogram (`DISubprogram`, a definition in the compile unit) named `name`, declared
    /// at `file:line`; attached to `func` when given (else the abstract origin of inlined
    /// code, as `.loc … function_name` names it).
    pub fn subprogram(
        &self,
        name: &str,
        file: Md<'c>,
        line: u32,
        func: Option<FunctionValue<'c>>,
    ) -> Md<'c> {
        let local = func.is_some_and(|f| {
            matches!(
                f.get_linkage(),
                inkwell::module::Linkage::Internal | inkwell::module::Linkage::Private
            )
        });
        // SAFETY: live builder and metadata of this context; strings with their lengths.
        let sp = unsafe {
            d::LLVMDIBuilderCreateFunction(
                self.raw,
                file.raw,
                name.as_ptr().cast(),
                name.len(),
                name.as_ptr().cast(),
                name.len(),
                file.raw,
                line,
                self.fn_type.raw,
                local as i32,
                1,
                line,
                d::LLVMDIFlagPrototyped,
                self.optimized as i32,
            )
        };
        if let Some(f) = func {
            // SAFETY: a live function and a subprogram of its context.
            unsafe { d::LLVMSetSubprogram(f.as_value_ref(), sp) };
        }
        Md::new(sp)
    }

    /// `scope` seen from another file (`DILexicalBlockFile`): how a location of a function
    /// names a line of a file other than the function's.
    pub fn scope_in_file(&self, scope: Md<'c>, file: Md<'c>) -> Md<'c> {
        // SAFETY: live builder and metadata.
        Md::new(unsafe { d::LLVMDIBuilderCreateLexicalBlockFile(self.raw, scope.raw, file.raw, 0) })
    }

    /// A `DILocation` at `line:col` in `scope`, inlined at `inlined_at` when given.
    pub fn location(
        &self,
        line: u32,
        col: u32,
        scope: Md<'c>,
        inlined_at: Option<Md<'c>>,
    ) -> Md<'c> {
        // SAFETY: metadata of this context; a null `InlinedAt` means none.
        Md::new(unsafe {
            d::LLVMDIBuilderCreateDebugLocation(
                self.ctx.raw(),
                line,
                col,
                scope.raw,
                inlined_at.map_or(std::ptr::null_mut(), |l| l.raw),
            )
        })
    }

    /// A base type of `bits` bits named `name`.
    pub fn basic_type(&self, name: &str, bits: u32, enc: DebugEncoding) -> Md<'c> {
        // SAFETY: live builder; string with its length.
        Md::new(unsafe {
            d::LLVMDIBuilderCreateBasicType(
                self.raw,
                name.as_ptr().cast(),
                name.len(),
                bits as u64,
                enc.dw_ate(),
                0,
            )
        })
    }

    /// Describes `storage` (an alloca) as the local variable `name` of type `ty` in `scope`,
    /// with a `#dbg_declare` before `before`.
    pub fn declare(
        &self,
        storage: PointerValue<'c>,
        name: &str,
        (scope, file, line): (Md<'c>, Md<'c>, u32),
        ty: Md<'c>,
        loc: Md<'c>,
        before: inkwell::values::InstructionValue<'c>,
    ) {
        // SAFETY: live builder, metadata of this context, a live alloca and instruction of
        // one function; strings with their lengths.
        unsafe {
            let var = d::LLVMDIBuilderCreateAutoVariable(
                self.raw,
                scope.raw,
                name.as_ptr().cast(),
                name.len(),
                file.raw,
                line,
                ty.raw,
                // Keep variables whose registers optimization removed (shown as optimized out).
                1,
                0,
                0,
            );
            let expr = d::LLVMDIBuilderCreateExpression(self.raw, std::ptr::null_mut(), 0);
            d::LLVMDIBuilderInsertDeclareRecordBefore(
                self.raw,
                storage.as_value_ref(),
                var,
                expr,
                loc.raw,
                before.as_value_ref(),
            );
        }
    }

    /// Gives the functions built around lowered ones (the cpu target's kernel entry points and
    /// thread-loop drivers, which call the lowered functions and inline them) an artificial
    /// subprogram, and every call without a location of a function with a subprogram a
    /// location at its caller's line: the inlined code then keeps its lines (a function without
    /// a subprogram has no line table), and the verifier's rule that such calls carry a
    /// location holds.
    pub fn cover_callers(&self, module: &Module<'c>) {
        use llvm_sys::core as c;
        // SAFETY: a walk over the live functions, blocks and instructions of `module`, reading
        // and setting debug metadata of its context.
        unsafe {
            let callee_sp = |i| {
                if c::LLVMIsACallInst(i).is_null() {
                    return std::ptr::null_mut();
                }
                let f = c::LLVMGetCalledValue(i);
                if f.is_null() || c::LLVMIsAFunction(f).is_null() {
                    return std::ptr::null_mut();
                }
                d::LLVMGetSubprogram(f)
            };
            // Callers of callers are covered in later rounds.
            loop {
                let mut changed = false;
                let mut f = c::LLVMGetFirstFunction(module.as_mut_ptr());
                while !f.is_null() {
                    if c::LLVMIsDeclaration(f) == 0 {
                        let mut calls = Vec::new();
                        let mut first = None;
                        let mut bb = c::LLVMGetFirstBasicBlock(f);
                        while !bb.is_null() {
                            let mut i = c::LLVMGetFirstInstruction(bb);
                            while !i.is_null() {
                                let sp = callee_sp(i);
                                if !sp.is_null() && d::LLVMInstructionGetDebugLoc(i).is_null() {
                                    first.get_or_insert(sp);
                                    calls.push(i);
                                }
                                i = c::LLVMGetNextInstruction(i);
                            }
                            bb = c::LLVMGetNextBasicBlock(bb);
                        }
                        if let Some(callee) = first {
                            let mut sp = d::LLVMGetSubprogram(f);
                            if sp.is_null() {
                                sp = self.artificial_subprogram(f, callee);
                            }
                            let line = d::LLVMDISubprogramGetLine(sp);
                            let loc = self.location(line, 0, Md::new(sp), None);
                            for i in calls {
                                d::LLVMInstructionSetDebugLoc(i, loc.raw);
                            }
                            changed = true;
                        }
                    }
                    f = c::LLVMGetNextFunction(f);
                }
                if !changed {
                    break;
                }
            }
        }
    }

    /// A subprogram for `f`, a function the compiler built around lowered code, at the file
    /// and line of the subprogram `callee` of a function it calls.
    ///
    /// # Safety
    /// `f` is a live function and `callee` a subprogram of this builder's context.
    unsafe fn artificial_subprogram(
        &self,
        f: llvm_sys::prelude::LLVMValueRef,
        callee: LLVMMetadataRef,
    ) -> LLVMMetadataRef {
        use llvm_sys::core as c;
        // SAFETY: as the caller promises; the name is read with its length.
        unsafe {
            let mut len = 0;
            let name = c::LLVMGetValueName2(f, &mut len);
            let line = d::LLVMDISubprogramGetLine(callee);
            let file = d::LLVMDIScopeGetFile(callee);
            let sp = d::LLVMDIBuilderCreateFunction(
                self.raw,
                file,
                name,
                len,
                name,
                len,
                file,
                line,
                self.fn_type.raw,
                1,
                1,
                line,
                d::LLVMDIFlagArtificial | d::LLVMDIFlagPrototyped,
                self.optimized as i32,
            );
            d::LLVMSetSubprogram(f, sp);
            sp
        }
    }

    /// Resolves what the builder left pending (subprograms' retained nodes, …); call once,
    /// before verifying or emitting the module.
    pub fn finalize(&self) {
        // SAFETY: a live builder.
        unsafe { d::LLVMDIBuilderFinalize(self.raw) }
    }

    /// The compile unit.
    pub fn unit(&self) -> Md<'c> {
        self.cu
    }
}

impl Drop for DebugBuilder<'_> {
    fn drop(&mut self) {
        // SAFETY: created in `new`, disposed of once.
        unsafe { d::LLVMDisposeDIBuilder(self.raw) }
    }
}

/// Makes `loc` the location of the instructions `b` builds next (`None`: no location).
pub fn set_location<'c>(b: &Builder<'c>, loc: Option<Md<'c>>) {
    // SAFETY: a live builder; a location of its context or null.
    unsafe {
        c::LLVMSetCurrentDebugLocation2(b.as_mut_ptr(), loc.map_or(std::ptr::null_mut(), |l| l.raw))
    }
}

/// The location the builder gives the instructions it builds next.
pub fn current_location<'c>(b: &Builder<'c>) -> Option<Md<'c>> {
    // SAFETY: a live builder.
    let raw = unsafe { c::LLVMGetCurrentDebugLocation2(b.as_mut_ptr()) };
    (!raw.is_null()).then(|| Md::new(raw))
}

/// Gives the functions that a target generates around lowered ones (the cpu target's entry
/// wrappers `K` around `K.ptx`, its thread-loop functions `K.fis`, `K.fis.loops`, `K.warp<r>`
/// around `K.step`) a subprogram and a location for each of their instructions: their
/// origin's file and first line. Without them the origin's code, once inlined there, would
/// have no line table (the back end describes only functions with a subprogram), so neither
/// gdb's line breakpoints nor perf's source lines would reach it; with them the inlined code
/// keeps its own lines, inlined at the generated function's. `origin_of` names the origin of
/// a function without a subprogram (`None`: leave it alone). Call before `finalize`.
pub fn describe_generated<'c>(
    db: &DebugBuilder<'c>,
    module: &Module<'c>,
    origin_of: impl Fn(&str) -> Option<String>,
) {
    for f in module.get_functions() {
        if f.count_basic_blocks() == 0 {
            continue;
        }
        // SAFETY: live functions of `module`; metadata of its context.
        unsafe {
            if !d::LLVMGetSubprogram(f.as_value_ref()).is_null() {
                continue;
            }
            let name = f.get_name().to_string_lossy().into_owned();
            let Some(origin) = origin_of(&name).and_then(|o| module.get_function(&o)) else {
                continue;
            };
            let osp = d::LLVMGetSubprogram(origin.as_value_ref());
            if osp.is_null() {
                continue;
            }
            let file = Md::new(d::LLVMDIScopeGetFile(osp));
            let line = d::LLVMDISubprogramGetLine(osp);
            let sp = db.subprogram(&name, file, line, Some(f));
            let loc = db.location(line, 0, sp, None);
            for bb in f.get_basic_block_iter() {
                let mut i = bb.get_first_instruction();
                while let Some(ins) = i {
                    // The builder's location may have been left over from the origin's
                    // lowering: every instruction here is the generated function's own.
                    d::LLVMInstructionSetDebugLoc(ins.as_value_ref(), loc.raw);
                    i = ins.get_next_instruction();
                }
            }
        }
    }
}
