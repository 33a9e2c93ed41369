//! The stops and branches of `K.step` that the thread-loop path lowers itself: barriers, warp
//! operations, `activemask`, `nanosleep` and the yields of stride loops (`lower_stop`: save the
//! live registers, record the state, return; the resume blocks restore them and take a warp
//! operation's result, or compute an inline shuffle), probe branches (`lower_probe`) and the
//! latches of stride loops (`lower_latch`), each following the probe mode (`extra::PROBE`).

use super::*;
use crate::isa::Mod;

/// Lowers stop `j` at instruction `i`: operands, saves, the return, and the resume blocks.
pub(super) fn lower_stop<'c, 'a>(
    l: &Lowerer<'c, 'a>,
    fs: &mut FnState<'c, 'a>,
    i: &Instruction<'a>,
    j: u32,
) -> Result<(), Error> {
    with_cur(l, |c| c.cur_stop = j);
    let ins = l.ins(i)?;
    let ops = ins.ops();
    let f = fs.func;
    let b32 = Ty::b(32);
    let warp = |op: WarpOp, m: &Operand| StopKind::Warp {
        op,
        mask: const_of(l, m).map(|v| v as u32),
        inline: false,
    };
    // 1. Operands and the stop's kind.
    let kind = match ins.op {
        "bar" if ins.has(Mod::Warp) => {
            put_stop_operand(l, fs, extra::MASK, Some(&ops[0]))?;
            warp(WarpOp::WarpSync, &ops[0])
        }
        "bar" | "barrier" => {
            if ins.has(Mod::Cluster) || ops.is_empty() {
                return Err(ins.unsupported("not supported on the cpu target"));
            }
            let (kind, idx) = if ins.has(Mod::Red) {
                let op = match ins.any(&[Mod::Popc, Mod::And, Mod::Or]) {
                    Some(Mod::Popc) => bar_red::POPC,
                    Some(Mod::And) => bar_red::AND,
                    _ => bar_red::OR,
                };
                (BarKind::Red(op), 1)
            } else if ins.has(Mod::Arrive) {
                (BarKind::Arrive, 0)
            } else {
                (BarKind::Sync, 0)
            };
            put_stop_operand(l, fs, extra::OPB, Some(&ops[idx]))?;
            let has_count = match kind {
                BarKind::Red(_) => ops.len() == 4,
                _ => ops.len() > 1,
            };
            put_stop_operand(l, fs, extra::OPC, has_count.then(|| &ops[idx + 1]))?;
            if let BarKind::Red(_) = kind {
                let p = l.operand(fs, &ops[ops.len() - 1], Ty::PRED)?;
                put_opa(l, f, l.coerce(p, l.i32().into(), false));
            }
            StopKind::Bar {
                kind,
                id: const_of(l, &ops[idx]).map(|v| v as u32),
                counted: has_count,
            }
        }
        "shfl" => {
            let mode = crate::target::cpu::sync::shfl_mode(&ins);
            if ops.len() != 5 {
                return Err(
                    ins.unsupported("shuffles without `.sync` are not supported in thread loops")
                );
            }
            let a = l.operand(fs, &ops[1], b32)?;
            put_opa(l, f, a);
            for (k, which) in [(2, extra::OPB), (3, extra::OPC), (4, extra::MASK)] {
                put_stop_operand(l, fs, which, Some(&ops[k]))?;
            }
            let mask = const_of(l, &ops[4]).map(|v| v as u32);
            StopKind::Warp {
                op: WarpOp::Shfl(mode),
                mask,
                inline: mask.is_none_or(|m| m == u32::MAX),
            }
        }
        "vote" => {
            let mode = crate::target::cpu::sync::vote_mode(&ins);
            if ops.len() != 3 {
                return Err(
                    ins.unsupported("votes without `.sync` are not supported in thread loops")
                );
            }
            let p = l.operand(fs, &ops[1], Ty::PRED)?;
            put_opa(l, f, l.coerce(p, l.i32().into(), false));
            put_stop_operand(l, fs, extra::MASK, Some(&ops[2]))?;
            warp(WarpOp::Vote(mode), &ops[2])
        }
        "match" => {
            let bits = ins.ty().bits;
            let a = l.operand(fs, &ops[1], Ty::b(bits))?;
            let a64 = l.coerce(a, l.i64().into(), false).into_int_value();
            put_opa(
                l,
                f,
                l.b.build_int_truncate(a64, l.i32(), "").unwrap().into(),
            );
            let hi =
                l.b.build_right_shift(a64, l.i64().const_int(32, false), false, "")
                    .unwrap();
            put_u32(
                l,
                f,
                extra::OPA_HI,
                l.b.build_int_truncate(hi, l.i32(), "").unwrap().into(),
            );
            put_stop_operand(l, fs, extra::MASK, Some(&ops[2]))?;
            warp(
                if ins.has(Mod::Any) {
                    WarpOp::MatchAny
                } else {
                    WarpOp::MatchAll
                },
                &ops[2],
            )
        }
        "redux" => {
            let op = crate::target::cpu::sync::redux_op(&ins);
            let a = l.operand(fs, &ops[1], b32)?;
            put_opa(l, f, a);
            put_stop_operand(l, fs, extra::MASK, Some(&ops[2]))?;
            warp(WarpOp::Redux(op), &ops[2])
        }
        "elect" => {
            put_stop_operand(l, fs, extra::MASK, Some(&ops[1]))?;
            warp(WarpOp::Elect, &ops[1])
        }
        "activemask" => StopKind::ActiveMask,
        "nanosleep" if with_cur(l, |c| c.yields.contains_key(&fs.node)) => StopKind::Yield,
        "nanosleep" => {
            l.operand(fs, &ops[0], b32)?;
            StopKind::Sleep
        }
        _ => return Err(ins.unsupported("not a stop")),
    };
    let (saved, remat, nstops) = with_cur(l, |c| {
        c.kinds[j as usize - 1] = Some(kind);
        (
            c.saved[j as usize - 1].clone(),
            c.remat[j as usize - 1].clone(),
            c.nstops,
        )
    });
    // 2. Save, stop, return. Probe mode 6 passes yields by: the thread runs its loop on.
    // In modes 7 and 8 the thread's next iteration gets its induction value from `K.fis`, and
    // of the other registers live here only those the loop writes need saving (the rest keep
    // the values saved when the thread first reached the yield); no state is recorded.
    let cont = l.ctx.append_basic_block(f, &format!("fis.cont.{j}"));
    if kind == StopKind::Yield {
        let stop = l.ctx.append_basic_block(f, "fis.yield");
        let quiet = l.ctx.append_basic_block(f, "fis.yield.quiet");
        let pass = mode_in(l, f, 6, 6);
        let next = l.ctx.append_basic_block(f, "fis.yield.stop");
        l.b.build_conditional_branch(pass, cont, next).unwrap();
        l.b.position_at_end(next);
        // Only the loop being iterated: a thread leaving it may reach another loop's yield,
        // where it stops as usual.
        let seven = mode_in(l, f, 7, 8);
        let this =
            l.b.build_int_compare(
                IntPredicate::EQ,
                arg(l, f, extra::K).into_int_value(),
                l.c32(j as u64),
                "",
            )
            .unwrap();
        let seven = l.b.build_and(seven, this, "").unwrap();
        l.b.build_conditional_branch(seven, quiet, stop).unwrap();
        l.b.position_at_end(quiet);
        let carried: Vec<String> = with_cur(l, |c| {
            let y = c.yields.get(&fs.node);
            saved
                .iter()
                .filter(|r| y.is_some_and(|y| y.writes.contains(r)))
                .cloned()
                .collect()
        });
        save_regs(l, fs, &carried, false);
        l.b.build_return(None).unwrap();
        l.b.position_at_end(stop);
    }
    // Inline shuffles end the stages of warp chains (`cta/warp.rs`).
    let chain = matches!(
        kind,
        StopKind::Warp {
            op: WarpOp::Shfl(_),
            inline: true,
            ..
        }
    );
    save_regs(l, fs, &saved, chain);
    // The stop in the thread's state, unless the round's region has no other outcome.
    {
        let ns = arg(l, f, extra::NOSTATE).into_int_value();
        let rec =
            l.b.build_int_compare(IntPredicate::EQ, ns, l.c32(0), "")
                .unwrap();
        let yes = l.ctx.append_basic_block(f, "fis.rec");
        let after = l.ctx.append_basic_block(f, "fis.ret");
        l.b.build_conditional_branch(rec, yes, after).unwrap();
        l.b.position_at_end(yes);
        set_state(l, f, ST_STOP | j as u16);
        l.b.build_unconditional_branch(after).unwrap();
        l.b.position_at_end(after);
    }
    l.b.build_return(None).unwrap();
    // 3. Resume blocks.
    let generic = l.ctx.append_basic_block(f, &format!("fis.resume.{j}"));
    l.b.position_at_end(generic);
    restore_regs(l, fs, &saved, &remat, false)?;
    if kind == StopKind::Yield {
        yield_capture(l, fs)?;
    }
    let res = get_u32(l, f, extra::RES);
    let resp = {
        let p = elem(
            l,
            arg(l, f, extra::RESP),
            l.ctx.i8_type().into(),
            t_i64(l, f),
        );
        let v =
            l.b.build_load(l.ctx.i8_type(), p, "")
                .unwrap()
                .into_int_value();
        l.b.build_int_compare(IntPredicate::NE, v, l.ctx.i8_type().const_zero(), "")
            .unwrap()
    };
    let bool_of = |v: IntValue<'c>| -> BasicValueEnum<'c> {
        l.b.build_int_compare(IntPredicate::NE, v, l.c32(0), "")
            .unwrap()
            .into()
    };
    match kind {
        StopKind::Bar {
            kind: BarKind::Red(op),
            ..
        } => {
            let r: BasicValueEnum = if op == bar_red::POPC {
                res.into()
            } else {
                bool_of(res)
            };
            l.set(fs, &ops[0], r, false)?;
        }
        StopKind::Warp { op, .. } => match op {
            WarpOp::Shfl(_) | WarpOp::MatchAll => {
                set_pair(l, fs, &ops[0], res.into(), resp.into())?
            }
            WarpOp::Vote(m) => {
                let r: BasicValueEnum = if m == vote::BALLOT {
                    res.into()
                } else {
                    bool_of(res)
                };
                l.set(fs, &ops[0], r, false)?;
            }
            WarpOp::MatchAny => l.set(fs, &ops[0], res.into(), false)?,
            WarpOp::Redux(_) => {
                let r = if ins.ty().is_float() {
                    l.b.build_bit_cast(res, l.ctx.f32_type(), "").unwrap()
                } else {
                    res.into()
                };
                l.set(fs, &ops[0], r, false)?;
            }
            WarpOp::Elect => match &ops[0] {
                Operand::Pair(..) => set_pair(l, fs, &ops[0], res.into(), resp.into())?,
                d => l.set(fs, d, resp.into(), false)?,
            },
            // Kernels with matrix instructions keep coroutines (`analysis::is_warp_matrix`).
            WarpOp::WarpSync | WarpOp::Matrix(_) => {}
        },
        StopKind::ActiveMask => l.set(fs, &ops[0], res.into(), false)?,
        _ => {}
    }
    l.b.build_unconditional_branch(cont).unwrap();
    if let StopKind::Warp {
        op: WarpOp::Shfl(mode),
        inline: true,
        ..
    } = kind
    {
        let bb = l
            .ctx
            .append_basic_block(f, &format!("fis.resume.{}", nstops + j));
        l.b.position_at_end(bb);
        restore_regs(l, fs, &saved, &remat, true)?;
        let (d, p) = inline_shfl(l, fs, mode, &ops[2], &ops[3]);
        set_pair(l, fs, &ops[0], d.into(), p.into())?;
        l.b.build_unconditional_branch(cont).unwrap();
    }
    l.b.position_at_end(cont);
    Ok(())
}

