#!/usr/bin/env bash
# ptx-tests.sh: vosen/ptx_tests (exhaustive per-instruction tests checked against MPFR/host
# references, driven through cuModuleLoadData/cuLaunchKernel) against this build's
# libcuda.so.1 (target/release/cuda), niced, in shards run in the background, as a
# fidelity run beyond CI. Not part of scripts/test.sh.
#
#   PTX_TESTS_SRC=/path/to/ptx_tests bash scripts/ptx-tests.sh [-f REGEX] [-n SHARDS]
#   PTX_TESTS_SRC=/path/to/ptx_tests bash scripts/ptx-tests.sh -l       # list the tests
#   bash scripts/ptx-tests.sh -s                                         # summary only
#
# PTX_TESTS_SRC (or the first argument, if it is a directory) is a checkout of
# https://github.com/vosen/ptx_tests at the pinned commit below (the project does not carry
# its code): `git clone https://github.com/vosen/ptx_tests && git -C ptx_tests checkout
# $PIN`, or `git -C BARE archive $PIN | tar -x -C DIR` from a mirror. It builds with the
# nightly toolchain (`rustup toolchain install nightly`) and builds GMP/MPFR from source
# (needs m4 and a C compiler); the first build takes a long time on two cores.
#
# Each test of ptx_tests checks up to 2^32 inputs (all 32-bit patterns, or 2^32 random
# inputs), which takes hours per test on a CPU. PTX_TESTS_MAX_CASES (default 2^20; 0 = the
# whole domain) bounds the inputs per test without changing any check: a copy of the source
# is edited (three lines of src/test.rs, by the perl below) so that a range test visits
# MAX_CASES inputs spread over its whole domain with an odd stride, and a random test the
# first MAX_CASES inputs of its seeded sequence. The summary states the cap in force.
#
# Writes, in $OUT (PTX_TESTS_OUT, default target/ptx-tests): shard-I.log (ptx_tests' output
# per shard) and summary.txt (tests run/passed/failed per module, a module being the test name's
# first word, e.g. dp4a for dot_product.rs; then each failure's first
# lines).
set -u
PIN=76d4dcef6a2e40fb3ab173c2ceda5f0098218f8b
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
OUT="${PTX_TESTS_OUT:-$ROOT/target/ptx-tests}"
SRC="${PTX_TESTS_SRC:-}"
CAP="${PTX_TESTS_MAX_CASES:-1048576}"
FILTER=""
SHARDS=2
MODE=run
if [ $# -gt 0 ] && [ -d "$1" ]; then SRC="$1"; shift; fi
while [ $# -gt 0 ]; do
    case "$1" in
    -f) FILTER="$2"; shift 2 ;;
    -n) SHARDS="$2"; shift 2 ;;
    -l) MODE=list; shift ;;
    -s) MODE=summary; shift ;;
    *) echo "ptx-tests.sh: unknown argument '$1'" >&2; exit 2 ;;
    esac
done
mkdir -p "$OUT"

summarize() {
    # A test's name is MODULE_TYPE..., and its verdict line is "NAME: OK" or "NAME: FAIL ...".
    {
        echo "ptx_tests @ $PIN, inputs per test capped at $(cat "$OUT/cap" 2>/dev/null || echo ?) (0 = whole domain)"
        cat "$OUT"/shard-*.log 2>/dev/null | awk '
            /^[A-Za-z0-9_.]+: (OK|FAIL)/ {
                name = $1; sub(/:$/, "", name)
                mod = name; sub(/_.*/, "", mod)
                run[mod]++; total++
                if ($2 == "OK") { ok[mod]++; passed++ } else { bad[mod]++; failed++ }
            }
            END {
                printf "%d tests: %d passed, %d failed\n", total, passed, failed
                n = 0; for (m in run) { n++; if (!(m in bad)) clean++ }
                printf "%d modules run, %d with every test passing\n", n, clean
                for (m in run) printf "  %-12s run %5d  passed %5d  failed %5d\n", m, run[m], ok[m], bad[m]
            }' | sort
        echo
        echo "failures (first lines):"
        cat "$OUT"/shard-*.log 2>/dev/null | awk '
            /^[A-Za-z0-9_.]+: FAIL/ { show = 6 }
            show > 0 { print; show-- }'
    } >"$OUT/summary.txt"
    head -3 "$OUT/summary.txt"
}
if [ "$MODE" = summary ]; then summarize; exit 0; fi

