//! Parse benchmark: parses every PTX file under `tests/corpus` repeatedly on one core and
//! prints throughput in MB/s, then the memory the parsed module of each file holds relative to
//! the file's size (target: at most 10×). Run with `cargo bench --bench parse`.

#[path = "../tests/common/counting_alloc.rs"]
mod counting_alloc;

use std::path::{Path, PathBuf};
use std::time::Instant;

use counting_alloc::{live, Counting};

#[global_allocator]
static A: Counting = Counting;

fn collect(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    for e in rd.flatten() {
        let p = e.path();
        if p.is_dir() {
            collect(&p, out);
        } else if p.extension().is_some_and(|x| x == "ptx") {
            out.push(p);
        }
    }
}

fn main() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus");
    let mut files = Vec::new();
    collect(&root, &mut files);
    files.sort();
    let sources: Vec<String> = files
        .iter()
        .map(|p| std::fs::read_to_string(p).unwrap())
        .collect();
    let total: usize = sources.iter().map(|s| s.len()).sum();
    let quick = std::env::args().any(|a| a == "--quick")
        || std::env::var_os("PTX2LLVM_BENCH_QUICK").is_some();
    let rounds = if quick { 3 } else { 40 };

    let mut errors = 0;
    for s in &sources {
        errors += ptx2llvm::syntax::parse(s).1.len();
    }
    // Time to build the modules; dropping them happens after the clock stops.
    let mut best = f64::INFINITY;
    let mut kept = Vec::with_capacity(sources.len());
    for _ in 0..rounds {
        let t = Instant::now();
        for s in &sources {
            kept.push(ptx2llvm::syntax::parse(s));
        }
        best = best.min(t.elapsed().as_secs_f64());
        std::hint::black_box(&kept);
        kept.clear();
    }
    println!(
        "parse: {} files, {:.2} MB, best of {rounds} rounds {:.2} ms -> {:.0} MB/s (one core){}",
        files.len(),
        total as f64 / 1e6,
        best * 1e3,
        total as f64 / 1e6 / best,
        if errors > 0 {
            format!(", {errors} parse errors!")
        } else {
            String::new()
        }
    );

    let mut t = Instant::now();
    for _ in 0..rounds {
        for s in &sources {
            let (m, _) = ptx2llvm::syntax::parse(s);
            std::hint::black_box(ptx2llvm::check::check(&m));
        }
    }
    let per = t.elapsed().as_secs_f64() / rounds as f64;
    println!(
        "parse+check: {:.2} ms per corpus pass -> {:.0} MB/s",
        per * 1e3,
        total as f64 / 1e6 / per
    );
    t = Instant::now();
    let _ = t;

    let mut worst = (0.0f64, String::new());
    let mut sum_mod = 0isize;
    for (p, s) in files.iter().zip(&sources) {
        let before = live();
        let m = ptx2llvm::syntax::parse(s);
        let held = live() - before;
        std::hint::black_box(&m);
        sum_mod += held;
        let ratio = held as f64 / s.len() as f64;
        if ratio > worst.0 {
            worst = (
                ratio,
                p.strip_prefix(&root).unwrap_or(p).display().to_string(),
            );
        }
    }
    println!(
        "memory: parsed modules hold {:.2}x the source size in total; worst file {} at {:.2}x (target <= 10x)",
        sum_mod as f64 / total as f64,
        worst.1,
        worst.0
    );
}
