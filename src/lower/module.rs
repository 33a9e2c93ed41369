//! Module-level lowering: functions (declarations and signatures), variables in every state
//! space with their initializers, alignment and linkage, and function-local variables.

use super::*;
use crate::syntax::ast::{Initializer, Item, Linkage as PLinkage, VarDecl};

/// The address space of a variable declared in state space `m` (`.tex` handles live in
/// global memory).
pub fn space_of(m: Mod) -> Option<Space> {
    match m {
        Mod::Tex => Some(Space::Global),
        Mod::ParamEntry | Mod::ParamFunc => None,
        m => Space::of(m),
    }
}

/// The LLVM element type of a variable's declared type (opaque handles are 64-bit).
fn elem_type<'c>(l: &Lowerer<'c, '_>, v: &VarDecl) -> Result<BasicTypeEnum<'c>, Error> {
    let t = match Ty::of(v.ty) {
        Some(t) if t.k == K::Pred => l.ctx.i8_type().into(),
        Some(t) => t.storage(l.ctx),
        None => l.i64().into(),
    };
    Ok(t)
}

fn var_type<'c>(
    l: &Lowerer<'c, '_>,
    v: &VarDecl,
    dims: &[Option<u64>],
) -> Result<(BasicTypeEnum<'c>, BasicTypeEnum<'c>, u64), Error> {
    let elem = elem_type(l, v)?;
    let mut n: u64 = v.vector.map(|x| x as u64).unwrap_or(1);
    let mut is_array = v.vector.is_some();
    for d in dims {
        is_array = true;
        n = n.saturating_mul(d.unwrap_or(0));
    }
    // LLVM array types count elements in 32 bits.
    if n > u32::MAX as u64 {
        return Err(invalid(
            v.span,
            format!(
                "a variable of {n} elements is too large (at most {} elements)",
                u32::MAX
            ),
        ));
    }
    let ty: BasicTypeEnum = if is_array {
        elem.array_type(n as u32).into()
    } else {
        elem
    };
    Ok((ty, elem, n))
}

fn flatten<'x, 'a>(i: &'x Initializer<'a>, out: &mut Vec<&'x Expr<'a>>) {
    match i {
        Initializer::Expr(e) => out.push(e),
        Initializer::List(items, _) => items.iter().for_each(|x| flatten(x, out)),
        // `.samplerref`/`.texref` fields: texture state is not modelled in LLVM IR (texture
        // instructions are inline PTX on nvptx and unsupported on cpu; docs/COVERAGE.md).
        Initializer::Field(..) => {}
    }
}

fn const_elem<'c>(
    l: &Lowerer<'c, '_>,
    e: &Expr,
    elem: BasicTypeEnum<'c>,
) -> Result<BasicValueEnum<'c>, Error> {
    match (e, elem) {
        (Expr::F32(b, _), BasicTypeEnum::FloatType(f)) => {
            Ok(f.const_float(f32::from_bits(*b) as f64).into())
        }
        (Expr::F64(b, _), BasicTypeEnum::FloatType(f)) => {
            Ok(f.const_float(f64::from_bits(*b)).into())
        }
        (Expr::F32(b, _), BasicTypeEnum::IntType(i)) => Ok(i.const_int(*b as u64, false).into()),
        (Expr::F64(b, _), BasicTypeEnum::IntType(i)) => Ok(i.const_int(*b, false).into()),
        (Expr::Sym(s, sp) | Expr::Generic(s, sp), BasicTypeEnum::IntType(i)) => {
            let p = match l.syms.get(s) {
                Some(Sym::Var { ptr, .. }) => *ptr,
                Some(Sym::Func(f)) => f.as_global_value().as_pointer_value(),
                None => return Err(invalid(*sp, format!("unknown symbol `{s}` in initializer"))),
            };
            let p = if matches!(e, Expr::Generic(..)) {
                p.const_address_space_cast(l.ptr(Space::Generic))
            } else {
                p
            };
            Ok(p.const_to_int(i).into())
        }
        (Expr::Binary(ast::BinOp::Add, a, b, sp), BasicTypeEnum::IntType(i)) => {
            let (s, off) = match (&**a, crate::syntax::consteval::eval(b)) {
                (Expr::Sym(..) | Expr::Generic(..), Some(c)) => (a, c.bits),
                _ => return Err(invalid(*sp, "unsupported initializer expression")),
            };
            let base = const_elem(l, s, l.i64().into())?.into_int_value();
            // SAFETY: a constant `inttoptr` and constant `getelementptr` only build IR; nothing is dereferenced.
            let p = unsafe {
                base.const_to_pointer(l.ptr(Space::Generic))
                    .const_gep(l.ctx.i8_type(), &[l.i64().const_int(off, false)])
            };
            Ok(p.const_to_int(i).into())
        }
        (_, BasicTypeEnum::IntType(i)) => match crate::syntax::consteval::eval(e) {
            Some(c) => Ok(i.const_int(c.bits, false).into()),
            None => Err(invalid(e.span(), "unsupported initializer expression")),
        },
        (_, BasicTypeEnum::FloatType(f)) => match crate::syntax::consteval::eval(e) {
            Some(c) => Ok(f.const_float(c.bits as i64 as f64).into()),
            None => Err(invalid(e.span(), "unsupported initializer expression")),
        },
        _ => Err(invalid(e.span(), "unsupported initializer")),
    }
}

