//! Reader for the notation of `src/isa/ptx.isa`, the PTX manual's own instruction syntax.
//!
//! It is shared by `build.rs` (which includes this file with `#[path]` to generate the `Opcode`
//! and `Mod` enums) and by the library (`crate::isa::forms`, which turns the result into typed
//! forms), so it depends on `std` only and works on strings.
//!
//! The notation:
//!
//! - A *statement* ends with `;` and may span lines. Blank lines separate *blocks*; a line that
//!   holds only a `#` comment is ignored, and `//` starts a comment anywhere on a line.
//! - A statement containing `=` is a *definition*: `.name = { v1, v2 };` or, for several names
//!   sharing one value set, `.a = .b = { ... };`. Definitions apply to the forms of their own
//!   block. A value is a sequence of modifier spellings (`.async.shared::cta`); `none` is the
//!   empty sequence; `.shared{::cta, ::cluster}` expands to three spellings and `[0-7]` inside a
//!   spelling to one spelling per digit. A name without a dot (`vop = { vadd, vsub };`) is an
//!   *opcode placeholder*: a form that starts with it stands for one form per listed opcode.
//! - Any other statement is a *form*: `opcode.mods operands`. The opcode is the first word; in
//!   the modifier part `.x` is required (a placeholder if the block defines `.x`, a literal
//!   otherwise), `{.x}` optional, `{.a, .b}` an optional choice and `{.a.b}` two consecutive
//!   optional modifiers.
//! - Operands are comma-separated: a name is a value, `[a]` an address, `[a, b]` an address
//!   list, `(a)` a call argument list, `{a, b}` a vector, `{, c}` an optional group, `{!}c` and
//!   `{-}a` mark an operand that may be negated, `d[|p]` an operand that may be a pair `d|p` and
//!   `p|q` one that must be. `a{.asel}`, `d.dsel` and `[a]{.unified}` are modifiers written after
//!   an operand; they become slots after the modifier part's slots.

use std::collections::{BTreeMap, BTreeSet};

/// What an operand position accepts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum OperandKind {
    /// A register, an immediate, a symbol, a vector `{..}` or `_`.
    Value,
    /// `[a]`
    Address,
    /// `[a, b]`: a bracketed list (textures, surfaces, tensor maps).
    AddressList,
    /// `(a, b)`: a call's argument or return list.
    List,
    /// `{a, b}`: a brace vector.
    Vector,
}

/// Whether an operand may be written as a pair `d|p`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PairMode {
    No,
    /// `d[|p]`
    Optional,
    /// `p|q`
    Required,
}

/// One operand of a form.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OperandSpec {
    /// The manual's name for it (`d`, `[a]`, `cache-policy`).
    pub name: String,
    pub kind: OperandKind,
    pub pair: PairMode,
    /// `{!}c` / `{-}a`
    pub negatable: bool,
    /// Index of the optional group `{, ...}` it belongs to; `None` when required.
    pub group: Option<usize>,
}

/// One modifier position of a form.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SlotSpec {
    /// Placeholder name (`.rnd`, `.level::cache_hint`); `None` for literals and choices.
    pub name: Option<String>,
    pub optional: bool,
    /// Allowed modifier sequences; an empty sequence (`none`) matches nothing.
    pub alts: Vec<Vec<String>>,
    /// `Some(i)` for a modifier written after operand `i` (`a{.asel}`, `[a]{.unified}`).
    pub after_operand: Option<usize>,
}

/// One instruction form.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FormSpec {
    pub opcode: String,
    /// The opcode and modifier part as written (`add{.sat}.s32`).
    pub head: String,
    /// The operand part as written, whitespace normalised (`d, a, b`).
    pub operands_text: String,
    pub slots: Vec<SlotSpec>,
    pub operands: Vec<OperandSpec>,
    /// 1-based line in `ptx.isa`.
    pub line: usize,
}

impl FormSpec {
    /// `head operands`, e.g. `add{.sat}.s32 d, a, b`.
    pub fn text(&self) -> String {
        if self.operands_text.is_empty() {
            self.head.clone()
        } else {
            format!("{} {}", self.head, self.operands_text)
        }
    }
}

