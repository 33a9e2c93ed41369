//! A global allocator that counts live heap bytes, wrapping mimalloc (the allocator the
//! `ptx2llvm` binary uses): the parse benchmark and the parse-memory test measure how much a
//! parsed module holds with it. Each crate that includes this file declares
//! `#[global_allocator] static A: Counting = Counting;`.

use std::alloc::{GlobalAlloc, Layout};
use std::sync::atomic::{AtomicIsize, Ordering};

use mimalloc::MiMalloc;

pub struct Counting;

/// Live heap bytes.
pub static LIVE: AtomicIsize = AtomicIsize::new(0);

/// Live heap bytes now.
pub fn live() -> isize {
    LIVE.load(Ordering::Relaxed)
}

// SAFETY: every call is forwarded unchanged to mimalloc, a correct `GlobalAlloc`; the count
// is a side record.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        LIVE.fetch_add(l.size() as isize, Ordering::Relaxed);
        // SAFETY: forwarded unchanged from our own `alloc`, whose caller upholds `GlobalAlloc`'s contract.
        unsafe { MiMalloc.alloc(l) }
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        LIVE.fetch_sub(l.size() as isize, Ordering::Relaxed);
        // SAFETY: forwarded unchanged from our own `dealloc`: `p` came from `MiMalloc` with layout `l`.
        unsafe { MiMalloc.dealloc(p, l) }
    }
    unsafe fn realloc(&self, p: *mut u8, l: Layout, n: usize) -> *mut u8 {
        LIVE.fetch_add(n as isize - l.size() as isize, Ordering::Relaxed);
        // SAFETY: forwarded unchanged from our own `realloc`: `p` came from `MiMalloc` with layout `l`.
        unsafe { MiMalloc.realloc(p, l, n) }
    }
}
