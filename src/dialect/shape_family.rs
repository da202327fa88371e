//! Result types from a small set of shape families, each named after the Paddle `infer_meta`
//! function it follows (`UnchangedInferMeta`, `ElementwiseInferMeta`, `LayerNormInferMeta`, ...).
//!
//! Why families: Paddle computes every op's result shapes with one of a few hundred C++
//! `infer_meta` functions, but the ops of training programs share a few dozen of them. The data
//! files name an op's family (`shape=layer_norm`); [`infer`] computes what Paddle would print
//! for its results from the operand types, the attributes, and the constant integer arrays an
//! operand holds (`full_int_array` axes, a `full` scalar axis). It is checked against every op
//! of the Paddle fixtures (`dialect/json_tests.rs`): a family that disagrees with Paddle's
//! printed types on any of them fails the test. The structural engine asks it too: a type a
//! rule gives an op (`-> tensor<5x5xf32>` on a `matmul`) that the family derives otherwise is
//! refused, since Paddle would recompute the type and disagree.
//!
//! The engines build ops through [`ResultRule`], the subset of a family that needs no constant
//! operand ([`Shape::engine_rule`]): `unchanged(x)` is `SameAs(x)`, `cast` `CastOf`, the
//! collectives' `reduced`/`dim0_*`; other families leave the type to the rule
//! ([`ResultRule::Explicit`]), as before.

use super::ResultRule;

/// A shape family, with the operand positions it reads resolved when the data is loaded.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Shape {
    /// No family: the result types are not derived.
    Unknown,
    /// `UnchangedInferMeta`: result 0 is operand `n`.
    Unchanged(u8),
    /// `ElementwiseInferMeta`: result 0 broadcasts operands 0 and 1, dtype of operand 0.
    Elementwise,
    /// `CompareInferMeta`: broadcast, `bool`.
    Compare,
    /// `WhereInferMeta`: `(condition, x, y)` broadcast, dtype of `x`.
    Where,
    /// `MatmulInferMeta`, with `transpose_x`/`transpose_y` (or `trans_x`/`trans_y`).
    Matmul,
    /// `FusedGemmEpilogueInferMeta`: `x` (flattened to 2-D) times the 2-D `y`, with
    /// `trans_x`/`trans_y`, plus a 1-D `bias` as long as the product's last dimension; out is
    /// `x`'s leading dimensions and that length. `reserve_space` (the activation's mask) is
    /// not derived.
    FusedGemmEpilogue,
    /// `CastInferMeta`: operand 0's shape, the `dtype` attribute.
    Cast,
    /// `CreateInferMeta`: the `shape` and `dtype` attributes (`full`).
    Full,
    /// `CreateLikeInferMeta`: operand 0's shape, the `dtype` attribute unless `Undefined`.
    FullLike,
    /// `CreateIntArrayInferMeta`: a 1-D tensor of the `dtype` attribute, as long as the `value`
    /// attribute.
    FullIntArray,
    /// `FullWithTensorInferMeta`: the shape operand's constant, the `dtype` attribute.
    FullWithTensor,
    /// `ReduceIntArrayAxisInferMeta` / `SumInferMeta`: the axis operand (empty: all), `keepdim`.
    Reduce,
    /// `ReshapeInferMeta`: the shape operand's constant (`0` copies, `-1` infers).
    Reshape,
    /// `TransposeInferMeta`: `perm`.
    Transpose,
    /// `ConcatInferMeta`: a vector operand, the axis operand's constant.
    Concat,
    /// `StackInferMeta`: a vector operand, `axis`.
    Stack,
    /// `FlattenInferMeta`: `start_axis`..=`stop_axis` into one dimension.
    Flatten,
    /// `SqueezeInferMeta`: the axis operand's constant (empty: every 1).
    Squeeze,
    /// `UnsqueezeInferMeta`: the axis operand's constant.
    Unsqueeze,
    /// `ExpandInferMeta`: the shape operand's constant (`-1` keeps).
    Expand,
    /// `TileInferMeta`: the repeat_times operand's constant.
    Tile,
    /// `SliceRawInferMeta`: starts/ends operands, `axes`, `decrease_axis`.
    Slice,
    /// `GatherInferMeta`: index operand, the axis operand's constant.
    Gather,
    /// `ConvInferMeta`: `strides`, `paddings`, `dilations`, `groups`, `data_format`,
    /// `padding_algorithm`.
    Conv,
    /// `Pool2DInferMeta`: the kernel_size operand's constant, `strides`, `paddings`,
    /// `ceil_mode`, `global_pooling`, `adaptive`, `data_format`, `padding_algorithm`.
    Pool,
    /// `BatchNormInferMeta`: out is `x`, the statistics are `[C]` as `mean`.
    BatchNorm,
    /// `LayerNormInferMeta`: out is `x`, mean and variance `x[..begin_norm_axis]` (Paddle 3.x
    /// keeps the leading dimensions; float32 for half-precision `x`).
    LayerNorm,
    /// `RmsNormInferMeta`: y is `x`, invvar `x` without its normalized dimensions.
    RmsNorm,
    /// `EmbeddingInferMeta`: `ids` dims + `[weight dim 1]`, dtype of the weight.
    Embedding,
    /// `SquaredL2NormInferMeta`: `[1]`.
    SquaredL2Norm,
    /// `AddNInferMeta`: the first tensor of the vector operand.
    AddN,
    /// `builtin.combine`: the vector of its operands' types.
    Combine,
    /// `ShapeInferMeta`: `[rank]` int32 (`shape`) or int64 (`shape64`).
    #[allow(clippy::enum_variant_names)] // the family of the op named `shape`
    ShapeOf(bool),
    /// `CrossEntropyWithSoftmaxInferMeta`: softmax is the input, loss has 1 at `axis`.
    CrossEntropy,
    /// `DropoutInferMeta`: out is `x`, mask `x`'s shape in uint8.
    Dropout,
    /// `GeneralUnaryGradInferMeta` and kin: result `N_grad` is operand `N` (up to 8 results;
    /// `u8::MAX` where a result has no such operand).
    Grad([u8; 8]),
    /// An optimizer's or in-place op's outputs: result `N_out` is operand `N`, or, written
    /// `outs(a, b, ...)`, result k is the k-th operand named (up to 8).
    Outs([u8; 8]),
    /// `TransposeGradInferMeta`: `out_grad` under the inverse of `perm`.
    TransposeGrad,
    /// `RnnInferMeta`: out is `x` with `hidden_size` (twice, bidirectional) last; the state
    /// is `pre_state`; the dropout state and reserve are left unset (`[0]`).
    Rnn,
    /// `CoalesceTensorInferMeta`: the inputs, and a fused buffer left unset (`[0]`).
    CoalesceTensor,
    /// `ArangeTensorInferMeta`: `ceil(|end − start| / step)` elements when the three operands
    /// are constants (`-1` otherwise), the `dtype` attribute.
    Arange,
    /// `SplitInferMeta`: a `vec` of parts of `x` along the axis operand's constant, sized by
    /// the sections operand's constant (one `-1` takes the rest).
    Split,
    /// `SplitWithNumInferMeta`: `num` equal parts along the axis operand's constant.
    SplitWithNum,
    /// `CheckFiniteAndUnscaleInferMeta`: the gradients as they came, and a `[1]` bool.
    CheckFinite,
    /// `FusedLinearParamGradAddInferMeta`: `dweight` `[x's last, dout's last]`, `dbias`
    /// `[dout's last]` (with `has_bias`), float32 for 16-bit inputs under `multi_precision`.
    LinearParamGrad,
    /// A collective's reduction: operand `n` without its pending partial sum.
    Reduced(u8),
    /// `all_gather`: dimension 0 times `nranks`.
    Dim0Times(u8),
    /// `reduce_scatter`: dimension 0 over `nranks`.
    Dim0Over(u8),
}

