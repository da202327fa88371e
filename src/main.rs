//! The `irw` binary: see [`irw::cli`].

fn main() {
    configure_allocator();
    std::process::exit(irw::cli::main());
}

/// glibc gives each thread its own heap and grows it one allocation at a time, with an
/// `mprotect` call each: the parser threads, which build hundreds of thousands of small
/// attribute dictionaries in a large program, made ~30 000 such calls for 10^6 ops. All threads
/// use the main heap instead, grown 64 MiB at a time. (Measured with `strace -c`; a
/// transparent-huge-page advice for large blocks was tried too and did not pay.)
fn configure_allocator() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: called before any other thread exists; mallopt only changes allocator settings.
    unsafe {
        libc::mallopt(libc::M_ARENA_MAX, 1);
        libc::mallopt(libc::M_TOP_PAD, 64 << 20);
    }
}
