//! The canonical PTX printer behind `ptx2llvm fmt`. Output depends only on the AST (never on
//! spans or original spelling), so `print(parse(print(m))) == print(m)`; immediates are
//! printed in an exact form (floats as `0f`/`0d` bit patterns), and an instruction's modifiers
//! in the order of its form in `ptx.isa` (`add.f32.rn` prints as `add.rn.f32`).

use std::fmt::Write;

use super::ast::*;

pub fn print_module(m: &Module) -> String {
    let mut p = Printer {
        out: String::with_capacity(4096),
        indent: 0,
    };
    p.module(m);
    p.out
}

struct Printer {
    out: String,
    indent: usize,
}

fn linkage(l: Linkage) -> &'static str {
    match l {
        Linkage::None => "",
        Linkage::Visible => ".visible ",
        Linkage::Extern => ".extern ",
        Linkage::Weak => ".weak ",
        Linkage::Common => ".common ",
    }
}

fn dims(out: &mut String, dims: &[Option<u64>]) {
    for d in dims {
        match d {
            Some(n) => {
                let _ = write!(out, "[{n}]");
            }
            None => out.push_str("[]"),
        }
    }
}

fn list(out: &mut String, items: &[&str], sep: &str) {
    for (i, s) in items.iter().enumerate() {
        if i > 0 {
            out.push_str(sep);
        }
        out.push_str(s);
    }
}

impl Printer {
    fn line_start(&mut self) {
        for _ in 0..self.indent {
            self.out.push('\t');
        }
    }

    fn module(&mut self, m: &Module) {
        let _ = writeln!(self.out, ".version {}.{}", m.version.0, m.version.1);
        self.out.push_str(".target ");
        list(&mut self.out, &m.target, ", ");
        self.out.push('\n');
        if let Some(a) = m.address_size {
            let _ = writeln!(self.out, ".address_size {a}");
        }
        for item in &m.items {
            self.out.push('\n');
            self.item(item);
        }
    }

    fn item(&mut self, item: &Item) {
        match item {
            Item::Function(f) => self.function(f),
            Item::Var(v) => {
                self.var(v);
                self.out.push('\n');
            }
            Item::File {
                index,
                name,
                timestamp,
                size,
                ..
            } => {
                let _ = write!(self.out, ".file {index} {name}");
                if let (Some(t), Some(s)) = (timestamp, size) {
                    let _ = write!(self.out, ", {t}, {s}");
                }
                self.out.push('\n');
            }
            Item::Section(s) => self.section(s),
            Item::Alias { alias, aliasee, .. } => {
                let _ = writeln!(self.out, ".alias {alias}, {aliasee};");
            }
            Item::Pragma(strings, _) => {
                self.out.push_str(".pragma ");
                list(&mut self.out, strings, ", ");
                self.out.push_str(";\n");
            }
        }
    }

    fn section(&mut self, s: &Section) {
        let _ = writeln!(self.out, ".section {}\n{{", s.name);
        for e in &s.entries {
            match e {
                SectionEntry::Label(l, _) => {
                    let _ = writeln!(self.out, "{l}:");
                }
                SectionEntry::Bytes(bytes, _) => {
                    for chunk in bytes.chunks(16) {
                        self.out.push_str("\t.b8 ");
                        for (i, b) in chunk.iter().enumerate() {
                            if i > 0 {
                                self.out.push_str(", ");
                            }
                            let _ = write!(self.out, "{b}");
                        }
                        self.out.push('\n');
                    }
                }
                SectionEntry::Data { width, values, .. } => {
                    let _ = write!(self.out, "\t{} ", width.spelling());
                    for (i, v) in values.iter().enumerate() {
                        if i > 0 {
                            self.out.push_str(", ");
                        }
                        self.expr(v);
                    }
                    self.out.push('\n');
                }
            }
        }
        self.out.push_str("}\n");
    }

    fn param(&mut self, p: &Param) {
        self.out.push_str(p.space.spelling());
        if let Some(a) = p.align {
            let _ = write!(self.out, " .align {a}");
        }
        if let Some(v) = p.vector {
            let _ = write!(self.out, " .v{v}");
        }
        let _ = write!(self.out, " {}", p.ty.spelling());
        if let Some(ptr) = p.ptr {
            self.out.push_str(" .ptr");
            if let Some(s) = ptr.space {
                let _ = write!(self.out, " {}", s.spelling());
            }
            if let Some(a) = ptr.align {
                let _ = write!(self.out, " .align {a}");
            }
        }
        let _ = write!(self.out, " {}", p.name);
        dims(&mut self.out, &p.array);
    }

