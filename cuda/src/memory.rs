//! Memory: every allocation the driver knows is in one table (start → size, kind, owning
//! context), which answers pointer attributes, address ranges and the range checks of copies
//! and memsets. Device memory is host memory (`ptx2llvm::api::Buffer`: 256-byte aligned,
//! zeroed, ending at a guard page), so a device pointer is a host pointer, mapped and managed
//! memory need no copies, and a kernel running off the end of an allocation faults at once
//! (a launch error) instead of corrupting its neighbour. Module variables are in the table too
//! (`Kind::Global`), so copies to and from `cuModuleGetGlobal` addresses are checked alike.

use std::collections::BTreeMap;
use std::ffi::{c_int, c_uint, c_void};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use ptx2llvm::api::Buffer;

use crate::context::{self, Ctx};
use crate::graph::{NodeType, Raw};
use crate::types::*;
use crate::{out, CuResult};

/// How an allocation came to be.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// `cuMemAlloc`, `cuMemAllocPitch`, `cuMemAllocAsync`.
    Device,
    /// `cuMemHostAlloc`, `cuMemAllocHost`: pinned, mapped host memory.
    Host,
    /// `cuMemHostRegister`: the caller's memory.
    Registered,
    /// `cuMemAllocManaged`.
    Managed,
    /// A module's `.global`/`.const` variable (owned by the module).
    Global,
    /// Another process's allocation opened by `cuIpcOpenMemHandle`.
    Imported,
}

/// What keeps an allocation's memory alive.
enum Backing {
    /// The caller's or a module's memory.
    None,
    Buffer {
        _buf: Buffer,
    },
    Imported {
        _map: crate::ipc::Mapping,
    },
}

struct Alloc {
    size: usize,
    kind: Kind,
    ctx: u64,
    ctx_handle: usize,
    flags: c_uint,
    id: u64,
    /// The memory, for the kinds this library allocates or maps.
    _mem: Backing,
    /// The memfd its pages moved to when it was exported (`cuIpcGetMemHandle`).
    export: Option<crate::ipc::Export>,
}

/// What the table knows about an address.
#[derive(Clone, Copy, Debug)]
pub struct Found {
    pub start: u64,
    pub size: usize,
    pub kind: Kind,
    pub ctx_handle: usize,
    pub flags: c_uint,
    pub id: u64,
}

static TABLE: Mutex<BTreeMap<u64, Alloc>> = Mutex::new(BTreeMap::new());
static NEXT_ID: AtomicU64 = AtomicU64::new(1);

fn table() -> std::sync::MutexGuard<'static, BTreeMap<u64, Alloc>> {
    TABLE.lock().unwrap_or_else(|e| e.into_inner())
}

/// The allocation containing `p`, if any.
pub fn find(p: u64) -> Option<Found> {
    let t = table();
    let (&start, a) = t.range(..=p).next_back()?;
    (p < start + a.size.max(1) as u64).then_some(Found {
        start,
        size: a.size,
        kind: a.kind,
        ctx_handle: a.ctx_handle,
        flags: a.flags,
        id: a.id,
    })
}

/// `Err(CUDA_ERROR_INVALID_VALUE)` unless `[p, p + n)` lies in one known allocation.
pub fn check_range(p: u64, n: usize) -> CuResult<Found> {
    let f = find(p).ok_or(CUresult::ErrorInvalidValue)?;
    let end = p.checked_add(n as u64).ok_or(CUresult::ErrorInvalidValue)?;
    if end > f.start + f.size as u64 {
        return Err(CUresult::ErrorInvalidValue);
    }
    Ok(f)
}

fn insert(start: u64, size: usize, kind: Kind, ctx: &Arc<Ctx>, flags: c_uint, buf: Option<Buffer>) {
    insert_backed(
        start,
        size,
        kind,
        ctx,
        flags,
        buf.map_or(Backing::None, |b| Backing::Buffer { _buf: b }),
    );
}

fn insert_backed(start: u64, size: usize, kind: Kind, ctx: &Arc<Ctx>, flags: c_uint, mem: Backing) {
    table().insert(
        start,
        Alloc {
            size,
            kind,
            ctx: ctx.id,
            ctx_handle: ctx.handle() as usize,
            flags,
            id: NEXT_ID.fetch_add(1, Ordering::Relaxed),
            _mem: mem,
            export: None,
        },
    );
}

