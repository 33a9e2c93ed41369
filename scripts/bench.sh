#!/usr/bin/env bash
# bench.sh: the benchmark suite (benches/suite/). For every kernel it measures, in one run:
#   - ptx2llvm's cpu target: `ptx2llvm run --repeat N` on the checked-in PTX (kernel time only);
#   - the same algorithm as plain C with OpenMP (gcc -O3 -march=native -fopenmp); for the block
#     reduction that is the CUDA tree algorithm fissioned by hand (c/reduce_tree.c: the issue's
#     yardstick), for the warp-shuffle reduction the plain OpenMP sum (c/reduce.c);
#   - the same algorithm as OpenCL C on PoCL, through a small host program (installed with apt
#     when missing and running as root; the column says "n/a" when PoCL is unavailable);
# checks ptx2llvm's and PoCL's output buffers against the C output, and prints a table with the
# medians, the ratios, ptx2llvm's compile time and the check result.
#
#   bash scripts/bench.sh [--quick] [--reps N] [--only K1,K2,...] [--no-pocl]
#
#   --quick     small sizes, 2 launches: a smoke test (scripts/test.sh runs it), no timing claims
#   --reps N    timed launches per measurement (default 5; quick: 2). C and PoCL run one untimed
#               warm-up, then N. ptx2llvm runs N+1 launches and reports their median: `run` has
#               no warm-up flag, so the first launch (the warm-up, usually the slowest) is among
#               them and moves the median by at most half a rank.
#   --only L    comma-separated kernel names: vecadd saxpy reduce_block reduce_warp matmul
#               stencil histogram softmax empty
#   --no-pocl   skip the PoCL column
# Environment: PTX2LLVM (binary to use; default: build target/release/ptx2llvm with cargo),
# BENCH_CC (C compiler for the baselines, default gcc), OMP_WAIT_POLICY (for the baselines,
# default passive), BENCH_OPT (ptx2llvm -O level, default 2, the `run` default), BENCH_TIMEOUT
# (seconds per command; default 900, quick 120), BENCH_NICE (a niceness for the measured
# commands, e.g. -10 as root, to favour them over other work on a shared machine).
# Exit status: 0 when every kernel ran on ptx2llvm and matched the C output, 1 otherwise (the
# table still lists every kernel; a failing one shows its error in the check column).
# Outputs: target/bench-suite/{quick,full}/ (inputs, outputs, logs, results.md).
set -uo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT" || exit 1
SUITE="$ROOT/benches/suite"
KERNELS=(vecadd saxpy reduce_block reduce_warp matmul stencil histogram softmax empty)

QUICK=0
REPS=""
ONLY=""
USE_POCL=1
while [ $# -gt 0 ]; do
    case "$1" in
        --quick) QUICK=1 ;;
        --reps) REPS="${2:?--reps needs a number}"; shift ;;
        --reps=*) REPS="${1#--reps=}" ;;
        --only) ONLY="${2:?--only needs a list}"; shift ;;
        --only=*) ONLY="${1#--only=}" ;;
        --no-pocl) USE_POCL=0 ;;
        -h | --help) sed -n '2,/^set -uo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
        *) echo "bench.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
    esac
    shift
done
if [ -n "$REPS" ] && ! [[ "$REPS" =~ ^[1-9][0-9]*$ ]]; then
    echo "bench.sh: --reps must be a positive integer" >&2
    exit 2
fi

# shellcheck source=scripts/env.sh
source "$ROOT/scripts/env.sh"

if [ "$QUICK" = 1 ]; then
    MODE=quick
    REPS="${REPS:-2}"
    TIMEOUT="${BENCH_TIMEOUT:-120}"
    N=$((1 << 16))          # vecadd, saxpy, reductions, histogram
    MM=128                  # matmul n x n
    SW=256 SH=128           # stencil w x h
    SM_ROWS=64              # softmax rows (of 1024)
    EMPTY_REPS=100
else
    MODE=full
    REPS="${REPS:-5}"
    TIMEOUT="${BENCH_TIMEOUT:-900}"
    N=$((1 << 25))
    MM=1024
    SW=4096 SH=4096
    SM_ROWS=32768
    EMPTY_REPS=1000
