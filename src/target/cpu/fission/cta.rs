//! The CTA function of a thread-loop kernel: `K.fis(params, ctx, fis)` loads the kernel's
//! parameters and the CTA's uniform values once and calls `K.fis.loops`, whose pointer
//! parameters are `noalias` (the runtime's per-thread arrays never alias kernel memory), which
//! runs one round: a z/y/x loop nest per resume point for `ALL` and `MASKED` rounds with
//! `K.step` inlined and specialized, and one nest calling the out-of-line `K.step` for
//! `GENERIC` rounds.

use super::{extra, StepOut};
use crate::llvm::fission as lf;
use crate::llvm::*;
use crate::lower::{Lowerer, Space};
use crate::runtime::abi::offset;
use crate::runtime::fission::{off, MODE_ALL, MODE_MASKED, SEEN_MANY, ST_EXIT, ST_STOP};
use crate::target::cpu::ParamLayout;

#[derive(Clone, Copy, PartialEq, Eq)]
enum Nest {
    All(u32),
    Masked(u32),
    Generic,
}

/// Emits `K.fis` for kernel `name` whose step function `so.step` was lowered. Returns it.
pub fn emit_kernel<'c>(
    l: &Lowerer<'c, '_>,
    name: &str,
    layout: &ParamLayout,
    so: &StepOut<'c>,
) -> FunctionValue<'c> {
    let ctx = l.ctx;
    let b = &l.b;
    let ptr = l.ptr(Space::Generic);
    let i8t = ctx.i8_type();
    let i32t = l.i32();
    let i64t = l.i64();
    let step = so.step;
    let step_params: Vec<BasicTypeEnum> = step
        .get_type()
        .get_param_types()
        .into_iter()
        .map(|t| BasicTypeEnum::try_from(t).expect("basic parameter type"))
        .collect();
    let nptx = step_params.len() as u32 - extra::COUNT;

    // K.fis.loops(<kernel params>, <extras with k = mode, t.. = want>) — see `loops` below.
    let mut lty: Vec<BasicMetadataTypeEnum> = step_params.iter().map(|t| (*t).into()).collect();
    // Replace T..TZ (4 values) by mode, want, unused, unused: same types (i32).
    let _ = &mut lty;
    let loops_ty = ctx.void_type().fn_type(&lty, false);
    let loops = l.module.add_function(
        &format!("{name}.fis.loops"),
        loops_ty,
        Some(Linkage::Internal),
    );
    for k in [
        extra::FIS,
        extra::STATE,
        extra::FRAME,
        extra::OPA,
        extra::OPA_HI,
        extra::OPB,
        extra::OPC,
        extra::MASK,
        extra::RES,
        extra::RESP,
        extra::LOCAL,
    ] {
        lf::param_attr(ctx, loops, nptx + k, "noalias");
    }

    // K.fis: loads, then the call.
    let fis_ty = ctx
        .void_type()
        .fn_type(&[ptr.into(), ptr.into(), ptr.into()], false);
    let entry_fn = l
        .module
        .add_function(&format!("{name}.fis"), fis_ty, Some(Linkage::External));
    let bb = ctx.append_basic_block(entry_fn, "entry");
    b.position_at_end(bb);
    let pbuf = entry_fn.get_nth_param(0).unwrap().into_pointer_value();
    let cx = entry_fn.get_nth_param(1).unwrap().into_pointer_value();
    let fisp = entry_fn.get_nth_param(2).unwrap().into_pointer_value();
    let at = |base: PointerValue<'c>, o: u32| -> PointerValue<'c> {
        unsafe {
            b.build_gep(i8t, base, &[i64t.const_int(o as u64, false)], "")
                .unwrap()
        }
    };
    let mut args: Vec<BasicMetadataValueEnum> = Vec::new();
    for (k, t) in step_params.iter().take(nptx as usize).enumerate() {
        let place = layout.params.get(k);
        let o = place.map_or(0, |p| p.offset);
        let p = at(pbuf, o);
        if place.is_some_and(|p| p.aggregate)
            || t.is_pointer_type() && place.is_some_and(|p| p.aggregate)
        {
            args.push(p.into());
        } else {
            let v = b.build_load(*t, p, "").unwrap();
            if let Some(i) = v.as_instruction_value() {
                let _ = i.set_alignment(1);
            }
            args.push(v.into());
        }
    }
    let ld32 = |base: PointerValue<'c>, o: u32| -> BasicMetadataValueEnum<'c> {
        b.build_load(i32t, at(base, o), "").unwrap().into()
    };
    let ldp = |base: PointerValue<'c>, o: u32| -> BasicMetadataValueEnum<'c> {
        b.build_load(ptr, at(base, o), "").unwrap().into()
    };
    for k in 0..extra::COUNT {
        let v: BasicMetadataValueEnum = match k {
            extra::CTX => cx.into(),
            extra::FIS => fisp.into(),
            // T: mode, TX: want (the rest of T..TZ unused)
            extra::T => ld32(fisp, off::MODE),
            3 => ld32(fisp, off::WANT),
            4 | 5 => i32t.const_zero().into(),
            extra::K => ld32(fisp, off::K),
            7..=9 => ld32(cx, offset::NTID + 4 * (k - extra::NT)),
            10..=12 => ld32(cx, offset::CTAID + 4 * (k - extra::C)),
            13..=15 => ld32(cx, offset::NCTAID + 4 * (k - extra::NC)),
            extra::N => ld32(fisp, off::N),
            extra::SHARED => ldp(cx, offset::SHARED),
            extra::STATE => ldp(fisp, off::STATE),
            extra::FRAME => ldp(fisp, off::FRAME),
            extra::OPA => ldp(fisp, off::OPA),
            extra::OPA_HI => ldp(fisp, off::OPA_HI),
            extra::OPB => ldp(fisp, off::OPB),
            extra::OPC => ldp(fisp, off::OPC),
            extra::MASK => ldp(fisp, off::MASK),
            extra::RES => ldp(fisp, off::RES),
            extra::RESP => ldp(fisp, off::RESP),
            extra::BANK => ld32(fisp, off::BANK),
            _ => ldp(fisp, off::LOCAL),
        };
        args.push(v);
    }
    b.build_call(loops, &args, "").unwrap();
    b.build_return(None).unwrap();

    // K.fis.loops.
    let p = |k: u32| loops.get_nth_param(nptx + k).unwrap();
    let has_stops = !so.stops.is_empty();
    let entry = ctx.append_basic_block(loops, "entry");
    let done = ctx.append_basic_block(loops, "done");
    b.position_at_end(entry);
    let seen = b.build_alloca(i64t, "seen").unwrap();
    b.build_store(seen, i64t.const_zero()).unwrap();
    let (xs, ys, zs) = (
        b.build_alloca(i32t, "x").unwrap(),
        b.build_alloca(i32t, "y").unwrap(),
        b.build_alloca(i32t, "z").unwrap(),
    );
    let all_sw = ctx.append_basic_block(loops, "all");
    let masked_sw = ctx.append_basic_block(loops, "masked");
    let generic = ctx.append_basic_block(loops, "generic");
    let mode = p(extra::T).into_int_value();
    b.build_switch(
        mode,
        generic,
        &[
            (i32t.const_int(MODE_ALL as u64, false), all_sw),
            (i32t.const_int(MODE_MASKED as u64, false), masked_sw),
        ],
    )
    .unwrap();
    let k = p(extra::K).into_int_value();
    // Kernels with stops: one nest per resume point, running the threads whose state is
    // `want` (ALL rounds too: the driver keeps every thread's state equal to `want` then).
    // Kernels without stops: one unchecked nest.
    let mut cases = Vec::new();
    for &r in &so.resumes {
        let kind = if has_stops {
            Nest::Masked(r)
        } else {
            Nest::All(r)
        };
        let first = nest(
            l,
            loops,
            step,
            nptx,
            kind,
            has_stops,
            seen,
            (xs, ys, zs),
            done,
        );
        cases.push((i32t.const_int(r as u64, false), first));
    }
    b.position_at_end(all_sw);
    b.build_switch(k, done, &cases).unwrap();
    b.position_at_end(masked_sw);
    b.build_switch(k, done, &cases).unwrap();
    // Generic rounds (also the diagnostic replay of kernels without stops).
    let g = nest(
        l,
        loops,
        step,
        nptx,
        Nest::Generic,
        true,
        seen,
        (xs, ys, zs),
        done,
    );
    b.position_at_end(generic);
    b.build_unconditional_branch(g).unwrap();
    b.position_at_end(done);
    let s: IntValue = b.build_load(i64t, seen, "").unwrap().into_int_value();
    let s = if has_stops {
        s
    } else {
        b.build_or(s, i64t.const_int(1, false), "").unwrap()
    };
    let fis = p(extra::FIS).into_pointer_value();
    b.build_store(at(fis, off::SEEN), s).unwrap();
    b.build_return(None).unwrap();
    entry_fn
}

