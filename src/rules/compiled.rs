//! Structural rules as the engine runs them: resolved once, at load ([`super::resolver`]), into
//! [`super::Phase::structural`].
//!
//! The syntax tree says what an author wrote; this says what the engine does, with everything
//! that does not depend on the program decided up front:
//! - every `%x` and `$x` of a rule is a [`Slot`] (numbered by first occurrence, `exists`
//!   patterns included), so a match's bindings are a vector indexed by slot
//!   ([`CompiledRule::slots`] long), never a search by name;
//! - op selectors are op names, op classes ([`OpClass`]) and alternatives whose attribute tests
//!   are values; stages are op-role numbers ([`crate::dialect::stage_role`]);
//! - expressions are [`Expr`] trees (parameters already values, calls naming a
//!   [`super::builtins::Builtin`]);
//! - builds know their dialect entry and which operand slot each named argument fills, and
//!   which of their attributes are the same for every match;
//! - the order the matcher finds a `match`'s (and an `exists`'s) patterns in, and how it
//!   reaches each, is a plan of [`Step`]s ([`super::plan`]);
//! - builds and `exists` have ids dense over the rule set, so the engine's per-run state of
//!   them is a vector.
//!
//! Op names stay strings: interning needs the module's context, which the engine does once per
//! run. Every node keeps its [`Span`], so a runtime error points at the rule text.
//!
//! # Expressions
//!
//! An expression is the rule language's one tree ([`crate::value::expr`]) with [`Lowered`]
//! names. Lowering resolves what the text leaves to be looked up: a parameter becomes its
//! value, a stage or dtype name its constant ([`Expr::Lit`]); a `%x` or `$x` becomes a
//! numbered [`Slot`] of the match's bindings ([`Var`]); a call names a [`Builtin`]
//! ([`Callee`]). What cannot be resolved (a name or function that is not one, only possible in
//! a parameter's own default or constraint, which are evaluated before the checker runs) stays
//! an explicit node ([`Var::Unknown`], [`Callee::Unknown`]) that fails when evaluated, in
//! evaluation order. Expressions hold builds and `exists` patterns and actions hold
//! expressions, so the two live in this one file.

use super::builtins::Builtin;
use super::OpClass;
use crate::dialect::OpSpec;
use crate::value::expr::{Names, Payload, PayloadMut, Spanned};
use crate::value::operators::Span;
use crate::value::Val;

/// A structural rule ready to run.
#[derive(Debug, Clone)]
pub struct CompiledRule {
    pub name: String,
    /// The rule's name in its file (the "changed nothing" and looping errors point there).
    pub name_span: Span,
    /// Index into [`super::RuleSet::sources`].
    pub file: usize,
    /// 1-based line of the `rule` keyword.
    pub line: usize,
    /// Its index among its phase's [`super::Phase::rules`].
    pub index: usize,
    /// Number of binding slots: every `%x` and `$x` the rule names.
    pub slots: usize,
    /// The `match` patterns, in order; the first is the root.
    pub patterns: Vec<Pattern>,
    /// The order the matcher finds `patterns` in, and how it reaches each
    /// ([`super::plan`]): the first step is the root.
    pub plan: Vec<Step>,
    pub guards: Vec<Expr>,
    pub actions: Vec<Action>,
}

impl CompiledRule {
    /// Whether the rule can never fire, whatever the program: guards run in order, and one that
    /// needs nothing from a match (parameters are values since lowering: `normalize ==
    /// "tokens"` under `normalize=none`) is false before any guard that asks the match or
    /// could fail. The engine does not try such a rule; it would find no match either.
    pub fn never_fires(&self) -> bool {
        for g in &self.guards {
            match super::eval::eval(&mut super::eval::ConstEnv, g) {
                Ok(Val::Bool(true)) => {}
                Ok(Val::Bool(false)) => return true,
                _ => return false,
            }
        }
        false
    }
}

