//! Distribution (auto-parallel) attributes, as Paddle's `DistDialect` prints them.
//!
//! Paddle's auto-parallel Engine hands passes *dist programs*: values typed
//! `pd_dist.tensor<4x6xf32, mesh_shape:[1],process_ids:[0],dims_mappings:[-1,-1], placements:[Replicate()]>`
//! and ops carrying `op_dist_attr:{mesh:{..},operand(0):{..},result(0):{..},chunk_id:-1}`. Both
//! are kept as structured data rather than text so that the verifier can check an op's
//! `op_dist_attr` against its operand and result types, rules can read meshes and placements in
//! guards, and the engine can give every op it creates the `op_dist_attr` its types imply
//! ([`OpDistAttr::from_types`]): one generic mechanism instead of per-rule attributes.
//!
//! Printing reproduces Paddle's bytes exactly (`paddle/fluid/pir/dialect/distributed/ir/
//! dist_dialect.cc`): `, ` before the partial status and before `placements`, `,` elsewhere.
//! A placement irw does not know is kept as written.

use std::fmt::Write;

/// A pending reduction (`phi::ReduceType`), as printed in `partial(0,SUM)` and
/// `Partial(reduce_type=SUM)`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum ReduceKind {
    Sum,
    Avg,
    Max,
    Min,
    Prod,
    Any,
    All,
    /// A name irw does not know, kept as written.
    Other(Box<str>),
}

impl ReduceKind {
    pub fn from_name(s: &str) -> ReduceKind {
        match s {
            "SUM" => ReduceKind::Sum,
            "AVG" => ReduceKind::Avg,
            "MAX" => ReduceKind::Max,
            "MIN" => ReduceKind::Min,
            "PRODUCT" | "PROD" => ReduceKind::Prod,
            "ANY" => ReduceKind::Any,
            "ALL" => ReduceKind::All,
            other => ReduceKind::Other(other.into()),
        }
    }

    pub fn name(&self) -> &str {
        match self {
            ReduceKind::Sum => "SUM",
            ReduceKind::Avg => "AVG",
            ReduceKind::Max => "MAX",
            ReduceKind::Min => "MIN",
            ReduceKind::Prod => "PRODUCT",
            ReduceKind::Any => "ANY",
            ReduceKind::All => "ALL",
            ReduceKind::Other(s) => s,
        }
    }
}

/// How a tensor is laid out along one mesh dimension.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Placement {
    /// `Replicate()`: every process holds the whole tensor.
    Replicate,
    /// `Shard(dim=D)`: tensor dimension D is split across the mesh dimension.
    Shard(i64),
    /// `Partial(reduce_type=SUM)`: each process holds a term of a pending reduction.
    Partial(ReduceKind),
    /// Any other placement (`Shard(dim=0, split_factor=2)`), kept as written.
    Other(Box<str>),
}

impl Placement {
    pub fn parse(s: &str) -> Placement {
        if s == "Replicate()" {
            return Placement::Replicate;
        }
        if let Some(d) = s
            .strip_prefix("Shard(dim=")
            .and_then(|r| r.strip_suffix(')'))
            .and_then(|d| d.parse::<i64>().ok())
        {
            return Placement::Shard(d);
        }
        if let Some(r) = s
            .strip_prefix("Partial(reduce_type=")
            .and_then(|r| r.strip_suffix(')'))
        {
            if !r.is_empty() && r.bytes().all(|b| b.is_ascii_alphanumeric()) {
                return Placement::Partial(ReduceKind::from_name(r));
            }
        }
        Placement::Other(s.into())
    }

    pub fn write_to(&self, out: &mut String) {
        match self {
            Placement::Replicate => out.push_str("Replicate()"),
            Placement::Shard(d) => {
                let _ = write!(out, "Shard(dim={d})");
            }
            Placement::Partial(r) => {
                let _ = write!(out, "Partial(reduce_type={})", r.name());
            }
            Placement::Other(s) => out.push_str(s),
        }
    }
}

