//! Equational rules as data: `lhs => rhs where guard`, the types the rule language compiles to.
//!
//! A rule says that wherever `lhs` matches a pure value, `rhs` denotes the same value. The
//! e-graph adds `rhs` to the matched e-class; extraction later picks the cheaper form. Nothing
//! here refers to a [`Context`](crate::ir::Context): names are strings and types are
//! [`Type`]s, so rules can be read and checked before any program is parsed; they are resolved
//! against a module when the e-graph runs (`rewrite.rs`).
//!
//! # Left-hand side
//! - [`Pattern::Var`] `%x` matches any value and binds its e-class; a second occurrence of the
//!   same variable must be the same e-class.
//! - [`Pattern::Op`] matches a pure op by name and arity, with attribute tests
//!   ([`AttrTest`]: equal to a constant, captured into a [`Cap`], absent). A [`Label`] names the
//!   matched op so the right-hand side can copy its attributes or result types.
//! - [`Pattern::Proj`] matches result `index` of a multi-result op.
//!
//! Attributes are tested by reading the matched node's interned dictionary (a custom
//! `egg::Searcher`, see `rewrite.rs`), not encoded as e-graph children (Tensat's way): Paddle ops
//! carry 5–10 attributes each, almost all irrelevant to a rule (`op_role`, `stop_gradient`,
//! `struct_name`), and as children they would multiply the e-graph's size and make every rule
//! spell them out or wildcard them.
//!
//! # Guards
//! An [`Expr`] over captures, `dtype(%x)`, `type(%x)`, `const(%x)` (the scalar a value is known
//! to equal), attributes of labelled ops, literals, arithmetic and comparisons. A guard that
//! cannot be evaluated (a constant that is not known, a missing attribute, a string times a
//! number) is false: the rule does not fire. The rule language's checker is expected to reject
//! ill-typed guards before anything runs; this is the run-time backstop.
//!
//! # Right-hand side
//! [`Build`]: a bound variable, or a new op whose attributes start from a labelled op's
//! dictionary (or empty), with keys set to computed [`Expr`]s or removed, and whose result types
//! are inferred from the dialect table, copied, or given. An equation whose two sides have
//! different types is refused at run time (counted, never applied).
//!
//! `subsume: true` means the right-hand side *replaces* the matched node: the node is not matched
//! again and never extracted (Cranelift's `subsume`), which keeps saturation small for
//! rules that only ever simplify.
//!
//! # Writing rules in Rust
//! The e-graph's tests write the rules of `rules/canonicalize.rw` this way (`tests/mod.rs`:
//! `cast_same_dtype` is `pd_op.cast(%x) {dtype: d} where dtype(%x) == d => %x`).

use crate::ir::{Attr, Type};
use crate::value::expr::{Names, Payload, PayloadMut, Spanned};
use crate::value::operators::UnOp;

/// A value variable (`%x`): binds an e-class.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Var(pub u32);

/// A captured attribute (`d`, `s1`).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Cap(pub u32);

/// A name for a left-hand-side op, so the right-hand side can copy its attributes or types.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Label(pub u32);

/// A left-hand-side term.
#[derive(Clone, Debug, PartialEq)]
pub enum Pattern {
    /// Any value; binds the variable (or must equal its earlier binding).
    Var(Var),
    /// A pure op (single result, or the tuple of a multi-result op).
    Op(Box<OpPattern>),
    /// Result `index` of a multi-result op.
    Proj { index: u32, op: Box<OpPattern> },
}

/// An op in a pattern.
#[derive(Clone, Debug, PartialEq)]
pub struct OpPattern {
    /// Full op name (`pd_op.scale`).
    pub name: String,
    /// One pattern per operand; the arity must match exactly.
    pub operands: Vec<Pattern>,
    /// Attribute tests, all of which must hold.
    pub attrs: Vec<(String, AttrTest)>,
    pub label: Option<Label>,
}

/// A test on one attribute of a matched op.
#[derive(Clone, Debug, PartialEq)]
pub enum AttrTest {
    /// Equal to a constant. Numbers compare by value (`0` matches `0.0`), dtypes by name.
    Eq(Attr),
    /// The op has the attribute; its value is captured (a repeated capture must be equal).
    Capture(Cap),
    /// The op does not have the attribute.
    Absent,
}

