//! The coverage table of `docs/COVERAGE.md`, generated from the instruction-set declaration:
//! one row per opcode with its number of forms, whether it is parsed, and how far each target
//! supports it. [`support`] is the one place that records target support: the lowering code
//! owns its lists and fills them in as instructions are implemented.

use std::fmt::Write as _;

use super::{forms::isa, Opcode};

/// Shown for an instruction a target does not translate (yet).
pub const UNSUPPORTED: &str = "—";

/// Opcodes the nvptx target translates, with a short status (`yes`, `partial: …`).
pub const NVPTX_SUPPORT: &[(Opcode, &str)] = &[];

/// Opcodes the cpu target translates, with a short status (unused: `cpu_support` matches on
/// the spelling, as the nvptx column does).
pub const CPU_SUPPORT: &[(Opcode, &str)] = &[];

/// How far `target` (`"nvptx"` or `"cpu"`) supports `op`: `—` when it does not.
pub fn support(op: Opcode, target: &str) -> &'static str {
    if target == "nvptx" {
        // How the nvptx target realizes each opcode: target-independent LLVM IR from the shared
        // lowering, `llvm.nvvm.*` intrinsics, or PTX inline assembly (instructions with no
        // meaning outside NVIDIA hardware).
        return match op.spelling() {
            "add" | "sub" | "mul" | "mad" | "div" | "sqrt" => "LLVM IR; `.rz/.rm/.rp`, f32 `.ftz`: NVVM intrinsic",
            "fma" => "LLVM IR; `.rz/.rm/.rp`, f32 `.ftz`: NVVM intrinsic; `.oob`: inline PTX",
            "ld" | "st" => "LLVM IR; `.mmio`, `.unified`, `st.async`: inline PTX",
            "prefetch" => "LLVM IR (no-op hint); `.tensormap`: inline PTX",
            "cvta" => "LLVM IR; `.to.param`: inline PTX",
            "fence" | "membar" => "LLVM IR (fence); proxy and other fences: inline PTX",
            "exit" => "LLVM IR (`ret`); in a device function: inline PTX",
            "rcp" => "LLVM IR; `.rz/.rm/.rp`, `.ftz`, `.approx.ftz`: NVVM intrinsic; `.approx.f32`: inline PTX",
            "rsqrt" | "sin" | "cos" | "lg2" | "ex2" => "NVVM intrinsic (`.approx`)",
            "tanh" => "inline PTX (`.approx`)",
            "cvt" => "LLVM IR; int↔float `.rz/.rm/.rp`, f64→f32, `.rz` to f16/bf16: NVVM intrinsic; `.rs` x4 packs: inline PTX",
            "abs" | "neg" | "min" | "max" | "mul24" | "mad24" | "sad" | "rem" | "addc" | "subc" | "madc" | "popc" | "clz"
            | "bfind" | "fns" | "brev" | "bfe" | "bfi" | "szext" | "bmsk" | "dp4a" | "dp2a" | "testp" | "copysign" | "and"
            | "or" | "xor" | "not" | "cnot" | "lop3" | "shf" | "shl" | "shr" | "prmt" | "setp" | "set" | "selp" | "slct"
            | "ldu" | "prefetchu" | "bra" | "brx" | "call" | "ret"
            | "trap" | "alloca" | "stacksave" | "stackrestore" | "vadd" | "vsub" | "vabsdiff" | "vmin" | "vmax" | "vshl"
            | "vshr" | "vmad" | "vset" | "vadd2" | "vsub2" | "vavrg2" | "vabsdiff2" | "vmin2" | "vmax2" | "vset2"
            | "vadd4" | "vsub4" | "vavrg4" | "vabsdiff4" | "vmin4" | "vmax4" | "vset4" => "LLVM IR",
            "mov" => "LLVM IR; special registers with no NVVM intrinsic (`%envreg<N>`, `%dynamic_smem_size`, `%total_smem_size`, …): inline PTX",
            "atom" | "red" => "LLVM IR (atomicrmw/cmpxchg); `.async`, `.mmio`: inline PTX",
            "bar" | "barrier" => "NVVM intrinsic; `.red`, `.cluster`: inline PTX",
            "activemask" | "shfl" | "vote" | "match" | "redux" | "elect" | "isspacep" => "NVVM intrinsic; other forms: inline PTX",
            _ => "inline PTX",
        };
    }
    if target == "cpu" {
        return cpu_support(op.spelling());
    }
    let table = match target {
        "nvptx" => NVPTX_SUPPORT,
        "cpu" => CPU_SUPPORT,
        _ => &[],
    };
    table
        .iter()
        .find(|(o, _)| *o == op)
        .map_or(UNSUPPORTED, |(_, s)| s)
}

