//! The NVPTX target: address spaces, special registers, kernel attributes, barriers, fences
//! and warp operations as `llvm.nvvm.*`, PTX inline assembly for the rest; and the driver
//! entry `compile` (lower → verify → optimize → emit through LLVM's NVPTX back end).

mod math;
mod sync;

use crate::check::ModuleInfo;
use crate::llvm::debug::DebugKind;
use crate::llvm::*;
use crate::lower::{
    self, ApproxOp, Error, FnState, Lowerer, RoundedOp, Rounding, Space, Target, Ty,
};
use crate::syntax::ast::{self, FnDirective, Instruction};

/// The NVPTX implementation of `lower::Target`.
pub struct Nvptx;

impl Target for Nvptx {
    fn name(&self) -> &'static str {
        "nvptx"
    }

    fn emulate_fma16(&self) -> bool {
        false
    }

    fn gpu_nans(&self) -> bool {
        false
    }

    fn addr_space(&self, s: Space) -> u16 {
        match s {
            Space::Generic => 0,
            Space::Global => 1,
            Space::Shared => 3,
            Space::Const => 4,
            Space::Local => 5,
            Space::SharedCluster => 7,
            Space::Param => 0,
        }
    }

    fn sreg<'c>(
        &self,
        l: &Lowerer<'c, '_>,
        name: &str,
        comp: Option<char>,
    ) -> Option<BasicValueEnum<'c>> {
        let i32t: BasicTypeEnum = l.i32().into();
        let i64t: BasicTypeEnum = l.i64().into();
        let with_comp = |base: &str| {
            comp.map(|c| format!("llvm.nvvm.read.ptx.sreg.{}.{c}", base.replace('_', ".")))
        };
        let (intr, ty) = match name {
            "tid" | "ntid" | "ctaid" | "nctaid" | "clusterid" | "nclusterid" | "cluster_ctaid"
            | "cluster_nctaid" => (with_comp(name)?, i32t),
            "laneid" | "warpid" | "nwarpid" | "smid" | "nsmid" | "clock" | "cluster_ctarank"
            | "cluster_nctarank" => (
                format!("llvm.nvvm.read.ptx.sreg.{}", name.replace('_', ".")),
                i32t,
            ),
            // `%gridid` is 64 bits in PTX, but LLVM's intrinsic reads 32: it goes through inline
            // PTX below.
            "clock64" | "globaltimer" => (format!("llvm.nvvm.read.ptx.sreg.{name}"), i64t),
            "lanemask_eq" | "lanemask_le" | "lanemask_lt" | "lanemask_ge" | "lanemask_gt" => (
                format!("llvm.nvvm.read.ptx.sreg.lanemask.{}", &name[9..]),
                i32t,
            ),
            "is_explicit_cluster" => ("llvm.nvvm.is_explicit_cluster".to_string(), l.i1().into()),
            _ => {
                // Everything else (envregN, pmN, smem sizes, …) is read with inline PTX.
                let (ty, cons, w) =
                    if matches!(name, "clock_hi" | "globaltimer_lo" | "globaltimer_hi")
                        || name.starts_with("envreg")
                        || name.contains("smem")
                        || name.starts_with("pm") && !name.ends_with("64")
                    {
                        (i32t, "=r", "b32")
                    } else {
                        (i64t, "=l", "b64")
                    };
                let asm = format!("mov.{w} $0, %{name};");
                return l.inline_asm(Some(ty), &[], &asm, cons, true);
            }
        };
        l.call(&intr, Some(ty), &[])
    }

    fn kernel<'c>(&self, l: &Lowerer<'c, '_>, f: FunctionValue<'c>, directives: &[FnDirective]) {
        let dims = |v: &[u32]| {
            v.iter()
                .map(|x| x.to_string())
                .collect::<Vec<_>>()
                .join(",")
        };
        for d in directives {
            let (k, v) = match d {
                FnDirective::MaxNTid(v, _) => ("nvvm.maxntid", dims(v)),
                FnDirective::ReqNTid(v, _) => ("nvvm.reqntid", dims(v)),
                FnDirective::MinNCtaPerSm(n, _) => ("nvvm.minctasm", n.to_string()),
                FnDirective::MaxNReg(n, _) => ("nvvm.maxnreg", n.to_string()),
                FnDirective::ReqNCtaPerCluster(v, _) => ("nvvm.cluster_dim", dims(v)),
                FnDirective::MaxClusterRank(n, _) => ("nvvm.maxclusterrank", n.to_string()),
                FnDirective::BlocksAreClusters(_) => ("nvvm.blocksareclusters", String::new()),
                _ => continue,
            };
            f.add_attribute(AttributeLoc::Function, l.ctx.create_string_attribute(k, &v));
        }
    }

    fn sync_op<'c, 'a>(
        &self,
        l: &Lowerer<'c, 'a>,
        fs: &mut FnState<'c, 'a>,
        i: &Instruction<'a>,
    ) -> Result<bool, Error> {
        sync::lower(l, fs, i)
    }

    fn inline_asm_ok(&self, _i: &Instruction) -> Result<(), Error> {
        Ok(())
    }

    /// `.file`/`.loc` without DWARF sections and without the `, debug` target flag, with which
    /// ptxas would not optimize (as `nvcc -lineinfo` writes them).
    fn line_table_kind(&self) -> DebugKind {
        DebugKind::DirectivesOnly
    }

    /// ptxas 13.5 crashes on some of the value locations LLVM writes for optimized code
    /// (Triton's matmul at -O2): variables at -O0 only.
    fn optimized_variables(&self) -> bool {
        false
    }

    /// What ptxas reads (and clang writes for CUDA).
    fn dwarf_version(&self) -> u32 {
        2
    }

    fn rounded_op<'c>(
        &self,
        l: &Lowerer<'c, '_>,
        op: RoundedOp,
        rnd: Rounding,
        ftz: bool,
        ty: Ty,
        args: &[BasicValueEnum<'c>],
    ) -> Result<BasicValueEnum<'c>, Error> {
        math::rounded_op(l, op, rnd, ftz, ty, args)
    }

    fn rounded_cvt<'c>(
        &self,
        l: &Lowerer<'c, '_>,
        rnd: Rounding,
        dt: Ty,
        st: Ty,
        a: BasicValueEnum<'c>,
    ) -> Result<BasicValueEnum<'c>, Error> {
        math::rounded_cvt(l, rnd, dt, st, a)
    }

    fn packed_cvt<'c>(
        &self,
        l: &Lowerer<'c, '_>,
        dt: Ty,
        relu: bool,
        hi: BasicValueEnum<'c>,
        lo: BasicValueEnum<'c>,
    ) -> Option<BasicValueEnum<'c>> {
        math::packed_cvt(l, dt, relu, hi, lo)
    }

    fn approx_op<'c>(
        &self,
        l: &Lowerer<'c, '_>,
        op: ApproxOp,
        ftz: bool,
        ty: Ty,
        args: &[BasicValueEnum<'c>],
    ) -> Result<BasicValueEnum<'c>, Error> {
        math::approx_op(l, op, ftz, ty, args)
    }
}

