//! Grid- and block-stride loops in kernels with barriers, in many shapes: where the loop
//! starts (`%tid.x`, the global index, `%tid.x` plus a parameter, `2 * %tid.x`), its step
//! (`%ntid.x`, the grid's thread count, an immediate, a parameter), its comparison (`lt`/`le`,
//! signed/unsigned), with or without a check before the first iteration, entered by every
//! thread or only some, with or without a branch inside the body, carrying a count and a sum
//! from one iteration to the next, and leaving
//! to a barrier or to the end. The thread-loop path runs the ones it can interchanged
//! (`src/target/cpu/fission/stride.rs`); the reference is computed here, thread by thread.

mod cpu_util;

use cpu_util::*;

/// One kernel's shape.
#[derive(Clone, Copy, Debug)]
struct Shape {
    /// 0: `%tid.x`, 1: `%ctaid.x * %ntid.x + %tid.x`, 2: `%tid.x + off`, 3: `2 * %tid.x`.
    start: u32,
    /// 0: `%ntid.x`, 1: `%nctaid.x * %ntid.x`, 2: 37, 3: the parameter `s`.
    step: u32,
    le: bool,
    signed: bool,
    /// A check `i < n` before the first iteration (else a do-while loop).
    precheck: bool,
    /// Only threads with `%tid.x < m` run the loop.
    guard: bool,
    /// A barrier after the loop (else the results are stored straight after it).
    bar_after: bool,
    /// The body skips its atomic addition when `i % 97 == 5` (a forward branch inside it).
    skip5: bool,
    /// The count's increment between the induction's and the compare (clang's latch when
    /// the loop also steps a pointer), else before both.
    late_count: bool,
}

/// The kernel of a shape: `hits[i % 97] += 1` (atomic) for each `i` of each thread, its
/// iteration count and the wrapping sum of its `i` stored at `cnt[gid]` and `sum[gid]`.
fn ptx(name: &str, s: Shape) -> String {
    let start = match s.start {
        0 => "  mov.u32 %r10, %r2;".to_string(),
        1 => "  mad.lo.s32 %r10, %r3, %r4, %r2;".to_string(),
        2 => "  add.s32 %r10, %r2, %r6;".to_string(),
        _ => "  shl.b32 %r10, %r2, 1;".to_string(),
    };
    let step = match s.step {
        0 => "%r4",
        1 => "%r7",
        2 => "37",
        _ => "%r8",
    };
    let cmp = format!(
        "{}.{}",
        if s.le { "le" } else { "lt" },
        if s.signed { "s32" } else { "u32" }
    );
    let anti = format!(
        "{}.{}",
        if s.le { "gt" } else { "ge" },
        if s.signed { "s32" } else { "u32" }
    );
    let precheck = if s.precheck {
        format!("  setp.{anti} %p1, %r10, %r1;\n  @%p1 bra AFTER;")
    } else {
        String::new()
    };
    let guard = if s.guard {
        "  setp.ge.u32 %p2, %r2, %r9;\n  @%p2 bra AFTER;"
    } else {
        ""
    };
    let bar_after = if s.bar_after { "  bar.sync 0;" } else { "" };
    let count = "  add.s32 %r11, %r11, 1;";
    let (early_count, late_count) = if s.late_count {
        ("", count)
    } else {
        (count, "")
    };
    let skip = if s.skip5 {
        "  setp.eq.u32 %p4, %r13, 5;\n  @%p4 bra SKIP;"
    } else {
        ""
    };
    format!(
        ".visible .entry {name}(.param .u64 hits, .param .u64 cnt, .param .u64 sum,
    .param .u32 n, .param .u32 off, .param .u32 s, .param .u32 m)
{{
  .reg .pred %p<5>;
  .reg .b32 %r<30>;
  .reg .b64 %rd<12>;
  ld.param.u64 %rd1, [hits];
  ld.param.u64 %rd2, [cnt];
  ld.param.u64 %rd3, [sum];
  ld.param.u32 %r1, [n];
  ld.param.u32 %r6, [off];
  ld.param.u32 %r8, [s];
  ld.param.u32 %r9, [m];
  mov.u32 %r2, %tid.x;
  mov.u32 %r3, %ctaid.x;
  mov.u32 %r4, %ntid.x;
  mov.u32 %r5, %nctaid.x;
  mul.lo.s32 %r7, %r5, %r4;
  mov.u32 %r11, 0;
  mov.u32 %r12, 0;
  bar.sync 0;
{guard}
{start}
{precheck}
LOOP:
  rem.u32 %r13, %r10, 97;
{skip}
  mul.wide.u32 %rd4, %r13, 4;
  add.s64 %rd5, %rd1, %rd4;
  red.global.add.u32 [%rd5], 1;
SKIP:
{early_count}
  add.s32 %r12, %r12, %r10;
  add.s32 %r10, %r10, {step};
{late_count}
  setp.{cmp} %p3, %r10, %r1;
  @%p3 bra LOOP;
AFTER:
{bar_after}
  mad.lo.s32 %r14, %r3, %r4, %r2;
  mul.wide.u32 %rd6, %r14, 4;
  add.s64 %rd7, %rd2, %rd6;
  st.global.u32 [%rd7], %r11;
  add.s64 %rd8, %rd3, %rd6;
  st.global.u32 [%rd8], %r12;
  ret;
}}
"
    )
}

