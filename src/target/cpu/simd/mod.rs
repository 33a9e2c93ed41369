//! The warp engine's plan (issue 17, first slice): which kernels run as one SIMD program per
//! warp (`llvm::simd` builds it), and why the others keep the thread-loop or coroutine
//! schemes. The decision is made once, at compile time, and recorded in the kernel's
//! `KernelPath::Warp` (the plan) or in the reason its fallback carries; `ptx2llvm run
//! --dump-plan` prints it.
//!
//! In scope: kernels without `wmma` (`mma.sync`, `ldmatrix`, `stmatrix` and `movmatrix` are
//! whole-warp calls there, `llvm::simd`'s `matrix.rs`), whose calls of device functions LLVM has nothing to inline (no device function
//! calls), with any divergent control flow, the warp operations `activemask`, `shfl`, `vote`,
//! integer `redux`, `match`, `elect` and `bar.warp.sync`, and CTA barriers
//! (`bar.sync`/`barrier.sync`/`bar.red`) that every live lane of a warp reaches together
//! (`llvm::simd`'s `barrier.rs` says which).

use std::fmt::Write as _;
use std::sync::Arc;

use crate::llvm::cpu::{HostMachine, ParamPlace};
use crate::llvm::simd::Report;
use crate::runtime::fission::{FisInfo, NO_STOP};
use crate::syntax::ast::{self, Statement};

/// How one kernel runs on the warp engine.
#[derive(Clone, Debug)]
pub struct WarpPlan {
    /// What the runtime's thread-loop worker needs to run `K.simd` (no stops, no frames).
    pub info: Arc<FisInfo>,
    /// What the vectorizer found.
    pub report: Report,
}

impl WarpPlan {
    /// The plan as `--dump-plan` prints it.
    pub fn describe(&self, kernel: &str) -> String {
        let r = &self.report;
        let mut s = String::new();
        let _ = writeln!(
            s,
            "plan {kernel}: warp (32 lanes, one SIMD program per warp)"
        );
        let _ = writeln!(s, "  values: {} uniform, {} varying", r.uniform, r.varying);
        if let (Some([x, y, z]), Some(_)) = (self.info.block, &r.segments) {
            let _ = writeln!(s, "  compiled for blocks of ({x}, {y}, {z}) threads only");
        } else if let Some([x, y, z]) = self.info.block {
            let _ = writeln!(
                s,
                "  aligned warps only: compiled for blocks of ({x}, {y}, {z}) threads (a warp \
                 operation or barrier in scope only where a warp's lanes share %tid.y/z)"
            );
        }
        if let Some((u, v)) = r.rows {
            let _ = writeln!(
                s,
                "  aligned warps (1-D blocks, or %ntid.x a multiple of 32): {u} uniform, {v} varying"
            );
        }
        let _ = writeln!(
            s,
            "  divergent branches: {}",
            if r.divergent_branches.is_empty() {
                "none".to_string()
            } else {
                r.divergent_branches.len().to_string()
            }
        );
        for (h, d) in &r.loops {
            let _ = writeln!(
                s,
                "  loop at {h}: {}",
                if *d {
                    "divergent (runs while any lane is active)"
                } else {
                    "uniform"
                }
            );
        }
        if !r.barriers.is_empty() {
            let _ = writeln!(
                s,
                "  barriers: {} suspension point{} ({})",
                r.barriers.len(),
                if r.barriers.len() == 1 { "" } else { "s" },
                r.barriers.join(", ")
            );
            if let Some(how) = &r.barrier_scheme {
                let _ = writeln!(s, "  barrier scheme: {how}");
            }
        }
        if !r.warp_ops.is_empty() {
            let _ = writeln!(s, "  warp operations: {}", r.warp_ops.join(", "));
        }
        let memory = |m: [usize; 4]| {
            let window = if m[3] > 0 {
                format!(
                    " ({} of them .shared loads tested for a 64-element window)",
                    m[3]
                )
            } else {
                String::new()
            };
            format!(
                "{} consecutive, {} checked, {} other{window}",
                m[0], m[1], m[2]
            )
        };
        if let Some(how) = &r.segments {
            let _ = writeln!(s, "  row segments: {how}");
        }
        let _ = writeln!(s, "  loads and stores: {}", memory(r.memory));
        if let Some(m) = r.rows_memory {
            let _ = writeln!(s, "  loads and stores of aligned warps: {}", memory(m));
        }
        s
    }
}

