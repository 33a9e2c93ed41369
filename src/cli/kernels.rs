//! `ptx2llvm kernels FILE.ptx [--header OUT.h]`: lists the kernels (`.entry` definitions) of a
//! PTX file with their parameters and the CUDA layout of their parameter buffer, or writes a
//! C/C++ header with one typed launch function per kernel for objects made with
//! `ptx2llvm FILE.ptx --target cpu --emit obj` (what the CMake function `ptx2llvm_add_kernels`
//! uses).
//!
//! Parameter types in the header: `.u8/.u16/.u32` → `uint8_t/uint16_t/uint32_t`,
//! `.s8…s64` → `int8_t…int64_t`, `.b8…b64` → `uint8_t…uint64_t`, `.f32/.f64` → `float/double`,
//! `.f16/.bf16` → `uint16_t` (the bits). PTX does not say what a parameter points to: pointers
//! are `.u64` parameters (compilers use `.u64` for every pointer), so `.u64` parameters and
//! parameters with a `.ptr` attribute are `void *` (the `.ptr` space and alignment are noted in
//! a comment). Arrays and vectors (by-value structs, `.b8 p[N]`) are `const void *` pointing at
//! the parameter's bytes, which the launch function copies.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use clap::Args;

use crate::driver;
use ptx2llvm::isa::Mod;
use ptx2llvm::syntax::ast::{FnKind, Function, Item, Param};
use ptx2llvm::target::cpu::{layout, ParamInfo};

#[derive(Args, Debug)]
pub struct KernelsArgs {
    /// The PTX file.
    #[arg(value_name = "FILE.ptx")]
    pub file: PathBuf,
    /// Write a C/C++ header with a typed launch function per kernel to OUT.h (`-`: stdout)
    /// instead of listing the kernels.
    #[arg(long, value_name = "OUT.h")]
    pub header: Option<PathBuf>,
    /// The symbol holding the object's static shared memory size, as the header's launch
    /// functions refer to it (rename `ptx2llvm_static_shared_bytes` in the object, e.g. with
    /// `objcopy --redefine-sym`, to link several objects into one program).
    #[arg(
        long,
        value_name = "SYMBOL",
        default_value = "ptx2llvm_static_shared_bytes"
    )]
    pub shared_symbol: String,
}

pub fn run(args: &KernelsArgs) -> i32 {
    let path = &args.file;
    let src = match driver::load(path) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("{e}");
            return 1;
        }
    };
    let diags = driver::parse_and_check(&src);
    if !diags.is_empty() {
        eprint!("{}", driver::render(&diags, path, &src));
        return 1;
    }
    if !is_c_ident(&args.shared_symbol) {
        eprintln!(
            "error: --shared-symbol `{}` is not a C identifier",
            args.shared_symbol
        );
        return 2;
    }
    let (module, _) = ptx2llvm::syntax::parse(&src);
    let kernels: Vec<&Function> = module
        .items
        .iter()
        .filter_map(|it| match it {
            Item::Function(f) if f.kind == FnKind::Entry && f.body.is_some() => Some(&**f),
            _ => None,
        })
        .collect();
    let text = match &args.header {
        None => listing(&kernels),
        Some(out) => header(&kernels, path, out, &args.shared_symbol),
    };
    match driver::write_output(args.header.as_deref(), text.as_bytes()) {
        Ok(()) => 0,
        Err(e) => {
            eprintln!("{e}");
            1
        }
    }
}

/// One line per kernel, then one per parameter: offset, size, PTX declaration, C parameter.
fn listing(kernels: &[&Function]) -> String {
    let mut s = String::new();
    if kernels.is_empty() {
        s.push_str("no kernels\n");
    }
    for f in kernels {
        let l = layout(f);
        let align = l.params.iter().map(|p| p.align).max().unwrap_or(1);
        let _ = writeln!(
            s,
            "{}: {} param(s), {} byte(s), align {}",
            f.name,
            l.params.len(),
            l.size,
            align
        );
        for ((p, info), n) in f.params.iter().zip(&l.params).zip(param_names(f)) {
            let _ = writeln!(
                s,
                "  offset {:<4} size {:<4} {:<28} -> {}",
                info.offset,
                info.size,
                ptx_decl(p),
                c_param(p, info, &n).0
            );
        }
    }
    s
}

/// The parameter as PTX declares it, e.g. `.param .u64 .ptr.global.align 16 x`.
fn ptx_decl(p: &Param) -> String {
    let mut s = String::from(".param");
    if let Some(a) = p.align {
        let _ = write!(s, " .align {a}");
    }
    if let Some(v) = p.vector {
        let _ = write!(s, " .v{v}");
    }
    let _ = write!(s, " {}", p.ty.spelling());
    if let Some(ptr) = &p.ptr {
        s.push_str(" .ptr");
        if let Some(sp) = ptr.space {
            s.push_str(sp.spelling());
        }
        if let Some(a) = ptr.align {
            let _ = write!(s, ".align {a}");
        }
    }
    let _ = write!(s, " {}", p.name);
    for d in &p.array {
        match d {
            Some(n) => {
                let _ = write!(s, "[{n}]");
            }
            None => s.push_str("[]"),
        }
    }
    s
}

