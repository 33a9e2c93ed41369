//! The C API (`include/ptx2llvm.h`): `#[no_mangle] extern "C"` functions over the Rust
//! embedding API (`crate::api`) — modules compiled from PTX text, device buffers, launches with
//! tagged arguments — plus `ptx2llvm_rt_launch`, the launcher for kernels of objects made with
//! `ptx2llvm --target cpu --emit obj` (`include/ptx2llvm_rt.h`).
//!
//! Every entry point runs its body under `catch_unwind`: a panic never unwinds into C, it
//! becomes an error message ("internal error: …"). Error strings are `CString`s handed to the
//! caller, who frees them with `ptx2llvm_string_free`.

use std::ffi::{c_char, c_int, c_void, CStr, CString};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Mutex;

use crate::api::{self, Arg, Buffer, Dim3};
use crate::runtime::{KernelEntry, LaunchConfig, DEFAULT_STACK_SIZE};

/// `ptx2llvm_dim3`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct CDim3 {
    pub x: u32,
    pub y: u32,
    pub z: u32,
}

impl CDim3 {
    fn dim(self) -> Dim3 {
        Dim3([self.x, self.y, self.z])
    }
}

/// `ptx2llvm_options`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct COptions {
    pub struct_size: u32,
    pub opt_level: u32,
    pub workers: u32,
    /// 1: full debug information (`-g`); 0: line tables when the PTX has `.loc`.
    pub debug_info: u32,
    pub stack_size: usize,
    /// The block shape to compile the kernels for (all zero: any).
    pub block: CDim3,
    pub reserved2: u32,
}

impl Default for COptions {
    fn default() -> Self {
        COptions {
            struct_size: std::mem::size_of::<COptions>() as u32,
            opt_level: 2,
            workers: 0,
            debug_info: 0,
            stack_size: 0,
            block: CDim3 { x: 0, y: 0, z: 0 },
            reserved2: 0,
        }
    }
}

/// `ptx2llvm_module`: a compiled module, its kernel names as C strings, and the launch
/// settings. Launches of one module are serialized.
pub struct CModule {
    module: api::Module,
    names: Vec<CString>,
    opts: COptions,
    lock: Mutex<()>,
}

// SAFETY: the JIT engine inside `module` is only used under `lock` (launches) or read-only
// (kernel table, addresses computed at load); the compiled code is reentrant.
unsafe impl Send for CModule {}
// SAFETY: as above.
unsafe impl Sync for CModule {}

/// `ptx2llvm_buffer`.
pub struct CBuffer(Buffer);

/// `ptx2llvm_arg_kind`.
pub mod kind {
    pub const U8: u32 = 1;
    pub const U16: u32 = 2;
    pub const U32: u32 = 3;
    pub const U64: u32 = 4;
    pub const S8: u32 = 5;
    pub const S16: u32 = 6;
    pub const S32: u32 = 7;
    pub const S64: u32 = 8;
    pub const F16: u32 = 9;
    pub const F32: u32 = 10;
    pub const F64: u32 = 11;
    pub const BUFFER: u32 = 12;
    pub const POINTER: u32 = 13;
    pub const BYTES: u32 = 14;
}

/// The `bytes` member of `ptx2llvm_arg`'s union.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct CBytes {
    pub data: *const c_void,
    pub size: usize,
}

/// The value union of `ptx2llvm_arg`.
#[repr(C)]
#[derive(Clone, Copy)]
pub union CArgValue {
    pub u8: u8,
    pub u16: u16,
    pub u32: u32,
    pub u64: u64,
    pub f32: f32,
    pub f64: f64,
    pub buffer: *mut CBuffer,
    pub pointer: *const c_void,
    pub bytes: CBytes,
}

/// `ptx2llvm_arg`.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct CArg {
    pub kind: u32,
    pub value: CArgValue,
}

/// Runs `f`, turning a panic into an error message.
fn guard<T>(f: impl FnOnce() -> Result<T, String>) -> Result<T, String> {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(r) => r,
        Err(p) => {
            let what = p
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| p.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "a panic without a message".to_string());
            Err(format!("internal error: {what}"))
        }
    }
}

fn c_string(s: &str) -> *mut c_char {
    CString::new(s.replace('\0', "\\0"))
        .map(CString::into_raw)
        .unwrap_or(std::ptr::null_mut())
}

