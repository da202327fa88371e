//! `irw run`: its arguments (clap) and its driver, which reads the files, hands their texts and
//! the parsed program to the executor ([`crate::exec::run`]) and prints or writes the result.
//!
//! The executor never sees a path or a command-line flag: what the command line knows stays
//! here, so `exec` does not depend on `cli`.

use clap::Args;

use super::io::{one_standard_input, PreparedOutput};
use super::{
    load_feed, load_module_files, parse_positive, parse_ranks, Content, Failure, InputLimitArgs,
    Limits, MemoryArgs, TimeoutArgs,
};
use crate::exec::feed::Dump;
use crate::exec::run::{run_with_sources, RunOptions};

/// `irw run PROG [--startup S] [--k-steps K] [--ranks N] [--feed FILE.json] [--dump FILE.json] [--steps N]`
#[derive(Args, Debug)]
pub struct RunArgs {
    /// The program to run.
    #[arg(value_name = "PROG")]
    pub input: String,
    /// Read the startup program from FILE (a separate Paddle dump).
    #[arg(long, value_name = "FILE")]
    pub startup: Option<String>,
    /// Micro-steps per step: op_role 2 ops run once per K micro-steps.
    #[arg(long = "k-steps", value_name = "K", default_value_t = 1, value_parser = parse_positive)]
    pub k_steps: usize,
    /// Simulated data-parallel ranks (collectives combine them; at most 1024). Default: the
    /// number of processes of a pd_dist program's mesh, else 1.
    #[arg(long, value_name = "N", value_parser = parse_ranks)]
    pub ranks: Option<usize>,
    /// Training steps.
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = parse_positive)]
    pub steps: usize,
    /// Rows per micro-step and rank (default: the feed's rows / (K·N), or 2).
    #[arg(long = "micro-batch", value_name = "B", value_parser = parse_positive)]
    pub micro_batch: Option<usize>,
    /// Inputs and initial state in the layout of `*.numerics.json`.
    #[arg(long, value_name = "FILE.json")]
    pub feed: Option<String>,
    /// Write every persistable after the run to FILE (same layout, under `state`; `-`:
    /// standard output, and the loss lines go to standard error). FILE is made before the run
    /// and replaced atomically after it.
    #[arg(long, value_name = "FILE.json")]
    pub dump: Option<String>,
    /// Seed for generated inputs and random initializers.
    #[arg(long, value_name = "S", default_value_t = 0)]
    pub seed: u64,
    #[command(flatten)]
    pub memory: MemoryArgs,
    #[command(flatten)]
    pub input_limit: InputLimitArgs,
    #[command(flatten)]
    pub timeout: TimeoutArgs,
}

/// Runs `irw run`; prints the loss per step (to standard error when `--dump -` writes the state
/// to standard output: that stream then holds one JSON document and nothing else).
pub fn run_command(a: &RunArgs, limits: &Limits) -> Result<(), Failure> {
    let deadline = limits.deadline();
    one_standard_input(&[
        ("PROG", Some(&a.input)),
        ("--startup", a.startup.as_deref()),
        ("--feed", a.feed.as_deref()),
    ])?;
    let dump_to_stdout = a.dump.as_deref() == Some("-");
    // A dump over one of the run's inputs would replace the program (or its feed) with a state
    // dump: a slip of the command line, refused before anything is read.
    if let Some(d) = a.dump.as_deref().filter(|d| *d != "-") {
        let inputs = [
            ("PROG", Some(a.input.as_str())),
            ("--startup", a.startup.as_deref()),
            ("--feed", a.feed.as_deref()),
        ];
        for (flag, path) in inputs {
            if let Some(p) = path.filter(|p| *p != "-" && super::io::same_file(p, d)) {
                return Err(Failure::Usage(format!(
                    "--dump {d} is {flag} ({p}): the dump would replace an input of the run; write it to another file"
                )));
            }
        }
    }
    // The dump's file is made first: a path that cannot be written is refused before the run,
    // and a failed run leaves the old file.
    let dump_file = match a.dump.as_deref() {
        Some(path) if path != "-" => Some(PreparedOutput::create(path)?),
        _ => None,
    };
    let loaded = load_module_files(&a.input, a.startup.as_deref(), limits)?;
    let feed = a
        .feed
        .as_deref()
        .map(|f| {
            load_feed(
                f,
                limits,
                a.memory.bytes(),
                &loaded.module,
                loaded.sources(),
            )
        })
        .transpose()?;
    let mesh = crate::exec::interp::Interp::mesh_processes(&loaded.module.ctx, &loaded.module.main);
    let opts = RunOptions {
        k_steps: a.k_steps,
        ranks: a.ranks.or(mesh).unwrap_or(1),
        steps: a.steps,
        micro_batch: a.micro_batch,
        seed: a.seed,
        feed,
        max_memory: a.memory.bytes(),
        deadline,
    };
    let report = run_with_sources(&loaded.module, loaded.sources(), &opts)?;
    if dump_to_stdout {
        super::streams::eprint(&report.to_string());
    } else {
        super::streams::print(&report.to_string())?;
    }
    let dump = Dump {
        loss: &report.losses,
        state: &report.scopes[0],
    };
    let write = |w: &mut dyn std::io::Write| dump.write_to(w);
    if let Some(file) = dump_file {
        file.finish(Content::Stream(&write))?;
    } else if dump_to_stdout {
        super::streams::write_stdout(Content::Stream(&write))?;
    }
    Ok(())
}
