//! Loads and stores: `ld`/`st`/`ldu`/`ld.global.nc` with vectors, `.volatile`, and the memory
//! model's `.relaxed`/`.acquire`/`.release` with scopes as LLVM atomic orderings and sync
//! scopes. `.param` accesses read arguments and write return/call slots. Cache hints
//! (`.L2::cache_hint`, `.L2::256B`, eviction priorities) are performance advice and are
//! dropped; `prefetch` is a no-op hint. `.b128` and `.v8` accesses are 128-bit integers and
//! 8-element vectors.

use super::*;

/// Tests `ptr` for the natural alignment of an access of `bytes` bytes (a power of two) where
/// the target asks for it (`Target::checks_alignment`): PTX requires every `ld`/`st`/`atom`/
/// `red` address to be a multiple of the access's size (a vector's whole size), the GPU stops
/// the kernel with "misaligned address" where it is not, and the host would perform the
/// access. A misaligned address goes to `ptx2llvm_rt_misaligned` (cold, never returns, through
/// `misaligned_if`), which fails the launch naming the thread. A `.shared` pointer is tested
/// as its offset in the CTA's block (address space 3 holds offsets on the cpu target), which
/// is what the GPU's window aligns. Most tests cost nothing at run time: the address is
/// usually a base plus multiples of the size, and InstCombine reduces `(base + 4 i) & 3` to
/// `base & 3`, which the thread loops test once before their loops (unswitched).
pub fn check_aligned<'c>(
    l: &Lowerer<'c, '_>,
    ptr: PointerValue<'c>,
    bytes: u32,
    kind: crate::runtime::fault::MisalignedAccess,
) {
    if bytes <= 1 || !bytes.is_power_of_two() || !l.target.checks_alignment() {
        return;
    }
    let saved = crate::llvm::debug::current_location(&l.b);
    if let Some(loc) = saved {
        crate::llvm::debug::set_location(&l.b, Some(crate::llvm::debug::line_zero(l.ctx, loc)));
    }
    let shared = ptr.get_type().get_address_space() == l.ptr(Space::Shared).get_address_space()
        && l.ptr(Space::Shared) != l.ptr(Space::Generic);
    let i64t = l.i64();
    let a = int_address(l, ptr);
    let low =
        l.b.build_and(a, i64t.const_int(u64::from(bytes - 1), false), "")
            .unwrap();
    let bad =
        l.b.build_int_compare(IntPredicate::NE, low, i64t.const_zero(), "")
            .unwrap();
    let code = crate::runtime::fault::misaligned_code(kind, bytes, shared);
    let f = misaligned_if(l);
    l.b.build_call(
        f,
        &[bad.into(), a.into(), i64t.const_int(code, false).into()],
        "",
    )
    .unwrap();
    crate::llvm::debug::set_location(&l.b, saved);
}

/// The name of `misaligned_if`'s function.
pub const MISALIGNED_IF: &str = "ptx2llvm.misaligned_if";

