//! Every corpus kernel in scope of the cpu target runs with concrete inputs through the
//! embedding API, and its output is compared with a reference computed here from the kernel's
//! source (`tests/corpus/nvrtc/*.cu`, `numba/numba_gen.py`, `triton/triton_gen.py`) — never
//! with our own output. Floating-point references follow the source's operations in the
//! source's order; where NVRTC/NVVM contract `a*b+c` into `fma` (their default) the reference
//! uses `mul_add` and compares exactly; library math (libdevice polynomials, approximate
//! intrinsics) is compared with a stated tolerance.
//!
//! Kernels the cpu target cannot run (tensor cores, textures, TMA) must fail
//! to compile with "not supported on the cpu target: `INSTRUCTION`"; that is tested too.

mod cpu_util;

use cpu_util::*;

// ---------------------------------------------------------------------------------------------
// NVRTC

fn vecadd(opt: u8, file: &str) {
    let m = load_opt(&corpus(file), opt);
    let n = 1000usize;
    let mut r = Rng::new(1);
    let a: Vec<f32> = (0..n).map(|_| r.f32(-10.0, 10.0)).collect();
    let b: Vec<f32> = (0..n).map(|_| r.f32(-10.0, 10.0)).collect();
    let (ba, bb, bc) = (buf_f32(&a), buf_f32(&b), buf_f32(&vec![0.0; n]));
    launch(
        &m,
        "vecadd",
        d3(4, 1, 1),
        d3(256, 1, 1),
        0,
        vec![ptr(&ba), ptr(&bb), ptr(&bc), i32a(n as i32)],
    );
    let want: Vec<f32> = a.iter().zip(&b).map(|(x, y)| x + y).collect();
    assert_eq!(get_f32(&bc), want, "{file}");
}

#[test]
fn nvrtc_vecadd_and_its_variants() {
    for f in [
        "nvrtc/vecadd.ptx",
        "nvrtc/variants/vecadd.sm75.ptx",
        "nvrtc/variants/vecadd.sm90.ptx",
        "nvrtc/variants/vecadd.sm120.ptx",
        "nvrtc/variants/vecadd.nvrtc12.sm52.ptx",
        "nvrtc/variants/vecadd.debugG.sm80.ptx",
        "nvrtc/variants/vecadd.lineinfo.sm80.ptx",
    ] {
        vecadd(2, f);
    }
    vecadd(0, "nvrtc/vecadd.ptx");
}

fn fact(n: u32) -> u32 {
    if n <= 1 {
        1
    } else {
        n * fact(n - 1)
    }
}

fn fib(n: i32) -> i32 {
    if n < 2 {
        n
    } else {
        fib(n - 1) + fib(n - 2)
    }
}

fn calls(opt: u8, file: &str) {
    let m = load_opt(&corpus(file), opt);
    let n = 300usize;
    let mut r = Rng::new(2);
    let out0: Vec<f32> = (0..n).map(|_| r.f32(-4.0, 4.0)).collect();
    let sel: Vec<i32> = (0..n).map(|_| r.int(0, 100) as i32).collect();
    let (bo, bs) = (buf_f32(&out0), buf_i32(&sel));
    launch(
        &m,
        "calls",
        d3(3, 1, 1),
        d3(128, 1, 1),
        0,
        vec![ptr(&bo), ptr(&bs), i32a(n as i32)],
    );
    let want: Vec<f32> = (0..n)
        .map(|i| {
            let a = out0[i];
            let c = a as f64 * i as f64;
            let scale = a.mul_add(2.0, 1.0);
            let r = scale + fact(i as u32 & 7) as f32 + fib(i as i32 & 15) as f32 + c as f32;
            if sel[i] & 1 == 1 {
                r * 3.0
            } else {
                r + 3.0
            }
        })
        .collect();
    assert_eq!(get_f32(&bo), want, "{file}");
}

#[test]
fn nvrtc_calls_recursion_function_pointers_struct_returns() {
    calls(2, "nvrtc/calls.ptx");
    calls(0, "nvrtc/calls.ptx");
    calls(2, "nvrtc/variants/calls.nvrtc12.sm80.ptx");
    calls(2, "nvrtc/variants/calls.rdc.sm80.ptx");
}

/// `Params { float scale; int n; float bias[4]; }` as bytes.
fn params_bytes(scale: f32, n: i32, bias: [f32; 4]) -> Vec<u8> {
    let mut v = scale.to_le_bytes().to_vec();
    v.extend(n.to_le_bytes());
    for b in bias {
        v.extend(b.to_le_bytes());
    }
    v
}

#[test]
fn nvrtc_const_globals_constant_memory_and_byval_structs() {
    let m = load(&corpus("nvrtc/const_globals.ptx"));
    let n = 700usize;
    let mut r = Rng::new(3);
    let coeffs: Vec<f32> = (0..16).map(|_| r.f32(-0.5, 0.5)).collect();
    let coeff_bytes: Vec<u8> = coeffs.iter().flat_map(|c| c.to_le_bytes()).collect();
    // cudaMemcpyToSymbol(coeffs, …): the host writes __constant__ memory before the launch.
    m.write_global("coeffs", &coeff_bytes).unwrap();
    m.write_global("counter", &0u32.to_le_bytes()).unwrap();
    let x: Vec<f32> = (0..n).map(|_| r.f32(-1.5, 1.5)).collect();
    let (bx, by) = (buf_f32(&x), buf_f32(&vec![0.0; n]));
    let bias = [0.25f32, -1.0, 2.5, 8.0];
    let scale = 1.75f32;
    launch(
        &m,
        "poly",
        d3(3, 1, 1),
        d3(256, 1, 1),
        0,
        vec![
            ptr(&bx),
            ptr(&by),
            Arg::Bytes(params_bytes(scale, n as i32, bias)),
        ],
    );
    let gtable = [0.5f32, 1.5, 2.5, 3.5, 4.5, 5.5, 6.5, 7.5];
    let ctable = [1i32, 2, 3, 4];
    let want: Vec<f32> = (0..n)
        .map(|i| {
            let v = x[i];
            let mut acc = 0.0f32;
            for k in (0..16).rev() {
                acc = acc.mul_add(v, coeffs[k]);
            }
            acc * scale + bias[i & 3] + gtable[i & 7] * ctable[i & 3] as f32
        })
        .collect();
    // NVRTC contracts the last line's products differently from the source order: compare
    // within a few ulps.
    assert_close_f32(&get_f32(&by), &want, 4e-7, 1e-6, "poly");
    let counter = m.read_global("counter").unwrap();
    assert_eq!(
        u32::from_le_bytes(counter[..4].try_into().unwrap()),
        n as u32,
        "atomicAdd(&counter, 1) per thread below n"
    );
    assert!(m.write_global("nope", &[0]).is_err());
    assert!(m
        .write_global("coeffs", &[0; 65])
        .unwrap_err()
        .to_string()
        .contains("65 bytes do not fit module variable `coeffs` of 64 bytes"));

    let out = buf_f32(&[0.0; 64]);
    launch(
        &m,
        "byval",
        d3(1, 1, 1),
        d3(64, 1, 1),
        0,
        vec![Arg::Bytes(params_bytes(-2.0, 7, bias)), ptr(&out)],
    );
    let want: Vec<f32> = (0..64)
        .map(|t| (-2.0f32).mul_add(bias[t & 3], 7.0))
        .collect();
    assert_eq!(get_f32(&out), want, "byval");
}

