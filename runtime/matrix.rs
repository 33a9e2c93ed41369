//! Warp-collective matrix instructions of the coroutine scheme: `mma.sync`, `ldmatrix`,
//! `stmatrix`, `movmatrix` and `wmma` (whose loads and stores need no exchange). Each lane
//! leaves its operands (fragment registers, row addresses) in its slot of the CTA's exchange
//! area, the warp synchronizes once, and each lane then computes its own result from every
//! lane's operands (an `mma`'s product once per warp, by the first lane to run). The area is double-buffered
//! (a per-thread phase picks the half): a lane that runs ahead to the next matrix operation
//! writes the other half, and it cannot get two operations ahead, because that operation's
//! synchronization waits for every lane, so for all of them to be done reading.
//!
//! Fragment layouts are the PTX ISA's ("Matrix fragments for `mma.m16n8k16`", …): with
//! `g = lane / 4` and `t = lane % 4`, element `i` of a lane's fragment (registers in order,
//! the low half or byte of a packed register first) sits at the row and column `frag_pos`
//! gives; `wmma`'s, which PTX leaves unspecified, are those the hardware gives (`wmma_pos`). Arithmetic follows the hardware's: 16-bit and tf32 products are exact in `f32` and
//! accumulate with `f32` fused multiply-adds from `C` in `k` order, `f64` with `f64` ones,
//! integers exactly (wrapping, or clamped with `.satfinite`).

use super::abi::{mma as code, Thread, WARP_SIZE};
use super::cta::{cta_of, WarpOp};
use super::entry::{fail, warp_op};

/// Words of one lane's slot in one half of the exchange area.
pub(crate) const SLOT_WORDS: usize = 20;
/// Words of one lane's `mma` result.
const RESULT_WORDS: usize = 8;

/// Which operand a fragment belongs to (`D` has `C`'s layout).
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Frag {
    A,
    B,
    C,
}

/// A decoded `mma` kind (`abi::mma`). The warp engine reads the layouts from here too when it
/// builds a product as vector code (`llvm/simd/matrix.rs`): one copy of them for both engines.
#[derive(Clone, Copy)]
pub(crate) struct Mma {
    pub(crate) shape: u32,
    pub(crate) a: u32,
    pub(crate) b: u32,
    pub(crate) c: u32,
    pub(crate) d: u32,
    satfinite: bool,
}

impl Mma {
    pub(crate) fn decode(kind: u32) -> Option<Mma> {
        let m = Mma {
            shape: kind & 0xf,
            a: (kind >> 4) & 0xf,
            b: (kind >> 8) & 0xf,
            c: (kind >> 12) & 0xf,
            d: (kind >> 16) & 0xf,
            satfinite: kind & code::SATFINITE != 0,
        };
        let ok = match (m.shape, m.a) {
            (code::M16N8K16 | code::M16N8K8, code::F16 | code::BF16) => m.a == m.b,
            (
                code::WMMA_M16N16K16 | code::WMMA_M32N8K16 | code::WMMA_M8N32K16,
                code::F16 | code::BF16 | code::S8 | code::U8,
            ) => m.a == m.b,
            (code::WMMA_M16N16K8, code::TF32) => m.b == code::TF32,
            (code::WMMA_M8N8K4, code::F64) => m.b == code::F64,
            (code::M16N8K8 | code::M16N8K4, code::TF32) => m.b == code::TF32,
            (code::M8N8K4, code::F64) => m.b == code::F64,
            (code::M16N8K16 | code::M16N8K32, code::S8 | code::U8) => {
                matches!(m.b, code::S8 | code::U8)
            }
            (code::M16N8K16 | code::M16N8K32, code::E4M3 | code::E5M2) => {
                matches!(m.b, code::E4M3 | code::E5M2)
            }
            _ => false,
        };
        let acc_ok = match m.a {
            code::F16 => {
                matches!(m.c, code::F16 | code::F32) && matches!(m.d, code::F16 | code::F32)
            }
            code::BF16 | code::TF32 => m.c == code::F32 && m.d == code::F32,
            code::F64 => m.c == code::F64 && m.d == code::F64,
            // fp8: f16 or f32, C's type D's (ptxas refuses a mix).
            code::E4M3 | code::E5M2 => matches!(m.c, code::F16 | code::F32) && m.c == m.d,
            _ => m.c == code::S32 && m.d == code::S32,
        };
        (ok && acc_ok).then_some(m)
    }

    /// Rows, columns and depth.
    pub(crate) fn mnk(&self) -> (usize, usize, usize) {
        match self.shape {
            code::M16N8K16 => (16, 8, 16),
            code::M16N8K8 => (16, 8, 8),
            code::M16N8K4 => (16, 8, 4),
            code::M8N8K4 | code::WMMA_M8N8K4 => (8, 8, 4),
            code::WMMA_M16N16K16 => (16, 16, 16),
            code::WMMA_M32N8K16 => (32, 8, 16),
            code::WMMA_M8N32K16 => (8, 32, 16),
            code::WMMA_M16N16K8 => (16, 16, 8),
            _ => (16, 8, 32),
        }
    }

    /// Rows and columns of fragment `f`'s matrix.
    fn dims(&self, f: Frag) -> (usize, usize) {
        let (m, n, k) = self.mnk();
        match f {
            Frag::A => (m, k),
            Frag::B => (k, n),
            Frag::C => (m, n),
        }
    }

    /// Elements of a lane's fragment of `f`.
    pub(crate) fn count(&self, f: Frag) -> usize {
        let (r, c) = self.dims(f);
        r * c / WARP_SIZE as usize
    }

    /// Words of a lane's fragment `f` (`out`: the result `d` rather than `c`).
    fn words(&self, f: Frag, out: bool) -> usize {
        (self.count(f) * bits(self.ty(f, out))).div_ceil(32)
    }

    /// Element type of fragment `f` (`abi::mma` type code).
    fn ty(&self, f: Frag, out: bool) -> u32 {
        match f {
            Frag::A => self.a,
            Frag::B => self.b,
            Frag::C if out => self.d,
            Frag::C => self.c,
        }
    }

