//! Lane strides of the warp function's varying integers and pointers (issue 17): a value is
//! *affine in the lane* when lane `l`'s value is lane 0's plus `l × step` in every one of the
//! 32 lanes (modulo its width), `step` a constant known at compile time. A load or store
//! whose pointer steps by its element size then reads or writes one run of memory from lane
//! 0's pointer: one masked vector access, with neither a vector of 64-bit pointers nor the
//! run-time test of the lanes' addresses that unknown pointers need (`lanes.rs`).
//!
//! Seeds are the lane ids the warp function builds as "first lane plus lane number" in every
//! lane: `%laneid`, the flat thread index, and `%tid.x` of aligned warps (`Facts::aligned`).
//! Steps go through additions, subtractions, multiplications and shifts by constants, casts,
//! address-space casts and GEPs, and loop-header phis whose value from the latch steps like
//! the one from the preheader (grid-stride loops; the warp function then sets all their lanes
//! on each edge, `Strides::whole`); other phis and selects are not followed (lanes outside
//! the mask keep older values there, so lane 0 is not a safe base).
//!
//! *Row segments* (a block of `(S, Y, Z)` threads with `S` 8 or 16, known at compile time:
//! `Facts::segment`): a warp holds `32 / S` rows of `S` lanes, lane `l` at `%tid.x = l % S` of
//! its row, one `%tid.y`/`%tid.z` per row. Strides are then taken within each row: lane `l`
//! is its row's first lane plus `(l % S) × step`, each row with a base of its own. The seeds
//! are `%tid.x`, `%laneid` and the flat index (step 1, the row's first lane a multiple of
//! `S`) and `%tid.y`/`%tid.z` (step 0: one value per row). The rules above hold row by row
//! with `S` in place of 32. An access whose pointer steps by its element size is one vector
//! access per row (`Access::Consecutive`, a lane test per row when `Checked`); a pointer of
//! step 0 is one value per row (`Access::PerRow`: one scalar load per row, spread over its
//! lanes), which 32-lane strides call unknown (`As[ty][k]` of a 16x16 tiled matmul).
//!
//! Under row segments the block is known, and so are the ranges of `%tid`; any other block is
//! within the launch limits (`%tid` and `%ntid` at most 1024, checked by every launch). A value
//! built from them, constants and `.shared` variables' addresses by additions,
//! multiplications and the like has a largest value (`Strides::max_of`), and a widening cast
//! of a value that cannot reach the narrow type's limit cannot wrap in any lane (a shared
//! address `s + 4 * %tid.x`): the cast is exact, and the access consecutive without a test.
//!
//! Lane 0 of an aligned stride is a multiple of `32 × step`; a uniform addend with as many
//! low zero bits (`low_zeros`: `%ctaid.x << 8`, `%ctaid.x * %ntid.x` when the code is for one
//! known block) keeps it one, so its widening below is exact too.
//!
//! Widening casts are the one place where a step is not exact: `sext`/`zext` of a 32-bit
//! index (PTX `cvt`, `mul.wide`, a GEP's implicit index extension) breaks the sequence where
//! the narrow value wraps. An access whose address went through exactly one such cast is
//! *checked*: lane 31's address minus lane 0's equals `31 × step` exactly when the narrow
//! value did not wrap in between (it moves monotonically, and a wrap shows as a multiple of
//! 2^width times a small factor in the difference), a scalar test per access, with the
//! gather as the other side. Two casts could wrap in opposite directions and hide each
//! other: such accesses keep the full run-time test of all 32 addresses.

use std::collections::{HashMap, HashSet};

use llvm_sys::core as c;
use llvm_sys::prelude::*;
use llvm_sys::LLVMOpcode as O;
use llvm_sys::LLVMTypeKind;

use super::cfg::Cfg;
use super::ir::{self, CtxField};
use crate::runtime::abi::MAX_THREADS_PER_CTA;

/// Largest factor applied to a widened index after its cast for the lane-31 test to stay
/// exact (`31 × factor × 2^32` must not vanish modulo 2^64).
const MAX_FACTOR: i64 = 1 << 20;

/// How lane `l`'s value follows lane 0's.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Stride {
    /// Lane `l` is lane 0 plus `l × step` (bytes for pointers).
    pub step: i64,
    /// Widening casts of a non-uniform value on the way (each may wrap).
    pub casts: u32,
    /// Product of the constant factors applied since the first such cast.
    pub factor: i64,
    /// Lane 0's value is a multiple of `32 × step`, `step` a positive power of two (the
    /// lanes of aligned warps, `%laneid`): the 32 lanes then lie in one block of `32 × step`
    /// and widening cannot wrap between them (row segments: each row's first lane, `S`).
    pub aligned: bool,
}

/// A clamp on the way to a tested access's pointer (`Strides::clamps`): `x` (a stepping
/// value, `rising` when its step is positive) bounded below (`max`) or above by the uniform
/// `bound`, signed or not. It is `x` in every lane when lanes 0 and 31 are within the bound
/// and lane 31 lies beyond lane 0 in the step's direction (no wrap between them).
#[derive(Clone, Copy, Debug)]
pub struct Clamp {
    pub x: LLVMValueRef,
    pub bound: LLVMValueRef,
    pub max: bool,
    pub signed: bool,
    pub rising: bool,
}

/// Whether `i` is a call of `llvm.smax`, `smin`, `umax` or `umin` on a scalar integer:
/// (a lower bound, signed).
unsafe fn clamp_of(i: LLVMValueRef) -> Option<(bool, bool)> {
    if c::LLVMIsACallInst(i).is_null()
        || c::LLVMGetTypeKind(c::LLVMTypeOf(i)) != LLVMTypeKind::LLVMIntegerTypeKind
    {
        return None;
    }
    let name = ir::callee(i);
    Some(match name.split('.').nth(1)? {
        "smax" => (true, true),
        "smin" => (false, true),
        "umax" => (true, false),
        "umin" => (false, false),
        _ => return None,
    })
}

/// What a varying load or store needs to find out whether it is one vector access.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Access {
    /// Consecutive in every lane: a vector access from lane 0's pointer.
    Consecutive,
    /// Consecutive unless one widening cast wrapped: a scalar test of lanes 0 and 31.
    Checked,
    /// Nothing known: the lanes' addresses are tested at run time.
    Unknown,
    /// Row segments only: the same address in every lane of a row (a load: one scalar load
    /// per row with a running lane, spread over the row).
    PerRow,
    /// Nothing known of a `.shared` load of a 32-bit value (AVX-512 hosts): the run-time
    /// tests are on the lanes' 32-bit offsets, consecutive first, then whether the running
    /// lanes' offsets lie within 64 elements from the lowest (two vector loads and a lane
    /// permutation, `lanes.rs`), a gather otherwise. Stores of this kind are `Unknown`'s.
    Window,
    /// Lanes `n` elements apart (`Strides::strided`): a field of an array of structs (`p[i].y`
    /// of a `float3`). One masked vector access of the 32 structs' span from lane 0's pointer,
    /// only the lanes' elements enabled, and a shuffle (`lanes.rs`, `load_strided`).
    Strided,
    /// `Strided` unless one widening cast wrapped: the lane-31 test of `Checked`, with the
    /// stride's span.
    StridedChecked,
}

/// The one widening cast of a `Checked` pointer (`Strides::wrap_cast`): its narrow operand,
/// whether it is a sign extension, the operand's lane step (a signed number of its width) and
/// that width.
pub type WrapCast = (LLVMValueRef, bool, i64, u32);

/// What an entry-tested access (`Strides::entry_tested`) checks besides its phis' tests.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EntryCheck {
    /// Nothing: consecutive whenever the tests passed.
    Nothing,
    /// Its widening cast, found under the tests' assumption: whether the narrow operand's
    /// first lane stays far enough from its type's limit (`lanes.rs`, `checked_test`).
    /// Accesses through one index (an unrolled grid-stride loop's) share the operand, so
    /// their checks are one value and their diamonds one chain (`chain.rs`); the lanes'
    /// pointers differ per access (phis at each diamond's join), and so did their tests.
    Cast(WrapCast),
    /// Its cast was not found: lanes 0 and 31's pointers are compared (`lane31_test`).
    Lanes,
}

/// Whether pointer `v` is indexed by memory: its tree of varying address arithmetic (`depth`
/// deep) holds a load at per-lane pointers (`x[col[k]]`, a gather through an index array).
/// Such lanes' addresses are data: the run-time test for consecutive lanes before a gather
/// (`lanes.rs`) almost never holds for them, and it cost spmv_warp ~12 vector instructions
/// per row on the path of the loads that bound it. A context field or a warp operation's
/// predicate (a varying value loaded at a uniform pointer) is not memory of the kernel.
pub unsafe fn memory_indexed(v: LLVMValueRef, varying: &HashSet<LLVMValueRef>, depth: u32) -> bool {
    address_tree_finds(v, varying, depth, &|x| {
        (ir::opcode(x) == O::LLVMLoad).then(|| varying.contains(&c::LLVMGetOperand(x, 0)))
    })
}

/// Whether varying pointer or integer `v` is computed (through additions, multiplications,
/// shifts, casts and GEPs) from a varying quotient by a uniform divisor (`s[i / cols]`): its
/// lanes then often share one or two addresses, which `lanes.rs` tests first
/// (`Warp::two_addresses_first`). `depth` limits the search.
pub unsafe fn divided(v: LLVMValueRef, varying: &HashSet<LLVMValueRef>, depth: u32) -> bool {
    address_tree_finds(v, varying, depth, &|x| {
        matches!(ir::opcode(x), O::LLVMSDiv | O::LLVMUDiv)
            .then(|| !varying.contains(&c::LLVMGetOperand(x, 1)))
    })
}

/// The walk `memory_indexed` and `divided` share: through `v`'s varying integer arithmetic,
/// casts and address computations (`depth` deep), whether some instruction gets `true` from
/// `leaf` (which answers `None` for the instructions the walk goes through).
unsafe fn address_tree_finds(
    v: LLVMValueRef,
    varying: &HashSet<LLVMValueRef>,
    depth: u32,
    leaf: &dyn Fn(LLVMValueRef) -> Option<bool>,
) -> bool {
    if !varying.contains(&v) || !ir::is_instruction(v) {
        return false;
    }
    let Some(depth) = depth.checked_sub(1) else {
        return false;
    };
    if let Some(found) = leaf(v) {
        return found;
    }
    let op = ir::opcode(v);
    let pure = ir::int_arith_or_cast(op)
        || matches!(
            op,
            O::LLVMIntToPtr | O::LLVMPtrToInt | O::LLVMAddrSpaceCast | O::LLVMGetElementPtr
        );
    pure && ir::operands(v)
        .into_iter()
        .any(|o| address_tree_finds(o, varying, depth, leaf))
}

/// Row segments: whether source value `v` is the same in every row of a warp lane for lane
/// (lane `l` of one row and lane `l` of another hold equal values): uniform values, `%tid.x`
/// (`lane % S` in every row) and pure arithmetic, casts, address computations and selects
/// of such values (`depth` limits the search). A load whose pointer is one reads one tile row
/// in every row of the warp (`Bs[k][tx]`): `lanes.rs` makes it one load (`load_runs`).
pub unsafe fn rows_alike(
    v: LLVMValueRef,
    varying: &HashSet<LLVMValueRef>,
    td: llvm_sys::target::LLVMTargetDataRef,
    depth: u32,
) -> bool {
    if !varying.contains(&v) {
        return true;
    }
    let Some(depth) = depth.checked_sub(1) else {
        return false;
    };
    if !ir::is_instruction(v) {
        return false;
    }
    let op = ir::opcode(v);
    if op == O::LLVMLoad {
        return ir::ctx_offset(td, c::LLVMGetOperand(v, 0)).map(CtxField::at)
            == Some(CtxField::Tid(0));
    }
    let pure = ir::int_arith_or_cast(op)
        || ir::int_div_rem(op)
        || matches!(
            op,
            O::LLVMIntToPtr
                | O::LLVMPtrToInt
                | O::LLVMAddrSpaceCast
                | O::LLVMBitCast
                | O::LLVMGetElementPtr
                | O::LLVMSelect
                | O::LLVMICmp
        );
    // Not `freeze`: of an undefined value it may choose differently in each lane.
    pure && (0..c::LLVMGetNumOperands(v) as u32)
        .all(|k| rows_alike(c::LLVMGetOperand(v, k), varying, td, depth))
}

