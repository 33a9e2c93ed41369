//! Modules and libraries: images are PTX text (what `cuLinkComplete` also returns), or a fatbin
//! whose PTX is extracted; a cubin, or a fatbin with only machine code, is
//! `CUDA_ERROR_NO_BINARY_FOR_GPU` (there is no GPU to run it). A `CUlibrary` is a module and
//! a `CUkernel` is a `CUfunction`: the same handles serve both families, so callers that pass
//! one for the other (cuda.core does) work. Compile errors are `CUDA_ERROR_INVALID_PTX`, with
//! the message in the JIT error log option and the library's log.

use std::ffi::{c_char, c_int, c_uint, c_void, CStr, CString};
use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::{Arc, Mutex};

use ptx2llvm::attrs::KernelAttributes;
use ptx2llvm::target::cpu::ParamLayout;

use crate::context::{self, Ctx};
use crate::types::*;
use crate::{device, loader, memory, out, CuResult};

/// A loaded module.
pub struct Module {
    pub module: ptx2llvm::api::Module,
    pub ctx: Arc<Ctx>,
    pub functions: Vec<Box<Function>>,
    globals: Vec<(CString, u64, usize)>,
}

// SAFETY: the JIT engine inside `module` is only read (kernel table, addresses) outside
// launches, and launches are serialized (`launch::LAUNCH`); compiled code is reentrant.
unsafe impl Send for Module {}
// SAFETY: as above.
unsafe impl Sync for Module {}

impl Drop for Module {
    fn drop(&mut self) {
        for (_, a, _) in &self.globals {
            memory::unregister_global(*a);
        }
    }
}

/// A kernel of a module (`CUfunction` and `CUkernel`).
pub struct Function {
    pub name: CString,
    pub params: ParamLayout,
    /// `CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES`.
    pub max_dynamic_shared: AtomicI32,
    /// `CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT`.
    pub carveout: AtomicI32,
    /// What `cuFuncGetAttribute` reports, computed from the PTX (`ptx2llvm::attrs`).
    pub attrs: KernelAttributes,
}

static MODULES: Mutex<Vec<Arc<Module>>> = Mutex::new(Vec::new());

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// The module with handle `m`.
pub fn lookup(m: CUmodule) -> CuResult<Arc<Module>> {
    lock(&MODULES)
        .iter()
        .find(|x| std::ptr::eq(Arc::as_ptr(x).cast(), m))
        .cloned()
        .ok_or(CUresult::ErrorInvalidHandle)
}

/// The module and index of function (or kernel) handle `f`.
pub fn function(f: CUfunction) -> CuResult<(Arc<Module>, usize)> {
    if f.is_null() {
        return Err(CUresult::ErrorInvalidHandle);
    }
    for m in lock(&MODULES).iter() {
        if let Some(i) = m
            .functions
            .iter()
            .position(|x| std::ptr::eq((&**x as *const Function).cast(), f))
        {
            return Ok((m.clone(), i));
        }
    }
    Err(CUresult::ErrorInvalidHandle)
}

/// The JIT options of `cuModuleLoadDataEx`/`cuLibraryLoadData`: where to put the error log
/// and the optimization level.
pub struct JitOptions {
    n: usize,
    keys: *const c_int,
    values: *mut *mut c_void,
}

impl JitOptions {
    pub fn none() -> JitOptions {
        JitOptions {
            n: 0,
            keys: std::ptr::null(),
            values: std::ptr::null_mut(),
        }
    }

    pub fn new(n: c_uint, keys: *const c_int, values: *mut *mut c_void) -> JitOptions {
        if keys.is_null() || values.is_null() {
            return JitOptions::none();
        }
        JitOptions {
            n: n as usize,
            keys,
            values,
        }
    }

