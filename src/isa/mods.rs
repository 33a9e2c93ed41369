//! Typed views of modifiers: which modifiers are types, state spaces, rounding modes, memory
//! orderings, scopes, comparisons and so on. Every category is a plain `match` on the generated
//! `Mod` enum, so callers can classify a modifier without knowing where it came from.

use super::Mod;

impl Mod {
    /// A data type usable in declarations (`.reg .b32 r;`): the fundamental types and the opaque
    /// types. Instruction-only formats such as `.tf32` or `.e4m3` are [`Mod::is_instr_type`].
    pub fn is_type(self) -> bool {
        self.type_bits().is_some() || matches!(self, Mod::Texref | Mod::Samplerref | Mod::Surfref)
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

    /// Width in bits of any type an instruction may name: the fundamental types plus the
    /// alternate formats of the tensor-core and conversion instructions (`.tf32` is 32, `.e4m3`
    /// 8, `.e2m1x2` 8, `.e4m3x4` 32, `.b1` 1, `.u4` 4, `.f32x2` 64, `.b1024` 1024).
    pub fn instr_type_bits(self) -> Option<u32> {
        use Mod::*;
        if let Some(b) = self.type_bits() {
            return Some(b);
        }
        Some(match self {
            B1 => 1,
            U2 | S2 => 2,
            U4 | S4 | E2m1 => 4,
            E2m3 | E3m2 | E4m3 | E5m2 | Ue8m0 | Ue4m3 | E2m1x2 => 8,
            E2m3x2 | E3m2x2 | E4m3x2 | E5m2x2 | Ue8m0x2 | E2m1x4 => 16,
            Tf32 | E4m3x4 | E5m2x4 | E2m3x4 | E3m2x4 => 32,
            F32x2 => 64,
            B8x16 | B6x16P32 | B4x16P64 => 128,
            B1024 => 1024,
            _ => return None,
        })
    }

    /// Any type an instruction may name (see [`Mod::instr_type_bits`]).
    pub fn is_instr_type(self) -> bool {
        self.instr_type_bits().is_some()
    }

    /// Floating-point types, scalar and packed, including the alternate formats.
    pub fn is_float_type(self) -> bool {
        use Mod::*;
        matches!(
            self,
            F16 | F16x2
                | Bf16
                | Bf16x2
                | F32
                | F32x2
                | F64
                | Tf32
                | E2m1
                | E2m1x2
                | E2m1x4
                | E2m3
                | E2m3x2
                | E2m3x4
                | E3m2
                | E3m2x2
                | E3m2x4
                | E4m3
                | E4m3x2
                | E4m3x4
                | E5m2
                | E5m2x2
                | E5m2x4
                | Ue8m0
                | Ue8m0x2
                | Ue4m3
        )
    }

    /// Signed integer types (`.s8` … `.s64`, `.s16x2`, `.s4`, `.s2`).
    pub fn is_signed(self) -> bool {
        use Mod::*;
        matches!(self, S8 | S16 | S32 | S64 | S16x2 | S4 | S2)
    }

    /// Unsigned integer types (`.u8` … `.u64`, `.u16x2`, `.u4`, `.u2`).
    pub fn is_unsigned(self) -> bool {
        use Mod::*;
        matches!(self, U8 | U16 | U32 | U64 | U16x2 | U4 | U2)
    }

    /// Signed or unsigned integer types.
    pub fn is_int_type(self) -> bool {
        self.is_signed() || self.is_unsigned()
    }

    /// Untyped bit types (`.b8` … `.b128`, `.b1`).
    pub fn is_bit_type(self) -> bool {
        use Mod::*;
        matches!(self, B1 | B8 | B16 | B32 | B64 | B128)
    }

    /// Packed types that hold several elements in one register (`.f16x2`, `.u16x2`, `.e4m3x2`, …).
    pub fn is_packed(self) -> bool {
        use Mod::*;
        matches!(
            self,
            F16x2
                | Bf16x2
                | U16x2
                | S16x2
                | F32x2
                | E2m1x2
                | E2m1x4
                | E2m3x2
                | E2m3x4
                | E3m2x2
                | E3m2x4
                | E4m3x2
                | E4m3x4
                | E5m2x2
                | E5m2x4
                | Ue8m0x2
        )
    }

    /// Memory state spaces an instruction can address (`.global`, `.shared::cta`, `.param`, …).
    pub fn is_space(self) -> bool {
        use Mod::*;
        matches!(
            self,
            Global
                | Shared
                | SharedCta
                | SharedCluster
                | Local
                | Const
                | Param
                | ParamEntry
                | ParamFunc
        )
    }

    /// State spaces of declarations (`.reg`, `.sreg`, `.tex` and the memory spaces).
    pub fn is_decl_space(self) -> bool {
        self.is_space() || matches!(self, Mod::Reg | Mod::Sreg | Mod::Tex)
    }

    /// Rounding modifiers: floating-point (`.rn .rz .rm .rp .rna .rs`) and integer
    /// (`.rni .rzi .rmi .rpi`).
    pub fn is_rounding(self) -> bool {
        use Mod::*;
        matches!(self, Rn | Rz | Rm | Rp | Rna | Rs | Rni | Rzi | Rmi | Rpi)
    }

    /// Integer rounding modifiers of `cvt` (`.rni .rzi .rmi .rpi`).
    pub fn is_int_rounding(self) -> bool {
        matches!(self, Mod::Rni | Mod::Rzi | Mod::Rmi | Mod::Rpi)
    }

    /// Memory-consistency scopes (`.cta .cluster .gpu .sys`, and `membar`'s `.gl`).
    pub fn is_scope(self) -> bool {
        use Mod::*;
        matches!(self, Cta | Cluster | Gpu | Sys | Gl)
    }

    /// Memory-ordering semantics (`.relaxed .acquire .release .acq_rel .sc .weak .volatile`).
    pub fn is_sem(self) -> bool {
        use Mod::*;
        matches!(
            self,
            Relaxed | Acquire | Release | AcqRel | Sc | Weak | Volatile
        )
    }

    /// Comparison operators of `set`, `setp` and the video `vset` instructions.
    pub fn is_cmp(self) -> bool {
        use Mod::*;
        matches!(
            self,
            Eq | Ne
                | Lt
                | Le
                | Gt
                | Ge
                | Lo
                | Ls
                | Hi
                | Hs
                | Equ
                | Neu
                | Ltu
                | Leu
                | Gtu
                | Geu
                | Num
                | Nan
        )
    }

    /// Boolean combiners of `set`/`setp` (`.and .or .xor`).
    pub fn is_bool_op(self) -> bool {
        matches!(self, Mod::And | Mod::Or | Mod::Xor)
    }

    /// Cache operators of `ld`/`st`/`cp.async` (`.ca .cg .cs .lu .cv .wb .wt`).
    pub fn is_cache_op(self) -> bool {
        use Mod::*;
        matches!(self, Ca | Cg | Cs | Lu | Cv | Wb | Wt)
    }

    /// Element count of a vector modifier (`.v2` → 2, `.v4` → 4, `.v8` → 8).
    pub fn vec_len(self) -> Option<u8> {
        match self {
            Mod::V2 => Some(2),
            Mod::V4 => Some(4),
            Mod::V8 => Some(8),
            _ => None,
        }
    }
}