    /// Row and column of element `i` of `lane`'s fragment `f` of a `wmma` shape other than
    /// `m8n8k4`: the layouts an NVIDIA H200 (sm_90) gives (`tests/data/wmma_layouts.txt`
    /// holds its fragments), which are sm_80's `mma` tiles side by side: `m16n16k16` A is
    /// `m16n8k16`'s A, its B and C two `m16n8` tiles (columns 0-7, then 8-15); `m32n8k16`
    /// stacks two A tiles (rows 0-15, then 16-31) and four C row groups; `m8n32k16` is
    /// `m32n8k16` transposed (its A laid out as that B, its B as that A); `m16n16k8` tf32 uses
    /// `m16n8k8`'s A and two of its B tiles. Element `i` counts the lane's distinct elements
    /// (f16 `a`/`b` registers past them repeat them, `wmma_load`).
    fn wmma_pos(&self, f: Frag, lane: usize, i: usize) -> (usize, usize) {
        let (g, t) = (lane / 4, lane % 4);
        let bit = |k: usize| (i >> k) & 1;
        let byte = bits(self.ty(f, false)) == 8;
        // `m32n8k16`'s A and B (m8n32k16's B and A transposed).
        let a32 = || {
            if byte {
                (g + 8 * bit(2) + 16 * bit(3), 4 * t + (i & 3))
            } else {
                (g + 8 * bit(1) + 16 * bit(3), 2 * t + bit(0) + 8 * bit(2))
            }
        };
        let b32 = || {
            if byte {
                (4 * t + i, g)
            } else {
                (2 * t + bit(0) + 8 * bit(1), g)
            }
        };
        let swap = |(r, c): (usize, usize)| (c, r);
        match (self.shape, f) {
            (code::WMMA_M16N16K8, Frag::A) => (g + 8 * bit(0), t + 4 * bit(1)),
            (code::WMMA_M16N16K8, Frag::B) => (t + 4 * bit(0), g + 8 * bit(1)),
            (code::WMMA_M16N16K16 | code::WMMA_M16N16K8, Frag::C) => {
                (g + 8 * bit(1), 2 * t + bit(0) + 8 * bit(2))
            }
            (code::WMMA_M16N16K16, Frag::A) if byte => (g + 8 * bit(2), 4 * t + (i & 3)),
            (code::WMMA_M16N16K16, Frag::A) => (g + 8 * bit(1), 2 * t + bit(0) + 8 * bit(2)),
            (code::WMMA_M16N16K16, Frag::B) if byte => (4 * t + (i & 3), g + 8 * bit(2)),
            (code::WMMA_M16N16K16, Frag::B) => (2 * t + bit(0) + 8 * bit(1), g + 8 * bit(2)),
            (code::WMMA_M32N8K16, Frag::A) => a32(),
            (code::WMMA_M32N8K16, Frag::B) => b32(),
            (code::WMMA_M32N8K16, Frag::C) => (g + 8 * (i >> 1), 2 * t + bit(0)),
            // m8n32k16
            (_, Frag::A) => swap(b32()),
            (_, Frag::B) => swap(a32()),
            (_, Frag::C) => (2 * t + bit(0), g + 8 * (i >> 1)),
        }
    }

    /// Row and column of element `i` of `lane`'s fragment `f`.
    pub(crate) fn frag_pos(&self, f: Frag, lane: usize, i: usize) -> (usize, usize) {
        if self.shape == code::WMMA_M8N8K4 {
            // `wmma` f64: this runtime's own layout (`abi::mma::WMMA_M8N8K4`).
            let cols = self.dims(f).1;
            let at = lane * self.count(f) + i;
            return (at / cols, at % cols);
        }
        if self.shape >= code::WMMA_M16N16K16 {
            return self.wmma_pos(f, lane, i);
        }
        let (g, t) = (lane / 4, lane % 4);
        let eight = |x: usize| 8 * x;
        match (f, self.a, self.shape) {
            (Frag::C, code::F64, _) => (g, 2 * t + i),
            (Frag::C, ..) => (g + eight(i >> 1), 2 * t + (i & 1)),
            (Frag::A, code::F16 | code::BF16, code::M16N8K16) => {
                (g + eight((i >> 1) & 1), 2 * t + (i & 1) + eight(i >> 2))
            }
            (Frag::A, code::F16 | code::BF16, _) => (g + eight(i >> 1), 2 * t + (i & 1)),
            (Frag::B, code::F16 | code::BF16, code::M16N8K16) => {
                (2 * t + (i & 1) + eight(i >> 1), g)
            }
            (Frag::B, code::F16 | code::BF16, _) => (2 * t + i, g),
            (Frag::A, code::TF32, code::M16N8K8) => (g + eight(i & 1), t + 4 * (i >> 1)),
            (Frag::A, code::TF32, _) => (g + eight(i), t),
            (Frag::B, code::TF32, code::M16N8K8) => (t + 4 * i, g),
            (Frag::B, code::TF32, _) => (t, g),
            (Frag::A, code::F64, _) => (g, t),
            (Frag::B, code::F64, _) => (t, g),
            (Frag::A, _, code::M16N8K32) => {
                (g + eight((i >> 2) & 1), 4 * t + (i & 3) + 16 * (i >> 3))
            }
            (Frag::A, ..) => (g + eight(i >> 2), 4 * t + (i & 3)),
            (Frag::B, _, code::M16N8K32) => (4 * t + (i & 3) + 16 * (i >> 2), g),
            (Frag::B, ..) => (4 * t + i, g),
        }
    }
}

/// Words of the `a`, `b`, `c` and `d` fragments of an `mma`/`wmma.mma` of kind `kind`
/// (`None` for kinds the runtime does not implement): what the lowering must pass.
pub(crate) fn fragment_words(kind: u32) -> Option<[usize; 4]> {
    let m = Mma::decode(kind)?;
    Some([
        m.words(Frag::A, false),
        m.words(Frag::B, false),
        m.words(Frag::C, false),
        m.words(Frag::C, true),
    ])
}

/// Words of one lane's `wmma.load`/`wmma.store` fragment for descriptor `desc`.
pub(crate) fn wmma_words(desc: u32) -> Option<usize> {
    let (m, f, _) = wmma_desc(desc)?;
    Some(m.words(f, false))
}

/// Bits per element of type `ty`.
fn bits(ty: u32) -> usize {
    match ty {
        code::F16 | code::BF16 => 16,
        code::S8 | code::U8 | code::E4M3 | code::E5M2 => 8,
        code::F64 => 64,
        _ => 32,
    }
}

/// Element `i` of the packed words `w` of type `ty`, as an `f64` (integers exactly).
fn element(w: &[u32], ty: u32, i: usize) -> f64 {
    let x = get_bits(w, bits(ty), i);
    match ty {
        code::F16 => super::softfp::f16_bits_to_f32(x as u16) as f64,
        code::BF16 => f32::from_bits((x as u32) << 16) as f64,
        code::S8 => x as u8 as i8 as f64,
        code::U8 => x as f64,
        code::F64 => f64::from_bits(x),
        // tf32 keeps the sign, the exponent and 10 fraction bits.
        code::TF32 => f32::from_bits(x as u32 & 0xffff_e000) as f64,
        code::S32 => x as u32 as i32 as f64,
        code::E4M3 | code::E5M2 => fp8_value(x as u8, ty == code::E5M2),
        _ => f32::from_bits(x as u32) as f64,
    }
}

