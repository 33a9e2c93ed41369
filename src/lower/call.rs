//! Functions and calls through PTX's `.param` ABI: parameters become LLVM arguments (scalars by
//! value, arrays `byval`), return parameters become the return value (a struct when several),
//! and `st.param`/`ld.param` around a `call` become its arguments and results.

use super::*;
use crate::syntax::ast::{FnKind, Function, Linkage as PLinkage, Param};

fn param_kind<'c>(l: &Lowerer<'c, '_>, p: &Param) -> ParamKind<'c> {
    let ty = Ty::of(p.ty).unwrap_or(Ty::b(64));
    let n: u64 =
        p.array.iter().map(|d| d.unwrap_or(0)).product::<u64>() * p.vector.unwrap_or(1) as u64;
    if p.array.is_empty() && p.vector.is_none() {
        let t = if ty.k == K::Pred {
            l.i1().into()
        } else {
            ty.storage(l.ctx)
        };
        ParamKind::Scalar(t)
    } else {
        let size = (n * (ty.bits as u64 / 8).max(1)) as u32;
        ParamKind::Bytes {
            size,
            align: p.align.unwrap_or((ty.bits / 8).max(1)),
        }
    }
}

/// Builds the LLVM signature of a PTX function or prototype.
pub fn signature<'c>(
    l: &Lowerer<'c, '_>,
    rets: &[Param],
    params: &[Param],
    kernel: bool,
) -> Sig<'c> {
    let rets: Vec<ParamKind> = rets.iter().map(|p| param_kind(l, p)).collect();
    let params: Vec<ParamKind> = params.iter().map(|p| param_kind(l, p)).collect();
    let ptys: Vec<BasicMetadataTypeEnum> = params
        .iter()
        .map(|k| match k {
            ParamKind::Scalar(t) => (*t).into(),
            ParamKind::Bytes { .. } => l.ptr(Space::Generic).into(),
        })
        .collect();
    let rtys: Vec<BasicTypeEnum> = rets
        .iter()
        .map(|k| match k {
            ParamKind::Scalar(t) => *t,
            ParamKind::Bytes { size, .. } => l.ctx.i8_type().array_type(*size).into(),
        })
        .collect();
    let fn_ty = if kernel || rtys.is_empty() {
        l.ctx.void_type().fn_type(&ptys, false)
    } else if rtys.len() == 1 {
        rtys[0].fn_type(&ptys, false)
    } else {
        l.ctx.struct_type(&rtys, false).fn_type(&ptys, false)
    };
    Sig {
        rets,
        params,
        fn_ty,
    }
}

/// Declares (or finds) the LLVM function of a PTX function.
pub fn declare_fn<'c, 'a>(
    l: &mut Lowerer<'c, 'a>,
    f: &'a Function<'a>,
) -> Result<FunctionValue<'c>, Error> {
    let kernel = f.kind == FnKind::Entry;
    let func = match l.module.get_function(f.name) {
        Some(func) => func,
        None => {
            let sig = signature(l, &f.rets, &f.params, kernel);
            let func = l.module.add_function(f.name, sig.fn_ty, None);
            if l.target.null_is_valid() {
                let nv = enum_attr(l.ctx, "null_pointer_is_valid", 0);
                func.add_attribute(AttributeLoc::Function, nv);
            }
            for (i, k) in sig.params.iter().enumerate() {
                if let ParamKind::Bytes { size, align } = k {
                    let bv = type_attr(l.ctx, "byval", l.ctx.i8_type().array_type(*size).into());
                    func.add_attribute(AttributeLoc::Param(i as u32), bv);
                    let al = enum_attr(l.ctx, "align", *align as u64);
                    func.add_attribute(AttributeLoc::Param(i as u32), al);
                }
            }
            if kernel {
                func.set_call_conventions(CC_PTX_KERNEL);
                l.target.kernel(l, func, &f.directives);
            } else if f
                .directives
                .iter()
                .any(|d| matches!(d, ast::FnDirective::NoReturn(_)))
            {
                let nr = enum_attr(l.ctx, "noreturn", 0);
                func.add_attribute(AttributeLoc::Function, nr);
            }
            l.sigs.insert(f.name, sig);
            l.syms.insert(f.name, Sym::Func(func));
            func
        }
    };
    if f.body.is_some() {
        func.set_linkage(match f.linkage {
            PLinkage::Weak | PLinkage::Common => Linkage::WeakAny,
            PLinkage::None if !kernel => Linkage::Internal,
            _ => Linkage::External,
        });
    }
    Ok(func)
}

