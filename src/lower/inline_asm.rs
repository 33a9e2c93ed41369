//! The inline-assembly fallback: an instruction LLVM has no equivalent for is printed back as
//! PTX text with register operands replaced by `$N` placeholders (constraints "r"/"l"/"h"/"f"/
//! "d"/"q" by register type) and emitted as LLVM inline assembly, so that the exact semantics
//! survive while LLVM still optimizes the code around it. Predicate operands travel as 32-bit
//! integers and are converted inside the asm string with `setp`/`selp` in a `{ }` scope.
//! Destination registers are passed read-write (an output tied to an input), which is right
//! whether the instruction reads its destination (`wgmma` accumulators) or not.

use std::fmt::Write as _;

use super::*;

/// The instruction's PTX text (for messages).
pub fn spell(i: &Instruction) -> String {
    let mut s = String::from(i.opcode.spelling());
    for m in &i.mods {
        s.push_str(m.spelling());
    }
    s
}

/// Opcodes whose operands are all sources.
fn no_dest(op: &str, mods: &[Mod]) -> bool {
    matches!(
        op,
        "st" | "red"
            | "sust"
            | "sured"
            | "prefetch"
            | "prefetchu"
            | "cp"
            | "fence"
            | "membar"
            | "nanosleep"
            | "griddepcontrol"
            | "trap"
            | "stmatrix"
            | "pmevent"
            | "bra"
            | "brkpt"
            | "setmaxnreg"
            | "discard"
            | "applypriority"
            | "tensormap"
            | "st_async"
            | "red_async"
            | "multimem"
    ) && !(op == "multimem" && mods.contains(&Mod::LdReduce))
        // `bar.red`/`barrier.red` write their first operand; the other barriers write nothing.
        || matches!(op, "bar" | "barrier") && !mods.contains(&Mod::Red)
        || op == "wgmma" && !mods.contains(&Mod::MmaAsync)
        || op == "tcgen05" && !mods.contains(&Mod::Ld)
        || op == "mbarrier"
            && (mods.contains(&Mod::Init)
                || mods.contains(&Mod::Inval)
                || mods.contains(&Mod::ExpectTx)
                || mods.contains(&Mod::CompleteTx))
}

#[allow(clippy::type_complexity)]
struct Asm<'c> {
    text: String,
    outs: Vec<(
        String,
        BasicTypeEnum<'c>,
        Option<(&'static str, IntValue<'c>)>,
    )>,
    ins: Vec<(String, BasicValueEnum<'c>)>,
    /// Output operand destinations (register names) with their storage types.
    dests: Vec<(String, BasicTypeEnum<'c>, bool)>,
    preds_in: Vec<(usize, String, bool)>,
    preds_out: Vec<(usize, String)>,
    npred: usize,
}

fn constraint<'c>(l: &Lowerer<'c, '_>, t: BasicTypeEnum<'c>) -> &'static str {
    match l.bits_of(t) {
        1 => "r",
        8 | 16 => "h",
        32 if t.is_float_type() => "f",
        64 if t.is_float_type() => "d",
        32 => "r",
        64 => "l",
        _ => "q",
    }
}

impl<'c> Asm<'c> {
    fn expr(&mut self, e: &Expr) {
        match e {
            Expr::Int {
                value, unsigned, ..
            } => {
                if *unsigned {
                    let _ = write!(self.text, "{value}U");
                } else {
                    let _ = write!(self.text, "{}", *value as i64);
                }
            }
            Expr::F32(b, _) => {
                let _ = write!(self.text, "0f{b:08X}");
            }
            Expr::F64(b, _) => {
                let _ = write!(self.text, "0d{b:016X}");
            }
            Expr::Sym(s, _) => self.text.push_str(&s.replace('$', "$$")),
            _ => match crate::syntax::consteval::eval(e) {
                Some(c) => {
                    let _ = write!(self.text, "{}", c.bits as i64);
                }
                None => self.text.push('0'),
            },
        }
    }
}

