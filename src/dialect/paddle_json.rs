//! What Paddle's PIR JSON format (`serialize_pir_program` / `deserialize_pir_program`,
//! Paddle 3.3.1) needs to know about the dialect, as data: dialect ids, attribute type tags per
//! op, the compressed `builtin.parameter` form, element types, places and dtype spellings.
//!
//! Why a table: the text form Paddle prints does not say whether `value:2` is an `a_f64` or an
//! `a_i32`, but Paddle's loader does not check tags and a wrong one crashes its executor (SPEC.md
//! §5, §11: `transpose_x` as `a_i32` segfaults). So every tag irw writes comes from here, and an
//! attribute no definition types is refused rather than guessed. The tags follow from the
//! attribute types of each op's definition in the dialect data ([`tag_of_type`]); they are
//! checked against every tag of the JSON Paddle 3.3.1 wrote for the fixtures
//! (`dialect/json_tests.rs`).
//!
//! Nothing here is code that decides per op: the JSON reader and writer (`crate::json`) only
//! look names up.

use super::data::{AttrType, ScalarType};
use crate::ir::DType;

/// `base_code.version` irw writes: the PIR version of Paddle 3.3.1. Writing a lower version makes
/// Paddle's loader apply its attribute patches (SPEC.md §1).
pub const PIR_VERSION: u64 = 4;
/// `base_code.magic`.
pub const MAGIC: &str = "pir";

/// `(id, dialect)`: an op is written `"<id>.<name>"` (`"1.matmul"` = `pd_op.matmul`). Paddle's
/// loader accepts only these ids (SPEC.md §8).
pub static DIALECT_IDS: &[(&str, &str)] = &[
    ("0", "builtin"),
    ("1", "pd_op"),
    ("2", "cf"),
    ("3", "custom_op"),
    ("4", "pd_dist"),
];

/// The kind of one attribute value (`"AT":{"#":tag,"D":payload}`).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum Tag {
    Bool,
    I32,
    I64,
    F32,
    F64,
    Str,
    /// paddle IntArrayAttribute: payload is a plain int array.
    IntArray,
    /// DataTypeAttribute: payload is a dtype string ([`DTYPE_NAMES`]).
    DType,
    /// PlaceAttribute: payload is `[allocation type, device id, device type]` ([`PLACES`]).
    Place,
}

/// The tag of an attribute: one value, or `0.a_array` of values of one kind.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum AttrTag {
    One(Tag),
    ArrayOf(Tag),
    /// An `0.a_array` whose element kind is not known (seen only empty in an input file):
    /// only an empty array can be written with it.
    Array,
}

/// The JSON spelling of each [`Tag`].
pub static TAG_NAMES: &[(Tag, &str)] = &[
    (Tag::Bool, "0.a_bool"),
    (Tag::I32, "0.a_i32"),
    (Tag::I64, "0.a_i64"),
    (Tag::F32, "0.a_f32"),
    (Tag::F64, "0.a_f64"),
    (Tag::Str, "0.a_str"),
    (Tag::IntArray, "1.a_intarray"),
    (Tag::DType, "1.a_dtype"),
    (Tag::Place, "1.a_place"),
];
/// The JSON spelling of an array attribute.
pub const ARRAY_TAG: &str = "0.a_array";
/// A null attribute or type.
pub const NULL_TAG: &str = "NULL";

use AttrTag::{ArrayOf, One};
use Tag::*;

/// Any op: the line used when an op has no line of its own for the attribute.
pub const ANY_OP: &str = "*";

/// The tag Paddle writes an attribute of type `t` with: the C++ type PIR stores it as
/// (`float` → `pir::FloatAttribute` → `0.a_f32`; a `Scalar` as the type it holds; an `IntArray`
/// as `1.a_intarray`; a `std::vector<int64_t>` as `0.a_array` of `0.a_i64`). `None` for a
/// `phi::Scalar` of no fixed type, whose tag depends on the value.
pub fn tag_of_type(t: AttrType) -> Option<AttrTag> {
    fn scalar(s: ScalarType) -> Option<Tag> {
        Some(match s {
            ScalarType::Bool => Bool,
            ScalarType::I32 => I32,
            ScalarType::I64 => I64,
            ScalarType::F32 => F32,
            ScalarType::F64 => F64,
            ScalarType::Str => Str,
            ScalarType::Any => return None,
        })
    }
    Some(match t {
        AttrType::Bool => One(Bool),
        AttrType::I32 => One(I32),
        AttrType::I64 => One(I64),
        AttrType::F32 => One(F32),
        AttrType::F64 => One(F64),
        AttrType::Str => One(Str),
        AttrType::DType => One(DType),
        AttrType::Place => One(Place),
        AttrType::IntArray => One(IntArray),
        AttrType::Scalar(s) => One(scalar(s)?),
        AttrType::Array(s) => ArrayOf(scalar(s)?),
    })
}

