//! Tests of the PTX linker: symbol resolution, weak/common merging, renaming of module-local
//! names, header reconciliation, and errors with their positions. Every successful link is
//! parsed and checked again inside `link_ptx` itself.

use super::*;

fn hdr(version: &str, target: &str) -> String {
    format!(".version {version}\n.target {target}\n.address_size 64\n")
}

const INC_DEF: &str = ".visible .func (.param .b32 r) inc (.param .b32 a)\n{\n\t.reg .b32 %r<3>;\n\tld.param.b32 %r1, [a];\n\tadd.s32 %r2, %r1, 1;\n\tst.param.b32 [r], %r2;\n\tret;\n}\n";

const CALLER: &str = ".extern .func (.param .b32 r) inc (.param .b32 a);\n\
.visible .entry k(.param .u64 p)\n{\n\t.reg .b32 %r<3>;\n\t.reg .b64 %rd<2>;\n\
\tld.param.u64 %rd1, [p];\n\t{\n\t.param .b32 pa;\n\t.param .b32 pr;\n\
\tst.param.b32 [pa], 41;\n\tcall.uni (pr), inc, (pa);\n\tld.param.b32 %r1, [pr];\n\t}\n\
\tst.global.u32 [%rd1], %r1;\n\tret;\n}\n";

fn link(inputs: &[(&str, &str)]) -> Result<String, LinkError> {
    link_ptx(inputs)
}

fn parsed(text: &str) -> Module<'_> {
    let (m, d) = crate::syntax::parse(text);
    assert!(d.is_empty(), "{d:?}\n{text}");
    m
}

fn functions<'a>(m: &Module<'a>) -> Vec<(&'a str, Linkage, bool)> {
    m.items
        .iter()
        .filter_map(|i| match i {
            Item::Function(f) => Some((f.name, f.linkage, f.body.is_some())),
            _ => None,
        })
        .collect()
}

fn variables<'a>(m: &Module<'a>) -> Vec<(&'a str, Linkage)> {
    m.items
        .iter()
        .filter_map(|i| match i {
            Item::Var(v) => Some((v.names[0].name, v.linkage)),
            _ => None,
        })
        .collect()
}

#[test]
fn extern_function_resolves_to_the_other_modules_definition() {
    let a = hdr("8.0", "sm_80") + CALLER;
    let b = hdr("7.0", "sm_75") + INC_DEF;
    let out = link(&[("a.ptx", &a), ("b.ptx", &b)]).unwrap();
    let m = parsed(&out);
    assert_eq!(m.version, (8, 0));
    assert_eq!(m.target, vec!["sm_80"]);
    // A prototype (no extern) before the caller, the definition after it.
    assert_eq!(
        functions(&m),
        vec![
            ("inc", Linkage::Visible, false),
            ("k", Linkage::Visible, true),
            ("inc", Linkage::Visible, true)
        ]
    );
    assert!(!out.contains(".extern"), "{out}");
}

#[test]
fn duplicate_strong_definitions_are_reported_at_both_places() {
    let a = hdr("8.0", "sm_80") + INC_DEF;
    let b = hdr("8.0", "sm_80") + "\n" + INC_DEF;
    let e = link(&[("a.ptx", &a), ("b.ptx", &b)]).unwrap_err();
    assert_eq!(e.errors.len(), 1, "{e}");
    let d = &e.errors[0];
    assert_eq!((d.input.as_str(), d.line, d.col), ("b.ptx", 5, 32));
    assert_eq!(
        d.message,
        "duplicate definition of function `inc`: it is also defined at a.ptx:4:32"
    );
    assert!(
        d.rendered.starts_with("b.ptx:5:32: error: duplicate"),
        "{e}"
    );
}

#[test]
fn unresolved_externs_are_errors_where_used_unless_allowed() {
    let a = hdr("8.0", "sm_80") + CALLER + ".extern .global .u32 unused;\n";
    let e = link(&[("a.ptx", &a)]).unwrap_err();
    assert_eq!(e.errors.len(), 1, "{e}");
    assert_eq!(
        (
            e.errors[0].line,
            e.errors[0].col,
            e.errors[0].message.as_str()
        ),
        (
            4,
            31,
            "unresolved external function `inc`: no input defines it"
        )
    );
    let out = link_ptx_with(
        &[("a.ptx", &a)],
        &LinkOptions {
            allow_unresolved: true,
        },
    )
    .unwrap();
    let m = parsed(&out);
    assert_eq!(
        functions(&m),
        vec![
            ("inc", Linkage::Extern, false),
            ("k", Linkage::Visible, true)
        ]
    );
    assert_eq!(variables(&m), vec![("unused", Linkage::Extern)]);
}

