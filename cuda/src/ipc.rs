//! IPC handles: `cuIpcGetMemHandle`/`cuIpcOpenMemHandle`/`cuIpcCloseMemHandle` and the event
//! pair. Device memory is anonymous host memory private to the process, so exporting an
//! allocation first moves it into a memfd: the allocation's pages are copied into the file and
//! the file is mapped over them at the same address (`MAP_FIXED | MAP_SHARED`), so the
//! exporter's pointer stays valid and from then on every process that maps the file sees the
//! same bytes. The handle names the file as the exporter holds it (`/proc/<pid>/fd/<fd>`, with
//! its inode to detect a reused descriptor); an importer opens that path and maps it, with an
//! inaccessible page after it as every device allocation has. The exporter keeps the
//! descriptor for the allocation's lifetime (a handle outlives neither the allocation nor the
//! exporting process, as on NVIDIA's driver).
//!
//! Events: work runs when it is submitted, so an event is complete once recorded in any
//! process; an opened IPC event is a new event that is always complete.

use std::collections::HashMap;
use std::ffi::{c_uint, c_void, CString};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::sync::Mutex;

use crate::context;
use crate::memory;
use crate::types::*;
use crate::{loader, CuResult};

pub const CU_IPC_HANDLE_SIZE: usize = 64;

/// `CUipcMemHandle` and `CUipcEventHandle`: 64 opaque bytes, passed by value.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct IpcHandle {
    pub reserved: [u8; CU_IPC_HANDLE_SIZE],
}

const MEM_MAGIC: &[u8; 8] = b"p2l-ipcm";
const EVENT_MAGIC: &[u8; 8] = b"p2l-ipce";
/// `CU_EVENT_INTERPROCESS`: events that may be exported.
const CU_EVENT_INTERPROCESS: c_uint = 4;

/// What a memory handle says (its layout in the 64 bytes: magic, pid, fd, inode, device,
/// offset of the allocation in the file, size of the allocation).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
struct MemHandle {
    pid: u32,
    fd: i32,
    ino: u64,
    dev: u64,
    offset: u64,
    size: u64,
}

impl MemHandle {
    fn encode(&self) -> IpcHandle {
        let mut h = [0u8; CU_IPC_HANDLE_SIZE];
        h[..8].copy_from_slice(MEM_MAGIC);
        h[8..12].copy_from_slice(&self.pid.to_le_bytes());
        h[12..16].copy_from_slice(&self.fd.to_le_bytes());
        h[16..24].copy_from_slice(&self.ino.to_le_bytes());
        h[24..32].copy_from_slice(&self.dev.to_le_bytes());
        h[32..40].copy_from_slice(&self.offset.to_le_bytes());
        h[40..48].copy_from_slice(&self.size.to_le_bytes());
        IpcHandle { reserved: h }
    }

    fn decode(h: &IpcHandle) -> Option<MemHandle> {
        let h = &h.reserved;
        let u32_at = |i: usize| u32::from_le_bytes(h[i..i + 4].try_into().unwrap());
        let u64_at = |i: usize| u64::from_le_bytes(h[i..i + 8].try_into().unwrap());
        (&h[..8] == MEM_MAGIC).then(|| MemHandle {
            pid: u32_at(8),
            fd: u32_at(12) as i32,
            ino: u64_at(16),
            dev: u64_at(24),
            offset: u64_at(32),
            size: u64_at(40),
        })
    }
}

/// The memfd behind an exported allocation (kept by the allocation's table entry).
pub struct Export {
    fd: OwnedFd,
    ino: u64,
    dev: u64,
    /// Where the allocation starts in the file (the file begins at its first page).
    offset: u64,
}

/// An imported allocation's mapping (the file's pages and a guard page), unmapped on close.
pub struct Mapping {
    map: *mut c_void,
    len: usize,
}

// SAFETY: the mapping is owned by this value and only unmapped by its drop.
unsafe impl Send for Mapping {}

impl Drop for Mapping {
    fn drop(&mut self) {
        // SAFETY: mapped by `open_mem` with this length, owned by this value.
        unsafe { libc::munmap(self.map, self.len) };
    }
}

fn page() -> u64 {
    // SAFETY: sysconf has no preconditions.
    (unsafe { libc::sysconf(libc::_SC_PAGESIZE) }) as u64
}

fn os_error(what: &str) -> CUresult {
    loader::log(&format!("IPC: {what}: {}", std::io::Error::last_os_error()));
    CUresult::ErrorInvalidValue
}

