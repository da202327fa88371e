//! `grad_merge.rw --set schedule=cond`: the self-scheduling form (a step counter and the
//! optimize stage inside a `pd_op.if`), rewritten through the embedding API, executed by
//! `irw check` (every op at every micro-step) and linted inside its region.
use irw::api::{check, rewrite, Format, Input, Rules};
use irw::executor::CheckOptions;

tests![
    cond_form_has_the_optimize_stage_in_an_if,
    cond_form_passes_check,
    cond_form_with_the_wrong_k_fails_check,
    engine_form_is_unchanged_by_the_parameter,
    check_without_rules_is_a_usage_error,
];

fn mlp() -> String {
    std::fs::read_to_string("examples/mlp.ir").expect("examples/mlp.ir")
}

fn rules(schedule: Option<&str>) -> Rules {
    let mut params = vec![("k_steps".to_string(), "4".to_string())];
    if let Some(s) = schedule {
        params.push(("schedule".into(), s.into()));
    }
    Rules {
        files: vec!["rules/grad_merge.rw".into()],
        params,
    }
}

fn input(text: &str) -> Input<'_> {
    Input {
        name: "examples/mlp.ir",
        text,
    }
}

fn cond_form_has_the_optimize_stage_in_an_if() {
    let text = mlp();
    let out = rewrite(input(&text), None, &rules(Some("cond")), Format::Text).expect("rewrite");
    let main = out.main;
    let startup = out.startup.expect("startup");
    assert!(main.contains("%kwarg_@GRAD_MERGE_STEP@ "), "{main}");
    assert!(
        startup.contains("output_name:\"@GRAD_MERGE_STEP@\""),
        "{startup}"
    );
    let if_line = main
        .lines()
        .position(|l| l.contains("\"pd_op.if\""))
        .expect("a pd_op.if");
    assert!(main.contains("\"pd_op.remainder\"") && main.contains("\"pd_op.equal\""));
    // Every op_role 2 op is inside the if (indented one level deeper), none outside.
    let lines: Vec<&str> = main.lines().collect();
    let else_line = if_line
        + lines[if_line..]
            .iter()
            .position(|l| l.trim() == "} else {")
            .unwrap();
    for (i, l) in lines.iter().enumerate() {
        if l.contains("op_role:2") {
            assert!(
                i > if_line && i < else_line,
                "optimize-stage op outside the if: {l}"
            );
            assert!(l.starts_with("        ("), "{l}");
        }
    }
    assert!(lines[if_line + 1..else_line]
        .iter()
        .any(|l| l.contains("pd_op.sgd_")));
    assert!(lines[if_line + 1..else_line]
        .iter()
        .any(|l| l.contains("pd_op.set_value_with_tensor_")));
    // The program reads back and prints the same.
    let again = rewrite(
        input(&(main.clone() + "startup " + &startup)),
        None,
        &Rules::default(),
        Format::Text,
    )
    .expect("reparse");
    assert_eq!(again.main, main);
    // irw lint sees the region's ops and finds no unordered access there.
    let m = irw::parse_module(&irw::SourceFile::new("m.ir", main.as_str())).unwrap();
    let report = irw::lint(&m);
    assert!(report.hazards.is_empty(), "{:?}", report.hazards);
    assert!(report.instructions > 0);
}

fn cond_form_passes_check() {
    let text = mlp();
    let report = check(
        input(&text),
        None,
        &rules(Some("cond")),
        &CheckOptions::default(),
    )
    .expect("check");
    assert!(report.passed(), "{report}");
    assert!(report.rows.iter().any(|r| r.kind == "param"));
}

fn cond_form_with_the_wrong_k_fails_check() {
    // Merged over 4 micro-steps, checked over 2: the counter never reaches 4, the optimizer never
    // steps, and the check must say so.
    let text = mlp();
    let opts = CheckOptions {
        k_steps: 2,
        ..Default::default()
    };
    let report = check(input(&text), None, &rules(Some("cond")), &opts).expect("check");
    assert!(!report.passed(), "{report}");
}

fn engine_form_is_unchanged_by_the_parameter() {
    let text = mlp();
    let a = rewrite(input(&text), None, &rules(None), Format::Text).unwrap();
    let b = rewrite(input(&text), None, &rules(Some("engine")), Format::Text).unwrap();
    assert_eq!(a.main, b.main);
    assert!(!a.main.contains("pd_op.if"));
}

fn check_without_rules_is_a_usage_error() {
    // Nothing to rewrite means nothing to prove: refused, as `irw check` without `--rules`
    // and `--rewritten` is.
    let text = mlp();
    let none = Rules {
        files: Vec::new(),
        params: Vec::new(),
    };
    let e = check(input(&text), None, &none, &CheckOptions::default())
        .expect_err("no rule file")
        .to_string();
    assert!(e.contains("check needs at least one rule file"), "{e}");
}
