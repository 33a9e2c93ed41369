//! Target and PTX ISA version requirements of instructions and their features, declared in
//! `requirements.txt` (its header documents the format) and read once at run time like
//! `ptx.isa`. The checker (`check/target.rs`) holds every instruction of a module against the
//! module's `.target` and `.version` with it; `tests/target_requirements.rs` holds the table to
//! ptxas's verdicts, so it cannot drift from what ptxas accepts.
//!
//! Targets compare as ptxas compares them: by number for plain requirements (`sm_90a` has every
//! `sm_90` feature, `sm_100` every `sm_90` one), exactly for architecture-specific ones (`wgmma`
//! needs `sm_90a` itself) and within a family for family-specific ones (`sm_100f` features exist
//! on `sm_103f` and `sm_100a`, not on `sm_100` or `sm_110f`).

use std::fmt;
use std::sync::OnceLock;

use rustc_hash::FxHashMap as HashMap;
use smallvec::SmallVec;

use super::{lookup_mod, lookup_opcode, Mod, Opcode};

/// A PTX ISA version, `(major, minor)`.
pub type Version = (u32, u32);

/// The suffix of a target name: none, `f` (family-specific) or `a` (architecture-specific).
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Debug, Hash)]
pub enum Suffix {
    None,
    Family,
    Arch,
}

/// A target architecture `sm_XX{a,f}` (`compute_XX` names the same architecture).
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Debug, Hash)]
pub struct Arch {
    pub number: u32,
    pub suffix: Suffix,
}

impl Arch {
    /// Parses `sm_90a`, `compute_80`, `sm_100f`; `None` for anything else.
    pub fn parse(s: &str) -> Option<Arch> {
        let rest = s
            .strip_prefix("sm_")
            .or_else(|| s.strip_prefix("compute_"))?;
        let (digits, suffix) = match rest.as_bytes().last()? {
            b'a' => (&rest[..rest.len() - 1], Suffix::Arch),
            b'f' => (&rest[..rest.len() - 1], Suffix::Family),
            _ => (rest, Suffix::None),
        };
        if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) || digits.len() > 4 {
            return None;
        }
        Some(Arch {
            number: digits.parse().ok()?,
            suffix,
        })
    }

    /// The family an architecture belongs to: its major generation (`sm_103` → 10).
    fn family(self) -> u32 {
        self.number / 10
    }

    /// First PTX ISA version that knows this target (`None` for targets no version knows).
    pub fn min_version(self) -> Option<Version> {
        let name = self.to_string();
        ARCH_MIN_VERSION
            .iter()
            .find(|(a, _)| *a == name)
            .map(|&(_, v)| v)
    }
}

impl fmt::Display for Arch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let suffix = match self.suffix {
            Suffix::None => "",
            Suffix::Family => "f",
            Suffix::Arch => "a",
        };
        write!(f, "sm_{}{suffix}", self.number)
    }
}

/// First PTX ISA version that knows each architecture (`sm_XX`, with or without its `a`/`f`
/// suffix; the suffixed variants are listed when they came later). In ascending target order.
pub const ARCH_MIN_VERSION: &[(&str, Version)] = &[
    ("sm_10", (1, 0)),
    ("sm_11", (1, 0)),
    ("sm_12", (1, 2)),
    ("sm_13", (1, 2)),
    ("sm_20", (2, 0)),
    ("sm_30", (3, 0)),
    ("sm_32", (4, 0)),
    ("sm_35", (3, 1)),
    ("sm_37", (4, 1)),
    ("sm_50", (4, 0)),
    ("sm_52", (4, 1)),
    ("sm_53", (4, 2)),
    ("sm_60", (5, 0)),
    ("sm_61", (5, 0)),
    ("sm_62", (5, 0)),
    ("sm_70", (6, 0)),
    ("sm_72", (6, 1)),
    ("sm_75", (6, 3)),
    ("sm_80", (7, 0)),
    ("sm_86", (7, 1)),
    ("sm_87", (7, 4)),
    ("sm_88", (9, 0)),
    ("sm_89", (7, 8)),
    ("sm_90", (7, 8)),
    ("sm_90a", (8, 0)),
    ("sm_100", (8, 6)),
    ("sm_100a", (8, 6)),
    ("sm_100f", (8, 8)),
    ("sm_101", (8, 6)),
    ("sm_101a", (8, 6)),
    ("sm_101f", (8, 8)),
    ("sm_103", (8, 8)),
    ("sm_103a", (8, 8)),
    ("sm_103f", (8, 8)),
    ("sm_110", (9, 0)),
    ("sm_110a", (9, 0)),
    ("sm_110f", (9, 0)),
    ("sm_120", (8, 7)),
    ("sm_120a", (8, 7)),
    ("sm_120f", (8, 8)),
    ("sm_121", (8, 8)),
    ("sm_121a", (8, 8)),
    ("sm_121f", (8, 8)),
];

