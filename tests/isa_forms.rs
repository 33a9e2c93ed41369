//! The instruction-form table (`src/isa/ptx.isa`) and the checker built on it: instructions
//! written as in the PTX manual are accepted, wrong modifiers, missing modifiers and wrong
//! operand counts or shapes are rejected with messages that say what was expected, names are
//! resolved, and every instruction of the real-compiler corpus (`tests/corpus/`) checks clean.

use std::path::{Path, PathBuf};

use ptx2llvm::check::{check, check_instruction};
use ptx2llvm::isa::forms::isa;
use ptx2llvm::isa::{InstructionExt, Mod, Opcode};
use ptx2llvm::syntax::ast::Instruction;
use ptx2llvm::syntax::diag::render_all;
use ptx2llvm::syntax::parse;

/// Wraps instruction lines in a module (sm_100a, PTX 9.2) with no declarations.
fn module_text(body: &str) -> String {
    format!(
        ".version 9.2\n.target sm_100a\n.address_size 64\n.visible .entry k()\n{{\n{body}\n}}\n"
    )
}

/// The form-check verdict for one instruction line: `None` when it fits a form.
fn verdict(line: &str) -> Option<String> {
    let src = module_text(line);
    let (m, diags) = parse(&src);
    assert!(
        diags.is_empty(),
        "`{line}` does not parse:\n{}",
        render_all(&diags, "t.ptx", &src)
    );
    let instrs = m.instructions();
    assert_eq!(instrs.len(), 1, "`{line}` is not one instruction");
    check_instruction(instrs[0]).map(|d| match &d.note {
        Some(n) => format!("{} [note: {n}]", d.message),
        None => d.message.clone(),
    })
}

fn accepted(line: &str) {
    if let Some(msg) = verdict(line) {
        panic!("`{line}` was rejected: {msg}");
    }
}

/// Asserts rejection and that the message contains every fragment.
fn rejected(line: &str, fragments: &[&str]) {
    match verdict(line) {
        None => panic!("`{line}` was accepted"),
        Some(msg) => {
            for f in fragments {
                assert!(msg.contains(f), "message for `{line}` lacks `{f}`:\n{msg}");
            }
        }
    }
}

#[test]
fn table_is_complete_and_consistent() {
    let table = isa();
    assert_eq!(table.forms().len(), ptx2llvm::isa::FORM_COUNT);
    assert!(
        table.forms().len() > 550,
        "only {} forms",
        table.forms().len()
    );
    for &op in Opcode::ALL {
        assert!(table.form_count(op) > 0, "`{}` has no form", op.spelling());
    }
    // Every opcode of the manual's reserved-keyword table (PTX ISA 9.2, table 2).
    for name in [
        "abs",
        "activemask",
        "add",
        "addc",
        "alloca",
        "and",
        "applypriority",
        "atom",
        "bar",
        "barrier",
        "bfe",
        "bfi",
        "bfind",
        "bmsk",
        "bra",
        "brev",
        "brkpt",
        "brx",
        "call",
        "clusterlaunchcontrol",
        "clz",
        "cnot",
        "copysign",
        "cos",
        "cp",
        "createpolicy",
        "cvt",
        "cvta",
        "discard",
        "div",
        "dp2a",
        "dp4a",
        "elect",
        "ex2",
        "exit",
        "fence",
        "fma",
        "fns",
        "getctarank",
        "griddepcontrol",
        "isspacep",
        "istypep",
        "ld",
        "ldmatrix",
        "ldu",
        "lg2",
        "lop3",
        "mad",
        "mad24",
        "madc",
        "mapa",
        "match",
        "max",
        "mbarrier",
        "membar",
        "min",
        "mma",
        "mov",
        "movmatrix",
        "mul",
        "mul24",
        "multimem",
        "nanosleep",
        "neg",
        "not",
        "or",
        "pmevent",
        "popc",
        "prefetch",
        "prefetchu",
        "prmt",
        "rcp",
        "red",
        "redux",
        "rem",
        "ret",
        "rsqrt",
        "sad",
        "selp",
        "set",
        "setmaxnreg",
        "setp",
        "shf",
        "shfl",
        "shl",
        "shr",
        "sin",
        "slct",
        "sqrt",
        "st",
        "stackrestore",
        "stacksave",
        "stmatrix",
        "sub",
        "subc",
        "suld",
        "suq",
        "sured",
        "sust",
        "szext",
        "tanh",
        "tcgen05",
        "tensormap",
        "testp",
        "tex",
        "tld4",
        "trap",
        "txq",
        "vabsdiff",
        "vabsdiff2",
        "vabsdiff4",
        "vadd",
        "vadd2",
        "vadd4",
        "vavrg2",
        "vavrg4",
        "vmad",
        "vmax",
        "vmax2",
        "vmax4",
        "vmin",
        "vmin2",
        "vmin4",
        "vote",
        "vset",
        "vset2",
        "vset4",
        "vshl",
        "vshr",
        "vsub",
        "vsub2",
        "vsub4",
        "wgmma",
        "wmma",
        "xor",
    ] {
        assert!(
            Opcode::from_spelling(name).is_some(),
            "opcode `{name}` is missing"
        );
    }
    // Spellings of the generated interface.
    assert_eq!(Mod::from_spelling(".shared::cta"), Some(Mod::SharedCta));
    assert_eq!(
        Mod::from_spelling(".L2::cache_hint"),
        Some(Mod::L2CacheHint)
    );
    assert_eq!(Mod::from_spelling(".L2::64B"), Some(Mod::L2_64B));
    assert_eq!(Mod::N2d.spelling(), ".2d");
}

