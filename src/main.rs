fn main() {
    let path = std::env::args().nth(1).unwrap();
    let text = std::fs::read_to_string(&path).unwrap();
    let src = irw::SourceFile::new(path, text);
    match irw::ir::parse_module(&src) {
        Ok(m) => print!("{}", irw::ir::print_module(&m)),
        Err(d) => { eprint!("{d}"); std::process::exit(1) }
    }
}
