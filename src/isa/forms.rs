//! Instruction forms: `ptx.isa` read at run time (`include_str!`, one `OnceLock` per block of
//! forms, read on first use) into typed forms, and the matcher that says which form an
//! instruction is and which of its modifiers filled which slot.
//!
//! A form is an ordered list of modifier *slots* (a required literal such as `.sync`, an optional
//! one such as `{.ftz}`, or a placeholder such as `.type` = one of a set of spellings) followed by
//! an operand pattern. An instruction's modifiers, in source order, must fill the slots in order:
//! every required slot exactly once, optional slots at most once, and no modifier left over. The
//! matcher solves this with dynamic programming over (modifier, slot) positions — a memoised
//! backtracking search — so optional and required slots interplay correctly, and the same table
//! yields the closest form and the cheapest repair when nothing matches (for diagnostics).

use std::sync::{Arc, OnceLock};

use smallvec::SmallVec;

use super::notation::{self, FormSpec};
pub use super::notation::{OperandKind, PairMode};
use super::{Mod, Opcode};
use crate::syntax::ast::Operand;

/// Index of a form in [`Isa::forms`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct FormId(pub u32);

/// One alternative of a slot: a sequence of modifiers (usually one).
pub type ModSeq = SmallVec<[Mod; 2]>;

/// The allowed values of a slot, shared by every slot with the same definition.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SlotValues {
    /// Allowed modifier sequences, as declared. An empty sequence (`none`) makes the slot
    /// skippable.
    pub alts: Vec<ModSeq>,
    /// The one-modifier alternatives, sorted (binary-searched: `.bxyzw` has 4096).
    singles: Vec<Mod>,
    /// The longer alternatives, longest first.
    multis: Vec<ModSeq>,
    has_empty: bool,
}

impl SlotValues {
    fn new(alts: Vec<ModSeq>) -> SlotValues {
        let mut singles: Vec<Mod> = alts.iter().filter(|a| a.len() == 1).map(|a| a[0]).collect();
        singles.sort_unstable();
        singles.dedup();
        let mut multis: Vec<ModSeq> = alts.iter().filter(|a| a.len() > 1).cloned().collect();
        multis.sort_by_key(|a| std::cmp::Reverse(a.len()));
        let has_empty = alts.iter().any(|a| a.is_empty());
        SlotValues {
            alts,
            singles,
            multis,
            has_empty,
        }
    }

    /// Length of the longest alternative.
    fn max_len(&self) -> usize {
        self.multis
            .first()
            .map_or(usize::from(!self.singles.is_empty()), |a| a.len())
    }

    /// Lengths of the alternatives that `rest` starts with, longest first.
    fn matches<'s>(&'s self, rest: &'s [Mod]) -> impl Iterator<Item = usize> + 's {
        let single = rest
            .first()
            .is_some_and(|m| self.singles.binary_search(m).is_ok())
            .then_some(1);
        self.multis
            .iter()
            .filter(move |a| rest.starts_with(a))
            .map(|a| a.len())
            .chain(single)
    }
}

/// A modifier position of a form.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Slot {
    /// Placeholder name such as `.type` or `.level::cache_hint`; `None` for a literal.
    pub name: Option<String>,
    pub optional: bool,
    pub values: Arc<SlotValues>,
    /// `Some(i)` when the modifier is written after operand `i` (`a{.asel}`, `[a]{.unified}`).
    pub after_operand: Option<u8>,
}

impl Slot {
    /// Allowed modifier sequences (usually one modifier each).
    pub fn alts(&self) -> &[ModSeq] {
        &self.values.alts
    }

    /// Whether the slot may be left empty.
    pub fn skippable(&self) -> bool {
        self.optional || self.values.has_empty
    }

    /// Whether the slot accepts exactly this modifier sequence.
    pub fn accepts(&self, mods: &[Mod]) -> bool {
        self.values.matches(mods).any(|n| n == mods.len())
    }

    /// How the slot is written in the manual: `.type`, `{.ftz}`, `.sync`.
    pub fn display(&self) -> String {
        let inner = match &self.name {
            Some(n) => n.clone(),
            None => self.values().join(", "),
        };
        if self.optional {
            format!("{{{inner}}}")
        } else {
            inner
        }
    }

