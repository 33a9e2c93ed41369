//! What differs per target. The shared lowering decides what an instruction means and asks the
//! target how to express the target-specific parts: state-space address spaces, special
//! registers, barriers and fences, warp-level operations, trap/exit, kernel conventions and
//! the inline-assembly fallback for instructions with no LLVM equivalent.
//!
//! Three hooks have default implementations in target-independent LLVM IR, so a new target
//! gets them for free and overrides them only to use a faster native realization of the *same*
//! meaning: [`Target::rounded_op`] (IEEE operations with `.rz/.rm/.rp` rounding or `.ftz`),
//! [`Target::rounded_cvt`] (conversions with `.rz/.rm/.rp` rounding) and [`Target::approx_op`]
//! (the `.approx` transcendentals, whose result PTX leaves implementation-defined within
//! documented error bounds).

use super::{fp, Error, FnState, Lowerer, Ty};
use crate::isa::Mod;
use crate::llvm::debug::DebugKind;
use crate::llvm::{
    atomic_rmw, BasicTypeEnum, BasicValueEnum, FunctionValue, Ordering, PointerValue, RmwOp,
};
use crate::syntax::ast::{FnDirective, Instruction};

/// A PTX state space as an address.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Space {
    Generic,
    Global,
    Shared,
    SharedCluster,
    Const,
    Local,
    Param,
}

impl Space {
    /// The address space an instruction's state-space modifier names (`ld.shared::cta` →
    /// `Shared`, `ld.param::func` → `Param`); `None` for modifiers that are not one.
    pub fn of(m: Mod) -> Option<Space> {
        Some(match m {
            Mod::Global => Space::Global,
            Mod::Shared | Mod::SharedCta => Space::Shared,
            Mod::SharedCluster => Space::SharedCluster,
            Mod::Const => Space::Const,
            Mod::Local => Space::Local,
            Mod::Param | Mod::ParamEntry | Mod::ParamFunc => Space::Param,
            _ => return None,
        })
    }
}

/// An IEEE rounding mode (`.rn`, `.rz`, `.rm`, `.rp`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Rounding {
    /// To nearest, ties to even.
    Rn,
    /// Toward zero.
    Rz,
    /// Toward negative infinity.
    Rm,
    /// Toward positive infinity.
    Rp,
}

impl Rounding {
    /// From a rounding modifier (`.rn`, `.rz`, `.rm`, `.rp`; `None` for the others).
    pub fn of(m: Mod) -> Option<Rounding> {
        Some(match m {
            Mod::Rn => Rounding::Rn,
            Mod::Rz => Rounding::Rz,
            Mod::Rm => Rounding::Rm,
            Mod::Rp => Rounding::Rp,
            _ => return None,
        })
    }
    /// `rn`, `rz`, `rm`, `rp`.
    pub fn name(self) -> &'static str {
        match self {
            Rounding::Rn => "rn",
            Rounding::Rz => "rz",
            Rounding::Rm => "rm",
            Rounding::Rp => "rp",
        }
    }
}

/// A correctly rounded IEEE operation of `add`, `sub`, `mul`, `fma`/`mad`, `div`, `sqrt`,
/// `rcp` (`1/a`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RoundedOp {
    Add,
    Sub,
    Mul,
    Fma,
    Div,
    Sqrt,
    Rcp,
}

impl RoundedOp {
    pub fn name(self) -> &'static str {
        match self {
            RoundedOp::Add => "add",
            RoundedOp::Sub => "sub",
            RoundedOp::Mul => "mul",
            RoundedOp::Fma => "fma",
            RoundedOp::Div => "div",
            RoundedOp::Sqrt => "sqrt",
            RoundedOp::Rcp => "rcp",
        }
    }
    /// Number of operands.
    pub fn arity(self) -> usize {
        match self {
            RoundedOp::Sqrt | RoundedOp::Rcp => 1,
            RoundedOp::Fma => 3,
            _ => 2,
        }
    }
}

/// An `.approx` operation (`rcp`, `sqrt`, `rsqrt`, `sin`, `cos`, `lg2`, `ex2`, `tanh`, and
/// `div.approx`/`div.full`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ApproxOp {
    Rcp,
    Sqrt,
    Rsqrt,
    Sin,
    Cos,
    Lg2,
    Ex2,
    Tanh,
    /// `div.approx`
    Div,
    /// `div.full`
    DivFull,
}