/// `%o = optimizer(param: %p, grad: %g) {multi_precision: $mp} in optimize`.
#[derive(Debug, Clone)]
pub struct Pattern {
    /// `%o =`: the slot the matched op goes to.
    pub bind: Option<Slot>,
    pub op: OpSel,
    /// `in backward`: the op role the op must have.
    pub stage: Option<i64>,
    pub args: Vec<ArgPat>,
    /// No argument names an operand: the list is positional.
    pub positional: bool,
    /// `..` at the end: more operands may follow.
    pub rest: bool,
    /// `(.., %v, ..)`: the one argument may be any operand; the matcher tries each position.
    pub some: bool,
    pub attrs: Vec<AttrPat>,
    pub span: Span,
}

/// Which ops a pattern accepts.
#[derive(Debug, Clone)]
pub enum OpSel {
    /// A dialect name or a quoted generic one.
    Name(String),
    Class(OpClass),
    OneOf(Vec<OpSel>),
    /// An alternative of a set with its own attribute tests.
    With(Box<OpSel>, Vec<(String, AltTest)>),
}

/// An attribute test of an alternative (`pd_op.all_reduce {reduce_type: 0}`): literals only.
#[derive(Debug, Clone)]
pub enum AltTest {
    Present,
    Absent,
    Equals(Val),
}

/// One operand of a pattern.
#[derive(Debug, Clone)]
pub struct ArgPat {
    /// `grad: %g`: the operand name, looked up in the matched op's dialect entry.
    pub operand: Option<String>,
    pub pat: ValPat,
}

#[derive(Debug, Clone)]
pub enum ValPat {
    /// `%g`, or `%g: $t` (the value's type captured too).
    Var { slot: Slot, ty: Option<Slot> },
    /// `_`.
    Wild,
    /// A nested pattern: the operand is the first result of an op matching it.
    Op(Box<Pattern>),
}

/// One attribute constraint of a pattern.
#[derive(Debug, Clone)]
pub struct AttrPat {
    pub key: String,
    pub test: AttrTest,
}

#[derive(Debug, Clone)]
pub enum AttrTest {
    /// `key: $c`: captured the first time, compared after.
    Capture(Slot),
    /// `key: _`.
    Present,
    /// `not key`.
    Absent,
    /// `key: expr`.
    Equals(Expr),
}

/// How the matcher reaches one top-level pattern: where its candidate ops come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reach {
    /// The op the worklist offers (the rule's first pattern).
    Root,
    /// The op defining the value bound to this slot: the pattern's own `%r =` name, which an
    /// earlier pattern bound as an operand.
    Def(Slot),
    /// The ops using the value bound to `slot`: one of the pattern's own operands (not a
    /// nested pattern's). `at`: the operand position the pattern names it at, when that is
    /// fixed (an argument without an operand name, in a pattern that is not `(.., %v, ..)`):
    /// only the uses at that position are candidates.
    Users { slot: Slot, at: Option<u32> },
    /// The ops carrying the literal value of the pattern's attribute test at this index
    /// (`{global_norm_end: true}`): a pattern sharing no value with what is bound, found through
    /// a marker an earlier application set. The run keeps an index of such ops.
    Marked(usize),
}

/// One step of a match plan: the pattern (an index into its list) and how it is reached. Every
/// pattern of the list has exactly one step.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Step {
    pub pattern: usize,
    pub reach: Reach,
}

/// `exists(patterns)`: found around a match, through what it bound.
#[derive(Debug, Clone)]
pub struct Exists {
    /// Dense over the rule set's `exists`: the engine's per-run state of this one is at this
    /// index ([`super::RuleSet::exists`] of them).
    pub id: usize,
    pub patterns: Vec<Pattern>,
    /// The order the patterns are found in, each from what the match or an earlier step bound.
    pub plan: Vec<Step>,
    pub span: Span,
}

