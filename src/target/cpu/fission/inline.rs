//! Inlining of device-function calls that reach a stop, so that a kernel calling a
//! `__noinline__` helper with `__syncthreads()` or `__shfl_down_sync` can still run as thread
//! loops (the analysis only follows stops in the kernel's own body).
//!
//! A call site must be a call sequence as compilers write it: a `{ }` block declaring the
//! `.param` scalars, `st.param` of each argument, one `call`, `ld.param` of each result. The
//! callee must be a `.func` with scalar `.param` parameters and results, `.reg` declarations
//! and function-scope `.shared` declarations (moved to the kernel's scope, once) only, no
//! nested blocks and no calls. Each inlined copy renames the callee's registers
//! (`%r5` -> `%inl0_r5`, declared in the kernel's top-level block) and labels, passes the
//! arguments and results through fresh registers with `mov`, and turns `ret` into a branch to
//! the end of the copy. Anything else leaves the kernel as it was (on coroutines).

use std::collections::{HashMap, HashSet};

use smallvec::SmallVec;

use super::Scratch;
use crate::isa::{lookup_mod, lookup_opcode};
use crate::syntax::ast::{
    Block, DeclName, Function, Instruction, Item, Module, Operand, PostOps, Statement, VarDecl,
};

/// The kernel `f` with its stop-reaching calls inlined, when every such call can be (see the
/// module); `None` otherwise.
pub fn inline_stop_calls<'a>(
    m: &'a Module<'a>,
    f: &'a Function<'a>,
    scratch: &'a Scratch<'a>,
) -> Option<&'a Function<'a>> {
    let fns: HashMap<&str, &Function<'a>> = m
        .items
        .iter()
        .filter_map(|i| match i {
            Item::Function(g) if g.body.is_some() => Some((g.name, &**g)),
            _ => None,
        })
        .collect();
    let body = f.body.as_ref()?;
    let mut out: Vec<Statement<'a>> = Vec::new();
    let mut decls: Vec<Statement<'a>> = Vec::new();
    let mut n = 0u32;
    for st in &body.stmts {
        let Statement::Block(blk) = st else {
            out.push(st.clone());
            continue;
        };
        let Some((g, call)) = call_of(blk, &fns) else {
            out.push(st.clone());
            continue;
        };
        if !reaches_stop(g) {
            out.push(st.clone());
            continue;
        }
        inline_one(blk, call, g, n, scratch, &mut decls, &mut out)?;
        n += 1;
    }
    if n == 0 {
        return None;
    }
    let mut g = f.clone();
    decls.extend(out);
    g.body = Some(Block {
        stmts: decls,
        span: body.span,
    });
    Some(scratch.function(g))
}

/// Whether an instruction of `blk` names `name` in an operand.
fn block_mentions(blk: &Block, name: &str) -> bool {
    blk.stmts.iter().any(|s| match s {
        Statement::Instr(i) => i.operands.iter().any(|o| {
            let mut names = Vec::new();
            super::analysis::names_in(o, &mut names);
            names.contains(&name)
        }),
        _ => false,
    })
}

/// The callee and the `call` of a call-sequence block.
fn call_of<'x, 'a>(
    blk: &'x Block<'a>,
    fns: &HashMap<&str, &'x Function<'a>>,
) -> Option<(&'x Function<'a>, &'x Instruction<'a>)> {
    let calls: Vec<&Instruction> = blk
        .stmts
        .iter()
        .filter_map(|s| match s {
            Statement::Instr(i) if i.opcode.spelling() == "call" => Some(i),
            _ => None,
        })
        .collect();
    let [call] = calls.as_slice() else {
        return None;
    };
    let name = super::analysis::callee_name(call)?;
    Some((*fns.get(name)?, call))
}

/// Whether `g`'s own body has a barrier or warp operation.
fn reaches_stop(g: &Function) -> bool {
    g.body.as_ref().is_some_and(|b| {
        b.stmts.iter().any(
            |s| matches!(s, Statement::Instr(i) if super::analysis::is_stop(i.opcode.spelling())),
        )
    })
}

