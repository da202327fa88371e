//! The bad-input corpus beyond single IR files (those are the golden cases
//! `tests/golden/bad/*.test`): rule files, flags, executor inputs, feed files and Paddle JSON,
//! each run through the real binary. Together with the goldens and the other tests, it exercises
//! every error message irw can print (`tests/all/error_coverage.rs` checks that).
//!
//! These cases are not golden cases (yet): each is several files in a fresh working directory,
//! which one golden case file cannot express. They assert what a golden case's `EXIT`,
//! `ERROR-AT` and `CHECK-ERR` lines would.
//!
//! A case is a few small files written to a fresh directory (the binary runs there, so messages
//! show `r.rw:3:11`), plus `p.ir` and `s.ir`: the fixture training program and its startup
//! program (`before.ir`, `startup_before.ir`). Each case asserts the exit code, where the first
//! error line points (`FILE:LINE:COL`, or no position), a caret under the source line it shows, the
//! message, an empty standard output, and no panic.

use crate::common::*;

use libtest_mimic::{Failed, Trial};

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

/// A program `e.ir` run with `args` (`irw run e.ir ...`).
fn exec(
    name: &'static str,
    program: &str,
    args: &[&'static str],
    at: &'static str,
    msg: &'static str,
) -> Case {
    Case {
        name,
        files: vec![("e.ir", program.as_bytes().to_vec())],
        args: args.to_vec(),
        exit: 1,
        at,
        msg,
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
    // What a golden case's `ERROR-AT` line asserts: the first line, and a caret under the
    // source line it shows.
    let at = if case.at.is_empty() {
        "-".to_string()
    } else {
        format!("{}: error: ", case.at)
    };
    crate::golden::error_at(&at, &err)?;
    if !err.contains(case.msg) {
        return Err(format!("want `{}` in:\n{err}", case.msg).into());
    }
    Ok(())
}

/// A program with a keyword argument and a `builtin.combine` (a value of vector type).
const VEC_PROGRAM: &str = r#"{
    ^kw:
        %kwarg_a {persistable:true}
    (%0) = "pd_op.relu" (%kwarg_a) {} : (tensor<2xf32>) -> tensor<2xf32>
    (%1) = "builtin.combine" (%0) {} : (tensor<2xf32>) -> vec[tensor<2xf32>]
    (%2) = "pd_op.add_n" (%1) {} : (vec[tensor<2xf32>]) -> tensor<2xf32>
}
"#;

fn rule_cases() -> Vec<Case> {
    vec![
        rule(
            "rules_import_condition_not_bool",
            "param a: bool = true;\nimport \"x.rw\" if 3;\n",
            "r.rw:2:18",
            "an import condition must be a bool, found an int",
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
            "a state's name must be a string, found an int",
        ),
        body(
            "rules_state_type_not_type",
            "    match %o = pd_op.relu(%x);\n    state %m = \"a\" : 3 init pd_op.full() {};\n",
            "r.rw:4:22",
            "a state's type must be a type (like type(%g)), found an int",
        ),
        body(
            "rules_after_int",
            "    match %o = pd_op.relu(%x);\n    after 3: pd_op.relu(%x) {};\n",
            "r.rw:4:11",
            "`after` needs a value or an op, found an int",
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
            "`replace` needs a value, found an int",
        ),
        body(
            "rules_replace_with_int",
            "    match %o = pd_op.relu(%x);\n    replace %o with 3;\n",
            "r.rw:4:21",
            "a value can only be replaced by a value, found an int",
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
            "an operand must be a value, found an int",
        ),
        body(
            "rules_move_next_to_int",
            "    match %o = pd_op.relu(%x);\n    move %o after 3;\n",
            "r.rw:4:19",
            "an op can only move next to a value or an op, not an int",
        ),
        body(
            "rules_if_not_bool",
            "    match %o = pd_op.relu(%x);\n    if 3 { erase %o; }\n",
            "r.rw:4:8",
            "`if` needs a bool, found an int",
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
            "an operand must be a value, found an int",
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
            "`not` needs a bool, found an int",
        ),
        body(
            "rules_if_expression_not_bool",
            "    match %o = pd_op.relu(%x);\n    where if 3 then true else false;\n    erase %o;\n",
            "r.rw:4:14",
            "`if` needs a bool, found an int",
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
            "`uses` needs a value or op, found an int",
        ),
        body(
            "rules_attr_name_not_string",
            "    match %o = pd_op.relu(%x);\n    where has_attr(%o, 3);\n    erase %o;\n",
            "r.rw:4:24",
            "`has_attr` needs an attribute name string, found an int",
        ),
        rule(
            "rules_eq_guard_not_bool",
            "// c\nrewrite r: pd_op.relu(%x) => %x where 3;\n",
            "r.rw:2:39",
            "a guard must be a bool, found an int",
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
            "runtime_dtype_of_vector",
            "    match %c = builtin.combine(%x);\n    where dtype(%c) == float32;\n    erase %c;\n",
            "r.rw:4:11",
            "`dtype`: the value's type `vec[tensor<2xf32>]` is not a tensor",
        )
        .file("e.ir", VEC_PROGRAM)
        .args(&["--rules", "r.rw", "e.ir"]),
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
            "a state name must be a string, found an int",
        ),
        body(
            "engine_state_type_int",
            "    match %o = pd_op.add(%x, %y);\n    state %m = \"buf\" : attr(%o, \"op_role\") init pd_op.full() {dtype: float32, shape: [1], value: 0.0, place: Place(cpu)};\n",
            "r.rw:4:24",
            "a state type must be a type, found an int",
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
            "`after` needs a value or an op, found an int",
        ),
        body(
            "engine_before_int",
            "    match %o = pd_op.add(%x, %y);\n    before if true then attr(%o, \"op_role\") else %o: pd_op.relu(%x) {};\n",
            "r.rw:4:12",
            "`before` needs an op, found an int",
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
            "a guard must be a bool, found an int",
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

/// Executor errors: each at the op (its line in `e.ir`), under `irw run`.
fn exec_cases() -> Vec<Case> {
    vec![
        exec(
            "exec_slice_axis_out_of_range",
            r#"{
    (%0) = "pd_op.full" () {dtype:float32,place:Place(cpu),shape:[4,2],stop_gradient:[true],value:1} : () -> tensor<4x2xf32>
    (%1) = "pd_op.full_int_array" () {dtype:int64,place:Place(cpu),stop_gradient:[true],value:[0]} : () -> tensor<1xi64>
    (%2) = "pd_op.full_int_array" () {dtype:int64,place:Place(cpu),stop_gradient:[true],value:[2]} : () -> tensor<1xi64>
    (%3) = "pd_op.slice" (%0, %1, %2) {axes:[2],decrease_axis:[],infer_flags:[1]} : (tensor<4x2xf32>, tensor<1xi64>, tensor<1xi64>) -> tensor<2x2xf32>
}
"#,
            &["run", "e.ir"],
            "e.ir:5:5",
            "slice: axis 2 out of range for rank 2",
        ),
        exec(
            "exec_slice_decrease_not_one",
            r#"{
    (%0) = "pd_op.full" () {dtype:float32,place:Place(cpu),shape:[4,2],stop_gradient:[true],value:1} : () -> tensor<4x2xf32>
    (%1) = "pd_op.full_int_array" () {dtype:int64,place:Place(cpu),stop_gradient:[true],value:[0]} : () -> tensor<1xi64>
    (%2) = "pd_op.full_int_array" () {dtype:int64,place:Place(cpu),stop_gradient:[true],value:[2]} : () -> tensor<1xi64>
    (%3) = "pd_op.slice" (%0, %1, %2) {axes:[0],decrease_axis:[0],infer_flags:[1]} : (tensor<4x2xf32>, tensor<1xi64>, tensor<1xi64>) -> tensor<2xf32>
}
"#,
            &["run", "e.ir"],
            "e.ir:5:5",
            "slice: decreased axis 0 has 2 elements, not 1",
        ),
        exec(
            "exec_ranks_disagree",
            r#"{
    (%0) = "pd_op.data" () {dtype:int64,name:"s",place:Place(cpu),shape:[-1,2],stop_gradient:[true]} : () -> tensor<-1x2xi64>
    (%1) = "pd_op.full" () {dtype:float32,place:Place(cpu),shape:[6],stop_gradient:[true],value:1} : () -> tensor<6xf32>
    (%2) = "pd_op.reshape" (%1, %0) {} : (tensor<6xf32>, tensor<-1x2xi64>) -> tensor<-1x-1xf32>
    (%3) = "pd_op.c_allreduce_sum" (%2) {ring_id:0} : (tensor<-1x-1xf32>) -> tensor<-1x-1xf32>
}
"#,
            &["run", "e.ir", "--ranks", "2", "--feed", "f.json"],
            "e.ir:5:5",
            "ranks disagree on the collective's operand: [1, 6] float32 vs [6, 1] float32",
        )
        .file(
            "f.json",
            r#"{"inputs": {"s": {"shape": [2, 2], "dtype": "int64", "values": [[1, 6], [6, 1]]}}}"#,
        ),
        exec(
            "exec_add_grad_align",
            r#"{
    (%0) = "pd_op.full" () {dtype:float32,place:Place(cpu),shape:[2,3],stop_gradient:[true],value:1} : () -> tensor<2x3xf32>
    (%1) = "pd_op.full" () {dtype:float32,place:Place(cpu),shape:[3],stop_gradient:[true],value:1} : () -> tensor<3xf32>
    (%2) = "pd_op.full" () {dtype:float32,place:Place(cpu),shape:[3],stop_gradient:[true],value:1} : () -> tensor<3xf32>
    (%3, %4) = "pd_op.add_grad" (%0, %1, %2) {axis:-1} : (tensor<2x3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<2x3xf32>, tensor<3xf32>
}
"#,
            &["run", "e.ir"],
            "e.ir:5:5",
            "cannot align shape [2, 3] to rank 1",
        ),
        exec(
            "exec_matmul_inner",
            r#"{
    (%0) = "pd_op.full" () {dtype:float32,place:Place(cpu),shape:[2,3],stop_gradient:[true],value:1} : () -> tensor<2x3xf32>
    (%1) = "pd_op.full" () {dtype:float32,place:Place(cpu),shape:[4,5],stop_gradient:[true],value:1} : () -> tensor<4x5xf32>
    (%2) = "pd_op.matmul" (%0, %1) {transpose_x:false,transpose_y:false} : (tensor<2x3xf32>, tensor<4x5xf32>) -> tensor<2x5xf32>
}
"#,
            &["run", "e.ir"],
            "e.ir:4:5",
            "matmul: inner dimensions differ (3 vs 4)",
        ),
        exec(
            "exec_broadcast_mismatch",
            r#"{
    (%0) = "pd_op.full" () {dtype:float32,place:Place(cpu),shape:[2,3],stop_gradient:[true],value:1} : () -> tensor<2x3xf32>
    (%1) = "pd_op.full" () {dtype:float32,place:Place(cpu),shape:[4,5],stop_gradient:[true],value:1} : () -> tensor<4x5xf32>
    (%2) = "pd_op.add" (%0, %1) {} : (tensor<2x3xf32>, tensor<4x5xf32>) -> tensor<2x5xf32>
}
"#,
            &["run", "e.ir"],
            "e.ir:4:5",
            "shapes [2, 3] and [4, 5] do not broadcast (dimension 2 vs 4)",
        ),
        exec(
            "exec_reshape_two_infers",
            r#"{
    (%0) = "pd_op.full" () {dtype:float32,place:Place(cpu),shape:[2,3],stop_gradient:[true],value:1} : () -> tensor<2x3xf32>
    (%1) = "pd_op.full_int_array" () {dtype:int64,place:Place(cpu),stop_gradient:[true],value:[-1,-1]} : () -> tensor<2xi64>
    (%2) = "pd_op.reshape" (%0, %1) {} : (tensor<2x3xf32>, tensor<2xi64>) -> tensor<6xf32>
}
"#,
            &["run", "e.ir"],
            "e.ir:4:5",
            "reshape: more than one -1 in [-1, -1]",
        ),
        exec(
            "exec_reshape_zero_beyond_rank",
            r#"{
    (%0) = "pd_op.full" () {dtype:float32,place:Place(cpu),shape:[2,3],stop_gradient:[true],value:1} : () -> tensor<2x3xf32>
    (%1) = "pd_op.full_int_array" () {dtype:int64,place:Place(cpu),stop_gradient:[true],value:[0,0,0]} : () -> tensor<3xi64>
    (%2) = "pd_op.reshape" (%0, %1) {} : (tensor<2x3xf32>, tensor<3xi64>) -> tensor<6xf32>
}
"#,
            &["run", "e.ir"],
            "e.ir:4:5",
            "reshape: 0 at position 2 but the input has rank 2",
        ),
        exec(
            "exec_reshape_negative",
            r#"{
    (%0) = "pd_op.full" () {dtype:float32,place:Place(cpu),shape:[2,3],stop_gradient:[true],value:1} : () -> tensor<2x3xf32>
    (%1) = "pd_op.full_int_array" () {dtype:int64,place:Place(cpu),stop_gradient:[true],value:[-2,3]} : () -> tensor<2xi64>
    (%2) = "pd_op.reshape" (%0, %1) {} : (tensor<2x3xf32>, tensor<2xi64>) -> tensor<6xf32>
}
"#,
            &["run", "e.ir"],
            "e.ir:4:5",
            "reshape: invalid dimension -2 in [-2, 3]",
        ),
        exec(
            "exec_reshape_cannot_infer",
            r#"{
    (%0) = "pd_op.full" () {dtype:float32,place:Place(cpu),shape:[2,3],stop_gradient:[true],value:1} : () -> tensor<2x3xf32>
    (%1) = "pd_op.full_int_array" () {dtype:int64,place:Place(cpu),stop_gradient:[true],value:[-1,4]} : () -> tensor<2xi64>
    (%2) = "pd_op.reshape" (%0, %1) {} : (tensor<2x3xf32>, tensor<2xi64>) -> tensor<6xf32>
}
"#,
            &["run", "e.ir"],
            "e.ir:4:5",
            "reshape: cannot infer -1 in [-1, 4] for 6 elements",
        ),
        exec(
            "exec_reshape_count",
            r#"{
    (%0) = "pd_op.full" () {dtype:float32,place:Place(cpu),shape:[2,3],stop_gradient:[true],value:1} : () -> tensor<2x3xf32>
    (%1) = "pd_op.full_int_array" () {dtype:int64,place:Place(cpu),stop_gradient:[true],value:[4,4]} : () -> tensor<2xi64>
    (%2) = "pd_op.reshape" (%0, %1) {} : (tensor<2x3xf32>, tensor<2xi64>) -> tensor<6xf32>
}
"#,
            &["run", "e.ir"],
            "e.ir:4:5",
            "reshape: [4, 4] has 16 elements, the input [2, 3] has 6",
        ),
        exec(
            "exec_transpose_perm_length",
            r#"{
    (%0) = "pd_op.full" () {dtype:float32,place:Place(cpu),shape:[2,3],stop_gradient:[true],value:1} : () -> tensor<2x3xf32>
    (%1) = "pd_op.transpose" (%0) {perm:[0]} : (tensor<2x3xf32>) -> tensor<3x2xf32>
}
"#,
            &["run", "e.ir"],
            "e.ir:3:5",
            "transpose: perm [0] has 1 entries for a tensor of rank 2",
        ),
        exec(
            "exec_transpose_not_permutation",
            r#"{
    (%0) = "pd_op.full" () {dtype:float32,place:Place(cpu),shape:[2,3],stop_gradient:[true],value:1} : () -> tensor<2x3xf32>
    (%1) = "pd_op.transpose" (%0) {perm:[0,0]} : (tensor<2x3xf32>) -> tensor<3x2xf32>
}
"#,
            &["run", "e.ir"],
            "e.ir:3:5",
            "transpose: [0, 0] is not a permutation of 0..2",
        ),
        exec(
            "exec_set_value_counts",
            r#"{
    (%0) = "pd_op.full" () {dtype:float32,place:Place(cpu),shape:[2,3],stop_gradient:[true],value:1} : () -> tensor<2x3xf32>
    (%1) = "pd_op.full" () {dtype:float32,place:Place(cpu),shape:[1],stop_gradient:[true],value:1} : () -> tensor<1xf32>
    (%2) = "pd_op.full_int_array" () {dtype:int64,place:Place(cpu),stop_gradient:[true],value:[0,1]} : () -> tensor<2xi64>
    (%3) = "pd_op.full_int_array" () {dtype:int64,place:Place(cpu),stop_gradient:[true],value:[1]} : () -> tensor<1xi64>
    (%4) = "pd_op.full_int_array" () {dtype:int64,place:Place(cpu),stop_gradient:[true],value:[1]} : () -> tensor<1xi64>
    (%5) = "pd_op.set_value_with_tensor_" (%0, %1, %2, %3, %4) {axes:[0],decrease_axes:[],none_axes:[]} : (tensor<2x3xf32>, tensor<1xf32>, tensor<2xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<2x3xf32>
}
"#,
            &["run", "e.ir"],
            "e.ir:7:5",
            "set_value: 1 axes but 2 starts and 1 ends",
        ),
        exec(
            "exec_set_value_axis",
            r#"{
    (%0) = "pd_op.full" () {dtype:float32,place:Place(cpu),shape:[2,3],stop_gradient:[true],value:1} : () -> tensor<2x3xf32>
    (%1) = "pd_op.full" () {dtype:float32,place:Place(cpu),shape:[1],stop_gradient:[true],value:1} : () -> tensor<1xf32>
    (%2) = "pd_op.full_int_array" () {dtype:int64,place:Place(cpu),stop_gradient:[true],value:[0]} : () -> tensor<1xi64>
    (%3) = "pd_op.full_int_array" () {dtype:int64,place:Place(cpu),stop_gradient:[true],value:[1]} : () -> tensor<1xi64>
    (%4) = "pd_op.full_int_array" () {dtype:int64,place:Place(cpu),stop_gradient:[true],value:[1]} : () -> tensor<1xi64>
    (%5) = "pd_op.set_value_with_tensor_" (%0, %1, %2, %3, %4) {axes:[5],decrease_axes:[],none_axes:[]} : (tensor<2x3xf32>, tensor<1xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<2x3xf32>
}
"#,
            &["run", "e.ir"],
            "e.ir:7:5",
            "set_value: axis 5 out of range for rank 2",
        ),
        exec(
            "exec_set_value_step_zero",
            r#"{
    (%0) = "pd_op.full" () {dtype:float32,place:Place(cpu),shape:[2,3],stop_gradient:[true],value:1} : () -> tensor<2x3xf32>
    (%1) = "pd_op.full" () {dtype:float32,place:Place(cpu),shape:[1],stop_gradient:[true],value:1} : () -> tensor<1xf32>
    (%2) = "pd_op.full_int_array" () {dtype:int64,place:Place(cpu),stop_gradient:[true],value:[0]} : () -> tensor<1xi64>
    (%3) = "pd_op.full_int_array" () {dtype:int64,place:Place(cpu),stop_gradient:[true],value:[1]} : () -> tensor<1xi64>
    (%4) = "pd_op.full_int_array" () {dtype:int64,place:Place(cpu),stop_gradient:[true],value:[0]} : () -> tensor<1xi64>
    (%5) = "pd_op.set_value_with_tensor_" (%0, %1, %2, %3, %4) {axes:[0],decrease_axes:[],none_axes:[]} : (tensor<2x3xf32>, tensor<1xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<2x3xf32>
}
"#,
            &["run", "e.ir"],
            "e.ir:7:5",
            "set_value: step 0 on axis 0",
        ),
        exec(
            "exec_softmax_axis",
            r#"{
    (%0) = "pd_op.full" () {dtype:float32,place:Place(cpu),shape:[2,3],stop_gradient:[true],value:1} : () -> tensor<2x3xf32>
    (%1) = "pd_op.softmax" (%0) {axis:5} : (tensor<2x3xf32>) -> tensor<2x3xf32>
}
"#,
            &["run", "e.ir"],
            "e.ir:3:5",
            "axis 5 out of range for rank 2",
        ),
        exec(
            "exec_softmax_grad_shapes",
            r#"{
    (%0) = "pd_op.full" () {dtype:float32,place:Place(cpu),shape:[2,3],stop_gradient:[true],value:1} : () -> tensor<2x3xf32>
    (%1) = "pd_op.full" () {dtype:float32,place:Place(cpu),shape:[3,2],stop_gradient:[true],value:1} : () -> tensor<3x2xf32>
    (%2) = "pd_op.softmax_grad" (%0, %1) {axis:-1} : (tensor<2x3xf32>, tensor<3x2xf32>) -> tensor<2x3xf32>
}
"#,
            &["run", "e.ir"],
            "e.ir:4:5",
            "softmax_grad: out [2, 3] and out_grad [3, 2] differ in shape",
        ),
        exec(
            "exec_cross_entropy_label_shape",
            r#"{
    (%0) = "pd_op.full" () {dtype:float32,place:Place(cpu),shape:[2,3],stop_gradient:[true],value:1} : () -> tensor<2x3xf32>
    (%1) = "pd_op.full" () {dtype:int64,place:Place(cpu),shape:[5,1],stop_gradient:[true],value:1} : () -> tensor<5x1xi64>
    (%2, %3) = "pd_op.cross_entropy_with_softmax" (%0, %1) {axis:-1,ignore_index:-100,numeric_stable_mode:true,soft_label:false,use_softmax:true} : (tensor<2x3xf32>, tensor<5x1xi64>) -> tensor<2x3xf32>, tensor<2x1xf32>
}
"#,
            &["run", "e.ir"],
            "e.ir:4:5",
            "hard label of shape [5, 1] does not fit logits of shape [2, 3] (expected [2, 1])",
        ),
        exec(
            "exec_cross_entropy_label_range",
            r#"{
    (%0) = "pd_op.full" () {dtype:float32,place:Place(cpu),shape:[2,3],stop_gradient:[true],value:1} : () -> tensor<2x3xf32>
    (%1) = "pd_op.full" () {dtype:int64,place:Place(cpu),shape:[2,1],stop_gradient:[true],value:7} : () -> tensor<2x1xi64>
    (%2, %3) = "pd_op.cross_entropy_with_softmax" (%0, %1) {axis:-1,ignore_index:-100,numeric_stable_mode:true,soft_label:false,use_softmax:true} : (tensor<2x3xf32>, tensor<2x1xi64>) -> tensor<2x3xf32>, tensor<2x1xf32>
}
"#,
            &["run", "e.ir"],
            "e.ir:4:5",
            "label 7 out of range [0, 3)",
        ),
        exec(
            "exec_cross_entropy_grad_loss_shape",
            r#"{
    (%0) = "pd_op.full" () {dtype:float32,place:Place(cpu),shape:[2,3],stop_gradient:[true],value:1} : () -> tensor<2x3xf32>
    (%1) = "pd_op.full" () {dtype:int64,place:Place(cpu),shape:[2,1],stop_gradient:[true],value:0} : () -> tensor<2x1xi64>
    (%2) = "pd_op.full" () {dtype:float32,place:Place(cpu),shape:[5,1],stop_gradient:[true],value:1} : () -> tensor<5x1xf32>
    (%3) = "pd_op.cross_entropy_with_softmax_grad" (%1, %0, %2) {axis:-1,ignore_index:-100,numeric_stable_mode:true,soft_label:false,use_softmax:true} : (tensor<2x1xi64>, tensor<2x3xf32>, tensor<5x1xf32>) -> tensor<2x3xf32>
}
"#,
            &["run", "e.ir"],
            "e.ir:5:5",
            "loss_grad of shape [5, 1] does not fit softmax [2, 3]",
        ),
        exec(
            "exec_cross_entropy_grad_label_range",
            r#"{
    (%0) = "pd_op.full" () {dtype:float32,place:Place(cpu),shape:[2,3],stop_gradient:[true],value:1} : () -> tensor<2x3xf32>
    (%1) = "pd_op.full" () {dtype:int64,place:Place(cpu),shape:[2,1],stop_gradient:[true],value:9} : () -> tensor<2x1xi64>
    (%2) = "pd_op.full" () {dtype:float32,place:Place(cpu),shape:[2,1],stop_gradient:[true],value:1} : () -> tensor<2x1xf32>
    (%3) = "pd_op.cross_entropy_with_softmax_grad" (%1, %0, %2) {axis:-1,ignore_index:-100,numeric_stable_mode:true,soft_label:false,use_softmax:true} : (tensor<2x1xi64>, tensor<2x3xf32>, tensor<2x1xf32>) -> tensor<2x3xf32>
}
"#,
            &["run", "e.ir"],
            "e.ir:5:5",
            "label 9 out of range [0, 3)",
        ),
        exec(
            "exec_sum_axis",
            r#"{
    (%0) = "pd_op.full" () {dtype:float32,place:Place(cpu),shape:[2,3],stop_gradient:[true],value:1} : () -> tensor<2x3xf32>
    (%1) = "pd_op.full_int_array" () {dtype:int64,place:Place(cpu),stop_gradient:[true],value:[5]} : () -> tensor<1xi64>
    (%2) = "pd_op.sum" (%0, %1) {dtype:Undefined,keepdim:false} : (tensor<2x3xf32>, tensor<1xi64>) -> tensor<2xf32>
}
"#,
            &["run", "e.ir"],
            "e.ir:4:5",
            "axis 5 out of range for a tensor of rank 2",
        ),
        exec(
            "exec_sum_grad_shape",
            r#"{
    (%0) = "pd_op.full" () {dtype:float32,place:Place(cpu),shape:[2,3],stop_gradient:[true],value:1} : () -> tensor<2x3xf32>
    (%1) = "pd_op.full" () {dtype:float32,place:Place(cpu),shape:[7],stop_gradient:[true],value:1} : () -> tensor<7xf32>
    (%2) = "pd_op.full_int_array" () {dtype:int64,place:Place(cpu),stop_gradient:[true],value:[1]} : () -> tensor<1xi64>
    (%3) = "pd_op.sum_grad" (%0, %1, %2) {keepdim:false,reduce_all:false} : (tensor<2x3xf32>, tensor<7xf32>, tensor<1xi64>) -> tensor<2x3xf32>
}
"#,
            &["run", "e.ir"],
            "e.ir:5:5",
            "out_grad of shape [7] does not match the reduction of [2, 3]",
        ),
        exec(
            "exec_relu_grad_shapes",
            r#"{
    (%0) = "pd_op.full" () {dtype:float32,place:Place(cpu),shape:[2,3],stop_gradient:[true],value:1} : () -> tensor<2x3xf32>
    (%1) = "pd_op.full" () {dtype:float32,place:Place(cpu),shape:[3,2],stop_gradient:[true],value:1} : () -> tensor<3x2xf32>
    (%2) = "pd_op.relu_grad" (%0, %1) {} : (tensor<2x3xf32>, tensor<3x2xf32>) -> tensor<3x2xf32>
}
"#,
            &["run", "e.ir"],
            "e.ir:4:5",
            "operands must have the same shape, got [2, 3] and [3, 2]",
        ),
        exec(
            "exec_add_n_empty",
            r#"{
    (%0) = "builtin.combine" () {} : () -> vec[]
    (%1) = "pd_op.add_n" (%0) {} : (vec[]) -> tensor<2x3xf32>
}
"#,
            &["run", "e.ir"],
            "e.ir:3:5",
            "add_n needs at least one input",
        ),
        exec(
            "exec_add_n_shapes",
            r#"{
    (%0) = "pd_op.full" () {dtype:float32,place:Place(cpu),shape:[2,3],stop_gradient:[true],value:1} : () -> tensor<2x3xf32>
    (%1) = "pd_op.full" () {dtype:float32,place:Place(cpu),shape:[3,2],stop_gradient:[true],value:1} : () -> tensor<3x2xf32>
    (%2) = "builtin.combine" (%0, %1) {} : (tensor<2x3xf32>, tensor<3x2xf32>) -> vec[tensor<2x3xf32>,tensor<3x2xf32>]
    (%3) = "pd_op.add_n" (%2) {} : (vec[tensor<2x3xf32>,tensor<3x2xf32>]) -> tensor<2x3xf32>
}
"#,
            &["run", "e.ir"],
            "e.ir:5:5",
            "add_n inputs must share a shape, got [2, 3] and [3, 2]",
        ),
        exec(
            "exec_matmul_scalar",
            r#"{
    (%0) = "pd_op.full" () {dtype:float32,place:Place(cpu),shape:[],stop_gradient:[true],value:1} : () -> tensor<f32>
    (%1) = "pd_op.full" () {dtype:float32,place:Place(cpu),shape:[2,3],stop_gradient:[true],value:1} : () -> tensor<2x3xf32>
    (%2) = "pd_op.matmul" (%0, %1) {transpose_x:false,transpose_y:false} : (tensor<f32>, tensor<2x3xf32>) -> tensor<2x3xf32>
}
"#,
            &["run", "e.ir"],
            "e.ir:4:5",
            "matmul operands must have at least one dimension, got [] and [2, 3]",
        ),
        exec(
            "exec_matmul_grad_scalar",
            r#"{
    (%0) = "pd_op.full" () {dtype:float32,place:Place(cpu),shape:[],stop_gradient:[true],value:1} : () -> tensor<f32>
    (%1) = "pd_op.full" () {dtype:float32,place:Place(cpu),shape:[2,3],stop_gradient:[true],value:1} : () -> tensor<2x3xf32>
    (%2) = "pd_op.full" () {dtype:float32,place:Place(cpu),shape:[2,3],stop_gradient:[true],value:1} : () -> tensor<2x3xf32>
    (%3, %4) = "pd_op.matmul_grad" (%0, %1, %2) {transpose_x:false,transpose_y:false} : (tensor<f32>, tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<f32>, tensor<2x3xf32>
}
"#,
            &["run", "e.ir"],
            "e.ir:5:5",
            "matmul_grad operands must have at least one dimension",
        ),
        exec(
            "exec_matmul_grad_out_grad",
            r#"{
    (%0) = "pd_op.full" () {dtype:float32,place:Place(cpu),shape:[2,3],stop_gradient:[true],value:1} : () -> tensor<2x3xf32>
    (%1) = "pd_op.full" () {dtype:float32,place:Place(cpu),shape:[3,4],stop_gradient:[true],value:1} : () -> tensor<3x4xf32>
    (%2) = "pd_op.full" () {dtype:float32,place:Place(cpu),shape:[5,5],stop_gradient:[true],value:1} : () -> tensor<5x5xf32>
    (%3, %4) = "pd_op.matmul_grad" (%0, %1, %2) {transpose_x:false,transpose_y:false} : (tensor<2x3xf32>, tensor<3x4xf32>, tensor<5x5xf32>) -> tensor<2x3xf32>, tensor<3x4xf32>
}
"#,
            &["run", "e.ir"],
            "e.ir:5:5",
            "matmul_grad: out_grad has shape [5, 5], expected [2, 4]",
        ),
        exec(
            "exec_sgd_sizes",
            r#"{
    (%0) = "pd_op.full" () {dtype:float32,place:Place(cpu),shape:[2,3],stop_gradient:[true],value:1} : () -> tensor<2x3xf32>
    (%1) = "pd_op.full" () {dtype:float32,place:Place(cpu),shape:[1],stop_gradient:[true],value:1} : () -> tensor<1xf32>
    (%2) = "pd_op.full" () {dtype:float32,place:Place(cpu),shape:[3,3],stop_gradient:[true],value:1} : () -> tensor<3x3xf32>
    (%3, %4) = "pd_op.sgd_" (%0, %1, %2, <<NULL VALUE>>) {multi_precision:false} : (tensor<2x3xf32>, tensor<1xf32>, tensor<3x3xf32>, <<NULL TYPE>>) -> tensor<2x3xf32>, <<NULL TYPE>>
}
"#,
            &["run", "e.ir"],
            "e.ir:5:5",
            "differ in size",
        ),
        exec(
            "exec_full_negative_dim",
            r#"{
    (%0) = "pd_op.full" () {dtype:float32,place:Place(cpu),shape:[-1,3],stop_gradient:[true],value:1} : () -> tensor<-1x3xf32>
}
"#,
            &["run", "e.ir"],
            "e.ir:2:5",
            "negative dimension -1 in shape [-1, 3]",
        ),
        exec(
            "exec_scale_not_scalar",
            r#"{
    (%0) = "pd_op.full" () {dtype:float32,place:Place(cpu),shape:[2,3],stop_gradient:[true],value:1} : () -> tensor<2x3xf32>
    (%1) = "pd_op.full" () {dtype:float32,place:Place(cpu),shape:[2],stop_gradient:[true],value:1} : () -> tensor<2xf32>
    (%2) = "pd_op.scale" (%0, %1) {bias:0,bias_after_scale:true} : (tensor<2x3xf32>, tensor<2xf32>) -> tensor<2x3xf32>
}
"#,
            &["run", "e.ir"],
            "e.ir:4:5",
            "expected a one-element tensor, got shape [2]",
        ),
        exec(
            "exec_add_of_vector",
            r#"{
    (%0) = "pd_op.full" () {dtype:float32,place:Place(cpu),shape:[2,3],stop_gradient:[true],value:1} : () -> tensor<2x3xf32>
    (%1) = "builtin.combine" (%0) {} : (tensor<2x3xf32>) -> vec[tensor<2x3xf32>]
    (%2) = "pd_op.add" (%1, %0) {} : (vec[tensor<2x3xf32>], tensor<2x3xf32>) -> tensor<2x3xf32>
}
"#,
            &["run", "e.ir"],
            "e.ir:4:5",
            "is a vector, expected a tensor",
        ),
        exec(
            "exec_split_of_tensor",
            r#"{
    (%0) = "pd_op.full" () {dtype:float32,place:Place(cpu),shape:[2,3],stop_gradient:[true],value:1} : () -> tensor<2x3xf32>
    (%1) = "builtin.split" (%0) {} : (tensor<2x3xf32>) -> tensor<2x3xf32>
}
"#,
            &["run", "e.ir"],
            "e.ir:3:5",
            "operand is not a vector",
        ),
        exec(
            "exec_split_count",
            r#"{
    (%0) = "pd_op.full" () {dtype:float32,place:Place(cpu),shape:[2,3],stop_gradient:[true],value:1} : () -> tensor<2x3xf32>
    (%1) = "builtin.combine" (%0) {} : (tensor<2x3xf32>) -> vec[tensor<2x3xf32>]
    (%2, %3) = "builtin.split" (%1) {} : (vec[tensor<2x3xf32>]) -> tensor<2x3xf32>, tensor<2x3xf32>
}
"#,
            &["run", "e.ir"],
            "e.ir:4:5",
            "splits 1 values into 2 results",
        ),
        exec(
            "exec_no_kernel",
            r#"{
    (%0) = "pd_op.full" () {dtype:float32,place:Place(cpu),shape:[2,3],stop_gradient:[true],value:1} : () -> tensor<2x3xf32>
    (%1) = "pd_op.exp_grad" (%0) {} : (tensor<2x3xf32>) -> tensor<2x3xf32>
}
"#,
            &["run", "e.ir"],
            "e.ir:3:5",
            "the executor has no kernel for this op",
        ),
        exec(
            "exec_no_kernel_unknown_op",
            r#"{
    (%0) = "pd_op.full" () {dtype:float32,place:Place(cpu),shape:[2,3],stop_gradient:[true],value:1} : () -> tensor<2x3xf32>
    (%1) = "my.op" (%0) {} : (tensor<2x3xf32>) -> tensor<2x3xf32>
}
"#,
            &["run", "e.ir"],
            "e.ir:3:5",
            "the executor has no kernel for this op",
        ),
        exec(
            "exec_data_without_name",
            r#"{
    (%0) = "pd_op.data" () {dtype:float32,place:Place(cpu),shape:[2,3],stop_gradient:[true]} : () -> tensor<2x3xf32>
}
"#,
            &["run", "e.ir"],
            "e.ir:2:5",
            "has no `name` attribute",
        ),
        exec(
            "exec_data_persistable_uninitialized",
            r#"{
    (%0) = "pd_op.data" () {dtype:float32,name:"w",persistable:[true],place:Place(cpu),shape:[2,3],stop_gradient:[true]} : () -> tensor<2x3xf32>
}
"#,
            &["run", "e.ir"],
            "e.ir:2:5",
            "persistable `w` is not initialized (no startup op or feed writes it)",
        ),
        exec(
            "exec_parameter_without_name",
            r#"{
    (%0) = "builtin.parameter" () {persistable:[true]} : () -> tensor<2x3xf32>
}
"#,
            &["run", "e.ir"],
            "e.ir:2:5",
            "has no `parameter_name`",
        ),
        exec(
            "exec_parameter_uninitialized",
            r#"{
    (%0) = "builtin.parameter" () {parameter_name:"w",persistable:[true]} : () -> tensor<2x3xf32>
}
"#,
            &["run", "e.ir"],
            "e.ir:2:5",
            "parameter `w` is not initialized (no startup op or feed writes it)",
        ),
        exec(
            "exec_set_parameter_without_name",
            r#"{
    (%0) = "pd_op.full" () {dtype:float32,place:Place(cpu),shape:[2,3],stop_gradient:[true],value:1} : () -> tensor<2x3xf32>
    () = "builtin.set_parameter" (%0) {} : (tensor<2x3xf32>) -> 
}
"#,
            &["run", "e.ir"],
            "e.ir:3:5",
            "has no `parameter_name`",
        ),
        exec(
            "exec_shadow_output_without_name",
            r#"{
    (%0) = "pd_op.full" () {dtype:float32,place:Place(cpu),shape:[2,3],stop_gradient:[true],value:1} : () -> tensor<2x3xf32>
    () = "builtin.shadow_output" (%0) {} : (tensor<2x3xf32>) -> 
}
"#,
            &["run", "e.ir"],
            "e.ir:3:5",
            "has no `output_name`",
        ),
        exec(
            "exec_broadcast_root",
            r#"{
    (%0) = "pd_op.full" () {dtype:float32,place:Place(cpu),shape:[2,3],stop_gradient:[true],value:1} : () -> tensor<2x3xf32>
    (%1) = "pd_op.c_broadcast" (%0) {root:5,ring_id:0} : (tensor<2x3xf32>) -> tensor<2x3xf32>
}
"#,
            &["run", "e.ir"],
            "e.ir:3:5",
            "broadcast root 5 out of range",
        ),
        exec(
            "exec_reduce_root",
            r#"{
    (%0) = "pd_op.full" () {dtype:float32,place:Place(cpu),shape:[2,3],stop_gradient:[true],value:1} : () -> tensor<2x3xf32>
    (%1) = "pd_op.c_reduce_sum" (%0) {root_id:5,ring_id:0} : (tensor<2x3xf32>) -> tensor<2x3xf32>
}
"#,
            &["run", "e.ir", "--ranks", "2"],
            "e.ir:3:5",
            "reduce root 5 out of range for 2 ranks",
        ),
        exec(
            "exec_attribute_not_bool",
            r#"{
    (%0) = "pd_op.full" () {dtype:float32,place:Place(cpu),shape:[2,3],stop_gradient:[true],value:1} : () -> tensor<2x3xf32>
    (%1) = "pd_op.full" () {dtype:float32,place:Place(cpu),shape:[3,4],stop_gradient:[true],value:1} : () -> tensor<3x4xf32>
    (%2) = "pd_op.matmul" (%0, %1) {transpose_x:3,transpose_y:false} : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
}
"#,
            &["run", "e.ir"],
            "e.ir:4:5",
            "attribute transpose_x is not a bool",
        ),
        exec(
            "exec_attribute_not_integer",
            r#"{
    (%0) = "pd_op.full" () {dtype:float32,place:Place(cpu),shape:[2,3],stop_gradient:[true],value:1} : () -> tensor<2x3xf32>
    (%1) = "pd_op.softmax" (%0) {axis:"a"} : (tensor<2x3xf32>) -> tensor<2x3xf32>
}
"#,
            &["run", "e.ir"],
            "e.ir:3:5",
            "attribute axis is not an integer",
        ),
        exec(
            "exec_attribute_not_number",
            r#"{
    (%0) = "pd_op.full" () {dtype:float32,place:Place(cpu),shape:[2,3],stop_gradient:[true],value:1} : () -> tensor<2x3xf32>
    (%1) = "pd_op.full" () {dtype:float32,place:Place(cpu),shape:[1],stop_gradient:[true],value:1} : () -> tensor<1xf32>
    (%2) = "pd_op.scale" (%0, %1) {bias:"a",bias_after_scale:true} : (tensor<2x3xf32>, tensor<1xf32>) -> tensor<2x3xf32>
}
"#,
            &["run", "e.ir"],
            "e.ir:4:5",
            "attribute bias is not a number",
        ),
        exec(
            "exec_attribute_non_integer_element",
            r#"{
    (%0) = "pd_op.full" () {dtype:float32,place:Place(cpu),shape:[2,3],stop_gradient:[true],value:1} : () -> tensor<2x3xf32>
    (%1) = "pd_op.transpose" (%0) {perm:[0,"a"]} : (tensor<2x3xf32>) -> tensor<3x2xf32>
}
"#,
            &["run", "e.ir"],
            "e.ir:3:5",
            "attribute perm holds a non-integer",
        ),
        exec(
            "exec_attribute_not_array",
            r#"{
    (%0) = "pd_op.full" () {dtype:float32,place:Place(cpu),shape:[2,3],stop_gradient:[true],value:1} : () -> tensor<2x3xf32>
    (%1) = "pd_op.transpose" (%0) {perm:1} : (tensor<2x3xf32>) -> tensor<3x2xf32>
}
"#,
            &["run", "e.ir"],
            "e.ir:3:5",
            "attribute perm is not an array",
        ),
        exec(
            "exec_dtype_unsupported",
            r#"{
    (%0) = "pd_op.full" () {dtype:int8,place:Place(cpu),shape:[2],stop_gradient:[true],value:1} : () -> tensor<2xi8>
}
"#,
            &["run", "e.ir"],
            "e.ir:2:5",
            "dtype int8 is not supported by the executor",
        ),
        exec(
            "exec_uniform_without_shape",
            r#"{
    (%0) = "pd_op.uniform" (<<NULL VALUE>>, <<NULL VALUE>>, <<NULL VALUE>>) {dtype:float32,seed:0} : (<<NULL TYPE>>, <<NULL TYPE>>, <<NULL TYPE>>) -> tensor<2xf32>
}
"#,
            &["run", "e.ir"],
            "e.ir:2:5",
            "has no shape",
        ),
        exec(
            "exec_operand_missing",
            r#"{
    (%0) = "pd_op.relu" (<<NULL VALUE>>) {} : (<<NULL TYPE>>) -> tensor<2x3xf32>
}
"#,
            &["run", "e.ir"],
            "e.ir:2:5",
            "operand 0 is missing",
        ),
        exec(
            "exec_set_parameter_of_vector",
            r#"{
    (%0) = "pd_op.full" () {dtype:float32,place:Place(cpu),shape:[2,3],stop_gradient:[true],value:1} : () -> tensor<2x3xf32>
    (%1) = "builtin.combine" (%0) {} : (tensor<2x3xf32>) -> vec[tensor<2x3xf32>]
    () = "builtin.set_parameter" (%1) {parameter_name:"w"} : (vec[tensor<2x3xf32>]) -> 
}
"#,
            &["run", "e.ir"],
            "e.ir:4:5",
            "value %1 is a vector, expected a tensor",
        ),
        exec(
            "exec_optimize_value_every_step",
            r#"{
    (%0) = "pd_op.full" () {dtype:float32,place:Place(cpu),shape:[2,3],op_role:2,stop_gradient:[true],value:1} : () -> tensor<2x3xf32>
    (%1) = "pd_op.relu" (%0) {op_role:0} : (tensor<2x3xf32>) -> tensor<2x3xf32>
}
"#,
            &["run", "e.ir", "--k-steps", "2"],
            "e.ir:3:5",
            "runs in every micro-step but uses a value of the optimize stage (op_role 2)",
        ),
        exec(
            "exec_absent_result",
            r#"{
    (%0) = "pd_op.full" () {dtype:float32,place:Place(cpu),shape:[2,3],stop_gradient:[true],value:1} : () -> tensor<2x3xf32>
    (%1) = "pd_op.full_int_array" () {dtype:int64,place:Place(cpu),stop_gradient:[true],value:[6]} : () -> tensor<1xi64>
    (%2, %3) = "pd_op.reshape" (%0, %1) {} : (tensor<2x3xf32>, tensor<1xi64>) -> tensor<6xf32>, tensor<0x2x3xf32>
    (%4) = "pd_op.relu" (%3) {} : (tensor<0x2x3xf32>) -> tensor<0x2x3xf32>
}
"#,
            &["run", "e.ir"],
            "e.ir:5:5",
            "has no value (an absent result?)",
        ),
        exec(
            "exec_add_axis_out_of_range",
            r#"{
    (%0) = "pd_op.full" () {dtype:float32,place:Place(cpu),shape:[2,3],stop_gradient:[true],value:1} : () -> tensor<2x3xf32>
    (%1) = "pd_op.full" () {dtype:float32,place:Place(cpu),shape:[3],stop_gradient:[true],value:1} : () -> tensor<3xf32>
    (%2) = "pd_op.add" (%0, %1) {axis:5} : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
}
"#,
            &["run", "e.ir"],
            "e.ir:4:5",
            "axis 5 out of range for shapes of rank 2 and 1",
        ),
        exec(
            "exec_add_grad_reduce",
            r#"{
    (%0) = "pd_op.full" () {dtype:float32,place:Place(cpu),shape:[2,3],stop_gradient:[true],value:1} : () -> tensor<2x3xf32>
    (%1) = "pd_op.full" () {dtype:float32,place:Place(cpu),shape:[3],stop_gradient:[true],value:1} : () -> tensor<3xf32>
    (%2) = "pd_op.full" () {dtype:float32,place:Place(cpu),shape:[4,4],stop_gradient:[true],value:1} : () -> tensor<4x4xf32>
    (%3, %4) = "pd_op.add_grad" (%0, %1, %2) {axis:-1} : (tensor<2x3xf32>, tensor<3xf32>, tensor<4x4xf32>) -> tensor<2x3xf32>, tensor<3xf32>
}
"#,
            &["run", "e.ir"],
            "e.ir:5:5",
            "cannot reduce shape",
        ),
        exec(
            "exec_set_value_values_shape",
            r#"{
    (%0) = "pd_op.full" () {dtype:float32,place:Place(cpu),shape:[2,3],stop_gradient:[true],value:1} : () -> tensor<2x3xf32>
    (%1) = "pd_op.full" () {dtype:float32,place:Place(cpu),shape:[4],stop_gradient:[true],value:1} : () -> tensor<4xf32>
    (%2) = "pd_op.full_int_array" () {dtype:int64,place:Place(cpu),stop_gradient:[true],value:[0]} : () -> tensor<1xi64>
    (%3) = "pd_op.full_int_array" () {dtype:int64,place:Place(cpu),stop_gradient:[true],value:[1]} : () -> tensor<1xi64>
    (%4) = "pd_op.full_int_array" () {dtype:int64,place:Place(cpu),stop_gradient:[true],value:[1]} : () -> tensor<1xi64>
    (%5) = "pd_op.set_value_with_tensor_" (%0, %1, %2, %3, %4) {axes:[0],decrease_axes:[],none_axes:[]} : (tensor<2x3xf32>, tensor<4xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<2x3xf32>
}
"#,
            &["run", "e.ir"],
            "e.ir:7:5",
            "cannot broadcast shape [4] to",
        ),
        exec(
            "exec_kwarg_uninitialized",
            "{\n    ^kw:\n        %kwarg_buf {persistable:true}\n    (%0) = \"pd_op.relu\" (%kwarg_buf) {} : (tensor<2x3xf32>) -> tensor<2x3xf32>\n}\n",
            &["run", "e.ir"],
            "e.ir:3:9",
            "main: keyword argument `buf` names a persistable that nothing initialized",
        ),
    ]
}