/// How the cpu target runs each opcode: host LLVM IR from the shared lowering, the runtime
/// library (`runtime/`: barriers and warp collectives over coroutines, clocks, printf, host
/// math for approximations and directed rounding), a no-op where the instruction is only a
/// hint, or `—` with the compile error "not supported on the cpu target: `INSTRUCTION`"
/// (most tensor-core forms, textures and surfaces, TMA, clusters of more than one CTA,
/// multimem). Checked by `tests/cpu_corpus.rs`, `tests/cpu_hard.rs`, `lit/cpu/` and the
/// instruction-level cpu tests.
fn cpu_support(op: &str) -> &'static str {
    match op {
        "fma" => {
            "LLVM IR; `.rz/.rm/.rp`, `.ftz`, approximations: runtime helpers; `.oob`: — (the manual does not give the OOB-NaN's bits)"
        }
        "add" | "sub" | "mul" | "mad" | "div" | "sqrt" | "rcp" => {
            "LLVM IR; `.rz/.rm/.rp`, `.ftz`, approximations: runtime helpers"
        }
        "sin" | "cos" | "lg2" | "ex2" | "tanh" => {
            "LLVM IR (`.approx` f32/f16/bf16: inline range reduction and polynomials in f64, one rounding); f64: host math"
        }
        "rsqrt" => "host math (`.approx`)",
        "cp" => {
            "LLVM IR (`cp.async.ca/.cg` global→shared, `src-size`/`ignore-src`: copied when issued; `commit_group`/`wait_group`/`wait_all`: no-ops); runtime (coroutines): `cp.async.mbarrier.arrive{.noinc}` (an arrive: copies are done), non-tensor `cp.async.bulk` and `cp.reduce.async.bulk` (copied or reduced when issued, then complete-tx; `.cp_mask` byte masks; `.bulk_group` waits and `.prefetch`: no-ops); `.tensor` forms: —"
        }
        "cvt" => "LLVM IR (all roundings, `.sat`, `.relu`, `.ftz`, f16/bf16/tf32/fp8 formats); `.rs` x4 packs: — (the manual gives their random-bit layout only as figures)",
        "ld" | "st" => {
            "LLVM IR (cache hints dropped; `.volatile`, orderings as host atomics, a vector with an order one atomic per element; `.mmio`: volatile relaxed atomics; `.unified`: dropped); `st.async`: the `.global` forms a store; the `.shared::cluster` forms (with an mbarrier) fail the launch when executed: they must target another CTA of the cluster, which a cluster of one CTA lacks (an H200 stops with an illegal instruction)"
        }
        "atom" | "red" => {
            "LLVM IR (host atomics, every op incl. float add and inc/dec); `red.async`: the `.global` forms an atomic; the `.shared::cluster` forms (with an mbarrier) fail the launch when executed, as `st.async`'s"
        }
        "cvta" => "LLVM IR (`.shared`: offset ± the CTA's shared base; `.param`: parameters are in generic memory)",
        "bar" | "barrier" => {
            "runtime (16 named barriers, counts, `bar.arrive`, `bar.red`; `barrier.cluster.arrive/wait`: a cluster of one CTA, coroutines)"
        }
        "activemask" | "shfl" | "vote" | "match" | "redux" | "elect" => {
            "runtime (32-lane warps, member masks, divergent code)"
        }
        "fence" | "membar" => "LLVM IR (sequentially consistent fence)",
        "mbarrier" => {
            "runtime (coroutines; every form: phases and parity, tx-counts, `arrive_drop`, `.noComplete`, `pending_count`; waits let the CTA's other threads run; bad uses and waits that can never complete fail the launch)"
        }
        "mapa" => "LLVM IR (a cluster of one CTA: rank 0 maps to the same address; another rank fails the launch)",
        "getctarank" => "LLVM IR (0: a cluster of one CTA)",
        "exit" => "LLVM IR (`ret`); in a device function: runtime",
        "trap" => "runtime (the error names kernel, block and thread)",
        "nanosleep" => "runtime (yields to the CTA's other threads)",
        "mma" => {
            "runtime (warp exchange, coroutine scheme): `m16n8k16`/`m16n8k8` f16/bf16 → f32/f16, `m16n8k8`/`m16n8k4` tf32, `m8n8k4` f64, `m16n8k32`/`m16n8k16` s8/u8 (`.satfinite`); other shapes and types, `mma.sp`, `.kind`: —"
        }
        "ldmatrix" | "stmatrix" => {
            "warp engine: row vector loads and a permutation for a full warp's `ldmatrix` rows in shared memory, else a whole-warp runtime call; coroutines: a warp exchange. `.m8n8` `.x1/.x2/.x4`, `.trans`, `.b16`; a row outside the CTA's shared memory fails the launch (a GPU stops with an illegal instruction); `.m8n16`/`.m16n8`/`.m16n16` 8-bit forms: —"
        }
        "movmatrix" => "runtime (a whole-warp call on the warp engine, a warp exchange on coroutines)",
        "wmma" => {
            "runtime (coroutine scheme; fragments laid out as on an sm_90 GPU, `m8n8k4` f64 in the runtime's own layout, loads and stores per lane, `mma` by warp exchange): `m16n16k16`/`m32n8k16`/`m8n32k16` f16/bf16/s8/u8, `m16n16k8` tf32, `m8n8k4` f64 (`.rn`); sub-byte and `.b1` forms: —"
        }
        "isspacep" => "LLVM IR (`.shared` by address range; `.local`/`.const`/`.param`: false)",
        "prefetch" | "prefetchu" | "applypriority" | "discard" | "griddepcontrol"
        | "setmaxnreg" | "brkpt" | "pmevent" => "no-op (hint)",
        "createpolicy" => "LLVM IR (policy 0: cache hints are dropped)",
        "abs" | "neg" | "min" | "max" | "mul24" | "mad24" | "sad" | "rem" | "addc" | "subc"
        | "madc" | "popc" | "clz" | "bfind" | "fns" | "brev" | "bfe" | "bfi" | "szext" | "bmsk"
        | "dp4a" | "dp2a" | "testp" | "copysign" | "and" | "or" | "xor" | "not" | "cnot"
        | "lop3" | "shf" | "shl" | "shr" | "prmt" | "setp" | "set" | "selp" | "slct" | "mov"
        | "ldu" | "bra" | "brx" | "call" | "ret" | "alloca" | "stacksave" | "stackrestore"
        | "vadd" | "vsub" | "vabsdiff" | "vmin" | "vmax" | "vshl" | "vshr" | "vmad" | "vset"
        | "vadd2" | "vsub2" | "vavrg2" | "vabsdiff2" | "vmin2" | "vmax2" | "vset2" | "vadd4"
        | "vsub4" | "vavrg4" | "vabsdiff4" | "vmin4" | "vmax4" | "vset4" => "LLVM IR",
        _ => UNSUPPORTED,
    }
}