/// The value of an 8-bit float (PTX ISA "Alternate Floating-Point Data Formats"): `.e4m3`
/// (bias 7, no infinity, S.1111.111 NaN, largest 448) or `.e5m2` (bias 15, IEEE-style:
/// S.11111.00 infinity, S.11111.xx NaN, largest 57344); both have subnormals. Products of two
/// are exact in `f32`, so the `mma` arithmetic is the f16 forms' (an `f32` FMA chain).
fn fp8_value(x: u8, e5m2: bool) -> f64 {
    let (mbits, bias) = if e5m2 { (2, 15) } else { (3, 7) };
    let exp = ((x & 0x7f) >> mbits) as i32;
    let man = (x & ((1 << mbits) - 1)) as i32;
    let top = (1 << (7 - mbits)) - 1;
    let mag = if e5m2 && exp == top {
        if man == 0 {
            f64::INFINITY
        } else {
            f64::NAN
        }
    } else if !e5m2 && exp == top && man == 7 {
        f64::NAN
    } else if exp == 0 {
        man as f64 * 2f64.powi(1 - bias - mbits)
    } else {
        ((1 << mbits) + man) as f64 * 2f64.powi(exp - bias - mbits)
    };
    if x & 0x80 != 0 {
        -mag
    } else {
        mag
    }
}

/// The exchange slot (`SLOT_WORDS` words) of thread `i` in half `phase`.
unsafe fn slot(t: *mut Thread, i: u32, phase: u32) -> *mut u32 {
    let cta = cta_of(t);
    let n = (*cta).xseq.len();
    (*cta)
        .xchg
        .as_mut_ptr()
        .add((phase as usize * n + i as usize) * SLOT_WORDS)
}

/// Writes `words` to the calling thread's slot, synchronizes the warp as operation `which`
/// at program point `pc` (every lane at the same instruction, as `.aligned` requires), and
/// returns the half the warp wrote, the thread number of its lane 0 and the number of
/// the instruction (the same in every lane).
unsafe fn exchange(t: *mut Thread, pc: u32, which: u32, words: &[u32]) -> (u32, u32, u32) {
    let i = (*t).flat_tid;
    let seq = {
        let cta = &mut *cta_of(t);
        cta.matrix_area(SLOT_WORDS, RESULT_WORDS);
        let p = &mut cta.xseq[i as usize];
        *p = p.wrapping_add(1);
        *p
    };
    let phase = seq & 1;
    let s = slot(t, i, phase);
    for (k, w) in words.iter().enumerate() {
        *s.add(k) = *w;
    }
    warp_op(t, pc, WarpOp::Matrix(which), u32::MAX, 0, 0, 0);
    (phase, i - i % WARP_SIZE, seq)
}

/// Lane `lane`'s slot in the half `phase` (zeros for lanes the CTA does not have).
unsafe fn lane_words(t: *mut Thread, base: u32, lane: usize, phase: u32) -> [u32; SLOT_WORDS] {
    let cta = cta_of(t);
    let i = base + lane as u32;
    let mut w = [0u32; SLOT_WORDS];
    if (i as usize) < (*cta).xseq.len() {
        let s = slot(t, i, phase);
        for (k, x) in w.iter_mut().enumerate() {
            *x = *s.add(k);
        }
    }
    w
}

/// The `mma.sync` variant `kind` encodes and its A, B and C fragment sizes in words per lane;
/// an unknown `kind` fails the launch.
///
/// # Safety
/// `t` must be the context the runtime passed to the running kernel.
unsafe fn mma_kind(t: *mut Thread, kind: u32) -> (Mma, usize, usize, usize) {
    let Some(m) = Mma::decode(kind) else {
        fail(
            t,
            format!("mma.sync: unsupported shape or types (kind {kind:#x})"),
        );
    };
    let (wa, wb, wc) = (
        m.words(Frag::A, false),
        m.words(Frag::B, false),
        m.words(Frag::C, false),
    );
    (m, wa, wb, wc)
}

/// `mma.sync.aligned` (and `wmma.mma.sync.aligned`) of kind `kind` (`abi::mma`): `d = a * b +
/// c` for the warp; `a`, `b` and `c` point to the calling lane's fragment registers (32-bit
/// words, `f64` as two), `d` receives its result fragment.
///
/// # Safety
/// `t` must be the context the runtime passed to the running kernel; the pointers must hold
/// the fragment sizes of `kind`.
#[no_mangle]
pub unsafe extern "C" fn ptx2llvm_rt_mma(
    t: *mut Thread,
    pc: u32,
    kind: u32,
    a: *const u32,
    b: *const u32,
    c: *const u32,
    d: *mut u32,
) {
    let (m, wa, wb, wc) = mma_kind(t, kind);
    let mut mine = [0u32; SLOT_WORDS];
    for (k, w) in mine.iter_mut().take(wa + wb + wc).enumerate() {
        *w = if k < wa {
            *a.add(k)
        } else if k < wa + wb {
            *b.add(k - wa)
        } else {
            *c.add(k - wa - wb)
        };
    }
    let which = if m.shape >= code::WMMA_M16N16K16 {
        4
    } else {
        0
    };
    let (phase, base, seq) = exchange(t, pc, which, &mine[..wa + wb + wc]);
    // The first lane to run after the exchange computes every lane's result.
    let cta = cta_of(t);
    let w = (base / WARP_SIZE) as usize;
    let at = |lane: usize| ((w * 2 + phase as usize) * WARP_SIZE as usize + lane) * RESULT_WORDS;
    if (&(*cta).xdone)[w * 2 + phase as usize] != seq {
        let slots: Vec<[u32; SLOT_WORDS]> = (0..WARP_SIZE as usize)
            .map(|l| lane_words(t, base, l, phase))
            .collect();
        let all = product(&m, &slots, (wa, wb, wc));
        let c = &mut *cta;
        for (lane, out) in all.iter().enumerate() {
            c.xres[at(lane)..at(lane) + RESULT_WORDS].copy_from_slice(out);
        }
        c.xdone[w * 2 + phase as usize] = seq;
    }
    let lane = ((*t).flat_tid % WARP_SIZE) as usize;
    let res = &(*cta).xres;
    for k in 0..m.words(Frag::C, true) {
        *d.add(k) = res[at(lane) + k];
    }
}

/// `d = a * b + c` for every lane of a warp from its exchange slots (`a`, `b`, `c` fragment
/// words at the offsets `0`, `wa`, `wa + wb`): each lane's result fragment.
fn product(
    m: &Mma,
    slots: &[[u32; SLOT_WORDS]],
    (wa, wb, wc): (usize, usize, usize),
) -> Vec<[u32; RESULT_WORDS]> {
    let mut fast = vec![[0u32; RESULT_WORDS]; slots.len()];
    if product_16816(m, |l, k| slots[l][k], |l, k, x| fast[l][k] = x) {
        return fast;
    }
    product_any(m, slots, (wa, wb, wc))
}

