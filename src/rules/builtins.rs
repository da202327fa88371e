//! The built-in functions of the rule language, in one table.
//!
//! A call names a [`Builtin`] from the moment it is lowered ([`super::lower`]); the checker
//! (result types, argument counts), the evaluator (the pure functions, [`super::eval`]), the
//! structural engine (the program queries) and the e-graph lowering (which queries an
//! equational rule may use) all dispatch on the enum. The names are written here only, so a
//! function cannot be known to one of them and unknown to another.
//!
//! Two kinds: **pure** functions need nothing but their arguments (`len`, `min`, ...) and are
//! evaluated by the rule language itself, constants included; **program queries** (`name`,
//! `dtype`, `uses`, ...) ask the program and are answered by the engine that runs the rule.

use super::ty::Ty;

/// A built-in function of the rule language.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Builtin {
    Len,
    Int,
    Float,
    Str,
    Min,
    Max,
    Index,
    Name,
    DType,
    Shape,
    Rank,
    Type,
    Uses,
    Role,
    OpName,
    HasAttr,
    Attr,
    Tensor,
    Unused,
    Nested,
    Const,
    ProcessIds,
    MeshShape,
    DimsMapping,
    Placements,
}

/// Whether a builtin needs the program.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Computed from the arguments alone.
    Pure,
    /// Asks the program (implemented by the engine's environment).
    Query,
}

/// One row of the table.
pub struct Info {
    pub name: &'static str,
    /// Arguments it takes. The checker enforces it for program queries; a pure function given
    /// the wrong arguments reports `bad arguments to ...` when it is evaluated.
    pub arity: usize,
    pub kind: Kind,
    /// What the checker takes the call's result to be.
    pub result: Ty,
}

const fn info(name: &'static str, arity: usize, kind: Kind, result: Ty) -> Info {
    Info {
        name,
        arity,
        kind,
        result,
    }
}

use Kind::{Pure, Query};

/// Every builtin, pure functions first, in the order the checker lists them in its hints.
pub const ALL: &[Builtin] = &[
    Builtin::Len,
    Builtin::Int,
    Builtin::Float,
    Builtin::Str,
    Builtin::Min,
    Builtin::Max,
    Builtin::Index,
    Builtin::Name,
    Builtin::DType,
    Builtin::Shape,
    Builtin::Rank,
    Builtin::Type,
    Builtin::Uses,
    Builtin::Role,
    Builtin::OpName,
    Builtin::HasAttr,
    Builtin::Attr,
    Builtin::Tensor,
    Builtin::Unused,
    Builtin::Nested,
    Builtin::Const,
    Builtin::ProcessIds,
    Builtin::MeshShape,
    Builtin::DimsMapping,
    Builtin::Placements,
];

impl Builtin {
    /// The table's row for this builtin.
    pub const fn info(self) -> Info {
        match self {
            Builtin::Len => info("len", 1, Pure, Ty::Int),
            Builtin::Int => info("int", 1, Pure, Ty::Int),
            Builtin::Float => info("float", 1, Pure, Ty::Float),
            Builtin::Str => info("str", 1, Pure, Ty::Str),
            Builtin::Min => info("min", 2, Pure, Ty::Any),
            Builtin::Max => info("max", 2, Pure, Ty::Any),
            // `index($perm, 0)`, written `$perm[0]`: an element of a list (from the end when
            // negative); out of range is an error.
            Builtin::Index => info("index", 2, Pure, Ty::Any),
            Builtin::Name => info("name", 1, Query, Ty::Str),
            Builtin::DType => info("dtype", 1, Query, Ty::DType),
            Builtin::Shape => info("shape", 1, Query, Ty::List),
            Builtin::Rank => info("rank", 1, Query, Ty::Int),
            Builtin::Type => info("type", 1, Query, Ty::Type),
            // `uses(%v)`: every use; `uses(%v in STAGE)`: the uses by ops of that stage.
            Builtin::Uses => info("uses", 1, Query, Ty::Int),
            Builtin::Role => info("role", 1, Query, Ty::Int),
            Builtin::OpName => info("op_name", 1, Query, Ty::Str),
            Builtin::HasAttr => info("has_attr", 2, Query, Ty::Bool),
            Builtin::Attr => info("attr", 2, Query, Ty::Any),
            Builtin::Tensor => info("tensor", 2, Query, Ty::Type),
            // Whether no result of an op (or the op defining a value) has a use.
            Builtin::Unused => info("unused", 1, Query, Ty::Bool),
            // Whether an op (or the op defining a value) sits inside a region (`pd_op.if`,
            // `pd_op.while`) rather than in the program's top block.
            Builtin::Nested => info("nested", 1, Query, Ty::Bool),
            // The scalar a value is known to equal (a `pd_op.full`); equational rules only.
            Builtin::Const => info("const", 1, Query, Ty::Any),
            // A `pd_dist.tensor` value's distribution (empty lists for a dense value):
            // `placements(%g)` as written (`["Replicate()"]`, `["Shard(dim=0)"]`,
            // `["Partial(reduce_type=SUM)"]`).
            Builtin::ProcessIds => info("process_ids", 1, Query, Ty::List),
            Builtin::MeshShape => info("mesh_shape", 1, Query, Ty::List),
            Builtin::DimsMapping => info("dims_mapping", 1, Query, Ty::List),
            Builtin::Placements => info("placements", 1, Query, Ty::List),
        }
    }

    pub fn name(self) -> &'static str {
        self.info().name
    }

    pub fn kind(self) -> Kind {
        self.info().kind
    }

    /// The builtin called `name`, if any.
    pub fn from_name(name: &str) -> Option<Builtin> {
        ALL.iter().copied().find(|b| b.name() == name)
    }

    /// Every builtin's name, in table order (for "did you mean" hints).
    pub fn names() -> impl Iterator<Item = &'static str> {
        ALL.iter().map(|b| b.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_are_unique() {
        for (i, b) in ALL.iter().enumerate() {
            assert_eq!(Builtin::from_name(b.name()), Some(*b));
            assert!(!ALL[..i].iter().any(|o| o.name() == b.name()));
        }
        let pure = ALL.iter().take_while(|b| b.kind() == Kind::Pure).count();
        assert!(ALL[pure..].iter().all(|b| b.kind() == Kind::Query));
    }
}
