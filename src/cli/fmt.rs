//! `ptx2llvm fmt`: print a module back as canonical PTX.

use super::FmtArgs;
use crate::driver;

pub fn run(args: &FmtArgs) -> i32 {
    let src = match driver::load(&args.file) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("{e}");
            return 1;
        }
    };
    let (module, diags) = ptx2llvm::syntax::parse(&src);
    if !diags.is_empty() {
        eprint!("{}", driver::render(&diags, &args.file, &src));
        return 1;
    }
    let text = ptx2llvm::syntax::printer::print_module(&module);
    match driver::write_output(args.output.as_deref(), text.as_bytes()) {
        Ok(()) => 0,
        Err(e) => {
            eprintln!("{e}");
            1
        }
    }
}
