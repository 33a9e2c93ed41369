//! cpu lowering of the warp matrix instructions `mma.sync`, `ldmatrix`, `stmatrix`,
//! `movmatrix` and `wmma`: the lane's fragment registers go to the runtime
//! (`runtime/matrix.rs`, which exchanges them across the warp) in arrays on the stack, and the
//! results come back the same way. Kernels using them run on the coroutine scheme
//! (`fission::analysis::is_warp_matrix`), or on the warp engine, which widens those arrays to
//! the 32 lanes (`llvm/simd/matrix.rs`; not `wmma`).
//! Forms the runtime does not implement (other shapes and types, sparse `mma.sp`, the sm_100
//! `.m16n16`/`.m8n16` `ldmatrix`) are reported by name.

use crate::isa::Mod;
use crate::llvm::*;
use crate::lower::{Error, FnState, Ins, Lowerer, Space, Ty};
use crate::runtime::abi::mma;
use crate::syntax::ast::{Instruction, Operand};

use super::sync::{program_point, self_ptr, spelling, unsupported};

/// A fragment operand without the registers its shape and type take.
fn wrong_fragment(i: &Instruction) -> Error {
    Error::Invalid {
        msg: format!(
            "`{}`: a fragment operand does not have the registers its shape and type take",
            spelling(i)
        ),
        span: i.span,
    }
}

/// The registers of a vector operand `{a, b, ...}` (or the operand alone).
fn items<'x, 'a>(o: &'x Operand<'a>) -> Vec<&'x Operand<'a>> {
    match o {
        Operand::Vec(v, _) => v.iter().collect(),
        o => vec![o],
    }
}

/// An array of `words` 32-bit words on the stack (fragments to and from the runtime).
fn words_array<'c>(l: &Lowerer<'c, '_>, fs: &FnState<'c, '_>, words: u32) -> PointerValue<'c> {
    l.alloca(fs, l.i32().array_type(words.max(1)).into(), 8, "frag")
}

/// An array of 32-bit words on the stack holding the registers of `o` (64-bit registers as
/// two words, low first).
fn pack<'c, 'a>(
    l: &Lowerer<'c, 'a>,
    fs: &mut FnState<'c, 'a>,
    o: &Operand<'a>,
    wide: bool,
) -> Result<PointerValue<'c>, Error> {
    let (ty, step) = if wide { (Ty::b(64), 2) } else { (Ty::b(32), 1) };
    let arr = words_array(l, fs, items(o).len() as u32 * step);
    for (k, it) in items(o).into_iter().enumerate() {
        let v = l.operand(fs, it, ty)?;
        l.b.build_store(word(l, arr, k as u32 * step), v).unwrap();
    }
    Ok(arr)
}

/// Word `k` of the array `arr`.
fn word<'c>(l: &Lowerer<'c, '_>, arr: PointerValue<'c>, k: u32) -> PointerValue<'c> {
    let at = l.i64().const_int(k as u64, false);
    // SAFETY: `build_gep` only builds IR (word `k` of `arr`); nothing is dereferenced here.
    unsafe { l.b.build_gep(l.i32(), arr, &[at], "").unwrap() }
}

/// Sets the registers of `o` from the array `arr` (as `pack` lays them out).
fn unpack<'c, 'a>(
    l: &Lowerer<'c, 'a>,
    fs: &mut FnState<'c, 'a>,
    o: &Operand<'a>,
    arr: PointerValue<'c>,
    wide: bool,
) -> Result<(), Error> {
    let (ty, step): (BasicTypeEnum, u32) = if wide {
        (l.i64().into(), 2)
    } else {
        (l.i32().into(), 1)
    };
    for (k, it) in items(o).into_iter().enumerate() {
        let v =
            l.b.build_load(ty, word(l, arr, k as u32 * step), "")
                .unwrap();
        l.set(fs, it, v, false)?;
    }
    Ok(())
}

