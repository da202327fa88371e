//! The e-graph language: one hand-written [`egg::Language`] for every pure Paddle op.
//!
//! `define_language!` cannot carry an op's attributes together with its children, so [`Node`]
//! implements the trait by hand:
//!
//! - [`Node::Op`] is a pure op: its name, its attribute dictionary as an interned [`AttrId`], its
//!   result types, and one child e-class per operand. Interning makes hash-consing compare a few
//!   integers, so two `pd_op.full` ops with the same dictionary and type land in one e-class
//!   (that is CSE). An op with exactly one result *is* that value; an op with any other number
//!   of results (`matmul_grad`, `add_grad`) is a tuple whose values are [`Node::Proj`] nodes.
//! - [`Node::Leaf`] is a value the e-graph may read but not look into: a result of an effectful
//!   op, a block argument or a keyword argument. It carries an *epoch* (how many times the
//!   buffer behind the value was written in place before the read, see `build.rs`), so reads of
//!   a parameter before and after `sgd_` are different e-classes and never merge.
//! - [`Node::Null`] is an absent operand (`<<NULL VALUE>>`).
//!
//! E-matching is indexed by [`Disc`], i.e. `(name, arity)` for ops; the total order sorts nodes
//! by that key first, which egg relies on when it scans a large e-class for one discriminant.

use crate::ir::{AttrId, Sym, TypeId, ValueId};
use egg::Id;
use std::cmp::Ordering;

/// An e-node.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Node {
    /// A pure op (see the module docs).
    Op {
        name: Sym,
        attrs: AttrId,
        /// The result types, in order. One entry: the node is that value; otherwise a tuple.
        types: Box<[TypeId]>,
        /// One e-class per operand, `Null` for an absent one.
        children: Box<[Id]>,
        /// 0, except when CSE is off: then each original op gets its own instance number, so
        /// identical ops stay apart (rules still match them; they ignore this field).
        inst: u32,
    },
    /// Result `index` of a multi-result op (the child is the tuple's e-class).
    Proj { index: u32, tuple: [Id; 1] },
    /// A value defined outside the e-graph, read at a given write epoch of its buffer.
    Leaf {
        value: ValueId,
        epoch: u32,
        ty: TypeId,
    },
    /// `<<NULL VALUE>>`.
    Null,
}

/// What e-matching indexes on: op name and arity, or the kind of a non-op node.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum Disc {
    Op { name: Sym, arity: u32 },
    Proj { index: u32 },
    Leaf,
    Null,
}

impl Node {
    fn rank(&self) -> u8 {
        match self {
            Node::Op { .. } => 0,
            Node::Proj { .. } => 1,
            Node::Leaf { .. } => 2,
            Node::Null => 3,
        }
    }
}

impl PartialOrd for Node {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Node {
    /// Discriminant first (egg requires nodes with one discriminant to be contiguous in a sorted
    /// e-class), then everything else.
    fn cmp(&self, other: &Self) -> Ordering {
        match (self, other) {
            (
                Node::Op {
                    name: n1,
                    attrs: a1,
                    types: t1,
                    children: c1,
                    inst: i1,
                },
                Node::Op {
                    name: n2,
                    attrs: a2,
                    types: t2,
                    children: c2,
                    inst: i2,
                },
            ) => n1
                .cmp(n2)
                .then(c1.len().cmp(&c2.len()))
                .then(a1.cmp(a2))
                .then(t1.cmp(t2))
                .then(i1.cmp(i2))
                .then(c1.cmp(c2)),
            (
                Node::Proj {
                    index: i1,
                    tuple: t1,
                },
                Node::Proj {
                    index: i2,
                    tuple: t2,
                },
            ) => i1.cmp(i2).then(t1.cmp(t2)),
            (
                Node::Leaf {
                    value: v1,
                    epoch: e1,
                    ty: t1,
                },
                Node::Leaf {
                    value: v2,
                    epoch: e2,
                    ty: t2,
                },
            ) => v1.cmp(v2).then(e1.cmp(e2)).then(t1.cmp(t2)),
            _ => self.rank().cmp(&other.rank()),
        }
    }
}

impl egg::Language for Node {
    type Discriminant = Disc;

    fn discriminant(&self) -> Disc {
        match self {
            Node::Op { name, children, .. } => Disc::Op {
                name: *name,
                arity: children.len() as u32,
            },
            Node::Proj { index, .. } => Disc::Proj { index: *index },
            Node::Leaf { .. } => Disc::Leaf,
            Node::Null => Disc::Null,
        }
    }

    /// Same operator: for ops that is name, attributes, result types and arity.
    fn matches(&self, other: &Self) -> bool {
        match (self, other) {
            (
                Node::Op {
                    name: n1,
                    attrs: a1,
                    types: t1,
                    children: c1,
                    inst: i1,
                },
                Node::Op {
                    name: n2,
                    attrs: a2,
                    types: t2,
                    children: c2,
                    inst: i2,
                },
            ) => n1 == n2 && a1 == a2 && t1 == t2 && i1 == i2 && c1.len() == c2.len(),
            (Node::Proj { index: i1, .. }, Node::Proj { index: i2, .. }) => i1 == i2,
            (Node::Leaf { .. }, Node::Leaf { .. }) => self == other,
            (Node::Null, Node::Null) => true,
            _ => false,
        }
    }

    fn children(&self) -> &[Id] {
        match self {
            Node::Op { children, .. } => children,
            Node::Proj { tuple, .. } => tuple,
            Node::Leaf { .. } | Node::Null => &[],
        }
    }

    fn children_mut(&mut self) -> &mut [Id] {
        match self {
            Node::Op { children, .. } => children,
            Node::Proj { tuple, .. } => tuple,
            Node::Leaf { .. } | Node::Null => &mut [],
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::Context;
    use egg::Language;

    #[test]
    fn order_groups_by_discriminant() {
        let mut ctx = Context::default();
        let a = ctx.sym("a");
        let mk = |attrs: AttrId, n: usize| Node::Op {
            name: a,
            attrs,
            types: vec![Context::NULL_TYPE].into(),
            children: vec![Id::from(0); n].into(),
            inst: 0,
        };
        let other = ctx.intern_attrs({
            let mut d = crate::ir::AttrDict::default();
            d.set("k", crate::ir::Attr::Int(1));
            d
        });
        let mut nodes = [
            mk(other, 1),
            mk(Context::EMPTY_ATTRS, 2),
            mk(Context::EMPTY_ATTRS, 1),
            mk(other, 2),
        ];
        nodes.sort();
        let discs: Vec<Disc> = nodes.iter().map(|n| n.discriminant()).collect();
        assert_eq!(discs[0], discs[1]);
        assert_eq!(discs[2], discs[3]);
        assert_ne!(discs[1], discs[2]);
        assert!(!nodes[0].matches(&nodes[1]));
    }
}