const NONE: u8 = u8::MAX;

impl Shape {
    /// `unchanged(out_grad)`, `layer_norm`, ... with operand names resolved against `operands`.
    pub fn parse(s: &str, operands: &[&str], results: &[&str]) -> Option<Shape> {
        let (head, arg) = match s.split_once('(') {
            Some((h, a)) => (h, Some(a.strip_suffix(')')?)),
            None => (s, None),
        };
        let bare = |n: &str| n.trim_start_matches(['*', '?']).to_string();
        let index = |name: &str| {
            operands
                .iter()
                .position(|o| bare(o) == name)
                .map(|i| i as u8)
        };
        let operand = || match arg {
            Some(a) => index(a),
            None => (!operands.is_empty()).then_some(0),
        };
        Some(match head {
            "unknown" => Shape::Unknown,
            "unchanged" => Shape::Unchanged(operand()?),
            "elementwise" => Shape::Elementwise,
            "compare" => Shape::Compare,
            "where" => Shape::Where,
            "matmul" => Shape::Matmul,
            "fused_gemm_epilogue" => Shape::FusedGemmEpilogue,
            "cast" => Shape::Cast,
            "full" => Shape::Full,
            "full_like" => Shape::FullLike,
            "full_int_array" => Shape::FullIntArray,
            "full_with_tensor" => Shape::FullWithTensor,
            "reduce" => Shape::Reduce,
            "reshape" => Shape::Reshape,
            "transpose" => Shape::Transpose,
            "concat" => Shape::Concat,
            "stack" => Shape::Stack,
            "flatten" => Shape::Flatten,
            "squeeze" => Shape::Squeeze,
            "unsqueeze" => Shape::Unsqueeze,
            "expand" => Shape::Expand,
            "tile" => Shape::Tile,
            "slice" => Shape::Slice,
            "gather" => Shape::Gather,
            "conv" => Shape::Conv,
            "pool" => Shape::Pool,
            "batch_norm" => Shape::BatchNorm,
            "layer_norm" => Shape::LayerNorm,
            "rms_norm" => Shape::RmsNorm,
            "embedding" => Shape::Embedding,
            "squared_l2_norm" => Shape::SquaredL2Norm,
            "add_n" => Shape::AddN,
            "combine" => Shape::Combine,
            "shape" => Shape::ShapeOf(false),
            "shape64" => Shape::ShapeOf(true),
            "cross_entropy" => Shape::CrossEntropy,
            "dropout" => Shape::Dropout,
            "reduced" => Shape::Reduced(operand()?),
            "dim0_times" => Shape::Dim0Times(operand()?),
            "dim0_over" => Shape::Dim0Over(operand()?),
            "outs" if arg.is_some() => {
                // `outs(a, b, ...)`: result k is the k-th named operand.
                let names: Vec<&str> = arg?.split(',').map(str::trim).collect();
                if names.len() > 8 || names.len() != results.len() {
                    return None;
                }
                let mut g = [NONE; 8];
                for (k, n) in names.iter().enumerate() {
                    g[k] = index(n)?;
                }
                Shape::Outs(g)
            }
            "grad" | "outs" => {
                let suffix = if head == "grad" { "_grad" } else { "_out" };
                let mut g = [NONE; 8];
                if results.len() > 8 {
                    return Some(Shape::Unknown);
                }
                for (k, r) in results.iter().enumerate() {
                    if let Some(fwd) = bare(r).strip_suffix(suffix) {
                        g[k] = index(fwd).unwrap_or(NONE);
                    }
                }
                if g.iter().all(|&x| x == NONE) {
                    return Some(Shape::Unknown);
                }
                if head == "grad" {
                    Shape::Grad(g)
                } else {
                    Shape::Outs(g)
                }
            }
            "transpose_grad" => Shape::TransposeGrad,
            "rnn" => Shape::Rnn,
            "coalesce_tensor" => Shape::CoalesceTensor,
            "arange" => Shape::Arange,
            "split" => Shape::Split,
            "split_with_num" => Shape::SplitWithNum,
            "check_finite" => Shape::CheckFinite,
            "linear_param_grad" => Shape::LinearParamGrad,
            _ => return None,
        })
    }