/// The `abi::mma` kind of an `mma.sync` instruction, if the runtime implements it.
fn mma_kind(ins: &Ins) -> Option<u32> {
    if ins.has(Mod::Sp)
        || ins.has(Mod::SpOrderedMetadata)
        || ins
            .any(&[
                Mod::KindF16,
                Mod::KindF8f6f4,
                Mod::KindI8,
                Mod::KindMxf4,
                Mod::KindMxf4nvf4,
                Mod::KindMxf8f6f4,
                Mod::KindTf32,
            ])
            .is_some()
    {
        return None;
    }
    let shape = match ins.any(&[
        Mod::M16n8k16,
        Mod::M16n8k8,
        Mod::M16n8k4,
        Mod::M8n8k4,
        Mod::M16n8k32,
    ])? {
        Mod::M16n8k16 => mma::M16N8K16,
        Mod::M16n8k8 => mma::M16N8K8,
        Mod::M16n8k4 => mma::M16N8K4,
        Mod::M8n8k4 => mma::M8N8K4,
        _ => mma::M16N8K32,
    };
    let tys: Vec<u32> = ins.d.mods.iter().filter_map(|m| elem_ty(*m)).collect();
    // d, a, b, c (the 16-bit forms of the manual may name a and b once: `.bf16` and `.tf32`
    // list all four, as do the compilers).
    let [d, a, b, c] = tys[..] else {
        return None;
    };
    // m8n8k4 with 16-bit types is Volta's quad-pair form; only its f64 form is implemented.
    if shape == mma::M8N8K4 && a != mma::F64 {
        return None;
    }
    if !(ins.has(Mod::Row) && ins.has(Mod::Col)) {
        return None;
    }
    let sat = if ins.has(Mod::Satfinite) {
        mma::SATFINITE
    } else {
        0
    };
    Some(mma::kind(shape, a, b, c, d) | sat)
}

/// Element type of a type modifier (`abi::mma`), for the implemented types.
fn elem_ty(m: Mod) -> Option<u32> {
    match m {
        Mod::F16 => Some(mma::F16),
        Mod::Bf16 => Some(mma::BF16),
        Mod::Tf32 => Some(mma::TF32),
        Mod::F32 => Some(mma::F32),
        Mod::F64 => Some(mma::F64),
        Mod::S8 => Some(mma::S8),
        Mod::U8 => Some(mma::U8),
        Mod::S32 => Some(mma::S32),
        Mod::E4m3 => Some(mma::E4M3),
        Mod::E5m2 => Some(mma::E5M2),
        _ => None,
    }
}