/// How one alternative of a requirement's TARGET column admits targets.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum TargetRule {
    /// `sm_86`: that target or any later one, whatever its suffix.
    AtLeast,
    /// `sm_90a`: exactly that architecture-specific target.
    Exactly,
    /// `sm_100f`: a family-specific or architecture-specific target of the same family, not
    /// older than the one named.
    InFamily,
}

/// One alternative of a TARGET column: `sm_89@8.1`.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct TargetAlt {
    pub arch: Arch,
    pub rule: TargetRule,
    /// A PTX ISA version this alternative needs beyond the line's (`@8.1`).
    pub ptx: Option<Version>,
}

impl TargetAlt {
    /// Whether target `t` has the feature under this alternative.
    pub fn admits(&self, t: Arch) -> bool {
        match self.rule {
            TargetRule::AtLeast => t.number >= self.arch.number,
            TargetRule::Exactly => t == self.arch,
            TargetRule::InFamily => {
                t.suffix != Suffix::None
                    && t.family() == self.arch.family()
                    && t.number >= self.arch.number
            }
        }
    }
}

impl fmt::Display for TargetAlt {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.rule {
            TargetRule::AtLeast => write!(f, "{} or higher", self.arch),
            TargetRule::Exactly => write!(f, "{}", self.arch),
            TargetRule::InFamily => write!(f, "{} (or a later target of its family)", self.arch),
        }
    }
}

/// What a requirement applies to.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Subject {
    Opcode(Opcode),
    /// A special register (`%clusterid`), read by any instruction.
    SpecialRegister(&'static str),
}

/// One line of `requirements.txt`.
#[derive(Clone, Debug)]
pub struct Requirement {
    pub subject: Subject,
    /// Modifiers that name the feature (and must be present).
    pub named: SmallVec<[Mod; 2]>,
    /// Modifiers that must be present but do not name the feature.
    pub conditions: SmallVec<[Mod; 2]>,
    /// `ops=N`: the instruction must have exactly this many operands.
    pub operand_count: Option<usize>,
    /// Alternatives; empty means every target.
    pub targets: Vec<TargetAlt>,
    /// First PTX ISA version with the feature.
    pub ptx: Option<Version>,
    /// An instruction with the feature, for the tests.
    pub example: &'static str,
    /// 1-based line in `requirements.txt`.
    pub line: usize,
}

/// Why a module does not meet a requirement.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Unmet {
    /// No alternative admits the target.
    Target,
    /// The target is admitted but the `.version` is older than `need`; `on` is the target
    /// alternative whose own version was the binding one, if any.
    Version { need: Version, on: Option<Arch> },
}

impl Requirement {
    /// The feature as the error message names it, quoted: its named modifiers (`` `.abs` ``),
    /// else the special register or the opcode (with the conditions and operand count that
    /// select the form: `` `cp.async` with 4 operands ``).
    pub fn feature(&self) -> String {
        if !self.named.is_empty() {
            let named: String = self.named.iter().map(|m| m.spelling()).collect();
            return format!("`{named}`");
        }
        match self.subject {
            Subject::SpecialRegister(s) => format!("`{s}`"),
            Subject::Opcode(o) => {
                // `cp.async` with 4 operands: the opcode and the conditions that select the form.
                let form: String = std::iter::once(o.spelling())
                    .chain(self.conditions.iter().map(|m| m.spelling()))
                    .collect();
                match self.operand_count {
                    Some(n) => format!("`{form}` with {n} operands"),
                    None => format!("`{form}`"),
                }
            }
        }
    }

