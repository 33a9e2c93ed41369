//! Which kernels may privatize their global additions (`runtime/red.rs`): those in which no
//! thread can observe a global location that a `red`/`atom .add` changes before the launch
//! ends. The kernel's accesses to memory other threads may reach are then only:
//!
//! - `red.global.add` / `atom.global.add` on `.u32`, `.s32`, `.u64`, `.s64`, `.f32` or
//!   `.f64`, relaxed (no `.sem` or `.relaxed`), not `.sys` scope, with the old value unused
//!   (`atom` into `_` or a register no other instruction names), all of one kind (32- and
//!   64-bit additions to overlapping words carry differently in different orders; integer
//!   sums and logged float additions are applied apart);
//! - loads of memory no thread writes during the launch (`ld.global.nc`, `ldu.global`);
//! - anything on `.shared`, `.local`, `.param` and `.const`.
//!
//! Anything else that may reach global memory (generic addresses, `st.global`, other atomics,
//! `cp`, texture and surface instructions, fences, calls) keeps every addition atomic at once.
//! Integer additions commute and associate exactly, so summing them per worker first gives
//! the same memory contents a GPU leaves. Float additions are not summed ahead: each worker
//! logs them and adds each address's run in order in one atomic step, one of the orders a
//! GPU's atomics may take.

use std::collections::HashMap;

use crate::isa::Mod;
use crate::llvm::*;
use crate::lower::{FnState, Lowerer, Space};
use crate::runtime::abi::offset;
use crate::runtime::red;
use crate::syntax::ast::{Block, Function, Instruction, Operand, Statement};

/// A constant 0: the window's base where there is no table (`emit_add`).
const NO_WINDOW: &str = "ptx2llvm.red.no_window";

