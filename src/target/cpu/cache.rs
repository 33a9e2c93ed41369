//! The kernel cache: a module compiled once is not compiled again, in this process (memory)
//! or in a later one (disk). What is kept is the module's machine code as a relocatable
//! object plus a manifest of everything else `Program::load*` computes (kernels, parameter
//! layouts, thread-loop or coroutine path with its `FisInfo`, static shared layout, module
//! variables, the runtime symbols the object needs, where its code sections lie); a hit links
//! the object into the process with LLVM ORC (`llvm::orc`) in about a millisecond instead of
//! lowering, optimizing and generating code. docs/KERNEL_CACHE.md has the design and numbers.
//!
//! With the cache on, a miss compiles to an object too and runs that object, so the first and
//! every later run execute the same code. The key (`key`) covers everything that changes the
//! code: PTX text, options, host CPU and features, LLVM, and this build of ptx2llvm (a hash of
//! its sources, `build.rs`). Disk entries are written to a temporary file and renamed (other
//! processes see a whole entry or none), checked by a SHA-256 on reading (a corrupt or
//! truncated entry is a miss and is rewritten), and evicted least recently used first beyond
//! `PTX2LLVM_CACHE_MAX`. `PTX2LLVM_CACHE=0` turns the cache off.
//!
//! Not cached (compiled by MCJIT as without a cache): `-g` builds and the profiling switches
//! (`PTX2LLVM_PERF_MAP`, `PTX2LLVM_PERF_JITDUMP`, `PTX2LLVM_CODE_DUMP`, `PTX2LLVM_FIS_DUMP`,
//! `PTX2LLVM_OPT_DUMP`),
//! which rely on MCJIT's debugger and profiler registration or on compiling.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use sha2::{Digest, Sha256};

use super::fission::{CpuMode, KernelPath};
use super::{build, check_defined, CompileError, Engine, KernelInfo, Program, Purpose};
use super::{ParamInfo, ParamLayout};
use crate::check::ModuleInfo;
use crate::llvm::cpu::{HostMachine, SharedLayout};
use crate::llvm::simd::Alignment;
use crate::llvm::{Context, EmitKind};
use crate::lower::debug::DebugOptions;
use crate::syntax::ast;

/// Version of the entry format and of the key's composition: a change makes old entries
/// misses.
const FORMAT_VERSION: u32 = 84;

/// The first bytes of a disk entry.
const MAGIC: &[u8; 16] = b"ptx2llvm-kcache\n";

/// Default bound of the disk cache (`PTX2LLVM_CACHE_MAX`).
const DEFAULT_MAX: u64 = 1 << 30;

/// The most the in-memory cache keeps (or `PTX2LLVM_CACHE_MAX` when smaller).
const MEMORY_MAX: u64 = 256 << 20;

/// Where and how much the cache keeps.
#[derive(Clone, Debug)]
pub struct Settings {
    /// `false`: no cache at all (`PTX2LLVM_CACHE=0`); loads compile with MCJIT.
    pub enabled: bool,
    /// Keep entries in this process.
    pub memory: bool,
    /// The disk cache's directory (`None`: no disk cache).
    pub dir: Option<PathBuf>,
    /// Bound on the disk cache's bytes.
    pub max_bytes: u64,
}

impl Settings {
    /// From the environment: `PTX2LLVM_CACHE` (`0`, `off`, `false`, `no`: off), the directory
    /// `$XDG_CACHE_HOME/ptx2llvm` (else `$HOME/.cache/ptx2llvm`) and `PTX2LLVM_CACHE_MAX`
    /// (bytes, or with a `K`, `M` or `G` suffix; 1 GiB by default; `0`: memory only).
    pub fn from_env() -> Settings {
        let var = |n: &str| std::env::var(n).ok().filter(|v| !v.is_empty());
        let enabled = !matches!(
            var("PTX2LLVM_CACHE")
                .map(|v| v.to_ascii_lowercase())
                .as_deref(),
            Some("0" | "off" | "false" | "no")
        );
        let max_bytes = var("PTX2LLVM_CACHE_MAX")
            .and_then(|v| parse_size(&v))
            .unwrap_or(DEFAULT_MAX);
        let dir = var("XDG_CACHE_HOME")
            .map(PathBuf::from)
            .filter(|p| p.is_absolute())
            .or_else(|| var("HOME").map(|h| Path::new(&h).join(".cache")))
            .map(|d| d.join("ptx2llvm"))
            .filter(|_| max_bytes > 0);
        Settings {
            enabled,
            memory: true,
            dir,
            max_bytes,
        }
    }
}

/// `123`, `64K`, `512M`, `2G` (binary units) as bytes.
fn parse_size(s: &str) -> Option<u64> {
    let s = s.trim();
    let (num, shift) = match s.char_indices().last()? {
        (k, 'k' | 'K') => (&s[..k], 10),
        (k, 'm' | 'M') => (&s[..k], 20),
        (k, 'g' | 'G') => (&s[..k], 30),
        _ => (s, 0),
    };
    num.trim().parse::<u64>().ok()?.checked_mul(1 << shift)
}

