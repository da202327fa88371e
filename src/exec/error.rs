//! The error a kernel returns when its inputs do not fit its contract (shapes that do not
//! broadcast, a dtype it does not implement, a missing operand). The interpreter adds the op's
//! location and turns it into a [`Diagnostic`](crate::Diagnostic); kernels never panic on
//! program-controlled input.

/// A kernel's complaint, in words a user can act on.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct KernelError(pub String);

/// Result of a kernel.
pub type KResult<T> = Result<T, KernelError>;

/// Returns early with a [`KernelError`] built by `format!`.
#[macro_export]
#[doc(hidden)]
macro_rules! kbail {
    ($($t:tt)*) => { return Err($crate::exec::KernelError(format!($($t)*))) };
}
