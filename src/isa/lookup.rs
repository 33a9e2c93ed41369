//! Fast spelling → enum lookups for the parser's hot path. Spellings of up to 16 bytes (all
//! but a handful) live in an open-addressing table keyed by their bytes packed into two
//! words, so a lookup is one multiply-shift hash and two word compares; longer spellings fall
//! back to an Fx-hashed map. Both are built once, on first use, from the generated enums.

use std::sync::OnceLock;

use rustc_hash::FxHashMap;

use super::{Mod, Opcode};

struct Table<T: 'static> {
    /// `(lo, hi, len, value)`; `len == 0` marks an empty slot.
    slots: Vec<(u64, u64, u32, Option<T>)>,
    shift: u32,
    long: FxHashMap<&'static str, T>,
}

#[inline(always)]
fn pack(s: &[u8]) -> (u64, u64) {
    let mut buf = [0u8; 16];
    buf[..s.len()].copy_from_slice(s);
    (
        u64::from_le_bytes(buf[..8].try_into().unwrap_or([0; 8])),
        u64::from_le_bytes(buf[8..].try_into().unwrap_or([0; 8])),
    )
}

#[inline(always)]
fn hash(lo: u64, hi: u64, len: usize, shift: u32) -> usize {
    let h = (lo ^ hi.rotate_left(29) ^ len as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    (h >> shift) as usize
}

impl<T: Copy + 'static> Table<T> {
    fn build(all: &'static [T], spelling: fn(T) -> &'static str) -> Table<T> {
        let bits = (all.len() * 4).next_power_of_two().trailing_zeros().max(4);
        let shift = 64 - bits;
        let mut slots = vec![(0, 0, 0, None); 1 << bits];
        let mut long = FxHashMap::default();
        let mask = slots.len() - 1;
        for &v in all {
            let s = spelling(v);
            if s.len() > 16 {
                long.insert(s, v);
                continue;
            }
            let (lo, hi) = pack(s.as_bytes());
            let mut i = hash(lo, hi, s.len(), shift);
            while slots[i].2 != 0 {
                i = (i + 1) & mask;
            }
            slots[i] = (lo, hi, s.len() as u32, Some(v));
        }
        Table { slots, shift, long }
    }

    #[inline(always)]
    fn get(&self, s: &str) -> Option<T> {
        let b = s.as_bytes();
        if b.len() > 16 {
            return self.long.get(s).copied();
        }
        let (lo, hi) = pack(b);
        let mask = self.slots.len() - 1;
        let mut i = hash(lo, hi, b.len(), self.shift);
        loop {
            let (l, h, n, v) = self.slots[i];
            if n == 0 {
                return None;
            }
            if l == lo && h == hi && n as usize == b.len() {
                return v;
            }
            i = (i + 1) & mask;
        }
    }
}

/// Looks a modifier spelling (with its leading dot) up.
#[inline]
pub fn lookup_mod(s: &str) -> Option<Mod> {
    static T: OnceLock<Table<Mod>> = OnceLock::new();
    T.get_or_init(|| Table::build(Mod::ALL, Mod::spelling))
        .get(s)
}

/// Looks an opcode (the instruction's first word) up.
#[inline]
pub fn lookup_opcode(s: &str) -> Option<Opcode> {
    static T: OnceLock<Table<Opcode>> = OnceLock::new();
    T.get_or_init(|| Table::build(Opcode::ALL, Opcode::spelling))
        .get(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_spelling_round_trips() {
        for &m in Mod::ALL {
            assert_eq!(lookup_mod(m.spelling()), Some(m), "{}", m.spelling());
        }
        for &o in Opcode::ALL {
            assert_eq!(lookup_opcode(o.spelling()), Some(o));
        }
        assert_eq!(lookup_mod(".nonexistent"), None);
        assert_eq!(lookup_mod(""), None);
        assert_eq!(
            lookup_mod(".a_very_long_modifier_that_does_not_exist"),
            None
        );
        assert_eq!(lookup_opcode("frobnicate"), None);
    }
}