fn inode(fd: i32) -> CuResult<(u64, u64)> {
    // SAFETY: a zeroed `stat` is a valid out-buffer.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: `st` is writable; a bad descriptor is an error return.
    if unsafe { libc::fstat(fd, &mut st) } != 0 {
        return Err(os_error("fstat"));
    }
    Ok((st.st_ino, st.st_dev))
}

/// Moves the allocation `[start, start + size)`, which owns its pages (a `Buffer`), into a
/// new memfd mapped at the same address.
///
/// # Safety
/// The pages covering the range must belong to this allocation alone.
pub unsafe fn export(start: u64, size: usize) -> CuResult<Export> {
    let page = page();
    let first = start & !(page - 1);
    let len = (start + size as u64).next_multiple_of(page) - first;
    // SAFETY: a C string name and flags; the result is checked.
    let raw = unsafe { libc::memfd_create(c"ptx2llvm-ipc".as_ptr(), libc::MFD_CLOEXEC) };
    if raw < 0 {
        return Err(os_error("memfd_create"));
    }
    // SAFETY: a fresh descriptor this function owns.
    let fd = unsafe { OwnedFd::from_raw_fd(raw) };
    // SAFETY: an owned descriptor; results checked. The pages `[first, first + len)` are
    // mapped (the allocation's) and readable.
    unsafe {
        if libc::ftruncate(fd.as_raw_fd(), len as libc::off_t) != 0 {
            return Err(os_error("ftruncate"));
        }
        if libc::pwrite(fd.as_raw_fd(), first as *const c_void, len as usize, 0) != len as isize {
            return Err(os_error("copying the allocation into its memfd"));
        }
        let m = libc::mmap(
            first as *mut c_void,
            len as usize,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_SHARED | libc::MAP_FIXED,
            fd.as_raw_fd(),
            0,
        );
        if m == libc::MAP_FAILED {
            return Err(os_error("mapping the memfd over the allocation"));
        }
    }
    let (ino, dev) = inode(fd.as_raw_fd())?;
    Ok(Export {
        fd,
        ino,
        dev,
        offset: start - first,
    })
}

/// `cuIpcGetMemHandle`: the handle of the device allocation containing `p`.
///
/// # Safety
/// `h` null or writable for 64 bytes.
pub unsafe fn get_mem_handle(h: *mut IpcHandle, p: CUdeviceptr) -> CuResult {
    crate::non_null(h)?;
    context::active()?;
    let (found, e) = memory::share(p)?;
    let handle = MemHandle {
        pid: std::process::id(),
        fd: e.0,
        ino: e.1,
        dev: e.2,
        offset: e.3,
        size: found.size as u64,
    };
    // SAFETY: checked non-null; writable by contract.
    unsafe { crate::out(h, handle.encode()) }
}

impl Export {
    /// The descriptor, inode, device and offset a handle carries.
    pub fn identity(&self) -> (i32, u64, u64, u64) {
        (self.fd.as_raw_fd(), self.ino, self.dev, self.offset)
    }
}

/// Imported allocations by handle: opening one again returns the same pointer and counts.
static OPENED: Mutex<Vec<(MemHandle, u64, usize)>> = Mutex::new(Vec::new());

fn opened() -> std::sync::MutexGuard<'static, Vec<(MemHandle, u64, usize)>> {
    OPENED.lock().unwrap_or_else(|e| e.into_inner())
}

