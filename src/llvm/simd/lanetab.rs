//! Lane tables (issue 17): a varying 32-bit integer of the warp function whose lane `l` is
//! lane 0's plus a constant `d[l]` known at compile time, found on the vector code as built
//! (`Table::of`). A `.shared` access whose offsets are such a table with every lane in one
//! 256-byte-aligned block (a compare-exchange partner at a constant distance: `t ^ 4`,
//! `2t - (t & 15)` and that plus 16) reads the block by two plain vector loads and one
//! constant lane permutation, and writes it by constant permutations and masked stores
//! (`lanes.rs`): none of the run-time tests of `Access::Window`'s offsets.
//!
//! Why on the built vectors and not the source: a table needs lane 0's low bits (the `and`
//! of `2t - (t & 15)` keeps lanes apart only when lane 0's `t` is a multiple of 32), which the
//! vector code states as a splat of a scalar whose low zero bits are read off its own tree
//! (`mul %warp, 32`, `urem` by a power of two), beside the lane constants `<0, 1, ..., 31>`.
//!
//! Every value is taken modulo 2^32 (the offsets are 32-bit): additions, subtractions,
//! multiplications, left shifts, and masks and flips by constants all commute with that, and
//! casts between widths of 32 bits and more keep the low 32 bits. An `and` or `xor` with a
//! constant is exact only when no lane's sum carries out of the low bits that lane 0's value
//! keeps known (`r + d[l] < 2^tz`): then lane 0's unknown high part and the lanes' low parts
//! are disjoint bit ranges, and the mask acts on each alone.

use llvm_sys::core as c;
use llvm_sys::prelude::*;
use llvm_sys::LLVMOpcode as O;

use super::ir;

/// The lanes of a warp vector.
const LANES: usize = 32;

/// How deep the trees are followed.
const DEPTH: u32 = 24;

/// Lane `l` is lane 0's value plus `d[l]` (modulo 2^32); lane 0's value is `r` modulo
/// `2^tz` (`tz` 32: exactly `r`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Table {
    pub d: [u32; LANES],
    pub tz: u32,
    pub r: u32,
}

/// `2^tz - 1` for `tz` up to 32.
fn low(tz: u32) -> u32 {
    if tz >= 32 {
        u32::MAX
    } else {
        (1u32 << tz) - 1
    }
}

impl Table {
    /// The table of warp vector `v` (`<32 x iN>`, `N` at least 32), when there is one.
    ///
    /// # Safety
    /// `v` is a value of a live module.
    /// `aligned` are scalars known to be multiples of 32 (`Warp::aligned_bases`).
    pub unsafe fn of(v: LLVMValueRef, aligned: &[LLVMValueRef]) -> Option<Table> {
        table(v, DEPTH, aligned)
    }

    /// The lanes' positions as elements of `size` bytes in the 256-byte-aligned block that
    /// holds lane 0's value, when every lane's is in that block on an element boundary:
    /// lane 0's low 8 bits are known, and each lane's offset from the block's start is a
    /// multiple of `size` below 256.
    pub fn block(&self, size: u32) -> Option<[u32; LANES]> {
        if self.tz < 8 || size == 0 || 256 % size != 0 {
            return None;
        }
        let first = self.r & 255;
        let mut pos = [0; LANES];
        for (l, p) in pos.iter_mut().enumerate() {
            let rel = i64::from(first) + i64::from(self.d[l] as i32);
            if !(0..256).contains(&rel) || rel % i64::from(size) != 0 {
                return None;
            }
            *p = (rel / i64::from(size)) as u32;
        }
        Some(pos)
    }
}

