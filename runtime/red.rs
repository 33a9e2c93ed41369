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
//! A location enters the table only once kernel code has checked it with an atomic addition of
//! zero: an invalid address faults there, in kernel code, where the fault handler reports it,
//! and a failed launch discards the table instead of flushing it. Checked before it enters, not
//! after: the thread-loop engine replays a faulting CTA thread by thread to name the thread,
//! and an address left in the table would take the inline path then, unchecked, and reach
//! `apply` (a crash in the runtime) when a colliding key evicted it.
//!
//! A worker's *window* takes the hot path of a byte histogram's `hist[data[i]] += 1`: 256
//! 32-bit sums at one base, which kernel code adds to directly when an addition's base
//! register holds that base (no key compare, no call in its loop: histogram_global x0.86),
//! made once kernel code has checked a word in each page it covers (`ptx2llvm_rt_red_window`)
//! and flushed with the table.
//!
//! Float additions (`.f32`, `.f64`) do not associate, so they are not summed: a worker logs
//! them in order (`Log`) and later applies each address's run of values in one atomic step (a
//! compare-and-swap around the run, refolded when another worker changed the word meanwhile).
//! The result is the left fold of the additions in an order in which each worker's additions
//! to an address come one after another, each the same addition `atom.add` makes: one of the
//! orders a GPU's atomics may take, while the line is taken once per run instead of once per
//! CTA (a block reduction's single sum, `reduce_halving`).

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

/// A key is the address, with bit 0 set for 64-bit additions (the addresses of atomics are
/// aligned, so bit 0 is free); an open slot holds `open(slot)`, a key of another slot, so
/// that no address, null included, finds an open slot as its entry. Kernel code finds an
/// address's entry itself (`Thread::reserved[1]` points here) and adds to its sum when the
/// key is there; anything else goes through the entry points below.
#[repr(C)]
pub struct Table {
    key: [usize; SLOTS],
    sum: [u64; SLOTS],
    /// The float additions (after the integer table, so that kernel code reaches both).
    log: Log,
    /// The window: 32-bit sums of the `WINDOW` words from `wb` (0: none), which kernel code
    /// adds to directly (`src/target/cpu/private_red.rs`) for an addition whose address is
    /// its site's base register plus an offset, when that base is `wb`. Set at most once
    /// between two flushes (kernel code may hold a snapshot of it), and only once kernel code
    /// has checked a word in every page it covers (`ptx2llvm_rt_red_window`), so every word
    /// of it is valid for the flush's atomic additions: none is probed that the kernel does
    /// not touch (a GPU would not fault there), and page permissions are uniform in a page.
    wb: usize,
    w32: [u32; WINDOW],
    /// The window being made: its base and the pages (bit 0: the first, bit 1: the next)
    /// where kernel code checked a word in it.
    cand: usize,
    cand_pages: usize,
}

/// The entry point that makes a window (`ptx2llvm_rt_red_window`), as kernel code names it.
pub const WINDOW_FN: &str = "ptx2llvm_rt_red_window";

/// Words of the window (a histogram's 256 bins).
pub const WINDOW: usize = 256;

/// Byte offsets in `Table` that kernel code reads and writes (`private_red.rs`).
pub mod at {
    /// `Log::len`, `Log::last`, the first `Log::key`, the first `Log::val`.
    pub const LOG_LEN: u64 = 4096;
    pub const LOG_LAST: u64 = LOG_LEN + 8;
    pub const LOG_KEY: u64 = LOG_LEN + 24;
    pub const LOG_VAL: u64 = LOG_KEY + 8 * super::LOG as u64;
    /// `Table::wb` and `Table::w32`.
    pub const WB: u64 = std::mem::offset_of!(super::Table, wb) as u64;
    pub const W32: u64 = std::mem::offset_of!(super::Table, w32) as u64;
}

/// This thread's table (stable for the thread's lifetime).
pub fn table() -> *mut Table {
    TABLE.with(|t| t.get())
}

/// What open slot `s` holds: a key whose slot is `s ^ 1`, so never the key of an address that
/// looks for its entry in `s`.
const fn open(s: usize) -> usize {
    (s ^ 1) << 2
}

const OPEN: [usize; SLOTS] = {
    let mut k = [0; SLOTS];
    let mut s = 0;
    while s < SLOTS {
        k[s] = open(s);
        s += 1;
    }
    k
};