/// `control` from control_flow.cu, statement by statement (wrapping where PTX wraps).
fn control_ref(v0: i32) -> i32 {
    let mut v = v0;
    let mut acc: i32 = 0;
    match v & 7 {
        0 => acc = 10,
        1 => acc = v.wrapping_mul(3),
        2 => acc = (v ^ 0x55) + 7,
        3 => acc += 7,
        5 => acc = v.wrapping_neg(),
        _ => acc = v >> 1,
    }
    'done: {
        for a in 0..v {
            if a & 3 == 1 {
                continue;
            }
            for b in 0..a {
                acc += a * b;
                if acc > 100000 {
                    break 'done;
                }
            }
            if acc < -5000 {
                break;
            }
        }
    }
    while acc > 1000 {
        acc /= 3;
    }
    loop {
        acc ^= acc.wrapping_shl(1);
        if !((acc & 0xff) != 0 && acc > 0) {
            break;
        }
        v -= 1;
        if v <= 0 {
            break;
        }
    }
    assert!(acc != 12345 && acc != 54321, "input {v0} would assert/trap");
    if acc > 0 {
        acc
    } else if acc < -10 {
        -acc
    } else {
        0
    }
}

#[test]
fn nvrtc_control_flow() {
    let m = load(&corpus("nvrtc/control_flow.ptx"));
    let mut r = Rng::new(4);
    let n = 500usize;
    let input: Vec<i32> = (0..n).map(|_| r.int(-60, 400) as i32).collect();
    let (bi, bo) = (buf_i32(&input), buf_i32(&vec![-1; n]));
    launch(
        &m,
        "control",
        d3(4, 1, 1),
        d3(128, 1, 1),
        0,
        vec![ptr(&bi), ptr(&bo), i32a(n as i32)],
    );
    let want: Vec<i32> = input.iter().map(|&v| control_ref(v)).collect();
    assert_eq!(get_i32(&bo), want);
}

#[test]
fn nvrtc_cooperative_groups_reduce() {
    coop_groups("nvrtc/coop_groups.ptx");
    coop_groups("nvrtc/variants/coop_groups.sm90.ptx");
}

fn coop_groups(file: &str) {
    let m = load(&corpus(file));
    let n = 1000usize;
    let mut r = Rng::new(5);
    let input: Vec<i32> = (0..n).map(|_| r.int(-1000, 1000) as i32).collect();
    let (bi, bo) = (buf_i32(&input), buf_i32(&[0, 0]));
    launch(
        &m,
        "cg_reduce",
        d3(8, 1, 1),
        d3(128, 1, 1),
        0,
        vec![ptr(&bi), ptr(&bo), i32a(n as i32)],
    );
    let out = get_i32(&bo);
    assert_eq!(
        out[0],
        input.iter().sum::<i32>(),
        "sum of every tile's reduce"
    );
    assert_eq!(
        out[1], 1024,
        "every warp is converged at coalesced_threads(): 32 per warp"
    );
}

#[test]
fn nvrtc_grid_sync_without_cooperative_launch_traps_as_on_a_gpu() {
    // cg::this_grid().sync() needs the grid workspace of a cooperative launch (%envreg1/2);
    // without one the CUDA code itself executes `trap`, which the cpu target reports.
    let m = load(&corpus("nvrtc/coop_groups.ptx"));
    let b = buf_i32(&[0; 64]);
    let e = launch_err(
        &m,
        "cg_grid_sync",
        d3(2, 1, 1),
        d3(32, 1, 1),
        0,
        vec![ptr(&b)],
    );
    assert!(
        e.contains("kernel cg_grid_sync failed in block (")
            && e.contains("trap instruction executed"),
        "{e}"
    );
}

#[test]
fn nvrtc_grid_sync_in_a_cooperative_launch() {
    // The same kernel in a cooperative launch: every CTA resident, the grid workspace in
    // %envreg1/2, and CUDA's own inline barrier (cooperative_groups/details/sync.h) between the
    // increment and the read of the next thread's element, which for the last thread of a CTA
    // belongs to another CTA. 6 CTAs, more than this machine has cores.
    let m = load(&corpus("nvrtc/coop_groups.ptx"));
    let (ctas, threads) = (6u32, 64u32);
    let n = (ctas * threads) as usize;
    let init: Vec<i32> = (0..n as i32).map(|i| i * 3).collect();
    let b = buf_i32(&init);
    let cfg = ptx2llvm::runtime::LaunchConfig {
        grid: [ctas, 1, 1],
        block: [threads, 1, 1],
        cooperative: true,
        ..Default::default()
    };
    m.launch_with("cg_grid_sync", &cfg, &mut [ptr(&b)])
        .unwrap_or_else(|e| panic!("cooperative launch of cg_grid_sync failed: {e}"));
    // Thread j's phase-2 update races with thread j-1's read of data[j] (on a GPU too), so
    // the read saw data[j] either after phase 1 (init + 1) or after j's own update, never
    // before phase 1 (init), which is what a missing grid barrier would show.
    let out = get_i32(&b);
    for i in 0..n {
        let j = (i + 1) % n;
        let read = out[i] - (init[i] + 1);
        assert!(
            read == init[j] + 1 || read == out[j],
            "thread {i} read {read} from element {j}: phase 1 left {}, phase 2 {}",
            init[j] + 1,
            out[j]
        );
    }
}

#[test]
fn nvrtc_dynamic_shared_memory() {
    let m = load(&corpus("nvrtc/dyn_shared.ptx"));
    for n in [1usize, 32, 100, 1024] {
        let d: Vec<i32> = (0..n as i32).map(|i| i * 7 - 3).collect();
        let b = buf_i32(&d);
        launch(
            &m,
            "dyn_reverse",
            d3(1, 1, 1),
            d3(n as u32, 1, 1),
            4 * n as u32,
            vec![ptr(&b), i32a(n as i32)],
        );
        let want: Vec<i32> = d.iter().rev().copied().collect();
        assert_eq!(get_i32(&b), want, "n = {n}");
    }
}

/// A multiple of 1/64 in [-8, 8): products and sums of two are exact in f64.
fn half_input(r: &mut Rng) -> u16 {
    f64_to_f16(r.int(-512, 512) as f64 / 64.0)
}

#[test]
fn nvrtc_half_and_bfloat16() {
    half_bf16("nvrtc/half_bf16.ptx");
    half_bf16("nvrtc/variants/half_bf16.sm90.ptx");
}

fn half_bf16(file: &str) {
    let m = load(&corpus(file));
    let n = 300usize;
    let mut r = Rng::new(6);
    let x: Vec<u16> = (0..n).map(|_| half_input(&mut r)).collect();
    let y: Vec<u16> = (0..n).map(|_| half_input(&mut r)).collect();
    let a = f64_to_f16(-1.25);
    let (bx, by) = (buf_u16(&x), buf_u16(&y));
    launch(
        &m,
        "half_axpy",
        d3(3, 1, 1),
        d3(128, 1, 1),
        0,
        vec![
            ptr(&bx),
            ptr(&by),
            Arg::Scalar(a.to_le_bytes().to_vec()),
            i32a(n as i32),
        ],
    );
    let h = |b: u16| f16_to_f32(b) as f64;
    let want: Vec<u16> = (0..n)
        .map(|i| f64_to_f16(h(a) * h(x[i]) + h(y[i])))
        .collect();
    assert_eq!(get_u16(&by), want, "half_axpy: __hfma rounds once");

    // half2_mul: n counts __half2 pairs.
    let pairs = n / 2;
    let y2: Vec<u16> = (0..n).map(|_| half_input(&mut r)).collect();
    let by2 = buf_u16(&y2);
    launch(
        &m,
        "half2_mul",
        d3(2, 1, 1),
        d3(128, 1, 1),
        0,
        vec![ptr(&bx), ptr(&by2), i32a(pairs as i32)],
    );
    let want: Vec<u16> = (0..n)
        .map(|i| {
            if i >= 2 * pairs {
                return y2[i];
            }
            let p = f64_to_f16(h(x[i]) * h(y2[i]));
            f64_to_f16(h(p) + 1.0)
        })
        .collect();
    assert_eq!(get_u16(&by2), want, "half2_mul: __hmul2 then + 1");

    let xb: Vec<u16> = (0..n).map(|_| f32_to_bf16(r.f32(-100.0, 100.0))).collect();
    let yf: Vec<f32> = (0..n).map(|_| r.f32(-100.0, 100.0)).collect();
    let (bxb, byf) = (buf_u16(&xb), buf_f32(&yf));
    launch(
        &m,
        "bf16_ops",
        d3(3, 1, 1),
        d3(128, 1, 1),
        0,
        vec![ptr(&bxb), ptr(&byf), i32a(n as i32)],
    );
    let want: Vec<f32> = (0..n)
        .map(|i| {
            let b = f32_to_bf16(bf16_to_f32(xb[i]) * 2.0);
            bf16_to_f32(b) + f16_to_f32(f64_to_f16(yf[i] as f64))
        })
        .collect();
    assert_eq!(get_f32(&byf), want, "bf16_ops");
}

