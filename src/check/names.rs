//! Name resolution: every register, variable, parameter, function, label and special register an
//! instruction uses must be declared where it is used. Scopes nest: module (variables, functions,
//! aliases), function (parameters), then each `{ }` block (its declarations, labels and
//! `.callprototype`/`.calltargets`/`.branchtargets` names, visible throughout the block and in
//! the blocks nested in it — ptxas scopes labels by block, and inline-asm blocks reuse them). `.reg .b32 %r<N>;` declares `%r0` … `%r{N-1}`. Also: duplicate labels,
//! duplicate declarations in one block, and `bra`/`brx.idx` targets that are not labels.

use rustc_hash::FxHashMap as HashMap;

use crate::isa::{Decoded, Mod, Opcode};
use crate::syntax::ast::{
    BinOp, Block, DeclName, Expr, Function, Initializer, Instruction, Item, Module, Operand,
    Statement,
};
use crate::syntax::diag::Diagnostic;
use crate::syntax::span::Span;

/// Special registers (without their `.x`/`.y`/`.z` component) and predefined identifiers.
const SREGS: &[&str] = &[
    "%tid",
    "%ntid",
    "%laneid",
    "%warpid",
    "%nwarpid",
    "%ctaid",
    "%nctaid",
    "%smid",
    "%nsmid",
    "%gridid",
    "%is_explicit_cluster",
    "%clusterid",
    "%nclusterid",
    "%cluster_ctaid",
    "%cluster_nctaid",
    "%cluster_ctarank",
    "%cluster_nctarank",
    "%lanemask_eq",
    "%lanemask_le",
    "%lanemask_lt",
    "%lanemask_ge",
    "%lanemask_gt",
    "%clock",
    "%clock_hi",
    "%clock64",
    "%globaltimer",
    "%globaltimer_lo",
    "%globaltimer_hi",
    "%reserved_smem_offset_begin",
    "%reserved_smem_offset_end",
    "%reserved_smem_offset_cap",
    "%reserved_smem_offset_0",
    "%reserved_smem_offset_1",
    "%total_smem_size",
    "%aggr_smem_size",
    "%dynamic_smem_size",
    "%current_graph_exec",
    "WARP_SZ",
];

/// Whether `name` is a special register: the fixed ones, `%envreg0`–`%envreg31`, `%pm0`–`%pm7`
/// and `%pm0_64`–`%pm7_64`.
pub fn is_special_register(name: &str) -> bool {
    if SREGS.contains(&name) {
        return true;
    }
    if let Some(n) = name.strip_prefix("%envreg") {
        return n.parse::<u32>().is_ok_and(|n| n < 32) && canonical_number(n);
    }
    if let Some(rest) = name.strip_prefix("%pm") {
        let n = rest.strip_suffix("_64").unwrap_or(rest);
        return n.len() == 1 && n.as_bytes()[0].is_ascii_digit() && n.as_bytes()[0] <= b'7';
    }
    false
}

/// `12` but not `012` or `+1`.
fn canonical_number(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()) && (s == "0" || !s.starts_with('0'))
}

/// What a name denotes.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Kind {
    /// Variable (with its state space) or parameter (`None`).
    Data(Option<Mod>),
    /// A `.reg` register other than `.pred`, with its type and vector width.
    Reg(Mod, Option<u8>),
    /// A `.pred` register (the only kind a guard `@p` may name).
    Pred,
    Function,
    Label,
    /// `.callprototype` label
    Prototype,
    /// `.calltargets` / `.branchtargets` label
    TargetList,
}

#[derive(Default)]
struct Scope<'a> {
    names: HashMap<&'a str, Kind>,
    /// Parameterised declarations `%r<N>`: prefix → (N, kind).
    counted: HashMap<&'a str, (u32, Kind)>,
}

impl<'a> Scope<'a> {
    fn lookup(&self, name: &str) -> Option<Kind> {
        if let Some(&k) = self.names.get(name) {
            return Some(k);
        }
        if self.counted.is_empty() {
            return None;
        }
        // `%rd12` is `%rd` + 12; a prefix may itself end in digits (`%r1<4>` declares `%r10`).
        let digits = name.len() - name.trim_end_matches(|c: char| c.is_ascii_digit()).len();
        (1..=digits).find_map(|k| {
            let (prefix, num) = name.split_at(name.len() - k);
            let (count, kind) = *self.counted.get(prefix)?;
            let n: u32 = num.parse().ok()?;
            (canonical_number(num) && n < count).then_some(kind)
        })
    }