/// A scalar's known low bits: `(tz, r)`, the value is `r` modulo `2^tz`.
unsafe fn scalar_low(v: LLVMValueRef, depth: u32, aligned: &[LLVMValueRef]) -> (u32, u32) {
    if aligned.contains(&v) {
        return (5, 0);
    }
    if let Some(k) = const_value(v, 4) {
        return (32, k);
    }
    let Some(depth) = depth.checked_sub(1) else {
        return (0, 0);
    };
    if !ir::is_instruction(v) || !is_int32_plus(c::LLVMTypeOf(v)) {
        return (0, 0);
    }
    let ops = ir::operands(v);
    let mask = |(tz, r): (u32, u32)| (tz, r & low(tz));
    match ir::opcode(v) {
        O::LLVMAdd | O::LLVMSub => {
            let (a, b) = (
                scalar_low(ops[0], depth, aligned),
                scalar_low(ops[1], depth, aligned),
            );
            let tz = a.0.min(b.0);
            let r = if ir::opcode(v) == O::LLVMAdd {
                a.1.wrapping_add(b.1)
            } else {
                a.1.wrapping_sub(b.1)
            };
            mask((tz, r))
        }
        O::LLVMMul => {
            let (a, b) = (
                scalar_low(ops[0], depth, aligned),
                scalar_low(ops[1], depth, aligned),
            );
            // Known low bits of a product: as many as the fewer known of either plus the
            // other's trailing zeros, when those are known.
            let za = if a.0 > 0 {
                a.1.trailing_zeros().min(a.0)
            } else {
                0
            };
            let zb = if b.0 > 0 {
                b.1.trailing_zeros().min(b.0)
            } else {
                0
            };
            let tz = (a.0 + zb).min(b.0 + za).min(32);
            mask((tz, a.1.wrapping_mul(b.1)))
        }
        O::LLVMShl => match ir::const_u64(ops[1]) {
            Some(k) if k < 32 => {
                let a = scalar_low(ops[0], depth, aligned);
                mask(((a.0 + k as u32).min(32), a.1 << k))
            }
            _ => (0, 0),
        },
        O::LLVMAnd => {
            let (a, b) = (
                scalar_low(ops[0], depth, aligned),
                scalar_low(ops[1], depth, aligned),
            );
            // A bit is known where both are, or where either is a known zero.
            let zeros = |(tz, r): (u32, u32)| (!r & low(tz)).trailing_ones().min(tz);
            let tz = a.0.min(b.0).max(zeros(a)).max(zeros(b));
            mask((tz, a.1 & b.1))
        }
        O::LLVMURem => match ir::const_u64(ops[1]) {
            Some(p) if p.is_power_of_two() && p <= 1 << 32 => {
                let a = scalar_low(ops[0], depth, aligned);
                let k = p.trailing_zeros();
                // The remainder is the low k bits: known where the dividend's are, the rest
                // zero.
                if a.0 >= k {
                    (32, a.1 & low(k))
                } else {
                    mask((a.0, a.1))
                }
            }
            _ => (0, 0),
        },
        O::LLVMPHI => {
            // The fewest known bits of the incoming values, when they agree there; a cycle
            // ends in the depth limit, which knows nothing.
            let n = c::LLVMCountIncoming(v);
            let mut out: Option<(u32, u32)> = None;
            for k in 0..n {
                let x = scalar_low(c::LLVMGetIncomingValue(v, k), depth, aligned);
                out = Some(match out {
                    None => x,
                    Some(o) => {
                        let tz = o.0.min(x.0);
                        let diff = (o.1 ^ x.1) & low(tz);
                        let tz = tz.min(diff.trailing_zeros());
                        mask((tz, o.1))
                    }
                });
            }
            out.unwrap_or((0, 0))
        }
        O::LLVMZExt | O::LLVMSExt | O::LLVMTrunc | O::LLVMFreeze
            if is_int32_plus(c::LLVMTypeOf(ops[0])) =>
        {
            scalar_low(ops[0], depth, aligned)
        }
        _ => (0, 0),
    }
}

/// An integer type (or vector of them) of 32 bits or more, or a pointer (vector).
unsafe fn is_int32_plus(t: LLVMTypeRef) -> bool {
    use llvm_sys::LLVMTypeKind as K;
    let t = if c::LLVMGetTypeKind(t) == K::LLVMVectorTypeKind {
        c::LLVMGetElementType(t)
    } else {
        t
    };
    match c::LLVMGetTypeKind(t) {
        K::LLVMIntegerTypeKind => c::LLVMGetIntTypeWidth(t) >= 32,
        K::LLVMPointerTypeKind => true,
        _ => false,
    }
}