/// Probe mode 5 at the resume point of a stride loop's yield: the thread's induction value,
/// step and bound (`stride::StrideLoop`) as u32 at `RES[t]`, `OPB[t]` and `OPC[t]`, and
/// return. `K.fis` reads them to decide whether it can run the loop interchanged (`cta/interchange.rs`);
/// the thread is at the yield, so no operand or result of a warp operation is pending there.
fn yield_capture<'c, 'a>(l: &Lowerer<'c, 'a>, fs: &mut FnState<'c, 'a>) -> Result<(), Error> {
    let f = fs.func;
    let Some((vals, signed)) = with_cur(l, |c| {
        c.yields.get(&fs.node).map(|y| (y.vals.clone(), y.signed))
    }) else {
        return Ok(());
    };
    let capture = l.ctx.append_basic_block(f, "fis.yield.capture");
    let go = l.ctx.append_basic_block(f, "fis.yield.go");
    let five = mode_in(l, f, 5, 5);
    l.b.build_conditional_branch(five, capture, go).unwrap();
    l.b.position_at_end(capture);
    for (v, which) in vals.iter().zip([extra::RES, extra::OPB, extra::OPC]) {
        let x: BasicValueEnum = match v {
            YieldVal::Imm(c) => l.c32(*c & 0xffff_ffff).into(),
            YieldVal::Reg(name) => {
                let (reg, st, _) = l.reg(fs, name).ok_or_else(|| {
                    Error::Llvm(format!("yield operand `{name}` is not a register"))
                })?;
                l.b.build_load(st, reg, "").unwrap()
            }
        };
        put_u32(l, f, which, l.coerce(x, l.i32().into(), false));
    }
    l.b.build_return(None).unwrap();
    l.b.position_at_end(go);
    // Mode 7: the induction value of this iteration is `IV + T` (`cta/interchange.rs`).
    if let YieldVal::Reg(name) = &vals[0] {
        let (reg, st, _) = l
            .reg(fs, name)
            .ok_or_else(|| Error::Llvm(format!("yield operand `{name}` is not a register")))?;
        let seven = mode_in(l, f, 7, 8);
        // `K.fis` checked that `IV` and every thread's value are in range for the latch's
        // signedness: the add does not wrap, so LLVM may widen it (`sext(IV + T)` becomes
        // `sext(IV) + T`, an address that advances with the loop over threads).
        let (iv_arg, t_arg) = (
            arg(l, f, extra::IV).into_int_value(),
            arg(l, f, extra::T).into_int_value(),
        );
        let iv = if signed {
            l.b.build_int_nsw_add(iv_arg, t_arg, "")
        } else {
            l.b.build_int_nuw_add(iv_arg, t_arg, "")
        }
        .unwrap();
        let old = l.b.build_load(st, reg, "").unwrap();
        let iv = l.coerce(iv.into(), st, false);
        let v = l.b.build_select(seven, iv, old, "").unwrap();
        l.b.build_store(reg, v).unwrap();
    }
    Ok(())
}