fi
OPT="${BENCH_OPT:-2}"
# The OpenMP baselines sleep rather than spin at fork/join: a spinning thread on a shared
# 2-core machine keeps its own team mates off the core (12 ms instead of 0.03 ms for a small
# loop under load); on an idle machine passive waiting costs microseconds per region.
export OMP_WAIT_POLICY="${OMP_WAIT_POLICY:-passive}"
PFX=(timeout)
[ -n "${BENCH_NICE:-}" ] && PFX=(nice -n "$BENCH_NICE" timeout)
CC_BENCH="${BENCH_CC:-gcc}"
WORK="$ROOT/target/bench-suite/$MODE"
BIN="$ROOT/target/bench-suite/bin"
mkdir -p "$WORK" "$BIN"
LOG="$WORK/log.txt"
: >"$LOG"

note() { printf '%s\n' "$*" >&2; }
ms_now() { date +%s%N; }

read -r LOAD1 _ </proc/loadavg
if [ "$MODE" = full ] && awk -v l="$LOAD1" 'BEGIN { exit !(l > 0.5) }'; then
    note "bench.sh: warning: load average $LOAD1: other work on this machine skews the timings"
fi

# ---- the ptx2llvm binary ---------------------------------------------------------------------
if [ -n "${PTX2LLVM:-}" ]; then
    P2L="$PTX2LLVM"
else
    note "bench.sh: cargo build --release"
    if ! cargo build --release --quiet >>"$LOG" 2>&1; then
        note "bench.sh: cargo build --release failed (see $LOG)"
        exit 1
    fi
    P2L="$ROOT/target/release/ptx2llvm"
fi
[ -x "$P2L" ] || { note "bench.sh: no ptx2llvm binary at $P2L"; exit 1; }

# ---- tools and baselines ---------------------------------------------------------------------
# build OUT SRC LIBS CC FLAGS...: compiles SRC into $BIN/OUT (LIBS, a word list, after SRC)
# unless $BIN/OUT is newer than SRC, bench.h and this script.
build() {
    local out="$BIN/$1" src="$2" libs="$3"
    shift 3
    if [ "$out" -nt "$src" ] && [ "$out" -nt "$SUITE/c/bench.h" ] && [ "$out" -nt "$0" ]; then
        return 0
    fi
    # shellcheck disable=SC2086 # libs is a word list
    "$@" -o "$out" "$src" $libs >>"$LOG" 2>&1
}
build gen "$SUITE/tools/gen.c" "" "$CC_BENCH" -O2 || { note "bench.sh: cannot build tools/gen.c (see $LOG)"; exit 1; }
build check "$SUITE/tools/check.c" -lm "$CC_BENCH" -O2 || { note "bench.sh: cannot build tools/check.c"; exit 1; }
for c in vecadd saxpy reduce reduce_tree matmul stencil histogram softmax empty; do
    build "c_$c" "$SUITE/c/$c.c" -lm "$CC_BENCH" -O3 -march=native -fopenmp ||
        { note "bench.sh: cannot build c/$c.c with $CC_BENCH (see $LOG)"; exit 1; }
done

