//! The cpu target: PTX kernels as host code that the runtime library (`crate::runtime`) runs,
//! each CUDA thread a coroutine. This module implements `lower::Target` (address spaces,
//! special registers read from the thread context, barriers and warp operations as runtime
//! calls, a clear error for what cannot run on a CPU) and the driver entries: `compile` for
//! `--emit` and `Program::load` for the JIT that `ptx2llvm run` and the embedding API use.
//!
//! Generated code and runtime meet at the C ABI documented in `runtime/README.md` and
//! `include/ptx2llvm_rt.h`.

pub mod cache;
pub mod fission;
pub mod layout;
mod matrix;
mod mbarrier;
pub mod private_red;
pub mod simd;
mod sync;

use crate::check::ModuleInfo;
use crate::isa::Mod;
use crate::llvm::cpu::{HostMachine, Jit, KernelLayout, ParamPlace, SharedLayout};
use crate::llvm::*;
use crate::lower::debug::DebugOptions;
use crate::lower::{self, Error, FnState, Lowerer, Space, Target};
use crate::runtime::abi::offset;
use crate::syntax::ast::{self, FnDirective, FnKind, Instruction, Item};

pub use layout::{layout, ParamInfo, ParamLayout};

/// The cpu implementation of `lower::Target`.
pub struct Cpu;

impl Target for Cpu {
    fn name(&self) -> &'static str {
        "cpu"
    }

    fn disjoint_spaces(&self) -> bool {
        true
    }

    fn checks_alignment(&self) -> bool {
        true
    }

    fn null_is_valid(&self) -> bool {
        true
    }

    /// `add`/`sub`/`mul`/`fma` of `.f32`/`.f64` with `.rz/.rm/.rp` as one AVX-512 `vfmadd`
    /// with embedded (static) rounding where the host has AVX-512F: the default emulation in
    /// `double` costs some 30 operations per `fma.rm.f32`, and NVRTC's `expf` has one. Other
    /// operations and hosts: the default ([`lower::fp::default_rounded_op`]).
    fn rounded_op<'c>(
        &self,
        l: &Lowerer<'c, '_>,
        op: lower::RoundedOp,
        rnd: lower::Rounding,
        ftz: bool,
        ty: lower::Ty,
        args: &[BasicValueEnum<'c>],
    ) -> Result<BasicValueEnum<'c>, Error> {
        if let Some(r) = embedded_rounding(l, op, rnd, ftz, ty, args) {
            return Ok(r);
        }
        lower::fp::default_rounded_op(l, op, rnd, ftz, ty, args)
    }

    /// The default, except that `ex2.approx.f32` scales by `2^n` with one `llvm.ldexp`
    /// (`vscalefps`) where the host has AVX-512F: the integer construction of two powers costs
    /// nine instructions per 16 lanes, a third of the `ex2`, in softmax and Black-Scholes.
    /// Without AVX-512 `ldexp` would be a call per element, so the default stays.
    fn approx_op<'c>(
        &self,
        l: &Lowerer<'c, '_>,
        op: lower::ApproxOp,
        ftz: bool,
        ty: lower::Ty,
        args: &[BasicValueEnum<'c>],
    ) -> Result<BasicValueEnum<'c>, Error> {
        let scale = if op == lower::ApproxOp::Ex2 && crate::llvm::cpu::host_has("+avx512f") {
            lower::fp::Exp2Scale::Ldexp
        } else {
            lower::fp::Exp2Scale::TwoPowers
        };
        lower::fp::approx_op_with(l, op, ftz, ty, args, scale)
    }

    fn private_reductions(&self, f: &ast::Function) -> bool {
        private_red::eligible(f)
    }

    fn private_red_add<'c, 'a>(
        &self,
        l: &Lowerer<'c, 'a>,
        fs: &mut FnState<'c, 'a>,
        ptr: PointerValue<'c>,
        v: BasicValueEnum<'c>,
        order: (Ordering, &str),
        base: Option<PointerValue<'c>>,
    ) {
        let t = sync::self_ptr(l).into_pointer_value();
        private_red::emit_add(l, fs, t, ptr, v, order, base);
    }

    fn addr_space(&self, s: Space) -> u16 {
        match s {
            Space::Shared | Space::SharedCluster => 3,
            _ => 0,
        }
    }

    fn sreg<'c>(
        &self,
        l: &Lowerer<'c, '_>,
        name: &str,
        comp: Option<char>,
    ) -> Option<BasicValueEnum<'c>> {
        let i32t = l.i32();
        let i64t = l.i64();
        let field = |off: u32, wide: bool| -> BasicValueEnum<'c> {
            let t = sync::self_ptr(l).into_pointer_value();
            let idx = i64t.const_int(off as u64, false);
            // SAFETY: `build_gep` only builds IR (a field of the context block); nothing is dereferenced here.
            let p = unsafe { l.b.build_gep(l.ctx.i8_type(), t, &[idx], "").unwrap() };
            let ty: BasicTypeEnum = if wide { i64t.into() } else { i32t.into() };
            l.b.build_load(ty, p, name).unwrap()
        };
        let xyz = |base: u32| -> Option<BasicValueEnum<'c>> {
            let k = match comp? {
                'x' => 0,
                'y' => 1,
                'z' => 2,
                _ => return None,
            };
            Some(field(base + 4 * k, false))
        };
        let c32 = |v: u64| -> Option<BasicValueEnum<'c>> { Some(i32t.const_int(v, false).into()) };
        let b = &l.b;
        match name {
            "tid" => xyz(offset::TID),
            "ntid" => xyz(offset::NTID),
            "ctaid" | "clusterid" => xyz(offset::CTAID),
            "nctaid" | "nclusterid" => xyz(offset::NCTAID),
            "cluster_ctaid" => comp.and_then(|_| c32(0)),
            "cluster_nctaid" => comp.and_then(|_| c32(1)),
            "cluster_ctarank" => c32(0),
            "cluster_nctarank" => c32(1),
            "is_explicit_cluster" => Some(l.i1().const_zero().into()),
            "laneid" => Some(field(offset::LANEID, false)),
            "warpid" => Some(field(offset::WARPID, false)),
            "nwarpid" => Some(field(offset::NWARPID, false)),
            "smid" => Some(field(offset::SMID, false)),
            "nsmid" => Some(field(offset::NSMID, false)),
            "gridid" => Some(field(offset::GRIDID, true)),
            "dynamic_smem_size" => Some(field(offset::DYNAMIC_SMEM_SIZE, false)),
            // In multiples of the target's shared-memory allocation unit (PTX ISA, "Special
            // Registers: %total_smem_size": 256 bytes on sm_3x–sm_7x, 128 on sm_2x and sm_8x
            // and later; a GPU reports 128 for 48 bytes on sm_80 code). No memory is reserved
            // for system software here, so `%aggr_smem_size` is the same.
            "total_smem_size" | "aggr_smem_size" => {
                let unit = if (30..80).contains(&l.sm) { 256 } else { 128 };
                let v = field(offset::TOTAL_SMEM_SIZE, false).into_int_value();
                let up = b
                    .build_int_add(v, i32t.const_int(unit - 1, false), "")
                    .unwrap();
                Some(
                    b.build_and(up, i32t.const_int(!(unit - 1) & 0xffff_ffff, false), name)
                        .unwrap()
                        .into(),
                )
            }
            "lanemask_eq" | "lanemask_le" | "lanemask_lt" | "lanemask_ge" | "lanemask_gt" => {
                let lane = field(offset::LANEID, false).into_int_value();
                let one = i32t.const_int(1, false);
                let all = i32t.const_all_ones();
                let eq = b.build_left_shift(one, lane, "").unwrap();
                let lt = b.build_int_sub(eq, one, "").unwrap();
                let le = b.build_or(lt, eq, "").unwrap();
                Some(
                    match name {
                        "lanemask_eq" => eq,
                        "lanemask_lt" => lt,
                        "lanemask_le" => le,
                        "lanemask_ge" => b.build_xor(lt, all, "").unwrap(),
                        _ => b.build_xor(le, all, "").unwrap(),
                    }
                    .into(),
                )
            }
            "clock" | "clock_hi" | "clock64" | "globaltimer" | "globaltimer_lo"
            | "globaltimer_hi" => {
                let f = if name.starts_with("clock") {
                    "ptx2llvm_rt_clock64"
                } else {
                    "ptx2llvm_rt_globaltimer"
                };
                let v = l.call_v(f, i64t.into(), &[]).into_int_value();
                Some(match name {
                    "clock64" | "globaltimer" => v.into(),
                    "clock_hi" | "globaltimer_hi" => {
                        let s = b
                            .build_right_shift(v, i64t.const_int(32, false), false, "")
                            .unwrap();
                        b.build_int_truncate(s, i32t, "").unwrap().into()
                    }
                    _ => b.build_int_truncate(v, i32t, "").unwrap().into(),
                })
            }
            "current_graph_exec" => Some(i64t.const_zero().into()),
            // The launch sets them: a cooperative launch's grid workspace for cooperative
            // groups' `this_grid()` (`runtime/launch.rs`, `GridWorkspace`).
            n if n.starts_with("envreg") => {
                let k = n["envreg".len()..].parse::<u64>().unwrap_or(0);
                let t = sync::self_ptr(l);
                Some(l.call_v(
                    "ptx2llvm_rt_envreg",
                    i32t.into(),
                    &[t, i32t.const_int(k, false).into()],
                ))
            }
            n if n.starts_with("reserved_smem") => c32(0),
            n if n.starts_with("pm") => {
                if n.ends_with("_64") {
                    Some(i64t.const_zero().into())
                } else {
                    c32(0)
                }
            }
            _ => None,
        }
    }

    fn kernel<'c>(&self, _l: &Lowerer<'c, '_>, _f: FunctionValue<'c>, _directives: &[FnDirective]) {
    }

    fn sync_op<'c, 'a>(
        &self,
        l: &Lowerer<'c, 'a>,
        fs: &mut FnState<'c, 'a>,
        i: &Instruction<'a>,
    ) -> Result<bool, Error> {
        sync::lower(l, fs, i)
    }

    /// `st.async` and `red.async`, which the shared lowering of `st`/`red` leaves to inline
    /// PTX: the store or reduction and its complete-tx (`mbarrier.rs`).
    fn instruction<'c, 'a>(
        &self,
        l: &Lowerer<'c, 'a>,
        fs: &mut FnState<'c, 'a>,
        i: &Instruction<'a>,
    ) -> Result<bool, Error> {
        use crate::isa::Opcode;
        if matches!(i.opcode, Opcode::St | Opcode::Red) && i.mods.contains(&crate::isa::Mod::Async)
        {
            return mbarrier::lower(l, fs, i);
        }
        Ok(false)
    }

    /// There is no inline-assembly fallback on a CPU: whatever reaches it (tensor cores, TMA,
    /// textures, clusters, asynchronous copies, …) is reported by name.
    fn inline_asm_ok(&self, i: &Instruction) -> Result<(), Error> {
        let full = lower::inline_asm::spell(i);
        let first = full
            .split_whitespace()
            .next()
            .unwrap_or(i.opcode.spelling())
            .to_string();
        Err(Error::Unsupported {
            msg: format!("not supported on the cpu target: `{first}`"),
            span: i.span,
        })
    }

    /// `ptx2llvm_rt_trap(ptx2llvm_rt_self(), msg)`: the launch fails naming kernel, block,
    /// thread and, through `msg`, the source position.
    fn trap<'c>(&self, l: &Lowerer<'c, '_>, msg: &str) {
        let s =
            l.b.build_global_string_ptr(msg, "trap.msg")
                .unwrap()
                .as_pointer_value();
        let pt = l.ptr(Space::Generic);
        if let Some(t) = l.call("ptx2llvm_rt_self", Some(pt.into()), &[]) {
            l.call("ptx2llvm_rt_trap", None, &[t, s.into()]);
        }
    }
}

