//! The ptxas-differential acceptance test: thousands of single instructions generated from
//! `src/isa/ptx.isa` (`ptxas_diff/gen.rs`: every form, modifiers in the manual's order and in
//! permuted orders, operands typed several ways, deliberately broken variants) for sm_75,
//! sm_80, sm_90a and sm_100a are judged by NVIDIA's ptxas and by `ptx2llvm check`; what both
//! accept, and what check alone accepts, is also translated for both targets (the lowering
//! reads each instruction as check decoded it, so whatever check accepts must translate). The
//! verdicts must agree, except for the disagreements listed, each with its reason, in
//! `ptxas_diff/known.txt`.
//!
//! ptxas's verdicts are cached in `ptxas_diff/verdicts.tsv`, so CI without ptxas still holds
//! `check` to them. With ptxas installed (the README's test command installs it) every cached
//! verdict is checked against ptxas again, and a case the cache lacks is an error that names
//! the command to refresh it: `PTX2LLVM_BLESS=1 cargo test --release --test ptxas_diff`.
//! `PTX2LLVM_DIFF_CACHED=1` uses the cached verdicts, running ptxas only on the cases the cache
//! lacks (quicker, while working on check's rules).
//! The test prints its counts (instructions tried, agreements, explained disagreements).

mod common;
#[path = "ptxas_diff/gen.rs"]
mod gen;

use std::collections::{BTreeMap, HashMap};
use std::path::Path;
use std::process::Command;

use gen::{body_line, Case, Variant, TARGETS};
use ptx2llvm::llvm::EmitKind;

/// How many of the generated instructions that ptxas rejects `check` may accept: none since
/// 2026-11-27 (2 of 27,349 before that; 39 before st.async/red.async were declared as ptxas
/// reads them). The bound only falls, so it is now an equality.
const MAX_ACCEPTED_ANYWAY: usize = 0;

/// Instructions per ptxas run.
const BATCH: usize = 400;

fn version_of(target: &str) -> &'static str {
    TARGETS.iter().find(|(t, _)| *t == target).unwrap().1
}

/// ptxas's verdict on each line of `body` (true: accepted), from as few runs as it takes:
/// errors name their line; a syntax error ends ptxas's reading, so the lines after it are
/// judged again in a run of their own; a run that fails without naming a line is split.
fn ptxas_batch(ptxas: &Path, target: &str, body: &[&str], out: &mut Vec<Verdict>) {
    if body.is_empty() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("b.ptx");
    std::fs::write(&file, gen::module(target, version_of(target), body)).unwrap();
    let r = Command::new(ptxas)
        .arg(format!("-arch={target}"))
        .arg(&file)
        .args(["-o", "/dev/null"])
        .output()
        .expect("ptxas runs");
    let mut ok: Vec<Verdict> = vec![None; body.len()];
    let mut fatal_at: Option<usize> = None;
    let mut named = false;
    for line in String::from_utf8_lossy(&r.stderr).lines() {
        let Some(rest) = line.split(", line ").nth(1) else {
            continue;
        };
        let Some((num, msg)) = rest.split_once(';') else {
            continue;
        };
        let Ok(n) = num.trim().parse::<usize>() else {
            continue;
        };
        if msg.trim_start().starts_with("warning") {
            continue;
        }
        named = true;
        let msg = msg
            .trim()
            .trim_start_matches("error")
            .trim_start_matches("fatal");
        let msg = msg.trim_start_matches([' ', ':']).to_string();
        if let Some(k) = n.checked_sub(body_line()).filter(|&k| k < body.len()) {
            ok[k].get_or_insert(msg.clone());
            if line.contains("fatal") {
                fatal_at = Some(fatal_at.map_or(k, |f: usize| f.min(k)));
            }
        } else if line.contains("fatal") {
            // A fatal error outside the body (it cannot be the body's fault): judge alone.
            fatal_at = Some(0);
            ok[0] = None;
        }
    }
    if !r.status.success() && !named {
        // A crash or an error without a line: split until each line is judged alone.
        if body.len() == 1 {
            out.push(Some(format!(
                "ptxas failed without naming a line (exit {:?})",
                r.status.code()
            )));
            return;
        }
        let (a, b) = body.split_at(body.len() / 2);
        ptxas_batch(ptxas, target, a, out);
        ptxas_batch(ptxas, target, b, out);
        return;
    }
    match fatal_at {
        Some(k) => {
            out.extend_from_slice(&ok[..=k]);
            ptxas_batch(ptxas, target, &body[k + 1..], out);
        }
        None => out.extend_from_slice(&ok),
    }
}

