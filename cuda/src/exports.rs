//! The one table of entry points. Each line of `entries!` declares an exported C function
//! (its symbol, with the version suffix `cuda.h` maps the plain name to), the plain name that
//! `cuGetProcAddress` callers ask for, the CUDA version that introduced this variant (the
//! number in `cudaTypedefs.h`'s `PFN_name_vNNNN`), optionally its per-thread-default-stream
//! twin (`_ptds`/`_ptsz`), its C parameters and the implementation it calls. The macro emits
//! the `#[no_mangle]` functions and `TABLE`, which `cuGetProcAddress` searches: the variant with
//! the highest version not above the caller's, its twin when the caller asks for per-thread
//! default-stream semantics.

use std::ffi::{c_char, c_int, c_uint, c_void, CStr};

use crate::graph::{
    self, HostNodeParams, InstantiateParams, KernelNodeParams, Memcpy3D, MemsetNodeParams,
};
use crate::ipc::{self, IpcHandle};
use crate::types::*;
use crate::{context, device, launch, link, loader, memory, module, occupancy, stream};
use crate::{out, CuResult};

/// One exported function.
pub struct Entry {
    /// The name callers of `cuGetProcAddress` use (`cuMemAlloc`).
    pub name: &'static str,
    /// The exported symbol (`cuMemAlloc_v2`).
    pub symbol: &'static str,
    /// The CUDA version that introduced this variant (3020 for `cuMemAlloc_v2`).
    pub since: i32,
    /// Whether this is the per-thread-default-stream twin of the entry before it.
    pub per_thread: bool,
    pub addr: Addr,
}

/// A function's address.
#[derive(Clone, Copy)]
pub struct Addr(pub *const c_void);
// SAFETY: the address of code, never written through.
unsafe impl Sync for Addr {}

macro_rules! one {
    ($sym:ident ( $($a:ident : $t:ty),* $(,)? ) $body:expr) => {
        /// # Safety
        /// The pointer arguments must be as the CUDA driver API documents them.
        #[no_mangle]
        #[allow(non_snake_case, unused_unsafe, clippy::too_many_arguments)]
        pub unsafe extern "C" fn $sym($($a: $t),*) -> CUresult {
            // SAFETY: the caller passes what the driver API documents; the implementations
            // check what can be checked (null pointers, handles, ranges).
            crate::guard(stringify!($sym), move || unsafe { $body })
        }
    };
}

macro_rules! entries {
    ( $( $name:literal $since:literal => $sym:ident $args:tt $([$pt:ident])? = $body:expr ; )* ) => {
        $(
            one!($sym $args $body);
            $( one!($pt $args $body); )?
        )*

        /// Every exported entry point.
        pub static TABLE: &[Entry] = &[
            $(
                Entry { name: $name, symbol: stringify!($sym), since: $since, per_thread: false,
                        addr: Addr($sym as *const c_void) },
                $( Entry { name: $name, symbol: stringify!($pt), since: $since, per_thread: true,
                           addr: Addr($pt as *const c_void) }, )?
            )*
        ];
    };
}