/// The whole declaration.
#[derive(Debug, Clone, Default)]
pub struct IsaSpec {
    pub forms: Vec<FormSpec>,
    /// Every modifier spelling: all literals and all definition values (including the
    /// vocabulary blocks that declare no forms).
    pub modifiers: BTreeSet<String>,
    /// The blocks that declare forms, in order: `parse_block` on a block's lines yields its
    /// forms alone (build.rs records them, so that a process reads only the blocks of the
    /// opcodes it meets).
    pub blocks: Vec<BlockSpan>,
}

/// Where a block lies in the text and which forms it declares.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BlockSpan {
    /// 1-based lines of its first and last statement (inclusive).
    pub first_line: usize,
    pub last_line: usize,
    /// Index in `IsaSpec::forms` of its first form, and how many it declares.
    pub first_form: usize,
    pub forms: usize,
}

impl IsaSpec {
    /// Distinct opcodes in spelling order.
    pub fn opcodes(&self) -> BTreeSet<String> {
        self.forms.iter().map(|f| f.opcode.clone()).collect()
    }
}

/// Literal modifiers that are also placeholder names in other blocks (`tex.level` vs
/// `prefetch{.space}.level`); any other literal equal to a placeholder name is an error, because
/// it almost always means a definition is missing from its block.
const LITERALS_THAT_ARE_ALSO_PLACEHOLDERS: &[&str] = &[".level", ".pack", ".mask"];

struct Statement {
    line: usize,
    text: String,
}

/// A block's statements and the 1-based lines of its first and last one.
struct Block {
    statements: Vec<Statement>,
    first_line: usize,
    last_line: usize,
}

#[derive(Default)]
struct Defs {
    mods: BTreeMap<String, Vec<Vec<String>>>,
    opcodes: BTreeMap<String, Vec<String>>,
}

/// Parses the whole declaration. Errors carry the 1-based line number.
pub fn parse(text: &str) -> Result<IsaSpec, String> {
    let blocks = split_blocks(text)?;
    let mut spec = IsaSpec::default();
    let mut all_placeholders = BTreeSet::new();
    let mut parsed_blocks = Vec::new();
    for block in &blocks {
        let (defs, forms) = block_defs(block)?;
        for (name, values) in &defs.mods {
            all_placeholders.insert(name.clone());
            for v in values {
                spec.modifiers.extend(v.iter().cloned());
            }
        }
        parsed_blocks.push((defs, forms));
    }
    for (block, (defs, forms)) in blocks.iter().zip(&parsed_blocks) {
        let first_form = spec.forms.len();
        for st in forms {
            for form in parse_form(st, defs)? {
                for slot in &form.slots {
                    if slot.name.is_none() {
                        for alt in &slot.alts {
                            for m in alt {
                                if all_placeholders.contains(m)
                                    && !LITERALS_THAT_ARE_ALSO_PLACEHOLDERS.contains(&m.as_str())
                                {
                                    return Err(format!(
                                        "line {}: `{m}` is a placeholder elsewhere but this block does not define it",
                                        st.line
                                    ));
                                }
                                spec.modifiers.insert(m.clone());
                            }
                        }
                    }
                }
                spec.forms.push(form);
            }
        }
        if spec.forms.len() > first_form {
            spec.blocks.push(BlockSpan {
                first_line: block.first_line,
                last_line: block.last_line,
                first_form,
                forms: spec.forms.len() - first_form,
            });
        }
    }
    Ok(spec)
}

/// The forms of one block, from exactly its lines (`BlockSpan::first_line` to `last_line` of
/// a text `parse` accepted); `first_line` numbers them as in the whole text. The checks that
/// need the whole text (a literal that is a placeholder elsewhere) are `parse`'s.
pub fn parse_block(text: &str, first_line: usize) -> Result<Vec<FormSpec>, String> {
    let mut blocks = split_blocks(text)?;
    let [block] = blocks.as_mut_slice() else {
        return Err(format!("line {first_line}: not one block"));
    };
    for st in &mut block.statements {
        st.line += first_line - 1;
    }
    let (defs, forms) = block_defs(block)?;
    let mut out = Vec::new();
    for st in forms {
        out.extend(parse_form(st, &defs)?);
    }
    Ok(out)
}