/// `red.global.add` of `v` to `ptr` summed in the worker's table (`Thread::reserved[1]` of the
/// thread context `t`): an address already there adds to its entry here; any other is checked
/// with a volatile atomic addition of 0, in kernel code, where an invalid address faults as
/// any access of the kernel does, before `ptx2llvm_rt_red_add_u32/u64(ptr, v, 1)` makes its
/// entry (`runtime/red.rs`: an unchecked address never enters the table, so a faulting one
/// cannot reach the runtime's own atomic when the CTA is replayed). Without a table (the
/// coroutine engine) the call `(ptr, v, 0)` looks up the entry and returns 1 for an address
/// not there, which is then checked the same way. A 32-bit `ptr` comes untested for alignment
/// (`lower/atomic.rs`): it is tested on that way in only.
///
/// With `base` (`Target::private_red_add`'s hint) a 32-bit addition first tries the worker's
/// window (`runtime::red::Table::wb`): when `base` is the window's and `ptr - base` a word
/// of it, the sum goes to `w32` there, no key compared and no call (the miss path stays out
/// of the run). In a loop `hist[data[i]] += 1` the compare of `base` is the same each
/// iteration and the offset's range and alignment are known (`4 * zext(u8)`): the addition is
/// a load, an add and a store, where the table's key compare on the loaded byte's address
/// doubled it (histogram_global). A miss makes the window of `base` once kernel code has
/// checked a word in each of its pages (`ptx2llvm_rt_red_window`).
#[allow(clippy::too_many_arguments)]
pub fn emit_add<'c, 'a>(
    l: &Lowerer<'c, 'a>,
    fs: &mut FnState<'c, 'a>,
    t: PointerValue<'c>,
    ptr: PointerValue<'c>,
    v: BasicValueEnum<'c>,
    (ord, scope): (Ordering, &str),
    base: Option<PointerValue<'c>>,
) {
    let v = match v {
        BasicValueEnum::FloatValue(f) => return emit_fadd(l, fs, ptr, f, (ord, scope)),
        v => v.into_int_value(),
    };
    let b = &l.b;
    let i64t = l.i64();
    let c = |v: u64| i64t.const_int(v, false);
    let wide = v.get_type().get_bit_width() == 64;
    let at = c(offset::RED_TABLE as u64);
    // SAFETY: `build_gep` only builds IR (the worker's table in the context); nothing is dereferenced here.
    let tp = unsafe { b.build_gep(l.ctx.i8_type(), t, &[at], "").unwrap() };
    let tbl = b
        .build_load(l.ptr(Space::Generic), tp, "red.table")
        .unwrap()
        .into_pointer_value();
    // The runtime sets a context's table before its first kernel call and never changes it
    // (`runtime/launch.rs`): invariant, so a loop of additions loads it once instead of after
    // every addition's store to the table, which may alias the context as far as LLVM knows.
    if let Some(i) = tbl.as_instruction_value() {
        let _ = i.set_metadata(
            l.ctx.metadata_node(&[]),
            l.ctx.get_kind_id("invariant.load"),
        );
    }
    let (lookup, fast, slow, check, done) = (
        l.new_block(fs, "red.lookup"),
        l.new_block(fs, "red.fast"),
        l.new_block(fs, "red.slow"),
        l.new_block(fs, "red.check"),
        l.new_block(fs, "red.done"),
    );
    let null = b.build_is_null(tbl, "").unwrap();
    // With a base hint (32-bit additions): the window, whose base is compared first, in the
    // block every addition passes, so that LICM takes the invariant load and the compare out
    // of a loop of them (in the window's own block InstCombine sank them, and folded the
    // load's pointer select to the table's, which LICM may not load ahead). Without a table
    // the base read is a constant 0, and `inbase` implies a table.
    let base = base.filter(|_| !wide).map(|bp| {
        let none = l.module.get_global(NO_WINDOW).unwrap_or_else(|| {
            let g = l.module.add_global(i64t, None, NO_WINDOW);
            g.set_initializer(&i64t.const_zero());
            g.set_constant(true);
            g.set_linkage(inkwell::module::Linkage::Private);
            g
        });
        // SAFETY: `build_gep` only builds IR (the window's base in the table, a null table's
        // address unused); nothing is dereferenced here.
        let wbp = unsafe {
            b.build_gep(l.ctx.i8_type(), tbl, &[c(red::at::WB)], "")
                .unwrap()
        };
        let wbp = b
            .build_select(null, none.as_pointer_value(), wbp, "")
            .unwrap()
            .into_pointer_value();
        let wb = b.build_load(i64t, wbp, "red.wb").unwrap();
        // Invariant as far as LLVM may know (the window's sum stores could alias it
        // otherwise): the runtime sets it once, from 0 to a base, between two flushes (which
        // run outside kernel code), and either value is right at any time: 0 sends the
        // addition to the table, whose sums are added at the flush as the window's are.
        if let Some(i) = wb.as_instruction_value() {
            let _ = i.set_metadata(
                l.ctx.metadata_node(&[]),
                l.ctx.get_kind_id("invariant.load"),
            );
        }
        let wb = wb.into_int_value();
        let bi = b.build_ptr_to_int(bp, i64t, "").unwrap();
        let same = b.build_int_compare(IntPredicate::EQ, bi, wb, "").unwrap();
        let open = b.build_int_compare(IntPredicate::NE, wb, c(0), "").unwrap();
        let inbase = b.build_and(same, open, "red.inbase").unwrap();
        let (win, inwin, tables) = (
            l.new_block(fs, "red.window"),
            l.new_block(fs, "red.inwin"),
            l.new_block(fs, "red.tables"),
        );
        let br = b.build_conditional_branch(inbase, win, tables).unwrap();
        likely(l, br, true);
        // The offset's range and alignment: known where the address is `base + 4 * byte`.
        b.position_at_end(win);
        let pi = b.build_ptr_to_int(ptr, i64t, "").unwrap();
        let off = b.build_int_sub(pi, bi, "").unwrap();
        let inside = b
            .build_int_compare(IntPredicate::ULT, off, c(4 * red::WINDOW as u64), "")
            .unwrap();
        let low = b.build_and(off, c(3), "").unwrap();
        let word = b
            .build_int_compare(IntPredicate::EQ, low, c(0), "")
            .unwrap();
        let ok = b.build_and(inside, word, "").unwrap();
        let br = b.build_conditional_branch(ok, inwin, lookup).unwrap();
        likely(l, br, true);
        b.position_at_end(inwin);
        let at = b.build_int_add(off, c(red::at::W32), "").unwrap();
        // SAFETY: `build_gep` only builds IR (the word's sum in the window); nothing is dereferenced here.
        let sp = unsafe { b.build_gep(l.ctx.i8_type(), tbl, &[at], "").unwrap() };
        let sum = b.build_load(l.i32(), sp, "").unwrap().into_int_value();
        b.build_store(sp, b.build_int_add(sum, v, "").unwrap())
            .unwrap();
        b.build_unconditional_branch(done).unwrap();
        b.position_at_end(tables);
        bi
    });
    let br = b.build_conditional_branch(null, slow, lookup).unwrap();
    likely(l, br, false);
    // The entry of the key (`runtime::red::Table`).
    b.position_at_end(lookup);
    let key = b.build_ptr_to_int(ptr, i64t, "").unwrap();
    let key = b.build_or(key, c(wide as u64), "").unwrap();
    // `runtime::red::slot`: the word index (bit 0 of a 64-bit key is below the shift).
    let h = b
        .build_right_shift(key, c(2 + wide as u64), false, "")
        .unwrap();
    let slots = red::SLOTS as u64;
    let slot = b.build_and(h, c(slots - 1), "").unwrap();
    // SAFETY: `build_gep` only builds IR (a key slot of the table); nothing is dereferenced here.
    let kp = unsafe { b.build_gep(i64t, tbl, &[slot], "").unwrap() };
    let have = b.build_load(i64t, kp, "").unwrap().into_int_value();
    let hit = b
        .build_int_compare(IntPredicate::EQ, have, key, "")
        .unwrap();
    // Not there: the runtime would not find it either.
    let br = b.build_conditional_branch(hit, fast, check).unwrap();
    likely(l, br, true);
    b.position_at_end(fast);
    let si = b.build_int_add(slot, c(slots), "").unwrap();
    // SAFETY: `build_gep` only builds IR (a sum slot of the table); nothing is dereferenced here.
    let sp = unsafe { b.build_gep(i64t, tbl, &[si], "").unwrap() };
    let sum = b.build_load(i64t, sp, "").unwrap().into_int_value();
    let v64 = b.build_int_z_extend_or_bit_cast(v, i64t, "").unwrap();
    b.build_store(sp, b.build_int_add(sum, v64, "").unwrap())
        .unwrap();
    b.build_unconditional_branch(done).unwrap();
    // No table at hand: the runtime looks the entry up.
    b.position_at_end(slow);
    let f = if wide {
        "ptx2llvm_rt_red_add_u64"
    } else {
        "ptx2llvm_rt_red_add_u32"
    };
    let fresh = l
        .call(
            f,
            Some(l.i32().into()),
            &[ptr.into(), v.into(), l.c32(0).into()],
        )
        .expect("a call with a result")
        .into_int_value();
    let new = b
        .build_int_compare(IntPredicate::NE, fresh, l.c32(0), "")
        .unwrap();
    b.build_conditional_branch(new, check, done).unwrap();
    b.position_at_end(check);
    // A 32-bit addition's alignment is tested here, on the way into the table, and not before
    // the lookup (`lower/atomic.rs` leaves it to this function): a found key was tested when
    // it entered, and no misaligned address is a key (entries are tested 4-byte aligned
    // addresses, open slots hold 4-byte aligned keys), so it costs the common case nothing.
    // A 64-bit key is the address with bit 0 set, which an address one byte past an entry's
    // would find too: those are tested before the lookup.
    if !wide {
        crate::lower::memory::check_aligned(
            l,
            ptr,
            4,
            crate::runtime::fault::MisalignedAccess::Atomic,
        );
    }
    // Volatile: an idempotent atomic whose result is unused would be optimized away.
    let zero = v.get_type().const_zero();
    let probe = atomic_rmw(l.ctx, b, RmwOp::Add, ptr, zero.into(), ord, scope);
    if let Some(i) = probe.as_instruction_value() {
        let _ = i.set_volatile(true);
    }
    l.call(
        f,
        Some(l.i32().into()),
        &[ptr.into(), v.into(), l.c32(1).into()],
    );
    if let Some(bi) = base {
        let pi = b.build_ptr_to_int(ptr, i64t, "").unwrap();
        l.call(red::WINDOW_FN, None, &[bi.into(), pi.into()]);
    }
    b.build_unconditional_branch(done).unwrap();
    b.position_at_end(done);
}

