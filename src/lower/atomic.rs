//! `atom` and `red` (PTX ISA 9.2 §9.7.13.5/6): integer and bit operations as `atomicrmw`
//! (inc/dec as `uinc_wrap`/`udec_wrap`) or `cmpxchg` (`.b16`, `.b32`, `.b64`, `.b128`);
//! float `.add` as `atomicrmw fadd` on `.f32`, `.f64`, `.f16`, `.bf16` and per element on
//! `.f16x2`/`.bf16x2` and the `.v2/.v4/.v8` vector forms ("atomicity is guaranteed separately
//! for each of the individual scalar elements"); float `.min`/`.max` as a `cmpxchg` loop around
//! PTX `min`/`max` (a NaN operand yields the other, -0.0 < +0.0). The PTX scope is the LLVM
//! sync scope and the semantics (default `.relaxed`) the ordering. Cache hints are dropped;
//! `.noftz` is the IEEE behaviour of LLVM's float atomics.

use super::fp;
use super::*;

/// The PTX `.sem` as an LLVM ordering (default `.relaxed` = monotonic).
fn ordering(ins: &Ins) -> Ordering {
    match ins.sem() {
        Some(Mod::Acquire) => Ordering::Acquire,
        Some(Mod::Release) => Ordering::Release,
        Some(Mod::AcqRel) => Ordering::AcqRel,
        _ => Ordering::Monotonic,
    }
}

/// An atomic read-modify-write of the float at `ptr` computing `new = f(old)` with a
/// `cmpxchg` loop on its bit pattern; returns the old value.
fn cas_loop<'c, 'a>(
    l: &Lowerer<'c, 'a>,
    fs: &mut FnState<'c, 'a>,
    ptr: PointerValue<'c>,
    ft: FloatType<'c>,
    ord: Ordering,
    scope: &str,
    f: impl Fn(FloatValue<'c>) -> FloatValue<'c>,
) -> FloatValue<'c> {
    let w = fp::fbits(l, ft);
    let it = l.int(w);
    let init = l.b.build_load(it, ptr, "").unwrap();
    set_alignment(raw(init), w / 8);
    set_atomic(l.ctx, raw(init), Ordering::Monotonic, scope);
    let pre = l.b.get_insert_block().unwrap();
    let body = l.new_block(fs, "atom.loop");
    let done = l.new_block(fs, "atom.done");
    l.b.build_unconditional_branch(body).unwrap();
    l.b.position_at_end(body);
    let phi = l.b.build_phi(it, "").unwrap();
    let old_bits = phi.as_basic_value().into_int_value();
    let old = fp::from_bits(l, old_bits, ft);
    let new = fp::to_bits(l, f(old));
    let seen =
        atomic_cmpxchg(l.ctx, &l.b, ptr, old_bits.into(), new.into(), ord, scope).into_int_value();
    let ok =
        l.b.build_int_compare(IntPredicate::EQ, seen, old_bits, "")
            .unwrap();
    phi.add_incoming(&[(&init, pre), (&seen, body)]);
    l.b.build_conditional_branch(ok, done, body).unwrap();
    l.b.position_at_end(done);
    old
}

/// The LLVM read-modify-write operation of atom/red operation `m` on elements of type `t`
/// (`None` for one that is not a single `atomicrmw`: `cas`, float min/max). `t` picks float add
/// and signed min/max.
pub fn rmw_op(m: Mod, t: Ty) -> Option<RmwOp> {
    Some(match (m, t.k) {
        (Mod::Add, K::F | K::BF) => RmwOp::FAdd,
        (Mod::Add, _) => RmwOp::Add,
        (Mod::Min, K::S) => RmwOp::Min,
        (Mod::Max, K::S) => RmwOp::Max,
        (Mod::Min, _) => RmwOp::UMin,
        (Mod::Max, _) => RmwOp::UMax,
        (Mod::And, _) => RmwOp::And,
        (Mod::Or, _) => RmwOp::Or,
        (Mod::Xor, _) => RmwOp::Xor,
        (Mod::Exch, _) => RmwOp::Xchg,
        (Mod::Inc, _) => RmwOp::UIncWrap,
        (Mod::Dec, _) => RmwOp::UDecWrap,
        _ => return None,
    })
}