/// A block's definitions, and its other statements (the forms).
fn block_defs(block: &Block) -> Result<(Defs, Vec<&Statement>), String> {
    let mut defs = Defs::default();
    let mut forms = Vec::new();
    for st in &block.statements {
        if st.text.contains('=') {
            parse_definition(st, &mut defs)?;
        } else {
            forms.push(st);
        }
    }
    Ok((defs, forms))
}

/// Splits the text into blocks of statements.
fn split_blocks(text: &str) -> Result<Vec<Block>, String> {
    let new_block = || Block {
        statements: Vec::new(),
        first_line: 0,
        last_line: 0,
    };
    let mut blocks: Vec<Block> = vec![new_block()];
    let mut pending = String::new();
    let mut pending_line = 0;
    let mut depth: i32 = 0;
    for (i, raw) in text.lines().enumerate() {
        let lineno = i + 1;
        if raw.trim().is_empty() {
            if !pending.trim().is_empty() {
                return Err(format!(
                    "line {pending_line}: statement is not terminated by `;` before a blank line"
                ));
            }
            if blocks.last().is_some_and(|b| !b.statements.is_empty()) {
                blocks.push(new_block());
            }
            continue;
        }
        if raw.trim_start().starts_with('#') {
            continue;
        }
        let line = match raw.find("//") {
            Some(p) => &raw[..p],
            None => raw,
        };
        for c in line.chars() {
            if pending.trim().is_empty() && !c.is_whitespace() {
                pending_line = lineno;
            }
            match c {
                '{' | '[' | '(' => depth += 1,
                '}' | ']' | ')' => depth -= 1,
                _ => {}
            }
            if c == ';' && depth == 0 {
                let text = std::mem::take(&mut pending);
                if let Some(b) = blocks.last_mut() {
                    if b.statements.is_empty() {
                        b.first_line = pending_line;
                    }
                    b.last_line = lineno;
                    b.statements.push(Statement {
                        line: pending_line,
                        text: text.trim().to_string(),
                    });
                }
                continue;
            }
            if depth < 0 {
                return Err(format!("line {lineno}: unbalanced closing bracket"));
            }
            pending.push(c);
        }
        pending.push(' ');
    }
    if !pending.trim().is_empty() {
        return Err(format!(
            "line {pending_line}: statement is not terminated by `;`"
        ));
    }
    blocks.retain(|b| !b.statements.is_empty());
    Ok(blocks)
}

