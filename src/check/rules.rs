//! Modifier rules that ptxas enforces beyond the forms of `ptx.isa`: combinations of modifiers,
//! and of modifiers with state spaces and types, that each form allows on its own. Every rule
//! quotes the ptxas 13 message it mirrors; `tests/ptxas_diff.rs` holds them to ptxas.

use crate::isa::decoded::Decoded;
use crate::isa::{Mod, Opcode};
use crate::syntax::ast::{Instruction, Operand};
use crate::syntax::consteval;
use crate::syntax::diag::Diagnostic;

use super::instr::instr_name;

/// Checks one decoded instruction against the rules; pushes one diagnostic per broken rule.
pub(super) fn check_rules(instr: &Instruction<'_>, d: &Decoded, diags: &mut Vec<Diagnostic>) {
    let mut err = |msg: String| diags.push(Diagnostic::new(instr.op_span, msg));
    let name = || instr_name(instr);
    let op = instr.opcode;

    // "Modifier '.evict_last' cannot be applied to '.shared' space", "State space incorrect for
    // feature 'cache prefetching'", "Illegal use of attribute '.unified'": cache policies,
    // eviction priorities, prefetch sizes and `.unified` are for global memory (named, or
    // reached through a generic address).
    if matches!(op, Opcode::Ld | Opcode::St | Opcode::Atom | Opcode::Red) && !d.has(Mod::Async) {
        if let Some(space) = d.space().filter(|s| !matches!(s, Mod::Global)) {
            if let Some(cache) = d.mods.iter().copied().find(|m| is_cache_modifier(*m)) {
                err(format!(
                    "`{}`: `{}` applies to global memory only, not to `{}`",
                    name(),
                    cache.spelling(),
                    space.spelling()
                ));
            }
        }
    }

    // "Vector type too large, exceeds 128 bit limit" (256 on sm_100, which requirements.txt
    // checks): no access is wider than 256 bits.
    if matches!(op, Opcode::Ld | Opcode::St | Opcode::Ldu) {
        let bits = d.types().first().and_then(|t| t.type_bits()).unwrap_or(0)
            * u32::from(d.vec_width().unwrap_or(1));
        if bits > 256 {
            err(format!(
                "`{}`: a {bits}-bit access is wider than the 256 bits a vector may have",
                name()
            ));
        } else if d.has(Mod::B128) && d.vec_width().is_some() {
            // "Vector type too large, exceeds 128 bit limit": `.b128` is not vectorized.
            err(format!("`{}`: `.b128` values take no `.vN`", name()));
        } else if bits == 256 {
            // "global state space expected for feature '256 bit wide load/store'".
            if let Some(space) = d.space().filter(|s| *s != Mod::Global) {
                err(format!(
                    "`{}`: 256-bit accesses are for global memory (generic or `.global`), not `{}`",
                    name(),
                    space.spelling()
                ));
            }
        }
    }

    // "Modifier '.volatile' cannot be applied to '.param' space".
    if matches!(op, Opcode::Ld | Opcode::St)
        && d.has(Mod::Volatile)
        && d.space()
            .is_some_and(|s| matches!(s, Mod::Param | Mod::ParamEntry | Mod::ParamFunc))
    {
        err(format!(
            "`{}`: `.volatile` does not apply to `.param`",
            name()
        ));
    }

    // "Instruction 'ld' requires '.v8.b32/.v4.b64' type with '.L2::evict_first' modifier".
    if matches!(op, Opcode::Ld | Opcode::St) {
        if let Some(ev) = d
            .mods
            .iter()
            .copied()
            .find(|m| m.spelling().starts_with(".L2::evict_"))
        {
            let bits = d.types().first().and_then(|t| t.type_bits()).unwrap_or(0)
                * u32::from(d.vec_width().unwrap_or(1));
            if bits != 256 {
                err(format!(
                    "`{}`: `{}` needs a 256-bit access (`.v8.b32`, `.v4.b64`, …)",
                    name(),
                    ev.spelling()
                ));
            }
        }
    }

    // "Illegal modifier '.ftz' for instruction 'setp'/'cvt'": flushing subnormals needs an f32
    // (or, for comparisons, a half-precision) operand.
    if d.has(Mod::Ftz) {
        let types = d.types();
        let float = match op {
            Opcode::Cvt => types.contains(&Mod::F32),
            // The compared type: `set.dtype.stype`'s second, `setp.type`'s only.
            Opcode::Set | Opcode::Setp => types
                .last()
                .is_some_and(|t| matches!(t, Mod::F32 | Mod::F16 | Mod::F16x2)),
            _ => true,
        };
        if !float {
            err(format!(
                "`{}`: `.ftz` needs an `.f32` operand (it flushes f32 subnormals)",
                name()
            ));
        }
    }

    // "Mismatch between instruction type and comparison qualifier": bit-size types compare
    // for equality only, signed integers without the unsigned orderings, and the unordered
    // comparisons are for floats.
    if matches!(op, Opcode::Set | Opcode::Setp) {
        if let (Some(cmp), Some(&t)) = (d.cmp_op(), d.types().last()) {
            let s = cmp.spelling();
            let ok = if t.is_bit_type() {
                matches!(s, ".eq" | ".ne")
            } else if t.is_signed() {
                matches!(s, ".eq" | ".ne" | ".lt" | ".le" | ".gt" | ".ge")
            } else if t.is_unsigned() {
                matches!(
                    s,
                    ".eq" | ".ne" | ".lt" | ".le" | ".gt" | ".ge" | ".lo" | ".ls" | ".hi" | ".hs"
                )
            } else {
                !matches!(s, ".lo" | ".ls" | ".hi" | ".hs")
            };
            if !ok {
                err(format!(
                    "`{}`: the comparison `{s}` does not apply to `{}` operands",
                    name(),
                    t.spelling()
                ));
            }
        }
    }

    // "Barrier number '16' out of range, expected to be in range [0..15]".
    if matches!(op, Opcode::Bar | Opcode::Barrier) {
        let form = d.form();
        if let Ok(layout) = form.operand_layout(&instr.operands) {
            for (o, &at) in instr.operands.iter().zip(&layout) {
                if form.operands[at].name != "a" {
                    continue;
                }
                if let Operand::Imm(e) = o {
                    if let Some(v) = consteval::eval(e).filter(|v| v.bits > 15) {
                        err(format!(
                            "`{}`: barrier number {} is out of range (0 to 15)",
                            name(),
                            v.bits as i64
                        ));
                    }
                }
            }
        }
    }

    if op == Opcode::Cvt && d.form().operands.len() == 2 {
        cvt_rounding(d, &mut err, &name());
    }

    // "Modifier '.cta' requires order with 'mbarrier.arrive' instruction", "Modifier
    // '.relaxed' requires scope with 'multimem.red' instruction": the memory ordering and the
    // scope of `mbarrier` and `multimem` go together (`.weak` stands alone).
    if matches!(op, Opcode::Mbarrier | Opcode::Multimem) {
        let sem = d.sem().filter(|m| !matches!(m, Mod::Weak | Mod::Volatile));
        match (sem, d.scope()) {
            (Some(m), None) => err(format!(
                "`{}`: the ordering `{}` needs a scope (`.cta`, `.cluster`, …)",
                name(),
                m.spelling()
            )),
            (None, Some(m)) => err(format!(
                "`{}`: the scope `{}` needs a memory ordering (`.release`, `.acquire`, …)",
                name(),
                m.spelling()
            )),
            _ => {}
        }
    }

    // "Video selector is not allowed on destination for instruction 'vadd'", "Video
    // instruction cannot have destination selector and secondary operation": a selector on
    // `d` is the data-merge form (`vadd… d.b0, a, b, c`, no `.add`/`.min`/`.max`); `vmad`
    // has none.
    if matches!(
        op,
        Opcode::Vadd
            | Opcode::Vsub
            | Opcode::Vabsdiff
            | Opcode::Vmin
            | Opcode::Vmax
            | Opcode::Vshl
            | Opcode::Vshr
            | Opcode::Vset
            | Opcode::Vmad
    ) && instr.post_mods().any(|(k, _)| k == 0)
    {
        let n_post = instr.post_mods().count();
        let head = &instr.mods[..instr.mods.len() - n_post];
        let op2 = head
            .iter()
            .any(|m| matches!(m, Mod::Add | Mod::Min | Mod::Max));
        if op == Opcode::Vmad || op2 || instr.operands.len() != 4 {
            err(format!(
                "`{}`: a selector on the destination is the data-merge form only (`d.b0, a, b, c`, no secondary operation)",
                name()
            ));
        }
    }

    // "Modifier '.trans' require for instruction ldmatrix with shape '.m16n16'" (and
    // stmatrix's `.m16n8`): the 8-bit shapes are transposed.
    if matches!(op, Opcode::Ldmatrix | Opcode::Stmatrix)
        && d.mods
            .iter()
            .any(|m| matches!(m.spelling(), ".m16n16" | ".m16n8"))
        && !d.has(Mod::Trans)
    {
        err(format!("`{}`: this shape needs `.trans`", name()));
    }

    // "Incorrect type '.b32' for operation '.add' in instruction 'sured.b'": `.add` takes
    // `.u32`/`.u64`/`.s32`, `.min`/`.max` the integers, `.and`/`.or` `.b32`; `sured.p`'s
    // `.b64` is for `.min`/`.max` only (the manual's Description).
    if op == Opcode::Sured {
        if let (Some(&t), Some(o)) = (
            d.types().first(),
            d.mods
                .iter()
                .copied()
                .find(|m| matches!(m, Mod::Add | Mod::Min | Mod::Max | Mod::And | Mod::Or)),
        ) {
            let ok = if d.has(Mod::P) {
                t == Mod::B32 || matches!(o, Mod::Min | Mod::Max)
            } else {
                match o {
                    Mod::Add => matches!(t, Mod::U32 | Mod::U64 | Mod::S32),
                    Mod::Min | Mod::Max => matches!(t, Mod::U32 | Mod::U64 | Mod::S32 | Mod::S64),
                    _ => t == Mod::B32,
                }
            };
            if !ok {
                err(format!(
                    "`{}`: the operation `{}` does not take `{}`",
                    name(),
                    o.spelling(),
                    t.spelling()
                ));
            }
        }
    }

    // "Illegal modifier '.global_address' for instruction 'tensormap.replace' with type
    // '.b32'": the address and strides are 64-bit fields, the others 32-bit.
    if op == Opcode::Tensormap {
        let field = d.mods.iter().map(|m| m.spelling()).find(|s| {
            matches!(
                *s,
                ".global_address"
                    | ".rank"
                    | ".box_dim"
                    | ".global_dim"
                    | ".global_stride"
                    | ".element_stride"
                    | ".elemtype"
                    | ".interleave_layout"
                    | ".swizzle_mode"
                    | ".swizzle_atomicity"
                    | ".fill_mode"
            )
        });
        if let (Some(f), Some(&t)) = (field, d.types().last()) {
            let want = if matches!(f, ".global_address" | ".global_stride") {
                Mod::B64
            } else {
                Mod::B32
            };
            if t != want {
                err(format!(
                    "`{}`: the field `{f}` is replaced with a `{}` value, not `{}`",
                    name(),
                    want.spelling(),
                    t.spelling()
                ));
            }
        }
    }

    match op {
        Opcode::Tcgen05 => tcgen05_rules(d, &mut err, &name()),
        Opcode::Cp => {
            tensor_modes(d, &mut err, &name());
            if d.has(Mod::Reduce) {
                reduce_types(d, &mut err, &name());
            }
        }
        Opcode::Multimem => {
            if d.has(Mod::Cp) {
                reduce_types(d, &mut err, &name());
            } else {
                multimem_types(d, &mut err, &name());
            }
        }
        // "Argument 1 of instruction 'setmaxnreg.inc': unexpected value '1', expected to be
        // multiple of 8" / "out of range, expected to be in range [24..256]".
        Opcode::Setmaxnreg => {
            if let Some(Operand::Imm(e)) = instr.operands.first() {
                if let Some(v) = consteval::eval(e) {
                    let n = v.bits as i64;
                    if !(24..=256).contains(&n) || n % 8 != 0 {
                        err(format!(
                            "`{}`: the register count {n} must be a multiple of 8 from 24 to 256",
                            name()
                        ));
                    }
                }
            }
        }
        _ => {}
    }

    // "Modifier '.abs' requires modifier '.xorsign'" and the other way round (the two-source
    // forms; the three-source `min.abs.f32 d, a, b, c` takes `.abs` alone).
    if matches!(op, Opcode::Min | Opcode::Max)
        && d.form().operands.len() == 3
        && d.has(Mod::Xorsign) != d.has(Mod::Abs)
    {
        err(format!(
            "`{}`: `.xorsign` and `.abs` go together (`.xorsign.abs`)",
            name()
        ));
    }
}

