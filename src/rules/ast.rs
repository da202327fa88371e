//! The syntax tree of a `.rw` rule file, as the LALRPOP grammar (`grammar/rules.lalrpop`) builds it.
//!
//! Every node carries a [`Span`] (byte offsets into its file) so that the resolver and the engine
//! can point at the exact place of a problem with `file:line:col`, the source line and a caret.
//!
//! # Two kinds of rules
//!
//! * A **structural rule** ([`StructRule`]) matches a DAG of ops (several `match` patterns that
//!   share value variables), tests guards, then performs actions on the program: build ops at a
//!   chosen place, rewire operands, erase, move, set attributes, create persistable state. The
//!   structural engine (`src/rewrite/`) runs these in their phase until nothing matches.
//! * An **equational rule** ([`EqRule`]) states an identity between pure terms, `lhs => rhs`
//!   (or `lhs <=> rhs`), with an optional guard. It is meant for the e-graph layer, and is kept
//!   as two trees:
//!   - the left-hand side is an [`OpPattern`], the same pattern tree a structural `match` uses,
//!     restricted by the parser: operands are **positional**, one per operand, with no `..`, no
//!     stage and no type capture. A leaf is a variable (`%x`, bound to the e-class of the
//!     operand at that position) or a wildcard; an inner node is an op selector (a dialect op
//!     name, a quoted generic name, an op class, or a set of names), attribute constraints
//!     ([`AttrPat`]: equal to a constant expression, captured into `$name`, present, or absent)
//!     and its operands.
//!   - [`Term`]: the right-hand side. A leaf is a variable bound on the left; an inner node is
//!     an op name, the attributes to give it (each an [`Expr`] over parameters and captures,
//!     e.g. `value: 1.0 / k_steps` or `dtype: $d`) and its children.
//!
//!   A guard is an [`Expr`] over the variables and captures of the left-hand side.
//!
//! # Expressions
//!
//! One expression language ([`Expr`]) serves parameter defaults and constraints, import
//! conditions, guards, computed attributes and interpolated strings (`"{name(%p)}@GRAD@MERGE"`).
//! Bare identifiers are resolved by the resolver: a parameter, a stage (`backward`), a dtype
//! (`float32`), or an error. `%x` is a value (or the op a pattern bound to `%x`), `$x` a captured
//! attribute or computed constant.

/// Spans and operators are shared with the lowered form ([`crate::value::operators`]).
pub use crate::value::operators::{BinOp, Span, UnOp};

/// A name with its place in the file.
#[derive(Debug, Clone, PartialEq)]
pub struct Ident {
    pub name: String,
    pub span: Span,
}

/// A whole `.rw` file.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct File {
    pub items: Vec<Item>,
    /// `ops` and `pred` definitions at file level. `rules::expand` substitutes them into the
    /// rules when the file is loaded, so nothing after it (resolver, engine) sees them; they
    /// stay here because files that import this one use its op sets.
    pub defs: Vec<Def>,
}

/// A definition the loader substitutes into rules (`src/rules/expand.rs`); no rule runs it.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, PartialEq)]
pub enum Def {
    /// `ops reduction = (pd_op.c_allreduce_sum | pd_op.all_reduce {reduce_type: 0});`: a named
    /// op alternation, used as `%r = reduction(%g, ..)` wherever a pattern takes an op. `set`
    /// is an `OpSel::OneOf`; once the file is loaded, every other set it names is replaced by
    /// that set's alternatives.
    OpSet { name: Ident, set: OpSel, span: Span },
    /// `pred sole_accumulator(%m) = uses(%m) == 2;`: a named guard whose parameters are values;
    /// a call `sole_accumulator(%b)` in a rule's expression is replaced by the body with `%m`
    /// renamed to `%b`.
    Pred {
        name: Ident,
        params: Vec<Ident>,
        body: Expr,
        span: Span,
    },
}

/// A top-level declaration or definition, as the parser meets them.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, PartialEq)]
pub enum TopItem {
    Item(Item),
    Def(Def),
}

