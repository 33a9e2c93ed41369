//! Conversions: `cvt` between integer and floating-point types with rounding and saturation
//! (float→int saturates and maps NaN to 0, as `llvm.fpto[su]i.sat` does), `cvta` as
//! address-space casts and `isspacep` as `llvm.nvvm.isspacep.*`.

use super::*;

fn space_mod(ins: &Ins) -> Option<Space> {
    ins.space()
}

pub fn lower<'c, 'a>(l: &Lowerer<'c, 'a>, fs: &mut FnState<'c, 'a>, ins: &Ins<'_, 'a>) -> Result<bool, Error> {
    let ops = ins.ops();
    let bd = &l.b;
    match ins.op {
        "cvta" => {
            let Some(space) = space_mod(ins) else { return Ok(false) };
            if space == Space::Param || space == Space::SharedCluster {
                return Ok(false);
            }
            let t = ins.ty();
            let to = ins.has(".to");
            // Symbol operand: its pointer; register: an address in the source space.
            let src_space = if to { Space::Generic } else { space };
            let p = match &ops[1] {
                Operand::Name { name, .. } if l.reg(fs, name).is_none() => match l.sym_ptr(fs, name) {
                    Some(p) => p,
                    None => return Ok(false),
                },
                Operand::Imm(e) if crate::syntax::consteval::eval(e).is_none() => {
                    let v = l.sym_expr(fs, e)?;
                    bd.build_int_to_ptr(v, l.ptr(src_space), "").unwrap()
                }
                o => {
                    let v = l.operand(fs, o, Ty::u(t.bits))?.into_int_value();
                    bd.build_int_to_ptr(v, l.ptr(src_space), "").unwrap()
                }
            };
            let dst = if to { l.ptr(space) } else { l.ptr(Space::Generic) };
            let q = if p.get_type() == dst { p } else { bd.build_address_space_cast(p, dst, "").unwrap() };
            let v = bd.build_ptr_to_int(q, l.int(t.bits), "").unwrap();
            l.set(fs, &ops[0], v.into(), false)?;
            Ok(true)
        }
        "isspacep" => {
            let name = match space_mod(ins) {
                Some(Space::Global) => "global",
                Some(Space::Shared) => "shared",
                Some(Space::SharedCluster) => "shared.cluster",
                Some(Space::Const) => "const",
                Some(Space::Local) => "local",
                _ => return Ok(false),
            };
            let v = l.operand(fs, &ops[1], Ty::u(64))?.into_int_value();
            let p = bd.build_int_to_ptr(v, l.ptr(Space::Generic), "").unwrap();
            let r = l.call_v(&format!("llvm.nvvm.isspacep.{name}"), l.i1().into(), &[p.into()]);
            l.set(fs, &ops[0], r, false)?;
            Ok(true)
        }
        _ => cvt(l, fs, ins),
    }
}

fn cvt<'c, 'a>(l: &Lowerer<'c, 'a>, fs: &mut FnState<'c, 'a>, ins: &Ins<'_, 'a>) -> Result<bool, Error> {
    let ops = ins.ops();
    let bd = &l.b;
    if ins.types.len() != 2 || ops.len() != 2 {
        return Ok(false);
    }
    let (dt, st) = (ins.types[0], ins.types[1]);
    let sat = ins.has(".sat");
    let ftz = ins.has(".ftz");
    let rnd = ins.any(&[".rn", ".rz", ".rm", ".rp", ".rna", ".rs"]);
    let irnd = ins.any(&[".rni", ".rzi", ".rmi", ".rpi"]);
    if ins.mods.iter().any(|m| matches!(*m, ".relu" | ".satfinite" | ".rna" | ".rs")) {
        return Ok(false);
    }
    let scalar_f = |t: Ty| matches!(t.k, K::F | K::BF);
    let a = l.operand(fs, &ops[1], st)?;
    let dty = dt.llvm(l.ctx);
    let r: BasicValueEnum = if st.is_int() && dt.is_int() {
        if sat && dt.bits < st.bits || sat && dt.is_signed() != st.is_signed() {
            return Ok(false);
        }
        let v = a.into_int_value();
        let w = l.int(dt.bits);
        if dt.bits < st.bits {
            bd.build_int_truncate(v, w, "").unwrap().into()
        } else if st.is_signed() {
            bd.build_int_s_extend_or_bit_cast(v, w, "").unwrap().into()
        } else {
            bd.build_int_z_extend_or_bit_cast(v, w, "").unwrap().into()
        }
    } else if scalar_f(st) && scalar_f(dt) {
        if ftz || sat {
            return Ok(false);
        }
        let v = a.into_float_value();
        let ft = dty.into_float_type();
        let (sb, db) = (st.bits, dt.bits);
        if let Some(r) = irnd {
            if sb != db || st.k != dt.k {
                return Ok(false);
            }
            let f = match r {
                ".rni" => "roundeven",
                ".rzi" => "trunc",
                ".rmi" => "floor",
                _ => "ceil",
            };
            l.call_v(&format!("llvm.{f}.{}", float::tyname(st)), dty, &[v.into()])
        } else if db > sb || (db == sb && st.k != dt.k && false) {
            bd.build_float_ext(v, ft, "").unwrap().into()
        } else if db < sb && rnd.unwrap_or(".rn") == ".rn" {
            bd.build_float_trunc(v, ft, "").unwrap().into()
        } else if db == sb && st.k == dt.k {
            v.into()
        } else {
            return Ok(false);
        }
    } else if st.is_int() && scalar_f(dt) {
        if rnd.unwrap_or(".rn") != ".rn" || sat || ftz {
            return Ok(false);
        }
        let v = a.into_int_value();
        let ft = dty.into_float_type();
        if st.is_signed() {
            bd.build_signed_int_to_float(v, ft, "").unwrap().into()
        } else {
            bd.build_unsigned_int_to_float(v, ft, "").unwrap().into()
        }
    } else if scalar_f(st) && dt.is_int() {
        if ftz && st.bits == 32 {
            return Ok(false);
        }
        let mut v = a.into_float_value();
        let f = match irnd.unwrap_or(".rzi") {
            ".rni" => Some("roundeven"),
            ".rzi" => None,
            ".rmi" => Some("floor"),
            _ => Some("ceil"),
        };
        if let Some(f) = f {
            v = l.call_v(&format!("llvm.{f}.{}", float::tyname(st)), st.llvm(l.ctx), &[v.into()]).into_float_value();
        }
        let name = if dt.is_signed() { "llvm.fptosi.sat" } else { "llvm.fptoui.sat" };
        l.call_v(&format!("{name}.i{}.{}", dt.bits, float::tyname(st)), dty, &[v.into()])
    } else {
        return Ok(false);
    };
    l.set(fs, &ops[0], r, dt.is_signed())?;
    Ok(true)
}