/// ptxas judges again, each in a module of its own, the cases it accepted in a batch and
/// `check` rejects: in a batch, ptxas sometimes leaves an error without its line (seen with
/// `multimem.st….e4m3x4 [a], %p`, whose error names the lowered `st`), which reads as an
/// acceptance.
fn rejudge_alone(ptxas: &Path, cases: &[Case], verdicts: &mut [Verdict]) {
    for (c, v) in cases.iter().zip(verdicts.iter_mut()) {
        if v.is_none() && check_case(c).is_err() {
            let mut alone = Vec::new();
            ptxas_batch(ptxas, c.target, &[c.text.as_str()], &mut alone);
            if let Some(Some(msg)) = alone.pop() {
                *v = Some(msg);
            }
        }
    }
}

/// ptxas's verdicts for `cases`, two runs at a time.
fn ptxas_verdicts(ptxas: &Path, cases: &[&Case]) -> Vec<Verdict> {
    let mut by_target: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
    for (i, c) in cases.iter().enumerate() {
        by_target.entry(c.target).or_default().push(i);
    }
    let mut jobs: Vec<(&str, Vec<usize>)> = Vec::new();
    for (t, idx) in by_target {
        for chunk in idx.chunks(BATCH) {
            jobs.push((t, chunk.to_vec()));
        }
    }
    let results = std::sync::Mutex::new(vec![None; cases.len()]);
    let next = std::sync::atomic::AtomicUsize::new(0);
    std::thread::scope(|s| {
        for _ in 0..2 {
            s.spawn(|| loop {
                let j = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                let Some((t, idx)) = jobs.get(j) else { break };
                let body: Vec<&str> = idx.iter().map(|&i| cases[i].text.as_str()).collect();
                let mut v = Vec::with_capacity(body.len());
                ptxas_batch(ptxas, t, &body, &mut v);
                let mut r = results.lock().unwrap();
                for (&i, ok) in idx.iter().zip(v) {
                    r[i] = ok;
                }
            });
        }
    });
    results.into_inner().unwrap()
}

/// ptxas's verdict: `None` when it accepts, else its first message.
type Verdict = Option<String>;

type Cache = HashMap<(String, String), Verdict>;

fn cache_path() -> std::path::PathBuf {
    common::repo_root().join("tests/ptxas_diff/verdicts.tsv")
}

fn load_cache() -> Cache {
    let Ok(text) = std::fs::read_to_string(cache_path()) else {
        return Cache::new();
    };
    text.lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
        .map(|l| {
            let mut f = l.splitn(4, '\t');
            let (t, v, i) = (f.next().unwrap(), f.next().unwrap(), f.next().unwrap());
            let msg = f.next().unwrap_or("").to_string();
            ((t.to_string(), i.to_string()), (v != "ok").then_some(msg))
        })
        .collect()
}

fn save_cache(cases: &[Case], verdicts: &[Verdict]) {
    let mut lines: Vec<String> = cases
        .iter()
        .zip(verdicts)
        .map(|(c, v)| match v {
            None => format!("{}\tok\t{}", c.target, c.text),
            Some(m) => format!("{}\terror\t{}\t{}", c.target, c.text, m),
        })
        .collect();
    lines.sort();
    lines.dedup();
    let head = "# ptxas 13 verdicts on the instructions of tests/ptxas_diff.rs: TARGET<TAB>ok|error<TAB>INSTRUCTION[<TAB>MESSAGE]\n\
                # Written by `PTX2LLVM_BLESS=1 cargo test --release --test ptxas_diff`; do not edit.\n";
    std::fs::write(cache_path(), format!("{head}{}\n", lines.join("\n"))).unwrap();
}