fn const_array<'c>(
    l: &Lowerer<'c, '_>,
    elem: BasicTypeEnum<'c>,
    vals: &[BasicValueEnum<'c>],
) -> BasicValueEnum<'c> {
    match elem {
        BasicTypeEnum::IntType(t) => {
            let v: Vec<IntValue> = vals.iter().map(|x| x.into_int_value()).collect();
            t.const_array(&v).into()
        }
        BasicTypeEnum::FloatType(t) => {
            let v: Vec<FloatValue> = vals.iter().map(|x| x.into_float_value()).collect();
            t.const_array(&v).into()
        }
        _ => {
            let _ = l;
            unreachable!("element types are ints or floats")
        }
    }
}

/// Creates the global for a module-level (or function-local static) variable.
pub fn global_var<'c, 'a>(
    l: &Lowerer<'c, 'a>,
    v: &'a VarDecl<'a>,
    prefix: &str,
) -> Result<Vec<(&'a str, Sym<'c>)>, Error> {
    let space = space_of(v.space).ok_or_else(|| {
        invalid(
            v.span,
            format!("variable in state space `{}`", v.space.spelling()),
        )
    })?;
    let mut out = Vec::new();
    for n in &v.names {
        let (ty, elem, count) = var_type(l, v, &n.array)?;
        let name = format!("{prefix}{}", n.name);
        let gname = if prefix.is_empty() {
            n.name.to_string()
        } else {
            name
        };
        let g = match l.module.get_global(&gname) {
            Some(g) => g,
            None => l.module.add_global(
                ty,
                Some(AddressSpace::from(l.target.addr_space(space))),
                &gname,
            ),
        };
        let elem_bytes = (l.bits_of(elem) / 8).max(1);
        g.set_alignment(v.align.unwrap_or(elem_bytes));
        if space == Space::Const {
            g.set_constant(true);
        }
        let extern_ = v.linkage == PLinkage::Extern
            || (n.array.iter().any(|d| d.is_none()) && n.init.is_none());
        g.set_linkage(match v.linkage {
            PLinkage::Visible => Linkage::External,
            PLinkage::Extern => Linkage::External,
            PLinkage::Weak => Linkage::WeakAny,
            PLinkage::Common => Linkage::Common,
            PLinkage::None if extern_ => Linkage::External,
            PLinkage::None => Linkage::Internal,
        });
        if !extern_ {
            let init: BasicValueEnum = match &n.init {
                Some(i) => {
                    let mut es = Vec::new();
                    flatten(i, &mut es);
                    let mut vals = Vec::new();
                    for e in es {
                        vals.push(const_elem(l, e, elem)?);
                    }
                    if ty == elem {
                        vals.first().copied().unwrap_or_else(|| elem.const_zero())
                    } else {
                        while (vals.len() as u64) < count {
                            vals.push(elem.const_zero());
                        }
                        vals.truncate(count as usize);
                        const_array(l, elem, &vals)
                    }
                }
                None if matches!(space, Space::Shared | Space::SharedCluster | Space::Local) => {
                    undef_of(ty)
                }
                None => ty.const_zero(),
            };
            if matches!(space, Space::Shared | Space::SharedCluster) && n.init.is_none() {
                g.set_initializer(&undef_of(ty));
            } else {
                g.set_initializer(&init);
            }
        }
        out.push((
            n.name,
            Sym::Var {
                ptr: g.as_pointer_value(),
                space,
            },
        ));
    }
    Ok(out)
}

fn undef_of(t: BasicTypeEnum) -> BasicValueEnum {
    match t {
        BasicTypeEnum::ArrayType(a) => a.get_undef().into(),
        BasicTypeEnum::IntType(a) => a.get_undef().into(),
        BasicTypeEnum::FloatType(a) => a.get_undef().into(),
        BasicTypeEnum::VectorType(a) => a.get_undef().into(),
        BasicTypeEnum::StructType(a) => a.get_undef().into(),
        BasicTypeEnum::PointerType(a) => a.get_undef().into(),
        BasicTypeEnum::ScalableVectorType(a) => a.get_undef().into(),
    }
}

