//! irw: a declarative rewrite-rule engine for machine-learning training programs.
//!
//! See `ARCHITECTURE.md` for the bird's-eye view and the code map.

pub mod diag;
pub mod exec;

pub use diag::{Diagnostic, SourceFile};
