//! Calls in the warp function that are not warp operations (`Warp::call`): LLVM intrinsics
//! by their vector forms or lane by lane, `llvm.prefetch` hints for the lines of a load's
//! runs (first and last lane of each, scalar copies for proven two-run loads), privatized
//! float additions, and every other call once per running lane in lane order with the
//! lane's ids stored in the thread context first. A child of `lanes` so that it shares the
//! lowering's private helpers.

use super::*;

impl Warp<'_> {
    /// A call that is not a warp operation.
    pub(in crate::llvm::simd) unsafe fn call(&mut self, i: LLVMValueRef) -> Result<(), String> {
        let name = ir::callee(i);
        if ignored_intrinsic(&name) {
            return Ok(());
        }
        if super::super::prefetch::is_prefetch(i) {
            self.prefetch(i);
            return Ok(());
        }
        match call_kind(i) {
            CallKind::SelfCtx => {
                self.set(i, self.ctx);
                Ok(())
            }
            CallKind::Warp(w) => self.warp_op(i, w),
            CallKind::Every => {
                let r = self.every();
                self.set(i, r);
                Ok(())
            }
            CallKind::Coarse => {
                // All 32 lanes launched: not a fault replay's single lane.
                let r = c::LLVMBuildICmp(
                    self.b,
                    llvm_sys::LLVMIntPredicate::LLVMIntEQ,
                    self.bits(self.launched),
                    c::LLVMConstAllOnes(self.i32),
                    c"".as_ptr(),
                );
                self.set(i, r);
                Ok(())
            }
            CallKind::Barrier(k) => {
                self.barrier(i, k);
                Ok(())
            }
            CallKind::Lanewise if self.facts.is_varying(i) => {
                let v = self.lanewise(i, &name);
                self.set(i, v);
                Ok(())
            }
            CallKind::Lanewise => {
                let nv = c::LLVMInstructionClone(i);
                for k in 0..c::LLVMGetNumArgOperands(i) {
                    let v = self.scalar(c::LLVMGetOperand(i, k));
                    c::LLVMSetOperand(nv, k, v);
                }
                c::LLVMInsertIntoBuilder(self.b, nv);
                self.set(i, nv);
                Ok(())
            }
            CallKind::PerLane => {
                // (A privatized float addition reads no lane ids.)
                let ids = !crate::runtime::red::FLOAT_ADD.contains(&name.as_str());
                if let Some(v) = self.per_lane(i, ids) {
                    self.set(i, v);
                }
                Ok(())
            }
        }
    }

    /// `llvm.prefetch` (`prefetch.rs`): a hint, so for lane pointers one per run's first and
    /// last lane (the lines a run of consecutive elements spans), whichever lanes run.
    unsafe fn prefetch(&mut self, i: LLVMValueRef) {
        let ptr = c::LLVMGetOperand(i, 0);
        let mut at = Vec::new();
        if self.facts.is_varying(ptr) {
            let gathered = self.gathered_base(ptr);
            let p = match gathered {
                Some((base, _, _)) => self.get(base, true),
                None => self.get(ptr, true),
            };
            let p = self.host_ptrs(p);
            let run = self.run();
            let step = match gathered {
                Some(_) => None,
                None => self.lane_step(ptr),
            };
            let n = c"".as_ptr();
            let i8t = c::LLVMInt8TypeInContext(self.cx);
            for r in 0..LANES / run {
                for l in [r * run, r * run + run - 1] {
                    // A run whose lanes share one address: its first lane's line is all.
                    if step == Some(0) && l != r * run {
                        continue;
                    }
                    at.push(match (gathered, step) {
                        (Some((_, off, rows)), _) => {
                            let x = if rows {
                                self.lane_of(p, l, LANE_OF_DEPTH)
                            } else {
                                c::LLVMBuildExtractElement(self.b, p, self.c32(u64::from(l)), n)
                            };
                            let mut idx = [off];
                            c::LLVMBuildGEP2(self.b, i8t, x, idx.as_mut_ptr(), 1, n)
                        }
                        // The run's last lane from its first (pushed just before): the lanes
                        // step by `step` bytes, and where a narrow index wrapped between them,
                        // the line prefetched is only another hint (matmul's `B` rows: the
                        // last lane's copy of the 32-bit index arithmetic, about four
                        // instructions per row and tile; a tile kernel's next-CTA store
                        // prefetch: an extraction, sign extension, multiply and add a row).
                        (None, Some(step)) if l != r * run => {
                            let first = *at.last().expect("the run's first lane");
                            let mut idx = [c::LLVMConstInt(
                                c::LLVMInt64TypeInContext(self.cx),
                                (i64::from(run - 1)).wrapping_mul(step) as u64,
                                1,
                            )];
                            c::LLVMBuildGEP2(self.b, i8t, first, idx.as_mut_ptr(), 1, n)
                        }
                        _ => self.lane_of(p, l, LANE_OF_DEPTH),
                    });
                }
            }
        } else {
            at.push(self.scalar(ptr));
        }
        for q in at {
            let mut tys = [self.ptr];
            let mut args = [
                q,
                c::LLVMGetOperand(i, 1),
                c::LLVMGetOperand(i, 2),
                c::LLVMGetOperand(i, 3),
            ];
            self.call_intrinsic("llvm.prefetch", &mut tys, &mut args);
        }
    }

    /// The bytes from one lane's prefetch pointer `q` to the next lane's within a run: the
    /// element size of the loads it is for when they take their lanes as consecutive elements
    /// (`consecutive_elem`), else `q`'s own lane stride when known (`Strides::of`: the next
    /// CTA's copy of a store's address, `prefetch::insert_next_cta`). A stride through a
    /// widening cast may break where the narrow value wraps; the prefetch is a hint then.
    unsafe fn lane_step(&self, q: LLVMValueRef) -> Option<i64> {
        self.consecutive_elem(q)
            .and_then(|size| i64::try_from(size).ok())
            .or_else(|| {
                self.facts
                    .strides
                    .of(q, &self.facts.varying)
                    .map(|st| st.step)
            })
    }

    /// The element size of the loads that prefetch pointer `q` is for, when they take their
    /// lanes as consecutive elements (`Access::Consecutive`, or `Checked`: consecutive unless
    /// a narrow index wrapped): `q` is such a load's pointer or a GEP of it by a uniform
    /// number of bytes (`prefetch.rs`: the address some iterations on, `p + D × step`). A run's
    /// last lane is then its first plus `run - 1` elements.
    unsafe fn consecutive_elem(&self, q: LLVMValueRef) -> Option<u64> {
        let base = if !c::LLVMIsAGetElementPtrInst(q).is_null()
            && c::LLVMGetNumOperands(q) == 2
            && !self.facts.is_varying(c::LLVMGetOperand(q, 1))
        {
            c::LLVMGetOperand(q, 0)
        } else {
            q
        };
        ir::users(base).into_iter().find_map(|u| {
            let t = c::LLVMTypeOf(u);
            let consecutive = ir::opcode(u) == O::LLVMLoad
                && c::LLVMGetOperand(u, 0) == base
                && !self.is_atomic(u)
                && matches!(
                    self.facts
                        .strides
                        .access(base, t, &self.facts.varying, self.td),
                    Access::Consecutive | Access::Checked
                );
            consecutive.then(|| llvm_sys::target::LLVMABISizeOfType(self.td, t))
        })
    }

    /// The pointer and offset when prefetch pointer `q` is a constant number of bytes from the
    /// pointer of a load whose lanes' addresses are tested at run time (`Access::Unknown`: the
    /// vector of addresses is built for its tests and its gather), as
    /// `prefetch::insert_next_cta` makes the next CTA's address of a linear tree. Then the
    /// prefetched lanes are that vector's lanes plus the constant (an extract each), not
    /// scalar copies of the address arithmetic (`lane_of`: ~8 instructions a lane, for which
    /// the vector's lanes are already there).
    ///
    /// The third value: whether such a load is one `load_rows` reads (`rows_load`), whose run
    /// pointers are scalar copies (`two_runs`): its vector of addresses then feeds only the
    /// cold gather, and the prefetch takes scalar copies too, which leave it there.
    unsafe fn gathered_base(&self, q: LLVMValueRef) -> Option<(LLVMValueRef, LLVMValueRef, bool)> {
        if c::LLVMIsAGetElementPtrInst(q).is_null()
            || c::LLVMGetNumOperands(q) != 2
            || ir::const_u64(c::LLVMGetOperand(q, 1)).is_none()
        {
            return None;
        }
        let base = c::LLVMGetOperand(q, 0);
        let loads: Vec<LLVMValueRef> = ir::users(base)
            .into_iter()
            .filter(|&u| {
                ir::opcode(u) == O::LLVMLoad
                    && c::LLVMGetOperand(u, 0) == base
                    && !self.is_atomic(u)
                    && self.facts.strides.access(
                        base,
                        c::LLVMTypeOf(u),
                        &self.facts.varying,
                        self.td,
                    ) == Access::Unknown
            })
            .collect();
        if loads.is_empty() {
            return None;
        }
        let rows = loads.iter().any(|&u| self.rows_load(u, base));
        Some((base, c::LLVMGetOperand(q, 1), rows))
    }

    /// Whether `load_tested` reads load `i` (at source pointer `ptr`, `Access::Unknown`) with
    /// `load_rows`: the same conditions, in the same order.
    unsafe fn rows_load(&self, i: LLVMValueRef, ptr: LLVMValueRef) -> bool {
        let et = c::LLVMTypeOf(i);
        let global = c::LLVMGetPointerAddressSpace(c::LLVMTypeOf(ptr)) != SHARED_AS;
        !stride::memory_indexed(ptr, &self.facts.varying, MEMORY_INDEXED_DEPTH)
            && global
            && self.per(et) == 1
            && !self.narrow(self.vty(et))
            && self
                .facts
                .strides
                .rows(
                    ptr,
                    et,
                    &self.facts.varying,
                    self.td,
                    c::LLVMGetInstructionParent(i),
                )
                .is_some()
    }

    /// An LLVM intrinsic through its vector form: the overloaded types (the name's trailing
    /// type suffixes) widen, and so do the arguments of those types.
    unsafe fn lanewise(&mut self, i: LLVMValueRef, name: &str) -> LLVMValueRef {
        if let Some((wide, w)) = ir::statically_rounded_fma(name) {
            // Not overloaded: one call of the 512-bit form per `w` lanes.
            let ops: Vec<LLVMValueRef> = (0..3)
                .map(|k| self.get(c::LLVMGetOperand(i, k), true))
                .collect();
            let imm = c::LLVMGetOperand(i, 3);
            let parts = (0..LANES / w)
                .map(|h| {
                    let mut args = [
                        self.slice(ops[0], h * w, w),
                        self.slice(ops[1], h * w, w),
                        self.slice(ops[2], h * w, w),
                        imm,
                    ];
                    self.call_intrinsic(wide, &mut [], &mut args)
                })
                .collect();
            return self.concat(parts);
        }
        let parts: Vec<&str> = name.split('.').collect();
        let k = parts
            .iter()
            .rev()
            .take_while(|s| ir::type_suffix(s))
            .count();
        let base = parts[..parts.len() - k].join(".");
        let scalars: Vec<String> = parts[parts.len() - k..]
            .iter()
            .map(|s| s.to_string())
            .collect();
        let fty = c::LLVMGlobalGetValueType(c::LLVMGetCalledValue(i));
        let nparams = c::LLVMCountParamTypes(fty) as usize;
        let mut ptys = vec![std::ptr::null_mut(); nparams];
        c::LLVMGetParamTypes(fty, ptys.as_mut_ptr());
        let ret = c::LLVMGetReturnType(fty);
        // Which scalar types the suffixes name: the return type and the parameters, in the
        // order the suffixes list them (LLVM's mangling).
        let mut cands: Vec<LLVMTypeRef> = Vec::new();
        for t in std::iter::once(ret).chain(ptys.iter().copied()) {
            if c::LLVMGetTypeKind(t) != LLVMTypeKind::LLVMStructTypeKind && !cands.contains(&t) {
                cands.push(t);
            }
            if c::LLVMGetTypeKind(t) == LLVMTypeKind::LLVMStructTypeKind {
                let e = c::LLVMStructGetTypeAtIndex(t, 0);
                if !cands.contains(&e) {
                    cands.push(e);
                }
            }
        }
        let mut over: Vec<LLVMTypeRef> = Vec::new();
        for s in &scalars {
            if let Some(&t) = cands
                .iter()
                .find(|&&t| type_name(t) == *s && !over.contains(&t))
            {
                over.push(t);
            }
        }
        let mut tys: Vec<LLVMTypeRef> = over.iter().map(|&t| c::LLVMVectorType(t, LANES)).collect();
        let mut args: Vec<LLVMValueRef> = Vec::new();
        for (k, &pt) in ptys.iter().enumerate() {
            let a = c::LLVMGetOperand(i, k as u32);
            args.push(self.get(a, over.contains(&pt)));
        }
        self.call_intrinsic(&base, &mut tys, &mut args)
    }

    /// Instruction `i` once per active lane, in lane order, on that lane's operands; with
    /// `ids`, the context holds the lane's ids during the call (runtime helpers read them).
    /// Returns the per-lane results as a vector (a struct of vectors for struct results).
    pub(super) unsafe fn per_lane(&mut self, i: LLVMValueRef, ids: bool) -> Option<LLVMValueRef> {
        let b = self.b;
        let n = c"".as_ptr();
        let rt = c::LLVMTypeOf(i);
        let has = c::LLVMGetTypeKind(rt) != LLVMTypeKind::LLVMVoidTypeKind;
        let vt = has.then(|| self.vty(rt));
        let nops = c::LLVMGetNumOperands(i) as u32;
        let ops: Vec<LLVMValueRef> = (0..nops)
            .map(|k| {
                let o = c::LLVMGetOperand(i, k);
                if !c::LLVMIsABasicBlock(o).is_null() || !c::LLVMIsAFunction(o).is_null() {
                    o
                } else {
                    self.get(o, false)
                }
            })
            .collect();
        let bits = self.bits(self.mask);
        let pre = c::LLVMGetInsertBlock(b);
        let body = self.append("lane");
        let done = self.append("lanes.done");
        let nz = c::LLVMBuildICmp(
            b,
            llvm_sys::LLVMIntPredicate::LLVMIntNE,
            bits,
            self.c32(0),
            n,
        );
        c::LLVMBuildCondBr(b, nz, body, done);
        c::LLVMPositionBuilderAtEnd(b, body);
        let left = c::LLVMBuildPhi(b, self.i32, n);
        // A privatized float addition checks a new address itself: its result is 0.
        let fadd = crate::runtime::red::FLOAT_ADD.contains(&ir::callee(i).as_str());
        let acc = vt.filter(|_| !fadd).map(|t| c::LLVMBuildPhi(b, t, n));
        let mut tys = [self.i32];
        let mut a = [left, c::LLVMConstInt(self.i1, 0, 0)];
        let lane = self.call_intrinsic("llvm.cttz", &mut tys, &mut a);
        if ids {
            self.store_ids(lane);
        }
        let mut nv = c::LLVMInstructionClone(i);
        for (k, &o) in ops.iter().enumerate() {
            let o = if self.is_vec(o) && c::LLVMIsABasicBlock(o).is_null() {
                c::LLVMBuildExtractElement(b, o, lane, n)
            } else {
                o
            };
            c::LLVMSetOperand(nv, k as u32, o);
        }
        if fadd {
            nv = self.float_add(nv);
        } else {
            c::LLVMInsertIntoBuilder(b, nv);
        }
        // The loop's back edge leaves from here (`float_add` adds blocks).
        let latch = c::LLVMGetInsertBlock(b);
        let acc2 = acc.map(|acc| self.insert_lane(acc, nv, lane));
        let one = self.c32(1);
        let dec = c::LLVMBuildSub(b, left, one, n);
        let rest = c::LLVMBuildAnd(b, left, dec, n);
        let again = c::LLVMBuildICmp(
            b,
            llvm_sys::LLVMIntPredicate::LLVMIntNE,
            rest,
            self.c32(0),
            n,
        );
        c::LLVMBuildCondBr(b, again, body, done);
        let mut v = [bits, rest];
        let mut bb = [pre, latch];
        c::LLVMAddIncoming(left, v.as_mut_ptr(), bb.as_mut_ptr(), 2);
        c::LLVMPositionBuilderAtEnd(b, done);
        if fadd {
            return vt.map(|t| c::LLVMConstNull(t));
        }
        let (acc, acc2, vt) = (acc?, acc2?, vt?);
        let mut v = [c::LLVMGetPoison(vt), acc2];
        c::LLVMAddIncoming(acc, v.as_mut_ptr(), bb.as_mut_ptr(), 2);
        let out = c::LLVMBuildPhi(b, vt, n);
        let mut v = [c::LLVMGetPoison(vt), acc2];
        c::LLVMAddIncoming(out, v.as_mut_ptr(), bb.as_mut_ptr(), 2);
        Some(out)
    }

    /// A lane's privatized float addition (`call`, not yet inserted: `ptx2llvm_rt_red_add_f32/f64
    /// (ptr, bits, checked)`, `runtime/red.rs`) with the runtime's common case inline: an
    /// addition to the address of the worker's previous one, while the log has room, appends
    /// itself to the log; anything else makes the call, and an address new to the log is
    /// checked here with a volatile atomic addition of 0 and logged by a second call (as
    /// `private_red.rs` does after the call), so that the lanes' results are 0. Inline because the call clobbers every vector register: made for
    /// each CTA's sum in a block reduction, it made the warp function keep its constants on
    /// the stack (`reduce_halving` +20%); the rare call is marked so (branch weights).
    unsafe fn float_add(&mut self, call: LLVMValueRef) -> LLVMValueRef {
        use crate::runtime::{abi::offset, red};
        let b = self.b;
        let n = c"".as_ptr();
        let i8t = c::LLVMInt8TypeInContext(self.cx);
        let ptrt = c::LLVMPointerTypeInContext(self.cx, 0);
        let c64 = |v: u64| c::LLVMConstInt(self.i64, v, 0);
        let at = |base: LLVMValueRef, off: LLVMValueRef| {
            let mut idx = [off];
            c::LLVMBuildGEP2(b, i8t, base, idx.as_mut_ptr(), 1, n)
        };
        let (ptr, bits) = (c::LLVMGetOperand(call, 0), c::LLVMGetOperand(call, 1));
        let wide = c::LLVMGetIntTypeWidth(c::LLVMTypeOf(bits)) == 64;
        let (look, fast, slow, join) = (
            self.append("fred.look"),
            self.append("fred.fast"),
            self.append("fred.slow"),
            self.append("fred.join"),
        );
        let tbl = c::LLVMBuildLoad2(b, ptrt, at(self.ctx, c64(offset::RED_TABLE as u64)), n);
        let have = c::LLVMBuildIsNotNull(b, tbl, n);
        let br = c::LLVMBuildCondBr(b, have, look, slow);
        self.unlikely_else(br);
        c::LLVMPositionBuilderAtEnd(b, look);
        let key = c::LLVMBuildPtrToInt(b, ptr, self.i64, n);
        let key = c::LLVMBuildOr(b, key, c64(wide as u64), n);
        let len = c::LLVMBuildLoad2(b, self.i64, at(tbl, c64(red::at::LOG_LEN)), n);
        let last = c::LLVMBuildLoad2(b, self.i64, at(tbl, c64(red::at::LOG_LAST)), n);
        use llvm_sys::LLVMIntPredicate as P;
        let room = c::LLVMBuildICmp(b, P::LLVMIntULT, len, c64(red::LOG as u64), n);
        let same = c::LLVMBuildICmp(b, P::LLVMIntEQ, last, key, n);
        let ok = c::LLVMBuildAnd(b, room, same, n);
        let br = c::LLVMBuildCondBr(b, ok, fast, slow);
        self.unlikely_else(br);
        c::LLVMPositionBuilderAtEnd(b, fast);
        let slot = c::LLVMBuildShl(b, len, c64(3), n);
        let kp = at(tbl, c::LLVMBuildAdd(b, slot, c64(red::at::LOG_KEY), n));
        c::LLVMBuildStore(b, key, kp);
        let vp = at(tbl, c::LLVMBuildAdd(b, slot, c64(red::at::LOG_VAL), n));
        c::LLVMBuildStore(b, c::LLVMBuildZExt(b, bits, self.i64, n), vp);
        let next = c::LLVMBuildAdd(b, len, c64(1), n);
        c::LLVMBuildStore(b, next, at(tbl, c64(red::at::LOG_LEN)));
        c::LLVMBuildBr(b, join);
        c::LLVMPositionBuilderAtEnd(b, slow);
        c::LLVMInsertIntoBuilder(b, call);
        let check = self.append("fred.check");
        let new = c::LLVMBuildICmp(b, P::LLVMIntNE, call, self.c32(0), n);
        c::LLVMBuildCondBr(b, new, check, join);
        c::LLVMPositionBuilderAtEnd(b, check);
        let again = c::LLVMInstructionClone(call);
        c::LLVMSetOperand(again, 2, self.c32(1));
        let probe = c::LLVMBuildAtomicRMW(
            b,
            llvm_sys::LLVMAtomicRMWBinOp::LLVMAtomicRMWBinOpAdd,
            ptr,
            c::LLVMConstNull(c::LLVMTypeOf(bits)),
            llvm_sys::LLVMAtomicOrdering::LLVMAtomicOrderingMonotonic,
            0,
        );
        c::LLVMSetVolatile(probe, 1);
        c::LLVMInsertIntoBuilder(b, again);
        c::LLVMBuildBr(b, join);
        c::LLVMPositionBuilderAtEnd(b, join);
        call
    }

    /// Branch weights on conditional branch `br`: its else side is rare.
    unsafe fn unlikely_else(&self, br: LLVMValueRef) {
        let md = |v: u64| c::LLVMValueAsMetadata(c::LLVMConstInt(self.i32, v, 0));
        let name = c"branch_weights";
        let mut ops = [
            c::LLVMMDStringInContext2(self.cx, name.as_ptr(), name.count_bytes()),
            md(1 << 20),
            md(1),
        ];
        let node = c::LLVMMDNodeInContext2(self.cx, ops.as_mut_ptr(), ops.len());
        let kind = c"prof";
        let id = c::LLVMGetMDKindIDInContext(self.cx, kind.as_ptr(), kind.count_bytes() as u32);
        c::LLVMSetMetadata(br, id, c::LLVMMetadataAsValue(self.cx, node));
    }

    /// `acc` with lane `lane` set to scalar `v` (field by field for structs).
    unsafe fn insert_lane(
        &self,
        acc: LLVMValueRef,
        v: LLVMValueRef,
        lane: LLVMValueRef,
    ) -> LLVMValueRef {
        let t = c::LLVMTypeOf(v);
        if c::LLVMGetTypeKind(t) == LLVMTypeKind::LLVMStructTypeKind {
            let mut out = acc;
            for k in 0..c::LLVMCountStructElementTypes(t) {
                let f = c::LLVMBuildExtractValue(self.b, acc, k, c"".as_ptr());
                let e = c::LLVMBuildExtractValue(self.b, v, k, c"".as_ptr());
                let f = c::LLVMBuildInsertElement(self.b, f, e, lane, c"".as_ptr());
                out = c::LLVMBuildInsertValue(self.b, out, f, k, c"".as_ptr());
            }
            return out;
        }
        c::LLVMBuildInsertElement(self.b, acc, v, lane, c"".as_ptr())
    }

    /// Stores lane `lane`'s `%tid`, `%laneid` and linear index in the context, for a runtime
    /// call that reads them (traps, printf, assertions name their thread).
    unsafe fn store_ids(&self, lane: LLVMValueRef) {
        use crate::runtime::abi::offset;
        let b = self.b;
        let put = |off: u32, v: LLVMValueRef| {
            let mut idx = [c::LLVMConstInt(self.i64, off as u64, 0)];
            let p = c::LLVMBuildGEP2(
                b,
                c::LLVMInt8TypeInContext(self.cx),
                self.ctx,
                idx.as_mut_ptr(),
                1,
                c"".as_ptr(),
            );
            c::LLVMBuildStore(b, v, p);
        };
        for k in 0..3 {
            let v = c::LLVMBuildExtractElement(b, self.tid[k], lane, c"".as_ptr());
            put(offset::TID + 4 * k as u32, v);
        }
        put(offset::LANEID, lane);
        let f = c::LLVMBuildExtractElement(b, self.flat, lane, c"".as_ptr());
        put(offset::FLAT_TID, f);
    }
}
