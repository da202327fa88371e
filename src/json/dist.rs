//! Distribution types and attributes (`pd_dist`, dialect id 4) between the IR and Paddle's JSON.
//!
//! Measured with Paddle 3.3.1: `serialize_pir_program` of the Engine's dist programs (the
//! `paddle-dist` fixtures, serialized where `make_dist_fixtures.py` prints them); every shape
//! below is copied from those files (`tests/paddle_dist_json/`).
//!
//! | what | JSON |
//! |---|---|
//! | process mesh | `{"#":"4.a_process_mesh","D":[[1],[0],["dp"]]}`: shape, process ids, one dimension name per mesh dimension |
//! | tensor dist attr | `{"#":"4.a_tensor_dist","D":[<mesh>,[-1,-1],[]]}`: mesh, dims mapping, partial status `[[mesh dim, reduce type], ...]` |
//! | `Partial(reduce_type=AVG)` | partial status `[[0,4]]` (`phi::ReduceType`: SUM 0, MAX 1, MIN 2, PROD 3, AVG 4, ANY 5, ALL 6) |
//! | `Shard(dim=0)` on mesh `[2]` | dims mapping `[0,-1]` |
//! | absent operand `{mesh_shape:[],process_ids:[],dims_mappings:[]}` | `{"#":"4.a_tensor_dist","D":[{"#":"4.a_process_mesh","D":[[],[],[]]},[],[]]}` |
//! | `<#AttrNull>` slot | `{"#":"NULL"}` |
//! | op dist attr | `{"#":"4.a_op_dist","D":[<mesh>,[<operand slot>...],[<result slot>...],<chunk id>]}` |
//! | dist tensor type | `{"#":"4.t_dist_dtensor","D":[<0.t_dtensor>,<tensor dist attr>,<local dims>]}` |
//!
//! Placements are not in the format: Paddle's loader derives them from the dims mapping and the
//! partial status (Replicate, then `Partial` for each partial mesh dimension, then `Shard(dim=i)`
//! where tensor dimension i maps to the mesh dimension), and an empty mesh has none. So irw
//! derives them the same way on read, and refuses to write placements that derivation would not
//! give back. The local dims are `ceil(global / mesh dim)` along each sharded dimension
//! (Paddle's `InferLocalDDim`); Paddle takes them verbatim and `apply_dist2dense_pass` makes
//! them the dense shapes, so irw computes them on write and refuses a file whose local dims
//! differ on read. A vector slot (one entry per element of a `vec[...]` value) is an
//! `0.a_array` of slots (from Paddle's source; no fixture has one).
//!
//! Mesh dimension names are not in the text form either, but Paddle's loader requires one per
//! mesh dimension (`The size of mesh shape must be equal to the size of the dimension names`).
//! irw writes the names an input JSON file gave the same mesh ([`super::TagHints`]), else Python's
//! default `d0`, `d1`, ... Neither is printed, and Paddle's `apply_dist2dense_pass` and executor
//! ran the mlp2 fixture identically with `["dp"]` and `["d0"]`.

use crate::dialect::paddle_json::{
    ARRAY_TAG, DIST_TENSOR, NULL_TAG, OP_DIST_TAG, PROCESS_MESH_TAG, REDUCE_TYPES, TENSOR_DIST_TAG,
};
use crate::ir::{DistSlot, OpDistAttr, Placement, ReduceKind, TensorDist};
use rustc_hash::FxHashMap;
use serde_json::{json, Value};

/// Dimension names of the process meshes an input file used, by `(shape, process ids)`.
#[derive(Clone, Debug, Default)]
pub struct MeshNames {
    seen: FxHashMap<(Vec<i64>, Vec<i64>), Vec<String>>,
}

impl MeshNames {
    /// Records names from an input; the first names seen for a mesh are kept.
    pub fn learn(&mut self, shape: &[i64], ids: &[i64], names: Vec<String>) {
        self.seen
            .entry((shape.to_vec(), ids.to_vec()))
            .or_insert(names);
    }

