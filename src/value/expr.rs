//! The rule language's one expression tree, generic over what its names resolve to.
//!
//! An expression is written once by the parser ([`crate::rules::ast::Expr`], names as the
//! author wrote them), resolved once at load for the structural engine
//! ([`crate::rules::compiled::Expr`], parameters as values, variables as slots, calls as
//! builtins), or for the e-graph ([`crate::egraph::Expr`], whose leaves read an e-graph match).
//! All three are this tree: only its leaves, callees and the two payloads that hold patterns or
//! ops (`exists(...)`, an inline build) differ, and a [`Names`] type says which (egglog's
//! `GenericExpr<Head, Leaf>`). It lives here, beside the values and operators, because the rule
//! language and both engines use it. So the shape of an expression (what
//! an operator, an `if`, a list or an interpolated string is) lives here once, and so do the
//! walks every pass needs: [`Expr::span`], the direct sub-expressions ([`Expr::children`],
//! [`Expr::children_mut`]) and the pre-order visits ([`Expr::visit`], [`Expr::visit_mut`]),
//! which go into builds and `exists` patterns through [`Names::payload`] and
//! [`Names::payload_mut`]; and the one walk from a tree of one kind of names to another,
//! [`Expr::map`] (how the loader's constants are lowered; the resolver, which infers each
//! node's type as it lowers it, is a walk of its own), which copies every operator, literal,
//! span and shape and asks a [`MapNames`] only for what differs. A pass that needs another order or
//! stops early writes its own recursion over `children`.

use crate::value::operators::{BinOp, Span, UnOp};
use crate::value::Val;
use std::fmt::Debug;

/// Something with a place in a rule file.
pub trait Spanned {
    fn span(&self) -> Span;
}

/// What an expression's names are: the parser's ([`crate::rules::ast::Syntax`]), the structural
/// lowering's ([`crate::rules::compiled::Lowered`]) or the e-graph's ([`crate::egraph::pattern::Guard`]).
pub trait Names: Sized + Clone + Debug {
    /// A variable or name: `%x`, `$x`, a bare name; or its slot once lowered.
    type Var: Clone + Debug + Spanned;
    /// The function a call names.
    type Callee: Clone + Debug + Spanned;
    /// An op built inline.
    type Build: Clone + Debug + Spanned;
    /// `exists(patterns)`.
    type Exists: Clone + Debug + Spanned;

