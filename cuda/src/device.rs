//! The one device: the host's cores and memory, presented as a compute capability 8.9 GPU (the
//! highest the cpu target runs completely: sm_89 adds to sm_86 only the 8-bit float `cvt` and
//! `mma` forms, which it runs; 9.x needs wgmma/TMA). Attributes describe what this library
//! and the cpu target really do: device memory is host memory (integrated, unified
//! addressing, pageable memory access), one "multiprocessor" per core, 48 KiB of shared
//! memory per block by default and up to 163 KiB (8.0's limit, above 8.9's 99 KiB) on
//! request; the per-multiprocessor limits are also 8.0's.

use std::ffi::{c_char, c_int, c_uint, c_void, CStr};

use crate::types::{CUdevice, CUdevprop, CUresult, CUuuid, DeviceAttr};
use crate::{out, CuResult};

/// Compute capability reported (major, minor).
pub const CC: (c_int, c_int) = (8, 9);
/// Shared memory per block without opting in (`cuFuncSetAttribute`), bytes.
pub const SHARED_PER_BLOCK: u32 = 48 * 1024;
/// Shared memory per block with opt-in (compute capability 8.0's, which the cpu target
/// allows), bytes.
pub const SHARED_PER_BLOCK_OPTIN: u32 = 163 * 1024;
/// Shared memory per multiprocessor (compute capability 8.0's), bytes.
pub const SHARED_PER_SM: u32 = 164 * 1024;
/// Threads per block and per multiprocessor, blocks per multiprocessor.
pub const MAX_THREADS_PER_BLOCK: u32 = 1024;
pub const MAX_THREADS_PER_SM: u32 = 2048;
pub const MAX_BLOCKS_PER_SM: u32 = 32;
pub const REGISTERS_PER_SM: u32 = 65536;
/// `.const` bank size.
pub const CONSTANT_MEMORY: c_int = 64 * 1024;

/// `Err(CUDA_ERROR_INVALID_DEVICE)` unless `d` is device 0.
pub fn check(d: CUdevice) -> CuResult {
    if d == 0 {
        Ok(())
    } else {
        Err(CUresult::ErrorInvalidDevice)
    }
}

/// Multiprocessors: the cores kernels run on.
pub fn sm_count() -> c_int {
    std::thread::available_parallelism().map_or(1, |n| n.get()) as c_int
}

/// Physical memory, bytes.
pub fn total_memory() -> usize {
    // SAFETY: sysconf only reads system configuration.
    let (pages, size) = unsafe {
        (
            libc::sysconf(libc::_SC_PHYS_PAGES),
            libc::sysconf(libc::_SC_PAGESIZE),
        )
    };
    (pages.max(0) as usize).saturating_mul(size.max(0) as usize)
}

/// Memory available to new allocations, bytes (`MemAvailable` of /proc/meminfo).
pub fn free_memory() -> usize {
    std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("MemAvailable:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<usize>().ok())
        })
        .map_or(total_memory() / 2, |kb| kb * 1024)
}

/// The device name: says what runs the kernels.
pub fn device_name() -> String {
    let cpu = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("model name"))
                .map(|v| v.trim_start_matches([' ', '\t', ':']).trim().to_string())
        })
        .unwrap_or_else(|| std::env::consts::ARCH.to_string());
    format!("ptx2llvm CPU ({cpu})")
}

/// `cuDeviceGet`.
///
/// # Safety
/// `d` null or writable.
pub unsafe fn get(d: *mut CUdevice, ordinal: c_int) -> CuResult {
    crate::non_null(d)?;
    check(ordinal)?;
    // SAFETY: checked above.
    unsafe { out(d, 0) }
}

/// `cuDeviceGetName`: truncated to `len` bytes with the NUL.
///
/// # Safety
/// `name` null or writable for `len` bytes.
pub unsafe fn name(name: *mut c_char, len: c_int, d: CUdevice) -> CuResult {
    crate::non_null(name)?;
    check(d)?;
    if len <= 0 {
        return Err(CUresult::ErrorInvalidValue);
    }
    let s = device_name();
    let n = s.len().min(len as usize - 1);
    // SAFETY: `name` has `len` > n bytes.
    unsafe {
        std::ptr::copy_nonoverlapping(s.as_ptr(), name as *mut u8, n);
        *name.add(n) = 0;
    }
    Ok(())
}