    /// The names to write for a mesh: learned, else `d0`, `d1`, ...
    pub fn names(&self, shape: &[i64], ids: &[i64]) -> Vec<String> {
        self.seen
            .get(&(shape.to_vec(), ids.to_vec()))
            .filter(|n| n.len() == shape.len())
            .cloned()
            .unwrap_or_else(|| (0..shape.len()).map(|i| format!("d{i}")).collect())
    }
}

/// The placements Paddle derives from a dims mapping and partial status
/// (`TensorDistAttribute::placements`): `None` for an empty mesh.
fn derive_placements(
    mesh_shape: &[i64],
    dims_mapping: &[i64],
    partial: &[(i64, ReduceKind)],
) -> Result<Option<Vec<Placement>>, String> {
    if mesh_shape.is_empty() {
        return Ok(None);
    }
    let n = mesh_shape.len();
    let mut ps = vec![Placement::Replicate; n];
    for (dim, r) in partial {
        let slot = usize::try_from(*dim)
            .ok()
            .and_then(|d| ps.get_mut(d))
            .ok_or_else(|| format!("partial mesh dimension {dim} is not in a {n}-d mesh"))?;
        *slot = Placement::Partial(r.clone());
    }
    for (i, &m) in dims_mapping.iter().enumerate() {
        if m == -1 {
            continue;
        }
        let slot = usize::try_from(m)
            .ok()
            .and_then(|d| ps.get_mut(d))
            .ok_or_else(|| format!("dims mapping {m} is not a mesh dimension of a {n}-d mesh"))?;
        match slot {
            Placement::Shard(d) => {
                return Err(format!(
                    "mesh dimension {m} shards both tensor dimension {d} and {i}"
                ))
            }
            Placement::Partial(_) => {
                return Err(format!("mesh dimension {m} is both partial and sharded"))
            }
            _ => *slot = Placement::Shard(i as i64),
        }
    }
    Ok(Some(ps))
}

/// The local dims of a tensor of global `shape` (Paddle's `InferLocalDDim`).
fn local_dims(shape: &[i64], d: &TensorDist) -> Result<Vec<i64>, String> {
    if shape.is_empty() {
        return Ok(Vec::new());
    }
    if d.dims_mapping.len() != shape.len() {
        return Err(format!(
            "dims mapping {:?} does not have one entry per dimension of shape {shape:?}",
            d.dims_mapping
        ));
    }
    shape
        .iter()
        .zip(&d.dims_mapping)
        .map(|(&g, &m)| {
            if m == -1 {
                return Ok(g);
            }
            let n = usize::try_from(m)
                .ok()
                .and_then(|m| d.mesh_shape.get(m))
                .copied()
                .filter(|&n| n > 0)
                .ok_or_else(|| {
                    format!(
                        "dims mapping {m} is not a dimension of mesh {:?}",
                        d.mesh_shape
                    )
                })?;
            // C++ integer division, as Paddle computes it (also for a dynamic -1).
            Ok((g + n - 1) / n)
        })
        .collect()
}

// ---- writing ------------------------------------------------------------------------------

fn mesh_to_json(shape: &[i64], ids: &[i64], names: &MeshNames) -> Value {
    json!({"#": PROCESS_MESH_TAG, "D": [shape, ids, names.names(shape, ids)]})
}

fn reduce_code(r: &ReduceKind) -> Result<i64, String> {
    REDUCE_TYPES
        .iter()
        .find(|(_, name)| *name == r.name())
        .map(|(c, _)| *c)
        .ok_or_else(|| format!("reduce type `{}` has no code in Paddle 3.3.1", r.name()))
}

