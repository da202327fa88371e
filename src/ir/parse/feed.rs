//! The chunk feed: chunks of lines parsed on worker threads, handed to the builder in file
//! order, with the workers held at most a window ahead so that peak memory does not depend on
//! the scheduler.

use super::*;

/// Parsed op lines, in file order, as the builder asks for them: chunks of lines are parsed on
/// worker threads while the builder consumes the ones before, so parsing and building overlap
/// and only the chunks in flight are held in raw form.
pub(super) enum ChunkFeed<'a> {
    Inline(std::collections::VecDeque<RawChunk<'a>>),
    Threaded {
        rx: std::sync::mpsc::Receiver<(usize, RawChunk<'a>)>,
        /// Chunks that arrived before their turn.
        early: FxHashMap<usize, RawChunk<'a>>,
        next: usize,
        total: usize,
        window: std::sync::Arc<Window>,
        /// The file and the byte offset where each chunk starts: taking chunk `i` releases
        /// the text before chunk `i - 1` (see `SourceText::release`).
        src: &'a SourceFile,
        starts: Vec<usize>,
    },
}

/// How far the workers may run ahead of the builder: a worker parses chunk `i` only once the
/// builder has taken chunk `i − AHEAD`. Without it, workers that outpace the builder (on a busy
/// machine, say) hold every parsed chunk of the file at once, and peak memory depends on the
/// scheduler.
pub(super) struct Window {
    /// Chunks the builder has taken.
    pub(super) taken: std::sync::Mutex<usize>,
    pub(super) moved: std::sync::Condvar,
    /// Set when the builder is done (early on an error): waiting workers stop.
    pub(super) stop: std::sync::atomic::AtomicBool,
}

impl Window {
    const AHEAD: usize = 8;

    /// Blocks until chunk `i` may be parsed; false when the builder has stopped.
    pub(super) fn wait_for(&self, i: usize) -> bool {
        use std::sync::atomic::Ordering::Relaxed;
        let mut taken = self.taken.lock().unwrap_or_else(|e| e.into_inner());
        while i >= *taken + Self::AHEAD && !self.stop.load(Relaxed) {
            taken = self.moved.wait(taken).unwrap_or_else(|e| e.into_inner());
        }
        !self.stop.load(Relaxed)
    }

    pub(super) fn set_taken(&self, n: usize) {
        *self.taken.lock().unwrap_or_else(|e| e.into_inner()) = n;
        self.moved.notify_all();
    }

    pub(super) fn stop(&self) {
        self.stop.store(true, std::sync::atomic::Ordering::Relaxed);
        // Under the lock, so that no worker misses the wake-up between its check and its wait.
        let _taken = self.taken.lock().unwrap_or_else(|e| e.into_inner());
        self.moved.notify_all();
    }
}

impl<'a> ChunkFeed<'a> {
    /// The next chunk in file order; `None` after the last.
    pub(super) fn next(&mut self) -> Option<RawChunk<'a>> {
        match self {
            ChunkFeed::Inline(q) => q.pop_front(),
            ChunkFeed::Threaded {
                rx,
                early,
                next,
                total,
                window,
                src,
                starts,
            } => {
                if *next == *total {
                    return None;
                }
                if *next >= 2 {
                    src.text.release(starts[*next - 2]..starts[*next - 1]);
                }
                let c = match early.remove(next) {
                    Some(c) => c,
                    None => loop {
                        // A worker never drops its sender before sending all its chunks.
                        let (i, c) = rx.recv().ok()?;
                        if i == *next {
                            break c;
                        }
                        early.insert(i, c);
                    },
                };
                *next += 1;
                window.set_taken(*next);
                Some(c)
            }
        }
    }
}

/// Lines per chunk: small enough that workers and builder overlap, large enough that the
/// per-chunk caches (heads, tails, dictionaries) pay off.
pub(super) const CHUNK_LINES: usize = 4_096;

/// Runs `build` with a feed of the file's op lines, parsed on all cores for large files.
pub(super) fn with_op_lines<'a, T>(
    src: &'a SourceFile,
    lines: &[Line<'a>],
    path: Path,
    build: impl FnOnce(ChunkFeed<'a>) -> Result<T, Diagnostic>,
) -> Result<T, Diagnostic> {
    let pieces: Vec<&[Line<'a>]> = lines.chunks(CHUNK_LINES).collect();
    let threads = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .clamp(1, 8);
    if pieces.len() <= 1 || threads == 1 {
        let chunks = pieces.iter().map(|p| parse_chunk(src, p, path)).collect();
        return build(ChunkFeed::Inline(chunks));
    }
    let next_piece = std::sync::atomic::AtomicUsize::new(0);
    let window = std::sync::Arc::new(Window {
        taken: std::sync::Mutex::new(0),
        moved: std::sync::Condvar::new(),
        stop: std::sync::atomic::AtomicBool::new(false),
    });
    std::thread::scope(|scope| {
        let (tx, rx) = std::sync::mpsc::channel();
        for _ in 0..threads {
            let tx = tx.clone();
            let (pieces, next_piece, window) = (&pieces, &next_piece, &window);
            scope.spawn(move || loop {
                let i = next_piece.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                let Some(p) = pieces.get(i) else { break };
                if !window.wait_for(i) || tx.send((i, parse_chunk(src, p, path))).is_err() {
                    break;
                }
            });
        }
        drop(tx);
        let feed = ChunkFeed::Threaded {
            rx,
            early: FxHashMap::default(),
            next: 0,
            total: pieces.len(),
            window: window.clone(),
            src,
            starts: pieces.iter().map(|p| p[0].offset).collect(),
        };
        // When the builder is done, even by an early error or a panic, waiting workers stop
        // (the scope joins them: a worker left waiting would hang it).
        struct StopOnDrop<'w>(&'w Window);
        impl Drop for StopOnDrop<'_> {
            fn drop(&mut self) {
                self.0.stop();
            }
        }
        let _stop = StopOnDrop(&window);
        build(feed)
    })
}