/// `product` for every kind, element by element.
fn product_any(
    m: &Mma,
    slots: &[[u32; SLOT_WORDS]],
    (wa, wb, wc): (usize, usize, usize),
) -> Vec<[u32; RESULT_WORDS]> {
    let (rows, cols, depth) = m.mnk();
    // A by rows and B by columns (transposed), so that each dot product reads both in order.
    let mut am = vec![0f64; rows * depth];
    let mut bm = vec![0f64; cols * depth];
    let mut cm = vec![0f64; rows * cols];
    for (lane, w) in slots.iter().enumerate() {
        for e in 0..m.count(Frag::A) {
            let (r, k) = m.frag_pos(Frag::A, lane, e);
            am[r * depth + k] = element(&w[..wa], m.a, e);
        }
        for e in 0..m.count(Frag::B) {
            let (k, col) = m.frag_pos(Frag::B, lane, e);
            bm[col * depth + k] = element(&w[wa..wa + wb], m.b, e);
        }
        for e in 0..m.count(Frag::C) {
            let (r, col) = m.frag_pos(Frag::C, lane, e);
            cm[r * cols + col] = element(&w[wa + wb..wa + wb + wc], m.c, e);
        }
    }
    let mut dm = vec![0u64; rows * cols];
    let fp32 = !matches!(m.d, code::F64 | code::S32);
    let (a32, b32): (Vec<f32>, Vec<f32>) = if fp32 {
        (
            am.iter().map(|&x| x as f32).collect(),
            bm.iter().map(|&x| x as f32).collect(),
        )
    } else {
        (Vec::new(), Vec::new())
    };
    for r in 0..rows {
        for col in 0..cols {
            let init = cm[r * cols + col];
            if fp32 {
                let v = dot_f32(
                    init as f32,
                    &a32[r * depth..(r + 1) * depth],
                    &b32[col * depth..(col + 1) * depth],
                );
                // A NaN result is the canonical NaN whatever the operands' NaNs (measured on an
                // H200 for every f16/bf16/tf32/fp8 form, session 21).
                dm[r * cols + col] = match (m.d == code::F16, v.is_nan()) {
                    (true, true) => 0x7fff,
                    (true, false) => super::softfp::f32_to_f16_bits(v) as u64,
                    (false, true) => 0x7fff_ffff,
                    (false, false) => v.to_bits() as u64,
                };
                continue;
            }
            let dot = (0..depth).map(|k| (am[r * depth + k], bm[col * depth + k]));
            dm[r * cols + col] = match m.d {
                code::F64 => dot.fold(init, |s, (x, y)| x.mul_add(y, s)).to_bits(),
                code::S32 => {
                    let v = dot.fold(init as i64, |s, (x, y)| s + (x as i64) * (y as i64));
                    let v = if m.satfinite {
                        v.clamp(i32::MIN as i64, i32::MAX as i64)
                    } else {
                        v
                    };
                    v as i32 as u32 as u64
                }
                _ => unreachable!("f32 accumulation is done above"),
            };
        }
    }
    (0..slots.len())
        .map(|lane| {
            let mut out = [0u32; RESULT_WORDS];
            for e in 0..m.count(Frag::C) {
                let (r, col) = m.frag_pos(Frag::C, lane, e);
                put_bits(&mut out, bits(m.d), e, dm[r * cols + col]);
            }
            out
        })
        .collect()
}

/// `product` for `m16n8k16` with `f16` or `bf16` A and B and `f32` C and D (the tensor-core
/// product of Triton's and most CUDA kernels), in the same arithmetic — each element of D is
/// the chain of `f32` fused multiply-adds from C in `k` order (the 16-bit products are exact
/// in `f32`) — but vectorized across D's 8 columns and with the hardware's `f16` conversion,
/// on x86-64 with FMA and F16C. `word(lane, k)`: word `k` of the lane's fragments (A's 4, B's
/// 2, then C's 4); `put(lane, k, x)`: word `k` of its D. `false` (nothing done) for other
/// kinds and CPUs.
fn product_16816(
    m: &Mma,
    word: impl Fn(usize, usize) -> u32,
    put: impl FnMut(usize, usize, u32),
) -> bool {
    let fits = m.shape == code::M16N8K16
        && m.a == m.b
        && matches!(m.a, code::F16 | code::BF16)
        && m.c == code::F32
        && m.d == code::F32;
    #[cfg(target_arch = "x86_64")]
    if fits
        && std::arch::is_x86_feature_detected!("avx")
        && std::arch::is_x86_feature_detected!("fma")
        && std::arch::is_x86_feature_detected!("f16c")
    {
        // SAFETY: the CPU has the features the function is compiled for.
        unsafe { product_16816_x86(m.a == code::BF16, word, put) };
        return true;
    }
    let _ = (fits, word, put);
    false
}

/// `product_16816` on x86-64 (`bf16`: A and B are `bf16`, else `f16`).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx,fma,f16c")]
unsafe fn product_16816_x86(
    bf16: bool,
    word: impl Fn(usize, usize) -> u32,
    mut put: impl FnMut(usize, usize, u32),
) {
    use std::arch::x86_64::{_mm256_cvtph_ps, _mm256_storeu_ps, _mm_loadu_si128};
    // A by rows, B by rows of k (so that a row of D takes one B row per step), C then D.
    let mut am = [[0f32; 16]; 16];
    let mut bm = [[0f32; 8]; 16];
    let mut dm = [[0f32; 8]; 16];
    let lanes = WARP_SIZE as usize;
    for lane in 0..lanes {
        let (g, t) = (lane / 4, lane % 4);
        // The lane's 8 A halves, then its 4 B halves (low half of a word first).
        let w: [u32; 8] = std::array::from_fn(|k| if k < 6 { word(lane, k) } else { 0 });
        let mut h = [0f32; 16];
        if bf16 {
            for (i, x) in h.iter_mut().take(12).enumerate() {
                *x = f32::from_bits((w[i / 2] >> (16 * (i % 2))) << 16);
            }
        } else {
            // SAFETY: `w` holds 16 halves and `h` 16 floats; the CPU has F16C.
            unsafe {
                let p = w.as_ptr().cast();
                _mm256_storeu_ps(h.as_mut_ptr(), _mm256_cvtph_ps(_mm_loadu_si128(p)));
                let q = w.as_ptr().add(4).cast();
                _mm256_storeu_ps(h.as_mut_ptr().add(8), _mm256_cvtph_ps(_mm_loadu_si128(q)));
            }
        }
        // `Mma::frag_pos` of m16n8k16: A register j holds row g + 8 (j & 1), columns
        // 2t + 8 (j >> 1) and one more; B register j rows 2t + 8 j and one more of column g;
        // C element e row g + 8 (e >> 1), column 2t + (e & 1).
        for j in 0..4 {
            let (r, k) = (g + 8 * (j & 1), 2 * t + 8 * (j >> 1));
            am[r][k] = h[2 * j];
            am[r][k + 1] = h[2 * j + 1];
        }
        for j in 0..2 {
            let k = 2 * t + 8 * j;
            bm[k][g] = h[8 + 2 * j];
            bm[k + 1][g] = h[8 + 2 * j + 1];
        }
        for e in 0..4 {
            dm[g + 8 * (e >> 1)][2 * t + (e & 1)] = f32::from_bits(word(lane, 6 + e));
        }
    }
    for (d, a) in dm.iter_mut().zip(&am) {
        for (x, b) in a.iter().zip(&bm) {
            for (s, y) in d.iter_mut().zip(b) {
                *s = x.mul_add(*y, *s);
            }
        }
    }
    for lane in 0..lanes {
        let (g, t) = (lane / 4, lane % 4);
        for e in 0..4 {
            let v = dm[g + 8 * (e >> 1)][2 * t + (e & 1)];
            put(lane, e, if v.is_nan() { 0x7fff_ffff } else { v.to_bits() });
        }
    }
}

