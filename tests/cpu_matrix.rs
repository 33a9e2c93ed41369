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
/// fragment layout is the GPU's (`tests/cpu_wmma_layout.rs`); loads, stores and the product
/// must agree on it. The tf32 inputs (halves, quarters) are exact in tf32.
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

/// Several warps per CTA, each with its own 16 x 16 A and 8 x 16 Bt (B transposed) in shared
/// memory: `ldmatrix.x4` (shared addresses) for A, `ldmatrix.x2` through generic addresses
/// for B with lanes 16..31 holding a null pointer, `ldmatrix.x1` with lanes 8..31 at a shared
/// offset past the block, `mma.sync.m16n8k16` f16 -> f32, `stmatrix.x2` of the B fragment
/// (generic, lanes 16..31 null), `stmatrix.x1` of the x1 fragment (lanes 8..31 past the
/// block) and `stmatrix.x4` of the A fragment to generic addresses from `cvta.shared` of the
/// variable itself; then `stmatrix.x2.trans` of the B fragment writes B row-major (16 bytes a
/// row) and `ldmatrix.x2.trans` reads the fragment back from it. Only the lanes that give rows
/// (8 per matrix) may be dereferenced. Per thread: `d` 4 f32 results, `x` the x1 fragment, 7
/// words read back from the stmatrix copies (2 of Bt, 1 of the x1 matrix, 4 of A), the
/// `.trans` round trip's fragment (2) and 2 words of the row-major B.
const MULTI_WARP_MATRIX: &str = r#"
.version 8.0
.target sm_90
.address_size 64