/// Registers an imported IPC allocation (`Kind::Imported`) at `start` in `map`.
pub fn insert_ipc(start: u64, size: usize, ctx: &Arc<Ctx>, map: crate::ipc::Mapping) {
    insert_backed(
        start,
        size,
        Kind::Imported,
        ctx,
        0,
        Backing::Imported { _map: map },
    );
}

/// Unmaps an imported IPC allocation.
pub fn remove_ipc(start: u64) -> CuResult {
    remove(start, &[Kind::Imported])
}

/// The allocation containing `p` made shareable (`cuIpcGetMemHandle`): device allocations
/// only; the first export moves its pages into a memfd. Answers the allocation and the
/// export's descriptor, inode, device and offset.
pub fn share(p: u64) -> CuResult<(Found, (i32, u64, u64, u64))> {
    let found = find(p).ok_or(CUresult::ErrorInvalidValue)?;
    if found.kind != Kind::Device {
        return Err(CUresult::ErrorInvalidValue);
    }
    let mut t = table();
    let a = t.get_mut(&found.start).ok_or(CUresult::ErrorInvalidValue)?;
    if a.export.is_none() {
        // SAFETY: a device allocation is a `Buffer`, whose mapping holds only its pages.
        a.export = Some(unsafe { crate::ipc::export(found.start, found.size) }?);
    }
    let id = a.export.as_ref().map(|e| e.identity()).unwrap();
    Ok((found, id))
}

/// Registers a module variable (`Kind::Global`).
pub fn register_global(start: u64, size: usize, ctx: &Arc<Ctx>) {
    insert(start, size, Kind::Global, ctx, 0, None);
}

/// Forgets a module variable.
pub fn unregister_global(start: u64) {
    let mut t = table();
    if t.get(&start).is_some_and(|a| a.kind == Kind::Global) {
        t.remove(&start);
    }
}

/// Frees what context `ctx` allocated (its destruction or reset); registered memory is the
/// caller's and only forgotten.
pub fn free_context(ctx: u64) {
    let dropped: Vec<Alloc> = {
        let mut t = table();
        let keys: Vec<u64> = t
            .iter()
            .filter(|(_, a)| a.ctx == ctx && a.kind != Kind::Global)
            .map(|(&k, _)| k)
            .collect();
        keys.iter().filter_map(|k| t.remove(k)).collect()
    };
    drop(dropped);
}

fn new_buffer(n: usize) -> CuResult<Buffer> {
    if n == 0 {
        return Err(CUresult::ErrorInvalidValue);
    }
    Buffer::try_zeroed(n).map_err(|_| CUresult::ErrorOutOfMemory)
}

/// Frees the allocation starting at `p` if it is of one of `kinds`.
fn remove(p: u64, kinds: &[Kind]) -> CuResult {
    let a = {
        let mut t = table();
        match t.get(&p) {
            Some(a) if kinds.contains(&a.kind) => t.remove(&p),
            _ => return Err(CUresult::ErrorInvalidValue),
        }
    };
    drop(a);
    Ok(())
}

/// `cuMemGetInfo_v2`.
///
/// # Safety
/// Pointers null or writable.
pub unsafe fn get_info(free: *mut usize, total: *mut usize) -> CuResult {
    crate::non_null(free)?;
    crate::non_null(total)?;
    context::active()?;
    // SAFETY: checked non-null.
    unsafe {
        out(free, crate::device::free_memory())?;
        out(total, crate::device::total_memory())
    }
}

/// `cuMemAlloc_v2`.
///
/// # Safety
/// `p` null or writable.
pub unsafe fn alloc(p: *mut CUdeviceptr, n: usize) -> CuResult {
    crate::non_null(p)?;
    let ctx = context::active()?;
    let b = new_buffer(n)?;
    let a = b.address();
    insert(a, n, Kind::Device, &ctx, 0, Some(b));
    // SAFETY: checked non-null.
    unsafe { out(p, a) }
}