fn mk<'a>(
    op: &str,
    mods: &[&str],
    operands: Vec<Operand<'a>>,
    like: &Instruction<'a>,
) -> Option<Instruction<'a>> {
    Some(Instruction {
        guard: None,
        opcode: lookup_opcode(op)?,
        mods: mods
            .iter()
            .map(|m| lookup_mod(m))
            .collect::<Option<SmallVec<_>>>()?,
        operands: operands.into_iter().collect(),
        post_ops: PostOps([u8::MAX; crate::syntax::ast::MAX_POST_MODS]),
        span: like.span,
        op_span: like.op_span,
        id: crate::syntax::ast::InstrId::SYNTHETIC,
    })
}

fn name_op<'a>(name: &'a str, like: &Instruction<'a>) -> Operand<'a> {
    Operand::Name {
        name,
        comp: None,
        negated: false,
        span: like.span,
    }
}

/// The type modifier of a `ld.param`/`st.param` of a scalar (`None` for vectors and others).
fn scalar_type(i: &Instruction) -> Option<&'static str> {
    let mut ty = None;
    for m in &i.mods {
        let s = m.spelling();
        match s {
            ".param" => {}
            ".v2" | ".v4" | ".v8" => return None,
            _ if crate::lower::Ty::from_spelling(s).is_some() => ty = Some(s),
            _ => return None,
        }
    }
    ty
}

