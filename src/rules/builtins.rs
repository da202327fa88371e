//! The built-in functions of the rule language, in one table.
//!
//! A call names a [`Builtin`] from the moment it is resolved ([`super::resolver`]); the resolver
//! (result types, argument counts), the evaluator (the pure functions, [`super::eval`]), the
//! structural engine (the program queries) and the e-graph lowering (which queries an
//! equational rule may use) all dispatch on the enum. The names are written here only, so a
//! function cannot be known to one of them and unknown to another.
//!
//! Two kinds, two enums: **pure** functions ([`Pure`]) need nothing but their arguments (`len`,
//! `min`, ...) and are evaluated by the rule language itself, constants included; **program
//! queries** ([`Query`]: `name`, `dtype`, `uses`, ...) ask the program and are answered by the
//! engine that runs the rule. Each side matches only its own enum, so a new pure function is
//! written here and in the evaluator, a new query here and in the engine's environment.

use super::ty::Ty;

/// A built-in function of the rule language.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Builtin {
    Pure(Pure),
    Query(Query),
}

/// A function computed from its arguments alone, by the rule language's evaluator
/// ([`super::eval`]), constants included.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Pure {
    Len,
    Int,
    Float,
    Str,
    Min,
    Max,
    Prod,
    Index,
}

/// A function that asks the program, answered by the environment of the engine that runs the
/// rule.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Query {
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
    Written,
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
    /// What the checker takes the call's result to be.
    pub result: Ty,
}

const fn info(name: &'static str, arity: usize, result: Ty) -> Info {
    Info {
        name,
        arity,
        result,
    }
}

impl Pure {
    /// Every pure function, in the order the checker lists them in its hints.
    pub const ALL: &[Pure] = &[
        Pure::Len,
        Pure::Int,
        Pure::Float,
        Pure::Str,
        Pure::Min,
        Pure::Max,
        Pure::Prod,
        Pure::Index,
    ];

    /// The table's row for this function.
    pub const fn info(self) -> Info {
        match self {
            Pure::Len => info("len", 1, Ty::Int),
            Pure::Int => info("int", 1, Ty::Int),
            Pure::Float => info("float", 1, Ty::Float),
            Pure::Str => info("str", 1, Ty::Str),
            Pure::Min => info("min", 2, Ty::Any),
            Pure::Max => info("max", 2, Ty::Any),
            // `prod(shape(%x))`: the product of a list of numbers (1 when empty), with `*`'s
            // meaning (an int overflow is an error).
            Pure::Prod => info("prod", 1, Ty::Any),
            // `index($perm, 0)`, written `$perm[0]`: an element of a list (from the end when
            // negative); out of range is an error.
            Pure::Index => info("index", 2, Ty::Any),
        }
    }

    pub fn name(self) -> &'static str {
        self.info().name
    }

    /// What the function takes, for the error about a call given something else.
    pub fn takes(self) -> &'static str {
        match self {
            Pure::Len => "a list or a string",
            Pure::Int | Pure::Float => "a number",
            Pure::Str => "one value",
            Pure::Min | Pure::Max => "two numbers, as in `min(a, b)`",
            Pure::Prod => "a list of numbers",
            Pure::Index => "a list and an int, as in `$perm[0]`",
        }
    }
}

impl Query {
    /// Every program query, in the order the checker lists them in its hints.
    pub const ALL: &[Query] = &[
        Query::Name,
        Query::DType,
        Query::Shape,
        Query::Rank,
        Query::Type,
        Query::Uses,
        Query::Role,
        Query::OpName,
        Query::HasAttr,
        Query::Attr,
        Query::Tensor,
        Query::Unused,
        Query::Written,
        Query::Nested,
        Query::Const,
        Query::ProcessIds,
        Query::MeshShape,
        Query::DimsMapping,
        Query::Placements,
    ];

    /// The table's row for this query.
    pub const fn info(self) -> Info {
        match self {
            Query::Name => info("name", 1, Ty::Str),
            Query::DType => info("dtype", 1, Ty::DType),
            Query::Shape => info("shape", 1, Ty::List),
            Query::Rank => info("rank", 1, Ty::Int),
            Query::Type => info("type", 1, Ty::Type),
            // `uses(%v)`: every use; `uses(%v in STAGE)`: the uses by ops of that stage.
            Query::Uses => info("uses", 1, Ty::Int),
            Query::Role => info("role", 1, Ty::Int),
            Query::OpName => info("op_name", 1, Ty::Str),
            Query::HasAttr => info("has_attr", 2, Ty::Bool),
            Query::Attr => info("attr", 2, Ty::Any),
            Query::Tensor => info("tensor", 2, Ty::Type),
            // Whether no result of an op (or the op defining a value) has a use.
            Query::Unused => info("unused", 1, Ty::Bool),
            // Whether an op may write a value in place: one whose dialect entry (or declaration)
            // makes a result the operand holding it, or an op irw does not know.
            Query::Written => info("written", 1, Ty::Bool),
            // Whether an op (or the op defining a value) sits inside a region (`pd_op.if`,
            // `pd_op.while`) rather than in the program's top block.
            Query::Nested => info("nested", 1, Ty::Bool),
            // The scalar a value is known to equal (a `pd_op.full`); equational rules only.
            Query::Const => info("const", 1, Ty::Any),
            // A `pd_dist.tensor` value's distribution (empty lists for a dense value):
            // `placements(%g)` as written (`["Replicate()"]`, `["Shard(dim=0)"]`,
            // `["Partial(reduce_type=SUM)"]`).
            Query::ProcessIds => info("process_ids", 1, Ty::List),
            Query::MeshShape => info("mesh_shape", 1, Ty::List),
            Query::DimsMapping => info("dims_mapping", 1, Ty::List),
            Query::Placements => info("placements", 1, Ty::List),
        }
    }

    pub fn name(self) -> &'static str {
        self.info().name
    }
}

impl Builtin {
    /// Every builtin, pure functions first, in the order the checker lists them in its hints.
    pub fn all() -> impl Iterator<Item = Builtin> {
        let pure = Pure::ALL.iter().map(|&p| Builtin::Pure(p));
        pure.chain(Query::ALL.iter().map(|&q| Builtin::Query(q)))
    }

    /// The table's row for this builtin.
    pub const fn info(self) -> Info {
        match self {
            Builtin::Pure(p) => p.info(),
            Builtin::Query(q) => q.info(),
        }
    }

    pub fn name(self) -> &'static str {
        self.info().name
    }

    pub fn kind(self) -> Kind {
        match self {
            Builtin::Pure(_) => Kind::Pure,
            Builtin::Query(_) => Kind::Query,
        }
    }

    /// The builtin called `name`, if any.
    pub fn from_name(name: &str) -> Option<Builtin> {
        Builtin::all().find(|b| b.name() == name)
    }

    /// Every builtin's name, in table order (for "did you mean" hints).
    pub fn names() -> impl Iterator<Item = &'static str> {
        Builtin::all().map(Builtin::name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_are_unique() {
        let all: Vec<Builtin> = Builtin::all().collect();
        for (i, b) in all.iter().enumerate() {
            assert_eq!(Builtin::from_name(b.name()), Some(*b));
            assert!(!all[..i].iter().any(|o| o.name() == b.name()));
        }
    }
}
