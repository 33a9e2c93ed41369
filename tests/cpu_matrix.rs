//! Warp matrix instructions on the cpu target (`runtime/matrix.rs`): real compiler output
//! that uses `ldmatrix`, `mma.sync` and `cp.async` runs, and its results equal a plain matrix
//! product computed here. Inputs are small integers, so every product and sum is exact in f16
//! and f32 whatever the summation order: a fragment layout that differed from the hardware's
//! in any lane would put some element in the wrong place and change the result.

mod cpu_util;

use cpu_util::*;

/// A `rows x cols` matrix of integers in -3..=3.
fn ints(r: &mut Rng, rows: usize, cols: usize) -> Vec<i64> {
    (0..rows * cols).map(|_| r.int(-3, 3)).collect()
}

fn f16s(v: &[i64]) -> Vec<u16> {
    v.iter().map(|&x| f64_to_f16(x as f64)).collect()
}

/// `a (m x k) * b (k x n)`, row-major.
fn matmul(a: &[i64], b: &[i64], m: usize, n: usize, k: usize) -> Vec<i64> {
    let mut c = vec![0; m * n];
    for i in 0..m {
        for j in 0..n {
            c[i * n + j] = (0..k).map(|x| a[i * k + x] * b[x * n + j]).sum();
        }
    }
    c
}

/// Triton's fp16 matmul for sm_80 (`tests/corpus/triton/triton_gen.py`: 128 x 128 x 32 tiles,
/// 4 warps, 3 stages): `cp.async` into shared memory, `ldmatrix.x4` for A, `ldmatrix.x4.trans`
/// for B, `mma.sync.m16n8k16.row.col.f32.f16.f16.f32`, the result through shared memory.
/// `spec` is the build with unit strides folded in (three fewer parameters).
fn triton_matmul(file: &str, spec: bool, m: usize, n: usize, k: usize) {
    let module = load(&corpus(file));
    let mut r = Rng::new(7 + m as u64 + k as u64);
    let (a, b) = (ints(&mut r, m, k), ints(&mut r, k, n));
    let (ba, bb) = (buf_u16(&f16s(&a)), buf_u16(&f16s(&b)));
    let bc = buf_u16(&vec![0; m * n]);
    let scratch = [buf_u32(&[0; 4]), buf_u32(&[0; 4])];
    let mut args = vec![ptr(&ba), ptr(&bb), ptr(&bc)];
    for v in [m, n, k] {
        args.push(i32a(v as i32));
    }
    // stride_am, (stride_ak), stride_bk, (stride_bn), stride_cm, (stride_cn)
    let strides: &[usize] = if spec {
        &[k, n, n]
    } else {
        &[k, 1, n, 1, n, 1]
    };
    args.extend(strides.iter().map(|&s| i32a(s as i32)));
    args.extend(scratch.iter().map(ptr));
    let grid = d3(m.div_ceil(128) as u32, n.div_ceil(128) as u32, 1);
    launch(
        &module,
        "matmul_kernel",
        grid,
        d3(128, 1, 1),
        96 * 1024,
        args,
    );
    let want = f16s(&matmul(&a, &b, m, n, k));
    let got = get_u16(&bc);
    let bad = (0..m * n).filter(|&i| got[i] != want[i]).count();
    assert_eq!(
        bad,
        0,
        "{file} {m}x{n}x{k}: {bad} wrong elements; first: {:?}",
        (0..m * n).find(|&i| got[i] != want[i]).map(|i| (
            i / n,
            i % n,
            f16_to_f32(got[i]),
            f16_to_f32(want[i])
        ))
    );
}

#[test]
fn triton_fp16_matmul_sm80() {
    // One tile; a 2 x 2 grid whose K (96) needs three k-steps; a K of 40 (masked loads, a
    // partial last k-step). M and N stay multiples of the tile: the kernel masks its loads
    // in K only (rows past M would be read out of bounds, on a GPU too).
    triton_matmul("triton/matmul_fp16.sm80.ptx", false, 128, 128, 64);
    triton_matmul("triton/matmul_fp16.sm80.ptx", false, 256, 256, 96);
    triton_matmul("triton/matmul_fp16.sm80.ptx", false, 256, 128, 40);
}

#[test]
fn triton_fp16_matmul_spec_sm80() {
    triton_matmul("triton/matmul_fp16_spec.sm80.ptx", true, 256, 128, 96);
}