pub fn lower<'c, 'a>(
    l: &Lowerer<'c, 'a>,
    fs: &mut FnState<'c, 'a>,
    ins: &Ins<'_, 'a>,
) -> Result<(), Error> {
    let i = ins.i;
    let mut a = Asm {
        text: String::new(),
        outs: vec![],
        ins: vec![],
        dests: vec![],
        preds_in: vec![],
        preds_out: vec![],
        npred: 0,
    };
    a.text.push_str(i.opcode.spelling());
    // Modifiers written after an operand (`[a].unified`) are the last of `mods`: they are
    // printed after their operand below, where ptxas expects them.
    let n_post = i.post_mods().count();
    for m in &i.mods[..i.mods.len() - n_post] {
        a.text.push_str(m.spelling());
    }
    let ndest = if no_dest(ins.op, &ins.d.mods)
        || matches!(
            i.operands.first(),
            Some(Operand::Addr(_) | Operand::AddrList(..))
        ) {
        0
    } else {
        1
    };
    // First pass: outputs (so that their numbers come first).
    let mut body = String::new();
    std::mem::swap(&mut body, &mut a.text);
    for (k, op) in i.operands.iter().enumerate() {
        body.push_str(if k == 0 { " " } else { ", " });
        let mut piece = String::new();
        std::mem::swap(&mut piece, &mut a.text);
        operand(l, fs, &mut a, op, k < ndest)?;
        std::mem::swap(&mut piece, &mut a.text);
        body.push_str(&piece);
        for (_, m) in i.post_mods().filter(|&(j, _)| j == k) {
            body.push_str(m.spelling());
        }
    }
    body.push(';');
    // Numbering: outputs are $0..$n-1, inputs (including tied) follow; placeholders were
    // written as `$o<k>`/`$i<k>` and are renumbered now.
    let nout = a.outs.len();
    let mut text = String::new();
    let npred = a.npred;
    if npred > 0 {
        text.push_str("{ .reg .pred ");
        for p in 0..npred {
            let _ = write!(text, "{}%inl_p{p}", if p > 0 { ", " } else { "" });
        }
        text.push_str("; ");
        for (k, name, _) in &a.preds_in {
            let _ = write!(text, "setp.ne.b32 %inl_p{k}, {name}, 0; ");
        }
    }
    text.push_str(&body);
    if npred > 0 {
        for (k, name) in &a.preds_out {
            let _ = write!(text, " selp.u32 {name}, 1, 0, %inl_p{k};");
        }
        text.push_str(" }");
    }
    // Renumber.
    let mut out = String::with_capacity(text.len());
    let bytes = text.as_bytes();
    let mut p = 0;
    while p < bytes.len() {
        if bytes[p] == b'$' && p + 1 < bytes.len() && (bytes[p + 1] == b'o' || bytes[p + 1] == b'i')
        {
            let kind = bytes[p + 1];
            let mut q = p + 2;
            while q < bytes.len() && bytes[q].is_ascii_digit() {
                q += 1;
            }
            let n: usize = text[p + 2..q].parse().unwrap();
            let idx = if kind == b'o' { n } else { nout + n };
            let _ = write!(out, "${idx}");
            p = q;
        } else {
            out.push(bytes[p] as char);
            p += 1;
        }
    }
    // Constraints: outputs, then inputs; tied inputs name their output.
    let mut cons: Vec<String> = a.outs.iter().map(|(c, _, _)| format!("={c}")).collect();
    let mut args: Vec<BasicValueEnum> = Vec::new();
    for (c, v) in &a.ins {
        cons.push(c.clone());
        args.push(*v);
    }
    cons.push("~{memory}".into());
    let ret_ty: Option<BasicTypeEnum> = match nout {
        0 => None,
        1 => Some(a.outs[0].1),
        _ => {
            let tys: Vec<BasicTypeEnum> = a.outs.iter().map(|o| o.1).collect();
            Some(l.ctx.struct_type(&tys, false).into())
        }
    };
    let r = l.inline_asm(ret_ty, &args, &out, &cons.join(","), true);
    for (k, (name, st, is_pred)) in a.dests.iter().enumerate() {
        let v = if nout == 1 {
            r.unwrap()
        } else {
            l.b.build_extract_value(r.unwrap().into_struct_value(), k as u32, "")
                .unwrap()
        };
        let v = if *is_pred {
            l.coerce(v, l.i1().into(), false)
        } else {
            v
        };
        let (ptr, rst, _) = l.reg(fs, name).unwrap();
        let v = l.coerce(v, rst, false);
        let _ = st;
        l.b.build_store(ptr, v).unwrap();
    }
    Ok(())
}