fn tensor_dist_to_json(d: &TensorDist, names: &MeshNames) -> Result<Value, String> {
    let derived = derive_placements(&d.mesh_shape, &d.dims_mapping, &d.partial)?;
    if let Some(ps) = &d.placements {
        if derived.as_ref() != Some(ps) {
            return Err(format!(
                "placements {} cannot be written: Paddle's format keeps only the dims mapping \
                 {:?} and the partial status, from which its loader derives {}",
                placements_text(ps),
                d.dims_mapping,
                derived.map_or("no placements".into(), |p| placements_text(&p))
            ));
        }
    }
    let partial = d
        .partial
        .iter()
        .map(|(dim, r)| Ok(json!([dim, reduce_code(r)?])))
        .collect::<Result<Vec<_>, String>>()?;
    Ok(json!({
        "#": TENSOR_DIST_TAG,
        "D": [mesh_to_json(&d.mesh_shape, &d.process_ids, names), d.dims_mapping, partial]
    }))
}

fn placements_text(ps: &[Placement]) -> String {
    let mut s = String::from("[");
    for (i, p) in ps.iter().enumerate() {
        if i > 0 {
            s.push(',');
        }
        p.write_to(&mut s);
    }
    s + "]"
}

fn slot_to_json(s: &DistSlot, names: &MeshNames) -> Result<Value, String> {
    match s {
        DistSlot::Tensor(t) => tensor_dist_to_json(t, names),
        DistSlot::Null => Ok(json!({"#": NULL_TAG})),
        DistSlot::Array(items) => {
            let d = items
                .iter()
                .map(|i| slot_to_json(i, names))
                .collect::<Result<Vec<_>, _>>()?;
            Ok(json!({"#": ARRAY_TAG, "D": d}))
        }
    }
}

/// Paddle's `OperationDistAttribute::get` refuses an operand slot whose mesh has a process the
/// op's mesh lacks (measured: `operand_dist_attrs element's mesh(...) not belong to input
/// mesh(...)`, at load); results are not checked.
fn check_operand_mesh(s: &DistSlot, op_ids: &[i64]) -> Result<(), String> {
    match s {
        DistSlot::Tensor(t) => match t.process_ids.iter().find(|p| !op_ids.contains(p)) {
            Some(p) => Err(format!(
                "process {p} of its mesh is not in the op's mesh {op_ids:?} (Paddle's loader \
                 refuses this)"
            )),
            None => Ok(()),
        },
        DistSlot::Null => Ok(()),
        DistSlot::Array(items) => items.iter().try_for_each(|i| check_operand_mesh(i, op_ids)),
    }
}

pub fn op_dist_to_json(a: &OpDistAttr, names: &MeshNames) -> Result<Value, String> {
    for (i, s) in a.operands.iter().enumerate() {
        check_operand_mesh(s, &a.process_ids).map_err(|m| format!("operand({i}): {m}"))?;
    }
    let slots = |v: &[DistSlot], what: &str| {
        v.iter()
            .enumerate()
            .map(|(i, s)| slot_to_json(s, names).map_err(|m| format!("{what}({i}): {m}")))
            .collect::<Result<Vec<_>, _>>()
    };
    Ok(json!({
        "#": OP_DIST_TAG,
        "D": [
            mesh_to_json(&a.mesh_shape, &a.process_ids, names),
            slots(&a.operands, "operand")?,
            slots(&a.results, "result")?,
            a.chunk_id
        ]
    }))
}

/// `{"#":"4.t_dist_dtensor","D":[dense, dist, local dims]}`; `dense` is the `0.t_dtensor` of the
/// global shape.
pub fn dist_type_to_json(
    dense: Value,
    shape: &[i64],
    d: &TensorDist,
    names: &MeshNames,
) -> Result<Value, String> {
    let local = local_dims(shape, d)?;
    Ok(json!({"#": DIST_TENSOR, "D": [dense, tensor_dist_to_json(d, names)?, local]}))
}

// ---- reading ------------------------------------------------------------------------------

