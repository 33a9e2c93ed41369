#!/usr/bin/env bash
# build-and-demo.sh: README command #1. Installs what is missing (scripts/setup.sh), builds
# ptx2llvm in release mode and runs it on the shipped example examples/saxpy.ptx, showing each
# command and its output under a header:
#   check -> fmt -> PTX to LLVM IR for the nvptx target -> back to PTX through LLVM's NVPTX
#   back end, validated by NVIDIA's ptxas -> PTX to LLVM IR and an object file for the host cpu.
# Every demo step runs even when an earlier one failed; the script exits non-zero if any did.
# Outputs go to target/demo/.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

header() { printf '\n==== %s ====\n' "$*"; }

header "setup (scripts/setup.sh)"
bash scripts/setup.sh
# shellcheck source=scripts/env.sh
source scripts/env.sh

header "build (cargo build --release)"
cargo build --release

BIN=target/release/ptx2llvm
EXAMPLE=examples/saxpy.ptx
OUT=target/demo
mkdir -p "$OUT"
results=()
failures=0

# show COMMAND...: prints a command, then runs it.
show() {
    printf '$ %s\n' "$*"
    "$@"
}

# demo TITLE COMMAND...: runs one demo step under a header and records how it went.
demo() {
    local title="$1" status=0
    shift
    header "$title"
    "$@" || status=$?
    if [ "$status" -eq 0 ]; then
        results+=("ok      $title")
    else
        results+=("FAILED  $title (exit $status)")
        failures=$((failures + 1))
    fi
}

# produced FILE: fails with a message unless the step wrote FILE.
produced() {
    [ -s "$1" ] || { echo "error: $1 was not written" >&2; return 1; }
}

# Translates to PTX through LLVM's NVPTX back end, then lets NVIDIA's ptxas judge the result.
nvptx_roundtrip() {
    local out="$OUT/saxpy.sm_80.ptx"
    rm -f "$out"
    show "$BIN" "$EXAMPLE" --target nvptx --arch sm_80 --emit asm -O3 -o "$out" || return
    produced "$out" || return
    cat "$out"
    if [ -n "$PTXAS" ]; then
        show "$PTXAS" -arch=sm_80 "$out" -o /dev/null || return
        echo "ptxas: accepted"
    else
        echo "ptxas not found: skipped its check"
    fi
}

# Translates for the host cpu: LLVM IR, then an object file.
cpu_translate() {
    local ll="$OUT/saxpy.cpu.ll" obj="$OUT/saxpy.cpu.o"
    rm -f "$ll" "$obj"
    show "$BIN" "$EXAMPLE" --target cpu --emit llvm -O2 -o "$ll" || return
    produced "$ll" || return
    cat "$ll"
    show "$BIN" "$EXAMPLE" --target cpu --emit obj -O2 -o "$obj" || return
    produced "$obj" || return
    ls -l "$obj"
}

# Runs saxpy on the cpu target: y = a*x + y for n = 1000 elements over 4 blocks of 256 threads,
# three times (buffers persist between launches), then checks every element against the
# same formula computed here.
cpu_run() {
    local x="$OUT/x.f32" y="$OUT/y.f32" out="$OUT/y.out.f32"
    python3 -c 'import struct,sys; n=1000; open(sys.argv[1],"wb").write(struct.pack("<%df" % n, *[i*0.5 for i in range(n)])); open(sys.argv[2],"wb").write(struct.pack("<%df" % n, *[1.0]*n))' "$x" "$y"
    show "$BIN" run "$EXAMPLE" --kernel saxpy --grid 4 --block 256 \
        --arg "@$x" --arg "@$y" --arg f32:2.0 --arg u32:1000 --dump "1=$out" --repeat 3 || return
    produced "$out" || return
    python3 -c 'import struct,sys; n=1000; y=struct.unpack("<%df" % n, open(sys.argv[1],"rb").read()); bad=[i for i in range(n) if y[i] != 1.0 + 3*(2.0*(i*0.5))]; print("y[0..5] =", y[:5]); print("all %d elements equal y0 + 3*(a*x) after 3 launches" % n if not bad else "MISMATCH at %s" % bad[:5]); sys.exit(1 if bad else 0)' "$out"
}

header "the example: $EXAMPLE"
cat "$EXAMPLE"

demo "check: parse and validate the module" show "$BIN" check "$EXAMPLE"
demo "fmt: print the module back in canonical form" show "$BIN" fmt "$EXAMPLE"
demo "translate: PTX -> LLVM IR for the nvptx target" show "$BIN" "$EXAMPLE" --target nvptx --emit llvm
demo "nvptx: LLVM IR -> PTX (sm_80) through LLVM, checked by ptxas" nvptx_roundtrip
demo "cpu: PTX -> LLVM IR and an object file for this machine" cpu_translate
demo "run: saxpy on this machine's cores, checked against y = a*x + y" cpu_run

header "summary"
printf '  %s\n' "${results[@]}"
if [ "$failures" -ne 0 ]; then
    echo "build-and-demo.sh: $failures of ${#results[@]} demo steps failed"
    exit 1
fi
echo "build-and-demo.sh: all ${#results[@]} demo steps passed (outputs in target/demo/)"