/// The condition of the guarded branch `@p bra L` and the block of `L`.
fn guard_and_target<'c, 'a>(
    l: &Lowerer<'c, 'a>,
    fs: &mut FnState<'c, 'a>,
    i: &Instruction<'a>,
    what: &str,
) -> Result<(IntValue<'c>, BasicBlock<'c>), Error> {
    let g = i
        .guard
        .ok_or_else(|| Error::Llvm(format!("{what} without a guard")))?;
    let c = l.pred(fs, g.pred, g.negated, g.span)?;
    match i.operands.first() {
        Some(Operand::Name { name, span, .. }) => {
            let target = *fs.labels.get(name).ok_or_else(|| Error::Invalid {
                msg: format!("unknown label `{name}`"),
                span: *span,
            })?;
            Ok((c, target))
        }
        _ => Err(Error::Llvm(format!("{what} without a label"))),
    }
}

/// The probe branch `@p bra L`: see `extra::PROBE`.
pub(super) fn lower_probe<'c, 'a>(
    l: &Lowerer<'c, 'a>,
    fs: &mut FnState<'c, 'a>,
    i: &Instruction<'a>,
) -> Result<(), Error> {
    let f = fs.func;
    let (c, target) = guard_and_target(l, fs, i, "probe branch")?;
    let fall = l.new_block(fs, "fall");
    let probe = l.new_block(fs, "probe");
    let normal = l.new_block(fs, "asis");
    let mode = arg(l, f, extra::PROBE).into_int_value();
    let k = |v: u64| l.i32().const_int(v, false);
    let mut cases = vec![(k(1), probe), (k(2), fall), (k(3), target)];
    // Mode 4: the uniform register bounding the branch's interval, as 4 bytes at PBUF[t].
    let bound = with_cur(l, |c| c.probe_regs.get(&fs.node).cloned());
    if let Some(name) = bound {
        if let Some((reg, st, _)) = l.reg(fs, &name) {
            let here = l.b.get_insert_block().unwrap();
            let capture = l.new_block(fs, "probe.bound");
            cases.push((k(4), capture));
            l.b.position_at_end(capture);
            let v = l.b.build_load(st, reg, "").unwrap();
            let v = l.coerce(v, l.i32().into(), false);
            let p = elem(
                l,
                arg(l, f, extra::PBUF),
                l.ctx.i8_type().into(),
                t_i64(l, f),
            );
            let st = l.b.build_store(p, v).unwrap();
            let _ = st.set_alignment(1);
            l.b.build_return(None).unwrap();
            l.b.position_at_end(here);
        } else {
            return Err(Error::Llvm(format!(
                "probe bound `{name}` is not a register"
            )));
        }
    }
    l.b.build_switch(mode, normal, &cases).unwrap();
    l.b.position_at_end(probe);
    let i8t = l.ctx.i8_type();
    let p = elem(l, arg(l, f, extra::PBUF), i8t.into(), t_i64(l, f));
    l.b.build_store(p, l.b.build_int_z_extend(c, i8t, "").unwrap())
        .unwrap();
    l.b.build_return(None).unwrap();
    l.b.position_at_end(normal);
    l.b.build_conditional_branch(c, target, fall).unwrap();
    l.b.position_at_end(fall);
    Ok(())
}

