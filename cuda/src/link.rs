//! The JIT linker (`cuLinkCreate/AddData/AddFile/Complete/Destroy`): collects PTX inputs
//! (text, or the PTX of a fatbin) and links them into one PTX module, the image that
//! `cuLinkComplete` returns and `cuModuleLoadData`/`cuLibraryLoadData` accept. A
//! `libcudadevrt.a` input (GPU machine code) is replaced by `devrt.ptx`, the device-runtime
//! functions cooperative groups call (`cudaCGGetIntrinsicHandle`, `cudaCGSynchronize`, …).

use std::ffi::{c_char, c_int, c_uint, c_void, CStr, CString};
use std::sync::Mutex;

use crate::module::{self, Image, JitOptions};
use crate::types::*;
use crate::{loader, out, CuResult};

/// The device runtime's cooperative-groups functions, linked for a `libcudadevrt.a` input.
const DEVRT_PTX: &str = include_str!("devrt.ptx");
const DEVRT_NAME: &str = "libcudadevrt.a (ptx2llvm's devrt.ptx)";

/// Whether a library input is CUDA's device runtime: by its file name, or (data without a
/// name) by the archive member CUDA ships it as.
fn is_cudadevrt(name: &str, bytes: &[u8]) -> bool {
    let base = name.rsplit('/').next().unwrap_or(name);
    if base.starts_with("libcudadevrt") || base.starts_with("cudadevrt") {
        return true;
    }
    bytes.starts_with(b"!<arch>\n")
        && bytes
            .windows(b"cuda_device_runtime".len())
            .take(4096)
            .any(|w| w == b"cuda_device_runtime")
}

/// A link in progress.
pub struct Link {
    inputs: Vec<(String, String)>,
    /// The linked image once complete (owned until `cuLinkDestroy`).
    image: Option<CString>,
    opts: JitOptions,
}

// SAFETY: the option pointers are the caller's and only used on the calls it makes.
unsafe impl Send for Link {}

// Boxed: a handle is the address of its `Link`, which must not move as the list grows.
#[allow(clippy::vec_box)]
static LINKS: Mutex<Vec<Box<Link>>> = Mutex::new(Vec::new());

fn with<R>(state: CUlinkState, f: impl FnOnce(&mut Link) -> CuResult<R>) -> CuResult<R> {
    let mut links = LINKS.lock().unwrap_or_else(|e| e.into_inner());
    let l = links
        .iter_mut()
        .find(|l| std::ptr::eq((&***l as *const Link).cast(), state))
        .ok_or(CUresult::ErrorInvalidHandle)?;
    f(l)
}

/// `cuLinkCreate_v2`.
///
/// # Safety
/// Options as `cuModuleLoadDataEx` takes them; `state` null or writable.
pub unsafe fn create(
    n: c_uint,
    o: *const c_int,
    v: *mut *mut c_void,
    state: *mut CUlinkState,
) -> CuResult {
    crate::non_null(state)?;
    crate::context::active()?;
    let l = Box::new(Link {
        inputs: Vec::new(),
        image: None,
        opts: JitOptions::new(n, o, v),
    });
    let h = &*l as *const Link as CUlinkState;
    LINKS.lock().unwrap_or_else(|e| e.into_inner()).push(l);
    // SAFETY: checked non-null.
    unsafe { out(state, h) }
}

/// Adds the bytes of one input of `kind`.
fn add(state: CUlinkState, kind: c_int, bytes: &[u8], name: String) -> CuResult {
    let kind = JitInputType::from_raw(kind).ok_or(CUresult::ErrorInvalidValue)?;
    let ptx = match kind {
        JitInputType::InputPtx => {
            let text = bytes.split(|&b| b == 0).next().unwrap_or(&[]);
            String::from_utf8_lossy(text).into_owned()
        }
        JitInputType::InputFatbinary => {
            let mut owned = bytes.to_vec();
            owned.extend_from_slice(&[0; 8]);
            // SAFETY: a fatbin by the caller's word, copied with padding.
            match unsafe { module::read_image(owned.as_ptr() as *const c_void) } {
                Image::Ptx(s) => s,
                Image::NoPtx(what) => {
                    loader::log(&format!("link input {name} is {what}"));
                    return Err(CUresult::ErrorNoBinaryForGpu);
                }
            }
        }
        JitInputType::InputLibrary if is_cudadevrt(&name, bytes) => {
            // Its machine code cannot run here: its functions come from `devrt.ptx`.
            return with(state, |l| {
                if !l.inputs.iter().any(|(n, _)| n == DEVRT_NAME) {
                    l.inputs
                        .push((DEVRT_NAME.to_string(), DEVRT_PTX.to_string()));
                }
                Ok(())
            });
        }
        JitInputType::InputLibrary => {
            // Other archives of device code hold GPU machine code only.
            loader::log(&format!(
                "link input {name}: a library of GPU machine code, skipped"
            ));
            return Ok(());
        }
        _ => {
            loader::log(&format!(
                "link input {name} is GPU machine code or LTO IR: ptx2llvm links PTX only"
            ));
            return Err(CUresult::ErrorNoBinaryForGpu);
        }
    };
    with(state, |l| {
        l.inputs.push((name, ptx));
        Ok(())
    })
}