/// The 32 lanes of constant vector `v`, modulo 2^32.
unsafe fn const_lanes(v: LLVMValueRef) -> Option<[u32; LANES]> {
    if c::LLVMIsConstant(v) == 0 {
        return None;
    }
    let t = c::LLVMTypeOf(v);
    if c::LLVMGetTypeKind(t) != llvm_sys::LLVMTypeKind::LLVMVectorTypeKind
        || c::LLVMGetVectorSize(t) != LANES as u32
    {
        return None;
    }
    let mut out = [0; LANES];
    for (l, o) in out.iter_mut().enumerate() {
        let e = c::LLVMGetAggregateElement(v, l as u32);
        if e.is_null() {
            return None;
        }
        *o = const_value(e, 4)?;
    }
    Some(out)
}

/// Constant integer `e` modulo 2^32: an integer, or the offset of a `.shared` variable
/// (`ptrtoint @a`: the warp function is built before `llvm::cpu::prepare_module` puts the
/// variables at their offsets, which `shared_offset_of` computes the same way) plus
/// constants.
unsafe fn const_value(e: LLVMValueRef, depth: u32) -> Option<u32> {
    if let Some(k) = ir::const_u64(e) {
        return Some(k as u32);
    }
    let depth = depth.checked_sub(1)?;
    if c::LLVMIsAConstantExpr(e).is_null() {
        return None;
    }
    match c::LLVMGetConstOpcode(e) {
        O::LLVMPtrToInt | O::LLVMIntToPtr => {
            let x = c::LLVMGetOperand(e, 0);
            if !c::LLVMIsAGlobalVariable(x).is_null() {
                if c::LLVMGetPointerAddressSpace(c::LLVMTypeOf(x)) != 3 {
                    return None;
                }
                return crate::llvm::cpu::shared_offset_of(x).map(|o| o as u32);
            }
            const_value(x, depth)
        }
        O::LLVMAdd => Some(
            const_value(c::LLVMGetOperand(e, 0), depth)?
                .wrapping_add(const_value(c::LLVMGetOperand(e, 1), depth)?),
        ),
        _ => None,
    }
}

/// The splat constant of vector `v` (every lane the same constant).
unsafe fn splat_const(v: LLVMValueRef) -> Option<u32> {
    if let Some(k) = const_lanes(v) {
        return k.iter().all(|&x| x == k[0]).then_some(k[0]);
    }
    ir::const_u64(super::lanes::splat_of(v)?).map(|k| k as u32)
}

