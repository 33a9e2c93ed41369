//! Thread-loop ("fission") code for the cpu target: a kernel runs as loops over the threads of
//! a CTA instead of one coroutine per thread (see `runtime::fission` for the execution model).
//!
//! For kernel `K` the compiler emits
//! - `K.step(<K's parameters>, <extras>)`: the kernel body for *one* thread, entered at a resume
//!   point `k` (0: the start; `j`: after stop `j`, taking a warp operation's result from the
//!   result arrays; `stops + j`: after `shfl` stop `j`, computing the shuffle from the operand
//!   arrays). The entry block switches on `k` to the resume blocks, which restore the registers
//!   live across the stop from per-thread arrays (structure of arrays, one array per register)
//!   and rematerialize constant registers. A stop stores the operands and the live registers,
//!   sets the thread's state to `STOP | j` and returns; `ret`/`exit` return (the caller set the
//!   state to `EXIT`); `trap` and `__assertfail` mark the thread trapped.
//! - `K.fis(params, ctx, fis)`: loads the parameters and the CTA's uniform values once and runs
//!   one round: for `ALL`/`MASKED` rounds a loop nest z/y/x per resume point with `K.step`
//!   inlined (`alwaysinline` call sites) and specialized for that point, which LLVM vectorizes
//!   across threads; for `GENERIC` rounds one loop that calls the out-of-line `K.step` with each
//!   thread's own resume point.
//!
//! Special registers come from the loop (`%tid`, `%laneid`, …) or from values loaded once per
//! round (`%ntid`, `%ctaid`, …); calls store the thread's ids into the CTA context first, so
//! device functions that read them through `ptx2llvm_rt_self()` see the right thread.
//! `.local` variables of kernels with stops live in per-thread memory (one array per variable).

pub mod analysis;
mod cta;
mod inline;
mod stop;
mod stride;
mod tidrange;
mod uniform;

use std::collections::HashMap;

use crate::llvm::fission as lf;
use crate::llvm::*;
use crate::lower::{ApproxOp, Error, FnState, Lowerer, RoundedOp, Rounding, Space, Target, Ty};
use crate::runtime::abi::{bar_red, offset, shfl, vote};
use crate::runtime::cta::{BarKind, WarpOp};
use crate::runtime::fission::{StopKind, FRAME_STRIDE, ST_STOP, ST_TRAP};
use crate::syntax::ast::{self, FnDirective, Instruction, NodeId, Operand};

pub use analysis::{analyse, Plan};
pub use cta::emit_kernel;
use stop::{lower_latch, lower_probe, lower_stop};

/// Extra parameters of `K.step`, after the kernel's own (index offsets).
pub(crate) mod extra {
    pub const CTX: u32 = 0;
    pub const FIS: u32 = 1;
    pub const T: u32 = 2;
    pub const TX: u32 = 3;
    pub const K: u32 = 6;
    pub const NT: u32 = 7;
    pub const C: u32 = 10;
    pub const NC: u32 = 13;
    pub const N: u32 = 16;
    pub const SHARED: u32 = 17;
    pub const STATE: u32 = 18;
    pub const FRAME: u32 = 19;
    pub const OPA: u32 = 20;
    pub const OPA_HI: u32 = 21;
    pub const OPB: u32 = 22;
    pub const OPC: u32 = 23;
    pub const MASK: u32 = 24;
    pub const RES: u32 = 25;
    pub const RESP: u32 = 26;
    pub const LOCAL: u32 = 27;
    /// Which half of the double-buffered `opa` this round's stops write (the other half holds
    /// the previous round's operands, which inline shuffles read).
    pub const BANK: u32 = 28;
    /// Probe branches (`Plan::probes`): 0 as written, 1 store the condition in `PBUF` and
    /// return, 2 not taken, 3 taken, 4 store the uniform register bounding the branch's
    /// thread interval (`Plan::probe_regs`) as 4 bytes at `PBUF[t]` and return; at the
    /// yields of stride loops (`stride.rs`, `cta/interchange.rs`): 5 store the induction
    /// value, step and bound and return, 6 pass the yield by (out-of-line rounds), 7 the
    /// last interchanged iteration of the thread (induction value `IV + T`, falling through
    /// the latch without evaluating it), 8 an interchanged iteration that is not the last
    /// (the same, taking the latch; the loop's own yield returns at once).
    pub const PROBE: u32 = 29;
    /// Per-thread bytes where probing rounds store probe branch conditions.
    pub const PBUF: u32 = 30;
    /// 1: stops do not record themselves in the thread's state (the round's region has one
    /// stop every thread reaches: `Plan::must_stop`).
    pub const NOSTATE: u32 = 31;
    /// Probe mode 7 (an interchanged iteration of a stride loop, `cta/interchange.rs`): the
    /// thread's induction value less its thread number `T`.
    pub const IV: u32 = 32;
    /// Probe modes 9, 10 and 11: the first, a middle and the last stage of a warp chain, one
    /// lane (`cta/warp.rs`). Stages but the last leave the shuffle operand of the stop
    /// ending them at `OPLW[%laneid]` and their live registers in `FRL` (instead of `OPA` and
    /// `FRAME`); stages but the first read the previous stage's operands from
    /// `OPLR[%laneid +- d]` and their registers from `FRL`: arrays local to `K.warp<r>`,
    /// which LLVM keeps in registers. Null elsewhere.
    pub const OPLR: u32 = 33;
    pub const OPLW: u32 = 34;
    /// The warp chain's frame: slot `p` (a byte offset in the thread's frame) for lane `l`
    /// at `32 p + l size`.
    pub const FRL: u32 = 35;
    /// i32 parameters are `T..=N`, `BANK`, `PROBE`, `NOSTATE` and `IV`; the rest are pointers.
    pub const COUNT: u32 = 36;
    pub fn is_i32(k: u32) -> bool {
        (T..=N).contains(&k) || k == BANK || k == PROBE || k == NOSTATE || k == IV
    }
}

