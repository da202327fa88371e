//! Program generators: training programs in Paddle's exact text form, made without Paddle.
//!
//! # Why this exists
//!
//! irw's ground truth is a handful of dumps that PaddlePaddle 3.3.1 printed for 2- and 3-layer
//! MLPs (`fixtures/paddle/*.ir`). Those are enough to pin down the format, but not to measure
//! anything: the performance targets ask for programs of 10^3 to 10^6 ops, the
//! gradient-merge headline for a 2 048-layer MLP, and property tests want many
//! programs of many shapes. Producing those with Paddle needs a Python environment with
//! Paddle installed and minutes per program (its printer and passes are slow at that size).
//!
//! The generator writes the program Paddle *would* print for an N-layer MLP — same ops, same
//! attributes in the same order, same value numbering, same parameter order, same startup
//! program — directly as text, in linear time (a 100 000-layer program, about a million ops,
//! takes a fraction of a second). For the configurations the fixtures cover it is byte-identical
//! to Paddle's own dumps, which the tests in `tests/all/gen_mlp.rs` check; the other combinations
//! are built by analogy and documented as such in [the `mlp` module](mod@mlp).
//!
//! It is deliberately a text generator and does not build `ir` data structures: that keeps it
//! independent of the parser it is meant to exercise (a generator that shares the IR's printer
//! cannot catch the printer's bugs), and lets benchmarks time parsing on input made elsewhere.
//!
//! `irw gen mlp --layers N [--optimizer sgd|momentum|adam|adamw] [--dtype f32|bf16]
//! [--allreduce] [-o FILE]` is the command-line face of [`mlp::mlp`]; `irw gen cnn
//! [--batch-norm]` of [`cnn::cnn`] (a small convolutional network, optionally batch-coupled);
//! `irw gen lm` of [`lm::lm`] (a masked token-mean loss, the form token-normalized gradient merge
//! is for).

pub mod cnn;
pub mod dist;
pub mod lm;
pub mod mlp;
pub mod num;
mod text;

pub use mlp::{estimate_len, mlp, try_mlp, Collective, Dtype, MlpOptions, Optimizer};