/// An op to build: `%a = pd_op.add_(%m, %g) {op_role: backward}`.
#[derive(Debug, Clone)]
pub struct Build {
    /// Dense over the rule set's builds: the engine's per-run state of this one is at this
    /// index ([`super::RuleSet::builds`] of them).
    pub id: usize,
    /// The slot the built op goes to.
    pub bind: Option<Slot>,
    pub op: String,
    /// The op's dialect entry (none for a quoted generic name or an op the table lacks).
    pub spec: Option<&'static OpSpec>,
    pub args: Vec<BuildArg>,
    /// Whether some argument names its operand (the operand list then covers every declared
    /// operand).
    pub named_args: bool,
    pub attrs: Vec<BuildAttr>,
    /// How its result types are found.
    pub types: ResultTypes,
    pub span: Span,
}

/// How a built op's result types are found.
#[derive(Debug, Clone)]
pub enum ResultTypes {
    /// The dialect's result rule derives the first result's type; the others are null.
    Derived,
    /// A declared op: per result, the type of that operand (`like(x)`), or null.
    Operands(Vec<Option<usize>>),
    /// `-> EXPR`: a type, or a list of types and `none`s (null types), one per result.
    Given(Expr),
    /// `-> like(%o)`: the result types of the op bound to `%o`.
    Like(ValueRef),
}

/// An operand of a build.
#[derive(Debug, Clone)]
pub struct BuildArg {
    /// The operand slot it fills: its position, or the dialect's index of its name (the
    /// resolver refuses a name the op does not have).
    pub index: usize,
    pub value: Expr,
}

/// An attribute of a build.
#[derive(Debug, Clone)]
pub struct BuildAttr {
    pub key: String,
    pub value: Expr,
    /// The value does not depend on the match ([`Expr::is_fixed`]): computed once per run.
    pub fixed: bool,
}

/// Where an action puts new or moved ops.
#[derive(Debug, Clone)]
pub enum InsertPoint {
    After(Expr),
    Before(Expr),
    /// `at end of STAGE`: the stage's op role.
    StageEnd(i64),
    StageStart(i64),
    /// The end of the block of region `index` of the op `op` evaluates to.
    RegionEnd {
        op: Expr,
        index: u32,
        span: Span,
    },
}

/// What `in %o: TARGET := value;` rewires.
#[derive(Debug, Clone)]
pub enum OperandSel {
    /// An operand name of the dialect table.
    Name(String, Span),
    /// Every operand of `%o` that currently is this value.
    Value(ValueRef),
}

#[derive(Debug, Clone)]
pub enum Action {
    /// `let $x = expr;`
    Let {
        slot: Slot,
        value: Expr,
    },
    /// `state %m = "name" : type init BUILD;`
    State {
        bind: Slot,
        name: Expr,
        ty: Expr,
        init: Build,
        span: Span,
    },
    /// `after %g: BUILD;` and the other insertion points.
    Insert {
        at: InsertPoint,
        build: Build,
    },
    /// `replace %x with expr [for users in STAGE];`
    Replace {
        value: Expr,
        with: Expr,
        only_in_stage: Option<i64>,
        span: Span,
    },
    /// `in %o: grad := expr;`
    SetOperand {
        op: ValueRef,
        target: OperandSel,
        value: Expr,
        span: Span,
    },
    /// `in %c: append expr;`
    AppendOperand {
        op: ValueRef,
        value: Expr,
        span: Span,
    },
    Erase {
        op: ValueRef,
        span: Span,
    },
    Move {
        op: ValueRef,
        to: InsertPoint,
        span: Span,
    },
    /// `move STAGE ops into region N of %o;`: the stage's role.
    MoveStage {
        stage: i64,
        to: InsertPoint,
        span: Span,
    },
    SetAttrs {
        op: ValueRef,
        attrs: Vec<(String, Expr)>,
    },
    If {
        cond: Expr,
        then: Vec<Action>,
        els: Vec<Action>,
    },
    /// `error "message";`: the message's pieces.
    Error {
        message: Vec<StrPart>,
        span: Span,
    },
}

