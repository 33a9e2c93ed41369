//! GPU comparison mode: where an NVIDIA GPU and its driver are present (`libcuda.so.1` loads
//! and `cuInit` finds a device), every case here runs twice — through the CUDA driver API
//! (`cuModuleLoadData` on the very same PTX, `cuLaunchKernel`) and on the cpu target — and the
//! output buffers must agree (bit for bit, or within a stated tolerance where the GPU's math
//! library and ours may round differently). Elsewhere the test prints why it skipped and passes;
//! `PTX2LLVM_REQUIRE_GPU=1` turns the skip into a failure (for CI machines with a GPU).
//!
//!     cargo test --test cpu_gpu_compare -- --nocapture

mod cpu_util;

use std::ffi::{c_char, c_int, c_uint, c_void, CStr, CString};

use cpu_util::*;

type CuResult = c_int;
type Dev = c_int;
type Ctx = *mut c_void;
type Mod = *mut c_void;
type Func = *mut c_void;
type DPtr = u64;

/// The few driver API entry points the comparison needs.
struct Cuda {
    _lib: libloading::Library,
    module_load_data: unsafe extern "C" fn(*mut Mod, *const c_void) -> CuResult,
    module_unload: unsafe extern "C" fn(Mod) -> CuResult,
    module_get_function: unsafe extern "C" fn(*mut Func, Mod, *const c_char) -> CuResult,
    mem_alloc: unsafe extern "C" fn(*mut DPtr, usize) -> CuResult,
    mem_free: unsafe extern "C" fn(DPtr) -> CuResult,
    htod: unsafe extern "C" fn(DPtr, *const c_void, usize) -> CuResult,
    dtoh: unsafe extern "C" fn(*mut c_void, DPtr, usize) -> CuResult,
    #[allow(clippy::type_complexity)]
    launch: unsafe extern "C" fn(
        Func,
        c_uint,
        c_uint,
        c_uint,
        c_uint,
        c_uint,
        c_uint,
        c_uint,
        *mut c_void,
        *mut *mut c_void,
        *mut *mut c_void,
    ) -> CuResult,
    sync: unsafe extern "C" fn() -> CuResult,
    error_string: unsafe extern "C" fn(CuResult, *mut *const c_char) -> CuResult,
    name: String,
}

impl Cuda {
    /// The driver with a current context on device 0, or why there is none.
    fn open() -> Result<Cuda, String> {
        // SAFETY: loading the system's CUDA driver library; the symbols have the driver API's
        // documented C signatures.
        unsafe {
            let lib = libloading::Library::new("libcuda.so.1")
                .map_err(|e| format!("libcuda.so.1 cannot be loaded ({e})"))?;
            macro_rules! sym {
                ($n:literal) => {
                    *lib.get($n)
                        .map_err(|e| format!("libcuda.so.1 lacks {}: {e}", stringify!($n)))?
                };
            }
            let init: unsafe extern "C" fn(c_uint) -> CuResult = sym!(b"cuInit");
            let device_get: unsafe extern "C" fn(*mut Dev, c_int) -> CuResult =
                sym!(b"cuDeviceGet");
            let device_name: unsafe extern "C" fn(*mut c_char, c_int, Dev) -> CuResult =
                sym!(b"cuDeviceGetName");
            let ctx_create: unsafe extern "C" fn(*mut Ctx, c_uint, Dev) -> CuResult =
                sym!(b"cuCtxCreate_v2");
            let r = init(0);
            if r != 0 {
                return Err(format!("cuInit failed with CUresult {r} (no usable GPU)"));
            }
            let mut dev = 0;
            if device_get(&mut dev, 0) != 0 {
                return Err("cuDeviceGet(0) failed: no CUDA device".into());
            }
            let mut name = [0 as c_char; 128];
            device_name(name.as_mut_ptr(), 128, dev);
            let mut ctx = std::ptr::null_mut();
            let r = ctx_create(&mut ctx, 0, dev);
            if r != 0 {
                return Err(format!("cuCtxCreate failed with CUresult {r}"));
            }
            Ok(Cuda {
                module_load_data: sym!(b"cuModuleLoadData"),
                module_unload: sym!(b"cuModuleUnload"),
                module_get_function: sym!(b"cuModuleGetFunction"),
                mem_alloc: sym!(b"cuMemAlloc_v2"),
                mem_free: sym!(b"cuMemFree_v2"),
                htod: sym!(b"cuMemcpyHtoD_v2"),
                dtoh: sym!(b"cuMemcpyDtoH_v2"),
                launch: sym!(b"cuLaunchKernel"),
                sync: sym!(b"cuCtxSynchronize"),
                error_string: sym!(b"cuGetErrorString"),
                name: CStr::from_ptr(name.as_ptr()).to_string_lossy().into_owned(),
                _lib: lib,
            })
        }
    }

