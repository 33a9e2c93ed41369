#!/usr/bin/env bash
# numba-suite.sh: numba-cuda's own test suite (the numba.cuda.tests its installed wheel ships)
# against this build's libcuda.so.1 (target/release/cuda), niced and in one process, as the
# driver's acceptance run beyond CI. Not part of scripts/test.sh: it takes about 35 minutes
# on two busy cores.
#
#   bash scripts/numba-suite.sh [pytest arguments, e.g. -k test_sync]
#   NUMBA_SUITE_OUT=target/numba-suite-coroutine PTX2LLVM_CPU_MODE=coroutine bash scripts/numba-suite.sh
#   NUMBA_SUITE_LIB=target/numba-lib bash scripts/numba-suite.sh   # a copy of the library, so
#                                          # that rebuilding during a long run changes nothing
#   NUMBA_SUITE_TESTS="numba.cuda.tests.cudadrv numba.cuda.tests.nrt" bash scripts/numba-suite.sh
#       # a shard: the test packages or modules to run (default numba.cuda.tests)
#   NUMBA_SUITE_PYTHONPATH=DIR bash scripts/numba-suite.sh   # more packages ahead of the venv's
#   NUMBA_SUITE_OVERLAY=0 bash scripts/numba-suite.sh        # the venv's packages only
#   NUMBA_SUITE_TESTING=DIR bash scripts/numba-suite.sh       # with the test binaries, below
#
# The suite runs against the package versions numba-cuda 0.30.4 was made for, from an overlay
# directory ahead of the venv on PYTHONPATH (pip install --target, cached in
# target/numba-suite-overlay; the venv keeps its packages, which cuda.core and
# scripts/test.sh need):
#   cuda-bindings 13.3.1: numba-cuda 0.30's IPC reads CUipcMemHandle.reserved, which
#       cuda-bindings >= 13.4 no longer has (5 tests of test_ipc);
#   numba 0.67.0 (with its llvmlite 0.49): numba 0.68 stamps cached sources by a hash of
#       their text, numba-cuda 0.30.4 by (mtime, size), as numba 0.67 does; the CPU and CUDA
#       dispatchers share one index file, so under 0.68 each discards the other's entries
#       (test_cpu_and_cuda_targets/_reuse).
#
# The test binaries: numba-cuda's CI builds link inputs (test_device_functions.*, nrt_extern.*:
# PTX, CUDA C++, cubin, fatbin, object, archive, LTO-IR) with nvcc from its repository's
# testing/ folder, and some tests are skipped without them. NUMBA_SUITE_TESTING names that
# folder at the installed version's tag (`git clone https://github.com/NVIDIA/numba-cuda &&
# git -C numba-cuda checkout v0.30.4`, then DIR=numba-cuda/testing): its Makefile runs, for
# compute capability 8.9, with the venv's nvcc (the nvidia-cuda-nvcc wheel), into
# target/numba-suite-bin, and NUMBA_CUDA_TEST_BIN_DIR points there. The inputs that are GPU
# machine code only (cubin, SASS-only fatbin, object, archive) are refused by the library's
# linker, a documented limit.
#
# Needs `cargo build --release`. Installs pytest and the suite's test-only dependencies into
# $OUT/pylib (not the venv). Writes, in $OUT (NUMBA_SUITE_OUT, default target/numba-suite),
# log (pytest's report), driver.log (the library's log),
# junit.xml, versions.txt (numba's and cuda-bindings' versions in force) and summary.txt
# (counts, the failures grouped by the first line of their error, the skip reasons counted).
set -u
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
OUT="${NUMBA_SUITE_OUT:-$ROOT/target/numba-suite}"
PY="$ROOT/.venv/bin/python"
mkdir -p "$OUT"
# Relative paths are the caller's: the suite runs from another directory.
OUT="$(cd "$OUT" && pwd)"
LIB="$(cd "${NUMBA_SUITE_LIB:-$ROOT/target/release/cuda}" && pwd)" || exit 1
EXTRA=""
if [ -n "${NUMBA_SUITE_PYTHONPATH:-}" ]; then
    EXTRA="$(cd "$NUMBA_SUITE_PYTHONPATH" && pwd)" || exit 1
