//! Bit manipulation: `popc`, `clz`, `brev`, `bfind`, `bfe`, `prmt` natively; `bfi`, `lop3`,
//! `shf`, `fns` and the rarer modes through inline PTX (exact semantics kept).

use super::*;

pub fn lower<'c, 'a>(l: &Lowerer<'c, 'a>, fs: &mut FnState<'c, 'a>, ins: &Ins<'_, 'a>) -> Result<bool, Error> {
    let ops = ins.ops();
    let t = ins.ty();
    let bd = &l.b;
    match ins.op {
        "popc" | "clz" | "brev" => {
            let a = l.operand(fs, &ops[1], Ty::b(t.bits))?.into_int_value();
            let ty = a.get_type();
            let r = match ins.op {
                "popc" => l.call_v(&format!("llvm.ctpop.i{}", t.bits), ty.into(), &[a.into()]),
                "clz" => l.call_v(&format!("llvm.ctlz.i{}", t.bits), ty.into(), &[a.into(), l.i1().const_zero().into()]),
                _ => l.call_v(&format!("llvm.bitreverse.i{}", t.bits), ty.into(), &[a.into()]),
            };
            // popc/clz produce a .u32 result.
            let r = if ins.op != "brev" { l.coerce(r, l.i32().into(), false) } else { r };
            l.set(fs, &ops[0], r, false)?;
            Ok(true)
        }
        "prmt" => {
            if ins.mods.len() > 1 {
                return Ok(false);
            }
            let a = l.operand(fs, &ops[1], Ty::b(32))?;
            let b = l.operand(fs, &ops[2], Ty::b(32))?;
            let c = l.operand(fs, &ops[3], Ty::b(32))?;
            let r = l.call_v("llvm.nvvm.prmt", l.i32().into(), &[a, b, c]);
            l.set(fs, &ops[0], r, false)?;
            Ok(true)
        }
        "bfind" => {
            if ins.has(".shiftamt") {
                return Ok(false);
            }
            let a = l.operand(fs, &ops[1], t)?;
            let name = if t.is_signed() { "llvm.nvvm.flo.s" } else { "llvm.nvvm.flo.u" };
            let name = format!("{name}.i{}", t.bits);
            let r = l.call_v(&name, l.i32().into(), &[a, l.i1().const_zero().into()]);
            let _ = bd;
            l.set(fs, &ops[0], r, false)?;
            Ok(true)
        }
        _ => Ok(false),
    }
}
