//! Operand type checking: each register, special register and immediate an instruction uses
//! must be compatible with the type the instruction gives that operand (PTX ISA 9.2 §5.2.1,
//! §6.1 and the relaxed rules for `ld`/`st`/`cvt` of "Operand Size Exceeding Instruction-Type
//! Size").
//!
//! The rules, as `ptxas` applies them:
//!
//! - bit-size types (`.bN`) accept any register of N bits; integer types (`.uN`/`.sN`) accept
//!   integer and bit-size registers of N bits; fundamental float types (`.f16`, `.f16x2`,
//!   `.f32`, `.f64`) accept bit-size registers of the size and float registers of exactly that
//!   type; the other packed and alternate formats (`.bf16`, `.bf16x2`, `.tf32`, `.u16x2`, …)
//!   need bit-size registers (a `.f16x2` register also passes for `.u16x2`/`.s16x2`);
//!   `.pred` accepts `.pred` registers only, and a `.pred` register fits nothing else;
//! - `ld`, `st`, `ldu` and `cvt` also accept wider bit-size and integer registers (and wider
//!   bit-size instruction types with float registers): the value is truncated or extended;
//! - an integer literal cannot stand for a float operand, and a float literal (`0f…`, `0d…`,
//!   `1.5`) fits only float and bit-size types;
//! - vector special registers (`%tid`, `%ctaid`, `%clusterid`, …) need a component; special
//!   registers are read by `mov` and `cvt` only; `%tid`-family components may be read as 16
//!   bits (legacy code), `%gridid` as 32 or 64 bits;
//! - `.vN` instructions take a brace vector of exactly N elements; scalar ones do not take
//!   vectors (except `mov`'s packing forms, whose elements together fill the type).
//!
//! Which type each operand has is written once per opcode in [`operand_types`]; an opcode not
//! listed there (tensor-core, texture, TMA and other special-purpose instructions) is checked
//! for shape only, by the form matcher.

use smallvec::SmallVec;

use super::instr::instr_name;
use crate::isa::decoded::Decoded;
use crate::isa::{Mod, Opcode};
use crate::syntax::ast::{Component, Expr, Instruction, Operand, UnOp};
use crate::syntax::diag::Diagnostic;

/// What a name denotes, as far as typing goes.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) enum Declared {
    /// `.reg .TYPE` (with `.vN` when declared as a vector register).
    Reg { ty: Mod, vector: Option<u8> },
    /// A special register (`%tid`, `%laneid`, …).
    Special,
    /// Variables, parameters, functions: their address or value is not a register's type.
    Other,
}

/// Why an operand does not fit; rendered by [`mismatch_message`].
struct Mismatch<'s> {
    index: usize,
    what: String,
    want: Mod,
    relaxed: bool,
    span: crate::syntax::span::Span,
    detail: Option<&'s str>,
}

