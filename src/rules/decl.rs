//! Ops a rule file declares (`op NAME(operands) {attributes} -> (results);`) and the one lookup
//! of what the rule language knows about an op: [`OpTable`], declared ops first, then the
//! dialect table.
//!
//! Why: a rule that fuses ops into one Paddle has but irw's table lacks
//! (`pd_op.fused_gemm_epilogue`) must be able to say what that op is — its operand and result
//! names, which result has which operand's type, its attributes with their types and defaults —
//! in the file that builds it, so the file is self-contained (MLIR's IRDL idea). The resolver
//! and the engine then treat the op like one of the table: named operands,
//! result fields, derived result types, attribute values checked at load, defaults filled in.
//! For everything else (effects, verification, the executor) a declared op is an unknown op:
//! kept in order, never merged or removed by the e-graph.
//!
//! Attribute values are checked at load against the types an op's attributes have: a declared
//! op's own, else what the dialect says about the key (`dtype`, `place`, `op_role`, `shape`,
//! the attributes its result rule reads, the type its definition gives the attribute).

use super::ast::{Arity, OpDecl};
use super::ty::Ty;
use super::Val;
use crate::diag::{Diagnostic, SourceFile};
use crate::dialect::{default_attrs, Dialect, Effect, OpSpec, ResultRule};
use indexmap::IndexMap;
use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex, OnceLock};

/// The type of an attribute value, as a declaration writes it (`bool`, `int`, ...).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AttrKind {
    Int,
    Float,
    Bool,
    Str,
    DType,
    Place,
    List,
}

impl AttrKind {
    pub fn from_name(s: &str) -> Option<AttrKind> {
        Some(match s {
            "int" => AttrKind::Int,
            "float" => AttrKind::Float,
            "bool" => AttrKind::Bool,
            "string" | "str" => AttrKind::Str,
            "dtype" => AttrKind::DType,
            "place" => AttrKind::Place,
            "list" => AttrKind::List,
            _ => return None,
        })
    }

    pub fn name(self) -> &'static str {
        match self {
            AttrKind::Int => "int",
            AttrKind::Float => "float",
            AttrKind::Bool => "bool",
            AttrKind::Str => "string",
            AttrKind::DType => "dtype",
            AttrKind::Place => "place",
            AttrKind::List => "list",
        }
    }

    /// The static type of this attribute's values in rule expressions.
    pub fn ty(self) -> Ty {
        match self {
            AttrKind::Int => Ty::Int,
            AttrKind::Float => Ty::Float,
            AttrKind::Bool => Ty::Bool,
            AttrKind::Str => Ty::Str,
            AttrKind::DType => Ty::DType,
            AttrKind::Place => Ty::Place,
            AttrKind::List => Ty::List,
        }
    }

    /// Whether an expression of static type `t` may be this attribute's value (an int is a
    /// fine float; what the checker cannot tell, `Any`, is accepted).
    pub fn accepts(self, t: Ty) -> bool {
        t == Ty::Any
            || matches!(
                (self, t),
                (AttrKind::Int, Ty::Int)
                    | (AttrKind::Float, Ty::Float | Ty::Int)
                    | (AttrKind::Bool, Ty::Bool)
                    | (AttrKind::Str, Ty::Str)
                    | (AttrKind::DType, Ty::DType)
                    | (AttrKind::Place, Ty::Place)
                    | (AttrKind::List, Ty::List)
                    // A stage name is its role number.
                    | (AttrKind::Int, Ty::Stage)
            )
    }

    /// Whether a value is of this kind (a declared default).
    fn holds(self, v: &Val) -> bool {
        matches!(
            (self, v),
            (AttrKind::Int, Val::Int(_))
                | (AttrKind::Float, Val::Float(_) | Val::Int(_))
                | (AttrKind::Bool, Val::Bool(_))
                | (AttrKind::Str, Val::Str(_))
                | (AttrKind::DType, Val::DType(_))
                | (AttrKind::Place, Val::Place(_))
                | (AttrKind::List, Val::List(_))
        )
    }
}

