//! Analysis of a kernel body for the thread-loop ("fission") execution of the cpu target:
//! the stop points (barriers, warp-level operations, `activemask`, `nanosleep`), an
//! instruction-level control-flow graph, register liveness across stop points, registers that
//! hold one constant everywhere (rematerialized instead of saved), and the reasons a kernel
//! must keep the coroutine path.
//!
//! Registers are tracked by name. Only registers declared in the kernel's top-level block
//! take part; names declared in nested blocks (nvcc's `{ .reg .b16 %tmp; … }` scopes) cannot
//! be live across a stop outside their block (control can only re-enter a block at its top),
//! and a stop inside a block that declares something makes the kernel ineligible.

use std::collections::{HashMap, HashSet};

use crate::syntax::ast::{self, Expr, Function, Instruction, Item, NodeId, Operand, Statement};

/// A stop point: where a thread leaves the region loop.
#[derive(Clone, Debug)]
pub struct StopSite<'x, 'a> {
    pub ins: &'x Instruction<'a>,
    /// Which instruction of the kernel's body it is.
    pub node: NodeId,
    /// Registers (names) to save before the stop and restore after it.
    pub saved: Vec<&'a str>,
    /// Instructions to run again after the stop (in order): the definitions of the registers
    /// live across it that are pure functions of special registers, parameters, constants and
    /// each other (`Plan::remat`), instead of saving them.
    pub remat: Vec<NodeId>,
}

/// The result of the analysis of one kernel.
pub use super::tidrange::TidRange;
use super::{tidrange, uniform};

pub struct Plan<'x, 'a> {
    /// Stop `j` (1-based) is `stops[j - 1]`.
    pub stops: Vec<StopSite<'x, 'a>>,
    /// Stop number of an instruction.
    pub stop_of: HashMap<NodeId, u32>,
    /// Registers defined exactly once, by `mov` of an integer immediate: name → value.
    pub consts: HashMap<&'a str, u64>,
    /// Whether the kernel declares `.local` variables.
    pub has_locals: bool,
    /// Probe branches by resume point (0: the start; `j`: after stop `j`, for both of its
    /// resume points): the first conditional branch of the region when only side-effect-free
    /// code that reads no memory other threads may write runs before it, and it can be
    /// reached only once per round. The CTA function evaluates its condition for every thread
    /// first and runs copies of the region specialized for each direction over the threads
    /// that take it (bounds checks such as `if (i < n)` and `if (tid < stride)` then cost
    /// nothing and need no masked stores).
    pub probes: HashMap<u32, NodeId>,
    /// Regions (0 or `j` as for `probes`) in which every thread that starts reaches stop
    /// `must` (the value) and no thread finishes: their rounds need no per-thread state.
    pub must_stop: HashMap<u32, u32>,
    /// Probe regions whose branch leads straight to the region's only stop when taken
    /// (`.0`) or not taken (`.1`): those threads have nothing to do in the round.
    pub empty_paths: HashMap<u32, (bool, bool)>,
    /// Probe regions whose branch condition is `%tid.x CMP constant` (`setp` on a register
    /// that only ever holds `%tid.x`): the taken threads form an interval computed without a
    /// probe pass.
    pub analytic: HashMap<u32, TidRange>,
    /// Probe regions whose `analytic` interval is bounded by a uniform register (`TidRange::
    /// reg`): its name.
    pub probe_regs: HashMap<u32, &'a str>,
    /// Probe regions whose branch leads straight to `ret`/`exit` when taken (`.0`) or not
    /// taken (`.1`): those threads finish without running anything.
    pub exit_paths: HashMap<u32, (bool, bool)>,
    /// Probe regions with an exit path whose other threads all reach one stop (no other way
    /// out): that stop.
    pub exit_then: HashMap<u32, u32>,
    /// Probe regions whose branch condition picks every `modulus`-th thread (`lane == 0`).
    pub lanes: HashMap<u32, tidrange::TidLanes>,
    /// Probe regions whose branch predicate is uniform (`uniform::divergent`): every thread
    /// of the round takes the branch the same way, so one thread's condition decides.
    pub uniform_probes: HashSet<u32>,
    /// The shape of each region (0 or `j` as for `probes`).
    pub sizes: HashMap<u32, RegionShape>,
    /// Regions (as for `probes`) every thread finishes without reaching a stop.
    pub finish: HashSet<u32>,
    /// Yields at the headers of stride loops, by instruction (`stride::insert_yields`; set
    /// by the caller, who inserted them).
    pub yields: HashMap<NodeId, super::stride::StrideLoop<'a>>,
}

/// What a region holds: the instructions a thread can run from its start before it reaches a
/// stop or finishes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RegionShape {
    /// How many.
    pub len: usize,
    /// Whether one is a conditional branch.
    pub branches: bool,
}

impl Plan<'_, '_> {
    pub fn has_stops(&self) -> bool {
        !self.stops.is_empty()
    }
}

/// Opcodes that make a thread stop.
pub fn is_stop(op: &str) -> bool {
    matches!(
        op,
        "bar"
            | "barrier"
            | "shfl"
            | "vote"
            | "match"
            | "redux"
            | "activemask"
            | "elect"
            | "nanosleep"
    )
}

/// Warp-collective matrix instructions: they exchange whole fragments between lanes, which the
/// runtime does for coroutines only (`runtime/matrix.rs`).
pub fn is_warp_matrix(op: &str) -> bool {
    matches!(op, "mma" | "ldmatrix" | "stmatrix" | "movmatrix" | "wmma")
}

/// Opcodes whose first operand is written and not read.
fn dest_first(op: &str) -> bool {
    matches!(
        op,
        "add"
            | "sub"
            | "mul"
            | "mad"
            | "mul24"
            | "mad24"
            | "div"
            | "rem"
            | "abs"
            | "neg"
            | "min"
            | "max"
            | "sad"
            | "addc"
            | "subc"
            | "madc"
            | "and"
            | "or"
            | "xor"
            | "not"
            | "cnot"
            | "shl"
            | "shr"
            | "setp"
            | "selp"
            | "set"
            | "slct"
            | "mov"
            | "fma"
            | "rcp"
            | "sqrt"
            | "rsqrt"
            | "ex2"
            | "lg2"
            | "sin"
            | "cos"
            | "tanh"
            | "copysign"
            | "testp"
            | "cvt"
            | "cvta"
            | "isspacep"
            | "bfe"
            | "bfi"
            | "prmt"
            | "lop3"
            | "shf"
            | "bfind"
            | "brev"
            | "clz"
            | "popc"
            | "fns"
            | "bmsk"
            | "szext"
            | "dp4a"
            | "dp2a"
            | "ld"
            | "ldu"
            | "atom"
            | "shfl"
            | "vote"
            | "match"
            | "redux"
            | "activemask"
            | "elect"
    )
}