# ---- PoCL ------------------------------------------------------------------------------------
POCL=0
POCL_WHY="disabled (--no-pocl)"
if [ "$USE_POCL" = 1 ]; then
    have_ocl() { [ -f /usr/include/CL/cl.h ] && ls /etc/OpenCL/vendors/*pocl*.icd >/dev/null 2>&1; }
    if ! have_ocl && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
        note "bench.sh: installing PoCL (apt-get install pocl-opencl-icd ocl-icd-opencl-dev)"
        export DEBIAN_FRONTEND=noninteractive
        apt-get install -y -q pocl-opencl-icd ocl-icd-opencl-dev >>"$LOG" 2>&1 ||
            { apt-get update -q >>"$LOG" 2>&1 &&
                apt-get install -y -q pocl-opencl-icd ocl-icd-opencl-dev >>"$LOG" 2>&1; }
    fi
    if ! have_ocl; then
        POCL_WHY="not installed (needs pocl-opencl-icd and ocl-icd-opencl-dev; apt as root)"
    elif ! build ocl_host "$SUITE/opencl/ocl_host.c" -lOpenCL "$CC_BENCH" -O2; then
        POCL_WHY="cannot build opencl/ocl_host.c (see $LOG)"
    elif ! timeout 300 "$BIN/ocl_host" "$SUITE/opencl/kernels.cl" empty --global 1 --local 1 >>"$LOG" 2>&1; then
        POCL_WHY="ocl_host cannot run a kernel (see $LOG)"
    else
        POCL=1
        POCL_WHY=""
    fi
    [ "$POCL" = 1 ] || note "bench.sh: PoCL skipped: $POCL_WHY"
fi

# ---- inputs ----------------------------------------------------------------------------------
# input NAME TYPE COUNT SEED: $WORK/in/NAME (generated once per mode).
input() {
    local f="$WORK/in/$1"
    mkdir -p "$WORK/in"
    if [ ! -f "$f" ]; then "$BIN/gen" "$2" "$3" "$4" "$f" || { note "gen $1 failed"; exit 1; }; fi
    printf '%s' "$f"
}

# ---- one kernel ------------------------------------------------------------------------------
# Each case_* function sets:
#   SIZE           what the row says about the size
#   PTX KNAME GRID BLOCK SHMEM PARGS(array) PDUMP   ptx2llvm run (PDUMP: argument index to dump)
#   CCMD(array)    the C baseline, without REPS and without its output path (appended)
#   OGLOBAL OLOCAL OARGS(array) ODUMP               ocl_host
#   CHECK(array)   check mode and tolerances: (f32 RTOL ATOL) or (u32) (divisor added for atomics)
#   ACCUM          1 when launches accumulate into the output (divide by the launch count)
#   LAUNCHES       ptx2llvm --repeat count override (the empty kernel)
case_common() {
    SHMEM=0; PDUMP=""; ODUMP=""; ACCUM=0; LAUNCHES=""; CHECK=(); PARGS=(); OARGS=(); CCMD=()
}
case_vecadd() {
    local a b; a=$(input a f32 "$N" 1); b=$(input b f32 "$N" 2)
    SIZE="n=$N"; PTX="$SUITE/kernels/vecadd.ptx"; KNAME=vecadd; GRID=$((N / 256)); BLOCK=256
    PARGS=("@$a" "@$b" "zeros:$((4 * N))" "s32:$N"); PDUMP=2
    CCMD=("$BIN/c_vecadd" "$N" "$a" "$b")
    OGLOBAL=$N; OLOCAL=256; OARGS=("${PARGS[@]}"); ODUMP=2
    CHECK=(f32 0 0)
}
case_saxpy() {
    local a b; a=$(input a f32 "$N" 1); b=$(input b f32 "$N" 2)
    SIZE="n=$N"; PTX="$SUITE/kernels/saxpy.ptx"; KNAME=saxpy; GRID=$((N / 256)); BLOCK=256
    PARGS=("f32:2.5" "@$a" "@$b" "zeros:$((4 * N))" "s32:$N"); PDUMP=3
    CCMD=("$BIN/c_saxpy" "$N" 2.5 "$a" "$b")
    OGLOBAL=$N; OLOCAL=256; OARGS=("${PARGS[@]}"); ODUMP=3
    CHECK=(f32 1e-6 1e-7) # fused or unfused multiply-add
}
case_reduce() { # $1: reduce_block or reduce_warp; $2: the C baseline
    local a; a=$(input a f32 "$N" 1)
    SIZE="n=$N"; PTX="$SUITE/kernels/$1.ptx"; KNAME=$1; GRID=$((N / 256)); BLOCK=256
    PARGS=("@$a" "zeros:$((4 * N / 256))" "s32:$N"); PDUMP=1
    CCMD=("$BIN/$2" "$N" "$a")
    OGLOBAL=$N; OLOCAL=256; OARGS=("${PARGS[@]}"); ODUMP=1
    CHECK=(f32 1e-4 1e-4) # sums of 256 values in [-1, 1), in another order
}
case_reduce_block() { case_reduce reduce_block c_reduce_tree; }
case_reduce_warp() { case_reduce reduce_warp c_reduce; }
case_matmul() {
    local a b; a=$(input ma f32 $((MM * MM)) 3); b=$(input mb f32 $((MM * MM)) 4)
    SIZE="${MM}x${MM}"; PTX="$SUITE/kernels/matmul.ptx"; KNAME=matmul
    GRID="$((MM / 16)),$((MM / 16))"; BLOCK=16,16
    PARGS=("@$a" "@$b" "zeros:$((4 * MM * MM))" "s32:$MM"); PDUMP=2
    CCMD=("$BIN/c_matmul" "$MM" "$a" "$b")
    OGLOBAL="$MM,$MM"; OLOCAL=16,16; OARGS=("${PARGS[@]}"); ODUMP=2
    CHECK=(f32 1e-4 1e-4)
}
case_stencil() {
    local a; a=$(input st f32 $((SW * SH)) 5)
    SIZE="${SW}x${SH}"; PTX="$SUITE/kernels/stencil.ptx"; KNAME=stencil
    GRID="$((SW / 32)),$((SH / 8))"; BLOCK=32,8
    PARGS=("@$a" "zeros:$((4 * SW * SH))" "s32:$SW" "s32:$SH"); PDUMP=1
    CCMD=("$BIN/c_stencil" "$SW" "$SH" "$a")
    OGLOBAL="$SW,$SH"; OLOCAL=32,8; OARGS=("${PARGS[@]}"); ODUMP=1
    CHECK=(f32 1e-6 1e-6)
}
case_histogram() {
    local a; a=$(input u8 u8 "$N" 6)
    SIZE="n=$N bytes"; PTX="$SUITE/kernels/histogram.ptx"; KNAME=histogram
    GRID=$((N / 4096)); BLOCK=256 # grid-stride: 16 bytes per thread
    PARGS=("@$a" "zeros:1024" "s32:$N"); PDUMP=1
    CCMD=("$BIN/c_histogram" "$N" "$a")
    OGLOBAL=$((N / 16)); OLOCAL=256; OARGS=("${PARGS[@]}"); ODUMP=1
    CHECK=(u32); ACCUM=1
}
case_softmax() { # Triton's softmax (tests/corpus/triton/softmax.sm80.ptx): BLOCK_SIZE 1024, 4 warps
    local a; a=$(input sm f32 $((SM_ROWS * 1024)) 7)
    SIZE="${SM_ROWS}x1024"; PTX="$ROOT/tests/corpus/triton/softmax.sm80.ptx"; KNAME=softmax_kernel
    GRID=$SM_ROWS; BLOCK=128; SHMEM=16 # 4 warps x 4 bytes of reduction scratch
    # out, in, in_row_stride, out_row_stride, n_cols, global scratch, profile scratch
    PARGS=("zeros:$((4 * SM_ROWS * 1024))" "@$a" s32:1024 s32:1024 s32:1024 zeros:16 zeros:16)
    PDUMP=0
    CCMD=("$BIN/c_softmax" "$SM_ROWS" 1024 "$a")
    OGLOBAL=$((SM_ROWS * 128)); OLOCAL=128; OARGS=("${PARGS[@]:0:5}"); OKNAME=softmax; ODUMP=0
    CHECK=(f32 1e-5 1e-9) # ex2.approx
}
case_empty() {
    SIZE="1x1 thread"; PTX="$SUITE/kernels/empty.ptx"; KNAME=empty; GRID=1; BLOCK=1
    CCMD=("$BIN/c_empty"); OGLOBAL=1; OLOCAL=1; LAUNCHES=$EMPTY_REPS
}

# median_of FILE: the median from a "... median X ms ..." line.
median_of() { sed -n 's/.*median \([0-9.]*\) ms.*/\1/p' "$1" | head -n1; }
# brief FILE: the first error line, without the file name, at most 60 characters.
brief() {
    local l
    l=$(grep -m1 -i 'error\|panick\|unsupported' "$1" || head -n1 "$1")
    [ -n "$l" ] || l="no output"
    l=${l##*error: }
    l=${l//|//}
    printf '%.60s' "$l"
}
ratio() {
    awk -v a="$1" -v b="$2" 'BEGIN {
        if (a ~ /^[0-9.]+$/ && b ~ /^[0-9.]+$/ && a + 0 > 0 && b + 0 > 0) printf "%.2f", a / b
        else printf "-" }'
}

ROWS=()
FAILED=()
for k in "${KERNELS[@]}"; do
    if [ -n "$ONLY" ] && [[ ",$ONLY," != *",$k,"* ]]; then continue; fi
    case_common
    OKNAME=""
    "case_$k"
    OKNAME="${OKNAME:-$KNAME}"
    d="$WORK/$k"
    rm -rf "$d"
    mkdir -p "$d"
    note "bench.sh: $k ($SIZE)"
    t_p="-" t_c="-" t_o="-" comp="-" status="ok"
    launches="${LAUNCHES:-$((REPS + 1))}"
    creps="${LAUNCHES:-$REPS}"

    # C with OpenMP: the reference output.
    cout=()
    [ -n "$PDUMP" ] && cout=("$d/c.out")
    if "${PFX[@]}" "$TIMEOUT" "${CCMD[0]}" "$creps" "${CCMD[@]:1}" "${cout[@]}" >"$d/c.log" 2>&1; then
        t_c=$(median_of "$d/c.log")
    else
        status="C baseline failed: $(brief "$d/c.log")"
    fi

    # ptx2llvm: the launches; `run --repeat` also prints the JIT compile time.
    pargs=()
    for x in "${PARGS[@]}"; do pargs+=("--arg=$x"); done
    [ -n "$PDUMP" ] && pargs+=("--dump=$PDUMP=$d/ptx2llvm.out")
    [ "$SHMEM" != 0 ] && pargs+=(--shared-mem "$SHMEM")
    "${PFX[@]}" "$TIMEOUT" "$P2L" run "$PTX" --kernel "$KNAME" --grid "$GRID" --block "$BLOCK" \
        "-O$OPT" --repeat "$launches" "${pargs[@]}" >"$d/ptx2llvm.log" 2>&1
    rc=$?
    if [ "$rc" = 0 ]; then
        t_p=$(median_of "$d/ptx2llvm.log")
        comp=$(sed -n 's/^compile time: \([0-9.]*\) ms.*/\1/p' "$d/ptx2llvm.log" | head -n 1)
        [ -n "$comp" ] && comp=$(awk -v c="$comp" 'BEGIN { printf "%.0f", c }')
        if [ -n "$PDUMP" ] && [ -f "$d/c.out" ]; then
            div=()
            [ "$ACCUM" = 1 ] && div=("$launches")
            if ! "$BIN/check" "${CHECK[0]}" "$d/ptx2llvm.out" "$d/c.out" "${CHECK[@]:1}" "${div[@]}" >"$d/check.log" 2>&1; then
                status="WRONG: $(head -c 70 "$d/check.log")"
            fi
        fi
    elif [ "$rc" = 124 ]; then
        status="FAIL: timed out after ${TIMEOUT}s"
    else
        status="FAIL: $(brief "$d/ptx2llvm.log")"
    fi
    [ "$status" = ok ] || FAILED+=("$k")
    status=${status//|//}

    # PoCL.
    if [ "$POCL" = 1 ]; then
        oargs=()
        for x in "${OARGS[@]}"; do oargs+=(--arg "$x"); done
        [ -n "$ODUMP" ] && oargs+=(--dump "$ODUMP=$d/pocl.out")
        if "${PFX[@]}" "$TIMEOUT" "$BIN/ocl_host" "$SUITE/opencl/kernels.cl" "$OKNAME" --global "$OGLOBAL" \
            --local "$OLOCAL" --repeat "$creps" "${oargs[@]}" >"$d/pocl.log" 2>&1; then
            t_o=$(median_of "$d/pocl.log")
            if [ -n "$ODUMP" ] && [ -f "$d/c.out" ]; then
                div=()
                [ "$ACCUM" = 1 ] && div=($((creps + 1)))
                if ! "$BIN/check" "${CHECK[0]}" "$d/pocl.out" "$d/c.out" "${CHECK[@]:1}" "${div[@]}" >"$d/pocl-check.log" 2>&1; then
                    status="$status; PoCL WRONG: $(head -c 50 "$d/pocl-check.log")"
                fi
            fi
        else
            t_o="error"
            status="$status; PoCL failed: $(brief "$d/pocl.log")"
        fi
    else
        t_o="n/a"
    fi
    name=$k
    [ "$k" = empty ] && name="empty (launch overhead)"
    [ "$k" = softmax ] && name="softmax (Triton)"
    ROWS+=("| $name | $SIZE | $t_p | $t_c | $t_o | $(ratio "$t_p" "$t_c") | $(ratio "$t_p" "$t_o") | $comp | $status |")
done

{
    echo "ptx2llvm benchmark suite ($MODE): $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
    echo "ptx2llvm -O$OPT${BENCH_NICE:+ (nice $BENCH_NICE)} $(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null)$(git -C "$ROOT" diff --quiet HEAD -- src 2>/dev/null || echo '+dirty'); C: $CC_BENCH -O3 -march=native -fopenmp, OMP_WAIT_POLICY=$OMP_WAIT_POLICY; PoCL: $([ "$POCL" = 1 ] && dpkg-query -W -f='${Version}' pocl-opencl-icd 2>/dev/null || echo "$POCL_WHY")"
    echo "times: median ms (C, PoCL: $REPS runs after a warm-up; ptx2llvm: $((REPS + 1)) launches, the first one the warm-up; empty: $EMPTY_REPS launches); compile: ms from the parsed module to JIT-compiled code at -O$OPT (lowering, optimization, code generation), as run --repeat reports it"
    echo
    echo "| kernel | size | ptx2llvm cpu | C+OpenMP | PoCL | ptx2llvm/C | ptx2llvm/PoCL | compile | check |"
    echo "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | --- |"
    printf '%s\n' "${ROWS[@]}"
} | tee "$WORK/results.md"

if [ "${#FAILED[@]}" -gt 0 ]; then
    echo "bench.sh: FAILED: ${FAILED[*]} (logs in $WORK/<kernel>/)"
    exit 1
fi
echo "bench.sh: all ${#ROWS[@]} kernels ran and matched the C baseline"
