#!/usr/bin/env bash
# bench.sh: the benchmark suite (benches/suite/). For every kernel it measures, in one run:
#   - ptx2llvm's cpu target: `ptx2llvm run --repeat N` on the checked-in PTX (kernel time only),
#     and the JIT compile time `run` reports (parsed module to machine code, at -O$BENCH_OPT);
#   - the same computation as C with OpenMP, written as an expert writes it for this CPU (each
#     c/*.c names its technique at the top), gcc -O3 -march=native -mprefer-vector-width=512
#     -fno-math-errno -fopenmp;
#   - the same algorithm as OpenCL C on PoCL (opencl/kernels.cl), through a small host program
#     (installed with apt when missing and running as root; "n/a" when PoCL is unavailable);
# checks ptx2llvm's and PoCL's output buffers against the C output (a mismatch fails the run),
# and repeats the whole pass --runs times. Each ratio is taken within one pass (the three
# programs run back to back), and the table gives per kernel the median ratio over the passes
# with its spread (min-max), then the geometric mean of the median ratios. A second ratio,
# ptx2llvm/C CPU, divides the two programs' process CPU time per launch (C's bench.h and
# `run --repeat` print it): the machine is shared, and a program that loses a core for a while
# loses wall time but not CPU time, so that ratio is the steadier one under load (idle threads
# sleep in both programs: OMP_WAIT_POLICY is passive by default, the runtime's pool waits on a
# condition variable).
#
#   bash scripts/bench.sh [--quick] [--runs R] [--reps N] [--only K1,K2,...] [--no-pocl] [--report]
#
#   --quick     small sizes, 1 pass, 2 launches: a smoke test (scripts/test.sh runs it): every
#               output is still checked, the times mean nothing
#   --runs R    full passes over the suite (default 3; quick: 1)
#   --reps N    timed launches per measurement (default 5; quick: 2). C, PoCL and ptx2llvm
#               (`run --warmup 1`) run one untimed warm-up, then N, and report their median: a
#               warm-up among the timed launches (its page faults on fresh buffers make it the
#               slowest) moved ptx2llvm's median of N+1 by half a rank, so that one launch slowed
#               by another process (a vCPU taken for its whole length: twice the time) moved it
#               to the mean of a fast and a slow launch, which C's median of N did not see.
#   --only L    comma-separated kernel names (see KERNELS below; `--only list` prints them)
#   --no-pocl   skip the PoCL column
#   --set S     suite (default) or variants: held-out kernels (benches/suite/variants/) written in
#               other common CUDA styles that compute what a suite kernel computes, so each reuses
#               that kernel's C baseline, input and check; their ratio shows whether the engine's
#               speed carries over to code it was not tuned on (no PoCL version: n/a)
#   --report    measure nothing: print the table again from the mode's last times.tsv (rows of
#               several invocations, e.g. an --only run appended to it, are summarized together)
#   --ptx C     nvcc (default): the checked-in PTX (NVRTC's); clang: the same CUDA sources
#               compiled to PTX by clang (BENCH_CLANG, default clang-22; sm_80, -O3, libdevice
#               from the .venv's nvidia-nvvm or BENCH_LIBDEVICE; benches/suite/tools/clang_cuda.h
#               stands in for the CUDA headers), into $WORK/ptx: another compiler's shapes of the
#               same kernels (Triton's two kernels keep Triton's PTX). Results go to
#               target/bench-suite/MODE[-variants]-clang/, inputs are shared with the nvcc runs.
# Environment: PTX2LLVM (binary to use; default: build target/release/ptx2llvm with cargo),
# BENCH_CC (C compiler for the baselines, default gcc), OMP_WAIT_POLICY (for the baselines,
# default passive), BENCH_OPT (ptx2llvm -O level, default 2, the `run` default), BENCH_TIMEOUT
# (seconds per command; default 900, quick 300), BENCH_NICE (a niceness for the measured
# commands, e.g. -10 as root, to favour them over other work on a shared machine).
# Exit status: 0 when every kernel ran on ptx2llvm and matched the C output in every pass, 1
# otherwise (the table still lists every kernel; a failing one shows its error in the check
# column and the script prints FAILED).
# Outputs: target/bench-suite/{quick,full}/ (inputs, per-pass logs and times, results.md).
set -uo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT" || exit 1
SUITE="$ROOT/benches/suite"
KERNELS=(vecadd saxpy reduce_block reduce_warp reduce_halving reduce_gridstride matmul stencil
    histogram softmax matmul_fp16 softmax_warp layernorm transpose scan conv3x3 nbody spmv_thread
    spmv_warp blackscholes mandelbrot bitonic empty)
VARIANTS=(vecadd_f4 reduce_cub histogram_global layernorm_warp softmax_block particles matmul_naive
    transpose_naive conv3x3_naive gemv_row)

QUICK=0
REPS=""
RUNS=""
ONLY=""
USE_POCL=1
REPORT=0
SET=suite
PTX_FROM=nvcc
while [ $# -gt 0 ]; do
    case "$1" in
        --quick) QUICK=1 ;;
        --reps) REPS="${2:?--reps needs a number}"; shift ;;
        --reps=*) REPS="${1#--reps=}" ;;
        --runs) RUNS="${2:?--runs needs a number}"; shift ;;
        --runs=*) RUNS="${1#--runs=}" ;;
        --only) ONLY="${2:?--only needs a list}"; shift ;;
        --only=*) ONLY="${1#--only=}" ;;
        --no-pocl) USE_POCL=0 ;;
        --set) SET="${2:?--set needs suite or variants}"; shift ;;
        --set=*) SET="${1#--set=}" ;;
        --report) REPORT=1 ;;
        --ptx) PTX_FROM="${2:?--ptx needs nvcc or clang}"; shift ;;
        --ptx=*) PTX_FROM="${1#--ptx=}" ;;
        -h | --help) sed -n '2,/^set -uo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
        *) echo "bench.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
    esac
    shift
done
case "$PTX_FROM" in
    nvcc | clang) ;;
    *) echo "bench.sh: --ptx takes nvcc or clang" >&2; exit 2 ;;
esac
case "$SET" in
    suite) ;;
    variants) KERNELS=("${VARIANTS[@]}") ;;
    *) echo "bench.sh: --set takes suite or variants" >&2; exit 2 ;;
esac
if [ "$ONLY" = list ]; then
    printf '%s\n' "${KERNELS[@]}"
    exit 0
fi
for v in "$REPS" "$RUNS"; do
    if [ -n "$v" ] && ! [[ "$v" =~ ^[1-9][0-9]*$ ]]; then
        echo "bench.sh: --reps and --runs take a positive integer" >&2
        exit 2
    fi