/// A top-level declaration.
// A file holds tens of items: boxing variants would buy nothing.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, PartialEq)]
pub enum Item {
    Param(ParamDecl),
    Import(Import),
    Phase(PhaseDecl),
    /// A rule outside any `phase { }`: it belongs to the file's implicit phase, named after the
    /// file (`canonicalize.rw` → `canonicalize`).
    Rule(Rule),
    /// A `require` outside any `phase { }`: it belongs to the file's implicit phase.
    Require(Require),
    /// `op "pd_op.fused_gemm_epilogue"(x, y, bias) {..} -> (out: like(x), reserve_space?);`
    Op(OpDecl),
}

/// `op NAME(operands) {attr: type = default, ..} -> (results);`: an op the dialect table does
/// not know, declared by the rule file that builds or matches it (see [`super::decl`]).
#[derive(Debug, Clone, PartialEq)]
pub struct OpDecl {
    pub name: OpName,
    pub operands: Vec<OperandDecl>,
    pub attrs: Vec<AttrDecl>,
    pub results: Vec<ResultDecl>,
    pub span: Span,
}

/// How many values an operand or result slot of a declared op takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Arity {
    One,
    /// `name?`: may be absent (`<<NULL VALUE>>`, or a null result type).
    Optional,
    /// `*name`: all remaining operands.
    Variadic,
}

/// `x`, `bias?` or `*inputs`.
#[derive(Debug, Clone, PartialEq)]
pub struct OperandDecl {
    pub name: Ident,
    pub arity: Arity,
}

/// `trans_x: bool = false`.
#[derive(Debug, Clone, PartialEq)]
pub struct AttrDecl {
    pub key: Ident,
    /// `int`, `float`, `bool`, `string`, `dtype`, `place`, `list`.
    pub ty: Ident,
    pub default: Option<Expr>,
}

/// `out: like(x)` (the type of operand `x`) or `reserve_space?` (the build gives the type).
#[derive(Debug, Clone, PartialEq)]
pub struct ResultDecl {
    pub name: Ident,
    pub arity: Arity,
    pub like: Option<Ident>,
}

/// `param k_steps: int = 4 where k_steps >= 1 else "message";`
#[derive(Debug, Clone, PartialEq)]
pub struct ParamDecl {
    pub name: Ident,
    /// Written type name (`int`, `float`, `bool`, `string`); checked by the resolver.
    pub ty: Ident,
    pub default: Option<Expr>,
    pub constraint: Option<Expr>,
    /// The message shown when the constraint fails.
    pub message: Option<StrLit>,
    pub span: Span,
}

/// `import "hoist_reduce.rw" if gradient_sync_after_accumulate;`
#[derive(Debug, Clone, PartialEq)]
pub struct Import {
    /// Path relative to the importing file.
    pub path: String,
    pub path_span: Span,
    /// `with {avg: false}`: values the importing file gives the imported file's parameters
    /// (constant expressions; `--set` still wins).
    pub sets: Vec<(Ident, Expr)>,
    pub cond: Option<Expr>,
    pub span: Span,
}

/// `phase name { rules }`: the rules of a phase run together to a fixpoint; phases run in the
/// order they appear once imports are expanded in place.
#[derive(Debug, Clone, PartialEq)]
pub struct PhaseDecl {
    pub name: Ident,
    pub rules: Vec<Rule>,
    pub requires: Vec<Require>,
    /// `ops` and `pred` definitions visible in this phase only.
    pub defs: Vec<Def>,
    pub span: Span,
}

/// `require scale_loss;` / `require scale_loss == n_params else "message";`: checked when the
/// phase it is written in has run, against the applications of the named rules (of this phase or
/// an earlier one) so far: `require a + b == 1` counts both, for one requirement met by either
/// of two rules. Unmet, it is an error at the `require`. Without a comparison the rules must
/// have applied at least once.
#[derive(Debug, Clone, PartialEq)]
pub struct Require {
    /// The rules whose applications are added up (at least one).
    pub rules: Vec<Ident>,
    /// A comparison (`==`, `!=`, `<`, `<=`, `>`, `>=`) with an int expression of parameters.
    pub count: Option<(BinOp, Expr)>,
    pub message: Option<StrLit>,
    pub span: Span,
}

