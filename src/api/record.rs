//! Launch records: with `PTX2LLVM_RECORD=DIR`, every launch through `api::Module` or
//! `ptx2llvm run` leaves its module, configuration, input buffers and output buffers in `DIR`,
//! so that the same launches can be replayed elsewhere — on a real GPU through the CUDA driver
//! (`scripts/gpu-diff/replay.py`) — and the outputs compared byte for byte
//! (`scripts/gpu-diff/compare.py`). This is how the cpu target's execution suites are held to
//! what a GPU computes, not only to references written from the manual.
//!
//! Layout of `DIR`: `mod_<hash>.ptx` once per module source; one folder per launch,
//! `<pid>_<n>/`, holding `launch.txt` (the module file, the test or command that launched, the
//! kernel, grid, block, dynamic shared bytes, the parameter buffer's size and each parameter's
//! offset and kind: a pointer into buffer `i` at a byte offset, or raw bytes in hex; then the
//! outcome) and `in<i>.bin` / `out<i>.bin` for each buffer the launch points into. Pointers are
//! found through the live `Buffer`s, which register themselves while recording is on: a buffer
//! argument, a raw pointer argument, or an 8-byte scalar whose value lies inside a live buffer
//! (numba passes array data pointers as `u64` scalars). Launches with a pointer outside every
//! buffer (fault tests), or whose buffers exceed `PTX2LLVM_RECORD_MAX` bytes (default 8 MiB),
//! are not recorded (`skipped.txt` says why). Pointers stored *inside* buffers are copied as
//! bytes, so such launches replay wrongly elsewhere; `compare.py` reports them as differences.
//! Recording costs nothing when the variable is unset: one environment lookup per module load
//! and per buffer.

use super::Arg;
use crate::target::cpu::ParamLayout;
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::hash::{Hash, Hasher};
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, OnceLock};

/// The folder launch records go to, when recording is on.
pub fn dir() -> Option<PathBuf> {
    std::env::var_os("PTX2LLVM_RECORD")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
}

/// Live buffers (start address → length) while recording is on: a test instrument, so a
/// process-wide table; empty and untouched otherwise.
static BUFFERS: Mutex<BTreeMap<u64, usize>> = Mutex::new(BTreeMap::new());

fn enabled() -> bool {
    static ON: OnceLock<bool> = OnceLock::new();
    *ON.get_or_init(|| dir().is_some())
}

pub(super) fn register(addr: u64, len: usize) {
    if enabled() {
        BUFFERS
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(addr, len);
    }
}

pub(super) fn unregister(addr: u64) {
    if enabled() {
        BUFFERS
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(&addr);
    }
}

/// The live buffer holding address `p` (its end included: a pointer one past the end is a
/// valid C pointer).
fn buffer_of(p: u64) -> Option<(u64, usize)> {
    let table = BUFFERS.lock().unwrap_or_else(|e| e.into_inner());
    let (&a, &n) = table.range(..=p).next_back()?;
    (p <= a + n as u64).then_some((a, n))
}

fn max_bytes() -> usize {
    std::env::var("PTX2LLVM_RECORD_MAX")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(8 << 20)
}

/// One launch being recorded: the inputs are captured before the launch, the outputs after.
pub struct Recording {
    folder: PathBuf,
    text: String,
    /// The buffers pointed into, by index: start address and length.
    buffers: Vec<(u64, usize)>,
}

/// How a parameter is replayed.
enum Param {
    /// A pointer `offset` bytes into buffer `index`.
    Pointer {
        index: usize,
        offset: u64,
    },
    Bytes(Vec<u8>),
}

/// The launch's description of the configuration, as `launch.txt` spells it.
pub struct Launch<'a> {
    pub source: &'a str,
    pub kernel: &'a str,
    pub grid: [u32; 3],
    pub block: [u32; 3],
    pub shared: u32,
    pub layout: &'a ParamLayout,
}

