//! Constant expressions with C precedence (PTX ISA §4.6.2): literals in every notation,
//! symbols, `generic(sym)`, the initializer mask operator `0xff00(expr)`, casts `(.s64)`,
//! unary and binary operators and `?:`.

use super::{PResult, Parser};
use crate::isa::Mod;
use crate::syntax::ast::*;
use crate::syntax::lexer::{parse_int, Tok};

/// Deepest expression tree accepted: parentheses, unary operators and operator chains (a
/// left-deep `1+1+…` tree is as deep as it is long) all count, so that neither the parser
/// nor the passes that walk the tree can overflow the stack.
const MAX_EXPR_DEPTH: u32 = 256;

/// Binding power of a binary operator token (higher binds tighter).
fn binop(k: Tok) -> Option<(u8, BinOp)> {
    Some(match k {
        Tok::PipePipe => (1, BinOp::LogOr),
        Tok::AmpAmp => (2, BinOp::LogAnd),
        Tok::Pipe => (3, BinOp::Or),
        Tok::Caret => (4, BinOp::Xor),
        Tok::Amp => (5, BinOp::And),
        Tok::EqEq => (6, BinOp::Eq),
        Tok::Ne => (6, BinOp::Ne),
        Tok::Lt => (7, BinOp::Lt),
        Tok::Gt => (7, BinOp::Gt),
        Tok::Le => (7, BinOp::Le),
        Tok::Ge => (7, BinOp::Ge),
        Tok::Shl => (8, BinOp::Shl),
        Tok::Shr => (8, BinOp::Shr),
        Tok::Plus => (9, BinOp::Add),
        Tok::Minus => (9, BinOp::Sub),
        Tok::Star => (10, BinOp::Mul),
        Tok::Slash => (10, BinOp::Div),
        Tok::Percent => (10, BinOp::Rem),
        _ => return None,
    })
}

