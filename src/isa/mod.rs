//! The PTX instruction set, declared once in `ptx.isa` (the manual's notation). build.rs
//! generates the `Opcode` and `Mod` enums from it; `mods` gives modifiers typed meaning.

mod mods;

include!(concat!(env!("OUT_DIR"), "/isa_gen.rs"));
