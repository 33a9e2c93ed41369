//! cpu lowering of barriers, fences, warp-level operations, `nanosleep` and the clocks: each
//! becomes a call to a `ptx2llvm_rt_*` runtime entry point (see `runtime/entry.rs`) with
//! the calling thread's context, which the runtime returns from `ptx2llvm_rt_self()`.

use crate::isa::Mod;
use crate::llvm::*;
use crate::lower::{Error, FnState, Ins, Lowerer, Space, Ty};
use crate::runtime::abi::{bar_red, offset, redux, shfl, vote};
use crate::syntax::ast::{Instruction, Operand};

/// The program point of warp operation `i` for the runtime (`runtime/entry.rs`): its byte
/// offset in the PTX source, which tells two instructions apart (lanes are converged only at
/// the same one) and stays the same wherever LLVM copies the call.
pub(super) fn program_point<'c>(l: &Lowerer<'c, '_>, i: &Instruction) -> BasicValueEnum<'c> {
    l.c32(i.span.start as u64).into()
}

/// Marks runtime function `name` (declared) `convergent`: no optimization may make its calls
/// depend on more control flow than the PTX gave them. SimplifyCFG otherwise copies a CTA
/// barrier into both sides of a thread-dependent branch that follows it, which the warp
/// engine has to refuse (a barrier some lanes of a warp skip).
fn convergent(l: &Lowerer<'_, '_>, name: &str) {
    if let Some(f) = l.module.get_function(name) {
        let kind = inkwell::attributes::Attribute::get_named_enum_kind_id("convergent");
        f.add_attribute(
            inkwell::attributes::AttributeLoc::Function,
            l.ctx.create_enum_attribute(kind, 0),
        );
    }
}

/// The calling thread's `ptx2llvm_thread *`.
pub fn self_ptr<'c>(l: &Lowerer<'c, '_>) -> BasicValueEnum<'c> {
    let p = l.ptr(crate::lower::Space::Generic);
    l.call_v("ptx2llvm_rt_self", p.into(), &[])
}

fn pred_slot<'c, 'a>(l: &Lowerer<'c, 'a>, fs: &mut FnState<'c, 'a>) -> PointerValue<'c> {
    l.alloca(fs, l.i32().into(), 4, "pred.out")
}

fn load_pred<'c>(l: &Lowerer<'c, '_>, slot: PointerValue<'c>) -> BasicValueEnum<'c> {
    let v = l.b.build_load(l.i32(), slot, "").unwrap().into_int_value();
    l.b.build_int_compare(IntPredicate::NE, v, l.i32().const_zero(), "")
        .unwrap()
        .into()
}

/// Stores a `d|p` result pair (or `d` alone).
fn set_pair<'c, 'a>(
    l: &Lowerer<'c, 'a>,
    fs: &mut FnState<'c, 'a>,
    op: &Operand<'a>,
    d: BasicValueEnum<'c>,
    p: BasicValueEnum<'c>,
) -> Result<(), Error> {
    match op {
        Operand::Pair(a, b, _) => {
            l.set(fs, a, d, false)?;
            l.set(fs, b, p, false)
        }
        other => l.set(fs, other, d, false),
    }
}

/// "not supported on the cpu target: `OPCODE.MODIFIERS`", as the inline-assembly fallback
/// says it.
pub(super) fn unsupported(i: &Instruction) -> Error {
    Error::Unsupported {
        msg: format!("not supported on the cpu target: `{}`", spelling(i)),
        span: i.span,
    }
}

/// `OPCODE.MODIFIERS` of `i`, as the errors name it.
pub(super) fn spelling(i: &Instruction) -> String {
    let full = crate::lower::inline_asm::spell(i);
    full.split_whitespace().next().unwrap_or("").to_string()
}

