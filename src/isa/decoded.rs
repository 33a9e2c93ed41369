//! A decoded, typed view of an instruction for the lowering stage: which form of `ptx.isa` it
//! is and which of its modifiers filled which slot, plus convenience accessors on
//! `syntax::ast::Instruction` (the [`InstructionExt`] trait) for the questions lowering asks
//! most: its types, rounding mode, state space, memory ordering, scope, comparison and vector
//! width.

use smallvec::SmallVec;

use super::forms::{isa, Fills, Form, FormId, ModRepair, OperandMismatch, Slot};
use super::{Mod, Opcode};
use crate::syntax::ast::Instruction;

/// More modifiers than any form has slots; such an instruction is rejected without matching.
const MAX_MODS: usize = 64;
/// Instructions with more modifiers than this are matched in source order only (no form has
/// nearly as many; the reordering search is quadratic).
const MAX_REORDER: usize = 16;

/// An instruction matched against its form.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Decoded {
    pub form: FormId,
    /// Which modifiers (indices into `mods`) filled which slot of the form.
    pub fills: Fills,
    /// The instruction's modifiers in the order of the form's slots (the manual's order, which
    /// `fmt` prints); the source order when it already was that. Modifiers written after an
    /// operand stay last.
    pub mods: SmallVec<[Mod; 4]>,
}

/// Why an instruction matches no form.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MatchError {
    /// No form accepts the modifiers. `ranked` lists the opcode's forms, closest first; `repair`
    /// says how the closest one (`ranked[0]`) would have to change.
    Modifiers {
        ranked: Vec<FormId>,
        repair: Box<ModRepair>,
    },
    /// Forms accept the modifiers (the first is `form`) but none accepts the operands.
    Operands {
        form: FormId,
        mismatch: OperandMismatch,
    },
}

/// Matches an instruction against the forms of its opcode.
pub fn decode(instr: &Instruction<'_>) -> Result<Decoded, MatchError> {
    let table = isa();
    if instr.mods.len() > MAX_MODS {
        // No form has this many slots; do not spend quadratic time explaining it.
        return Err(MatchError::Modifiers {
            ranked: table.forms_of(instr.opcode).map(|f| f.id).collect(),
            repair: Box::new(ModRepair {
                cost: instr.mods.len() as u32,
                fills: Fills::new(),
                extra: SmallVec::from_slice(&[MAX_MODS as u16]),
                missing: SmallVec::new(),
            }),
        });
    }
    // One attempt: the form with modifiers `mods` (already in its order); `Err` when the
    // modifiers fit and the operands do not.
    let attempt = |form: &Form, mods: SmallVec<[Mod; 4]>| {
        let fills = form.match_mods(&mods)?;
        Some(match form.match_operands(&instr.operands) {
            Ok(()) => Ok(Decoded {
                form: form.id,
                fills,
                mods,
            }),
            Err(m) => Err((form.id, m)),
        })
    };
    let mut first_mod_match: Option<(FormId, OperandMismatch)> = None;
    for form in table.forms_of(instr.opcode) {
        match attempt(form, instr.mods.clone()) {
            None => {}
            Some(Ok(d)) => return Ok(d),
            Some(Err((id, m))) => {
                // Prefer the mismatch that got furthest through the operand list.
                let better = match (&first_mod_match, m) {
                    (None, _) => true,
                    (Some((_, OperandMismatch::Count { .. })), OperandMismatch::Shape { .. }) => {
                        true
                    }
                    (
                        Some((_, OperandMismatch::Shape { index: a, .. })),
                        OperandMismatch::Shape { index: b, .. },
                    ) => b > *a,
                    _ => false,
                };
                if better {
                    first_mod_match = Some((id, m));
                }
            }
        }
    }
    // ptxas takes most modifiers in any order: match each form again with the modifiers in the
    // order it declares them, where the source order is one ptxas also takes (`order.rs`).
    if instr.mods.len() <= MAX_REORDER {
        for form in table.forms_of(instr.opcode) {
            let Some(mods) = super::order::canonical(form, instr) else {
                continue;
            };
            match attempt(form, mods) {
                None => {}
                Some(Ok(d)) => return Ok(d),
                Some(Err(e)) => {
                    first_mod_match.get_or_insert(e);
                }
            }
        }
    }
    if let Some((form, mismatch)) = first_mod_match {
        return Err(MatchError::Operands { form, mismatch });
    }
    let mut scored: Vec<(u32, FormId, ModRepair)> = table
        .forms_of(instr.opcode)
        .map(|f| {
            let r = f.mod_repair(&instr.mods);
            (r.cost, f.id, r)
        })
        .collect();
    scored.sort_by_key(|(c, id, _)| (*c, *id));
    let ranked = scored.iter().map(|(_, id, _)| *id).collect();
    let repair = scored
        .into_iter()
        .next()
        .map(|(_, _, r)| r)
        .unwrap_or(ModRepair {
            cost: 0,
            fills: Fills::new(),
            extra: SmallVec::new(),
            missing: SmallVec::new(),
        });
    Err(MatchError::Modifiers {
        ranked,
        repair: Box::new(repair),
    })
}

