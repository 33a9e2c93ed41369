//! The instruction generator of the ptxas-differential test: single PTX instructions made from
//! the forms of `src/isa/ptx.isa`, with modifiers in the manual's order and in permuted orders,
//! operands typed by a few strategies (one of which is usually the right one; ptxas judges),
//! and deliberately broken variants. Deterministic: the same table gives the same cases.

use ptx2llvm::isa::forms::{isa, Form, OperandKind, PairMode};
use ptx2llvm::isa::Mod;

/// How a case was made from its form.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Variant {
    /// Modifiers in the manual's order.
    Canonical,
    /// The same modifiers in another order.
    Permuted,
    /// A required modifier dropped, one repeated, an operand dropped or retyped.
    Broken,
}

impl Variant {
    pub fn name(self) -> &'static str {
        match self {
            Variant::Canonical => "canonical",
            Variant::Permuted => "permuted",
            Variant::Broken => "broken",
        }
    }
}

/// One generated instruction and the target it is judged for.
#[derive(Clone, Debug)]
pub struct Case {
    pub target: &'static str,
    pub variant: Variant,
    pub text: String,
}

/// The targets, each with the PTX version its modules declare.
pub const TARGETS: &[(&str, &str)] = &[
    ("sm_100a", "9.0"),
    ("sm_90a", "9.0"),
    ("sm_80", "9.0"),
    ("sm_75", "9.0"),
];

/// The kernel a case is placed in: registers of every width, variables in each state space,
/// a device function and a label, so any operand the generator writes is declared.
pub fn module(target: &str, version: &str, body: &[&str]) -> String {
    let mut s = format!(
        ".version {version}\n.target {target}\n.address_size 64\n\
         .global .align 16 .b8 gm[1024];\n.const .align 16 .b8 cm[256];\n\
         .func fn()\n{{\nret;\n}}\n\
         .visible .entry k(.param .u64 p)\n{{\n\
         .reg .pred %p<8>;\n.reg .b16 %h<8>;\n.reg .b32 %r<8>;\n.reg .b64 %rd<8>;\n\
         .reg .b128 %q<4>;\n.shared .align 16 .b8 sm[1024];\n"
    );
    for line in body {
        s.push_str(line);
        s.push('\n');
    }
    s.push_str("L1:\nret;\n}\n");
    s
}

/// The line of the first body instruction in [`module`] (after it come `L1:`, `ret;`, `}`).
pub fn body_line() -> usize {
    module("sm_80", "9.0", &[]).matches('\n').count() - 2
}

/// The register (by bit width) a strategy gives an operand.
fn reg(bits: u32, k: usize) -> String {
    match bits {
        1 => format!("%p{}", 1 + k % 6),
        0..=16 => format!("%h{}", 1 + k % 6),
        17..=32 => format!("%r{}", 1 + k % 6),
        33..=64 => format!("%rd{}", 1 + k % 6),
        _ => format!("%q{}", 1 + k % 3),
    }
}

/// Operand typing strategies: which width each value operand gets.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Typing {
    /// Every operand the instruction's last type.
    Uniform,
    /// The destination the first type, sources the last (`cvt.f32.s64`).
    DestFirst,
    /// The destination (and `c`) twice the type (`mul.wide`, `mad.wide`).
    Wide,
    /// A predicate destination (`setp`, `testp`, `vote`), and predicate `c`.
    PredDest,
    /// A predicate last source (`selp`), otherwise uniform.
    PredLast,
    /// Broken: every operand half (or twice) the right width.
    WrongWidth,
}

const TYPINGS: &[Typing] = &[
    Typing::Uniform,
    Typing::DestFirst,
    Typing::Wide,
    Typing::PredDest,
    Typing::PredLast,
];