/// An item inside `phase { }`.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, PartialEq)]
pub enum PhaseItem {
    Rule(Rule),
    Require(Require),
    Def(Def),
}

// A rule file holds tens of rules: boxing variants would buy nothing.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, PartialEq)]
pub enum Rule {
    Structural(StructRule),
    Equational(EqRule),
}

impl Rule {
    pub fn name(&self) -> &Ident {
        match self {
            Rule::Structural(r) => &r.name,
            Rule::Equational(r) => &r.name,
        }
    }
    pub fn span(&self) -> Span {
        match self {
            Rule::Structural(r) => r.span,
            Rule::Equational(r) => r.span,
        }
    }
}

/// `rule name { match ...; where ...; actions }`
#[derive(Debug, Clone, PartialEq)]
pub struct StructRule {
    pub name: Ident,
    pub clauses: Vec<Clause>,
    pub span: Span,
}

/// One `;`-terminated clause of a structural rule, in source order. The resolver requires the
/// order `match`, then `where`, then actions.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, PartialEq)]
pub enum Clause {
    Match(Vec<OpPattern>),
    Where(Expr),
    Action(Action),
}

/// `rewrite name: lhs => rhs where guard subsume;`
#[derive(Debug, Clone, PartialEq)]
pub struct EqRule {
    pub name: Ident,
    /// The pattern tree of a structural `match`, restricted by the parser
    /// ([`eq_lhs`](super::parse::eq_lhs)): positional operands, no `..`, no stage, no type
    /// captures. `%s = pd_op.scale(..)` names the matched op, so the right-hand side can copy
    /// its attributes (`{..%s, value: ..}`) and guards can read them (`attr(%s, "bias")`).
    pub lhs: OpPattern,
    pub rhs: Term,
    pub guard: Option<Expr>,
    pub direction: Direction,
    /// With `subsume`, the e-graph should prefer the right-hand side and drop the left from
    /// extraction (Cranelift's `subsume`).
    pub subsume: bool,
    pub span: Span,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    /// `=>`: rewrite left to right only.
    Forward,
    /// `<=>`: both directions (both sides must then be patterns).
    Both,
}

/// The attribute key that stands for `..%s` in an attribute block: start from the attributes
/// of the left-hand-side op bound to `%s` (equational rules only); its value is `Expr::Value`.
pub const SPREAD_KEY: &str = "..";

/// Right-hand side of an equational rule.
#[derive(Debug, Clone, PartialEq)]
pub enum Term {
    Var(Ident),
    /// `attrs` may start with a [`SPREAD_KEY`] entry (`{..%s, value: $a * $b}`).
    Op {
        op: OpName,
        attrs: Vec<(Ident, Expr)>,
        children: Vec<Term>,
        /// `-> type(%x)`, `-> like(%s)` or a literal type: the result types, when given.
        ty: Option<Expr>,
        span: Span,
    },
}

/// Which ops an op pattern accepts.
#[derive(Debug, Clone, PartialEq)]
pub enum OpSel {
    /// `pd_op.add_`: must be in the dialect table.
    Name(Ident),
    /// `"my_dialect.op"`: a generic name, accepted without checking.
    Quoted(Ident),
    /// `optimizer`, `collective`, `inplace`, `pure`, ...: an op class of the dialect table;
    /// `any` accepts every op.
    Class(Ident),
    /// `(pd_op.c_allreduce_sum | pd_op.c_reduce_sum)`.
    OneOf(Vec<OpSel>, Span),
    /// `pd_op.all_reduce {reduce_type: 0}`, one alternative of a set: the ops `sel` accepts
    /// whose attributes pass these tests (a literal, `_` or `not key`; no captures: the
    /// alternative may not be the one that matched).
    With {
        sel: Box<OpSel>,
        attrs: Vec<AttrPat>,
        span: Span,
    },
}

