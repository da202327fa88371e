//! Structural rules as the engine runs them: lowered once, at load ([`super::lower`]), into
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
//!   which of their attributes are the same for every match.
//!
//! Op names stay strings: interning needs the module's context, which the engine does once per
//! run. Every node keeps its [`Span`], so a runtime error points at the rule text as before.

use super::expr::{Expr, Slot, Span, StrPart, ValueRef};
use super::value::Val;
use super::OpClass;
use crate::dialect::OpSpec;

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
    pub guards: Vec<Expr>,
    pub actions: Vec<Action>,
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

/// `exists(patterns)`: found around a match, through what it bound.
#[derive(Debug, Clone)]
pub struct Exists {
    pub patterns: Vec<Pattern>,
    pub span: Span,
}

/// An op to build: `%a = pd_op.add_(%m, %g) {op_role: backward}`.
#[derive(Debug, Clone)]
pub struct Build {
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
    pub span: Span,
}

/// An operand of a build.
#[derive(Debug, Clone)]
pub struct BuildArg {
    /// The operand slot it fills: its position, or the dialect's index of its name.
    pub index: Result<usize, UnknownOperand>,
    pub value: Expr,
}

/// A named operand the built op does not have (an error when the build runs).
#[derive(Debug, Clone)]
pub struct UnknownOperand {
    pub name: String,
    pub span: Span,
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
    Erase {
        op: ValueRef,
        span: Span,
    },
    Move {
        op: ValueRef,
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