fn tagged<'v>(v: &'v Value, tag: &str, arity: usize) -> Result<&'v [Value], String> {
    let got = v.get("#").and_then(Value::as_str);
    if got != Some(tag) {
        return Err(format!(
            "expected a {tag} object, found {}",
            got.map_or_else(|| "no \"#\" tag".to_string(), |t| format!("`{t}`"))
        ));
    }
    v.get("D")
        .and_then(Value::as_array)
        .filter(|d| d.len() == arity)
        .map(Vec::as_slice)
        .ok_or_else(|| format!("{tag} needs a \"D\" array of {arity} entries"))
}

fn ints(v: &Value, what: &str) -> Result<Vec<i64>, String> {
    v.as_array()
        .and_then(|a| a.iter().map(Value::as_i64).collect::<Option<Vec<_>>>())
        .ok_or_else(|| format!("{what} must be an array of integers, not {v}"))
}

/// Reads a process mesh into `(shape, process ids)`, learning its dimension names.
fn mesh_from_json(v: &Value, names: &mut MeshNames) -> Result<(Vec<i64>, Vec<i64>), String> {
    let d = tagged(v, PROCESS_MESH_TAG, 3)?;
    let shape = ints(&d[0], "a process mesh's shape")?;
    let ids = ints(&d[1], "a process mesh's process ids")?;
    let dim_names = d[2]
        .as_array()
        .and_then(|a| {
            a.iter()
                .map(|s| s.as_str().map(str::to_string))
                .collect::<Option<Vec<_>>>()
        })
        .ok_or_else(|| {
            format!(
                "a process mesh's dimension names must be an array of strings, not {}",
                d[2]
            )
        })?;
    if dim_names.len() != shape.len() {
        return Err(format!(
            "process mesh {shape:?} has {} dimension names; Paddle requires one per dimension",
            dim_names.len()
        ));
    }
    let size = shape.iter().try_fold(
        1i64,
        |acc, &s| if s < 1 { None } else { acc.checked_mul(s) },
    );
    let fits = if shape.is_empty() {
        ids.is_empty()
    } else {
        size == i64::try_from(ids.len()).ok()
    };
    if !fits {
        return Err(format!(
            "process mesh of shape {shape:?} cannot hold process ids {ids:?}"
        ));
    }
    if !shape.is_empty() {
        names.learn(&shape, &ids, dim_names);
    }
    Ok((shape, ids))
}

fn tensor_dist_from_json(v: &Value, names: &mut MeshNames) -> Result<TensorDist, String> {
    let d = tagged(v, TENSOR_DIST_TAG, 3)?;
    let (mesh_shape, process_ids) = mesh_from_json(&d[0], names)?;
    let dims_mapping = ints(&d[1], "a dims mapping")?;
    let partial = d[2]
        .as_array()
        .ok_or_else(|| format!("a partial status must be an array, not {}", d[2]))?
        .iter()
        .map(|p| {
            let pair = ints(p, "a partial status entry")?;
            let [dim, code] = pair[..] else {
                return Err(format!(
                    "a partial status entry is [mesh dimension, reduce type], not {p}"
                ));
            };
            let name = REDUCE_TYPES
                .iter()
                .find(|(c, _)| *c == code)
                .map(|(_, n)| *n)
                .ok_or_else(|| format!("unknown reduce type {code}"))?;
            Ok((dim, ReduceKind::from_name(name)))
        })
        .collect::<Result<Vec<_>, String>>()?;
    let placements = derive_placements(&mesh_shape, &dims_mapping, &partial)?;
    Ok(TensorDist {
        mesh_shape,
        process_ids,
        dims_mapping,
        partial,
        placements,
    })
}