/// `init + a . b` with one `f32` fused multiply-add per element, in order: the hardware's
/// instruction where the CPU has it (a software `fmaf` is several times slower).
fn dot_f32(init: f32, a: &[f32], b: &[f32]) -> f32 {
    #[cfg(target_arch = "x86_64")]
    {
        #[target_feature(enable = "fma")]
        unsafe fn with_fma(init: f32, a: &[f32], b: &[f32]) -> f32 {
            a.iter().zip(b).fold(init, |s, (x, y)| x.mul_add(*y, s))
        }
        if std::arch::is_x86_feature_detected!("fma") {
            // SAFETY: the CPU has FMA.
            return unsafe { with_fma(init, a, b) };
        }
    }
    a.iter().zip(b).fold(init, |s, (x, y)| x.mul_add(*y, s))
}

/// Row `r` of matrix `j`: its address as lane `8 j + r` gave it.
fn row_addr(w: &[[u32; SLOT_WORDS]], j: usize, r: usize) -> *mut u8 {
    let s = &w[8 * j + r];
    (s[0] as u64 | (s[1] as u64) << 32) as usize as *mut u8
}

/// The `.m8n8.b16` matrix instructions' layout, shared by both engines: the two elements
/// (row, column) of an 8 x 8 matrix whose halves, low first, make `lane`'s fragment register
/// (`trans`: of the transposed matrix). Untransposed, lane `4 g + q` holds row `g`, elements
/// `2 q` and the next.
fn m8n8_pos(lane: usize, trans: bool) -> [(usize, usize); 2] {
    let (g, q) = (lane / 4, lane % 4);
    if trans {
        [(2 * q, g), (2 * q + 1, g)]
    } else {
        [(g, 2 * q), (g, 2 * q + 1)]
    }
}

/// Element (row, col) of an 8 x 8 b16 matrix held as a fragment, `reg(lane)` being each
/// lane's register of it.
fn m8n8_held(reg: impl Fn(usize) -> u32, row: usize, col: usize) -> u16 {
    (reg(4 * row + col / 2) >> (16 * (col % 2))) as u16
}

/// Why a matrix row address fails the launch: `ldmatrix` and `stmatrix` access 16-byte rows
/// of `.shared` memory only.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum BadRow {
    /// Outside the CTA's shared memory: an H200 stops with an illegal instruction on a
    /// generic row address elsewhere (global memory included).
    NotShared,
    /// Not a multiple of 16: an H200 stops with a misaligned address.
    Misaligned,
}

/// Whether the row address `a` fails the launch, and why. A row in the guards past the block
/// faults as an out-of-range shared address when it is accessed; a null one (the thread
/// loops' diagnostic replay of a CTA, one thread at a time, sees the other lanes' addresses
/// as null) as a null pointer.
fn bad_row(a: usize) -> Option<BadRow> {
    if a < 4096 {
        None
    } else if super::fault::in_shared_reservation(a) == Some(false) {
        Some(BadRow::NotShared)
    } else if !a.is_multiple_of(16) {
        Some(BadRow::Misaligned)
    } else {
        None
    }
}

/// The first of rows `0 .. 8 num` (lane `8 j + r` giving row `r` of matrix `j`) whose address
/// fails the launch (`bad_row`), with its lane, address and reason.
fn non_shared_row(
    row: impl Fn(usize, usize) -> usize,
    num: usize,
) -> Option<(usize, usize, BadRow)> {
    (0..8 * num).find_map(|l| {
        let a = row(l / 8, l % 8);
        bad_row(a).map(|why| (l, a, why))
    })
}

/// The error of a matrix instruction `what` whose lane `lane` gave the bad row address `addr`.
fn non_shared_message(what: &str, lane: usize, addr: usize, why: BadRow) -> String {
    match why {
        BadRow::NotShared => format!(
            "{what}: the row address {addr:#x} that lane {lane} gave is not in the CTA's shared \
             memory ({what} accesses .shared only; a GPU stops with an illegal instruction)"
        ),
        BadRow::Misaligned => format!(
            "{what}: the row address {addr:#x} that lane {lane} gave is not 16-byte aligned (a \
             GPU stops with a misaligned address)"
        ),
    }
}

/// Fails the launch of a warp-engine warp (`ptx2llvm_rt_warp_*matrix`) for `lane`'s row.
///
/// # Safety
/// Called from a warp function, whose worker set the running context.
unsafe fn warp_row_error(what: &str, lane: usize, addr: usize, why: BadRow) -> ! {
    let t = super::nvvm::ptx2llvm_rt_self();
    super::fault::name_warp_lane(t, lane as u32);
    fail(t, non_shared_message(what, lane, addr, why))
}

/// `lane`'s registers of `ldmatrix.m8n8.x{out.len()}{.trans}.b16`, read from the rows at
/// `row(j, r)` (row `r` of matrix `j`, given by lane `8 j + r`), inside `kernel_access`.
///
/// # Safety
/// The rows must be readable (a fault fails the launch naming the lane of the row).
unsafe fn ldmatrix_lane(
    row: impl Fn(usize, usize) -> *const u8,
    lane: usize,
    trans: bool,
    out: &mut [u32],
) {
    for (j, o) in out.iter_mut().enumerate() {
        let h = |(r, c): (usize, usize)| {
            super::fault::row_lane(Some((8 * j + r) as u32));
            (row(j, r).add(2 * c) as *const u16).read_unaligned() as u32
        };
        let [lo, hi] = m8n8_pos(lane, trans);
        *o = h(lo) | h(hi) << 16;
    }
}

