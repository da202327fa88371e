//! The bad-input corpus beyond single IR files (`tests/bad/`): rule files, flags, executor
//! inputs, feed files and Paddle JSON, each run through the real binary. Together with
//! `tests/bad/`, the goldens and the other tests, it exercises every error message irw can print
//! (`tests/error_coverage.rs` checks that).
//!
//! A case is a few small files written to a fresh directory (the binary runs there, so messages
//! show `r.rw:3:11`), plus `p.ir` and `s.ir`: the fixture training program and its startup
//! program (`before.ir`, `startup_before.ir`). Each case asserts the exit code, where the first
//! error line points (`FILE:LINE:COL`, or no position), a caret under a positioned error, the
//! message, an empty standard output, and no panic.

mod common;
use common::*;

use libtest_mimic::{Arguments, Failed, Trial};

struct Case {
    name: &'static str,
    files: Vec<(&'static str, Vec<u8>)>,
    args: Vec<&'static str>,
    exit: i32,
    /// `r.rw:3:11`, or `""` for an error without a position.
    at: &'static str,
    msg: &'static str,
}

/// A bad rule file `r.rw` applied to `p.ir`.
fn rule(name: &'static str, text: &str, at: &'static str, msg: &'static str) -> Case {
    Case {
        name,
        files: vec![("r.rw", text.as_bytes().to_vec())],
        args: vec!["--rules", "r.rw", "p.ir"],
        exit: 1,
        at,
        msg,
    }
}

/// `rule` with a rule body: `// c\nrule r {\n<body>}\n` (the body's first line is line 3).
fn body(name: &'static str, body: &str, at: &'static str, msg: &'static str) -> Case {
    rule(name, &format!("// c\nrule r {{\n{body}}}\n"), at, msg)
}

impl Case {
    fn args(mut self, args: &[&'static str]) -> Case {
        self.args = args.to_vec();
        self
    }
    fn exit(mut self, code: i32) -> Case {
        self.exit = code;
        self
    }
    fn file(mut self, name: &'static str, text: impl AsRef<[u8]>) -> Case {
        self.files.push((name, text.as_ref().to_vec()));
        self
    }
}

/// A command line with no files of its own.
fn cli(name: &'static str, args: &[&'static str], exit: i32, msg: &'static str) -> Case {
    Case {
        name,
        files: vec![],
        args: args.to_vec(),
        exit,
        at: "",
        msg,
    }
}

fn run(case: &Case) -> Result<(), Failed> {
    let dir = tempfile::tempdir()?;
    std::fs::copy(paddle_fixtures().join("before.ir"), dir.path().join("p.ir"))?;
    std::fs::copy(
        paddle_fixtures().join("startup_before.ir"),
        dir.path().join("s.ir"),
    )?;
    for (name, text) in &case.files {
        std::fs::write(dir.path().join(name), text)?;
    }
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_irw"))
        .args(&case.args)
        .current_dir(dir.path())
        .stdin(std::process::Stdio::null())
        .output()?;
    let err = String::from_utf8_lossy(&out.stderr);
    if err.contains("panicked") {
        return Err(format!("irw panicked:\n{err}").into());
    }
    if out.status.code() != Some(case.exit) {
        return Err(format!(
            "exit code {:?}, want {}; stderr:\n{err}",
            out.status.code(),
            case.exit
        )
        .into());
    }
    if !out.stdout.is_empty() {
        return Err(format!(
            "a failing run printed on standard output:\n{}",
            String::from_utf8_lossy(&out.stdout)
        )
        .into());
    }
    let first = err.lines().next().unwrap_or("");
    if case.at.is_empty() {
        if !first.starts_with("error:") {
            return Err(format!("want an error without a position, got:\n{err}").into());
        }
    } else {
        let want = format!("{}: error: ", case.at);
        if !first.starts_with(&want) {
            return Err(format!("want the error at {}, got:\n{err}", case.at).into());
        }
        if !err
            .lines()
            .nth(2)
            .is_some_and(|l| l.trim_end().ends_with('^'))
        {
            return Err(format!("no caret under the source line:\n{err}").into());
        }
    }
    if !err.contains(case.msg) {
        return Err(format!("want `{}` in:\n{err}", case.msg).into());
    }
    Ok(())
}

fn rule_cases() -> Vec<Case> {
    vec![
        rule(
            "rules_import_condition_not_bool",
            "param a: bool = true;\nimport \"x.rw\" if 3;\n",
            "r.rw:2:18",
            "an import condition must be a bool, found a int",
        )
        .file("x.rw", "// x\n"),
        rule(
            "rules_phase_twice",
            "phase p {\n}\nphase p {\n}\n",
            "r.rw:3:7",
            "phase `p` is declared twice in this file",
        ),
        body(
            "rules_where_after_action",
            "    erase %x;\n    where true;\n",
            "r.rw:4:11",
            "`where` must come before the actions",
        ),
        body(
            "rules_no_match",
            "    where true;\n    erase %x;\n",
            "r.rw:2:6",
            "rule `r` has no `match`",
        ),
        body(
            "rules_op_named_twice",
            "    match %o = pd_op.relu(%x), %o = pd_op.scale(%y, _);\n    erase %o;\n",
            "r.rw:3:32",
            "`%o` names two ops in this rule",
        ),
        body(
            "rules_operand_names_of_quoted_op",
            "    match %o = \"my.op\"(a: %x);\n    erase %o;\n",
            "r.rw:3:24",
            "operand names need a known op; `\"my.op\"` has no operand list",
        ),
        body(
            "rules_pattern_operand_count",
            "    match %o = pd_op.relu(%x, %y);\n    erase %o;\n",
            "r.rw:3:11",
            "`pd_op.relu` does not take 2 operand(s)",
        ),
        body(
            "rules_state_name_not_string",
            "    match %o = pd_op.relu(%x);\n    state %m = 3 : type(%x) init pd_op.full() {};\n",
            "r.rw:4:16",
            "a state's name must be a string, found a int",
        ),
        body(
            "rules_state_type_not_type",
            "    match %o = pd_op.relu(%x);\n    state %m = \"a\" : 3 init pd_op.full() {};\n",
            "r.rw:4:22",
            "a state's type must be a type (like type(%g)), found a int",
        ),
        body(
            "rules_after_int",
            "    match %o = pd_op.relu(%x);\n    after 3: pd_op.relu(%x) {};\n",
            "r.rw:4:11",
            "`after` needs a value or an op, found a int",
        ),
        body(
            "rules_before_value",
            "    match %o = pd_op.relu(%x);\n    before %x: pd_op.relu(%x) {};\n",
            "r.rw:4:12",
            "`before` needs an op bound by a pattern, found a value",
        ),
        body(
            "rules_replace_int",
            "    match %o = pd_op.relu(%x);\n    replace 3 with %x;\n",
            "r.rw:4:13",
            "`replace` needs a value, found a int",
        ),
        body(
            "rules_replace_with_int",
            "    match %o = pd_op.relu(%x);\n    replace %o with 3;\n",
            "r.rw:4:21",
            "a value can only be replaced by a value, found a int",
        ),
        body(
            "rules_operand_name_of_any",
            "    match %o = any(%x);\n    in %o: x := %x;\n",
            "r.rw:4:12",
            "operand names need a known op; `%o` may be any op",
        ),
        body(
            "rules_set_operand_to_int",
            "    match %o = pd_op.relu(%x);\n    in %o: x := 3;\n",
            "r.rw:4:17",
            "an operand must be a value, found a int",
        ),
        body(
            "rules_move_next_to_int",
            "    match %o = pd_op.relu(%x);\n    move %o after 3;\n",
            "r.rw:4:19",
            "an op can only move next to a value or an op, not a int",
        ),
        body(
            "rules_if_not_bool",
            "    match %o = pd_op.relu(%x);\n    if 3 { erase %o; }\n",
            "r.rw:4:8",
            "`if` needs a bool, found a int",
        ),
        body(
            "rules_quoted_build_named_operand",
            "    match %o = pd_op.relu(%x);\n    after %x: \"my.op\"(a: %x) {};\n",
            "r.rw:4:23",
            "a quoted op has no operand names: use positional operands",
        ),
        body(
            "rules_build_operand_int",
            "    match %o = pd_op.relu(%x);\n    after %x: pd_op.relu(3) {};\n",
            "r.rw:4:26",
            "an operand must be a value, found a int",
        ),
        body(
            "rules_build_operand_count",
            "    match %o = pd_op.relu(%x);\n    after %x: pd_op.relu(%x, %x) {};\n",
            "r.rw:4:15",
            "`pd_op.relu` takes 1 operand(s), 2 given",
        ),
        body(
            "rules_attribute_holds_value",
            "    match %o = pd_op.relu(%x);\n    after %x: pd_op.relu(%x) {a: %x};\n",
            "r.rw:4:34",
            "an attribute cannot hold a value",
        ),
        body(
            "rules_result_field_of_value",
            "    match %o = pd_op.relu(%x);\n    where %x.out == 1;\n    erase %o;\n",
            "r.rw:4:14",
            "`%x` is a value; only an op has result fields",
        ),
        body(
            "rules_negate_bool",
            "    match %o = pd_op.relu(%x);\n    where -true;\n    erase %o;\n",
            "r.rw:4:11",
            "cannot negate a bool",
        ),
        body(
            "rules_not_int",
            "    match %o = pd_op.relu(%x);\n    where not 3;\n    erase %o;\n",
            "r.rw:4:11",
            "`not` needs a bool, found a int",
        ),
        body(
            "rules_if_expression_not_bool",
            "    match %o = pd_op.relu(%x);\n    where if 3 then true else false;\n    erase %o;\n",
            "r.rw:4:14",
            "`if` needs a bool, found a int",
        ),
        body(
            "rules_query_arity",
            "    match %o = pd_op.relu(%x);\n    where uses(%x, %x) == 1;\n    erase %o;\n",
            "r.rw:4:11",
            "`uses` takes 1 argument(s), 2 given",
        ),
        body(
            "rules_query_of_int",
            "    match %o = pd_op.relu(%x);\n    where uses(3) == 1;\n    erase %o;\n",
            "r.rw:4:16",
            "`uses` needs a value or op, found a int",
        ),
        body(
            "rules_attr_name_not_string",
            "    match %o = pd_op.relu(%x);\n    where has_attr(%o, 3);\n    erase %o;\n",
            "r.rw:4:24",
            "`has_attr` needs an attribute name string, found a int",
        ),
        rule(
            "rules_eq_guard_not_bool",
            "// c\nrewrite r: pd_op.relu(%x) => %x where 3;\n",
            "r.rw:2:39",
            "a guard must be a bool, found a int",
        ),
        rule(
            "rules_eq_both_ways_computed_attribute",
            "// c\nrewrite r: pd_op.scale(%x, %y) {bias: 0} <=> pd_op.scale(%x, %y) {bias: 1 + 1};\n",
            "r.rw:2:46",
            "`<=>` needs both sides to be patterns: computed attributes are only allowed with `=>`",
        ),
        rule(
            "rules_param_declared_differently",
            "param a: int = 2;\nimport \"x.rw\";\n",
            "x.rw:1:7",
            "parameter `a` is declared differently in two files",
        )
        .file("x.rw", "param a: int = 1;\n"),
        rule(
            "rules_import_cycle",
            "import \"r.rw\";\n",
            "r.rw:1:8",
            "import cycle: r.rw -> r.rw",
        ),
        rule(
            "rules_not_utf8",
            "import \"x.rw\";\n",
            "r.rw:1:8",
            "it is not UTF-8",
        )
        .file("x.rw", b"// \xff\n"),
        rule("rules_set_bad_value", "param a: int = 1;\n", "", "--set a=zz: `zz` is not a valid int")
            .args(&["--rules", "r.rw", "--set", "a=zz", "p.ir"])
            .exit(2),
        rule("rules_set_unknown", "param a: int = 1;\n", "", "--set b=2: no rule file declares a parameter `b`")
            .args(&["--rules", "r.rw", "--set", "b=2", "p.ir"])
            .exit(2),
        rule("rules_set_no_name", "param a: int = 1;\n", "", "--set `=2`: expected name=value")
            .args(&["--rules", "r.rw", "--set", "=2", "p.ir"])
            .exit(2),
        body(
            "eval_negate_string",
            "    match %o = pd_op.add(%x, %y);\n    where -attr(%o, \"struct_name\") == 1;\n    erase %o;\n",
            "r.rw:4:11",
            "cannot negate a string",
        ),
        body(
            "eval_not_string",
            "    match %o = pd_op.add(%x, %y);\n    where not attr(%o, \"struct_name\");\n    erase %o;\n",
            "r.rw:4:11",
            "`not` needs a bool, found a string",
        ),
        body(
            "eval_and_string",
            "    match %o = pd_op.add(%x, %y);\n    where attr(%o, \"struct_name\") and true;\n    erase %o;\n",
            "r.rw:4:11",
            "`and` needs a bool, found a string",
        ),
        body(
            "eval_min_string",
            "    match %o = pd_op.add(%x, %y);\n    where min(attr(%o, \"struct_name\"), 1) == 1;\n    erase %o;\n",
            "r.rw:4:11",
            "`min` needs numbers",
        ),
        body(
            "eval_len_of_int",
            "    match %o = pd_op.add(%x, %y);\n    where len(attr(%o, \"op_role\")) == 1;\n    erase %o;\n",
            "r.rw:4:11",
            "bad arguments to `len`: int",
        ),
        body(
            "eval_division_by_zero_at_match",
            "    match %o = pd_op.add(%x, %y);\n    where 1.5 / (attr(%o, \"op_role\") * 0) == 1;\n    erase %o;\n",
            "r.rw:4:11",
            "division by zero",
        ),
        rule(
            "eval_division_by_zero_in_param",
            "param a: int = 1 / 0;\n",
            "r.rw:1:16",
            "division by zero",
        ),
        rule(
            "eval_program_value_in_param",
            "param a: bool = name(%x) == \"a\";\n",
            "r.rw:1:22",
            "`%x` is a program value; it has no value here",
        ),
        rule(
            "eval_query_in_param",
            "param a: bool = uses(1) == 1;\n",
            "r.rw:1:17",
            "`uses` asks the program; it cannot be used here",
        ),
        rule(
            "eval_build_in_param",
            "param a: bool = pd_op.relu(%x) {} == 1;\n",
            "r.rw:1:17",
            "an op can only be built in an action",
        ),
        body(
            "engine_changed_nothing",
            "    match %o = pd_op.add(%x, %y);\n    set %o {op_role: 0};\n",
            "r.rw:2:6",
            "rule `r` matched but changed nothing",
        ),
        body(
            "engine_replace_with_string",
            "    match %o = pd_op.add(%x, %y);\n    replace %o with attr(%o, \"struct_name\");\n",
            "r.rw:4:21",
            "expected a value, found a string",
        ),
        body(
            "engine_if_string",
            "    match %o = pd_op.add(%x, %y);\n    if attr(%o, \"struct_name\") { erase %o; }\n",
            "r.rw:4:8",
            "`if` needs a bool, found a string",
        ),
        body(
            "engine_state_name_int",
            "    match %o = pd_op.add(%x, %y);\n    state %m = attr(%o, \"op_role\") : type(%x) init pd_op.full() {dtype: float32, shape: [1], value: 0.0, place: Place(cpu)};\n",
            "r.rw:4:16",
            "a state name must be a string, found a int",
        ),
        body(
            "engine_state_type_int",
            "    match %o = pd_op.add(%x, %y);\n    state %m = \"buf\" : attr(%o, \"op_role\") init pd_op.full() {dtype: float32, shape: [1], value: 0.0, place: Place(cpu)};\n",
            "r.rw:4:24",
            "a state type must be a type, found a int",
        ),
        body(
            "engine_erase_used",
            "    match %o = pd_op.add(%x, %y);\n    erase %o;\n",
            "r.rw:4:5",
            "cannot erase `%o`: its result is still used",
        ),
        body(
            "engine_move_next_to_itself",
            "    match %o = pd_op.add(%x, %y);\n    move %o after %o;\n",
            "r.rw:4:5",
            "an op cannot move next to itself",
        ),
        body(
            "engine_set_type_attribute",
            "    match %o = pd_op.add(%x, %y);\n    set %o {a: type(%x)};\n",
            "r.rw:4:16",
            "an attribute cannot hold a type",
        ),
        body(
            "engine_after_int",
            "    match %o = pd_op.add(%x, %y);\n    after if true then attr(%o, \"op_role\") else %x: pd_op.relu(%x) {};\n",
            "r.rw:4:11",
            "`after` needs a value or an op, found a int",
        ),
        body(
            "engine_before_int",
            "    match %o = pd_op.add(%x, %y);\n    before if true then attr(%o, \"op_role\") else %o: pd_op.relu(%x) {};\n",
            "r.rw:4:12",
            "`before` needs an op, found a int",
        ),
        body(
            "engine_build_unknown_op_type",
            "    match %o = pd_op.add(%x, %y);\n    after %x: \"my.op\"(%x) {};\n",
            "r.rw:4:15",
            "irw cannot derive the result type of `my.op`: it is not in the dialect table",
        ),
        body(
            "engine_build_underivable_type",
            "    match %o = pd_op.add(%x, %y);\n    after %x: pd_op.full() {};\n",
            "r.rw:4:15",
            "cannot derive the result type of `pd_op.full` from its operands and attributes",
        ),
        body(
            "engine_state_init_type_mismatch",
            "    match %o = pd_op.add(%x, %y);\n    state %m = \"buf\" : type(%x) init pd_op.full() {dtype: float32, shape: [3], value: 0.0, place: Place(cpu)};\n",
            "r.rw:4:38",
            "the initializer makes a `tensor<3xf32>` but the state is a `tensor<-1x16xf32>`",
        ),
        body(
            "engine_state_init_from_main_value",
            "    match %o = pd_op.add(%x, %y);\n    state %m = \"buf\" : type(%x) init builtin.set_parameter(%x) {parameter_name: \"a\"};\n",
            "r.rw:4:60",
            "a state's initializer runs in the startup program: its operands must be ops built inline, not values of the main program",
        ),
        body(
            "engine_state_init_without_result",
            "    match %o = pd_op.add(%x, %y);\n    state %m = \"buf\" : type(%x) init builtin.set_parameter(pd_op.full() {dtype: float32, shape: [3], value: 0.0, place: Place(cpu)}) {parameter_name: \"a\"};\n",
            "r.rw:4:38",
            "a state initializer must produce a value",
        ),
        body(
            "engine_replace_with_resultless_op",
            "    match %o = pd_op.add(%x, %y);\n    replace %o with builtin.set_parameter(%x) {parameter_name: \"a\"};\n",
            "r.rw:4:21",
            "this op has no result to use as a value",
        ),
        body(
            "matcher_guard_int",
            "    match %o = pd_op.add(%x, %y);\n    where attr(%o, \"op_role\");\n    erase %o;\n",
            "r.rw:4:11",
            "a guard must be a bool, found a int",
        ),
        body(
            "runtime_no_such_result",
            "    match %o = pd_op.sgd_(%p, %l, %g, _);\n    where dtype(%o.3) == float32;\n    erase %o;\n",
            "r.rw:4:17",
            "the op bound to `%o` has no result `3`",
        ),
        body(
            "runtime_dtype_of_int",
            "    match %o = pd_op.add(%x, %y);\n    where dtype(attr(%o, \"op_role\")) == float32;\n    erase %o;\n",
            "r.rw:4:11",
            "`dtype` needs a value",
        ),
        body(
            "runtime_unused_of_int",
            "    match %o = pd_op.add(%x, %y);\n    where unused(attr(%o, \"op_role\"));\n    erase %o;\n",
            "r.rw:4:11",
            "`unused` needs an op (or a value an op defines)",
        ),
        body(
            "runtime_has_attr_int_name",
            "    match %o = pd_op.add(%x, %y);\n    where has_attr(%o, attr(%o, \"op_role\"));\n    erase %o;\n",
            "r.rw:4:11",
            "`has_attr` needs an attribute name",
        ),
        body(
            "runtime_no_such_attribute",
            "    match %o = pd_op.add(%x, %y);\n    where attr(%o, \"nope\") == 1;\n    erase %o;\n",
            "r.rw:4:11",
            "the op has no attribute `nope`",
        ),
        body(
            "runtime_tensor_of_int",
            "    match %o = pd_op.add(%x, %y);\n    where tensor(attr(%o, \"op_role\"), float32) == type(%x);\n    erase %o;\n",
            "r.rw:4:11",
            "`tensor` takes a shape list and a dtype",
        ),
        body(
            "runtime_tensor_of_strings",
            "    match %o = pd_op.add(%x, %y);\n    where tensor([1, attr(%o, \"struct_name\")], float32) == type(%x);\n    erase %o;\n",
            "r.rw:4:11",
            "`tensor`: the shape must be a list of ints",
        ),
        rule(
            "parse_unexpected_eof",
            "// c\nrule r {\n    match %o = pd_op.relu(%x)",
            "r.rw:3:30",
            "unexpected end of file, expected `,`, `;`, `in` or `{`",
        ),
        rule(
            "parse_unknown_escape",
            "param a: string = \"a\\q\";\n",
            "r.rw:1:21",
            "unknown escape `\\q`",
        ),
        rule(
            "parse_unclosed_interpolation",
            "param a: string = \"a{b\";\n",
            "r.rw:1:21",
            "`{` in a string starts an interpolation that is not closed",
        ),
        rule(
            "parse_empty_interpolation",
            "param a: string = \"a{}b\";\n",
            "r.rw:1:21",
            "empty interpolation `{}` in a string",
        ),
        rule(
            "parse_bad_character_in_interpolation",
            "param a: string = \"a{#}b\";\n",
            "r.rw:1:22",
            "unexpected character in interpolation",
        ),
        rule(
            "parse_incomplete_interpolation",
            "param a: string = \"a{1 +}b\";\n",
            "r.rw:1:25",
            "incomplete expression in interpolation",
        ),
        rule(
            "parse_unmatched_brace",
            "param a: string = \"a}b\";\n",
            "r.rw:1:21",
            "unmatched `}` in a string",
        ),
        rule(
            "eq_prefix_operands",
            "// c\nrewrite r: pd_op.add(%x, ..) => %x;\n",
            "r.rw:2:12",
            "`..` is not allowed in an equational rule: list every operand",
        ),
        rule(
            "eq_stage",
            "// c\nrewrite r: pd_op.relu(%x) in forward => %x;\n",
            "r.rw:2:30",
            "an equational rule works on pure values, which have no stage",
        ),
        rule(
            "eq_named_operand",
            "// c\nrewrite r: pd_op.relu(x: %x) => %x;\n",
            "r.rw:2:23",
            "operands of an equational rule are positional: drop the name",
        ),
        rule(
            "eq_named_operand_rhs",
            "// c\nrewrite r: pd_op.relu(%x) => pd_op.relu(x: %x) {};\n",
            "r.rw:2:41",
            "operands of an equational rule are positional: drop the name",
        ),
        rule(
            "eq_type_capture",
            "// c\nrewrite r: pd_op.relu(%x: $t) => %x;\n",
            "r.rw:2:27",
            "type captures are not allowed in an equational rule; use dtype(%x) in the guard",
        ),
        rule(
            "eq_result_field",
            "// c\nrewrite r: pd_op.relu(%x) => %x.out;\n",
            "r.rw:2:33",
            "an equational rule names whole values, not result fields",
        ),
        rule(
            "eq_rhs_not_a_value",
            "// c\nrewrite r: pd_op.relu(%x) => 3;\n",
            "r.rw:2:30",
            "the right-hand side of an equational rule is a value (%x) or an op built from values",
        ),
        rule(
            "eq_too_many_combinations",
            "// c\nrewrite r: pure(pure(pure(%x, %y), %z), %w) => %x;\n",
            "r.rw:2:12",
            "this pattern stands for more than 64 op combinations: name the ops",
        ),
        rule(
            "eq_both_ways_class",
            "// c\nrewrite r: pure(%x, %y) <=> pd_op.add(%x, %y) {};\n",
            "r.rw:2:12",
            "with `<=>` the left side is built too: name one op, not a class or a set",
        ),
        rule(
            "eq_both_ways_capture",
            "// c\nrewrite r: pd_op.scale(%x, %y) {bias: $b} <=> pd_op.scale(%x, %y) {};\n",
            "r.rw:2:39",
            "`$b` is not captured by the right side",
        ),
        rule(
            "eq_both_ways_present",
            "// c\nrewrite r: pd_op.scale(%x, %y) {bias: _} <=> pd_op.scale(%x, %y) {};\n",
            "r.rw:2:39",
            "with `<=>` the left side is built too: `key: _` has no value to build",
        ),
        rule(
            "eq_if_expression",
            "// c\nrewrite r: pd_op.relu(%x) => pd_op.relu(%x) {a: if true then tensor([1], float32) else 1};\n",
            "r.rw:2:49",
            "this expression is not available in equational rules: use captures, dtype(%x), type(%x), const(%x), attr(%s, \"k\"), literals, parameters and arithmetic",
        ),
        rule(
            "eq_dtype_of_field",
            "// c\nrewrite r: %s = pd_op.relu(%x) => %x where dtype(%s.out) == float32;\n",
            "r.rw:2:44",
            "`dtype` takes a value of the left-hand side: dtype(%x)",
        ),
        rule(
            "eq_attr_of_unbound",
            "// c\nrewrite r: pd_op.relu(%x) => %x where attr(%x, \"a\") == 1;\n",
            "r.rw:2:44",
            "`%x` is not an op bound by the left-hand side (`%s = op(..)`)",
        ),
        rule(
            "eq_attr_name_not_string",
            "// c\nrewrite r: %s = pd_op.relu(%x) => %x where attr(%s, if true then 3 else \"a\") == 1;\n",
            "r.rw:2:53",
            "an attribute name is a string",
        ),
        rule(
            "eq_attr_of_field",
            "// c\nrewrite r: %s = pd_op.relu(%x) => %x where attr(%s.out, \"a\") == 1;\n",
            "r.rw:2:44",
            "`attr` takes a bound op and a name: attr(%s, \"bias\")",
        ),
        rule(
            "eq_in_on_values",
            "// c\nrewrite r: pd_op.relu(%x) => %x where dtype(%x) in [float32];\n",
            "r.rw:2:39",
            "`in` on program values is not available in equational rules",
        ),
        rule(
            "limits_long_clause",
            &format!("param a: int = {}1;\n", "1+".repeat(4999)),
            "r.rw:1:529",
            "this clause has more than 256 operators and brackets",
        ),
    ]
}

fn main() {
    let args = Arguments::from_args();
    let cases: Vec<Case> = rule_cases().into_iter().collect();
    let mut names = std::collections::BTreeSet::new();
    for c in &cases {
        assert!(names.insert(c.name), "two cases are named {}", c.name);
    }
    let trials = cases
        .into_iter()
        .map(|c| Trial::test(format!("bad::{}", c.name), move || run(&c)))
        .collect();
    libtest_mimic::run(&args, trials).exit();
}
