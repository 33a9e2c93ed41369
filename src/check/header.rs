//! The module header: `.version` must be one this compiler knows, and every `sm_XX` target
//! must exist in that PTX ISA version. (The parser already rejects a missing `.version` or
//! `.target`, unknown target names and bad `.address_size` values.)

use crate::syntax::ast::Module;
use crate::syntax::diag::Diagnostic;

/// The newest PTX ISA major version accepted (the instruction table is PTX ISA 9.2; newer 9.x
/// minors add instructions but keep the syntax of the old ones).
const MAX_MAJOR: u32 = 9;

/// First PTX ISA version that knows each architecture (`sm_XX`, with or without its `a`/`f`
/// suffix; the suffixed variants are listed when they came later).
const ARCH_MIN_VERSION: &[(&str, (u32, u32))] = &[
    ("sm_10", (1, 0)),
    ("sm_11", (1, 0)),
    ("sm_12", (1, 2)),
    ("sm_13", (1, 2)),
    ("sm_20", (2, 0)),
    ("sm_30", (3, 0)),
    ("sm_32", (4, 0)),
    ("sm_35", (3, 1)),
    ("sm_37", (4, 1)),
    ("sm_50", (4, 0)),
    ("sm_52", (4, 1)),
    ("sm_53", (4, 2)),
    ("sm_60", (5, 0)),
    ("sm_61", (5, 0)),
    ("sm_62", (5, 0)),
    ("sm_70", (6, 0)),
    ("sm_72", (6, 1)),
    ("sm_75", (6, 3)),
    ("sm_80", (7, 0)),
    ("sm_86", (7, 1)),
    ("sm_87", (7, 4)),
    ("sm_88", (9, 0)),
    ("sm_89", (7, 8)),
    ("sm_90", (7, 8)),
    ("sm_90a", (8, 0)),
    ("sm_100", (8, 6)),
    ("sm_100a", (8, 6)),
    ("sm_100f", (8, 8)),
    ("sm_101", (8, 6)),
    ("sm_101a", (8, 6)),
    ("sm_101f", (8, 8)),
    ("sm_103", (8, 8)),
    ("sm_103a", (8, 8)),
    ("sm_103f", (8, 8)),
    ("sm_110", (9, 0)),
    ("sm_110a", (9, 0)),
    ("sm_110f", (9, 0)),
    ("sm_120", (8, 7)),
    ("sm_120a", (8, 7)),
    ("sm_120f", (8, 8)),
    ("sm_121", (8, 8)),
    ("sm_121a", (8, 8)),
    ("sm_121f", (8, 8)),
];

pub(super) fn check_header(module: &Module<'_>, diags: &mut Vec<Diagnostic>) {
    let (major, minor) = module.version;
    if major == 0 {
        // No `.version`: the parser has reported it.
        return;
    }
    if major > MAX_MAJOR {
        diags.push(Diagnostic::new(
            module.version_span,
            format!(
                "`.version {major}.{minor}` is newer than this compiler supports; expected PTX ISA version {MAX_MAJOR}.x or older"
            ),
        ));
        return;
    }
    for t in &module.target {
        let arch = t.replace("compute_", "sm_");
        let Some(&(_, need)) = ARCH_MIN_VERSION.iter().find(|(a, _)| *a == arch) else {
            continue;
        };
        if (major, minor) < need {
            diags.push(Diagnostic::new(
                module.target_span,
                format!(
                    "target `{t}` requires PTX ISA {}.{} or later, but the module declares `.version {major}.{minor}`",
                    need.0, need.1
                ),
            ));
        }
    }
}