/// The functions of a module by name, for the call summaries.
fn functions<'x, 'a>(m: &'x ast::Module<'a>) -> HashMap<&'a str, &'x Function<'a>> {
    m.items
        .iter()
        .filter_map(|i| match i {
            Item::Function(f) => Some((f.name, &**f)),
            _ => None,
        })
        .collect()
}

fn walk<'x, 'a>(b: &'x ast::Block<'a>, f: &mut impl FnMut(&'x Instruction<'a>)) {
    for s in &b.stmts {
        match s {
            Statement::Instr(i) => f(i),
            Statement::Block(b) => walk(b, f),
            _ => {}
        }
    }
}

/// The function a `call` names (`None`: an indirect call through a register).
pub fn callee_name<'a>(i: &Instruction<'a>) -> Option<&'a str> {
    let ops = &i.operands;
    let k = match ops.first() {
        Some(Operand::List(..)) if ops.len() >= 2 && !matches!(ops[1], Operand::List(..)) => 1,
        _ => 0,
    };
    match ops.get(k) {
        Some(Operand::Name { name, .. }) => Some(name),
        _ => None,
    }
}

/// Why a device function cannot run inside a thread loop (it stops, ends or traps the thread,
/// or calls what does), if it cannot.
fn callee_problem<'a>(
    fns: &HashMap<&'a str, &Function<'a>>,
    name: &'a str,
    memo: &mut HashMap<&'a str, Option<String>>,
) -> Option<String> {
    if let Some(r) = memo.get(name) {
        return r.clone();
    }
    memo.insert(name, None); // recursion: assume fine while visiting
    let r = (|| {
        if name == "__assertfail" {
            return Some("calls `__assertfail` in a device function".to_string());
        }
        let f = fns.get(name)?;
        let body = f.body.as_ref()?;
        let mut problem = None;
        walk(body, &mut |i| {
            if problem.is_some() {
                return;
            }
            let op = i.opcode.spelling();
            if is_stop(op)
                || is_warp_matrix(op)
                || matches!(op, "exit" | "trap")
                || crate::target::cpu::mbarrier::needs_coroutines(i)
            {
                problem = Some(format!("device function `{name}` contains `{op}`"));
            } else if op == "call" {
                match callee_name(i) {
                    Some(c) if fns.contains_key(c) || c == "__assertfail" => {
                        if let Some(p) = callee_problem(fns, c, memo) {
                            problem = Some(p);
                        }
                    }
                    Some("vprintf") => {}
                    _ => problem = Some(format!("device function `{name}` makes an indirect call")),
                }
            }
        });
        problem
    })();
    memo.insert(name, r.clone());
    r
}

/// Register declarations of the top-level block: exact names and `%r<N>` prefixes.
#[derive(Default)]
pub(super) struct Regs<'a> {
    exact: HashSet<&'a str>,
    ranges: HashMap<&'a str, u32>,
}

impl<'a> Regs<'a> {
    pub(super) fn add(&mut self, v: &ast::VarDecl<'a>) {
        for n in &v.names {
            match n.count {
                Some(c) => {
                    self.ranges.insert(n.name, c);
                }
                None => {
                    self.exact.insert(n.name);
                }
            }
        }
    }
    pub(super) fn contains(&self, name: &str) -> bool {
        if self.exact.contains(name) {
            return true;
        }
        let split = name.trim_end_matches(|c: char| c.is_ascii_digit());
        if split.len() == name.len() {
            return false;
        }
        match (self.ranges.get(split), name[split.len()..].parse::<u32>()) {
            (Some(&c), Ok(i)) => i < c,
            _ => false,
        }
    }
    /// Whether a nested declaration reuses a top-level name or prefix.
    fn shadowed_by(&self, v: &ast::VarDecl) -> bool {
        v.names.iter().any(|n| {
            self.exact.contains(n.name)
                || self.ranges.contains_key(n.name)
                || (n.count.is_none() && self.contains(n.name))
        })
    }
}

struct Node<'x, 'a> {
    ins: &'x Instruction<'a>,
    succ: Vec<usize>,
    uses: Vec<u32>,
    kills: Vec<u32>,
}

/// The `NodeId` of node `k` of a `Flat`: nodes are the body's instructions in the order
/// `Block::instructions` numbers them.
fn node_id(k: usize) -> NodeId {
    NodeId(k as u32)
}

/// Flattened body with label scopes.
struct Flat<'x, 'a> {
    nodes: Vec<Node<'x, 'a>>,
    /// (node, scope, label) of branches to resolve.
    branches: Vec<(usize, usize, Vec<&'a str>)>,
    scopes: Vec<(Option<usize>, HashMap<&'a str, usize>)>,
    problems: Vec<String>,
    has_locals: bool,
}

fn flatten<'x, 'a>(
    blk: &'x ast::Block<'a>,
    parent: Option<usize>,
    depth: usize,
    top: &Regs<'a>,
    branch_lists: &HashMap<&'a str, Vec<&'a str>>,
    out: &mut Flat<'x, 'a>,
) {
    let scope = out.scopes.len();
    out.scopes.push((parent, HashMap::new()));
    let declares = blk.stmts.iter().any(|s| matches!(s, Statement::Var(_)));
    for st in &blk.stmts {
        match st {
            Statement::Label(name, _) => {
                let at = out.nodes.len();
                out.scopes[scope].1.insert(name, at);
            }
            Statement::Instr(i) => {
                let op = i.opcode.spelling();
                if depth > 0 && declares && is_stop(op) {
                    out.problems.push(format!(
                        "`{op}` inside a nested block that declares variables"
                    ));
                }
                let at = out.nodes.len();
                match op {
                    "bra" => out
                        .branches
                        .push((at, scope, label_of(i).into_iter().collect())),
                    "brx" => {
                        let list = match i.operands.get(1) {
                            Some(Operand::Name { name, .. }) => {
                                branch_lists.get(name).cloned().unwrap_or_default()
                            }
                            _ => Vec::new(),
                        };
                        out.branches.push((at, scope, list));
                    }
                    _ => {}
                }
                out.nodes.push(Node {
                    ins: i,
                    succ: Vec::new(),
                    uses: Vec::new(),
                    kills: Vec::new(),
                });
            }
            Statement::Var(v) => {
                let sp = v.space.spelling();
                if sp == ".local" {
                    out.has_locals = true;
                    // The per-thread `.local` area of thread loops starts at a page
                    // (`runtime::fission::LOCAL_ALIGN`).
                    if v.align.is_some_and(|a| a > 4096) {
                        out.problems.push(
                            "a `.local` variable aligned to more than 4096 bytes".to_string(),
                        );
                    }
                }
                if depth > 0 && sp == ".reg" && top.shadowed_by(v) {
                    out.problems
                        .push("a nested block redeclares a register name".to_string());
                }
            }
            Statement::Block(b) => flatten(b, Some(scope), depth + 1, top, branch_lists, out),
            _ => {}
        }
    }
}

fn declares_vector_regs(b: &ast::Block<'_>) -> bool {
    b.stmts.iter().any(|s| match s {
        Statement::Var(v) => v.space.spelling() == ".reg" && v.vector.is_some(),
        Statement::Block(inner) => declares_vector_regs(inner),
        _ => false,
    })
}

/// Every instruction of the kernel, in order.
fn all_ins<'x, 'a>(flat: &Flat<'x, 'a>) -> Vec<&'x Instruction<'a>> {
    flat.nodes.iter().map(|n| n.ins).collect()
}

/// Each node's successors.
fn all_succ(flat: &Flat<'_, '_>) -> Vec<Vec<usize>> {
    flat.nodes.iter().map(|n| n.succ.clone()).collect()
}

/// The instructions of nodes `start..=end`.
fn region_ins<'x, 'a>(flat: &Flat<'x, 'a>, start: usize, end: usize) -> Vec<&'x Instruction<'a>> {
    flat.nodes[start..=end].iter().map(|n| n.ins).collect()
}

fn label_of<'a>(i: &Instruction<'a>) -> Option<&'a str> {
    match i.operands.first() {
        Some(Operand::Name { name, .. }) => Some(name),
        _ => None,
    }
}

