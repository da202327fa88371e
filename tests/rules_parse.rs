//! Every shipped rule file parses.
use irw::rules::parse::parse_file;
use irw::SourceFile;

#[test]
fn shipped_rule_files_parse() {
    let mut n = 0;
    for e in std::fs::read_dir("rules").unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_some_and(|x| x == "rw") {
            let src = SourceFile::new(
                p.display().to_string(),
                std::fs::read_to_string(&p).unwrap(),
            );
            if let Err(d) = parse_file(&src) {
                panic!("{d}");
            }
            n += 1;
        }
    }
    assert!(n >= 3);
}
