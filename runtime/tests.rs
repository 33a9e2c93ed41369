//! Runtime tests with hand-written "kernels": Rust functions with the generated code's C ABI
//! that call the same `ptx2llvm_rt_*` entry points. They pin the barrier and warp semantics
//! (barriers in loops, exited threads, partial member masks in divergent code, out-of-range
//! shuffles, deadlock and trap reports) independently of the compiler.

use std::sync::atomic::{AtomicU32, Ordering};

use super::abi::{bar_red, redux, shfl, vote, Thread};
use super::entry::*;
use super::matrix::ptx2llvm_rt_movmatrix;
use super::{launch, LaunchConfig, LaunchError};

/// Parameter buffer holding one output pointer.
fn out_params(out: &mut [u32]) -> Vec<u8> {
    (out.as_mut_ptr() as u64).to_ne_bytes().to_vec()
}

unsafe fn out_ptr(params: *const u8) -> *mut u32 {
    (params as *const u64).read() as usize as *mut u32
}

fn cfg(grid: [u32; 3], block: [u32; 3]) -> LaunchConfig {
    LaunchConfig {
        grid,
        block,
        ..LaunchConfig::default()
    }
}

fn gid(t: &Thread) -> usize {
    (t.ctaid[0] * t.ntid[0] * t.ntid[1] * t.ntid[2] + t.flat_tid) as usize
}

fn run(
    k: super::KernelEntry,
    grid: [u32; 3],
    block: [u32; 3],
    out: &mut [u32],
) -> Result<(), LaunchError> {
    let p = out_params(out);
    // SAFETY: `k` is a kernel of this file written for `p`'s parameter layout (the output buffer), which outlives the launch.
    unsafe { launch("k", k, &p, &cfg(grid, block)) }
}

unsafe extern "C" fn k_ids(p: *const u8, t: *mut Thread) {
    let t = &*t;
    let o = out_ptr(p);
    let [gx, gy, _] = t.nctaid;
    let [bx, by, bz] = t.ntid;
    let cta = t.ctaid[0] + gx * (t.ctaid[1] + gy * t.ctaid[2]);
    let i = cta * bx * by * bz + t.tid[0] + bx * (t.tid[1] + by * t.tid[2]);
    *o.add(i as usize) = i + 1;
}

#[test]
fn every_thread_of_a_3d_grid_runs_once() {
    let mut out = vec![0u32; 2 * 3 * 2 * 4 * 2 * 3];
    run(k_ids, [2, 3, 2], [4, 2, 3], &mut out).unwrap();
    assert!(out.iter().enumerate().all(|(i, &v)| v == i as u32 + 1));
}

/// Block tree reduction in shared memory: `__syncthreads` inside a loop.
unsafe extern "C" fn k_reduce(p: *const u8, t: *mut Thread) {
    let o = out_ptr(p);
    let s = (*t).shared as *mut u32;
    let i = (*t).flat_tid;
    *s.add(i as usize) = gid(&*t) as u32;
    ptx2llvm_rt_barrier_sync(t, 0, 0);
    let mut stride = (*t).ntid[0] / 2;
    while stride > 0 {
        if i < stride {
            *s.add(i as usize) += *s.add((i + stride) as usize);
        }
        ptx2llvm_rt_barrier_sync(t, 0, 0);
        stride /= 2;
    }
    if i == 0 {
        *o.add((*t).ctaid[0] as usize) = *s;
    }
}

#[test]
fn barrier_in_a_loop_reduces_a_block() {
    let mut out = vec![0u32; 8];
    let p = out_params(&mut out);
    let c = LaunchConfig {
        grid: [8, 1, 1],
        block: [256, 1, 1],
        dynamic_shared: 1024,
        ..LaunchConfig::default()
    };
    // SAFETY: `k_reduce` reads its parameters as laid out in `p`; `out` outlives the launch.
    unsafe { launch("reduce", k_reduce, &p, &c) }.unwrap();
    for (b, &v) in out.iter().enumerate() {
        let lo = b as u32 * 256;
        assert_eq!(v, (lo..lo + 256).sum::<u32>(), "block {b}");
    }
}

