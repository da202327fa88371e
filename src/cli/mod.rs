//! The `irw` command line.
//!
//! `irw [--rules FILE]... [--set NAME=VALUE]... [--startup FILE] [-o FILE] INPUT` reads a
//! program, applies rule files, verifies, and prints. Subcommands: `check` (prove a rewrite
//! numerically), `run` (execute a program), `gen` (generate programs).
//!
//! Exit codes: 0 success, 1 bad input (a diagnostic was printed) or a failed check, 2 bad usage.

// Every line goes through `streams`, which never panics on a closed pipe or a full device.
#![deny(clippy::print_stdout, clippy::print_stderr)]

/// `eprintln!` through [`streams::eprint`]: dropped, never a panic, when standard error is gone.
macro_rules! err_println {
    ($($t:tt)*) => { $crate::cli::streams::eprintln(&format!($($t)*)) };
}

mod check;
mod io;
mod limits;
mod ops;
mod pair;
mod run;
mod streams;

pub use io::{default_max_input_bytes, write_output, write_outputs, Content};
pub use limits::{InputLimitArgs, Limits, MemoryArgs, TimeoutArgs};
pub use streams::set_closed_at_start;

use crate::diag::{Diagnostic, SourceFile};
use crate::exec::run::MAX_RANKS;
use crate::ir::{self, Module};
use crate::json;
use clap::{Args, Parser, Subcommand};
use std::time::Instant;

const EXAMPLES: &str = "\
Examples:
  irw prog.ir                                             parse, verify and print a program
  irw --rules rules/grad_merge.rw --set k_steps=4 prog.ir  gradient merge over 4 micro-batches
  irw --rules rules/grad_merge.rw --set k_steps=4 main.ir --startup startup.ir -o out.ir
  irw check --rules rules/grad_merge.rw --set k_steps=4 prog.ir   prove the rewrite numerically
  irw --rules rules/grad_merge.rw --rules rules/examples/global_norm_clip.rw \\
      --set k_steps=4 --set clip_norm=1.0 prog.ir         rule files in order: merge, then clip
  irw gen mlp --layers 8 -o mlp.ir                        a training program for an 8-layer MLP
  irw main.json --startup startup.json --emit paddle-json -o out.json --startup-out out_startup.json
                                                          Paddle PIR JSON in and out

A program file holds a main program `{ ... }` and optionally `startup { ... }` after it, exactly
as Paddle prints them (`print(program)`); `--startup FILE` reads a separately dumped startup
program instead. The output holds both, main first. Any input may instead be Paddle's PIR JSON
(`serialize_pir_program`); it is recognized by its content.";

/// A declarative rewrite-rule engine for PaddlePaddle training programs.
#[derive(Parser, Debug)]
#[command(name = "irw", version, about, after_help = EXAMPLES, args_conflicts_with_subcommands = true)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
    #[command(flatten)]
    rewrite: RewriteArgs,
    #[command(flatten)]
    input_limit: InputLimitArgs,
    #[command(flatten)]
    timeout: TimeoutArgs,
}

/// Parses a limit's size, `1048576`, `512K`, `64M`, `4G` (also `KiB`, `MB`, ...; powers of
/// 1024), of at least 1 byte: every size flag is a limit (`--max-input-size`, `--max-memory`),
/// and a limit of 0 would refuse everything, so 0 is bad usage rather than a silent "no input"
/// or "no limit".
pub fn parse_size(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let digits = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (num, unit) = t.split_at(digits);
    let n: u64 = num
        .parse()
        .map_err(|_| format!("`{s}` is not a size (bytes, or a number with K, M or G)"))?;
    let shift = match unit.trim().to_ascii_uppercase().as_str() {
        "" | "B" => 0,
        "K" | "KB" | "KIB" => 10,
        "M" | "MB" | "MIB" => 20,
        "G" | "GB" | "GIB" => 30,
        _ => return Err(format!("`{s}`: unknown unit `{unit}` (use K, M or G)")),
    };
    match n.checked_mul(1 << shift) {
        None => Err(format!("`{s}` is too large")),
        Some(0) => Err(format!(
            "`{s}` is no limit: a size is at least 1 byte (leave the flag out for the default)"
        )),
        Some(n) => Ok(n),
    }
}

/// Parses a whole number of at least 1 (`--egraph-iters`, `--egraph-nodes`).
pub fn parse_positive(s: &str) -> Result<usize, String> {
    match s.trim().parse::<usize>() {
        Ok(n) if n > 0 => Ok(n),
        _ => Err(format!("`{s}` is not a whole number of at least 1")),
    }
}

/// [`parse_positive`] as the type that says so (`gen mlp --layers`).
fn parse_nonzero(s: &str) -> Result<std::num::NonZeroUsize, String> {
    s.trim()
        .parse()
        .map_err(|_| format!("`{s}` is not a whole number of at least 1"))
}

/// `--ranks`: 1 to [`MAX_RANKS`].
pub fn parse_ranks(s: &str) -> Result<usize, String> {
    match s.trim().parse::<usize>() {
        Ok(n) if (1..=MAX_RANKS).contains(&n) => Ok(n),
        _ => Err(format!(
            "`{s}` is not a number of ranks from 1 to {MAX_RANKS}"
        )),
    }
}

/// Parses a positive, finite number of seconds (`--egraph-time`).
fn parse_positive_seconds(s: &str) -> Result<std::time::Duration, String> {
    match parse_seconds(s) {
        Ok(d) if !d.is_zero() => Ok(d),
        _ => Err(format!("`{s}` is not a positive number of seconds")),
    }
}

/// Parses a non-negative, finite number of seconds (`10`, `0.5`).
pub fn parse_seconds(s: &str) -> Result<std::time::Duration, String> {
    s.trim()
        .parse::<f64>()
        .ok()
        .and_then(|x| std::time::Duration::try_from_secs_f64(x).ok())
        .ok_or_else(|| format!("`{s}` is not a number of seconds"))
}

