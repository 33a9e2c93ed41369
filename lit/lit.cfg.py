# lit.cfg.py: configuration of ptx2llvm's lit test suite (run: `lit -v lit/`, or scripts/test.sh).
#
# Every `*.ptx` file under lit/ (outside `Inputs/` folders) is a test whose `RUN:` lines are
# shell commands, checked with LLVM's FileCheck. Substitutions:
#   ptx2llvm        target/release/ptx2llvm (override with the PTX2LLVM_BIN environment variable)
#   FileCheck, not, llc, opt, llvm-as, llvm-dis, llvm-nm, llvm-objdump, llvm-dwarfdump,
#   split-file, count
#                   LLVM 22's tools ($LLVM_SYS_221_PREFIX/bin, default /usr/lib/llvm-22/bin)
#   %ptxas          NVIDIA's ptxas, when found; the `ptxas` feature is set then, so a test can
#                   write `%if ptxas %{ ... | %ptxas-verify -arch=sm_80 %}` or `REQUIRES: ptxas`
#   %ptxas-verify   ptxas reading PTX from stdin, output discarded: `... | %ptxas-verify -arch=sm_80`
#   %cc             a C compiler (cc, gcc or clang-22) with -I for the repo's include/, when found;
#                   the `cc` feature is set then (`%if cc %{ %cc -fsyntax-only ... %}`)
#   %include        the repo's include/ folder
#   %s, %t, %S ...  lit's own
# No site config is needed: paths are found relative to this file.

import glob
import os
import re
import shutil

import lit.formats

config.name = "ptx2llvm"
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".ptx"]
config.excludes = ["Inputs"]

lit_dir = os.path.dirname(os.path.abspath(__file__))
repo_root = os.path.dirname(lit_dir)
config.test_source_root = lit_dir
config.test_exec_root = os.path.join(repo_root, "target", "lit")

# ---- ptx2llvm itself ---------------------------------------------------------------------------
ptx2llvm = os.environ.get("PTX2LLVM_BIN") or os.path.join(repo_root, "target", "release", "ptx2llvm")
if not os.path.isfile(ptx2llvm):
    lit_config.fatal(
        "ptx2llvm binary not found at %s: run `cargo build --release` first "
        "(or set PTX2LLVM_BIN)" % ptx2llvm
    )

# ---- LLVM 22 tools -----------------------------------------------------------------------------
llvm_prefix = os.environ.get("LLVM_SYS_221_PREFIX") or "/usr/lib/llvm-22"
llvm_bin = os.path.join(llvm_prefix, "bin")


def llvm_tool(name):
    path = os.path.join(llvm_bin, name)
    if os.path.isfile(path) and os.access(path, os.X_OK):
        return path
    found = shutil.which(name + "-22")
    if found:
        return found
    lit_config.fatal("%s not found in %s: run scripts/setup.sh (llvm-22-tools)" % (name, llvm_bin))


def tool_pattern(name):
    # Matches the tool as a whole word, not inside a path or a longer name.
    return r"(?<![\w\-./%=])" + re.escape(name) + r"(?![\w\-./])"


# Longer names first, so that no name replaces a part of another.
substitutions = [("ptx2llvm", ptx2llvm)]
for tool in ["FileCheck", "split-file", "llvm-dwarfdump", "llvm-objdump", "llvm-nm", "llvm-as", "llvm-dis", "count", "not", "llc", "opt"]:
    substitutions.append((tool, llvm_tool(tool)))

# ---- ptxas (optional) --------------------------------------------------------------------------
ptxas = os.environ.get("PTXAS") or ""
if not ptxas:
    candidates = sorted(
        glob.glob(os.path.join(repo_root, ".venv", "lib", "python3.*", "site-packages", "nvidia", "cu*", "bin", "ptxas"))
    )
    ptxas = candidates[-1] if candidates else (shutil.which("ptxas") or "")
if ptxas and os.access(ptxas, os.X_OK):
    config.available_features.add("ptxas")
    config.substitutions.append(("%ptxas-verify", "%s -c -o /dev/null -" % ptxas))
    config.substitutions.append(("%ptxas", ptxas))
else:
    lit_config.note("ptxas not found: tests that need it are UNSUPPORTED (run scripts/setup.sh)")

# ---- A C compiler (optional), for tests that compile generated headers -----------------------
cc = shutil.which("cc") or shutil.which("gcc") or shutil.which("clang-22")
if cc:
    config.available_features.add("cc")
    config.substitutions.append(("%cc", "%s -I%s" % (cc, os.path.join(repo_root, "include"))))
config.substitutions.append(("%include", os.path.join(repo_root, "include")))

# ---- The host's vector features, for tests of code generated only where they exist ------------
# `avx512f`: the cpu target then uses AVX-512 instructions directly (static rounding).
try:
    with open("/proc/cpuinfo") as f:
        cpu_flags = next((l.split(":", 1)[1].split() for l in f if l.startswith("flags")), [])
except OSError:
    cpu_flags = []
if "avx512f" in cpu_flags:
    config.available_features.add("avx512f")
# `avx512dq`: f32 min/max of the warp engine as `vrangeps` (llvm/simd/range.rs).
if "avx512dq" in cpu_flags:
    config.available_features.add("avx512dq")

for name, path in substitutions:
    config.substitutions.append((tool_pattern(name), path))

# The tools run with the repo's environment; keep HOME and the LLVM prefix for them.
for var in ["HOME", "LLVM_SYS_221_PREFIX", "TMPDIR", "PTX2LLVM_RECORD"]:
    if var in os.environ:
        config.environment[var] = os.environ[var]

# The kernel cache (src/target/cpu/cache.rs) of the tests' `ptx2llvm run`s lives in the build
# tree, not in the user's ~/.cache; PTX2LLVM_CACHE=0 from the caller turns it off here too.
config.environment["XDG_CACHE_HOME"] = os.path.join(repo_root, "target", "lit", "xdg-cache")
if "PTX2LLVM_CACHE" in os.environ:
    config.environment["PTX2LLVM_CACHE"] = os.environ["PTX2LLVM_CACHE"]
