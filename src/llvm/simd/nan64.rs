//! The GPU's f64 NaN choice on a cold path (issue 17), in the optimized module as code
//! generation gets it.
//!
//! An f64 `add`, `sub`, `mul`, `div` or `fma` returns, where an operand is a NaN, the first
//! NaN operand in an order measured on the GPU (quieted), whatever the host computed
//! (`lower::fp::gpu_nan_f64`): a chain of `select(fcmp uno x, x | quiet, acc)` over the
//! operands, ending in the host's result `r`. In a loop of FMAs (a double-precision tiled
//! matmul's `acc += a * b`) that is three compares and three blends per FMA, and the blends
//! sit between one FMA and the next on the accumulator's dependence chain: the 512³ matmul
//! ran 5x slower than its f32 form.
//!
//! Here each such chain becomes `br (any lane of r is a NaN), chain, join` with the chain in
//! the cold block and `phi(r, chain)` at the join. Exact: a NaN operand makes every one of
//! these operations' results a NaN (IEEE 754), so where no lane of `r` is a NaN no select of
//! the chain picks its operand, and the chain's value is `r`.

use llvm_sys::core as c;
use llvm_sys::prelude::*;
use llvm_sys::LLVMIntPredicate as P;
use llvm_sys::LLVMOpcode as O;
use llvm_sys::LLVMRealPredicate as R;

use super::ir;

/// The quiet bit of an f64 NaN.
const QUIET: u64 = 1 << 51;

/// A chain: its root select, the instructions that move with it (the root among them), and
/// the host's result `r` with the bitcast of it that the innermost select takes.
struct Chain {
    root: LLVMValueRef,
    moved: Vec<LLVMValueRef>,
    r: LLVMValueRef,
    r_bits: LLVMValueRef,
}

/// Moves every chain of `m`'s functions to a cold block; returns how many.
///
/// # Safety
/// `m` is a live module.
pub unsafe fn fold(m: LLVMModuleRef) -> usize {
    let mut done = 0;
    for f in ir::functions(m) {
        let chains: Vec<Chain> = ir::function_instructions(f)
            .into_iter()
            .filter_map(|i| chain(i))
            .collect();
        for ch in chains {
            split(&ch);
            done += 1;
        }
    }
    done
}

/// Whether `v` is `fcmp uno x, 0.0` (or `x, x`): `x`.
unsafe fn nan_test(v: LLVMValueRef) -> Option<LLVMValueRef> {
    if c::LLVMIsAFCmpInst(v).is_null() || c::LLVMGetFCmpPredicate(v) != R::LLVMRealUNO {
        return None;
    }
    let (x, k) = (c::LLVMGetOperand(v, 0), c::LLVMGetOperand(v, 1));
    let zero = !c::LLVMIsAConstant(k).is_null() && c::LLVMIsNull(k) != 0;
    (zero || k == x).then_some(x)
}

/// Whether `v` is `or a, QUIET` (splat or scalar): `a`, the bits of some double (`bits_of`).
unsafe fn quieted(v: LLVMValueRef) -> Option<LLVMValueRef> {
    if !ir::is_instruction(v) || ir::opcode(v) != O::LLVMOr {
        return None;
    }
    let (a, k) = (c::LLVMGetOperand(v, 0), c::LLVMGetOperand(v, 1));
    let q = if c::LLVMIsAConstantInt(k).is_null() {
        let s = c::LLVMIsAConstant(k);
        if s.is_null() {
            return None;
        }
        let lanes = c::LLVMGetVectorSize(c::LLVMTypeOf(k));
        (0..lanes).all(|j| {
            let e = c::LLVMGetAggregateElement(k, j);
            !e.is_null() && ir::const_u64(e) == Some(QUIET)
        })
    } else {
        ir::const_u64(k) == Some(QUIET)
    };
    q.then_some(a)
}

/// Whether integer `a` holds the bits of double `x`: `a = bitcast x`, or `x = bitcast a` (the
/// previous chain's select, whose double the next operation took).
unsafe fn bits_of(a: LLVMValueRef, x: LLVMValueRef) -> bool {
    (!c::LLVMIsABitCastInst(a).is_null() && c::LLVMGetOperand(a, 0) == x)
        || (!c::LLVMIsABitCastInst(x).is_null() && c::LLVMGetOperand(x, 0) == a)
}

/// The f64 operation whose operands may be NaNs that the chain picks from: `fadd`, `fsub`,
/// `fmul`, `fdiv` or `llvm.fma`, of doubles or vectors of them.
unsafe fn operation(r: LLVMValueRef) -> Option<Vec<LLVMValueRef>> {
    if !ir::is_instruction(r) {
        return None;
    }
    let t = c::LLVMTypeOf(r);
    let et = if c::LLVMGetTypeKind(t) == llvm_sys::LLVMTypeKind::LLVMVectorTypeKind {
        c::LLVMGetElementType(t)
    } else {
        t
    };
    if c::LLVMGetTypeKind(et) != llvm_sys::LLVMTypeKind::LLVMDoubleTypeKind {
        return None;
    }
    match ir::opcode(r) {
        O::LLVMFAdd | O::LLVMFSub | O::LLVMFMul | O::LLVMFDiv => Some(ir::operands(r)),
        O::LLVMCall if ir::callee(r).starts_with("llvm.fma.") => Some(ir::args(r)),
        _ => None,
    }
}