/// Parses a tolerance of `irw check` (`--rtol`, `--atol`): a finite number of at least 0. A
/// NaN or infinite tolerance would admit every difference (`inf·0` is NaN, and no comparison
/// with NaN fails), and a negative one none: both are refused as usage errors, never judged
/// with.
pub fn parse_tolerance(s: &str) -> Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(x) if x.is_finite() && x >= 0.0 => Ok(x),
        _ => Err(format!(
            "`{s}` is not a tolerance (a finite number of at least 0)"
        )),
    }
}

/// What `irw check --help` says each row of the table compares.
const CHECK_ROWS: &str = "\
The original runs one step on k·B rows per rank; the rewritten program runs k micro-steps of B
rows with Paddle's schedule (op_role 2 only on the last), from the same initial state. Rows:
  grad          the gradient each optimizer consumed, against the full-batch gradient
  param, state  against the original's optimizers applied to the rewritten program's
                gradients: a wrong gradient fails at its grad row, a wrong update here
  init          a persistable of the original that the rewritten startup initializes otherwise
  buffer        state the rewrite added: back at its initial value, and not 16-bit
  frozen        nothing may change before the last micro-step
  replica       all ranks end with the same values
Tolerance per tensor: |a - b| <= rtol*|b| + atol*max|b| (1e-5 for f32), max|b| over that
tensor's own reference values (for a gradient, also its value on each micro-batch alone).
Verdicts: ok, FAIL, unchecked (the original's gradient is zero everywhere: nothing to compare),
noise (the original's full-batch gradient and its micro-batch gradients combined differ by that
tensor's own rounding, as the same step on reversed rows shows it, or by the bf16/f16 rounding
of a program that computes in them: judged to the level measured on the original; does not
block a PASS).
Exit codes: 0 PASS, 1 FAIL, 2 bad usage, 3 BATCH-COUPLED (the original mixes the rows of its
batch; what holds instead passed), 4 NOT JUDGED (an op of either program has no kernel,
listed all at once before anything runs; the step draws random numbers; the original's step is
not finite; a gradient is zero everywhere; or the program has nothing to compare).

Example:
  irw check --rules rules/grad_merge.rw --set k_steps=4 examples/mlp.ir";

#[derive(Subcommand, Debug)]
enum Command {
    /// Rewrite a program, run the original and the rewritten one, and compare them numerically.
    #[command(after_long_help = CHECK_ROWS)]
    Check(Box<check::CheckArgs>),
    /// Execute a program with Paddle's schedule and print the loss per step.
    Run(run::RunArgs),
    /// Generate training programs exactly as Paddle prints them.
    #[command(subcommand)]
    Gen(GenCommand),
    /// Compare two programs structurally: equal up to value renaming, the order of independent
    /// ops, and repeats of an identical pure op, which count once as CSE would merge them (exit
    /// code 0 when equal, 1 when not).
    Diff(DiffArgs),
    /// Report pairs of ops that access a buffer written in place, at least one writing it, and
    /// that Paddle's multi-threaded executor leaves unordered, and, in auto-parallel programs,
    /// op_dist_attrs that disagree with their types (exit code 1 when there are any).
    Lint(LintArgs),
    /// The dialect reference: an op's operands, attributes (Paddle types and defaults), results,
    /// result-type rule, effect, in-place pairs and whether the executor runs it; a pattern
    /// with `*` lists signatures.
    Ops(ops::OpsArgs),
}

#[derive(Args, Debug)]
struct LintArgs {
    /// The program file (Paddle's text or PIR JSON; only the main program is checked).
    input: String,
    #[command(flatten)]
    input_limit: InputLimitArgs,
}

#[derive(Args, Debug)]
struct DiffArgs {
    /// The first program file (main, optionally with `startup { ... }`).
    a: String,
    /// The second program file.
    b: String,
    /// Read A's startup program from FILE.
    #[arg(long, value_name = "FILE")]
    startup_a: Option<String>,
    /// Read B's startup program from FILE.
    #[arg(long, value_name = "FILE")]
    startup_b: Option<String>,
    /// Leave attribute NAME out of the comparison (repeatable), e.g. `struct_name`.
    #[arg(long = "ignore-attr", value_name = "NAME")]
    ignore_attr: Vec<String>,
    /// Show at most N differing ops per side.
    #[arg(long, value_name = "N", default_value_t = 20)]
    max_lines: usize,
    #[command(flatten)]
    input_limit: InputLimitArgs,
}

/// How rules are applied: the options the rewrite command and `irw check` share.
#[derive(Args, Debug, Default, Clone)]
pub struct RuleArgs {
    /// A rule file to apply (repeatable; applied in order, each time it is given).
    #[arg(long = "rules", value_name = "FILE")]
    pub rules: Vec<String>,
    /// Set a rule parameter, e.g. `--set k_steps=4` (repeatable).
    #[arg(long = "set", value_name = "NAME=VALUE")]
    pub set: Vec<String>,
    /// A directory where imports not found beside the importing rule file are looked for
    /// (repeatable, searched in order, then the directories of IRW_RULES_PATH, `:`-separated).
    #[arg(long = "rules-path", value_name = "DIR")]
    pub rules_path: Vec<String>,
    /// Print statistics (rule firings, e-graph size and limits, time per phase) to standard
    /// error.
    #[arg(long)]
    pub stats: bool,
    /// Print one line per rule application (per equational rule and saturation) to standard
    /// error.
    #[arg(long)]
    pub trace: bool,
    /// Stop with an error when one structural rule applies more than N times in a phase (a rule
    /// that may be looping) [default: 16 × the program's ops + 1000].
    #[arg(long, value_name = "N", value_parser = parse_positive)]
    pub max_applications: Option<usize>,
    /// Stop each e-graph saturation (equational rules) after N iterations [default: 30].
    #[arg(long, value_name = "N", value_parser = parse_positive)]
    pub egraph_iters: Option<usize>,
    /// Stop each e-graph saturation when it holds more than N e-nodes [default: 4 × its initial
    /// size + 10000].
    #[arg(long, value_name = "N", value_parser = parse_positive)]
    pub egraph_nodes: Option<usize>,
    /// Stop each e-graph saturation after SECONDS (and never past --timeout) [default: 10].
    #[arg(long, value_name = "SECONDS", value_parser = parse_positive_seconds)]
    pub egraph_time: Option<std::time::Duration>,
}

impl RuleArgs {
    /// The e-graph limits these flags ask for (the defaults where a flag is absent).
    fn egraph_limits(&self) -> crate::egraph::Limits {
        let mut l = crate::egraph::Limits::default();
        if let Some(n) = self.egraph_iters {
            l = l.with_iter_limit(n);
        }
        if let Some(n) = self.egraph_nodes {
            l = l.with_node_limit(n);
        }
        if let Some(t) = self.egraph_time {
            l = l.with_time_limit(t);
        }
        l
    }
}

/// Options of the rewrite command (the default command).
#[derive(Args, Debug, Default)]
struct RewriteArgs {
    #[command(flatten)]
    pub rule: RuleArgs,
    /// Read the startup program from FILE (a separate Paddle dump).
    #[arg(long, value_name = "FILE")]
    pub startup: Option<String>,
    /// Write the result to FILE (atomically) instead of standard output.
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    pub output: Option<String>,
    /// Output format: Paddle's program text, or Paddle's PIR JSON (what
    /// `paddle.base.core.deserialize_pir_program` loads).
    #[arg(long, value_enum, default_value_t = Emit::Text)]
    pub emit: Emit,
    /// Write the startup program to FILE (required with `--emit paddle-json` when there is one);
    /// FILE and the `-o` file are replaced together or not at all.
    #[arg(long = "startup-out", value_name = "FILE")]
    pub startup_out: Option<String>,
    /// The program to read (`-` for standard input).
    #[arg(value_name = "INPUT")]
    pub input: Option<String>,
}

/// Output format of the rewrite command.
#[derive(clap::ValueEnum, Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Emit {
    /// The text Paddle prints (`print(program)`).
    #[default]
    Text,
    /// Paddle's PIR JSON, version 4 (Paddle 3.3.1).
    PaddleJson,
}