/// Register names an operand reads (all of them; destinations are handled by the caller).
pub(crate) fn names_in<'a>(op: &Operand<'a>, out: &mut Vec<&'a str>) {
    match op {
        Operand::Name { name, .. } => out.push(name),
        Operand::Addr(a) => out.extend(a.base),
        Operand::AddrList(v, _) | Operand::Vec(v, _) | Operand::List(v, _) => {
            v.iter().for_each(|o| names_in(o, out))
        }
        Operand::Pair(a, b, _) => {
            names_in(a, out);
            names_in(b, out);
        }
        Operand::Imm(e) => expr_names(e, out),
        Operand::Sink(_) => {}
    }
}

fn expr_names<'a>(e: &Expr<'a>, out: &mut Vec<&'a str>) {
    match e {
        Expr::Sym(s, _) | Expr::Generic(s, _) => out.push(s),
        Expr::Mask(_, a, _) | Expr::Unary(_, a, _) | Expr::Cast(_, a, _) => expr_names(a, out),
        Expr::Binary(_, a, b, _) => {
            expr_names(a, out);
            expr_names(b, out);
        }
        Expr::Cond(a, b, c, _) => {
            expr_names(a, out);
            expr_names(b, out);
            expr_names(c, out);
        }
        _ => {}
    }
}

/// Registers a destination operand writes completely.
fn dest_names<'a>(op: &Operand<'a>, out: &mut Vec<&'a str>) {
    match op {
        Operand::Name {
            name, comp: None, ..
        } => out.push(name),
        Operand::Vec(v, _) => v.iter().for_each(|o| dest_names(o, out)),
        Operand::Pair(a, b, _) => {
            dest_names(a, out);
            dest_names(b, out);
        }
        _ => {}
    }
}