/// Errors of a cpu compilation.
#[derive(Debug, thiserror::Error)]
pub enum CompileError {
    #[error("{}", .0.iter().map(|e| e.to_string()).collect::<Vec<_>>().join("\n"))]
    Lower(Vec<Error>),
    #[error("{0}")]
    Llvm(String),
}

/// A kernel of a compiled module.
#[derive(Clone, Debug)]
pub struct KernelInfo {
    pub name: String,
    pub params: ParamLayout,
    /// The warp engine, thread loops or coroutines.
    pub path: fission::KernelPath,
    /// Why the warp engine does not run this kernel (`None`: it does, or it was not asked).
    pub warp_refused: Option<String>,
}

/// What `build` produces: the LLVM module, its kernels, the static shared-memory layout and the
/// module variables the host may reach (names and sizes; JIT builds only).
type Built<'c> = (
    Module<'c>,
    Vec<KernelInfo>,
    SharedLayout,
    Vec<(String, u64)>,
);

/// What a build is for: the JIT (else an object or text), which kernel scheme, and the CTA
/// shape to specialize thread loops for.
struct Purpose<'d> {
    jit: bool,
    mode: fission::CpuMode,
    block: Option<[u32; 3]>,
    debug: &'d DebugOptions,
    /// Leave the warp engine's fault replays out (`llvm::simd::drop_replays`): the program
    /// compiles them when a fault needs one (`ReplayBuild`).
    lazy_replay: bool,
    /// The program tests each launch's grid for the flat x indices the warp code marks
    /// (`llvm::simd::flatx`; `Program::with_replay` makes the test): the builds that get
    /// `with_replay`, and their replays (the same code).
    flat_x: bool,
}

