//! Rust tests of the entry-point table and of each group through the exported functions
//! (the library's rlib): the table and the shared library's exports agree, `cuGetProcAddress`
//! picks versions and per-thread twins, and the groups give their results and errors.

use std::ffi::{c_char, c_int, c_void, CStr, CString};
use std::path::Path;

use cuda::exports::{self as cu, lookup, TABLE};
use cuda::types::*;

/// Initializes the driver and makes the primary context current on this test's thread.
fn setup() -> CUcontext {
    // SAFETY: driver entry points with valid out-pointers.
    unsafe {
        assert_eq!(cu::cuInit(0), CUresult::Success);
        let mut c: CUcontext = std::ptr::null_mut();
        assert_eq!(cu::cuDevicePrimaryCtxRetain(&mut c, 0), CUresult::Success);
        assert_eq!(cu::cuCtxSetCurrent(c), CUresult::Success);
        c
    }
}

#[test]
fn table_symbols_are_unique_and_named_after_their_entry() {
    let mut seen = std::collections::HashSet::new();
    for e in TABLE {
        assert!(seen.insert(e.symbol), "{} twice", e.symbol);
        assert!(e.symbol.starts_with(e.name), "{} for {}", e.symbol, e.name);
        if e.per_thread {
            assert!(
                e.symbol.ends_with("_ptds") || e.symbol.ends_with("_ptsz"),
                "{}",
                e.symbol
            );
        }
        assert!(!e.addr.0.is_null());
    }
    assert!(TABLE.len() > 150, "{} entries", TABLE.len());
}

#[test]
fn the_shared_library_exports_every_table_entry() {
    let exe = std::env::current_exe().unwrap();
    let lib = exe
        .parent()
        .and_then(Path::parent)
        .unwrap()
        .join("cuda/libcuda.so.1");
    let path = CString::new(lib.to_str().unwrap()).unwrap();
    // SAFETY: loading our own library; symbols only looked up.
    unsafe {
        let h = libc::dlopen(path.as_ptr(), libc::RTLD_NOW | libc::RTLD_LOCAL);
        assert!(!h.is_null(), "cannot load {}", lib.display());
        for e in TABLE {
            let s = CString::new(e.symbol).unwrap();
            assert!(
                !libc::dlsym(h, s.as_ptr()).is_null(),
                "{} not exported",
                e.symbol
            );
        }
        // The library's own cuGetProcAddress answers with its own functions.
        let gpa = libc::dlsym(h, c"cuGetProcAddress_v2".as_ptr());
        let gpa: unsafe extern "C" fn(
            *const c_char,
            *mut *const c_void,
            c_int,
            u64,
            *mut c_int,
        ) -> CUresult = std::mem::transmute(gpa);
        let mut p = std::ptr::null();
        let mut st = -1;
        assert_eq!(
            gpa(c"cuMemAlloc".as_ptr(), &mut p, 13000, 0, &mut st),
            CUresult::Success
        );
        assert_eq!(
            p,
            libc::dlsym(h, c"cuMemAlloc_v2".as_ptr()) as *const c_void
        );
        assert_eq!(st, 0);
    }
}

#[test]
fn proc_address_picks_the_newest_variant_the_caller_knows() {
    let sym = |name: &str, v: i32, f: u64| lookup(name, v, f).0.map(|e| e.symbol);
    assert_eq!(sym("cuCtxCreate", 3020, 0), Some("cuCtxCreate_v2"));
    assert_eq!(sym("cuCtxCreate", 12000, 0), Some("cuCtxCreate_v3"));
    assert_eq!(sym("cuCtxCreate", 13050, 0), Some("cuCtxCreate_v4"));
    assert_eq!(
        sym("cuEventElapsedTime", 12000, 0),
        Some("cuEventElapsedTime")
    );
    assert_eq!(
        sym("cuEventElapsedTime", 12080, 0),
        Some("cuEventElapsedTime_v2")
    );
    assert_eq!(sym("cuMemcpyDtoH", 13000, 0), Some("cuMemcpyDtoH_v2"));
    assert_eq!(sym("cuMemcpyDtoH", 13000, 2), Some("cuMemcpyDtoH_v2_ptds"));
    assert_eq!(
        sym("cuStreamSynchronize", 13000, 2),
        Some("cuStreamSynchronize_ptsz")
    );
    // No twin: the plain function.
    assert_eq!(sym("cuMemAlloc", 13000, 2), Some("cuMemAlloc_v2"));
    assert_eq!(
        lookup("cuMemAlloc", 2000, 0).1,
        ProcAddressQuery::VersionNotSufficient
    );
    assert_eq!(
        lookup("cuFrobnicate", 13000, 0).1,
        ProcAddressQuery::SymbolNotFound
    );
}