#[test]
fn manual_examples_are_accepted() {
    for line in [
        // integer and extended precision
        "add.s32 %r1, %r2, %r3;",
        "add.sat.s32 %r1, %r2, 1;",
        "add.u16x2 %r1, %r2, %r3;",
        "add.cc.u32 %r1, %r2, %r3;",
        "addc.cc.u32 %r1, %r2, %r3;",
        "mad.wide.u32 %rd1, %r2, %r3, %rd4;",
        "mad.hi.sat.s32 %r1, %r2, %r3, %r4;",
        "mad.lo.cc.u32 %r1, %r2, %r3, %r4;",
        "madc.hi.cc.u32 %r1, %r2, %r3, %r4;",
        "mul.wide.s32 %rd1, %r1, 4;",
        "mul24.hi.u32 %r1, %r2, %r3;",
        "min.relu.s16x2 %r1, %r2, %r3;",
        "bfind.shiftamt.u64 %r1, %rd1;",
        "bfi.b32 %r1, %r2, %r3, 8, 4;",
        "szext.clamp.s32 %r1, %r2, %r3;",
        "bmsk.wrap.b32 %r1, 1, 2;",
        "dp4a.u32.s32 %r1, %r2, %r3, %r4;",
        "dp2a.lo.s32.u32 %r1, %r2, %r3, %r4;",
        "fns.b32 %r1, %r2, %r3, 1;",
        // floating point
        "add.rn.ftz.f32 %f1, %f2, %f3;",
        "add.rm.f32x2 %rd1, %rd2, %rd3;",
        "add.rn.bf16x2 %r1, %r2, %r3;",
        "add.rz.sat.f32.bf16 %f1, %rs1, %f2;",
        "fma.rn.ftz.sat.f32 %f1, %f2, %f3, %f4;",
        "fma.rn.oob.relu.bf16x2 %r1, %r2, %r3, %r4;",
        "fma.rn.f32.f16 %f1, %rs1, %rs2, %f2;",
        "mad.rn.f64 %fd1, %fd2, %fd3, %fd4;",
        "div.full.ftz.f32 %f1, %f2, %f3;",
        "div.rn.f64 %fd1, %fd2, %fd3;",
        "max.NaN.xorsign.abs.f16x2 %r1, %r2, %r3;",
        "max.ftz.NaN.abs.f32 %f1, %f2, %f3, %f4;",
        "rcp.approx.ftz.f64 %fd1, %fd2;",
        "rsqrt.approx.ftz.f64 %fd1, %fd2;",
        "ex2.approx.ftz.bf16 %rs1, %rs2;",
        "tanh.approx.bf16x2 %r1, %r2;",
        "testp.notanumber.f64 %p1, %fd1;",
        "copysign.f32 %f1, %f2, %f3;",
        // comparison and logic
        "setp.lt.s32 %p1, %r1, %r2;",
        "setp.lt.and.ftz.f32 %p1|%p2, %f1, %f2, !%p3;",
        "setp.eq.f16x2 %p1|%p2, %r1, %r2;",
        "set.gt.u32.f32 %r1, %f1, %f2;",
        "selp.f32 %f1, %f2, %f3, %p1;",
        "slct.ftz.f32.f32 %f1, %f2, %f3, %f4;",
        "lop3.b32 %r1, %r2, %r3, %r4, 0x96;",
        "lop3.or.b32 %r1|%p1, %r2, %r3, %r4, 0x3f, %p2;",
        "shf.l.wrap.b32 %r1, %r2, %r3, %r4;",
        "not.pred %p1, %p2;",
        // data movement
        "mov.u32 %r1, %tid.x;",
        "mov.u64 %rd1, sym+8;",
        "mov.b64 %rd1, {%r1, %r2};",
        "mov.b32 {%rs1, %rs2}, %r1;",
        "shfl.sync.bfly.b32 %r1|%p1, %r2, 1, 0x1f, 0xffffffff;",
        "prmt.b32.f4e %r1, %r2, %r3, %r4;",
        "ld.global.f32 %f1, [%rd1+4];",
        "ld.param::entry.u32 %r1, [p];",
        "ld.global.nc.v4.f32 {%f1, %f2, %f3, %f4}, [%rd1];",
        "ld.global.nc.L1::no_allocate.v2.f64 {%fd1, %fd2}, [%rd1];",
        "ld.global.L1::evict_last.L2::cache_hint.u32 %r1, [%rd1], %rd2;",
        "ld.relaxed.gpu.global.u32 %r1, [%rd1];",
        "ld.acquire.sys.shared::cluster.b64 %rd1, [%r1];",
        "ld.global.acquire.gpu.b32 %r1, [%rd1];",
        "st.global.release.gpu.b32 [%rd1], %r1;",
        "atom.global.acquire.gpu.add.s32 %r1, [%rd1], 1;",
        "red.global.add.release.gpu.u32 [%rd1], %r1;",
        "ld.global.L2::256B.v8.b32 {%r0, %r1, %r2, %r3, %r4, %r5, %r6, %r7}, [%rd1];",
        "ld.volatile.shared.u16 %rs1, [%r1];",
        "ld.b128 %rq1, [%rd1];",
        "ldu.global.v2.f32 {%f1, %f2}, [%rd1];",
        "st.global.v2.u64 [%rd1], {%rd2, %rd3};",
        "st.release.sys.global.u32 [%rd1], %r1;",
        "st.param::func.b32 [p+4], %r1;",
        "st.async.shared::cluster.mbarrier::complete_tx::bytes.v2.s32 [%r1], {%r2, %r3}, [%r4];",
        "st.bulk.weak.shared::cta [%r1], 128, 0;",
        "prefetch.global.L2::evict_last [%rd1];",
        "prefetchu.L1 [%rd1];",
        "prefetch.param.tensormap [p];",
        "applypriority.global.L2::evict_normal [%rd1], 128;",
        "discard.global.L2 [%rd1], 128;",
        "createpolicy.fractional.L2::evict_last.b64 %rd1, 1.0;",
        "createpolicy.range.global.L2::evict_last.L2::evict_first.b64 %rd1, [%rd2], 128, 512;",
        "isspacep.shared::cluster %p1, %rd1;",
        "cvta.to.global.u64 %rd1, %rd2;",
        "cvta.shared.u64 %rd1, sym;",
        "cvt.rn.f16x2.f32 %r1, %f1, %f2;",
        "cvt.rzi.s32.f32 %r1, %f1;",
        "cvt.f32.bf16 %f1, %rs1;",
        "cvt.rna.satfinite.tf32.f32 %r1, %f1;",
        "cvt.rn.satfinite.relu.e4m3x2.f32 %rs1, %f1, %f2;",
        "cvt.rs.satfinite.e4m3x4.f32 %r1, {%f1, %f2, %f3, %f4}, %r2;",
        "cvt.rn.satfinite.e2m1x2.f32 %rs1, %f1, %f2;",
        "cvt.rp.satfinite.ue8m0x2.bf16x2 %rs1, %r1;",
        "cvt.pack.sat.s8.s32.b32 %r1, %r2, %r3, %r4;",
        "mapa.shared::cluster.u32 %r1, %r2, %r3;",
        "getctarank.u64 %r1, %rd1;",
        // asynchronous copies and tensor maps
        "cp.async.ca.shared.global [%r1], [%rd1], 4;",
        "cp.async.cg.shared.global.L2::128B [%r1], [%rd1], 16, %r2;",
        "cp.async.commit_group;",
        "cp.async.wait_group 0;",
        "cp.async.wait_all;",
        "cp.async.mbarrier.arrive.noinc.shared.b64 [%r1];",
        "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%r1], [%rd1], 256, [%r2];",
        "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster [%r1], [%rd1], 256, [%r2], %rs1;",
        "cp.async.bulk.global.shared::cta.bulk_group.L2::cache_hint [%rd1], [%r1], 256, %rd2;",
        "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%r1], [%rd1, {%r2, %r3}], [%r4];",
        "cp.async.bulk.tensor.1d.global.shared::cta.bulk_group [%rd1, {%r2}], [%r1];",
        "cp.reduce.async.bulk.global.shared::cta.bulk_group.add.f32 [%rd1], [%r1], 64;",
        "cp.reduce.async.bulk.tensor.2d.global.shared::cta.add.tile.bulk_group [%rd1, {%r1, %r2}], [%r3];",
        "cp.async.bulk.prefetch.tensor.2d.L2.global [%rd1, {%r1, %r2}];",
        "cp.async.bulk.prefetch.L2.global [%rd1], 128;",
        "cp.async.bulk.commit_group;",
        "cp.async.bulk.wait_group.read 0;",
        "tensormap.replace.tile.global_address.shared::cta.b1024.b64 [%r1], %rd1;",
        "tensormap.replace.tile.box_dim.global.b1024.b32 [%rd1], 1, %r2;",
        "tensormap.cp_fenceproxy.global.shared::cta.tensormap::generic.release.gpu.sync.aligned [%rd1], [%r1], 128;",
        // synchronization and communication
        "bar.sync 0;",
        "barrier.sync.aligned 0, 128;",
        "bar.red.popc.u32 %r1, 0, !%p1;",
        "barrier.red.or.pred %p1, 1, 64, %p2;",
        "bar.warp.sync -1;",
        "barrier.cluster.arrive.release.aligned;",
        "barrier.cluster.wait.acquire;",
        "membar.gl;",
        "fence.acq_rel.gpu;",
        "fence.proxy.async.shared::cta;",
        "fence.proxy.tensormap::generic.release.gpu;",
        "fence.proxy.tensormap::generic.acquire.gpu [%rd1], 128;",
        "fence.mbarrier_init.release.cluster;",
        "atom.global.add.f32 %f1, [%rd1], %f2;",
        "atom.shared::cta.cas.b32 %r1, [%r2], %r3, %r4;",
        "atom.acq_rel.gpu.global.add.u64 %rd1, [%rd2], 1;",
        "atom.add.release.gpu.u32 %r1, [%rd1], %r2;",
        "atom.global.add.v2.f32 {%f1, %f2}, [%rd1], {%f3, %f4};",
        "atom.global.add.noftz.v2.f16x2 {%r1, %r2}, [%rd1], {%r3, %r4};",
        "atom.global.max.noftz.v8.bf16 {%rs1, %rs2, %rs3, %rs4, %rs5, %rs6, %rs7, %rs8}, [%rd1], {%rs1, %rs2, %rs3, %rs4, %rs5, %rs6, %rs7, %rs8};",
        "atom.relaxed.cta.shared.exch.b128 %rq1, [%r1], %rq2;",
        "red.global.add.u32 [%rd1], %r1;",
        "red.relaxed.gpu.global.add.noftz.bf16x2 [%rd1], %r1;",
        "red.async.relaxed.cluster.shared::cluster.mbarrier::complete_tx::bytes.add.u32 [%r1], %r2, [%r3];",
        "vote.sync.ballot.b32 %r1, !%p1, 0xffffffff;",
        "vote.sync.any.pred %p1, %p2, 0xffffffff;",
        "match.all.sync.b32 %r1|%p1, %r2, 0xffffffff;",
        "activemask.b32 %r1;",
        "redux.sync.max.abs.NaN.f32 %f1, %f2, 0xffffffff;",
        "elect.sync %r1|%p1, 0xffffffff;",
        "griddepcontrol.launch_dependents;",
        "mbarrier.init.shared::cta.b64 [%r1], 32;",
        "mbarrier.arrive.expect_tx.release.cta.shared::cta.b64 %rd1, [%r1], 1024;",
        "mbarrier.arrive.shared::cluster.b64 _, [%r1];",
        "mbarrier.try_wait.parity.shared::cta.b64 %p1, [%r1], %r2;",
        "mbarrier.try_wait.parity.relaxed.cluster.shared::cta.b64 %p1, [%r1], %r2, 1000;",
        "mbarrier.test_wait.acquire.cta.shared::cta.b64 %p1, [%r1], %rd1;",
        "mbarrier.pending_count.b64 %r1, %rd1;",
        "multimem.ld_reduce.relaxed.sys.global.add.u32 %r1, [%rd1];",
        "multimem.ld_reduce.global.add.acc::f32.v2.bf16x2 {%r1, %r2}, [%rd1];",
        "multimem.st.relaxed.gpu.global.f32 [%rd1], %f1;",
        "multimem.red.release.gpu.global.add.f16x2 [%rd1], %r1;",
        "clusterlaunchcontrol.try_cancel.async.shared::cta.mbarrier::complete_tx::bytes.b128 [%r1], [%r2];",
        "clusterlaunchcontrol.query_cancel.get_first_ctaid.v4.b32.b128 {%r1, %r2, %r3, _}, %rq1;",
        "setmaxnreg.inc.sync.aligned.u32 240;",
        // warp-level matrix instructions
        "wmma.load.a.sync.aligned.row.m16n16k16.global.f16 {%r1, %r2, %r3, %r4, %r5, %r6, %r7, %r8}, [%rd1], 16;",
        "wmma.mma.sync.aligned.row.col.m16n16k16.f32.f32 {%f1}, {%r1}, {%r2}, {%f2};",
        "wmma.store.d.sync.aligned.col.m16n16k8.shared.f32 [%r1], {%f1, %f2, %f3, %f4, %f5, %f6, %f7, %f8};",
        "wmma.mma.xor.popc.sync.aligned.row.col.m8n8k128.s32.b1.b1.s32 {%r1, %r2}, {%r3}, {%r4}, {%r5, %r6};",
        "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%f1, %f2, %f3, %f4}, {%r1, %r2, %r3, %r4}, {%r5, %r6}, {%f5, %f6, %f7, %f8};",
        "mma.sync.aligned.m8n8k4.row.row.f16.f16.f16.f16 {%r1}, {%r2}, {%r3}, {%r4};",
        "mma.sync.aligned.m16n8k32.row.col.satfinite.s32.s8.u8.s32 {%r1}, {%r2}, {%r3}, {%r4};",
        "mma.sync.aligned.m16n8k256.row.col.s32.b1.b1.s32.xor.popc {%r1}, {%r2}, {%r3}, {%r4};",
        "mma.sp::ordered_metadata.sync.aligned.m16n8k32.row.col.f32.f16.f16.f32 {%f1}, {%r1}, {%r2}, {%f2}, %r3, 0x0;",
        "mma.sync.aligned.m16n8k64.row.col.kind::mxf4nvf4.block_scale.scale_vec::4X.f32.e2m1.e2m1.f32.ue4m3 {%f1}, {%r1}, {%r2}, {%f2}, %r3, {0, 0}, %r4, {0, 0};",
        "ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%r1, %r2, %r3, %r4}, [%r5];",
        "ldmatrix.sync.aligned.m16n16.x1.trans.shared::cta.b8x16.b6x16_p32 {%r1, %r2}, [%r3];",
        "stmatrix.sync.aligned.m8n8.x4.shared.b16 [%r1], {%r2, %r3, %r4, %r5};",
        "movmatrix.sync.aligned.m8n8.trans.b16 %r1, %r2;",
        "wgmma.fence.sync.aligned;",
        "wgmma.mma_async.sync.aligned.m64n8k16.f32.bf16.bf16 {%f1, %f2, %f3, %f4}, %rd1, %rd2, %p1, 1, 1, 0, 0;",
        "wgmma.mma_async.sync.aligned.m64n256k32.f16.e4m3.e5m2 {%r1}, {%r2, %r3, %r4, %r5}, %rd1, 1, -1, -1;",
        "wgmma.mma_async.sp.sync.aligned.m64n16k64.satfinite.s32.u8.s8 {%r1}, %rd1, %rd2, %r3, 0, 1;",
        "wgmma.commit_group.sync.aligned;",
        "wgmma.wait_group.sync.aligned 0;",
        // tcgen05
        "tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [%r1], 32;",
        "tcgen05.dealloc.cta_group::2.sync.aligned.b32 %r1, 32;",
        "tcgen05.relinquish_alloc_permit.cta_group::1.sync.aligned;",
        "tcgen05.ld.sync.aligned.16x64b.x2.pack::16b.b32 {%r1, %r2}, [%r3];",
        "tcgen05.ld.sync.aligned.16x32bx2.x1.b32 {%r1}, [%r3], 16;",
        "tcgen05.ld.red.sync.aligned.32x32b.x2.min.abs.f32 {%f1, %f2}, %f3, [%r1];",
        "tcgen05.st.sync.aligned.32x32b.x2.b32 [%r1], {%r2, %r3};",
        "tcgen05.wait::st.sync.aligned;",
        "tcgen05.fence::before_thread_sync;",
        "tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.multicast::cluster.b64 [%r1], %rs1;",
        "tcgen05.cp.cta_group::1.128x256b.b8x16.b6x16_p32 [%r1], %rd1;",
        "tcgen05.cp.cta_group::2.64x128b.warpx2::02_13 [%r1], %rd1;",
        "tcgen05.shift.cta_group::1.down [%r1];",
        "tcgen05.mma.cta_group::1.kind::tf32 [%r1], %rd1, %rd2, %r2, %p1;",
        "tcgen05.mma.cta_group::2.kind::f16 [%r1], [%r2], %rd2, %r3, {%r4, %r5, %r6, %r7, %r8, %r9, %r10, %r11}, %p1, 1;",
        "tcgen05.mma.cta_group::1.kind::mxf8f6f4.block_scale.scale_vec::1X [%r1], %rd1, %rd2, %r2, [%r3], [%r4], %p1;",
        "tcgen05.mma.cta_group::1.kind::i8.collector::a::fill [%r1], %rd1, %rd2, %r2, %p1;",
        "tcgen05.mma.sp.cta_group::1.kind::f16 [%r1], %rd1, %rd2, [%r5], %r2, %p1;",
        "tcgen05.mma.ws.cta_group::1.kind::tf32.collector::b2::use [%r1], %rd1, %rd2, %r2, %p1, %rd3;",
        // textures and surfaces
        "tex.2d.v4.f32.f32 {%f1, %f2, %f3, %f4}, [tex, {%f5, %f6}];",
        "tex.level.2d.v4.f32.f32 {%f1, %f2, %f3, %f4}, [tex, smp, {%f5, %f6}], %f7;",
        "tld4.r.2d.v4.f32.f32 {%f1, %f2, %f3, %f4}, [tex, {%f5, %f6}];",
        "txq.width.b32 %r1, [tex];",
        "txq.level.height.b32 %r1, [tex], %r2;",
        "istypep.texref %p1, tex;",
        "suld.b.2d.b32.trap {%r1}, [surf, {%r2, %r3}];",
        "suld.b.a2d.cg.v4.b16.zero {%rs1, %rs2, %rs3, %rs4}, [surf, {%r1, %r2, %r3, %r4}];",
        "sust.p.2d.v4.b32.clamp [surf, {%r1, %r2}], {%r3, %r4, %r5, %r6};",
        "sured.b.add.2d.u32.trap [surf, {%r1, %r2}], %r3;",
        "suq.width.b32 %r1, [surf];",
        // control flow, stack, misc
        "bra.uni $L__BB0_1;",
        "brx.idx %r1, ts;",
        "call.uni (retval0), f, (param0, param1);",
        "call f;",
        "call (retval0), %rd1, (param0), proto;",
        "call.uni (retval0), f;",
        "ret.uni;",
        "exit;",
        "trap;",
        "brkpt;",
        "nanosleep.u32 100;",
        "pmevent.mask 0xff;",
        "alloca.u64 %rd1, 64, 16;",
        "stacksave.u64 %rd1;",
        "stackrestore.u32 %r1;",
        // video
        "vadd.s32.u32.s32.sat %r1, %r2.b0, %r3.h1;",
        "vadd.u32.u32.u32.add %r1, %r2, %r3, %r4;",
        "vsub.u32.u32.u32 %r1.b2, %r2, %r3, %r4;",
        "vshl.u32.u32.u32.clamp.min %r1, %r2, %r3, %r4;",
        "vmad.s32.s32.u32.sat.shr15 %r1, -%r2, %r3.h0, %r4;",
        "vset.u32.u32.lt %r1, %r2, %r3;",
        "vadd2.u32.u32.u32.sat %r1.h10, %r2.h32, %r3.h01, %r4;",
        "vavrg4.u32.u32.u32 %r1.b3210, %r2.b7654, %r3.b0000, %r4;",
        "vset4.s32.s32.ne.add %r1, %r2, %r3, %r4;",
    ] {
        accepted(line);
    }
}