/// One attribute of a declared op: `alpha: f32 = 1.0`.
#[derive(Debug)]
pub struct DeclaredAttr {
    pub key: String,
    /// What values the rule language lets it hold.
    pub kind: AttrKind,
    /// Paddle's type for it, where the declaration says it: what the JSON writer tags its
    /// values with. A kind says it for `bool`, `string`, `dtype` and `place`; `int`, `float`
    /// and `list` do not (Paddle has `int32` and `int64`, ...), so Paddle JSON needs `i32`,
    /// `f32`, `i64[]` and the like there.
    pub paddle: Option<crate::dialect::data::AttrType>,
    pub default: Option<Val>,
}

/// The kind and Paddle type an attribute declared with type `name` has: a kind (`int`,
/// `float`, `bool`, `string`, `dtype`, `place`, `list`) or a Paddle type as the dialect data
/// writes it (`i32`, `i64`, `f32`, `f64`, `str`, `intarray`, `f32[]`, ...).
fn declared_type(name: &str) -> Option<(AttrKind, Option<crate::dialect::data::AttrType>)> {
    use crate::dialect::data::AttrType;
    if let Some(kind) = AttrKind::from_name(name) {
        let paddle = match kind {
            AttrKind::Bool => Some(AttrType::Bool),
            AttrKind::Str => Some(AttrType::Str),
            AttrKind::DType => Some(AttrType::DType),
            AttrKind::Place => Some(AttrType::Place),
            AttrKind::Int | AttrKind::Float | AttrKind::List => None,
        };
        return Some((kind, paddle));
    }
    let t = AttrType::parse(name).filter(|t| !matches!(t, AttrType::Scalar(_)))?;
    Some((of_paddle_type(t)?, Some(t)))
}

/// One declared op.
#[derive(Debug)]
pub struct DeclaredOp {
    /// Its entry, in the dialect table's form (interned for the process: see [`intern`]).
    pub spec: &'static OpSpec,
    /// Per result: the operand whose type it has (`like(x)`), or none (the build gives it).
    pub result_like: Vec<Option<usize>>,
    /// Declared attributes, in order.
    pub attrs: Vec<DeclaredAttr>,
    /// Where it is declared: file index and span.
    pub file: usize,
    pub span: super::Span,
}

/// What the rule language knows about ops: the declared ones of a load, then the dialect.
#[derive(Debug, Clone, Default)]
pub struct OpTable {
    declared: Arc<IndexMap<String, DeclaredOp>>,
}

impl OpTable {
    /// The entry of `name`: a declared op, else the dialect table's.
    pub fn spec(&self, name: &str) -> Option<&'static OpSpec> {
        match self.declared.get(name) {
            Some(d) => Some(d.spec),
            None => Dialect::get().spec(name),
        }
    }

    /// The entry of a quoted name: only a declared op has one.
    pub fn quoted_spec(&self, name: &str) -> Option<&'static OpSpec> {
        self.declared.get(name).map(|d| d.spec)
    }

    pub fn declared(&self, name: &str) -> Option<&DeclaredOp> {
        self.declared.get(name)
    }

    /// The declared ops' attributes whose Paddle type the declaration gives, with it: `(op,
    /// attribute, type)`, for the JSON writer.
    pub fn paddle_types(
        &self,
    ) -> impl Iterator<Item = (&str, &str, crate::dialect::data::AttrType)> + '_ {
        self.declared.iter().flat_map(|(op, d)| {
            d.attrs
                .iter()
                .filter_map(move |a| Some((op.as_str(), a.key.as_str(), a.paddle?)))
        })
    }

    /// The declared attributes whose declaration gives no Paddle type (`int`, `float`,
    /// `list`), with the kind written: what the JSON writer says when it cannot tag them.
    pub fn untyped_kinds(&self) -> impl Iterator<Item = (&str, &str, &'static str)> + '_ {
        self.declared.iter().flat_map(|(op, d)| {
            (d.attrs.iter())
                .filter(|a| a.paddle.is_none())
                .map(move |a| (op.as_str(), a.key.as_str(), a.kind.name()))
        })
    }

    /// The attributes a build of `name` gets when the rule leaves them out: a declared op's
    /// defaults, else the dialect's per-op defaults.
    pub fn defaults(&self, name: &str) -> Vec<(String, Val)> {
        match self.declared.get(name) {
            Some(d) => d
                .attrs
                .iter()
                .filter_map(|a| Some((a.key.clone(), a.default.clone()?)))
                .collect(),
            None => default_attrs(name)
                .into_iter()
                .map(|(k, a)| (k.to_string(), Val::from_attr(a)))
                .collect(),
        }
    }

    /// The type attribute `key` of op `spec` has, when known.
    pub fn attr_kind(&self, spec: &OpSpec, key: &str) -> Option<AttrKind> {
        if let Some(d) = self.declared.get(spec.name) {
            if let Some(a) = d.attrs.iter().find(|a| a.key == key) {
                return Some(a.kind);
            }
        }
        known_attr_kind(spec, key)
    }
}

