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
            let why = r.aligned_only.as_deref().unwrap_or(
                "a warp operation or barrier in scope only where a warp's lanes share %tid.y/z",
            );
            let _ = writeln!(
                s,
                "  aligned warps only: compiled for blocks of ({x}, {y}, {z}) threads ({why})"
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
                if !*d {
                    "uniform"
                } else if r.full_copies.contains(h) {
                    "divergent (runs while any lane is active); a copy without masks runs \
                     while all 32 lanes stay"
                } else {
                    "divergent (runs while any lane is active)"
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
        let memory = |m: [usize; 9]| {
            let mut tested = Vec::new();
            if m[7] > 0 {
                tested.push(format!(
                    "{} of them consecutive or checked when their loop's phis step by their stride from lane to lane, tested where the loop is entered",
                    m[7]
                ));
            }
            if m[3] > 0 {
                tested.push(format!(
                    "{} of them .shared loads tested for a 64-element window",
                    m[3]
                ));
            }
            if m[6] > 0 {
                tested.push(format!(
                    "{} global load{} proven to read at most two runs per 16 lanes (rows of k / r, r >= 16)",
                    m[6],
                    if m[6] == 1 { "" } else { "s" }
                ));
            }
            if m[5] > 0 {
                tested.push(format!(
                    "{} .shared store{} tested for a compare-exchange pair pattern or increasing offsets in one 256-byte block",
                    m[5],
                    if m[5] == 1 { "" } else { "s" }
                ));
            }
            let window = if tested.is_empty() {
                String::new()
            } else {
                format!(" ({})", tested.join(", "))
            };
            let same = if m[4] > 0 {
                format!(
                    ", {} store{} of one address in every lane (the last running lane's value)",
                    m[4],
                    if m[4] == 1 { "" } else { "s" }
                )
            } else {
                String::new()
            };
            let strided = if m[8] > 0 {
                format!(
                    ", {} strided (a field of 32 structs: one masked vector access and a shuffle)",
                    m[8]
                )
            } else {
                String::new()
            };
            format!(
                "{} consecutive, {} checked, {} other{window}{same}{strided}",
                m[0], m[1], m[2]
            )
        };
        if let Some(how) = &r.segments {
            let _ = writeln!(s, "  row segments: {how}");
        }
        let _ = writeln!(s, "  loads and stores: {}", memory(r.memory));
        if r.nan_selects.0 > 0 {
            let _ = writeln!(
                s,
                "  NaN canonicalizations: {} of {} dropped (results seen only by arithmetic)",
                r.nan_selects.1, r.nan_selects.0
            );
            if r.nan_selects.3 > 0 {
                let _ = writeln!(
                    s,
                    "  NaN canonicalizations of values that are never a NaN: {} of the dropped (bounded operands: a clamp, then arithmetic with constants)",
                    r.nan_selects.3
                );
            }
            if r.nan_selects.2 > 0 {
                let _ = writeln!(
                    s,
                    "  NaN canonicalizations off the chain: {} operands of arithmetic or shuffles take the value before its select",
                    r.nan_selects.2
                );
            }
        }
        if r.prefetches > 0 {
            let _ = writeln!(
                s,
                "  prefetches: {} (global loads striding with a loop: the next iteration's line)",
                r.prefetches
            );
        }
        if r.tile_prefetches > 0 {
            let _ = writeln!(
                s,
                "  prefetches {} iterations ahead: {} of them (in a loop that holds a CTA \
                 barrier: an iteration is one round of the CTA's tile loads)",
                crate::llvm::simd::BARRIER_AHEAD,
                r.tile_prefetches
            );
        }
        if r.stream_prefetches > 0 {
            let _ = writeln!(
                s,
                "  prefetches 1 KiB ahead: {} (global loads streaming by a constant step of 64 to \
                 1023 bytes in a loop with a gather)",
                r.stream_prefetches
            );
        }
        if r.warp_prefetches > 0 {
            let _ = writeln!(
                s,
                "  prefetches of the next warp's lines: {} (grid-stride loads whose index starts at \
                 %tid.x: the line the next warp loads in the same iteration)",
                r.warp_prefetches
            );
        }
        if r.cta_prefetches > 0 {
            let why = if r.barriers.is_empty() {
                "that bring each warp a page or more or the CTA's warps different rows \
                 (%tid.y), in a kernel without CTA barriers"
            } else {
                "in a kernel with CTA barriers"
            };
            let _ = writeln!(
                s,
                "  prefetches of the next CTA's lines: {} (global loads addressed from %ctaid.x \
                 {why})",
                r.cta_prefetches
            );
        }
        if r.versioned {
            let wide = if r.versioned_wide {
                "; and for multiples of 32 (partners consecutive lanes)"
            } else {
                ""
            };
            let _ = writeln!(
                s,
                "  versions: a halving distance's loop body copied for distances 1, 2, 4, 8, 16 \
                 (partners a constant permutation of the warp's lanes){wide}"
            );
        }
        if r.coarsened > 0 {
            let _ = writeln!(
                s,
                "  warp groups: {} warps run together by the first of them, their copies' \
                 loops jammed (where the copies agree at the entry's branch, lane by lane; \
                 else one after another; a fault replay runs each warp on its own)",
                r.coarsened
            );
        }
        if r.interior > 0 {
            let _ = writeln!(
                s,
                "  interior copy: {} bounds checks taken unconditionally by warps whose 32 lanes \
                 all pass them (tested at entry on the first and last lane of the warp, or of each row of lanes; the checks convex in the lane)",
                r.interior
            );
        }
        if r.cta_store_prefetches > 0 {
            let why = if r.barriers.is_empty() {
                "that write each warp a page or more or follow such loads of the CTA's \
                 rows, in a kernel without CTA barriers"
            } else {
                "in a kernel with CTA barriers"
            };
            let _ = writeln!(
                s,
                "  prefetches for writing of the next CTA's lines: {} (global stores addressed \
                 from %ctaid.x {why})",
                r.cta_store_prefetches
            );
        }
        if let Some(m) = r.rows_memory {
            let _ = writeln!(s, "  loads and stores of aligned warps: {}", memory(m));
        }
        match &r.misaligned {
            crate::llvm::simd::Alignment::NoTests => {}
            crate::llvm::simd::Alignment::Launch(tests) if tests.is_empty() => {
                let _ = writeln!(
                    s,
                    "  misaligned addresses: none possible (multiples of the access sizes from \
                     aligned variables)"
                );
            }
            crate::llvm::simd::Alignment::Launch(tests) => {
                let each: Vec<String> = tests
                    .iter()
                    .map(|t| format!("+{} & {:#x}", t.offset, t.mask))
                    .collect();
                let _ = writeln!(
                    s,
                    "  misaligned addresses: tested at launch on the parameters at {} (else the \
                     launch runs on thread loops or coroutines, which test each access)",
                    each.join(", ")
                );
            }
            crate::llvm::simd::Alignment::Unchecked(why) => {
                let _ = writeln!(s, "  misaligned addresses: not tested ({why})");
            }
        }
        let f = r.flat;
        if f.x + f.yz > 0 {
            let mut line = format!(
                "  flat thread indices (%ctaid * %ntid + %tid) marked non-negative: {} in y/z",
                f.yz
            );
            if f.x > 0 {
                let scale = if f.scale > 0 {
                    format!("max(block.x, {})", f.scale)
                } else {
                    "block.x".to_string()
                };
                let _ = write!(
                    line,
                    ", {} in x (tested at launch: (grid.x - 1) * {scale} + 1024 <= 2^31, else \
                     the launch runs on thread loops)",
                    f.x
                );
            }
            let _ = writeln!(s, "{line}");
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

/// Builds the warp code of kernel `f` (lowered into `module`), or says why not. `mode`:
/// `Auto` lets `llvm::simd::vectorize` prefer thread loops where they win and refuse kernels
/// whose warp code would take long to compile (`WARP_SIZE_MAX` there); `Warp`
/// (`PTX2LLVM_CPU_MODE=warp`) does neither.
pub fn plan(
    module: &crate::llvm::Module,
    machine: &HostMachine,
    f: &ast::Function,
    params: &[ParamPlace],
    block: Option<[u32; 3]>,
    mode: crate::target::cpu::fission::CpuMode,
    flat_x: bool,
) -> Result<WarpPlan, String> {
    use crate::target::cpu::fission::CpuMode;
    let prefer_loops = mode == CpuMode::Auto;
    if let Some(r) = ast_reason(f) {
        return Err(r);
    }
    let (report, only_block) =
        crate::llvm::simd::vectorize(module, machine, f.name, params, block, prefer_loops, flat_x)?;
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