/// `(op, attribute, tag)` for attributes that are in no op's definition, or whose type there
/// says no tag (`Scalar`, which holds any kind): [`ANY_OP`] lines hold for every op (an op's
/// definition wins over them). Every other tag comes from the op's attribute types in the
/// dialect ([`tag_of_type`]).
pub static ATTR_TAGS: &[(&str, &str, AttrTag)] = &[
    // ---- every op ----
    (ANY_OP, "op_role", One(I32)),
    (ANY_OP, "struct_name", One(Str)),
    (ANY_OP, "dtype", One(DType)),
    (ANY_OP, "place", One(Place)),
    // ---- attributes passes add (Paddle's own writer drops them; its reader keeps them) ----
    // The auto-parallel Engine's reshard pass marks ops (`pd_op.mean_grad` in the dp2 fixture)
    // with this BoolAttribute (printed `true`); Paddle's JSON writer loses it.
    (ANY_OP, "replace_all_uses_with_reshard_var", One(Bool)),
    ("pd_op.add_", "grad_merge_add", One(Bool)),
    // Scalar arrays Paddle's Python API builds from doubles whatever the tensor's dtype (an
    // int64 or bool `paddle.assign` too): its JSON holds `a_f64` items, and its text prints
    // whole numbers without a point (`values:[1e-05,1]`).
    ("pd_op.assign_value", "values", ArrayOf(F64)),
    ("pd_op.assign_value_", "values", ArrayOf(F64)),
    ("pd_op.cast", "master_grad_cast", One(Bool)),
];

/// Attributes written in an op's `"OA"` list (one `a_bool` per result, as `0.a_array`) instead
/// of `"A"`. In the IR they are ordinary attributes holding `[bool, ...]`.
pub static RESULT_ATTRS: &[&str] = &["persistable", "stop_gradient"];

/// The compressed form Paddle writes `builtin.parameter` in (SPEC.md §3.1):
/// `{"#":"p","A":[flags..., name],"OA":[flags...],"DA":[...],"QA":[...],"O":{...}}`.
pub struct ParameterForm {
    pub op: &'static str,
    /// The `"#"` of the compressed form.
    pub key: &'static str,
    /// `"A"`: these flags as 0/1, then the name. In the IR each flag is `[bool]`.
    pub a_flags: &'static [&'static str],
    pub a_name: &'static str,
    /// `"OA"`: these flags as 0/1. In the IR each is `[bool]`.
    pub oa_flags: &'static [&'static str],
    /// Named attributes in `"DA"` and `"QA"` (tags from [`ATTR_TAGS`]).
    pub da: &'static [&'static str],
    pub qa: &'static [&'static str],
    /// The flags Paddle's writer gives a parameter that lacks them (a learning rate a scheduler
    /// made: `{parameter_name:..,persistable:[true],stop_gradient:[true]}` is written
    /// `"A":[0,1,0,name]`, `"OA":[1,1,1]`, observed with Paddle 3.3.1;
    /// `tests/json_fixtures/lr_scheduler.*`).
    pub flag_defaults: &'static [(&'static str, bool)],
}

pub static PARAMETER: ParameterForm = ParameterForm {
    op: "builtin.parameter",
    key: "p",
    a_flags: &["is_distributed", "is_parameter", "need_clip"],
    a_name: "parameter_name",
    oa_flags: &["persistable", "stop_gradient", "trainable"],
    da: &["op_dist_attr", "op_role"],
    qa: &["struct_name"],
    flag_defaults: &[
        ("is_distributed", false),
        ("is_parameter", true),
        ("need_clip", false),
        ("trainable", true),
    ],
};

/// Element types: `{"#":"0.t_f32"}` inside `0.t_dtensor`.
pub static ELEMENT_TYPES: &[(&str, DType)] = &[
    ("0.t_f32", DType::F32),
    ("0.t_f64", DType::F64),
    ("0.t_f16", DType::F16),
    ("0.t_bf16", DType::BF16),
    ("0.t_i64", DType::I64),
    ("0.t_i32", DType::I32),
    ("0.t_i16", DType::I16),
    ("0.t_i8", DType::I8),
    ("0.t_ui8", DType::U8),
    ("0.t_bool", DType::Bool),
    ("0.t_c64", DType::C64),
    ("0.t_c128", DType::C128),
];
/// A dense tensor: `{"#":"0.t_dtensor","D":[dtype, dims, layout, lod, offset]}`.
pub const DENSE_TENSOR: &str = "0.t_dtensor";
/// The layout, lod and offset Paddle writes for every dense tensor (the text form has none).
pub const DEFAULT_LAYOUT: &str = "NCHW";
/// `builtin.combine`'s result: `{"#":"0.t_vec","D":[types...]}`.
pub const VECTOR: &str = "0.t_vec";

