//! NVPTX lowering of barriers, fences and warp-level operations to `llvm.nvvm.*` intrinsics
//! and LLVM fences with sync scopes.

use crate::isa::Mod;
use crate::llvm::*;
use crate::lower::{Error, FnState, Lowerer, Space, Ty};
use crate::syntax::ast::{Instruction, Operand};

pub fn lower<'c, 'a>(
    l: &Lowerer<'c, 'a>,
    fs: &mut FnState<'c, 'a>,
    i: &Instruction<'a>,
) -> Result<bool, Error> {
    let ins = l.ins(i)?;
    let ops = ins.ops();
    let b32 = Ty::b(32);
    match ins.op {
        "bar" if ins.has(Mod::Warp) => {
            let m = l.operand(fs, &ops[0], b32)?;
            l.call("llvm.nvvm.bar.warp.sync", None, &[m]);
            Ok(true)
        }
        "bar" | "barrier" => {
            if ins
                .d
                .mods
                .iter()
                .any(|m| matches!(*m, Mod::Red | Mod::Cluster))
                || ops.is_empty()
            {
                return Ok(false);
            }
            let arrive = ins.has(Mod::Arrive);
            // `bar.sync` and `barrier.sync.aligned` are aligned; `barrier.sync` is not.
            let aligned = ins.op == "bar" || ins.has(Mod::Aligned);
            let id = l.operand(fs, &ops[0], b32)?;
            let name = match (arrive, aligned, ops.len() > 1) {
                (false, true, false) => "llvm.nvvm.barrier.cta.sync.aligned.all",
                (false, false, false) => "llvm.nvvm.barrier.cta.sync.all",
                (false, true, true) => "llvm.nvvm.barrier.cta.sync.aligned.count",
                (false, false, true) => "llvm.nvvm.barrier.cta.sync.count",
                (true, true, true) => "llvm.nvvm.barrier.cta.arrive.aligned.count",
                (true, false, true) => "llvm.nvvm.barrier.cta.arrive.count",
                _ => return Ok(false),
            };
            let mut args = vec![id];
            if ops.len() > 1 {
                args.push(l.operand(fs, &ops[1], b32)?);
            }
            l.call(name, None, &args);
            Ok(true)
        }
        "fence" | "membar" => {
            if ins.op == "fence"
                && ins.d.mods.iter().any(|m| {
                    !matches!(
                        *m,
                        Mod::Sc | Mod::AcqRel | Mod::Cta | Mod::Gpu | Mod::Sys | Mod::Cluster
                    )
                })
            {
                return Ok(false);
            }
            let scope = match ins.any(&[Mod::Cta, Mod::Gl, Mod::Gpu, Mod::Sys, Mod::Cluster]) {
                Some(Mod::Cta) => "block",
                Some(Mod::Cluster) => "cluster",
                Some(Mod::Sys) => "",
                _ => "device",
            };
            let ord = if ins.has(Mod::AcqRel) {
                Ordering::AcqRel
            } else {
                Ordering::SeqCst
            };
            fence(l.ctx, &l.b, ord, scope);
            Ok(true)
        }
        "isspacep" => {
            let name = match ins.space() {
                Some(Space::Global) => "global",
                Some(Space::Shared) => "shared",
                Some(Space::SharedCluster) => "shared.cluster",
                Some(Space::Const) => "const",
                Some(Space::Local) => "local",
                _ => return Ok(false),
            };
            let v = l.operand(fs, &ops[1], Ty::u(64))?.into_int_value();
            let p = l.b.build_int_to_ptr(v, l.ptr(Space::Generic), "").unwrap();
            let r = l.call_v(
                &format!("llvm.nvvm.isspacep.{name}"),
                l.i1().into(),
                &[p.into()],
            );
            l.set(fs, &ops[0], r, false)?;
            Ok(true)
        }
        "activemask" => {
            let r = l.call_v("llvm.nvvm.activemask", l.i32().into(), &[]);
            l.set(fs, &ops[0], r, false)?;
            Ok(true)
        }
        "shfl" => {
            if !ins.has(Mod::Sync) || ops.len() != 5 {
                return Ok(false);
            }
            let mode = match ins.any(&[Mod::Idx, Mod::Up, Mod::Down, Mod::Bfly]) {
                Some(Mod::Idx) => "idx",
                Some(Mod::Up) => "up",
                Some(Mod::Down) => "down",
                Some(_) => "bfly",
                None => return Ok(false),
            };
            let a = l.operand(fs, &ops[1], b32)?;
            let b = l.operand(fs, &ops[2], b32)?;
            let c = l.operand(fs, &ops[3], b32)?;
            let m = l.operand(fs, &ops[4], b32)?;
            match &ops[0] {
                Operand::Pair(d, p, _) => {
                    let st = l.ctx.struct_type(&[l.i32().into(), l.i1().into()], false);
                    let r = l
                        .call_v(
                            &format!("llvm.nvvm.shfl.sync.{mode}.i32p"),
                            st.into(),
                            &[m, a, b, c],
                        )
                        .into_struct_value();
                    let v = l.b.build_extract_value(r, 0, "").unwrap();
                    let q = l.b.build_extract_value(r, 1, "").unwrap();
                    l.set(fs, d, v, false)?;
                    l.set(fs, p, q, false)?;
                }
                d => {
                    let r = l.call_v(
                        &format!("llvm.nvvm.shfl.sync.{mode}.i32"),
                        l.i32().into(),
                        &[m, a, b, c],
                    );
                    l.set(fs, d, r, false)?;
                }
            }
            Ok(true)
        }
        "vote" => {
            if !ins.has(Mod::Sync) {
                return Ok(false);
            }
            let mode = match ins.any(&[Mod::All, Mod::Any, Mod::Uni, Mod::Ballot]) {
                Some(Mod::All) => "all",
                Some(Mod::Any) => "any",
                Some(Mod::Uni) => "uni",
                Some(_) => "ballot",
                None => return Ok(false),
            };
            let p = l.operand(fs, &ops[1], Ty::PRED)?;
            let m = l.operand(fs, &ops[2], b32)?;
            let rt = if mode == "ballot" {
                l.i32().into()
            } else {
                l.i1().into()
            };
            let r = l.call_v(&format!("llvm.nvvm.vote.{mode}.sync"), rt, &[m, p]);
            l.set(fs, &ops[0], r, false)?;
            Ok(true)
        }
        "match" => {
            let t = ins.ty();
            let a = l.operand(fs, &ops[1], Ty::b(t.bits))?;
            let m = l.operand(fs, &ops[2], b32)?;
            if ins.has(Mod::Any) {
                let r = l.call_v(
                    &format!("llvm.nvvm.match.any.sync.i{}", t.bits),
                    l.i32().into(),
                    &[m, a],
                );
                l.set(fs, &ops[0], r, false)?;
            } else {
                let st = l.ctx.struct_type(&[l.i32().into(), l.i1().into()], false);
                let r = l
                    .call_v(
                        &format!("llvm.nvvm.match.all.sync.i{}p", t.bits),
                        st.into(),
                        &[m, a],
                    )
                    .into_struct_value();
                let v = l.b.build_extract_value(r, 0, "").unwrap();
                let q = l.b.build_extract_value(r, 1, "").unwrap();
                match &ops[0] {
                    Operand::Pair(d, p, _) => {
                        l.set(fs, d, v, false)?;
                        l.set(fs, p, q, false)?;
                    }
                    d => l.set(fs, d, v, false)?,
                }
            }
            Ok(true)
        }
        "redux" => {
            let t = ins.ty();
            if t.is_float() || ins.d.mods.iter().any(|m| matches!(*m, Mod::Abs | Mod::NaN)) {
                return Ok(false);
            }
            let op = match ins.any(&[Mod::Add, Mod::Min, Mod::Max, Mod::And, Mod::Or, Mod::Xor]) {
                Some(Mod::Min) if !t.is_signed() => "umin",
                Some(Mod::Max) if !t.is_signed() => "umax",
                Some(Mod::Add) => "add",
                Some(Mod::Min) => "min",
                Some(Mod::Max) => "max",
                Some(Mod::And) => "and",
                Some(Mod::Or) => "or",
                Some(_) => "xor",
                None => return Ok(false),
            };
            let a = l.operand(fs, &ops[1], b32)?;
            let m = l.operand(fs, &ops[2], b32)?;
            let r = l.call_v(
                &format!("llvm.nvvm.redux.sync.{op}"),
                l.i32().into(),
                &[a, m],
            );
            l.set(fs, &ops[0], r, false)?;
            Ok(true)
        }
        "elect" => {
            let m = l.operand(fs, &ops[1], b32)?;
            let st = l.ctx.struct_type(&[l.i32().into(), l.i1().into()], false);
            let r = l
                .call_v("llvm.nvvm.elect.sync", st.into(), &[m])
                .into_struct_value();
            let v = l.b.build_extract_value(r, 0, "").unwrap();
            let q = l.b.build_extract_value(r, 1, "").unwrap();
            match &ops[0] {
                Operand::Pair(d, p, _) => {
                    l.set(fs, d, v, false)?;
                    l.set(fs, p, q, false)?;
                }
                d => l.set(fs, d, q, false)?,
            }
            Ok(true)
        }
        _ => Ok(false),
    }
}
