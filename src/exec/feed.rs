//! Inputs and initial state for a run: the `*.numerics.json` layout, a seeded generator, and
//! the dump written by `irw run --dump`.
//!
//! The JSON layout is the one of `fixtures/paddle/*.numerics.json`: `inputs` maps each fed
//! `pd_op.data` name to a (nested-list) batch; `state_init` maps persistable names to
//! `{shape, dtype, values}` and replaces what the startup program computed (Paddle's random
//! initializers cannot be reproduced outside Paddle). Values are f32 (or bf16) widened to
//! f64, so parsing them as f32 gives the exact bits back. A dump uses the same object form
//! under `state`.

use indexmap::IndexMap;
use serde_json::{json, Map, Value};

use crate::diag::{Diagnostic, SourceFile};
use crate::exec::dtype::DType;
use crate::exec::kernels::cast::cast;
use crate::exec::rng::Rng;
use crate::exec::scope::Scope;
use crate::exec::tensor::{numel, Data, Tensor};
use crate::ir::{Attr, Context, Program};

/// Inputs (full batch) and initial persistables from a feed file.
#[derive(Clone, Debug, Default)]
pub struct Feed {
    pub inputs: IndexMap<String, Tensor>,
    pub state: IndexMap<String, Tensor>,
}

/// A diagnostic at byte `offset` of the feed file.
fn bad(file: &str, text: &str, offset: usize, msg: impl std::fmt::Display) -> Diagnostic {
    Diagnostic::at(&SourceFile::new(file, text), offset, format!("{msg}"))
}

/// Where the key `"key"` is written in `text`, searching from `from` (JSON values carry no
/// positions; a feed names each key once per object, so the first occurrence after the
/// enclosing key is the one meant). Falls back to `from`.
fn key_offset(text: &str, from: usize, key: &str) -> usize {
    let quoted = serde_json::to_string(key).unwrap_or_default();
    text.get(from..)
        .and_then(|t| t.find(&quoted))
        .map_or(from, |i| from + i)
}

/// The byte offset of serde_json's 1-based (line, column).
fn line_col_offset(text: &str, line: usize, col: usize) -> usize {
    let start = if line <= 1 {
        0
    } else {
        text.match_indices('\n')
            .nth(line - 2)
            .map_or(text.len(), |(i, _)| i + 1)
    };
    (start + col.saturating_sub(1)).min(text.len())
}

/// A nested list of numbers → (shape, values).
fn nested(
    v: &Value,
    shape: &mut Vec<usize>,
    depth: usize,
    out: &mut Vec<f64>,
) -> Result<(), String> {
    match v {
        Value::Array(items) => {
            if shape.len() == depth {
                shape.push(items.len());
            } else if shape[depth] != items.len() {
                return Err("ragged nested list".into());
            }
            for it in items {
                nested(it, shape, depth + 1, out)?;
            }
            Ok(())
        }
        Value::Number(n) => {
            if shape.len() != depth {
                return Err("ragged nested list".into());
            }
            out.push(n.as_f64().ok_or("not a finite number")?);
            Ok(())
        }
        _ => Err("expected numbers or lists".into()),
    }
}

/// A tensor from `{shape, dtype, values}` or from a nested list (f32).
pub fn tensor_from_json(v: &Value) -> Result<Tensor, String> {
    if let Value::Object(o) = v {
        let shape: Vec<usize> = o
            .get("shape")
            .and_then(Value::as_array)
            .ok_or("missing `shape`")?
            .iter()
            .map(|d| d.as_u64().map(|d| d as usize).ok_or("bad dimension"))
            .collect::<Result<_, _>>()?;
        let dtype_name = o.get("dtype").and_then(Value::as_str).unwrap_or("float32");
        let dtype = crate::exec::dtype::parse(dtype_name)
            .ok_or_else(|| format!("unknown dtype `{dtype_name}`"))?;
        let mut vals = Vec::new();
        let mut sh = Vec::new();
        nested(
            o.get("values").ok_or("missing `values`")?,
            &mut sh,
            0,
            &mut vals,
        )?;
        if vals.len() != numel(&shape) {
            return Err(format!(
                "shape {:?} needs {} values, found {}",
                shape,
                numel(&shape),
                vals.len()
            ));
        }
        return Ok(from_f64(shape, vals, dtype));
    }
    let mut shape = Vec::new();
    let mut vals = Vec::new();
    nested(v, &mut shape, 0, &mut vals)?;
    Ok(from_f64(shape, vals, DType::F32))
}

