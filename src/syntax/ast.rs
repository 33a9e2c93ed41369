//! The PTX abstract syntax tree. It borrows identifiers from the source text (no copies) and
//! carries a `Span` on every node that a diagnostic may point at. Opcodes and modifiers are the
//! typed enums generated from the instruction-set declaration (`crate::isa`).

use smallvec::SmallVec;

use super::span::Span;
use crate::isa::{Mod, Opcode};

/// A whole PTX module (one `.ptx` file).
#[derive(Debug, Clone, PartialEq)]
pub struct Module<'a> {
    /// `.version MAJOR.MINOR`
    pub version: (u32, u32),
    /// Where the `.version` directive is (empty when it is missing).
    pub version_span: Span,
    /// Where the `.target` directive is (empty when it is missing).
    pub target_span: Span,
    /// `.target` strings in order, e.g. `["sm_90a", "debug"]`.
    pub target: Vec<&'a str>,
    /// `.address_size 32|64`; PTX's default is 32 when absent.
    pub address_size: Option<u32>,
    pub items: Vec<Item<'a>>,
}

impl<'a> Module<'a> {
    /// Every instruction of the module's function bodies, nested blocks included, in source
    /// order (what tools and tests that look at instructions one by one want).
    pub fn instructions(&self) -> Vec<&Instruction<'a>> {
        let mut out = Vec::new();
        for item in &self.items {
            if let Item::Function(f) = item {
                if let Some(b) = &f.body {
                    b.walk_instructions(&mut out);
                }
            }
        }
        out
    }
}

/// A module-level item.
#[derive(Debug, Clone, PartialEq)]
pub enum Item<'a> {
    Function(Box<Function<'a>>),
    Var(VarDecl<'a>),
    /// `.file N "name" {, timestamp, size}`
    File {
        index: u32,
        name: &'a str,
        timestamp: Option<u64>,
        size: Option<u64>,
        span: Span,
    },
    /// `.section .debug_xxx { ... }`
    Section(Section<'a>),
    /// `.alias alias, aliasee;`
    Alias {
        alias: &'a str,
        aliasee: &'a str,
        span: Span,
    },
    /// `.pragma "..." ;` at module scope.
    Pragma(Vec<&'a str>, Span),
}

/// `.section .debug_xxx { ... }` — DWARF data emitted by `-G`/`-lineinfo` compilers.
#[derive(Debug, Clone, PartialEq)]
pub struct Section<'a> {
    /// Section name including the dot, e.g. `.debug_info`.
    pub name: &'a str,
    pub entries: Vec<SectionEntry<'a>>,
    pub span: Span,
}

#[derive(Debug, Clone, PartialEq)]
pub enum SectionEntry<'a> {
    Label(&'a str, Span),
    /// Consecutive `.b8` lines of plain byte constants, stored compactly.
    Bytes(Vec<u8>, Span),
    /// `.b32 label+4` / `.b64 .debug_abbrev` / other data lines
    Data {
        width: Mod,
        values: Vec<Expr<'a>>,
        span: Span,
    },
}

/// Linkage/visibility keywords that may precede functions and variables.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Linkage {
    #[default]
    None,
    Visible,
    Extern,
    Weak,
    Common,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FnKind {
    Entry,
    Func,
}

/// `.entry` or `.func`, a declaration (no body) or a definition.
#[derive(Debug, Clone, PartialEq)]
pub struct Function<'a> {
    pub kind: FnKind,
    pub linkage: Linkage,
    pub name: &'a str,
    pub name_span: Span,
    /// Return parameters of a `.func` (the parenthesised list before the name).
    pub rets: Vec<Param<'a>>,
    pub params: Vec<Param<'a>>,
    /// Performance-tuning and other function directives (`.maxntid`, `.noreturn`, …).
    pub directives: Vec<FnDirective<'a>>,
    pub body: Option<Block<'a>>,
    pub span: Span,
}

/// A directive between a function's header and its body.
#[derive(Debug, Clone, PartialEq)]
pub enum FnDirective<'a> {
    MaxNTid(SmallVec<[u32; 3]>, Span),
    ReqNTid(SmallVec<[u32; 3]>, Span),
    MinNCtaPerSm(u32, Span),
    MaxNCtaPerSm(u32, Span),
    MaxNReg(u32, Span),
    ReqNCtaPerCluster(SmallVec<[u32; 3]>, Span),
    MaxClusterRank(u32, Span),
    ExplicitCluster(Span),
    BlocksAreClusters(Span),
    NoReturn(Span),
    /// `.abi_preserve N` / `.abi_preserve_control N`
    AbiPreserve {
        control: bool,
        value: u32,
        span: Span,
    },
    Pragma(Vec<&'a str>, Span),
}

/// A parameter of `.entry`/`.func` (or of a `.callprototype`).
#[derive(Debug, Clone, PartialEq)]
pub struct Param<'a> {
    /// `.param` or `.reg` (device functions may take register parameters).
    pub space: Mod,
    pub align: Option<u32>,
    pub ty: Mod,
    pub vector: Option<u8>,
    /// `.ptr {.space} {.align N}` attributes of a kernel pointer parameter.
    pub ptr: Option<PtrAttr>,
    /// Parameter name; `_` in `.callprototype` parameter lists.
    pub name: &'a str,
    /// Array dimensions; `None` for `[]`.
    pub array: SmallVec<[Option<u64>; 1]>,
    pub span: Span,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PtrAttr {
    pub space: Option<Mod>,
    pub align: Option<u32>,
}

/// `{ statements }` — a function body or a nested scope.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Block<'a> {
    pub stmts: Vec<Statement<'a>>,
    pub span: Span,
}

