//! The ops that keep a run or a check from judging anything, found before anything runs: ops the
//! executor has no kernel for ([`missing_kernels`]), ops whose stage it cannot read
//! ([`malformed_roles`]: an `op_role` that is no number), and ops of the step that draw random
//! numbers ([`random_draws`]).
//!
//! The interpreter meets ops one at a time, so an op it cannot run would end the run at the
//! first such op, after the startup program and part of the step had run, and say nothing of
//! the next one: a user with a model of five unsupported activations would learn of them in
//! five runs. Whether the executor runs an op depends on its name alone ([`exec_of`]), so every
//! program a run or check will execute (startup and main, the blocks of `pd_op.if` and
//! `pd_op.while` included, taken or not) is read once up front and every such op is reported
//! in one error: one located diagnostic per op name, at its first op, with the count of its
//! other ops, and a note listing them all.
//!
//! A random draw in the step (`pd_op.gaussian` noise, a hand-written dropout mask of
//! `pd_op.uniform`, training-mode `pd_op.dropout`) makes exactness meaningless: k micro-steps
//! and one full-batch step draw different numbers (Paddle draws new ones every run), so a
//! merge agrees with the full batch in distribution only. The executor's one generator would
//! hand the micro-batches the full batch's numbers in the same order and make a check pass
//! where Paddle's runs differ by far more than any tolerance: such programs are reported
//! instead. Draws of the startup program (initializers) run once, alike for both programs.
//!
//! `irw check` reports both as NOT JUDGED (exit 4), not as a FAIL: nothing is known about the
//! rewrite, only that irw cannot execute, or cannot compare, the program.

use std::collections::HashSet;

use indexmap::IndexMap;

use crate::diag::{Diagnostic, SourceFile};
use crate::dialect::{Dialect, Effect};
use crate::exec::interp::Sources;
use crate::exec::ops::exec_of;
use crate::ir::{Module, OpId, Program};

/// A program to scan: the module, the files it was read from and the name its errors use
/// (`main`, `original`, `rewritten`).
pub type Scanned<'a> = (&'a Module, Sources<'a>, &'a str);

/// One op name reported: where it first appears and how many ops carry it.
struct Reported {
    first: Diagnostic,
    count: usize,
}

