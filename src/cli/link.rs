//! `ptx2llvm link`: link PTX modules into one (`ptx2llvm::link`), as the driver's JIT linker
//! does; the output is canonical PTX that `check`, `run` and ptxas accept.

use super::LinkArgs;
use crate::driver;

pub fn run(args: &LinkArgs) -> i32 {
    let mut texts = Vec::with_capacity(args.files.len());
    for f in &args.files {
        match driver::load(f) {
            Ok(s) => texts.push((f.display().to_string(), s)),
            Err(e) => {
                eprintln!("{e}");
                return 1;
            }
        }
    }
    let inputs: Vec<(&str, &str)> = texts
        .iter()
        .map(|(n, t)| (n.as_str(), t.as_str()))
        .collect();
    let opts = ptx2llvm::link::LinkOptions {
        allow_unresolved: args.allow_unresolved,
    };
    match ptx2llvm::link::link_ptx_with(&inputs, &opts) {
        Ok(text) => match driver::write_output(args.output.as_deref(), text.as_bytes()) {
            Ok(()) => 0,
            Err(e) => {
                eprintln!("{e}");
                1
            }
        },
        Err(e) => {
            eprint!("{e}");
            1
        }
    }
}
