//! The PTX module linker: several PTX modules in, one PTX module out, as the CUDA driver's JIT
//! linker (`cuLinkAddData` … `cuLinkComplete`) and nvJitLink do for PTX inputs. numba links its
//! fp16/bf16 helpers and `link=` files this way. It works on the AST (`crate::syntax`) and never
//! touches LLVM, so the output is printed by the canonical printer and parses and checks again.
//!
//! API:
//!
//! ```
//! let a = ".version 8.0\n.target sm_80\n.address_size 64\n\
//!          .extern .func (.param .b32 r) inc (.param .b32 a);\n\
//!          .visible .entry k() { ret; }";
//! let b = ".version 7.0\n.target sm_75\n.address_size 64\n\
//!          .visible .func (.param .b32 r) inc (.param .b32 a) { ret; }";
//! let out = ptx2llvm::link::link_ptx(&[("a.ptx", a), ("b.ptx", b)]).unwrap();
//! assert!(out.starts_with(".version 8.0\n.target sm_80\n"));
//! ```
//!
//! - [`link_ptx`]`(inputs: &[(&str, &str)]) -> Result<String, LinkError>`: `(name, text)`
//!   pairs; the name only labels diagnostics. [`link_ptx_with`] takes [`LinkOptions`].
//! - Errors come all at once in a [`LinkError`] whose diagnostics name the input, line and
//!   column (`b.ptx:4:1: error: …` with the source line and a caret, as the CLI prints them).
//!
//! Rules (PTX ISA §11.6, "Linking Directives"):
//!
//! - **Header.** `.version` is the highest of the inputs'. `.target` is the lowest architecture
//!   that meets every input's (`sm_80` and `sm_86` → `sm_86`; `sm_90a` needs exactly `sm_90a`;
//!   `sm_100f` and `sm_103` → `sm_103f`), else an error; `texmode_unified` and
//!   `texmode_independent` may not meet; `map_f64_to_f32` carries over from any input, `debug`
//!   does not (the DWARF it promises is dropped).
//!   `.address_size` must agree (absent is 32).
//! - **Symbols.** Module-level functions and variables. A `.visible` definition (or a `.visible`
//!   / unqualified `.entry`) is strong: two of one name are an error. `.weak` definitions are
//!   used only when no strong one exists (the first wins). `.common` variables merge into the
//!   largest; at most one may have an initializer and it must be that largest one. `.extern`
//!   declarations (and bodiless prototypes) resolve against the chosen definition; a
//!   declaration whose parameter sizes or state space differ from it is an error (except a
//!   declared return of a definition that has none and that its own module does not call: the
//!   definition takes it, unwritten, as nvJitLink links numba's `abi="c"` `void` functions), and an
//!   extern that no module defines is an error where it is used (unless
//!   [`LinkOptions::allow_unresolved`]), except the system calls the driver provides
//!   ([`SYSTEM_CALLS`]: `vprintf`, `malloc`, `free`, `__assertfail`), whose declarations stay. `.extern .shared` arrays are dynamic shared memory,
//!   not links: they are kept (one per name).
//! - **Module-local symbols** (no linkage directive) that clash with a name of another module
//!   are renamed (`name_$N`, N the input's index) in that module, references included (names
//!   declared inside a function shadow module-level ones and are left alone).
//! - **Layout.** Module pragmas; `.file` entries renumbered per input (and `.loc` with them);
//!   prototypes of every function some module declared before defining; the variables, in an
//!   order where each initializer's names come first; the functions in input order; `.alias`
//!   directives last. DWARF `.section`s are dropped (their labels cannot be merged), and with
//!   them the `function_name … inlined_at …` part of `.loc`, which names their labels.

use std::collections::{HashMap, HashSet};
use std::fmt;

use crate::isa::requirements::{Arch, Suffix};
use crate::isa::Mod;
use crate::syntax::ast::*;
use crate::syntax::diag::Diagnostic;
use crate::syntax::span::{line_col, Span};

/// Options of [`link_ptx_with`].
#[derive(Clone, Debug, Default)]
pub struct LinkOptions {
    /// Keep `.extern` declarations no input defines (as declarations in the output) instead of
    /// reporting them: for a caller that provides those symbols itself (the device runtime's
    /// `cudaCGSynchronize` and friends).
    pub allow_unresolved: bool,
}

/// One problem found while linking, at a position in one input.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LinkDiagnostic {
    /// The input's name as given (`"<linked>"` for a problem in the linked module itself, an
    /// internal error).
    pub input: String,
    /// 1-based line and column (0 when the problem has no position).
    pub line: usize,
    pub col: usize,
    pub message: String,
    /// `INPUT:LINE:COL: error: MESSAGE`, the source line and a caret (and a note).
    pub rendered: String,
}

/// Every problem of a link, in input order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LinkError {
    pub errors: Vec<LinkDiagnostic>,
}

impl fmt::Display for LinkError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for e in &self.errors {
            f.write_str(&e.rendered)?;
        }
        Ok(())
    }
}

impl std::error::Error for LinkError {}

/// Links PTX modules given as `(name, text)` pairs into one PTX module (see the module doc).
pub fn link_ptx(inputs: &[(&str, &str)]) -> Result<String, LinkError> {
    link_ptx_with(inputs, &LinkOptions::default())
}