.visible .entry mw(.param .u64 pa, .param .u64 pb, .param .u64 pd, .param .u64 px)
{
	.shared .align 16 .b8 sA[2048];
	.shared .align 16 .b8 sB[1024];
	.shared .align 16 .b8 sC[1024];
	.shared .align 16 .b8 sD[2048];
	.shared .align 16 .b8 sE[512];
	.shared .align 16 .b8 sF[1024];
	.reg .pred %p<4>;
	.reg .b32 %r<80>;
	.reg .f32 %f<12>;
	.reg .b64 %rd<40>;
	ld.param.u64 %rd1, [pa];
	ld.param.u64 %rd2, [pb];
	ld.param.u64 %rd3, [pd];
	ld.param.u64 %rd4, [px];
	mov.u32 %r1, %tid.x;
	shr.u32 %r2, %r1, 5;
	and.b32 %r3, %r1, 31;
	mul.wide.u32 %rd5, %r1, 16;
	add.u64 %rd6, %rd1, %rd5;
	ld.global.v4.u32 {%r4, %r5, %r6, %r7}, [%rd6];
	mov.u32 %r8, sA;
	shl.b32 %r9, %r1, 4;
	add.u32 %r10, %r8, %r9;
	st.shared.v4.u32 [%r10], {%r4, %r5, %r6, %r7};
	mul.wide.u32 %rd7, %r1, 8;
	add.u64 %rd8, %rd2, %rd7;
	ld.global.v2.u32 {%r11, %r12}, [%rd8];
	mov.u32 %r13, sB;
	shl.b32 %r14, %r1, 3;
	add.u32 %r15, %r13, %r14;
	st.shared.v2.u32 [%r15], {%r11, %r12};
	bar.sync 0;
	// A: lane 8 j + r gives row r + 8 (j & 1), column 8 (j >> 1) of its warp's A.
	shr.u32 %r16, %r3, 3;
	and.b32 %r17, %r3, 7;
	and.b32 %r18, %r16, 1;
	shl.b32 %r19, %r18, 3;
	add.u32 %r20, %r17, %r19;
	shl.b32 %r21, %r20, 5;
	shr.u32 %r22, %r16, 1;
	shl.b32 %r23, %r22, 4;
	add.u32 %r24, %r21, %r23;
	shl.b32 %r25, %r2, 9;
	add.u32 %r26, %r25, %r24;
	add.u32 %r27, %r8, %r26;
	ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%r30, %r31, %r32, %r33}, [%r27];
	// Bt: lane 8 j + r (j < 2) gives row r, column 8 j.
	and.b32 %r34, %r16, 1;
	shl.b32 %r35, %r34, 4;
	shl.b32 %r36, %r17, 5;
	add.u32 %r37, %r35, %r36;
	shl.b32 %r38, %r2, 8;
	add.u32 %r39, %r38, %r37;
	add.u32 %r40, %r13, %r39;
	cvt.u64.u32 %rd9, %r40;
	cvta.shared.u64 %rd10, %rd9;
	setp.lt.u32 %p1, %r3, 16;
	selp.b64 %rd11, %rd10, 0, %p1;
	ldmatrix.sync.aligned.m8n8.x2.b16 {%r41, %r42}, [%rd11];
	setp.lt.u32 %p2, %r3, 8;
	selp.b32 %r43, %r40, -16, %p2;
	ldmatrix.sync.aligned.m8n8.x1.shared.b16 {%r44}, [%r43];
	mov.f32 %f1, 0f00000000;
	mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%f2, %f3, %f4, %f5}, {%r30, %r31, %r32, %r33}, {%r41, %r42}, {%f1, %f1, %f1, %f1};
	mul.wide.u32 %rd12, %r1, 16;
	add.u64 %rd13, %rd3, %rd12;
	st.global.v4.f32 [%rd13], {%f2, %f3, %f4, %f5};
	// stmatrix.x2 of B into sC in Bt's layout (generic, lanes 16.. null).
	mov.u32 %r45, sC;
	add.u32 %r46, %r45, %r39;
	cvt.u64.u32 %rd14, %r46;
	cvta.shared.u64 %rd15, %rd14;
	selp.b64 %rd16, %rd15, 0, %p1;
	stmatrix.sync.aligned.m8n8.x2.b16 [%rd16], {%r41, %r42};
	// stmatrix.x1 of the x1 fragment into sE + 128 w, rows 16 bytes apart (lanes 8.. past
	// the block).
	mov.u32 %r47, sE;
	shl.b32 %r48, %r2, 7;
	add.u32 %r49, %r47, %r48;
	shl.b32 %r50, %r17, 4;
	add.u32 %r51, %r49, %r50;
	selp.b32 %r52, %r51, -16, %p2;
	stmatrix.sync.aligned.m8n8.x1.shared.b16 [%r52], {%r44};
	// stmatrix.x4 of A into sD in A's layout, generic addresses from the variable.
	cvta.shared.u64 %rd17, sD;
	cvt.u64.u32 %rd18, %r26;
	add.u64 %rd19, %rd17, %rd18;
	stmatrix.sync.aligned.m8n8.x4.b16 [%rd19], {%r30, %r31, %r32, %r33};
	bar.warp.sync -1;
	shl.b32 %r53, %r3, 3;
	add.u32 %r54, %r45, %r38;
	add.u32 %r55, %r54, %r53;
	ld.shared.v2.u32 {%r56, %r57}, [%r55];
	shl.b32 %r58, %r3, 2;
	add.u32 %r59, %r49, %r58;
	ld.shared.u32 %r60, [%r59];
	add.u64 %rd20, %rd17, %rd5;
	ld.v4.u32 {%r61, %r62, %r63, %r64}, [%rd20];
	// B row-major into sF + 256 w (row k at 16 k; lanes 16.. at a shared offset past the
	// block), and its fragment back.
	mov.u32 %r65, sF;
	add.u32 %r66, %r65, %r38;
	shl.b32 %r67, %r3, 4;
	add.u32 %r68, %r66, %r67;
	selp.b32 %r69, %r68, -16, %p1;
	stmatrix.sync.aligned.m8n8.x2.trans.shared.b16 [%r69], {%r41, %r42};
	bar.warp.sync -1;
	ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16 {%r70, %r71}, [%r69];
	add.u32 %r72, %r66, %r53;
	ld.shared.v2.u32 {%r73, %r74}, [%r72];
	mul.wide.u32 %rd21, %r1, 48;
	add.u64 %rd22, %rd4, %rd21;
	st.global.v4.u32 [%rd22], {%r44, %r56, %r57, %r60};
	st.global.v4.u32 [%rd22+16], {%r61, %r62, %r63, %r64};
	st.global.v4.u32 [%rd22+32], {%r70, %r71, %r73, %r74};
	ret;
}
"#;