/// Analyses kernel `f` of module `m`. `Err` says why the kernel must keep the coroutine path.
pub fn analyse<'x, 'a>(
    m: &'x ast::Module<'a>,
    f: &'x Function<'a>,
) -> Result<Plan<'x, 'a>, String> {
    let body = f.body.as_ref().ok_or("no body")?;
    let fns = functions(m);
    let mut top = Regs::default();
    for st in &body.stmts {
        if let Statement::Var(v) = st {
            if v.space.spelling() == ".reg" {
                top.add(v);
            }
        }
    }
    let mut branch_lists: HashMap<&'a str, Vec<&'a str>> = HashMap::new();
    collect_branch_targets(body, &mut branch_lists);
    let mut flat = Flat {
        nodes: Vec::new(),
        branches: Vec::new(),
        scopes: Vec::new(),
        problems: Vec::new(),
        has_locals: false,
    };
    flatten(body, None, 0, &top, &branch_lists, &mut flat);
    debug_assert!(
        body.instructions().len() == flat.nodes.len()
            && body
                .instructions()
                .iter()
                .zip(&flat.nodes)
                .all(|(i, n)| std::ptr::eq(*i, n.ins))
    );

    // Calls and instructions the thread loop cannot host.
    let mut memo = HashMap::new();
    let mut any_stop = false;
    for n in &flat.nodes {
        let op = n.ins.opcode.spelling();
        if crate::target::cpu::mbarrier::needs_coroutines(n.ins) {
            return Err(format!(
                "`{op}` (mbarrier, cluster and asynchronous-copy instructions run as coroutines)"
            ));
        }
        if is_stop(op) {
            any_stop = true;
        }
        match op {
            "call" => match callee_name(n.ins) {
                Some("__assertfail") | Some("vprintf") => {}
                Some(c) if fns.contains_key(c) => {
                    if let Some(p) = callee_problem(&fns, c, &mut memo) {
                        flat.problems.push(p);
                    }
                }
                _ => flat.problems.push("an indirect call".to_string()),
            },
            "alloca" | "stacksave" | "stackrestore" => flat.problems.push(format!("`{op}`")),
            op if is_warp_matrix(op) => flat
                .problems
                .push(format!("`{op}` (a warp matrix instruction)")),
            _ => {}
        }
    }
    if !any_stop {
        // Without stops only calls matter: a region is the whole kernel.
        if let Some(p) = flat
            .problems
            .iter()
            .find(|p| !p.contains("nested block"))
            .cloned()
        {
            return Err(p);
        }
        let probe = find_probe(&flat, 0);
        let mut analytic = HashMap::new();
        if let Some(b) = probe {
            let kernel_facts = tidrange::facts(f, &all_ins(&flat), all_succ(&flat));
            if let Some((r, None)) =
                tidrange::range(&kernel_facts, &region_ins(&flat, 0, b), 0, &|_| false)
            {
                analytic.insert(0, r);
            }
        }
        let probes = probe.map(|p| (0, node_id(p))).into_iter().collect();
        return Ok(Plan {
            stops: Vec::new(),
            stop_of: HashMap::new(),
            consts: HashMap::new(),
            has_locals: flat.has_locals,
            probes,
            must_stop: HashMap::new(),
            empty_paths: HashMap::new(),
            analytic,
            probe_regs: HashMap::new(),
            exit_paths: HashMap::new(),
            exit_then: HashMap::new(),
            lanes: HashMap::new(),
            uniform_probes: HashSet::new(),
            sizes: HashMap::new(),
            finish: HashSet::new(),
            yields: HashMap::new(),
        });
    }
    // Liveness across stops tracks whole registers; a component write (`%v.y`) is a partial
    // definition it does not model, so kernels with vector registers keep coroutines.
    if declares_vector_regs(body) {
        return Err("a vector register (`.reg .vN`) with barriers or warp operations".to_string());
    }
    if let Some(p) = flat.problems.first() {
        return Err(p.clone());
    }

    // Register ids.
    let mut ids: HashMap<&'a str, u32> = HashMap::new();
    let mut names: Vec<&'a str> = Vec::new();
    let cc_id = 0u32;
    names.push("%%cc");
    let id_of =
        |n: &'a str, ids: &mut HashMap<&'a str, u32>, names: &mut Vec<&'a str>| -> Option<u32> {
            if !top.contains(n) {
                return None;
            }
            Some(*ids.entry(n).or_insert_with(|| {
                names.push(n);
                names.len() as u32 - 1
            }))
        };
    let nn = flat.nodes.len();
    let mut defs_count: HashMap<&'a str, u32> = HashMap::new();
    let mut consts: HashMap<&'a str, u64> = HashMap::new();
    // Single-definition candidates for rematerialization: register → (node, operand names).
    let mut pure_def: HashMap<&'a str, (usize, Vec<&'a str>)> = HashMap::new();
    for k in 0..nn {
        let i = flat.nodes[k].ins;
        let op = i.opcode.spelling();
        let mut uses = Vec::new();
        let mut dests = Vec::new();
        if let Some(g) = i.guard {
            uses.push(g.pred);
        }
        let first_is_dest = dest_first(op) && !i.operands.is_empty();
        for (x, o) in i.operands.iter().enumerate() {
            if x == 0 && first_is_dest {
                dest_names(o, &mut dests);
                // A partial write (vector component) or an address keeps the operand read.
                if !matches!(
                    o,
                    Operand::Name { comp: None, .. }
                        | Operand::Vec(..)
                        | Operand::Pair(..)
                        | Operand::Sink(_)
                ) {
                    names_in(o, &mut uses);
                }
                if let Operand::Vec(v, _) = o {
                    for e in v {
                        if !matches!(e, Operand::Name { comp: None, .. } | Operand::Sink(_)) {
                            names_in(e, &mut uses);
                        }
                    }
                }
            } else {
                names_in(o, &mut uses);
            }
        }
        // Anything in the first operand may be written (counts against constness).
        let mut maybe = Vec::new();
        if let Some(o) = i.operands.first() {
            if !matches!(o, Operand::Addr(_) | Operand::AddrList(..)) {
                names_in(o, &mut maybe);
            }
        }
        for d in maybe {
            *defs_count.entry(d).or_default() += 1;
        }
        if i.guard.is_none() && dests.len() == 1 && remat_opcode(i) {
            pure_def.insert(dests[0], (k, uses.clone()));
        }
        // `mov rX, imm` with a single definition: a constant.
        if op == "mov" && i.guard.is_none() && dests.len() == 1 {
            if let Some(Operand::Imm(e)) = i.operands.get(1) {
                if !matches!(e, Expr::F32(..) | Expr::F64(..)) {
                    if let Some(c) = crate::syntax::consteval::eval(e) {
                        consts.insert(dests[0], c.bits);
                    }
                }
            }
        }
        let mut u: Vec<u32> = uses
            .iter()
            .filter_map(|n| id_of(n, &mut ids, &mut names))
            .collect();
        let mut kl: Vec<u32> = if i.guard.is_none() {
            dests
                .iter()
                .filter_map(|n| id_of(n, &mut ids, &mut names))
                .collect()
        } else {
            dests.iter().for_each(|n| {
                id_of(n, &mut ids, &mut names);
            });
            Vec::new()
        };
        if matches!(op, "addc" | "subc" | "madc") {
            u.push(cc_id);
        }
        if i.mods.iter().any(|m| m.spelling() == ".cc")
            && i.guard.is_none()
            && !matches!(op, "addc" | "subc" | "madc")
        {
            kl.push(cc_id);
        }
        flat.nodes[k].uses = u;
        flat.nodes[k].kills = kl;
    }
    consts.retain(|n, _| defs_count.get(n) == Some(&1));
    // Rematerializable: one definition, pure, reading only non-registers (special registers,
    // symbols, parameters) and rematerializable registers.
    pure_def.retain(|n, _| defs_count.get(n) == Some(&1));
    loop {
        let drop: Vec<&'a str> = pure_def
            .iter()
            .filter(|(_, (_, ops))| {
                ops.iter().any(|o| {
                    if top.contains(o) {
                        !pure_def.contains_key(o)
                    } else {
                        // Non-registers: clocks and timers change.
                        let s = o.trim_start_matches('%');
                        s.starts_with("clock")
                            || s.starts_with("globaltimer")
                            || s.starts_with("pm")
                    }
                })
            })
            .map(|(n, _)| *n)
            .collect();
        if drop.is_empty() {
            break;
        }
        for n in drop {
            pure_def.remove(n);
        }
    }

    // Successors.
    let resolve = |scope: usize,
                   l: &str,
                   scopes: &Vec<(Option<usize>, HashMap<&'a str, usize>)>|
     -> Option<usize> {
        let mut s = Some(scope);
        while let Some(k) = s {
            if let Some(&at) = scopes[k].1.get(l) {
                return Some(at);
            }
            s = scopes[k].0;
        }
        None
    };
    let mut targets: HashMap<usize, Vec<usize>> = HashMap::new();
    for (at, scope, labels) in &flat.branches {
        let mut t = Vec::new();
        for l in labels {
            match resolve(*scope, l, &flat.scopes) {
                Some(x) => t.push(x),
                None => return Err(format!("unknown label `{l}`")),
            }
        }
        targets.insert(*at, t);
    }
    for k in 0..nn {
        let i = flat.nodes[k].ins;
        let op = i.opcode.spelling();
        let guarded = i.guard.is_some();
        let mut s = Vec::new();
        match op {
            "bra" | "brx" => {
                s.extend(targets.get(&k).cloned().unwrap_or_default());
                if guarded {
                    s.push(k + 1);
                }
            }
            "ret" | "exit" | "trap" => {
                if guarded {
                    s.push(k + 1);
                }
            }
            _ => s.push(k + 1),
        }
        s.retain(|&x| x < nn);
        flat.nodes[k].succ = s;
    }

    // Liveness (backward, bit sets).
    let nr = names.len();
    let words = nr.div_ceil(64).max(1);
    let mut live_in = vec![0u64; nn * words];
    let mut live_out = vec![0u64; nn * words];
    let mut changed = true;
    while changed {
        changed = false;
        for k in (0..nn).rev() {
            let mut out = vec![0u64; words];
            for &s in &flat.nodes[k].succ {
                for w in 0..words {
                    out[w] |= live_in[s * words + w];
                }
            }
            let mut inn = out.clone();
            for &x in &flat.nodes[k].kills {
                inn[x as usize / 64] &= !(1u64 << (x % 64));
            }
            for &x in &flat.nodes[k].uses {
                inn[x as usize / 64] |= 1u64 << (x % 64);
            }
            if inn[..] != live_in[k * words..(k + 1) * words] {
                live_in[k * words..(k + 1) * words].copy_from_slice(&inn);
                changed = true;
            }
            live_out[k * words..(k + 1) * words].copy_from_slice(&out);
        }
    }

    let mut stops = Vec::new();
    let mut stop_of = HashMap::new();
    for k in 0..nn {
        let n = &flat.nodes[k];
        if !is_stop(n.ins.opcode.spelling()) {
            continue;
        }
        let mut set = live_out[k * words..(k + 1) * words].to_vec();
        for &x in &n.kills {
            set[x as usize / 64] &= !(1u64 << (x % 64));
        }
        if set[0] & 1 != 0 {
            return Err("the carry flag is live across a barrier or warp operation".to_string());
        }
        let mut saved = Vec::new();
        let mut want: Vec<&'a str> = Vec::new();
        for (x, name) in names.iter().enumerate().skip(1) {
            if set[x / 64] & (1u64 << (x % 64)) != 0 {
                if pure_def.contains_key(name) {
                    want.push(name);
                } else {
                    saved.push(*name);
                }
            }
        }
        // The definitions of those registers and of the registers they read, in order.
        let mut need: std::collections::BTreeSet<usize> = std::collections::BTreeSet::new();
        while let Some(r) = want.pop() {
            let (at, ops) = &pure_def[r];
            if need.insert(*at) {
                want.extend(ops.iter().copied().filter(|o| pure_def.contains_key(o)));
            }
        }
        stops.push(StopSite {
            ins: n.ins,
            node: node_id(k),
            saved,
            remat: need.into_iter().map(node_id).collect(),
        });
        stop_of.insert(node_id(k), stops.len() as u32);
    }
    if stops.len() > 8000 {
        return Err(format!("{} barriers and warp operations", stops.len()));
    }
    // Regions: start node by region key (0: the start, j: after unguarded stop j).
    let mut regions: Vec<(u32, usize)> = vec![(0, 0)];
    for k in 0..nn {
        let i = flat.nodes[k].ins;
        if let Some(&j) = stop_of.get(&node_id(k)) {
            if i.guard.is_none() {
                regions.push((j, k + 1));
            }
        }
    }
    let stop_at = |k: usize| stop_of.get(&node_id(k)).copied();
    let mut probes: HashMap<u32, NodeId> = HashMap::new();
    let mut must_stop = HashMap::new();
    let mut empty_paths = HashMap::new();
    let mut analytic = HashMap::new();
    let mut lanes = HashMap::new();
    let mut probe_regs = HashMap::new();
    let mut exit_paths = HashMap::new();
    let kernel_facts = tidrange::facts(f, &all_ins(&flat), all_succ(&flat));
    let unodes: Vec<uniform::UNode> = flat
        .nodes
        .iter()
        .map(|n| uniform::UNode {
            ins: n.ins,
            succ: &n.succ,
        })
        .collect();
    let kernel_params: HashSet<&str> = f.params.iter().map(|p| p.name).collect();
    let divergent = uniform::divergent(&unodes, &|n| top.contains(n), &|n| {
        kernel_params.contains(n)
    });
    let mut uniform_probes = HashSet::new();
    let mut exit_then = HashMap::new();
    let mut sizes = HashMap::new();
    let mut finish = HashSet::new();
    // Stops reachable from node `from` before the next stop, whether a thread can finish, and
    // how many instructions it can run on the way.
    let outcome = |from: usize| {
        let mut seen_nodes = vec![false; nn];
        let mut work = vec![from];
        let mut reach = std::collections::BTreeSet::new();
        let mut finishes = false;
        while let Some(k) = work.pop() {
            if k >= nn {
                finishes = true;
                continue;
            }
            if std::mem::replace(&mut seen_nodes[k], true) {
                continue;
            }
            let i = flat.nodes[k].ins;
            let op = i.opcode.spelling();
            if matches!(op, "ret" | "exit") {
                finishes = true;
            }
            if flat.nodes[k].succ.is_empty() && !matches!(op, "trap") {
                finishes = true;
            }
            if let Some(j) = stop_at(k) {
                reach.insert(j);
                if i.guard.is_none() {
                    continue;
                }
            }
            work.extend(flat.nodes[k].succ.iter().copied());
        }
        let mut shape = RegionShape::default();
        for (k, _) in seen_nodes.iter().enumerate().filter(|(_, &s)| s) {
            let i = flat.nodes[k].ins;
            shape.len += 1;
            shape.branches |= i.guard.is_some() && i.opcode.spelling() == "bra";
        }
        (reach, finishes, shape)
    };
    for &(key, start) in &regions {
        if start >= nn {
            continue;
        }
        let (reach, finishes, shape) = outcome(start);
        sizes.insert(key, shape);
        if finishes && reach.is_empty() {
            finish.insert(key);
        }
        let must = (!finishes && reach.len() == 1).then(|| *reach.iter().next().unwrap());
        if let Some(j) = must {
            must_stop.insert(key, j);
        }
        if let Some(b) = find_probe(&flat, start) {
            probes.insert(key, node_id(b));
            if flat.nodes[b]
                .ins
                .guard
                .is_some_and(|g| top.contains(g.pred) && !divergent.contains(g.pred))
            {
                uniform_probes.insert(key);
            }
            let uniform = |n: &str| top.contains(n) && !divergent.contains(n);
            let prefix = region_ins(&flat, start, b);
            if let Some((r, reg)) = tidrange::range(&kernel_facts, &prefix, start, &uniform) {
                analytic.insert(key, r);
                if let Some(reg) = reg {
                    probe_regs.insert(key, reg);
                }
            }
            if let Some(r) = tidrange::lanes(&kernel_facts, &region_ins(&flat, start, b), start) {
                lanes.insert(key, r);
            }
            // A direction that goes straight to an unguarded `ret`/`exit` (the code before
            // the branch has no side effects): those threads just finish.
            let is_exit = |k: Option<usize>| {
                k.is_some_and(|k| {
                    k < nn
                        && flat.nodes[k].ins.guard.is_none()
                        && matches!(flat.nodes[k].ins.opcode.spelling(), "ret" | "exit")
                })
            };
            let target = targets.get(&b).and_then(|t| t.first().copied());
            let exits = (is_exit(target), is_exit(Some(b + 1)));
            if exits.0 || exits.1 {
                exit_paths.insert(key, exits);
                // The other threads' one stop, when they all reach the same one.
                let other = if exits.0 { Some(b + 1) } else { target };
                if let (Some(o), false) = (other, exits.0 && exits.1) {
                    let (r, fin, _) = outcome(o);
                    if !fin && r.len() == 1 {
                        exit_then.insert(key, *r.iter().next().unwrap());
                    }
                }
            }
            // Threads that skip the round neither run the code before the branch nor store
            // the stop's operands: only a barrier with constant operands after a prefix
            // that defines nothing the barrier keeps can be skipped.
            let skippable = |j: u32| {
                let site = &stops[j as usize - 1];
                let op = site.ins.opcode.spelling();
                let bar = matches!(op, "bar" | "barrier")
                    && !site.ins.mods.iter().any(|m| m.spelling() == ".red")
                    && site
                        .ins
                        .operands
                        .iter()
                        .all(|o| matches!(o, Operand::Imm(_)));
                let mut defs = Vec::new();
                for n in &flat.nodes[start..b] {
                    if let Some(o) = n.ins.operands.first() {
                        if !matches!(o, Operand::Addr(_) | Operand::AddrList(..)) {
                            names_in(o, &mut defs);
                        }
                    }
                }
                bar && !defs.iter().any(|d| site.saved.contains(d))
            };
            if let Some(j) = must.filter(|&j| skippable(j)) {
                let is_j = |k: Option<usize>| {
                    k.is_some_and(|k| {
                        k < nn && stop_at(k) == Some(j) && flat.nodes[k].ins.guard.is_none()
                    })
                };
                let target = targets.get(&b).and_then(|t| t.first().copied());
                empty_paths.insert(key, (is_j(target), is_j(Some(b + 1))));
            }
        }
    }
    Ok(Plan {
        stops,
        stop_of,
        consts,
        has_locals: flat.has_locals,
        probes,
        must_stop,
        empty_paths,
        analytic,
        probe_regs,
        exit_paths,
        exit_then,
        lanes,
        uniform_probes,
        sizes,
        finish,
        yields: HashMap::new(),
    })
}

