//! Computed kernel attributes: what `cuFuncGetAttribute` reports about a kernel, worked out from
//! the PTX itself (there is no cubin and no ptxas report on the cpu target). Syntax-level: it
//! reads the AST and never touches LLVM.
//!
//! API:
//!
//! - [`kernel_attributes`]`(module: &Module) -> Vec<KernelAttributes>`: one entry per `.entry`
//!   with a body, in module order;
//! - [`kernel_attributes_of_ptx`]`(src: &str) -> Result<Vec<KernelAttributes>, String>`: parses
//!   and checks first (the error is the rendered diagnostics).
//!
//! How each value is found (and what the driver calls it):
//!
//! - `param_bytes`: the size of the kernel's parameter buffer in the CUDA layout
//!   (`target::cpu::layout`, natural or declared alignment, padded to the largest alignment).
//! - `static_shared_bytes` (`CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES`): the `.shared` variables the
//!   kernel can reach — its own, those of the functions it calls or takes the address of
//!   (transitively) and the module-level ones any of them names — each at its alignment, in
//!   declaration order. `.extern .shared` arrays (dynamic shared memory) count 0.
//! - `const_bytes` (`CU_FUNC_ATTRIBUTE_CONST_SIZE_BYTES`): the module-level `.const` variables
//!   the kernel reaches, laid out the same way.
//! - `local_bytes` (`CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES`, per thread): the kernel's `.local`
//!   variables plus the deepest chain of its callees' `.local` variables (a recursive call
//!   counts its function once; `alloca` sizes are known only at run time and are not counted).
//! - `max_threads_per_block` (`CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK`): the product of
//!   `.reqntid`, else of `.maxntid`, else 1024. The register estimate does not lower it (on
//!   the cpu target registers limit nothing, and an estimate must not refuse launches).
//! - `reqntid`, `maxntid`, `min_ctas_per_sm` (`.minnctapersm`), `max_regs` (`.maxnreg`): the
//!   directives as written.
//! - `registers` (`CU_FUNC_ATTRIBUTE_NUM_REGS`): an estimate, documented so callers know what it
//!   is: the largest number of 32-bit register slots live at once in a function, over the kernel
//!   and the functions it reaches, plus 2 (ptxas keeps the stack pointer and a scratch
//!   register). A register is live from its first to its last mention in program order,
//!   extended over a whole loop (a backward `bra`) when it is live on entry to it; 64-bit
//!   registers take two slots, 128-bit four, predicates none (they live in predicate
//!   registers). The result is at least 2 and at most `.maxnreg` (else 255).
//! - `ptx_version`: major × 10 + minor of `.version` (`CU_FUNC_ATTRIBUTE_PTX_VERSION` is the
//!   target's number, as NVIDIA's driver answers it: `libcuda.so.1` reports `target_sm`);
//!   `target_sm` (`CU_FUNC_ATTRIBUTE_BINARY_VERSION` of a cubin built for the module's own
//!   target): the `sm_XX` number of `.target` (`sm_90a` → 90), 0 when the module names none.

use std::collections::{HashMap, HashSet};

use crate::isa::requirements::Arch;
use crate::isa::Mod;
use crate::syntax::ast::*;

/// What the driver's `cuFuncGetAttribute` reports for one kernel (see the module doc).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KernelAttributes {
    pub name: String,
    pub param_bytes: u32,
    pub static_shared_bytes: u64,
    pub const_bytes: u64,
    pub local_bytes: u64,
    pub max_threads_per_block: u32,
    pub reqntid: Option<[u32; 3]>,
    pub maxntid: Option<[u32; 3]>,
    pub min_ctas_per_sm: Option<u32>,
    pub max_regs: Option<u32>,
    pub registers: u32,
    pub ptx_version: u32,
    pub target_sm: u32,
}

/// Parses and checks `src`, then computes every kernel's attributes.
pub fn kernel_attributes_of_ptx(src: &str) -> Result<Vec<KernelAttributes>, String> {
    let (m, mut diags) = crate::syntax::parse(src);
    if diags.is_empty() {
        diags = crate::check::check(&m);
    }
    if !diags.is_empty() {
        return Err(crate::syntax::diag::render_all(&diags, "<ptx>", src));
    }
    Ok(kernel_attributes(&m))
}