#[test]
fn every_error_has_a_name_and_a_description() {
    for v in 0..1000 {
        if let Some(r) = CUresult::from_raw(v) {
            let mut s: *const c_char = std::ptr::null();
            // SAFETY: valid out-pointer; the strings are static.
            unsafe {
                assert_eq!(cu::cuGetErrorName(v, &mut s), CUresult::Success);
                let name = CStr::from_ptr(s).to_str().unwrap();
                assert!(name.starts_with("CUDA_"), "{name}");
                assert_eq!(name, r.name().trim_end_matches('\0'));
                assert_eq!(cu::cuGetErrorString(v, &mut s), CUresult::Success);
                assert!(CStr::from_ptr(s).to_bytes().len() > 10, "{name}");
            }
        }
    }
}

const PTX: &str = "
.version 7.0
.target sm_80
.address_size 64
.visible .entry scale(.param .u64 p, .param .f32 k, .param .u32 n) {
  .reg .u32 %r<4>; .reg .u64 %rd<3>; .reg .f32 %f<3>; .reg .pred %q;
  mov.u32 %r1, %tid.x; mov.u32 %r2, %ctaid.x; mad.lo.u32 %r1, %r2, 64, %r1;
  ld.param.u32 %r3, [n]; setp.ge.u32 %q, %r1, %r3; @%q bra end;
  ld.param.u64 %rd1, [p]; mul.wide.u32 %rd2, %r1, 4; add.u64 %rd1, %rd1, %rd2;
  ld.global.f32 %f1, [%rd1]; ld.param.f32 %f2, [k]; mul.f32 %f1, %f1, %f2; st.global.f32 [%rd1], %f1;
end:
  ret;
}
\0";

#[test]
fn a_kernel_runs_through_the_driver_api() {
    setup();
    // SAFETY: driver entry points with valid pointers; the kernel's parameters match.
    unsafe {
        let mut m: CUmodule = std::ptr::null_mut();
        assert_eq!(
            cu::cuModuleLoadData(&mut m, PTX.as_ptr().cast()),
            CUresult::Success
        );
        let mut f: CUfunction = std::ptr::null_mut();
        assert_eq!(
            cu::cuModuleGetFunction(&mut f, m, c"scale".as_ptr()),
            CUresult::Success
        );
        let mut count: usize = 0;
        assert_eq!(cu::cuFuncGetParamCount(f, &mut count), CUresult::Success);
        assert_eq!(count, 3);
        let host: Vec<f32> = (0..100).map(|i| i as f32).collect();
        let mut d: CUdeviceptr = 0;
        assert_eq!(cu::cuMemAlloc_v2(&mut d, 400), CUresult::Success);
        assert_eq!(
            cu::cuMemcpyHtoD_v2(d, host.as_ptr().cast(), 400),
            CUresult::Success
        );
        let (mut k, mut n) = (0.5f32, 100u32);
        let mut params = [
            (&mut d as *mut u64).cast::<c_void>(),
            (&mut k as *mut f32).cast(),
            (&mut n as *mut u32).cast(),
        ];
        assert_eq!(
            cu::cuLaunchKernel(
                f,
                2,
                1,
                1,
                64,
                1,
                1,
                0,
                std::ptr::null_mut(),
                params.as_mut_ptr(),
                std::ptr::null_mut()
            ),
            CUresult::Success
        );
        let mut back = vec![0f32; 100];
        assert_eq!(
            cu::cuMemcpyDtoH_v2(back.as_mut_ptr().cast(), d, 400),
            CUresult::Success
        );
        assert_eq!(back[99], 49.5);
        assert_eq!(back[3], 1.5);
        assert_eq!(cu::cuMemFree_v2(d), CUresult::Success);
        assert_eq!(cu::cuModuleUnload(m), CUresult::Success);
        assert_eq!(cu::cuModuleUnload(m), CUresult::ErrorInvalidHandle);
    }
}

#[test]
fn device_attributes_describe_compute_capability_8_9() {
    setup();
    let attr = |a: DeviceAttr| {
        let mut v = -1;
        assert_eq!(
            // SAFETY: `v` is a valid out-pointer for one `c_int`.
            unsafe { cu::cuDeviceGetAttribute(&mut v, a as c_int, 0) },
            CUresult::Success
        );
        v
    };
    assert_eq!(attr(DeviceAttr::ComputeCapabilityMajor), 8);
    assert_eq!(attr(DeviceAttr::ComputeCapabilityMinor), 9);
    assert_eq!(attr(DeviceAttr::MaxSharedMemoryPerBlock), 48 * 1024);
    assert_eq!(attr(DeviceAttr::MaxSharedMemoryPerBlockOptin), 163 * 1024);
    assert_eq!(attr(DeviceAttr::CanMapHostMemory), 1);
    assert_eq!(attr(DeviceAttr::CooperativeLaunch), 1);
    assert_eq!(attr(DeviceAttr::CooperativeMultiDeviceLaunch), 0);
    assert_eq!(
        attr(DeviceAttr::MultiprocessorCount) as usize,
        std::thread::available_parallelism().unwrap().get()
    );
}