/// Whether `i` (unguarded, one destination) may be run again to recompute its destination:
/// pure arithmetic, moves, conversions and parameter loads.
fn remat_opcode(i: &Instruction) -> bool {
    let op = i.opcode.spelling();
    let mods = || i.mods.iter().map(|m| m.spelling());
    match op {
        "ld" => mods().any(|m| m == ".param") && !mods().any(|m| m == ".volatile"),
        "add" | "sub" | "mul" | "mad" | "mul24" | "mad24" | "div" | "rem" | "abs" | "neg"
        | "min" | "max" | "sad" | "and" | "or" | "xor" | "not" | "cnot" | "shl" | "shr"
        | "setp" | "selp" | "set" | "slct" | "mov" | "fma" | "cvt" | "cvta" | "bfe" | "bfi"
        | "prmt" | "lop3" | "shf" | "bfind" | "brev" | "clz" | "popc" | "copysign" => {
            !mods().any(|m| m == ".cc") && !matches!(i.operands.first(), Some(Operand::Pair(..)))
        }
        _ => false,
    }
}

/// The probe branch of the region starting at node `start` (see `Plan::probes`): the first
/// instruction that is not side-effect-free straight-line code, if it is a guarded `bra` and
/// no label lies from `start` to it.
fn find_probe(flat: &Flat<'_, '_>, start: usize) -> Option<usize> {
    let first_label = flat
        .scopes
        .iter()
        .flat_map(|(_, m)| m.values().copied())
        .filter(|&x| x >= start)
        .min()
        .unwrap_or(usize::MAX);
    for (k, n) in flat.nodes.iter().enumerate().skip(start) {
        if k >= first_label {
            return None;
        }
        let i = n.ins;
        let op = i.opcode.spelling();
        if op == "bra" {
            return i.guard.is_some().then_some(k);
        }
        let mods = || i.mods.iter().map(|m| m.spelling());
        let pure = match op {
            // Only memory no thread of the launch writes.
            "ld" | "ldu" => {
                (op == "ldu" || mods().any(|m| matches!(m, ".param" | ".const" | ".nc")))
                    && !mods().any(|m| matches!(m, ".volatile" | ".relaxed" | ".acquire" | ".mmio"))
            }
            "add" | "sub" | "mul" | "mad" | "mul24" | "mad24" | "div" | "rem" | "abs" | "neg"
            | "min" | "max" | "sad" | "and" | "or" | "xor" | "not" | "cnot" | "shl" | "shr"
            | "setp" | "selp" | "set" | "slct" | "mov" | "fma" | "rcp" | "sqrt" | "rsqrt"
            | "cvt" | "cvta" | "bfe" | "bfi" | "prmt" | "lop3" | "shf" | "bfind" | "brev"
            | "clz" | "popc" | "copysign" | "testp" => !mods().any(|m| m == ".cc"),
            _ => false,
        };
        let mut names = Vec::new();
        i.operands.iter().for_each(|o| names_in(o, &mut names));
        let timer = names.iter().any(|n| {
            let n = n.trim_start_matches('%');
            n.starts_with("clock") || n.starts_with("globaltimer") || n.starts_with("pm")
        });
        if !pure || timer {
            return None;
        }
    }
    None
}