/// Stores `e` into `*err` (when `err` is not null) and returns `fail`; on success clears
/// `*err` and returns the value.
unsafe fn finish<T>(r: Result<T, String>, err: *mut *mut c_char, fail: T) -> T {
    match r {
        Ok(v) => {
            if !err.is_null() {
                *err = std::ptr::null_mut();
            }
            v
        }
        Err(e) => {
            if !err.is_null() {
                *err = c_string(&e);
            }
            fail
        }
    }
}

unsafe fn str_arg<'x>(p: *const c_char, what: &str) -> Result<&'x str, String> {
    if p.is_null() {
        return Err(format!("{what} is NULL"));
    }
    CStr::from_ptr(p)
        .to_str()
        .map_err(|_| format!("{what} is not valid UTF-8"))
}

/// The library version (static storage).
#[no_mangle]
pub extern "C" fn ptx2llvm_version() -> *const c_char {
    concat!(env!("CARGO_PKG_VERSION"), "\0").as_ptr() as *const c_char
}

/// Frees a string the library returned.
///
/// # Safety
/// `s` must be null or a string from this library, not freed before.
#[no_mangle]
pub unsafe extern "C" fn ptx2llvm_string_free(s: *mut c_char) {
    if !s.is_null() {
        let _ = catch_unwind(|| drop(CString::from_raw(s)));
    }
}

/// Sets `*opts` to the defaults.
///
/// # Safety
/// `opts` must be null or point to a writable `ptx2llvm_options`.
#[no_mangle]
pub unsafe extern "C" fn ptx2llvm_options_init(opts: *mut COptions) {
    if !opts.is_null() {
        *opts = COptions::default();
    }
}

/// Compiles PTX text at -O2.
///
/// # Safety
/// `src` must point to `len` readable bytes; `err` null or writable.
#[no_mangle]
pub unsafe extern "C" fn ptx2llvm_module_from_ptx(
    src: *const c_char,
    len: usize,
    err: *mut *mut c_char,
) -> *mut CModule {
    ptx2llvm_module_from_ptx_opts(src, len, std::ptr::null(), err)
}

/// Compiles PTX text with options (null: defaults).
///
/// # Safety
/// `src` must point to `len` readable bytes; `opts` null or a `ptx2llvm_options` whose
/// `struct_size` is set; `err` null or writable.
#[no_mangle]
pub unsafe extern "C" fn ptx2llvm_module_from_ptx_opts(
    src: *const c_char,
    len: usize,
    opts: *const COptions,
    err: *mut *mut c_char,
) -> *mut CModule {
    let r = guard(|| {
        if src.is_null() {
            return Err("the PTX source is NULL".into());
        }
        let o = if opts.is_null() {
            COptions::default()
        } else {
            let o = *opts;
            if (o.struct_size as usize) < std::mem::size_of::<COptions>() {
                return Err(format!(
                    "ptx2llvm_options.struct_size is {}; initialize the options with \
                     ptx2llvm_options_init (size {})",
                    o.struct_size,
                    std::mem::size_of::<COptions>()
                ));
            }
            if o.opt_level > 3 {
                return Err(format!(
                    "ptx2llvm_options.opt_level is {}; expected 0 to 3",
                    o.opt_level
                ));
            }
            if o.debug_info > 1 {
                return Err(format!(
                    "ptx2llvm_options.debug_info is {}; expected 0 or 1",
                    o.debug_info
                ));
            }
            o
        };
        let bytes = std::slice::from_raw_parts(src as *const u8, len);
        let text = std::str::from_utf8(bytes).map_err(|e| {
            let at = e.valid_up_to();
            let prefix = std::str::from_utf8(&bytes[..at]).unwrap_or_default();
            let (line, col) = crate::syntax::span::line_col(prefix, at as u32);
            format!(
                "<ptx>:{line}:{col}: error: the PTX source is not valid UTF-8: byte 0x{:02x} at byte \
                 offset {at}",
                bytes[at]
            )
        })?;
        let b = o.block;
        let block = match (b.x, b.y, b.z) {
            (0, 0, 0) => None,
            (x, y, z) if x > 0 && y > 0 && z > 0 => Some(api::Dim3([x, y, z])),
            _ => {
                return Err(format!(
                    "ptx2llvm_options.block is ({}, {}, {}); expected all zero (any block) or \
                     all positive",
                    b.x, b.y, b.z
                ))
            }
        };
        let mode = crate::target::cpu::fission::CpuMode::from_env();
        let debug = crate::lower::debug::DebugOptions::new(o.debug_info == 1, "<ptx>", text);
        let module = api::Module::from_ptx_debug(text, o.opt_level as u8, mode, block, &debug)
            .map_err(|e| e.to_string())?;
        let names = module
            .kernel_names()
            .iter()
            .map(|n| CString::new(n.as_str()).unwrap_or_default())
            .collect();
        Ok(Box::into_raw(Box::new(CModule {
            module,
            names,
            opts: o,
            lock: Mutex::new(()),
        })))
    });
    finish(r, err, std::ptr::null_mut())
}