    /// The family's name in the data files and `irw ops`.
    pub fn name(self) -> &'static str {
        match self {
            Shape::Unknown => "unknown",
            Shape::Unchanged(_) => "unchanged",
            Shape::Elementwise => "elementwise",
            Shape::Compare => "compare",
            Shape::Where => "where",
            Shape::Matmul => "matmul",
            Shape::FusedGemmEpilogue => "fused_gemm_epilogue",
            Shape::Cast => "cast",
            Shape::Full => "full",
            Shape::FullLike => "full_like",
            Shape::FullIntArray => "full_int_array",
            Shape::FullWithTensor => "full_with_tensor",
            Shape::Reduce => "reduce",
            Shape::Reshape => "reshape",
            Shape::Transpose => "transpose",
            Shape::Concat => "concat",
            Shape::Stack => "stack",
            Shape::Flatten => "flatten",
            Shape::Squeeze => "squeeze",
            Shape::Unsqueeze => "unsqueeze",
            Shape::Expand => "expand",
            Shape::Tile => "tile",
            Shape::Slice => "slice",
            Shape::Gather => "gather",
            Shape::Conv => "conv",
            Shape::Pool => "pool",
            Shape::BatchNorm => "batch_norm",
            Shape::LayerNorm => "layer_norm",
            Shape::RmsNorm => "rms_norm",
            Shape::Embedding => "embedding",
            Shape::SquaredL2Norm => "squared_l2_norm",
            Shape::AddN => "add_n",
            Shape::Combine => "combine",
            Shape::ShapeOf(false) => "shape",
            Shape::ShapeOf(true) => "shape64",
            Shape::CrossEntropy => "cross_entropy",
            Shape::Dropout => "dropout",
            Shape::Grad(_) => "grad",
            Shape::Outs(_) => "outs",
            Shape::TransposeGrad => "transpose_grad",
            Shape::Rnn => "rnn",
            Shape::CoalesceTensor => "coalesce_tensor",
            Shape::Arange => "arange",
            Shape::Split => "split",
            Shape::SplitWithNum => "split_with_num",
            Shape::CheckFinite => "check_finite",
            Shape::LinearParamGrad => "linear_param_grad",
            Shape::Reduced(_) => "reduced",
            Shape::Dim0Times(_) => "dim0_times",
            Shape::Dim0Over(_) => "dim0_over",
        }
    }

    /// The Paddle `infer_meta` function the family follows.
    pub fn infer_meta(self) -> &'static str {
        match self {
            Shape::Unknown => "-",
            Shape::Unchanged(_) => "UnchangedInferMeta",
            Shape::Elementwise => "ElementwiseInferMeta",
            Shape::Compare => "CompareInferMeta",
            Shape::Where => "WhereInferMeta",
            Shape::Matmul => "MatmulInferMeta",
            Shape::FusedGemmEpilogue => "FusedGemmEpilogueInferMeta",
            Shape::Cast => "CastInferMeta",
            Shape::Full => "CreateInferMeta",
            Shape::FullLike => "CreateLikeInferMeta",
            Shape::FullIntArray => "CreateIntArrayInferMeta",
            Shape::FullWithTensor => "FullWithTensorInferMeta",
            Shape::Reduce => "ReduceIntArrayAxisInferMeta",
            Shape::Reshape => "ReshapeInferMeta",
            Shape::Transpose => "TransposeInferMeta",
            Shape::Concat => "ConcatInferMeta",
            Shape::Stack => "StackInferMeta",
            Shape::Flatten => "FlattenInferMeta",
            Shape::Squeeze => "SqueezeInferMeta",
            Shape::Unsqueeze => "UnsqueezeInferMeta",
            Shape::Expand => "ExpandInferMeta",
            Shape::Tile => "TileInferMeta",
            Shape::Slice => "SliceRawInferMeta",
            Shape::Gather => "GatherInferMeta",
            Shape::Conv => "ConvInferMeta",
            Shape::Pool => "Pool2DInferMeta",
            Shape::BatchNorm => "BatchNormInferMeta",
            Shape::LayerNorm => "LayerNormInferMeta",
            Shape::RmsNorm => "RmsNormInferMeta",
            Shape::Embedding => "EmbeddingInferMeta",
            Shape::SquaredL2Norm => "SquaredL2NormInferMeta",
            Shape::AddN => "AddNInferMeta",
            Shape::Combine => "CombineOp::Build",
            Shape::ShapeOf(_) => "ShapeInferMeta",
            Shape::CrossEntropy => "CrossEntropyWithSoftmaxInferMeta",
            Shape::Dropout => "DropoutInferMeta",
            Shape::Grad(_) => "GeneralUnaryGradInferMeta / GeneralBinaryGradInferMeta",
            Shape::Outs(_) => "the optimizer's InferMeta (each output is its input)",
            Shape::TransposeGrad => "TransposeGradInferMeta",
            Shape::Rnn => "RnnInferMeta",
            Shape::CoalesceTensor => "CoalesceTensorInferMeta",
            Shape::Arange => "ArangeTensorInferMeta",
            Shape::Split => "SplitInferMeta",
            Shape::SplitWithNum => "SplitWithNumInferMeta",
            Shape::CheckFinite => "CheckFiniteAndUnscaleInferMeta",
            Shape::LinearParamGrad => "FusedLinearParamGradAddInferMeta",
            Shape::Reduced(_) => "AllReduceInferMeta",
            Shape::Dim0Times(_) => "AllGatherInferMeta",
            Shape::Dim0Over(_) => "ReduceScatterInferMeta",
        }
    }

    /// The rule the rewrite engines build the op with (see the module doc).
    pub fn engine_rule(self) -> ResultRule {
        match self {
            Shape::Unchanged(i) => ResultRule::SameAs(i),
            Shape::Elementwise => ResultRule::Broadcast(0, 1),
            Shape::Compare => ResultRule::CompareOf(0),
            Shape::Cast => ResultRule::CastOf(0),
            Shape::Full => ResultRule::FromShapeDtypeAttrs,
            Shape::FullIntArray => ResultRule::IntArray,
            Shape::FullLike => ResultRule::SameAs(0),
            Shape::Reduced(i) => ResultRule::ReducedOf(i),
            Shape::Dim0Times(i) => ResultRule::Dim0Times(i, "nranks"),
            Shape::Dim0Over(i) => ResultRule::Dim0Over(i, "nranks"),
            Shape::Combine => ResultRule::VecOfOperands,
            Shape::Grad([i, NONE, NONE, NONE, NONE, NONE, NONE, NONE]) if i != NONE => {
                ResultRule::SameAs(i)
            }
            _ => ResultRule::Explicit,
        }
    }
}

use crate::ir::{Attrs, Context, DType, OpId, Program, Type};

/// What a family reads of an op: operand types, the items of a vector operand, the constant
/// integers an operand holds, and the attributes.
pub trait OpView {
    /// Operand `i`'s type; `None` when absent (`<<NULL VALUE>>`) or out of range.
    fn ty(&self, i: usize) -> Option<&Type>;
    /// The tensor types of a `vec[...]` operand.
    fn items(&self, i: usize) -> Option<Vec<&Type>>;
    /// The integers operand `i` holds when it is a constant (`full_int_array`, `full`).
    fn ints(&self, i: usize) -> Option<Vec<i64>>;
    /// The number operand `i` holds when it is a `full` constant.
    fn scalar(&self, i: usize) -> Option<f64>;
    /// `vec[items...]`. A family derives a vector result only to compare it with the printed
    /// one, so an item type the program does not have is `Unknown`: it can equal no printed
    /// type.
    fn vec_of(&self, items: Vec<Type>) -> Type;
    fn attrs(&self) -> Attrs<'_>;
}

