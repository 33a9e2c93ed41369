//! Thread intervals of probe branches: when a region's first branch is taken by
//! `%tid.x CMP bound` (or `(%tid.x >> k) CMP c`, or `%ctaid.x * %ntid.x + %tid.x CMP bound`,
//! the global index of a one-dimensional grid, or `%tid.x + U` with `U` equal in every thread,
//! such as `(%ctaid.x << 8) + %tid.x`), the threads that take it form one
//! interval of `%tid.x`, which the CTA function computes from the bound instead of evaluating
//! the branch for every thread (a probe pass). Bounds are constants, scalar kernel parameters
//! or registers equal in every thread.
//!
//! Only registers with a single, unguarded definition are followed, so a register's value is
//! the one its definition gives wherever it is read.

use std::collections::HashMap;

use crate::syntax::ast::{Component, Expr, Function, Guard, Instruction, Operand};

/// The threads (by `%tid.x`) that take a probe branch: `lo <= x < hi`, or the complement when
/// `negated`. With `param` the finite bound(s) also get the value of that kernel parameter
/// (sign-extended when `signed`), with `base` they lose `%ctaid.x * %ntid.x`; the CTA function
/// adds those at run time (and probes after all when the global index could wrap).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TidRange {
    pub lo: i64,
    pub hi: i64,
    pub negated: bool,
    pub param: Option<u32>,
    pub signed: bool,
    pub base: bool,
    /// The finite bound(s) also get the value of a uniform register (`range`'s second
    /// result), which the CTA function reads from the first thread (probe mode 4).
    pub reg: bool,
    /// The compared index is `%tid.x + U` with `U` equal in every thread: the CTA function
    /// reads the compared register (`range`'s second result) from the first thread as for
    /// `reg`, and the finite bound(s) lose its value less that thread's `%tid.x`; it probes
    /// after all where the index could wrap. Never together with `reg`.
    pub plus: bool,
}

/// A bound no thread index reaches.
pub const BIG: i64 = 1 << 40;

/// What a register holds, as far as intervals go.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Val<'a> {
    Const(i64),
    /// A scalar kernel parameter (index).
    Param(u32),
    /// `(%tid.x >> shift)`, plus `%ctaid.x * %ntid.x` when `base` (then `shift` is 0).
    Tid {
        shift: u32,
        base: bool,
    },
    CtaidX,
    NtidX,
    /// `%tid.x & mask` with `mask + 1` a power of two (also `%tid.x % (mask + 1)`).
    Lane(u32),
    /// `%ctaid.x * %ntid.x`
    Base,
    /// A register equal in every thread (the uniformity analysis's word).
    Uniform(&'a str),
    /// `%tid.x + U`, `U` equal in every thread (`Facts::tid_plus`).
    TidPlus,
}

/// The single-definition registers of a kernel, by name.
pub struct Facts<'x, 'a> {
    defs: HashMap<&'a str, &'x Instruction<'a>>,
    /// The node of each of `defs`.
    at: HashMap<&'a str, usize>,
    params: HashMap<&'a str, u32>,
    /// The kernel's instructions in flat order and each one's successors: a register written
    /// more than once (NVCC reuses `%r30 = %tid.x` as a loop's counter further down) is
    /// followed through the one definition reaching its use (`stride::reaching`).
    flow: Vec<(&'x Instruction<'a>, usize)>,
    succ: Vec<Vec<usize>>,
    /// Registers some instruction writes with others (vectors, `%p|%q`): not followed.
    wide: std::collections::HashSet<&'a str>,
}

/// Collects the registers defined exactly once, unguarded, by the instructions of a kernel
/// (`ins`, in flat order, with their successors `succ`).
pub fn facts<'x, 'a>(
    f: &'x Function<'a>,
    ins: &[&'x Instruction<'a>],
    succ: Vec<Vec<usize>>,
) -> Facts<'x, 'a> {
    let mut count: HashMap<&'a str, u32> = HashMap::new();
    let mut defs = HashMap::new();
    let mut at = HashMap::new();
    let mut wide = std::collections::HashSet::new();
    for (k, &i) in ins.iter().enumerate() {
        let Some(Operand::Name {
            name, comp: None, ..
        }) = i.operands.first()
        else {
            // Anything else first (vectors, pairs) may write several names: none is followed.
            let mut names = Vec::new();
            if let Some(o) = i.operands.first() {
                collect_names(o, &mut names);
            }
            for n in names {
                *count.entry(n).or_default() += 2;
                wide.insert(n);
            }
            continue;
        };
        *count.entry(name).or_default() += 1;
        if i.guard.is_none() {
            defs.insert(*name, i);
            at.insert(*name, k);
        }
    }
    defs.retain(|n, _| count.get(n) == Some(&1));
    at.retain(|n, _| defs.contains_key(n));
    let params = f
        .params
        .iter()
        .enumerate()
        .map(|(k, p)| (p.name, k as u32))
        .collect();
    // A `call` may write registers through its result list, which `reaching` does not see:
    // no flow then.
    let (flow, succ) = if ins.iter().any(|i| i.opcode.spelling() == "call") {
        (Vec::new(), Vec::new())
    } else {
        (ins.iter().map(|&i| (i, 0)).collect(), succ)
    };
    Facts {
        defs,
        at,
        params,
        flow,
        succ,
        wide,
    }
}

