//! Graphs and stream capture: record and replay. Work runs when it is submitted, so a graph
//! is a list of pieces of work (`Work`: a closure that performs one operation on a stream,
//! with its arguments — a kernel's parameter buffer, a copy's addresses — taken when the node
//! was made) and an instantiated graph runs them in order on the stream it is launched on.
//! Nodes can only depend on nodes that exist when they are added, so the order in which they
//! were added is a topological order, and running them one after another honours every edge.
//!
//! Capture: `cuStreamBeginCapture` gives the stream a capture session; the operations that
//! check `stream::capture` (launches, copies, memsets, host functions, event records) add a
//! node to the session's graph instead of running. An event recorded in a capturing stream
//! carries the session, and a stream that waits for it joins the capture (the fork/join
//! pattern); `cuStreamEndCapture` on the origin stream ends it for every joined stream.
//! Synchronizing a capturing stream invalidates the capture (`CUDA_ERROR_STREAM_CAPTURE_
//! UNSUPPORTED`, then `..._INVALIDATED` at the end), as on NVIDIA's driver. Not modelled:
//! capture modes (`cuThreadExchangeStreamCaptureMode` keeps the thread's mode but nothing
//! checks it), the legacy default stream's implicit synchronization with capturing streams,
//! and stream-ordered allocation nodes (`cuMemAllocAsync` in a capture is refused).