fn from_f64(shape: Vec<usize>, vals: Vec<f64>, dtype: DType) -> Tensor {
    let t = match dtype {
        DType::F64 => Tensor::new(shape, Data::F64(vals)),
        DType::I64 | DType::I32 | DType::Bool | DType::U8 => {
            Tensor::new(shape, Data::I64(vals.iter().map(|&v| v as i64).collect()))
        }
        // f32 and the 16-bit floats: the values are exactly representable in f32
        _ => Tensor::new(shape, Data::F32(vals.iter().map(|&v| v as f32).collect())),
    };
    match t {
        Ok(t) => cast(&t, dtype),
        Err(_) => unreachable!("lengths were checked"),
    }
}

fn tensor_map(
    file: &str,
    text: &str,
    v: Option<(&str, &Value)>,
    what: &str,
) -> Result<IndexMap<String, Tensor>, Diagnostic> {
    let mut out = IndexMap::new();
    if let Some((key, v)) = v {
        let at = key_offset(text, 0, key);
        let Value::Object(o) = v else {
            return Err(bad(file, text, at, format!("`{what}` is not an object")));
        };
        for (k, t) in o {
            let t = tensor_from_json(t).map_err(|e| {
                bad(
                    file,
                    text,
                    key_offset(text, at, k),
                    format!("`{what}.{k}`: {e}"),
                )
            })?;
            out.insert(k.clone(), t);
        }
    }
    Ok(out)
}

impl Feed {
    /// Parses a feed file (`inputs`, and `state_init` or `state`).
    pub fn parse(file: &str, text: &str) -> Result<Feed, Diagnostic> {
        let v: Value = serde_json::from_str(text).map_err(|e| {
            let at = line_col_offset(text, e.line(), e.column());
            let msg = e.to_string();
            // The position is the diagnostic's; drop serde's " at line L column C".
            let msg = msg
                .rsplit_once(" at line ")
                .map_or(msg.as_str(), |(m, _)| m);
            bad(file, text, at, format!("invalid JSON: {msg}"))
        })?;
        let entry = |k: &'static str| v.get(k).map(|x| (k, x));
        let inputs = tensor_map(file, text, entry("inputs"), "inputs")?;
        let state = tensor_map(
            file,
            text,
            entry("state_init").or(entry("state")),
            "state_init",
        )?;
        Ok(Feed { inputs, state })
    }

    /// Number of rows of the fed batch (the first input's first dimension).
    pub fn batch_rows(&self) -> Option<usize> {
        self.inputs
            .values()
            .next()
            .and_then(|t| t.shape().first().copied())
    }
}

/// The non-persistable `pd_op.data` ops of a program: (name, shape attr, dtype).
pub fn fed_inputs(ctx: &Context, prog: &Program) -> Vec<(String, Vec<i64>, DType)> {
    let mut out = Vec::new();
    for op in prog.block_ops(prog.top_block()) {
        if ctx.str(prog.op_name(op)) != "pd_op.data" {
            continue;
        }
        let a = ctx.attrs(prog.op_attrs(op));
        let persistable = matches!(a.get("persistable"), Some(Attr::Array(v)) if v.first().and_then(|b| b.as_bool()) == Some(true));
        if persistable {
            continue;
        }
        let Some(name) = a.get("name").and_then(|n| n.as_str()) else {
            continue;
        };
        let shape = a
            .get("shape")
            .and_then(|s| s.as_array())
            .map(|s| s.iter().filter_map(|d| d.as_i64()).collect())
            .unwrap_or_default();
        let dtype = a
            .get("dtype")
            .and_then(|d| d.as_word())
            .and_then(crate::exec::dtype::parse)
            .unwrap_or(DType::F32);
        out.push((name.into_owned(), shape, dtype));
    }
    out
}

/// A seeded batch of `rows` rows for every fed input (`-1` dims become `rows`): standard normal
/// floats; integers uniform in [0, 2) (class labels of a two-class toy problem).
pub fn generate_batch(
    ctx: &Context,
    prog: &Program,
    rows: usize,
    seed: u64,
) -> Result<IndexMap<String, Tensor>, Diagnostic> {
    let mut rng = Rng::new(seed ^ 0x5EED_F00D);
    let mut out = IndexMap::new();
    for (name, shape, dtype) in fed_inputs(ctx, prog) {
        let dims: Vec<usize> = shape
            .iter()
            .enumerate()
            .map(|(i, &d)| match d {
                -1 if i == 0 => Ok(rows),
                d if d >= 0 => Ok(d as usize),
                _ => Err(Diagnostic::error(format!(
                    "input `{name}` has a dynamic dimension other than the batch"
                ))),
            })
            .collect::<Result<_, _>>()?;
        let elem = if dtype.is_float() { 4 } else { 8 };
        crate::exec::memory::reserve(
            &format_args!("`pd_op.data` input `{name}` (a generated batch of {rows} rows)"),
            &dims,
            elem,
        )
        .map_err(|e| e.into_diagnostic(""))?;
        let n = numel(&dims);
        let t = if dtype.is_float() {
            Tensor::new(dims, Data::F32(rng.normal_vec(n)))
        } else {
            Tensor::new(
                dims,
                Data::I64((0..n).map(|_| rng.below(2) as i64).collect()),
            )
        };
        let t = t.map_err(|e| Diagnostic::error(e.message))?;
        out.insert(name, cast(&t, dtype));
    }
    Ok(out)
}

