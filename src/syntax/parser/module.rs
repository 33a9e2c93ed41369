//! Module-level parsing: `.version`/`.target`/`.address_size`, functions and their
//! performance directives, `.file`, `.section`, `.alias`, `.pragma`, and module variables.

use smallvec::SmallVec;

use super::{PResult, Parser};
use crate::syntax::ast::*;
use crate::syntax::lexer::Tok;
use crate::syntax::span::Span;

impl<'a> Parser<'a> {
    pub(super) fn module(&mut self) -> Module<'a> {
        let mut m = Module {
            version: (0, 0),
            version_span: Span::default(),
            target_span: Span::default(),
            target: Vec::new(),
            address_size: None,
            items: Vec::new(),
        };
        // Where a missing `.target` is reported: the `.version` it should follow.
        let header = self.tok.span;
        if self.at_dot(".version") {
            if self.version(&mut m).is_err() {
                // Skip the malformed version number, up to the next directive.
                while !matches!(self.tok.kind, Tok::Dot | Tok::Eof | Tok::Unterminated) {
                    self.bump();
                }
            }
        } else {
            let span = self.tok.span;
            self.error(
                span,
                format!(
                    "expected `.version` directive at the start of the module, found {}",
                    self.found()
                ),
            );
        }
        let mut seen_target = false;
        loop {
            let before = self.tok.span;
            match self.tok.kind {
                Tok::Eof => break,
                Tok::Unterminated => {
                    let span = self.tok.span;
                    let msg = self.unterminated_message();
                    self.error(span, msg);
                    // A string ends at its line; the lexer goes on after it.
                    self.bump();
                    continue;
                }
                _ => {}
            }
            let r = if self.at_dot(".target") {
                if seen_target {
                    let span = self.tok.span;
                    self.error(span, "duplicate `.target` directive");
                }
                seen_target = true;
                self.target(&mut m)
            } else if self.at_dot(".address_size") {
                if m.address_size.is_some() {
                    let span = self.tok.span;
                    self.error(span, "duplicate `.address_size` directive");
                }
                self.bump();
                match self.expect_u32("address size (32 or 64)") {
                    Ok(v) if v == 32 || v == 64 => {
                        m.address_size = Some(v);
                        Ok(())
                    }
                    Ok(v) => {
                        let span = Span::new(before.start as usize, self.prev_end as usize);
                        Err(self.error(span, format!("`.address_size` must be 32 or 64, not {v}")))
                    }
                    Err(e) => Err(e),
                }
            } else if self.at_dot(".version") {
                let span = self.tok.span;
                self.bump();
                self.error(span, "duplicate `.version` directive");
                Err(super::Failed)
            } else {
                self.item().map(|it| m.items.push(it))
            };
            if r.is_err() {
                self.recover_module();
            }
            if self.tok.span == before && self.tok.kind != Tok::Eof {
                // Guarantee progress whatever went wrong.
                self.bump();
            }
        }
        if !seen_target
            && !self
                .diags
                .iter()
                .any(|d| d.message.contains("`.version` directive at the start"))
        {
            self.error(header, "missing `.target` directive after `.version`");
        }
        m
    }

    /// Skips to the start of the next module-level directive.
    fn recover_module(&mut self) {
        let mut depth = 0usize;
        // Inside `( … )` a `.global` is a parameter's state space, not a new declaration.
        let mut parens = 0usize;
        loop {
            match self.tok.kind {
                Tok::Eof => return,
                Tok::LParen => parens += 1,
                Tok::RParen => parens = parens.saturating_sub(1),
                // A string ends at its line, and the statement with it.
                Tok::Unterminated if depth == 0 => {
                    self.bump();
                    return;
                }
                Tok::LBrace => depth += 1,
                // A `}` without its `{` closes an initializer list that the error was in:
                // go on to the `;` that ends the declaration.
                Tok::RBrace if depth > 0 => {
                    depth -= 1;
                    if depth == 0 {
                        self.bump();
                        return;
                    }
                }
                Tok::Semi if depth == 0 => {
                    self.bump();
                    return;
                }
                Tok::Dot if depth == 0 && parens == 0 => {
                    if matches!(
                        self.cur_text(),
                        ".entry"
                            | ".func"
                            | ".visible"
                            | ".extern"
                            | ".weak"
                            | ".common"
                            | ".global"
                            | ".const"
                            | ".file"
                            | ".section"
                            | ".version"
                            | ".target"
                            | ".address_size"
                    ) {
                        return;
                    }
                }
                _ => {}
            }
            self.bump();
        }
    }

    fn version(&mut self, m: &mut Module<'a>) -> PResult<()> {
        let start = self.bump().span;
        m.version_span = start.to(self.tok.span);
        let t = self.tok;
        if !matches!(t.kind, Tok::Float | Tok::Int) {
            return Err(self.unexpected("version number `MAJOR.MINOR`"));
        }
        self.bump();
        let text = self.text(t);
        match parse_version_text(text) {
            Some(v) => {
                m.version = v;
                Ok(())
            }
            None => Err(self.error(
                t.span,
                format!("invalid PTX version `{text}`; expected `MAJOR.MINOR`"),
            )),
        }
    }

    fn target(&mut self, m: &mut Module<'a>) -> PResult<()> {
        let start = self.bump().span;
        m.target_span = start;
        loop {
            let (name, span) = self.expect_ident("target name (e.g. `sm_80`)")?;
            if !is_target_name(name) {
                self.error(
                    span,
                    format!("unknown target `{name}`; expected sm_XX, compute_XX, texmode_unified, texmode_independent, debug or map_f64_to_f32"),
                );
            }
            m.target.push(name);
            m.target_span = start.to(span);
            if !self.eat(Tok::Comma) {
                return Ok(());
            }
        }
    }

    fn item(&mut self) -> PResult<Item<'a>> {
        if self.tok.kind != Tok::Dot {
            return Err(
                self.unexpected("a module-level directive (`.entry`, `.func`, a variable, …)")
            );
        }
        let start = self.tok.span;
        match self.cur_text() {
            ".file" => return self.file_directive(),
            ".section" => return self.section().map(Item::Section),
            ".alias" => {
                self.bump();
                let (alias, _) = self.expect_ident("alias name")?;
                self.expect(Tok::Comma, "`,`")?;
                let (aliasee, _) = self.expect_ident("aliased function name")?;
                self.expect(Tok::Semi, "`;`")?;
                let span = start.to(Span::new(self.prev_end as usize, self.prev_end as usize));
                return Ok(Item::Alias {
                    alias,
                    aliasee,
                    span,
                });
            }
            ".pragma" => {
                let (strings, span) = self.pragma()?;
                return Ok(Item::Pragma(strings, span));
            }
            _ => {}
        }
        let linkage = self.linkage();
        if self.at_dot(".entry") || self.at_dot(".func") {
            return self
                .function(linkage, start)
                .map(|f| Item::Function(Box::new(f)));
        }
        if self.tok.kind == Tok::Dot {
            let d = self.var_decl(linkage, start, true)?;
            return Ok(Item::Var(d));
        }
        Err(self.unexpected("`.entry`, `.func` or a variable declaration"))
    }

    pub(super) fn linkage(&mut self) -> Linkage {
        let l = match self.cur_text() {
            ".visible" => Linkage::Visible,
            ".extern" => Linkage::Extern,
            ".weak" => Linkage::Weak,
            ".common" => Linkage::Common,
            _ => return Linkage::None,
        };
        if self.tok.kind != Tok::Dot {
            return Linkage::None;
        }
        self.bump();
        l
    }

    pub(super) fn pragma(&mut self) -> PResult<(Vec<&'a str>, Span)> {
        let start = self.bump().span;
        let mut strings = Vec::new();
        loop {
            let t = self.expect(Tok::Str, "pragma string")?;
            strings.push(self.text(t));
            if !self.eat(Tok::Comma) {
                break;
            }
        }
        self.expect(Tok::Semi, "`;` after `.pragma`")?;
        Ok((
            strings,
            start.to(Span::new(self.prev_end as usize, self.prev_end as usize)),
        ))
    }

    fn file_directive(&mut self) -> PResult<Item<'a>> {
        let start = self.bump().span;
        let index = self.expect_u32("file index")?;
        let t = self.expect(Tok::Str, "file name string")?;
        let name = self.text(t);
        let mut timestamp = None;
        let mut size = None;
        if self.eat(Tok::Comma) {
            timestamp = Some(self.expect_u64("file timestamp")?);
            self.expect(Tok::Comma, "`,` before file size")?;
            size = Some(self.expect_u64("file size")?);
        }
        Ok(Item::File {
            index,
            name,
            timestamp,
            size,
            span: start.to(Span::new(self.prev_end as usize, self.prev_end as usize)),
        })
    }

    fn section(&mut self) -> PResult<Section<'a>> {
        let start = self.bump().span;
        let nt = self.tok;
        if !matches!(nt.kind, Tok::Dot | Tok::Ident) {
            return Err(self.unexpected("section name (e.g. `.debug_info`)"));
        }
        self.bump();
        let name = self.text(nt);
        self.expect(Tok::LBrace, "`{` to open the section")?;
        let mut entries = Vec::new();
        loop {
            let next_is_colon = self.tok.kind == Tok::Ident && self.peek().kind == Tok::Colon;
            match self.tok.kind {
                Tok::RBrace => {
                    self.bump();
                    break;
                }
                Tok::Ident if next_is_colon => {
                    let t = self.bump();
                    self.bump();
                    entries.push(SectionEntry::Label(self.text(t), t.span));
                }
                Tok::Dot => {
                    let t = self.bump();
                    let text = self.text(t);
                    let width = match text {
                        ".b8" | ".b16" | ".b32" | ".b64" | ".u8" | ".u16" | ".u32" | ".u64" => {
                            crate::isa::lookup_mod(text)
                        }
                        _ => None,
                    };
                    let Some(width) = width else {
                        return Err(self.error(
                            t.span,
                            format!("expected `.b8`, `.b16`, `.b32` or `.b64` data in section, found `{text}`"),
                        ));
                    };
                    let mut values = Vec::new();
                    loop {
                        values.push(self.section_value()?);
                        if !self.eat(Tok::Comma) {
                            break;
                        }
                    }
                    self.eat(Tok::Semi);
                    let span = t
                        .span
                        .to(Span::new(self.prev_end as usize, self.prev_end as usize));
                    // DWARF is mostly `.b8 N` lines: keep runs of byte constants as bytes.
                    let bytes: Option<Vec<u8>> = (text == ".b8")
                        .then(|| {
                            values
                                .iter()
                                .map(|v| match v {
                                    Expr::Int {
                                        value,
                                        unsigned: false,
                                        ..
                                    } if *value < 256 => Some(*value as u8),
                                    _ => None,
                                })
                                .collect()
                        })
                        .flatten();
                    match (bytes, entries.last_mut()) {
                        (Some(b), Some(SectionEntry::Bytes(prev, pspan))) => {
                            prev.extend_from_slice(&b);
                            *pspan = pspan.to(span);
                        }
                        (Some(b), _) => entries.push(SectionEntry::Bytes(b, span)),
                        (None, _) => entries.push(SectionEntry::Data {
                            width,
                            values,
                            span,
                        }),
                    }
                }
                _ => return Err(self.unexpected("section data (`.b8`, `.b32`, …), a label or `}`")),
            }
        }
        Ok(Section {
            name,
            entries,
            span: start.to(Span::new(self.prev_end as usize, self.prev_end as usize)),
        })
    }

    /// A section value: a constant expression in which section names (`.debug_abbrev`) may
    /// appear as symbols.
    fn section_value(&mut self) -> PResult<Expr<'a>> {
        if self.tok.kind == Tok::Dot {
            let t = self.bump();
            let base = Expr::Sym(self.text(t), t.span);
            if matches!(self.tok.kind, Tok::Plus | Tok::Minus) {
                let minus = self.bump().kind == Tok::Minus;
                let rhs = self.expr()?;
                let span = t.span.to(rhs.span());
                let op = if minus { BinOp::Sub } else { BinOp::Add };
                return Ok(Expr::Binary(op, Box::new(base), Box::new(rhs), span));
            }
            return Ok(base);
        }
        self.expr()
    }

    fn function(&mut self, linkage: Linkage, start: Span) -> PResult<Function<'a>> {
        let kind = if self.at_dot(".entry") {
            FnKind::Entry
        } else {
            FnKind::Func
        };
        self.bump();
        // Errors in the parameter lists and directives are recovered from here, so that the
        // body is still parsed and its errors reported too.
        let mut rets = Vec::new();
        if kind == FnKind::Func && self.at(Tok::LParen) {
            rets = self
                .param_list()
                .unwrap_or_else(|_| self.recover_param_list());
        }
        let (name, name_span) = self.expect_ident("function name")?;
        let mut params = Vec::new();
        if self.at(Tok::LParen) {
            params = self
                .param_list()
                .unwrap_or_else(|_| self.recover_param_list());
        }
        let mut directives = Vec::new();
        while self.tok.kind == Tok::Dot {
            match self.fn_directive() {
                Ok(d) => directives.push(d),
                Err(_) => {
                    while !matches!(
                        self.tok.kind,
                        Tok::LBrace | Tok::RBrace | Tok::Semi | Tok::Eof
                    ) {
                        self.bump();
                    }
                }
            }
        }
        let body = if self.eat(Tok::Semi) {
            None
        } else if self.at(Tok::LBrace) {
            Some(self.block())
        } else {
            return Err(self.unexpected("`{` to open the function body or `;`"));
        };
        Ok(Function {
            kind,
            linkage,
            name,
            name_span,
            rets,
            params,
            directives,
            body,
            span: start.to(Span::new(self.prev_end as usize, self.prev_end as usize)),
        })
    }

    /// After an error in a parameter list: skips past the `)` that closes it (or up to a
    /// `{`, `}` or `;`, when it is not closed).
    fn recover_param_list<T>(&mut self) -> Vec<T> {
        let mut depth = 0usize;
        loop {
            match self.tok.kind {
                Tok::LBrace | Tok::RBrace | Tok::Semi | Tok::Eof => break,
                Tok::LParen => depth += 1,
                Tok::RParen if depth == 0 => {
                    self.bump();
                    break;
                }
                Tok::RParen => depth -= 1,
                _ => {}
            }
            self.bump();
        }
        Vec::new()
    }

    fn dims(&mut self, what: &str) -> PResult<SmallVec<[u32; 3]>> {
        let mut v = SmallVec::new();
        loop {
            v.push(self.expect_u32(what)?);
            if !self.eat(Tok::Comma) {
                return Ok(v);
            }
        }
    }

    fn fn_directive(&mut self) -> PResult<FnDirective<'a>> {
        let t = self.tok;
        let text = self.cur_text();
        if text == ".pragma" {
            let (s, span) = self.pragma()?;
            return Ok(FnDirective::Pragma(s, span));
        }
        self.bump();
        let d = match text {
            ".maxntid" => FnDirective::MaxNTid(self.dims("thread count")?, t.span),
            ".reqntid" => FnDirective::ReqNTid(self.dims("thread count")?, t.span),
            ".reqnctapercluster" => FnDirective::ReqNCtaPerCluster(self.dims("CTA count")?, t.span),
            ".minnctapersm" => FnDirective::MinNCtaPerSm(self.expect_u32("CTA count")?, t.span),
            ".maxnctapersm" => FnDirective::MaxNCtaPerSm(self.expect_u32("CTA count")?, t.span),
            ".maxnreg" => FnDirective::MaxNReg(self.expect_u32("register count")?, t.span),
            ".maxclusterrank" => FnDirective::MaxClusterRank(self.expect_u32("cluster rank")?, t.span),
            ".explicitcluster" => FnDirective::ExplicitCluster(t.span),
            ".blocksareclusters" => FnDirective::BlocksAreClusters(t.span),
            ".noreturn" => FnDirective::NoReturn(t.span),
            ".abi_preserve" | ".abi_preserve_control" => FnDirective::AbiPreserve {
                control: text == ".abi_preserve_control",
                value: self.expect_u32("register count")?,
                span: t.span,
            },
            _ => {
                return Err(self.error(
                    t.span,
                    format!("unknown function directive `{text}`; expected `.maxntid`, `.reqntid`, `.minnctapersm`, `.maxnctapersm`, `.maxnreg`, `.reqnctapercluster`, `.maxclusterrank`, `.explicitcluster`, `.blocksareclusters`, `.noreturn`, `.abi_preserve`, `.pragma` or the function body"),
                ))
            }
        };
        Ok(d)
    }
}

/// Decodes `MAJOR.MINOR` (the lexer reads `8.0` as a float token).
pub(crate) fn parse_version_text(text: &str) -> Option<(u32, u32)> {
    let (a, b) = text.split_once('.')?;
    Some((a.parse().ok()?, b.parse().ok()?))
}

fn is_target_name(s: &str) -> bool {
    let arch = |rest: &str| {
        let digits = rest.trim_end_matches(['a', 'f']);
        !digits.is_empty()
            && digits.len() <= 3
            && digits.bytes().all(|b| b.is_ascii_digit())
            && rest.len() - digits.len() <= 1
    };
    if let Some(r) = s.strip_prefix("sm_") {
        return arch(r);
    }
    if let Some(r) = s.strip_prefix("compute_") {
        return arch(r);
    }
    matches!(
        s,
        "texmode_unified" | "texmode_independent" | "debug" | "map_f64_to_f32"
    )
}