entries! {
    // ---- loader
    "cuInit" 2000 => cuInit(flags: c_uint) = loader::init(flags);
    "cuDriverGetVersion" 2020 => cuDriverGetVersion(v: *mut c_int) = out(v, loader::DRIVER_VERSION);
    "cuGetErrorName" 6000 => cuGetErrorName(e: c_int, s: *mut *const c_char) = loader::error_name(e, s);
    "cuGetErrorString" 6000 => cuGetErrorString(e: c_int, s: *mut *const c_char) = loader::error_string(e, s);
    "cuGetExportTable" 3000 => cuGetExportTable(t: *mut *const c_void, id: *const CUuuid) = loader::export_table(t, id);
    "cuGetProcAddress" 11030 => cuGetProcAddress(sym: *const c_char, pfn: *mut *const c_void, v: c_int, flags: u64) = proc_address(sym, pfn, v, flags, std::ptr::null_mut());
    "cuGetProcAddress" 12000 => cuGetProcAddress_v2(sym: *const c_char, pfn: *mut *const c_void, v: c_int, flags: u64, status: *mut c_int) = proc_address(sym, pfn, v, flags, status);
    // ---- device
    "cuDeviceGet" 2000 => cuDeviceGet(d: *mut CUdevice, ordinal: c_int) = device::get(d, ordinal);
    "cuDeviceGetCount" 2000 => cuDeviceGetCount(n: *mut c_int) = out(n, 1);
    "cuDeviceGetName" 2000 => cuDeviceGetName(name: *mut c_char, len: c_int, d: CUdevice) = device::name(name, len, d);
    "cuDeviceGetUuid" 9020 => cuDeviceGetUuid(u: *mut CUuuid, d: CUdevice) = device::uuid(u, d);
    "cuDeviceGetUuid" 11040 => cuDeviceGetUuid_v2(u: *mut CUuuid, d: CUdevice) = device::uuid(u, d);
    "cuDeviceGetLuid" 10000 => cuDeviceGetLuid(luid: *mut c_char, mask: *mut c_uint, d: CUdevice) = device::luid(luid, mask, d);
    "cuDeviceTotalMem" 3020 => cuDeviceTotalMem_v2(b: *mut usize, d: CUdevice) = device::total_mem(b, d);
    "cuDeviceGetAttribute" 2000 => cuDeviceGetAttribute(v: *mut c_int, a: c_int, d: CUdevice) = device::attribute(v, a, d);
    "cuDeviceComputeCapability" 2000 => cuDeviceComputeCapability(major: *mut c_int, minor: *mut c_int, d: CUdevice) = device::compute_capability(major, minor, d);
    "cuDeviceGetProperties" 2000 => cuDeviceGetProperties(p: *mut CUdevprop, d: CUdevice) = device::properties(p, d);
    "cuDeviceGetPCIBusId" 4010 => cuDeviceGetPCIBusId(id: *mut c_char, len: c_int, d: CUdevice) = device::pci_bus_id(id, len, d);
    "cuDeviceGetByPCIBusId" 4010 => cuDeviceGetByPCIBusId(d: *mut CUdevice, id: *const c_char) = device::by_pci_bus_id(d, id);
    "cuDeviceCanAccessPeer" 4000 => cuDeviceCanAccessPeer(can: *mut c_int, d: CUdevice, peer: CUdevice) = device::can_access_peer(can, d, peer);
    "cuDeviceGetDefaultMemPool" 11020 => cuDeviceGetDefaultMemPool(p: *mut *mut c_void, d: CUdevice) = device::default_mem_pool(p, d);
    "cuDevicePrimaryCtxRetain" 7000 => cuDevicePrimaryCtxRetain(c: *mut CUcontext, d: CUdevice) = context::primary_retain(c, d);
    "cuDevicePrimaryCtxRelease" 11000 => cuDevicePrimaryCtxRelease_v2(d: CUdevice) = context::primary_release(d);
    "cuDevicePrimaryCtxGetState" 7000 => cuDevicePrimaryCtxGetState(d: CUdevice, flags: *mut c_uint, active: *mut c_int) = context::primary_state(d, flags, active);
    "cuDevicePrimaryCtxSetFlags" 11000 => cuDevicePrimaryCtxSetFlags_v2(d: CUdevice, flags: c_uint) = context::primary_set_flags(d, flags);
    "cuDevicePrimaryCtxReset" 11000 => cuDevicePrimaryCtxReset_v2(d: CUdevice) = context::primary_reset(d);
    // ---- contexts
    "cuCtxCreate" 3020 => cuCtxCreate_v2(c: *mut CUcontext, flags: c_uint, d: CUdevice) = context::create(c, flags, d);
    "cuCtxCreate" 11040 => cuCtxCreate_v3(c: *mut CUcontext, _p: *mut c_void, _n: c_int, flags: c_uint, d: CUdevice) = context::create(c, flags, d);
    "cuCtxCreate" 12050 => cuCtxCreate_v4(c: *mut CUcontext, _p: *mut c_void, flags: c_uint, d: CUdevice) = context::create(c, flags, d);
    "cuCtxDestroy" 4000 => cuCtxDestroy_v2(c: CUcontext) = context::destroy(c);
    "cuCtxPushCurrent" 4000 => cuCtxPushCurrent_v2(c: CUcontext) = context::push(c);
    "cuCtxPopCurrent" 4000 => cuCtxPopCurrent_v2(c: *mut CUcontext) = context::pop(c);
    "cuCtxSetCurrent" 4000 => cuCtxSetCurrent(c: CUcontext) = context::set_current(c);
    "cuCtxGetCurrent" 4000 => cuCtxGetCurrent(c: *mut CUcontext) = out(c, context::current_handle());
    "cuCtxGetDevice" 2000 => cuCtxGetDevice(d: *mut CUdevice) = context::get_device(d, std::ptr::null_mut());
    "cuCtxGetDevice" 13000 => cuCtxGetDevice_v2(d: *mut CUdevice, c: CUcontext) = context::get_device(d, c);
    "cuCtxGetFlags" 7000 => cuCtxGetFlags(f: *mut c_uint) = context::get_flags(f);
    "cuCtxSetFlags" 12010 => cuCtxSetFlags(f: c_uint) = context::set_flags(f);
    "cuCtxGetId" 12000 => cuCtxGetId(c: CUcontext, id: *mut u64) = context::get_id(c, id);
    "cuCtxSynchronize" 2000 => cuCtxSynchronize() = context::synchronize(std::ptr::null_mut());
    "cuCtxSynchronize" 13000 => cuCtxSynchronize_v2(c: CUcontext) = context::synchronize(c);
    "cuCtxSetLimit" 3010 => cuCtxSetLimit(l: c_int, v: usize) = context::set_limit(l, v);
    "cuCtxGetLimit" 3010 => cuCtxGetLimit(v: *mut usize, l: c_int) = context::get_limit(v, l);
    "cuCtxGetCacheConfig" 3020 => cuCtxGetCacheConfig(c: *mut c_int) = context::get_cache_config(c);
    "cuCtxSetCacheConfig" 3020 => cuCtxSetCacheConfig(c: c_int) = context::set_cache_config(c);
    "cuCtxGetApiVersion" 3020 => cuCtxGetApiVersion(c: CUcontext, v: *mut c_uint) = context::api_version(c, v);
    "cuCtxGetStreamPriorityRange" 5050 => cuCtxGetStreamPriorityRange(least: *mut c_int, greatest: *mut c_int) = context::stream_priority_range(least, greatest);
    // ---- memory
    "cuMemGetInfo" 3020 => cuMemGetInfo_v2(free: *mut usize, total: *mut usize) = memory::get_info(free, total);
    "cuMemAlloc" 3020 => cuMemAlloc_v2(p: *mut CUdeviceptr, n: usize) = memory::alloc(p, n);
    "cuMemAllocPitch" 3020 => cuMemAllocPitch_v2(p: *mut CUdeviceptr, pitch: *mut usize, w: usize, h: usize, elem: c_uint) = memory::alloc_pitch(p, pitch, w, h, elem);
    "cuMemFree" 3020 => cuMemFree_v2(p: CUdeviceptr) = memory::free(p);
    "cuMemAllocAsync" 11020 => cuMemAllocAsync(p: *mut CUdeviceptr, n: usize, s: CUstream) [cuMemAllocAsync_ptsz] = memory::alloc_async(p, n, s);
    "cuMemFreeAsync" 11020 => cuMemFreeAsync(p: CUdeviceptr, s: CUstream) [cuMemFreeAsync_ptsz] = memory::free_async(p, s);
    "cuMemGetAddressRange" 3020 => cuMemGetAddressRange_v2(base: *mut CUdeviceptr, size: *mut usize, p: CUdeviceptr) = memory::address_range(base, size, p);
    "cuMemAllocHost" 3020 => cuMemAllocHost_v2(p: *mut *mut c_void, n: usize) = memory::host_alloc(p, n, 0);
    "cuMemHostAlloc" 2020 => cuMemHostAlloc(p: *mut *mut c_void, n: usize, flags: c_uint) = memory::host_alloc(p, n, flags);
    "cuMemFreeHost" 2000 => cuMemFreeHost(p: *mut c_void) = memory::host_free(p);
    "cuMemHostGetDevicePointer" 3020 => cuMemHostGetDevicePointer_v2(d: *mut CUdeviceptr, p: *mut c_void, flags: c_uint) = memory::host_device_pointer(d, p, flags);
    "cuMemHostGetFlags" 2030 => cuMemHostGetFlags(f: *mut c_uint, p: *mut c_void) = memory::host_flags(f, p);
    "cuMemHostRegister" 6050 => cuMemHostRegister_v2(p: *mut c_void, n: usize, flags: c_uint) = memory::host_register(p, n, flags);
    "cuMemHostUnregister" 4000 => cuMemHostUnregister(p: *mut c_void) = memory::host_unregister(p);
    "cuMemAllocManaged" 6000 => cuMemAllocManaged(p: *mut CUdeviceptr, n: usize, flags: c_uint) = memory::alloc_managed(p, n, flags);
    "cuMemPrefetchAsync" 12020 => cuMemPrefetchAsync_v2(p: CUdeviceptr, n: usize, _l: CUmemLocation, _f: c_uint, s: CUstream) [cuMemPrefetchAsync_v2_ptsz] = memory::prefetch(p, n, s);
    "cuMemAdvise" 12020 => cuMemAdvise_v2(p: CUdeviceptr, n: usize, _a: c_int, _l: CUmemLocation) = memory::advise(p, n);
    "cuPointerGetAttribute" 4000 => cuPointerGetAttribute(data: *mut c_void, a: c_int, p: CUdeviceptr) = memory::pointer_attribute(data, a, p);
    "cuPointerGetAttributes" 7000 => cuPointerGetAttributes(n: c_uint, a: *const c_int, data: *mut *mut c_void, p: CUdeviceptr) = memory::pointer_attributes(n, a, data, p);
    "cuMemcpy" 4000 => cuMemcpy(dst: CUdeviceptr, src: CUdeviceptr, n: usize) [cuMemcpy_ptds] = memory::copy(dst, src, n, memory::Dir::Any, std::ptr::null_mut());
    "cuMemcpyAsync" 4000 => cuMemcpyAsync(dst: CUdeviceptr, src: CUdeviceptr, n: usize, s: CUstream) [cuMemcpyAsync_ptsz] = memory::copy(dst, src, n, memory::Dir::Any, s);
    "cuMemcpyHtoD" 3020 => cuMemcpyHtoD_v2(dst: CUdeviceptr, src: *const c_void, n: usize) [cuMemcpyHtoD_v2_ptds] = memory::copy(dst, src as u64, n, memory::Dir::HtoD, std::ptr::null_mut());
    "cuMemcpyDtoH" 3020 => cuMemcpyDtoH_v2(dst: *mut c_void, src: CUdeviceptr, n: usize) [cuMemcpyDtoH_v2_ptds] = memory::copy(dst as u64, src, n, memory::Dir::DtoH, std::ptr::null_mut());
    "cuMemcpyDtoD" 3020 => cuMemcpyDtoD_v2(dst: CUdeviceptr, src: CUdeviceptr, n: usize) [cuMemcpyDtoD_v2_ptds] = memory::copy(dst, src, n, memory::Dir::DtoD, std::ptr::null_mut());
    "cuMemcpyHtoDAsync" 3020 => cuMemcpyHtoDAsync_v2(dst: CUdeviceptr, src: *const c_void, n: usize, s: CUstream) [cuMemcpyHtoDAsync_v2_ptsz] = memory::copy(dst, src as u64, n, memory::Dir::HtoD, s);
    "cuMemcpyDtoHAsync" 3020 => cuMemcpyDtoHAsync_v2(dst: *mut c_void, src: CUdeviceptr, n: usize, s: CUstream) [cuMemcpyDtoHAsync_v2_ptsz] = memory::copy(dst as u64, src, n, memory::Dir::DtoH, s);
    "cuMemcpyDtoDAsync" 3020 => cuMemcpyDtoDAsync_v2(dst: CUdeviceptr, src: CUdeviceptr, n: usize, s: CUstream) [cuMemcpyDtoDAsync_v2_ptsz] = memory::copy(dst, src, n, memory::Dir::DtoD, s);
    "cuMemcpy2D" 3020 => cuMemcpy2D_v2(c: *const Memcpy2D) [cuMemcpy2D_v2_ptds] = memory::copy_2d(c, std::ptr::null_mut());
    "cuMemcpy2DUnaligned" 3020 => cuMemcpy2DUnaligned_v2(c: *const Memcpy2D) [cuMemcpy2DUnaligned_v2_ptds] = memory::copy_2d(c, std::ptr::null_mut());
    "cuMemcpy2DAsync" 3020 => cuMemcpy2DAsync_v2(c: *const Memcpy2D, s: CUstream) [cuMemcpy2DAsync_v2_ptsz] = memory::copy_2d(c, s);
    "cuMemsetD8" 3020 => cuMemsetD8_v2(p: CUdeviceptr, v: u8, n: usize) [cuMemsetD8_v2_ptds] = memory::set(p, n, 1, 0, &[v], std::ptr::null_mut());
    "cuMemsetD16" 3020 => cuMemsetD16_v2(p: CUdeviceptr, v: u16, n: usize) [cuMemsetD16_v2_ptds] = memory::set(p, n, 1, 0, &v.to_ne_bytes(), std::ptr::null_mut());
    "cuMemsetD32" 3020 => cuMemsetD32_v2(p: CUdeviceptr, v: u32, n: usize) [cuMemsetD32_v2_ptds] = memory::set(p, n, 1, 0, &v.to_ne_bytes(), std::ptr::null_mut());
    "cuMemsetD2D8" 3020 => cuMemsetD2D8_v2(p: CUdeviceptr, pitch: usize, v: u8, w: usize, h: usize) [cuMemsetD2D8_v2_ptds] = memory::set(p, w, h, pitch, &[v], std::ptr::null_mut());
    "cuMemsetD2D16" 3020 => cuMemsetD2D16_v2(p: CUdeviceptr, pitch: usize, v: u16, w: usize, h: usize) [cuMemsetD2D16_v2_ptds] = memory::set(p, w, h, pitch, &v.to_ne_bytes(), std::ptr::null_mut());
    "cuMemsetD2D32" 3020 => cuMemsetD2D32_v2(p: CUdeviceptr, pitch: usize, v: u32, w: usize, h: usize) [cuMemsetD2D32_v2_ptds] = memory::set(p, w, h, pitch, &v.to_ne_bytes(), std::ptr::null_mut());
    "cuMemsetD8Async" 3020 => cuMemsetD8Async(p: CUdeviceptr, v: u8, n: usize, s: CUstream) [cuMemsetD8Async_ptsz] = memory::set(p, n, 1, 0, &[v], s);
    "cuMemsetD16Async" 3020 => cuMemsetD16Async(p: CUdeviceptr, v: u16, n: usize, s: CUstream) [cuMemsetD16Async_ptsz] = memory::set(p, n, 1, 0, &v.to_ne_bytes(), s);
    "cuMemsetD32Async" 3020 => cuMemsetD32Async(p: CUdeviceptr, v: u32, n: usize, s: CUstream) [cuMemsetD32Async_ptsz] = memory::set(p, n, 1, 0, &v.to_ne_bytes(), s);
    "cuMemsetD2D8Async" 3020 => cuMemsetD2D8Async(p: CUdeviceptr, pitch: usize, v: u8, w: usize, h: usize, s: CUstream) [cuMemsetD2D8Async_ptsz] = memory::set(p, w, h, pitch, &[v], s);
    "cuMemsetD2D16Async" 3020 => cuMemsetD2D16Async(p: CUdeviceptr, pitch: usize, v: u16, w: usize, h: usize, s: CUstream) [cuMemsetD2D16Async_ptsz] = memory::set(p, w, h, pitch, &v.to_ne_bytes(), s);
    "cuMemsetD2D32Async" 3020 => cuMemsetD2D32Async(p: CUdeviceptr, pitch: usize, v: u32, w: usize, h: usize, s: CUstream) [cuMemsetD2D32Async_ptsz] = memory::set(p, w, h, pitch, &v.to_ne_bytes(), s);
    // ---- IPC
    "cuIpcGetMemHandle" 4010 => cuIpcGetMemHandle(h: *mut IpcHandle, p: CUdeviceptr) = ipc::get_mem_handle(h, p);
    "cuIpcOpenMemHandle" 4010 => cuIpcOpenMemHandle(p: *mut CUdeviceptr, h: IpcHandle, flags: c_uint) = ipc::open_mem_handle(p, h, flags);
    "cuIpcOpenMemHandle" 11000 => cuIpcOpenMemHandle_v2(p: *mut CUdeviceptr, h: IpcHandle, flags: c_uint) = ipc::open_mem_handle(p, h, flags);
    "cuIpcCloseMemHandle" 4010 => cuIpcCloseMemHandle(p: CUdeviceptr) = ipc::close_mem_handle(p);
    "cuIpcGetEventHandle" 4010 => cuIpcGetEventHandle(h: *mut IpcHandle, e: CUevent) = ipc::get_event_handle(h, e);
    "cuIpcOpenEventHandle" 4010 => cuIpcOpenEventHandle(e: *mut CUevent, h: IpcHandle) = ipc::open_event_handle(e, h);
    // ---- modules, libraries, functions, kernels
    "cuModuleLoad" 2000 => cuModuleLoad(m: *mut CUmodule, path: *const c_char) = module::load_file(m, path);
    "cuModuleLoadData" 2000 => cuModuleLoadData(m: *mut CUmodule, image: *const c_void) = module::load_data(m, image, module::JitOptions::none());
    "cuModuleLoadDataEx" 2010 => cuModuleLoadDataEx(m: *mut CUmodule, image: *const c_void, n: c_uint, o: *const c_int, v: *mut *mut c_void) = module::load_data(m, image, module::JitOptions::new(n, o, v));
    "cuModuleLoadFatBinary" 2000 => cuModuleLoadFatBinary(m: *mut CUmodule, image: *const c_void) = module::load_data(m, image, module::JitOptions::none());
    "cuModuleUnload" 2000 => cuModuleUnload(m: CUmodule) = module::unload(m);
    "cuModuleGetFunction" 2000 => cuModuleGetFunction(f: *mut CUfunction, m: CUmodule, name: *const c_char) = module::get_function(f, m, name);
    "cuModuleGetFunctionCount" 12040 => cuModuleGetFunctionCount(n: *mut c_uint, m: CUmodule) = module::function_count(n, m);
    "cuModuleGetGlobal" 3020 => cuModuleGetGlobal_v2(p: *mut CUdeviceptr, size: *mut usize, m: CUmodule, name: *const c_char) = module::get_global(p, size, m, name);
    "cuModuleGetLoadingMode" 11070 => cuModuleGetLoadingMode(mode: *mut c_int) = out(mode, 1);
    "cuLibraryLoadData" 12000 => cuLibraryLoadData(l: *mut CUlibrary, code: *const c_void, o: *const c_int, v: *mut *mut c_void, n: c_uint, _lo: *mut c_void, _lv: *mut *mut c_void, _ln: c_uint) = module::load_data(l, code, module::JitOptions::new(n, o, v));
    "cuLibraryLoadFromFile" 12000 => cuLibraryLoadFromFile(l: *mut CUlibrary, path: *const c_char, _o: *const c_int, _v: *mut *mut c_void, _n: c_uint, _lo: *mut c_void, _lv: *mut *mut c_void, _ln: c_uint) = module::load_file(l, path);
    "cuLibraryUnload" 12000 => cuLibraryUnload(l: CUlibrary) = module::unload(l);
    "cuLibraryGetKernel" 12000 => cuLibraryGetKernel(k: *mut CUkernel, l: CUlibrary, name: *const c_char) = module::get_function(k, l, name);
    "cuLibraryGetModule" 12000 => cuLibraryGetModule(m: *mut CUmodule, l: CUlibrary) = module::library_module(m, l);
    "cuLibraryGetGlobal" 12000 => cuLibraryGetGlobal(p: *mut CUdeviceptr, size: *mut usize, l: CUlibrary, name: *const c_char) = module::get_global(p, size, l, name);
    "cuLibraryGetKernelCount" 12040 => cuLibraryGetKernelCount(n: *mut c_uint, l: CUlibrary) = module::function_count(n, l);
    "cuKernelGetFunction" 12000 => cuKernelGetFunction(f: *mut CUfunction, k: CUkernel) = module::kernel_function(f, k);
    "cuKernelGetAttribute" 12000 => cuKernelGetAttribute(v: *mut c_int, a: c_int, k: CUkernel, _d: CUdevice) = module::get_attribute(v, a, k);
    "cuKernelSetAttribute" 12000 => cuKernelSetAttribute(a: c_int, v: c_int, k: CUkernel, _d: CUdevice) = module::set_attribute(k, a, v);
    "cuKernelGetName" 12030 => cuKernelGetName(name: *mut *const c_char, k: CUkernel) = module::get_name(name, k);
    "cuKernelGetLibrary" 12050 => cuKernelGetLibrary(l: *mut CUlibrary, k: CUkernel) = module::get_module(l, k);
    "cuKernelGetParamInfo" 12040 => cuKernelGetParamInfo(k: CUkernel, i: usize, off: *mut usize, size: *mut usize) = module::param_info(k, i, off, size);
    "cuFuncGetAttribute" 2020 => cuFuncGetAttribute(v: *mut c_int, a: c_int, f: CUfunction) = module::get_attribute(v, a, f);
    "cuFuncSetAttribute" 9000 => cuFuncSetAttribute(f: CUfunction, a: c_int, v: c_int) = module::set_attribute(f, a, v);
    "cuFuncSetCacheConfig" 3000 => cuFuncSetCacheConfig(f: CUfunction, c: c_int) = module::set_cache_config(f, c);
    "cuKernelSetCacheConfig" 12000 => cuKernelSetCacheConfig(k: CUkernel, c: c_int, _d: CUdevice) = module::set_cache_config(k, c);
    "cuFuncSetSharedMemConfig" 4020 => cuFuncSetSharedMemConfig(f: CUfunction, c: c_int) = module::set_shared_mem_config(f, c);
    "cuCtxGetSharedMemConfig" 4020 => cuCtxGetSharedMemConfig(c: *mut c_int) = crate::context::current().and_then(|_| out(c, 0));
    "cuCtxSetSharedMemConfig" 4020 => cuCtxSetSharedMemConfig(c: c_int) = crate::context::current().and_then(|_| module::shared_mem_config(c));
    "cuFuncGetName" 12030 => cuFuncGetName(name: *mut *const c_char, f: CUfunction) = module::get_name(name, f);
    "cuFuncGetModule" 11000 => cuFuncGetModule(m: *mut CUmodule, f: CUfunction) = module::get_module(m, f);
    "cuFuncGetParamInfo" 12040 => cuFuncGetParamInfo(f: CUfunction, i: usize, off: *mut usize, size: *mut usize) = module::param_info(f, i, off, size);
    "cuFuncGetParamCount" 13020 => cuFuncGetParamCount(f: CUfunction, n: *mut usize) = module::param_count(f, n);
    "cuFuncIsLoaded" 12040 => cuFuncIsLoaded(state: *mut c_int, f: CUfunction) = module::check_function(f).and_then(|()| out(state, 1));
    "cuFuncLoad" 12040 => cuFuncLoad(f: CUfunction) = module::check_function(f);
    // ---- linker
    "cuLinkCreate" 6050 => cuLinkCreate_v2(n: c_uint, o: *const c_int, v: *mut *mut c_void, state: *mut CUlinkState) = link::create(n, o, v, state);
    "cuLinkAddData" 6050 => cuLinkAddData_v2(state: CUlinkState, kind: c_int, data: *const c_void, size: usize, name: *const c_char, _n: c_uint, _o: *const c_int, _v: *mut *mut c_void) = link::add_data(state, kind, data, size, name);
    "cuLinkAddFile" 6050 => cuLinkAddFile_v2(state: CUlinkState, kind: c_int, path: *const c_char, _n: c_uint, _o: *const c_int, _v: *mut *mut c_void) = link::add_file(state, kind, path);
    "cuLinkComplete" 5050 => cuLinkComplete(state: CUlinkState, image: *mut *const c_void, size: *mut usize) = link::complete(state, image, size);
    "cuLinkDestroy" 5050 => cuLinkDestroy(state: CUlinkState) = link::destroy(state);
    // ---- launches
    "cuLaunchKernel" 4000 => cuLaunchKernel(f: CUfunction, gx: c_uint, gy: c_uint, gz: c_uint, bx: c_uint, by: c_uint, bz: c_uint, shared: c_uint, s: CUstream, params: *mut *mut c_void, extra: *mut *mut c_void) [cuLaunchKernel_ptsz] = launch::launch(f, [gx, gy, gz], [bx, by, bz], shared, s, params, extra, launch::Kind::Normal);
    "cuLaunchKernelEx" 11060 => cuLaunchKernelEx(cfg: *const CUlaunchConfig, f: CUfunction, params: *mut *mut c_void, extra: *mut *mut c_void) [cuLaunchKernelEx_ptsz] = launch::launch_ex(cfg, f, params, extra);
    "cuLaunchCooperativeKernel" 9000 => cuLaunchCooperativeKernel(f: CUfunction, gx: c_uint, gy: c_uint, gz: c_uint, bx: c_uint, by: c_uint, bz: c_uint, shared: c_uint, s: CUstream, params: *mut *mut c_void) [cuLaunchCooperativeKernel_ptsz] = launch::launch(f, [gx, gy, gz], [bx, by, bz], shared, s, params, std::ptr::null_mut(), launch::Kind::Cooperative);
    "cuLaunchHostFunc" 10000 => cuLaunchHostFunc(s: CUstream, f: HostFn, data: *mut c_void) [cuLaunchHostFunc_ptsz] = stream::host_func(s, f, data);
    "cuLaunchHostFunc" 13010 => cuLaunchHostFunc_v2(s: CUstream, f: HostFn, data: *mut c_void, _mode: c_uint) [cuLaunchHostFunc_v2_ptsz] = stream::host_func(s, f, data);
    // ---- streams
    "cuStreamCreate" 2000 => cuStreamCreate(s: *mut CUstream, flags: c_uint) = stream::create(s, flags, 0);
    "cuStreamCreateWithPriority" 5050 => cuStreamCreateWithPriority(s: *mut CUstream, flags: c_uint, prio: c_int) = stream::create(s, flags, prio);
    "cuStreamDestroy" 4000 => cuStreamDestroy_v2(s: CUstream) = stream::destroy(s);
    "cuStreamQuery" 2000 => cuStreamQuery(s: CUstream) [cuStreamQuery_ptsz] = stream::synchronize(s);
    "cuStreamSynchronize" 2000 => cuStreamSynchronize(s: CUstream) [cuStreamSynchronize_ptsz] = stream::synchronize(s);
    "cuStreamWaitEvent" 3020 => cuStreamWaitEvent(s: CUstream, e: CUevent, _flags: c_uint) [cuStreamWaitEvent_ptsz] = stream::wait_event(s, e);
    "cuStreamAddCallback" 5000 => cuStreamAddCallback(s: CUstream, cb: StreamCallback, data: *mut c_void, flags: c_uint) [cuStreamAddCallback_ptsz] = stream::add_callback(s, cb, data, flags);
    "cuStreamGetPriority" 5050 => cuStreamGetPriority(s: CUstream, p: *mut c_int) [cuStreamGetPriority_ptsz] = stream::priority(s, p);
    "cuStreamGetFlags" 5050 => cuStreamGetFlags(s: CUstream, f: *mut c_uint) [cuStreamGetFlags_ptsz] = stream::flags(s, f);
    "cuStreamGetCtx" 9020 => cuStreamGetCtx(s: CUstream, c: *mut CUcontext) [cuStreamGetCtx_ptsz] = stream::context(s, c, std::ptr::null_mut());
    "cuStreamGetCtx" 12050 => cuStreamGetCtx_v2(s: CUstream, c: *mut CUcontext, g: *mut *mut c_void) [cuStreamGetCtx_v2_ptsz] = stream::context(s, c, g);
    "cuStreamGetId" 12000 => cuStreamGetId(s: CUstream, id: *mut u64) [cuStreamGetId_ptsz] = stream::id(s, id);
    "cuStreamGetDevice" 12080 => cuStreamGetDevice(s: CUstream, d: *mut CUdevice) [cuStreamGetDevice_ptsz] = stream::device(s, d);
    "cuStreamAttachMemAsync" 6000 => cuStreamAttachMemAsync(s: CUstream, _p: CUdeviceptr, _n: usize, _f: c_uint) [cuStreamAttachMemAsync_ptsz] = stream::synchronize(s);
    "cuStreamIsCapturing" 10000 => cuStreamIsCapturing(s: CUstream, st: *mut c_int) [cuStreamIsCapturing_ptsz] = stream::is_capturing(s, st);
    // ---- stream capture and graphs
    "cuStreamBeginCapture" 10000 => cuStreamBeginCapture(s: CUstream) [cuStreamBeginCapture_ptsz] = stream::begin_capture(s, 0);
    "cuStreamBeginCapture" 10010 => cuStreamBeginCapture_v2(s: CUstream, mode: c_int) [cuStreamBeginCapture_v2_ptsz] = stream::begin_capture(s, mode);
    "cuStreamEndCapture" 10000 => cuStreamEndCapture(s: CUstream, g: *mut CUgraph) [cuStreamEndCapture_ptsz] = graph::end_capture(s, g);
    "cuStreamGetCaptureInfo" 10010 => cuStreamGetCaptureInfo(s: CUstream, st: *mut c_int, id: *mut u64) [cuStreamGetCaptureInfo_ptsz] = graph::capture_info(s, st, id, std::ptr::null_mut(), std::ptr::null_mut(), std::ptr::null_mut(), std::ptr::null_mut());
    "cuStreamGetCaptureInfo" 11030 => cuStreamGetCaptureInfo_v2(s: CUstream, st: *mut c_int, id: *mut u64, g: *mut CUgraph, deps: *mut *const CUgraphNode, n: *mut usize) [cuStreamGetCaptureInfo_v2_ptsz] = graph::capture_info(s, st, id, g, deps, std::ptr::null_mut(), n);
    "cuStreamGetCaptureInfo" 12030 => cuStreamGetCaptureInfo_v3(s: CUstream, st: *mut c_int, id: *mut u64, g: *mut CUgraph, deps: *mut *const CUgraphNode, edges: *mut *const c_void, n: *mut usize) [cuStreamGetCaptureInfo_v3_ptsz] = graph::capture_info(s, st, id, g, deps, edges, n);
    "cuThreadExchangeStreamCaptureMode" 10010 => cuThreadExchangeStreamCaptureMode(mode: *mut c_int) = graph::exchange_mode(mode);
    "cuGraphCreate" 10000 => cuGraphCreate(g: *mut CUgraph, flags: c_uint) = graph::create(g, flags);
    "cuGraphDestroy" 10000 => cuGraphDestroy(g: CUgraph) = graph::destroy(g);
    "cuGraphAddKernelNode" 10000 => cuGraphAddKernelNode(node: *mut CUgraphNode, g: CUgraph, deps: *const CUgraphNode, n: usize, p: *const KernelNodeParams) = graph::add_kernel_node(node, g, deps, n, p, false);
    "cuGraphAddKernelNode" 12000 => cuGraphAddKernelNode_v2(node: *mut CUgraphNode, g: CUgraph, deps: *const CUgraphNode, n: usize, p: *const KernelNodeParams) = graph::add_kernel_node(node, g, deps, n, p, true);
    "cuGraphAddMemsetNode" 10000 => cuGraphAddMemsetNode(node: *mut CUgraphNode, g: CUgraph, deps: *const CUgraphNode, n: usize, p: *const MemsetNodeParams, _ctx: CUcontext) = graph::add_memset_node(node, g, deps, n, p);
    "cuGraphAddMemcpyNode" 10000 => cuGraphAddMemcpyNode(node: *mut CUgraphNode, g: CUgraph, deps: *const CUgraphNode, n: usize, p: *const Memcpy3D, _ctx: CUcontext) = graph::add_memcpy_node(node, g, deps, n, p);
    "cuGraphAddHostNode" 10000 => cuGraphAddHostNode(node: *mut CUgraphNode, g: CUgraph, deps: *const CUgraphNode, n: usize, p: *const HostNodeParams) = graph::add_host_node(node, g, deps, n, p);
    "cuGraphAddEmptyNode" 10000 => cuGraphAddEmptyNode(node: *mut CUgraphNode, g: CUgraph, deps: *const CUgraphNode, n: usize) = graph::add_empty_node(node, g, deps, n);
    "cuGraphGetNodes" 10000 => cuGraphGetNodes(g: CUgraph, nodes: *mut CUgraphNode, n: *mut usize) = graph::get_nodes(g, nodes, n);
    "cuGraphNodeGetType" 10000 => cuGraphNodeGetType(node: CUgraphNode, t: *mut c_int) = graph::node_type(node, t);
    "cuGraphInstantiate" 10000 => cuGraphInstantiate(e: *mut CUgraphExec, g: CUgraph, err: *mut CUgraphNode, log: *mut u8, size: usize) = graph::instantiate_with_log(e, g, err, log, size);
    "cuGraphInstantiate" 11000 => cuGraphInstantiate_v2(e: *mut CUgraphExec, g: CUgraph, err: *mut CUgraphNode, log: *mut u8, size: usize) = graph::instantiate_with_log(e, g, err, log, size);
    "cuGraphInstantiateWithFlags" 11040 => cuGraphInstantiateWithFlags(e: *mut CUgraphExec, g: CUgraph, _flags: u64) = graph::instantiate(e, g);
    "cuGraphInstantiateWithParams" 12000 => cuGraphInstantiateWithParams(e: *mut CUgraphExec, g: CUgraph, p: *mut InstantiateParams) [cuGraphInstantiateWithParams_ptsz] = graph::instantiate_with_params(e, g, p);
    "cuGraphLaunch" 10000 => cuGraphLaunch(e: CUgraphExec, s: CUstream) [cuGraphLaunch_ptsz] = graph::launch(e, s);
    "cuGraphUpload" 11010 => cuGraphUpload(e: CUgraphExec, s: CUstream) [cuGraphUpload_ptsz] = graph::upload(e, s);
    "cuGraphExecDestroy" 10000 => cuGraphExecDestroy(e: CUgraphExec) = graph::exec_destroy(e);
    "cuUserObjectCreate" 11030 => cuUserObjectCreate(u: *mut CUuserObject, p: *mut c_void, destroy: HostFn, refs: c_uint, flags: c_uint) = graph::user_object_create(u, p, destroy, refs, flags);
    "cuUserObjectRetain" 11030 => cuUserObjectRetain(u: CUuserObject, n: c_uint) = graph::user_object_retain(u, n);
    "cuUserObjectRelease" 11030 => cuUserObjectRelease(u: CUuserObject, n: c_uint) = graph::user_object_release(u, n);
    "cuGraphRetainUserObject" 11030 => cuGraphRetainUserObject(g: CUgraph, u: CUuserObject, n: c_uint, flags: c_uint) = graph::graph_retain_user_object(g, u, n, flags);
    "cuGraphReleaseUserObject" 11030 => cuGraphReleaseUserObject(g: CUgraph, u: CUuserObject, n: c_uint) = graph::graph_release_user_object(g, u, n);
    // ---- events
    "cuEventCreate" 2000 => cuEventCreate(e: *mut CUevent, flags: c_uint) = stream::event_create(e, flags);
    "cuEventRecord" 2000 => cuEventRecord(e: CUevent, s: CUstream) [cuEventRecord_ptsz] = stream::event_record(e, s);
    "cuEventRecordWithFlags" 11010 => cuEventRecordWithFlags(e: CUevent, s: CUstream, _f: c_uint) [cuEventRecordWithFlags_ptsz] = stream::event_record(e, s);
    "cuEventQuery" 2000 => cuEventQuery(e: CUevent) = stream::event_check(e);
    "cuEventSynchronize" 2000 => cuEventSynchronize(e: CUevent) = stream::event_synchronize(e);
    "cuEventDestroy" 4000 => cuEventDestroy_v2(e: CUevent) = stream::event_destroy(e);
    "cuEventElapsedTime" 2000 => cuEventElapsedTime(ms: *mut f32, a: CUevent, b: CUevent) = stream::elapsed(ms, a, b);
    "cuEventElapsedTime" 12080 => cuEventElapsedTime_v2(ms: *mut f32, a: CUevent, b: CUevent) = stream::elapsed(ms, a, b);
    // ---- occupancy, profiler
    "cuOccupancyMaxActiveBlocksPerMultiprocessor" 6050 => cuOccupancyMaxActiveBlocksPerMultiprocessor(n: *mut c_int, f: CUfunction, block: c_int, shared: usize) = occupancy::active_blocks(n, f, block, shared);
    "cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags" 7000 => cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(n: *mut c_int, f: CUfunction, block: c_int, shared: usize, _flags: c_uint) = occupancy::active_blocks(n, f, block, shared);
    "cuOccupancyMaxPotentialBlockSize" 6050 => cuOccupancyMaxPotentialBlockSize(grid: *mut c_int, block: *mut c_int, f: CUfunction, smem: B2DSize, shared: usize, limit: c_int) = occupancy::potential_block_size(grid, block, f, smem, shared, limit);
    "cuOccupancyMaxPotentialBlockSizeWithFlags" 7000 => cuOccupancyMaxPotentialBlockSizeWithFlags(grid: *mut c_int, block: *mut c_int, f: CUfunction, smem: B2DSize, shared: usize, limit: c_int, _flags: c_uint) = occupancy::potential_block_size(grid, block, f, smem, shared, limit);
    "cuOccupancyAvailableDynamicSMemPerBlock" 10020 => cuOccupancyAvailableDynamicSMemPerBlock(n: *mut usize, f: CUfunction, blocks: c_int, block: c_int) = occupancy::available_shared(n, f, blocks, block);
    "cuProfilerStart" 4000 => cuProfilerStart() = Ok(());
    "cuProfilerStop" 4000 => cuProfilerStop() = Ok(());
}

