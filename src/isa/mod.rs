//! The PTX instruction set, declared once in `ptx.isa` (the manual's notation). build.rs
//! generates the `Opcode` and `Mod` enums from it; `mods` gives modifiers typed meaning.

mod lookup;
mod mods;

pub use lookup::{lookup_mod, lookup_opcode};

include!(concat!(env!("OUT_DIR"), "/isa_gen.rs"));
