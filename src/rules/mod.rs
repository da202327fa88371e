//! The rule language: `.rw` files, parsed with LALRPOP (`grammar/rules.lalrpop`), loaded,
//! checked against the dialect table and lowered before anything runs.
//!
//! ```text
//! rules/grad_merge.rw ──parse──▶ ast::File ──expand (ops, pred, let)──▶ ast::File ──load (imports, --set)──▶ phases ──▶ RuleSet
//!                                                                            └─resolve (dialect)─┘                 (compiled::CompiledRule,
//!                                                                                                                   egraph::EqRule)
//! ```
//!
//! [`load`] decides which files and phases run with which parameter values; [`resolver`]
//! decides whether each file means something against the dialect table and, in the same pass,
//! what each rule compiles to; [`suggest`] words the "did you mean" hints both give.
//!
//! A [`RuleSet`] is an ordered list of [`Phase`]s; the structural engine (`rewrite/`) runs each
//! phase's structural rules to a fixpoint, in order. Every rule is lowered once, at load, by
//! the resolver that checks it: equational rules to the e-graph's rule type
//! ([`Phase::equational`]), structural rules to [`compiled::CompiledRule`]s
//! ([`Phase::structural`]: variables numbered into slots,
//! selectors and stages resolved, expressions as [`compiled::Expr`] trees whose calls name a
//! [`builtins::Builtin`]). The engines run only these lowered forms, never the syntax tree
//! ([`ast`]); every node keeps its span, so a runtime error still points at the rule text.
//! [`builtins`] is the one table of built-in functions; [`eval`] the one evaluator. Nothing
//! here depends on the engines.
//!
//! [`load_str`] on a rule with a parameter set by `--set`: `tests::load_str_example` (in
//! `tests/mod.rs`).
//!
//! Architecture invariant: nothing here knows a particular pass. Op names, op classes and
//! operand names come from the dialect table; stages from [`STAGES`].

pub mod ast;
pub mod builtins;
pub mod compiled;
mod constant;
pub mod decl;
pub mod eval;
pub mod expand;
mod let_build;
pub mod limits;
pub mod load;
pub mod parse;
pub mod plan;
mod require;
pub mod resolver;
pub(crate) use crate::suggest;
pub mod ty;

pub use crate::value::operators::Span;
pub use crate::value::Val;
pub use load::{load, load_str, load_with_path, parse_set};

use crate::diag::SourceFile;
use indexmap::IndexMap;

lalrpop_util::lalrpop_mod!(
    #[allow(clippy::all, unused_parens, dead_code)]
    pub(crate) grammar,
    "/rules.rs"
);

/// The stages rules name, and the attribute that holds an op's stage: the dialect's.
pub use crate::dialect::{stage_role, ROLE_ATTR, STAGES};

/// An op class a pattern may name, resolved from its name once: `any`, or an effect class of
/// the dialect table (`pure`, `inplace`, `optimizer`, ...).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OpClass {
    Any,
    Effect(crate::dialect::Effect),
}

impl OpClass {
    /// `None` for a name that is not an op class.
    pub fn from_name(name: &str) -> Option<OpClass> {
        if name == "any" {
            Some(OpClass::Any)
        } else {
            crate::dialect::Effect::from_class_name(name).map(OpClass::Effect)
        }
    }
}

/// Loaded, checked rules, ready for the engine.
#[derive(Debug, Clone)]
pub struct RuleSet {
    /// Every loaded file (diagnostics point into these).
    pub sources: Vec<SourceFile>,
    /// Parameters with their final values (default or `--set`).
    pub params: IndexMap<String, Param>,
    /// Phases in run order.
    pub phases: Vec<Phase>,
    /// The rule files given on the command line, as indices into [`RuleSet::sources`], in order
    /// (`Phase::root` says which of them brought a phase in).
    pub roots: Vec<usize>,
    /// The ops the files declare, then the dialect table: what the engine asks for operand and
    /// result names.
    pub ops: decl::OpTable,
    /// How many builds and `exists(...)` the structural rules hold: their ids
    /// (`compiled::Build::id`, `compiled::Exists::id`) are below these.
    pub builds: usize,
    pub exists: usize,
}

impl RuleSet {
    /// Number of rules over all phases.
    pub fn num_rules(&self) -> usize {
        self.phases.iter().map(|p| p.rules.len()).sum()
    }
}

#[derive(Debug, Clone)]
pub struct Param {
    pub ty: ParamType,
    pub value: Val,
    /// Given with `--set`.
    pub set: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ParamType {
    Int,
    Float,
    Bool,
    Str,
}

impl ParamType {
    pub fn from_name(s: &str) -> Option<ParamType> {
        Some(match s {
            "int" => ParamType::Int,
            "float" => ParamType::Float,
            "bool" => ParamType::Bool,
            "string" => ParamType::Str,
            _ => return None,
        })
    }