/// `cuMemAllocPitch_v2`: rows padded to 512 bytes (`CU_DEVICE_ATTRIBUTE_TEXTURE_ALIGNMENT`).
///
/// # Safety
/// Pointers null or writable.
pub unsafe fn alloc_pitch(
    p: *mut CUdeviceptr,
    pitch: *mut usize,
    w: usize,
    h: usize,
    elem: c_uint,
) -> CuResult {
    crate::non_null(pitch)?;
    if !matches!(elem, 4 | 8 | 16) || w == 0 || h == 0 {
        return Err(CUresult::ErrorInvalidValue);
    }
    let row = w
        .checked_next_multiple_of(512)
        .ok_or(CUresult::ErrorInvalidValue)?;
    let n = row.checked_mul(h).ok_or(CUresult::ErrorOutOfMemory)?;
    // SAFETY: `p` null or writable by contract; checked in `alloc`.
    unsafe { alloc(p, n)? };
    // SAFETY: checked non-null.
    unsafe { out(pitch, row) }
}

/// `cuMemFree_v2`: only the start of a device or managed allocation.
pub fn free(p: CUdeviceptr) -> CuResult {
    context::active()?;
    if p == 0 {
        return Ok(());
    }
    remove(p, &[Kind::Device, Kind::Managed])
}

/// Stream-ordered allocations are not captured (no memory nodes): refused in a capture.
fn no_capture(s: CUstream, what: &str) -> CuResult {
    if let Some(c) = crate::stream::capture(s)? {
        crate::loader::log(&format!(
            "{what} in a stream capture: graph memory nodes are not provided"
        ));
        c.invalidate();
        return Err(CUresult::ErrorStreamCaptureUnsupported);
    }
    Ok(())
}

/// `cuMemAllocAsync`: allocated at once (work runs when submitted).
///
/// # Safety
/// `p` null or writable.
pub unsafe fn alloc_async(p: *mut CUdeviceptr, n: usize, s: CUstream) -> CuResult {
    crate::stream::resolve(s)?;
    no_capture(s, "cuMemAllocAsync")?;
    // SAFETY: as `alloc`.
    unsafe { alloc(p, n) }
}

/// `cuMemFreeAsync`.
pub fn free_async(p: CUdeviceptr, s: CUstream) -> CuResult {
    crate::stream::resolve(s)?;
    no_capture(s, "cuMemFreeAsync")?;
    free(p)
}

/// `cuMemGetAddressRange_v2`.
///
/// # Safety
/// Pointers null or writable.
pub unsafe fn address_range(base: *mut CUdeviceptr, size: *mut usize, p: CUdeviceptr) -> CuResult {
    context::active()?;
    let f = find(p).ok_or(CUresult::ErrorNotFound)?;
    // SAFETY: null or writable by contract.
    unsafe {
        if !base.is_null() {
            *base = f.start;
        }
        if !size.is_null() {
            *size = f.size;
        }
    }
    Ok(())
}

/// `cuMemHostAlloc`, `cuMemAllocHost_v2`.
///
/// # Safety
/// `p` null or writable.
pub unsafe fn host_alloc(p: *mut *mut c_void, n: usize, flags: c_uint) -> CuResult {
    crate::non_null(p)?;
    if flags & !CU_MEMHOSTALLOC_ALL != 0 {
        return Err(CUresult::ErrorInvalidValue);
    }
    let ctx = context::active()?;
    let b = new_buffer(n)?;
    let a = b.address();
    insert(a, n, Kind::Host, &ctx, flags, Some(b));
    // SAFETY: checked non-null.
    unsafe { out(p, a as *mut c_void) }
}

/// `cuMemFreeHost`.
pub fn host_free(p: *mut c_void) -> CuResult {
    context::active()?;
    remove(p as u64, &[Kind::Host])
}

/// `cuMemHostRegister_v2`: the range becomes mapped, pinned memory (it already is both).
pub fn host_register(p: *mut c_void, n: usize, flags: c_uint) -> CuResult {
    crate::non_null(p)?;
    if n == 0 || flags & !CU_MEMHOSTREGISTER_ALL != 0 {
        return Err(CUresult::ErrorInvalidValue);
    }
    let ctx = context::active()?;
    let start = p as u64;
    let end = start
        .checked_add(n as u64)
        .ok_or(CUresult::ErrorInvalidValue)?;
    {
        let t = table();
        let overlaps = t
            .range(..end)
            .next_back()
            .is_some_and(|(&s, a)| s + a.size as u64 > start);
        if overlaps {
            return Err(CUresult::ErrorHostMemoryAlreadyRegistered);
        }
    }
    insert(start, n, Kind::Registered, &ctx, flags, None);
    Ok(())
}

