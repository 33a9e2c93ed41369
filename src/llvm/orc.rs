//! Loading compiled objects without compiling them: the kernel cache (`target::cpu::cache`)
//! keeps the machine code of a module as a relocatable object, and a later load links that
//! object into this process with LLVM ORC's LLJIT (`LLVMOrcLLJITAddObjectFile`; MCJIT, which
//! `cpu::Jit` uses, can take objects only through C++ APIs that LLVM's C API lacks).
//!
//! Each `ObjectJit` is a LLJIT instance of its own: its code and module variables are freed
//! with it, and two loads of one object have separate module variables (as two CUDA modules
//! loaded from the same PTX do).

use std::ffi::{CStr, CString};

use llvm_sys::error::{LLVMDisposeErrorMessage, LLVMErrorRef, LLVMGetErrorMessage};
use llvm_sys::orc2::lljit::*;
use llvm_sys::orc2::*;

/// The message of an LLVM error (consumed), or `None` for success.
fn error_text(e: LLVMErrorRef) -> Option<String> {
    if e.is_null() {
        return None;
    }
    // SAFETY: `e` is an error LLVM returned; taking its message consumes it, and the message
    // is copied before it is disposed.
    unsafe {
        let m = LLVMGetErrorMessage(e);
        let s = CStr::from_ptr(m).to_string_lossy().into_owned();
        LLVMDisposeErrorMessage(m);
        Some(s)
    }
}

/// An object file linked into this process.
pub struct ObjectJit {
    j: LLVMOrcLLJITRef,
}

impl ObjectJit {
    /// Links `object` (an ELF relocatable object for this host) into this process. Its
    /// undefined symbols resolve to `symbols` (the runtime's table: most of the runtime's
    /// helpers are not exported from the process) and then to the process's own symbols
    /// (the C library, libm).
    pub fn load(object: &[u8], symbols: &[(&str, usize)]) -> Result<ObjectJit, String> {
        use inkwell::targets::{InitializationConfig, Target};
        Target::initialize_native(&InitializationConfig::default())?;
        let mut j: LLVMOrcLLJITRef = std::ptr::null_mut();
        // SAFETY: a null builder asks for the default LLJIT; `j` is written on success.
        if let Some(e) = error_text(unsafe { LLVMOrcCreateLLJIT(&mut j, std::ptr::null_mut()) }) {
            return Err(format!("cannot create an ORC JIT: {e}"));
        }
        // From here on `jit` disposes of `j` on every path.
        let jit = ObjectJit { j };
        // SAFETY: `j` is a live LLJIT; the definitions and the generator are handed over to
        // its JITDylib, which owns them afterwards; the names are interned (and retained) by
        // `LLVMOrcLLJITMangleAndIntern`, whose references `LLVMOrcAbsoluteSymbols` takes.
        unsafe {
            // gdb's JIT interface learns of the object as of MCJIT's (function names and
            // line tables in backtraces); without it, debugging goes on without names.
            if let Some(e) = error_text(LLVMOrcLLJITEnableDebugSupport(j)) {
                if std::env::var_os("PTX2LLVM_CACHE_DEBUG").is_some() {
                    eprintln!("ptx2llvm: kernel cache: no gdb registration: {e}");
                }
            }
            let jd = LLVMOrcLLJITGetMainJITDylib(j);
            let mut pairs = Vec::with_capacity(symbols.len());
            for (name, addr) in symbols {
                let Ok(cn) = CString::new(*name) else {
                    continue;
                };
                pairs.push(LLVMOrcCSymbolMapPair {
                    Name: LLVMOrcLLJITMangleAndIntern(j, cn.as_ptr()),
                    Sym: LLVMJITEvaluatedSymbol {
                        Address: *addr as u64,
                        Flags: LLVMJITSymbolFlags {
                            GenericFlags:
                                LLVMJITSymbolGenericFlags::LLVMJITSymbolGenericFlagsExported as u8
                                    | LLVMJITSymbolGenericFlags::LLVMJITSymbolGenericFlagsCallable
                                        as u8,
                            TargetFlags: 0,
                        },
                    },
                });
            }
            if !pairs.is_empty() {
                let mu = LLVMOrcAbsoluteSymbols(pairs.as_mut_ptr(), pairs.len());
                if let Some(e) = error_text(LLVMOrcJITDylibDefine(jd, mu)) {
                    return Err(format!("cannot define the runtime's symbols: {e}"));
                }
            }
            let mut g: LLVMOrcDefinitionGeneratorRef = std::ptr::null_mut();
            if let Some(e) = error_text(LLVMOrcCreateDynamicLibrarySearchGeneratorForProcess(
                &mut g,
                LLVMOrcLLJITGetGlobalPrefix(j),
                None,
                std::ptr::null_mut(),
            )) {
                return Err(format!("cannot search the process's symbols: {e}"));
            }
            LLVMOrcJITDylibAddGenerator(jd, g);
            // ORC takes the buffer (and frees it); the bytes are copied into it.
            let buf = llvm_sys::core::LLVMCreateMemoryBufferWithMemoryRangeCopy(
                object.as_ptr() as *const std::ffi::c_char,
                object.len(),
                c"ptx2llvm-cached-object".as_ptr(),
            );
            if let Some(e) = error_text(LLVMOrcLLJITAddObjectFile(j, jd, buf)) {
                return Err(format!("cannot load the cached object: {e}"));
            }
        }
        Ok(jit)
    }

