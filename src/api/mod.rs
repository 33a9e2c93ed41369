//! The Rust embedding API of the cpu target: parse and compile PTX (`Module::from_ptx`), make
//! device buffers (`Buffer`: host memory, 256-byte aligned), and launch kernels with typed
//! arguments checked against the kernel's `.param` list (`Module::launch`).
//!
//! ```no_run
//! use ptx2llvm::api::{Arg, Buffer, Dim3, Module};
//! let m = Module::from_ptx(&std::fs::read_to_string("vecadd.ptx").unwrap(), 2).unwrap();
//! let mut args = vec![
//!     Arg::Buffer(Buffer::from_bytes(&[0u8; 4096])),
//!     Arg::Buffer(Buffer::from_bytes(&[0u8; 4096])),
//!     Arg::Buffer(Buffer::zeroed(4096)),
//!     Arg::scalar_u32(1024),
//! ];
//! m.launch("vecAdd", Dim3::x(4), Dim3::x(256), 0, &mut args).unwrap();
//! ```

pub mod record;
mod spec;

pub use spec::{parse_spec, ArgSpec, Scalar};

use crate::runtime::{LaunchConfig, LaunchError};
use crate::target::cpu::{CompileError, KernelInfo, ParamLayout, Program};

/// Errors of the embedding API; each says what was expected.
#[derive(Debug, thiserror::Error)]
pub enum ApiError {
    #[error("{0}")]
    Parse(String),
    #[error("{0}")]
    Compile(#[from] CompileError),
    #[error("{0}")]
    Launch(#[from] LaunchError),
    #[error("{0}")]
    Args(String),
    /// Memory for a buffer could not be had.
    #[error("{0}")]
    Alloc(String),
}

/// A grid or block size.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Dim3(pub [u32; 3]);

impl Dim3 {
    pub fn x(x: u32) -> Dim3 {
        Dim3([x, 1, 1])
    }
}

/// A device buffer: zero-initialized host memory aligned to 256 bytes, as `cudaMalloc` gives,
/// in a mapping of its own that ends at an inaccessible guard page: a kernel reading or
/// writing past the end (by more than the up to 255 bytes of alignment slack) faults at once,
/// and the launch fails with an invalid-access error naming the thread, instead of touching
/// other memory.
pub struct Buffer {
    ptr: *mut u8,
    len: usize,
    /// The whole mapping (data pages and the guard page).
    map: *mut u8,
    map_len: usize,
}

// SAFETY: a Buffer owns its allocation.
unsafe impl Send for Buffer {}

impl Buffer {
    /// `len` zero bytes. Panics when the memory cannot be had; `try_zeroed` returns the error.
    pub fn zeroed(len: usize) -> Buffer {
        Buffer::try_zeroed(len).unwrap_or_else(|e| panic!("{e}"))
    }

    /// `len` zero bytes, or an error saying that the memory cannot be had.
    pub fn try_zeroed(len: usize) -> Result<Buffer, ApiError> {
        let page = crate::runtime::shared::page();
        let too_big = || {
            ApiError::Alloc(format!(
                "cannot allocate a buffer of {len} bytes: {}",
                std::io::Error::from_raw_os_error(libc::ENOMEM)
            ))
        };
        let data = len
            .max(1)
            .checked_next_multiple_of(256)
            .ok_or_else(too_big)?;
        let pages = data.checked_next_multiple_of(page).ok_or_else(too_big)?;
        let map_len = pages
            .checked_add(page)
            .filter(|&n| n <= isize::MAX as usize)
            .ok_or_else(too_big)?;
        // SAFETY: an anonymous private mapping; the result is checked.
        let map = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                map_len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        if map == libc::MAP_FAILED {
            return Err(ApiError::Alloc(format!(
                "cannot allocate a buffer of {len} bytes: {}",
                std::io::Error::last_os_error()
            )));
        }
        let map = map as *mut u8;
        // The system's page policy by default, as the heap's allocations (and so a C program's
        // buffers) get it: asking for transparent huge pages made some processes' buffers 1.5x
        // to 3x slower on hosts that back them badly (docs/ARCHITECTURE.md, `api`).
        if pages >= 2 << 20 && huge_pages_asked() {
            // SAFETY: advice on this process's own mapping; failure is harmless.
            unsafe {
                libc::madvise(map as *mut libc::c_void, pages, libc::MADV_HUGEPAGE);
            }
        }
        // SAFETY: the last page lies inside the mapping; the data ends where it starts.
        unsafe {
            libc::mprotect(map.add(pages) as *mut libc::c_void, page, libc::PROT_NONE);
        }
        // SAFETY: `pages - data` is within the mapping (data <= pages).
        let ptr = unsafe { map.add(pages - data) };
        record::register(ptr as u64, len);
        Ok(Buffer {
            ptr,
            len,
            map,
            map_len,
        })
    }

    /// A copy of `bytes`. Panics when the memory cannot be had; `try_from_bytes` returns the
    /// error.
    pub fn from_bytes(bytes: &[u8]) -> Buffer {
        Buffer::try_from_bytes(bytes).unwrap_or_else(|e| panic!("{e}"))
    }

    /// A copy of `bytes`, or an error saying that the memory cannot be had.
    pub fn try_from_bytes(bytes: &[u8]) -> Result<Buffer, ApiError> {
        let b = Buffer::try_zeroed(bytes.len())?;
        // SAFETY: `b` has `bytes.len()` bytes.
        unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), b.ptr, bytes.len()) };
        Ok(b)
    }

    /// The device address kernels see.
    pub fn address(&self) -> u64 {
        self.ptr as u64
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    pub fn as_slice(&self) -> &[u8] {
        // SAFETY: `ptr` holds `len` initialized bytes.
        unsafe { std::slice::from_raw_parts(self.ptr, self.len) }
    }

    pub fn as_mut_slice(&mut self) -> &mut [u8] {
        // SAFETY: as above, and `self` is borrowed mutably.
        unsafe { std::slice::from_raw_parts_mut(self.ptr, self.len) }
    }
}