#[test]
fn nvrtc_math64() {
    math64("nvrtc/math64.ptx");
    math64("nvrtc/variants/math64.fastmath.sm80.ptx");
}

fn math64(file: &str) {
    let m = load(&corpus(file));
    let n = 400usize;
    let mut r = Rng::new(7);
    let a: Vec<i64> = (0..n).map(|_| r.int(-100_000, 100_000)).collect();
    let b: Vec<u64> = (0..n).map(|_| r.int(0, 1 << 40) as u64).collect();
    let x: Vec<f64> = (0..n).map(|_| r.f64(0.01, 20.0)).collect();
    let (ba, bb, bx) = (buf_i64(&a), buf_u64(&b), buf_f64(&x));
    let (by, bz) = (buf_f64(&vec![0.0; n]), buf_i64(&vec![0; n]));
    launch(
        &m,
        "math64",
        d3(4, 1, 1),
        d3(128, 1, 1),
        0,
        vec![
            ptr(&ba),
            ptr(&bb),
            ptr(&bx),
            ptr(&by),
            ptr(&bz),
            i32a(n as i32),
        ],
    );
    let mut want_z = Vec::new();
    let mut want_y = Vec::new();
    for i in 0..n {
        let p = a[i].wrapping_mul(b[i] as i64);
        // long long / unsigned long long: the usual conversions make it unsigned.
        let q = ((a[i] as u64) / (b[i] | 1)) as i64;
        let rr = b[i] % 1_000_000_007;
        let s = (a[i] >> 7) ^ ((b[i] << 3) as i64);
        let hi = ((b[i] as u128 * a[i] as u64 as u128) >> 64) as u64;
        let z = p
            .wrapping_add(q)
            .wrapping_add(rr as i64)
            .wrapping_add(s)
            .wrapping_add(hi as i64)
            .wrapping_add(b[i].count_ones() as i64)
            .wrapping_add(a[i].leading_zeros() as i64);
        want_z.push(z);
        let d = x[i];
        want_y.push(
            d.mul_add(2.5, 1.0) / (d + 3.0)
                + d.sqrt()
                + d.exp()
                + d.ln()
                + d.sin()
                + d.powf(1.5)
                + (d as f32) as f64
                + p as f64
                + d.floor()
                + d.abs()
                + d.round_ties_even(),
        );
    }
    assert_eq!(get_i64(&bz), want_z, "64-bit integer part");
    // libdevice's exp/log/sin/pow are within 2 ulp; the sum has 11 roundings.
    assert_close_f64(&get_f64(&by), &want_y, 1e-14, 1e-12, "double part");
}

extern "C" {
    fn erff(x: f32) -> f32;
    fn erf(x: f64) -> f64;
    fn tanhf(x: f32) -> f32;
}

#[test]
fn nvrtc_mathfns() {
    mathfns("nvrtc/mathfns.ptx");
    mathfns("nvrtc/variants/mathfns.sm75.ptx");
    mathfns("nvrtc/variants/mathfns.nvrtc12.sm52.ptx");
    mathfns("nvrtc/variants/mathfns.fastmath.sm80.ptx");
    mathfns("nvrtc/variants/mathfns.ftz_noprec.sm80.ptx");
}

fn mathfns(file: &str) {
    let m = load(&corpus(file));
    let n = 256usize;
    let mut r = Rng::new(8);
    let x: Vec<f32> = (0..n).map(|_| r.f32(0.1, 4.0)).collect();
    let (bx, by) = (buf_f32(&x), buf_f32(&vec![0.0; n]));
    launch(
        &m,
        "mathfns",
        d3(2, 1, 1),
        d3(128, 1, 1),
        0,
        vec![ptr(&bx), ptr(&by), i32a(n as i32)],
    );
    let want: Vec<f32> = x
        .iter()
        .map(|&v| {
            // SAFETY: `tanhf` from the C math library is a pure function of its argument.
            let a = v.sin() + v.cos() + v.exp() + v.ln() + v.powf(2.5) + unsafe { tanhf(v) };
            let b = v.sin() + v.cos() + v.exp() + v.ln() + v / 3.0 + v.powf(1.5);
            let c = v.sqrt() + 1.0 / v.sqrt() + 1.0 / v.sqrt() + v.sqrt() + 1.0 / v + 1.0 / v;
            let d = v.min(1.0)
                + v.max(0.0)
                + v.abs()
                + v.floor()
                + v.ceil()
                + v.trunc()
                + v.round()
                + v.clamp(0.0, 1.0)
                + (-v.abs())
                + v.mul_add(v, 1.0)
                + v * v
                + (v + 1.0);
            let e = (v.round_ties_even() as i32)
                .wrapping_add(v as i32)
                .wrapping_add(v.to_bits() as i32);
            let u = v as u32;
            a + b
                + c
                + d
                + e as f32
                + u as f32
                + f32::from_bits(e as u32 & 0x3f80_0000)
                // SAFETY: `erff` from the C math library is a pure function of its argument.
                + unsafe { erff(v) }
                + v.exp2()
                + v.log2()
        })
        .collect();
    // __float_as_int(v) (about 1e9) dominates the sum; the fast intrinsics (__sinf, __expf,
    // …) differ from the precise functions by far less than its ulp (64 or 128).
    assert_close_f32(&get_f32(&by), &want, 3e-7, 0.0, "mathfns");
}

#[test]
fn nvrtc_misc_ldg_fences_clock_nanosleep_local_arrays() {
    let m = load(&corpus("nvrtc/misc_sm80.ptx"));
    let n = 200usize;
    let mut r = Rng::new(9);
    let input: Vec<f32> = (0..4 * n).map(|_| r.f32(-5.0, 5.0)).collect();
    let (bi, bo) = (buf_f32(&input), buf_f32(&vec![0.0; 4 * n]));
    let (bf, bt) = (buf_i32(&[0]), buf_i64(&[-1, -1, -1]));
    launch(
        &m,
        "misc",
        d3(2, 1, 1),
        d3(128, 1, 1),
        0,
        vec![ptr(&bi), ptr(&bo), ptr(&bf), ptr(&bt), i32a(n as i32)],
    );
    let mut want = input.clone();
    for i in 0..n {
        want[4 * i] += ((i & 7) * i) as f32;
        want[4 * i + 3] *= 2.0;
    }
    assert_eq!(get_f32(&bo), want);
    assert_eq!(get_i32(&bf), [1]);
    let t = get_i64(&bt);
    assert!(t[0] >= 0, "clock64 difference {}", t[0]);
    assert_eq!(t[1], 0, "%lanemask_lt of lane 0");
    assert_eq!(t[2], 1 + 1 + 32, "gridDim.z + blockDim.z + warpSize");
}