/// Threads 40.. return before the barrier; the rest must not wait for them.
unsafe extern "C" fn k_exit_early(p: *const u8, t: *mut Thread) {
    let o = out_ptr(p);
    let i = (*t).flat_tid;
    if i >= 40 {
        if i.is_multiple_of(2) {
            ptx2llvm_rt_exit(t);
        }
        return;
    }
    let s = (*t).shared as *mut u32;
    *s.add(i as usize) = i;
    ptx2llvm_rt_barrier_sync(t, 0, 0);
    *o.add(i as usize) = *s.add((39 - i) as usize);
    ptx2llvm_rt_barrier_sync(t, 0, 0);
}

#[test]
fn barriers_wait_only_for_non_exited_threads() {
    let mut out = vec![0u32; 40];
    let p = out_params(&mut out);
    let c = LaunchConfig {
        block: [96, 1, 1],
        dynamic_shared: 512,
        ..LaunchConfig::default()
    };
    // SAFETY: `k_exit_early` reads its parameters as laid out in `p`; `out` outlives the launch.
    unsafe { launch("exit_early", k_exit_early, &p, &c) }.unwrap();
    assert!(out.iter().enumerate().all(|(i, &v)| v == 39 - i as u32));
}

/// A shuffle with a partial mask in each side of a divergent branch.
unsafe extern "C" fn k_divergent_shfl(p: *const u8, t: *mut Thread) {
    let o = out_ptr(p);
    let lane = (*t).laneid;
    let mut pred = 7u32;
    let v = if lane < 16 {
        ptx2llvm_rt_shfl(
            t,
            101,
            shfl::DOWN,
            lane * 10,
            1,
            0x1f,
            0x0000_ffff,
            &mut pred,
        )
    } else {
        ptx2llvm_rt_shfl(
            t,
            102,
            shfl::IDX,
            lane * 10,
            20,
            0x1f,
            0xffff_0000,
            &mut pred,
        )
    };
    *o.add(gid(&*t)) = v * 2 + pred;
}

#[test]
fn shuffle_with_partial_masks_in_divergent_branches() {
    let mut out = vec![0u32; 64];
    run(k_divergent_shfl, [1, 1, 1], [64, 1, 1], &mut out).unwrap();
    for (i, &v) in out.iter().enumerate() {
        let lane = i as u32 % 32;
        let want = if lane < 16 {
            // lane 15 reads lane 16, which is not in the mask: undefined, we give our own.
            if lane == 15 {
                150 * 2 + 1
            } else {
                (lane + 1) * 10 * 2 + 1
            }
        } else {
            20 * 10 * 2 + 1
        };
        assert_eq!(v, want, "thread {i}");
    }
}

/// Segments of 8 lanes (`c = (32 - 8) << 8 | 0x1f` for down/bfly/idx, `(32-8) << 8` for up).
unsafe extern "C" fn k_shfl_width(p: *const u8, t: *mut Thread) {
    let o = out_ptr(p);
    let lane = (*t).laneid;
    let seg = (32 - 8) << 8;
    let mut pu = 0;
    let mut pd = 0;
    let up = ptx2llvm_rt_shfl(t, 103, shfl::UP, lane, 3, seg, u32::MAX, &mut pu);
    let down = ptx2llvm_rt_shfl(t, 104, shfl::DOWN, lane, 3, seg | 0x1f, u32::MAX, &mut pd);
    let bfly = ptx2llvm_rt_shfl(
        t,
        105,
        shfl::BFLY,
        lane,
        5,
        seg | 0x1f,
        u32::MAX,
        std::ptr::null_mut(),
    );
    let idx = ptx2llvm_rt_shfl(
        t,
        106,
        shfl::IDX,
        lane,
        2,
        seg | 0x1f,
        u32::MAX,
        std::ptr::null_mut(),
    );
    let base = gid(&*t) * 6;
    for (k, v) in [up, pu, down, pd, bfly, idx].into_iter().enumerate() {
        *o.add(base + k) = v;
    }
}

