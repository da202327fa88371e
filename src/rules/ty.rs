//! The checker's static types of rule expressions ([`Ty`]): what an expression evaluates to, as
//! far as the text says. The checker infers them, and the table of built-in functions
//! ([`super::builtins`]) states each function's result in them.

/// A rough static type, enough to catch `1.0 / avg` and `where 3;` (also what the builtins
/// table says each function returns).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ty {
    Int,
    Float,
    Bool,
    Str,
    DType,
    Stage,
    Place,
    List,
    Value,
    Op,
    Type,
    Any,
}

impl Ty {
    pub fn name(self) -> &'static str {
        match self {
            Ty::Int => "int",
            Ty::Float => "float",
            Ty::Bool => "bool",
            Ty::Str => "string",
            Ty::DType => "dtype",
            Ty::Stage => "stage",
            Ty::Place => "place",
            Ty::List => "list",
            Ty::Value => "value",
            Ty::Op => "op",
            Ty::Type => "type",
            Ty::Any => "anything",
        }
    }
    pub fn a_name(self) -> String {
        crate::value::with_article(self.name())
    }
    pub fn numeric(self) -> bool {
        matches!(self, Ty::Int | Ty::Float | Ty::Any)
    }
    pub fn is(self, t: Ty) -> bool {
        self == t || self == Ty::Any
    }
    pub fn valueish(self) -> bool {
        matches!(self, Ty::Value | Ty::Op | Ty::Any)
    }

    /// Whether a value of this type may equal one of type `t` (`==` as
    /// [`crate::value::Val::loose_eq`] decides it: ints and floats by value, a stage as its
    /// role number). What may not is a comparison that never holds (`dtype(%x) == "float32"`,
    /// `rank(%x) == "2"`, `shape(%x) == 2`), refused by the checker where it is written: in a
    /// guard with `==` or `!=`, and in an attribute test against the attribute's kind.
    pub fn can_equal(self, t: Ty) -> bool {
        use Ty::*;
        match (self, t) {
            (Any, _) | (_, Any) => true,
            (Int | Float, Int | Float) | (Int, Stage) | (Stage, Int) => true,
            (Value | Op, Value | Op) => true,
            (a, b) => a == b,
        }
    }

    /// Why a value of this type never equals one of type `other`, and what was probably
    /// meant; `string` is the text of the other side when it is a plain string literal.
    pub fn never_equal_hint(self, other: Ty, string: Option<&str>) -> String {
        match (self, other, string) {
            (Ty::DType, Ty::Str, Some(s)) => {
                format!("compare with the dtype `{s}`, not the string: dtypes are written bare")
            }
            (Ty::Int | Ty::Float, Ty::Str, Some(s)) => {
                format!("compare with the number `{s}`, not the string")
            }
            (Ty::List, Ty::Int | Ty::Float, _) => {
                "a list never equals a number: compare an item (`shape(%x)[0]`) or the length (`rank(%x)`)"
                    .to_string()
            }
            (Ty::Bool, Ty::Int | Ty::Float, _) => "a bool is written true or false".to_string(),
            _ => format!(
                "{} never equals {}: the comparison can never hold",
                self.a_name(),
                other.a_name()
            ),
        }
    }
}