/// What a load is: the PTX text and everything besides it that changes the code.
pub struct Request<'r> {
    pub src: &'r str,
    pub opt: u8,
    /// The module's name (LLVM's module identifier).
    pub name: &'r str,
    pub mode: CpuMode,
    /// The CTA shape thread loops are specialized for (`Program::load_for`).
    pub block: Option<[u32; 3]>,
    /// The only kernel the caller launches (`ptx2llvm run`), when it gives the module without
    /// the others: the same source then compiles to another program per kernel.
    pub kernel: Option<&'r str>,
    pub debug: &'r DebugOptions,
    pub settings: Settings,
}

/// How a load got its program.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// Compiled now, and stored in the cache.
    Compiled,
    /// From this process's cache.
    Memory,
    /// From the disk cache.
    Disk,
    /// Compiled by MCJIT: the cache is off, or does not apply to this load (`-g`, profiling).
    Uncached,
}

impl Outcome {
    /// Whether compilation was skipped.
    pub fn hit(self) -> bool {
        matches!(self, Outcome::Memory | Outcome::Disk)
    }
}

/// Loads that the cache does not serve: `-g` (gdb needs MCJIT's registration of the code
/// and its variables) and the switches that profile or dump what the JIT compiles.
fn bypassed(req: &Request) -> bool {
    let set = |n: &str| std::env::var_os(n).is_some_and(|v| !v.is_empty() && v != "0");
    req.debug.full
        || set("PTX2LLVM_PERF_MAP")
        || set("PTX2LLVM_PERF_JITDUMP")
        || set("PTX2LLVM_CODE_DUMP")
        || set("PTX2LLVM_FIS_DUMP")
        || set("PTX2LLVM_OPT_DUMP")
}

type Key = [u8; 32];

/// The identity of this build of ptx2llvm: its version and a hash of its sources (`build.rs`):
/// a rebuilt library never takes objects made for another runtime ABI.
pub fn build_id() -> &'static str {
    concat!(env!("CARGO_PKG_VERSION"), "+", env!("PTX2LLVM_BUILD_ID"))
}

/// The key of `req`: SHA-256 over length-prefixed fields.
fn key(req: &Request) -> Key {
    let mut h = Sha256::new();
    let mut field = |b: &[u8]| {
        h.update((b.len() as u64).to_le_bytes());
        h.update(b);
    };
    field(b"ptx2llvm kernel cache");
    field(&FORMAT_VERSION.to_le_bytes());
    field(build_id().as_bytes());
    field(crate::llvm::cpu::host_description().as_bytes());
    field(&[req.opt]);
    field(match req.mode {
        CpuMode::Auto => b"auto",
        CpuMode::Fission => b"fission",
        CpuMode::Coroutine => b"coroutine",
        CpuMode::Warp => b"warp",
    });
    field(format!("{:?}", req.block).as_bytes());
    field(format!("{:?}", req.kernel).as_bytes());
    field(&[req.debug.full as u8]);
    field(req.debug.ptx_path().as_bytes());
    field(req.name.as_bytes());
    // Switches that change what the compiler does.
    for v in ["PTX2LLVM_LLVM_OPTS", "PTX2LLVM_FIS_PIPELINE"] {
        field(format!("{v}={:?}", std::env::var_os(v)).as_bytes());
    }
    field(req.src.as_bytes());
    h.finalize().into()
}

fn hex(k: &Key) -> String {
    k.iter().map(|b| format!("{b:02x}")).collect()
}

/// Everything of a compiled module besides its machine code.
#[derive(Clone, Debug)]
struct Manifest {
    kernels: Vec<KernelInfo>,
    shared: SharedLayout,
    globals: Vec<(String, u64)>,
    /// The runtime's symbols the object calls (bound from `runtime::symbols()`).
    runtime_symbols: Vec<String>,
    /// Per code section: a symbol in it, the symbol's offset and the section's size.
    code: Vec<(String, u64, u64)>,
}

/// A cache entry.
#[derive(Debug)]
struct Entry {
    object: Vec<u8>,
    manifest: Manifest,
}

// ---- serialization ----

/// Little-endian writer of the manifest.
#[derive(Default)]
struct Writer(Vec<u8>);

impl Writer {
    fn u8(&mut self, v: u8) {
        self.0.push(v);
    }
    fn u32(&mut self, v: u32) {
        self.0.extend(v.to_le_bytes());
    }
    fn u64(&mut self, v: u64) {
        self.0.extend(v.to_le_bytes());
    }
    fn bytes(&mut self, b: &[u8]) {
        self.u64(b.len() as u64);
        self.0.extend(b);
    }
    fn str(&mut self, s: &str) {
        self.bytes(s.as_bytes());
    }
}