    /// Declares a name; returns false when it already is declared in this scope.
    fn declare(&mut self, d: &DeclName<'a>, kind: Kind) -> bool {
        match d.count {
            Some(n) => self.counted.insert(d.name, (n, kind)).is_none(),
            None => self.names.insert(d.name, kind).is_none(),
        }
    }
}

struct Resolver<'m, 'a> {
    scopes: Vec<Scope<'a>>,
    /// The module's `.target`/`.version`, for the requirements of each instruction.
    target: &'m super::target::ModuleTarget,
    diags: &'m mut Vec<Diagnostic>,
    /// Each instruction decoded, for the lowering.
    info: &'m mut super::ModuleInfo,
}

pub(super) fn check_names(
    module: &Module<'_>,
    target: &super::target::ModuleTarget,
    diags: &mut Vec<Diagnostic>,
    info: &mut super::ModuleInfo,
) {
    let mut global = Scope::default();
    for item in &module.items {
        match item {
            Item::Var(v) => {
                for n in &v.names {
                    global.declare(n, Kind::Data(Some(v.space)));
                }
            }
            Item::Function(f) => {
                global.names.insert(f.name, Kind::Function);
            }
            Item::Alias { alias, .. } => {
                global.names.insert(alias, Kind::Function);
            }
            _ => {}
        }
    }
    let mut r = Resolver {
        scopes: vec![global],
        target,
        diags,
        info,
    };
    for item in &module.items {
        match item {
            Item::Var(v) => {
                for n in &v.names {
                    if let Some(init) = &n.init {
                        r.initializer(init);
                    }
                }
            }
            Item::Alias { aliasee, span, .. } if r.lookup(aliasee) != Some(Kind::Function) => {
                r.error(
                    *span,
                    format!("`.alias` target `{aliasee}` is not a declared function"),
                );
            }
            Item::Function(f) => r.function(f),
            _ => {}
        }
    }
}

impl<'m, 'a> Resolver<'m, 'a> {
    fn error(&mut self, span: Span, msg: String) {
        self.diags.push(Diagnostic::new(span, msg));
    }

    fn lookup(&self, name: &str) -> Option<Kind> {
        if is_special_register(name) {
            return Some(Kind::Data(None));
        }
        self.scopes.iter().rev().find_map(|s| s.lookup(name))
    }

    fn function(&mut self, f: &Function<'a>) {
        let Some(body) = &f.body else {
            return;
        };
        let mut scope = Scope::default();
        for p in f.rets.iter().chain(&f.params) {
            let kind = if p.ty == Mod::Pred {
                Kind::Pred
            } else {
                Kind::Data(None)
            };
            if scope.names.insert(p.name, kind).is_some() {
                self.error(p.span, format!("parameter `{}` is declared twice", p.name));
            }
        }
        self.scopes.push(scope);
        self.block(body);
        self.scopes.pop();
    }

