//! Grid- and block-stride loops get a *yield* (a stop of its own, `StopKind::Yield`) at their
//! header, so that `K.fis` can run their iterations as rounds over the CTA's threads instead of
//! each thread running its whole loop before the next one starts. In a kernel without stops
//! the yield makes it take rounds instead of its batched CTA loop, so there only loops known
//! to run interchanged get one (`StrideLoop::linear`; `fission/mod.rs` also leaves out CTAs
//! known to be two- or three-dimensional): histogram_global (one privatized global addition
//! per byte, 16 iterations a thread) x0.45, and x0.87 with one iteration a thread.
//!
//! In `for (i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)`
//! thread `t` touches `i0 + t`, `i0 + t + stride`, …: one thread after another, each access a
//! stride away from the previous one (with a power-of-two stride, every one of them in the
//! same cache set), while one iteration of every thread is one contiguous run. Running
//! iteration `k` of every thread before iteration `k + 1` of any is a schedule a GPU may run
//! too (threads interleave freely between barriers), so nothing else changes.
//!
//! `K.fis` runs the interchanged loop when, at run time, every thread of the round is at the
//! yield and the thread's induction values are `i0 + (t - xlo)` with the same step and bound
//! (`cta/interchange.rs`); the thread interval of iteration `k` then follows from `i0`, the step and the
//! bound, and no per-thread bookkeeping is needed. Otherwise each thread runs its loop to the
//! end as without the yield (probe mode 6 passes yields by; out-of-line rounds always pass
//! them, and the driver sends threads left at a yield while others are elsewhere past it in a
//! masked round, so a loop only some threads enter costs one more round).
//!
//! A loop qualifies when it is a range of the kernel's top-level instructions entered only at
//! its header and closed by `add i, i, s; setp.{lt,le}.{s32,u32} p, i, n; @p bra head` (other
//! increments between the `add` and the `setp` are moved before it first: `sink_latch_adds`), with a
//! body before that whose branches go forward and stay inside it (no `break`, no inner loop,
//! no branch into the latch; no call, stop, return or carry flag), `i` defined
//! only there and differing between threads, `s` and `n` not written in the loop, some memory
//! access other than `.param`/`.local`, and when every thread leaving it reaches the same
//! first stop (or every one finishes): that stop is the round's outcome. Other values carried
//! from one iteration to the next (a per-thread sum) stay in the thread's saved registers.

use std::collections::{HashMap, HashSet};

use smallvec::SmallVec;

use super::uniform;
use crate::isa::{lookup_mod, lookup_opcode};
use crate::syntax::ast::{Block, Expr, Function, Instruction, NodeId, Operand, PostOps, Statement};

/// An interchangeable stride loop, by its yield.
#[derive(Clone, Debug)]
pub struct StrideLoop<'a> {
    /// The induction register, the step and the bound of `add iv, iv, step;
    /// setp.{lt,le} p, iv, bound`.
    pub iv: &'a str,
    pub step: Operand<'a>,
    pub bound: Operand<'a>,
    /// `le` rather than `lt`.
    pub le: bool,
    /// `.s32` rather than `.u32` comparison.
    pub signed: bool,
    /// The first stop every thread leaving the loop reaches (an instruction of the new
    /// kernel), or `None` when every one finishes.
    pub exit: Option<NodeId>,
    /// The latch's `@p bra head` (an instruction of the new kernel).
    pub latch: NodeId,
    /// The registers the loop writes other than `iv` (interchanged iterations save those
    /// live at the yield; the others keep the values saved when the threads reached it).
    pub writes: Vec<&'a str>,
    /// Known at compile time: `iv` is `%tid.x + U` when the threads reach the loop (its one
    /// definition outside the loop: `mov` of `%tid.x`, `add` of `%tid.x` and a uniform value,
    /// `mad.lo` of two uniform values and `%tid.x`) and the step and bound are uniform, so
    /// at the yield of an `ALL` round (every thread there after as many iterations) the
    /// values are consecutive in thread order with one step and bound: `K.fis` reads them
    /// off the first thread instead of capturing and checking every thread's.
    pub linear: bool,
}

/// Flat top-level instructions: (instruction, its top-level statement index), the labels'
/// node indices, and the top-level register declarations; `None` for shapes not followed
/// (branches inside nested blocks). Node `k` is the body's instruction `NodeId(k)` (nested
/// blocks hold only instructions and declarations here).
type Flat<'x, 'a> = (
    Vec<(&'x Instruction<'a>, usize)>,
    HashMap<&'a str, usize>,
    super::analysis::Regs<'a>,
);

fn flatten<'x, 'a>(body: &'x Block<'a>) -> Option<Flat<'x, 'a>> {
    let mut nodes = Vec::new();
    let mut labels = HashMap::new();
    let mut regs = super::analysis::Regs::default();
    for (s, st) in body.stmts.iter().enumerate() {
        match st {
            Statement::Label(name, _) => {
                labels.insert(*name, nodes.len());
            }
            Statement::Instr(i) => nodes.push((i, s)),
            Statement::Var(v) if v.space.spelling() == ".reg" => regs.add(v),
            Statement::Block(b) => {
                // Straight-line scopes only (nvcc's `{ .reg … }` around calls and asm).
                for x in &b.stmts {
                    match x {
                        Statement::Instr(i) if !is_branch(i) => nodes.push((i, s)),
                        Statement::Instr(_) | Statement::Label(..) | Statement::Block(_) => {
                            return None
                        }
                        _ => {}
                    }
                }
            }
            _ => {}
        }
    }
    Some((nodes, labels, regs))
}