/// `wmma.load`, `wmma.store` and `wmma.mma` in the GPU's fragment layouts
/// (`abi::mma::WMMA_M16N16K16`): loads and stores are each lane's own, `mma` exchanges.
fn wmma<'c, 'a>(
    l: &Lowerer<'c, 'a>,
    fs: &mut FnState<'c, 'a>,
    ins: &Ins<'_, 'a>,
    i: &Instruction<'a>,
    t: BasicValueEnum<'c>,
) -> Result<bool, Error> {
    let ops = ins.ops();
    let c32 = |v: u32| -> BasicValueEnum<'c> { l.c32(v as u64).into() };
    let (shape, (m, n, k)) = match ins.any(&[
        Mod::M16n16k16,
        Mod::M32n8k16,
        Mod::M8n32k16,
        Mod::M16n16k8,
        Mod::M8n8k4,
    ]) {
        Some(Mod::M16n16k16) => (mma::WMMA_M16N16K16, (16, 16, 16)),
        Some(Mod::M32n8k16) => (mma::WMMA_M32N8K16, (32, 8, 16)),
        Some(Mod::M8n32k16) => (mma::WMMA_M8N32K16, (8, 32, 16)),
        Some(Mod::M16n16k8) => (mma::WMMA_M16N16K8, (16, 16, 8)),
        Some(Mod::M8n8k4) => (mma::WMMA_M8N8K4, (8, 8, 4)),
        _ => return Err(unsupported(i)),
    };
    let tys: Vec<u32> = ins.d.mods.iter().filter_map(|m| elem_ty(*m)).collect();
    if ins.has(Mod::Load) || ins.has(Mod::Store) {
        let load = ins.has(Mod::Load);
        let (frag, (rows, cols)) = match ins.any(&[Mod::A, Mod::B, Mod::C, Mod::D]) {
            Some(Mod::A) => (mma::FRAG_A, (m, k)),
            Some(Mod::B) => (mma::FRAG_B, (k, n)),
            _ => (mma::FRAG_C, (m, n)),
        };
        let [ty] = tys[..] else {
            return Err(unsupported(i));
        };
        let col = ins.has(Mod::Col);
        let desc = shape | frag | ty << 8 | if col { mma::COL_MAJOR } else { 0 };
        if ops.len() < 2 {
            return Err(unsupported(i));
        }
        let (addr_op, regs) = if load {
            (&ops[1], &ops[0])
        } else {
            (&ops[0], &ops[1])
        };
        let Operand::Addr(addr) = addr_op else {
            return Err(unsupported(i));
        };
        let p = row_address(l, fs, ins, addr)?;
        // Without a stride the matrix is packed: a row (column) after the other.
        let stride = match ops.get(2) {
            Some(o) => l.operand(fs, o, Ty::b(32))?,
            None => c32(if col { rows } else { cols }),
        };
        let wide = ty == mma::F64;
        let words = frag_words(items(regs).len(), ty);
        let need = crate::runtime::matrix::wmma_words(desc).ok_or_else(|| unsupported(i))?;
        if (words as usize) < need {
            return Err(wrong_fragment(i));
        }
        if load {
            let out = words_array(l, fs, words);
            l.call(
                "ptx2llvm_rt_wmma_load",
                None,
                &[t, c32(desc), p.into(), stride, out.into(), c32(words)],
            );
            unpack(l, fs, regs, out, wide)?;
        } else {
            let r = pack(l, fs, regs, wide)?;
            l.call(
                "ptx2llvm_rt_wmma_store",
                None,
                &[t, c32(desc), p.into(), stride, r.into()],
            );
        }
        return Ok(true);
    }
    if !ins.has(Mod::Mma) {
        return Err(unsupported(i));
    }
    // f16 inputs name only d and c; the others name all four.
    let (d, a, b, c) = match tys[..] {
        [d, c] => (d, mma::F16, mma::F16, c),
        [d, a, b, c] => (d, a, b, c),
        _ => return Err(unsupported(i)),
    };
    let int = matches!(a, mma::S8 | mma::U8);
    let rounding = ins.any(&[Mod::Rz, Mod::Rm, Mod::Rp]).is_some();
    if rounding || (ins.has(Mod::Satfinite) && !int) {
        return Err(unsupported(i));
    }
    let sat = if ins.has(Mod::Satfinite) {
        mma::SATFINITE
    } else {
        0
    };
    call_mma(l, fs, i, t, mma::kind(shape, a, b, c, d) | sat)
}

/// `ptx2llvm_rt_mma(t, kind, a, b, c, d)` with the fragments of `mma`/`wmma.mma` `i`
/// (operands `d, a, b, c`).
fn call_mma<'c, 'a>(
    l: &Lowerer<'c, 'a>,
    fs: &mut FnState<'c, 'a>,
    i: &Instruction<'a>,
    t: BasicValueEnum<'c>,
    kind: u32,
) -> Result<bool, Error> {
    let ops = &i.operands;
    if ops.len() != 4 {
        return Err(unsupported(i));
    }
    let ty = |shift: u32| (kind >> shift) & 0xf;
    let wide = ty(4) == mma::F64;
    let words = |o: &Operand, shift: u32| frag_words(items(o).len(), ty(shift));
    // Every fragment must have the registers its shape and type take.
    let need = crate::runtime::matrix::fragment_words(kind).ok_or_else(|| unsupported(i))?;
    let have = [
        words(&ops[1], 4),
        words(&ops[2], 8),
        words(&ops[3], 12),
        words(&ops[0], 16),
    ];
    if have.iter().zip(need).any(|(&h, n)| (h as usize) < n) {
        return Err(wrong_fragment(i));
    }
    let pa = pack(l, fs, &ops[1], wide)?;
    let pb = pack(l, fs, &ops[2], wide)?;
    let pc = pack(l, fs, &ops[3], wide)?;
    let pd = words_array(l, fs, have[3]);
    let k: BasicValueEnum<'c> = l.c32(kind as u64).into();
    l.call(
        "ptx2llvm_rt_mma",
        None,
        &[
            t,
            program_point(l, i),
            k,
            pa.into(),
            pb.into(),
            pc.into(),
            pd.into(),
        ],
    );
    unpack(l, fs, &ops[0], pd, wide)?;
    Ok(true)
}

