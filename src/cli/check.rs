//! `irw check`: its arguments (clap) and its driver, which applies the rules (or reads the
//! rewritten program), hands both programs with their texts to the executor's comparison
//! ([`crate::exec::check`]) and prints the table.
//!
//! The executor never sees a path or a command-line flag: what the command line knows stays
//! here, so `exec` does not depend on `cli`.

use clap::Args;

use super::{
    apply_rules_knowing_misfits, load_feed, load_module_files, load_rules, parse_positive,
    parse_ranks, parse_tolerance, Failure, InputLimitArgs, Limits, MemoryArgs, RuleArgs,
    TimeoutArgs,
};
use crate::exec::check::{check_with_sources, CheckOptions, Outcome, Tokens};
use crate::exec::unrunnable::{malformed_roles, missing_kernels, random_draws};

/// `irw check (--rules R [--set k=v]... | --rewritten OUT [--rewritten-startup S2]) PROG ...`
///
/// Only the rule options of the rewrite command apply: `check` writes no program, so it has no
/// `-o`, `--emit` or `--startup-out`.
#[derive(Args, Debug)]
pub struct CheckArgs {
    /// The original program.
    #[arg(value_name = "PROG")]
    pub input: String,
    /// Read the startup program of PROG from FILE (a separate Paddle dump).
    #[arg(long, value_name = "FILE")]
    pub startup: Option<String>,
    #[command(flatten)]
    pub rule: RuleArgs,
    /// Check this already rewritten program instead of applying rules.
    #[arg(long, value_name = "FILE")]
    pub rewritten: Option<String>,
    /// The startup program of `--rewritten`.
    #[arg(long = "rewritten-startup", value_name = "FILE")]
    pub rewritten_startup: Option<String>,
    /// Micro-steps (default: `--set k_steps=K`, else the rule files' `k_steps` parameter, else
    /// 1 with --rules whose files declare no `k_steps` (a pass that merges nothing), else 4);
    /// a count that disagrees with those is a usage error.
    #[arg(long = "k-steps", value_name = "K", value_parser = parse_positive)]
    pub k_steps: Option<usize>,
    /// Rows per micro-step and rank (default: the feed's rows / (K·N), or 2).
    #[arg(long = "micro-batch", value_name = "B", value_parser = parse_positive)]
    pub micro_batch: Option<usize>,
    /// Simulated ranks (default 2 for programs with collectives, else 1; at most 1024).
    #[arg(long, value_name = "N", value_parser = parse_ranks)]
    pub ranks: Option<usize>,
    /// Seed for generated inputs and random initializers.
    #[arg(long, value_name = "S", default_value_t = 0)]
    pub seed: u64,
    /// Relative tolerance, a finite number of at least 0 (default per dtype: 1e-5 f32, 1e-2
    /// bf16, 2e-3 f16).
    #[arg(long, value_name = "X", value_parser = parse_tolerance)]
    pub rtol: Option<f64>,
    /// Tolerance relative to the tensor's largest magnitude, a finite number of at least 0
    /// (same defaults).
    #[arg(long, value_name = "X", value_parser = parse_tolerance)]
    pub atol: Option<f64>,
    /// Inputs and initial state in the layout of `*.numerics.json`.
    #[arg(long, value_name = "FILE.json")]
    pub feed: Option<String>,
    /// Whether the merge averages the micro-batch gradients (default: the rule files' `avg`
    /// parameter, else true; with --rules it must agree with theirs). With false the merged
    /// gradient is compared with the gradient of the loss summed over the k micro-batches.
    #[arg(long, value_name = "BOOL")]
    pub avg: Option<bool>,
    /// Compare the rewritten program with this program (one step on the full batch) instead of
    /// the original.
    #[arg(long, value_name = "REF")]
    pub reference: Option<String>,
    /// The startup program of `--reference`, when REF holds none.
    #[arg(long = "reference-startup", value_name = "FILE")]
    pub reference_startup: Option<String>,
    #[command(flatten)]
    pub memory: MemoryArgs,
    #[command(flatten)]
    pub input_limit: InputLimitArgs,
    #[command(flatten)]
    pub timeout: TimeoutArgs,
}