/// What `check` accepts that ptxas rejects (printed under the cpu notes); each class is an
/// entry of `tests/ptxas_diff/known.txt`, which holds it to ptxas.
const CHECK_NOTES: &str = "
### What `check` does not verify

`check` takes every instruction that ptxas 13 takes in the ptxas-differential test
(`tests/ptxas_diff.rs`, ~31,000 generated instructions, `st.async`/`red.async` without their
mbarrier operand included, as ptxas reads them), and rejects every one of the 27,350 generated
instructions that ptxas rejects. Outside the generated classes, the texture instructions' offset, gradient and level-of-detail
operands and the coordinate element types of `tex`/`tld4` are not checked; the operand rules
of `tcgen05.mma` beyond its descriptors and flags are shapes only.

`tests/ptxas_diff/known.txt` lists each class with the instructions it covers; the test prints
how many generated instructions fall in each.
";

/// Which target and PTX ISA version requirements `check` knows (printed under the cpu notes;
/// `{N}` is the number of lines of `src/isa/requirements.txt`).
const REQUIREMENT_NOTES: &str = "
### Target and PTX ISA version requirements

`ptx2llvm check` (and so every translation) rejects an instruction whose feature the module's
`.target` lacks or that is newer than its `.version`, as ptxas does, from the {N} requirements
of `src/isa/requirements.txt` (per opcode, modifier, type, operand count and special register;
`tests/target_requirements.rs` holds each to ptxas). Not modelled, so accepted where ptxas may
not accept them:

- requirements on operand kinds rather than modifiers: register operands and thread counts of
  `bar`, indirect `call`, the address of an `.entry` in `mov`, indirect texture and surface
  access, texture offsets, depth compare and destination predicates, `mbarrier` counts without
  `.noComplete`, the sink `_`;
- features that newer targets or versions removed (`shfl`/`vote` without `.sync` on sm_70 and
  later, `.maxnctapersm` after PTX ISA 2.1);
- directives and declarations: `.alias`, `.attribute`, `.noreturn`, the cluster directives,
  `.common`, unsized array parameters, register types such as `.b128`;
- `sm_1x`-era requirements (`.f64` before sm_13), texture and surface modifiers (`.acube`,
  mipmaps, `tld4` geometries, `sust.p`), `%pm4`–`%pm7`, `%pm0_64`–`%pm7_64`;
- type and shape combinations the table does not list one by one (each `cvt` type pair, each
  `mma`/`wmma`/`wgmma`/`tcgen05` shape and type): such an instruction is checked against the
  lines of its opcode and of the modifiers it carries, which may be older than its combination.
";

/// What the cpu column does not show (printed under the table).
const CPU_NOTES: &str = "
### The cpu target

Kernels run as host code (`ptx2llvm run`, the Rust API `ptx2llvm::api`, the C API
`include/ptx2llvm.h`, or objects from `--emit obj`); `runtime/README.md` describes the execution
model. Beyond the table:

- Unsupported instructions fail at compile time with `` FILE:LINE:COL: error: not supported on
  the cpu target: `INSTRUCTION` ``: tensor cores other than the warp-level `mma.sync`,
  `ldmatrix`, `stmatrix`, `movmatrix` and `wmma` forms above (`wgmma`, `tcgen05`), textures and
  surfaces (`tex`, `tld4`, `txq`, `suld`, `sust`, `sured`, `suq`, `istypep`), TMA (`cp.async.bulk.tensor`,
  `cp.reduce.async.bulk.tensor`, `cp.async.bulk.prefetch.tensor`, `tensormap`),
  `clusterlaunchcontrol` and `multimem`.
- Clusters run as clusters of one CTA: cluster special registers read so, `barrier.cluster` is
  a barrier of the CTA, `mapa` to rank 0 is the identity (another rank fails the launch),
  `getctarank` is 0, and `.shared::cluster` addresses are the CTA's own shared memory.
  `st.async`/`red.async` to shared memory must target another CTA of the cluster (the manual:
  otherwise undefined; an H200 stops with `CUDA_ERROR_ILLEGAL_INSTRUCTION`, session 27), so
  executing one fails the launch naming the instruction; `cp.async.bulk` and
  `cp.reduce.async.bulk` to the CTA's own `.shared::cluster` memory run as on the H200.
