//! Which kernels may privatize their global integer additions (`runtime/red.rs`): those in
//! which no thread can observe a global location that a `red`/`atom .add` changes before the
//! launch ends. The kernel's accesses to memory other threads may reach are then only:
//!
//! - `red.global.add` / `atom.global.add` on `.u32`, `.s32`, `.u64` or `.s64`, relaxed (no
//!   `.sem` or `.relaxed`), not `.sys` scope, with the old value unused (`atom` into `_` or a
//!   register no other instruction names), all of one width (32- and 64-bit additions to
//!   overlapping words carry differently in different orders);
//! - loads of memory no thread writes during the launch (`ld.global.nc`, `ldu.global`);
//! - anything on `.shared`, `.local`, `.param` and `.const`.
//!
//! Anything else that may reach global memory (generic addresses, `st.global`, other atomics,
//! `cp`, texture and surface instructions, fences, calls) keeps every addition atomic at once.
//! Integer additions commute and associate exactly, so summing them per worker first gives
//! the same memory contents a GPU leaves.

use std::collections::HashMap;

use crate::llvm::*;
use crate::lower::Lowerer;
use crate::runtime::abi::offset;
use crate::syntax::ast::{Block, Function, Instruction, Operand, Statement};

/// The worker's table of privatized additions, from the thread context `t`
/// (`Thread::reserved[1]`).
pub fn table_of<'c>(l: &Lowerer<'c, '_>, t: PointerValue<'c>) -> PointerValue<'c> {
    let at = l.i64().const_int(offset::RED_TABLE as u64, false);
    let p = unsafe { l.b.build_gep(l.ctx.i8_type(), t, &[at], "").unwrap() };
    l.b.build_load(l.ptr(crate::lower::Space::Generic), p, "red.table")
        .unwrap()
        .into_pointer_value()
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
    for i in &ins {
        if let Some(g) = i.guard {
            *named.entry(g.pred).or_default() += 1;
        }
        for o in &i.operands {
            names(o, &mut |n| *named.entry(n).or_default() += 1);
        }
    }
    let mut found = false;
    // One width: additions of 32 and 64 bits to overlapping words carry differently in
    // different orders, and the sums are applied in table order.
    let mut widths = (false, false);
    for i in &ins {
        let mods: Vec<&str> = i.mods.iter().map(|m| m.spelling()).collect();
        let has = |m: &str| mods.contains(&m);
        let local_space = mods.iter().any(|m| {
            matches!(
                *m,
                ".shared" | ".shared::cta" | ".local" | ".param" | ".const"
            )
        });
        match i.opcode.spelling() {
            "ld" if local_space || (has(".global") && has(".nc")) => {}
            "ldu" if has(".global") => {}
            "st" | "ld" | "ldu" if local_space => {}
            "st" | "ld" | "ldu" => return false,
            "atom" | "red" if local_space => {}
            "atom" | "red" => {
                let int = mods
                    .iter()
                    .any(|m| matches!(*m, ".u32" | ".s32" | ".u64" | ".s64"));
                let relaxed = !mods
                    .iter()
                    .any(|m| matches!(*m, ".acquire" | ".release" | ".acq_rel" | ".sys"));
                let plain = !mods.iter().any(|m| {
                    matches!(
                        *m,
                        ".v2" | ".v4" | ".v8" | ".mmio" | ".async" | ".shared::cluster"
                    )
                });
                let unused = i.opcode.spelling() == "red"
                    || match i.operands.first() {
                        Some(Operand::Sink(_)) => true,
                        Some(Operand::Name {
                            name, comp: None, ..
                        }) => named.get(name) == Some(&1),
                        _ => false,
                    };
                if !(has(".global") && has(".add") && int && relaxed && plain && unused) {
                    return false;
                }
                if has(".u64") || has(".s64") {
                    widths.1 = true;
                } else {
                    widths.0 = true;
                }
                found = true;
            }
            "call" | "membar" | "fence" | "cp" | "tex" | "tld4" | "txq" | "suld" | "sust"
            | "sured" | "suq" | "wmma" | "multimem" | "discard" | "stmatrix" | "tensormap" => {
                return false
            }
            _ => {}
        }
    }
    found && !(widths.0 && widths.1)
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

fn names<'a>(o: &Operand<'a>, f: &mut impl FnMut(&'a str)) {
    match o {
        Operand::Name { name, .. } => f(name),
        Operand::Vec(v, _) => v.iter().for_each(|x| names(x, f)),
        Operand::Pair(a, b, _) => {
            names(a, f);
            names(b, f);
        }
        Operand::Addr(a) => {
            if let Some(b) = a.base {
                f(b);
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kernel(body: &str) -> bool {
        let src = format!(
            ".version 7.0\n.target sm_70\n.address_size 64\n.visible .entry k(.param .u64 a, \
             .param .u64 h)\n{{\n.reg .b32 %r<9>;\n.reg .b64 %rd<9>;\n.shared .b32 s[256];\n\
             ld.param.u64 %rd1, [a];\nld.param.u64 %rd2, [h];\n{body}\nret;\n}}\n"
        );
        let src: &'static str = Box::leak(src.into_boxed_str());
        let (m, d) = crate::syntax::parse(src);
        assert!(d.is_empty(), "{d:?}");
        let m: &'static _ = Box::leak(Box::new(m));
        let f = m
            .items
            .iter()
            .find_map(|i| match i {
                crate::syntax::ast::Item::Function(f) => Some(&**f),
                _ => None,
            })
            .unwrap();
        eligible(f)
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
    fn anything_that_could_observe_the_sums_keeps_atomics() {
        // The old value is used.
        assert!(!kernel(
            "atom.global.add.u32 %r3, [%rd2], 1;\nst.shared.u32 [s], %r3;"
        ));
        // A plain global load may read a location being added to.
        assert!(!kernel(
            "ld.global.u32 %r1, [%rd1];\nred.global.add.u32 [%rd2], %r1;"
        ));
        // A store to global memory, a generic access, a float addition, a fence.
        assert!(!kernel(
            "st.global.u32 [%rd1], 1;\nred.global.add.u32 [%rd2], 1;"
        ));
        assert!(!kernel(
            "ld.u32 %r1, [%rd1];\nred.global.add.u32 [%rd2], 1;"
        ));
        assert!(!kernel("red.global.add.f32 [%rd2], 0f3F800000;"));
        assert!(!kernel("membar.gl;\nred.global.add.u32 [%rd2], 1;"));
        assert!(!kernel("red.release.gpu.global.add.u32 [%rd2], 1;"));
        // Both widths.
        assert!(!kernel(
            "red.global.add.u32 [%rd2], 1;\nred.global.add.u64 [%rd2], %rd1;"
        ));
        // Nothing to privatize.
        assert!(!kernel("ld.global.nc.u32 %r1, [%rd1];"));
    }
}