/// What the lowering of one kernel's `K.step` needs and collects. Instructions are the
/// `NodeId`s of the kernel's (rewritten) body, which the hooks compare with `FnState::node`.
#[derive(Default)]
struct Cur {
    nptx: u32,
    nstops: u32,
    stop_of: HashMap<NodeId, u32>,
    saved: Vec<Vec<String>>,
    /// Per stop: definitions to run again after it.
    remat: Vec<Vec<NodeId>>,
    consts: HashMap<String, u64>,
    /// Register → (per-thread array offset in units of `n`, element size).
    slots: HashMap<String, (u32, u32)>,
    frame_bytes: u32,
    local_bytes: u32,
    locals_per_thread: bool,
    kinds: Vec<Option<StopKind>>,
    /// Per stop: its `b`, `c` and member-mask operands when they are constants (not stored
    /// per thread; the driver takes them from `FisInfo::stop_consts`).
    stop_consts: Vec<[Option<u32>; 3]>,
    /// The stop being lowered (1-based).
    cur_stop: u32,
    /// Probe branches.
    probes: std::collections::HashSet<NodeId>,
    /// The latches of stride loops (`StrideLoop::latch`): probe mode 8 takes them.
    latches: std::collections::HashSet<NodeId>,
    /// Probe branches whose interval is bounded by a uniform register: its name, which probe
    /// mode 4 stores (`Plan::probe_regs`).
    probe_regs: HashMap<NodeId, String>,
    /// Yields at the headers of stride loops (`Plan::yields`).
    yields: HashMap<NodeId, YieldInfo>,
}

/// What the lowering of a stride loop's yield needs.
#[derive(Clone, Debug)]
struct YieldInfo {
    /// The loop's induction register, step and bound (probe mode 5 captures them).
    vals: [YieldVal; 3],
    /// The registers the loop writes other than the induction register
    /// (`StrideLoop::writes`): those live at the yield are saved in modes 7 and 8.
    writes: Vec<String>,
    /// The latch compares signed (`StrideLoop::signed`).
    signed: bool,
}

/// An operand of a stride loop's latch, for its yield's capture (probe mode 5).
#[derive(Clone, Debug)]
enum YieldVal {
    Reg(String),
    Imm(u64),
}

/// The lowering state of the `K.step` being built, which the lowering owns
/// (`Lowerer::target_state`) while `FisTarget`'s hooks run.
fn with_cur<R>(l: &Lowerer<'_, '_>, f: impl FnOnce(&mut Cur) -> R) -> R {
    let mut state = l.target_state.borrow_mut();
    let cur = state
        .as_mut()
        .and_then(|s| s.downcast_mut::<Cur>())
        .expect("thread-loop lowering state");
    f(cur)
}

/// The lowering target of `K.step`: the cpu target with thread-loop stops, special registers
/// and `.local` memory.
pub struct FisTarget;

static CPU: super::Cpu = super::Cpu;
pub(crate) static FIS: FisTarget = FisTarget;

fn arg<'c>(l: &Lowerer<'c, '_>, f: FunctionValue<'c>, k: u32) -> BasicValueEnum<'c> {
    let nptx = with_cur(l, |c| c.nptx);
    f.get_nth_param(nptx + k).expect("thread-loop parameter")
}

fn cur_fn<'c>(l: &Lowerer<'c, '_>) -> FunctionValue<'c> {
    l.b.get_insert_block()
        .and_then(|b| b.get_parent())
        .expect("inside a function")
}

fn t_i64<'c>(l: &Lowerer<'c, '_>, f: FunctionValue<'c>) -> IntValue<'c> {
    let t = arg(l, f, extra::T).into_int_value();
    let t64 = l.b.build_int_z_extend(t, l.i64(), "t64").unwrap();
    // `nneg` (a thread's index in its CTA is below 2^31): a thread loop whose counter LLVM
    // widens by sign extension (a divergent branch's partition of the threads, a shared
    // address `sext(tid << 2)`) otherwise keeps the frame index as `zext(trunc(i))`, an
    // `and` that hides the consecutive slots: histogram's clearing region saved `%tid.x`
    // with two 16-lane scatters per 32 threads (`stride::insert_yields`, x1.07 slower).
    if let Some(i) = t64.as_instruction() {
        i.set_non_negative_flag(true)
            .expect("a zext instruction takes the nneg flag");
    }
    t64
}

/// `&base[idx]` with elements of `ty`.
fn elem<'c>(
    l: &Lowerer<'c, '_>,
    base: BasicValueEnum<'c>,
    ty: BasicTypeEnum<'c>,
    idx: IntValue<'c>,
) -> PointerValue<'c> {
    // SAFETY: `build_gep` only builds IR (element `idx` after `base`); nothing is dereferenced here.
    unsafe {
        l.b.build_gep(ty, base.into_pointer_value(), &[idx], "")
            .unwrap()
    }
}

/// Stores `v` (an i32) to operand array `which` at the thread.
/// Stores a stop's `b` (`OPB`), `c` (`OPC`) or member mask (`MASK`) operand for the thread,
/// unless the operand is a constant: then the stop's record keeps it once (every thread of a
/// round stores the same value otherwise).
fn put_stop_operand<'c, 'a>(
    l: &Lowerer<'c, 'a>,
    fs: &mut FnState<'c, 'a>,
    which: u32,
    op: Option<&Operand<'a>>,
) -> Result<(), Error> {
    let f = fs.func;
    let slot = match which {
        extra::OPB => 0,
        extra::OPC => 1,
        _ => 2,
    };
    let Some(op) = op else {
        // An absent operand (no thread count) is 0.
        with_cur(l, |c| {
            c.stop_consts[c.cur_stop as usize - 1][slot] = Some(0)
        });
        return Ok(());
    };
    if let Some(v) = const_of(l, op) {
        with_cur(l, |c| {
            c.stop_consts[c.cur_stop as usize - 1][slot] = Some(v as u32)
        });
        return Ok(());
    }
    let v = l.operand(fs, op, Ty::b(32))?;
    put_u32(l, f, which, v);
    Ok(())
}

fn put_u32<'c>(l: &Lowerer<'c, '_>, f: FunctionValue<'c>, which: u32, v: BasicValueEnum<'c>) {
    let v = l.coerce(v, l.i32().into(), false);
    let p = elem(l, arg(l, f, which), l.i32().into(), t_i64(l, f));
    l.b.build_store(p, v).unwrap();
}

/// Index of the thread's `opa` element in bank `bank` (0/1): `bank * (n + 64) + t`.
fn opa_index<'c>(
    l: &Lowerer<'c, '_>,
    f: FunctionValue<'c>,
    bank: IntValue<'c>,
    t: IntValue<'c>,
) -> IntValue<'c> {
    let b = &l.b;
    let n = b
        .build_int_z_extend(arg(l, f, extra::N).into_int_value(), l.i64(), "")
        .unwrap();
    let stride = b
        .build_int_add(n, l.i64().const_int(64, false), "")
        .unwrap();
    let bank = b.build_int_z_extend(bank, l.i64(), "").unwrap();
    b.build_int_add(b.build_int_mul(bank, stride, "").unwrap(), t, "")
        .unwrap()
}