fn collect_branch_targets<'a>(b: &ast::Block<'a>, out: &mut HashMap<&'a str, Vec<&'a str>>) {
    for s in &b.stmts {
        match s {
            Statement::BranchTargets { name, targets, .. } => {
                out.insert(name, targets.clone());
            }
            Statement::Block(b) => collect_branch_targets(b, out),
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The plan of the first kernel of a PTX file of the repository (`/tests/...`).
    fn plan_of_file(path: &str, check: impl FnOnce(Result<Plan, String>)) {
        let full = format!("{}{path}", env!("CARGO_MANIFEST_DIR"));
        let src = std::fs::read_to_string(&full).unwrap_or_else(|e| panic!("{full}: {e}"));
        plan_of(&src, check);
    }

    fn plan_of(src: &str, check: impl FnOnce(Result<Plan, String>)) {
        let (m, d) = crate::syntax::parse(src);
        assert!(d.is_empty(), "{d:?}");
        let f = m
            .items
            .iter()
            .find_map(|i| match i {
                Item::Function(f) if f.kind == ast::FnKind::Entry => Some(&**f),
                _ => None,
            })
            .unwrap();
        check(analyse(&m, f));
    }

    /// A kernel whose region after its barrier starts with a probe branch on `%p1`, which
    /// compares `%r2`; `defs` defines `%r2` (with `%r5` = `%tid.x`, `%r1` a parameter).
    /// A kernel with `%r1` a parameter, `%r5` = `%tid.x`, `%r2` = 0, then `body` from label
    /// `L1` on.
    fn loop_kernel(body: &str) -> String {
        format!(
            ".version 7.0
.target sm_80
.address_size 64
.visible .entry k(.param .u32 n)
{{
  .reg .pred %p<3>;
  .reg .b32 %r<8>;
  ld.param.u32 %r1, [n];
  mov.u32 %r5, %tid.x;
  mov.u32 %r2, 0;
L1:
{body}
  ret;
}}"
        )
    }

    fn probe_kernel(defs: &str) -> String {
        loop_kernel(&format!(
            "{defs}\n  bar.sync 0;\n  setp.lt.s32 %p1, %r2, %r1;\n  @%p1 bra L1;"
        ))
    }

    fn uniform_probe(defs: &str) -> bool {
        let mut u = None;
        plan_of(&probe_kernel(defs), |p| {
            let p = p.unwrap();
            // The barrier is the last stop.
            let key = p.stops.len() as u32;
            assert!(
                p.probes.contains_key(&key),
                "the region after the barrier probes"
            );
            u = Some(p.uniform_probes.contains(&key));
        });
        u.unwrap()
    }

    #[test]
    fn uniformity_of_probe_branches() {
        // A loop counter stepped the same way in every thread.
        assert!(uniform_probe("  add.s32 %r2, %r2, 1;"));
        assert!(uniform_probe("  add.s32 %r2, %r2, %r1;"));
        // Data dependence on %tid.x, on a load of writable memory, on a warp operation.
        assert!(!uniform_probe("  add.s32 %r2, %r2, %r5;"));
        assert!(!uniform_probe("  ld.shared.u32 %r2, [0];"));
        assert!(!uniform_probe("  atom.shared.add.u32 %r2, [0], 1;"));
        assert!(!uniform_probe("  shfl.sync.idx.b32 %r2, %r1, 0, 31, -1;"));
        // Loads of memory no thread writes are uniform when their address is; `.param`
        // only for the kernel's parameters (not a callee's return value).
        assert!(uniform_probe("  ld.param.u32 %r2, [n];"));
        assert!(!uniform_probe(
            "  {\n  .param .b32 retval0;\n  ld.param.u32 %r2, [retval0];\n  }"
        ));
        // A definition under a branch on %tid.x: threads meet with different values.
        assert!(!uniform_probe(
            "  setp.lt.u32 %p2, %r5, 4;\n  @%p2 bra SKIP;\n  add.s32 %r2, %r2, 1;\nSKIP:"
        ));
        // The same under a uniform branch, and a guard on %tid.x.
        assert!(uniform_probe(
            "  setp.lt.u32 %p2, %r1, 4;\n  @%p2 bra SKIP;\n  add.s32 %r2, %r2, 1;\nSKIP:"
        ));
        assert!(!uniform_probe(
            "  setp.lt.u32 %p2, %r5, 4;\n  @%p2 add.s32 %r2, %r2, 1;"
        ));
        // After the divergent part joined, a uniform redefinition is uniform again only when
        // it is the register's single definition; here %r2 has several.
        assert!(!uniform_probe(
            "  setp.lt.u32 %p2, %r5, 4;\n  @%p2 bra SKIP;\n  add.s32 %r2, %r2, 1;\nSKIP:\n  mov.u32 %r2, 3;"
        ));
    }

    /// `Plan::lanes` of the region after a barrier that starts with `cond` and `@%p1 bra` (or
    /// `@!%p1 bra` when `negated`); `%r5` is `%tid.x` and `def` may define `%r2` from it.
    fn lanes_of(def: &str, cond: &str, negated: bool) -> Option<tidrange::TidLanes> {
        let bang = if negated { "!" } else { "" };
        let src = format!(
            ".version 7.0
.target sm_80
.address_size 64
.visible .entry k()
{{
  .reg .pred %p<3>;
  .reg .b32 %r<8>;
  mov.u32 %r5, %tid.x;
  {def}
  bar.sync 0;
  {cond}
  @{bang}%p1 bra L;
  mov.u32 %r3, 1;
L:
  bar.sync 0;
  ret;
}}"
        );
        let mut out = None;
        plan_of(&src, |p| out = p.unwrap().lanes.get(&1).copied());
        out
    }

    #[test]
    fn tid_intervals_bounded_by_uniform_registers() {
        let kernel = |step: &str| {
            loop_kernel(&format!(
                "{step}
  bar.sync 0;
  setp.lt.s32 %p1, %r5, %r2;
  @%p1 bra L2;
  mov.u32 %r3, 1;
L2:
  bar.sync 0;
  setp.lt.s32 %p2, %r2, %r1;
  @%p2 bra L1;"
            ))
        };
        // %tid.x < %r2 with %r2 a loop counter: an interval bounded by %r2.
        plan_of(&kernel("  add.s32 %r2, %r2, 1;"), |p| {
            let p = p.unwrap();
            assert_eq!(p.probe_regs.get(&1), Some(&"%r2"));
            assert!(p.analytic.get(&1).is_some_and(|t| t.reg && t.signed));
        });
        // A counter that differs between threads bounds nothing.
        plan_of(&kernel("  add.s32 %r2, %r2, %r5;"), |p| {
            let p = p.unwrap();
            assert_eq!(p.probe_regs.get(&1), None);
            assert_eq!(p.analytic.get(&1), None);
        });
    }

    #[test]
    fn tid_plus_uniform_intervals() {
        // After the barrier: `%r6 < n` with %r6 = %tid.x + something equal in every thread.
        let plus = |defs: &str| {
            let src = format!(
                ".version 7.0\n.target sm_80\n.address_size 64\n.visible .entry k(.param .u32 n)\n{{
  .reg .pred %p<3>;
  .reg .b32 %r<8>;
  ld.param.u32 %r1, [n];
  mov.u32 %r5, %tid.x;
  mov.u32 %r3, %ctaid.x;
{defs}
  bar.sync 0;
  setp.lt.s32 %p1, %r6, %r1;
  @%p1 bra L2;
  mov.u32 %r7, 1;
L2:
  bar.sync 0;
  ret;
}}"
            );
            let mut got = None;
            plan_of(&src, |p| {
                let p = p.unwrap();
                got = Some((
                    p.analytic.get(&1).is_some_and(|t| t.plus && t.signed),
                    p.probe_regs.get(&1).copied() == Some("%r6"),
                ));
            });
            got.unwrap()
        };
        let yes = (true, true);
        assert_eq!(
            plus("  shl.b32 %r4, %r3, 8;\n  add.s32 %r6, %r5, %r4;"),
            yes
        );
        assert_eq!(plus("  mad.lo.s32 %r6, %r3, 96, %r5;"), yes);
        assert_eq!(plus("  add.s32 %r6, %r1, %r5;"), yes);
        // Not equal in every thread (the thread index twice), or a scaled thread index.
        let no = (false, false);
        assert_eq!(plus("  add.s32 %r6, %r5, %r5;"), no);
        assert_eq!(plus("  mad.lo.s32 %r6, %r5, 2, %r3;"), no);
    }

    #[test]
    fn exit_paths_of_probe_branches() {
        // After the barrier: `if (tid >= r1) return;` taken straight to `ret`.
        let src = loop_kernel(
            "  bar.sync 0;
  setp.ge.u32 %p1, %r5, %r1;
  @%p1 bra DONE;
  add.s32 %r2, %r2, 1;
  bar.sync 0;
  bra.uni L1;
DONE:",
        );
        plan_of(&src, |p| {
            let p = p.unwrap();
            assert_eq!(p.exit_paths.get(&1), Some(&(true, false)));
            assert_eq!(p.exit_paths.get(&2), None);
        });
    }

    #[test]
    fn lane_probes() {
        let l = |modulus, residue, taken| {
            Some(tidrange::TidLanes {
                modulus,
                residue,
                taken,
            })
        };
        let and31 = "and.b32 %r2, %r5, 31;";
        assert_eq!(
            lanes_of(and31, "setp.eq.s32 %p1, %r2, 0;", false),
            l(32, 0, true)
        );
        assert_eq!(
            lanes_of(and31, "setp.ne.s32 %p1, %r2, 0;", false),
            l(32, 0, false)
        );
        assert_eq!(
            lanes_of(and31, "setp.ne.u32 %p1, 7, %r2;", true),
            l(32, 7, true)
        );
        let rem8 = "rem.u32 %r2, %r5, 8;";
        assert_eq!(
            lanes_of(rem8, "setp.eq.u32 %p1, %r2, 3;", true),
            l(8, 3, false)
        );
        // Not a power of two, a residue the mask cannot give, an ordering comparison.
        assert_eq!(
            lanes_of("and.b32 %r2, %r5, 30;", "setp.eq.s32 %p1, %r2, 0;", false),
            None
        );
        assert_eq!(
            lanes_of("rem.u32 %r2, %r5, 12;", "setp.eq.s32 %p1, %r2, 0;", false),
            None
        );
        assert_eq!(lanes_of(and31, "setp.eq.s32 %p1, %r2, 32;", false), None);
        assert_eq!(lanes_of(and31, "setp.lt.s32 %p1, %r2, 1;", false), None);
    }

    #[test]
    fn block_reduce_saves_what_crosses_barriers() {
        plan_of_file("/tests/corpus/nvrtc/shared_sync.ptx", |p| {
            let p = p.unwrap();
            assert_eq!(p.stops.len(), 2);
            // Thread ids, addresses and parameters are recomputed; only the loop's stride
            // crosses the barrier in the loop.
            assert!(p.stops[0].saved.is_empty(), "{:?}", p.stops[0].saved);
            assert!(!p.stops[0].remat.is_empty());
            assert_eq!(p.stops[1].saved, ["%r14"]);
        });
    }

    #[test]
    fn constants_are_not_saved() {
        plan_of_file("/benches/suite/kernels/reduce_warp.ptx", |p| {
            let p = p.unwrap();
            assert_eq!(p.stops.len(), 11);
            assert_eq!(p.consts.get("%r12"), Some(&u64::MAX));
            assert!(p.stops.iter().all(|s| !s.saved.contains(&"%r10")));
        });
    }

    #[test]
    fn thread_index_branches_get_their_interval_without_a_probe_pass() {
        plan_of_file("/benches/suite/kernels/reduce_block.ptx", |p| {
            let p = p.unwrap();
            // After barrier 1: `setp.gt.u32 %p2, %r2, 127; @%p2 bra` with %r2 = %tid.x: taken
            // by 128 and up.
            assert_eq!(
                p.analytic.get(&1),
                Some(&TidRange {
                    lo: 128,
                    hi: 1 << 40,
                    negated: false,
                    param: None,
                    signed: false,
                    base: false,
                    reg: false,
                    plus: false,
                })
            );
            // `setp.ne.s32 %p9, %r2, 0`: taken by 1 and up.
            assert_eq!(
                p.analytic.get(&8),
                Some(&TidRange {
                    lo: 1,
                    hi: 1 << 40,
                    negated: false,
                    param: None,
                    signed: true,
                    base: false,
                    reg: false,
                    plus: false,
                })
            );
            // The first region's branch: `setp.ge.u32 %p1, %r3, %r5` with
            // %r3 = (%ctaid.x << 8) + %tid.x and %r5 the parameter n: `%tid.x + U` with the
            // uniform %r6 = %ctaid.x << 8, taken from n - U on; %r3 is read off the first
            // thread.
            assert_eq!(
                p.analytic.get(&0),
                Some(&TidRange {
                    lo: 0,
                    hi: 1 << 40,
                    negated: false,
                    param: Some(2),
                    signed: false,
                    base: false,
                    reg: false,
                    plus: true,
                })
            );
            assert_eq!(p.probe_regs.get(&0), Some(&"%r3"));
        });
        plan_of_file("/benches/suite/kernels/reduce_warp.ptx", |p| {
            let p = p.unwrap();
            // After the barrier (stop 6): `setp.ne.s32 %p8, %r2, 0` with %r2 = %tid.x >> 5:
            // every warp but the first; `lane != 0` (%tid.x & 31) is no interval.
            assert_eq!(
                p.analytic.get(&6),
                Some(&TidRange {
                    lo: 32,
                    hi: 1 << 40,
                    negated: false,
                    param: None,
                    signed: true,
                    base: false,
                    reg: false,
                    plus: false,
                })
            );
            assert_eq!(p.analytic.get(&5), None);
            assert!(p.probes.contains_key(&5));
            // `if (w != 0) return;` after the barrier: the other threads all reach the next
            // shuffle (stop 7), which `K.fis` goes on with; before it, lane 0 alone reaches
            // the barrier and the other lanes too: no exit path.
            assert_eq!(p.exit_paths.get(&6), Some(&(true, false)));
            assert_eq!(p.exit_then.get(&6), Some(&7));
            assert_eq!(p.exit_then.get(&5), None);
            // After warp 0's last shuffle: `@%p7 bra` (lane != 0 -> ret) with %p7 set before
            // the first shuffle and kept: lane 0 of each warp works, the other lanes finish.
            assert_eq!(
                p.lanes.get(&11),
                Some(&tidrange::TidLanes {
                    modulus: 32,
                    residue: 0,
                    taken: false,
                })
            );
            assert_eq!(p.exit_paths.get(&11), Some(&(true, false)));
            // The regions after each warp's last shuffle, which join their warp chains
            // (`warp_chains`): `add; @%p7 bra; ...; st.shared; bar.sync` and `add; @%p7 bra;
            // ...; st.global; ret`; only the second finishes.
            let shape = |k| p.sizes.get(&k).copied().unwrap_or_default();
            assert!(shape(5).branches && shape(5).len <= 12, "{:?}", shape(5));
            assert!(shape(11).branches && shape(11).len <= 12, "{:?}", shape(11));
            assert_eq!(p.must_stop.get(&5), Some(&6));
            assert!(p.finish.contains(&11));
            assert!(!p.finish.contains(&5) && !p.finish.contains(&6) && !p.finish.contains(&0));
            // Between two shuffles: straight-line.
            assert!(!shape(2).branches && shape(2).len < 8, "{:?}", shape(2));
        });
    }

    #[test]
    fn global_index_bound_checks_get_a_run_time_interval() {
        plan_of_file("/benches/suite/kernels/vecadd.ptx", |p| {
            let p = p.unwrap();
            // `setp.ge.s32 %p1, %r1, %r2` with %r1 = %ctaid.x * %ntid.x + %tid.x and %r2 the
            // parameter n: taken from n - ctaid * ntid on.
            assert_eq!(
                p.analytic.get(&0),
                Some(&TidRange {
                    lo: 0,
                    hi: 1 << 40,
                    negated: false,
                    param: Some(3),
                    signed: true,
                    base: true,
                    reg: false,
                    plus: false,
                })
            );
        });
    }
}