/// `cvt`'s rounding rules ("Rounding modifier required", "Illegal rounding modifier", "Illegal
/// modifier '.sat'"): a float result that can be inexact needs a float rounding (`.rn`…), an
/// integer from a float an integer rounding (`.rzi`…), a float of the same type may round to
/// an integer, and exact conversions take none.
fn cvt_rounding(d: &Decoded, err: &mut dyn FnMut(String), name: &str) {
    let types = d.types();
    let (Some(&dt), Some(&st)) = (types.first(), types.get(1)) else {
        return;
    };
    let is_float = |t: Mod| matches!(t, Mod::F16 | Mod::Bf16 | Mod::F32 | Mod::F64);
    let is_int = |t: Mod| t.is_int_type();
    if !(is_float(dt) || is_int(dt)) || !(is_float(st) || is_int(st)) {
        return;
    }
    let bits = |t: Mod| t.type_bits().unwrap_or(0);
    let rounding = d.rounding();
    let int_rnd = rounding.is_some_and(Mod::is_int_rounding);
    let float_rnd = rounding.is_some() && !int_rnd;
    // What the pair needs: Some(true) a float rounding, Some(false) an integer rounding.
    let (required, allowed_int, allowed_float) = match (is_float(dt), is_float(st)) {
        (true, false) => (Some(true), false, true),
        (false, true) => (Some(false), true, false),
        (true, true) if dt == st => (None, true, false),
        (true, true) if bits(dt) > bits(st) => (None, false, false),
        (true, true) => (Some(true), false, true),
        (false, false) => (None, false, false),
    };
    let pair = format!("{}{}", dt.spelling(), st.spelling());
    if (int_rnd && !allowed_int) || (float_rnd && !allowed_float) {
        err(format!(
            "`{name}`: `{}` is not a rounding of `cvt{pair}`",
            rounding.map_or("", Mod::spelling)
        ));
    } else if rounding.is_none() {
        match required {
            Some(true) => err(format!(
                "`{name}`: `cvt{pair}` needs a rounding modifier (`.rn`, `.rz`, `.rm`, `.rp`)"
            )),
            Some(false) => err(format!(
                "`{name}`: `cvt{pair}` needs an integer rounding modifier (`.rni`, `.rzi`, `.rmi`, `.rpi`)"
            )),
            None => {}
        }
    }
    // "Illegal modifier '.sat' for instruction 'cvt'": between integer types ptxas takes
    // `.sat` only where it can clamp, i.e. the destination does not hold every source value
    // (`cvt.sat.s32.s16` is rejected, `cvt.sat.u32.s16` and `cvt.sat.s8.u8` are not).
    let signed = |t: Mod| t.spelling().starts_with(".s");
    let holds = match (signed(dt), signed(st)) {
        (false, true) => false,
        (true, false) => bits(dt) > bits(st),
        _ => bits(dt) >= bits(st),
    };
    if is_int(dt) && is_int(st) && holds && d.has(Mod::Sat) {
        err(format!(
            "`{name}`: `.sat` cannot change `cvt{pair}` (every source value fits)"
        ));
    }
}

