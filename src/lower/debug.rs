//! Source positions of the lowered code as LLVM debug metadata, so that LLVM's passes carry
//! them to the output (`.loc` in PTX, DWARF line tables in objects).
//!
//! What is produced depends on the module and on `-g` (`DebugOptions::full`):
//! - no `.loc` and no `-g`: nothing (the lowering is exactly what it is without this module);
//! - `.loc` without `-g` (Triton, `nvcc -lineinfo`): line tables only (`Target::line_table_kind`:
//!   `.file`/`.loc` directives for NVPTX, DWARF line tables on the host);
//! - `-g`: full DWARF, with a local variable per PTX register (`%r5` is `r5`); positions come
//!   from the `.loc`s, or, in a module without any, from the PTX file itself (line and column
//!   of each instruction), so that hand-written PTX can be stepped through.
//!
//! `.loc … function_name S, inlined_at F L C` becomes a location in a subprogram named by the
//! string at `S` in `.debug_str`, inlined at the location of the closest preceding `.loc` at
//! `F L C` of the same function (the PTX rule), else at `F L C` in the function itself.

use std::cell::RefCell;
use std::collections::HashMap;

use super::types::{Ty, K};
use crate::llvm::debug::{DebugBuilder, DebugEncoding, DebugKind, Md};
use crate::llvm::{Builder, Context, FunctionValue, Module, PointerValue};
use crate::syntax::ast::{self, Item, SectionEntry, Statement};
use crate::syntax::span::Span;

/// What debug information to produce; the default is "line tables when the PTX has `.loc`".
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DebugOptions {
    /// `-g`: full DWARF with a variable per register; PTX positions without `.loc`.
    pub full: bool,
    /// The PTX file's path, the file of PTX positions.
    ptx_path: String,
    /// Byte offsets of the PTX file's line starts (with `full` only).
    line_starts: Vec<u32>,
}

impl DebugOptions {
    /// `-g` when `full`, for the PTX text `src` read from `ptx_path`.
    pub fn new(full: bool, ptx_path: &str, src: &str) -> DebugOptions {
        let line_starts = if full {
            std::iter::once(0)
                .chain(memchr::memchr_iter(b'\n', src.as_bytes()).map(|k| (k + 1) as u32))
                .collect()
        } else {
            Vec::new()
        };
        DebugOptions {
            full,
            ptx_path: ptx_path.to_string(),
            line_starts,
        }
    }

    /// The PTX file's path as the debug information names it (part of the kernel cache's
    /// key).
    pub fn ptx_path(&self) -> &str {
        &self.ptx_path
    }

    /// 1-based line and column of a byte offset of the PTX file.
    fn line_col(&self, off: u32) -> (u32, u32) {
        let k = self.line_starts.partition_point(|&s| s <= off).max(1) - 1;
        (k as u32 + 1, off - self.line_starts[k] + 1)
    }
}

/// What a target makes of debug information.
pub struct Flavor {
    /// The emission kind of `.loc` line information without `-g`.
    pub line_tables: DebugKind,
    pub dwarf_version: u32,
    /// Whether `-g` describes registers as variables.
    pub variables: bool,
}

/// Where the locations of instructions come from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Positions {
    /// The module's `.loc` directives.
    Loc,
    /// The PTX file's own lines (`-g` on a module without `.loc`).
    Ptx,
}

/// Debug metadata of one module being lowered.
pub struct ModuleDebug<'c> {
    db: DebugBuilder<'c>,
    positions: Positions,
    full: bool,
    /// A variable per register (`-g`, where the target takes them).
    variables: bool,
    opts: DebugOptions,
    /// `.file` index → `DIFile`.
    files: HashMap<u32, Md<'c>>,
    ptx_file: Md<'c>,
    /// `.debug_str`'s bytes and the offsets of its labels (for `function_name`).
    debug_str: (Vec<u8>, HashMap<String, usize>),
    /// Subprograms of inlined functions, by name (shared by every function of the module).
    inlined: RefCell<HashMap<String, (Md<'c>, Md<'c>)>>,
    /// Register types, by name.
    types: RefCell<HashMap<String, Md<'c>>>,
}