#[test]
fn shuffles_follow_width_and_out_of_range_rules() {
    let mut out = vec![0u32; 32 * 6];
    run(k_shfl_width, [1, 1, 1], [32, 1, 1], &mut out).unwrap();
    for lane in 0..32u32 {
        let r = &out[lane as usize * 6..][..6];
        let pos = lane % 8;
        let (up, pu) = if pos >= 3 { (lane - 3, 1) } else { (lane, 0) };
        let (down, pd) = if pos + 3 < 8 {
            (lane + 3, 1)
        } else {
            (lane, 0)
        };
        let bfly = lane ^ 5;
        let idx = lane / 8 * 8 + 2;
        assert_eq!(r, [up, pu, down, pd, bfly, idx], "lane {lane}");
    }
}

/// Votes, matches, reductions and elect over the lanes 0..20 of a warp (mask 0x000fffff).
unsafe extern "C" fn k_warp_collectives(p: *const u8, t: *mut Thread) {
    let o = out_ptr(p);
    let lane = (*t).laneid;
    if lane >= 20 {
        return;
    }
    let m = 0x000f_ffff;
    let v = [lane % 3, lane * 7 + 1][((*t).ctaid[0] & 1) as usize];
    let mut pm = 0;
    let mut pe = 0;
    let res = [
        ptx2llvm_rt_vote(t, 107, vote::BALLOT, m, v.is_multiple_of(2) as u32),
        ptx2llvm_rt_vote(t, 108, vote::ALL, m, (lane < 19) as u32),
        ptx2llvm_rt_vote(t, 109, vote::ANY, m, (lane == 13) as u32),
        ptx2llvm_rt_vote(t, 110, vote::UNI, m, 1),
        ptx2llvm_rt_match_any_u32(t, 111, m, v),
        ptx2llvm_rt_match_all_u64(t, 112, m, (v as u64) << 40, &mut pm),
        pm,
        ptx2llvm_rt_redux(t, 113, redux::ADD, v, m),
        ptx2llvm_rt_redux(t, 114, redux::MIN_S32, v.wrapping_sub(5), m),
        ptx2llvm_rt_redux(t, 115, redux::MAX_U32, v, m),
        ptx2llvm_rt_redux(t, 116, redux::XOR, v, m),
        if lane == 0 {
            100
        } else {
            ptx2llvm_rt_elect(t, 117, m & !1, &mut pe) * 2 + pe
        },
        ptx2llvm_rt_activemask(t, 125),
    ];
    let base = gid(&*t) * res.len();
    for (k, r) in res.into_iter().enumerate() {
        *o.add(base + k) = r;
    }
}

#[test]
fn vote_match_redux_elect_activemask() {
    const N: usize = 13;
    let mut out = vec![0u32; 2 * 32 * N];
    run(k_warp_collectives, [2, 1, 1], [32, 1, 1], &mut out).unwrap();
    for block in 0..2u32 {
        let vals: Vec<u32> = (0..20)
            .map(|l| if block == 0 { l % 3 } else { l * 7 + 1 })
            .collect();
        for lane in 0..20u32 {
            let r = &out[(block as usize * 32 + lane as usize) * N..][..N];
            let v = vals[lane as usize];
            let ballot = (0..20)
                .filter(|&l| vals[l].is_multiple_of(2))
                .fold(0, |m, l| m | 1 << l);
            let same = (0..20).filter(|&l| vals[l] == v).fold(0, |m, l| m | 1 << l);
            let all_same = vals.iter().all(|&x| x == vals[0]);
            let want = [
                ballot,
                0,
                1,
                1,
                same,
                if all_same { 0xfffff } else { 0 },
                all_same as u32,
                vals.iter().sum(),
                vals.iter()
                    .map(|&x| x.wrapping_sub(5) as i32)
                    .min()
                    .unwrap() as u32,
                *vals.iter().max().unwrap(),
                vals.iter().fold(0, |a, b| a ^ b),
                if lane >= 1 {
                    2 + (lane == 1) as u32
                } else {
                    100
                },
                0xfffff,
            ];
            for k in 0..N {
                assert_eq!(r[k], want[k], "block {block} lane {lane} result {k}");
            }
        }
    }
}

/// activemask inside a divergent branch sees only the lanes that took it.
unsafe extern "C" fn k_activemask(p: *const u8, t: *mut Thread) {
    let o = out_ptr(p);
    let lane = (*t).laneid;
    let v = if lane % 4 == 1 || lane > 27 {
        ptx2llvm_rt_activemask(t, 126)
    } else {
        ptx2llvm_rt_bar_warp_sync(t, 118, 0x0fff_ffff & !0x2222_2222);
        0
    };
    *o.add(gid(&*t)) = v;
}