use std::cell::Cell;
use std::ffi::{c_int, c_uint, c_void};
use std::sync::atomic::{AtomicPtr, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use crate::types::*;
use crate::{loader, memory, out, stream, CuResult};

/// One operation, replayed on the stream a graph is launched on.
pub type Work = Arc<dyn Fn(CUstream) -> CuResult + Send + Sync>;

/// `CUgraphNodeType`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(C)]
pub enum NodeType {
    Kernel = 0,
    Memcpy = 1,
    Memset = 2,
    Host = 3,
    Graph = 4,
    Empty = 5,
    WaitEvent = 6,
    EventRecord = 7,
}

/// A node: its type, its work (none for empty nodes) and the nodes it depends on.
pub struct Node {
    pub kind: NodeType,
    work: Option<Work>,
    deps: Vec<usize>,
}

/// A graph (`CUgraph`): nodes in the order they were added, and the user-object references
/// it holds.
#[derive(Default)]
pub struct Graph {
    nodes: Mutex<Vec<Arc<Node>>>,
    users: Mutex<Vec<Arc<UserObject>>>,
}

/// An instantiated graph (`CUgraphExec`): the work in order, and the user-object references
/// copied from its graph when it was instantiated.
pub struct Exec {
    work: Vec<Work>,
    users: Vec<Arc<UserObject>>,
}

/// A user object (`cuUserObjectCreate`): the caller's pointer and destructor, called when
/// the last reference (the caller's, or a graph's or an instance's) is released.
pub struct UserObject {
    ptr: usize,
    destroy: usize,
    refs: Mutex<u32>,
}

impl UserObject {
    fn retain(&self, n: u32) {
        *lock(&self.refs) += n;
    }

    /// Drops `n` references; the last runs the destructor (on the releasing thread: the
    /// driver's destructors may not call CUDA, and this one calls none).
    fn release(self: &Arc<Self>, n: u32) -> CuResult {
        let left = {
            let mut r = lock(&self.refs);
            *r = r.checked_sub(n).ok_or(CUresult::ErrorInvalidValue)?;
            *r
        };
        if left == 0 {
            lock(&USER_OBJECTS).retain(|u| !Arc::ptr_eq(u, self));
            // SAFETY: the caller's destructor (a `CUhostFn` address) with its pointer.
            let f: unsafe extern "C" fn(*mut c_void) = unsafe { std::mem::transmute(self.destroy) };
            // SAFETY: as above.
            unsafe { f(self.ptr as *mut c_void) };
        }
        Ok(())
    }
}

impl Drop for Exec {
    fn drop(&mut self) {
        for u in &self.users {
            let _ = u.release(1);
        }
    }
}

static USER_OBJECTS: Mutex<Vec<Arc<UserObject>>> = Mutex::new(Vec::new());

fn user_object(u: CUuserObject) -> CuResult<Arc<UserObject>> {
    lock(&USER_OBJECTS)
        .iter()
        .find(|x| std::ptr::eq(Arc::as_ptr(x).cast(), u))
        .cloned()
        .ok_or(CUresult::ErrorInvalidValue)
}

/// `cuUserObjectCreate` (`flags` must be `CU_USER_OBJECT_NO_DESTRUCTOR_SYNC`).
///
/// # Safety
/// `u` null or writable; `destroy` callable with `ptr` when the last reference goes.
pub unsafe fn user_object_create(
    u: *mut CUuserObject,
    ptr: *mut c_void,
    destroy: HostFn,
    refs: c_uint,
    flags: c_uint,
) -> CuResult {
    crate::non_null(u)?;
    let destroy = destroy.ok_or(CUresult::ErrorInvalidValue)?;
    if flags != 1 || refs == 0 {
        return Err(CUresult::ErrorInvalidValue);
    }
    let obj = Arc::new(UserObject {
        ptr: ptr as usize,
        destroy: destroy as usize,
        refs: Mutex::new(refs),
    });
    let h = Arc::as_ptr(&obj) as CUuserObject;
    lock(&USER_OBJECTS).push(obj);
    // SAFETY: checked non-null.
    unsafe { out(u, h) }
}

/// `cuUserObjectRetain`.
pub fn user_object_retain(u: CUuserObject, n: c_uint) -> CuResult {
    if n == 0 {
        return Err(CUresult::ErrorInvalidValue);
    }
    user_object(u)?.retain(n);
    Ok(())
}

/// `cuUserObjectRelease`.
pub fn user_object_release(u: CUuserObject, n: c_uint) -> CuResult {
    if n == 0 {
        return Err(CUresult::ErrorInvalidValue);
    }
    user_object(u)?.release(n)
}

/// `cuGraphRetainUserObject`: the graph takes `n` references (moved from the caller's with
/// `CU_GRAPH_USER_OBJECT_MOVE`).
pub fn graph_retain_user_object(g: CUgraph, u: CUuserObject, n: c_uint, flags: c_uint) -> CuResult {
    let gr = graph(g)?;
    let obj = user_object(u)?;
    if n == 0 || flags & !1 != 0 {
        return Err(CUresult::ErrorInvalidValue);
    }
    if flags & 1 == 0 {
        obj.retain(n);
    }
    let mut users = lock(&gr.users);
    for _ in 0..n {
        users.push(obj.clone());
    }
    Ok(())
}

/// `cuGraphReleaseUserObject`: the graph drops `n` of its references.
pub fn graph_release_user_object(g: CUgraph, u: CUuserObject, n: c_uint) -> CuResult {
    let gr = graph(g)?;
    let obj = user_object(u)?;
    {
        let mut users = lock(&gr.users);
        let held = users.iter().filter(|x| Arc::ptr_eq(x, &obj)).count();
        if n == 0 || held < n as usize {
            return Err(CUresult::ErrorInvalidValue);
        }
        let mut left = n;
        users.retain(|x| {
            if left > 0 && Arc::ptr_eq(x, &obj) {
                left -= 1;
                false
            } else {
                true
            }
        });
    }
    obj.release(n)
}

/// A capture in progress: the graph it fills, its id, and whether an unsupported call
/// invalidated it.
pub struct Session {
    pub graph: Arc<Graph>,
    pub id: u64,
    pub invalid: Mutex<bool>,
    /// The stream that began the capture (the one that must end it).
    pub origin: usize,
    /// The node the next captured operation depends on (the last one added; null before
    /// the first). Its address is what `cuStreamGetCaptureInfo` answers as the dependency
    /// array, valid while the capture runs.
    tail: AtomicPtr<c_void>,
    /// Serializes `record`.
    order: Mutex<()>,
    /// Set by `cuStreamEndCapture`: an event recorded in the capture no longer joins streams.
    pub ended: std::sync::atomic::AtomicBool,
}

static GRAPHS: Mutex<Vec<Arc<Graph>>> = Mutex::new(Vec::new());
static EXECS: Mutex<Vec<Arc<Exec>>> = Mutex::new(Vec::new());
static NEXT_CAPTURE: AtomicU64 = AtomicU64::new(1);

thread_local! {
    /// This thread's `CUstreamCaptureMode` (`cuThreadExchangeStreamCaptureMode`).
    static MODE: Cell<c_int> = const { Cell::new(0) };
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

fn graph(g: CUgraph) -> CuResult<Arc<Graph>> {
    lock(&GRAPHS)
        .iter()
        .find(|x| std::ptr::eq(Arc::as_ptr(x).cast(), g))
        .cloned()
        .ok_or(CUresult::ErrorInvalidValue)
}

fn exec(e: CUgraphExec) -> CuResult<Arc<Exec>> {
    lock(&EXECS)
        .iter()
        .find(|x| std::ptr::eq(Arc::as_ptr(x).cast(), e))
        .cloned()
        .ok_or(CUresult::ErrorInvalidValue)
}

fn new_graph() -> Arc<Graph> {
    let g = Arc::new(Graph::default());
    lock(&GRAPHS).push(g.clone());
    g
}

impl Graph {
    /// Adds a node after `deps` (node handles of this graph) and answers its handle.
    fn add(&self, kind: NodeType, work: Option<Work>, deps: &[usize]) -> CuResult<CUgraphNode> {
        let mut nodes = lock(&self.nodes);
        if deps
            .iter()
            .any(|&d| !nodes.iter().any(|n| Arc::as_ptr(n) as usize == d))
        {
            return Err(CUresult::ErrorInvalidValue);
        }
        let n = Arc::new(Node {
            kind,
            work,
            deps: deps.to_vec(),
        });
        let h = Arc::as_ptr(&n) as CUgraphNode;
        nodes.push(n);
        Ok(h)
    }
}

impl Session {
    /// Adds captured work after the previous captured node.
    pub fn record(&self, kind: NodeType, work: Work) -> CuResult {
        let _one = lock(&self.order);
        let tail = self.tail.load(Ordering::Acquire);
        let deps: Vec<usize> = (!tail.is_null())
            .then_some(tail as usize)
            .into_iter()
            .collect();
        let h = self.graph.add(kind, Some(work), &deps)?;
        self.tail.store(h, Ordering::Release);
        Ok(())
    }

    /// Marks the capture invalid (an operation a capture cannot hold was called).
    pub fn invalidate(&self) {
        *lock(&self.invalid) = true;
    }
}

/// A new capture session begun by stream `origin` (`cuStreamBeginCapture`).
pub fn begin_session(origin: CUstream) -> Arc<Session> {
    Arc::new(Session {
        graph: Arc::new(Graph::default()),
        id: NEXT_CAPTURE.fetch_add(1, Ordering::Relaxed),
        invalid: Mutex::new(false),
        origin: origin as usize,
        tail: AtomicPtr::new(std::ptr::null_mut()),
        order: Mutex::new(()),
        ended: std::sync::atomic::AtomicBool::new(false),
    })
}

/// `cuStreamEndCapture`: the captured graph (registered now), or the invalidation error.
///
/// # Safety
/// `g` null or writable.
pub unsafe fn end_capture(s: CUstream, g: *mut CUgraph) -> CuResult {
    crate::non_null(g)?;
    let session = stream::end_capture(s)?;
    if *lock(&session.invalid) {
        // SAFETY: checked non-null.
        unsafe { out(g, std::ptr::null_mut())? };
        return Err(CUresult::ErrorStreamCaptureInvalidated);
    }
    lock(&GRAPHS).push(session.graph.clone());
    // SAFETY: checked non-null.
    unsafe { out(g, Arc::as_ptr(&session.graph) as CUgraph) }
}

/// `cuStreamGetCaptureInfo` (every version): status, id, graph, and the one dependency the
/// next captured node gets (edge data: none).
///
/// # Safety
/// Out-pointers null or writable; `deps` gets a pointer into the session that stays valid
/// while the capture runs.
pub unsafe fn capture_info(
    s: CUstream,
    status: *mut c_int,
    id: *mut u64,
    g: *mut CUgraph,
    deps: *mut *const CUgraphNode,
    edges: *mut *const c_void,
    n: *mut usize,
) -> CuResult {
    crate::non_null(status)?;
    stream::resolve(s)?;
    let session = stream::capture(s)?;
    let st = match &session {
        None => 0,
        Some(c) if *lock(&c.invalid) => 2,
        Some(_) => 1,
    };
    // SAFETY: out-pointers null or writable by contract.
    unsafe {
        out(status, st)?;
        if !id.is_null() {
            *id = session.as_ref().map_or(0, |c| c.id);
        }
        if !g.is_null() {
            *g = session
                .as_ref()
                .map_or(std::ptr::null_mut(), |c| Arc::as_ptr(&c.graph) as CUgraph);
        }
        if !edges.is_null() {
            *edges = std::ptr::null();
        }
        let tail = session
            .as_ref()
            .filter(|c| !c.tail.load(Ordering::Acquire).is_null());
        if !deps.is_null() {
            *deps = tail.map_or(std::ptr::null(), |c| {
                c.tail.as_ptr().cast_const().cast::<CUgraphNode>()
            });
        }
        if !n.is_null() {
            *n = usize::from(tail.is_some());
        }
    }
    Ok(())
}

/// `cuThreadExchangeStreamCaptureMode`: swaps this thread's mode (kept, not enforced).
///
/// # Safety
/// `mode` null or readable and writable.
pub unsafe fn exchange_mode(mode: *mut c_int) -> CuResult {
    crate::non_null(mode)?;
    // SAFETY: checked non-null.
    let new = unsafe { *mode };
    if !(0..=2).contains(&new) {
        return Err(CUresult::ErrorInvalidValue);
    }
    let old = MODE.with(|m| m.replace(new));
    // SAFETY: checked non-null.
    unsafe { out(mode, old) }
}

/// `cuGraphCreate` (`flags` must be 0).
///
/// # Safety
/// `g` null or writable.
pub unsafe fn create(g: *mut CUgraph, flags: c_uint) -> CuResult {
    crate::non_null(g)?;
    if flags != 0 {
        return Err(CUresult::ErrorInvalidValue);
    }
    crate::context::active()?;
    let h = Arc::as_ptr(&new_graph()) as CUgraph;
    // SAFETY: checked non-null.
    unsafe { out(g, h) }
}

/// `cuGraphDestroy`.
pub fn destroy(g: CUgraph) -> CuResult {
    let gr = graph(g)?;
    lock(&GRAPHS).retain(|x| !Arc::ptr_eq(x, &gr));
    let users = std::mem::take(&mut *lock(&gr.users));
    for u in users {
        u.release(1)?;
    }
    Ok(())
}

/// The dependency handles `deps[..n]`.
///
/// # Safety
/// `deps` valid for `n` handles when `n > 0`.
unsafe fn dep_list(deps: *const CUgraphNode, n: usize) -> CuResult<Vec<usize>> {
    if n == 0 {
        return Ok(Vec::new());
    }
    crate::non_null(deps)?;
    // SAFETY: `n` handles by contract.
    Ok(unsafe { std::slice::from_raw_parts(deps, n) }
        .iter()
        .map(|&d| d as usize)
        .collect())
}

/// Adds a node to graph `g` and writes its handle.
///
/// # Safety
/// `node` null or writable; `deps` valid for `n` handles.
unsafe fn add(
    node: *mut CUgraphNode,
    g: CUgraph,
    deps: *const CUgraphNode,
    n: usize,
    kind: NodeType,
    work: Option<Work>,
) -> CuResult {
    crate::non_null(node)?;
    let gr = graph(g)?;
    // SAFETY: by contract.
    let deps = unsafe { dep_list(deps, n) }?;
    let h = gr.add(kind, work, &deps)?;
    // SAFETY: checked non-null.
    unsafe { out(node, h) }
}

/// `CUDA_KERNEL_NODE_PARAMS` (`_v2` adds `kern` and `ctx`).
#[repr(C)]
#[derive(Clone, Copy)]
pub struct KernelNodeParams {
    pub func: CUfunction,
    pub grid: [c_uint; 3],
    pub block: [c_uint; 3],
    pub shared: c_uint,
    pub params: *mut *mut c_void,
    pub extra: *mut *mut c_void,
    pub kern: CUkernel,
    pub ctx: CUcontext,
}

/// `cuGraphAddKernelNode(_v2)`: the parameters are copied now, as the driver does.
///
/// # Safety
/// `p` a valid `CUDA_KERNEL_NODE_PARAMS` (the `_v2` layout when `v2`); the rest as `add`.
pub unsafe fn add_kernel_node(
    node: *mut CUgraphNode,
    g: CUgraph,
    deps: *const CUgraphNode,
    n: usize,
    p: *const KernelNodeParams,
    v2: bool,
) -> CuResult {
    crate::non_null(p)?;
    // SAFETY: the `_v1` fields are a prefix of `_v2`; only the fields of the layout the
    // caller passed are read.
    let kp = unsafe {
        KernelNodeParams {
            func: std::ptr::addr_of!((*p).func).read_unaligned(),
            grid: std::ptr::addr_of!((*p).grid).read_unaligned(),
            block: std::ptr::addr_of!((*p).block).read_unaligned(),
            shared: std::ptr::addr_of!((*p).shared).read_unaligned(),
            params: std::ptr::addr_of!((*p).params).read_unaligned(),
            extra: std::ptr::addr_of!((*p).extra).read_unaligned(),
            kern: if v2 {
                std::ptr::addr_of!((*p).kern).read_unaligned()
            } else {
                std::ptr::null_mut()
            },
            ctx: std::ptr::null_mut(),
        }
    };
    let f = if kp.func.is_null() { kp.kern } else { kp.func };
    // SAFETY: the kernel parameters as `cuLaunchKernel` takes them.
    let work = unsafe {
        crate::launch::prepare(
            f,
            kp.grid,
            kp.block,
            kp.shared,
            kp.params,
            kp.extra,
            crate::launch::Kind::Normal,
        )
    }?;
    // SAFETY: by contract.
    unsafe { add(node, g, deps, n, NodeType::Kernel, Some(work)) }
}

/// `CUDA_MEMSET_NODE_PARAMS`.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct MemsetNodeParams {
    pub dst: CUdeviceptr,
    pub pitch: usize,
    pub value: c_uint,
    pub element_size: c_uint,
    pub width: usize,
    pub height: usize,
}

/// `cuGraphAddMemsetNode`: elements of 1, 2 or 4 bytes.
///
/// # Safety
/// `p` a valid `CUDA_MEMSET_NODE_PARAMS`; the rest as `add`.
pub unsafe fn add_memset_node(
    node: *mut CUgraphNode,
    g: CUgraph,
    deps: *const CUgraphNode,
    n: usize,
    p: *const MemsetNodeParams,
) -> CuResult {
    crate::non_null(p)?;
    // SAFETY: checked non-null; valid by contract.
    let m = unsafe { *p };
    let pattern: Vec<u8> = match m.element_size {
        1 => vec![m.value as u8],
        2 => (m.value as u16).to_ne_bytes().to_vec(),
        4 => m.value.to_ne_bytes().to_vec(),
        _ => return Err(CUresult::ErrorInvalidValue),
    };
    memory::check_range(m.dst, 1)?;
    let work: Work = Arc::new(move |s| {
        // SAFETY: `set` checks the range against the allocation table when it runs.
        unsafe { memory::set(m.dst, m.width, m.height, m.pitch, &pattern, s) }
    });
    // SAFETY: by contract.
    unsafe { add(node, g, deps, n, NodeType::Memset, Some(work)) }
}

/// `CUDA_MEMCPY3D`.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct Memcpy3D {
    pub src_x: usize,
    pub src_y: usize,
    pub src_z: usize,
    pub src_lod: usize,
    pub src_type: c_int,
    pub src_host: *const c_void,
    pub src_device: CUdeviceptr,
    pub src_array: *mut c_void,
    pub reserved0: *mut c_void,
    pub src_pitch: usize,
    pub src_height: usize,
    pub dst_x: usize,
    pub dst_y: usize,
    pub dst_z: usize,
    pub dst_lod: usize,
    pub dst_type: c_int,
    pub dst_host: *mut c_void,
    pub dst_device: CUdeviceptr,
    pub dst_array: *mut c_void,
    pub reserved1: *mut c_void,
    pub dst_pitch: usize,
    pub dst_height: usize,
    pub width: usize,
    pub height: usize,
    pub depth: usize,
}

