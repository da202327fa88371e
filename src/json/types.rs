//! Value types between the IR and Paddle's JSON (`"TT"`).
//!
//! A dense tensor is `{"#":"0.t_dtensor","D":[{"#":"0.t_f32"},[-1,8],"NCHW",[],0]}`. The text
//! form has no layout, LoD or offset, and Paddle writes `NCHW`, `[]`, `0` for every tensor of a
//! training program (SPEC.md §6), so irw reads only those and writes them back; any other value
//! is refused rather than silently dropped. A distributed tensor wraps the dense one
//! ([`super::dist`]).
//!
//! Paddle writes a dimension below -1 where its `infer_meta` multiplies a dynamic one by a
//! constant: `instance_norm`'s saved mean is `N·C`, -4 for N = -1 and 4 channels. Its text dump
//! prints `tensor<-4xf32>`, which the text parser keeps as an opaque type (nothing is derived
//! from such a dimension), so the JSON reader makes the same opaque type of `[-4]`, and the
//! writer writes an opaque `tensor<..>` back as the dense tensor it names.

use super::dist::{dist_of_type, dist_type_to_json, MeshNames};
use crate::dialect::paddle_json::{
    DEFAULT_LAYOUT, DENSE_TENSOR, DIST_TENSOR, ELEMENT_TYPES, NULL_TAG, VECTOR,
};
use crate::ir::{Context, DType, Type, TypeId};
use serde_json::{json, Value};

fn dtype_of(tag: &str) -> Option<DType> {
    ELEMENT_TYPES
        .iter()
        .find(|(t, _)| *t == tag)
        .map(|(_, d)| *d)
}

fn element_tag(d: DType) -> &'static str {
    ELEMENT_TYPES
        .iter()
        .find(|(_, e)| *e == d)
        .map_or("?", |(t, _)| t)
}

/// Reads a `"TT"` object; `meshes` learns the dimension names of dist types' meshes.
pub fn type_from_json(
    ctx: &mut Context,
    v: &Value,
    meshes: &mut MeshNames,
) -> Result<TypeId, String> {
    let tag = v
        .get("#")
        .and_then(Value::as_str)
        .ok_or("a type needs a string \"#\" (its tag)")?;
    if tag == NULL_TAG {
        return Ok(Context::NULL_TYPE);
    }
    if let Some(d) = dtype_of(tag) {
        return Ok(ctx.intern_type(Type::Opaque(d.short_name().to_string())));
    }
    let data = v.get("D").and_then(Value::as_array);
    match tag {
        DENSE_TENSOR => {
            let (shape, dtype) = dense_from_json(data)?;
            if shape.iter().any(|&x| x < -1) {
                return Ok(ctx.intern_type(Type::Opaque(opaque_tensor_text(&shape, dtype))));
            }
            Ok(ctx.intern_type(Type::Tensor { shape, dtype }))
        }
        DIST_TENSOR => {
            let d = data.ok_or_else(|| format!("{DIST_TENSOR} needs a \"D\" array"))?;
            let dense = d
                .first()
                .filter(|t| t.get("#").and_then(Value::as_str) == Some(DENSE_TENSOR))
                .ok_or_else(|| format!("{DIST_TENSOR} needs a {DENSE_TENSOR} first"))?;
            let (shape, dtype) = dense_from_json(dense.get("D").and_then(Value::as_array))?;
            if shape.iter().any(|&x| x < -1) {
                return Err(format!(
                    "a distributed tensor with a dimension below -1, {shape:?}: irw keeps such a \
                     dimension (a dynamic one Paddle multiplied) on dense tensors only"
                ));
            }
            let dist = dist_of_type(d, &shape, meshes)?;
            Ok(ctx.intern_type(Type::Dist { shape, dtype, dist }))
        }
        VECTOR => {
            let items = data.ok_or("0.t_vec needs an array of types")?;
            let tys = items
                .iter()
                .map(|t| type_from_json(ctx, t, meshes))
                .collect::<Result<Vec<_>, _>>()?;
            Ok(ctx.intern_type(Type::Vec(tys)))
        }
        _ => Err(format!("type tag `{tag}` is not supported")),
    }
}

