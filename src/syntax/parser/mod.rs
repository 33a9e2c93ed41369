//! The PTX parser: a hand-written recursive-descent parser over the pull lexer. It builds the
//! AST, collects every error as a `Diagnostic` (never stopping at the first), and recovers at
//! statement boundaries. Module-level structure lives here; declarations, instructions and
//! expressions are in the sibling files.

mod decl;
mod expr;
mod instr;
mod module;

use super::ast::Module;
use super::diag::Diagnostic;
use super::lexer::{Lexer, Tok, Token};
use super::span::Span;

/// Stop collecting after this many errors: garbage input would otherwise print megabytes.
const MAX_ERRORS: usize = 100;

/// Deepest nesting of blocks, operands and initializers (`{{{{…`): recursive descent would
/// otherwise overflow the stack on hostile input. Real PTX nests a few levels.
const MAX_NESTING: u32 = 64;

/// The parse failed at a point where a diagnostic was already recorded.
#[derive(Debug)]
pub(crate) struct Failed;
pub(crate) type PResult<T> = Result<T, Failed>;

/// Parses a PTX module. Returns the module (possibly partial) and every diagnostic found.
pub fn parse(src: &str) -> (Module<'_>, Vec<Diagnostic>) {
    // The token buffer is reused across calls on a thread: a fresh multi-megabyte buffer per
    // file would cost page faults.
    thread_local! {
        static TOKENS: std::cell::Cell<Vec<Token>> = const { std::cell::Cell::new(Vec::new()) };
    }
    let buf = TOKENS.with(|t| t.take());
    let mut p = Parser::new(src, buf);
    let m = p.module();
    let mut toks = std::mem::take(&mut p.toks);
    toks.clear();
    TOKENS.with(|t| t.set(toks));
    (m, p.diags)
}

pub(crate) struct Parser<'a> {
    src: &'a str,
    /// All tokens, lexed up front in one tight loop (faster than lexing on demand); the
    /// last is always `Eof`.
    toks: Vec<Token>,
    /// Index of the current token.
    pos: usize,
    tok: Token,
    prev_end: u32,
    /// Current nesting of blocks, operands and initializers (see `nested`).
    nesting: u32,
    pub diags: Vec<Diagnostic>,
    /// The number the next instruction gets (`ast::InstrId`).
    next_instr: u32,
}

impl<'a> Parser<'a> {
    fn new(src: &'a str, mut toks: Vec<Token>) -> Parser<'a> {
        let mut lex = Lexer::new(src);
        toks.reserve(src.len() / 4 + 16);
        loop {
            let t = lex.next_token();
            toks.push(t);
            if t.kind == Tok::Eof {
                break;
            }
        }
        Parser {
            src,
            tok: toks[0],
            toks,
            pos: 0,
            prev_end: 0,
            next_instr: 0,
            nesting: 0,
            diags: Vec::new(),
        }
    }

    #[inline]
    fn text(&self, t: Token) -> &'a str {
        &self.src[t.span.range()]
    }