#[test]
fn strong_definitions_win_over_weak_ones_and_the_first_weak_over_later_ones() {
    let weak = |n: u32| {
        INC_DEF
            .replace(".visible", ".weak")
            .replace("add.s32 %r2, %r1, 1", &format!("add.s32 %r2, %r1, {n}"))
    };
    let a = hdr("8.0", "sm_80") + CALLER + &weak(7);
    let b = hdr("8.0", "sm_80") + INC_DEF;
    let c = hdr("8.0", "sm_80") + &weak(9);
    let out = link(&[("a.ptx", &a), ("b.ptx", &b), ("c.ptx", &c)]).unwrap();
    assert!(out.contains("add.s32 %r2, %r1, 1;"), "{out}");
    assert!(
        !out.contains("%r1, 7;") && !out.contains("%r1, 9;"),
        "{out}"
    );
    let out = link(&[("c.ptx", &c), ("a.ptx", &a)]).unwrap();
    assert!(out.contains("%r1, 9;") && !out.contains("%r1, 7;"), "{out}");
    let m = parsed(&out);
    assert_eq!(
        functions(&m),
        vec![
            ("inc", Linkage::Weak, false),
            ("inc", Linkage::Weak, true),
            ("k", Linkage::Visible, true)
        ]
    );
}

#[test]
fn common_variables_merge_into_the_largest() {
    let a = hdr("8.0", "sm_80") + ".common .global .u32 g;\n";
    let b = hdr("8.0", "sm_80") + ".common .global .align 8 .u64 g[4] = {1, 2, 3, 4};\n";
    let c = hdr("8.0", "sm_80") + ".common .global .u8 g[2];\n";
    let out = link(&[("a.ptx", &a), ("b.ptx", &b), ("c.ptx", &c)]).unwrap();
    let m = parsed(&out);
    assert_eq!(variables(&m), vec![("g", Linkage::Common)]);
    assert!(
        out.contains(".common .global .align 8 .u64 g[4] = {1, 2, 3, 4};"),
        "{out}"
    );
    // Only the largest may be initialized.
    let d = hdr("8.0", "sm_80") + ".common .global .u32 g = 5;\n";
    let e = link(&[("b.ptx", &b), ("d.ptx", &d)]).unwrap_err();
    assert_eq!(e.errors.len(), 1, "{e}");
    assert_eq!(e.errors[0].input, "d.ptx");
    assert!(
        e.errors[0]
            .message
            .starts_with("`.common` variable `g` has an initializer but is smaller (4 bytes)"),
        "{e}"
    );
}

#[test]
fn module_local_names_that_clash_are_renamed_with_their_references() {
    let helper = |n: u32| {
        format!(
            ".func (.param .b32 r) helper ()\n{{\n\tst.param.b32 [r], {n};\n\tret;\n}}\n\
             .global .u32 tab = {n};\n\
             .visible .entry k{n}(.param .u64 p)\n{{\n\t.reg .b32 %r<3>;\n\t.reg .b64 %rd<2>;\n\
             \tld.param.u64 %rd1, [p];\n\t{{\n\t.param .b32 pr;\n\tcall.uni (pr), helper, ();\n\
             \tld.param.b32 %r1, [pr];\n\t}}\n\tld.global.u32 %r2, [tab];\n\
             \tst.global.u32 [%rd1], %r1;\n\tret;\n}}\n"
        )
    };
    let a = hdr("8.0", "sm_80") + &helper(1);
    let b = hdr("8.0", "sm_80") + &helper(2);
    let out = link(&[("a.ptx", &a), ("b.ptx", &b)]).unwrap();
    let m = parsed(&out);
    assert_eq!(
        functions(&m).iter().map(|f| f.0).collect::<Vec<_>>(),
        vec!["helper", "k1", "helper_$1", "k2"]
    );
    assert_eq!(
        variables(&m),
        vec![("tab", Linkage::None), ("tab_$1", Linkage::None)]
    );
    let k2 = out.split(".entry k2").nth(1).unwrap();
    assert!(k2.contains("call.uni (pr), helper_$1, ();"), "{out}");
    assert!(k2.contains("[tab_$1]"), "{out}");
}

