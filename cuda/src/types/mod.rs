//! The C types of the driver API (from NVIDIA's public `cuda.h`): handles, structs, flags, and
//! the generated enums of `gen.rs`.

use std::ffi::{c_int, c_uint, c_void};

mod gen;
pub use gen::*;

pub type CUdevice = c_int;
pub type CUdeviceptr = u64;
pub type CUcontext = *mut c_void;
pub type CUmodule = *mut c_void;
pub type CUlibrary = *mut c_void;
pub type CUfunction = *mut c_void;
pub type CUkernel = *mut c_void;
pub type CUstream = *mut c_void;
pub type CUevent = *mut c_void;
pub type CUlinkState = *mut c_void;
pub type CUgraph = *mut c_void;
pub type CUgraphNode = *mut c_void;
pub type CUgraphExec = *mut c_void;
pub type CUuserObject = *mut c_void;

/// `CUuuid`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct CUuuid {
    pub bytes: [u8; 16],
}

/// `CUdevprop` (legacy device properties).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct CUdevprop {
    pub max_threads_per_block: c_int,
    pub max_threads_dim: [c_int; 3],
    pub max_grid_size: [c_int; 3],
    pub shared_mem_per_block: c_int,
    pub total_constant_memory: c_int,
    pub simd_width: c_int,
    pub mem_pitch: c_int,
    pub regs_per_block: c_int,
    pub clock_rate: c_int,
    pub texture_align: c_int,
}

/// `CUlaunchAttribute`: an id, padding, and a 64-byte value union (read by id).
#[repr(C)]
#[derive(Clone, Copy)]
pub struct CUlaunchAttribute {
    pub id: c_int,
    pub pad: [u8; 4],
    pub value: [u64; 8],
}

/// `CUlaunchConfig`.
#[repr(C)]
pub struct CUlaunchConfig {
    pub grid: [c_uint; 3],
    pub block: [c_uint; 3],
    pub shared_mem_bytes: c_uint,
    pub stream: CUstream,
    pub attrs: *const CUlaunchAttribute,
    pub num_attrs: c_uint,
}

/// `CUmemLocation` (type and id), as `cuMemPrefetchAsync_v2`/`cuMemAdvise_v2` pass it by value.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct CUmemLocation {
    pub kind: c_int,
    pub id: c_int,
}

/// `CUDA_MEMCPY2D` (`_v2`: sizes as `size_t`).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct Memcpy2D {
    pub src_x: usize,
    pub src_y: usize,
    pub src_type: c_int,
    pub src_host: *const c_void,
    pub src_device: CUdeviceptr,
    pub src_array: *mut c_void,
    pub src_pitch: usize,
    pub dst_x: usize,
    pub dst_y: usize,
    pub dst_type: c_int,
    pub dst_host: *mut c_void,
    pub dst_device: CUdeviceptr,
    pub dst_array: *mut c_void,
    pub dst_pitch: usize,
    pub width: usize,
    pub height: usize,
}

/// `CUstreamCallback`.
pub type StreamCallback = Option<unsafe extern "C" fn(CUstream, CUresult, *mut c_void)>;
/// `CUhostFn`.
pub type HostFn = Option<unsafe extern "C" fn(*mut c_void)>;
/// `CUoccupancyB2DSize`.
pub type B2DSize = Option<unsafe extern "C" fn(c_int) -> usize>;

/// The special stream handles of `cuda.h`.
pub const CU_STREAM_LEGACY: usize = 1;
pub const CU_STREAM_PER_THREAD: usize = 2;

/// `CUstream_flags`: `CU_STREAM_NON_BLOCKING`.
pub const CU_STREAM_NON_BLOCKING: c_uint = 1;
/// `CUevent_flags`: `CU_EVENT_DISABLE_TIMING`.
pub const CU_EVENT_DISABLE_TIMING: c_uint = 2;
/// `cuMemHostAlloc` flags: `CU_MEMHOSTALLOC_PORTABLE | DEVICEMAP | WRITECOMBINED`.
pub const CU_MEMHOSTALLOC_ALL: c_uint = 0x7;
/// `cuMemHostRegister` flags: `PORTABLE | DEVICEMAP | IOMEMORY | READ_ONLY`.
pub const CU_MEMHOSTREGISTER_ALL: c_uint = 0xf;
/// `CUmemAttach_flags`: `CU_MEM_ATTACH_GLOBAL`, `CU_MEM_ATTACH_HOST`.
pub const CU_MEM_ATTACH_GLOBAL: c_uint = 1;
pub const CU_MEM_ATTACH_HOST: c_uint = 2;
/// `CUdriverProcAddress_flags`: `CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM`.
pub const CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM: u64 = 2;
/// `CU_LAUNCH_PARAM_*` keys of `cuLaunchKernel`'s `extra` array.
pub const CU_LAUNCH_PARAM_END: usize = 0;
pub const CU_LAUNCH_PARAM_BUFFER_POINTER: usize = 1;
pub const CU_LAUNCH_PARAM_BUFFER_SIZE: usize = 2;
/// `CUctx_flags`: the scheduling bits and the rest of the valid flags.
pub const CU_CTX_FLAGS_MASK: c_uint = 0xff;
