//! The rule language: `.rw` files parsed with LALRPOP, resolved against the dialect table.
pub mod ast;
pub mod parse;

lalrpop_util::lalrpop_mod!(
    #[allow(clippy::all, unused_parens, dead_code)]
    pub(crate) grammar,
    "/rules.rs"
);