/// [`link_ptx`] with options.
pub fn link_ptx_with(inputs: &[(&str, &str)], opts: &LinkOptions) -> Result<String, LinkError> {
    let mut errs = Errors {
        inputs,
        list: Vec::new(),
    };
    if inputs.is_empty() {
        errs.list.push(LinkDiagnostic {
            input: String::new(),
            line: 0,
            col: 0,
            message: "nothing to link: no PTX inputs".into(),
            rendered: "error: nothing to link: no PTX inputs\n".into(),
        });
        return Err(LinkError { errors: errs.list });
    }
    let mut modules = Vec::with_capacity(inputs.len());
    for (i, (_, text)) in inputs.iter().enumerate() {
        let (m, mut diags) = crate::syntax::parse(text);
        if diags.is_empty() {
            diags = crate::check::check(&m);
        }
        diags.sort_by_key(|d| d.span.start);
        for d in diags {
            errs.push(i, d);
        }
        modules.push(m);
    }
    if !errs.list.is_empty() {
        return Err(LinkError { errors: errs.list });
    }
    let header = merge_header(&modules, &mut errs);
    let syms = collect_symbols(&modules);
    let plan = resolve(&modules, &syms, opts, &mut errs);
    if !errs.list.is_empty() {
        return Err(LinkError { errors: errs.list });
    }
    let storage: Vec<Vec<(String, String)>> = plan.renames.clone();
    let out = build(modules, header, &syms, &plan, &storage);
    let text = crate::syntax::printer::print_module(&out);
    // The output must be a valid module; a failure here is a bug of the linker, reported
    // against the linked text rather than as a panic.
    let diags = {
        let (m, mut diags) = crate::syntax::parse(&text);
        if diags.is_empty() {
            diags = crate::check::check(&m);
        }
        diags
    };
    if !diags.is_empty() {
        let errors = diags
            .iter()
            .map(|d| {
                let (line, col) = line_col(&text, d.span.start);
                LinkDiagnostic {
                    input: "<linked>".into(),
                    line,
                    col,
                    message: format!(
                        "internal error: the linked module is invalid: {}",
                        d.message
                    ),
                    rendered: d.render("<linked>", &text),
                }
            })
            .collect();
        return Err(LinkError { errors });
    }
    Ok(text)
}

struct Errors<'i> {
    inputs: &'i [(&'i str, &'i str)],
    list: Vec<LinkDiagnostic>,
}

impl Errors<'_> {
    fn push(&mut self, input: usize, d: Diagnostic) {
        let (name, src) = self.inputs[input];
        let (line, col) = line_col(src, d.span.start);
        self.list.push(LinkDiagnostic {
            input: name.to_string(),
            line,
            col,
            message: d.message.clone(),
            rendered: d.render(name, src),
        });
    }

    fn at(&self, input: usize, span: Span) -> String {
        let (name, src) = self.inputs[input];
        let (line, col) = line_col(src, span.start);
        format!("{name}:{line}:{col}")
    }
}

// ---------------------------------------------------------------------------------------------
// Header

struct Header<'s> {
    version: (u32, u32),
    target: Vec<&'s str>,
    address_size: Option<u32>,
    /// The merged architecture when it is not one of the inputs' spellings (`sm_103f`).
    arch_text: Option<&'static str>,
}

/// Whether code for target `need` runs on `have` (ptxas's rules, `isa::requirements`).
fn meets(have: Arch, need: Arch) -> bool {
    match need.suffix {
        Suffix::None => have.number >= need.number,
        Suffix::Family => {
            have.suffix != Suffix::None
                && have.number / 10 == need.number / 10
                && have.number >= need.number
        }
        Suffix::Arch => have == need,
    }
}