impl Drop for Buffer {
    fn drop(&mut self) {
        record::unregister(self.ptr as u64);
        // SAFETY: mapped in `zeroed` with this length.
        unsafe {
            libc::munmap(self.map as *mut libc::c_void, self.map_len);
        }
    }
}

/// `PTX2LLVM_HUGEPAGES=1`: buffers of 2 MiB and more ask for transparent huge pages
/// (`MADV_HUGEPAGE`), for hosts where they are reliably fast.
fn huge_pages_asked() -> bool {
    static ASKED: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *ASKED.get_or_init(|| std::env::var("PTX2LLVM_HUGEPAGES").as_deref() == Ok("1"))
}

/// A kernel argument.
pub enum Arg {
    /// A scalar's bytes (little-endian, exactly the parameter's size).
    Scalar(Vec<u8>),
    /// A device buffer; the kernel gets its address.
    Buffer(Buffer),
    /// A by-value aggregate (struct, `.b8` array) as raw bytes.
    Bytes(Vec<u8>),
    /// A device address the caller keeps valid during the launch (a `Buffer` it owns, or an
    /// offset into one); passed as a `.u64` pointer.
    Pointer(u64),
}

impl Arg {
    pub fn scalar_u32(v: u32) -> Arg {
        Arg::Scalar(v.to_le_bytes().to_vec())
    }
    pub fn scalar_u64(v: u64) -> Arg {
        Arg::Scalar(v.to_le_bytes().to_vec())
    }
    pub fn scalar_f32(v: f32) -> Arg {
        Arg::Scalar(v.to_le_bytes().to_vec())
    }
    pub fn scalar_f64(v: f64) -> Arg {
        Arg::Scalar(v.to_le_bytes().to_vec())
    }

    fn describe(&self) -> String {
        match self {
            Arg::Scalar(b) => format!("{} {}-byte scalar", article(b.len()), b.len()),
            Arg::Buffer(b) => format!("a buffer of {} bytes", b.len()),
            Arg::Bytes(b) => format!("{} raw bytes", b.len()),
            Arg::Pointer(_) => "a pointer".to_string(),
        }
    }
}

/// "a" or "an" before the number `n` spelled in digits ("an 8-byte scalar").
fn article(n: usize) -> &'static str {
    let s = n.to_string();
    let an = s.starts_with('8')
        || ((s.len() == 2 || s.len() == 5) && s.starts_with("1") && matches!(&s[..2], "11" | "18"));
    if an {
        "an"
    } else {
        "a"
    }
}