/// A distributed tensor (`pd_dist.tensor<...>`):
/// `{"#":"4.t_dist_dtensor","D":[<0.t_dtensor>, <4.a_tensor_dist>, <local dims>]}`. The dist
/// encodings are described in `crate::json::dist`; all observed with Paddle 3.3.1.
pub const DIST_TENSOR: &str = "4.t_dist_dtensor";
/// `{"#":"4.a_process_mesh","D":[shape, process ids, dimension names]}`.
pub const PROCESS_MESH_TAG: &str = "4.a_process_mesh";
/// `{"#":"4.a_tensor_dist","D":[<mesh>, dims mapping, [[mesh dim, reduce type], ...]]}`.
pub const TENSOR_DIST_TAG: &str = "4.a_tensor_dist";
/// `{"#":"4.a_op_dist","D":[<mesh>, [operand slots], [result slots], chunk id]}`.
pub const OP_DIST_TAG: &str = "4.a_op_dist";
/// `phi::ReduceType` codes in a partial status, with the names Paddle prints (`partial(0,AVG)`).
/// SUM (0) and AVG (4) observed; the others from `paddle.distributed` `ReduceType`.
pub static REDUCE_TYPES: &[(i64, &str)] = &[
    (0, "SUM"),
    (1, "MAX"),
    (2, "MIN"),
    (3, "PRODUCT"),
    (4, "AVG"),
    (5, "ANY"),
    (6, "ALL"),
];

/// `(JSON payload of 1.a_dtype, printed word)`. Observed with Paddle 3.3.1.
pub static DTYPE_NAMES: &[(&str, &str)] = &[
    ("float32", "float32"),
    ("float64", "float64"),
    ("float16", "float16"),
    ("bfloat16", "bfloat16"),
    ("int64", "int64"),
    ("int32", "int32"),
    ("int16", "int16"),
    ("int8", "int8"),
    ("uint8", "uint8"),
    ("bool", "bool"),
    ("complex64", "complex64"),
    ("complex128", "complex128"),
    ("Undefined(ALL_DTYPE)", "Undefined"),
];

/// A place `[allocation type, device id, device type]` and how Paddle prints it.
pub struct PlaceKind {
    pub alloc: i64,
    /// `Place(<name>)` or `Place(<name>:<device id>)`.
    pub name: &'static str,
    pub prints_device: bool,
}

/// `undefined` and `cpu` observed; the others from phi's `AllocationType` and
/// `Place::DebugString` (the CPU wheel refuses to make them).
pub static PLACES: &[PlaceKind] = &[
    PlaceKind {
        alloc: 0,
        name: "undefined",
        prints_device: true,
    },
    PlaceKind {
        alloc: 1,
        name: "cpu",
        prints_device: false,
    },
    PlaceKind {
        alloc: 2,
        name: "gpu",
        prints_device: true,
    },
    PlaceKind {
        alloc: 3,
        name: "gpu_pinned",
        prints_device: false,
    },
    PlaceKind {
        alloc: 4,
        name: "xpu",
        prints_device: true,
    },
];

/// Ops whose region is printed in the `pd_op.while` form (`(cond=..., inputs=...) {`); other
/// region ops print like `pd_op.if`.
pub static WHILE_SYNTAX_OPS: &[&str] = &["pd_op.while"];

/// Where a persistable value gets its scope name: the protocol's ([`super::protocol`]).
pub use super::protocol::{SCOPE_READERS, SCOPE_WRITERS};

/// How a keyword argument (a `@GRAD@MERGE` buffer) reaches Paddle: Paddle 3.3.1 cannot load
/// block kwargs back (SPEC.md §7), so each one is written as this op, named after the kwarg,
/// with `persistable:[true]`, first in its block; the executor then binds it by name to the
/// variable the startup program creates. Checked with Paddle 3.3.1.
pub struct KwargOp {
    pub op: &'static str,
    pub name_attr: &'static str,
    pub shape_attr: &'static str,
    pub dtype_attr: &'static str,
    pub place_attr: &'static str,
    /// The place written when the kwarg has none (`Place(undefined:0)`, as `pd_op.data` has).
    pub default_place: &'static str,
}

pub static KWARG_AS_OP: KwargOp = KwargOp {
    op: "pd_op.data",
    name_attr: "name",
    shape_attr: "shape",
    dtype_attr: "dtype",
    place_attr: "place",
    default_place: "Place(undefined:0)",
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_tag_has_one_spelling_and_lines_are_unique() {
        for (t, _) in TAG_NAMES {
            assert_eq!(TAG_NAMES.iter().filter(|(u, _)| u == t).count(), 1);
        }
        let mut seen = std::collections::BTreeSet::new();
        for (op, attr, _) in ATTR_TAGS {
            assert!(seen.insert((op, attr)), "duplicate line {op} {attr}");
            assert!(
                *op == ANY_OP || super::super::Dialect::get().spec(op).is_some(),
                "{op} is not in the dialect table"
            );
            if *op != ANY_OP {
                // A line adds what the definition does not say: its type there gives no tag.
                let spec = super::super::Dialect::get().spec(op).expect("checked");
                assert!(
                    spec.attr(attr).is_none_or(|a| tag_of_type(a.ty).is_none()),
                    "{op} {attr} has a tag in the definition"
                );
            }
        }
    }
}