#[derive(Subcommand, Debug)]
enum GenCommand {
    /// An N-layer MLP training program (width 16, relu, MSE loss).
    Mlp(GenMlpArgs),
    /// A small convolutional training program (conv2d, relu, max pool, flatten, linear,
    /// cross-entropy, SGD).
    Cnn(GenCnnArgs),
    /// A tiny language-model head whose loss is the mean over the real tokens of a padded
    /// batch: sum(l·mask) / sum(mask), `mask` a data input (the form `grad_merge.rw --set
    /// normalize=tokens` merges).
    Lm(GenLmArgs),
}

#[derive(Args, Debug)]
struct GenLmArgs {
    /// Write to FILE (atomically) instead of standard output.
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    output: Option<String>,
}

#[derive(Args, Debug)]
struct GenCnnArgs {
    /// A train-mode batch_norm_ after the convolution: the forward mixes the rows of the batch
    /// (`irw check` gives its batch-coupled verdict).
    #[arg(long)]
    batch_norm: bool,
    /// Write to FILE (atomically) instead of standard output.
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    output: Option<String>,
}

#[derive(Args, Debug)]
struct GenMlpArgs {
    /// Number of linear layers (at least 1); about 10 main ops per layer.
    #[arg(long, default_value = "3", value_parser = parse_nonzero)]
    layers: std::num::NonZeroUsize,
    /// Optimizer: sgd, momentum, adam or adamw.
    #[arg(long, default_value = "sgd")]
    optimizer: crate::gen::Optimizer,
    /// Parameter dtype: f32, or bf16 with f32 master weights and master gradients.
    #[arg(long, default_value = "f32")]
    dtype: crate::gen::Dtype,
    /// Data parallel: a collective sums each parameter gradient over the ranks, right after the
    /// backward op that computes it (see --collective).
    #[arg(long)]
    allreduce: bool,
    /// The op --allreduce sums with: `c_allreduce_sum` (Paddle's legacy op, as in
    /// allreduce_sync1_before.ir; Paddle 3.3.1 has GPU kernels only) or `all_reduce`
    /// (`pd_op.all_reduce {reduce_type:0}`, SUM; what Paddle 3.3.1 runs on CPU over gloo, so
    /// use it for programs that train in real processes, tests/interop/dp2.sh).
    #[arg(
        long,
        value_name = "OP",
        default_value = "c_allreduce_sum",
        requires = "allreduce"
    )]
    collective: crate::gen::Collective,
    /// Leave out the `op_role` attributes (as a program built without roles prints).
    #[arg(long)]
    no_roles: bool,
    /// Dynamic loss scaling (AMP; f32 only): the loss times a persistable `loss_scaling`
    /// (32768) before backward, `check_finite_and_unscale_` and `update_loss_scaling_` on the
    /// gradients before the optimizers, as Paddle prints them.
    #[arg(long, conflicts_with = "dist")]
    loss_scaling: bool,
    /// An auto-parallel (Engine) program on a mesh of N processes: `pd_dist.tensor` types with
    /// the data `Shard(dim=0)` and parameters `Replicate()`, an `op_dist_attr` on every op, and
    /// each gradient averaged over the mesh by a `pd_op.all_reduce` in the optimize stage, as
    /// the Engine syncs them (with `--allreduce --collective all_reduce`: in the backward stage,
    /// right after each gradient). `irw check` runs it on N simulated ranks.
    #[arg(long, value_name = "N", conflicts_with = "no_roles",
          value_parser = clap::value_parser!(u16).range(1..=1024))]
    dist: Option<u16>,
    /// Write to FILE (atomically) instead of standard output.
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    output: Option<String>,
}