/// Builds a kernel's parameter buffer from `args`, checking their number and sizes.
pub fn param_buffer(kernel: &str, layout: &ParamLayout, args: &[Arg]) -> Result<Vec<u8>, ApiError> {
    let sig = || {
        layout
            .params
            .iter()
            .map(|p| {
                if p.aggregate {
                    format!("{} ({} bytes)", p.ty, p.size)
                } else {
                    p.ty.clone()
                }
            })
            .collect::<Vec<_>>()
            .join(", ")
    };
    if args.len() != layout.params.len() {
        return Err(ApiError::Args(format!(
            "kernel `{kernel}` takes {} parameter(s) ({}), but {} argument(s) were given",
            layout.params.len(),
            sig(),
            args.len()
        )));
    }
    let mut buf = vec![0u8; layout.size as usize];
    for (i, (a, p)) in args.iter().zip(&layout.params).enumerate() {
        let bytes: Vec<u8> = match a {
            Arg::Scalar(b) | Arg::Bytes(b) => b.clone(),
            Arg::Buffer(b) => b.address().to_le_bytes().to_vec(),
            Arg::Pointer(p) => p.to_le_bytes().to_vec(),
        };
        let fits = match a {
            Arg::Buffer(_) | Arg::Pointer(_) => p.size == 8 && !p.aggregate,
            // A scalar also fills a same-sized aggregate: NVRTC passes `__half` and other
            // small structs as `.b8` arrays.
            Arg::Scalar(_) => bytes.len() as u32 == p.size,
            Arg::Bytes(_) => bytes.len() as u32 == p.size,
        };
        if !fits {
            let want = if p.aggregate {
                format!("{} bytes (`bytes:HEX` with {} bytes)", p.size, p.size)
            } else if p.size == 8 {
                format!(
                    "{} {}-byte scalar or a buffer (a .u64 pointer)",
                    article(p.size as usize),
                    p.size
                )
            } else {
                format!("{} {}-byte scalar", article(p.size as usize), p.size)
            };
            return Err(ApiError::Args(format!(
                "argument {i} of kernel `{kernel}` is {}, but parameter {i} `{}` ({}) expects {want}",
                a.describe(),
                p.name,
                p.ty
            )));
        }
        buf[p.offset as usize..p.offset as usize + bytes.len()].copy_from_slice(&bytes);
    }
    Ok(buf)
}

/// A PTX module compiled for this CPU.
pub struct Module {
    program: Program,
    /// The PTX source, kept only while launches are recorded (`record`).
    source: Option<String>,
    /// A module variable was written by the host: launches depend on more than their
    /// arguments, so they are not recorded.
    globals_written: std::sync::atomic::AtomicBool,
    /// The block the module was compiled for (`from_ptx_for`): its kernels launch only with
    /// it, whatever scheme runs them (some do not depend on the shape; the contract does).
    block: Option<Dim3>,
    /// The program came from the kernel cache (memory or disk), not from compiling.
    from_cache: bool,
}

impl Module {
    /// Parses, checks and compiles PTX source at optimization level `opt` (0–3).
    pub fn from_ptx(src: &str, opt: u8) -> Result<Module, ApiError> {
        Self::from_ptx_with(src, opt, crate::target::cpu::fission::CpuMode::from_env())
    }

    /// As `from_ptx`, running kernels as `mode` says (thread loops or coroutines; the default
    /// comes from `PTX2LLVM_CPU_MODE`).
    pub fn from_ptx_with(
        src: &str,
        opt: u8,
        mode: crate::target::cpu::fission::CpuMode,
    ) -> Result<Module, ApiError> {
        Self::from_ptx_for(src, opt, mode, None)
    }

    /// As `from_ptx_with`, with the kernels' thread loops compiled for CTAs of shape `block`
    /// when given (`%ntid` a constant: loops over threads with known trip counts, often much
    /// faster). The module's kernels then launch only with that block; a launch with another
    /// one is an error (`LaunchError::Config`).
    pub fn from_ptx_for(
        src: &str,
        opt: u8,
        mode: crate::target::cpu::fission::CpuMode,
        block: Option<Dim3>,
    ) -> Result<Module, ApiError> {
        Self::from_ptx_debug(src, opt, mode, block, &Default::default())
    }

    /// As `from_ptx_for`, with the debug information `debug` asks for (`-g`; line tables
    /// from `.loc` without it).
    pub fn from_ptx_debug(
        src: &str,
        opt: u8,
        mode: crate::target::cpu::fission::CpuMode,
        block: Option<Dim3>,
        debug: &crate::lower::debug::DebugOptions,
    ) -> Result<Module, ApiError> {
        // The kernel cache: a hit needs neither parsing nor compiling (an entry exists only
        // for PTX that compiled).
        let req = crate::target::cpu::cache::Request {
            src,
            opt,
            name: "ptx",
            mode,
            block: block.map(|b| b.0),
            kernel: None,
            debug,
            settings: crate::target::cpu::cache::Settings::from_env(),
        };
        if let Some((program, _)) = crate::target::cpu::cache::lookup(&req) {
            return Ok(Module {
                program,
                source: record::dir().map(|_| src.to_string()),
                globals_written: false.into(),
                block,
                from_cache: true,
            });
        }
        let (ast, mut diags) = crate::syntax::parse(src);
        let mut info = crate::check::ModuleInfo::default();
        if diags.is_empty() {
            (info, diags) = crate::check::check_module(&ast);
        }
        if !diags.is_empty() {
            return Err(ApiError::Parse(crate::syntax::diag::render_all(
                &diags, "<ptx>", src,
            )));
        }
        // `Program` has no lifetime: nothing borrowed from the AST outlives the build.
        let program =
            crate::target::cpu::cache::compile_and_load(&req, &ast, &info).map(|(p, _)| p);
        Ok(Module {
            program: program?,
            source: record::dir().map(|_| src.to_string()),
            globals_written: false.into(),
            block,
            from_cache: false,
        })
    }

