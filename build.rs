//! Build script: reads the instruction-set declaration `src/isa/ptx.isa` (written in the PTX
//! manual's own notation) and generates the `Opcode` and `Mod` enums with perfect-hash lookups,
//! so the parser, the checker and the coverage table all derive from that one file.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::PathBuf;

fn main() {
    let isa_path = "src/isa/ptx.isa";
    println!("cargo:rerun-if-changed={isa_path}");
    println!("cargo:rerun-if-changed=build.rs");
    let text = std::fs::read_to_string(isa_path).expect("read src/isa/ptx.isa");
    let (opcodes, mods) = collect(&text);
    let mut out = String::new();
    gen_enum(&mut out, "Opcode", &opcodes, "");
    gen_enum(&mut out, "Mod", &mods, ".");
    let path = PathBuf::from(std::env::var("OUT_DIR").unwrap()).join("isa_gen.rs");
    std::fs::write(path, out).unwrap();
}

/// Strips `//` comments and `#` comment lines.
fn strip(line: &str) -> &str {
    let line = match line.find("//") {
        Some(i) => &line[..i],
        None => line,
    };
    if line.trim_start().starts_with('#') {
        ""
    } else {
        line
    }
}

/// Expands `.shared{::cta, ::cluster}` into `.shared`, `.shared::cta`, `.shared::cluster`.
pub fn expand_suffixes(tok: &str) -> Vec<String> {
    if let Some(open) = tok.find("{::") {
        let close = tok[open..].find('}').map(|c| c + open).unwrap_or(tok.len());
        let base = &tok[..open];
        let mut v = vec![base.to_string()];
        for s in tok[open + 1..close].split(',') {
            v.push(format!("{base}{}", s.trim()));
        }
        v
    } else {
        vec![tok.to_string()]
    }
}

/// Splits the dotted modifiers of a form's opcode part into tokens (`{.a}` and `.b::c`).
fn dotted_tokens(s: &str) -> Vec<String> {
    let mut toks = Vec::new();
    let b = s.as_bytes();
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'.' {
            let start = i;
            i += 1;
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_' || b[i] == b':') {
                i += 1;
            }
            // `.shared{::cta}` style suffix group
            if i + 2 < b.len() && b[i] == b'{' && b[i + 1] == b':' {
                let close = s[i..].find('}').map(|c| c + i + 1).unwrap_or(b.len());
                toks.extend(expand_suffixes(&s[start..close]));
                i = close;
            } else {
                toks.push(s[start..i].to_string());
            }
        } else {
            i += 1;
        }
    }
    toks
}

fn collect(text: &str) -> (BTreeSet<String>, BTreeSet<String>) {
    let mut opcodes = BTreeSet::new();
    let mut mods = BTreeSet::new();
    // Blocks are separated by blank lines; placeholder names are scoped to their block.
    let mut blocks: Vec<Vec<String>> = vec![Vec::new()];
    let mut pending = String::new();
    for raw in text.lines() {
        let line = strip(raw);
        if line.trim().is_empty() {
            if pending.is_empty() && !blocks.last().unwrap().is_empty() {
                blocks.push(Vec::new());
            }
            continue;
        }
        pending.push_str(line);
        pending.push(' ');
        // A definition may span several lines until its closing brace.
        if pending.contains('{') && pending.trim_start().starts_with('.') && !pending.contains('}') {
            continue;
        }
        blocks.last_mut().unwrap().push(std::mem::take(&mut pending));
    }
    for block in &blocks {
        let mut placeholders = BTreeSet::new();
        let mut forms = Vec::new();
        for line in block {
            let t = line.trim();
            if t.starts_with('.') && t.contains('=') {
                let (lhs, rhs) = t.split_at(t.rfind('=').unwrap());
                for name in lhs.split('=') {
                    let n = name.trim();
                    if !n.is_empty() {
                        placeholders.insert(n.to_string());
                    }
                }
                let body = rhs.trim_start_matches('=').trim();
                let body = body.trim_end_matches(';').trim();
                let body = body.trim_start_matches('{').trim_end_matches('}');
                for item in split_top(body) {
                    for tok in dotted_tokens(item.trim()) {
                        mods.insert(tok);
                    }
                }
            } else if t.as_bytes().first().is_some_and(|c| c.is_ascii_lowercase()) {
                forms.push(t.to_string());
            } else {
                panic!("src/isa/ptx.isa: cannot read line `{t}`");
            }
        }
        for f in forms {
            let name_end = f
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .unwrap_or(f.len());
            opcodes.insert(f[..name_end].to_string());
            let head_end = f[name_end..]
                .find(char::is_whitespace)
                .map(|i| i + name_end)
                .unwrap_or(f.len());
            let head = &f[name_end..head_end];
            for tok in dotted_tokens(head) {
                if !placeholders.contains(&tok) {
                    mods.insert(tok);
                }
            }
            // Modifiers after operands (`[a]{.unified}`) are spellings too.
            for tok in dotted_tokens(&f[head_end..]) {
                if !placeholders.contains(&tok) && !tok.contains(|c: char| c.is_ascii_digit() && false) {
                    if tok.len() > 1 && tok[1..].starts_with(|c: char| c.is_ascii_alphabetic()) {
                        mods.insert(tok);
                    }
                }
            }
        }
    }
    (opcodes, mods)
}

/// Splits on commas that are not inside `{}`.
fn split_top(s: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut depth = 0;
    let mut start = 0;
    for (i, c) in s.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            ',' if depth == 0 => {
                out.push(&s[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    out.push(&s[start..]);
    out
}

fn variant_name(spelling: &str) -> String {
    let mut name = String::new();
    let mut upper = true;
    for c in spelling.trim_start_matches('.').chars() {
        if c == ':' || c == '_' || c == '.' {
            if !name.is_empty() && name.chars().last().unwrap().is_ascii_digit() {
                name.push('_');
            }
            upper = true;
            continue;
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

fn gen_enum(out: &mut String, ty: &str, items: &BTreeSet<String>, prefix: &str) {
    let mut names: BTreeMap<String, String> = BTreeMap::new();
    for it in items {
        let v = variant_name(it);
        if let Some(prev) = names.insert(v.clone(), it.clone()) {
            panic!("src/isa/ptx.isa: `{prev}` and `{it}` both map to variant {ty}::{v}");
        }
    }
    let _ = prefix;
    writeln!(out, "/// Generated from `src/isa/ptx.isa` by build.rs.").unwrap();
    writeln!(out, "#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, PartialOrd, Ord)]").unwrap();
    writeln!(out, "#[repr(u16)]\npub enum {ty} {{").unwrap();
    for it in items {
        writeln!(out, "    /// `{it}`\n    {},", variant_name(it)).unwrap();
    }
    writeln!(out, "}}\n").unwrap();
    writeln!(out, "impl {ty} {{").unwrap();
    writeln!(out, "    /// Every value, in spelling order.\n    pub const ALL: &'static [{ty}] = &[").unwrap();
    for it in items {
        writeln!(out, "        {ty}::{},", variant_name(it)).unwrap();
    }
    writeln!(out, "    ];\n").unwrap();
    writeln!(out, "    /// The spelling in PTX source.\n    pub fn spelling(self) -> &'static str {{\n        match self {{").unwrap();
    for it in items {
        writeln!(out, "            {ty}::{} => {:?},", variant_name(it), it).unwrap();
    }
    writeln!(out, "        }}\n    }}\n").unwrap();
    let mut map = phf_codegen::Map::new();
    let vals: Vec<String> = items.iter().map(|it| format!("{ty}::{}", variant_name(it))).collect();
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
