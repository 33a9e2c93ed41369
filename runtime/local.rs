//! The stacks of a worker's CUDA threads (coroutines) and of its thread-loop coroutine, where
//! `.local` variables and call frames live, placed in one reservation of inaccessible pages so
//! that a `.local` address far outside a thread's memory faults (and the fault handler fails
//! the launch naming block, thread and the local state space) instead of writing another
//! thread's stack or unrelated memory, at no cost to the accesses themselves.
//!
//! Layout: a 2 GiB guard, then per stack a guard of `GAP` bytes followed by the stack, then a
//! 6 GiB guard. A local address at most `GAP` bytes below a thread's stack, or past the last
//! stack by up to 6 GiB, or anywhere below the first by up to 2 GiB, faults; one that lands in
//! another thread's stack does not (the stacks are `GAP + stack size` apart). The guard below
//! each stack is also its overflow guard: a fault there while the stack pointer is in the same
//! slot is a stack overflow, anywhere else in the reservation an out-of-range local address.
//! Reservations cost address space only (`PROT_NONE`, `MAP_NORESERVE`); where the full one
//! cannot be had, one with 64 KiB guards is used. Each worker thread keeps its last areas for
//! later launches (as `shared.rs` does its blocks).

use corosensei::stack::{Stack, StackPointer};

use super::shared::{page, reserve};
use super::LaunchError;

/// Guard below the first stack, full reservation.
const LEAD: usize = 2 << 30;
/// Guard above the last stack, full reservation.
const TRAIL: usize = 6 << 30;
/// Guard below each stack, full reservation.
const GAP: usize = 16 << 20;
/// Every guard of the fallback reservation.
const SMALL_GUARD: usize = 64 << 10;

/// A reservation holding `n` stacks of `size` bytes, each above a guard.
pub(crate) struct StackArea {
    map: *mut u8,
    map_len: usize,
    /// Start of slot 0 (its guard); slot `i` starts at `first + i * slot`.
    first: usize,
    /// Guard plus stack.
    slot: usize,
    /// Bytes of each slot's guard.
    gap: usize,
    /// Bytes of each stack (a multiple of the page size).
    size: usize,
    n: usize,
}

/// One stack of an area, lent to a coroutine: the area outlives it (the workers drop their
/// coroutines before giving their areas back).
pub(crate) struct AreaStack {
    base: usize,
    limit: usize,
}

// SAFETY: `base` is the top of a read-write region of at least MIN_STACK_SIZE bytes whose
// guard (inaccessible pages) lies directly below `limit`; both are page-aligned, so aligned to
// STACK_ALIGNMENT. The region belongs to one coroutine at a time (an area hands each stack out
// once per `stacks` call, and the workers use one call's stacks at a time).
unsafe impl Stack for AreaStack {
    fn base(&self) -> StackPointer {
        StackPointer::new(self.base).unwrap_or_else(|| unreachable!())
    }
    fn limit(&self) -> StackPointer {
        StackPointer::new(self.limit).unwrap_or_else(|| unreachable!())
    }
}

/// Where a fault address lies in an area, for the fault handler.
#[derive(Clone, Copy, Default, Debug, PartialEq, Eq)]
pub(crate) struct AreaWindow {
    pub lo: usize,
    pub hi: usize,
    pub first: usize,
    pub slot: usize,
    pub gap: usize,
}

impl AreaWindow {
    /// Whether a fault at `addr` with the stack pointer at `sp` is a stack overflow: `addr` in
    /// the guard of the slot `sp` lies in.
    pub(crate) fn overflow(&self, addr: usize, sp: usize) -> bool {
        if self.slot == 0 || addr < self.first || sp < self.first {
            return false;
        }
        let (a, s) = (addr - self.first, sp - self.first);
        a / self.slot == s / self.slot && a % self.slot < self.gap
    }
    pub(crate) fn contains(&self, addr: usize) -> bool {
        self.lo <= addr && addr < self.hi
    }
}

