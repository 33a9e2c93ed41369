//! The C ABI between generated cpu-target code and the runtime: the per-thread context
//! `ptx2llvm_thread` (mirrored byte for byte in `include/ptx2llvm_rt.h`), the kernel entry type
//! and the numeric codes the `ptx2llvm_rt_*` entry points take (shuffle modes, vote modes,
//! reduction operators). Generated code reads special registers with plain loads at the field
//! offsets exported here, so the layout is stable: append fields, never reorder them.

use std::ffi::c_void;

/// Per-thread context handed to every kernel and device function on the cpu target.
///
/// Generated code reads the special registers directly (`%tid.x` is the `u32` at offset 0);
/// the fields after `shared` belong to the runtime.
#[repr(C)]
#[derive(Debug)]
pub struct Thread {
    /// `%tid.{x,y,z}`
    pub tid: [u32; 3],
    /// `%ntid.{x,y,z}`
    pub ntid: [u32; 3],
    /// `%ctaid.{x,y,z}`
    pub ctaid: [u32; 3],
    /// `%nctaid.{x,y,z}`
    pub nctaid: [u32; 3],
    /// `%laneid`
    pub laneid: u32,
    /// `%warpid` (the warp's index in the CTA)
    pub warpid: u32,
    /// `%nwarpid` (warps in the CTA)
    pub nwarpid: u32,
    /// `%smid` (index of the worker thread running the CTA)
    pub smid: u32,
    /// `%nsmid` (number of worker threads)
    pub nsmid: u32,
    /// `%dynamic_smem_size`
    pub dynamic_smem_size: u32,
    /// `%total_smem_size` (static + dynamic shared bytes of the CTA)
    pub total_smem_size: u32,
    /// Linear thread index in the CTA: `tid.x + ntid.x * (tid.y + ntid.y * tid.z)`.
    pub flat_tid: u32,
    /// `%gridid` (a per-process launch counter)
    pub gridid: u64,
    /// Base of the CTA's shared memory block; `.shared` addresses are 32-bit offsets into it.
    pub shared: *mut u8,
    /// Reserved for a per-thread `.local` window (unused: `.local` lives in allocas).
    pub local: *mut u8,
    /// Runtime-private: the CTA state.
    pub cta: *mut c_void,
    /// Runtime-private: the coroutine's yielder.
    pub yielder: *const c_void,
    /// Runtime-private: `[0]` the fault state of a thread-loop worker, `[1]` the worker's
    /// table of privatized global additions (`red.rs`).
    pub reserved: [*mut c_void; 2],
}

/// Byte offsets of the fields that generated code reads (checked against the struct in tests).
pub mod offset {
    pub const TID: u32 = 0;
    pub const NTID: u32 = 12;
    pub const CTAID: u32 = 24;
    pub const NCTAID: u32 = 36;
    pub const LANEID: u32 = 48;
    pub const WARPID: u32 = 52;
    pub const NWARPID: u32 = 56;
    pub const SMID: u32 = 60;
    pub const NSMID: u32 = 64;
    pub const DYNAMIC_SMEM_SIZE: u32 = 68;
    pub const TOTAL_SMEM_SIZE: u32 = 72;
    pub const FLAT_TID: u32 = 76;
    pub const GRIDID: u32 = 80;
    pub const SHARED: u32 = 88;
    pub const LOCAL: u32 = 96;
    pub const CTA: u32 = 104;
    pub const YIELDER: u32 = 112;
    pub const RED_TABLE: u32 = 128;
    /// Size of the whole struct.
    pub const SIZE: u32 = 136;
}

/// A compiled kernel: `void NAME(const void *params, ptx2llvm_thread *t)`.
pub type KernelEntry = unsafe extern "C" fn(params: *const u8, t: *mut Thread);

/// Warp size: 32 lanes, as on every NVIDIA GPU.
pub const WARP_SIZE: u32 = 32;
/// Named barriers per CTA.
pub const NUM_BARRIERS: u32 = 16;
/// Most threads one CTA may have.
pub const MAX_THREADS_PER_CTA: u32 = 1024;
/// Most shared memory (static + dynamic) one CTA may use: 227 KiB, the largest opt-in size of
/// current GPUs.
pub const MAX_SHARED_PER_CTA: u32 = 227 * 1024;

/// `shfl.sync` modes (`mode` argument of `ptx2llvm_rt_shfl`).
pub mod shfl {
    pub const UP: u32 = 0;
    pub const DOWN: u32 = 1;
    pub const BFLY: u32 = 2;
    pub const IDX: u32 = 3;
}