impl<'a> Block<'a> {
    /// The block's instructions, nested blocks included, in source order: the `NodeId`
    /// numbering (instruction `k` of a function's body is `NodeId(k)`).
    pub fn instructions(&self) -> Vec<&Instruction<'a>> {
        let mut out = Vec::new();
        self.walk_instructions(&mut out);
        out
    }

    fn walk_instructions<'m>(&'m self, out: &mut Vec<&'m Instruction<'a>>) {
        for s in &self.stmts {
            match s {
                Statement::Instr(i) => out.push(i),
                Statement::Block(b) => b.walk_instructions(out),
                _ => {}
            }
        }
    }
}

/// The place of an instruction in its function's body: `NodeId(k)` is the `k`-th instruction
/// met in source order, nested blocks included (`Block::instructions`). Unlike `InstrId`, it
/// tells apart the copies of one parsed instruction in a body a later stage rewrote (the cpu
/// target's thread loops inline device functions into kernels and insert yields), so it is
/// what per-function tables of such a body are keyed by; the lowering says which instruction
/// it is lowering by it (`lower::FnState::node`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct NodeId(pub u32);

#[derive(Debug, Clone, PartialEq)]
pub enum Statement<'a> {
    Label(&'a str, Span),
    Instr(Instruction<'a>),
    Var(VarDecl<'a>),
    Block(Block<'a>),
    /// `.loc file line col {, function_name label {+ off}, inlined_at f l c}`
    Loc(Loc<'a>),
    Pragma(Vec<&'a str>, Span),
    /// `name: .callprototype (rets) _ (params) {.noreturn} {.abi_preserve N};`
    CallPrototype(CallPrototype<'a>),
    /// `name: .calltargets f1, f2;`
    CallTargets {
        name: &'a str,
        targets: Vec<&'a str>,
        span: Span,
    },
    /// `name: .branchtargets L1, L2;`
    BranchTargets {
        name: &'a str,
        targets: Vec<&'a str>,
        span: Span,
    },
}

#[derive(Debug, Clone, PartialEq)]
pub struct Loc<'a> {
    pub file: u32,
    pub line: u32,
    pub col: u32,
    /// `function_name label{+off}, inlined_at f l c`
    pub inlined: Option<InlinedAt<'a>>,
    pub span: Span,
}

#[derive(Debug, Clone, PartialEq)]
pub struct InlinedAt<'a> {
    pub function_name: &'a str,
    pub offset: i64,
    pub file: u32,
    pub line: u32,
    pub col: u32,
}

#[derive(Debug, Clone, PartialEq)]
pub struct CallPrototype<'a> {
    pub name: &'a str,
    pub rets: Vec<Param<'a>>,
    pub params: Vec<Param<'a>>,
    pub noreturn: bool,
    pub abi_preserve: Vec<(bool, u32)>,
    pub span: Span,
}

/// A variable declaration in any state space, module-level or inside a function.
#[derive(Debug, Clone, PartialEq)]
pub struct VarDecl<'a> {
    pub linkage: Linkage,
    /// `.reg`, `.global`, `.shared`, `.shared::cta`, `.const`, `.local`, `.param`, `.tex`, …
    pub space: Mod,
    pub align: Option<u32>,
    /// `.v2`/`.v4`/`.v8` element count.
    pub vector: Option<u8>,
    /// Element type; opaque types (`.texref`, `.samplerref`, `.surfref`) are types too.
    pub ty: Mod,
    /// `.ptr` attributes are not allowed here; `.attribute(...)` entries are.
    pub attributes: Vec<Attribute>,
    pub names: Vec<DeclName<'a>>,
    pub span: Span,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Attribute {
    /// `.attribute(.managed)`
    Managed,
    /// `.attribute(.unified(hi, lo))`
    Unified(u64, u64),
}

/// One declared name: `%r<100>`, `arr[4][8] = {...}`, `buf[]`.
#[derive(Debug, Clone, PartialEq)]
pub struct DeclName<'a> {
    pub name: &'a str,
    /// The `N` of a parameterised name `%r<N>` (declares `%r0` … `%r{N-1}`).
    pub count: Option<u32>,
    pub array: SmallVec<[Option<u64>; 1]>,
    pub init: Option<Initializer<'a>>,
    pub span: Span,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Initializer<'a> {
    Expr(Expr<'a>),
    List(Vec<Initializer<'a>>, Span),
    /// `name = value` inside the braces of a `.samplerref`/`.texref` initializer
    /// (`{ addr_mode_0 = clamp_to_edge, filter_mode = nearest }`).
    Field(&'a str, &'a str, Span),
}

/// A constant expression (immediate operands, initializers, array sizes).
#[derive(Debug, Clone, PartialEq)]
pub enum Expr<'a> {
    /// Integer literal; `unsigned` is true for a `U` suffix. Values are 64-bit.
    Int {
        value: u64,
        unsigned: bool,
        span: Span,
    },
    /// `0fXXXXXXXX` single-precision bit pattern.
    F32(u32, Span),
    /// `0dXXXXXXXXXXXXXXXX` double bit pattern, or a decimal floating-point literal.
    F64(u64, Span),
    /// A symbol: variable, function or label name (in initializers and address expressions).
    Sym(&'a str, Span),
    /// `generic(sym)` in an initializer.
    Generic(&'a str, Span),
    /// `0xff00(expr)`: the mask operator of initializers (PTX 7.1+): extracts the masked bytes.
    Mask(u64, Box<Expr<'a>>, Span),
    Unary(UnOp, Box<Expr<'a>>, Span),
    Binary(BinOp, Box<Expr<'a>>, Box<Expr<'a>>, Span),
    Cond(Box<Expr<'a>>, Box<Expr<'a>>, Box<Expr<'a>>, Span),
    /// `(.s64) expr` / `(.u64) expr`
    Cast(Mod, Box<Expr<'a>>, Span),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UnOp {
    Neg,
    Not,
    LogNot,
    Plus,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BinOp {
    Mul,
    Div,
    Rem,
    Add,
    Sub,
    Shl,
    Shr,
    Lt,
    Gt,
    Le,
    Ge,
    Eq,
    Ne,
    And,
    Xor,
    Or,
    LogAnd,
    LogOr,
}

/// `@p` / `@!p`
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Guard<'a> {
    pub pred: &'a str,
    pub negated: bool,
    pub span: Span,
}

/// One instruction statement.
#[derive(Debug, Clone, PartialEq)]
pub struct Instruction<'a> {
    pub guard: Option<Guard<'a>>,
    pub opcode: Opcode,
    /// Modifiers in source order (`.rn`, `.f32`, `.global`, `.L2::cache_hint`, …).
    pub mods: SmallVec<[Mod; 4]>,
    pub operands: Vec<Operand<'a>>,
    /// Modifiers written after an operand (`a.b1`, `[a].unified`) are the last entries of
    /// `mods`; this records the operand each follows (see `post_mods()`; at most
    /// `MAX_POST_MODS`, kept in a few bytes that would otherwise be padding).
    pub post_ops: PostOps,
    /// The whole instruction, guard to `;` exclusive.
    pub span: Span,
    /// The opcode word and its modifiers.
    pub op_span: Span,
    /// Which instruction of its module this is: the parser numbers them in source order, and
    /// the check stage's output (`check::ModuleInfo`) is indexed by it.
    pub id: InstrId,
}

/// The number of an instruction in its module (source order, from 0): the key of the tables
/// later stages attach to instructions. Instructions a later stage builds (the cpu target's
/// rewrites) are [`InstrId::SYNTHETIC`]; copies of a parsed instruction keep its number.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct InstrId(pub u32);

impl InstrId {
    /// An instruction no parser numbered: it has no entry in any table.
    pub const SYNTHETIC: InstrId = InstrId(u32::MAX);
}

/// Vector component selector `.x .y .z .w` (also `.r .g .b .a`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Component {
    X,
    Y,
    Z,
    W,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Operand<'a> {
    /// A register, special register, variable, function or label name, optionally with a
    /// vector component (`%tid.x`, `%v.y`) and negation (`!p` in `setp`'s `c` operand).
    Name {
        name: &'a str,
        comp: Option<Component>,
        negated: bool,
        span: Span,
    },
    /// An immediate constant expression (`1`, `0f3F800000`, `-4`, `sym+8`, `(1<<3)`).
    Imm(Expr<'a>),
    /// `[base]`, `[base+off]`, `[off]`.
    Addr(Address<'a>),
    /// `[tex, {a, b}]`, `[tex, sampler, {…}]`, `[tensorMap, {c0, c1}]` — a bracketed list.
    AddrList(Vec<Operand<'a>>, Span),
    /// `{a, b, _, d}`
    Vec(Vec<Operand<'a>>, Span),
    /// `(a, b)` argument lists of `call`.
    List(Vec<Operand<'a>>, Span),
    /// `d|p` — two destinations.
    Pair(Box<Operand<'a>>, Box<Operand<'a>>, Span),
    /// `_`
    Sink(Span),
}

#[derive(Debug, Clone, PartialEq)]
pub struct Address<'a> {
    /// Register or symbol base; `None` for an absolute `[imm]` address.
    pub base: Option<&'a str>,
    /// Byte offset added to `base` (constant expressions are folded by the parser).
    pub offset: i64,
    pub span: Span,
}

impl Operand<'_> {
    pub fn span(&self) -> Span {
        match self {
            Operand::Name { span, .. }
            | Operand::AddrList(_, span)
            | Operand::Vec(_, span)
            | Operand::List(_, span)
            | Operand::Pair(_, _, span)
            | Operand::Sink(span) => *span,
            Operand::Imm(e) => e.span(),
            Operand::Addr(a) => a.span,
        }
    }
}

impl<'a> Expr<'a> {
    /// Calls `f` with every name the expression mentions (`Sym` and `Generic`), in order.
    pub fn each_name(&self, f: &mut dyn FnMut(&'a str, Span)) {
        match self {
            Expr::Sym(n, span) | Expr::Generic(n, span) => f(n, *span),
            Expr::Mask(_, e, _) | Expr::Unary(_, e, _) | Expr::Cast(_, e, _) => e.each_name(f),
            Expr::Binary(_, a, b, _) => {
                a.each_name(f);
                b.each_name(f);
            }
            Expr::Cond(c, a, b, _) => {
                c.each_name(f);
                a.each_name(f);
                b.each_name(f);
            }
            Expr::Int { .. } | Expr::F32(..) | Expr::F64(..) => {}
        }
    }

    pub fn span(&self) -> Span {
        match self {
            Expr::Int { span, .. }
            | Expr::F32(_, span)
            | Expr::F64(_, span)
            | Expr::Sym(_, span)
            | Expr::Generic(_, span)
            | Expr::Mask(_, _, span)
            | Expr::Unary(_, _, span)
            | Expr::Binary(_, _, _, span)
            | Expr::Cond(_, _, _, span)
            | Expr::Cast(_, _, span) => *span,
        }
    }
}

/// Operand indices of the modifiers written after operands, in order; `u8::MAX` = unused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PostOps(pub [u8; MAX_POST_MODS]);

/// How many modifiers may follow operands in one instruction (video instructions have three:
/// `d.dsel, a.asel, b.bsel`).
pub const MAX_POST_MODS: usize = 3;

impl Default for PostOps {
    fn default() -> PostOps {
        PostOps([u8::MAX; MAX_POST_MODS])
    }
}

impl Instruction<'_> {
    pub fn has(&self, m: Mod) -> bool {
        self.mods.contains(&m)
    }

    /// The modifiers written after operands, with the index of the operand each follows.
    pub fn post_mods(&self) -> impl Iterator<Item = (usize, Mod)> + '_ {
        let n = self
            .post_ops
            .0
            .iter()
            .take_while(|&&k| k != u8::MAX)
            .count();
        let tail = &self.mods[self.mods.len().saturating_sub(n)..];
        self.post_ops
            .0
            .iter()
            .zip(tail)
            .map(|(&k, &m)| (k as usize, m))
    }
}

/// The AST is covariant in its source lifetime: a `&'a Module<'a>` is also a
/// `&'b Module<'b>` for any shorter `'b`, so a caller can lend a module it owns for as long
/// as it likes (`ptx2llvm run`), and a later stage can mix the module's nodes with nodes it
/// builds in an arena of its own (the cpu target's rewritten kernels). This compiles only
/// while that holds (a `SmallVec` of nodes, whose item type is an associated type, would make
/// the AST invariant: hence `Vec` for operands and declared names).
#[allow(dead_code)]
fn covariant<'a: 'b, 'b>(m: &'a Module<'a>) -> &'b Module<'b> {
    m
}