    /// Declarations, labels and `.callprototype`/`.calltargets`/`.branchtargets` names are
    /// visible in their whole block (before and after the statement that introduces them) and in
    /// the blocks nested in it; sibling blocks may reuse a label (inline-asm blocks do).
    fn block(&mut self, b: &Block<'a>) {
        let mut scope = Scope::default();
        for s in &b.stmts {
            let (name, span, kind) = match s {
                Statement::Var(v) => {
                    let kind = if v.ty == Mod::Pred {
                        Kind::Pred
                    } else if v.space == Mod::Reg {
                        Kind::Reg(v.ty, v.vector)
                    } else {
                        Kind::Data(Some(v.space))
                    };
                    for n in &v.names {
                        if !scope.declare(n, kind) {
                            let shown = match n.count {
                                Some(c) => format!("{}<{c}>", n.name),
                                None => n.name.to_string(),
                            };
                            self.error(
                                n.span,
                                format!("`{shown}` is already declared in this block"),
                            );
                        }
                    }
                    continue;
                }
                Statement::Label(name, span) => (*name, *span, Kind::Label),
                Statement::CallPrototype(p) => (p.name, p.span, Kind::Prototype),
                Statement::CallTargets { name, span, .. }
                | Statement::BranchTargets { name, span, .. } => (*name, *span, Kind::TargetList),
                _ => continue,
            };
            match scope.names.get(name) {
                Some(Kind::Label | Kind::Prototype | Kind::TargetList) => {
                    self.error(
                        span,
                        format!("duplicate label `{name}`: it is already defined in this block"),
                    );
                }
                Some(_) => self.error(
                    span,
                    format!("label `{name}` has the same name as a declaration in this block"),
                ),
                None => {
                    scope.names.insert(name, kind);
                }
            }
        }
        self.scopes.push(scope);
        for s in &b.stmts {
            match s {
                Statement::Instr(i) => self.instruction(i),
                Statement::Block(inner) => self.block(inner),
                Statement::Var(v) => {
                    for n in &v.names {
                        if let Some(init) = &n.init {
                            self.initializer(init);
                        }
                    }
                }
                Statement::CallTargets { targets, span, .. } => {
                    for t in targets {
                        if self.lookup(t) != Some(Kind::Function) {
                            self.error(
                                *span,
                                format!("`.calltargets` entry `{t}` is not a declared function"),
                            );
                        }
                    }
                }
                Statement::BranchTargets { targets, span, .. } => {
                    for t in targets {
                        if self.lookup(t) != Some(Kind::Label) {
                            self.error(
                                *span,
                                format!("`.branchtargets` entry `{t}` is not a label in scope"),
                            );
                        }
                    }
                }
                _ => {}
            }
        }
        self.scopes.pop();
    }

    fn initializer(&mut self, init: &Initializer<'a>) {
        match init {
            Initializer::Expr(e) => self.expr(e),
            Initializer::List(items, _) => {
                for i in items {
                    self.initializer(i);
                }
            }
            // Field names and values of opaque types are keywords, not declared names.
            Initializer::Field(..) => {}
        }
    }

    fn instruction(&mut self, i: &Instruction<'a>) {
        if let Some(g) = &i.guard {
            match self.lookup(g.pred) {
                Some(Kind::Pred) => {}
                None => self.use_name(g.pred, g.span),
                Some(_) => self.error(
                    g.span,
                    format!("guard `{}` is not a predicate: `@p` needs a register declared `.reg .pred`", g.pred),
                ),
            }
        }
        if i.opcode == Opcode::Bra {
            if let Some(Operand::Name { name, span, .. }) = i.operands.first() {
                match self.lookup(name) {
                    Some(Kind::Label) => {}
                    None => self.error(
                        *span,
                        format!("branch target `{name}` is not a label in scope"),
                    ),
                    Some(_) => self.error(
                        *span,
                        format!("`bra` needs a label, but `{name}` is not one"),
                    ),
                }
                if let Ok(decoded) = crate::isa::decoded::decode(i) {
                    self.info.record(i.id, decoded);
                }
                return;
            }
        }
        for op in &i.operands {
            self.operand(op);
        }
        match i.opcode {
            Opcode::Call => self.call_operands(i),
            Opcode::Brx => self.branch_table(i),
            _ => {}
        }
        // Modifiers and operand shapes against the forms, then operand types in this scope.
        match crate::isa::decoded::decode(i) {
            Ok(decoded) => {
                let mut found = Vec::new();
                {
                    let lookup = |name: &str| self.declared(name);
                    super::types::check_types(i, &decoded, &lookup, &mut found);
                    super::rules::check_rules(i, &decoded, &mut found);
                    self.variable_spaces(i, &decoded, &mut found);
                }
                self.diags.extend(found);
                super::target::check_instruction(self.target, i, &decoded, self.diags);
                self.info.record(i.id, decoded);
            }
            Err(_) => {
                if let Some(d) = super::instr::check_instruction(i) {
                    self.diags.push(d);
                }
            }
        }
    }