    #[inline]
    fn cur_text(&self) -> &'a str {
        self.text(self.tok)
    }

    #[inline]
    fn at(&self, k: Tok) -> bool {
        self.tok.kind == k
    }

    /// The token after the current one.
    #[inline]
    fn peek(&mut self) -> Token {
        self.toks[(self.pos + 1).min(self.toks.len() - 1)]
    }

    #[inline]
    fn bump(&mut self) -> Token {
        let t = self.tok;
        self.prev_end = t.span.end;
        if self.pos + 1 < self.toks.len() {
            self.pos += 1;
        }
        self.tok = self.toks[self.pos];
        t
    }

    fn eat(&mut self, k: Tok) -> bool {
        if self.tok.kind == k {
            self.bump();
            true
        } else {
            false
        }
    }

    fn at_dot(&self, s: &str) -> bool {
        self.tok.kind == Tok::Dot && self.cur_text() == s
    }

    fn error(&mut self, span: Span, msg: impl Into<String>) -> Failed {
        if self.diags.len() < MAX_ERRORS {
            self.diags.push(Diagnostic::new(span, msg));
        } else if self.diags.len() == MAX_ERRORS {
            self.diags
                .push(Diagnostic::new(span, "too many errors; stopping here"));
        }
        Failed
    }

    /// Describes the current token for "expected X, found Y" messages.
    fn found(&self) -> String {
        match self.tok.kind {
            Tok::Eof => "end of file".to_string(),
            Tok::Unterminated if self.cur_text().starts_with("/*") => {
                "an unterminated block comment".to_string()
            }
            Tok::Unterminated => "an unterminated string literal".to_string(),
            Tok::Unknown => match self.cur_text().chars().next() {
                Some(c) if c.is_control() || c == '\u{feff}' => {
                    format!("the invisible character U+{:04X}", c as u32)
                }
                _ => format!("`{}`", self.cur_text()),
            },
            _ => format!("`{}`", self.cur_text()),
        }
    }

    /// The error for the current `Tok::Unterminated` token.
    fn unterminated_message(&self) -> &'static str {
        if self.cur_text().starts_with("/*") {
            "unterminated block comment: `/*` has no matching `*/`"
        } else {
            "unterminated string literal: no closing `\"` on this line"
        }
    }

    fn unexpected(&mut self, what: &str) -> Failed {
        let msg = format!("expected {what}, found {}", self.found());
        // At the end of the file, point just after the last token rather than past the
        // last line.
        let span = if self.at(Tok::Eof) && self.pos > 0 {
            Span::new(self.prev_end as usize, self.prev_end as usize)
        } else {
            self.tok.span
        };
        self.error(span, msg)
    }

    fn expect(&mut self, k: Tok, what: &str) -> PResult<Token> {
        if self.tok.kind == k {
            Ok(self.bump())
        } else {
            Err(self.unexpected(what))
        }
    }

    fn expect_ident(&mut self, what: &str) -> PResult<(&'a str, Span)> {
        let t = self.expect(Tok::Ident, what)?;
        Ok((self.text(t), t.span))
    }

    /// A non-negative integer literal that fits in u32.
    fn expect_u32(&mut self, what: &str) -> PResult<u32> {
        let span = self.tok.span;
        let v = self.expect_u64(what)?;
        u32::try_from(v).map_err(|_| {
            self.error(
                span,
                format!("value {v} is too large (at most {})", u32::MAX),
            )
        })
    }

    fn expect_u64(&mut self, what: &str) -> PResult<u64> {
        if self.tok.kind != Tok::Int {
            return Err(self.unexpected(what));
        }
        let t = self.bump();
        match super::lexer::parse_int(self.text(t)) {
            Some((v, _)) => Ok(v),
            None => Err(self.bad_int(t)),
        }
    }

    /// The error for an integer literal token that `parse_int` rejects.
    fn bad_int(&mut self, t: Token) -> Failed {
        let text = self.text(t);
        let msg = if well_formed_int(text) {
            format!("integer literal `{text}` does not fit in 64 bits")
        } else {
            format!("invalid integer literal `{text}`")
        };
        self.error(t.span, msg)
    }

    /// Runs `f` one nesting level deeper, or records an error past `MAX_NESTING` levels.
    fn nested<T>(&mut self, what: &str, f: impl FnOnce(&mut Self) -> PResult<T>) -> PResult<T> {
        if self.nesting >= MAX_NESTING {
            let span = self.tok.span;
            return Err(self.error(
                span,
                format!("{what} nested too deeply (more than {MAX_NESTING} levels)"),
            ));
        }
        self.nesting += 1;
        let r = f(self);
        self.nesting -= 1;
        r
    }

    /// Error recovery: skips to just after the next `;` at this nesting level, or to (not
    /// past) a `}` that closes the enclosing block.
    fn recover_statement(&mut self) {
        let mut depth = 0usize;
        loop {
            match self.tok.kind {
                Tok::Eof => return,
                Tok::Semi if depth == 0 => {
                    self.bump();
                    return;
                }
                // A string ends at its line, and the statement with it.
                Tok::Unterminated if depth == 0 => {
                    self.bump();
                    return;
                }
                Tok::LBrace => depth += 1,
                Tok::RBrace => {
                    // A `}` followed by `,` or `;` closes a vector operand or an initializer
                    // that the error was in, not the enclosing block.
                    if depth == 0 && !matches!(self.peek().kind, Tok::Comma | Tok::Semi) {
                        return;
                    }
                    depth = depth.saturating_sub(1);
                }
                _ => {}
            }
            self.bump();
        }
    }

    /// Expects the `;` that ends a statement. When it is missing at the end of a line (or
    /// before a `}`), the error points just after the statement and parsing goes on with the
    /// next line, which is most likely the next statement.
    fn expect_semi(&mut self, what: &str) -> PResult<()> {
        if self.eat(Tok::Semi) {
            return Ok(());
        }
        if self.newline_before() || self.at(Tok::RBrace) {
            let at = Span::new(self.prev_end as usize, self.prev_end as usize);
            let msg = format!("expected `;` {what}, found {}", self.found());
            self.error(at, msg);
            return Ok(());
        }
        Err(self.unexpected(&format!("`;` {what}")))
    }

    /// Skips the current token and the rest of its line (up to a `}`): recovery from a
    /// statement that starts with garbage, which has no `;` to resynchronise on.
    fn skip_line(&mut self) {
        self.bump();
        while !matches!(self.tok.kind, Tok::Eof | Tok::RBrace) && !self.newline_before() {
            self.bump();
        }
    }

    /// Whether a line break separates the previous token from the current one.
    fn newline_before(&self) -> bool {
        self.src.as_bytes()[self.prev_end as usize..self.tok.span.start as usize].contains(&b'\n')
    }
}

/// Whether an integer literal is spelled correctly (it may still be too large).
fn well_formed_int(text: &str) -> bool {
    let t = text.strip_suffix('U').unwrap_or(text);
    let b = t.as_bytes();
    let all = |s: &[u8], f: fn(&u8) -> bool| !s.is_empty() && s.iter().all(f);
    if b.len() > 2 && b[0] == b'0' && (b[1] | 0x20) == b'x' {
        all(&b[2..], u8::is_ascii_hexdigit)
    } else if b.len() > 2 && b[0] == b'0' && (b[1] | 0x20) == b'b' {
        all(&b[2..], |c| matches!(c, b'0' | b'1'))
    } else if b.len() > 1 && b[0] == b'0' {
        all(&b[1..], |c| matches!(c, b'0'..=b'7'))
    } else {
        all(b, u8::is_ascii_digit)
    }
}