#[test]
fn nvrtc_templates_saxpy_float_and_double() {
    templates("nvrtc/templates.ptx");
    templates("nvrtc/variants/templates.sm80.ptx");
}

fn templates(file: &str) {
    let m = load(&corpus(file));
    let n = 3000usize;
    let mut r = Rng::new(10);
    let x: Vec<f32> = (0..n).map(|_| r.f32(-2.0, 2.0)).collect();
    let y: Vec<f32> = (0..n).map(|_| r.f32(-2.0, 2.0)).collect();
    let (bx, by) = (buf_f32(&x), buf_f32(&y));
    // grid-stride loop: 4 blocks of 128 cover 3000 elements in 6 strides.
    launch(
        &m,
        "_Z7saxpy_tIfLi128EEvT_PKS0_PS0_i",
        d3(4, 1, 1),
        d3(128, 1, 1),
        0,
        vec![f32a(0.75), ptr(&bx), ptr(&by), i32a(n as i32)],
    );
    let want: Vec<f32> = (0..n).map(|i| 0.75f32.mul_add(x[i], y[i])).collect();
    assert_eq!(get_f32(&by), want, "float");
    let xd: Vec<f64> = (0..n).map(|_| r.f64(-2.0, 2.0)).collect();
    let yd: Vec<f64> = (0..n).map(|_| r.f64(-2.0, 2.0)).collect();
    let (bx, by) = (buf_f64(&xd), buf_f64(&yd));
    launch(
        &m,
        "_Z7saxpy_tIdLi256EEvT_PKS0_PS0_i",
        d3(3, 1, 1),
        d3(256, 1, 1),
        0,
        vec![f64a(-1.5), ptr(&bx), ptr(&by), i32a(n as i32)],
    );
    let want: Vec<f64> = (0..n).map(|i| (-1.5f64).mul_add(xd[i], yd[i])).collect();
    assert_eq!(get_f64(&by), want, "double");
}

/// `__shfl_down_sync` over a warp: lanes whose source is out of range keep their value.
fn shfl_down_sum(v: &[f32]) -> Vec<f32> {
    let mut v = v.to_vec();
    for o in [16, 8, 4, 2, 1] {
        v = (0..32)
            .map(|l| v[l] + if l + o < 32 { v[l + o] } else { v[l] })
            .collect();
    }
    v
}

fn warp_shuffle(opt: u8, file: &str) {
    let m = load_opt(&corpus(file), opt);
    let warps = 8usize;
    let n = 32 * warps;
    let mut r = Rng::new(11);
    let input: Vec<f32> = (0..n).map(|_| r.f32(-100.0, 100.0)).collect();
    let (bi, bo, bx) = (
        buf_f32(&input),
        buf_f32(&vec![0.0; warps]),
        buf_i32(&vec![0; n]),
    );
    launch(
        &m,
        "warp_reduce",
        d3(2, 1, 1),
        d3(128, 1, 1),
        0,
        vec![ptr(&bi), ptr(&bo), ptr(&bx)],
    );
    let mut want_out = Vec::new();
    let mut want_idx = Vec::new();
    for w in 0..warps {
        let lanes = &input[32 * w..32 * w + 32];
        let v = shfl_down_sum(lanes);
        let mut mx = lanes.to_vec();
        for o in [16, 8, 4, 2, 1] {
            mx = (0..32).map(|l| mx[l].max(mx[l ^ o])).collect();
        }
        // lane 0: v + w + (float)(double) v of lane 1
        want_out.push(v[0] + mx[0] + v[1]);
        for lane in 0..32i32 {
            let b = 3 * 2; // __shfl_sync(lane * 2, 3)
            let u = if lane >= 1 { lane - 1 } else { lane };
            want_idx.push(b + u);
        }
    }
    assert_eq!(get_f32(&bo), want_out, "{file}: out");
    assert_eq!(get_i32(&bx), want_idx, "{file}: idxout");
}

#[test]
fn nvrtc_warp_shuffle() {
    warp_shuffle(2, "nvrtc/warp_shuffle.ptx");
    warp_shuffle(0, "nvrtc/warp_shuffle.ptx");
    warp_shuffle(2, "nvrtc/variants/warp_shuffle.sm75.ptx");
    warp_shuffle(2, "nvrtc/variants/warp_shuffle.nvrtc12.sm70.ptx");
}

fn warp_vote(opt: u8, file: &str) {
    let m = load_opt(&corpus(file), opt);
    let warps = 6usize;
    let n = 32 * warps;
    let mut r = Rng::new(12);
    let input: Vec<i32> = (0..n)
        .map(|i| match i / 32 {
            0 => 7,                        // uniform: match_all true
            1 => r.int(-3, 4) as i32,      // small values with zeros: all false
            2 => 2 * r.int(1, 50) as i32,  // even, positive
            3 => -(r.int(1, 1000) as i32), // negative
            _ => r.int(-1000, 1000) as i32 | 1,
        })
        .collect();
    let (bi, bo) = (buf_i32(&input), buf_u32(&vec![0; n]));
    launch(
        &m,
        "warp_vote",
        d3(2, 1, 1),
        d3(96, 1, 1),
        0,
        vec![ptr(&bi), ptr(&bo)],
    );
    let mut want = Vec::new();
    for w in 0..warps {
        let v = &input[32 * w..32 * w + 32];
        let ballot: u32 = (0..32).filter(|&l| v[l] > 0).map(|l| 1u32 << l).sum();
        let any = v.contains(&7) as u32;
        let all = v.iter().all(|&x| x != 0) as u32;
        let act = u32::MAX;
        let uniform = v.iter().all(|&x| x & 1 == v[0] & 1);
        let (ma, pred) = if uniform { (u32::MAX, 1u32) } else { (0, 0) };
        let radd = v.iter().fold(0u32, |s, &x| s.wrapping_add(x as u32));
        let rmin = v.iter().map(|&x| x as u32).min().unwrap();
        let rmax = *v.iter().max().unwrap() as u32;
        let rand = v.iter().fold(u32::MAX, |s, &x| s & x as u32);
        let ror = v.iter().fold(0, |s, &x| s | x as u32);
        let rxor = v.iter().fold(0, |s, &x| s ^ x as u32);
        let ffs = if ballot == 0 {
            0
        } else {
            ballot.trailing_zeros() + 1
        };
        for l in 0..32 {
            let mm: u32 = (0..32).filter(|&k| v[k] == v[l]).map(|k| 1u32 << k).sum();
            want.push(
                ballot
                    ^ any
                    ^ all
                    ^ act
                    ^ mm
                    ^ ma
                    ^ pred
                    ^ radd
                    ^ rmin
                    ^ rmax
                    ^ rand
                    ^ ror
                    ^ rxor
                    ^ ballot.count_ones()
                    ^ ffs
                    ^ ballot.leading_zeros()
                    ^ ballot.reverse_bits(),
            );
        }
    }
    assert_eq!(get_u32(&bo), want, "{file}");
}

#[test]
fn nvrtc_warp_vote_match_redux() {
    warp_vote(2, "nvrtc/warp_vote.ptx");
    warp_vote(0, "nvrtc/warp_vote.ptx");
    warp_vote(2, "nvrtc/variants/warp_vote.sm90.ptx");
}

