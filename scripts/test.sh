#!/usr/bin/env bash
# test.sh: README command #2, and what CI runs (.ci/run). Installs what is missing
# (scripts/setup.sh), then checks the whole project:
#   1. cargo fmt --check                       formatting
#   2. cargo clippy --release --workspace --all-targets -- -D warnings   lints (tests included)
#   3. cargo build --release                   the ptx2llvm binary that lit uses
#   4. cargo test --release                    unit, integration and doc tests, then the
#      execution suite again with PTX2LLVM_CPU_MODE=coroutine (the general path)
#   5. lit -v lit/                             the RUN/CHECK tests over .ptx files
#   6. examples/cmake-project                  the CMake package: configure, build, run (PASS)
#   7. numba kernels                           numba-cuda programs, unchanged, on this build's
#      libcuda.so.1 (cuda/tests/python/numba_kernels.py with LD_LIBRARY_PATH=target/release/cuda)
#   8. triton kernels                          Triton tutorial kernels compiled and launched by
#      Triton itself on that library (cuda/tests/python/triton_kernels.py, scripts/ptxas-standin)
#   9. bench.sh --quick                        every benchmark kernel at small sizes, outputs
#      checked against C (and PoCL), then again on clang's PTX of the same sources (--ptx clang)
# Every step runs even when an earlier one failed (except lit, which needs the build), so one
# run shows all the problems. Set FAIL_FAST=1 to stop at the first failure instead.
# Exits non-zero when any step failed; the last lines summarize the steps and count the tests.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

bash scripts/setup.sh
# shellcheck source=scripts/env.sh
source scripts/env.sh

LOGS="$ROOT/target/test-logs"
mkdir -p "$LOGS"
results=()
failed_steps=()

# step NAME LOG COMMAND...: runs COMMAND under a header, its output shown and kept in LOG.
step() {
    local name="$1" log="$LOGS/$2"
    shift 2
    printf '\n==== %s ====\n$ %s\n' "$name" "$*"
    local start=$SECONDS
    if "$@" 2>&1 | tee "$log"; then
        results+=("ok      $name ($((SECONDS - start))s)")
        return 0
    fi
    results+=("FAILED  $name ($((SECONDS - start))s)")
    failed_steps+=("$name")
    if [ "${FAIL_FAST:-0}" = 1 ]; then
        summary
        exit 1
    fi
    return 1
}

# Adds up the test counts that cargo test and lit printed: prints "PASSED FAILED".
count_tests() {
    cat "$LOGS/cargo-test.log" "$LOGS/cargo-test-coroutine.log" "$LOGS/lit.log" "$LOGS/numba.log" "$LOGS/triton.log" 2>/dev/null | awk '
        /^test result: / { p += $4; f += $6 }
        /^(numba|triton) kernels: [0-9]+ passed, [0-9]+ failed/ { p += $3; f += $5 }
        /^ *Passed *: [0-9]/ { split($0, a, ":"); p += a[2] + 0 }
        /^ *(Failed|Unresolved|Timed Out|Unexpectedly Passed) *: [0-9]/ { split($0, a, ":"); f += a[2] + 0 }
        END { printf "%d %d\n", p, f }'
}

summary() {
    printf '\n==== summary ====\n'
    printf '  %s\n' "${results[@]}"
    local counts
    counts=$(count_tests)
    if [ "${#failed_steps[@]}" -eq 0 ]; then
        echo "test.sh: all ${#results[@]} steps passed"
    else
        local joined
        printf -v joined '%s, ' "${failed_steps[@]}"
        echo "test.sh: FAILED steps: ${joined%, }"
    fi
    echo "tests: ${counts% *} passed, ${counts#* } failed"
}

rm -f "$LOGS"/*.log
step "cargo fmt --check" fmt.log cargo fmt --check || true
step "cargo clippy" clippy.log cargo clippy --release --workspace --all-targets -- -D warnings || true
if step "cargo build" build.log cargo build --release; then
    built=1
else
    built=0
fi
step "cargo test" cargo-test.log cargo test --release --no-fail-fast || true
# The execution suite again with every kernel on the general path (one coroutine per CUDA thread):
# thread loops (the default) and coroutines must give the same, reference, answers. The
# instruction tests run there too: coroutine code stays scalar, thread loops are vectorized.
step "cargo test (coroutine path)" cargo-test-coroutine.log env PTX2LLVM_CPU_MODE=coroutine \
    cargo test --release --no-fail-fast --test cpu_corpus --test cpu_hard --test cpu_run \
    --test cpu_instr_int --test cpu_instr_float --test cpu_instr_cvt || true
if [ "$built" = 1 ]; then
    step "lit" lit.log lit -v lit/ || true
else
    results+=("SKIPPED lit (the build failed)")
    failed_steps+=("lit")
fi
# The CMake package: examples/cmake-project builds two PTX files with ptx2llvm_add_kernels against
# this build (cmake/ptx2llvmConfig.cmake, target/release) and checks their results.
if [ "$built" = 1 ]; then
    step "cmake example" cmake-example.log bash -c 'cmake -S examples/cmake-project -B target/cmake-example -Dptx2llvm_DIR="$PWD/cmake" && cmake --build target/cmake-example && ./target/cmake-example/cmake_example' || true
else
    results+=("SKIPPED cmake example (the build failed)")
    failed_steps+=("cmake example")
fi
# The CUDA driver for CPUs under a real client: numba-cuda compiles kernels to PTX and loads,
# links and launches them through target/release/cuda/libcuda.so.1.
if [ "$built" = 1 ]; then
    step "numba kernels" numba.log env LD_LIBRARY_PATH="$ROOT/target/release/cuda" \
        PTX2LLVM_CUDA_LOG=stderr "$ROOT/.venv/bin/python" -W ignore \
        cuda/tests/python/numba_kernels.py || true
else
    results+=("SKIPPED numba kernels (the build failed)")
    failed_steps+=("numba kernels")
fi
# Triton launched by Triton: its compiler runs scripts/ptxas-standin as ptxas (the PTX is the
# "cubin") and its launcher, built against TRITON_LIBCUDA_PATH, calls this libcuda.so.1. A fresh
# Triton cache each run, so that the compile path runs too.
if [ "$built" = 1 ]; then
    TRITON_CACHE="$(mktemp -d)"
    step "triton kernels" triton.log env LD_LIBRARY_PATH="$ROOT/target/release/cuda" \
        TRITON_LIBCUDA_PATH="$ROOT/target/release/cuda" \
        TRITON_PTXAS_PATH="$ROOT/scripts/ptxas-standin" TRITON_CACHE_DIR="$TRITON_CACHE" \
        PTX2LLVM_CUDA_LOG=stderr "$ROOT/.venv/bin/python" -W ignore \
        cuda/tests/python/triton_kernels.py || true
    rm -rf "$TRITON_CACHE"
else
    results+=("SKIPPED triton kernels (the build failed)")
    failed_steps+=("triton kernels")
fi
# Smoke test of the benchmark suite: every kernel on ptx2llvm, C/OpenMP and PoCL at small sizes.
step "bench --quick" bench-quick.log bash scripts/bench.sh --quick || true
# The same kernels compiled by clang instead of NVRTC: another compiler's PTX, outputs checked.
step "bench --quick --ptx clang" bench-quick-clang.log \
    bash scripts/bench.sh --quick --ptx clang --no-pocl || true

summary
[ "${#failed_steps[@]}" -eq 0 ]