/// A value a guard or a computed attribute evaluates to: the rule language's one value type,
/// so both engines' guards compute with the same values (see `rules::eval`).
pub use crate::value::Val as Value;

/// Binary operators of guard and attribute expressions: the rule language's, evaluated by
/// `rules::eval::binary_values` in both engines.
pub use crate::value::operators::BinOp;

/// The names of an e-graph guard or computed attribute: the rule language's expression tree
/// ([`crate::value::expr`]) whose leaves read the match ([`Read`]); it has no calls, builds or
/// `exists` (the lowering turns the queries an equational rule may use into reads) and no
/// spans (its errors are never shown: a guard that cannot be evaluated is false).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Guard;

/// A guard or computed-attribute expression.
pub type Expr = crate::value::expr::Expr<Guard>;

/// The span of every node of an e-graph [`Expr`].
pub const NO_SPAN: (usize, usize) = (0, 0);

/// What a leaf of an e-graph expression reads from the match.
#[derive(Clone, Debug, PartialEq)]
pub enum Read {
    /// A captured attribute.
    Cap(Cap),
    /// The element type of a bound value.
    DType(Var),
    /// The type of a bound value.
    Type(Var),
    /// The scalar a bound value is known to equal (`pd_op.full {value:..}`).
    Const(Var),
    /// Attribute `key` of a labelled op (undefined when absent).
    Attr(Label, String),
}

/// What an e-graph expression cannot hold (a call, a build, an `exists`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Never {}

impl Spanned for Read {
    fn span(&self) -> (usize, usize) {
        NO_SPAN
    }
}

impl Spanned for Never {
    fn span(&self) -> (usize, usize) {
        match *self {}
    }
}

impl Names for Guard {
    type Var = Read;
    type Callee = Never;
    type Build = Never;
    type Exists = Never;

    fn payload<'a>(p: Payload<'a, Self>, _: &mut dyn FnMut(&'a Expr)) {
        match p {
            Payload::Build(n) | Payload::Exists(n) => match *n {},
        }
    }

    fn payload_mut(p: PayloadMut<'_, Self>, _: &mut dyn FnMut(&mut Expr)) {
        match p {
            PayloadMut::Build(n) | PayloadMut::Exists(n) => match *n {},
        }
    }
}

/// A right-hand-side term.
#[derive(Clone, Debug, PartialEq)]
pub enum Build {
    /// The e-class bound to a left-hand-side variable.
    Var(Var),
    /// A new op (single result, or a tuple when used under [`Build::Proj`]).
    Op(Box<OpBuild>),
    /// Result `index` of a new multi-result op.
    Proj { index: u32, op: Box<OpBuild> },
}

/// A new op on a right-hand side.
#[derive(Clone, Debug, PartialEq)]
pub struct OpBuild {
    pub name: String,
    pub operands: Vec<Build>,
    /// Start from this labelled op's attribute dictionary (else from `{}`).
    pub attrs_from: Option<Label>,
    /// Attributes to set (in sorted position when new), evaluated after matching.
    pub set: Vec<(String, Expr)>,
    /// Attributes to remove.
    pub remove: Vec<String>,
    pub types: TypesBuild,
}

/// How a new op's result types are found.
#[derive(Clone, Debug, PartialEq)]
pub enum TypesBuild {
    /// From the dialect table's result rule (`SameAs(0)`, `CastOf(0)`, shape/dtype attributes).
    Infer,
    /// The types of a bound value.
    SameAs(Var),
    /// The result types of a labelled op.
    Of(Label),
    Explicit(Vec<Type>),
}

/// One equational rule.
#[derive(Clone, Debug, PartialEq)]
pub struct EqRule {
    /// Unique name, used in statistics and traces.
    pub name: String,
    /// Where the rule was written (`rules/canonicalize.rw:12`), for statistics and traces.
    pub origin: Option<String>,
    /// Must be an op or a projection (a bare variable would match every value).
    pub lhs: Pattern,
    /// Conjunction of guards.
    pub guards: Vec<Expr>,
    pub rhs: Build,
    /// The right-hand side replaces the matched node (see the module docs).
    pub subsume: bool,
}

