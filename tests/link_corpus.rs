//! The PTX linker over the corpus: every valid corpus file linked with two others (the 7th and
//! 13th after it, in path order) links or is refused for a reason that holds (a kernel defined
//! in both, targets no architecture meets, an extern no input defines) — never an internal
//! error — and ptxas accepts what links (when it is installed; sampled, to keep the test fast).

mod common;

use std::process::Command;

use ptx2llvm::link::link_ptx;

#[test]
fn corpus_pairs_link_or_are_refused_for_a_reason() {
    let files: Vec<(String, String)> = common::corpus_files()
        .iter()
        .map(|p| (common::rel(p), common::read(p)))
        .filter(|(_, text)| {
            let (m, d) = ptx2llvm::syntax::parse(text);
            d.is_empty() && ptx2llvm::check::check(&m).is_empty()
        })
        .collect();
    assert!(files.len() > 50, "{} valid corpus files", files.len());
    let ptxas = common::find_ptxas();
    let dir = std::env::temp_dir().join(format!("ptx2llvm-link-corpus-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (mut linked, mut refused, mut assembled) = (0, 0, 0);
    let mut failures = Vec::new();
    for k in [7, 13] {
        for i in 0..files.len() {
            let (a, b) = (&files[i], &files[(i + k) % files.len()]);
            match link_ptx(&[(&a.0, &a.1), (&b.0, &b.1)]) {
                Ok(text) => {
                    linked += 1;
                    let arch = text
                        .lines()
                        .nth(1)
                        .and_then(|l| l.strip_prefix(".target "))
                        .and_then(|t| t.split(',').next())
                        .unwrap_or("sm_80")
                        .to_string();
                    // ptxas 13 has no targets before sm_75; every 5th link is assembled.
                    let old = arch
                        .trim_start_matches("sm_")
                        .parse::<u32>()
                        .is_ok_and(|n| n < 75);
                    let Some(ptxas) = ptxas.as_ref().filter(|_| !old && linked % 5 == 0) else {
                        continue;
                    };
                    let path = dir.join(format!("{k}-{i}.ptx"));
                    std::fs::write(&path, &text).unwrap();
                    let out = Command::new(ptxas)
                        .args(["-c", "-arch", &arch, "-o", "/dev/null"])
                        .arg(&path)
                        .output()
                        .unwrap();
                    assembled += 1;
                    if !out.status.success() {
                        failures.push(format!(
                            "{} + {}: ptxas -arch {arch} rejects the linked module:\n{}",
                            a.0,
                            b.0,
                            String::from_utf8_lossy(&out.stderr)
                        ));
                    }
                }
                Err(e) => {
                    refused += 1;
                    for d in &e.errors {
                        let known = d.message.starts_with("duplicate definition of ")
                            || d.message.starts_with("no target meets every input's")
                            || d.message.starts_with("unresolved external function");
                        if !known {
                            failures.push(format!("{} + {}:\n{}", a.0, b.0, d.rendered));
                        }
                    }
                }
            }
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
    eprintln!("linked {linked} pairs (ptxas assembled {assembled}), refused {refused}");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(linked > 150, "only {linked} pairs linked");
}