unsafe fn table(v: LLVMValueRef, depth: u32, aligned: &[LLVMValueRef]) -> Option<Table> {
    if !is_int32_plus(c::LLVMTypeOf(v)) {
        return None;
    }
    if let Some(k) = const_lanes(v) {
        let mut d = [0; LANES];
        for l in 0..LANES {
            d[l] = k[l].wrapping_sub(k[0]);
        }
        return Some(Table { d, tz: 32, r: k[0] });
    }
    if let Some(s) = super::lanes::splat_of(v) {
        let (tz, r) = scalar_low(s, DEPTH, aligned);
        return Some(Table {
            d: [0; LANES],
            tz,
            r,
        });
    }
    let depth = depth.checked_sub(1)?;
    if !ir::is_instruction(v) {
        return None;
    }
    let ops = ir::operands(v);
    let op = ir::opcode(v);
    let both = |f: fn(u32, u32) -> u32| -> Option<Table> {
        let (a, b) = (
            table(ops[0], depth, aligned)?,
            table(ops[1], depth, aligned)?,
        );
        let d: [u32; LANES] = std::array::from_fn(|l| f(a.d[l], b.d[l]));
        let tz = a.tz.min(b.tz);
        Some(Table {
            d,
            tz,
            r: f(a.r, b.r) & low(tz),
        })
    };
    match op {
        O::LLVMAdd => both(u32::wrapping_add),
        O::LLVMOr if c::LLVMGetIsDisjoint(v) != 0 => both(u32::wrapping_add),
        O::LLVMSub => both(u32::wrapping_sub),
        O::LLVMMul | O::LLVMShl => {
            let (x, k) = match (splat_const(ops[1]), splat_const(ops[0])) {
                (Some(k), _) => (ops[0], k),
                (None, Some(k)) if op == O::LLVMMul => (ops[1], k),
                _ => return None,
            };
            let a = table(x, depth, aligned)?;
            let (f, extra) = if op == O::LLVMShl {
                if k >= 32 {
                    return None;
                }
                (1u32 << k, k)
            } else {
                (k, if k == 0 { 32 } else { k.trailing_zeros() })
            };
            let d = a.d.map(|x| x.wrapping_mul(f));
            let tz = (a.tz + extra).min(32);
            Some(Table {
                d,
                tz,
                r: a.r.wrapping_mul(f) & low(tz),
            })
        }
        O::LLVMAnd | O::LLVMXor => {
            let (x, m) = match (splat_const(ops[1]), splat_const(ops[0])) {
                (Some(m), _) => (ops[0], m),
                (None, Some(m)) => (ops[1], m),
                _ => return None,
            };
            let a = table(x, depth, aligned)?;
            // Lane 0's value is `h + r` with `h`'s low `tz` bits zero; each lane's `r + d[l]`
            // must stay below `2^tz` so that it is disjoint from `h` (no carry into it).
            let span = if a.tz >= 32 { 1u64 << 32 } else { 1u64 << a.tz };
            let parts: Option<Vec<u64>> = (0..LANES)
                .map(|l| {
                    // `d` as a signed step: lanes below lane 0 must not borrow from `h`.
                    let s = i64::from(a.r) + i64::from(a.d[l] as i32);
                    (0..span as i64).contains(&s).then_some(s as u64)
                })
                .collect();
            let parts = parts?;
            let lm = u64::from(m) & (span - 1);
            let f = |s: u64| -> u32 {
                if op == O::LLVMAnd {
                    (s & lm) as u32
                } else {
                    (s ^ lm) as u32
                }
            };
            let base = f(u64::from(a.r));
            let mut d = [0; LANES];
            for l in 0..LANES {
                d[l] = f(parts[l]).wrapping_sub(base);
            }
            // Lane 0's value is `h & m` (or `h ^ m`) plus `base`: its low `tz` bits are
            // `base`'s; `h & m` has no bit below `m`'s lowest above those (none at all when
            // `m` is below `2^tz`: lane 0's value is then `base`, `t & 15` of aligned `t`).
            let tz = if op == O::LLVMAnd {
                (m & !low(a.tz)).trailing_zeros().min(32)
            } else {
                a.tz
            };
            Some(Table {
                d,
                tz,
                r: base & low(tz),
            })
        }
        // A value the warp function keeps in a slot between blocks: the one value stored
        // there.
        O::LLVMLoad if !c::LLVMIsAAllocaInst(ops[0]).is_null() => {
            let mut one: Option<LLVMValueRef> = None;
            let mut u = c::LLVMGetFirstUse(ops[0]);
            while !u.is_null() {
                let user = c::LLVMGetUser(u);
                if !c::LLVMIsAStoreInst(user).is_null() {
                    let x = c::LLVMGetOperand(user, 0);
                    if c::LLVMGetOperand(user, 1) != ops[0] || one.is_some_and(|o| o != x) {
                        return None;
                    }
                    one = Some(x);
                } else if c::LLVMIsALoadInst(user).is_null() {
                    return None;
                }
                u = c::LLVMGetNextUse(u);
            }
            table(one?, depth, aligned)
        }
        O::LLVMZExt
        | O::LLVMSExt
        | O::LLVMTrunc
        | O::LLVMPtrToInt
        | O::LLVMIntToPtr
        | O::LLVMFreeze => {
            if is_int32_plus(c::LLVMTypeOf(ops[0])) {
                table(ops[0], depth, aligned)
            } else {
                None
            }
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn block_positions() {
        // Bitonic's lower partners at distance 16 from a warp at 64w elements: lanes 0-15
        // at elements 0-15, 16-31 at 32-47.
        let mut d = [0u32; LANES];
        for (l, x) in d.iter_mut().enumerate() {
            let l = l as u32;
            *x = 4 * (2 * l - (l & 15));
        }
        let t = Table { d, tz: 8, r: 0 };
        let pos = t.block(4).unwrap();
        assert_eq!(pos[15], 15);
        assert_eq!(pos[16], 32);
        // Lane 0 at byte 128 of its block: lane 31 at 128 + 188 leaves it.
        let t = Table { d, tz: 8, r: 128 };
        assert_eq!(t.block(4), None);
        // Lane 0's low bits unknown: no block.
        let t = Table { d, tz: 5, r: 0 };
        assert_eq!(t.block(4), None);
    }
}
