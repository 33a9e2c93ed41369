//! Kernels of shapes the benchmarks lack (`tests/kernels/nvrtc_stress.cu`, compiled by NVRTC
//! into the checked-in `.ptx`), run on both execution schemes of the cpu target (thread loops
//! and coroutines) and checked against references computed here: a bitonic sort and a
//! Blelloch scan (barriers in nested loops behind thread-dependent branches), a two-level
//! warp-shuffle scan over many blocks (warp chains, CTAs run back to back inside the CTA
//! function), a padded-tile transpose with ragged edges (2-D blocks), a warp-per-row
//! layernorm whose stride loops only some lanes enter before xor shuffles (the case that
//! found a stale operand bank), ballot counting in a grid-stride loop with `continue`,
//! `__syncthreads_count/or/and`, segment shuffles of widths 16 and 8, `__noinline__` helpers
//! with barriers, 3-D blocks, persistent loops, `__any_sync` loops, 64-bit shuffles, a
//! breaking search and a jump-table `switch`.

mod cpu_util;

use cpu_util::*;
use ptx2llvm::target::cpu::fission::CpuMode;

/// The stress module compiled for each scheme: the warp engine (kernels without CTA
/// barriers; the others fall back to thread loops), thread loops, coroutines.
fn modules() -> [(Module, &'static str); 3] {
    let src = std::fs::read_to_string(root().join("tests/kernels/nvrtc_stress.ptx")).unwrap();
    [
        (
            Module::from_ptx_with(&src, 2, CpuMode::Fission).unwrap(),
            "thread loops",
        ),
        (
            Module::from_ptx_with(&src, 2, CpuMode::Coroutine).unwrap(),
            "coroutines",
        ),
        (
            Module::from_ptx_with(&src, 2, CpuMode::Warp).unwrap(),
            "warp engine",
        ),
    ]
}

#[test]
fn bitonic_sort_and_blelloch_scan() {
    let mut r = Rng::new(1);
    for (m, scheme) in modules() {
        let vals: Vec<i32> = (0..8192).map(|_| r.int(-1000, 1000) as i32).collect();
        let b = buf_i32(&vals);
        launch(&m, "bitonic", d3(8, 1, 1), d3(512, 1, 1), 0, vec![ptr(&b)]);
        let mut want = vals.clone();
        want.chunks_mut(1024).for_each(|c| c.sort());
        assert_eq!(get_i32(&b), want, "bitonic, {scheme}");

        let nb = 40;
        let vals: Vec<i32> = (0..512 * nb).map(|_| r.int(-50, 50) as i32).collect();
        let (bi, bo) = (buf_i32(&vals), buf_i32(&vec![0; 512 * nb]));
        launch(
            &m,
            "blelloch",
            d3(nb as u32, 1, 1),
            d3(256, 1, 1),
            0,
            vec![ptr(&bi), ptr(&bo)],
        );
        let mut want = Vec::new();
        for c in vals.chunks(512) {
            let mut acc = 0;
            for &x in c {
                want.push(acc);
                acc += x;
            }
        }
        assert_eq!(get_i32(&bo), want, "blelloch, {scheme}");
    }
}

#[test]
fn warp_shuffle_scan_over_many_blocks() {
    let mut r = Rng::new(2);
    let n = 100_000usize;
    let vals: Vec<i32> = (0..n).map(|_| r.int(-9, 9) as i32).collect();
    let mut want = Vec::new();
    for c in vals.chunks(256) {
        let mut acc = 0;
        for &x in c {
            acc += x;
            want.push(acc);
        }
    }
    for (m, scheme) in modules() {
        let (bi, bo) = (buf_i32(&vals), buf_i32(&vec![0; n]));
        let grid = d3(n.div_ceil(256) as u32, 1, 1);
        let args = vec![ptr(&bi), ptr(&bo), i32a(n as i32)];
        launch(&m, "warpscan", grid, d3(256, 1, 1), 0, args);
        assert_eq!(get_i32(&bo), want, "warpscan, {scheme}");
    }
}

#[test]
fn padded_tile_transpose_with_ragged_edges() {
    let (w, h) = (100usize, 70usize);
    let vals: Vec<f32> = (0..w * h).map(|i| (i % 977) as f32).collect();
    let want: Vec<f32> = (0..w * h).map(|o| vals[(o % h) * w + o / h]).collect();
    for (m, scheme) in modules() {
        let (bo, bi) = (buf_f32(&vec![0.0; w * h]), buf_f32(&vals));
        let args = vec![ptr(&bo), ptr(&bi), i32a(w as i32), i32a(h as i32)];
        launch(&m, "transpose", d3(4, 3, 1), d3(32, 8, 1), 0, args);
        assert_eq!(get_f32(&bo), want, "transpose, {scheme}");
    }
}

#[test]
fn warp_per_row_layernorm() {
    let mut r = Rng::new(3);
    // 100 columns: lanes 0-3 run the unrolled loop, the others only its remainder; 37 rows
    // leave the last warps of the last block without a row.
    for (rows, cols) in [(37usize, 100usize), (301, 70)] {
        let x: Vec<f32> = (0..rows * cols).map(|_| r.f32(-2.0, 2.0)).collect();
        let mut want = Vec::new();
        for row in x.chunks(cols) {
            let mean = row.iter().map(|&v| v as f64).sum::<f64>() / cols as f64;
            let var = row.iter().map(|&v| (v as f64) * (v as f64)).sum::<f64>() / cols as f64
                - mean * mean;
            want.extend(
                row.iter()
                    .map(|&v| ((v as f64 - mean) / (var + 1e-5).sqrt()) as f32),
            );
        }
        for (m, scheme) in modules() {
            let (bx, by) = (buf_f32(&x), buf_f32(&vec![0.0; rows * cols]));
            let args = vec![
                ptr(&bx),
                ptr(&by),
                i32a(rows as i32),
                i32a(cols as i32),
                f32a(1e-5),
            ];
            launch(
                &m,
                "layernorm",
                d3(rows.div_ceil(8) as u32, 1, 1),
                d3(256, 1, 1),
                0,
                args,
            );
            assert_close_f32(
                &get_f32(&by),
                &want,
                1e-4,
                1e-4,
                &format!("layernorm {rows}x{cols}, {scheme}"),
            );
        }
    }
}

#[test]
fn ballots_barrier_reductions_and_segment_shuffles() {
    let mut r = Rng::new(4);
    let n = 10_000usize;
    let vals: Vec<i32> = (0..n)
        .map(|i| {
            if i % 97 == 5 {
                -3
            } else {
                r.int(0, 1000) as i32
            }
        })
        .collect();
    let count7 = vals.iter().filter(|&&v| v >= 0 && v % 7 == 0).count() as i32;
    let count3 = vals.iter().filter(|&&v| v >= 0 && v % 3 == 0).count() as i32;
    let first_neg = vals.iter().position(|&v| v < 0).unwrap() as i32;
    let bar: Vec<i32> = (0..384)
        .map(|i| if i == 100 { 77 } else { r.int(-1, 100) as i32 })
        .collect();
    let mut bar_want = Vec::new();
    for b in bar.chunks(96) {
        bar_want.push(b.iter().filter(|&&v| v > 50).count() as i32);
        bar_want.push(b.contains(&77) as i32);
        bar_want.push(b.iter().all(|&v| v >= 0) as i32);
    }
    let seg: Vec<i32> = (0..1024).map(|_| r.int(-100, 100) as i32).collect();
    // shfl_down by 8, 4, 2, 1 within 16-lane segments (sources past the segment keep their own).
    let mut red = seg.clone();
    for o in [8, 4, 2, 1] {
        red = (0..1024)
            .map(|i| {
                let lane = i % 16;
                red[i] + if lane + o < 16 { red[i + o] } else { red[i] }
            })
            .collect();
    }
    for (m, scheme) in modules() {
        let (bi, bc, bf) = (buf_i32(&vals), buf_i32(&[0, 0]), buf_i32(&[i32::MAX]));
        let args = vec![ptr(&bi), ptr(&bc), ptr(&bf), i32a(n as i32)];
        launch(&m, "countif", d3(7, 1, 1), d3(96, 1, 1), 0, args);
        assert_eq!(get_i32(&bc), [count7, count3], "countif, {scheme}");
        assert_eq!(get_i32(&bf), [first_neg], "countif, {scheme}");

        let (bi, bo) = (buf_i32(&bar), buf_i32(&[0; 12]));
        launch(
            &m,
            "barred",
            d3(4, 1, 1),
            d3(96, 1, 1),
            0,
            vec![ptr(&bi), ptr(&bo)],
        );
        assert_eq!(
            get_i32(&bo),
            bar_want,
            "__syncthreads_count/or/and, {scheme}"
        );

        let (bi, bo) = (buf_i32(&seg), buf_i32(&[0; 2048]));
        launch(
            &m,
            "tiles",
            d3(4, 1, 1),
            d3(256, 1, 1),
            0,
            vec![ptr(&bi), ptr(&bo)],
        );
        let got = get_i32(&bo);
        let sums: Vec<i32> = (0..1024).step_by(16).map(|i| red[i]).collect();
        assert_eq!(got[..64], sums[..], "width-16 shfl_down, {scheme}");
        let w8: Vec<i32> = (0..1024).map(|i| red[i / 8 * 8 + 3]).collect();
        assert_eq!(got[1024..], w8[..], "width-8 shfl, {scheme}");
    }
}

/// `__noinline__` device functions with a barrier loop (using a `__shared__` array NVRTC
/// moved into the function) and with shuffles, called in an unrolled loop: the calls are
/// inlined (NVRTC 13's call sequences declare an unused `temp_param_reg`), so the kernel runs
/// as thread loops, with the coroutine scheme's results.
#[test]
fn device_functions_with_barriers_called_in_a_loop() {
    let mut r = Rng::new(5);
    let (grid, reps) = (30usize, 5);
    let vals: Vec<i32> = (0..grid * 128).map(|_| r.int(-100, 100) as i32).collect();
    let mut want = Vec::new();
    for b in vals.chunks(128) {
        for t in 0..128 {
            let warp = &b[t / 32 * 32..t / 32 * 32 + 32];
            let acc: i32 = (0..reps)
                .map(|k| {
                    b.iter().map(|&x| x + k).sum::<i32>()
                        + warp.iter().map(|&x| x * (k + 1)).max().unwrap()
                })
                .sum();
            want.push(acc);
        }
    }
    for (m, scheme) in modules() {
        if scheme == "thread loops" {
            let info = m
                .program()
                .kernels()
                .iter()
                .find(|k| k.name == "calls")
                .unwrap();
            assert!(
                matches!(
                    info.path,
                    ptx2llvm::target::cpu::fission::KernelPath::Fission(_)
                ),
                "{:?}",
                info.path
            );
        }
        let (bi, bo) = (buf_i32(&vals), buf_i32(&vec![0; grid * 128]));
        let args = vec![ptr(&bi), ptr(&bo), i32a(reps)];
        launch(&m, "calls", d3(grid as u32, 1, 1), d3(128, 1, 1), 0, args);
        assert_eq!(get_i32(&bo), want, "calls, {scheme}");
    }
}

/// 3-D blocks (8 x 8 x 4) summing z-slices in shared memory; a persistent kernel whose
/// block-uniform loop has barriers inside (3 CTAs over 5000 elements).
#[test]
fn three_dimensional_blocks_and_persistent_loops() {
    let mut r = Rng::new(6);
    let g = 7usize;
    let cube: Vec<f32> = (0..g * 256).map(|_| r.int(-9, 9) as f32).collect();
    let want: Vec<f32> = cube.chunks(64).map(|c| c.iter().sum()).collect();
    let n = 5000usize;
    let vals: Vec<i32> = (0..n).map(|_| r.int(-1000, 1000) as i32).collect();
    let mut pwant = Vec::new();
    for base in (0..n).step_by(256) {
        let blk: Vec<i32> = (0..256)
            .map(|t| *vals.get(base + t).unwrap_or(&0))
            .collect();
        for t in 0..256 {
            if base + t < n {
                pwant.push(blk[(t + 1) % 256] - blk[t]);
            }
        }
    }
    for (m, scheme) in modules() {
        let (bi, bo) = (buf_f32(&cube), buf_f32(&vec![0.0; g * 4]));
        launch(
            &m,
            "cube",
            d3(g as u32, 1, 1),
            d3(8, 8, 4),
            0,
            vec![ptr(&bi), ptr(&bo)],
        );
        assert_eq!(get_f32(&bo), want, "cube, {scheme}");
        let (bi, bo) = (buf_i32(&vals), buf_i32(&vec![0; n]));
        let args = vec![ptr(&bi), ptr(&bo), i32a(n as i32)];
        launch(&m, "persist", d3(3, 1, 1), d3(256, 1, 1), 0, args);
        assert_eq!(get_i32(&bo), pwant, "persist, {scheme}");
    }
}

/// A warp loop until `__any_sync` says every lane is below 10 (each warp its own trip count),
/// and 64-bit shuffles (a double sum, a 64-bit xor) with a 64-bit atomic addition.
#[test]
fn convergence_loops_and_64_bit_shuffles() {
    let mut r = Rng::new(7);
    let g = 5usize;
    let vals: Vec<i32> = (0..g * 128).map(|_| r.int(0, 5000) as i32).collect();
    let (mut want_v, mut want_k) = (Vec::new(), Vec::new());
    for w in vals.chunks(32) {
        let (mut v, mut k) = (w.to_vec(), 0);
        while v.iter().any(|&x| x >= 10) {
            let o: Vec<i32> = (0..32).map(|l| v[(l + 1).min(31)]).collect();
            v = (0..32)
                .map(|l| {
                    if v[l] >= 10 {
                        v[l] / 2
                    } else {
                        v[l] + (o[l] & 1)
                    }
                })
                .collect();
            k += 1;
        }
        want_v.extend(v);
        want_k.push(k);
    }
    let d: Vec<f64> = (0..256).map(|_| r.int(-100, 100) as f64 * 0.5).collect();
    let sums: Vec<f64> = d.chunks(32).map(|c| c.iter().sum()).collect();
    let xor = d.chunks(32).fold(0u64, |acc, c| {
        let x = c.iter().fold(0u64, |a, &v| {
            a ^ ((v as i64).wrapping_mul(1_000_000_007) as u64)
        });
        acc.wrapping_add(x)
    });
    for (m, scheme) in modules() {
        let (bi, bo, bk) = (
            buf_i32(&vals),
            buf_i32(&vec![0; g * 128]),
            buf_i32(&vec![0; g * 4]),
        );
        let args = vec![ptr(&bi), ptr(&bo), ptr(&bk)];
        launch(&m, "converge", d3(g as u32, 1, 1), d3(128, 1, 1), 0, args);
        assert_eq!(get_i32(&bo), want_v, "converge, {scheme}");
        assert_eq!(get_i32(&bk), want_k, "converge trip counts, {scheme}");
        let (bi, bo, bs) = (buf_f64(&d), buf_f64(&[0.0; 8]), buf_u64(&[0]));
        let args = vec![ptr(&bi), ptr(&bo), ptr(&bs)];
        launch(&m, "wide", d3(4, 1, 1), d3(64, 1, 1), 0, args);
        assert_eq!(get_f64(&bo), sums, "double shuffles, {scheme}");
        assert_eq!(get_u64(&bs), [xor], "64-bit shuffles and atomics, {scheme}");
    }
}

/// A search that sets a shared flag and leaves its block-uniform loop with `break` after a
/// barrier, and a jump-table `switch` before a barrier.
#[test]
fn shared_flag_breaks_and_switch_tables() {
    let mut r = Rng::new(8);
    let (g, n, key) = (6usize, 1000usize, 4242);
    let mut vals: Vec<i32> = (0..g * n).map(|_| r.int(0, 4000) as i32).collect();
    for b in 0..g {
        if b % 3 != 2 {
            vals[b * n + r.int(0, n as i64 - 1) as usize] = key;
        }
    }
    let mut want = Vec::new();
    for (b, blk) in vals.chunks(n).enumerate() {
        let (mut rounds, mut at) = (0, i32::MAX);
        for base in (0..n).step_by(128) {
            rounds += 1;
            if let Some(i) = (base..(base + 128).min(n)).find(|&i| blk[i] == key) {
                at = (b * n + i) as i32;
                break;
            }
        }
        want.extend([at, rounds]);
    }
    let sv: Vec<i32> = (0..5 * 128)
        .map(|_| r.int(-100_000, 100_000) as i32)
        .collect();
    let f = |v: i32| match v & 7 {
        0 => v.wrapping_mul(3),
        1 => v - 100,
        2 => v ^ 0x55,
        3 => -v,
        4 => v << 2,
        5 => v / 3,
        6 => v % 11,
        _ => 7,
    };
    let mut swant = Vec::new();
    for blk in sv.chunks(128) {
        let rs: Vec<i32> = blk.iter().map(|&v| f(v)).collect();
        swant.extend((0..128).map(|t| rs[127 - t] + rs[t]));
    }
    for (m, scheme) in modules() {
        let (bi, bo) = (buf_i32(&vals), buf_i32(&vec![0; 2 * g]));
        let args = vec![ptr(&bi), ptr(&bo), i32a(n as i32), i32a(key)];
        launch(&m, "search", d3(g as u32, 1, 1), d3(128, 1, 1), 0, args);
        assert_eq!(get_i32(&bo), want, "search, {scheme}");
        let (bi, bo) = (buf_i32(&sv), buf_i32(&vec![0; 5 * 128]));
        launch(
            &m,
            "sw",
            d3(5, 1, 1),
            d3(128, 1, 1),
            0,
            vec![ptr(&bi), ptr(&bo)],
        );
        assert_eq!(get_i32(&bo), swant, "switch, {scheme}");
    }
}
