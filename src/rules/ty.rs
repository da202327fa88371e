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
}
