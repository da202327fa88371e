//! The `irw` binary: see [`irw::cli`].
fn main() {
    std::process::exit(irw::cli::main());
}