    /// The address of the object's symbol `name` (a function or a variable); looking a symbol
    /// up links the object (once), so a missing runtime symbol shows up here as `None`.
    pub fn address(&self, name: &str) -> Option<usize> {
        let cn = CString::new(name).ok()?;
        let mut a: LLVMOrcExecutorAddress = 0;
        // SAFETY: `j` is live; `a` is written on success.
        let e = unsafe { LLVMOrcLLJITLookup(self.j, &mut a, cn.as_ptr()) };
        match error_text(e) {
            None if a != 0 => Some(a as usize),
            _ => None,
        }
    }
}

impl Drop for ObjectJit {
    fn drop(&mut self) {
        // SAFETY: `j` was created by `LLVMOrcCreateLLJIT` and is disposed of once; the code
        // and data it linked are freed with it (the owner unregisters code ranges first).
        if let Some(e) = error_text(unsafe { LLVMOrcDisposeLLJIT(self.j) }) {
            eprintln!("ptx2llvm: warning: disposing of an ORC JIT: {e}");
        }
    }
}

/// What the kernel cache needs to know of an object (`inspect`).
#[derive(Debug, Default)]
pub struct ObjectSymbols {
    /// Per code section (`.text`, `.text.*`) holding one of the symbols `exported` names: that
    /// symbol, its offset in the section, and the section's size. With the symbol's run-time
    /// address this gives the section's range for the fault handler, internal functions
    /// included.
    pub code: Vec<(String, u64, u64)>,
    /// The symbols the object uses without defining them (runtime helpers, libm, and the
    /// helpers code generation itself calls, such as `__truncsfbf2`, which the IR never names).
    pub undefined: Vec<String>,
}

/// Reads `object`'s symbol table (see `ObjectSymbols`); an unreadable object gives nothing.
pub fn inspect(object: &[u8], exported: &[String]) -> ObjectSymbols {
    use llvm_sys::object::*;
    // (section name, symbol, offset, size)
    let mut found: Vec<(String, String, u64, u64)> = Vec::new();
    let mut undefined = Vec::new();
    // SAFETY: the buffer refers to `object`, alive for this call; the binary, its iterators
    // and the buffer are disposed of before returning; names are copied while valid.
    unsafe {
        let buf = llvm_sys::core::LLVMCreateMemoryBufferWithMemoryRange(
            object.as_ptr() as *const std::ffi::c_char,
            object.len(),
            c"object".as_ptr(),
            0,
        );
        let mut err: *mut std::ffi::c_char = std::ptr::null_mut();
        let bin = LLVMCreateBinary(buf, std::ptr::null_mut(), &mut err);
        if bin.is_null() {
            if !err.is_null() {
                llvm_sys::core::LLVMDisposeMessage(err);
            }
            llvm_sys::core::LLVMDisposeMemoryBuffer(buf);
            return ObjectSymbols::default();
        }
        let sym = LLVMObjectFileCopySymbolIterator(bin);
        let sect = LLVMObjectFileCopySectionIterator(bin);
        while LLVMObjectFileIsSymbolIteratorAtEnd(bin, sym) == 0 {
            let p = LLVMGetSymbolName(sym);
            let name = if p.is_null() {
                String::new()
            } else {
                CStr::from_ptr(p).to_string_lossy().into_owned()
            };
            LLVMMoveToContainingSection(sect, sym);
            if LLVMObjectFileIsSectionIteratorAtEnd(bin, sect) != 0 {
                // Undefined (or absolute, as the file symbol: callers filter by name).
                if !name.is_empty() {
                    undefined.push(name);
                }
            } else if exported.contains(&name) {
                let sp = LLVMGetSectionName(sect);
                let sname = if sp.is_null() {
                    String::new()
                } else {
                    CStr::from_ptr(sp).to_string_lossy().into_owned()
                };
                let base = LLVMGetSectionAddress(sect);
                let size = LLVMGetSectionSize(sect);
                let off = LLVMGetSymbolAddress(sym).wrapping_sub(base);
                let is_code = sname == ".text" || sname.starts_with(".text.");
                // One symbol per section.
                if is_code && !found.iter().any(|f| f.0 == sname) {
                    found.push((sname, name, off, size));
                }
            }
            LLVMMoveToNextSymbol(sym);
        }
        LLVMDisposeSectionIterator(sect);
        LLVMDisposeSymbolIterator(sym);
        LLVMDisposeBinary(bin);
        llvm_sys::core::LLVMDisposeMemoryBuffer(buf);
    }
    ObjectSymbols {
        code: found.into_iter().map(|(_, s, o, n)| (s, o, n)).collect(),
        undefined,
    }
}