/// Starts recording a launch of `l` with `args` (their buffers' current bytes are the inputs);
/// `None` when recording is off or this launch cannot be recorded. Failures to write are
/// reported on stderr once per launch and never fail the launch itself.
pub fn begin(l: &Launch, args: &[Arg]) -> Option<Recording> {
    if !enabled() {
        return None;
    }
    let dir = dir()?;
    let origin = origin();
    let skip = |why: &str| {
        let _ = std::fs::create_dir_all(&dir);
        let line = format!("{origin}\t{}\t{why}\n", l.kernel);
        let _ = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(dir.join("skipped.txt"))
            .and_then(|mut f| std::io::Write::write_all(&mut f, line.as_bytes()));
    };
    let mut buffers: Vec<(u64, usize)> = Vec::new();
    let mut params = Vec::new();
    for a in args {
        let pointer = match a {
            Arg::Buffer(b) => Some(b.address()),
            Arg::Pointer(p) => Some(*p),
            Arg::Scalar(b) | Arg::Bytes(b) if b.len() == 8 => {
                let v = u64::from_le_bytes(b[..8].try_into().unwrap_or_default());
                buffer_of(v).map(|_| v)
            }
            _ => None,
        };
        params.push(match pointer {
            Some(p) => {
                let Some(buf) = buffer_of(p) else {
                    skip(&format!("a pointer 0x{p:x} outside every buffer"));
                    return None;
                };
                let index = buffers.iter().position(|&x| x == buf).unwrap_or_else(|| {
                    buffers.push(buf);
                    buffers.len() - 1
                });
                Param::Pointer {
                    index,
                    offset: p - buf.0,
                }
            }
            None => match a {
                Arg::Scalar(b) | Arg::Bytes(b) => Param::Bytes(b.clone()),
                _ => unreachable!("buffers and pointers have an address"),
            },
        });
    }
    let total: usize = buffers.iter().map(|b| b.1).sum();
    if total > max_bytes() {
        skip(&format!("{total} bytes of buffers"));
        return None;
    }
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    let folder = dir.join(format!("{}_{n}", std::process::id()));
    let write = || -> std::io::Result<String> {
        std::fs::create_dir_all(&folder)?;
        let mut h = std::collections::hash_map::DefaultHasher::new();
        l.source.hash(&mut h);
        let module = format!("mod_{:016x}.ptx", h.finish());
        let path = dir.join(&module);
        if !path.exists() {
            // Written under a unique name and renamed: concurrent tests may record one module.
            let tmp = dir.join(format!(".{module}.{}_{n}", std::process::id()));
            std::fs::write(&tmp, l.source)?;
            std::fs::rename(&tmp, &path)?;
        }
        let mut t = String::new();
        let _ = writeln!(t, "module {module}");
        let _ = writeln!(t, "origin {origin}");
        let _ = writeln!(t, "kernel {}", l.kernel);
        let [gx, gy, gz] = l.grid;
        let [bx, by, bz] = l.block;
        let _ = writeln!(t, "grid {gx} {gy} {gz}");
        let _ = writeln!(t, "block {bx} {by} {bz}");
        let _ = writeln!(t, "shared {}", l.shared);
        let _ = writeln!(t, "paramsize {}", l.layout.size);
        for (i, &(addr, len)) in buffers.iter().enumerate() {
            // SAFETY: a live `Buffer` of `len` bytes at `addr` (registered until dropped, and
            // the launch's arguments keep it alive).
            let bytes = unsafe { std::slice::from_raw_parts(addr as *const u8, len) };
            std::fs::write(folder.join(format!("in{i}.bin")), bytes)?;
            let _ = writeln!(t, "buffer {i} {len}");
        }
        for (p, info) in params.iter().zip(&l.layout.params) {
            match p {
                Param::Pointer { index, offset } => {
                    let _ = writeln!(t, "param {} pointer {index} {offset}", info.offset);
                }
                Param::Bytes(b) => {
                    let hex: String = b.iter().map(|x| format!("{x:02x}")).collect();
                    let _ = writeln!(t, "param {} bytes {hex}", info.offset);
                }
            }
        }
        Ok(t)
    };
    match write() {
        Ok(text) => Some(Recording {
            folder,
            text,
            buffers,
        }),
        Err(e) => {
            eprintln!("ptx2llvm: cannot record a launch in {}: {e}", dir.display());
            None
        }
    }
}

impl Recording {
    /// Completes the record with the outcome and the buffers' bytes after the launch.
    pub fn finish(mut self, outcome: Result<(), String>) {
        let mut write = || -> std::io::Result<()> {
            for (i, &(addr, len)) in self.buffers.iter().enumerate() {
                // SAFETY: as in `begin`; the launch has ended.
                let bytes = unsafe { std::slice::from_raw_parts(addr as *const u8, len) };
                std::fs::write(self.folder.join(format!("out{i}.bin")), bytes)?;
            }
            match &outcome {
                Ok(()) => self.text.push_str("outcome ok\n"),
                Err(e) => {
                    let _ = writeln!(self.text, "outcome error {}", e.replace('\n', " "));
                }
            }
            std::fs::write(self.folder.join("launch.txt"), &self.text)
        };
        if let Err(e) = write() {
            eprintln!(
                "ptx2llvm: cannot record a launch in {}: {e}",
                self.folder.display()
            );
        }
    }
}

/// What launched: the test (cargo runs each test on a thread named after it) or the program.
fn origin() -> String {
    let exe = std::env::current_exe()
        .ok()
        .and_then(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
        .unwrap_or_default();
    // Test binaries are named `NAME-HASH`.
    let exe = match exe.rsplit_once('-') {
        Some((name, hash)) if hash.len() == 16 => name.to_string(),
        _ => exe,
    };
    match std::thread::current().name() {
        Some(t) if t != "main" => format!("{exe}::{t}"),
        _ => exe,
    }
}