/// Splits on commas at bracket depth 0.
fn split_top(s: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut depth = 0i32;
    let mut start = 0;
    for (i, c) in s.char_indices() {
        match c {
            '{' | '[' | '(' => depth += 1,
            '}' | ']' | ')' => depth -= 1,
            ',' if depth == 0 => {
                out.push(&s[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    out.push(&s[start..]);
    out
}

/// Byte index of the bracket matching the opening one at `open`.
fn matching(s: &str, open: usize) -> Option<usize> {
    let mut depth = 0i32;
    for (i, c) in s[open..].char_indices() {
        match c {
            '{' | '[' | '(' => depth += 1,
            '}' | ']' | ')' => {
                depth -= 1;
                if depth == 0 {
                    return Some(open + i);
                }
            }
            _ => {}
        }
    }
    None
}

fn parse_definition(st: &Statement, defs: &mut Defs) -> Result<(), String> {
    let line = st.line;
    let parts: Vec<&str> = st.text.split('=').collect();
    let (body, names) = match parts.split_last() {
        Some((b, n)) if !n.is_empty() => (b.trim(), n),
        _ => return Err(format!("line {line}: malformed definition `{}`", st.text)),
    };
    let inner = body
        .strip_prefix('{')
        .and_then(|b| b.strip_suffix('}'))
        .ok_or_else(|| format!("line {line}: definition values must be in braces: `{body}`"))?;
    let items: Vec<&str> = split_top(inner).into_iter().map(str::trim).collect();
    if items.iter().any(|s| s.is_empty()) {
        return Err(format!("line {line}: empty value in `{body}`"));
    }
    for name in names {
        let name = name.trim();
        if let Some(n) = name.strip_prefix('.') {
            if n.is_empty()
                || !n
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == ':')
            {
                return Err(format!("line {line}: bad placeholder name `{name}`"));
            }
            let mut values = Vec::new();
            for item in &items {
                if *item == "none" {
                    values.push(Vec::new());
                } else {
                    values.extend(expand_sequence(item).map_err(|e| format!("line {line}: {e}"))?);
                }
            }
            defs.mods.insert(name.to_string(), values);
        } else if !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
            let mut ops = Vec::new();
            for item in &items {
                if !item.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
                    return Err(format!("line {line}: bad opcode `{item}` in `{name}`"));
                }
                ops.push(item.to_string());
            }
            defs.opcodes.insert(name.to_string(), ops);
        } else {
            return Err(format!("line {line}: bad definition name `{name}`"));
        }
    }
    Ok(())
}

/// Reads one dotted token starting at `s[i] == '.'`, with an optional `{::a, ::b}` suffix group.
/// Returns the spellings it stands for and the index after it.
fn dotted_token(s: &str, i: usize) -> Result<(Vec<String>, usize), String> {
    let b = s.as_bytes();
    let mut j = i + 1;
    while j < b.len() {
        if b[j].is_ascii_alphanumeric() || matches!(b[j], b'_' | b':') {
            j += 1;
        } else if b[j] == b'[' && s[j..].find(']').is_some_and(|c| c <= 4) {
            // A `[0-7]` digit range is part of the spelling.
            j += s[j..].find(']').map_or(1, |c| c + 1);
        } else {
            break;
        }
    }
    let base = &s[i..j];
    if base.len() < 2 {
        return Err(format!("empty modifier at `{}`", &s[i..]));
    }
    let mut spellings = expand_ranges(base)?;
    if j + 1 < b.len() && b[j] == b'{' && b[j + 1] == b':' {
        let close = matching(s, j).ok_or_else(|| format!("unclosed `{{` in `{s}`"))?;
        let mut all = spellings.clone();
        for suffix in s[j + 1..close].split(',') {
            let suffix = suffix.trim();
            if !suffix.starts_with("::") {
                return Err(format!("suffix `{suffix}` must start with `::`"));
            }
            for base in &spellings {
                all.push(format!("{base}{suffix}"));
            }
        }
        spellings = all;
        j = close + 1;
    }
    Ok((spellings, j))
}

/// Expands `[a-b]` digit ranges in one spelling.
fn expand_ranges(s: &str) -> Result<Vec<String>, String> {
    let Some(open) = s.find('[') else {
        return Ok(vec![s.to_string()]);
    };
    let close = s[open..]
        .find(']')
        .map(|c| c + open)
        .ok_or_else(|| format!("unclosed `[` in `{s}`"))?;
    let range = &s[open + 1..close];
    let (lo, hi) = range
        .split_once('-')
        .and_then(|(a, b)| Some((a.parse::<u32>().ok()?, b.parse::<u32>().ok()?)))
        .ok_or_else(|| format!("bad range `[{range}]` in `{s}`"))?;
    if lo > hi || hi > 9 {
        return Err(format!("bad range `[{range}]` in `{s}`"));
    }
    let mut out = Vec::new();
    for rest in expand_ranges(&s[close + 1..])? {
        for d in lo..=hi {
            out.push(format!("{}{d}{rest}", &s[..open]));
        }
    }
    Ok(out)
}

/// Expands a value such as `.async.shared{::cta, ::cluster}` into its modifier sequences.
fn expand_sequence(s: &str) -> Result<Vec<Vec<String>>, String> {
    let s = s.trim();
    let mut seqs: Vec<Vec<String>> = vec![Vec::new()];
    let mut i = 0;
    while i < s.len() {
        let c = s.as_bytes()[i];
        if c.is_ascii_whitespace() {
            i += 1;
            continue;
        }
        if c != b'.' {
            return Err(format!("expected a modifier starting with `.` in `{s}`"));
        }
        let (spellings, next) = dotted_token(s, i)?;
        let mut grown = Vec::with_capacity(seqs.len() * spellings.len());
        for seq in &seqs {
            for sp in &spellings {
                let mut v = seq.clone();
                v.push(sp.clone());
                grown.push(v);
            }
        }
        seqs = grown;
        i = next;
    }
    if seqs.iter().all(|s| s.is_empty()) {
        return Err(format!("empty value `{s}`"));
    }
    Ok(seqs)
}

/// A slot for one dotted token of a form: a placeholder when the block defines it.
fn token_slot(
    spellings: Vec<String>,
    optional: bool,
    defs: &Defs,
    after: Option<usize>,
) -> SlotSpec {
    if spellings.len() == 1 {
        if let Some(values) = defs.mods.get(&spellings[0]) {
            return SlotSpec {
                name: Some(spellings[0].clone()),
                optional,
                alts: values.clone(),
                after_operand: after,
            };
        }
    }
    SlotSpec {
        name: None,
        optional,
        alts: spellings.into_iter().map(|s| vec![s]).collect(),
        after_operand: after,
    }
}

/// Parses modifier text (`.a{.b}{.c, .d}.e{::x}`) into slots.
fn parse_mods(
    s: &str,
    defs: &Defs,
    after: Option<usize>,
    out: &mut Vec<SlotSpec>,
) -> Result<(), String> {
    let b = s.as_bytes();
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            c if c.is_ascii_whitespace() => i += 1,
            b'.' => {
                let (spellings, next) = dotted_token(s, i)?;
                out.push(token_slot(spellings, false, defs, after));
                i = next;
            }
            b'{' => {
                let close = matching(s, i).ok_or_else(|| format!("unclosed `{{` in `{s}`"))?;
                let inner = &s[i + 1..close];
                let parts = split_top(inner);
                if parts.len() > 1 {
                    // `{.hi, .lo}`: one optional choice.
                    let mut alts = Vec::new();
                    for p in parts {
                        alts.extend(expand_sequence(p)?);
                    }
                    out.push(SlotSpec {
                        name: None,
                        optional: true,
                        alts,
                        after_operand: after,
                    });
                } else {
                    // `{.x}`, `{.shared{::cta}}`, `{.relaxed.sys}`: consecutive optional slots.
                    let ib = inner.as_bytes();
                    let mut k = 0;
                    while k < ib.len() {
                        if ib[k].is_ascii_whitespace() {
                            k += 1;
                            continue;
                        }
                        if ib[k] != b'.' {
                            return Err(format!("expected `.modifier` inside `{{{inner}}}`"));
                        }
                        let (spellings, next) = dotted_token(inner, k)?;
                        out.push(token_slot(spellings, true, defs, after));
                        k = next;
                    }
                }
                i = close + 1;
            }
            _ => return Err(format!("unexpected `{}` in modifiers `{s}`", &s[i..])),
        }
    }
    Ok(())
}

