//! cpu lowering of `mbarrier` and of the asynchronous instructions that signal one
//! (`cp.async.mbarrier.arrive`, non-tensor `cp.async.bulk`/`cp.reduce.async.bulk`, `st.async`,
//! `red.async`), plus the cluster instructions of a cluster of one CTA (`barrier.cluster`,
//! `mapa`, `getctarank`) and `fence.mbarrier_init`. The objects live in the CTA's shared
//! memory; the runtime (`runtime/mbarrier.rs`) keeps them, so each instruction is a call that
//! takes the object's generic address and the instruction's spelling for its errors.
//!
//! Waits let the CTA's other threads run, which only the coroutine scheme can do: kernels
//! with any of these instructions stay off thread loops and the warp engine
//! (`needs_coroutines`). Asynchronous copies complete when issued, so each one's complete-tx
//! is part of it.

use super::sync::{self_ptr, spelling, unsupported};
use crate::isa::Mod;
use crate::isa::Opcode;
use crate::llvm::*;
use crate::lower::{Error, FnState, Ins, Lowerer, Space, Ty};
use crate::runtime::mbarrier::{ArriveFlag, RedOp, RedType, WaitFlag};
use crate::syntax::ast::{Instruction, Operand};

/// Whether instruction `i` makes its kernel run as coroutines: it waits for other threads
/// (mbarrier waits, `barrier.cluster.wait`) or calls the runtime in a way that may fail the
/// launch from a coroutine (all the instructions this module lowers but `getctarank` and
/// fences).
pub fn needs_coroutines(i: &Instruction) -> bool {
    let has = |m: Mod| i.mods.contains(&m);
    match i.opcode {
        Opcode::Mbarrier | Opcode::Mapa => true,
        Opcode::Cp => has(Mod::Async) && (has(Mod::Mbarrier) || has(Mod::Bulk)),
        Opcode::St | Opcode::Red => has(Mod::Async),
        Opcode::Barrier => has(Mod::Cluster),
        _ => false,
    }
}

/// The generic address of `op` (an address operand in state space `space`) as an i64.
fn gaddr<'c, 'a>(
    l: &Lowerer<'c, 'a>,
    fs: &mut FnState<'c, 'a>,
    op: Option<&Operand<'a>>,
    space: Space,
    i: &Instruction<'a>,
) -> Result<IntValue<'c>, Error> {
    let Some(Operand::Addr(a)) = op else {
        return Err(Error::Invalid {
            msg: format!("`{}` expects an address operand here", spelling(i)),
            span: i.span,
        });
    };
    let p = l.to_generic(l.address(fs, a, space, i.span)?);
    Ok(l.b.build_ptr_to_int(p, l.i64(), "").unwrap())
}

/// The instruction's spelling as a C string, for the runtime's errors.
fn what<'c>(l: &Lowerer<'c, '_>, i: &Instruction) -> BasicValueEnum<'c> {
    l.b.build_global_string_ptr(&spelling(i), "mbar.what")
        .unwrap()
        .as_pointer_value()
        .into()
}

fn u32_of<'c, 'a>(
    l: &Lowerer<'c, 'a>,
    fs: &mut FnState<'c, 'a>,
    op: Option<&Operand<'a>>,
    default: u64,
) -> Result<BasicValueEnum<'c>, Error> {
    match op {
        Some(o) => l.operand(fs, o, Ty::u(32)),
        None => Ok(l.c32(default).into()),
    }
}

/// complete-tx of `bytes` on the mbarrier at `mbar`.
fn complete_tx<'c>(l: &Lowerer<'c, '_>, i: &Instruction, mbar: IntValue<'c>, bytes: IntValue<'c>) {
    let t = self_ptr(l);
    let neg = l.b.build_int_neg(bytes, "").unwrap();
    l.call(
        "ptx2llvm_rt_mbar_tx",
        None,
        &[t, what(l, i), mbar.into(), neg.into()],
    );
}

/// The mbarrier's own space: the instruction's `.shared{::cta,::cluster}`, else generic.
fn mbar_space(ins: &Ins) -> Space {
    match ins.space() {
        Some(Space::Shared | Space::SharedCluster) => Space::Shared,
        _ => Space::Generic,
    }
}