/// Binds a function's parameters and return slots at entry.
pub fn bind_params<'c, 'a>(
    l: &Lowerer<'c, 'a>,
    fs: &mut FnState<'c, 'a>,
    f: &'a Function<'a>,
) -> Result<(), Error> {
    let sig = l.sigs[f.name].clone();
    for (i, p) in f.params.iter().enumerate() {
        let arg = fs.func.get_nth_param(i as u32).unwrap();
        if p.space == Mod::Reg {
            let decl = ast::VarDecl {
                linkage: PLinkage::None,
                space: p.space,
                align: None,
                vector: p.vector,
                ty: p.ty,
                attributes: vec![],
                names: vec![ast::DeclName {
                    name: p.name,
                    count: None,
                    array: Default::default(),
                    init: None,
                    span: p.span,
                }],
                span: p.span,
            };
            l.declare_reg(fs, &decl)?;
            let (ptr, st, _) = l.reg(fs, p.name).unwrap();
            let v = l.coerce(arg, st, false);
            l.b.build_store(ptr, v).unwrap();
            continue;
        }
        let slot = match sig.params[i] {
            ParamKind::Scalar(_) => ParamSlot::Arg {
                val: arg,
                spill: None,
            },
            ParamKind::Bytes { .. } => ParamSlot::Mem(arg.into_pointer_value()),
        };
        fs.params.insert(p.name, slot);
    }
    for (i, p) in f.rets.iter().enumerate() {
        let k = sig.rets[i];
        if p.space == Mod::Reg {
            let decl = ast::VarDecl {
                linkage: PLinkage::None,
                space: p.space,
                align: None,
                vector: p.vector,
                ty: p.ty,
                attributes: vec![],
                names: vec![ast::DeclName {
                    name: p.name,
                    count: None,
                    array: Default::default(),
                    init: None,
                    span: p.span,
                }],
                span: p.span,
            };
            l.declare_reg(fs, &decl)?;
            fs.rets.push((RetSlot::Reg(p.name), k));
            continue;
        }
        let (ty, align): (BasicTypeEnum, u32) = match k {
            ParamKind::Scalar(t) => (t, 0),
            ParamKind::Bytes { size, align } => (l.ctx.i8_type().array_type(size).into(), align),
        };
        let m = l.alloca(fs, ty, align, p.name);
        fs.params.insert(p.name, ParamSlot::Mem(m));
        fs.rets.push((RetSlot::Mem(m), k));
    }
    Ok(())
}

fn kind_ty<'c>(l: &Lowerer<'c, '_>, k: ParamKind<'c>) -> BasicTypeEnum<'c> {
    match k {
        ParamKind::Scalar(t) => t,
        ParamKind::Bytes { size, .. } => l.ctx.i8_type().array_type(size).into(),
    }
}

/// `ret`: returns the return slots' values.
pub fn emit_ret<'c, 'a>(l: &Lowerer<'c, 'a>, fs: &mut FnState<'c, 'a>) -> Result<(), Error> {
    if fs.is_kernel || fs.rets.is_empty() {
        l.b.build_return(None).unwrap();
        return Ok(());
    }
    let mut vals = Vec::new();
    for (slot, k) in fs.rets.clone() {
        let t = kind_ty(l, k);
        let v = match slot {
            RetSlot::Mem(m) => l.b.build_load(t, m, "").unwrap(),
            RetSlot::Reg(name) => {
                let v = l.name_value(fs, name, None, Span::default())?;
                l.coerce(v, t, false)
            }
        };
        vals.push(v);
    }
    if vals.len() == 1 {
        l.b.build_return(Some(&vals[0])).unwrap();
    } else {
        let st = fs
            .func
            .get_type()
            .get_return_type()
            .unwrap()
            .into_struct_type();
        let mut agg = st.get_undef();
        for (i, v) in vals.iter().enumerate() {
            agg =
                l.b.build_insert_value(agg, *v, i as u32, "")
                    .unwrap()
                    .into_struct_value();
        }
        l.b.build_return(Some(&agg)).unwrap();
    }
    Ok(())
}