fn collect_names<'a>(o: &Operand<'a>, out: &mut Vec<&'a str>) {
    match o {
        Operand::Name { name, .. } => out.push(name),
        Operand::Vec(v, _) => v.iter().for_each(|x| collect_names(x, out)),
        Operand::Pair(a, b, _) => {
            collect_names(a, out);
            collect_names(b, out);
        }
        _ => {}
    }
}

impl<'x, 'a> Facts<'x, 'a> {
    /// The value of operand `o` as read by flat node `at` (`None`: anywhere, registers
    /// defined once only).
    fn value(&self, o: &Operand<'a>, depth: u32, at: Option<usize>) -> Option<Val<'a>> {
        match o {
            Operand::Imm(e) if !matches!(e, Expr::F32(..) | Expr::F64(..)) => {
                crate::syntax::consteval::eval(e).map(|c| Val::Const(c.bits as i64))
            }
            Operand::Name {
                name, comp: None, ..
            } => self.reg(name, depth, at),
            _ => None,
        }
    }

    /// The one definition of `name` reaching node `at`, when it is unguarded and writes
    /// `name` alone, and its node.
    fn reaching_def(&self, name: &str, at: usize) -> Option<(&'x Instruction<'a>, usize)> {
        if at >= self.flow.len() || self.wide.contains(name) {
            return None;
        }
        let k = match super::stride::reaching(&self.flow, &self.succ, name, at)?[..] {
            [k] if k < self.flow.len() => k,
            _ => return None,
        };
        let i = self.flow[k].0;
        let single = matches!(
            i.operands.first(),
            Some(Operand::Name { name: n, comp: None, .. }) if *n == name
        );
        (i.guard.is_none() && single).then_some((i, k))
    }

    fn reg(&self, name: &str, depth: u32, at: Option<usize>) -> Option<Val<'a>> {
        if depth > 8 {
            return None;
        }
        // Defined once: that definition. Else the one unguarded definition reaching node
        // `at`. Its operands are read where it runs.
        let (i, at) = match self.defs.get(name) {
            Some(i) => (*i, self.at.get(name).copied()),
            None => {
                let (i, k) = self.reaching_def(name, at?)?;
                (i, Some(k))
            }
        };
        let op = i.opcode.spelling();
        let mods: Vec<&str> = i.mods.iter().map(|m| m.spelling()).collect();
        let int32 = mods.iter().any(|m| matches!(*m, ".u32" | ".s32" | ".b32"));
        let arg = |k: usize| self.value(i.operands.get(k)?, depth + 1, at);
        match (op, i.operands.len()) {
            ("mov", 2) => match &i.operands[1] {
                Operand::Name {
                    name: "%tid",
                    comp: Some(Component::X),
                    ..
                } => Some(Val::Tid {
                    shift: 0,
                    base: false,
                }),
                Operand::Name {
                    name: "%ctaid",
                    comp: Some(Component::X),
                    ..
                } => Some(Val::CtaidX),
                Operand::Name {
                    name: "%ntid",
                    comp: Some(Component::X),
                    ..
                } => Some(Val::NtidX),
                Operand::Imm(_) if int32 || mods.iter().any(|m| m.ends_with("64")) => arg(1),
                _ => None,
            },
            ("ld", 2) if mods.contains(&".param") && int32 => match &i.operands[1] {
                Operand::Addr(a) if a.offset == 0 => a
                    .base
                    .and_then(|b| self.params.get(b))
                    .map(|&k| Val::Param(k)),
                _ => None,
            },
            ("shr", 3) if mods.iter().any(|m| matches!(*m, ".u32" | ".b32")) => {
                match (arg(1)?, arg(2)?) {
                    (
                        Val::Tid {
                            shift: 0,
                            base: false,
                        },
                        Val::Const(k),
                    ) if (0..31).contains(&k) => Some(Val::Tid {
                        shift: k as u32,
                        base: false,
                    }),
                    _ => None,
                }
            }
            ("and", 3) if mods.iter().any(|m| matches!(*m, ".b32" | ".u32")) => {
                match (arg(1)?, arg(2)?) {
                    (
                        Val::Tid {
                            shift: 0,
                            base: false,
                        },
                        Val::Const(m),
                    )
                    | (
                        Val::Const(m),
                        Val::Tid {
                            shift: 0,
                            base: false,
                        },
                    ) if (0..1 << 30).contains(&m) && (m + 1).count_ones() == 1 => {
                        Some(Val::Lane(m as u32))
                    }
                    _ => None,
                }
            }
            ("rem", 3) if mods.contains(&".u32") => match (arg(1)?, arg(2)?) {
                (
                    Val::Tid {
                        shift: 0,
                        base: false,
                    },
                    Val::Const(d),
                ) if (1..=1 << 30).contains(&d) && d.count_ones() == 1 => {
                    Some(Val::Lane(d as u32 - 1))
                }
                _ => None,
            },
            ("mul", 3) if mods.contains(&".lo") && int32 => match (arg(1)?, arg(2)?) {
                (Val::CtaidX, Val::NtidX) | (Val::NtidX, Val::CtaidX) => Some(Val::Base),
                _ => None,
            },
            ("mad", 4) if mods.contains(&".lo") && int32 => match (arg(1)?, arg(2)?, arg(3)?) {
                (
                    Val::CtaidX,
                    Val::NtidX,
                    Val::Tid {
                        shift: 0,
                        base: false,
                    },
                )
                | (
                    Val::NtidX,
                    Val::CtaidX,
                    Val::Tid {
                        shift: 0,
                        base: false,
                    },
                ) => Some(Val::Tid {
                    shift: 0,
                    base: true,
                }),
                _ => None,
            },
            ("add", 3) if int32 => match (arg(1)?, arg(2)?) {
                (
                    Val::Base,
                    Val::Tid {
                        shift: 0,
                        base: false,
                    },
                )
                | (
                    Val::Tid {
                        shift: 0,
                        base: false,
                    },
                    Val::Base,
                ) => Some(Val::Tid {
                    shift: 0,
                    base: true,
                }),
                _ => None,
            },
            _ => None,
        }
    }