/// The attributes of every kernel (`.entry` with a body) of a checked module, in module order.
pub fn kernel_attributes<'a>(module: &Module<'a>) -> Vec<KernelAttributes> {
    let funcs: HashMap<&str, &Function> = module
        .items
        .iter()
        .filter_map(|i| match i {
            Item::Function(f) if f.body.is_some() => Some((f.name, &**f)),
            _ => None,
        })
        .collect();
    let vars: Vec<(&VarDecl, &DeclName)> = module
        .items
        .iter()
        .filter_map(|i| match i {
            Item::Var(v) => Some(v),
            _ => None,
        })
        .flat_map(|v| v.names.iter().map(move |n| (v, n)))
        .collect();
    let var_names: HashSet<&str> = vars.iter().map(|(_, n)| n.name).collect();
    let ptx_version = module.version.0 * 10 + module.version.1;
    let target_sm = module
        .target
        .iter()
        .find_map(|t| Arch::parse(t))
        .map_or(0, |a| a.number);
    let mut out = Vec::new();
    for item in &module.items {
        let Item::Function(k) = item else { continue };
        if k.kind != FnKind::Entry || k.body.is_none() {
            continue;
        }
        // Functions reachable from the kernel (itself first) and module variables they name.
        let mut reach: Vec<&Function> = vec![k];
        let mut seen: HashSet<&str> = HashSet::from([k.name]);
        let mut used_vars: HashSet<&str> = HashSet::new();
        let mut i = 0;
        while i < reach.len() {
            let f = reach[i];
            i += 1;
            for n in names(f) {
                if let Some(g) = funcs.get(n) {
                    if seen.insert(g.name) {
                        reach.push(g);
                    }
                } else if var_names.contains(n) {
                    used_vars.insert(n);
                }
            }
        }
        let module_bytes = |space: fn(Mod) -> bool| {
            let mut off = 0u64;
            for (v, n) in &vars {
                if space(v.space) && used_vars.contains(n.name) && !is_dynamic(v) {
                    off = place(off, v, n);
                }
            }
            off
        };
        let mut shared = module_bytes(is_shared);
        for f in &reach {
            if let Some(b) = &f.body {
                each_var(b, &mut |v| {
                    if is_shared(v.space) && !is_dynamic(v) {
                        for n in &v.names {
                            shared = place(shared, v, n);
                        }
                    }
                });
            }
        }
        let const_bytes = module_bytes(|s| s == Mod::Const);
        let mut frames = HashMap::new();
        let local_bytes = frame(k, &funcs, &mut frames, &mut HashSet::new());
        let dims = |d: Option<&[u32]>| {
            d.map(|d| {
                let mut a = [1u32; 3];
                for (x, v) in a.iter_mut().zip(d) {
                    *x = *v;
                }
                a
            })
        };
        let reqntid = dims(k.directives.iter().find_map(|d| match d {
            FnDirective::ReqNTid(v, _) => Some(&v[..]),
            _ => None,
        }));
        let maxntid = dims(k.directives.iter().find_map(|d| match d {
            FnDirective::MaxNTid(v, _) => Some(&v[..]),
            _ => None,
        }));
        let max_threads = reqntid
            .or(maxntid)
            .map_or(1024, |d| d.iter().map(|&x| x as u64).product::<u64>())
            .min(1024) as u32;
        let min_ctas_per_sm = k.directives.iter().find_map(|d| match d {
            FnDirective::MinNCtaPerSm(n, _) => Some(*n),
            _ => None,
        });
        let max_regs = k.directives.iter().find_map(|d| match d {
            FnDirective::MaxNReg(n, _) => Some(*n),
            _ => None,
        });
        let live = reach.iter().map(|f| max_live_slots(f)).max().unwrap_or(0);
        let registers = (live + 2).clamp(2, max_regs.unwrap_or(255).max(2));
        out.push(KernelAttributes {
            name: k.name.to_string(),
            param_bytes: crate::target::cpu::layout::layout(k).size,
            static_shared_bytes: shared,
            const_bytes,
            local_bytes,
            max_threads_per_block: max_threads,
            reqntid,
            maxntid,
            min_ctas_per_sm,
            max_regs,
            registers,
            ptx_version,
            target_sm,
        });
    }
    out
}

fn is_shared(s: Mod) -> bool {
    matches!(s, Mod::Shared | Mod::SharedCta)
}

fn is_dynamic(v: &VarDecl) -> bool {
    v.linkage == Linkage::Extern
}