/// `cuMemHostUnregister`.
pub fn host_unregister(p: *mut c_void) -> CuResult {
    context::active()?;
    remove(p as u64, &[Kind::Registered]).map_err(|_| CUresult::ErrorHostMemoryNotRegistered)
}

/// `cuMemHostGetDevicePointer_v2`: the host pointer itself (`flags` must be 0).
///
/// # Safety
/// `d` null or writable.
pub unsafe fn host_device_pointer(d: *mut CUdeviceptr, p: *mut c_void, flags: c_uint) -> CuResult {
    crate::non_null(d)?;
    if flags != 0 {
        return Err(CUresult::ErrorInvalidValue);
    }
    context::active()?;
    match find(p as u64) {
        Some(f) if matches!(f.kind, Kind::Host | Kind::Registered) => {
            // SAFETY: checked non-null.
            unsafe { out(d, p as u64) }
        }
        _ => Err(CUresult::ErrorInvalidValue),
    }
}

/// `cuMemHostGetFlags`.
///
/// # Safety
/// `f` null or writable.
pub unsafe fn host_flags(f: *mut c_uint, p: *mut c_void) -> CuResult {
    crate::non_null(f)?;
    context::active()?;
    match find(p as u64) {
        Some(a) if matches!(a.kind, Kind::Host | Kind::Registered) => {
            // SAFETY: checked non-null.
            unsafe { out(f, a.flags) }
        }
        _ => Err(CUresult::ErrorInvalidValue),
    }
}

/// `cuMemAllocManaged`.
///
/// # Safety
/// `p` null or writable.
pub unsafe fn alloc_managed(p: *mut CUdeviceptr, n: usize, flags: c_uint) -> CuResult {
    crate::non_null(p)?;
    if flags != CU_MEM_ATTACH_GLOBAL && flags != CU_MEM_ATTACH_HOST {
        return Err(CUresult::ErrorInvalidValue);
    }
    let ctx = context::active()?;
    let b = new_buffer(n)?;
    let a = b.address();
    insert(a, n, Kind::Managed, &ctx, flags, Some(b));
    // SAFETY: checked non-null.
    unsafe { out(p, a) }
}

/// `cuMemPrefetchAsync_v2`: the memory is where the kernels run already.
pub fn prefetch(p: CUdeviceptr, n: usize, s: CUstream) -> CuResult {
    crate::stream::resolve(s)?;
    check_range(p, n).map(|_| ())
}

/// `cuMemAdvise_v2`: advice has no effect here.
pub fn advise(p: CUdeviceptr, n: usize) -> CuResult {
    context::active()?;
    check_range(p, n).map(|_| ())
}

/// Which sides of a copy must be known allocations.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dir {
    HtoD,
    DtoH,
    DtoD,
    /// `cuMemcpy`: unified addressing, either side may be any host memory.
    Any,
}

/// Every copy: checks the device side(s), then copies (work runs when submitted).
///
/// # Safety
/// Host sides valid for `n` bytes.
pub unsafe fn copy(dst: u64, src: u64, n: usize, dir: Dir, s: CUstream) -> CuResult {
    crate::stream::resolve(s)?;
    if crate::stream::record(s, NodeType::Memcpy, || {
        // SAFETY: replayed with the same addresses, valid while the graph is used.
        Arc::new(move |s| unsafe { copy(dst, src, n, dir, s) })
    })? {
        return Ok(());
    }
    if n == 0 {
        return Ok(());
    }
    if dst == 0 || src == 0 {
        return Err(CUresult::ErrorInvalidValue);
    }
    if matches!(dir, Dir::HtoD | Dir::DtoD) {
        check_range(dst, n)?;
    }
    if matches!(dir, Dir::DtoH | Dir::DtoD) {
        check_range(src, n)?;
    }
    // SAFETY: device sides checked against the table; host sides valid by contract. Ranges
    // may overlap (`copy` is a memmove).
    unsafe { std::ptr::copy(src as *const u8, dst as *mut u8, n) };
    Ok(())
}