    /// Whether operand `o` is equal in every thread: a constant, a parameter, `%ctaid.x`,
    /// `%ntid.x` or products of them as `value` follows them, or a register `uniform` says so.
    fn uniform_op(&self, o: &Operand<'a>, uniform: &dyn Fn(&str) -> bool) -> bool {
        match self.value(o, 1, None) {
            Some(Val::Const(_) | Val::Param(_) | Val::CtaidX | Val::NtidX | Val::Base) => true,
            Some(_) => false,
            None => {
                matches!(o, Operand::Name { name, comp: None, negated: false, .. } if uniform(name))
            }
        }
    }

    /// `name` as `%tid.x + U` with `U` equal in every thread: `add.{u32,s32,b32}` of `%tid.x`
    /// and such a value (either order), or `mad.lo.{u32,s32}` of two such values and `%tid.x`
    /// (`(%ctaid.x << 8) + %tid.x`, `%ctaid.x * 256 + %tid.x`). The CTA function reads the
    /// register itself from the first thread: `U` is its value less that thread's `%tid.x`.
    fn tid_plus(&self, name: &str, uniform: &dyn Fn(&str) -> bool) -> Option<Val<'a>> {
        let i = self.defs.get(name)?;
        let mods: Vec<&str> = i.mods.iter().map(|m| m.spelling()).collect();
        let int32 = mods.iter().any(|m| matches!(*m, ".u32" | ".s32" | ".b32"));
        let tid = |o: &Operand<'a>| {
            self.value(o, 1, None)
                == Some(Val::Tid {
                    shift: 0,
                    base: false,
                })
        };
        let ops = &i.operands;
        let plus = match (i.opcode.spelling(), ops.len()) {
            ("add", 3) if int32 => {
                (tid(&ops[1]) && self.uniform_op(&ops[2], uniform))
                    || (tid(&ops[2]) && self.uniform_op(&ops[1], uniform))
            }
            ("mad", 4) if int32 && mods.contains(&".lo") => {
                tid(&ops[3])
                    && self.uniform_op(&ops[1], uniform)
                    && self.uniform_op(&ops[2], uniform)
            }
            _ => false,
        };
        plus.then_some(Val::TidPlus)
    }
}