    pub fn name(self) -> &'static str {
        match self {
            ParamType::Int => "int",
            ParamType::Float => "float",
            ParamType::Bool => "bool",
            ParamType::Str => "string",
        }
    }

    /// Parses a `--set` value: a string as written, a number or bool without blanks around it.
    pub fn parse(self, raw: &str) -> Option<Val> {
        let raw = match self {
            ParamType::Str => raw,
            _ => raw.trim(),
        };
        match self {
            ParamType::Int => raw.parse().ok().map(Val::Int),
            // Refused: what is not finite (`1e400`), and what rounds to zero though it is not
            // zero (`1e-400`: a nonzero digit before the exponent).
            ParamType::Float => raw
                .parse::<f64>()
                .ok()
                .filter(|f| f.is_finite())
                .filter(|&f| {
                    let mantissa = raw.split(['e', 'E']).next().unwrap_or("");
                    f != 0.0 || !mantissa.contains(|c: char| ('1'..='9').contains(&c))
                })
                .map(Val::Float),
            ParamType::Bool => match raw {
                "true" => Some(Val::Bool(true)),
                "false" => Some(Val::Bool(false)),
                _ => None,
            },
            ParamType::Str => Some(Val::Str(raw.to_string())),
        }
    }

    /// Checks a default's value against the type (an int is a fine float).
    pub fn coerce(self, v: Val) -> Result<Val, Val> {
        match (self, v) {
            (ParamType::Int, v @ Val::Int(_)) => Ok(v),
            (ParamType::Float, Val::Int(i)) => Ok(Val::Float(i as f64)),
            (ParamType::Float, v @ Val::Float(_)) => Ok(v),
            (ParamType::Bool, v @ Val::Bool(_)) => Ok(v),
            (ParamType::Str, v @ Val::Str(_)) => Ok(v),
            (_, v) => Err(v),
        }
    }
}

/// Rules that run together to a fixpoint.
#[derive(Debug, Clone)]
pub struct Phase {
    pub name: String,
    pub rules: Vec<LoadedRule>,
    /// The phase's structural rules resolved once, at load ([`resolver`]), in order:
    /// what the engine runs.
    pub structural: Vec<compiled::CompiledRule>,
    /// The phase's equational rules lowered to the e-graph's form ([`resolver`]), once, at load:
    /// several per written rule when it uses op classes, sets or `<=>`.
    pub equational: Vec<crate::egraph::EqRule>,
    /// Checked when the phase has run (see [`ast::Require`]).
    pub requires: Vec<LoadedRequire>,
    /// Index into [`RuleSet::roots`]: the command-line rule file whose imports included it.
    pub root: usize,
}

/// A `require` with its count evaluated.
#[derive(Debug, Clone)]
pub struct LoadedRequire {
    /// Index into [`RuleSet::sources`].
    pub file: usize,
    /// The rules whose applications are added up, as the `require` names them.
    pub rules: Vec<ast::Ident>,
    /// The `require` clause.
    pub span: Span,
    /// The applications must compare to `count` with `op` (`>= 1` when none was written).
    pub op: crate::value::operators::BinOp,
    pub count: i64,
    /// The `else "message"`, interpolated with the parameters.
    pub message: Option<String>,
}

impl LoadedRequire {
    /// Whether `applied` applications meet the requirement.
    pub fn met(&self, applied: u64) -> bool {
        let a = i128::from(applied);
        let c = i128::from(self.count);
        match self.op {
            crate::value::operators::BinOp::Eq => a == c,
            crate::value::operators::BinOp::Ne => a != c,
            crate::value::operators::BinOp::Lt => a < c,
            crate::value::operators::BinOp::Le => a <= c,
            crate::value::operators::BinOp::Gt => a > c,
            _ => a >= c,
        }
    }

    /// `at least 1`, `exactly 3`, ...: what the requirement asks, for messages.
    pub fn wanted(&self) -> String {
        let c = self.count;
        match self.op {
            crate::value::operators::BinOp::Eq => format!("exactly {c}"),
            crate::value::operators::BinOp::Ne => format!("any number but {c}"),
            crate::value::operators::BinOp::Lt => format!("fewer than {c}"),
            crate::value::operators::BinOp::Le => format!("at most {c}"),
            crate::value::operators::BinOp::Gt => format!("more than {c}"),
            _ => format!("at least {c}"),
        }
    }
}

/// A rule as written, with where it came from: what the loader checks (unique names, what a
/// `require` names). The engines run the lowered forms ([`Phase::structural`],
/// [`Phase::equational`]), never this syntax tree.
#[derive(Debug, Clone)]
pub struct LoadedRule {
    /// Index into [`RuleSet::sources`].
    pub file: usize,
    /// 1-based line of the `rule`/`rewrite` keyword.
    pub line: usize,
    pub rule: ast::Rule,
}

#[cfg(test)]
mod tests;