/// `cuDeviceGetUuid(_v2)`: stable for the machine (derived from /etc/machine-id, else the host
/// name), a version-4-shaped UUID.
///
/// # Safety
/// `u` null or writable.
pub unsafe fn uuid(u: *mut CUuuid, d: CUdevice) -> CuResult {
    crate::non_null(u)?;
    check(d)?;
    let seed = std::fs::read_to_string("/etc/machine-id")
        .or_else(|_| std::fs::read_to_string("/proc/sys/kernel/hostname"))
        .unwrap_or_default();
    // FNV-1a over the seed, twice with different offsets, for 16 bytes.
    let fnv = |basis: u64| {
        seed.bytes()
            .fold(basis, |h, b| (h ^ b as u64).wrapping_mul(0x100_0000_01b3))
    };
    let mut bytes = [0u8; 16];
    bytes[..8].copy_from_slice(&fnv(0xcbf2_9ce4_8422_2325).to_le_bytes());
    bytes[8..].copy_from_slice(&fnv(0x6c62_272e_07bb_0142).to_le_bytes());
    bytes[6] = (bytes[6] & 0x0f) | 0x40;
    bytes[8] = (bytes[8] & 0x3f) | 0x80;
    // SAFETY: checked non-null.
    unsafe { out(u, CUuuid { bytes }) }
}

/// `cuDeviceGetLuid`: a Windows concept; not supported.
///
/// # Safety
/// Pointers unused.
pub unsafe fn luid(_luid: *mut c_char, _mask: *mut c_uint, d: CUdevice) -> CuResult {
    check(d)?;
    Err(CUresult::ErrorNotSupported)
}

/// `cuDeviceTotalMem_v2`.
///
/// # Safety
/// `b` null or writable.
pub unsafe fn total_mem(b: *mut usize, d: CUdevice) -> CuResult {
    check(d)?;
    // SAFETY: `out` checks null.
    unsafe { out(b, total_memory()) }
}

/// The value of attribute `a` (`None`: not an attribute of `cuda.h`).
pub fn attribute_value(a: c_int) -> Option<c_int> {
    use DeviceAttr as A;
    let a = A::from_raw(a)?;
    let v: c_int = match a {
        A::MaxThreadsPerBlock => MAX_THREADS_PER_BLOCK as c_int,
        A::MaxBlockDimX | A::MaxBlockDimY => 1024,
        A::MaxBlockDimZ => 64,
        A::MaxGridDimX => i32::MAX,
        A::MaxGridDimY | A::MaxGridDimZ => 65535,
        A::MaxSharedMemoryPerBlock => SHARED_PER_BLOCK as c_int,
        A::MaxSharedMemoryPerBlockOptin => SHARED_PER_BLOCK_OPTIN as c_int,
        A::MaxSharedMemoryPerMultiprocessor => SHARED_PER_SM as c_int,
        A::ReservedSharedMemoryPerBlock => 1024,
        A::TotalConstantMemory => CONSTANT_MEMORY,
        A::WarpSize => 32,
        A::MaxPitch => i32::MAX,
        A::MaxRegistersPerBlock | A::MaxRegistersPerMultiprocessor => REGISTERS_PER_SM as c_int,
        A::ClockRate => 1_410_000,
        A::MemoryClockRate => 1_215_000,
        A::GlobalMemoryBusWidth => 64,
        A::L2CacheSize => 40 * 1024 * 1024,
        A::TextureAlignment => 512,
        A::TexturePitchAlignment => 32,
        A::SurfaceAlignment => 512,
        A::GpuOverlap | A::AsyncEngineCount => 1,
        A::MultiprocessorCount => sm_count(),
        A::MaxThreadsPerMultiprocessor => MAX_THREADS_PER_SM as c_int,
        A::MaxBlocksPerMultiprocessor => MAX_BLOCKS_PER_SM as c_int,
        A::ComputeCapabilityMajor => CC.0,
        A::ComputeCapabilityMinor => CC.1,
        // Device memory is the host's memory.
        A::Integrated
        | A::CanMapHostMemory
        | A::UnifiedAddressing
        | A::ManagedMemory
        | A::ConcurrentManagedAccess
        | A::PageableMemoryAccess
        | A::PageableMemoryAccessUsesHostPageTables
        | A::DirectManagedMemAccessFromHost
        | A::CanUseHostPointerForRegisteredMem
        | A::HostRegisterSupported
        | A::ReadOnlyHostRegisterSupported
        | A::HostNativeAtomicSupported => 1,
        A::ConcurrentKernels
        | A::StreamPrioritiesSupported
        | A::GlobalL1CacheSupported
        | A::LocalL1CacheSupported
        | A::ComputePreemptionSupported => 1,
        A::SingleToDoublePrecisionPerfRatio => 2,
        A::MaxPersistingL2CacheSize | A::MaxAccessPolicyWindowSize => 0,
        // A cooperative launch runs every CTA at once, so grid-wide barriers work
        // (runtime/launch.rs); there is one device, so no multi-device launches.
        A::CooperativeLaunch => 1,
        A::CooperativeMultiDeviceLaunch => 0,
        A::ComputeMode | A::KernelExecTimeout | A::EccEnabled | A::TccDriver => 0,
        A::PciBusId | A::PciDeviceId | A::PciDomainId => 0,
        A::MultiGpuBoard | A::MultiGpuBoardGroupId => 0,
        A::MemSyncDomainCount => 1,
        A::NumaConfig => 0,
        A::NumaId | A::HostNumaId => -1,
        // Pools, IPC, virtual memory management, clusters, textures: not provided.
        _ => 0,
    };
    Some(v)
}