/// `cuMemcpy2D(Unaligned/Async)_v2`: `height` rows of `width` bytes between host, device or
/// unified memory at their pitches (CUDA arrays are not provided: `CUDA_ERROR_NOT_SUPPORTED`);
/// device sides are checked over their whole span.
///
/// # Safety
/// `c` a valid `CUDA_MEMCPY2D`; host sides valid over their spans.
pub unsafe fn copy_2d(c: *const Memcpy2D, s: CUstream) -> CuResult {
    crate::non_null(c)?;
    crate::stream::resolve(s)?;
    // SAFETY: checked non-null; valid by contract.
    let c = unsafe { *c };
    let copy = Raw(c);
    if crate::stream::record(s, NodeType::Memcpy, || {
        Arc::new(move |s| {
            let c = copy;
            // SAFETY: replayed with the same addresses, valid while the graph is used.
            unsafe { copy_2d(&c.0, s) }
        })
    })? {
        return Ok(());
    }
    if c.width == 0 || c.height == 0 {
        return Ok(());
    }
    // The address of the first byte of one side and whether the table must know it.
    let side =
        |ty: c_int, host: u64, device: u64, x: usize, y: usize, pitch: usize| -> CuResult<u64> {
            if c.height > 1 && pitch < c.width {
                return Err(CUresult::ErrorInvalidValue);
            }
            let (base, tracked) = match MemoryType::from_raw(ty) {
                Some(MemoryType::Host) => (host, false),
                Some(MemoryType::Device) => (device, true),
                Some(MemoryType::Unified) => (device, false),
                Some(MemoryType::Array) => return Err(CUresult::ErrorNotSupported),
                None => return Err(CUresult::ErrorInvalidValue),
            };
            let start = y
                .checked_mul(pitch)
                .and_then(|o| o.checked_add(x))
                .and_then(|o| base.checked_add(o as u64))
                .ok_or(CUresult::ErrorInvalidValue)?;
            let span = pitch
                .checked_mul(c.height - 1)
                .and_then(|o| o.checked_add(c.width))
                .ok_or(CUresult::ErrorInvalidValue)?;
            if base == 0 {
                return Err(CUresult::ErrorInvalidValue);
            }
            if tracked {
                check_range(start, span)?;
            }
            Ok(start)
        };
    let src = side(
        c.src_type,
        c.src_host as u64,
        c.src_device,
        c.src_x,
        c.src_y,
        c.src_pitch,
    )?;
    let dst = side(
        c.dst_type,
        c.dst_host as u64,
        c.dst_device,
        c.dst_x,
        c.dst_y,
        c.dst_pitch,
    )?;
    for r in 0..c.height {
        // SAFETY: both rows lie in spans checked above (device) or valid by contract (host).
        unsafe {
            std::ptr::copy(
                (src as usize + r * c.src_pitch) as *const u8,
                (dst as usize + r * c.dst_pitch) as *mut u8,
                c.width,
            )
        };
    }
    Ok(())
}

/// Every memset: `height` rows of `elems` elements of `pattern` (1, 2 or 4 bytes; the address
/// aligned to it), rows `pitch` bytes apart (0: one contiguous row).
///
/// # Safety
/// None beyond the checks (the range must be a known allocation).
pub unsafe fn set(
    p: CUdeviceptr,
    elems: usize,
    height: usize,
    pitch: usize,
    pattern: &[u8],
    s: CUstream,
) -> CuResult {
    let width = elems
        .checked_mul(pattern.len())
        .ok_or(CUresult::ErrorInvalidValue)?;
    let pitch = if pitch == 0 && height == 1 {
        width
    } else {
        pitch
    };
    crate::stream::resolve(s)?;
    if crate::stream::record(s, NodeType::Memset, || {
        let bytes = pattern.to_vec();
        // SAFETY: replayed on the same range, checked again then.
        Arc::new(move |s| unsafe { set(p, elems, height, pitch, &bytes, s) })
    })? {
        return Ok(());
    }
    if width == 0 || height == 0 {
        return Ok(());
    }
    if !p.is_multiple_of(pattern.len() as u64) || (height > 1 && pitch < width) {
        return Err(CUresult::ErrorInvalidValue);
    }
    let span = pitch
        .checked_mul(height - 1)
        .and_then(|x| x.checked_add(width))
        .ok_or(CUresult::ErrorInvalidValue)?;
    check_range(p, span)?;
    for r in 0..height {
        // SAFETY: row `r` lies in the checked span.
        let row =
            unsafe { std::slice::from_raw_parts_mut((p as usize + r * pitch) as *mut u8, width) };
        if pattern.iter().all(|&b| b == pattern[0]) {
            row.fill(pattern[0]);
        } else {
            // `width` is a multiple of the pattern's size.
            for chunk in row.chunks_exact_mut(pattern.len()) {
                chunk.copy_from_slice(pattern);
            }
        }
    }
    Ok(())
}