/// The index of a `%x` or `$x` in a rule's bindings (see [`super::compiled::CompiledRule`]).
pub type Slot = u32;

/// `%x` or `%x.field`: the slot, and the name as written (for messages).
#[derive(Debug, Clone, PartialEq)]
pub struct ValueRef {
    pub slot: Slot,
    pub name: String,
    /// Where the name alone is written (`erase %o;` points there).
    pub name_span: Span,
    pub field: Option<Field>,
    pub span: Span,
}

impl ValueRef {
    /// The written `%x` (or `%x.field`) `v`, resolved to `slot`.
    pub fn new(v: &super::ast::ValueRef, slot: Slot) -> ValueRef {
        ValueRef {
            slot,
            name: v.name.name.clone(),
            name_span: v.name.span,
            field: v.field.as_ref().map(|f| Field {
                text: f.name.clone(),
                index: f.name.parse().ok(),
            }),
            span: v.span,
        }
    }
}

/// `.1` or `.out`: a numbered or named result of the op bound to a variable. Named results are
/// looked up in the dialect table under the bound op's name, which only the match knows.
#[derive(Debug, Clone, PartialEq)]
pub struct Field {
    /// As written (messages quote it).
    pub text: String,
    /// The number, when the field is one.
    pub index: Option<usize>,
}

/// The names of a lowered expression: parameters, stages and dtypes are literals, `%x` and
/// `$x` are slots, calls name a [`Builtin`], builds and `exists` are lowered too.
#[derive(Debug, Clone, Copy)]
pub struct Lowered;

/// A lowered expression (see [`crate::value::expr`]).
pub type Expr = crate::value::expr::Expr<Lowered>;
/// A piece of a lowered interpolated string.
pub type StrPart = crate::value::expr::StrPart<Lowered>;

/// A lowered name.
#[derive(Debug, Clone)]
pub enum Var {
    /// `%x` or `%x.field`.
    Value(ValueRef),
    /// `$x`; the name as written is kept for messages.
    Capture {
        slot: Slot,
        name: String,
        span: Span,
    },
    /// A name that is no parameter, stage or dtype: `unknown name` when evaluated.
    Unknown(String, Span),
}

/// What a lowered call applies. The span is the function's name.
#[derive(Debug, Clone)]
pub enum Callee {
    Builtin(Builtin, Span),
    /// `uses(%v in STAGE)`, called with the value and the stage: the stage restricts the
    /// count; it is not a stage test.
    UsesIn(Span),
    /// A function that is no builtin: its arguments are evaluated, then `unknown function`.
    Unknown(String, Span),
}

impl Spanned for Var {
    fn span(&self) -> Span {
        match self {
            Var::Value(v) => v.span,
            Var::Capture { span, .. } | Var::Unknown(_, span) => *span,
        }
    }
}

impl Spanned for Callee {
    fn span(&self) -> Span {
        match self {
            Callee::Builtin(_, s) | Callee::UsesIn(s) | Callee::Unknown(_, s) => *s,
        }
    }
}

impl Spanned for Build {
    fn span(&self) -> Span {
        self.span
    }
}

impl Spanned for Box<Exists> {
    fn span(&self) -> Span {
        self.span
    }
}

impl Names for Lowered {
    type Var = Var;
    type Callee = Callee;
    type Build = Build;
    type Exists = Box<Exists>;

    fn payload<'a>(p: Payload<'a, Self>, f: &mut dyn FnMut(&'a Expr)) {
        match p {
            Payload::Build(b) => b.exprs(f),
            Payload::Exists(x) => x.patterns.iter().for_each(|p| p.exprs(f)),
        }
    }