/// Row `r` of matrix `j` of `stmatrix.m8n8{.trans}.b16` (what lane `8 j + r` writes at its
/// address), from the fragment registers `reg(lane)` of matrix `j`.
fn stmatrix_row(reg: impl Fn(usize) -> u32, r: usize, trans: bool) -> [u16; 8] {
    std::array::from_fn(|c| {
        if trans {
            m8n8_held(&reg, c, r)
        } else {
            m8n8_held(&reg, r, c)
        }
    })
}

/// `lane`'s result of `movmatrix.m8n8.trans.b16`, the source registers being `reg(lane)`.
fn movmatrix_lane(reg: impl Fn(usize) -> u32, lane: usize) -> u32 {
    let [(r0, c0), (r1, c1)] = m8n8_pos(lane, true);
    m8n8_held(&reg, r0, c0) as u32 | (m8n8_held(&reg, r1, c1) as u32) << 16
}

/// `ldmatrix.sync.aligned.m8n8.x{num}{.trans}.b16 out, [addr]`: lanes `8 j .. 8 j + 7` give
/// the row addresses of matrix `j`; `out[j]` receives row `lane / 4`, elements `2 (lane % 4)`
/// and the next (transposed: those two rows' element `lane / 4`).
///
/// # Safety
/// `t` must be the context the runtime passed to the running kernel; `out` must hold `num`
/// words; the rows must be readable.
#[no_mangle]
pub unsafe extern "C" fn ptx2llvm_rt_ldmatrix(
    t: *mut Thread,
    pc: u32,
    num: u32,
    trans: u32,
    addr: u64,
    out: *mut u32,
) {
    let (phase, base, _) = exchange(t, pc, 1, &[addr as u32, (addr >> 32) as u32]);
    let w: Vec<[u32; SLOT_WORDS]> = (0..WARP_SIZE as usize)
        .map(|l| lane_words(t, base, l, phase))
        .collect();
    let lane = ((*t).flat_tid % WARP_SIZE) as usize;
    let out = std::slice::from_raw_parts_mut(out, num.min(4) as usize);
    if let Some((l, a, why)) = non_shared_row(|j, r| row_addr(&w, j, r) as usize, out.len()) {
        fail(t, non_shared_message("ldmatrix", l, a, why));
    }
    super::fault::kernel_access(|| ldmatrix_lane(|j, r| row_addr(&w, j, r), lane, trans != 0, out));
}

/// `stmatrix.sync.aligned.m8n8.x{num}{.trans}.b16 [addr], regs`: the inverse of `ldmatrix`;
/// each lane `8 j + r` writes row `r` of matrix `j` at its address.
///
/// # Safety
/// As `ptx2llvm_rt_ldmatrix`, with `regs` holding `num` words and the rows writable.
#[no_mangle]
pub unsafe extern "C" fn ptx2llvm_rt_stmatrix(
    t: *mut Thread,
    pc: u32,
    num: u32,
    trans: u32,
    addr: u64,
    regs: *const u32,
) {
    let num = num.min(4) as usize;
    let mut mine = [addr as u32, (addr >> 32) as u32, 0, 0, 0, 0];
    for (j, w) in mine[2..2 + num].iter_mut().enumerate() {
        *w = *regs.add(j);
    }
    let (phase, base, _) = exchange(t, pc, 2, &mine);
    let w: Vec<[u32; SLOT_WORDS]> = (0..WARP_SIZE as usize)
        .map(|l| lane_words(t, base, l, phase))
        .collect();
    let lane = ((*t).flat_tid % WARP_SIZE) as usize;
    let (j, r) = (lane / 8, lane % 8);
    if j >= num {
        return;
    }
    if let Some((l, a, why)) = non_shared_row(|j, r| row_addr(&w, j, r) as usize, num) {
        fail(t, non_shared_message("stmatrix", l, a, why));
    }
    let row = stmatrix_row(|l| w[l][2 + j], r, trans != 0);
    let p = row_addr(&w, j, r) as *mut u16;
    super::fault::kernel_access(|| {
        for (c, v) in row.into_iter().enumerate() {
            p.add(c).write_unaligned(v);
        }
    });
}

/// `movmatrix.sync.aligned.m8n8.trans.b16 d, a`: the fragment of the transposed matrix.
///
/// # Safety
/// `t` must be the context the runtime passed to the running kernel.
#[no_mangle]
pub unsafe extern "C" fn ptx2llvm_rt_movmatrix(t: *mut Thread, pc: u32, a: u32) -> u32 {
    let (phase, base, _) = exchange(t, pc, 3, &[a]);
    let lane = ((*t).flat_tid % WARP_SIZE) as usize;
    movmatrix_lane(|l| lane_words(t, base, l, phase)[0], lane)
}

/// `wmma.load.{a,b,c}`: the calling lane's part of the matrix at `addr` (`stride` elements
/// between rows, or columns with `COL_MAJOR`), as described by `desc` (`abi::mma::FRAG_A`),
/// packed into `words` words at `out`; fragments with more registers than elements (f16
/// `a`/`b`) repeat the elements. No synchronization: each lane reads its own elements.
///
/// # Safety
/// `t` must be the context the runtime passed to the running kernel; `out` must hold `words`
/// words; the elements must be readable.
#[no_mangle]
pub unsafe extern "C" fn ptx2llvm_rt_wmma_load(
    t: *mut Thread,
    desc: u32,
    addr: u64,
    stride: u32,
    out: *mut u32,
    words: u32,
) {
    let Some((m, f, ty)) = wmma_desc(desc) else {
        fail(
            t,
            format!("wmma.load: unsupported shape or type ({desc:#x})"),
        );
    };
    let lane = ((*t).flat_tid % WARP_SIZE) as usize;
    let (n, b) = (m.count(f), bits(ty));
    let mut packed = [0u32; 16];
    super::fault::kernel_access(|| {
        for e in 0..n {
            let p = element_addr(&m, f, desc, addr, stride, lane, e) as *const u8;
            let v: u64 = match b {
                8 => p.read() as u64,
                16 => (p as *const u16).read_unaligned() as u64,
                32 => (p as *const u32).read_unaligned() as u64,
                _ => (p as *const u64).read_unaligned(),
            };
            put_bits(&mut packed, b, e, v);
        }
    });
    let used = m.words(f, false).max(1);
    for k in 0..words as usize {
        *out.add(k) = packed[k % used];
    }
}