#[derive(Default)]
pub struct Strides {
    map: HashMap<LLVMValueRef, Stride>,
    /// Loop-header phis that step like their inputs, and those tested at their loop's entry
    /// (`entry_tested`): the warp function sets all their lanes on each edge (`Warp::edge`)
    /// so that lane 0 stays a base (see `new`).
    whole: HashSet<LLVMValueRef>,
    /// Non-atomic loads and stores through varying pointers by kind: consecutive, checked,
    /// unknown (per row and consecutive within rows under row segments), of the unknown
    /// ones the loads tested for a window (`Access::Window`), stores of one address in
    /// every lane (`Strides::same_address`, [`SAME_ADDRESS`]), and of the unknown ones the
    /// stores tested for a window ([`WINDOW_STORES`]), of the unknown ones the global loads
    /// of at most two runs per half-warp ([`ROWS`]), and of the unknown ones those
    /// consecutive when their loops' entry tests pass ([`ENTRY_TESTED`]), and the strided
    /// ones ([`STRIDED`]).
    pub counts: [usize; 9],
    /// Row segments: loads of one value per row (`Access::PerRow`, not in `counts`).
    pub per_row: usize,
    /// Unknown accesses (`Access::Unknown`) that would be consecutive or checked if join phis
    /// took the stride their incoming values share (`likely_strided`).
    likely: HashSet<LLVMValueRef>,
    /// Loop-header phis whose lanes are tested where their loop is entered, and the step the
    /// test checks (`entry_tested`).
    entry: HashMap<LLVMValueRef, i64>,
    /// Join phis (no loop header's) tested where a loop that uses them without defining
    /// them is entered, and the step the test checks; by that loop's header, the join phis
    /// its entry tests (`entry_joins`).
    entry_join: HashMap<LLVMValueRef, i64>,
    entry_at: HashMap<LLVMBasicBlockRef, Vec<LLVMValueRef>>,
    /// Unknown accesses that are consecutive (or checked, `EntryCheck`) when the entry
    /// tests of these phis passed.
    entry_accesses: HashMap<LLVMValueRef, (Vec<LLVMValueRef>, EntryCheck)>,
    /// Lanes over which strides run: 32, or a row segment's `S`.
    run: i64,
    /// The largest `%tid.x/y/z`, `%laneid` and flat index of any lane of the block's warps
    /// (lanes past the block's end included), a bound on every `.shared` variable's address
    /// (an offset into the CTA's block, `llvm::cpu`), and the largest `%ntid`: the known
    /// block's under row segments, else the launch limits'.
    bounds: Option<([u64; 5], u64, [u32; 3])>,
    /// `%ntid` when the code runs only with one block (row segments, or a known aligned
    /// block: `Facts::for_block`).
    ntid: Option<[u32; 3]>,
    /// The host has AVX-512F, whose two-source lane permutation (`vpermi2d`) serves a
    /// window of 64 elements (`Access::Window`).
    window: bool,
    /// The host has BMI2 as well, whose bit deposit (`pdep`) spreads the running lanes' bits
    /// over a block store's elements (`Strides::window_stores`).
    window_store: bool,
}

/// The index in `Strides::counts` of the stores of one address in every lane.
pub const SAME_ADDRESS: usize = 4;

/// The index in `Strides::counts` of the global loads of unknown stride proven to read at
/// most two runs in each half-warp (`Strides::rows`; counted among the unknown ones).
pub const ROWS: usize = 6;

/// Lanes of a half-warp, the unit of the two-run loads (`Strides::rows`, `lanes.rs`).
pub const HALF: i64 = 16;

/// How deep `Strides::rows` looks into a pointer's computation.
const ROWS_DEPTH: u32 = 24;

/// A widening cast on the way of a two-run load (`Strides::rows`) whose narrow operand `x`
/// steps by `step` (a signed number of its `width`) within each piece: the cast is exact
/// there unless `x` crosses its type's limit between two lanes, which the load tests in
/// every lane before it (`lanes.rs`: no lane's `x` within `step` of the limit). `x` may be
/// the cast's result instead (`cast`), which has the same value: the test reads whichever
/// the load's block has.
#[derive(Clone, Copy, Debug)]
pub struct WrapTest {
    pub x: LLVMValueRef,
    pub step: i64,
    pub signed: bool,
    pub width: u32,
    /// The cast instruction, when there is one (a GEP extends its indices implicitly).
    cast: Option<LLVMValueRef>,
}

/// Whether the warp function has value `v` in block `bb`: not an instruction, or one of
/// `bb`, or one that `bb` uses (a value of another block has a slot only where it is used).
pub unsafe fn available(v: LLVMValueRef, bb: LLVMBasicBlockRef) -> bool {
    if !ir::is_instruction(v) || c::LLVMGetInstructionParent(v) == bb {
        return true;
    }
    let mut u = c::LLVMGetFirstUse(v);
    while !u.is_null() {
        let user = c::LLVMGetUser(u);
        if !c::LLVMIsAInstruction(user).is_null() && c::LLVMGetInstructionParent(user) == bb {
            return true;
        }
        u = c::LLVMGetNextUse(u);
    }
    false
}

/// The lanes where `k / r` changes, `k` lane-consecutive with aligned half-warps and `r` a
/// constant of at least `HALF`: `(k, r, signed division)`.
type Split = (LLVMValueRef, u64, bool);

/// How a value's lanes go within each half-warp (`Strides::piece`): lane `j` of a piece is
/// the piece's first lane plus `(j - first) × step` (modulo the value's width), the pieces
/// being the runs of lanes of one quotient of `split` (one piece without it).
#[derive(Clone, Debug)]
struct Piece {
    step: i64,
    split: Option<Split>,
    tests: Vec<WrapTest>,
    /// Whether the value tells the pieces apart: its second piece is not the first one's
    /// continued (a quotient or remainder of the split, and what adding values of no split
    /// or extending keeps of one, these being one-to-one).
    tells: bool,
    /// The values on the way that tell the pieces apart, and their steps (`Rows::witnesses`).
    witnesses: Vec<(LLVMValueRef, i64)>,
}

/// What `Strides::rows` proves of a load: its casts to test (`WrapTest`) and the values
/// `(v, step)` on its address's way that tell its pieces apart (a quotient of the split,
/// step 0, its remainder, step 1, or one of them plus values of no split, extended): within
/// a half, a lane is in the first lane's piece exactly when its `v` is the first lane's plus
/// `step` per lane between (a quotient steps by one at the row's end, a remainder by
/// `1 - r`, neither 0 modulo its width, nor after a one-to-one map).
pub struct Rows {
    pub tests: Vec<WrapTest>,
    pub witnesses: Vec<(LLVMValueRef, i64)>,
}

/// The index in `Strides::counts` of the `.shared` stores tested for a window.
pub const WINDOW_STORES: usize = 5;

/// The index in `Strides::counts` of the unknown accesses that are consecutive when their
/// loops' entry tests pass (`Strides::entry_tested`).
pub const ENTRY_TESTED: usize = 7;

/// The index in `Strides::counts` of the strided accesses (`Access::Strided`, checked or not).
pub const STRIDED: usize = 8;

/// The largest stride in bytes of an `Access::Strided` access: its one vector access spans 32
/// strides (1 KiB, 16 AVX-512 registers, at 32).
const STRIDED_MAX: u64 = 32;

const UNIFORM: Stride = Stride {
    step: 0,
    casts: 0,
    factor: 1,
    aligned: false,
};

/// More than any `.shared` variable's address (an offset into the CTA's block: the static
/// variables one after the other, aligned, then the dynamic ones, `llvm::cpu`).
unsafe fn shared_bound(cfg: &Cfg, td: llvm_sys::target::LLVMTargetDataRef) -> u64 {
    let Some(&bb) = cfg.blocks.first() else {
        return 0;
    };
    let m = c::LLVMGetGlobalParent(c::LLVMGetBasicBlockParent(bb));
    let mut total: u64 = 16;
    let mut g = c::LLVMGetFirstGlobal(m);
    while !g.is_null() {
        if c::LLVMGetPointerAddressSpace(c::LLVMTypeOf(g)) == super::lanes::SHARED_AS {
            let size = llvm_sys::target::LLVMABISizeOfType(td, c::LLVMGlobalGetValueType(g));
            let align = u64::from(c::LLVMGetAlignment(g)).max(16);
            total = total.saturating_add(size).saturating_add(align);
        }
        g = c::LLVMGetNextGlobal(g);
    }
    total
}

/// `v`'s low `bits` bits as a signed number.
fn signed_low(v: i64, bits: u32) -> i64 {
    if bits >= 64 {
        v
    } else {
        (v << (64 - bits)) >> (64 - bits)
    }
}

/// `q = a + b` as a signed 32-bit division `k / r` by a constant (`Strides::split`): `a` is
/// `t >> s` (or `t`) for `t = trunc((sext(k) × m) >> 32)` (a 64-bit product, arithmetic or
/// logical shift: its bits 32-63 either way), `b` is the sign bit of `t` or of `a` (`k < 0`,
/// as `m > 0`). Then `q = floor(k × m / 2^S) + (k < 0)`, `S = 32 + s`, which is `k / r`
/// rounded to zero for every 32-bit `k` when `e = m × r - 2^S` has `0 < e` and
/// `e × 2^31 < 2^S`: for `k >= 0`, `k × m / 2^S` is `k / r` plus less than `1 / r`; for
/// `k = -a < 0` it is `-(a / r)` minus more than 0 and less than `1 / r`, whose floor plus 1
/// is `-floor(a / r)`.
unsafe fn magic_quotient(a: LLVMValueRef, b: LLVMValueRef) -> Option<(LLVMValueRef, u64)> {
    let is = |v: LLVMValueRef, op: O| ir::is_instruction(v) && ir::opcode(v) == op;
    let konst = |v: LLVMValueRef| ir::const_u64(v);
    let i32t = |v: LLVMValueRef| {
        let t = c::LLVMTypeOf(v);
        c::LLVMGetTypeKind(t) == LLVMTypeKind::LLVMIntegerTypeKind
            && c::LLVMGetIntTypeWidth(t) == 32
    };
    if !i32t(a) {
        return None;
    }
    // `a`: `t >> s` or `t`.
    let (t, s) = if is(a, O::LLVMAShr) {
        (c::LLVMGetOperand(a, 0), konst(c::LLVMGetOperand(a, 1))?)
    } else {
        (a, 0)
    };
    if s >= 31 || !is(t, O::LLVMTrunc) || !i32t(t) {
        return None;
    }
    // `b`: the sign bit of `t` or of `a`.
    if !is(b, O::LLVMLShr) || konst(c::LLVMGetOperand(b, 1)) != Some(31) {
        return None;
    }
    let sign = c::LLVMGetOperand(b, 0);
    if sign != t && sign != a {
        return None;
    }
    let hi = c::LLVMGetOperand(t, 0);
    if !(is(hi, O::LLVMLShr) || is(hi, O::LLVMAShr)) || konst(c::LLVMGetOperand(hi, 1)) != Some(32)
    {
        return None;
    }
    let prod = c::LLVMGetOperand(hi, 0);
    if !is(prod, O::LLVMMul) || c::LLVMGetIntTypeWidth(c::LLVMTypeOf(prod)) != 64 {
        return None;
    }
    let (x, m) = const_factor(prod)?;
    if !is(x, O::LLVMSExt) || m == 0 || m >> 32 != 0 {
        return None;
    }
    let k = c::LLVMGetOperand(x, 0);
    if !i32t(k) {
        return None;
    }
    let big = 1u128 << (32 + s);
    let m = u128::from(m);
    let r = (big / m..=big / m + 1).find(|&r| {
        let e = m * r;
        e > big && (e - big) << 31 < big
    })?;
    Some((k, u64::try_from(r).ok()?))
}