/// A listed disagreement: what kind, which instructions (a prefix of their text), and why.
struct Known {
    kind: String,
    prefix: String,
    reason: String,
    used: std::cell::Cell<usize>,
}

fn load_known() -> Vec<Known> {
    let text = common::read(&common::repo_root().join("tests/ptxas_diff/known.txt"));
    text.lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .map(|l| {
            let mut f = l.splitn(3, '\t');
            let kind = f.next().unwrap().to_string();
            let prefix = f.next().expect("KIND<TAB>PREFIX<TAB>REASON").to_string();
            let reason = f.next().expect("KIND<TAB>PREFIX<TAB>REASON").to_string();
            assert!(
                matches!(kind.as_str(), "accepts" | "rejects" | "nvptx" | "cpu"),
                "unknown kind `{kind}` in known.txt"
            );
            assert!(reason.len() > 10, "known.txt: `{prefix}` needs a reason");
            Known {
                kind,
                prefix,
                reason,
                used: Default::default(),
            }
        })
        .collect()
}

/// The listed disagreement that covers a case: its pattern is a prefix of the instruction, or
/// `ptxas: TEXT` / `error: TEXT` matching ptxas's or the translation's message.
fn explained<'k>(known: &'k [Known], kind: &str, text: &str, msg: &str) -> Option<&'k Known> {
    let k = known.iter().find(|k| {
        k.kind == kind
            && match k
                .prefix
                .strip_prefix("ptxas: ")
                .or_else(|| k.prefix.strip_prefix("error: "))
            {
                Some(m) => msg.contains(m),
                None => text.starts_with(&k.prefix),
            }
    })?;
    k.used.set(k.used.get() + 1);
    Some(k)
}

/// `check`'s verdict on one case: `Err(first message)` when it rejects.
fn check_case(c: &Case) -> Result<(), String> {
    let src = gen::module(c.target, version_of(c.target), &[&c.text]);
    let (m, diags) = ptx2llvm::syntax::parse(&src);
    let diags = if diags.is_empty() {
        ptx2llvm::check::check(&m)
    } else {
        diags
    };
    match diags.first() {
        None => Ok(()),
        Some(d) => Err(d.message.clone()),
    }
}

/// Translation of accepted cases for one target; the failures by case index with the error.
fn translate(target: &str, cases: &[&Case], cpu: bool) -> HashMap<usize, String> {
    let mut failed = HashMap::new();
    for chunk_start in (0..cases.len()).step_by(200) {
        let chunk = &cases[chunk_start..(chunk_start + 200).min(cases.len())];
        let mut live: Vec<usize> = (0..chunk.len()).collect();
        // Lowering reports every instruction it cannot translate; an LLVM-level failure names
        // none, so the chunk is then translated one instruction at a time.
        loop {
            if live.is_empty() {
                break;
            }
            let body: Vec<&str> = live.iter().map(|&i| chunk[i].text.as_str()).collect();
            match compile(target, &body, cpu) {
                Ok(()) => break,
                Err(errs) if errs.iter().all(|(line, _)| line.is_some()) => {
                    let mut bad = Vec::new();
                    for (line, msg) in errs {
                        let k = line.unwrap();
                        if let Some(&i) = live.get(k) {
                            failed.insert(chunk_start + i, msg);
                            bad.push(i);
                        }
                    }
                    if bad.is_empty() {
                        break;
                    }
                    live.retain(|i| !bad.contains(i));
                }
                Err(_) => {
                    for &i in &live {
                        if let Err(e) = compile(target, &[&chunk[i].text], cpu) {
                            let msg = e.into_iter().map(|(_, m)| m).collect::<Vec<_>>().join("; ");
                            failed.insert(chunk_start + i, msg);
                        }
                    }
                    break;
                }
            }
        }
    }
    failed
}