    /// `call`'s callee: a function (a direct call, with no target list after the arguments),
    /// or a 32- or 64-bit register whose possible callees a `.calltargets` list, a
    /// `.callprototype` or a table of addresses (a variable) after the arguments describes.
    /// ptxas: "Label expected for argument 0 of instruction 'call'", "Label or .u32/.u64/.u8
    /// array expected for argument 1", "Argument 0 of instruction 'call': must be register",
    /// "Arguments mismatch".
    fn call_operands(&mut self, i: &Instruction<'a>) {
        let outside: Vec<&Operand<'a>> = i
            .operands
            .iter()
            .filter(|o| !matches!(o, Operand::List(..)))
            .collect();
        let Some(Operand::Name { name, span, .. }) = outside.first() else {
            return;
        };
        let trailing = outside.get(1);
        match self.lookup(name) {
            Some(Kind::Function) => {
                if let Some(t) = trailing {
                    self.error(
                        t.span(),
                        format!("`call {name}` calls a function directly: it takes no call-target list or prototype after the arguments"),
                    );
                }
            }
            Some(Kind::Reg(ty, None)) if matches!(ty.type_bits(), Some(32 | 64)) => {
                let described = match trailing {
                    Some(Operand::Name { name: t, .. }) => matches!(
                        self.lookup(t),
                        Some(Kind::Prototype | Kind::TargetList | Kind::Data(_))
                    ),
                    _ => false,
                };
                if !described {
                    self.error(
                        trailing.map_or(*span, |t| t.span()),
                        format!("an indirect call through `{name}` needs a `.calltargets` list or a `.callprototype` label after the arguments"),
                    );
                }
            }
            Some(Kind::Reg(..) | Kind::Pred) => self.error(
                *span,
                format!("the callee `{name}` of an indirect call must be a 32- or 64-bit register holding a function's address"),
            ),
            _ => {}
        }
    }

    /// `brx.idx`'s targets: a `.branchtargets` list (ptxas: "Label with '.branchtargets'
    /// directive expected for argument 1 of instruction 'brx.idx'").
    fn branch_table(&mut self, i: &Instruction<'a>) {
        let Some(op) = i.operands.get(1) else {
            return;
        };
        let ok = match op {
            Operand::Name { name, .. } => {
                !matches!(self.lookup(name), Some(k) if k != Kind::TargetList)
            }
            _ => false,
        };
        if !ok {
            self.error(
                op.span(),
                "`brx.idx` needs a label declared by `.branchtargets` as its target list".into(),
            );
        }
    }

    /// What `name` is, for operand typing.
    fn declared(&self, name: &str) -> Option<super::types::Declared> {
        use super::types::Declared;
        if name == "WARP_SZ" {
            return Some(Declared::Other);
        }
        if is_special_register(name) {
            return Some(Declared::Special);
        }
        Some(
            match self.scopes.iter().rev().find_map(|s| s.lookup(name))? {
                Kind::Reg(ty, vector) => Declared::Reg { ty, vector },
                Kind::Pred => Declared::Reg {
                    ty: Mod::Pred,
                    vector: None,
                },
                _ => Declared::Other,
            },
        )
    }

    fn operand(&mut self, op: &Operand<'a>) {
        match op {
            Operand::Name { name, span, .. } => self.use_name(name, *span),
            Operand::Imm(e) => {
                self.expr(e);
                self.register_expr(e);
            }
            Operand::Addr(a) => {
                if let Some(base) = a.base {
                    self.use_name(base, a.span);
                }
            }
            Operand::AddrList(items, _) | Operand::Vec(items, _) | Operand::List(items, _) => {
                for o in items {
                    self.operand(o);
                }
            }
            Operand::Pair(a, b, _) => {
                self.operand(a);
                self.operand(b);
            }
            Operand::Sink(_) => {}
        }
    }

    fn expr(&mut self, e: &Expr<'a>) {
        let mut names = Vec::new();
        e.each_name(&mut |name, span| names.push((name, span)));
        for (name, span) in names {
            self.use_name(name, span);
        }
    }