/// Product `prod`'s other operand and its constant one (either side), if one is constant.
unsafe fn const_factor(prod: LLVMValueRef) -> Option<(LLVMValueRef, u64)> {
    let (a, b) = (c::LLVMGetOperand(prod, 0), c::LLVMGetOperand(prod, 1));
    match (ir::const_u64(b), ir::const_u64(a)) {
        (Some(m), _) => Some((a, m)),
        (None, Some(m)) => Some((b, m)),
        _ => None,
    }
}

/// `q` as an unsigned 32-bit division `k / r` by a constant (`Strides::split`): `q =
/// trunc((zext(k) × m) >> S)`, `S >= 32` (a logical shift), the form InstCombine leaves of
/// the signed one (`magic_quotient`) once `k` is known non-negative (a flat index,
/// `flatx.rs`). `q = floor(k × m / 2^S)` is `floor(k / r)` when `e = m × r - 2^S` has
/// `0 <= e` and `e × k < 2^S` for every `k` (below 2^31 for `zext nneg`, else 2^32): the
/// excess `k × e / (r × 2^S)` is then below `1 / r`.
unsafe fn unsigned_quotient(q: LLVMValueRef) -> Option<(LLVMValueRef, u64)> {
    let is = |v: LLVMValueRef, op: O| ir::is_instruction(v) && ir::opcode(v) == op;
    let width = |v: LLVMValueRef| {
        let t = c::LLVMTypeOf(v);
        (c::LLVMGetTypeKind(t) == LLVMTypeKind::LLVMIntegerTypeKind)
            .then(|| c::LLVMGetIntTypeWidth(t))
    };
    if !is(q, O::LLVMTrunc) || width(q) != Some(32) {
        return None;
    }
    let hi = c::LLVMGetOperand(q, 0);
    if !is(hi, O::LLVMLShr) || width(hi) != Some(64) {
        return None;
    }
    let s = ir::const_u64(c::LLVMGetOperand(hi, 1)).filter(|s| (32..64).contains(s))?;
    let prod = c::LLVMGetOperand(hi, 0);
    if !is(prod, O::LLVMMul) {
        return None;
    }
    let (x, m) = const_factor(prod)?;
    if !is(x, O::LLVMZExt) || m == 0 || m >> 32 != 0 {
        return None;
    }
    let k = c::LLVMGetOperand(x, 0);
    if width(k) != Some(32) {
        return None;
    }
    let kbits = if c::LLVMGetNNeg(x) != 0 { 31 } else { 32 };
    let big = 1u128 << s;
    let m = u128::from(m);
    let r = (big.div_ceil(m)..=big / m + 1).find(|&r| {
        let e = m * r;
        e >= big && (e - big) << kbits < big
    })?;
    Some((k, u64::try_from(r).ok()?))
}

/// The start that `Strides::low_zeros` and `low_ones` share: `Err` with the answer for a
/// value that is not an integer (0), a constant (`count` of its bits, at most its width), or
/// not an instruction or past `depth` (0); else `Ok` with its width and the depth left for
/// its operands.
unsafe fn low_bits_walk(
    v: LLVMValueRef,
    depth: u32,
    count: fn(u64) -> u32,
) -> Result<(u32, u32), u32> {
    let t = c::LLVMTypeOf(v);
    if c::LLVMGetTypeKind(t) != LLVMTypeKind::LLVMIntegerTypeKind {
        return Err(0);
    }
    let w = c::LLVMGetIntTypeWidth(t);
    if let Some(k) = ir::const_u64(v) {
        return Err(if w > 64 { 0 } else { count(k).min(w) });
    }
    match depth.checked_sub(1) {
        Some(depth) if ir::is_instruction(v) => Ok((w, depth)),
        _ => Err(0),
    }
}

impl Strides {
    /// # Safety
    /// `cfg` must describe a cleaned kernel function, `varying` be its varying values and
    /// `aligned` say whether they are those of the aligned-warp function; `td` its module's
    /// data layout.
    ///
    /// `segment`: row segments of that many lanes (`Facts::segment`), strides within rows.
    pub unsafe fn new(
        cfg: &Cfg,
        varying: &HashSet<LLVMValueRef>,
        aligned: bool,
        segment: Option<super::uniform::Segment>,
        block: Option<[u32; 3]>,
        td: llvm_sys::target::LLVMTargetDataRef,
    ) -> Strides {
        let mut s = Strides {
            run: segment.map_or(32, |g| i64::from(g.width)),
            ntid: segment.map(|g| g.block).or(block),
            bounds: Some(match (segment, block) {
                // The aligned warps of a known block (one dimension, or `%ntid.x` a
                // multiple of 32): a 1-D block's last warp pads `%tid.x` up to its end.
                (None, Some([x, y, z])) => {
                    let lanes = u64::from(x * y * z).div_ceil(32) * 32;
                    let tid = if y * z == 1 {
                        [lanes - 1, 0, 0, 31, lanes - 1]
                    } else {
                        [
                            u64::from(x) - 1,
                            u64::from(y) - 1,
                            u64::from(z) - 1,
                            31,
                            lanes - 1,
                        ]
                    };
                    (tid, shared_bound(cfg, td), [x, y, z])
                }
                _ => segment.map_or_else(
                    || {
                        // Any block: the launch limits (`runtime::abi`, checked by every launch)
                        // bound every lane's `%tid` and flat index by the largest block, padding
                        // lanes of its last warp included.
                        let most = u64::from(MAX_THREADS_PER_CTA) - 1;
                        (
                            [most, most, most, 31, most],
                            shared_bound(cfg, td),
                            [MAX_THREADS_PER_CTA; 3],
                        )
                    },
                    |g| {
                        let [x, y, z] = g.block.map(u64::from);
                        let lanes = (x * y * z).div_ceil(32) * 32;
                        let rows = lanes / x;
                        (
                            [x - 1, y - 1, (rows - 1) / y, 31, lanes - 1],
                            shared_bound(cfg, td),
                            g.block,
                        )
                    },
                ),
            }),
            window: crate::llvm::cpu::host_has("+avx512f"),
            window_store: crate::llvm::cpu::host_has("+avx512f")
                && crate::llvm::cpu::host_has("+bmi2"),
            ..Strides::default()
        };
        let insts: Vec<LLVMValueRef> = cfg
            .blocks
            .iter()
            .flat_map(|&b| ir::instructions(b))
            .collect();
        // A loop-header phi (one preheader, one latch: loop-simplify) is first assumed to step
        // like its value from the preheader; when its value from the latch turns out not to
        // step the same way, it is barred and everything is worked out again. A latch value
        // that steps the same but whose lane 0 is not known to be aligned (`%tid.x` plus a
        // `%ntid.x` the function loads: block loops `for (c = tid; c < n; c += blockDim.x)`)
        // only makes the phi unaligned.
        let none = HashMap::new();
        s.solve(cfg, &insts, varying, aligned, td, false, &none);
        s.whole = s
            .map
            .keys()
            .copied()
            .filter(|&i| ir::opcode(i) == O::LLVMPHI)
            .collect();
        // Accesses through pointers that differ between lanes (a varying value loaded at a
        // uniform pointer is a context field or a warp operation's predicate, not memory of the
        // kernel), and stores of varying values to one address.
        // The unknown accesses, for `likely_strided` below.
        let mut unknown: Vec<LLVMValueRef> = Vec::new();
        for &i in &insts {
            let Some((p, t)) = ir::access(i) else {
                continue;
            };
            if ir::opcode(i) == O::LLVMStore
                && s.plain(i)
                && varying.contains(&c::LLVMGetOperand(i, 0))
                && s.same_address(i, varying)
            {
                s.counts[SAME_ADDRESS] += 1;
            } else if varying.contains(&p) && s.plain(i) {
                match s.access(p, t, varying, td) {
                    // A store to one place per row is a scatter's (lanes in order).
                    Access::PerRow if ir::opcode(i) == O::LLVMStore => {
                        s.counts[Access::Unknown as usize] += 1
                    }
                    Access::PerRow => s.per_row += 1,
                    Access::Window if ir::opcode(i) == O::LLVMStore => {
                        s.counts[Access::Unknown as usize] += 1;
                        if s.window_store && c::LLVMGetVolatile(i) == 0 {
                            s.counts[WINDOW_STORES] += 1;
                        }
                    }
                    Access::Window => {
                        s.counts[Access::Unknown as usize] += 1;
                        s.counts[3] += 1;
                    }
                    Access::Strided | Access::StridedChecked => s.counts[STRIDED] += 1,
                    a => {
                        if a == Access::Unknown {
                            unknown.push(i);
                            if ir::opcode(i) == O::LLVMLoad
                                && c::LLVMGetPointerAddressSpace(c::LLVMTypeOf(p))
                                    != super::lanes::SHARED_AS
                                && s.rows(p, t, varying, td, c::LLVMGetInstructionParent(i))
                                    .is_some()
                            {
                                s.counts[ROWS] += 1;
                            }
                        }
                        s.counts[a as usize] += 1
                    }
                }
            }
        }
        if !unknown.is_empty() {
            let exact = std::mem::take(&mut s.map);
            s.solve(cfg, &insts, varying, aligned, td, true, &none);
            for &i in &unknown {
                let Some((p, t)) = ir::access(i) else {
                    continue;
                };
                if matches!(
                    s.access(p, t, varying, td),
                    Access::Consecutive | Access::Checked
                ) {
                    s.likely.insert(i);
                }
            }
            let joined = std::mem::take(&mut s.map);
            s.entry_tests(cfg, &insts, varying, aligned, td, &exact, &joined, &unknown);
            s.map = exact;
            s.whole.extend(s.entry.keys().copied());
            s.counts[ENTRY_TESTED] = s.entry_accesses.len();
        }
        s
    }

