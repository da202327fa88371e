//! Lowering: what is computed once when the rule files are loaded, so that the engines consume
//! closed, numbered forms and never re-derive them from the syntax tree at run time (and so
//! that `rules/` needs nothing from `rewrite/`):
//! - [`equational`]: equational rules to the e-graph's rule type (`egraph::EqRule`), stored in
//!   [`super::Phase::equational`]; the resolver ([`super::check`]) translates each rule as it
//!   checks it, so what only the e-graph can refuse is reported at the rule;
//! - [`constant`]: the loader's constants (parameter defaults and constraints, import
//!   conditions, `require` counts), which nothing can make fail to lower.
//!
//! Structural rules are not lowered here: the resolver checks and lowers each in one pass
//! ([`super::check`]).

mod constant;
pub mod equational;

pub use constant::{constant, constant_str};
pub use equational::check;