/// What in the operands of an op of family `shape` its InferMeta refuses, where the family
/// says and the shapes are known (a dynamic dimension fits any): a matmul's inner dimensions
/// that differ; a `fused_gemm_epilogue` whose `y` is not 2-D, whose inner dimensions differ,
/// or whose bias is not 1-D of the output's width; a `full` whose `shape` has a dimension
/// below 0 (Paddle fills only a shape it knows: `shape(%x)` of a batch is not one). `None`
/// when they fit or it cannot tell.
pub fn operands_misfit(shape: Shape, op: &dyn OpView) -> Option<String> {
    let attrs = op.attrs();
    if shape == Shape::Full {
        let dims = ints_attr(&attrs, "shape")?;
        return dims.iter().find(|&&d| d < 0).map(|d| {
            format!(
                "has the dimension {d} in `shape` {dims:?}: Paddle fills only a shape it knows (its InferMeta refuses a `shape` value below 0); a dynamic shape is `full_like`'s"
            )
        });
    }
    let flag = |a: &str, b: &str| {
        bool_attr(&attrs, a)
            .or_else(|| bool_attr(&attrs, b))
            .unwrap_or(false)
    };
    let known = |a: i64, b: i64| a >= 0 && b >= 0;
    let (x, _) = dense(op.ty(0)?)?;
    let (y, _) = dense(op.ty(1)?)?;
    let (tx, ty) = (
        flag("transpose_x", "trans_x"),
        flag("transpose_y", "trans_y"),
    );
    // The contracted dimension of each side, after its transpose (a 1-D side is a vector).
    let inner = |s: &[i64], t: bool, left: bool| -> Option<i64> {
        match s.len() {
            0 => None,
            1 => Some(s[0]),
            n if left != t => Some(s[n - 1]),
            n => Some(s[n - 2]),
        }
    };
    match shape {
        Shape::Matmul | Shape::FusedGemmEpilogue => {
            if shape == Shape::FusedGemmEpilogue && y.len() != 2 {
                return Some(format!(
                    "reads a `y` of rank {}: the weight must be 2-D",
                    y.len()
                ));
            }
            if shape == Shape::FusedGemmEpilogue && x.len() < 2 {
                return Some(format!(
                    "reads an `x` of rank {}: Paddle's InferMeta wants a matrix or a batch of them (rank 2 or more)",
                    x.len()
                ));
            }
            let (kx, ky) = (inner(x, tx, true)?, inner(y, ty, false)?);
            if known(kx, ky) && kx != ky {
                return Some(format!(
                    "multiplies `x` of shape {x:?} by `y` of shape {y:?}{}: the inner dimensions {kx} and {ky} differ",
                    match (tx, ty) {
                        (false, false) => "",
                        (true, false) => " (x transposed)",
                        (false, true) => " (y transposed)",
                        (true, true) => " (both transposed)",
                    }
                ));
            }
            if shape == Shape::FusedGemmEpilogue {
                let (bias, _) = dense(op.ty(2)?)?;
                let n = if ty { y[0] } else { y[1] };
                if bias.len() != 1 || (known(bias[0], n) && bias[0] != n) {
                    return Some(format!(
                        "adds a bias of shape {bias:?} to an output {n} wide: the bias must be 1-D, [{n}]"
                    ));
                }
            }
            None
        }
        _ => None,
    }
}

/// An op of a program as an [`OpView`]: constants are read off the defining `full_int_array`
/// (`value`) or `full` (`value`, when integral).
pub struct ProgramOp<'a> {
    pub ctx: &'a Context,
    pub prog: &'a Program,
    pub op: OpId,
}

impl OpView for ProgramOp<'_> {
    fn ty(&self, i: usize) -> Option<&Type> {
        if i >= self.prog.num_operands(self.op) {
            return None;
        }
        let v = self.prog.operand(self.op, i)?;
        match self.ctx.ty(self.prog.value_type(v)) {
            Type::Null => None,
            t => Some(t),
        }
    }

    fn items(&self, i: usize) -> Option<Vec<&Type>> {
        match self.ty(i)? {
            Type::Vec(items) => Some(items.iter().map(|&t| self.ctx.ty(t)).collect()),
            _ => None,
        }
    }

    fn ints(&self, i: usize) -> Option<Vec<i64>> {
        let v = self.prog.operand(self.op, i)?;
        let def = self.prog.defining_op(v)?;
        let attrs = self.ctx.attrs(self.prog.op_attrs(def));
        let value = attrs.get("value")?;
        match self.ctx.str(self.prog.op_name(def)) {
            "pd_op.full_int_array" => value.as_array()?.iter().map(|a| a.as_i64()).collect(),
            "pd_op.full" => {
                let f = value.as_f64()?;
                (f.fract() == 0.0).then_some(vec![f as i64])
            }
            _ => None,
        }
    }

    fn scalar(&self, i: usize) -> Option<f64> {
        let v = self.prog.operand(self.op, i)?;
        let def = self.prog.defining_op(v)?;
        if self.ctx.str(self.prog.op_name(def)) != "pd_op.full" {
            return None;
        }
        self.ctx
            .attrs(self.prog.op_attrs(def))
            .get("value")?
            .as_f64()
    }

    fn vec_of(&self, items: Vec<Type>) -> Type {
        Type::Vec(
            items
                .iter()
                .map(|t| self.ctx.find_type(t).unwrap_or(Context::UNKNOWN_TYPE))
                .collect(),
        )
    }

    fn attrs(&self) -> Attrs<'_> {
        self.ctx.attrs(self.prog.op_attrs(self.op))
    }
}

fn dense(t: &Type) -> Option<(&[i64], DType)> {
    match t {
        Type::Tensor { shape, dtype } => Some((shape, *dtype)),
        _ => None,
    }
}

fn tensor(shape: Vec<i64>, dtype: DType) -> Type {
    Type::Tensor { shape, dtype }
}

fn int_attr(a: &Attrs<'_>, k: &str) -> Option<i64> {
    a.get(k)?.as_i64()
}

fn ints_attr(a: &Attrs<'_>, k: &str) -> Option<Vec<i64>> {
    a.get(k)?.as_array()?.iter().map(|x| x.as_i64()).collect()
}

fn bool_attr(a: &Attrs<'_>, k: &str) -> Option<bool> {
    a.get(k)?.as_bool()
}

fn dtype_attr(a: &Attrs<'_>) -> Option<DType> {
    DType::from_attr_name(a.get("dtype")?.as_word()?)
}