pub trait Target {
    /// Short name for diagnostics (`nvptx`, `cpu`).
    fn name(&self) -> &'static str;
    /// LLVM address space of a state space.
    fn addr_space(&self, s: Space) -> u16;
    /// Whether loads and stores of `.global`, `.shared` and `.const` carry alias scopes that
    /// tell LLVM those spaces never overlap (targets where they share one address space).
    fn disjoint_spaces(&self) -> bool {
        false
    }
    /// Whether address 0 is memory like any other for the optimizer (LLVM's
    /// `null_pointer_is_valid` on every function): on the cpu target an access through a null
    /// pointer must stay in the program, where it faults and the launch fails naming the
    /// thread. Otherwise LLVM treats it as undefined and folds `ld [p ? 0 : q]` into `ld [q]`:
    /// the faulting thread read or wrote another thread's element and the launch succeeded.
    fn null_is_valid(&self) -> bool {
        false
    }
    /// Whether `ld`/`st`/`atom`/`red` test their address for the natural alignment of the
    /// access (`memory::check_aligned`): the GPU stops a kernel at a misaligned access
    /// ("misaligned address"), the host would perform it. The nvptx target leaves it to the
    /// hardware.
    fn checks_alignment(&self) -> bool {
        false
    }
    /// Reads a special register (`%tid.x` → name `tid`, component `Some('x')`).
    fn sreg<'c>(
        &self,
        l: &Lowerer<'c, '_>,
        name: &str,
        comp: Option<char>,
    ) -> Option<BasicValueEnum<'c>>;
    /// Marks `f` as a kernel and applies performance directives.
    fn kernel<'c>(&self, l: &Lowerer<'c, '_>, f: FunctionValue<'c>, directives: &[FnDirective]);
    /// Lowers a barrier, fence, warp-level or trap/exit instruction (including `exit` from a
    /// device function) or a state-space query (`isspacep`) natively; `Ok(false)` means "not
    /// handled here" (the lowering then uses the inline-assembly fallback, if
    /// [`Target::inline_asm_ok`] allows it).
    fn sync_op<'c, 'a>(
        &self,
        l: &Lowerer<'c, 'a>,
        fs: &mut FnState<'c, 'a>,
        i: &Instruction<'a>,
    ) -> Result<bool, Error>;
    /// Whether PTX inline assembly can carry an instruction LLVM has no equivalent for; the
    /// cpu target answers with an error naming the instruction.
    fn inline_asm_ok(&self, i: &Instruction) -> Result<(), Error>;
    /// How `.loc` line information is emitted without `-g`: DWARF line tables by default.
    fn line_table_kind(&self) -> DebugKind {
        DebugKind::LineTablesOnly
    }
    /// Whether `-g` describes registers as variables in optimized code too (where LLVM turns
    /// their declarations into value locations).
    fn optimized_variables(&self) -> bool {
        true
    }
    /// The DWARF version of the target's debug information.
    fn dwarf_version(&self) -> u32 {
        5
    }
    /// `trap` (the caller ends the block): `llvm.trap` by default; `msg` is what a target
    /// with a runtime may report (it names the source position when `.loc` gave one).
    fn trap<'c>(&self, l: &Lowerer<'c, '_>, msg: &str) {
        let _ = msg;
        l.call("llvm.trap", None, &[]);
    }
    /// Whether a 16-bit (`f16`/`bf16`) `fma` must be computed in software to round once.
    /// LLVM computes a half/bfloat fma in f32 and rounds twice on hosts without a native
    /// 16-bit fma; the NVPTX back end emits `fma.rn.f16`, which rounds once.
    fn emulate_fma16(&self) -> bool {
        true
    }
    /// Whether NaN results must be made the hardware's NaNs in IR (`fp::gpu_nan`): an H200
    /// gives the canonical NaN (`0x7fffffff`, `0x7fff`) for f32/f16/bf16 arithmetic and
    /// conversions where the host keeps or quiets an operand's NaN. The NVPTX back end's
    /// instructions already do it.
    fn gpu_nans(&self) -> bool {
        true
    }
    /// Whether kernel `f` adds to global memory through the runtime's per-worker sums
    /// (`runtime/red.rs`) instead of an atomic each time: the cpu target, for kernels in which
    /// nothing can observe those locations before the launch ends.
    fn private_reductions(&self, _f: &crate::syntax::ast::Function) -> bool {
        false
    }
    /// `red.global.add` of `v` (`u32`/`u64`, or `f32`/`f64` already the GPU's NaN when a NaN) to
    /// `ptr` in such a kernel, the old value unused. A 32-bit integer addition comes with its
    /// address not yet tested for alignment (`memory::check_aligned`): the target tests it
    /// where it must. The default is the atomic addition itself, tested first.
    ///
    /// `base`: the value of the address's base register when the address register has one
    /// definition `add R, B, O` (`lower/atomic.rs`), a hint that lets a target check a run of
    /// additions against one base (the checks stay on `ptr` itself).
    fn private_red_add<'c, 'a>(
        &self,
        l: &Lowerer<'c, 'a>,
        _fs: &mut FnState<'c, 'a>,
        ptr: PointerValue<'c>,
        v: BasicValueEnum<'c>,
        (ord, scope): (Ordering, &str),
        _base: Option<PointerValue<'c>>,
    ) {
        let op = if v.is_float_value() {
            RmwOp::FAdd
        } else {
            if v.into_int_value().get_type().get_bit_width() == 32 {
                super::memory::check_aligned(
                    l,
                    ptr,
                    4,
                    crate::runtime::fault::MisalignedAccess::Atomic,
                );
            }
            RmwOp::Add
        };
        atomic_rmw(l.ctx, &l.b, op, ptr, v, ord, scope);
    }
    /// Lowers any instruction in the target's own way before the shared lowering sees it
    /// (inside its guard); `Ok(false)`: not handled. The cpu target's thread-loop code takes
    /// barriers, warp operations, `trap` and calls here.
    fn instruction<'c, 'a>(
        &self,
        _l: &Lowerer<'c, 'a>,
        _fs: &mut FnState<'c, 'a>,
        _i: &Instruction<'a>,
    ) -> Result<bool, Error> {
        Ok(false)
    }
    /// Storage of a `.local` variable of a function body (`ty`, alignment, name); `None`: an
    /// alloca in the entry block.
    fn local_var<'c, 'a>(
        &self,
        _l: &Lowerer<'c, 'a>,
        _fs: &mut FnState<'c, 'a>,
        _ty: BasicTypeEnum<'c>,
        _align: u32,
        _name: &str,
    ) -> Option<PointerValue<'c>> {
        None
    }

    /// `op` on scalar `ty` (`.f32` or `.f64`) operands `args` (LLVM `float`/`double`), rounded
    /// by `rnd`; with `ftz` (`.f32` only) subnormal inputs and the result are flushed to
    /// sign-preserving zero. The shared lowering calls this only when `rnd != Rn` or `ftz`;
    /// `.sat` is applied by the caller.
    ///
    /// The default is target-independent IR ([`fp::default_rounded_op`]): `.f32` operations
    /// are computed exactly in `double` (error-free transformations: TwoSum, exact products,
    /// remainders through `llvm.fma.f64`) and rounded in the requested direction by stepping
    /// the round-to-nearest result by one ulp; `.f64` `add`/`sub` use TwoSum and `.f64`
    /// `mul`/`div`/`rcp`/`sqrt` an exact `fma` residual on `frexp`-scaled operands. Only
    /// `fma.{rz,rm,rp}.f64` calls a runtime helper, which a target using the default must
    /// provide (C ABI, `double` arguments and result): `ptx2llvm_rt_fma_{rz,rm,rp}_f64(a, b, c)`.
    fn rounded_op<'c>(
        &self,
        l: &Lowerer<'c, '_>,
        op: RoundedOp,
        rnd: Rounding,
        ftz: bool,
        ty: Ty,
        args: &[BasicValueEnum<'c>],
    ) -> Result<BasicValueEnum<'c>, Error> {
        fp::default_rounded_op(l, op, rnd, ftz, ty, args)
    }

    /// `cvt` of scalar `a` (PTX type `st`) to PTX type `dt` rounded by `rnd` where the
    /// conversion can be inexact: integer → float and float → narrower float. (Float → integer
    /// conversions take integer rounding `.rni/.rzi/.rmi/.rpi` and are target-independent.)
    /// The default ([`fp::default_rounded_cvt`]) is target-independent IR: the
    /// round-to-nearest conversion, compared exactly with the source, stepped by one ulp.
    fn rounded_cvt<'c>(
        &self,
        l: &Lowerer<'c, '_>,
        rnd: Rounding,
        dt: Ty,
        st: Ty,
        a: BasicValueEnum<'c>,
    ) -> Result<BasicValueEnum<'c>, Error> {
        fp::default_rounded_cvt(l, rnd, dt, st, a)
    }

    /// `cvt.rn{.relu}.f16x2.f32` / `.bf16x2.f32` of `hi` and `lo` (`dt` the packed type) as
    /// one target operation, or None for the default IR (two conversions and a vector). The
    /// NVPTX back end selects the same instruction from both, but from two conversions in a
    /// combine that gives it the line of its user: one call keeps the conversion's own line.
    fn packed_cvt<'c>(
        &self,
        _l: &Lowerer<'c, '_>,
        _dt: Ty,
        _relu: bool,
        _hi: BasicValueEnum<'c>,
        _lo: BasicValueEnum<'c>,
    ) -> Option<BasicValueEnum<'c>> {
        None
    }

    /// An `.approx` operation on scalar `ty` (`.f32`, `.f64`, `.f16`, `.bf16`) operands, with
    /// `ftz` flushing `.f32` subnormal inputs and results. PTX defines these only within error
    /// bounds; the default ([`fp::default_approx_op`]) computes them precisely with
    /// target-independent LLVM IR (`fdiv`, `llvm.sqrt`, `llvm.sin`, `llvm.cos`, `llvm.log2`,
    /// `llvm.exp2`, `llvm.tanh`), which is within every bound.
    fn approx_op<'c>(
        &self,
        l: &Lowerer<'c, '_>,
        op: ApproxOp,
        ftz: bool,
        ty: Ty,
        args: &[BasicValueEnum<'c>],
    ) -> Result<BasicValueEnum<'c>, Error> {
        fp::default_approx_op(l, op, ftz, ty, args)
    }
}
