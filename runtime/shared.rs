//! A worker's shared-memory block: the CTA's `.shared` window, placed inside a large reserved
//! region of inaccessible pages so that an out-of-range shared address faults in hardware
//! (and the fault handler fails the launch naming block and thread) instead of reading or
//! writing other memory, at no cost to the accesses themselves.
//!
//! Generated code computes a shared address as `t->shared + offset`, the offset a 32-bit
//! register zero-extended (plus constant displacements) or a 64-bit register. The guard below
//! the block covers offsets down to -2 GiB, the one above up to 6 GiB: every offset a 32-bit
//! address with a 32-bit displacement can form, and far 64-bit ones. The block's end is at a
//! page boundary (at a multiple of its alignment when that is larger), its start at a multiple
//! of the alignment the module's `.shared` variables ask for (and of 256); so at most
//! `align - 1` bytes past the end, and less than a page before the start, go unnoticed.
//! The reservation costs address space only (`PROT_NONE`, `MAP_NORESERVE`); where it cannot
//! be had (an address-space limit) a smaller one with 1 MiB guards is used.

use super::LaunchError;

/// Guard below the block, full reservation.
const LEAD: usize = 2 << 30;
/// Guard above the block, full reservation.
const TRAIL: usize = 6 << 30;
/// Guards of the fallback reservation.
const SMALL_GUARD: usize = 1 << 20;
/// The alignment `ptx2llvm_rt_launch` gives blocks (objects do not tell it theirs; the compiler
/// refuses objects whose `.shared` variables ask for more).
pub const OBJECT_ALIGN: u32 = 4096;
/// The smallest alignment of the block's start.
const MIN_ALIGN: usize = 256;

/// The system's page size (4096 when it cannot be read).
pub(crate) fn page() -> usize {
    // SAFETY: sysconf only reads a system constant.
    let p = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    if p > 0 {
        p as usize
    } else {
        4096
    }
}

/// `len` bytes of inaccessible address space (guards, with the usable part opened later by
/// `mprotect`); `MAP_NORESERVE`, so large guards cost no memory.
pub(crate) fn reserve(len: usize) -> std::io::Result<*mut u8> {
    // SAFETY: a fresh anonymous mapping; nothing else refers to it.
    let map = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            len,
            libc::PROT_NONE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE,
            -1,
            0,
        )
    };
    if map == libc::MAP_FAILED {
        Err(std::io::Error::last_os_error())
    } else {
        Ok(map as *mut u8)
    }
}

/// One worker's shared-memory block and its guards.
pub(crate) struct SharedBlock {
    map: *mut u8,
    map_len: usize,
    base: *mut u8,
    /// Bytes of the CTA's shared memory (zeroed for each CTA).
    bytes: usize,
}

impl SharedBlock {
    /// A block of `bytes` bytes starting at a multiple of `align` (rounded up to a power of two
    /// and to at least 256).
    pub(crate) fn new(bytes: usize, align: usize) -> Result<SharedBlock, LaunchError> {
        let align = align.max(MIN_ALIGN).next_power_of_two();
        let page = page();
        let len = bytes.div_ceil(align) * align;
        let end_align = align.max(page);
        let mut last = String::new();
        for (lead, trail) in [(LEAD, TRAIL), (SMALL_GUARD, SMALL_GUARD)] {
            let map_len = lead + len + end_align + trail;
            let map = match reserve(map_len) {
                Ok(map) => map,
                Err(e) => {
                    last = e.to_string();
                    continue;
                }
            };
            let end = (map as usize + lead + len).div_ceil(end_align) * end_align;
            let start = end - len;
            let rw = start / page * page;
            if end > rw {
                // SAFETY: [rw, end) lies inside the mapping (start >= map + lead).
                let r = unsafe {
                    libc::mprotect(
                        rw as *mut libc::c_void,
                        end - rw,
                        libc::PROT_READ | libc::PROT_WRITE,
                    )
                };
                if r != 0 {
                    last = std::io::Error::last_os_error().to_string();
                    // SAFETY: the mapping made above, unused.
                    unsafe { libc::munmap(map as *mut libc::c_void, map_len) };
                    continue;
                }
            }
            return Ok(SharedBlock {
                map,
                map_len,
                base: start as *mut u8,
                bytes,
            });
        }
        Err(LaunchError::Resource(format!(
            "cannot allocate {bytes} bytes of shared memory per block: {last}"
        )))
    }

    /// The block's start (`t->shared`).
    pub(crate) fn base(&self) -> *mut u8 {
        self.base
    }

    /// Bytes of the CTA's shared memory.
    pub(crate) fn bytes(&self) -> usize {
        self.bytes
    }

    /// Zeroes the CTA's shared memory.
    pub(crate) fn zero(&mut self) {
        // SAFETY: [base, base + bytes) is mapped read-write and owned by this block.
        unsafe { std::ptr::write_bytes(self.base, 0, self.bytes) };
    }

    /// The reserved range, guards included: a fault there is an out-of-range shared address.
    pub(crate) fn reserved(&self) -> (usize, usize) {
        (self.map as usize, self.map as usize + self.map_len)
    }
}

thread_local! {
    /// Blocks of this worker thread's finished launches, for reuse (mapping 8 GiB and
    /// unmapping it per worker and launch costs microseconds that small launches notice; the
    /// pool's workers are persistent threads, so a per-thread cache needs no lock).
    static CACHE: std::cell::RefCell<Vec<(usize, SharedBlock)>> =
        const { std::cell::RefCell::new(Vec::new()) };
}
/// Most blocks a worker thread keeps.
const CACHE_MAX: usize = 4;

impl SharedBlock {
    /// A block as `new` makes it, from this thread's cache when one of the same size and
    /// alignment is there.
    pub(crate) fn take(bytes: usize, align: usize) -> Result<SharedBlock, LaunchError> {
        let hit = CACHE.with(|c| {
            let mut c = c.borrow_mut();
            let i = c
                .iter()
                .position(|(a, b)| *a == align && b.bytes == bytes)?;
            Some(c.swap_remove(i).1)
        });
        match hit {
            Some(b) => Ok(b),
            None => SharedBlock::new(bytes, align),
        }
    }

    /// Keeps a block `take` gave for this thread's next launch.
    pub(crate) fn give(self, align: usize) {
        CACHE.with(|c| {
            let mut c = c.borrow_mut();
            if c.len() >= CACHE_MAX {
                c.remove(0);
            }
            c.push((align, self));
        });
    }
}

impl Drop for SharedBlock {
    fn drop(&mut self) {
        // SAFETY: the mapping `new` made; nothing refers to it once the block is dropped.
        unsafe { libc::munmap(self.map as *mut libc::c_void, self.map_len) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aligned_start_end_at_guard() {
        for (bytes, align) in [(0, 16), (4, 16), (100, 256), (68, 1024), (5000, 8192)] {
            let mut b = SharedBlock::new(bytes, align).unwrap();
            let a = align.max(MIN_ALIGN);
            assert_eq!(b.base() as usize % a, 0, "{bytes} {align}");
            let end = b.base() as usize + bytes.div_ceil(a) * a;
            assert_eq!(end % page(), 0);
            b.zero();
            let (lo, hi) = b.reserved();
            assert!(lo + SMALL_GUARD <= b.base() as usize && end + SMALL_GUARD <= hi);
        }
    }
}
