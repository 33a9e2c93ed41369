//! `ptx2llvm env [--libcuda-dir]`: where this build's CUDA driver for CPUs is
//! (`target/<profile>/cuda/libcuda.so.1`, next to the `ptx2llvm` executable) and the line that
//! makes programs load it: `eval "$(ptx2llvm env)"` before running a numba-cuda, cuda-python or
//! C driver-API program.

use std::path::PathBuf;

use clap::Args;

#[derive(Args, Debug)]
pub struct EnvArgs {
    /// Print only the folder that holds libcuda.so.1.
    #[arg(long)]
    pub libcuda_dir: bool,
}

/// The folder of `libcuda.so.1` for this executable.
fn libcuda_dir() -> Result<PathBuf, String> {
    let exe = std::env::current_exe().map_err(|e| format!("cannot locate ptx2llvm: {e}"))?;
    let dir = exe
        .parent()
        .ok_or("the ptx2llvm executable has no folder")?
        .join("cuda");
    if !dir.join("libcuda.so.1").exists() {
        return Err(format!(
            "{} is missing: build it with `cargo build --release` (the workspace member cuda/)",
            dir.join("libcuda.so.1").display()
        ));
    }
    Ok(dir.canonicalize().unwrap_or(dir))
}

pub fn run(a: &EnvArgs) -> i32 {
    match libcuda_dir() {
        Ok(dir) if a.libcuda_dir => {
            println!("{}", dir.display());
            0
        }
        Ok(dir) => {
            println!(
                "export LD_LIBRARY_PATH=\"{}${{LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}}\"",
                dir.display()
            );
            0
        }
        Err(e) => {
            eprintln!("error: {e}");
            1
        }
    }
}