    fn check(&self, r: CuResult, what: &str) -> Result<(), String> {
        if r == 0 {
            return Ok(());
        }
        let mut s: *const c_char = std::ptr::null();
        // SAFETY: cuGetErrorString stores a static string or leaves the pointer null.
        unsafe { (self.error_string)(r, &mut s) };
        let msg = if s.is_null() {
            String::new()
        } else {
            // SAFETY: a static C string from the driver.
            unsafe { CStr::from_ptr(s) }.to_string_lossy().into_owned()
        };
        Err(format!("{what}: CUresult {r} {msg}"))
    }

    /// Runs `kernel` of `ptx` on the GPU; returns the final contents of every buffer argument
    /// (None for scalars).
    fn run(&self, ptx: &str, c: &Case) -> Result<Vec<Option<Vec<u8>>>, String> {
        let src = CString::new(ptx).map_err(|e| e.to_string())?;
        let kname = CString::new(c.kernel).map_err(|e| e.to_string())?;
        // SAFETY: driver API calls with valid pointers; device buffers are freed below.
        unsafe {
            let mut m = std::ptr::null_mut();
            self.check(
                (self.module_load_data)(&mut m, src.as_ptr() as *const c_void),
                "cuModuleLoadData",
            )?;
            let mut f = std::ptr::null_mut();
            self.check(
                (self.module_get_function)(&mut f, m, kname.as_ptr()),
                "cuModuleGetFunction",
            )?;
            let mut dptrs: Vec<DPtr> = Vec::new();
            let mut storage: Vec<Vec<u8>> = Vec::new();
            for a in &c.args {
                match a {
                    CArg::Buf(bytes) => {
                        let mut d = 0;
                        self.check((self.mem_alloc)(&mut d, bytes.len().max(1)), "cuMemAlloc")?;
                        self.check(
                            (self.htod)(d, bytes.as_ptr() as *const c_void, bytes.len()),
                            "cuMemcpyHtoD",
                        )?;
                        dptrs.push(d);
                        storage.push(d.to_le_bytes().to_vec());
                    }
                    CArg::Val(bytes) => storage.push(bytes.clone()),
                }
            }
            let mut params: Vec<*mut c_void> = storage
                .iter_mut()
                .map(|s| s.as_mut_ptr() as *mut c_void)
                .collect();
            let (g, b) = (c.grid, c.block);
            self.check(
                (self.launch)(
                    f,
                    g[0],
                    g[1],
                    g[2],
                    b[0],
                    b[1],
                    b[2],
                    c.shared,
                    std::ptr::null_mut(),
                    params.as_mut_ptr(),
                    std::ptr::null_mut(),
                ),
                "cuLaunchKernel",
            )?;
            self.check((self.sync)(), "cuCtxSynchronize")?;
            let mut out = Vec::new();
            let mut k = 0;
            for a in &c.args {
                match a {
                    CArg::Buf(bytes) => {
                        let mut host = vec![0u8; bytes.len()];
                        self.check(
                            (self.dtoh)(host.as_mut_ptr() as *mut c_void, dptrs[k], host.len()),
                            "cuMemcpyDtoH",
                        )?;
                        (self.mem_free)(dptrs[k]);
                        k += 1;
                        out.push(Some(host));
                    }
                    CArg::Val(_) => out.push(None),
                }
            }
            (self.module_unload)(m);
            Ok(out)
        }
    }
}

/// A kernel argument: a device buffer with initial contents, or a by-value parameter.
enum CArg {
    Buf(Vec<u8>),
    Val(Vec<u8>),
}