/// The shape and element type of a `0.t_dtensor`'s `"D"`.
fn dense_from_json(data: Option<&Vec<Value>>) -> Result<(Vec<i64>, DType), String> {
    let bad = || "0.t_dtensor needs [element type, dims, layout, lod, offset]".to_string();
    let d = data.filter(|d| d.len() == 5).ok_or_else(bad)?;
    let etag = d[0].get("#").and_then(Value::as_str).ok_or_else(bad)?;
    let dtype = dtype_of(etag).ok_or_else(|| format!("element type `{etag}` is not supported"))?;
    let shape = d[1]
        .as_array()
        .ok_or_else(bad)?
        .iter()
        .map(Value::as_i64)
        .collect::<Option<Vec<i64>>>()
        .ok_or_else(bad)?;
    let layout = d[2].as_str().ok_or_else(bad)?;
    let lod_empty = d[3].as_array().is_some_and(|l| l.is_empty());
    if layout != DEFAULT_LAYOUT || !lod_empty || d[4].as_i64() != Some(0) {
        return Err(format!(
            "a tensor with layout {layout}, lod {} and offset {} cannot be kept: irw \
             supports only layout {DEFAULT_LAYOUT}, empty lod and offset 0",
            d[3], d[4]
        ));
    }
    Ok((shape, dtype))
}

/// The text Paddle prints for a dense tensor type (`tensor<-4xf32>`).
fn opaque_tensor_text(shape: &[i64], dtype: DType) -> String {
    let dims: String = shape.iter().map(|d| format!("{d}x")).collect();
    format!("tensor<{dims}{}>", dtype.short_name())
}

/// The dims and element type of an opaque type that is a dense tensor's text
/// ([`opaque_tensor_text`]).
fn opaque_tensor(s: &str) -> Option<(Vec<i64>, DType)> {
    let body = s.strip_prefix("tensor<")?.strip_suffix('>')?;
    let mut parts: Vec<&str> = body.split('x').collect();
    let dtype = DType::from_short_name(parts.pop()?)?;
    let shape = parts
        .iter()
        .map(|p| p.parse::<i64>().ok())
        .collect::<Option<Vec<i64>>>()?;
    Some((shape, dtype))
}

fn dense_to_json(shape: &[i64], dtype: DType) -> Value {
    json!({
        "#": DENSE_TENSOR,
        "D": [{"#": element_tag(dtype)}, shape, DEFAULT_LAYOUT, [], 0]
    })
}

/// A result whose dimensions Paddle leaves unset (`OpSpec::unset_results`) is printed by
/// Paddle as `tensor<0xT>` and stored with no dimensions: this turns the `[0]` of its written
/// type into `[]`.
pub fn unset_dims(tt: &mut Value) {
    if tt.get("#").and_then(Value::as_str) == Some(DENSE_TENSOR) {
        if let Some(dims) = tt.pointer_mut("/D/1") {
            if dims.as_array().is_some_and(|d| d == &[json!(0)]) {
                *dims = json!([]);
            }
        }
    }
}

/// The reading side of [`unset_dims`]: a dense tensor with no dimensions becomes `[0]`, as
/// Paddle prints it.
pub fn with_unset_dims(ctx: &mut Context, t: TypeId) -> TypeId {
    match ctx.ty(t) {
        Type::Tensor { shape, dtype } if shape.is_empty() => {
            let dtype = *dtype;
            ctx.intern_type(Type::Tensor {
                shape: vec![0],
                dtype,
            })
        }
        _ => t,
    }
}

