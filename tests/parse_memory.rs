//! Memory target of the parser: the parsed module of every corpus file holds at most 10× the
//! file's size in heap memory. Live heap bytes are counted by a wrapping global allocator; this
//! file holds one test, so no other test allocates while it measures.

mod common;

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicIsize, Ordering};

struct Counting;
static LIVE: AtomicIsize = AtomicIsize::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        LIVE.fetch_add(l.size() as isize, Ordering::Relaxed);
        unsafe { System.alloc(l) }
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        LIVE.fetch_sub(l.size() as isize, Ordering::Relaxed);
        unsafe { System.dealloc(p, l) }
    }
    unsafe fn realloc(&self, p: *mut u8, l: Layout, n: usize) -> *mut u8 {
        LIVE.fetch_add(n as isize - l.size() as isize, Ordering::Relaxed);
        unsafe { System.realloc(p, l, n) }
    }
}

#[global_allocator]
static A: Counting = Counting;

#[test]
fn parsed_module_holds_at_most_ten_times_the_source() {
    let files = common::corpus_files();
    // Lazily built tables (the instruction set, interned names) are allocated by the first
    // parse and belong to no module: build them before measuring.
    for path in &files {
        drop(ptx2llvm::syntax::parse(&common::read(path)));
    }
    let mut over = Vec::new();
    let mut report = Vec::new();
    for path in files {
        let src = common::read(&path);
        let before = LIVE.load(Ordering::Relaxed);
        let parsed = ptx2llvm::syntax::parse(&src);
        let held = LIVE.load(Ordering::Relaxed) - before;
        assert!(parsed.1.is_empty(), "{} does not parse", common::rel(&path));
        drop(parsed);
        let ratio = held as f64 / src.len() as f64;
        report.push((ratio, common::rel(&path)));
        if ratio > 10.0 {
            over.push(format!("{}: {ratio:.2}x", common::rel(&path)));
        }
    }
    report.sort_by(|a, b| b.0.total_cmp(&a.0));
    eprintln!("largest ratios: {:?}", &report[..3]);
    assert!(
        over.is_empty(),
        "parsed modules over 10x the source: {over:?}"
    );
}