/// Places one variable after `off` at its alignment; returns the new end.
fn place(off: u64, v: &VarDecl, n: &DeclName) -> u64 {
    let elem = v.ty.type_bits().unwrap_or(8).div_ceil(8) as u64 * v.vector.map_or(1, u64::from);
    let mut size = elem * u64::from(n.count.unwrap_or(1));
    for (k, d) in n.array.iter().enumerate() {
        let dim = match (d, &n.init) {
            (Some(d), _) => *d,
            (None, Some(Initializer::List(items, _))) if k == 0 => items.len() as u64,
            _ => 0,
        };
        size = size.saturating_mul(dim);
    }
    let align = v.align.map_or(elem, u64::from).max(1);
    off.div_ceil(align) * align + size
}

/// Calls `f` with every variable declaration of a block, nested blocks included.
fn each_var<'b, 'a>(b: &'b Block<'a>, f: &mut dyn FnMut(&'b VarDecl<'a>)) {
    for s in &b.stmts {
        match s {
            Statement::Var(v) => f(v),
            Statement::Block(b) => each_var(b, f),
            _ => {}
        }
    }
}

/// Every name an operand mentions.
fn operand_names<'a>(op: &Operand<'a>, out: &mut Vec<&'a str>) {
    match op {
        Operand::Name { name, .. } => out.push(name),
        Operand::Imm(e) => e.each_name(&mut |n, _| out.push(n)),
        Operand::Addr(a) => out.extend(a.base),
        Operand::AddrList(v, _) | Operand::Vec(v, _) | Operand::List(v, _) => {
            v.iter().for_each(|o| operand_names(o, out))
        }
        Operand::Pair(a, b, _) => {
            operand_names(a, out);
            operand_names(b, out);
        }
        Operand::Sink(_) => {}
    }
}

/// Every name a function's instructions mention (call targets, addresses, immediates).
fn names<'a>(f: &Function<'a>) -> Vec<&'a str> {
    fn block<'a>(b: &Block<'a>, out: &mut Vec<&'a str>) {
        for s in &b.stmts {
            match s {
                Statement::Instr(i) => i.operands.iter().for_each(|o| operand_names(o, out)),
                Statement::Block(b) => block(b, out),
                Statement::CallTargets { targets, .. } => out.extend(targets.iter().copied()),
                _ => {}
            }
        }
    }
    let mut out = Vec::new();
    if let Some(b) = &f.body {
        block(b, &mut out);
    }
    out
}

/// Bytes of `.local` memory a function and the deepest chain of its callees declare.
fn frame<'b, 'a>(
    f: &'b Function<'a>,
    funcs: &HashMap<&'a str, &'b Function<'a>>,
    memo: &mut HashMap<&'a str, u64>,
    active: &mut HashSet<&'a str>,
) -> u64 {
    if let Some(&b) = memo.get(f.name) {
        return b;
    }
    if !active.insert(f.name) {
        // Recursion: the function's frame is already counted once on this chain.
        return 0;
    }
    let mut own = 0u64;
    if let Some(b) = &f.body {
        each_var(b, &mut |v| {
            if v.space == Mod::Local {
                for n in &v.names {
                    own = place(own, v, n);
                }
            }
        });
    }
    let deepest = names(f)
        .into_iter()
        .filter_map(|n| funcs.get(n))
        .map(|g| frame(g, funcs, memo, active))
        .max()
        .unwrap_or(0);
    active.remove(f.name);
    let total = own + deepest;
    memo.insert(f.name, total);
    total
}