/// Lowers, rewrites for the runtime ABI and optimizes `module` into `ctx`.
fn build<'c, 'a>(
    ctx: &'c Context,
    module: &'a ast::Module<'a>,
    info: &'c ModuleInfo,
    name: &str,
    opt: u8,
    machine: &HostMachine,
    Purpose {
        jit,
        mode,
        block,
        debug,
        lazy_replay,
        flat_x,
    }: Purpose,
) -> Result<Built<'c>, CompileError> {
    static CPU: Cpu = Cpu;
    let addr64 = module.address_size.unwrap_or(64) == 64;
    if !addr64 {
        return Err(CompileError::Llvm(
            "the cpu target needs `.address_size 64`".into(),
        ));
    }
    let mut kernels: Vec<KernelInfo> = module
        .items
        .iter()
        .filter_map(|i| match i {
            Item::Function(f) if f.kind == FnKind::Entry && f.body.is_some() => Some(KernelInfo {
                name: f.name.to_string(),
                params: layout(f),
                path: fission::KernelPath::Coroutine { why: String::new() },
                warp_refused: None,
            }),
            _ => None,
        })
        .collect();
    let sm = module
        .target
        .iter()
        .find_map(|t| t.strip_prefix("sm_"))
        .and_then(|s| {
            s.trim_end_matches(|c: char| c.is_ascii_alphabetic())
                .parse()
                .ok()
        })
        .unwrap_or(80);
    // The kernels the thread-loop rewrites make live as long as this lowering.
    let scratch = &fission::Scratch::default();
    let (m, dbg, globals) = {
        let mut l = Lowerer::new(ctx, &CPU, name, addr64, sm, info);
        machine.configure(&l.module);
        l.enable_debug(module, debug, opt > 0);
        lower::module::lower_module(&mut l, module).map_err(CompileError::Lower)?;
        // For the JIT the host reaches module variables by name (`Program::global`): they are
        // not constants, before any cleanup could fold their loads (the host may write
        // `.const` data before a launch).
        let globals = if jit {
            crate::llvm::cpu::expose_globals(&l.module)
        } else {
            Vec::new()
        };
        // The warp engine first; thread loops or coroutines for the kernels it refuses.
        let mut warp = Vec::new();
        if mode.warp() && opt > 0 {
            for it in &module.items {
                let Item::Function(f) = it else { continue };
                let Some(k) = kernels.iter_mut().find(|k| k.name == f.name) else {
                    continue;
                };
                if f.kind != FnKind::Entry || f.body.is_none() {
                    continue;
                }
                let places: Vec<ParamPlace> = k
                    .params
                    .params
                    .iter()
                    .map(|p| ParamPlace {
                        offset: p.offset,
                        aggregate: p.aggregate,
                    })
                    .collect();
                // `-g` describes each thread's registers: gdb shows them on coroutines, one
                // thread at a time (the warp function keeps 32 lanes in vectors). Line tables
                // alone (`.loc`) take the warp engine: its functions carry the locations (gdb
                // line breakpoints hit; perf's lines need `-disable-machine-sink`, below).
                if l.debug.as_ref().is_some_and(|d| d.full()) {
                    k.warp_refused = Some(
                        "-g: per-thread registers for gdb need a thread's own state \
                         (coroutines)"
                            .to_string(),
                    );
                    continue;
                }
                // A kernel's `.reqntid` is the only block it may be launched with (as for
                // thread loops): the warp code is specialized for it, not for the caller's.
                let kblock = fission::req_ntid(f).or(block);
                match simd::plan(&l.module, machine, f, &places, kblock, mode, flat_x) {
                    Ok(p) => {
                        if let (Some(d), Some(kf)) = (&l.debug, l.module.get_function(f.name)) {
                            for w in [".simd.w", ".simd.rows"] {
                                if let Some(wf) = l.module.get_function(&format!("{}{w}", f.name)) {
                                    d.rehome(kf, wf);
                                }
                            }
                        }
                        k.path = fission::KernelPath::Warp(std::sync::Arc::new(p));
                        warp.push(k.name.clone());
                        if jit {
                            if let Some(kf) = l.module.get_function(f.name) {
                                // SAFETY: nothing calls a kernel function; `K.simd.w` was
                                // built from it and does not refer to it.
                                unsafe { kf.delete() };
                            }
                        }
                    }
                    Err(why) => k.warp_refused = Some(why),
                }
            }
        }
        for (name, path) in
            fission::lower_kernels(&mut l, module, mode, !jit, block, &warp, scratch)
        {
            if let Some(k) = kernels.iter_mut().find(|k| k.name == name) {
                k.path = path;
            }
        }
        (l.module, l.debug.take(), globals)
    };
    // Coroutine entry points: for the JIT, of the kernels without thread loops; objects
    // export one for every kernel.
    let layouts: Vec<KernelLayout> = kernels
        .iter()
        .filter(|k| !jit || matches!(k.path, fission::KernelPath::Coroutine { .. }))
        .map(|k| KernelLayout {
            name: k.name.clone(),
            params: k
                .params
                .params
                .iter()
                .map(|p| ParamPlace {
                    offset: p.offset,
                    aggregate: p.aggregate,
                })
                .collect(),
        })
        .collect();
    let shared = crate::llvm::cpu::prepare_module(&m, &layouts)
        .map_err(|e| CompileError::Llvm(e.join("\n")))?;
    // The entry points and thread-loop drivers are built: complete the debug metadata, the
    // wrappers and thread-loop functions first, so the kernel code inlined into them keeps its
    // lines.
    if let Some(d) = &dbg {
        d.finalize(&m);
    }
    verify(&m).map_err(|e| CompileError::Llvm(format!("the generated IR does not verify: {e}")))?;
    machine.mark_functions(&m);
    // LLVM's options are process-wide and set once, before the first code generation that
    // needs them: `PTX2LLVM_LLVM_OPTS` (experiments), and `-disable-machine-sink` for line
    // tables in warp functions — MachineSink moves a vector loop's body into a new back-edge
    // block and merges its locations to line 0, so perf lost lines of the loop (examples/debug
    // `series`: kernel.cu:25). Measured: no cost beyond noise on the warp-engine benchmark
    // kernels (geomean ratio to C 3.83 without, 3.97 with, pass-to-pass spread ±10%), so it may
    // stay on for the later modules of the process. `-experimental-debug-variable-locations=
    // false` takes the variable-location-list implementation of LiveDebugValues: the default
    // (instruction referencing) tracks every machine location through the function even when
    // the module has line tables and no variables, 10 of the 45 s of code generation of
    // Triton's matmul on the warp engine; the other finds no variable and returns.
    // `-funcspec-max-iters=0` (set before `PTX2LLVM_LLVM_OPTS`, which may override it) turns off
    // IPSCCP's function specialization: its cost model prices every instruction of each
    // function that a call passes a constant (`K.simd` passes the barrier state to its warp
    // function), and it cloned nothing in the benchmark suite: the optimized IR of all 23
    // kernels is byte for byte the same without it. It took 0.4-0.5 s of the 1.6 s of
    // `default<O2>` on Triton's matmul (one out-of-line warp function, 47,000 instructions).
    // `-enable-epilogue-vectorization=false`: LoopVectorize's loops are thread loops (warp
    // functions are vector code already), where a second, narrower vector loop for the
    // remainder of a CTA's threads is code for a handful of them: with the thread loops'
    // interleave count of 1 (`fission::cta`) it cut histogram's compile from ~250 to ~200 ms
    // CPU, its run level.
    static NO_FUNCSPEC: std::sync::Once = std::sync::Once::new();
    NO_FUNCSPEC.call_once(|| {
        crate::llvm::fission::parse_llvm_options(&[
            "-funcspec-max-iters=0",
            "-capture-tracking-max-uses-to-explore=2000",
            "-enable-epilogue-vectorization=false",
        ])
    });
    let env_opts = std::env::var("PTX2LLVM_LLVM_OPTS").unwrap_or_default();
    let mut opts: Vec<&str> = env_opts.split_whitespace().collect();
    if dbg.is_some()
        && kernels
            .iter()
            .any(|k| matches!(k.path, fission::KernelPath::Warp(_)))
    {
        opts.push("-disable-machine-sink");
        opts.push("-experimental-debug-variable-locations=false");
    }
    // `-misched-regpressure=false` (the pre-RA machine scheduler without its register-pressure
    // heuristics) for a module of warp-engine kernels: in softmax_warp's warp function (a row
    // of 32 floats per lane, each value two zmm, 32 `expf` chains between two shuffle
    // reductions) the schedule made with them left 954 of 4,615 machine instructions as
    // 64-byte spills and reloads, and the greedy allocator's evictions among them were 51 of
    // the 125 ms of code generation; without them 412 (`llc`: 0.14 -> 0.08 s; compile CPU
    // x0.77, run level; Triton's matmul: 24,139 -> 13,645 spills and reloads). Measured, not
    // understood. Not with thread loops: histogram's ran x1.015 slower (7 pairs). Like
    // `-disable-machine-sink`, the first such module sets it for the rest of the process.
    if kernels
        .iter()
        .any(|k| matches!(k.path, fission::KernelPath::Warp(_)))
        && !kernels
            .iter()
            .any(|k| matches!(k.path, fission::KernelPath::Fission(_)))
    {
        opts.push("-misched-regpressure=false");
    }
    // `-disable-lsr` for a module with thread loops: Loop Strength Reduction was 18 of the
    // ~150 ms of histogram's code generation (its thread loops' many variants), and the loops
    // it rewrites are simple counted loops over the CTA's threads that need no strength
    // reduction: compile CPU x0.85 (median of 3 pairs, 0.72-1.00), kernel CPU time per launch
    // level (histogram, spmv_thread: x0.99). Process-wide: the first module's options stand.
    if kernels
        .iter()
        .any(|k| matches!(k.path, fission::KernelPath::Fission(_)))
    {
        opts.push("-disable-lsr");
    }
    if !opts.is_empty() {
        crate::llvm::fission::set_llvm_options(&opts);
    }
    if opt > 0
        && kernels
            .iter()
            .any(|k| matches!(k.path, fission::KernelPath::Fission(_)))
    {
        fission::pre_optimize(ctx, &m, machine).map_err(CompileError::Llvm)?;
    } else if let Some(p) = std::env::var_os("PTX2LLVM_FIS_DUMP") {
        // The same dump (`pre_optimize` writes it) of modules without thread loops: lit tests
        // check the warp engine's vector code in it.
        let _ = m.print_to_file(p);
    }
    // After the dump, which shows the warp functions as built.
    if lazy_replay && opt > 0 {
        crate::llvm::simd::drop_replays(&m);
    }
    if opt > 0 {
        crate::llvm::simd::seal_replay(&m, machine).map_err(CompileError::Llvm)?;
    }
    machine.optimize(&m, opt).map_err(CompileError::Llvm)?;
    if opt > 0
        && kernels
            .iter()
            .any(|k| matches!(k.path, fission::KernelPath::Warp(_)))
    {
        // Loops that `default<On>` empties after its loop deletion has run: an ordered round's
        // loop over warps 1-7 (warp 0 peeled) in a halving tree's one-warp step, whose regions
        // the skip guards drop only once the warp's range is known (reduce_halving: four
        // loops of seven idle trips per CTA).
        // A uniform branch's mask tested as bits (`llvm::simd::fold_mask_bits`): the tests
        // become the branch's condition once InstCombine and EarlyCSE see a scalar select, and the
        // paths a taken branch never runs (masked accesses) go.
        // GVN, in kernels with skip guards (rounds that some warps skip: a halving tree's
        // one-warp steps): a step's shared store reaches the next step's loads once peeling
        // and unrolling have made the steps straight-line code, after `default<On>`'s own
        // GVN ran, and the steps pass their sums in registers instead of through a store and
        // a reload each (reduce_block ×0.79). Not in every warp kernel: matmul ×1.013.
        let forward = kernels.iter().any(|k| match &k.path {
            fission::KernelPath::Warp(p) => p.report.skip_guards,
            _ => false,
        });
        // With the shared-memory size loaded once (`llvm::simd::hoist_smem_size`), every
        // in-block test of the one-warp steps is one value: jump threading makes the steps'
        // plain path one straight line, whose stores GVN then hands to the next step's loads
        // (reduce_halving, whose `s[]` is dynamic and has no static floor to fold the tests).
        let thread = forward && crate::llvm::simd::hoist_smem_size(&m) > 0;
        let gvn = match (forward, thread) {
            (true, true) => "jump-threading,gvn,instcombine<no-verify-fixpoint>,",
            (true, false) => "gvn,instcombine<no-verify-fixpoint>,",
            _ => "",
        };
        // A vector load's members blended to the GPU's NaN one by one, then interleaved
        // again for a vector store: one select of the whole vector, the shuffles gone
        // (`llvm::simd::fold_nan_shuffles`; vecadd_f4).
        if crate::llvm::simd::fold_nan_shuffles(&m) > 0 {
            machine
                .run_pipeline(&m, "function(early-cse,instcombine<no-verify-fixpoint>)")
                .map_err(CompileError::Llvm)?;
        }
        // An iteration's entry-tested accesses, each a diamond on the same condition: one
        // path of their vector sides, one of their gathers (`llvm::simd::fold_diamond_chains`).
        if crate::llvm::simd::fold_diamond_chains(&m) > 0 {
            machine
                .run_pipeline(&m, "function(simplifycfg,early-cse)")
                .map_err(CompileError::Llvm)?;
        }
        // Vector phis a loop steps by one scalar in every lane, as lane 0's scalar plus
        // offsets (`llvm::simd::fold_lane_offsets`): InstCombine folds the lane tests to the
        // offsets, and LICM takes them out of the loop.
        if crate::llvm::simd::fold_lane_offsets(&m) > 0 {
            machine
                .run_pipeline(
                    &m,
                    "function(instcombine<no-verify-fixpoint>,early-cse,loop-mssa(licm),adce)",
                )
                .map_err(CompileError::Llvm)?;
        }
        // ADCE last: a divergent loop's mask of the lanes that left it is a phi cycle
        // (`Warp::edge`) that nothing reads once the loop ends its region (a halo tile's load
        // loop before the barrier); InstCombine keeps such cycles, and `default<On>`'s ADCE
        // ran before inlining and the late passes made it dead (conv3x3: five mask
        // instructions per warp and iteration).
        let again = if crate::llvm::simd::fold_mask_bits(&m) > 0 {
            format!(
                "function({gvn}instcombine<no-verify-fixpoint>,early-cse,simplifycfg,loop(loop-deletion),adce)"
            )
        } else {
            format!("function({gvn}loop(loop-deletion),adce)")
        };
        machine
            .run_pipeline(&m, &again)
            .map_err(CompileError::Llvm)?;
        // Gathers of lanes that each walk their own row (a thread-per-row loop) from a
        // transposed window of the rows (`llvm::simd::fold_row_windows`); the paths of the
        // run-time lane tests before each gather go dead and ADCE removes them.
        let windowed = crate::llvm::simd::fold_row_windows(&m);
        if !windowed.is_empty() {
            machine
                .run_pipeline(&m, "always-inline")
                .map_err(CompileError::Llvm)?;
            for name in &windowed {
                if let Some(f) = m.get_function(name) {
                    machine
                        .run_function_pipeline(
                            f,
                            "sroa,early-cse,instcombine<no-verify-fixpoint>,adce,simplifycfg",
                        )
                        .map_err(CompileError::Llvm)?;
                }
            }
            crate::llvm::simd::drop_row_window_helper(&m);
        }
        // Loads `default<On>` made without a memory type (a halving tree's last step) block
        // GVN's forwarding of the step before's store; typed, GVN forwards it.
        if forward && crate::llvm::simd::retype_loads(&m) > 0 {
            machine
                .run_pipeline(&m, "function(gvn,instcombine<no-verify-fixpoint>)")
                .map_err(CompileError::Llvm)?;
        }
        crate::llvm::simd::fold_load_defaults(&m);
        crate::llvm::simd::sink_cold_lanes(&m);
        if crate::llvm::cpu::host_has("+avx512f") {
            crate::llvm::simd::fold_scalef(&m);
        }
        if crate::llvm::cpu::host_has("+avx512dq") {
            crate::llvm::simd::fold_range(&m);
        }
        // After the last InstCombine, which would make the shuffles wide integers again.
        crate::llvm::simd::fold_wide_pieces(&m);
        // Last: InstCombine would take the phis' lane-keeping shuffles back out.
        crate::llvm::simd::fold_unread_lanes(&m);
        // After the passes that match masked loads (`passthru`, `demand`).
        crate::llvm::simd::fold_page_loads(&m);
        // A block's table stores (bitonic's `a[lo]`, `a[hi]`) as one blend and plain store per
        // half (`llvm::simd::fold_table_blends`): bitonic's kernel CPU time x0.85.
        crate::llvm::simd::fold_table_blends(&m);
        // The f64 NaN selects off the dependence chains of f64 arithmetic
        // (`llvm::simd::fold_f64_nans`).
        crate::llvm::simd::fold_f64_nans(&m);
    }
    if let Some(p) = std::env::var_os("PTX2LLVM_OPT_DUMP") {
        // The module as code generation gets it: lit tests check the warp engine's folds
        // after `default<On>` (`llvm::simd::fold_load_defaults`) in it.
        let _ = m.print_to_file(p);
    }
    Ok((m, kernels, shared, globals))
}