#[test]
fn names_declared_in_a_function_shadow_renamed_module_names() {
    let a = hdr("8.0", "sm_80") + ".global .u32 x;\n";
    let b = hdr("8.0", "sm_80")
        + ".global .u32 x;\n.visible .entry k()\n{\n\t.reg .b32 x;\n\t.reg .b32 %r<2>;\n\
           \tld.global.u32 %r1, [x];\n\tmov.b32 x, %r1;\n\tret;\n}\n";
    // `x` of module b is renamed, but the register `x` inside `k` is not.
    let out = link(&[("a.ptx", &a), ("b.ptx", &b)]).unwrap();
    assert!(out.contains("mov.b32 x, %r1;"), "{out}");
    assert!(out.contains(".global .u32 x_$1;"), "{out}");
}

#[test]
fn headers_reconcile_or_are_errors() {
    let k = ".visible .entry e() { ret; }\n";
    let t = |a: &str, b: &str| {
        link(&[
            ("a.ptx", &(hdr("8.8", a) + k)),
            ("b.ptx", &(hdr("8.8", b) + &k.replace("e()", "f()"))),
        ])
    };
    let first_target = |r: Result<String, LinkError>| parsed(&r.unwrap()).target.join(",");
    assert_eq!(first_target(t("sm_80", "sm_86")), "sm_86");
    assert_eq!(first_target(t("sm_90a", "sm_80")), "sm_90a");
    assert_eq!(first_target(t("sm_100f", "sm_103")), "sm_103f");
    // `debug` goes with the DWARF sections the link drops.
    assert_eq!(first_target(t("sm_80, debug", "sm_75")), "sm_80");
    assert_eq!(
        first_target(t("sm_80, map_f64_to_f32", "sm_75")),
        "sm_80,map_f64_to_f32"
    );
    let e = t("sm_90a", "sm_100").unwrap_err();
    assert!(
        e.errors[0]
            .message
            .starts_with("no target meets every input's"),
        "{e}"
    );
    assert_eq!((e.errors[0].input.as_str(), e.errors[0].line), ("b.ptx", 2));
    let e = link(&[
        ("a.ptx", &(hdr("8.0", "sm_80") + k)),
        (
            "b.ptx",
            &(".version 8.0\n.target sm_80\n.address_size 32\n".to_string() + k),
        ),
    ])
    .unwrap_err();
    assert_eq!(
        e.errors[0].message,
        "`.address_size 32` differs from `.address_size 64` of a.ptx"
    );
}

#[test]
fn declarations_must_match_their_definitions() {
    let a = hdr("8.0", "sm_80") + &CALLER.replace(".param .b32 a)", ".param .b64 a)");
    let b = hdr("8.0", "sm_80") + INC_DEF;
    let e = link(&[("a.ptx", &a), ("b.ptx", &b)]).unwrap_err();
    assert_eq!(
        e.errors[0].message,
        "`inc` is declared with other parameters than its definition at b.ptx:4:32"
    );
    let a = hdr("8.0", "sm_80") + ".extern .const .u32 v;\n";
    let b = hdr("8.0", "sm_80") + ".visible .global .u32 v;\n";
    let e = link(&[("a.ptx", &a), ("b.ptx", &b)]).unwrap_err();
    assert_eq!(
        e.errors[0].message,
        "`v` is declared in `.const` but defined in `.global` at b.ptx:4:23"
    );
}

/// numba's `declare_device(..., "void(int32)", abi="c")`: the caller declares (and calls with)
/// a `.b64` return that the C definition does not have; nvJitLink links it by name.
#[test]
fn a_declaration_may_give_a_void_definition_a_return_it_never_writes() {
    let caller = CALLER
        .replace("(.param .b32 r) inc", "(.param .b64 r) inc")
        .replace(".param .b32 pr;", ".param .b64 pr;")
        .replace("ld.param.b32 %r1, [pr];", "ld.param.b64 %rd1, [pr];");
    let a = hdr("8.0", "sm_80") + &caller;
    let void_def = ".visible .func inc (.param .b32 a)\n{\n\tret;\n}\n";
    let b = hdr("8.0", "sm_80") + void_def;
    let out = link(&[("a.ptx", &a), ("b.ptx", &b)]).unwrap();
    let m = parsed(&out);
    for f in m.items.iter().filter_map(|i| match i {
        Item::Function(f) if f.name == "inc" => Some(f),
        _ => None,
    }) {
        assert_eq!(f.rets.len(), 1, "{out}");
        assert_eq!(param_bytes(&f.rets[0]), Some(8), "{out}");
    }
    // Parameters must still agree.
    let a = hdr("8.0", "sm_80") + &caller.replace(".param .b32 a)", ".param .b64 a)");
    let e = link(&[("a.ptx", &a), ("b.ptx", &b)]).unwrap_err();
    assert!(e.errors[0].message.contains("other parameters"), "{e}");
    // A definition its own module calls without a return keeps its signature.
    let own_call = "\n.visible .entry j()\n{\n\t.param .b32 q;\n\tst.param.b32 [q], 1;\n\
                    \tcall.uni inc, (q);\n\tret;\n}\n";
    let b2 = b.clone() + own_call;
    let e = link(&[
        ("a.ptx", &a.replace(".param .b64 a)", ".param .b32 a)")),
        ("b.ptx", &b2),
    ])
    .unwrap_err();
    assert!(e.errors[0].message.contains("other parameters"), "{e}");
}