/// Writes one operand of the pattern.
fn operand(form: &Form, k: usize, types: &[Mod], vec: Option<u8>, typing: Typing) -> String {
    let pat = &form.operands[k];
    let name = pat.name.as_str();
    let last = types.last().and_then(|t| t.instr_type_bits()).unwrap_or(32);
    let first = types
        .first()
        .and_then(|t| t.instr_type_bits())
        .unwrap_or(32);
    let n_ops = form.operands.len();
    let mut bits = match typing {
        Typing::Uniform => last,
        Typing::DestFirst => {
            if k == 0 {
                first
            } else {
                last
            }
        }
        Typing::Wide => {
            if k == 0 || name == "c" {
                last * 2
            } else {
                last
            }
        }
        Typing::PredDest => {
            if k == 0 || name.starts_with("{!}") || name == "c" || name == "q" {
                1
            } else {
                last
            }
        }
        Typing::PredLast => {
            if k + 1 == n_ops {
                1
            } else {
                last
            }
        }
        Typing::WrongWidth => {
            if last >= 32 {
                last / 2
            } else {
                last * 2
            }
        }
    };
    let bare = name.trim_start_matches("{!}").trim_start_matches("{-}");
    let bare = bare.split('{').next().unwrap_or(bare);
    let bare = bare.split('.').next().unwrap_or(bare);
    match pat.kind {
        OperandKind::Address => {
            return if name.contains("tmem") {
                "[%r1]".into()
            } else {
                "[%rd1]".into()
            }
        }
        OperandKind::AddressList => return "[%rd1, {%r1, %r2}]".into(),
        OperandKind::List => return "(%r1)".into(),
        OperandKind::Vector => {
            let n = pat.name.matches(',').count() + 1;
            let items: Vec<String> = (0..n).map(|i| reg(bits, k + i)).collect();
            return format!("{{{}}}", items.join(", "));
        }
        OperandKind::Value => {}
    }
    match bare {
        "membermask" | "mask" => return "-1".into(),
        "sreg" => return "%tid.x".into(),
        "avar" | "var" => return "gm".into(),
        "avar+imm" | "var+imm" => return "gm+4".into(),
        "fname" => return "fn".into(),
        "kernel" => return "k".into(),
        "_" => return "_".into(),
        "cache-policy" => bits = 64,
        _ if bare.starts_with("imm") => return "1".into(),
        _ if bare.ends_with("desc") => bits = 64,
        _ => {}
    }
    let one = |i: usize| reg(bits, k * 2 + i);
    match (pat.pair, vec) {
        (PairMode::Required, _) => format!("{}|{}", reg(1, k), reg(1, k + 1)),
        (_, Some(n)) => {
            let items: Vec<String> = (0..n as usize).map(one).collect();
            format!("{{{}}}", items.join(", "))
        }
        _ => one(0),
    }
}

/// Small deterministic generator (xorshift) for permutations.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

/// The modifier choices of variant `i` of a form: a modifier sequence per filled slot, and
/// the slot it came from (for modifiers written after operands).
fn choose(form: &Form, i: usize) -> Vec<(usize, Vec<Mod>)> {
    let mut out = Vec::new();
    for (j, slot) in form.slots.iter().enumerate() {
        let alts: Vec<&[Mod]> = slot
            .alts()
            .iter()
            .map(|a| a.as_slice())
            .filter(|a| !a.is_empty())
            .collect();
        if alts.is_empty() {
            continue;
        }
        if slot.skippable() && (i + j) % 2 == 1 {
            continue;
        }
        let pick = alts[(i * (j + 1) + i / 2) % alts.len()];
        out.push((j, pick.to_vec()));
    }
    out
}

/// How many modifier variants a form gets: enough to use each value of its largest slot once,
/// capped.
fn variant_count(form: &Form) -> usize {
    let widest = form
        .slots
        .iter()
        .map(|s| s.alts().iter().filter(|a| !a.is_empty()).count())
        .max()
        .unwrap_or(1);
    widest.clamp(2, 6)
}

