//! `ptx2llvm run`: compiles a PTX file for this CPU, builds the kernel's arguments from
//! `--arg` SPECs (scalars, file-backed and zero-filled buffers, raw bytes), launches it
//! (`--repeat` times, timing each launch, after `--warmup` untimed ones) and writes buffers back with `--dump`. Every error
//! says what was expected and exits 1 (2 for malformed options).

use std::time::Instant;

use super::RunArgs;
use crate::driver;
use ptx2llvm::api::{self, parse_spec, Arg, ArgSpec, Buffer};
use ptx2llvm::isa::Mod;
use ptx2llvm::lower::debug::DebugOptions;
use ptx2llvm::runtime::abi::MAX_SHARED_PER_CTA;
use ptx2llvm::runtime::LaunchConfig;
use ptx2llvm::syntax::ast;
use ptx2llvm::target::cpu::fission::KernelPath;

fn dims(s: &str, what: &str) -> Result<[u32; 3], String> {
    let parts: Vec<&str> = s.split(',').collect();
    if parts.is_empty() || parts.len() > 3 {
        return Err(format!("error: --{what} `{s}`: expected X[,Y[,Z]]"));
    }
    let mut d = [1u32; 3];
    for (k, p) in parts.iter().enumerate() {
        d[k] = p
            .trim()
            .parse()
            .map_err(|_| format!("error: --{what} `{s}`: `{p}` is not a positive integer"))?;
        if d[k] == 0 {
            return Err(format!(
                "error: --{what} `{s}`: dimensions must be at least 1"
            ));
        }
    }
    Ok(d)
}

pub fn run(a: &RunArgs) -> i32 {
    match run_inner(a) {
        Ok(()) => 0,
        Err((code, msg)) => {
            eprintln!("{msg}");
            code
        }
    }
}