/// The register estimate's core: the most 32-bit slots live at once (see the module doc).
fn max_live_slots<'a>(f: &Function<'a>) -> u32 {
    let Some(body) = &f.body else { return 0 };
    // Declared registers: exact names, and prefixes of `%r<N>` declarations.
    let mut exact: HashMap<&str, u32> = HashMap::new();
    let mut prefixes: HashMap<&str, u32> = HashMap::new();
    each_var(body, &mut |v| {
        if v.space != Mod::Reg {
            return;
        }
        let bits = v.ty.type_bits().unwrap_or(32) * u32::from(v.vector.unwrap_or(1));
        let slots = if v.ty == Mod::Pred {
            0
        } else {
            bits.div_ceil(32)
        };
        for n in &v.names {
            if n.count.is_some() {
                prefixes.insert(n.name, slots);
            } else {
                exact.insert(n.name, slots);
            }
        }
    });
    let slots_of = |name: &str| -> Option<u32> {
        exact.get(name).copied().or_else(|| {
            let stem = name.trim_end_matches(|c: char| c.is_ascii_digit());
            (stem.len() < name.len())
                .then(|| prefixes.get(stem).copied())
                .flatten()
        })
    };
    // Program order: instruction positions, label positions, register mentions, backward
    // branches.
    let mut labels: HashMap<&str, usize> = HashMap::new();
    let mut mentions: Vec<(usize, &str)> = Vec::new();
    let mut branches: Vec<(usize, &str)> = Vec::new();
    fn walk<'a>(
        b: &Block<'a>,
        pos: &mut usize,
        labels: &mut HashMap<&'a str, usize>,
        mentions: &mut Vec<(usize, &'a str)>,
        branches: &mut Vec<(usize, &'a str)>,
    ) {
        for s in &b.stmts {
            match s {
                Statement::Label(l, _) => {
                    labels.insert(l, *pos);
                }
                Statement::Instr(i) => {
                    let mut ns = Vec::new();
                    i.operands.iter().for_each(|o| operand_names(o, &mut ns));
                    if let Some(g) = &i.guard {
                        mentions.push((*pos, g.pred));
                    }
                    if i.opcode == crate::isa::Opcode::Bra {
                        if let Some(Operand::Name { name, .. }) = i.operands.last() {
                            branches.push((*pos, name));
                        }
                    }
                    mentions.extend(ns.into_iter().map(|n| (*pos, n)));
                    *pos += 1;
                }
                Statement::Block(b) => walk(b, pos, labels, mentions, branches),
                _ => {}
            }
        }
    }
    let mut pos = 0;
    walk(body, &mut pos, &mut labels, &mut mentions, &mut branches);
    let mut intervals: HashMap<&str, (usize, usize, u32)> = HashMap::new();
    for (p, n) in mentions {
        let Some(slots) = slots_of(n) else { continue };
        let e = intervals.entry(n).or_insert((p, p, slots));
        e.0 = e.0.min(p);
        e.1 = e.1.max(p);
    }
    let loops: Vec<(usize, usize)> = branches
        .iter()
        .filter_map(|&(at, l)| labels.get(l).filter(|&&t| t <= at).map(|&t| (t, at)))
        .collect();
    // Live on entry to a loop and mentioned in it: live through the whole loop. Nested loops
    // may need a second round.
    for _ in 0..4 {
        let mut changed = false;
        for iv in intervals.values_mut() {
            for &(l, r) in &loops {
                if iv.0 < l && iv.1 >= l && iv.1 < r {
                    iv.1 = r;
                    changed = true;
                }
            }
        }
        if !changed {
            break;
        }
    }
    let mut events: Vec<(usize, i64)> = Vec::new();
    for &(a, b, s) in intervals.values() {
        events.push((a, i64::from(s)));
        events.push((b + 1, -i64::from(s)));
    }
    // Ends before starts at one position: an interval ending at p frees its slots for p + 1.
    events.sort_by_key(|&(p, d)| (p, d));
    let (mut cur, mut best) = (0i64, 0i64);
    for (_, d) in events {
        cur += d;
        best = best.max(cur);
    }
    best as u32
}

#[cfg(test)]
mod tests {
    use super::*;

    fn attrs(body: &str) -> Vec<KernelAttributes> {
        let src = format!(".version 8.0\n.target sm_90a\n.address_size 64\n{body}");
        kernel_attributes_of_ptx(&src).unwrap_or_else(|e| panic!("{e}\n{src}"))
    }

    #[test]
    fn sizes_directives_and_versions() {
        let a = attrs(
            ".shared .align 16 .b8 tile[100];\n\
             .shared .u32 unused_by_k[64];\n\
             .const .align 8 .f64 coef[4] = {1.0, 2.0, 3.0, 4.0};\n\
             .const .u32 other;\n\
             .extern .shared .align 16 .b8 dyn[];\n\
             .func helper()\n{\n\t.local .align 8 .b8 scratch[40];\n\t.shared .u16 h;\n\
             \tret;\n}\n\
             .visible .entry k(.param .u32 n, .param .u64 p, .param .align 16 .b8 s[20])\n\
             .reqntid 64, 2\n.minnctapersm 3\n.maxnreg 40\n{\n\
             \t.local .u32 mine[3];\n\t.reg .b32 %r<3>;\n\t.reg .f64 %fd<2>;\n\
             \tld.shared.u32 %r1, [tile];\n\tld.const.f64 %fd1, [coef+8];\n\
             \tld.shared.u32 %r2, [dyn];\n\tcall.uni helper, ();\n\tret;\n}\n\
             .visible .entry plain()\n.maxntid 32, 4, 2\n{\n\tret;\n}\n\
             .visible .entry none()\n{\n\tret;\n}\n",
        );
        assert_eq!(a.len(), 3);
        let k = &a[0];
        assert_eq!(k.name, "k");
        // n at 0, p at 8, s (align 16) at 16..36, padded to 48.
        assert_eq!(k.param_bytes, 48);
        // tile (100) then helper's h (align 2) at 100: 102; `unused_by_k` and `dyn` do not count.
        assert_eq!(k.static_shared_bytes, 102);
        assert_eq!(k.const_bytes, 32);
        // mine (12) + helper's scratch (40).
        assert_eq!(k.local_bytes, 52);
        assert_eq!(k.max_threads_per_block, 128);
        assert_eq!(k.reqntid, Some([64, 2, 1]));
        assert_eq!(k.maxntid, None);
        assert_eq!(k.min_ctas_per_sm, Some(3));
        assert_eq!(k.max_regs, Some(40));
        assert_eq!((k.ptx_version, k.target_sm), (80, 90));
        assert_eq!(a[1].max_threads_per_block, 256);
        assert_eq!(a[1].maxntid, Some([32, 4, 2]));
        assert_eq!(a[2].max_threads_per_block, 1024);
        assert_eq!(
            (a[2].static_shared_bytes, a[2].const_bytes, a[2].local_bytes),
            (0, 0, 0)
        );
        assert_eq!(a[2].registers, 2);
    }

    #[test]
    fn register_estimate_counts_live_slots_and_loops() {
        // Straight line: at the add, %rd1 (two slots), %r1, %r2 and the destination %r3 (an
        // instruction's operands all count at its position): 5 + 2.
        let a = attrs(
            ".visible .entry k(.param .u64 p)\n{\n\t.reg .b32 %r<4>;\n\t.reg .b64 %rd<2>;\n\
             \t.reg .pred %p<2>;\n\
             \tld.param.u64 %rd1, [p];\n\tmov.u32 %r1, 1;\n\tmov.u32 %r2, 2;\n\
             \tsetp.eq.u32 %p1, %r1, 0;\n\tadd.u32 %r3, %r1, %r2;\n\tst.global.u32 [%rd1], %r3;\n\
             \tret;\n}\n",
        );
        assert_eq!(a[0].registers, 7);
        // %r9 is set before the loop and read in its first instruction only: it stays live to
        // the backward branch, so it overlaps %r2..%r4 there.
        let b = attrs(
            ".visible .entry k()\n{\n\t.reg .b32 %r<10>;\n\t.reg .pred %p<2>;\n\
             \tmov.u32 %r9, 7;\n\tmov.u32 %r1, 0;\nL:\n\tadd.u32 %r1, %r1, %r9;\n\
             \tmov.u32 %r2, 1;\n\tmov.u32 %r3, 1;\n\tadd.u32 %r4, %r2, %r3;\n\
             \tsetp.lt.u32 %p1, %r4, %r1;\n\t@%p1 bra L;\n\tret;\n}\n",
        );
        // At `add %r4`: %r1, %r9, %r2, %r3, %r4 = 5 slots, + 2.
        assert_eq!(b[0].registers, 7);
        // `.maxnreg` caps the estimate.
        let c = attrs(
            ".visible .entry k()\n.maxnreg 4\n{\n\t.reg .b64 %rd<4>;\n\
             \tmov.u64 %rd1, 1;\n\tmov.u64 %rd2, 2;\n\tadd.u64 %rd3, %rd1, %rd2;\n\tret;\n}\n",
        );
        assert_eq!(c[0].registers, 4);
    }

    #[test]
    fn recursion_counts_a_frame_once() {
        let a = attrs(
            ".func f()\n{\n\t.local .u32 x[4];\n\tcall.uni f, ();\n\tret;\n}\n\
             .visible .entry k()\n{\n\tcall.uni f, ();\n\tret;\n}\n",
        );
        assert_eq!(a[0].local_bytes, 16);
    }

    #[test]
    fn invalid_ptx_is_an_error() {
        let e = kernel_attributes_of_ptx(".version 8.0\n.target sm_80\nbad").unwrap_err();
        assert!(e.starts_with("<ptx>:3:1: error:"), "{e}");
    }
}