    /// A variable named as an address must be in the instruction's state space (ptxas: "State
    /// space mismatch between instruction and address"); a generic access reaches global,
    /// shared and local variables (not `.const` or `.param` ones, and atomics not `.local`).
    fn variable_spaces(&self, i: &Instruction<'a>, d: &Decoded, diags: &mut Vec<Diagnostic>) {
        use crate::isa::Opcode as O;
        // A CTA rank or another CTA's address exists only for shared memory (ptxas: "State
        // space mismatch between instruction and address in instruction 'getctarank'").
        if matches!(i.opcode, O::Getctarank | O::Mapa) {
            for op in &i.operands {
                let (name, span) = match op {
                    Operand::Name { name, span, .. } => (*name, *span),
                    Operand::Imm(Expr::Sym(n, sp)) => (*n, *sp),
                    Operand::Imm(Expr::Binary(_, a, _, _)) => match &**a {
                        Expr::Sym(n, sp) => (*n, *sp),
                        _ => continue,
                    },
                    _ => continue,
                };
                if let Some(Kind::Data(Some(space))) = self.lookup(name) {
                    if !matches!(space, Mod::Shared | Mod::SharedCta | Mod::SharedCluster) {
                        diags.push(Diagnostic::new(
                            span,
                            format!(
                                "`{name}` is a `{}` variable, but `{}` takes the address of a `.shared` one",
                                space.spelling(),
                                super::instr::instr_name(i)
                            ),
                        ));
                    }
                }
            }
            return;
        }
        if !matches!(
            i.opcode,
            O::Ld | O::St | O::Atom | O::Red | O::Ldu | O::Cvta
        ) || d.has(Mod::To)
        {
            return;
        }
        let family = |m: Mod| match m {
            Mod::SharedCta | Mod::SharedCluster => Mod::Shared,
            Mod::ParamEntry | Mod::ParamFunc => Mod::Param,
            m => m,
        };
        let space = d.space().map(family);
        for op in &i.operands {
            let (name, span) = match op {
                Operand::Addr(a) => match a.base {
                    Some(b) => (b, a.span),
                    None => continue,
                },
                Operand::Name { name, span, .. } if i.opcode == O::Cvta => (*name, *span),
                Operand::Imm(e) if i.opcode == O::Cvta => {
                    let base = match e {
                        Expr::Binary(_, a, _, _) => &**a,
                        other => other,
                    };
                    match base {
                        Expr::Sym(n, sp) => (*n, *sp),
                        _ => continue,
                    }
                }
                _ => continue,
            };
            let Some(Kind::Data(Some(var_space))) = self.lookup(name) else {
                continue;
            };
            let var_space = family(var_space);
            let atomic = matches!(i.opcode, O::Atom | O::Red);
            let ok = match space {
                Some(s) => s == var_space,
                None => match var_space {
                    Mod::Global | Mod::Shared => true,
                    Mod::Local => !atomic,
                    _ => false,
                },
            };
            if !ok {
                let what = space.map_or("a generic address".to_string(), |s| {
                    format!("the `{}` space", s.spelling())
                });
                diags.push(Diagnostic::new(
                    span,
                    format!(
                        "`{name}` is a `{}` variable, but `{}` accesses {what}",
                        var_space.spelling(),
                        super::instr::instr_name(i)
                    ),
                ));
            }
        }
    }

    /// A register inside an operand expression: ptxas takes exactly `%r + constant` (the
    /// address syntax without brackets) for an integer or bit-size register, and nothing else
    /// (`%r - 1`, `1 + %r`, `%r + %s`, `-%r` are syntax errors there).
    fn register_expr(&mut self, e: &Expr<'a>) {
        let is_reg = |this: &Self, name: &str| {
            matches!(
                this.scopes.iter().rev().find_map(|s| s.lookup(name)),
                Some(Kind::Reg(..) | Kind::Pred)
            )
        };
        let mut regs = Vec::new();
        e.each_name(&mut |name, span| {
            if is_reg(self, name) {
                regs.push((name, span));
            }
        });
        let Some(&(name, span)) = regs.first() else {
            return;
        };
        let shape_ok = matches!(e, Expr::Binary(BinOp::Add, a, b, _)
            if matches!(**a, Expr::Sym(n, _) if n == name)
                && regs.len() == 1
                && crate::syntax::consteval::eval(b).is_some());
        if !shape_ok {
            self.error(
                e.span(),
                format!("a register in an operand expression must be written `{name} + constant`"),
            );
            return;
        }
        let integer = match self.declared(name) {
            Some(super::types::Declared::Reg { ty, vector: None }) => {
                ty.is_int_type() || ty.is_bit_type()
            }
            _ => false,
        };
        if !integer {
            self.error(
                span,
                format!("`{name} + constant` needs an integer or bit-size register (ptxas fails on other registers)"),
            );
        }
    }

    fn use_name(&mut self, name: &str, span: Span) {
        if self.lookup(name).is_some() {
            return;
        }
        let msg = if name.starts_with('%') {
            format!("`{name}` is not declared; declare registers with `.reg` (e.g. `.reg .b32 %r<N>;`) before using them")
        } else {
            format!("`{name}` is not declared: no register, variable, parameter, function or label has this name here")
        };
        self.error(span, msg);
    }
}
