//! How far worker threads may run ahead of the thread that consumes their work in order.
//!
//! The parser's workers parse chunks of lines that the builder takes in file order, and the
//! printer's workers print chunks of ops that are written out in program order. Without a bound,
//! workers that outpace their consumer (on a busy machine, say) would hold every finished chunk
//! at once, and peak memory would depend on the scheduler.

/// A worker starts item `i` only once the consumer has taken item `i − ahead`.
pub(crate) struct Window {
    ahead: usize,
    /// Items the consumer has taken.
    taken: std::sync::Mutex<usize>,
    moved: std::sync::Condvar,
    /// Set when the consumer is done (early on an error): waiting workers stop.
    stop: std::sync::atomic::AtomicBool,
}

impl Window {
    pub(crate) fn new(ahead: usize) -> Window {
        Window {
            ahead,
            taken: std::sync::Mutex::new(0),
            moved: std::sync::Condvar::new(),
            stop: std::sync::atomic::AtomicBool::new(false),
        }
    }

    /// Blocks until item `i` may be started; false when the consumer has stopped.
    pub(crate) fn wait_for(&self, i: usize) -> bool {
        use std::sync::atomic::Ordering::Relaxed;
        let mut taken = self.taken.lock().unwrap_or_else(|e| e.into_inner());
        while i >= *taken + self.ahead && !self.stop.load(Relaxed) {
            taken = self.moved.wait(taken).unwrap_or_else(|e| e.into_inner());
        }
        !self.stop.load(Relaxed)
    }

    /// The consumer has taken the first `n` items.
    pub(crate) fn set_taken(&self, n: usize) {
        *self.taken.lock().unwrap_or_else(|e| e.into_inner()) = n;
        self.moved.notify_all();
    }

    pub(crate) fn stop(&self) {
        self.stop.store(true, std::sync::atomic::Ordering::Relaxed);
        // Under the lock, so that no worker misses the wake-up between its check and its wait.
        let _taken = self.taken.lock().unwrap_or_else(|e| e.into_inner());
        self.moved.notify_all();
    }
}

/// Stops the window when dropped: when the consumer is done, even by an early error or a
/// panic, waiting workers stop (a scope joins its threads, and a worker left waiting would hang
/// it).
pub(crate) struct StopOnDrop<'w>(pub(crate) &'w Window);

impl Drop for StopOnDrop<'_> {
    fn drop(&mut self) {
        self.0.stop();
    }
}

/// How many worker threads to use: the cores available, at most 8.
pub(crate) fn worker_threads() -> usize {
    static THREADS: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *THREADS.get_or_init(|| {
        std::thread::available_parallelism()
            .map_or(1, |n| n.get())
            .clamp(1, 8)
    })
}
