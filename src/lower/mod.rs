//! The shared lowering from the PTX AST to LLVM IR. It decides what each instruction means;
//! one file per instruction family (`int`, `float`, `convert`, `bits`, `memory`, `atomic`,
//! `control`, `call`, `warp`, `sreg`, `inline_asm`). What differs per target goes through the
//! `Target` trait (`target.rs`). It reads each instruction as the check stage decoded it
//! (`Ins`, from `check::ModuleInfo`): modifiers as typed `Mod`s of the matched form, never by
//! spelling.
//!
//! Model: every PTX register is an `alloca` of its declared type in the entry block (SROA and
//! mem2reg make SSA of them at -O1+); a register's declared type decides its storage type, an
//! instruction's type decides the operation type, and `coerce` converts between them by the
//! rules of PTX ISA §"Operand Size Exceeding Instruction-Type Size". Parameters become LLVM
//! arguments; `.param` variables declared in a body (call arguments) are allocas that SROA
//! removes. Instructions with no LLVM equivalent become inline PTX assembly.

pub mod atomic;
pub mod bits;
pub mod call;
pub mod control;
pub mod convert;
pub mod debug;
pub mod float;
pub mod fp;
pub mod inline_asm;
pub mod int;
pub mod memory;
pub mod module;
pub mod realized;
pub mod target;
pub mod types;
pub mod video;

use std::collections::HashMap;

use crate::check::ModuleInfo;
use crate::isa::decoded::Decoded;
use crate::isa::{Mod, Opcode};
use crate::llvm::*;
use crate::syntax::ast::{self, Expr, Instruction, Operand};
use crate::syntax::span::Span;
pub use target::{ApproxOp, RoundedOp, Rounding, Space, Target};
pub use types::{Ty, K};

/// A lowering error, with the span of the instruction or declaration at fault.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("{msg}")]
    Unsupported { msg: String, span: Span },
    #[error("{msg}")]
    Invalid { msg: String, span: Span },
    #[error("LLVM: {0}")]
    Llvm(String),
}

impl Error {
    pub fn span(&self) -> Option<Span> {
        match self {
            Error::Unsupported { span, .. } | Error::Invalid { span, .. } => Some(*span),
            Error::Llvm(_) => None,
        }
    }
}

pub(crate) fn invalid(span: Span, msg: impl Into<String>) -> Error {
    Error::Invalid {
        msg: msg.into(),
        span,
    }
}

/// A module-level symbol.
#[derive(Clone, Copy)]
pub enum Sym<'c> {
    /// A variable: pointer in the state space's address space.
    Var {
        ptr: PointerValue<'c>,
        space: Space,
    },
    Func(FunctionValue<'c>),
}

/// A function signature in PTX terms (for calls).
#[derive(Clone)]
pub struct Sig<'c> {
    pub rets: Vec<ParamKind<'c>>,
    pub params: Vec<ParamKind<'c>>,
    pub fn_ty: FunctionType<'c>,
}

/// How one PTX parameter travels in LLVM.
#[derive(Clone, Copy)]
pub enum ParamKind<'c> {
    /// A scalar of this LLVM type.
    Scalar(BasicTypeEnum<'c>),
    /// An array/aggregate of `size` bytes passed `byval` (arguments) or as `[size x i8]`
    /// (return values).
    Bytes { size: u32, align: u32 },
}

/// A register declaration; parameterised declarations (`%r<100>`) are expanded lazily.
#[derive(Clone, Copy)]
struct RegDecl {
    id: u32,
    ty: Ty,
    count: Option<u32>,
    vector: Option<u8>,
}

/// A function parameter or local `.param` variable.
#[derive(Clone, Copy)]
pub enum ParamSlot<'c> {
    /// An argument value (scalar `.param` of the function).
    Arg {
        val: BasicValueEnum<'c>,
        spill: Option<PointerValue<'c>>,
    },
    /// Memory (byval argument, return slot, call argument slot).
    Mem(PointerValue<'c>),
}