/// The micro-step count `irw check` runs, from its sources, which must agree: `--k-steps K`;
/// `--set k_steps=K` (a convenience for the shipped rule files, which also sets their
/// parameter); and the rule files' `k_steps` parameter, its default when not set (`rules`:
/// `Some(None)` when rule files were loaded and declare none). A check running another count
/// than the rewrite merged compares the wrong steps, and can pass; so two counts that disagree
/// are a usage error naming both, never one silently overriding the other. Without any: 1 with
/// rule files that declare no `k_steps` (a pass that merges nothing), else 4.
fn micro_steps(
    flag: Option<usize>,
    sets: &[String],
    rules: Option<Option<usize>>,
) -> Result<usize, Failure> {
    let mut set = None;
    for s in sets {
        // A malformed `--set` is the rule loader's to report.
        let Ok((name, v)) = crate::rules::parse_set(s) else {
            continue;
        };
        if name == "k_steps" {
            let k = v.trim().parse().map_err(|_| {
                Failure::Usage(format!("--set k_steps={v}: not a positive integer"))
            })?;
            set = Some(k);
        }
    }
    let named = match (set, rules.flatten()) {
        (Some(k), _) => Some((k, format!("--set k_steps={k}"))),
        (None, Some(k)) => Some((k, format!("the rule files' k_steps ({k})"))),
        (None, None) => None,
    };
    let k = match (flag, named) {
        (Some(f), Some((k, what))) if f != k => {
            return Err(Failure::Usage(format!(
                "--k-steps {f} disagrees with {what}: the check would run {f} micro-steps of a \
                 program merged over {k}; give one count (--set k_steps=K sets both)"
            )))
        }
        (Some(k), _) | (None, Some((k, _))) => k,
        (None, None) if rules.is_some() => 1,
        (None, None) => 4,
    };
    if k == 0 {
        return Err(Failure::Usage("k_steps must be at least 1".into()));
    }
    Ok(k)
}

/// What the rule files do with `original` under `--set normalize=tokens` (grad_merge.rw's
/// token-normalized merge), for the hint of a failed merge of a token-mean loss: the files are
/// loaded again with that setting and applied to the original, so the hint recommends the
/// setting only where they take the program, and otherwise quotes their refusal. A token mean
/// is divided by the count, never summed, so the files are asked with `avg=true` where they
/// declare `avg` (the hint then says so to a user who set avg=false). `None` when they declare
/// no `normalize` parameter or the command line already sets it.
fn normalize_tokens(
    args: &RuleArgs,
    rules: &crate::rules::RuleSet,
    original: &crate::ir::Module,
    limits: &Limits,
) -> Option<Tokens> {
    let set_already = args.set.iter().any(|s| {
        s.split_once('=')
            .is_some_and(|(name, _)| name.trim() == "normalize")
    });
    if !rules.params.contains_key("normalize") || set_already {
        return None;
    }
    let mut with_tokens = args.clone();
    if rules.params.contains_key("avg") {
        with_tokens.set.retain(|s| {
            s.split_once('=')
                .is_none_or(|(name, _)| name.trim() != "avg")
        });
        with_tokens.set.push("avg=true".into());
    }
    with_tokens.set.push("normalize=tokens".into());
    let refused = |d: crate::diag::Diagnostic| Some(Tokens::Refused(d.message));
    let rules = match load_rules(&with_tokens, limits) {
        Ok(r) => r,
        Err(d) => return refused(d),
    };
    let opts = crate::rewrite::Options {
        deadline: limits.deadline(),
        egraph: args.egraph_limits(),
        max_applications: args.max_applications.unwrap_or(0),
        ..Default::default()
    };
    match crate::rewrite::apply(&mut original.clone(), &rules, &opts) {
        Ok(_) => Some(Tokens::Merged),
        Err(d) => refused(d),
    }
}

