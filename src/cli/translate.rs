//! The default command: translate a PTX file for a target and write the requested output.

use super::{Target, TranslateArgs};
use crate::driver;

pub fn run(args: &TranslateArgs) -> i32 {
    let Some(path) = &args.file else {
        eprintln!("error: no input file; see `ptx2llvm --help`");
        return 2;
    };
    let src = match driver::load(path) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("{e}");
            return 1;
        }
    };
    let diags = driver::parse_and_check(&src);
    if !diags.is_empty() {
        eprint!("{}", driver::render(&diags, path, &src));
        return 1;
    }
    let target = match args.target {
        Target::Nvptx => "nvptx",
        Target::Cpu => "cpu",
    };
    eprintln!("error: translation for the {target} target is not implemented yet");
    1
}