    /// The expressions a build or an `exists` holds (operands, attribute values, attribute tests
    /// of its patterns), in source order.
    fn payload<'a>(p: Payload<'a, Self>, f: &mut dyn FnMut(&'a Expr<Self>));
    /// [`Names::payload`], mutably.
    fn payload_mut(p: PayloadMut<'_, Self>, f: &mut dyn FnMut(&mut Expr<Self>));
}

/// A node that holds expressions outside the tree's own children.
pub enum Payload<'a, N: Names> {
    Build(&'a N::Build),
    Exists(&'a N::Exists),
}

/// [`Payload`], mutably.
pub enum PayloadMut<'a, N: Names> {
    Build(&'a mut N::Build),
    Exists(&'a mut N::Exists),
}

/// A piece of an interpolated string (`"{name(%p)}@GRAD@MERGE"`).
#[derive(Debug, Clone)]
pub enum StrPart<N: Names> {
    Lit(String),
    Expr(Expr<N>),
}

impl<N: Names> PartialEq for StrPart<N>
where
    Expr<N>: PartialEq,
{
    fn eq(&self, other: &Self) -> bool {
        match (self, other) {
            (StrPart::Lit(a), StrPart::Lit(b)) => a == b,
            (StrPart::Expr(a), StrPart::Expr(b)) => a == b,
            _ => false,
        }
    }
}

/// An expression of the rule language.
#[derive(Debug, Clone)]
pub enum Expr<N: Names> {
    /// A number, bool or place as written; once lowered also a parameter, stage or dtype.
    Lit(Val, Span),
    /// A string with `{expr}` interpolations (a plain string has one literal piece or none).
    Str(Vec<StrPart<N>>, Span),
    Var(N::Var),
    List(Vec<Expr<N>>, Span),
    /// A function applied to its arguments: a builtin or a program query.
    Call {
        func: N::Callee,
        args: Vec<Expr<N>>,
        span: Span,
    },
    Unary {
        op: UnOp,
        e: Box<Expr<N>>,
        span: Span,
    },
    Binary {
        op: BinOp,
        l: Box<Expr<N>>,
        r: Box<Expr<N>>,
        span: Span,
    },
    If {
        c: Box<Expr<N>>,
        t: Box<Expr<N>>,
        e: Box<Expr<N>>,
        span: Span,
    },
    /// An op to build (in an action, or inline as an operand of another build).
    Build(Box<N::Build>),
    /// Whether ops matching these patterns exist around the match.
    Exists(N::Exists),
}

impl<N: Names> PartialEq for Expr<N>
where
    N::Var: PartialEq,
    N::Callee: PartialEq,
    N::Build: PartialEq,
    N::Exists: PartialEq,
{
    fn eq(&self, other: &Self) -> bool {
        use Expr::*;
        match (self, other) {
            (Lit(a, s), Lit(b, t)) => a == b && s == t,
            (Str(a, s), Str(b, t)) => a == b && s == t,
            (Var(a), Var(b)) => a == b,
            (List(a, s), List(b, t)) => a == b && s == t,
            (
                Call { func, args, span },
                Call {
                    func: g,
                    args: a2,
                    span: s2,
                },
            ) => func == g && args == a2 && span == s2,
            (
                Unary { op, e, span },
                Unary {
                    op: o,
                    e: f,
                    span: s,
                },
            ) => op == o && e == f && span == s,
            (
                Binary { op, l, r, span },
                Binary {
                    op: o,
                    l: l2,
                    r: r2,
                    span: s,
                },
            ) => op == o && l == l2 && r == r2 && span == s,
            (
                If { c, t, e, span },
                If {
                    c: c2,
                    t: t2,
                    e: e2,
                    span: s,
                },
            ) => c == c2 && t == t2 && e == e2 && span == s,
            (Build(a), Build(b)) => a == b,
            (Exists(a), Exists(b)) => a == b,
            _ => false,
        }
    }
}

/// What [`Expr::map`] asks when it turns an `Expr<A>` into an `Expr<B>`: what a leaf, a callee,
/// a build and an `exists` become. Each is asked in source order, so a mapper that numbers
/// names as it meets them numbers them as the text reads.
pub trait MapNames<A: Names, B: Names> {
    type Error;

    /// The whole of a node the mapper lowers itself, or `None` to have it mapped node by node
    /// (a call whose argument is not an expression: `uses(%v in optimize)`).
    fn node(&mut self, _e: &Expr<A>) -> Option<Result<Expr<B>, Self::Error>> {
        None
    }
    /// A name; it may become any expression (a parameter becomes its value).
    fn var(&mut self, v: &A::Var) -> Result<Expr<B>, Self::Error>;
    fn callee(&mut self, f: &A::Callee) -> Result<B::Callee, Self::Error>;
    fn build(&mut self, b: &A::Build) -> Result<B::Build, Self::Error>;
    fn exists(&mut self, x: &A::Exists) -> Result<B::Exists, Self::Error>;
}

impl<A: Names> Expr<A> {
    /// This tree with its names mapped by `m`: the same operators, literals and spans.
    pub fn map<B: Names, M: MapNames<A, B>>(&self, m: &mut M) -> Result<Expr<B>, M::Error> {
        if let Some(mapped) = m.node(self) {
            return mapped;
        }
        let boxed = |e: &Expr<A>, m: &mut M| e.map(m).map(Box::new);
        Ok(match self {
            Expr::Lit(v, s) => Expr::Lit(v.clone(), *s),
            Expr::Str(parts, s) => Expr::Str(map_parts(parts, m)?, *s),
            Expr::Var(v) => m.var(v)?,
            Expr::List(v, s) => Expr::List(map_all(v, m)?, *s),
            Expr::Call { func, args, span } => Expr::Call {
                func: m.callee(func)?,
                args: map_all(args, m)?,
                span: *span,
            },
            Expr::Unary { op, e, span } => Expr::Unary {
                op: *op,
                e: boxed(e, m)?,
                span: *span,
            },
            Expr::Binary { op, l, r, span } => Expr::Binary {
                op: *op,
                l: boxed(l, m)?,
                r: boxed(r, m)?,
                span: *span,
            },
            Expr::If { c, t, e, span } => Expr::If {
                c: boxed(c, m)?,
                t: boxed(t, m)?,
                e: boxed(e, m)?,
                span: *span,
            },
            Expr::Build(b) => Expr::Build(Box::new(m.build(b)?)),
            Expr::Exists(x) => Expr::Exists(m.exists(x)?),
        })
    }
}

/// [`Expr::map`] over each expression of `v`, in order.
pub fn map_all<A: Names, B: Names, M: MapNames<A, B>>(
    v: &[Expr<A>],
    m: &mut M,
) -> Result<Vec<Expr<B>>, M::Error> {
    v.iter().map(|e| e.map(m)).collect()
}

/// [`Expr::map`] over the pieces of an interpolated string.
pub fn map_parts<A: Names, B: Names, M: MapNames<A, B>>(
    parts: &[StrPart<A>],
    m: &mut M,
) -> Result<Vec<StrPart<B>>, M::Error> {
    parts
        .iter()
        .map(|p| {
            Ok(match p {
                StrPart::Lit(l) => StrPart::Lit(l.clone()),
                StrPart::Expr(e) => StrPart::Expr(e.map(m)?),
            })
        })
        .collect()
}

impl<N: Names> Expr<N> {
    pub fn span(&self) -> Span {
        match self {
            Expr::Lit(_, s) | Expr::Str(_, s) | Expr::List(_, s) => *s,
            Expr::Var(v) => v.span(),
            Expr::Call { span, .. }
            | Expr::Unary { span, .. }
            | Expr::Binary { span, .. }
            | Expr::If { span, .. } => *span,
            Expr::Build(b) => b.span(),
            Expr::Exists(x) => x.span(),
        }
    }

    /// The expressions directly below this one, in source order: operands, interpolated
    /// pieces, and what a build or an `exists` holds.
    pub fn children<'a>(&'a self, f: &mut dyn FnMut(&'a Expr<N>)) {
        match self {
            Expr::Lit(..) | Expr::Var(_) => {}
            Expr::Str(parts, _) => {
                for p in parts {
                    if let StrPart::Expr(e) = p {
                        f(e)
                    }
                }
            }
            Expr::List(v, _) | Expr::Call { args: v, .. } => v.iter().for_each(f),
            Expr::Unary { e, .. } => f(e),
            Expr::Binary { l, r, .. } => {
                f(l);
                f(r)
            }
            Expr::If { c, t, e, .. } => {
                f(c);
                f(t);
                f(e)
            }
            Expr::Build(b) => N::payload(Payload::Build(&**b), f),
            Expr::Exists(x) => N::payload(Payload::Exists(x), f),
        }
    }

    /// [`Expr::children`], mutably.
    pub fn children_mut(&mut self, f: &mut dyn FnMut(&mut Expr<N>)) {
        match self {
            Expr::Lit(..) | Expr::Var(_) => {}
            Expr::Str(parts, _) => {
                for p in parts {
                    if let StrPart::Expr(e) = p {
                        f(e)
                    }
                }
            }
            Expr::List(v, _) | Expr::Call { args: v, .. } => v.iter_mut().for_each(f),
            Expr::Unary { e, .. } => f(e),
            Expr::Binary { l, r, .. } => {
                f(l);
                f(r)
            }
            Expr::If { c, t, e, .. } => {
                f(c);
                f(t);
                f(e)
            }
            Expr::Build(b) => N::payload_mut(PayloadMut::Build(&mut **b), f),
            Expr::Exists(x) => N::payload_mut(PayloadMut::Exists(x), f),
        }
    }

    /// Every expression of the tree, this one first (pre-order).
    pub fn visit<'a>(&'a self, f: &mut dyn FnMut(&'a Expr<N>)) {
        f(self);
        self.children(&mut |c| c.visit(f));
    }

    /// [`Expr::visit`], mutably: a node is visited before its children, so `f` may replace it.
    pub fn visit_mut(&mut self, f: &mut dyn FnMut(&mut Expr<N>)) {
        f(self);
        self.children_mut(&mut |c| c.visit_mut(f));
    }

    /// Whether some expression of the tree satisfies `p`.
    pub fn any(&self, p: &mut dyn FnMut(&Expr<N>) -> bool) -> bool {
        if p(self) {
            return true;
        }
        let mut found = false;
        self.children(&mut |c| found = found || c.any(p));
        found
    }

    /// The value of a literal expression (a number, possibly negated, a bool, a string without
    /// interpolation, or a list of literals); `None` for anything else.
    pub fn literal(&self) -> Option<Val> {
        Some(match self {
            Expr::Lit(v, _) => v.clone(),
            Expr::Str(parts, _) => Val::Str(plain(parts)?),
            Expr::List(v, _) => Val::List(v.iter().map(Expr::literal).collect::<Option<_>>()?),
            Expr::Unary {
                op: UnOp::Neg, e, ..
            } => match e.literal()? {
                Val::Int(i) => Val::Int(i.checked_neg()?),
                Val::Float(f) => Val::Float(-f),
                _ => return None,
            },
            _ => return None,
        })
    }
}

/// The text of a string's pieces when none is interpolated.
pub fn plain<N: Names>(parts: &[StrPart<N>]) -> Option<String> {
    let mut s = String::new();
    for p in parts {
        match p {
            StrPart::Lit(l) => s.push_str(l),
            StrPart::Expr(_) => return None,
        }
    }
    Some(s)
}
