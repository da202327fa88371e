//! Why the JSON writer refuses a module: which program, which op (when one is to blame) and
//! what. Kept apart from its rendering because where the op is depends on the caller: an op
//! read from a file (text or JSON) is shown at its line in that file, as the verifier's errors
//! are; an op a rewrite built is in no file, and the caller may know the rule that built it.

use crate::diag::{Diagnostic, SourceFile};
use crate::ir::{Module, OpId, Which};

/// A refusal to write a module as Paddle JSON.
#[derive(Debug, Clone)]
pub struct Refusal {
    pub which: Which,
    pub op: Option<OpId>,
    /// The whole message (`cannot write the main program as Paddle JSON: ...`).
    pub message: String,
}

/// The files a module was read from, and who built the ops that are in neither.
#[derive(Default, Clone, Copy)]
pub struct Origins<'a> {
    pub main: Option<&'a SourceFile>,
    /// The startup program's file, when it came from a file of its own.
    pub startup: Option<&'a SourceFile>,
    /// `rule `r` (file:line)` for a main-program op a rule built or last changed.
    pub editor: Option<&'a dyn Fn(OpId) -> Option<String>>,
}

impl Refusal {
    /// The refusal at its op's position in the file the op was read from; otherwise without a
    /// position, saying which rule built the op when `origins` knows.
    pub fn to_diagnostic(&self, m: &Module, origins: Origins<'_>) -> Diagnostic {
        let src = match self.which {
            Which::Startup if origins.startup.is_some() => origins.startup,
            _ => origins.main,
        };
        let pos = self
            .op
            .and_then(|op| m.program(self.which).and_then(|p| p.position(op)));
        let d = Diagnostic::at_if_known(src, pos, self.message.clone());
        let editor = match (pos, self.which, self.op, origins.editor) {
            (None, Which::Main, Some(op), Some(editor)) => editor(op),
            _ => None,
        };
        let d = match editor {
            Some(rule) => d.with_note(format!("the op was built or last changed by {rule}")),
            None => d,
        };
        match (pos.is_some(), self.which) {
            (true, Which::Startup) => d.with_note("in the startup program"),
            _ => d,
        }
    }
}

impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}