    /// Whether the requirement applies to an instruction with this opcode, these modifiers and
    /// this many operands (special-register requirements are matched by [`Requirements::for_special_register`]).
    pub fn applies(&self, opcode: Opcode, mods: &[Mod], operands: usize) -> bool {
        self.subject == Subject::Opcode(opcode)
            && self
                .named
                .iter()
                .chain(&self.conditions)
                .all(|m| mods.contains(m))
            && self.operand_count.is_none_or(|n| n == operands)
    }

    /// Checks a module's target (if known) and version (if known) against the requirement.
    pub fn check(&self, target: Option<Arch>, version: Option<Version>) -> Result<(), Unmet> {
        let mut need = self.ptx;
        let mut on = None;
        if let Some(t) = target {
            if !self.targets.is_empty() {
                // The admitting alternative that needs the oldest version.
                let alt = self
                    .targets
                    .iter()
                    .filter(|a| a.admits(t))
                    .min_by_key(|a| a.ptx.unwrap_or((0, 0)))
                    .ok_or(Unmet::Target)?;
                if let Some(v) = alt.ptx {
                    if need.is_none_or(|n| v > n) {
                        need = Some(v);
                        on = Some(t);
                    }
                }
            }
        }
        match (need, version) {
            (Some(need), Some(v)) if v < need => Err(Unmet::Version { need, on }),
            _ => Ok(()),
        }
    }

    /// The TARGET column in words: "sm_86 or higher", "sm_90a or sm_100f (…)".
    pub fn targets_text(&self) -> String {
        let alts: Vec<String> = self.targets.iter().map(TargetAlt::to_string).collect();
        match alts.split_last() {
            None => "any target".to_string(),
            Some((last, [])) => last.clone(),
            Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
        }
    }
}

/// The table, indexed by opcode and special register.
pub struct Requirements {
    pub all: Vec<Requirement>,
    by_opcode: HashMap<Opcode, Vec<usize>>,
    by_sreg: HashMap<&'static str, Vec<usize>>,
}

impl Requirements {
    /// The requirements that apply to an instruction (those on its opcode and modifiers).
    pub fn for_instruction<'s, 'm>(
        &'s self,
        opcode: Opcode,
        mods: &'m [Mod],
        operands: usize,
    ) -> impl Iterator<Item = &'s Requirement> + 'm
    where
        's: 'm,
    {
        self.by_opcode
            .get(&opcode)
            .into_iter()
            .flatten()
            .map(|&k| &self.all[k])
            .filter(move |r| r.applies(opcode, mods, operands))
    }

    /// The requirements on special register `name` (without its `.x` component).
    pub fn for_special_register<'s>(
        &'s self,
        name: &str,
    ) -> impl Iterator<Item = &'s Requirement> + 's {
        self.by_sreg
            .get(name)
            .into_iter()
            .flatten()
            .map(|&k| &self.all[k])
    }

    /// Whether any requirement names special registers (a quick test before walking operands).
    pub fn has_special_registers(&self) -> bool {
        !self.by_sreg.is_empty()
    }
}

const TABLE: &str = include_str!("requirements.txt");

/// The requirements table (parsed on first use; the table is part of the binary, so a
/// malformed line is a build defect that every test run reports).
pub fn requirements() -> &'static Requirements {
    static REQ: OnceLock<Requirements> = OnceLock::new();
    REQ.get_or_init(|| parse(TABLE).unwrap_or_else(|e| panic!("src/isa/requirements.txt: {e}")))
}

fn parse_version(s: &str) -> Option<Version> {
    let (a, b) = s.split_once('.')?;
    Some((a.parse().ok()?, b.parse().ok()?))
}

fn parse_alt(s: &str) -> Result<TargetAlt, String> {
    let (name, ptx) = match s.split_once('@') {
        Some((n, v)) => (
            n,
            Some(parse_version(v).ok_or_else(|| format!("bad version `{v}`"))?),
        ),
        None => (s, None),
    };
    let arch = Arch::parse(name).ok_or_else(|| format!("bad target `{name}`"))?;
    if arch.min_version().is_none() {
        return Err(format!("unknown target `{name}`"));
    }
    let rule = match arch.suffix {
        Suffix::None => TargetRule::AtLeast,
        Suffix::Arch => TargetRule::Exactly,
        Suffix::Family => TargetRule::InFamily,
    };
    Ok(TargetAlt { arch, rule, ptx })
}

