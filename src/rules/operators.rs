//! The vocabulary every form of a rule expression shares: spans and operators. The syntax tree
//! ([`super::ast`]), the lowered form ([`super::compiled`]) and the e-graph's compiled guards use
//! these, and [`super::eval`] gives the operators their meaning once for all of them.

/// Byte offsets `[start, end)` into the file a node came from.
pub type Span = (usize, usize);

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UnOp {
    Neg,
    Not,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BinOp {
    Add,
    Sub,
    Mul,
    Div,
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    And,
    Or,
    /// `%v in backward` (stage test) or `x in [a, b]` (membership).
    In,
    Contains,
    StartsWith,
    EndsWith,
}

impl BinOp {
    pub fn symbol(self) -> &'static str {
        match self {
            BinOp::Add => "+",
            BinOp::Sub => "-",
            BinOp::Mul => "*",
            BinOp::Div => "/",
            BinOp::Eq => "==",
            BinOp::Ne => "!=",
            BinOp::Lt => "<",
            BinOp::Le => "<=",
            BinOp::Gt => ">",
            BinOp::Ge => ">=",
            BinOp::And => "and",
            BinOp::Or => "or",
            BinOp::In => "in",
            BinOp::Contains => "contains",
            BinOp::StartsWith => "starts_with",
            BinOp::EndsWith => "ends_with",
        }
    }
}