/// A value that holds raw pointers the caller promised stay valid while the graph lives.
#[derive(Clone, Copy)]
pub(crate) struct Raw<T>(pub T);
// SAFETY: the pointers are the caller's host or device memory, used only when the graph is
// launched, as the driver uses them.
unsafe impl<T> Send for Raw<T> {}
// SAFETY: as above; never written through from two threads by this library.
unsafe impl<T> Sync for Raw<T> {}

/// `cuGraphAddMemcpyNode`: a 3D copy is `depth` 2D copies of `height` rows.
///
/// # Safety
/// `p` a valid `CUDA_MEMCPY3D` whose host sides stay valid while the graph is used.
pub unsafe fn add_memcpy_node(
    node: *mut CUgraphNode,
    g: CUgraph,
    deps: *const CUgraphNode,
    n: usize,
    p: *const Memcpy3D,
) -> CuResult {
    crate::non_null(p)?;
    // SAFETY: checked non-null; valid by contract.
    let c = Raw(unsafe { *p });
    if c.0.src_lod != 0 || c.0.dst_lod != 0 {
        return Err(CUresult::ErrorInvalidValue);
    }
    let work: Work = Arc::new(move |s| {
        let whole = c;
        let c = whole.0;
        for z in 0..c.depth.max(1) {
            let slice = Memcpy2D {
                src_x: c.src_x,
                src_y: c.src_y + (c.src_z + z) * c.src_height,
                src_type: c.src_type,
                src_host: c.src_host,
                src_device: c.src_device,
                src_array: c.src_array,
                src_pitch: c.src_pitch,
                dst_x: c.dst_x,
                dst_y: c.dst_y + (c.dst_z + z) * c.dst_height,
                dst_type: c.dst_type,
                dst_host: c.dst_host,
                dst_device: c.dst_device,
                dst_array: c.dst_array,
                dst_pitch: c.dst_pitch,
                width: c.width,
                height: c.height,
            };
            // SAFETY: `copy_2d` checks the device sides; host sides valid by contract.
            unsafe { memory::copy_2d(&slice, s) }?;
        }
        Ok(())
    });
    // SAFETY: by contract.
    unsafe { add(node, g, deps, n, NodeType::Memcpy, Some(work)) }
}