#[test]
fn invalid_instructions_are_rejected_with_useful_messages() {
    // A modifier the opcode does not take.
    rejected(
        "add.rn.s32 %r1, %r2, %r3;",
        &[
            "modifier `.rn` is not allowed on `add` here",
            "expected one of:",
            "add.type",
        ],
    );
    // Right modifiers in an order ptxas rejects: the message gives the order the manual wants.
    // (`.lo`/`.full` belong to the instruction's name for ptxas: `mul.lo`, `div.full`.)
    rejected(
        "mul.u32.lo %r1, %r2, %r3;",
        &[
            "modifiers of `mul` are out of order: expected `mul.lo.u32`",
            "form: mul.mode.type",
        ],
    );
    rejected(
        "div.ftz.full.f32 %f1, %f2, %f3;",
        &["out of order: expected `div.full.ftz.f32`"],
    );
    // State spaces keep their order (destination first): this is not `cp.async.ca.shared.global`.
    rejected(
        "cp.async.ca.global.shared [%rd1], [%rd1], 4;",
        &["out of order: expected `cp.async.ca.shared.global`"],
    );
    // ptxas rejects `.parity` after the ordering, although one section of the manual writes it.
    rejected(
        "mbarrier.try_wait.acquire.cta.parity.shared::cta.b64 %p1, [%r1], %r2;",
        &["out of order: expected `mbarrier.try_wait.parity.acquire.cta.shared::cta.b64`"],
    );
    rejected("add.s32.s32 %r1, %r2, %r3;", &["repeated modifier `.s32`"]);
    rejected(
        "mov.f16x3 %r1, %r2;".replace("f16x3", "e4m3").as_str(),
        &["`.e4m3` is not allowed on `mov`"],
    );
    // Missing required modifiers, naming the placeholder and its values.
    rejected(
        "ld.global %r1, [%rd1];",
        &["`ld` is missing a `.type` modifier", "`.b8`"],
    );
    rejected(
        "cvt.f32 %f1, %r1;",
        &["`cvt` is missing a `.atype` modifier"],
    );
    rejected(
        "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16 {%f1}, {%r1}, {%r2}, {%f2};",
        &["`mma` is missing a `.ctype` modifier"],
    );
    rejected("bar.red.popc %r1, 0, %p1;", &["`bar` is missing `.u32`"]);
    rejected(
        "tcgen05.ld.sync.aligned.32x32b.b32 {%r1}, [%r2];",
        &["is missing a `.num` modifier", "`.x1`"],
    );
    rejected(
        "wgmma.mma_async.sync.aligned.m64n8k32.f32.f16.f16 {%f1}, %rd1, %rd2, %p1, 1, 1, 0, 0;",
        &["`wgmma` is missing `.sp`"],
    );
    // Wrong operand counts.
    rejected(
        "add.s32 %r1, %r2;",
        &["wrong number of operands for `add.s32`: expected 3 operands: d, a, b; found 2"],
    );
    rejected(
        "ld.global.f32 %f1, [%rd1], %rd2, %rd3;",
        &[
            "wrong number of operands for `ld.global.f32`",
            "expected 2 to 3 operands",
        ],
    );
    rejected("bar.sync;", &["expected 1 to 2 operands: a{, b}; found 0"]);
    rejected("ret 1;", &["expected 0 operands: none; found 1"]);
    // Wrong operand shapes.
    rejected(
        "ld.global.f32 %f1, %rd1;",
        &[
            "operand 2 of `ld.global.f32`",
            "expected an address in brackets",
        ],
    );
    rejected(
        "st.global.f32 %f1, [%rd1];",
        &["operand 1 of `st.global.f32`", "`[a]`"],
    );
    rejected(
        "mov.u32 %r1, [%rd1];",
        &["operand 2 of `mov.u32`", "not an address"],
    );
    rejected(
        "add.u32 %r1|%p1, %r2, %r3;",
        &["a pair `d|p` is not allowed here"],
    );
    rejected(
        "setp.eq.f16x2 %p1, %r1, %r2;",
        &["expected a pair of destinations `p|q`"],
    );
    rejected("add.s32 %r1, !%r2, %r3;", &["`!` negation is only allowed"]);
    rejected(
        "call.uni retval0, f, (param0);",
        &["expected a parenthesised list"],
    );
}