/// `cuPointerGetAttribute`: untracked pointers are `CUDA_ERROR_INVALID_VALUE`. Booleans are
/// written as one byte, handles and addresses at their size, the rest as 32-bit values.
///
/// # Safety
/// `data` null or writable for the attribute's type.
pub unsafe fn pointer_attribute(data: *mut c_void, a: c_int, p: CUdeviceptr) -> CuResult {
    crate::non_null(data)?;
    let a = PointerAttr::from_raw(a).ok_or(CUresult::ErrorInvalidValue)?;
    let f = find(p).ok_or(CUresult::ErrorInvalidValue)?;
    use PointerAttr as P;
    // SAFETY: (all writes below) `data` is writable for the attribute's type by contract.
    unsafe {
        let flag = |v: bool| *(data as *mut u8) = v as u8;
        let word = |v: u32| (data as *mut u32).write_unaligned(v);
        let wide = |v: u64| (data as *mut u64).write_unaligned(v);
        match a {
            P::Context => wide(f.ctx_handle as u64),
            P::MemoryType => word(match f.kind {
                Kind::Host | Kind::Registered => MemoryType::Host as u32,
                Kind::Device | Kind::Managed | Kind::Global | Kind::Imported => {
                    MemoryType::Device as u32
                }
            }),
            P::DevicePointer | P::HostPointer => wide(p),
            P::SyncMemops => flag(true),
            P::BufferId | P::MemoryBlockId => wide(f.id),
            P::IsManaged => flag(f.kind == Kind::Managed),
            P::DeviceOrdinal => word(0),
            P::IsLegacyCudaIpcCapable | P::IsGpuDirectRdmaCapable | P::IsHwDecompressCapable => {
                flag(false)
            }
            P::RangeStartAddr | P::MappingBaseAddr => wide(f.start),
            P::RangeSize | P::MappingSize => wide(f.size as u64),
            P::Mapped => flag(true),
            P::AllowedHandleTypes => wide(0),
            // CU_POINTER_ATTRIBUTE_ACCESS_FLAG_READWRITE.
            P::AccessFlags => word(3),
            P::MempoolHandle => wide(0),
            P::LocalityDomainOrdinal => word(0),
            P::P2pTokens => return Err(CUresult::ErrorNotSupported),
        }
    }
    Ok(())
}

/// `cuPointerGetAttributes`: like `cuPointerGetAttribute` for each, except that an untracked
/// pointer is not an error (NVIDIA's driver answers a memory type of 0 and null values).
///
/// # Safety
/// `a` has `n` entries; `data[i]` null or writable for attribute `a[i]`.
pub unsafe fn pointer_attributes(
    n: c_uint,
    a: *const c_int,
    data: *mut *mut c_void,
    p: CUdeviceptr,
) -> CuResult {
    crate::non_null(a)?;
    crate::non_null(data)?;
    let known = find(p).is_some();
    for i in 0..n as usize {
        // SAFETY: `n` entries by contract.
        let (attr, d) = unsafe { (*a.add(i), *data.add(i)) };
        if d.is_null() {
            continue;
        }
        if known {
            // SAFETY: `d` writable for the attribute by contract.
            match unsafe { pointer_attribute(d, attr, p) } {
                Ok(()) | Err(CUresult::ErrorNotSupported) => {}
                Err(e) => return Err(e),
            }
        } else {
            let attr = PointerAttr::from_raw(attr).ok_or(CUresult::ErrorInvalidValue)?;
            // SAFETY: writable for the attribute's size by contract.
            unsafe { std::ptr::write_bytes(d as *mut u8, 0, attribute_size(attr)) };
        }
    }
    Ok(())
}

/// The size of attribute `a`'s value, as `pointer_attribute` writes it.
fn attribute_size(a: PointerAttr) -> usize {
    use PointerAttr as P;
    match a {
        P::SyncMemops
        | P::IsManaged
        | P::IsLegacyCudaIpcCapable
        | P::IsGpuDirectRdmaCapable
        | P::IsHwDecompressCapable
        | P::Mapped => 1,
        P::MemoryType | P::DeviceOrdinal | P::AccessFlags | P::LocalityDomainOrdinal => 4,
        _ => 8,
    }
}