#[test]
fn activemask_in_divergent_code() {
    let mut out = vec![0u32; 32];
    run(k_activemask, [1, 1, 1], [32, 1, 1], &mut out).unwrap();
    let want = 0x2222_2222 | 0xf000_0000;
    for (lane, &v) in out.iter().enumerate() {
        let taken = lane % 4 == 1 || lane > 27;
        assert_eq!(v, if taken { want } else { 0 }, "lane {lane}");
    }
}

/// Lanes at two different `activemask` instructions (program points 7 and 8) are not
/// converged: each sees only the lanes at its own.
unsafe extern "C" fn k_activemask_two_points(p: *const u8, t: *mut Thread) {
    let o = out_ptr(p);
    let v = if (*t).laneid < 12 {
        ptx2llvm_rt_activemask(t, 7)
    } else {
        ptx2llvm_rt_activemask(t, 8)
    };
    *o.add(gid(&*t)) = v;
}

#[test]
fn activemask_at_different_instructions() {
    let mut out = vec![0u32; 64];
    run(k_activemask_two_points, [1, 1, 1], [64, 1, 1], &mut out).unwrap();
    for (i, &v) in out.iter().enumerate() {
        let want = if i % 32 < 12 { 0xfff } else { 0xffff_f000 };
        assert_eq!(v, want, "thread {i}");
    }
}

/// A full-mask shuffle and `bar.warp.sync` split over two instructions (the two sides of an
/// `if`) pair the lanes, as on sm_70 and later (the CUDA guide's `__shfl_xor_sync` in both
/// branches); a matrix instruction (`.aligned`) at two instructions is an error.
unsafe extern "C" fn k_split_sync(p: *const u8, t: *mut Thread) {
    let o = out_ptr(p);
    let lane = (*t).laneid;
    if *o.add(32) == 1 {
        if lane < 16 {
            ptx2llvm_rt_movmatrix(t, 13, 0);
        } else {
            ptx2llvm_rt_movmatrix(t, 14, 0);
        }
        return;
    }
    let null = std::ptr::null_mut();
    let v = if lane < 16 {
        ptx2llvm_rt_bar_warp_sync(t, 9, u32::MAX);
        ptx2llvm_rt_shfl(t, 11, shfl::BFLY, lane * 3, 16, 0x1f, u32::MAX, null)
    } else {
        ptx2llvm_rt_bar_warp_sync(t, 10, u32::MAX);
        ptx2llvm_rt_shfl(t, 12, shfl::BFLY, lane * 3, 16, 0x1f, u32::MAX, null)
    };
    *o.add(lane as usize) = v;
}

#[test]
fn one_mask_at_two_instructions() {
    let mut out = vec![0u32; 33];
    run(k_split_sync, [1, 1, 1], [32, 1, 1], &mut out).unwrap();
    for lane in 0..32u32 {
        assert_eq!(out[lane as usize], (lane ^ 16) * 3, "lane {lane}");
    }
    out[32] = 1;
    let e = run(k_split_sync, [1, 1, 1], [32, 1, 1], &mut out).unwrap_err();
    assert!(
        e.to_string().contains(
            "lanes of warp 0 with member mask 0xffffffff reached different movmatrix \
             instructions (lane 16)"
        ),
        "{e}"
    );
}

/// Lanes 0..16 wait at a CTA barrier, lanes 16.. at a warp barrier naming lanes 0..16.
unsafe extern "C" fn k_deadlock(_p: *const u8, t: *mut Thread) {
    if (*t).laneid < 16 {
        ptx2llvm_rt_barrier_sync(t, 0, 0);
    } else {
        ptx2llvm_rt_bar_warp_sync(t, 119, u32::MAX);
    }
}