done
if [ -n "$ONLY" ]; then
    for k in ${ONLY//,/ }; do
        [[ " ${KERNELS[*]} " == *" $k "* ]] || { echo "bench.sh: no kernel named $k (--only list)" >&2; exit 2; }
    done
fi

# shellcheck source=scripts/env.sh
source "$ROOT/scripts/env.sh"

if [ "$QUICK" = 1 ]; then
    MODE=quick
    REPS="${REPS:-2}"
    RUNS="${RUNS:-1}"
    TIMEOUT="${BENCH_TIMEOUT:-300}" # softmax_warp compiles for up to a minute on a loaded machine
    N=$((1 << 16))          # vecadd, saxpy, the per-block reductions, histogram, softmax input
    N2=$((1 << 16))         # the reductions into one sum, the scan
    MM=128                  # matmul n x n
    MH=256                  # Triton's fp16 matmul n x n x n
    SW=256 SH=128           # stencil w x h
    SM_ROWS=64              # softmax rows (of 1024)
    LN_ROWS=64              # layernorm rows (of 1024)
    IW=128 IH=64            # conv3x3 w x h; transpose: IH rows x IW cols
    NB=512                  # n-body bodies
    SP_ROWS=4096            # SpMV rows (= columns)
    NBS=$((1 << 14))        # Black-Scholes options
    MW=128                  # Mandelbrot MW x MW
    NS=$((1 << 14))         # bitonic: floats sorted in segments of 1024
    EMPTY_REPS=100
else
    MODE=full
    REPS="${REPS:-5}"
    RUNS="${RUNS:-3}"
    TIMEOUT="${BENCH_TIMEOUT:-900}"
    N=$((1 << 25))
    N2=$((1 << 26))
    MM=1536
    MH=512
    SW=4096 SH=4096
    SM_ROWS=32768
    LN_ROWS=40960
    IW=8192 IH=6144
    NB=8192
    SP_ROWS=$((1 << 19))
    NBS=$((1 << 22))
    MW=1024
    NS=$((1 << 23))
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
# -mprefer-vector-width=512: gcc uses 256-bit vectors on AVX-512 CPUs unless told (the register
# -tiled SGEMM runs 1.3x faster with 512); -fno-math-errno: sqrtf in a vector loop otherwise
# keeps a scalar branch to set errno (no value changes).
CFLAGS_BENCH=(-O3 -march=native -mprefer-vector-width=512 -fno-math-errno -fopenmp)
WORK="$ROOT/target/bench-suite/$MODE"
[ "$SET" = variants ] && WORK="$WORK-variants"
IN_DIR="$WORK/in" # inputs: one set per mode and set, whichever compiler made the PTX
[ "$PTX_FROM" = clang ] && WORK="$WORK-clang"
BIN="$ROOT/target/bench-suite/bin"
mkdir -p "$WORK" "$BIN"
LOG="$WORK/log.txt"
[ "$REPORT" = 1 ] || : >"$LOG"

note() { printf '%s\n' "$*" >&2; }

read -r LOAD1 _ </proc/loadavg
if [ "$MODE" = full ] && awk -v l="$LOAD1" 'BEGIN { exit !(l > 0.5) }'; then
    note "bench.sh: warning: load average $LOAD1: other work on this machine skews the timings"
fi

# ---- clang, for --ptx clang --------------------------------------------------------------------
if [ "$PTX_FROM" = clang ] && [ "$REPORT" = 0 ]; then
    CLANG="${BENCH_CLANG:-clang-22}"
    command -v "$CLANG" >/dev/null ||
        { note "bench.sh: --ptx clang needs $CLANG (apt install clang-22, or set BENCH_CLANG)"; exit 1; }
    LIBDEVICE="${BENCH_LIBDEVICE:-$(ls "$ROOT"/.venv/lib/python3*/site-packages/nvidia/cu13/nvvm/libdevice/libdevice.10.bc 2>/dev/null | head -1)}"
    [ -f "$LIBDEVICE" ] ||
        { note "bench.sh: --ptx clang needs libdevice.10.bc (pip install nvidia-nvvm into .venv, or set BENCH_LIBDEVICE)"; exit 1; }
    rm -rf "$WORK/ptx" # compiled again by this invocation's clang
fi

# ---- the ptx2llvm binary ---------------------------------------------------------------------
if [ "$REPORT" = 1 ]; then
    P2L=/bin/true # not run
elif [ -n "${PTX2LLVM:-}" ]; then
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
# unless $BIN/OUT is newer than SRC, the shared headers and this script.
build() {
    local out="$BIN/$1" src="$2" libs="$3"
    shift 3
    if [ "$out" -nt "$src" ] && [ "$out" -nt "$SUITE/c/bench.h" ] && [ "$out" -nt "$SUITE/c/vmath.h" ] &&
        [ "$out" -nt "$SUITE/c/sgemm.h" ] &&
        [ "$out" -nt "$0" ]; then
        return 0
    fi
    # shellcheck disable=SC2086 # libs is a word list
    "$@" -o "$out" "$src" $libs >>"$LOG" 2>&1
}
build gen "$SUITE/tools/gen.c" "" "$CC_BENCH" -O2 || { note "bench.sh: cannot build tools/gen.c (see $LOG)"; exit 1; }
build check "$SUITE/tools/check.c" -lm "$CC_BENCH" -O2 || { note "bench.sh: cannot build tools/check.c"; exit 1; }
for src in "$SUITE"/c/*.c; do
    c=$(basename "$src" .c)
    build "c_$c" "$src" -lm "$CC_BENCH" "${CFLAGS_BENCH[@]}" ||
        { note "bench.sh: cannot build c/$c.c with $CC_BENCH (see $LOG)"; exit 1; }
done

# ---- PoCL ------------------------------------------------------------------------------------
POCL=0
POCL_WHY="disabled (--no-pocl)"
if [ "$USE_POCL" = 1 ] && [ "$REPORT" = 0 ]; then
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
# input NAME TYPE COUNT SEED [LO HI]: $IN_DIR/NAME.TYPE-COUNT-SEED[-LO-HI] (generated once).
input() {
    local name=$1 key
    shift
    # The file is named by everything that makes it, so a size changed in this script (or by
    # --quick) never reuses an input made for another size.
    key=$(printf '%s-' "$@"); key=${key%-}; key=${key//[^A-Za-z0-9._-]/_}
    local f="$IN_DIR/$name.$key"
    mkdir -p "$IN_DIR"
    if [ ! -f "$f" ]; then "$BIN/gen" "$1" "$2" "$3" "$f" "${@:4}" || { note "gen $name failed"; exit 1; }; fi
    printf '%s' "$f"
}
# csr_input NAME ROWS SEED: the prefix of $IN_DIR/NAME.{rowptr,col,val}.
csr_input() {
    local f="$IN_DIR/$1.$2.$3"
    mkdir -p "$IN_DIR"
    if [ ! -f "$f.val" ]; then "$BIN/gen" csr "$2" "$3" "$f" || { note "gen $1 failed"; exit 1; }; fi
    printf '%s' "$f"
}

# ---- the kernels -----------------------------------------------------------------------------
# Each case_* function sets:
#   SIZE           what the row says about the size
#   PTX KNAME GRID BLOCK SHMEM PARGS(array)   ptx2llvm run
#   PDUMP(array)   the argument indices of the outputs, compared in order with the C outputs
#   CCMD(array)    the C baseline, without REPS and without its output paths (appended, one per
#                  PDUMP entry)
#   OGLOBAL OLOCAL OARGS(array) ODUMP(array) OKNAME   ocl_host (ODUMP: as PDUMP; OKNAME=none:
#                  no OpenCL version, the PoCL column says n/a)
#   CHECK(array)   check mode and tolerances: (f32 RTOL ATOL), (u32) or (u32 1 FRAC)
#   ACCUM          1 when launches accumulate into the output (the check divides by the count)
#   LAUNCHES       ptx2llvm --repeat count override (the empty kernel)
case_common() {
    SHMEM=0; ACCUM=0; LAUNCHES=""; OKNAME=""; CHECK=(); PARGS=(); OARGS=(); CCMD=()
    PDUMP=(); ODUMP=()
}
case_vecadd() {
    local a b; a=$(input a f32 "$N" 1); b=$(input b f32 "$N" 2)
    SIZE="n=$N"; PTX="$SUITE/kernels/vecadd.ptx"; KNAME=vecadd; GRID=$((N / 256)); BLOCK=256
    PARGS=("@$a" "@$b" "zeros:$((4 * N))" "s32:$N"); PDUMP=(2)
    CCMD=("$BIN/c_vecadd" "$N" "$a" "$b")
    OGLOBAL=$N; OLOCAL=256; OARGS=("${PARGS[@]}"); ODUMP=(2)
    CHECK=(f32 0 0)
}
case_saxpy() {
    local a b; a=$(input a f32 "$N" 1); b=$(input b f32 "$N" 2)
    SIZE="n=$N"; PTX="$SUITE/kernels/saxpy.ptx"; KNAME=saxpy; GRID=$((N / 256)); BLOCK=256
    PARGS=("f32:2.5" "@$a" "@$b" "zeros:$((4 * N))" "s32:$N"); PDUMP=(3)
    CCMD=("$BIN/c_saxpy" "$N" 2.5 "$a" "$b")
    OGLOBAL=$N; OLOCAL=256; OARGS=("${PARGS[@]}"); ODUMP=(3)
    CHECK=(f32 1e-6 1e-7) # fused or unfused multiply-add
}
case_reduce() { # $1: reduce_block or reduce_warp: one partial sum per 256 values
    local a; a=$(input a f32 "$N" 1)
    SIZE="n=$N"; PTX="$SUITE/kernels/$1.ptx"; KNAME=$1; GRID=$((N / 256)); BLOCK=256
    PARGS=("@$a" "zeros:$((4 * N / 256))" "s32:$N"); PDUMP=(1)
    CCMD=("$BIN/c_reduce" "$N" "$a")
    OGLOBAL=$N; OLOCAL=256; OARGS=("${PARGS[@]}"); ODUMP=(1)
    CHECK=(f32 1e-4 1e-4) # sums of 256 values in [-1, 1), in another order
}
case_reduce_block() { case_reduce reduce_block; }
case_reduce_warp() { case_reduce reduce_warp; }
# The two reductions into one float: the launches accumulate (atomicAdd) and the check divides
# by their count. The sum of n values in [-1, 1) is about sqrt(n/3) in size; the float atomics
# round it at every block, in an order that differs from run to run: ATOL 2 passes that and
# still catches lost blocks (each block's sum has a standard deviation of 9).
case_reduce_halving() {
    local a; a=$(input a2 f32 "$N2" 21)
    SIZE="n=$N2"; PTX="$SUITE/kernels/reduce_halving.ptx"; KNAME=reduce_halving
    GRID=$((N2 / 256)); BLOCK=256; SHMEM=1024
    PARGS=("@$a" "zeros:4" "s32:$N2"); PDUMP=(1)
    CCMD=("$BIN/c_reduce_sum" "$N2" "$a")
    OGLOBAL=$N2; OLOCAL=256; OARGS=("@$a" "zeros:4" "local:1024" "s32:$N2"); ODUMP=(1)
    CHECK=(f32 0 2); ACCUM=1
}
case_reduce_gridstride() {
    local a g; a=$(input a2 f32 "$N2" 21); g=$((N2 / 256 < 1024 ? N2 / 256 : 1024))
    SIZE="n=$N2, $g blocks"; PTX="$SUITE/kernels/reduce_gridstride.ptx"; KNAME=reduce_gridstride
    GRID=$g; BLOCK=256
    PARGS=("@$a" "zeros:4" "s32:$N2"); PDUMP=(1)
    CCMD=("$BIN/c_reduce_sum" "$N2" "$a")
    OGLOBAL=$((g * 256)); OLOCAL=256; OARGS=("${PARGS[@]}"); ODUMP=(1)
    CHECK=(f32 0 2); ACCUM=1
}
case_matmul() {
    local a b; a=$(input ma f32 $((MM * MM)) 3); b=$(input mb f32 $((MM * MM)) 4)
    SIZE="${MM}x${MM}"; PTX="$SUITE/kernels/matmul.ptx"; KNAME=matmul
    GRID="$((MM / 16)),$((MM / 16))"; BLOCK=16,16
    PARGS=("@$a" "@$b" "zeros:$((4 * MM * MM))" "s32:$MM"); PDUMP=(2)
    CCMD=("$BIN/c_matmul" "$MM" "$a" "$b")
    OGLOBAL="$MM,$MM"; OLOCAL=16,16; OARGS=("${PARGS[@]}"); ODUMP=(2)
    CHECK=(f32 1e-4 1e-4)
}
case_stencil() {
    local a; a=$(input st f32 $((SW * SH)) 5)
    SIZE="${SW}x${SH}"; PTX="$SUITE/kernels/stencil.ptx"; KNAME=stencil
    GRID="$((SW / 32)),$((SH / 8))"; BLOCK=32,8
    PARGS=("@$a" "zeros:$((4 * SW * SH))" "s32:$SW" "s32:$SH"); PDUMP=(1)
    CCMD=("$BIN/c_stencil" "$SW" "$SH" "$a")
    OGLOBAL="$SW,$SH"; OLOCAL=32,8; OARGS=("${PARGS[@]}"); ODUMP=(1)
    CHECK=(f32 1e-6 1e-6)
}
case_histogram() {
    local a; a=$(input u8 u8 "$N" 6)
    SIZE="n=$N bytes"; PTX="$SUITE/kernels/histogram.ptx"; KNAME=histogram
    GRID=$((N / 4096)); BLOCK=256 # grid-stride: 16 bytes per thread
    PARGS=("@$a" "zeros:1024" "s32:$N"); PDUMP=(1)
    CCMD=("$BIN/c_histogram" "$N" "$a")
    OGLOBAL=$((N / 16)); OLOCAL=256; OARGS=("${PARGS[@]}"); ODUMP=(1)
    CHECK=(u32); ACCUM=1
}
case_softmax() { # Triton's softmax (tests/corpus/triton/softmax.sm80.ptx): BLOCK_SIZE 1024, 4 warps
    local a; a=$(input sm f32 $((SM_ROWS * 1024)) 7)
    SIZE="${SM_ROWS}x1024"; PTX="$ROOT/tests/corpus/triton/softmax.sm80.ptx"; KNAME=softmax_kernel
    GRID=$SM_ROWS; BLOCK=128; SHMEM=16 # 4 warps x 4 bytes of reduction scratch
    # out, in, in_row_stride, out_row_stride, n_cols, global scratch, profile scratch
    PARGS=("zeros:$((4 * SM_ROWS * 1024))" "@$a" s32:1024 s32:1024 s32:1024 zeros:16 zeros:16)
    PDUMP=(0)
    CCMD=("$BIN/c_softmax" "$SM_ROWS" 1024 "$a")
    OGLOBAL=$((SM_ROWS * 128)); OLOCAL=128; OARGS=("${PARGS[@]:0:5}"); OKNAME=softmax; ODUMP=(0)
    CHECK=(f32 1e-5 1e-9) # ex2.approx
}
# Triton's fp16 matmul (tests/corpus/triton/matmul_fp16.sm80.ptx, made by triton_gen.py there:
# 128x128x32 tiles, 4 warps, 3 stages, ldmatrix + mma.sync) against the float32 SGEMM of the
# same shape (what numpy's float32 matmul does); no OpenCL version.
case_matmul_fp16() {
    local a b; a=$(input ha f16 $((MH * MH)) 31); b=$(input hb f16 $((MH * MH)) 32)
    SIZE="${MH}x${MH}x${MH}"; PTX="$ROOT/tests/corpus/triton/matmul_fp16.sm80.ptx"; KNAME=matmul_kernel
    GRID="$((MH / 128)),$((MH / 128))"; BLOCK=128; SHMEM=98304
    # a, b, c, M, N, K, stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn, 2 scratch
    PARGS=("@$a" "@$b" "zeros:$((2 * MH * MH))" "s32:$MH" "s32:$MH" "s32:$MH" "s32:$MH" s32:1
        "s32:$MH" s32:1 "s32:$MH" s32:1 zeros:16 zeros:16)
    PDUMP=(2)
    CCMD=("$BIN/c_matmul_f16" "$MH" "$a" "$b")
    OKNAME=none
    CHECK=(f16 2e-3 1e-2) # fp16 output rounding (half an ulp is 0.004 at 8)
}
case_softmax_warp() {
    local a; a=$(input sm f32 $((SM_ROWS * 1024)) 7)
    SIZE="${SM_ROWS}x1024"; PTX="$SUITE/kernels/softmax_warp.ptx"; KNAME=softmax_warp
    GRID=$((SM_ROWS / 4)); BLOCK=128
    PARGS=("@$a" "zeros:$((4 * SM_ROWS * 1024))" "s32:$SM_ROWS" s32:1024); PDUMP=(1)
    CCMD=("$BIN/c_softmax" "$SM_ROWS" 1024 "$a")
    OGLOBAL=$((SM_ROWS * 32)); OLOCAL=128; OARGS=("${PARGS[@]}"); ODUMP=(1)
    CHECK=(f32 1e-5 1e-9)
}
case_layernorm() {
    local a g b; a=$(input ln f32 $((LN_ROWS * 1024)) 18); g=$(input gamma f32 1024 8 0.5 1.5)
    b=$(input beta f32 1024 9)
    SIZE="${LN_ROWS}x1024"; PTX="$SUITE/kernels/layernorm.ptx"; KNAME=layernorm
    GRID=$LN_ROWS; BLOCK=256
    PARGS=("@$a" "@$g" "@$b" "zeros:$((4 * LN_ROWS * 1024))" s32:1024 f32:1e-5); PDUMP=(3)
    CCMD=("$BIN/c_layernorm" "$LN_ROWS" 1024 1e-5 "$a" "$g" "$b")
    OGLOBAL=$((LN_ROWS * 256)); OLOCAL=256; OARGS=("${PARGS[@]}"); ODUMP=(3)
    CHECK=(f32 1e-4 1e-4) # rsqrt.approx against 1/sqrtf
}
case_transpose() { # IH rows x IW columns
    local a; a=$(input img f32 $((IW * IH)) 10)
    SIZE="${IH}x${IW}"; PTX="$SUITE/kernels/transpose.ptx"; KNAME=transpose
    GRID="$((IW / 32)),$((IH / 32))"; BLOCK=32,8
    PARGS=("@$a" "zeros:$((4 * IW * IH))" "s32:$IH" "s32:$IW"); PDUMP=(1)
    CCMD=("$BIN/c_transpose" "$IH" "$IW" "$a")
    OGLOBAL="$IW,$((IH / 4))"; OLOCAL=32,8; OARGS=("${PARGS[@]}"); ODUMP=(1)
    CHECK=(f32 0 0)
}
case_scan() {
    local a; a=$(input a2 f32 "$N2" 21)
    SIZE="n=$N2, segments of 256"; PTX="$SUITE/kernels/scan.ptx"; KNAME=scan
    GRID=$((N2 / 256)); BLOCK=256
    PARGS=("@$a" "zeros:$((4 * N2))" "zeros:$((4 * N2 / 256))" "s32:$N2"); PDUMP=(1 2)
    CCMD=("$BIN/c_scan" "$N2" 256 "$a")
    OGLOBAL=$N2; OLOCAL=256; OARGS=("${PARGS[@]}"); ODUMP=(1 2)
    CHECK=(f32 1e-4 1e-4)
}
case_conv3x3() {
    local a w; a=$(input img f32 $((IW * IH)) 10); w=$(input wt f32 9 11)
    SIZE="${IW}x${IH}"; PTX="$SUITE/kernels/conv3x3.ptx"; KNAME=conv3x3
    GRID="$((IW / 16)),$((IH / 16))"; BLOCK=16,16
    PARGS=("@$a" "@$w" "zeros:$((4 * IW * IH))" "s32:$IW" "s32:$IH"); PDUMP=(2)
    CCMD=("$BIN/c_conv3x3" "$IW" "$IH" "$a" "$w")
    OGLOBAL="$IW,$IH"; OLOCAL=16,16; OARGS=("${PARGS[@]}"); ODUMP=(2)
    CHECK=(f32 1e-5 1e-5)
}
case_nbody() {
    local p; p=$(input pos f32 $((4 * NB)) 12)
    SIZE="$NB bodies"; PTX="$SUITE/kernels/nbody.ptx"; KNAME=nbody
    GRID=$((NB / 256)); BLOCK=256; SHMEM=4096
    PARGS=("@$p" "zeros:$((16 * NB))" "s32:$NB" f32:0.01); PDUMP=(1)
    CCMD=("$BIN/c_nbody" "$NB" 0.01 "$p")
    OGLOBAL=$NB; OLOCAL=256; OARGS=("${PARGS[@]}" local:4096); ODUMP=(1)
    CHECK=(f32 1e-3 1e-3) # rsqrt.approx against 1/sqrtf, over sums of NB terms
}
case_spmv() { # $1: spmv_thread or spmv_warp
    local m x; m=$(csr_input csr "$SP_ROWS" 13); x=$(input x f32 "$SP_ROWS" 14)
    SIZE="$SP_ROWS rows, 32 nnz/row"; PTX="$SUITE/kernels/spmv.ptx"; KNAME=$1; BLOCK=256
    if [ "$1" = spmv_thread ]; then GRID=$((SP_ROWS / 256)); else GRID=$((SP_ROWS / 8)); fi
    PARGS=("@$m.rowptr" "@$m.col" "@$m.val" "@$x" "zeros:$((4 * SP_ROWS))" "s32:$SP_ROWS"); PDUMP=(4)
    CCMD=("$BIN/c_spmv" "$SP_ROWS" "$SP_ROWS" "$m.rowptr" "$m.col" "$m.val" "$x")
    OGLOBAL=$((GRID * 256)); OLOCAL=256; OARGS=("${PARGS[@]}"); ODUMP=(4)
    CHECK=(f32 1e-4 1e-4)
}
case_spmv_thread() { case_spmv spmv_thread; }
case_spmv_warp() { case_spmv spmv_warp; }
case_blackscholes() {
    local s k t; s=$(input bs_s f32 "$NBS" 15 5 30); k=$(input bs_k f32 "$NBS" 16 1 100)
    t=$(input bs_t f32 "$NBS" 17 0.25 10)
    SIZE="$NBS options"; PTX="$SUITE/kernels/blackscholes.ptx"; KNAME=blackscholes
    GRID=$((NBS / 1024)); BLOCK=256 # grid-stride: 4 options per thread
    PARGS=("@$s" "@$k" "@$t" "zeros:$((4 * NBS))" "zeros:$((4 * NBS))" f32:0.02 f32:0.3 "s32:$NBS")
    PDUMP=(3 4)
    CCMD=("$BIN/c_blackscholes" "$NBS" 0.02 0.3 "$s" "$k" "$t")
    OGLOBAL=$((NBS / 4)); OLOCAL=256; OARGS=("${PARGS[@]}"); ODUMP=(3 4)
    CHECK=(f32 1e-4 1e-4)
}
case_mandelbrot() { # [-2, 1) x [-1.5, 1.5), 256 iterations at most
    local dx; dx=$(awk -v w="$MW" 'BEGIN { printf "%.17g", 3 / w }')
    SIZE="${MW}x${MW}, 256 iterations"; PTX="$SUITE/kernels/mandelbrot.ptx"; KNAME=mandelbrot
    GRID="$((MW / 16)),$((MW / 16))"; BLOCK=16,16
    PARGS=("zeros:$((4 * MW * MW))" "s32:$MW" "s32:$MW" f32:-2 f32:-1.5 "f32:$dx" s32:256); PDUMP=(0)
    CCMD=("$BIN/c_mandelbrot" "$MW" "$MW" -2 -1.5 "$dx" 256)
    OGLOBAL="$MW,$MW"; OLOCAL=16,16; OARGS=("${PARGS[@]}"); ODUMP=(0)
    CHECK=(u32 1 0.002) # a point on the set's boundary may escape one step apart (contraction)
}
case_bitonic() {
    local a; a=$(input a f32 "$N" 1)
    SIZE="n=$NS, segments of 1024"; PTX="$SUITE/kernels/bitonic.ptx"; KNAME=bitonic
    GRID=$((NS / 1024)); BLOCK=512; SHMEM=4096
    PARGS=("@$a" "zeros:$((4 * NS))"); PDUMP=(1)
    CCMD=("$BIN/c_segsort" "$NS" 1024 "$a")
    OGLOBAL=$((NS / 2)); OLOCAL=512; OARGS=("${PARGS[@]}" local:4096); ODUMP=(1)
    CHECK=(f32 0 0)
}
# Held-out variants (--set variants): each reuses its sibling's input, C baseline and check.
case_vecadd_f4() { # sibling: vecadd; a grid-stride loop over float4, 1024 blocks of 256
    case_vecadd
    PTX="$SUITE/variants/vecadd_f4.ptx"; KNAME=vecadd_f4; GRID=$((N / 1024 < 1024 ? N / 1024 : 1024))
    OKNAME=none
}
case_reduce_cub() { # sibling: reduce_halving; 1024 threads, grid-stride, one atomicAdd per block
    case_reduce_halving
    PTX="$SUITE/variants/reduce_cub.ptx"; KNAME=reduce_cub; BLOCK=1024; SHMEM=0
    GRID=$((N2 / 1024 / 16 > 0 ? N2 / 1024 / 16 : 1))
    OKNAME=none
}
case_histogram_global() { # sibling: histogram; no shared memory, one global atomicAdd per byte
    case_histogram
    PTX="$SUITE/variants/histogram_global.ptx"; KNAME=histogram_global
    OKNAME=none
}
case_layernorm_warp() { # sibling: layernorm; one warp per row, butterfly shuffles, 8 rows a block
    case_layernorm
    PTX="$SUITE/variants/layernorm_warp.ptx"; KNAME=layernorm_warp; GRID=$((LN_ROWS / 8))
    OKNAME=none
}
case_particles() { # its own C baseline (c/particles.c): float3 structs, p + v * dt
    local a b; a=$(input a f32 "$N" 1); b=$(input b f32 "$N" 2)
    local np=$((N / 3))
    SIZE="n=$np float3"; PTX="$SUITE/variants/particles.ptx"; KNAME=particles
    GRID=$(((np + 255) / 256)); BLOCK=256
    PARGS=("@$a" "@$b" "zeros:$((12 * np))" "s32:$np" f32:0.01); PDUMP=(2)
    CCMD=("$BIN/c_particles" "$np" 0.01 "$a" "$b")
    OKNAME=none
    CHECK=(f32 0 0)
}
case_softmax_block() { # sibling: softmax (Triton's); a block of 256 per row, shared-memory trees
    case_softmax
    PTX="$SUITE/variants/softmax_block.ptx"; KNAME=softmax_block; BLOCK=256; SHMEM=0
    local a; a=$(input sm f32 $((SM_ROWS * 1024)) 7)
    PARGS=("@$a" "zeros:$((4 * SM_ROWS * 1024))" s32:1024); PDUMP=(1)
    OKNAME=none
}
case_matmul_naive() { # sibling: matmul; no shared tiles, a dot product per thread from global memory
    case_matmul
    PTX="$SUITE/variants/matmul_naive.ptx"; KNAME=matmul_naive
    OKNAME=none
}
case_transpose_naive() { # sibling: transpose; no shared tile, a warp writes a column
    case_transpose
    PTX="$SUITE/variants/transpose_naive.ptx"; KNAME=transpose_naive; GRID="$((IW / 32)),$((IH / 8))"
    OKNAME=none
}
case_conv3x3_naive() { # sibling: conv3x3; no shared tile, a bounds check per tap
    case_conv3x3
    PTX="$SUITE/variants/conv3x3_naive.ptx"; KNAME=conv3x3_naive
    OKNAME=none
}
case_gemv_row() { # its own C baseline (c/gemv.c): y = A x, one thread per row of A
    local cols; if [ "$QUICK" = 1 ]; then cols=1024; else cols=8192; fi
    local rows=$((N / cols)) a x; a=$(input a f32 "$N" 1); x=$(input gx f32 "$cols" 21)
    SIZE="${rows}x${cols}"; PTX="$SUITE/variants/gemv_row.ptx"; KNAME=gemv_row
    GRID=$(((rows + 255) / 256)); BLOCK=256
    PARGS=("@$a" "@$x" "zeros:$((4 * rows))" "s32:$rows" "s32:$cols"); PDUMP=(2)
    CCMD=("$BIN/c_gemv" "$rows" "$cols" "$a" "$x")
    OKNAME=none
    CHECK=(f32 1e-4 1e-4)
}
case_empty() {
    SIZE="1x1 thread"; PTX="$SUITE/kernels/empty.ptx"; KNAME=empty; GRID=1; BLOCK=1
    CCMD=("$BIN/c_empty"); OGLOBAL=1; OLOCAL=1; LAUNCHES=$EMPTY_REPS
}

# median_of FILE: the median from a "... median X ms ..." line.
median_of() { sed -n 's/.*median \([0-9.]*\) ms.*/\1/p' "$1" | head -n1; }
# cpu_of FILE: the process CPU time per launch, from C's "cpu: median X ms" or ptx2llvm's
# "kernel CPU time: median X ms" line; "-" when there is none.
cpu_of() { local x; x=$(sed -n 's/^\(kernel CPU time\|cpu\): median \([0-9.]*\) ms.*/\2/p' "$1" | head -n1); echo "${x:--}"; }
# brief FILE: the first error line, without the file name, at most 60 characters.
brief() {
    local l
    l=$(grep -m1 -i 'error\|panick\|unsupported\|mismatch' "$1" || head -n1 "$1")
    [ -n "$l" ] || l="no output"
    l=${l##*error: }
    l=${l//|//}
    printf '%.60s' "$l"
}
# check_outputs WHO DIV: compares $d/WHO.out.I with $d/c.out.I for every output; prints the
# first mismatch line and returns 1 on a mismatch.
check_outputs() {
    local who=$1 i div=()
    [ "$ACCUM" = 1 ] && div=("$2")
    for i in "${!PDUMP[@]}"; do
        if ! "$BIN/check" "${CHECK[0]}" "$d/$who.out.$i" "$d/c.out.$i" "${CHECK[@]:1}" "${div[@]}" \
            >"$d/$who-check.$i.log" 2>&1; then
            head -c 70 "$d/$who-check.$i.log"
            return 1
        fi
    done
}

# clang_ptx: with --ptx clang, PTX (a suite or variant kernel's checked-in PTX) becomes clang's
# PTX of the same .cu, compiled once per invocation into $WORK/ptx.
clang_ptx() {
    [ "$PTX_FROM" = clang ] || return 0
    case "$PTX" in "$SUITE"/kernels/*.ptx | "$SUITE"/variants/*.ptx) ;; *) return 0 ;; esac
    local cu="${PTX%.ptx}.cu" out
    out="$WORK/ptx/$(basename "$PTX")"
    if [ ! -f "$out" ]; then
        mkdir -p "$WORK/ptx"
        "$CLANG" -x cuda --cuda-device-only -nocudainc -nocudalib --cuda-gpu-arch=sm_80 \
            -Xclang -target-feature -Xclang +ptx75 -O3 -include "$SUITE/tools/clang_cuda.h" \
            -Xclang -mlink-builtin-bitcode -Xclang "$LIBDEVICE" -S -o "$out" "$cu" \
            >"$WORK/ptx/$(basename "$cu").log" 2>&1 ||
            { note "bench.sh: clang failed on $cu (see $WORK/ptx/$(basename "$cu").log)"; exit 1; }
    fi
    PTX="$out"
}

# run_kernel K PASS: one kernel, one pass; appends "K PASS t_ptx2llvm t_c t_pocl compile status"
# (tab-separated) to $WORK/times.tsv.
run_kernel() {
    local k=$1 pass=$2 i
    case_common
    "case_$k"
    clang_ptx
    OKNAME="${OKNAME:-$KNAME}"
    SIZES[$k]=$SIZE
    d="$WORK/pass$pass/$k"
    rm -rf "$d"
    mkdir -p "$d"
    note "bench.sh: pass $pass/$RUNS: $k ($SIZE)"
    local t_p="-" t_c="-" t_o="-" comp="-" cached="-" status="ok" u_p="-" u_c="-"
    local launches="${LAUNCHES:-$REPS}" creps="${LAUNCHES:-$REPS}"

    # C with OpenMP: the reference output.
    local cout=()
    for i in "${!PDUMP[@]}"; do cout+=("$d/c.out.$i"); done
    if "${PFX[@]}" "$TIMEOUT" "${CCMD[0]}" "$creps" "${CCMD[@]:1}" "${cout[@]}" >"$d/c.log" 2>&1; then
        t_c=$(median_of "$d/c.log")
        u_c=$(cpu_of "$d/c.log")
    else
        status="C baseline failed: $(brief "$d/c.log")"
    fi

    # ptx2llvm: the launches; `run --repeat` also prints the JIT compile time.
    local pargs=() x rc msg
    for x in "${PARGS[@]}"; do pargs+=("--arg=$x"); done
    for i in "${!PDUMP[@]}"; do pargs+=("--dump=${PDUMP[$i]}=$d/ptx2llvm.out.$i"); done
    [ "$SHMEM" != 0 ] && pargs+=(--shared-mem "$SHMEM")
    # The kernel cache starts empty (in $d, made anew above), so the measured run compiles;
    # a second run (one launch) loads the module from the cache: its compile time is the
    # "cached" column.
    XDG_CACHE_HOME="$d/cache" "${PFX[@]}" "$TIMEOUT" "$P2L" run "$PTX" --kernel "$KNAME" --grid "$GRID" --block "$BLOCK" \
        "-O$OPT" --warmup 1 --repeat "$launches" "${pargs[@]}" >"$d/ptx2llvm.log" 2>&1
    rc=$?
    if [ "$rc" = 0 ]; then
        t_p=$(median_of "$d/ptx2llvm.log")
        u_p=$(cpu_of "$d/ptx2llvm.log")
        comp=$(sed -n 's/^compile time: \([0-9.]*\) ms.*/\1/p' "$d/ptx2llvm.log" | head -n 1)
        [ -n "$comp" ] || comp="-"
        local cargs=()
        for x in "${PARGS[@]}"; do cargs+=("--arg=$x"); done
        [ "$SHMEM" != 0 ] && cargs+=(--shared-mem "$SHMEM")
        if XDG_CACHE_HOME="$d/cache" "${PFX[@]}" "$TIMEOUT" "$P2L" run "$PTX" --kernel "$KNAME" --grid "$GRID" \
            --block "$BLOCK" "-O$OPT" --repeat 1 "${cargs[@]}" >"$d/ptx2llvm.cached.log" 2>&1; then
            cached=$(sed -n 's/^compile time: \([0-9.]*\) ms (compile: cached.*/\1/p' "$d/ptx2llvm.cached.log" | head -n 1)
            [ -n "$cached" ] || cached="-"
        fi
        if [ "${#PDUMP[@]}" -gt 0 ] && [ "$status" = ok ] && ! msg=$(check_outputs ptx2llvm "$((launches + 1))"); then
            status="WRONG: $msg"
        fi
    elif [ "$rc" = 124 ]; then
        status="FAIL: timed out after ${TIMEOUT}s"
    else
        status="FAIL: $(brief "$d/ptx2llvm.log")"
    fi

    # PoCL.
    if [ "$POCL" = 1 ] && [ "$OKNAME" != none ]; then
        local oargs=()
        for x in "${OARGS[@]}"; do oargs+=(--arg "$x"); done
        for i in "${!ODUMP[@]}"; do oargs+=(--dump "${ODUMP[$i]}=$d/pocl.out.$i"); done
        if "${PFX[@]}" "$TIMEOUT" "$BIN/ocl_host" "$SUITE/opencl/kernels.cl" "$OKNAME" --global "$OGLOBAL" \
            --local "$OLOCAL" --repeat "$creps" "${oargs[@]}" >"$d/pocl.log" 2>&1; then
            t_o=$(median_of "$d/pocl.log")
            if [ "${#ODUMP[@]}" -gt 0 ] && [ -f "$d/c.out.0" ] && ! msg=$(check_outputs pocl $((creps + 1))); then
                status="$status; PoCL WRONG: $msg"
            fi
        else
            t_o="error"
            status="$status; PoCL failed: $(brief "$d/pocl.log")"
        fi
    else
        t_o="n/a"
    fi
    status=${status//|//}
    status=${status//$'\t'/ }
    status=${status//$'\n'/ }
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$k" "$pass" "$t_p" "$t_c" "$t_o" "$comp" "$status" "$cached" "$u_p" "$u_c" >>"$WORK/times.tsv"
}

declare -A SIZES
SELECTED=()
for k in "${KERNELS[@]}"; do
    if [ -n "$ONLY" ] && [[ ",$ONLY," != *",$k,"* ]]; then continue; fi
    SELECTED+=("$k")
done
if [ "$REPORT" = 1 ]; then
    [ -s "$WORK/times.tsv" ] || { note "bench.sh: no $WORK/times.tsv to report"; exit 1; }
    KEPT=()
    for k in "${SELECTED[@]}"; do
        if awk -F'\t' -v k="$k" '$1 == k { f = 1 } END { exit !f }' "$WORK/times.tsv"; then
            case_common
            "case_$k"
            SIZES[$k]=$SIZE
            KEPT+=("$k")
        fi
    done
    SELECTED=("${KEPT[@]}")
    RUNS=$(awk -F'\t' '$2 > m { m = $2 } END { print m + 0 }' "$WORK/times.tsv")
    POCL=$(awk -F'\t' '$5 ~ /^[0-9.]+$/ { f = 1 } END { print f + 0 }' "$WORK/times.tsv")
else
    : >"$WORK/times.tsv"
    for pass in $(seq 1 "$RUNS"); do
        for k in "${SELECTED[@]}"; do run_kernel "$k" "$pass"; done
    done
fi

# ---- the table -------------------------------------------------------------------------------
# Per kernel: median time of each program over the passes; the ratios ptx2llvm/C and
# ptx2llvm/PoCL taken within each pass, as median (min-max); compile time median; the check
# result (the first pass's failure, if any). Then the geometric means of the median ratios
# (the empty kernel, a launch-overhead probe, left out).
{
    echo "ptx2llvm benchmark suite ($MODE): $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) cores ($(sed -n 's/^model name\t: //p' /proc/cpuinfo | head -n1)), load at the end $(cut -d' ' -f1-3 /proc/loadavg)"
    echo "ptx2llvm -O$OPT${BENCH_NICE:+ (nice $BENCH_NICE)} $(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null)$(git -C "$ROOT" diff --quiet HEAD -- src 2>/dev/null || echo '+dirty'); C: $CC_BENCH ${CFLAGS_BENCH[*]}, OMP_WAIT_POLICY=$OMP_WAIT_POLICY; PoCL: $([ "$POCL" = 1 ] && dpkg-query -W -f='${Version}' pocl-opencl-icd 2>/dev/null || echo "$POCL_WHY")"
    if [ "$REPORT" = 1 ]; then
        echo "re-made from $WORK/times.tsv ($RUNS pass(es)); launch counts as in the runs that wrote it. Ratios: median over the passes of the ratio within a pass, (min-max); ptx2llvm/C CPU: the same for the two programs' process CPU time per launch (all threads), which waits for other processes do not inflate. compile: ms from the parsed module to JIT-compiled code at -O$OPT, median over the passes; cached: the same for a second run, which loads the module from the kernel cache"
    else
        echo "$RUNS pass(es); in each, times are medians in ms (C, PoCL: $REPS launches after a warm-up; ptx2llvm: the same; empty: $EMPTY_REPS launches after a warm-up). Ratios: median over the passes of the ratio within a pass, (min-max); ptx2llvm/C CPU: the same for the two programs' process CPU time per launch (all threads), which waits for other processes do not inflate. compile: ms from the parsed module to JIT-compiled code at -O$OPT, median over the passes; cached: the same for a second run, which loads the module from the kernel cache"
    fi
    echo
    echo "| kernel | size | ptx2llvm ms | C ms | PoCL ms | ptx2llvm/C | ptx2llvm/C CPU | ptx2llvm/PoCL | compile ms | cached ms | check |"
    echo "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |"
    for k in "${SELECTED[@]}"; do
        name=$k
        [ "$k" = empty ] && name="empty (launch overhead)"
        [ "$k" = softmax ] && name="softmax (Triton)"
        [ "$k" = matmul_fp16 ] && name="matmul_fp16 (Triton)"
        awk -F'\t' -v k="$k" -v name="$name" -v size="${SIZES[$k]}" '
            function num(x) { return x ~ /^[0-9.]+$/ && x + 0 > 0 }
            function sort(a, n,   i, j, t) { for (i = 2; i <= n; i++) for (j = i; j > 1 && a[j - 1] > a[j]; j--) { t = a[j]; a[j] = a[j - 1]; a[j - 1] = t } }
            function med(a, n) { sort(a, n); return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2 }
            function ms(x) { return x >= 100 ? sprintf("%.0f", x) : sprintf("%.3g", x) }
            function cell(a, n) { return n ? ms(med(a, n)) : "-" }
            function rcell(a, n) { if (!n) return "-"; m = med(a, n); return n == 1 ? sprintf("%.2f", m) : sprintf("%.2f (%.2f-%.2f)", m, a[1], a[n]) }
            $1 == k {
                if (num($3)) tp[++np] = $3; if (num($4)) tc[++nc] = $4; if (num($5)) to[++no] = $5
                if (num($6)) cm[++ncm] = $6
                if (num($8)) ca[++nca] = $8
                if (num($3) && num($4)) rc[++nrc] = $3 / $4
                if (num($9) && num($10)) ru[++nru] = $9 / $10
                if (num($3) && num($5)) ro[++nro] = $3 / $5
                if (st == "" || (st == "ok" && $7 != "ok")) st = $7
            }
            END {
                printf "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", name, size, cell(tp, np),
                    cell(tc, nc), no ? cell(to, no) : "n/a", rcell(rc, nrc), rcell(ru, nru), rcell(ro, nro),
                    ncm ? sprintf("%.0f", med(cm, ncm)) : "-", nca ? sprintf("%.1f", med(ca, nca)) : "-", st
            }' "$WORK/times.tsv"
    done
} >"$WORK/table.md"
rm -f "$WORK/ratios_c.txt" "$WORK/ratios_o.txt" "$WORK/ratios_u.txt"
for k in "${SELECTED[@]}"; do
    [ "$k" = empty ] && continue
    awk -F'\t' -v k="$k" -v out_c="$WORK/ratios_c.txt" -v out_o="$WORK/ratios_o.txt" -v out_u="$WORK/ratios_u.txt" '
        function num(x) { return x ~ /^[0-9.]+$/ && x + 0 > 0 }
        function med(a, n,   i, j, t) { for (i = 2; i <= n; i++) for (j = i; j > 1 && a[j - 1] > a[j]; j--) { t = a[j]; a[j] = a[j - 1]; a[j - 1] = t }; return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2 }
        $1 == k { if (num($3) && num($4)) rc[++nrc] = $3 / $4; if (num($3) && num($5)) ro[++nro] = $3 / $5; if (num($9) && num($10)) ru[++nru] = $9 / $10 }
        END { if (nrc) print med(rc, nrc) >> out_c; if (nro) print med(ro, nro) >> out_o; if (nru) print med(ru, nru) >> out_u }' "$WORK/times.tsv"
done
geo() { [ -s "$1" ] && awk '{ s += log($1); n++ } END { printf "%.2f (%d kernels)", exp(s / n), n }' "$1" || printf -- '-'; }
{
    cat "$WORK/table.md"
    echo
    echo "geometric mean of the median ratios (empty left out): ptx2llvm/C $(geo "$WORK/ratios_c.txt"), ptx2llvm/C CPU $(geo "$WORK/ratios_u.txt"), ptx2llvm/PoCL $(geo "$WORK/ratios_o.txt")"
} | tee "$WORK/results.md"

FAILED=()
for k in "${SELECTED[@]}"; do
    # ptx2llvm failing or wrong, or PoCL wrong (a wrong OpenCL kernel); PoCL crashing is shown only
    if awk -F'\t' -v k="$k" '$1 == k && ($7 !~ /^ok/ || $7 ~ /WRONG/) { bad = 1 } END { exit !bad }' "$WORK/times.tsv"; then
        FAILED+=("$k")
    fi
done
if [ "${#FAILED[@]}" -gt 0 ]; then
    echo "bench.sh: FAILED: ${FAILED[*]} (logs in $WORK/pass*/<kernel>/)"
    exit 1
fi
echo "bench.sh: all ${#SELECTED[@]} kernels ran and matched the C baseline in $RUNS pass(es)"