/// `cuDeviceGetAttribute`.
///
/// # Safety
/// `v` null or writable.
pub unsafe fn attribute(v: *mut c_int, a: c_int, d: CUdevice) -> CuResult {
    crate::non_null(v)?;
    check(d)?;
    let x = attribute_value(a).ok_or(CUresult::ErrorInvalidValue)?;
    // SAFETY: checked non-null.
    unsafe { out(v, x) }
}

/// `cuDeviceComputeCapability`.
///
/// # Safety
/// Pointers null or writable.
pub unsafe fn compute_capability(major: *mut c_int, minor: *mut c_int, d: CUdevice) -> CuResult {
    crate::non_null(major)?;
    crate::non_null(minor)?;
    check(d)?;
    // SAFETY: checked non-null.
    unsafe {
        out(major, CC.0)?;
        out(minor, CC.1)
    }
}

/// `cuDeviceGetProperties`.
///
/// # Safety
/// `p` null or writable.
pub unsafe fn properties(p: *mut CUdevprop, d: CUdevice) -> CuResult {
    check(d)?;
    let a = |x: DeviceAttr| attribute_value(x as c_int).unwrap_or(0);
    use DeviceAttr as A;
    let prop = CUdevprop {
        max_threads_per_block: a(A::MaxThreadsPerBlock),
        max_threads_dim: [a(A::MaxBlockDimX), a(A::MaxBlockDimY), a(A::MaxBlockDimZ)],
        max_grid_size: [a(A::MaxGridDimX), a(A::MaxGridDimY), a(A::MaxGridDimZ)],
        shared_mem_per_block: a(A::MaxSharedMemoryPerBlock),
        total_constant_memory: a(A::TotalConstantMemory),
        simd_width: a(A::WarpSize),
        mem_pitch: a(A::MaxPitch),
        regs_per_block: a(A::MaxRegistersPerBlock),
        clock_rate: a(A::ClockRate),
        texture_align: a(A::TextureAlignment),
    };
    // SAFETY: `out` checks null.
    unsafe { out(p, prop) }
}

const PCI_BUS_ID: &str = "0000:00:00.0";

/// `cuDeviceGetPCIBusId`.
///
/// # Safety
/// `id` null or writable for `len` bytes.
pub unsafe fn pci_bus_id(id: *mut c_char, len: c_int, d: CUdevice) -> CuResult {
    crate::non_null(id)?;
    check(d)?;
    if len <= 0 {
        return Err(CUresult::ErrorInvalidValue);
    }
    let n = PCI_BUS_ID.len().min(len as usize - 1);
    // SAFETY: `id` has `len` > n bytes.
    unsafe {
        std::ptr::copy_nonoverlapping(PCI_BUS_ID.as_ptr(), id as *mut u8, n);
        *id.add(n) = 0;
    }
    Ok(())
}

/// `cuDeviceGetByPCIBusId`.
///
/// # Safety
/// `id` a C string; `d` null or writable.
pub unsafe fn by_pci_bus_id(d: *mut CUdevice, id: *const c_char) -> CuResult {
    crate::non_null(id)?;
    // SAFETY: a C string by contract.
    let s = unsafe { CStr::from_ptr(id) }.to_string_lossy();
    if !s.eq_ignore_ascii_case(PCI_BUS_ID) && !s.eq_ignore_ascii_case(&PCI_BUS_ID[5..]) {
        return Err(CUresult::ErrorInvalidDevice);
    }
    // SAFETY: `out` checks null.
    unsafe { out(d, 0) }
}

/// `cuDeviceCanAccessPeer`: there is no other device.
///
/// # Safety
/// `can` null or writable.
pub unsafe fn can_access_peer(can: *mut c_int, d: CUdevice, peer: CUdevice) -> CuResult {
    check(d)?;
    check(peer)?;
    // SAFETY: `out` checks null.
    unsafe { out(can, 0) }
}

/// `cuDeviceGetDefaultMemPool`: memory pools are not provided
/// (`CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED` is 0).
///
/// # Safety
/// `p` unused.
pub unsafe fn default_mem_pool(_p: *mut *mut c_void, d: CUdevice) -> CuResult {
    check(d)?;
    Err(CUresult::ErrorNotSupported)
}
