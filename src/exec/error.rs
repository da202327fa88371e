//! The error a kernel returns when its inputs do not fit its contract (shapes that do not
//! broadcast, a dtype it does not implement, a missing operand, a tensor over the memory limit).
//! The interpreter adds the op's location and turns it into a [`Diagnostic`](crate::Diagnostic);
//! kernels never panic on program-controlled input.

/// A kernel's complaint, in words a user can act on.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct KernelError {
    pub message: String,
    /// What the user can do about it (shown as the diagnostic's hint).
    pub hint: Option<String>,
}

impl KernelError {
    pub fn new(message: impl Into<String>) -> KernelError {
        KernelError {
            message: message.into(),
            hint: None,
        }
    }

    pub fn with_hint(mut self, hint: impl Into<String>) -> KernelError {
        self.hint = Some(hint.into());
        self
    }

    /// A diagnostic without a position, `prefix` before the message (where no op is involved:
    /// feeds, replicas).
    pub fn into_diagnostic(self, prefix: &str) -> crate::Diagnostic {
        let d = crate::Diagnostic::error(format!("{prefix}{}", self.message));
        match self.hint {
            Some(h) => d.with_hint(h),
            None => d,
        }
    }
}

/// Result of a kernel.
pub type KResult<T> = Result<T, KernelError>;

/// Returns early with a [`KernelError`] built by `format!`.
#[macro_export]
#[doc(hidden)]
macro_rules! kbail {
    ($($t:tt)*) => { return Err($crate::exec::KernelError::new(format!($($t)*))) };
}
