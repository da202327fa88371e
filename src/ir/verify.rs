//! Placeholder, replaced below.
use super::Module;
use crate::diag::Diagnostic;
pub fn verify_module(_m: &Module) -> Result<(), Diagnostic> { Ok(()) }