/// Frees a module.
///
/// # Safety
/// `m` must be null or a module from `ptx2llvm_module_from_ptx*`, not freed before, with no
/// launch running.
#[no_mangle]
pub unsafe extern "C" fn ptx2llvm_module_free(m: *mut CModule) {
    if !m.is_null() {
        let _ = catch_unwind(AssertUnwindSafe(|| drop(Box::from_raw(m))));
    }
}

/// Number of kernels.
///
/// # Safety
/// `m` must be null or a live module.
#[no_mangle]
pub unsafe extern "C" fn ptx2llvm_module_kernel_count(m: *const CModule) -> usize {
    m.as_ref().map_or(0, |m| m.names.len())
}

/// Name of kernel `index` (owned by the module), or null.
///
/// # Safety
/// `m` must be null or a live module.
#[no_mangle]
pub unsafe extern "C" fn ptx2llvm_module_kernel_name(
    m: *const CModule,
    index: usize,
) -> *const c_char {
    m.as_ref()
        .and_then(|m| m.names.get(index))
        .map_or(std::ptr::null(), |n| n.as_ptr())
}

/// Parameter count and parameter-buffer size of a kernel.
///
/// # Safety
/// `m` a live module, `kernel` a C string; the out pointers null or writable.
#[no_mangle]
pub unsafe extern "C" fn ptx2llvm_module_kernel_params(
    m: *const CModule,
    kernel: *const c_char,
    count: *mut usize,
    buffer_bytes: *mut usize,
    err: *mut *mut c_char,
) -> c_int {
    let r = guard(|| {
        let m = m.as_ref().ok_or("the module is NULL")?;
        let name = str_arg(kernel, "the kernel name")?;
        let info = m
            .module
            .program()
            .kernel(name)
            .ok_or_else(|| no_kernel(m, name))?;
        if !count.is_null() {
            *count = info.params.params.len();
        }
        if !buffer_bytes.is_null() {
            *buffer_bytes = info.params.size as usize;
        }
        Ok(0)
    });
    finish(r, err, -1)
}

/// Static shared bytes per CTA.
///
/// # Safety
/// `m` must be null or a live module.
#[no_mangle]
pub unsafe extern "C" fn ptx2llvm_module_static_shared_bytes(m: *const CModule) -> u32 {
    m.as_ref().map_or(0, |m| m.module.program().static_shared())
}

/// Address and size of a module variable (`cuModuleGetGlobal`).
///
/// # Safety
/// `m` a live module, `name` a C string; the out pointers null or writable.
#[no_mangle]
pub unsafe extern "C" fn ptx2llvm_module_global(
    m: *const CModule,
    name: *const c_char,
    ptr: *mut *mut c_void,
    size: *mut usize,
    err: *mut *mut c_char,
) -> c_int {
    let r = guard(|| {
        let m = m.as_ref().ok_or("the module is NULL")?;
        let name = str_arg(name, "the variable name")?;
        match m.module.global_ptr(name) {
            Some((p, n)) => {
                if !ptr.is_null() {
                    *ptr = p as *mut c_void;
                }
                if !size.is_null() {
                    *size = n;
                }
                Ok(0)
            }
            None => Err(m.module.read_global(name).err().map_or_else(
                || format!("no module variable named `{name}`"),
                |e| e.to_string(),
            )),
        }
    });
    finish(r, err, -1)
}

fn no_kernel(m: &CModule, name: &str) -> String {
    let names = m.module.kernel_names();
    format!(
        "no kernel named `{name}`; the module's kernels are: {}",
        if names.is_empty() {
            "(none)".to_string()
        } else {
            names.join(", ")
        }
    )
}

/// A zero-filled buffer of `bytes` bytes, or null.
#[no_mangle]
pub extern "C" fn ptx2llvm_buffer_alloc(bytes: usize) -> *mut CBuffer {
    if bytes > isize::MAX as usize / 2 {
        return std::ptr::null_mut();
    }
    catch_unwind(|| match Buffer::try_zeroed(bytes) {
        Ok(b) => Box::into_raw(Box::new(CBuffer(b))),
        Err(_) => std::ptr::null_mut(),
    })
    .unwrap_or(std::ptr::null_mut())
}