/// Compiles a module of `body` lines; errors with the body line they point at. A panic in the
/// compiler is a failure too (it names no line).
fn compile(target: &str, body: &[&str], cpu: bool) -> Result<(), Vec<(Option<usize>, String)>> {
    std::panic::catch_unwind(|| compile_inner(target, body, cpu)).unwrap_or_else(|p| {
        let msg = p
            .downcast_ref::<String>()
            .cloned()
            .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
            .unwrap_or_default();
        Err(vec![(None, format!("the compiler panicked: {msg}"))])
    })
}

fn compile_inner(
    target: &str,
    body: &[&str],
    cpu: bool,
) -> Result<(), Vec<(Option<usize>, String)>> {
    let src = gen::module(target, version_of(target), body);
    let (m, diags) = ptx2llvm::syntax::parse(&src);
    assert!(diags.is_empty(), "accepted cases parse");
    let m = &m;
    let (info, _) = ptx2llvm::check::check_module(m);
    let line_of = |offset: u32| {
        let line = src[..offset as usize].matches('\n').count() + 1;
        line.checked_sub(body_line()).filter(|&k| k < body.len())
    };
    let located = |errs: Vec<ptx2llvm::lower::Error>| -> Vec<(Option<usize>, String)> {
        errs.into_iter()
            .map(|e| (e.span().and_then(|s| line_of(s.start)), e.to_string()))
            .collect()
    };
    if cpu {
        match ptx2llvm::target::cpu::compile(m, &info, EmitKind::Llvm, 0, "t") {
            Ok(_) => Ok(()),
            Err(ptx2llvm::target::cpu::CompileError::Lower(e)) => Err(located(e)),
            Err(e) => Err(vec![(None, e.to_string())]),
        }
    } else {
        let opts = ptx2llvm::target::nvptx::Options {
            emit: EmitKind::Llvm,
            opt: 0,
            arch: None,
            name: "t".into(),
            debug: Default::default(),
        };
        match ptx2llvm::target::nvptx::compile(m, &info, &opts) {
            Ok(_) => Ok(()),
            Err(ptx2llvm::target::nvptx::CompileError::Lower(e)) => Err(located(e)),
            Err(e) => Err(vec![(None, e.to_string())]),
        }
    }
}