/// A variable declared inside a function body.
pub fn local_var<'c, 'a>(
    l: &Lowerer<'c, 'a>,
    fs: &mut FnState<'c, 'a>,
    v: &'a VarDecl<'a>,
) -> Result<(), Error> {
    match v.space {
        Mod::Reg => l.declare_reg(fs, v),
        Mod::Local | Mod::Param => {
            for n in &v.names {
                let (ty, _elem, _) = var_type(l, v, &n.array)?;
                let own = if v.space == Mod::Local {
                    l.target.local_var(l, fs, ty, v.align.unwrap_or(0), n.name)
                } else {
                    None
                };
                let p = own.unwrap_or_else(|| l.alloca(fs, ty, v.align.unwrap_or(0), n.name));
                if v.space == Mod::Param {
                    fs.params.insert(n.name, ParamSlot::Mem(p));
                    fs.local_vars.remove(n.name);
                } else {
                    // The variable's address is a local-window address (`mov` then
                    // `cvta.local` gives the generic one), so keep the pointer in AS local.
                    let lp = l.ptr(Space::Local);
                    let p = if p.get_type() == lp {
                        p
                    } else {
                        let cur = l.b.get_insert_block().unwrap();
                        l.b.position_at_end(fs.alloca_bb);
                        let c = l.b.build_address_space_cast(p, lp, "").unwrap();
                        l.b.position_at_end(cur);
                        c
                    };
                    fs.local_vars.insert(
                        n.name,
                        Sym::Var {
                            ptr: p,
                            space: Space::Local,
                        },
                    );
                }
            }
            Ok(())
        }
        _ => {
            let prefix = format!("{}__", fs.name);
            for (name, s) in global_var(l, v, &prefix)? {
                fs.local_vars.insert(name, s);
            }
            Ok(())
        }
    }
}

/// Lowers a whole module: declarations first, then variables, then bodies.
pub fn lower_module<'c, 'a>(
    l: &mut Lowerer<'c, 'a>,
    m: &'a ast::Module<'a>,
) -> Result<(), Vec<Error>> {
    let mut errors = Vec::new();
    for it in &m.items {
        if let Item::File { index, name, .. } = it {
            l.files.insert(*index, name.trim_matches('"').to_string());
        }
    }
    l.nounroll = m
        .items
        .iter()
        .any(|it| matches!(it, Item::Pragma(strings, _) if super::has_nounroll(strings)));
    // Functions.
    let mut defs = Vec::new();
    for it in &m.items {
        if let Item::Function(f) = it {
            match call::declare_fn(l, f) {
                Ok(func) => {
                    if f.body.is_some() {
                        defs.push((&**f, func));
                    }
                }
                Err(e) => errors.push(e),
            }
        }
    }
    // Variables (in order: initializers may name earlier variables and any function).
    for it in &m.items {
        if let Item::Var(v) = it {
            match global_var(l, v, "") {
                Ok(syms) => {
                    for (n, s) in syms {
                        l.syms.insert(n, s);
                    }
                }
                Err(e) => errors.push(e),
            }
        }
    }
    for (f, func) in defs {
        if let Err(e) = l.lower_body(f, func) {
            // Leave a well-formed function behind so that other errors can still be found.
            for bb in func.get_basic_block_iter().collect::<Vec<_>>() {
                let _ = bb.remove_from_function();
            }
            errors.push(e);
        }
    }
    // `.alias a, b;`: `a` is declared (without a body) and becomes an alias of `b`.
    if errors.is_empty() {
        for it in &m.items {
            if let Item::Alias {
                alias,
                aliasee,
                span,
            } = it
            {
                match (l.syms.get(alias), l.syms.get(aliasee)) {
                    (Some(Sym::Func(a)), Some(Sym::Func(t)))
                        if a.count_basic_blocks() == 0 && t.count_basic_blocks() > 0 =>
                    {
                        let (a, t) = (*a, *t);
                        crate::llvm::alias_function(&l.module, a, t);
                        l.syms.insert(alias, Sym::Func(t));
                    }
                    _ => errors.push(Error::Invalid {
                        msg: format!(
                            "`.alias {alias}, {aliasee};` needs `{alias}` declared without a body and `{aliasee}` defined in this module"
                        ),
                        span: *span,
                    }),
                }
            }
        }
    }
    if errors.is_empty() {
        Ok(())
    } else {
        Err(errors)
    }
}