fn slot_from_json(v: &Value, names: &mut MeshNames) -> Result<DistSlot, String> {
    match v.get("#").and_then(Value::as_str) {
        Some(NULL_TAG) => Ok(DistSlot::Null),
        Some(ARRAY_TAG) => {
            let items = v
                .get("D")
                .and_then(Value::as_array)
                .ok_or("an 0.a_array slot needs an array \"D\"")?;
            Ok(DistSlot::Array(
                items
                    .iter()
                    .map(|i| slot_from_json(i, names))
                    .collect::<Result<_, _>>()?,
            ))
        }
        _ => tensor_dist_from_json(v, names).map(DistSlot::Tensor),
    }
}

pub fn op_dist_from_json(v: &Value, names: &mut MeshNames) -> Result<OpDistAttr, String> {
    let d = tagged(v, OP_DIST_TAG, 4)?;
    let (mesh_shape, process_ids) = mesh_from_json(&d[0], names)?;
    let mut slots = |x: &Value, what: &str| -> Result<Vec<DistSlot>, String> {
        x.as_array()
            .ok_or_else(|| format!("an op dist attr's {what}s must be an array"))?
            .iter()
            .enumerate()
            .map(|(i, s)| slot_from_json(s, names).map_err(|m| format!("{what}({i}): {m}")))
            .collect()
    };
    let operands = slots(&d[1], "operand")?;
    let results = slots(&d[2], "result")?;
    let chunk_id = d[3].as_i64().ok_or_else(|| {
        format!(
            "an op dist attr's chunk id must be an integer, not {}",
            d[3]
        )
    })?;
    Ok(OpDistAttr {
        mesh_shape,
        process_ids,
        operands,
        results,
        chunk_id,
    })
}

/// Reads the dist part of a `4.t_dist_dtensor` (`D[1]`, `D[2]`) for a tensor of global `shape`.
pub fn dist_of_type(
    d: &[Value],
    shape: &[i64],
    names: &mut MeshNames,
) -> Result<TensorDist, String> {
    let [_, dist, local] = d else {
        return Err(format!(
            "{DIST_TENSOR} needs [dense tensor type, tensor dist attr, local dims]"
        ));
    };
    let td = tensor_dist_from_json(dist, names)?;
    let want = local_dims(shape, &td)?;
    let got = ints(local, "the local dims")?;
    if got != want {
        return Err(format!(
            "local dims {got:?} are not what Paddle derives for shape {shape:?} with {} \
             ({want:?}); irw cannot keep them (the text form has no local dims)",
            td.to_text()
        ));
    }
    Ok(td)
}

#[cfg(test)]
mod tests {
    use super::*;

    // Snippets copied from Paddle 3.3.1's serialization of the paddle-dist fixtures
    // (tests/paddle_dist_json), with the text Paddle prints for the same value.
    const REPLICATE_2D: &str = r##"{"#":"4.a_tensor_dist","D":[{"#":"4.a_process_mesh","D":[[1],[0],["dp"]]},[-1,-1],[]]}"##;
    const SHARD_TYPE: &str = r##"{"#":"4.t_dist_dtensor","D":[{"#":"0.t_dtensor","D":[{"#":"0.t_f32"},[4,8],"NCHW",[],0]},{"#":"4.a_tensor_dist","D":[{"#":"4.a_process_mesh","D":[[2],[0,1],["dp"]]},[0,-1],[]]},[2,8]]}"##;
    const PARTIAL_SUM: &str = r##"{"#":"4.a_tensor_dist","D":[{"#":"4.a_process_mesh","D":[[2],[0,1],["dp"]]},[-1],[[0,0]]]}"##;
    const PARTIAL_AVG_0D: &str = r##"{"#":"4.a_tensor_dist","D":[{"#":"4.a_process_mesh","D":[[2],[0,1],["dp"]]},[],[[0,4]]]}"##;
    const ABSENT: &str =
        r##"{"#":"4.a_tensor_dist","D":[{"#":"4.a_process_mesh","D":[[],[],[]]},[],[]]}"##;
    /// `pd_op.data`'s op_dist_attr: no operands, one result.
    const DATA_OP_DIST: &str = r##"{"#":"4.a_op_dist","D":[{"#":"4.a_process_mesh","D":[[1],[0],["dp"]]},[],[{"#":"4.a_tensor_dist","D":[{"#":"4.a_process_mesh","D":[[1],[0],["dp"]]},[-1],[]]}],-1]}"##;
    /// `pd_op.momentum_` (mlp5 fixture) abridged to its param, absent master_param and
    /// `<#AttrNull>` master_param_out.
    const MOMENTUM_SLOTS: &str = r##"{"#":"4.a_op_dist","D":[{"#":"4.a_process_mesh","D":[[1],[0],["dp"]]},[{"#":"4.a_tensor_dist","D":[{"#":"4.a_process_mesh","D":[[1],[0],["dp"]]},[-1],[]]},{"#":"4.a_tensor_dist","D":[{"#":"4.a_process_mesh","D":[[],[],[]]},[],[]]}],[{"#":"4.a_tensor_dist","D":[{"#":"4.a_process_mesh","D":[[1],[0],["dp"]]},[-1],[]]},{"#":"NULL"}],-1]}"##;