fn run_inner(a: &RunArgs) -> Result<(), (i32, String)> {
    let usage = |m: String| (2, m);
    let fail = |m: String| (1, m);
    let grid = dims(a.grid.as_deref().unwrap_or("1"), "grid").map_err(usage)?;
    let block = dims(a.block.as_deref().unwrap_or("1"), "block").map_err(usage)?;
    let repeat = a.repeat.unwrap_or(1);
    if repeat == 0 {
        return Err(usage("error: --repeat must be at least 1".into()));
    }
    let mut dumps = Vec::new();
    for d in &a.dump {
        let Some((i, p)) = d.split_once('=') else {
            return Err(usage(format!("error: --dump `{d}`: expected INDEX=PATH")));
        };
        let i: usize = i.trim().parse().map_err(|_| {
            usage(format!(
                "error: --dump `{d}`: `{i}` is not an argument index"
            ))
        })?;
        dumps.push((i, p.to_string()));
    }
    let specs: Vec<ArgSpec> = a
        .arg
        .iter()
        .map(|s| parse_spec(s))
        .collect::<Result<_, _>>()
        .map_err(|e| usage(format!("error: {e}")))?;

    // The source and the AST live until the launches are done: the lowering and the loaded
    // program borrow them.
    let src = driver::load(&a.file).map_err(fail)?;
    let src: &str = &src;
    let (module, checked, diags) = driver::front_end(src);
    if !diags.is_empty() {
        return Err(fail(
            driver::render(&diags, &a.file, src).trim_end().to_string(),
        ));
    }
    let module = only_kernel(module, &a.kernel, src);
    // The lowering takes `&'a ast::Module<'a>`: the AST is covariant, so a borrow of this
    // local with a shorter `'a` will do.
    let module = &module;
    let name = a
        .file
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let jit_start = std::time::Instant::now();
    let jit_cpu_start = process_cpu_ms();
    // The launch's block is known: thread loops specialized for it (`%ntid` constant).
    // Debugging: a coroutine per CUDA thread (its own frame, registers and `ptx2llvm_thread`
    // for gdb) rather than loops over a CTA's threads, unless the environment picks a mode.
    let mode = if a.debug && std::env::var_os("PTX2LLVM_CPU_MODE").is_none() {
        ptx2llvm::target::cpu::fission::CpuMode::Coroutine
    } else {
        ptx2llvm::target::cpu::fission::CpuMode::from_env()
    };
    let debug = DebugOptions::new(a.debug, &driver::debug_path(&a.file), src);
    let req = ptx2llvm::target::cpu::cache::Request {
        src,
        opt: a.opt,
        name: &name,
        mode,
        block: Some(block),
        kernel: Some(&a.kernel),
        debug: &debug,
        settings: ptx2llvm::target::cpu::cache::Settings::from_env(),
    };
    let (program, outcome) =
        ptx2llvm::target::cpu::cache::load(&req, module, &checked).map_err(|e| match e {
            // Instructions the cpu target cannot run: FILE:LINE:COL, the line and a caret.
            ptx2llvm::target::cpu::CompileError::Lower(errs) => {
                let diags: Vec<ptx2llvm::syntax::diag::Diagnostic> = errs
                    .iter()
                    .map(|e| {
                        ptx2llvm::syntax::diag::Diagnostic::new(
                            e.span().unwrap_or_default(),
                            e.to_string(),
                        )
                    })
                    .collect();
                fail(driver::render(&diags, &a.file, src).trim_end().to_string())
            }
            e => fail(format!("{}: error: {e}", a.file.display())),
        })?;
    let jit_ms = jit_start.elapsed().as_secs_f64() * 1e3;
    let jit_cpu_ms = process_cpu_ms() - jit_cpu_start;
    let Some(info) = program.kernel(&a.kernel) else {
        let names: Vec<&str> = program.kernels().iter().map(|k| k.name.as_str()).collect();
        return Err(fail(format!(
            "error: no kernel named `{}` in {}; its kernels are: {}",
            a.kernel,
            a.file.display(),
            if names.is_empty() {
                "(none)".to_string()
            } else {
                names.join(", ")
            }
        )));
    };
    if a.dump_plan {
        eprint!("{}", plan_text(&a.kernel, info));
    }

    let mut args = Vec::with_capacity(specs.len());
    for (i, s) in specs.into_iter().enumerate() {
        args.push(match s {
            ArgSpec::Scalar(_, b) => Arg::Scalar(b),
            ArgSpec::Bytes(b) => Arg::Bytes(b),
            ArgSpec::Zeros(n) => Arg::Buffer(
                Buffer::try_zeroed(n)
                    .map_err(|e| fail(format!("error: --arg {i} `zeros:{n}`: {e}")))?,
            ),
            ArgSpec::File(p) => Arg::Buffer(
                read_buffer(&p).map_err(|e| fail(format!("error: --arg {i} `@{p}`: {e}")))?,
            ),
        });
    }
    let params = api::param_buffer(&a.kernel, &info.params, &args)
        .map_err(|e| fail(format!("error: {e}")))?;
    for (i, _) in &dumps {
        match args.get(*i) {
            Some(Arg::Buffer(_)) => {}
            Some(_) => {
                return Err(fail(format!(
                    "error: --dump {i}: argument {i} is not a buffer (use @PATH or zeros:BYTES)"
                )))
            }
            None => {
                return Err(fail(format!(
                    "error: --dump {i}: there are only {} arguments",
                    args.len()
                )))
            }
        }
    }
    let cfg = LaunchConfig {
        grid,
        block,
        static_shared: program.static_shared(),
        dynamic_shared: a.shared_mem.unwrap_or(0),
        shared_align: program.shared_align(),
        workers: a.serial.then_some(1),
        cooperative: a.cooperative,
        ..LaunchConfig::default()
    };
    // Name the option when the dynamic shared memory it asks for is what does not fit.
    let fits = |b: u64| b <= MAX_SHARED_PER_CTA as u64;
    if let Some(n) = a
        .shared_mem
        .filter(|_| fits(cfg.static_shared as u64) && !fits(cfg.shared_bytes()))
    {
        return Err(fail(format!(
            "error: --shared-mem {n}: shared memory per block would be {} bytes ({} static + \
             {n} dynamic); at most {MAX_SHARED_PER_CTA} bytes are allowed",
            cfg.shared_bytes(),
            cfg.static_shared
        )));
    }
    let code = program
        .code(&a.kernel)
        .ok_or_else(|| fail(format!("error: kernel `{}` has no entry point", a.kernel)))?;
    // Invalid memory accesses of the kernel become errors naming block and thread.
    ptx2llvm::runtime::fault::install();
    ptx2llvm::runtime::fault::set_kernel(&a.kernel);
    let mut times = Vec::with_capacity(repeat as usize);
    let mut cpu_times = Vec::with_capacity(repeat as usize);
    for n in 0..a.warmup.saturating_add(repeat) {
        // With PTX2LLVM_RECORD set, the first launch is recorded for replay on a GPU.
        let recording = (n == 0)
            .then(|| {
                let launch = api::record::Launch {
                    source: src,
                    kernel: &a.kernel,
                    grid: cfg.grid,
                    block: cfg.block,
                    shared: cfg.dynamic_shared,
                    layout: &info.params,
                };
                api::record::begin(&launch, &args)
            })
            .flatten();
        // The CPU clock is read outside the wall-clock window: `getrusage` costs about half a
        // microsecond, as much as the empty kernel's launch.
        let c0 = process_cpu_ms();
        let t0 = Instant::now();
        // SAFETY: `code` is the JIT-compiled kernel; `params` was built from its layout and
        // the buffers it points to live in `args` until the end of this function.
        let r = unsafe { ptx2llvm::runtime::launch_code(&a.kernel, &code, &params, &cfg) };
        if n >= a.warmup {
            times.push(t0.elapsed().as_secs_f64() * 1e3);
            cpu_times.push(process_cpu_ms() - c0);
        }
        if let Some(rec) = recording {
            rec.finish(r.as_ref().map(|_| ()).map_err(|e| e.to_string()));
        }
        r.map_err(|e| fail(format!("error: {e}")))?;
    }
    if a.repeat.is_some() {
        let sorted = |t: &[f64]| {
            let mut s = t.to_vec();
            s.sort_by(|x, y| x.total_cmp(y));
            let median = if s.len() % 2 == 1 {
                s[s.len() / 2]
            } else {
                (s[s.len() / 2 - 1] + s[s.len() / 2]) / 2.0
            };
            (s, median)
        };
        let (s, median) = sorted(&times);
        // Three decimals, or four significant digits below 1 ms (launch overheads).
        let ms = |v: f64| {
            if v >= 1.0 || v == 0.0 {
                format!("{v:.3}")
            } else {
                let d = (3 - v.log10().floor() as i32).clamp(3, 9) as usize;
                format!("{v:.d$}")
            }
        };
        eprintln!(
            "kernel time: median {} ms (min {}, max {}) over {} launches",
            ms(median),
            ms(s[0]),
            ms(s[s.len() - 1]),
            s.len()
        );
        // On a busy machine the wall time counts the waits for other processes; the CPU time
        // of the process (every worker thread) during each launch does not (kernel A/B there).
        let (c, cpu_median) = sorted(&cpu_times);
        eprintln!(
            "kernel CPU time: median {} ms (min {}, max {}) per launch",
            ms(cpu_median),
            ms(c[0]),
            ms(c[c.len() - 1]),
        );
        eprintln!(
            "kernel path: {}",
            match &info.path {
                KernelPath::Fission(_) => "thread loops".to_string(),
                KernelPath::Warp(_) => "warp (32-lane SIMD)".to_string(),
                KernelPath::Coroutine { why } if why.is_empty() => "coroutines".to_string(),
                KernelPath::Coroutine { why } => format!("coroutines ({why})"),
            }
        );
        use ptx2llvm::target::cpu::cache::Outcome;
        eprintln!(
            "compile time: {jit_ms:.1} ms ({})",
            match outcome {
                Outcome::Memory | Outcome::Disk =>
                    "compile: cached; the kernel cache's object linked, not compiled",
                Outcome::Compiled =>
                    "lowering, optimization and code generation; stored in the kernel cache",
                Outcome::Uncached => "lowering, optimization and JIT of the module",
            }
        );
        // The wall time above counts waits for a busy machine's other processes; the CPU time
        // of the same span does not (compile-time A/B on a shared machine).
        eprintln!("compile CPU time: {jit_cpu_ms:.1} ms");
    }
    for (i, p) in &dumps {
        if let Some(Arg::Buffer(b)) = args.get(*i) {
            std::fs::write(p, b.as_slice())
                .map_err(|e| fail(format!("error: --dump {i}: cannot write {p}: {e}")))?;
        }
    }
    Ok(())
}