#[test]
fn deadlock_is_reported_not_hung() {
    let mut out = vec![0u32; 1];
    let e = run(k_deadlock, [3, 1, 1], [32, 1, 1], &mut out).unwrap_err();
    let LaunchError::Deadlock { kernel, detail, .. } = &e else {
        panic!("{e}")
    };
    assert_eq!(kernel, "k");
    assert!(detail.contains("barrier 0"), "{detail}");
    assert!(
        detail.contains("bar.warp.sync with member mask 0xffffffff"),
        "{detail}"
    );
    assert!(e.to_string().contains("deadlocked in block"), "{e}");
}

static CTAS_RUN: AtomicU32 = AtomicU32::new(0);

unsafe extern "C" fn k_trap(_p: *const u8, t: *mut Thread) {
    if (*t).flat_tid == 0 {
        CTAS_RUN.fetch_add(1, Ordering::Relaxed);
    }
    if (*t).ctaid == [2, 1, 0] && (*t).tid == [3, 1, 0] {
        ptx2llvm_rt_trap(t, std::ptr::null());
    }
    ptx2llvm_rt_barrier_sync(t, 0, 0);
}

#[test]
fn trap_stops_the_launch_and_names_block_and_thread() {
    let mut out = vec![0u32; 1];
    let p = out_params(&mut out);
    let c = LaunchConfig {
        grid: [400, 2, 1],
        block: [8, 4, 1],
        workers: Some(1),
        ..LaunchConfig::default()
    };
    // SAFETY: `k_trap` reads nothing through `p`; the launch fails by design.
    let e = unsafe { launch("trapper", k_trap, &p, &c) }.unwrap_err();
    assert_eq!(
        e,
        LaunchError::Trap {
            kernel: "trapper".into(),
            block: [2, 1, 0],
            thread: [3, 1, 0],
            message: "trap instruction executed".into()
        }
    );
    assert!(CTAS_RUN.load(Ordering::Relaxed) < 800);
    // The stacks of the abandoned threads are reusable: launch again.
    run(k_ids, [2, 1, 1], [4, 1, 1], &mut [0u32; 8]).unwrap();
}

unsafe extern "C" fn k_bad_mask(_p: *const u8, t: *mut Thread) {
    ptx2llvm_rt_vote(t, 120, vote::ANY, 0x1, 1);
}

#[test]
fn lane_outside_its_member_mask_is_an_error() {
    let e = run(k_bad_mask, [1, 1, 1], [2, 1, 1], &mut [0]).unwrap_err();
    assert!(
        e.to_string()
            .contains("lane 1 is not in the member mask 0x00000001"),
        "{e}"
    );
}

unsafe extern "C" fn k_bar_red(p: *const u8, t: *mut Thread) {
    let o = out_ptr(p);
    let i = (*t).flat_tid;
    let popc = ptx2llvm_rt_barrier_red(t, 3, 0, bar_red::POPC, i.is_multiple_of(3) as u32);
    let and = ptx2llvm_rt_barrier_red(t, 3, 0, bar_red::AND, (i < 100) as u32);
    let or = ptx2llvm_rt_barrier_red(t, 4, 0, bar_red::OR, (i == 77) as u32);
    *o.add(i as usize * 3) = popc;
    *o.add(i as usize * 3 + 1) = and;
    *o.add(i as usize * 3 + 2) = or;
}

#[test]
fn barrier_reductions() {
    let mut out = vec![0u32; 100 * 3];
    run(k_bar_red, [1, 1, 1], [100, 1, 1], &mut out).unwrap();
    for i in 0..100 {
        assert_eq!(&out[i * 3..i * 3 + 3], &[34, 1, 1], "thread {i}");
    }
}

/// Producer/consumer with bar.arrive: warps 0-1 produce into shared memory, warps 2-3 consume.
unsafe extern "C" fn k_producer_consumer(p: *const u8, t: *mut Thread) {
    let o = out_ptr(p);
    let s = (*t).shared as *mut u32;
    let i = (*t).flat_tid;
    for round in 0..4u32 {
        if i < 64 {
            if round > 0 {
                ptx2llvm_rt_barrier_sync(t, 2, 128); // wait until consumed
            }
            *s.add(i as usize) = round * 1000 + i;
            ptx2llvm_rt_barrier_arrive(t, 1, 128);
        } else {
            ptx2llvm_rt_barrier_sync(t, 1, 128); // wait until produced
            let v = *s.add(i as usize - 64);
            *o.add((round * 64 + i - 64) as usize) = v;
            ptx2llvm_rt_barrier_arrive(t, 2, 128);
        }
    }
}