/// `CUDA_HOST_NODE_PARAMS`.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct HostNodeParams {
    pub f: HostFn,
    pub data: *mut c_void,
}

/// `cuGraphAddHostNode`.
///
/// # Safety
/// `p` a valid `CUDA_HOST_NODE_PARAMS`; the function callable with its data while the graph
/// is used.
pub unsafe fn add_host_node(
    node: *mut CUgraphNode,
    g: CUgraph,
    deps: *const CUgraphNode,
    n: usize,
    p: *const HostNodeParams,
) -> CuResult {
    crate::non_null(p)?;
    // SAFETY: checked non-null; valid by contract.
    let h = Raw(unsafe { *p });
    h.0.f.ok_or(CUresult::ErrorInvalidValue)?;
    let work: Work = Arc::new(move |s| {
        let h = h;
        // SAFETY: the caller's function and data.
        unsafe { stream::host_func(s, h.0.f, h.0.data) }
    });
    // SAFETY: by contract.
    unsafe { add(node, g, deps, n, NodeType::Host, Some(work)) }
}

/// `cuGraphAddEmptyNode`.
///
/// # Safety
/// As `add`.
pub unsafe fn add_empty_node(
    node: *mut CUgraphNode,
    g: CUgraph,
    deps: *const CUgraphNode,
    n: usize,
) -> CuResult {
    // SAFETY: by contract.
    unsafe { add(node, g, deps, n, NodeType::Empty, None) }
}