/// The probe branch that ends `region`: its guard, the code before it, and the last
/// instruction there writing the guard (at that index) when it is an unguarded
/// `setp CMP.TYPE %p, a, b` with one destination.
fn guard_setp<'x, 'a>(
    region: &'x [&'x Instruction<'a>],
) -> Option<(
    Guard<'a>,
    &'x [&'x Instruction<'a>],
    &'x Instruction<'a>,
    usize,
)> {
    let (bra, body) = region.split_last()?;
    let g = bra.guard?;
    let at = body.iter().rposition(|i| {
        matches!(i.operands.first(), Some(Operand::Name { name, .. }) if *name == g.pred)
            || matches!(i.operands.first(), Some(Operand::Pair(..)))
    })?;
    let i = body[at];
    let single = matches!(i.operands.first(), Some(Operand::Name { comp: None, .. }));
    (i.opcode.spelling() == "setp" && i.guard.is_none() && i.operands.len() == 3 && single)
        .then_some((g, body, i, at))
}

/// The threads of a probe branch on `(%tid.x & (modulus - 1)) == residue` (or `!=`, or
/// `%tid.x % modulus`): every `modulus`-th thread from `residue` takes it when `taken`, or
/// every other thread does. `if (lane == 0) smem[warp] = v;` runs over one thread per warp.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TidLanes {
    pub modulus: u32,
    pub residue: u32,
    pub taken: bool,
}

/// The `TidLanes` of the probe branch that ends `region`, as `range` finds intervals.
pub fn lanes<'a>(
    facts: &Facts<'_, 'a>,
    region: &[&Instruction<'a>],
    start: usize,
) -> Option<TidLanes> {
    // The `setp` may come before the region (the predicate kept across stops) when it is the
    // predicate's only definition: a function of `%tid.x` alone, it still holds at the branch.
    let (g, i, at) = match guard_setp(region) {
        Some((g, _, i, at)) => (g, i, Some(start + at)),
        None => {
            let (bra, body) = region.split_last()?;
            let g = bra.guard?;
            let writes = |i: &&Instruction| {
                let mut names = Vec::new();
                if let Some(o) = i.operands.first() {
                    collect_names(o, &mut names);
                }
                names.contains(&g.pred)
            };
            if body.iter().any(writes) {
                return None;
            }
            let i = *facts.defs.get(g.pred)?;
            let single = matches!(i.operands.first(), Some(Operand::Name { comp: None, .. }));
            (i.opcode.spelling() == "setp" && i.operands.len() == 3 && single).then_some(())?;
            (g, i, None)
        }
    };
    let mods: Vec<&str> = i.mods.iter().map(|m| m.spelling()).collect();
    let eq = match mods.as_slice() {
        [".eq", ".u32" | ".s32" | ".b32"] => true,
        [".ne", ".u32" | ".s32" | ".b32"] => false,
        _ => return None,
    };
    let (x, y) = (
        facts.value(&i.operands[1], 0, at)?,
        facts.value(&i.operands[2], 0, at)?,
    );
    let (mask, c) = match (x, y) {
        (Val::Lane(m), Val::Const(c)) | (Val::Const(c), Val::Lane(m)) => (m, c as u32),
        _ => return None,
    };
    // A residue the mask cannot produce: no thread or every thread; leave it to probing.
    if c > mask {
        return None;
    }
    Some(TidLanes {
        modulus: mask + 1,
        residue: c,
        taken: eq != g.negated,
    })
}

