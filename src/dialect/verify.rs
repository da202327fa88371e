//! The IR's verifier with the dialect table's op counts.
//!
//! The verifier lives in the IR and knows no op table ([`crate::ir::OpCounts`]); the dialect sits
//! above the IR and hands its table in. [`verify_module`] and [`verify_program`] are what every
//! caller wants: the IR's verifier checking counts against [`Dialect`].

use super::{Dialect, OpSpec};
use crate::ir::{verify, Context, Module, OpCounts, OpId, Program, VerifyError};

impl OpCounts for Dialect {
    fn check_counts(&self, name: &str, operands: usize, results: usize) -> Result<(), String> {
        let Some(spec) = self.spec(name) else {
            return Ok(());
        };
        if !OpSpec::count_fits(spec.operands, operands) {
            return Err(format!(
                "has {} operands; the dialect table says {:?}",
                operands, spec.operands
            ));
        }
        if !OpSpec::count_fits(spec.results, results) {
            return Err(format!(
                "has {} results; the dialect table says {:?}",
                results, spec.results
            ));
        }
        Ok(())
    }
}

/// Verifies both programs of a module against the dialect table ([`verify::verify_module`]).
pub fn verify_module(m: &Module) -> Result<(), VerifyError> {
    verify::verify_module(m, Dialect::get())
}

/// Verifies one program against the dialect table ([`verify::verify_program`]).
pub fn verify_program(ctx: &Context, p: &Program) -> Result<(), (Option<OpId>, String)> {
    verify::verify_program(ctx, p, Dialect::get())
}

#[cfg(test)]
mod tests {
    use super::verify_module;
    use crate::ir::parse_module;
    use crate::SourceFile;

    fn check(text: &str) -> Result<(), String> {
        let m = parse_module(&SourceFile::new("t.ir", text)).map_err(|d| d.to_string())?;
        verify_module(&m).map_err(|e| e.to_diagnostic(&m, None).to_string())
    }

    #[test]
    fn operand_counts_follow_the_table() {
        let text = "{\n    (%0) = \"pd_op.full\" () {} : () -> tensor<f32>\n    (%1) = \"pd_op.relu\" (%0, %0) {} : (tensor<f32>, tensor<f32>) -> tensor<f32>\n}\n";
        let e = check(text).unwrap_err();
        assert!(e.contains("pd_op.relu") && e.contains("2 operands"), "{e}");
    }

    #[test]
    fn unknown_ops_are_not_counted() {
        let text = "{\n    (%0) = \"my.op\" () {} : () -> tensor<f32>\n    (%1, %2) = \"my.other\" (%0, %0, <<NULL VALUE>>) {} : (tensor<f32>, tensor<f32>, <<NULL TYPE>>) -> tensor<f32>, tensor<f32>\n}\n";
        check(text).unwrap();
    }
}