enum Kind {
    /// An integer or float scalar: copied from the C parameter.
    Scalar,
    /// A pointer: its address as a 32- or 64-bit integer.
    Pointer,
    /// An array or vector: `size` bytes copied from where the C parameter points.
    Bytes,
}

/// The C declaration of a parameter (`void *x`, `float a`, `const void *s /* 12 bytes */`).
fn c_param(p: &Param, info: &ParamInfo, name: &str) -> (String, Kind) {
    if !p.array.is_empty() || p.vector.is_some() {
        return (
            format!("const void *{name} /* {} bytes */", info.size),
            Kind::Bytes,
        );
    }
    if p.ptr.is_some() || p.ty == Mod::U64 {
        return (format!("void *{name}"), Kind::Pointer);
    }
    let bits = p.ty.type_bits().unwrap_or(8);
    let c = if p.ty == Mod::F32 {
        "float".to_string()
    } else if p.ty == Mod::F64 {
        "double".to_string()
    } else if p.ty.is_signed() {
        format!("int{bits}_t")
    } else {
        // Unsigned, untyped bits, and f16/bf16 (their bits).
        format!("uint{bits}_t")
    };
    (format!("{c} {name}"), Kind::Scalar)
}

#[rustfmt::skip]
const KEYWORDS: &[&str] = &[
    "alignas", "alignof", "and", "asm", "auto", "bool", "break", "case", "catch", "char", "class",
    "const", "constexpr", "continue", "default", "delete", "do", "double", "else", "enum",
    "explicit", "export", "extern", "false", "float", "for", "friend", "goto", "if", "inline",
    "int", "long", "mutable", "namespace", "new", "noexcept", "not", "nullptr", "operator", "or",
    "private", "protected", "public", "register", "restrict", "return", "short", "signed",
    "sizeof", "static", "struct", "switch", "template", "this", "throw", "true", "try",
    "typedef", "typeid", "typename", "union", "unsigned", "using", "virtual", "void", "volatile",
    "while", "xor",
    // Names the launch functions use themselves.
    "grid", "block", "shared_bytes", "err", "params_", "rc_",
];

fn is_c_ident(s: &str) -> bool {
    let mut chars = s.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// A C identifier for a PTX name: characters C does not allow (`$`, `%`) become `_`, a leading
/// digit gets a `_` prefix, and keywords get a `_` suffix.
fn c_ident(name: &str) -> String {
    let mut s: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect();
    if s.is_empty() || s.starts_with(|c: char| c.is_ascii_digit()) {
        s.insert(0, '_');
    }
    if KEYWORDS.contains(&s.as_str()) {
        s.push('_');
    }
    s
}

/// The C names of a kernel's parameters: unique identifiers; NVRTC's and clang's
/// `KERNEL_param_N` become `param_N`.
fn param_names(f: &Function) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    for p in &f.params {
        let short = p
            .name
            .strip_prefix(f.name)
            .and_then(|r| r.strip_prefix("_param_"))
            .map(|n| format!("param_{n}"));
        let mut n = c_ident(short.as_deref().unwrap_or(p.name));
        while names.contains(&n) {
            n.push('_');
        }
        names.push(n);
    }
    names
}

fn header(kernels: &[&Function], ptx: &Path, out: &Path, shared_symbol: &str) -> String {
    let ptx_name = ptx
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let out_name = if out.as_os_str() == "-" {
        format!("{ptx_name}.h")
    } else {
        out.file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default()
    };
    let guard: String = format!("PTX2LLVM_KERNELS_{out_name}")
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_uppercase()
            } else {
                '_'
            }
        })
        .collect();
    let mut s = String::new();
    let lines = [
        format!("/* {out_name}: launch functions for the kernels of {ptx_name}."),
        format!(" * Generated by `ptx2llvm kernels {ptx_name} --header {out_name}`; do not edit."),
        " *".to_string(),
        format!(" * Link the object from `ptx2llvm {ptx_name} --target cpu --emit obj` and libptx2llvm."),
        " * KERNEL_launch(grid, block, shared_bytes, params...) packs the parameters in CUDA layout,".into(),
        " * runs the kernel with ptx2llvm_rt_launch and waits for it; it returns 0, or -1 after".into(),
        " * printing the error to stderr. KERNEL_launch_err(&err, grid, ...) returns the message".into(),
        " * instead (free it with ptx2llvm_string_free). shared_bytes is the dynamic shared memory".into(),
        format!(" * (`.extern .shared` arrays); the static size is {shared_symbol}."),
        " * PTX does not say what a parameter points to: `.u64` parameters (compilers' pointers) and".into(),
        " * `.ptr` parameters are `void *`; arrays and vectors are `const void *` to their bytes. */".into(),
        format!("#ifndef {guard}"),
        format!("#define {guard}"),
        String::new(),
        "#include <stddef.h>".into(),
        "#include <stdint.h>".into(),
        "#include <stdio.h>".into(),
        "#include <string.h>".into(),
        String::new(),
        "#include \"ptx2llvm_rt.h\"".into(),
        String::new(),
        "#ifndef PTX2LLVM_KERNELS_ALIGNED".into(),
        "#if defined(_MSC_VER) && !defined(__clang__)".into(),
        "#define PTX2LLVM_KERNELS_ALIGNED(n) __declspec(align(n))".into(),
        "#else".into(),
        "#define PTX2LLVM_KERNELS_ALIGNED(n) __attribute__((aligned(n)))".into(),
        "#endif".into(),
        "#endif".into(),
        String::new(),
        "#ifdef __cplusplus".into(),
        "extern \"C\" {".into(),
        "#endif".into(),
        String::new(),
    ];
    for l in lines {
        s.push_str(&l);
        s.push('\n');
    }
    if shared_symbol != "ptx2llvm_static_shared_bytes" {
        let _ = writeln!(
            s,
            "/* ptx2llvm_static_shared_bytes of {ptx_name}'s object, renamed. */\n\
             extern const uint32_t {shared_symbol};\n"
        );
    }
    for f in kernels {
        kernel(&mut s, f, shared_symbol);
    }
    let _ = write!(
        s,
        "#ifdef __cplusplus\n}}\n#endif\n\n#endif /* {guard} */\n"
    );
    s
}