/// A tensor's distribution: its process mesh, which mesh dimension splits each tensor
/// dimension (`-1`: none), the pending reductions, and the placements per mesh dimension.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Default)]
pub struct TensorDist {
    pub mesh_shape: Vec<i64>,
    pub process_ids: Vec<i64>,
    pub dims_mapping: Vec<i64>,
    /// `(mesh dimension, reduction)` in print order.
    pub partial: Vec<(i64, ReduceKind)>,
    /// Absent for an empty attribute (an absent optional operand).
    pub placements: Option<Vec<Placement>>,
}

impl TensorDist {
    /// The distribution of an absent optional operand: `mesh_shape:[],process_ids:[],dims_mappings:[]`.
    pub fn empty() -> TensorDist {
        TensorDist::default()
    }

    pub fn is_empty(&self) -> bool {
        self.mesh_shape.is_empty() && self.process_ids.is_empty() && self.placements.is_none()
    }

    /// The same distribution for a tensor of `rank` dimensions that is replicated over the same
    /// mesh: what a fresh buffer or constant derived from this tensor has.
    pub fn replicated(&self, rank: usize) -> TensorDist {
        TensorDist {
            mesh_shape: self.mesh_shape.clone(),
            process_ids: self.process_ids.clone(),
            dims_mapping: vec![-1; rank],
            partial: Vec::new(),
            placements: Some(vec![Placement::Replicate; self.mesh_shape.len().max(1)]),
        }
    }

    pub fn write_to(&self, out: &mut String) {
        out.push_str("mesh_shape:");
        write_ints(out, &self.mesh_shape);
        out.push_str(",process_ids:");
        write_ints(out, &self.process_ids);
        out.push_str(",dims_mappings:");
        write_ints(out, &self.dims_mapping);
        if !self.partial.is_empty() {
            out.push_str(", ");
            for (i, (dim, r)) in self.partial.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                let _ = write!(out, "partial({dim},{})", r.name());
            }
        }
        if let Some(ps) = &self.placements {
            out.push_str(", placements:[");
            for (i, p) in ps.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                p.write_to(out);
            }
            out.push(']');
        }
    }

    pub fn to_text(&self) -> String {
        let mut s = String::new();
        self.write_to(&mut s);
        s
    }
}

/// One operand's or result's entry in an `op_dist_attr`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum DistSlot {
    Tensor(TensorDist),
    /// `<#AttrNull>`: no attribute (Momentum's absent `master_param_out`).
    Null,
    /// A vector value: one entry per element.
    Array(Vec<DistSlot>),
}

impl DistSlot {
    fn write_to(&self, out: &mut String) {
        match self {
            DistSlot::Tensor(t) => t.write_to(out),
            DistSlot::Null => out.push_str("<#AttrNull>"),
            DistSlot::Array(items) => {
                out.push('[');
                for (i, s) in items.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    s.write_to(out);
                }
                out.push(']');
            }
        }
    }
}

/// An op's `op_dist_attr`: its mesh, one slot per operand and per result, and its pipeline
/// chunk.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct OpDistAttr {
    pub mesh_shape: Vec<i64>,
    pub process_ids: Vec<i64>,
    pub operands: Vec<DistSlot>,
    pub results: Vec<DistSlot>,
    pub chunk_id: i64,
}

/// What a value's type says about its distribution, for [`OpDistAttr::from_types`].
pub enum SlotType<'a> {
    /// A `pd_dist.tensor`.
    Dist(&'a TensorDist),
    /// An absent value (`<<NULL VALUE>>`, `<<NULL TYPE>>`).
    Absent,
    /// A `vec[...]` of these.
    Vec(Vec<SlotType<'a>>),
    /// A dense tensor or another type: no distribution.
    Dense,
}

impl SlotType<'_> {
    /// The `op_dist_attr` slot a value of this type has; `None` for a dense value, which has
    /// no distribution to describe.
    pub fn slot(&self) -> Option<DistSlot> {
        Some(match self {
            SlotType::Dist(d) => DistSlot::Tensor((*d).clone()),
            SlotType::Absent => DistSlot::Tensor(TensorDist::empty()),
            SlotType::Vec(items) => {
                DistSlot::Array(items.iter().map(SlotType::slot).collect::<Option<_>>()?)
            }
            SlotType::Dense => return None,
        })
    }
}

