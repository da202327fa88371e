//! Dev driver: cargo run --example rw_apply -- RULES MAIN.ir [STARTUP.ir] [k=v ...]
use irw::ir::{parse_module, parse_startup_into, print_module};
use irw::rewrite::{apply, Options};
use irw::SourceFile;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let rules = &args[0];
    let main_src = SourceFile::new(&args[1], std::fs::read_to_string(&args[1]).unwrap());
    let mut m = parse_module(&main_src).unwrap_or_else(|d| panic!("{d}"));
    let mut sets = vec![];
    for a in &args[2..] {
        if a.ends_with(".ir") {
            let s = SourceFile::new(a, std::fs::read_to_string(a).unwrap());
            parse_startup_into(&mut m, &s).unwrap_or_else(|d| panic!("{d}"));
        } else {
            sets.push(irw::rules::parse_set(a).unwrap());
        }
    }
    let rs = match irw::rules::load(&[rules.into()], &sets) {
        Ok(r) => r,
        Err(d) => {
            eprint!("{d}");
            std::process::exit(2)
        }
    };
    let t = std::time::Instant::now();
    match apply(
        &mut m,
        &rs,
        &Options {
            trace: true,
            ..Default::default()
        },
    ) {
        Ok(st) => {
            eprint!("{}", st.render());
            for l in &st.trace {
                eprintln!("{l}");
            }
        }
        Err(d) => {
            eprint!("{d}");
            std::process::exit(1)
        }
    }
    eprintln!("rewrite took {:?}", t.elapsed());
    print!("{}", print_module(&m));
}