/// Writes a type (meshes with the dimension names `meshes` gives); the error says why it has
/// no JSON form.
pub fn type_to_json(ctx: &Context, t: TypeId, meshes: &MeshNames) -> Result<Value, String> {
    match ctx.ty(t) {
        Type::Null => Ok(json!({"#": NULL_TAG})),
        Type::Unknown => Err(
            "its type is not known (a value the text form prints without \
                              a type and nothing uses)"
                .into(),
        ),
        Type::Tensor { shape, dtype } => Ok(dense_to_json(shape, *dtype)),
        Type::Dist { shape, dtype, dist } => {
            dist_type_to_json(dense_to_json(shape, *dtype), shape, dist, meshes)
                .map_err(|m| format!("`{}`: {m}", ctx.type_text(t)))
        }
        Type::Vec(items) => {
            let d = items
                .iter()
                .map(|&i| type_to_json(ctx, i, meshes))
                .collect::<Result<Vec<_>, _>>()?;
            Ok(json!({"#": VECTOR, "D": d}))
        }
        Type::Opaque(s) => match (DType::from_short_name(s), opaque_tensor(s)) {
            (Some(d), _) => Ok(json!({"#": element_tag(d)})),
            (None, Some((shape, dtype))) => Ok(dense_to_json(&shape, dtype)),
            (None, None) => Err(format!("type `{s}` has no JSON form in irw")),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tensors_and_vectors_round_trip() {
        let mut ctx = Context::default();
        for v in [
            json!({"#":"0.t_dtensor","D":[{"#":"0.t_f32"},[-1,8],"NCHW",[],0]}),
            json!({"#":"0.t_dtensor","D":[{"#":"0.t_ui8"},[],"NCHW",[],0]}),
            json!({"#":"0.t_vec","D":[{"#":"0.t_dtensor","D":[{"#":"0.t_i64"},[0],"NCHW",[],0]}]}),
            json!({"#":"NULL"}),
            json!({"#":"0.t_dtensor","D":[{"#":"0.t_f32"},[-4],"NCHW",[],0]}),
        ] {
            let t = type_from_json(&mut ctx, &v, &mut MeshNames::default()).expect("reads");
            assert_eq!(
                type_to_json(&ctx, t, &MeshNames::default()).expect("writes"),
                v
            );
        }
        let t = type_from_json(
            &mut ctx,
            &json!({"#":"0.t_dtensor","D":[{"#":"0.t_f32"},[-1,8],"NCHW",[],0]}),
            &mut MeshNames::default(),
        )
        .expect("reads");
        assert_eq!(ctx.type_text(t), "tensor<-1x8xf32>");
        // A dimension Paddle multiplied from a dynamic one: kept as the text Paddle prints.
        let t = type_from_json(
            &mut ctx,
            &json!({"#":"0.t_dtensor","D":[{"#":"0.t_f32"},[-4],"NCHW",[],0]}),
            &mut MeshNames::default(),
        )
        .expect("reads");
        assert_eq!(ctx.type_text(t), "tensor<-4xf32>");
        assert!(matches!(ctx.ty(t), Type::Opaque(_)));
    }

    #[test]
    fn refuses_what_it_cannot_keep() {
        let mut ctx = Context::default();
        for v in [
            json!({"#":"0.t_dtensor","D":[{"#":"0.t_f32"},[4],"NHWC",[],0]}),
            json!({"#":"0.t_dtensor","D":[{"#":"0.t_f32"},[4],"NCHW",[]]}),
            json!({"#":"1.t_selected_rows","D":[]}),
            json!({"#":"0.t_dtensor","D":[{"#":"0.t_f99"},[4],"NCHW",[],0]}),
        ] {
            assert!(
                type_from_json(&mut ctx, &v, &mut MeshNames::default()).is_err(),
                "{v}"
            );
        }
        assert!(type_to_json(&ctx, Context::UNKNOWN_TYPE, &MeshNames::default()).is_err());
    }
}
