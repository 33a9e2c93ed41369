#!/usr/bin/env bash
# setup.sh: installs everything ptx2llvm needs to build and test on a fresh Debian bookworm
# x86-64 machine, as root (or with sudo). Safe to rerun: it checks each piece first and installs
# only what is missing, so a second run takes about a second and touches nothing.
#
#   - Debian packages: LLVM 22 and clang 22 (libLLVM-22.so, llvm-config-22, FileCheck, not, llc),
#     the libraries a static LLVM link would need, cmake, python3-venv, gdb and linux-perf (for
#     debugging and profiling kernels on the cpu target);
#   - checks that Rust's cargo (with clippy and rustfmt) is on the machine;
#   - a Python venv at .venv/ in the repo with lit and nvidia-cuda-nvcc (NVIDIA's ptxas, which
#     runs without a GPU; its dependency nvidia-cuda-runtime brings cuda.h for the driver API
#     tests), and numba-cuda[cu13] and cuda-core for the Python stage of scripts/test.sh (which
#     runs numba kernels on target/release/cuda/libcuda.so.1). nvidia-nvjitlink is removed:
#     with it numba links to GPU machine code, without it numba links PTX through the driver.
#
# Afterwards `source scripts/env.sh` sets LLVM_SYS_221_PREFIX, PATH and PTXAS.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

# gdb and linux-perf: debugging and profiling kernels on the cpu target (README; tests/cpu_debug.rs).
# python3-dev: Triton compiles its launcher against Python.h (cuda/tests/python/triton_kernels.py).
APT_PACKAGES=(llvm-22-dev clang-22 llvm-22-tools libpolly-22-dev libzstd-dev zlib1g-dev cmake python3-venv gdb linux-perf python3-dev)
# Python packages: distribution name and pip requirement.
PIP_PACKAGES=("lit:lit" "nvidia-cuda-nvcc:nvidia-cuda-nvcc>=13,<14" "numba-cuda:numba-cuda[cu13]" "cuda-core:cuda-core" "triton:triton==3.5.1")

say() { printf 'setup.sh: %s\n' "$*"; }
die() { printf 'setup.sh: error: %s\n' "$*" >&2; exit 1; }

# ---- Debian packages ------------------------------------------------------------------------
missing_apt=()
for pkg in "${APT_PACKAGES[@]}"; do
    status="$(dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null || true)"
    if [ "$status" != "install ok installed" ]; then
        missing_apt+=("$pkg")
    fi
done
if [ "${#missing_apt[@]}" -gt 0 ]; then
    SUDO=()
    if [ "$(id -u)" -ne 0 ]; then
        command -v sudo >/dev/null 2>&1 || die "not root and no sudo: cannot install ${missing_apt[*]}"
        SUDO=(sudo)
    fi
    say "installing Debian packages: ${missing_apt[*]}"
    export DEBIAN_FRONTEND=noninteractive
    "${SUDO[@]}" apt-get update -q
    "${SUDO[@]}" apt-get install -y -q --no-install-recommends "${missing_apt[@]}"
else
    say "Debian packages present: ${APT_PACKAGES[*]}"
fi

LLVM_PREFIX="$(llvm-config-22 --prefix)" || die "llvm-config-22 not found after installing llvm-22-dev"
[ -x "$LLVM_PREFIX/bin/FileCheck" ] || die "FileCheck missing in $LLVM_PREFIX/bin (llvm-22-tools)"
[ -x "$LLVM_PREFIX/bin/not" ] || die "not missing in $LLVM_PREFIX/bin (llvm-22-tools)"
ls "$LLVM_PREFIX"/lib/libLLVM*.so* >/dev/null 2>&1 || die "libLLVM shared library missing in $LLVM_PREFIX/lib"

# ---- Rust -----------------------------------------------------------------------------------
if ! command -v cargo >/dev/null 2>&1 && [ -x "${CARGO_HOME:-$HOME/.cargo}/bin/cargo" ]; then
    PATH="${CARGO_HOME:-$HOME/.cargo}/bin:$PATH"
fi
command -v cargo >/dev/null 2>&1 || die "cargo not found: install Rust with rustup (https://rustup.rs) and put ~/.cargo/bin on PATH"
cargo clippy --version >/dev/null 2>&1 || die "cargo clippy missing: rustup component add clippy"
cargo fmt --version >/dev/null 2>&1 || die "cargo fmt missing: rustup component add rustfmt"
say "Rust: $(cargo --version)"

# ---- Python venv with lit and ptxas ---------------------------------------------------------
VENV="$ROOT/.venv"
if ! "$VENV/bin/python" -c 'import sys' >/dev/null 2>&1; then
    # Debian's own Python, for which python3-venv was installed; any python3 otherwise.
    PY=/usr/bin/python3
    [ -x "$PY" ] || PY="$(command -v python3)" || die "python3 not found"
    say "creating Python venv at .venv with $PY"
    rm -rf "$VENV"
    "$PY" -m venv "$VENV"
fi
missing_pip=()
for entry in "${PIP_PACKAGES[@]}"; do
    dist="${entry%%:*}"
    req="${entry#*:}"
    if ! "$VENV/bin/python" -c 'import sys, importlib.metadata as m; m.version(sys.argv[1])' "$dist" >/dev/null 2>&1; then
        missing_pip+=("$req")
    fi
done
if [ "${#missing_pip[@]}" -gt 0 ]; then
    say "pip installing into .venv: ${missing_pip[*]}"
    "$VENV/bin/python" -m pip install -q --disable-pip-version-check "${missing_pip[@]}"
else
    say "Python venv .venv present with: ${PIP_PACKAGES[*]%%:*}"
fi
if "$VENV/bin/python" -c 'import importlib.metadata as m; m.version("nvidia-nvjitlink")' >/dev/null 2>&1; then
    say "removing nvidia-nvjitlink from .venv (numba must hand PTX to the driver, not GPU code)"
    "$VENV/bin/python" -m pip uninstall -y -q --disable-pip-version-check nvidia-nvjitlink
fi

# ---- The environment ------------------------------------------------------------------------
# shellcheck source=scripts/env.sh
source "$ROOT/scripts/env.sh"
[ -n "$PTXAS" ] || die "ptxas not found under .venv after installing nvidia-cuda-nvcc"
"$PTXAS" --version >/dev/null 2>&1 || die "$PTXAS does not run"
command -v lit >/dev/null 2>&1 || die "lit not found in .venv/bin"

say "ready. The build environment (source scripts/env.sh to get it):"
printf '  export LLVM_SYS_221_PREFIX=%s\n' "$LLVM_SYS_221_PREFIX"
printf '  PTXAS=%s\n' "$PTXAS"
printf '  FileCheck=%s  lit=%s\n' "$LLVM_SYS_221_PREFIX/bin/FileCheck" "$(command -v lit)"