fn merge_header<'s>(modules: &[Module<'s>], errs: &mut Errors) -> Header<'s> {
    let version = modules.iter().map(|m| m.version).max().unwrap_or((0, 0));
    let sizes: Vec<u32> = modules
        .iter()
        .map(|m| m.address_size.unwrap_or(32))
        .collect();
    for (i, m) in modules.iter().enumerate() {
        if sizes[i] != sizes[0] {
            let span = m.target_span;
            errs.push(
                i,
                Diagnostic::new(
                    span,
                    format!(
                        "`.address_size {}` differs from `.address_size {}` of {}",
                        sizes[i], sizes[0], errs.inputs[0].0
                    ),
                ),
            );
        }
    }
    let archs: Vec<Option<(Arch, &str)>> = modules
        .iter()
        .map(|m| {
            m.target
                .iter()
                .find_map(|t| Arch::parse(t).map(|a| (a, *t)))
        })
        .collect();
    let mut candidates: Vec<Arch> = Vec::new();
    for &(a, _) in archs.iter().flatten() {
        candidates.push(a);
        let family = Arch {
            number: a.number,
            suffix: Suffix::Family,
        };
        // Only the targets that exist (`sm_100f` does, `sm_80f` does not).
        if a.suffix == Suffix::None && family.min_version().is_some() {
            candidates.push(family);
        }
    }
    candidates.sort();
    let chosen = candidates
        .iter()
        .copied()
        .find(|&c| archs.iter().flatten().all(|&(a, _)| meets(c, a)));
    let mut target: Vec<&'s str> = Vec::new();
    let mut arch_text = None;
    match chosen {
        None if !candidates.is_empty() => {
            let list: Vec<String> = archs
                .iter()
                .enumerate()
                .filter_map(|(i, a)| a.map(|(_, t)| format!("`{t}` ({})", errs.inputs[i].0)))
                .collect();
            let last = archs.iter().rposition(|a| a.is_some()).unwrap_or(0);
            errs.push(
                last,
                Diagnostic::new(
                    modules[last].target_span,
                    format!(
                        "no target meets every input's: {}; code for an `a` target runs only \
                         on that target, and `f` targets only within their family",
                        list.join(", ")
                    ),
                ),
            );
        }
        None => {}
        Some(c) => {
            match archs.iter().flatten().find(|(a, _)| *a == c) {
                Some(&(_, t)) => target.push(t),
                None => arch_text = static_arch_name(&c.to_string()),
            };
        }
    }
    let mut texmode: Option<(usize, &str)> = None;
    for (i, m) in modules.iter().enumerate() {
        for &t in &m.target {
            if Arch::parse(t).is_some() {
                continue;
            }
            if t.starts_with("texmode_") {
                if let Some((j, other)) = texmode {
                    if other != t {
                        errs.push(
                            i,
                            Diagnostic::new(
                                m.target_span,
                                format!("`{t}` conflicts with `{other}` of {}", errs.inputs[j].0),
                            ),
                        );
                    }
                    continue;
                }
                texmode = Some((i, t));
            }
            // `debug` promises DWARF sections, which the link drops (ptxas: "Debug
            // information not found in presence of .target debug").
            if t != "debug" && !target.contains(&t) {
                target.push(t);
            }
        }
    }
    // A merged family target may need a newer version than every input declared.
    let mut version = version;
    if let Some(c) = chosen {
        if let Some(v) = c.min_version() {
            version = version.max(v);
        }
    }
    Header {
        version,
        target,
        address_size: modules.iter().find_map(|m| m.address_size),
        arch_text,
    }
}

// ---------------------------------------------------------------------------------------------
// Symbols

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum SymKind {
    Func,
    Entry,
    Var,
}

impl SymKind {
    fn noun(self) -> &'static str {
        match self {
            SymKind::Func => "function",
            SymKind::Entry => "kernel",
            SymKind::Var => "variable",
        }
    }
}

/// One module-level name: a function (item `item`) or one name of a variable declaration.
#[derive(Clone, Debug)]
struct Sym<'s> {
    module: usize,
    item: usize,
    /// Index into the declaration's names (0 for functions).
    index: usize,
    name: &'s str,
    kind: SymKind,
    linkage: Linkage,
    /// A definition (a body, a variable that is not `.extern`, or a prototype `.alias` defines).
    defined: bool,
    span: Span,
}

type Key = (usize, usize, usize);

fn key(s: &Sym) -> Key {
    (s.module, s.item, s.index)
}

/// `.extern .shared` arrays: the dynamic shared memory, which no module defines.
fn is_dynamic_shared(v: &VarDecl) -> bool {
    v.linkage == Linkage::Extern && matches!(v.space, Mod::Shared | Mod::SharedCta)
}

fn collect_symbols<'s>(modules: &[Module<'s>]) -> Vec<Sym<'s>> {
    let mut out = Vec::new();
    for (m, module) in modules.iter().enumerate() {
        let aliases: HashSet<&str> = module
            .items
            .iter()
            .filter_map(|it| match it {
                Item::Alias { alias, .. } => Some(*alias),
                _ => None,
            })
            .collect();
        for (i, item) in module.items.iter().enumerate() {
            match item {
                Item::Function(f) => out.push(Sym {
                    module: m,
                    item: i,
                    index: 0,
                    name: f.name,
                    kind: match f.kind {
                        FnKind::Entry => SymKind::Entry,
                        FnKind::Func => SymKind::Func,
                    },
                    linkage: f.linkage,
                    defined: f.body.is_some() || aliases.contains(f.name),
                    span: f.name_span,
                }),
                Item::Var(v) if !is_dynamic_shared(v) => {
                    for (k, n) in v.names.iter().enumerate() {
                        out.push(Sym {
                            module: m,
                            item: i,
                            index: k,
                            name: n.name,
                            kind: SymKind::Var,
                            linkage: v.linkage,
                            defined: v.linkage != Linkage::Extern,
                            span: n.span,
                        });
                    }
                }
                _ => {}
            }
        }
    }
    out
}

/// What the link decided.
struct Plan {
    /// Symbols whose item is left out of the output (declarations, losing weak/common
    /// definitions, duplicate prototypes).
    dropped: HashSet<Key>,
    /// Definitions that get a prototype before the variables (some module declared them).
    prototypes: Vec<Key>,
    /// Unresolved `.extern` declarations kept (with `allow_unresolved`), as prototypes/vars.
    kept_externs: HashSet<Key>,
    /// Per module: module-local names and their new spellings.
    renames: Vec<Vec<(String, String)>>,
    /// Definitions without return parameters that a declaration gives some (numba's `abi="c"`
    /// `void` functions): the definition takes the declaration's (named by its key), never
    /// written, so its callers link as nvJitLink links them (the value read is undefined).
    widened: HashMap<Key, Key>,
}

/// The functions of the PTX ABI's system calls, which the driver provides to every module (the
/// cpu target's runtime and C library do): their `.extern` declarations stay, one per name.
pub const SYSTEM_CALLS: &[&str] = &["vprintf", "malloc", "free", "__assertfail"];

