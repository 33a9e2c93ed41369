//! The default command: translate a PTX file for a target and write the requested output.

use super::{Emit, Target, TranslateArgs};
use crate::driver;
use ptx2llvm::llvm::EmitKind;
use ptx2llvm::lower::debug::DebugOptions;
use ptx2llvm::syntax::diag::Diagnostic;
use ptx2llvm::target::nvptx::{self, CompileError};

pub fn run(args: &TranslateArgs) -> i32 {
    let Some(path) = &args.file else {
        eprintln!("error: no input file; see `ptx2llvm --help`");
        return 2;
    };
    let src = match driver::load(path) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("{e}");
            return 1;
        }
    };
    let src = src.as_str();
    let (module, info, diags) = driver::front_end(src);
    if !diags.is_empty() {
        eprint!("{}", driver::render(&diags, path, src));
        return 1;
    }
    let module = &module;
    if args.target == Target::Cpu {
        return cpu(args, path, src, module, &info);
    }
    if let Some(arch) = &args.arch {
        if !nvptx::LLVM_ARCHS.contains(&arch.as_str()) {
            eprintln!(
                "error: unknown GPU architecture `--arch {arch}`; expected one of: {}",
                nvptx::LLVM_ARCHS.join(", ")
            );
            return 2;
        }
    }
    let emit = match args.emit {
        Emit::Llvm => EmitKind::Llvm,
        Emit::Bc => EmitKind::Bitcode,
        Emit::Asm => EmitKind::Asm,
        Emit::Obj => {
            eprintln!("error: --emit obj is not available for the nvptx target (use --emit asm and ptxas)");
            return 2;
        }
    };
    let opts = nvptx::Options {
        emit,
        opt: args.opt,
        arch: args.arch.clone(),
        name: path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default(),
        debug: DebugOptions::new(args.debug, &driver::debug_path(path), src),
    };
    match nvptx::compile(module, &info, &opts) {
        Ok(out) => {
            if !out.text && args.output.is_none() {
                eprintln!("error: refusing to write bitcode to stdout; use -o FILE");
                return 2;
            }
            match driver::write_output(args.output.as_deref(), &out.bytes) {
                Ok(()) => 0,
                Err(e) => {
                    eprintln!("{e}");
                    1
                }
            }
        }
        Err(CompileError::Lower(errs)) => {
            let diags: Vec<Diagnostic> = errs
                .iter()
                .map(|e| Diagnostic::new(e.span().unwrap_or_default(), e.to_string()))
                .collect();
            eprint!("{}", driver::render(&diags, path, src));
            1
        }
        Err(CompileError::Llvm(e)) => {
            eprintln!("{}: error: {e}", path.display());
            1
        }
    }
}

/// `--target cpu`: host IR, bitcode, assembly or an object with one C entry point per kernel.
fn cpu<'a>(
    args: &TranslateArgs,
    path: &std::path::Path,
    src: &str,
    module: &'a ptx2llvm::syntax::ast::Module<'a>,
    info: &ptx2llvm::check::ModuleInfo,
) -> i32 {
    use ptx2llvm::target::cpu;
    let emit = match args.emit {
        Emit::Llvm => EmitKind::Llvm,
        Emit::Bc => EmitKind::Bitcode,
        Emit::Asm => EmitKind::Asm,
        Emit::Obj => EmitKind::Object,
    };
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let debug = DebugOptions::new(args.debug, &driver::debug_path(path), src);
    match cpu::compile_debug(module, info, emit, args.opt, &name, &debug) {
        Ok(out) => {
            if !out.text && args.output.is_none() {
                eprintln!("error: refusing to write binary output to stdout; use -o FILE");
                return 2;
            }
            match driver::write_output(args.output.as_deref(), &out.bytes) {
                Ok(()) => 0,
                Err(e) => {
                    eprintln!("{e}");
                    1
                }
            }
        }
        Err(cpu::CompileError::Lower(errs)) => {
            let diags: Vec<Diagnostic> = errs
                .iter()
                .map(|e| Diagnostic::new(e.span().unwrap_or_default(), e.to_string()))
                .collect();
            eprint!("{}", driver::render(&diags, path, src));
            1
        }
        Err(cpu::CompileError::Llvm(e)) => {
            eprintln!("{}: error: {e}", path.display());
            1
        }
    }
}