/// Reader of what `Writer` wrote; every method is `None` past the end.
struct Reader<'b>(&'b [u8]);

impl<'b> Reader<'b> {
    fn take(&mut self, n: usize) -> Option<&'b [u8]> {
        if n > self.0.len() {
            return None;
        }
        let (a, b) = self.0.split_at(n);
        self.0 = b;
        Some(a)
    }
    fn u8(&mut self) -> Option<u8> {
        Some(self.take(1)?[0])
    }
    fn u32(&mut self) -> Option<u32> {
        Some(u32::from_le_bytes(self.take(4)?.try_into().ok()?))
    }
    fn u64(&mut self) -> Option<u64> {
        Some(u64::from_le_bytes(self.take(8)?.try_into().ok()?))
    }
    fn bytes(&mut self) -> Option<&'b [u8]> {
        let n = usize::try_from(self.u64()?).ok()?;
        self.take(n)
    }
    fn str(&mut self) -> Option<String> {
        String::from_utf8(self.bytes()?.to_vec()).ok()
    }
    /// A count of items of at least `min` bytes each, bounded by what is left.
    fn count(&mut self, min: usize) -> Option<usize> {
        let n = self.u32()? as usize;
        (n.saturating_mul(min.max(1)) <= self.0.len()).then_some(n)
    }
}

/// Tags of `KernelPath` in entries: a new path is a new tag here and in `read_path`.
fn write_path(w: &mut Writer, p: &KernelPath) {
    match p {
        KernelPath::Coroutine { why } => {
            w.u8(0);
            w.str(why);
        }
        KernelPath::Fission(info) => {
            w.u8(1);
            write_fis(w, info);
        }
        KernelPath::Warp(plan) => {
            w.u8(2);
            write_fis(w, &plan.info);
            let r = &plan.report;
            w.u32(r.uniform as u32);
            w.u32(r.varying as u32);
            write_strs(w, &r.varying_names);
            write_strs(w, &r.divergent_branches);
            w.u32(r.loops.len() as u32);
            for (name, divergent) in &r.loops {
                w.str(name);
                w.u8(*divergent as u8);
            }
            write_strs(w, &r.full_copies);
            write_strs(w, &r.warp_ops);
            match r.rows {
                Some((u, v)) => {
                    w.u8(1);
                    w.u32(u as u32);
                    w.u32(v as u32);
                }
                None => w.u8(0),
            }
            write_strs(w, &r.barriers);
            for k in r.memory {
                w.u32(k as u32);
            }
            match r.rows_memory {
                Some(m) => {
                    w.u8(1);
                    for k in m {
                        w.u32(k as u32);
                    }
                }
                None => w.u8(0),
            }
            for note in [&r.barrier_scheme, &r.segments, &r.aligned_only] {
                match note {
                    Some(how) => {
                        w.u8(1);
                        w.str(how);
                    }
                    None => w.u8(0),
                }
            }
            w.u32(r.nan_selects.0 as u32);
            w.u32(r.nan_selects.1 as u32);
            w.u32(r.nan_selects.2 as u32);
            w.u32(r.nan_selects.3 as u32);
            w.u32(r.prefetches as u32);
            w.u32(r.tile_prefetches as u32);
            w.u32(r.stream_prefetches as u32);
            w.u32(r.warp_prefetches as u32);
            w.u32(r.cta_prefetches as u32);
            w.u32(r.cta_store_prefetches as u32);
            match &r.misaligned {
                Alignment::NoTests => w.u8(0),
                Alignment::Launch(tests) => {
                    w.u8(1);
                    w.u32(tests.len() as u32);
                    for t in tests {
                        w.u32(t.offset);
                        w.u32(t.bytes);
                        w.u64(t.mask);
                    }
                }
                Alignment::Unchecked(why) => {
                    w.u8(2);
                    w.str(why);
                }
            }
            // The warp groups' size in bits 2-7 and the interior copy's checks in the bits above
            // the two version flags (older entries read 0 for both).
            w.u32(
                u32::from(r.versioned)
                    | u32::from(r.versioned_wide) << 1
                    | r.coarsened.min(63) << 2
                    | (r.interior.min(0xff_ffff) as u32) << 8,
            );
            w.u32(r.flat.x as u32);
            w.u32(r.flat.scale);
            w.u32(r.flat.yz as u32);
        }
    }
}

fn write_fis(w: &mut Writer, info: &crate::runtime::fission::FisInfo) {
    let words = info.encode();
    w.u32(words.len() as u32);
    for x in words {
        w.u32(x);
    }
}

fn write_strs(w: &mut Writer, v: &[String]) {
    w.u32(v.len() as u32);
    for x in v {
        w.str(x);
    }
}

fn read_fis(r: &mut Reader) -> Option<Arc<crate::runtime::fission::FisInfo>> {
    let n = r.count(4)?;
    let words: Vec<u32> = (0..n).map(|_| r.u32()).collect::<Option<_>>()?;
    Some(Arc::new(crate::runtime::fission::FisInfo::decode(&words)?))
}

