//! Records how the lowering realized each instruction — native LLVM IR (including intrinsics
//! and runtime calls) or PTX inline assembly — so that a test can hold the coverage table of
//! `docs/COVERAGE.md` to what the code actually does. Recording is off unless a caller asks
//! for it with [`record`]; when off, noting an instruction costs one thread-local check.

use std::cell::RefCell;
use std::collections::BTreeMap;

use crate::isa::Opcode;

/// How often an opcode was lowered natively and through inline assembly.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Realized {
    pub native: u32,
    pub inline_asm: u32,
}

thread_local! {
    static LOG: RefCell<Option<BTreeMap<Opcode, Realized>>> = const { RefCell::new(None) };
}

/// Runs `f` with recording on and returns its result with what was recorded on this thread.
pub fn record<R>(f: impl FnOnce() -> R) -> (R, BTreeMap<Opcode, Realized>) {
    let outer = LOG.with(|l| l.borrow_mut().replace(BTreeMap::new()));
    let r = f();
    let log = LOG
        .with(|l| std::mem::replace(&mut *l.borrow_mut(), outer))
        .unwrap_or_default();
    (r, log)
}

pub(crate) fn note(op: Opcode, inline_asm: bool) {
    LOG.with(|l| {
        if let Some(log) = l.borrow_mut().as_mut() {
            let e = log.entry(op).or_default();
            if inline_asm {
                e.inline_asm += 1;
            } else {
                e.native += 1;
            }
        }
    });
}