    fn params(&mut self, ps: &[Param], multiline: bool) {
        self.out.push('(');
        for (i, p) in ps.iter().enumerate() {
            if i > 0 {
                self.out.push(',');
            }
            if multiline {
                self.out.push_str("\n\t");
            } else if i > 0 {
                self.out.push(' ');
            }
            self.param(p);
        }
        if multiline && !ps.is_empty() {
            self.out.push('\n');
        }
        self.out.push(')');
    }

    fn function(&mut self, f: &Function) {
        self.out.push_str(linkage(f.linkage));
        self.out.push_str(match f.kind {
            FnKind::Entry => ".entry ",
            FnKind::Func => ".func ",
        });
        if f.kind == FnKind::Func && !f.rets.is_empty() {
            self.params(&f.rets, false);
            self.out.push(' ');
        }
        self.out.push_str(f.name);
        // `.func name` with no parameter list and `.func name()` mean the same.
        if !f.params.is_empty() || f.kind == FnKind::Entry {
            self.params(&f.params, true);
        }
        self.out.push('\n');
        for d in &f.directives {
            self.fn_directive(d);
        }
        match &f.body {
            None => self.out.push_str(";\n"),
            Some(b) => {
                self.block(b);
                self.out.push('\n');
            }
        }
    }

    fn fn_directive(&mut self, d: &FnDirective) {
        let nums = |out: &mut String, name: &str, v: &[u32]| {
            let _ = write!(out, "{name} ");
            for (i, n) in v.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                let _ = write!(out, "{n}");
            }
            out.push('\n');
        };
        match d {
            FnDirective::MaxNTid(v, _) => nums(&mut self.out, ".maxntid", v),
            FnDirective::ReqNTid(v, _) => nums(&mut self.out, ".reqntid", v),
            FnDirective::ReqNCtaPerCluster(v, _) => nums(&mut self.out, ".reqnctapercluster", v),
            FnDirective::MinNCtaPerSm(n, _) => nums(&mut self.out, ".minnctapersm", &[*n]),
            FnDirective::MaxNCtaPerSm(n, _) => nums(&mut self.out, ".maxnctapersm", &[*n]),
            FnDirective::MaxNReg(n, _) => nums(&mut self.out, ".maxnreg", &[*n]),
            FnDirective::MaxClusterRank(n, _) => nums(&mut self.out, ".maxclusterrank", &[*n]),
            FnDirective::ExplicitCluster(_) => self.out.push_str(".explicitcluster\n"),
            FnDirective::BlocksAreClusters(_) => self.out.push_str(".blocksareclusters\n"),
            FnDirective::NoReturn(_) => self.out.push_str(".noreturn\n"),
            FnDirective::AbiPreserve { control, value, .. } => {
                let name = if *control {
                    ".abi_preserve_control"
                } else {
                    ".abi_preserve"
                };
                nums(&mut self.out, name, &[*value])
            }
            FnDirective::Pragma(s, _) => {
                self.out.push_str(".pragma ");
                list(&mut self.out, s, ", ");
                self.out.push_str(";\n");
            }
        }
    }

    fn block(&mut self, b: &Block) {
        self.line_start();
        self.out.push_str("{\n");
        self.indent += 1;
        for s in &b.stmts {
            self.statement(s);
        }
        self.indent -= 1;
        self.line_start();
        self.out.push('}');
    }

    fn statement(&mut self, s: &Statement) {
        match s {
            Statement::Label(l, _) => {
                let _ = writeln!(self.out, "{l}:");
            }
            Statement::Instr(i) => {
                self.line_start();
                self.instruction(i);
                self.out.push('\n');
            }
            Statement::Var(v) => {
                self.line_start();
                self.var(v);
                self.out.push('\n');
            }
            Statement::Block(b) => {
                self.block(b);
                self.out.push('\n');
            }
            Statement::Loc(l) => {
                self.line_start();
                let _ = write!(self.out, ".loc {} {} {}", l.file, l.line, l.col);
                if let Some(i) = &l.inlined {
                    let _ = write!(self.out, ", function_name {}", i.function_name);
                    if i.offset != 0 {
                        let _ = write!(self.out, "+{}", i.offset);
                    }
                    let _ = write!(self.out, ", inlined_at {} {} {}", i.file, i.line, i.col);
                }
                self.out.push('\n');
            }
            Statement::Pragma(strings, _) => {
                self.line_start();
                self.out.push_str(".pragma ");
                list(&mut self.out, strings, ", ");
                self.out.push_str(";\n");
            }
            Statement::CallPrototype(c) => {
                let _ = write!(self.out, "{}: .callprototype ", c.name);
                if !c.rets.is_empty() {
                    self.params(&c.rets, false);
                    self.out.push(' ');
                }
                self.out.push('_');
                if !c.params.is_empty() {
                    self.out.push(' ');
                    self.params(&c.params, false);
                }
                if c.noreturn {
                    self.out.push_str(" .noreturn");
                }
                for (control, v) in &c.abi_preserve {
                    let name = if *control {
                        ".abi_preserve_control"
                    } else {
                        ".abi_preserve"
                    };
                    let _ = write!(self.out, " {name} {v}");
                }
                self.out.push_str(";\n");
            }
            Statement::CallTargets { name, targets, .. } => {
                let _ = write!(self.out, "{name}: .calltargets ");
                list(&mut self.out, targets, ", ");
                self.out.push_str(";\n");
            }
            Statement::BranchTargets { name, targets, .. } => {
                let _ = write!(self.out, "{name}: .branchtargets ");
                list(&mut self.out, targets, ", ");
                self.out.push_str(";\n");
            }
        }
    }

    fn var(&mut self, v: &VarDecl) {
        self.out.push_str(linkage(v.linkage));
        self.out.push_str(v.space.spelling());
        for a in &v.attributes {
            match a {
                Attribute::Managed => self.out.push_str(" .attribute(.managed)"),
                Attribute::Unified(hi, lo) => {
                    let _ = write!(self.out, " .attribute(.unified({hi}, {lo}))");
                }
            }
        }
        if let Some(a) = v.align {
            let _ = write!(self.out, " .align {a}");
        }
        if let Some(n) = v.vector {
            let _ = write!(self.out, " .v{n}");
        }
        let _ = write!(self.out, " {}", v.ty.spelling());
        for (i, n) in v.names.iter().enumerate() {
            self.out.push_str(if i > 0 { ", " } else { " " });
            self.out.push_str(n.name);
            if let Some(c) = n.count {
                let _ = write!(self.out, "<{c}>");
            }
            dims(&mut self.out, &n.array);
            if let Some(init) = &n.init {
                self.out.push_str(" = ");
                self.init(init);
            }
        }
        self.out.push(';');
    }

    fn init(&mut self, i: &Initializer) {
        match i {
            Initializer::Expr(e) => self.expr(e),
            Initializer::Field(name, value, _) => {
                let _ = write!(self.out, "{name} = {value}");
            }
            Initializer::List(items, _) => {
                self.out.push('{');
                for (k, it) in items.iter().enumerate() {
                    if k > 0 {
                        self.out.push_str(", ");
                    }
                    self.init(it);
                }
                self.out.push('}');
            }
        }
    }

    fn instruction(&mut self, i: &Instruction) {
        if let Some(g) = &i.guard {
            let _ = write!(self.out, "@{}{} ", if g.negated { "!" } else { "" }, g.pred);
        }
        self.out.push_str(i.opcode.spelling());
        let n_post = i.post_mods().count();
        // Modifiers in the manual's order (the decoder's), whatever order the source used.
        let decoded = crate::isa::decode(i).ok();
        let mods = decoded.as_ref().map_or(&i.mods[..], |d| &d.mods[..]);
        for m in &mods[..mods.len() - n_post] {
            self.out.push_str(m.spelling());
        }
        for (k, op) in i.operands.iter().enumerate() {
            self.out.push_str(if k == 0 { " " } else { ", " });
            self.operand(op);
            for (_, m) in i.post_mods().filter(|&(at, _)| at == k) {
                self.out.push_str(m.spelling());
            }
        }
        self.out.push(';');
    }

    fn operand(&mut self, op: &Operand) {
        match op {
            Operand::Name {
                name,
                comp,
                negated,
                ..
            } => {
                if *negated {
                    self.out.push('!');
                }
                self.out.push_str(name);
                if let Some(c) = comp {
                    self.out.push_str(match c {
                        Component::X => ".x",
                        Component::Y => ".y",
                        Component::Z => ".z",
                        Component::W => ".w",
                    });
                }
            }
            Operand::Imm(e) => self.expr(e),
            Operand::Addr(a) => {
                self.out.push('[');
                match a.base {
                    Some(b) => {
                        self.out.push_str(b);
                        // `[a+-4]` for negative offsets: ptxas rejects `[a-4]`.
                        if a.offset != 0 {
                            let _ = write!(self.out, "+{}", a.offset);
                        }
                    }
                    None => {
                        let _ = write!(self.out, "{}", a.offset);
                    }
                }
                self.out.push(']');
            }
            Operand::AddrList(items, _) => self.seq('[', items, ']'),
            Operand::Vec(items, _) => self.seq('{', items, '}'),
            Operand::List(items, _) => self.seq('(', items, ')'),
            Operand::Pair(a, b, _) => {
                self.operand(a);
                self.out.push('|');
                self.operand(b);
            }
            Operand::Sink(_) => self.out.push('_'),
        }
    }

    fn seq(&mut self, open: char, items: &[Operand], close: char) {
        self.out.push(open);
        for (k, it) in items.iter().enumerate() {
            if k > 0 {
                self.out.push_str(", ");
            }
            self.operand(it);
        }
        self.out.push(close);
    }

    fn expr(&mut self, e: &Expr) {
        match e {
            Expr::Int {
                value, unsigned, ..
            } => {
                if *unsigned {
                    let _ = write!(self.out, "{value}U");
                } else {
                    let _ = write!(self.out, "{}", *value as i64);
                }
            }
            Expr::F32(bits, _) => {
                let _ = write!(self.out, "0f{bits:08X}");
            }
            Expr::F64(bits, _) => {
                let _ = write!(self.out, "0d{bits:016X}");
            }
            Expr::Sym(s, _) => self.out.push_str(s),
            Expr::Generic(s, _) => {
                let _ = write!(self.out, "generic({s})");
            }
            Expr::Mask(m, e, _) => {
                let _ = write!(self.out, "0x{m:x}(");
                self.expr(e);
                self.out.push(')');
            }
            Expr::Unary(op, e, _) => {
                self.out.push_str(match op {
                    UnOp::Neg => "-",
                    UnOp::Plus => "+",
                    UnOp::Not => "~",
                    UnOp::LogNot => "!",
                });
                self.out.push('(');
                self.expr(e);
                self.out.push(')');
            }
            Expr::Binary(op, a, b, _) => {
                self.out.push('(');
                self.expr(a);
                self.out.push_str(match op {
                    BinOp::Mul => " * ",
                    BinOp::Div => " / ",
                    BinOp::Rem => " % ",
                    BinOp::Add => " + ",
                    BinOp::Sub => " - ",
                    BinOp::Shl => " << ",
                    BinOp::Shr => " >> ",
                    BinOp::Lt => " < ",
                    BinOp::Gt => " > ",
                    BinOp::Le => " <= ",
                    BinOp::Ge => " >= ",
                    BinOp::Eq => " == ",
                    BinOp::Ne => " != ",
                    BinOp::And => " & ",
                    BinOp::Xor => " ^ ",
                    BinOp::Or => " | ",
                    BinOp::LogAnd => " && ",
                    BinOp::LogOr => " || ",
                });
                self.expr(b);
                self.out.push(')');
            }
            Expr::Cond(c, a, b, _) => {
                self.out.push('(');
                self.expr(c);
                self.out.push_str(" ? ");
                self.expr(a);
                self.out.push_str(" : ");
                self.expr(b);
                self.out.push(')');
            }
            Expr::Cast(ty, e, _) => {
                let _ = write!(self.out, "({})(", ty.spelling());
                self.expr(e);
                self.out.push(')');
            }
        }
    }
}