    /// The allowed spellings, for messages: `.u16`, `.u32`, ….
    pub fn values(&self) -> Vec<String> {
        self.values_preview(usize::MAX).0
    }

    /// The first `n` allowed spellings and how many there are in all.
    pub fn values_preview(&self, n: usize) -> (Vec<String>, usize) {
        let nonempty = self.alts().iter().filter(|a| !a.is_empty());
        let total = nonempty.clone().count();
        let shown = nonempty
            .take(n)
            .map(|a| a.iter().map(|m| m.spelling()).collect::<String>())
            .collect();
        (shown, total)
    }
}

/// An operand position of a form.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OperandPat {
    /// The manual's name (`d`, `[a]`, `cache-policy`, `p[|q]`).
    pub name: String,
    pub kind: OperandKind,
    pub pair: PairMode,
    /// `{!}c` / `{-}a`
    pub negatable: bool,
    /// Optional group `{, ...}` index; `None` for a required operand.
    pub group: Option<u8>,
}

/// One instruction form of the table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Form {
    pub id: FormId,
    pub opcode: Opcode,
    /// Opcode and modifier part as the manual writes it: `add{.sat}.s32`.
    pub head: String,
    /// Operand part as the manual writes it: `d, a, b`.
    pub operands_text: String,
    pub slots: Vec<Slot>,
    pub operands: Vec<OperandPat>,
    /// Line in `ptx.isa`.
    pub line: u32,
    /// Every modifier any slot accepts, sorted: a quick filter before the full match.
    vocabulary: Vec<Mod>,
}

impl Form {
    /// `add{.sat}.s32 d, a, b`
    pub fn text(&self) -> String {
        if self.operands_text.is_empty() {
            self.head.clone()
        } else {
            format!("{} {}", self.head, self.operands_text)
        }
    }

    /// Index of the slot for placeholder `name` (with or without the leading dot).
    pub fn slot_index(&self, name: &str) -> Option<usize> {
        self.slots.iter().position(|s| {
            s.name
                .as_deref()
                .is_some_and(|n| n == name || n.strip_prefix('.') == Some(name))
        })
    }

    /// Fewest and most operands the form takes.
    pub fn operand_range(&self) -> (usize, usize) {
        let min = self.operands.iter().filter(|o| o.group.is_none()).count();
        (min, self.operands.len())
    }

    /// Matches modifiers exactly; returns which modifiers filled which slot.
    pub fn match_mods(&self, mods: &[Mod]) -> Option<Fills> {
        if mods.len() > self.slots.iter().map(|s| s.values.max_len()).sum::<usize>()
            || !mods
                .iter()
                .all(|m| self.vocabulary.binary_search(m).is_ok())
        {
            return None;
        }
        let r = self.mod_repair(mods);
        (r.cost == 0).then_some(r.fills)
    }

    /// The cheapest way to make `mods` fit this form: cost 0 is an exact match; otherwise
    /// `extra` lists modifiers that fit no slot and `missing` the required slots left empty.
    pub fn mod_repair(&self, mods: &[Mod]) -> ModRepair {
        let n = mods.len();
        let m = self.slots.len();
        let w = m + 1;
        // cost[i * w + j]: cheapest repair matching mods[i..] against slots[j..].
        let mut cost = vec![0u32; (n + 1) * w];
        for i in (0..=n).rev() {
            for j in (0..=m).rev() {
                cost[i * w + j] = if j == m {
                    (n - i) as u32
                } else {
                    let slot = &self.slots[j];
                    let mut best = u32::from(!slot.skippable()) + cost[i * w + j + 1];
                    for len in slot.values.matches(&mods[i..]) {
                        best = best.min(cost[(i + len) * w + j + 1]);
                    }
                    if i < n {
                        best = best.min(1 + cost[(i + 1) * w + j]);
                    }
                    best
                };
            }
        }
        // Trace back, preferring to fill a slot, then to skip it, then to drop a modifier.
        let mut rep = ModRepair {
            cost: cost[0],
            fills: Fills::new(),
            extra: SmallVec::new(),
            missing: SmallVec::new(),
        };
        let (mut i, mut j) = (0usize, 0usize);
        while i < n || j < m {
            let here = cost[i * w + j];
            if j < m {
                let slot = &self.slots[j];
                let fill = slot
                    .values
                    .matches(&mods[i..])
                    .find(|&len| cost[(i + len) * w + j + 1] == here);
                if let Some(len) = fill {
                    rep.fills.push(Fill {
                        slot: j as u16,
                        start: i as u16,
                        len: len as u16,
                    });
                    i += len;
                    j += 1;
                    continue;
                }
                let skip = u32::from(!slot.skippable());
                if skip + cost[i * w + j + 1] == here {
                    if skip == 1 {
                        rep.missing.push(j as u16);
                    }
                    j += 1;
                    continue;
                }
            }
            // Only dropping modifier `i` is left.
            rep.extra.push(i as u16);
            i += 1;
        }
        rep
    }