pub fn lower<'c, 'a>(
    l: &Lowerer<'c, 'a>,
    fs: &mut FnState<'c, 'a>,
    ins: &Ins<'_, 'a>,
) -> Result<bool, Error> {
    let ops = ins.ops();
    let t = ins.ty();
    let is_red = ins.op == "red";
    if ins.has(Mod::Async) || ins.has(Mod::Mmio) {
        return Ok(false);
    }
    let (addr, rest) = if is_red {
        (&ops[0], &ops[1..])
    } else {
        (&ops[1], &ops[2..])
    };
    let Operand::Addr(a) = addr else {
        return Ok(false);
    };
    let space = ins.space().unwrap_or(Space::Generic);
    if space == Space::Param {
        return Ok(false);
    }
    let base = l.address(fs, a, space, addr.span())?;
    let ord = ordering(ins);
    let scope = memory::scope_name(ins);
    let Some(opname) = ins.any(&[
        Mod::Add,
        Mod::Min,
        Mod::Max,
        Mod::And,
        Mod::Or,
        Mod::Xor,
        Mod::Exch,
        Mod::Cas,
        Mod::Inc,
        Mod::Dec,
    ]) else {
        return Ok(false);
    };
    // Scalar elements: vectors and packed types are element-wise.
    let nvec = ins.vec_width().map_or(1, u32::from);
    let (et, lanes) = match t.k {
        K::F16x2 => (Ty::f(16), 2),
        K::BF16x2 => (Ty { k: K::BF, bits: 16 }, 2),
        _ => (t, 1),
    };
    let n = nvec * lanes;
    // A privatized 32-bit integer addition tests its alignment only where its address is new
    // to the worker's table (`Target::private_red_add`): a key found there was tested when it
    // entered, and no misaligned address equals one, so the common case costs no test.
    let private_u32 = fs.private_reds
        && space == Space::Global
        && opname == Mod::Add
        && !et.is_float()
        && et.bits == 32
        && n == 1;
    if !private_u32 {
        memory::check_aligned(
            l,
            base,
            n * et.bits / 8,
            crate::runtime::fault::MisalignedAccess::Atomic,
        );
    }
    // Source values, element by element.
    let items: Vec<&Operand<'a>> = match &rest[0] {
        Operand::Vec(v, _) => v.iter().collect(),
        o => vec![o],
    };
    let mut srcs: Vec<BasicValueEnum<'c>> = Vec::new();
    for it in &items {
        let v = l.operand(fs, it, t)?;
        if lanes > 1 {
            srcs.extend(
                super::float::split(l, v)
                    .into_iter()
                    .map(BasicValueEnum::from),
            );
        } else {
            srcs.push(v);
        }
    }
    if srcs.len() != n as usize {
        return Err(invalid(
            ins.span(),
            "vector operand size does not match the vector qualifier",
        ));
    }
    let ety = et.llvm(l.ctx);
    let mut olds: Vec<BasicValueEnum<'c>> = Vec::new();
    for (k, b) in srcs.iter().enumerate() {
        let ptr = if k == 0 {
            base
        } else {
            let off = l.i64().const_int((k as u32 * et.bits / 8) as u64, false);
            // SAFETY: `build_gep` only builds IR (a byte offset from `base`); nothing is dereferenced here.
            unsafe { l.b.build_gep(l.ctx.i8_type(), base, &[off], "").unwrap() }
        };
        let old: BasicValueEnum<'c> = if opname == Mod::Cas {
            let c = l.operand(fs, &rest[1], t)?;
            let it: BasicTypeEnum = l.int(t.bits).into();
            let (b2, c2) = (l.coerce(*b, it, false), l.coerce(c, it, false));
            let r = atomic_cmpxchg(l.ctx, &l.b, ptr, b2, c2, ord, scope);
            l.coerce(r, ety, false)
        } else if et.is_float() && matches!(opname, Mod::Min | Mod::Max) {
            let ft = ety.into_float_type();
            let bv = b.into_float_value();
            let is_max = opname == Mod::Max;
            cas_loop(l, fs, ptr, ft, ord, scope, |old| {
                fp::minmax(l, is_max, false, false, old, bv)
            })
            .into()
        } else if fs.private_reds
            && space == Space::Global
            && opname == Mod::Add
            && (!et.is_float() || et.k == K::F)
            && matches!(et.bits, 32 | 64)
            && n == 1
        {
            // Summed (integers) or logged (floats) per worker, added to memory when the
            // worker is done (`runtime/red.rs`); nothing in the kernel reads the old value
            // (`Target::private_reductions`). A float value is canonicalized as below.
            let v = if et.is_float() {
                fp::gpu_nan(l, b.into_float_value()).into()
            } else {
                *b
            };
            let hint = if et.is_float() || et.bits != 32 {
                None
            } else {
                base_hint(l, fs, a)
            };
            l.target.private_red_add(l, fs, ptr, v, (ord, scope), hint);
            ety.const_zero()
        } else {
            let Some(op) = rmw_op(opname, et) else {
                return Ok(false);
            };
            let v = if et.is_float() && op != RmwOp::FAdd {
                l.coerce(*b, l.int(et.bits).into(), false)
            } else if op == RmwOp::FAdd {
                // The GPU's narrow float sums have one NaN whatever the operands' payloads
                // (`fp::gpu_nan`); the host's `fadd` keeps a NaN operand's. The added value
                // canonicalized, a NaN sum of a number in memory is the GPU's. (The compare
                // and blend are the atomic's own, once per call: the value's payload is seen by
                // no one else, so `simd::nan` drops a block reduction's canonicalizations of
                // the sums it keeps in shared memory on their way here.)
                fp::gpu_nan(l, b.into_float_value()).into()
            } else {
                *b
            };
            let r = atomic_rmw(l.ctx, &l.b, op, ptr, v, ord, scope);
            l.coerce(r, ety, false)
        };
        olds.push(old);
    }
    if is_red || matches!(ops[0], Operand::Sink(_)) {
        return Ok(true);
    }
    // Destinations: one per vector element; packed lanes joined.
    let dests: Vec<&Operand<'a>> = match &ops[0] {
        Operand::Vec(v, _) => v.iter().collect(),
        o => vec![o],
    };
    for (k, d) in dests.iter().enumerate() {
        let v = if lanes > 1 {
            let xs: Vec<FloatValue<'c>> = olds[k * 2..k * 2 + 2]
                .iter()
                .map(|v| v.into_float_value())
                .collect();
            super::float::join(l, t, &xs)
        } else {
            olds[k]
        };
        l.set(fs, d, v, t.is_signed())?;
    }
    Ok(true)
}

