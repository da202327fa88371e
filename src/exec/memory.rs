//! The executor's memory limit (`--max-memory`): the bytes of all live tensors together may not
//! exceed it.
//!
//! Why: `irw check` and `irw run` execute programs from anywhere. A `pd_op.full` with shape
//! `[1000000, 1000000]`, a broadcast of `[N, 1]` against `[1, N]`, or `--micro-batch` in the
//! billions asks for terabytes; left alone, the allocation aborts the process or the machine's
//! OOM killer ends it (and its CI job) without a word. With the limit, such a program fails with
//! a diagnostic at the op, exit code 1.
//!
//! How:
//! - **Accounting.** A run has a [`Budget`]: its limit and the bytes of the live tensors it
//!   made. Every [`Tensor`](super::Tensor) adds its buffer's bytes to the budget in force when
//!   it is made (or cloned) and subtracts them from that same budget when it is dropped, so
//!   [`live`] is the exact total of the run's tensor buffers in existence (scopes of every
//!   rank, value slots, feeds, kernel outputs). Temporary buffers inside a kernel are not
//!   tensors and are not counted.
//! - **Before allocating.** Where a program can make a buffer much larger than its inputs (a
//!   shape attribute or operand: `full`, `uniform`, `gaussian`, generated feeds; broadcasting;
//!   matmul's `m × n` from `m × k` and `k × n`), the size is computed first, with checked
//!   arithmetic, and [`reserve`] refuses it if it would pass the limit — nothing is allocated.
//! - **After each op.** Every other kernel's output is bounded by its inputs, so the
//!   interpreter checks [`live`] against the limit once the op has run ([`check_live`]).
//!
//! Why a budget per run and not one count per process: two runs in one process (the tests run
//! many at once, a library caller may too) would otherwise charge each other's tensors and fail
//! each other's limits. The limit travels with the run's options (`RunOptions::max_memory`,
//! `CheckOptions::max_memory`; the command line's `--max-memory`), and `exec::run` and
//! `exec::check` [`Budget::enter`] a fresh budget for their duration.
//!
//! Why the budget in force is found through the thread rather than passed: tensors are made
//! everywhere, deep inside kernels, and the executor runs a run on one thread; passing a budget
//! to every constructor would thread it through every kernel for a number each tensor reads
//! once. A tensor keeps the budget it charged (an `Arc`), so it is released where it was
//! charged whichever thread drops it, and after its run has ended. Tensors made outside any
//! entered budget (kernels or `Interp` used directly) charge their thread's own budget, with the
//! default limit.

use std::cell::RefCell;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use super::error::{KResult, KernelError};

/// The limit when `--max-memory` is not given.
pub const DEFAULT_MAX_MEMORY: u64 = 4 << 30;

const HINT: &str = "--max-memory SIZE raises the executor's memory limit (e.g. 16G)";

/// One run's memory account: its limit and the bytes of the live tensors charged to it.
#[derive(Debug)]
pub struct Budget {
    limit: u64,
    live: AtomicU64,
}

thread_local! {
    /// The budget tensors made on this thread charge: the entered one, else the thread's own.
    static CURRENT: RefCell<Arc<Budget>> = RefCell::new(Budget::new(DEFAULT_MAX_MEMORY));
}

impl Budget {
    /// A budget of `limit` bytes with nothing charged yet.
    pub fn new(limit: u64) -> Arc<Budget> {
        Arc::new(Budget {
            limit,
            live: AtomicU64::new(0),
        })
    }

    /// The limit.
    pub fn limit(&self) -> u64 {
        self.limit
    }

    /// Bytes charged now.
    pub fn live(&self) -> u64 {
        self.live.load(Ordering::Relaxed)
    }

    /// Charges `bytes` (a tensor was made, or a run's input that exists before it).
    pub(crate) fn charge(&self, bytes: u64) {
        self.live.fetch_add(bytes, Ordering::Relaxed);
    }

    /// Releases `bytes` charged before (a tensor was dropped).
    pub(crate) fn release(&self, bytes: u64) {
        self.live.fetch_sub(bytes, Ordering::Relaxed);
    }

    /// Makes this the budget in force on this thread until the guard is dropped (which puts
    /// back the one before).
    pub fn enter(self: &Arc<Budget>) -> Entered {
        let previous = CURRENT.with(|c| c.replace(Arc::clone(self)));
        Entered {
            previous: Some(previous),
        }
    }
}

/// The guard of [`Budget::enter`].
#[must_use = "the budget is in force only while the guard lives"]
pub struct Entered {
    previous: Option<Arc<Budget>>,
}

impl Drop for Entered {
    fn drop(&mut self) {
        if let Some(p) = self.previous.take() {
            // `try_with`: nothing to restore once the thread is being torn down.
            let _ = CURRENT.try_with(|c| *c.borrow_mut() = p);
        }
    }
}

/// The budget in force on this thread.
pub fn current() -> Arc<Budget> {
    CURRENT.with(|c| Arc::clone(&c.borrow()))
}

/// The limit in force.
pub fn limit() -> u64 {
    CURRENT.with(|c| c.borrow().limit())
}

/// Bytes of the live tensors charged to the budget in force.
pub fn live() -> u64 {
    CURRENT.with(|c| c.borrow().live())
}