/// `cuGetProcAddress(_v2)`: the entry named `symbol` for a caller built against CUDA
/// `version`, per-thread-default-stream twin when `flags` asks for it.
///
/// # Safety
/// `symbol` a C string; `pfn` and `status` null or writable.
unsafe fn proc_address(
    symbol: *const c_char,
    pfn: *mut *const c_void,
    version: c_int,
    flags: u64,
    status: *mut c_int,
) -> CuResult {
    crate::non_null(symbol)?;
    crate::non_null(pfn)?;
    // SAFETY: checked non-null; a C string by contract.
    let name = unsafe { CStr::from_ptr(symbol) }.to_str().unwrap_or("");
    let (found, why) = lookup(name, version, flags);
    // SAFETY: checked non-null.
    unsafe { *pfn = found.map_or(std::ptr::null(), |e| e.addr.0) };
    if !status.is_null() {
        // SAFETY: non-null and writable by contract.
        unsafe { *status = why as c_int };
    }
    // A miss with a status to write is answered as the real driver answers it (measured with
    // cuda/tests/c/driver_api.c on an H200, driver 580): CUDA_SUCCESS, a null function and the
    // reason in the status; without one, the documented CUDA_ERROR_NOT_FOUND.
    match found {
        Some(_) => Ok(()),
        None if !status.is_null() => Ok(()),
        None => Err(CUresult::ErrorNotFound),
    }
}

/// The entry `cuGetProcAddress` answers for `name` at `version` with `flags`, and the query
/// result to report.
pub fn lookup(
    name: &str,
    version: c_int,
    flags: u64,
) -> (Option<&'static Entry>, ProcAddressQuery) {
    let mut any = false;
    let mut best: Option<&Entry> = None;
    for e in TABLE.iter().filter(|e| e.name == name && !e.per_thread) {
        any = true;
        if e.since <= version && best.is_none_or(|b| e.since > b.since) {
            best = Some(e);
        }
    }
    let Some(best) = best else {
        let why = if any {
            ProcAddressQuery::VersionNotSufficient
        } else {
            ProcAddressQuery::SymbolNotFound
        };
        return (None, why);
    };
    let twin = (flags & CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM != 0)
        .then(|| {
            TABLE
                .iter()
                .find(|e| e.per_thread && e.name == name && e.since == best.since)
        })
        .flatten();
    (Some(twin.unwrap_or(best)), ProcAddressQuery::Success)
}