/// Why kernel `f` is outside the warp engine's scope by its instructions, if it is.
pub fn ast_reason(f: &ast::Function) -> Option<String> {
    fn walk(stmts: &[Statement]) -> Option<String> {
        for st in stmts {
            match st {
                Statement::Instr(i) => {
                    let op = i.opcode.spelling();
                    // `nanosleep` lets other threads run first (spin-waits on them): the
                    // coroutine scheduler serves that, lockstep warps cannot.
                    if op == "nanosleep" {
                        return Some("`nanosleep` (a thread waiting for others)".to_string());
                    }
                    if crate::target::cpu::mbarrier::needs_coroutines(i) {
                        return Some(format!(
                            "`{op}` (mbarrier, cluster and asynchronous-copy instructions run as \
                             coroutines)"
                        ));
                    }
                    if op == "wmma" {
                        return Some(format!("a matrix instruction (`{op}`)"));
                    }
                }
                Statement::Block(b) => {
                    if let Some(r) = walk(&b.stmts) {
                        return Some(r);
                    }
                }
                _ => {}
            }
        }
        None
    }
    walk(&f.body.as_ref()?.stmts)
}

/// The most `mma.sync` instructions a kernel may have for the compiler to choose the warp
/// engine. Each floating-point one is 64 vector fused multiply-adds on 32 lanes and their
/// operand shuffles in the warp function (`llvm/simd/matrix.rs`), about 20 ms of code
/// generation (17 chained m16n8k16: 0.56 s, 0.07 s on coroutines), and the kernels that have
/// many are large: Triton's 128x128x32 fp16 matmul (64 of them) takes about 45 s of CPU to
/// compile on the warp engine, of which the products are a quarter (the rest: its 16-bit
/// gathers and scatters, which LLVM expands lane by lane, register allocation and the line
/// tables' debug-value analysis), where it then runs about 20x faster than on coroutines
/// (512^3 on a loaded machine: 70 ms, 1.4 s; 130-210 ms with the products as runtime calls).
const MMA_BUDGET: usize = 16;

/// How many instructions of opcode `op` `stmts` holds, nested blocks included.
fn count_op(stmts: &[Statement], op: &str) -> usize {
    stmts
        .iter()
        .map(|st| match st {
            Statement::Instr(i) => usize::from(i.opcode.spelling() == op),
            Statement::Block(b) => count_op(&b.stmts, op),
            _ => 0,
        })
        .sum()
}

/// Builds the warp code of kernel `f` (lowered into `module`), or says why not. `mode`:
/// `Auto` lets `llvm::simd::vectorize` prefer thread loops where they win; `Warp`
/// (`PTX2LLVM_CPU_MODE=warp`) does not.
pub fn plan(
    module: &crate::llvm::Module,
    machine: &HostMachine,
    f: &ast::Function,
    params: &[ParamPlace],
    block: Option<[u32; 3]>,
    mode: crate::target::cpu::fission::CpuMode,
) -> Result<WarpPlan, String> {
    use crate::target::cpu::fission::CpuMode;
    let prefer_loops = mode == CpuMode::Auto;
    if let Some(r) = ast_reason(f) {
        return Err(r);
    }
    if mode != CpuMode::Warp {
        let n = count_op(f.body.as_ref().map_or(&[][..], |b| &b.stmts[..]), "mma");
        if n > MMA_BUDGET {
            return Err(format!(
                "{n} `mma.sync` (more than {MMA_BUDGET}): code generation of the warp function \
                 grows with them (64 vector multiply-adds each; Triton's 128x128x32 matmul \
                 compiles for about 45 s there; PTX2LLVM_CPU_MODE=warp takes it anyway)"
            ));
        }
    }
    let (report, only_block) =
        crate::llvm::simd::vectorize(module, machine, f.name, params, block, prefer_loops)?;
    Ok(WarpPlan {
        info: Arc::new(FisInfo {
            stops: Vec::new(),
            stop_consts: Vec::new(),
            frame_bytes: 0,
            local_bytes: 0,
            must_stop: vec![NO_STOP],
            block: if only_block { block } else { None },
        }),
        report,
    })
}
