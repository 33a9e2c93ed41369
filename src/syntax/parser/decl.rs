//! Declarations: function parameter lists (with `.ptr`/`.align` attributes), variables in
//! every state space (alignment, vectors, arrays, `%r<N>` names, `.attribute(...)`) and their
//! initializers.

use smallvec::SmallVec;

use super::{PResult, Parser};
use crate::isa::Mod;
use crate::syntax::ast::*;
use crate::syntax::lexer::Tok;
use crate::syntax::span::Span;

/// State spaces a variable may be declared in.
fn is_decl_space(s: &str) -> bool {
    matches!(
        s,
        ".reg" | ".sreg" | ".const" | ".global" | ".local" | ".param" | ".shared" | ".tex"
    ) || s.starts_with(".shared::")
        || s.starts_with(".param::")
}

impl<'a> Parser<'a> {
    fn end_span(&self, start: Span) -> Span {
        start.to(Span::new(self.prev_end as usize, self.prev_end as usize))
    }

    /// `( param, param, … )`
    pub(super) fn param_list(&mut self) -> PResult<Vec<Param<'a>>> {
        self.expect(Tok::LParen, "`(`")?;
        let mut v = Vec::new();
        if self.eat(Tok::RParen) {
            return Ok(v);
        }
        loop {
            v.push(self.param()?);
            if self.eat(Tok::RParen) {
                return Ok(v);
            }
            self.expect(Tok::Comma, "`,` or `)` in parameter list")?;
        }
    }

    fn lookup_mod(&mut self, what: &str) -> PResult<(Mod, Span)> {
        let t = self.expect(Tok::Dot, what)?;
        let text = self.text(t);
        match crate::isa::lookup_mod(text) {
            Some(m) => Ok((m, t.span)),
            None => Err(self.error(t.span, format!("unknown {what} `{text}`"))),
        }
    }

    fn align_value(&mut self) -> PResult<u32> {
        let start = self.tok.span;
        let v = self.expect_u32("alignment in bytes")?;
        if !v.is_power_of_two() {
            let span = self.end_span(start);
            return Err(self.error(span, format!("alignment {v} is not a power of two")));
        }
        Ok(v)
    }

    /// `.param {.align N} .type {.ptr {.space} {.align N}} name{[N]}` or `.reg .type name`.
    fn param(&mut self) -> PResult<Param<'a>> {
        let start = self.tok.span;
        if !(self.at_dot(".param") || self.at_dot(".reg")) {
            return Err(self.unexpected("`.param` or `.reg` parameter"));
        }
        let (space, _) = self.lookup_mod("state space")?;
        let mut align = None;
        let mut ty = None;
        let mut vector = None;
        let mut ptr: Option<PtrAttr> = None;
        while self.tok.kind == Tok::Dot {
            let t = self.tok;
            match self.cur_text() {
                ".align" => {
                    self.bump();
                    let a = self.align_value()?;
                    match &mut ptr {
                        Some(p) => p.align = Some(a),
                        None => align = Some(a),
                    }
                }
                ".ptr" => {
                    self.bump();
                    ptr = Some(PtrAttr {
                        space: None,
                        align: None,
                    });
                }
                text => {
                    let (m, _) = self.lookup_mod("parameter attribute")?;
                    if let Some(n) = vector_width(m) {
                        vector = Some(n);
                    } else if let Some(p) = ptr.as_mut().filter(|_| {
                        ty.is_some() && matches!(text, ".global" | ".shared" | ".const" | ".local")
                    }) {
                        p.space = Some(m);
                    } else if m.is_type() && ty.is_none() {
                        ty = Some(m);
                    } else {
                        return Err(self.error(
                            t.span,
                            format!("unexpected `{text}` in parameter declaration"),
                        ));
                    }
                }
            }
        }
        let Some(ty) = ty else {
            return Err(self.unexpected("parameter type (e.g. `.u64`)"));
        };
        let (name, _) = if self.at(Tok::Ident) {
            self.expect_ident("parameter name")?
        } else {
            return Err(self.unexpected("parameter name"));
        };
        let array = self.array_dims()?;
        Ok(Param {
            space,
            align,
            ty,
            vector,
            ptr,
            name,
            array,
            span: self.end_span(start),
        })
    }

    /// `[N]` / `[]` suffixes.
    fn array_dims(&mut self) -> PResult<SmallVec<[Option<u64>; 1]>> {
        let mut dims = SmallVec::new();
        while self.eat(Tok::LBracket) {
            if self.eat(Tok::RBracket) {
                dims.push(None);
                continue;
            }
            let e = self.expr()?;
            let n = match crate::syntax::consteval::eval_int(&e) {
                Some(n) if n >= 0 => n as u64,
                _ => {
                    if let Some(span) = crate::syntax::consteval::division_by_zero(&e) {
                        return Err(self.error(span, "division by zero in constant expression"));
                    }
                    return Err(self.error(
                        e.span(),
                        "array size must be a non-negative integer constant",
                    ));
                }
            };
            dims.push(Some(n));
            self.expect(Tok::RBracket, "`]`")?;
        }
        Ok(dims)
    }

    /// A variable declaration; the current token is its state space (linkage already read).
    pub(super) fn var_decl(
        &mut self,
        linkage: Linkage,
        start: Span,
        module_level: bool,
    ) -> PResult<VarDecl<'a>> {
        let t = self.tok;
        let text = self.cur_text();
        if !is_decl_space(text) {
            let what = if module_level {
                "a state space (`.global`, `.const`, `.shared`, …), `.entry` or `.func`"
            } else {
                "a state space (`.reg`, `.local`, `.shared`, `.param`, …)"
            };
            return Err(self.error(t.span, format!("expected {what}, found `{text}`")));
        }
        let (space, _) = self.lookup_mod("state space")?;
        let mut align = None;
        let mut vector = None;
        let mut ty = None;
        let mut attributes = Vec::new();
        while self.tok.kind == Tok::Dot {
            match self.cur_text() {
                ".align" => {
                    self.bump();
                    align = Some(self.align_value()?);
                }
                ".attribute" => {
                    self.bump();
                    self.attribute(&mut attributes)?;
                }
                text => {
                    let t = self.tok;
                    let (m, _) = self.lookup_mod("variable type")?;
                    if let Some(n) = vector_width(m) {
                        vector = Some(n);
                    } else if m.is_type() && ty.is_none() {
                        ty = Some(m);
                    } else {
                        return Err(self.error(
                            t.span,
                            format!("unexpected `{text}` in variable declaration"),
                        ));
                    }
                }
            }
        }
        let Some(ty) = ty else {
            return Err(self.unexpected("variable type (e.g. `.u32`)"));
        };
        let mut names = Vec::with_capacity(1);
        loop {
            names.push(self.decl_name()?);
            if !self.eat(Tok::Comma) {
                break;
            }
        }
        self.expect_semi("after the variable declaration")?;
        Ok(VarDecl {
            linkage,
            space,
            align,
            vector,
            ty,
            attributes,
            names,
            span: self.end_span(start),
        })
    }

    fn attribute(&mut self, out: &mut Vec<Attribute>) -> PResult<()> {
        self.expect(Tok::LParen, "`(` after `.attribute`")?;
        loop {
            let t = self.expect(Tok::Dot, "`.managed` or `.unified`")?;
            match self.text(t) {
                ".managed" => out.push(Attribute::Managed),
                ".unified" => {
                    self.expect(Tok::LParen, "`(`")?;
                    let hi = self.expect_u64("128-bit UUID high half")?;
                    self.expect(Tok::Comma, "`,`")?;
                    let lo = self.expect_u64("128-bit UUID low half")?;
                    self.expect(Tok::RParen, "`)`")?;
                    out.push(Attribute::Unified(hi, lo));
                }
                other => {
                    return Err(self.error(
                        t.span,
                        format!(
                        "unknown variable attribute `{other}`; expected `.managed` or `.unified`"
                    ),
                    ))
                }
            }
            if !self.eat(Tok::Comma) {
                break;
            }
        }
        self.expect(Tok::RParen, "`)` to close `.attribute(`")?;
        Ok(())
    }

    fn decl_name(&mut self) -> PResult<DeclName<'a>> {
        let (name, start) = self.expect_ident("variable name")?;
        let mut count = None;
        if self.at(Tok::Lt) {
            self.bump();
            count = Some(self.expect_u32("register count")?);
            self.expect(Tok::Gt, "`>` to close the register count")?;
        }
        let array = self.array_dims()?;
        let init = if self.eat(Tok::Assign) {
            Some(self.initializer()?)
        } else {
            None
        };
        Ok(DeclName {
            name,
            count,
            array,
            init,
            span: self.end_span(start),
        })
    }

    fn initializer(&mut self) -> PResult<Initializer<'a>> {
        self.nested("initializers", |p| p.initializer_inner())
    }

    fn initializer_inner(&mut self) -> PResult<Initializer<'a>> {
        if self.at(Tok::LBrace) {
            let start = self.bump().span;
            let mut items = Vec::new();
            if !self.at(Tok::RBrace) {
                loop {
                    items.push(self.initializer()?);
                    if !self.eat(Tok::Comma) {
                        break;
                    }
                }
            }
            self.expect(Tok::RBrace, "`,` or `}` in initializer list")?;
            return Ok(Initializer::List(items, self.end_span(start)));
        }
        if self.at(Tok::Ident) && self.peek().kind == Tok::Assign {
            // Opaque-type field: `filter_mode = nearest`, `normalized_coords = 1`.
            let (name, start) = self.expect_ident("field name")?;
            self.bump();
            let t = self.tok;
            if !matches!(t.kind, Tok::Ident | Tok::Int) {
                return Err(self.unexpected("a field value (e.g. `nearest`, `clamp_to_edge`, `1`)"));
            }
            self.bump();
            return Ok(Initializer::Field(name, self.text(t), self.end_span(start)));
        }
        Ok(Initializer::Expr(self.expr()?))
    }
}

pub(crate) fn vector_width(m: Mod) -> Option<u8> {
    match m {
        Mod::V2 => Some(2),
        Mod::V4 => Some(4),
        Mod::V8 => Some(8),
        _ => None,
    }
}