impl OpSel {
    pub fn span(&self) -> Span {
        match self {
            OpSel::Name(i) | OpSel::Quoted(i) | OpSel::Class(i) => i.span,
            OpSel::OneOf(_, s) | OpSel::With { span: s, .. } => *s,
        }
    }
}

/// A name of an op to build: a dialect name or a quoted generic one.
#[derive(Debug, Clone, PartialEq)]
pub struct OpName {
    pub name: Ident,
    pub quoted: bool,
}

/// `%o = optimizer(param: %p, grad: %g) {multi_precision: $mp} in optimize`
#[derive(Debug, Clone, PartialEq)]
pub struct OpPattern {
    /// `%o =`: names the matched op. In value position `%o` means its first result, `%o.name`
    /// (or `%o.1`) a named (or numbered) result.
    pub bind: Option<Ident>,
    pub op: OpSel,
    pub args: Vec<ArgPat>,
    /// `..` at the end of the operand list: more operands may follow. Without it a positional
    /// list must cover every operand; named operands never need to.
    pub rest: bool,
    /// `(.., %v, ..)`: `args` is the one variable `%v`, which may be any operand of the op (a
    /// match per operand position that fits). Top-level patterns only.
    pub some: bool,
    pub attrs: Vec<AttrPat>,
    /// `in backward`: the op's stage (op role).
    pub stage: Option<Ident>,
    pub span: Span,
}

/// One operand of an op pattern, positional or named (`grad: %g`).
#[derive(Debug, Clone, PartialEq)]
pub struct ArgPat {
    pub operand: Option<Ident>,
    pub pat: ValPat,
}

#[derive(Debug, Clone, PartialEq)]
pub enum ValPat {
    /// `%g` or `%g: $t` (also captures the value's type).
    Var { name: Ident, ty: Option<Ident> },
    /// `_`: any value, including an absent optional operand.
    Wild(Span),
    /// A nested op pattern: the operand is the first result of an op matching it.
    Op(Box<OpPattern>),
}

/// One attribute constraint of a pattern.
#[derive(Debug, Clone, PartialEq)]
pub struct AttrPat {
    pub key: Ident,
    pub val: AttrPatVal,
}

#[derive(Debug, Clone, PartialEq)]
pub enum AttrPatVal {
    /// `key: $c`: the first occurrence captures the attribute, later ones test equality.
    Capture(Ident),
    /// `key: _`: present, any value.
    Present(Span),
    /// `not key`: absent.
    Absent(Span),
    /// `key: expr`: equal to the value of a constant expression.
    Equals(Expr),
}

/// A string literal; `{expr}` inside it is interpolated, `{{` and `}}` are literal braces.
#[derive(Debug, Clone, PartialEq)]
pub struct StrLit {
    pub parts: Vec<StrPart>,
    pub span: Span,
}

impl StrLit {
    /// The text when the string has no interpolation.
    pub fn as_plain(&self) -> Option<String> {
        crate::value::expr::plain(&self.parts)
    }
}

/// `%x` or `%x.field` (a named or numbered result of the op bound to `%x`).
#[derive(Debug, Clone, PartialEq)]
pub struct ValueRef {
    pub name: Ident,
    pub field: Option<Ident>,
    pub span: Span,
}

/// The names of the syntax tree: as the author wrote them, resolved by the resolver.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Syntax;

/// An expression as written (see [`crate::value::expr`]).
pub type Expr = crate::value::expr::Expr<Syntax>;
/// A piece of an interpolated string as written.
pub type StrPart = crate::value::expr::StrPart<Syntax>;

/// A name in an expression.
#[derive(Debug, Clone, PartialEq)]
pub enum Var {
    /// A parameter, a stage, a dtype or `none`, decided by the resolver.
    Bare(Ident),
    /// `%x`: a value, or the op a pattern bound to `%x`.
    Value(ValueRef),
    /// `$x`: a captured attribute or computed constant.
    Capture(Ident),
}