/// `cp.async.{ca,cg}.shared.global [dst], [src], cp-size{, src-size | ignore-src}{, policy}`:
/// copies `src-size` bytes (all `cp-size` without it, none when `ignore-src` is true) and
/// zero-fills the rest of the `cp-size` bytes at `dst`.
fn cp_async<'c, 'a>(
    l: &Lowerer<'c, 'a>,
    fs: &mut FnState<'c, 'a>,
    ins: &Ins<'_, 'a>,
    ops: &[Operand<'a>],
) -> Result<(), Error> {
    let i = ins.i;
    let bad = |m: &str| Error::Invalid {
        msg: m.to_string(),
        span: i.span,
    };
    let (Some(Operand::Addr(d)), Some(Operand::Addr(s))) = (ops.first(), ops.get(1)) else {
        return Err(bad("cp.async expects [dst], [src], cp-size"));
    };
    let n = match ops.get(2) {
        Some(o @ Operand::Imm(_)) => l
            .operand(fs, o, Ty::b(32))?
            .into_int_value()
            .get_zero_extended_constant(),
        _ => None,
    };
    let Some(n @ (4 | 8 | 16)) = n else {
        return Err(bad("cp.async: cp-size must be the constant 4, 8 or 16"));
    };
    let mut rest = &ops[3.min(ops.len())..];
    if ins.has(Mod::L2CacheHint) && !rest.is_empty() {
        rest = &rest[..rest.len() - 1];
    }
    let dst = l.address(fs, d, crate::lower::Space::Shared, i.span)?;
    let src = l.address(fs, s, crate::lower::Space::Global, i.span)?;
    let i64t = l.i64();
    let full = i64t.const_int(n, false);
    let pred = match rest.first() {
        Some(Operand::Name { name, .. }) => {
            l.reg(fs, name).is_some_and(|(_, t, _)| l.bits_of(t) == 1)
        }
        _ => false,
    };
    let count = match rest.first() {
        None => full,
        Some(o) if pred => {
            let ignore = l.operand(fs, o, Ty::PRED)?.into_int_value();
            l.b.build_select(ignore, i64t.const_zero(), full, "")
                .unwrap()
                .into_int_value()
        }
        Some(o) => {
            // More than cp-size is undefined; copy at most cp-size.
            let v = l.operand(fs, o, Ty::b(32))?.into_int_value();
            let v = l.b.build_int_z_extend(v, i64t, "").unwrap();
            let less =
                l.b.build_int_compare(IntPredicate::ULT, v, full, "")
                    .unwrap();
            l.b.build_select(less, v, full, "")
                .unwrap()
                .into_int_value()
        }
    };
    // The bytes below `count` come from `src` (a masked load touches no others), the rest
    // are zero; the store is one of `cp-size` bytes, as st.shared would do it.
    let vt = l.ctx.i8_type().vec_type(n as u32);
    let lanes: Vec<_> = (0..n).map(|k| i64t.const_int(k, false)).collect();
    let iota = inkwell::types::VectorType::const_vector(&lanes);
    let splat =
        l.b.build_insert_element(
            i64t.vec_type(n as u32).get_undef(),
            count,
            l.i32().const_zero(),
            "",
        )
        .unwrap();
    let splat =
        l.b.build_shuffle_vector(
            splat,
            i64t.vec_type(n as u32).get_undef(),
            l.i32().vec_type(n as u32).const_zero(),
            "",
        )
        .unwrap();
    let mask =
        l.b.build_int_compare(IntPredicate::ULT, iota, splat, "")
            .unwrap();
    let v = l.call_v(
        &format!("llvm.masked.load.v{n}i8.p0"),
        vt.into(),
        &[src.into(), mask.into(), vt.const_zero().into()],
    );
    let st = l.b.build_store(dst, v).unwrap();
    let _ = st.set_alignment(n as u32);
    Ok(())
}

pub fn lower<'c, 'a>(
    l: &Lowerer<'c, 'a>,
    fs: &mut FnState<'c, 'a>,
    i: &Instruction<'a>,
) -> Result<bool, Error> {
    if super::mbarrier::lower(l, fs, i)? {
        return Ok(true);
    }
    let ins = l.ins(i)?;
    let ops = ins.ops();
    let b32 = Ty::b(32);
    let i32t: BasicTypeEnum = l.i32().into();
    let c32 = |v: u32| -> BasicValueEnum<'c> { l.c32(v as u64).into() };
    let pc = program_point(l, i);
    match ins.op {
        "bar" if ins.has(Mod::Warp) => {
            let m = l.operand(fs, &ops[0], b32)?;
            let t = self_ptr(l);
            l.call("ptx2llvm_rt_bar_warp_sync", None, &[t, pc, m]);
            Ok(true)
        }
        "bar" | "barrier" => {
            // `barrier.cluster` is `mbarrier.rs`'s.
            if ins.has(Mod::Cluster) || ops.is_empty() {
                return Err(unsupported(i));
            }
            let t = self_ptr(l);
            if ins.has(Mod::Red) {
                let op = match ins.any(&[Mod::Popc, Mod::And, Mod::Or]) {
                    Some(Mod::Popc) => bar_red::POPC,
                    Some(Mod::And) => bar_red::AND,
                    _ => bar_red::OR,
                };
                // d, a{, b}, {!}c
                let id = l.operand(fs, &ops[1], b32)?;
                let count = if ops.len() == 4 {
                    l.operand(fs, &ops[2], b32)?
                } else {
                    c32(0)
                };
                let p = l.operand(fs, &ops[ops.len() - 1], Ty::PRED)?;
                let p = l.coerce(p, i32t, false);
                let r = l.call_v("ptx2llvm_rt_barrier_red", i32t, &[t, id, count, c32(op), p]);
                convergent(l, "ptx2llvm_rt_barrier_red");
                let r = if op == bar_red::POPC {
                    r
                } else {
                    l.coerce(r, l.i1().into(), false)
                };
                l.set(fs, &ops[0], r, false)?;
                return Ok(true);
            }
            let id = l.operand(fs, &ops[0], b32)?;
            let count = if ops.len() > 1 {
                l.operand(fs, &ops[1], b32)?
            } else {
                c32(0)
            };
            let f = if ins.has(Mod::Arrive) {
                "ptx2llvm_rt_barrier_arrive"
            } else {
                "ptx2llvm_rt_barrier_sync"
            };
            l.call(f, None, &[t, id, count]);
            convergent(l, f);
            Ok(true)
        }
        // Every fence is a sequentially consistent host fence: at least as strong as any PTX
        // fence. Proxy fences order the generic proxy against the async/texture/tensormap
        // proxies; with no asynchronous copy engines here a full fence covers them.
        "fence" | "membar" => {
            fence(l.ctx, &l.b, Ordering::SeqCst, "");
            Ok(true)
        }
        // Hints with no effect on a CPU: L2 eviction priority, discarding cached lines (their
        // contents become undefined: keeping them is allowed), register-count changes and
        // programmatic dependent launch (launches run one after another, so a grid's
        // prerequisites are always complete).
        "applypriority" | "discard" | "setmaxnreg" | "griddepcontrol" => Ok(true),
        // A cache policy only feeds `.L2::cache_hint` operands, which the lowering drops.
        "createpolicy" => {
            l.set(fs, &ops[0], l.i64().const_zero().into(), false)?;
            Ok(true)
        }
        // `exit` in a device function (a kernel's own `exit` returns from its body): the
        // runtime ends the CUDA thread.
        "exit" => {
            let t = self_ptr(l);
            l.call("ptx2llvm_rt_exit", None, &[t]);
            Ok(true)
        }
        // Generic addresses: shared ones lie in the CTA's block [t->shared, +total size);
        // everything else is global memory (`.local` and `.const` data live in host memory
        // that generic addressing cannot tell apart, so those answer false).
        "isspacep" => {
            let space = match ins.space() {
                Some(Space::Global) => Some(0),
                Some(Space::Shared | Space::SharedCluster) => Some(1),
                Some(Space::Const | Space::Local | Space::Param) => Some(2),
                _ => None,
            };
            let Some(space) = space else {
                return Ok(false);
            };
            let r: BasicValueEnum = if space == 2 {
                l.i1().const_zero().into()
            } else {
                let i64t = l.i64();
                let a = l.operand(fs, &ops[1], Ty::u(64))?.into_int_value();
                let t = self_ptr(l).into_pointer_value();
                let field = |off: u32, ty: BasicTypeEnum<'c>| {
                    let idx = i64t.const_int(off as u64, false);
                    // SAFETY: `build_gep` only builds IR (a field of the context block); nothing is dereferenced here.
                    let p = unsafe { l.b.build_gep(l.ctx.i8_type(), t, &[idx], "").unwrap() };
                    l.b.build_load(ty, p, "").unwrap()
                };
                let base = field(offset::SHARED, l.ptr(crate::lower::Space::Generic).into())
                    .into_pointer_value();
                let size = field(offset::TOTAL_SMEM_SIZE, l.i32().into()).into_int_value();
                let base = l.b.build_ptr_to_int(base, i64t, "").unwrap();
                let off = l.b.build_int_sub(a, base, "").unwrap();
                let size = l.b.build_int_z_extend(size, i64t, "").unwrap();
                let inside =
                    l.b.build_int_compare(IntPredicate::ULT, off, size, "in.shared")
                        .unwrap();
                if space == 1 {
                    inside.into()
                } else {
                    l.b.build_not(inside, "").unwrap().into()
                }
            };
            l.set(fs, &ops[0], r, false)?;
            Ok(true)
        }
        "activemask" => {
            let t = self_ptr(l);
            let r = l.call_v("ptx2llvm_rt_activemask", i32t, &[t, pc]);
            l.set(fs, &ops[0], r, false)?;
            Ok(true)
        }
        "shfl" => {
            let mode = shfl_mode(&ins);
            let a = l.operand(fs, &ops[1], b32)?;
            let b = l.operand(fs, &ops[2], b32)?;
            let c = l.operand(fs, &ops[3], b32)?;
            let t = self_ptr(l);
            // Without `.sync` (sm_6x and older): the lanes converged at this instruction take
            // part.
            let m = if ops.len() == 5 {
                l.operand(fs, &ops[4], b32)?
            } else {
                l.call_v("ptx2llvm_rt_activemask", i32t, &[t, pc])
            };
            let slot = pred_slot(l, fs);
            let r = l.call_v(
                "ptx2llvm_rt_shfl",
                i32t,
                &[t, pc, c32(mode), a, b, c, m, slot.into()],
            );
            let p = load_pred(l, slot);
            set_pair(l, fs, &ops[0], r, p)?;
            Ok(true)
        }
        "vote" => {
            let mode = vote_mode(&ins);
            let p = l.operand(fs, &ops[1], Ty::PRED)?;
            let p = l.coerce(p, i32t, false);
            let t = self_ptr(l);
            let m = if ops.len() == 3 {
                l.operand(fs, &ops[2], b32)?
            } else {
                l.call_v("ptx2llvm_rt_activemask", i32t, &[t, pc])
            };
            let r = l.call_v("ptx2llvm_rt_vote", i32t, &[t, pc, c32(mode), m, p]);
            let r = if mode == vote::BALLOT {
                r
            } else {
                l.coerce(r, l.i1().into(), false)
            };
            l.set(fs, &ops[0], r, false)?;
            Ok(true)
        }
        "match" => {
            let bits = ins.ty().bits;
            let a = l.operand(fs, &ops[1], Ty::b(bits))?;
            let m = l.operand(fs, &ops[2], b32)?;
            let t = self_ptr(l);
            let sfx = if bits == 64 { "u64" } else { "u32" };
            if ins.has(Mod::Any) {
                let r = l.call_v(
                    &format!("ptx2llvm_rt_match_any_{sfx}"),
                    i32t,
                    &[t, pc, m, a],
                );
                l.set(fs, &ops[0], r, false)?;
            } else {
                let slot = pred_slot(l, fs);
                let r = l.call_v(
                    &format!("ptx2llvm_rt_match_all_{sfx}"),
                    i32t,
                    &[t, pc, m, a, slot.into()],
                );
                let p = load_pred(l, slot);
                set_pair(l, fs, &ops[0], r, p)?;
            }
            Ok(true)
        }
        "redux" => {
            let t_ = ins.ty();
            let op = redux_op(&ins);
            let a = l.operand(fs, &ops[1], b32)?;
            let m = l.operand(fs, &ops[2], b32)?;
            let t = self_ptr(l);
            let r = l.call_v("ptx2llvm_rt_redux", i32t, &[t, pc, c32(op), a, m]);
            let r = if t_.is_float() {
                l.b.build_bit_cast(r, l.ctx.f32_type(), "").unwrap()
            } else {
                r
            };
            l.set(fs, &ops[0], r, false)?;
            Ok(true)
        }
        "elect" => {
            let m = l.operand(fs, &ops[1], b32)?;
            let t = self_ptr(l);
            let slot = pred_slot(l, fs);
            let r = l.call_v("ptx2llvm_rt_elect", i32t, &[t, pc, m, slot.into()]);
            let p = load_pred(l, slot);
            match &ops[0] {
                Operand::Pair(..) => set_pair(l, fs, &ops[0], r, p)?,
                d => l.set(fs, d, p, false)?,
            }
            Ok(true)
        }
        // Asynchronous copies global -> shared: done when issued, so the groups' commits and
        // waits have nothing left to wait for. (A thread may not read the destination before
        // its wait, so an early copy is one the program cannot tell apart.)
        "cp" if ins.has(Mod::Async)
            && (ins.has(Mod::CommitGroup) || ins.has(Mod::WaitGroup) || ins.has(Mod::WaitAll)) =>
        {
            Ok(true)
        }
        "cp" if ins.has(Mod::Async)
            && (ins.has(Mod::Ca) || ins.has(Mod::Cg))
            && ins.any(&[Mod::Bulk, Mod::Mbarrier, Mod::Tensor]).is_none() =>
        {
            cp_async(l, fs, &ins, ops)?;
            Ok(true)
        }
        "nanosleep" => {
            let ns = l.operand(fs, &ops[0], b32)?;
            let t = self_ptr(l);
            l.call("ptx2llvm_rt_nanosleep", None, &[t, ns]);
            Ok(true)
        }
        "pmevent" | "brkpt" => Ok(true),
        "mma" | "ldmatrix" | "stmatrix" | "movmatrix" | "wmma" => super::matrix::lower(l, fs, i),
        _ => Ok(false),
    }
}

