//! Control-flow facts the warp vectorizer needs about one cleaned kernel function (one return
//! block, loops in simplified form): its blocks and edges, dominators, post-dominators, natural
//! loops, and the order in which the linearized warp function visits each loop's body.
//! Irreducible control flow is refused (the caller falls back to another engine).

use std::collections::HashMap;

use llvm_sys::core as c;
use llvm_sys::prelude::*;

/// A natural loop: its header, blocks and enclosing loop.
pub struct Loop {
    pub header: usize,
    pub blocks: Vec<bool>,
    pub parent: Option<usize>,
}

pub struct Cfg {
    pub blocks: Vec<LLVMBasicBlockRef>,
    pub index: HashMap<LLVMBasicBlockRef, usize>,
    pub succ: Vec<Vec<usize>>,
    /// Immediate post-dominator; `blocks.len()` is the virtual exit.
    pub ipdom: Vec<usize>,
    pub loops: Vec<Loop>,
    /// Innermost loop of each block.
    pub loop_of: Vec<Option<usize>>,
    /// Immediate dominator of each block (the entry's is itself).
    pub idom: Vec<Option<usize>>,
}

/// What a loop or the function body is made of, in visiting order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Node {
    Block(usize),
    Loop(usize),
}

/// Dominators by the Cooper-Harvey-Kennedy iteration over a reverse post-order `rpo` of a
/// graph whose predecessors are `pred`; `None` for nodes not reached.
fn dominators(n: usize, root: usize, rpo: &[usize], pred: &[Vec<usize>]) -> Vec<Option<usize>> {
    let mut order = vec![usize::MAX; n];
    for (k, &b) in rpo.iter().enumerate() {
        order[b] = k;
    }
    let mut idom: Vec<Option<usize>> = vec![None; n];
    idom[root] = Some(root);
    let mut changed = true;
    while changed {
        changed = false;
        for &b in rpo.iter().skip(1) {
            let mut new: Option<usize> = None;
            for &p in &pred[b] {
                if idom[p].is_none() {
                    continue;
                }
                new = Some(match new {
                    None => p,
                    Some(mut x) => {
                        let mut y = p;
                        while x != y {
                            while order[x] > order[y] {
                                x = idom[x].unwrap_or(root);
                            }
                            while order[y] > order[x] {
                                y = idom[y].unwrap_or(root);
                            }
                        }
                        x
                    }
                });
            }
            if new.is_some() && idom[b] != new {
                idom[b] = new;
                changed = true;
            }
        }
    }
    idom
}

/// Reverse post-order from `root` following `succ`.
pub(super) fn rpo(n: usize, root: usize, succ: &[Vec<usize>]) -> Vec<usize> {
    let mut seen = vec![false; n];
    let mut post = Vec::with_capacity(n);
    let mut stack = vec![(root, 0usize)];
    seen[root] = true;
    while let Some(&mut (b, ref mut k)) = stack.last_mut() {
        if let Some(&s) = succ[b].get(*k) {
            *k += 1;
            if !seen[s] {
                seen[s] = true;
                stack.push((s, 0));
            }
        } else {
            post.push(b);
            stack.pop();
        }
    }
    post.reverse();
    post
}

fn dominates(idom: &[Option<usize>], a: usize, mut b: usize) -> bool {
    loop {
        if a == b {
            return true;
        }
        match idom[b] {
            Some(p) if p != b => b = p,
            _ => return false,
        }
    }
}