/// Runs the command line; returns the process exit code.
pub fn main() -> i32 {
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) if e.use_stderr() => {
            let _ = e.print();
            return 2;
        }
        // `--help`, `help`, `-V`: the text is the command's result.
        Err(e) => return exit_code(streams::print_clap(&e)),
    };
    // A subcommand's own flags; the top-level ones are the rewrite command's (clap refuses them
    // before a subcommand's name).
    let (input_limit, timeout) = match &cli.command {
        None => (&cli.input_limit, cli.timeout.timeout),
        Some(Command::Check(a)) => (&a.input_limit, a.timeout.timeout),
        Some(Command::Run(a)) => (&a.input_limit, a.timeout.timeout),
        Some(Command::Diff(a)) => (&a.input_limit, None),
        Some(Command::Lint(a)) => (&a.input_limit, None),
        Some(Command::Gen(_)) | Some(Command::Ops(_)) => (&InputLimitArgs::default(), None),
    };
    let limits = Limits::new(input_limit, timeout);
    let result = match &cli.command {
        None => rewrite_command(&cli.rewrite, &limits),
        Some(Command::Check(a)) => check::check_command(a, &limits),
        Some(Command::Run(a)) => run::run_command(a, &limits),
        Some(Command::Gen(GenCommand::Mlp(a))) => gen_mlp_command(a),
        Some(Command::Gen(GenCommand::Cnn(a))) => {
            let text = crate::gen::cnn::cnn(&crate::gen::cnn::CnnOptions {
                batch_norm: a.batch_norm,
            });
            write_output(a.output.as_deref().unwrap_or("-"), &text)
        }
        Some(Command::Gen(GenCommand::Lm(a))) => {
            write_output(a.output.as_deref().unwrap_or("-"), &crate::gen::lm::lm())
        }
        Some(Command::Diff(a)) => diff_command(a, &limits),
        Some(Command::Lint(a)) => lint_command(a, &limits),
        Some(Command::Ops(a)) => ops::ops_command(a),
    };
    exit_code(result)
}

/// The exit code of a command that ended with `result`, whose error is printed here.
fn exit_code(result: Result<(), Failure>) -> i32 {
    match result {
        Ok(()) => 0,
        Err(Failure::Input(d)) => {
            streams::eprint(&d.to_string());
            1
        }
        Err(Failure::Mismatch) => 1,
        Err(Failure::BatchCoupled) => 3,
        Err(Failure::NotJudged) => 4,
        Err(Failure::BrokenPipe) => streams::BROKEN_PIPE_EXIT,
        Err(Failure::UsageDiag(d)) => {
            streams::eprint(&d.to_string());
            2
        }
        Err(Failure::Usage(msg)) => {
            streams::eprint(&format!(
                "error: {msg}\n\nFor more information, try '--help'.\n"
            ));
            2
        }
    }
}

/// Why a command failed.
pub enum Failure {
    /// Bad input: exit code 1.
    Input(Diagnostic),
    /// Bad usage: exit code 2.
    Usage(String),
    /// A comparison or check found a difference (already reported): exit code 1.
    Mismatch,
    /// `irw check` on a batch-coupled original (already reported): gradient merge cannot be
    /// the full-batch step, and what holds instead did: exit code 3.
    BatchCoupled,
    /// `irw check` cannot judge the rewrite on these inputs (already reported): exit code 4.
    NotJudged,
    /// Bad usage found while loading rules (a `--set` value): exit code 2.
    UsageDiag(Diagnostic),
    /// Standard output's reader went away: exit quietly with [`streams::BROKEN_PIPE_EXIT`].
    BrokenPipe,
}

impl From<Diagnostic> for Failure {
    fn from(d: Diagnostic) -> Self {
        if d.usage {
            Failure::UsageDiag(d)
        } else {
            Failure::Input(d)
        }
    }
}

/// Reads INPUT (and `--startup`), parses and verifies them.
fn load_module(input: &str, startup: Option<&str>, limits: &Limits) -> Result<Module, Diagnostic> {
    load_module_with_hints(input, startup, limits).map(|(m, _)| m)
}

/// [`load_module`], also returning the attribute tags JSON inputs used (for writing JSON back).
/// Each file may be Paddle's program text or its PIR JSON, told apart by content.
fn load_module_with_hints(
    input: &str,
    startup: Option<&str>,
    limits: &Limits,
) -> Result<(Module, json::TagHints), Diagnostic> {
    load_module_full(input, startup, limits).map(|(m, h, _)| (m, h))
}

/// [`load_module_with_hints`], also returning INPUT's text (so `--trace` can point at its
/// lines).
fn load_module_full(
    input: &str,
    startup: Option<&str>,
    limits: &Limits,
) -> Result<(Module, json::TagHints, SourceFile), Diagnostic> {
    load_module_files(input, startup, limits).map(|l| (l.module, l.hints, l.main))
}

/// A module with the files it was read from.
pub struct Loaded {
    pub module: Module,
    pub hints: json::TagHints,
    /// INPUT's text.
    pub main: SourceFile,
    /// The `--startup` file's text, if one was given.
    pub startup: Option<SourceFile>,
    /// The input's ops whose attributes misfit Paddle's definitions
    /// ([`crate::dialect::misfit_ops`]), found with the warnings at loading, so that a rewrite of
    /// this module need not look for them again ([`apply_rules_to`]).
    pub misfits: MisfitOps,
}

/// What the input's check against the dialect found, kept for the check of a rewrite of it.
#[derive(Default)]
pub struct MisfitOps {
    /// The ops with misfits, by program and id, as [`crate::dialect::misfit_ops`] gives them.
    pub ops: rustc_hash::FxHashSet<(ir::Which, ir::OpId)>,
    /// The input's pairs of op name and dictionary without a misfit: ops with one of them
    /// cannot have a new misfit after a rewrite.
    pub fitting: crate::dialect::NameAndAttrs,
}

impl MisfitOps {
    /// The misfits `findings` found, with the pairs `fitting` of `findings_beyond`.
    fn of(findings: &[crate::dialect::Finding], fitting: crate::dialect::NameAndAttrs) -> Self {
        MisfitOps {
            ops: crate::dialect::misfit_ops(findings),
            fitting,
        }
    }
}

impl Loaded {
    /// The files as the executor wants them, so errors at an op can show its line.
    pub fn sources(&self) -> crate::exec::interp::Sources<'_> {
        crate::exec::interp::Sources {
            main: Some(&self.main),
            startup: Some(self.startup.as_ref().unwrap_or(&self.main)),
        }
    }
}

/// Reads INPUT (and `--startup`), parses and verifies them, keeping their texts; warns about
/// the input's disagreements with the dialect.
pub fn load_module_files(
    input: &str,
    startup: Option<&str>,
    limits: &Limits,
) -> Result<Loaded, Diagnostic> {
    let (loaded, warnings) = load_module_files_quietly(input, startup, limits)?;
    for w in &warnings {
        streams::eprintln(w);
    }
    Ok(loaded)
}