/// Cache-control modifiers that only global memory takes.
fn is_cache_modifier(m: Mod) -> bool {
    let s = m.spelling();
    s.starts_with(".L1::") || s.starts_with(".L2::") || m == Mod::Unified
}

/// The `tcgen05` rules beyond the forms, measured with ptxas 13:
/// - `.ld`/`.st`: at most 128 registers per thread ("Modifier .x64 not allowed for
///   instruction tcgen05.ld with shape '.16x256b'"); `.ld.red` reduces at least two columns
///   ("Illegal modifier '.x1' for instruction 'tcgen05.ld.red'");
/// - `.cp`: `.32x128b` copies with `.warpx4`, `.64x128b` with a `.warpx2::…`, the other
///   shapes with neither ("Modifier '.warptype' require for instruction tcgen05.cp with
///   shape '.32x128b'", "Modifier .warptype not allowed …").
fn tcgen05_rules(d: &Decoded, err: &mut dyn FnMut(String), name: &str) {
    let has = |s: &str| d.mods.iter().any(|m| m.spelling() == s);
    if let Some((shape, per, num)) = super::types::tcgen05_data_shape(d) {
        if per * num > 128 {
            err(format!(
                "`{name}`: `.x{num}` is not allowed with shape `{shape}` ({} registers per thread; at most 128)",
                per * num
            ));
        }
        if has(".red") && num < 2 {
            err(format!(
                "`{name}`: `.ld.red` needs a count of at least `.x2`"
            ));
        }
    }
    if has(".cp") {
        let shape = d
            .mods
            .iter()
            .map(|m| m.spelling())
            .find(|s| s.ends_with('b') && s.as_bytes()[1].is_ascii_digit());
        let warp = d
            .mods
            .iter()
            .map(|m| m.spelling())
            .find(|s| s.starts_with(".warpx"));
        let want: &[&str] = match shape {
            Some(".32x128b") => &[".warpx4"],
            Some(".64x128b") => &[".warpx2::02_13", ".warpx2::01_23"],
            _ => &[],
        };
        let shape = shape.unwrap_or("");
        match warp {
            None if !want.is_empty() => err(format!(
                "`{name}`: shape `{shape}` needs a warp modifier ({})",
                want.join(", ")
            )),
            Some(w) if !want.contains(&w) => err(format!(
                "`{name}`: `{w}` is not allowed with shape `{shape}`{}",
                if want.is_empty() {
                    String::new()
                } else {
                    format!(" (it takes {})", want.join(", "))
                }
            )),
            _ => {}
        }
    }
}

