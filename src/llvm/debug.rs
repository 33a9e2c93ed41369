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
use llvm_sys::prelude::{LLVMDIBuilderRef, LLVMMetadataRef, LLVMValueRef};

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
                // Under line tables only, LLVM leaves out the subprogram DIE of a function
                // without inlined scopes unless the unit is "for profiling"; gdb then files
                // its lines under the unit's static block and keeps one breakpoint location
                // for all such functions (the warp engine's `K.simd.w` and `K.simd.rows` both
                // hold a kernel line; only one of them runs).
                matches!(kind, DebugKind::LineTablesOnly) as i32,
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

    /// Gives every function that a target generates around lowered ones a subprogram, and
    /// every call of a described function a location; call once, after the module's last
    /// function is built and before `finalize`.
    ///
    /// A generated function (the cpu target's entry points `K` around `K.ptx`, its thread loops
    /// `K.fis`, `K.fis.loops` and `K.warp<r>` around `K.step`) is a defined function without a
    /// subprogram that calls one with a subprogram (callers of callers are covered in later
    /// rounds). It gets a subprogram at its callee's file and first line, and each of its
    /// instructions that location: whatever location the builder left on them belongs to
    /// another function. Without it the lowered code, once inlined there, would have no line
    /// table (LLVM describes only functions with a subprogram): no gdb line breakpoint and no
    /// perf source line would reach it. A call without a location of a described function, in
    /// a described function, gets its caller's first line (the verifier requires a location on
    /// calls that can be inlined between described functions).
    pub fn cover_generated(&self, module: &Module<'c>) {
        // SAFETY: `i` is a live instruction of `module`.
        let callee_sp = |i: LLVMValueRef| unsafe {
            if c::LLVMIsACallInst(i).is_null() {
                return std::ptr::null_mut();
            }
            let f = c::LLVMGetCalledValue(i);
            if f.is_null() || c::LLVMIsAFunction(f).is_null() {
                return std::ptr::null_mut();
            }
            d::LLVMGetSubprogram(f)
        };
        let instructions = |f: FunctionValue<'c>| {
            f.get_basic_block_iter()
                .flat_map(|bb| bb.get_instructions())
                .map(|i| i.as_value_ref())
                .collect::<Vec<_>>()
        };
        loop {
            let mut changed = false;
            for f in module.get_functions() {
                if f.count_basic_blocks() == 0 {
                    continue;
                }
                let insts = instructions(f);
                // SAFETY: a live function.
                let sp = unsafe { d::LLVMGetSubprogram(f.as_value_ref()) };
                if sp.is_null() {
                    let Some(callee) = insts.iter().map(|&i| callee_sp(i)).find(|sp| !sp.is_null())
                    else {
                        continue;
                    };
                    // SAFETY: `callee` is a subprogram of this context.
                    let (file, line) = unsafe {
                        (
                            Md::new(d::LLVMDIScopeGetFile(callee)),
                            d::LLVMDISubprogramGetLine(callee),
                        )
                    };
                    let name = f.get_name().to_string_lossy().into_owned();
                    let sp = self.subprogram(&name, file, line, Some(f));
                    let loc = self.location(line, 0, sp, None);
                    for i in insts {
                        // SAFETY: a live instruction, a location of its context.
                        unsafe { d::LLVMInstructionSetDebugLoc(i, loc.raw) };
                    }
                    changed = true;
                } else {
                    let mut loc = None;
                    for i in insts {
                        // SAFETY: a live instruction.
                        let bare = unsafe { d::LLVMInstructionGetDebugLoc(i).is_null() };
                        if bare && !callee_sp(i).is_null() {
                            let l = *loc.get_or_insert_with(|| {
                                // SAFETY: `sp` is a subprogram of this context.
                                let line = unsafe { d::LLVMDISubprogramGetLine(sp) };
                                self.location(line, 0, Md::new(sp), None)
                            });
                            // SAFETY: a live instruction, a location of its context.
                            unsafe { d::LLVMInstructionSetDebugLoc(i, l.raw) };
                        }
                    }
                }
            }
            if !changed {
                break;
            }
        }
    }

    /// Gives `to`, a function built from `from`'s instructions with their locations (the warp
    /// engine's `K.simd.w`, `K.simd.rows`), a subprogram of its own and moves those locations
    /// into it: a location belongs to one function's subprogram (the verifier checks it), and
    /// `perf` and gdb find `to`'s code by its line table. Locations keep their line, column and
    /// inlined-function scope; the outermost scope becomes `to`'s. Instructions without one (the
    /// vectorizer's scaffolding before the first source instruction) get line 0 of `to`.
    pub fn rehome(&self, from: FunctionValue<'c>, to: FunctionValue<'c>) {
        // SAFETY: live functions of this context.
        let old = unsafe { d::LLVMGetSubprogram(from.as_value_ref()) };
        if old.is_null() {
            return;
        }
        // SAFETY: `old` is a subprogram of this context.
        let (file, line) = unsafe {
            (
                Md::new(d::LLVMDIScopeGetFile(old)),
                d::LLVMDISubprogramGetLine(old),
            )
        };
        let name = to.get_name().to_string_lossy().into_owned();
        let sp = self.subprogram(&name, file, line, Some(to));
        let mut moved: std::collections::HashMap<LLVMMetadataRef, Md<'c>> = Default::default();
        let line0 = self.location(0, 0, sp, None);
        for i in to
            .get_basic_block_iter()
            .flat_map(|bb| bb.get_instructions())
            .map(|i| i.as_value_ref())
        {
            // SAFETY: a live instruction.
            let loc = unsafe { d::LLVMInstructionGetDebugLoc(i) };
            let new = if loc.is_null() {
                line0
            } else {
                self.moved_location(loc, old, sp, &mut moved)
            };
            // SAFETY: a live instruction, a location of its context.
            unsafe { d::LLVMInstructionSetDebugLoc(i, new.raw) };
        }
    }

    /// `loc` (of the function described by `old`) as a location of the one described by `sp`.
    fn moved_location(
        &self,
        loc: LLVMMetadataRef,
        old: LLVMMetadataRef,
        sp: Md<'c>,
        moved: &mut std::collections::HashMap<LLVMMetadataRef, Md<'c>>,
    ) -> Md<'c> {
        if let Some(&m) = moved.get(&loc) {
            return m;
        }
        // SAFETY: `loc` is a `DILocation` of this context.
        let (line, col, scope, at) = unsafe {
            (
                d::LLVMDILocationGetLine(loc),
                d::LLVMDILocationGetColumn(loc),
                d::LLVMDILocationGetScope(loc),
                d::LLVMDILocationGetInlinedAt(loc),
            )
        };
        let new = if at.is_null() {
            // An outermost location: its scope is `old` or `old` seen from another file (the
            // lowering makes no other scopes).
            // SAFETY: `scope` is a scope of this context.
            let file_scope = unsafe {
                matches!(
                    d::LLVMGetMetadataKind(scope),
                    d::LLVMMetadataKind::LLVMDILexicalBlockFileMetadataKind
                )
            };
            let scope = if scope != old && file_scope {
                // SAFETY: as above.
                self.scope_in_file(sp, Md::new(unsafe { d::LLVMDIScopeGetFile(scope) }))
            } else {
                sp
            };
            self.location(line, col, scope, None)
        } else {
            let at = self.moved_location(at, old, sp, moved);
            self.location(line, col, Md::new(scope), Some(at))
        };
        moved.insert(loc, new);
        new
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

/// Line 0 (code of no source line) in `loc`'s scope and inlining: for checks the compiler adds
/// to an instruction, so that a debugger's line breakpoint does not land on them once an
/// optimization has moved them (a loop-invariant alignment test hoisted out of a thread loop
/// would otherwise take the line's first address and stop once per CTA, not per thread).
pub fn line_zero<'c>(ctx: &'c Context, loc: Md<'c>) -> Md<'c> {
    // SAFETY: `loc` is a live `DILocation` of `ctx`; its scope and inlined-at are too.
    Md::new(unsafe {
        d::LLVMDIBuilderCreateDebugLocation(
            ctx.raw(),
            0,
            0,
            d::LLVMDILocationGetScope(loc.raw),
            d::LLVMDILocationGetInlinedAt(loc.raw),
        )
    })
}

/// The location the builder gives the instructions it builds next.
pub fn current_location<'c>(b: &Builder<'c>) -> Option<Md<'c>> {
    // SAFETY: a live builder.
    let raw = unsafe { c::LLVMGetCurrentDebugLocation2(b.as_mut_ptr()) };
    (!raw.is_null()).then(|| Md::new(raw))
}