/// [`load_module_files`] with its warnings returned instead of printed, for a caller that
/// loads the module beside other work and prints them once that work has succeeded.
fn load_module_files_quietly(
    input: &str,
    startup: Option<&str>,
    limits: &Limits,
) -> Result<(Loaded, Vec<String>), Diagnostic> {
    // The verifier needs the dialect table: it is built on a thread of its own while the input
    // is read and parsed (or, if no thread can be made, when the verifier first asks).
    let _ = std::thread::Builder::new().spawn(crate::dialect::Dialect::get);
    let src = io::read_source_within(input, limits.max_input_bytes, limits.timeout)?;
    let mut hints = json::TagHints::default();
    let mut module = read_main(&src, &mut hints)?;
    let mut startup_src = None;
    if let Some(s) = startup {
        if module.startup.is_some() {
            return Err(Diagnostic::error(format!(
                "{input} already holds a startup program; --startup {s} would replace it"
            )));
        }
        let ssrc = io::read_source_within(s, limits.max_input_bytes, limits.timeout)?;
        read_startup(&mut module, &ssrc, &mut hints)?;
        startup_src = Some(ssrc);
    }
    verify_read(&module, &src, startup_src.as_ref())?;
    let mut warnings = Vec::new();
    let misfits = dialect_warnings(&module, &src, startup_src.as_ref(), &mut warnings);
    let loaded = Loaded {
        module,
        hints,
        main: src,
        startup: startup_src,
        misfits,
    };
    Ok((loaded, warnings))
}

/// The module a program text holds: Paddle's printed program or its PIR JSON, told apart by
/// content (both start with `{`). Every command and the library read a program this way.
pub(crate) fn read_main(
    src: &SourceFile,
    hints: &mut json::TagHints,
) -> Result<Module, Diagnostic> {
    if json::looks_like_json(&src.text) {
        json::read_module_with_hints(src, hints)
    } else {
        ir::parse_module(src)
    }
}

/// Adds the startup program `src` holds (text or JSON, as [`read_main`]) to `module`.
pub(crate) fn read_startup(
    module: &mut Module,
    src: &SourceFile,
    hints: &mut json::TagHints,
) -> Result<(), Diagnostic> {
    if json::looks_like_json(&src.text) {
        json::read_startup_into(module, src, hints)
    } else {
        ir::parse_startup_into(module, src)
    }
}

/// Verifies a module read from `main` (and `startup`, when the startup program came from a
/// file of its own), with the error shown in the text it is about.
pub(crate) fn verify_read(
    module: &Module,
    main: &SourceFile,
    startup: Option<&SourceFile>,
) -> Result<(), Diagnostic> {
    crate::dialect::verify_module(module).map_err(|e| {
        let src = match e.which {
            ir::Which::Startup if startup.is_some() => startup,
            _ => Some(main),
        };
        e.to_diagnostic(module, src)
    })
}

/// The warnings about the input's disagreements with the dialect
/// ([`crate::dialect::findings_beyond`]): attribute values that do not fit Paddle's definition,
/// attributes of the definition an op lacks, and unknown ops named like known ones, each a line
/// pushed onto `warnings`. Returns the ops with
/// misfits.
fn dialect_warnings(
    module: &Module,
    main: &SourceFile,
    startup: Option<&SourceFile>,
    warnings: &mut Vec<String>,
) -> MisfitOps {
    let (findings, fitting) = crate::dialect::findings_beyond(module, &Default::default());
    for f in &findings {
        let e = dialect_error(module, f);
        let src = match f.which {
            ir::Which::Startup if startup.is_some() => startup,
            _ => Some(main),
        };
        let d = e.to_diagnostic(module, src).to_string();
        warnings.push(d.trim_end().replacen("error: ", "warning: ", 1));
    }
    MisfitOps::of(&findings, fitting)
}

/// A dialect finding as the verifier's error, to render with a position.
fn dialect_error(module: &Module, f: &crate::dialect::Finding) -> ir::VerifyError {
    let p = match f.which {
        ir::Which::Startup => module.startup.as_ref().unwrap_or(&module.main),
        ir::Which::Main => &module.main,
    };
    ir::VerifyError {
        which: f.which,
        op: Some(f.op),
        message: format!("`{}` {}", module.ctx.str(p.op_name(f.op)), f.message),
    }
}

/// Reads (with the input size limit, like every input) and parses a feed file (`--feed`), its
/// tensors within `max_memory` bytes, and checks it against the program that reads it.
pub fn load_feed(
    path: &str,
    limits: &Limits,
    max_memory: u64,
    module: &Module,
    sources: crate::exec::interp::Sources<'_>,
) -> Result<crate::exec::feed::Feed, Diagnostic> {
    let src = io::read_source_within(path, limits.max_input_bytes, limits.timeout)?;
    let feed = crate::exec::feed::Feed::parse_limited(&src.name, &src.text, max_memory)?;
    feed.validate(module, sources, &src)?;
    Ok(feed)
}

/// Loads the rule files named on the command line, with their `--set` values. All errors in
/// the rule files are reported here, before anything runs.
pub fn load_rules(args: &RuleArgs, limits: &Limits) -> Result<crate::rules::RuleSet, Diagnostic> {
    // Imports are regular files (the loader refuses others); a `--rules` path may be a pipe
    // (`--rules <(...)`), whose read can block.
    let blocking = args
        .rules
        .iter()
        .any(|p| std::fs::metadata(p).is_ok_and(|m| !m.is_file()));
    let _watch = io::Watchdog::start(
        limits.timeout.filter(|_| blocking),
        "reading the rule files".into(),
    );
    let sets = args
        .set
        .iter()
        .map(|s| crate::rules::parse_set(s))
        .collect::<Result<Vec<_>, _>>()?;
    // A repeated name is a mistake (which value was meant?), never a silent "last one wins".
    for (i, (name, value)) in sets.iter().enumerate() {
        if let Some((_, first)) = sets[..i].iter().find(|(n, _)| n == name) {
            return Err(Diagnostic::error(format!(
                "--set {name} given twice (`{name}={first}` and `{name}={value}`)"
            ))
            .with_hint("give each rule parameter at most once")
            .as_usage());
        }
    }
    let paths: Vec<std::path::PathBuf> = args.rules.iter().map(std::path::PathBuf::from).collect();
    let mut search: Vec<std::path::PathBuf> = args
        .rules_path
        .iter()
        .map(std::path::PathBuf::from)
        .collect();
    if let Some(env) = std::env::var_os("IRW_RULES_PATH") {
        search.extend(std::env::split_paths(&env).filter(|p| !p.as_os_str().is_empty()));
    }
    crate::rules::load_with_path(&paths, &sets, &search)
}