    /// The same modifiers in the order this form wants them, when they would fit it in some
    /// order (`add.f32.sat` → `.sat .f32`); `None` when no order fits. Used for diagnostics.
    pub fn reorder(&self, mods: &[Mod]) -> Option<SmallVec<[Mod; 8]>> {
        let mut used = vec![false; mods.len()];
        let mut out: SmallVec<[Mod; 8]> = SmallVec::new();
        for slot in &self.slots {
            // Longer alternatives first, then the earliest unused modifier (source order) that
            // the slot accepts on its own, so `.f32.s32` keeps dtype before atype.
            let mut picked: Option<SmallVec<[usize; 2]>> = None;
            for alt in slot.alts().iter().filter(|a| a.len() > 1) {
                let mut picks: SmallVec<[usize; 2]> = SmallVec::new();
                for m in alt {
                    match (0..mods.len())
                        .find(|&i| !used[i] && !picks.contains(&i) && mods[i] == *m)
                    {
                        Some(i) => picks.push(i),
                        None => break,
                    }
                }
                if picks.len() == alt.len() {
                    picked = Some(picks);
                    break;
                }
            }
            if picked.is_none() {
                picked = (0..mods.len())
                    .find(|&i| !used[i] && slot.accepts(&mods[i..=i]))
                    .map(|i| SmallVec::from_slice(&[i]));
            }
            match picked {
                Some(picks) => {
                    for i in picks {
                        used[i] = true;
                        out.push(mods[i]);
                    }
                }
                None if slot.skippable() => {}
                None => return None,
            }
        }
        (used.iter().all(|&u| u) && self.match_mods(&out).is_some()).then_some(out)
    }