/// Weights a table branch `br` towards its first (`first`) or second successor: each
/// addition's runtime call clobbers every vector register, and without weights the register
/// allocator reloads the thread loop's vector invariants where the paths join, on the hit
/// path too (histogram_global: ten 64-byte reloads per byte). Once the miss is cold they are
/// reloaded after the call.
fn likely<'c>(l: &Lowerer<'c, '_>, br: inkwell::values::InstructionValue<'c>, first: bool) {
    let (hot, cold) = (
        l.i32().const_int(1 << 20, false),
        l.i32().const_int(1, false),
    );
    let (a, b) = if first { (hot, cold) } else { (cold, hot) };
    let weights = l.ctx.metadata_node(&[
        l.ctx.metadata_string("branch_weights").into(),
        a.into(),
        b.into(),
    ]);
    br.set_metadata(weights, l.ctx.get_kind_id("prof")).unwrap();
}

/// `red.global.add` of float `v` (`f32`/`f64`, already the GPU's NaN when a NaN) to `ptr`:
/// logged in order in the worker's table by `ptx2llvm_rt_red_add_f32/f64(ptr, bits, 0)`
/// (`runtime/red.rs`; the warp engine appends to the log itself where it can,
/// `simd/lanes.rs`), which returns 1 for an address that is not the one of the worker's
/// previous float addition: that address is checked with a volatile integer atomic addition
/// of 0 (a float one of -0.0 would still change a NaN's bits in memory) and the value logged
/// by a second call (`checked` 1). A call, not inline code as for integers: the warp engine
/// runs each lane's call in lane order, where vector code reading the log would not.
fn emit_fadd<'c, 'a>(
    l: &Lowerer<'c, 'a>,
    fs: &mut FnState<'c, 'a>,
    ptr: PointerValue<'c>,
    v: FloatValue<'c>,
    (ord, scope): (Ordering, &str),
) {
    let b = &l.b;
    let wide = v.get_type() == l.ctx.f64_type();
    let it = l.int(if wide { 64 } else { 32 });
    let bits = b.build_bit_cast(v, it, "").unwrap();
    let f = red::FLOAT_ADD[wide as usize];
    let fresh = l
        .call(
            f,
            Some(l.i32().into()),
            &[ptr.into(), bits, l.c32(0).into()],
        )
        .expect("a call with a result")
        .into_int_value();
    let (check, done) = (l.new_block(fs, "fred.check"), l.new_block(fs, "fred.done"));
    let new = b
        .build_int_compare(IntPredicate::NE, fresh, l.c32(0), "")
        .unwrap();
    b.build_conditional_branch(new, check, done).unwrap();
    b.position_at_end(check);
    let probe = atomic_rmw(
        l.ctx,
        b,
        RmwOp::Add,
        ptr,
        it.const_zero().into(),
        ord,
        scope,
    );
    if let Some(i) = probe.as_instruction_value() {
        let _ = i.set_volatile(true);
    }
    l.call(
        f,
        Some(l.i32().into()),
        &[ptr.into(), bits, l.c32(1).into()],
    );
    b.build_unconditional_branch(done).unwrap();
    b.position_at_end(done);
}