/// Applies `rules` to `module`, read from `input`, and verifies the result; prints
/// `--stats`/`--trace` output (`--trace` lines show the input's lines). An error a rule raises
/// at an op is reported at that op's line in `input`. Rewriting stops with an error after
/// `limits.timeout`.
pub fn apply_rules_to(
    module: &mut Module,
    input: Option<&SourceFile>,
    rules: &crate::rules::RuleSet,
    args: &RuleArgs,
    limits: &Limits,
) -> Result<(), Diagnostic> {
    apply_rules_knowing_misfits(module, input, None, rules, args, limits).map(|_| ())
}

/// [`apply_rules_to`] given the module's ops whose attributes misfit the dialect, if the caller
/// has them ([`Loaded::misfits`]: loading found them with its warnings); they are looked for
/// otherwise. Returns what the rules did (which rule built each op, for a later error at it).
pub fn apply_rules_knowing_misfits(
    module: &mut Module,
    input: Option<&SourceFile>,
    misfits: Option<&MisfitOps>,
    rules: &crate::rules::RuleSet,
    args: &RuleArgs,
    limits: &Limits,
) -> Result<crate::rewrite::Stats, Diagnostic> {
    let opts = crate::rewrite::Options {
        trace: args.trace,
        deadline: limits.deadline(),
        egraph: args.egraph_limits(),
        max_applications: args.max_applications.unwrap_or(0),
    };
    let mismatches = ir::verify_dist::dist_mismatches(module);
    let dist_before = ir::verify_dist::mismatched_ops(&mismatches);
    if let Some(first) = mismatches.first() {
        let d = first.to_diagnostic(module, input);
        err_println!(
            "warning: {} op(s) of the input carry an op_dist_attr that disagrees with their types (kept as written; irw's own ops get correct ones); the first:\n{}",
            dist_before.len(),
            d.to_string().trim_end().replacen("error: ", "", 1)
        );
    }
    let found;
    let misfits_before = match misfits {
        Some(m) => m,
        None => {
            let (findings, fitting) = crate::dialect::findings_beyond(module, &Default::default());
            found = MisfitOps::of(&findings, fitting);
            &found
        }
    };
    let mut stats = crate::rewrite::Stats::default();
    let applied = crate::rewrite::apply_recording(module, rules, &opts, &mut stats);
    // What the run did is printed also when it failed: the applications before an error are
    // what the rule author needs to see.
    for l in stats.trace_lines(input) {
        err_println!("{l}");
    }
    if args.stats {
        streams::eprint(&stats.render());
    }
    applied.map_err(|d| match input {
        Some(src) => d.at_input(src),
        None => d,
    })?;
    warn_unproductive(rules, &stats, args);
    let misfit = crate::dialect::findings_beyond(module, &misfits_before.fitting)
        .0
        .into_iter()
        .find(|f| {
            f.kind == crate::dialect::FindingKind::Misfit
                && !misfits_before.ops.contains(&(f.which, f.op))
        });
    if let Some(f) = misfit {
        return Err(dialect_error(module, &f).to_diagnostic(module, None).with_note(
            "the rewritten program gives an attribute a value Paddle's definition does not allow: this is a bug in a rule or in irw",
        ));
    }
    match ir::verify_dist::new_dist_mismatches(&dist_before, module).first() {
        Some(e) => Err(e.to_diagnostic(module, None).with_note(
            "the rewritten program's distribution attributes are wrong: this is a bug in a rule or in irw",
        )),
        None => Ok(stats),
    }
}

/// The Paddle types the rule files' op declarations give attributes, for the JSON writer: a
/// rule file that introduces an op outside the dialect table says how Paddle types it.
pub(crate) fn declare_json_types(rules: &crate::rules::RuleSet, hints: &mut json::TagHints) {
    for (op, attr, ty) in rules.ops.paddle_types() {
        hints.declare(op, attr, ty);
    }
    for (op, attr, kind) in rules.ops.untyped_kinds() {
        hints.declare_untyped(op, attr, kind);
    }
}

/// Warnings (standard error only: output and exit code stay as they are) for what a rule author
/// should know: a rule file given on the command line whose rules changed nothing, and an
/// e-graph saturation stopped by a limit (the program is rewritten with what was proven).
fn warn_unproductive(
    rules: &crate::rules::RuleSet,
    stats: &crate::rewrite::Stats,
    args: &RuleArgs,
) {
    for (i, &root) in rules.roots.iter().enumerate() {
        let changes: u64 = rules
            .phases
            .iter()
            .zip(&stats.phases)
            .filter(|(p, _)| p.root == i)
            .map(|(_, s)| s.applications + s.egraph_changes)
            .sum();
        if changes == 0 {
            // A file given twice is applied twice: say which application changed nothing.
            let which = if rules.roots.iter().filter(|&&r| r == root).count() > 1 {
                format!(" (--rules #{})", i + 1)
            } else {
                String::new()
            };
            err_println!(
                "warning: {}{which}: no rule of this file (or of the files it imports) changed the program",
                rules.sources[root].name
            );
        }
    }
    for e in &stats.egraph {
        if e.report.outcome.hit_limit() {
            err_println!(
                "warning: e-graph saturation of phase `{}` ({} program) stopped: {}; the program is rewritten with what was proven so far{}",
                e.phase,
                e.program,
                e.report.outcome,
                if args.stats { "" } else { " (--stats shows the limits; --egraph-iters, --egraph-nodes, --egraph-time raise them)" }
            );
        }
    }
}