/// What `compile` produces.
pub struct Output {
    pub bytes: Vec<u8>,
    pub text: bool,
}

/// Translates a parsed PTX module to host IR, bitcode, assembly or an object; `info` is what
/// `check::check_module` found, and the module must have passed it.
pub fn compile<'a>(
    module: &'a ast::Module<'a>,
    info: &ModuleInfo,
    emit: EmitKind,
    opt: u8,
    name: &str,
) -> Result<Output, CompileError> {
    compile_debug(module, info, emit, opt, name, &DebugOptions::default())
}

/// `compile` with the debug information `debug` asks for (`-g`; line tables from `.loc`).
pub fn compile_debug<'a>(
    module: &'a ast::Module<'a>,
    info: &ModuleInfo,
    emit: EmitKind,
    opt: u8,
    name: &str,
    debug: &DebugOptions,
) -> Result<Output, CompileError> {
    let machine = HostMachine::new(opt).map_err(CompileError::Llvm)?;
    let ctx = Context::create();
    // Objects export a coroutine entry point per kernel, which `ptx2llvm_rt_launch` takes, and
    // register the thread-loop versions of the kernels that have one (a constructor calls
    // `ptx2llvm_rt_register_fis`), which it then runs instead; IR and assembly show the
    // thread-loop code when `PTX2LLVM_CPU_MODE=fission` asks for it.
    // With `-g` (a variable per PTX register) an object runs coroutines, as `run -g` does:
    // gdb then shows one CUDA thread's registers, and thread loops with those variables cost
    // 1.6x the compile time of the code without them (Triton's softmax at -O2).
    let env = fission::CpuMode::from_env();
    let mode = match (emit, env) {
        (EmitKind::Llvm | EmitKind::Asm, fission::CpuMode::Fission) => fission::CpuMode::Fission,
        (EmitKind::Object, fission::CpuMode::Coroutine) => fission::CpuMode::Coroutine,
        (EmitKind::Object, fission::CpuMode::Auto) if debug.full => fission::CpuMode::Coroutine,
        (EmitKind::Object, _) => fission::CpuMode::Auto,
        _ => fission::CpuMode::Coroutine,
    };
    let purpose = Purpose {
        jit: false,
        mode,
        block: None,
        debug,
        lazy_replay: false,
        flat_x: false,
    };
    let (m, kernels, shared, _) = build(&ctx, module, info, name, opt, &machine, purpose)?;
    // `ptx2llvm_rt_launch` does not know the module's alignments and starts blocks at a page.
    if emit == EmitKind::Object {
        let over = over_aligned_shared(module, crate::runtime::shared::OBJECT_ALIGN);
        if !over.is_empty() {
            return Err(CompileError::Lower(over));
        }
    }
    let regs: Vec<(String, String, Vec<u32>)> = kernels
        .iter()
        .filter_map(|k| match &k.path {
            fission::KernelPath::Fission(info) => {
                Some((k.name.clone(), format!("{}.fis", k.name), info.encode()))
            }
            fission::KernelPath::Warp(p) => {
                Some((k.name.clone(), format!("{}.simd", k.name), p.info.encode()))
            }
            _ => None,
        })
        .collect();
    crate::llvm::cpu::add_fis_registrations(&m, &regs);
    // Linked objects reach the runtime helpers without an exported symbol by lookup.
    crate::llvm::cpu::add_lookup_stubs(&m, &crate::runtime::needs_lookup);
    // Tell object users how much static shared memory the module's kernels need.
    let g = m.add_global(ctx.i32_type(), None, "ptx2llvm_static_shared_bytes");
    g.set_initializer(&ctx.i32_type().const_int(shared.bytes as u64, false));
    g.set_constant(true);
    let bytes = machine.emit(&m, emit).map_err(CompileError::Llvm)?;
    Ok(Output {
        bytes,
        text: matches!(emit, EmitKind::Llvm | EmitKind::Asm),
    })
}