/// What to produce.
#[derive(Clone, Debug)]
pub struct Options {
    pub emit: EmitKind,
    pub opt: u8,
    /// `sm_XX`; default: the module's `.target`.
    pub arch: Option<String>,
    /// Module name (the input file's name).
    pub name: String,
    /// Debug information (`-g`; line tables from `.loc` without it).
    pub debug: lower::debug::DebugOptions,
}

/// The result of a compilation: the bytes to write, and whether they are text.
pub struct Output {
    pub bytes: Vec<u8>,
    pub text: bool,
    /// The architecture and PTX feature used (`sm_80`, `+ptx80`).
    pub arch: String,
    pub ptx_feature: String,
    /// How each opcode was realized (native LLVM IR or inline PTX), counted over the module.
    pub realized: std::collections::BTreeMap<crate::isa::Opcode, lower::realized::Realized>,
}

/// The highest PTX ISA version LLVM 22's NVPTX back end knows (`+ptx90`).
pub const MAX_PTX: u32 = 90;

/// The default `sm_XX` of a module (its `.target`), or `sm_52`.
/// The processors LLVM 22's NVPTX back end knows (`llc -march=nvptx64 -mcpu=help`); any
/// other `-mcpu` is ignored by LLVM with a warning, so `--arch` is checked against this list.
pub const LLVM_ARCHS: &[&str] = &[
    "sm_20", "sm_21", "sm_30", "sm_32", "sm_35", "sm_37", "sm_50", "sm_52", "sm_53", "sm_60",
    "sm_61", "sm_62", "sm_70", "sm_72", "sm_75", "sm_80", "sm_86", "sm_87", "sm_88", "sm_89",
    "sm_90", "sm_90a", "sm_100", "sm_100a", "sm_100f", "sm_101", "sm_101a", "sm_101f", "sm_103",
    "sm_103a", "sm_103f", "sm_110", "sm_110a", "sm_110f", "sm_120", "sm_120a", "sm_120f", "sm_121",
    "sm_121a", "sm_121f",
];