#[test]
fn nvrtc_shared_sync_debug_variant() {
    let m = load(&corpus("nvrtc/variants/shared_sync.debugG.sm80.ptx"));
    let n = 1000usize;
    let x: Vec<f32> = (0..1024).map(|i| ((i * 37) % 101) as f32).collect();
    let (bx, bo) = (buf_f32(&x), buf_f32(&[0.0; 4]));
    launch(
        &m,
        "block_reduce",
        d3(4, 1, 1),
        d3(256, 1, 1),
        0,
        vec![ptr(&bx), ptr(&bo), i32a(n as i32)],
    );
    // Small integers: every summation order gives the same exact result.
    let want: Vec<f32> = (0..4)
        .map(|b| (b * 256..(b * 256 + 256).min(n)).map(|i| x[i]).sum())
        .collect();
    assert_eq!(get_f32(&bo), want);
}

/// `__pipeline_memcpy_async` (cp.async.cg 16 bytes, commit_group, wait_group 1) double-buffers
/// tiles of float4 through shared memory; each tile comes out with `.x` doubled. The cpu target
/// copies when the copy is issued, which no program can tell from a later completion.
#[test]
fn nvrtc_pipeline_async_copies() {
    let m = load(&corpus("nvrtc/pipeline_async.ptx"));
    for tiles in [1usize, 2, 5] {
        let n = tiles * 128 + 7;
        let x: Vec<f32> = (0..4 * n).map(|i| (i % 97) as f32 - 40.0).collect();
        let (bx, bo) = (buf_f32(&x), buf_f32(&vec![0.0; 4 * n]));
        launch(
            &m,
            "stage_copy",
            d3(1, 1, 1),
            d3(128, 1, 1),
            0,
            vec![ptr(&bx), ptr(&bo), i32a(n as i32)],
        );
        let mut want = vec![0.0f32; 4 * n];
        for i in 0..tiles * 128 {
            want[4 * i..4 * i + 4].copy_from_slice(&x[4 * i..4 * i + 4]);
            want[4 * i] *= 2.0;
        }
        assert_eq!(get_f32(&bo), want, "{tiles} tiles");
    }
}

/// A module compiled for one block shape (`Module::from_ptx_for`): its thread loops have
/// `%ntid` constant; it computes what the general module computes, and refuses other blocks.
#[test]
fn api_modules_specialized_for_a_block() {
    use ptx2llvm::target::cpu::fission::CpuMode;
    let src = std::fs::read_to_string(corpus("nvrtc/pipeline_async.ptx")).unwrap();
    let m = Module::from_ptx_for(&src, 2, CpuMode::Fission, Some(Dim3([128, 1, 1]))).unwrap();
    let n = 3 * 128;
    let x: Vec<f32> = (0..4 * n).map(|i| (i % 31) as f32).collect();
    let (bx, bo) = (buf_f32(&x), buf_f32(&vec![0.0; 4 * n]));
    let mut args = vec![ptr(&bx), ptr(&bo), i32a(n as i32)];
    m.launch(
        "stage_copy",
        Dim3([1, 1, 1]),
        Dim3([128, 1, 1]),
        0,
        &mut args,
    )
    .unwrap();
    let want: Vec<f32> = x
        .iter()
        .enumerate()
        .map(|(i, v)| if i % 4 == 0 { 2.0 * v } else { *v })
        .collect();
    assert_eq!(get_f32(&bo), want);
    let e = m
        .launch(
            "stage_copy",
            Dim3([1, 1, 1]),
            Dim3([64, 1, 1]),
            0,
            &mut args,
        )
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("compiled for blocks of (128, 1, 1) threads") && e.contains("not (64, 1, 1)"),
        "{e}"
    );
}

/// clang's `reduce` calls a `__noinline__` device function with shuffles (`warp_sum`) twice:
/// the thread-loop path inlines those calls (`fission/inline.rs`); the sums must come out as
/// on the coroutine path, which runs the calls as written.
#[test]
fn clang_noinline_warp_sum_calls() {
    for f in ["clang/k_builtins.sm80.ptx", "clang/k_cudahdr.sm80.ptx"] {
        let m = load(&corpus(f));
        if ptx2llvm::target::cpu::fission::CpuMode::from_env()
            != ptx2llvm::target::cpu::fission::CpuMode::Coroutine
        {
            let path = &m.program().kernel("reduce").unwrap().path;
            assert!(
                matches!(path, ptx2llvm::target::cpu::fission::KernelPath::Fission(_)),
                "{f}: {path:?}"
            );
        }
        let n = 300usize;
        // Small integers: every order of float additions is exact.
        let x: Vec<f32> = (0..n).map(|i| (i % 7) as f32).collect();
        let (bx, bo) = (buf_f32(&x), buf_f32(&[0.0, -1.0]));
        launch(
            &m,
            "reduce",
            d3(3, 1, 1),
            d3(128, 1, 1),
            0,
            vec![ptr(&bx), ptr(&bo), i32a(n as i32)],
        );
        let got = get_f32(&bo);
        assert_eq!(got[0], x.iter().sum::<f32>(), "{f}");
        assert_eq!(got[1], -1.0, "{f}: every block has a positive warp sum");
    }
}

#[test]
fn nvrtc_atomics_variants() {
    for f in [
        "nvrtc/atomics.ptx",
        "nvrtc/variants/atomics.sm75.ptx",
        "nvrtc/variants/atomics.sm90.ptx",
        "nvrtc/variants/atomics.nvrtc12.sm60.ptx",
    ] {
        let m = load(&corpus(f));
        let n = 300usize;
        // Multiples of 1/4 below 2^20: every order of float additions is exact.
        let x: Vec<f32> = (0..n).map(|i| ((i * 13) % 64) as f32 * 0.25).collect();
        let bx = buf_f32(&x);
        let (fs, is, dm) = (buf_f32(&[0.0]), buf_i32(&[0]), buf_f64(&[-1.0, 0.0]));
        let (um, fl) = (buf_u32(&[u32::MAX]), buf_i32(&[0, 0]));
        launch(
            &m,
            "atomics",
            d3(3, 1, 1),
            d3(128, 1, 1),
            0,
            vec![
                ptr(&bx),
                ptr(&fs),
                ptr(&is),
                ptr(&dm),
                ptr(&um),
                ptr(&fl),
                i32a(n as i32),
            ],
        );
        assert_eq!(get_f32(&fs), [x.iter().sum::<f32>()], "{f}: fsum");
        assert_eq!(get_i32(&is), [n as i32], "{f}: isum");
        let max = x.iter().fold(f32::MIN, |a, &b| a.max(b)) as f64;
        assert_eq!(get_f64(&dm), [max, n as f64], "{f}: dmax, double add");
        assert_eq!(get_u32(&um), [0], "{f}: umin");
        // The last block to store its shared counter: 128 (blocks 0, 1) or 44 (block 2).
        let fl = get_i32(&fl);
        assert!(fl[0] == 128 || fl[0] == 44, "{f}: flag[0] = {}", fl[0]);
        assert_eq!(fl[1], 1, "{f}: atomicCAS(flag+1, 0, 1)");
    }
}