/// The register type holding a `.param` scalar of type `t` (8-bit values live in 16-bit
/// registers).
fn reg_type(t: &'static str) -> &'static str {
    match t {
        ".b8" => ".b16",
        ".u8" => ".u16",
        ".s8" => ".s16",
        t => t,
    }
}

fn reg_decl<'a>(ty: &str, name: &'a str, like: &Instruction<'a>) -> Option<Statement<'a>> {
    Some(Statement::Var(VarDecl {
        linkage: crate::syntax::ast::Linkage::None,
        space: lookup_mod(".reg")?,
        align: None,
        vector: None,
        ty: lookup_mod(ty)?,
        attributes: Vec::new(),
        names: vec![DeclName {
            name,
            count: None,
            array: SmallVec::new(),
            init: None,
            span: like.span,
        }],
        span: like.span,
    }))
}

/// Inlines `call` (in call-sequence `blk`) of `g` as copy `n`: declarations go to `decls`, the
/// code to `out`. `None` when the call or the callee has a shape this does not handle.
fn inline_one<'a>(
    blk: &Block<'a>,
    call: &Instruction<'a>,
    g: &Function<'a>,
    n: u32,
    scratch: &'a Scratch<'a>,
    decls: &mut Vec<Statement<'a>>,
    out: &mut Vec<Statement<'a>>,
) -> Option<()> {
    if call.guard.is_some() {
        return None;
    }
    // Actual argument and result `.param` names, positionally.
    let lists: Vec<Vec<&'a str>> = call
        .operands
        .iter()
        .filter_map(|o| match o {
            Operand::List(v, _) => Some(
                v.iter()
                    .map(|e| match e {
                        Operand::Name { name, .. } => Some(*name),
                        _ => None,
                    })
                    .collect::<Option<Vec<_>>>(),
            ),
            _ => None,
        })
        .collect::<Option<Vec<_>>>()?;
    let (rets, args) = match (g.rets.is_empty(), lists.as_slice()) {
        (true, []) => (Vec::new(), Vec::new()),
        (true, [a]) => (Vec::new(), a.clone()),
        (false, [r]) => (r.clone(), Vec::new()),
        (false, [r, a]) => (r.clone(), a.clone()),
        _ => return None,
    };
    if args.len() != g.params.len() || rets.len() != g.rets.len() {
        return None;
    }
    let scalar = |p: &crate::syntax::ast::Param| {
        p.space.spelling() == ".param" && p.vector.is_none() && p.array.is_empty()
    };
    if !g.params.iter().chain(&g.rets).all(scalar) {
        return None;
    }
    let pre =
        |s: &str| -> &'a str { scratch.name(format!("%inl{n}_{}", s.trim_start_matches('%'))) };
    // Argument and result k travel in fresh registers `%inl{n}_argk` / `%inl{n}_retk`, found
    // by the caller's `.param` names (`actual`) and by the callee's (`formal`).
    let mut actual: [HashMap<&str, &'a str>; 2] = Default::default();
    let mut formal: [HashMap<&str, &'a str>; 2] = Default::default();
    for (w, (what, formals, actuals)) in [("arg", &g.params, &args), ("ret", &g.rets, &rets)]
        .into_iter()
        .enumerate()
    {
        for (k, (p, a)) in formals.iter().zip(actuals).enumerate() {
            let ty = p.ty.spelling();
            crate::lower::Ty::from_spelling(ty)?;
            let r = scratch.name(format!("%inl{n}_{what}{k}"));
            decls.push(reg_decl(reg_type(ty), r, call)?);
            actual[w].insert(*a, r);
            formal[w].insert(p.name, r);
        }
    }
    let [arg_reg, ret_reg] = actual;
    let [formal_arg, formal_ret] = formal;
    // 1. The caller's st.param of each argument.
    let mut after: Vec<Statement<'a>> = Vec::new();
    let mut stored = HashSet::new();
    for s in &blk.stmts {
        match s {
            Statement::Var(v) if v.space.spelling() == ".param" => {}
            // NVRTC 13 declares a `.reg .b32 temp_param_reg;` in every call sequence and
            // leaves it unused.
            Statement::Var(v)
                if v.space.spelling() == ".reg"
                    && v.names.iter().all(|d| !block_mentions(blk, d.name)) => {}
            Statement::Instr(i) if std::ptr::eq(i, call) => {}
            Statement::Instr(i) if i.opcode.spelling() == "st" && i.guard.is_none() => {
                let t = scalar_type(i)?;
                let (Some(Operand::Addr(a)), Some(v)) = (i.operands.first(), i.operands.get(1))
                else {
                    return None;
                };
                let dst = *arg_reg.get(a.base?)?;
                if a.offset != 0 || !stored.insert(dst) {
                    return None;
                }
                out.push(Statement::Instr(mk(
                    "mov",
                    &[reg_type(t)],
                    vec![name_op(dst, i), v.clone()],
                    i,
                )?));
            }
            Statement::Instr(i) if i.opcode.spelling() == "ld" && i.guard.is_none() => {
                let t = scalar_type(i)?;
                let (Some(d), Some(Operand::Addr(a))) = (i.operands.first(), i.operands.get(1))
                else {
                    return None;
                };
                let src = *ret_reg.get(a.base?)?;
                if a.offset != 0 {
                    return None;
                }
                after.push(Statement::Instr(mk(
                    "mov",
                    &[reg_type(t)],
                    vec![d.clone(), name_op(src, i)],
                    i,
                )?));
            }
            _ => return None,
        }
    }
    if stored.len() != args.len() {
        return None;
    }
    // 2. The callee's body, renamed.
    let gb = g.body.as_ref()?;
    let mut regs: HashSet<&str> = HashSet::new();
    let mut ranges: HashMap<&str, u32> = HashMap::new();
    let mut labels: HashSet<&str> = HashSet::new();
    for s in &gb.stmts {
        match s {
            Statement::Var(v) if v.space.spelling() == ".reg" => {
                let mut v2 = v.clone();
                for d in v2.names.iter_mut() {
                    match d.count {
                        Some(c) => {
                            ranges.insert(d.name, c);
                        }
                        None => {
                            regs.insert(d.name);
                        }
                    }
                    d.name = pre(d.name);
                }
                decls.push(Statement::Var(v2));
            }
            // Function-scope shared memory (NVRTC demotes a kernel's `__shared__` array into
            // the one function using it) is one variable per CTA whichever call reaches it:
            // declared once in the kernel's own scope, under its name.
            Statement::Var(v) if v.space.spelling().starts_with(".shared") => {
                let declared = |st: &Statement| {
                    matches!(st, Statement::Var(w)
                        if w.names.iter().any(|d| v.names.iter().any(|e| e.name == d.name)))
                };
                if out.iter().any(declared) {
                    return None; // the kernel has a variable of that name itself
                }
                if !decls.iter().any(declared) {
                    decls.push(Statement::Var(v.clone()));
                }
            }
            Statement::Var(_) | Statement::Block(_) => return None,
            Statement::Label(l, _) => {
                labels.insert(l);
            }
            Statement::Instr(i) if i.opcode.spelling() == "call" => return None,
            _ => {}
        }
    }
    let is_reg = |name: &str| {
        regs.contains(name) || {
            let base = name.trim_end_matches(|c: char| c.is_ascii_digit());
            base.len() < name.len()
                && ranges
                    .get(base)
                    .is_some_and(|&c| name[base.len()..].parse::<u32>().is_ok_and(|k| k < c))
        }
    };
    let end = scratch.name(format!("inl{n}_end"));
    let label = |l: &str| -> &'a str { scratch.name(format!("inl{n}_{l}")) };
    let rename = |name: &'a str| -> &'a str {
        if is_reg(name) {
            pre(name)
        } else if labels.contains(name) {
            label(name)
        } else {
            name
        }
    };
    for s in &gb.stmts {
        match s {
            Statement::Var(_) => {}
            Statement::Label(l, sp) => out.push(Statement::Label(label(l), *sp)),
            Statement::Instr(i) => {
                let op = i.opcode.spelling();
                let mut i2 = i.clone();
                if let Some(gd) = i2.guard.as_mut() {
                    gd.pred = rename(gd.pred);
                }
                for o in i2.operands.iter_mut() {
                    rename_operand(o, &rename);
                }
                let param = i.mods.iter().any(|m| m.spelling() == ".param");
                if op == "ld" && param {
                    // ld.param reg, [formal] -> mov reg, %inl{n}_argk
                    let t = scalar_type(i)?;
                    let Some(Operand::Addr(a)) = i.operands.get(1) else {
                        return None;
                    };
                    let src = *formal_arg.get(a.base?)?;
                    if a.offset != 0 {
                        return None;
                    }
                    let mut m = mk(
                        "mov",
                        &[reg_type(t)],
                        vec![i2.operands[0].clone(), name_op(src, i)],
                        i,
                    )?;
                    m.guard = i2.guard;
                    out.push(Statement::Instr(m));
                } else if op == "st" && param {
                    let t = scalar_type(i)?;
                    let Some(Operand::Addr(a)) = i.operands.first() else {
                        return None;
                    };
                    let dst = *formal_ret.get(a.base?)?;
                    if a.offset != 0 {
                        return None;
                    }
                    let mut m = mk(
                        "mov",
                        &[reg_type(t)],
                        vec![name_op(dst, i), i2.operands[1].clone()],
                        i,
                    )?;
                    m.guard = i2.guard;
                    out.push(Statement::Instr(m));
                } else if op == "ret" {
                    let mut m = mk("bra", &[".uni"], vec![name_op(end, i)], i)?;
                    m.guard = i2.guard;
                    out.push(Statement::Instr(m));
                } else if matches!(op, "exit" | "trap") || param {
                    return None;
                } else {
                    out.push(Statement::Instr(i2));
                }
            }
            Statement::Loc(_) | Statement::Pragma(..) => {}
            _ => return None,
        }
    }
    out.push(Statement::Label(end, call.span));
    // 3. The caller's ld.param of each result.
    out.extend(after);
    Some(())
}

fn rename_operand<'a>(o: &mut Operand<'a>, rename: &dyn Fn(&'a str) -> &'a str) {
    match o {
        Operand::Name { name, .. } => *name = rename(name),
        Operand::Addr(a) => {
            if let Some(b) = a.base.as_mut() {
                *b = rename(b);
            }
        }
        Operand::AddrList(v, _) | Operand::Vec(v, _) | Operand::List(v, _) => {
            v.iter_mut().for_each(|e| rename_operand(e, rename))
        }
        Operand::Pair(a, b, _) => {
            rename_operand(a, rename);
            rename_operand(b, rename);
        }
        Operand::Imm(_) | Operand::Sink(_) => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A kernel calling `f(x)` (which shuffles) in a call sequence; `extra` goes into `f`'s
    /// body first.
    fn module(extra: &str) -> String {
        module_with(extra, "")
    }

    /// `extra` in the callee's declarations, `in_call` in the call sequence's.
    fn module_with(extra: &str, in_call: &str) -> String {
        format!(
            ".version 7.0
.target sm_80
.address_size 64
.func (.param .b32 r) f(.param .b32 a)
{{
  .reg .b32 %r<4>;
{extra}
  ld.param.b32 %r1, [a];
  shfl.sync.bfly.b32 %r2, %r1, 1, 31, -1;
  add.s32 %r3, %r1, %r2;
  st.param.b32 [r], %r3;
  ret;
}}
.visible .entry k(.param .u64 p)
{{
  .reg .b32 %r<4>;
  mov.u32 %r1, %tid.x;
  {{
{in_call}
  .param .b32 param0;
  .param .b32 retval0;
  st.param.b32 [param0], %r1;
  call.uni (retval0), f, (param0);
  ld.param.b32 %r2, [retval0];
  }}
  bar.sync 0;
  ret;
}}"
        )
    }

    fn inlined(src: &str) -> Option<String> {
        let (m, d) = crate::syntax::parse(src);
        assert!(d.is_empty(), "{d:?}");
        let m = &m;
        let scratch = Scratch::default();
        let k = m.items.iter().find_map(|i| match i {
            Item::Function(f) if f.name == "k" => Some(&**f),
            _ => None,
        })?;
        assert!(super::super::analysis::analyse(m, k).is_err());
        let g = inline_stop_calls(m, k, &scratch)?;
        let plan = super::super::analysis::analyse(m, g).expect("the inlined kernel is eligible");
        assert_eq!(plan.stops.len(), 2, "the shuffle and the barrier");
        let mut out = String::new();
        for s in &g.body.as_ref()?.stmts {
            match s {
                Statement::Instr(i) => out.push_str(&format!(
                    "{}{} {}\n",
                    i.opcode.spelling(),
                    i.mods.iter().map(|m| m.spelling()).collect::<String>(),
                    i.operands.len()
                )),
                Statement::Label(l, _) => out.push_str(&format!("{l}:\n")),
                Statement::Var(v) => out.push_str(&format!(
                    "{}{} {}\n",
                    v.space.spelling(),
                    v.ty.spelling(),
                    v.names[0].name
                )),
                _ => {}
            }
        }
        Some(out)
    }

    #[test]
    fn call_sequences_inline() {
        let out = inlined(&module("")).expect("inlined");
        // Fresh registers for the argument and the result, the callee's own renamed; the
        // argument passed by `mov`, `ret` a branch to the end, the result read back.
        for want in [
            ".reg.b32 %inl0_arg0",
            ".reg.b32 %inl0_ret0",
            ".reg.b32 %inl0_r",
            "mov.b32 2\nmov.b32 2\nshfl.sync.bfly.b32 5",
            "bra.uni 1\ninl0_end:\nmov.b32 2\nbar.sync 1",
        ] {
            assert!(out.contains(want), "no `{want}` in\n{out}");
        }
    }

    #[test]
    fn nvrtc_call_sequences_and_demoted_shared_variables_inline() {
        // NVRTC 13's unused `.reg .b32 temp_param_reg;` in the call sequence; a function-scope
        // `.shared` array (NVRTC demotes a kernel's `__shared__` into the function using it),
        // declared in the kernel's scope once.
        let out = inlined(&module_with(
            "  .shared .align 4 .b8 buf[64];",
            "  .reg .b32 temp_param_reg;",
        ))
        .expect("inlined");
        assert!(out.contains(".shared.b8 buf\n"), "{out}");
        assert!(!out.contains("temp_param_reg"), "{out}");
        // A register of the call sequence that an instruction uses is another shape.
        let used = module_with("", "  .reg .b32 t;\n  mov.b32 t, 1;");
        assert!(inlined(&used).is_none());
    }

    #[test]
    fn other_shapes_stay_as_they_are() {
        // A callee with memory of its own, or a nested call sequence.
        assert!(inlined(&module("  .local .b32 x;")).is_none());
        assert!(inlined(&module("  { .param .b32 q; }")).is_none());
    }
}
