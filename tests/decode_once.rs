//! Decode once (issue #15): the check and the lowering read an instruction through one
//! decoding. Every instruction of a module that `check` accepts has its `Decoded` in the
//! check's `ModuleInfo`, which is the lowering's only view of modifiers (`lower::Ins`), and it
//! is the decoding `isa::decoded::decode` gives, in the form's modifier order. Held over the
//! corpus and the ptxas-differential generated instructions (`tests/ptxas_diff.rs` translates
//! everything check accepts for both targets). A lowering that read modifiers some other way
//! (their spellings, their source order) could disagree with `check` again; this keeps the
//! one input it has complete.

mod common;
#[allow(dead_code)]
#[path = "ptxas_diff/gen.rs"]
mod gen;

use ptx2llvm::check::{check_module, ModuleInfo};
use ptx2llvm::isa::decoded::decode;

/// Checks `src`; when check accepts it, every instruction's decoding must be in the check's
/// output and equal a fresh one. Returns how many instructions were held to that (0 when the
/// module is rejected) and the problems found.
fn decoded_everywhere(src: &str, what: &str, problems: &mut Vec<String>) -> usize {
    let (m, diags) = ptx2llvm::syntax::parse(src);
    if !diags.is_empty() {
        return 0;
    }
    let (info, diags): (ModuleInfo, _) = check_module(&m);
    if !diags.is_empty() {
        return 0;
    }
    let all = m.instructions();
    for i in &all {
        let spelled = ptx2llvm::lower::inline_asm::spell(i);
        match (info.decoded(i), decode(i)) {
            (Some(d), Ok(again)) if *d == again => {}
            (Some(_), Ok(_)) => problems.push(format!(
                "{what}: `{spelled}`: the check's decoding differs from decoding it again"
            )),
            (None, _) => problems.push(format!(
                "{what}: `{spelled}` is accepted by check but has no decoding in its output"
            )),
            (Some(_), Err(e)) => problems.push(format!(
                "{what}: `{spelled}` has a decoding in the check's output but matches no form: {e:?}"
            )),
        }
    }
    assert_eq!(
        info.decoded_count(),
        all.len(),
        "{what}: the check decoded instructions the module does not have"
    );
    all.len()
}

#[test]
fn the_check_decodes_every_instruction_of_the_corpus_for_the_lowering() {
    let mut problems = Vec::new();
    let (mut files, mut instrs) = (0, 0);
    for path in common::corpus_files() {
        let n = decoded_everywhere(&common::read(&path), &common::rel(&path), &mut problems);
        files += (n > 0) as usize;
        instrs += n;
    }
    println!("{files} corpus files accepted by check: {instrs} instructions, each decoded once");
    assert!(
        files > 100 && instrs > 10_000,
        "only {files} files / {instrs} instructions"
    );
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn the_check_decodes_every_generated_instruction_it_accepts_for_the_lowering() {
    let mut problems = Vec::new();
    let cases = gen::cases();
    let (mut accepted, mut instrs) = (0, 0);
    for c in &cases {
        let version = gen::TARGETS.iter().find(|(t, _)| *t == c.target).unwrap().1;
        let src = gen::module(c.target, version, &[&c.text]);
        let n = decoded_everywhere(&src, &format!("{} {}", c.target, c.text), &mut problems);
        accepted += (n > 0) as usize;
        instrs += n;
    }
    println!(
        "{accepted} of {} generated instructions accepted by check; their modules' {instrs} \
         instructions each decoded once",
        cases.len()
    );
    assert!(accepted > 4000, "only {accepted} accepted");
    problems.truncate(40);
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// The lowering's view of an instruction (`lower::Ins`) comes from the check's output: an
/// instruction the check did not decode is an error, not a second decoding; one a target
/// builds after the check (`InstrId::SYNTHETIC`) is decoded on the spot; and modifiers written
/// in any order ptxas takes read the same (`add.rn.f32` = `add.f32.rn`).
#[test]
fn the_lowering_reads_instructions_through_the_check() {
    use ptx2llvm::isa::Mod;
    use ptx2llvm::lower::{Ins, Rounding, Ty};
    use ptx2llvm::syntax::ast::InstrId;
    let src = ".version 8.0\n.target sm_80\n.address_size 64\n.visible .entry k()\n{\n\
               .reg .f32 %f<3>;\n\
               add.rn.ftz.f32 %f1, %f2, %f2;\n\
               add.f32.ftz.rn %f1, %f2, %f2;\n\
               ret;\n}\n";
    let (m, diags) = ptx2llvm::syntax::parse(src);
    assert!(diags.is_empty());
    let (info, diags) = check_module(&m);
    assert!(diags.is_empty(), "{diags:?}");
    let all = m.instructions();
    let (a, b) = (all[0], all[1]);
    let (ia, ib) = (Ins::new(&info, a).unwrap(), Ins::new(&info, b).unwrap());
    for ins in [&ia, &ib] {
        assert!(ins.has(Mod::Ftz) && !ins.has(Mod::Sat));
        assert_eq!(ins.rounding(), Some(Rounding::Rn));
        assert_eq!(ins.ty(), Ty::f(32));
    }
    assert_eq!(ia.d.mods, ib.d.mods, "the form's order either way");

    let unchecked = ModuleInfo::default();
    let err = Ins::new(&unchecked, a)
        .err()
        .expect("not decoded by the check");
    assert!(
        err.to_string().contains("was not decoded by the check"),
        "{err}"
    );
    let mut built = a.clone();
    built.id = InstrId::SYNTHETIC;
    let ins = Ins::new(&unchecked, &built).expect("a built instruction is decoded on the spot");
    assert_eq!(*ins.d, decode(a).unwrap());
}
