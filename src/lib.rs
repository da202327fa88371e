//! irw: a declarative rewrite-rule engine for machine-learning training programs.
//!
//! See `ARCHITECTURE.md` for the bird's-eye view and the code map.

pub mod api;
pub mod cli;
pub mod diag;
pub mod dialect;
pub mod diff;
pub mod egraph;
pub mod exec;
pub mod gen;
pub mod ir;
pub mod json;
pub mod lint;
pub mod rewrite;
pub mod rules;
pub mod source_text;
pub mod suggest;
pub mod value;

pub use diag::{Diagnostic, SourceFile};