/// `wmma.store.d`: writes the calling lane's elements of the `c`/`d` fragment at `regs`.
///
/// # Safety
/// As `ptx2llvm_rt_wmma_load`, with the elements writable.
#[no_mangle]
pub unsafe extern "C" fn ptx2llvm_rt_wmma_store(
    t: *mut Thread,
    desc: u32,
    addr: u64,
    stride: u32,
    regs: *const u32,
) {
    let Some((m, f, ty)) = wmma_desc(desc) else {
        fail(
            t,
            format!("wmma.store: unsupported shape or type ({desc:#x})"),
        );
    };
    let lane = ((*t).flat_tid % WARP_SIZE) as usize;
    let (n, b) = (m.count(f), bits(ty));
    let words: Vec<u32> = (0..m.words(f, false)).map(|k| *regs.add(k)).collect();
    super::fault::kernel_access(|| {
        for e in 0..n {
            let p = element_addr(&m, f, desc, addr, stride, lane, e) as *mut u8;
            let v = get_bits(&words, b, e);
            match b {
                8 => p.write(v as u8),
                16 => (p as *mut u16).write_unaligned(v as u16),
                32 => (p as *mut u32).write_unaligned(v as u32),
                _ => (p as *mut u64).write_unaligned(v),
            }
        }
    });
}

/// The shape (as an `Mma` whose types are the element type), fragment and element type of a
/// `wmma.load`/`wmma.store` descriptor.
fn wmma_desc(desc: u32) -> Option<(Mma, Frag, u32)> {
    let shape = desc & 0xf;
    let f = match desc & (3 << 4) {
        code::FRAG_A => Frag::A,
        code::FRAG_B => Frag::B,
        _ => Frag::C,
    };
    let ty = (desc >> 8) & 0xf;
    let ok = match shape {
        code::WMMA_M16N16K16 | code::WMMA_M32N8K16 | code::WMMA_M8N32K16 => match f {
            Frag::C => matches!(ty, code::F16 | code::F32 | code::S32),
            _ => matches!(ty, code::F16 | code::BF16 | code::S8 | code::U8),
        },
        code::WMMA_M16N16K8 => match f {
            Frag::C => ty == code::F32,
            _ => ty == code::TF32,
        },
        code::WMMA_M8N8K4 => ty == code::F64,
        _ => false,
    };
    let m = Mma {
        shape,
        a: ty,
        b: ty,
        c: ty,
        d: ty,
        satfinite: false,
    };
    ok.then_some((m, f, ty))
}

/// The address of element `e` of `lane`'s fragment `f` in memory.
fn element_addr(m: &Mma, f: Frag, desc: u32, addr: u64, stride: u32, lane: usize, e: usize) -> u64 {
    let (r, c) = m.frag_pos(f, lane, e);
    let at = if desc & code::COL_MAJOR != 0 {
        c as u64 * stride as u64 + r as u64
    } else {
        r as u64 * stride as u64 + c as u64
    };
    let esz = (bits(m.a) / 8) as u64;
    addr.wrapping_add(at * esz)
}

/// Element `e` (of `b` bits) of the packed words `w`.
fn get_bits(w: &[u32], b: usize, e: usize) -> u64 {
    match b {
        64 => w[2 * e] as u64 | (w[2 * e + 1] as u64) << 32,
        32 => w[e] as u64,
        _ => {
            let per = 32 / b;
            ((w[e / per] >> (b * (e % per))) & ((1u32 << b) - 1)) as u64
        }
    }
}

/// Sets element `e` (of `b` bits) of the packed words `w` to `v`.
fn put_bits(w: &mut [u32], b: usize, e: usize, v: u64) {
    match b {
        64 => {
            w[2 * e] = v as u32;
            w[2 * e + 1] = (v >> 32) as u32;
        }
        32 => w[e] = v as u32,
        _ => {
            let per = 32 / b;
            w[e / per] |= (v as u32) << (b * (e % per));
        }
    }
}

/// `mma.sync.aligned` of kind `kind` for a whole warp of the warp engine: `a`, `b` and `c`
/// hold every lane's fragment words component-major (word `k` of lane `l` at `k * 32 + l`),
/// and `d` receives the result fragments the same way. The product is the coroutine
/// scheme's (`product`), without an exchange: the warp function holds all lanes at once.
///
/// # Safety
/// `t` must be the warp's context; the arrays must hold 32 lanes of `kind`'s fragment words.
#[no_mangle]
pub unsafe extern "C" fn ptx2llvm_rt_warp_mma(
    t: *mut Thread,
    kind: u32,
    a: *const u32,
    b: *const u32,
    c: *const u32,
    d: *mut u32,
) {
    let (m, wa, wb, wc) = mma_kind(t, kind);
    let lanes = WARP_SIZE as usize;
    // SAFETY: the arrays hold 32 lanes of the fragments' words.
    let word = |l: usize, k: usize| unsafe {
        match k {
            0..4 => *a.add(k * lanes + l),
            4..6 => *b.add((k - 4) * lanes + l),
            _ => *c.add((k - 6) * lanes + l),
        }
    };
    // SAFETY: `d` holds 32 lanes of the result fragment's words.
    if product_16816(&m, word, |l, k, x| unsafe { *d.add(k * lanes + l) = x }) {
        return;
    }
    let slots: Vec<[u32; SLOT_WORDS]> = (0..lanes)
        .map(|l| {
            let mut w = [0u32; SLOT_WORDS];
            let (wa_, wb_) = w.split_at_mut(wa);
            let (wb_, wc_) = wb_.split_at_mut(wb);
            for (k, x) in wa_.iter_mut().enumerate() {
                *x = *a.add(k * lanes + l);
            }
            for (k, x) in wb_.iter_mut().enumerate() {
                *x = *b.add(k * lanes + l);
            }
            for (k, x) in wc_.iter_mut().take(wc).enumerate() {
                *x = *c.add(k * lanes + l);
            }
            w
        })
        .collect();
    let all = product(&m, &slots, (wa, wb, wc));
    for (l, out) in all.iter().enumerate() {
        for (k, &x) in out.iter().take(m.words(Frag::C, true)).enumerate() {
            *d.add(k * lanes + l) = x;
        }
    }
}