/// Stores `v` (an i32) to this round's bank of `opa` at the thread.
fn put_opa<'c>(l: &Lowerer<'c, '_>, f: FunctionValue<'c>, v: BasicValueEnum<'c>) {
    let v = l.coerce(v, l.i32().into(), false);
    let idx = opa_index(l, f, arg(l, f, extra::BANK).into_int_value(), t_i64(l, f));
    let p = elem(l, arg(l, f, extra::OPA), l.i32().into(), idx);
    // Stages of a warp chain but its last (modes 9 and 10) leave it in the chain's local
    // array instead, which the next stage reads.
    let b = &l.b;
    let lane = b
        .build_and(arg(l, f, extra::T).into_int_value(), l.c32(31), "")
        .unwrap();
    let lane = b.build_int_z_extend(lane, l.i64(), "").unwrap();
    let q = elem(l, arg(l, f, extra::OPLW), l.i32().into(), lane);
    let p = b
        .build_select(mode_in(l, f, 9, 10), q, p, "")
        .unwrap()
        .into_pointer_value();
    b.build_store(p, v).unwrap();
}

fn get_u32<'c>(l: &Lowerer<'c, '_>, f: FunctionValue<'c>, which: u32) -> IntValue<'c> {
    let p = elem(l, arg(l, f, which), l.i32().into(), t_i64(l, f));
    l.b.build_load(l.i32(), p, "").unwrap().into_int_value()
}

fn set_state<'c>(l: &Lowerer<'c, '_>, f: FunctionValue<'c>, s: u16) {
    let i16t = l.ctx.i16_type();
    let p = elem(l, arg(l, f, extra::STATE), i16t.into(), t_i64(l, f));
    l.b.build_store(p, i16t.const_int(s as u64, false)).unwrap();
}

/// The compile-time value of an operand: an integer immediate or a constant register.
fn const_of(l: &Lowerer<'_, '_>, op: &Operand) -> Option<u64> {
    match op {
        Operand::Imm(e) => crate::syntax::consteval::eval(e).map(|c| c.bits),
        Operand::Name {
            name,
            comp: None,
            negated: false,
            ..
        } => with_cur(l, |c| c.consts.get(*name).copied()),
        _ => None,
    }
}

fn set_pair<'c, 'a>(
    l: &Lowerer<'c, 'a>,
    fs: &mut FnState<'c, 'a>,
    op: &Operand<'a>,
    d: BasicValueEnum<'c>,
    p: BasicValueEnum<'c>,
) -> Result<(), Error> {
    match op {
        Operand::Pair(a, b, _) => {
            l.set(fs, a, d, false)?;
            l.set(fs, b, p, false)
        }
        other => l.set(fs, other, d, false),
    }
}

/// Byte size of a storage type.
fn size_of<'c>(l: &Lowerer<'c, '_>, t: BasicTypeEnum<'c>) -> u32 {
    match t {
        BasicTypeEnum::ArrayType(a) => a.len() * size_of(l, a.get_element_type()),
        BasicTypeEnum::VectorType(v) => v.get_size() * size_of(l, v.get_element_type()),
        BasicTypeEnum::StructType(s) => s.get_field_types().iter().map(|t| size_of(l, *t)).sum(),
        _ => l.bits_of(t).div_ceil(8).max(1),
    }
}

/// The per-thread array slot of register `name` (allocated on first use).
fn slot_of(l: &Lowerer<'_, '_>, name: &str, size: u32) -> u32 {
    with_cur(l, |c| {
        if let Some(&(p, _)) = c.slots.get(name) {
            return p;
        }
        let p = c.frame_bytes.div_ceil(size) * size;
        c.frame_bytes = p + size;
        c.slots.insert(name.to_string(), (p, size));
        p
    })
}

/// Pointer to the thread's element of register `name`'s array and the value type stored.
fn frame_elem<'c, 'a>(
    l: &Lowerer<'c, 'a>,
    fs: &mut FnState<'c, 'a>,
    name: &str,
    local: Option<IntValue<'c>>,
) -> Option<(
    PointerValue<'c>,
    BasicTypeEnum<'c>,
    PointerValue<'c>,
    BasicTypeEnum<'c>,
)> {
    let (reg, st, _) = l.reg(fs, name)?;
    let mem_ty: BasicTypeEnum = if l.bits_of(st) == 1 {
        l.ctx.i8_type().into()
    } else {
        st
    };
    let size = size_of(l, mem_ty);
    let p = slot_of(l, name, size);
    let f = fs.func;
    let base = l.i64().const_int(p as u64 * FRAME_STRIDE as u64, false);
    let t = t_i64(l, f);
    let off =
        l.b.build_int_add(
            base,
            l.b.build_int_mul(t, l.i64().const_int(size as u64, false), "")
                .unwrap(),
            "",
        )
        .unwrap();
    let ptr = elem(l, arg(l, f, extra::FRAME), l.ctx.i8_type().into(), off);
    let Some(local) = local else {
        return Some((ptr, mem_ty, reg, st));
    };
    // Where `local`: the warp chain's own copy (`FRL`), the slot's 32 lanes at `32 p`.
    let b = &l.b;
    let lane = b
        .build_and(arg(l, f, extra::T).into_int_value(), l.c32(31), "")
        .unwrap();
    let lane = b.build_int_z_extend(lane, l.i64(), "").unwrap();
    let loff = b
        .build_int_add(
            l.i64().const_int(p as u64 * 32, false),
            b.build_int_mul(lane, l.i64().const_int(size as u64, false), "")
                .unwrap(),
            "",
        )
        .unwrap();
    let lptr = elem(l, arg(l, f, extra::FRL), l.ctx.i8_type().into(), loff);
    let ptr = b
        .build_select(local, lptr, ptr, "")
        .unwrap()
        .into_pointer_value();
    Some((ptr, mem_ty, reg, st))
}