    /// The entry tests (`entry_tested`): a loop-header phi that the exact strides do not
    /// know but the join-following ones (`likely_strided`) do, an integer or a host pointer,
    /// is assumed to step by that stride in every lane, with no widening cast behind it (what
    /// its test at the loop's entry checks); the strides are worked out again with only that
    /// assumption, and an unknown access whose pointer is then consecutive or checked, built
    /// from such phis and from values whose strides the assumption did not change, is so
    /// whenever its phis' tests passed (nvcc's float4 grid-stride loops: `i32` index phis
    /// from the remainder's join, widened in the address). A phi whose value from the latch does not keep the
    /// assumed stride is barred, as in `solve`. Row segments: none (a test per row).
    #[allow(clippy::too_many_arguments)]
    unsafe fn entry_tests(
        &mut self,
        cfg: &Cfg,
        insts: &[LLVMValueRef],
        varying: &HashSet<LLVMValueRef>,
        aligned: bool,
        td: llvm_sys::target::LLVMTargetDataRef,
        exact: &HashMap<LLVMValueRef, Stride>,
        joined: &HashMap<LLVMValueRef, Stride>,
        unknown: &[LLVMValueRef],
    ) {
        if self.run != 32 {
            return;
        }
        let mut seeds: HashMap<LLVMValueRef, Stride> = HashMap::new();
        for &i in insts {
            // Join phis too: nvcc's unrolled block-stride loop addresses its elements from
            // the index that its remainder loop leaves (`i` or `i + k * 256`, a join phi of
            // the loop's exit and its bypass), invariant in the main loop.
            if ir::opcode(i) != O::LLVMPHI || !varying.contains(&i) || exact.contains_key(&i) {
                continue;
            }
            let t = c::LLVMTypeOf(i);
            let fits = match c::LLVMGetTypeKind(t) {
                LLVMTypeKind::LLVMIntegerTypeKind => c::LLVMGetIntTypeWidth(t) <= 64,
                LLVMTypeKind::LLVMPointerTypeKind => c::LLVMGetPointerAddressSpace(t) == 0,
                _ => false,
            };
            match joined.get(&i) {
                Some(st) if fits && st.step != 0 => {
                    seeds.insert(
                        i,
                        Stride {
                            step: st.step,
                            ..UNIFORM
                        },
                    );
                }
                _ => {}
            }
        }
        if seeds.is_empty() {
            return;
        }
        self.solve(cfg, insts, varying, aligned, td, false, &seeds);
        for &i in unknown {
            let Some((p, t)) = ir::access(i) else {
                continue;
            };
            // The map holds the strides under the tests' assumption here, which is what the
            // cast's narrow operand steps by when the tests passed.
            let check = match self.access(p, t, varying, td) {
                Access::Consecutive => EntryCheck::Nothing,
                Access::Checked => self
                    .wrap_cast(p, varying)
                    .map_or(EntryCheck::Lanes, EntryCheck::Cast),
                _ => continue,
            };
            if c::LLVMGetPointerAddressSpace(c::LLVMTypeOf(p)) == super::lanes::SHARED_AS {
                continue;
            }
            let mut phis = Vec::new();
            let mut seen = HashSet::new();
            if !self.entry_deps(p, varying, exact, &seeds, &mut phis, &mut seen) || phis.is_empty()
            {
                continue;
            }
            // A join phi is tested where the access's innermost loop is entered, which it
            // must then not be inside: it does not change while that loop runs.
            let at = cfg.loop_of[cfg.index[&c::LLVMGetInstructionParent(i)]];
            let joins: Vec<LLVMValueRef> = phis
                .iter()
                .copied()
                .filter(|&phi| self.header_phi(cfg, phi).is_none())
                .collect();
            let header = match at {
                Some(l) => cfg.blocks[cfg.loops[l].header],
                None if joins.is_empty() => std::ptr::null_mut(),
                None => continue,
            };
            if at.is_some_and(|l| {
                joins
                    .iter()
                    .any(|&j| cfg.loops[l].blocks[cfg.index[&c::LLVMGetInstructionParent(j)]])
            }) {
                continue;
            }
            for &phi in &phis {
                if joins.contains(&phi) {
                    self.entry_join.insert(phi, seeds[&phi].step);
                    let list = self.entry_at.entry(header).or_default();
                    if !list.contains(&phi) {
                        list.push(phi);
                    }
                } else {
                    self.entry.insert(phi, seeds[&phi].step);
                }
            }
            self.entry_accesses.insert(i, (phis, check));
        }
    }

    /// Whether the stride of `v` (in the map of the entry tests' solve) follows from entry
    /// tested phis (`seeds`, collected into `phis`) and from values whose exact stride it is.
    unsafe fn entry_deps(
        &self,
        v: LLVMValueRef,
        varying: &HashSet<LLVMValueRef>,
        exact: &HashMap<LLVMValueRef, Stride>,
        seeds: &HashMap<LLVMValueRef, Stride>,
        phis: &mut Vec<LLVMValueRef>,
        seen: &mut HashSet<LLVMValueRef>,
    ) -> bool {
        if !varying.contains(&v) || !seen.insert(v) {
            return true;
        }
        let Some(st) = self.map.get(&v) else {
            return false;
        };
        if exact.get(&v) == Some(st) {
            return true;
        }
        if seeds.contains_key(&v) {
            phis.push(v);
            return true;
        }
        ir::is_instruction(v)
            && ir::opcode(v) != O::LLVMPHI
            && ir::operands(v)
                .into_iter()
                .all(|o| self.entry_deps(o, varying, exact, seeds, phis, seen))
    }

    /// The loop-header phis access `i` reads its pointer through that are tested where their
    /// loops are entered, and whether it is checked then: `i` is one vector access when every
    /// test passed (the phi's lanes stepped by its stride then, and its value from the latch
    /// keeps the stride in every lane, `whole`) and, if checked (`EntryCheck`), its one
    /// widening cast did not wrap between lanes 0 and 31 (`Access::Checked`); the unknown
    /// access's way otherwise.
    pub fn entry_tested(&self, i: LLVMValueRef) -> Option<(&[LLVMValueRef], EntryCheck)> {
        self.entry_accesses
            .get(&i)
            .map(|(phis, check)| (phis.as_slice(), *check))
    }

    /// The lane step an entry-tested phi's test checks (`entry_tested`): a loop-header phi
    /// or a join phi (`entry_joins`).
    pub fn entry_step(&self, phi: LLVMValueRef) -> Option<i64> {
        self.entry.get(&phi).or(self.entry_join.get(&phi)).copied()
    }

    /// The lane step of an entry-tested loop-header phi (tested on its loop's entering
    /// edges, from its incoming value there).
    pub fn entry_header_step(&self, phi: LLVMValueRef) -> Option<i64> {
        self.entry.get(&phi).copied()
    }

    /// The join phis tested where the loop headed by `header` is entered (defined outside
    /// that loop, used by its entry-tested accesses).
    pub fn entry_joins(&self, header: LLVMBasicBlockRef) -> &[LLVMValueRef] {
        self.entry_at.get(&header).map_or(&[], |v| v.as_slice())
    }

    /// The strides of `insts` (the fixed point `new` describes), join phis followed when
    /// `joins` (`likely_strided`), the loop-header phis of `seeds` taking that stride instead
    /// of their preheader value's (`entry_tests`).
    #[allow(clippy::too_many_arguments)]
    unsafe fn solve(
        &mut self,
        cfg: &Cfg,
        insts: &[LLVMValueRef],
        varying: &HashSet<LLVMValueRef>,
        aligned: bool,
        td: llvm_sys::target::LLVMTargetDataRef,
        joins: bool,
        seeds: &HashMap<LLVMValueRef, Stride>,
    ) {
        let s = self;
        let mut barred: HashSet<LLVMValueRef> = HashSet::new();
        let mut unaligned: HashSet<LLVMValueRef> = HashSet::new();
        loop {
            s.map.clear();
            // Operands come before their users except through phis: a few passes reach the
            // fixed point whatever the block order.
            loop {
                let mut changed = false;
                for &i in insts {
                    if !varying.contains(&i) || s.map.contains_key(&i) {
                        continue;
                    }
                    let st = if ir::opcode(i) == O::LLVMPHI {
                        if joins && s.header_phi(cfg, i).is_none() {
                            s.join_phi(i, varying)
                        } else if barred.contains(&i) {
                            None
                        } else if let Some(&st) = seeds.get(&i) {
                            Some(st)
                        } else {
                            s.header_phi(cfg, i)
                                .and_then(|(pre, _)| s.of(pre, varying))
                                .map(|st| Stride {
                                    aligned: st.aligned && !unaligned.contains(&i),
                                    ..st
                                })
                        }
                    } else {
                        s.rule(i, varying, aligned, td)
                    };
                    if let Some(st) = st {
                        s.map.insert(i, st);
                        changed = true;
                    }
                }
                if !changed {
                    break;
                }
            }
            let mut again = false;
            for (&i, st) in &s.map {
                if ir::opcode(i) != O::LLVMPHI {
                    continue;
                }
                let Some((_, latch)) = s.header_phi(cfg, i) else {
                    continue;
                };
                let latch = s.of(latch, varying);
                match latch {
                    // An unaligned phi may take an aligned value.
                    Some(l)
                        if l == *st
                            || Stride {
                                aligned: false,
                                ..l
                            } == *st => {}
                    Some(l) if Stride { aligned: true, ..l } == *st => {
                        again |= unaligned.insert(i);
                    }
                    _ => again |= barred.insert(i),
                }
            }
            if !again {
                break;
            }
        }
    }

    /// A phi that is no loop header's whose incoming values all have one stride, that stride:
    /// exact where every lane came by the same edge, the common case of grid-stride loops
    /// whose remainder loop (`n % 4` iterations first, then four per iteration) joins the
    /// main one, where only a tail warp's lanes split.
    unsafe fn join_phi(&self, i: LLVMValueRef, varying: &HashSet<LLVMValueRef>) -> Option<Stride> {
        let mut st = None;
        for k in 0..c::LLVMCountIncoming(i) {
            let v = self.of(c::LLVMGetIncomingValue(i, k), varying)?;
            if st.is_some_and(|s| s != v) {
                return None;
            }
            st = Some(v);
        }
        st
    }

    /// Whether access `i` (an `Access::Unknown` one) would be consecutive or checked if join
    /// phis took their incoming values' common stride: its lanes' addresses then step by the
    /// access's size whenever the warp's lanes came the same way, and its run-time test
    /// (`lanes.rs`) nearly always finds a vector access. `mod::gathering_loops` does not
    /// count it as a gather.
    pub fn likely_strided(&self, i: LLVMValueRef) -> bool {
        self.likely.contains(&i)
    }

    /// The values a loop-header phi takes from the preheader and from the latch.
    unsafe fn header_phi(
        &self,
        cfg: &Cfg,
        i: LLVMValueRef,
    ) -> Option<(LLVMValueRef, LLVMValueRef)> {
        let b = cfg.index[&c::LLVMGetInstructionParent(i)];
        let l = cfg.loops.iter().find(|l| l.header == b)?;
        if c::LLVMCountIncoming(i) != 2 {
            return None;
        }
        let inside = |k: u32| l.blocks[cfg.index[&c::LLVMGetIncomingBlock(i, k)]];
        match (inside(0), inside(1)) {
            (false, true) => Some((c::LLVMGetIncomingValue(i, 0), c::LLVMGetIncomingValue(i, 1))),
            (true, false) => Some((c::LLVMGetIncomingValue(i, 1), c::LLVMGetIncomingValue(i, 0))),
            _ => None,
        }
    }

    /// Whether `phi` is a loop-header phi whose lanes step by a constant: the warp function
    /// gives all its lanes the incoming value on every edge, not just the edge's lanes (lanes
    /// outside the loop never read it again: values leave loops through exit phis, LCSSA),
    /// so that lane 0 is a base for the accesses it addresses even after lane 0 has left.
    pub fn whole(&self, phi: LLVMValueRef) -> bool {
        self.whole.contains(&phi)
    }

    /// Whether the host has AVX-512F's two-source lane permutation (`vpermi2d`), which
    /// `lanes.rs` uses for `.shared` windows and for partial consecutive `.shared` loads.
    pub fn permutes(&self) -> bool {
        self.window
    }

    /// Whether non-volatile `Access::Window` stores take the test for a whole-block store
    /// (`lanes.rs`, `store_block`).
    pub fn window_stores(&self) -> bool {
        self.window_store
    }

    unsafe fn plain(&self, i: LLVMValueRef) -> bool {
        c::LLVMGetOrdering(i) == llvm_sys::LLVMAtomicOrdering::LLVMAtomicOrderingNotAtomic
    }

    /// The stride of `v` (uniform values and constants: step 0), if known.
    pub unsafe fn of(&self, v: LLVMValueRef, varying: &HashSet<LLVMValueRef>) -> Option<Stride> {
        if varying.contains(&v) {
            self.map.get(&v).copied()
        } else {
            Some(UNIFORM)
        }
    }

