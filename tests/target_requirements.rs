//! The target and PTX ISA version requirements of `src/isa/requirements.txt`, line by line: the
//! line's example instruction in a module at the lowest target and version that has every
//! feature of the example must pass `check`; at the highest target below that lacks the line's
//! feature it must fail with the line's message, and so must it at the PTX ISA version just
//! below the line's. When ptxas is installed it judges the same modules (it must accept the first
//! and reject the others on the example's line), so the table cannot drift from ptxas.

mod common;

use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use ptx2llvm::isa::requirements::{
    requirements, Arch, Requirement, Unmet, Version, ARCH_MIN_VERSION,
};
use ptx2llvm::syntax::ast::{Item, Operand, Statement};

/// Every PTX ISA version, ascending.
const VERSIONS: &[Version] = &[
    (1, 0),
    (1, 1),
    (1, 2),
    (1, 3),
    (1, 4),
    (1, 5),
    (2, 0),
    (2, 1),
    (2, 2),
    (2, 3),
    (3, 0),
    (3, 1),
    (3, 2),
    (4, 0),
    (4, 1),
    (4, 2),
    (4, 3),
    (5, 0),
    (6, 0),
    (6, 1),
    (6, 2),
    (6, 3),
    (6, 4),
    (6, 5),
    (7, 0),
    (7, 1),
    (7, 2),
    (7, 3),
    (7, 4),
    (7, 5),
    (7, 6),
    (7, 7),
    (7, 8),
    (8, 0),
    (8, 1),
    (8, 2),
    (8, 3),
    (8, 4),
    (8, 5),
    (8, 6),
    (8, 7),
    (8, 8),
    (9, 0),
    (9, 1),
    (9, 2),
];

/// The line the example is on in [`module`]'s text (1-based).
const EXAMPLE_LINE: usize = 9;

/// A module around one instruction: registers of the families it names, a `.shared` and a
/// `.global` array. `.address_size` only where the version has it (2.3).
fn module(target: Arch, version: Version, example: &str) -> String {
    let mut regs = String::new();
    for (prefix, ty) in [
        ("%p", "pred"),
        ("%h", "b16"),
        ("%r", "b32"),
        ("%rd", "b64"),
        ("%f", "f32"),
        ("%fd", "f64"),
        ("%q", "b128"),
    ] {
        let named = example.match_indices(prefix).any(|(at, _)| {
            example[at + prefix.len()..]
                .bytes()
                .next()
                .is_some_and(|b| b.is_ascii_digit())
        });
        if named {
            regs.push_str(&format!(".reg .{ty} {prefix}<8>; "));
        }
    }
    let address_size = if version >= (2, 3) {
        ".address_size 64"
    } else {
        ""
    };
    let text = format!(
        ".version {}.{}\n.target {target}\n{address_size}\n\
         .shared .align 16 .b8 sh[256];\n.global .align 16 .b8 gm[256];\n\
         .visible .entry k()\n{{\n{regs}\n{example}\nret;\n}}\n",
        version.0, version.1
    );
    debug_assert_eq!(text.lines().nth(EXAMPLE_LINE - 1), Some(example));
    text
}

/// Targets in ascending order (as `Arch` orders them), without `sm_101*`, which ptxas 13
/// renamed `sm_110`.
fn targets() -> Vec<Arch> {
    let mut ts: Vec<Arch> = ARCH_MIN_VERSION
        .iter()
        .filter(|(name, _)| !name.starts_with("sm_101"))
        .map(|(name, _)| Arch::parse(name).expect("target name"))
        .collect();
    ts.sort();
    ts
}

/// The PTX ISA version a requirement needs on target `t` (`None` when any will do).
fn needed_version(r: &Requirement, t: Arch) -> Option<Version> {
    match r.check(Some(t), Some((0, 0))) {
        Err(Unmet::Version { need, .. }) => Some(need),
        _ => None,
    }
}

/// The requirements that apply to the example of requirement `r`, found the way the checker
/// finds them.
fn applicable(r: &Requirement) -> Vec<&'static Requirement> {
    let src = module(Arch::parse("sm_90").unwrap(), (9, 0), r.example);
    let (m, diags) = ptx2llvm::syntax::parse(&src);
    assert!(
        diags.is_empty(),
        "line {}: example `{}` does not parse: {}",
        r.line,
        r.example,
        diags[0].message
    );
    let instr = m
        .items
        .iter()
        .find_map(|it| match it {
            Item::Function(f) => f.body.as_ref()?.stmts.iter().find_map(|s| match s {
                Statement::Instr(i) => Some(i.clone()),
                _ => None,
            }),
            _ => None,
        })
        .expect("the example instruction");
    let table = requirements();
    let mut found: Vec<&Requirement> = table
        .for_instruction(instr.opcode, &instr.mods, instr.operands.len())
        .collect::<Vec<_>>();
    for op in &instr.operands {
        if let Operand::Name { name, .. } = op {
            found.extend(table.for_special_register(name));
        }
    }
    found
}