/// Bytes of one parameter, for comparing a declaration with its definition.
fn param_bytes(p: &Param) -> Option<u64> {
    let bits = p.ty.type_bits()? as u64;
    let mut n = bits.div_ceil(8) * p.vector.map_or(1, u64::from);
    for d in &p.array {
        n = n.checked_mul((*d)?)?;
    }
    Some(n)
}

/// Whether declaration `decl` may give definition `def` its return parameters: `def` returns
/// nothing, `decl` declares returns and the same parameters, no caller in `def`'s own module
/// calls it without them (`used`), and no other declaration widened it differently. numba
/// declares an `abi="c"` `void` function with a `.b64` return (its status word, which it
/// ignores); nvJitLink links such calls by name.
fn widens(
    modules: &[Module],
    decl: &Sym,
    def: &Sym,
    used: &HashSet<&str>,
    name: &str,
    plan: &Plan,
) -> bool {
    let (d, f) = (func_of(modules, decl), func_of(modules, def));
    let agrees = match plan.widened.get(&key(def)) {
        Some(other) => {
            matches!(&modules[other.0].items[other.1], Item::Function(o) if signature_matches(o, d))
        }
        None => true,
    };
    f.rets.is_empty()
        && !d.rets.is_empty()
        && same_params(&d.params, &f.params)
        && !used.contains(name)
        && agrees
}

fn same_params(x: &[Param], y: &[Param]) -> bool {
    x.len() == y.len()
        && x.iter()
            .zip(y)
            .all(|(p, q)| p.space == q.space && param_bytes(p) == param_bytes(q))
}

fn signature_matches(a: &Function, b: &Function) -> bool {
    same_params(&a.rets, &b.rets) && same_params(&a.params, &b.params)
}

/// Bytes a variable name occupies (for `.common` merging): element size × vector × dimensions
/// (an unsized `[]` counts its initializer's elements).
fn var_bytes(v: &VarDecl, n: &DeclName) -> u64 {
    let elem = v.ty.type_bits().unwrap_or(8).div_ceil(8) as u64 * v.vector.map_or(1, u64::from);
    let mut size = elem;
    for (k, d) in n.array.iter().enumerate() {
        let dim = match d {
            Some(d) => *d,
            None if k == 0 => match &n.init {
                Some(Initializer::List(items, _)) => items.len() as u64,
                _ => 0,
            },
            None => 0,
        };
        size = size.saturating_mul(dim);
    }
    size
}

fn var_of<'a, 's>(modules: &'a [Module<'s>], s: &Sym) -> (&'a VarDecl<'s>, &'a DeclName<'s>) {
    match &modules[s.module].items[s.item] {
        Item::Var(v) => (v, &v.names[s.index]),
        _ => unreachable!("a variable symbol names a variable item"),
    }
}

fn func_of<'a, 's>(modules: &'a [Module<'s>], s: &Sym) -> &'a Function<'s> {
    match &modules[s.module].items[s.item] {
        Item::Function(f) => f,
        _ => unreachable!("a function symbol names a function item"),
    }
}

/// Names each module uses at module level outside declarations: in instructions and
/// initializers (for "is this unresolved extern used?").
fn used_names<'s>(module: &Module<'s>) -> HashSet<&'s str> {
    let mut used = HashSet::new();
    for item in &module.items {
        match item {
            Item::Function(f) => {
                if let Some(b) = &f.body {
                    names_in_block(b, &mut used);
                }
            }
            Item::Var(v) => {
                for n in &v.names {
                    if let Some(i) = &n.init {
                        init_names(i, &mut |s| {
                            used.insert(s);
                        });
                    }
                }
            }
            Item::Alias { aliasee, .. } => {
                used.insert(*aliasee);
            }
            _ => {}
        }
    }
    used
}

fn names_in_block<'s>(b: &Block<'s>, used: &mut HashSet<&'s str>) {
    for st in &b.stmts {
        match st {
            Statement::Instr(ins) => {
                for op in &ins.operands {
                    operand_names(op, &mut |s| {
                        used.insert(s);
                    });
                }
            }
            Statement::Block(b) => names_in_block(b, used),
            Statement::Var(v) => {
                for n in &v.names {
                    if let Some(i) = &n.init {
                        init_names(i, &mut |s| {
                            used.insert(s);
                        });
                    }
                }
            }
            Statement::CallTargets { targets, .. } => used.extend(targets.iter().copied()),
            _ => {}
        }
    }
}

fn operand_names<'s>(op: &Operand<'s>, f: &mut dyn FnMut(&'s str)) {
    match op {
        Operand::Name { name, .. } => f(name),
        Operand::Imm(e) => e.each_name(&mut |n, _| f(n)),
        Operand::Addr(a) => {
            if let Some(b) = a.base {
                f(b)
            }
        }
        Operand::AddrList(v, _) | Operand::Vec(v, _) | Operand::List(v, _) => {
            for o in v {
                operand_names(o, f)
            }
        }
        Operand::Pair(a, b, _) => {
            operand_names(a, f);
            operand_names(b, f);
        }
        Operand::Sink(_) => {}
    }
}

fn init_names<'s>(i: &Initializer<'s>, f: &mut dyn FnMut(&'s str)) {
    match i {
        Initializer::Expr(e) => e.each_name(&mut |n, _| f(n)),
        Initializer::List(v, _) => {
            for x in v {
                init_names(x, f)
            }
        }
        Initializer::Field(..) => {}
    }
}

