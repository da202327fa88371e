//! irw: a declarative rewrite-rule engine for machine-learning training programs.
//!
//! See `ARCHITECTURE.md` for the bird's-eye view and the code map.
//!
//! The modules are private, so the compiler reports every item nothing uses. What other crates
//! use is re-exported below: the binary (`src/main.rs`), the Python bindings (`python/`), the
//! benchmarks, the fuzz targets and the integration tests. Programs, rules, rewriting,
//! verification and lint are at the crate root; the rest is grouped in small modules:
//! [`api`] (rewrite or check a program held in memory, as the command does), [`paddle_json`],
//! [`generate`], [`executor`], [`kernels`] (what the benchmarks time) and [`command`] (the
//! `irw` command line).
//!
//! ```
//! use irw::{load_rules_str, parse_module, print_module, rewrite, verify_module, SourceFile};
//!
//! let text = "{\n    (%0) = \"pd_op.full\" () {dtype:float32,value:1} : () -> tensor<f32>\n}\n";
//! let mut m = parse_module(&SourceFile::new("ex.ir", text)).unwrap();
//! assert_eq!(print_module(&m), text); // printing a parsed dump gives back the same bytes
//! let rules = load_rules_str("ex.rw", "", std::path::Path::new("."), &[]).unwrap();
//! rewrite(&mut m, &rules, &Default::default()).unwrap();
//! verify_module(&m).unwrap();
//! ```

pub mod api;
mod cli;
mod diag;
mod dialect;
mod diff;
mod egraph;
mod exec;
mod gen;
mod ir;
mod json;
mod lint;
mod rewrite;
mod rules;
mod source_text;
mod suggest;
mod value;

pub use diag::{Diagnostic, SourceFile};

// Programs: Paddle's text ⇄ IR, and the IR a test inspects or edits.
pub use ir::parse::{MAX_NESTING, MAX_REGION_DEPTH};
pub use ir::{
    format_float_like_paddle, intern_key, parse_module, parse_module_reference, parse_startup_into,
    print_module, Attr, AttrDict, Context, DType, Module, OpSyntax, Program, Type, ValueId, Which,
};

// The dialect: what irw knows of each op, and the verifier that uses it.
pub use dialect::{verify_module, Dialect, Effect};

// Rule files and the engines that run them.
pub use lint::{lint, Report as LintReport};
pub use rewrite::{apply as rewrite, Options as RewriteOptions, Stats as RewriteStats};
pub use rules::{load as load_rules, load_str as load_rules_str, RuleSet};

/// Paddle's PIR JSON format: read a program Paddle serialized, write one it loads.
pub mod paddle_json {
    pub use crate::json::{
        looks_like_json, read_module, read_module_with_hints, read_startup_into, write_module,
        JsonModule, TagHints,
    };
}

/// Training programs generated in Paddle's text format (`irw gen`).
pub mod generate {
    pub use crate::gen::{mlp, Collective, Dtype, MlpOptions, Optimizer};
}

/// The executor behind `irw run` and `irw check`: run a program's training step with Paddle's
/// schedule, and compare a rewritten program with its original.
pub mod executor {
    pub use crate::exec::check::{check, CheckOptions, CheckReport, Outcome};
    pub use crate::exec::feed::{tensor_from_json, Feed};
    pub use crate::exec::interp::{op_role, Interp, Stage};
    pub use crate::exec::run::{init_ranks, micro_feeds, run, step_batch, RunOptions, RunReport};
    pub use crate::exec::{DType, Data, KernelError, Tensor};

    /// The tensor memory budget (`--max-memory`) of the current run, or of this thread.
    pub mod memory {
        pub use crate::exec::memory::{limit, live, DEFAULT_MAX_MEMORY};
    }
}

/// The kernels the benchmarks time, and what they time them with.
pub mod kernels {
    pub use crate::exec::data::f32_to_bf16_slice;
    pub use crate::exec::kernels::batch_norm::{batch_norm, batch_norm_grad, BatchNormAttrs};
    pub use crate::exec::kernels::conv::{conv2d, conv2d_grad, ConvAttrs, PaddingAlgorithm};
    pub use crate::exec::kernels::elementwise::{add_slices, axpy};
    pub use crate::exec::kernels::matmul::{gemm_into, MatRef};
    pub use crate::exec::rng::Rng;
    pub use crate::exec::simd::{detected, with_level, Level};
}

/// The `irw` command line: the binary's `main`, and the pieces of it the tests call directly.
pub mod command {
    pub use crate::cli::{load_feed, main, set_closed_at_start, Limits};
}

#[cfg(test)]
mod test_support;