/// A module ptxas must judge: accept (`ok`) or reject on the example's line.
struct PtxasCase {
    what: String,
    target: Arch,
    text: String,
    ok: bool,
}

#[test]
fn every_requirement_holds_at_its_minimum_and_fails_below() {
    let table = requirements();
    let targets = targets();
    let mut wrong = Vec::new();
    let mut cases = Vec::new();
    let (mut target_checked, mut version_checked) = (0, 0);
    for r in &table.all {
        let all = applicable(r);
        if !all.iter().any(|a| a.line == r.line) {
            wrong.push(format!(
                "line {}: the example `{}` does not match its own pattern",
                r.line, r.example
            ));
            continue;
        }
        let Some(&ok_target) = targets
            .iter()
            .find(|&&t| all.iter().all(|a| a.check(Some(t), None).is_ok()))
        else {
            wrong.push(format!(
                "line {}: no target has every feature of `{}`",
                r.line, r.example
            ));
            continue;
        };
        let ok_version = all
            .iter()
            .filter_map(|a| needed_version(a, ok_target))
            .chain([ok_target.min_version().unwrap(), (2, 3)])
            .max()
            .unwrap();
        let what = format!("line {} `{}`", r.line, r.example);
        let text = module(ok_target, ok_version, r.example);
        let diags = ptx2llvm::check::check(&ptx2llvm::syntax::parse(&text).0);
        if let Some(d) = diags.first() {
            wrong.push(format!(
                "{what} at {ok_target} .version {}.{}: check says {}",
                ok_version.0, ok_version.1, d.message
            ));
        }
        cases.push(PtxasCase {
            what: format!(
                "{what} at {ok_target} .version {}.{}",
                ok_version.0, ok_version.1
            ),
            target: ok_target,
            text,
            ok: true,
        });
        // Every line that applies to the example (not only its own) must hold ptxas's verdict
        // on it: a line that also matches forms it was not meant for shows up here.
        for q in &all {
            let is_own = q.line == r.line;
            let what = if is_own {
                what.clone()
            } else {
                format!("{what} (line {}'s requirement)", q.line)
            };
            let feature = q.feature();
            let mut expect_error = |target: Arch,
                                    version: Version,
                                    needle: String,
                                    wrong: &mut Vec<String>| {
                let text = module(target, version, r.example);
                let diags = ptx2llvm::check::check(&ptx2llvm::syntax::parse(&text).0);
                let what = format!("{what} at {target} .version {}.{}", version.0, version.1);
                let line_start = text
                    .lines()
                    .take(EXAMPLE_LINE - 1)
                    .map(|l| l.len() + 1)
                    .sum::<usize>();
                let hit = diags.iter().any(|d| {
                    d.message.contains(&feature)
                        && d.message.contains(&needle)
                        && (line_start..line_start + r.example.len())
                            .contains(&(d.span.start as usize))
                });
                if !hit {
                    wrong.push(format!(
                        "{what}: expected `{feature} requires {needle}` on the example, check says {:?}",
                        diags.iter().map(|d| &d.message).collect::<Vec<_>>()
                    ));
                }
                cases.push(PtxasCase {
                    what,
                    target,
                    text,
                    ok: false,
                });
            };
            if !q.targets.is_empty() {
                let below = targets
                    .iter()
                    .rev()
                    .filter(|&&t| t < ok_target)
                    .find(|&&t| q.check(Some(t), None) == Err(Unmet::Target));
                if let Some(&t) = below {
                    let v = ok_version.max(t.min_version().unwrap());
                    expect_error(t, v, format!(".target {}", q.targets_text()), &mut wrong);
                    target_checked += usize::from(is_own);
                }
            }
            if let Some(need) = needed_version(q, ok_target) {
                let below = VERSIONS.iter().rev().find(|&&v| v < need);
                if let Some(&v) = below.filter(|&&v| v >= ok_target.min_version().unwrap()) {
                    expect_error(
                        ok_target,
                        v,
                        format!("PTX ISA {}.{} or later", need.0, need.1),
                        &mut wrong,
                    );
                    version_checked += usize::from(is_own);
                }
            }
        }
    }
    eprintln!(
        "{} requirements: {target_checked} checked one target below, {version_checked} one PTX ISA version below",
        table.all.len()
    );
    assert!(
        wrong.is_empty(),
        "{} problem(s):\n{}",
        wrong.len(),
        wrong.join("\n")
    );
    assert!(table.all.len() > 250 && target_checked > 250 && version_checked > 120);

    let Some(ptxas) = common::find_ptxas() else {
        eprintln!(
            "NOTE: ptxas not found; requirements not re-checked (scripts/setup.sh installs it)"
        );
        return;
    };
    let dir = tempfile::tempdir().expect("temp dir");
    let next = AtomicUsize::new(0);
    let disagree = Mutex::new(Vec::new());
    std::thread::scope(|s| {
        for _ in 0..2 {
            s.spawn(|| loop {
                let k = next.fetch_add(1, Ordering::Relaxed);
                let Some(c) = cases.get(k) else { break };
                let path = dir.path().join(format!("case{k}.ptx"));
                std::fs::write(&path, &c.text).expect("write case");
                // ptxas compiles PTX for an older `.target` to any newer GPU; it knows sm_75 and
                // later only.
                let arch = if c.target.number < 75 {
                    "sm_75".to_string()
                } else {
                    c.target.to_string()
                };
                let out = Command::new(&ptxas)
                    .arg(format!("-arch={arch}"))
                    .args(["-o", "/dev/null"])
                    .arg(&path)
                    .output()
                    .expect("run ptxas");
                let stderr = String::from_utf8_lossy(&out.stderr);
                let on_example = stderr.contains(&format!("line {EXAMPLE_LINE};"));
                let agrees = if c.ok {
                    out.status.success()
                } else {
                    !out.status.success() && on_example
                };
                if !agrees {
                    disagree.lock().unwrap().push(format!(
                        "{}: ptxas should {}: {}",
                        c.what,
                        if c.ok {
                            "accept it"
                        } else {
                            "reject the example"
                        },
                        stderr.trim()
                    ));
                }
            });
        }
    });
    let disagree = disagree.into_inner().unwrap();
    assert!(
        disagree.is_empty(),
        "ptxas disagrees on {} of {} module(s):\n{}",
        disagree.len(),
        cases.len(),
        disagree.join("\n")
    );
    eprintln!("ptxas agrees on all {} modules", cases.len());
}

