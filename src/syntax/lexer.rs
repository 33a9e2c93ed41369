//! The PTX lexer: a byte-level scanner that yields one token at a time without allocating.
//! Identifiers, dotted keywords and literals are returned as spans into the source; the
//! parser interprets them. Comments and whitespace are skipped here.

use super::span::Span;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tok {
    /// `foo`, `%r1`, `$L__BB0_1`, `_Z3addPf`
    Ident,
    /// `.b32`, `.shared::cta`, `.L2::cache_hint`, `.version`
    Dot,
    /// Integer literal (decimal, `0x`, `0b`, octal, optional `U` suffix).
    Int,
    /// `0f3F800000`
    F32Hex,
    /// `0d3FF0000000000000`
    F64Hex,
    /// Decimal floating-point literal `1.5`, `2e10`.
    Float,
    /// `"..."`
    Str,
    Comma,
    Semi,
    Colon,
    LParen,
    RParen,
    LBracket,
    RBracket,
    LBrace,
    RBrace,
    Lt,
    Gt,
    Le,
    Ge,
    EqEq,
    Ne,
    Shl,
    Shr,
    Plus,
    Minus,
    Star,
    Slash,
    Percent,
    Bang,
    Tilde,
    Amp,
    AmpAmp,
    Pipe,
    PipePipe,
    Caret,
    Question,
    Assign,
    At,
    /// A byte that starts no token.
    Unknown,
    /// `/*` without its `*/`, or `"` without its closing quote.
    Unterminated,
    Eof,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Token {
    pub kind: Tok,
    pub span: Span,
}

pub struct Lexer<'a> {
    src: &'a [u8],
    pos: usize,
}

const CONT: u8 = 1;
const START: u8 = 2;
const SPACE: u8 = 4;

/// Byte classes, so the hot loops test one table entry per byte.
static CLASS: [u8; 256] = {
    let mut t = [0u8; 256];
    let mut i = 0;
    while i < 256 {
        let b = i as u8;
        if b.is_ascii_alphanumeric() || b == b'_' || b == b'$' {
            t[i] |= CONT;
        }
        if b.is_ascii_alphabetic() || b == b'_' || b == b'$' || b == b'%' {
            t[i] |= START;
        }
        if b.is_ascii_whitespace() {
            t[i] |= SPACE;
        }
        i += 1;
    }
    t
};

#[inline(always)]
fn is_ident_start(b: u8) -> bool {
    CLASS[b as usize] & START != 0
}

#[inline(always)]
fn is_ident_cont(b: u8) -> bool {
    CLASS[b as usize] & CONT != 0
}