#[test]
fn matrix_instructions_in_several_warps_read_only_the_row_lanes() {
    let module = load_src(MULTI_WARP_MATRIX);
    for warps in [1usize, 2, 4] {
        let threads = 32 * warps;
        let mut r = Rng::new(5 + warps as u64);
        // Per warp: A 16 x 16 row-major, Bt 8 x 16 (row n holds column n of B).
        let a = ints(&mut r, 16 * warps, 16);
        let bt = ints(&mut r, 8 * warps, 16);
        let (ha, hb) = (f16s(&a), f16s(&bt));
        let (ba, bb) = (buf_u16(&ha), buf_u16(&hb));
        let bd = buf_f32(&vec![0.0; threads * 4]);
        let bx = buf_u32(&vec![0; threads * 12]);
        launch(
            &module,
            "mw",
            d3(1, 1, 1),
            d3(threads as u32, 1, 1),
            0,
            vec![ptr(&ba), ptr(&bb), ptr(&bd), ptr(&bx)],
        );
        let (d, x) = (get_f32(&bd), get_u32(&bx));
        let word = |h: &[u16], at: usize| h[at] as u32 | (h[at + 1] as u32) << 16;
        for w in 0..warps {
            let (aw, bw) = (&a[w * 256..(w + 1) * 256], &bt[w * 128..(w + 1) * 128]);
            let (haw, hbw) = (&ha[w * 256..(w + 1) * 256], &hb[w * 128..(w + 1) * 128]);
            for lane in 0..32 {
                let (g, t, i) = (lane / 4, lane % 4, w * 32 + lane);
                for e in 0..4 {
                    let (row, col) = (g + 8 * (e >> 1), 2 * t + (e & 1));
                    let want: i64 = (0..16).map(|k| aw[row * 16 + k] * bw[col * 16 + k]).sum();
                    assert_eq!(
                        d[i * 4 + e],
                        want as f32,
                        "{warps} warps: d of lane {i}, {e}"
                    );
                }
                // The x1 fragment: row g of Bt's first 8 x 8 matrix, columns 2t, 2t + 1; the
                // stmatrix.x1 copy holds it at word `lane` of a packed 8 x 8 matrix.
                let x = &x[i * 12..i * 12 + 12];
                let x1 = word(hbw, g * 16 + 2 * t);
                assert_eq!(x[0], x1, "{warps} warps: ldmatrix.x1 of lane {i}");
                assert_eq!(x[3], x1, "{warps} warps: stmatrix.x1 of lane {i}");
                let copy_b = [word(hbw, lane * 4), word(hbw, lane * 4 + 2)];
                assert_eq!(x[1..3], copy_b, "{warps} warps: stmatrix.x2 of lane {i}");
                let copy_a: Vec<u32> = (0..4).map(|k| word(haw, lane * 8 + 2 * k)).collect();
                assert_eq!(x[4..8], copy_a, "{warps} warps: stmatrix.x4 of lane {i}");
                // The B fragment (rows 2t, 2t + 1 and those plus 8 of column g, as ldmatrix.x2
                // of Bt gave it) after the .trans round trip, and B[k][n] = Bt[n][k] row-major.
                let bfrag: Vec<u32> = [2 * t, 2 * t + 8]
                    .iter()
                    .map(|&k| word(hbw, g * 16 + k))
                    .collect();
                assert_eq!(
                    x[8..10],
                    bfrag,
                    "{warps} warps: .trans round trip of lane {i}"
                );
                let b_at = |at: usize| hbw[(at % 8) * 16 + at / 8] as u32;
                let rows: Vec<u32> = [4 * lane, 4 * lane + 2]
                    .iter()
                    .map(|&at| b_at(at) | b_at(at + 1) << 16)
                    .collect();
                assert_eq!(x[10..12], rows, "{warps} warps: stmatrix.trans of lane {i}");
            }
        }
    }
}
