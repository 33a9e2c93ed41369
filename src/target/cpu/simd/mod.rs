//! The warp engine's plan (issue 17, first slice): which kernels run as one SIMD program per
//! warp (`llvm::simd` builds it), and why the others keep the thread-loop or coroutine
//! schemes. The decision is made once, at compile time, and recorded in the kernel's
//! `KernelPath::Warp` (the plan) or in the reason its fallback carries; `ptx2llvm run
//! --dump-plan` prints it.
//!
//! In scope: kernels without CTA barriers (`bar.sync`/`barrier`/`bar.red`/`bar.arrive`) and
//! matrix instructions other than `mma.sync` (a whole-warp call there), whose calls of device
//! functions LLVM has nothing to inline (no device function calls), with any divergent
//! control flow and the warp operations `activemask`, `shfl`, `vote`, integer `redux`,
//! `match`, `elect` and `bar.warp.sync`.

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
        if !r.warp_ops.is_empty() {
            let _ = writeln!(s, "  warp operations: {}", r.warp_ops.join(", "));
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
                    let warp_bar = op == "bar" && i.mods.iter().any(|m| m.spelling() == ".warp");
                    if (op == "bar" || op == "barrier") && !warp_bar {
                        return Some(format!("a CTA barrier (`{op}`)"));
                    }
                    // `nanosleep` lets other threads run first (spin-waits on them): the
                    // coroutine scheduler serves that, lockstep warps cannot.
                    if op == "nanosleep" {
                        return Some("`nanosleep` (a thread waiting for others)".to_string());
                    }
                    if matches!(op, "ldmatrix" | "stmatrix" | "movmatrix" | "wmma") {
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

/// Builds the warp code of kernel `f` (lowered into `module`), or says why not.
pub fn plan(
    module: &crate::llvm::Module,
    machine: &HostMachine,
    f: &ast::Function,
    params: &[ParamPlace],
) -> Result<WarpPlan, String> {
    if let Some(r) = ast_reason(f) {
        return Err(r);
    }
    let report = crate::llvm::simd::vectorize(module, machine, f.name, params)?;
    Ok(WarpPlan {
        info: Arc::new(FisInfo {
            stops: Vec::new(),
            stop_consts: Vec::new(),
            frame_bytes: 0,
            local_bytes: 0,
            must_stop: vec![NO_STOP],
            block: None,
        }),
        report,
    })
}