/// `cluster_hist` (`__cluster_dims__(2, 1, 1)`, `cluster.sync()`, `map_shared_rank`) in
/// clusters of one CTA, as the cpu target runs them: values below 64 go to rank 0, this CTA,
/// whose bins then hold the whole histogram; a value for rank 1 fails the launch naming `mapa`.
#[test]
fn nvrtc_cluster_kernel_runs_in_a_cluster_of_one() {
    let m = load(&corpus("nvrtc/cluster_sm90.ptx"));
    let n = 256usize;
    let x: Vec<i32> = (0..n as i32).map(|i| (i * 37 + 5) % 64).collect();
    let (bin, bout) = (buf_i32(&x), buf_i32(&vec![-1; 128]));
    launch(
        &m,
        "cluster_hist",
        d3(1, 1, 1),
        d3(256, 1, 1),
        0,
        vec![ptr(&bin), ptr(&bout), i32a(n as i32)],
    );
    let mut want = vec![0; 64];
    for v in &x {
        want[*v as usize] += 1;
    }
    let got = get_i32(&bout);
    assert_eq!(got[..64], want[..], "bins of rank 0");
    assert_eq!(got[64..], vec![-1; 64][..], "rank 1 writes nothing");
    let y: Vec<i32> = (0..n as i32).map(|i| i % 128).collect();
    let by = buf_i32(&y);
    let e = launch_err(
        &m,
        "cluster_hist",
        d3(1, 1, 1),
        d3(256, 1, 1),
        0,
        vec![ptr(&by), ptr(&bout), i32a(n as i32)],
    );
    assert!(
        e.contains("`mapa`: CTA rank 1 is not in the cluster"),
        "{e}"
    );
}

#[test]
fn nvrtc_unsupported_kernels_name_the_instruction() {
    for (file, instr) in [
        ("nvrtc/texture.ptx", "tex.1d.v4.f32.s32"),
        ("triton/matmul_fp16.sm90.ptx", "wgmma.fence.sync.aligned"),
        (
            "triton/matmul_fp16.sm100.ptx",
            "tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32",
        ),
        (
            "triton/matmul_fp16_spec.sm90.ptx",
            "wgmma.fence.sync.aligned",
        ),
        (
            "triton/matmul_fp16_spec.sm100.ptx",
            "tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32",
        ),
    ] {
        let e = cpu_compile_error(&corpus(file));
        assert!(
            e.contains(&format!(
                "error: not supported on the cpu target: `{instr}`"
            )),
            "{file}: {e}"
        );
        // The API reports the same.
        let src = std::fs::read_to_string(corpus(file)).unwrap();
        let e = Module::from_ptx(&src, 2).err().unwrap().to_string();
        assert!(
            e.contains(&format!("not supported on the cpu target: `{instr}`")),
            "{file}: {e}"
        );
    }
}

// ---------------------------------------------------------------------------------------------
// numba (each kernel as compiled for sm_80 and for sm_90)

const NUMBA_ARCHS: [&str; 2] = ["sm80", "sm90"];

/// Loads `numba/{file}.ptx` (`file` names the arch: `axpy.sm90`) and its one kernel.
fn numba(file: &str) -> (Module, String) {
    let m = load(&corpus(&format!("numba/{file}.ptx")));
    let names = m.kernel_names();
    assert_eq!(names.len(), 1, "{file}: {names:?}");
    let k = names[0].clone();
    (m, k)
}

fn numba_axpy(file: &str) {
    let (m, k) = numba(file);
    let n = 1000usize;
    let mut r = Rng::new(20);
    let x: Vec<f32> = (0..n).map(|_| r.f32(-3.0, 3.0)).collect();
    let y: Vec<f32> = (0..n).map(|_| r.f32(-3.0, 3.0)).collect();
    let (br, bx, by) = (buf_f32(&vec![0.0; n]), buf_f32(&x), buf_f32(&y));
    let mut args = numba_1d(&br, n, 4);
    args.push(f32a(2.5));
    args.extend(numba_1d(&bx, n, 4));
    args.extend(numba_1d(&by, n, 4));
    launch(&m, &k, d3(8, 1, 1), d3(128, 1, 1), 0, args);
    let want: Vec<f32> = (0..n).map(|i| 2.5f32.mul_add(x[i], y[i])).collect();
    assert_eq!(
        get_f32(&br),
        want,
        "{file}: r = a * x + y (NVVM contracts to fma)"
    );
}

#[test]
fn numba_axpy_and_lineinfo() {
    for arch in NUMBA_ARCHS {
        numba_axpy(&format!("axpy.{arch}"));
        numba_axpy(&format!("axpy_lineinfo.{arch}"));
    }
}

#[test]
fn numba_block_sum() {
    for arch in NUMBA_ARCHS {
        numba_block_sum_on(arch);
    }
}

fn numba_block_sum_on(arch: &str) {
    let (m, k) = numba(&format!("block_sum.{arch}"));
    let n = 1000usize;
    let x: Vec<f32> = (0..n).map(|i| ((i * 7) % 23) as f32).collect();
    let (bx, bo) = (buf_f32(&x), buf_f32(&[0.0]));
    let mut args = numba_1d(&bx, n, 4);
    args.extend(numba_1d(&bo, 1, 4));
    launch(&m, &k, d3(4, 1, 1), d3(256, 1, 1), 0, args);
    assert_eq!(get_f32(&bo), [x.iter().sum::<f32>()]);
}

#[test]
fn numba_warp_ops() {
    for arch in NUMBA_ARCHS {
        numba_warp_ops_on(arch);
    }
}

fn numba_warp_ops_on(arch: &str) {
    let (m, k) = numba(&format!("warp_ops.{arch}"));
    let n = 128usize;
    let mut r = Rng::new(21);
    let x: Vec<f32> = (0..n)
        .map(|i| {
            if i % 5 == 0 {
                (r.int(-3, 3) * 50) as f32
            } else {
                r.f32(-150.0, 150.0)
            }
        })
        .collect();
    let (bx, bo) = (buf_f32(&x), buf_f32(&vec![0.0; n]));
    let mut args = numba_1d(&bx, n, 4);
    args.extend(numba_1d(&bo, n, 4));
    launch(&m, &k, d3(2, 1, 1), d3(64, 1, 1), 0, args);
    let mut want = Vec::new();
    for w in 0..n / 32 {
        let lanes = &x[32 * w..32 * w + 32];
        let v = shfl_down_sum(lanes);
        let b: u32 = (0..32).filter(|&l| lanes[l] > 0.0).map(|l| 1u32 << l).sum();
        let a = lanes.iter().any(|&x| x > 100.0) as u32 as f32;
        for l in 0..32 {
            let w = lanes[l ^ 1];
            let key = lanes[l] as i32;
            let m: u32 = (0..32)
                .filter(|&k| lanes[k] as i32 == key)
                .map(|k| 1u32 << k)
                .sum();
            // numba types the ballot and match masks as int32 (cvt.rn.f32.s32).
            want.push(v[l] + w + b as i32 as f32 + a + m as i32 as f32 + b.count_ones() as f32);
        }
    }
    let got = get_f32(&bo);
    for i in 0..n {
        assert_eq!(got[i], want[i], "element {i} (lane {})", i % 32);
    }
}

#[test]
fn numba_atomics() {
    for arch in NUMBA_ARCHS {
        numba_atomics_on(arch);
    }
}

fn numba_atomics_on(arch: &str) {
    let (m, k) = numba(&format!("atomics.{arch}"));
    let n = 1000usize;
    let mut r = Rng::new(22);
    let x: Vec<f32> = (0..n).map(|_| r.int(-5000, 5000) as f32 * 0.5).collect();
    let bx = buf_f32(&x);
    let fsum = buf_f32(&[0.0]);
    let imax = buf_i32(&[i32::MIN, i32::MAX]);
    let cas = buf_i32(&[0, -1]);
    let ucnt = buf_u32(&[0]);
    let mut args = numba_1d(&bx, n, 4);
    args.extend(numba_1d(&fsum, 1, 4));
    args.extend(numba_1d(&imax, 2, 4));
    args.extend(numba_1d(&cas, 2, 4));
    args.extend(numba_1d(&ucnt, 1, 4));
    launch(&m, &k, d3(8, 1, 1), d3(128, 1, 1), 0, args);
    assert_eq!(
        get_f32(&fsum),
        [x.iter().sum::<f32>()],
        "halves: exact in any order"
    );
    let ints: Vec<i32> = x.iter().map(|&v| v as i32).collect();
    assert_eq!(
        get_i32(&imax),
        [*ints.iter().max().unwrap(), *ints.iter().min().unwrap()]
    );
    let c = get_i32(&cas);
    assert!((0..n as i32).contains(&c[0]), "cas[0] = {}", c[0]);
    assert!((0..n as i32).contains(&c[1]), "exch: cas[1] = {}", c[1]);
    // atomic.inc wraps to 0 past 100: n increments from 0 end at n mod 101.
    assert_eq!(get_u32(&ucnt), [(n % 101) as u32]);
}