/// Per-function state.
pub struct FnState<'c, 'a> {
    pub func: FunctionValue<'c>,
    pub name: &'a str,
    pub alloca_bb: BasicBlock<'c>,
    reg_decls: HashMap<&'a str, RegDecl>,
    regs: HashMap<(u32, String), (PointerValue<'c>, BasicTypeEnum<'c>, Ty)>,
    pub params: HashMap<&'a str, ParamSlot<'c>>,
    pub local_vars: HashMap<&'a str, Sym<'c>>,
    pub labels: HashMap<&'a str, BasicBlock<'c>>,
    /// Return values: slot (memory) or register name, with their kinds.
    pub rets: Vec<(RetSlot<'a, 'c>, ParamKind<'c>)>,
    pub cc: Option<PointerValue<'c>>,
    pub branch_targets: HashMap<&'a str, Vec<&'a str>>,
    /// `.calltargets` lists: an indirect call naming one takes the signature of its functions.
    pub call_targets: HashMap<&'a str, Vec<&'a str>>,
    /// Blocks holding a statement-level `.pragma "nounroll";`: the headers of loops that must
    /// not be unrolled.
    pub nounroll: Vec<BasicBlock<'c>>,
    /// The last `.loc` seen (file index, line, column): the source position of the
    /// instructions that follow it.
    pub loc: Option<(u32, u32, u32)>,
    pub prototypes: HashMap<&'a str, &'a ast::CallPrototype<'a>>,
    pub is_kernel: bool,
    /// Global integer additions go through the runtime's per-worker sums
    /// (`Target::private_reductions`).
    pub private_reds: bool,
    /// Debug metadata of the function (`Lowerer::debug`), when it has positions.
    pub dbg: Option<debug::FnDebug<'c>>,
    counter: u32,
    /// The body's instructions by `ast::NodeId` (`Block::instructions`), and the one being
    /// lowered: a target's hooks find their per-instruction plans by it (the thread loops'
    /// stops and probe branches), and lower an instruction again by number (`lower_node`).
    pub nodes: Vec<&'a Instruction<'a>>,
    pub node: ast::NodeId,
    /// The number the next instruction of the statement walk gets.
    next_node: u32,
}

#[derive(Clone, Copy)]
pub enum RetSlot<'a, 'c> {
    Mem(PointerValue<'c>),
    Reg(&'a str),
}

/// The lowering of one module.
pub struct Lowerer<'c, 'a> {
    pub ctx: &'c Context,
    pub module: Module<'c>,
    pub b: Builder<'c>,
    pub target: &'c dyn Target,
    pub syms: HashMap<&'a str, Sym<'c>>,
    pub sigs: HashMap<&'a str, Sig<'c>>,
    pub addr64: bool,
    pub sm: u32,
    /// A module-level `.pragma "nounroll";`: no loop of the module is unrolled.
    pub nounroll: bool,
    /// `.file` names by index, for source positions in runtime messages.
    pub files: HashMap<u32, String>,
    /// Alias scopes of the state spaces (targets with `Target::disjoint_spaces`).
    pub scopes: std::cell::OnceCell<crate::llvm::SpaceScopes>,
    /// Debug metadata (`enable_debug`); `None`: none at all.
    pub debug: Option<debug::ModuleDebug<'c>>,
    /// What the check stage decoded: every instruction is read through it (`Ins`).
    pub info: &'c ModuleInfo,
    /// State a target keeps while it lowers one function and reads back in its hooks (the
    /// cpu target's thread loops: the stops, frame slots and constants of the `K.step` being
    /// built). The lowering owns it, so no compiler state lives in a thread-local; the target
    /// that installs it takes it back when the function is done.
    pub target_state: std::cell::RefCell<Option<Box<dyn std::any::Any>>>,
    /// How each instruction was realized (native or inline assembly), for the coverage test.
    pub realized: realized::Log,
}

/// An instruction as the lowering reads it: the AST node (operands, guard, spans) and its
/// decoding by the check stage (`check::ModuleInfo`): which form it is and its modifiers,
/// typed. Lowering code asks about modifiers only through this (`has(Mod::Ftz)`,
/// `rounding()`, `space()`), never by spelling, so it understands an instruction exactly as
/// `check` accepted it, whatever order its modifiers were written in.
pub struct Ins<'i, 'a> {
    pub i: &'i Instruction<'a>,
    /// The check's decoding; decoded here only for instructions a target built after the
    /// check (`InstrId::SYNTHETIC`).
    pub d: std::borrow::Cow<'i, Decoded>,
    pub op: &'static str,
    /// The type modifiers with a lowering type, dtype before atype (`cvt.f32.s32`: f32, s32).
    pub types: smallvec::SmallVec<[Ty; 2]>,
}

impl<'i, 'a> Ins<'i, 'a> {
    /// `i` as the check decoded it (`info`). An instruction the check did not decode is an
    /// error, unless a later stage built it (`InstrId::SYNTHETIC`): that one is decoded here.
    pub fn new(info: &'i ModuleInfo, i: &'i Instruction<'a>) -> Result<Self, Error> {
        let d = match info.decoded(i) {
            Some(d) => std::borrow::Cow::Borrowed(d),
            None if i.id == ast::InstrId::SYNTHETIC => match crate::isa::decoded::decode(i) {
                Ok(d) => std::borrow::Cow::Owned(d),
                Err(_) => {
                    return Err(invalid(
                        i.span,
                        format!(
                            "internal error: `{}`, built by the translation, matches no form",
                            inline_asm::spell(i)
                        ),
                    ))
                }
            },
            None => {
                return Err(invalid(
                    i.span,
                    format!(
                        "`{}` was not decoded by the check (translate only modules that \
                         `check::check_module` accepted, with its `ModuleInfo`)",
                        inline_asm::spell(i)
                    ),
                ))
            }
        };
        let types = d.types().iter().filter_map(|m| Ty::of(*m)).collect();
        Ok(Ins {
            i,
            d,
            op: i.opcode.spelling(),
            types,
        })
    }
    /// Whether the instruction has modifier `m`.
    pub fn has(&self, m: Mod) -> bool {
        self.d.has(m)
    }
    /// The first of `ms` the instruction has (in the form's order).
    pub fn any(&self, ms: &[Mod]) -> Option<Mod> {
        self.d.mods.iter().copied().find(|x| ms.contains(x))
    }
    /// The instruction type (last type modifier).
    pub fn ty(&self) -> Ty {
        self.types.last().copied().unwrap_or(Ty::b(32))
    }
    pub fn span(&self) -> Span {
        self.i.span
    }
    pub fn ops(&self) -> &[Operand<'a>] {
        &self.i.operands
    }
    /// The (first) state space the instruction names, as an address space.
    pub fn space(&self) -> Option<Space> {
        self.d.space().and_then(Space::of)
    }
    /// The IEEE rounding modifier (`.rn .rz .rm .rp`), if any.
    pub fn rounding(&self) -> Option<Rounding> {
        self.d.rounding().and_then(Rounding::of)
    }
    /// The integer rounding modifier of `cvt` (`.rni .rzi .rmi .rpi`), if any.
    pub fn int_rounding(&self) -> Option<Mod> {
        self.d.rounding().filter(|m| m.is_int_rounding())
    }
    /// The memory ordering (`.relaxed`, `.acquire`, …, `.volatile`).
    pub fn sem(&self) -> Option<Mod> {
        self.d.sem()
    }
    /// The memory scope (`.cta .cluster .gpu .sys`).
    pub fn scope(&self) -> Option<Mod> {
        self.d.scope()
    }
    /// The comparison of `set`/`setp`/`vset*` (`.lt`, `.geu`, …).
    pub fn cmp_op(&self) -> Option<Mod> {
        self.d.cmp_op()
    }
    /// The boolean combiner of `set`/`setp` (`.and`, `.or`, `.xor`).
    pub fn bool_op(&self) -> Option<Mod> {
        self.d.bool_op()
    }
    /// The vector width from `.v2`/`.v4`/`.v8`.
    pub fn vec_width(&self) -> Option<u8> {
        self.d.vec_width()
    }
    pub fn unsupported(&self, why: &str) -> Error {
        Error::Unsupported {
            msg: format!("`{}`: {why}", inline_asm::spell(self.i)),
            span: self.i.span,
        }
    }
}

/// The 'sreg' names that are special registers (without the `%`).
pub fn is_sreg(name: &str) -> bool {
    let n = name.trim_start_matches('%');
    matches!(
        n,
        "tid"
            | "ntid"
            | "ctaid"
            | "nctaid"
            | "laneid"
            | "warpid"
            | "nwarpid"
            | "smid"
            | "nsmid"
            | "gridid"
            | "lanemask_eq"
            | "lanemask_le"
            | "lanemask_lt"
            | "lanemask_ge"
            | "lanemask_gt"
            | "clock"
            | "clock_hi"
            | "clock64"
            | "globaltimer"
            | "globaltimer_lo"
            | "globaltimer_hi"
            | "total_smem_size"
            | "aggr_smem_size"
            | "dynamic_smem_size"
            | "is_explicit_cluster"
            | "clusterid"
            | "nclusterid"
            | "cluster_ctaid"
            | "cluster_nctaid"
            | "cluster_ctarank"
            | "cluster_nctarank"
            | "current_graph_exec"
            | "reserved_smem_offset_begin"
            | "reserved_smem_offset_end"
            | "reserved_smem_offset_cap"
            | "reserved_smem_offset_0"
            | "reserved_smem_offset_1"
    ) || n.starts_with("envreg")
        || n.starts_with("pm")
}

impl<'c, 'a> Lowerer<'c, 'a> {
    pub fn new(
        ctx: &'c Context,
        target: &'c dyn Target,
        name: &str,
        addr64: bool,
        sm: u32,
        info: &'c ModuleInfo,
    ) -> Self {
        Lowerer {
            ctx,
            module: ctx.create_module(name),
            b: ctx.create_builder(),
            target,
            syms: HashMap::new(),
            sigs: HashMap::new(),
            addr64,
            sm,
            nounroll: false,
            files: HashMap::new(),
            scopes: std::cell::OnceCell::new(),
            debug: None,
            info,
            target_state: std::cell::RefCell::new(None),
            realized: realized::Log::default(),
        }
    }

    /// Builds a call to inline assembly (`llvm::inline_asm`), counted in `realized`.
    pub fn inline_asm(
        &self,
        ret: Option<inkwell::types::BasicTypeEnum<'c>>,
        args: &[inkwell::values::BasicValueEnum<'c>],
        asm: &str,
        constraints: &str,
        side_effects: bool,
    ) -> Option<inkwell::values::BasicValueEnum<'c>> {
        self.realized.inline_asm_built();
        crate::llvm::inline_asm(self.ctx, &self.b, ret, args, asm, constraints, side_effects)
    }

    /// `i` as the check decoded it (`Ins::new`).
    pub fn ins<'i>(&'i self, i: &'i Instruction<'a>) -> Result<Ins<'i, 'a>, Error> {
        Ins::new(self.info, i)
    }

    /// Attaches debug metadata to what is lowered next, as `opts` and the module ask
    /// (`lower::debug`); call before lowering `m`, and `finalize_debug` before verifying.
    pub fn enable_debug(&mut self, m: &ast::Module, opts: &debug::DebugOptions, optimized: bool) {
        let flavor = debug::Flavor {
            line_tables: self.target.line_table_kind(),
            dwarf_version: self.target.dwarf_version(),
            variables: !optimized || self.target.optimized_variables(),
        };
        self.debug = debug::ModuleDebug::new(self.ctx, &self.module, m, opts, flavor, optimized);
    }

    /// Completes the debug metadata (a no-op without any); after the last code is built.
    pub fn finalize_debug(&self) {
        if let Some(d) = &self.debug {
            d.finalize(&self.module);
        }
    }

    pub fn i1(&self) -> IntType<'c> {
        self.ctx.bool_type()
    }
    pub fn i32(&self) -> IntType<'c> {
        self.ctx.i32_type()
    }
    pub fn i64(&self) -> IntType<'c> {
        self.ctx.i64_type()
    }
    pub fn int(&self, bits: u32) -> IntType<'c> {
        int_type(self.ctx, bits)
    }
    pub fn ptr(&self, s: Space) -> PointerType<'c> {
        self.ctx
            .ptr_type(AddressSpace::from(self.target.addr_space(s)))
    }
    pub fn ptr_int(&self) -> IntType<'c> {
        if self.addr64 {
            self.i64()
        } else {
            self.i32()
        }
    }
    pub fn c32(&self, v: u64) -> IntValue<'c> {
        self.i32().const_int(v, false)
    }

    /// Calls an intrinsic (or any function) by name.
    pub fn call(
        &self,
        name: &str,
        ret: Option<BasicTypeEnum<'c>>,
        args: &[BasicValueEnum<'c>],
    ) -> Option<BasicValueEnum<'c>> {
        call_named(&self.module, &self.b, name, ret, args)
    }
    pub fn call_v(
        &self,
        name: &str,
        ret: BasicTypeEnum<'c>,
        args: &[BasicValueEnum<'c>],
    ) -> BasicValueEnum<'c> {
        self.call(name, Some(ret), args)
            .expect("non-void intrinsic")
    }

    pub fn bits_of(&self, t: BasicTypeEnum<'c>) -> u32 {
        match t {
            BasicTypeEnum::IntType(i) => i.get_bit_width(),
            BasicTypeEnum::FloatType(f) => {
                if f == self.ctx.f16_type() || f == self.ctx.bf16_type() {
                    16
                } else if f == self.ctx.f32_type() {
                    32
                } else if f == self.ctx.f64_type() {
                    64
                } else {
                    128
                }
            }
            BasicTypeEnum::VectorType(v) => v.get_size() * self.bits_of(v.get_element_type()),
            BasicTypeEnum::PointerType(_) => 64,
            BasicTypeEnum::ArrayType(a) => a.len() * self.bits_of(a.get_element_type()),
            _ => 64,
        }
    }

    /// Converts a value to `to` by PTX's rules for register/instruction type mismatch:
    /// same size → bitcast; narrower → truncate; wider → sign- or zero-extend.
    pub fn coerce(
        &self,
        v: BasicValueEnum<'c>,
        to: BasicTypeEnum<'c>,
        signed: bool,
    ) -> BasicValueEnum<'c> {
        let from = v.get_type();
        if from == to {
            return v;
        }
        let b = &self.b;
        let fb = self.bits_of(from);
        let tb = self.bits_of(to);
        // To an integer of the source's width.
        let iv: IntValue<'c> = match v {
            BasicValueEnum::IntValue(i) => i,
            BasicValueEnum::PointerValue(p) => b.build_ptr_to_int(p, self.int(fb), "").unwrap(),
            _ => b
                .build_bit_cast(v, self.int(fb), "")
                .unwrap()
                .into_int_value(),
        };
        let it = self.int(tb);
        let iv = if fb == tb {
            iv
        } else if tb == 1 {
            b.build_int_compare(IntPredicate::NE, iv, iv.get_type().const_zero(), "")
                .unwrap()
        } else if fb > tb {
            b.build_int_truncate(iv, it, "").unwrap()
        } else if signed && fb > 1 {
            b.build_int_s_extend(iv, it, "").unwrap()
        } else {
            b.build_int_z_extend(iv, it, "").unwrap()
        };
        match to {
            BasicTypeEnum::IntType(_) => iv.into(),
            BasicTypeEnum::PointerType(p) => b.build_int_to_ptr(iv, p, "").unwrap().into(),
            _ => b.build_bit_cast(iv, to, "").unwrap(),
        }
    }

    // ---- registers and operands -----------------------------------------------------------

    fn entry_alloca(
        &self,
        fs: &FnState<'c, 'a>,
        ty: BasicTypeEnum<'c>,
        name: &str,
    ) -> PointerValue<'c> {
        let cur = self.b.get_insert_block();
        // Allocas have no source position (positioning before an instruction would take its).
        let loc = self.debug.as_ref().and_then(|_| {
            let l = crate::llvm::debug::current_location(&self.b);
            crate::llvm::debug::set_location(&self.b, None);
            l
        });
        match fs.alloca_bb.get_first_instruction() {
            Some(i) => self.b.position_before(&i),
            None => self.b.position_at_end(fs.alloca_bb),
        }
        let p = self.b.build_alloca(ty, name).unwrap();
        if let Some(c) = cur {
            self.b.position_at_end(c);
        }
        if self.debug.is_some() {
            crate::llvm::debug::set_location(&self.b, loc);
        }
        p
    }

    /// An alloca of `ty` in the entry block, with alignment.
    pub fn alloca(
        &self,
        fs: &FnState<'c, 'a>,
        ty: BasicTypeEnum<'c>,
        align: u32,
        name: &str,
    ) -> PointerValue<'c> {
        let p = self.entry_alloca(fs, ty, name);
        if align > 0 {
            set_alignment(raw(p), align);
        }
        p
    }

    /// The register `name`: its alloca, storage type and declared type.
    pub fn reg(
        &self,
        fs: &mut FnState<'c, 'a>,
        name: &str,
    ) -> Option<(PointerValue<'c>, BasicTypeEnum<'c>, Ty)> {
        let decl = reg_decl(fs, name)?;
        if let Some(r) = fs.regs.get(&(decl.id, name.to_string())) {
            return Some(*r);
        }
        let mut st = decl.ty.storage(self.ctx);
        if let Some(n) = decl.vector {
            st = self.int(decl.ty.bits * n as u32).into();
        }
        let p = self.entry_alloca(fs, st, name);
        fs.regs
            .insert((decl.id, name.to_string()), (p, st, decl.ty));
        Some((p, st, decl.ty))
    }

    pub fn declare_reg(&self, fs: &mut FnState<'c, 'a>, v: &ast::VarDecl<'a>) -> Result<(), Error> {
        let ty = Ty::of(v.ty)
            .ok_or_else(|| invalid(v.span, format!("register of type `{}`", v.ty.spelling())))?;
        for n in &v.names {
            fs.counter += 1;
            fs.reg_decls.insert(
                n.name,
                RegDecl {
                    id: fs.counter,
                    ty,
                    count: n.count,
                    vector: v.vector,
                },
            );
        }
        Ok(())
    }

    /// Loads a value of PTX type `ty` from operand `op` (register, immediate, symbol, sreg).
    pub fn operand(
        &self,
        fs: &mut FnState<'c, 'a>,
        op: &Operand<'a>,
        ty: Ty,
    ) -> Result<BasicValueEnum<'c>, Error> {
        let want = ty.llvm(self.ctx);
        match op {
            Operand::Vec(items, _) if items.len() == 1 => self.operand(fs, &items[0], ty),
            Operand::Name {
                name,
                comp,
                negated,
                span,
            } => {
                let v = self.name_value(fs, name, *comp, *span)?;
                let mut v = self.coerce(v, want, ty.is_signed());
                if *negated {
                    let i = v.into_int_value();
                    v = self.b.build_not(i, "").unwrap().into();
                }
                Ok(v)
            }
            Operand::Imm(e) => self.imm(fs, e, ty),
            Operand::Addr(a) => {
                // `mov`-like use of an address expression (e.g. `[sym]` never; keep general).
                let p = self.address(fs, a, Space::Generic, op.span())?;
                Ok(self.coerce(p.into(), want, false))
            }
            _ => Err(invalid(
                op.span(),
                "expected a register or constant operand",
            )),
        }
    }

    /// The value of a named operand: register, special register, symbol address, parameter.
    pub fn name_value(
        &self,
        fs: &mut FnState<'c, 'a>,
        name: &str,
        comp: Option<ast::Component>,
        span: Span,
    ) -> Result<BasicValueEnum<'c>, Error> {
        if let Some((p, st, t)) = self.reg(fs, name) {
            let v = self.b.build_load(st, p, "").unwrap();
            if let Some(c) = comp {
                // Component of a vector register: bits slice.
                let shift = (c as u32) * t.bits;
                let iv = v.into_int_value();
                let s = self
                    .b
                    .build_right_shift(iv, iv.get_type().const_int(shift as u64, false), false, "")
                    .unwrap();
                return Ok(self
                    .b
                    .build_int_truncate(s, self.int(t.bits), "")
                    .unwrap()
                    .into());
            }
            return Ok(v);
        }
        if name.starts_with('%') && is_sreg(name) {
            let c = comp.map(|c| match c {
                ast::Component::X => 'x',
                ast::Component::Y => 'y',
                ast::Component::Z => 'z',
                ast::Component::W => 'w',
            });
            return self
                .target
                .sreg(self, &name[1..], c)
                .ok_or_else(|| Error::Unsupported {
                    msg: format!(
                        "special register `{name}` on the {} target",
                        self.target.name()
                    ),
                    span,
                });
        }
        if let Some(p) = self.sym_ptr(fs, name) {
            return Ok(self.b.build_ptr_to_int(p, self.i64(), "").unwrap().into());
        }
        if name == "WARP_SZ" {
            return Ok(self.i32().const_int(32, false).into());
        }
        Err(invalid(
            span,
            format!("unknown register or symbol `{name}`"),
        ))
    }

    /// The pointer of a symbol (variable, function, parameter) by name.
    pub fn sym_ptr(&self, fs: &mut FnState<'c, 'a>, name: &str) -> Option<PointerValue<'c>> {
        if let Some(s) = fs.local_vars.get(name).or_else(|| self.syms.get(name)) {
            return Some(match *s {
                Sym::Var { ptr, .. } => ptr,
                Sym::Func(f) => f.as_global_value().as_pointer_value(),
            });
        }
        if let Some(p) = fs.params.get(name).copied() {
            return Some(self.param_mem(fs, name, p));
        }
        None
    }

    pub fn sym_space(&self, fs: &FnState<'c, 'a>, name: &str) -> Option<Space> {
        match fs.local_vars.get(name).or_else(|| self.syms.get(name)) {
            Some(Sym::Var { space, .. }) => Some(*space),
            Some(Sym::Func(_)) => Some(Space::Generic),
            None => fs.params.get(name).map(|_| Space::Param),
        }
    }

    /// Memory holding a parameter (spilling a scalar argument on first use).
    pub fn param_mem(
        &self,
        fs: &mut FnState<'c, 'a>,
        name: &str,
        p: ParamSlot<'c>,
    ) -> PointerValue<'c> {
        match p {
            ParamSlot::Mem(m) => m,
            ParamSlot::Arg { spill: Some(m), .. } => m,
            ParamSlot::Arg { val, spill: None } => {
                let m = self.alloca(fs, val.get_type(), 0, name);
                let cur = self.b.get_insert_block().unwrap();
                let loc = self
                    .debug
                    .as_ref()
                    .and_then(|_| crate::llvm::debug::current_location(&self.b));
                match fs.alloca_bb.get_terminator() {
                    Some(t) => self.b.position_before(&t),
                    None => self.b.position_at_end(fs.alloca_bb),
                }
                self.b.build_store(m, val).unwrap();
                self.b.position_at_end(cur);
                if self.debug.is_some() {
                    crate::llvm::debug::set_location(&self.b, loc);
                }
                let key = fs.params.keys().find(|k| **k == name).copied().unwrap();
                fs.params.insert(
                    key,
                    ParamSlot::Arg {
                        val,
                        spill: Some(m),
                    },
                );
                m
            }
        }
    }

    /// An immediate of type `ty`.
    pub fn imm(
        &self,
        fs: &mut FnState<'c, 'a>,
        e: &Expr<'a>,
        ty: Ty,
    ) -> Result<BasicValueEnum<'c>, Error> {
        let want = ty.llvm(self.ctx);
        match e {
            Expr::F32(bits, _) => {
                let f = self
                    .ctx
                    .f32_type()
                    .const_float(f32::from_bits(*bits) as f64);
                let v: BasicValueEnum = if ty.k == K::F && ty.bits == 32 {
                    self.b
                        .build_bit_cast(
                            self.i32().const_int(*bits as u64, false),
                            self.ctx.f32_type(),
                            "",
                        )
                        .unwrap()
                } else if ty.is_float() {
                    self.b
                        .build_float_cast(f, self.ctx.f64_type(), "")
                        .unwrap()
                        .into()
                } else {
                    self.i32().const_int(*bits as u64, false).into()
                };
                Ok(self.fit_imm(v, ty))
            }
            Expr::F64(bits, _) => {
                let v: BasicValueEnum = if ty.is_float() {
                    self.ctx
                        .f64_type()
                        .const_float(f64::from_bits(*bits))
                        .into()
                } else {
                    self.i64().const_int(*bits, false).into()
                };
                Ok(self.fit_imm(v, ty))
            }
            _ => {
                if let Some(c) = crate::syntax::consteval::eval(e) {
                    if ty.is_float() && ty.k != K::F16x2 && ty.k != K::BF16x2 && ty.k != K::F32x2 {
                        // An integer literal with a float type is its value's bit pattern
                        // only for hex; PTX code uses it for zero in practice.
                        let iv = self.int(ty.bits).const_int(c.bits, false);
                        return Ok(self.coerce(iv.into(), want, false));
                    }
                    let iv = self.int(ty.bits.max(1)).const_int(c.bits, !c.unsigned);
                    return Ok(self.coerce(iv.into(), want, false));
                }
                // Symbolic: address arithmetic.
                let v = self.sym_expr(fs, e)?;
                Ok(self.coerce(v.into(), want, false))
            }
        }
    }

    fn fit_imm(&self, v: BasicValueEnum<'c>, ty: Ty) -> BasicValueEnum<'c> {
        let want = ty.llvm(self.ctx);
        if v.get_type() == want {
            return v;
        }
        if ty.is_float() && v.is_float_value() && want.is_float_type() {
            return self
                .b
                .build_float_cast(v.into_float_value(), want.into_float_type(), "")
                .unwrap()
                .into();
        }
        self.coerce(v, want, false)
    }

    /// An integer (pointer-sized) value of a symbolic expression (`sym`, `sym+4`, `generic(sym)`).
    pub fn sym_expr(&self, fs: &mut FnState<'c, 'a>, e: &Expr<'a>) -> Result<IntValue<'c>, Error> {
        match e {
            // `%r + imm` as a plain operand (ptxas takes it; the checker allows only that shape):
            // the register's bits, added to in 64 bits and cut to the operand type by the caller.
            Expr::Sym(s, span) if self.reg(fs, s).is_some() => {
                let v = self.name_value(fs, s, None, *span)?;
                if !v.is_int_value() {
                    return Err(invalid(*span, format!("`{s}` is not an integer register")));
                }
                Ok(self
                    .b
                    .build_int_z_extend_or_bit_cast(v.into_int_value(), self.i64(), "")
                    .unwrap())
            }
            Expr::Sym(s, span) | Expr::Generic(s, span) => {
                let p = self
                    .sym_ptr(fs, s)
                    .ok_or_else(|| invalid(*span, format!("unknown symbol `{s}`")))?;
                let p = if matches!(e, Expr::Generic(..)) {
                    self.to_generic(p)
                } else {
                    p
                };
                Ok(self.b.build_ptr_to_int(p, self.i64(), "").unwrap())
            }
            Expr::Binary(op, a, b2, span) => {
                let x = self.sym_expr(fs, a)?;
                let y = self.sym_expr(fs, b2)?;
                Ok(match op {
                    ast::BinOp::Add => self.b.build_int_add(x, y, "").unwrap(),
                    ast::BinOp::Sub => self.b.build_int_sub(x, y, "").unwrap(),
                    _ => return Err(invalid(*span, "unsupported symbolic expression")),
                })
            }
            _ => match crate::syntax::consteval::eval(e) {
                Some(c) => Ok(self.i64().const_int(c.bits, false)),
                None => Err(invalid(e.span(), "unsupported constant expression")),
            },
        }
    }

    pub fn to_generic(&self, p: PointerValue<'c>) -> PointerValue<'c> {
        let g = self.ptr(Space::Generic);
        if p.get_type() == g {
            p
        } else {
            self.b.build_address_space_cast(p, g, "").unwrap()
        }
    }

    /// The elements of a vector operand: a brace vector `{a, b}` as written, or a vector
    /// register (`.reg .v4 .f32 %v;` used whole) as its components `%v.x`, `%v.y`, ….
    pub fn vector_items(&self, fs: &FnState<'c, 'a>, op: &Operand<'a>) -> Option<Vec<Operand<'a>>> {
        match op {
            Operand::Vec(items, _) => Some(items.clone()),
            Operand::Name {
                name,
                comp: None,
                negated: false,
                span,
            } => {
                let decl = reg_decl(fs, name)?;
                let n = decl.vector?;
                let comps = [
                    ast::Component::X,
                    ast::Component::Y,
                    ast::Component::Z,
                    ast::Component::W,
                ];
                Some(
                    comps[..(n as usize).min(4)]
                        .iter()
                        .map(|&c| Operand::Name {
                            name,
                            comp: Some(c),
                            negated: false,
                            span: *span,
                        })
                        .collect(),
                )
            }
            _ => None,
        }
    }

    /// Stores `v` (of an instruction type) into the destination operand.
    pub fn set(
        &self,
        fs: &mut FnState<'c, 'a>,
        op: &Operand<'a>,
        v: BasicValueEnum<'c>,
        signed: bool,
    ) -> Result<(), Error> {
        match op {
            Operand::Name {
                name,
                comp: None,
                span,
                ..
            } => {
                let (p, st, _) = self
                    .reg(fs, name)
                    .ok_or_else(|| invalid(*span, format!("`{name}` is not a register")))?;
                let v = self.coerce(v, st, signed);
                self.b.build_store(p, v).unwrap();
                Ok(())
            }
            Operand::Name {
                name,
                comp: Some(c),
                span,
                ..
            } => {
                // One element of a vector register (`%v.y`): its bits within the register.
                let (p, st, t) = self
                    .reg(fs, name)
                    .ok_or_else(|| invalid(*span, format!("`{name}` is not a register")))?;
                let BasicTypeEnum::IntType(whole) = st else {
                    return Err(invalid(*span, format!("`{name}` is not a vector register")));
                };
                let shift = (*c as u32) * t.bits;
                if shift + t.bits > whole.get_bit_width() {
                    return Err(invalid(*span, format!("`{name}` has no such component")));
                }
                let e = self
                    .coerce(v, self.int(t.bits).into(), signed)
                    .into_int_value();
                let e = self.b.build_int_z_extend(e, whole, "").unwrap();
                let sh = whole.const_int(shift as u64, false);
                let e = self.b.build_left_shift(e, sh, "").unwrap();
                let field = whole.const_int(
                    if t.bits >= 64 {
                        u64::MAX
                    } else {
                        (1u64 << t.bits) - 1
                    },
                    false,
                );
                let keep = self
                    .b
                    .build_not(self.b.build_left_shift(field, sh, "").unwrap(), "")
                    .unwrap();
                let old = self.b.build_load(whole, p, "").unwrap().into_int_value();
                let kept = self.b.build_and(old, keep, "").unwrap();
                let new = self.b.build_or(kept, e, "").unwrap();
                self.b.build_store(p, new).unwrap();
                Ok(())
            }
            Operand::Sink(_) => Ok(()),
            Operand::Vec(items, _) if items.len() == 1 => self.set(fs, &items[0], v, signed),
            _ => Err(invalid(op.span(), "expected a destination register")),
        }
    }

    /// Pointer for an address operand `[base+off]` in state space `space`.
    pub fn address(
        &self,
        fs: &mut FnState<'c, 'a>,
        a: &ast::Address<'a>,
        space: Space,
        span: Span,
    ) -> Result<PointerValue<'c>, Error> {
        let pty = self.ptr(space);
        let base: PointerValue<'c> = match a.base {
            None => {
                let i = self.ptr_int().const_int(a.offset as u64, false);
                return Ok(self.b.build_int_to_ptr(i, pty, "").unwrap());
            }
            Some(name) => {
                if let Some((p, st, _)) = self.reg(fs, name) {
                    let v = self.b.build_load(st, p, "").unwrap();
                    let iv = self
                        .coerce(v, self.int(self.bits_of(st).max(32)).into(), false)
                        .into_int_value();
                    self.b.build_int_to_ptr(iv, pty, "").unwrap()
                } else if let Some(p) = self.sym_ptr(fs, name) {
                    if p.get_type() == pty || space == Space::Param {
                        p
                    } else if self.sym_space(fs, name) == Some(Space::Param)
                        || p.get_type() != self.ptr(Space::Generic)
                            && pty != self.ptr(Space::Generic)
                    {
                        // e.g. `ld.shared::cluster [shared_var]`
                        let g = self.to_generic(p);
                        self.b.build_address_space_cast(g, pty, "").unwrap()
                    } else {
                        self.b.build_address_space_cast(p, pty, "").unwrap()
                    }
                } else {
                    return Err(invalid(span, format!("unknown address base `{name}`")));
                }
            }
        };
        if a.offset == 0 {
            return Ok(base);
        }
        let off = self.i64().const_int(a.offset as u64, true);
        // SAFETY: `build_gep` only builds IR (a byte offset from `base`); nothing is dereferenced here.
        Ok(unsafe {
            self.b
                .build_gep(self.ctx.i8_type(), base, &[off], "")
                .unwrap()
        })
    }

    // ---- control helpers -----------------------------------------------------------------

    pub fn new_block(&self, fs: &mut FnState<'c, 'a>, name: &str) -> BasicBlock<'c> {
        fs.counter += 1;
        self.ctx
            .append_basic_block(fs.func, &format!("{name}{}", fs.counter))
    }

    /// Whether the current block already ends in a terminator.
    pub fn terminated(&self) -> bool {
        self.b
            .get_insert_block()
            .and_then(|bb| bb.get_terminator())
            .is_some()
    }

    /// Reads a predicate register as i1.
    pub fn pred(
        &self,
        fs: &mut FnState<'c, 'a>,
        name: &str,
        negated: bool,
        span: Span,
    ) -> Result<IntValue<'c>, Error> {
        let v = self.name_value(fs, name, None, span)?;
        let v = self.coerce(v, self.i1().into(), false).into_int_value();
        Ok(if negated {
            self.b.build_not(v, "").unwrap()
        } else {
            v
        })
    }

    /// The carry flag CC.CF (an i1 alloca per function).
    pub fn cc_slot(&self, fs: &mut FnState<'c, 'a>) -> PointerValue<'c> {
        if let Some(p) = fs.cc {
            return p;
        }
        let p = self.alloca(fs, self.i1().into(), 0, "cc.cf");
        fs.cc = Some(p);
        p
    }

    // ---- functions ----------------------------------------------------------------------

    pub fn lower_body(
        &mut self,
        f: &'a ast::Function<'a>,
        func: FunctionValue<'c>,
    ) -> Result<(), Error> {
        let body = f.body.as_ref().unwrap();
        let alloca_bb = self.ctx.append_basic_block(func, "entry");
        let start = self.ctx.append_basic_block(func, "start");
        let mut fs = FnState {
            func,
            name: f.name,
            alloca_bb,
            reg_decls: HashMap::new(),
            regs: HashMap::new(),
            params: HashMap::new(),
            local_vars: HashMap::new(),
            labels: HashMap::new(),
            rets: Vec::new(),
            cc: None,
            branch_targets: HashMap::new(),
            prototypes: HashMap::new(),
            call_targets: HashMap::new(),
            nounroll: Vec::new(),
            loc: None,
            is_kernel: f.kind == ast::FnKind::Entry,
            private_reds: f.kind == ast::FnKind::Entry && self.target.private_reductions(f),
            dbg: None,
            counter: 0,
            nodes: body.instructions(),
            node: ast::NodeId(0),
            next_node: 0,
        };
        self.b.position_at_end(start);
        if let Some(d) = &self.debug {
            fs.dbg = d.begin_function(f, func, &self.b);
        }
        let r = self.lower_statements(&mut fs, f, body, start);
        if let (Some(d), Some(fd)) = (&self.debug, &fs.dbg) {
            if r.is_ok() {
                let regs: Vec<_> = fs
                    .regs
                    .iter()
                    .map(|((_, name), (p, _, ty))| {
                        let vector = reg_decl(&fs, name).and_then(|d| d.vector);
                        (name.as_str(), *p, *ty, vector)
                    })
                    .collect();
                d.end_function(fd, regs.into_iter(), alloca_bb.get_terminator());
            }
        }
        if self.debug.is_some() {
            // Code built after this function (other functions, the targets' rewrites) must
            // not take its positions.
            crate::llvm::debug::set_location(&self.b, None);
        }
        r?;
        let fn_nounroll = f
            .directives
            .iter()
            .any(|d| matches!(d, ast::FnDirective::Pragma(strings, _) if has_nounroll(strings)));
        self.mark_nounroll(&fs, self.nounroll || fn_nounroll);
        Ok(())
    }

    /// The body of `lower_body`, and the branch from the allocas' block to it.
    fn lower_statements(
        &self,
        fs: &mut FnState<'c, 'a>,
        f: &'a ast::Function<'a>,
        body: &'a ast::Block<'a>,
        start: BasicBlock<'c>,
    ) -> Result<(), Error> {
        call::bind_params(self, fs, f)?;
        collect_labels(fs, body);
        self.block(fs, body)?;
        if !self.terminated() {
            call::emit_ret(self, fs)?;
        }
        self.b.position_at_end(fs.alloca_bb);
        if let (Some(d), Some(fd)) = (&self.debug, &fs.dbg) {
            d.prologue(fd, &self.b);
        }
        self.b.build_unconditional_branch(start).unwrap();
        Ok(())
    }

    /// `trap`'s runtime message: "trap instruction executed", with the source position of the
    /// last `.loc` when there is one (`at kern.cu:42:7`).
    pub fn trap_message(&self, fs: &FnState<'c, 'a>) -> String {
        let mut m = "trap instruction executed".to_string();
        if let Some((file, line, col)) = fs.loc {
            let name = self.files.get(&file).map_or("?", |s| s.as_str());
            m.push_str(&format!(" at {name}:{line}"));
            if col > 0 {
                m.push_str(&format!(":{col}"));
            }
        }
        m
    }

    /// `.pragma "nounroll"` as `!llvm.loop !{..., !{!"llvm.loop.unroll.disable"}}` on the
    /// branches into each loop header it names (every block when `all`). LLVM reads the
    /// metadata from a loop's latches and ignores it on other branches, so marking every
    /// branch into the header is exact without computing which ones are back edges.
    fn mark_nounroll(&self, fs: &FnState<'c, 'a>, all: bool) {
        let headers: std::collections::HashSet<BasicBlock<'c>> = if all {
            // Every block that can head a loop: all but the entry block.
            fs.func.get_basic_block_iter().skip(1).collect()
        } else {
            fs.nounroll.iter().copied().collect()
        };
        if headers.is_empty() {
            return;
        }
        // One pass over the terminators; each header gets one loop ID, shared by the
        // branches into it.
        let mut ids = HashMap::new();
        for bb in fs.func.get_basic_block_iter() {
            let Some(t) = bb.get_terminator() else {
                continue;
            };
            for k in 0..t.get_num_operands() {
                let Some(h) = t.get_operand(k).and_then(|o| o.block()) else {
                    continue;
                };
                if headers.contains(&h) {
                    let md = *ids
                        .entry(h)
                        .or_insert_with(|| crate::llvm::loop_unroll_disable(self.ctx));
                    crate::llvm::set_loop_metadata(self.ctx, t, md);
                }
            }
        }
    }

    /// A fresh block for code that follows a branch (the current block has ended).
    fn reopen(&self, fs: &mut FnState<'c, 'a>) {
        if self.terminated() {
            let bb = self.new_block(fs, "dead");
            self.b.position_at_end(bb);
        }
    }

    /// Takes `.loc` position `loc` for the instructions that follow.
    fn set_loc(&self, fs: &mut FnState<'c, 'a>, loc: &ast::Loc) {
        fs.loc = Some((loc.file, loc.line, loc.col));
        if let (Some(d), Some(fd)) = (&self.debug, fs.dbg.as_mut()) {
            d.loc(fd, loc);
        }
    }

    /// Makes instruction `i` the current node (`FnState::node`, the next `NodeId`), in a
    /// fresh block when the current one has ended (code after a branch).
    fn enter_node(&self, fs: &mut FnState<'c, 'a>, i: &'a ast::Instruction<'a>) {
        self.reopen(fs);
        fs.node = ast::NodeId(fs.next_node);
        fs.next_node += 1;
        debug_assert!(std::ptr::eq(fs.nodes[fs.node.0 as usize], i));
    }

    fn block(&self, fs: &mut FnState<'c, 'a>, blk: &'a ast::Block<'a>) -> Result<(), Error> {
        // Scoping: registers declared in a nested block shadow outer ones until its end.
        let saved_decls = fs.reg_decls.clone();
        // Labels are scoped to their block (and visible in nested blocks).
        let saved_labels = fs.labels.clone();
        for st in &blk.stmts {
            if let ast::Statement::Label(name, _) = st {
                let bb = self
                    .ctx
                    .append_basic_block(fs.func, name.trim_start_matches('$'));
                fs.labels.insert(name, bb);
            }
        }
        let saved_vars = fs.local_vars.clone();
        let mut k = 0;
        while k < blk.stmts.len() {
            let st = &blk.stmts[k];
            if let Some(end) = guarded_run(&blk.stmts, k) {
                self.guarded_run(fs, &blk.stmts[k..end])?;
                k = end;
                continue;
            }
            k += 1;
            match st {
                ast::Statement::Label(name, _) => {
                    let bb = fs.labels[name];
                    if !self.terminated() {
                        self.b.build_unconditional_branch(bb).unwrap();
                    }
                    self.b.position_at_end(bb);
                }
                ast::Statement::Instr(i) => {
                    self.enter_node(fs, i);
                    self.instruction(fs, i)?;
                }
                ast::Statement::Var(v) => module::local_var(self, fs, v)?,
                ast::Statement::Block(b) => self.block(fs, b)?,
                ast::Statement::CallPrototype(p) => {
                    fs.prototypes.insert(p.name, p);
                }
                ast::Statement::Loc(loc) => self.set_loc(fs, loc),
                ast::Statement::Pragma(strings, _) if has_nounroll(strings) => {
                    if let Some(bb) = self.b.get_insert_block() {
                        fs.nounroll.push(bb);
                    }
                }
                ast::Statement::BranchTargets { name, targets, .. } => {
                    fs.branch_targets.insert(name, targets.clone());
                }
                _ => {}
            }
        }
        fs.reg_decls = saved_decls;
        fs.labels = saved_labels;
        fs.local_vars = saved_vars;
        Ok(())
    }

    /// Lowers a run of statements found by [`guarded_run`]: its guarded loads, stores and
    /// moves under one test of their shared guard, the unguarded moves between them on both
    /// sides (in order, between the guarded ones, where the guard holds; alone where it does
    /// not). Why: Triton guards each element of a tile load with the same predicate
    /// (`mov.u16 %rs3, %rs2; @%p2 ld.global.b16 {%rs3}, [..]`, 32 times per K step of its fp16
    /// matmul), and one conditional block per instruction became one divergent `if` per load
    /// in the warp engine: a mask merge, a join and a vector/gather choice each.
    fn guarded_run(
        &self,
        fs: &mut FnState<'c, 'a>,
        run: &'a [ast::Statement<'a>],
    ) -> Result<(), Error> {
        self.reopen(fs);
        let mut first = None;
        let mut movs = Vec::new();
        let mut node = fs.next_node;
        for st in run {
            if let ast::Statement::Instr(i) = st {
                if i.guard.is_some() {
                    first.get_or_insert((i, ast::NodeId(node)));
                } else {
                    movs.push(ast::NodeId(node));
                }
                node += 1;
            }
        }
        let (i0, n0) = first.expect("a guarded run starts with a guarded instruction");
        let g = i0.guard.unwrap();
        fs.node = n0;
        if let (Some(d), Some(fd)) = (&self.debug, &fs.dbg) {
            d.instruction(fd, &self.b, i0.span);
        }
        let c = self.pred(fs, g.pred, g.negated, g.span)?;
        let then_bb = self.new_block(fs, "if");
        let else_bb = self.new_block(fs, "else");
        let cont = self.new_block(fs, "endif");
        self.b
            .build_conditional_branch(c, then_bb, else_bb)
            .unwrap();
        self.b.position_at_end(then_bb);
        for st in run {
            match st {
                ast::Statement::Instr(i) => {
                    self.enter_node(fs, i);
                    let ins = self.decoded(fs, i)?;
                    self.dispatch(fs, &ins)?;
                }
                ast::Statement::Loc(loc) => self.set_loc(fs, loc),
                _ => unreachable!("a guarded run holds instructions and positions only"),
            }
        }
        if !self.terminated() {
            self.b.build_unconditional_branch(cont).unwrap();
        }
        self.b.position_at_end(else_bb);
        for k in movs {
            self.lower_node(fs, k)?;
        }
        if !self.terminated() {
            self.b.build_unconditional_branch(cont).unwrap();
        }
        self.b.position_at_end(cont);
        Ok(())
    }

    /// Lowers instruction `k` of the function's body again (a target rematerializing a
    /// definition), as `fs.node` while it runs.
    pub(crate) fn lower_node(&self, fs: &mut FnState<'c, 'a>, k: ast::NodeId) -> Result<(), Error> {
        let at = std::mem::replace(&mut fs.node, k);
        let r = self.instruction(fs, fs.nodes[k.0 as usize]);
        fs.node = at;
        r
    }

    /// Lowers one instruction, with its guard.
    pub(crate) fn instruction(
        &self,
        fs: &mut FnState<'c, 'a>,
        i: &'a Instruction<'a>,
    ) -> Result<(), Error> {
        let ins = self.decoded(fs, i)?;
        // Branches take their guard as the condition.
        let g = match i.guard {
            Some(g) if !matches!(i.opcode, Opcode::Bra | Opcode::Ret | Opcode::Exit) => g,
            _ => return self.dispatch(fs, &ins),
        };
        let c = self.pred(fs, g.pred, g.negated, g.span)?;
        let then_bb = self.new_block(fs, "if");
        let cont = self.new_block(fs, "endif");
        self.b.build_conditional_branch(c, then_bb, cont).unwrap();
        self.b.position_at_end(then_bb);
        self.dispatch(fs, &ins)?;
        if !self.terminated() {
            self.b.build_unconditional_branch(cont).unwrap();
        }
        self.b.position_at_end(cont);
        Ok(())
    }

    /// Instruction `i` decoded for lowering, the debugger's line set to it first (so the
    /// code of its guard and operands has its line).
    fn decoded<'i>(
        &'i self,
        fs: &FnState<'c, 'a>,
        i: &'i Instruction<'a>,
    ) -> Result<Ins<'i, 'a>, Error> {
        if let (Some(d), Some(fd)) = (&self.debug, &fs.dbg) {
            d.instruction(fd, &self.b, i.span);
        }
        self.ins(i)
    }

    fn dispatch(&self, fs: &mut FnState<'c, 'a>, ins: &Ins<'_, 'a>) -> Result<(), Error> {
        let asm_before = self.realized.inline_asm_calls();
        let r = self.dispatch_inner(fs, ins);
        if r.is_ok() {
            let asm = self.realized.inline_asm_calls() > asm_before;
            self.realized.note(ins.i.opcode, asm);
        }
        r
    }

    fn dispatch_inner(&self, fs: &mut FnState<'c, 'a>, ins: &Ins<'_, 'a>) -> Result<(), Error> {
        if self.target.instruction(self, fs, ins.i)? {
            return Ok(());
        }
        let done = match ins.i.opcode {
            Opcode::Add
            | Opcode::Sub
            | Opcode::Mul
            | Opcode::Mad
            | Opcode::Mul24
            | Opcode::Mad24
            | Opcode::Div
            | Opcode::Rem
            | Opcode::Abs
            | Opcode::Neg
            | Opcode::Min
            | Opcode::Max
            | Opcode::Sad
            | Opcode::Addc
            | Opcode::Subc
            | Opcode::Madc
            | Opcode::And
            | Opcode::Or
            | Opcode::Xor
            | Opcode::Not
            | Opcode::Cnot
            | Opcode::Shl
            | Opcode::Shr
            | Opcode::Setp
            | Opcode::Selp
            | Opcode::Set
            | Opcode::Slct
            | Opcode::Mov => {
                if ins.types.first().is_some_and(|t| t.is_float())
                    && !matches!(
                        ins.i.opcode,
                        Opcode::Mov | Opcode::Selp | Opcode::Slct | Opcode::Set | Opcode::Setp
                    )
                {
                    float::lower(self, fs, ins)?
                } else {
                    int::lower(self, fs, ins)?
                }
            }
            Opcode::Fma
            | Opcode::Rcp
            | Opcode::Sqrt
            | Opcode::Rsqrt
            | Opcode::Ex2
            | Opcode::Lg2
            | Opcode::Sin
            | Opcode::Cos
            | Opcode::Tanh
            | Opcode::Copysign
            | Opcode::Testp => float::lower(self, fs, ins)?,
            Opcode::Cvt | Opcode::Cvta | Opcode::Isspacep => convert::lower(self, fs, ins)?,
            Opcode::Bfe
            | Opcode::Bfi
            | Opcode::Prmt
            | Opcode::Lop3
            | Opcode::Shf
            | Opcode::Bfind
            | Opcode::Brev
            | Opcode::Clz
            | Opcode::Popc
            | Opcode::Fns
            | Opcode::Bmsk
            | Opcode::Szext
            | Opcode::Dp4a
            | Opcode::Dp2a => bits::lower(self, fs, ins)?,
            Opcode::Vadd
            | Opcode::Vsub
            | Opcode::Vabsdiff
            | Opcode::Vmin
            | Opcode::Vmax
            | Opcode::Vshl
            | Opcode::Vshr
            | Opcode::Vmad
            | Opcode::Vset
            | Opcode::Vadd2
            | Opcode::Vsub2
            | Opcode::Vavrg2
            | Opcode::Vabsdiff2
            | Opcode::Vmin2
            | Opcode::Vmax2
            | Opcode::Vset2
            | Opcode::Vadd4
            | Opcode::Vsub4
            | Opcode::Vavrg4
            | Opcode::Vabsdiff4
            | Opcode::Vmin4
            | Opcode::Vmax4
            | Opcode::Vset4 => video::lower(self, fs, ins)?,
            Opcode::Ld
            | Opcode::St
            | Opcode::Ldu
            | Opcode::Prefetch
            | Opcode::Prefetchu
            | Opcode::Alloca
            | Opcode::Stacksave
            | Opcode::Stackrestore => memory::lower(self, fs, ins)?,
            Opcode::Atom | Opcode::Red => atomic::lower(self, fs, ins)?,
            Opcode::Bra | Opcode::Brx | Opcode::Ret | Opcode::Exit | Opcode::Trap => {
                control::lower(self, fs, ins)?
            }
            Opcode::Call => call::lower_call(self, fs, ins)?,
            _ => self.target.sync_op(self, fs, ins.i)?,
        };
        if !done {
            self.target.inline_asm_ok(ins.i)?;
            inline_asm::lower(self, fs, ins)?;
        }
        Ok(())
    }
}

