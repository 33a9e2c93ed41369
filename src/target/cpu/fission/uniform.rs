//! Uniformity ("divergence") analysis of a kernel body for the thread-loop code: which
//! registers hold the same value in every thread of a CTA that reaches the same point, and
//! so which branches every thread takes the same way. A probe branch on a uniform predicate
//! needs the condition of one thread, not a probing pass over the CTA (`Plan::uniform_probes`).
//!
//! The analysis is optimistic and propagates divergence to a fixed point:
//! - sources: special registers that differ between threads (`%tid`, `%laneid`, clocks, …),
//!   any instruction other than pure arithmetic and loads of memory no thread writes
//!   (`ld.param`, `ld.const`, `ld.global.nc`, `ldu`) — loads of writable memory, atomics,
//!   warp operations and call results are divergent;
//! - data: a definition with a divergent operand or guard is divergent;
//! - control: a register with a definition inside the influence region of a divergent branch
//!   (the nodes reachable from the branch before its immediate post-dominator) is divergent
//!   when it has more than one definition, because the threads that took different sides
//!   meet again with different definitions in effect. A register with a single unguarded
//!   definition from uniform operands holds the same value wherever a thread reads it.
//!
//! Registers declared in nested blocks and names the analysis does not know count as
//! divergent.

use std::collections::{HashMap, HashSet};

use crate::syntax::ast::{Instruction, Operand};

/// Special registers equal in every thread of a CTA.
const UNIFORM_SPECIALS: &[&str] = &[
    "%ntid",
    "%nctaid",
    "%ctaid",
    "%gridid",
    "%nwarpid",
    "%nsmid",
    "%clusterid",
    "%nclusterid",
    "%cluster_ctaid",
    "%cluster_nctaid",
    "%cluster_ctarank",
    "%cluster_nctarank",
    "%is_explicit_cluster",
    "%dynamic_smem_size",
    "%total_smem_size",
    "%aggr_smem_size",
];

/// One instruction of the flattened body and its successors (node indices).
pub(super) struct UNode<'x, 'a> {
    pub ins: &'x Instruction<'a>,
    pub succ: &'x [usize],
}

/// The registers (names) that may differ between the threads of a CTA at the same point.
/// `is_reg`: whether a name is a register of the kernel's top-level block.
pub(super) fn divergent<'a>(
    nodes: &[UNode<'_, 'a>],
    is_reg: &dyn Fn(&str) -> bool,
    is_kernel_param: &dyn Fn(&str) -> bool,
) -> HashSet<&'a str> {
    let nn = nodes.len();
    // Per node: the registers it may write and the names it reads.
    let mut writes: Vec<Vec<&'a str>> = Vec::with_capacity(nn);
    let mut reads: Vec<Vec<&'a str>> = Vec::with_capacity(nn);
    let mut ndefs: HashMap<&'a str, u32> = HashMap::new();
    for n in nodes {
        let (w, r) = operands_of(n.ins);
        for &d in &w {
            *ndefs.entry(d).or_default() += 1;
        }
        writes.push(w);
        reads.push(r);
    }
    let ipdom = post_dominators(nodes);
    let mut div: HashSet<&'a str> = HashSet::new();
    // Nodes inside the influence region of some divergent branch.
    let mut influenced = vec![false; nn];
    let mut branch_done = vec![false; nn];
    let is_div = |name: &str, div: &HashSet<&'a str>| -> bool {
        if is_reg(name) {
            div.contains(name)
        } else if name.starts_with('%') {
            !UNIFORM_SPECIALS.contains(&name)
        } else {
            false // symbols: addresses of variables, kernel parameters
        }
    };
    loop {
        let mut changed = false;
        for k in 0..nn {
            let i = nodes[k].ins;
            let guard_div = i.guard.is_some_and(|g| is_div(g.pred, &div));
            let data_div = guard_div || reads[k].iter().any(|n| is_div(n, &div));
            let source = !uniform_opcode(i, is_kernel_param);
            for &d in &writes[k] {
                let ctrl = influenced[k] && ndefs.get(d).copied().unwrap_or(0) > 1;
                if (source || data_div || ctrl) && div.insert(d) {
                    changed = true;
                }
            }
            // A branch on a divergent condition: mark its influence region once.
            let op = i.opcode.spelling();
            if !branch_done[k] && matches!(op, "bra" | "brx") && data_div {
                branch_done[k] = true;
                changed = true;
                let stop = ipdom[k];
                let mut work: Vec<usize> = nodes[k].succ.to_vec();
                let mut seen = vec![false; nn];
                while let Some(x) = work.pop() {
                    if Some(x) == stop || std::mem::replace(&mut seen[x], true) {
                        continue;
                    }
                    influenced[x] = true;
                    work.extend(nodes[x].succ.iter().copied());
                }
            }
        }
        if !changed {
            return div;
        }
    }
}