/// Every case, in a stable order.
pub fn cases() -> Vec<Case> {
    let mut out = Vec::new();
    let mut seen = std::collections::HashSet::new();
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    for (f, form) in isa().forms().iter().enumerate() {
        let op = form.opcode.spelling();
        for i in 0..variant_count(form) {
            let chosen = choose(form, i);
            let mut head: Vec<Mod> = Vec::new();
            let mut after: Vec<(u8, Mod)> = Vec::new();
            for (j, ms) in &chosen {
                match form.slots[*j].after_operand {
                    Some(at) => after.extend(ms.iter().map(|&m| (at, m))),
                    None => head.extend(ms.iter().copied()),
                }
            }
            let types: Vec<Mod> = head.iter().copied().filter(|m| m.is_instr_type()).collect();
            let vec = head.iter().find_map(|m| m.vec_len());
            let hint = head.iter().any(|m| m.spelling() == ".L2::cache_hint");
            let target_of = |k: usize| TARGETS[(f + i + k) % TARGETS.len()].0;
            let spell = |mods: &[Mod]| -> String {
                let mut s = op.to_string();
                for m in mods {
                    s.push_str(m.spelling());
                }
                s
            };
            let mut push = |out: &mut Vec<Case>, target: &'static str, variant, text: String| {
                if seen.insert((target, text.clone())) {
                    out.push(Case {
                        target,
                        variant,
                        text,
                    });
                }
            };
            // Operands by every typing strategy; with a `.vN` the data operands are vectors.
            let typed: Vec<String> = TYPINGS
                .iter()
                .map(|&t| operands_with_vec(form, &after, &types, vec, t, hint))
                .collect();
            let mut distinct = typed.clone();
            distinct.dedup();
            let line = |mods: &[Mod], ops: &str| {
                if ops.is_empty() {
                    format!("{};", spell(mods))
                } else {
                    format!("{} {ops};", spell(mods))
                }
            };
            for ops in &distinct {
                push(&mut out, "sm_100a", Variant::Canonical, line(&head, ops));
            }
            // Other targets see the first typing only.
            push(
                &mut out,
                target_of(1),
                Variant::Canonical,
                line(&head, &typed[0]),
            );
            if head.len() >= 2 {
                let mut rev = head.clone();
                rev.reverse();
                let mut rot = head.clone();
                rot.rotate_left(1);
                let mut shuf = head.clone();
                for a in (1..shuf.len()).rev() {
                    let b = (rng.next() % (a as u64 + 1)) as usize;
                    shuf.swap(a, b);
                }
                for (n, p) in [rev, rot, shuf].into_iter().enumerate() {
                    for ops in &distinct {
                        push(&mut out, target_of(n), Variant::Permuted, line(&p, ops));
                    }
                }
            }
            // Broken variants, for every other variant of a form.
            if i % 2 == 0 {
                if let Some(pos) = chosen.iter().position(|(j, _)| {
                    !form.slots[*j].skippable() && form.slots[*j].after_operand.is_none()
                }) {
                    let drop = &chosen[pos].1;
                    let mut h = head.clone();
                    if let Some(at) = h.iter().position(|m| drop.contains(m)) {
                        h.remove(at);
                        push(&mut out, "sm_100a", Variant::Broken, line(&h, &typed[0]));
                    }
                }
                if let Some(&m) = head.last() {
                    let mut h = head.clone();
                    h.push(m);
                    push(&mut out, "sm_100a", Variant::Broken, line(&h, &typed[0]));
                }
                let wrong = operands_with_vec(form, &after, &types, vec, Typing::WrongWidth, hint);
                push(&mut out, "sm_100a", Variant::Broken, line(&head, &wrong));
                if let Some(cut) = typed[0].rfind(", ") {
                    push(
                        &mut out,
                        "sm_100a",
                        Variant::Broken,
                        line(&head, &typed[0][..cut]),
                    );
                }
            }
        }
    }
    out
}

fn operands_with_vec(
    form: &Form,
    after: &[(u8, Mod)],
    types: &[Mod],
    vec: Option<u8>,
    typing: Typing,
    hint: bool,
) -> String {
    let (min, _) = form.operand_range();
    // `.L2::cache_hint` comes with its cache-policy operand.
    let policy = form
        .operands
        .iter()
        .position(|o| o.name == "cache-policy")
        .filter(|_| hint);
    let count = policy.map_or(min, |p| p + 1).min(form.operands.len());
    let mut out = Vec::new();
    for k in 0..count {
        // With `.vN`, value operands that carry data are brace vectors (`ld.v2`, `st.v4`,
        // `mov.v2`, vector atomics); names that are not data stay scalar.
        let pat = &form.operands[k];
        let data = matches!(pat.kind, OperandKind::Value)
            && matches!(pat.name.as_str(), "d" | "a" | "b" | "c")
            && !(pat.name == "a" && form.operands.iter().any(|o| o.kind == OperandKind::Address));
        let mut s = operand(form, k, types, if data { vec } else { None }, typing);
        for (at, m) in after {
            if *at as usize == k {
                s.push_str(m.spelling());
            }
        }
        out.push(s);
    }
    out.join(", ")
}