/// The kernel `f` with a yield at the header of each interchangeable stride loop, and the
/// loops by yield (the inserted instructions in the new kernel's body); `None` when it has
/// none.
///
/// `ntid_x`: the CTA's `%ntid.x` when the kernel is compiled for its block (`run --block`, a
/// `.reqntid`): a loop `for (i = threadIdx.x; i < C; i += blockDim.x)` with `C` at most that
/// runs at most one iteration a thread (`one_trip`): it gets no yield, and loses its back
/// edge (the latch's branch), which no thread takes, so that its body is straight code of
/// the thread loop. Why: histogram (CTAs of 256) compile CPU x0.72 with the closing loop
/// (its flush of 256 bins to global memory; 159 -> 115 ms), x0.83 more with the loop
/// clearing the bins before the first barrier (117 -> 99 ms). The clearing loop's region
/// had run x1.07 slower without its yield: the thread loop saved `%tid.x` to the threads'
/// frames through a scatter (the frame index `zext` of the thread against the shared
/// address's `sext`: see `t_i64` in `fission/mod.rs`); with that fixed, x1.02 (5 pairs).
pub fn insert_yields<'a>(
    f: &'a Function<'a>,
    scratch: &'a super::Scratch<'a>,
    ntid_x: Option<u32>,
) -> Option<(&'a Function<'a>, HashMap<NodeId, StrideLoop<'a>>)> {
    let f = sink_latch_adds(f, scratch);
    let body = f.body.as_ref()?;
    let (nodes, labels, regs) = flatten(body)?;
    let nn = nodes.len();
    let target = |i: &Instruction<'a>| -> Option<usize> {
        match i.operands.first() {
            Some(Operand::Name { name, .. }) => labels.get(name).copied(),
            _ => None,
        }
    };
    let mut succ: Vec<Vec<usize>> = Vec::with_capacity(nn);
    for (k, (i, _)) in nodes.iter().enumerate() {
        let guarded = i.guard.is_some();
        let mut s = Vec::new();
        match i.opcode.spelling() {
            "bra" => {
                s.push(target(i)?);
                if guarded {
                    s.push(k + 1);
                }
            }
            "brx" => return None,
            "ret" | "exit" | "trap" => {
                if guarded {
                    s.push(k + 1);
                }
            }
            _ => s.push(k + 1),
        }
        s.retain(|&x| x < nn);
        succ.push(s);
    }
    let stop = |k: usize| super::analysis::is_stop(nodes[k].0.opcode.spelling());
    let stops = (0..nn).any(stop);
    let unodes: Vec<uniform::UNode> = nodes
        .iter()
        .zip(&succ)
        .map(|((i, _), s)| uniform::UNode { ins: i, succ: s })
        .collect();
    let params: HashSet<&str> = f.params.iter().map(|p| p.name).collect();
    let divergent = uniform::divergent(&unodes, &|n| regs.contains(n), &|n| params.contains(n));

    let mut loops: Vec<(usize, usize, StrideLoop<'a>)> = Vec::new();
    // The latches of loops of one iteration a thread (`one_trip`).
    let mut once: Vec<usize> = Vec::new();
    for (p, (i, _)) in nodes.iter().enumerate() {
        if i.opcode.spelling() != "bra" {
            continue;
        }
        let Some(q) = target(i) else { continue };
        if q >= p {
            continue;
        }
        if let Some(mut l) = stride_loop(&nodes, &succ, q, p, &divergent) {
            if ntid_x.is_some_and(|x| one_trip(&nodes, &succ, q, p, &l, x)) {
                once.push(p);
                continue;
            }
            l.linear = linear_start(&nodes, &succ, q, p, &l, &divergent);
            // Without stops a yield costs the kernel its batched CTA loop (`cta.rs`): only
            // loops known to run interchanged pay for that, not ones (a CSR row loop) whose
            // run-time check would send every thread through the extra round for nothing.
            if stops || l.linear {
                loops.push((q, p, l));
            }
        }
    }
    if loops.is_empty() && once.is_empty() {
        return None;
    }
    // Where threads leaving each loop stop first (the other loops' headers count as stops);
    // a loop without one outcome is dropped, which may change the others'.
    let mut exits: Vec<Option<usize>>;
    loop {
        let heads: HashSet<usize> = loops.iter().map(|l| l.0).collect();
        let outcome = |p: usize| -> Option<Option<usize>> {
            let mut seen = vec![false; nn];
            let mut work = vec![p + 1];
            let (mut at, mut finishes) = (HashSet::new(), false);
            while let Some(k) = work.pop() {
                if k >= nn {
                    finishes = true; // past the last instruction: the end
                    continue;
                }
                if std::mem::replace(&mut seen[k], true) {
                    continue;
                }
                let i = nodes[k].0;
                if heads.contains(&k) || stop(k) {
                    if i.guard.is_some() && !heads.contains(&k) {
                        return None; // some threads would pass it
                    }
                    at.insert(k);
                    continue;
                }
                if matches!(i.opcode.spelling(), "ret" | "exit") {
                    finishes = true;
                }
                work.extend(succ[k].iter().copied());
            }
            match (at.len(), finishes) {
                (1, false) => at.into_iter().next().map(Some),
                (0, true) => Some(None),
                _ => None,
            }
        };
        let found: Vec<Option<Option<usize>>> = loops.iter().map(|l| outcome(l.1)).collect();
        if found.iter().all(Option::is_some) {
            exits = found.into_iter().map(Option::flatten).collect();
            break;
        }
        let mut it = found.iter();
        loops.retain(|_| it.next().unwrap().is_some());
        if loops.is_empty() && once.is_empty() {
            return None;
        }
    }
    // The new kernel: a yield before each loop's first instruction, without the latches of
    // `once` (top-level statements of one instruction; none is a header, which a yield
    // goes before).
    let like = loops.first().map_or(nodes[0].0, |l| nodes[l.0].0);
    let yield_ins = Instruction {
        guard: None,
        opcode: lookup_opcode("nanosleep")?,
        mods: [lookup_mod(".u32")?].into_iter().collect::<SmallVec<_>>(),
        operands: [Operand::Imm(Expr::Int {
            value: 0,
            unsigned: false,
            span: like.span,
        })]
        .into_iter()
        .collect(),
        post_ops: PostOps([u8::MAX; crate::syntax::ast::MAX_POST_MODS]),
        span: like.span,
        op_span: like.op_span,
        id: crate::syntax::ast::InstrId::SYNTHETIC,
    };
    let at: HashSet<usize> = loops.iter().map(|l| nodes[l.0].1).collect();
    let dropped: HashSet<usize> = once
        .iter()
        .map(|&p| nodes[p].1)
        .filter(|s| !at.contains(s))
        .collect();
    let mut stmts = Vec::with_capacity(body.stmts.len() + at.len());
    for (s, st) in body.stmts.iter().enumerate() {
        if at.contains(&s) {
            stmts.push(Statement::Instr(yield_ins.clone()));
        }
        if !dropped.contains(&s) {
            stmts.push(st.clone());
        }
    }
    let mut g = f.clone();
    g.body = Some(Block {
        stmts,
        span: body.span,
    });
    let g: &'a Function<'a> = scratch.function(g);
    // Nodes of the new kernel: the old ones in order, a yield before the statement of each
    // loop's header, the dropped latches gone (no yield-loop node is one).
    let new_of = |k: usize| {
        let s = nodes[k].1;
        let yields = at.iter().filter(|&&a| a <= s).count();
        let gone = dropped.iter().filter(|&&d| d < s).count();
        NodeId((k + yields - gone) as u32)
    };
    let before = |n: NodeId| NodeId(n.0 - 1);
    let heads: HashSet<usize> = loops.iter().map(|l| l.0).collect();
    let mut out = HashMap::new();
    for ((q, p, mut l), exit) in loops.into_iter().zip(exits.drain(..)) {
        l.latch = new_of(p);
        l.exit = exit.map(|e| {
            if heads.contains(&e) {
                before(new_of(e)) // that loop's yield
            } else {
                new_of(e)
            }
        });
        out.insert(before(new_of(q)), l);
    }
    Some((g, out))
}