/// Whether the probe mode is in `lo..=hi`.
fn mode_in<'c>(l: &Lowerer<'c, '_>, f: FunctionValue<'c>, lo: u32, hi: u32) -> IntValue<'c> {
    let mode = arg(l, f, extra::PROBE).into_int_value();
    l.b.build_int_compare(
        IntPredicate::ULE,
        l.b.build_int_sub(mode, l.c32(lo as u64), "").unwrap(),
        l.c32((hi - lo) as u64),
        "",
    )
    .unwrap()
}

/// Saves registers `names` to the thread's frame; at an inline shuffle (`chain`), stages of a
/// warp chain but its last (modes 9 and 10) save to the chain's own frame instead.
fn save_regs<'c, 'a>(l: &Lowerer<'c, 'a>, fs: &mut FnState<'c, 'a>, names: &[String], chain: bool) {
    let local = chain.then(|| mode_in(l, fs.func, 9, 10));
    for n in names {
        let Some((ptr, mem_ty, reg, st)) = frame_elem(l, fs, n, local) else {
            continue;
        };
        let v = l.b.build_load(st, reg, "").unwrap();
        let v = if mem_ty != st {
            l.b.build_int_z_extend(v.into_int_value(), mem_ty.into_int_type(), "")
                .unwrap()
                .into()
        } else {
            v
        };
        l.b.build_store(ptr, v).unwrap();
    }
}

/// Restores registers `names` from the thread's frame and recomputes `remat`.
fn restore_regs<'c, 'a>(
    l: &Lowerer<'c, 'a>,
    fs: &mut FnState<'c, 'a>,
    names: &[String],
    remat: &[NodeId],
    chain: bool,
) -> Result<(), Error> {
    // After an inline shuffle (`chain`), stages of a warp chain but its first (modes 10 and
    // 11) restore from the chain's frame.
    let local = chain.then(|| mode_in(l, fs.func, 10, 11));
    for n in names {
        let Some((ptr, mem_ty, reg, st)) = frame_elem(l, fs, n, local) else {
            continue;
        };
        let v = l.b.build_load(mem_ty, ptr, "").unwrap();
        let v = if mem_ty != st {
            l.b.build_int_truncate(v.into_int_value(), st.into_int_type(), "")
                .unwrap()
                .into()
        } else {
            v
        };
        l.b.build_store(reg, v).unwrap();
    }
    for &k in remat {
        l.lower_node(fs, k)?;
    }
    Ok(())
}

/// The thread's ids into the CTA context (for device functions and runtime calls).
fn store_ids<'c>(l: &Lowerer<'c, '_>, f: FunctionValue<'c>) {
    let ctx = arg(l, f, extra::CTX).into_pointer_value();
    let put = |off: u32, v: IntValue<'c>| {
        // SAFETY: `build_gep` only builds IR (a field of the context block); nothing is dereferenced here.
        let p = unsafe {
            l.b.build_gep(
                l.ctx.i8_type(),
                ctx,
                &[l.i64().const_int(off as u64, false)],
                "",
            )
            .unwrap()
        };
        l.b.build_store(p, v).unwrap();
    };
    for k in 0..3 {
        put(
            offset::TID + 4 * k,
            arg(l, f, extra::TX + k).into_int_value(),
        );
        put(
            offset::CTAID + 4 * k,
            arg(l, f, extra::C + k).into_int_value(),
        );
    }
    let t = arg(l, f, extra::T).into_int_value();
    put(offset::FLAT_TID, t);
    put(offset::LANEID, l.b.build_and(t, l.c32(31), "").unwrap());
    put(
        offset::WARPID,
        l.b.build_right_shift(t, l.c32(5), false, "").unwrap(),
    );
}

/// Marks the thread trapped and returns from `K.step`.
fn trap_tail<'c>(l: &Lowerer<'c, '_>, f: FunctionValue<'c>) {
    set_state(l, f, ST_TRAP);
    let fis = arg(l, f, extra::FIS).into_pointer_value();
    // SAFETY: `build_gep` only builds IR (a byte offset into the fission block); nothing is dereferenced here.
    let p = unsafe {
        l.b.build_gep(
            l.ctx.i8_type(),
            fis,
            &[l.i64()
                .const_int(crate::runtime::fission::off::STATUS as u64, false)],
            "",
        )
        .unwrap()
    };
    l.b.build_store(p, l.c32(1)).unwrap();
    l.b.build_return(None).unwrap();
}