/// Errors for the `.shared` variables of `module` aligned to more than `most` bytes.
fn over_aligned_shared(module: &ast::Module, most: u32) -> Vec<Error> {
    fn walk(stmts: &[ast::Statement], most: u32, out: &mut Vec<Error>) {
        for s in stmts {
            match s {
                ast::Statement::Var(v) => check(v, most, out),
                ast::Statement::Block(b) => walk(&b.stmts, most, out),
                _ => {}
            }
        }
    }
    fn check(v: &ast::VarDecl, most: u32, out: &mut Vec<Error>) {
        if let Some(a) = v.align.filter(|&a| {
            a > most && matches!(v.space, Mod::Shared | Mod::SharedCta | Mod::SharedCluster)
        }) {
            out.push(Error::Unsupported {
                msg: format!(
                    "not supported on the cpu target: a `.shared` variable aligned to {a} bytes \
                     in an object (at most {most}: `ptx2llvm_rt_launch` aligns the block to \
                     that; `ptx2llvm run` and the APIs allow any alignment)"
                ),
                span: v.span,
            });
        }
    }
    let mut out = Vec::new();
    for i in &module.items {
        match i {
            Item::Var(v) => check(v, most, &mut out),
            Item::Function(f) => {
                if let Some(b) = &f.body {
                    walk(&b.stmts, most, &mut out);
                }
            }
            _ => {}
        }
    }
    out
}

/// Whether the process (the C library, libm, …) defines `name`.
fn in_process(name: &str) -> bool {
    let Ok(c) = std::ffi::CString::new(name) else {
        return false;
    };
    // SAFETY: dlsym with RTLD_DEFAULT and a C string only looks the name up.
    !unsafe { libc::dlsym(libc::RTLD_DEFAULT, c.as_ptr()) }.is_null()
}

