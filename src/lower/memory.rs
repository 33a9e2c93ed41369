//! Loads and stores: `ld`/`st`/`ldu`/`ld.global.nc` with vectors, `.volatile`, and the memory
//! model's `.relaxed`/`.acquire`/`.release` with scopes as LLVM atomic orderings and sync
//! scopes. `.param` accesses read arguments and write return/call slots. Cache hints
//! (`.L2::cache_hint`, `.L2::256B`, eviction priorities) are performance advice and are
//! dropped; `prefetch` is a no-op hint. `.b128` and `.v8` accesses are 128-bit integers and
//! 8-element vectors.

use super::*;

/// The LLVM sync-scope name of a PTX scope modifier (default `.gpu`).
pub fn scope_name(ins: &Ins) -> &'static str {
    match ins.scope() {
        Some(Mod::Cta) => "block",
        Some(Mod::Cluster) => "cluster",
        Some(Mod::Sys) => "",
        _ => "device",
    }
}

/// `alloca`, `stacksave`, `stackrestore` (PTX ISA 9.2 §9.7.17): dynamic stack allocation with
/// LLVM's `alloca` and `llvm.stacksave`/`llvm.stackrestore`; pointers are local-window
/// addresses (like `.local` variables).
fn stack<'c, 'a>(
    l: &Lowerer<'c, 'a>,
    fs: &mut FnState<'c, 'a>,
    ins: &Ins<'_, 'a>,
) -> Result<bool, Error> {
    let ops = ins.ops();
    let t = ins.ty();
    let it = l.int(t.bits);
    let lp = l.ptr(Space::Local);
    let to_local = |p: PointerValue<'c>| {
        if p.get_type() == lp {
            p
        } else {
            l.b.build_address_space_cast(p, lp, "").unwrap()
        }
    };
    match ins.op {
        "alloca" => {
            let size = l.operand(fs, &ops[1], t)?.into_int_value();
            let align = match ops.get(2) {
                Some(Operand::Imm(e)) => {
                    crate::syntax::consteval::eval(e).map_or(8, |c| c.bits as u32)
                }
                _ => 8,
            };
            let p = l.b.build_array_alloca(l.ctx.i8_type(), size, "").unwrap();
            set_alignment(raw(p), align.max(8));
            let v = l.b.build_ptr_to_int(to_local(p), it, "").unwrap();
            l.set(fs, &ops[0], v.into(), false)?;
        }
        "stacksave" => {
            let p0 = l.ctx.ptr_type(AddressSpace::default());
            let p = l
                .call_v("llvm.stacksave.p0", p0.into(), &[])
                .into_pointer_value();
            let v = l.b.build_ptr_to_int(to_local(p), it, "").unwrap();
            l.set(fs, &ops[0], v.into(), false)?;
        }
        _ => {
            let p0 = l.ctx.ptr_type(AddressSpace::default());
            let v = l.operand(fs, &ops[0], t)?.into_int_value();
            let p = l.b.build_int_to_ptr(v, lp, "").unwrap();
            let p = if p0 == lp {
                p
            } else {
                l.b.build_address_space_cast(p, p0, "").unwrap()
            };
            l.call("llvm.stackrestore.p0", None, &[p.into()]);
        }
    }
    Ok(true)
}