impl Target for FisTarget {
    fn name(&self) -> &'static str {
        "cpu"
    }

    fn disjoint_spaces(&self) -> bool {
        true
    }

    fn checks_alignment(&self) -> bool {
        true
    }

    fn null_is_valid(&self) -> bool {
        true
    }

    fn private_reductions(&self, f: &ast::Function) -> bool {
        CPU.private_reductions(f)
    }

    fn private_red_add<'c, 'a>(
        &self,
        l: &Lowerer<'c, 'a>,
        fs: &mut FnState<'c, 'a>,
        ptr: PointerValue<'c>,
        v: BasicValueEnum<'c>,
        order: (Ordering, &str),
        base: Option<PointerValue<'c>>,
    ) {
        let t = arg(l, fs.func, extra::CTX).into_pointer_value();
        super::private_red::emit_add(l, fs, t, ptr, v, order, base);
    }

    fn addr_space(&self, s: Space) -> u16 {
        CPU.addr_space(s)
    }

    fn sreg<'c>(
        &self,
        l: &Lowerer<'c, '_>,
        name: &str,
        comp: Option<char>,
    ) -> Option<BasicValueEnum<'c>> {
        let f = cur_fn(l);
        let k = match comp {
            Some('x') => Some(0),
            Some('y') => Some(1),
            Some('z') => Some(2),
            _ => None,
        };
        let t = || arg(l, f, extra::T).into_int_value();
        let b = &l.b;
        match name {
            "tid" => Some(arg(l, f, extra::TX + k?)),
            "ntid" => Some(arg(l, f, extra::NT + k?)),
            "ctaid" | "clusterid" => Some(arg(l, f, extra::C + k?)),
            "nctaid" | "nclusterid" => Some(arg(l, f, extra::NC + k?)),
            "laneid" => Some(b.build_and(t(), l.c32(31), "").unwrap().into()),
            "warpid" => Some(
                b.build_right_shift(t(), l.c32(5), false, "")
                    .unwrap()
                    .into(),
            ),
            "nwarpid" => {
                let n = arg(l, f, extra::N).into_int_value();
                Some(
                    b.build_right_shift(
                        b.build_int_add(n, l.c32(31), "").unwrap(),
                        l.c32(5),
                        false,
                        "",
                    )
                    .unwrap()
                    .into(),
                )
            }
            "lanemask_eq" | "lanemask_le" | "lanemask_lt" | "lanemask_ge" | "lanemask_gt" => {
                let lane = b.build_and(t(), l.c32(31), "").unwrap();
                let one = l.c32(1);
                let all = l.i32().const_all_ones();
                let eq = b.build_left_shift(one, lane, "").unwrap();
                let lt = b.build_int_sub(eq, one, "").unwrap();
                let le = b.build_or(lt, eq, "").unwrap();
                Some(
                    match name {
                        "lanemask_eq" => eq,
                        "lanemask_lt" => lt,
                        "lanemask_le" => le,
                        "lanemask_ge" => b.build_xor(lt, all, "").unwrap(),
                        _ => b.build_xor(le, all, "").unwrap(),
                    }
                    .into(),
                )
            }
            _ => CPU.sreg(l, name, comp),
        }
    }

    fn kernel<'c>(&self, l: &Lowerer<'c, '_>, f: FunctionValue<'c>, directives: &[FnDirective]) {
        CPU.kernel(l, f, directives)
    }

    fn sync_op<'c, 'a>(
        &self,
        l: &Lowerer<'c, 'a>,
        fs: &mut FnState<'c, 'a>,
        i: &Instruction<'a>,
    ) -> Result<bool, Error> {
        CPU.sync_op(l, fs, i)
    }

    fn inline_asm_ok(&self, i: &Instruction) -> Result<(), Error> {
        CPU.inline_asm_ok(i)
    }

    fn instruction<'c, 'a>(
        &self,
        l: &Lowerer<'c, 'a>,
        fs: &mut FnState<'c, 'a>,
        i: &Instruction<'a>,
    ) -> Result<bool, Error> {
        let op = i.opcode.spelling();
        if analysis::is_stop(op) {
            let j = with_cur(l, |c| c.stop_of.get(&fs.node).copied());
            let Some(j) = j else {
                return Err(Error::Unsupported {
                    msg: format!("`{op}` not found by the thread-loop analysis"),
                    span: i.span,
                });
            };
            lower_stop(l, fs, i, j)?;
            return Ok(true);
        }
        if op == "bra" && with_cur(l, |c| c.probes.contains(&fs.node)) {
            lower_probe(l, fs, i)?;
            return Ok(true);
        }
        if op == "bra" && with_cur(l, |c| c.latches.contains(&fs.node)) {
            lower_latch(l, fs, i)?;
            return Ok(true);
        }
        match op {
            "trap" => {
                let f = fs.func;
                let t = arg(l, f, extra::T);
                let ctx = arg(l, f, extra::CTX);
                store_ids(l, f);
                let msg = l.trap_message(fs);
                let s =
                    l.b.build_global_string_ptr(&msg, "trap.msg")
                        .unwrap()
                        .as_pointer_value();
                l.call("ptx2llvm_rt_fis_trap", None, &[ctx, t, s.into()]);
                trap_tail(l, f);
                Ok(true)
            }
            "call" => {
                let f = fs.func;
                store_ids(l, f);
                crate::lower::call::lower_call(l, fs, &l.ins(i)?)?;
                if analysis::callee_name(i) == Some("__assertfail") {
                    if let Some(bb) = l.b.get_insert_block() {
                        lf::drop_unreachable(bb);
                        if bb.get_terminator().is_none() {
                            trap_tail(l, f);
                        }
                    }
                }
                Ok(true)
            }
            _ => CPU.instruction(l, fs, i),
        }
    }

    fn local_var<'c, 'a>(
        &self,
        l: &Lowerer<'c, 'a>,
        fs: &mut FnState<'c, 'a>,
        ty: BasicTypeEnum<'c>,
        align: u32,
        _name: &str,
    ) -> Option<PointerValue<'c>> {
        if !with_cur(l, |c| c.locals_per_thread) {
            return None;
        }
        let al = align.max(16);
        let size = size_of(l, ty).div_ceil(al) * al;
        let p = with_cur(l, |c| {
            let p = c.local_bytes.div_ceil(al) * al;
            c.local_bytes = p + size;
            p
        });
        let cur = l.b.get_insert_block();
        l.b.position_at_end(fs.alloca_bb);
        let f = fs.func;
        let n =
            l.b.build_int_z_extend(arg(l, f, extra::N).into_int_value(), l.i64(), "")
                .unwrap();
        let base =
            l.b.build_int_mul(n, l.i64().const_int(p as u64, false), "")
                .unwrap();
        let t = t_i64(l, f);
        let off =
            l.b.build_int_add(
                base,
                l.b.build_int_mul(t, l.i64().const_int(size as u64, false), "")
                    .unwrap(),
                "",
            )
            .unwrap();
        let ptr = elem(l, arg(l, f, extra::LOCAL), l.ctx.i8_type().into(), off);
        if let Some(c) = cur {
            l.b.position_at_end(c);
        }
        Some(ptr)
    }

    fn rounded_op<'c>(
        &self,
        l: &Lowerer<'c, '_>,
        op: RoundedOp,
        rnd: Rounding,
        ftz: bool,
        ty: Ty,
        args: &[BasicValueEnum<'c>],
    ) -> Result<BasicValueEnum<'c>, Error> {
        CPU.rounded_op(l, op, rnd, ftz, ty, args)
    }

    fn rounded_cvt<'c>(
        &self,
        l: &Lowerer<'c, '_>,
        rnd: Rounding,
        dt: Ty,
        st: Ty,
        a: BasicValueEnum<'c>,
    ) -> Result<BasicValueEnum<'c>, Error> {
        CPU.rounded_cvt(l, rnd, dt, st, a)
    }

    fn approx_op<'c>(
        &self,
        l: &Lowerer<'c, '_>,
        op: ApproxOp,
        ftz: bool,
        ty: Ty,
        args: &[BasicValueEnum<'c>],
    ) -> Result<BasicValueEnum<'c>, Error> {
        CPU.approx_op(l, op, ftz, ty, args)
    }
}