/// How two output buffers must agree.
#[derive(Clone, Copy)]
enum Cmp {
    Exact,
    F32(f32),
    F64(f64),
}

struct Case {
    file: &'static str,
    kernel: &'static str,
    grid: [u32; 3],
    block: [u32; 3],
    shared: u32,
    args: Vec<CArg>,
    /// How float outputs must agree; integer outputs always bit for bit.
    cmp: Cmp,
    /// The buffer arguments `cmp` applies to (empty: all).
    float_args: &'static [usize],
}

fn bytes<T: Copy>(v: &[T]) -> Vec<u8> {
    // SAFETY: plain-old-data values viewed as bytes.
    unsafe { std::slice::from_raw_parts(v.as_ptr() as *const u8, std::mem::size_of_val(v)) }
        .to_vec()
}

fn cases() -> Vec<Case> {
    let mut r = Rng::new(99);
    let f32s = |r: &mut Rng, n: usize, lo: f32, hi: f32| -> Vec<f32> {
        (0..n).map(|_| r.f32(lo, hi)).collect()
    };
    let i32s = |r: &mut Rng, n: usize, lo: i64, hi: i64| -> Vec<i32> {
        (0..n).map(|_| r.int(lo, hi) as i32).collect()
    };
    let hard = "tests/kernels/hard_cases.ptx";
    vec![
        Case {
            file: "tests/corpus/nvrtc/vecadd.ptx",
            kernel: "vecadd",
            grid: [4, 1, 1],
            block: [256, 1, 1],
            shared: 0,
            args: vec![
                CArg::Buf(bytes(&f32s(&mut r, 1000, -1e3, 1e3))),
                CArg::Buf(bytes(&f32s(&mut r, 1000, -1e3, 1e3))),
                CArg::Buf(vec![0; 4000]),
                CArg::Val(1000i32.to_le_bytes().to_vec()),
            ],
            cmp: Cmp::Exact,
            float_args: &[],
        },
        Case {
            file: "tests/corpus/nvrtc/shared_sync.ptx",
            kernel: "block_reduce",
            grid: [4, 1, 1],
            block: [256, 1, 1],
            shared: 0,
            args: vec![
                CArg::Buf(bytes(&f32s(&mut r, 1024, -1.0, 1.0))),
                CArg::Buf(vec![0; 16]),
                CArg::Val(1000i32.to_le_bytes().to_vec()),
            ],
            cmp: Cmp::Exact,
            float_args: &[],
        },
        Case {
            file: "tests/corpus/nvrtc/warp_shuffle.ptx",
            kernel: "warp_reduce",
            grid: [2, 1, 1],
            block: [128, 1, 1],
            shared: 0,
            args: vec![
                CArg::Buf(bytes(&f32s(&mut r, 256, -50.0, 50.0))),
                CArg::Buf(vec![0; 32]),
                CArg::Buf(vec![0; 1024]),
            ],
            cmp: Cmp::Exact,
            float_args: &[],
        },
        Case {
            file: "tests/corpus/nvrtc/warp_vote.ptx",
            kernel: "warp_vote",
            grid: [2, 1, 1],
            block: [96, 1, 1],
            shared: 0,
            args: vec![
                CArg::Buf(bytes(&i32s(&mut r, 192, -5, 8))),
                CArg::Buf(vec![0; 768]),
            ],
            cmp: Cmp::Exact,
            float_args: &[],
        },
        Case {
            file: "tests/corpus/nvrtc/control_flow.ptx",
            kernel: "control",
            grid: [2, 1, 1],
            block: [128, 1, 1],
            shared: 0,
            args: vec![
                CArg::Buf(bytes(&i32s(&mut r, 256, -60, 400))),
                CArg::Buf(vec![0; 1024]),
                CArg::Val(256i32.to_le_bytes().to_vec()),
            ],
            cmp: Cmp::Exact,
            float_args: &[],
        },
        Case {
            file: "tests/corpus/nvrtc/math64.ptx",
            kernel: "math64",
            grid: [2, 1, 1],
            block: [128, 1, 1],
            shared: 0,
            args: vec![
                CArg::Buf(bytes(
                    &(0..256).map(|_| r.int(-99999, 99999)).collect::<Vec<i64>>(),
                )),
                CArg::Buf(bytes(
                    &(0..256)
                        .map(|_| r.int(0, 1 << 40) as u64)
                        .collect::<Vec<u64>>(),
                )),
                CArg::Buf(bytes(
                    &(0..256).map(|_| r.f64(0.01, 20.0)).collect::<Vec<f64>>(),
                )),
                CArg::Buf(vec![0; 2048]),
                CArg::Buf(vec![0; 2048]),
                CArg::Val(256i32.to_le_bytes().to_vec()),
            ],
            cmp: Cmp::F64(1e-14),
            float_args: &[3],
        },
        Case {
            file: "tests/corpus/nvrtc/mathfns.ptx",
            kernel: "mathfns",
            grid: [1, 1, 1],
            block: [128, 1, 1],
            shared: 0,
            args: vec![
                CArg::Buf(bytes(&f32s(&mut r, 128, 0.1, 4.0))),
                CArg::Buf(vec![0; 512]),
                CArg::Val(128i32.to_le_bytes().to_vec()),
            ],
            cmp: Cmp::F32(1e-6),
            float_args: &[],
        },
        Case {
            file: "tests/corpus/triton/softmax.sm80.ptx",
            kernel: "softmax_kernel",
            grid: [4, 1, 1],
            block: [128, 1, 1],
            shared: 1024,
            args: vec![
                CArg::Buf(vec![0; 4 * 4 * 1024]),
                CArg::Buf(bytes(&f32s(&mut r, 4 * 1024, -20.0, 20.0))),
                CArg::Val(1024i32.to_le_bytes().to_vec()),
                CArg::Val(1024i32.to_le_bytes().to_vec()),
                CArg::Val(1000i32.to_le_bytes().to_vec()),
                CArg::Buf(vec![0; 64]),
                CArg::Buf(vec![0; 64]),
            ],
            cmp: Cmp::F32(4e-6),
            float_args: &[0],
        },
        Case {
            file: hard,
            kernel: "scan_loop",
            grid: [3, 1, 1],
            block: [256, 1, 1],
            shared: 2048,
            args: vec![
                CArg::Buf(bytes(&i32s(&mut r, 700, -50, 50))),
                CArg::Buf(vec![0; 2800]),
                CArg::Val(700i32.to_le_bytes().to_vec()),
                CArg::Val(2i32.to_le_bytes().to_vec()),
            ],
            cmp: Cmp::Exact,
            float_args: &[],
        },
        Case {
            file: hard,
            kernel: "exit_before_barrier",
            grid: [1, 1, 1],
            block: [256, 1, 1],
            shared: 0,
            args: vec![
                CArg::Buf(vec![0xff; 1024]),
                CArg::Val(200i32.to_le_bytes().to_vec()),
            ],
            cmp: Cmp::Exact,
            float_args: &[],
        },
        Case {
            file: hard,
            kernel: "partial_shuffle",
            grid: [2, 1, 1],
            block: [64, 1, 1],
            shared: 0,
            args: vec![
                CArg::Buf(bytes(&i32s(&mut r, 128, -100, 100))),
                CArg::Buf(vec![0; 512]),
                CArg::Buf(vec![0; 32]),
            ],
            cmp: Cmp::Exact,
            float_args: &[],
        },
        Case {
            file: hard,
            kernel: "dims3",
            grid: [3, 2, 4],
            block: [5, 3, 2],
            shared: 0,
            args: vec![CArg::Buf(vec![0; 24 * 30 * 13 * 4])],
            cmp: Cmp::Exact,
            float_args: &[],
        },
        Case {
            file: hard,
            kernel: "producer_consumer",
            grid: [2, 1, 1],
            block: [64, 1, 1],
            shared: 0,
            args: vec![
                CArg::Buf(bytes(&i32s(&mut r, 160, -1000, 1000))),
                CArg::Buf(vec![0; 640]),
                CArg::Val(5i32.to_le_bytes().to_vec()),
            ],
            cmp: Cmp::Exact,
            float_args: &[],
        },
    ]
}