/// The most instructions between a latch's `add iv` and its `setp` that `sink_latch_adds`
/// moves the `add` past.
const SINK_MAX: usize = 4;

/// `f` with each stride-loop latch `add iv, iv, s; <other adds>; setp p, iv, n; @p bra`
/// reordered to `<other adds>; add iv, iv, s; setp …; @p bra`, the form `stride_loop`
/// recognizes; `f` itself when there is none. Clang closes a grid-stride loop whose address is
/// a pointer of its own (`p += stride`) with both increments before the compare, NVCC with the
/// pointer's earlier: the same loop (histogram_global from clang ran each thread's whole loop
/// in turn, 2.7x the CPU time of NVCC's interchanged one). The moved instructions are
/// unguarded, write registers other than `iv`, `s`, `n` and `p`, and read none of them, so
/// the order does not change what any instruction computes.
fn sink_latch_adds<'a>(f: &'a Function<'a>, scratch: &'a super::Scratch<'a>) -> &'a Function<'a> {
    let Some(body) = f.body.as_ref() else {
        return f;
    };
    let st = &body.stmts;
    let instr = |k: usize| match st.get(k) {
        Some(Statement::Instr(i)) => Some(i),
        _ => None,
    };
    let mut moves: Vec<(usize, usize)> = Vec::new(); // (the add's statement, the setp's)
    for (k, s) in st.iter().enumerate() {
        let Statement::Instr(bra) = s else { continue };
        if bra.opcode.spelling() != "bra" || k < 2 {
            continue;
        }
        let Some(setp) = instr(k - 1).filter(|i| i.opcode.spelling() == "setp") else {
            continue;
        };
        let (Some(pred), Some(iv)) = (reg(setp.operands.first()), reg(setp.operands.get(1))) else {
            continue;
        };
        let mut held: Vec<&str> = vec![pred, iv];
        setp.operands
            .iter()
            .for_each(|o| super::analysis::names_in(o, &mut held));
        for a in (k.saturating_sub(2 + SINK_MAX)..k - 1).rev() {
            let Some(i) = instr(a) else { break };
            if i.guard.is_some() || is_branch(i) {
                break;
            }
            let mut names = Vec::new();
            i.operands
                .iter()
                .for_each(|o| super::analysis::names_in(o, &mut names));
            if i.opcode.spelling() == "add" && reg(i.operands.first()) == Some(iv) {
                if a + 2 < k {
                    moves.push((a, k - 1));
                }
                break;
            }
            // Another loop-carried increment: plain arithmetic on registers other than the
            // latch's.
            if i.opcode.spelling() != "add" || names.iter().any(|n| held.contains(n)) {
                break;
            }
        }
    }
    // The add's own operands must not be written by what it moves past.
    moves.retain(|&(a, e)| {
        let Some(add) = instr(a) else { return false };
        let mut reads = Vec::new();
        add.operands
            .iter()
            .for_each(|o| super::analysis::names_in(o, &mut reads));
        (a + 1..e).all(|m| {
            instr(m)
                .and_then(|i| reg(i.operands.first()))
                .is_some_and(|d| !reads.contains(&d))
        })
    });
    if moves.is_empty() {
        return f;
    }
    let mut stmts = st.clone();
    for &(a, e) in &moves {
        stmts[a..e].rotate_left(1);
    }
    let mut g = f.clone();
    g.body = Some(Block {
        stmts,
        span: body.span,
    });
    scratch.function(g)
}