/// CPU time (user + system) of the whole process so far, in ms.
fn process_cpu_ms() -> f64 {
    // SAFETY: `getrusage` writes the zero-initialized struct it is given and nothing else.
    let u = unsafe {
        let mut u: libc::rusage = std::mem::zeroed();
        libc::getrusage(libc::RUSAGE_SELF, &mut u);
        u
    };
    let ms = |t: libc::timeval| t.tv_sec as f64 * 1e3 + t.tv_usec as f64 / 1e3;
    ms(u.ru_utime) + ms(u.ru_stime)
}

/// The execution plan of a kernel as `--dump-plan` prints it: the engine chosen at compile
/// time and why.
fn plan_text(name: &str, info: &ptx2llvm::target::cpu::KernelInfo) -> String {
    let refused = info
        .warp_refused
        .as_deref()
        .map(|w| format!("  not the warp engine: {w}\n"))
        .unwrap_or_default();
    match &info.path {
        KernelPath::Warp(p) => p.describe(name),
        KernelPath::Fission(_) => format!("plan {name}: thread loops\n{refused}"),
        KernelPath::Coroutine { why } if why.is_empty() => {
            format!("plan {name}: coroutines\n{refused}")
        }
        KernelPath::Coroutine { why } => {
            format!("plan {name}: coroutines ({why})\n{refused}")
        }
    }
}