thread_local! {
    static TABLE: UnsafeCell<Table> = const {
        UnsafeCell::new(Table {
            key: OPEN,
            sum: [0; SLOTS],
            log: Log { len: 0, last: NO_LAST, mixed: 0, key: [0; LOG], val: [0; LOG] },
            wb: 0,
            w32: [0; WINDOW],
            cand: 0,
            cand_pages: 0,
        })
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

/// Adds `v` to the entry of `key` when it is in the table, or when `checked` (kernel code
/// checked its address): then it enters the table, adding the slot's previous entry to memory;
/// else returns 1 and changes nothing (the caller checks the address and calls again).
#[inline(always)]
unsafe fn add(key: usize, v: u64, checked: u32) -> u32 {
    let slot = slot(key);
    TABLE.with(|t| {
        let t = &mut *t.get();
        if t.key[slot] == key {
            t.sum[slot] = t.sum[slot].wrapping_add(v);
            return 0;
        }
        if checked == 0 {
            return 1;
        }
        if t.key[slot] != open(slot) {
            apply(t.key[slot], t.sum[slot]);
        }
        t.key[slot] = key;
        t.sum[slot] = v;
        0
    })
}

/// `red.global.add.u32 [p], v` of a kernel that privatizes its additions: added to `p`'s
/// entry when `p` is in the table or `checked`; else returns 1, and the caller checks `p` with
/// an atomic addition of zero and calls again with `checked` 1.
///
/// # Safety
/// With `checked`, `p` must be a 4-byte aligned address, valid for atomic access unless the
/// launch fails.
#[no_mangle]
pub unsafe extern "C" fn ptx2llvm_rt_red_add_u32(p: *mut u32, v: u32, checked: u32) -> u32 {
    add(p as usize, v as u64, checked)
}

/// `red.global.add.u64 [p], v`, as `ptx2llvm_rt_red_add_u32`.
///
/// # Safety
/// With `checked`, `p` must be an 8-byte aligned address, valid for atomic access unless the
/// launch fails.
#[no_mangle]
pub unsafe extern "C" fn ptx2llvm_rt_red_add_u64(p: *mut u64, v: u64, checked: u32) -> u32 {
    add(p as usize | 1, v, checked)
}

/// Kernel code checked address `p` (an atomic addition of zero) for a 32-bit integer addition
/// whose site's base register holds `base`: the window of `base` (`Table::wb`) is made once a
/// word in each page it covers has been checked this way. A base that is null, not 4-byte
/// aligned or not below `p` by less than the window, or a window already made, changes
/// nothing.
#[no_mangle]
pub extern "C" fn ptx2llvm_rt_red_window(base: usize, p: usize) {
    const PAGE: usize = 12;
    let bytes = 4 * WINDOW;
    if base == 0 || base & 3 != 0 || p < base || p - base >= bytes {
        return;
    }
    let Some(last) = base.checked_add(bytes - 1) else {
        return;
    };
    TABLE.with(|t| {
        // SAFETY: only this thread touches its table, and not reentrantly.
        let t = unsafe { &mut *t.get() };
        if t.wb != 0 {
            return;
        }
        if t.cand != base {
            t.cand = base;
            t.cand_pages = 0;
        }
        t.cand_pages |= 1 << ((p >> PAGE) - (base >> PAGE));
        let all = if last >> PAGE == base >> PAGE { 1 } else { 3 };
        if t.cand_pages == all {
            t.wb = base;
        }
    });
}

/// Float additions logged in a worker's order: keys as `Table`'s (bit 0: 64 bits), values as
/// bits; `last` is the key of the latest addition, which kernel code has checked; `mixed`
/// (0/1): the log holds more than one key. The warp engine's code appends an addition to
/// `last` itself while there is room (`at`); anything else calls `ptx2llvm_rt_red_add_f32/f64`.
#[repr(C)]
struct Log {
    len: usize,
    last: usize,
    mixed: u64,
    key: [usize; LOG],
    val: [u64; LOG],
}

/// `Log::last` before a worker's first float addition: not 0, which is the key of a 32-bit
/// addition to a null pointer (that would be logged unchecked and fault in `apply_run`), but a
/// key only a misaligned addition at a non-canonical address has.
const NO_LAST: usize = 0x8000_0000_0000_0003;

/// The entry points of float additions (`f32`, `f64`), which code calls by name.
pub const FLOAT_ADD: [&str; 2] = ["ptx2llvm_rt_red_add_f32", "ptx2llvm_rt_red_add_f64"];

/// Entries of a worker's float log (applied when full).
pub const LOG: usize = 1024;

/// The word at `key` with the float addition of `v` made: as the kernel's `atom.add` makes it
/// (`lower/atomic.rs`: the host's IEEE addition of the value, which kernel code made the GPU's
/// canonical NaN when it is one), so a NaN value gives that NaN.
fn fold(key: usize, m: u64, v: u64) -> u64 {
    if key & 1 != 0 {
        (f64::from_bits(m) + f64::from_bits(v)).to_bits()
    } else {
        let v32 = f32::from_bits(v as u32);
        if v32.is_nan() {
            v
        } else {
            (f32::from_bits(m as u32) + v32).to_bits() as u64
        }
    }
}

/// Adds the values `vals` in order to the float at `key`, as one atomic step.
///
/// # Safety
/// As `apply`.
unsafe fn apply_run(key: usize, vals: impl Iterator<Item = u64> + Clone) {
    let run = |m: u64| vals.clone().fold(m, |m, v| fold(key, m, v));
    if key & 1 != 0 {
        let a = AtomicU64::from_ptr((key & !1) as *mut u64);
        let _ = a.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |m| Some(run(m)));
    } else {
        let a = AtomicU32::from_ptr(key as *mut u32);
        let _ = a.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |m| {
            Some(run(m as u64) as u32)
        });
    }
}