/// `cuGraphGetNodes`: the count, or the first `*n` handles (the rest of the array nulled).
///
/// # Safety
/// `n` readable and writable; `nodes` null or writable for `*n` handles.
pub unsafe fn get_nodes(g: CUgraph, nodes: *mut CUgraphNode, n: *mut usize) -> CuResult {
    crate::non_null(n)?;
    let gr = graph(g)?;
    let list = lock(&gr.nodes);
    // SAFETY: by contract.
    unsafe {
        if !nodes.is_null() {
            for i in 0..*n {
                *nodes.add(i) = list
                    .get(i)
                    .map_or(std::ptr::null_mut(), |x| Arc::as_ptr(x) as CUgraphNode);
            }
            *n = (*n).min(list.len());
        } else {
            *n = list.len();
        }
    }
    Ok(())
}

/// The node behind handle `h`, in any graph.
fn node(h: CUgraphNode) -> CuResult<Arc<Node>> {
    for g in lock(&GRAPHS).iter() {
        if let Some(n) = lock(&g.nodes)
            .iter()
            .find(|x| std::ptr::eq(Arc::as_ptr(x).cast(), h))
        {
            return Ok(n.clone());
        }
    }
    Err(CUresult::ErrorInvalidValue)
}

/// `cuGraphNodeGetType`.
///
/// # Safety
/// `t` null or writable.
pub unsafe fn node_type(h: CUgraphNode, t: *mut c_int) -> CuResult {
    let n = node(h)?;
    // SAFETY: `out` checks null.
    unsafe { out(t, n.kind as c_int) }
}