/// Runs a case on the cpu target; the final contents of every buffer argument.
fn run_cpu(ptx: &str, c: &Case) -> Vec<Option<Vec<u8>>> {
    let m = load_src(ptx);
    let bufs: Vec<Option<Buffer>> = c
        .args
        .iter()
        .map(|a| match a {
            CArg::Buf(b) => Some(Buffer::from_bytes(b)),
            CArg::Val(_) => None,
        })
        .collect();
    let args: Vec<Arg> = c
        .args
        .iter()
        .zip(&bufs)
        .map(|(a, b)| match (a, b) {
            (_, Some(b)) => ptr(b),
            (CArg::Val(v), None) => Arg::Scalar(v.clone()),
            (CArg::Buf(_), None) => unreachable!(),
        })
        .collect();
    launch(&m, c.kernel, Dim3(c.grid), Dim3(c.block), c.shared, args);
    bufs.into_iter()
        .map(|b| b.map(|b| b.as_slice().to_vec()))
        .collect()
}

fn agree(cmp: Cmp, gpu: &[u8], cpu: &[u8]) -> Result<(), String> {
    match cmp {
        Cmp::Exact => match gpu.iter().zip(cpu).position(|(a, b)| a != b) {
            None => Ok(()),
            Some(i) => Err(format!(
                "byte {i} differs: GPU {:#04x}, cpu {:#04x}",
                gpu[i], cpu[i]
            )),
        },
        Cmp::F32(rel) => {
            for (i, (g, c)) in gpu.chunks(4).zip(cpu.chunks(4)).enumerate() {
                let g = f32::from_le_bytes(g.try_into().unwrap());
                let c = f32::from_le_bytes(c.try_into().unwrap());
                if !(g == c || (g.is_nan() && c.is_nan()) || (g - c).abs() <= rel * g.abs()) {
                    return Err(format!("f32 element {i}: GPU {g:e}, cpu {c:e}"));
                }
            }
            Ok(())
        }
        Cmp::F64(rel) => {
            for (i, (g, c)) in gpu.chunks(8).zip(cpu.chunks(8)).enumerate() {
                let g = f64::from_le_bytes(g.try_into().unwrap());
                let c = f64::from_le_bytes(c.try_into().unwrap());
                if !(g == c || (g.is_nan() && c.is_nan()) || (g - c).abs() <= rel * g.abs()) {
                    return Err(format!("f64 element {i}: GPU {g:e}, cpu {c:e}"));
                }
            }
            Ok(())
        }
    }
}