/// `ldmatrix.sync.aligned.m8n8.x{num}{.trans}.b16` for a whole warp of the warp engine:
/// `addrs` holds the 32 lanes' row addresses, and `out` receives each lane's registers
/// component-major (register `j` of lane `l` at `j * 32 + l`). As on the coroutine scheme, the
/// lanes of `mask` (those running it) read what their own registers take, so only the rows
/// they need are read (those of lanes `0..8 num`); the other lanes' registers are zeros.
///
/// # Safety
/// `addrs` must hold 32 addresses and `out` `32 num` words; a row that is not readable fails
/// the launch.
#[no_mangle]
pub unsafe extern "C" fn ptx2llvm_rt_warp_ldmatrix(
    num: u32,
    trans: u32,
    mask: u32,
    addrs: *const u64,
    out: *mut u32,
) {
    let lanes = WARP_SIZE as usize;
    let num = num.min(4) as usize;
    let addrs = std::slice::from_raw_parts(addrs, lanes);
    let out = std::slice::from_raw_parts_mut(out, num * lanes);
    if mask != 0 {
        if let Some((l, a, why)) = non_shared_row(|j, r| addrs[8 * j + r] as usize, num) {
            warp_row_error("ldmatrix", l, a, why);
        }
    }
    super::fault::warp_rows_access(|| {
        for l in 0..lanes {
            let mut regs = [0u32; 4];
            if mask & 1 << l != 0 {
                let row = |j: usize, r: usize| addrs[8 * j + r] as usize as *const u8;
                ldmatrix_lane(row, l, trans != 0, &mut regs[..num]);
            }
            for (j, &x) in regs[..num].iter().enumerate() {
                out[j * lanes + l] = x;
            }
        }
    });
}

/// `stmatrix.sync.aligned.m8n8.x{num}{.trans}.b16` for a whole warp of the warp engine:
/// `addrs` holds the 32 lanes' row addresses and `regs` their registers component-major (as
/// `ptx2llvm_rt_warp_ldmatrix`'s `out`); each lane `8 j + r` of `mask` with `j < num` writes
/// row `r` of matrix `j`, in lane order, as the coroutine scheme's lanes do.
///
/// # Safety
/// `addrs` must hold 32 addresses and `regs` `32 num` words; a row that is not writable fails
/// the launch.
#[no_mangle]
pub unsafe extern "C" fn ptx2llvm_rt_warp_stmatrix(
    num: u32,
    trans: u32,
    mask: u32,
    addrs: *const u64,
    regs: *const u32,
) {
    let lanes = WARP_SIZE as usize;
    let num = num.min(4) as usize;
    let addrs = std::slice::from_raw_parts(addrs, lanes);
    let regs = std::slice::from_raw_parts(regs, num * lanes);
    // Only the running lanes write their rows.
    if let Some((l, why)) = (0..8 * num)
        .filter(|&l| mask & 1 << l != 0)
        .find_map(|l| bad_row(addrs[l] as usize).map(|why| (l, why)))
    {
        warp_row_error("stmatrix", l, addrs[l] as usize, why);
    }
    super::fault::warp_rows_access(|| {
        for l in (0..8 * num).filter(|l| mask & 1 << l != 0) {
            let (j, r) = (l / 8, l % 8);
            let row = stmatrix_row(|x| regs[j * lanes + x], r, trans != 0);
            let p = addrs[l] as usize as *mut u16;
            super::fault::row_lane(Some(l as u32));
            for (c, v) in row.into_iter().enumerate() {
                p.add(c).write_unaligned(v);
            }
        }
    });
}

/// `movmatrix.sync.aligned.m8n8.trans.b16` for a whole warp of the warp engine: `a` holds the
/// 32 lanes' source registers, `d` receives their results.
///
/// # Safety
/// `a` and `d` must hold 32 words.
#[no_mangle]
pub unsafe extern "C" fn ptx2llvm_rt_warp_movmatrix(a: *const u32, d: *mut u32) {
    let lanes = WARP_SIZE as usize;
    let a = std::slice::from_raw_parts(a, lanes);
    let d = std::slice::from_raw_parts_mut(d, lanes);
    for (l, x) in d.iter_mut().enumerate() {
        *x = movmatrix_lane(|k| a[k], l);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The vectorized `m16n8k16` product gives the element-by-element one's bits, for `f16`
    /// and `bf16`, on random words mixed with zeros of both signs, infinities, NaNs (quiet
    /// and signalling), subnormals and the largest finite values (products that overflow,
    /// underflow, or cancel C exactly). A NaN result is any NaN: which input NaN's payload
    /// an FMA passes on follows the host's operand order, which neither path pins (the
    /// hardware's is not measured).
    #[test]
    fn vectorized_16816_matches_the_elementwise_product() {
        let mut s = 0x9E37_79B9_7F4A_7C15u64;
        let mut next = move || {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            s
        };
        let f16s = [
            0x0000, 0x8000, 0x7c00, 0xfc00, 0x7e00, 0x7c01, 0x0001, 0x83ff, 0x7bff,
        ];
        let bf16s = [
            0x0000, 0x8000, 0x7f80, 0xff80, 0x7fc0, 0x7f81, 0x0001, 0x8080, 0x7f7f,
        ];
        let f32s = [
            0x0000_0000,
            0x8000_0000,
            0x7f80_0000,
            0x7fc0_0001,
            0x0000_0001,
            0x7f7f_ffff,
        ];
        for (ty, specials) in [(code::F16, f16s), (code::BF16, bf16s)] {
            let kind = code::M16N8K16 | ty << 4 | ty << 8 | code::F32 << 12 | code::F32 << 16;
            let m = Mma::decode(kind).expect("a valid kind");
            let half = |n: &mut dyn FnMut() -> u64| -> u32 {
                let r = n();
                if r.is_multiple_of(40) {
                    specials[(r >> 8) as usize % specials.len()]
                } else {
                    // Small exponents keep most sums finite and inexact.
                    let h = (r >> 16) as u32 & 0x3fff;
                    if ty == code::F16 {
                        h | (r as u32 & 0x8000)
                    } else {
                        (h + 0x3b00) | (r as u32 & 0x8000)
                    }
                }
            };
            for round in 0..200 {
                let slots: Vec<[u32; SLOT_WORDS]> = (0..32)
                    .map(|_| {
                        let mut w = [0u32; SLOT_WORDS];
                        for x in w.iter_mut().take(6) {
                            *x = half(&mut next) | half(&mut next) << 16;
                        }
                        for x in w.iter_mut().skip(6).take(4) {
                            let r = next();
                            *x = if r % 16 == 0 {
                                f32s[(r >> 8) as usize % f32s.len()]
                            } else {
                                (r as f32 / u64::MAX as f32 - 0.5).to_bits()
                            };
                        }
                        w
                    })
                    .collect();
                let mut fast = vec![[0u32; RESULT_WORDS]; 32];
                if !product_16816(&m, |l, k| slots[l][k], |l, k, x| fast[l][k] = x) {
                    return; // not this CPU's path
                }
                let want = product_any(&m, &slots, (4, 2, 4));
                let nan = |x: u32| f32::from_bits(x).is_nan();
                for (l, (f, w)) in fast.iter().zip(&want).enumerate() {
                    for k in 0..4 {
                        let same = f[k] == w[k] || (nan(f[k]) && nan(w[k]));
                        assert!(
                            same,
                            "type {ty}, round {round}, lane {l}, word {k}: {f:x?} {w:x?}"
                        );
                    }
                }
            }
        }
    }
}