fn kernel(s: &mut String, f: &Function, shared_symbol: &str) {
    let l = layout(f);
    let align = l.params.iter().map(|p| p.align).max().unwrap_or(1).max(8);
    let name = c_ident(f.name);
    let names = param_names(f);
    let params: Vec<(String, Kind)> = f
        .params
        .iter()
        .zip(&l.params)
        .zip(&names)
        .map(|((p, i), n)| c_param(p, i, n))
        .collect();
    let decls: String = params.iter().map(|(d, _)| format!(", {d}")).collect();
    let args: String = names.iter().map(|n| format!(", {n}")).collect();
    let ptx_params: Vec<String> = f.params.iter().map(ptx_decl).collect();
    let _ = writeln!(s, "/* .entry {}({}) */", f.name, ptx_params.join(", "));
    if name == f.name {
        let _ = writeln!(s, "void {name}(const void *params, ptx2llvm_thread *t);");
    } else {
        let _ = writeln!(
            s,
            "void {name}(const void *params, ptx2llvm_thread *t) __asm__(\"{}\");",
            f.name
        );
    }
    let _ = writeln!(
        s,
        "static inline int {name}_launch_err(char **err, ptx2llvm_dim3 grid, ptx2llvm_dim3 block, \
         size_t shared_bytes{decls}) {{"
    );
    let size = l.size.max(1);
    let _ = writeln!(
        s,
        "    PTX2LLVM_KERNELS_ALIGNED({align}) unsigned char params_[{size}];"
    );
    let _ = writeln!(s, "    memset(params_, 0, sizeof params_);");
    for ((info, (_, kind)), n) in l.params.iter().zip(&params).zip(&names) {
        let off = info.offset;
        match kind {
            Kind::Scalar => {
                let _ = writeln!(s, "    memcpy(params_ + {off}, &{n}, sizeof {n});");
            }
            Kind::Pointer if info.size == 4 => {
                let _ = writeln!(
                    s,
                    "    {{ uint32_t v_ = (uint32_t)(uintptr_t){n}; memcpy(params_ + {off}, &v_, 4); }}"
                );
            }
            Kind::Pointer => {
                let _ = writeln!(
                    s,
                    "    {{ uint64_t v_ = (uint64_t)(uintptr_t){n}; memcpy(params_ + {off}, &v_, 8); }}"
                );
            }
            Kind::Bytes => {
                let _ = writeln!(s, "    memcpy(params_ + {off}, {n}, {});", info.size);
            }
        }
    }
    let _ = writeln!(
        s,
        "    if (shared_bytes > 0xffffffffu) {{\n        \
         if (err) *err = NULL;\n        \
         fprintf(stderr, \"{}: shared_bytes %zu is too large\\n\", shared_bytes);\n        \
         return -1;\n    }}",
        f.name
    );
    let _ = writeln!(
        s,
        "    return ptx2llvm_rt_launch({name}, \"{}\", grid, block, {shared_symbol}, \
         (uint32_t)shared_bytes, params_, {}, err);\n}}",
        f.name, l.size
    );
    let _ = writeln!(
        s,
        "static inline int {name}_launch(ptx2llvm_dim3 grid, ptx2llvm_dim3 block, \
         size_t shared_bytes{decls}) {{\n    \
         char *err = NULL;\n    \
         int rc_ = {name}_launch_err(&err, grid, block, shared_bytes{args});\n    \
         if (rc_ != 0) {{\n        \
         fprintf(stderr, \"ptx2llvm: %s\\n\", err ? err : \"{} failed\");\n        \
         ptx2llvm_string_free(err);\n    }}\n    \
         return rc_;\n}}\n",
        f.name
    );
}