#[test]
fn decoded_view_answers_lowering_questions() {
    let src = module_text(
        "cvt.rn.f32.s32 %f1, %r1;\n\
         setp.lt.and.ftz.f32 %p1|%p2, %f1, %f2, !%p3;\n\
         ld.relaxed.gpu.global.L2::cache_hint.v4.u32 {%r1, %r2, %r3, %r4}, [%rd1], %rd2;\n\
         atom.add.release.gpu.u32 %r1, [%rd1], %r2;\n\
         vadd4.u32.u32.u32.sat %r1.b3210, %r2.b7654, %r3.b0000, %r4;\n\
         cp.async.ca.shared.global [%r1], [%rd1], 4;",
    );
    let (m, diags) = parse(&src);
    assert!(diags.is_empty());
    let i = m.instructions();
    let cvt = i[0].decode().expect("cvt decodes");
    assert_eq!(cvt.form().head, "cvt{.frnd}{.ftz}{.sat}.dtype.atype");
    assert_eq!(cvt.slot(".dtype"), Some(Mod::F32));
    assert_eq!(cvt.slot("atype"), Some(Mod::S32));
    assert_eq!(cvt.slot(".frnd"), Some(Mod::Rn));
    assert_eq!(i[0].types().as_slice(), &[Mod::F32, Mod::S32]);
    assert_eq!(i[0].rounding(), Some(Mod::Rn));

    assert_eq!(i[1].cmp_op(), Some(Mod::Lt));
    assert_eq!(i[1].bool_op(), Some(Mod::And));
    assert!(i[1].has(Mod::Ftz));

    assert_eq!(i[2].sem(), Some(Mod::Relaxed));
    assert_eq!(i[2].scope(), Some(Mod::Gpu));
    assert_eq!(i[2].space(), Some(Mod::Global));
    assert_eq!(i[2].vec_width(), Some(4));
    assert_eq!(i[2].slot(".level::cache_hint"), Some(Mod::L2CacheHint));
    assert_eq!(i[2].types().as_slice(), &[Mod::U32]);

    let atom = i[3].decode().expect("atom decodes");
    assert_eq!(atom.slot(".op"), Some(Mod::Add));
    assert_eq!(atom.sem(), Some(Mod::Release));
    assert_eq!(atom.scope(), Some(Mod::Gpu));

    // Byte selectors written after operands are not types.
    let v = i[4].decode().expect("vadd4 decodes");
    assert_eq!(v.types().as_slice(), &[Mod::U32, Mod::U32, Mod::U32]);
    assert_eq!(v.slot(".mask"), Some(Mod::B3210));
    assert_eq!(v.slot(".asel"), Some(Mod::B7654));

    let cp = i[5].decode().expect("cp.async decodes");
    assert_eq!(cp.spaces().as_slice(), &[Mod::Shared, Mod::Global]);
}