/// The chain rooted at `s`, when `s` is one's outermost select (no chain select takes it).
unsafe fn chain(s: LLVMValueRef) -> Option<Chain> {
    if c::LLVMIsASelectInst(s).is_null() {
        return None;
    }
    let bb = c::LLVMGetInstructionParent(s);
    let mut parts = Vec::new();
    let mut picks = Vec::new();
    let mut cur = s;
    // Down the false operands to the host's result.
    let r_bits = loop {
        let (cond, t, f) = (
            c::LLVMGetOperand(cur, 0),
            c::LLVMGetOperand(cur, 1),
            c::LLVMGetOperand(cur, 2),
        );
        let x = nan_test(cond)?;
        let a = quieted(t)?;
        if !bits_of(a, x) {
            return None;
        }
        picks.push(x);
        parts.extend([cur, cond, t, a]);
        if !c::LLVMIsASelectInst(f).is_null() {
            cur = f;
        } else if !c::LLVMIsABitCastInst(f).is_null() {
            break f;
        } else {
            return None;
        }
    };
    let r = c::LLVMGetOperand(r_bits, 0);
    let ops = operation(r)?;
    if !picks.iter().all(|x| ops.contains(x)) || c::LLVMGetInstructionParent(r_bits) != bb {
        return None;
    }
    // The root: no select of a chain takes it as its false operand.
    if ir::users(s).iter().any(|u| {
        !c::LLVMIsASelectInst(*u).is_null()
            && c::LLVMGetOperand(*u, 2) == s
            && nan_test(c::LLVMGetOperand(*u, 0)).is_some()
    }) {
        return None;
    }
    // What moves: the root, and each part of the block that only moved values use (a NaN
    // test of an operand that another chain shares stays, computed where it was).
    let mut moved = vec![s];
    loop {
        let before = moved.len();
        for &v in &parts {
            if !moved.contains(&v)
                && c::LLVMGetInstructionParent(v) == bb
                && ir::users(v).iter().all(|u| moved.contains(u))
            {
                moved.push(v);
            }
        }
        if moved.len() == before {
            break;
        }
    }
    Some(Chain {
        root: s,
        moved,
        r,
        r_bits,
    })
}

/// `bb: …; r; …chain…; s; rest` becomes `bb: …; r; …; br (any lane of r NaN), cold, join`,
/// `cold: chain; s; br join`, `join: phi(bits of r, s); rest`.
unsafe fn split(ch: &Chain) {
    let s = ch.root;
    let cx = c::LLVMGetTypeContext(c::LLVMTypeOf(s));
    let n = c"".as_ptr();
    let bb = c::LLVMGetInstructionParent(s);
    let f = c::LLVMGetBasicBlockParent(bb);
    let join = super::pageload::split_after(s, c"nan64.join");
    let cold = c::LLVMAppendBasicBlockInContext(cx, f, c"nan64.cold".as_ptr());
    c::LLVMMoveBasicBlockAfter(cold, bb);
    // The chain, in its order, into the cold block.
    let order: Vec<LLVMValueRef> = ir::instructions(bb)
        .into_iter()
        .filter(|i| ch.moved.contains(i))
        .collect();
    for &v in &order {
        c::LLVMInstructionRemoveFromParent(v);
    }
    let b = c::LLVMCreateBuilderInContext(cx);
    c::LLVMPositionBuilderAtEnd(b, bb);
    let nan = c::LLVMBuildFCmp(b, R::LLVMRealUNO, ch.r, ch.r, n);
    let any =
        if c::LLVMGetTypeKind(c::LLVMTypeOf(nan)) == llvm_sys::LLVMTypeKind::LLVMVectorTypeKind {
            let w = c::LLVMGetVectorSize(c::LLVMTypeOf(nan));
            let it = c::LLVMIntTypeInContext(cx, w);
            let bits = c::LLVMBuildBitCast(b, nan, it, n);
            c::LLVMBuildICmp(b, P::LLVMIntNE, bits, c::LLVMConstNull(it), n)
        } else {
            nan
        };
    let br = c::LLVMBuildCondBr(b, any, cold, join);
    unlikely(br);
    c::LLVMPositionBuilderAtEnd(b, cold);
    for &v in &order {
        c::LLVMInsertIntoBuilder(b, v);
    }
    c::LLVMBuildBr(b, join);
    c::LLVMPositionBuilderBefore(b, c::LLVMGetFirstInstruction(join));
    let phi = c::LLVMBuildPhi(b, c::LLVMTypeOf(s), n);
    c::LLVMDisposeBuilder(b);
    for u in ir::users(s) {
        if u != phi {
            for k in 0..c::LLVMGetNumOperands(u) as u32 {
                if c::LLVMGetOperand(u, k) == s {
                    c::LLVMSetOperand(u, k, phi);
                }
            }
        }
    }
    let (mut vals, mut blocks) = ([ch.r_bits, s], [bb, cold]);
    c::LLVMAddIncoming(phi, vals.as_mut_ptr(), blocks.as_mut_ptr(), 2);
}

/// Marks conditional branch `br`'s first successor as rarely taken.
unsafe fn unlikely(br: LLVMValueRef) {
    let cx = c::LLVMGetTypeContext(c::LLVMTypeOf(br));
    let i32t = c::LLVMInt32TypeInContext(cx);
    let name = "branch_weights";
    let mut ops = [
        c::LLVMMDStringInContext2(cx, name.as_ptr().cast(), name.len()),
        c::LLVMValueAsMetadata(c::LLVMConstInt(i32t, 1, 0)),
        c::LLVMValueAsMetadata(c::LLVMConstInt(i32t, 2000, 0)),
    ];
    let node = c::LLVMMDNodeInContext2(cx, ops.as_mut_ptr(), 3);
    let kind = c::LLVMGetMDKindIDInContext(cx, c"prof".as_ptr(), 4);
    c::LLVMSetMetadata(br, kind, c::LLVMMetadataAsValue(cx, node));
}