pub fn module_arch(m: &ast::Module) -> String {
    m.target
        .iter()
        .find(|t| t.starts_with("sm_"))
        .map(|s| s.to_string())
        .unwrap_or_else(|| "sm_52".into())
}

fn sm_number(arch: &str) -> u32 {
    arch.trim_start_matches("sm_")
        .trim_end_matches(|c: char| c.is_ascii_alphabetic())
        .parse()
        .unwrap_or(52)
}

/// Errors of the whole compilation (lowering errors carry spans).
#[derive(Debug, thiserror::Error)]
pub enum CompileError {
    #[error("{}", .0.iter().map(|e| e.to_string()).collect::<Vec<_>>().join("\n"))]
    Lower(Vec<Error>),
    #[error("{0}")]
    Llvm(String),
}

/// Translates a parsed PTX module for the NVPTX back end; `info` is what `check::check_module`
/// found, and the module must have passed it.
pub fn compile<'a>(
    module: &'a ast::Module<'a>,
    info: &ModuleInfo,
    opts: &Options,
) -> Result<Output, CompileError> {
    let arch = opts.arch.clone().unwrap_or_else(|| module_arch(module));
    let ver = module.version.0 * 10 + module.version.1;
    let ptx = ver.min(MAX_PTX);
    // Full DWARF in PTX subtracts labels in `.section`s, which PTX ISA 7.5 introduced.
    let ptx = if opts.debug.full { ptx.max(75) } else { ptx };
    let feature = format!("+ptx{ptx}");
    let addr64 = module.address_size.unwrap_or(64) == 64;
    let machine = Machine::nvptx(&arch, &feature, opts.opt, addr64).map_err(CompileError::Llvm)?;
    let ctx = Context::create();
    static NVPTX: Nvptx = Nvptx;
    let mut l = Lowerer::new(&ctx, &NVPTX, &opts.name, addr64, sm_number(&arch), info);
    machine.configure(&l.module);
    l.enable_debug(module, &opts.debug, opts.opt > 0);
    lower::module::lower_module(&mut l, module).map_err(CompileError::Lower)?;
    l.finalize_debug();
    verify(&l.module)
        .map_err(|e| CompileError::Llvm(format!("the generated IR does not verify: {e}")))?;
    machine
        .optimize(&l.module, opts.opt)
        .map_err(CompileError::Llvm)?;
    if opts.opt > 0 {
        // So that what MachineSink would move keeps its source line (`llvm::sink`).
        crate::llvm::sink::sink_closed_expressions(&l.module);
    }
    let bytes = machine
        .emit(&l.module, opts.emit)
        .map_err(CompileError::Llvm)?;
    Ok(Output {
        bytes,
        text: matches!(opts.emit, EmitKind::Llvm | EmitKind::Asm),
        arch,
        ptx_feature: feature,
        realized: l.realized.take(),
    })
}