/// Runs the whole checker on a module body and returns the rendered diagnostics.
fn check_body(decls_and_body: &str) -> String {
    let src = module_text(decls_and_body);
    let (m, diags) = parse(&src);
    assert!(
        diags.is_empty(),
        "does not parse:\n{}",
        render_all(&diags, "t.ptx", &src)
    );
    render_all(&check(&m), "t.ptx", &src)
}

#[test]
fn names_are_resolved_in_scope() {
    let ok = check_body(
        ".reg .b32 %r<5>;\n.reg .b64 %rd<3>;\n.reg .pred %p<2>;\n.shared .align 4 .b8 buf[64];\n\
         mov.u32 %r1, %tid.x;\nmov.u32 %r2, %envreg3;\nmov.u64 %rd1, %clock64;\nmov.u32 %r3, %laneid;\n\
         mov.u32 %r4, buf;\nsetp.eq.s32 %p1, %r1, 0;\n@%p1 bra $L__done;\n\
         {\n.reg .b32 %t;\nadd.s32 %t, %r1, 1;\nL1:\n@!%p1 bra L1;\n}\n\
         {\nL1:\nbra L1;\n}\n$L__done:\nret;",
    );
    assert_eq!(ok, "", "valid names were rejected:\n{ok}");

    let bad = check_body(".reg .b32 %r<5>;\nadd.s32 %r5, %r1, %r2;\nret;");
    assert!(
        bad.contains("t.ptx:7:9: error: `%r5` is not declared"),
        "{bad}"
    );
    assert!(bad.contains("declare registers with `.reg`"), "{bad}");

    let bad =
        check_body(".reg .b32 %r<2>;\n{\n.reg .b32 %t;\nmov.u32 %t, 1;\n}\nmov.u32 %r1, %t;\nret;");
    assert!(
        bad.contains("`%t` is not declared"),
        "inner-block register leaked:\n{bad}"
    );

    let bad = check_body("L1:\nL1:\nbra L1;\nret;");
    assert!(bad.contains("duplicate label `L1`"), "{bad}");

    let bad = check_body(".reg .b32 %r<2>;\nbra L_missing;\nbra %r1;\nret;");
    assert!(
        bad.contains("branch target `L_missing` is not a label in scope"),
        "{bad}"
    );
    assert!(
        bad.contains("`bra` needs a label, but `%r1` is not one"),
        "{bad}"
    );

    let bad = check_body(".reg .b32 %r<2>;\n.reg .b32 %r<3>;\nret;");
    assert!(
        bad.contains("`%r<3>` is already declared in this block"),
        "{bad}"
    );

    let bad = check_body("ld.global.u32 %q, [nowhere];\nret;");
    assert!(bad.contains("`%q` is not declared"), "{bad}");
    assert!(bad.contains("`nowhere` is not declared"), "{bad}");
}

