//! Compiles `tests/c/driver_api.c` with the system C compiler against NVIDIA's `cuda.h` (from
//! the venv's `nvidia-cuda-runtime` package, which `scripts/setup.sh` installs) and this
//! build's `target/<profile>/cuda/libcuda.so.1`, runs it and requires its "PASS" line: every
//! group of entry points, results and error returns, as a C program sees them.

use std::path::{Path, PathBuf};
use std::process::Command;

/// `target/<profile>`: the test executable is in its `deps/`.
fn profile_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("test executable path");
    exe.parent()
        .and_then(Path::parent)
        .expect("target/<profile>/deps")
        .to_path_buf()
}

/// The folder of NVIDIA's `cuda.h` in the repository's venv.
fn cuda_include() -> PathBuf {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let lib = root.join(".venv/lib");
    let found = std::fs::read_dir(&lib).ok().and_then(|d| {
        d.filter_map(Result::ok)
            .map(|e| e.path().join("site-packages/nvidia/cu13/include"))
            .find(|p| p.join("cuda.h").is_file())
    });
    found.unwrap_or_else(|| {
        panic!(
            "cuda.h not found under {}/python3.*/site-packages/nvidia/cu13/include: run \
             scripts/setup.sh (it installs nvidia-cuda-runtime)",
            lib.display()
        )
    })
}

#[test]
fn c_program_of_every_entry_point_group() {
    let dir = profile_dir();
    let libdir = dir.join("cuda");
    assert!(
        libdir.join("libcuda.so.1").exists(),
        "{} is missing: build the workspace (cargo build --release)",
        libdir.join("libcuda.so.1").display()
    );
    let exe = dir.join("driver_api_c");
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/c/driver_api.c");
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".to_string());
    let out = Command::new(&cc)
        .arg("-Wall")
        .arg("-Wno-deprecated-declarations")
        .arg("-o")
        .arg(&exe)
        .arg(&src)
        .arg("-I")
        .arg(cuda_include())
        .arg("-L")
        .arg(&libdir)
        .arg("-lcuda")
        .arg(format!("-Wl,-rpath,{}", libdir.display()))
        .arg("-ldl")
        .output()
        .unwrap_or_else(|e| panic!("cannot run {cc}: {e}"));
    assert!(
        out.status.success(),
        "{cc} failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let run = Command::new(&exe)
        .env("PTX2LLVM_CUDA_LOG", "stderr")
        .output()
        .expect("run driver_api_c");
    let stdout = String::from_utf8_lossy(&run.stdout);
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(
        run.status.success() && stdout.starts_with("PASS: "),
        "driver_api.c failed ({}):\n{stdout}\n{stderr}",
        run.status
    );
    // The faults of the last section were logged with where they happened.
    assert!(
        stderr.contains(
            "kernel fault failed in block (0, 0, 0), thread (0, 0, 0): invalid memory access"
        ),
        "{stderr}"
    );
    assert!(stderr.contains("kernel trapper failed"), "{stderr}");
}