/// Whether kernel `f` qualifies and has at least one such addition.
pub fn eligible(f: &Function) -> bool {
    let Some(body) = f.body.as_ref() else {
        return false;
    };
    let mut ins = Vec::new();
    collect(body, &mut ins);
    // How often each register is named anywhere (an `atom`'s old value must be named only
    // by the `atom` itself).
    let mut named: HashMap<&str, u32> = HashMap::new();
    let mut names = Vec::new();
    for i in &ins {
        names.clear();
        names.extend(i.guard.map(|g| g.pred));
        for o in &i.operands {
            super::fission::analysis::names_in(o, &mut names);
        }
        for n in &names {
            *named.entry(n).or_default() += 1;
        }
    }
    // One kind of addition: 32- and 64-bit additions to overlapping words carry differently in
    // different orders, and the integer sums and the float log are applied in their own
    // orders, not a thread's program order between them.
    let mut kind: Option<Mod> = None;
    for i in &ins {
        let mods = &i.mods;
        let has = |m: Mod| mods.contains(&m);
        let local_space = mods.iter().any(|m| {
            matches!(
                *m,
                Mod::Shared | Mod::SharedCta | Mod::Local | Mod::Param | Mod::Const
            )
        });
        let op = i.opcode.spelling();
        match op {
            // Reads of memory no thread writes during the launch.
            "ld" | "ldu" if has(Mod::Global) && (has(Mod::Nc) || op == "ldu") => {}
            "st" | "ld" | "ldu" if local_space => {}
            "st" | "ld" | "ldu" => return false,
            "atom" | "red" if local_space => {}
            "atom" | "red" => {
                let Some(ty) = mods.iter().copied().find(|m| {
                    matches!(
                        *m,
                        Mod::U32 | Mod::S32 | Mod::U64 | Mod::S64 | Mod::F32 | Mod::F64
                    )
                }) else {
                    return false;
                };
                let relaxed = !mods
                    .iter()
                    .any(|m| matches!(*m, Mod::Acquire | Mod::Release | Mod::AcqRel | Mod::Sys));
                let plain = !mods.iter().any(|m| {
                    matches!(
                        *m,
                        Mod::V2 | Mod::V4 | Mod::V8 | Mod::Mmio | Mod::Async | Mod::SharedCluster
                    )
                });
                let unused = op == "red"
                    || match i.operands.first() {
                        Some(Operand::Sink(_)) => true,
                        Some(Operand::Name {
                            name, comp: None, ..
                        }) => named.get(name) == Some(&1),
                        _ => false,
                    };
                if !(has(Mod::Global) && has(Mod::Add) && relaxed && plain && unused) {
                    return false;
                }
                let ty = match ty {
                    Mod::S32 => Mod::U32,
                    Mod::S64 => Mod::U64,
                    t => t,
                };
                if kind.is_some_and(|k| k != ty) {
                    return false;
                }
                kind = Some(ty);
            }
            "call" | "membar" | "fence" | "cp" | "tex" | "tld4" | "txq" | "suld" | "sust"
            | "sured" | "suq" | "wmma" | "multimem" | "discard" | "stmatrix" | "tensormap" => {
                return false
            }
            _ => {}
        }
    }
    kind.is_some()
}