impl Decoded {
    /// Whether the instruction has modifier `m` (anywhere, including after operands).
    pub fn has(&self, m: Mod) -> bool {
        self.mods.contains(&m)
    }

    /// The matched form.
    pub fn form(&self) -> &'static Form {
        isa().form(self.form)
    }

    pub fn opcode(&self) -> Opcode {
        self.form().opcode
    }

    /// Filled slots with the modifiers that filled them, in slot order.
    pub fn filled(&self) -> impl Iterator<Item = (&'static Slot, &[Mod])> + '_ {
        let form = self.form();
        self.fills.iter().map(move |f| {
            let start = f.start as usize;
            (
                &form.slots[f.slot as usize],
                &self.mods[start..start + f.len as usize],
            )
        })
    }

    /// The modifiers that filled placeholder `name` (`.dtype` or `dtype`); empty when the slot
    /// is absent or was left out.
    pub fn slot_mods(&self, name: &str) -> &[Mod] {
        let Some(idx) = self.form().slot_index(name) else {
            return &[];
        };
        self.fills
            .iter()
            .find(|f| f.slot as usize == idx)
            .map_or(&[], |f| {
                &self.mods[f.start as usize..(f.start + f.len) as usize]
            })
    }

    /// The (first) modifier that filled placeholder `name`.
    pub fn slot(&self, name: &str) -> Option<Mod> {
        self.slot_mods(name).first().copied()
    }

    /// Type modifiers in source order (for `cvt.f32.s32`: `.f32` then `.s32`, i.e. dtype then
    /// atype), leaving out modifiers written after operands (the video byte selectors).
    pub fn types(&self) -> SmallVec<[Mod; 3]> {
        self.filled()
            .filter(|(slot, _)| slot.after_operand.is_none())
            .flat_map(|(_, ms)| ms.iter().copied())
            .filter(|m| m.is_instr_type())
            .collect()
    }

    fn head_mods(&self) -> impl Iterator<Item = Mod> + '_ {
        self.filled()
            .filter(|(slot, _)| slot.after_operand.is_none())
            .flat_map(|(_, ms)| ms.iter().copied())
    }

    /// The rounding modifier, if any.
    pub fn rounding(&self) -> Option<Mod> {
        self.head_mods().find(|m| m.is_rounding())
    }

    /// The first state space (`ld.global` → `.global`; `cp.async.ca.shared.global` → `.shared`).
    pub fn space(&self) -> Option<Mod> {
        self.head_mods().find(|m| m.is_space())
    }

    /// Every state space, in source order (destination before source for copies).
    pub fn spaces(&self) -> SmallVec<[Mod; 2]> {
        self.head_mods().filter(|m| m.is_space()).collect()
    }

    /// The memory ordering (`.relaxed`, `.acquire`, …, `.volatile`).
    pub fn sem(&self) -> Option<Mod> {
        self.head_mods().find(|m| m.is_sem())
    }

    /// The memory scope (`.cta`, `.cluster`, `.gpu`, `.sys`; `.gl` for `membar`).
    pub fn scope(&self) -> Option<Mod> {
        self.head_mods().find(|m| m.is_scope())
    }

    /// The comparison of `set`/`setp`/`vset*` (`.lt`, `.geu`, …).
    pub fn cmp_op(&self) -> Option<Mod> {
        self.slot(".CmpOp").or_else(|| self.slot(".cmp"))
    }

    /// The boolean combiner of `set`/`setp` (`.and`, `.or`, `.xor`).
    pub fn bool_op(&self) -> Option<Mod> {
        self.slot(".BoolOp")
    }

    /// Vector width from `.v2`/`.v4`/`.v8`.
    pub fn vec_width(&self) -> Option<u8> {
        self.head_mods().find_map(Mod::vec_len)
    }
}

