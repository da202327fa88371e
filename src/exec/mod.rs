//! The executor: runs Paddle programs on the CPU so that `irw check` can prove a rewrite keeps
//! the training step.
//!
//! Layers, bottom up:
//! - [`simd`]: runtime CPU dispatch (AVX-512 / AVX2 / baseline) for the memory-bound kernels;
//! - [`Tensor`]: dense row-major buffers of the IR's [`DType`]s ([`dtype`]: the seven it computes
//!   with), 16-bit floats computed through f32;
//! - [`kernels`]: Paddle's operator semantics (broadcasting, `_grad` ops, optimizers,
//!   collectives' combine step), each tested against a scalar reference.
//!
//! Architecture invariant: kernels never panic on program-controlled input; they return
//! [`KernelError`], which the interpreter turns into a diagnostic at the op. Tensor memory is
//! bounded by [`memory`] (`--max-memory`): a program cannot make the executor allocate more.

pub mod check;
pub mod coupling;
pub mod data;
pub mod dtype;
pub mod error;
pub mod feed;
pub mod interp;
pub mod kernels;
pub mod memory;
pub mod ops;
pub mod rng;
pub mod run;
pub mod scope;
pub mod simd;
pub mod tensor;
pub mod unrunnable;

pub use dtype::DType;
pub use error::KernelError;
pub use tensor::{Data, Tensor};
