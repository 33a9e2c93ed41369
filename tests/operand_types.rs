//! Operand type checking against ptxas: `tests/operand_types/cases.txt` lists single
//! instructions with the verdict NVIDIA's ptxas gives them (`ok` or `error`) in a kernel that
//! declares registers of every type. `ptx2llvm check` must give the same verdict for each; when
//! ptxas is installed (the README's test command installs it) the recorded verdicts are checked
//! against it too, so the list cannot drift from what ptxas does.

mod common;

use std::process::Command;

/// The kernel each case is placed in: registers of every type, one `.u64` parameter `p`.
fn kernel(instr: &str) -> String {
    format!(
        ".version 8.7\n.target sm_90\n.address_size 64\n\
         .visible .entry k(.param .u64 p)\n{{\n\
         .reg .pred %p<4>; .reg .b16 %h<4>; .reg .u16 %rs<4>; .reg .f16 %hf<4>;\n\
         .reg .b32 %r<4>; .reg .u32 %ru<4>; .reg .s32 %rsi<4>; .reg .f32 %f<4>;\n\
         .reg .b64 %rd<4>; .reg .u64 %rdu<4>; .reg .f64 %fd<4>; .reg .f16x2 %hh<4>;\n\
         .reg .u8 %c<3>; .reg .b8 %bb<3>; .reg .b128 %q<3>;\n\
         {instr}\nret;\n}}\n"
    )
}

fn cases() -> Vec<(bool, String)> {
    let path = common::repo_root().join("tests/operand_types/cases.txt");
    let text = common::read(&path);
    let cases: Vec<(bool, String)> = text
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .map(|l| {
            let (verdict, instr) = l.split_once('\t').expect("`ok|error<TAB>instruction`");
            assert!(
                verdict == "ok" || verdict == "error",
                "bad verdict `{verdict}`"
            );
            (verdict == "ok", instr.to_string())
        })
        .collect();
    assert!(cases.len() > 200, "expected the full case list");
    assert!(cases.iter().any(|c| c.0) && cases.iter().any(|c| !c.0));
    cases
}

#[test]
fn check_agrees_with_ptxas_verdicts() {
    let mut wrong = Vec::new();
    for (ok, instr) in cases() {
        let src = kernel(&instr);
        let (module, diags) = ptx2llvm::syntax::parse(&src);
        let mut diags = diags;
        if diags.is_empty() {
            diags = ptx2llvm::check::check(&module);
        }
        if diags.is_empty() != ok {
            wrong.push(format!(
                "{instr}: ptxas says {}, check says {}",
                if ok { "ok" } else { "error" },
                diags.first().map_or("ok".into(), |d| d.message.clone())
            ));
        }
    }
    assert!(
        wrong.is_empty(),
        "{} case(s) disagree:\n{}",
        wrong.len(),
        wrong.join("\n")
    );
}

#[test]
fn recorded_verdicts_match_ptxas() {
    let Some(ptxas) = common::find_ptxas() else {
        eprintln!("NOTE: ptxas not found; recorded verdicts not re-checked (scripts/setup.sh installs it)");
        return;
    };
    let dir = tempfile::tempdir().expect("temp dir");
    let mut wrong = Vec::new();
    for (i, (ok, instr)) in cases().into_iter().enumerate() {
        let path = dir.path().join(format!("case{i}.ptx"));
        std::fs::write(&path, kernel(&instr)).expect("write case");
        let out = Command::new(&ptxas)
            .args(["-arch=sm_90", "-o", "/dev/null"])
            .arg(&path)
            .output()
            .expect("run ptxas");
        if out.status.success() != ok {
            wrong.push(format!(
                "{instr}: recorded {}, ptxas {}",
                if ok { "ok" } else { "error" },
                String::from_utf8_lossy(&out.stderr).trim()
            ));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}