/// One z/y/x loop nest over the CTA's threads; returns its first block. It ends in `done`.
#[allow(clippy::too_many_arguments)]
fn nest<'c>(
    l: &Lowerer<'c, '_>,
    f: FunctionValue<'c>,
    step: FunctionValue<'c>,
    nptx: u32,
    kind: Nest,
    has_stops: bool,
    seen: PointerValue<'c>,
    (xs, ys, zs): (PointerValue<'c>, PointerValue<'c>, PointerValue<'c>),
    done: BasicBlock<'c>,
) -> BasicBlock<'c> {
    let ctx = l.ctx;
    let b = &l.b;
    let i16t = ctx.i16_type();
    let i32t = l.i32();
    let i64t = l.i64();
    let p = |k: u32| f.get_nth_param(nptx + k).unwrap();
    let (ntx, nty, ntz) = (
        p(extra::NT).into_int_value(),
        p(extra::NT + 1).into_int_value(),
        p(extra::NT + 2).into_int_value(),
    );
    let tag = match kind {
        Nest::All(r) => format!("all{r}"),
        Nest::Masked(r) => format!("masked{r}"),
        Nest::Generic => "generic".to_string(),
    };
    let pre = ctx.append_basic_block(f, &format!("{tag}.pre"));
    let zh = ctx.append_basic_block(f, &format!("{tag}.z"));
    let yh = ctx.append_basic_block(f, &format!("{tag}.y"));
    let xh = ctx.append_basic_block(f, &format!("{tag}.x"));
    let run = ctx.append_basic_block(f, &format!("{tag}.run"));
    let xl = ctx.append_basic_block(f, &format!("{tag}.xl"));
    let yl = ctx.append_basic_block(f, &format!("{tag}.yl"));
    let zl = ctx.append_basic_block(f, &format!("{tag}.zl"));
    let zero = i32t.const_zero();
    let one = i32t.const_int(1, false);
    b.position_at_end(pre);
    b.build_store(zs, zero).unwrap();
    b.build_unconditional_branch(zh).unwrap();
    b.position_at_end(zh);
    b.build_store(ys, zero).unwrap();
    b.build_unconditional_branch(yh).unwrap();
    b.position_at_end(yh);
    b.build_store(xs, zero).unwrap();
    b.build_unconditional_branch(xh).unwrap();
    b.position_at_end(xh);
    let z = b.build_load(i32t, zs, "z").unwrap().into_int_value();
    let y = b.build_load(i32t, ys, "y").unwrap().into_int_value();
    let x = b.build_load(i32t, xs, "x").unwrap().into_int_value();
    let row = b
        .build_int_mul(
            ntx,
            b.build_int_add(y, b.build_int_mul(nty, z, "").unwrap(), "")
                .unwrap(),
            "row",
        )
        .unwrap();
    let t = b.build_int_add(row, x, "t").unwrap();
    let t64 = b.build_int_z_extend(t, i64t, "").unwrap();
    let state = p(extra::STATE).into_pointer_value();
    let sp = unsafe { b.build_gep(i16t, state, &[t64], "").unwrap() };
    let kval: IntValue = match kind {
        Nest::All(r) => {
            b.build_unconditional_branch(run).unwrap();
            i32t.const_int(r as u64, false)
        }
        Nest::Masked(_) => {
            let s0 = b.build_load(i16t, sp, "").unwrap().into_int_value();
            let want = b
                .build_int_truncate(p(extra::TX).into_int_value(), i16t, "")
                .unwrap();
            let c = b.build_int_compare(IntPredicate::EQ, s0, want, "").unwrap();
            b.build_conditional_branch(c, run, xl).unwrap();
            match kind {
                Nest::Masked(r) => i32t.const_int(r as u64, false),
                _ => unreachable!(),
            }
        }
        Nest::Generic => {
            let s0 = b.build_load(i16t, sp, "").unwrap().into_int_value();
            let c = b
                .build_int_compare(
                    IntPredicate::ULT,
                    s0,
                    i16t.const_int(ST_STOP as u64, false),
                    "",
                )
                .unwrap();
            b.build_conditional_branch(c, run, xl).unwrap();
            // Loaded again in `run` (dominance): the value is the same.
            i32t.const_zero()
        }
    };
    b.position_at_end(run);
    let kval = if kind == Nest::Generic {
        let s0 = b.build_load(i16t, sp, "").unwrap().into_int_value();
        b.build_int_z_extend(s0, i32t, "").unwrap()
    } else {
        kval
    };
    if has_stops {
        b.build_store(sp, i16t.const_int(ST_EXIT as u64, false))
            .unwrap();
    }
    let mut args: Vec<BasicMetadataValueEnum> = (0..nptx)
        .map(|k| f.get_nth_param(k).unwrap().into())
        .collect();
    for k in 0..extra::COUNT {
        let v: BasicMetadataValueEnum = match k {
            extra::T => t.into(),
            3 => x.into(),
            4 => y.into(),
            5 => z.into(),
            extra::K => kval.into(),
            _ => p(k).into(),
        };
        args.push(v);
    }
    if kind == Nest::Generic {
        // The running thread's ids, for device functions, runtime calls and fault reports.
        let cx = p(extra::CTX).into_pointer_value();
        let put = |o: u32, v: IntValue<'c>| {
            let q = unsafe {
                b.build_gep(ctx.i8_type(), cx, &[i64t.const_int(o as u64, false)], "")
                    .unwrap()
            };
            b.build_store(q, v).unwrap();
        };
        put(offset::TID, x);
        put(offset::TID + 4, y);
        put(offset::TID + 8, z);
        put(offset::FLAT_TID, t);
        put(
            offset::LANEID,
            b.build_and(t, i32t.const_int(31, false), "").unwrap(),
        );
        put(
            offset::WARPID,
            b.build_right_shift(t, i32t.const_int(5, false), false, "")
                .unwrap(),
        );
    }
    let cs = b.build_call(step, &args, "").unwrap();
    lf::call_site_attr(
        ctx,
        cs,
        if kind == Nest::Generic {
            "noinline"
        } else {
            "alwaysinline"
        },
    );
    if has_stops {
        let s = b.build_load(i16t, sp, "").unwrap().into_int_value();
        let s64 = b.build_int_z_extend(s, i64t, "").unwrap();
        let j = b.build_and(s64, i64t.const_int(0x7fff, false), "").unwrap();
        let many = i64t.const_int(SEEN_MANY as u64, false);
        let lt = b.build_int_compare(IntPredicate::ULT, j, many, "").unwrap();
        let j = b.build_select(lt, j, many, "").unwrap().into_int_value();
        let bit = b.build_left_shift(i64t.const_int(1, false), j, "").unwrap();
        let is_exit = b
            .build_int_compare(
                IntPredicate::EQ,
                s,
                i16t.const_int(ST_EXIT as u64, false),
                "",
            )
            .unwrap();
        let bit = b
            .build_select(is_exit, i64t.const_int(1, false), bit, "")
            .unwrap()
            .into_int_value();
        let is_trap = b
            .build_int_compare(
                IntPredicate::EQ,
                s,
                i16t.const_int(crate::runtime::fission::ST_TRAP as u64, false),
                "",
            )
            .unwrap();
        let bit = b
            .build_select(is_trap, i64t.const_int(1 << 63, false), bit, "")
            .unwrap()
            .into_int_value();
        let old = b.build_load(i64t, seen, "").unwrap().into_int_value();
        b.build_store(seen, b.build_or(old, bit, "").unwrap())
            .unwrap();
    }
    b.build_unconditional_branch(xl).unwrap();
    // Latches.
    let latch = |bb: BasicBlock<'c>,
                 slot: PointerValue<'c>,
                 lim: IntValue<'c>,
                 head: BasicBlock<'c>,
                 out: BasicBlock<'c>| {
        b.position_at_end(bb);
        let v = b.build_load(i32t, slot, "").unwrap().into_int_value();
        let v1 = b.build_int_add(v, one, "").unwrap();
        b.build_store(slot, v1).unwrap();
        let c = b.build_int_compare(IntPredicate::ULT, v1, lim, "").unwrap();
        b.build_conditional_branch(c, head, out).unwrap();
    };
    latch(xl, xs, ntx, xh, yl);
    // The x loop re-enters at xh, which must not reset x: split the header.
    latch(yl, ys, nty, yh, zl);
    latch(zl, zs, ntz, zh, done);
    pre
}
