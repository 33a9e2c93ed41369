//! The PTX instruction set, declared once in `ptx.isa` (the manual's notation). build.rs
//! generates the `Opcode` and `Mod` enums from it; `lookup` gives the parser fast spelling
//! lookups; `notation` reads the notation, `forms` turns it into typed forms and matches
//! instructions against them, `decoded` gives lowering a typed view of a matched instruction,
//! `mods` classifies modifiers, `requirements` declares the target and PTX ISA version each
//! instruction feature needs (`requirements.txt`), and `coverage` renders the instruction table of
//! `docs/COVERAGE.md`.

pub mod coverage;
pub mod decoded;
pub mod forms;
mod lookup;
mod mods;
pub mod notation;
pub mod order;
pub mod requirements;

pub use decoded::{decode, Decoded, InstructionExt, MatchError};
pub use forms::{isa, Form, FormId};
pub use lookup::{lookup_mod, lookup_opcode};

include!(concat!(env!("OUT_DIR"), "/isa_gen.rs"));