fn read_strs(r: &mut Reader) -> Option<Vec<String>> {
    let n = r.count(1)?;
    (0..n).map(|_| r.str()).collect()
}

fn read_path(r: &mut Reader) -> Option<KernelPath> {
    Some(match r.u8()? {
        0 => KernelPath::Coroutine { why: r.str()? },
        1 => KernelPath::Fission(read_fis(r)?),
        2 => {
            let info = read_fis(r)?;
            let uniform = r.u32()? as usize;
            let varying = r.u32()? as usize;
            let varying_names = read_strs(r)?;
            let divergent_branches = read_strs(r)?;
            let n = r.count(1)?;
            let loops = (0..n)
                .map(|_| Some((r.str()?, r.u8()? != 0)))
                .collect::<Option<Vec<_>>>()?;
            let full_copies = read_strs(r)?;
            let warp_ops = read_strs(r)?;
            let rows = match r.u8()? {
                0 => None,
                _ => Some((r.u32()? as usize, r.u32()? as usize)),
            };
            let barriers = read_strs(r)?;
            let mut memory = [0; 9];
            for k in &mut memory {
                *k = r.u32()? as usize;
            }
            let rows_memory = match r.u8()? {
                0 => None,
                _ => {
                    let mut m = [0; 9];
                    for k in &mut m {
                        *k = r.u32()? as usize;
                    }
                    Some(m)
                }
            };
            let mut note = || -> Option<Option<String>> {
                Some(match r.u8()? {
                    0 => None,
                    _ => Some(r.str()?),
                })
            };
            let barrier_scheme = note()?;
            let segments = note()?;
            let aligned_only = note()?;
            let nan_selects = (
                r.u32()? as usize,
                r.u32()? as usize,
                r.u32()? as usize,
                r.u32()? as usize,
            );
            let prefetches = r.u32()? as usize;
            let tile_prefetches = r.u32()? as usize;
            let stream_prefetches = r.u32()? as usize;
            let warp_prefetches = r.u32()? as usize;
            let cta_prefetches = r.u32()? as usize;
            let cta_store_prefetches = r.u32()? as usize;
            let misaligned = match r.u8()? {
                0 => Alignment::NoTests,
                1 => {
                    let n = r.count(16)?;
                    Alignment::Launch(
                        (0..n)
                            .map(|_| {
                                Some(crate::runtime::fission::ParamAlign {
                                    offset: r.u32()?,
                                    bytes: r.u32()?,
                                    mask: r.u64()?,
                                })
                            })
                            .collect::<Option<_>>()?,
                    )
                }
                2 => Alignment::Unchecked(r.str()?),
                _ => return None,
            };
            let versions = r.u32()?;
            let (versioned, versioned_wide) = (versions & 1 != 0, versions & 2 != 0);
            let interior = (versions >> 8) as usize;
            let coarsened = (versions >> 2) & 63;
            let flat = crate::llvm::simd::FlatMarks {
                x: r.u32()? as usize,
                scale: r.u32()?,
                yz: r.u32()? as usize,
            };
            KernelPath::Warp(Arc::new(super::simd::WarpPlan {
                info,
                report: crate::llvm::simd::Report {
                    uniform,
                    varying,
                    varying_names,
                    divergent_branches,
                    loops,
                    full_copies,
                    warp_ops,
                    rows,
                    barriers,
                    memory,
                    rows_memory,
                    barrier_scheme,
                    // Read by the compile's pipeline only, which a cached module skips.
                    skip_guards: false,
                    segments,
                    aligned_only,
                    nan_selects,
                    prefetches,
                    tile_prefetches,
                    stream_prefetches,
                    warp_prefetches,
                    cta_prefetches,
                    cta_store_prefetches,
                    misaligned,
                    versioned,
                    versioned_wide,
                    interior,
                    coarsened,
                    flat,
                },
            }))
        }
        _ => return None,
    })
}

fn write_manifest(m: &Manifest) -> Vec<u8> {
    let mut w = Writer::default();
    w.u32(m.kernels.len() as u32);
    for k in &m.kernels {
        w.str(&k.name);
        w.u32(k.params.params.len() as u32);
        for p in &k.params.params {
            w.str(&p.name);
            w.u32(p.offset);
            w.u32(p.size);
            w.u32(p.align);
            w.str(&p.ty);
            w.u8(p.aggregate as u8);
        }
        w.u32(k.params.size);
        write_path(&mut w, &k.path);
        match &k.warp_refused {
            Some(why) => {
                w.u8(1);
                w.str(why);
            }
            None => w.u8(0),
        }
    }
    w.u32(m.shared.bytes);
    w.u32(m.shared.align);
    w.u32(m.globals.len() as u32);
    for (n, s) in &m.globals {
        w.str(n);
        w.u64(*s);
    }
    w.u32(m.runtime_symbols.len() as u32);
    for n in &m.runtime_symbols {
        w.str(n);
    }
    w.u32(m.code.len() as u32);
    for (n, off, size) in &m.code {
        w.str(n);
        w.u64(*off);
        w.u64(*size);
    }
    w.0
}