/// The load modes of the bulk tensor copies need dimensions: the im2col modes three or
/// more, `.tile::gather4`/`.tile::scatter4` exactly two ("Modifier '.2d' cannot be combined
/// with modifier '.im2col'", measured with ptxas 13).
fn tensor_modes(d: &Decoded, err: &mut dyn FnMut(String), name: &str) {
    let Some((dim_mod, dims)) = d.mods.iter().find_map(|m| {
        let s = m.spelling();
        let n = s
            .strip_prefix('.')?
            .strip_suffix('d')?
            .parse::<u32>()
            .ok()?;
        Some((s, n))
    }) else {
        return;
    };
    for m in &d.mods {
        let s = m.spelling();
        let ok = if s.starts_with(".im2col") {
            dims >= 3
        } else if matches!(s, ".tile::gather4" | ".tile::scatter4") {
            dims == 2
        } else {
            continue;
        };
        if !ok {
            err(format!(
                "`{name}`: `{s}` cannot be combined with `{dim_mod}`"
            ));
        }
    }
}

/// The operation/type pairs of the bulk reductions (`cp.reduce.async.bulk`,
/// `multimem.cp.reduce.async.bulk`), from the manual's table ("Incorrect type '.f16' for
/// operation '.and' in instruction 'cp.reduce.async.bulk'"): reductions into
/// `.shared::cluster` take fewer types than into global memory; `.add` of `.f16`/`.bf16`
/// needs `.noftz` ("Modifier '.noftz' required").
fn reduce_types(d: &Decoded, err: &mut dyn FnMut(String), name: &str) {
    use Mod::*;
    let Some(&t) = d.types().first() else {
        return;
    };
    let Some(op) = d
        .mods
        .iter()
        .copied()
        .find(|m| matches!(m, And | Or | Xor | Add | Inc | Dec | Min | Max))
    else {
        return;
    };
    let cluster = d.has(SharedCluster) && d.opcode() == Opcode::Cp;
    let allowed: &[Mod] = match (op, cluster) {
        (Add, true) => &[U32, S32, U64],
        (Min | Max, true) => &[U32, S32],
        (And | Or | Xor, true) => &[B32],
        (Add, false) => &[U32, S32, U64, F32, F64, F16, Bf16],
        (Min | Max, false) => &[U32, S32, U64, S64, F16, Bf16],
        (And | Or | Xor, false) => &[B32, B64],
        _ => &[U32],
    };
    if !allowed.contains(&t) {
        let list: Vec<&str> = allowed.iter().map(|m| m.spelling()).collect();
        err(format!(
            "`{name}`: the operation `{}` takes {}, not `{}`",
            op.spelling(),
            list.join(", "),
            t.spelling()
        ));
    } else if op == Add && matches!(t, F16 | Bf16) && !d.has(Noftz) {
        err(format!("`{name}`: `.add{}` needs `.noftz`", t.spelling()));
    }
}