/// What `lower_step` produced.
pub struct StepOut<'c> {
    pub step: FunctionValue<'c>,
    pub stops: Vec<StopKind>,
    /// Per stop: its constant `b`, `c` and member-mask operands (`FisInfo::stop_consts`).
    pub stop_consts: Vec<[Option<u32>; 3]>,
    pub frame_bytes: u32,
    pub local_bytes: u32,
    /// Resume points whose region starts with a probe branch.
    pub probes: std::collections::HashSet<u32>,
    /// Resume points of ALL/MASKED rounds: 0, fast barriers `j`, inline shuffles `stops + j`.
    pub resumes: Vec<u32>,
    /// By resume point: the one stop every thread of its rounds reaches (`Plan::must_stop`).
    pub must_stop: HashMap<u32, u32>,
    /// By resume point with a probe: whether the taken / not-taken threads have nothing to do.
    pub empty_paths: HashMap<u32, (bool, bool)>,
    /// By resume point with a probe: the `%tid.x` interval taking it, when known without a
    /// probe pass (`Plan::analytic`).
    pub analytic: HashMap<u32, analysis::TidRange>,
    /// Resume points whose probe branch is uniform (`Plan::uniform_probes`).
    pub uniform_probes: std::collections::HashSet<u32>,
    /// By resume point with a probe: the lanes taking it (`Plan::lanes`).
    pub lanes: HashMap<u32, tidrange::TidLanes>,
    /// By resume point with a probe: whether the taken / not-taken threads finish at once.
    pub exit_paths: HashMap<u32, (bool, bool)>,
    /// By resume point with an exit path: the one stop the other threads reach
    /// (`Plan::exit_then`).
    pub exit_then: HashMap<u32, u32>,
    /// By resume point: what its region holds (`Plan::sizes`).
    pub sizes: HashMap<u32, analysis::RegionShape>,
    /// Resume points whose region every thread finishes without a stop (`Plan::finish`).
    pub finish: std::collections::HashSet<u32>,
    /// By stop: the yields at the headers of stride loops (`stride.rs`).
    pub yields: HashMap<u32, YieldLoop>,
}

/// What `K.fis` needs to run a stride loop interchanged (`stride::StrideLoop`).
#[derive(Clone, Copy, Debug)]
pub struct YieldLoop {
    /// The latch compares with `le` (else `lt`), signed (else unsigned).
    pub le: bool,
    pub signed: bool,
    /// The stop every thread leaving the loop reaches first, or `None` when they finish.
    pub exit: Option<u32>,
    /// `StrideLoop::linear`: the first thread's values stand for all.
    pub linear: bool,
}

/// Lowers kernel `f` into `K.step` with the thread-loop target. Restores `l.target`.
pub fn lower_step<'c, 'a>(
    l: &mut Lowerer<'c, 'a>,
    f: &'a ast::Function<'a>,
    plan: &Plan<'_, 'a>,
) -> Result<StepOut<'c>, Error> {
    let sig = l
        .sigs
        .get(f.name)
        .cloned()
        .ok_or_else(|| Error::Llvm(format!("kernel `{}` is not declared", f.name)))?;
    let mut ptys: Vec<BasicMetadataTypeEnum> = sig.fn_ty.get_param_types().into_iter().collect();
    let nptx = ptys.len() as u32;
    for k in 0..extra::COUNT {
        ptys.push(if extra::is_i32(k) {
            l.i32().into()
        } else {
            l.ptr(Space::Generic).into()
        });
    }
    let fty = l.ctx.void_type().fn_type(&ptys, false);
    let step = l
        .module
        .add_function(&format!("{}.step", f.name), fty, Some(Linkage::Internal));
    lf::set_shared_arg(l.ctx, step, nptx + extra::SHARED);
    let cur = Cur {
        nptx,
        nstops: plan.stops.len() as u32,
        stop_of: plan.stop_of.clone(),
        saved: plan
            .stops
            .iter()
            .map(|s| s.saved.iter().map(|x| x.to_string()).collect())
            .collect(),
        remat: plan.stops.iter().map(|s| s.remat.clone()).collect(),
        consts: plan
            .consts
            .iter()
            .map(|(k, v)| (k.to_string(), *v))
            .collect(),
        locals_per_thread: plan.has_stops() && plan.has_locals,
        probes: plan.probes.values().copied().collect(),
        latches: plan.yields.values().map(|y| y.latch).collect(),
        probe_regs: plan
            .probe_regs
            .iter()
            .filter_map(|(k, r)| Some((*plan.probes.get(k)?, r.to_string())))
            .collect(),
        yields: plan
            .yields
            .iter()
            .map(|(i, y)| {
                let val = |o: &Operand| match o {
                    Operand::Name { name, .. } => YieldVal::Reg(name.to_string()),
                    o => YieldVal::Imm(const_of(l, o).unwrap_or(0)),
                };
                let info = YieldInfo {
                    vals: [YieldVal::Reg(y.iv.to_string()), val(&y.step), val(&y.bound)],
                    writes: y.writes.iter().map(|w| w.to_string()).collect(),
                    signed: y.signed,
                };
                (*i, info)
            })
            .collect(),
        kinds: vec![None; plan.stops.len()],
        stop_consts: vec![[None; 3]; plan.stops.len()],
        cur_stop: 0,
        ..Cur::default()
    };
    let saved_state = l.target_state.replace(Some(Box::new(cur)));
    let saved_target = l.target;
    l.target = &FIS;
    let r = l.lower_body(f, step);
    l.target = saved_target;
    let cur = l
        .target_state
        .replace(saved_state)
        .and_then(|s| s.downcast::<Cur>().ok())
        .map(|c| *c)
        .unwrap_or_default();
    if let Err(e) = r {
        // SAFETY: `step` was created by this function for this lowering and nothing refers to it yet (the failed lowering's callers do not see it).
        unsafe { step.delete() };
        return Err(e);
    }
    // Entry: switch on the resume point.
    let entry = step
        .get_first_basic_block()
        .ok_or_else(|| Error::Llvm("empty step function".into()))?;
    let start = lf::branch_target(entry)
        .ok_or_else(|| Error::Llvm("unexpected entry block of a step function".into()))?;
    let mut resumes = vec![0u32];
    let mut cases = Vec::new();
    for bb in step.get_basic_block_iter() {
        let name = bb.get_name().to_string_lossy().into_owned();
        if let Some(id) = name
            .strip_prefix("fis.resume.")
            .and_then(|x| x.parse::<u32>().ok())
        {
            resumes.push(id);
            cases.push((l.i32().const_int(id as u64, false), bb));
        }
    }
    resumes.sort_unstable();
    lf::drop_terminator(entry);
    l.b.position_at_end(entry);
    let k = step
        .get_nth_param(nptx + extra::K)
        .unwrap()
        .into_int_value();
    l.b.build_switch(k, start, &cases).unwrap();
    let stops = cur
        .kinds
        .into_iter()
        .enumerate()
        .map(|(x, k)| k.ok_or_else(|| Error::Llvm(format!("stop {} was not lowered", x + 1))))
        .collect::<Result<Vec<_>, _>>()?;
    // Only the start and the points the driver resumes in ALL/MASKED rounds get loop nests
    // of their own; the rest run in GENERIC rounds.
    let ns = stops.len() as u32;
    resumes.retain(|&r| {
        r == 0
            || r > ns
            || stops[r as usize - 1].is_fast_barrier()
            || stops[r as usize - 1] == StopKind::Yield
    });
    let ns = plan.stops.len() as u32;
    // Region keys (0, or stop j: both of its resume points) to resume points.
    let resumes_of = |k: u32| if k == 0 { vec![0] } else { vec![k, ns + k] };
    fn by_resume<V: Copy>(m: &HashMap<u32, V>, rs: impl Fn(u32) -> Vec<u32>) -> HashMap<u32, V> {
        m.iter()
            .flat_map(|(&k, &v)| rs(k).into_iter().map(move |r| (r, v)))
            .collect()
    }
    let must_stop = by_resume(&plan.must_stop, resumes_of);
    let empty_paths = by_resume(&plan.empty_paths, resumes_of);
    let analytic = by_resume(&plan.analytic, resumes_of);
    let lanes = by_resume(&plan.lanes, resumes_of);
    let exit_paths = by_resume(&plan.exit_paths, resumes_of);
    let exit_then = by_resume(&plan.exit_then, resumes_of);
    let sizes = by_resume(&plan.sizes, resumes_of);
    let finish = plan.finish.iter().flat_map(|&k| resumes_of(k)).collect();
    let uniform_probes = plan
        .uniform_probes
        .iter()
        .flat_map(|&k| resumes_of(k))
        .collect();
    let probes = plan.probes.keys().flat_map(|&k| resumes_of(k)).collect();
    let yields = plan
        .yields
        .iter()
        .filter_map(|(i, y)| {
            let j = *plan.stop_of.get(i)?;
            let exit = match y.exit {
                Some(e) => Some(*plan.stop_of.get(&e)?),
                None => None,
            };
            Some((
                j,
                YieldLoop {
                    le: y.le,
                    signed: y.signed,
                    exit,
                    linear: y.linear,
                },
            ))
        })
        .collect();
    Ok(StepOut {
        yields,
        sizes,
        finish,
        step,
        must_stop,
        empty_paths,
        analytic,
        uniform_probes,
        lanes,
        exit_paths,
        exit_then,
        probes,
        stops,
        stop_consts: cur.stop_consts,
        frame_bytes: cur.frame_bytes.div_ceil(16) * 16,
        local_bytes: cur.local_bytes,
        resumes,
    })
}