#[test]
fn check_and_translation_agree_with_ptxas() {
    let cases = gen::cases();
    assert!(cases.len() > 5000, "only {} cases", cases.len());
    let bless = std::env::var_os("PTX2LLVM_BLESS").is_some();
    let installed = common::find_ptxas();
    let ptxas = installed
        .clone()
        .filter(|_| std::env::var_os("PTX2LLVM_DIFF_CACHED").is_none());
    let mut cache = load_cache();
    if let (None, Some(px)) = (&ptxas, &installed) {
        // Quick mode: ptxas judges only the cases the cache lacks.
        let missing: Vec<&Case> = cases
            .iter()
            .filter(|c| !cache.contains_key(&(c.target.to_string(), c.text.clone())))
            .collect();
        let mut fresh = ptxas_verdicts(px, &missing);
        let owned: Vec<Case> = missing.iter().map(|&c| c.clone()).collect();
        rejudge_alone(px, &owned, &mut fresh);
        for (c, v) in missing.iter().zip(fresh) {
            cache.insert((c.target.to_string(), c.text.clone()), v);
        }
        let accepted: Vec<Case> = cases
            .iter()
            .filter(|c| cache.get(&(c.target.to_string(), c.text.clone())) == Some(&None))
            .cloned()
            .collect();
        let mut again: Vec<Verdict> = vec![None; accepted.len()];
        rejudge_alone(px, &accepted, &mut again);
        for (c, v) in accepted.iter().zip(again) {
            cache.insert((c.target.to_string(), c.text.clone()), v);
        }
    }

    // ptxas's verdicts: from ptxas itself when installed (checked against the cache), else
    // from the cache.
    let verdicts: Vec<Verdict> = match &ptxas {
        Some(px) => {
            let refs: Vec<&Case> = cases.iter().collect();
            let mut fresh = ptxas_verdicts(px, &refs);
            rejudge_alone(px, &cases, &mut fresh);
            if bless {
                save_cache(&cases, &fresh);
            } else {
                let missing = cases
                    .iter()
                    .filter(|c| !cache.contains_key(&(c.target.to_string(), c.text.clone())))
                    .count();
                let drift: Vec<String> = cases
                    .iter()
                    .zip(&fresh)
                    .filter_map(|(c, v)| {
                        let cached = cache.get(&(c.target.to_string(), c.text.clone()))?;
                        (cached.is_some() != v.is_some())
                            .then(|| format!("{} {}: ptxas now says {v:?}", c.target, c.text))
                    })
                    .take(20)
                    .collect();
                assert!(
                    missing == 0 && drift.is_empty(),
                    "tests/ptxas_diff/verdicts.tsv is out of date ({missing} cases missing; changed: {drift:#?}); \
                     refresh it: PTX2LLVM_BLESS=1 cargo test --release --test ptxas_diff"
                );
            }
            fresh
        }
        None => cases
            .iter()
            .map(|c| {
                cache
                    .get(&(c.target.to_string(), c.text.clone()))
                    .unwrap_or_else(|| {
                        panic!(
                            "no cached ptxas verdict for `{}` on {}: refresh tests/ptxas_diff/verdicts.tsv with ptxas installed \
                             (PTX2LLVM_BLESS=1 cargo test --release --test ptxas_diff)",
                            c.text, c.target
                        )
                    })
                    .clone()
            })
            .collect(),
    };

    let known = load_known();
    let checked: Vec<Result<(), String>> = cases.iter().map(check_case).collect();
    let mut unexplained: Vec<String> = Vec::new();
    let mut counts: BTreeMap<(Variant, &str), usize> = BTreeMap::new();
    let mut bump = |v: Variant, what: &'static str| *counts.entry((v, what)).or_default() += 1;
    let (mut ptxas_rejects, mut accepted_anyway) = (0usize, 0usize);
    // Every case check accepts and ptxas rejects, for working on the listed classes.
    let mut accepted_list: Vec<String> = Vec::new();
    let mut both_ok: Vec<&Case> = Vec::new();
    // What check accepts and ptxas rejects: translated too, since whatever check accepts the
    // lowering must understand (it reads each instruction as check decoded it).
    let mut check_only: Vec<&Case> = Vec::new();
    for ((c, verdict), chk) in cases.iter().zip(&verdicts).zip(&checked) {
        let ok = verdict.is_none();
        let ptxas_msg = verdict.as_deref().unwrap_or("");
        bump(c.variant, "tried");
        if !ok {
            ptxas_rejects += 1;
        }
        match (ok, chk) {
            (true, Ok(())) => {
                bump(c.variant, "agree: both accept");
                both_ok.push(c);
            }
            (false, Err(_)) => bump(c.variant, "agree: both reject"),
            (true, Err(msg)) => match explained(&known, "rejects", &c.text, "") {
                Some(_) => bump(c.variant, "explained: check rejects, ptxas accepts"),
                None => unexplained.push(format!(
                    "check rejects what ptxas accepts ({}): {}  -- {msg}",
                    c.target, c.text
                )),
            },
            (false, Ok(())) => {
                accepted_anyway += 1;
                check_only.push(c);
                accepted_list.push(format!("{}\t{}\t{ptxas_msg}", c.target, c.text));
                match explained(&known, "accepts", &c.text, ptxas_msg) {
                    Some(_) => bump(c.variant, "explained: check accepts, ptxas rejects"),
                    None => unexplained.push(format!(
                        "check accepts what ptxas rejects ({}): {}  -- ptxas: {ptxas_msg}",
                        c.target, c.text
                    )),
                }
            }
        }
    }

    // Translation of everything check accepts, per target (grouped by module target): what
    // ptxas also accepts, then what only check accepts.
    // Per group: translated for nvptx, for cpu, and unsupported on the cpu target by name.
    let (mut translated, mut translated_check_only) = ([0usize; 3], [0usize; 3]);
    // Refusals on the cpu target, by opcode (with modifiers), for the report.
    let mut refused: BTreeMap<String, usize> = BTreeMap::new();
    // Panics of the compiler are caught and reported as failures; keep their noise out.
    std::panic::set_hook(Box::new(|_| {}));
    for (accepted, counted) in [
        (&both_ok, &mut translated),
        (&check_only, &mut translated_check_only),
    ] {
        let mut by_target: BTreeMap<&str, Vec<&Case>> = BTreeMap::new();
        for c in accepted.iter() {
            by_target.entry(c.target).or_default().push(c);
        }
        for (t, list) in &by_target {
            for (ti, cpu) in [(0, false), (1, true)] {
                let failed = translate(t, list, cpu);
                counted[ti] += list.len() - failed.len();
                for (i, msg) in failed {
                    let c = list[i];
                    let kind = if cpu { "cpu" } else { "nvptx" };
                    if cpu && msg.contains("not supported on the cpu target") {
                        counted[2] += 1;
                        let op = c.text.trim_start_matches(['@', '!', '%']);
                        let op = op
                            .split_whitespace()
                            .find(|w| !w.starts_with('@'))
                            .unwrap_or("");
                        *refused.entry(op.to_string()).or_default() += 1;
                    } else if explained(&known, kind, &c.text, &msg).is_none() {
                        unexplained.push(format!(
                            "{kind} translation fails ({t}): {}  -- {msg}",
                            c.text
                        ));
                    }
                }
            }
        }
    }

    // Panics from here on are the test's own verdicts: show them.
    let _ = std::panic::take_hook();
    let mut report = unexplained.clone();
    report.sort();
    let report_path = common::repo_root().join("target/ptxas_diff_report.txt");
    let _ = std::fs::write(&report_path, report.join("\n"));
    accepted_list.sort();
    let _ = std::fs::write(
        common::repo_root().join("target/ptxas_diff_accepted.txt"),
        accepted_list.join("\n"),
    );
    println!("ptxas-differential test: {} instructions", cases.len());
    for ((v, what), n) in &counts {
        println!("  {:<10} {what:<42} {n}", v.name());
    }
    println!(
        "  ptxas rejects {ptxas_rejects}; check accepts {accepted_anyway} of them ({:.2}%)",
        100.0 * accepted_anyway as f64 / ptxas_rejects.max(1) as f64
    );
    println!(
        "  both accept {}: translated for nvptx {}, for cpu {} (+{} unsupported on the cpu target by name)",
        both_ok.len(),
        translated[0],
        translated[1],
        translated[2]
    );
    println!(
        "  check alone accepts {}: translated for nvptx {}, for cpu {} (+{} unsupported on the cpu target by name)",
        check_only.len(),
        translated_check_only[0],
        translated_check_only[1],
        translated_check_only[2]
    );
    for (op, n) in &refused {
        println!("  refused on the cpu target: {op} ({n})");
    }
    for k in &known {
        println!(
            "  listed [{}] {}: {} case(s) — {}",
            k.kind,
            k.prefix,
            k.used.get(),
            k.reason
        );
    }
    if !unexplained.is_empty() {
        let n = unexplained.len();
        unexplained.sort();
        unexplained.truncate(60);
        panic!(
            "{n} unexplained disagreement(s) with ptxas (first {}):\n{}",
            unexplained.len(),
            unexplained.join("\n")
        );
    }
    // Every listed disagreement still happens (a fixed one must leave the list).
    let stale: Vec<&str> = known
        .iter()
        .filter(|k| k.used.get() == 0)
        .map(|k| k.prefix.as_str())
        .collect();
    assert!(
        stale.is_empty(),
        "tests/ptxas_diff/known.txt lists disagreements that no longer happen: {stale:?}"
    );
    // More instructions that ptxas rejects getting through is a regression.
    assert!(
        accepted_anyway == MAX_ACCEPTED_ANYWAY,
        "check accepts {accepted_anyway} of {ptxas_rejects} instructions ptxas rejects; the bound is {MAX_ACCEPTED_ANYWAY}"
    );
}
