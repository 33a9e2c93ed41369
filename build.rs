//! Build script: reads the instruction-set declaration `src/isa/ptx.isa` (written in the PTX
//! manual's own notation, read by `src/isa/notation.rs`) and generates the `Opcode` and `Mod`
//! enums with perfect-hash lookups, so the parser, the checker and the coverage table all derive
//! from that one file.

#[path = "src/isa/notation.rs"]
#[allow(dead_code)]
mod notation;

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::PathBuf;

fn main() {
    let isa_path = "src/isa/ptx.isa";
    println!("cargo:rerun-if-changed={isa_path}");
    println!("cargo:rerun-if-changed=src/isa/notation.rs");
    println!("cargo:rerun-if-changed=build.rs");
    let text = std::fs::read_to_string(isa_path).expect("read src/isa/ptx.isa");
    let spec = notation::parse(&text).unwrap_or_else(|e| panic!("src/isa/ptx.isa: {e}"));
    let opcodes = spec.opcodes();
    let mut out = String::new();
    gen_enum(&mut out, "Opcode", &opcodes);
    gen_enum(&mut out, "Mod", &spec.modifiers);
    let _ = writeln!(
        out,
        "/// Number of instruction forms declared in `ptx.isa`.\npub const FORM_COUNT: usize = {};",
        spec.forms.len()
    );
    let path = PathBuf::from(std::env::var("OUT_DIR").expect("OUT_DIR")).join("isa_gen.rs");
    std::fs::write(path, out).expect("write isa_gen.rs");
    build_id();
}

/// `PTX2LLVM_BUILD_ID`: a SHA-256 of the crate's sources (and its manifest and lock file), so
/// that the kernel cache (src/target/cpu/cache.rs) never hands objects compiled by one build
/// to another, whose runtime ABI may differ, even when the version number is the same.
fn build_id() {
    use sha2::{Digest, Sha256};
    fn walk(dir: &std::path::Path, out: &mut Vec<PathBuf>) {
        let Ok(rd) = std::fs::read_dir(dir) else {
            return;
        };
        for e in rd.flatten() {
            let p = e.path();
            if p.is_dir() {
                walk(&p, out);
            } else {
                out.push(p);
            }
        }
    }
    let mut files = vec![
        PathBuf::from("build.rs"),
        PathBuf::from("Cargo.toml"),
        PathBuf::from("Cargo.lock"),
    ];
    for d in ["src", "runtime", "include"] {
        println!("cargo:rerun-if-changed={d}");
        walk(std::path::Path::new(d), &mut files);
    }
    println!("cargo:rerun-if-changed=Cargo.lock");
    files.sort();
    let mut h = Sha256::new();
    for f in &files {
        let bytes = std::fs::read(f).unwrap_or_default();
        h.update(f.to_string_lossy().as_bytes());
        h.update((bytes.len() as u64).to_le_bytes());
        h.update(&bytes);
    }
    let id: String = h.finalize()[..12]
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    println!("cargo:rustc-env=PTX2LLVM_BUILD_ID={id}");
}

/// `.shared::cta` → `SharedCta`, `.L2::cache_hint` → `L2CacheHint`, `.L2::64B` → `L2_64B`,
/// `.2d` → `N2d`.
fn variant_name(spelling: &str) -> String {
    let mut name = String::new();
    let mut upper = true;
    for c in spelling.trim_start_matches('.').chars() {
        if c == ':' || c == '_' || c == '.' {
            upper = true;
            continue;
        }
        // Keep digits apart across a separator: `.L2::64B` → `L2_64B`, not `L264B`.
        if upper && c.is_ascii_digit() && name.ends_with(|c: char| c.is_ascii_digit()) {
            name.push('_');
        }
        if upper {
            name.extend(c.to_uppercase());
            upper = false;
        } else {
            name.push(c);
        }
    }
    if name.starts_with(|c: char| c.is_ascii_digit()) {
        name.insert(0, 'N');
    }
    name
}

fn gen_enum(out: &mut String, ty: &str, items: &BTreeSet<String>) {
    let mut names: BTreeMap<String, String> = BTreeMap::new();
    for it in items {
        let v = variant_name(it);
        if let Some(prev) = names.insert(v.clone(), it.clone()) {
            panic!("src/isa/ptx.isa: `{prev}` and `{it}` both map to variant {ty}::{v}");
        }
    }
    writeln!(out, "/// Generated from `src/isa/ptx.isa` by build.rs.").unwrap();
    writeln!(
        out,
        "#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, PartialOrd, Ord)]"
    )
    .unwrap();
    writeln!(out, "#[repr(u16)]\npub enum {ty} {{").unwrap();
    for it in items {
        writeln!(out, "    /// `{it}`\n    {},", variant_name(it)).unwrap();
    }
    writeln!(out, "}}\n").unwrap();
    writeln!(out, "impl {ty} {{").unwrap();
    writeln!(
        out,
        "    /// Number of values.\n    pub const COUNT: usize = {};\n",
        items.len()
    )
    .unwrap();
    writeln!(
        out,
        "    /// Every value, in spelling order.\n    pub const ALL: &'static [{ty}] = &["
    )
    .unwrap();
    for it in items {
        writeln!(out, "        {ty}::{},", variant_name(it)).unwrap();
    }
    writeln!(out, "    ];\n").unwrap();
    writeln!(
        out,
        "    /// The spelling in PTX source.\n    pub fn spelling(self) -> &'static str {{"
    )
    .unwrap();
    writeln!(out, "        static SPELLINGS: [&str; {}] = [", items.len()).unwrap();
    for it in items {
        writeln!(out, "            {it:?},").unwrap();
    }
    writeln!(
        out,
        "        ];\n        SPELLINGS[self as usize]\n    }}\n"
    )
    .unwrap();
    let mut map = phf_codegen::Map::new();
    let vals: Vec<String> = items
        .iter()
        .map(|it| format!("{ty}::{}", variant_name(it)))
        .collect();
    for (it, v) in items.iter().zip(&vals) {
        map.entry(it.as_str(), v.as_str());
    }
    writeln!(
        out,
        "    /// Looks a spelling up (perfect hash).\n    pub fn from_spelling(s: &str) -> Option<{ty}> {{\n        static MAP: phf::Map<&'static str, {ty}> = {};\n        MAP.get(s).copied()\n    }}\n}}\n",
        map.build()
    )
    .unwrap();
}