/// A negative axis counted from the end; `None` outside `0..rank`.
fn axis(a: i64, rank: usize) -> Option<usize> {
    let r = rank as i64;
    let a = if a < 0 { a + r } else { a };
    (0..r).contains(&a).then_some(a as usize)
}

/// Numpy broadcasting with Paddle's dynamic dimensions (`-1` against `n > 1` is `n`).
fn broadcast(a: &[i64], b: &[i64]) -> Option<Vec<i64>> {
    let n = a.len().max(b.len());
    let mut out = vec![0; n];
    for k in 0..n {
        let x = if k + a.len() >= n {
            a[k + a.len() - n]
        } else {
            1
        };
        let y = if k + b.len() >= n {
            b[k + b.len() - n]
        } else {
            1
        };
        out[k] = match (x, y) {
            (x, y) if x == y => x,
            (1, y) => y,
            (x, 1) => x,
            (-1, y) => y,
            (x, -1) => x,
            _ => return None,
        };
    }
    Some(out)
}

fn product(dims: &[i64]) -> i64 {
    if dims.iter().any(|&d| d < 0) {
        -1
    } else {
        dims.iter().product()
    }
}

/// Statistics of half-precision inputs are kept in float32 (Paddle's norm kernels).
fn stat_dtype(d: DType) -> DType {
    match d {
        DType::F16 | DType::BF16 => DType::F32,
        d => d,
    }
}

