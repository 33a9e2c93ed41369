//! Command-line interface definition (clap). Each command's behaviour lives in its own file;
//! this module only declares the options and their help text.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

pub mod check;
pub mod env;
pub mod fmt;
pub mod kernels;
pub mod link;
pub mod run;
pub mod translate;

#[derive(Parser, Debug)]
#[command(
    name = "ptx2llvm",
    version,
    about = "Translate NVIDIA PTX assembly into LLVM IR for the NVPTX back end or the host CPU",
    long_about = "Translate NVIDIA PTX assembly into LLVM IR.\n\n\
        Without a subcommand, translates FILE.ptx for --target (nvptx or cpu) and writes \
        --emit output (LLVM IR text, bitcode, assembly or an object file).\n\n\
        Examples:\n  ptx2llvm check kernel.ptx\n  ptx2llvm fmt kernel.ptx -o canonical.ptx\n  \
        ptx2llvm kernel.ptx --target nvptx --emit asm -O2 -o kernel.sm80.ptx",
    args_conflicts_with_subcommands = true,
    subcommand_negates_reqs = true
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Option<Command>,
    #[command(flatten)]
    pub translate: TranslateArgs,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Parse and validate PTX files; print every error with its position and exit 1 if any.
    Check(CheckArgs),
    /// Print a PTX module back as canonical PTX (stable formatting, folded constants).
    Fmt(FmtArgs),
    /// Compile a PTX file for this CPU and launch one of its kernels.
    Run(RunArgs),
    /// List a PTX file's kernels and parameter layouts, or write a C header of launch functions.
    Kernels(kernels::KernelsArgs),
    /// Print the line that makes programs load this build's libcuda.so.1 (the CUDA driver API
    /// on this CPU): eval "$(ptx2llvm env)".
    Env(env::EnvArgs),
    /// Link PTX modules into one (resolve `.extern` symbols, merge `.weak`/`.common`).
    Link(LinkArgs),
}

#[derive(Args, Debug)]
pub struct LinkArgs {
    /// The PTX modules to link, in order.
    #[arg(required = true, value_name = "FILE.ptx")]
    pub files: Vec<PathBuf>,
    /// Output path; `-` or no `-o` writes to stdout.
    #[arg(short = 'o', long = "output", value_name = "OUT")]
    pub output: Option<PathBuf>,
    /// Keep `.extern` declarations no input defines instead of reporting them.
    #[arg(long)]
    pub allow_unresolved: bool,
}

#[derive(Args, Debug)]
pub struct CheckArgs {
    /// PTX files to check.
    #[arg(required = true, value_name = "FILE.ptx")]
    pub files: Vec<PathBuf>,
}

