//! Lowering: rules as the engines run them, computed once when the rule files are loaded.
//!
//! The rule language is written for people; the engines want closed, numbered forms. Lowering
//! happens here, in `rules/`, so that the engines consume its output and never re-derive it from
//! the syntax tree at run time (and so that `rules/` needs nothing from `rewrite/`):
//! - [`equational`]: equational rules to the e-graph's rule type (`egraph::EqRule`), stored in
//!   [`super::Phase::equational`];
//! - [`structural`]: structural rules to [`super::compiled::CompiledRule`], stored in
//!   [`super::Phase::structural`]: variables and captures numbered into slots, selectors and
//!   stages resolved, builtins named by [`super::builtins::Builtin`];
//! - [`expr`]: expressions ([`super::compiled::Expr`]), for both of the above's structural half and
//!   for the constants the loader evaluates (parameter defaults and constraints, import
//!   conditions, `require` counts; see [`constant`]).
//!
//! Lowering runs after the checker, which has refused every unknown name, stage and op class of
//! a rule; the few errors lowering itself can report repeat the checker's words.

pub mod equational;
mod expr;
pub mod structural;

pub use equational::{check, translate, Error};
pub use expr::{constant, constant_str};
pub use structural::structural;
