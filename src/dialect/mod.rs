//! The dialect: what irw knows about each op, as data.
//!
//! One table ([`table::ops`], loaded from the data files of [`data`]: Paddle's own op
//! definitions, derived by `tools/dialect/derive.py`, and irw's hand-written facts) says, per
//! op name: operand and result names (and which Paddle lets be null), attributes with their
//! Paddle types and defaults, which results alias which operands (in-place ops), the effect
//! class, the result-type family ([`Shape`], named after Paddle's `infer_meta` functions) and
//! how a rule that creates the op derives its result type ([`ResultRule`], derived by
//! [`result_type`] for both engines). Everything else in irw asks this table; no other module
//! matches on op names.
//!
//! Ops missing from the table are *unknown*: they are kept verbatim, treated as having effects
//! (never reordered across, never merged, never removed), and their operand/result counts are
//! not checked.

pub mod data;
mod default_value;
mod defaults;
pub mod paddle_json;
pub mod protocol;
mod result_type;
pub mod shape_family;
pub mod table;
mod verify;

pub use data::AttrSpec;
pub use shape_family::Shape;

pub use defaults::default_attrs;
pub use protocol::{stage_role, ROLE_ATTR, STAGES};
pub use result_type::{absent_vector_item, result_type, ResultRule};
pub use verify::{
    findings_beyond, fits, misfit_ops, missing_message, verify_module, verify_program, Finding,
    FindingKind, NameAndAttrs,
};

use rustc_hash::FxHashMap;
use std::sync::OnceLock;

/// What an op may do besides computing its results. Everything but [`Effect::Pure`] is kept in
/// program order by the rewrite engine.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum Effect {
    /// Computes its results from its operands and attributes only.
    Pure,
    /// Writes the operand its result aliases (`add_`, `scale_`, `set_value_with_tensor_`).
    InPlace,
    /// Communicates across data-parallel ranks (`c_allreduce_sum`, `c_reduce_avg`).
    Collective,
    /// Updates a parameter and optimizer state in place (`sgd_`, `adam_`).
    Optimizer,
    /// Reads or writes named persistable state or feeds (`pd_op.data`, `builtin.parameter`,
    /// `builtin.shadow_output`, `builtin.set_parameter`).
    Io,
    /// Draws random numbers from a generator (`pd_op.uniform`).
    Random,
    /// Holds regions or terminates them (`pd_op.if`, `pd_op.while`, `cf.yield`).
    Control,
    /// Not in the table, or an effect Paddle declares (`SideEffectTrait`) that irw does not
    /// model (`pd_op.print`).
    Unknown,
}

impl Effect {
    /// The class name rules use (`optimizer`, `collective`, ...).
    pub fn class_name(self) -> &'static str {
        match self {
            Effect::Pure => "pure",
            Effect::InPlace => "inplace",
            Effect::Collective => "collective",
            Effect::Optimizer => "optimizer",
            Effect::Io => "io",
            Effect::Random => "random",
            Effect::Control => "control",
            Effect::Unknown => "unknown",
        }
    }

    /// Every effect, in the order rules' hints list their classes.
    pub const ALL: &[Effect] = &[
        Effect::Pure,
        Effect::InPlace,
        Effect::Collective,
        Effect::Optimizer,
        Effect::Io,
        Effect::Random,
        Effect::Control,
        Effect::Unknown,
    ];

    pub fn from_class_name(s: &str) -> Option<Effect> {
        Effect::ALL.iter().copied().find(|e| e.class_name() == s)
    }

    pub fn is_pure(self) -> bool {
        self == Effect::Pure
    }
}

/// Per-op attributes that say where and how an op runs rather than what it computes: an op an
/// equational right-hand side builds takes them from the op it replaces (the left-hand side's
/// root) when the rule does not give them.
pub const INHERITED_ATTRS: &[&str] = &["op_role", "stop_gradient"];

/// The ops that hold regions, with how many (each one block): `pd_op.if` has its true region
/// and its false region, `pd_op.while` its body. A rule that builds one of these ops builds its
/// regions empty (Paddle prints an `if` without results with regions that have no `cf.yield`).
const REGION_OPS: &[(&str, u32)] = &[("pd_op.if", 2), ("pd_op.while", 1)];