#[test]
fn numba_math_f64() {
    for arch in NUMBA_ARCHS {
        numba_math_f64_on(arch);
    }
}

fn numba_math_f64_on(arch: &str) {
    let (m, k) = numba(&format!("math.{arch}"));
    let n = 300usize;
    let mut r = Rng::new(23);
    let x: Vec<f64> = (0..n).map(|_| r.f64(0.05, 6.0)).collect();
    let (bx, by) = (buf_f64(&x), buf_f64(&vec![0.0; n]));
    let mut args = numba_1d(&bx, n, 8);
    args.extend(numba_1d(&by, n, 8));
    launch(&m, &k, d3(3, 1, 1), d3(128, 1, 1), 0, args);
    let want: Vec<f64> = x
        .iter()
        .map(|&v| {
            v.sin()
                + v.exp()
                + v.ln()
                + v.sqrt()
                + v.powf(2.5)
                + v.tanh()
                // SAFETY: `erf` from the C math library is a pure function of its argument.
                + unsafe { erf(v) }
                + v.floor()
                + v.atan2(1.0)
                + v.abs()
        })
        .collect();
    assert_close_f64(&get_f64(&by), &want, 1e-14, 1e-14, "math");
}

#[test]
fn numba_math_fastmath_f32() {
    for arch in NUMBA_ARCHS {
        numba_math_fastmath_f32_on(arch);
    }
}

fn numba_math_fastmath_f32_on(arch: &str) {
    let (m, k) = numba(&format!("math_fastmath.{arch}"));
    let n = 300usize;
    let mut r = Rng::new(24);
    let x: Vec<f32> = (0..n).map(|_| r.f32(0.05, 6.0)).collect();
    let (bx, by) = (buf_f32(&x), buf_f32(&vec![0.0; n]));
    let mut args = numba_1d(&bx, n, 4);
    args.extend(numba_1d(&by, n, 4));
    launch(&m, &k, d3(3, 1, 1), d3(128, 1, 1), 0, args);
    let want: Vec<f32> = x
        .iter()
        .map(|&v| {
            let v64 = v as f64;
            (v64.sin()
                + v64.exp()
                + v64.ln()
                + v64.sqrt()
                + v64.powf(2.5)
                + v64.tanh()
                // SAFETY: `erf` from the C math library is a pure function of its argument.
                + unsafe { erf(v64) }
                + v64.floor()
                + v64.atan2(1.0)
                + v64.abs()) as f32
        })
        .collect();
    // fastmath: approximate sin/exp/log (ex2.approx, lg2.approx, sin.approx), flushed
    // subnormals; the sum is dominated by exp(6) and pow(6, 2.5).
    assert_close_f32(&get_f32(&by), &want, 2e-5, 1e-4, "math_fastmath");
}

/// numba links its fp16 operator shims (`operator*`/`operator+` of `__half` with numba's
/// calling convention: `int f(__half *ret, const __half *a, const __half *b)`, 0 = success)
/// into the module at load time; the PTX only declares them `.extern`. These definitions,
/// written from CUDA's `__half` operators, stand in for that library.
fn numba_fp16_with_shims(arch: &str) -> String {
    let src = std::fs::read_to_string(corpus(&format!("numba/fp16.{arch}.ptx"))).unwrap();
    let mut out = src.clone();
    for (name, op) in [
        ("_ZplRK6__halfS1__nbst", "add"),
        ("_ZmlRK6__halfS1__nbst", "mul"),
    ] {
        let decl_start = out
            .find(&format!(".extern .func  (.param .b32 func_retval0) {name}"))
            .unwrap();
        let semi = decl_start + out[decl_start..].find(';').unwrap();
        let decl = out[decl_start..semi].replacen(".extern .func", ".visible .func", 1);
        let body = format!(
            "{decl}{{\n .reg .b64 %a<3>;\n .reg .b16 %h<3>;\n\
             ld.param.u64 %a0, [{name}_param_0];\n ld.param.u64 %a1, [{name}_param_1];\n\
             ld.param.u64 %a2, [{name}_param_2];\n ld.u16 %h1, [%a1];\n ld.u16 %h2, [%a2];\n\
             {op}.rn.f16 %h0, %h1, %h2;\n st.u16 [%a0], %h0;\n\
             st.param.b32 [func_retval0], 0;\n ret;\n}}\n"
        );
        out.replace_range(decl_start..=semi, &body);
    }
    out
}

#[test]
fn numba_fp16() {
    for arch in NUMBA_ARCHS {
        numba_fp16_on(arch);
    }
}

fn numba_fp16_on(arch: &str) {
    // Without numba's shim library the module cannot run; the error names what is missing.
    let src = std::fs::read_to_string(corpus(&format!("numba/fp16.{arch}.ptx"))).unwrap();
    let e = Module::from_ptx(&src, 2).err().unwrap().to_string();
    assert!(
        e.contains("external functions that it does not define")
            && e.contains("`_ZmlRK6__halfS1__nbst`")
            && e.contains("`_ZplRK6__halfS1__nbst`"),
        "{e}"
    );
    let m = load_src(&numba_fp16_with_shims(arch));
    let k = m.kernel_names()[0].clone();
    let n = 200usize;
    let mut r = Rng::new(25);
    let x: Vec<u16> = (0..n).map(|_| half_input(&mut r)).collect();
    let (bx, by) = (buf_u16(&x), buf_u16(&vec![0; n]));
    let mut args = numba_1d(&bx, n, 2);
    args.extend(numba_1d(&by, n, 2));
    launch(&m, &k, d3(2, 1, 1), d3(128, 1, 1), 0, args);
    let want: Vec<u16> = x
        .iter()
        .map(|&h| f64_to_f16(f16_to_f32(f64_to_f16(f16_to_f32(h) as f64 * 2.0)) as f64 + 1.0))
        .collect();
    assert_eq!(get_u16(&by), want, "y = x * 2 + 1 in half precision");
}

#[test]
fn numba_device_function_calls_and_local_arrays() {
    let n = 256usize;
    let mut r = Rng::new(26);
    let x: Vec<f64> = (0..n).map(|_| r.f64(-3.0, 3.0)).collect();
    for (file, f) in [
        (
            "calls_devfn",
            (|x: &[f64], i: usize| x[i].mul_add(x[i], 1.0)) as fn(&[f64], usize) -> f64,
        ),
        ("calls_local", |x: &[f64], i: usize| {
            let loc = (i % 8) as f64 * x[i];
            loc.mul_add(x[i], 1.0)
        }),
    ] {
        for arch in NUMBA_ARCHS {
            let (m, k) = numba(&format!("{file}.{arch}"));
            let (bx, by) = (buf_f64(&x), buf_f64(&vec![0.0; n]));
            let mut args = numba_1d(&bx, n, 8);
            args.extend(numba_1d(&by, n, 8));
            launch(&m, &k, d3(2, 1, 1), d3(128, 1, 1), 0, args);
            let want: Vec<f64> = (0..n).map(|i| f(&x, i)).collect();
            assert_close_f64(&get_f64(&by), &want, 2.3e-16, 0.0, file);
        }
    }
}