/// A module compiled for this process: its kernels can be launched.
pub struct Program {
    // Field order: the code ranges are unregistered before the engine frees the code.
    _code: crate::runtime::fault::CodeRanges,
    engine: Engine,
    kernels: Vec<KernelInfo>,
    static_shared: SharedLayout,
    /// Module-scope variables (`.global`, `.const`) and their sizes.
    globals: Vec<(String, u64)>,
    /// The fault replays left out of the warp-engine kernels' code, built on demand: per
    /// warp-engine kernel, made once (`code` runs at every launch of the driver API).
    replays: Vec<(
        String,
        std::sync::Arc<dyn crate::runtime::fission::LazyReplay>,
    )>,
    /// The launch tests of the warp-engine kernels whose alignment tests it makes
    /// (`llvm::simd::Alignment::Launch`), with the build they fall back to (`KernelFallback`).
    aligned: Vec<(String, std::sync::Arc<crate::runtime::fission::AlignGuard>)>,
}

/// The fault replays of a program built without them (`Purpose::lazy_replay`): after a fault
/// the runtime replays the CTA lane by lane to name the faulting thread (`K.simd` with a mode
/// other than `MODE_ALL`), code that runs only then yet was 20-35% of a barrier kernel's
/// compile. The first fault that needs it builds the same source again with the replays, as
/// a build without `lazy_replay` makes it (the same IR: the same lane faults at the same
/// access), its module variables bound to this program's (the replay reads what the host and
/// the launch wrote there), and the runtime runs that build's `K.simd` for the replay.
pub struct ReplayBuild {
    src: String,
    name: String,
    opt: u8,
    mode: fission::CpuMode,
    block: Option<[u32; 3]>,
    /// The one kernel the program was built for (`cache::Request::kernel`): the others are
    /// left out of the replay's build too.
    kernel: Option<String>,
    debug: DebugOptions,
    /// The program's module variables and their addresses.
    bound: Vec<(String, usize)>,
    program: std::sync::OnceLock<Result<ReplayProgram, String>>,
}

/// The replay's program, which the runtime's workers share.
struct ReplayProgram(Program);

// SAFETY: once built the program is only read (code addresses), and the code is reentrant; its
// LLVM context is touched again only when it drops, with the `ReplayBuild` that owns it.
unsafe impl Send for ReplayProgram {}
// SAFETY: as above.
unsafe impl Sync for ReplayProgram {}

impl ReplayBuild {
    /// The replay of `p`, built as `req` built `p` in `mode` (`req.mode` for the replays; the
    /// thread-loop mode for `KernelFallback`, which leaves the warp engine out).
    fn new(req: &cache::Request, p: &Program, mode: fission::CpuMode) -> ReplayBuild {
        ReplayBuild {
            src: req.src.to_string(),
            name: req.name.to_string(),
            opt: req.opt,
            mode,
            block: req.block,
            kernel: req.kernel.map(str::to_string),
            debug: req.debug.clone(),
            bound: p
                .globals
                .iter()
                .filter_map(|(n, _)| Some((n.clone(), p.global(n)?.0)))
                .collect(),
            program: std::sync::OnceLock::new(),
        }
    }

    /// The replay's program, built by the first caller.
    fn program(&self) -> Result<&Program, String> {
        let built = self.program.get_or_init(|| {
            // On a thread of its own: the worker that faulted may run on a small stack, and
            // LLVM's recursion over a large kernel needs more.
            std::thread::scope(|s| {
                std::thread::Builder::new()
                    .name("ptx2llvm-replay".into())
                    .stack_size(256 << 20)
                    .spawn_scoped(s, || self.build().map(ReplayProgram))
                    .map_err(|e| e.to_string())?
                    .join()
                    .map_err(|_| "the replay's build panicked".to_string())?
            })
        });
        built.as_ref().map(|p| &p.0).map_err(String::clone)
    }

    fn build(&self) -> Result<Program, String> {
        let (mut ast, diags) = crate::syntax::parse(&self.src);
        if !diags.is_empty() {
            return Err("the module no longer parses".into());
        }
        let (info, diags) = crate::check::check_module(&ast);
        if !diags.is_empty() {
            return Err("the module no longer checks".into());
        }
        if let Some(k) = &self.kernel {
            ast.items.retain(|i| {
                !matches!(i, Item::Function(f)
                    if f.kind == FnKind::Entry && f.body.is_some() && f.name != k.as_str())
            });
        }
        Program::load_purpose(
            &ast,
            &info,
            self.opt,
            &self.name,
            Purpose {
                jit: true,
                mode: self.mode,
                block: self.block,
                debug: &self.debug,
                lazy_replay: false,
                flat_x: true,
            },
            &self.bound,
        )
        .map_err(|e| e.to_string())
    }
}

/// A kernel's replay: `symbol` (`K.simd`) of its program's `ReplayBuild`.
struct KernelReplay {
    build: std::sync::Arc<ReplayBuild>,
    symbol: String,
}

impl crate::runtime::fission::LazyReplay for KernelReplay {
    fn entry(&self) -> Result<crate::runtime::fission::FisEntry, String> {
        let p = self.build.program()?;
        let a = p
            .engine
            .address(&self.symbol)
            .ok_or_else(|| format!("the replay's build has no `{}`", self.symbol))?;
        // SAFETY: the replay's build compiled `symbol` with the thread-loop CTA ABI, as the
        // program's own.
        Ok(unsafe { std::mem::transmute::<usize, crate::runtime::fission::FisEntry>(a) })
    }
}

/// A warp-engine kernel's code without the warp engine (thread loops or coroutines, which test
/// each access's alignment), for the launches whose parameters fail its launch test
/// (`runtime::fission::AlignGuard`): `kernel` of a second build of the program's source in
/// the thread-loop mode, made when such a launch first comes, as a fault's replay is, so that
/// compile time stays what it was.
struct KernelFallback {
    build: std::sync::Arc<ReplayBuild>,
    kernel: String,
}

impl crate::runtime::fission::LazyCode for KernelFallback {
    fn code(&self) -> Result<crate::runtime::KernelCode, String> {
        self.build
            .program()?
            .code(&self.kernel)
            .ok_or_else(|| format!("the build without the warp engine has no `{}`", self.kernel))
    }
}

/// Where a program's machine code comes from.
enum Engine {
    /// Compiled by MCJIT in this process. Field order: the engine (which owns the module)
    /// drops before the context.
    Mcjit {
        jit: Jit<'static>,
        _ctx: Box<Context>,
    },
    /// An object compiled earlier (the kernel cache, `cache.rs`), linked by ORC, with the
    /// addresses of its kernels and variables (looked up once: an ORC lookup takes a lock and
    /// interns the name, too slow for every launch).
    Object {
        jit: crate::llvm::orc::ObjectJit,
        addresses: Vec<(String, usize)>,
    },
}

impl Engine {
    fn address(&self, name: &str) -> Option<usize> {
        match self {
            Engine::Mcjit { jit, .. } => jit.address(name),
            Engine::Object { jit, addresses } => addresses
                .iter()
                .find(|(n, _)| n == name)
                .map(|a| a.1)
                .or_else(|| jit.address(name)),
        }
    }

    fn global_address(&self, name: &str) -> Option<usize> {
        match self {
            Engine::Mcjit { jit, .. } => jit.global_address(name),
            Engine::Object { .. } => self.address(name),
        }
    }
}