#[test]
fn form_errors_render_with_file_line_and_caret() {
    let out = check_body(".reg .b32 %r<4>;\nadd.rn.s32 %r1, %r2, %r3;\nret;");
    let mut lines = out.lines();
    assert_eq!(
        lines.next(),
        Some(
            "t.ptx:7:1: error: modifier `.rn` is not allowed on `add` here; expected one of: add.type, \
             add{.sat}.s32, add.cc.type, add{.rnd}{.ftz}{.sat}.f32, add{.rnd}{.ftz}.f32x2, add{.rnd}.f64, …"
        ),
        "{out}"
    );
    assert_eq!(lines.next(), Some("add.rn.s32 %r1, %r2, %r3;"));
    assert_eq!(lines.next(), Some("^~~~~~~~~~"));
    assert!(lines
        .next()
        .is_some_and(|n| n.starts_with("note: closest form: add.type d, a, b; .type = {")));
}

#[test]
fn header_is_checked() {
    let src = ".version 7.8\n.target sm_90a\n.address_size 64\n";
    let (m, diags) = parse(src);
    assert!(diags.is_empty());
    let out = render_all(&check(&m), "t.ptx", src);
    assert!(
        out.contains(
            "target `sm_90a` requires PTX ISA 8.0 or later, but the module declares `.version 7.8`"
        ),
        "{out}"
    );
}