fn rewrite_command(args: &RewriteArgs, limits: &Limits) -> Result<(), Failure> {
    let Some(input) = args.input.as_deref() else {
        return Err(Failure::Usage(
            "no INPUT program given (use `-` for standard input)".into(),
        ));
    };
    if let Some(s) = args.startup_out.as_deref() {
        let o = args.output.as_deref().unwrap_or("-");
        if o != "-" && s != "-" && io::same_file(o, s) {
            let both = if o == s {
                format!("both name {o}")
            } else {
                format!("name the same file ({o} and {s})")
            };
            return Err(Failure::Usage(format!(
                "-o and --startup-out {both}: the startup program needs its own file"
            )));
        }
        if o == "-" && s == "-" && args.emit == Emit::PaddleJson {
            return Err(Failure::Usage(
                "-o - and --startup-out - would write two JSON documents to standard output: \
                 give the startup program its own file"
                    .into(),
            ));
        }
    }
    io::one_standard_input(&[
        ("INPUT", Some(input)),
        ("--startup", args.startup.as_deref()),
    ])?;
    if !args.rule.set.is_empty() && args.rule.rules.is_empty() {
        return Err(Failure::Usage(
            "--set needs --rules: parameters belong to rule files".into(),
        ));
    }
    let t0 = Instant::now();
    let (rules, loaded) = load_rules_and_module(args, input, limits)?;
    let Loaded {
        mut module,
        mut hints,
        main: src,
        startup: startup_src,
        misfits,
    } = loaded;
    let t_parse = t0.elapsed();
    let t1 = Instant::now();
    let mut stats = None;
    if let Some(rules) = &rules {
        declare_json_types(rules, &mut hints);
        stats = Some(apply_rules_knowing_misfits(
            &mut module,
            Some(&src),
            Some(&misfits),
            rules,
            &args.rule,
            limits,
        )?);
    }
    let t_rewrite = t1.elapsed();
    let bytes_in = src.text.len();
    // Printing text needs no input text: give its memory back before the output is built. The
    // JSON writer may refuse an op, shown at its line in the file it came from.
    let sources = match args.emit {
        Emit::Text => {
            drop((src, startup_src));
            None
        }
        Emit::PaddleJson => Some((src, startup_src)),
    };
    let editor = |op| stats.as_ref().and_then(|s| s.editor_of(op));
    let origins = json::Origins {
        main: sources.as_ref().map(|s| &s.0),
        startup: sources.as_ref().and_then(|s| s.1.as_ref()),
        editor: Some(&editor),
    };
    let t2 = Instant::now();
    let bytes_out = emit(&module, &hints, origins, args)?;
    let t_print = t2.elapsed();
    if args.rule.stats {
        let (types, dicts) = module.ctx.interned_counts();
        err_println!(
            "irw: {} ops, {} bytes out; {} distinct types, {} distinct attribute dictionaries",
            module.num_ops(),
            bytes_out,
            types,
            dicts
        );
        err_println!(
            "irw: parse+verify {:.3} s, rewrite+verify {:.3} s, print {:.3} s",
            t_parse.as_secs_f64(),
            t_rewrite.as_secs_f64(),
            t_print.as_secs_f64()
        );
        if let Some(peak) = io::peak_memory_bytes() {
            const MIB: f64 = (1u64 << 20) as f64;
            // Below a MiB of input the process's own few MiB (code, tables) are the peak, and
            // the ratio to the input says nothing about how memory follows the program.
            let ratio = if bytes_in as f64 >= MIB {
                format!(
                    " ({:.2}x the {:.1} MiB input)",
                    peak as f64 / bytes_in as f64,
                    bytes_in as f64 / MIB
                )
            } else {
                format!(" (input {bytes_in} bytes)")
            };
            err_println!("irw: peak memory {:.1} MiB{ratio}", peak as f64 / MIB);
        }
    }
    // The command ends here and the process with it: freeing a large program piece by piece
    // would only cost time (a 10^6-op module is millions of allocations); the OS takes it back.
    std::mem::forget(module);
    Ok(())
}

/// The rewrite command's rule files and program, loaded side by side when INPUT is a regular
/// file: the rule files' parsing and checking take a core the parser's threads leave idle at
/// times. A mistake in the rule files is reported first, as if they had been loaded before the
/// program was read, and the program's warnings are printed only when both loaded. Standard
/// input and other files whose read can block are read only after the rule files loaded, so
/// that a mistake in them is reported without waiting for the input.
fn load_rules_and_module(
    args: &RewriteArgs,
    input: &str,
    limits: &Limits,
) -> Result<(Option<crate::rules::RuleSet>, Loaded), Failure> {
    let startup = args.startup.as_deref();
    if args.rule.rules.is_empty() {
        return Ok((None, load_module_files(input, startup, limits)?));
    }
    let regular = |p: &str| p != "-" && std::fs::metadata(p).is_ok_and(|m| m.is_file());
    if !regular(input) || !startup.is_none_or(regular) {
        let rules = load_rules(&args.rule, limits)?;
        return Ok((Some(rules), load_module_files(input, startup, limits)?));
    }
    let (rules, loaded) = std::thread::scope(|scope| {
        let thread =
            std::thread::Builder::new().spawn_scoped(scope, || load_rules(&args.rule, limits));
        let loaded = load_module_files_quietly(input, startup, limits);
        let rules = match thread {
            Ok(t) => t
                .join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic)),
            // No thread could be made: the rule files are loaded now.
            Err(_) => load_rules(&args.rule, limits),
        };
        (rules, loaded)
    });
    let rules = rules?;
    let (loaded, warnings) = loaded?;
    for w in &warnings {
        streams::eprintln(w);
    }
    Ok((Some(rules), loaded))
}