    /// The one widening cast of a `Checked` pointer `p` (`Access::Checked`): its narrow
    /// operand `x`, whether the cast is signed, `x`'s lane step (a signed number of its
    /// width) and that width, when the way from `p` down to it goes through one operand that
    /// holds the cast at each step (no phi: its lanes may be older values). The run is then
    /// consecutive exactly when `x` does not cross its type's limit between a run's first and
    /// last lane, a compare of the first lane's `x` with a constant (`lanes.rs`): the
    /// difference of the two lanes' addresses took a sign extension of each and a subtraction
    /// per run (matmul's rows).
    pub unsafe fn wrap_cast(
        &self,
        p: LLVMValueRef,
        varying: &HashSet<LLVMValueRef>,
    ) -> Option<WrapCast> {
        let mut v = p;
        for _ in 0..64 {
            if self.of(v, varying)?.casts != 1 || !ir::is_instruction(v) {
                return None;
            }
            let op = ir::opcode(v);
            if matches!(op, O::LLVMSExt | O::LLVMZExt) {
                let x = c::LLVMGetOperand(v, 0);
                let sx = self.of(x, varying)?;
                if sx.casts == 0 {
                    let t = c::LLVMTypeOf(x);
                    if c::LLVMGetTypeKind(t) != LLVMTypeKind::LLVMIntegerTypeKind {
                        return None;
                    }
                    let w = c::LLVMGetIntTypeWidth(t);
                    return Some((x, op == O::LLVMSExt, signed_low(sx.step, w), w));
                }
                v = x;
                continue;
            }
            if !matches!(
                op,
                O::LLVMAdd
                    | O::LLVMSub
                    | O::LLVMMul
                    | O::LLVMShl
                    | O::LLVMGetElementPtr
                    | O::LLVMPtrToInt
                    | O::LLVMIntToPtr
                    | O::LLVMAddrSpaceCast
            ) {
                return None;
            }
            let mut held = ir::operands(v)
                .into_iter()
                .filter(|&u| self.of(u, varying).is_some_and(|s| s.casts > 0));
            v = held.next()?;
            if held.next().is_some() {
                return None;
            }
        }
        None
    }

    /// Whether store `i` (of a varying value) writes one address in every lane: its pointer
    /// is uniform, or steps by 0 from lane 0 with no widening cast on the way (32-lane
    /// strides: under row segments a step of 0 is one address per row). Every running lane
    /// writes the same place, and the last one in lane order is the one whose value stays (a
    /// scatter's order, and the thread order of the coroutine and thread-loop engines), so
    /// one scalar store of that lane's value does the work of a scatter (`lanes.rs`). A
    /// volatile store, or one of a PTX vector per lane, keeps the scatter.
    pub unsafe fn same_address(&self, i: LLVMValueRef, varying: &HashSet<LLVMValueRef>) -> bool {
        let p = c::LLVMGetOperand(i, 1);
        let t = c::LLVMTypeOf(c::LLVMGetOperand(i, 0));
        if c::LLVMGetVolatile(i) != 0 || c::LLVMGetTypeKind(t) == LLVMTypeKind::LLVMVectorTypeKind {
            return false;
        }
        if !varying.contains(&p) {
            return true;
        }
        self.run == 32
            && self
                .of(p, varying)
                .is_some_and(|st| st.step == 0 && st.casts == 0)
    }

    /// How a varying access of a value of type `t` at pointer `p` is emitted.
    pub unsafe fn access(
        &self,
        p: LLVMValueRef,
        t: LLVMTypeRef,
        varying: &HashSet<LLVMValueRef>,
        td: llvm_sys::target::LLVMTargetDataRef,
    ) -> Access {
        if !varying.contains(&p) {
            // A uniform pointer storing a varying value: every lane writes the same place.
            return Access::Unknown;
        }
        let Some(st) = self.of(p, varying) else {
            return self.window(p, t);
        };
        let (k, e) = if c::LLVMGetTypeKind(t) == LLVMTypeKind::LLVMVectorTypeKind {
            (c::LLVMGetVectorSize(t) as u64, c::LLVMGetElementType(t))
        } else {
            (1, t)
        };
        let size = llvm_sys::target::LLVMABISizeOfType(td, e);
        if st.step == 0 && st.casts == 0 && k == 1 {
            return Access::PerRow;
        }
        // Vectors of sub-byte elements are bit-packed in memory, unlike the lanes' values.
        if llvm_sys::target::LLVMSizeOfTypeInBits(td, e) != 8 * size {
            return self.window(p, t);
        }
        // Not `.shared`: its pair patterns (bitonic's `s[2 t]`, `s[2 t + 1]` at distance 1)
        // store under divergent masks, where masked pieces took 1.7x the time of the window
        // and table-blend stores.
        let strided = self.strided(st, t, td).is_some()
            && c::LLVMGetPointerAddressSpace(c::LLVMTypeOf(p)) != super::lanes::SHARED_AS;
        if st.step as u64 != k * size && !strided {
            return self.window(p, t);
        }
        // A clamp adds a cast: without one there is none to look for.
        let clamps = if st.casts == 0 {
            0
        } else {
            match self.clamps(p, varying) {
                Some(k) => k.len() as u32,
                None => return self.window(p, t),
            }
        };
        match (st.casts.checked_sub(clamps), strided) {
            (Some(0), false) if clamps == 0 => Access::Consecutive,
            (Some(0), true) if clamps == 0 => Access::Strided,
            (Some(0), false) => Access::Checked,
            (Some(0), true) => Access::StridedChecked,
            (Some(1), false) if st.factor <= MAX_FACTOR => Access::Checked,
            (Some(1), true) if st.factor <= MAX_FACTOR => Access::StridedChecked,
            _ => self.window(p, t),
        }
    }

    /// The elements between lanes (`n`) of an access of a scalar `t` whose pointer steps by
    /// `st` when it is `Access::Strided`: a positive step of `n` elements of 4 or 8 bytes, `n`
    /// from 2 to `STRIDED_MAX` bytes, over a whole warp (not row segments).
    pub unsafe fn strided(
        &self,
        st: Stride,
        t: LLVMTypeRef,
        td: llvm_sys::target::LLVMTargetDataRef,
    ) -> Option<u32> {
        let kind = c::LLVMGetTypeKind(t);
        if self.run != 32
            || st.step <= 0
            || !matches!(
                kind,
                LLVMTypeKind::LLVMIntegerTypeKind
                    | LLVMTypeKind::LLVMFloatTypeKind
                    | LLVMTypeKind::LLVMDoubleTypeKind
                    | LLVMTypeKind::LLVMPointerTypeKind
            )
        {
            return None;
        }
        let size = llvm_sys::target::LLVMABISizeOfType(td, t);
        let step = st.step as u64;
        (matches!(size, 4 | 8)
            && llvm_sys::target::LLVMSizeOfTypeInBits(td, t) == 8 * size
            && step.is_multiple_of(size)
            && step > size
            && step <= STRIDED_MAX)
            .then_some((step / size) as u32)
    }

    /// The clamps (`Clamp`) whose step pointer `p` takes: calls of `llvm.smax/smin/umax/
    /// umin` on the way from `p` through the operations whose strides the map holds; `None`
    /// when one lies behind a phi (its value where the access runs is not at hand there: the
    /// access is not tested as checked).
    pub unsafe fn clamps(
        &self,
        p: LLVMValueRef,
        varying: &HashSet<LLVMValueRef>,
    ) -> Option<Vec<Clamp>> {
        let mut out = Vec::new();
        let mut stack = vec![(p, 0u32, false)];
        let mut seen = HashSet::new();
        while let Some((v, depth, behind)) = stack.pop() {
            if depth > 24 || !varying.contains(&v) || !seen.insert(v) {
                continue;
            }
            if !self.map.contains_key(&v) || !ir::is_instruction(v) {
                continue;
            }
            let behind = behind || ir::opcode(v) == O::LLVMPHI;
            if let Some((max, signed)) = clamp_of(v) {
                if behind {
                    return None;
                }
                let (a, b) = (c::LLVMGetOperand(v, 0), c::LLVMGetOperand(v, 1));
                let (x, bound) = if varying.contains(&a) && self.of(b, varying) == Some(UNIFORM) {
                    (a, b)
                } else {
                    (b, a)
                };
                if let Some(st) = self.of(x, varying).filter(|s| s.step != 0) {
                    out.push(Clamp {
                        x,
                        bound,
                        max,
                        signed,
                        rising: st.step > 0,
                    });
                }
                // A clamp of a clamp: both tested.
                stack.push((x, depth + 1, false));
                continue;
            }
            for o in ir::operands(v) {
                stack.push((o, depth + 1, behind));
            }
        }
        Some(out)
    }

    /// Whether a load of a `t` at varying pointer `p` of unknown stride reads at most two
    /// runs of consecutive elements in each half-warp, and the casts to test at run time for
    /// it (`WrapTest`). The pointer must step by the element size in each piece of a split
    /// `k / r` (`Split`): a tile row `r` elements wide at a row pitch of its own, as a halo
    /// tile's load `in[(y0 + k / 18) * w + x0 + k % 18]`. A half-warp's 16 consecutive `k`
    /// (aligned: no wrap between them) cross at most one multiple of `r >= 16` (a signed
    /// quotient's pieces around zero are longer, `2r - 1`), so its lanes are the run from
    /// its first lane's pointer and the run ending at its last lane's, in every lane, the
    /// masked-off ones too (pure arithmetic on a header phi that keeps all its lanes,
    /// `whole`): `lanes.rs` loads the two runs without testing the lanes' addresses.
    ///
    /// `bb` is the load's block: the wrap tests and the witnesses are values it has
    /// (`available`), the tests else the load is not one of these.
    pub unsafe fn rows(
        &self,
        p: LLVMValueRef,
        t: LLVMTypeRef,
        varying: &HashSet<LLVMValueRef>,
        td: llvm_sys::target::LLVMTargetDataRef,
        bb: LLVMBasicBlockRef,
    ) -> Option<Rows> {
        if self.run < HALF || c::LLVMGetTypeKind(t) == LLVMTypeKind::LLVMVectorTypeKind {
            return None;
        }
        let size = llvm_sys::target::LLVMABISizeOfType(td, t);
        let bits = llvm_sys::target::LLVMSizeOfTypeInBits(td, t);
        if bits != 8 * size || bits < 32 {
            return None;
        }
        let pc = self.piece(p, varying, td, ROWS_DEPTH)?;
        if pc.split.is_none() || pc.step != size as i64 {
            return None;
        }
        let tests = pc
            .tests
            .into_iter()
            .map(|w| match w.cast {
                _ if available(w.x, bb) => Some(w),
                Some(cv) if available(cv, bb) => Some(WrapTest { x: cv, ..w }),
                _ => None,
            })
            .collect::<Option<Vec<_>>>()?;
        let witnesses = pc
            .witnesses
            .into_iter()
            .filter(|&(v, _)| available(v, bb))
            .collect();
        Some(Rows { tests, witnesses })
    }