/// `module` without its kernels other than `kernel` that nothing else in the module names:
/// `run` launches one kernel, and each other one was lowered, vectorized, optimized and
/// compiled to machine code for nothing (spmv.ptx holds two kernels, each about half of the
/// compile time). A kernel whose name appears in the text of any other module item (its
/// address taken for a device-side launch, an `.alias`, a comment in another function) is
/// kept, and so is one that declares `.shared` variables: the static shared layout (addresses,
/// `%total_smem_size`) is the whole module's, as through the driver API. Without `kernel` in
/// the module nothing is left out, so that the error lists every kernel.
fn only_kernel<'a>(mut module: ast::Module<'a>, kernel: &str, src: &str) -> ast::Module<'a> {
    let is_kernel = |i: &ast::Item, name: Option<&str>| {
        matches!(i, ast::Item::Function(f) if f.kind == ast::FnKind::Entry
            && f.body.is_some() && name.is_none_or(|n| f.name == n))
    };
    if !module.items.iter().any(|i| is_kernel(i, Some(kernel))) {
        return module;
    }
    let span = |i: &ast::Item| match i {
        ast::Item::Function(f) => f.span,
        ast::Item::Var(v) => v.span,
        ast::Item::File { span, .. }
        | ast::Item::Alias { span, .. }
        | ast::Item::Pragma(_, span) => *span,
        ast::Item::Section(s) => s.span,
    };
    let text = |i: &ast::Item| src.get(span(i).start as usize..span(i).end as usize);
    // Whether `name` is a whole identifier somewhere in `t` (PTX identifiers: letters,
    // digits, `_`, `$`, `%`).
    let names = |t: &str, name: &str| {
        let word = |c: char| c.is_ascii_alphanumeric() || matches!(c, '_' | '$' | '%');
        t.match_indices(name)
            .any(|(at, _)| !t[..at].ends_with(word) && !t[at + name.len()..].starts_with(word))
    };
    let unused: Vec<bool> = module
        .items
        .iter()
        .enumerate()
        .map(|(k, it)| {
            let ast::Item::Function(f) = it else {
                return false;
            };
            is_kernel(it, None)
                && f.name != kernel
                && !f.body.as_ref().is_some_and(|b| declares_shared(&b.stmts))
                && !module.items.iter().enumerate().any(|(j, other)| {
                    // An item whose text is unknown counts as naming it.
                    j != k && text(other).is_none_or(|t| names(t, f.name))
                })
        })
        .collect();
    let mut drop = unused.into_iter();
    module.items.retain(|_| !drop.next().unwrap_or(false));
    module
}

/// Whether `stmts` (nested blocks included) declare a `.shared` variable.
fn declares_shared(stmts: &[ast::Statement]) -> bool {
    stmts.iter().any(|s| match s {
        ast::Statement::Var(v) => {
            matches!(v.space, Mod::Shared | Mod::SharedCta | Mod::SharedCluster)
        }
        ast::Statement::Block(b) => declares_shared(&b.stmts),
        _ => false,
    })
}

/// The bytes of file `p` in a device buffer, read straight into it: a heap copy first (then
/// copied) touched every page twice, which for the benchmark's 128-256 MiB inputs was most of
/// `run`'s time outside the kernel (the kernel zeroing fresh pages).
fn read_buffer(p: &str) -> Result<Buffer, String> {
    use std::io::Read;
    let mut f = std::fs::File::open(p).map_err(|e| format!("cannot read {p}: {e}"))?;
    let meta = f.metadata().map_err(|e| format!("cannot read {p}: {e}"))?;
    if !meta.is_file() {
        // A pipe or a device (`@/dev/stdin`): no length to size the buffer by.
        let mut bytes = Vec::new();
        f.read_to_end(&mut bytes)
            .map_err(|e| format!("cannot read {p}: {e}"))?;
        return Buffer::try_from_bytes(&bytes).map_err(|e| e.to_string());
    }
    let len = meta.len();
    let len = usize::try_from(len).map_err(|_| format!("{p} is too large ({len} bytes)"))?;
    let mut b = Buffer::try_zeroed(len).map_err(|e| e.to_string())?;
    f.read_exact(b.as_mut_slice())
        .map_err(|e| format!("cannot read {p}: {e}"))?;
    // A file that grew while it was read: its length when opened is what the buffer holds.
    Ok(b)
}
