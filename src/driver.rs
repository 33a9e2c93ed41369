//! Helpers shared by the CLI commands: reading inputs, running the front end, rendering
//! diagnostics and writing outputs.

use std::io::Write;
use std::path::Path;

use ptx2llvm::check::ModuleInfo;
use ptx2llvm::syntax::ast::Module;
use ptx2llvm::syntax::diag::{render_all, Diagnostic};

/// Reads a source file; the error message names the file, and for text that is not UTF-8 the
/// line and column of the first invalid byte (`FILE:LINE:COL: error: …`).
pub fn load(path: &Path) -> Result<String, String> {
    let bytes =
        std::fs::read(path).map_err(|e| format!("error: cannot read {}: {e}", path.display()))?;
    String::from_utf8(bytes).map_err(|e| {
        let at = e.utf8_error().valid_up_to();
        let bytes = e.as_bytes();
        let (line, col) = utf8_position(bytes, at);
        format!(
            "{}:{line}:{col}: error: the file is not valid UTF-8 text: byte 0x{:02x} at byte \
             offset {at}; PTX files are ASCII",
            path.display(),
            bytes[at]
        )
    })
}

/// Line and column (1-based, the column in bytes as in every diagnostic) of byte `at` of
/// `bytes`, whose first `at` bytes are valid UTF-8.
fn utf8_position(bytes: &[u8], at: usize) -> (usize, usize) {
    let prefix = std::str::from_utf8(&bytes[..at]).unwrap_or_default();
    ptx2llvm::syntax::span::line_col(prefix, at as u32)
}

/// Parses and validates; returns every diagnostic, sorted by position.
pub fn parse_and_check(src: &str) -> Vec<Diagnostic> {
    front_end(src).2
}

/// Parses and validates: the module, what the check found (the lowering's input with it) and
/// every diagnostic, sorted by position (the module is translatable when there is none).
pub fn front_end(src: &str) -> (Module<'_>, ModuleInfo, Vec<Diagnostic>) {
    let (module, mut diags) = ptx2llvm::syntax::parse(src);
    let mut info = ModuleInfo::default();
    if diags.is_empty() {
        (info, diags) = ptx2llvm::check::check_module(&module);
    }
    diags.sort_by_key(|d| d.span.start);
    (module, info, diags)
}

pub fn render(diags: &[Diagnostic], path: &Path, src: &str) -> String {
    render_all(diags, &path.display().to_string(), src)
}

/// Writes to the file, or to stdout for `None` / `-`.
pub fn write_output(path: Option<&Path>, bytes: &[u8]) -> Result<(), String> {
    match path {
        None => write_stdout(bytes),
        Some(p) if p.as_os_str() == "-" => write_stdout(bytes),
        Some(p) => std::fs::write(p, bytes)
            .map_err(|e| format!("error: cannot write {}: {e}", p.display())),
    }
}

fn write_stdout(bytes: &[u8]) -> Result<(), String> {
    let mut out = std::io::stdout().lock();
    match out.write_all(bytes).and_then(|_| out.flush()) {
        Ok(()) => Ok(()),
        // A closed pipe (`| head`) is not an error worth reporting.
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        Err(e) => Err(format!("error: cannot write to stdout: {e}")),
    }
}

/// The path debug information names for a PTX file: absolute, so that debuggers find it from
/// any directory (as given when it cannot be resolved).
pub fn debug_path(path: &Path) -> String {
    std::fs::canonicalize(path)
        .unwrap_or_else(|_| path.to_path_buf())
        .to_string_lossy()
        .into_owned()
}

#[cfg(test)]
mod tests {
    use super::utf8_position;

    #[test]
    fn position_of_the_first_invalid_byte() {
        assert_eq!(utf8_position(b"\xff", 0), (1, 1));
        assert_eq!(utf8_position(b"ab\ncd\xe9", 5), (2, 3));
        // Columns count bytes, as in every diagnostic.
        assert_eq!(utf8_position("é\u{e9}x\u{ff}".as_bytes(), 5), (1, 6));
    }
}