#[test]
fn numba_print() {
    for arch in NUMBA_ARCHS {
        numba_print_on(arch);
    }
}

fn numba_print_on(arch: &str) {
    // Through the binary: device printf writes to the process's stdout.
    let d = tempfile::tempdir().unwrap();
    let x: Vec<f32> = (0..40).map(|i| i as f32 * 0.5).collect();
    let p = d.path().join("x");
    std::fs::write(
        &p,
        x.iter().flat_map(|v| v.to_le_bytes()).collect::<Vec<u8>>(),
    )
    .unwrap();
    let f = corpus(&format!("numba/print.{arch}.ptx"));
    let m = load(&f);
    let k = m.kernel_names()[0].clone();
    let mut args: Vec<String> = vec![
        f.to_string_lossy().into(),
        "--kernel".into(),
        k,
        "--grid".into(),
        "2".into(),
        "--block".into(),
        "20".into(),
    ];
    let data = format!("--arg=@{}", p.display());
    for a in [
        "u64:0", "u64:0", "u64:40", "u64:4", &data, "u64:40", "u64:4",
    ] {
        args.push(if a.starts_with("--") {
            a.to_string()
        } else {
            format!("--arg={a}")
        });
    }
    let args: Vec<&str> = args.iter().map(|s| s.as_str()).collect();
    let (code, out, err) = run_cli(&args);
    assert_eq!(code, 0, "{err}");
    let mut lines: Vec<&str> = out.lines().collect();
    lines.sort();
    let mut want: Vec<String> = (0..40)
        .map(|i| format!("i = {i} x = {:.6}", x[i]))
        .collect();
    want.sort();
    assert_eq!(lines, want);
}

#[test]
fn numba_matmul_shared() {
    for arch in NUMBA_ARCHS {
        numba_matmul_shared_on(arch);
    }
}

fn numba_matmul_shared_on(arch: &str) {
    let (m, k) = numba(&format!("matmul_shared.{arch}"));
    let (rows, inner, cols) = (40usize, 37usize, 50usize);
    let mut r = Rng::new(27);
    // Small integers: exact products and sums in any order.
    let a: Vec<f32> = (0..rows * inner).map(|_| r.int(-8, 8) as f32).collect();
    let b: Vec<f32> = (0..inner * cols).map(|_| r.int(-8, 8) as f32).collect();
    let (ba, bb, bc) = (
        buf_f32(&a),
        buf_f32(&b),
        buf_f32(&vec![f32::NAN; rows * cols]),
    );
    let mut args = numba_2d(&ba, rows, inner, 4);
    args.extend(numba_2d(&bb, inner, cols, 4));
    args.extend(numba_2d(&bc, rows, cols, 4));
    // cuda.grid(2): x (rows) from the x dimension, y (cols) from the y dimension.
    launch(
        &m,
        &k,
        d3(rows.div_ceil(16) as u32, cols.div_ceil(16) as u32, 1),
        d3(16, 16, 1),
        0,
        args,
    );
    let mut want = vec![0.0f32; rows * cols];
    for i in 0..rows {
        for j in 0..cols {
            want[i * cols + j] = (0..inner).map(|t| a[i * inner + t] * b[t * cols + j]).sum();
        }
    }
    assert_eq!(get_f32(&bc), want);
}

#[test]
fn numba_c_abi_device_function_has_no_kernel() {
    // axpy compiled with device=True, abi="c": a .func, nothing to launch.
    for arch in NUMBA_ARCHS {
        let m = load(&corpus(&format!("numba/axpy_cabi_device.{arch}.ptx")));
        assert!(m.kernel_names().is_empty());
    }
}

// ---------------------------------------------------------------------------------------------
// Triton

fn triton_vector_add(file: &str) {
    let m = load(&corpus(file));
    let n = 2500usize; // BLOCK_SIZE 1024: 3 programs, the last one masked
    let mut r = Rng::new(30);
    let x: Vec<f32> = (0..n).map(|_| r.f32(-1e3, 1e3)).collect();
    let y: Vec<f32> = (0..n).map(|_| r.f32(-1e3, 1e3)).collect();
    let (bx, by) = (buf_f32(&x), buf_f32(&y));
    // One extra element after the end checks the mask.
    let bo = buf_f32(&vec![-7.0; n + 1]);
    let mut args = vec![ptr(&bx), ptr(&by), ptr(&bo), i32a(n as i32)];
    let scratch = Buffer::zeroed(64);
    while args.len()
        < m.program()
            .kernel("add_kernel")
            .unwrap()
            .params
            .params
            .len()
    {
        args.push(ptr(&scratch));
    }
    launch(&m, "add_kernel", d3(3, 1, 1), d3(128, 1, 1), 0, args);
    let mut want: Vec<f32> = x.iter().zip(&y).map(|(a, b)| a + b).collect();
    want.push(-7.0);
    assert_eq!(get_f32(&bo), want, "{file}");
}

#[test]
fn triton_vector_add_all_variants() {
    for f in [
        "triton/vector_add.sm80.ptx",
        "triton/vector_add_spec.sm80.ptx",
        "triton/vector_add.sm90.ptx",
        "triton/vector_add_spec.sm90.ptx",
        "triton/vector_add.sm100.ptx",
        "triton/vector_add_spec.sm100.ptx",
    ] {
        triton_vector_add(f);
    }
}

fn triton_softmax(file: &str) {
    let m = load(&corpus(file));
    let (rows, cols, stride) = (6usize, 1000usize, 1024usize);
    let mut r = Rng::new(31);
    let input: Vec<f32> = (0..rows * stride).map(|_| r.f32(-20.0, 20.0)).collect();
    let (bi, bo) = (buf_f32(&input), buf_f32(&vec![-1.0; rows * stride]));
    let scratch = Buffer::zeroed(64);
    let mut args = vec![
        ptr(&bo),
        ptr(&bi),
        i32a(stride as i32),
        i32a(stride as i32),
        i32a(cols as i32),
    ];
    while args.len()
        < m.program()
            .kernel("softmax_kernel")
            .unwrap()
            .params
            .params
            .len()
    {
        args.push(ptr(&scratch));
    }
    // 4 warps (.reqntid 128); cross-warp reductions go through dynamic shared memory.
    launch(
        &m,
        "softmax_kernel",
        d3(rows as u32, 1, 1),
        d3(128, 1, 1),
        1024,
        args,
    );
    let out = get_f32(&bo);
    for row in 0..rows {
        let x = &input[row * stride..row * stride + cols];
        let mx = x.iter().fold(f32::NEG_INFINITY, |a, &b| a.max(b)) as f64;
        let den: f64 = x.iter().map(|&v| (v as f64 - mx).exp()).sum();
        let want: Vec<f32> = x
            .iter()
            .map(|&v| ((v as f64 - mx).exp() / den) as f32)
            .collect();
        // tl.exp is ex2.approx(x·log2 e): about 2 ulp; the sum adds rounding in its own order.
        assert_close_f32(
            &out[row * stride..row * stride + cols],
            &want,
            2e-6,
            1e-12,
            &format!("{file} row {row}"),
        );
        assert!(
            out[row * stride + cols..(row + 1) * stride]
                .iter()
                .all(|&v| v == -1.0),
            "{file}: masked columns were written"
        );
    }
}

#[test]
fn triton_softmax_all_variants() {
    for f in [
        "triton/softmax.sm80.ptx",
        "triton/softmax.sm90.ptx",
        "triton/softmax.sm100.ptx",
    ] {
        triton_softmax(f);
    }
}
