//! Privatized global integer additions: in kernels whose only accesses to global memory that
//! another thread could see are integer `red`/`atom .add` without a used result (and reads of
//! read-only memory: `ld.global.nc`), such as histograms adding per-block counts to a global
//! one, each worker thread sums the additions per address in a small table of its own and
//! adds the sums to memory (atomically) when it has run its last CTA of the launch. No thread
//! of the kernel can read those locations, and the launch returns after every worker has
//! flushed, so the result is the same — without every CTA's additions bouncing the same cache
//! lines between cores. The compiler decides which kernels qualify
//! (`src/target/cpu/private_red.rs`).
//!
//! When a location enters the table the entry points return 1, and the kernel code makes an
//! atomic addition of zero to it: an invalid address faults there, in kernel code, where the
//! fault handler reports it, and a failed launch discards the table instead of flushing it.

use std::cell::UnsafeCell;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};

/// Entries of a worker's table (a power of two).
pub const SLOTS: usize = 256;

/// A key's slot is its word index `(key >> shift) % SLOTS`, `shift` 2 for 32-bit and 3 for
/// 64-bit additions (kernel code computes it too: `src/target/cpu/private_red.rs`). Direct
/// mapping: up to `SLOTS` consecutive words (a histogram's bins) never collide, and the slot
/// costs kernel code one shift, where a hash spreading strided keys cost three more
/// instructions per addition (a histogram adds each of its 256 bins once per CTA).
pub const fn slot(key: usize) -> usize {
    (key >> (2 + (key & 1))) & (SLOTS - 1)
}

/// Open slots: key 0; else the address, with bit 0 set for 64-bit additions (the addresses of
/// atomics are aligned, so bit 0 is free). Kernel code finds an address's entry itself
/// (`Thread::reserved[1]` points here) and adds to its sum when the key is there; anything
/// else goes through the entry points below.
#[repr(C)]
pub struct Table {
    key: [usize; SLOTS],
    sum: [u64; SLOTS],
}

/// This thread's table (stable for the thread's lifetime).
pub fn table() -> *mut Table {
    TABLE.with(|t| t.get())
}

thread_local! {
    static TABLE: UnsafeCell<Table> = const {
        UnsafeCell::new(Table { key: [0; SLOTS], sum: [0; SLOTS] })
    };
}

/// Adds `sum` to the location of `key` in memory.
///
/// # Safety
/// The key's address must be valid for an atomic access of its width.
unsafe fn apply(key: usize, sum: u64) {
    if key & 1 != 0 {
        AtomicU64::from_ptr((key & !1) as *mut u64).fetch_add(sum, Ordering::Relaxed);
    } else {
        AtomicU32::from_ptr(key as *mut u32).fetch_add(sum as u32, Ordering::Relaxed);
    }
}

/// Adds `v` to the entry of `key`; 1 when `key` entered the table now.
#[inline(always)]
unsafe fn add(key: usize, v: u64) -> u32 {
    let slot = slot(key);
    TABLE.with(|t| {
        let t = &mut *t.get();
        if t.key[slot] == key {
            t.sum[slot] = t.sum[slot].wrapping_add(v);
            return 0;
        }
        if t.key[slot] != 0 {
            apply(t.key[slot], t.sum[slot]);
        }
        t.key[slot] = key;
        t.sum[slot] = v;
        1
    })
}

/// `red.global.add.u32 [p], v` of a kernel that privatizes its additions; returns 1 when `p`
/// is new in the table (the caller then checks it with an atomic addition of zero).
///
/// # Safety
/// `p` must be a 4-byte aligned address, valid for atomic access unless the launch fails.
#[no_mangle]
pub unsafe extern "C" fn ptx2llvm_rt_red_add_u32(p: *mut u32, v: u32) -> u32 {
    add(p as usize, v as u64)
}

/// `red.global.add.u64 [p], v`, as `ptx2llvm_rt_red_add_u32`.
///
/// # Safety
/// `p` must be an 8-byte aligned address, valid for atomic access unless the launch fails.
#[no_mangle]
pub unsafe extern "C" fn ptx2llvm_rt_red_add_u64(p: *mut u64, v: u64) -> u32 {
    add(p as usize | 1, v)
}

/// Adds this thread's pending sums to memory (unless `discard`) and empties its table: each
/// launch worker at the end of its part of a launch, discarding after a failed launch, whose
/// table may hold an address that faulted.
pub fn flush(discard: bool) {
    TABLE.with(|t| {
        // SAFETY: only this thread touches its table; after a launch that did not fail,
        // kernel code checked every key with an atomic access.
        let t = unsafe { &mut *t.get() };
        for s in 0..SLOTS {
            if t.key[s] != 0 {
                if !discard {
                    unsafe { apply(t.key[s], t.sum[s]) };
                }
                t.key[s] = 0;
            }
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sums_reach_memory_at_the_flush() {
        // More locations than slots: evictions add to memory on the way.
        let mut a = vec![0u32; 1024];
        let mut want = vec![0u32; 1024];
        let mut w = [0u64; 4];
        for i in 0..10_000usize {
            let k = (i * 7) % 1024;
            unsafe { ptx2llvm_rt_red_add_u32(&mut a[k], 3 + i as u32) };
            want[k] = want[k].wrapping_add(3 + i as u32);
            unsafe { ptx2llvm_rt_red_add_u64(&mut w[i % 4], 1 << 33) };
        }
        flush(false);
        assert_eq!(a, want);
        assert_eq!(w, [2500 << 33; 4]);
        // Empty after the flush: nothing more is added; a discarded table adds nothing.
        flush(false);
        assert_eq!(a, want);
        assert_eq!(unsafe { ptx2llvm_rt_red_add_u32(&mut a[0], 5) }, 1);
        assert_eq!(unsafe { ptx2llvm_rt_red_add_u32(&mut a[0], 5) }, 0);
        flush(true);
        assert_eq!(a, want);
    }

    #[test]
    fn consecutive_words_take_distinct_slots() {
        // A histogram's bins, at any alignment: once in, each stays (no eviction: the kernel
        // code's lookup finds them all).
        let mut a = vec![0u32; SLOTS + 3];
        let mut w = vec![0u64; SLOTS + 1];
        for new in [1, 0] {
            for x in &mut a[3..] {
                assert_eq!(unsafe { ptx2llvm_rt_red_add_u32(x, 1) }, new);
            }
        }
        flush(false);
        for new in [1, 0] {
            for x in &mut w[1..] {
                assert_eq!(unsafe { ptx2llvm_rt_red_add_u64(x, 2) }, new);
            }
        }
        flush(false);
        assert!(a[3..].iter().all(|&x| x == 2) && a[..3] == [0; 3]);
        assert!(w[1..].iter().all(|&x| x == 4) && w[0] == 0);
    }
}