/// The register an operand names, whole (no component, not negated).
fn reg_name<'a>(o: Option<&Operand<'a>>) -> Option<&'a str> {
    match o {
        Some(Operand::Name {
            name,
            comp: None,
            negated: false,
            ..
        }) => Some(*name),
        _ => None,
    }
}

/// The one instruction of the function whose destination is register `r`, unguarded; `None`
/// when there are several (a register written in more than one place) or none.
fn single_def<'x, 'a>(
    fs: &'x FnState<'_, 'a>,
    r: &str,
) -> Option<&'x crate::syntax::ast::Instruction<'a>> {
    let mut defs = fs
        .nodes
        .iter()
        .filter(|i| reg_name(i.operands.first()) == Some(r));
    let d = *defs.next()?;
    (defs.next().is_none() && d.guard.is_none()).then_some(d)
}

/// Whether instruction `i` carries modifier `m`.
fn has_mod(i: &crate::syntax::ast::Instruction, m: &str) -> bool {
    i.mods.iter().any(|x| x.spelling() == m)
}

/// Whether operand `o` is the integer constant `k`.
fn is_int(o: Option<&Operand<'_>>, k: u64) -> bool {
    matches!(o, Some(Operand::Imm(crate::syntax::ast::Expr::Int { value, .. })) if *value == k)
}

/// Whether register `o` has one definition, `mul.wide.u32 o, x, 4`, where `x` is a byte:
/// `cvt.u32.u8`, a `.u8`/`.b8` load (zero-extended into its register) or `and` with 255 (a
/// bin index of a 256-bin histogram). Then `B + o` stays in a 1 KiB window, which only such
/// sites use (`base_hint`): elsewhere (a histogram's merge loop, `if (s[b]) atomicAdd(&g[b],
/// s[b])` over a signed index) the window's tests stayed in the loop and cost as much as the
/// table's lookup they replaced.
fn byte_offset(fs: &FnState<'_, '_>, o: &str) -> bool {
    let Some(m) = single_def(fs, o) else {
        return false;
    };
    if m.opcode.spelling() != "mul"
        || !has_mod(m, ".wide")
        || !has_mod(m, ".u32")
        || !is_int(m.operands.get(2), 4)
    {
        return false;
    }
    let Some(x) = reg_name(m.operands.get(1)).and_then(|x| single_def(fs, x)) else {
        return false;
    };
    match x.opcode.spelling() {
        "cvt" => has_mod(x, ".u8"),
        "ld" => has_mod(x, ".u8") || has_mod(x, ".b8"),
        "and" => is_int(x.operands.get(2), 255),
        _ => false,
    }
}

/// The value of the base register `B` of address `a` when its register `R` has one definition
/// in the function, `add.{s64,u64,b64} R, B, X` (unguarded) with `X` a byte's offset
/// (`byte_offset`): `[R]` is `B` plus an offset, which a target's check of the additions at
/// `B` (`Target::private_red_add`) sees through once the registers are SSA values (a
/// histogram's `hist + 4 * bin`). `B`'s value is read here, at the addition: a wrong guess
/// (`B` written between) only leaves that check unfolded.
fn base_hint<'c, 'a>(
    l: &Lowerer<'c, 'a>,
    fs: &mut FnState<'c, 'a>,
    a: &crate::syntax::ast::Address<'a>,
) -> Option<PointerValue<'c>> {
    let r = a.base?;
    let d = single_def(fs, r)?;
    if d.opcode.spelling() != "add" || ![".s64", ".u64", ".b64"].iter().any(|m| has_mod(d, m)) {
        return None;
    }
    let b = reg_name(d.operands.get(1)).filter(|&b| b != r)?;
    if !byte_offset(fs, reg_name(d.operands.get(2))?) {
        return None;
    }
    let (slot, st, _) = l.reg(fs, b)?;
    if st != l.i64().into() {
        return None;
    }
    let v = l.b.build_load(st, slot, "").unwrap().into_int_value();
    Some(l.b.build_int_to_ptr(v, l.ptr(Space::Global), "").unwrap())
}