/// `void ptx2llvm.misaligned_if(i1 bad, i64 address, i64 code)`: `if (bad)
/// ptx2llvm_rt_misaligned(address, code)` (cold, never returns), defined once per module,
/// internal and always inlined. A call rather than the branch itself, so that the lowered
/// code keeps its blocks (the warp engine's NaN and barrier analyses read them; it reads the
/// calls' addresses for its launch test and takes the calls out, `llvm::simd::misaligned`), and the thread loops' and coroutines' optimization
/// inlines the branch, where a test whose address has known low bits folds away and one of
/// a loop-invariant base leaves the loop (unswitched: its failing side leaves the loop).
fn misaligned_if<'c>(l: &Lowerer<'c, '_>) -> FunctionValue<'c> {
    if let Some(f) = l.module.get_function(MISALIGNED_IF) {
        return f;
    }
    let i64t = l.i64();
    let fty = l
        .ctx
        .void_type()
        .fn_type(&[l.i1().into(), i64t.into(), i64t.into()], false);
    let f = l
        .module
        .add_function(MISALIGNED_IF, fty, Some(inkwell::module::Linkage::Internal));
    let attr = |name| crate::llvm::enum_attr(l.ctx, name, 0);
    for name in ["alwaysinline", "nounwind"] {
        f.add_attribute(inkwell::attributes::AttributeLoc::Function, attr(name));
    }
    let fail_ty = l
        .ctx
        .void_type()
        .fn_type(&[i64t.into(), i64t.into()], false);
    let fail = l
        .module
        .get_function("ptx2llvm_rt_misaligned")
        .unwrap_or_else(|| {
            l.module
                .add_function("ptx2llvm_rt_misaligned", fail_ty, None)
        });
    for name in ["noreturn", "nounwind", "cold"] {
        fail.add_attribute(inkwell::attributes::AttributeLoc::Function, attr(name));
    }
    let b = l.ctx.create_builder();
    let entry = l.ctx.append_basic_block(f, "entry");
    let mis = l.ctx.append_basic_block(f, "misaligned");
    let ok = l.ctx.append_basic_block(f, "aligned");
    b.position_at_end(entry);
    let bad = f.get_nth_param(0).unwrap().into_int_value();
    let br = b.build_conditional_branch(bad, mis, ok).unwrap();
    let weights = l.ctx.metadata_node(&[
        l.ctx.metadata_string("branch_weights").into(),
        l.i32().const_int(1, false).into(),
        l.i32().const_int(1 << 20, false).into(),
    ]);
    br.set_metadata(weights, l.ctx.get_kind_id("prof")).unwrap();
    b.position_at_end(mis);
    let args = [
        f.get_nth_param(1).unwrap().into(),
        f.get_nth_param(2).unwrap().into(),
    ];
    b.build_call(fail, &args, "").unwrap();
    b.build_unreachable().unwrap();
    b.position_at_end(ok);
    b.build_return(None).unwrap();
    f
}

/// `ptr` as an integer for `check_aligned`, built from the integer it was made of where the
/// lowering made it so (`Lowerer::address`: `inttoptr` of a register, then a constant byte
/// offset): InstCombine does not look through `ptrtoint (getelementptr (inttoptr x), c)`,
/// whose low bits then stay unknown (a varying test per access in the warp engine), but
/// reduces `(x + c) & m` by the known bits of `x` and `c`.
fn int_address<'c>(l: &Lowerer<'c, '_>, ptr: PointerValue<'c>) -> IntValue<'c> {
    use inkwell::values::InstructionOpcode as Op;
    let i64t = l.i64();
    if let Some(i) = ptr.as_instruction() {
        match i.get_opcode() {
            Op::GetElementPtr if i.get_num_operands() == 2 => {
                let base = i.get_operand(0).and_then(|o| o.value());
                let off = i.get_operand(1).and_then(|o| o.value());
                let i8_gep = i
                    .get_gep_source_element_type()
                    .is_ok_and(|t| t == l.ctx.i8_type().into());
                if let (Some(BasicValueEnum::PointerValue(b)), Some(BasicValueEnum::IntValue(o))) =
                    (base, off)
                {
                    if i8_gep && o.is_const() {
                        let b = int_address(l, b);
                        let o = l.b.build_int_s_extend_or_bit_cast(o, i64t, "").unwrap();
                        return l.b.build_int_add(b, o, "").unwrap();
                    }
                }
            }
            Op::IntToPtr => {
                if let Some(BasicValueEnum::IntValue(x)) = i.get_operand(0).and_then(|o| o.value())
                {
                    if x.get_type().get_bit_width() <= 64 {
                        return l.b.build_int_z_extend_or_bit_cast(x, i64t, "").unwrap();
                    }
                }
            }
            _ => {}
        }
    }
    l.b.build_ptr_to_int(ptr, i64t, "").unwrap()
}

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
    if ptr_space != Space::Param {
        use crate::runtime::fault::MisalignedAccess as M;
        let kind = if is_load { M::Read } else { M::Write };
        check_aligned(l, ptr, align, kind);
    }
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