fn read_manifest(b: &[u8]) -> Option<Manifest> {
    let mut r = Reader(b);
    let nk = r.count(8)?;
    let mut kernels = Vec::with_capacity(nk);
    for _ in 0..nk {
        let name = r.str()?;
        let np = r.count(8)?;
        let mut params = Vec::with_capacity(np);
        for _ in 0..np {
            params.push(ParamInfo {
                name: r.str()?,
                offset: r.u32()?,
                size: r.u32()?,
                align: r.u32()?,
                ty: r.str()?,
                aggregate: r.u8()? != 0,
            });
        }
        let size = r.u32()?;
        let path = read_path(&mut r)?;
        let warp_refused = match r.u8()? {
            0 => None,
            _ => Some(r.str()?),
        };
        kernels.push(KernelInfo {
            name,
            params: ParamLayout { params, size },
            path,
            warp_refused,
        });
    }
    let shared = SharedLayout {
        bytes: r.u32()?,
        align: r.u32()?,
    };
    let ng = r.count(16)?;
    let globals = (0..ng)
        .map(|_| Some((r.str()?, r.u64()?)))
        .collect::<Option<_>>()?;
    let ns = r.count(8)?;
    let runtime_symbols = (0..ns).map(|_| r.str()).collect::<Option<_>>()?;
    let nc = r.count(24)?;
    let code = (0..nc)
        .map(|_| Some((r.str()?, r.u64()?, r.u64()?)))
        .collect::<Option<_>>()?;
    r.0.is_empty().then_some(Manifest {
        kernels,
        shared,
        globals,
        runtime_symbols,
        code,
    })
}

/// A disk entry: magic, format version, key, manifest, object, and a SHA-256 of all that.
fn encode_entry(key: &Key, e: &Entry) -> Vec<u8> {
    let mut w = Writer::default();
    w.0.extend(MAGIC);
    w.u32(FORMAT_VERSION);
    w.0.extend(key);
    w.bytes(&write_manifest(&e.manifest));
    w.bytes(&e.object);
    let sum: [u8; 32] = Sha256::digest(&w.0).into();
    w.0.extend(sum);
    w.0
}

/// The entry in `b` when it is whole, of this format and for `key`.
fn decode_entry(key: &Key, b: &[u8]) -> Option<Entry> {
    let body = b.len().checked_sub(32)?;
    let (data, sum) = b.split_at(body);
    if Sha256::digest(data).as_slice() != sum {
        return None;
    }
    let mut r = Reader(data);
    if r.take(MAGIC.len())? != MAGIC || r.u32()? != FORMAT_VERSION || r.take(32)? != key {
        return None;
    }
    let manifest = read_manifest(r.bytes()?)?;
    let object = r.bytes()?.to_vec();
    r.0.is_empty().then_some(Entry { object, manifest })
}

// ---- the stores ----

/// This process's entries, with the tick of their last use (least recently used goes first).
static MEMORY: Mutex<Option<MemoryMap>> = Mutex::new(None);
type MemoryMap = HashMap<Key, (Arc<Entry>, u64)>;
static TICK: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

fn memory_get(key: &Key) -> Option<Arc<Entry>> {
    let mut m = MEMORY.lock().unwrap_or_else(|e| e.into_inner());
    let (e, t) = m.as_mut()?.get_mut(key)?;
    *t = TICK.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    Some(e.clone())
}

fn memory_put(key: Key, e: Arc<Entry>, max: u64) {
    let mut m = MEMORY.lock().unwrap_or_else(|e| e.into_inner());
    let map = m.get_or_insert_with(HashMap::new);
    let t = TICK.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    map.insert(key, (e, t));
    let max = max.clamp(1, MEMORY_MAX);
    let mut total: u64 = map.values().map(|(e, _)| e.object.len() as u64).sum();
    while total > max && map.len() > 1 {
        let Some(oldest) = map.iter().min_by_key(|(_, (_, t))| *t).map(|(k, _)| *k) else {
            break;
        };
        if let Some((e, _)) = map.remove(&oldest) {
            total -= e.object.len() as u64;
        }
    }
}

/// The file of `key` in `dir`.
fn entry_path(dir: &Path, key: &Key) -> PathBuf {
    dir.join(format!("{}.kc", hex(key)))
}

/// Reads the disk entry of `key`; marks it used (its modification time, which eviction
/// orders by). A missing, unreadable, truncated or corrupt entry is `None`.
fn disk_get(dir: &Path, key: &Key) -> Option<Entry> {
    let path = entry_path(dir, key);
    let bytes = std::fs::read(&path).ok()?;
    let e = decode_entry(key, &bytes)?;
    if let Ok(f) = std::fs::File::options().append(true).open(&path) {
        let _ = f.set_modified(std::time::SystemTime::now());
    }
    Some(e)
}