/// The result types `shape` derives for `op`, one per result (`None` where it cannot say);
/// `None` when the family derives nothing for these operands (a missing constant, a
/// distributed type, a shape the family refuses).
pub fn infer(shape: Shape, op: &dyn OpView, n_results: usize) -> Option<Vec<Option<Type>>> {
    let attrs = op.attrs();
    let one = |t: Type| Some(vec![Some(t)]);
    let x = || op.ty(0).and_then(dense);
    match shape {
        Shape::Unknown => None,
        Shape::Unchanged(i) => one(op.ty(i as usize)?.clone()),
        Shape::Combine => one(op.vec_of((0..).map_while(|i| op.ty(i).cloned()).collect())),
        Shape::TransposeGrad => {
            let (s, d) = x()?;
            let perm = ints_attr(&attrs, "perm")?;
            if perm.len() != s.len() {
                return None;
            }
            let mut out = vec![0; s.len()];
            for (k, &p) in perm.iter().enumerate() {
                out[axis(p, s.len())?] = s[k];
            }
            one(tensor(out, d))
        }
        Shape::Rnn => {
            let (s, d) = x()?;
            let h = int_attr(&attrs, "hidden_size")?;
            let dirs = if bool_attr(&attrs, "is_bidirec") == Some(true) {
                2
            } else {
                1
            };
            let mut out = s.get(..s.len().checked_sub(1)?)?.to_vec();
            out.push(h * dirs);
            Some(vec![
                Some(tensor(out, d)),
                Some(tensor(vec![0], d)),
                op.ty(1).cloned(),
                Some(tensor(vec![0], d)),
            ])
        }
        Shape::Arange => {
            let d = dtype_attr(&attrs)?;
            let n = match (op.scalar(0), op.scalar(1), op.scalar(2)) {
                (Some(a), Some(b), Some(st)) if st != 0.0 => ((b - a) / st).abs().ceil() as i64,
                _ => -1,
            };
            one(tensor(vec![n], d))
        }
        Shape::Split | Shape::SplitWithNum => {
            let (s, d) = x()?;
            let axis_operand = if shape == Shape::Split { 2 } else { 1 };

            let a = axis(*op.ints(axis_operand)?.first()?, s.len())?;
            let dim = s[a];
            let sizes = if shape == Shape::Split {
                let mut sections = op.ints(1)?;
                let rest = sections.iter().filter(|&&v| v == -1).count();
                if rest == 1 && dim >= 0 {
                    let known: i64 = sections.iter().filter(|&&v| v != -1).sum();
                    let i = sections.iter().position(|&v| v == -1)?;
                    sections[i] = dim - known;
                }
                sections
            } else {
                let num = int_attr(&attrs, "num")?;
                if num <= 0 {
                    return None;
                }
                vec![if dim < 0 { -1 } else { dim / num }; num as usize]
            };
            let parts: Vec<Type> = sizes
                .into_iter()
                .map(|n| {
                    let mut part = s.to_vec();
                    part[a] = n;
                    tensor(part, d)
                })
                .collect();
            one(op.vec_of(parts))
        }
        Shape::CheckFinite => Some(vec![op.ty(0).cloned(), Some(tensor(vec![1], DType::Bool))]),
        Shape::LinearParamGrad => {
            let (xs, d) = x()?;
            let (ds, _) = dense(op.ty(1)?)?;
            let (n, m) = (*xs.last()?, *ds.last()?);
            let wide = bool_attr(&attrs, "multi_precision") == Some(true)
                && matches!(d, DType::F16 | DType::BF16);
            let d = if wide { DType::F32 } else { d };
            let bias = bool_attr(&attrs, "has_bias").unwrap_or(true);
            Some(vec![
                Some(tensor(vec![n, m], d)),
                bias.then(|| tensor(vec![m], d)),
            ])
        }
        Shape::CoalesceTensor => Some(vec![
            op.ty(0).cloned(),
            Some(tensor(vec![0], dtype_attr(&attrs)?)),
        ]),
        Shape::Grad(g) | Shape::Outs(g) => {
            let mut out = Vec::with_capacity(n_results);
            for k in 0..n_results {
                let src = g.get(k).copied().unwrap_or(NONE);
                out.push(if src == NONE {
                    None
                } else {
                    op.ty(src as usize).cloned()
                });
            }
            Some(out)
        }
        Shape::Elementwise | Shape::Compare => {
            let (a, d) = x()?;
            let (b, _) = dense(op.ty(1)?)?;
            let d = if shape == Shape::Compare {
                DType::Bool
            } else {
                d
            };
            one(tensor(broadcast(a, b)?, d))
        }
        Shape::Where => {
            let (c, _) = x()?;
            let (a, d) = dense(op.ty(1)?)?;
            let (b, _) = dense(op.ty(2)?)?;
            one(tensor(broadcast(&broadcast(c, a)?, b)?, d))
        }
        Shape::Matmul => {
            let (a, d) = x()?;
            let (b, _) = dense(op.ty(1)?)?;
            let tx = bool_attr(&attrs, "transpose_x")
                .or_else(|| bool_attr(&attrs, "trans_x"))
                .unwrap_or(false);
            let ty = bool_attr(&attrs, "transpose_y")
                .or_else(|| bool_attr(&attrs, "trans_y"))
                .unwrap_or(false);
            let (mut a, mut b) = (a.to_vec(), b.to_vec());
            let (a1, b1) = (a.len() == 1, b.len() == 1);
            if a1 {
                a.insert(0, 1);
            }
            if b1 {
                b.push(1);
            }
            if a.len() < 2 || b.len() < 2 {
                return None;
            }
            let (ra, rb) = (a.len(), b.len());
            if tx {
                a.swap(ra - 1, ra - 2);
            }
            if ty {
                b.swap(rb - 1, rb - 2);
            }
            let mut out = broadcast(&a[..ra - 2], &b[..rb - 2])?;
            if !a1 {
                out.push(a[ra - 2]);
            }
            if !b1 {
                out.push(b[rb - 1]);
            }
            one(tensor(out, d))
        }
        Shape::FusedGemmEpilogue => {
            let (a, d) = x()?;
            let (b, _) = dense(op.ty(1)?)?;
            let (bias, _) = dense(op.ty(2)?)?;
            let tx = bool_attr(&attrs, "trans_x").unwrap_or(false);
            let ty = bool_attr(&attrs, "trans_y").unwrap_or(false);
            if a.len() < 2 || b.len() != 2 || bias.len() != 1 || (tx && a.len() != 2) {
                return None;
            }
            let n = if ty { b[0] } else { b[1] };
            if bias[0] != n && bias[0] >= 0 && n >= 0 {
                return None;
            }
            let mut out = if tx {
                vec![a[1]]
            } else {
                a[..a.len() - 1].to_vec()
            };
            out.push(n);
            let mut v = vec![Some(tensor(out, d))];
            v.resize(n_results.max(1), None);
            Some(v)
        }
        Shape::Cast => {
            let t = op.ty(0)?;
            one(t.with_shape_dtype(t.shape()?.to_vec(), dtype_attr(&attrs)?))
        }
        Shape::Full => one(tensor(ints_attr(&attrs, "shape")?, dtype_attr(&attrs)?)),
        Shape::FullLike => {
            let (s, d) = x()?;
            let d = dtype_attr(&attrs).unwrap_or(d);
            one(tensor(s.to_vec(), d))
        }
        Shape::FullIntArray => {
            let n = attrs.get("value")?.as_array()?.len() as i64;
            one(tensor(vec![n], dtype_attr(&attrs)?))
        }
        Shape::FullWithTensor => one(tensor(op.ints(1)?, dtype_attr(&attrs)?)),
        Shape::Reduce => {
            let (s, d) = x()?;
            let axes = op.ints(1)?;
            let keep = bool_attr(&attrs, "keepdim").unwrap_or(false);
            let mut drop = vec![axes.is_empty(); s.len()];
            for a in axes {
                drop[axis(a, s.len())?] = true;
            }
            let mut out = Vec::new();
            for (k, &dim) in s.iter().enumerate() {
                if !drop[k] {
                    out.push(dim);
                } else if keep {
                    out.push(1);
                }
            }
            let d = dtype_attr(&attrs).unwrap_or(d);
            one(tensor(out, d))
        }
        Shape::Reshape => {
            let (s, d) = x()?;
            let mut out = op.ints(1)?;
            for (k, v) in out.iter_mut().enumerate() {
                if *v == 0 {
                    *v = *s.get(k)?;
                }
            }
            let known: i64 = out.iter().filter(|&&v| v != -1).product();
            let total = product(s);
            if out.iter().filter(|&&v| v == -1).count() == 1 && total >= 0 && known > 0 {
                let i = out.iter().position(|&v| v == -1)?;
                out[i] = total / known;
            }
            one(tensor(out, d))
        }
        Shape::Transpose => {
            let (s, d) = x()?;
            let perm = ints_attr(&attrs, "perm")?;
            let out = perm
                .iter()
                .map(|&p| s.get(axis(p, s.len())?).copied())
                .collect::<Option<Vec<_>>>()?;
            one(tensor(out, d))
        }
        Shape::Concat | Shape::Stack | Shape::AddN => {
            let items = op.items(0)?;
            let first = dense(items.first()?)?;
            match shape {
                Shape::AddN => one(tensor(first.0.to_vec(), first.1)),
                Shape::Stack => {
                    let a = int_attr(&attrs, "axis")?;
                    let mut out = first.0.to_vec();
                    out.insert(axis(a, out.len() + 1)?, items.len() as i64);
                    one(tensor(out, first.1))
                }
                _ => {
                    let a = axis(*op.ints(1)?.first()?, first.0.len())?;
                    let mut out = first.0.to_vec();
                    let mut sum = 0;
                    for t in &items {
                        let d = *dense(t)?.0.get(a)?;
                        sum = if d < 0 || sum < 0 { -1 } else { sum + d };
                    }
                    out[a] = sum;
                    one(tensor(out, first.1))
                }
            }
        }
        Shape::Flatten => {
            let (s, d) = x()?;
            if s.is_empty() {
                return one(tensor(vec![1], d));
            }
            let a = axis(int_attr(&attrs, "start_axis")?, s.len())?;
            let b = axis(int_attr(&attrs, "stop_axis")?, s.len())?;
            if a > b {
                return None;
            }
            let mut out = s[..a].to_vec();
            out.push(product(&s[a..=b]));
            out.extend_from_slice(&s[b + 1..]);
            one(tensor(out, d))
        }
        Shape::Squeeze => {
            let (s, d) = x()?;
            let axes = op.ints(1)?;
            let mut drop = vec![false; s.len()];
            for a in &axes {
                let k = axis(*a, s.len())?;
                drop[k] = s[k] == 1;
            }
            if axes.is_empty() {
                drop = s.iter().map(|&v| v == 1).collect();
            }
            let out = s
                .iter()
                .zip(drop)
                .filter(|(_, d)| !d)
                .map(|(&v, _)| v)
                .collect();
            one(tensor(out, d))
        }
        Shape::Unsqueeze => {
            let (s, d) = x()?;
            let mut out = s.to_vec();
            for a in op.ints(1)? {
                let k = axis(a, out.len() + 1)?;
                out.insert(k, 1);
            }
            one(tensor(out, d))
        }
        Shape::Expand => {
            let (s, d) = x()?;
            let want = op.ints(1)?;
            if want.len() < s.len() {
                return None;
            }
            let off = want.len() - s.len();
            let out = want
                .iter()
                .enumerate()
                .map(|(k, &w)| if w == -1 && k >= off { s[k - off] } else { w })
                .collect();
            one(tensor(out, d))
        }
        Shape::Tile => {
            let (s, d) = x()?;
            let reps = op.ints(1)?;
            let n = s.len().max(reps.len());
            let at = |v: &[i64], k: usize| {
                if k + v.len() >= n {
                    v[k + v.len() - n]
                } else {
                    1
                }
            };
            let out = (0..n)
                .map(|k| {
                    let x = at(s, k);
                    if x < 0 {
                        -1
                    } else {
                        x * at(&reps, k)
                    }
                })
                .collect();
            one(tensor(out, d))
        }
        Shape::Slice => {
            let (s, d) = x()?;
            let axes = ints_attr(&attrs, "axes")?;
            let (starts, ends) = (op.ints(1)?, op.ints(2)?);
            let mut out = s.to_vec();
            for (k, &a) in axes.iter().enumerate() {
                let a = axis(a, s.len())?;
                let dim = s[a];
                if dim < 0 {
                    continue;
                }
                let clamp = |v: i64| {
                    let v = if v < 0 { v + dim } else { v };
                    v.clamp(0, dim)
                };
                out[a] = (clamp(*ends.get(k)?) - clamp(*starts.get(k)?)).max(0);
            }
            let dec = ints_attr(&attrs, "decrease_axis").unwrap_or_default();
            let mut keep = vec![true; out.len()];
            for a in dec {
                keep[axis(a, out.len())?] = false;
            }
            let out = out
                .into_iter()
                .zip(keep)
                .filter(|(_, k)| *k)
                .map(|(v, _)| v)
                .collect();
            one(tensor(out, d))
        }
        Shape::Gather => {
            let (s, d) = x()?;
            let (idx, _) = dense(op.ty(1)?)?;
            let a = axis(
                op.ints(2).and_then(|v| v.first().copied()).unwrap_or(0),
                s.len(),
            )?;
            let mut out = s[..a].to_vec();
            out.extend_from_slice(idx);
            out.extend_from_slice(&s[a + 1..]);
            one(tensor(out, d))
        }
        Shape::Conv => conv(op, &attrs).map(|t| vec![Some(t)]),
        Shape::Pool => pool(op, &attrs).map(|t| vec![Some(t)]),
        Shape::BatchNorm => {
            let t = op.ty(0)?.clone();
            let stat = op.ty(1)?.clone();
            let mut out = vec![Some(t), Some(stat.clone()), Some(stat.clone())];
            out.push(Some(stat.clone()));
            out.push(Some(stat));
            out.resize(n_results, None);
            Some(out)
        }
        Shape::LayerNorm => {
            let (s, d) = x()?;
            let b = int_attr(&attrs, "begin_norm_axis")?;
            let b = if b < 0 { b + s.len() as i64 } else { b };
            let lead = s.get(..usize::try_from(b).ok()?)?;
            let stat = tensor(lead.to_vec(), stat_dtype(d));
            Some(vec![
                Some(tensor(s.to_vec(), d)),
                Some(stat.clone()),
                Some(stat),
            ])
        }
        Shape::RmsNorm => {
            let (s, d) = x()?;
            let norm = ints_attr(&attrs, "normalized_shape")?;
            let lead = s.get(..s.len().checked_sub(norm.len())?)?.to_vec();
            Some(vec![
                Some(tensor(s.to_vec(), d)),
                Some(tensor(lead, stat_dtype(d))),
            ])
        }
        Shape::Embedding => {
            let (ids, _) = x()?;
            let (w, d) = dense(op.ty(1)?)?;
            let mut out = ids.to_vec();
            out.push(*w.get(1)?);
            one(tensor(out, d))
        }
        Shape::SquaredL2Norm => one(tensor(vec![1], x()?.1)),
        Shape::ShapeOf(i64s) => {
            let rank = op.ty(0)?.shape()?.len() as i64;
            one(tensor(
                vec![rank],
                if i64s { DType::I64 } else { DType::I32 },
            ))
        }
        Shape::CrossEntropy => {
            let (s, d) = x()?;
            let a = axis(int_attr(&attrs, "axis").unwrap_or(-1), s.len())?;
            let mut loss = s.to_vec();
            loss[a] = 1;
            Some(vec![Some(tensor(s.to_vec(), d)), Some(tensor(loss, d))])
        }
        Shape::Dropout => {
            let (s, d) = x()?;
            Some(vec![
                Some(tensor(s.to_vec(), d)),
                Some(tensor(s.to_vec(), DType::U8)),
            ])
        }
        Shape::Reduced(i) => one(super::result_type::reduced(op.ty(i as usize)?)),
        Shape::Dim0Times(i) | Shape::Dim0Over(i) => {
            let n = int_attr(&attrs, "nranks")?;
            let t = super::result_type::dim0_scaled(
                op.ty(i as usize)?,
                n,
                matches!(shape, Shape::Dim0Times(_)),
            )?;
            one(t)
        }
    }
}