- `mbarrier` objects (`runtime/mbarrier.rs`) live in shared memory; kernels with them, or with
  `st.async`, `red.async`, `cp.async.bulk`, `cp.async.mbarrier.arrive`, `barrier.cluster`,
  `mapa`, run as coroutines. Asynchronous copies complete when issued. A failed
  `test_wait`/`try_wait` lets the CTA's other threads run before it answers; when every live
  thread is blocked or waits in vain, the launch fails (\"the wait can never complete\") where
  a GPU hangs (a thread spinning around `nanosleep` instead hangs as on a GPU). An object
  outside shared memory or misaligned, an uninitialized one, arrivals beyond the pending count
  and a completing `.noComplete` arrive fail the launch.
- Grid-wide synchronization needs a cooperative launch (`LaunchConfig::cooperative`, the
  driver's `cuLaunchCooperativeKernel`): every block then runs on a worker of its own and
  `%envreg1:%envreg2` hold the grid workspace that `cg::this_grid().sync()` meets at; after a
  normal launch they read 0 and a grid sync faults (CUDA C++) or fails an assertion
  (`libcudadevrt.a`'s functions). `ptx2llvm run` has no cooperative flag. Blocks that wait for
  each other through global memory outside a cooperative launch make progress only while they
  run at the same time: the runtime runs one block per worker thread (`LaunchConfig::workers`,
  one per core by default).
- Warp matrix instructions (`wmma`, and `mma.sync`, `ldmatrix`, `stmatrix`, `movmatrix` under
  divergent control flow; `ldmatrix`/`stmatrix`/`movmatrix` unless `PTX2LLVM_CPU_MODE=warp`,
  until a wrong-rows bug with `cvta.shared` of a bare symbol is fixed) keep their kernel on
  the coroutine scheme: the lanes leave their fragments in a per-warp exchange area and each
  lane computes its own result (`runtime/matrix.rs`). `mma` multiplies exactly and accumulates
  from `c` in `k` order with `f32` fused multiply-adds (`f64` ones for `f64`, exact integers,
  `.satfinite` clamping); a NaN result is the canonical NaN, as on an H200. Tensor cores leave
  the order and intermediate precision of a float sum unspecified, and an H200 differs: it
  truncates every term at the largest exponent and rounds toward zero (docs/GPU_DIFF.md has
  the measured rule; branch `tc` implements it, not merged for its cost), so inexact sums
  differ from the H200's by 1-2 ulp.
- Float `atom.add`/`red.add` (f32, f16, bf16, vector elements; cpu target): a NaN value
  operand becomes the canonical NaN before the host's atomic add, as the GPU gives for f32
  arithmetic (measured in session 27: `nanatom` gives the H200's bits, 0x7fffffff); a NaN that the sum itself makes (memory holding +inf, −inf added) or memory that
  already holds a NaN with a payload gives the host's NaN (0xffc00000, the payload), which an
  H200 may not. `lit/cpu/run-simd-nan-shared.ptx` (`nanatom`) pins the operand rule.
  Subnormals: the PTX ISA says `atom.add.f32`/`red.add.f32` on global memory (without
  `.noftz`) flush subnormal inputs and results to zero in its current implementation; the
  cpu target keeps them, as for shared memory (not measured on a GPU).
- `wmma` fragment layouts (which PTX leaves unspecified) are those an NVIDIA H200 gives
  (`tests/data/wmma_layouts.txt`: 58 `wmma.load` probes, a/b/c, row/col, every shape with
  f16/bf16/s8/tf32 and f16/f32/s32 accumulators). Not measured, so inferred or kept: `u8` uses
  the `s8` layout; `m16n16k8`'s f32 `c`/`d` the `m16n16k16` one (same 16 x 16 accumulator of
  `m16n8` tiles); `m8n8k4` f64 keeps the runtime's own row-major layout (lane `l` holds
  elements `l n ..`), which may differ from a GPU's; for 512-element b8 matrices the probes
  cannot tell elements `e` and `e + 256` apart, so their layout there follows the pattern of
  the others. Sub-byte and `.b1` `wmma` are not implemented.
- Known speed gaps of the warp engine, measured on held-out kernels (not errors: the results
  are exact): float `atomicAdd` scatters (`out[idx[i]] += val[i]`) in a
  kernel that also reads global memory with plain loads (`ld.global`, not `.nc`) are not
  privatized and take one atomic compare-and-swap per lane (4M: 18.7 ms, several times an
  OpenMP version with per-thread arrays); a double-precision 16x16 tiled matmul runs about 2.9x
  its f32 form (the f64 NaN choice is off the FMA chain: `llvm/simd/nan64.rs`). Clamp-to-edge
  indexing (`min(max(x + dx, 0), w - 1)`) costs a few scalar compares per access and warp
  (`stride::Clamp`), where a GPU pays nothing. A launch with about 2^31 threads or more in x
  (`(grid.x - 1) * block.x + 1024 > 2^31`) of a kernel whose flat x index the warp code
  assumes to be a non-negative `int` (`llvm/simd/flatx.rs`, plan line `flat thread
  indices`) runs on thread loops. Fields of arrays of structs load and store as vector pieces
  of the 32 structs (`llvm/simd/lanes/structs.rs`) only in global memory and for structs of
  at most 32 bytes: in `.shared` memory (`s[2 * t]`) and for larger structs the lanes'
  addresses are tested at run time, then gathered or scattered. The GPU Gems 3 work-efficient
  (Blelloch) scan with its bank-conflict padding (`s[n + (n >> 5)]`, 512 elements a block, both
  trees unrolled by NVRTC into 19 barrier steps) runs its 61 `.shared` accesses through window
  tests: 16M floats in 24 ms (the suite's scan by warp shuffles runs at C's speed), and it takes
  about 625 ms to compile. Bounds-checked stencils without shared memory run, off the border,
  a copy of the kernel whose checks are unconditional (the interior copy, when every divergent
  branch is a check convex in the lane: a 5x5 box blur with `if (xx >= 0 && xx < w && yy >= 0
  && yy < h)` per tap, 4096^2, 8.1 ms against 7.4 ms for C with an unchecked interior loop in
  32x8 blocks, 11.8 ms in 16x16 blocks (15.6 ms without the copy: two rows a warp, each row's
  loads half vectors), 21 ms in 8x32; with a `__constant__` 5x5 mask 9.1 ms); the copy
  doubles such a kernel's compile time (blur 70 -> 120-200 ms, 8x32 blocks about 300 ms),
  and a kernel with one divergent branch of another kind keeps each tap's
  mask, skip test and blends (about 20 instructions a tap). The naive forms without shared
  memory run each warp on its own, where the CPU wants the CTA's warps together. Warp groups
  (`llvm/simd/coarsen.rs`) run four warps of a CTA at once, their loops jammed, in kernels
  whose only branch on the thread index is the entry's bounds check (no barriers, warp
  operations, shared or local memory, atomics or calls; a loop that loads memory the copies
  share; a block of 1-D or `%ntid.x` dividing 32): a matrix multiply with a dot product per thread
  (`benches/suite/variants/matmul_naive.cu`, 1536^3) runs 1.7x to 2.1x the C SGEMM (5-7x on its own:
  each warp's FMA chain waits on itself and the B row its warps share was loaded per warp),
  compiling in about 135 ms instead of 50. Kernels with other thread-dependent branches (a
  loop bound or a check inside the loop) still run warp by warp. A naive transpose
  (`transpose_naive.cu`, `out[x * h + y] = in[y * w + x]`, 6144x8192: about 10.8x C) has no
  loop to jam: each warp's 32 lanes are scattered to 32 rows, 4 bytes a line (by hand, eight
  rows a thread with two `float4` stores a lane: 49 ms against C's 17.4). A loop in which each thread walks its own row (`gemv_row.cu`, `y[i] = sum_j A[i * cols + j] * x[j]` with a thread per row) reads its 32 rows through row windows (`llvm/simd/rowwin.rs`: each lane's next 64 bytes loaded once per 16 iterations and transposed in registers; 4096x8192 in 7.3 to 7.9 ms, 2.3x to 3.0x the C dot product per row (median 2.6x in three runs), where the gathers took 33.9 ms): only for 4-byte elements, in loops that write no memory, on the warp engine (a loop whose lanes leave at different iterations runs on thread loops). The classic global-memory bitonic step (`ixj = i ^ j`) gathers
  and scatters its partners for `j < 32` (16M floats: 4.7 ms, against 1.5 ms for `j >= 32`).
  A load whose lanes share one address, or two, that the analysis cannot prove (`s[i / cols]`
  of a flat launch) takes two scalar loads after a run-time test of the lanes' addresses
  (4096^2 row scaling: 4.6-4.9 ms, against 2.9 ms for the bias add `b[i % cols]`, whose lanes
  the analysis steps).
- Kernels without matrix instructions other than `mma.sync` (a whole-warp runtime call
  there, same results) run on the warp engine (one SIMD program per warp,
  lanes in lock step: `activemask`, non-`.sync` votes and shuffles see the lanes running
  together, as on a GPU; each CTA barrier a point where the warp suspends until the CTA's
  other warps have arrived or exited). It falls back, with the reason in the plan
  (`ptx2llvm run --dump-plan`), to thread loops or coroutines for: CTA barriers some live
  lanes of a warp may skip (a barrier under thread-divergent control flow), barriers with a
  thread count, `bar.arrive`, barrier ids computed at run time or more than one barrier id in
  a kernel (named barriers), calls of device functions,
  `.local` arrays and address-taken variables, irreducible control flow, float `redux.sync`,
  an atomic compare-and-swap or exchange in a divergent loop (a spin lock: lock step would
  never end),
  `nanosleep`, kernels whose global additions are privatized (`red`/`atom.add` with unused
  results), PTX vector elements chosen per lane or PTX vectors in per-lane calls and atomics,
  inline assembly, `mma.sync` in code some live lanes may skip, `-g` (per-thread registers for gdb), a
  known block whose warps span several rows (`%ntid.x` below 32 and a `%ntid.y/z` above 1,
  e.g. 16x16) in a kernel with CTA barriers whose loads and stores are mostly neither
  consecutive nor checked (the 16x16 shared-tile matmul: thread loops are 5x faster; only
  when the engine is the compiler's choice: `PTX2LLVM_CPU_MODE=warp` keeps it; the stride
  analysis does not yet treat a warp as `32 / %ntid.x` row segments, and launches whose
  block is unknown at compile time, libcuda's, keep the gathering warp function), and
  a `.sync` warp operation with a full or computed member
  mask in code some live lanes may skip (lanes meeting at different instructions, which lock
  step cannot pair); at -O0 it is not used. A `.sync` operation it runs whose member lanes are
  not all active there fails the launch naming the lanes. After a divergent loop `activemask`
  gives the reconverged lanes (the coroutine scheme may answer with the lanes that left it
  last). Elsewhere legacy warp-synchronous code (no `__syncwarp`) is not run in lock step: the
  lanes of a warp run one after another between synchronization points.
- Invalid memory accesses (null or unmapped addresses) in JIT-compiled kernels fail the launch
  with the block and thread (x86-64 Linux), and so do out-of-range shared and local addresses
  (guard pages around each CTA's shared block and around each thread's stack and `.local`
  memory); accesses past the end of a buffer into other valid memory, or past a `.local` array
  into the thread's own stack or another thread's, are not detected.
- Misaligned addresses: an `ld`, `st`, `atom` or `red` (vector forms: the whole vector's size;
  `.shared` as its offset in the CTA's block; global, shared, local, const and generic
  addresses) whose address is not a multiple of the access's size fails the launch as on the
  GPU (`CUDA_ERROR_MISALIGNED_ADDRESS`), naming the first faulting thread: `kernel k failed in
  block (1, 0, 0), thread (35, 0, 0): misaligned address: read of 4 bytes at 0x7f..c2`
  (`lower::memory::check_aligned`, `runtime/fault.rs` `ptx2llvm_rt_misaligned`;
  `lit/cpu/run-misaligned.ptx`), on the thread loops (`K.step`, privatized `red.add`
  included) and the coroutines. The warp engine tests at launch: where every address a
  kernel tests is a sum of its parameters, variables aligned enough and multiples of the
  access's size (`a + 4 * i`; every benchmark kernel), the launch tests those parameters'
  low bits once, and a launch where one is not clear runs on thread loops or coroutines,
  built then, which test each access (`llvm::simd::misaligned`, `--dump-plan`: `misaligned
  addresses`; `lit/cpu/run-simd-misaligned-launch.ptx`). Gaps: a warp-engine kernel with
  an address from loaded data (a pointer read from memory) or of another shape (the plan
  says `misaligned addresses: not tested`), and warp-engine kernels in objects (`--emit
  obj`, no second build to fall back to), perform a misaligned access as the host does
  (`PTX2LLVM_CPU_MODE=fission` or `coroutine` reports it; a kernel the warp engine refuses
  gets its tests back, `lit/cpu/run-simd-misaligned-refused.ptx`); accesses made by runtime calls (`ldmatrix`/`stmatrix`
  rows are checked there already, not `wmma.load/store`, `cp.async`, bulk copies, `mbarrier`
  objects, `st.async`/`red.async`) and `ld.param`/`st.param` (compiler-placed) are not tested.
- Objects (`--emit obj`) refuse `.shared` variables aligned to more than 4096 bytes
  (`ptx2llvm_rt_launch` aligns blocks to 4096); `run` and the APIs honour any alignment.
- External functions a module declares but does not define (e.g. numba's fp16 shims) are a
  load error naming them.
- `libcuda.so.1` (the CUDA driver API of `cuda/`) does not provide memory pools
  (`cuMemPool*`; `cuDeviceGetDefaultMemPool` is `CUDA_ERROR_NOT_SUPPORTED`), graph node
  kinds beyond kernel/memcpy/memset/host/empty (child graphs only through `cuGraphLaunch` in a
  capture, event nodes only through capture; no memory nodes: `cuMemAllocAsync` in a capture is
  `CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED`), graph editing after creation (`cuGraph*SetParams`,
  `cuGraphExecUpdate`, `cuGraphClone`, edges other than the dependencies given when a node is
  added), capture modes (kept per thread, not enforced), capture of the legacy or per-thread
  default stream, IPC of memory other than `cuMemAlloc`'s (pinned host, managed) and
  `cuIpcOpenMemHandle` in the exporting process (`CUDA_ERROR_INVALID_CONTEXT`, as NVIDIA's),
  CUDA arrays, textures and surfaces, virtual memory management,
  thread block clusters (`cuLaunchKernelEx` with a cluster dimension is
  `CUDA_ERROR_NOT_SUPPORTED`), multi-device cooperative launches, the device runtime beyond
  cooperative groups (`libcudadevrt.a` link inputs become `cuda/src/devrt.ptx`: `cudaCG*` only,
  no dynamic parallelism), GPU machine code (cubins, fatbins without
  PTX, LTO IR: `CUDA_ERROR_NO_BINARY_FOR_GPU`), compressed fatbins, or NVIDIA's undocumented
  export tables (`cuGetExportTable`); `cuGetProcAddress` reports what it
  lacks as the real driver does (a null function and the reason in the status). Work runs when it is submitted: streams do not overlap each other or the host.
- numba-cuda 0.30.4's own suite (`scripts/numba-suite.sh`, 2061 tests; session 19, run in 10
  shards with `NUMBA_SUITE_TESTS`, on a copy of the library, cuda-bindings 13.5): **1940 passed**,
  113 skipped (FP8 and cluster tests that need cc ≥ 8.9/9.0, numbast bindings, CuPy, torch,
  nvJitLink/LTO, multi-GPU, nvdisasm, test binaries built by the repository's Makefile,
  simulator-only), 8 failed, 0 errors (was 1921/23 failed/12 errors in session 17). Fixed since:
  the warp engine's nested-loop phi (11), `abi=\"c\"` void links (2), pytest-benchmark (12
  errors), stream capture and graphs (`cuda.core`'s graph builder, 1), fork detection (numba's
  `test_fork`: a child forked after `cuInit` now gets `CUDA_ERROR_NOT_INITIALIZED`, as from
  NVIDIA's driver, 1). The 8 failures: IPC (5) — numba-cuda 0.30.4 reads
  `CUipcMemHandle.reserved`, which cuda-bindings ≥ 13.4 no longer has (an opaque handle); with
  cuda-bindings 13.3.1 ahead on the path (`NUMBA_SUITE_PYTHONPATH`) all 5 pass against the
  library's memfd IPC, so 1945 pass; numba's CPU+CUDA cache sharing (2) — numba 0.68's source
  stamp is a hash of the file, numba-cuda 0.30.4's is (mtime, size), so each target finds the
  shared index stale and overwrites the other's data file (a version mismatch of the two
  packages, not the driver); `mbarrier` (1: `test_external_cooperative_func`; it passes since mbarrier
  runs on the cpu target, after this run).
";

/// Module and function directives the parser reads, in the manual's order.
pub const DIRECTIVES: &[&str] = &[
    ".version",
    ".target",
    ".address_size",
    ".entry",
    ".func",
    ".alias",
    ".callprototype",
    ".calltargets",
    ".branchtargets",
    ".reg",
    ".sreg",
    ".const",
    ".global",
    ".local",
    ".param",
    ".shared",
    ".tex",
    ".align",
    ".ptr",
    ".attribute",
    ".maxnreg",
    ".maxntid",
    ".reqntid",
    ".minnctapersm",
    ".maxnctapersm",
    ".noreturn",
    ".pragma",
    ".abi_preserve",
    ".abi_preserve_control",
    ".explicitcluster",
    ".reqnctapercluster",
    ".maxclusterrank",
    ".blocksareclusters",
    ".extern",
    ".visible",
    ".weak",
    ".common",
    ".file",
    ".loc",
    ".section",
];

/// The instruction and directive sections of `docs/COVERAGE.md`.
pub fn coverage_markdown() -> String {
    let table = isa();
    let mut out = String::new();
    out.push_str("# PTX coverage\n\n");
    out.push_str(
        "<!-- Generated from src/isa/ptx.isa by `ptx2llvm::isa::coverage::coverage_markdown()`; \
         do not edit. Regenerate with `UPDATE_COVERAGE=1 cargo test --test coverage_doc`. -->\n\n",
    );
    let _ = writeln!(
        out,
        "The instruction set is PTX ISA 9.2 as declared in `src/isa/ptx.isa`: {} opcodes, {} forms. \
         *forms* counts the syntax lines declared for the opcode: the manual's, plus the few \
         modifier orders real compilers also use, after expanding opcode placeholders such as the \
         video `vop`; *parsed* means the parser reads every form and the \
         checker validates its modifiers and operand shapes, and the operand types of the \
         general-purpose instructions (arithmetic, logic, shifts, comparisons, `cvt`, `mov`, \
         `ld`/`st`, atomics, warp operations; see `src/check/types.rs`); *nvptx* and *cpu* say how far each target \
         translates it (`{UNSUPPORTED}`: not yet). The nvptx column is held to the code by \
         `tests/coverage_realized.rs`, which translates every PTX input of the repository and \
         checks, per opcode, that what is said to be LLVM IR never went through inline PTX and \
         that every native claim is exercised.\n",
        Opcode::COUNT,
        table.forms().len()
    );
    out.push_str("## Instructions\n\n");
    out.push_str("| opcode | forms | parsed | nvptx | cpu |\n");
    out.push_str("| --- | ---: | --- | --- | --- |\n");
    for &op in Opcode::ALL {
        let _ = writeln!(
            out,
            "| `{}` | {} | yes | {} | {} |",
            op.spelling(),
            table.form_count(op),
            support(op, "nvptx"),
            support(op, "cpu")
        );
    }
    out.push_str(CPU_NOTES);
    out.push_str(CHECK_NOTES);
    let _ = write!(
        out,
        "{}",
        REQUIREMENT_NOTES.replace(
            "{N}",
            &super::requirements::requirements().all.len().to_string()
        )
    );
    out.push_str("\n## Directives\n\n");
    out.push_str("| directive | parsed |\n| --- | --- |\n");
    for d in DIRECTIVES {
        let _ = writeln!(out, "| `{d}` | yes |");
    }
    out.push_str(LINK_NOTES);
    out.push_str(DEBUG_NOTES);
    out
}

/// What the module linker (`src/link`, `ptx2llvm link`) does not do.
const LINK_NOTES: &str = "
### Linking (`ptx2llvm link`, `ptx2llvm::link`)

PTX inputs only (no cubin, fatbin, LTO-IR or `libcudadevrt.a` archives). DWARF `.section`s are
dropped from the linked module (their labels cannot be merged), and with them the `debug`
target option and the `function_name … inlined_at …` part of `.loc`; `.file`/`.loc` are kept,
renumbered per input. `.extern .shared` arrays are dynamic shared memory and are kept, not
resolved. A `.weak` declaration without a body that no input defines is an unresolved extern
(no weak-undefined null address). `.alias` directives are kept, renamed with their module's
local names. Two module-local `.entry` kernels of one name: the later one is renamed
(`k_$N`), so it is found under that name. A declaration may give a definition without return
parameters returns it never writes (numba's `abi=\"c\"` `void` functions); other signature
differences are errors.
";

/// What debug information (`src/lower/debug.rs`, `src/llvm/debug.rs`) does not keep.
const DEBUG_NOTES: &str = "
### Debug information (`.file`/`.loc`, `-g`)

- nvptx output keeps `.file`/`.loc` but not `function_name … inlined_at …`: LLVM 22's NVPTX
  printer does not write it, so an inlined line comes without the line it was inlined at (the
  IR and the host DWARF keep the chains).
- nvptx at -O2 keeps 207 of the corpus's 221 (kernel, file, line) (93.7%; the goal is 95%; all
  at -O0): LLVM's back end loses lines of instructions that MachineSink moves to another block
  (7), lines holding only kernel `ld.param`s, which LLVM makes without a location (5), and
  lines that SelectionDAG folds into an instruction of another line (2); `tests/debug_lines.rs`
  names them.
- nvptx `-g` describes registers as variables at -O0 only (ptxas 13.5 crashes on LLVM's -O2
  value locations for Triton's matmul).
- cpu without `-g` (thread loops): gdb line breakpoints stop once per CUDA thread, but
  `cuda-thread` knows only the block, there are no register variables, and in a loop that
  LLVM unrolled gdb breaks on the first copy of a line only, which may not run.
";
