//! Diagnostics: an error with a span, collected by every stage and rendered at the edge as
//! `FILE:LINE:COL: error: MESSAGE`, the source line and a caret under the offending token.

use std::fmt::Write as _;

use super::span::{line_col, Span};

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Diagnostic {
    pub span: Span,
    pub message: String,
    /// Extra explanation printed after the caret (`note: ...`).
    pub note: Option<String>,
}

impl Diagnostic {
    pub fn new(span: Span, message: impl Into<String>) -> Diagnostic {
        Diagnostic {
            span,
            message: message.into(),
            note: None,
        }
    }
    pub fn with_note(mut self, note: impl Into<String>) -> Diagnostic {
        self.note = Some(note.into());
        self
    }

    /// Renders the diagnostic in the compiler-standard form with source line and caret.
    pub fn render(&self, file: &str, src: &str) -> String {
        let (line, col) = line_col(src, self.span.start);
        let mut out = format!("{file}:{line}:{col}: error: {}\n", self.message);
        let start = (self.span.start as usize).min(src.len());
        let line_start = src[..start].rfind('\n').map_or(0, |i| i + 1);
        let line_end = src[start..].find('\n').map_or(src.len(), |i| start + i);
        let text = src[line_start..line_end].trim_end_matches('\r');
        let _ = writeln!(out, "{text}");
        let mut caret = String::new();
        for c in src[line_start..start].chars() {
            caret.push(if c == '\t' { '\t' } else { ' ' });
        }
        let end = (self.span.end as usize).clamp(start, line_end);
        let width = src[start..end].chars().count().max(1);
        caret.push('^');
        for _ in 1..width {
            caret.push('~');
        }
        let _ = writeln!(out, "{caret}");
        if let Some(note) = &self.note {
            let _ = writeln!(out, "note: {note}");
        }
        out
    }
}

/// Renders all diagnostics of one file.
pub fn render_all(diags: &[Diagnostic], file: &str, src: &str) -> String {
    diags.iter().map(|d| d.render(file, src)).collect()
}
