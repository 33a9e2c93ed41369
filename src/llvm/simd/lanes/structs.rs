//! Fields of arrays of structs (`Access::Strided`, issue 17): lane `l` reads or writes
//! element `f` of struct `l`, `n` elements per struct (`p[i].y` of a `float3`: `n` 3, `f`
//! 1). The 32 structs are one span from lane 0's struct, loaded or stored as 64-byte pieces
//! (`<16 x float>`, `<8 x double>`: one AVX-512 register each) and taken apart or put
//! together by two-source lane permutations of pieces (`compose`: one `vpermt2ps` each).
//! Whole `<32n x T>` vectors and their stride-`n` shuffles, tried first, were taken apart
//! element by element by code generation once a phi joined two of them.
//!
//! The accesses of one group (`strided_group`: the same structs, nothing in between that may
//! write memory, for stores nothing that touches it) share the work: each load reads the
//! fields the whole group reads (the same pieces, merged by GVN), and the group's stores are
//! one store of every member's field at the last member. Where every lane runs and the group
//! covers every field of the structs, the pieces are plain loads and stores: masked ones
//! took three times as long on an AoS particle update (4M `float3` positions and velocities:
//! 9 ms masked, 2.8 ms plain; gathers and scatters 17 ms; C 2.5-3.3 ms); loads of some
//! fields are plain but for the first and last pieces (`load_pieces`). Otherwise they are
//! masked to the running lanes' elements of the group's fields: the bytes the lanes access,
//! and so their faults.

use super::*;

/// Bytes of one piece: an AVX-512 register.
const PIECE: u64 = 64;

