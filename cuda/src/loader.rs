//! Loader entry points (`cuInit`, versions, error names and strings, export tables) and the
//! library's log: kernel faults, compile errors and other failures are written there with the
//! details a `CUresult` cannot carry. `PTX2LLVM_CUDA_LOG` chooses it: unset or `stderr` for
//! standard error, `0`/`off` for none, anything else a file to append to.

use std::ffi::{c_char, c_int, c_uint, c_void};
use std::io::Write;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Mutex;

use crate::types::{CUresult, CUuuid};
use crate::{out, CuResult};

/// What `cuDriverGetVersion` reports: CUDA 13.5, the version of the `cuda.h` the types
/// come from.
pub const DRIVER_VERSION: c_int = 13050;

/// The process that called `cuInit` (0: none yet).
static INIT_PID: AtomicU32 = AtomicU32::new(0);

/// Whether `cuInit` succeeded in this process. A child forked after `cuInit` is not
/// initialized, as with NVIDIA's driver (every call answers `CUDA_ERROR_NOT_INITIALIZED`; numba
/// detects forks by that).
pub fn initialized() -> bool {
    INIT_PID.load(Ordering::Acquire) == std::process::id()
}

/// `cuInit`: `flags` must be 0; refused in a child forked after `cuInit`.
pub fn init(flags: c_uint) -> CuResult {
    if flags != 0 {
        return Err(CUresult::ErrorInvalidValue);
    }
    let pid = std::process::id();
    match INIT_PID.compare_exchange(0, pid, Ordering::AcqRel, Ordering::Acquire) {
        Ok(_) => Ok(()),
        Err(p) if p == pid => Ok(()),
        Err(_) => {
            log("cuInit in a process forked after cuInit: CUDA state does not survive fork");
            Err(CUresult::ErrorNotInitialized)
        }
    }
}

/// `cuGetErrorName`.
///
/// # Safety
/// `s` null or writable.
pub unsafe fn error_name(e: c_int, s: *mut *const c_char) -> CuResult {
    crate::non_null(s)?;
    let r = CUresult::from_raw(e);
    // SAFETY: checked non-null.
    unsafe { *s = r.map_or(std::ptr::null(), |r| r.name().as_ptr() as *const c_char) };
    r.map(|_| ()).ok_or(CUresult::ErrorInvalidValue)
}

/// `cuGetErrorString`.
///
/// # Safety
/// `s` null or writable.
pub unsafe fn error_string(e: c_int, s: *mut *const c_char) -> CuResult {
    crate::non_null(s)?;
    let r = CUresult::from_raw(e);
    // SAFETY: checked non-null.
    unsafe {
        *s = r.map_or(std::ptr::null(), |r| {
            r.description().as_ptr() as *const c_char
        })
    };
    r.map(|_| ()).ok_or(CUresult::ErrorInvalidValue)
}

/// `cuGetExportTable`: the undocumented tables of NVIDIA's driver are not provided.
///
/// # Safety
/// `t` null or writable.
pub unsafe fn export_table(t: *mut *const c_void, id: *const CUuuid) -> CuResult {
    crate::non_null(id)?;
    // SAFETY: `t` null or writable by contract (`out` checks null).
    unsafe { out(t, std::ptr::null()) }?;
    Err(CUresult::ErrorNotSupported)
}

static LOG: Mutex<()> = Mutex::new(());

/// Writes one line to the log (see the module doc).
pub fn log(msg: &str) {
    let dest = std::env::var("PTX2LLVM_CUDA_LOG").unwrap_or_default();
    let _g = LOG.lock();
    let line = format!("libcuda (ptx2llvm): {msg}\n");
    match dest.as_str() {
        "0" | "off" => {}
        "" | "stderr" => {
            let _ = std::io::stderr().write_all(line.as_bytes());
        }
        path => {
            if let Ok(mut f) = std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(path)
            {
                let _ = f.write_all(line.as_bytes());
            }
        }
    }
}