/// `cuIpcOpenMemHandle_v2`: maps another process's exported allocation.
///
/// # Safety
/// `p` null or writable.
pub unsafe fn open_mem_handle(p: *mut CUdeviceptr, h: IpcHandle, flags: c_uint) -> CuResult {
    crate::non_null(p)?;
    let ctx = context::active()?;
    // CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS is the only flag.
    if flags & !1 != 0 {
        return Err(CUresult::ErrorInvalidValue);
    }
    let Some(mh) = MemHandle::decode(&h) else {
        loader::log("IPC: not a memory handle of this library");
        return Err(CUresult::ErrorInvalidValue);
    };
    if mh.pid == std::process::id() {
        loader::log("IPC: a memory handle cannot be opened in the process that exported it");
        return Err(CUresult::ErrorInvalidContext);
    }
    let mut list = opened();
    if let Some(e) = list.iter_mut().find(|e| e.0 == mh) {
        e.2 += 1;
        // SAFETY: checked non-null.
        return unsafe { crate::out(p, e.1) };
    }
    let path = CString::new(format!("/proc/{}/fd/{}", mh.pid, mh.fd)).unwrap();
    // SAFETY: a C string path; the result is checked.
    let raw = unsafe { libc::open(path.as_ptr(), libc::O_RDWR | libc::O_CLOEXEC) };
    if raw < 0 {
        return Err(os_error(&format!(
            "cannot open the exporting process's memory ({})",
            path.to_string_lossy()
        )));
    }
    // SAFETY: a fresh descriptor owned here (closed when mapped).
    let fd = unsafe { OwnedFd::from_raw_fd(raw) };
    if inode(fd.as_raw_fd())? != (mh.ino, mh.dev) {
        loader::log("IPC: the exporting process no longer holds this allocation");
        return Err(CUresult::ErrorInvalidValue);
    }
    let page = page();
    let len = (mh.offset + mh.size).next_multiple_of(page) as usize;
    // SAFETY: a fresh reservation (file pages then a guard page), then the file mapped over
    // its first part; results checked.
    let map = unsafe {
        let r = libc::mmap(
            std::ptr::null_mut(),
            len + page as usize,
            libc::PROT_NONE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
            -1,
            0,
        );
        if r == libc::MAP_FAILED {
            return Err(os_error("reserving address space"));
        }
        let m = libc::mmap(
            r,
            len,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_SHARED | libc::MAP_FIXED,
            fd.as_raw_fd(),
            0,
        );
        if m == libc::MAP_FAILED {
            libc::munmap(r, len + page as usize);
            return Err(os_error("mapping the exported memory"));
        }
        Mapping {
            map: r,
            len: len + page as usize,
        }
    };
    let dptr = map.map as u64 + mh.offset;
    memory::insert_ipc(dptr, mh.size as usize, &ctx, map);
    list.push((mh, dptr, 1));
    // SAFETY: checked non-null.
    unsafe { crate::out(p, dptr) }
}

/// `cuIpcCloseMemHandle`: unmaps an imported allocation when its last open is closed.
pub fn close_mem_handle(p: CUdeviceptr) -> CuResult {
    context::active()?;
    let mut list = opened();
    let i = list
        .iter()
        .position(|e| e.1 == p)
        .ok_or(CUresult::ErrorInvalidValue)?;
    list[i].2 -= 1;
    if list[i].2 == 0 {
        list.remove(i);
        memory::remove_ipc(p)?;
    }
    Ok(())
}

/// Exported events by handle (this process's events that were exported).
static EVENT_IDS: Mutex<Option<HashMap<usize, u64>>> = Mutex::new(None);

/// `cuIpcGetEventHandle`: the event must be `CU_EVENT_INTERPROCESS | CU_EVENT_DISABLE_TIMING`.
///
/// # Safety
/// `h` null or writable for 64 bytes.
pub unsafe fn get_event_handle(h: *mut IpcHandle, e: CUevent) -> CuResult {
    crate::non_null(h)?;
    let flags = crate::stream::event_flags(e)?;
    if flags & CU_EVENT_INTERPROCESS == 0 || flags & CU_EVENT_DISABLE_TIMING == 0 {
        return Err(CUresult::ErrorInvalidHandle);
    }
    let mut ids = EVENT_IDS.lock().unwrap_or_else(|e| e.into_inner());
    let ids = ids.get_or_insert_with(HashMap::new);
    let n = ids.len() as u64 + 1;
    let id = *ids.entry(e as usize).or_insert(n);
    let mut b = [0u8; CU_IPC_HANDLE_SIZE];
    b[..8].copy_from_slice(EVENT_MAGIC);
    b[8..12].copy_from_slice(&std::process::id().to_le_bytes());
    b[16..24].copy_from_slice(&id.to_le_bytes());
    // SAFETY: checked non-null; writable by contract.
    unsafe { crate::out(h, IpcHandle { reserved: b }) }
}

/// `cuIpcOpenEventHandle`: a new event of this process, always complete (work on the
/// exporter's streams has run by the time it records the event).
///
/// # Safety
/// `e` null or writable.
pub unsafe fn open_event_handle(e: *mut CUevent, h: IpcHandle) -> CuResult {
    crate::non_null(e)?;
    let h = h.reserved;
    if &h[..8] != EVENT_MAGIC {
        loader::log("IPC: not an event handle of this library");
        return Err(CUresult::ErrorInvalidValue);
    }
    if u32::from_le_bytes(h[8..12].try_into().unwrap()) == std::process::id() {
        loader::log("IPC: an event handle cannot be opened in the process that exported it");
        return Err(CUresult::ErrorInvalidContext);
    }
    // SAFETY: checked non-null.
    unsafe { crate::stream::event_create(e, CU_EVENT_INTERPROCESS | CU_EVENT_DISABLE_TIMING) }
}