impl OpDistAttr {
    /// The `op_dist_attr` an op with these operand and result types has, or `None` when no
    /// operand or result is distributed (a dense op carries none). The mesh is the first
    /// distributed value's; absent values get the empty attribute, as Paddle prints them.
    pub fn from_types(operands: &[SlotType<'_>], results: &[SlotType<'_>]) -> Option<OpDistAttr> {
        fn first<'a>(t: &'a SlotType<'a>) -> Option<&'a TensorDist> {
            match t {
                SlotType::Dist(d) if !d.is_empty() => Some(d),
                SlotType::Vec(items) => items.iter().find_map(first),
                _ => None,
            }
        }
        let mesh = operands.iter().chain(results).find_map(first)?;
        Some(OpDistAttr {
            mesh_shape: mesh.mesh_shape.clone(),
            process_ids: mesh.process_ids.clone(),
            operands: operands.iter().map(SlotType::slot).collect::<Option<_>>()?,
            results: results.iter().map(SlotType::slot).collect::<Option<_>>()?,
            chunk_id: -1,
        })
    }

    pub fn write_to(&self, out: &mut String) {
        out.push_str("{mesh:{shape:");
        write_ints(out, &self.mesh_shape);
        out.push_str(",process_ids:");
        write_ints(out, &self.process_ids);
        out.push('}');
        for (kind, slots) in [("operand", &self.operands), ("result", &self.results)] {
            for (i, s) in slots.iter().enumerate() {
                let _ = write!(out, ",{kind}({i}):{{");
                s.write_to(out);
                out.push('}');
            }
        }
        let _ = write!(out, ",chunk_id:{}}}", self.chunk_id);
    }
}

/// The attribute key Paddle stores an op's distribution under.
pub const OP_DIST_ATTR: &str = "op_dist_attr";

fn write_ints(out: &mut String, xs: &[i64]) {
    out.push('[');
    for (i, x) in xs.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        let _ = write!(out, "{x}");
    }
    out.push(']');
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prints_like_paddle() {
        let t = TensorDist {
            mesh_shape: vec![2],
            process_ids: vec![0, 1],
            dims_mapping: vec![-1],
            partial: vec![(0, ReduceKind::Sum)],
            placements: Some(vec![Placement::Partial(ReduceKind::Sum)]),
        };
        assert_eq!(
            t.to_text(),
            "mesh_shape:[2],process_ids:[0,1],dims_mappings:[-1], partial(0,SUM), placements:[Partial(reduce_type=SUM)]"
        );
        assert_eq!(
            TensorDist::empty().to_text(),
            "mesh_shape:[],process_ids:[],dims_mappings:[]"
        );
    }

    #[test]
    fn placements_round_trip() {
        for s in [
            "Replicate()",
            "Shard(dim=0)",
            "Partial(reduce_type=AVG)",
            "Shard(dim=1, split_factor=2)",
        ] {
            let mut out = String::new();
            Placement::parse(s).write_to(&mut out);
            assert_eq!(out, s);
        }
    }

    #[test]
    fn derived_attr_takes_the_mesh_and_marks_absent_operands() {
        let t = TensorDist {
            mesh_shape: vec![1],
            process_ids: vec![0],
            dims_mapping: vec![-1],
            partial: vec![],
            placements: Some(vec![Placement::Replicate]),
        };
        let a = OpDistAttr::from_types(
            &[SlotType::Dist(&t), SlotType::Absent],
            &[SlotType::Dist(&t)],
        )
        .map(|a| {
            let mut s = String::new();
            a.write_to(&mut s);
            s
        });
        assert_eq!(
            a.as_deref(),
            Some("{mesh:{shape:[1],process_ids:[0]},operand(0):{mesh_shape:[1],process_ids:[0],dims_mappings:[-1], placements:[Replicate()]},operand(1):{mesh_shape:[],process_ids:[],dims_mappings:[]},result(0):{mesh_shape:[1],process_ids:[0],dims_mappings:[-1], placements:[Replicate()]},chunk_id:-1}")
        );
        assert!(OpDistAttr::from_types(&[SlotType::Dense], &[SlotType::Dense]).is_none());
    }
}