/// A deterministic stream of arbitrary instructions: the checker must never panic.
#[test]
fn arbitrary_instructions_do_not_panic() {
    use ptx2llvm::syntax::ast::{Address, Expr, Operand};
    use ptx2llvm::syntax::span::Span;
    let mut seed: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut next = move |n: usize| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        (seed % n as u64) as usize
    };
    let sp = Span::default();
    for _ in 0..3000 {
        let opcode = Opcode::ALL[next(Opcode::ALL.len())];
        let mut mods = smallvec::SmallVec::new();
        for _ in 0..next(7) {
            // Mostly modifiers the opcode's forms use, sometimes any modifier.
            let forms: Vec<_> = isa().forms_of(opcode).collect();
            let f = forms[next(forms.len())];
            if !f.slots.is_empty() && next(4) != 0 {
                let s = &f.slots[next(f.slots.len())];
                if let Some(alt) = s.alts().get(next(s.alts().len().max(1))) {
                    mods.extend(alt.iter().copied());
                }
            } else {
                mods.push(Mod::ALL[next(Mod::ALL.len())]);
            }
        }
        let mut operands = Vec::new();
        for _ in 0..next(8) {
            operands.push(match next(6) {
                0 => Operand::Name {
                    name: "%r1",
                    comp: None,
                    negated: next(2) == 0,
                    span: sp,
                },
                1 => Operand::Imm(Expr::Int {
                    value: 1,
                    unsigned: false,
                    span: sp,
                }),
                2 => Operand::Addr(Address {
                    base: Some("%rd1"),
                    offset: 0,
                    span: sp,
                }),
                3 => Operand::Vec(vec![], sp),
                4 => Operand::List(vec![], sp),
                _ => Operand::Sink(sp),
            });
        }
        let instr = Instruction {
            guard: None,
            opcode,
            mods,
            operands,
            post_ops: Default::default(),
            span: sp,
            op_span: sp,
            id: ptx2llvm::syntax::ast::InstrId::SYNTHETIC,
        };
        let _ = check_instruction(&instr);
        let _ = instr.types();
        let _ = instr.cmp_op();
    }
}