// ---- builders (for rules written in Rust) ------------------------------------------------

impl From<Var> for Pattern {
    fn from(v: Var) -> Pattern {
        Pattern::Var(v)
    }
}

impl From<OpPattern> for Pattern {
    fn from(op: OpPattern) -> Pattern {
        Pattern::Op(Box::new(op))
    }
}

impl OpPattern {
    pub fn new(name: &str, operands: impl IntoIterator<Item = Pattern>) -> Self {
        OpPattern {
            name: name.to_string(),
            operands: operands.into_iter().collect(),
            attrs: Vec::new(),
            label: None,
        }
    }

    pub fn attr(mut self, key: &str, test: AttrTest) -> Self {
        self.attrs.push((key.to_string(), test));
        self
    }

    pub fn label(mut self, l: Label) -> Self {
        self.label = Some(l);
        self
    }
}

impl From<Var> for Build {
    fn from(v: Var) -> Build {
        Build::Var(v)
    }
}

impl From<OpBuild> for Build {
    fn from(op: OpBuild) -> Build {
        Build::Op(Box::new(op))
    }
}

impl OpBuild {
    pub fn new(name: &str, operands: impl IntoIterator<Item = Build>) -> Self {
        OpBuild {
            name: name.to_string(),
            operands: operands.into_iter().collect(),
            attrs_from: None,
            set: Vec::new(),
            remove: Vec::new(),
            types: TypesBuild::Infer,
        }
    }

    pub fn attrs_from(mut self, l: Label) -> Self {
        self.attrs_from = Some(l);
        self
    }

    pub fn set(mut self, key: &str, e: Expr) -> Self {
        self.set.push((key.to_string(), e));
        self
    }

    pub fn types(mut self, t: TypesBuild) -> Self {
        self.types = t;
        self
    }
}

/// Builders of e-graph expressions (for the lowering and for rules written in Rust).
impl Expr {
    pub fn lit(v: Value) -> Expr {
        Expr::Lit(v, NO_SPAN)
    }
    pub fn read(r: Read) -> Expr {
        Expr::Var(r)
    }
    pub fn unary(op: UnOp, e: Expr) -> Expr {
        Expr::Unary {
            op,
            e: Box::new(e),
            span: NO_SPAN,
        }
    }
    pub fn bin(self, op: BinOp, rhs: Expr) -> Expr {
        Expr::Binary {
            op,
            l: Box::new(self),
            r: Box::new(rhs),
            span: NO_SPAN,
        }
    }
    pub fn int(i: i64) -> Expr {
        Expr::lit(Value::Int(i))
    }
    pub fn float(f: f64) -> Expr {
        Expr::lit(Value::Float(f))
    }
    pub fn cap(c: Cap) -> Expr {
        Expr::read(Read::Cap(c))
    }
    pub fn dtype(v: Var) -> Expr {
        Expr::read(Read::DType(v))
    }
    pub fn konst(v: Var) -> Expr {
        Expr::read(Read::Const(v))
    }
    #[allow(clippy::should_implement_trait)]
    pub fn eq(self, rhs: Expr) -> Expr {
        self.bin(BinOp::Eq, rhs)
    }
    #[allow(clippy::should_implement_trait)]
    pub fn mul(self, rhs: Expr) -> Expr {
        self.bin(BinOp::Mul, rhs)
    }
    #[allow(clippy::should_implement_trait)]
    pub fn add(self, rhs: Expr) -> Expr {
        self.bin(BinOp::Add, rhs)
    }
}

impl EqRule {
    pub fn new(name: &str, lhs: impl Into<Pattern>, rhs: impl Into<Build>) -> Self {
        EqRule {
            name: name.to_string(),
            origin: None,
            lhs: lhs.into(),
            guards: Vec::new(),
            rhs: rhs.into(),
            subsume: false,
        }
    }

    pub fn guard(mut self, e: Expr) -> Self {
        self.guards.push(e);
        self
    }

    pub fn subsume(mut self, yes: bool) -> Self {
        self.subsume = yes;
        self
    }

    pub fn origin(mut self, o: &str) -> Self {
        self.origin = Some(o.to_string());
        self
    }