/// Writes the module in the `--emit` format (`-o`, `--startup-out`); returns the size of the
/// main output in bytes. Text is streamed as it is printed; a JSON refusal is shown where
/// `origins` says the op came from.
fn emit(
    module: &Module,
    hints: &json::TagHints,
    origins: json::Origins<'_>,
    args: &RewriteArgs,
) -> Result<u64, Failure> {
    let out = args.output.as_deref().unwrap_or("-");
    let print_module = |w: &mut dyn std::io::Write| ir::print_module_to(module, w);
    let print_main =
        |w: &mut dyn std::io::Write| ir::print_program_to(&module.ctx, &module.main, w);
    let print_startup = |w: &mut dyn std::io::Write| match &module.startup {
        Some(s) => ir::print_program_to(&module.ctx, s, w),
        None => Ok(0),
    };
    let json;
    let (main, startup) = match (args.emit, &args.startup_out) {
        (Emit::Text, None) => (Content::Stream(&print_module), None),
        (Emit::Text, Some(_)) => (
            Content::Stream(&print_main),
            module
                .startup
                .as_ref()
                .map(|_| Content::Stream(&print_startup)),
        ),
        (Emit::PaddleJson, _) => {
            if module.startup.is_some() && args.startup_out.is_none() {
                return Err(Failure::Usage(
                    "the output has a startup program (the input's, or one the rules made for \
                     the state they added): give --startup-out FILE for it (Paddle JSON holds \
                     one program per file)"
                        .into(),
                ));
            }
            json = json::write_module_from(module, hints, origins)?;
            (
                Content::Text(&json.main),
                json.startup.as_deref().map(Content::Text),
            )
        }
    };
    let n = match (&args.startup_out, startup) {
        (Some(path), Some(s)) => write_outputs(&[(out, main), (path, s)])?,
        (Some(_), None) => {
            return Err(Failure::Usage(
                "--startup-out given, but there is no startup program (use --startup FILE)".into(),
            ))
        }
        (None, _) => write_outputs(&[(out, main)])?,
    };
    Ok(n)
}

fn gen_mlp_command(a: &GenMlpArgs) -> Result<(), Failure> {
    let opts = crate::gen::MlpOptions {
        optimizer: a.optimizer,
        dtype: a.dtype,
        allreduce: a.allreduce,
        collective: a.collective,
        roles: !a.no_roles,
        loss_scaling: a.loss_scaling,
        ..crate::gen::MlpOptions::with_layers(a.layers)
    };
    if a.loss_scaling && a.dtype != crate::gen::Dtype::F32 {
        return Err(Failure::Usage(
            "--loss-scaling needs --dtype f32: Paddle's AMP turns dynamic loss scaling off for bf16".into(),
        ));
    }
    if a.dist.is_some() && a.allreduce && a.collective != crate::gen::Collective::AllReduce {
        return Err(Failure::Usage(
            "--dist with --allreduce needs --collective all_reduce: pd_dist programs sync with pd_op.all_reduce".into(),
        ));
    }
    // The text is built in memory, then written: refuse a program that irw could not read
    // back, or whose text cannot be allocated, before trying.
    let estimate = crate::gen::estimate_len(&opts) as u64;
    let limit = default_max_input_bytes();
    if estimate > limit {
        return Err(Failure::Input(
            Diagnostic::error(format!(
                "--layers {} would make a program of about {}, more than irw reads on this machine ({}, --max-input-size's default)",
                a.layers,
                format_bytes(estimate),
                format_bytes(limit)
            ))
            .with_hint("generate fewer layers"),
        ));
    }
    let mut text = crate::gen::try_mlp(&opts).map_err(|_| {
        Diagnostic::error(format!(
            "--layers {}: cannot allocate the {} of the program's text",
            a.layers,
            format_bytes(estimate)
        ))
    })?;
    if let Some(n) = a.dist {
        let src = SourceFile::new("<irw gen mlp>", text);
        let mut m = ir::parse_module(&src)?;
        crate::gen::dist::distribute(&mut m, n as usize).map_err(Diagnostic::error)?;
        text = ir::print_module(&m);
    }
    write_output(a.output.as_deref().unwrap_or("-"), &text)?;
    Ok(())
}

/// `1.7 GiB`, `300 MiB`: an approximate size.
fn format_bytes(n: u64) -> String {
    let n = n as f64;
    if n >= (1u64 << 30) as f64 {
        format!("{:.1} GiB", n / (1u64 << 30) as f64)
    } else {
        format!("{:.0} MiB", n / (1u64 << 20) as f64)
    }
}

fn lint_command(a: &LintArgs, limits: &Limits) -> Result<(), Failure> {
    let loaded = load_module_files(&a.input, None, limits)?;
    let report = crate::lint::lint(&loaded.module);
    for d in crate::lint::diagnostics(&loaded.module, &loaded.main, &report) {
        streams::eprint(&d.to_string());
    }
    // Auto-parallel programs: op_dist_attrs that disagree with their types (Paddle's own
    // gradient-merge pass writes such attributes; irw never does).
    let dist = ir::verify_dist::dist_mismatches(&loaded.module);
    for e in &dist {
        streams::eprint(
            &e.to_diagnostic(&loaded.module, Some(&loaded.main))
                .to_string(),
        );
    }
    let dist_note = if dist.is_empty() {
        String::new()
    } else {
        format!(", {} op_dist_attr disagreement(s)", dist.len())
    };
    err_println!(
        "irw lint: {} hazard(s){dist_note}; {} instructions, {} buffers accessed by several ops, {} ops visited by ordering searches",
        report.hazards.len(),
        report.instructions,
        report.buffers_checked,
        report.visited
    );
    if report.hazards.is_empty() && dist.is_empty() {
        Ok(())
    } else {
        Err(Failure::Mismatch)
    }
}

fn diff_command(a: &DiffArgs, limits: &Limits) -> Result<(), Failure> {
    io::one_standard_input(&[
        ("A", Some(&a.a)),
        ("B", Some(&a.b)),
        ("--startup-a", a.startup_a.as_deref()),
        ("--startup-b", a.startup_b.as_deref()),
    ])?;
    let ma = load_module(&a.a, a.startup_a.as_deref(), limits)?;
    let mb = load_module(&a.b, a.startup_b.as_deref(), limits)?;
    let (report, equal) = crate::diff::diff_modules(&ma, &mb, a.max_lines, &a.ignore_attr);
    streams::print(&report)?;
    if equal {
        Ok(())
    } else {
        Err(Failure::Mismatch)
    }
}