fi
if [ ! -d "$OUT/pylib/pytest_benchmark" ]; then
    "$PY" -m pip install -q --disable-pip-version-check --target "$OUT/pylib" \
        pytest pytest-benchmark filecheck ml_dtypes cffi psutil || exit 1
fi
OVERLAY=""
if [ "${NUMBA_SUITE_OVERLAY:-1}" != 0 ]; then
    OVERLAY="$ROOT/target/numba-suite-overlay"
    if [ ! -f "$OVERLAY/.complete" ]; then
        rm -rf "$OVERLAY"
        "$PY" -m pip install -q --disable-pip-version-check --no-deps --target "$OVERLAY" \
            cuda-bindings==13.3.1 numba==0.67.0 llvmlite==0.49.0 || exit 1
        touch "$OVERLAY/.complete"
    fi
fi
PYPATH="$OUT/pylib${OVERLAY:+:$OVERLAY}${EXTRA:+:$EXTRA}"
PYTHONPATH="$PYPATH" "$PY" -c 'import numba, cuda.bindings; print(f"numba-suite: numba {numba.__version__}, cuda-bindings {cuda.bindings.__version__}")' \
    >"$OUT/versions.txt" 2>&1
if [ -n "${NUMBA_SUITE_TESTING:-}" ]; then
    BIN="$ROOT/target/numba-suite-bin"
    if [ ! -f "$BIN/.complete" ]; then
        rm -rf "$BIN" && mkdir -p "$BIN" && cp -r "$NUMBA_SUITE_TESTING"/. "$BIN"/ || exit 1
        NVBIN="$(ls -d "$ROOT"/.venv/lib/python3*/site-packages/nvidia/cu13/bin | head -1)"
        (cd "$BIN" && PATH="$NVBIN:$ROOT/.venv/bin:$PATH" PYTHONPATH="$PYPATH" \
            nice -n 19 make GPU_CC=89 >make.log 2>&1) || { tail "$BIN/make.log" >&2; exit 1; }
        touch "$BIN/.complete"
    fi
    export NUMBA_CUDA_TEST_BIN_DIR="$BIN"
fi
cd "$ROOT/cuda/tests/numba_suite" || exit 1
LD_LIBRARY_PATH="$LIB" PYTHONPATH="$PYPATH" \
    PTX2LLVM_CUDA_LOG="$OUT/driver.log" \
    nice -n 19 "$PY" -m pytest -p no:cacheprovider -q -rfE \
    -o consider_namespace_packages=true --junitxml="$OUT/junit.xml" \
    --pyargs ${NUMBA_SUITE_TESTS:-numba.cuda.tests} "$@" >"$OUT/log" 2>&1
rc=$?
"$PY" - "$OUT/junit.xml" >"$OUT/summary.txt" <<'PYEOF'
import collections, sys, xml.etree.ElementTree as ET
root = ET.parse(sys.argv[1]).getroot()
counts = collections.Counter()
causes = collections.defaultdict(list)
skips = collections.Counter()
for case in root.iter("testcase"):
    name = f"{case.get('classname')}.{case.get('name')}"
    kind = "passed"
    for child in case:
        if child.tag in ("failure", "error", "skipped"):
            kind = {"failure": "failed", "error": "errors", "skipped": "skipped"}[child.tag]
            if child.tag == "skipped":
                reason = (child.get("message") or "").strip()
                if child.get("type") == "pytest.xfail":
                    reason = "xfail" + (f": {reason}" if reason else "")
                skips[(reason or "?")[:160]] += 1
            else:
                msg = (child.get("message") or child.text or "").strip().splitlines()
                causes[(msg[0] if msg else "?")[:160]].append(name)
            break
    counts[kind] += 1
total = sum(counts.values())
print(f"numba-cuda suite: {total} tests: " + ", ".join(
    f"{counts[k]} {k}" for k in ("passed", "failed", "skipped", "errors")))
for cause, names in sorted(causes.items(), key=lambda kv: -len(kv[1])):
    print(f"\n{len(names):4d}  {cause}")
    for n in names[:8]:
        print(f"        {n}")
    if len(names) > 8:
        print(f"        ... and {len(names) - 8} more")
print("\nskipped, by reason:")
for reason, n in skips.most_common():
    print(f"{n:4d}  {reason}")
PYEOF
cat "$OUT/summary.txt" | head -1
exit $rc