/// The runtime's code for a `redux.sync`: the operation (by type for `min`/`max`) and the
/// `.abs`/`.NaN` flags (`runtime::abi::redux`).
pub(crate) fn redux_op(ins: &Ins) -> u32 {
    let t = ins.ty();
    let mut op = match ins.any(&[Mod::Add, Mod::Min, Mod::Max, Mod::And, Mod::Or, Mod::Xor]) {
        Some(Mod::Add) => redux::ADD,
        Some(Mod::Min) if t.is_float() => redux::MIN_F32,
        Some(Mod::Max) if t.is_float() => redux::MAX_F32,
        Some(Mod::Min) if t.is_signed() => redux::MIN_S32,
        Some(Mod::Max) if t.is_signed() => redux::MAX_S32,
        Some(Mod::Min) => redux::MIN_U32,
        Some(Mod::Max) => redux::MAX_U32,
        Some(Mod::And) => redux::AND,
        Some(Mod::Or) => redux::OR,
        _ => redux::XOR,
    };
    if ins.has(Mod::Abs) {
        op |= redux::FLAG_ABS;
    }
    if ins.has(Mod::NaN) {
        op |= redux::FLAG_NAN;
    }
    op
}

/// The runtime's code for a `shfl` mode (`runtime::abi::shfl`).
pub(crate) fn shfl_mode(ins: &Ins) -> u32 {
    match ins.any(&[Mod::Up, Mod::Down, Mod::Bfly, Mod::Idx]) {
        Some(Mod::Up) => shfl::UP,
        Some(Mod::Down) => shfl::DOWN,
        Some(Mod::Bfly) => shfl::BFLY,
        _ => shfl::IDX,
    }
}

/// The runtime's code for a `vote` mode (`runtime::abi::vote`).
pub(crate) fn vote_mode(ins: &Ins) -> u32 {
    match ins.any(&[Mod::All, Mod::Any, Mod::Uni, Mod::Ballot]) {
        Some(Mod::All) => vote::ALL,
        Some(Mod::Any) => vote::ANY,
        Some(Mod::Uni) => vote::UNI,
        _ => vote::BALLOT,
    }
}
