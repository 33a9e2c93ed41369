# env.sh: the environment that building and testing ptx2llvm needs. Source it, don't run it:
#     source scripts/env.sh
# It sets LLVM_SYS_221_PREFIX (where llvm-sys finds LLVM 22), puts LLVM 22's tools, the repo's
# Python venv (.venv: lit, ptxas) and ptxas's folder on PATH, and sets PTXAS to the path of
# NVIDIA's ptxas when scripts/setup.sh has installed it (empty otherwise).
# It changes no shell options and can be sourced any number of times.
# shellcheck shell=bash

PTX2LLVM_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
export PTX2LLVM_ROOT

if [ -z "${LLVM_SYS_221_PREFIX:-}" ]; then
    if command -v llvm-config-22 >/dev/null 2>&1; then
        LLVM_SYS_221_PREFIX="$(llvm-config-22 --prefix)"
    else
        LLVM_SYS_221_PREFIX=/usr/lib/llvm-22
    fi
fi
export LLVM_SYS_221_PREFIX

# Prepends $1 to PATH unless it is already there or is not a directory.
_ptx2llvm_path_prepend() {
    [ -d "$1" ] || return 0
    case ":${PATH:-}:" in
        *":$1:"*) ;;
        *) PATH="$1${PATH:+:$PATH}" ;;
    esac
}

# cargo from rustup, for shells that did not load ~/.cargo/env.
if ! command -v cargo >/dev/null 2>&1; then
    _ptx2llvm_path_prepend "${CARGO_HOME:-$HOME/.cargo}/bin"
fi

# NVIDIA's ptxas from the PyPI package nvidia-cuda-nvcc, inside the repo's venv.
PTXAS=""
for _ptx2llvm_p in "$PTX2LLVM_ROOT"/.venv/lib/python3.*/site-packages/nvidia/cu*/bin/ptxas; do
    if [ -x "$_ptx2llvm_p" ]; then
        PTXAS="$_ptx2llvm_p"
    fi
done
unset _ptx2llvm_p
export PTXAS

# Later prepends come first: the venv (lit) wins over LLVM's own lit.
_ptx2llvm_path_prepend "$LLVM_SYS_221_PREFIX/bin"
if [ -n "$PTXAS" ]; then
    _ptx2llvm_path_prepend "$(dirname "$PTXAS")"
fi
_ptx2llvm_path_prepend "$PTX2LLVM_ROOT/.venv/bin"
export PATH
unset -f _ptx2llvm_path_prepend