/// Applies (unless `discard`) and empties the log: each address's values in the order they
/// came (additions to different words commute).
fn drain(log: &mut Log, discard: bool) {
    let n = log.len;
    log.len = 0;
    if discard || n == 0 {
        log.mixed = 0;
        return;
    }
    if log.mixed == 0 {
        // One address (a block reduction's sum): one run, no sort.
        // SAFETY: kernel code checked every logged key with an atomic access.
        unsafe { apply_run(log.key[0], log.val[..n].iter().copied()) };
        return;
    }
    log.mixed = 0;
    let mut order: Vec<u32> = (0..n as u32).collect();
    // Stable: each key's values stay in order.
    order.sort_by_key(|&i| log.key[i as usize]);
    let mut at = 0;
    while at < n {
        let key = log.key[order[at] as usize];
        let end = at
            + order[at..]
                .iter()
                .take_while(|&&i| log.key[i as usize] == key)
                .count();
        let vals = order[at..end].iter().map(|&i| log.val[i as usize]);
        // SAFETY: kernel code checked every logged key with an atomic access.
        unsafe { apply_run(key, vals) };
        at = end;
    }
}

/// Logs the float addition of `v` at `key` when `key` is the latest checked address or
/// `checked`; else logs nothing and returns 1: kernel code then checks the address and calls
/// again with `checked` (an address is logged only once checked, so that a faulting one never
/// reaches `apply_run`, even when the thread-loop engine replays the CTA after the fault).
fn log_add(key: usize, v: u64, checked: u32) -> u32 {
    TABLE.with(|t| {
        // SAFETY: only this thread touches its log, and not reentrantly.
        let l = unsafe { &mut (*t.get()).log };
        if key != l.last && checked == 0 {
            return 1;
        }
        if l.len == LOG {
            drain(l, false);
        }
        l.mixed |= (l.len > 0 && l.key[0] != key) as u64;
        l.key[l.len] = key;
        l.val[l.len] = v;
        l.len += 1;
        l.last = key;
        0
    })
}

/// `red.global.add.f32 [p], v` (`v`'s bits, the GPU's NaN when a NaN) of a kernel that
/// privatizes its additions, logged unless `p` is new (not the address of this worker's
/// previous float addition) and not `checked`: then it returns 1, and the caller checks `p`
/// with an atomic addition of zero and calls again with `checked` 1.
///
/// # Safety
/// With `checked`, `p` must be a 4-byte aligned address, valid for atomic access unless the
/// launch fails.
#[no_mangle]
pub unsafe extern "C" fn ptx2llvm_rt_red_add_f32(p: *mut u32, v: u32, checked: u32) -> u32 {
    log_add(p as usize, v as u64, checked)
}