/// `mma.sync` kinds (`kind` argument of `ptx2llvm_rt_mma`): a shape, or-ed with the types of
/// `a` (bits 4-7), `b` (8-11), `c` (12-15) and `d` (16-19), and `SATFINITE`.
pub mod mma {
    pub const M16N8K16: u32 = 0;
    pub const M16N8K8: u32 = 1;
    pub const M16N8K4: u32 = 2;
    pub const M8N8K4: u32 = 3;
    pub const M16N8K32: u32 = 4;
    /// `wmma` shapes. PTX leaves their fragment layouts to the implementation: they are
    /// the GPU's (`runtime/matrix.rs`, `wmma_pos`), except `WMMA_M8N8K4` (f64), in this
    /// runtime's own (lane `l` holds elements `l n .. l n + n - 1` of the matrix in
    /// row-major order, `n` = elements / 32).
    pub const WMMA_M16N16K16: u32 = 5;
    pub const WMMA_M32N8K16: u32 = 6;
    pub const WMMA_M8N32K16: u32 = 7;
    pub const WMMA_M16N16K8: u32 = 8;
    pub const WMMA_M8N8K4: u32 = 9;
    pub const F16: u32 = 0;
    pub const BF16: u32 = 1;
    pub const TF32: u32 = 2;
    pub const F32: u32 = 3;
    pub const F64: u32 = 4;
    pub const S8: u32 = 5;
    pub const U8: u32 = 6;
    pub const S32: u32 = 7;
    /// The 8-bit floats of sm_89's `mma.m16n8k32`/`m16n8k16` (`.e4m3`, `.e5m2`).
    pub const E4M3: u32 = 8;
    pub const E5M2: u32 = 9;
    /// `.satfinite` (integer results clamped to the `s32` range).
    pub const SATFINITE: u32 = 1 << 20;
    /// `wmma.load`/`wmma.store` descriptors: a `wmma` shape, or-ed with the fragment
    /// (`FRAG_A`, `FRAG_B`, `FRAG_C`) at bits 4-5, the element type at bits 8-11 and
    /// `COL_MAJOR`.
    pub const FRAG_A: u32 = 0;
    pub const FRAG_B: u32 = 1 << 4;
    pub const FRAG_C: u32 = 2 << 4;
    pub const COL_MAJOR: u32 = 1 << 12;
    /// The kind of `shape` with element types `a`, `b`, `c`, `d`.
    pub const fn kind(shape: u32, a: u32, b: u32, c: u32, d: u32) -> u32 {
        shape | a << 4 | b << 8 | c << 12 | d << 16
    }
}

/// `vote.sync` modes (`mode` argument of `ptx2llvm_rt_vote`).
pub mod vote {
    pub const ALL: u32 = 0;
    pub const ANY: u32 = 1;
    pub const UNI: u32 = 2;
    pub const BALLOT: u32 = 3;
}

/// `bar.red` operators (`op` argument of `ptx2llvm_rt_barrier_red`).
pub mod bar_red {
    pub const POPC: u32 = 0;
    pub const AND: u32 = 1;
    pub const OR: u32 = 2;
}

/// `redux.sync` operators (`op` argument of `ptx2llvm_rt_redux`). The float operators take
/// the value's `f32` bits and may be or-ed with `FLAG_ABS` and `FLAG_NAN`.
pub mod redux {
    pub const ADD: u32 = 0;
    pub const MIN_U32: u32 = 1;
    pub const MAX_U32: u32 = 2;
    pub const MIN_S32: u32 = 3;
    pub const MAX_S32: u32 = 4;
    pub const AND: u32 = 5;
    pub const OR: u32 = 6;
    pub const XOR: u32 = 7;
    pub const MIN_F32: u32 = 8;
    pub const MAX_F32: u32 = 9;
    /// `.abs`: reduce absolute values.
    pub const FLAG_ABS: u32 = 0x10;
    /// `.NaN`: a NaN input makes the result NaN (otherwise NaNs are ignored).
    pub const FLAG_NAN: u32 = 0x20;
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::mem::{offset_of, size_of};

    #[test]
    fn layout_matches_the_published_offsets() {
        assert_eq!(offset_of!(Thread, tid) as u32, offset::TID);
        assert_eq!(offset_of!(Thread, ntid) as u32, offset::NTID);
        assert_eq!(offset_of!(Thread, ctaid) as u32, offset::CTAID);
        assert_eq!(offset_of!(Thread, nctaid) as u32, offset::NCTAID);
        assert_eq!(offset_of!(Thread, laneid) as u32, offset::LANEID);
        assert_eq!(offset_of!(Thread, warpid) as u32, offset::WARPID);
        assert_eq!(offset_of!(Thread, nwarpid) as u32, offset::NWARPID);
        assert_eq!(offset_of!(Thread, smid) as u32, offset::SMID);
        assert_eq!(offset_of!(Thread, nsmid) as u32, offset::NSMID);
        assert_eq!(
            offset_of!(Thread, dynamic_smem_size) as u32,
            offset::DYNAMIC_SMEM_SIZE
        );
        assert_eq!(
            offset_of!(Thread, total_smem_size) as u32,
            offset::TOTAL_SMEM_SIZE
        );
        assert_eq!(offset_of!(Thread, flat_tid) as u32, offset::FLAT_TID);
        assert_eq!(offset_of!(Thread, gridid) as u32, offset::GRIDID);
        assert_eq!(offset_of!(Thread, shared) as u32, offset::SHARED);
        assert_eq!(offset_of!(Thread, local) as u32, offset::LOCAL);
        assert_eq!(offset_of!(Thread, cta) as u32, offset::CTA);
        assert_eq!(offset_of!(Thread, yielder) as u32, offset::YIELDER);
        assert_eq!(
            offset_of!(Thread, reserved) as u32 + size_of::<usize>() as u32,
            offset::RED_TABLE
        );
        assert_eq!(size_of::<Thread>() as u32, offset::SIZE);
    }
}