fn resolve(modules: &[Module], syms: &[Sym], opts: &LinkOptions, errs: &mut Errors) -> Plan {
    let mut plan = Plan {
        dropped: HashSet::new(),
        prototypes: Vec::new(),
        kept_externs: HashSet::new(),
        renames: vec![Vec::new(); modules.len()],
        widened: HashMap::new(),
    };
    let used: Vec<HashSet<&str>> = modules.iter().map(used_names).collect();
    // Names by spelling, in input order.
    let mut by_name: Vec<(&str, Vec<usize>)> = Vec::new();
    let mut index: HashMap<&str, usize> = HashMap::new();
    for (i, s) in syms.iter().enumerate() {
        let slot = *index.entry(s.name).or_insert_with(|| {
            by_name.push((s.name, Vec::new()));
            by_name.len() - 1
        });
        by_name[slot].1.push(i);
    }
    // Every spelling in every input, so that a new name clashes with nothing.
    let inputs = errs.inputs;
    let taken = |cand: &str| inputs.iter().any(|(_, t)| t.contains(cand));
    for (name, list) in &by_name {
        let local = |s: &Sym| s.linkage == Linkage::None;
        // A module-local symbol is private to its module; the others share one name.
        let global: Vec<usize> = list.iter().copied().filter(|&i| !local(&syms[i])).collect();
        let mut owners: Vec<usize> = list
            .iter()
            .map(|&i| syms[i].module)
            .filter(|&m| list.iter().any(|&i| syms[i].module == m && local(&syms[i])))
            .collect();
        owners.dedup();
        // Local names clash with any other module's use of the name: all but the first owner
        // (or all of them, when the name is global somewhere) are renamed.
        let keep_first = global.is_empty();
        for (k, &m) in owners.iter().enumerate() {
            if keep_first && k == 0 {
                continue;
            }
            let mut n = m;
            let new = loop {
                let cand = format!("{name}_${n}");
                if !taken(&cand) {
                    break cand;
                }
                n += modules.len();
            };
            plan.renames[m].push((name.to_string(), new));
        }
        // Kinds must agree across modules.
        if let Some(&first) = list.first() {
            let fk = |k: SymKind| if k == SymKind::Var { 0 } else { 1 };
            for &i in &global {
                if fk(syms[i].kind) != fk(syms[first].kind) && !local(&syms[first]) {
                    errs.push(
                        syms[i].module,
                        Diagnostic::new(
                            syms[i].span,
                            format!(
                                "`{name}` is a {} here but a {} at {}",
                                syms[i].kind.noun(),
                                syms[first].kind.noun(),
                                errs.at(syms[first].module, syms[first].span)
                            ),
                        ),
                    );
                }
            }
        }
        // Per module, local symbols: bodiless prototypes resolve within their module.
        for &m in &owners {
            let mine: Vec<usize> = list
                .iter()
                .copied()
                .filter(|&i| syms[i].module == m && local(&syms[i]))
                .collect();
            let def = mine.iter().copied().find(|&i| syms[i].defined);
            let decls: Vec<usize> = mine.iter().copied().filter(|&i| !syms[i].defined).collect();
            match def {
                Some(d) => {
                    for &i in &decls {
                        plan.dropped.insert(key(&syms[i]));
                    }
                    if !decls.is_empty() && syms[d].kind == SymKind::Func {
                        plan.prototypes.push(key(&syms[d]));
                    }
                }
                // A module-local prototype names a function of its own module.
                None => {
                    for &i in &decls {
                        if used[m].contains(name) {
                            errs.push(
                                m,
                                Diagnostic::new(
                                    syms[i].span,
                                    format!(
                                        "{} `{name}` is declared but not defined in this module \
                                         (only `.extern`, `.visible` or `.weak` declarations \
                                         link to other modules)",
                                        syms[i].kind.noun()
                                    ),
                                ),
                            );
                        }
                        plan.dropped.insert(key(&syms[i]));
                    }
                }
            }
            let strong: Vec<usize> = mine.iter().copied().filter(|&i| syms[i].defined).collect();
            for &i in strong.iter().skip(1) {
                errs.push(
                    m,
                    Diagnostic::new(
                        syms[i].span,
                        format!(
                            "`{name}` is defined twice in this module (first at {})",
                            errs.at(m, syms[strong[0]].span)
                        ),
                    ),
                );
            }
        }
        if global.is_empty() {
            continue;
        }
        resolve_global(name, &global, modules, syms, &used, opts, &mut plan, errs);
    }
    plan
}