/// The generic (host) address of `addr` in the instruction's state space (generic when it
/// names none), as an i64: the runtime reads and writes matrices through it.
fn row_address<'c, 'a>(
    l: &Lowerer<'c, 'a>,
    fs: &mut FnState<'c, 'a>,
    ins: &Ins<'_, 'a>,
    addr: &crate::syntax::ast::Address<'a>,
) -> Result<IntValue<'c>, Error> {
    let space = ins.space().unwrap_or(Space::Generic);
    let p = l.to_generic(l.address(fs, addr, space, ins.i.span)?);
    Ok(l.b.build_ptr_to_int(p, l.i64(), "").unwrap())
}

/// Words of a fragment: `n` registers of `ty` (16-bit types packed two to a register).
fn frag_words(n: usize, ty: u32) -> u32 {
    let per_reg = if ty == mma::F64 { 2 } else { 1 };
    (n * per_reg) as u32
}

/// Lowers the warp matrix instruction `i`; `Ok(false)` when it is not one.
pub fn lower<'c, 'a>(
    l: &Lowerer<'c, 'a>,
    fs: &mut FnState<'c, 'a>,
    i: &Instruction<'a>,
) -> Result<bool, Error> {
    let ins = l.ins(i)?;
    let ops = ins.ops();
    let t = self_ptr(l);
    let c32 = |v: u32| -> BasicValueEnum<'c> { l.c32(v as u64).into() };
    match ins.op {
        "mma" => {
            let kind = mma_kind(&ins).ok_or_else(|| unsupported(i))?;
            call_mma(l, fs, i, t, kind)
        }
        "ldmatrix" | "stmatrix" => {
            // `.m8n8` of `.b16` only: sm_100's `.m8n16`/`.m16n16` of 8-bit elements differ.
            if !ins.has(Mod::M8n8) || !ins.has(Mod::B16) {
                return Err(unsupported(i));
            }
            let num = match ins.any(&[Mod::X1, Mod::X2, Mod::X4]) {
                Some(Mod::X1) => 1,
                Some(Mod::X2) => 2,
                Some(Mod::X4) => 4,
                _ => return Err(unsupported(i)),
            };
            if ops.len() != 2 {
                return Err(unsupported(i));
            }
            let (addr_op, regs) = if ins.op == "ldmatrix" {
                (&ops[1], &ops[0])
            } else {
                (&ops[0], &ops[1])
            };
            let Operand::Addr(addr) = addr_op else {
                return Err(unsupported(i));
            };
            let p = row_address(l, fs, &ins, addr)?;
            if items(regs).len() != num as usize {
                return Err(wrong_fragment(i));
            }
            let trans = c32(ins.has(Mod::Trans) as u32);
            if ins.op == "ldmatrix" {
                let out = words_array(l, fs, num);
                l.call(
                    "ptx2llvm_rt_ldmatrix",
                    None,
                    &[
                        t,
                        program_point(l, i),
                        c32(num),
                        trans,
                        p.into(),
                        out.into(),
                    ],
                );
                unpack(l, fs, regs, out, false)?;
            } else {
                let r = pack(l, fs, regs, false)?;
                l.call(
                    "ptx2llvm_rt_stmatrix",
                    None,
                    &[t, program_point(l, i), c32(num), trans, p.into(), r.into()],
                );
            }
            Ok(true)
        }
        "wmma" => wmma(l, fs, &ins, i, t),
        "movmatrix" => {
            if !ins.has(Mod::M8n8) || !ins.has(Mod::Trans) || ops.len() != 2 {
                return Err(unsupported(i));
            }
            let a = l.operand(fs, &ops[1], Ty::b(32))?;
            let r = l.call_v(
                "ptx2llvm_rt_movmatrix",
                l.i32().into(),
                &[t, program_point(l, i), a],
            );
            l.set(fs, &ops[0], r, false)?;
            Ok(true)
        }
        _ => Ok(false),
    }
}