#[test]
fn gpu_and_cpu_agree() {
    let cuda = match Cuda::open() {
        Ok(c) => c,
        Err(why) => {
            let msg = format!("GPU comparison skipped: {why}");
            if std::env::var("PTX2LLVM_REQUIRE_GPU").is_ok_and(|v| v == "1") {
                panic!("{msg} (PTX2LLVM_REQUIRE_GPU=1)");
            }
            eprintln!("{msg}");
            return;
        }
    };
    eprintln!("GPU comparison on {}", cuda.name);
    let mut failures = Vec::new();
    for c in cases() {
        let ptx = std::fs::read_to_string(root().join(c.file)).unwrap();
        let what = format!("{} {}", c.file, c.kernel);
        let gpu = match cuda.run(&ptx, &c) {
            Ok(g) => g,
            Err(e) => {
                failures.push(format!("{what}: the GPU run failed: {e}"));
                continue;
            }
        };
        let cpu = run_cpu(&ptx, &c);
        for (k, (g, p)) in gpu.iter().zip(&cpu).enumerate() {
            if let (Some(g), Some(p)) = (g, p) {
                let cmp = if c.float_args.is_empty() || c.float_args.contains(&k) {
                    c.cmp
                } else {
                    Cmp::Exact
                };
                if let Err(e) = agree(cmp, g, p) {
                    failures.push(format!("{what}: argument {k}: {e}"));
                }
            }
        }
        eprintln!("  {what}: compared");
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn comparison_cases_run_on_the_cpu_target() {
    // Keeps the case list honest where there is no GPU: every case runs on the cpu target.
    for c in cases() {
        let ptx = std::fs::read_to_string(root().join(c.file)).unwrap();
        let out = run_cpu(&ptx, &c);
        assert_eq!(out.len(), c.args.len());
    }
}
