"""irw.rewrite and irw.check on program text and JSON, and the errors they raise."""

import os
import subprocess

import pytest

import irw
from conftest import FIXTURES, REPO


def irw_binary():
    path = os.environ.get("IRW_BIN", str(REPO / "target" / "release" / "irw"))
    return path if os.path.exists(path) else None


def test_rewrite_is_what_the_command_prints(mlp_text, tmp_path):
    main, startup = irw.rewrite(mlp_text, rules=["grad_merge"], params={"k_steps": 4})
    assert "@GRAD@MERGE" in main and "pd_op.add_" in main
    assert startup is not None and "@GRAD@MERGE" in startup
    binary = irw_binary()
    if binary is None:
        pytest.skip("no irw binary to compare with (set IRW_BIN)")
    rules = os.path.join(irw.rules_dir(), "grad_merge.rw")
    out = subprocess.run(
        [binary, "--rules", rules, "--set", "k_steps=4", str(REPO / "examples" / "mlp.ir")],
        check=True, capture_output=True, text=True,
    ).stdout
    assert out == main + "startup " + startup


def test_without_rules_prints_the_program_back(mlp_text):
    main, startup = irw.rewrite(mlp_text)
    assert mlp_text.startswith(main)
    assert startup is not None and startup in mlp_text


def test_json_in_json_out():
    d = FIXTURES / "paddle-zoo"
    if not d.is_dir():
        pytest.skip(f"no fixtures in {d}")
    main, startup = irw.rewrite(
        (d / "transformer_adamw_before.paddle.json").read_text(),
        rules=["grad_merge"],
        params={"k_steps": 4},
        startup=(d / "transformer_adamw_startup_before.paddle.json").read_text(),
    )
    assert main.lstrip().startswith("{") and "@GRAD@MERGE" in main
    assert startup is not None and "@GRAD@MERGE" in startup
    text, _ = irw.rewrite(main, format="text")
    assert "pd_op.adamw_" in text


def test_bad_program_raises_with_the_diagnostic():
    bad = "{\n    (%0) = \"pd_op.full\" () {dtype:float32} : () -> tensor<2xf32\n}\n"
    with pytest.raises(irw.IrwError) as e:
        irw.rewrite(bad, name="bad.ir")
    msg = str(e.value)
    assert msg.startswith("bad.ir:2:"), msg
    assert "error:" in msg and "^" in msg


def test_bad_parameter_names_it(mlp_text):
    with pytest.raises(irw.IrwError) as e:
        irw.rewrite(mlp_text, rules=["grad_merge"], params={"k_steps": 0})
    assert "k_steps" in str(e.value)


def test_bad_rule_file_points_into_it(mlp_text, tmp_path):
    rule = tmp_path / "bad.rw"
    rule.write_text("// a typo\nrule r {\n    match %o = pd_op.sdg_(%p, ..);\n    erase %o;\n}\n")
    with pytest.raises(irw.IrwError) as e:
        irw.rewrite(mlp_text, rules=[rule])
    msg = str(e.value)
    assert f"{rule}:3:" in msg and "^" in msg and "sgd_" in msg, msg


def test_unknown_rule_name():
    with pytest.raises(FileNotFoundError) as e:
        irw.resolve_rule("grad_merj")
    assert "grad_merge.rw" in str(e.value)


def test_check_proves_the_merge(mlp_text):
    report = irw.check(mlp_text, ["grad_merge"], {"k_steps": 4})
    assert report["passed"], report["text"]
    assert report["k_steps"] == 4
    kinds = {r["kind"] for r in report["rows"]}
    assert {"grad", "param", "buffer"} <= kinds
    assert "irw check" in report["text"]


def test_check_finds_a_wrong_rewrite(mlp_text, tmp_path):
    # Accumulating without averaging, while the optimizer expects the mean: the check must fail.
    report = irw.check(mlp_text, ["grad_merge"], {"k_steps": 4, "avg": False})
    assert not report["passed"]
    assert any(not r["ok"] and r["kind"] == "grad" for r in report["rows"])
    assert {r["verdict"] for r in report["rows"] if r["kind"] == "grad"} == {"FAIL"}


def test_help_teaches():
    import irw.paddle

    doc = irw.paddle.gradient_merge.__doc__
    for word in ("k_steps", "schedule", '"cond"', '"engine"', "exe.run", "Returns", "Raises"):
        assert word in doc
    assert "IrwError" in irw.rewrite.__doc__