/// `call{.uni} (rets), f, (args) {, proto}`.
pub fn lower_call<'c, 'a>(
    l: &Lowerer<'c, 'a>,
    fs: &mut FnState<'c, 'a>,
    ins: &Ins<'_, 'a>,
) -> Result<bool, Error> {
    let ops = ins.ops();
    let mut k = 0;
    let mut rets: &[Operand] = &[];
    if let Some(Operand::List(r, _)) = ops.first() {
        if ops.len() >= 2 && !matches!(ops[1], Operand::List(..)) {
            rets = r;
            k = 1;
        }
    }
    let callee = ops
        .get(k)
        .ok_or_else(|| invalid(ins.span(), "`call` without a target"))?;
    let args: &[Operand] = match ops.get(k + 1) {
        Some(Operand::List(a, _)) => a,
        _ => &[],
    };
    let proto_name = ops.iter().skip(k + 1).find_map(|o| match o {
        Operand::Name { name, .. } => Some(*name),
        _ => None,
    });
    let Operand::Name {
        name: fname,
        span: fspan,
        ..
    } = callee
    else {
        return Err(invalid(
            callee.span(),
            "expected a function name or register",
        ));
    };
    // Direct or indirect.
    let (sig, target): (Sig<'c>, Result<FunctionValue<'c>, PointerValue<'c>>) =
        if let (Some(sig), Some(Sym::Func(f))) = (l.sigs.get(fname), l.syms.get(fname)) {
            (sig.clone(), Ok(*f))
        } else {
            let pname = proto_name.ok_or_else(|| {
                invalid(
                    *fspan,
                    format!("indirect call through `{fname}` needs a `.callprototype`"),
                )
            })?;
            let sig = if let Some(p) = fs.prototypes.get(pname) {
                signature(l, &p.rets, &p.params, false)
            } else if let Some(s) = l.sigs.get(pname) {
                s.clone()
            } else if let Some(s) = fs
                .call_targets
                .get(pname)
                .and_then(|t| t.iter().find_map(|f| l.sigs.get(f)))
            {
                // `.calltargets`: every listed function has the call's signature (ptxas checks
                // that), so the first one's serves.
                s.clone()
            } else {
                return Err(invalid(
                    ins.span(),
                    format!("unknown call prototype `{pname}`"),
                ));
            };
            let v = l.name_value(fs, fname, None, *fspan)?;
            let p = l
                .coerce(v, l.ptr(Space::Generic).into(), false)
                .into_pointer_value();
            (sig, Err(p))
        };
    let mut argv: Vec<BasicMetadataValueEnum> = Vec::new();
    for (i, a) in args.iter().enumerate() {
        let kind = sig
            .params
            .get(i)
            .copied()
            .unwrap_or(ParamKind::Scalar(l.i32().into()));
        let v: BasicValueEnum = match (a, kind) {
            (Operand::Name { name, .. }, _) if fs.params.contains_key(name) => {
                let slot = fs.params[name];
                let m = l.param_mem(fs, name, slot);
                match kind {
                    ParamKind::Scalar(t) => l.b.build_load(t, m, "").unwrap(),
                    ParamKind::Bytes { .. } => l.to_generic(m).into(),
                }
            }
            (_, ParamKind::Scalar(t)) => {
                let bits = l.bits_of(t);
                let ty = if t.is_float_type() {
                    Ty::f(bits)
                } else if bits == 1 {
                    Ty::PRED
                } else {
                    Ty::b(bits)
                };
                let v = l.operand(fs, a, ty)?;
                l.coerce(v, t, false)
            }
            (_, ParamKind::Bytes { .. }) => {
                return Err(invalid(
                    a.span(),
                    "an aggregate argument must be a `.param` variable",
                ))
            }
        };
        argv.push(v.into());
    }
    let cs = match target {
        Ok(f) => l.b.build_call(f, &argv, "").unwrap(),
        Err(p) => l.b.build_indirect_call(sig.fn_ty, p, &argv, "").unwrap(),
    };
    let rv = cs.try_as_basic_value().basic();
    for (i, r) in rets.iter().enumerate() {
        let Some(rv) = rv else { break };
        let v = if sig.rets.len() > 1 {
            l.b.build_extract_value(rv.into_struct_value(), i as u32, "")
                .unwrap()
        } else {
            rv
        };
        match r {
            Operand::Name { name, .. } if fs.params.contains_key(name) => {
                let slot = fs.params[name];
                let m = l.param_mem(fs, name, slot);
                l.b.build_store(m, v).unwrap();
            }
            _ => l.set(fs, r, v, false)?,
        }
    }
    if let Ok(f) = target {
        if has_fn_attr(f, "noreturn") {
            l.b.build_unreachable().unwrap();
        }
    }
    Ok(true)
}