    /// Checks the operand list against the pattern.
    pub fn match_operands(&self, ops: &[Operand<'_>]) -> Result<(), OperandMismatch> {
        self.operand_layout(ops).map(|_| ())
    }

    /// Which operand position of the form each of `ops` fills (optional groups may sit in the
    /// middle: `bar.red.popc.u32 d, a{, b}, {!}c` with three operands is `d, a, c`).
    pub fn operand_layout(
        &self,
        ops: &[Operand<'_>],
    ) -> Result<SmallVec<[usize; 8]>, OperandMismatch> {
        let (min, max) = self.operand_range();
        if ops.len() < min || ops.len() > max {
            return Err(OperandMismatch::Count {
                min,
                max,
                found: ops.len(),
            });
        }
        // Choose which optional groups are present: every choice that gives the right count,
        // in order; the first that fits wins, else report the latest-failing one.
        let groups: Vec<u8> = {
            let mut g: Vec<u8> = self.operands.iter().filter_map(|o| o.group).collect();
            g.dedup();
            g
        };
        let mut best: Option<(usize, usize, &'static str)> = None;
        let combos = 1u32 << groups.len().min(16);
        for mask in 0..combos {
            let present = |g: u8| {
                groups
                    .iter()
                    .position(|&x| x == g)
                    .is_some_and(|k| mask & (1 << k) != 0)
            };
            let layout: SmallVec<[usize; 8]> = self
                .operands
                .iter()
                .enumerate()
                .filter(|(_, o)| o.group.is_none_or(present))
                .map(|(k, _)| k)
                .collect();
            if layout.len() != ops.len() {
                continue;
            }
            let mut failed = None;
            for (idx, (&pat, op)) in layout.iter().zip(ops).enumerate() {
                if let Err(reason) = operand_fits(&self.operands[pat], op) {
                    failed = Some((idx, pat, reason));
                    break;
                }
            }
            match failed {
                None => return Ok(layout),
                Some(f) => {
                    if best.is_none_or(|b| f.0 > b.0) {
                        best = Some(f);
                    }
                }
            }
        }
        match best {
            Some((index, pattern, reason)) => Err(OperandMismatch::Shape {
                index,
                pattern,
                reason,
            }),
            None => Err(OperandMismatch::Count {
                min,
                max,
                found: ops.len(),
            }),
        }
    }
}

/// Whether one source operand fits one operand position; the error says what was expected.
pub fn operand_fits(pat: &OperandPat, op: &Operand<'_>) -> Result<(), &'static str> {
    if let Operand::Pair(first, _, _) = op {
        if pat.pair == PairMode::No {
            return Err("a pair `d|p` is not allowed here");
        }
        return operand_fits(
            &OperandPat {
                pair: PairMode::No,
                ..pat.clone()
            },
            first,
        );
    }
    if pat.pair == PairMode::Required {
        return Err("expected a pair of destinations `p|q`");
    }
    match (pat.kind, op) {
        (_, Operand::Name { negated: true, .. }) if !pat.negatable => {
            Err("`!` negation is only allowed on predicate operands written `{!}c`")
        }
        (
            OperandKind::Value,
            Operand::Name { .. } | Operand::Imm(_) | Operand::Vec(..) | Operand::Sink(_),
        ) => Ok(()),
        (OperandKind::Value, Operand::Addr(_) | Operand::AddrList(..)) => {
            Err("expected a register, immediate or symbol, not an address in `[...]`")
        }
        (OperandKind::Value, _) => Err("expected a register, immediate or symbol"),
        (
            OperandKind::Address | OperandKind::AddressList,
            Operand::Addr(_) | Operand::AddrList(..),
        ) => Ok(()),
        (OperandKind::Address | OperandKind::AddressList, _) => {
            Err("expected an address in brackets, like `[a]`")
        }
        (OperandKind::List, Operand::List(..)) => Ok(()),
        (OperandKind::List, _) => Err("expected a parenthesised list, like `(a, b)`"),
        (OperandKind::Vector, Operand::Vec(..) | Operand::Name { .. } | Operand::Sink(_)) => Ok(()),
        (OperandKind::Vector, _) => Err("expected a vector in braces, like `{a, b}`"),
    }
}

/// Which modifiers (`start..start + len` of the instruction's list) filled slot `slot`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Fill {
    pub slot: u16,
    pub start: u16,
    pub len: u16,
}

pub type Fills = SmallVec<[Fill; 8]>;

/// Result of [`Form::mod_repair`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModRepair {
    /// Number of edits (dropped modifiers + empty required slots); 0 is a match.
    pub cost: u32,
    pub fills: Fills,
    /// Indices of modifiers that fit no slot.
    pub extra: SmallVec<[u16; 2]>,
    /// Indices of required slots left empty.
    pub missing: SmallVec<[u16; 2]>,
}

/// Why operands do not fit a form.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OperandMismatch {
    Count {
        min: usize,
        max: usize,
        found: usize,
    },
    /// Source operand `index` does not fit operand position `pattern` of the form.
    Shape {
        index: usize,
        pattern: usize,
        reason: &'static str,
    },
}

/// The instruction-set table. Each block of `ptx.isa` is read on first use of one of its forms
/// (build.rs found the blocks and each opcode's forms): a kernel meets a few dozen opcodes, and
/// reading the whole table took about 20 ms of every process.
#[derive(Debug)]
pub struct Isa {
    /// The forms of each block of `super::FORM_BLOCKS`, once read.
    blocks: Vec<OnceLock<Vec<Form>>>,
}

/// The source of the table, compiled in.
pub const ISA_SOURCE: &str = include_str!("ptx.isa");

/// The table; its blocks are read from `ptx.isa` on first use.
pub fn isa() -> &'static Isa {
    static ISA: OnceLock<Isa> = OnceLock::new();
    ISA.get_or_init(|| Isa {
        blocks: super::FORM_BLOCKS.iter().map(|_| OnceLock::new()).collect(),
    })
}

