//! Every shipped rule file parses.
use crate::rules::parse::parse_file;
use crate::SourceFile;

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

#[test]
fn shipped_rule_files_resolve() {
    let sets = vec![("k_steps".to_string(), "4".to_string())];
    let rs = crate::rules::load(&["rules/grad_merge.rw".into()], &sets)
        .unwrap_or_else(|d| panic!("{d}"));
    let names: Vec<&str> = rs.phases.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "check",
            "master_grad",
            "tokens",
            "tokens_check",
            "trace",
            "accumulate",
            "tokens_divisor",
            "tokens_guard",
            "merged",
            "merged_check",
            "hoist",
            "zero",
            "zero_check",
            "self_schedule"
        ]
    );
    let sets = vec![
        ("k_steps".to_string(), "4".to_string()),
        (
            "gradient_sync_after_accumulate".to_string(),
            "false".to_string(),
        ),
    ];
    let rs = crate::rules::load(&["rules/grad_merge.rw".into()], &sets)
        .unwrap_or_else(|d| panic!("{d}"));
    let names: Vec<&str> = rs.phases.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "check",
            "master_grad",
            "tokens",
            "tokens_check",
            "trace",
            "accumulate",
            "tokens_divisor",
            "tokens_guard",
            "merged",
            "merged_check",
            "zero",
            "zero_check",
            "self_schedule"
        ]
    );
}