/// Every op of `programs` the executor has no kernel for, as one error (`None` when it runs
/// them all). Each program's startup is read before its main program. An op name met again
/// in a later program is counted, not reported twice; an op read from the same place of the
/// same file as one already met (the rewritten program keeps the original's ops where the
/// rules kept them) is that op, and counts once.
pub fn missing_kernels(programs: &[Scanned<'_>]) -> Option<Diagnostic> {
    Found::of(programs, true, no_kernel).report(
        "the executor has no kernel for",
        "nothing ran; `irw ops NAME` says whether the executor runs an op",
    )
}

/// Every op of the main programs of `programs` that draws random numbers when the step runs,
/// as one error (`None` when none does): the numbers of a merged step and of the full-batch
/// step differ, so no check can compare them exactly.
pub fn random_draws(programs: &[Scanned<'_>]) -> Option<Diagnostic> {
    Found::of(programs, false, draws).report(
        "random numbers are drawn by",
        "nothing ran; check the program with its random ops removed or made deterministic (dropout p = 0 or is_test: true): a rewrite that leaves the forward alone is exercised all the same",
    )
}

/// Every op of `programs` (startups included) whose `op_role` is not a stage number, as one
/// error (`None` when there is none): the executor runs an op by its stage (the optimize stage
/// once per k micro-steps), and a word, a string or a float there would put it in none.
pub fn malformed_roles(programs: &[Scanned<'_>]) -> Option<Diagnostic> {
    Found::of(programs, true, role_not_a_number).report(
        "the op_role is not a stage number at",
        "nothing ran; op_role is Paddle's 32-bit stage number: 0 forward, 1 backward, 2 optimize",
    )
}

/// Why op `op`'s `op_role` cannot say its stage.
fn role_not_a_number(module: &Module, prog: &Program, op: OpId) -> Option<&'static str> {
    let attrs = module.ctx.attrs(prog.op_attrs(op));
    let role = attrs.get(crate::dialect::ROLE_ATTR)?;
    (!crate::dialect::fits(role, crate::dialect::data::AttrType::I32)).then_some(
        "its `op_role` is not a stage number, so the executor cannot tell when to run it",
    )
}

/// Why the executor cannot run op `op` (its name has no kernel).
fn no_kernel(module: &Module, prog: &Program, op: OpId) -> Option<&'static str> {
    exec_of(module.ctx.str(prog.op_name(op)))
        .is_none()
        .then_some("the executor has no kernel for this op")
}

/// Why op `op` makes a step random: an op of the dialect's `random` class draws numbers each
/// time it runs, unless its attributes switch the draw off (`is_test: true`; a dropout
/// probability of 0; a one-layer `rnn`, whose dropout acts between layers).
fn draws(module: &Module, prog: &Program, op: OpId) -> Option<&'static str> {
    let name = module.ctx.str(prog.op_name(op));
    if Dialect::get().effect(name) != Effect::Random {
        return None;
    }
    let attrs = module.ctx.attrs(prog.op_attrs(op));
    let number = |key: &str| attrs.get(key).and_then(|a| a.as_f64());
    let is_test = attrs
        .get("is_test")
        .is_some_and(|a| a.as_bool() == Some(true));
    let no_dropout = ["p", "dropout_prob"].iter().any(|k| number(k) == Some(0.0))
        || (name.starts_with("pd_op.rnn") && number("num_layers").is_some_and(|n| n <= 1.0));
    (!is_test && !no_dropout).then_some(
        "this op draws random numbers in every step: the merged step and the full-batch step draw different ones (Paddle draws new ones every run), so they can agree in distribution but not exactly",
    )
}

/// What the scan has found so far.
#[derive(Default)]
struct Found {
    /// By op name, in the order first met.
    by_name: IndexMap<String, Reported>,
    /// The ops met so far that were read from a file: (file name, byte offset).
    located: HashSet<(String, usize)>,
}

/// Why an op is reported, or `None`.
type Why = fn(&Module, &Program, OpId) -> Option<&'static str>;