fn mbarrier<'c, 'a>(
    l: &Lowerer<'c, 'a>,
    fs: &mut FnState<'c, 'a>,
    ins: &Ins<'_, 'a>,
) -> Result<bool, Error> {
    let i = ins.i;
    let ops = ins.ops();
    let i32t: BasicTypeEnum = l.i32().into();
    let i64t = l.i64();
    if ins.has(Mod::PendingCount) {
        // The state holds the pending count before its arrive in bits 0..20.
        let s = l.operand(fs, &ops[1], Ty::b(64))?.into_int_value();
        let c =
            l.b.build_and(s, i64t.const_int((1 << 20) - 1, false), "")
                .unwrap();
        let c = l.b.build_int_truncate(c, l.i32(), "").unwrap();
        l.set(fs, &ops[0], c.into(), false)?;
        return Ok(true);
    }
    let space = mbar_space(ins);
    let t = self_ptr(l);
    let w = what(l, i);
    if ins.has(Mod::Init) {
        let a = gaddr(l, fs, ops.first(), space, i)?;
        let n = u32_of(l, fs, ops.get(1), 1)?;
        l.call("ptx2llvm_rt_mbar_init", None, &[t, w, a.into(), n]);
    } else if ins.has(Mod::Inval) {
        let a = gaddr(l, fs, ops.first(), space, i)?;
        l.call("ptx2llvm_rt_mbar_inval", None, &[t, w, a.into()]);
    } else if ins.has(Mod::Arrive) || ins.has(Mod::ArriveDrop) {
        let a = gaddr(l, fs, ops.get(1), space, i)?;
        let mut flags = 0;
        if ins.has(Mod::ArriveDrop) {
            flags |= ArriveFlag::Drop as u32;
        }
        if ins.has(Mod::NoComplete) {
            flags |= ArriveFlag::NoComplete as u32;
        }
        let (count, tx) = if ins.has(Mod::ExpectTx) {
            flags |= ArriveFlag::ExpectTx as u32;
            (l.c32(1).into(), u32_of(l, fs, ops.get(2), 0)?)
        } else {
            (u32_of(l, fs, ops.get(2), 1)?, l.c32(0).into())
        };
        let s = l.call_v(
            "ptx2llvm_rt_mbar_arrive",
            i64t.into(),
            &[t, w, a.into(), count, tx, l.c32(flags as u64).into()],
        );
        if !matches!(ops[0], Operand::Sink(_)) {
            l.set(fs, &ops[0], s, false)?;
        }
    } else if ins.has(Mod::ExpectTx) || ins.has(Mod::CompleteTx) {
        let a = gaddr(l, fs, ops.first(), space, i)?;
        let n = u32_of(l, fs, ops.get(1), 0)?.into_int_value();
        let n = l.b.build_int_z_extend(n, i64t, "").unwrap();
        if ins.has(Mod::CompleteTx) {
            complete_tx(l, i, a, n);
        } else {
            l.call("ptx2llvm_rt_mbar_tx", None, &[t, w, a.into(), n.into()]);
        }
    } else if ins.has(Mod::TestWait) || ins.has(Mod::TryWait) {
        let a = gaddr(l, fs, ops.get(1), space, i)?;
        let mut flags = 0;
        let x = if ins.has(Mod::Parity) {
            flags |= WaitFlag::Parity as u32;
            let p = l.operand(fs, &ops[2], Ty::u(32))?.into_int_value();
            l.b.build_int_z_extend(p, i64t, "").unwrap()
        } else {
            l.operand(fs, &ops[2], Ty::b(64))?.into_int_value()
        };
        if ins.has(Mod::TryWait) {
            flags |= WaitFlag::Try as u32;
        }
        let r = l.call_v(
            "ptx2llvm_rt_mbar_wait",
            i32t,
            &[t, w, a.into(), x.into(), l.c32(flags as u64).into()],
        );
        let p =
            l.b.build_int_compare(IntPredicate::NE, r.into_int_value(), l.c32(0), "")
                .unwrap();
        l.set(fs, &ops[0], p.into(), false)?;
    } else {
        return Err(unsupported(i));
    }
    Ok(true)
}