/// Per-function debug state (in `FnState`).
pub struct FnDebug<'c> {
    /// The function's first line (its parameters, the branch from its allocas).
    start: Md<'c>,
    sp: Md<'c>,
    sp_file: Md<'c>,
    line: u32,
    /// Locations of this function's `.loc`s by position (file, line, column): `inlined_at`
    /// targets.
    by_pos: HashMap<(u32, u32, u32), Md<'c>>,
    /// Lexical-block-file scopes by (scope, file).
    scopes: HashMap<(Md<'c>, Md<'c>), Md<'c>>,
    /// The location of the last `.loc` (line 0 in the function before the first).
    cur: Md<'c>,
}

/// Whether the module has any `.loc`.
fn has_loc(m: &ast::Module) -> bool {
    m.items.iter().any(|it| match it {
        Item::Function(f) => f.body.as_ref().is_some_and(|b| first_loc(b).is_some()),
        _ => false,
    })
}

/// The first `.loc` of a block (nested blocks included).
fn first_loc<'x, 'a>(b: &'x ast::Block<'a>) -> Option<&'x ast::Loc<'a>> {
    b.stmts.iter().find_map(|s| match s {
        Statement::Loc(l) => Some(l),
        Statement::Block(b) => first_loc(b),
        _ => None,
    })
}

/// The bytes of `.debug_str` and its labels' offsets.
fn debug_str(m: &ast::Module) -> (Vec<u8>, HashMap<String, usize>) {
    let mut bytes = Vec::new();
    let mut labels = HashMap::new();
    for it in &m.items {
        let Item::Section(s) = it else { continue };
        if s.name != ".debug_str" {
            continue;
        }
        labels.insert(s.name.to_string(), bytes.len());
        for e in &s.entries {
            match e {
                SectionEntry::Label(name, _) => {
                    labels.insert(name.to_string(), bytes.len());
                }
                SectionEntry::Bytes(b, _) => bytes.extend_from_slice(b),
                SectionEntry::Data { width, values, .. } => {
                    let w = Ty::of(*width).map_or(1, |t| (t.bits / 8).max(1)) as usize;
                    for v in values {
                        let x = crate::syntax::consteval::eval(v).map_or(0, |c| c.bits);
                        bytes.extend_from_slice(&x.to_le_bytes()[..w.min(8)]);
                    }
                }
            }
        }
    }
    (bytes, labels)
}