impl Found {
    /// The ops of `programs` for which `why` says why they are reported: each program's main
    /// program, after its startup program when `startups`.
    fn of(programs: &[Scanned<'_>], startups: bool, why: Why) -> Found {
        let mut found = Found::default();
        for &(module, sources, label) in programs {
            if let Some(startup) = module.startup.as_ref().filter(|_| startups) {
                let label = format!("{label} (startup)");
                found.scan(module, startup, sources.startup, &label, why);
            }
            found.scan(module, &module.main, sources.main, label, why);
        }
        found
    }

    /// Records every op of `prog` for which `why` says why it is reported.
    fn scan(
        &mut self,
        module: &Module,
        prog: &Program,
        src: Option<&SourceFile>,
        label: &str,
        why: Why,
    ) {
        for (i, op) in prog.walk().into_iter().enumerate() {
            let Some(why) = why(module, prog, op) else {
                continue;
            };
            if let (Some(src), Some(at)) = (src, prog.position(op)) {
                if !self.located.insert((src.name.clone(), at)) {
                    continue;
                }
            }
            let name = module.ctx.str(prog.op_name(op));
            match self.by_name.get_mut(name) {
                Some(m) => m.count += 1,
                None => {
                    let first = Diagnostic::at_if_known(
                        src,
                        prog.position(op),
                        format!("{label}: op #{i} `{name}`: {why}"),
                    );
                    self.by_name
                        .insert(name.to_string(), Reported { first, count: 1 });
                }
            }
        }
    }

    /// The ops found, as one error: the first op of each name located, with the count of the
    /// others, a summary (`{what} N ops of M names: ...`) when there are several names, and
    /// `hint`.
    fn report(self, what: &str, hint: &str) -> Option<Diagnostic> {
        let by_name = self.by_name;
        let summary: Vec<String> = by_name
            .iter()
            .map(|(name, m)| format!("`{name}` ({})", m.count))
            .collect();
        let total: usize = by_name.values().map(|m| m.count).sum();
        let mut all: Vec<Diagnostic> = by_name
            .into_values()
            .map(|m| match m.count {
                1 => m.first,
                n => {
                    let others = if n == 2 { "op" } else { "ops" };
                    m.first
                        .with_note(format!("{} more {others} of this name", n - 1))
                }
            })
            .collect();
        if let Some(first) = all.first_mut() {
            if summary.len() > 1 {
                first.notes.push(format!(
                    "{what} {total} ops of {} names: {}",
                    summary.len(),
                    summary.join(", ")
                ));
            }
            first.hints.push(hint.to_string());
        }
        Diagnostic::list(all)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn module(src: &SourceFile) -> Module {
        crate::ir::parse_module(src).expect("parses")
    }

    fn sources(src: &SourceFile) -> Sources<'_> {
        Sources {
            main: Some(src),
            startup: Some(src),
        }
    }

    #[test]
    fn every_op_name_is_reported_once_with_its_count() {
        let src = SourceFile::new(
            "p.ir",
            r#"{
    (%0) = "pd_op.full" () {dtype:float32,place:Place(cpu),shape:[2],stop_gradient:[true],value:1} : () -> tensor<2xf32>
    (%1) = "pd_op.lgamma" (%0) {} : (tensor<2xf32>) -> tensor<2xf32>
    (%2) = "pd_op.relu" (%1) {} : (tensor<2xf32>) -> tensor<2xf32>
    (%3) = "pd_op.lgamma" (%2) {} : (tensor<2xf32>) -> tensor<2xf32>
    (%4) = "my.op" (%3) {} : (tensor<2xf32>) -> tensor<2xf32>
}
"#,
        );
        let m = module(&src);
        let d = missing_kernels(&[(&m, sources(&src), "main")]).expect("an error");
        let at = d.location.as_ref().expect("located");
        assert_eq!((at.file.as_str(), at.line, at.col), ("p.ir", 3, 5));
        assert_eq!(
            d.message,
            "main: op #1 `pd_op.lgamma`: the executor has no kernel for this op"
        );
        assert_eq!(d.notes[0], "1 more op of this name");
        assert!(d.notes[1].contains("3 ops of 2 names: `pd_op.lgamma` (2), `my.op` (1)"));
        assert_eq!(d.more.len(), 1);
        assert!(d.more[0].message.starts_with("main: op #4 `my.op`"));
        // The rewritten program's ops read from the same places are the original's.
        let d = missing_kernels(&[
            (&m, sources(&src), "original"),
            (&m, sources(&src), "rewritten"),
        ])
        .expect("an error");
        assert_eq!(d.more.len(), 1);
        assert_eq!(d.notes[0], "1 more op of this name");
        // Ops of unknown place (built by a rewrite) are each counted, each name reported once.
        let d = missing_kernels(&[
            (&m, Sources::default(), "original"),
            (&m, Sources::default(), "rewritten"),
        ])
        .expect("an error");
        assert_eq!(d.more.len(), 1);
        assert_eq!(d.notes[0], "3 more ops of this name");
    }

    #[test]
    fn a_program_of_kernels_passes() {
        let src = SourceFile::new(
            "p.ir",
            r#"{
    (%0) = "pd_op.full" () {dtype:float32,place:Place(cpu),shape:[2],stop_gradient:[true],value:1} : () -> tensor<2xf32>
    (%1) = "pd_op.relu" (%0) {} : (tensor<2xf32>) -> tensor<2xf32>
}
"#,
        );
        let m = module(&src);
        assert!(missing_kernels(&[(&m, Sources::default(), "main")]).is_none());
    }
}