fn is_branch(i: &Instruction) -> bool {
    matches!(i.opcode.spelling(), "bra" | "brx" | "ret" | "exit" | "call")
}

/// The register an operand names (whole, not a component).
fn reg<'a>(o: Option<&Operand<'a>>) -> Option<&'a str> {
    match o {
        Some(Operand::Name {
            name,
            comp: None,
            negated: false,
            ..
        }) => Some(name),
        _ => None,
    }
}

/// `StrideLoop::linear` for the loop `q..=p`.
fn linear_start<'a>(
    nodes: &[(&Instruction<'a>, usize)],
    succ: &[Vec<usize>],
    q: usize,
    p: usize,
    l: &StrideLoop<'a>,
    divergent: &HashSet<&'a str>,
) -> bool {
    let uniform = |o: &Operand<'a>| match o {
        Operand::Imm(Expr::Int { .. }) => true,
        Operand::Name {
            name,
            comp: None,
            negated: false,
            ..
        } => !divergent.contains(name) && !name.starts_with("%tid") && !name.starts_with("%laneid"),
        _ => false,
    };
    let tid_x = |o: &Operand<'a>| {
        matches!(
            o,
            Operand::Name {
                name: "%tid",
                comp: Some(crate::syntax::ast::Component::X),
                ..
            }
        )
    };
    // `%tid.x`, or a register whose one definition reaching node `at` moves it there.
    let is_tid = |o: &Operand<'a>, at: usize| -> bool {
        match o {
            Operand::Name {
                name,
                comp: None,
                negated: false,
                ..
            } => match reaching(nodes, succ, name, at).as_deref() {
                Some(&[k]) if k != usize::MAX => {
                    let i = nodes[k].0;
                    i.opcode.spelling() == "mov"
                        && i.guard.is_none()
                        && i.operands.len() == 2
                        && tid_x(&i.operands[1])
                }
                _ => false,
            },
            o => tid_x(o),
        }
    };
    if !uniform(&l.step) || !uniform(&l.bound) {
        return false;
    }
    let Some(k) = start_def(nodes, succ, l.iv, q, p) else {
        return false;
    };
    let i = nodes[k].0;
    if i.guard.is_some() {
        return false;
    }
    let int32 = i
        .mods
        .iter()
        .any(|m| matches!(m.spelling(), ".u32" | ".s32" | ".b32"));
    let ops = &i.operands;
    match (i.opcode.spelling(), ops.len()) {
        ("mov", 2) => is_tid(&ops[1], k),
        ("add", 3) if int32 => {
            (is_tid(&ops[1], k) && uniform(&ops[2])) || (is_tid(&ops[2], k) && uniform(&ops[1]))
        }
        ("mad", 4) if int32 && i.mods.iter().any(|m| m.spelling() == ".lo") => {
            uniform(&ops[1]) && uniform(&ops[2]) && is_tid(&ops[3], k)
        }
        _ => false,
    }
}