/// `red.global.add.f64 [p], v`, as `ptx2llvm_rt_red_add_f32`.
///
/// # Safety
/// With `checked`, `p` must be an 8-byte aligned address, valid for atomic access unless the
/// launch fails.
#[no_mangle]
pub unsafe extern "C" fn ptx2llvm_rt_red_add_f64(p: *mut u64, v: u64, checked: u32) -> u32 {
    log_add(p as usize | 1, v, checked)
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
            if t.key[s] != open(s) {
                if !discard {
                    // SAFETY: every key in the table is an address kernel code probed with an atomic addition of 0 before it entered (`checked`), valid for an atomic access of its width.
                    unsafe { apply(t.key[s], t.sum[s]) };
                }
                t.key[s] = open(s);
            }
        }
    });
    TABLE.with(|t| {
        // SAFETY: only this thread touches its log.
        let l = unsafe { &mut (*t.get()).log };
        drain(l, discard);
        l.last = NO_LAST;
    });
    TABLE.with(|t| {
        // SAFETY: only this thread touches its table.
        let t = unsafe { &mut *t.get() };
        if t.wb != 0 {
            for (i, w) in t.w32.iter_mut().enumerate() {
                if *w != 0 && !discard {
                    // SAFETY: the window's words lie in pages where kernel code checked a
                    // word with an atomic access (`ptx2llvm_rt_red_window`): valid for one.
                    unsafe { apply(t.wb + 4 * i, u64::from(*w)) };
                }
                *w = 0;
            }
        }
        t.wb = 0;
        t.cand = 0;
        t.cand_pages = 0;
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    // Safe forms of the entry points for this module's references: a `&mut` word is valid
    // and aligned for an atomic access of its width, for as long as the tests keep the arrays.
    fn add_u32(x: &mut u32, v: u32, checked: u32) -> u32 {
        // SAFETY: `x` is a valid aligned word (see above).
        unsafe { ptx2llvm_rt_red_add_u32(x, v, checked) }
    }
    fn add_u64(x: &mut u64, v: u64, checked: u32) -> u32 {
        // SAFETY: `x` is a valid aligned word (see above).
        unsafe { ptx2llvm_rt_red_add_u64(x, v, checked) }
    }
    fn add_f32(x: &mut f32, v: u32, checked: u32) -> u32 {
        // SAFETY: `x` is a valid aligned word (see above).
        unsafe { ptx2llvm_rt_red_add_f32(x as *mut f32 as *mut u32, v, checked) }
    }
    fn add_f64(x: &mut f64, v: u64, checked: u32) -> u32 {
        // SAFETY: `x` is a valid aligned word (see above).
        unsafe { ptx2llvm_rt_red_add_f64(x as *mut f64 as *mut u64, v, checked) }
    }

    #[test]
    fn sums_reach_memory_at_the_flush() {
        // More locations than slots: evictions add to memory on the way.
        let mut a = vec![0u32; 1024];
        let mut want = vec![0u32; 1024];
        let mut w = [0u64; 4];
        for i in 0..10_000usize {
            let k = (i * 7) % 1024;
            if add_u32(&mut a[k], 3 + i as u32, 0) != 0 {
                add_u32(&mut a[k], 3 + i as u32, 1);
            }
            want[k] = want[k].wrapping_add(3 + i as u32);
            add_u64(&mut w[i % 4], 1 << 33, 1);
        }
        flush(false);
        assert_eq!(a, want);
        assert_eq!(w, [2500 << 33; 4]);
        // Empty after the flush: nothing more is added; a discarded table adds nothing; an
        // unchecked new address is not taken.
        flush(false);
        assert_eq!(a, want);
        assert_eq!(add_u32(&mut a[0], 5, 0), 1);
        assert_eq!(add_u32(&mut a[0], 5, 0), 1);
        assert_eq!(add_u32(&mut a[0], 5, 1), 0);
        assert_eq!(add_u32(&mut a[0], 5, 0), 0);
        flush(true);
        assert_eq!(a, want);
    }

    #[test]
    fn no_address_finds_an_open_slot() {
        // Null (and every other address) is new to an empty table: kernel code checks it.
        for s in 0..SLOTS {
            assert_ne!(slot(open(s)), s);
        }
        for p in [0usize, 4, 8, 1024, 4096] {
            // SAFETY: not `checked` and not in the table: `add` returns 1 without touching `p`.
            assert_eq!(unsafe { add(p, 1, 0) }, 1, "{p:#x}");
            // SAFETY: as above.
            assert_eq!(unsafe { add(p | 1, 1, 0) }, 1, "{p:#x} 64");
        }
    }

    #[test]
    fn log_offsets() {
        use std::mem::offset_of;
        let log = offset_of!(Table, log);
        assert_eq!((log + offset_of!(Log, len)) as u64, at::LOG_LEN);
        assert_eq!((log + offset_of!(Log, last)) as u64, at::LOG_LAST);
        assert_eq!((log + offset_of!(Log, key)) as u64, at::LOG_KEY);
        assert_eq!((log + offset_of!(Log, val)) as u64, at::LOG_VAL);
    }

    #[test]
    fn float_additions_fold_in_order() {
        // 2^24 + 1 + 1 + ... : each addition of 1 rounds back to 2^24 (ties to even), so the
        // sum must stay 2^24 as a GPU's successive atomics leave it (summing the ones first
        // would give 2^24 + 4096).
        let mut x = [16_777_216f32; 2];
        let mut d = [0f64; 1];
        let mut first = 0;
        for i in 0..5000 {
            first += add_f32(&mut x[0], 1f32.to_bits(), 0);
            add_f32(&mut x[0], 1f32.to_bits(), 1);
            add_f32(&mut x[1], 0.5f32.to_bits(), 1);
            add_f64(&mut d[0], (i as f64).to_bits(), 1);
        }
        // Every addition follows one to another address: each is new, logged when checked.
        assert_eq!(first, 5000);
        flush(false);
        assert_eq!(x[0], 16_777_216f32);
        assert_eq!(x[1], 16_777_216f32);
        assert_eq!(d[0], (0..5000).sum::<i64>() as f64);
        // A NaN value gives the canonical one; a discarded log adds nothing.
        let nan = 0x7fff_ffffu32;
        assert_eq!(add_f32(&mut x[0], nan, 0), 1);
        assert_eq!(add_f32(&mut x[0], nan, 1), 0);
        assert_eq!(add_f32(&mut x[0], 1f32.to_bits(), 0), 0);
        flush(false);
        assert_eq!(x[0].to_bits(), nan);
        add_f32(&mut x[1], 1f32.to_bits(), 1);
        flush(true);
        assert_eq!(x[1], 16_777_216f32);
        // A null pointer is new to an empty log: kernel code checks it.
        assert_eq!(
            // SAFETY: null is not `checked`: the entry point returns 1 without touching it.
            unsafe { ptx2llvm_rt_red_add_f32(std::ptr::null_mut(), 0, 0) },
            1
        );
    }

    /// The window's words as kernel code adds to them (`private_red.rs`).
    fn window_add(i: usize, v: u32) {
        TABLE.with(|t| {
            // SAFETY: only this thread touches its table.
            let t = unsafe { &mut *t.get() };
            t.w32[i] = t.w32[i].wrapping_add(v);
        });
    }

    fn window_base() -> usize {
        // SAFETY: only this thread touches its table.
        TABLE.with(|t| unsafe { (*t.get()).wb })
    }

    #[test]
    fn the_window_opens_once_each_page_was_checked() {
        // 2 KiB of words, page-aligned: bins from byte 3584 (4096 - 512) of a 2-page buffer
        // cross into the second page.
        let mut buf = vec![0u32; 4096];
        let start = buf.as_ptr() as usize;
        let skip = (4096 - start % 4096) % 4096 / 4;
        let bins = &mut buf[skip + 896..];
        let base = bins.as_ptr() as usize;
        // Not 4-byte aligned, or the address outside the window: nothing.
        ptx2llvm_rt_red_window(base + 1, base + 4);
        ptx2llvm_rt_red_window(base, base + 1024);
        ptx2llvm_rt_red_window(base, base - 4);
        assert_eq!(window_base(), 0);
        // A word in the first page only: not yet; one in the second: open.
        ptx2llvm_rt_red_window(base, base + 8);
        assert_eq!(window_base(), 0);
        ptx2llvm_rt_red_window(base, base + 1020);
        assert_eq!(window_base(), base);
        // Set once: another base changes nothing until the flush.
        ptx2llvm_rt_red_window(base + 4, base + 8);
        assert_eq!(window_base(), base);
        window_add(0, 3);
        window_add(255, 5);
        flush(false);
        assert_eq!((bins[0], bins[255], bins[1]), (3, 5, 0));
        assert_eq!(window_base(), 0);
        // A discarded window adds nothing.
        ptx2llvm_rt_red_window(base, base);
        ptx2llvm_rt_red_window(base, base + 1020);
        assert_eq!(window_base(), base);
        window_add(1, 7);
        flush(true);
        assert_eq!(bins[1], 0);
    }

    #[test]
    fn consecutive_words_take_distinct_slots() {
        // A histogram's bins, at any alignment: once in, each stays (no eviction: the kernel
        // code's lookup finds them all).
        let mut a = vec![0u32; SLOTS + 3];
        let mut w = vec![0u64; SLOTS + 1];
        for x in &mut a[3..] {
            assert_eq!(add_u32(x, 1, 0), 1);
            assert_eq!(add_u32(x, 1, 1), 0);
        }
        for x in &mut a[3..] {
            assert_eq!(add_u32(x, 1, 0), 0);
        }
        flush(false);
        for x in &mut w[1..] {
            assert_eq!(add_u64(x, 2, 0), 1);
            assert_eq!(add_u64(x, 2, 1), 0);
        }
        for x in &mut w[1..] {
            assert_eq!(add_u64(x, 2, 0), 0);
        }
        flush(false);
        assert!(a[3..].iter().all(|&x| x == 2) && a[..3] == [0; 3]);
        assert!(w[1..].iter().all(|&x| x == 4) && w[0] == 0);
    }
}
