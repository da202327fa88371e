//! The `irw` binary: see [`irw::command`].

fn main() {
    configure_allocator();
    let (stdout, stderr) = closed_at_start::streams();
    irw::command::set_closed_at_start(stdout, stderr);
    std::process::exit(irw::command::main());
}

/// Which of standard output and standard error were closed when the process started
/// (`irw prog >&-`). The Rust runtime opens `/dev/null` on a closed standard descriptor before
/// `main` runs (so that a file opened later cannot take its number), which would make output
/// to a closed descriptor vanish with exit code 0; a function in `.init_array`, which the
/// dynamic loader runs before the runtime starts, looks first.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
mod closed_at_start {
    use std::sync::atomic::{AtomicBool, Ordering};

    static STDOUT: AtomicBool = AtomicBool::new(false);
    static STDERR: AtomicBool = AtomicBool::new(false);

    extern "C" fn record() {
        // SAFETY: `fcntl(F_GETFD)` only reads the descriptor's flags; -1 means it is not open.
        let closed = |fd| unsafe { libc::fcntl(fd, libc::F_GETFD) } == -1;
        STDOUT.store(closed(1), Ordering::Relaxed);
        STDERR.store(closed(2), Ordering::Relaxed);
    }

    #[used]
    #[link_section = ".init_array"]
    static RECORD: extern "C" fn() = record;

    pub fn streams() -> (bool, bool) {
        (
            STDOUT.load(Ordering::Relaxed),
            STDERR.load(Ordering::Relaxed),
        )
    }
}

/// Elsewhere the runtime's reopening cannot be seen past: a closed descriptor reads as open.
#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
mod closed_at_start {
    pub fn streams() -> (bool, bool) {
        (false, false)
    }
}

/// The heap grows 64 MiB at a time rather than one allocation at a time: parsing a large program
/// builds hundreds of thousands of small attribute dictionaries, and each growth is a system
/// call. Each thread keeps glibc's heap of its own: the parser's workers, its builder and the
/// printer's workers allocate at the same time, and one shared heap would serialize them on its
/// lock (measured with `strace -c` on 10^6 ops: a shared heap waits on its lock about three
/// times as often, and a 96-layer TransformerEncoder takes about a fifth longer end to end).
fn configure_allocator() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: called before any other thread exists; mallopt only changes allocator settings.
    unsafe {
        libc::mallopt(libc::M_TOP_PAD, 64 << 20);
    }
}