/// `cuLinkAddData_v2`.
///
/// # Safety
/// `data` holds `size` bytes; `name` null or a C string.
pub unsafe fn add_data(
    state: CUlinkState,
    kind: c_int,
    data: *const c_void,
    size: usize,
    name: *const c_char,
) -> CuResult {
    crate::non_null(data)?;
    let name = if name.is_null() {
        "<data>".to_string()
    } else {
        // SAFETY: a C string by contract.
        unsafe { CStr::from_ptr(name) }
            .to_string_lossy()
            .into_owned()
    };
    // SAFETY: `size` bytes by contract.
    let bytes = unsafe { std::slice::from_raw_parts(data as *const u8, size) };
    add(state, kind, bytes, name)
}

/// `cuLinkAddFile_v2`.
///
/// # Safety
/// `path` a C string.
pub unsafe fn add_file(state: CUlinkState, kind: c_int, path: *const c_char) -> CuResult {
    crate::non_null(path)?;
    // SAFETY: a C string by contract.
    let path = unsafe { CStr::from_ptr(path) }
        .to_string_lossy()
        .into_owned();
    let bytes = std::fs::read(&path).map_err(|e| {
        loader::log(&format!("cannot read link input {path}: {e}"));
        CUresult::ErrorFileNotFound
    })?;
    add(state, kind, &bytes, path)
}

/// Links the inputs into one PTX module (`ptx2llvm::link`; one input is the image as it is).
fn link_all(inputs: &[(String, String)]) -> Result<String, String> {
    match inputs {
        [] => Err("cuLinkComplete: no input was added".to_string()),
        [(_, one)] => Ok(one.clone()),
        _ => {
            let pairs: Vec<(&str, &str)> = inputs
                .iter()
                .map(|(n, t)| (n.as_str(), t.as_str()))
                .collect();
            ptx2llvm::link::link_ptx(&pairs).map_err(|e| e.to_string())
        }
    }
}

/// `cuLinkComplete`: the image (PTX text, NUL-terminated) lives until `cuLinkDestroy`.
///
/// # Safety
/// Pointers null or writable.
pub unsafe fn complete(
    state: CUlinkState,
    image: *mut *const c_void,
    size: *mut usize,
) -> CuResult {
    crate::non_null(image)?;
    let (ptr, len) = with(state, |l| {
        let mut text = link_all(&l.inputs).map_err(|e| {
            l.opts.error(&e);
            loader::log(&format!("cuLinkComplete: {e}"));
            CUresult::ErrorInvalidPtx
        })?;
        if let Some(n) = l.opts.max_registers() {
            text.push_str(&format!("\n{}{n}\n", module::MAX_REGISTERS_NOTE));
        }
        let c = CString::new(text).map_err(|_| CUresult::ErrorInvalidPtx)?;
        let r = (c.as_ptr() as *const c_void, c.as_bytes_with_nul().len());
        l.image = Some(c);
        Ok(r)
    })?;
    // SAFETY: checked non-null; `size` null or writable.
    unsafe {
        *image = ptr;
        if !size.is_null() {
            *size = len;
        }
    }
    Ok(())
}

/// `cuLinkDestroy`.
pub fn destroy(state: CUlinkState) -> CuResult {
    let mut links = LINKS.lock().unwrap_or_else(|e| e.into_inner());
    let before = links.len();
    links.retain(|l| !std::ptr::eq((&**l as *const Link).cast(), state));
    if links.len() == before {
        return Err(CUresult::ErrorInvalidHandle);
    }
    Ok(())
}