/// NVRTC's `mma_ptx.cu`: one warp copies a row-major 16 x 16 f16 A to shared memory with
/// `cp.async`, loads it with `ldmatrix.x4`, takes its B fragments (16 x 8, two `f16x2` per
/// lane: rows `2 (lane % 4) + {0, 1}` and those plus 8, column `lane / 4`) from global memory
/// and stores its four f32 results (rows `lane / 4` and that plus 8, columns `2 (lane % 4) +
/// {0, 1}`).
#[test]
fn nvrtc_inline_mma_and_ldmatrix() {
    for file in ["nvrtc/mma_ptx.ptx", "nvrtc/variants/mma_ptx.sm90.ptx"] {
        let module = load(&corpus(file));
        let k = kernel(&module, "mma_inline");
        let mut r = Rng::new(11);
        let (a, b) = (ints(&mut r, 16, 16), ints(&mut r, 16, 8));
        let h = |x: i64| f64_to_f16(x as f64) as u32;
        let mut bfrag = Vec::new();
        for lane in 0..32 {
            let (g, t) = (lane / 4, lane % 4);
            for row in [2 * t, 2 * t + 8] {
                bfrag.push(h(b[row * 8 + g]) | h(b[(row + 1) * 8 + g]) << 16);
            }
        }
        let (ba, bb) = (buf_u16(&f16s(&a)), buf_u32(&bfrag));
        let bc = buf_f32(&[0.0; 128]);
        launch(
            &module,
            &k,
            d3(1, 1, 1),
            d3(32, 1, 1),
            0,
            vec![ptr(&ba), ptr(&bb), ptr(&bc)],
        );
        let d = matmul(&a, &b, 16, 8, 16);
        let mut want = Vec::new();
        for lane in 0..32 {
            let (g, t) = (lane / 4, lane % 4);
            for e in 0..4 {
                want.push(d[(g + 8 * (e >> 1)) * 8 + 2 * t + (e & 1)] as f32);
            }
        }
        assert_eq!(get_f32(&bc), want, "{file}");
    }
}

/// NVRTC's `wmma.cu` (`nvcuda::wmma`): a 16 x 16 x 16 f16 product with a row-major A, a
/// column-major B and strides given, and a tf32 one (A 16 x 8, B 8 x 16, both row-major)
/// whose A fragment goes through `__float_to_tf32` element by element before the `mma`. The
/// fragment layout is the runtime's own (PTX leaves it to the implementation); loads, stores
/// and the product must agree on it. The tf32 inputs (halves, quarters) are exact in tf32.
#[test]
fn nvrtc_wmma_f16_and_tf32() {
    for file in [
        "nvrtc/wmma.ptx",
        "nvrtc/variants/wmma.sm90.ptx",
        "nvrtc/variants/wmma.sm100a.ptx",
    ] {
        let module = load(&corpus(file));
        let mut r = Rng::new(13);
        let (a, b) = (ints(&mut r, 16, 16), ints(&mut r, 16, 16));
        // B column-major: element (k, n) at n * 16 + k.
        let bt: Vec<i64> = (0..256).map(|i| b[(i % 16) * 16 + i / 16]).collect();
        let (ba, bb) = (buf_u16(&f16s(&a)), buf_u16(&f16s(&bt)));
        let bc = buf_f32(&[0.0; 256]);
        let args = vec![ptr(&ba), ptr(&bb), ptr(&bc), i32a(16), i32a(16), i32a(16)];
        let k = kernel(&module, "wmma_gemm");
        launch(&module, &k, d3(1, 1, 1), d3(32, 1, 1), 0, args);
        let want: Vec<f32> = matmul(&a, &b, 16, 16, 16)
            .iter()
            .map(|&x| x as f32)
            .collect();
        assert_eq!(get_f32(&bc), want, "{file}: wmma_gemm");

        let a2: Vec<f64> = (0..128).map(|_| r.int(-3, 3) as f64 + 0.5).collect();
        let b2: Vec<f64> = (0..128).map(|_| r.int(-3, 3) as f64 * 0.25).collect();
        let f32s = |v: &[f64]| v.iter().map(|&x| x as f32).collect::<Vec<f32>>();
        let (ba, bb) = (buf_f32(&f32s(&a2)), buf_f32(&f32s(&b2)));
        let bc = buf_f32(&[0.0; 256]);
        let k = kernel(&module, "wmma_tf32");
        launch(
            &module,
            &k,
            d3(1, 1, 1),
            d3(32, 1, 1),
            0,
            vec![ptr(&ba), ptr(&bb), ptr(&bc)],
        );
        let mut want = vec![0f32; 256];
        for i in 0..16 {
            for j in 0..16 {
                want[i * 16 + j] =
                    (0..8).map(|x| a2[i * 8 + x] * b2[x * 16 + j]).sum::<f64>() as f32;
            }
        }
        assert_eq!(get_f32(&bc), want, "{file}: wmma_tf32");
    }
}