/// How many regions an op `name` holds when built ([`REGION_OPS`]; 0 for every other op).
pub fn region_count(name: &str) -> u32 {
    REGION_OPS
        .iter()
        .find(|(n, _)| *n == name)
        .map_or(0, |&(_, k)| k)
}

/// What the table says about one op.
#[derive(Debug)]
pub struct OpSpec {
    pub name: &'static str,
    /// Operand names in order. A name starting with `*` takes all remaining operands
    /// (variadic); one starting with `?` may be absent at the end.
    pub operands: &'static [&'static str],
    /// Result names, with the same `*` and `?` conventions.
    pub results: &'static [&'static str],
    /// `(result, operand)`: the result is the operand, updated in place.
    pub aliases: &'static [(u8, u8)],
    /// `(operand, like)`: operand `operand` has the shape of operand `like` (an optimizer's
    /// gradient and moments have its parameter's).
    pub same_shape: &'static [(u8, u8)],
    /// `(operand, lowest, highest)`: the ranks operand `operand` may have (Paddle's set_value
    /// kernels take ranks 1 to 6).
    pub ranks: &'static [(u8, u8, u8)],
    pub effect: Effect,
    pub result_rule: ResultRule,
    /// Bit `i`: operand `i` is optional in Paddle's definition (a `<<NULL VALUE>>` when absent).
    pub optional_operands: u64,
    /// Bit `i`: result `i` may be null.
    pub optional_results: u64,
    /// Bit `i`: result `i`'s dimensions are left unset by Paddle (printed `0x..`, stored `[]`).
    pub unset_results: u64,
    /// The attributes of Paddle's definition, in its order.
    pub attrs: &'static [AttrSpec],
    /// The result-type family.
    pub shape: Shape,
}

impl OpSpec {
    /// The operand names, without their `*`/`?` marks.
    pub fn operand_names(&self) -> impl Iterator<Item = &'static str> {
        self.operands
            .iter()
            .map(|o| o.trim_start_matches(['*', '?']))
    }

    /// The result names, without their `*`/`?` marks.
    pub fn result_names(&self) -> impl Iterator<Item = &'static str> {
        self.results
            .iter()
            .map(|o| o.trim_start_matches(['*', '?']))
    }

    /// Whether the last operand takes any number of values (`*inputs`: `builtin.combine`).
    pub fn variadic(&self) -> bool {
        self.operands.last().is_some_and(|o| o.starts_with('*'))
    }

    /// The in-place pairs `(result, operand)` whose result has its operand's type, as the
    /// op's result-type family says: an optimizer's outputs (`outs`: `sgd_`'s `param_out` is
    /// `param`), an op that leaves its operand's type unchanged (`relu_`). Other in-place ops
    /// write a view or a conversion of their buffer (`reshape_`, `cast_`), of another type.
    pub fn buffer_results(&self) -> impl Iterator<Item = (usize, usize)> + '_ {
        self.aliases
            .iter()
            .filter(|&&(r, o)| match self.shape {
                Shape::Outs(g) => g.get(r as usize) == Some(&o),
                Shape::Unchanged(n) => r == 0 && n == o,
                _ => false,
            })
            .map(|&(r, o)| (r as usize, o as usize))
    }

    /// Index of the operand called `name`.
    pub fn operand_index(&self, name: &str) -> Option<usize> {
        self.operand_names().position(|o| o == name)
    }

    /// Index of the result called `name`.
    pub fn result_index(&self, name: &str) -> Option<usize> {
        self.result_names().position(|o| o == name)
    }

    /// Whether the op writes operand `i` in place (a result aliases it).
    pub fn writes_operand(&self, i: usize) -> bool {
        self.aliases.iter().any(|&(_, o)| o as usize == i)
    }

    /// The operand a result aliases, for in-place ops.
    pub fn aliased_operand(&self, result: usize) -> Option<usize> {
        self.aliases
            .iter()
            .find(|(r, _)| *r as usize == result)
            .map(|(_, o)| *o as usize)
    }

    /// The attribute of Paddle's definition called `name`.
    pub fn attr(&self, name: &str) -> Option<&'static AttrSpec> {
        self.attrs.iter().find(|a| a.name == name)
    }

    /// Whether operand `i` must be given a value: it is neither optional (in Paddle's
    /// definition, or declared `name?`) nor one of the values a variadic operand takes.
    pub fn operand_required(&self, i: usize) -> bool {
        self.operands
            .get(i)
            .is_some_and(|n| !n.starts_with(['*', '?']) && !self.operand_optional(i))
    }

    /// Whether operand `i` may be null in Paddle's definition.
    pub fn operand_optional(&self, i: usize) -> bool {
        i < 64 && self.optional_operands & (1 << i) != 0
    }

    /// Whether result `i` may be null.
    pub fn result_optional(&self, i: usize) -> bool {
        i < 64 && self.optional_results & (1 << i) != 0
    }

    /// Whether Paddle leaves result `i`'s dimensions unset ([`OpSpec::unset_results`]).
    pub fn result_unset(&self, i: usize) -> bool {
        i < 64 && self.unset_results & (1 << i) != 0
    }

    /// Whether `n` items fit a name list with `*`/`?` conventions.
    pub fn count_fits(names: &[&str], n: usize) -> bool {
        if names.last().is_some_and(|l| l.starts_with('*')) {
            return n + 1 >= names.len();
        }
        let required = names.iter().filter(|s| !s.starts_with('?')).count();
        n >= required && n <= names.len()
    }
}