    fn v(s: &str) -> Value {
        serde_json::from_str(s).expect("snippet is JSON")
    }

    fn op_text(a: &OpDistAttr) -> String {
        let mut s = String::new();
        a.write_to(&mut s);
        s
    }

    #[test]
    fn tensor_dists_read_as_paddle_prints_them_and_write_back() {
        for (json, text) in [
            (REPLICATE_2D, "mesh_shape:[1],process_ids:[0],dims_mappings:[-1,-1], placements:[Replicate()]"),
            (PARTIAL_SUM, "mesh_shape:[2],process_ids:[0,1],dims_mappings:[-1], partial(0,SUM), placements:[Partial(reduce_type=SUM)]"),
            (PARTIAL_AVG_0D, "mesh_shape:[2],process_ids:[0,1],dims_mappings:[], partial(0,AVG), placements:[Partial(reduce_type=AVG)]"),
            (ABSENT, "mesh_shape:[],process_ids:[],dims_mappings:[]"),
        ] {
            let mut names = MeshNames::default();
            let d = tensor_dist_from_json(&v(json), &mut names).expect("reads");
            assert_eq!(d.to_text(), text);
            assert_eq!(tensor_dist_to_json(&d, &names).ok(), Some(v(json)));
        }
    }

    #[test]
    fn shard_type_has_paddles_local_dims() {
        let mut names = MeshNames::default();
        let t = v(SHARD_TYPE);
        let d = t["D"].as_array().expect("D");
        let td = dist_of_type(d, &[4, 8], &mut names).expect("reads");
        assert_eq!(td.placements, Some(vec![Placement::Shard(0)]));
        assert_eq!(local_dims(&[4, 8], &td).ok(), Some(vec![2, 8]));
        // Paddle's ceiling division, also for an uneven split and a dynamic dimension.
        assert_eq!(local_dims(&[5, -1], &td).ok(), Some(vec![3, -1]));
        let back = dist_type_to_json(d[0].clone(), &[4, 8], &td, &names).expect("writes");
        assert_eq!(back, t);
        // Local dims that disagree are refused (the text form cannot keep them).
        let mut wrong = d.clone();
        wrong[2] = json!([4, 8]);
        assert!(dist_of_type(&wrong, &[4, 8], &mut names).is_err());
    }