/// Frees a buffer.
///
/// # Safety
/// `b` must be null or a buffer from `ptx2llvm_buffer_alloc`, not freed before.
#[no_mangle]
pub unsafe extern "C" fn ptx2llvm_buffer_free(b: *mut CBuffer) {
    if !b.is_null() {
        drop(Box::from_raw(b));
    }
}

/// The buffer's memory.
///
/// # Safety
/// `b` must be null or a live buffer.
#[no_mangle]
pub unsafe extern "C" fn ptx2llvm_buffer_ptr(b: *mut CBuffer) -> *mut c_void {
    b.as_ref()
        .map_or(std::ptr::null_mut(), |b| b.0.address() as *mut c_void)
}

/// The buffer's size in bytes.
///
/// # Safety
/// `b` must be null or a live buffer.
#[no_mangle]
pub unsafe extern "C" fn ptx2llvm_buffer_size(b: *const CBuffer) -> usize {
    b.as_ref().map_or(0, |b| b.0.len())
}

/// Converts C arguments to API arguments.
unsafe fn convert_args(args: *const CArg, nargs: usize) -> Result<Vec<Arg>, String> {
    if nargs == 0 {
        return Ok(Vec::new());
    }
    if args.is_null() {
        return Err(format!("args is NULL but nargs is {nargs}"));
    }
    let mut out = Vec::with_capacity(nargs);
    for (i, a) in std::slice::from_raw_parts(args, nargs).iter().enumerate() {
        let v = a.value;
        out.push(match a.kind {
            kind::U8 | kind::S8 => Arg::Scalar(vec![v.u8]),
            kind::U16 | kind::S16 | kind::F16 => Arg::Scalar(v.u16.to_le_bytes().to_vec()),
            kind::U32 | kind::S32 | kind::F32 => Arg::Scalar(v.u32.to_le_bytes().to_vec()),
            kind::U64 | kind::S64 | kind::F64 => Arg::Scalar(v.u64.to_le_bytes().to_vec()),
            kind::BUFFER => {
                let b = v.buffer.as_ref().ok_or_else(|| {
                    format!("argument {i} is a BUFFER argument with a NULL buffer")
                })?;
                Arg::Pointer(b.0.address())
            }
            kind::POINTER => Arg::Pointer(v.pointer as u64),
            kind::BYTES => {
                let CBytes { data, size } = v.bytes;
                if data.is_null() && size != 0 {
                    return Err(format!("argument {i} is a BYTES argument with NULL data"));
                }
                let bytes = if size == 0 {
                    Vec::new()
                } else {
                    std::slice::from_raw_parts(data as *const u8, size).to_vec()
                };
                Arg::Bytes(bytes)
            }
            k => {
                return Err(format!(
                    "argument {i} has kind {k}; expected a ptx2llvm_arg_kind (1 to 14)"
                ))
            }
        });
    }
    Ok(out)
}

/// Launches a kernel and waits for it.
///
/// # Safety
/// `m` a live module, `kernel` a C string, `args` `nargs` valid arguments whose buffers and
/// pointers stay valid during the launch; `err` null or writable.
#[no_mangle]
pub unsafe extern "C" fn ptx2llvm_launch(
    m: *const CModule,
    kernel: *const c_char,
    grid: CDim3,
    block: CDim3,
    shared_bytes: u32,
    args: *const CArg,
    nargs: usize,
    err: *mut *mut c_char,
) -> c_int {
    let r = guard(|| {
        let m = m.as_ref().ok_or("the module is NULL")?;
        let name = str_arg(kernel, "the kernel name")?;
        if m.module.program().kernel(name).is_none() {
            return Err(no_kernel(m, name));
        }
        let mut args = convert_args(args, nargs)?;
        let cfg = LaunchConfig {
            grid: grid.dim().0,
            block: block.dim().0,
            dynamic_shared: shared_bytes,
            static_shared: m.module.program().static_shared(),
            stack_size: if m.opts.stack_size == 0 {
                DEFAULT_STACK_SIZE
            } else {
                m.opts.stack_size
            },
            workers: (m.opts.workers != 0).then_some(m.opts.workers as usize),
            ..LaunchConfig::default()
        };
        let _serial = m.lock.lock().unwrap_or_else(|p| p.into_inner());
        m.module
            .launch_with(name, &cfg, &mut args)
            .map_err(|e| e.to_string())?;
        Ok(0)
    });
    finish(r, err, -1)
}