/// The dialect table, indexed by name.
pub struct Dialect {
    by_name: FxHashMap<&'static str, &'static OpSpec>,
}

impl Dialect {
    /// The built-in table.
    pub fn get() -> &'static Dialect {
        static D: OnceLock<Dialect> = OnceLock::new();
        D.get_or_init(|| Dialect {
            by_name: table::ops().iter().map(|s| (s.name, s)).collect(),
        })
    }

    pub fn spec(&self, name: &str) -> Option<&'static OpSpec> {
        self.by_name.get(name).copied()
    }

    /// The effect class of an op name; [`Effect::Unknown`] if not in the table.
    pub fn effect(&self, name: &str) -> Effect {
        self.spec(name).map_or(Effect::Unknown, |s| s.effect)
    }

    /// All specs, in name order.
    pub fn all(&self) -> &'static [OpSpec] {
        table::ops()
    }
}

#[cfg(test)]
mod json_tests;

#[cfg(test)]
mod tests {
    use super::result_type::dim0_scaled;
    use super::*;
    use crate::ir::{DType, Type};

    fn t(shape: &[i64]) -> Type {
        Type::Tensor {
            shape: shape.to_vec(),
            dtype: DType::F32,
        }
    }

    #[test]
    fn gather_multiplies_and_scatter_divides_dim0() {
        assert_eq!(dim0_scaled(&t(&[4, 3]), 2, true), Some(t(&[8, 3])));
        assert_eq!(dim0_scaled(&t(&[8, 3]), 2, false), Some(t(&[4, 3])));
        assert_eq!(dim0_scaled(&t(&[-1, 3]), 2, true), Some(t(&[-1, 3])));
        assert_eq!(dim0_scaled(&t(&[5]), 2, false), None);
        assert_eq!(dim0_scaled(&t(&[]), 2, true), None);
        assert_eq!(dim0_scaled(&t(&[4]), 0, true), None);
        assert_eq!(dim0_scaled(&t(&[i64::MAX]), 2, true), None);
        let d = Dialect::get();
        assert_eq!(
            d.spec("pd_op.all_gather").map(|s| s.result_rule),
            Some(ResultRule::Dim0Times(0, "nranks"))
        );
        assert_eq!(
            d.spec("pd_op.reduce_scatter").map(|s| s.result_rule),
            Some(ResultRule::Dim0Over(0, "nranks"))
        );
        for name in [
            "pd_op.all_reduce",
            "pd_op.all_reduce_",
            "pd_op.broadcast",
            "pd_op.reduce",
        ] {
            assert_eq!(d.effect(name), Effect::Collective, "{name}");
        }
    }
}