    #[test]
    fn op_dist_attrs_keep_absent_and_null_slots() {
        let mut names = MeshNames::default();
        let a = op_dist_from_json(&v(DATA_OP_DIST), &mut names).expect("reads");
        assert_eq!(
            op_text(&a),
            "{mesh:{shape:[1],process_ids:[0]},result(0):{mesh_shape:[1],process_ids:[0],dims_mappings:[-1], placements:[Replicate()]},chunk_id:-1}"
        );
        assert_eq!(op_dist_to_json(&a, &names).ok(), Some(v(DATA_OP_DIST)));
        let m = op_dist_from_json(&v(MOMENTUM_SLOTS), &mut names).expect("reads");
        assert_eq!(m.operands[1], DistSlot::Tensor(TensorDist::empty()));
        assert_eq!(m.results[1], DistSlot::Null);
        assert!(
            op_text(&m).contains(",operand(1):{mesh_shape:[],process_ids:[],dims_mappings:[]},")
        );
        assert!(op_text(&m).contains(",result(1):{<#AttrNull>},chunk_id:-1}"));
        assert_eq!(op_dist_to_json(&m, &names).ok(), Some(v(MOMENTUM_SLOTS)));
        // An operand on a process outside the op's mesh would not load.
        let mut bad = m.clone();
        if let DistSlot::Tensor(t) = &mut bad.operands[0] {
            t.process_ids = vec![5];
        }
        let e = op_dist_to_json(&bad, &names).expect_err("refused");
        assert!(e.starts_with("operand(0): process 5"), "{e}");
    }

    #[test]
    fn mesh_names_are_learned_or_defaulted() {
        let mut names = MeshNames::default();
        assert_eq!(names.names(&[2, 2], &[0, 1, 2, 3]), ["d0", "d1"]);
        mesh_from_json(
            &v(r##"{"#":"4.a_process_mesh","D":[[2],[0,1],["dp"]]}"##),
            &mut names,
        )
        .expect("reads");
        assert_eq!(names.names(&[2], &[0, 1]), ["dp"]);
        assert_eq!(names.names(&[2], &[2, 3]), ["d0"]);
        for bad in [
            r##"{"#":"4.a_process_mesh","D":[[2],[0,1],[]]}"##,
            r##"{"#":"4.a_process_mesh","D":[[2],[0],["dp"]]}"##,
            r##"{"#":"4.a_process_mesh","D":[[0],[],["dp"]]}"##,
            r##"{"#":"4.a_process_mesh","D":[[4611686018427387904,4],[0],["a","b"]]}"##,
            r##"{"#":"4.a_process_mesh","D":[[2],[0,1]]}"##,
            r##"{"#":"4.a_tensor_dist","D":[[2],[0,1],["dp"]]}"##,
        ] {
            assert!(mesh_from_json(&v(bad), &mut names).is_err(), "{bad}");
        }
    }

    #[test]
    fn placements_are_derived_as_paddle_derives_them() {
        let p = derive_placements(&[2, 2], &[1, -1], &[(0, ReduceKind::Sum)]).expect("ok");
        assert_eq!(
            p,
            Some(vec![
                Placement::Partial(ReduceKind::Sum),
                Placement::Shard(0)
            ])
        );
        assert_eq!(derive_placements(&[], &[], &[]).ok(), Some(None));
        // Paddle refuses a mesh dimension that is both partial and sharded, or shards twice.
        assert!(derive_placements(&[2], &[0], &[(0, ReduceKind::Sum)]).is_err());
        assert!(derive_placements(&[2], &[0, 0], &[]).is_err());
        assert!(derive_placements(&[2], &[-1], &[(1, ReduceKind::Sum)]).is_err());
        // Placements the format cannot carry are refused on write.
        let mut d =
            tensor_dist_from_json(&v(REPLICATE_2D), &mut MeshNames::default()).expect("reads");
        d.placements = Some(vec![Placement::Other(
            "Shard(dim=0, split_factor=2)".into(),
        )]);
        assert!(tensor_dist_to_json(&d, &MeshNames::default()).is_err());
        d.placements = Some(vec![Placement::Replicate]);
        d.partial = vec![(0, ReduceKind::Other("XOR".into()))];
        assert!(tensor_dist_to_json(&d, &MeshNames::default()).is_err());
    }
}
