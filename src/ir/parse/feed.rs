//! The chunk feed: chunks of lines parsed on worker threads, handed to the builder in file
//! order, with the workers held at most a window ahead so that peak memory does not depend on
//! the scheduler.

use super::*;
use crate::ir::window::{worker_threads, StopOnDrop, Window};

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

/// How many chunks the workers may parse ahead of the builder (see [`Window`]).
const CHUNKS_AHEAD: usize = 8;

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
    let threads = worker_threads();
    if pieces.len() <= 1 || threads == 1 {
        let chunks = pieces.iter().map(|p| parse_chunk(src, p, path)).collect();
        return build(ChunkFeed::Inline(chunks));
    }
    let next_piece = std::sync::atomic::AtomicUsize::new(0);
    let window = std::sync::Arc::new(Window::new(CHUNKS_AHEAD));
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
        let _stop = StopOnDrop(&window);
        build(feed)
    })
}