impl Warp<'_> {
    /// The elements between lanes of a strided access of a `t` at source pointer `ptr`
    /// (`Access::Strided`), `None` for other accesses.
    pub(super) unsafe fn strided_n(&self, ptr: LLVMValueRef, t: LLVMTypeRef) -> Option<u32> {
        let st = self.facts.strides.of(ptr, &self.facts.varying)?;
        self.facts.strides.strided(st, t, self.td)
    }

    /// The strided accesses of `i`'s kind (loads or stores) to fields of the same structs as
    /// `i` (an `Access::Strided` access of a `t` at `ptr`, `n` elements between lanes), in
    /// `i`'s block, with nothing between the first and the last that may write memory (loads)
    /// or touch it (stores) but each other: their common base pointer (`base_offset`) and, in
    /// order, each member and its field (its offset from the base in elements, below `n`).
    /// `i` alone, at field 0 of its own pointer, when its offset is no field.
    unsafe fn strided_group(
        &self,
        i: LLVMValueRef,
        ptr: LLVMValueRef,
        t: LLVMTypeRef,
        n: u32,
    ) -> (LLVMValueRef, Vec<(LLVMValueRef, u32)>) {
        let size = llvm_sys::target::LLVMABISizeOfType(self.td, t);
        let field = |m: LLVMValueRef, p: LLVMValueRef| {
            let (base, off) = base_offset(p, m);
            (off % size == 0 && off / size < u64::from(n)).then_some((base, (off / size) as u32))
        };
        let Some((base, _)) = field(i, ptr) else {
            return (ptr, vec![(i, 0)]);
        };
        let store = !c::LLVMIsAStoreInst(i).is_null();
        let member = |m: LLVMValueRef| -> Option<u32> {
            let (mp, mt) = ir::access(m)?;
            if c::LLVMIsAStoreInst(m).is_null() == store
                || mt != t
                || self.is_atomic(m)
                || c::LLVMGetVolatile(m) != 0
                || self
                    .facts
                    .strides
                    .access(mp, mt, &self.facts.varying, self.td)
                    != Access::Strided
                || self.strided_n(mp, mt) != Some(n)
            {
                return None;
            }
            field(m, mp).filter(|&(b, _)| b == base).map(|(_, f)| f)
        };
        // Runs of members between instructions that end a group; `i`'s run.
        let mut run: Vec<(LLVMValueRef, u32)> = Vec::new();
        let mut found = false;
        for x in ir::instructions(c::LLVMGetInstructionParent(i)) {
            if let Some(f) = member(x) {
                run.push((x, f));
                found |= x == i;
                continue;
            }
            let writes = !c::LLVMIsAStoreInst(x).is_null()
                || !c::LLVMIsACallInst(x).is_null() && !ir::pure_call(x)
                || !c::LLVMIsAAtomicRMWInst(x).is_null()
                || !c::LLVMIsAAtomicCmpXchgInst(x).is_null()
                || !c::LLVMIsAFenceInst(x).is_null();
            if writes || store && !c::LLVMIsALoadInst(x).is_null() {
                if found {
                    break;
                }
                run.clear();
            }
        }
        (base, run)
    }

    /// Lane 0's host pointer of the group's structs: of `base` (`strided_group`), or the
    /// access's own lanes `p` when the base is its pointer.
    unsafe fn strided_base(
        &mut self,
        base: LLVMValueRef,
        ptr: LLVMValueRef,
        p: LLVMValueRef,
    ) -> LLVMValueRef {
        if base == ptr {
            return self.run_base(p, 0);
        }
        let b = self.get(base, true);
        let b = self.host_ptrs(b);
        self.run_base(b, 0)
    }

    /// Elements of a `t` per piece.
    unsafe fn piece_len(&self, t: LLVMTypeRef) -> u32 {
        (PIECE / llvm_sys::target::LLVMABISizeOfType(self.td, t)) as u32
    }

    /// A two-source shuffle whose `None` elements are undefined.
    unsafe fn shuffle_some(
        &self,
        a: LLVMValueRef,
        b: Option<LLVMValueRef>,
        idx: &[Option<u32>],
    ) -> LLVMValueRef {
        let mut ks: Vec<LLVMValueRef> = idx
            .iter()
            .map(|k| match k {
                Some(k) => self.c32(u64::from(*k)),
                None => c::LLVMGetUndef(self.i32),
            })
            .collect();
        let m = c::LLVMConstVector(ks.as_mut_ptr(), ks.len() as u32);
        let b = b.unwrap_or_else(|| c::LLVMGetPoison(c::LLVMTypeOf(a)));
        c::LLVMBuildShuffleVector(self.b, a, b, m, c"".as_ptr())
    }

    /// A vector of `pick.len()` elements, element `j` from source `pick[j]` (vectors of that
    /// length, by index into `srcs`, and element; `None`: undefined): a chain of two-source
    /// shuffles, one per source after the first two.
    unsafe fn compose(&self, srcs: &[LLVMValueRef], pick: &[Option<(usize, u32)>]) -> LLVMValueRef {
        let w = pick.len() as u32;
        let mut used: Vec<usize> = Vec::new();
        for &(s, _) in pick.iter().flatten() {
            if !used.contains(&s) {
                used.push(s);
            }
        }
        let Some(&first) = used.first() else {
            return c::LLVMGetPoison(c::LLVMTypeOf(srcs[0]));
        };
        let second = used.get(1).copied();
        let idx: Vec<Option<u32>> = pick
            .iter()
            .map(|p| match *p {
                Some((s, e)) if s == first => Some(e),
                Some((s, e)) if Some(s) == second => Some(w + e),
                _ => None,
            })
            .collect();
        let mut acc = self.shuffle_some(srcs[first], second.map(|s| srcs[s]), &idx);
        for &s in used.iter().skip(2) {
            let idx: Vec<Option<u32>> = (0..w)
                .map(|j| match pick[j as usize] {
                    Some((ss, e)) if ss == s => Some(w + e),
                    _ => Some(j),
                })
                .collect();
            acc = self.shuffle_some(acc, Some(srcs[s]), &idx);
        }
        acc
    }

    /// The running lanes' mask over piece `k` of `32` structs of `n` elements, on at the
    /// elements of `fields`.
    unsafe fn piece_mask(&self, k: u32, w: u32, n: u32, fields: &[u32]) -> LLVMValueRef {
        let off = c::LLVMConstNull(c::LLVMTypeOf(self.mask));
        let idx: Vec<u32> = (k * w..(k + 1) * w)
            .map(|q| {
                if fields.contains(&(q % n)) {
                    q / n
                } else {
                    LANES
                }
            })
            .collect();
        self.shuffle(self.mask, Some(off), &idx)
    }

    /// The pointer to piece `k` from `p0`.
    unsafe fn piece_ptr(&self, p0: LLVMValueRef, k: u32) -> LLVMValueRef {
        self.byte_ptr(p0, (u64::from(k) * PIECE) as i64)
    }

    /// `p` plus `bytes`.
    unsafe fn byte_ptr(&self, p: LLVMValueRef, bytes: i64) -> LLVMValueRef {
        let mut idx = [c::LLVMConstInt(self.i64, bytes as u64, 1)];
        c::LLVMBuildGEP2(
            self.b,
            c::LLVMInt8TypeInContext(self.cx),
            p,
            idx.as_mut_ptr(),
            1,
            c"".as_ptr(),
        )
    }

    /// The pieces of 32 structs of `n` elements `t` from `p0`: loads masked to the running
    /// lanes' elements of `fields`, or with `full` (every lane runs) plain loads of bytes
    /// between the first and the last element the lanes read: those read at most 32 bytes
    /// apart, so such bytes are on pages they touch (the other fields' bytes among them are
    /// not used). The first piece when lane 0 reads no field 0 and the last when lane 31
    /// reads no field `n - 1` would reach before or past those elements (and the array):
    /// they are loaded that many elements later or earlier and moved back in place (a masked
    /// load there, of one piece per warp, took the AoS k-means assignment from 4.5 to 8.9
    /// ms). The values are the same either way; only a fault could tell, which the runtime's
    /// buffers (256-byte aligned, up to 255 bytes of slack before their guard page) never
    /// give for a full warp's structs, so no test sees the shift.
    unsafe fn load_pieces(
        &self,
        p0: LLVMValueRef,
        t: LLVMTypeRef,
        n: u32,
        fields: &[u32],
        full: bool,
    ) -> Vec<LLVMValueRef> {
        let w = self.piece_len(t);
        let pt = c::LLVMVectorType(t, w);
        let pieces = LANES * n / w;
        let first = fields.iter().copied().min().unwrap_or(0);
        let last = fields.iter().copied().max().unwrap_or(n - 1);
        let size = llvm_sys::target::LLVMABISizeOfType(self.td, t) as i64;
        let plain = |pk: LLVMValueRef, shift: i64| {
            let at = self.byte_ptr(pk, shift * size);
            let v = c::LLVMBuildLoad2(self.b, pt, at, c"".as_ptr());
            c::LLVMSetAlignment(v, self.elem_align(t));
            if shift == 0 {
                return v;
            }
            // Element `e` of the piece is element `e - shift` of the load.
            let idx: Vec<Option<u32>> = (0..w as i64)
                .map(|e| u32::try_from(e - shift).ok().filter(|&x| x < w))
                .collect();
            self.shuffle_some(v, None, &idx)
        };
        (0..pieces)
            .map(|k| {
                let pk = self.piece_ptr(p0, k);
                if full {
                    let shift = if k == 0 {
                        i64::from(first)
                    } else if k + 1 == pieces {
                        -i64::from(n - 1 - last)
                    } else {
                        0
                    };
                    return plain(pk, shift);
                }
                let mut tys = [pt, self.ptr];
                let mut args = [pk, self.piece_mask(k, w, n, fields), c::LLVMGetPoison(pt)];
                self.call_intrinsic("llvm.masked.load", &mut tys, &mut args)
            })
            .collect()
    }

    /// Field `f` of the 32 structs in `pieces` (`load_pieces`): lane `l`'s element `l n + f`.
    unsafe fn field_of(
        &self,
        pieces: &[LLVMValueRef],
        t: LLVMTypeRef,
        n: u32,
        f: u32,
    ) -> LLVMValueRef {
        let w = self.piece_len(t);
        let chunks: Vec<LLVMValueRef> = (0..LANES / w)
            .map(|ch| {
                let pick: Vec<Option<(usize, u32)>> = (0..w)
                    .map(|j| {
                        let q = (ch * w + j) * n + f;
                        Some(((q / w) as usize, q % w))
                    })
                    .collect();
                self.compose(pieces, &pick)
            })
            .collect();
        self.concat(chunks)
    }

    /// `full` where every lane runs, else `masked` (`branch_join`).
    unsafe fn full_or_masked(
        &mut self,
        full: impl FnOnce(&mut Self) -> LLVMValueRef,
        masked: impl FnOnce(&mut Self) -> LLVMValueRef,
    ) -> LLVMValueRef {
        let all = self.all_running();
        self.branch_join(
            all,
            ["strided.full", "strided.masked", "strided"],
            full,
            masked,
        )
    }

    /// The elements between lanes of strided access `i` (a `t` at `ptr`), the group's base
    /// and members (`strided_group`; `i` alone at field 0 when `StridedChecked`).
    unsafe fn group_of(
        &self,
        i: LLVMValueRef,
        ptr: LLVMValueRef,
        t: LLVMTypeRef,
        access: Access,
    ) -> (u32, LLVMValueRef, Vec<(LLVMValueRef, u32)>) {
        let n = self.strided_n(ptr, t).unwrap_or(1);
        let (base, group) = if access == Access::Strided {
            self.strided_group(i, ptr, t, n)
        } else {
            (ptr, vec![(i, 0)])
        };
        (n, base, group)
    }

    /// A load `i` of a scalar `t` per lane at host lane pointers `p` (source pointer `ptr`)
    /// that lie `n` elements apart (`Access::Strided`): the pieces of its group's structs
    /// with the group's fields (see the module), then `i`'s field. `StridedChecked`: `i`
    /// alone behind the lane-31 test, a gather otherwise.
    pub(super) unsafe fn load_strided(
        &mut self,
        i: LLVMValueRef,
        ptr: LLVMValueRef,
        p: LLVMValueRef,
        t: LLVMTypeRef,
        access: Access,
    ) -> LLVMValueRef {
        let (n, base, group) = self.group_of(i, ptr, t, access);
        let fields: Vec<u32> = group.iter().map(|&(_, f)| f).collect();
        let f = group.iter().find(|&&(m, _)| m == i).map_or(0, |&(_, f)| f);
        let run = |me: &mut Self| {
            let p0 = me.strided_base(base, ptr, p);
            let get = |me: &mut Self, full: bool| {
                let pieces = me.load_pieces(p0, t, n, &fields, full);
                me.field_of(&pieces, t, n, f)
            };
            me.full_or_masked(|me| get(me, true), |me| get(me, false))
        };
        if access != Access::StridedChecked {
            return run(self);
        }
        let vt = self.vty(t);
        let ok = self.checked_test(ptr, p, t);
        self.branch_join(ok, ["ld.strided", "ld.gather", "ld"], run, |me| {
            me.gather(vt, p, me.mask)
        })
    }

    /// `load_strided`'s store: the group's stores are one store of the pieces at its last
    /// member, every member's values at its field of each struct (a later member's over an
    /// earlier one's of the same field); the other members emit nothing. `StridedChecked`:
    /// `i` alone behind the lane-31 test, a scatter otherwise.
    pub(super) unsafe fn store_strided(
        &mut self,
        i: LLVMValueRef,
        ptr: LLVMValueRef,
        v: LLVMValueRef,
        p: LLVMValueRef,
        t: LLVMTypeRef,
        access: Access,
    ) {
        let (n, base, group) = self.group_of(i, ptr, t, access);
        if group.last().is_some_and(|&(m, _)| m != i) {
            return;
        }
        let run = |me: &mut Self| {
            let w = me.piece_len(t);
            // Each field's latest value, in 32 / w chunks of a piece's length.
            let mut srcs: Vec<LLVMValueRef> = Vec::new();
            let mut at: Vec<Option<usize>> = vec![None; n as usize];
            for &(m, f) in &group {
                let mv = if m == i {
                    v
                } else {
                    me.get(c::LLVMGetOperand(m, 0), true)
                };
                at[f as usize] = Some(srcs.len());
                for ch in 0..LANES / w {
                    srcs.push(me.slice(mv, ch * w, w));
                }
            }
            let fields: Vec<u32> = (0..n).filter(|&f| at[f as usize].is_some()).collect();
            let pieces: Vec<LLVMValueRef> = (0..LANES * n / w)
                .map(|k| {
                    let pick: Vec<Option<(usize, u32)>> = (k * w..(k + 1) * w)
                        .map(|q| {
                            let (l, f) = (q / n, q % n);
                            at[f as usize].map(|s| (s + (l / w) as usize, l % w))
                        })
                        .collect();
                    me.compose(&srcs, &pick)
                })
                .collect();
            let p0 = me.strided_base(base, ptr, p);
            let put = |me: &mut Self, full: bool| {
                for (k, &pv) in pieces.iter().enumerate() {
                    let pk = me.piece_ptr(p0, k as u32);
                    if full {
                        let st = c::LLVMBuildStore(me.b, pv, pk);
                        c::LLVMSetAlignment(st, me.elem_align(t));
                        continue;
                    }
                    let mut tys = [c::LLVMTypeOf(pv), me.ptr];
                    let mut args = [pv, pk, me.piece_mask(k as u32, w, n, &fields)];
                    me.call_intrinsic("llvm.masked.store", &mut tys, &mut args);
                }
                std::ptr::null_mut()
            };
            if fields.len() == n as usize {
                me.full_or_masked(|me| put(me, true), |me| put(me, false));
            } else {
                put(me, false);
            }
        };
        if access != Access::StridedChecked {
            run(self);
            return;
        }
        let ok = self.checked_test(ptr, p, t);
        self.branch_join(
            ok,
            ["st.strided", "st.scatter", "st"],
            |me| {
                run(me);
                std::ptr::null_mut()
            },
            |me| {
                me.scatter(v, p, me.mask);
                std::ptr::null_mut()
            },
        );
    }
}