if [ -z "$SRC" ] || [ ! -f "$SRC/src/test.rs" ]; then
    echo "ptx-tests.sh: set PTX_TESTS_SRC to a checkout of vosen/ptx_tests at $PIN" >&2
    exit 2
fi
LIB="$ROOT/target/release/cuda/libcuda.so.1"
if [ ! -f "$LIB" ]; then
    echo "ptx-tests.sh: $LIB is missing: run cargo build --release" >&2
    exit 2
fi

# Build an edited copy (the checkout stays as it is); PTX_TESTS_TARGET reuses a build
# directory (GMP/MPFR take long to build).
COPY="$OUT/src"
mkdir -p "$COPY"
cp -r "$SRC/Cargo.toml" "$SRC/Cargo.lock" "$SRC/rust-toolchain.toml" "$SRC/src" "$COPY/"
# Under target/, the copy would otherwise count as a member of ptx2llvm's workspace.
printf '\n[workspace]\n' >>"$COPY/Cargo.toml"
perl -0pi -e '
    s/let total_elements = 2\.pow\(32\);/let total_elements = ptxt_cap(1usize << 32);/ or die "random";
    s/let total_elements = Test::MAX_VALUE as usize \+ 1;/let ptxt_domain = Test::MAX_VALUE as usize + 1;\n    let total_elements = ptxt_cap(ptxt_domain);\n    let ptxt_stride = if total_elements < ptxt_domain { (ptxt_domain \/ total_elements) | 1 } else { 1 };/ or die "range";
    s/t\.generate\(\(elment_start \+ i\) as u32\)/t.generate((((elment_start + i) * ptxt_stride) % ptxt_domain) as u32)/ or die "generate";
    $_ .= "\n// Added by ptx2llvm scripts/ptx-tests.sh: PTX_TESTS_MAX_CASES bounds the inputs per test.\nfn ptxt_cap(domain: usize) -> usize {\n    match std::env::var(\"PTX_TESTS_MAX_CASES\").ok().and_then(|v| v.parse::<usize>().ok()) {\n        Some(0) | None => domain,\n        Some(cap) => domain.min(next_multiple_of(cap, GROUP_SIZE)),\n    }\n}\n";
' "$COPY/src/test.rs" || { echo "ptx-tests.sh: the cap edit did not apply (not commit $PIN?)" >&2; exit 2; }
export CARGO_TARGET_DIR="${PTX_TESTS_TARGET:-$OUT/cargo-target}"
# No fat LTO: it only slows the build down (the time goes into the library and MPFR).
(cd "$COPY" && CARGO_PROFILE_RELEASE_LTO=false CARGO_PROFILE_RELEASE_CODEGEN_UNITS=16 \
    nice -n 19 cargo +nightly build -r -q) >"$OUT/build.log" 2>&1 ||
    { cat "$OUT/build.log" >&2; exit 1; }
BIN="$CARGO_TARGET_DIR/release/ptx_tests"

if [ "$MODE" = list ]; then "$BIN" -l; exit 0; fi
echo "$CAP" >"$OUT/cap"
rm -f "$OUT"/shard-*.log
args=()
[ -n "$FILTER" ] && args+=(-f "$FILTER")
pids=()
for ((i = 0; i < SHARDS; i++)); do
    PTX_TESTS_MAX_CASES="$CAP" nice -n 19 "$BIN" "$LIB" "${args[@]}" \
        --shard-index "$i" --shard-count "$SHARDS" >"$OUT/shard-$i.log" 2>&1 &
    pids+=($!)
done
rc=0
for p in "${pids[@]}"; do wait "$p" || rc=1; done
summarize
exit $rc