pub fn lower<'c, 'a>(
    l: &Lowerer<'c, 'a>,
    fs: &mut FnState<'c, 'a>,
    ins: &Ins<'_, 'a>,
) -> Result<bool, Error> {
    let ops = ins.ops();
    if matches!(ins.op, "alloca" | "stacksave" | "stackrestore") {
        return stack(l, fs, ins);
    }
    if matches!(ins.op, "prefetch" | "prefetchu") {
        // A tensor-map prefetch is advice too; a target with PTX inline assembly keeps it.
        return Ok(!ins.has(Mod::Tensormap) || l.target.inline_asm_ok(ins.i).is_err());
    }
    // `st.async` also signals an mbarrier or is a release to another proxy: never a plain
    // store (the cpu target lowers it itself, the nvptx target as inline PTX).
    if ins.has(Mod::Async) {
        return Ok(false);
    }
    // Cache and prefetch-size hints (`.L2::cache_hint` with its policy operand, `.L2::256B`,
    // eviction priorities) are performance advice: dropped.
    // `.mmio` and `.unified` have no LLVM equivalent: a target with PTX inline assembly keeps
    // them there. Elsewhere (the cpu target) `.unified` is advice too, and an `.mmio` access
    // (always `.relaxed.sys`) is a volatile relaxed atomic: performed exactly once, in order.
    let native = l.target.inline_asm_ok(ins.i).is_err();
    let mmio = ins.has(Mod::Mmio);
    if (mmio || ins.has(Mod::Unified)) && !native {
        return Ok(false);
    }
    let t = ins.ty();
    let space = ins.space().unwrap_or(Space::Generic);
    let vec = ins.vec_width().map_or(1, u32::from);
    let is_load = ins.op != "st";
    let (data, addr) = if is_load {
        (&ops[0], &ops[1])
    } else {
        (&ops[1], &ops[0])
    };
    let Operand::Addr(a) = addr else {
        return Ok(false);
    };
    let elem_t = if t.k == K::Pred { Ty::u(8) } else { t };
    let ety = elem_t.llvm(l.ctx);
    // Parameters: argument values and slots.
    if space == Space::Param || a.base.is_some_and(|b| fs.params.contains_key(b)) {
        if let Some(b) = a.base {
            if let Some(ParamSlot::Arg { val, .. }) = fs.params.get(b).copied() {
                if is_load && vec == 1 && a.offset == 0 && l.bits_of(val.get_type()) == elem_t.bits
                {
                    let v = l.coerce(val, ety, false);
                    l.set(fs, data, v, t.is_signed())?;
                    return Ok(true);
                }
            }
        }
    }
    let ptr_space = if space == Space::Param {
        Space::Param
    } else {
        space
    };
    let ptr = if ptr_space == Space::Param {
        match a.base {
            Some(b) if fs.params.contains_key(b) => {
                let slot = fs.params[b];
                let m = l.param_mem(fs, b, slot);
                if a.offset == 0 {
                    m
                } else {
                    let off = l.i64().const_int(a.offset as u64, true);
                    // SAFETY: `build_gep` only builds IR (a byte offset from `m`); nothing is dereferenced here.
                    unsafe { l.b.build_gep(l.ctx.i8_type(), m, &[off], "").unwrap() }
                }
            }
            _ => l.address(fs, a, Space::Generic, addr.span())?,
        }
    } else {
        l.address(fs, a, ptr_space, addr.span())?
    };
    let vty: BasicTypeEnum = if vec > 1 {
        vec_type(l.ctx, ety, vec)
    } else {
        ety
    };
    let align = (elem_t.bits / 8).max(1) * vec;
    let ordering = match ins.sem() {
        Some(Mod::Relaxed) => Some(Ordering::Monotonic),
        Some(Mod::Acquire) => Some(Ordering::Acquire),
        Some(Mod::Release) => Some(Ordering::Release),
        _ => None,
    };
    let scope = match space {
        Space::Global if is_load && ins.has(Mod::Nc) => Some(crate::llvm::SCOPE_NC),
        Space::Global => Some(crate::llvm::SCOPE_GLOBAL),
        Space::Shared => Some(crate::llvm::SCOPE_SHARED),
        Space::Const => Some(crate::llvm::SCOPE_CONST),
        _ => None,
    }
    .filter(|_| l.target.disjoint_spaces());
    let mark = |inst: inkwell::values::InstructionValue<'c>| {
        if let Some(k) = scope {
            l.scopes
                .get_or_init(|| crate::llvm::SpaceScopes::new(l.ctx))
                .mark(l.ctx, inst, k);
        }
    };
    if is_load {
        if let (Some(order), true) = (ordering, vec > 1 && native) {
            // A vector access with a memory order is one access per element to the memory
            // model (no atomicity across elements): LLVM has no atomic vector loads, so each
            // element is its own atomic load.
            let Some(items) = l.vector_items(fs, data) else {
                return Err(invalid(data.span(), "expected a vector operand"));
            };
            for (k, it) in items.iter().enumerate() {
                let off = l.i64().const_int(k as u64, false);
                // SAFETY: `build_gep` only builds IR (element `k` after `ptr`); nothing is dereferenced here.
                let p = unsafe { l.b.build_gep(ety, ptr, &[off], "").unwrap() };
                let v = l.b.build_load(ety, p, "").unwrap();
                let inst = raw(v);
                set_alignment(inst, elem_t.bits / 8);
                mark(v.as_instruction_value().unwrap());
                if ins.has(Mod::Volatile) || mmio {
                    set_volatile(inst);
                }
                set_atomic(l.ctx, inst, order, scope_name(ins));
                if !matches!(it, Operand::Sink(_)) {
                    l.set(fs, it, v, t.is_signed())?;
                }
            }
            return Ok(true);
        }
        let v = l.b.build_load(vty, ptr, "").unwrap();
        let inst = raw(v);
        set_alignment(inst, align);
        mark(v.as_instruction_value().unwrap());
        if ins.has(Mod::Volatile) || mmio {
            set_volatile(inst);
        }
        if let Some(o) = ordering {
            if vec > 1 {
                return Ok(false);
            }
            set_atomic(l.ctx, inst, o, scope_name(ins));
        }
        if vec == 1 {
            let v = if t.k == K::Pred {
                l.coerce(v, l.i1().into(), false)
            } else {
                v
            };
            l.set(fs, data, v, t.is_signed())?;
        } else {
            let Some(items) = l.vector_items(fs, data) else {
                return Err(invalid(data.span(), "expected a vector operand"));
            };
            let vv = v.into_vector_value();
            for (k, it) in items.iter().enumerate() {
                if matches!(it, Operand::Sink(_)) {
                    continue;
                }
                let e =
                    l.b.build_extract_element(vv, l.i32().const_int(k as u64, false), "")
                        .unwrap();
                l.set(fs, it, e, t.is_signed())?;
            }
        }
    } else {
        let v: BasicValueEnum = if vec == 1 {
            let v = l.operand(fs, data, t)?;
            if t.k == K::Pred {
                l.coerce(v, ety, false)
            } else {
                v
            }
        } else {
            let Some(items) = l.vector_items(fs, data) else {
                return Err(invalid(data.span(), "expected a vector operand"));
            };
            let mut acc = undef_vec(vty);
            for (k, it) in items.iter().enumerate() {
                let e = l.operand(fs, it, t)?;
                acc =
                    l.b.build_insert_element(acc, e, l.i32().const_int(k as u64, false), "")
                        .unwrap();
            }
            acc.into()
        };
        if let (Some(order), true) = (ordering, vec > 1 && native) {
            // As for loads: one atomic store per element.
            let vv = v.into_vector_value();
            for k in 0..vec {
                let idx = l.i32().const_int(k as u64, false);
                let e = l.b.build_extract_element(vv, idx, "").unwrap();
                let off = l.i64().const_int(k as u64, false);
                // SAFETY: `build_gep` only builds IR (element `k` after `ptr`); nothing is dereferenced here.
                let p = unsafe { l.b.build_gep(ety, ptr, &[off], "").unwrap() };
                let st = l.b.build_store(p, e).unwrap();
                let inst = raw(st);
                set_alignment(inst, elem_t.bits / 8);
                mark(st);
                if ins.has(Mod::Volatile) || mmio {
                    set_volatile(inst);
                }
                set_atomic(l.ctx, inst, order, scope_name(ins));
            }
            return Ok(true);
        }
        let st = l.b.build_store(ptr, v).unwrap();
        let inst = raw(st);
        set_alignment(inst, align);
        mark(st);
        if ins.has(Mod::Volatile) || mmio {
            set_volatile(inst);
        }
        if let Some(o) = ordering {
            if vec > 1 {
                return Ok(false);
            }
            set_atomic(l.ctx, inst, o, scope_name(ins));
        }
    }
    Ok(true)
}

fn vec_type<'c>(ctx: &'c Context, e: BasicTypeEnum<'c>, n: u32) -> BasicTypeEnum<'c> {
    match e {
        BasicTypeEnum::IntType(i) => i.vec_type(n).into(),
        BasicTypeEnum::FloatType(f) => f.vec_type(n).into(),
        BasicTypeEnum::VectorType(v) => {
            // A vector of packed values: use the bit pattern.
            let bits = v.get_size() * 16;
            int_type(ctx, bits).vec_type(n).into()
        }
        _ => e,
    }
}

fn undef_vec(t: BasicTypeEnum) -> VectorValue {
    t.into_vector_type().get_undef()
}