/// A feed file `f.json` for `irw run p.ir --startup s.ir --feed f.json`.
fn feed(name: &'static str, json: &str, at: &'static str, msg: &'static str) -> Case {
    Case {
        name,
        files: vec![("f.json", json.as_bytes().to_vec())],
        args: vec!["run", "p.ir", "--startup", "s.ir", "--feed", "f.json"],
        exit: 1,
        at,
        msg,
    }
}

/// The fixture's batch of 8 rows: `x` (8 × 8) and `y` (8 × 4), `y` cut to `y_rows` rows.
fn batch_json(y_rows: usize) -> String {
    let row = |n: usize, v: f32| format!("[{}]", vec![format!("{v}"); n].join(", "));
    let rows = |k: usize, n: usize| (0..k).map(|i| row(n, i as f32 * 0.5)).collect::<Vec<_>>();
    format!(
        "{{\"inputs\": {{\"x\": [{}], \"y\": [{}]}}}}\n",
        rows(8, 8).join(", "),
        rows(y_rows, 4).join(", ")
    )
}

/// Feed files, and how a feed must fit the program and the schedule.
fn feed_cases() -> Vec<Case> {
    vec![
        feed("feed_ragged", r#"{"inputs": {"x": [[1, 2], [3]]}}"#, "f.json:1:13", "`inputs.x`: ragged nested list"),
        feed("feed_ragged_depth", r#"{"inputs": {"x": [[1], [2, 3]]}}"#, "f.json:1:13", "`inputs.x`: ragged nested list"),
        feed("feed_not_a_number", r#"{"inputs": {"x": [1, "a"]}}"#, "f.json:1:13", "`inputs.x`: expected numbers or lists"),
        feed("feed_missing_shape", r#"{"inputs": {"x": {"dtype": "float32", "values": [1]}}}"#, "f.json:1:13", "`inputs.x`: missing `shape`"),
        feed("feed_bad_dimension", r#"{"inputs": {"x": {"shape": [-1], "values": [1]}}}"#, "f.json:1:13", "`inputs.x`: bad dimension"),
        feed("feed_unknown_dtype", r#"{"inputs": {"x": {"shape": [1], "dtype": "int8", "values": [1]}}}"#, "f.json:1:13", "`inputs.x`: unknown dtype `int8`"),
        feed("feed_missing_values", r#"{"inputs": {"x": {"shape": [1], "dtype": "float32"}}}"#, "f.json:1:13", "`inputs.x`: missing `values`"),
        feed("feed_value_count", r#"{"inputs": {"x": {"shape": [2], "values": [1]}}}"#, "f.json:1:13", "`inputs.x`: shape [2] needs 2 values, found 1"),
        feed("feed_inputs_not_object", r#"{"inputs": []}"#, "f.json:1:2", "`inputs` is not an object"),
        feed("feed_invalid_json", r#"{"inputs": "#, "f.json:1:11", "invalid JSON: EOF while parsing a value"),
        feed("feed_input_not_fed", r#"{"inputs": {"z": [[1.0]]}}"#, "p.ir:9:5", "main: op #7 `pd_op.data`: no input fed for `x`"),
        feed("feed_rows_vs_micro_batch", &batch_json(8), "", "the feed has 8 rows, but k_steps 1 × ranks 1 × micro-batch 3 = 3")
            .args(&["run", "p.ir", "--startup", "s.ir", "--feed", "f.json", "--micro-batch", "3"]),
        feed("feed_rows_do_not_split", &batch_json(8), "", "the feed's 8 rows do not split into k_steps 3 × ranks 1 equal micro-batches")
            .args(&["run", "p.ir", "--startup", "s.ir", "--feed", "f.json", "--k-steps", "3"]),
        feed("feed_input_too_short", &batch_json(4), "", "input `y` has 4 rows; rows 4..6 were requested")
            .args(&["run", "p.ir", "--startup", "s.ir", "--feed", "f.json", "--k-steps", "4"]),
        exec(
            "feed_generated_dynamic_dimension",
            "{\n    (%0) = \"pd_op.data\" () {dtype:float32,name:\"x\",place:Place(cpu),shape:[-1,-1],stop_gradient:[true]} : () -> tensor<-1x-1xf32>\n}\n",
            &["run", "e.ir"],
            "",
            "input `x` has a dynamic dimension other than the batch",
        ),
    ]
}

/// A Paddle PIR JSON file `j.json` read by `irw j.json` (each error points into the file).
fn json_in(name: &'static str, json: &str, at: &'static str, msg: &'static str) -> Case {
    Case {
        name,
        files: vec![("j.json", json.as_bytes().to_vec())],
        args: vec!["j.json"],
        exit: 1,
        at,
        msg,
    }
}

/// A program written as Paddle PIR JSON (`--emit paddle-json`) that Paddle could not load or
/// run as meant: refused, nothing written. The files come with `.file(..)`.
fn json_out(name: &'static str, args: &[&'static str], msg: &'static str) -> Case {
    cli(name, args, 1, msg)
}

/// Reading and writing Paddle's PIR JSON. The files read are small variations of one valid
/// program (a parameter, a `full` and a `relu`).
fn json_cases() -> Vec<Case> {
    vec![
        json_in(
            "json_vd_on_int",
            r##"{"base_code":{"magic":"pir","trainable":true,"version":4},"program":{"regions":[{"#":"region_0","blocks":[{"#":"block_0","args":[],"ops":[{"#":"p","A":[0,1,1,"w"],"DA":[],"O":{"%":3,"TT":{"#":"0.t_dtensor","D":[{"#":"0.t_f32"},[2],"NCHW",[],0]}},"OA":[1,0,1],"QA":[]},{"#":"1.full","A":[{"AT":{"#":"0.a_i32","VD":"nan"},"N":"dtype"},{"AT":{"#":"1.a_place","D":[1,0,""]},"N":"place"},{"AT":{"#":"1.a_intarray","D":[2]},"N":"shape"},{"AT":{"#":"0.a_f64","D":1.0},"N":"value"}],"I":[],"O":[{"%":1,"TT":{"#":"0.t_dtensor","D":[{"#":"0.t_f32"},[2],"NCHW",[],0]}}],"OA":[{"AT":{"#":"0.a_array","D":[{"#":"0.a_bool","D":true}]},"N":"stop_gradient"}]},{"#":"1.relu","A":[],"I":[{"%":1}],"O":[{"%":2,"TT":{"#":"0.t_dtensor","D":[{"#":"0.t_f32"},[2],"NCHW",[],0]}}],"OA":[{"AT":{"#":"0.a_array","D":[{"#":"0.a_bool","D":true}]},"N":"stop_gradient"}]}]}]}]}}"##,
            "j.json:1:294",
            "\"VD\" on a 0.a_i32 attribute",
        ),
        json_in(
            "json_kwarg_twice",
            r##"{"base_code":{"magic":"pir","trainable":true,"version":4},"program":{"regions":[{"#":"region_0","blocks":[{"#":"block_0","args":[],"ops":[{"#":"1.full","A":[{"AT":{"#":"1.a_dtype","D":"float32"},"N":"dtype"},{"AT":{"#":"1.a_place","D":[1,0,""]},"N":"place"},{"AT":{"#":"1.a_intarray","D":[2]},"N":"shape"},{"AT":{"#":"0.a_f64","D":1.0},"N":"value"}],"I":[],"O":[{"%":1,"TT":{"#":"0.t_dtensor","D":[{"#":"0.t_f32"},[2],"NCHW",[],0]}}],"OA":[{"AT":{"#":"0.a_array","D":[{"#":"0.a_bool","D":true}]},"N":"stop_gradient"}]},{"#":"1.relu","A":[],"I":[{"%":1}],"O":[{"%":2,"TT":{"#":"0.t_dtensor","D":[{"#":"0.t_f32"},[2],"NCHW",[],0]}}],"OA":[{"AT":{"#":"0.a_array","D":[{"#":"0.a_bool","D":true}]},"N":"stop_gradient"}]}],"kwargs":[{"key":"a","#":10,"TT":{"#":"0.t_dtensor","D":[{"#":"0.t_f32"},[2],"NCHW",[],0]}},{"key":"a","#":11,"TT":{"#":"0.t_dtensor","D":[{"#":"0.t_f32"},[2],"NCHW",[],0]}}]}]}]}}"##,
            "j.json:1:810",
            "keyword argument `a` is given twice",
        ),
        json_out(
            "json_write_not_an_array_of_ints",
            &["w.ir", "--emit", "paddle-json", "-o", "w.json"],
            "attribute `perm` must be 0.a_array of 0.a_i32 for Paddle (dialect table): `1` is not an array",
        )
        .file("w.ir", "{\n    (%0) = \"pd_op.full\" () {dtype:float32,place:Place(cpu),shape:[2,3],stop_gradient:[true],value:1} : () -> tensor<2x3xf32>\n    (%1) = \"pd_op.transpose\" (%0) {perm:1,stop_gradient:[true]} : (tensor<2x3xf32>) -> tensor<3x2xf32>\n}\n"),
        json_out(
            "json_write_array_seen_only_empty",
            &["--rules", "r.rw", "j.json", "--emit", "paddle-json", "-o", "w.json"],
            "attribute `weird` must be 0.a_array (empty) for Paddle (dialect table): `[1]`: the element tag of this array is not known (only seen empty)",
        )
        .file("j.json", r##"{"base_code":{"magic":"pir","trainable":true,"version":4},"program":{"regions":[{"#":"region_0","blocks":[{"#":"block_0","args":[],"ops":[{"#":"1.full","A":[{"AT":{"#":"1.a_dtype","D":"float32"},"N":"dtype"},{"AT":{"#":"1.a_place","D":[1,0,""]},"N":"place"},{"AT":{"#":"1.a_intarray","D":[2]},"N":"shape"},{"AT":{"#":"0.a_f64","D":1.0},"N":"value"}],"I":[],"O":[{"%":1,"TT":{"#":"0.t_dtensor","D":[{"#":"0.t_f32"},[2],"NCHW",[],0]}}],"OA":[{"AT":{"#":"0.a_array","D":[{"#":"0.a_bool","D":true}]},"N":"stop_gradient"}]},{"#":"1.relu","A":[{"AT":{"#":"0.a_array","D":[]},"N":"weird"}],"I":[{"%":1}],"O":[{"%":2,"TT":{"#":"0.t_dtensor","D":[{"#":"0.t_f32"},[2],"NCHW",[],0]}}],"OA":[{"AT":{"#":"0.a_array","D":[{"#":"0.a_bool","D":true}]},"N":"stop_gradient"}]}]}]}]}}"##)
        .file("r.rw", "// c\nrule r {\n    match %o = pd_op.relu(%x) {weird: []};\n    set %o {weird: [1]};\n}\n"),
        json_in(
            "json_layout",
            r##"{"base_code":{"magic":"pir","trainable":true,"version":4},"program":{"regions":[{"#":"region_0","blocks":[{"#":"block_0","args":[],"ops":[{"#":"p","A":[0,1,1,"w"],"DA":[],"O":{"%":3,"TT":{"#":"0.t_dtensor","D":[{"#":"0.t_f32"},[2],"NCHW",[],0]}},"OA":[1,0,1],"QA":[]},{"#":"1.full","A":[{"AT":{"#":"1.a_dtype","D":"float32"},"N":"dtype"},{"AT":{"#":"1.a_place","D":[1,0,""]},"N":"place"},{"AT":{"#":"1.a_intarray","D":[2]},"N":"shape"},{"AT":{"#":"0.a_f64","D":1.0},"N":"value"}],"I":[],"O":[{"%":1,"TT":{"#":"0.t_dtensor","D":[{"#":"0.t_f32"},[2],"NCHW",[],0]}}],"OA":[{"AT":{"#":"0.a_array","D":[{"#":"0.a_bool","D":true}]},"N":"stop_gradient"}]},{"#":"1.relu","A":[],"I":[{"%":1}],"O":[{"%":2,"TT":{"#":"0.t_dtensor","D":[{"#":"0.t_f32"},[2],"NHWC",[],0]}}],"OA":[{"AT":{"#":"0.a_array","D":[{"#":"0.a_bool","D":true}]},"N":"stop_gradient"}]}]}]}]}}"##,
            "j.json:1:702",
            "a tensor with layout NHWC, lod [] and offset 0 cannot be kept: irw supports only layout NCHW, empty lod and offset 0",
        ),
        json_in(
            "json_attribute_not_object",
            r##"{"base_code":{"magic":"pir","trainable":true,"version":4},"program":{"regions":[{"#":"region_0","blocks":[{"#":"block_0","args":[],"ops":[{"#":"p","A":[0,1,1,"w"],"DA":[],"O":{"%":3,"TT":{"#":"0.t_dtensor","D":[{"#":"0.t_f32"},[2],"NCHW",[],0]}},"OA":[1,0,1],"QA":[]},{"#":"1.full","A":[{"AT":3,"N":"dtype"},{"AT":{"#":"1.a_place","D":[1,0,""]},"N":"place"},{"AT":{"#":"1.a_intarray","D":[2]},"N":"shape"},{"AT":{"#":"0.a_f64","D":1.0},"N":"value"}],"I":[],"O":[{"%":1,"TT":{"#":"0.t_dtensor","D":[{"#":"0.t_f32"},[2],"NCHW",[],0]}}],"OA":[{"AT":{"#":"0.a_array","D":[{"#":"0.a_bool","D":true}]},"N":"stop_gradient"}]},{"#":"1.relu","A":[],"I":[{"%":1}],"O":[{"%":2,"TT":{"#":"0.t_dtensor","D":[{"#":"0.t_f32"},[2],"NCHW",[],0]}}],"OA":[{"AT":{"#":"0.a_array","D":[{"#":"0.a_bool","D":true}]},"N":"stop_gradient"}]}]}]}]}}"##,
            "j.json:1:294",
            "an attribute must be an object {\"#\":tag,\"D\":value}",
        ),
        json_in(
            "json_attribute_without_tag",
            r##"{"base_code":{"magic":"pir","trainable":true,"version":4},"program":{"regions":[{"#":"region_0","blocks":[{"#":"block_0","args":[],"ops":[{"#":"p","A":[0,1,1,"w"],"DA":[],"O":{"%":3,"TT":{"#":"0.t_dtensor","D":[{"#":"0.t_f32"},[2],"NCHW",[],0]}},"OA":[1,0,1],"QA":[]},{"#":"1.full","A":[{"AT":{"D":"float32"},"N":"dtype"},{"AT":{"#":"1.a_place","D":[1,0,""]},"N":"place"},{"AT":{"#":"1.a_intarray","D":[2]},"N":"shape"},{"AT":{"#":"0.a_f64","D":1.0},"N":"value"}],"I":[],"O":[{"%":1,"TT":{"#":"0.t_dtensor","D":[{"#":"0.t_f32"},[2],"NCHW",[],0]}}],"OA":[{"AT":{"#":"0.a_array","D":[{"#":"0.a_bool","D":true}]},"N":"stop_gradient"}]},{"#":"1.relu","A":[],"I":[{"%":1}],"O":[{"%":2,"TT":{"#":"0.t_dtensor","D":[{"#":"0.t_f32"},[2],"NCHW",[],0]}}],"OA":[{"AT":{"#":"0.a_array","D":[{"#":"0.a_bool","D":true}]},"N":"stop_gradient"}]}]}]}]}}"##,
            "j.json:1:294",
            "an attribute needs a string \"#\" (its type tag)",
        ),
        json_in(
            "json_null_attribute",
            r##"{"base_code":{"magic":"pir","trainable":true,"version":4},"program":{"regions":[{"#":"region_0","blocks":[{"#":"block_0","args":[],"ops":[{"#":"p","A":[0,1,1,"w"],"DA":[],"O":{"%":3,"TT":{"#":"0.t_dtensor","D":[{"#":"0.t_f32"},[2],"NCHW",[],0]}},"OA":[1,0,1],"QA":[]},{"#":"1.full","A":[{"AT":{"#":"NULL"},"N":"dtype"},{"AT":{"#":"1.a_place","D":[1,0,""]},"N":"place"},{"AT":{"#":"1.a_intarray","D":[2]},"N":"shape"},{"AT":{"#":"0.a_f64","D":1.0},"N":"value"}],"I":[],"O":[{"%":1,"TT":{"#":"0.t_dtensor","D":[{"#":"0.t_f32"},[2],"NCHW",[],0]}}],"OA":[{"AT":{"#":"0.a_array","D":[{"#":"0.a_bool","D":true}]},"N":"stop_gradient"}]},{"#":"1.relu","A":[],"I":[{"%":1}],"O":[{"%":2,"TT":{"#":"0.t_dtensor","D":[{"#":"0.t_f32"},[2],"NCHW",[],0]}}],"OA":[{"AT":{"#":"0.a_array","D":[{"#":"0.a_bool","D":true}]},"N":"stop_gradient"}]}]}]}]}}"##,
            "j.json:1:294",
            "null attributes ({\"#\":\"NULL\"}) are not supported",
        ),
        json_in(
            "json_array_without_d",
            r##"{"base_code":{"magic":"pir","trainable":true,"version":4},"program":{"regions":[{"#":"region_0","blocks":[{"#":"block_0","args":[],"ops":[{"#":"p","A":[0,1,1,"w"],"DA":[],"O":{"%":3,"TT":{"#":"0.t_dtensor","D":[{"#":"0.t_f32"},[2],"NCHW",[],0]}},"OA":[1,0,1],"QA":[]},{"#":"1.full","A":[{"AT":{"#":"1.a_dtype","D":"float32"},"N":"dtype"},{"AT":{"#":"1.a_place","D":[1,0,""]},"N":"place"},{"AT":{"#":"1.a_intarray","D":[2]},"N":"shape"},{"AT":{"#":"0.a_f64","D":1.0},"N":"value"}],"I":[],"O":[{"%":1,"TT":{"#":"0.t_dtensor","D":[{"#":"0.t_f32"},[2],"NCHW",[],0]}}],"OA":[{"AT":{"#":"0.a_array"},"N":"stop_gradient"}]},{"#":"1.relu","A":[],"I":[{"%":1}],"O":[{"%":2,"TT":{"#":"0.t_dtensor","D":[{"#":"0.t_f32"},[2],"NCHW",[],0]}}],"OA":[{"AT":{"#":"0.a_array","D":[{"#":"0.a_bool","D":true}]},"N":"stop_gradient"}]}]}]}]}}"##,
            "j.json:1:577",
            "an 0.a_array attribute needs an array \"D\"",
        ),
        json_in(
            "json_array_of_arrays",
            r##"{"base_code":{"magic":"pir","trainable":true,"version":4},"program":{"regions":[{"#":"region_0","blocks":[{"#":"block_0","args":[],"ops":[{"#":"p","A":[0,1,1,"w"],"DA":[],"O":{"%":3,"TT":{"#":"0.t_dtensor","D":[{"#":"0.t_f32"},[2],"NCHW",[],0]}},"OA":[1,0,1],"QA":[]},{"#":"1.full","A":[{"AT":{"#":"1.a_dtype","D":"float32"},"N":"dtype"},{"AT":{"#":"1.a_place","D":[1,0,""]},"N":"place"},{"AT":{"#":"1.a_intarray","D":[2]},"N":"shape"},{"AT":{"#":"0.a_f64","D":1.0},"N":"value"}],"I":[],"O":[{"%":1,"TT":{"#":"0.t_dtensor","D":[{"#":"0.t_f32"},[2],"NCHW",[],0]}}],"OA":[{"AT":{"#":"0.a_array","D":[{"#":"0.a_array","D":[]}]},"N":"stop_gradient"}]},{"#":"1.relu","A":[],"I":[{"%":1}],"O":[{"%":2,"TT":{"#":"0.t_dtensor","D":[{"#":"0.t_f32"},[2],"NCHW",[],0]}}],"OA":[{"AT":{"#":"0.a_array","D":[{"#":"0.a_bool","D":true}]},"N":"stop_gradient"}]}]}]}]}}"##,
            "j.json:1:577",
            "arrays of arrays are not supported",
        ),
        json_in(
            "json_array_mixed_tags",
            r##"{"base_code":{"magic":"pir","trainable":true,"version":4},"program":{"regions":[{"#":"region_0","blocks":[{"#":"block_0","args":[],"ops":[{"#":"p","A":[0,1,1,"w"],"DA":[],"O":{"%":3,"TT":{"#":"0.t_dtensor","D":[{"#":"0.t_f32"},[2],"NCHW",[],0]}},"OA":[1,0,1],"QA":[]},{"#":"1.full","A":[{"AT":{"#":"1.a_dtype","D":"float32"},"N":"dtype"},{"AT":{"#":"1.a_place","D":[1,0,""]},"N":"place"},{"AT":{"#":"1.a_intarray","D":[2]},"N":"shape"},{"AT":{"#":"0.a_f64","D":1.0},"N":"value"}],"I":[],"O":[{"%":1,"TT":{"#":"0.t_dtensor","D":[{"#":"0.t_f32"},[2],"NCHW",[],0]}}],"OA":[{"AT":{"#":"0.a_array","D":[{"#":"0.a_bool","D":true},{"#":"0.a_i32","D":1}]},"N":"stop_gradient"}]},{"#":"1.relu","A":[],"I":[{"%":1}],"O":[{"%":2,"TT":{"#":"0.t_dtensor","D":[{"#":"0.t_f32"},[2],"NCHW",[],0]}}],"OA":[{"AT":{"#":"0.a_array","D":[{"#":"0.a_bool","D":true}]},"N":"stop_gradient"}]}]}]}]}}"##,
            "j.json:1:577",
            "arrays mixing element tags are not supported",
        ),
        json_in(
            "json_attribute_tag_unknown",
            r##"{"base_code":{"magic":"pir","trainable":true,"version":4},"program":{"regions":[{"#":"region_0","blocks":[{"#":"block_0","args":[],"ops":[{"#":"p","A":[0,1,1,"w"],"DA":[],"O":{"%":3,"TT":{"#":"0.t_dtensor","D":[{"#":"0.t_f32"},[2],"NCHW",[],0]}},"OA":[1,0,1],"QA":[]},{"#":"1.full","A":[{"AT":{"#":"9.a_magic","D":1},"N":"dtype"},{"AT":{"#":"1.a_place","D":[1,0,""]},"N":"place"},{"AT":{"#":"1.a_intarray","D":[2]},"N":"shape"},{"AT":{"#":"0.a_f64","D":1.0},"N":"value"}],"I":[],"O":[{"%":1,"TT":{"#":"0.t_dtensor","D":[{"#":"0.t_f32"},[2],"NCHW",[],0]}}],"OA":[{"AT":{"#":"0.a_array","D":[{"#":"0.a_bool","D":true}]},"N":"stop_gradient"}]},{"#":"1.relu","A":[],"I":[{"%":1}],"O":[{"%":2,"TT":{"#":"0.t_dtensor","D":[{"#":"0.t_f32"},[2],"NCHW",[],0]}}],"OA":[{"AT":{"#":"0.a_array","D":[{"#":"0.a_bool","D":true}]},"N":"stop_gradient"}]}]}]}]}}"##,
            "j.json:1:294",
            "attribute tag `9.a_magic` is not supported",
        ),
        json_in(
            "json_special_float",
            r##"{"base_code":{"magic":"pir","trainable":true,"version":4},"program":{"regions":[{"#":"region_0","blocks":[{"#":"block_0","args":[],"ops":[{"#":"p","A":[0,1,1,"w"],"DA":[],"O":{"%":3,"TT":{"#":"0.t_dtensor","D":[{"#":"0.t_f32"},[2],"NCHW",[],0]}},"OA":[1,0,1],"QA":[]},{"#":"1.full","A":[{"AT":{"#":"1.a_dtype","D":"float32"},"N":"dtype"},{"AT":{"#":"1.a_place","D":[1,0,""]},"N":"place"},{"AT":{"#":"1.a_intarray","D":[2]},"N":"shape"},{"AT":{"#":"0.a_f64","VD":"wat"},"N":"value"}],"I":[],"O":[{"%":1,"TT":{"#":"0.t_dtensor","D":[{"#":"0.t_f32"},[2],"NCHW",[],0]}}],"OA":[{"AT":{"#":"0.a_array","D":[{"#":"0.a_bool","D":true}]},"N":"stop_gradient"}]},{"#":"1.relu","A":[],"I":[{"%":1}],"O":[{"%":2,"TT":{"#":"0.t_dtensor","D":[{"#":"0.t_f32"},[2],"NCHW",[],0]}}],"OA":[{"AT":{"#":"0.a_array","D":[{"#":"0.a_bool","D":true}]},"N":"stop_gradient"}]}]}]}]}}"##,
            "j.json:1:443",
            "unknown special float",
        ),
        json_in(
            "json_attribute_without_d",
            r##"{"base_code":{"magic":"pir","trainable":true,"version":4},"program":{"regions":[{"#":"region_0","blocks":[{"#":"block_0","args":[],"ops":[{"#":"p","A":[0,1,1,"w"],"DA":[],"O":{"%":3,"TT":{"#":"0.t_dtensor","D":[{"#":"0.t_f32"},[2],"NCHW",[],0]}},"OA":[1,0,1],"QA":[]},{"#":"1.full","A":[{"AT":{"#":"1.a_dtype","D":"float32"},"N":"dtype"},{"AT":{"#":"1.a_place","D":[1,0,""]},"N":"place"},{"AT":{"#":"1.a_intarray","D":[2]},"N":"shape"},{"AT":{"#":"0.a_f64"},"N":"value"}],"I":[],"O":[{"%":1,"TT":{"#":"0.t_dtensor","D":[{"#":"0.t_f32"},[2],"NCHW",[],0]}}],"OA":[{"AT":{"#":"0.a_array","D":[{"#":"0.a_bool","D":true}]},"N":"stop_gradient"}]},{"#":"1.relu","A":[],"I":[{"%":1}],"O":[{"%":2,"TT":{"#":"0.t_dtensor","D":[{"#":"0.t_f32"},[2],"NCHW",[],0]}}],"OA":[{"AT":{"#":"0.a_array","D":[{"#":"0.a_bool","D":true}]},"N":"stop_gradient"}]}]}]}]}}"##,
            "j.json:1:443",
            "a 0.a_f64 attribute needs a \"D\" value",
        ),
        json_in(
            "json_bool_not_bool",
            r##"{"base_code":{"magic":"pir","trainable":true,"version":4},"program":{"regions":[{"#":"region_0","blocks":[{"#":"block_0","args":[],"ops":[{"#":"p","A":[0,1,1,"w"],"DA":[],"O":{"%":3,"TT":{"#":"0.t_dtensor","D":[{"#":"0.t_f32"},[2],"NCHW",[],0]}},"OA":[1,0,1],"QA":[]},{"#":"1.full","A":[{"AT":{"#":"1.a_dtype","D":"float32"},"N":"dtype"},{"AT":{"#":"1.a_place","D":[1,0,""]},"N":"place"},{"AT":{"#":"1.a_intarray","D":[2]},"N":"shape"},{"AT":{"#":"0.a_f64","D":1.0},"N":"value"}],"I":[],"O":[{"%":1,"TT":{"#":"0.t_dtensor","D":[{"#":"0.t_f32"},[2],"NCHW",[],0]}}],"OA":[{"AT":{"#":"0.a_array","D":[{"#":"0.a_bool","D":3}]},"N":"stop_gradient"}]},{"#":"1.relu","A":[],"I":[{"%":1}],"O":[{"%":2,"TT":{"#":"0.t_dtensor","D":[{"#":"0.t_f32"},[2],"NCHW",[],0]}}],"OA":[{"AT":{"#":"0.a_array","D":[{"#":"0.a_bool","D":true}]},"N":"stop_gradient"}]}]}]}]}}"##,
            "j.json:1:577",
            "0.a_bool needs true or false",
        ),
        json_in(
            "json_f64_not_number",
            r##"{"base_code":{"magic":"pir","trainable":true,"version":4},"program":{"regions":[{"#":"region_0","blocks":[{"#":"block_0","args":[],"ops":[{"#":"p","A":[0,1,1,"w"],"DA":[],"O":{"%":3,"TT":{"#":"0.t_dtensor","D":[{"#":"0.t_f32"},[2],"NCHW",[],0]}},"OA":[1,0,1],"QA":[]},{"#":"1.full","A":[{"AT":{"#":"1.a_dtype","D":"float32"},"N":"dtype"},{"AT":{"#":"1.a_place","D":[1,0,""]},"N":"place"},{"AT":{"#":"1.a_intarray","D":[2]},"N":"shape"},{"AT":{"#":"0.a_f64","D":"one"},"N":"value"}],"I":[],"O":[{"%":1,"TT":{"#":"0.t_dtensor","D":[{"#":"0.t_f32"},[2],"NCHW",[],0]}}],"OA":[{"AT":{"#":"0.a_array","D":[{"#":"0.a_bool","D":true}]},"N":"stop_gradient"}]},{"#":"1.relu","A":[],"I":[{"%":1}],"O":[{"%":2,"TT":{"#":"0.t_dtensor","D":[{"#":"0.t_f32"},[2],"NCHW",[],0]}}],"OA":[{"AT":{"#":"0.a_array","D":[{"#":"0.a_bool","D":true}]},"N":"stop_gradient"}]}]}]}]}}"##,
            "j.json:1:443",
            "0.a_f64 needs a number",
        ),
        json_in(
            "json_str_not_string",
            r##"{"base_code":{"magic":"pir","trainable":true,"version":4},"program":{"regions":[{"#":"region_0","blocks":[{"#":"block_0","args":[],"ops":[{"#":"p","A":[0,1,1,"w"],"DA":[],"O":{"%":3,"TT":{"#":"0.t_dtensor","D":[{"#":"0.t_f32"},[2],"NCHW",[],0]}},"OA":[1,0,1],"QA":[]},{"#":"1.full","A":[{"AT":{"#":"1.a_dtype","D":"float32"},"N":"dtype"},{"AT":{"#":"1.a_place","D":[1,0,""]},"N":"place"},{"AT":{"#":"1.a_intarray","D":[2]},"N":"shape"},{"AT":{"#":"0.a_f64","D":1.0},"N":"value"},{"AT":{"#":"0.a_str","D":3},"N":"s"}],"I":[],"O":[{"%":1,"TT":{"#":"0.t_dtensor","D":[{"#":"0.t_f32"},[2],"NCHW",[],0]}}],"OA":[{"AT":{"#":"0.a_array","D":[{"#":"0.a_bool","D":true}]},"N":"stop_gradient"}]},{"#":"1.relu","A":[],"I":[{"%":1}],"O":[{"%":2,"TT":{"#":"0.t_dtensor","D":[{"#":"0.t_f32"},[2],"NCHW",[],0]}}],"OA":[{"AT":{"#":"0.a_array","D":[{"#":"0.a_bool","D":true}]},"N":"stop_gradient"}]}]}]}]}}"##,
            "j.json:1:486",
            "0.a_str needs a string",
        ),
        json_in(
            "json_intarray_not_array",
            r##"{"base_code":{"magic":"pir","trainable":true,"version":4},"program":{"regions":[{"#":"region_0","blocks":[{"#":"block_0","args":[],"ops":[{"#":"p","A":[0,1,1,"w"],"DA":[],"O":{"%":3,"TT":{"#":"0.t_dtensor","D":[{"#":"0.t_f32"},[2],"NCHW",[],0]}},"OA":[1,0,1],"QA":[]},{"#":"1.full","A":[{"AT":{"#":"1.a_dtype","D":"float32"},"N":"dtype"},{"AT":{"#":"1.a_place","D":[1,0,""]},"N":"place"},{"AT":{"#":"1.a_intarray","D":3},"N":"shape"},{"AT":{"#":"0.a_f64","D":1.0},"N":"value"}],"I":[],"O":[{"%":1,"TT":{"#":"0.t_dtensor","D":[{"#":"0.t_f32"},[2],"NCHW",[],0]}}],"OA":[{"AT":{"#":"0.a_array","D":[{"#":"0.a_bool","D":true}]},"N":"stop_gradient"}]},{"#":"1.relu","A":[],"I":[{"%":1}],"O":[{"%":2,"TT":{"#":"0.t_dtensor","D":[{"#":"0.t_f32"},[2],"NCHW",[],0]}}],"OA":[{"AT":{"#":"0.a_array","D":[{"#":"0.a_bool","D":true}]},"N":"stop_gradient"}]}]}]}]}}"##,
            "j.json:1:395",
            "1.a_intarray needs an array of integers",
        ),
        json_in(
            "json_intarray_not_ints",
            r##"{"base_code":{"magic":"pir","trainable":true,"version":4},"program":{"regions":[{"#":"region_0","blocks":[{"#":"block_0","args":[],"ops":[{"#":"p","A":[0,1,1,"w"],"DA":[],"O":{"%":3,"TT":{"#":"0.t_dtensor","D":[{"#":"0.t_f32"},[2],"NCHW",[],0]}},"OA":[1,0,1],"QA":[]},{"#":"1.full","A":[{"AT":{"#":"1.a_dtype","D":"float32"},"N":"dtype"},{"AT":{"#":"1.a_place","D":[1,0,""]},"N":"place"},{"AT":{"#":"1.a_intarray","D":["a"]},"N":"shape"},{"AT":{"#":"0.a_f64","D":1.0},"N":"value"}],"I":[],"O":[{"%":1,"TT":{"#":"0.t_dtensor","D":[{"#":"0.t_f32"},[2],"NCHW",[],0]}}],"OA":[{"AT":{"#":"0.a_array","D":[{"#":"0.a_bool","D":true}]},"N":"stop_gradient"}]},{"#":"1.relu","A":[],"I":[{"%":1}],"O":[{"%":2,"TT":{"#":"0.t_dtensor","D":[{"#":"0.t_f32"},[2],"NCHW",[],0]}}],"OA":[{"AT":{"#":"0.a_array","D":[{"#":"0.a_bool","D":true}]},"N":"stop_gradient"}]}]}]}]}}"##,
            "j.json:1:395",
            "1.a_intarray needs an array of integers",
        ),
        json_in(
            "json_dtype_not_string",
            r##"{"base_code":{"magic":"pir","trainable":true,"version":4},"program":{"regions":[{"#":"region_0","blocks":[{"#":"block_0","args":[],"ops":[{"#":"p","A":[0,1,1,"w"],"DA":[],"O":{"%":3,"TT":{"#":"0.t_dtensor","D":[{"#":"0.t_f32"},[2],"NCHW",[],0]}},"OA":[1,0,1],"QA":[]},{"#":"1.full","A":[{"AT":{"#":"1.a_dtype","D":3},"N":"dtype"},{"AT":{"#":"1.a_place","D":[1,0,""]},"N":"place"},{"AT":{"#":"1.a_intarray","D":[2]},"N":"shape"},{"AT":{"#":"0.a_f64","D":1.0},"N":"value"}],"I":[],"O":[{"%":1,"TT":{"#":"0.t_dtensor","D":[{"#":"0.t_f32"},[2],"NCHW",[],0]}}],"OA":[{"AT":{"#":"0.a_array","D":[{"#":"0.a_bool","D":true}]},"N":"stop_gradient"}]},{"#":"1.relu","A":[],"I":[{"%":1}],"O":[{"%":2,"TT":{"#":"0.t_dtensor","D":[{"#":"0.t_f32"},[2],"NCHW",[],0]}}],"OA":[{"AT":{"#":"0.a_array","D":[{"#":"0.a_bool","D":true}]},"N":"stop_gradient"}]}]}]}]}}"##,
            "j.json:1:294",
            "1.a_dtype needs a string",
        ),
        json_in(
            "json_dtype_unknown",
            r##"{"base_code":{"magic":"pir","trainable":true,"version":4},"program":{"regions":[{"#":"region_0","blocks":[{"#":"block_0","args":[],"ops":[{"#":"p","A":[0,1,1,"w"],"DA":[],"O":{"%":3,"TT":{"#":"0.t_dtensor","D":[{"#":"0.t_f32"},[2],"NCHW",[],0]}},"OA":[1,0,1],"QA":[]},{"#":"1.full","A":[{"AT":{"#":"1.a_dtype","D":"float128"},"N":"dtype"},{"AT":{"#":"1.a_place","D":[1,0,""]},"N":"place"},{"AT":{"#":"1.a_intarray","D":[2]},"N":"shape"},{"AT":{"#":"0.a_f64","D":1.0},"N":"value"}],"I":[],"O":[{"%":1,"TT":{"#":"0.t_dtensor","D":[{"#":"0.t_f32"},[2],"NCHW",[],0]}}],"OA":[{"AT":{"#":"0.a_array","D":[{"#":"0.a_bool","D":true}]},"N":"stop_gradient"}]},{"#":"1.relu","A":[],"I":[{"%":1}],"O":[{"%":2,"TT":{"#":"0.t_dtensor","D":[{"#":"0.t_f32"},[2],"NCHW",[],0]}}],"OA":[{"AT":{"#":"0.a_array","D":[{"#":"0.a_bool","D":true}]},"N":"stop_gradient"}]}]}]}]}}"##,
            "j.json:1:294",
            "unknown data type `float128`",
        ),
        json_in(
            "json_place_unknown",
            r##"{"base_code":{"magic":"pir","trainable":true,"version":4},"program":{"regions":[{"#":"region_0","blocks":[{"#":"block_0","args":[],"ops":[{"#":"p","A":[0,1,1,"w"],"DA":[],"O":{"%":3,"TT":{"#":"0.t_dtensor","D":[{"#":"0.t_f32"},[2],"NCHW",[],0]}},"OA":[1,0,1],"QA":[]},{"#":"1.full","A":[{"AT":{"#":"1.a_dtype","D":"float32"},"N":"dtype"},{"AT":{"#":"1.a_place","D":[42,0,""]},"N":"place"},{"AT":{"#":"1.a_intarray","D":[2]},"N":"shape"},{"AT":{"#":"0.a_f64","D":1.0},"N":"value"}],"I":[],"O":[{"%":1,"TT":{"#":"0.t_dtensor","D":[{"#":"0.t_f32"},[2],"NCHW",[],0]}}],"OA":[{"AT":{"#":"0.a_array","D":[{"#":"0.a_bool","D":true}]},"N":"stop_gradient"}]},{"#":"1.relu","A":[],"I":[{"%":1}],"O":[{"%":2,"TT":{"#":"0.t_dtensor","D":[{"#":"0.t_f32"},[2],"NCHW",[],0]}}],"OA":[{"AT":{"#":"0.a_array","D":[{"#":"0.a_bool","D":true}]},"N":"stop_gradient"}]}]}]}]}}"##,
            "j.json:1:345",
            "place allocation type 42 is not known to irw",
        ),
        json_in(
            "json_missing_key",
            r##"{"base_code":{"magic":"pir","trainable":true,"version":4},"program":{"regions":[{"#":"region_0","blocks":[{"#":"block_0","args":[],"ops":[{"#":"p","A":[0,1,1,"w"],"DA":[],"O":{"%":3,"TT":{"#":"0.t_dtensor","D":[{"#":"0.t_f32"},[2],"NCHW",[],0]}},"OA":[1,0,1],"QA":[]},{"#":"1.full","A":[{"AT":{"#":"1.a_dtype","D":"float32"},"N":"dtype"},{"AT":{"#":"1.a_place","D":[1,0,""]},"N":"place"},{"AT":{"#":"1.a_intarray","D":[2]},"N":"shape"},{"AT":{"#":"0.a_f64","D":1.0},"N":"value"}],"I":[],"O":[{"%":1,"TT":{"#":"0.t_dtensor","D":[{"#":"0.t_f32"},[2],"NCHW",[],0]}}],"OA":[{"AT":{"#":"0.a_array","D":[{"#":"0.a_bool","D":true}]},"N":"stop_gradient"}]},{"#":"1.relu","A":[],"I":[{"%":1}],"OA":[{"AT":{"#":"0.a_array","D":[{"#":"0.a_bool","D":true}]},"N":"stop_gradient"}]}]}]}]}}"##,
            "j.json:1:650",
            "missing key \"O\"",
        ),
        json_in(
            "json_not_object",
            r##"{"base_code":{"magic":"pir","trainable":true,"version":4},"program":{"regions":[{"#":"region_0","blocks":[{"#":"block_0","args":[],"ops":[{"#":"p","A":[0,1,1,"w"],"DA":[],"O":{"%":3,"TT":{"#":"0.t_dtensor","D":[{"#":"0.t_f32"},[2],"NCHW",[],0]}},"OA":[1,0,1],"QA":[]},{"#":"1.full","A":[{"AT":{"#":"1.a_dtype","D":"float32"},"N":"dtype"},{"AT":{"#":"1.a_place","D":[1,0,""]},"N":"place"},{"AT":{"#":"1.a_intarray","D":[2]},"N":"shape"},{"AT":{"#":"0.a_f64","D":1.0},"N":"value"}],"I":[],"O":[{"%":1,"TT":{"#":"0.t_dtensor","D":[{"#":"0.t_f32"},[2],"NCHW",[],0]}}],"OA":[{"AT":{"#":"0.a_array","D":[{"#":"0.a_bool","D":true}]},"N":"stop_gradient"}]},3]}]}]}}"##,
            "j.json:1:650",
            "must be a JSON object",
        ),
        json_in(
            "json_not_array",
            r##"{"base_code":{"magic":"pir","trainable":true,"version":4},"program":{"regions":[{"#":"region_0","blocks":[{"#":"block_0","args":[],"ops":[{"#":"p","A":[0,1,1,"w"],"DA":[],"O":{"%":3,"TT":{"#":"0.t_dtensor","D":[{"#":"0.t_f32"},[2],"NCHW",[],0]}},"OA":[1,0,1],"QA":[]},{"#":"1.full","A":[{"AT":{"#":"1.a_dtype","D":"float32"},"N":"dtype"},{"AT":{"#":"1.a_place","D":[1,0,""]},"N":"place"},{"AT":{"#":"1.a_intarray","D":[2]},"N":"shape"},{"AT":{"#":"0.a_f64","D":1.0},"N":"value"}],"I":[],"O":[{"%":1,"TT":{"#":"0.t_dtensor","D":[{"#":"0.t_f32"},[2],"NCHW",[],0]}}],"OA":[{"AT":{"#":"0.a_array","D":[{"#":"0.a_bool","D":true}]},"N":"stop_gradient"}]},{"#":"1.relu","A":[],"I":3,"O":[{"%":2,"TT":{"#":"0.t_dtensor","D":[{"#":"0.t_f32"},[2],"NCHW",[],0]}}],"OA":[{"AT":{"#":"0.a_array","D":[{"#":"0.a_bool","D":true}]},"N":"stop_gradient"}]}]}]}]}}"##,
            "j.json:1:675",
            "must be a JSON array",
        ),
        json_in(
            "json_version_missing",
            r##"{"base_code":{"magic":"pir","trainable":true},"program":{"regions":[{"#":"region_0","blocks":[{"#":"block_0","args":[],"ops":[{"#":"p","A":[0,1,1,"w"],"DA":[],"O":{"%":3,"TT":{"#":"0.t_dtensor","D":[{"#":"0.t_f32"},[2],"NCHW",[],0]}},"OA":[1,0,1],"QA":[]},{"#":"1.full","A":[{"AT":{"#":"1.a_dtype","D":"float32"},"N":"dtype"},{"AT":{"#":"1.a_place","D":[1,0,""]},"N":"place"},{"AT":{"#":"1.a_intarray","D":[2]},"N":"shape"},{"AT":{"#":"0.a_f64","D":1.0},"N":"value"}],"I":[],"O":[{"%":1,"TT":{"#":"0.t_dtensor","D":[{"#":"0.t_f32"},[2],"NCHW",[],0]}}],"OA":[{"AT":{"#":"0.a_array","D":[{"#":"0.a_bool","D":true}]},"N":"stop_gradient"}]},{"#":"1.relu","A":[],"I":[{"%":1}],"O":[{"%":2,"TT":{"#":"0.t_dtensor","D":[{"#":"0.t_f32"},[2],"NCHW",[],0]}}],"OA":[{"AT":{"#":"0.a_array","D":[{"#":"0.a_bool","D":true}]},"N":"stop_gradient"}]}]}]}]}}"##,
            "j.json:1:14",
            "base_code.version (the PIR version, an integer) is missing",
        ),
        json_in(
            "json_two_regions",
            r##"{"base_code":{"magic":"pir","trainable":true,"version":4},"program":{"regions":[{"#":"region_0","blocks":[{"#":"block_0","args":[],"ops":[{"#":"p","A":[0,1,1,"w"],"DA":[],"O":{"%":3,"TT":{"#":"0.t_dtensor","D":[{"#":"0.t_f32"},[2],"NCHW",[],0]}},"OA":[1,0,1],"QA":[]},{"#":"1.full","A":[{"AT":{"#":"1.a_dtype","D":"float32"},"N":"dtype"},{"AT":{"#":"1.a_place","D":[1,0,""]},"N":"place"},{"AT":{"#":"1.a_intarray","D":[2]},"N":"shape"},{"AT":{"#":"0.a_f64","D":1.0},"N":"value"}],"I":[],"O":[{"%":1,"TT":{"#":"0.t_dtensor","D":[{"#":"0.t_f32"},[2],"NCHW",[],0]}}],"OA":[{"AT":{"#":"0.a_array","D":[{"#":"0.a_bool","D":true}]},"N":"stop_gradient"}]},{"#":"1.relu","A":[],"I":[{"%":1}],"O":[{"%":2,"TT":{"#":"0.t_dtensor","D":[{"#":"0.t_f32"},[2],"NCHW",[],0]}}],"OA":[{"AT":{"#":"0.a_array","D":[{"#":"0.a_bool","D":true}]},"N":"stop_gradient"}]}]}]},{"#":"region_0","blocks":[{"#":"block_0","args":[],"ops":[{"#":"p","A":[0,1,1,"w"],"DA":[],"O":{"%":3,"TT":{"#":"0.t_dtensor","D":[{"#":"0.t_f32"},[2],"NCHW",[],0]}},"OA":[1,0,1],"QA":[]},{"#":"1.full","A":[{"AT":{"#":"1.a_dtype","D":"float32"},"N":"dtype"},{"AT":{"#":"1.a_place","D":[1,0,""]},"N":"place"},{"AT":{"#":"1.a_intarray","D":[2]},"N":"shape"},{"AT":{"#":"0.a_f64","D":1.0},"N":"value"}],"I":[],"O":[{"%":1,"TT":{"#":"0.t_dtensor","D":[{"#":"0.t_f32"},[2],"NCHW",[],0]}}],"OA":[{"AT":{"#":"0.a_array","D":[{"#":"0.a_bool","D":true}]},"N":"stop_gradient"}]},{"#":"1.relu","A":[],"I":[{"%":1}],"O":[{"%":2,"TT":{"#":"0.t_dtensor","D":[{"#":"0.t_f32"},[2],"NCHW",[],0]}}],"OA":[{"AT":{"#":"0.a_array","D":[{"#":"0.a_bool","D":true}]},"N":"stop_gradient"}]}]}]}]}}"##,
            "j.json:1:80",
            "a program has exactly one top-level region, this one has 2",
        ),
        json_in(
            "json_two_blocks",
            r##"{"base_code":{"magic":"pir","trainable":true,"version":4},"program":{"regions":[{"#":"region_0","blocks":[{"#":"block_0","args":[],"ops":[{"#":"p","A":[0,1,1,"w"],"DA":[],"O":{"%":3,"TT":{"#":"0.t_dtensor","D":[{"#":"0.t_f32"},[2],"NCHW",[],0]}},"OA":[1,0,1],"QA":[]},{"#":"1.full","A":[{"AT":{"#":"1.a_dtype","D":"float32"},"N":"dtype"},{"AT":{"#":"1.a_place","D":[1,0,""]},"N":"place"},{"AT":{"#":"1.a_intarray","D":[2]},"N":"shape"},{"AT":{"#":"0.a_f64","D":1.0},"N":"value"}],"I":[],"O":[{"%":1,"TT":{"#":"0.t_dtensor","D":[{"#":"0.t_f32"},[2],"NCHW",[],0]}}],"OA":[{"AT":{"#":"0.a_array","D":[{"#":"0.a_bool","D":true}]},"N":"stop_gradient"}]},{"#":"1.relu","A":[],"I":[{"%":1}],"O":[{"%":2,"TT":{"#":"0.t_dtensor","D":[{"#":"0.t_f32"},[2],"NCHW",[],0]}}],"OA":[{"AT":{"#":"0.a_array","D":[{"#":"0.a_bool","D":true}]},"N":"stop_gradient"}]}]},{"#":"block_0","args":[],"ops":[{"#":"p","A":[0,1,1,"w"],"DA":[],"O":{"%":3,"TT":{"#":"0.t_dtensor","D":[{"#":"0.t_f32"},[2],"NCHW",[],0]}},"OA":[1,0,1],"QA":[]},{"#":"1.full","A":[{"AT":{"#":"1.a_dtype","D":"float32"},"N":"dtype"},{"AT":{"#":"1.a_place","D":[1,0,""]},"N":"place"},{"AT":{"#":"1.a_intarray","D":[2]},"N":"shape"},{"AT":{"#":"0.a_f64","D":1.0},"N":"value"}],"I":[],"O":[{"%":1,"TT":{"#":"0.t_dtensor","D":[{"#":"0.t_f32"},[2],"NCHW",[],0]}}],"OA":[{"AT":{"#":"0.a_array","D":[{"#":"0.a_bool","D":true}]},"N":"stop_gradient"}]},{"#":"1.relu","A":[],"I":[{"%":1}],"O":[{"%":2,"TT":{"#":"0.t_dtensor","D":[{"#":"0.t_f32"},[2],"NCHW",[],0]}}],"OA":[{"AT":{"#":"0.a_array","D":[{"#":"0.a_bool","D":true}]},"N":"stop_gradient"}]}]}]}]}}"##,
            "j.json:1:81",
            "the top-level region has exactly one block, this one has 2",
        ),
        json_in(
            "json_value_id_zero",
            r##"{"base_code":{"magic":"pir","trainable":true,"version":4},"program":{"regions":[{"#":"region_0","blocks":[{"#":"block_0","args":[],"ops":[{"#":"p","A":[0,1,1,"w"],"DA":[],"O":{"%":3,"TT":{"#":"0.t_dtensor","D":[{"#":"0.t_f32"},[2],"NCHW",[],0]}},"OA":[1,0,1],"QA":[]},{"#":"1.full","A":[{"AT":{"#":"1.a_dtype","D":"float32"},"N":"dtype"},{"AT":{"#":"1.a_place","D":[1,0,""]},"N":"place"},{"AT":{"#":"1.a_intarray","D":[2]},"N":"shape"},{"AT":{"#":"0.a_f64","D":1.0},"N":"value"}],"I":[],"O":[{"%":1,"TT":{"#":"0.t_dtensor","D":[{"#":"0.t_f32"},[2],"NCHW",[],0]}}],"OA":[{"AT":{"#":"0.a_array","D":[{"#":"0.a_bool","D":true}]},"N":"stop_gradient"}]},{"#":"1.relu","A":[],"I":[{"%":1}],"O":[{"%":0,"TT":{"#":"0.t_dtensor","D":[{"#":"0.t_f32"},[2],"NCHW",[],0]}}],"OA":[{"AT":{"#":"0.a_array","D":[{"#":"0.a_bool","D":true}]},"N":"stop_gradient"}]}]}]}]}}"##,
            "j.json:1:690",
            "value id 0 is reserved for the null value",
        ),
        json_in(
            "json_result_without_id",
            r##"{"base_code":{"magic":"pir","trainable":true,"version":4},"program":{"regions":[{"#":"region_0","blocks":[{"#":"block_0","args":[],"ops":[{"#":"p","A":[0,1,1,"w"],"DA":[],"O":{"%":3,"TT":{"#":"0.t_dtensor","D":[{"#":"0.t_f32"},[2],"NCHW",[],0]}},"OA":[1,0,1],"QA":[]},{"#":"1.full","A":[{"AT":{"#":"1.a_dtype","D":"float32"},"N":"dtype"},{"AT":{"#":"1.a_place","D":[1,0,""]},"N":"place"},{"AT":{"#":"1.a_intarray","D":[2]},"N":"shape"},{"AT":{"#":"0.a_f64","D":1.0},"N":"value"}],"I":[],"O":[{"%":1,"TT":{"#":"0.t_dtensor","D":[{"#":"0.t_f32"},[2],"NCHW",[],0]}}],"OA":[{"AT":{"#":"0.a_array","D":[{"#":"0.a_bool","D":true}]},"N":"stop_gradient"}]},{"#":"1.relu","A":[],"I":[{"%":1}],"O":[{"TT":{"#":"0.t_dtensor","D":[{"#":"0.t_f32"},[2],"NCHW",[],0]}}],"OA":[{"AT":{"#":"0.a_array","D":[{"#":"0.a_bool","D":true}]},"N":"stop_gradient"}]}]}]}]}}"##,
            "j.json:1:690",
            "missing key \"%\" (a value id)",
        ),
        json_in(
            "json_value_id_not_integer",
            r##"{"base_code":{"magic":"pir","trainable":true,"version":4},"program":{"regions":[{"#":"region_0","blocks":[{"#":"block_0","args":[],"ops":[{"#":"p","A":[0,1,1,"w"],"DA":[],"O":{"%":3,"TT":{"#":"0.t_dtensor","D":[{"#":"0.t_f32"},[2],"NCHW",[],0]}},"OA":[1,0,1],"QA":[]},{"#":"1.full","A":[{"AT":{"#":"1.a_dtype","D":"float32"},"N":"dtype"},{"AT":{"#":"1.a_place","D":[1,0,""]},"N":"place"},{"AT":{"#":"1.a_intarray","D":[2]},"N":"shape"},{"AT":{"#":"0.a_f64","D":1.0},"N":"value"}],"I":[],"O":[{"%":1,"TT":{"#":"0.t_dtensor","D":[{"#":"0.t_f32"},[2],"NCHW",[],0]}}],"OA":[{"AT":{"#":"0.a_array","D":[{"#":"0.a_bool","D":true}]},"N":"stop_gradient"}]},{"#":"1.relu","A":[],"I":[{"%":1}],"O":[{"%":"a","TT":{"#":"0.t_dtensor","D":[{"#":"0.t_f32"},[2],"NCHW",[],0]}}],"OA":[{"AT":{"#":"0.a_array","D":[{"#":"0.a_bool","D":true}]},"N":"stop_gradient"}]}]}]}]}}"##,
            "j.json:1:690",
            "a value id must be an integer",
        ),
        json_in(
            "json_kwarg_without_key",
            r##"{"base_code":{"magic":"pir","trainable":true,"version":4},"program":{"regions":[{"#":"region_0","blocks":[{"#":"block_0","args":[],"ops":[{"#":"p","A":[0,1,1,"w"],"DA":[],"O":{"%":3,"TT":{"#":"0.t_dtensor","D":[{"#":"0.t_f32"},[2],"NCHW",[],0]}},"OA":[1,0,1],"QA":[]},{"#":"1.full","A":[{"AT":{"#":"1.a_dtype","D":"float32"},"N":"dtype"},{"AT":{"#":"1.a_place","D":[1,0,""]},"N":"place"},{"AT":{"#":"1.a_intarray","D":[2]},"N":"shape"},{"AT":{"#":"0.a_f64","D":1.0},"N":"value"}],"I":[],"O":[{"%":1,"TT":{"#":"0.t_dtensor","D":[{"#":"0.t_f32"},[2],"NCHW",[],0]}}],"OA":[{"AT":{"#":"0.a_array","D":[{"#":"0.a_bool","D":true}]},"N":"stop_gradient"}]},{"#":"1.relu","A":[],"I":[{"%":1}],"O":[{"%":2,"TT":{"#":"0.t_dtensor","D":[{"#":"0.t_f32"},[2],"NCHW",[],0]}}],"OA":[{"AT":{"#":"0.a_array","D":[{"#":"0.a_bool","D":true}]},"N":"stop_gradient"}]}],"kwargs":[{"#":5,"TT":{"#":"0.t_dtensor","D":[{"#":"0.t_f32"},[2],"NCHW",[],0]}}]}]}]}}"##,
            "j.json:1:858",
            "a keyword argument needs a string \"key\"",
        ),
        json_in(
            "json_block_arg_id",
            r##"{"base_code":{"magic":"pir","trainable":true,"version":4},"program":{"regions":[{"#":"region_0","blocks":[{"#":"block_0","args":[{"#":"a","TT":{"#":"0.t_dtensor","D":[{"#":"0.t_f32"},[2],"NCHW",[],0]}}],"ops":[{"#":"p","A":[0,1,1,"w"],"DA":[],"O":{"%":3,"TT":{"#":"0.t_dtensor","D":[{"#":"0.t_f32"},[2],"NCHW",[],0]}},"OA":[1,0,1],"QA":[]},{"#":"1.full","A":[{"AT":{"#":"1.a_dtype","D":"float32"},"N":"dtype"},{"AT":{"#":"1.a_place","D":[1,0,""]},"N":"place"},{"AT":{"#":"1.a_intarray","D":[2]},"N":"shape"},{"AT":{"#":"0.a_f64","D":1.0},"N":"value"}],"I":[],"O":[{"%":1,"TT":{"#":"0.t_dtensor","D":[{"#":"0.t_f32"},[2],"NCHW",[],0]}}],"OA":[{"AT":{"#":"0.a_array","D":[{"#":"0.a_bool","D":true}]},"N":"stop_gradient"}]},{"#":"1.relu","A":[],"I":[{"%":1}],"O":[{"%":2,"TT":{"#":"0.t_dtensor","D":[{"#":"0.t_f32"},[2],"NCHW",[],0]}}],"OA":[{"AT":{"#":"0.a_array","D":[{"#":"0.a_bool","D":true}]},"N":"stop_gradient"}]}]}]}]}}"##,
            "j.json:1:130",
            "a block argument's \"#\" must be an integer id",
        ),
        json_in(
            "json_attribute_without_name",
            r##"{"base_code":{"magic":"pir","trainable":true,"version":4},"program":{"regions":[{"#":"region_0","blocks":[{"#":"block_0","args":[],"ops":[{"#":"p","A":[0,1,1,"w"],"DA":[],"O":{"%":3,"TT":{"#":"0.t_dtensor","D":[{"#":"0.t_f32"},[2],"NCHW",[],0]}},"OA":[1,0,1],"QA":[]},{"#":"1.full","A":[{"AT":{"#":"1.a_dtype","D":"float32"}},{"AT":{"#":"1.a_place","D":[1,0,""]},"N":"place"},{"AT":{"#":"1.a_intarray","D":[2]},"N":"shape"},{"AT":{"#":"0.a_f64","D":1.0},"N":"value"}],"I":[],"O":[{"%":1,"TT":{"#":"0.t_dtensor","D":[{"#":"0.t_f32"},[2],"NCHW",[],0]}}],"OA":[{"AT":{"#":"0.a_array","D":[{"#":"0.a_bool","D":true}]},"N":"stop_gradient"}]},{"#":"1.relu","A":[],"I":[{"%":1}],"O":[{"%":2,"TT":{"#":"0.t_dtensor","D":[{"#":"0.t_f32"},[2],"NCHW",[],0]}}],"OA":[{"AT":{"#":"0.a_array","D":[{"#":"0.a_bool","D":true}]},"N":"stop_gradient"}]}]}]}]}}"##,
            "j.json:1:288",
            "an attribute needs a string \"N\" (its name)",
        ),
        json_in(
            "json_attribute_twice",
            r##"{"base_code":{"magic":"pir","trainable":true,"version":4},"program":{"regions":[{"#":"region_0","blocks":[{"#":"block_0","args":[],"ops":[{"#":"p","A":[0,1,1,"w"],"DA":[],"O":{"%":3,"TT":{"#":"0.t_dtensor","D":[{"#":"0.t_f32"},[2],"NCHW",[],0]}},"OA":[1,0,1],"QA":[]},{"#":"1.full","A":[{"AT":{"#":"1.a_dtype","D":"float32"},"N":"dtype"},{"AT":{"#":"1.a_place","D":[1,0,""]},"N":"place"},{"AT":{"#":"1.a_intarray","D":[2]},"N":"shape"},{"AT":{"#":"0.a_f64","D":1.0},"N":"value"},{"AT":{"#":"1.a_dtype","D":"float32"},"N":"dtype"}],"I":[],"O":[{"%":1,"TT":{"#":"0.t_dtensor","D":[{"#":"0.t_f32"},[2],"NCHW",[],0]}}],"OA":[{"AT":{"#":"0.a_array","D":[{"#":"0.a_bool","D":true}]},"N":"stop_gradient"}]},{"#":"1.relu","A":[],"I":[{"%":1}],"O":[{"%":2,"TT":{"#":"0.t_dtensor","D":[{"#":"0.t_f32"},[2],"NCHW",[],0]}}],"OA":[{"AT":{"#":"0.a_array","D":[{"#":"0.a_bool","D":true}]},"N":"stop_gradient"}]}]}]}]}}"##,
            "j.json:1:269",
            "attribute `dtype` is given twice",
        ),
        json_in(
            "json_op_name_not_string",
            r##"{"base_code":{"magic":"pir","trainable":true,"version":4},"program":{"regions":[{"#":"region_0","blocks":[{"#":"block_0","args":[],"ops":[{"#":"p","A":[0,1,1,"w"],"DA":[],"O":{"%":3,"TT":{"#":"0.t_dtensor","D":[{"#":"0.t_f32"},[2],"NCHW",[],0]}},"OA":[1,0,1],"QA":[]},{"#":"1.full","A":[{"AT":{"#":"1.a_dtype","D":"float32"},"N":"dtype"},{"AT":{"#":"1.a_place","D":[1,0,""]},"N":"place"},{"AT":{"#":"1.a_intarray","D":[2]},"N":"shape"},{"AT":{"#":"0.a_f64","D":1.0},"N":"value"}],"I":[],"O":[{"%":1,"TT":{"#":"0.t_dtensor","D":[{"#":"0.t_f32"},[2],"NCHW",[],0]}}],"OA":[{"AT":{"#":"0.a_array","D":[{"#":"0.a_bool","D":true}]},"N":"stop_gradient"}]},{"#":3,"A":[],"I":[{"%":1}],"O":[{"%":2,"TT":{"#":"0.t_dtensor","D":[{"#":"0.t_f32"},[2],"NCHW",[],0]}}],"OA":[{"AT":{"#":"0.a_array","D":[{"#":"0.a_bool","D":true}]},"N":"stop_gradient"}]}]}]}]}}"##,
            "j.json:1:650",
            "an op's \"#\" must be a string (\"<dialect id>.<name>\")",
        ),
        json_in(
            "json_result_without_type",
            r##"{"base_code":{"magic":"pir","trainable":true,"version":4},"program":{"regions":[{"#":"region_0","blocks":[{"#":"block_0","args":[],"ops":[{"#":"p","A":[0,1,1,"w"],"DA":[],"O":{"%":3,"TT":{"#":"0.t_dtensor","D":[{"#":"0.t_f32"},[2],"NCHW",[],0]}},"OA":[1,0,1],"QA":[]},{"#":"1.full","A":[{"AT":{"#":"1.a_dtype","D":"float32"},"N":"dtype"},{"AT":{"#":"1.a_place","D":[1,0,""]},"N":"place"},{"AT":{"#":"1.a_intarray","D":[2]},"N":"shape"},{"AT":{"#":"0.a_f64","D":1.0},"N":"value"}],"I":[],"O":[{"%":1,"TT":{"#":"0.t_dtensor","D":[{"#":"0.t_f32"},[2],"NCHW",[],0]}}],"OA":[{"AT":{"#":"0.a_array","D":[{"#":"0.a_bool","D":true}]},"N":"stop_gradient"}]},{"#":"1.relu","A":[],"I":[{"%":1}],"O":[{"%":2}],"OA":[{"AT":{"#":"0.a_array","D":[{"#":"0.a_bool","D":true}]},"N":"stop_gradient"}]}]}]}]}}"##,
            "j.json:1:690",
            "missing key \"TT\" (the result type)",
        ),
        json_in(
            "json_parameter_a_length",
            r##"{"base_code":{"magic":"pir","trainable":true,"version":4},"program":{"regions":[{"#":"region_0","blocks":[{"#":"block_0","args":[],"ops":[{"#":"p","A":[0,1,"w"],"DA":[],"O":{"%":3,"TT":{"#":"0.t_dtensor","D":[{"#":"0.t_f32"},[2],"NCHW",[],0]}},"OA":[1,0,1],"QA":[]},{"#":"1.full","A":[{"AT":{"#":"1.a_dtype","D":"float32"},"N":"dtype"},{"AT":{"#":"1.a_place","D":[1,0,""]},"N":"place"},{"AT":{"#":"1.a_intarray","D":[2]},"N":"shape"},{"AT":{"#":"0.a_f64","D":1.0},"N":"value"}],"I":[],"O":[{"%":1,"TT":{"#":"0.t_dtensor","D":[{"#":"0.t_f32"},[2],"NCHW",[],0]}}],"OA":[{"AT":{"#":"0.a_array","D":[{"#":"0.a_bool","D":true}]},"N":"stop_gradient"}]},{"#":"1.relu","A":[],"I":[{"%":1}],"O":[{"%":2,"TT":{"#":"0.t_dtensor","D":[{"#":"0.t_f32"},[2],"NCHW",[],0]}}],"OA":[{"AT":{"#":"0.a_array","D":[{"#":"0.a_bool","D":true}]},"N":"stop_gradient"}]}]}]}]}}"##,
            "j.json:1:152",
            "a parameter op's \"A\" is [",
        ),
        json_in(
            "json_parameter_flag",
            r##"{"base_code":{"magic":"pir","trainable":true,"version":4},"program":{"regions":[{"#":"region_0","blocks":[{"#":"block_0","args":[],"ops":[{"#":"p","A":[7,1,1,"w"],"DA":[],"O":{"%":3,"TT":{"#":"0.t_dtensor","D":[{"#":"0.t_f32"},[2],"NCHW",[],0]}},"OA":[1,0,1],"QA":[]},{"#":"1.full","A":[{"AT":{"#":"1.a_dtype","D":"float32"},"N":"dtype"},{"AT":{"#":"1.a_place","D":[1,0,""]},"N":"place"},{"AT":{"#":"1.a_intarray","D":[2]},"N":"shape"},{"AT":{"#":"0.a_f64","D":1.0},"N":"value"}],"I":[],"O":[{"%":1,"TT":{"#":"0.t_dtensor","D":[{"#":"0.t_f32"},[2],"NCHW",[],0]}}],"OA":[{"AT":{"#":"0.a_array","D":[{"#":"0.a_bool","D":true}]},"N":"stop_gradient"}]},{"#":"1.relu","A":[],"I":[{"%":1}],"O":[{"%":2,"TT":{"#":"0.t_dtensor","D":[{"#":"0.t_f32"},[2],"NCHW",[],0]}}],"OA":[{"AT":{"#":"0.a_array","D":[{"#":"0.a_bool","D":true}]},"N":"stop_gradient"}]}]}]}]}}"##,
            "j.json:1:153",
            "must be 0 or 1",
        ),
        json_in(
            "json_parameter_name_not_string",
            r##"{"base_code":{"magic":"pir","trainable":true,"version":4},"program":{"regions":[{"#":"region_0","blocks":[{"#":"block_0","args":[],"ops":[{"#":"p","A":[0,1,1,7],"DA":[],"O":{"%":3,"TT":{"#":"0.t_dtensor","D":[{"#":"0.t_f32"},[2],"NCHW",[],0]}},"OA":[1,0,1],"QA":[]},{"#":"1.full","A":[{"AT":{"#":"1.a_dtype","D":"float32"},"N":"dtype"},{"AT":{"#":"1.a_place","D":[1,0,""]},"N":"place"},{"AT":{"#":"1.a_intarray","D":[2]},"N":"shape"},{"AT":{"#":"0.a_f64","D":1.0},"N":"value"}],"I":[],"O":[{"%":1,"TT":{"#":"0.t_dtensor","D":[{"#":"0.t_f32"},[2],"NCHW",[],0]}}],"OA":[{"AT":{"#":"0.a_array","D":[{"#":"0.a_bool","D":true}]},"N":"stop_gradient"}]},{"#":"1.relu","A":[],"I":[{"%":1}],"O":[{"%":2,"TT":{"#":"0.t_dtensor","D":[{"#":"0.t_f32"},[2],"NCHW",[],0]}}],"OA":[{"AT":{"#":"0.a_array","D":[{"#":"0.a_bool","D":true}]},"N":"stop_gradient"}]}]}]}]}}"##,
            "j.json:1:159",
            "must be a string",
        ),
        json_in(
            "json_parameter_oa_length",
            r##"{"base_code":{"magic":"pir","trainable":true,"version":4},"program":{"regions":[{"#":"region_0","blocks":[{"#":"block_0","args":[],"ops":[{"#":"p","A":[0,1,1,"w"],"DA":[],"O":{"%":3,"TT":{"#":"0.t_dtensor","D":[{"#":"0.t_f32"},[2],"NCHW",[],0]}},"OA":[1],"QA":[]},{"#":"1.full","A":[{"AT":{"#":"1.a_dtype","D":"float32"},"N":"dtype"},{"AT":{"#":"1.a_place","D":[1,0,""]},"N":"place"},{"AT":{"#":"1.a_intarray","D":[2]},"N":"shape"},{"AT":{"#":"0.a_f64","D":1.0},"N":"value"}],"I":[],"O":[{"%":1,"TT":{"#":"0.t_dtensor","D":[{"#":"0.t_f32"},[2],"NCHW",[],0]}}],"OA":[{"AT":{"#":"0.a_array","D":[{"#":"0.a_bool","D":true}]},"N":"stop_gradient"}]},{"#":"1.relu","A":[],"I":[{"%":1}],"O":[{"%":2,"TT":{"#":"0.t_dtensor","D":[{"#":"0.t_f32"},[2],"NCHW",[],0]}}],"OA":[{"AT":{"#":"0.a_array","D":[{"#":"0.a_bool","D":true}]},"N":"stop_gradient"}]}]}]}]}}"##,
            "j.json:1:252",
            "a parameter op's \"OA\" is [",
        ),
        json_in(
            "json_parameter_oa_flag",
            r##"{"base_code":{"magic":"pir","trainable":true,"version":4},"program":{"regions":[{"#":"region_0","blocks":[{"#":"block_0","args":[],"ops":[{"#":"p","A":[0,1,1,"w"],"DA":[],"O":{"%":3,"TT":{"#":"0.t_dtensor","D":[{"#":"0.t_f32"},[2],"NCHW",[],0]}},"OA":[9,0,1],"QA":[]},{"#":"1.full","A":[{"AT":{"#":"1.a_dtype","D":"float32"},"N":"dtype"},{"AT":{"#":"1.a_place","D":[1,0,""]},"N":"place"},{"AT":{"#":"1.a_intarray","D":[2]},"N":"shape"},{"AT":{"#":"0.a_f64","D":1.0},"N":"value"}],"I":[],"O":[{"%":1,"TT":{"#":"0.t_dtensor","D":[{"#":"0.t_f32"},[2],"NCHW",[],0]}}],"OA":[{"AT":{"#":"0.a_array","D":[{"#":"0.a_bool","D":true}]},"N":"stop_gradient"}]},{"#":"1.relu","A":[],"I":[{"%":1}],"O":[{"%":2,"TT":{"#":"0.t_dtensor","D":[{"#":"0.t_f32"},[2],"NCHW",[],0]}}],"OA":[{"AT":{"#":"0.a_array","D":[{"#":"0.a_bool","D":true}]},"N":"stop_gradient"}]}]}]}]}}"##,
            "j.json:1:253",
            "must be 0 or 1",
        ),
        json_in(
            "json_op_without_dialect",
            r##"{"base_code":{"magic":"pir","trainable":true,"version":4},"program":{"regions":[{"#":"region_0","blocks":[{"#":"block_0","args":[],"ops":[{"#":"p","A":[0,1,1,"w"],"DA":[],"O":{"%":3,"TT":{"#":"0.t_dtensor","D":[{"#":"0.t_f32"},[2],"NCHW",[],0]}},"OA":[1,0,1],"QA":[]},{"#":"1.full","A":[{"AT":{"#":"1.a_dtype","D":"float32"},"N":"dtype"},{"AT":{"#":"1.a_place","D":[1,0,""]},"N":"place"},{"AT":{"#":"1.a_intarray","D":[2]},"N":"shape"},{"AT":{"#":"0.a_f64","D":1.0},"N":"value"}],"I":[],"O":[{"%":1,"TT":{"#":"0.t_dtensor","D":[{"#":"0.t_f32"},[2],"NCHW",[],0]}}],"OA":[{"AT":{"#":"0.a_array","D":[{"#":"0.a_bool","D":true}]},"N":"stop_gradient"}]},{"#":"relu","A":[],"I":[{"%":1}],"O":[{"%":2,"TT":{"#":"0.t_dtensor","D":[{"#":"0.t_f32"},[2],"NCHW",[],0]}}],"OA":[{"AT":{"#":"0.a_array","D":[{"#":"0.a_bool","D":true}]},"N":"stop_gradient"}]}]}]}]}}"##,
            "j.json:1:655",
            "op `relu` has no dialect id (expected \"<dialect id>.<name>\", e.g. \"1.matmul\")",
        ),
        json_in(
            "json_type_without_tag",
            r##"{"base_code":{"magic":"pir","trainable":true,"version":4},"program":{"regions":[{"#":"region_0","blocks":[{"#":"block_0","args":[],"ops":[{"#":"p","A":[0,1,1,"w"],"DA":[],"O":{"%":3,"TT":{"#":"0.t_dtensor","D":[{"#":"0.t_f32"},[2],"NCHW",[],0]}},"OA":[1,0,1],"QA":[]},{"#":"1.full","A":[{"AT":{"#":"1.a_dtype","D":"float32"},"N":"dtype"},{"AT":{"#":"1.a_place","D":[1,0,""]},"N":"place"},{"AT":{"#":"1.a_intarray","D":[2]},"N":"shape"},{"AT":{"#":"0.a_f64","D":1.0},"N":"value"}],"I":[],"O":[{"%":1,"TT":{"#":"0.t_dtensor","D":[{"#":"0.t_f32"},[2],"NCHW",[],0]}}],"OA":[{"AT":{"#":"0.a_array","D":[{"#":"0.a_bool","D":true}]},"N":"stop_gradient"}]},{"#":"1.relu","A":[],"I":[{"%":1}],"O":[{"%":2,"TT":{"D":[]}}],"OA":[{"AT":{"#":"0.a_array","D":[{"#":"0.a_bool","D":true}]},"N":"stop_gradient"}]}]}]}]}}"##,
            "j.json:1:702",
            "a type needs a string \"#\" (its tag)",
        ),
        json_in(
            "json_element_type_unknown",
            r##"{"base_code":{"magic":"pir","trainable":true,"version":4},"program":{"regions":[{"#":"region_0","blocks":[{"#":"block_0","args":[],"ops":[{"#":"p","A":[0,1,1,"w"],"DA":[],"O":{"%":3,"TT":{"#":"0.t_dtensor","D":[{"#":"0.t_f32"},[2],"NCHW",[],0]}},"OA":[1,0,1],"QA":[]},{"#":"1.full","A":[{"AT":{"#":"1.a_dtype","D":"float32"},"N":"dtype"},{"AT":{"#":"1.a_place","D":[1,0,""]},"N":"place"},{"AT":{"#":"1.a_intarray","D":[2]},"N":"shape"},{"AT":{"#":"0.a_f64","D":1.0},"N":"value"}],"I":[],"O":[{"%":1,"TT":{"#":"0.t_dtensor","D":[{"#":"0.t_f32"},[2],"NCHW",[],0]}}],"OA":[{"AT":{"#":"0.a_array","D":[{"#":"0.a_bool","D":true}]},"N":"stop_gradient"}]},{"#":"1.relu","A":[],"I":[{"%":1}],"O":[{"%":2,"TT":{"#":"0.t_dtensor","D":[{"#":"0.t_f8"},[2],"NCHW",[],0]}}],"OA":[{"AT":{"#":"0.a_array","D":[{"#":"0.a_bool","D":true}]},"N":"stop_gradient"}]}]}]}]}}"##,
            "j.json:1:702",
            "element type `0.t_f8` is not supported",
        ),
        json_in(
            "json_bad_dimension",
            r##"{"base_code":{"magic":"pir","trainable":true,"version":4},"program":{"regions":[{"#":"region_0","blocks":[{"#":"block_0","args":[],"ops":[{"#":"p","A":[0,1,1,"w"],"DA":[],"O":{"%":3,"TT":{"#":"0.t_dtensor","D":[{"#":"0.t_f32"},[2],"NCHW",[],0]}},"OA":[1,0,1],"QA":[]},{"#":"1.full","A":[{"AT":{"#":"1.a_dtype","D":"float32"},"N":"dtype"},{"AT":{"#":"1.a_place","D":[1,0,""]},"N":"place"},{"AT":{"#":"1.a_intarray","D":[2]},"N":"shape"},{"AT":{"#":"0.a_f64","D":1.0},"N":"value"}],"I":[],"O":[{"%":1,"TT":{"#":"0.t_dtensor","D":[{"#":"0.t_f32"},[2],"NCHW",[],0]}}],"OA":[{"AT":{"#":"0.a_array","D":[{"#":"0.a_bool","D":true}]},"N":"stop_gradient"}]},{"#":"1.relu","A":[],"I":[{"%":1}],"O":[{"%":2,"TT":{"#":"0.t_dtensor","D":[{"#":"0.t_f32"},[-5],"NCHW",[],0]}}],"OA":[{"AT":{"#":"0.a_array","D":[{"#":"0.a_bool","D":true}]},"N":"stop_gradient"}]}]}]}]}}"##,
            "j.json:1:702",
            "bad tensor dimension in [-5]",
        ),
        json_in(
            "json_vec_not_array",
            r##"{"base_code":{"magic":"pir","trainable":true,"version":4},"program":{"regions":[{"#":"region_0","blocks":[{"#":"block_0","args":[],"ops":[{"#":"p","A":[0,1,1,"w"],"DA":[],"O":{"%":3,"TT":{"#":"0.t_dtensor","D":[{"#":"0.t_f32"},[2],"NCHW",[],0]}},"OA":[1,0,1],"QA":[]},{"#":"1.full","A":[{"AT":{"#":"1.a_dtype","D":"float32"},"N":"dtype"},{"AT":{"#":"1.a_place","D":[1,0,""]},"N":"place"},{"AT":{"#":"1.a_intarray","D":[2]},"N":"shape"},{"AT":{"#":"0.a_f64","D":1.0},"N":"value"}],"I":[],"O":[{"%":1,"TT":{"#":"0.t_dtensor","D":[{"#":"0.t_f32"},[2],"NCHW",[],0]}}],"OA":[{"AT":{"#":"0.a_array","D":[{"#":"0.a_bool","D":true}]},"N":"stop_gradient"}]},{"#":"1.relu","A":[],"I":[{"%":1}],"O":[{"%":2,"TT":{"#":"0.t_vec","D":3}}],"OA":[{"AT":{"#":"0.a_array","D":[{"#":"0.a_bool","D":true}]},"N":"stop_gradient"}]}]}]}]}}"##,
            "j.json:1:702",
            "0.t_vec needs an array of types",
        ),
        json_in(
            "json_type_tag_unknown",
            r##"{"base_code":{"magic":"pir","trainable":true,"version":4},"program":{"regions":[{"#":"region_0","blocks":[{"#":"block_0","args":[],"ops":[{"#":"p","A":[0,1,1,"w"],"DA":[],"O":{"%":3,"TT":{"#":"0.t_dtensor","D":[{"#":"0.t_f32"},[2],"NCHW",[],0]}},"OA":[1,0,1],"QA":[]},{"#":"1.full","A":[{"AT":{"#":"1.a_dtype","D":"float32"},"N":"dtype"},{"AT":{"#":"1.a_place","D":[1,0,""]},"N":"place"},{"AT":{"#":"1.a_intarray","D":[2]},"N":"shape"},{"AT":{"#":"0.a_f64","D":1.0},"N":"value"}],"I":[],"O":[{"%":1,"TT":{"#":"0.t_dtensor","D":[{"#":"0.t_f32"},[2],"NCHW",[],0]}}],"OA":[{"AT":{"#":"0.a_array","D":[{"#":"0.a_bool","D":true}]},"N":"stop_gradient"}]},{"#":"1.relu","A":[],"I":[{"%":1}],"O":[{"%":2,"TT":{"#":"0.t_magic"}}],"OA":[{"AT":{"#":"0.a_array","D":[{"#":"0.a_bool","D":true}]},"N":"stop_gradient"}]}]}]}]}}"##,
            "j.json:1:702",
            "type tag `0.t_magic` is not supported",
        ),
        json_in(
            "json_region_two_blocks",
            r##"{"base_code":{"magic":"pir","trainable":true,"version":4},"program":{"regions":[{"#":"region_0","blocks":[{"#":"block_0","args":[],"ops":[{"#":"p","A":[0,1,1,"w"],"DA":[],"O":{"%":3,"TT":{"#":"0.t_dtensor","D":[{"#":"0.t_f32"},[2],"NCHW",[],0]}},"OA":[1,0,1],"QA":[]},{"#":"1.full","A":[{"AT":{"#":"1.a_dtype","D":"float32"},"N":"dtype"},{"AT":{"#":"1.a_place","D":[1,0,""]},"N":"place"},{"AT":{"#":"1.a_intarray","D":[2]},"N":"shape"},{"AT":{"#":"0.a_f64","D":1.0},"N":"value"}],"I":[],"O":[{"%":1,"TT":{"#":"0.t_dtensor","D":[{"#":"0.t_f32"},[2],"NCHW",[],0]}}],"OA":[{"AT":{"#":"0.a_array","D":[{"#":"0.a_bool","D":true}]},"N":"stop_gradient"}]},{"#":"1.relu","A":[],"I":[{"%":1}],"O":[{"%":2,"TT":{"#":"0.t_dtensor","D":[{"#":"0.t_f32"},[2],"NCHW",[],0]}}],"OA":[{"AT":{"#":"0.a_array","D":[{"#":"0.a_bool","D":true}]},"N":"stop_gradient"}]},{"#":"1.if","A":[],"I":[{"%":1}],"O":[],"OA":[],"regions":[{"#":"region_1","blocks":[{"#":"block_1","args":[],"ops":[]},{"#":"block_1","args":[],"ops":[]}]}]}]}]}]}}"##,
            "j.json:1:906",
            "irw supports regions of exactly one block, this one has 2",
        ),
        json_out("json_write_not_an_array", &["w.ir", "--emit", "paddle-json", "-o", "w.json"], "attribute `stop_gradient` must be 0.a_array of 0.a_bool (one per result), not `true`").file("w.ir", r#"{
    (%0) = "pd_op.full" () {dtype:float32,place:Place(cpu),shape:[2],stop_gradient:true,value:1} : () -> tensor<2xf32>
}
"#),
        json_out("json_write_nan", &["w.ir", "--emit", "paddle-json", "-o", "w.json"], "`nan`: Paddle 3.3.1 does not read NaN or infinite floats back exactly").file("w.ir", r#"{
    (%0) = "pd_op.full" () {dtype:float32,place:Place(cpu),shape:[2],stop_gradient:[true],value:nan} : () -> tensor<2xf32>
}
"#),
        json_out("json_write_op_without_dialect", &["w.ir", "--emit", "paddle-json", "-o", "w.json"], "op name `relu` has no dialect").file("w.ir", r#"{
    (%0) = "relu" () {} : () -> tensor<2xf32>
}
"#),
        json_out("json_write_unknown_dialect", &["w.ir", "--emit", "paddle-json", "-o", "w.json"], "Paddle 3.3.1 cannot load ops of dialect `my`").file("w.ir", r#"{
    (%0) = "my.op" () {} : () -> tensor<2xf32>
}
"#),
        json_out("json_write_attribute_misfit", &["w.ir", "--emit", "paddle-json", "-o", "w.json"], "cannot write the main program as Paddle JSON: `pd_op.matmul` (op 2 of the main program): attribute `transpose_x` must be 0.a_bool for Paddle (dialect table): `3` is not a 0.a_bool value").file("w.ir", r#"{
    (%0) = "pd_op.full" () {dtype:float32,place:Place(cpu),shape:[2],stop_gradient:[true],value:1} : () -> tensor<2xf32>
    (%1) = "pd_op.matmul" (%0, %0) {transpose_x:3,transpose_y:false} : (tensor<2xf32>, tensor<2xf32>) -> tensor<f32>
}
"#),
        json_out("json_write_opaque_type", &["w.ir", "--emit", "paddle-json", "-o", "w.json"], "type `!my.type` has no JSON form in irw").file("w.ir", r#"{
    (%0) = "pd_op.full" () {dtype:float32,place:Place(cpu),shape:[2],stop_gradient:[true],value:1} : () -> !my.type
}
"#),
        json_out("json_write_dist_type_malformed", &["w.ir", "--emit", "paddle-json", "-o", "w.json"], "type `pd_dist.tensor<2xf32, mesh_shape:[1]>` has no JSON form in irw").file("w.ir", r#"{
    (%0) = "pd_op.full" () {dtype:float32,place:Place(cpu),shape:[2],stop_gradient:[true],value:1} : () -> pd_dist.tensor<2xf32, mesh_shape:[1]>
}
"#),
        json_out("json_write_dist_reduce_type", &["w.ir", "--emit", "paddle-json", "-o", "w.json"], "reduce type `XOR` has no code in Paddle 3.3.1").file("w.ir", r#"{
    (%0) = "pd_op.full" () {dtype:float32,op_dist_attr:{mesh:{shape:[2],process_ids:[0,1]},result(0):{mesh_shape:[2],process_ids:[0,1],dims_mappings:[-1], partial(0,XOR), placements:[Partial(reduce_type=XOR)]},chunk_id:-1},place:Place(cpu),shape:[2],stop_gradient:[true],value:1} : () -> pd_dist.tensor<2xf32, mesh_shape:[2],process_ids:[0,1],dims_mappings:[-1], partial(0,XOR), placements:[Partial(reduce_type=XOR)]>
}
"#),
        json_out("json_write_dist_operand_mesh", &["w.ir", "--emit", "paddle-json", "-o", "w.json"], "attribute `op_dist_attr`: operand(0): process 5 of its mesh is not in the op's mesh [0] (Paddle's loader refuses this)").file("w.ir", r#"{
    (%0) = "pd_op.full" () {dtype:float32,op_dist_attr:{mesh:{shape:[1],process_ids:[0]},result(0):{mesh_shape:[1],process_ids:[0],dims_mappings:[-1], placements:[Replicate()]},chunk_id:-1},place:Place(cpu),shape:[2],stop_gradient:[true],value:1} : () -> pd_dist.tensor<2xf32, mesh_shape:[1],process_ids:[0],dims_mappings:[-1], placements:[Replicate()]>
    (%1) = "pd_op.relu" (%0) {op_dist_attr:{mesh:{shape:[1],process_ids:[0]},operand(0):{mesh_shape:[1],process_ids:[5],dims_mappings:[-1], placements:[Replicate()]},result(0):{mesh_shape:[1],process_ids:[0],dims_mappings:[-1], placements:[Replicate()]},chunk_id:-1},stop_gradient:[true]} : (pd_dist.tensor<2xf32, mesh_shape:[1],process_ids:[0],dims_mappings:[-1], placements:[Replicate()]>) -> pd_dist.tensor<2xf32, mesh_shape:[1],process_ids:[0],dims_mappings:[-1], placements:[Replicate()]>
}
"#),
        json_out("json_write_dist_placements", &["w.ir", "--emit", "paddle-json", "-o", "w.json"], "placements [Shard(dim=0, split_factor=2)] cannot be written: Paddle's format keeps only the dims mapping [-1] and the partial status, from which its loader derives [Replicate()]").file("w.ir", r#"{
    (%0) = "pd_op.full" () {dtype:float32,place:Place(cpu),shape:[2],stop_gradient:[true],value:1} : () -> pd_dist.tensor<2xf32, mesh_shape:[1],process_ids:[0],dims_mappings:[-1], placements:[Shard(dim=0, split_factor=2)]>
}
"#),
        json_out("json_write_unknown_kwarg_type", &["w.ir", "--emit", "paddle-json", "-o", "w.json"], "keyword argument `a`: its type `<<UNKNOWN TYPE>>` is not a tensor").file("w.ir", r#"{
    ^kw:
        %kwarg_a {persistable:true}
    (%0) = "pd_op.full" () {dtype:float32,place:Place(cpu),shape:[2],stop_gradient:[true],value:1} : () -> tensor<2xf32>
}
"#),
        json_out("json_write_parameter_needs_name", &["w.ir", "--emit", "paddle-json", "-o", "w.json"], "Paddle's parameter form needs a string `parameter_name`").file("w.ir", r#"{
    (%0) = "builtin.parameter" () {is_distributed:[false],is_parameter:[true],need_clip:[true],persistable:[true],stop_gradient:[false],trainable:[true]} : () -> tensor<2xf32>
}
"#),
        json_out("json_write_parameter_needs_attribute", &["w.ir", "--emit", "paddle-json", "-o", "w.json"], "Paddle's parameter form needs attribute `is_distributed`").file("w.ir", r#"{
    (%0) = "builtin.parameter" () {is_parameter:[true],need_clip:[true],parameter_name:"w",persistable:[true],stop_gradient:[false],trainable:[true]} : () -> tensor<2xf32>
}
"#),
        json_out("json_write_parameter_flag", &["w.ir", "--emit", "paddle-json", "-o", "w.json"], "attribute `is_distributed` must be [true] or [false], not `3`").file("w.ir", r#"{
    (%0) = "builtin.parameter" () {is_distributed:3,is_parameter:[true],need_clip:[true],parameter_name:"w",persistable:[true],stop_gradient:[false],trainable:[true]} : () -> tensor<2xf32>
}
"#),
        json_out("json_write_parameter_extra_attribute", &["w.ir", "--emit", "paddle-json", "-o", "w.json"], "Paddle's parameter form has no place for attribute `extra` (Paddle's own writer refuses it too)").file("w.ir", r#"{
    (%0) = "builtin.parameter" () {extra:1,is_distributed:[false],is_parameter:[true],need_clip:[true],parameter_name:"w",persistable:[true],stop_gradient:[false],trainable:[true]} : () -> tensor<2xf32>
}
"#),
        json_out("json_write_flags_count", &["w.ir", "--emit", "paddle-json", "-o", "w.json"], "attribute `stop_gradient` has 2 entries for 1 results: `[true,false]`").file("w.ir", r#"{
    (%0) = "pd_op.full" () {dtype:float32,place:Place(cpu),shape:[2],stop_gradient:[true,false],value:1} : () -> tensor<2xf32>
}
"#),
        json_out("json_write_flags_not_bool", &["w.ir", "--emit", "paddle-json", "-o", "w.json"], "attribute `stop_gradient` must hold only true/false, not `[3]`").file("w.ir", r#"{
    (%0) = "pd_op.full" () {dtype:float32,place:Place(cpu),shape:[2],stop_gradient:[3],value:1} : () -> tensor<2xf32>
}
"#),
        json_out("json_write_unknown_attribute", &["w.ir", "--emit", "paddle-json", "-o", "w.json"], "no JSON type tag is known for attribute `weird` of `pd_op.full`, and its value `{a:1}` has none of its own").file("w.ir", r#"{
    (%0) = "pd_op.full" () {dtype:float32,place:Place(cpu),shape:[2],stop_gradient:[true],value:1,weird:{a:1}} : () -> tensor<2xf32>
}
"#),
        json_out("json_write_block_argument_type", &["w.ir", "--emit", "paddle-json", "-o", "w.json"], "cannot write the main program as Paddle JSON: a block argument: its type is not known (a value the text form prints without a type and nothing uses)").file("w.ir", r#"{
    (%0) = "pd_op.full" () {dtype:float32,place:Place(cpu),shape:[2],stop_gradient:[true],value:1} : () -> tensor<2xf32>
    () = "pd_op.while" (%0) {} -> {
    ^%arg_0 {}
        () = "cf.yield" (%0) {} : (tensor<2xf32>) -> 
    }
}
"#),
        json_out("json_write_nested_kwarg", &["w.ir", "--emit", "paddle-json", "-o", "w.json"], "refusing to write the main program as Paddle JSON: keyword argument `a` belongs to a nested block; only the top block's can be written").file("w.ir", r#"{
    (%0) = "pd_op.full" () {dtype:bool,place:Place(cpu),shape:[1],stop_gradient:[true],value:1} : () -> tensor<1xb>
    () = "pd_op.if" (%0) {} ->  {
        ^kw:
            %kwarg_a {persistable:true}
        (%1) = "pd_op.relu" (%kwarg_a) {} : (tensor<2xf32>) -> tensor<2xf32>
        () = "cf.yield" () {} : () -> 
    }
}
"#),
        json_out("json_write_startup_not_persistable", &["w.ir", "--startup", "ws.ir", "--emit", "paddle-json", "-o", "w.json", "--startup-out", "ws.json"], "refusing to write the startup program as Paddle JSON: `builtin.set_parameter` stores `w`, but the `pd_op.full` computing it does not mark its result persistable:[true]").file("w.ir", r#"{
    (%0) = "builtin.parameter" () {is_distributed:[false],is_parameter:[true],need_clip:[true],parameter_name:"w",persistable:[true],stop_gradient:[false],trainable:[true]} : () -> tensor<2xf32>
}
"#).file("ws.ir", r#"{
    (%0) = "pd_op.full" () {dtype:float32,place:Place(cpu),shape:[2],stop_gradient:[true],value:1} : () -> tensor<2xf32>
    () = "builtin.set_parameter" (%0) {parameter_name:"w"} : (tensor<2xf32>) -> 
}
"#),
        json_out("json_write_parameter_not_persistable", &["w.ir", "--startup", "ws.ir", "--emit", "paddle-json", "-o", "w.json", "--startup-out", "ws.json"], "`builtin.parameter` binds `w`, which the startup program creates, but is not marked persistable:[true]").file("w.ir", r#"{
    (%0) = "builtin.parameter" () {is_distributed:[false],is_parameter:[true],need_clip:[true],parameter_name:"w",stop_gradient:[false],trainable:[true]} : () -> tensor<2xf32>
}
"#).file("ws.ir", r#"{
    (%0) = "pd_op.full" () {dtype:float32,persistable:[true],place:Place(cpu),shape:[2],stop_gradient:[true],value:1} : () -> tensor<2xf32>
    () = "builtin.set_parameter" (%0) {parameter_name:"w"} : (tensor<2xf32>) -> 
}
"#),
        json_out("json_write_kwarg_not_created", &["w.ir", "--startup", "ws.ir", "--emit", "paddle-json", "-o", "w.json", "--startup-out", "ws.json"], "refusing to write the main program as Paddle JSON: keyword argument `a` is not created by the startup program").file("w.ir", r#"{
    ^kw:
        %kwarg_a {persistable:true}
    (%0) = "pd_op.relu" (%kwarg_a) {} : (tensor<2xf32>) -> tensor<2xf32>
}
"#).file("ws.ir", r#"{
    (%0) = "pd_op.full" () {dtype:float32,persistable:[true],place:Place(cpu),shape:[2],stop_gradient:[true],value:1} : () -> tensor<2xf32>
    () = "builtin.set_parameter" (%0) {parameter_name:"w"} : (tensor<2xf32>) -> 
}
"#),
    ]
}

/// Flags: usage errors (exit code 2) and their messages.
fn cli_cases() -> Vec<Case> {
    vec![
        cli(
            "cli_no_input",
            &["--rules", "r.rw"],
            2,
            "no INPUT program given (use `-` for standard input)",
        ),
        cli(
            "cli_set_without_rules",
            &["--set", "a=1", "p.ir"],
            2,
            "--set needs --rules: parameters belong to rule files",
        ),
        cli(
            "cli_max_input_size_not_a_size",
            &["--max-input-size", "lots", "p.ir"],
            2,
            "`lots` is not a size (bytes, or a number with K, M or G)",
        ),
        cli(
            "cli_max_input_size_unit",
            &["--max-input-size", "4T", "p.ir"],
            2,
            "`4T`: unknown unit `T` (use K, M or G)",
        ),
        cli(
            "cli_max_input_size_too_large",
            &["--max-input-size", "99999999999G", "p.ir"],
            2,
            "`99999999999G` is too large",
        ),
        cli(
            "cli_timeout_not_seconds",
            &["--timeout", "soon", "p.ir"],
            2,
            "`soon` is not a number of seconds",
        ),
        cli(
            "cli_timeout_negative",
            &["--timeout=-1", "p.ir"],
            2,
            "`-1` is not a number of seconds",
        ),
        cli(
            "cli_check_without_rules",
            &["check", "p.ir"],
            2,
            "give --rules FILE or --rewritten FILE",
        ),
        cli(
            "cli_check_bad_k_steps_set",
            &["check", "--rewritten", "p.ir", "--set", "k_steps=x", "p.ir"],
            2,
            "--set k_steps=x: not a positive integer",
        ),
        cli(
            "cli_check_k_steps_zero_set",
            &["check", "--rewritten", "p.ir", "--set", "k_steps=0", "p.ir"],
            2,
            "k_steps must be at least 1",
        ),
        cli(
            "cli_gen_unknown_optimizer",
            &["gen", "mlp", "--optimizer", "lion"],
            2,
            "unknown optimizer `lion` (expected sgd, momentum, adam or adamw)",
        ),
        cli(
            "cli_gen_unknown_dtype",
            &["gen", "mlp", "--dtype", "f64"],
            2,
            "unknown dtype `f64` (expected f32 or bf16)",
        ),
    ]
}

pub(crate) fn tests() -> Vec<Trial> {
    let cases: Vec<Case> = rule_cases()
        .into_iter()
        .chain(exec_cases())
        .chain(feed_cases())
        .chain(json_cases())
        .chain(cli_cases())
        .collect();
    let mut names = std::collections::BTreeSet::new();
    for c in &cases {
        assert!(names.insert(c.name), "two cases are named {}", c.name);
    }
    cases
        .into_iter()
        .map(|c| Trial::test(format!("bad::{}", c.name), move || run(&c)))
        .collect()
}