fn collapse_ws(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn parse_form(st: &Statement, defs: &Defs) -> Result<Vec<FormSpec>, String> {
    let line = st.line;
    let text = st.text.as_str();
    let word_end = text
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .unwrap_or(text.len());
    let word = &text[..word_end];
    if word.is_empty() || !word.starts_with(|c: char| c.is_ascii_lowercase()) {
        return Err(format!(
            "line {line}: a form must start with an opcode: `{text}`"
        ));
    }
    // The modifier part ends at the first whitespace outside braces.
    let mut depth = 0i32;
    let mut head_end = text.len();
    for (i, c) in text[word_end..].char_indices() {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            c if c.is_whitespace() && depth == 0 => {
                head_end = word_end + i;
                break;
            }
            _ => {}
        }
    }
    let mods_text = &text[word_end..head_end];
    let operands_src = text[head_end..].trim();
    let mut slots = Vec::new();
    parse_mods(mods_text, defs, None, &mut slots).map_err(|e| format!("line {line}: {e}"))?;
    let mut operands = Vec::new();
    parse_operands(operands_src, defs, &mut operands, &mut slots)
        .map_err(|e| format!("line {line}: {e}"))?;
    let opcodes = match defs.opcodes.get(word) {
        Some(list) => list.clone(),
        None => vec![word.to_string()],
    };
    Ok(opcodes
        .into_iter()
        .map(|op| FormSpec {
            head: format!("{op}{}", collapse_ws(mods_text).replace(' ', "")),
            opcode: op,
            operands_text: collapse_ws(operands_src),
            slots: slots.clone(),
            operands: operands.clone(),
            line,
        })
        .collect())
}