/// Typed forms of `specs`, whose first form has id `first`.
fn forms_of_specs(specs: &[FormSpec], first: u32) -> Vec<Form> {
    let mut forms = Vec::with_capacity(specs.len());
    // Alternatives are shared between forms of a block; convert each distinct set once.
    let mut cache: std::collections::HashMap<&[Vec<String>], Arc<SlotValues>> = Default::default();
    for (k, spec) in specs.iter().enumerate() {
        // build.rs made the enum from the same table.
        let opcode =
            Opcode::from_spelling(&spec.opcode).expect("every opcode of ptx.isa is an Opcode");
        let slots: Vec<Slot> = spec
            .slots
            .iter()
            .map(|s| Slot {
                name: s.name.clone(),
                optional: s.optional,
                values: cache
                    .entry(s.alts.as_slice())
                    .or_insert_with(|| {
                        Arc::new(SlotValues::new(
                            s.alts
                                .iter()
                                .map(|a| a.iter().filter_map(|m| Mod::from_spelling(m)).collect())
                                .collect(),
                        ))
                    })
                    .clone(),
                after_operand: s.after_operand.map(|i| i as u8),
            })
            .collect();
        let operands = spec
            .operands
            .iter()
            .map(|o| OperandPat {
                name: o.name.clone(),
                kind: o.kind,
                pair: o.pair,
                negatable: o.negatable,
                group: o.group.map(|g| g as u8),
            })
            .collect();
        let mut vocabulary: Vec<Mod> = slots
            .iter()
            .flat_map(|s: &Slot| s.values.alts.iter().flatten().copied())
            .collect();
        vocabulary.sort_unstable();
        vocabulary.dedup();
        forms.push(Form {
            id: FormId(first + k as u32),
            opcode,
            head: spec.head.clone(),
            operands_text: spec.operands_text.clone(),
            slots,
            operands,
            line: spec.line as u32,
            vocabulary,
        });
    }
    forms
}

impl Isa {
    /// The forms of block `b` of `super::FORM_BLOCKS`, read on first use.
    fn block(&self, b: usize) -> &[Form] {
        self.blocks[b].get_or_init(|| {
            let (lo, hi, line, first) = super::FORM_BLOCKS[b];
            // The table is part of the program: build.rs read every block alone successfully.
            let specs = notation::parse_block(&ISA_SOURCE[lo as usize..hi as usize], line as usize)
                .expect("src/isa/ptx.isa is valid (build.rs read it)");
            forms_of_specs(&specs, first)
        })
    }

    /// Every form, in declaration order (reads the whole table).
    pub fn forms(&self) -> Vec<&Form> {
        (0..super::FORM_COUNT as u32)
            .map(|k| self.form(FormId(k)))
            .collect()
    }

    pub fn form(&self, id: FormId) -> &Form {
        let b = super::FORM_BLOCKS.partition_point(|blk| blk.3 <= id.0) - 1;
        &self.block(b)[(id.0 - super::FORM_BLOCKS[b].3) as usize]
    }

    /// The forms of one opcode, in declaration order.
    pub fn forms_of(&self, op: Opcode) -> impl Iterator<Item = &Form> + '_ {
        super::OPCODE_FORMS
            .get(op as usize)
            .copied()
            .unwrap_or_default()
            .iter()
            .map(move |&id| self.form(FormId(id)))
    }

    /// Number of forms of one opcode.
    pub fn form_count(&self, op: Opcode) -> usize {
        super::OPCODE_FORMS.get(op as usize).map_or(0, |f| f.len())
    }

    /// The forms whose slots `mods` fill exactly, with their fills, in declaration order.
    pub fn match_mods<'s>(
        &'s self,
        op: Opcode,
        mods: &'s [Mod],
    ) -> impl Iterator<Item = (&'s Form, Fills)> + 's {
        self.forms_of(op)
            .filter_map(move |f| f.match_mods(mods).map(|fills| (f, fills)))
    }
}
