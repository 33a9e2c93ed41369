//! Instruction validation against the forms of `ptx.isa`: modifiers (which are allowed, in what
//! order, which are missing) and operands (how many, and which must be addresses, lists or
//! pairs). Messages name the instruction and list the forms that would have fitted.

use crate::isa::decoded::{decode, MatchError};
use crate::isa::forms::{isa, Form, OperandMismatch, Slot};
use crate::syntax::ast::Instruction;
use crate::syntax::diag::Diagnostic;
use crate::syntax::span::Span;

/// How many candidate forms a message lists before `…`.
const FORMS_SHOWN: usize = 6;
/// How many values of a placeholder a message lists before `…`.
const VALUES_SHOWN: usize = 12;

/// Validates one instruction against its forms; `None` when it fits one.
pub fn check_instruction(instr: &Instruction<'_>) -> Option<Diagnostic> {
    match decode(instr) {
        Ok(_) => None,
        Err(MatchError::Modifiers { ranked, repair }) => {
            let table = isa();
            let op = instr.opcode.spelling();
            let best = table.form(*ranked.first()?);
            let forms = list_forms(ranked.iter().map(|&id| table.form(id)));
            // Right modifiers in the wrong order: say which order the manual wants.
            if instr.mods.len() <= 16 {
                for &id in &ranked {
                    let form = table.form(id);
                    if let Some(order) = form.reorder(&instr.mods) {
                        let fixed: String = order.iter().map(|m| m.spelling()).collect();
                        return Some(
                            Diagnostic::new(
                                instr.op_span,
                                format!(
                                    "modifiers of `{op}` are out of order: expected `{op}{fixed}`"
                                ),
                            )
                            .with_note(format!("form: {}", form.text())),
                        );
                    }
                }
            }
            let mut d = if let Some(&extra) = repair.extra.first() {
                let m = instr.mods.get(extra as usize)?.spelling();
                let repeated = instr.mods[..extra as usize]
                    .iter()
                    .any(|x| x.spelling() == m);
                let what = if repeated {
                    "repeated modifier"
                } else {
                    "modifier"
                };
                Diagnostic::new(
                    instr.op_span,
                    format!("{what} `{m}` is not allowed on `{op}` here; expected one of: {forms}"),
                )
            } else if let Some(&missing) = repair.missing.first() {
                let slot = &best.slots[missing as usize];
                let what = match &slot.name {
                    Some(n) => format!("a `{n}` modifier ({})", join_values(slot)),
                    None => join_values(slot),
                };
                Diagnostic::new(
                    instr.op_span,
                    format!("`{op}` is missing {what}; expected one of: {forms}"),
                )
            } else {
                Diagnostic::new(
                    instr.op_span,
                    format!("invalid modifiers on `{op}`; expected one of: {forms}"),
                )
            };
            d = d.with_note(describe_form(best));
            Some(d)
        }
        Err(MatchError::Operands { form, mismatch }) => {
            let form = isa().form(form);
            Some(operand_diagnostic(instr, form, mismatch))
        }
    }
}

fn operand_diagnostic(
    instr: &Instruction<'_>,
    form: &Form,
    mismatch: OperandMismatch,
) -> Diagnostic {
    let name = instr_name(instr);
    match mismatch {
        OperandMismatch::Count { min, max, found } => {
            let expected = if min == max {
                format!("{min} operand{}", plural(min))
            } else {
                format!("{min} to {max} operands")
            };
            let span = if found > max {
                span_of(&instr.operands[max..]).unwrap_or(instr.op_span)
            } else {
                span_of(&instr.operands).unwrap_or(instr.op_span)
            };
            let list = if form.operands_text.is_empty() {
                "none".to_string()
            } else {
                form.operands_text.clone()
            };
            Diagnostic::new(
                span,
                format!("wrong number of operands for `{name}`: expected {expected}: {list}; found {found}"),
            )
            .with_note(format!("form: {}", form.text()))
        }
        OperandMismatch::Shape {
            index,
            pattern,
            reason,
        } => {
            let span = instr
                .operands
                .get(index)
                .map_or(instr.op_span, |o| o.span());
            let pat = &form.operands[pattern];
            Diagnostic::new(
                span,
                format!(
                    "operand {} of `{name}` (`{}` in `{}`): {reason}",
                    index + 1,
                    pat.name,
                    form.text()
                ),
            )
        }
    }
}

/// `ld.global.f32`: the opcode and its modifiers as written.
/// `add.u32`: the opcode with its modifiers, as messages name an instruction.
pub(super) fn instr_name(instr: &Instruction<'_>) -> String {
    let mut s = instr.opcode.spelling().to_string();
    for m in &instr.mods {
        s.push_str(m.spelling());
    }
    s
}

fn span_of(ops: &[crate::syntax::ast::Operand<'_>]) -> Option<Span> {
    let first = ops.first()?.span();
    let last = ops.last()?.span();
    Some(first.to(last))
}

fn plural(n: usize) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}

/// `add.type, add{.sat}.s32, …` — distinct heads, closest first.
fn list_forms<'f>(forms: impl Iterator<Item = &'f Form>) -> String {
    let mut heads: Vec<&str> = Vec::new();
    let mut more = false;
    for f in forms {
        if heads.contains(&f.head.as_str()) {
            continue;
        }
        if heads.len() == FORMS_SHOWN {
            more = true;
            break;
        }
        heads.push(&f.head);
    }
    let mut s = heads.join(", ");
    if more {
        s.push_str(", …");
    }
    s
}

/// `` `.u16`, `.u32`, … `` — the first values of a slot.
fn join_values(slot: &Slot) -> String {
    let (values, total) = slot.values_preview(VALUES_SHOWN);
    let mut s = values
        .iter()
        .map(|v| format!("`{v}`"))
        .collect::<Vec<_>>()
        .join(", ");
    if total > values.len() {
        s.push_str(", …");
    }
    s
}

/// `closest form: add.type d, a, b where .type = { .u16, .u32, … }`
fn describe_form(form: &Form) -> String {
    let mut s = format!("closest form: {}", form.text());
    let mut seen: Vec<&str> = Vec::new();
    for slot in &form.slots {
        if let Some(name) = &slot.name {
            if seen.contains(&name.as_str()) {
                continue;
            }
            seen.push(name);
            let (vals, total) = slot.values_preview(VALUES_SHOWN);
            let mut list = vals.join(", ");
            if total > vals.len() {
                list.push_str(", …");
            }
            s.push_str(&format!("; {name} = {{ {list} }}"));
        }
    }
    s
}