/// `ptx2llvm run FILE.ptx --kernel NAME [--grid X[,Y[,Z]]] [--block X[,Y[,Z]]]
/// [--shared-mem BYTES] [--arg SPEC]... [--dump INDEX=PATH]... [--repeat N] [--warmup N] [--serial] [--cooperative]
/// [--dump-plan]`
#[derive(Args, Debug)]
#[command(
    after_help = "SPEC: u8:V u16:V u32:V u64:V s8:V s16:V s32:V s64:V f16:V f32:V f64:V (scalar; decimal or 0x hex)\n      \
    @PATH (a device buffer holding PATH's bytes), zeros:BYTES (a zero-filled device buffer),\n      \
    bytes:HEX (a by-value parameter given as raw bytes)\n\n\
ENVIRONMENT:\n  \
PTX2LLVM_CPU_MODE=coroutine   run every CUDA thread as a coroutine instead of thread loops\n  \
PTX2LLVM_CPU_MODE=fission     thread loops instead of the warp engine (warp: the default choice)\n  \
PTX2LLVM_FAULT_HANDLER=0      leave SIGSEGV/SIGBUS alone (invalid accesses then crash the process)\n  \
PTX2LLVM_PERF_MAP=1           name the JIT-compiled functions for `perf` (/tmp/perf-PID.map)\n  \
PTX2LLVM_PERF_JITDUMP=1       write a perf jitdump (functions and line tables) for `perf inject --jit`\n  \
PTX2LLVM_CODE_DUMP=DIR        write each JIT-compiled function's machine code to DIR"
)]
pub struct RunArgs {
    /// The PTX file.
    #[arg(value_name = "FILE.ptx")]
    pub file: PathBuf,
    /// The kernel (`.entry`) to launch.
    #[arg(long, value_name = "NAME")]
    pub kernel: String,
    /// Grid size in CTAs.
    #[arg(long, value_name = "X[,Y[,Z]]")]
    pub grid: Option<String>,
    /// CTA size in threads (the kernel's thread loops are compiled for this shape, with
    /// `%ntid` a constant).
    #[arg(long, value_name = "X[,Y[,Z]]")]
    pub block: Option<String>,
    /// Bytes of dynamic shared memory per CTA.
    #[arg(long = "shared-mem", value_name = "BYTES")]
    pub shared_mem: Option<u32>,
    /// A kernel argument, in parameter order (see SPEC below).
    #[arg(long, value_name = "SPEC", allow_hyphen_values = true)]
    pub arg: Vec<String>,
    /// After the last launch, write the buffer that was argument INDEX (0-based) to PATH.
    #[arg(long, value_name = "INDEX=PATH")]
    pub dump: Vec<String>,
    /// Launch N times (buffers are not reset) and print the kernel time to stderr.
    #[arg(long, value_name = "N")]
    pub repeat: Option<u32>,
    /// Launch N times more before the timed launches, untimed (the same buffers): a benchmark's
    /// warm-up, as its C baseline's, so that the first launch's page faults on fresh buffers
    /// are not one of the timed launches whose median is printed.
    #[arg(long, value_name = "N", default_value = "0")]
    pub warmup: u32,
    /// Optimization level (-O0 … -O3).
    #[arg(short = 'O', value_name = "LEVEL", default_value = "2", value_parser = clap::value_parser!(u8).range(0..=3))]
    pub opt: u8,
    /// Full debug information: DWARF with a variable per PTX register (`%r5` is `r5`), and,
    /// in a file without `.loc`, the PTX file's own lines. Without -g, a file with `.loc`
    /// still gets its line tables. `run -g` also runs every CUDA thread as a coroutine (unless
    /// PTX2LLVM_CPU_MODE says otherwise), so that each has its own frame and registers in gdb.
    #[arg(short = 'g')]
    pub debug: bool,
    /// Run the grid on one worker thread (the calling one), CTAs in order: kernel `printf`
    /// output comes in a fixed order and a debugger sees one CUDA thread at a time.
    #[arg(long)]
    pub serial: bool,
    /// A cooperative launch (as `cuLaunchCooperativeKernel`): every CTA runs at once on a thread
    /// of its own, so cooperative groups' grid-wide sync (`%envreg1:%envreg2`, the grid
    /// workspace) works; at most 4096 CTAs.
    #[arg(long, conflicts_with = "serial")]
    pub cooperative: bool,
    /// Print the kernel's execution plan to stderr before running it: the engine chosen at
    /// compile time and why (warp engine: uniform and varying values, divergent branches and
    /// loops, warp operations, CTA barriers as suspension points, loads and stores by lane
    /// stride; thread loops: the regions between barriers; or why a kernel keeps coroutines).
    #[arg(long = "dump-plan")]
    pub dump_plan: bool,
}

#[derive(Args, Debug)]
pub struct FmtArgs {
    /// The PTX file to format.
    #[arg(value_name = "FILE.ptx")]
    pub file: PathBuf,
    /// Output path; `-` or no `-o` writes to stdout.
    #[arg(short = 'o', long = "output", value_name = "OUT")]
    pub output: Option<PathBuf>,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq, ValueEnum)]
pub enum Target {
    /// LLVM IR in the NVPTX back end's conventions (re-emitted as PTX with --emit asm).
    Nvptx,
    /// LLVM IR for the host CPU, with PTX semantics provided by the runtime library.
    Cpu,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq, ValueEnum)]
pub enum Emit {
    /// Textual LLVM IR (.ll).
    Llvm,
    /// LLVM bitcode (.bc).
    Bc,
    /// Target assembly: PTX for nvptx, host assembly for cpu.
    Asm,
    /// An object file (cpu target).
    Obj,
}

#[derive(Args, Debug)]
pub struct TranslateArgs {
    /// The PTX file to translate.
    #[arg(value_name = "FILE.ptx", required = true)]
    pub file: Option<PathBuf>,
    /// Which LLVM target to produce code for.
    #[arg(long, value_enum, default_value = "nvptx")]
    pub target: Target,
    /// What to write.
    #[arg(long, value_enum, default_value = "llvm")]
    pub emit: Emit,
    /// Optimization level (-O0 … -O3).
    #[arg(short = 'O', value_name = "LEVEL", default_value = "2", value_parser = clap::value_parser!(u8).range(0..=3))]
    pub opt: u8,
    /// GPU architecture for the nvptx target (e.g. sm_80); default: the module's `.target`.
    #[arg(long, value_name = "sm_XX")]
    pub arch: Option<String>,
    /// Output path; `-` or no `-o` writes text to stdout.
    #[arg(short = 'o', long = "output", value_name = "OUT")]
    pub output: Option<PathBuf>,
    /// Full debug information: DWARF with a variable per PTX register (`%r5` is `r5`), and,
    /// in a file without `.loc`, the PTX file's own lines. Without -g, a file with `.loc`
    /// still gets its line tables.
    #[arg(short = 'g')]
    pub debug: bool,
}