/// `cp.async.bulk` and `cp.reduce.async.bulk` (non-tensor), their group commits and waits
/// (done when issued: nothing to wait for) and `cp.async.bulk.prefetch` (a hint).
fn bulk<'c, 'a>(
    l: &Lowerer<'c, 'a>,
    fs: &mut FnState<'c, 'a>,
    ins: &Ins<'_, 'a>,
) -> Result<bool, Error> {
    let i = ins.i;
    let ops = ins.ops();
    if ins.has(Mod::Tensor) {
        return Err(unsupported(i));
    }
    if ins.has(Mod::CommitGroup) || ins.has(Mod::WaitGroup) || ins.has(Mod::Prefetch) {
        return Ok(true);
    }
    let to_shared = ins.has(Mod::MbarrierCompleteTxBytes);
    let (dspace, sspace) = if to_shared {
        let s = if ins.has(Mod::Global) {
            Space::Global
        } else {
            Space::Shared
        };
        (Space::Shared, s)
    } else {
        (Space::Global, Space::Shared)
    };
    let d = gaddr(l, fs, ops.first(), dspace, i)?;
    let s = gaddr(l, fs, ops.get(1), sspace, i)?;
    let size = u32_of(l, fs, ops.get(2), 0)?;
    let mbar = if to_shared {
        gaddr(l, fs, ops.get(3), Space::Shared, i)?
    } else {
        l.i64().const_zero()
    };
    let t = self_ptr(l);
    let w = what(l, i);
    if ins.has(Mod::Reduce) {
        let op = match ins.any(&[
            Mod::And,
            Mod::Or,
            Mod::Xor,
            Mod::Add,
            Mod::Inc,
            Mod::Dec,
            Mod::Min,
            Mod::Max,
        ]) {
            Some(Mod::And) => RedOp::And,
            Some(Mod::Or) => RedOp::Or,
            Some(Mod::Xor) => RedOp::Xor,
            Some(Mod::Add) => RedOp::Add,
            Some(Mod::Inc) => RedOp::Inc,
            Some(Mod::Dec) => RedOp::Dec,
            Some(Mod::Min) => RedOp::Min,
            Some(Mod::Max) => RedOp::Max,
            _ => return Err(unsupported(i)),
        };
        let ty = ins.ty();
        let rt = match (ty.is_float(), ty.is_signed(), ty.bits) {
            (true, _, 16) if ins.has(Mod::Bf16) => RedType::Bf16,
            (true, _, 16) => RedType::F16,
            (true, _, 32) => RedType::F32,
            (true, _, _) => RedType::F64,
            (false, true, 32) => RedType::S32,
            (false, true, _) => RedType::S64,
            (false, false, 32) => RedType::U32,
            (false, false, _) => RedType::U64,
        };
        l.call(
            "ptx2llvm_rt_bulk_reduce",
            None,
            &[
                t,
                w,
                d.into(),
                s.into(),
                size,
                mbar.into(),
                l.c32(op as u64).into(),
                l.c32(rt as u64).into(),
            ],
        );
    } else {
        // `.cp_mask`: the byte mask is the last operand.
        let mask = if ins.has(Mod::CpMask) {
            u32_of(l, fs, ops.last(), 0xffff)?
        } else {
            l.c32(0xffff).into()
        };
        l.call(
            "ptx2llvm_rt_bulk_copy",
            None,
            &[t, w, d.into(), s.into(), size, mbar.into(), mask],
        );
    }
    Ok(true)
}

/// `st.async` and `red.async`. The shared::cluster forms (and any form with an mbarrier
/// operand) must target a CTA other than the executing one (PTX ISA: otherwise undefined; an
/// H200 stops with an illegal instruction, compute-sanitizer: "Cluster needs to have at least
/// 2 blocks"). In a cluster of one CTA there is no other CTA, so executing one fails the
/// launch. The global forms are release stores and reductions.
fn async_store<'c, 'a>(
    l: &Lowerer<'c, 'a>,
    fs: &mut FnState<'c, 'a>,
    ins: &Ins<'_, 'a>,
) -> Result<bool, Error> {
    let i = ins.i;
    let ops = ins.ops();
    let space = match ins.space() {
        Some(Space::Global) => Space::Global,
        Some(Space::Shared | Space::SharedCluster) => Space::Shared,
        _ => Space::Generic,
    };
    if space == Space::Shared || ops.len() > 2 {
        let msg = format!(
            "`{}`: the destination is the shared memory of the executing CTA; `{}.async` must \
             target another CTA of the cluster (undefined behavior in the PTX ISA; the GPU stops \
             with an illegal instruction), and the cpu target runs clusters of one CTA",
            spelling(i),
            ins.op
        );
        let s = l.b.build_global_string_ptr(&msg, "async.own").unwrap();
        let t = self_ptr(l);
        l.call("ptx2llvm_rt_trap", None, &[t, s.as_pointer_value().into()]);
        return Ok(true);
    }
    let Some(Operand::Addr(a)) = ops.first() else {
        return Err(unsupported(i));
    };
    let base = l.to_generic(l.address(fs, a, space, i.span)?);
    let t = ins.ty();
    let items: Vec<&Operand<'a>> = match ops.get(1) {
        Some(Operand::Vec(v, _)) => v.iter().collect(),
        Some(o) => vec![o],
        None => return Err(unsupported(i)),
    };
    let bytes = (t.bits / 8) as u64 * items.len() as u64;
    if ins
        .sem()
        .is_some_and(|m| m != Mod::Relaxed && m != Mod::Weak)
    {
        fence(l.ctx, &l.b, Ordering::Release, "");
    }
    for (k, it) in items.iter().enumerate() {
        let v = l.operand(fs, it, t)?;
        let off = l.i64().const_int(k as u64 * (t.bits / 8) as u64, false);
        // SAFETY: `build_gep` only builds IR (element `k`'s byte offset from `base`); nothing is dereferenced here.
        let p = unsafe { l.b.build_gep(l.ctx.i8_type(), base, &[off], "").unwrap() };
        if ins.op == "st" {
            let s = l.b.build_store(p, v).unwrap();
            let _ = s.set_alignment(t.bits / 8);
            continue;
        }
        // `red.async` has integer types only and no exchange (the ISA table): `atom`'s mapping.
        let op = ins
            .any(&[
                Mod::Add,
                Mod::Min,
                Mod::Max,
                Mod::And,
                Mod::Or,
                Mod::Xor,
                Mod::Inc,
                Mod::Dec,
            ])
            .and_then(|m| crate::lower::atomic::rmw_op(m, t))
            .ok_or_else(|| unsupported(i))?;
        atomic_rmw(l.ctx, &l.b, op, p, v, Ordering::Monotonic, "");
    }
    if let Some(mb) = ops.get(2) {
        let m = gaddr(l, fs, Some(mb), Space::Shared, i)?;
        complete_tx(l, i, m, l.i64().const_int(bytes, false));
    }
    Ok(true)
}