/// Checks the operand types of one decoded instruction; `lookup` resolves a name in scope.
pub(super) fn check_types(
    instr: &Instruction<'_>,
    decoded: &Decoded,
    lookup: &dyn Fn(&str) -> Option<Declared>,
    diags: &mut Vec<Diagnostic>,
) {
    let opcode = instr.opcode;
    // Special registers: only `mov` and `cvt` read them; vector ones need a component.
    for op in &instr.operands {
        each_name(op, &mut |name, comp, span| {
            if lookup(name) != Some(Declared::Special) {
                return;
            }
            if comp.is_none() && is_vector_sreg(name) {
                diags.push(Diagnostic::new(
                    span,
                    format!(
                        "special register `{name}` is a vector: read one component, like `{name}.x`"
                    ),
                ));
            } else if !matches!(opcode, Opcode::Mov | Opcode::Cvt) {
                diags.push(Diagnostic::new(
                    span,
                    format!(
                        "special register `{name}` cannot be an operand of `{}`: read it into a register with `mov` first",
                        opcode.spelling()
                    ),
                ));
            }
        });
    }
    // `.L2::cache_hint` needs its cache-policy operand (ptxas: "Arguments mismatch"). The
    // other way round: a fourth operand of a scalar `atom` (not `.cas`) is the policy and
    // needs the modifier (".L2::cache_hint modifier required for instruction 'atom' with 4
    // arguments"), except that ptxas 13 also takes, undocumented, a 32-bit register there
    // for `.and`/`.or`/`.xor`/`.exch` of `.b32` (measured).
    if opcode == Opcode::Atom
        && instr.operands.len() == 4
        && decoded.vec_width().is_none()
        && !decoded.has(Mod::Cas)
        && !decoded.has(Mod::L2CacheHint)
    {
        let quirk = decoded.types().first() == Some(&Mod::B32)
            && decoded
                .mods
                .iter()
                .any(|m| matches!(m, Mod::And | Mod::Or | Mod::Xor | Mod::Exch))
            && matches!(&instr.operands[3], Operand::Name { name, .. }
                if matches!(lookup(name), Some(Declared::Reg { ty, vector: None }) if ty.type_bits() == Some(32)));
        if !quirk {
            diags.push(Diagnostic::new(
                instr.operands[3].span(),
                format!(
                    "`{}`: a fourth operand is a cache policy, which needs `.L2::cache_hint`",
                    instr_name(instr)
                ),
            ));
        }
    }
    if decoded
        .form()
        .operands
        .iter()
        .any(|o| o.name == "cache-policy")
    {
        // Some optional operand is there (which one, `cp.async`'s src-size or the policy, the
        // modifier decides; ptxas reads it as the policy).
        let required = decoded
            .form()
            .operands
            .iter()
            .filter(|o| o.group.is_none())
            .count();
        let present = instr.operands.len() > required;
        if decoded.has(Mod::L2CacheHint) && !present {
            diags.push(Diagnostic::new(
                instr.span,
                format!(
                    "`{}`: `.L2::cache_hint` needs a cache-policy operand (a `.b64` register) after the others",
                    instr_name(instr)
                ),
            ));
        }
    }
    // Which types each atomic operation takes, in ptxas's words ("Operation .xor requires .b32
    // or .b64 type for instruction 'atom'"); the vector forms have their own forms.
    // (`red.async`'s forms list their own operation/type pairs, which differ: `.add.s64`.)
    if matches!(opcode, Opcode::Atom | Opcode::Red)
        && decoded.vec_width().is_none()
        && !decoded.has(Mod::Async)
    {
        let t = decoded.types().first().copied();
        let op = instr
            .mods
            .iter()
            .copied()
            .find(|m| atomic_types(*m).is_some());
        if let (Some(t), Some(op)) = (t, op) {
            let allowed = atomic_types(op).unwrap_or(&[]);
            if !allowed.contains(&t) {
                let list: Vec<&str> = allowed.iter().map(|m| m.spelling()).collect();
                diags.push(Diagnostic::new(
                    instr.op_span,
                    format!(
                        "`{}`: the operation `{}` takes {}, not `{}`",
                        instr_name(instr),
                        op.spelling(),
                        list.join(", "),
                        t.spelling()
                    ),
                ));
            }
        }
    }
    // ptxas: "Vector type too large, exceeds 128 bit limit" (`mov.v4.b64`).
    if opcode == Opcode::Mov {
        let t = decoded.types().first().copied();
        if let (Some(n), Some(bits)) = (decoded.vec_width(), t.and_then(Mod::type_bits)) {
            if u32::from(n) * bits > 128 {
                diags.push(Diagnostic::new(
                    instr.op_span,
                    format!(
                        "`{}`: a vector of {n} × {bits} bits exceeds the 128-bit limit of `mov`",
                        instr_name(instr)
                    ),
                ));
            }
        }
    }
    if opcode == Opcode::Mma {
        mma_fragments(instr, decoded, lookup, diags);
    }
    if opcode == Opcode::Wmma {
        wmma_fragments(instr, decoded, lookup, diags);
    }
    if matches!(
        opcode,
        Opcode::Ldmatrix | Opcode::Stmatrix | Opcode::Movmatrix
    ) {
        matrix_fragments(instr, decoded, lookup, diags);
    }
    constant_operands(instr, decoded, lookup, diags);
    // "Arguments mismatch for instruction 'mov'": a predicate cannot hold an address.
    if opcode == Opcode::Mov && decoded.types().first() == Some(&Mod::Pred) {
        if let Some(op) = instr.operands.get(1) {
            let mut symbol = false;
            match op {
                Operand::Imm(e) => e.each_name(&mut |n, _| {
                    symbol |= matches!(lookup(n), Some(Declared::Other));
                }),
                Operand::Name { name, .. } => {
                    symbol = matches!(lookup(name), Some(Declared::Other))
                }
                _ => {}
            }
            if symbol {
                diags.push(Diagnostic::new(
                    op.span(),
                    format!(
                        "operand 2 of `{}` is an address, which a `.pred` cannot hold",
                        instr_name(instr)
                    ),
                ));
            }
        }
    }
    gated_operands(instr, decoded, diags);
    match opcode {
        Opcode::Suld | Opcode::Sust | Opcode::Sured | Opcode::Tex | Opcode::Tld4 => {
            texture_coords(instr, decoded, lookup, diags)
        }
        Opcode::Tcgen05 => tcgen05_data(instr, decoded, lookup, diags),
        Opcode::Wgmma => wgmma_fragments(instr, decoded, lookup, diags),
        Opcode::Cp => tensor_coords(instr, decoded, lookup, diags),
        _ => {}
    }
    let Some(rules) = operand_types(instr, decoded) else {
        return;
    };
    let form = decoded.form();
    let vec_width = decoded.vec_width();
    let layout = match gated_layout(opcode, decoded, instr.operands.len()) {
        Some(Ok(layout)) => layout,
        _ => form
            .operand_layout(&instr.operands)
            .unwrap_or_else(|_| (0..instr.operands.len()).collect()),
    };
    for (index, (op, &at)) in instr.operands.iter().zip(&layout).enumerate() {
        let Some(pat) = form.operands.get(at) else {
            continue;
        };
        let (first, second) = pattern_names(&pat.name);
        let (op_a, op_b) = match op {
            Operand::Pair(a, b, _) => (&**a, Some(&**b)),
            _ => (op, None),
        };
        let mut parts: SmallVec<[(&Operand<'_>, &str); 2]> = SmallVec::new();
        parts.push((op_a, first));
        if let (Some(b), Some(n)) = (op_b, second) {
            parts.push((b, n));
        }
        for (op, pname) in parts {
            // Operands without an entry (`immLut`, cache policies, …) are not typed.
            let Some(&(_, want)) = rules.ops.iter().find(|(n, _)| *n == pname) else {
                continue;
            };
            let data_operand = rules.vector_operands.contains(&pname);
            if let Some(m) = check_operand(
                op,
                want,
                rules.relaxed,
                data_operand.then_some(vec_width).flatten(),
                data_operand,
                opcode,
                lookup,
            ) {
                diags.push(mismatch_message(
                    &instr_name(instr),
                    pname,
                    Mismatch { index, ..m },
                ));
            }
        }
    }
}

/// Per-opcode operand types: which operand (by its name in `ptx.isa`) has which type.
struct Rules {
    ops: SmallVec<[(&'static str, Mod); 8]>,
    /// `ld`/`st`/`ldu`/`cvt`: wider registers allowed.
    relaxed: bool,
    /// Operands that hold the data of a `.vN` access (and may be brace vectors).
    vector_operands: &'static [&'static str],
}

fn operand_types(instr: &Instruction<'_>, d: &Decoded) -> Option<Rules> {
    use Mod::*;
    use Opcode as O;
    let types = d.types();
    let t0 = types.first().copied();
    let one = (types.len() == 1).then_some(t0).flatten();
    let mut relaxed = false;
    let mut vector_operands: &'static [&'static str] = &[];
    let ops: SmallVec<[(&'static str, Mod); 8]> = match instr.opcode {
        // Mixed precision: `add.f32.f16 d, a, c`, `fma.rn.f32.bf16 d, a, b, c`.
        O::Add | O::Sub | O::Fma if types.len() == 2 => [
            ("d", types[0]),
            ("a", types[1]),
            ("b", types[1]),
            ("c", types[0]),
        ]
        .into_iter()
        .collect(),
        O::Add
        | O::Sub
        | O::Min
        | O::Max
        | O::Abs
        | O::Neg
        | O::Div
        | O::Rem
        | O::And
        | O::Or
        | O::Xor
        | O::Not
        | O::Cnot
        | O::Copysign
        | O::Sqrt
        | O::Rcp
        | O::Rsqrt
        | O::Sin
        | O::Cos
        | O::Lg2
        | O::Ex2
        | O::Tanh
        | O::Addc
        | O::Subc
        | O::Sad
        | O::Brev
        | O::Fma
        | O::Mul24
        | O::Mad24 => {
            let t = one?;
            [("d", t), ("a", t), ("b", t), ("c", t)]
                .into_iter()
                .collect()
        }
        O::Mul | O::Mad | O::Madc => {
            let t = one?;
            let dt = if d.has(Wide) { wide(t)? } else { t };
            [("d", dt), ("a", t), ("b", t), ("c", dt)]
                .into_iter()
                .collect()
        }
        O::Popc | O::Clz | O::Bfind => [("d", U32), ("a", one?)].into_iter().collect(),
        O::Shl | O::Shr => {
            let t = one?;
            [("d", t), ("a", t), ("b", U32)].into_iter().collect()
        }
        O::Shf => [("d", B32), ("a", B32), ("b", B32), ("c", U32)]
            .into_iter()
            .collect(),
        O::Bfe => {
            let t = one?;
            [("d", t), ("a", t), ("b", U32), ("c", U32)]
                .into_iter()
                .collect()
        }
        O::Bfi => {
            let t = one?;
            [("f", t), ("a", t), ("b", t), ("c", U32), ("d", U32)]
                .into_iter()
                .collect()
        }
        O::Prmt => [("d", B32), ("a", B32), ("b", B32), ("c", B32)]
            .into_iter()
            .collect(),
        O::Lop3 => [
            ("d", B32),
            ("p", Pred),
            ("a", B32),
            ("b", B32),
            ("c", B32),
            ("q", Pred),
        ]
        .into_iter()
        .collect(),
        O::Testp => [("p", Pred), ("a", one?)].into_iter().collect(),
        O::Setp => {
            let t = one?;
            [("p", Pred), ("q", Pred), ("a", t), ("b", t), ("c", Pred)]
                .into_iter()
                .collect()
        }
        O::Set if types.len() == 2 => [
            ("d", types[0]),
            ("a", types[1]),
            ("b", types[1]),
            ("c", Pred),
        ]
        .into_iter()
        .collect(),
        O::Selp => {
            let t = one?;
            [("d", t), ("a", t), ("b", t), ("c", Pred)]
                .into_iter()
                .collect()
        }
        O::Slct if types.len() == 2 => [
            ("d", types[0]),
            ("a", types[0]),
            ("b", types[0]),
            ("c", types[1]),
        ]
        .into_iter()
        .collect(),
        // The plain `cvt.dtype.atype d, a` forms.
        O::Cvt if types.len() == 2 && d.form().operands.len() == 2 && !d.has(Pack) => {
            // Wider registers for the fundamental types only; the packed small-float formats
            // take registers of exactly their width.
            relaxed = types.iter().all(|t| t.type_bits().is_some());
            let fit = |t: Mod| {
                if t.type_bits().is_some() {
                    Some(t)
                } else {
                    bit_type(t.instr_type_bits()?)
                }
            };
            [("d", fit(types[0])?), ("a", fit(types[1])?)]
                .into_iter()
                .collect()
        }
        // Packing conversions (`cvt.rn.satfinite.e4m3x2.f32 d, a, b`, `cvt.rs….e4m3x4.f32 d,
        // {a, b, e, f}, rbits`): the destination holds the packed format, sources the other.
        O::Cvt if types.len() == 2 && !d.has(Pack) => {
            // ptxas takes a wider destination for `.f16x2`, not for `.bf16x2` or the 8-bit,
            // 6-bit and 4-bit formats.
            relaxed = types[0] == F16x2;
            let dt = bit_type(types[0].instr_type_bits()?)?;
            let st = types[1];
            [
                ("d", dt),
                ("a", st),
                ("b", st),
                ("e", st),
                ("f", st),
                ("rbits", U32),
            ]
            .into_iter()
            .collect()
        }
        // `cvt.pack.sat.u8.s32.b32 d, a, b, c`: 32-bit integers in, the packed bits out in a
        // 32-bit integer register; wider registers pass (measured with ptxas 13).
        O::Cvt if d.has(Pack) => {
            relaxed = true;
            [("d", U32), ("a", S32), ("b", S32), ("c", B32)]
                .into_iter()
                .collect()
        }
        // Surfaces: the data of the instruction's type (wider registers pass, as for `ld` and
        // `st`; brace vectors for `.v2`/`.v4`). Measured with ptxas 13.
        O::Suld => {
            relaxed = true;
            vector_operands = &["d"];
            [("d", one?)].into_iter().collect()
        }
        O::Sust | O::Sured => {
            relaxed = true;
            vector_operands = &["c"];
            [("c", one?)].into_iter().collect()
        }
        // Video instructions: every operand is a 32-bit register or constant.
        O::Vadd
        | O::Vsub
        | O::Vabsdiff
        | O::Vmin
        | O::Vmax
        | O::Vshl
        | O::Vshr
        | O::Vmad
        | O::Vset
        | O::Vadd2
        | O::Vsub2
        | O::Vavrg2
        | O::Vabsdiff2
        | O::Vmin2
        | O::Vmax2
        | O::Vset2
        | O::Vadd4
        | O::Vsub4
        | O::Vavrg4
        | O::Vabsdiff4
        | O::Vmin4
        | O::Vmax4
        | O::Vset4 => [("d", B32), ("a", B32), ("b", B32), ("c", B32)]
            .into_iter()
            .collect(),
        O::Cvta => [("p", one?), ("a", one?)].into_iter().collect(),
        O::Isspacep => [("p", Pred)].into_iter().collect(),
        O::Mov => {
            let t = one?;

            vector_operands = &["d", "a"];
            [("d", t), ("a", t)].into_iter().collect()
        }
        O::Ld | O::Ldu => {
            relaxed = true;
            vector_operands = &["d"];
            [("d", one?)].into_iter().collect()
        }
        O::St if d.form().operands.len() <= 3 && !d.has(Mod::Async) => {
            relaxed = true;
            vector_operands = &["b"];
            [("b", one?)].into_iter().collect()
        }
        // `st.async`/`red.async` store or combine `b` of the type, signalling `[mbar]`.
        O::St | O::Red if d.has(Mod::Async) => {
            vector_operands = &["b"];
            [("b", one?)].into_iter().collect()
        }
        // Scalar atomics.
        O::Atom | O::Red if d.vec_width().is_none() && !d.has(Async) => {
            let t = one?;
            [("d", t), ("b", t), ("c", t), ("cache-policy", B64)]
                .into_iter()
                .collect()
        }
        // Vector atomics (`atom.global.v2.f32.add d, [a], b`): brace vectors of the type.
        O::Atom | O::Red if !d.has(Async) => {
            vector_operands = &["d", "b"];
            [("d", one?), ("b", one?), ("cache-policy", B64)]
                .into_iter()
                .collect()
        }
        // Barrier number and thread count are `.u32`; the `.red` result and the predicate.
        O::Bar | O::Barrier => {
            let dt = if d.has(Popc) { U32 } else { Pred };
            [("d", dt), ("p", Pred), ("a", U32), ("b", U32), ("c", Pred)]
                .into_iter()
                .collect()
        }
        O::Szext => {
            let t = one?;
            [("d", t), ("a", t), ("b", U32)].into_iter().collect()
        }
        O::Bmsk => [("d", B32), ("a", U32), ("b", U32)].into_iter().collect(),
        O::Stacksave => [("d", one?)].into_iter().collect(),
        O::Stackrestore => [("a", one?)].into_iter().collect(),
        O::Alloca => [("ptr", one?), ("size", one?), ("immAlign", U32)]
            .into_iter()
            .collect(),
        O::Nanosleep => [("t", U32)].into_iter().collect(),
        O::Fns => [("d", B32), ("mask", B32), ("base", U32), ("offset", S32)]
            .into_iter()
            .collect(),
        O::Shfl => [
            ("d", B32),
            ("p", Pred),
            ("a", B32),
            ("b", U32),
            ("c", U32),
            ("membermask", U32),
        ]
        .into_iter()
        .collect(),
        O::Vote => {
            let dt = if d.has(Ballot) { B32 } else { Pred };
            [("d", dt), ("a", Pred), ("membermask", U32)]
                .into_iter()
                .collect()
        }
        O::Activemask => [("d", B32)].into_iter().collect(),
        O::Match => [("d", B32), ("p", Pred), ("a", one?), ("membermask", U32)]
            .into_iter()
            .collect(),
        O::Redux if types.len() == 1 => [("dst", types[0]), ("src", types[0]), ("membermask", U32)]
            .into_iter()
            .collect(),
        O::Elect => [("d", B32), ("p", Pred), ("membermask", U32)]
            .into_iter()
            .collect(),
        O::Dp2a | O::Dp4a => [("d", U32), ("a", B32), ("b", B32), ("c", U32)]
            .into_iter()
            .collect(),
        // Texture fetches (measured with ptxas: "Result vector expected", "Predicate output
        // expected", "Arguments mismatch"): the result a brace vector of `.vN` registers of
        // the destination type (`.f16`: 16-bit registers), the optional predicate a `.pred`.
        // The coordinate vectors' sizes per geometry are not modelled.
        O::Tex | O::Tld4 => {
            vector_operands = &["d"];
            [("d", t0?), ("p", Pred)].into_iter().collect()
        }
        // Queries: a 32-bit result, an integer level of detail.
        O::Txq => [("d", B32), ("lod", S32)].into_iter().collect(),
        O::Suq => [("d", B32)].into_iter().collect(),
        O::Istypep => [("p", Pred), ("a", U64)].into_iter().collect(),
        // tcgen05: 64-bit matrix descriptors (`.mma`'s and `.cp`'s source), a 32-bit
        // instruction descriptor, the accumulate flag a predicate; tensor-memory addresses,
        // column counts and the reduction value 32 bits, the multicast mask 16 (ptxas:
        // "Arguments mismatch", "must be 16-bit size").
        O::Tcgen05 => [
            ("a-desc", B64),
            ("b-desc", B64),
            ("s-desc", B64),
            ("idesc", B32),
            ("enable-input-d", Pred),
            ("taddr", B32),
            ("nCols", B32),
            ("redval", B32),
            ("ctaMask", B16),
        ]
        .into_iter()
        .collect(),
        // wgmma: descriptors, the accumulate flag (a predicate or constant), the sparse
        // metadata; the fragments `d` and `a` are checked by `wgmma_fragments`.
        O::Wgmma => [
            ("a-desc", B64),
            ("b-desc", B64),
            ("scale-d", Pred),
            ("sp-meta", B32),
        ]
        .into_iter()
        .collect(),
        // multimem: the loaded, stored or combined value of the type (brace vectors for
        // `.vN`); the bulk copies' 32-bit size and 16-bit byte mask.
        O::Multimem => {
            vector_operands = &["d", "b"];
            let mut v: SmallVec<[(&'static str, Mod); 8]> =
                [("size", U32), ("byteMask", B16)].into_iter().collect();
            if let Some(t) = one.filter(|_| !d.has(Cp)) {
                v.extend([("d", t), ("b", t)]);
            }
            v
        }
        // Bulk and tensor copies: a 32-bit size, 16-bit CTA and byte masks, a 64-bit cache
        // policy (measured with ptxas: "Arguments mismatch", "must be 16-bit size").
        O::Cp => [
            ("size", U32),
            ("ctaMask", B16),
            ("byteMask", B16),
            ("cache-policy", B64),
        ]
        .into_iter()
        .collect(),
        // tensormap.replace: the new value of the instruction's type (the last; `.b1024` is
        // the object's).
        O::Tensormap => [("new_val", *types.last()?)].into_iter().collect(),
        O::Createpolicy => [
            ("cache-policy", B64),
            ("primary-size", U32),
            ("total-size", U32),
            ("access-property", B64),
        ]
        .into_iter()
        .collect(),
        O::Brx => [("index", U32)].into_iter().collect(),
        O::Clusterlaunchcontrol => {
            vector_operands = &["{xdim, ydim, zdim, _}"];
            [
                ("{xdim, ydim, zdim, _}", B32),
                ("pred", Pred),
                ("reg", B32),
                ("try_cancel_response", B128),
            ]
            .into_iter()
            .collect()
        }
        // Cluster addresses: a 32-bit rank; `mapa` maps an address of the type to another
        // CTA's (measured with ptxas).
        O::Getctarank => [("d", U32), ("a", one?)].into_iter().collect(),
        O::Mapa => [("d", one?), ("a", one?), ("b", U32)].into_iter().collect(),
        // mbarrier: a 64-bit state, 32-bit counts and parity, a predicate for the waits.
        O::Mbarrier => [
            ("state", B64),
            ("count", B32),
            ("txCount", B32),
            ("tx_count", B32),
            ("phaseParity", B32),
            ("waitComplete", Pred),
        ]
        .into_iter()
        .collect(),
        _ => return None,
    };
    Some(Rules {
        ops,
        relaxed,
        vector_operands,
    })
}

/// The double-width type of `mul.wide`/`mad.wide`.
fn wide(t: Mod) -> Option<Mod> {
    use Mod::*;
    Some(match t {
        U16 => U32,
        U32 => U64,
        S16 => S32,
        S32 => S64,
        B16 => B32,
        B32 => B64,
        _ => return None,
    })
}

/// `p[|q]` → (`p`, `q`); `d|p` → (`d`, `p`); `{!}c` is stored as `c`.
fn pattern_names(name: &str) -> (&str, Option<&str>) {
    let cut = name.find(['|', '[']).unwrap_or(name.len());
    let first = &name[..cut];
    let second = name[cut..]
        .trim_matches(|c| c == '[' || c == ']' || c == '|')
        .trim_start_matches('|');
    (first, (!second.is_empty()).then_some(second))
}

/// What one operand of an `mma` form holds (typed data: `mma_operands`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum MmaSlot {
    /// A fragment of `count` registers of `ty` (a brace vector, or one register for 1).
    Frag { count: u8, ty: Mod },
    /// A 32-bit register (the sparse metadata `e`, the block scale data); no constant.
    Reg32,
    /// A constant (the sparsity selector `f`); no register.
    Const,
    /// A pair `{byte-id, thread-id}` of 16-bit registers or constants.
    Pair16,
}

/// The operands of an `mma.sync` form, in order, with their names: each thread holds M·K/32
/// elements of A (half of them for the sparse `.sp` forms), K·N/32 of B and M·N/32 of C and
/// D, packed into 32-bit registers (one 64-bit register per `.f64` element; one 32-bit
/// register per `.f32`/`.s32` accumulator; the `.kind::f8f6f4`/`.kind::mxf8f6f4` formats in
/// 8-bit containers, `.kind::mxf4`'s `.e2m1` packed); the Volta `m8n8k4` f16 form has its own
/// quad-pair layout. Sparse forms add the metadata `e` and selector `f`, block-scaled ones
/// the scale data and `{byte-id, thread-id}` of A and B. Measured with ptxas ("Arguments
/// mismatch", "Argument vector size mismatch", "Vector expected").
pub(crate) fn mma_operands(d: &Decoded) -> Option<SmallVec<[(&'static str, MmaSlot); 10]>> {
    use Mod::*;
    let (m, n, k) = d.mods.iter().find_map(|x| mma_shape(x.spelling()))?;
    let types: SmallVec<[Mod; 5]> = d.types().into_iter().collect();
    let (dt, at, bt, ct) = match types[..] {
        [dt, at, bt, ct] | [dt, at, bt, ct, _] => (dt, at, bt, ct),
        _ => return None,
    };
    let kind = d
        .mods
        .iter()
        .find(|x| x.spelling().starts_with(".kind"))
        .map(|x| x.spelling());
    let container = matches!(kind, Some(".kind::f8f6f4" | ".kind::mxf8f6f4"));
    let sparse = d.mods.iter().any(|x| x.spelling().starts_with(".sp"));
    let scaled = d.has(BlockScale);
    let bits = |t: Mod| {
        if container {
            8
        } else {
            t.instr_type_bits().unwrap_or(32)
        }
    };
    let frag = |elems: u32, t: Mod| -> MmaSlot {
        let (count, ty) = match t {
            F64 => (elems, B64),
            F32 | S32 => (elems, B32),
            _ => ((elems * bits(t)).div_ceil(32), B32),
        };
        MmaSlot::Frag {
            count: count as u8,
            ty,
        }
    };
    let acc_frag = |elems: u32, t: Mod| -> MmaSlot {
        let (count, ty) = match t {
            F64 => (elems, B64),
            F32 | S32 => (elems, B32),
            _ => (
                (elems * t.instr_type_bits().unwrap_or(32)).div_ceil(32),
                B32,
            ),
        };
        MmaSlot::Frag {
            count: count as u8,
            ty,
        }
    };
    let (a, b, c, dd) = if (m, n, k) == (8, 8, 4) && at == F16 {
        let acc = |t: Mod| MmaSlot::Frag {
            count: if t == F32 { 8 } else { 4 },
            ty: B32,
        };
        let two = MmaSlot::Frag { count: 2, ty: B32 };
        (two, two, acc(ct), acc(dt))
    } else {
        let a_elems = m * k / 32 / if sparse { 2 } else { 1 };
        (
            frag(a_elems, at),
            frag(k * n / 32, bt),
            acc_frag(m * n / 32, ct),
            acc_frag(m * n / 32, dt),
        )
    };
    let mut out: SmallVec<[(&'static str, MmaSlot); 10]> =
        SmallVec::from_slice(&[("d", dd), ("a", a), ("b", b), ("c", c)]);
    if sparse {
        out.push(("e", MmaSlot::Reg32));
        out.push(("f", MmaSlot::Const));
    }
    if scaled {
        out.push(("scale-a-data", MmaSlot::Reg32));
        out.push(("{byte-id-a, thread-id-a}", MmaSlot::Pair16));
        out.push(("scale-b-data", MmaSlot::Reg32));
        out.push(("{byte-id-b, thread-id-b}", MmaSlot::Pair16));
    }
    (out.len() == d.form().operands.len()).then_some(out)
}

/// Checks an `mma` instruction's operands against `mma_operands`.
fn mma_fragments(
    instr: &Instruction<'_>,
    d: &Decoded,
    lookup: &dyn Fn(&str) -> Option<Declared>,
    diags: &mut Vec<Diagnostic>,
) {
    let Some(slots) = mma_operands(d) else {
        return;
    };
    let name = instr_name(instr);
    for (index, (op, &(pname, slot))) in instr.operands.iter().zip(&slots).enumerate() {
        let must = |what: &str| {
            Diagnostic::new(
                op.span(),
                format!(
                    "operand {} (`{pname}`) of `{name}` must be {what}",
                    index + 1
                ),
            )
        };
        let mm = match slot {
            MmaSlot::Frag { count, ty } => {
                let vec = (count > 1 || matches!(op, Operand::Vec(..))).then_some(count);
                check_operand(op, ty, false, vec, true, Opcode::Mma, lookup)
            }
            MmaSlot::Reg32 => match op {
                Operand::Imm(_) => {
                    diags.push(must("a 32-bit register, not a constant"));
                    continue;
                }
                _ => check_operand(op, Mod::B32, false, None, false, Opcode::Mma, lookup),
            },
            MmaSlot::Const => {
                if !matches!(op, Operand::Imm(_)) {
                    diags.push(must("a constant"));
                }
                continue;
            }
            MmaSlot::Pair16 => {
                check_operand(op, Mod::B16, false, Some(2), true, Opcode::Mma, lookup)
            }
        };
        if let Some(mm) = mm {
            diags.push(mismatch_message(&name, pname, Mismatch { index, ..mm }));
        }
    }
}

/// Which matrix a `wmma` fragment holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum WmmaFrag {
    A,
    B,
    /// The accumulator (`c`) or result (`d`).
    C,
}

/// Registers of a `wmma` fragment (always a brace vector, even of one) and their type: an
/// M·K/32, K·N/32 or M·N/32 share of the matrix's elements packed into 32-bit registers, one
/// 32-bit register per `.f32`/`.s32` accumulator element, one 64-bit register per `.f64`
/// element; the `.f16` A and B fragments are 8 registers in every shape (the layout
/// replicates elements). Measured with ptxas for every shape and type ("Vector expected", "Arguments
/// mismatch").
pub(crate) fn wmma_fragment(shape: (u32, u32, u32), frag: WmmaFrag, ty: Mod) -> (u8, Mod) {
    use Mod::*;
    let (m, n, k) = shape;
    let elems = match frag {
        WmmaFrag::A => m * k / 32,
        WmmaFrag::B => k * n / 32,
        WmmaFrag::C => m * n / 32,
    };
    let (count, reg) = match ty {
        F64 => (elems, B64),
        F32 | S32 => (elems, B32),
        F16 if frag != WmmaFrag::C => (8, B32),
        _ => (
            (elems * ty.instr_type_bits().unwrap_or(32)).div_ceil(32),
            B32,
        ),
    };
    (count as u8, reg)
}

/// Checks the fragment operands of `wmma.load`, `wmma.store` and `wmma.mma` against
/// `wmma_fragment`.
fn wmma_fragments(
    instr: &Instruction<'_>,
    d: &Decoded,
    lookup: &dyn Fn(&str) -> Option<Declared>,
    diags: &mut Vec<Diagnostic>,
) {
    use Mod::*;
    let Some(shape) = d.mods.iter().find_map(|x| mma_shape(x.spelling())) else {
        return;
    };
    let types = d.types();
    let slots: SmallVec<[(usize, &str, WmmaFrag, Mod); 4]> = if d.has(Load) || d.has(Store) {
        let (frag, at) = if d.has(A) {
            (WmmaFrag::A, 0)
        } else if d.has(Mod::B) {
            (WmmaFrag::B, 0)
        } else if d.has(Store) {
            (WmmaFrag::C, 1)
        } else {
            (WmmaFrag::C, 0)
        };
        let Some(&t) = types.last() else {
            return;
        };
        SmallVec::from_slice(&[(at, "r", frag, t)])
    } else {
        let (dt, at, bt, ct) = match types[..] {
            [dt, ct] => (dt, F16, F16, ct),
            [dt, at, bt, ct] => (dt, at, bt, ct),
            _ => return,
        };
        SmallVec::from_slice(&[
            (0, "d", WmmaFrag::C, dt),
            (1, "a", WmmaFrag::A, at),
            (2, "b", WmmaFrag::B, bt),
            (3, "c", WmmaFrag::C, ct),
        ])
    };
    let name = instr_name(instr);
    for (index, pname, frag, t) in slots {
        let Some(op) = instr.operands.get(index) else {
            continue;
        };
        let (count, want) = wmma_fragment(shape, frag, t);
        if let Some(mm) = check_operand(op, want, false, Some(count), true, Opcode::Wmma, lookup) {
            diags.push(mismatch_message(&name, pname, Mismatch { index, ..mm }));
        }
    }
}

/// Fragments of `ldmatrix`/`stmatrix` `.m8n8.b16` (one 32-bit register per matrix: `.x1`,
/// `.x2`, `.x4`; ptxas: "Vector of size 2 is expected for argument 0") and `movmatrix` (one
/// each). The `.b8` shapes are left to the shape check.
fn matrix_fragments(
    instr: &Instruction<'_>,
    d: &Decoded,
    lookup: &dyn Fn(&str) -> Option<Declared>,
    diags: &mut Vec<Diagnostic>,
) {
    use Mod::*;
    // Registers per matrix: one for `.m8n8.b16` and the 8-bit `.m8n16`/`.m16n8` shapes, two
    // for `.m16n16` (ptxas: "Vector of size 2 is expected for argument 0").
    let shape = d
        .mods
        .iter()
        .map(|m| m.spelling())
        .find(|s| matches!(*s, ".m8n8" | ".m8n16" | ".m16n8" | ".m16n16"));
    let per = match shape {
        Some(".m8n8") if d.has(B16) => 1,
        Some(".m8n16" | ".m16n8") => 1,
        Some(".m16n16") => 2,
        _ => return,
    };
    let data: SmallVec<[(usize, u8); 2]> = match instr.opcode {
        Opcode::Movmatrix => SmallVec::from_slice(&[(0, 1), (1, 1)]),
        op => {
            let n = per
                * if d.has(X4) {
                    4
                } else if d.has(X2) {
                    2
                } else {
                    1
                };
            let at = usize::from(op == Opcode::Stmatrix);
            SmallVec::from_slice(&[(at, n)])
        }
    };
    let name = instr_name(instr);
    for &(index, count) in &data {
        let Some(op) = instr.operands.get(index) else {
            continue;
        };
        // ldmatrix/stmatrix take braces even for `.x1` ("Vector of size 1 is expected").
        let braces = instr.opcode != Opcode::Movmatrix;
        let vec = (braces || matches!(op, Operand::Vec(..))).then_some(count);
        if let Some(mm) = check_operand(op, B32, false, vec, true, instr.opcode, lookup) {
            let pname = d
                .form()
                .operands
                .get(index)
                .map_or("r", |o| o.name.as_str());
            diags.push(mismatch_message(&name, pname, Mismatch { index, ..mm }));
        }
    }
}

/// The operands of `instr` with the names their positions have in the matched form (an
/// address `[taddr]` as `taddr`), with their index; empty when the operands fit no layout.
pub(super) fn named_operands<'i, 'a>(
    instr: &'i Instruction<'a>,
    d: &Decoded,
) -> SmallVec<[(&'static str, usize, &'i Operand<'a>); 8]> {
    let form = d.form();
    let layout = match gated_layout(instr.opcode, d, instr.operands.len()) {
        Some(Ok(layout)) => layout,
        Some(Err(())) => return SmallVec::new(),
        None => match form.operand_layout(&instr.operands) {
            Ok(layout) => layout,
            Err(_) => return SmallVec::new(),
        },
    };
    instr
        .operands
        .iter()
        .zip(&layout)
        .enumerate()
        .filter_map(|(i, (op, &at))| {
            let name = form.operands.get(at)?.name.as_str();
            let bare = name
                .strip_prefix('[')
                .and_then(|n| n.strip_suffix(']'))
                .filter(|n| !n.contains(','))
                .unwrap_or(name);
            Some((bare, i, op))
        })
        .collect()
}

/// Whether an optional operand comes with a modifier: the CTA mask with
/// `.multicast::cluster`, the byte mask with `.cp_mask`, the im2col offsets with the im2col
/// load modes, the cache policy with `.L2::cache_hint` (copies, `tcgen05` and `multimem`;
/// ptxas: "Arguments mismatch", ".L2::cache_hint modifier required for instruction
/// 'cp.async' with 5 arguments"). `None`: the operand is not tied to a modifier.
fn operand_gate(opcode: Opcode, d: &Decoded, name: &str) -> Option<bool> {
    if !matches!(opcode, Opcode::Cp | Opcode::Tcgen05 | Opcode::Multimem) {
        return None;
    }
    Some(match name {
        "ctaMask" => d.has(Mod::MulticastCluster),
        "byteMask" => d.has(Mod::CpMask),
        "im2colInfo" => d
            .mods
            .iter()
            .any(|m| matches!(m.spelling(), ".im2col" | ".im2col::w" | ".im2col::w::128")),
        "cache-policy" => d.has(Mod::L2CacheHint),
        _ => return None,
    })
}

/// The operand layout of a form whose optional operands depend on modifiers: `None` when
/// none does; `Some(Err(()))` when the operands present contradict the modifiers.
fn gated_layout(
    opcode: Opcode,
    d: &Decoded,
    count: usize,
) -> Option<Result<SmallVec<[usize; 8]>, ()>> {
    let form = d.form();
    let mut groups: SmallVec<[(u8, Option<bool>); 4]> = SmallVec::new();
    for o in &form.operands {
        let Some(g) = o.group else { continue };
        let gate = operand_gate(opcode, d, &o.name);
        match groups.iter_mut().find(|(x, _)| *x == g) {
            Some(entry) => {
                if entry.1 != gate {
                    entry.1 = None;
                }
            }
            None => groups.push((g, gate)),
        }
    }
    if groups.iter().all(|(_, gate)| gate.is_none()) || groups.len() > 8 {
        return None;
    }
    for mask in 0u32..(1 << groups.len()) {
        let present = |k: usize| mask & (1 << k) != 0;
        if groups
            .iter()
            .enumerate()
            .any(|(k, (_, gate))| gate.is_some_and(|g| g != present(k)))
        {
            continue;
        }
        let layout: SmallVec<[usize; 8]> = form
            .operands
            .iter()
            .enumerate()
            .filter(|(_, o)| {
                o.group.is_none_or(|g| {
                    groups
                        .iter()
                        .position(|(x, _)| *x == g)
                        .is_some_and(present)
                })
            })
            .map(|(i, _)| i)
            .collect();
        if layout.len() == count {
            return Some(Ok(layout));
        }
    }
    Some(Err(()))
}

/// Operands that the modifiers do not call for, or missing ones they do (see
/// [`operand_gate`]).
fn gated_operands(instr: &Instruction<'_>, d: &Decoded, diags: &mut Vec<Diagnostic>) {
    if d.form().operand_layout(&instr.operands).is_err() {
        return;
    }
    if let Some(Err(())) = gated_layout(instr.opcode, d, instr.operands.len()) {
        let wanted: Vec<String> = d
            .form()
            .operands
            .iter()
            .filter(|o| o.group.is_none() || operand_gate(instr.opcode, d, &o.name) == Some(true))
            .map(|o| o.name.clone())
            .collect();
        diags.push(Diagnostic::new(
            instr.span,
            format!(
                "`{}` takes {} operands with these modifiers ({}), not {} (the CTA mask comes with `.multicast::cluster`, the byte mask with `.cp_mask`, im2col offsets with an im2col mode, the cache policy with `.L2::cache_hint`)",
                instr_name(instr),
                wanted.len(),
                wanted.join(", "),
                instr.operands.len()
            ),
        ));
    }
}

/// Whether the form's operand `name` must be a constant: the manual's immediates (`immLut`,
/// `imm-scale-a`, `immHalfSplitoff`, `imm-reg-count`, the `N` of the waits, `cp-size`),
/// `wgmma`'s sparsity selector, `st.bulk`'s zero, and the sizes, field numbers and
/// enumerated values of the cache, fence and tensor-map instructions. ptxas: "Integer
/// constant expression expected", "must be constant", "Arguments mismatch".
fn must_be_constant(opcode: Opcode, d: &Decoded, name: &str) -> bool {
    name.starts_with("imm")
        || matches!(name, "N" | "cp-size" | "sp-sel" | "initval")
        || name.parse::<u64>().is_ok()
        || match opcode {
            Opcode::Applypriority | Opcode::Discard | Opcode::Fence => name == "size",
            Opcode::Tensormap => {
                matches!(name, "size" | "ord") || (name == "new_val" && d.slot("field3").is_some())
            }
            Opcode::Pmevent => name == "a",
            _ => false,
        }
}

/// Operands that must be constants (see [`must_be_constant`]) but name a register.
fn constant_operands(
    instr: &Instruction<'_>,
    d: &Decoded,
    lookup: &dyn Fn(&str) -> Option<Declared>,
    diags: &mut Vec<Diagnostic>,
) {
    let is_reg = |n: &str| matches!(lookup(n), Some(Declared::Reg { .. } | Declared::Special));
    for (name, index, op) in named_operands(instr, d) {
        if !must_be_constant(instr.opcode, d, name) {
            continue;
        }
        let register = match op {
            Operand::Imm(e) => {
                let mut found = false;
                e.each_name(&mut |n, _| found |= is_reg(n));
                found
            }
            Operand::Name { name: n, .. } => is_reg(n),
            _ => true,
        };
        if register {
            diags.push(Diagnostic::new(
                op.span(),
                format!(
                    "operand {} (`{name}`) of `{}` must be a constant, not a register",
                    index + 1,
                    instr_name(instr)
                ),
            ));
        }
    }
}

/// The shape of a `tcgen05.ld`/`.st`/`.ld.red` and its `.xN` count: how many 32-bit
/// registers one thread moves is the count times 1 (`.32x32b`, `.16x64b`, `.16x32bx2`), 2
/// (`.16x128b`) or 4 (`.16x256b`); ptxas takes at most 128 ("Modifier .x64 not allowed for
/// instruction tcgen05.ld with shape '.16x256b'"). Measured with ptxas 13.
pub(super) fn tcgen05_data_shape(d: &Decoded) -> Option<(&'static str, u32, u32)> {
    let shape = d.mods.iter().map(|m| m.spelling()).find(|s| {
        matches!(
            *s,
            ".32x32b" | ".16x64b" | ".16x128b" | ".16x256b" | ".16x32bx2"
        )
    })?;
    let per = match shape {
        ".16x128b" => 2,
        ".16x256b" => 4,
        _ => 1,
    };
    let num = d
        .mods
        .iter()
        .find_map(|m| m.spelling().strip_prefix(".x")?.parse::<u32>().ok())?;
    Some((shape, per, num))
}

/// `tcgen05.ld`/`.st`: the data is a brace vector of as many 32-bit registers as the shape
/// and count give (ptxas: "Vector expected", "Argument vector size mismatch", "Illegal to
/// use symbol of type .b64 as vector element"), and the tensor-memory address a 32-bit
/// register ("Use a 32-bit integer or bit register only").
fn tcgen05_data(
    instr: &Instruction<'_>,
    d: &Decoded,
    lookup: &dyn Fn(&str) -> Option<Declared>,
    diags: &mut Vec<Diagnostic>,
) {
    let Some((_, per, num)) = tcgen05_data_shape(d) else {
        return;
    };
    let name = instr_name(instr);
    for (pname, index, op) in named_operands(instr, d) {
        match (pname, op) {
            ("r", _) if per * num <= 128 => {
                let count = (per * num) as u8;
                if let Some(mm) =
                    check_operand(op, Mod::B32, false, Some(count), true, instr.opcode, lookup)
                {
                    diags.push(mismatch_message(&name, pname, Mismatch { index, ..mm }));
                }
            }
            ("taddr", Operand::Addr(a)) => {
                let Some(base) = a.base else { continue };
                if let Some(Declared::Reg { ty, .. }) = lookup(base) {
                    if ty.type_bits() != Some(32) {
                        diags.push(Diagnostic::new(
                            a.span,
                            format!(
                                "operand {} of `{name}` is a tensor-memory address: it needs a 32-bit register, but `{base}` is declared `{}`",
                                index + 1,
                                ty.spelling()
                            ),
                        ));
                    }
                }
            }
            _ => {}
        }
    }
}

/// `wgmma.mma_async`'s fragments: each thread of the warpgroup holds 64·N/128 elements of
/// D, packed two to a 32-bit register for `.f16` (N/4 registers) and one per register for
/// `.f32`/`.s32` (N/2), and A (when not a descriptor) in four 32-bit registers. Measured
/// with ptxas ("Arguments mismatch", "Argument vector size mismatch").
fn wgmma_fragments(
    instr: &Instruction<'_>,
    d: &Decoded,
    lookup: &dyn Fn(&str) -> Option<Declared>,
    diags: &mut Vec<Diagnostic>,
) {
    let Some((_, n, _)) = d.mods.iter().find_map(|x| mma_shape(x.spelling())) else {
        return;
    };
    let Some(&dt) = d.types().first() else {
        return;
    };
    let d_regs = if dt == Mod::F16 { n / 4 } else { n / 2 };
    let name = instr_name(instr);
    for (pname, index, op) in named_operands(instr, d) {
        let count = match pname {
            "d" => d_regs,
            "a" => 4,
            _ => continue,
        };
        let Ok(count) = u8::try_from(count) else {
            continue;
        };
        if let Some(mm) =
            check_operand(op, Mod::B32, false, Some(count), true, instr.opcode, lookup)
        {
            diags.push(mismatch_message(&name, pname, Mismatch { index, ..mm }));
        }
    }
}

/// The coordinates of texture and surface accesses (the last element of `[a, b]`): one for
/// `.1d`, two for `.2d` and `.a1d`, four for the others (`.3d`, `.a2d`, the cubes and the
/// multisample geometries; a fourth element is padding), a scalar standing for one, never
/// three (ptxas: "Operand vector size doesn't match geometry", "Illegal vector size: 3").
/// Surface coordinates are 32-bit ("Arguments mismatch"); texture ones are floats or
/// integers by the instruction's type, not checked here.
fn texture_coords(
    instr: &Instruction<'_>,
    d: &Decoded,
    lookup: &dyn Fn(&str) -> Option<Declared>,
    diags: &mut Vec<Diagnostic>,
) {
    let Some(need) = d.mods.iter().find_map(|m| match m.spelling() {
        ".1d" => Some(1usize),
        ".2d" | ".a1d" => Some(2),
        ".3d" | ".a2d" | ".cube" | ".acube" | ".2dms" | ".a2dms" => Some(4),
        _ => None,
    }) else {
        return;
    };
    let Some((index, Operand::AddrList(items, _))) = instr
        .operands
        .iter()
        .enumerate()
        .find(|(_, o)| matches!(o, Operand::AddrList(..)))
    else {
        return;
    };
    let Some(coords) = items.last().filter(|_| items.len() >= 2) else {
        return;
    };
    let (count, elems): (usize, &[Operand<'_>]) = match coords {
        Operand::Vec(v, _) => (v.len(), v),
        other => (1, std::slice::from_ref(other)),
    };
    let name = instr_name(instr);
    if count < need || count == 3 || count > 4 {
        diags.push(Diagnostic::new(
            coords.span(),
            format!(
                "operand {} of `{name}`: the geometry needs {need} coordinate{} (a brace vector of {}), not {count}",
                index + 1,
                if need == 1 { "" } else { "s" },
                if need == 4 { "4, the last one padding where the geometry has 3" } else if need == 2 { "2" } else { "1, or a scalar" },
            ),
        ));
        return;
    }
    if matches!(instr.opcode, Opcode::Suld | Opcode::Sust | Opcode::Sured) {
        for e in elems {
            if let Some(mm) = check_operand(e, Mod::B32, false, None, false, instr.opcode, lookup) {
                diags.push(mismatch_message(&name, "b", Mismatch { index, ..mm }));
                return;
            }
        }
    }
}

/// The tensor coordinates of the bulk tensor copies (`[tensorMap, {c0, c1}]`): a brace
/// vector of one 32-bit register or constant per dimension of `.Nd`, five for the
/// `.tile::gather4`/`.tile::scatter4` modes (ptxas: "Vector expected", "Argument vector
/// size mismatch", "Arguments mismatch").
fn tensor_coords(
    instr: &Instruction<'_>,
    d: &Decoded,
    lookup: &dyn Fn(&str) -> Option<Declared>,
    diags: &mut Vec<Diagnostic>,
) {
    let Some(dims) = d.mods.iter().find_map(|m| match m.spelling() {
        ".1d" => Some(1u8),
        ".2d" => Some(2),
        ".3d" => Some(3),
        ".4d" => Some(4),
        ".5d" => Some(5),
        _ => None,
    }) else {
        return;
    };
    let four = d
        .mods
        .iter()
        .any(|m| matches!(m.spelling(), ".tile::gather4" | ".tile::scatter4"));
    let count = if four { 5 } else { dims };
    let name = instr_name(instr);
    for (index, op) in instr.operands.iter().enumerate() {
        let Operand::AddrList(items, _) = op else {
            continue;
        };
        let Some(coords) = items.get(1) else {
            continue;
        };
        if let Some(mm) = check_operand(
            coords,
            Mod::B32,
            false,
            Some(count),
            true,
            instr.opcode,
            lookup,
        ) {
            diags.push(mismatch_message(
                &name,
                "tensorCoords",
                Mismatch { index, ..mm },
            ));
        }
    }
}

/// `.m16n8k16` → (16, 8, 16).
fn mma_shape(s: &str) -> Option<(u32, u32, u32)> {
    let rest = s.strip_prefix(".m")?;
    let (m, rest) = rest.split_once('n')?;
    let (n, k) = rest.split_once('k')?;
    Some((m.parse().ok()?, n.parse().ok()?, k.parse().ok()?))
}

#[allow(clippy::too_many_arguments)]
fn check_operand<'s>(
    op: &Operand<'_>,
    want: Mod,
    relaxed: bool,
    vec_width: Option<u8>,
    data_operand: bool,
    opcode: Opcode,
    lookup: &dyn Fn(&str) -> Option<Declared>,
) -> Option<Mismatch<'s>> {
    let span = op.span();
    let mk = |what: String, detail: Option<&'s str>| Mismatch {
        index: 0,
        what,
        want,
        relaxed,
        span,
        detail,
    };
    match op {
        Operand::Vec(items, _) => {
            if !data_operand {
                return Some(mk(
                    format!("it is a vector of {}", items.len()),
                    Some("this operand is a scalar"),
                ));
            }
            let n = items.len();
            let elem = if opcode == Opcode::Mov && vec_width.is_none() && n > 1 {
                // `mov.b64 %rd, {%r1, %r2}`: the elements pack into the type.
                let bits = want.type_bits()?;
                if !bits.is_multiple_of(n as u32) {
                    return Some(mk(
                        format!("it is a vector of {n}"),
                        Some("`mov` packs 2 or 4 elements that together fill its type"),
                    ));
                }
                bit_type(bits / n as u32)?
            } else {
                match vec_width {
                    Some(w) if w as usize == n => want,
                    None if n == 1 => want,
                    Some(w) => {
                        return Some(Mismatch {
                            what: if matches!(w, 2 | 4 | 8) {
                                format!("it is a vector of {n}")
                            } else {
                                format!("it is a vector of {n}, not of {w}")
                            },
                            detail: Some(if w == 2 {
                                "`.v2` needs a vector of 2 elements `{a, b}`"
                            } else if w == 4 {
                                "`.v4` needs a vector of 4 elements `{a, b, c, d}`"
                            } else if w == 8 {
                                "`.v8` needs a vector of 8 elements"
                            } else {
                                "the instruction's modifiers fix how many elements it has"
                            }),
                            ..mk(String::new(), None)
                        })
                    }
                    None => {
                        return Some(mk(
                            format!("it is a vector of {n}"),
                            Some("a vector operand needs a `.v2`/`.v4`/`.v8` modifier"),
                        ))
                    }
                }
            };
            items
                .iter()
                .find_map(|item| check_operand(item, elem, relaxed, None, false, opcode, lookup))
        }
        Operand::Name { name, comp, .. } => {
            let declared = lookup(name)?;
            match declared {
                Declared::Reg { ty, vector } => {
                    let reg_ty = match (vector, comp) {
                        (Some(n), None) => {
                            if data_operand && vec_width == Some(n) {
                                ty
                            } else {
                                return Some(mk(
                                    format!(
                                        "`{name}` is a `.v{n}{}` vector register",
                                        ty.spelling()
                                    ),
                                    Some(
                                        "use one component (`.x`, `.y`, …) or a `.vN` instruction",
                                    ),
                                ));
                            }
                        }
                        _ => ty,
                    };
                    if vec_width.is_some() && data_operand && vector.is_none() {
                        return Some(mk(
                            format!("`{name}` is a scalar register"),
                            Some("a `.vN` instruction needs a brace vector `{a, b, …}`"),
                        ));
                    }
                    (!compatible(reg_ty, want, relaxed)).then(|| {
                        mk(
                            format!("`{name}` is declared `{}`", reg_ty.spelling()),
                            None,
                        )
                    })
                }
                Declared::Special => {
                    // A vector register without its component was reported already.
                    if comp.is_none() && is_vector_sreg(name) {
                        return None;
                    }
                    let ok = special_sizes(name)
                        .iter()
                        .any(|&t| compatible(t, want, relaxed));
                    (!ok).then(|| {
                        mk(
                            format!(
                                "special register `{name}{}` reads as {}",
                                comp.map_or("", |c| match c {
                                    Component::X => ".x",
                                    Component::Y => ".y",
                                    Component::Z => ".z",
                                    Component::W => ".w",
                                }),
                                special_sizes(name)
                                    .iter()
                                    .map(|t| format!("`{}`", t.spelling()))
                                    .collect::<Vec<_>>()
                                    .join(" or ")
                            ),
                            None,
                        )
                    })
                }
                Declared::Other => None,
            }
        }
        Operand::Imm(e) => {
            if vec_width.is_some() && data_operand {
                return Some(mk(
                    "it is a scalar constant".into(),
                    Some("a `.vN` instruction needs a brace vector `{a, b, …}`"),
                ));
            }
            match literal_kind(e)? {
                Literal::Int if want.is_float_type() => Some(mk(
                    "it is an integer constant".into(),
                    Some("write float constants as `0f3F800000` (f32 bits), `0d…` (f64 bits) or `1.0`"),
                )),
                Literal::Float if want.is_int_type() || want == Mod::Pred => Some(mk(
                    "it is a floating-point constant".into(),
                    Some("integer operands take integer constants; use a `.bN` type to move float bits"),
                )),
                _ => None,
            }
        }
        _ => None,
    }
}

enum Literal {
    Int,
    Float,
}

fn literal_kind(e: &Expr<'_>) -> Option<Literal> {
    match e {
        Expr::Int { .. } => Some(Literal::Int),
        Expr::F32(..) | Expr::F64(..) => Some(Literal::Float),
        Expr::Unary(UnOp::Neg | UnOp::Plus, inner, _) => literal_kind(inner),
        _ => None,
    }
}

fn bit_type(bits: u32) -> Option<Mod> {
    Some(match bits {
        8 => Mod::B8,
        16 => Mod::B16,
        32 => Mod::B32,
        64 => Mod::B64,
        128 => Mod::B128,
        _ => return None,
    })
}

/// Whether a register declared `reg` may stand where the instruction expects `want`.
fn compatible(reg: Mod, want: Mod, relaxed: bool) -> bool {
    use Mod::*;
    if reg == Pred || want == Pred {
        return reg == want;
    }
    let (Some(rb), Some(wb)) = (reg.type_bits(), want.instr_type_bits()) else {
        return true;
    };
    let size_ok = |wider_ok: bool| if wider_ok { rb >= wb } else { rb == wb };
    let fundamental = matches!(
        want,
        B8 | B16
            | B32
            | B64
            | B128
            | U8
            | U16
            | U32
            | U64
            | S8
            | S16
            | S32
            | S64
            | F16
            | F16x2
            | F32
            | F64
    );
    if !fundamental {
        // Packed and alternate formats live in bit-size registers.
        let kind_ok = reg.is_bit_type()
            || (matches!(want, U16x2 | S16x2) && reg == F16x2)
            || reg.type_bits().is_none();
        return kind_ok && rb == wb;
    }
    if reg.is_bit_type() {
        size_ok(relaxed)
    } else if reg.is_int_type() {
        (want.is_bit_type() || want.is_int_type()) && size_ok(relaxed)
    } else if reg.is_float_type() {
        if want.is_bit_type() {
            size_ok(relaxed)
        } else {
            reg == want
        }
    } else {
        true
    }
}

fn is_vector_sreg(name: &str) -> bool {
    matches!(
        name,
        "%tid"
            | "%ntid"
            | "%ctaid"
            | "%nctaid"
            | "%clusterid"
            | "%nclusterid"
            | "%cluster_ctaid"
            | "%cluster_nctaid"
    )
}

/// The types a special register may be read as.
fn special_sizes(name: &str) -> &'static [Mod] {
    use Mod::*;
    match name {
        // Legacy code reads the thread and CTA indices with 16-bit `mov`/`cvt`.
        "%tid" | "%ntid" | "%ctaid" | "%nctaid" => &[U32, U16],
        "%gridid" => &[U64, U32],
        "%clock64" | "%globaltimer" | "%current_graph_exec" => &[U64],
        "%is_explicit_cluster" => &[Pred],
        n if n.starts_with("%pm") && n.ends_with("_64") => &[U64],
        _ => &[U32],
    }
}

/// Calls `f` on every name (with its component) an operand reads or writes directly.
fn each_name<'a>(
    op: &Operand<'a>,
    f: &mut dyn FnMut(&'a str, Option<Component>, crate::syntax::span::Span),
) {
    match op {
        Operand::Name {
            name, comp, span, ..
        } => f(name, *comp, *span),
        Operand::Vec(items, _) | Operand::List(items, _) | Operand::AddrList(items, _) => {
            for i in items {
                each_name(i, f);
            }
        }
        Operand::Pair(a, b, _) => {
            each_name(a, f);
            each_name(b, f);
        }
        _ => {}
    }
}

/// What a type accepts, in words: `.u32` → "a 32-bit integer or bit-size register".
fn accepts(want: Mod, relaxed: bool) -> String {
    let bits = want.instr_type_bits().unwrap_or(0);
    let size = if relaxed && want != Mod::Pred {
        format!("{bits}-bit or wider")
    } else {
        format!("{bits}-bit")
    };
    if want == Mod::Pred {
        "a `.pred` register".into()
    } else if want.is_bit_type() {
        format!("a {size} register of any type")
    } else if want.is_int_type() && want.type_bits().is_some() && !want.is_packed() {
        format!("a {size} integer (`.u`/`.s`) or bit-size (`.b`) register")
    } else if matches!(want, Mod::F16 | Mod::F16x2 | Mod::F32 | Mod::F64) {
        format!(
            "a `{}` register or a {bits}-bit bit-size (`.b{bits}`) register",
            want.spelling()
        )
    } else {
        format!("a {bits}-bit bit-size (`.b{bits}`) register")
    }
}

fn mismatch_message(instr: &str, operand: &str, m: Mismatch<'_>) -> Diagnostic {
    let mut msg = format!(
        "operand {} (`{operand}`) of `{instr}` has the wrong type: {}, but a `{}` operand needs {}",
        m.index + 1,
        m.what,
        m.want.spelling(),
        accepts(m.want, m.relaxed)
    );
    if let Some(d) = m.detail {
        msg.push_str(" (");
        msg.push_str(d);
        msg.push(')');
    }
    Diagnostic::new(m.span, msg)
}

/// The types a scalar `atom`/`red` operation takes (ptxas 13's messages); `None` for a
/// modifier that is not an operation.
fn atomic_types(op: Mod) -> Option<&'static [Mod]> {
    use Mod::*;
    Some(match op {
        And | Or | Xor => &[B32, B64],
        Exch => &[B32, B64, B128],
        Cas => &[B16, B32, B64, B128],
        Inc | Dec => &[U32],
        Add => &[U32, S32, U64, F32, F64, F16, F16x2, Bf16, Bf16x2],
        Min | Max => &[U32, S32, U64, S64, F16, F16x2, Bf16, Bf16x2],
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use Mod::*;

    #[test]
    fn compatibility_follows_the_manual() {
        assert!(compatible(B32, U32, false));
        assert!(compatible(S32, U32, false));
        assert!(!compatible(B64, U32, false));
        assert!(compatible(B64, U32, true));
        assert!(!compatible(F32, U32, false));
        assert!(compatible(B32, F32, false));
        assert!(!compatible(U32, F32, false));
        assert!(!compatible(F64, F32, true));
        assert!(compatible(F64, B32, true));
        assert!(compatible(F32, B32, false));
        assert!(!compatible(U16, Bf16, false));
        assert!(compatible(B16, Bf16, false));
        assert!(compatible(F16x2, U16x2, false));
        assert!(!compatible(F16x2, Bf16x2, false));
        assert!(!compatible(Pred, U32, false));
        assert!(!compatible(U32, Pred, false));
        assert!(!compatible(U16, U32, true));
    }

    #[test]
    fn pair_names() {
        assert_eq!(pattern_names("p[|q]"), ("p", Some("q")));
        assert_eq!(pattern_names("d|p"), ("d", Some("p")));
        assert_eq!(pattern_names("a"), ("a", None));
    }
}