/// The latch `@p bra head` of a stride loop: probe mode 8 (an interchanged iteration that
/// is not the thread's last, `cta/interchange.rs`) takes it and mode 7 (the thread's last)
/// falls through, both without looking at `p` (`K.fis` computed which threads leave from the
/// induction values, the step and the bound; `p` itself is still set for code after the
/// loop). In mode 7 LLVM then drops the way back to the header and the compare.
pub(super) fn lower_latch<'c, 'a>(
    l: &Lowerer<'c, 'a>,
    fs: &mut FnState<'c, 'a>,
    i: &Instruction<'a>,
) -> Result<(), Error> {
    let (c, target) = guard_and_target(l, fs, i, "stride loop latch")?;
    let mode = arg(l, fs.func, extra::PROBE).into_int_value();
    let is = |m: u64| {
        l.b.build_int_compare(IntPredicate::EQ, mode, l.c32(m), "")
            .unwrap()
    };
    let c = l.b.build_or(c, is(8), "").unwrap();
    let c =
        l.b.build_and(c, l.b.build_not(is(7), "").unwrap(), "")
            .unwrap();
    let fall = l.new_block(fs, "fall");
    l.b.build_conditional_branch(c, target, fall).unwrap();
    l.b.position_at_end(fall);
    Ok(())
}