fn operand<'c, 'a>(
    l: &Lowerer<'c, 'a>,
    fs: &mut FnState<'c, 'a>,
    a: &mut Asm<'c>,
    op: &Operand<'a>,
    is_out: bool,
) -> Result<(), Error> {
    match op {
        Operand::Name {
            name,
            comp,
            negated,
            span,
        } => {
            if let Some((ptr, st, _)) = l.reg(fs, name).filter(|_| comp.is_none()) {
                let is_pred = l.bits_of(st) == 1;
                let ty: BasicTypeEnum = if is_pred {
                    l.i32().into()
                } else if st == l.ctx.f16_type().into()
                    || st == l.ctx.bf16_type().into()
                    || (st.is_int_type() && l.bits_of(st) == 8)
                {
                    // 16-bit floats and bytes travel in 16-bit (`h`) registers.
                    l.ctx.i16_type().into()
                } else {
                    st
                };
                let c = constraint(l, ty);
                let cur = l.b.build_load(st, ptr, "").unwrap();
                let cur = l.coerce(cur, ty, false);
                if is_out {
                    let k = a.outs.len();
                    a.outs.push((c.to_string(), ty, None));
                    a.dests.push((name.to_string(), ty, is_pred));
                    // Tied input: the register's current value.
                    let t = a.ins.len();
                    a.ins.push((format!("{k}"), cur));
                    let _ = t;
                    if is_pred {
                        let pk = a.npred;
                        a.npred += 1;
                        a.preds_out.push((pk, format!("$o{k}")));
                        let _ = write!(a.text, "%inl_p{pk}");
                    } else {
                        let _ = write!(a.text, "$o{k}");
                    }
                } else {
                    let k = a.ins.len();
                    a.ins.push((c.to_string(), cur));
                    if is_pred {
                        let pk = a.npred;
                        a.npred += 1;
                        a.preds_in.push((pk, format!("$i{k}"), *negated));
                        let _ = write!(a.text, "{}%inl_p{pk}", if *negated { "!" } else { "" });
                    } else {
                        let _ = write!(a.text, "$i{k}");
                    }
                }
                return Ok(());
            }
            if l.sym_space(fs, name).is_some() && !name.starts_with('%') {
                // A variable or function: pass its address.
                let p = l.sym_ptr(fs, name).unwrap();
                let v = l.b.build_ptr_to_int(p, l.i64(), "").unwrap();
                let k = a.ins.len();
                a.ins.push(("l".into(), v.into()));
                let _ = write!(a.text, "$i{k}");
                return Ok(());
            }
            if name.starts_with('%') && !is_sreg(name) {
                return Err(invalid(*span, format!("unknown register `{name}`")));
            }
            // Special registers and labels are written as they are.
            if *negated {
                a.text.push('!');
            }
            a.text.push_str(&name.replace('$', "$$"));
            if let Some(c) = comp {
                a.text.push_str(match c {
                    ast::Component::X => ".x",
                    ast::Component::Y => ".y",
                    ast::Component::Z => ".z",
                    ast::Component::W => ".w",
                });
            }
        }
        Operand::Imm(e) => {
            if crate::syntax::consteval::eval(e).is_none()
                && !matches!(e, Expr::F32(..) | Expr::F64(..))
            {
                let v = l.sym_expr(fs, e)?;
                let k = a.ins.len();
                a.ins.push(("l".into(), v.into()));
                let _ = write!(a.text, "$i{k}");
            } else {
                a.expr(e);
            }
        }
        Operand::Addr(ad) => {
            a.text.push('[');
            match ad.base {
                Some(b) => {
                    let base = Operand::Name {
                        name: b,
                        comp: None,
                        negated: false,
                        span: ad.span,
                    };
                    operand(l, fs, a, &base, false)?;
                    if ad.offset != 0 {
                        let _ = write!(a.text, "+{}", ad.offset);
                    }
                }
                None => {
                    let _ = write!(a.text, "{}", ad.offset);
                }
            }
            a.text.push(']');
        }
        Operand::AddrList(items, _) => {
            a.text.push('[');
            for (k, it) in items.iter().enumerate() {
                if k > 0 {
                    a.text.push_str(", ");
                }
                operand(l, fs, a, it, false)?;
            }
            a.text.push(']');
        }
        Operand::Vec(items, _) | Operand::List(items, _) => {
            let (o, c) = if matches!(op, Operand::Vec(..)) {
                ('{', '}')
            } else {
                ('(', ')')
            };
            a.text.push(o);
            for (k, it) in items.iter().enumerate() {
                if k > 0 {
                    a.text.push_str(", ");
                }
                operand(l, fs, a, it, is_out)?;
            }
            a.text.push(c);
        }
        Operand::Pair(x, y, _) => {
            operand(l, fs, a, x, is_out)?;
            a.text.push('|');
            operand(l, fs, a, y, is_out)?;
        }
        Operand::Sink(_) => a.text.push('_'),
    }
    Ok(())
}