/// Launches a kernel of an object made with `ptx2llvm --target cpu --emit obj`: `kernel` is
/// its entry point, `params` its CUDA-layout parameter buffer of `params_size` bytes.
/// `static_shared_bytes` is the object's `ptx2llvm_static_shared_bytes`. `name` (nullable)
/// names the kernel in error messages. Returns 0, or -1 with `*err` set.
///
/// # Safety
/// `kernel` must be a cpu-target kernel entry, `params` `params_size` readable bytes holding
/// what it expects (device pointers valid for the launch); `name` null or a C string; `err`
/// null or writable.
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn ptx2llvm_rt_launch(
    kernel: Option<KernelEntry>,
    name: *const c_char,
    grid: CDim3,
    block: CDim3,
    static_shared_bytes: u32,
    dynamic_shared_bytes: u32,
    params: *const c_void,
    params_size: usize,
    err: *mut *mut c_char,
) -> c_int {
    let r = guard(|| {
        let entry = kernel.ok_or("the kernel function pointer is NULL")?;
        let name = if name.is_null() {
            "<kernel>".to_string()
        } else {
            CStr::from_ptr(name).to_string_lossy().into_owned()
        };
        if params.is_null() && params_size != 0 {
            return Err(format!("params is NULL but params_size is {params_size}"));
        }
        let params: &[u8] = if params_size == 0 {
            &[]
        } else {
            std::slice::from_raw_parts(params as *const u8, params_size)
        };
        let cfg = LaunchConfig {
            grid: grid.dim().0,
            block: block.dim().0,
            static_shared: static_shared_bytes,
            dynamic_shared: dynamic_shared_bytes,
            shared_align: crate::runtime::shared::OBJECT_ALIGN,
            ..LaunchConfig::default()
        };
        crate::runtime::fault::install();
        crate::runtime::fault::set_kernel(&name);
        crate::runtime::launch(&name, entry, params, &cfg).map_err(|e| e.to_string())?;
        Ok(0)
    });
    finish(r, err, -1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn panics_become_errors() {
        let r: Result<(), String> = guard(|| panic!("boom {}", 7));
        assert_eq!(r.unwrap_err(), "internal error: boom 7");
        let r: Result<(), String> = guard(|| panic!("static"));
        assert_eq!(r.unwrap_err(), "internal error: static");
    }

    #[test]
    fn non_utf8_source_has_a_position() {
        let src = b".version 8.0\n// caf\xe9\n";
        let mut e: *mut c_char = std::ptr::null_mut();
        // SAFETY: `src` is valid for `src.len()` bytes and `e` a valid out-pointer; the message is freed once with the API's own free.
        unsafe {
            let m = ptx2llvm_module_from_ptx(src.as_ptr() as *const c_char, src.len(), &mut e);
            assert!(m.is_null());
            let msg = CStr::from_ptr(e).to_string_lossy().into_owned();
            ptx2llvm_string_free(e);
            assert_eq!(
                msg,
                "<ptx>:2:7: error: the PTX source is not valid UTF-8: byte 0xe9 at byte offset 19"
            );
        }
    }

    #[test]
    fn errors_are_c_strings() {
        let mut e: *mut c_char = std::ptr::null_mut();
        // SAFETY: the sources are a 7-byte C string and null (which the API reports); `e` is a valid out-pointer, each message freed once with the API's own free.
        unsafe {
            let m = ptx2llvm_module_from_ptx(c"garbage".as_ptr(), 7, &mut e);
            assert!(m.is_null());
            let msg = CStr::from_ptr(e).to_str().unwrap().to_string();
            ptx2llvm_string_free(e);
            assert!(msg.contains("<ptx>:1:1: error"), "{msg}");
            let m = ptx2llvm_module_from_ptx(std::ptr::null(), 0, &mut e);
            assert!(m.is_null());
            assert_eq!(
                CStr::from_ptr(e).to_str().unwrap(),
                "the PTX source is NULL"
            );
            ptx2llvm_string_free(e);
        }
    }

    #[test]
    fn layouts_match_the_header() {
        assert_eq!(std::mem::size_of::<CArg>(), 24);
        assert_eq!(std::mem::size_of::<COptions>(), 40);
        assert_eq!(std::mem::size_of::<CDim3>(), 12);
    }
}
