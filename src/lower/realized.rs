//! Records how the lowering realized each instruction — native LLVM IR (including intrinsics
//! and runtime calls) or PTX inline assembly — so that a test can hold the coverage table of
//! `docs/COVERAGE.md` to what the code actually does. The log belongs to the `Lowerer` (one per
//! compilation); the nvptx target returns it in its `Output`.

use std::cell::{Cell, RefCell};
use std::collections::BTreeMap;

use crate::isa::Opcode;

/// How often an opcode was lowered natively and through inline assembly.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Realized {
    pub native: u32,
    pub inline_asm: u32,
}

/// What one compilation realized, per opcode, and how many inline-assembly calls it built
/// (the lowering compares the count before and after an instruction).
#[derive(Debug, Default)]
pub struct Log {
    by_opcode: RefCell<BTreeMap<Opcode, Realized>>,
    inline_asm_calls: Cell<u64>,
}

impl Log {
    /// Counts one inline-assembly call built for the instruction being lowered.
    pub(crate) fn inline_asm_built(&self) {
        self.inline_asm_calls.set(self.inline_asm_calls.get() + 1);
    }

    pub(crate) fn inline_asm_calls(&self) -> u64 {
        self.inline_asm_calls.get()
    }

    pub(crate) fn note(&self, op: Opcode, inline_asm: bool) {
        let mut log = self.by_opcode.borrow_mut();
        let e = log.entry(op).or_default();
        if inline_asm {
            e.inline_asm += 1;
        } else {
            e.native += 1;
        }
    }

    /// The counts per opcode.
    pub fn take(&self) -> BTreeMap<Opcode, Realized> {
        self.by_opcode.take()
    }
}