impl Cfg {
    /// The control-flow graph of `f`, or why the vectorizer cannot handle it.
    ///
    /// # Safety
    /// `f` must be a defined function.
    pub unsafe fn new(f: LLVMValueRef) -> Result<Cfg, String> {
        let mut blocks = Vec::new();
        let mut bb = c::LLVMGetFirstBasicBlock(f);
        while !bb.is_null() {
            blocks.push(bb);
            bb = c::LLVMGetNextBasicBlock(bb);
        }
        let n = blocks.len();
        let index: HashMap<_, _> = blocks.iter().enumerate().map(|(i, &b)| (b, i)).collect();
        let mut succ = vec![Vec::new(); n];
        let mut pred = vec![Vec::new(); n];
        for (i, &b) in blocks.iter().enumerate() {
            let t = c::LLVMGetBasicBlockTerminator(b);
            if t.is_null() {
                return Err("a block without terminator".into());
            }
            for k in 0..c::LLVMGetNumSuccessors(t) {
                let s = index[&c::LLVMGetSuccessor(t, k)];
                if !succ[i].contains(&s) {
                    succ[i].push(s);
                    pred[s].push(i);
                }
            }
        }
        let order = rpo(n, 0, &succ);
        if order.len() != n {
            return Err("unreachable blocks".into());
        }
        let idom = dominators(n, 0, &order, &pred);
        // Post-dominators: the reverse graph, rooted at a virtual exit after every block
        // without successors.
        let exit = n;
        let mut rsucc = pred.clone();
        rsucc.push((0..n).filter(|&b| succ[b].is_empty()).collect());
        let mut rpred = succ.clone();
        for &b in &rsucc[exit] {
            rpred[b].push(exit);
        }
        rpred.push(Vec::new());
        let rorder = rpo(n + 1, exit, &rsucc);
        let pdom = dominators(n + 1, exit, &rorder, &rpred);
        let ipdom: Vec<usize> = (0..n).map(|b| pdom[b].unwrap_or(exit)).collect();
        // Natural loops: an edge to a dominator closes one; any other edge that goes back in
        // the reverse post-order makes the graph irreducible.
        let mut pos = vec![0; n];
        for (k, &b) in order.iter().enumerate() {
            pos[b] = k;
        }
        let mut loops: Vec<Loop> = Vec::new();
        let mut by_header: HashMap<usize, usize> = HashMap::new();
        for &b in &order {
            for &s in &succ[b] {
                if pos[s] > pos[b] {
                    continue;
                }
                if !dominates(&idom, s, b) {
                    return Err("irreducible control flow".into());
                }
                let li = *by_header.entry(s).or_insert_with(|| {
                    loops.push(Loop {
                        header: s,
                        blocks: vec![false; n],
                        parent: None,
                    });
                    loops.len() - 1
                });
                let body = &mut loops[li].blocks;
                body[s] = true;
                let mut work = vec![b];
                while let Some(x) = work.pop() {
                    if !body[x] {
                        body[x] = true;
                        work.extend(pred[x].iter().copied());
                    }
                }
            }
        }
        let size = |l: &Loop| l.blocks.iter().filter(|&&x| x).count();
        let sizes: Vec<usize> = loops.iter().map(size).collect();
        for i in 0..loops.len() {
            let h = loops[i].header;
            loops[i].parent = (0..loops.len())
                .filter(|&j| j != i && loops[j].blocks[h] && sizes[j] > sizes[i])
                .min_by_key(|&j| sizes[j]);
        }
        let loop_of = (0..n)
            .map(|b| {
                (0..loops.len())
                    .filter(|&j| loops[j].blocks[b])
                    .min_by_key(|&j| sizes[j])
            })
            .collect();
        Ok(Cfg {
            blocks,
            index,
            succ,
            ipdom,
            loops,
            loop_of,
            idom,
        })
    }

    /// Whether block `a` dominates block `b` (every block dominates itself).
    pub fn dominates(&self, a: usize, b: usize) -> bool {
        dominates(&self.idom, a, b)
    }

    /// The function's instructions, all blocks together.
    ///
    /// # Safety
    /// The blocks are the live function's.
    pub unsafe fn size(&self) -> usize {
        self.blocks
            .iter()
            .map(|&bb| super::ir::instructions(bb).len())
            .sum()
    }

    /// The one block without successors, when it is not the entry and holds `ret void` alone:
    /// the block a copy of the body (`interior.rs`, `coarsen.rs`) can return through too.
    ///
    /// # Safety
    /// The blocks are the live function's.
    pub unsafe fn lone_return(&self) -> Option<usize> {
        let rets: Vec<usize> = (0..self.blocks.len())
            .filter(|&x| self.succ[x].is_empty())
            .collect();
        let [ret] = rets[..] else {
            return None;
        };
        (ret != 0 && super::ir::instructions(self.blocks[ret]).len() == 1).then_some(ret)
    }

    pub fn exit(&self) -> usize {
        self.blocks.len()
    }

    /// Whether block `b` is inside loop `l` (the function body when `None`).
    pub fn in_region(&self, l: Option<usize>, b: usize) -> bool {
        l.is_none_or(|l| self.loops[l].blocks[b])
    }