/// What the dialect says about attribute `key` of `spec`: the keys every op reads the same way,
/// the attributes its result rule reads, and the type its definition gives the attribute.
fn known_attr_kind(spec: &OpSpec, key: &str) -> Option<AttrKind> {
    match key {
        "dtype" => return Some(AttrKind::DType),
        "place" => return Some(AttrKind::Place),
        crate::dialect::ROLE_ATTR => return Some(AttrKind::Int),
        "shape" => return Some(AttrKind::List),
        _ => {}
    }
    match spec.result_rule {
        ResultRule::FromShapeDtypeAttrs if key == "value" => return Some(AttrKind::Float),
        ResultRule::IntArray if key == "value" => return Some(AttrKind::List),
        ResultRule::Dim0Times(_, k) | ResultRule::Dim0Over(_, k) if k == key => {
            return Some(AttrKind::Int)
        }
        _ => {}
    }
    let a = spec.attrs.iter().find(|a| a.name == key)?;
    of_paddle_type(a.ty)
}

/// The kind of a Paddle attribute type, where one kind holds all its values (a `Scalar` of any
/// type does not).
fn of_paddle_type(t: crate::dialect::data::AttrType) -> Option<AttrKind> {
    use crate::dialect::data::{AttrType as A, ScalarType as S};
    Some(match t {
        A::Bool | A::Scalar(S::Bool) => AttrKind::Bool,
        A::I32 | A::I64 | A::Scalar(S::I32 | S::I64) => AttrKind::Int,
        A::F32 | A::F64 | A::Scalar(S::F32 | S::F64) => AttrKind::Float,
        A::Str | A::Scalar(S::Str) => AttrKind::Str,
        A::DType => AttrKind::DType,
        A::Place => AttrKind::Place,
        A::IntArray | A::Array(_) => AttrKind::List,
        A::Scalar(S::Any) => return None,
    })
}

/// The attributes a result rule reads to derive a type (they must be given, or defaulted).
pub fn rule_attrs(rule: ResultRule) -> Vec<&'static str> {
    match rule {
        ResultRule::CastOf(_) => vec!["dtype"],
        ResultRule::FromShapeDtypeAttrs => vec!["shape", "dtype"],
        ResultRule::IntArray => vec!["value"],
        ResultRule::Dim0Times(_, k) | ResultRule::Dim0Over(_, k) => vec![k],
        _ => vec![],
    }
}

/// The operands a result rule takes the type from.
pub fn rule_operands(rule: ResultRule) -> Vec<usize> {
    match rule {
        ResultRule::SameAs(i)
        | ResultRule::CastOf(i)
        | ResultRule::ReducedOf(i)
        | ResultRule::Dim0Times(i, _)
        | ResultRule::Dim0Over(i, _) => vec![i as usize],
        ResultRule::Broadcast(i, j) => vec![i as usize, j as usize],
        _ => vec![],
    }
}