    /// The options as (key, slot index).
    fn each(&self) -> impl Iterator<Item = (Option<JitOption>, usize)> + '_ {
        // SAFETY: `keys` has `n` entries by the caller's contract (checked non-null).
        (0..self.n).map(|i| (JitOption::from_raw(unsafe { *self.keys.add(i) }), i))
    }

    fn value(&self, i: usize) -> usize {
        // SAFETY: `values` has `n` entries by contract.
        unsafe { *self.values.add(i) as usize }
    }

    /// The optimization level asked for (`CU_JIT_OPTIMIZATION_LEVEL`, 0–4), as ptx2llvm's
    /// 0–3; the default is `PTX2LLVM_CUDA_OPT` or 2.
    fn opt_level(&self) -> u8 {
        let asked = self
            .each()
            .find(|(k, _)| *k == Some(JitOption::OptimizationLevel))
            .map(|(_, i)| self.value(i).min(3) as u8);
        asked.unwrap_or_else(|| {
            std::env::var("PTX2LLVM_CUDA_OPT")
                .ok()
                .and_then(|v| v.parse::<u8>().ok())
                .map_or(2, |v| v.min(3))
        })
    }

    /// `CU_JIT_MAX_REGISTERS`: the register count ptxas would have been held to.
    pub fn max_registers(&self) -> Option<u32> {
        self.each()
            .find(|(k, _)| *k == Some(JitOption::MaxRegisters))
            .map(|(_, i)| self.value(i) as u32)
            .filter(|&n| n > 0)
    }

    /// Writes `msg` into the error (or info) log buffer and its size into the size slot.
    fn log(&self, msg: &str, buffer: JitOption, size: JitOption) {
        let buf = self
            .each()
            .find(|(k, _)| *k == Some(buffer))
            .map(|(_, i)| i);
        let len = self.each().find(|(k, _)| *k == Some(size)).map(|(_, i)| i);
        let (Some(b), Some(l)) = (buf, len) else {
            return;
        };
        let (ptr, cap) = (self.value(b) as *mut u8, self.value(l));
        if ptr.is_null() || cap == 0 {
            return;
        }
        let n = msg.len().min(cap - 1);
        // SAFETY: the caller gave a buffer of `cap` bytes and the slots of `values`.
        unsafe {
            std::ptr::copy_nonoverlapping(msg.as_ptr(), ptr, n);
            *ptr.add(n) = 0;
            *self.values.add(l) = (n + 1) as *mut c_void;
        }
    }

    pub fn error(&self, msg: &str) {
        self.log(
            msg,
            JitOption::ErrorLogBuffer,
            JitOption::ErrorLogBufferSizeBytes,
        );
    }

    pub fn info(&self, msg: &str) {
        self.log(
            msg,
            JitOption::InfoLogBuffer,
            JitOption::InfoLogBufferSizeBytes,
        );
    }
}

/// The first bytes of the image kinds.
const ELF_MAGIC: [u8; 4] = *b"\x7fELF";
const FATBIN_WRAPPER_MAGIC: u32 = 0x466243b1;
const FATBIN_MAGIC: u32 = 0xba55ed50;