/// The registers an instruction may write and the names it reads (guard excluded).
fn operands_of<'a>(i: &Instruction<'a>) -> (Vec<&'a str>, Vec<&'a str>) {
    let op = i.opcode.spelling();
    let mut w = Vec::new();
    let mut r = Vec::new();
    let reduces = i.mods.iter().any(|m| m.spelling() == ".red");
    let writes_first = match op {
        "bar" | "barrier" => reduces,
        "bra" | "brx" | "ret" | "exit" | "trap" | "st" | "stu" | "red" => false,
        _ => true,
    };
    for (x, o) in i.operands.iter().enumerate() {
        if x == 0 && writes_first && !matches!(o, Operand::Addr(_) | Operand::AddrList(..)) {
            super::analysis::names_in(o, &mut w);
            // A component write keeps the rest of the register: it is read too.
            if !matches!(o, Operand::Name { comp: None, .. }) {
                super::analysis::names_in(o, &mut r);
            }
        } else if !(op == "bra" || (op == "brx" && x == 1) || (op == "call" && x == 1)) {
            super::analysis::names_in(o, &mut r);
        }
    }
    (w, r)
}

/// Whether `i` computes its destinations from its operands alone, the same in every thread
/// given the same operands (pure arithmetic, moves, conversions, loads of memory no thread
/// of the launch writes).
fn uniform_opcode(i: &Instruction, is_kernel_param: &dyn Fn(&str) -> bool) -> bool {
    let op = i.opcode.spelling();
    let mods = || i.mods.iter().map(|m| m.spelling());
    match op {
        "ld" => {
            // `.param` loads of the kernel's own parameters only: the `.param` space of a call
            // holds the callee's return value, which may differ between threads.
            let param = mods().any(|m| m == ".param")
                && matches!(i.operands.get(1), Some(Operand::Addr(a)) if a.base.is_some_and(is_kernel_param));
            (param || mods().any(|m| matches!(m, ".const" | ".nc")))
                && !mods().any(|m| matches!(m, ".volatile" | ".relaxed" | ".acquire" | ".mmio"))
        }
        "ldu" => true,
        "add" | "sub" | "mul" | "mad" | "mul24" | "mad24" | "div" | "rem" | "abs" | "neg"
        | "min" | "max" | "sad" | "and" | "or" | "xor" | "not" | "cnot" | "shl" | "shr"
        | "setp" | "selp" | "set" | "slct" | "mov" | "fma" | "cvt" | "cvta" | "bfe" | "bfi"
        | "prmt" | "lop3" | "shf" | "bfind" | "brev" | "clz" | "popc" | "copysign" | "rcp"
        | "sqrt" | "rsqrt" | "ex2" | "lg2" | "sin" | "cos" | "tanh" | "testp" | "fns" | "bmsk"
        | "szext" | "dp4a" | "dp2a" => !mods().any(|m| m == ".cc"),
        _ => false,
    }
}

/// Immediate post-dominator of every node (`None`: the virtual exit, or no path to an exit),
/// by Cooper, Harvey and Kennedy's iterative algorithm on the reversed graph.
fn post_dominators(nodes: &[UNode]) -> Vec<Option<usize>> {
    let nn = nodes.len();
    let exit = nn;
    let mut preds: Vec<Vec<usize>> = vec![Vec::new(); nn + 1];
    for (k, n) in nodes.iter().enumerate() {
        if n.succ.is_empty() {
            preds[exit].push(k);
        }
        for &s in n.succ {
            preds[s].push(k);
        }
    }
    // Post-order of the reversed graph from the exit (iterative DFS).
    let mut order = Vec::with_capacity(nn + 1);
    let mut visited = vec![false; nn + 1];
    let mut stack = vec![(exit, 0usize)];
    visited[exit] = true;
    while let Some(&mut (v, ref mut at)) = stack.last_mut() {
        if let Some(&p) = preds[v].get(*at) {
            *at += 1;
            if !visited[p] {
                visited[p] = true;
                stack.push((p, 0));
            }
        } else {
            order.push(v);
            stack.pop();
        }
    }
    let mut rank = vec![usize::MAX; nn + 1];
    for (x, &v) in order.iter().enumerate() {
        rank[v] = x;
    }
    let mut idom: Vec<Option<usize>> = vec![None; nn + 1];
    idom[exit] = Some(exit);
    let succs = |v: usize| -> Vec<usize> {
        let mut s = nodes[v].succ.to_vec();
        if s.is_empty() {
            s.push(exit);
        }
        s
    };
    let mut changed = true;
    while changed {
        changed = false;
        for &v in order.iter().rev() {
            if v == exit {
                continue;
            }
            let mut new: Option<usize> = None;
            for s in succs(v) {
                if idom[s].is_none() {
                    continue;
                }
                new = Some(match new {
                    None => s,
                    Some(mut a) => {
                        let mut b = s;
                        while a != b {
                            while rank[a] < rank[b] {
                                a = idom[a].unwrap();
                            }
                            while rank[b] < rank[a] {
                                b = idom[b].unwrap();
                            }
                        }
                        a
                    }
                });
            }
            if new.is_some() && idom[v] != new {
                idom[v] = new;
                changed = true;
            }
        }
    }
    (0..nn).map(|v| idom[v].filter(|&d| d != exit)).collect()
}