/// The declared ops of every loaded file (`files[i]` with its source), checked: a name not in
/// the dialect table and declared once, operand and result names unique, `like(x)` naming an
/// operand, known attribute types with defaults of that type.
///
/// Every declaration is checked, and each of its independent errors reported, in source order;
/// a faulty one is left out of the table and named in [`Collected::failed`], so that what uses it
/// is not reported again. A default that names a parameter in `failed_params` is not evaluated:
/// that parameter's own error is reported.
pub fn collect(
    files: &[(&SourceFile, &[OpDecl])],
    params: &dyn Fn(&str) -> Option<Val>,
    failed_params: &dyn Fn(&str) -> bool,
) -> Collected {
    let mut declared: IndexMap<String, DeclaredOp> = IndexMap::new();
    let mut errors = Vec::new();
    let mut failed = HashSet::new();
    for (fi, (src, decls)) in files.iter().enumerate() {
        for d in decls.iter() {
            let name = &d.name.name;
            let at = |off: usize, msg: String| Diagnostic::at(src, off, msg);
            if Dialect::get().spec(&name.name).is_some() {
                errors.push(at(
                    name.span.0,
                    format!(
                        "`{}` is in the dialect table: declare only ops it lacks",
                        name.name
                    ),
                ));
                continue;
            }
            if let Some(prev) = declared.get(&name.name) {
                let (line, _) = files[prev.file].0.line_col(prev.span.0);
                errors.push(
                    at(name.span.0, format!("op `{}` is declared twice", name.name)).with_note(
                        format!("first declared at {}:{line}", files[prev.file].0.name),
                    ),
                );
                continue;
            }
            let before = errors.len();
            // A default that names a faulty parameter: that parameter's error says it.
            let mut cascade = false;
            let mut operands: Vec<String> = Vec::new();
            for (k, o) in d.operands.iter().enumerate() {
                if operands
                    .iter()
                    .any(|p| p.trim_start_matches(['*', '?']) == o.name.name)
                {
                    errors.push(at(
                        o.name.span.0,
                        format!("operand `{}` is declared twice", o.name.name),
                    ));
                    continue;
                }
                let last = k + 1 == d.operands.len();
                let rest_optional = d.operands[k + 1..]
                    .iter()
                    .all(|n| n.arity == Arity::Optional);
                if o.arity == Arity::Variadic && !last {
                    errors.push(at(
                        o.name.span.0,
                        "only the last operand takes the rest (`*name`)".into(),
                    ));
                }
                // An optional operand before a required one is a slot of its own that may hold
                // `<<NULL VALUE>>`; only trailing ones may be left out.
                let arity = match o.arity {
                    Arity::Optional if !rest_optional => Arity::One,
                    a => a,
                };
                operands.push(marked(&o.name.name, arity));
            }
            let plain = |n: &str| {
                operands
                    .iter()
                    .position(|p| p.trim_start_matches(['*', '?']) == n)
            };
            let mut results: Vec<String> = Vec::new();
            let mut result_like = Vec::new();
            for (k, r) in d.results.iter().enumerate() {
                if results
                    .iter()
                    .any(|p| p.trim_start_matches(['*', '?']) == r.name.name)
                {
                    errors.push(at(
                        r.name.span.0,
                        format!("result `{}` is declared twice", r.name.name),
                    ));
                    continue;
                }
                if r.arity == Arity::Variadic && k + 1 != d.results.len() {
                    errors.push(at(
                        r.name.span.0,
                        "only the last result takes the rest (`*name`)".into(),
                    ));
                }
                let like = match &r.like {
                    None => None,
                    Some(x) => match plain(&x.name) {
                        Some(i) => Some(i),
                        None => {
                            errors.push(
                                at(
                                    x.span.0,
                                    format!("`{}` is not an operand of `{}`", x.name, name.name),
                                )
                                .with_hint(format!(
                                    "operands: {}",
                                    d.operands
                                        .iter()
                                        .map(|o| o.name.name.as_str())
                                        .collect::<Vec<_>>()
                                        .join(", ")
                                )),
                            );
                            None
                        }
                    },
                };
                results.push(marked(&r.name.name, r.arity));
                result_like.push(like);
            }
            let mut attrs = Vec::new();
            for a in &d.attrs {
                if attrs.iter().any(|d: &DeclaredAttr| d.key == a.key.name) {
                    errors.push(at(
                        a.key.span.0,
                        format!("attribute `{}` is declared twice", a.key.name),
                    ));
                    continue;
                }
                let Some((kind, paddle)) = declared_type(&a.ty.name) else {
                    errors.push(
                        at(
                            a.ty.span.0,
                            format!("unknown attribute type `{}`", a.ty.name),
                        )
                        .with_hint(
                            "attribute types are int, float, bool, string, dtype, place and list, or Paddle's own: i32, i64, f32, f64, str, intarray, and arrays such as i64[]",
                        ),
                    );
                    continue;
                };
                let default = match &a.default {
                    None => None,
                    Some(e) if super::eval::mentions(e, failed_params) => {
                        cascade = true;
                        None
                    }
                    Some(e) => match super::eval::eval_const(e, params) {
                        Err(er) => {
                            errors.push(Diagnostic::at(src, er.span.0, er.message));
                            None
                        }
                        Ok(v) if !kind.holds(&v) => {
                            errors.push(at(
                                e.span().0,
                                format!(
                                    "the default of `{}` is {}, but it is declared {}",
                                    a.key.name,
                                    v.a_kind(),
                                    crate::value::with_article(kind.name())
                                ),
                            ));
                            None
                        }
                        Ok(v) => Some(v),
                    },
                };
                attrs.push(DeclaredAttr {
                    key: a.key.name.clone(),
                    kind,
                    paddle,
                    default,
                });
            }
            if cascade || errors.len() > before {
                failed.insert(name.name.clone());
                continue;
            }
            let result_rule = match result_like.first() {
                Some(Some(i)) => ResultRule::SameAs(*i as u8),
                _ => ResultRule::Explicit,
            };
            // Every operand declared `name?` may be `none`, trailing or not.
            let optional = (d.operands.iter().enumerate())
                .filter(|(k, o)| o.arity == Arity::Optional && *k < 64)
                .fold(0u64, |m, (k, _)| m | 1 << k);
            let spec = intern(&name.name, operands, results, result_rule, optional);
            declared.insert(
                name.name.clone(),
                DeclaredOp {
                    spec,
                    result_like,
                    attrs,
                    file: fi,
                    span: d.span,
                },
            );
        }
    }
    Collected {
        table: OpTable {
            declared: Arc::new(declared),
        },
        errors,
        failed,
    }
}

