//! The CUDA layout of a kernel's parameter buffer: every `.param` in declaration order at its
//! declared alignment (`.align N`) or, without one, its natural alignment (the element size,
//! times the vector width for vectors). `ptx2llvm run`, the embedding API and the kernel entry
//! points generated for the cpu target all use this one layout.

use crate::syntax::ast::{Function, Param};

/// One parameter's place and shape.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParamInfo {
    pub name: String,
    /// Byte offset in the buffer.
    pub offset: u32,
    /// Size in bytes.
    pub size: u32,
    pub align: u32,
    /// The PTX type spelling (`.u64`, `.b8`, …).
    pub ty: String,
    /// An array or vector (passed by reference to its bytes).
    pub aggregate: bool,
}

/// A kernel's parameter buffer.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ParamLayout {
    pub params: Vec<ParamInfo>,
    /// Total size, a multiple of the largest alignment.
    pub size: u32,
}

fn param_info(p: &Param, offset: &mut u32) -> ParamInfo {
    let elem = p.ty.type_bits().map_or(8, |b| (b / 8).max(1));
    let vec = p.vector.unwrap_or(1) as u32;
    let count: u64 = p.array.iter().map(|d| d.unwrap_or(0)).product();
    let size = (elem as u64 * vec as u64 * count).min(u32::MAX as u64) as u32;
    let align = p.align.unwrap_or(elem * vec).max(1);
    *offset = offset.div_ceil(align) * align;
    let info = ParamInfo {
        name: p.name.to_string(),
        offset: *offset,
        size,
        align,
        ty: p.ty.spelling().to_string(),
        aggregate: !p.array.is_empty() || p.vector.is_some(),
    };
    *offset += size;
    info
}

/// The parameter layout of kernel `f`.
pub fn layout(f: &Function) -> ParamLayout {
    let mut off = 0;
    let params: Vec<ParamInfo> = f.params.iter().map(|p| param_info(p, &mut off)).collect();
    let max_align = params.iter().map(|p| p.align).max().unwrap_or(1);
    ParamLayout {
        size: off.div_ceil(max_align) * max_align,
        params,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn natural_and_declared_alignment() {
        let src = ".version 8.0\n.target sm_80\n.address_size 64\n.visible .entry k(\n .param .u32 a,\n .param .u64 b,\n .param .align 4 .b8 s[12],\n .param .u16 c,\n .param .f64 d\n)\n{\n ret;\n}\n";
        let (m, d) = crate::syntax::parse(src);
        assert!(d.is_empty(), "{d:?}");
        let f = m
            .items
            .iter()
            .find_map(|i| match i {
                crate::syntax::ast::Item::Function(f) => Some(f),
                _ => None,
            })
            .unwrap();
        let l = layout(f);
        let offs: Vec<(u32, u32)> = l.params.iter().map(|p| (p.offset, p.size)).collect();
        assert_eq!(offs, [(0, 4), (8, 8), (16, 12), (28, 2), (32, 8)]);
        assert_eq!(l.size, 40);
        assert!(l.params[2].aggregate);
    }
}