/// Typed accessors on an instruction. Those that depend on the form decode it first (and fall
/// back to the modifiers alone when the instruction matches no form); decode once with
/// [`InstructionExt::decode`] when asking several questions. `Instruction::has(Mod)` is an
/// inherent method of the AST.
pub trait InstructionExt {
    /// Matches the instruction against its forms.
    fn decode(&self) -> Result<Decoded, MatchError>;
    /// Type modifiers in source order: dtype then atype (`cvt.rn.f32.s32` → `.f32`, `.s32`).
    fn types(&self) -> SmallVec<[Mod; 3]>;
    fn rounding(&self) -> Option<Mod>;
    fn space(&self) -> Option<Mod>;
    fn sem(&self) -> Option<Mod>;
    fn scope(&self) -> Option<Mod>;
    fn cmp_op(&self) -> Option<Mod>;
    fn bool_op(&self) -> Option<Mod>;
    fn vec_width(&self) -> Option<u8>;
    /// The modifier that filled placeholder `name` of the matched form (`.dtype`, `.level::cache_hint`).
    fn slot(&self, name: &str) -> Option<Mod>;
}

impl InstructionExt for Instruction<'_> {
    fn decode(&self) -> Result<Decoded, MatchError> {
        decode(self)
    }

    fn types(&self) -> SmallVec<[Mod; 3]> {
        match decode(self) {
            Ok(d) => d.types(),
            Err(_) => self
                .mods
                .iter()
                .copied()
                .filter(|m| m.is_instr_type())
                .collect(),
        }
    }

    fn rounding(&self) -> Option<Mod> {
        self.mods.iter().copied().find(|m| m.is_rounding())
    }

    fn space(&self) -> Option<Mod> {
        self.mods.iter().copied().find(|m| m.is_space())
    }

    fn sem(&self) -> Option<Mod> {
        self.mods.iter().copied().find(|m| m.is_sem())
    }

    fn scope(&self) -> Option<Mod> {
        self.mods.iter().copied().find(|m| m.is_scope())
    }

    fn cmp_op(&self) -> Option<Mod> {
        match decode(self) {
            Ok(d) => d.cmp_op(),
            Err(_) if matches!(self.opcode, Opcode::Set | Opcode::Setp) => {
                self.mods.iter().copied().find(|m| m.is_cmp())
            }
            Err(_) => None,
        }
    }

    fn bool_op(&self) -> Option<Mod> {
        match decode(self) {
            Ok(d) => d.bool_op(),
            Err(_) => None,
        }
    }

    fn vec_width(&self) -> Option<u8> {
        self.mods.iter().copied().find_map(Mod::vec_len)
    }

    fn slot(&self, name: &str) -> Option<Mod> {
        decode(self).ok().and_then(|d| d.slot(name))
    }
}