    fn payload_mut(p: PayloadMut<'_, Self>, f: &mut dyn FnMut(&mut Expr)) {
        match p {
            PayloadMut::Build(b) => b.exprs_mut(f),
            PayloadMut::Exists(x) => x.patterns.iter_mut().for_each(|p| p.exprs_mut(f)),
        }
    }
}

impl Pattern {
    /// The attribute values the pattern and its nested patterns test.
    pub fn exprs<'a>(&'a self, f: &mut dyn FnMut(&'a Expr)) {
        for a in &self.attrs {
            if let AttrTest::Equals(e) = &a.test {
                f(e)
            }
        }
        for a in &self.args {
            if let ValPat::Op(p) = &a.pat {
                p.exprs(f)
            }
        }
    }

    /// [`Pattern::exprs`], mutably.
    pub fn exprs_mut(&mut self, f: &mut dyn FnMut(&mut Expr)) {
        for a in &mut self.attrs {
            if let AttrTest::Equals(e) = &mut a.test {
                f(e)
            }
        }
        for a in &mut self.args {
            if let ValPat::Op(p) = &mut a.pat {
                p.exprs_mut(f)
            }
        }
    }
}

impl Build {
    /// Its operands, attribute values and given result types.
    pub fn exprs<'a>(&'a self, f: &mut dyn FnMut(&'a Expr)) {
        self.args.iter().for_each(|a| f(&a.value));
        self.attrs.iter().for_each(|a| f(&a.value));
        if let ResultTypes::Given(t) = &self.types {
            f(t)
        }
    }

    /// [`Build::exprs`], mutably.
    pub fn exprs_mut(&mut self, f: &mut dyn FnMut(&mut Expr)) {
        self.args.iter_mut().for_each(|a| f(&mut a.value));
        self.attrs.iter_mut().for_each(|a| f(&mut a.value));
        if let ResultTypes::Given(t) = &mut self.types {
            f(t)
        }
    }
}

impl Expr {
    /// Whether the value is the same for every match: no program values, captures, calls,
    /// builds or `exists` in it (parameters were resolved when the rule was lowered).
    pub fn is_fixed(&self) -> bool {
        !self.any(&mut |e| {
            matches!(
                e,
                Expr::Var(Var::Value(_) | Var::Capture { .. })
                    | Expr::Call { .. }
                    | Expr::Build(_)
                    | Expr::Exists(_)
            )
        })
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    /// The rules of `text`, by name, and whether each can fire.
    fn fires(text: &str, sets: &[(&str, &str)]) -> Vec<(String, bool)> {
        let sets: Vec<(String, String)> = sets
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        let rs = super::super::load::load_str("t.rw", text, Path::new("."), &sets)
            .unwrap_or_else(|d| panic!("{d}"));
        rs.phases
            .iter()
            .flat_map(|p| p.structural.iter())
            .map(|r| (r.name.clone(), !r.never_fires()))
            .collect()
    }

    #[test]
    fn a_guard_false_by_the_parameters_alone_means_the_rule_never_fires() {
        let text = r#"
param mode: string = "a";
// A test rule.
rule off { match %x = pd_op.relu(%y); where mode == "b" and rank(%x) == 0; erase %x; }
// A test rule.
rule on { match %x = pd_op.relu(%y); where mode == "a" and rank(%x) == 0; erase %x; }
// A test rule.
rule asks_first { match %x = pd_op.relu(%y); where rank(%x) == 0 and mode == "b"; erase %x; }
// A test rule.
rule second { match %x = pd_op.relu(%y); where mode == "a"; where mode == "b"; erase %x; }
"#;
        assert_eq!(
            fires(text, &[]),
            [
                ("off".to_string(), false),
                ("on".to_string(), true),
                ("asks_first".to_string(), true),
                ("second".to_string(), false),
            ]
        );
        assert_eq!(fires(text, &[("mode", "b")])[0], ("off".to_string(), true));
    }
}
