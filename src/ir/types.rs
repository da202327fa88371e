//! Types as Paddle prints them: `tensor<-1x8xf32>`, `tensor<f32>`, `<<NULL TYPE>>`,
//! `vec[tensor<...>,...]`, `pd_dist.tensor<2x8xf32, mesh_shape:[1],...>`, and any other dialect
//! type kept as written.
//!
//! Types are interned ([`TypeId`]) in the [`Context`](super::Context); each interned type also
//! keeps its printed text, so printing never re-formats a type.

use super::dist::TensorDist;
use std::fmt::{self, Write};

/// An element type: the one dtype of irw (the IR, the rule language, the JSON format and the
/// executor, which computes with a subset: `exec::dtype::computable`). The names are Paddle's
/// short forms as they appear in tensor types; the long forms (`float32`) appear in attributes
/// and are converted with [`DType::from_attr_name`]; [`DType::parse`] takes either.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum DType {
    F32,
    F64,
    F16,
    BF16,
    I64,
    I32,
    I16,
    I8,
    U8,
    Bool,
    C64,
    C128,
}

impl DType {
    /// Every dtype, in declaration order.
    pub const ALL: [DType; 12] = [
        DType::F32,
        DType::F64,
        DType::F16,
        DType::BF16,
        DType::I64,
        DType::I32,
        DType::I16,
        DType::I8,
        DType::U8,
        DType::Bool,
        DType::C64,
        DType::C128,
    ];

    /// The short form used in tensor types (`f32`, `bf16`, `b`).
    pub fn short_name(self) -> &'static str {
        match self {
            DType::F32 => "f32",
            DType::F64 => "f64",
            DType::F16 => "f16",
            DType::BF16 => "bf16",
            DType::I64 => "i64",
            DType::I32 => "i32",
            DType::I16 => "i16",
            DType::I8 => "i8",
            // Paddle's printer writes `u8` (pir/src/core/ir_printer.cc); `ui8` is only its JSON
            // tag (`0.t_ui8`), accepted on input as a courtesy.
            DType::U8 => "u8",
            DType::Bool => "b",
            DType::C64 => "c64",
            DType::C128 => "c128",
        }
    }

    pub fn from_short_name(s: &str) -> Option<DType> {
        Some(match s {
            "f32" => DType::F32,
            "f64" => DType::F64,
            "f16" => DType::F16,
            "bf16" => DType::BF16,
            "i64" => DType::I64,
            "i32" => DType::I32,
            "i16" => DType::I16,
            "i8" => DType::I8,
            "ui8" | "u8" => DType::U8,
            "b" => DType::Bool,
            "c64" => DType::C64,
            "c128" => DType::C128,
            _ => return None,
        })
    }

    /// The long form used in attributes (`dtype:float32`).
    pub fn attr_name(self) -> &'static str {
        match self {
            DType::F32 => "float32",
            DType::F64 => "float64",
            DType::F16 => "float16",
            DType::BF16 => "bfloat16",
            DType::I64 => "int64",
            DType::I32 => "int32",
            DType::I16 => "int16",
            DType::I8 => "int8",
            DType::U8 => "uint8",
            DType::Bool => "bool",
            DType::C64 => "complex64",
            DType::C128 => "complex128",
        }
    }

    /// The dtype whose attribute form ([`DType::attr_name`]) is `s`.
    pub fn from_attr_name(s: &str) -> Option<DType> {
        DType::ALL.into_iter().find(|d| d.attr_name() == s)
    }

    /// Parses either spelling: the attribute form (`float32`, `bfloat16`, `bool`) or the
    /// tensor-type form (`f32`, `bf16`, `b`). The one parser of both; `Undefined` and unknown
    /// names give `None`.
    pub fn parse(s: &str) -> Option<DType> {
        DType::from_attr_name(s).or_else(|| DType::from_short_name(s))
    }

    pub fn is_float(self) -> bool {
        matches!(self, DType::F32 | DType::F64 | DType::F16 | DType::BF16)
    }

    /// True for the 16-bit floats (`bf16`, `f16`).
    pub fn is_half(self) -> bool {
        matches!(self, DType::BF16 | DType::F16)
    }

    /// Size of one element in bytes.
    pub fn size(self) -> usize {
        match self {
            DType::F64 | DType::I64 | DType::C64 => 8,
            DType::C128 => 16,
            DType::F32 | DType::I32 => 4,
            DType::F16 | DType::BF16 | DType::I16 => 2,
            DType::I8 | DType::U8 | DType::Bool => 1,
        }
    }
}