/// The declaration of register `name`: its own, or that of the parameterized declaration
/// (`%r<N>`) it is one of.
fn reg_decl(fs: &FnState<'_, '_>, name: &str) -> Option<RegDecl> {
    match fs.reg_decls.get(name) {
        Some(d) if d.count.is_none() => Some(*d),
        _ => {
            let split = name.trim_end_matches(|c: char| c.is_ascii_digit());
            let idx: u32 = name[split.len()..].parse().ok()?;
            let d = fs.reg_decls.get(split)?;
            (idx < d.count?).then_some(*d)
        }
    }
}

/// Whether a `.pragma` list holds `"nounroll"` (the strings keep their quotes).
pub(crate) fn has_nounroll(strings: &[&str]) -> bool {
    strings.iter().any(|s| s.trim_matches('"') == "nounroll")
}

fn collect_labels<'c, 'a>(fs: &mut FnState<'c, 'a>, blk: &'a ast::Block<'a>) {
    for st in &blk.stmts {
        match st {
            ast::Statement::Block(b) => collect_labels(fs, b),
            ast::Statement::BranchTargets { name, targets, .. } => {
                fs.branch_targets.insert(name, targets.clone());
            }
            ast::Statement::CallPrototype(p) => {
                fs.prototypes.insert(p.name, p);
            }
            ast::Statement::CallTargets { name, targets, .. } => {
                fs.call_targets.insert(name, targets.clone());
            }
            _ => {}
        }
    }
}