    /// Whether the kernel cache supplied the program (no compilation): libcuda's load log.
    pub fn from_cache(&self) -> bool {
        self.from_cache
    }

    /// The underlying program (kernels, layouts).
    pub fn program(&self) -> &Program {
        &self.program
    }

    /// Names of the kernels.
    pub fn kernel_names(&self) -> Vec<String> {
        self.program
            .kernels()
            .iter()
            .map(|k| k.name.clone())
            .collect()
    }

    /// Address and size of the module variable `name` (`.global` or `.const`), as
    /// `cuModuleGetGlobal` gives them; `None` when the module has no such variable.
    pub fn global_ptr(&self, name: &str) -> Option<(*mut u8, usize)> {
        let (addr, size) = self.program.global(name)?;
        Some((addr as *mut u8, size as usize))
    }

    /// Copies `bytes` to the start of module variable `name` (`cudaMemcpyToSymbol`).
    pub fn write_global(&self, name: &str, bytes: &[u8]) -> Result<(), ApiError> {
        let (p, size) = self.global_ptr(name).ok_or_else(|| self.no_global(name))?;
        self.globals_written
            .store(true, std::sync::atomic::Ordering::Relaxed);
        if bytes.len() > size {
            return Err(ApiError::Args(format!(
                "{} bytes do not fit module variable `{name}` of {size} bytes",
                bytes.len()
            )));
        }
        // SAFETY: the variable has `size` bytes at `p` for the program's life; no launch runs
        // (`launch` borrows the module for its duration on this thread).
        unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), p, bytes.len()) };
        Ok(())
    }

    /// The bytes of module variable `name` (`cudaMemcpyFromSymbol`).
    pub fn read_global(&self, name: &str) -> Result<Vec<u8>, ApiError> {
        let (p, size) = self.global_ptr(name).ok_or_else(|| self.no_global(name))?;
        // SAFETY: as in `write_global`.
        Ok(unsafe { std::slice::from_raw_parts(p, size) }.to_vec())
    }

    fn no_global(&self, name: &str) -> ApiError {
        let names: Vec<&str> = self.program.global_names().collect();
        ApiError::Args(format!(
            "no module variable named `{name}`; the module's variables are: {}",
            if names.is_empty() {
                "(none)".to_string()
            } else {
                names.join(", ")
            }
        ))
    }

    /// Launches `kernel` over `grid` × `block` with `shared` bytes of dynamic shared memory and
    /// waits for it.
    pub fn launch(
        &self,
        kernel: &str,
        grid: Dim3,
        block: Dim3,
        shared: u32,
        args: &mut [Arg],
    ) -> Result<(), ApiError> {
        let cfg = LaunchConfig {
            grid: grid.0,
            block: block.0,
            dynamic_shared: shared,
            static_shared: self.program.static_shared(),
            ..LaunchConfig::default()
        };
        self.launch_with(kernel, &cfg, args)
    }

    /// The kernel `kernel`'s layout, or an error naming the module's kernels.
    fn kernel_info(&self, kernel: &str) -> Result<&KernelInfo, ApiError> {
        self.program.kernel(kernel).ok_or_else(|| {
            ApiError::Args(format!(
                "no kernel named `{kernel}`; the module's kernels are: {}",
                self.kernel_names().join(", ")
            ))
        })
    }

    /// Launches with a full configuration (`static_shared` and `shared_align` are taken from the
    /// module).
    pub fn launch_with(
        &self,
        kernel: &str,
        cfg: &LaunchConfig,
        args: &mut [Arg],
    ) -> Result<(), ApiError> {
        let info = self.kernel_info(kernel)?;
        let params = param_buffer(kernel, &info.params, args)?;
        let recording = self
            .source
            .as_deref()
            .filter(|_| {
                !self
                    .globals_written
                    .load(std::sync::atomic::Ordering::Relaxed)
            })
            .and_then(|source| {
                let launch = record::Launch {
                    source,
                    kernel,
                    grid: cfg.grid,
                    block: cfg.block,
                    shared: cfg.dynamic_shared,
                    layout: &info.params,
                };
                record::begin(&launch, args)
            });
        // SAFETY: `param_buffer` checked the arguments against the layout; the buffers in
        // `args` stay alive (borrowed) during the launch.
        let r = unsafe { self.launch_raw(kernel, cfg, &params) };
        if let Some(rec) = recording {
            rec.finish(r.as_ref().map(|_| ()).map_err(|e| e.to_string()));
        }
        r
    }

    /// Launches `kernel` with a parameter buffer already in the kernel's CUDA layout (what
    /// `cuLaunchKernel` assembles from `kernelParams`, or its `extra` buffer) and waits for it.
    /// The buffer must hold at least the layout's size (`KernelInfo::params`); pointers in it
    /// must stay valid during the launch.
    ///
    /// # Safety
    /// `params` must hold what the kernel expects: device pointers in it host memory the
    /// kernel may use (invalid accesses the fault handler sees fail the launch, but a kernel
    /// may write through a wrong pointer into valid memory).
    pub unsafe fn launch_raw(
        &self,
        kernel: &str,
        cfg: &LaunchConfig,
        params: &[u8],
    ) -> Result<(), ApiError> {
        let info = self.kernel_info(kernel)?;
        if params.len() < info.params.size as usize {
            return Err(ApiError::Args(format!(
                "kernel `{kernel}` takes {} bytes of parameters, but {} were given",
                info.params.size,
                params.len()
            )));
        }
        let code = self
            .program
            .code(kernel)
            .ok_or_else(|| ApiError::Args(format!("kernel `{kernel}` has no entry point")))?;
        if let Some(b) = self.block.filter(|b| b.0 != cfg.block) {
            return Err(ApiError::Launch(LaunchError::Config(format!(
                "kernel {kernel} was compiled for blocks of ({}, {}, {}) threads, not ({}, {}, {})",
                b.0[0], b.0[1], b.0[2], cfg.block[0], cfg.block[1], cfg.block[2]
            ))));
        }
        let mut cfg = cfg.clone();
        cfg.static_shared = self.program.static_shared();
        cfg.shared_align = self.program.shared_align();
        crate::runtime::fault::install();
        crate::runtime::fault::set_kernel(kernel);
        // SAFETY: `code` was compiled for this ABI and `params` holds its layout; the caller
        // keeps the memory its pointers name alive during the launch, and invalid accesses
        // are caught by the fault handler installed above.
        unsafe { crate::runtime::launch_code(kernel, &code, params, &cfg) }?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buffers_that_cannot_be_had_are_errors() {
        for len in [usize::MAX, usize::MAX - 300, 1 << 50] {
            let e = Buffer::try_zeroed(len).err().expect("no buffer");
            assert!(
                matches!(&e, ApiError::Alloc(m) if m.starts_with(&format!("cannot allocate a buffer of {len} bytes"))),
                "{e}"
            );
        }
        let b = Buffer::try_from_bytes(&[1, 2, 3]).unwrap();
        assert_eq!(b.as_slice(), &[1, 2, 3]);
        assert_eq!(b.address() % 256, 0);
        // The C API answers null.
        assert!(crate::capi::ptx2llvm_buffer_alloc(1 << 50).is_null());
    }

    /// A large buffer takes the system's page policy: its mapping carries no `hg`
    /// (`MADV_HUGEPAGE`) flag unless `PTX2LLVM_HUGEPAGES=1` asks for it, so that C's heap
    /// buffers and ours are compared under one policy.
    #[test]
    fn large_buffers_follow_the_system_page_policy() {
        let b = Buffer::try_zeroed(8 << 20).unwrap();
        let at = b.address();
        let smaps = std::fs::read_to_string("/proc/self/smaps").unwrap();
        let mut inside = false;
        let mut flags = None;
        for line in smaps.lines() {
            if let Some((range, _)) = line.split_once(' ') {
                if let Some((lo, hi)) = range.split_once('-') {
                    if let (Ok(lo), Ok(hi)) =
                        (u64::from_str_radix(lo, 16), u64::from_str_radix(hi, 16))
                    {
                        inside = (lo..hi).contains(&at);
                        continue;
                    }
                }
            }
            if inside {
                if let Some(f) = line.strip_prefix("VmFlags:") {
                    flags = Some(f.split_whitespace().any(|f| f == "hg"));
                    break;
                }
            }
        }
        assert_eq!(flags, Some(huge_pages_asked()), "{smaps}");
    }
}