/// How kernels run on the cpu target.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum CpuMode {
    /// Thread loops wherever the analysis allows them, coroutines elsewhere (the default).
    #[default]
    Auto,
    /// Thread loops wherever possible (the same choice as `Auto`; kernels that cannot run as
    /// thread loops still run as coroutines and say why in `KernelPath::Coroutine`).
    Fission,
    /// Every CUDA thread a coroutine.
    Coroutine,
    /// The warp engine wherever its scope allows (the same choice as `Auto`; named so that
    /// tests can ask for it).
    Warp,
}

impl CpuMode {
    /// Whether kernels in the warp engine's scope take it (`Fission` keeps the thread loops
    /// for them, so that both engines stay testable).
    pub fn warp(self) -> bool {
        matches!(self, CpuMode::Auto | CpuMode::Warp)
    }
}

impl CpuMode {
    /// The mode named by `PTX2LLVM_CPU_MODE` (`auto`, `fission`, `coroutine`); `Auto` when
    /// unset or unknown.
    pub fn from_env() -> CpuMode {
        match std::env::var("PTX2LLVM_CPU_MODE").as_deref() {
            Ok("coroutine") | Ok("coroutines") => CpuMode::Coroutine,
            Ok("fission") | Ok("loops") => CpuMode::Fission,
            Ok("warp") | Ok("simd") => CpuMode::Warp,
            _ => CpuMode::Auto,
        }
    }
}

/// How one kernel was compiled.
#[derive(Clone, Debug)]
pub enum KernelPath {
    /// A coroutine per CUDA thread; `why` says why not thread loops (empty when the mode
    /// asked for coroutines).
    Coroutine { why: String },
    /// Thread loops (`K.fis`).
    Fission(std::sync::Arc<crate::runtime::fission::FisInfo>),
    /// The warp engine (`K.simd`, run by the thread-loop workers).
    Warp(std::sync::Arc<super::simd::WarpPlan>),
}

/// A kernel's `.reqntid`, as three dimensions.
pub(crate) fn req_ntid(f: &ast::Function) -> Option<[u32; 3]> {
    f.directives.iter().find_map(|d| match d {
        FnDirective::ReqNTid(v, _) if !v.is_empty() => Some([
            v[0],
            v.get(1).copied().unwrap_or(1),
            v.get(2).copied().unwrap_or(1),
        ]),
        _ => None,
    })
}

/// What the thread-loop rewrites of one build make and the lowering borrows: kernels with
/// their stop-reaching calls inlined (`inline.rs`) or yields inserted (`stride.rs`), and the
/// register and label names the inlined copies introduce. The build that lowers the module
/// owns it, so the rewritten kernels live exactly as long as the lowering that reads them.
#[derive(Default)]
pub struct Scratch<'a> {
    functions: typed_arena::Arena<ast::Function<'a>>,
    names: typed_arena::Arena<u8>,
}

impl<'a> Scratch<'a> {
    /// Keeps `f` for the rest of the build.
    pub fn function(&'a self, f: ast::Function<'a>) -> &'a ast::Function<'a> {
        self.functions.alloc(f)
    }