/// Parses the table text.
pub fn parse(text: &'static str) -> Result<Requirements, String> {
    let mut all = Vec::new();
    for (n, raw) in text.lines().enumerate() {
        let line = n + 1;
        let l = raw.trim();
        if l.is_empty() || l.starts_with('#') {
            continue;
        }
        let err = |m: String| format!("line {line}: {m}");
        // The example is the last column and may itself contain `|` (`%r1|%p1`).
        let cols: Vec<&'static str> = raw.splitn(4, '|').map(str::trim).collect();
        let [pattern, target, ptx, example] = cols[..] else {
            return Err(err("expected `PATTERN | TARGET | PTX | EXAMPLE`".into()));
        };
        let mut words = pattern.split_whitespace();
        let head = words.next().ok_or_else(|| err("empty pattern".into()))?;
        let subject = if head.starts_with('%') {
            Subject::SpecialRegister(head)
        } else {
            Subject::Opcode(
                lookup_opcode(head).ok_or_else(|| err(format!("unknown opcode `{head}`")))?,
            )
        };
        let mut named = SmallVec::new();
        let mut conditions = SmallVec::new();
        let mut operand_count = None;
        for w in words {
            if let Some(n) = w.strip_prefix("ops=") {
                operand_count = Some(n.parse().map_err(|_| err(format!("bad `{w}`")))?);
                continue;
            }
            let (spelling, is_condition) =
                match w.strip_prefix('(').and_then(|w| w.strip_suffix(')')) {
                    Some(inner) => (inner, true),
                    None => (w, false),
                };
            let m = lookup_mod(spelling)
                .ok_or_else(|| err(format!("unknown modifier `{spelling}`")))?;
            if is_condition {
                conditions.push(m);
            } else {
                named.push(m);
            }
        }
        if matches!(subject, Subject::SpecialRegister(_))
            && (!named.is_empty() || !conditions.is_empty() || operand_count.is_some())
        {
            return Err(err(
                "a special-register requirement takes no conditions".into()
            ));
        }
        let targets = if target == "-" {
            Vec::new()
        } else {
            target
                .split(',')
                .map(|a| parse_alt(a.trim()).map_err(err))
                .collect::<Result<_, _>>()?
        };
        let ptx = if ptx == "-" {
            None
        } else {
            Some(parse_version(ptx).ok_or_else(|| err(format!("bad version `{ptx}`")))?)
        };
        if targets.is_empty() && ptx.is_none() {
            return Err(err("a requirement needs a target or a version".into()));
        }
        if example.is_empty() {
            return Err(err("missing example".into()));
        }
        all.push(Requirement {
            subject,
            named,
            conditions,
            operand_count,
            targets,
            ptx,
            example,
            line,
        });
    }
    let mut by_opcode: HashMap<Opcode, Vec<usize>> = HashMap::default();
    let mut by_sreg: HashMap<&'static str, Vec<usize>> = HashMap::default();
    for (k, r) in all.iter().enumerate() {
        match r.subject {
            Subject::Opcode(o) => by_opcode.entry(o).or_default().push(k),
            Subject::SpecialRegister(s) => by_sreg.entry(s).or_default().push(k),
        }
    }
    Ok(Requirements {
        all,
        by_opcode,
        by_sreg,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn arch(s: &str) -> Arch {
        Arch::parse(s).unwrap()
    }

    #[test]
    fn table_parses() {
        assert!(requirements().all.len() > 200);
    }

    #[test]
    fn targets_compare_as_families() {
        let at_least = parse_alt("sm_90").unwrap();
        assert!(at_least.admits(arch("sm_90a")));
        assert!(at_least.admits(arch("sm_100f")));
        assert!(!at_least.admits(arch("sm_89")));
        let exactly = parse_alt("sm_90a").unwrap();
        assert!(exactly.admits(arch("sm_90a")));
        assert!(!exactly.admits(arch("sm_90")));
        assert!(!exactly.admits(arch("sm_100a")));
        let family = parse_alt("sm_100f").unwrap();
        assert!(family.admits(arch("sm_100f")));
        assert!(family.admits(arch("sm_103a")));
        assert!(!family.admits(arch("sm_100")));
        assert!(!family.admits(arch("sm_110f")));
        assert_eq!(arch("compute_90a"), arch("sm_90a"));
        assert_eq!(Arch::parse("sm_8x"), None);
    }
}