#[allow(clippy::too_many_arguments)]
fn resolve_global(
    name: &str,
    global: &[usize],
    modules: &[Module],
    syms: &[Sym],
    used: &[HashSet<&str>],
    opts: &LinkOptions,
    plan: &mut Plan,
    errs: &mut Errors,
) {
    let defs: Vec<usize> = global
        .iter()
        .copied()
        .filter(|&i| syms[i].defined)
        .collect();
    let decls: Vec<usize> = global
        .iter()
        .copied()
        .filter(|&i| !syms[i].defined)
        .collect();
    let strong: Vec<usize> = defs
        .iter()
        .copied()
        .filter(|&i| syms[i].linkage == Linkage::Visible)
        .collect();
    let commons: Vec<usize> = defs
        .iter()
        .copied()
        .filter(|&i| syms[i].linkage == Linkage::Common)
        .collect();
    for &i in strong.iter().skip(1) {
        let first = &syms[strong[0]];
        errs.push(
            syms[i].module,
            Diagnostic::new(
                syms[i].span,
                format!(
                    "duplicate definition of {} `{name}`: it is also defined at {}",
                    syms[i].kind.noun(),
                    errs.at(first.module, first.span)
                ),
            )
            .with_note("one `.visible` definition per name; mark the others `.weak`"),
        );
    }
    let winner = if let Some(&s) = strong.first() {
        Some(s)
    } else if !commons.is_empty() {
        let size = |i: usize| {
            let (v, n) = var_of(modules, &syms[i]);
            (var_bytes(v, n), n.init.is_some())
        };
        let best = commons
            .iter()
            .copied()
            .max_by_key(|&i| (size(i), std::cmp::Reverse(i)))
            .expect("commons is not empty");
        let largest = size(best).0;
        for &i in &commons {
            let (bytes, init) = size(i);
            if init && i != best {
                let what = if bytes < largest {
                    format!(
                        "`.common` variable `{name}` has an initializer but is smaller ({bytes} \
                         bytes) than its definition at {} ({largest} bytes)",
                        errs.at(syms[best].module, syms[best].span)
                    )
                } else {
                    format!(
                        "`.common` variable `{name}` is initialized twice: also at {}",
                        errs.at(syms[best].module, syms[best].span)
                    )
                };
                errs.push(syms[i].module, Diagnostic::new(syms[i].span, what));
            }
        }
        Some(best)
    } else {
        defs.first().copied()
    };
    for &i in &defs {
        if Some(i) != winner {
            plan.dropped.insert(key(&syms[i]));
        }
    }
    for &i in &commons {
        let s = &syms[i];
        let (v, _) = var_of(modules, s);
        if v.space != Mod::Global {
            errs.push(
                s.module,
                Diagnostic::new(
                    s.span,
                    format!("`.common` variable `{name}` must be in `.global`"),
                ),
            );
        }
    }
    match winner {
        Some(w) => {
            let ws = &syms[w];
            for &i in &decls {
                plan.dropped.insert(key(&syms[i]));
                let s = &syms[i];
                let mismatch = match (s.kind, ws.kind) {
                    (SymKind::Var, SymKind::Var) => {
                        let (a, _) = var_of(modules, s);
                        let (b, _) = var_of(modules, ws);
                        (a.space != b.space).then(|| {
                            format!("is declared in `{}` ", a.space.spelling())
                                + &format!("but defined in `{}`", b.space.spelling())
                        })
                    }
                    (SymKind::Var, _) | (_, SymKind::Var) => None, // reported as a kind clash
                    _ if widens(modules, s, ws, &used[ws.module], name, plan) => {
                        plan.widened.insert(key(ws), key(s));
                        None
                    }
                    _ => (!signature_matches(func_of(modules, s), func_of(modules, ws)))
                        .then(|| "is declared with other parameters than its definition".into()),
                };
                if let Some(m) = mismatch {
                    errs.push(
                        s.module,
                        Diagnostic::new(
                            s.span,
                            format!("`{name}` {m} at {}", errs.at(ws.module, ws.span)),
                        ),
                    );
                }
            }
            // Callers declared it, or called a definition this one replaces, possibly before
            // this definition's place in the output.
            if (!decls.is_empty() || defs.len() > 1) && ws.kind == SymKind::Func {
                plan.prototypes.push(key(ws));
            }
        }
        None => {
            if opts.allow_unresolved || SYSTEM_CALLS.contains(&name) {
                // One declaration stays, in place of them all.
                for &i in decls.iter().skip(1) {
                    plan.dropped.insert(key(&syms[i]));
                }
                if let Some(&i) = decls.first() {
                    plan.kept_externs.insert(key(&syms[i]));
                }
            } else {
                for &i in &decls {
                    let s = &syms[i];
                    if used[s.module].contains(name) {
                        errs.push(
                            s.module,
                            Diagnostic::new(
                                s.span,
                                format!(
                                    "unresolved external {} `{name}`: no input defines it",
                                    s.kind.noun()
                                ),
                            )
                            .with_note("a definition must be `.visible`, `.weak` or `.common`"),
                        );
                    }
                    plan.dropped.insert(key(s));
                }
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Output

fn build<'s>(
    modules: Vec<Module<'s>>,
    header: Header<'s>,
    syms: &[Sym<'s>],
    plan: &Plan,
    storage: &'s [Vec<(String, String)>],
) -> Module<'s> {
    let renames: Vec<HashMap<&'s str, &'s str>> = storage
        .iter()
        .map(|v| v.iter().map(|(a, b)| (a.as_str(), b.as_str())).collect())
        .collect();
    let by_key: HashMap<Key, &Sym> = syms.iter().map(|s| (key(s), s)).collect();
    let widened_rets: HashMap<Key, Vec<Param<'s>>> = plan
        .widened
        .iter()
        .map(|(&def, decl)| match &modules[decl.0].items[decl.1] {
            Item::Function(d) => (def, d.rets.clone()),
            _ => unreachable!("a widening declaration is a function"),
        })
        .collect();
    let mut file_offset = 0u32;
    let mut pragmas: Vec<Item<'s>> = Vec::new();
    let mut files: Vec<Item<'s>> = Vec::new();
    let mut protos: Vec<Item<'s>> = Vec::new();
    let mut vars: Vec<VarDecl<'s>> = Vec::new();
    let mut funcs: Vec<Item<'s>> = Vec::new();
    let mut aliases: Vec<Item<'s>> = Vec::new();
    let mut dyn_shared: HashMap<&'s str, usize> = HashMap::new();
    let proto_keys: HashSet<Key> = plan.prototypes.iter().copied().collect();
    for (m, module) in modules.into_iter().enumerate() {
        let ren = &renames[m];
        let rn = |n: &'s str| -> &'s str { ren.get(n).copied().unwrap_or(n) };
        let max_file = module
            .items
            .iter()
            .filter_map(|it| match it {
                Item::File { index, .. } => Some(*index),
                _ => None,
            })
            .max()
            .unwrap_or(0);
        for (i, item) in module.items.into_iter().enumerate() {
            match item {
                Item::Pragma(p, span) => {
                    if !pragmas
                        .iter()
                        .any(|q| matches!(q, Item::Pragma(x, _) if *x == p))
                    {
                        pragmas.push(Item::Pragma(p, span));
                    }
                }
                Item::File {
                    index,
                    name,
                    timestamp,
                    size,
                    span,
                } => files.push(Item::File {
                    index: index + file_offset,
                    name,
                    timestamp,
                    size,
                    span,
                }),
                Item::Section(_) => {}
                Item::Alias {
                    alias,
                    aliasee,
                    span,
                } => aliases.push(Item::Alias {
                    alias: rn(alias),
                    aliasee: rn(aliasee),
                    span,
                }),
                Item::Var(v) if is_dynamic_shared(&v) => {
                    for n in &v.names {
                        let mut one = v.clone();
                        one.names = vec![n.clone()];
                        match dyn_shared.get(n.name) {
                            Some(&at) => {
                                let a = vars[at].align.max(v.align);
                                vars[at].align = a;
                            }
                            None => {
                                dyn_shared.insert(n.name, vars.len());
                                vars.push(one);
                            }
                        }
                    }
                }
                Item::Var(v) => {
                    for (k, n) in v.names.iter().enumerate() {
                        let s = by_key[&(m, i, k)];
                        if plan.dropped.contains(&key(s)) {
                            continue;
                        }
                        let mut one = v.clone();
                        let mut n = n.clone();
                        n.name = rn(n.name);
                        if let Some(init) = &mut n.init {
                            rename_init(init, &|x| rn(x));
                        }
                        one.names = vec![n];
                        vars.push(one);
                    }
                }
                Item::Function(mut f) => {
                    let k = (m, i, 0);
                    if let Some(rets) = widened_rets.get(&k) {
                        f.rets = rets.clone();
                    }
                    if proto_keys.contains(&k) && f.body.is_some() {
                        protos.push(Item::Function(Box::new(Function {
                            kind: f.kind,
                            linkage: f.linkage,
                            name: rn(f.name),
                            name_span: f.name_span,
                            rets: f.rets.clone(),
                            params: f.params.clone(),
                            directives: f
                                .directives
                                .iter()
                                .filter(|d| matches!(d, FnDirective::NoReturn(_)))
                                .cloned()
                                .collect(),
                            body: None,
                            span: f.span,
                        })));
                    }
                    // Kept externs, and prototypes an `.alias` defines, stay declarations.
                    let alias_def = f.body.is_none() && by_key[&k].defined;
                    if plan.kept_externs.contains(&k) || (alias_def && !plan.dropped.contains(&k)) {
                        f.name = rn(f.name);
                        protos.push(Item::Function(f));
                        continue;
                    }
                    if plan.dropped.contains(&k) || f.body.is_none() {
                        continue;
                    }
                    f.name = rn(f.name);
                    let mut shadow: HashSet<&str> = HashSet::new();
                    let mut prefixes: Vec<&str> = Vec::new();
                    for p in f.rets.iter().chain(&f.params) {
                        shadow.insert(p.name);
                    }
                    if let Some(b) = &f.body {
                        local_names(b, &mut shadow, &mut prefixes);
                    }
                    let local = |n: &str| {
                        shadow.contains(n)
                            || prefixes.iter().any(|p| {
                                n.strip_prefix(p)
                                    .is_some_and(|d| d.bytes().all(|b| b.is_ascii_digit()))
                            })
                    };
                    let map = |n: &'s str| -> &'s str {
                        if local(n) {
                            n
                        } else {
                            rn(n)
                        }
                    };
                    if let Some(b) = &mut f.body {
                        rewrite_block(b, &map, file_offset);
                    }
                    funcs.push(Item::Function(f));
                }
            }
        }
        file_offset += max_file;
    }
    let mut items = pragmas;
    items.extend(files);
    items.extend(protos);
    items.extend(order_vars(vars).into_iter().map(Item::Var));
    items.extend(funcs);
    items.extend(aliases);
    let mut target = header.target;
    if let Some(a) = header.arch_text {
        target.insert(0, a);
    }
    Module {
        version: header.version,
        version_span: Span::default(),
        target_span: Span::default(),
        target,
        address_size: header.address_size,
        items,
    }
}

/// A target's spelling as static text (the AST borrows its strings, and a merged `sm_XXXf`
/// target is no input's spelling; every target that exists is in the table).
fn static_arch_name(a: &str) -> Option<&'static str> {
    crate::isa::requirements::ARCH_MIN_VERSION
        .iter()
        .map(|(n, _)| *n)
        .find(|n| *n == a)
}

/// Variables in an order where each initializer's names are declared first (stable: input
/// order where nothing forces another).
fn order_vars(vars: Vec<VarDecl>) -> Vec<VarDecl> {
    let names: HashMap<&str, usize> = vars
        .iter()
        .enumerate()
        .map(|(i, v)| (v.names[0].name, i))
        .collect();
    let deps: Vec<Vec<usize>> = vars
        .iter()
        .map(|v| {
            let mut d = Vec::new();
            if let Some(init) = &v.names[0].init {
                init_names(init, &mut |n| {
                    if let Some(&j) = names.get(n) {
                        d.push(j);
                    }
                });
            }
            d
        })
        .collect();
    // 0 unvisited, 1 in progress, 2 done.
    let mut state = vec![0u8; vars.len()];
    let mut order = Vec::with_capacity(vars.len());
    fn visit(i: usize, deps: &[Vec<usize>], state: &mut [u8], order: &mut Vec<usize>) {
        if state[i] != 0 {
            return;
        }
        state[i] = 1;
        for &j in &deps[i] {
            visit(j, deps, state, order);
        }
        state[i] = 2;
        order.push(i);
    }
    for i in 0..vars.len() {
        visit(i, &deps, &mut state, &mut order);
    }
    let mut slots: Vec<Option<VarDecl>> = vars.into_iter().map(Some).collect();
    order
        .into_iter()
        .map(|i| slots[i].take().expect("each variable once"))
        .collect()
}

/// Names a function body declares (they shadow module-level names), and the prefixes of its
/// parameterized register declarations (`%r<8>`).
fn local_names<'s>(b: &Block<'s>, out: &mut HashSet<&'s str>, prefixes: &mut Vec<&'s str>) {
    for st in &b.stmts {
        match st {
            Statement::Var(v) => {
                for n in &v.names {
                    if n.count.is_some() {
                        prefixes.push(n.name);
                    } else {
                        out.insert(n.name);
                    }
                }
            }
            Statement::Label(l, _) => {
                out.insert(l);
            }
            Statement::Block(b) => local_names(b, out, prefixes),
            Statement::CallPrototype(p) => {
                out.insert(p.name);
            }
            Statement::CallTargets { name, .. } | Statement::BranchTargets { name, .. } => {
                out.insert(name);
            }
            _ => {}
        }
    }
}

fn rewrite_block<'s>(b: &mut Block<'s>, map: &dyn Fn(&'s str) -> &'s str, file_offset: u32) {
    for st in &mut b.stmts {
        match st {
            Statement::Instr(ins) => {
                for op in &mut ins.operands {
                    rename_operand(op, map);
                }
            }
            Statement::Block(b) => rewrite_block(b, map, file_offset),
            Statement::Var(v) => {
                for n in &mut v.names {
                    if let Some(i) = &mut n.init {
                        rename_init(i, map);
                    }
                }
            }
            Statement::CallTargets { targets, .. } => {
                for t in targets {
                    *t = map(t);
                }
            }
            Statement::Loc(l) => {
                l.file += file_offset;
                // `function_name` names a label of the dropped `.debug_str` section.
                l.inlined = None;
            }
            _ => {}
        }
    }
}

fn rename_operand<'s>(op: &mut Operand<'s>, map: &dyn Fn(&'s str) -> &'s str) {
    match op {
        Operand::Name { name, .. } => *name = map(name),
        Operand::Imm(e) => rename_expr(e, map),
        Operand::Addr(a) => {
            if let Some(b) = &mut a.base {
                *b = map(b);
            }
        }
        Operand::AddrList(v, _) | Operand::Vec(v, _) | Operand::List(v, _) => {
            for o in v {
                rename_operand(o, map)
            }
        }
        Operand::Pair(a, b, _) => {
            rename_operand(a, map);
            rename_operand(b, map);
        }
        Operand::Sink(_) => {}
    }
}

fn rename_expr<'s>(e: &mut Expr<'s>, map: &dyn Fn(&'s str) -> &'s str) {
    match e {
        Expr::Sym(n, _) | Expr::Generic(n, _) => *n = map(n),
        Expr::Mask(_, e, _) | Expr::Unary(_, e, _) | Expr::Cast(_, e, _) => rename_expr(e, map),
        Expr::Binary(_, a, b, _) => {
            rename_expr(a, map);
            rename_expr(b, map);
        }
        Expr::Cond(c, a, b, _) => {
            rename_expr(c, map);
            rename_expr(a, map);
            rename_expr(b, map);
        }
        Expr::Int { .. } | Expr::F32(..) | Expr::F64(..) => {}
    }
}

fn rename_init<'s>(i: &mut Initializer<'s>, map: &dyn Fn(&'s str) -> &'s str) {
    match i {
        Initializer::Expr(e) => rename_expr(e, map),
        Initializer::List(v, _) => {
            for x in v {
                rename_init(x, map)
            }
        }
        Initializer::Field(..) => {}
    }
}

#[cfg(test)]
mod tests;
