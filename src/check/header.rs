//! The module header: `.version` must be one this compiler knows, and every `sm_XX` target
//! must exist in that PTX ISA version. (The parser already rejects a missing `.version` or
//! `.target`, unknown target names and bad `.address_size` values.)

use crate::isa::requirements::ARCH_MIN_VERSION;
use crate::syntax::ast::Module;
use crate::syntax::diag::Diagnostic;

/// The newest PTX ISA major version accepted (the instruction table is PTX ISA 9.2; newer 9.x
/// minors add instructions but keep the syntax of the old ones).
const MAX_MAJOR: u32 = 9;

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