/// The message the issue asked for, on the instruction's opcode.
#[test]
fn xorsign_abs_on_sm_80() {
    let src = module(
        Arch::parse("sm_80").unwrap(),
        (8, 0),
        "max.xorsign.abs.f32 %f1, %f2, %f3;",
    );
    let diags = ptx2llvm::check::check(&ptx2llvm::syntax::parse(&src).0);
    let msgs: Vec<&str> = diags.iter().map(|d| d.message.as_str()).collect();
    assert_eq!(
        msgs,
        ["`max.xorsign.abs.f32`: `.abs` requires .target sm_86 or higher (the module targets sm_80)"]
    );
    let src = module(
        Arch::parse("sm_86").unwrap(),
        (7, 1),
        "max.xorsign.abs.f32 %f1, %f2, %f3;",
    );
    let diags = ptx2llvm::check::check(&ptx2llvm::syntax::parse(&src).0);
    let msgs: Vec<&str> = diags.iter().map(|d| d.message.as_str()).collect();
    assert_eq!(
        msgs,
        ["`max.xorsign.abs.f32`: `.abs` requires PTX ISA 7.2 or later (the module declares .version 7.1)"]
    );
}

/// Architecture-specific features need exactly their target; family ones a target of the family.
#[test]
fn arch_and_family_targets() {
    let check = |target: &str, version: Version, example: &str| {
        let src = module(Arch::parse(target).unwrap(), version, example);
        let (m, _) = ptx2llvm::syntax::parse(&src);
        let msgs: Vec<String> = ptx2llvm::check::check(&m)
            .into_iter()
            .map(|d| d.message)
            .collect();
        msgs
    };
    let wgmma = "wgmma.fence.sync.aligned;";
    assert!(check("sm_90a", (8, 0), wgmma).is_empty());
    for t in ["sm_90", "sm_100a", "sm_120a"] {
        let msgs = check(t, (8, 8), wgmma);
        assert_eq!(msgs.len(), 1, "{t}: {msgs:?}");
        assert!(
            msgs[0].contains("requires .target sm_90a (the module targets"),
            "{t}: {msgs:?}"
        );
    }
    let tcgen05 = "tcgen05.fence::before_thread_sync;";
    for t in ["sm_100a", "sm_100f", "sm_103a", "sm_110f"] {
        assert!(check(t, (9, 0), tcgen05).is_empty(), "{t}");
    }
    for t in ["sm_100", "sm_120a", "sm_90a"] {
        assert_eq!(check(t, (9, 0), tcgen05).len(), 1, "{t}");
    }
}