    /// Keeps `name` for the rest of the build.
    pub fn name(&'a self, name: String) -> &'a str {
        self.names.alloc_str(&name)
    }
}

/// Compiles the thread-loop version of every kernel of `module` that allows it (after
/// `lower_module`), deleting their coroutine versions unless `keep_coroutines` (objects keep
/// both: the coroutine entry point is what C code launches). Returns each kernel's path.
/// `block`: the CTA shape to specialize for (`%ntid` constant); a kernel's `.reqntid` takes
/// its place.
pub fn lower_kernels<'c, 'a>(
    l: &mut Lowerer<'c, 'a>,
    module: &'a ast::Module<'a>,
    mode: CpuMode,
    keep_coroutines: bool,
    block: Option<[u32; 3]>,
    skip: &[String],
    scratch: &'a Scratch<'a>,
) -> Vec<(String, KernelPath)> {
    let mut out = Vec::new();
    for it in &module.items {
        let ast::Item::Function(f) = it else { continue };
        let f: &'a ast::Function<'a> = f;
        if f.kind != ast::FnKind::Entry || f.body.is_none() || skip.iter().any(|n| n == f.name) {
            continue;
        }
        let path = if mode == CpuMode::Coroutine {
            KernelPath::Coroutine { why: String::new() }
        } else {
            // A kernel the analysis refuses may be eligible once its calls of device functions
            // that reach a stop are inlined (`inline` declines when there are none).
            let (f, planned) = match analyse(module, f) {
                Err(why) => match inline::inline_stop_calls(module, f, scratch) {
                    Some(g) => (g, analyse(module, g).map_err(|_| why)),
                    None => (f, Err(why)),
                },
                r => (f, r),
            };
            // Stride loops: a yield at each header (`stride.rs`). Interchanged rounds take
            // one-dimensional CTAs only (`cta/interchange.rs`): a kernel without stops known
            // to run others keeps its batched CTA loop.
            let flat = match req_ntid(f).or(block) {
                Some([_, y, z]) => y * z == 1,
                None => true,
            };
            let ntid_x = req_ntid(f).or(block).map(|b| b[0]);
            let (f, planned) = match planned {
                Ok(plan) if plan.has_stops() || flat => {
                    match stride::insert_yields(f, scratch, ntid_x) {
                        Some((g, yields)) => match analyse(module, g) {
                            Ok(mut p) => {
                                p.yields = yields;
                                (g, Ok(p))
                            }
                            Err(_) => (f, Ok(plan)),
                        },
                        None => (f, Ok(plan)),
                    }
                }
                r => (f, r),
            };
            match planned {
                Err(why) => KernelPath::Coroutine { why },
                Ok(plan) => match lower_step(l, f, &plan) {
                    Err(e) => KernelPath::Coroutine { why: e.to_string() },
                    Ok(so) => {
                        let kblock = req_ntid(f).or(block);
                        emit_kernel(l, f.name, &super::layout(f), &so, kblock);
                        if let Some(k) = l.module.get_function(f.name).filter(|_| !keep_coroutines)
                        {
                            if k.as_global_value()
                                .as_pointer_value()
                                .get_first_use()
                                .is_none()
                            {
                                // SAFETY: the coroutine kernel `k` has no use left (checked just above), so deleting it leaves no dangling reference.
                                unsafe { k.delete() };
                            }
                        }
                        let nres = 2 * so.stops.len() + 1;
                        KernelPath::Fission(std::sync::Arc::new(crate::runtime::fission::FisInfo {
                            stops: so.stops,
                            stop_consts: so.stop_consts,
                            frame_bytes: so.frame_bytes,
                            local_bytes: so.local_bytes,
                            must_stop: {
                                let mut v = vec![crate::runtime::fission::NO_STOP; nres];
                                // A round ending at a stride loop's yield goes on with the
                                // loop in `K.fis` (`cta/interchange.rs`), which leaves the
                                // threads elsewhere and says where in `seen`.
                                for (&r, &j) in &so.must_stop {
                                    if so.yields.contains_key(&j) {
                                        continue;
                                    }
                                    if let Some(x) = v.get_mut(r as usize) {
                                        *x = j;
                                    }
                                }
                                v
                            },
                            block: kblock,
                        }))
                    }
                },
            }
        };
        out.push((f.name.to_string(), path));
    }
    out
}

/// Prepares thread-loop code for the optimizer (after the module rewrite): SSA form, then
/// addresses as a base pointer plus an offset (`llvm::fission::gep_addresses`) in the step
/// functions, so that the loop vectorizer can analyse accesses across threads.
pub fn pre_optimize(
    ctx: &Context,
    m: &Module,
    machine: &crate::llvm::cpu::HostMachine,
) -> Result<(), String> {
    machine.run_pipeline(m, "function(sroa)")?;
    // Before InstCombine, which folds the lowering's NaN selects into other shapes.
    let mut f = m.get_first_function();
    while let Some(func) = f {
        if func.get_name().to_bytes().ends_with(b".step") && func.count_basic_blocks() > 0 {
            // SAFETY: a defined function of `m`, in SSA form after `sroa`.
            unsafe { crate::llvm::simd::drop_unseen_nans(lf::raw_fn(func)) };
        }
        f = func.get_next_function();
    }
    machine.run_pipeline(m, "function(early-cse,instcombine<no-verify-fixpoint>)")?;
    let mut f = m.get_first_function();
    while let Some(func) = f {
        if func.get_name().to_bytes().ends_with(b".step") {
            lf::gep_addresses(ctx, func);
            if let Some(k) = lf::shared_arg(func) {
                lf::shared_offsets(func, k);
            }
        }
        f = func.get_next_function();
    }
    if let Ok(p) = std::env::var("PTX2LLVM_FIS_PIPELINE") {
        machine.run_pipeline(m, &p)?;
    }
    if let Some(p) = std::env::var_os("PTX2LLVM_FIS_DUMP") {
        let _ = m.print_to_file(p);
    }
    // A loop of window additions (`private_red::emit_add`: a byte histogram's `hist[data[i]]
    // += 1`) tests the window's base once, a loop-invariant branch with the table's lookup
    // and runtime call on its other side: unswitched, the window's side is a loop of a byte
    // load and an add that the main pipeline unrolls (histogram_global kernel CPU 13.2 ->
    // 8.9 ms; its compile 65 -> 88 ms). It needs the step inlined into the thread loops
    // first, hence a `default<O2>` before it, only in such modules (after the dump of the module
    // before optimization).
    let window = m
        .get_function(crate::runtime::red::WINDOW_FN)
        .is_some_and(|f| {
            f.as_global_value()
                .as_pointer_value()
                .get_first_use()
                .is_some()
        });
    if window {
        machine.run_pipeline(
            m,
            "default<O2>,function(loop-mssa(simple-loop-unswitch<nontrivial>))",
        )?;
    }
    Ok(())
}
