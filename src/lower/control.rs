//! Control flow: `bra` (guarded → conditional branch), `brx.idx` over `.branchtargets` (switch),
//! `ret`, `exit` and `trap`.

use super::*;

pub fn lower<'c, 'a>(
    l: &Lowerer<'c, 'a>,
    fs: &mut FnState<'c, 'a>,
    ins: &Ins<'_, 'a>,
) -> Result<bool, Error> {
    let i = ins.i;
    // Guarded terminators: branch to the action or fall through.
    let mut cont = None;
    if let Some(g) = i.guard.filter(|_| matches!(ins.op, "bra" | "ret" | "exit")) {
        let c = l.pred(fs, g.pred, g.negated, g.span)?;
        if ins.op == "bra" {
            let target = label(l, fs, ins)?;
            let next = l.new_block(fs, "fall");
            l.b.build_conditional_branch(c, target, next).unwrap();
            l.b.position_at_end(next);
            return Ok(true);
        }
        let then_bb = l.new_block(fs, "if");
        let next = l.new_block(fs, "endif");
        l.b.build_conditional_branch(c, then_bb, next).unwrap();
        l.b.position_at_end(then_bb);
        cont = Some(next);
    }
    match ins.op {
        "bra" => {
            let target = label(l, fs, ins)?;
            l.b.build_unconditional_branch(target).unwrap();
        }
        "brx" => {
            let idx = l.operand(fs, &ins.ops()[0], Ty::u(32))?.into_int_value();
            let Some(Operand::Name { name, span, .. }) = ins.ops().get(1) else {
                return Err(invalid(
                    ins.span(),
                    "`brx.idx` needs a `.branchtargets` list",
                ));
            };
            let targets =
                fs.branch_targets.get(name).cloned().ok_or_else(|| {
                    invalid(*span, format!("unknown `.branchtargets` list `{name}`"))
                })?;
            let mut cases = Vec::new();
            for (k, t) in targets.iter().enumerate() {
                let bb = *fs
                    .labels
                    .get(t)
                    .ok_or_else(|| invalid(*span, format!("unknown label `{t}`")))?;
                cases.push((l.i32().const_int(k as u64, false), bb));
            }
            // An out-of-range index is undefined behaviour in PTX.
            let default = l.new_block(fs, "brx.default");
            l.b.build_switch(idx, default, &cases).unwrap();
            l.b.position_at_end(default);
            l.b.build_unreachable().unwrap();
        }
        "ret" => call::emit_ret(l, fs)?,
        "exit" => {
            if fs.is_kernel {
                call::emit_ret(l, fs)?;
            } else {
                // `exit` from a device function ends the thread: the target's realization, or
                // inline PTX where the target carries it; then unreachable.
                if !l.target.sync_op(l, fs, ins.i)? {
                    l.target.inline_asm_ok(ins.i)?;
                    l.inline_asm(None, &[], "exit;", "", true);
                }
                l.b.build_unreachable().unwrap();
            }
        }
        "trap" => {
            let msg = l.trap_message(fs);
            l.target.trap(l, &msg);
            l.b.build_unreachable().unwrap();
        }
        _ => return Ok(false),
    }
    if let Some(next) = cont {
        l.b.position_at_end(next);
    }
    Ok(true)
}

fn label<'c, 'a>(
    l: &Lowerer<'c, 'a>,
    fs: &FnState<'c, 'a>,
    ins: &Ins<'_, 'a>,
) -> Result<BasicBlock<'c>, Error> {
    let _ = l;
    match ins.ops().first() {
        Some(Operand::Name { name, span, .. }) => fs
            .labels
            .get(name)
            .copied()
            .ok_or_else(|| invalid(*span, format!("unknown label `{name}`"))),
        _ => Err(invalid(ins.span(), "`bra` needs a label")),
    }
}