/// Lowers `i` if it is one of this module's instructions; `Ok(false)` otherwise.
pub fn lower<'c, 'a>(
    l: &Lowerer<'c, 'a>,
    fs: &mut FnState<'c, 'a>,
    i: &Instruction<'a>,
) -> Result<bool, Error> {
    let has = |m: Mod| i.mods.contains(&m);
    let relevant = match i.opcode {
        Opcode::Mbarrier | Opcode::Mapa | Opcode::Getctarank => true,
        Opcode::Cp => has(Mod::Async) && (has(Mod::Mbarrier) || has(Mod::Bulk)),
        Opcode::St | Opcode::Red => has(Mod::Async),
        Opcode::Barrier => has(Mod::Cluster),
        Opcode::Fence => has(Mod::MbarrierInit),
        _ => false,
    };
    if !relevant {
        return Ok(false);
    }
    let ins = l.ins(i)?;
    let ops = ins.ops();
    match i.opcode {
        Opcode::Mbarrier => mbarrier(l, fs, &ins),
        // Copies are done when issued, so the arrive-on "upon completion of all prior
        // cp.async operations" is due now: with `.noinc` an arrive, without it an increment
        // and an arrive, which cancel (but the object is still checked).
        Opcode::Cp if ins.has(Mod::Mbarrier) && !ins.has(Mod::Bulk) => {
            let a = gaddr(l, fs, ops.first(), mbar_space(&ins), i)?;
            let t = self_ptr(l);
            let w = what(l, i);
            if ins.has(Mod::Noinc) {
                l.call_v(
                    "ptx2llvm_rt_mbar_arrive",
                    l.i64().into(),
                    &[
                        t,
                        w,
                        a.into(),
                        l.c32(1).into(),
                        l.c32(0).into(),
                        l.c32(0).into(),
                    ],
                );
            } else {
                let z = l.i64().const_zero();
                l.call("ptx2llvm_rt_mbar_tx", None, &[t, w, a.into(), z.into()]);
            }
            Ok(true)
        }
        Opcode::Cp => bulk(l, fs, &ins),
        Opcode::St | Opcode::Red => async_store(l, fs, &ins),
        // The cluster is this CTA alone.
        Opcode::Barrier => {
            let t = self_ptr(l);
            let f = if ins.has(Mod::Wait) {
                "ptx2llvm_rt_cluster_wait"
            } else {
                "ptx2llvm_rt_cluster_arrive"
            };
            l.call(f, None, &[t]);
            Ok(true)
        }
        // Orders the initialization before the arrives of other CTAs: a full fence, as
        // every fence here.
        Opcode::Fence => {
            fence(l.ctx, &l.b, Ordering::SeqCst, "");
            Ok(true)
        }
        // Rank 0 is this CTA: the address maps to itself.
        Opcode::Mapa => {
            let bits = ins.ty().bits;
            let a = l.operand(fs, &ops[1], Ty::u(bits))?;
            let r = l.operand(fs, &ops[2], Ty::u(32))?;
            if r.into_int_value().get_zero_extended_constant() != Some(0) {
                let t = self_ptr(l);
                l.call("ptx2llvm_rt_mapa_rank", None, &[t, r]);
            }
            l.set(fs, &ops[0], a, false)?;
            Ok(true)
        }
        Opcode::Getctarank => {
            let bits = ins.ty().bits;
            l.set(fs, &ops[0], l.int(bits).const_zero().into(), false)?;
            Ok(true)
        }
        _ => Ok(false),
    }
}