impl<'a> Lexer<'a> {
    pub fn new(src: &'a str) -> Lexer<'a> {
        Lexer {
            src: src.as_bytes(),
            pos: 0,
        }
    }

    #[inline]
    fn peek_at(&self, i: usize) -> u8 {
        *self.src.get(self.pos + i).unwrap_or(&0)
    }

    /// Skips whitespace and comments; returns the span of an unterminated block comment.
    #[inline(always)]
    fn skip_trivia(&mut self) -> Option<Span> {
        // Most tokens follow zero or one separator byte: test those before the general loop.
        match self.src.get(self.pos) {
            Some(&b) if CLASS[b as usize] & SPACE == 0 && b != b'/' => return None,
            Some(&b) if CLASS[b as usize] & SPACE != 0 => {
                let n = *self.src.get(self.pos + 1).unwrap_or(&b'/');
                if CLASS[n as usize] & SPACE == 0 && n != b'/' {
                    self.pos += 1;
                    return None;
                }
            }
            _ => {}
        }
        self.skip_trivia_slow()
    }

    fn skip_trivia_slow(&mut self) -> Option<Span> {
        loop {
            self.pos += self.src[self.pos..]
                .iter()
                .position(|&b| CLASS[b as usize] & SPACE == 0)
                .unwrap_or(self.src.len() - self.pos);
            if self.peek_at(0) == b'/' {
                match self.peek_at(1) {
                    b'/' => {
                        self.pos = memchr::memchr(b'\n', &self.src[self.pos..])
                            .map_or(self.src.len(), |i| self.pos + i);
                        continue;
                    }
                    b'*' => {
                        let start = self.pos;
                        self.pos += 2;
                        loop {
                            if self.pos + 1 >= self.src.len() {
                                self.pos = self.src.len();
                                return Some(Span::new(start, start + 2));
                            }
                            if self.src[self.pos] == b'*' && self.src[self.pos + 1] == b'/' {
                                self.pos += 2;
                                break;
                            }
                            self.pos += 1;
                        }
                        continue;
                    }
                    _ => {}
                }
            }
            return None;
        }
    }

    #[inline]
    pub fn next_token(&mut self) -> Token {
        if let Some(span) = self.skip_trivia() {
            return Token {
                kind: Tok::Unterminated,
                span,
            };
        }
        let start = self.pos;
        if start >= self.src.len() {
            return Token {
                kind: Tok::Eof,
                span: Span::new(start, start),
            };
        }
        let b = self.src[start];
        let kind = match b {
            b'.' if is_ident_start(self.peek_at(1)) && self.peek_at(1) != b'%' => {
                self.pos += 1;
                self.scan_dotted();
                Tok::Dot
            }
            b'%' if is_ident_cont(self.peek_at(1)) => {
                self.pos += 1;
                self.skip_cont();
                Tok::Ident
            }
            b'0'..=b'9' => {
                let k = self.scan_number();
                // `0xZZ`, `12abc`: keep a malformed number in one token, so the parser reports
                // it as one invalid literal.
                if is_ident_cont(self.peek_at(0)) {
                    self.skip_cont();
                }
                k
            }
            // `.1d`, `.32x32b`: modifiers may start with a digit; `.5` is a number.
            b'.' if self.peek_at(1).is_ascii_digit() => {
                let mut j = 1;
                while is_ident_cont(self.peek_at(j)) {
                    j += 1;
                }
                if self.src[start + 1..start + j]
                    .iter()
                    .any(|c| c.is_ascii_alphabetic())
                {
                    self.pos += 1;
                    self.scan_dotted();
                    Tok::Dot
                } else {
                    self.scan_number()
                }
            }
            _ if is_ident_start(b) && b != b'%' => {
                self.pos += 1;
                self.skip_cont();
                Tok::Ident
            }
            b'"' => {
                self.pos += 1;
                loop {
                    match self.src.get(self.pos) {
                        None | Some(b'\n') => {
                            return Token {
                                kind: Tok::Unterminated,
                                span: Span::new(start, start + 1),
                            }
                        }
                        Some(b'\\') => self.pos = (self.pos + 2).min(self.src.len()),
                        Some(b'"') => {
                            self.pos += 1;
                            break;
                        }
                        _ => self.pos += 1,
                    }
                }
                Tok::Str
            }
            _ => {
                let two = self.peek_at(1);
                let (k, n) = match (b, two) {
                    (b'<', b'<') => (Tok::Shl, 2),
                    (b'>', b'>') => (Tok::Shr, 2),
                    (b'<', b'=') => (Tok::Le, 2),
                    (b'>', b'=') => (Tok::Ge, 2),
                    (b'=', b'=') => (Tok::EqEq, 2),
                    (b'!', b'=') => (Tok::Ne, 2),
                    (b'&', b'&') => (Tok::AmpAmp, 2),
                    (b'|', b'|') => (Tok::PipePipe, 2),
                    (b',', _) => (Tok::Comma, 1),
                    (b';', _) => (Tok::Semi, 1),
                    (b':', _) => (Tok::Colon, 1),
                    (b'(', _) => (Tok::LParen, 1),
                    (b')', _) => (Tok::RParen, 1),
                    (b'[', _) => (Tok::LBracket, 1),
                    (b']', _) => (Tok::RBracket, 1),
                    (b'{', _) => (Tok::LBrace, 1),
                    (b'}', _) => (Tok::RBrace, 1),
                    (b'<', _) => (Tok::Lt, 1),
                    (b'>', _) => (Tok::Gt, 1),
                    (b'+', _) => (Tok::Plus, 1),
                    (b'-', _) => (Tok::Minus, 1),
                    (b'*', _) => (Tok::Star, 1),
                    (b'/', _) => (Tok::Slash, 1),
                    (b'%', _) => (Tok::Percent, 1),
                    (b'!', _) => (Tok::Bang, 1),
                    (b'~', _) => (Tok::Tilde, 1),
                    (b'&', _) => (Tok::Amp, 1),
                    (b'|', _) => (Tok::Pipe, 1),
                    (b'^', _) => (Tok::Caret, 1),
                    (b'?', _) => (Tok::Question, 1),
                    (b'=', _) => (Tok::Assign, 1),
                    (b'@', _) => (Tok::At, 1),
                    _ => {
                        // Step over a whole UTF-8 character so spans stay on char boundaries.
                        let mut n = 1;
                        while start + n < self.src.len() && (self.src[start + n] & 0xC0) == 0x80 {
                            n += 1;
                        }
                        (Tok::Unknown, n)
                    }
                };
                self.pos += n;
                k
            }
        };
        Token {
            kind,
            span: Span::new(start, self.pos),
        }
    }

    #[inline(always)]
    fn skip_cont(&mut self) {
        self.pos += self.src[self.pos..]
            .iter()
            .position(|&b| !is_ident_cont(b))
            .unwrap_or(self.src.len() - self.pos);
    }

    /// After the leading `.`: `name(::name)*`. The segment after `::` may start with a digit
    /// (`.L2::64B`).
    fn scan_dotted(&mut self) {
        loop {
            self.skip_cont();
            if self.peek_at(0) == b':' && self.peek_at(1) == b':' && is_ident_cont(self.peek_at(2))
            {
                self.pos += 2;
                continue;
            }
            break;
        }
    }

    fn scan_number(&mut self) -> Tok {
        let s = self.src;
        let start = self.pos;
        let b1 = self.peek_at(1) | 0x20;
        if s[start] == b'0' && (b1 == b'f' || b1 == b'd') && self.peek_at(2).is_ascii_hexdigit() {
            self.pos += 2;
            while self.pos < s.len() && s[self.pos].is_ascii_hexdigit() {
                self.pos += 1;
            }
            return if b1 == b'f' { Tok::F32Hex } else { Tok::F64Hex };
        }
        if s[start] == b'0' && (b1 == b'x' || b1 == b'b') && self.peek_at(2).is_ascii_hexdigit() {
            self.pos += 2;
            while self.pos < s.len() && s[self.pos].is_ascii_hexdigit() {
                self.pos += 1;
            }
            if self.peek_at(0) == b'U' {
                self.pos += 1;
            }
            return Tok::Int;
        }
        while self.pos < s.len() && s[self.pos].is_ascii_digit() {
            self.pos += 1;
        }
        let mut float = false;
        if self.peek_at(0) == b'.' && self.peek_at(1).is_ascii_digit() {
            float = true;
            self.pos += 1;
            while self.pos < s.len() && s[self.pos].is_ascii_digit() {
                self.pos += 1;
            }
        }
        let e = self.peek_at(0) | 0x20;
        if e == b'e' {
            let (sign, d) = (self.peek_at(1), self.peek_at(2));
            if sign.is_ascii_digit() || ((sign == b'+' || sign == b'-') && d.is_ascii_digit()) {
                float = true;
                self.pos += 2;
                while self.pos < s.len() && s[self.pos].is_ascii_digit() {
                    self.pos += 1;
                }
            }
        }
        if float {
            return Tok::Float;
        }
        if self.peek_at(0) == b'U' {
            self.pos += 1;
        }
        Tok::Int
    }
}

/// Decodes an integer literal token's text. `None` on overflow or bad digits.
pub fn parse_int(text: &str) -> Option<(u64, bool)> {
    let (body, unsigned) = match text.strip_suffix('U') {
        Some(b) => (b, true),
        None => (text, false),
    };
    let b = body.as_bytes();
    let v = if b.len() > 2 && b[0] == b'0' && (b[1] | 0x20) == b'x' {
        u64::from_str_radix(&body[2..], 16).ok()?
    } else if b.len() > 2 && b[0] == b'0' && (b[1] | 0x20) == b'b' {
        u64::from_str_radix(&body[2..], 2).ok()?
    } else if b.len() > 1 && b[0] == b'0' {
        u64::from_str_radix(&body[1..], 8).ok()?
    } else {
        // Fast path for the common short decimal literal.
        let mut v: u64 = 0;
        for &c in b {
            if !c.is_ascii_digit() {
                return None;
            }
            v = v.checked_mul(10)?.checked_add((c - b'0') as u64)?;
        }
        v
    };
    Some((v, unsigned))
}