/// Whether operand `o` at node `at` is special register `sreg`'s `.x` (`%tid`, `%ntid`): the
/// register itself, or a register whose one definition reaching `at` is an unguarded `mov`
/// of it.
fn moved_x(
    nodes: &[(&Instruction<'_>, usize)],
    succ: &[Vec<usize>],
    o: &Operand<'_>,
    at: usize,
    sreg: &str,
) -> bool {
    let is_x = |o: &Operand<'_>| {
        matches!(
            o,
            Operand::Name {
                name,
                comp: Some(crate::syntax::ast::Component::X),
                ..
            } if *name == sreg
        )
    };
    match reg(Some(o)) {
        Some(r) => match reaching(nodes, succ, r, at).as_deref() {
            Some(&[k]) if k != usize::MAX => {
                let i = nodes[k].0;
                i.opcode.spelling() == "mov"
                    && i.guard.is_none()
                    && i.operands.len() == 2
                    && is_x(&i.operands[1])
            }
            _ => false,
        },
        None => is_x(o),
    }
}

/// Whether the stride loop `q..=p` (`l`) runs at most one iteration in every thread of a CTA
/// whose `%ntid.x` is `ntid_x`: `iv` starts at `%tid.x` (its one definition reaching the
/// header from outside the loop moves it there), steps by `%ntid.x` (or that constant), and
/// the bound is a constant `C` with `C <= ntid_x` (`lt`; `C < ntid_x` for `le`): the second
/// value, `%tid.x + %ntid.x >= %ntid.x`, fails the test (no wrap: both are at most 1024).
fn one_trip<'a>(
    nodes: &[(&Instruction<'a>, usize)],
    succ: &[Vec<usize>],
    q: usize,
    p: usize,
    l: &StrideLoop<'a>,
    ntid_x: u32,
) -> bool {
    // Negative bounds (two's complement here) are not taken.
    let Operand::Imm(Expr::Int { value, .. }) = l.bound else {
        return false;
    };
    let fits = if l.le {
        value < u64::from(ntid_x)
    } else {
        value <= u64::from(ntid_x)
    };
    let step = match &l.step {
        Operand::Imm(Expr::Int { value, .. }) => *value == u64::from(ntid_x),
        o => moved_x(nodes, succ, o, p - 2, "%ntid"),
    };
    if !fits || !step {
        return false;
    }
    let Some(k) = start_def(nodes, succ, l.iv, q, p) else {
        return false;
    };
    let i = nodes[k].0;
    i.opcode.spelling() == "mov"
        && i.guard.is_none()
        && i.operands.len() == 2
        && moved_x(nodes, succ, &i.operands[1], k, "%tid")
}

/// The one definition of induction register `iv` that reaches the header `q` of the loop
/// ending at node `p` from outside the loop (the step at `p - 2` left out); None when there
/// are several, none (the kernel's start), or it lies in the loop.
fn start_def(
    nodes: &[(&Instruction<'_>, usize)],
    succ: &[Vec<usize>],
    iv: &str,
    q: usize,
    p: usize,
) -> Option<usize> {
    let outside: Vec<usize> = reaching(nodes, succ, iv, q)?
        .into_iter()
        .filter(|&k| k != p - 2)
        .collect();
    match outside[..] {
        [k] if k != usize::MAX && !(q..=p).contains(&k) => Some(k),
        _ => None,
    }
}

/// The definitions of register `r` that reach node `at` (before it runs), `usize::MAX`
/// standing for the kernel's start (no definition); `None` when there are too many to
/// follow.
pub(super) fn reaching(
    nodes: &[(&Instruction<'_>, usize)],
    succ: &[Vec<usize>],
    r: &str,
    at: usize,
) -> Option<Vec<usize>> {
    let n = nodes.len();
    let mut d = Vec::new();
    let writes: Vec<Option<bool>> = nodes
        .iter()
        .map(|(i, _)| {
            d.clear();
            defs(i, &mut d);
            // Some(true): always writes `r`; Some(false): only when its guard holds.
            d.contains(&r).then_some(i.guard.is_none())
        })
        .collect();
    let mut reach_in: Vec<Vec<usize>> = vec![Vec::new(); n];
    let mut work = vec![0usize];
    let mut queued = vec![false; n];
    queued[0] = true;
    reach_in[0].push(usize::MAX);
    while let Some(k) = work.pop() {
        queued[k] = false;
        let out: Vec<usize> = match writes[k] {
            Some(true) => vec![k],
            Some(false) => {
                let mut v = reach_in[k].clone();
                if !v.contains(&k) {
                    v.push(k);
                }
                v
            }
            None => reach_in[k].clone(),
        };
        for &s in &succ[k] {
            let mut grew = false;
            for &x in &out {
                if !reach_in[s].contains(&x) {
                    reach_in[s].push(x);
                    grew = true;
                }
            }
            if reach_in[s].len() > 8 {
                return None;
            }
            if grew && !std::mem::replace(&mut queued[s], true) {
                work.push(s);
            }
        }
    }
    Some(std::mem::take(&mut reach_in[at]))
}

/// The registers an instruction writes.
fn defs<'a>(i: &Instruction<'a>, out: &mut Vec<&'a str>) {
    if matches!(
        i.opcode.spelling(),
        "st" | "red" | "prefetch" | "prefetchu" | "bra" | "nanosleep"
    ) {
        return;
    }
    match i.operands.first() {
        Some(Operand::Name { name, .. }) => out.push(name),
        Some(Operand::Vec(v, _)) => {
            for x in v {
                if let Operand::Name { name, .. } = x {
                    out.push(name);
                }
            }
        }
        Some(Operand::Pair(a, b, _)) => {
            for x in [a, b] {
                if let Operand::Name { name, .. } = &**x {
                    out.push(name);
                }
            }
        }
        _ => {}
    }
}

/// The instructions `q..=p` as a stride loop (see the module).
fn stride_loop<'a>(
    nodes: &[(&Instruction<'a>, usize)],
    succ: &[Vec<usize>],
    q: usize,
    p: usize,
    divergent: &HashSet<&'a str>,
) -> Option<StrideLoop<'a>> {
    if p < q + 2 {
        return None;
    }
    let (bra, setp, add) = (nodes[p].0, nodes[p - 1].0, nodes[p - 2].0);
    let g = bra.guard.filter(|g| !g.negated)?;
    // `setp.{lt,le}.{s32,u32} %p, iv, bound` guarding the back edge.
    let smods: Vec<&str> = setp.mods.iter().map(|m| m.spelling()).collect();
    let (le, signed) = match smods.as_slice() {
        [c @ (".lt" | ".le"), t @ (".s32" | ".u32")] => (*c == ".le", *t == ".s32"),
        _ => return None,
    };
    if setp.opcode.spelling() != "setp" || setp.guard.is_some() || setp.operands.len() != 3 {
        return None;
    }
    if reg(setp.operands.first()) != Some(g.pred) {
        return None;
    }
    let iv = reg(setp.operands.get(1))?;
    let bound = setp.operands[2].clone();
    // `add.{s32,u32} iv, iv, step` (either order).
    let amods: Vec<&str> = add.mods.iter().map(|m| m.spelling()).collect();
    if add.opcode.spelling() != "add"
        || add.guard.is_some()
        || !matches!(amods.as_slice(), [".s32" | ".u32"])
        || add.operands.len() != 3
        || reg(add.operands.first()) != Some(iv)
    {
        return None;
    }
    let step = if reg(add.operands.get(1)) == Some(iv) {
        add.operands[2].clone()
    } else if reg(add.operands.get(2)) == Some(iv) {
        add.operands[1].clone()
    } else {
        return None;
    };
    let plain = |o: &Operand| matches!(o, Operand::Imm(Expr::Int { .. })) || reg(Some(o)).is_some();
    if !plain(&step) || !plain(&bound) || !divergent.contains(iv) {
        return None;
    }
    // Entered only at the header.
    let inside = |k: usize| (q..=p).contains(&k);
    for (k, s) in succ.iter().enumerate() {
        if !inside(k) && s.iter().any(|&t| t > q && t <= p) {
            return None;
        }
    }
    // A body whose branches go forward and stay inside it, never into the latch, so every
    // thread that starts an iteration reaches the latch (values carried
    // from one iteration to the next other than `iv` are saved at the yield in interchanged
    // iterations: `writes`).
    let mut written: HashSet<&str> = HashSet::new();
    let mut memory = false;
    let mut d = Vec::new();
    for (k, (i, _)) in nodes.iter().enumerate().take(p - 2).skip(q) {
        let op = i.opcode.spelling();
        if matches!(op, "brx" | "ret" | "exit" | "call" | "trap" | "brkpt")
            || super::analysis::is_stop(op)
        {
            return None;
        }
        // The carry flag is no register `writes` could name.
        if matches!(op, "addc" | "subc" | "madc") || i.mods.iter().any(|m| m.spelling() == ".cc") {
            return None;
        }
        // Forward only: an inner loop could hold a yield of its own, which interchanged
        // iterations of this one would stop at.
        if succ[k].iter().any(|&s| s <= k || s > p - 2) {
            return None;
        }
        let space = i
            .mods
            .iter()
            .any(|m| matches!(m.spelling(), ".param" | ".local"));
        if matches!(op, "ld" | "st" | "atom" | "red" | "ldu" | "cp") && !space {
            memory = true;
        }
        d.clear();
        defs(i, &mut d);
        if d.contains(&iv) {
            return None;
        }
        written.extend(d.iter().copied());
    }
    for o in [&step, &bound] {
        if let Some(r) = reg(Some(o)) {
            if r == iv || written.contains(r) || r == g.pred {
                return None;
            }
        }
    }
    if !memory {
        return None;
    }
    written.insert(g.pred);
    let mut writes: Vec<&'a str> = written.into_iter().collect();
    writes.sort_unstable();
    Some(StrideLoop {
        writes,
        iv,
        step,
        bound,
        le,
        signed,
        // Set by `insert_yields`, in the new kernel's numbering.
        exit: None,
        latch: NodeId(0),
        linear: false,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The stride loops `insert_yields` finds in the first kernel of `body` (declarations
    /// `%p<4>`, `%r<20>`, `%rd<8>`, parameters `out` (u64) and `n` (u32)), as
    /// (induction register, le, signed, exit opcode or "end").
    fn loops_of(body: &str) -> Vec<(String, bool, bool, String)> {
        loops_of_linear(body).into_iter().map(|(l, _)| l).collect()
    }

    /// `loops_of` with `StrideLoop::linear`.
    fn loops_of_linear(body: &str) -> Vec<((String, bool, bool, String), bool)> {
        loops_for_block(body, None)
    }

    /// Runs `f` on the kernel made of `body` after a prologue that loads the parameters into
    /// `%rd1` (`out`) and `%r1` (`n`) and `%tid.x`, `%ntid.x` into `%r2`, `%r3`.
    fn with_kernel<R>(body: &str, f: impl FnOnce(&crate::syntax::ast::Function<'_>) -> R) -> R {
        let src = format!(
            ".version 7.0
.target sm_80
.address_size 64
.visible .entry k(.param .u64 out, .param .u32 n)
{{
  .reg .pred %p<4>;
  .reg .b32 %r<20>;
  .reg .b64 %rd<8>;
  ld.param.u64 %rd1, [out];
  ld.param.u32 %r1, [n];
  mov.u32 %r2, %tid.x;
  mov.u32 %r3, %ntid.x;
{body}
}}"
        );
        let (m, d) = crate::syntax::parse(&src);
        assert!(d.is_empty(), "{d:?}");
        let k = m
            .items
            .iter()
            .find_map(|i| match i {
                crate::syntax::ast::Item::Function(f) => Some(&**f),
                _ => None,
            })
            .expect("a kernel");
        f(k)
    }

    /// The branches left in the kernel of `body` (as `loops_of`) after `insert_yields` for
    /// CTAs of `ntid_x` threads in x.
    fn branches(body: &str, ntid_x: Option<u32>) -> usize {
        with_kernel(body, |f| {
            let scratch = crate::target::cpu::fission::Scratch::default();
            let g = insert_yields(f, &scratch, ntid_x).map_or(f, |(g, _)| g);
            let ins = g.body.as_ref().unwrap().instructions();
            ins.iter().filter(|i| i.opcode.spelling() == "bra").count()
        })
    }

    /// `loops_of_linear` for a kernel compiled for CTAs of `ntid_x` threads in x.
    fn loops_for_block(
        body: &str,
        ntid_x: Option<u32>,
    ) -> Vec<((String, bool, bool, String), bool)> {
        with_kernel(body, |f| {
            let scratch = crate::target::cpu::fission::Scratch::default();
            let Some((g, loops)) = insert_yields(f, &scratch, ntid_x) else {
                return Vec::new();
            };
            let yields = g
                .body
                .as_ref()
                .unwrap()
                .stmts
                .iter()
                .filter(|s| matches!(s, Statement::Instr(i) if i.opcode.spelling() == "nanosleep"))
                .count();
            assert_eq!(yields, loops.len(), "one yield per loop");
            let ins = g.body.as_ref().unwrap().instructions();
            let mut out: Vec<_> = loops
                .iter()
                .map(|(y, l)| {
                    assert_eq!(ins[y.0 as usize].opcode.spelling(), "nanosleep");
                    let exit = l.exit.map_or("end".to_string(), |e| {
                        ins[e.0 as usize].opcode.spelling().into()
                    });
                    assert_eq!(ins[l.latch.0 as usize].opcode.spelling(), "bra");
                    ((l.iv.to_string(), l.le, l.signed, exit), l.linear)
                })
                .collect();
            out.sort();
            out
        })
    }

    /// A grid-stride loop `for (i = tid; i < n; i += ntid) { out[i] = i; }` with `extra` at
    /// the start of its body, followed by a barrier.
    fn grid_stride(extra: &str, cmp: &str) -> String {
        format!(
            "  bar.sync 0;
  mov.u32 %r4, %r2;
L:
{extra}
  mul.wide.s32 %rd2, %r4, 4;
  add.s64 %rd3, %rd1, %rd2;
  st.global.u32 [%rd3], %r4;
  add.s32 %r4, %r4, %r3;
  setp.{cmp} %p1, %r4, %r1;
  @%p1 bra L;
  bar.sync 0;
  ret;"
        )
    }

    #[test]
    fn finds_grid_stride_loops_and_their_exit() {
        assert_eq!(
            loops_of(&grid_stride("", "lt.s32")),
            [("%r4".to_string(), false, true, "bar".to_string())]
        );
        assert_eq!(
            loops_of(&grid_stride("", "le.u32")),
            [("%r4".to_string(), true, false, "bar".to_string())]
        );
        // Registers written in the body, carried from one iteration to the next or not.
        assert_eq!(
            loops_of(&grid_stride(
                "  add.s32 %r5, %r4, 1;\n  mul.lo.s32 %r6, %r5, %r5;\n  add.s32 %r7, %r7, %r6;",
                "lt.s32"
            ))
            .len(),
            1
        );
        // A forward branch inside the body (`if (i != 5) out[0] = i;`).
        let skip = "  setp.eq.u32 %p2, %r4, 5;\n  @%p2 bra S;\n  st.global.u32 [%rd1], %r4;\nS:";
        assert_eq!(
            loops_of(&grid_stride(skip, "lt.s32")),
            [("%r4".to_string(), false, true, "bar".to_string())]
        );
        // Leaving the loop straight to the end.
        let to_end = grid_stride("", "lt.s32").replace("  bar.sync 0;\n  ret;", "  ret;");
        assert_eq!(
            loops_of(&to_end),
            [("%r4".to_string(), false, true, "end".to_string())]
        );
    }

    #[test]
    fn finds_latches_with_other_increments_before_the_compare() {
        // Clang's order: the index's add, a pointer's, then the compare.
        let clang = "  mov.u32 %r4, %r2;
  mul.wide.s32 %rd2, %r4, 4;
  add.s64 %rd3, %rd1, %rd2;
L:
  st.global.u32 [%rd3], %r4;
  add.s32 %r4, %r4, %r3;
  add.s64 %rd3, %rd3, 4;
  setp.lt.s32 %p1, %r4, %r1;
  @%p1 bra L;
  ret;";
        assert_eq!(
            loops_of_linear(clang),
            [(("%r4".to_string(), false, true, "end".to_string()), true)]
        );
        // Not moved past an instruction that reads the index, the step or the bound, or
        // writes them: the loop is then not a stride loop.
        for other in [
            "add.s32 %r5, %r5, %r4;",
            "add.s32 %r3, %r3, 1;",
            "add.s32 %r6, %r1, 1;",
            "add.s32 %r1, %r1, 1;",
        ] {
            let body = clang.replace("add.s64 %rd3, %rd3, 4;", other);
            assert_eq!(loops_of(&body), [], "{other}");
        }
    }

    #[test]
    fn knows_loops_starting_at_tid_plus_a_uniform_value_are_linear() {
        let linear = |body: &str| -> Vec<bool> {
            loops_of_linear(body).into_iter().map(|(_, l)| l).collect()
        };
        // `i = %tid.x` (through a register), `i = %ctaid.x * %ntid.x + %tid.x`, `i = %tid.x + n`.
        assert_eq!(linear(&grid_stride("", "lt.s32")), [true]);
        let gid = grid_stride("", "lt.s32").replace(
            "mov.u32 %r4, %r2;",
            "mov.u32 %r9, %ctaid.x;\n  mad.lo.s32 %r4, %r9, %r3, %r2;",
        );
        assert_eq!(linear(&gid), [true]);
        let plus = grid_stride("", "lt.s32").replace("mov.u32 %r4, %r2;", "add.s32 %r4, %r2, %r1;");
        assert_eq!(linear(&plus), [true]);
        // `%r2` redefined after the loop (a later loop over it) still reaches as `%tid.x`.
        let later = grid_stride("", "lt.s32").replace(
            "  bar.sync 0;\n  ret;",
            "  bar.sync 0;\n  add.s32 %r2, %r2, 1;\n  ret;",
        );
        assert_eq!(linear(&later), [true]);
        // Not linear: `2 * %tid.x`; `%tid.x` plus a divergent value; a second definition
        // reaching the loop; a step that differs between threads.
        let twice = grid_stride("", "lt.s32").replace("mov.u32 %r4, %r2;", "shl.b32 %r4, %r2, 1;");
        assert_eq!(linear(&twice), [false]);
        let div = grid_stride("", "lt.s32").replace("mov.u32 %r4, %r2;", "add.s32 %r4, %r2, %r2;");
        assert_eq!(linear(&div), [false]);
        let two = grid_stride("", "lt.s32").replace(
            "mov.u32 %r4, %r2;",
            "mov.u32 %r4, %r2;\n  setp.eq.u32 %p2, %r1, 7;\n  @%p2 mov.u32 %r4, 0;",
        );
        assert_eq!(linear(&two), [false]);
        let step =
            grid_stride("", "lt.s32").replace("add.s32 %r4, %r4, %r3;", "add.s32 %r4, %r4, %r2;");
        assert_eq!(linear(&step), [false]);
    }

    #[test]
    fn leaves_out_block_loops_of_one_iteration_a_thread() {
        let count = |body: &str, x: Option<u32>| loops_for_block(body, x).len();
        // `for (i = tid; i < 256; i += ntid)` in CTAs of 256 threads (or more), the threads
        // finishing after it: one iteration at most; of 128, two.
        let block = grid_stride("", "lt.s32")
            .replace("%p1, %r4, %r1;", "%p1, %r4, 256;")
            .replace("  bar.sync 0;\n  ret;", "  ret;");
        assert_eq!(count(&block, None), 1);
        assert_eq!(branches(&block, Some(256)), 0, "the latch goes");
        assert_eq!(branches(&block, Some(128)), 1);
        // A stop after it (a loop clearing shared memory before a barrier): no yield either.
        let stop = block.replace("  ret;", "  bar.sync 0;\n  ret;");
        assert_eq!(count(&stop, Some(256)), 0);
        assert_eq!(count(&stop, Some(128)), 1);
        assert_eq!(count(&block, Some(256)), 0);
        assert_eq!(count(&block, Some(512)), 0);
        assert_eq!(count(&block, Some(128)), 1);
        // `i <= 256` runs two in thread 0 of 256; `i <= 255` one.
        let le = block.replace("setp.lt.s32", "setp.le.s32");
        assert_eq!(count(&le, Some(256)), 1);
        assert_eq!(count(&le.replace("256;", "255;"), Some(256)), 0);
        // A constant step equal to the block.
        let imm = block.replace("add.s32 %r4, %r4, %r3;", "add.s32 %r4, %r4, 256;");
        assert_eq!(count(&imm, Some(256)), 0);
        assert_eq!(
            count(&imm.replace(", 256;\n  setp", ", 128;\n  setp"), Some(256)),
            1
        );
        // Kept: a bound from a parameter, a start other than `%tid.x`, a step other than
        // `%ntid.x`.
        assert_eq!(count(&grid_stride("", "lt.s32"), Some(256)), 1);
        let plus = block.replace("mov.u32 %r4, %r2;", "add.s32 %r4, %r2, %r1;");
        assert_eq!(count(&plus, Some(256)), 1);
        let step = block.replace("add.s32 %r4, %r4, %r3;", "add.s32 %r4, %r4, %r1;");
        assert_eq!(count(&step, Some(256)), 1);
    }

    #[test]
    fn refuses_loops_it_cannot_interchange() {
        // The carry flag between instructions of the body.
        assert!(loops_of(&grid_stride(
            "  add.cc.u32 %r7, %r4, 1;\n  addc.u32 %r8, 0, 0;",
            "lt.s32"
        ))
        .is_empty());
        // A second back edge to the header.
        assert!(loops_of(&grid_stride("  @%p2 bra L;", "lt.s32")).is_empty());
        // A `break` out of the loop.
        let brk = grid_stride("  setp.eq.u32 %p2, %r4, 5;\n  @%p2 bra X;", "lt.s32")
            .replace("  bar.sync 0;\n  ret;", "X:\n  bar.sync 0;\n  ret;");
        assert!(loops_of(&brk).is_empty());
        // An inner loop (it could get a yield of its own).
        let inner = "  mov.u32 %r7, 0;\nI:\n  add.s32 %r7, %r7, 1;\n  setp.lt.u32 %p2, %r7, 3;\n  @%p2 bra I;";
        assert!(loops_of(&grid_stride(inner, "lt.s32")).is_empty());
        // A stop in the body.
        assert!(loops_of(&grid_stride("  bar.sync 1;", "lt.s32")).is_empty());
        // The step written in the loop.
        assert!(loops_of(&grid_stride("  add.s32 %r3, %r3, 1;", "lt.s32")).is_empty());
        // A comparison other than lt/le, and a 64-bit one.
        assert!(loops_of(&grid_stride("", "ne.s32")).is_empty());
        // The same induction value in every thread (nothing to interchange).
        let uniform = grid_stride("", "lt.s32").replace("mov.u32 %r4, %r2;", "mov.u32 %r4, 0;");
        assert!(loops_of(&uniform).is_empty());
        // Threads leaving the loop reach different stops.
        let split = grid_stride("", "lt.s32").replace(
            "  @%p1 bra L;\n  bar.sync 0;",
            "  @%p1 bra L;\n  setp.eq.u32 %p3, %r2, 0;\n  @%p3 bra X;\n  bar.sync 0;\nX:\n  bar.sync 1;",
        );
        assert!(loops_of(&split).is_empty());
        // No memory access in the body.
        let no_mem = grid_stride("", "lt.s32").replace("  st.global.u32 [%rd3], %r4;\n", "");
        assert!(loops_of(&no_mem).is_empty());
        // Kernels without stops interchange only loops known to start at `%tid.x + U`:
        // `i = %tid.x` is one, `i = 2 * %tid.x` is not (it keeps the batched CTA loop).
        let no_stops = grid_stride("", "lt.s32").replace("  bar.sync 0;\n", "");
        assert_eq!(loops_of_linear(&no_stops).len(), 1);
        assert!(loops_of_linear(&no_stops)[0].1);
        let twice = no_stops.replace("mov.u32 %r4, %r2;", "shl.b32 %r4, %r2, 1;");
        assert!(loops_of(&twice).is_empty());
    }
}