/// Refuses a module that calls functions neither it, the runtime (`syms`) nor the process
/// defines (MCJIT would leave such a call a call to address 0), naming them.
fn check_defined(m: &Module, syms: &[(&str, usize)]) -> Result<(), CompileError> {
    let missing: Vec<String> = crate::llvm::cpu::undefined_functions(m)
        .into_iter()
        .filter(|n| !syms.iter().any(|(s, _)| s == n) && !in_process(n))
        .collect();
    if missing.is_empty() {
        return Ok(());
    }
    Err(CompileError::Llvm(format!(
        "the module calls {} that it does not define: {} (on a GPU the driver's \
         linker would need them too; link the PTX that defines them into the module)",
        if missing.len() == 1 {
            "an external function"
        } else {
            "external functions"
        },
        missing
            .iter()
            .map(|n| format!("`{n}`"))
            .collect::<Vec<_>>()
            .join(", ")
    )))
}

impl Program {
    /// Compiles `module` with the JIT, in the mode `PTX2LLVM_CPU_MODE` names (thread loops
    /// where possible by default).
    pub fn load<'a>(
        module: &'a ast::Module<'a>,
        info: &ModuleInfo,
        opt: u8,
        name: &str,
    ) -> Result<Program, CompileError> {
        Self::load_with(module, info, opt, name, fission::CpuMode::from_env())
    }

    /// Compiles `module` with the JIT, running kernels as `mode` says.
    pub fn load_with<'a>(
        module: &'a ast::Module<'a>,
        info: &ModuleInfo,
        opt: u8,
        name: &str,
        mode: fission::CpuMode,
    ) -> Result<Program, CompileError> {
        Self::load_for(module, info, opt, name, mode, None)
    }

    /// Compiles `module` with the JIT, running kernels as `mode` says, with the thread-loop
    /// code specialized for CTAs of shape `block` when given (`%ntid` a constant: loops over
    /// threads with known trip counts). Such kernels can only be launched with that block
    /// (`runtime::launch_code` refuses others); `ptx2llvm run` knows its block and does this.
    pub fn load_for<'a>(
        module: &'a ast::Module<'a>,
        info: &ModuleInfo,
        opt: u8,
        name: &str,
        mode: fission::CpuMode,
        block: Option<[u32; 3]>,
    ) -> Result<Program, CompileError> {
        Self::load_debug(
            module,
            info,
            opt,
            name,
            mode,
            block,
            &DebugOptions::default(),
        )
    }

    /// `load_for` with the debug information `debug` asks for (`-g`; line tables from
    /// `.loc` without it).
    pub fn load_debug<'a>(
        module: &'a ast::Module<'a>,
        info: &ModuleInfo,
        opt: u8,
        name: &str,
        mode: fission::CpuMode,
        block: Option<[u32; 3]>,
        debug: &DebugOptions,
    ) -> Result<Program, CompileError> {
        Self::load_purpose(
            module,
            info,
            opt,
            name,
            Purpose {
                jit: true,
                mode,
                block,
                debug,
                lazy_replay: false,
                flat_x: false,
            },
            &[],
        )
    }

    /// The JIT's build of `req` (`cache::Request`) with the fault replays left out, compiled
    /// when a fault needs one (`ReplayBuild`).
    pub(crate) fn load_lazy<'a>(
        req: &cache::Request,
        module: &'a ast::Module<'a>,
        info: &ModuleInfo,
    ) -> Result<Program, CompileError> {
        let p = Self::load_purpose(
            module,
            info,
            req.opt,
            req.name,
            Purpose {
                jit: true,
                mode: req.mode,
                block: req.block,
                debug: req.debug,
                lazy_replay: true,
                flat_x: true,
            },
            &[],
        )?;
        Ok(p.with_replay(req))
    }

    /// `self`, whose warp-engine kernels were built without their replays, with the means to
    /// build them (`ReplayBuild`) as `req` built `self`.
    pub(crate) fn with_replay(mut self, req: &cache::Request) -> Program {
        let build = std::sync::Arc::new(ReplayBuild::new(req, &self, req.mode));
        let loops = std::sync::Arc::new(ReplayBuild::new(req, &self, fission::CpuMode::Fission));
        self.aligned = self
            .kernels
            .iter()
            .filter_map(|k| {
                let fission::KernelPath::Warp(p) = &k.path else {
                    return None;
                };
                let tests = match &p.report.misaligned {
                    crate::llvm::simd::Alignment::Launch(tests) => tests.clone(),
                    _ => Vec::new(),
                };
                let flat_x = p.report.flat.guard();
                if tests.is_empty() && flat_x.is_none() {
                    return None;
                }
                let guard = crate::runtime::fission::AlignGuard {
                    tests,
                    flat_x,
                    fallback: std::sync::Arc::new(KernelFallback {
                        build: loops.clone(),
                        kernel: k.name.clone(),
                    }),
                };
                Some((k.name.clone(), std::sync::Arc::new(guard)))
            })
            .collect();
        self.replays = self
            .kernels
            .iter()
            .filter(|k| matches!(k.path, fission::KernelPath::Warp(_)))
            .map(|k| {
                let r: std::sync::Arc<dyn crate::runtime::fission::LazyReplay> =
                    std::sync::Arc::new(KernelReplay {
                        build: build.clone(),
                        symbol: format!("{}.simd", k.name),
                    });
                (k.name.clone(), r)
            })
            .collect();
        self
    }

    /// The JIT's build for `purpose`; the module variables it declares (a replay's) are
    /// those `bound` gives addresses.
    fn load_purpose<'a>(
        module: &'a ast::Module<'a>,
        info: &ModuleInfo,
        opt: u8,
        name: &str,
        purpose: Purpose,
        bound: &[(String, usize)],
    ) -> Result<Program, CompileError> {
        let machine = HostMachine::new(opt).map_err(CompileError::Llvm)?;
        // The program owns the context, boxed so that it never moves, and drops it after the
        // engine (field order); source and AST are only borrowed for the build.
        let ctx = Box::new(Context::create());
        let (m, kernels, static_shared, globals) =
            build(&ctx, module, info, name, opt, &machine, purpose)?;
        // A replay's build uses its program's variables: its own become declarations, which
        // the engine binds to them.
        for (n, _) in bound {
            if let Some(g) = m.get_global(n) {
                // SAFETY: `g` is a live variable of `m`; a null initializer makes it a
                // declaration (LLVM's `setInitializer(nullptr)`).
                unsafe {
                    use inkwell::values::AsValueRef as _;
                    llvm_sys::core::LLVMSetInitializer(g.as_value_ref(), std::ptr::null_mut());
                }
            }
        }
        let syms = crate::runtime::symbols();
        let syms: Vec<(&str, usize)> = syms.iter().map(|(n, a)| (n.as_str(), *a)).collect();
        check_defined(&m, &syms)?;
        let jit = Jit::new(&m, opt, &syms, bound).map_err(CompileError::Llvm)?;
        // Faults in this code (and only code the JIT made) are the kernels'.
        let code = crate::runtime::fault::register_code(&jit.code_ranges(&m));
        drop(m);
        // SAFETY: the engine refers to the context, which the program owns at a fixed address
        // (boxed) and drops after it.
        let jit = unsafe { std::mem::transmute::<Jit<'_>, Jit<'static>>(jit) };
        Ok(Program {
            _code: code,
            engine: Engine::Mcjit { jit, _ctx: ctx },
            kernels,
            static_shared,
            globals,
            replays: Vec::new(),
            aligned: Vec::new(),
        })
    }

    pub fn kernels(&self) -> &[KernelInfo] {
        &self.kernels
    }

    pub fn kernel(&self, name: &str) -> Option<&KernelInfo> {
        self.kernels.iter().find(|k| k.name == name)
    }

    /// Bytes of static shared memory per CTA.
    pub fn static_shared(&self) -> u32 {
        self.static_shared.bytes
    }

    /// The largest alignment of the module's `.shared` variables (at least 16), which a
    /// launch's `LaunchConfig::shared_align` must give.
    pub fn shared_align(&self) -> u32 {
        self.static_shared.align
    }

    /// Address and size of the module variable `name` (a `.global` or `.const` variable), as
    /// `cuModuleGetGlobal` gives them: the host may read and write it between launches.
    pub fn global(&self, name: &str) -> Option<(usize, u64)> {
        let size = self.globals.iter().find(|(n, _)| n == name)?.1;
        Some((self.engine.global_address(name)?, size))
    }

    /// Names of the module variables `global` can find.
    pub fn global_names(&self) -> impl Iterator<Item = &str> {
        self.globals.iter().map(|(n, _)| n.as_str())
    }

    /// The compiled code of kernel `name`, of either kind.
    pub fn code(&self, name: &str) -> Option<crate::runtime::KernelCode> {
        match &self.kernel(name)?.path {
            fission::KernelPath::Coroutine { .. } => {
                self.entry(name).map(crate::runtime::KernelCode::Coroutine)
            }
            fission::KernelPath::Warp(p) => {
                let mut code = self.loop_code(&format!("{name}.simd"), &p.info)?;
                if let crate::runtime::KernelCode::Fission(k) = &mut code {
                    k.replay = self
                        .replays
                        .iter()
                        .find(|(n, _)| n == name)
                        .map(|r| r.1.clone());
                    k.aligned = self
                        .aligned
                        .iter()
                        .find(|(n, _)| n == name)
                        .map(|a| a.1.clone());
                }
                Some(code)
            }
            fission::KernelPath::Fission(info) => self.loop_code(&format!("{name}.fis"), info),
        }
    }

    /// The code of a kernel run by the runtime's thread-loop worker: `NAME.fis` (thread loops)
    /// or `NAME.simd` (the warp engine's CTA loop), which share the thread-loop CTA ABI.
    fn loop_code(
        &self,
        symbol: &str,
        info: &std::sync::Arc<crate::runtime::fission::FisInfo>,
    ) -> Option<crate::runtime::KernelCode> {
        let a = self.engine.address(symbol)?;
        // SAFETY: the JIT compiled `symbol` with the thread-loop CTA ABI
        // (`target::cpu::fission::cta`, `llvm::simd::driver`).
        let entry = unsafe { std::mem::transmute::<usize, crate::runtime::fission::FisEntry>(a) };
        Some(crate::runtime::KernelCode::Fission(
            crate::runtime::fission::FisKernel {
                entry,
                info: info.clone(),
                replay: None,
                aligned: None,
            },
        ))
    }

    /// Launches kernel `name` with the CUDA-layout parameter buffer `params` and waits for it.
    ///
    /// # Safety
    /// `params` must hold what the kernel expects: device pointers in it valid host memory of
    /// the sizes the kernel uses, for the whole launch.
    pub unsafe fn launch(
        &self,
        name: &str,
        params: &[u8],
        cfg: &crate::runtime::LaunchConfig,
    ) -> Result<(), crate::runtime::LaunchError> {
        let code = self.code(name).ok_or_else(|| {
            crate::runtime::LaunchError::Config(format!("kernel `{name}` has no entry point"))
        })?;
        crate::runtime::launch_code(name, &code, params, cfg)
    }

    /// The coroutine entry point of kernel `name` (`None` for a kernel compiled as thread
    /// loops: use `code` or `launch`).
    pub fn entry(&self, name: &str) -> Option<crate::runtime::KernelEntry> {
        self.kernel(name)?;
        let a = self.engine.address(name)?;
        // SAFETY: the JIT compiled `name` with the kernel entry ABI.
        Some(unsafe { std::mem::transmute::<usize, crate::runtime::KernelEntry>(a) })
    }
}