#[test]
fn producer_consumer_with_bar_arrive() {
    let mut out = vec![0u32; 256];
    let p = out_params(&mut out);
    let c = LaunchConfig {
        block: [128, 1, 1],
        dynamic_shared: 256,
        ..LaunchConfig::default()
    };
    // SAFETY: `k_producer_consumer` reads its parameters as laid out in `p`; the buffers outlive the launch.
    unsafe { launch("pc", k_producer_consumer, &p, &c) }.unwrap();
    for round in 0..4u32 {
        for i in 0..64u32 {
            assert_eq!(out[(round * 64 + i) as usize], round * 1000 + i);
        }
    }
}

/// Block of 48 threads: the second warp has 16 lanes; full-mask shuffles must not wait for
/// the lanes that do not exist.
unsafe extern "C" fn k_partial_warp(p: *const u8, t: *mut Thread) {
    let o = out_ptr(p);
    let mut v = (*t).flat_tid + 1;
    let mut off = 16;
    while off > 0 {
        v = v.wrapping_add(ptx2llvm_rt_shfl(
            t,
            121,
            shfl::BFLY,
            v,
            off,
            0x1f,
            u32::MAX,
            std::ptr::null_mut(),
        ));
        off /= 2;
    }
    ptx2llvm_rt_bar_warp_sync(t, 122, u32::MAX);
    *o.add((*t).flat_tid as usize) = v;
}

#[test]
fn partial_last_warp() {
    let mut out = vec![0u32; 48];
    run(k_partial_warp, [1, 1, 1], [48, 1, 1], &mut out).unwrap();
    assert!(out[..32].iter().all(|&v| v == (1..=32).sum::<u32>()));
    // Lanes of warp 1 read their own value from the missing lanes 16..31 in the first step.
    let first: Vec<u32> = (0..16).map(|l| 2 * (33 + l)).collect();
    let mut v = first;
    for off in [8, 4, 2, 1] {
        v = (0..16).map(|l| v[l] + v[l ^ off]).collect();
    }
    assert_eq!(&out[32..], &v[..]);
}

unsafe extern "C" fn k_mismatch(_p: *const u8, t: *mut Thread) {
    if (*t).laneid == 0 {
        ptx2llvm_rt_vote(t, 123, vote::ANY, 3, 1);
    } else {
        ptx2llvm_rt_redux(t, 124, redux::ADD, 1, 3);
    }
}

#[test]
fn different_warp_operations_on_one_mask_are_an_error() {
    let e = run(k_mismatch, [1, 1, 1], [2, 1, 1], &mut [0]).unwrap_err();
    assert!(
        e.to_string()
            .contains("reached different warp operations: vote.sync.any and redux.sync.add"),
        "{e}"
    );
}

#[test]
fn launch_limits_are_checked() {
    let e = run(k_ids, [1, 1, 1], [1025, 1, 1], &mut [0]).unwrap_err();
    assert!(e.to_string().contains("1025 threads; at most 1024"), "{e}");
    let c = LaunchConfig {
        dynamic_shared: 1 << 20,
        ..LaunchConfig::default()
    };
    // SAFETY: the launch is refused (too much dynamic shared memory) before `k_ids` runs.
    let e = unsafe { launch("k", k_ids, &[0; 8], &c) }.unwrap_err();
    assert!(e.to_string().contains("at most 232448 bytes"), "{e}");
}

#[test]
fn redux_float_rules() {
    use super::cta::redux_fold;
    let f = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
    assert_eq!(
        f32::from_bits(redux_fold(redux::MIN_F32, &f(&[3.0, -1.0, f32::NAN]))),
        -1.0
    );
    assert!(f32::from_bits(redux_fold(
        redux::MIN_F32 | redux::FLAG_NAN,
        &f(&[3.0, f32::NAN])
    ))
    .is_nan());
    assert_eq!(
        f32::from_bits(redux_fold(
            redux::MAX_F32 | redux::FLAG_ABS,
            &f(&[3.0, -7.0])
        )),
        7.0
    );
}