/// Index of an interned [`Type`].
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct TypeId(pub(crate) u32);

/// A value's type.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Type {
    /// The type of an absent value: `<<NULL TYPE>>`.
    Null,
    /// Not printed where the value is defined (keyword and block arguments, `pd_op.while`
    /// results) and not yet known from a use.
    Unknown,
    /// `tensor<d0xd1x...xdtype>`; `-1` is a dynamic dimension.
    Tensor { shape: Vec<i64>, dtype: DType },
    /// `vec[t0,t1,...]`, the type `builtin.combine` produces.
    Vec(Vec<TypeId>),
    /// `pd_dist.tensor<shape x dtype, dist>`: a tensor of an auto-parallel program; `shape` is
    /// the global shape.
    Dist {
        shape: Vec<i64>,
        dtype: DType,
        dist: TensorDist,
    },
    /// Any other type, kept as written.
    Opaque(String),
}

impl Type {
    /// Shape and dtype for tensor-like types.
    pub fn tensor(&self) -> Option<(&[i64], DType)> {
        match self {
            Type::Tensor { shape, dtype } | Type::Dist { shape, dtype, .. } => {
                Some((shape, *dtype))
            }
            _ => None,
        }
    }

    pub fn dtype(&self) -> Option<DType> {
        self.tensor().map(|(_, d)| d)
    }

    pub fn shape(&self) -> Option<&[i64]> {
        self.tensor().map(|(s, _)| s)
    }

    /// The distribution of a `pd_dist.tensor`.
    pub fn dist(&self) -> Option<&TensorDist> {
        match self {
            Type::Dist { dist, .. } => Some(dist),
            _ => None,
        }
    }

    /// The same kind of type (dense or distributed alike) with another shape and dtype. A
    /// distributed result keeps the mesh and is replicated: what a fresh tensor derived from
    /// this one (a buffer, a constant, a cast) has when nothing says otherwise.
    pub fn with_shape_dtype(&self, shape: Vec<i64>, dtype: DType) -> Type {
        match self {
            Type::Dist {
                dist, shape: old, ..
            } => {
                let dist = if old.len() == shape.len() && dist.partial.is_empty() {
                    dist.clone()
                } else {
                    dist.replicated(shape.len())
                };
                Type::Dist { shape, dtype, dist }
            }
            _ => Type::Tensor { shape, dtype },
        }
    }
}

fn write_dims(out: &mut String, shape: &[i64], dtype: DType) {
    for d in shape {
        let _ = write!(out, "{d}x");
    }
    out.push_str(dtype.short_name());
}

/// Formats a type; nested [`TypeId`]s are resolved with `text_of`.
pub(crate) fn format_type(ty: &Type, text_of: &dyn Fn(TypeId) -> String) -> String {
    let mut s = String::new();
    match ty {
        Type::Null => s.push_str("<<NULL TYPE>>"),
        Type::Unknown => s.push_str("<<UNKNOWN TYPE>>"),
        Type::Tensor { shape, dtype } => {
            s.push_str("tensor<");
            write_dims(&mut s, shape, *dtype);
            s.push('>');
        }
        Type::Vec(items) => {
            s.push_str("vec[");
            for (i, t) in items.iter().enumerate() {
                if i > 0 {
                    s.push(',');
                }
                s.push_str(&text_of(*t));
            }
            s.push(']');
        }
        Type::Dist { shape, dtype, dist } => {
            s.push_str("pd_dist.tensor<");
            write_dims(&mut s, shape, *dtype);
            s.push_str(", ");
            dist.write_to(&mut s);
            s.push('>');
        }
        Type::Opaque(t) => s.push_str(t),
    }
    s
}

impl fmt::Display for DType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.short_name())
    }
}