fn is_name_char(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_' || c == b'-'
}

fn parse_operands(
    s: &str,
    defs: &Defs,
    ops: &mut Vec<OperandSpec>,
    slots: &mut Vec<SlotSpec>,
) -> Result<(), String> {
    let mut groups = 0usize;
    parse_operand_list(s, None, &mut groups, defs, ops, slots)
}

fn parse_operand_list(
    s: &str,
    group: Option<usize>,
    groups: &mut usize,
    defs: &Defs,
    ops: &mut Vec<OperandSpec>,
    slots: &mut Vec<SlotSpec>,
) -> Result<(), String> {
    let b = s.as_bytes();
    let mut i = 0;
    let mut negatable = false;
    let push = |ops: &mut Vec<OperandSpec>, name: &str, kind: OperandKind, neg: &mut bool| {
        ops.push(OperandSpec {
            name: collapse_ws(name),
            kind,
            pair: PairMode::No,
            negatable: std::mem::take(neg),
            group,
        });
    };
    while i < b.len() {
        let c = b[i];
        if c.is_ascii_whitespace() || c == b',' {
            i += 1;
            continue;
        }
        match c {
            b'{' => {
                let close = matching(s, i).ok_or_else(|| format!("unclosed `{{` in `{s}`"))?;
                let inner = s[i + 1..close].trim();
                if let Some(rest) = inner.strip_prefix(',') {
                    let g = *groups;
                    *groups += 1;
                    parse_operand_list(rest, Some(g), groups, defs, ops, slots)?;
                } else if inner == "!" || inner == "-" {
                    negatable = true;
                } else if inner.starts_with('.') {
                    let last = ops
                        .len()
                        .checked_sub(1)
                        .ok_or("operand modifier before any operand")?;
                    let mut tmp = Vec::new();
                    parse_mods(&s[i..=close], defs, Some(last), &mut tmp)?;
                    slots.extend(tmp);
                } else {
                    push(ops, &s[i..=close], OperandKind::Vector, &mut negatable);
                }
                i = close + 1;
            }
            b'[' => {
                let close = matching(s, i).ok_or_else(|| format!("unclosed `[` in `{s}`"))?;
                let kind = if split_top(&s[i + 1..close]).len() > 1 {
                    OperandKind::AddressList
                } else {
                    OperandKind::Address
                };
                push(ops, &s[i..=close], kind, &mut negatable);
                i = close + 1;
            }
            b'(' => {
                let close = matching(s, i).ok_or_else(|| format!("unclosed `(` in `{s}`"))?;
                push(ops, &s[i..=close], OperandKind::List, &mut negatable);
                i = close + 1;
            }
            b'.' => {
                // `d.dsel`: a required modifier after the operand.
                let last = ops
                    .len()
                    .checked_sub(1)
                    .ok_or("operand modifier before any operand")?;
                let (spellings, next) = dotted_token(s, i)?;
                slots.push(token_slot(spellings, false, defs, Some(last)));
                i = next;
            }
            b'+' => {
                // `var+imm`: the offset belongs to the previous operand.
                i += 1;
                while i < b.len() && b[i].is_ascii_whitespace() {
                    i += 1;
                }
                let start = i;
                while i < b.len() && is_name_char(b[i]) {
                    i += 1;
                }
                let last = ops.last_mut().ok_or("`+` before any operand")?;
                last.name = format!("{}+{}", last.name, &s[start..i]);
            }
            b'|' => {
                // `p|q`: the previous operand must be a pair.
                i += 1;
                while i < b.len() && is_name_char(b[i]) {
                    i += 1;
                }
                let last = ops.last_mut().ok_or("`|` before any operand")?;
                last.pair = PairMode::Required;
                last.name = format!("{}|{}", last.name, s[..i].rsplit('|').next().unwrap_or(""));
            }
            c if is_name_char(c) => {
                let start = i;
                while i < b.len() && is_name_char(b[i]) {
                    i += 1;
                }
                push(ops, &s[start..i], OperandKind::Value, &mut negatable);
                if s[i..].starts_with("[|") {
                    let close = matching(s, i).ok_or_else(|| format!("unclosed `[` in `{s}`"))?;
                    if let Some(last) = ops.last_mut() {
                        last.pair = PairMode::Optional;
                        last.name.push_str(&s[i..=close]);
                    }
                    i = close + 1;
                }
            }
            _ => return Err(format!("unexpected `{}` in operands `{s}`", &s[i..])),
        }
    }
    if negatable {
        return Err(format!("`{{!}}` without an operand in `{s}`"));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_block_reads_alone_as_in_the_whole_text() {
        let text =
            "# x\n\nadd.type d, a, b;  // c\n.type = { .u32,\n  .s32 };\nsub.s32 d, a, b;\n\n\
                    vop.u32 d, a;\nvop = { vadd, vsub };\n";
        let spec = parse(text).unwrap();
        assert_eq!(spec.forms.len(), 4);
        assert_eq!(spec.blocks.len(), 2);
        let starts: Vec<usize> = std::iter::once(0)
            .chain(text.match_indices('\n').map(|(i, _)| i + 1))
            .collect();
        for b in &spec.blocks {
            let lo = starts[b.first_line - 1];
            let hi = starts.get(b.last_line).copied().unwrap_or(text.len());
            let alone = parse_block(&text[lo..hi], b.first_line).unwrap();
            assert_eq!(alone, spec.forms[b.first_form..b.first_form + b.forms]);
        }
        assert_eq!(spec.blocks[1].first_form, 2);
        assert_eq!(spec.forms[3].line, 8);
    }

    #[test]
    fn reads_a_small_block() {
        let spec = parse(
            "add{.rnd}{.ftz}.f32  d, a, b{, c};\n.rnd = { .rn, .rz };\n\nld.v[2-4].shared{::cta} d|p, [a]{.unified};\n",
        )
        .unwrap();
        assert_eq!(spec.forms.len(), 2);
        let f = &spec.forms[0];
        assert_eq!(f.head, "add{.rnd}{.ftz}.f32");
        assert_eq!(f.slots.len(), 3);
        assert_eq!(f.slots[0].name.as_deref(), Some(".rnd"));
        assert_eq!(f.slots[0].alts.len(), 2);
        assert_eq!(f.operands.len(), 4);
        assert_eq!(f.operands[3].group, Some(0));
        let g = &spec.forms[1];
        assert_eq!(g.slots[0].alts.len(), 3);
        assert_eq!(g.slots[1].alts.len(), 2);
        assert_eq!(g.operands[0].pair, PairMode::Required);
        assert_eq!(g.operands[1].kind, OperandKind::Address);
        assert_eq!(g.slots[2].after_operand, Some(1));
        assert!(spec.modifiers.contains(".shared::cta"));
        assert!(spec.modifiers.contains(".v3"));
    }

    #[test]
    fn reports_errors_with_lines() {
        let e = parse("add.type d, a\n\n").unwrap_err();
        assert!(e.starts_with("line 1"), "{e}");
        let e = parse("x.y d;\n.t = { };\n").unwrap_err();
        assert!(e.contains("line 2"), "{e}");
    }
}