/// Runs `irw check`; prints the table; a failed comparison is an error (exit 1), a
/// batch-coupled original that passes what holds for it exits 3, a check that cannot judge (an
/// op of either program without a kernel, the original's own step not finite, a gradient zero
/// everywhere, nothing to compare) exits 4.
pub fn check_command(a: &CheckArgs, limits: &Limits) -> Result<(), Failure> {
    // `--timeout` bounds the whole command: rewriting and both programs' execution.
    let deadline = limits.deadline();
    super::io::one_standard_input(&[
        ("PROG", Some(&a.input)),
        ("--startup", a.startup.as_deref()),
        ("--rewritten", a.rewritten.as_deref()),
        ("--rewritten-startup", a.rewritten_startup.as_deref()),
        ("--reference", a.reference.as_deref()),
        ("--reference-startup", a.reference_startup.as_deref()),
        ("--feed", a.feed.as_deref()),
    ])?;
    // A startup program of a program not given would be ignored: the check would run without
    // what the user meant it to.
    for (startup, program, flag) in [
        (&a.rewritten_startup, &a.rewritten, "--rewritten"),
        (&a.reference_startup, &a.reference, "--reference"),
    ] {
        if startup.is_some() && program.is_none() {
            return Err(Failure::Usage(format!(
                "{flag}-startup needs {flag}: it is the startup program of that program"
            )));
        }
    }
    let original = load_module_files(&a.input, a.startup.as_deref(), limits)?;
    // The rewritten program is the original's ops where rules kept them: its errors point into
    // the original's files, unless it was read from its own.
    let (rewritten_files, rewritten_by_rules);
    // The micro-step count the rule files imply: their `k_steps` parameter's value, or none
    // declared (nothing is merged: comparing k micro-steps with one big step would fail
    // whatever the pass did).
    let mut k_from_rules = None;
    let mut avg_from_rules = None;
    let mut tokens = None;
    let (rewritten, rewritten_src) = match &a.rewritten {
        Some(path) => {
            rewritten_files = load_module_files(path, a.rewritten_startup.as_deref(), limits)?;
            (&rewritten_files.module, rewritten_files.sources())
        }
        None if a.rule.rules.is_empty() => {
            return Err(Failure::Usage(
                "give --rules FILE or --rewritten FILE".into(),
            ));
        }
        None => {
            let rules = load_rules(&a.rule, limits)?;
            k_from_rules = Some(match rules.params.get("k_steps").map(|p| &p.value) {
                Some(crate::rules::Val::Int(k)) => Some(usize::try_from(*k).unwrap_or(0)),
                _ => None,
            });
            avg_from_rules = match rules.params.get("avg").map(|p| &p.value) {
                Some(crate::rules::Val::Bool(b)) => Some(*b),
                _ => None,
            };
            let mut m = original.module.clone();
            // Errors a rule raises at an op point at the op's line in INPUT.
            apply_rules_knowing_misfits(
                &mut m,
                Some(&original.main),
                Some(&original.misfits),
                &rules,
                &a.rule,
                limits,
            )?;
            rewritten_by_rules = m;
            tokens = normalize_tokens(&a.rule, &rules, &original.module, limits);
            (&rewritten_by_rules, original.sources())
        }
    };
    let k = micro_steps(a.k_steps, &a.rule.set, k_from_rules)?;
    if let (Some(flag), Some(rules_avg)) = (a.avg, avg_from_rules) {
        if flag != rules_avg {
            return Err(Failure::Usage(format!(
                "--avg {flag} disagrees with the rule files' avg ({rules_avg}): the check would \
                 judge a merge with avg={rules_avg} as one with avg={flag}; give one (--set \
                 avg=B sets both)"
            )));
        }
    }
    // What the rewritten program is compared with: the original, or `--reference`.
    let reference = a
        .reference
        .as_deref()
        .map(|r| load_module_files(r, a.reference_startup.as_deref(), limits))
        .transpose()?;
    let base = reference.as_ref().unwrap_or(&original);
    let feed = a
        .feed
        .as_deref()
        .map(|f| load_feed(f, limits, a.memory.bytes(), &base.module, base.sources()))
        .transpose()?;
    // Bad input: an op whose stage cannot be read.
    if let Some(d) = malformed_roles(&[
        (&base.module, base.sources(), "original"),
        (rewritten, rewritten_src, "rewritten"),
    ]) {
        return Err(d.into());
    }
    // A program the executor cannot run leaves the rewrite unjudged: nothing is known about
    // it, and scripts must not read that as a FAIL.
    if let Some(d) = missing_kernels(&[
        (&base.module, base.sources(), "original"),
        (rewritten, rewritten_src, "rewritten"),
    ]) {
        super::streams::eprint(&d.to_string());
        // What needs no run is still said: a batch-coupled original can never be merged exactly.
        let m = &base.module;
        for c in crate::exec::coupling::find(&m.ctx, &m.main, base.sources().main) {
            err_println!(
                "{}",
                c.line("no gradient merge can equal the full-batch step")
            );
        }
        err_println!(
            "error: irw check cannot judge the rewrite: the executor cannot run every op of the programs"
        );
        return Err(Failure::NotJudged);
    }
    if let Some(d) = random_draws(&[
        (&base.module, base.sources(), "original"),
        (rewritten, rewritten_src, "rewritten"),
    ]) {
        super::streams::eprint(&d.to_string());
        err_println!(
            "error: irw check cannot judge the rewrite: the step draws random numbers, so no merge can equal the full-batch step exactly"
        );
        return Err(Failure::NotJudged);
    }
    let opts = CheckOptions {
        k_steps: k,
        micro_batch: a.micro_batch,
        ranks: a.ranks,
        seed: a.seed,
        rtol: a.rtol,
        atol: a.atol,
        avg: a.avg.or(avg_from_rules).unwrap_or(true),
        feed,
        max_memory: a.memory.bytes(),
        deadline,
        tokens,
    };
    let report = check_with_sources(
        &base.module,
        base.sources(),
        rewritten,
        rewritten_src,
        &opts,
    )?;
    if let Some(r) = &a.reference {
        // The report's words are the general case's: say whom they are about here.
        super::streams::print(&format!(
            "irw check: the rewritten program is compared with --reference {r}: \"the original\" below is that program\n"
        ))?;
    }
    super::streams::print(&report.to_string())?;
    match report.outcome() {
        // Its own verdict: what a gradient merge can reproduce holds, but the full-batch step
        // the user asked about does not exist for this program.
        Outcome::Pass if report.batch_coupled() => Err(Failure::BatchCoupled),
        Outcome::Pass => Ok(()),
        Outcome::Fail => {
            let names: Vec<String> = report
                .failures()
                .map(|r| format!("{} ({})", r.tensor, r.kind))
                .collect();
            err_println!(
                "error: the rewritten program does not compute the same step: {}",
                names.join(", ")
            );
            Err(Failure::Mismatch)
        }
        Outcome::NotJudged => {
            let why = match &report.refusal {
                Some(why) => why.clone(),
                None => {
                    let names: Vec<String> = report
                        .unchecked()
                        .map(|r| format!("{} ({})", r.tensor, r.kind))
                        .collect();
                    format!(
                        "the original's gradient is zero everywhere on these inputs for {}",
                        names.join(", ")
                    )
                }
            };
            err_println!("error: irw check cannot judge the rewrite: {why}");
            Err(Failure::NotJudged)
        }
    }
}
