//! Typed views of modifiers: which modifiers are types, state spaces, rounding modes, etc.

use super::Mod;

impl Mod {
    /// A data type usable in declarations and instruction type slots.
    pub fn is_type(self) -> bool {
        self.type_bits().is_some()
            || matches!(self, Mod::Texref | Mod::Samplerref | Mod::Surfref)
    }

    /// Width in bits of a fundamental type (`.pred` is 1).
    pub fn type_bits(self) -> Option<u32> {
        use Mod::*;
        Some(match self {
            Pred => 1,
            B8 | U8 | S8 => 8,
            B16 | U16 | S16 | F16 | Bf16 => 16,
            B32 | U32 | S32 | F32 | F16x2 | Bf16x2 | U16x2 | S16x2 => 32,
            B64 | U64 | S64 | F64 => 64,
            B128 => 128,
            _ => return None,
        })
    }
}