/// Output size of one spatial dimension of a convolution or pooling window.
fn window(len: i64, k: i64, pad: (i64, i64), stride: i64, dilation: i64, ceil: bool) -> i64 {
    if len < 0 {
        return -1;
    }
    let span = dilation * (k - 1) + 1;
    let room = len + pad.0 + pad.1 - span;
    if ceil {
        (room + stride - 1) / stride + 1
    } else {
        room / stride + 1
    }
}

/// Paddings as `(before, after)` per spatial dimension (`[p]`, `[ph, pw]` or 4 values), after
/// `padding_algorithm` (`SAME` pads to `ceil(len / stride)`, `VALID` not at all).
fn pads(
    attrs: &Attrs<'_>,
    spatial: &[i64],
    ks: &[i64],
    strides: &[i64],
    dil: &[i64],
) -> Option<Vec<(i64, i64)>> {
    let p = ints_attr(attrs, "paddings").unwrap_or_default();
    let alg = attrs.get("padding_algorithm").and_then(|a| a.as_str());
    let n = spatial.len();
    match alg.as_deref() {
        Some("VALID") => return Some(vec![(0, 0); n]),
        Some("SAME") => {
            return Some(
                (0..n)
                    .map(|k| {
                        let out = (spatial[k] + strides[k] - 1) / strides[k];
                        let need =
                            ((out - 1) * strides[k] + dil[k] * (ks[k] - 1) + 1 - spatial[k]).max(0);
                        (need / 2, need - need / 2)
                    })
                    .collect(),
            )
        }
        _ => {}
    }
    Some(match p.len() {
        0 => vec![(0, 0); n],
        l if l == n => p.iter().map(|&v| (v, v)).collect(),
        l if l == 2 * n => (0..n).map(|k| (p[2 * k], p[2 * k + 1])).collect(),
        _ => return None,
    })
}

