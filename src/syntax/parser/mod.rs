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
    pub diags: Vec<Diagnostic>,
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
            Tok::Unterminated => "an unterminated comment or string".to_string(),
            _ => format!("`{}`", self.cur_text()),
        }
    }

    fn unexpected(&mut self, what: &str) -> Failed {
        let msg = format!("expected {what}, found {}", self.found());
        let span = self.tok.span;
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
        let v = self.expect_u64(what)?;
        u32::try_from(v).map_err(|_| {
            let span = Span::new(self.prev_end as usize, self.prev_end as usize);
            self.error(span, format!("{what} is too large"))
        })
    }

    fn expect_u64(&mut self, what: &str) -> PResult<u64> {
        if self.tok.kind != Tok::Int {
            return Err(self.unexpected(what));
        }
        let t = self.bump();
        match super::lexer::parse_int(self.text(t)) {
            Some((v, _)) => Ok(v),
            None => Err(self.error(t.span, format!("invalid integer literal `{}`", self.text(t)))),
        }
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
                Tok::LBrace => depth += 1,
                Tok::RBrace => {
                    if depth == 0 {
                        return;
                    }
                    depth -= 1;
                }
                _ => {}
            }
            self.bump();
        }
    }
}