/// `shfl.sync` computed from the operand arrays when whole warps take part (PTX ISA
/// semantics as `runtime::cta::shfl_source`).
fn inline_shfl<'c, 'a>(
    l: &Lowerer<'c, 'a>,
    fs: &mut FnState<'c, 'a>,
    mode: u32,
    bop: &Operand<'a>,
    cop: &Operand<'a>,
) -> (IntValue<'c>, IntValue<'c>) {
    let f = fs.func;
    let b = &l.b;
    let i32t = l.i32();
    let c = |v: u64| i32t.const_int(v, false);
    let bv = match const_of(l, bop) {
        Some(v) => c(v & 0xffff_ffff),
        None => get_u32(l, f, extra::OPB),
    };
    let cv = match const_of(l, cop) {
        Some(v) => c(v & 0xffff_ffff),
        None => get_u32(l, f, extra::OPC),
    };
    let t = arg(l, f, extra::T).into_int_value();
    let lane = b.build_and(t, c(31), "lane").unwrap();
    let bval = b.build_and(bv, c(31), "").unwrap();
    let cval = b.build_and(cv, c(31), "").unwrap();
    let seg = b
        .build_and(b.build_right_shift(cv, c(8), false, "").unwrap(), c(31), "")
        .unwrap();
    let nseg = b.build_not(seg, "").unwrap();
    let max_lane = b
        .build_or(
            b.build_and(lane, seg, "").unwrap(),
            b.build_and(cval, nseg, "").unwrap(),
            "",
        )
        .unwrap();
    let min_lane = b.build_and(lane, seg, "").unwrap();
    let opa = arg(l, f, extra::OPA);
    // The previous round's operands.
    let prev = b
        .build_xor(arg(l, f, extra::BANK).into_int_value(), c(1), "")
        .unwrap();
    let bank0 = opa_index(l, f, prev, l.i64().const_zero());
    // Modes 10 and 11 (later stages of a warp chain): the previous stage's operands from `OPLR`,
    // indexed by lane (`idx` less the warp's first thread; -31..62 for `up`/`down`).
    let chained = mode_in(l, f, 10, 11);
    // `idx` the thread's element of the operand bank, `li` (i32) the same as a lane number.
    let load = |idx: IntValue<'c>, li: IntValue<'c>| -> IntValue<'c> {
        let li = b.build_int_s_extend(li, l.i64(), "").unwrap();
        let q = elem(l, arg(l, f, extra::OPLR), i32t.into(), li);
        let idx = b.build_int_add(bank0, idx, "").unwrap();
        let p = elem(l, opa, i32t.into(), idx);
        let p = b
            .build_select(chained, q, p, "")
            .unwrap()
            .into_pointer_value();
        b.build_load(i32t, p, "").unwrap().into_int_value()
    };
    let t64 = t_i64(l, f);
    let own = load(t64, lane);
    match mode {
        shfl::UP | shfl::DOWN => {
            let (j, p) = if mode == shfl::UP {
                let j = b.build_int_sub(lane, bval, "").unwrap();
                (
                    j,
                    b.build_int_compare(IntPredicate::SGE, j, max_lane, "")
                        .unwrap(),
                )
            } else {
                let j = b.build_int_add(lane, bval, "").unwrap();
                (
                    j,
                    b.build_int_compare(IntPredicate::ULE, j, max_lane, "")
                        .unwrap(),
                )
            };
            let d64 = b.build_int_z_extend(bval, l.i64(), "").unwrap();
            let idx = if mode == shfl::UP {
                b.build_int_sub(t64, d64, "").unwrap()
            } else {
                b.build_int_add(t64, d64, "").unwrap()
            };
            let other = load(idx, j);
            (
                b.build_select(p, other, own, "").unwrap().into_int_value(),
                p,
            )
        }
        _ => {
            let j = if mode == shfl::BFLY {
                b.build_xor(lane, bval, "").unwrap()
            } else {
                b.build_or(min_lane, b.build_and(bval, nseg, "").unwrap(), "")
                    .unwrap()
            };
            let p = b
                .build_int_compare(IntPredicate::ULE, j, max_lane, "")
                .unwrap();
            let src = b.build_select(p, j, lane, "").unwrap().into_int_value();
            let base = b.build_and(t, c(!31u32 as u64), "").unwrap();
            let idx = b
                .build_int_z_extend(b.build_or(base, src, "").unwrap(), l.i64(), "")
                .unwrap();
            (load(idx, src), p)
        }
    }
}
