//! `ptx2llvm check`: parse and validate files, report every error, exit 1 if any.

use super::CheckArgs;
use crate::driver;

pub fn run(args: &CheckArgs) -> i32 {
    let mut failed = false;
    for path in &args.files {
        match driver::load(path) {
            Ok(src) => {
                let diags = driver::parse_and_check(&src);
                if !diags.is_empty() {
                    eprint!("{}", driver::render(&diags, path, &src));
                    failed = true;
                }
            }
            Err(e) => {
                eprintln!("{e}");
                failed = true;
            }
        }
    }
    i32::from(failed)
}