/// What an image holds.
pub enum Image {
    Ptx(String),
    /// No PTX: why.
    NoPtx(&'static str),
}

/// Reads a PTX text, fatbin (or its wrapper) or cubin at `image`.
///
/// # Safety
/// `image` must point to one of those, a PTX text NUL-terminated.
pub unsafe fn read_image(image: *const c_void) -> Image {
    let p = image as *const u8;
    // SAFETY: every image kind is at least 4 bytes long (a PTX text that is shorter ends at
    // its NUL, which the comparison with the magic numbers stops at first).
    let head = unsafe { [*p, *p.add(1), *p.add(2), *p.add(3)] };
    let word = u32::from_le_bytes(head);
    if head == ELF_MAGIC {
        return Image::NoPtx("a cubin (GPU machine code)");
    }
    if word == FATBIN_WRAPPER_MAGIC {
        // struct { int magic; int version; const unsigned long long *data; void *filename; }
        // SAFETY: the wrapper's layout; `data` points to the fatbin.
        let data = unsafe { *(p.add(8) as *const *const u8) };
        // SAFETY: as above.
        return unsafe { read_fatbin(data) };
    }
    if word == FATBIN_MAGIC {
        // SAFETY: a fatbin by its magic number.
        return unsafe { read_fatbin(p) };
    }
    // SAFETY: a NUL-terminated text by contract.
    Image::Ptx(
        unsafe { CStr::from_ptr(image as *const c_char) }
            .to_string_lossy()
            .into_owned(),
    )
}

/// The PTX of a fatbin: its first PTX entry, decompressed when zstd-compressed (what CUDA 13's
/// `fatbinary` writes by default). Layout (measured on `fatbinary` output): a 16-byte header
/// (magic, version, header size, size of the entries), then entries, each a header — kind at 0
/// (1 = PTX, 2 = ELF), header size at 4, padded payload size at 8, compressed size at 16,
/// `sm_NN` at 32, flags at 40 (0x8000: zstd, 0x2000: LZ4), uncompressed size at 56 — followed
/// by its payload.
///
/// # Safety
/// `p` must point to a fatbin.
unsafe fn read_fatbin(p: *const u8) -> Image {
    const ZSTD: u64 = 0x8000;
    const LZ4: u64 = 0x2000;
    let mut lz4 = false;
    // SAFETY: (reads below) inside the fatbin, whose header gives its size.
    unsafe {
        let rd16 = |o: usize| (p.add(o) as *const u16).read_unaligned();
        let rd32 = |o: usize| (p.add(o) as *const u32).read_unaligned();
        let rd64 = |o: usize| (p.add(o) as *const u64).read_unaligned();
        let header = rd16(6) as usize;
        let end = header + rd64(8) as usize;
        let mut at = header;
        while at + 64 <= end {
            let kind = rd16(at);
            let eh = rd32(at + 4) as usize;
            let padded = rd32(at + 8) as usize;
            let compressed = rd32(at + 16) as usize;
            let flags = rd64(at + 40);
            let full = rd64(at + 56) as usize;
            let payload = p.add(at + eh);
            if kind == 1 {
                if flags & ZSTD != 0 {
                    let mut out = vec![0u8; full];
                    let n = ZSTD_decompress(out.as_mut_ptr(), full, payload, compressed);
                    if ZSTD_isError(n) == 0 {
                        out.truncate(n);
                        return Image::Ptx(ptx_text(&out));
                    }
                } else if flags & LZ4 != 0 {
                    lz4 = true;
                } else {
                    return Image::Ptx(ptx_text(std::slice::from_raw_parts(payload, padded)));
                }
            }
            if eh == 0 {
                break;
            }
            at += eh + padded;
        }
    }
    Image::NoPtx(if lz4 {
        "a fatbin whose PTX is LZ4-compressed (older toolkits; build it with `-Xfatbin -compress=false`)"
    } else {
        "a fatbin without PTX (GPU machine code only; build it with PTX, e.g. \
         `-gencode arch=compute_80,code=compute_80`)"
    })
}

/// The text of a PTX payload (up to its first NUL).
fn ptx_text(bytes: &[u8]) -> String {
    let text = bytes.split(|&b| b == 0).next().unwrap_or(&[]);
    String::from_utf8_lossy(text).into_owned()
}

// libzstd (Debian's libzstd, which LLVM also links): fatbin payloads are zstd frames.
#[link(name = "zstd")]
extern "C" {
    fn ZSTD_decompress(dst: *mut u8, cap: usize, src: *const u8, size: usize) -> usize;
    fn ZSTD_isError(code: usize) -> c_uint;
}

/// Compiles `src` into a new module of the current context.
pub fn compile(src: &str, opts: &JitOptions) -> CuResult<Arc<Module>> {
    let ctx = context::active()?;
    let start = std::time::Instant::now();
    let m = ptx2llvm::api::Module::from_ptx(src, opts.opt_level()).map_err(|e| {
        let msg = e.to_string();
        opts.error(&msg);
        loader::log(&format!("cannot load the PTX module:\n{msg}"));
        CUresult::ErrorInvalidPtx
    })?;
    if crate::trace_level() >= crate::Trace::Loads {
        loader::log(&format!(
            "module load: {:.1} ms, {} bytes of PTX, {}",
            start.elapsed().as_secs_f64() * 1e3,
            src.len(),
            if m.from_cache() {
                "from the kernel cache"
            } else {
                "compiled"
            }
        ));
    }
    opts.info("compiled by ptx2llvm for the host CPU");
    // The module compiled, so it parses and checks.
    let mut attrs = ptx2llvm::attrs::kernel_attributes_of_ptx(src).unwrap_or_default();
    // A register limit (`CU_JIT_MAX_REGISTERS`, given here or to the linker that made the
    // image) caps the reported count, as ptxas's register allocation would.
    if let Some(n) = opts.max_registers().or_else(|| image_max_registers(src)) {
        for a in &mut attrs {
            a.registers = a.registers.min(n.max(2));
        }
    }
    let functions = m
        .program()
        .kernels()
        .iter()
        .map(|k| {
            let attrs = attrs
                .iter()
                .find(|a| a.name == k.name)
                .cloned()
                .unwrap_or_else(|| default_attributes(&k.name));
            let shared = attrs
                .static_shared_bytes
                .min(device::SHARED_PER_BLOCK as u64) as u32;
            Box::new(Function {
                name: CString::new(k.name.as_str()).unwrap_or_default(),
                params: k.params.clone(),
                max_dynamic_shared: AtomicI32::new((device::SHARED_PER_BLOCK - shared) as i32),
                carveout: AtomicI32::new(-1),
                attrs,
            })
        })
        .collect();
    let mut globals = Vec::new();
    for name in m.program().global_names() {
        if let Some((addr, size)) = m.global_ptr(name) {
            memory::register_global(addr as u64, size, &ctx);
            globals.push((CString::new(name).unwrap_or_default(), addr as u64, size));
        }
    }
    let module = Arc::new(Module {
        module: m,
        ctx,
        functions,
        globals,
    });
    lock(&MODULES).push(module.clone());
    Ok(module)
}

/// The comment `cuLinkComplete` appends to an image linked with `CU_JIT_MAX_REGISTERS`, so that
/// the limit reaches the module the image is loaded as.
pub const MAX_REGISTERS_NOTE: &str = "// ptx2llvm-jit: max-registers ";

/// The register limit an image carries (see `MAX_REGISTERS_NOTE`).
fn image_max_registers(src: &str) -> Option<u32> {
    src.lines()
        .rev()
        .take(4)
        .find_map(|l| l.strip_prefix(MAX_REGISTERS_NOTE))
        .and_then(|n| n.trim().parse().ok())
}

/// `cuModuleLoadData(Ex)`, `cuModuleLoadFatBinary`, `cuLibraryLoadData`.
///
/// # Safety
/// `image` an image (see `read_image`); `m` null or writable.
pub unsafe fn load_data(m: *mut CUmodule, image: *const c_void, opts: JitOptions) -> CuResult {
    crate::non_null(m)?;
    crate::non_null(image)?;
    context::active()?;
    // SAFETY: by contract.
    let src = match unsafe { read_image(image) } {
        Image::Ptx(s) => s,
        Image::NoPtx(what) => {
            let msg = format!(
                "the image is {what}: ptx2llvm runs kernels from PTX only (CUDA_ERROR_NO_BINARY_FOR_GPU)"
            );
            opts.error(&msg);
            loader::log(&msg);
            return Err(CUresult::ErrorNoBinaryForGpu);
        }
    };
    let module = compile(&src, &opts)?;
    // SAFETY: checked non-null.
    unsafe { out(m, Arc::as_ptr(&module) as CUmodule) }
}

/// `cuModuleLoad`, `cuLibraryLoadFromFile`: a file of PTX (or fatbin, cubin).
///
/// # Safety
/// `path` a C string; `m` null or writable.
pub unsafe fn load_file(m: *mut CUmodule, path: *const c_char) -> CuResult {
    crate::non_null(m)?;
    crate::non_null(path)?;
    // SAFETY: a C string by contract.
    let path = unsafe { CStr::from_ptr(path) }
        .to_string_lossy()
        .into_owned();
    let mut bytes = std::fs::read(&path).map_err(|e| {
        loader::log(&format!("cannot read module file {path}: {e}"));
        CUresult::ErrorFileNotFound
    })?;
    bytes.push(0);
    // SAFETY: a NUL-terminated copy of the file.
    unsafe { load_data(m, bytes.as_ptr() as *const c_void, JitOptions::none()) }
}

/// `cuModuleUnload`, `cuLibraryUnload`: the module goes when its last launch ends.
pub fn unload(m: CUmodule) -> CuResult {
    let module = lookup(m)?;
    lock(&MODULES).retain(|x| !Arc::ptr_eq(x, &module));
    Ok(())
}

/// `cuModuleGetFunction`, `cuLibraryGetKernel`.
///
/// # Safety
/// `name` a C string; `f` null or writable.
pub unsafe fn get_function(f: *mut CUfunction, m: CUmodule, name: *const c_char) -> CuResult {
    crate::non_null(f)?;
    crate::non_null(name)?;
    let module = lookup(m)?;
    // SAFETY: a C string by contract.
    let name = unsafe { CStr::from_ptr(name) };
    let func = module
        .functions
        .iter()
        .find(|x| x.name.as_c_str() == name)
        .ok_or(CUresult::ErrorNotFound)?;
    // SAFETY: checked non-null.
    unsafe { out(f, &**func as *const Function as CUfunction) }
}

/// `cuModuleGetFunctionCount`, `cuLibraryGetKernelCount`.
///
/// # Safety
/// `n` null or writable.
pub unsafe fn function_count(n: *mut c_uint, m: CUmodule) -> CuResult {
    let module = lookup(m)?;
    // SAFETY: `out` checks null.
    unsafe { out(n, module.functions.len() as c_uint) }
}

/// `cuModuleGetGlobal_v2`, `cuLibraryGetGlobal`.
///
/// # Safety
/// `name` a C string; `p`, `size` null or writable.
pub unsafe fn get_global(
    p: *mut CUdeviceptr,
    size: *mut usize,
    m: CUmodule,
    name: *const c_char,
) -> CuResult {
    crate::non_null(name)?;
    let module = lookup(m)?;
    // SAFETY: a C string by contract.
    let name = unsafe { CStr::from_ptr(name) };
    let (_, a, n) = module
        .globals
        .iter()
        .find(|(g, _, _)| g.as_c_str() == name)
        .ok_or(CUresult::ErrorNotFound)?;
    // SAFETY: null or writable by contract.
    unsafe {
        if !p.is_null() {
            *p = *a;
        }
        if !size.is_null() {
            *size = *n;
        }
    }
    Ok(())
}

/// `cuLibraryGetModule`: the library is the module.
///
/// # Safety
/// `m` null or writable.
pub unsafe fn library_module(m: *mut CUmodule, l: CUlibrary) -> CuResult {
    let module = lookup(l)?;
    // SAFETY: `out` checks null.
    unsafe { out(m, Arc::as_ptr(&module) as CUmodule) }
}

/// `cuKernelGetFunction`: the kernel is the function.
///
/// # Safety
/// `f` null or writable.
pub unsafe fn kernel_function(f: *mut CUfunction, k: CUkernel) -> CuResult {
    function(k)?;
    // SAFETY: `out` checks null.
    unsafe { out(f, k) }
}

/// `Err(CUDA_ERROR_INVALID_HANDLE)` unless `f` is a function.
pub fn check_function(f: CUfunction) -> CuResult {
    function(f).map(|_| ())
}

/// `cuFuncGetName`, `cuKernelGetName`.
///
/// # Safety
/// `name` null or writable.
pub unsafe fn get_name(name: *mut *const c_char, f: CUfunction) -> CuResult {
    let (m, i) = function(f)?;
    // SAFETY: `out` checks null; the name lives as long as the module.
    unsafe { out(name, m.functions[i].name.as_ptr()) }
}

/// `cuFuncGetModule`, `cuKernelGetLibrary`.
///
/// # Safety
/// `m` null or writable.
pub unsafe fn get_module(m: *mut CUmodule, f: CUfunction) -> CuResult {
    let (module, _) = function(f)?;
    // SAFETY: `out` checks null.
    unsafe { out(m, Arc::as_ptr(&module) as CUmodule) }
}

/// `cuFuncGetParamInfo`, `cuKernelGetParamInfo`.
///
/// # Safety
/// Pointers null or writable.
pub unsafe fn param_info(f: CUfunction, i: usize, off: *mut usize, size: *mut usize) -> CuResult {
    let (m, k) = function(f)?;
    let p = m.functions[k]
        .params
        .params
        .get(i)
        .ok_or(CUresult::ErrorInvalidValue)?;
    // SAFETY: null or writable by contract.
    unsafe {
        if !off.is_null() {
            *off = p.offset as usize;
        }
        if !size.is_null() {
            *size = p.size as usize;
        }
    }
    Ok(())
}

/// `cuFuncGetParamCount`.
///
/// # Safety
/// `n` null or writable.
pub unsafe fn param_count(f: CUfunction, n: *mut usize) -> CuResult {
    let (m, k) = function(f)?;
    // SAFETY: `out` checks null.
    unsafe { out(n, m.functions[k].params.params.len()) }
}

/// The attributes of a kernel the attribute pass did not describe (it describes every
/// `.entry` with a body, which is every kernel a program has).
fn default_attributes(name: &str) -> KernelAttributes {
    KernelAttributes {
        name: name.to_string(),
        param_bytes: 0,
        static_shared_bytes: 0,
        const_bytes: 0,
        local_bytes: 0,
        max_threads_per_block: device::MAX_THREADS_PER_BLOCK,
        reqntid: None,
        maxntid: None,
        min_ctas_per_sm: None,
        max_regs: None,
        registers: 32,
        ptx_version: 80,
        target_sm: 80,
    }
}

/// What `cuFuncGetAttribute` reports for function `k` of `m`: the computed attributes
/// (`ptx2llvm::attrs`), the settable ones, and the binary version of the device it was
/// compiled for.
pub fn attribute_value(m: &Module, k: usize, a: FuncAttr) -> c_int {
    let f = &m.functions[k];
    let clamp = |v: u64| v.min(i32::MAX as u64) as c_int;
    match a {
        FuncAttr::MaxThreadsPerBlock => f.attrs.max_threads_per_block as c_int,
        FuncAttr::SharedSizeBytes => clamp(f.attrs.static_shared_bytes),
        FuncAttr::ConstSizeBytes => clamp(f.attrs.const_bytes),
        FuncAttr::LocalSizeBytes => clamp(f.attrs.local_bytes),
        FuncAttr::NumRegs => f.attrs.registers as c_int,
        // The virtual architecture the function was compiled for (`.target sm_80` → 80), not
        // the PTX ISA version: what NVIDIA's driver 580 answers (80 for a `.version 7.0`
        // module targeting sm_80, measured on an H200; docs/GPU_DIFF.md).
        FuncAttr::PtxVersion => match f.attrs.target_sm {
            0 => device::CC.0 * 10 + device::CC.1,
            sm => sm as c_int,
        },
        FuncAttr::BinaryVersion => device::CC.0 * 10 + device::CC.1,
        FuncAttr::CacheModeCa => 0,
        FuncAttr::MaxDynamicSharedSizeBytes => f.max_dynamic_shared.load(Ordering::Relaxed),
        FuncAttr::PreferredSharedMemoryCarveout => f.carveout.load(Ordering::Relaxed),
        _ => 0,
    }
}

/// `cuFuncGetAttribute`, `cuKernelGetAttribute`.
///
/// # Safety
/// `v` null or writable.
pub unsafe fn get_attribute(v: *mut c_int, a: c_int, f: CUfunction) -> CuResult {
    crate::non_null(v)?;
    let a = FuncAttr::from_raw(a).ok_or(CUresult::ErrorInvalidValue)?;
    let (m, k) = function(f)?;
    // SAFETY: checked non-null.
    unsafe { out(v, attribute_value(&m, k, a)) }
}

/// `cuFuncSetAttribute`, `cuKernelSetAttribute`: the dynamic shared memory limit (up to the
/// device's opt-in limit less the static part) and the carveout preference (-1–100).
pub fn set_attribute(f: CUfunction, a: c_int, v: c_int) -> CuResult {
    let a = FuncAttr::from_raw(a).ok_or(CUresult::ErrorInvalidValue)?;
    let (m, k) = function(f)?;
    let func = &m.functions[k];
    match a {
        FuncAttr::MaxDynamicSharedSizeBytes => {
            let most =
                device::SHARED_PER_BLOCK_OPTIN as i64 - func.attrs.static_shared_bytes as i64;
            if v < 0 || v as i64 > most {
                return Err(CUresult::ErrorInvalidValue);
            }
            func.max_dynamic_shared.store(v, Ordering::Relaxed);
        }
        FuncAttr::PreferredSharedMemoryCarveout => {
            if !(-1..=100).contains(&v) {
                return Err(CUresult::ErrorInvalidValue);
            }
            func.carveout.store(v, Ordering::Relaxed);
        }
        // Clusters are not run; the rest are read-only.
        _ => return Err(CUresult::ErrorInvalidValue),
    }
    Ok(())
}

/// `cuFuncSetCacheConfig`, `cuKernelSetCacheConfig`: a preference (`CUfunc_cache` 0–3) with no
/// effect on the host.
pub fn set_cache_config(f: CUfunction, c: c_int) -> CuResult {
    check_function(f)?;
    if !(0..=3).contains(&c) {
        return Err(CUresult::ErrorInvalidValue);
    }
    Ok(())
}

/// A `CUsharedconfig` value (0–2): bank sizes are fixed here, as on compute capability 8.0.
pub fn shared_mem_config(c: c_int) -> CuResult {
    if (0..=2).contains(&c) {
        Ok(())
    } else {
        Err(CUresult::ErrorInvalidValue)
    }
}

/// `cuFuncSetSharedMemConfig`.
pub fn set_shared_mem_config(f: CUfunction, c: c_int) -> CuResult {
    check_function(f)?;
    shared_mem_config(c)
}