    /// How `v`'s lanes go within each half-warp (`Piece`), if the rules know: strides
    /// without casts (one piece), a split quotient (`split`), a remainder by a constant,
    /// sums, constant multiples and casts of pieces of one split, and any integer operation
    /// on values constant in each piece.
    unsafe fn piece(
        &self,
        v: LLVMValueRef,
        varying: &HashSet<LLVMValueRef>,
        td: llvm_sys::target::LLVMTargetDataRef,
        depth: u32,
    ) -> Option<Piece> {
        let whole = |step: i64| {
            Some(Piece {
                step,
                split: None,
                tests: Vec::new(),
                tells: false,
                witnesses: Vec::new(),
            })
        };
        if !varying.contains(&v) {
            return whole(0);
        }
        if let Some(st) = self.map.get(&v).filter(|st| st.casts == 0) {
            return whole(st.step);
        }
        if !ir::is_instruction(v) {
            return None;
        }
        let depth = depth.checked_sub(1)?;
        let t = c::LLVMTypeOf(v);
        let w = match c::LLVMGetTypeKind(t) {
            LLVMTypeKind::LLVMIntegerTypeKind | LLVMTypeKind::LLVMPointerTypeKind => {
                self.width(t, td)
            }
            _ => return None,
        };
        if let Some(split) = self.split(v, varying) {
            return Some(Piece {
                step: 0,
                split: Some(split),
                tests: Vec::new(),
                tells: true,
                witnesses: vec![(v, 0)],
            });
        }
        let op = ir::opcode(v);
        let opnd = |k: u32| c::LLVMGetOperand(v, k);
        let sub = |k: u32| self.piece(opnd(k), varying, td, depth);
        let konst = |x: LLVMValueRef| {
            (!c::LLVMIsAConstantInt(x).is_null()).then(|| c::LLVMConstIntGetSExtValue(x))
        };
        // Two pieces of one split (or none) and the step of their combination.
        let join = |a: Piece, b: Piece, step: i64| -> Option<Piece> {
            let split = match (a.split, b.split) {
                (Some(x), Some(y)) if x != y => return None,
                (x, y) => x.or(y),
            };
            let mut tests = a.tests;
            tests.extend(b.tests);
            let mut witnesses = a.witnesses;
            witnesses.extend(b.witnesses);
            Some(Piece {
                step: signed_low(step, w),
                split,
                tests,
                tells: false,
                witnesses,
            })
        };
        let scaled = |a: Piece, f: i64| Piece {
            step: signed_low(a.step.wrapping_mul(f), w),
            ..a
        };
        // `v` itself among the values that tell the pieces apart, if it does.
        let told = |mut r: Piece| {
            if r.tells {
                r.witnesses.push((v, r.step));
            }
            Some(r)
        };
        match op {
            O::LLVMSRem | O::LLVMURem => {
                // `k - (k / r) * r`: the quotient is constant in each piece.
                let (k, r) = (opnd(0), ir::const_u64(opnd(1))?);
                let split = self.split_of(k, r, op == O::LLVMSRem, varying)?;
                Some(Piece {
                    step: 1,
                    split: Some(split),
                    tests: Vec::new(),
                    tells: true,
                    witnesses: vec![(v, 1)],
                })
            }
            O::LLVMAdd | O::LLVMSub | O::LLVMOr
                if op != O::LLVMOr || c::LLVMGetIsDisjoint(v) != 0 =>
            {
                let (a, b) = (sub(0)?, sub(1)?);
                let step = if op == O::LLVMSub {
                    a.step.wrapping_sub(b.step)
                } else {
                    a.step.wrapping_add(b.step)
                };
                // Plus or minus a value of no split: one-to-one on the split side.
                let tells = a.tells && b.split.is_none() || b.tells && a.split.is_none();
                let mut r = join(a, b, step)?;
                r.tells = tells;
                told(r)
            }
            O::LLVMMul if konst(opnd(1)).is_some() || konst(opnd(0)).is_some() => {
                let (k, x) = match konst(opnd(1)) {
                    Some(k) => (k, 0),
                    None => (konst(opnd(0))?, 1),
                };
                let a = sub(x)?;
                // An odd factor is one-to-one modulo 2^w.
                let tells = a.tells && k % 2 != 0;
                let mut r = scaled(a, k);
                r.tells = tells;
                told(r)
            }
            O::LLVMShl if konst(opnd(1)).is_some_and(|k| (0..i64::from(w)).contains(&k)) => {
                let k = konst(opnd(1))?;
                let mut r = scaled(sub(0)?, 1i64.wrapping_shl(k as u32));
                r.tells &= k == 0;
                told(r)
            }
            op if ir::int_binop(op) => {
                // Any other operation of values constant in each piece is one too (shifts by
                // less than the width: no poison in any lane).
                if matches!(op, O::LLVMShl | O::LLVMLShr | O::LLVMAShr)
                    && !konst(opnd(1)).is_some_and(|k| (0..i64::from(w)).contains(&k))
                {
                    return None;
                }
                let (a, b) = (sub(0)?, sub(1)?);
                (a.step == 0 && b.step == 0).then_some(())?;
                join(a, b, 0)
            }
            O::LLVMZExt | O::LLVMSExt => {
                told(self.piece_cast(sub(0)?, opnd(0), Some(v), op == O::LLVMSExt, td)?)
            }
            O::LLVMTrunc
            | O::LLVMFreeze
            | O::LLVMPtrToInt
            | O::LLVMIntToPtr
            | O::LLVMAddrSpaceCast
            | O::LLVMBitCast => {
                let ot = c::LLVMTypeOf(opnd(0));
                let from = match c::LLVMGetTypeKind(ot) {
                    LLVMTypeKind::LLVMIntegerTypeKind | LLVMTypeKind::LLVMPointerTypeKind => {
                        self.width(ot, td)
                    }
                    _ => return None,
                };
                let a = sub(0)?;
                if w > from {
                    // `inttoptr`/`ptrtoint` to a wider type extends with zeros.
                    return told(self.piece_cast(a, opnd(0), Some(v), false, td)?);
                }
                let mut r = scaled(a, 1);
                r.tells &= w == from;
                told(r)
            }
            O::LLVMGetElementPtr => {
                let mut pc = sub(0)?;
                let mut ty = c::LLVMGetGEPSourceElementType(v);
                for k in 1..c::LLVMGetNumOperands(v) as u32 {
                    let idx = opnd(k);
                    let Some(elem) = gep_step(&mut ty, k, idx)? else {
                        continue;
                    };
                    let mut x = self.piece(idx, varying, td, depth)?;
                    // Indices narrower than the pointer are sign-extended.
                    if c::LLVMGetIntTypeWidth(c::LLVMTypeOf(idx)) < w {
                        x = self.piece_cast(x, idx, None, true, td)?;
                    }
                    let size = llvm_sys::target::LLVMABISizeOfType(td, elem);
                    let x = scaled(x, i64::try_from(size).ok()?);
                    let step = pc.step.wrapping_add(x.step);
                    pc = join(pc, x, step)?;
                }
                Some(pc)
            }
            _ => None,
        }
    }

    /// Piece `a` of narrow value `x` widened (sign- or zero-extended): a value constant in
    /// each piece stays so; a stepping one is exact within each piece where `x` does not
    /// cross its type's limit, known from its range (`below`) or tested (`WrapTest`).
    unsafe fn piece_cast(
        &self,
        a: Piece,
        x: LLVMValueRef,
        cast: Option<LLVMValueRef>,
        signed: bool,
        td: llvm_sys::target::LLVMTargetDataRef,
    ) -> Option<Piece> {
        let xt = c::LLVMTypeOf(x);
        if c::LLVMGetTypeKind(xt) != LLVMTypeKind::LLVMIntegerTypeKind {
            return None;
        }
        let width = c::LLVMGetIntTypeWidth(xt);
        if a.step == 0 || self.below(x, width - u32::from(signed), td) {
            return Some(a);
        }
        let mut a = a;
        a.tests.push(WrapTest {
            x,
            step: a.step,
            signed,
            width,
            cast,
        });
        Some(a)
    }

    /// The split of quotient `v` (`Split`): `sdiv`/`udiv` by a constant, or the multiply-high
    /// form a compiler gives a signed 32-bit division by a constant, `q = (hi(k × m) >> s) +
    /// (k < 0)` (`mul.hi.s32`, `shr.s32`, and the sign bit added: NVVM's `k / 18`), or its
    /// unsigned form (`unsigned_quotient`), whose divisor `r` is found from `m` and `s` and
    /// checked to give `k / r` for every `k`.
    unsafe fn split(&self, v: LLVMValueRef, varying: &HashSet<LLVMValueRef>) -> Option<Split> {
        let op = ir::opcode(v);
        let opnd = |k: u32| c::LLVMGetOperand(v, k);
        match op {
            O::LLVMSDiv | O::LLVMUDiv => {
                self.split_of(opnd(0), ir::const_u64(opnd(1))?, op == O::LLVMSDiv, varying)
            }
            O::LLVMAdd => {
                let (k, r) = magic_quotient(opnd(0), opnd(1))
                    .or_else(|| magic_quotient(opnd(1), opnd(0)))?;
                self.split_of(k, r, true, varying)
            }
            O::LLVMTrunc => {
                let (k, r) = unsigned_quotient(v)?;
                self.split_of(k, r, false, varying)
            }
            _ => None,
        }
    }

    /// `Split` `(k, r, signed)` when `k` steps by 1 in every half-warp from an aligned lane
    /// (no wrap inside one) and `r >= HALF` (a signed divisor also below the sign bit).
    unsafe fn split_of(
        &self,
        k: LLVMValueRef,
        r: u64,
        signed: bool,
        varying: &HashSet<LLVMValueRef>,
    ) -> Option<Split> {
        let st = self.map.get(&k).filter(|_| varying.contains(&k))?;
        let w = c::LLVMGetIntTypeWidth(c::LLVMTypeOf(k));
        let fits = w <= 64 && (w == 64 || r >> (w - u32::from(signed)) == 0);
        (st.step == 1 && st.casts == 0 && st.aligned && r >= HALF as u64 && fits)
            .then_some((k, r, signed))
    }

    /// `Access::Window` for a `.shared` pointer `p` to 32-bit integers or floats on a host
    /// with AVX-512F, else `Access::Unknown`.
    unsafe fn window(&self, p: LLVMValueRef, t: LLVMTypeRef) -> Access {
        let kind = c::LLVMGetTypeKind(t);
        let scalar = kind == LLVMTypeKind::LLVMFloatTypeKind
            || kind == LLVMTypeKind::LLVMIntegerTypeKind && c::LLVMGetIntTypeWidth(t) == 32;
        if self.window
            && scalar
            && c::LLVMGetPointerAddressSpace(c::LLVMTypeOf(p)) == super::lanes::SHARED_AS
        {
            Access::Window
        } else {
            Access::Unknown
        }
    }