#[test]
fn variables_come_after_the_names_their_initializers_use() {
    // `p` (module a) points at `x`, which module b defines.
    let a =
        hdr("8.0", "sm_80") + ".extern .global .u32 x;\n.visible .global .u64 p = generic(x);\n";
    let b = hdr("8.0", "sm_80") + ".visible .global .u32 x = 5;\n";
    let out = link(&[("a.ptx", &a), ("b.ptx", &b)]).unwrap();
    let m = parsed(&out);
    assert_eq!(
        variables(&m),
        vec![("x", Linkage::Visible), ("p", Linkage::Visible)]
    );
}

#[test]
fn file_numbers_are_renumbered_per_input() {
    let body = |f: &str| {
        format!(
            ".file 1 \"{f}.cu\"\n.file 2 \"{f}.h\"\n.visible .entry {f}()\n{{\n\t.loc 2 3 1\n\tret;\n}}\n"
        )
    };
    let out = link(&[
        ("a.ptx", &(hdr("8.0", "sm_80") + &body("a"))),
        ("b.ptx", &(hdr("8.0", "sm_80") + &body("b"))),
    ])
    .unwrap();
    assert!(out.contains(".file 3 \"b.cu\""), "{out}");
    assert!(out.contains(".file 4 \"b.h\""), "{out}");
    assert!(
        out.split(".entry b").nth(1).unwrap().contains(".loc 4 3 1"),
        "{out}"
    );
}

#[test]
fn input_errors_and_empty_input_lists_are_reported() {
    let e = link(&[]).unwrap_err();
    assert_eq!(e.errors[0].message, "nothing to link: no PTX inputs");
    let e = link(&[("bad.ptx", ".version 8.0\n.target sm_80\nfoo;\n")]).unwrap_err();
    assert_eq!(
        (e.errors[0].input.as_str(), e.errors[0].line),
        ("bad.ptx", 3)
    );
}

#[test]
fn system_calls_stay_declared() {
    let call = |f: &str| {
        format!(
            ".extern .func (.param .b32 r) vprintf (.param .b64 f, .param .b64 a);\n\
             .visible .entry {f}()\n{{\n\t.reg .b32 %r<2>;\n\t{{\n\t.param .b64 pf;\n\
             \t.param .b64 pa;\n\t.param .b32 pr;\n\tst.param.b64 [pf], 0;\n\
             \tst.param.b64 [pa], 0;\n\tcall.uni (pr), vprintf, (pf, pa);\n\t}}\n\tret;\n}}\n"
        )
    };
    let out = link(&[
        ("a.ptx", &(hdr("8.0", "sm_80") + &call("a"))),
        ("b.ptx", &(hdr("8.0", "sm_80") + &call("b"))),
    ])
    .unwrap();
    let m = parsed(&out);
    assert_eq!(
        functions(&m),
        vec![
            ("vprintf", Linkage::Extern, false),
            ("a", Linkage::Visible, true),
            ("b", Linkage::Visible, true)
        ]
    );
}

#[test]
fn dwarf_sections_go_with_the_loc_parts_that_name_them() {
    let a = hdr("8.0", "sm_80, debug")
        + ".file 1 \"a.py\"\n.visible .entry a()\n{\n\
           \t.loc 1 2 3, function_name $L__info_string0, inlined_at 1 5 7\n\tret;\n}\n\
           .section .debug_str\n{\n$L__info_string0:\n.b8 97\n.b8 0\n}\n";
    let out = link(&[("a.ptx", &a)]).unwrap();
    assert!(out.contains(".loc 1 2 3\n"), "{out}");
    assert!(
        !out.contains("function_name") && !out.contains(".section"),
        "{out}"
    );
    assert_eq!(parsed(&out).target, vec!["sm_80"]);
}
