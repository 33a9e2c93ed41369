//! Evaluation of integer constant expressions by the rules of PTX ISA §4.6.2: literals are
//! `.s64` unless written with a `U` suffix, an operation is unsigned when either operand is,
//! and all arithmetic is 64-bit with wrap-around. Division by zero yields no value.

use super::ast::{BinOp, Expr, UnOp};
use super::span::Span;
use crate::isa::Mod;

/// The span of a division or remainder by zero in `e`, if any (why `eval` gave no value).
pub fn division_by_zero(e: &Expr) -> Option<Span> {
    match e {
        Expr::Binary(op, a, b, span) => {
            if matches!(op, BinOp::Div | BinOp::Rem) && eval(b).is_some_and(|c| c.bits == 0) {
                return Some(*span);
            }
            division_by_zero(a).or_else(|| division_by_zero(b))
        }
        Expr::Unary(_, a, _) | Expr::Cast(_, a, _) | Expr::Mask(_, a, _) => division_by_zero(a),
        Expr::Cond(c, a, b, _) => division_by_zero(c)
            .or_else(|| division_by_zero(a))
            .or_else(|| division_by_zero(b)),
        _ => None,
    }
}

/// A 64-bit constant with its signedness.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Const {
    pub bits: u64,
    pub unsigned: bool,
}

/// Evaluates an integer constant expression (no symbols, no floats) to its 64-bit value.
pub fn eval_int(e: &Expr) -> Option<i64> {
    eval(e).map(|c| c.bits as i64)
}

pub fn eval(e: &Expr) -> Option<Const> {
    Some(match e {
        Expr::Int {
            value, unsigned, ..
        } => Const {
            bits: *value,
            unsigned: *unsigned,
        },
        Expr::Unary(op, a, _) => {
            let a = eval(a)?;
            let bits = match op {
                UnOp::Neg => a.bits.wrapping_neg(),
                UnOp::Plus => a.bits,
                UnOp::Not => !a.bits,
                UnOp::LogNot => (a.bits == 0) as u64,
            };
            Const {
                bits,
                unsigned: a.unsigned && *op != UnOp::LogNot,
            }
        }
        Expr::Cast(ty, a, _) => Const {
            bits: eval(a)?.bits,
            unsigned: *ty == Mod::U64,
        },
        Expr::Cond(c, a, b, _) => {
            if eval(c)?.bits != 0 {
                eval(a)?
            } else {
                eval(b)?
            }
        }
        Expr::Binary(op, a, b, _) => {
            let (a, b) = (eval(a)?, eval(b)?);
            let unsigned = a.unsigned || b.unsigned;
            let (x, y) = (a.bits, b.bits);
            let cmp = |r: bool| Const {
                bits: r as u64,
                unsigned: false,
            };
            let v = |bits: u64| Const { bits, unsigned };
            match op {
                BinOp::Add => v(x.wrapping_add(y)),
                BinOp::Sub => v(x.wrapping_sub(y)),
                BinOp::Mul => v(x.wrapping_mul(y)),
                BinOp::Div | BinOp::Rem if y == 0 => return None,
                BinOp::Div if unsigned => v(x / y),
                BinOp::Div => v((x as i64).wrapping_div(y as i64) as u64),
                BinOp::Rem if unsigned => v(x % y),
                BinOp::Rem => v((x as i64).wrapping_rem(y as i64) as u64),
                BinOp::Shl => v(if y >= 64 { 0 } else { x << y }),
                // The left operand's signedness decides between logical and arithmetic shift.
                BinOp::Shr if a.unsigned => v(if y >= 64 { 0 } else { x >> y }),
                BinOp::Shr => v(((x as i64) >> y.min(63)) as u64),
                BinOp::And => v(x & y),
                BinOp::Or => v(x | y),
                BinOp::Xor => v(x ^ y),
                BinOp::LogAnd => cmp(x != 0 && y != 0),
                BinOp::LogOr => cmp(x != 0 || y != 0),
                BinOp::Eq => cmp(x == y),
                BinOp::Ne => cmp(x != y),
                BinOp::Lt if unsigned => cmp(x < y),
                BinOp::Lt => cmp((x as i64) < (y as i64)),
                BinOp::Le if unsigned => cmp(x <= y),
                BinOp::Le => cmp((x as i64) <= (y as i64)),
                BinOp::Gt if unsigned => cmp(x > y),
                BinOp::Gt => cmp((x as i64) > (y as i64)),
                BinOp::Ge if unsigned => cmp(x >= y),
                BinOp::Ge => cmp((x as i64) >= (y as i64)),
            }
        }
        _ => return None,
    })
}