    /// The stride of varying instruction `i` from its operands', if it follows.
    unsafe fn rule(
        &self,
        i: LLVMValueRef,
        varying: &HashSet<LLVMValueRef>,
        aligned: bool,
        td: llvm_sys::target::LLVMTargetDataRef,
    ) -> Option<Stride> {
        let op = ir::opcode(i);
        let run = self.run;
        let opnd = |k: u32| c::LLVMGetOperand(i, k);
        let of = |k: u32| self.of(opnd(k), varying);
        let of_v = |v: LLVMValueRef| self.of(v, varying);
        let konst = |v: LLVMValueRef| {
            if c::LLVMIsAConstantInt(v).is_null() {
                None
            } else {
                Some(c::LLVMConstIntGetSExtValue(v))
            }
        };
        let scaled = |s: Stride, f: i64| -> Option<Stride> {
            let factor = if s.casts > 0 {
                s.factor.checked_mul(f.checked_abs()?)?
            } else {
                1
            };
            Some(Stride {
                step: s.step.checked_mul(f)?,
                casts: s.casts,
                factor,
                aligned: s.aligned && f > 0 && (f as u64).is_power_of_two(),
            })
        };
        let sum = |a: Stride, b: Stride, sign: i64| -> Option<Stride> {
            Some(Stride {
                step: a.step.checked_add(b.step.checked_mul(sign)?)?,
                casts: a.casts + b.casts,
                factor: a.factor.max(b.factor),
                aligned: false,
            })
        };
        // Values the same in every lane of a row (the whole warp without row segments: a
        // load through a pointer the same in every lane, `idx[t / 64]`).
        if self.per_row(i, op, varying) {
            return Some(UNIFORM);
        }
        match op {
            O::LLVMLoad => {
                let field = ir::ctx_offset(td, opnd(0)).map(CtxField::at)?;
                let seed = match field {
                    CtxField::LaneId | CtxField::FlatTid => true,
                    CtxField::Tid(0) => aligned || run < 32,
                    // One `%tid.y`/`%tid.z` per row.
                    CtxField::Tid(_) if run < 32 => return Some(UNIFORM),
                    _ => false,
                };
                // The warp function builds these as `<first lane> + <0, 1, …, 31>` (i32,
                // zero-extended to wider loads: no wrap below 2^32 threads); row segments'
                // `%tid.x` as `<0, 1, …, S-1>` in every row.
                seed.then_some(Stride {
                    step: 1,
                    casts: 0,
                    factor: 1,
                    aligned: true,
                })
            }
            // `or disjoint` is an addition (InstCombine's form of `s + 4 * (t + k)` under a
            // dominating `t < k`); the warp function emits it as one (`vector_inst`), so the
            // sum holds in lanes outside the mask as well.
            O::LLVMAdd | O::LLVMSub | O::LLVMOr
                if op != O::LLVMOr || c::LLVMGetIsDisjoint(i) != 0 =>
            {
                let (a, b) = (of(0)?, of(1)?);
                let sign = if op == O::LLVMSub { -1 } else { 1 };
                let mut r = sum(a, b, sign)?;
                // Aligned plus a multiple of its block stays aligned: a constant, or a
                // uniform value with as many low zero bits (`%ctaid.x * 256 + %tid.x`).
                let keeps = |x: Stride, y: Stride, k: LLVMValueRef| {
                    x.aligned
                        && match konst(k) {
                            Some(k) => k % (run * x.step) == 0,
                            None => {
                                y == UNIFORM
                                    && (run * x.step) as u64 > 0
                                    && ((run * x.step) as u64).is_power_of_two()
                                    && self.low_zeros(k, td, 8)
                                        >= ((run * x.step) as u64).trailing_zeros()
                            }
                        }
                };
                r.aligned = keeps(a, b, opnd(1)) || op != O::LLVMSub && keeps(b, a, opnd(0));
                Some(r)
            }
            O::LLVMMul => {
                if let Some(k) = konst(opnd(1)) {
                    scaled(of(0)?, k)
                } else {
                    scaled(of(1)?, konst(opnd(0))?)
                }
            }
            O::LLVMAnd if konst(opnd(1)).is_none() => {
                // `x & m` of an aligned `x` and a uniform `m` (`version::widen`'s
                // `t & (j - 1)` for `j & 31 == 0`): lane `l` of `x` is lane 0's (a multiple of
                // `run × step`, whose bits below that are zero) with bits
                // `[log2 step, log2 (run × step))` set to `l`; if `m` has all those bits set,
                // the lanes keep them and `m` acts on lane 0's alone, which stays such a
                // multiple.
                let (x, m) = match (of(0)?, of(1)?) {
                    (x, UNIFORM) if x != UNIFORM => (x, opnd(1)),
                    (UNIFORM, x) => (x, opnd(0)),
                    _ => return None,
                };
                let block = run.checked_mul(x.step)?;
                if !x.aligned || x.casts > 0 || block <= 0 || !(block as u64).is_power_of_two() {
                    return None;
                }
                let bits = (block as u64).trailing_zeros();
                (self.low_ones(m, td, 8) >= bits).then_some(x)
            }
            O::LLVMAnd => {
                // `x & (2^w - 1)`: the zero extension of `x`'s low `w` bits (what `cvt.u16`
                // and the like become).
                let k = konst(opnd(1))?;
                let w = 64 - (k as u64).leading_zeros();
                if k > 0 && (k as u64).count_ones() == w {
                    return self.widen(of(0)?, w, false);
                }

                // `(x >> s) & m` of an aligned `x`: `x` is lane 0's value with the lanes'
                // offsets in its bits below `run × step` (no carry), so `x >> s` is lane 0's
                // shifted with theirs in its bits below `run × step >> s`; a mask that
                // clears those leaves lane 0's alone (InstCombine's `(t >> 4) & ~3` for
                // `4 * (t / 64)`).
                let a = opnd(0);
                if ir::is_instruction(a)
                    && matches!(ir::opcode(a), O::LLVMLShr | O::LLVMAShr)
                    && varying.contains(&a)
                {
                    if let (Some(s), Some(x)) = (
                        konst(c::LLVMGetOperand(a, 1)),
                        of_v(c::LLVMGetOperand(a, 0)),
                    ) {
                        let block = run.checked_mul(x.step)?;
                        if x.aligned
                            && x.casts == 0
                            && block > 0
                            && (block as u64).is_power_of_two()
                            && (0..64).contains(&s)
                        {
                            let bits = (block as u64).trailing_zeros().saturating_sub(s as u32);
                            let low = if bits >= 64 {
                                u64::MAX
                            } else {
                                (1u64 << bits) - 1
                            };
                            if (k as u64) & low == 0 {
                                return Some(UNIFORM);
                            }
                        }
                    }
                }
                // A mask that keeps the bits in which an aligned `x`'s lanes differ (those of
                // `[step, run × step)`; InstCombine's `(t << 2) & 252` for `4 * (t % 64)`):
                // as the uniform mask above, it acts on lane 0's value alone; one that clears
                // all of them leaves lane 0's (`t & -64`).
                let x = of(0)?;
                // `x & ((2^v - 1) << s)` of an `x` whose lanes share their low `s` bits (a
                // step that is a multiple of `2^s`): `x`'s low `v + s` bits less those `s`
                // bits, one value in every lane (InstCombine's `4 * (u16)(3 * i)`,
                // `(12 i) & 262140`); when the aligned rules below know nothing, and the
                // kept bits span 32 warps or more, so that the cast's test rarely fails (a
                // few lanes' bits, Triton's `(4 t) & 12`, are a window's or a permutation's).
                let shifted = || {
                    let s = (k as u64).trailing_zeros();
                    (k > 0
                        && s > 0
                        && (k as u64).count_ones() == w - s
                        && x.step % (1i64 << s) == 0
                        && (x.step.unsigned_abs() << 10) <= 1u64 << w.min(63))
                    .then(|| self.widen(x, w, false))
                    .flatten()
                };
                let block = run.checked_mul(x.step)?;
                if !x.aligned
                    || x.casts > 0
                    || x.step <= 0
                    || !(x.step as u64).is_power_of_two()
                    || block <= 0
                    || !(block as u64).is_power_of_two()
                {
                    return shifted();
                }
                let lanes = (block as u64 - 1) & !(x.step as u64 - 1);
                if (k as u64) & lanes == 0 {
                    return Some(UNIFORM);
                }
                if (k as u64) & lanes == lanes {
                    return Some(x);
                }
                shifted()
            }
            O::LLVMShl => {
                let k = konst(opnd(1))?;
                if !(0..62).contains(&k) {
                    return None;
                }
                scaled(of(0)?, 1 << k)
            }
            // A right shift of an aligned value: its lanes lie in one block of `run × step`
            // (lane 0 a multiple of it, the lanes' offsets below it, so no carry leaves the
            // block's bits), so a shift by at least the block's bits leaves lane 0's high
            // bits, the same in every lane (`t / 64` of a flat index: the row of an
            // embedding gather); a shift by fewer that divides the step is exact in every
            // lane. Arithmetic or logical alike: the sign bit is a high bit.
            O::LLVMLShr | O::LLVMAShr => {
                let k = konst(opnd(1))?;
                let w = c::LLVMGetIntTypeWidth(c::LLVMTypeOf(i));
                if !(0..i64::from(w)).contains(&k) {
                    return None;
                }
                let x = of(0)?;
                if x == UNIFORM {
                    return Some(UNIFORM);
                }
                let block = run.checked_mul(x.step)?;
                if !x.aligned || x.casts > 0 || block <= 0 || !(block as u64).is_power_of_two() {
                    return None;
                }
                if k >= 62 || (1i64 << k) >= block {
                    Some(UNIFORM)
                } else if x.step % (1i64 << k) == 0 {
                    Some(Stride {
                        step: x.step >> k,
                        ..x
                    })
                } else {
                    None
                }
            }
            O::LLVMTrunc
            | O::LLVMFreeze
            | O::LLVMPtrToInt
            | O::LLVMIntToPtr
            | O::LLVMAddrSpaceCast
            | O::LLVMBitCast => {
                let t = c::LLVMTypeOf(i);
                let kind = c::LLVMGetTypeKind(t);
                if kind != LLVMTypeKind::LLVMIntegerTypeKind
                    && kind != LLVMTypeKind::LLVMPointerTypeKind
                {
                    return None;
                }
                if op == O::LLVMIntToPtr || op == O::LLVMPtrToInt {
                    // A narrower destination truncates (fine); a wider one extends.
                    let w_from = self.width(c::LLVMTypeOf(opnd(0)), td);
                    if self.width(t, td) > w_from && !self.below(opnd(0), w_from, td) {
                        return self.widen(of(0)?, w_from, false);
                    }
                }
                let mut r = of(0)?;
                let w = self.width(t, td);
                // Truncation keeps lane 0 a multiple of a block that divides 2^w.
                r.aligned &= w >= 64 || r.step.checked_mul(run).is_some_and(|b| b <= 1 << w);
                Some(r)
            }
            O::LLVMZExt | O::LLVMSExt => {
                let w = c::LLVMGetIntTypeWidth(c::LLVMTypeOf(opnd(0)));
                if self.below(opnd(0), w - u32::from(op == O::LLVMSExt), td) {
                    return of(0);
                }
                self.widen(of(0)?, w, op == O::LLVMSExt)
            }
            // A clamp of a stepping value by a uniform bound (`min(max(x + dx, 0), w - 1)`,
            // clamp-to-edge indexing): `x` in every lane where no lane is clamped, which an
            // access's run-time test checks (`Clamp`, `lanes.rs` `checked_test`); counted as
            // a cast, so that only such tested accesses take the step.
            O::LLVMCall if clamp_of(i).is_some() && run == 32 => {
                let (a, b) = (opnd(0), opnd(1));
                match (of(0)?, of(1)?) {
                    (UNIFORM, UNIFORM) => Some(UNIFORM),
                    // Exact, or itself a clamp's (`min(max(..))`: tested together).
                    (x, UNIFORM) | (UNIFORM, x)
                        if x.step != 0
                            && (x.casts == 0
                                || x.casts == 1
                                    && [a, b].iter().any(|&o| {
                                        ir::is_instruction(o) && clamp_of(o).is_some()
                                    })) =>
                    {
                        Some(Stride {
                            step: x.step,
                            casts: x.casts + 1,
                            factor: 1,
                            aligned: false,
                        })
                    }
                    _ => None,
                }
            }
            O::LLVMGetElementPtr => {
                let mut st = of(0)?;
                let pw = self.width(c::LLVMTypeOf(i), td);
                let mut ty = c::LLVMGetGEPSourceElementType(i);
                let n = c::LLVMGetNumOperands(i) as u32;
                for k in 1..n {
                    let idx = opnd(k);
                    let Some(elem) = gep_step(&mut ty, k, idx)? else {
                        continue;
                    };
                    let mut s = self.of(idx, varying)?;
                    if s.step == 0 && s.casts == 0 {
                        continue;
                    }
                    // Indices narrower than the pointer are sign-extended.
                    let iw = c::LLVMGetIntTypeWidth(c::LLVMTypeOf(idx));
                    if iw < pw && !self.below(idx, iw - 1, td) {
                        s = self.widen(s, iw, true)?;
                    }
                    let size = llvm_sys::target::LLVMABISizeOfType(td, elem);
                    st = sum(st, scaled(s, i64::try_from(size).ok()?)?, 1)?;
                }
                Some(st)
            }
            _ => None,
        }
    }