#[test]
fn untracked_pointers_are_invalid_values() {
    setup();
    let local = 0u64;
    let mut out = 0u32;
    // SAFETY: valid out-pointers.
    unsafe {
        assert_eq!(
            cu::cuPointerGetAttribute(
                (&mut out as *mut u32).cast(),
                PointerAttr::MemoryType as c_int,
                &local as *const u64 as u64
            ),
            CUresult::ErrorInvalidValue
        );
        let mut base = 0;
        let mut size = 0;
        assert_eq!(
            cu::cuMemGetAddressRange_v2(&mut base, &mut size, &local as *const u64 as u64),
            CUresult::ErrorNotFound
        );
    }
}

#[test]
fn calls_without_a_current_context_say_so() {
    // A fresh thread has no current context.
    std::thread::spawn(|| {
        // SAFETY: valid out-pointers.
        unsafe {
            assert_eq!(cu::cuInit(0), CUresult::Success);
            let mut d = 0;
            assert_eq!(cu::cuMemAlloc_v2(&mut d, 16), CUresult::ErrorInvalidContext);
            assert_eq!(cu::cuCtxSynchronize(), CUresult::ErrorInvalidContext);
            let mut c: CUcontext = 1 as CUcontext;
            assert_eq!(
                cu::cuCtxPopCurrent_v2(&mut c),
                CUresult::ErrorInvalidContext
            );
        }
    })
    .join()
    .unwrap();
}

/// A tool of the venv's `nvidia-cuda-nvcc` package (`fatbinary`, `ptxas`), which
/// `scripts/setup.sh` installs.
fn nvidia_tool(name: &str) -> std::path::PathBuf {
    let lib = Path::new(env!("CARGO_MANIFEST_DIR")).join("../.venv/lib");
    std::fs::read_dir(&lib)
        .ok()
        .and_then(|d| {
            d.filter_map(Result::ok)
                .map(|e| e.path().join("site-packages/nvidia/cu13/bin").join(name))
                .find(|p| p.is_file())
        })
        .unwrap_or_else(|| {
            panic!(
                "{name} not found under {}: run scripts/setup.sh",
                lib.display()
            )
        })
}

#[test]
fn fatbins_give_their_ptx_and_machine_code_is_no_binary_for_gpu() {
    setup();
    let dir = tempfile_dir();
    let ptx = dir.join("k.ptx");
    std::fs::write(&ptx, PTX.trim_end_matches('\0')).unwrap();
    let cubin = dir.join("k.cubin");
    let st = std::process::Command::new(nvidia_tool("ptxas"))
        .args(["-arch", "sm_80", "-o"])
        .arg(&cubin)
        .arg(&ptx)
        .status()
        .unwrap();
    assert!(st.success());
    let fatbin = |name: &str, image: String, extra: &[&str]| {
        let out = dir.join(name);
        let st = std::process::Command::new(nvidia_tool("fatbinary"))
            .arg("-64")
            .arg(format!("--create={}", out.display()))
            .args(extra)
            .arg(image)
            .status()
            .unwrap();
        assert!(st.success());
        std::fs::read(out).unwrap()
    };
    let ptx_image = format!("--image3=kind=ptx,sm=80,file={}", ptx.display());
    let elf_image = format!("--image3=kind=elf,sm=80,file={}", cubin.display());
    let zstd = fatbin("z.fatbin", ptx_image.clone(), &[]);
    let plain = fatbin("p.fatbin", ptx_image, &["-compress=false"]);
    let elf = fatbin("e.fatbin", elf_image, &[]);
    let cubin = std::fs::read(&cubin).unwrap();
    // SAFETY: driver entry points with valid pointers; the images are complete.
    unsafe {
        for (what, image, want) in [
            ("zstd-compressed PTX", &zstd, CUresult::Success),
            ("uncompressed PTX", &plain, CUresult::Success),
            ("machine code only", &elf, CUresult::ErrorNoBinaryForGpu),
            ("a cubin", &cubin, CUresult::ErrorNoBinaryForGpu),
        ] {
            let mut m: CUmodule = std::ptr::null_mut();
            assert_eq!(
                cu::cuModuleLoadData(&mut m, image.as_ptr().cast()),
                want,
                "{what}"
            );
            if want == CUresult::Success {
                let mut f: CUfunction = std::ptr::null_mut();
                assert_eq!(
                    cu::cuModuleGetFunction(&mut f, m, c"scale".as_ptr()),
                    CUresult::Success,
                    "{what}"
                );
                assert_eq!(cu::cuModuleUnload(m), CUresult::Success);
            }
        }
    }
}

/// A fresh folder under the target directory for this test's files.
fn tempfile_dir() -> std::path::PathBuf {
    let exe = std::env::current_exe().unwrap();
    let dir = exe
        .parent()
        .unwrap()
        .join(format!("entry_points-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}
