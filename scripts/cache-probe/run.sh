#!/bin/bash
# run.sh: builds and runs the kernel cache's feasibility probe (orc_load.c, see
# docs/KERNEL_CACHE.md): compile lit/cpu/run-vecadd.ptx to an object once (timed), then load
# that object into ORC LLJIT without compiling and launch it (timed). Needs a release build
# (target/release/ptx2llvm and libptx2llvm.so) and LLVM 22's libLLVM.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
llvm=${LLVM_SYS_221_PREFIX:-/usr/lib/llvm-22}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
cc -O1 "$root/scripts/cache-probe/orc_load.c" -I"$root/include" -I"$llvm/include" \
  -L"$llvm/lib" -L"$root/target/release" -Wl,--no-as-needed -lptx2llvm -lLLVM \
  -Wl,-rpath,"$llvm/lib" -Wl,-rpath,"$root/target/release" -o "$out/orc_load"
TIMEFORMAT='compile to an object (ptx2llvm --emit obj -O2): %R s wall, %U s user'
time "$root/target/release/ptx2llvm" "$root/lit/cpu/run-vecadd.ptx" --target cpu --emit obj -O2 \
  -o "$out/vecadd.o"
"$out/orc_load" "$out/vecadd.o"