/// `exists(%s = pd_op.scale_(%m, _) in optimize, pd_op.set_value_with_tensor_(%s, ..))`:
/// whether the program has ops matching these patterns, given what the rule's match bound.
/// Variables the match bound keep their value; the others are local to the `exists`. The
/// patterns must share a value with the match (checked by the resolver), so they are found
/// through def/use edges, never by a scan. `not exists(...)` is the absence guard.
#[derive(Debug, Clone, PartialEq)]
pub struct Exists {
    pub patterns: Vec<OpPattern>,
    pub span: Span,
}

impl crate::value::expr::Spanned for Var {
    fn span(&self) -> Span {
        match self {
            Var::Bare(i) | Var::Capture(i) => i.span,
            Var::Value(v) => v.span,
        }
    }
}

impl crate::value::expr::Spanned for Ident {
    fn span(&self) -> Span {
        self.span
    }
}

impl crate::value::expr::Spanned for Build {
    fn span(&self) -> Span {
        self.span
    }
}

impl crate::value::expr::Spanned for Exists {
    fn span(&self) -> Span {
        self.span
    }
}

impl crate::value::expr::Names for Syntax {
    type Var = Var;
    /// A call names its function as written (`name`, `dtype`, `shape`, `uses`, ...).
    type Callee = Ident;
    type Build = Build;
    type Exists = Exists;

    fn payload<'a>(p: crate::value::expr::Payload<'a, Self>, f: &mut dyn FnMut(&'a Expr)) {
        match p {
            crate::value::expr::Payload::Build(b) => b.exprs(f),
            crate::value::expr::Payload::Exists(x) => x.patterns.iter().for_each(|p| p.exprs(f)),
        }
    }

    fn payload_mut(p: crate::value::expr::PayloadMut<'_, Self>, f: &mut dyn FnMut(&mut Expr)) {
        match p {
            crate::value::expr::PayloadMut::Build(b) => b.exprs_mut(f),
            crate::value::expr::PayloadMut::Exists(x) => {
                x.patterns.iter_mut().for_each(|p| p.exprs_mut(f))
            }
        }
    }
}

impl OpPattern {
    /// The expressions of the pattern and its nested patterns: attribute values it tests.
    pub fn exprs<'a>(&'a self, f: &mut dyn FnMut(&'a Expr)) {
        for a in &self.attrs {
            if let AttrPatVal::Equals(e) = &a.val {
                f(e)
            }
        }
        for a in &self.args {
            if let ValPat::Op(p) = &a.pat {
                p.exprs(f)
            }
        }
    }