/// `cuGraphNodeGetDependencies`-style count of a node's edges (used by tests).
pub fn dependency_count(h: CUgraphNode) -> CuResult<usize> {
    Ok(node(h)?.deps.len())
}

/// Every `cuGraphInstantiate*`: snapshots the graph's work (later edits of the graph do not
/// change the instance).
///
/// # Safety
/// `e` null or writable.
pub unsafe fn instantiate(e: *mut CUgraphExec, g: CUgraph) -> CuResult {
    crate::non_null(e)?;
    let gr = graph(g)?;
    let work: Vec<Work> = lock(&gr.nodes)
        .iter()
        .filter_map(|n| n.work.clone())
        .collect();
    let users = lock(&gr.users).clone();
    for u in &users {
        u.retain(1);
    }
    let x = Arc::new(Exec { work, users });
    let h = Arc::as_ptr(&x) as CUgraphExec;
    lock(&EXECS).push(x);
    // SAFETY: checked non-null.
    unsafe { out(e, h) }
}

/// `CUDA_GRAPH_INSTANTIATE_PARAMS`.
#[repr(C)]
pub struct InstantiateParams {
    pub flags: u64,
    pub upload_stream: CUstream,
    pub err_node: CUgraphNode,
    pub result: c_int,
}

/// `cuGraphInstantiateWithParams`.
///
/// # Safety
/// `e` null or writable; `p` null or a valid, writable parameter block.
pub unsafe fn instantiate_with_params(
    e: *mut CUgraphExec,
    g: CUgraph,
    p: *mut InstantiateParams,
) -> CuResult {
    crate::non_null(p)?;
    // SAFETY: by contract.
    let r = unsafe { instantiate(e, g) };
    // SAFETY: checked non-null; writable by contract.
    unsafe {
        (*p).err_node = std::ptr::null_mut();
        (*p).result = if r.is_ok() { 0 } else { 1 };
    }
    r
}