    /// Row segments: whether varying instruction `i` has one value per row because its
    /// operands do (integer arithmetic, comparisons and selects on `%tid.y`, `%ntid.x`, … —
    /// the constant-step rules need constants), or it loads a scalar from one address per row.
    unsafe fn per_row(&self, i: LLVMValueRef, op: O, varying: &HashSet<LLVMValueRef>) -> bool {
        let row = |v: LLVMValueRef| self.of(v, varying) == Some(UNIFORM);
        match op {
            O::LLVMLoad => {
                let t = c::LLVMTypeOf(i);
                self.plain(i)
                    && c::LLVMGetTypeKind(t) != LLVMTypeKind::LLVMVectorTypeKind
                    && c::LLVMGetTypeKind(t) != LLVMTypeKind::LLVMStructTypeKind
                    && varying.contains(&c::LLVMGetOperand(i, 0))
                    && row(c::LLVMGetOperand(i, 0))
            }
            op if ir::int_arith_or_cast(op)
                || ir::int_div_rem(op)
                || matches!(op, O::LLVMICmp | O::LLVMSelect | O::LLVMFreeze) =>
            {
                ir::operands(i).into_iter().all(row)
            }
            _ => false,
        }
    }

    /// How many low bits of integer `v` are known to be zero in every lane (a scalar's, for
    /// uniform values): constants, a known block's `%ntid`, shifts left and products by
    /// them, and sums, differences and bitwise combinations of such values; `depth` limits
    /// the search.
    unsafe fn low_zeros(
        &self,
        v: LLVMValueRef,
        td: llvm_sys::target::LLVMTargetDataRef,
        depth: u32,
    ) -> u32 {
        let (w, depth) = match low_bits_walk(v, depth, u64::trailing_zeros) {
            Ok(walk) => walk,
            Err(known) => return known,
        };
        let opnd = |k: u32| self.low_zeros(c::LLVMGetOperand(v, k), td, depth);
        let z = match ir::opcode(v) {
            O::LLVMShl => match ir::const_u64(c::LLVMGetOperand(v, 1)) {
                Some(k) if k < u64::from(w) => opnd(0).saturating_add(k as u32),
                _ => 0,
            },
            O::LLVMMul => opnd(0).saturating_add(opnd(1)),
            O::LLVMAdd | O::LLVMSub | O::LLVMOr | O::LLVMXor => opnd(0).min(opnd(1)),
            O::LLVMAnd => opnd(0).max(opnd(1)),
            O::LLVMSelect => opnd(1).min(opnd(2)),
            O::LLVMZExt | O::LLVMSExt | O::LLVMTrunc | O::LLVMFreeze => opnd(0),
            O::LLVMLoad => {
                let k = ir::ctx_offset(td, c::LLVMGetOperand(v, 0))
                    .and_then(|off| off.checked_sub(crate::runtime::abi::offset::NTID))
                    .filter(|&k| k % 4 == 0);
                match (k, self.ntid) {
                    (Some(k), Some(ntid)) if k < 12 => ntid[k as usize / 4].trailing_zeros(),
                    _ => 0,
                }
            }
            _ => 0,
        };
        z.min(w)
    }

    /// How many low bits of `v` are known to be ones in every lane (`j - 1` of a `j` with
    /// `low_zeros`, `m | 31`); `depth` limits the search.
    unsafe fn low_ones(
        &self,
        v: LLVMValueRef,
        td: llvm_sys::target::LLVMTargetDataRef,
        depth: u32,
    ) -> u32 {
        let (w, depth) = match low_bits_walk(v, depth, u64::trailing_ones) {
            Ok(walk) => walk,
            Err(known) => return known,
        };
        let opnd = |k: u32| c::LLVMGetOperand(v, k);
        let all = |x: LLVMValueRef| w <= 64 && ir::const_u64(x) == Some(u64::MAX >> (64 - w));
        let z = match ir::opcode(v) {
            // `y - 1` and `!y`: `y`'s low zeros turn into ones (no borrow out of them).
            O::LLVMAdd if all(opnd(1)) => self.low_zeros(opnd(0), td, depth),
            O::LLVMXor if all(opnd(1)) => self.low_zeros(opnd(0), td, depth),
            O::LLVMOr => self
                .low_ones(opnd(0), td, depth)
                .max(self.low_ones(opnd(1), td, depth)),
            O::LLVMAnd => self
                .low_ones(opnd(0), td, depth)
                .min(self.low_ones(opnd(1), td, depth)),
            O::LLVMFreeze | O::LLVMTrunc => self.low_ones(opnd(0), td, depth),
            _ => 0,
        };
        z.min(w)
    }

    /// Whether `v` is below `2^bits` in every lane (`max_of`).
    unsafe fn below(
        &self,
        v: LLVMValueRef,
        bits: u32,
        td: llvm_sys::target::LLVMTargetDataRef,
    ) -> bool {
        self.bounds.is_some() && self.max_of(v, td, 12).is_some_and(|m| m >> bits == 0)
    }

    /// The largest value `v` holds in any lane as an unsigned number, when it is built without
    /// wrapping from constants, `.shared` addresses and a known block's `%tid` (row segments'
    /// `bounds`) by the operations below; `depth` limits the search.
    unsafe fn max_of(
        &self,
        v: LLVMValueRef,
        td: llvm_sys::target::LLVMTargetDataRef,
        depth: u32,
    ) -> Option<u128> {
        let (tid, shared, ntid) = self.bounds?;
        let depth = depth.checked_sub(1)?;
        let t = c::LLVMTypeOf(v);
        let w = match c::LLVMGetTypeKind(t) {
            LLVMTypeKind::LLVMIntegerTypeKind | LLVMTypeKind::LLVMPointerTypeKind => {
                self.width(t, td)
            }
            _ => return None,
        };
        let fits = |m: u128| (w >= 128 || m >> w == 0).then_some(m);
        if !c::LLVMIsAConstantInt(v).is_null() {
            return fits(u128::from(c::LLVMConstIntGetZExtValue(v)));
        }
        if !c::LLVMIsAGlobalValue(v).is_null() {
            return (c::LLVMGetPointerAddressSpace(t) == super::lanes::SHARED_AS)
                .then_some(u128::from(shared));
        }
        let op = if !c::LLVMIsAConstantExpr(v).is_null() {
            c::LLVMGetConstOpcode(v)
        } else if ir::is_instruction(v) {
            ir::opcode(v)
        } else {
            return None;
        };
        let opnd = |k: u32| self.max_of(c::LLVMGetOperand(v, k), td, depth);
        let konst = |k: u32| ir::const_u64(c::LLVMGetOperand(v, k)).map(u128::from);
        let m = match op {
            O::LLVMLoad => match ir::ctx_offset(td, c::LLVMGetOperand(v, 0)).map(CtxField::at)? {
                CtxField::Tid(k) => tid[k as usize],
                CtxField::LaneId => tid[3],
                CtxField::FlatTid => tid[4],
                CtxField::Uniform(off) => {
                    let k = off.checked_sub(crate::runtime::abi::offset::NTID)?;
                    u64::from(*ntid.get(k as usize / 4).filter(|_| k % 4 == 0)?)
                }
            }
            .into(),
            O::LLVMAdd | O::LLVMOr => opnd(0)?.checked_add(opnd(1)?)?,
            O::LLVMMul => opnd(0)?.checked_mul(opnd(1)?)?,
            O::LLVMShl => {
                let k = konst(1)?;
                (k < 64).then_some(())?;
                opnd(0)?.checked_mul(1 << k)?
            }
            O::LLVMLShr => opnd(0)? >> konst(1)?.min(127),
            O::LLVMUDiv => opnd(0)? / konst(1)?.max(1),
            O::LLVMURem => opnd(0)?.min(konst(1)?.checked_sub(1)?),
            O::LLVMAnd => match (opnd(0), opnd(1)) {
                (Some(a), Some(b)) => a.min(b),
                (a, b) => a.or(b)?,
            },
            O::LLVMSelect => opnd(1)?.max(opnd(2)?),
            O::LLVMZExt
            | O::LLVMFreeze
            | O::LLVMTrunc
            | O::LLVMIntToPtr
            | O::LLVMPtrToInt
            | O::LLVMAddrSpaceCast
            | O::LLVMBitCast => opnd(0)?,
            O::LLVMSExt => {
                let a = opnd(0)?;
                let from = c::LLVMGetIntTypeWidth(c::LLVMTypeOf(c::LLVMGetOperand(v, 0)));
                (a >> (from - 1) == 0).then_some(a)?
            }
            O::LLVMGetElementPtr => {
                let mut m = opnd(0)?;
                let mut ty = c::LLVMGetGEPSourceElementType(v);
                for k in 1..c::LLVMGetNumOperands(v) as u32 {
                    if k > 1 {
                        match c::LLVMGetTypeKind(ty) {
                            LLVMTypeKind::LLVMArrayTypeKind | LLVMTypeKind::LLVMVectorTypeKind => {
                                ty = c::LLVMGetElementType(ty)
                            }
                            _ => return None,
                        }
                    }
                    // Indices are signed: only those known non-negative.
                    let idx = c::LLVMGetOperand(v, k);
                    let iw = c::LLVMGetIntTypeWidth(c::LLVMTypeOf(idx));
                    let i = self.max_of(idx, td, depth)?;
                    (i >> (iw - 1) == 0).then_some(())?;
                    let size = llvm_sys::target::LLVMABISizeOfType(td, ty);
                    m = m.checked_add(i.checked_mul(u128::from(size))?)?;
                }
                m
            }
            _ => return None,
        };
        fits(m)
    }

    /// Bits of an integer or pointer type.
    unsafe fn width(&self, t: LLVMTypeRef, td: llvm_sys::target::LLVMTargetDataRef) -> u32 {
        if c::LLVMGetTypeKind(t) == LLVMTypeKind::LLVMPointerTypeKind {
            8 * llvm_sys::target::LLVMPointerSizeForAS(td, c::LLVMGetPointerAddressSpace(t))
        } else {
            c::LLVMGetIntTypeWidth(t)
        }
    }

    /// A `w`-bit value of stride `s` widened (sign- or zero-extended): exact for aligned
    /// lanes, else the step as a signed `w`-bit number and one more cast that may wrap
    /// (unless the value is uniform).
    fn widen(&self, s: Stride, w: u32, signed: bool) -> Option<Stride> {
        let room = if signed { w - 1 } else { w };
        if s.aligned && room < 63 && s.step.checked_mul(self.run).is_some_and(|b| b <= 1 << room) {
            // The lanes lie in one block of `32 × step`, which divides 2^w (2^(w-1) for a
            // sign extension): no range boundary falls between them.
            return Some(s);
        }
        let step = signed_low(s.step, w);
        if step == 0 && s.casts == 0 {
            // Every lane has lane 0's value: the extension cannot differ between them.
            return Some(UNIFORM);
        }
        if w > 32 {
            // The lane-31 test needs the wrap (a multiple of 2^w) to survive the factor.
            return None;
        }
        Some(Stride {
            step,
            casts: s.casts + 1,
            factor: if s.casts == 0 { 1 } else { s.factor },
            aligned: false,
        })
    }
}

/// The element type that index `k` (≥ 1) of a GEP scales by, `ty` being the type indexed
/// so far (updated to the next level): the source type for the first index, the element
/// of an array or vector; `Some(None)` for a struct field, whose offset is the same in every
/// lane (nothing to scale); `None` for an index the lane rules do not follow.
unsafe fn gep_step(ty: &mut LLVMTypeRef, k: u32, idx: LLVMValueRef) -> Option<Option<LLVMTypeRef>> {
    if k == 1 {
        return Some(Some(*ty));
    }
    match c::LLVMGetTypeKind(*ty) {
        LLVMTypeKind::LLVMStructTypeKind => {
            let f = ir::const_u64(idx)? as u32;
            *ty = c::LLVMStructGetTypeAtIndex(*ty, f);
            Some(None)
        }
        LLVMTypeKind::LLVMArrayTypeKind | LLVMTypeKind::LLVMVectorTypeKind => {
            *ty = c::LLVMGetElementType(*ty);
            Some(Some(*ty))
        }
        _ => None,
    }
}
