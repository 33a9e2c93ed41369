//! The `ptx2llvm` command-line tool: parses arguments and dispatches to the commands in
//! `cli/`. Exit codes: 0 success, 1 errors in the input, 2 usage errors.

mod cli;
mod driver;

use clap::Parser;

/// mimalloc: the parser and the lowering allocate many small nodes.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    let args = cli::Cli::parse();
    let code = match &args.command {
        Some(cli::Command::Check(a)) => cli::check::run(a),
        Some(cli::Command::Fmt(a)) => cli::fmt::run(a),
        Some(cli::Command::Run(a)) => cli::run::run(a),
        Some(cli::Command::Kernels(a)) => cli::kernels::run(a),
        Some(cli::Command::Env(a)) => cli::env::run(a),
        Some(cli::Command::Link(a)) => cli::link::run(a),
        None => cli::translate::run(&args.translate),
    };
    std::process::exit(code);
}
