//! Result types of the ops a rule creates: the dialect table's [`ResultRule`] per op, and
//! [`result_type`], the one function that derives a type from it.
//!
//! Why here: both engines build ops from rules (the structural engine's builds and the
//! e-graph's right-hand sides) and must give a built op the type Paddle would, so the
//! derivation is written once: two copies would drift (a cast of a `pd_dist` value derived two
//! ways). The engines differ in one thing only, which they pass in: where a tensor made from
//! attributes alone (`full`, `full_int_array`) gets its distribution (the structural engine: the
//! values the rule's match combines it with; the e-graph: the `op_dist_attr` among the built
//! op's attributes).

use crate::ir::{Attr, Attrs, DType, Type};

/// How the result type of an op a rule creates is derived (and, for `SameAs`, re-derived when
/// a rule changes that operand).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum ResultRule {
    /// The rule must give the type.
    Explicit,
    /// Same type as operand `n`.
    SameAs(u8),
    /// Elementwise with broadcasting: operand `a`'s type (its dtype and distribution) with the
    /// shape `a` and `b` broadcast to (`add`, `add_`, `multiply`); see [`broadcast`]. For an
    /// in-place op this is how a write that would change its buffer's shape is caught.
    Broadcast(u8, u8),
    /// `shape` and `dtype` attributes (`pd_op.full`).
    FromShapeDtypeAttrs,
    /// Shape of operand `n`, dtype bool (`pd_op.equal`).
    CompareOf(u8),
    /// Shape of operand `n`, dtype from the `dtype` attribute (`pd_op.cast`).
    CastOf(u8),
    /// A 1-D int64 tensor as long as the `value` attribute (`pd_op.full_int_array`).
    IntArray,
    /// Operand `n`'s type with its pending reduction done (`all_reduce`): a dense type as it
    /// is, a `pd_dist` one without its partial status; see [`reduced`].
    ReducedOf(u8),
    /// Operand `n`'s type with dimension 0 multiplied by the integer attribute (`all_gather`:
    /// `nranks`); see [`dim0_scaled`].
    Dim0Times(u8, &'static str),
    /// Operand `n`'s type with dimension 0 divided by the integer attribute
    /// (`reduce_scatter`: `nranks`); see [`dim0_scaled`].
    Dim0Over(u8, &'static str),
    /// The vector of every operand's type (`builtin.combine`): a `vec[...]` names its items'
    /// interned types, so the engine derives it from the operands' type ids, not here.
    VecOfOperands,
}

/// Why `op`, a [`ResultRule::VecOfOperands`] op, has no type with an absent operand: said where
/// a rule writes `none` for one (at load) and where a value turns out absent (when it runs).
pub fn absent_vector_item(op: &str) -> String {
    format!("`{op}` makes a vector of its operands: none can be absent")
}

/// The result type of a [`ResultRule::ReducedOf`] rule: `ty` after a collective reduced it
/// across the mesh. A `pd_dist.tensor` that was a pending sum (`partial(0,SUM)`,
/// `Partial(reduce_type=SUM)`) is now the same on every process: no partial status, `Partial`
/// placements become `Replicate()`. Anything else is unchanged.
pub fn reduced(ty: &Type) -> Type {
    match ty {
        Type::Dist { shape, dtype, dist } if !dist.partial.is_empty() => {
            let mut dist = dist.clone();
            dist.partial.clear();
            if let Some(ps) = dist.placements.as_mut() {
                for p in ps.iter_mut() {
                    if matches!(p, crate::ir::Placement::Partial(_)) {
                        *p = crate::ir::Placement::Replicate;
                    }
                }
            }
            Type::Dist {
                shape: shape.clone(),
                dtype: *dtype,
                dist,
            }
        }
        t => t.clone(),
    }
}

/// The result type of a [`ResultRule::Dim0Times`] (`times`) or [`ResultRule::Dim0Over`] rule:
/// `ty` (a dense tensor of rank at least 1) with dimension 0 multiplied or divided by `n`. A
/// dynamic dimension 0 (`-1`) stays dynamic. `None` when it cannot be derived: `n < 1`, a
/// division with a remainder, a 0-d tensor, or a type that is not a dense tensor. (A
/// `pd_dist.tensor` prints its global shape, which a gather does not change, but its placements
/// do; irw does not derive those, so a rule cannot build such an op on dist types.)
pub fn dim0_scaled(ty: &Type, n: i64, times: bool) -> Option<Type> {
    if let Type::Dist { shape, dtype, dist } = ty {
        // A pd_dist type holds the global shape: gathering makes the value replicated,
        // scattering splits dimension 0 over the mesh; the global shape stays.
        let mut dist = dist.replicated(shape.len());
        if !times && !shape.is_empty() {
            dist.dims_mapping[0] = 0;
            if let Some(p) = dist.placements.as_mut().and_then(|p| p.first_mut()) {
                *p = crate::ir::Placement::Shard(0);
            }
        }
        return (n >= 1).then(|| Type::Dist {
            shape: shape.clone(),
            dtype: *dtype,
            dist,
        });
    }
    let Type::Tensor { shape, dtype } = ty else {
        return None;
    };
    if n < 1 {
        return None;
    }
    let mut shape = shape.clone();
    let d0 = shape.first_mut()?;
    if *d0 >= 0 {
        *d0 = if times {
            d0.checked_mul(n)?
        } else if *d0 % n == 0 {
            *d0 / n
        } else {
            return None;
        };
    }
    Some(Type::Tensor {
        shape,
        dtype: *dtype,
    })
}

/// The result type of a [`ResultRule::Broadcast`] rule: `a`'s type with the shape `a` and `b`
/// broadcast to (dimensions aligned from the right; equal, or one of them 1; a dynamic `-1`
/// against a size `n > 1` is `n`, against `1` stays `-1`). `None` when the shapes do not
/// broadcast, or when the shape changes and `a` is a `pd_dist` type (irw does not derive the
/// distribution of a broadcast).
pub fn broadcast(a: &Type, b: &Type) -> Option<Type> {
    let (sa, sb) = (a.shape()?, b.shape()?);
    let n = sa.len().max(sb.len());
    let mut out = vec![0i64; n];
    for (k, o) in out.iter_mut().enumerate() {
        let da = if k + sa.len() >= n {
            sa[k + sa.len() - n]
        } else {
            1
        };
        let db = if k + sb.len() >= n {
            sb[k + sb.len() - n]
        } else {
            1
        };
        *o = match (da, db) {
            _ if da == db => da,
            (1, d) | (d, 1) => d,
            (-1, d) | (d, -1) => d,
            _ => return None,
        };
    }
    if out == sa {
        return Some(a.clone());
    }
    match a {
        Type::Tensor { dtype, .. } => Some(Type::Tensor {
            shape: out,
            dtype: *dtype,
        }),
        _ => None,
    }
}

/// The result type `rule` derives for an op whose operand `i` has type `operand(i)` and whose
/// attributes are `attrs`. `from_attrs(shape, dtype)` makes the tensor of an op made from
/// attributes alone ([`ResultRule::FromShapeDtypeAttrs`], [`ResultRule::IntArray`]), dense or
/// distributed as the caller's context says.
///
/// `None` when the type cannot be derived: a missing operand or one that is not a tensor, a
/// missing or malformed attribute (`shape`, `dtype`, `value`, the `Dim0*` key), a `Dim0*`
/// scaling [`dim0_scaled`] refuses, or [`ResultRule::Explicit`] (the rule must give the type).
pub fn result_type<'t>(
    rule: ResultRule,
    operand: impl Fn(u8) -> Option<&'t Type>,
    attrs: Attrs<'_>,
    from_attrs: impl FnOnce(Vec<i64>, DType) -> Type,
) -> Option<Type> {
    let dtype_attr = || {
        attrs
            .get("dtype")
            .and_then(Attr::as_word)
            .and_then(DType::from_attr_name)
    };
    match rule {
        ResultRule::SameAs(i) => operand(i).cloned(),
        ResultRule::Broadcast(i, j) => broadcast(operand(i)?, operand(j)?),
        ResultRule::ReducedOf(i) => operand(i).map(reduced),
        ResultRule::CompareOf(i) => {
            let from = operand(i)?;
            Some(from.with_shape_dtype(from.shape()?.to_vec(), DType::Bool))
        }
        ResultRule::CastOf(i) => {
            let dtype = dtype_attr()?;
            let from = operand(i)?;
            Some(from.with_shape_dtype(from.shape()?.to_vec(), dtype))
        }
        ResultRule::FromShapeDtypeAttrs => {
            let shape = attrs
                .get("shape")?
                .as_array()?
                .iter()
                .map(Attr::as_i64)
                .collect::<Option<Vec<i64>>>()?;
            Some(from_attrs(shape, dtype_attr()?))
        }
        ResultRule::IntArray => {
            let n = attrs.get("value")?.as_array()?.len() as i64;
            Some(from_attrs(vec![n], dtype_attr()?))
        }
        ResultRule::Dim0Times(i, key) | ResultRule::Dim0Over(i, key) => {
            let times = matches!(rule, ResultRule::Dim0Times(..));
            let n = attrs.get(key)?.as_i64()?;
            dim0_scaled(operand(i)?, n, times)
        }
        ResultRule::Explicit | ResultRule::VecOfOperands => None,
    }
}