/// `multimem.ld_reduce`/`.st`/`.red`, from the manual and ptxas 13:
/// - a float type with its `.vN` is 32, 64 or 128 bits wide, and `.f64` takes no `.vN`
///   ("Unexpected instruction types", "Inconsistent type '.f64' with vector .v2");
/// - the operation/type pairs: `.add` integers `.u32`/`.s32`/`.u64` and the floats, `.and`/
///   `.or`/`.xor` the bit types, `.min`/`.max` the integers and the half and 8-bit float
///   formats ("Incorrect type '.f32' for operation '.min'");
/// - `.acc::f32` accumulates `.add` of the half formats, `.acc::f16` `.add` of the 8-bit
///   ones ("Illegal reduction operation for instruction 'multimem.ld_reduce.acc::f32'",
///   "Illegal modifier '.acc::f32' … with type '.e4m3x4'").
fn multimem_types(d: &Decoded, err: &mut dyn FnMut(String), name: &str) {
    use Mod::*;
    let Some(&t) = d.types().first() else {
        return;
    };
    let bits = t.instr_type_bits().unwrap_or(0);
    if t.is_float_type() {
        let total = bits * u32::from(d.vec_width().unwrap_or(1));
        if !matches!(total, 32 | 64 | 128) || (t == F64 && d.vec_width().is_some()) {
            err(format!(
                "`{name}`: a `{}` value with its vector width must be 32, 64 or 128 bits wide ({total} here; `.f64` takes no `.vN`)",
                t.spelling()
            ));
        }
    }
    let op = d
        .mods
        .iter()
        .copied()
        .find(|m| matches!(m, And | Or | Xor | Add | Min | Max));
    let Some(op) = op else {
        return;
    };
    let eight_bit = matches!(bits, 8 | 16 | 32)
        && t.is_float_type()
        && t.type_bits().is_none()
        && !matches!(t, Bf16 | Bf16x2);
    let half = matches!(t, F16 | F16x2 | Bf16 | Bf16x2);
    let ok = match op {
        Add => matches!(t, U32 | S32 | U64 | F32 | F64) || half || eight_bit,
        And | Or | Xor => t.is_bit_type(),
        _ => matches!(t, U32 | S32 | U64 | S64) || half || eight_bit,
    };
    if !ok {
        err(format!(
            "`{name}`: the operation `{}` does not take `{}`",
            op.spelling(),
            t.spelling()
        ));
    }
    for (acc, want_half) in [(AccF32, true), (AccF16, false)] {
        if !d.has(acc) {
            continue;
        }
        if op != Add || (want_half && !half) || (!want_half && !eight_bit) {
            err(format!(
                "`{name}`: `{}` applies to `.add` of {} only",
                acc.spelling(),
                if want_half {
                    "`.f16`, `.f16x2`, `.bf16`, `.bf16x2`"
                } else {
                    "the 8-bit float formats"
                }
            ));
        }
    }
}
