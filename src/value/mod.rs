//! Values a rule expression evaluates to, and the conversions between them and IR attributes;
//! [`operators`] says what the operators do with them, and [`expr`] is the one expression tree
//! they are computed by.
//!
//! Its own module, below the rule language and both engines, because all three compute with
//! these values: the rule language (`rules/`) for constants, the structural engine (`rewrite/`)
//! for guards and built attributes, the e-graph (`egraph/`) for its compiled guards.
//!
//! Parameters, captured attributes, computed attributes and guard results are all [`Val`]s. The
//! IR-bound variants (`Value`, `Op`, `Type`) only appear while the engine evaluates a match;
//! parameter defaults and import conditions are constant.

pub mod expr;
pub mod operators;

use crate::ir::{Attr, DType, OpId, TypeId, ValueId};

#[derive(Debug, Clone, PartialEq)]
pub enum Val {
    Int(i64),
    Float(f64),
    Bool(bool),
    Str(String),
    DType(DType),
    /// A stage, by its op-role number.
    Stage(i64),
    /// `Place(...)`, inner text.
    Place(String),
    List(Vec<Val>),
    Value(ValueId),
    /// An absent optional operand (`<<NULL VALUE>>`).
    NullValue,
    Op(OpId),
    Type(TypeId),
    /// An attribute with no better rule-level form (a nested dictionary).
    Attr(Attr),
}

impl Val {
    /// [`Val::kind`] with its article, for messages: "an int", "a bool".
    pub fn a_kind(&self) -> String {
        with_article(self.kind())
    }

    pub fn kind(&self) -> &'static str {
        match self {
            Val::Int(_) => "int",
            Val::Float(_) => "float",
            Val::Bool(_) => "bool",
            Val::Str(_) => "string",
            Val::DType(_) => "dtype",
            Val::Stage(_) => "stage",
            Val::Place(_) => "place",
            Val::List(_) => "list",
            Val::Value(_) | Val::NullValue => "value",
            Val::Op(_) => "op",
            Val::Type(_) => "type",
            Val::Attr(_) => "attribute",
        }
    }

    /// Converts an IR attribute to its rule-level form: dtype words become dtypes, `Place(..)`
    /// words places, arrays lists.
    pub fn from_attr(a: &Attr) -> Val {
        match a {
            Attr::Int(i) => Val::Int(*i),
            Attr::Float { value, .. } => Val::Float(*value),
            Attr::Bool(b) => Val::Bool(*b),
            Attr::Str(_) => Val::Str(a.as_str().map(|s| s.into_owned()).unwrap_or_default()),
            Attr::Array(v) => Val::List(v.iter().map(Val::from_attr).collect()),
            Attr::Word(w) => {
                if let Some(d) = DType::from_attr_name(w) {
                    Val::DType(d)
                } else if let Some(inner) =
                    w.strip_prefix("Place(").and_then(|s| s.strip_suffix(')'))
                {
                    Val::Place(inner.to_string())
                } else {
                    Val::Attr(a.clone())
                }
            }
            Attr::Dict(_) | Attr::OpDist(_) => Val::Attr(a.clone()),
        }
    }

    /// The attribute a computed value is stored as; `None` for values that are not attributes
    /// (program values, ops, types).
    pub fn to_attr(&self) -> Option<Attr> {
        Some(match self {
            Val::Int(i) => Attr::Int(*i),
            Val::Float(f) => Attr::float(*f),
            Val::Bool(b) => Attr::Bool(*b),
            Val::Str(s) => Attr::string(s),
            Val::DType(d) => Attr::Word(d.attr_name().into()),
            Val::Stage(r) => Attr::Int(*r),
            Val::Place(p) => Attr::Word(format!("Place({p})").into()),
            Val::List(v) => Attr::Array(v.iter().map(|x| x.to_attr()).collect::<Option<Vec<_>>>()?),
            Val::Attr(a) => a.clone(),
            Val::Value(_) | Val::NullValue | Val::Op(_) | Val::Type(_) => return None,
        })
    }

    /// Equality as rules see it: ints and floats compare by value, stages equal their role
    /// number.
    pub fn loose_eq(&self, other: &Val) -> bool {
        match (self, other) {
            (Val::Int(a), Val::Float(b)) | (Val::Float(b), Val::Int(a)) => (*a as f64) == *b,
            (Val::Stage(a), Val::Int(b)) | (Val::Int(b), Val::Stage(a)) => a == b,
            (Val::List(a), Val::List(b)) => {
                a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.loose_eq(y))
            }
            (a, b) => a == b,
        }
    }

    /// Text for string interpolation and messages.
    pub fn display(&self) -> String {
        match self {
            Val::Int(i) => i.to_string(),
            Val::Float(f) => crate::ir::format_float_like_paddle(*f),
            Val::Bool(b) => b.to_string(),
            Val::Str(s) => s.clone(),
            Val::DType(d) => d.attr_name().to_string(),
            Val::Stage(r) => r.to_string(),
            Val::Place(p) => format!("Place({p})"),
            Val::List(v) => format!(
                "[{}]",
                v.iter().map(|x| x.display()).collect::<Vec<_>>().join(",")
            ),
            Val::Value(v) => format!("value#{}", v.0),
            Val::NullValue => "<<NULL VALUE>>".to_string(),
            Val::Op(o) => format!("op#{}", o.0),
            Val::Type(t) => format!("type#{}", t.0),
            Val::Attr(a) => a.to_text(),
        }
    }
}

/// `word` with its indefinite article, for messages: "an int", "a bool", "an op".
pub fn with_article(word: &str) -> String {
    let article = if word.starts_with(['a', 'e', 'i', 'o', 'u']) {
        "an"
    } else {
        "a"
    };
    format!("{article} {word}")
}
