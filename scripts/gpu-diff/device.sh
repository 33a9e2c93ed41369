#!/usr/bin/env bash
# device.sh: the GPU side of the cpu-target-vs-GPU comparison, run on a machine with an NVIDIA
# GPU and its driver (from the repository root):
#   bash scripts/gpu-diff/device.sh RECORDS_DIR OUT_DIR
# 1. replays every launch record (made here with PTX2LLVM_RECORD, see scripts/gpu-diff/README.md)
#    on the GPU: OUT_DIR/report.tsv (one verdict per launch) and OUT_DIR/gpu-out.tgz (the GPU's
#    buffers of the launches that differ);
# 2. asks the real driver for each recorded kernel's attributes: OUT_DIR/attrs.tsv;
# 3. builds cuda/tests/c/driver_api.c against the real libcuda.so.1 and runs it:
#    OUT_DIR/driver_api.txt (checks that fail there test ptx2llvm-specific answers, or are wrong);
# 4. runs cuda/tests/python/numba_kernels.py on the GPU: OUT_DIR/numba.txt.
# With GPU_DIFF_REPLAY_ONLY=1 it stops after step 1 (a short device lease spent on replays).
set -uo pipefail
REC="$1"
OUT="$2"
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1
PY=python3
nvidia-smi -L 2>&1 | tee "$OUT/device.txt"
work=$(mktemp -d)
echo "== replay"
# A sticky GPU error ends the process (status 3); a new one resumes after the last record.
# A process the driver crashes (SIGSEGV or SIGABRT while it loads a module: session 22 saw
# 33) gets its next unreported record marked `gpu-error` and resumes after it.
resume=""
for try in $(seq 1 60); do
    timeout 300 $PY scripts/gpu-diff/replay.py $resume "$REC" "$OUT/report.tsv" "$work/gpu-out" >"$work/replay.log" 2>&1
    rc=$?
    tail -30 "$work/replay.log"
    if [ "$rc" = 139 ] || [ "$rc" = 134 ]; then
        $PY - "$REC" "$OUT/report.tsv" "$rc" <<'PY'
import os, sys
root, rep, rc = sys.argv[1:4]
done = {l.split("\t", 1)[0] for l in open(rep) if not l.startswith("#")} if os.path.exists(rep) else set()
recs = sorted(f for f in os.listdir(root) if os.path.isfile(os.path.join(root, f, "launch.txt")))
nxt = next(f for f in recs if f not in done)
rec = dict(l.rstrip("\n").split(" ", 1) for l in open(os.path.join(root, nxt, "launch.txt")) if " " in l)
with open(rep, "a") as out:
    if not done:
        out.write("# device\t(the first process crashed)\n")
    out.write(f"{nxt}\t{rec.get('origin', '')}\t{rec.get('kernel', '')}\tgpu-error\tthe replaying process crashed (status {rc})\n")
print(f"{nxt}: the replaying process crashed (status {rc}); marked, resuming after it")
PY
    elif [ "$rc" != 3 ]; then
        break
    fi
    resume="--resume"
done
[ -d "$work/gpu-out" ] && tar czf "$OUT/gpu-out.tgz" -C "$work" gpu-out
[ "${GPU_DIFF_REPLAY_ONLY:-0}" = 1 ] && exit 0
echo "== attributes"
timeout 60 $PY scripts/gpu-diff/replay.py --attrs "$REC" "$OUT/attrs.tsv" 2>&1 | tail -5
echo "== driver_api.c"
inc=""
for d in /usr/local/cuda/include /usr/local/cuda/targets/x86_64-linux/include; do
    [ -f "$d/cuda.h" ] && inc="$d" && break
done
if [ -z "$inc" ]; then
    inc=$($PY -c 'import nvidia.cuda_runtime, os; print(os.path.join(list(nvidia.cuda_runtime.__path__)[0], "include"))' 2>/dev/null)
fi
gcc -O1 -o "$work/driver_api" cuda/tests/c/driver_api.c -I"$inc" -lcuda -ldl >"$OUT/driver_api.txt" 2>&1 &&
    timeout 60 "$work/driver_api" >>"$OUT/driver_api.txt" 2>&1
echo "driver_api exit $?" | tee -a "$OUT/driver_api.txt"
tail -5 "$OUT/driver_api.txt"
echo "== numba kernels"
timeout 120 $PY cuda/tests/python/numba_kernels.py >"$OUT/numba.txt" 2>&1
echo "numba exit $?" | tee -a "$OUT/numba.txt"
tail -3 "$OUT/numba.txt"
