//! `atom` and `red`: every operation as `atomicrmw` (inc/dec as `uinc_wrap`/`udec_wrap`) or
//! `cmpxchg`, with the PTX scope as the LLVM sync scope and the semantics (default `.relaxed`)
//! as the ordering. Packed and vector forms use inline PTX.

use super::*;

pub fn lower<'c, 'a>(l: &Lowerer<'c, 'a>, fs: &mut FnState<'c, 'a>, ins: &Ins<'_, 'a>) -> Result<bool, Error> {
    let ops = ins.ops();
    let t = ins.ty();
    if ins.mods.iter().any(|m| matches!(*m, ".v2" | ".v4" | ".v8" | ".noftz" | ".b128") || m.starts_with(".L2")) || !matches!(t.k, K::B | K::U | K::S | K::F) || t.bits < 32 && t.k != K::F {
        return Ok(false);
    }
    if t.k == K::F && t.bits == 16 {
        return Ok(false);
    }
    let is_red = ins.op == "red";
    let (addr, rest) = if is_red { (&ops[0], &ops[1..]) } else { (&ops[1], &ops[2..]) };
    let Operand::Addr(a) = addr else { return Ok(false) };
    let space = ins.space().unwrap_or(Space::Generic);
    if space == Space::Param {
        return Ok(false);
    }
    let ptr = l.address(fs, a, space, addr.span())?;
    let ord = match ins.any(&[".relaxed", ".acquire", ".release", ".acq_rel"]) {
        Some(".acquire") => Ordering::Acquire,
        Some(".release") => Ordering::Release,
        Some(".acq_rel") => Ordering::AcqRel,
        _ => Ordering::Monotonic,
    };
    let scope = memory::scope_name(ins);
    let opname = ins.any(&[".add", ".min", ".max", ".and", ".or", ".xor", ".exch", ".cas", ".inc", ".dec"]);
    let Some(opname) = opname else { return Ok(false) };
    let ty = t.llvm(l.ctx);
    let b = l.operand(fs, &rest[0], t)?;
    let r = if opname == ".cas" {
        let c = l.operand(fs, &rest[1], t)?;
        let (b2, c2) = if t.is_float() {
            let it = l.int(t.bits);
            (l.coerce(b, it.into(), false), l.coerce(c, it.into(), false))
        } else {
            (b, c)
        };
        atomic_cmpxchg(l.ctx, &l.b, ptr, b2, c2, ord, scope)
    } else {
        let op = match (opname, t.k) {
            (".add", K::F) => RmwOp::FAdd,
            (".add", _) => RmwOp::Add,
            (".min", K::S) => RmwOp::Min,
            (".max", K::S) => RmwOp::Max,
            (".min", K::F) => RmwOp::FMin,
            (".max", K::F) => RmwOp::FMax,
            (".min", _) => RmwOp::UMin,
            (".max", _) => RmwOp::UMax,
            (".and", _) => RmwOp::And,
            (".or", _) => RmwOp::Or,
            (".xor", _) => RmwOp::Xor,
            (".exch", _) => RmwOp::Xchg,
            (".inc", _) => RmwOp::UIncWrap,
            (".dec", _) => RmwOp::UDecWrap,
            _ => return Ok(false),
        };
        if matches!(op, RmwOp::FMin | RmwOp::FMax) {
            return Ok(false);
        }
        atomic_rmw(l.ctx, &l.b, op, ptr, b, ord, scope)
    };
    if !is_red {
        let r = l.coerce(r, ty, false);
        l.set(fs, &ops[0], r, t.is_signed())?;
    }
    Ok(true)
}