    /// [`OpPattern::exprs`], mutably.
    pub fn exprs_mut(&mut self, f: &mut dyn FnMut(&mut Expr)) {
        for a in &mut self.attrs {
            if let AttrPatVal::Equals(e) = &mut a.val {
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
    /// Its operands, attribute values and result types, in source order.
    pub fn exprs<'a>(&'a self, f: &mut dyn FnMut(&'a Expr)) {
        self.args.iter().for_each(|a| f(&a.value));
        self.attrs.iter().for_each(|(_, e)| f(e));
        self.ty.iter().for_each(f);
    }

    /// [`Build::exprs`], mutably.
    pub fn exprs_mut(&mut self, f: &mut dyn FnMut(&mut Expr)) {
        self.args.iter_mut().for_each(|a| f(&mut a.value));
        self.attrs.iter_mut().for_each(|(_, e)| f(e));
        self.ty.iter_mut().for_each(f);
    }
}

/// `%a = pd_op.add_(%m, %g) {grad_merge_add: true, op_role: backward}`. The attribute block is
/// required (possibly `{}`): what a rule builds is exactly what gets printed.
#[derive(Debug, Clone, PartialEq)]
pub struct Build {
    pub bind: Option<Ident>,
    pub op: OpName,
    pub args: Vec<BuildArg>,
    pub attrs: Vec<(Ident, Expr)>,
    /// `-> type(%x)`, `-> tensor<4xf32>`, `-> like(%o)`, `-> [t1, t2]`: the result types, when
    /// the rule gives them (else the dialect's result rule derives them).
    pub ty: Option<Expr>,
    pub span: Span,
}

/// An operand of a built op, positional or named (`x: %m`).
#[derive(Debug, Clone, PartialEq)]
pub struct BuildArg {
    pub operand: Option<Ident>,
    pub value: Expr,
}

/// Where an action puts new or moved ops.
#[derive(Debug, Clone, PartialEq)]
pub enum InsertPoint {
    /// `after %v`: right after the op defining `%v` (or the op bound to `%v`); at the start of
    /// the block when `%v` is a block argument.
    After(Expr),
    /// `before %o`.
    Before(Expr),
    /// `at end of optimize`: after the last op of that stage.
    StageEnd(Ident),
    /// `at start of optimize`: before the first op of that stage.
    StageStart(Ident),
    /// `at end of region N of %o` / `into region N of %o`: the end of the block of region N of
    /// the op `%o` names (`pd_op.if` has regions 0 and 1, `pd_op.while` region 0).
    RegionEnd { op: Expr, index: u32, span: Span },
}

/// What to rewire in `in %o: TARGET := value;`.
#[derive(Debug, Clone, PartialEq)]
pub enum OperandSel {
    /// An operand name from the dialect table (`grad`).
    Name(Ident),
    /// Every operand of `%o` that currently is this value.
    Value(ValueRef),
}

#[derive(Debug, Clone, PartialEq)]
pub enum Action {
    /// `let $x = expr;`, or `let %s = BUILD;` (`value` an `Expr::Build`): an op built where
    /// `%s` is first used. The latter never reaches the resolver: `rules::let_build`
    /// substitutes it into that first use when the file is loaded.
    Let {
        name: Ident,
        value: Expr,
        span: Span,
    },
    /// `state %m = "name" : type init pd_op.full() {...};` — a persistable buffer: a `^kw:`
    /// argument of main plus an initializer (and its publication under the name) in startup.
    /// When a buffer of that name already exists it is reused.
    State {
        bind: Ident,
        name: Expr,
        ty: Expr,
        init: Build,
        span: Span,
    },
    /// `after %g: pd_op.add_(...) {...};` and the other insertion points.
    Insert {
        at: InsertPoint,
        build: Build,
        span: Span,
    },
    /// `replace %x with expr;`: every use; `replace %x with expr for users in optimize;`: only
    /// the uses by ops of that stage.
    Replace {
        value: Expr,
        with: Expr,
        only_in_stage: Option<Ident>,
        span: Span,
    },
    /// `in %o: grad := expr;`: only in one op.
    SetOperand {
        op: ValueRef,
        target: OperandSel,
        value: Expr,
        span: Span,
    },
    /// `in %c: append %n;`: a variadic op gains a last operand.
    AppendOperand {
        op: ValueRef,
        value: Expr,
        span: Span,
    },
    /// `erase %o;`
    Erase { op: ValueRef, span: Span },
    /// `move %o to end of optimize;` (moving to a stage also gives the op that stage's role).
    Move {
        op: ValueRef,
        to: InsertPoint,
        span: Span,
    },
    /// `move optimize ops into region 0 of %if;`: every op of the stage in the top block, in
    /// program order.
    MoveStage {
        stage: Ident,
        to: InsertPoint,
        span: Span,
    },
    /// `set %o {key: expr, ...};`
    SetAttrs {
        op: ValueRef,
        attrs: Vec<(Ident, Expr)>,
        span: Span,
    },
    /// `if cond { ... } else { ... }` — evaluated per match.
    If {
        cond: Expr,
        then: Vec<Action>,
        els: Vec<Action>,
        span: Span,
    },
    /// `error "message";`: stop with this message, pointing at the matched op.
    Error { message: StrLit, span: Span },
}

impl Action {
    pub fn span(&self) -> Span {
        match self {
            Action::Let { span, .. }
            | Action::State { span, .. }
            | Action::Insert { span, .. }
            | Action::Replace { span, .. }
            | Action::SetOperand { span, .. }
            | Action::AppendOperand { span, .. }
            | Action::Erase { span, .. }
            | Action::Move { span, .. }
            | Action::MoveStage { span, .. }
            | Action::SetAttrs { span, .. }
            | Action::If { span, .. }
            | Action::Error { span, .. } => *span,
        }
    }
}