fn corpus_files() -> Vec<PathBuf> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        let entries =
            std::fs::read_dir(dir).unwrap_or_else(|e| panic!("cannot read {}: {e}", dir.display()));
        for e in entries {
            let p = e.expect("directory entry").path();
            if p.is_dir() {
                walk(&p, out);
            } else if p.extension().is_some_and(|x| x == "ptx") {
                out.push(p);
            }
        }
    }
    let mut v = Vec::new();
    walk(
        &Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests")
            .join("corpus"),
        &mut v,
    );
    v.sort();
    v
}

/// Every instruction of every corpus file fits a form, and the whole checker is silent.
#[test]
fn every_corpus_instruction_checks_clean() {
    let files = corpus_files();
    assert!(
        files.len() >= 100,
        "expected the corpus under tests/corpus, found {} files",
        files.len()
    );
    let mut failures = Vec::new();
    let mut instructions_checked = 0usize;
    for path in &files {
        let src = std::fs::read_to_string(path).expect("read corpus file");
        let name = path.display().to_string();
        let (m, diags) = parse(&src);
        if !diags.is_empty() {
            failures.push(format!(
                "{name}: does not parse:\n{}",
                render_all(&diags[..1], &name, &src)
            ));
            continue;
        }
        for i in m.instructions() {
            instructions_checked += 1;
            assert!(i.decode().is_ok() == check_instruction(i).is_none());
        }
        let diags = check(&m);
        if !diags.is_empty() {
            let shown = &diags[..diags.len().min(5)];
            failures.push(format!(
                "{name}: {} diagnostic(s):\n{}",
                diags.len(),
                render_all(shown, &name, &src)
            ));
        }
    }
    assert!(
        instructions_checked > 20_000,
        "only {instructions_checked} instructions checked"
    );
    assert!(
        failures.is_empty(),
        "{} corpus files fail:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn absurd_modifier_lists_are_rejected_quickly() {
    let line = format!("add{} %r1, %r2, %r3;", ".s32".repeat(5000));
    let start = std::time::Instant::now();
    rejected(
        &line,
        &["repeated modifier `.s32` is not allowed on `add` here"],
    );
    assert!(start.elapsed().as_secs() < 5);
}

/// ptxas reads modifiers as a set except for instruction names, types and state spaces
/// (`src/isa/order.rs`); `fmt` prints the manual's order. Each line: as written, as printed.
#[test]
fn modifiers_in_any_order_ptxas_takes_decode_to_the_manuals_order() {
    let cases = [
        ("add.f32.rn %f1, %f2, %f3;", "add.rn.f32"),
        ("add.ftz.rn.f32 %f1, %f2, %f3;", "add.rn.ftz.f32"),
        ("div.ftz.rn.f32 %f1, %f2, %f3;", "div.rn.ftz.f32"),
        ("cvt.f32.rn.f64 %f1, %fd1;", "cvt.rn.f32.f64"),
        ("cvt.ftz.rn.f32.f64 %f1, %fd1;", "cvt.rn.ftz.f32.f64"),
        ("ld.f32.global %f1, [%rd1];", "ld.global.f32"),
        ("ld.nc.global.f32 %f1, [%rd1];", "ld.global.nc.f32"),
        ("setp.f32.lt %p1, %f1, %f2;", "setp.lt.f32"),
        (
            "shfl.bfly.sync.b32 %r1, %r2, 1, 31, -1;",
            "shfl.sync.bfly.b32",
        ),
        (
            "atom.global.f32.add %f1, [%rd1], %f2;",
            "atom.global.add.f32",
        ),
        (
            "atom.global.gpu.acq_rel.add.f32 %f1, [%rd1], %f2;",
            "atom.acq_rel.gpu.global.add.f32",
        ),
        (
            "ldmatrix.sync.aligned.x4.trans.m8n8.shared.b16 {%r1, %r2, %r3, %r4}, [%rd1];",
            "ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16",
        ),
        ("mul.lo.u32 %r1, %r2, %r3;", "mul.lo.u32"),
    ];
    for (line, printed) in cases {
        accepted(line);
        let src = module_text(line);
        let (m, _) = parse(&src);
        let text = ptx2llvm::syntax::printer::print_module(&m);
        assert!(
            text.contains(&format!("{printed} ")),
            "`{line}` should print as `{printed}`:\n{text}"
        );
    }
}
