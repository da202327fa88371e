//! A phase's `require RULE [op N] [else "message"]`, evaluated with the parameters: the loader
//! keeps it for after the phase has run; the resolver evaluates it once on its own, so a bad count
//! is reported for a file whatever `--set` says.

use super::ast::{BinOp, Require};
use super::eval::{eval_const, eval_const_str};
use super::LoadedRequire;
use crate::diag::{Diagnostic, SourceFile};
use crate::value::Val;

/// A `require` with its count and message evaluated with the parameters.
pub(super) fn loaded_require(
    src: &SourceFile,
    file: usize,
    params: &dyn Fn(&str) -> Option<Val>,
    q: &Require,
) -> Result<LoadedRequire, Diagnostic> {
    let (op, count) = match &q.count {
        None => (BinOp::Ge, 1),
        Some((op, e)) => {
            if !matches!(
                op,
                BinOp::Eq | BinOp::Ne | BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge
            ) {
                return Err(Diagnostic::at(
                    src,
                    e.span().0,
                    format!("`require` compares a number of applications: `{}` is not a comparison", op.symbol()),
                )
                .with_hint("write `require RULE;` (at least once) or `require RULE == N;` (also !=, <, <=, >, >=)"));
            }
            match eval_const(e, params) {
                Ok(Val::Int(n)) => (*op, n),
                Ok(v) => {
                    return Err(Diagnostic::at(
                        src,
                        e.span().0,
                        format!(
                            "a required number of applications must be an int, found {}",
                            v.a_kind()
                        ),
                    ))
                }
                Err(er) => return Err(Diagnostic::at(src, er.span.0, er.message)),
            }
        }
    };
    let message = match &q.message {
        None => None,
        Some(m) => Some(
            eval_const_str(m, params).map_err(|er| Diagnostic::at(src, er.span.0, er.message))?,
        ),
    };
    Ok(LoadedRequire {
        file,
        rules: q.rules.clone(),
        span: q.span,
        op,
        count,
        message,
    })
}
