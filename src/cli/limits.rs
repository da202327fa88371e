//! The limits a command runs under (`--max-input-size`, `--timeout`, `--max-memory`): their
//! flags, and [`Limits`], the values `main` derives from them once and hands to the command,
//! which passes them on to whatever reads input or rewrites. Nothing below the command line
//! reads a flag from a process-wide variable: `run` and `check` put `--max-memory` in the
//! executor's options, and each execution counts its tensors against it in a budget of its own
//! (`exec::memory`).

use std::time::{Duration, Instant};

use clap::Args;

use super::{default_max_input_bytes, parse_seconds, parse_size};

/// `--max-input-size`, for every command that reads a file: irw runs in CI pipelines on programs
/// from anywhere, and must fail with a message rather than exhaust the machine.
#[derive(Args, Debug, Clone, Default)]
pub struct InputLimitArgs {
    /// Refuse input files larger than SIZE (bytes, or with a suffix K, M, G: powers of 1024; at
    /// least 1) [default: 4G, or a fifth of the machine's memory if that is less].
    #[arg(long, value_name = "SIZE", value_parser = parse_size)]
    pub max_input_size: Option<u64>,
}

/// `--timeout`, for the commands that rewrite or execute.
#[derive(Args, Debug, Clone, Default)]
pub struct TimeoutArgs {
    /// Stop with an error after SECONDS of wall-clock time: reading, rewriting and executing
    /// (no output is written).
    #[arg(long, value_name = "SECONDS", value_parser = parse_seconds)]
    pub timeout: Option<Duration>,
}

/// `--max-memory`, shared by `run` and `check`.
#[derive(Args, Debug, Clone)]
pub struct MemoryArgs {
    /// Refuse to hold more than SIZE of tensors at once (bytes, or with a suffix K, M, G:
    /// powers of 1024; at least 1) [default: 4G].
    #[arg(long, value_name = "SIZE", value_parser = parse_size)]
    pub max_memory: Option<u64>,
}

impl MemoryArgs {
    /// The executor's memory limit: `--max-memory`, else the default.
    pub fn bytes(&self) -> u64 {
        self.max_memory
            .unwrap_or(crate::exec::memory::DEFAULT_MAX_MEMORY)
    }
}

/// The limits of one command, from its flags.
#[derive(Clone, Debug)]
pub struct Limits {
    /// The largest input file read (`--max-input-size`; default `default_max_input_bytes`).
    pub max_input_bytes: u64,
    /// Reading, rewriting and executing stop with an error after this long (`--timeout`).
    pub timeout: Option<Duration>,
}

impl Default for Limits {
    /// The defaults: no flag given.
    fn default() -> Self {
        Limits::new(&InputLimitArgs::default(), None)
    }
}

impl Limits {
    /// The limits the flags ask for (the flags' parser refuses a size of 0).
    pub fn new(input: &InputLimitArgs, timeout: Option<Duration>) -> Self {
        Limits {
            max_input_bytes: input.max_input_size.unwrap_or_else(default_max_input_bytes),
            timeout,
        }
    }

    /// When rewriting that starts now must stop (`--timeout`).
    pub fn deadline(&self) -> Option<Instant> {
        self.timeout.and_then(|t| Instant::now().checked_add(t))
    }
}
