//! irw: a declarative rewrite-rule engine for machine-learning training programs.
//!
//! See `ARCHITECTURE.md` for the bird's-eye view and the code map.

pub mod cli;
pub mod diag;
pub mod dialect;
pub mod gen;
pub mod ir;
pub mod json;

pub use diag::{Diagnostic, SourceFile};
