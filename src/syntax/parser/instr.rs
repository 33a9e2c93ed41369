//! Function bodies: blocks, labels, local declarations, `.loc`, `.callprototype`,
//! `.calltargets`, `.branchtargets`, and instructions with guards, typed modifiers and every
//! operand form.

use smallvec::SmallVec;

use super::{PResult, Parser};
use crate::isa::{Mod, Opcode};
use crate::syntax::ast::*;
use crate::syntax::lexer::Tok;
use crate::syntax::span::Span;

impl<'a> Parser<'a> {
    /// `{ statements }`; the current token is `{`. Never fails: errors are recorded and the
    /// parser resynchronises at the next statement.
    pub(super) fn block(&mut self) -> Block<'a> {
        let start = self.bump().span;
        let mut stmts = Vec::with_capacity(self.count_statements());
        loop {
            match self.tok.kind {
                Tok::RBrace => {
                    self.bump();
                    break;
                }
                Tok::Eof => {
                    self.error(start, "unclosed `{`: the block has no matching `}`");
                    break;
                }
                Tok::Unterminated => {
                    let span = self.tok.span;
                    let msg = self.unterminated_message();
                    self.error(span, msg);
                    self.bump();
                    continue;
                }
                _ => {}
            }
            let before = self.tok.span;
            let r = if matches!(self.tok.kind, Tok::At)
                || (self.tok.kind == Tok::Ident && self.peek().kind != Tok::Colon)
            {
                // The hot path: build the instruction in place in the statement list.
                self.instruction().map(|i| stmts.push(Statement::Instr(i)))
            } else {
                self.statement().map(|s| stmts.extend(s))
            };
            if r.is_err() {
                if self.tok.span == before && self.tok.kind != Tok::LBrace {
                    // Garbage where a statement should start.
                    self.skip_line();
                } else {
                    self.recover_statement();
                }
            }
            if self.tok.span == before && !matches!(self.tok.kind, Tok::RBrace | Tok::Eof) {
                self.bump();
            }
        }
        Block {
            stmts,
            span: start.to(Span::new(self.prev_end as usize, self.prev_end as usize)),
        }
    }

    /// Counts the statements of the block that starts at the current token (`;` and `:` at
    /// depth 0, nested blocks as one), so the statement list is allocated once at its final
    /// size: growing a list of large entries by doubling would copy it repeatedly.
    fn count_statements(&self) -> usize {
        let mut depth = 0usize;
        let mut n = 0;
        for t in &self.toks[self.pos..] {
            match t.kind {
                Tok::Semi | Tok::Colon if depth == 0 => n += 1,
                // `.loc` is the one statement without a terminating `;`.
                Tok::Dot if depth == 0 && &self.src.as_bytes()[t.span.range()] == b".loc" => n += 1,
                Tok::LBrace => depth += 1,
                Tok::RBrace if depth == 0 => break,
                Tok::RBrace => {
                    depth -= 1;
                    if depth == 0 {
                        n += 1;
                    }
                }
                _ => {}
            }
        }
        n
    }

    fn statement(&mut self) -> PResult<Option<Statement<'a>>> {
        let next_is_colon = self.tok.kind == Tok::Ident && self.peek().kind == Tok::Colon;
        match self.tok.kind {
            Tok::Semi => {
                self.bump();
                Ok(None)
            }
            Tok::LBrace => self.nested("blocks", |p| Ok(Some(Statement::Block(p.block())))),
            Tok::Ident if next_is_colon => {
                let t = self.bump();
                self.bump();
                let name = self.text(t);
                if self.tok.kind == Tok::Dot {
                    match self.cur_text() {
                        ".callprototype" => return self.callprototype(name, t.span).map(Some),
                        ".calltargets" | ".branchtargets" => {
                            let branch = self.cur_text() == ".branchtargets";
                            self.bump();
                            let mut targets = Vec::new();
                            loop {
                                targets.push(self.expect_ident("target name")?.0);
                                if !self.eat(Tok::Comma) {
                                    break;
                                }
                            }
                            self.expect(Tok::Semi, "`;`")?;
                            let span = t
                                .span
                                .to(Span::new(self.prev_end as usize, self.prev_end as usize));
                            return Ok(Some(if branch {
                                Statement::BranchTargets {
                                    name,
                                    targets,
                                    span,
                                }
                            } else {
                                Statement::CallTargets {
                                    name,
                                    targets,
                                    span,
                                }
                            }));
                        }
                        _ => {}
                    }
                }
                Ok(Some(Statement::Label(name, t.span)))
            }
            Tok::Ident | Tok::At => self.instruction().map(|i| Some(Statement::Instr(i))),
            Tok::Dot => {
                let start = self.tok.span;
                match self.cur_text() {
                    // `.loc` has no `;`: after an error in it, skip to the end of its line.
                    ".loc" => match self.loc() {
                        Ok(l) => Ok(Some(Statement::Loc(l))),
                        Err(_) => {
                            while !matches!(self.tok.kind, Tok::Eof | Tok::RBrace)
                                && !self.newline_before()
                            {
                                self.bump();
                            }
                            Ok(None)
                        }
                    },
                    ".pragma" => {
                        let (s, span) = self.pragma()?;
                        Ok(Some(Statement::Pragma(s, span)))
                    }
                    _ => {
                        let linkage = self.linkage();
                        self.var_decl(linkage, start, false)
                            .map(|d| Some(Statement::Var(d)))
                    }
                }
            }
            _ => Err(self.unexpected("an instruction, a label, a declaration or `}`")),
        }
    }

    fn loc(&mut self) -> PResult<Loc<'a>> {
        let start = self.bump().span;
        let file = self.expect_u32("file index")?;
        let line = self.expect_u32("line number")?;
        let col = self.expect_u32("column number")?;
        let mut inlined = None;
        if self.eat(Tok::Comma) {
            let kw = self.expect_ident("`function_name`")?;
            if kw.0 != "function_name" {
                return Err(self.error(kw.1, format!("expected `function_name`, found `{}`", kw.0)));
            }
            // A label of `.debug_str`, or the section's own name (`.debug_str+16`, as in the
            // manual's example).
            let function_name = if self.tok.kind == Tok::Dot {
                let t = self.bump();
                self.text(t)
            } else {
                self.expect_ident("function name label")?.0
            };
            let mut offset = 0;
            if self.eat(Tok::Plus) {
                offset = self.expect_u64("offset")? as i64;
            }
            self.expect(Tok::Comma, "`, inlined_at`")?;
            let kw = self.expect_ident("`inlined_at`")?;
            if kw.0 != "inlined_at" {
                return Err(self.error(kw.1, format!("expected `inlined_at`, found `{}`", kw.0)));
            }
            let file = self.expect_u32("file index")?;
            let line = self.expect_u32("line number")?;
            let col = self.expect_u32("column number")?;
            inlined = Some(InlinedAt {
                function_name,
                offset,
                file,
                line,
                col,
            });
        }
        Ok(Loc {
            file,
            line,
            col,
            inlined,
            span: start.to(Span::new(self.prev_end as usize, self.prev_end as usize)),
        })
    }

    /// `name: .callprototype {(ret)} _ (params) {.noreturn} {.abi_preserve N};`
    fn callprototype(&mut self, name: &'a str, start: Span) -> PResult<Statement<'a>> {
        self.bump();
        let mut rets = Vec::new();
        if self.at(Tok::LParen) {
            rets = self.param_list()?;
        }
        let (u, us) = self.expect_ident("`_`")?;
        if u != "_" {
            return Err(self.error(us, format!("expected `_` in `.callprototype`, found `{u}`")));
        }
        let mut params = Vec::new();
        if self.at(Tok::LParen) {
            params = self.param_list()?;
        }
        let mut noreturn = false;
        let mut abi_preserve = Vec::new();
        while self.tok.kind == Tok::Dot {
            let t = self.bump();
            match self.text(t) {
                ".noreturn" => noreturn = true,
                ".abi_preserve" => abi_preserve.push((false, self.expect_u32("integer")?)),
                ".abi_preserve_control" => abi_preserve.push((true, self.expect_u32("integer")?)),
                other => {
                    return Err(
                        self.error(t.span, format!("unexpected `{other}` in `.callprototype`"))
                    )
                }
            }
        }
        self.expect(Tok::Semi, "`;` after `.callprototype`")?;
        Ok(Statement::CallPrototype(CallPrototype {
            name,
            rets,
            params,
            noreturn,
            abi_preserve,
            span: start.to(Span::new(self.prev_end as usize, self.prev_end as usize)),
        }))
    }

    #[inline(always)]
    fn instruction(&mut self) -> PResult<Instruction<'a>> {
        let start = self.tok.span;
        let mut guard = None;
        if self.eat(Tok::At) {
            let negated = self.eat(Tok::Bang);
            let (pred, span) = self.expect_ident("predicate register after `@`")?;
            guard = Some(Guard {
                pred,
                negated,
                span: start.to(span),
            });
        }
        let ot = self.expect(Tok::Ident, "instruction")?;
        let otext = self.text(ot);
        let Some(opcode) = crate::isa::lookup_opcode(otext) else {
            // `@ bra L;`: the guard took the opcode as its predicate.
            if let Some(g) = guard.filter(|g| crate::isa::lookup_opcode(g.pred).is_some()) {
                let span = Span::new(g.span.end as usize - g.pred.len(), g.span.end as usize);
                let msg = format!(
                    "expected predicate register after `@`, found the instruction `{}`",
                    g.pred
                );
                return Err(self.error(span, msg));
            }
            let msg = format!("unknown instruction `{otext}`");
            return Err(self.error(ot.span, msg));
        };
        // Unknown modifiers and a missing `;` at the end of a line are recorded, and the
        // instruction is kept without them: no recovery is needed, so the next statement is
        // still parsed (and its errors reported).
        let mut mods: SmallVec<[Mod; 4]> = SmallVec::new();
        while self.tok.kind == Tok::Dot {
            let t = self.bump();
            let text = self.text(t);
            match crate::isa::lookup_mod(text) {
                Some(m) => mods.push(m),
                None => {
                    self.error(t.span, format!("unknown modifier `{text}` on `{otext}`"));
                }
            }
        }
        let op_span = ot
            .span
            .to(Span::new(self.prev_end as usize, self.prev_end as usize));
        let mut operands = Vec::with_capacity(3);
        let mut post_ops = PostOps::default();
        let mut n_post = 0;
        if !self.at(Tok::Semi) && !self.at(Tok::RBrace) {
            loop {
                let op = self.operand(opcode == Opcode::Call)?;
                operands.push(op);
                // Trailing modifiers after an operand (`[a].unified`, video `a.b1`): they join
                // `mods` for validation and are also recorded against their operand.
                while self.tok.kind == Tok::Dot {
                    let t = self.bump();
                    match crate::isa::lookup_mod(self.text(t)) {
                        Some(m) => {
                            if n_post == MAX_POST_MODS {
                                self.error(t.span, format!("too many modifiers after operands (at most {MAX_POST_MODS})"));
                            } else {
                                mods.push(m);
                                post_ops.0[n_post] = (operands.len() - 1).min(254) as u8;
                                n_post += 1;
                            }
                        }
                        None => {
                            let msg = format!("unknown modifier `{}` on `{otext}`", self.text(t));
                            self.error(t.span, msg);
                        }
                    }
                }
                if !self.eat(Tok::Comma) {
                    break;
                }
            }
        }
        let end = if self.at(Tok::Semi) || self.newline_before() || self.at(Tok::RBrace) {
            let end = self.prev_end;
            self.expect_semi("at the end of the instruction")?;
            end
        } else {
            return Err(self.unexpected("`,` or `;` after operand"));
        };
        let id = crate::syntax::ast::InstrId(self.next_instr);
        self.next_instr = self.next_instr.saturating_add(1);
        Ok(Instruction {
            guard,
            opcode,
            mods,
            operands,
            post_ops,
            span: start.to(Span::new(end as usize, end as usize)),
            op_span,
            id,
        })
    }

    fn operand(&mut self, in_call: bool) -> PResult<Operand<'a>> {
        self.nested("operands", |p| p.operand_inner(in_call))
    }

    fn operand_inner(&mut self, in_call: bool) -> PResult<Operand<'a>> {
        let t = self.tok;
        match t.kind {
            Tok::LBracket => self.address(),
            Tok::LBrace => {
                self.bump();
                let mut items = Vec::new();
                loop {
                    items.push(self.operand(false)?);
                    if !self.eat(Tok::Comma) {
                        break;
                    }
                }
                self.expect(Tok::RBrace, "`,` or `}` in vector operand")?;
                Ok(Operand::Vec(
                    items,
                    t.span
                        .to(Span::new(self.prev_end as usize, self.prev_end as usize)),
                ))
            }
            Tok::LParen if in_call => {
                self.bump();
                let mut items = Vec::new();
                if !self.at(Tok::RParen) {
                    loop {
                        items.push(self.operand(false)?);
                        if !self.eat(Tok::Comma) {
                            break;
                        }
                    }
                }
                self.expect(Tok::RParen, "`,` or `)` in argument list")?;
                Ok(Operand::List(
                    items,
                    t.span
                        .to(Span::new(self.prev_end as usize, self.prev_end as usize)),
                ))
            }
            Tok::Bang if self.peek().kind == Tok::Ident => {
                self.bump();
                let (name, span) = self.expect_ident("predicate")?;
                Ok(Operand::Name {
                    name,
                    comp: None,
                    negated: true,
                    span: t.span.to(span),
                })
            }
            Tok::Ident => {
                let next = self.peek().kind;
                if matches!(
                    next,
                    Tok::Plus | Tok::Minus | Tok::Star | Tok::Shl | Tok::Shr | Tok::Amp
                ) || next == Tok::LParen && self.cur_text() == "generic"
                {
                    return Ok(Operand::Imm(self.expr()?));
                }
                self.bump();
                let name = self.text(t);
                if name == "_" {
                    return Ok(Operand::Sink(t.span));
                }
                let mut span = t.span;
                let mut comp = None;
                if self.tok.kind == Tok::Dot {
                    comp = match self.cur_text() {
                        ".x" | ".r" => Some(Component::X),
                        ".y" | ".g" => Some(Component::Y),
                        ".z" | ".b" => Some(Component::Z),
                        ".w" | ".a" => Some(Component::W),
                        _ => None,
                    };
                    if comp.is_some() {
                        span = span.to(self.bump().span);
                    }
                }
                let first = Operand::Name {
                    name,
                    comp,
                    negated: false,
                    span,
                };
                if self.at(Tok::Pipe) {
                    self.bump();
                    let second = self.operand(false)?;
                    let span = span.to(second.span());
                    return Ok(Operand::Pair(Box::new(first), Box::new(second), span));
                }
                Ok(first)
            }
            Tok::Int if matches!(self.peek().kind, Tok::Comma | Tok::Semi) => {
                // Fast path for the common plain integer immediate.
                self.bump();
                match crate::syntax::lexer::parse_int(self.text(t)) {
                    Some((value, unsigned)) => Ok(Operand::Imm(Expr::Int {
                        value,
                        unsigned,
                        span: t.span,
                    })),
                    None => Err(self.bad_int(t)),
                }
            }
            _ => Ok(Operand::Imm(self.expr()?)),
        }
    }

    /// `[reg]`, `[reg+imm]`, `[var+imm]`, `[imm]`, or a bracketed list `[tex, {…}]`.
    fn address(&mut self) -> PResult<Operand<'a>> {
        let start = self.bump().span;
        if self.at(Tok::Ident) {
            let nt = self.peek().kind;
            if nt == Tok::Comma {
                let mut items = Vec::new();
                loop {
                    items.push(self.operand(false)?);
                    if !self.eat(Tok::Comma) {
                        break;
                    }
                }
                self.expect(Tok::RBracket, "`]`")?;
                let span = start.to(Span::new(self.prev_end as usize, self.prev_end as usize));
                return Ok(Operand::AddrList(items, span));
            }
            let (base, _) = self.expect_ident("address")?;
            let mut offset = 0i64;
            if matches!(self.tok.kind, Tok::Plus | Tok::Minus) {
                let neg = self.bump().kind == Tok::Minus;
                let e = self.expr()?;
                let Some(v) = crate::syntax::consteval::eval_int(&e) else {
                    if let Some(span) = crate::syntax::consteval::division_by_zero(&e) {
                        return Err(self.error(span, "division by zero in constant expression"));
                    }
                    return Err(self.error(e.span(), "address offset must be an integer constant"));
                };
                offset = if neg { v.wrapping_neg() } else { v };
            }
            self.expect(Tok::RBracket, "`]` to close the address (an address is `[reg]`, `[reg+imm]`, `[var+imm]` or `[imm]`)")?;
            let span = start.to(Span::new(self.prev_end as usize, self.prev_end as usize));
            return Ok(Operand::Addr(Address {
                base: Some(base),
                offset,
                span,
            }));
        }
        let e = self.expr()?;
        let Some(v) = crate::syntax::consteval::eval_int(&e) else {
            return Err(self.error(
                e.span(),
                "address must be a register, a variable or an integer constant",
            ));
        };
        self.expect(Tok::RBracket, "`]` to close the address")?;
        let span = start.to(Span::new(self.prev_end as usize, self.prev_end as usize));
        Ok(Operand::Addr(Address {
            base: None,
            offset: v,
            span,
        }))
    }
}
