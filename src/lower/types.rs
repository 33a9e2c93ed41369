//! PTX scalar types as the lowering sees them, and their LLVM counterparts.

use crate::isa::Mod;
use crate::llvm::{int_type, BasicTypeEnum, Context};

/// The kind of a PTX fundamental type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum K {
    Pred,
    B,
    U,
    S,
    F,
    BF,
    /// `.f16x2`
    F16x2,
    /// `.bf16x2`
    BF16x2,
    /// `.u16x2`/`.s16x2`
    I16x2,
    /// `.f32x2`
    F32x2,
}

/// A PTX type: kind and width in bits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ty {
    pub k: K,
    pub bits: u32,
}

impl Ty {
    pub const PRED: Ty = Ty {
        k: K::Pred,
        bits: 1,
    };
    pub const fn b(bits: u32) -> Ty {
        Ty { k: K::B, bits }
    }
    pub const fn u(bits: u32) -> Ty {
        Ty { k: K::U, bits }
    }
    pub const fn s(bits: u32) -> Ty {
        Ty { k: K::S, bits }
    }
    pub const fn f(bits: u32) -> Ty {
        Ty { k: K::F, bits }
    }

    /// The type a type modifier names (`.u32`, `.f16x2`, …); `None` for the others.
    pub fn of(m: Mod) -> Option<Ty> {
        Some(match m {
            Mod::Pred => Ty::PRED,
            Mod::B8 => Ty::b(8),
            Mod::B16 => Ty::b(16),
            Mod::B32 => Ty::b(32),
            Mod::B64 => Ty::b(64),
            Mod::B128 => Ty::b(128),
            Mod::U8 => Ty::u(8),
            Mod::U16 => Ty::u(16),
            Mod::U32 => Ty::u(32),
            Mod::U64 => Ty::u(64),
            Mod::S8 => Ty::s(8),
            Mod::S16 => Ty::s(16),
            Mod::S32 => Ty::s(32),
            Mod::S64 => Ty::s(64),
            Mod::F16 => Ty::f(16),
            Mod::F32 => Ty::f(32),
            Mod::F64 => Ty::f(64),
            Mod::Bf16 => Ty { k: K::BF, bits: 16 },
            Mod::F16x2 => Ty {
                k: K::F16x2,
                bits: 32,
            },
            Mod::Bf16x2 => Ty {
                k: K::BF16x2,
                bits: 32,
            },
            Mod::U16x2 | Mod::S16x2 => Ty {
                k: K::I16x2,
                bits: 32,
            },
            Mod::F32x2 => Ty {
                k: K::F32x2,
                bits: 64,
            },
            _ => return None,
        })
    }

    /// The type a type modifier spelling names (for code that builds PTX text).
    pub fn from_spelling(s: &str) -> Option<Ty> {
        crate::isa::Mod::from_spelling(s).and_then(Ty::of)
    }

    pub fn is_float(self) -> bool {
        matches!(self.k, K::F | K::BF | K::F16x2 | K::BF16x2 | K::F32x2)
    }
    pub fn is_signed(self) -> bool {
        self.k == K::S
    }
    pub fn is_int(self) -> bool {
        matches!(self.k, K::B | K::U | K::S)
    }

    /// The LLVM type an operation of this type works on.
    pub fn llvm<'c>(self, ctx: &'c Context) -> BasicTypeEnum<'c> {
        match self.k {
            K::Pred => ctx.bool_type().into(),
            K::B | K::U | K::S => int_type(ctx, self.bits).into(),
            K::F => match self.bits {
                16 => ctx.f16_type().into(),
                32 => ctx.f32_type().into(),
                _ => ctx.f64_type().into(),
            },
            K::BF => ctx.bf16_type().into(),
            K::F16x2 => ctx.f16_type().vec_type(2).into(),
            K::BF16x2 => ctx.bf16_type().vec_type(2).into(),
            K::I16x2 => ctx.i16_type().vec_type(2).into(),
            K::F32x2 => ctx.f32_type().vec_type(2).into(),
        }
    }

    /// The LLVM type a register of this declared type is stored as (packed types as bits).
    pub fn storage<'c>(self, ctx: &'c Context) -> BasicTypeEnum<'c> {
        match self.k {
            K::F16x2 | K::BF16x2 | K::I16x2 | K::F32x2 => int_type(ctx, self.bits).into(),
            _ => self.llvm(ctx),
        }
    }

    /// Same width, as an unsigned-int/bit type.
    pub fn as_bits(self) -> Ty {
        Ty::b(self.bits)
    }
}
