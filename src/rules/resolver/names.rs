//! What the names of a rule resolve to, each rule of the language written once: an op class,
//! a stage, an alternative's attribute test, and the words for an op name nobody knows, a
//! variable the left-hand side of an equational rule does not bind and a rule defined twice.
//!
//! Several passes meet these names: the expander (the alternatives of an `ops` set), the
//! resolver (every pattern, build and equational rule), the equational translation and the
//! loader (rule names across files). Each asks here, so a name means the same thing wherever it
//! is written and is refused with the same message and hints.

use crate::diag::{Diagnostic, SourceFile};
use crate::dialect::{Dialect, Effect};
use crate::rules::ast::{AttrPat, AttrPatVal, Ident, Span};
use crate::rules::compiled::AltTest;
use crate::rules::suggest::{closest, did_you_mean};
use crate::rules::{stage_role, OpClass, STAGES};

/// A name that does not resolve: where, what, and hints for the author.
#[derive(Debug, Clone)]
pub struct Problem {
    pub offset: usize,
    pub message: String,
    pub hints: Vec<String>,
}

impl Problem {
    fn new(offset: usize, message: String) -> Problem {
        Problem {
            offset,
            message,
            hints: Vec::new(),
        }
    }

    fn hint(mut self, h: impl Into<String>) -> Problem {
        self.hints.push(h.into());
        self
    }

    /// The diagnostic, pointing into `src`.
    pub fn at(self, src: &SourceFile) -> Diagnostic {
        let mut d = Diagnostic::at(src, self.offset, self.message);
        for h in self.hints {
            d = d.with_hint(h);
        }
        d
    }
}

impl From<Problem> for (usize, String) {
    fn from(p: Problem) -> (usize, String) {
        (p.offset, p.message)
    }
}

/// The names of the op classes a pattern may use, `any` first.
pub fn class_names() -> impl Iterator<Item = &'static str> {
    std::iter::once("any").chain(Effect::ALL.iter().map(|e| e.class_name()))
}

/// The op class `c` names.
pub fn op_class(c: &Ident) -> Result<OpClass, Problem> {
    OpClass::from_name(&c.name).ok_or_else(|| {
        Problem::new(c.span.0, format!("unknown op class `{}`", c.name)).hint(format!(
            "op classes are {}; op names have a dialect prefix (pd_op.add)",
            class_names().collect::<Vec<_>>().join(", ")
        ))
    })
}

/// The op role of the stage `i` names.
pub fn stage(i: &Ident) -> Result<i64, Problem> {
    stage_role(&i.name).ok_or_else(|| {
        let names = || STAGES.iter().map(|(n, _)| *n);
        let mut p = Problem::new(i.span.0, format!("unknown stage `{}`", i.name));
        if let Some(h) = did_you_mean(&closest(&i.name, names(), 3)) {
            p = p.hint(h);
        }
        p.hint(stages_hint())
    })
}

/// "stages are forward, backward, optimize, ...".
pub fn stages_hint() -> String {
    let names: Vec<&str> = STAGES.iter().map(|(n, _)| *n).collect();
    format!("stages are {}", names.join(", "))
}

/// An attribute test of one alternative of a set (`pd_op.all_reduce {reduce_type: 0}`):
/// literals, `_` and `not key` only, since the alternative may not be the one that matched.
pub fn alt_test(a: &AttrPat) -> Result<AltTest, Problem> {
    match &a.val {
        AttrPatVal::Present(_) => Ok(AltTest::Present),
        AttrPatVal::Absent(_) => Ok(AltTest::Absent),
        AttrPatVal::Equals(e) => e.literal().map(AltTest::Equals).ok_or_else(|| {
            Problem::new(
                e.span().0,
                format!("the test of `{}` in an alternative must be a literal", a.key.name),
            )
            .hint("an alternative's attribute tests are constants (`{reduce_type: 0}`), `_` or `not key`; compute in a `where` guard instead")
        }),
        AttrPatVal::Capture(c) => Err(Problem::new(
            c.span.0,
            format!("`{}` cannot be captured inside an alternative", c.name),
        )
        .hint("the alternative may not be the one that matched; capture in the pattern's own attribute block, after the operands")),
    }
}

/// An op name that is neither in the dialect table nor declared: the message, and the closest
/// names of the table. The caller adds how such an op is written where it stands.
pub fn unknown_op(i: &Ident) -> Problem {
    let mut p = Problem::new(i.span.0, format!("unknown op `{}`", i.name));
    let table = Dialect::get().all().iter().map(|s| s.name);
    if let Some(h) = did_you_mean(&closest(&i.name, table, 3)) {
        p = p.hint(h);
    }
    p
}

/// [`unknown_op`] for a pattern or a set's alternative, where an unknown op is quoted.
pub fn unknown_op_in_pattern(i: &Ident) -> Problem {
    unknown_op(i).hint(format!(
        "an op outside the dialect table is written quoted: \"{}\"",
        i.name
    ))
}

/// A rule named like one before it. Rule names are one namespace over every file a run loads
/// (statistics, traces and `require` name rules), so the resolver (within a file) and the loader
/// (across the files it includes) refuse a second one with these words, pointing at the second
/// and naming where the first is.
pub fn rule_defined_twice(
    src: &SourceFile,
    name: &Ident,
    first: &SourceFile,
    first_span: Span,
) -> Diagnostic {
    let (line, _) = first.line_col(first_span.0);
    Diagnostic::at(
        src,
        name.span.0,
        format!("rule `{}` is defined twice", name.name),
    )
    .with_note(format!("first defined at {}:{line}", first.name))
}

/// A `let` naming what its rule already binds (a value, an op, a capture, an earlier `let`):
/// the later actions would read one of two things under one name. The expander (`let %s =
/// BUILD;`) and the resolver (`let $x = E;`) refuse it with these words.
pub fn let_name_taken(src: &SourceFile, name: &Ident) -> Diagnostic {
    Diagnostic::at(
        src,
        name.span.0,
        format!("`{}` is already bound in this rule", name.name),
    )
    .with_hint("a `let` names something new: give it a name the rule does not use")
}

/// A variable of an equational rule's right-hand side (or of what it computes) that its
/// left-hand side does not bind: the right-hand side is built from what the match found.
pub fn not_bound_by_lhs(v: &Ident) -> Problem {
    Problem::new(
        v.span.0,
        format!("`{}` is not bound by the left-hand side", v.name),
    )
    .hint("the right-hand side of an equational rule may only use variables of the left")
}