/// [`Cpu::rounded_op`] through `llvm.x86.avx512.vfmadd.{f32,f64}`, whose last operand is the
/// static rounding (`{rd-sae}` and its like: the instruction rounds in that direction whatever
/// MXCSR says and raises no exception). One rounding of the exact `a*b + c` is `fma`; `add`
/// and `sub` are `a*1 + b` and `b*(-1) + a` (the product is exact, and IEEE defines `a - b` as
/// `a + (-b)`, signed zeros included); `mul` is `a*b + z` with `z` the zero that leaves an exact
/// zero product's sign alone in that direction (`+0` for `.rm`, where `-0 + +0` is `-0`; `-0`
/// for `.rz`/`.rp`, where `+0 + -0` is `+0`). `.ftz` flushes the operands first and the result
/// by the same rules as the default ([`lower::fp::flush_by_exact`]). NaN results are the
/// caller's to canonicalize, as for the default. The warp engine widens the call to 16 (f32)
/// or 8 (f64) lanes per `vfmadd.ps.512`/`.pd.512` (`simd::lanes`).
fn embedded_rounding<'c>(
    l: &Lowerer<'c, '_>,
    op: lower::RoundedOp,
    rnd: lower::Rounding,
    ftz: bool,
    ty: lower::Ty,
    args: &[BasicValueEnum<'c>],
) -> Option<BasicValueEnum<'c>> {
    use lower::fp;
    use lower::{RoundedOp, Rounding};
    let imm = match rnd {
        Rounding::Rn => return None,
        Rounding::Rm => X86_ROUND_DOWN,
        Rounding::Rp => X86_ROUND_UP,
        Rounding::Rz => X86_ROUND_ZERO,
    };
    let name = match ty.bits {
        32 => "llvm.x86.avx512.vfmadd.f32",
        64 => "llvm.x86.avx512.vfmadd.f64",
        _ => return None,
    };
    if !matches!(
        op,
        RoundedOp::Add | RoundedOp::Sub | RoundedOp::Mul | RoundedOp::Fma
    ) || !args.iter().all(|a| a.is_float_value())
        || !crate::llvm::cpu::host_has("+avx512f")
    {
        return None;
    }
    let ftz = ftz && ty.bits == 32;
    let a: Vec<FloatValue<'c>> = args
        .iter()
        .map(|v| fp::flush_if(l, ftz, v.into_float_value()))
        .collect();
    let ft = a[0].get_type();
    let (x, y, z) = match op {
        RoundedOp::Fma => (a[0], a[1], a[2]),
        RoundedOp::Add => (a[0], fp::fconst(ft, 1.0), a[1]),
        RoundedOp::Sub => (a[1], fp::fconst(ft, -1.0), a[0]),
        _ => {
            let zero = if rnd == Rounding::Rm { 0.0 } else { -0.0 };
            (a[0], a[1], fp::fconst(ft, zero))
        }
    };
    let r = l
        .call_v(
            name,
            ft.into(),
            &[x.into(), y.into(), z.into(), l.c32(imm).into()],
        )
        .into_float_value();
    let r = fp::flush_if(l, ftz, r);
    Some(if ftz {
        fp::flush_by_exact(l, op, rnd, &a, r).into()
    } else {
        r.into()
    })
}

/// The static rounding operands of AVX-512's embedded rounding (`_MM_FROUND_TO_NEG_INF |
/// _MM_FROUND_NO_EXC` and its like).
pub(crate) const X86_ROUND_DOWN: u64 = 1 | 8;
pub(crate) const X86_ROUND_UP: u64 = 2 | 8;
pub(crate) const X86_ROUND_ZERO: u64 = 3 | 8;