/// Writes the entry of `key` atomically (a temporary file in the same directory, renamed),
/// then evicts beyond `max` bytes. Failures leave the cache as it was: it is only a cache.
fn disk_put(dir: &Path, key: &Key, e: &Entry, max: u64) {
    use std::io::Write;
    if std::fs::create_dir_all(dir).is_err() {
        return;
    }
    let bytes = encode_entry(key, e);
    let Ok(mut tmp) = tempfile::Builder::new()
        .prefix(".tmp-")
        .suffix(".part")
        .tempfile_in(dir)
    else {
        return;
    };
    if tmp.write_all(&bytes).is_err() || tmp.flush().is_err() {
        return;
    }
    if tmp.persist(entry_path(dir, key)).is_err() {
        return;
    }
    evict(dir, max);
}

/// Removes the least recently used entries until the directory's entries take at most `max`
/// bytes, and temporary files that writers left more than an hour ago (a killed process).
/// Concurrent evictions may remove the same file: the loser's error is ignored, and a reader
/// of a removed file still has its open descriptor or sees a miss.
fn evict(dir: &Path, max: u64) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    let now = std::time::SystemTime::now();
    let mut entries: Vec<(std::time::SystemTime, u64, PathBuf)> = Vec::new();
    for d in rd.flatten() {
        let path = d.path();
        let Ok(meta) = d.metadata() else { continue };
        let mtime = meta.modified().unwrap_or(now);
        let name = d.file_name();
        let name = name.to_string_lossy();
        if name.ends_with(".kc") {
            entries.push((mtime, meta.len(), path));
        } else if name.starts_with(".tmp-")
            && now.duration_since(mtime).is_ok_and(|a| a.as_secs() > 3600)
        {
            let _ = std::fs::remove_file(&path);
        }
    }
    let mut total: u64 = entries.iter().map(|e| e.1).sum();
    if total <= max {
        return;
    }
    entries.sort();
    for (_, len, path) in entries {
        if total <= max {
            break;
        }
        if std::fs::remove_file(&path).is_ok() {
            total = total.saturating_sub(len);
        }
    }
}

// ---- compile and load ----

/// Compiles `module` as `req` says into an entry: the JIT's build (`Program::load_for`'s
/// kernels and variables) emitted as an object.
fn compile<'a>(
    req: &Request,
    module: &'a ast::Module<'a>,
    info: &ModuleInfo,
) -> Result<Entry, CompileError> {
    let machine = HostMachine::new(req.opt).map_err(CompileError::Llvm)?;
    let ctx = Context::create();
    // The fault replays are built when a fault needs them (`ReplayBuild`), not stored.
    let purpose = Purpose {
        jit: true,
        mode: req.mode,
        block: req.block,
        debug: req.debug,
        lazy_replay: true,
        flat_x: true,
    };
    let (m, kernels, shared, globals) =
        build(&ctx, module, info, req.name, req.opt, &machine, purpose)?;
    let table = crate::runtime::symbols();
    let syms: Vec<(&str, usize)> = table.iter().map(|(n, a)| (n.as_str(), *a)).collect();
    check_defined(&m, &syms)?;
    let object = machine
        .emit(&m, EmitKind::Object)
        .map_err(CompileError::Llvm)?;
    let exported: Vec<String> = kernels
        .iter()
        .map(code_symbol)
        .chain(globals.iter().map(|g| g.0.clone()))
        .collect();
    let symbols = crate::llvm::orc::inspect(&object, &exported);
    // The object's undefined symbols that the runtime provides (MCJIT finds them in the
    // table `Jit::new` adds); the others are the process's (libc, libm).
    let runtime_symbols: Vec<String> = symbols
        .undefined
        .into_iter()
        .filter(|n| syms.iter().any(|(s, _)| s == n))
        .collect();
    let code = symbols.code;
    Ok(Entry {
        object,
        manifest: Manifest {
            kernels,
            shared,
            globals,
            runtime_symbols,
            code,
        },
    })
}

/// The symbol of a kernel's code: `K` (coroutine entry point), `K.fis` (thread loops) or
/// `K.simd` (the warp engine).
fn code_symbol(k: &KernelInfo) -> String {
    match &k.path {
        KernelPath::Fission(_) => format!("{}.fis", k.name),
        KernelPath::Warp(_) => format!("{}.simd", k.name),
        KernelPath::Coroutine { .. } => k.name.clone(),
    }
}

/// The mapping of this process (`/proc/self/maps`) that holds `addr`.
fn mapping_of(maps: &str, addr: usize) -> Option<(usize, usize)> {
    maps.lines().find_map(|line| {
        let (lo, hi) = line.split_whitespace().next()?.split_once('-')?;
        let (lo, hi) = (
            usize::from_str_radix(lo, 16).ok()?,
            usize::from_str_radix(hi, 16).ok()?,
        );
        (lo <= addr && addr < hi).then_some((lo, hi))
    })
}