/// Bytes of a buffer of `shape` with `elem` bytes per element; `None` when that does not fit
/// in 64 bits.
fn bytes_of(shape: &[usize], elem: usize) -> Option<u64> {
    shape
        .iter()
        .try_fold(elem as u64, |acc, &d| acc.checked_mul(d as u64))
}

/// `3.64 TiB`, `512 MiB`, `20.3 KiB`, `12 bytes`: a size for a message, to three significant
/// digits (whole units print without decimals).
fn approx_size(n: u64) -> String {
    const UNITS: [(u32, &str); 5] = [
        (50, "PiB"),
        (40, "TiB"),
        (30, "GiB"),
        (20, "MiB"),
        (10, "KiB"),
    ];
    for (shift, unit) in UNITS {
        if n >= 1u64 << shift {
            let v = n as f64 / (1u64 << shift) as f64;
            return match v {
                _ if n.is_multiple_of(1u64 << shift) => format!("{v:.0} {unit}"),
                _ if v < 10.0 => format!("{v:.2} {unit}"),
                _ if v < 100.0 => format!("{v:.1} {unit}"),
                _ => format!("{v:.0} {unit}"),
            };
        }
    }
    format!("{n} bytes")
}

/// Refuses to make `what` (`a float32 tensor`) of `shape` with `elem` bytes per element when
/// its size overflows or it would take the live total over the limit. Call it before
/// allocating.
pub fn reserve(what: &dyn std::fmt::Display, shape: &[usize], elem: usize) -> KResult<()> {
    reserve_bytes(
        &format_args!("{what} of shape {shape:?}"),
        bytes_of(shape, elem),
    )
}

/// [`reserve`] for `bytes` computed by the caller (`None`: the computation overflowed).
pub fn reserve_bytes(what: &dyn std::fmt::Display, bytes: Option<u64>) -> KResult<()> {
    let Some(bytes) = bytes else {
        return Err(KernelError::new(format!(
            "{what} has more elements than a 64-bit machine can address"
        )));
    };
    if live().saturating_add(bytes) > limit() {
        return Err(KernelError::new(format!(
            "{what} needs {}, over the executor's memory limit of {} ({} in use)",
            approx_size(bytes),
            approx_size(limit()),
            approx_size(live())
        ))
        .with_hint(HINT));
    }
    Ok(())
}

/// Fails when the tensors alive now exceed the limit (checked after each op).
pub fn check_live() -> KResult<()> {
    let (live, limit) = (live(), limit());
    if live > limit {
        let (mut a, mut b) = (approx_size(live), approx_size(limit));
        if a == b {
            // Over by less than the rounding: exact figures.
            (a, b) = (format!("{live} bytes"), format!("{limit} bytes"));
        }
        return Err(KernelError::new(format!(
            "the live tensors take {a}, over the executor's memory limit of {b}"
        ))
        .with_hint(HINT));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_are_computed_without_overflow() {
        assert_eq!(bytes_of(&[2, 3], 4), Some(24));
        assert_eq!(bytes_of(&[], 8), Some(8));
        assert_eq!(bytes_of(&[0, usize::MAX], 4), Some(0));
        assert_eq!(bytes_of(&[1 << 32, 1 << 32], 1), None);
        assert_eq!(bytes_of(&[1 << 31, 1 << 31], 4), None);
    }

    #[test]
    fn approximate_sizes_read_well() {
        assert_eq!(approx_size(12), "12 bytes");
        assert_eq!(approx_size(1536), "1.50 KiB");
        assert_eq!(approx_size(4 << 30), "4 GiB");
        assert_eq!(approx_size(4_000_000_000_000), "3.64 TiB");
        assert_eq!(approx_size(100 << 20), "100 MiB");
        assert_eq!(approx_size(20_800), "20.3 KiB");
        assert_eq!(approx_size(1032), "1.01 KiB");
    }

    #[test]
    fn each_run_counts_its_own_tensors() {
        use crate::exec::{DType, Tensor};
        let (a, b) = (Budget::new(1 << 20), Budget::new(100));
        let outside = live();
        let ta = {
            let _in_a = a.enter();
            assert_eq!(limit(), 1 << 20);
            let t = Tensor::full(&[1000], DType::F32, 1.0);
            {
                let _in_b = b.enter();
                let _u = Tensor::full(&[10], DType::I64, 0.0);
                assert_eq!((live(), b.live()), (80, 80));
                assert!(check_live().is_ok());
                assert!(reserve(&"a tensor", &[6], 4).is_err());
            }
            assert_eq!((live(), b.live()), (4000, 0));
            t
        };
        assert_eq!((live(), limit()), (outside, DEFAULT_MAX_MEMORY));
        // A tensor is released where it was charged, after its run has ended.
        let clone = ta.clone();
        assert_eq!((a.live(), live()), (4000, outside + 4000));
        drop(ta);
        drop(clone);
        assert_eq!((a.live(), live()), (0, outside));
    }

    #[test]
    fn an_overflowing_shape_is_refused_whatever_the_limit() {
        let e = reserve(&"a tensor", &[usize::MAX, 2], 4).unwrap_err();
        assert!(e.message.contains("more elements than"), "{}", e.message);
    }
}