fn channels_last(attrs: &Attrs<'_>) -> bool {
    attrs
        .get("data_format")
        .and_then(|a| a.as_str())
        .is_some_and(|f| f == "NHWC" || f == "NDHWC")
}

/// Splits `[N, C, spatial..]` (or channels last) into (N, C, spatial).
fn layout(s: &[i64], last: bool) -> Option<(i64, i64, Vec<i64>)> {
    if s.len() < 3 {
        return None;
    }
    Some(if last {
        (s[0], s[s.len() - 1], s[1..s.len() - 1].to_vec())
    } else {
        (s[0], s[1], s[2..].to_vec())
    })
}

fn assemble(n: i64, c: i64, spatial: Vec<i64>, last: bool) -> Vec<i64> {
    let mut out = vec![n];
    if !last {
        out.push(c);
    }
    out.extend(spatial);
    if last {
        out.push(c);
    }
    out
}

fn per_dim(v: Option<Vec<i64>>, n: usize, default: i64) -> Vec<i64> {
    match v {
        Some(v) if v.len() == n => v,
        Some(v) if v.len() == 1 => vec![v[0]; n],
        _ => vec![default; n],
    }
}

fn conv(op: &dyn OpView, attrs: &Attrs<'_>) -> Option<Type> {
    let (s, d) = dense(op.ty(0)?)?;
    let (f, _) = dense(op.ty(1)?)?;
    let last = channels_last(attrs);
    let (n, _, spatial) = layout(s, last)?;
    let k = spatial.len();
    let ks = f.get(2..)?.to_vec();
    if ks.len() != k {
        return None;
    }
    let strides = per_dim(ints_attr(attrs, "strides"), k, 1);
    let dil = per_dim(ints_attr(attrs, "dilations"), k, 1);
    let pads = pads(attrs, &spatial, &ks, &strides, &dil)?;
    let out = (0..k)
        .map(|i| window(spatial[i], ks[i], pads[i], strides[i], dil[i], false))
        .collect();
    Some(tensor(assemble(n, f[0], out, last), d))
}

fn pool(op: &dyn OpView, attrs: &Attrs<'_>) -> Option<Type> {
    let (s, d) = dense(op.ty(0)?)?;
    let last = channels_last(attrs);
    let (n, c, spatial) = layout(s, last)?;
    let k = spatial.len();
    if bool_attr(attrs, "global_pooling") == Some(true) {
        return Some(tensor(assemble(n, c, vec![1; k], last), d));
    }
    let ks = per_dim(op.ints(1), k, 1);
    if bool_attr(attrs, "adaptive") == Some(true) {
        return Some(tensor(assemble(n, c, ks, last), d));
    }
    let strides = per_dim(ints_attr(attrs, "strides"), k, 1);
    let dil = vec![1; k];
    let pads = pads(attrs, &spatial, &ks, &strides, &dil)?;
    let ceil = bool_attr(attrs, "ceil_mode").unwrap_or(false);
    let out = (0..k)
        .map(|i| window(spatial[i], ks[i], pads[i], strides[i], 1, ceil))
        .collect();
    Some(tensor(assemble(n, c, out, last), d))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn broadcasting_follows_paddle() {
        assert_eq!(broadcast(&[-1, 8], &[8]), Some(vec![-1, 8]));
        assert_eq!(broadcast(&[4, 1], &[1, 3]), Some(vec![4, 3]));
        assert_eq!(broadcast(&[-1, 1], &[-1, 5]), Some(vec![-1, 5]));
        assert_eq!(broadcast(&[2], &[3]), None);
    }

    /// FusedLinearParamGradAddInferMeta (CPU Paddle cannot build the op, so no fixture has it):
    /// `[x's last, dout's last]` and `[dout's last]`, float32 for 16-bit inputs under
    /// `multi_precision`, no bias result without `has_bias`.
    #[test]
    fn linear_param_grad_follows_its_infer_meta() {
        let text = "{\n    (%0) = \"pd_op.data\" () {dtype:float16,name:\"x\",place:Place(undefined:0),shape:[-1,6,8],stop_gradient:[true]} : () -> tensor<-1x6x8xf16>\n    (%1) = \"pd_op.data\" () {dtype:float16,name:\"dout\",place:Place(undefined:0),shape:[-1,6,4],stop_gradient:[true]} : () -> tensor<-1x6x4xf16>\n    (%2, %3) = \"pd_op.fused_linear_param_grad_add\" (%0, %1, <<NULL VALUE>>, <<NULL VALUE>>) {has_bias:true,multi_precision:true,stop_gradient:[true,true]} : (tensor<-1x6x8xf16>, tensor<-1x6x4xf16>, <<NULL TYPE>>, <<NULL TYPE>>) -> tensor<8x4xf32>, tensor<4xf32>\n    (%4, %5) = \"pd_op.fused_linear_param_grad_add\" (%0, %1, <<NULL VALUE>>, <<NULL VALUE>>) {has_bias:false,multi_precision:false,stop_gradient:[true,true]} : (tensor<-1x6x8xf16>, tensor<-1x6x4xf16>, <<NULL TYPE>>, <<NULL TYPE>>) -> tensor<8x4xf16>, <<NULL TYPE>>\n}\n";
        let m = crate::ir::parse_module(&crate::SourceFile::new("t.ir", text))
            .unwrap_or_else(|d| panic!("{d}"));
        let p = &m.main;
        let ops: Vec<OpId> = p.walk();
        let derived = |op: OpId| {
            infer(
                Shape::LinearParamGrad,
                &ProgramOp {
                    ctx: &m.ctx,
                    prog: p,
                    op,
                },
                2,
            )
            .expect("derived")
        };
        let f = |shape: Vec<i64>, dtype| Some(tensor(shape, dtype));
        assert_eq!(
            derived(ops[2]),
            vec![f(vec![8, 4], DType::F32), f(vec![4], DType::F32)]
        );
        assert_eq!(derived(ops[3]), vec![f(vec![8, 4], DType::F16), None]);
    }

    #[test]
    fn windows() {
        assert_eq!(window(28, 5, (0, 0), 1, 1, false), 24);
        assert_eq!(window(28, 2, (0, 0), 2, 1, false), 14);
        assert_eq!(window(5, 2, (0, 0), 2, 1, true), 3);
        assert_eq!(window(-1, 3, (1, 1), 1, 1, false), -1);
    }
}