/// Links the entry's object into this process: a program whose kernels, variables and code
/// ranges are those of the entry. Every kernel and variable is looked up now, so an object
/// that does not link is an error here, not at a launch.
fn instantiate(e: &Entry) -> Result<Program, String> {
    let table = crate::runtime::symbols();
    let mut syms = Vec::with_capacity(e.manifest.runtime_symbols.len());
    for n in &e.manifest.runtime_symbols {
        let Some((_, a)) = table.iter().find(|(t, _)| t == n) else {
            return Err(format!("the runtime has no symbol `{n}`"));
        };
        syms.push((n.as_str(), *a));
    }
    let jit = crate::llvm::orc::ObjectJit::load(&e.object, &syms)?;
    let mut addresses = Vec::new();
    let names = e.manifest.kernels.iter().map(code_symbol);
    for s in names.chain(e.manifest.globals.iter().map(|g| g.0.clone())) {
        let a = jit
            .address(&s)
            .ok_or_else(|| format!("the object does not define `{s}`"))?;
        addresses.push((s, a));
    }
    let maps = std::fs::read_to_string("/proc/self/maps").unwrap_or_default();
    let ranges: Vec<(usize, usize)> = e
        .manifest
        .code
        .iter()
        .filter_map(|(sym, off, size)| {
            let a = jit.address(sym)?;
            let lo = a.checked_sub(*off as usize)?;
            let hi = lo.checked_add(*size as usize)?;
            // Clipped to the mapping holding the symbol, should the linker have laid the
            // section out shorter than the object (unreferenced code dropped).
            let (mlo, mhi) = mapping_of(&maps, a).unwrap_or((lo, hi));
            Some((lo.max(mlo), hi.min(mhi)))
        })
        .collect();
    let code = crate::runtime::fault::register_code(&ranges);
    Ok(Program {
        _code: code,
        engine: Engine::Object { jit, addresses },
        kernels: e.manifest.kernels.clone(),
        static_shared: e.manifest.shared,
        globals: e.manifest.globals.clone(),
        replays: Vec::new(),
        aligned: Vec::new(),
    })
}

/// A program for `req` from the cache, without compiling, or `None` (a miss, or the cache
/// off or bypassed). Needs no AST: callers may skip parsing on a hit.
pub fn lookup(req: &Request) -> Option<(Program, Outcome)> {
    if !req.settings.enabled || bypassed(req) {
        return None;
    }
    let key = key(req);
    if req.settings.memory {
        if let Some(e) = memory_get(&key) {
            if let Ok(p) = instantiate(&e) {
                return Some((p.with_replay(req), Outcome::Memory));
            }
        }
    }
    let dir = req.settings.dir.as_deref()?;
    let e = disk_get(dir, &key)?;
    // An entry that does not link (a damaged object the checksum did not catch) is a miss,
    // and the compilation that follows rewrites it.
    let p = instantiate(&e).ok()?.with_replay(req);
    if req.settings.memory {
        memory_put(key, Arc::new(e), req.settings.max_bytes);
    }
    Some((p, Outcome::Disk))
}

/// The program of `module` (parsed from `req.src`) through the cache: a hit links the cached
/// object; a miss compiles, stores and links the new object. With the cache off or bypassed,
/// `Program::load_debug` (MCJIT).
pub fn load<'a>(
    req: &Request,
    module: &'a ast::Module<'a>,
    info: &ModuleInfo,
) -> Result<(Program, Outcome), CompileError> {
    if let Some(hit) = lookup(req) {
        return Ok(hit);
    }
    compile_and_load(req, module, info)
}

/// `load` after `lookup` missed: compiles (no lookup).
pub fn compile_and_load<'a>(
    req: &Request,
    module: &'a ast::Module<'a>,
    info: &ModuleInfo,
) -> Result<(Program, Outcome), CompileError> {
    if !req.settings.enabled || bypassed(req) {
        let p = Program::load_lazy(req, module, info)?;
        return Ok((p, Outcome::Uncached));
    }
    let key = key(req);
    let e = compile(req, module, info)?;
    let p = match instantiate(&e) {
        Ok(p) => p.with_replay(req),
        Err(m) => {
            // A bug of the cache, not of the module: run it as without a cache (compiling
            // again), say so, and store nothing.
            eprintln!(
                "ptx2llvm: warning: kernel cache: the compiled object does not link ({m}); \
                 compiling without the cache"
            );
            let p = Program::load_debug(
                module, info, req.opt, req.name, req.mode, req.block, req.debug,
            )?;
            return Ok((p, Outcome::Uncached));
        }
    };
    if let Some(dir) = &req.settings.dir {
        disk_put(dir, &key, &e, req.settings.max_bytes);
    }
    if req.settings.memory {
        memory_put(key, Arc::new(e), req.settings.max_bytes);
    }
    Ok((p, Outcome::Compiled))
}