/// What each thread of the launch does, by the rules of the kernel: (hits, cnt, sum).
#[allow(clippy::too_many_arguments)]
fn reference(
    s: Shape,
    grid: u32,
    block: u32,
    n: u32,
    off: u32,
    step_param: u32,
    m: u32,
) -> (Vec<u32>, Vec<u32>, Vec<u32>) {
    let total = (grid * block) as usize;
    let (mut hits, mut cnt, mut sum) = (vec![0u32; 97], vec![0u32; total], vec![0u32; total]);
    let cmp = |i: u32| -> bool {
        match (s.le, s.signed) {
            (false, true) => (i as i32) < (n as i32),
            (true, true) => (i as i32) <= (n as i32),
            (false, false) => i < n,
            (true, false) => i <= n,
        }
    };
    for c in 0..grid {
        for t in 0..block {
            let gid = (c * block + t) as usize;
            if s.guard && t >= m {
                continue;
            }
            let mut i = match s.start {
                0 => t,
                1 => c * block + t,
                2 => t.wrapping_add(off),
                _ => t << 1,
            };
            let step = match s.step {
                0 => block,
                1 => grid * block,
                2 => 37,
                _ => step_param,
            };
            if s.precheck && !cmp(i) {
                continue;
            }
            loop {
                if !(s.skip5 && i % 97 == 5) {
                    hits[(i % 97) as usize] += 1;
                }
                cnt[gid] += 1;
                sum[gid] = sum[gid].wrapping_add(i);
                i = i.wrapping_add(step);
                if !cmp(i) {
                    break;
                }
            }
        }
    }
    (hits, cnt, sum)
}

#[test]
fn stride_loops_of_every_shape_give_the_reference_results() {
    let mut r = Rng::new(2026);
    let mut shapes = Vec::new();
    for bits in 0u32..2048 {
        shapes.push(Shape {
            start: bits & 3,
            step: (bits >> 2) & 3,
            le: bits & 16 != 0,
            signed: bits & 32 != 0,
            precheck: bits & 64 != 0,
            guard: bits & 128 != 0,
            bar_after: bits & 256 != 0,
            skip5: bits & 512 != 0,
            late_count: bits & 1024 != 0,
        });
    }
    // A deterministic third of the shapes, in one module.
    let picked: Vec<Shape> = shapes
        .into_iter()
        .filter(|_| r.u32().is_multiple_of(3))
        .collect();
    let mut src = String::from(".version 7.0\n.target sm_80\n.address_size 64\n");
    for (k, s) in picked.iter().enumerate() {
        src.push_str(&ptx(&format!("k{k}"), *s));
    }
    let module = load_src(&src);
    for (k, s) in picked.iter().enumerate() {
        let name = format!("k{k}");
        // Launch shapes: whole warps and not, one CTA and several; bounds below, within and
        // past the threads' first indices (n = 0 runs do-while loops once).
        let (grid, block) = [(1u32, 64u32), (3, 96), (2, 100), (4, 32)][k % 4];
        for n in [0u32, 45, 700, 2000] {
            let off = r.int(0, 500) as u32;
            let step_param = r.int(1, 300) as u32;
            let m = r.int(0, block as i64) as u32;
            let total = (grid * block) as usize;
            let (hits, cnt, sum) = (
                buf_u32(&[0; 97]),
                buf_u32(&vec![0; total]),
                buf_u32(&vec![0; total]),
            );
            launch(
                &module,
                &name,
                d3(grid, 1, 1),
                d3(block, 1, 1),
                0,
                vec![
                    ptr(&hits),
                    ptr(&cnt),
                    ptr(&sum),
                    u32a(n),
                    u32a(off),
                    u32a(step_param),
                    u32a(m),
                ],
            );
            let (wh, wc, ws) = reference(*s, grid, block, n, off, step_param, m);
            let what = format!(
                "{name} {s:?} grid {grid} block {block} n {n} off {off} s {step_param} m {m}"
            );
            assert_eq!(get_u32(&cnt), wc, "iteration counts of {what}");
            assert_eq!(get_u32(&sum), ws, "index sums of {what}");
            assert_eq!(get_u32(&hits), wh, "hits of {what}");
        }
    }
}