/// `cuGraphInstantiate(_v2)` (the error node and log: nothing to report).
///
/// # Safety
/// Pointers null or writable (`log` for `size` bytes).
pub unsafe fn instantiate_with_log(
    e: *mut CUgraphExec,
    g: CUgraph,
    err: *mut CUgraphNode,
    log: *mut u8,
    size: usize,
) -> CuResult {
    // SAFETY: by contract.
    unsafe {
        if !err.is_null() {
            *err = std::ptr::null_mut();
        }
        if !log.is_null() && size > 0 {
            *log = 0;
        }
        instantiate(e, g)
    }
}

/// `cuGraphLaunch`: runs the instance's work in order on `s` (in a capture: one node that
/// does so).
pub fn launch(e: CUgraphExec, s: CUstream) -> CuResult {
    let x = exec(e)?;
    if let Some(c) = stream::capture(s)? {
        let work: Work = Arc::new(move |s| run(&x, s));
        return c.record(NodeType::Graph, work);
    }
    stream::resolve(s)?;
    run(&x, s)
}

fn run(x: &Exec, s: CUstream) -> CuResult {
    for w in &x.work {
        w(s).inspect_err(|e| loader::log(&format!("a graph node failed: {e:?}")))?;
    }
    Ok(())
}

/// `cuGraphUpload`: nothing to upload.
pub fn upload(e: CUgraphExec, s: CUstream) -> CuResult {
    exec(e)?;
    stream::resolve(s).map(|_| ())
}

/// `cuGraphExecDestroy`.
pub fn exec_destroy(e: CUgraphExec) -> CuResult {
    let x = exec(e)?;
    lock(&EXECS).retain(|y| !Arc::ptr_eq(y, &x));
    Ok(())
}