/// Forgets this process's entries (tests; a program that wants its memory back).
pub fn clear_memory() {
    *MEMORY.lock().unwrap_or_else(|e| e.into_inner()) = None;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_parse_with_binary_units() {
        assert_eq!(parse_size("123"), Some(123));
        assert_eq!(parse_size("64K"), Some(64 << 10));
        assert_eq!(parse_size("512m"), Some(512 << 20));
        assert_eq!(parse_size("2G"), Some(2 << 30));
        assert_eq!(parse_size("x"), None);
        assert_eq!(parse_size(""), None);
    }

    #[test]
    fn manifest_round_trips_and_rejects_truncation() {
        let m = Manifest {
            kernels: vec![
                KernelInfo {
                    name: "k".into(),
                    params: ParamLayout {
                        params: vec![ParamInfo {
                            name: "p".into(),
                            offset: 0,
                            size: 8,
                            align: 8,
                            ty: ".u64".into(),
                            aggregate: false,
                        }],
                        size: 8,
                    },
                    path: KernelPath::Coroutine { why: "w".into() },
                    warp_refused: Some("a CTA barrier (`bar`)".into()),
                },
                KernelInfo {
                    name: "w".into(),
                    params: ParamLayout {
                        params: Vec::new(),
                        size: 0,
                    },
                    path: KernelPath::Warp(Arc::new(super::super::simd::WarpPlan {
                        info: Arc::new(crate::runtime::fission::FisInfo {
                            stops: Vec::new(),
                            stop_consts: Vec::new(),
                            frame_bytes: 0,
                            local_bytes: 0,
                            must_stop: vec![crate::runtime::fission::NO_STOP],
                            block: None,
                        }),
                        report: crate::llvm::simd::Report {
                            uniform: 3,
                            varying: 5,
                            varying_names: vec!["r1".into()],
                            divergent_branches: vec!["L0".into()],
                            loops: vec![("L1".into(), true)],
                            full_copies: vec!["L1".into()],
                            warp_ops: vec!["shfl.sync.bfly".into()],
                            rows: Some((4, 2)),
                            barriers: vec!["bar.sync 0 in L2".into()],
                            memory: [2, 1, 0, 0, 1, 0, 1, 1, 3],
                            rows_memory: Some([3, 0, 0, 1, 0, 1, 0, 0, 2]),
                            barrier_scheme: Some("static regions".into()),
                            skip_guards: false,
                            segments: Some("blocks of (16, 16, 1) threads".into()),
                            aligned_only: Some("a large kernel".into()),
                            nan_selects: (16, 15, 4, 2),
                            prefetches: 1,
                            tile_prefetches: 1,
                            cta_prefetches: 2,
                            cta_store_prefetches: 4,
                            stream_prefetches: 3,
                            warp_prefetches: 5,
                            misaligned: Alignment::Launch(vec![
                                crate::runtime::fission::ParamAlign {
                                    offset: 8,
                                    bytes: 8,
                                    mask: 15,
                                },
                            ]),
                            versioned: true,
                            versioned_wide: true,
                            interior: 25,
                            coarsened: 4,
                            flat: crate::llvm::simd::FlatMarks {
                                x: 2,
                                scale: 256,
                                yz: 1,
                            },
                        },
                    })),
                    warp_refused: None,
                },
            ],
            shared: SharedLayout {
                bytes: 64,
                align: 16,
            },
            globals: vec![("g".into(), 4)],
            runtime_symbols: vec!["ptx2llvm_rt_self".into()],
            code: vec![("k".into(), 16, 4096)],
        };
        let b = write_manifest(&m);
        let r = read_manifest(&b).expect("round trip");
        assert_eq!(r.kernels[0].name, "k");
        assert_eq!(r.kernels[0].params.params[0].ty, ".u64");
        assert_eq!(r.kernels[0].warp_refused, m.kernels[0].warp_refused);
        match (&r.kernels[1].path, &m.kernels[1].path) {
            (KernelPath::Warp(a), KernelPath::Warp(b)) => {
                assert_eq!(a.describe("w"), b.describe("w"));
                assert_eq!(a.info.must_stop, b.info.must_stop);
            }
            _ => panic!("the warp path does not round-trip"),
        }
        assert_eq!(r.globals, m.globals);
        assert_eq!(r.code, m.code);
        for n in 0..b.len() {
            assert!(read_manifest(&b[..n]).is_none(), "truncated at {n}");
        }
        let key = [7u8; 32];
        let e = Entry {
            object: vec![1, 2, 3],
            manifest: m,
        };
        let bytes = encode_entry(&key, &e);
        assert!(decode_entry(&key, &bytes).is_some());
        assert!(decode_entry(&[8u8; 32], &bytes).is_none());
        let mut bad = bytes.clone();
        bad[40] ^= 1;
        assert!(decode_entry(&key, &bad).is_none());
        assert!(decode_entry(&key, &bytes[..bytes.len() - 1]).is_none());
    }
}