impl StackArea {
    /// An area of `n` stacks of at least `size` bytes.
    pub(crate) fn new(size: usize, n: usize) -> Result<StackArea, LaunchError> {
        let page = page();
        let size = size.div_ceil(page) * page;
        let mut last = String::new();
        for (lead, gap, trail) in [(LEAD, GAP, TRAIL), (SMALL_GUARD, SMALL_GUARD, SMALL_GUARD)] {
            // One page more than a power of two, as corosensei's own stacks are spaced: stack
            // tops a large power of two apart would all fall into the same cache sets.
            let gap = gap + page;
            let slot = gap + size;
            let Some(map_len) = slot
                .checked_mul(n)
                .and_then(|s| s.checked_add(lead + trail))
            else {
                last = "too large".into();
                continue;
            };
            let map = match reserve(map_len) {
                Ok(map) => map,
                Err(e) => {
                    last = e.to_string();
                    continue;
                }
            };
            // The lead guard ends where slot 0's own guard begins.
            let first = map as usize + lead - gap;
            let area = StackArea {
                map,
                map_len,
                first,
                slot,
                gap,
                size,
                n,
            };
            let mut ok = true;
            for i in 0..n {
                let lo = first + i * slot + gap;
                // SAFETY: [lo, lo + size) lies inside the mapping (lo >= map + lead,
                // lo + size <= map + lead + n * slot).
                let r = unsafe {
                    libc::mprotect(
                        lo as *mut libc::c_void,
                        size,
                        libc::PROT_READ | libc::PROT_WRITE,
                    )
                };
                if r != 0 {
                    last = std::io::Error::last_os_error().to_string();
                    ok = false;
                    break;
                }
            }
            if ok {
                return Ok(area);
            }
            // `area` unmaps on drop.
        }
        Err(LaunchError::Resource(format!(
            "cannot allocate {n} thread stacks of {size} bytes: {last}"
        )))
    }

    /// The first `n` stacks (at most the area's count), thread 0's at the lowest address.
    pub(crate) fn stacks(&self, n: usize) -> Vec<AreaStack> {
        (0..n.min(self.n))
            .map(|i| {
                let limit = self.first + i * self.slot + self.gap;
                AreaStack {
                    base: limit + self.size,
                    limit,
                }
            })
            .collect()
    }

    pub(crate) fn window(&self) -> AreaWindow {
        AreaWindow {
            lo: self.map as usize,
            hi: self.map as usize + self.map_len,
            first: self.first,
            slot: self.slot,
            gap: self.gap,
        }
    }
}

thread_local! {
    /// Areas of this worker thread's finished launches, for reuse (a pool worker is a
    /// persistent thread: no lock).
    static CACHE: std::cell::RefCell<Vec<StackArea>> = const { std::cell::RefCell::new(Vec::new()) };
}
/// Most areas a worker thread keeps.
const CACHE_MAX: usize = 2;

impl StackArea {
    /// An area with at least `n` stacks of `size` bytes, from this thread's cache when one
    /// fits (same stack size, enough stacks).
    pub(crate) fn take(size: usize, n: usize) -> Result<StackArea, LaunchError> {
        let want = size.div_ceil(page()) * page();
        let hit = CACHE.with(|c| {
            let mut c = c.borrow_mut();
            let i = c.iter().position(|a| a.size == want && a.n >= n)?;
            Some(c.swap_remove(i))
        });
        match hit {
            Some(a) => Ok(a),
            None => StackArea::new(size, n),
        }
    }

    /// Keeps an area for this thread's next launch (no stack of it may be in use).
    pub(crate) fn give(self) {
        CACHE.with(|c| {
            let mut c = c.borrow_mut();
            if c.len() >= CACHE_MAX {
                c.remove(0);
            }
            c.push(self);
        });
    }
}

impl Drop for StackArea {
    fn drop(&mut self) {
        // SAFETY: the mapping `new` made; its stacks are no longer in use.
        unsafe { libc::munmap(self.map as *mut libc::c_void, self.map_len) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stacks_between_guards() {
        let a = StackArea::new(20000, 3).unwrap();
        let w = a.window();
        let s = a.stacks(5);
        assert_eq!(s.len(), 3);
        for (i, st) in s.iter().enumerate() {
            assert_eq!(st.base - st.limit, 5 * 4096);
            assert!(st.limit - w.gap >= w.lo && st.base <= w.hi);
            // SAFETY: the stack's pages are read-write.
            unsafe { std::ptr::write_bytes(st.limit as *mut u8, 1, st.base - st.limit) };
            // The guard below a stack is its own overflow guard, not its neighbour's.
            assert!(w.overflow(st.limit - 8, st.limit + 64));
            if i > 0 {
                assert!(!w.overflow(st.limit - 8, s[i - 1].base - 64));
            }
        }
        assert!(!w.overflow(w.lo, s[0].base - 64) && w.contains(w.hi - 1));
    }
}