/// What [`collect`] found: the table of the declarations that check, the errors of the others,
/// and their names.
pub struct Collected {
    pub table: OpTable,
    pub errors: Vec<Diagnostic>,
    /// Ops declared with an error: a rule that names one is not checked further (its
    /// declaration's error says what is wrong).
    pub failed: HashSet<String>,
}

fn marked(name: &str, a: Arity) -> String {
    match a {
        Arity::One => name.to_string(),
        Arity::Optional => format!("?{name}"),
        Arity::Variadic => format!("*{name}"),
    }
}

/// A declared op's entry with `'static` names, made once per distinct declaration for the
/// process: the rest of irw holds `&'static OpSpec`s, and loading the same rule files again
/// (tests, the fuzzer) finds the entry made the first time instead of allocating another.
fn intern(
    name: &str,
    operands: Vec<String>,
    results: Vec<String>,
    rule: ResultRule,
    optional_operands: u64,
) -> &'static OpSpec {
    type Key = (String, Vec<String>, Vec<String>, Option<u8>, u64);
    static SPECS: OnceLock<Mutex<HashMap<Key, &'static OpSpec>>> = OnceLock::new();
    let like = match rule {
        ResultRule::SameAs(i) => Some(i),
        _ => None,
    };
    let key = (name.to_string(), operands, results, like, optional_operands);
    let mut m = SPECS
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|e| e.into_inner());
    if let Some(s) = m.get(&key) {
        return s;
    }
    let leak = |v: &[String]| -> &'static [&'static str] {
        let names: Vec<&'static str> = v
            .iter()
            .map(|s| &*Box::leak(s.clone().into_boxed_str()))
            .collect();
        Box::leak(names.into_boxed_slice())
    };
    let spec: &'static OpSpec = Box::leak(Box::new(OpSpec {
        name: Box::leak(key.0.clone().into_boxed_str()),
        operands: leak(&key.1),
        results: leak(&key.2),
        aliases: &[],
        same_shape: &[],
        ranks: &[],
        effect: Effect::Unknown,
        result_rule: rule,
        optional_operands,
        optional_results: 0,
        unset_results: 0,
        attrs: &[],
        shape: crate::dialect::Shape::Unknown,
    }));
    m.insert(key, spec);
    spec
}
