//! Memory target of the parser: the parsed module of every corpus file holds at most 10× the
//! file's size in heap memory. Live heap bytes are counted by a wrapping global allocator
//! (`tests/common/counting_alloc.rs`, shared with the parse benchmark); this
//! file holds one test, so no other test allocates while it measures.

mod common;

#[path = "common/counting_alloc.rs"]
mod counting_alloc;

use counting_alloc::{live, Counting};

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
        let before = live();
        let parsed = ptx2llvm::syntax::parse(&src);
        let held = live() - before;
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