/// The interval of the probe branch that ends `region` (its last instruction, a guarded
/// `bra`), when the guard is set in the region by `setp.{lt,le,gt,ge}.{u32,s32} %p, R, C` (or
/// `C, R`, or `eq`/`ne` with `C = 0`) with `R` a thread index (see the module) and `C` a
/// constant, a parameter or a register `uniform` says is equal in every thread (returned; not
/// written between the `setp` and the branch), and nothing else in the region writes `%p`.
/// `region` is the kernel's flat nodes from `start` on.
pub fn range<'a>(
    facts: &Facts<'_, 'a>,
    region: &[&Instruction<'a>],
    start: usize,
    uniform: &dyn Fn(&str) -> bool,
) -> Option<(TidRange, Option<&'a str>)> {
    // The `setp` in the region, or before it (a predicate kept across the stop the region
    // starts at): the one definition reaching the branch, its operands read where it runs.
    let (g, body, i, at, node) = match guard_setp(region) {
        Some((g, body, i, at)) => (g, body, i, at, start + at),
        None => {
            let (bra, body) = region.split_last()?;
            let g = bra.guard?;
            let (i, k) = facts.reaching_def(g.pred, start + body.len())?;
            let plain = i.opcode.spelling() == "setp" && i.operands.len() == 3;
            (plain && k < start).then_some((g, &[][..], i, usize::MAX, k))?
        }
    };
    let node = Some(node);
    let mods: Vec<&str> = i.mods.iter().map(|m| m.spelling()).collect();
    let signed = match mods.as_slice() {
        [_, ".u32"] => false,
        [_, ".s32"] => true,
        _ => return None,
    };
    let value = |o: &Operand<'a>| {
        facts.value(o, 0, node).or_else(|| match o {
            Operand::Name {
                name, comp: None, ..
            } => facts
                .tid_plus(name, uniform)
                .or_else(|| uniform(name).then_some(Val::Uniform(name))),
            _ => None,
        })
    };
    let (x, y) = (value(&i.operands[1])?, value(&i.operands[2])?);
    let bound = |v: Val| match v {
        Val::Const(c) => Some((c, None)),
        Val::Param(k) => Some((0, Some(k))),
        Val::Uniform(_) => Some((0, None)),
        _ => None,
    };
    // The uniform register (a bound, or added to the thread index), which must still hold
    // its value at the branch; there is one place to read it.
    let regs: Vec<(&'a str, bool)> = [x, y]
        .iter()
        .zip(&i.operands[1..])
        .filter_map(|(v, o)| match (v, o) {
            (Val::Uniform(n), _) => Some((*n, false)),
            (Val::TidPlus, Operand::Name { name, .. }) => Some((*name, true)),
            _ => None,
        })
        .collect();
    if regs.len() > 1 {
        return None;
    }
    let plus = regs.first().is_some_and(|r| r.1);
    let reg = regs.first().map(|r| r.0);
    // A register read before the region may hold another value at the branch.
    if reg.is_some() && at == usize::MAX {
        return None;
    }
    if let Some(r) = reg {
        let written = body[at + 1..].iter().any(|w| {
            let mut names = Vec::new();
            if let Some(o) = w.operands.first() {
                collect_names(o, &mut names);
            }
            names.contains(&r) || w.opcode.spelling() == "call"
        });
        if written {
            return None;
        }
    }
    let tid = |v: Val| match v {
        Val::Tid { shift, base } => Some((shift, base)),
        Val::TidPlus => Some((0, false)),
        _ => None,
    };
    // Normalize to `(tid >> shift) CMP bound`.
    let (cmp, (c, param), (shift, base)) = match (tid(x), tid(y)) {
        (Some(t), None) => (mods[0], bound(y)?, t),
        (None, Some(t)) => (
            match mods[0] {
                ".lt" => ".gt",
                ".le" => ".ge",
                ".gt" => ".lt",
                ".ge" => ".le",
                m @ (".eq" | ".ne") => m,
                _ => return None,
            },
            bound(x)?,
            t,
        ),
        _ => return None,
    };
    // The constant as the comparison sees it (a thread index is below 2^31 either way).
    let c = if signed {
        c as u32 as i32 as i64
    } else {
        c as u32 as i64
    };
    let dynamic = param.is_some() || base || reg.is_some();
    if dynamic && shift != 0 {
        return None;
    }
    // `(tid >> k) < c` is `tid < c * 2^k`, and so on; `== 0` / `!= 0` are a prefix and a
    // suffix too (other equalities are neither, and keep the probe pass).
    let at = |v: i64| v * (1i64 << shift);
    let (lo, hi) = match cmp {
        ".lt" => (-BIG, at(c)),
        ".le" => (-BIG, at(c + 1)),
        ".gt" => (at(c + 1), BIG),
        ".ge" => (at(c), BIG),
        ".eq" if c == 0 && !dynamic => (-BIG, at(1)),
        ".ne" if c == 0 && !dynamic => (at(1), BIG),
        _ => return None,
    };
    Some((
        TidRange {
            lo,
            hi,
            negated: g.negated,
            param,
            signed,
            base,
            reg: reg.is_some() && !plus,
            plus,
        },
        reg,
    ))
}