    /// The node that stands for block `b` in region `r`: the outermost loop inside `r` that
    /// contains `b`, or `b` itself.
    pub fn node_of(&self, r: Option<usize>, b: usize) -> Node {
        let mut l = self.loop_of[b];
        let mut best = None;
        while let Some(x) = l {
            if Some(x) == r {
                break;
            }
            best = Some(x);
            l = self.loops[x].parent;
        }
        match best {
            Some(x) => Node::Loop(x),
            None => Node::Block(b),
        }
    }

    fn entry_of(&self, n: Node) -> usize {
        match n {
            Node::Block(b) => b,
            Node::Loop(l) => self.loops[l].header,
        }
    }

    /// The nodes of region `r` (a loop, or the function body) in a topological order of its
    /// forward edges. Successors that reach fewer blocks are visited last by the depth-first
    /// search, so they come first: a side that only leads to the kernel's end (an early
    /// return) runs before the code its lanes skip, and those lanes count as exited there.
    pub fn order(&self, r: Option<usize>) -> Vec<Node> {
        let root = match r {
            Some(l) => Node::Block(self.loops[l].header),
            None => Node::Block(0),
        };
        let reach = self.reach_counts();
        let node_succ = |n: Node| -> Vec<Node> {
            let members: Vec<usize> = match n {
                Node::Block(b) => vec![b],
                Node::Loop(l) => (0..self.blocks.len())
                    .filter(|&b| self.loops[l].blocks[b])
                    .collect(),
            };
            let mut out: Vec<(usize, Node)> = Vec::new();
            for b in members {
                for &s in &self.succ[b] {
                    if !self.in_region(r, s) {
                        continue;
                    }
                    if let Some(l) = r {
                        if s == self.loops[l].header {
                            continue;
                        }
                    }
                    let t = self.node_of(r, s);
                    if t != n && !out.iter().any(|(_, x)| *x == t) {
                        out.push((reach[self.entry_of(t)], t));
                    }
                }
            }
            out.sort_by_key(|(k, _)| std::cmp::Reverse(*k));
            out.into_iter().map(|(_, t)| t).collect()
        };
        let mut seen: Vec<Node> = vec![root];
        let mut post = Vec::new();
        let mut stack = vec![(root, node_succ(root), 0usize)];
        while let Some((n, ss, k)) = stack.last_mut() {
            if let Some(&s) = ss.get(*k) {
                *k += 1;
                if !seen.contains(&s) {
                    seen.push(s);
                    let e = node_succ(s);
                    stack.push((s, e, 0));
                }
            } else {
                post.push(*n);
                stack.pop();
            }
        }
        post.reverse();
        post
    }

    /// Per block, how many blocks its forward edges reach (a rough size of what follows it).
    fn reach_counts(&self) -> Vec<usize> {
        let n = self.blocks.len();
        let words = n.div_ceil(64);
        let order = rpo(n, 0, &self.succ);
        let mut pos = vec![0; n];
        for (k, &b) in order.iter().enumerate() {
            pos[b] = k;
        }
        let mut sets = vec![vec![0u64; words]; n];
        for &b in order.iter().rev() {
            let mut s = vec![0u64; words];
            s[b / 64] |= 1 << (b % 64);
            for &x in &self.succ[b] {
                if pos[x] > pos[b] {
                    for w in 0..words {
                        s[w] |= sets[x][w];
                    }
                }
            }
            sets[b] = s;
        }
        sets.iter()
            .map(|s| s.iter().map(|w| w.count_ones() as usize).sum())
            .collect()
    }

    /// Blocks reachable from `b`'s successors by forward edges without passing `stop`.
    pub fn region_after(&self, b: usize, stop: usize) -> Vec<usize> {
        let n = self.blocks.len();
        let order = rpo(n, 0, &self.succ);
        let mut pos = vec![0; n];
        for (k, &x) in order.iter().enumerate() {
            pos[x] = k;
        }
        let mut seen = vec![false; n];
        let mut out = Vec::new();
        let mut work: Vec<usize> = self.succ[b]
            .iter()
            .copied()
            .filter(|&s| pos[s] > pos[b])
            .collect();
        while let Some(x) = work.pop() {
            if x == stop || seen[x] {
                continue;
            }
            seen[x] = true;
            out.push(x);
            for &s in &self.succ[x] {
                if pos[s] > pos[x] {
                    work.push(s);
                }
            }
        }
        out
    }
}