fn collect<'x, 'a>(b: &'x Block<'a>, out: &mut Vec<&'x Instruction<'a>>) {
    for s in &b.stmts {
        match s {
            Statement::Instr(i) => out.push(i),
            Statement::Block(b) => collect(b, out),
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kernel(body: &str) -> bool {
        let src = format!(
            ".version 7.0\n.target sm_70\n.address_size 64\n.visible .entry k(.param .u64 a, \
             .param .u64 h)\n{{\n.reg .b32 %r<9>;\n.reg .b64 %rd<9>;\n.reg .f32 %f<9>;\n.reg .b16 %rs<9>;\n.shared .b32 s[256];\n\
             ld.param.u64 %rd1, [a];\nld.param.u64 %rd2, [h];\n{body}\nret;\n}}\n"
        );
        crate::syntax::with_kernel(&src, eligible)
    }

    #[test]
    fn histogram_shape_qualifies() {
        assert!(kernel(
            "ld.global.nc.u8 %r1, [%rd1];\natom.shared.add.u32 %r2, [s], 1;\n\
             atom.global.add.u32 %r3, [%rd2], %r1;\nred.global.add.s32 [%rd2+8], %r1;"
        ));
        assert!(kernel("red.global.add.u64 [%rd2], %rd1;"));
    }

    #[test]
    fn block_sum_shape_qualifies() {
        // A block reduction's one float sum per CTA (`reduce_halving`), either width.
        assert!(kernel(
            "ld.global.nc.f32 %f1, [%rd1];\nst.shared.f32 [s], %f1;\nld.shared.f32 %f2, [s];\n\
             atom.global.add.f32 %f3, [%rd2], %f2;"
        ));
        assert!(kernel("red.global.add.f64 [%rd2], 0d3FF0000000000000;"));
        // The old value used.
        assert!(!kernel(
            "atom.global.add.f32 %f3, [%rd2], 0f3F800000;\nst.shared.f32 [s], %f3;"
        ));
    }

    #[test]
    fn anything_that_could_observe_the_sums_keeps_atomics() {
        // The old value is used.
        assert!(!kernel(
            "atom.global.add.u32 %r3, [%rd2], 1;\nst.shared.u32 [s], %r3;"
        ));
        // A plain global load may read a location being added to.
        assert!(!kernel(
            "ld.global.u32 %r1, [%rd1];\nred.global.add.u32 [%rd2], %r1;"
        ));
        // A store to global memory, a generic access, a fence.
        assert!(!kernel(
            "st.global.u32 [%rd1], 1;\nred.global.add.u32 [%rd2], 1;"
        ));
        assert!(!kernel(
            "ld.u32 %r1, [%rd1];\nred.global.add.u32 [%rd2], 1;"
        ));
        assert!(!kernel(
            "ld.global.f32 %f1, [%rd1];\nred.global.add.f32 [%rd2], %f1;"
        ));
        assert!(!kernel("membar.gl;\nred.global.add.u32 [%rd2], 1;"));
        assert!(!kernel("red.release.gpu.global.add.u32 [%rd2], 1;"));
        // Both widths.
        assert!(!kernel(
            "red.global.add.u32 [%rd2], 1;\nred.global.add.u64 [%rd2], %rd1;"
        ));
        // Float and integer, two float widths, a half-precision addition.
        assert!(!kernel(
            "red.global.add.f32 [%rd2], 0f3F800000;\nred.global.add.u32 [%rd2+4], 1;"
        ));
        assert!(!kernel(
            "red.global.add.f32 [%rd2], 0f3F800000;\nred.global.add.f64 [%rd2+8], 0d3FF0000000000000;"
        ));
        assert!(!kernel("red.global.add.noftz.f16 [%rd2], %rs1;"));
        // Nothing to privatize.
        assert!(!kernel("ld.global.nc.u32 %r1, [%rd1];"));
    }
}