impl<'a> Parser<'a> {
    pub(super) fn expr(&mut self) -> PResult<Expr<'a>> {
        self.expr_depth(0)
    }

    fn expr_depth(&mut self, depth: u32) -> PResult<Expr<'a>> {
        if depth > MAX_EXPR_DEPTH {
            return Err(self.too_deep());
        }
        let c = self.binary(0, depth)?;
        if self.at(Tok::Question) {
            self.bump();
            let a = self.expr_depth(depth + 1)?;
            self.expect(Tok::Colon, "`:` in conditional expression")?;
            let b = self.expr_depth(depth + 1)?;
            let span = c.span().to(b.span());
            return Ok(Expr::Cond(Box::new(c), Box::new(a), Box::new(b), span));
        }
        Ok(c)
    }

    fn too_deep(&mut self) -> super::Failed {
        let span = self.tok.span;
        self.error(
            span,
            format!("expression nested too deeply (more than {MAX_EXPR_DEPTH} levels)"),
        )
    }

    fn binary(&mut self, min: u8, mut depth: u32) -> PResult<Expr<'a>> {
        let mut lhs = self.unary(depth)?;
        while let Some((prec, op)) = binop(self.tok.kind) {
            if prec <= min {
                break;
            }
            // Each operator puts the tree one level deeper.
            depth += 1;
            if depth > MAX_EXPR_DEPTH {
                return Err(self.too_deep());
            }
            self.bump();
            let rhs = self.binary(prec, depth)?;
            let span = lhs.span().to(rhs.span());
            lhs = Expr::Binary(op, Box::new(lhs), Box::new(rhs), span);
        }
        Ok(lhs)
    }

    fn unary(&mut self, depth: u32) -> PResult<Expr<'a>> {
        if depth > MAX_EXPR_DEPTH {
            return Err(self.too_deep());
        }
        let op = match self.tok.kind {
            Tok::Minus => UnOp::Neg,
            Tok::Plus => UnOp::Plus,
            Tok::Tilde => UnOp::Not,
            Tok::Bang => UnOp::LogNot,
            _ => return self.primary(depth),
        };
        let start = self.bump().span;
        let e = self.unary(depth + 1)?;
        // A negated float literal is a literal with the sign bit flipped (`-50.0`, `-0f3F800000`).
        match (op, &e) {
            (UnOp::Neg, Expr::F32(bits, span)) => {
                return Ok(Expr::F32(bits ^ 0x8000_0000, start.to(*span)))
            }
            (UnOp::Neg, Expr::F64(bits, span)) => {
                return Ok(Expr::F64(bits ^ (1 << 63), start.to(*span)))
            }
            _ => {}
        }
        // Fold negative literals right away: they are by far the common case.
        if let (
            UnOp::Neg,
            Expr::Int {
                value,
                unsigned,
                span,
            },
        ) = (op, &e)
        {
            return Ok(Expr::Int {
                value: value.wrapping_neg(),
                unsigned: *unsigned,
                span: start.to(*span),
            });
        }
        let span = start.to(e.span());
        Ok(Expr::Unary(op, Box::new(e), span))
    }

    fn primary(&mut self, depth: u32) -> PResult<Expr<'a>> {
        let t = self.tok;
        match t.kind {
            Tok::Int => {
                self.bump();
                let Some((value, unsigned)) = parse_int(self.text(t)) else {
                    return Err(self.bad_int(t));
                };
                if self.at(Tok::LParen) {
                    // `0xff00(expr)`: the mask operator of initializers.
                    self.bump();
                    let e = self.expr_depth(depth + 1)?;
                    self.expect(Tok::RParen, "`)` to close the mask operator")?;
                    let span = t.span.to(crate::syntax::span::Span::new(
                        self.prev_end as usize,
                        self.prev_end as usize,
                    ));
                    return Ok(Expr::Mask(value, Box::new(e), span));
                }
                Ok(Expr::Int {
                    value,
                    unsigned,
                    span: t.span,
                })
            }
            Tok::F32Hex => {
                self.bump();
                let text = self.text(t);
                match (text.len() == 10).then(|| u32::from_str_radix(&text[2..], 16).ok()).flatten() {
                    Some(bits) => Ok(Expr::F32(bits, t.span)),
                    None => Err(self.error(t.span, format!("invalid single-precision literal `{text}`: expected `0f` and 8 hex digits"))),
                }
            }
            Tok::F64Hex => {
                self.bump();
                let text = self.text(t);
                match (text.len() == 18).then(|| u64::from_str_radix(&text[2..], 16).ok()).flatten() {
                    Some(bits) => Ok(Expr::F64(bits, t.span)),
                    None => Err(self.error(t.span, format!("invalid double-precision literal `{text}`: expected `0d` and 16 hex digits"))),
                }
            }
            Tok::Float => {
                self.bump();
                let text = self.text(t);
                match text.parse::<f64>() {
                    Ok(v) => Ok(Expr::F64(v.to_bits(), t.span)),
                    Err(_) => {
                        Err(self.error(t.span, format!("invalid floating-point literal `{text}`")))
                    }
                }
            }
            Tok::Ident => {
                self.bump();
                let name = self.text(t);
                if name == "generic" && self.at(Tok::LParen) {
                    self.bump();
                    let (sym, _) = self.expect_ident("variable name inside `generic(...)`")?;
                    self.expect(Tok::RParen, "`)`")?;
                    let span = t.span.to(crate::syntax::span::Span::new(
                        self.prev_end as usize,
                        self.prev_end as usize,
                    ));
                    return Ok(Expr::Generic(sym, span));
                }
                Ok(Expr::Sym(name, t.span))
            }
            Tok::LParen => {
                self.bump();
                if self.at(Tok::Dot) {
                    let ct = self.bump();
                    let text = self.text(ct);
                    let ty = match text {
                        ".s64" => Mod::S64,
                        ".u64" => Mod::U64,
                        _ => {
                            return Err(self.error(
                                ct.span,
                                format!(
                                "invalid cast `({text})`; only `(.s64)` and `(.u64)` are allowed"
                            ),
                            ))
                        }
                    };
                    self.expect(Tok::RParen, "`)` after cast type")?;
                    let e = self.unary(depth + 1)?;
                    let span = t.span.to(e.span());
                    return Ok(Expr::Cast(ty, Box::new(e), span));
                }
                let e = self.expr_depth(depth + 1)?;
                self.expect(Tok::RParen, "`)`")?;
                Ok(e)
            }
            _ => Err(self.unexpected("an expression")),
        }
    }
}