/// Rows `[start, start + len)` of every tensor (along dimension 0).
pub fn slice_rows(
    batch: &IndexMap<String, Tensor>,
    start: usize,
    len: usize,
) -> Result<IndexMap<String, Tensor>, Diagnostic> {
    let mut out = IndexMap::new();
    for (name, t) in batch {
        let rows = t.shape().first().copied().unwrap_or(1);
        if start + len > rows {
            return Err(Diagnostic::error(format!(
                "input `{name}` has {rows} rows; rows {start}..{} were requested",
                start + len
            )));
        }
        let row = t.numel() / rows.max(1);
        let mut shape = t.shape().to_vec();
        if !shape.is_empty() {
            shape[0] = len;
        }
        let (a, b) = (start * row, (start + len) * row);
        let data = t.data().range(a, b);
        out.insert(
            name.clone(),
            Tensor::new(shape, data).map_err(|e| Diagnostic::error(e.message))?,
        );
    }
    Ok(out)
}

/// A tensor as `{shape, dtype, values}` (values widened to f64, exact).
pub fn tensor_to_json(t: &Tensor) -> Value {
    let values: Vec<Value> = match t.data() {
        Data::I64(v) => v.iter().map(|&x| json!(x)).collect(),
        Data::I32(v) => v.iter().map(|&x| json!(x)).collect(),
        Data::Bool(v) => v.iter().map(|&x| json!(x)).collect(),
        Data::U8(v) => v.iter().map(|&x| json!(x)).collect(),
        _ => t.to_f64_vec().into_iter().map(|x| json!(x)).collect(),
    };
    json!({ "shape": t.shape(), "dtype": t.dtype().attr_name(), "values": values })
}

/// A scope as a JSON object of tensors, in scope order.
pub fn scope_to_json(scope: &Scope) -> Value {
    let mut m = Map::new();
    for (k, t) in scope.iter() {
        m.insert(k.to_string(), tensor_to_json(t));
    }
    Value::Object(m)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_both_tensor_forms_exactly() {
        let text = r#"{"inputs": {"x": [[1.5, 2.0], [0.10000000149011612, -1]]},
                       "state_init": {"w": {"shape": [2], "dtype": "bfloat16", "values": [0.10009765625, 1.0]}}}"#;
        let f = Feed::parse("t.json", text).unwrap();
        let x = &f.inputs["x"];
        assert_eq!(x.shape(), &[2, 2]);
        assert_eq!(x.as_f32().unwrap()[2], 0.1f32);
        assert_eq!(f.state["w"].dtype(), DType::BF16);
        assert_eq!(f.state["w"].to_f64_vec(), vec![0.10009765625, 1.0]);
        assert_eq!(f.batch_rows(), Some(2));
        let back = tensor_from_json(&tensor_to_json(&f.state["w"])).unwrap();
        assert_eq!(back, f.state["w"]);
        assert!(Feed::parse("t.json", r#"{"inputs": {"x": [[1], [2, 3]]}}"#).is_err());
        let rows = slice_rows(&f.inputs, 1, 1).unwrap();
        assert_eq!(rows["x"].as_f32().unwrap(), &[0.1, -1.0]);
        assert!(slice_rows(&f.inputs, 1, 2).is_err());
    }

    #[test]
    fn errors_point_at_the_key_or_the_syntax_error() {
        // `"x"` also occurs in `state_init` before `inputs`: the key under `inputs` is meant.
        let text =
            "{\"state_init\": {\"x\": [1]},\n \"inputs\": {\"y\": [1],\n   \"x\": [[1], [2, 3]]}}";
        let d = Feed::parse("t.json", text).unwrap_err().to_string();
        assert!(
            d.starts_with("t.json:3:4: error: `inputs.x`: ragged nested list"),
            "{d}"
        );
        let d = Feed::parse("t.json", "{\n  \"inputs\": {,}}")
            .unwrap_err()
            .to_string();
        assert!(
            d.starts_with("t.json:2:14: error: invalid JSON: key must be a string"),
            "{d}"
        );
    }
}
