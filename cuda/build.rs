//! Gives the shared library its SONAME (`libcuda.so.1`, what programs and loaders of the CUDA
//! driver ask for) and makes `target/<profile>/cuda/`, the folder to put on `LD_LIBRARY_PATH`:
//! `libcuda.so.1` and `libcuda.so` there are links to the `libcuda.so` cargo writes one level up,
//! so they stay current across rebuilds. (The folder keeps the driver apart from the other
//! libraries of `target/<profile>/`.)

use std::path::PathBuf;

fn main() {
    println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,libcuda.so.1");
    println!("cargo:rerun-if-changed=build.rs");
    // OUT_DIR is target/<profile>/build/<crate>-<hash>/out.
    let Some(out) = std::env::var_os("OUT_DIR").map(PathBuf::from) else {
        return;
    };
    let Some(profile_dir) = out.ancestors().nth(3) else {
        return;
    };
    let dir = profile_dir.join("cuda");
    if std::fs::create_dir_all(&dir).is_err() {
        println!("cargo:warning=cannot create {}", dir.display());
        return;
    }
    for (link, to) in [
        ("libcuda.so.1", "../libcuda.so"),
        ("libcuda.so", "libcuda.so.1"),
    ] {
        let path = dir.join(link);
        if std::fs::read_link(&path).is_ok_and(|t| t == std::path::Path::new(to)) {
            continue;
        }
        let _ = std::fs::remove_file(&path);
        if let Err(e) = std::os::unix::fs::symlink(to, &path) {
            println!("cargo:warning=cannot link {} to {to}: {e}", path.display());
        }
    }
}