impl<'c> ModuleDebug<'c> {
    /// The debug metadata `opts` asks for in `m`, or `None` (no `.loc`, no `-g`).
    pub fn new(
        ctx: &'c Context,
        module: &Module<'c>,
        m: &ast::Module,
        opts: &DebugOptions,
        flavor: Flavor,
        optimized: bool,
    ) -> Option<ModuleDebug<'c>> {
        let loc = has_loc(m);
        if !loc && !opts.full {
            return None;
        }
        let kind = if opts.full {
            DebugKind::Full
        } else {
            flavor.line_tables
        };
        let ptx_path = if opts.ptx_path.is_empty() {
            "<ptx>"
        } else {
            opts.ptx_path.as_str()
        };
        let (dir, name) = match ptx_path.rfind('/') {
            Some(k) => (&ptx_path[..k.max(1)], &ptx_path[k + 1..]),
            None => ("", ptx_path),
        };
        let db = DebugBuilder::new(
            ctx,
            module,
            kind,
            flavor.dwarf_version,
            (name, dir),
            optimized,
        );
        let files = m
            .items
            .iter()
            .filter_map(|it| match it {
                Item::File { index, name, .. } => Some((*index, db.file(name.trim_matches('"')))),
                _ => None,
            })
            .collect();
        let ptx_file = db.file(ptx_path);
        Some(ModuleDebug {
            db,
            positions: if loc { Positions::Loc } else { Positions::Ptx },
            full: opts.full,
            variables: opts.full && flavor.variables,
            opts: opts.clone(),
            files,
            ptx_file,
            debug_str: debug_str(m),
            inlined: RefCell::new(HashMap::new()),
            types: RefCell::new(HashMap::new()),
        })
    }

    /// The `DIFile` of a `.file` index (the PTX file for an undeclared one).
    fn file(&self, index: u32) -> Md<'c> {
        self.files.get(&index).copied().unwrap_or(self.ptx_file)
    }

    /// Starts function `f` (lowered into `func`): its subprogram, and the builder at its first
    /// line. `None` for a function without positions (no `.loc` in it, no `-g`).
    pub fn begin_function(
        &self,
        f: &ast::Function,
        func: FunctionValue<'c>,
        b: &Builder<'c>,
    ) -> Option<FnDebug<'c>> {
        let body = f.body.as_ref()?;
        let (file, line) = match (self.positions, first_loc(body)) {
            (Positions::Loc, Some(l)) => (self.file(l.file), l.line),
            (Positions::Loc, None) if !self.full => return None,
            _ => (self.ptx_file, self.ptx_line(f.name_span)),
        };
        let name = func.get_name().to_string_lossy().into_owned();
        let sp = self.db.subprogram(&name, file, line, Some(func));
        let start = self.db.location(line, 0, sp, None);
        crate::llvm::debug::set_location(b, Some(start));
        Some(FnDebug {
            start,
            sp,
            sp_file: file,
            line,
            by_pos: HashMap::new(),
            scopes: HashMap::new(),
            cur: self.db.location(0, 0, sp, None),
        })
    }

    fn ptx_line(&self, span: Span) -> u32 {
        if self.opts.line_starts.is_empty() {
            0
        } else {
            self.opts.line_col(span.start).0
        }
    }

    /// `scope` as seen from `file` (itself when it is its file).
    fn scope_in(
        &self,
        fd: &mut FnDebug<'c>,
        scope: Md<'c>,
        scope_file: Md<'c>,
        file: Md<'c>,
    ) -> Md<'c> {
        if scope_file == file {
            return scope;
        }
        *fd.scopes
            .entry((scope, file))
            .or_insert_with(|| self.db.scope_in_file(scope, file))
    }

    /// The subprogram of an inlined function named by `function_name label+offset`.
    fn inlined_sp(&self, label: &str, offset: i64, file: Md<'c>, line: u32) -> (Md<'c>, Md<'c>) {
        let (bytes, labels) = &self.debug_str;
        let name = labels
            .get(label)
            .and_then(|&o| usize::try_from(o as i64 + offset).ok())
            .filter(|&o| o < bytes.len())
            .map(|o| {
                let s = &bytes[o..];
                let end = s.iter().position(|&c| c == 0).unwrap_or(s.len());
                String::from_utf8_lossy(&s[..end]).into_owned()
            })
            .filter(|s| !s.is_empty())
            .unwrap_or_else(|| label.to_string());
        // A subprogram's file is the one it is first seen in.
        *self
            .inlined
            .borrow_mut()
            .entry(name)
            .or_insert_with_key(|name| (self.db.subprogram(name, file, line, None), file))
    }

    /// A `.loc` statement: the location of the instructions that follow.
    pub fn loc(&self, fd: &mut FnDebug<'c>, l: &ast::Loc) {
        let file = self.file(l.file);
        let loc = match &l.inlined {
            None => {
                let scope = self.scope_in(fd, fd.sp, fd.sp_file, file);
                self.db.location(l.line, l.col, scope, None)
            }
            Some(i) => {
                let at = match fd.by_pos.get(&(i.file, i.line, i.col)) {
                    Some(&at) => at,
                    None => {
                        let scope = self.scope_in(fd, fd.sp, fd.sp_file, self.file(i.file));
                        self.db.location(i.line, i.col, scope, None)
                    }
                };
                let (sp, sp_file) = self.inlined_sp(i.function_name, i.offset, file, l.line);
                let scope = self.scope_in(fd, sp, sp_file, file);
                self.db.location(l.line, l.col, scope, Some(at))
            }
        };
        fd.by_pos.insert((l.file, l.line, l.col), loc);
        fd.cur = loc;
    }

    /// Sets the builder's location to the function's first line.
    pub fn prologue(&self, fd: &FnDebug<'c>, b: &Builder<'c>) {
        crate::llvm::debug::set_location(b, Some(fd.start));
    }

    /// Sets the builder's location for an instruction at `span`.
    pub fn instruction(&self, fd: &FnDebug<'c>, b: &Builder<'c>, span: Span) {
        let loc = match self.positions {
            Positions::Loc => fd.cur,
            Positions::Ptx => {
                let (line, col) = self.opts.line_col(span.start);
                self.db.location(line, col, fd.sp, None)
            }
        };
        crate::llvm::debug::set_location(b, Some(loc));
    }

    /// Ends a function: (with `-g`) a variable per register, described by its alloca.
    pub fn end_function<'x>(
        &self,
        fd: &FnDebug<'c>,
        regs: impl Iterator<Item = (&'x str, PointerValue<'c>, Ty, Option<u8>)>,
        before: Option<inkwell::values::InstructionValue<'c>>,
    ) where
        'c: 'x,
    {
        let Some(before) = before.filter(|_| self.variables) else {
            return;
        };
        let loc = fd.start;
        let mut regs: Vec<_> = regs.collect();
        regs.sort_by(|a, b| a.0.cmp(b.0));
        for (name, ptr, ty, vector) in regs {
            let dty = self.reg_type(ty, vector);
            let var = name.trim_start_matches('%');
            self.db
                .declare(ptr, var, (fd.sp, fd.sp_file, fd.line), dty, loc, before);
        }
    }

    /// The DWARF type of a register of type `ty` (`.vN` vectors as their bits), named by its
    /// PTX type (`u32`, `f32`, `pred`, `b32x4`).
    fn reg_type(&self, ty: Ty, vector: Option<u8>) -> Md<'c> {
        let n = vector.unwrap_or(1) as u32;
        let (enc, bits, name) = match ty.k {
            _ if n > 1 => (
                DebugEncoding::Unsigned,
                ty.bits * n,
                format!("b{}x{n}", ty.bits),
            ),
            K::Pred => (DebugEncoding::Boolean, 8, "pred".to_string()),
            K::S => (DebugEncoding::Signed, ty.bits, format!("s{}", ty.bits)),
            K::U => (DebugEncoding::Unsigned, ty.bits, format!("u{}", ty.bits)),
            K::F => (DebugEncoding::Float, ty.bits, format!("f{}", ty.bits)),
            // `.b`, the packed and the bfloat types: their bits.
            _ => (DebugEncoding::Unsigned, ty.bits, format!("b{}", ty.bits)),
        };
        *self
            .types
            .borrow_mut()
            .entry(name)
            .or_insert_with_key(|name| self.db.basic_type(name, bits, enc))
    }

    /// Whether this is `-g` (variables per register), not line tables only.
    pub fn full(&self) -> bool {
        self.full
    }

    /// Moves the locations of `to`, built from `from`'s instructions, into a subprogram of
    /// `to`'s own (`DebugBuilder::rehome`).
    pub fn rehome(&self, from: FunctionValue<'c>, to: FunctionValue<'c>) {
        self.db.rehome(from, to);
    }

    /// Resolves the pending metadata; before verifying, after the target has built the
    /// functions it generates around lowered ones (they get subprograms here:
    /// `DebugBuilder::cover_generated`).
    pub fn finalize(&self, module: &Module<'c>) {
        self.db.cover_generated(module);
        self.db.finalize();
    }
}