    /// Checks the rule's shape: the left-hand side is an op, every variable, capture and label
    /// used in guards and on the right is bound on the left, and labels are unique.
    /// (Op names and attribute types are the rule language's checker's job.)
    pub fn check(&self) -> Result<(), String> {
        if let Pattern::Var(_) = self.lhs {
            return Err(format!(
                "rule `{}`: the left-hand side must be an op, not a variable",
                self.name
            ));
        }
        let mut b = Bound::default();
        b.pattern(&self.lhs)
            .map_err(|e| format!("rule `{}`: {e}", self.name))?;
        for g in &self.guards {
            b.expr(g)
                .map_err(|e| format!("rule `{}`: {e}", self.name))?;
        }
        b.build(&self.rhs)
            .map_err(|e| format!("rule `{}`: {e}", self.name))
    }
}

#[derive(Default)]
struct Bound {
    vars: Vec<Var>,
    caps: Vec<Cap>,
    labels: Vec<Label>,
}

impl Bound {
    fn pattern(&mut self, p: &Pattern) -> Result<(), String> {
        match p {
            Pattern::Var(v) => {
                if !self.vars.contains(v) {
                    self.vars.push(*v);
                }
                Ok(())
            }
            Pattern::Op(op) | Pattern::Proj { op, .. } => {
                if let Some(l) = op.label {
                    if self.labels.contains(&l) {
                        return Err(format!("label {} is used twice", l.0));
                    }
                    self.labels.push(l);
                }
                for (_, t) in &op.attrs {
                    if let AttrTest::Capture(c) = t {
                        if !self.caps.contains(c) {
                            self.caps.push(*c);
                        }
                    }
                }
                op.operands.iter().try_for_each(|o| self.pattern(o))
            }
        }
    }

    fn var(&self, v: Var) -> Result<(), String> {
        if self.vars.contains(&v) {
            Ok(())
        } else {
            Err(format!(
                "variable {} is not bound on the left-hand side",
                v.0
            ))
        }
    }

    fn label(&self, l: Label) -> Result<(), String> {
        if self.labels.contains(&l) {
            Ok(())
        } else {
            Err(format!(
                "label {} is not defined on the left-hand side",
                l.0
            ))
        }
    }

    /// Every read of `e` names something the left-hand side binds.
    fn expr(&self, e: &Expr) -> Result<(), String> {
        let mut r = Ok(());
        e.visit(&mut |x| {
            if r.is_err() {
                return;
            }
            r = match x {
                Expr::Var(Read::Cap(c)) if !self.caps.contains(c) => Err(format!(
                    "capture {} is not bound on the left-hand side",
                    c.0
                )),
                Expr::Var(Read::DType(v) | Read::Type(v) | Read::Const(v)) => self.var(*v),
                Expr::Var(Read::Attr(l, _)) => self.label(*l),
                _ => Ok(()),
            }
        });
        r
    }

    fn build(&self, b: &Build) -> Result<(), String> {
        match b {
            Build::Var(v) => self.var(*v),
            Build::Op(op) | Build::Proj { op, .. } => {
                if let Some(l) = op.attrs_from {
                    self.label(l)?;
                }
                match &op.types {
                    TypesBuild::SameAs(v) => self.var(*v)?,
                    TypesBuild::Of(l) => self.label(*l)?,
                    TypesBuild::Infer | TypesBuild::Explicit(_) => {}
                }
                for (_, e) in &op.set {
                    self.expr(e)?;
                }
                op.operands.iter().try_for_each(|o| self.build(o))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn check_reports_unbound_names() {
        let ok = EqRule::new(
            "r",
            OpPattern::new("pd_op.relu", [Var(0).into()]),
            Build::Var(Var(0)),
        );
        assert!(ok.check().is_ok());
        let bad = EqRule::new(
            "r",
            OpPattern::new("pd_op.relu", [Var(0).into()]),
            Build::Var(Var(1)),
        );
        assert!(bad.check().unwrap_err().contains("variable 1"));
        let bad = ok.clone().guard(Expr::cap(Cap(3)).eq(Expr::int(1)));
        assert!(bad.check().unwrap_err().contains("capture 3"));
        let bad = EqRule::new("r", Var(0), Build::Var(Var(0)));
        assert!(bad.check().unwrap_err().contains("must be an op"));
    }
}