/// The end of a run of statements from `k` that may share one test of a guard
/// (`Lowerer::guarded_run`): at least two loads, stores or moves guarded by the same predicate
/// (same negation), with only unguarded moves and `.loc` positions between them, where no
/// instruction of the run writes the predicate. Asynchronous stores and reductions (the
/// target's own lowering) and everything with control flow or side effects beyond its
/// destination end a run. The unguarded moves are lowered on both sides of the test, so
/// their order relative to the guarded instructions is kept whatever they read or write.
fn guarded_run(stmts: &[ast::Statement<'_>], k: usize) -> Option<usize> {
    let ast::Statement::Instr(i0) = &stmts[k] else {
        return None;
    };
    let g = i0.guard?;
    let fits = |i: &Instruction| {
        matches!(i.opcode, Opcode::Ld | Opcode::St | Opcode::Mov) && !i.mods.contains(&Mod::Async)
    };
    let writes_guard = |i: &Instruction| {
        i.opcode != Opcode::St
            && match i.operands.first() {
                Some(Operand::Name { name, .. }) => *name == g.pred,
                Some(Operand::Vec(v, _)) => v
                    .iter()
                    .any(|x| matches!(x, Operand::Name { name, .. } if *name == g.pred)),
                Some(Operand::Pair(..)) => true,
                _ => false,
            }
    };
    if !fits(i0) || writes_guard(i0) {
        return None;
    }
    let (mut guarded, mut end) = (1, k + 1);
    for (j, st) in stmts.iter().enumerate().skip(k + 1) {
        match st {
            ast::Statement::Loc(_) => {}
            ast::Statement::Instr(i) if writes_guard(i) => break,
            ast::Statement::Instr(i) if i.opcode == Opcode::Mov && i.guard.is_none() => {}
            ast::Statement::Instr(i)
                if fits(i)
                    && i.guard
                        .is_some_and(|h| h.pred == g.pred && h.negated == g.negated) =>
            {
                guarded += 1;
                end = j + 1;
            }
            _ => break,
        }
    }
    (guarded >= 2).then_some(end)
}
