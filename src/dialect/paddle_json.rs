//! What Paddle's PIR JSON format (`serialize_pir_program` / `deserialize_pir_program`,
//! Paddle 3.3.1) needs to know about the dialect, as data: dialect ids, attribute type tags per
//! op, the compressed `builtin.parameter` form, element types, places and dtype spellings.
//!
//! Why a table: the text form Paddle prints does not say whether `value:2` is an `a_f64` or an
//! `a_i32`, but Paddle's loader does not check tags and a wrong one crashes its executor (SPEC.md
//! §5, §11: `transpose_x` as `a_i32` segfaults). So every tag irw writes comes from here, and an
//! attribute missing from the table is refused rather than guessed. The entries were read off
//! JSON written by Paddle 3.3.1 itself (the SGD/Adam/grad-merge fixtures plus a probe program
//! with every op of [`super::table::OPS`] it can build on CPU); entries marked "yaml" come from
//! Paddle's `ops.yaml` and were not observed.
//!
//! Nothing here is code that decides per op: the JSON reader and writer (`crate::json`) only
//! look names up.

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

/// `(op, attribute, tag)`. [`ANY_OP`] lines hold for every op; an op's own line wins.
pub static ATTR_TAGS: &[(&str, &str, AttrTag)] = &[
    // ---- every op ----
    (ANY_OP, "op_role", One(I32)),
    (ANY_OP, "struct_name", One(Str)),
    (ANY_OP, "dtype", One(DType)),
    (ANY_OP, "place", One(Place)),
    // ---- builtin ----
    ("builtin.set_parameter", "parameter_name", One(Str)),
    ("builtin.shadow_output", "output_name", One(Str)),
    // ---- constants and feeds ----
    ("pd_op.data", "name", One(Str)),
    ("pd_op.data", "shape", One(IntArray)),
    ("pd_op.full", "shape", One(IntArray)),
    ("pd_op.full", "value", One(F64)),
    ("pd_op.full_int_array", "value", ArrayOf(I64)),
    ("pd_op.uniform", "seed", One(I32)),
    ("pd_op.gaussian", "mean", One(F32)),
    ("pd_op.gaussian", "std", One(F32)),
    ("pd_op.gaussian", "seed", One(I32)),
    // ---- linear algebra, elementwise, reductions ----
    ("pd_op.matmul", "transpose_x", One(Bool)),
    ("pd_op.matmul", "transpose_y", One(Bool)),
    ("pd_op.matmul_grad", "transpose_x", One(Bool)),
    ("pd_op.matmul_grad", "transpose_y", One(Bool)),
    ("pd_op.add_grad", "axis", One(I32)),
    ("pd_op.subtract_grad", "axis", One(I32)),
    ("pd_op.multiply_grad", "axis", One(I32)),
    ("pd_op.divide_grad", "axis", One(I32)),
    ("pd_op.scale", "bias", One(F32)),
    ("pd_op.scale", "bias_after_scale", One(Bool)),
    ("pd_op.scale_", "bias", One(F32)),
    ("pd_op.scale_", "bias_after_scale", One(Bool)),
    ("pd_op.gelu", "approximate", One(Bool)),
    ("pd_op.gelu_grad", "approximate", One(Bool)),
    ("pd_op.softmax", "axis", One(I32)),
    ("pd_op.softmax_grad", "axis", One(I32)),
    ("pd_op.cross_entropy_with_softmax", "soft_label", One(Bool)),
    ("pd_op.cross_entropy_with_softmax", "use_softmax", One(Bool)),
    (
        "pd_op.cross_entropy_with_softmax",
        "numeric_stable_mode",
        One(Bool),
    ),
    ("pd_op.cross_entropy_with_softmax", "ignore_index", One(I32)),
    ("pd_op.cross_entropy_with_softmax", "axis", One(I32)),
    (
        "pd_op.cross_entropy_with_softmax_grad",
        "soft_label",
        One(Bool),
    ),
    (
        "pd_op.cross_entropy_with_softmax_grad",
        "use_softmax",
        One(Bool),
    ),
    (
        "pd_op.cross_entropy_with_softmax_grad",
        "numeric_stable_mode",
        One(Bool),
    ),
    (
        "pd_op.cross_entropy_with_softmax_grad",
        "ignore_index",
        One(I32),
    ),
    ("pd_op.cross_entropy_with_softmax_grad", "axis", One(I32)),
    ("pd_op.transpose", "perm", ArrayOf(I32)),
    ("pd_op.transpose_grad", "perm", ArrayOf(I32)),
    ("pd_op.mean", "keepdim", One(Bool)),
    ("pd_op.mean_grad", "keepdim", One(Bool)),
    ("pd_op.mean_grad", "reduce_all", One(Bool)),
    ("pd_op.sum", "keepdim", One(Bool)),
    ("pd_op.sum_grad", "keepdim", One(Bool)),    // yaml
    ("pd_op.sum_grad", "reduce_all", One(Bool)), // yaml
    // ---- in-place ----
    ("pd_op.set_value_with_tensor_", "axes", ArrayOf(I64)),
    (
        "pd_op.set_value_with_tensor_",
        "decrease_axes",
        ArrayOf(I64),
    ),
    ("pd_op.set_value_with_tensor_", "none_axes", ArrayOf(I64)),
    // ---- optimizers ----
    ("pd_op.sgd_", "multi_precision", One(Bool)),
    ("pd_op.momentum_", "mu", One(F32)),
    ("pd_op.momentum_", "use_nesterov", One(Bool)),
    ("pd_op.momentum_", "regularization_method", One(Str)),
    ("pd_op.momentum_", "regularization_coeff", One(F32)),
    ("pd_op.momentum_", "multi_precision", One(Bool)),
    ("pd_op.momentum_", "rescale_grad", One(F32)),
    ("pd_op.adam_", "lazy_mode", One(Bool)),
    ("pd_op.adam_", "min_row_size_to_use_multithread", One(I64)),
    ("pd_op.adam_", "multi_precision", One(Bool)),
    ("pd_op.adam_", "use_global_beta_pow", One(Bool)),
    ("pd_op.adam_", "amsgrad", One(Bool)),
    ("pd_op.adamw_", "lr_ratio", One(F32)),
    ("pd_op.adamw_", "coeff", One(F32)),
    ("pd_op.adamw_", "with_decay", One(Bool)),
    ("pd_op.adamw_", "lazy_mode", One(Bool)),
    ("pd_op.adamw_", "min_row_size_to_use_multithread", One(I64)),
    ("pd_op.adamw_", "multi_precision", One(Bool)),
    ("pd_op.adamw_", "use_global_beta_pow", One(Bool)),
    ("pd_op.adamw_", "amsgrad", One(Bool)),
    // ---- collectives (yaml) ----
    ("pd_op.c_allreduce_sum", "ring_id", One(I32)),
    ("pd_op.c_allreduce_sum", "use_calc_stream", One(Bool)),
    ("pd_op.c_allreduce_sum", "use_model_parallel", One(Bool)),
    ("pd_op.c_allreduce_sum_", "ring_id", One(I32)),
    ("pd_op.c_allreduce_sum_", "use_calc_stream", One(Bool)),
    ("pd_op.c_allreduce_sum_", "use_model_parallel", One(Bool)),
    // ---- modern collectives (observed: JSON written by Paddle 3.3.1 for each op) ----
    ("pd_op.all_reduce", "ring_id", One(I32)),
    ("pd_op.all_reduce", "reduce_type", One(I32)),
    ("pd_op.all_reduce_", "ring_id", One(I32)),
    ("pd_op.all_reduce_", "reduce_type", One(I32)),
    ("pd_op.reduce", "ring_id", One(I32)),
    ("pd_op.reduce", "root_id", One(I32)),
    ("pd_op.reduce", "reduce_type", One(I32)),
    ("pd_op.reduce_", "ring_id", One(I32)),
    ("pd_op.reduce_", "root_id", One(I32)),
    ("pd_op.reduce_", "reduce_type", One(I32)),
    ("pd_op.broadcast", "ring_id", One(I32)),
    ("pd_op.broadcast", "root", One(I32)),
    ("pd_op.broadcast_", "ring_id", One(I32)),
    ("pd_op.broadcast_", "root", One(I32)),
    ("pd_op.all_gather", "ring_id", One(I32)),
    ("pd_op.all_gather", "nranks", One(I32)),
    ("pd_op.reduce_scatter", "ring_id", One(I32)),
    ("pd_op.reduce_scatter", "nranks", One(I32)),
    // ---- slicing ----
    // `pd_op.slice` in the auto-parallel Engine's dp2 program (observed; `decrease_axis` seen
    // only empty, its element tag from ops.yaml `int64_t[]`).
    ("pd_op.slice", "axes", ArrayOf(I64)),
    ("pd_op.slice", "infer_flags", ArrayOf(I64)),
    ("pd_op.slice", "decrease_axis", ArrayOf(I64)),
    // ---- attributes passes add (Paddle's own writer drops them; its reader keeps them) ----
    // The auto-parallel Engine's reshard pass marks ops (`pd_op.mean_grad` in the dp2 fixture)
    // with this BoolAttribute (printed `true`); Paddle's JSON writer loses it.
    (ANY_OP, "replace_all_uses_with_reshard_var", One(Bool)),
    ("pd_op.add_", "grad_merge_add", One(Bool)),
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
}

pub static PARAMETER: ParameterForm = ParameterForm {
    op: "builtin.parameter",
    key: "p",
    a_flags: &["is_distributed", "is_parameter", "need_clip"],
    a_name: "parameter_name",
    oa_flags: &["persistable", "stop_gradient", "trainable"],
    da: &["op_dist_attr", "op_role"],
    qa: &["struct_name"],
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
        }
    }
}
